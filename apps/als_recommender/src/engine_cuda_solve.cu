// The CUDA engine's solve: the views and slices the batched posv takes, its kernels prepared ahead of
// the first iteration, and the solutions scattered back into the factor rows.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <iomanip>
#include <sstream>
#include <vector>

#include "engine_cuda_kernels.hpp"
#include "tiled_cholesky.hpp"

namespace als::cuda_engine {

namespace {
__global__ void scatter_solutions_kernel(const float* b, const int* info, Layout layout, int s, std::int64_t count, float* out) {
    const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= count * s) return;
    const std::int64_t k = e / s;
    const int i = int(e % s);
    out[e] = info[k] == 0 ? b[layout.offset(k, i, 0, s, 1)] : 0.f;
}

__global__ void count_failed_kernel(const int* info, std::int64_t count, unsigned long long* failed) {
    const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < count && info[k] != 0) atomicAdd(failed, 1ull);
}
__global__ void merge_info_kernel(int* info, const int* second, int first_order, std::int64_t count) {
    const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < count && info[k] == 0 && second[k] != 0) info[k] = second[k] + first_order;
}
}  // namespace

void launch_merge_info(int* info, const int* second, int first_order, std::int64_t count, cudaStream_t stream) {
    if (count <= 0) return;
    merge_info_kernel<<<unsigned((count + 255) / 256), 256, 0, stream>>>(info, second, first_order, count);
    check(cudaGetLastError(), "merge_info_kernel");
}

void launch_scatter_solutions(const float* b, const int* info, Layout layout, int s, std::int64_t count, float* out, cudaStream_t stream) {
    const std::int64_t elements = count * s;
    if (elements <= 0) return;
    scatter_solutions_kernel<<<unsigned((elements + 255) / 256), 256, 0, stream>>>(b, info, layout, s, count, out);
    check(cudaGetLastError(), "scatter_solutions_kernel");
}

void launch_count_failed(const int* info, std::int64_t count, unsigned long long* failed, cudaStream_t stream) {
    if (count <= 0) return;
    count_failed_kernel<<<unsigned((count + 255) / 256), 256, 0, stream>>>(info, count, failed);
    check(cudaGetLastError(), "count_failed_kernel");
}

std::pair<batchsolve::BatchView<float>, batchsolve::BatchView<float>> system_views(const EngineSettings& es, float* a, float* b,
                                                                                     std::int64_t count) {
    const int s = es.width, n = int(count);
    using V = batchsolve::BatchView<float>;
    switch (es.layout) {
        case SystemLayout::interleaved: return {V::interleaved(a, s, s, n), V::interleaved(b, s, 1, n)};
        case SystemLayout::chunked: return {V::chunked(a, s, s, n, es.chunk_size), V::chunked(b, s, 1, n, es.chunk_size)};
        default: return {V::column_major(a, s, s, n), V::column_major(b, s, 1, n)};
    }
}

std::pair<std::int64_t, std::int64_t> slice_counts(std::int64_t rows, const EngineSettings& es) {
    const std::int64_t per = rows_per_slice(rows, es.width, es.slice_bytes);
    return {std::min(per, rows), rows > per ? rows % per : 0};
}

namespace {

// A kernel found in the disk cache answers in milliseconds ("disk cache 0.00 s" in the logs of
// results/2026-12-03-h200-6296ebe-als-cold), a compile in no less than 0.05 s (posv s n = 64 at the
// 26,744-row count there): after the first kernel is ready, the others get this long to come from
// the cache before slices start on the first one's (so that a warm run solves with the table's
// kernels); it is set-up time of every cold run (0.2 s cost k64-cold 0.24 s of engine set-up).
constexpr double kCachedKernelGraceSeconds = 0.05;

batchsolve::LayoutKind layout_kind(const EngineSettings& es) {
    switch (es.layout) {
        case SystemLayout::interleaved: return batchsolve::LayoutKind::interleaved;
        case SystemLayout::chunked: return batchsolve::LayoutKind::chunked_interleaved;
        default: return batchsolve::LayoutKind::column_major;
    }
}

std::string seconds_text(double s) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(2) << s << " s";
    return o.str();
}

}  // namespace

// What the compile threads and the engine share: a thread may outlive the engine (the process ends
// after the model is written without waiting for a compile nobody needs any more).
struct SolverKernels::Shared {
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<Job> jobs;
};

SolverKernels::SolverKernels() : shared_(std::make_shared<Shared>()) {}

