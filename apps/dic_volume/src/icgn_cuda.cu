// The GPU IC-GN engine: reference statistics and Hessians by one thread block per point, the
// Hessians factored once by batchsolve::potrf_batched, then per iteration one block per active
// point interpolates its deformed subset and forms the right-hand side, batchsolve::potrs_batched
// solves all active points through a pointer array, and one thread per point composes the warp,
// tests convergence and compacts the active list. Only the active count crosses to the host.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>
#include <cmath>
#include <vector>

#include <batchsolve/batch.hpp>
#include <batchsolve/cholesky.hpp>

#include "device_stages.hpp"
#include "icgn.hpp"
#include "icgn_math.hpp"
#include "initial_guess.hpp"
#include "timeline.hpp"

namespace dvc {
namespace {

#define DVC_CUDA_CHECK(call)                                                                                \
    do {                                                                                                    \
        const cudaError_t err_ = (call);                                                                    \
        if (err_ != cudaSuccess) throw Error(std::string("CUDA: ") + #call + ": " + cudaGetErrorString(err_)); \
    } while (0)

// Threads per point block: each thread keeps one x of the subset and walks kBlock / s rows at a
// time, so a 32-voxel row of a subset is one warp's coalesced read (subsets up to kMaxSubset).
constexpr int kBlock = 256;
static_assert(kBlock >= kMaxSubset, "a block must cover one row of the largest subset");

// The reference sums of one point: 78 upper-triangle Hessian entries, sum J f~, sum J, sum f~^2.
constexpr int kHessianSums = kReferenceSums;
// The deformed sums of one point per iteration: sum J g~ (12), sum g~, sum g~^2, sum f~ g~.
constexpr int kRhsSums = 15;

template <int Count>
__device__ void block_sum(float (&acc)[Count], double* shared /* Count doubles, zeroed */) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int q = 0; q < Count; ++q) {
        float v = acc[q];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0) atomicAdd(&shared[q], double(v));
    }
    __syncthreads();
}

struct DeviceVolumes {
    const float* image;         // reference samples
    const float* gz;            // reference gradient
    const float* gy;
    const float* gx;
    const float* deformed;      // deformed coefficients (splines) or samples (trilinear)
    long long ny, nx;
};

__global__ void reference_mean_kernel(DeviceVolumes v, const double* centres, int s, double* fmean) {
    __shared__ double total[1];
    if (threadIdx.x == 0) total[0] = 0;
    __syncthreads();
    const int k = blockIdx.x;
    const double half = 0.5 * (s - 1);
    const long long z0 = llround(centres[3 * k] - half), y0 = llround(centres[3 * k + 1] - half), x0 = llround(centres[3 * k + 2] - half);
    float acc[1] = {0.0f};
    const int n = s * s * s;
    const int rows_per_pass = kBlock / s, x = threadIdx.x % s;
    for (int row = threadIdx.x / s; threadIdx.x < rows_per_pass * s && row < s * s; row += rows_per_pass)
        acc[0] += v.image[((z0 + row / s) * v.ny + (y0 + row % s)) * v.nx + (x0 + x)];
    block_sum(acc, total);
    if (threadIdx.x == 0) fmean[k] = total[0] / double(n);
}

// One block per point. A thread keeps its x, so d_x is constant over its voxels: it keeps the 55
// sums of icgn_math.hpp's ReferenceLineSums and expands them into the 103 before the block sum.
__global__ void reference_statistics_kernel(DeviceVolumes v, const double* centres, int s, const double* fmean,
                                            double* hessians, double* jf, double* j1, double* df) {
    __shared__ double sums[kHessianSums];
    for (int q = threadIdx.x; q < kHessianSums; q += kBlock) sums[q] = 0;
    __syncthreads();
    const int k = blockIdx.x;
    const float half = 0.5f * (s - 1);
    const long long z0 = llround(centres[3 * k] - half), y0 = llround(centres[3 * k + 1] - half), x0 = llround(centres[3 * k + 2] - half);
    const float mean = float(fmean[k]);
    ReferenceLineSums line;
    const int rows_per_pass = kBlock / s, x = threadIdx.x % s;
    const bool works = threadIdx.x < rows_per_pass * s;
    for (int row = threadIdx.x / s; works && row < s * s; row += rows_per_pass) {
        const int y = row % s, z = row / s;
        const long long at = ((z0 + z) * v.ny + (y0 + y)) * v.nx + (x0 + x);
        const float g[3] = {__ldg(v.gz + at), __ldg(v.gy + at), __ldg(v.gx + at)};
        line.add(g, v.image[at] - mean, z - half, y - half);
    }
    float acc[kHessianSums];
    line.expand(works ? x - half : 0.0f, acc);
    block_sum(acc, sums);
    double* H = hessians + 144ll * k;
    for (int q = threadIdx.x; q < 78; q += kBlock) {
        // Row a, column b >= a of the q-th upper-triangle entry.
        int a = 0, rest = q;
        while (rest >= 12 - a) rest -= 12 - a, ++a;
        const int b = a + rest;
        H[a * 12 + b] = sums[q];
        H[b * 12 + a] = sums[q];
    }
    if (threadIdx.x < 12) {
        jf[12 * k + threadIdx.x] = sums[78 + threadIdx.x];
        j1[12 * k + threadIdx.x] = sums[90 + threadIdx.x];
    }
    if (threadIdx.x == 0) df[k] = sqrt(sums[102]);
}

