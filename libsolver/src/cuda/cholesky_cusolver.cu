// cuSOLVER's potrfBatched/potrsBatched with batchsolve's semantics on top: pointer arrays built on
// the device, LAPACK's info (NaN pivots included), any nrhs, B untouched for failed matrices, and
// interleaved batches moved through a column-major workspace.
#include "cholesky_cusolver.hpp"

#include <algorithm>
#include <cfloat>
#include <cstdint>

#include "../core/backends.hpp"
#include "../core/checks.hpp"
#include "batchsolve/cholesky.hpp"
#include "layout_convert.hpp"
#include "resources.hpp"

namespace batchsolve::cuda_backend {

using detail::Carve;
using detail::CudaResources;
using detail::DeviceGuard;

namespace {

// Column-major workspace one call may use for an interleaved batch; larger batches are processed in
// slices, so the vendor path never doubles the memory of a huge batch.
constexpr std::size_t kWorkspaceSliceBytes = std::size_t(256) << 20;
constexpr int kThreadsPerBlock = 256;  // the small one-thread-per-matrix kernels below
// Most matrices handed to one cuSOLVER call. Batched vendor kernels have been seen to map the batch
// onto gridDim.y/z (at most 65535 blocks) and fail beyond some batch size; pieces of this size keep
// far from that and are still large enough to fill the GPU.
constexpr int kMaxVendorBatch = 65535 * 4;

// Calls f(first, size) for consecutive pieces of at most kMaxVendorBatch of `count` matrices.
template <class F>
void for_each_piece(int count, F&& f) {
    for (std::int64_t first = 0; first < count; first += kMaxVendorBatch)
        f(first, int(std::min<std::int64_t>(kMaxVendorBatch, count - first)));
}

// ---- typed cuSOLVER entry points ------------------------------------------------------------------

void potrf_call(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float** a, int lda, int* info, int batch) {
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnSpotrfBatched(h, uplo, n, a, lda, info, batch));
}
void potrf_call(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double** a, int lda, int* info, int batch) {
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnDpotrfBatched(h, uplo, n, a, lda, info, batch));
}
void potrf_call(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, cuComplex** a, int lda, int* info, int batch) {
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnCpotrfBatched(h, uplo, n, a, lda, info, batch));
}
void potrf_call(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, cuDoubleComplex** a, int lda, int* info,
                int batch) {
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnZpotrfBatched(h, uplo, n, a, lda, info, batch));
}

// One right-hand side per matrix: the only nrhs cuSOLVER's potrsBatched supports. `status` receives
// cuSOLVER's argument-error code, not a per-matrix info.
void potrs_call(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float** a, int lda, float** b, int ldb,
                int* status, int batch) {
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnSpotrsBatched(h, uplo, n, 1, a, lda, b, ldb, status, batch));
}
void potrs_call(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double** a, int lda, double** b, int ldb,
                int* status, int batch) {
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnDpotrsBatched(h, uplo, n, 1, a, lda, b, ldb, status, batch));
}
void potrs_call(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, cuComplex** a, int lda, cuComplex** b, int ldb,
                int* status, int batch) {
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnCpotrsBatched(h, uplo, n, 1, a, lda, b, ldb, status, batch));
}
void potrs_call(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, cuDoubleComplex** a, int lda,
                cuDoubleComplex** b, int ldb, int* status, int batch) {
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnZpotrsBatched(h, uplo, n, 1, a, lda, b, ldb, status, batch));
}

cublasFillMode_t fill_mode(Uplo uplo) { return uplo == Uplo::lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }

// ---- small kernels: pointer arrays and pivot checks -----------------------------------------------

// Pointer handed to cuSOLVER for matrix m: column `offset / ld` of it, or `dummy` when the matrix is
// to be skipped (its factorisation failed), so that the solve never writes the user's B there.
template <class T>
BATCHSOLVE_HD T* solve_pointer(const DeviceBatch<T>& v, int m, std::int64_t offset, const int* skip, T* dummy) {
    return skip != nullptr && skip[m] != 0 ? dummy : v.matrix(m) + offset;
}

