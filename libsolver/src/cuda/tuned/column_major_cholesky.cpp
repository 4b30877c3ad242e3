// Host side of the column-major Cholesky kernels: configuration resolution, kernel lookup (generate,
// compile, cache, shared-memory opt-in) and launch on the context's stream.
#include "column_major_cholesky.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <complex>

#include "../jit/jit.hpp"
#include "../jit/kernel_cache.hpp"
#include "../resources.hpp"
#include "codegen/cholesky/families.hpp"
#include "codegen/cholesky/fused.hpp"
#include "codegen/cholesky/shared_memory.hpp"
#include "../cholesky_cusolver.hpp"
#include "kernel_plan.hpp"

namespace batchsolve::cuda_backend::tuned {

namespace {

using detail::CudaResources;
using detail::DeviceGuard;

// The call's kernel through the kernel cache, keyed by family and kernel name (the name encodes the
// whole spec, so a hot call neither generates nor hashes text; the configuration's text joins the disk
// key); on first load its block size is checked and shared memory above 48 KB opted in to.
const jit::LoadedKernel& lookup(const ColumnMajorSpec& spec, const ColumnMajorShape& shape, CudaResources& r,
                                const char* routine) {
    if (const jit::LoadedKernel* k = jit::find_kernel(codegen::cache_family(family_of(spec)),
                                                      column_major_kernel_name(spec), r.device_))
        return *k;
    // Refused on this device before any text is generated (and before a CUBIN from disk is used).
    if (shape.shared_bytes > r.shared_per_block_optin_)
        throw InvalidArgument(routine, "config.matrices_per_block",
                              std::to_string(shape.shared_bytes) + " bytes of shared memory per block exceed the " +
                                  std::to_string(r.shared_per_block_optin_) + " this device allows");
    jit::KernelRequest request = cache_request(spec);
    request.on_load = [&shape, &r, routine](jit::LoadedKernel& k) {
        if (k.max_threads < shape.block_threads)
            throw InvalidArgument(routine, "config.matrices_per_block",
                                  "a block of " + std::to_string(shape.block_threads) + " threads; kernel " + k.name +
                                      " allows at most " + std::to_string(k.max_threads));
        if (shape.shared_bytes > 48 * 1024) {
            // Above 48 KB a kernel must opt in; cudaKernel_t handles take the per-device setter.
            const cudaError_t e = cudaKernelSetAttributeForDevice(static_cast<cudaKernel_t>(k.function),
                                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                  static_cast<int>(shape.shared_bytes), r.device_);
            if (e != cudaSuccess) detail::throw_cuda_error(("cudaKernelSetAttributeForDevice(" + k.name + ")").c_str(), e);
        }
    };
    return jit::cached_kernel(request.key, r.device_, request.generate, request.on_load);
}

template <class T>
void check_layout(const BatchView<T>& v, const char* routine, const char* name) {
    if (v.layout != LayoutKind::column_major && v.layout != LayoutKind::pointer_array)
        throw InvalidArgument(routine, std::string(name) + ".layout",
                              "column_major or pointer_array for the column-major kernels");
    // the orders column_major_supports promises (n = 129..256 may still run cuSOLVER: runs_cusolver)
    if (v.rows > codegen::cholesky::shared_memory_max_n)
        throw InvalidArgument(routine, std::string(name) + ".rows",
                              "at most " + std::to_string(codegen::cholesky::shared_memory_max_n) +
                                  " for the column-major launchers (got " + std::to_string(v.rows) + ")");
}

template <class T>
void require_on_device(CudaResources& r, const BatchView<T>& v, const char* routine, const char* name) {
    if (v.layout == LayoutKind::pointer_array) r.require_device_memory(v.pointers, routine, std::string(name) + ".pointers");
    else r.require_device_memory(v.data, routine, std::string(name) + ".data");
}

// Arguments of one batch: the base pointer (strided) or the pointer array, and the stride.
template <class T>
struct BatchArgs {
    T* data = nullptr;
    T* const* pointers = nullptr;
    long long stride = 0;
    int ld = 0;
};
template <class T>
BatchArgs<T> batch_args(const BatchView<T>& v) {
    BatchArgs<T> b;
    if (v.layout == LayoutKind::pointer_array) b.pointers = v.pointers;
    else b.data = v.data, b.stride = v.stride;
    b.ld = v.ld;
    return b;
}

// n = 129..256 reaches the column-major launchers (column_major_supports) but runs cuSOLVER, as every
// n > 128 did before the shared-memory family, unless the configuration (the caller's, or a measured
// tuning-table entry) selects that family and one matrix of this precision fits a block's shared
// memory (not d n > 170, z n > 120, ...). The family's defaults are not the default there: on the
// H200 (results/2026-11-27-h200-b024f08-small-cholesky-vs-cusolverdx) they were slower than cuSOLVER (s potrf n = 200 16.2 ms vs 10.6, d
// n = 160 13.1 vs 9.3).
bool runs_cusolver(int n, Precision p, const CholeskyConfig& config) {
    return n > column_major_max_n &&
           (!codegen::cholesky::is_shared_memory_config(config) || n > codegen::cholesky::shared_memory_largest_n(p));
}

// A kernel compiled for lda = n (config.compile_time_ld) takes only matrices stored so; any other lda
// runs the same configuration with lda at run time.
template <class T>
CholeskyConfig ld_checked(const CholeskyConfig& config, const BatchView<T>& a) {
    CholeskyConfig c = config;
    if (c.compile_time_ld && a.ld != a.rows) c.compile_time_ld = false;
    return c;
}

unsigned blocks_for(long long items, int per_block) { return static_cast<unsigned>((items + per_block - 1) / per_block); }

}  // namespace

bool column_major_supports(LayoutKind layout, int n) {
    return (layout == LayoutKind::column_major || layout == LayoutKind::pointer_array) && n >= 0 &&
           n <= codegen::cholesky::shared_memory_max_n;
}

bool column_major_plan_cusolver(Precision precision, int n, int nrhs, int count, const CholeskyConfig& config,
                                std::size_t& workspace_bytes) {
    if (!runs_cusolver(n, precision, config) || n > codegen::cholesky::shared_memory_max_n) return false;
    workspace_bytes = cusolver_workspace_bytes(n, nrhs, count, std::size_t(codegen::element_bytes(precision)));
    return true;
}

ColumnMajorSpec column_major_spec(ColumnMajorRoutine routine, Precision precision, Uplo uplo, int n, int nrhs,
                                  const CholeskyConfig& config) {
    ColumnMajorSpec spec;
    spec.routine = routine;
    spec.precision = precision;
    spec.uplo = uplo;
    spec.n = n;
    spec.nrhs = nrhs;
    spec.config = config;
    const bool shared_memory = codegen::cholesky::is_shared_memory_config(spec.config);
    const bool fused = codegen::cholesky::is_fused_config(spec.config);
    if (fused) {  // the interleaved kernel's fields (fused.hpp); a run-time chunk has no meaning here
        spec.config.chunk_size = 0;
        return spec;
    }
    if (routine == ColumnMajorRoutine::potrs)  // the solve kernel reads neither
        spec.config.compile_time_ld = false, spec.config.lean_addressing = false;
    if (config.nb == 0 && !shared_memory) spec.config.full_unroll = default_column_major_config(routine, precision, n, nrhs).full_unroll;
    if (routine == ColumnMajorRoutine::potrs) {  // fields the solve kernel does not read stay out of its name
        if (spec.config.staged) spec.config.nb = 0;     // the register kernel's steps loaded ahead; no panels staged
        spec.config.full_unroll = false;
        spec.config.rows_per_thread = 0, spec.config.threads_per_row = 0;
        if (spec.config.staged) spec.config.threads_per_block = 0;  // the block is warps x matrices
        else spec.config.matrices_per_block = 0, spec.config.warps_per_matrix = 0;
    }
    if (spec.config.staged) spec.config.full_unroll = false, spec.config.nrhs_block = 1;  // not read by the staged kernel
    if (shared_memory) spec.config.threads_per_block = 0;  // the block is warps x matrices
    // the only order these kernels have; left stays the shared-memory family's mark (shared_memory.hpp)
    // (left also marks the register kernels' warp-synchronous steps: warp_synchronous_steps)
    if (!shared_memory && !warp_synchronous_steps(spec)) spec.config.looking = Looking::right;
    spec.config.chunk_size = 0;
    return spec;
}

ColumnMajorPrepared prepare_column_major(ColumnMajorRoutine routine, Precision precision, Uplo uplo, int n, int nrhs,
                                         const CholeskyConfig& config, Context& ctx) {
    constexpr const char* name = "prepare_kernel (column-major kernels)";
    CudaResources& r = detail::resources_of(ctx, name);
    DeviceGuard guard(r.device_);
    if (runs_cusolver(n, precision, config))
        throw InvalidArgument(name, "n", std::to_string(n) + " runs cuSOLVER with this configuration, not a generated kernel");
    const ColumnMajorSpec spec = column_major_spec(routine, precision, uplo, n, nrhs, config);
    const ColumnMajorShape shape = column_major_shape(spec, name);
    ColumnMajorPrepared p;
    p.kernel = lookup(spec, shape, r, name);
    p.spec = spec;
    p.block_threads = shape.block_threads;
    BATCHSOLVE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &p.blocks_per_sm, static_cast<const void*>(p.kernel.function), shape.block_threads, shape.shared_bytes));
    return p;
}

