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

}  // namespace als::cuda_engine
