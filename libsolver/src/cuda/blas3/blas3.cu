// The CUDA backend of the variable-size BLAS-3 routines: the per-problem argument check (one kernel
// that fills info and reduces the maxima of the valid problems) and the launcher of the one generated
// GEMM kernel (src/codegen/blas3/gemm.*), compiled by NVRTC on first use and cached per device.
// The GEMM path uses neither ctx.workspace() nor the context's scratch (TRSM keeps its inverted blocks
// in the workspace while it calls the GEMM); only the checked level's reduction uses the scratch.
#include <algorithm>
#include <complex>
#include <string>
#include <tuple>

#include "../../core/blas3_check.hpp"
#include "../jit/jit.hpp"
#include "../jit/kernel_cache.hpp"
#include "../resources.hpp"
#include "codegen/blas3/gemm.hpp"

namespace batchsolve::cuda_backend {

using blas3_detail::GemmExtras;
using blas3_detail::Operand;
using blas3_detail::ProblemChecks;
using blas3_detail::VSize;
using detail::CudaResources;
using detail::DeviceGuard;

namespace {

// The grid's z extent (CUDA's limit); larger batches loop inside the kernels.
constexpr int kMaxGridZ = 65535;
constexpr int kCheckThreads = 256;

// summary (device, optional): max[3], min[3], invalid, as blas3_detail::SizeSummary.
__global__ void check_problems_kernel(ProblemChecks checks, int batch, int* info, int* summary) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < batch; i += gridDim.x * blockDim.x) {
        int sizes[3];
        const int code = blas3_detail::check_problem(checks, i, sizes);
        info[i] = code;
        if (summary == nullptr) continue;
        if (code != 0) {
            atomicAdd(&summary[6], 1);
            continue;
        }
        for (int s = 0; s < 3; ++s) {
            atomicMax(&summary[s], sizes[s]);
            atomicMin(&summary[3 + s], sizes[s]);
        }
    }
}

codegen::blas3::GemmOperand gemm_operand(Operand op) { return static_cast<codegen::blas3::GemmOperand>(static_cast<int>(op)); }
codegen::blas3::GemmPart gemm_part(blas3_detail::Part part) { return static_cast<codegen::blas3::GemmPart>(static_cast<int>(part)); }

}  // namespace

void check_vbatched(const ProblemChecks& checks, int batch, int* info, blas3_detail::SizeSummary* summary,
                    Context& ctx) {
    static_assert(sizeof(blas3_detail::SizeSummary) == 7 * sizeof(int), "SizeSummary is max[3], min[3], invalid");
    CudaResources& r = detail::resources_of(ctx, "vbatched BLAS-3 argument check");
    DeviceGuard guard(r.device_);
    r.require_device_memory(info, "vbatched BLAS-3 argument check", "info");
    int* device_summary = nullptr;
    if (summary != nullptr) {
        const blas3_detail::SizeSummary initial;
        device_summary = static_cast<int*>(r.scratch(sizeof initial));
        BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(device_summary, &initial, sizeof initial, cudaMemcpyHostToDevice, r.stream()));
    }
    if (batch > 0) {
        const int blocks = std::min((batch + kCheckThreads - 1) / kCheckThreads, 4 * std::max(r.sm_count_, 1) * 8);
        check_problems_kernel<<<blocks, kCheckThreads, 0, r.stream()>>>(checks, batch, info, device_summary);
        BATCHSOLVE_LAUNCH_CHECK("check_problems_kernel");
    }
    if (summary != nullptr) {
        BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(summary, device_summary, sizeof *summary, cudaMemcpyDeviceToHost, r.stream()));
        BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r.stream()));
    }
}