// The deformed volume's sampler of an interpolant (interpolation.hpp).
template <Interpolation I>
__device__ __forceinline__ float sample_deformed(const float* c, long long ny, long long nx, float z, float y, float x) {
    if constexpr (I == Interpolation::cubic_bspline) return sample_cubic(c, ny, nx, z, y, x);
    else if constexpr (I == Interpolation::cubic_omoms) return sample_omoms(c, ny, nx, z, y, x);
    else if constexpr (I == Interpolation::quintic_bspline) return sample_quintic_f(c, ny, nx, z, y, x);
    else return sample_trilinear(c, ny, nx, z, y, x);
}

template <Interpolation I>
__global__ void __launch_bounds__(kBlock, 3) rhs_kernel(DeviceVolumes v, const double* centres, int s, const int* active, const double* params,
                           const double* fmean, const double* jf, const double* j1, const double* df, double* rhs,
                           float* zncc, int* usable) {
    __shared__ double sums[kRhsSums];
    if (threadIdx.x < kRhsSums) sums[threadIdx.x] = 0;
    __syncthreads();
    const int a = blockIdx.x;
    const int k = active[a];
    const double* p = params + 12ll * k;
    const double* c = centres + 3ll * k;
    const float half = 0.5f * (s - 1);
    const long long z0 = llround(c[0] - half), y0 = llround(c[1] - half), x0 = llround(c[2] - half);
    // Sample position = centre + t + (I + G) d, in float relative to a double base.
    const float base[3] = {float(c[0] + p[0]), float(c[1] + p[1]), float(c[2] + p[2])};
    float M[9];
#pragma unroll
    for (int q = 0; q < 9; ++q) M[q] = float(p[3 + q] + (q % 4 == 0 ? 1.0 : 0.0));
    const float shift = float(fmean[k]);
    float acc[kRhsSums];
#pragma unroll
    for (int q = 0; q < kRhsSums; ++q) acc[q] = 0.0f;
    const int n = s * s * s;
    // A thread keeps its x and walks rows (y, z): no division per voxel, coalesced rows.
    const int rows_per_pass = kBlock / s, x = threadIdx.x % s;
    for (int row = threadIdx.x / s; threadIdx.x < rows_per_pass * s && row < s * s; row += rows_per_pass) {
        const int y = row % s, z = row / s;
        const float d[3] = {z - half, y - half, x - half};
        const float pz = base[0] + M[0] * d[0] + M[1] * d[1] + M[2] * d[2];
        const float py = base[1] + M[3] * d[0] + M[4] * d[1] + M[5] * d[2];
        const float px = base[2] + M[6] * d[0] + M[7] * d[1] + M[8] * d[2];
        const float g = sample_deformed<I>(v.deformed, v.ny, v.nx, pz, py, px) - shift;
        const long long at = ((z0 + z) * v.ny + (y0 + y)) * v.nx + (x0 + x);
        const float f = __ldg(v.image + at) - shift;
        const float w[3] = {__ldg(v.gz + at) * g, __ldg(v.gy + at) * g, __ldg(v.gx + at) * g};
#pragma unroll
        for (int r = 0; r < 3; ++r) {
            acc[r] += w[r];
            acc[3 + 3 * r] += w[r] * d[0], acc[4 + 3 * r] += w[r] * d[1], acc[5 + 3 * r] += w[r] * d[2];
        }
        acc[12] += g, acc[13] += g * g, acc[14] += f * g;
    }
    block_sum(acc, sums);
    if (threadIdx.x == 0) {
        double b[12];
        float z = 0.0f;
        const bool ok = znssd_rhs(jf + 12ll * k, sums, j1 + 12ll * k, sums[12], sums[13], sums[14], double(n), df[k], b, &z);
        for (int q = 0; q < 12; ++q) rhs[12ll * a + q] = ok ? b[q] : 0.0;
        zncc[k] = z;
        usable[a] = ok ? 1 : 0;
    }
}