void SolverKernels::start(const EngineSettings& es, const std::vector<std::int64_t>& side_rows, batchsolve::Context& ctx) {
    if (es.solve_kernel != SolveKernel::posv) return;  // vbatched and fused run no generated posv kernels
    es_ = es;
    int major = 0, minor = 0;
    check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, es.device), "cudaDeviceGetAttribute");
    check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, es.device), "cudaDeviceGetAttribute");
    arch_ = major * 10 + minor;
    std::vector<std::int64_t> counts;
    for (std::int64_t rows : side_rows) {
        const auto [full, rest] = slice_counts(rows, es);
        for (std::int64_t count : {full, rest})
            if (count > 0 && std::find(counts.begin(), counts.end(), count) == counts.end()) counts.push_back(count);
    }
    std::unique_lock<std::mutex> lock(shared_->mutex);
    for (std::int64_t count : counts) {
        if (std::any_of(shared_->jobs.begin(), shared_->jobs.end(), [&](const Job& j) { return j.count == count; })) continue;
        const auto views = system_views(es, nullptr, nullptr, count);
        const batchsolve::BatchView<const float> shape(views.first);
        // The workspace the call takes (layout conversions), reserved now rather than in the first iteration.
        ctx.workspace(batchsolve::workspace_bytes<float>(batchsolve::Routine::posv, batchsolve::Uplo::lower, shape, 1, ctx));
        Job job;
        job.count = count;
        job.table_config = batchsolve::tuned_config("posv", batchsolve::Precision::s, layout_kind(es), es.width, arch_, int(count)).config;
        job.started = std::chrono::steady_clock::now();
        shared_->jobs.push_back(job);
        const std::size_t index = shared_->jobs.size() - 1;
        batchsolve::KernelCase c;
        c.routine = batchsolve::Routine::posv, c.precision = batchsolve::Precision::s, c.layout = layout_kind(es);
        c.n = es.width, c.count = int(count), c.chunk_size = es.layout == SystemLayout::chunked ? es.chunk_size : 0;
        // Compiled into the disk cache without the GPU (nothing of the device touched: the thread may
        // still run while the engine releases it); loaded by the engine's context on first use.
        std::thread([shared = shared_, index, c, arch = arch_] {
            State state = State::ready;
            std::string note;
            try {
                const batchsolve::WarmUpReport r = batchsolve::warm_up_for_arch({c}, arch, 1);
                if (r.without_kernels > 0) state = State::none;
                else if (!r.problems.empty()) state = State::failed, note = r.problems.front();
                else note = r.already_cached > 0 ? "disk cache" : "compiled";
            } catch (const std::exception& e) {
                state = State::failed, note = e.what();  // e.g. no disk cache: the engine's first call compiles it
            }
            std::lock_guard<std::mutex> g(shared->mutex);
            Job& j = shared->jobs[index];
            j.state = state, j.note = note;
            j.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - j.started).count();
            shared->changed.notify_all();
        }).detach();
    }
}

std::string SolverKernels::wait_until_runnable(batchsolve::Context& ctx, bool stand_in) {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    auto& jobs = shared_->jobs;
    if (jobs.empty()) return "no generated solver kernels";
    const auto all_finished = [&] { return std::all_of(jobs.begin(), jobs.end(), [](const Job& j) { return j.state != State::running; }); };
    const auto any_ready = [&] { return std::any_of(jobs.begin(), jobs.end(), [](const Job& j) { return j.state == State::ready; }); };
    // Layouts other than column-major: a kernel serves only its own count's offsets, so every slice
    // count waits for its own (compiled in parallel). So does a process that may end before a
    // compile does without the quick exit of `als train` (a thread still in NVRTC at the static
    // destructors): only the set-up of als train's engine (start_cuda_warmup) lets a kernel stand in.
    if (!stand_in || es_.layout != SystemLayout::column_major) {
        shared_->changed.wait(lock, all_finished);
    } else if (stand_in_ < 0) {
        shared_->changed.wait(lock, [&] { return any_ready() || all_finished(); });
        const auto first_done = std::chrono::steady_clock::now();
        shared_->changed.wait_until(lock, first_done + std::chrono::duration<double>(kCachedKernelGraceSeconds), all_finished);
    }
    // The kernel that serves the slices whose own kernel is not ready: the first ready one.
    for (std::size_t i = 0; i < jobs.size() && stand_in_ < 0; ++i)
        if (jobs[i].state == State::ready) stand_in_ = int(i);
    std::ostringstream o;
    o << jobs.size() << " posv kernel" << (jobs.size() == 1 ? "" : "s") << " (";
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const Job& j = jobs[i];
        o << (i ? "; " : "") << "count " << j.count << ": ";
        if (j.state == State::running) o << "compiling beside the run, the count " << jobs[std::size_t(std::max(stand_in_, 0))].count << " kernel meanwhile";
        else if (j.state == State::ready) o << j.note << " " << seconds_text(j.seconds);
        else if (j.state == State::none) o << "cuSOLVER";
        else o << "not prepared: " << j.note;
    }
    o << ")";
    lock.unlock();
    // Load the ready kernels into the context now rather than in the first iteration.
    for (std::size_t i = 0; i < jobs.size(); ++i) load_if_ready(i, ctx);
    return o.str();
}