template <class T>
void potrf_column_major(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig& config, Context& ctx) {
    constexpr const char* routine = "potrf_batched (column-major kernels)";
    CudaResources& r = detail::resources_of(ctx, routine);
    check_layout(a, routine, "a");
    if (a.count == 0) return;
    DeviceGuard guard(r.device_);
    r.require_device_memory(info, routine, "info");
    const cudaStream_t stream = r.stream();
    const int n = a.rows;
    if (n == 0) {
        BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int) * std::size_t(a.count), stream));
        return;
    }
    if (runs_cusolver(n, precision_v<T>, config)) return cusolver_potrf_batched(uplo, a, info, ctx);
    require_on_device(r, a, routine, "a");
    const ColumnMajorSpec spec = column_major_spec(ColumnMajorRoutine::potrf, precision_v<T>, uplo, n, 0, ld_checked(config, a));
    const ColumnMajorShape shape = column_major_shape(spec, routine);
    const jit::LoadedKernel& k = lookup(spec, shape, r, routine);

    BatchArgs<T> A = batch_args(a);
    int count = a.count, zero = 0;
    void* args[] = {&A.data, &A.pointers, &A.stride, &A.ld, &info, &count, &zero};
    jit::launch(k, blocks_for(count, shape.matrices_per_block), 1, shape.block_threads, 1,
                static_cast<unsigned>(shape.shared_bytes), stream, args);
}