struct UpdateArgs {
    const double* centres;
    const int* active;
    int count;
    const double* rhs;
    const int* usable;
    double* params;
    const double* initial;
    std::int8_t* status;
    int* iterations;
    int iteration;
    double half, tolerance, max_change, max_gradient, reach_lower, reach_upper;
    long long dims[3];
    const double* hessians;
    int* next_active;
    const double** next_factors;
    int* next_count;
};

__global__ void update_kernel(UpdateArgs u) {
    const int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= u.count) return;
    const int k = u.active[a];
    double* p = u.params + 12ll * k;
    const double* dp = u.rhs + 12ll * a;
    u.iterations[k] = u.iteration;
    PointStatus outcome = PointStatus::not_run;
    bool finite = true;
    for (int i = 0; i < 12; ++i) finite = finite && isfinite(dp[i]);
    if (!u.usable[a] || !finite || !compose_inverse(p, dp)) {
        outcome = PointStatus::diverged;
    } else {
        const double* t0 = u.initial + 12ll * k;
        const double moved = sqrt((p[0] - t0[0]) * (p[0] - t0[0]) + (p[1] - t0[1]) * (p[1] - t0[1]) + (p[2] - t0[2]) * (p[2] - t0[2]));
        double gmax = 0;
        for (int i = 3; i < 12; ++i) gmax = fmax(gmax, fabs(p[i]));
        if (!(moved <= u.max_change) || !(gmax <= u.max_gradient)) outcome = PointStatus::diverged;
        else if (!warped_subset_inside(p, u.centres + 3ll * k, u.half, reinterpret_cast<const std::int64_t*>(u.dims), u.reach_lower, u.reach_upper))
            outcome = PointStatus::outside_volume;
        else if (step_norm(dp, u.half) < u.tolerance) outcome = PointStatus::converged;
    }
    if (outcome == PointStatus::not_run) {
        const int slot = atomicAdd(u.next_count, 1);
        u.next_active[slot] = k;
        u.next_factors[slot] = u.hessians + 144ll * k;
    } else {
        u.status[k] = std::int8_t(outcome);
    }
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Device memory owned by the engine, counted for the benchmark's memory column.
class DeviceArena {
public:
    ~DeviceArena() { release(); }
    template <class T>
    T* allocate(std::size_t count) {
        void* p = nullptr;
        DVC_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(count, 1) * sizeof(T)));
        blocks_.push_back(p);
        bytes_ += count * sizeof(T);
        peak_ = std::max(peak_, bytes_);
        return static_cast<T*>(p);
    }
    void release() {
        for (void* p : blocks_) cudaFree(p);
        blocks_.clear();
        bytes_ = 0;
    }
    std::size_t peak() const { return peak_; }

private:
    std::vector<void*> blocks_;
    std::size_t bytes_ = 0, peak_ = 0;
};