// LAPACK's info for one factor from cuSOLVER's `reported` one: the first column before the reported
// failure whose diagonal entry is NaN or non-positive (a NaN pivot may pass cuSOLVER's test; NaN
// propagates into the pivot of the first column it reaches, so the scan finds LAPACK's column).
template <class T>
BATCHSOLVE_HD int checked_info(const T* factor, int n, int lda, int reported) {
    if (reported < 0) return reported;
    const int limit = reported > 0 ? reported - 1 : n;
    for (int j = 0; j < limit; ++j) {
        const auto d = real_part(factor[std::int64_t(j) * lda + j]);
        // 0 < d <= largest finite, as the generated kernels' bs_pivot_ok: an +Inf diagonal entry of A
        // gives an Inf factor diagonal that `d > 0` alone lets through.
        const double largest = sizeof(d) == sizeof(float) ? double(FLT_MAX) : DBL_MAX;
        if (!(d > 0 && d <= largest)) return j + 1;
    }
    return reported;
}

template <class T>
__global__ void build_pointers_kernel(const DeviceBatch<T> v, int batch, std::int64_t offset, const int* skip,
                                      T* dummy, T** out) {
    for (std::int64_t m = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; m < batch;
         m += std::int64_t(gridDim.x) * blockDim.x)
        out[m] = solve_pointer(v, int(m), offset, skip, dummy);
}

template <class T>
__global__ void check_pivots_kernel(T* const* factors, int n, int lda, int batch, int* info) {
    for (std::int64_t m = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; m < batch;
         m += std::int64_t(gridDim.x) * blockDim.x) {
        const int reported = info[m];
        const int checked = checked_info(factors[m], n, lda, reported);
        if (checked != reported) info[m] = checked;
    }
}

unsigned blocks_for(int items) { return unsigned((std::int64_t(items) + kThreadsPerBlock - 1) / kThreadsPerBlock); }

template <class T>
void build_pointers(const DeviceBatch<T>& v, int batch, std::int64_t offset, const int* skip, T* dummy, T** out,
                    cudaStream_t stream) {
    build_pointers_kernel<T><<<blocks_for(batch), kThreadsPerBlock, 0, stream>>>(v, batch, offset, skip, dummy, out);
    BATCHSOLVE_LAUNCH_CHECK("build_pointers_kernel");
}

template <class T>
void check_pivots(T* const* factors, int n, int lda, int batch, int* info, cudaStream_t stream) {
    check_pivots_kernel<T><<<blocks_for(batch), kThreadsPerBlock, 0, stream>>>(factors, n, lda, batch, info);
    BATCHSOLVE_LAUNCH_CHECK("check_pivots_kernel");
}

// ---- the two drivers --------------------------------------------------------------------------------

// One vendor call: factor (potrf), solve (potrs), or both (posv: the solve skips failed matrices).
template <class T>
struct VendorCall {
    Uplo uplo = Uplo::lower;
    DeviceBatch<T> a, b;
    int n = 0, nrhs = 0, count = 0;
    int* info = nullptr;
    bool factor = false, solve = false;
};