bool SolverKernels::load_if_ready(std::size_t index, batchsolve::Context& ctx) {
    Job* job = nullptr;
    {
        std::lock_guard<std::mutex> g(shared_->mutex);
        job = &shared_->jobs[index];
        if (job->state == State::running) return false;
    }
    if (!job->loaded) {
        const auto views = system_views(es_, nullptr, nullptr, job->count);
        batchsolve::prepare_kernel<float>("posv", batchsolve::Uplo::lower, views.first, 1, ctx);
        job->loaded = true;
    }
    return true;
}

void SolverKernels::posv(const batchsolve::BatchView<float>& a, const batchsolve::BatchView<float>& b, int* info, std::int64_t count,
                         batchsolve::Context& ctx) {
    std::size_t index = 0;
    std::size_t jobs = 0;
    {
        std::lock_guard<std::mutex> g(shared_->mutex);
        jobs = shared_->jobs.size();
        while (index < jobs && shared_->jobs[index].count != count) ++index;
    }
    // The table's kernel once it is ready (or a count nobody prepared: the library compiles it now).
    if (index == jobs || stand_in_ < 0 || load_if_ready(index, ctx)) {
        batchsolve::posv_batched(batchsolve::Uplo::lower, a, b, info, ctx);
        return;
    }
    const batchsolve::CholeskyConfig config = batchsolve::parse_config(shared_->jobs[std::size_t(stand_in_)].table_config);
    if (!batchsolve::config_problem<float>(batchsolve::Routine::posv, batchsolve::Uplo::lower, batchsolve::BatchView<const float>(a), 1, config).empty()) {
        batchsolve::posv_batched(batchsolve::Uplo::lower, a, b, info, ctx);  // the stand-in cannot run it: the table's kernel, waited for
        return;
    }
    ++stand_in_calls_;
    batchsolve::posv_batched(batchsolve::Uplo::lower, a, b, info, config, ctx);
}

std::string SolverKernels::notes() const {
    std::lock_guard<std::mutex> g(shared_->mutex);
    if (stand_in_calls_ == 0) return "";
    std::ostringstream o;
    o << stand_in_calls_ << " slice solve" << (stand_in_calls_ == 1 ? "" : "s") << " ran the count "
      << shared_->jobs[std::size_t(stand_in_)].count << " posv kernel while the table's own compiled (results agree to rounding)";
    for (const Job& j : shared_->jobs)
        if (j.state == State::running)
            o << "; count " << j.count << "'s kernel still compiling at the end ("
              << seconds_text(std::chrono::duration<double>(std::chrono::steady_clock::now() - j.started).count())
              << " in), not cached: batchsolve-warmup --routines posv --precisions s --n " << es_.width << " --batch " << j.count
              << " caches it";
    return o.str();
}