class CudaEngine final : public IcgnEngine {
public:
    CudaEngine(const Volume& reference, const Volume& deformed, const IcgnSettings& settings, batchsolve::Context& ctx,
               IcgnTimings& timings)
        : ref_(reference), s_(settings), ctx_(ctx), stream_(static_cast<cudaStream_t>(ctx.stream())) {
        check_icgn_inputs(reference, deformed, settings);
        const auto t0 = Clock::now();
        // Every volume stage runs here on the device: the host volumes are uploaded once (their
        // samples), then pre-smoothing, the prefilters and the reference gradients. The smoothed
        // samples of both stay for the FFT initial guess; scratch holds a volume while preparing.
        const bool spline = is_spline(s_.interpolation);
        const Dims dims = reference.dims;
        const std::size_t voxels = reference.voxels();
        // Refused before any allocation when the volumes cannot fit: the image, three gradients,
        // the deformed samples and coefficients, the final phase's coefficients (if any), one
        // scratch volume, and the shift search's chunk.
        {
            std::size_t free_bytes = 0, total_bytes = 0;
            DVC_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
            const double need = double(voxels) * sizeof(float) * ((spline ? 7 : 6) + (s_.final_phase ? 1 : 0)) + double(device::shift_search_bytes(s_.subset, 8, 1 << 20));
            if (need > double(free_bytes)) {
                char m[256];
                std::snprintf(m, sizeof m, "the GPU engine: volumes of %s need about %.1f GiB of device memory, %.1f GiB of %.1f GiB are free",
                              dims_text(reference.dims).c_str(), need / double(1ull << 30), double(free_bytes) / double(1ull << 30),
                              double(total_bytes) / double(1ull << 30));
                throw Error(m);
            }
        }
        float* image = volumes_.allocate<float>(voxels);
        float* dz = volumes_.allocate<float>(voxels);
        float* dy = volumes_.allocate<float>(voxels);
        float* dx = volumes_.allocate<float>(voxels);
        def_samples_ = volumes_.allocate<float>(voxels);
        float* def = spline ? volumes_.allocate<float>(voxels) : def_samples_;
        float* def_final = s_.final_phase ? volumes_.allocate<float>(voxels) : nullptr;
        {
            DeviceArena scratch_arena;
            float* scratch = scratch_arena.allocate<float>(voxels);
            timings.device_bytes = std::max<std::uint64_t>(timings.device_bytes, volumes_.peak() + scratch_arena.peak());
            timeline::mark("engine_allocated");
            auto upload = [&](float* dst, const Volume& v) {
                if (v.unread) device::upload_raw(dst, *v.unread, stream_);
                else device::upload(dst, v.data.data(), voxels, stream_);
            };
            const auto t_upload = Clock::now();
            upload(image, reference);
            upload(def_samples_, deformed);
            timings.upload_s += seconds_since(t_upload);
            timeline::mark("engine_uploaded");
            device::gaussian_smooth(image, scratch, dims, s_.presmooth_sigma, stream_);
            device::gaussian_smooth(def_samples_, scratch, dims, s_.presmooth_sigma, stream_);
            if (spline) {
                // The reference's cubic B-spline coefficients pass through `def` on their way to the
                // gradients (every spline interpolant steers with them, interpolation.hpp).
                DVC_CUDA_CHECK(cudaMemcpyAsync(def, image, voxels * 4, cudaMemcpyDeviceToDevice, stream_));
                device::bspline_prefilter(def, scratch, dims, 3, stream_);
                device::gradients(def, dims, true, dz, dy, dx, stream_);
                DVC_CUDA_CHECK(cudaMemcpyAsync(def, def_samples_, voxels * 4, cudaMemcpyDeviceToDevice, stream_));
                device::bspline_prefilter(def, scratch, dims, prefilter_degree(s_.interpolation), stream_);
            } else {
                device::gradients(image, dims, false, dz, dy, dx, stream_);
            }
            if (def_final) {
                DVC_CUDA_CHECK(cudaMemcpyAsync(def_final, def_samples_, voxels * 4, cudaMemcpyDeviceToDevice, stream_));
                device::bspline_prefilter(def_final, scratch, dims, prefilter_degree(s_.final_interpolation), stream_);
            }
            DVC_CUDA_CHECK(cudaStreamSynchronize(stream_));
        }
        timeline::mark("engine_prepared");
        dev_ = DeviceVolumes{image, dz, dy, dx, def, reference.ny(), reference.nx()};
        dev_final_ = DeviceVolumes{image, dz, dy, dx, def_final, reference.ny(), reference.nx()};
        timings.prepare_s += seconds_since(t0);
        timings.device_bytes = std::max<std::uint64_t>(timings.device_bytes, volumes_.peak());
        timings_ = &timings;
    }