// Column-major strided or pointer-array operands: cuSOLVER works in place.
template <class T>
void run_in_place(const VendorCall<T>& c, CudaResources& r) {
    const cudaStream_t stream = r.stream();
    const bool build_a = c.a.layout != LayoutKind::pointer_array;
    // A user pointer array for B is usable as is only for one column and when nothing is skipped.
    const bool build_b = c.solve && !(c.b.layout == LayoutKind::pointer_array && c.nrhs == 1 && !c.factor);
    Carve carve;
    const std::size_t a_at = build_a ? carve.reserve<T*>(c.count) : 0;
    const std::size_t b_at = build_b ? carve.reserve<T*>(c.count) : 0;
    // potrsBatched documents one status int; one per matrix costs little and is safe either way.
    const std::size_t status_at = c.solve ? carve.reserve<int>(c.count) : 0;
    const std::size_t dummy_at = c.solve && c.factor ? carve.reserve<T>(c.b.ld) : 0;
    void* scratch = carve.size() > 0 ? r.scratch(carve.size()) : nullptr;
    const cusolverDnHandle_t handle = r.cusolver();
    const cublasFillMode_t uplo = fill_mode(c.uplo);

    T** a_ptrs = build_a ? Carve::at<T*>(scratch, a_at) : const_cast<T**>(c.a.pointers);
    if (build_a) build_pointers(c.a, c.count, 0, nullptr, static_cast<T*>(nullptr), a_ptrs, stream);
    if (c.factor) {
        for_each_piece(c.count, [&](std::int64_t first, int size) {
            potrf_call(handle, uplo, c.n, a_ptrs + first, c.a.ld, c.info + first, size);
        });
        check_pivots(a_ptrs, c.n, c.a.ld, c.count, c.info, stream);
    }
    if (!c.solve) return;
    int* status = Carve::at<int>(scratch, status_at);
    T* dummy = c.factor ? Carve::at<T>(scratch, dummy_at) : nullptr;
    T** b_ptrs = build_b ? Carve::at<T*>(scratch, b_at) : const_cast<T**>(c.b.pointers);
    for (int j = 0; j < c.nrhs; ++j) {
        // Stream order makes reusing b_ptrs safe: column j+1's pointers are written after column j's solve.
        if (build_b) build_pointers(c.b, c.count, std::int64_t(j) * c.b.ld, c.factor ? c.info : nullptr, dummy, b_ptrs,
                                    stream);
        for_each_piece(c.count, [&](std::int64_t first, int size) {
            potrs_call(handle, uplo, c.n, a_ptrs + first, c.a.ld, b_ptrs + first, c.b.ld, status + first, size);
        });
    }
}

// Interleaved or chunked operands: slices of the batch are converted into a packed column-major
// workspace (A: the uplo triangle, the other one zeroed; B: whole), solved there, and converted back
// (A: the uplo triangle only, so the user's other triangle is never written).
// Matrices per slice of that workspace and its plan (A's slice, then B's), for n x n matrices and
// nrhs right-hand sides (0 for potrf) of element_bytes each: one formula for the call and the query.
struct VendorSlices {
    int slice = 0;
    std::size_t a_at = 0, b_at = 0, bytes = 0;
};
VendorSlices vendor_slices(int n, int nrhs, int count, std::size_t element_bytes) {
    const std::int64_t a_elements = std::int64_t(n) * n, b_elements = std::int64_t(n) * nrhs;
    const std::size_t matrix_bytes = std::max<std::size_t>(1, std::size_t(a_elements + b_elements) * element_bytes);
    VendorSlices v;
    v.slice = int(std::clamp<std::int64_t>(std::int64_t(kWorkspaceSliceBytes / matrix_bytes), 1,
                                           std::max(1, std::min(count, kMaxVendorBatch))));
    Carve ws;
    v.a_at = ws.reserve<char>(std::size_t(v.slice) * a_elements * element_bytes);
    v.b_at = nrhs > 0 ? ws.reserve<char>(std::size_t(v.slice) * b_elements * element_bytes) : 0;
    v.bytes = ws.size();
    return v;
}