template <class T>
BATCHSOLVE_BLAS3_GEMM(T) {
    if (batch <= 0 || max_m <= 0 || max_n <= 0) return;
    CudaResources& r = detail::resources_of(ctx, "gemm_vbatched");
    DeviceGuard guard(r.device_);
    const codegen::blas3::GemmFamily& family = codegen::blas3::gemm_family();
    codegen::blas3::GemmSpec spec;
    spec.precision = precision_v<T>;
    spec.op_a = gemm_operand(op_a);
    spec.op_b = gemm_operand(op_b);
    spec.part = gemm_part(extras.part);
    spec.real_diagonal = extras.real_diagonal && is_complex_v<T>;
    spec.config = extras.config ? *extras.config
                                : family.default_config({spec.precision, max_m, max_n, max_k,
                                                         spec.part != codegen::blas3::GemmPart::full,
                                                         r.cc_major_ * 10 + r.cc_minor_});
    // the uniform-size path: sizes that are constants of the call and fill whole tiles
    const bool constant_sizes = m.values == nullptr && n.values == nullptr && k.values == nullptr;
    spec.full_tiles = constant_sizes && m.limit % spec.config.blk_m == 0 && n.limit % spec.config.blk_n == 0 &&
                      k.limit % spec.config.blk_k == 0;
    const std::string problem = family.can_implement(spec);
    if (!problem.empty()) {
        const std::size_t colon = problem.find(':');
        throw InvalidArgument("gemm_vbatched", problem.substr(0, colon), problem.substr(colon + 2));
    }
    const codegen::KernelResources resources = family.resources(spec);
    const long long grid_x = (max_m + spec.config.blk_m - 1) / spec.config.blk_m;
    const long long grid_y = (max_n + spec.config.blk_n - 1) / spec.config.blk_n;
    if (grid_y > 65535)
        throw InvalidArgument("gemm_vbatched", "max_n", "max_n / blk_n within the grid's y limit 65535");
    const int grid_z = std::min(batch, kMaxGridZ);
    // The one kernel cache (jit/kernel_cache.hpp): the name spells out every field of the spec, so the
    // text is generated once per process and a timed loop only looks the kernel up.
    const jit::LoadedKernel& kernel = jit::family_kernel(family, spec, r.device_);

    const blas3_detail::Offsets& o = extras.offsets;
    int batch_ = batch;
    const int* m_v = m.values; int m_sub = m.subtract, m_lim = m.limit;
    const int* n_v = n.values; int n_sub = n.subtract, n_lim = n.limit;
    const int* k_v = k.values; int k_sub = k.subtract, k_lim = k.limit;
    int a_row = o.a_row, a_col = o.a_col, b_row = o.b_row, b_col = o.b_col, c_row = o.c_row, c_col = o.c_col;
    const int* skip = extras.skip;
    void* args[] = {&batch_, &m_v, &m_sub, &m_lim, &n_v, &n_sub, &n_lim, &k_v, &k_sub, &k_lim,
                    &alpha, &a, &lda, &a_row, &a_col, &b, &ldb, &b_row, &b_col,
                    &beta, &c, &ldc, &c_row, &c_col, &skip};
    BATCHSOLVE_CUDA_CHECK(cudaLaunchKernel(static_cast<const void*>(kernel.function),
                                           dim3(unsigned(grid_x), unsigned(grid_y), unsigned(grid_z)),
                                           dim3(unsigned(resources.threads_per_block)), args,
                                           resources.shared_bytes, r.stream()));
    BATCHSOLVE_LAUNCH_CHECK("gemm_vbatched (generated)");
}

// SYRK/HERK: C's triangle = alpha op(A) op(A)^T|H + beta C through the GEMM, the thread blocks of the
// other triangle exiting at once; SYR2K/HER2K: the same twice, the second adding alpha' op(B) op(A)^T|H.
template <class T>
BATCHSOLVE_BLAS3_RANK_K(T) {
    const bool herm = hermitian && is_complex_v<T>;
    const Operand left = trans == Op::no_trans ? Operand::no_trans : herm ? Operand::conj_trans : Operand::trans;
    const Operand right = trans == Op::no_trans ? (herm ? Operand::conj_trans : Operand::trans) : Operand::no_trans;
    GemmExtras extras;
    extras.part = uplo == Uplo::lower ? blas3_detail::Part::lower : blas3_detail::Part::upper;
    extras.real_diagonal = herm;
    extras.skip = skip;
    extras.config = config;
    const bool two = b != nullptr;
    gemm_vbatched<T>(left, right, n, n, k, alpha, a, lda, two ? b : a, two ? ldb : lda, beta, c, ldc, max_n, max_n,
                     max_k, batch, extras, ctx);
    if (two) {
        T alpha2 = alpha;
        if constexpr (is_complex_v<T>)
            if (herm) alpha2 = std::conj(alpha);
        gemm_vbatched<T>(left, right, n, n, k, alpha2, b, ldb, a, lda, T(1), c, ldc, max_n, max_n, max_k, batch,
                         extras, ctx);
    }
}

// SYMM/HEMM: the GEMM with the symmetric (Hermitian) operand read from its stored triangle.
template <class T>
BATCHSOLVE_BLAS3_SYMMETRIC_MM(T) {
    const bool herm = hermitian && is_complex_v<T>;
    const Operand full = herm ? (uplo == Uplo::lower ? Operand::hermitian_lower : Operand::hermitian_upper)
                              : (uplo == Uplo::lower ? Operand::symmetric_lower : Operand::symmetric_upper);
    GemmExtras extras;
    extras.skip = skip;
    if (side == Side::left)
        gemm_vbatched<T>(full, Operand::no_trans, m, n, m, alpha, a, lda, b, ldb, beta, c, ldc, max_m, max_n, max_m,
                         batch, extras, ctx);
    else
        gemm_vbatched<T>(Operand::no_trans, full, m, n, n, alpha, b, ldb, a, lda, beta, c, ldc, max_m, max_n, max_n,
                         batch, extras, ctx);
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_BLAS3_ROUTINES)

}  // namespace batchsolve::cuda_backend