    std::vector<std::int32_t> integer_shifts(const std::vector<Point3>& centres, int radius, int levels, bool) override {
        // Coarser levels of both smoothed volumes are made on first use and kept.
        while (int(levels_.size()) < levels) {
            const int l = int(levels_.size()) + 1;
            const Dims fine = pyramid_dims(ref_.dims, l - 1), coarse = pyramid_dims(ref_.dims, l);
            const std::size_t n = std::size_t(coarse[0]) * coarse[1] * coarse[2];
            Level level{pyramid_arena_.allocate<float>(n), pyramid_arena_.allocate<float>(n)};
            const float* ref_fine = l == 1 ? dev_.image : levels_.back().ref;
            const float* def_fine = l == 1 ? def_samples_ : levels_.back().def;
            device::downsample2(ref_fine, fine, level.ref, stream_);
            device::downsample2(def_fine, fine, level.def, stream_);
            levels_.push_back(level);
        }
        const std::uint64_t held = volumes_.peak() + pyramid_arena_.peak();
        return pyramid_shifts(centres, ref_.dims, s_.subset, radius, levels, [&](int level, const ShiftSearch& search) {
            const float* r = level == 0 ? dev_.image : levels_[level - 1].ref;
            const float* d = level == 0 ? def_samples_ : levels_[level - 1].def;
            std::size_t peak = 0;
            auto shifts = device::fft_shift_search(r, d, pyramid_dims(ref_.dims, level), search, stream_, &peak, &timings_->fft_plan_s);
            timings_->device_bytes = std::max<std::uint64_t>(timings_->device_bytes, held + peak);
            return shifts;
        });
    }

    std::string backend_name() const override { return "cuda"; }