template <class T>
void run_through_workspace(const VendorCall<T>& c, CudaResources& r, Context& ctx) {
    const cudaStream_t stream = r.stream();
    const int n = c.n, nrhs = c.solve ? c.nrhs : 0;
    const std::int64_t a_elements = std::int64_t(n) * n, b_elements = std::int64_t(n) * nrhs;
    const VendorSlices plan = vendor_slices(n, nrhs, c.count, sizeof(T));
    const int slice = plan.slice;
    const std::size_t wa_at = plan.a_at, wb_at = plan.b_at;
    struct {
        std::size_t bytes;
        std::size_t size() const { return bytes; }
    } ws{plan.bytes};
    Carve sc;
    const std::size_t a_ptrs_at = sc.reserve<T*>(slice);
    const std::size_t b_ptrs_at = c.solve ? sc.reserve<T*>(slice) : 0;
    const std::size_t status_at = c.solve ? sc.reserve<int>(slice) : 0;
    const std::size_t dummy_at = c.solve && c.factor ? sc.reserve<T>(n) : 0;
    // Both blocks are asked for before any work is issued: growing either one frees the old block.
    void* workspace = ctx.workspace(ws.size());
    void* scratch = r.scratch(sc.size());
    const cusolverDnHandle_t handle = r.cusolver();
    const cublasFillMode_t uplo = fill_mode(c.uplo);
    const Part part = part_of(c.uplo);

    const DeviceBatch<T> wa = packed_column_major(Carve::at<T>(workspace, wa_at), n, n, slice);
    const DeviceBatch<T> wb = packed_column_major(nrhs > 0 ? Carve::at<T>(workspace, wb_at) : nullptr, n, nrhs, slice);
    T** a_ptrs = Carve::at<T*>(scratch, a_ptrs_at);
    T** b_ptrs = c.solve ? Carve::at<T*>(scratch, b_ptrs_at) : nullptr;
    int* status = c.solve ? Carve::at<int>(scratch, status_at) : nullptr;
    T* dummy = c.solve && c.factor ? Carve::at<T>(scratch, dummy_at) : nullptr;
    build_pointers(wa, slice, 0, nullptr, static_cast<T*>(nullptr), a_ptrs, stream);  // the same for every slice

    for (std::int64_t first = 0; first < c.count; first += slice) {
        const int batch = int(std::min<std::int64_t>(slice, c.count - first));
        const DeviceBatch<T> a = c.a.slice(int(first));
        const DeviceBatch<T> b = c.b.slice(int(first));
        int* info = c.factor ? c.info + first : nullptr;
        launch_convert(a, wa, batch, part, /*zero_rest=*/true, stream);
        if (c.solve) launch_convert(b, wb, batch, Part::all, false, stream);
        if (c.factor) {
            potrf_call(handle, uplo, n, a_ptrs, n, info, batch);
            check_pivots(a_ptrs, n, n, batch, info, stream);
        }
        if (c.solve) {
            for (int j = 0; j < nrhs; ++j) {
                build_pointers(wb, batch, std::int64_t(j) * n, info, dummy, b_ptrs, stream);
                potrs_call(handle, uplo, n, a_ptrs, n, b_ptrs, n, status, batch);
            }
        }
        if (c.factor) launch_convert(wa, a, batch, part, false, stream);
        // Skipped matrices still hold the user's B in the workspace: copying it back leaves B as it was.
        if (c.solve) launch_convert(wb, b, batch, Part::all, false, stream);
    }
}

template <class T>
void run(const VendorCall<T>& c, CudaResources& r, Context& ctx, Operand mode) {
    if (c.a.interleaved() || mode == Operand::preserve) run_through_workspace(c, r, ctx);
    else run_in_place(c, r);
}

void zero_info(CudaResources& r, int* info, int count) {
    BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int) * std::size_t(count), r.stream()));
}

}  // namespace

std::size_t cusolver_workspace_bytes(int n, int nrhs, int count, std::size_t element_bytes) {
    if (n == 0 || count == 0) return 0;
    return vendor_slices(n, nrhs, count, element_bytes).bytes;
}

template <class T>
void cusolver_potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, Context& ctx, Operand mode) {
    constexpr const char* routine = "potrf_batched (cuSOLVER)";
    CudaResources& r = detail::resources_of(ctx, routine);
    if (a.count == 0) return;
    DeviceGuard guard(r.device_);
    r.require_device_memory(info, routine, "info");
    if (a.rows == 0) return zero_info(r, info, a.count);
    VendorCall<device_scalar_t<T>> c;
    c.uplo = uplo;
    c.a = checked_device_batch(r, a, routine, "a");
    c.n = a.rows, c.count = a.count;
    c.info = info;
    c.factor = true;
    run(c, r, ctx, mode);
}

