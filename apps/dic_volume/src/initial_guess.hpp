// Integer initial guesses: the zero-normalised cross-correlation of each reference subset against
// the deformed volume over a box of integer shifts (by FFT), on a multi-scale pyramid so that
// displacements of tens of voxels are found with a small search box per level. The pyramid's
// bookkeeping is shared by the CPU (FFTW, here) and GPU (cuFFT, device_stages.cu) engines.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "icgn.hpp"
#include "volume.hpp"
#include "volume_math.hpp"

namespace dvc {

// One level's search: for every point the first voxel (z, y, x) of its reference subset and the
// shift the search box is centred on; the result is predicted + the best offset in
// [-radius, radius]^3.
struct ShiftSearch {
    int subset = 0;
    int radius = 0;
    std::vector<std::int64_t> starts;     // 3 per point
    std::vector<std::int32_t> predicted;  // 3 per point
    std::size_t points() const { return starts.size() / 3; }
};

// A shift is admissible when the shifted subset stays a voxel away from the lower border and two
// from the upper one (the reach of the cubic sampler, so IC-GN can start there): start + shift >= 1
// and start + shift + subset <= n - 2 per axis. A point without an admissible shift in its box, or
// whose windows have no contrast, keeps its predicted shift.
DVC_VM_HD bool shift_admissible(std::int64_t start, std::int64_t shift, int subset, std::int64_t n) {
    return start + shift >= 1 && start + shift + subset <= n - 2;
}

// CPU search (FFTW, OpenMP over points).
std::vector<std::int32_t> fft_shift_search(const Volume& reference, const Volume& deformed, const ShiftSearch& search,
                                           bool progress);

// The earlier single-level interface: subsets centred on `centres`, box +-radius around zero.
std::vector<std::int32_t> fft_integer_shifts(const Volume& reference, const Volume& deformed,
                                             const std::vector<Point3>& centres, int subset, int radius, bool progress);

// Pyramid geometry. Level l has dims floor(n / 2^l) (2x2x2 block means, downsample2); its subset
// edge is max(kMinPyramidSubset, ceil(subset / 2^l)) (never above `subset`), so a coarse subset
// still holds enough speckles for a clear peak, and spans 2^l times more fine voxels. The coarsest
// level searches +-radius; every finer level refines twice the coarser shift by +-kRefineRadius
// (the coarser shift's rounding, doubled, plus strain and rotation across the larger subset).
constexpr int kMaxPyramidLevels = 3;
constexpr int kMinPyramidSubset = 16;
constexpr int kRefineRadius = 2;
int pyramid_subset(int subset, int level);
Dims pyramid_dims(const Dims& dims, int level);
// Levels above the finest that fit: every axis of the coarsest holds its subset and search box
// with a margin of 2 voxels per side. requested < 0: as many as fit, up to kMaxPyramidLevels;
// otherwise `requested`, refused (Error naming --pyramid-levels) when it does not fit.
int pyramid_levels(const Dims& dims, int subset, int radius, int requested);

// Each level's subset edge and search radius, coarsest (level `levels`) first: what pyramid_shifts
// searches (the GPU makes its cuFFT plans for them ahead, icgn.hpp).
struct LevelShape {
    int level, subset, radius;
};
std::vector<LevelShape> pyramid_searches(int subset, int radius, int levels);

// Coarse to fine: calls search_at(level, that level's search) from level `levels` down to 0 and
// returns the level-0 shifts (3 per point). Centres are the level-0 subset centres.
using LevelSearch = std::function<std::vector<std::int32_t>(int level, const ShiftSearch& search)>;
std::vector<std::int32_t> pyramid_shifts(const std::vector<Point3>& centres, const Dims& dims, int subset, int radius,
                                         int levels, const LevelSearch& search_at);

// 2x2x2 block means (dims floor(n / 2)).
Volume downsample2(const Volume& v);

}  // namespace dvc