template <class T>
void posv_column_major(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, const CholeskyConfig& config,
                       Context& ctx) {
    constexpr const char* routine = "posv_batched (column-major kernels)";
    CudaResources& r = detail::resources_of(ctx, routine);
    check_layout(a, routine, "a");
    check_layout(b, routine, "b");
    if (a.count == 0) return;
    if (b.count != a.count || b.rows != a.rows)
        throw InvalidArgument(routine, "b", "as many matrices as a, each with a.rows rows");
    DeviceGuard guard(r.device_);
    r.require_device_memory(info, routine, "info");
    const cudaStream_t stream = r.stream();
    const int n = a.rows, nrhs = b.cols;
    if (n == 0) {
        BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int) * std::size_t(a.count), stream));
        return;
    }
    if (runs_cusolver(n, precision_v<T>, config)) return cusolver_posv_batched(uplo, a, b, info, ctx);
    require_on_device(r, a, routine, "a");
    if (nrhs > 0) require_on_device(r, b, routine, "b");
    const ColumnMajorSpec spec = column_major_spec(ColumnMajorRoutine::posv, precision_v<T>, uplo, n, nrhs, ld_checked(config, a));
    const ColumnMajorShape shape = column_major_shape(spec, routine);
    const jit::LoadedKernel& k = lookup(spec, shape, r, routine);

    BatchArgs<T> A = batch_args(a), B = batch_args(b);
    int count = a.count, zero = 0, nrhs_arg = nrhs;
    int ngroups = (nrhs + shape.nrhs_block - 1) / shape.nrhs_block;
    void* args[] = {&A.data, &A.pointers, &A.stride, &A.ld, &B.data, &B.pointers, &B.stride, &B.ld,
                    &nrhs_arg, &ngroups, &info, &count, &zero};
    jit::launch(k, blocks_for(count, shape.matrices_per_block), 1, shape.block_threads, 1,
                static_cast<unsigned>(shape.shared_bytes), stream, args);
}