    // Copies on the context's stream (which may not synchronise with the legacy default stream)
    // and waits for them: the host reads or rewrites the buffers right after.
    void copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
        DVC_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream_));
        DVC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    void run(const std::vector<Point3>& centres, std::vector<double>& params, std::vector<float>& zncc,
             std::vector<std::int32_t>& iterations, std::vector<std::int8_t>& status, IcgnTimings& timings) override {
        const int count = int(centres.size());
        if (std::int64_t(params.size()) != std::int64_t(count) * kParams) throw Error("IC-GN: params holds the wrong number of values");
        zncc.assign(count, 0.0f);
        iterations.assign(count, 0);
        status.assign(count, std::int8_t(PointStatus::not_run));
        if (count == 0) return;
        const int s = s_.subset;
        const double half = subset_half(s);
        const double n = double(s) * s * s;
        const auto reach = sampler_reach(s_.interpolation);
        const std::int64_t dims[3] = {ref_.nz(), ref_.ny(), ref_.nx()};

        // Points whose reference subset leaves the volume never reach the device kernels.
        const double zero_p[12] = {};
        std::vector<double> flat_centres(3 * std::size_t(count));
        for (int k = 0; k < count; ++k) {
            for (int i = 0; i < 3; ++i) flat_centres[3 * k + i] = centres[k][i];
            if (!warped_subset_inside(zero_p, centres[k].data(), half, dims, 1.0, 1.0)) {
                status[k] = std::int8_t(PointStatus::outside_volume);
                for (int i = 0; i < 3; ++i) flat_centres[3 * k + i] = 0.5 * (dims[i] - 1);  // harmless stand-in for the kernels
            }
        }
        DeviceArena arena;
        double* d_centres = arena.allocate<double>(3 * std::size_t(count));
        double* d_params = arena.allocate<double>(12 * std::size_t(count));
        double* d_initial = arena.allocate<double>(12 * std::size_t(count));
        double* d_hessians = arena.allocate<double>(144 * std::size_t(count));
        double* d_jf = arena.allocate<double>(12 * std::size_t(count));
        double* d_j1 = arena.allocate<double>(12 * std::size_t(count));
        double* d_fmean = arena.allocate<double>(count);
        double* d_df = arena.allocate<double>(count);
        double* d_rhs = arena.allocate<double>(12 * std::size_t(count));
        float* d_zncc = arena.allocate<float>(count);
        int* d_iterations = arena.allocate<int>(count);
        std::int8_t* d_status = arena.allocate<std::int8_t>(count);
        int* d_info = arena.allocate<int>(count);
        int* d_usable = arena.allocate<int>(count);
        int* d_active[2] = {arena.allocate<int>(count), arena.allocate<int>(count)};
        const double** d_factors[2] = {arena.allocate<const double*>(count), arena.allocate<const double*>(count)};
        int* d_count = arena.allocate<int>(1);
        timings.device_bytes = std::max<std::uint64_t>(timings.device_bytes, volumes_.peak() + pyramid_arena_.peak() + arena.peak());

        DVC_CUDA_CHECK(cudaMemcpyAsync(d_centres, flat_centres.data(), flat_centres.size() * 8, cudaMemcpyHostToDevice, stream_));
        DVC_CUDA_CHECK(cudaMemcpyAsync(d_params, params.data(), params.size() * 8, cudaMemcpyHostToDevice, stream_));
        DVC_CUDA_CHECK(cudaMemcpyAsync(d_initial, params.data(), params.size() * 8, cudaMemcpyHostToDevice, stream_));
        DVC_CUDA_CHECK(cudaMemsetAsync(d_zncc, 0, count * sizeof(float), stream_));
        DVC_CUDA_CHECK(cudaMemsetAsync(d_iterations, 0, count * sizeof(int), stream_));

        auto t0 = Clock::now();
        reference_mean_kernel<<<count, kBlock, 0, stream_>>>(dev_, d_centres, s, d_fmean);
        reference_statistics_kernel<<<count, kBlock, 0, stream_>>>(dev_, d_centres, s, d_fmean, d_hessians, d_jf, d_j1, d_df);
        DVC_CUDA_CHECK(cudaGetLastError());
        DVC_CUDA_CHECK(cudaStreamSynchronize(stream_));
        timings.hessian_s += seconds_since(t0);

        t0 = Clock::now();
        batchsolve::potrf_batched(batchsolve::Uplo::lower, batchsolve::BatchView<double>::column_major(d_hessians, 12, 12, count), d_info, ctx_);
        ctx_.synchronize();
        timings.factor_s += seconds_since(t0);

        // The first active list: points with a factor, texture and an initial warp inside the volume.
        std::vector<int> info(count);
        std::vector<double> fmean(count), df(count);
        copy(info.data(), d_info, count * sizeof(int), cudaMemcpyDeviceToHost);
        copy(fmean.data(), d_fmean, count * 8, cudaMemcpyDeviceToHost);
        copy(df.data(), d_df, count * 8, cudaMemcpyDeviceToHost);
        std::vector<int> active;
        std::vector<const double*> factors;
        for (int k = 0; k < count; ++k) {
            if (status[k] != std::int8_t(PointStatus::not_run)) continue;
            if (info[k] != 0 || !(df[k] > 1e-6 * std::sqrt(n) * (std::fabs(fmean[k]) + 1e-30))) {
                status[k] = std::int8_t(PointStatus::flat_subset);
                continue;
            }
            if (!warped_subset_inside(&params[12 * std::size_t(k)], centres[k].data(), half, dims, reach.lower, reach.upper)) {
                status[k] = std::int8_t(PointStatus::outside_volume);
                continue;
            }
            active.push_back(k);
            factors.push_back(d_hessians + 144ll * k);
        }
        copy(d_status, status.data(), count, cudaMemcpyHostToDevice);
        int m = int(active.size());
        if (m) {
            copy(d_active[0], active.data(), m * sizeof(int), cudaMemcpyHostToDevice);
            copy(d_factors[0], factors.data(), m * sizeof(void*), cudaMemcpyHostToDevice);
        }

        UpdateArgs u{};
        u.centres = d_centres, u.rhs = d_rhs, u.usable = d_usable, u.params = d_params, u.initial = d_initial;
        u.status = d_status, u.iterations = d_iterations, u.half = half, u.tolerance = s_.tolerance;
        u.max_change = s_.max_displacement_change < 0 ? 0.5 * s : s_.max_displacement_change;
        u.max_gradient = s_.max_gradient, u.reach_lower = reach.lower, u.reach_upper = reach.upper;
        for (int i = 0; i < 3; ++i) u.dims[i] = dims[i];
        u.hessians = d_hessians, u.next_count = d_count;
        auto rhs = [&](Interpolation interp, const DeviceVolumes& dv, int active_count, const int* active_list) {
            switch (interp) {
                case Interpolation::cubic_bspline:
                    return rhs_kernel<Interpolation::cubic_bspline><<<active_count, kBlock, 0, stream_>>>(
                        dv, d_centres, s, active_list, d_params, d_fmean, d_jf, d_j1, d_df, d_rhs, d_zncc, d_usable);
                case Interpolation::cubic_omoms:
                    return rhs_kernel<Interpolation::cubic_omoms><<<active_count, kBlock, 0, stream_>>>(
                        dv, d_centres, s, active_list, d_params, d_fmean, d_jf, d_j1, d_df, d_rhs, d_zncc, d_usable);
                case Interpolation::quintic_bspline:
                    return rhs_kernel<Interpolation::quintic_bspline><<<active_count, kBlock, 0, stream_>>>(
                        dv, d_centres, s, active_list, d_params, d_fmean, d_jf, d_j1, d_df, d_rhs, d_zncc, d_usable);
                case Interpolation::trilinear: break;
            }
            rhs_kernel<Interpolation::trilinear><<<active_count, kBlock, 0, stream_>>>(dv, d_centres, s, active_list, d_params, d_fmean, d_jf,
                                                                                        d_j1, d_df, d_rhs, d_zncc, d_usable);
        };
        int iteration = 0, current = 0;
        // Iterates the active points with one interpolant until none is left or `last` iterations.
        auto iterate = [&](Interpolation interp, const DeviceVolumes& dv, int last) {
            while (m > 0 && iteration < last) {
                ++iteration;
                t0 = Clock::now();
                rhs(interp, dv, m, d_active[current]);
                DVC_CUDA_CHECK(cudaGetLastError());
                DVC_CUDA_CHECK(cudaStreamSynchronize(stream_));
                timings.interpolation_s += seconds_since(t0);

                t0 = Clock::now();
                batchsolve::potrs_batched(batchsolve::Uplo::lower,
                                          batchsolve::BatchView<const double>::pointer_array(d_factors[current], 12, 12, 12, m),
                                          batchsolve::BatchView<double>::column_major(d_rhs, 12, 1, m), ctx_);
                ctx_.synchronize();
                timings.solve_s += seconds_since(t0);

                t0 = Clock::now();
                u.active = d_active[current], u.count = m, u.iteration = iteration;
                u.next_active = d_active[1 - current], u.next_factors = d_factors[1 - current];
                DVC_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(int), stream_));
                update_kernel<<<(m + 127) / 128, 128, 0, stream_>>>(u);
                DVC_CUDA_CHECK(cudaGetLastError());
                DVC_CUDA_CHECK(cudaMemcpyAsync(&m, d_count, sizeof(int), cudaMemcpyDeviceToHost, stream_));
                DVC_CUDA_CHECK(cudaStreamSynchronize(stream_));
                current = 1 - current;
                timings.update_s += seconds_since(t0);
            }
        };
        iterate(s_.interpolation, dev_, s_.max_iterations);
        // The final phase: the converged points go on with the final interpolant from where they
        // stopped; one that fails there gets its first result back (kept here on the host).
        std::vector<int> again;
        std::vector<double> kept_params;
        std::vector<float> kept_zncc;
        std::vector<int> kept_iterations;
        if (s_.final_phase) {
            const auto final_reach = sampler_reach(s_.final_interpolation);
            std::vector<std::int8_t> first_status(count);
            copy(first_status.data(), d_status, count, cudaMemcpyDeviceToHost);
            kept_params.resize(params.size());
            kept_zncc.resize(count);
            kept_iterations.resize(count);
            copy(kept_params.data(), d_params, params.size() * 8, cudaMemcpyDeviceToHost);
            copy(kept_zncc.data(), d_zncc, count * sizeof(float), cudaMemcpyDeviceToHost);
            copy(kept_iterations.data(), d_iterations, count * sizeof(int), cudaMemcpyDeviceToHost);
            std::vector<const double*> again_factors;
            for (int k = 0; k < count; ++k) {
                if (first_status[k] == std::int8_t(PointStatus::not_run)) first_status[k] = std::int8_t(PointStatus::iteration_limit);
                if (first_status[k] != std::int8_t(PointStatus::converged) ||
                    !warped_subset_inside(&kept_params[12 * std::size_t(k)], centres[k].data(), half, dims, final_reach.lower, final_reach.upper))
                    continue;
                first_status[k] = std::int8_t(PointStatus::not_run);
                again.push_back(k);
                again_factors.push_back(d_hessians + 144ll * k);
            }
            copy(d_status, first_status.data(), count, cudaMemcpyHostToDevice);
            m = int(again.size());
            if (m) {
                copy(d_active[current], again.data(), m * sizeof(int), cudaMemcpyHostToDevice);
                copy(d_factors[current], again_factors.data(), m * sizeof(void*), cudaMemcpyHostToDevice);
            }
            u.reach_lower = final_reach.lower, u.reach_upper = final_reach.upper;
            iterate(s_.final_interpolation, dev_final_, iteration + s_.max_iterations);
        }
        std::vector<std::int8_t> device_status(count);
        copy(device_status.data(), d_status, count, cudaMemcpyDeviceToHost);
        copy(params.data(), d_params, params.size() * 8, cudaMemcpyDeviceToHost);
        copy(zncc.data(), d_zncc, count * sizeof(float), cudaMemcpyDeviceToHost);
        std::vector<int> its(count);
        copy(its.data(), d_iterations, count * sizeof(int), cudaMemcpyDeviceToHost);
        for (int k = 0; k < count; ++k) {
            status[k] = device_status[k] == std::int8_t(PointStatus::not_run) ? std::int8_t(PointStatus::iteration_limit) : device_status[k];
            iterations[k] = its[k];
        }
        for (const int k : again) {
            if (status[k] == std::int8_t(PointStatus::converged)) continue;
            std::copy(&kept_params[12 * std::size_t(k)], &kept_params[12 * std::size_t(k)] + 12, &params[12 * std::size_t(k)]);
            zncc[k] = kept_zncc[k], iterations[k] = kept_iterations[k];
            status[k] = std::int8_t(PointStatus::converged);
        }
        for (int k = 0; k < count; ++k) timings.point_iterations += iterations[k];
        timings.iterations += iteration;
    }

