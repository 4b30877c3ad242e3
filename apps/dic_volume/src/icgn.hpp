// Inverse-compositional Gauss-Newton (IC-GN) with the first-order 12-parameter subset warp and the
// ZNSSD criterion, for many points at once. The 12x12 Hessian depends only on the reference subset,
// so every point's Hessian is factored once (batchsolve::potrf_batched, double, column-major) and
// every iteration solves all still-active points with one batchsolve::potrs_batched. Two engines
// with one interface: the CPU (OpenMP over points) and the GPU (icgn_cuda.cu; icgn_stub.cpp when the
// build has no CUDA).
#pragma once

#include <array>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <batchsolve/context.hpp>

#include "interpolation.hpp"
#include "volume.hpp"

namespace dvc {

// Per-point outcome (the HDF5 dataset /points/status; README documents the codes).
enum class PointStatus : std::int8_t {
    converged = 0,        // ||dp|| below the tolerance
    iteration_limit = 1,  // still moving after max_iterations
    diverged = 2,         // non-finite step, displacement or gradient beyond the plausible, flat deformed subset
    flat_subset = 3,      // reference subset without texture: Hessian not positive definite (potrf info) or no contrast
    outside_volume = 4,   // the warped subset (or the reference subset) leaves the volume
    low_correlation = 5,  // converged, but ZNCC below the acceptance threshold (a crack, a bad match)
    not_run = 6,          // not correlated (only seen in intermediate results)
};
const char* to_string(PointStatus s);
constexpr int kPointStatusCount = 7;

// Parameter vector p of a point (12 values): p[0..2] the translation t of the subset centre
// (z, y, x), p[3 + 3 i + j] = G_ij = du_i/dx_j (i, j in z, y, x), the displacement gradient. A
// reference voxel at offset d from the centre maps to centre + d + t + G d in the deformed volume.
constexpr int kParams = 12;

struct IcgnSettings {
    int subset = 32;                      // edge of the cubic subset, voxels
    Interpolation interpolation = Interpolation::cubic_omoms;
    // With final_phase, every point that converged with `interpolation` iterates on from there with
    // `final_interpolation` until it converges again (at most max_iterations more); a point whose
    // final phase fails (or whose warped subset is beyond that sampler's reach) keeps its first result.
    bool final_phase = false;
    Interpolation final_interpolation = Interpolation::quintic_bspline;
    int max_iterations = 50;
    double tolerance = 1e-4;              // on ||dp|| = sqrt(|dt|^2 + (subset/2)^2 |dG|_F^2), voxels
    double max_displacement_change = -1;  // diverged when |t - t_initial| exceeds it (< 0: subset/2)
    double max_gradient = 0.5;            // diverged when any |G_ij| exceeds it
    // Gaussian pre-smoothing sigma of both volumes before everything else (voxels; 0: none), done
    // by the engine on its backend.
    double presmooth_sigma = 0.0;
};

// Wall-clock time of each stage (seconds; GPU stages synchronised around each), summed over calls.
struct IcgnTimings {
    double prepare_s = 0;        // uploads, pre-smoothing, prefilters, reference gradients
    double upload_s = 0;         // of prepare_s: the volumes to the device (raw files read on the way, GPU)
    double hessian_s = 0;        // per-point reference statistics and Hessians
    double factor_s = 0;         // potrf_batched
    double interpolation_s = 0;  // deformed-subset interpolation and the right-hand sides
    double solve_s = 0;          // potrs_batched
    double update_s = 0;         // warp composition, convergence tests, compaction
    double fft_plan_s = 0;       // of the FFT guess: making its cuFFT plans (GPU; kept for the process)
    std::int64_t iterations = 0; // iterations run (the most any point took), summed over calls
    std::int64_t point_iterations = 0;  // sum over points of their iterations
    std::uint64_t device_bytes = 0;     // peak device memory the engine allocated (GPU)
    double icgn_s() const { return hessian_s + factor_s + interpolation_s + solve_s + update_s; }
};

using Point3 = std::array<double, 3>;  // z, y, x

constexpr int kMaxSubset = 128;  // the largest subset edge either engine accepts

// Subset geometry: the subset of a point with centre c covers voxels c - (s-1)/2 ... c + (s-1)/2
// per axis, so a centre is an integer for odd s and a half-integer for even s.
inline double subset_half(int subset) { return 0.5 * (subset - 1); }

class IcgnEngine {
public:
    virtual ~IcgnEngine() = default;
    virtual std::string backend_name() const = 0;
    // Correlates the points at `centres` (each subset inside the reference volume) starting from
    // params (12 per point, the initial guesses); writes the result into params, zncc (at the last
    // evaluated warp), iterations and status.
    virtual void run(const std::vector<Point3>& centres, std::vector<double>& params, std::vector<float>& zncc,
                     std::vector<std::int32_t>& iterations, std::vector<std::int8_t>& status, IcgnTimings& timings) = 0;
    // Integer initial shifts (3 per point, z, y, x) of the subsets at `centres` by the FFT search of
    // initial_guess.hpp on `levels` coarser pyramid levels (then the finest), the coarsest
    // searching +-radius; on the engine's (pre-smoothed) volumes.
    virtual std::vector<std::int32_t> integer_shifts(const std::vector<Point3>& centres, int radius, int levels, bool progress) = 0;
};

// The engine of ctx's backend; it keeps the prepared volumes (coefficients, gradients) for many
// run() calls. The volumes must outlive the engine and have the same dimensions.
std::unique_ptr<IcgnEngine> make_icgn_engine(const Volume& reference, const Volume& deformed, const IcgnSettings& settings,
                                             batchsolve::Context& ctx, IcgnTimings& timings);
std::unique_ptr<IcgnEngine> make_cpu_icgn_engine(const Volume& reference, const Volume& deformed,
                                                 const IcgnSettings& settings, batchsolve::Context& ctx, IcgnTimings& timings);
// icgn_cuda.cu (icgn_stub.cpp without CUDA: throws Error "built without CUDA").
std::unique_ptr<IcgnEngine> make_cuda_icgn_engine(const Volume& reference, const Volume& deformed,
                                                  const IcgnSettings& settings, batchsolve::Context& ctx, IcgnTimings& timings);

// Starts the GPU's context on another thread (icgn_cuda.cu; nothing without CUDA or without a
// device), so that its creation overlaps the reading of the volumes; wait() before using the GPU.
class GpuWarmUp {
public:
    // volume_floats: voxels of one volume where known before reading (raw --dims), else 0; it
    // sizes the upload's staging buffers.
    explicit GpuWarmUp(std::size_t volume_floats = 0);
    ~GpuWarmUp();
    // Loads cuFFT on the calling thread (it waits anyway), then waits for the context; the staging
    // buffers are made after it on the warm-up thread (the upload waits for them).
    void wait();

private:
    struct State;
    State* state_;
};

// The quick exit of a finished `dvc correlate`: the GPU's context is torn down (cudaDeviceReset) on
// a thread of its own while the host writes the results, so that the process's exit leaves the
// driver less to do; nothing may use the GPU afterwards. join() waits for it (error paths).
class GpuRelease {
public:
    void start();
    void join();
    ~GpuRelease() { join(); }

private:
    struct State;
    State* state_ = nullptr;
};

// With the CUDA backend: makes the cuFFT plans of a first pyramid shift search of `points` points
// (initial_guess.hpp) on a thread of its own, so that they are made beside the engine's upload and
// prefilters; the future is ready when they are (errors are left to the search, which makes what
// is missing). DVC_PLAN_AHEAD=0 in the environment, or a build without CUDA: a ready future.
std::future<void> plan_gpu_shift_searches(int subset, int radius, int levels, std::size_t points);

// Checks settings and volume sizes (subset larger than the volume, dims mismatch): Error naming the option.
void check_icgn_inputs(const Volume& reference, const Volume& deformed, const IcgnSettings& settings);

}  // namespace dvc