template <class T>
void potrs_column_major(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, const CholeskyConfig& config,
                        Context& ctx) {
    constexpr const char* routine = "potrs_batched (column-major kernels)";
    CudaResources& r = detail::resources_of(ctx, routine);
    check_layout(a, routine, "a");
    check_layout(b, routine, "b");
    if (b.count != a.count || b.rows != a.rows)
        throw InvalidArgument(routine, "b", "as many matrices as a, each with a.rows rows");
    const int n = a.rows, nrhs = b.cols;
    if (a.count == 0 || n == 0 || nrhs == 0) return;
    DeviceGuard guard(r.device_);
    if (runs_cusolver(n, precision_v<T>, config)) return cusolver_potrs_batched(uplo, a, b, ctx);
    require_on_device(r, a, routine, "a");
    require_on_device(r, b, routine, "b");
    const ColumnMajorSpec spec = column_major_spec(ColumnMajorRoutine::potrs, precision_v<T>, uplo, n, nrhs, config);
    const ColumnMajorShape shape = column_major_shape(spec, routine);
    const jit::LoadedKernel& k = lookup(spec, shape, r, routine);

    BatchArgs<const T> A = batch_args(a);
    BatchArgs<T> B = batch_args(b);
    int count = a.count, nrhs_arg = nrhs;
    int ngroups = (nrhs + shape.nrhs_block - 1) / shape.nrhs_block;
    void* args[] = {&A.data, &A.pointers, &A.stride, &A.ld, &B.data, &B.pointers, &B.stride, &B.ld,
                    &nrhs_arg, &ngroups, &count};
    if (spec.config.staged) {  // a group of warps per matrix, every right-hand side of it (codegen/cholesky/staged.hpp)
        jit::launch(k, blocks_for(count, shape.matrices_per_block), 1, shape.block_threads, 1,
                    static_cast<unsigned>(shape.shared_bytes), r.stream(), args);
        return;
    }
    // one segment per (matrix, group); beyond 2^31 - 1 blocks the grid wraps into y
    const long long blocks = (static_cast<long long>(count) * ngroups + shape.segments_per_block - 1) /
                             shape.segments_per_block;
    long long gy = 1;
    while ((blocks + gy - 1) / gy > INT_MAX) ++gy;
    if (gy > 65535) throw InvalidArgument(routine, "b.cols", "count * ceil(nrhs / nrhs_block) too large for one launch");
    const unsigned gx = static_cast<unsigned>((blocks + gy - 1) / gy);
    jit::launch(k, gx, static_cast<unsigned>(gy), shape.block_threads, 1, 0, r.stream(), args);
}

#define INSTANTIATE(T)                                                                                          \
    template void potrf_column_major<T>(Uplo, const BatchView<T>&, int*, const CholeskyConfig&, Context&);      \
    template void potrs_column_major<T>(Uplo, const BatchView<const T>&, const BatchView<T>&,                   \
                                        const CholeskyConfig&, Context&);                                       \
    template void posv_column_major<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, const CholeskyConfig&, \
                                       Context&);
INSTANTIATE(float)
INSTANTIATE(double)
INSTANTIATE(std::complex<float>)
INSTANTIATE(std::complex<double>)
#undef INSTANTIATE

}  // namespace batchsolve::cuda_backend::tuned