private:
    const Volume& ref_;
    IcgnSettings s_;
    batchsolve::Context& ctx_;
    cudaStream_t stream_;
    DeviceArena volumes_;
    DeviceVolumes dev_{};
    DeviceVolumes dev_final_{};  // dev_ with the final phase's coefficients (IcgnSettings::final_phase)
    float* def_samples_ = nullptr;  // the smoothed deformed samples (the FFT guess reads them)
    struct Level {
        float* ref;
        float* def;
    };
    DeviceArena pyramid_arena_;
    std::vector<Level> levels_;  // pyramid levels 1, 2, ... of the smoothed samples
    IcgnTimings* timings_ = nullptr;
};

}  // namespace

std::future<void> plan_gpu_shift_searches(int subset, int radius, int levels, std::size_t points) {
    const char* ahead = std::getenv("DVC_PLAN_AHEAD");
    if (points == 0 || (ahead && std::string(ahead) == "0")) {
        std::promise<void> done;
        done.set_value();
        return done.get_future();
    }
    return std::async(std::launch::async, [=] {
        try {
            for (const LevelShape& shape : pyramid_searches(subset, radius, levels)) device::make_shift_search_plans(shape.subset, shape.radius, points);
            timeline::mark("fft_plans_made");
        } catch (const Error&) {
            // The search makes what is missing and reports its own errors.
        }
    });
}