// ---- the tiled solve (SolveKernel::tiled, tiled_prefetch; tiled_cholesky.hpp) ---------------------------
namespace {
__device__ __forceinline__ void tiled_cp_async_16(float* shared_dst, const float* global_src) {
    const unsigned dst = unsigned(__cvta_generic_to_shared(shared_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global_src));
}
__device__ __forceinline__ void tiled_cp_async_4(float* shared_dst, const float* global_src) {
    const unsigned dst = unsigned(__cvta_generic_to_shared(shared_dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(global_src));
}

// Entry (i, j) of a tile for tiled::load_tile: from global memory in the engine's layout, or from a
// prefetch staging slot ([(2 c + r / 4) * slots + slot] float4, r and c within the tile).
struct GlobalEntry {
    const float* a;
    Layout::Entries e;
    int s;
    __device__ float operator()(int i, int j) const { return a[e.base + (std::int64_t(j) * s + i) * e.stride]; }
};
struct StagedEntry {
    const float* staging;
    int i0, j0, slots, slot;
    __device__ float operator()(int i, int j) const {
        const int r = i - i0, c = j - j0;
        return staging[((2 * c + r / 4) * slots + slot) * 4 + r % 4];
    }
};

// Shared floats before the prefetch staging area (a multiple of 4: the staging holds float4).
__host__ __device__ inline int tiled_staging_offset(int nt) { return (tiled::shared_floats(nt) + 3) / 4 * 4; }

// One system per thread block and step of the block's loop over systems k = blockIdx.x, + gridDim.x,
// ...: the plain form is launched with one block per system (its loop runs once), kPrefetch with as
// many blocks as are resident, each gathering its next system's tiles into shared memory by cp.async
// while it solves the current one (each thread its own tiles only: no barrier guards the staging
// area, the thread's cp.async.wait_all does), so that no block waits on a cold read of 128 KB between
// systems. The lower triangle of each system is read (i >= j), the solution written over b, info[k]
// as LAPACK's (a failed system's b is left as it was).
template <bool kPrefetch>
__global__ void __launch_bounds__(tiled::kMaxThreads, 1) tiled_solve_kernel(const float* a, float* b, int* info, Layout layout, int s, std::int64_t count) {
    using namespace tiled;
    constexpr int T = tiled::kTile;
    extern __shared__ __align__(16) float tiled_shared[];
    const int nt = tiles_for(s), t = int(threadIdx.x), threads = int(blockDim.x);
    const Shared sh = shared_parts(tiled_shared, nt);
    // kPrefetch: 16 float4 per tile, [(2 c + h) * slots + slot]: slot t the thread's own tile, slot
    // threads + t (t < nt) its tile (t, 0) of the prologue.
    float* staging = tiled_shared + tiled_staging_offset(nt);
    const int slots = threads + nt;
    int I = 0, J = 0;
    const bool has = tile_of(t, nt, I, J);
    const bool column0 = t < nt;  // the prologue's tile (t, 0) and b_t
    // The float4 path: every column of a tile starts 16-byte aligned (column-major, s a multiple of 4).
    const bool vector = s % 4 == 0 && layout.chunk == 0;
    float ta[T][T];

    // Tile (ti, tj) of system k into staging slot `slot` (kPrefetch); entries outside the system are not
    // copied (load_tile fills them), nor are a diagonal tile's upper ones read.
    auto stage = [&](std::int64_t k, int ti, int tj, int slot) {
        const Layout::Entries e = layout.entries(k, s, s);
#pragma unroll
        for (int c = 0; c < T; ++c)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int j = tj * T + c, i0 = ti * T + 4 * h;
                float* dst = staging + ((2 * c + h) * slots + slot) * 4;
                if (j >= s) continue;
                if (vector && i0 + 4 <= s) {
                    tiled_cp_async_16(dst, a + e.base + std::int64_t(j) * s + i0);
                } else {
                    for (int x = 0; x < 4; ++x)
                        if (i0 + x < s) tiled_cp_async_4(dst + x, a + e.base + (std::int64_t(j) * s + i0 + x) * e.stride);
                }
            }
    };
    auto issue = [&](std::int64_t k) {
        if (k >= count) return;
        if (has) stage(k, I, J, t);
        if (column0) stage(k, t, 0, threads + t);
        asm volatile("cp.async.commit_group;\n" ::);
    };
    // Tile (ti, tj) of system k into ta: from staging slot `slot` (kPrefetch) or global memory.
    auto load = [&](std::int64_t k, int ti, int tj, int slot) {
        if (kPrefetch) {
            load_tile(ta, ti, tj, s, StagedEntry{staging, ti * T, tj * T, slots, slot});
            return;
        }
        const Layout::Entries e = layout.entries(k, s, s);
        if (vector && (ti + 1) * T <= s) {
#pragma unroll
            for (int c = 0; c < T; ++c) {
                const float4* col = reinterpret_cast<const float4*>(a + e.base + std::int64_t(tj * T + c) * s + ti * T);
                const float4 lo = __ldg(col), hi = __ldg(col + 1);
                const float v[T] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
                for (int r = 0; r < T; ++r) ta[r][c] = (ti != tj || r >= c) ? v[r] : 0.f;
            }
        } else {
            load_tile(ta, ti, tj, s, GlobalEntry{a, e, s});
        }
    };
    if (kPrefetch) issue(blockIdx.x);

    for (std::int64_t k = blockIdx.x; k < count; k += gridDim.x) {
        const Layout::Entries eb = layout.entries(k, s, 1);
        if (kPrefetch) asm volatile("cp.async.wait_all;\n" ::: "memory");
        // Prologue: tile column 0 through threads 0..nt-1 (thread 0 its diagonal tile), into panel 0;
        // the other threads load their own tiles meanwhile, threads 0..nt-1 theirs after it.
        if (column0) {
            load(k, t, 0, threads + t);
#pragma unroll
            for (int r = 0; r < T; ++r) {
                const int i = t * T + r;
                sh.b[i] = i < s ? b[eb.base + std::int64_t(i) * eb.stride] : 0.f;
            }
        } else if (has) {
            load(k, I, J, t);
        }
        __syncthreads();
        if (t == 0) *sh.flag = factor_diagonal(ta, 0, sh.diag0, sh.b);
        __syncthreads();
        const bool ok = *sh.flag == 0;
        if (ok && column0 && t > 0) factor_panel_tile(ta, t, 0, nt, sh.panel0, sh.diag0, sh.b);
        if (column0 && has) load(k, I, J, t);
        __syncthreads();
        // Every staged value is in registers (the loads came before the barrier): the staging area
        // takes the next system now, behind this one's whole factorisation.
        if (kPrefetch) issue(k + gridDim.x);
        for (int p = 0; ok && p + 1 < nt; ++p) {
            if (*sh.flag != 0) break;  // every thread read it after the same barrier
            if (p > 0) {
                if (has && J == p && I > p) factor_panel_tile(ta, I, p, nt, sh.panel, sh.diag, sh.b);
                __syncthreads();
            }
            if (has && J > p) update_tile(ta, I, J, nt, p == 0 ? sh.panel0 : sh.panel);
            if (has && I == p + 1 && J == p + 1)
                if (const int f = factor_diagonal(ta, p + 1, sh.diag, sh.b)) *sh.flag = (p + 1) * T + f;
            __syncthreads();
        }
        const int failed = *sh.flag;
        if (failed == 0) {
            for (int p = nt - 1; p >= 1; --p) {
                if (has && I == p && J == p) {
                    backward_diagonal(ta, p, sh.b);
                    backward_tile0(sh.panel0, nt, p, sh.b);
                }
                __syncthreads();
                if (has && I == p && J < p) backward_tile(ta, p, J, sh.b);
                __syncthreads();
            }
            if (t == 0) backward_diagonal0(sh.diag0, sh.b);
            __syncthreads();
            for (int i = t; i < s; i += threads) b[eb.base + std::int64_t(i) * eb.stride] = sh.b[i];
        }
        if (t == 0) info[k] = failed;
        __syncthreads();  // the shared arrays (and the flag) are the next system's
    }
}
}  // namespace

