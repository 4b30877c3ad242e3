// Local DVC of a volume pair: the grid of points, the integer initial guess (FFT cross-correlation),
// IC-GN from that guess with neighbour seeding, and the per-point results.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <batchsolve/context.hpp>

#include "icgn.hpp"
#include "initial_guess.hpp"
#include "volume.hpp"

namespace dvc {

// The default pre-smoothing sigma (voxels), with the default O-MOMS interpolant: against 1.5 (the
// cubic B-spline's best) it has the smaller worst RMSE on every set of results/defaults_study.md
// (noise-free translations 1.06e-4 against 1.30e-4, strains 5.2e-4 against 1.3e-3, grey-level
// noise 2.01e-3 against 2.17e-3), on the 192^3 target pair (1.12e-4 against 1.38e-4) and more
// converged points away from the TomoWarp2 crack (96.1 % against 95.7 %).
constexpr double kDefaultPresmooth = 1.0;

enum class GuessMode {
    seeded,  // FFT guess at a coarse subgrid of seed points, IC-GN there, the rest started from the
             // nearest converged seed's affine map; failures retried from converged neighbours
    fft,     // FFT guess at every point, then the neighbour retry
    none,    // start from zero displacement (no retry)
};
GuessMode parse_guess_mode(const std::string& text);
const char* to_string(GuessMode g);

struct CorrelationOptions {
    IcgnSettings icgn;
    int spacing = 8;           // between grid points, voxels
    GuessMode guess = GuessMode::seeded;
    int search_radius = 8;     // FFT search: integer shifts up to +-radius per axis (on the coarsest pyramid level)
    int pyramid_levels = -1;   // coarser levels of the FFT guess (initial_guess.hpp); -1: as many as fit
    int seed_stride = 3;       // seeded: every seed_stride-th grid point per axis is a seed
    int retry_passes = 2;      // neighbour-seeded retries of failed points
    double min_zncc = 0.9;     // converged points below this ZNCC get status low_correlation
    // Gaussian pre-smoothing of both volumes (voxels; 0: none). It damps the high frequencies
    // that the cubic interpolant reproduces worst, the main source of the sub-voxel bias (the
    // S-curve), and some noise (Pan et al. 2013, Gaussian pre-filtering for DIC).
    double presmooth_sigma = kDefaultPresmooth;
    // Region of interest (voxels, z, y, x; hi exclusive; hi <= 0 means the volume's end): point
    // subsets lie inside it.
    std::array<std::int64_t, 3> region_lo{0, 0, 0}, region_hi{0, 0, 0};
    const Volume* mask = nullptr;  // points whose centre voxel is 0 here are left out
    std::int64_t max_points = 0;   // > 0: keep an evenly spread subset of this many grid points (benchmarks)
    bool progress = true;
};

// Voxels kept between the volume's border and any reference subset of the grid. The spline's
// mirror boundary condition does not match the scanned data beyond the border; its influence on
// the coefficients decays as (2 - sqrt 3)^d = 0.27^d with the distance d, and subsets within 2-4
// voxels of the border measured 3.5x the error of interior ones (2 % strain, 128^3, subset 33).
constexpr std::int64_t kGridMargin = 5;

// Points on a regular grid (grid_shape points per axis); `grid_index` maps each kept point to its
// flat index in the grid (z slowest), -1-free (masked points are simply not in the list).
struct PointGrid {
    std::array<std::int64_t, 3> grid_shape{0, 0, 0};
    std::array<double, 3> origin{0, 0, 0};  // centre of grid point (0, 0, 0)
    int spacing = 0;
    std::vector<Point3> centres;
    std::vector<std::int64_t> grid_index;
};
PointGrid make_point_grid(const Dims& dims, const CorrelationOptions& options);

struct GuessTimings {
    double fft_s = 0;  // FFT cross-correlation (initial integer shifts)
    std::int64_t fft_points = 0;
};

// Seconds of a whole `dvc correlate` call (commands.cpp fills it): reading both volumes, the
// correlation (CorrelationResult::total_s, including the backend's start), the field strain and
// the comparison with a truth, writing the HDF5 results; total from the first read to the written file.
struct EndToEnd {
    double read_s = 0, strain_s = 0, write_s = 0, total_s = 0;
};

struct CorrelationResult {
    PointGrid grid;
    std::vector<double> params;          // 12 per point (icgn.hpp)
    std::vector<float> zncc;
    std::vector<std::int32_t> iterations;
    std::vector<std::int8_t> status;
    std::vector<std::int32_t> initial_shift;  // 3 per point: the FFT integer shift (0 where none was computed)
    std::vector<std::int8_t> pass;            // 0: seed / first pass, 1: seeded from a seed, 2+: retry pass
    IcgnTimings icgn;
    GuessTimings guess;
    std::string backend;
    double total_s = 0;
    EndToEnd end_to_end;  // zero unless the caller timed the whole call
};

CorrelationResult correlate(const Volume& reference, const Volume& deformed, const CorrelationOptions& options,
                            batchsolve::Context& ctx);

}  // namespace dvc