struct GpuWarmUp::State {
    std::thread thread;
    std::promise<void> context_tried;  // set once the context exists or could not be made
    std::future<void> context_waited = context_tried.get_future();
};

GpuWarmUp::GpuWarmUp(std::size_t volume_floats) : state_(new State) {
    // cudaFree(nullptr) creates the primary context (driver load, device memory mapping: a few
    // hundred milliseconds on a large GPU); errors are left for the real use to report.
    // The upload's pinned staging buffers are made here too, after the context, while the caller
    // goes on with the engine's device allocations (the upload waits for them by their mutex).
    state_->thread = std::thread([state = state_, volume_floats] {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaFree(nullptr) != cudaSuccess) {
            state->context_tried.set_value();
            return;
        }
        timeline::mark("gpu_context_ready");
        state->context_tried.set_value();
        try {
            device::reserve_upload_staging(volume_floats);
            timeline::mark("gpu_staging_ready");
        } catch (const Error&) {
            // The upload reports it when it tries again.
        }
    });
}

GpuWarmUp::~GpuWarmUp() {
    wait();
    if (state_->thread.joinable()) state_->thread.join();
    delete state_;
}

void GpuWarmUp::wait() {
    device::preload_libraries();
    state_->context_waited.wait();
}

struct GpuRelease::State {
    std::thread thread;
};

void GpuRelease::start() {
    if (state_) return;
    state_ = new State;
    state_->thread = std::thread([] {
        const cudaError_t e = cudaDeviceReset();
        // The timeline says whether the teardown happened here or is left to the exit.
        timeline::mark(e == cudaSuccess ? std::string("gpu_released") : std::string("gpu_release_failed_") + cudaGetErrorName(e));
        cudaGetLastError();
    });
}

void GpuRelease::join() {
    if (!state_) return;
    if (state_->thread.joinable()) state_->thread.join();
    delete state_;
    state_ = nullptr;
}

std::unique_ptr<IcgnEngine> make_cuda_icgn_engine(const Volume& reference, const Volume& deformed,
                                                  const IcgnSettings& settings, batchsolve::Context& ctx, IcgnTimings& timings) {
    if (ctx.backend() != batchsolve::Backend::cuda) throw Error("the GPU IC-GN engine needs a CUDA context");
    return std::make_unique<CudaEngine>(reference, deformed, settings, ctx, timings);
}

}  // namespace dvc