template <class T>
void cusolver_potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, Context& ctx,
                            Operand mode) {
    constexpr const char* routine = "potrs_batched (cuSOLVER)";
    CudaResources& r = detail::resources_of(ctx, routine);
    if (a.count == 0 || a.rows == 0 || b.cols == 0) return;
    DeviceGuard guard(r.device_);
    VendorCall<device_scalar_t<T>> c;
    c.uplo = uplo;
    c.a = checked_device_batch(r, a, routine, "a");
    c.b = checked_device_batch(r, b, routine, "b");
    c.n = a.rows, c.nrhs = b.cols, c.count = a.count;
    c.solve = true;
    run(c, r, ctx, mode);
}

template <class T>
void cusolver_posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, Context& ctx,
                           Operand mode) {
    constexpr const char* routine = "posv_batched (cuSOLVER)";
    CudaResources& r = detail::resources_of(ctx, routine);
    if (a.count == 0) return;
    DeviceGuard guard(r.device_);
    r.require_device_memory(info, routine, "info");
    if (a.rows == 0) return zero_info(r, info, a.count);
    VendorCall<device_scalar_t<T>> c;
    c.uplo = uplo;
    c.a = checked_device_batch(r, a, routine, "a");
    c.b = checked_device_batch(r, b, routine, "b");
    c.n = a.rows, c.nrhs = b.cols, c.count = a.count;
    c.info = info;
    c.factor = true;
    c.solve = b.cols > 0;
    run(c, r, ctx, mode);
}

#define INSTANTIATE(T)                                                                                       \
    template void cusolver_potrf_batched<T>(Uplo, const BatchView<T>&, int*, Context&, Operand);           \
    template void cusolver_potrs_batched<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, Context&, \
                                            Operand);                                                       \
    template void cusolver_posv_batched<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, Context&, Operand);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve::cuda_backend

// ---- batchsolve::vendor: the column-major vendor path as public API --------------------------------

namespace batchsolve::vendor {

namespace {
template <class T>
void require_vendor_operand(const BatchView<T>& v, Context& ctx, const char* routine, const char* name) {
    checks::require(!v.is_interleaved(), routine, name,
                    "a column-major or pointer-array batch (the cuSOLVER path takes no interleaved layout)");
    checks::require(ctx.backend() == Backend::cuda, routine, "ctx", "a CUDA context");
}
}  // namespace

template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, Context& ctx) {
    constexpr const char* routine = "vendor::potrf_batched";
    checks::check_view(a, routine, "a");
    checks::check_square(a, routine, "a");
    checks::require(a.count == 0 || info != nullptr, routine, "info", "non-null");
    require_vendor_operand(a, ctx, routine, "a.layout");
    if (a.count == 0) return;
    cuda_backend::cusolver_potrf_batched(uplo, a, info, ctx, cuda_backend::Operand::in_place);
}

template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, Context& ctx) {
    constexpr const char* routine = "vendor::potrs_batched";
    checks::check_view(a, routine, "a");
    checks::check_square(a, routine, "a");
    checks::check_view(b, routine, "b");
    checks::check_rhs(a, b, routine);
    require_vendor_operand(a, ctx, routine, "a.layout");
    require_vendor_operand(b, ctx, routine, "b.layout");
    if (a.count == 0 || a.rows == 0 || b.cols == 0) return;
    cuda_backend::cusolver_potrs_batched(uplo, a, b, ctx, cuda_backend::Operand::in_place);
}

#define INSTANTIATE(T)                                                                    \
    template void potrf_batched<T>(Uplo, const BatchView<T>&, int*, Context&);            \
    template void potrs_batched<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve::vendor