std::size_t tiled_shared_bytes(int s, bool prefetch) {
    const int nt = tiled::tiles_for(s);
    const std::size_t slots = std::size_t(tiled::threads_for(s)) + std::size_t(nt);  // own tiles and tile column 0
    return (std::size_t(tiled_staging_offset(nt)) + (prefetch ? slots * tiled::kTile * tiled::kTile : 0)) * sizeof(float);
}

void launch_tiled_solve(const float* a, float* b, int* info, Layout layout, int s, std::int64_t count, bool prefetch, cudaStream_t stream) {
    if (count <= 0) return;
    if (s < 1 || s > tiled::kMaxWidth)
        throw Error("--solve-kernel tiled takes widths 1.." + std::to_string(tiled::kMaxWidth) + " (got " + std::to_string(s) + ")");
    const int threads = tiled::threads_for(s);
    const std::size_t bytes = tiled_shared_bytes(s, prefetch);
    void (*kernel)(const float*, float*, int*, Layout, int, std::int64_t) = prefetch ? tiled_solve_kernel<true> : tiled_solve_kernel<false>;
    if (bytes > (std::size_t(48) << 10))
        check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)), "cudaFuncSetAttribute(tiled_solve_kernel)");
    std::int64_t blocks = count;
    if (prefetch) {
        // As many blocks as fit at once: each loops over systems, so a block never starts cold after the first.
        int device = 0, sms = 0, per_sm = 0;
        check(cudaGetDevice(&device), "cudaGetDevice");
        check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
        check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes), "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        blocks = std::min<std::int64_t>(count, std::int64_t(std::max(1, per_sm)) * sms);
    }
    kernel<<<unsigned(blocks), unsigned(threads), bytes, stream>>>(a, b, info, layout, s, count);
    check(cudaGetLastError(), prefetch ? "tiled_solve_kernel<prefetch>" : "tiled_solve_kernel");
}

}  // namespace als::cuda_engine
