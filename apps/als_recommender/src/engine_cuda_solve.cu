// The CUDA engine's solve: the views and slices the batched posv takes, its kernels prepared ahead of
// the first iteration, and the solutions scattered back into the factor rows.
#include <cuda_runtime.h>

#include <algorithm>
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
}  // namespace

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

void prepare_solver_kernels(const EngineSettings& es, std::int64_t users, std::int64_t items, batchsolve::Context& ctx,
                            std::string* summary) {
    int kernels = 0, cached = 0;
    double compile_s = 0;
    std::vector<std::int64_t> done;
    for (std::int64_t rows : {users, items}) {
        if (es.solve_kernel == SolveKernel::vbatched) break;  // no generated posv kernels to prepare
        const auto [full, rest] = slice_counts(rows, es);
        for (std::int64_t count : {full, rest}) {
            if (count <= 0 || std::find(done.begin(), done.end(), count) != done.end()) continue;
            done.push_back(count);
            const auto views = system_views(es, nullptr, nullptr, count);
            const batchsolve::KernelReport r = batchsolve::prepare_kernel<float>("posv", batchsolve::Uplo::lower, views.first, 1, ctx);
            // The workspace the call takes (layout conversions), reserved now rather than in the first iteration.
            ctx.workspace(batchsolve::workspace_bytes<float>(batchsolve::Routine::posv, batchsolve::Uplo::lower,
                                                             batchsolve::BatchView<const float>(views.first), 1, ctx));
            if (!r.supported) continue;
            ++kernels, cached += r.from_disk_cache, compile_s += r.compile_seconds;
        }
    }
    if (summary) {
        std::ostringstream o;
        o << kernels << " solver kernel" << (kernels == 1 ? "" : "s") << " (" << cached << " from the disk cache";
        if (kernels > cached) o << ", " << kernels - cached << " compiled in " << std::fixed << std::setprecision(2) << compile_s << " s";
        o << ")";
        *summary = o.str();
    }
}

}  // namespace als::cuda_engine
