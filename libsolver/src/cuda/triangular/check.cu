// The per-problem argument check of the checked entry levels on the GPU: one pass over the batch
// writes each problem's info (0 or -p) and the sizes to run (0 for an invalid problem), and reduces
// the largest valid sizes with atomics; the host waits only when it asked for the maxima.
#include <algorithm>
#include <complex>

#include "../../core/triangular_backend.hpp"
#include "../resources.hpp"

namespace batchsolve::cuda_backend {

namespace {

using triangular_detail::CheckSpec;
using triangular_detail::Maxima;

// Threads per block of the check (a grid-stride loop covers any batch).
constexpr int kCheckThreads = 256;
constexpr int kCheckMaxBlocks = 4096;

__global__ void check_problems(bool potrf, bool left, int given_max_m, int given_max_n, const int* m, const int* n,
                               const void* const* a, const int* lda, void* const* b, const int* ldb, int batch,
                               int* info, int* m_run, int* n_run, int* maxima) {
    namespace arg = vbatched_arg;
    int local_m = 0, local_n = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < batch; i += gridDim.x * blockDim.x) {
        int code = 0;
        if (potrf) {
            const int order = m[i];
            if (order < 0 || (given_max_m >= 0 && order > given_max_m)) code = -arg::potrf_n;
            else if (order > 0 && a[i] == nullptr) code = -arg::potrf_a;
            else if (lda[i] < max(1, order)) code = -arg::potrf_lda;
            info[i] = code;
            m_run[i] = code == 0 ? order : 0;
            if (code == 0) local_m = max(local_m, order);
            continue;
        }
        const int rows = m[i], cols = n[i];
        const int order = left ? rows : cols;
        const bool work = rows > 0 && cols > 0;
        if (rows < 0 || (given_max_m >= 0 && rows > given_max_m)) code = -arg::tr_m;
        else if (cols < 0 || (given_max_n >= 0 && cols > given_max_n)) code = -arg::tr_n;
        else if (work && a[i] == nullptr) code = -arg::tr_a;
        else if (lda[i] < max(1, order)) code = -arg::tr_lda;
        else if (work && b[i] == nullptr) code = -arg::tr_b;
        else if (ldb[i] < max(1, rows)) code = -arg::tr_ldb;
        info[i] = code;
        m_run[i] = code == 0 ? rows : 0;
        n_run[i] = code == 0 ? cols : 0;
        if (code == 0) local_m = max(local_m, rows), local_n = max(local_n, cols);
    }
    if (maxima) {
        if (local_m > 0) atomicMax(&maxima[0], local_m);
        if (local_n > 0) atomicMax(&maxima[1], local_n);
    }
}

}  // namespace

template <class T>
BATCHSOLVE_TRIANGULAR_CHECK(T) {
    detail::CudaResources& r = detail::resources_of(ctx, spec.potrf ? "potrf_vbatched" : "trsm_vbatched");
    detail::DeviceGuard guard(r.device_);
    const bool find = spec.given_max_m < 0 || (!spec.potrf && spec.given_max_n < 0);
    int* maxima = find ? static_cast<int*>(r.scratch(2 * sizeof(int))) : nullptr;
    if (find) BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(maxima, 0, 2 * sizeof(int), r.stream()));
    const int blocks = std::max(1, std::min(kCheckMaxBlocks, (batch + kCheckThreads - 1) / kCheckThreads));
    check_problems<<<blocks, kCheckThreads, 0, r.stream()>>>(
        spec.potrf, spec.side == Side::left, spec.given_max_m, spec.given_max_n, m, n,
        reinterpret_cast<const void* const*>(a), lda, reinterpret_cast<void* const*>(b), ldb, batch, info, m_run,
        n_run, maxima);
    BATCHSOLVE_LAUNCH_CHECK("check_problems");
    Maxima found{spec.given_max_m, spec.given_max_n};
    if (find) {
        int host[2] = {0, 0};
        BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(host, maxima, sizeof(host), cudaMemcpyDeviceToHost, r.stream()));
        BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r.stream()));
        if (spec.given_max_m < 0) found.m = host[0];
        if (spec.given_max_n < 0) found.n = host[1];
    }
    if (spec.potrf) found.n = 0;
    return found;
}

BATCHSOLVE_INSTANTIATE_ROUTINE(PRECISIONS, BATCHSOLVE_TRIANGULAR_CHECK, "trmm/trsm/potrf_vbatched")

}  // namespace batchsolve::cuda_backend
