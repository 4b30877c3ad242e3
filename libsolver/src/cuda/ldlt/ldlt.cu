// The CUDA backend of the symmetric indefinite solvers, entirely on the GPU: the no-pivot LDL^T
// (right-looking over 512-wide block columns, each diagonal block by recursion down to 64 x 64 leaves
// factored by a fused shared-memory kernel; cuBLAS TRSM for panels, one kernel that keeps L21 D and
// scales by D^-1, SYRKX/HERKX and GEMM for the trailing updates), the butterfly
// transforms in O(depth n^2), the conversion of A, and cuSOLVER's Bunch-Kaufman (or LU) for the
// pivoted fallback (the refinement's residuals and norms: cuda/refinement.cu). Nothing returns to the host inside a factorisation.
#include <cuda/std/complex>
#include <cuda/std/limits>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/ldlt_backend.hpp"
#include "codegen/ldlt/ldlt_family.hpp"
#include "../../core/refinement_backend.hpp"  // copy_matrix
#include "../device_scalar.cuh"
#include "../resources.hpp"

namespace batchsolve::detail {
// Starts the background load of cuBLAS's/cuSOLVER's kernels of (device, precision) unless the library's
// warm-up is off or lazy (defined in context.cu beside start_library_warm_up; declared at its one caller).
void start_library_warm_up_for_solver(int device, bool single);
}  // namespace batchsolve::detail

namespace batchsolve::cuda_backend {

using detail::CudaResources;
using detail::DeviceGuard;
using ldlt_detail::kLeafOrder;

namespace {

// The unsigned integer whose order matches the order of non-negative floating-point values of R
// (the bits of a non-negative IEEE value compare like the value; NaN above Inf).
template <class R> struct ordered_bits;
template <> struct ordered_bits<float> { using type = unsigned int; };
template <> struct ordered_bits<double> { using type = unsigned long long; };

__device__ __forceinline__ void atomic_max_bits(unsigned int* p, float v) { atomicMax(p, __float_as_uint(v)); }
__device__ __forceinline__ void atomic_max_bits(unsigned long long* p, double v) {
    atomicMax(p, static_cast<unsigned long long>(__double_as_longlong(v)));
}
__device__ __forceinline__ float from_bits(const unsigned int* p) { return __uint_as_float(*p); }
__device__ __forceinline__ double from_bits(const unsigned long long* p) { return __longlong_as_double((long long)*p); }

constexpr int kThreads = 256;
static_assert(kThreads % kLeafOrder == 0, "factor_leaf_kernel maps its threads onto rows of the leaf");
// Tile of the square-tiled kernels (expand_lower): 32 x 32 elements, 32 x 8 threads.
constexpr int kTile = 32;
constexpr int kTileRows = 8;
// Rows of the reduction over columns in max_abs_lower: one block reads kMaxAbsColumns columns.
constexpr int kMaxAbsColumns = 64;
// The blocking (panel order; the order at or below which a TF32 trailing update of the lower triangle
// is one cuBLAS ?syrkx/?herkx call in lower_update_split; without TF32 the update is always one) comes
// from the tuning table of this GPU for the problem's order (ldlt_detail::blocking, as the workspace).
template <class T>
LdltBlocking blocking_of(const CudaResources& r, int n) {
    return tuned_ldlt_blocking(precision_v<T>, n, r.cc_major_ * 10 + r.cc_minor_);
}

unsigned blocks_for(std::int64_t count, int threads = kThreads) { return unsigned((count + threads - 1) / threads); }

// ---- kernels of the factorisation -------------------------------------------------------------------

// max |a_ij| over the finite entries of the lower triangle, into *bits (zero beforehand).
template <class D>
__global__ void max_abs_lower_kernel(int n, const D* a, int lda, typename ordered_bits<real_of_t<D>>::type* bits) {
    using R = real_of_t<D>;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j0 = blockIdx.y * kMaxAbsColumns;
    R m = 0;
    if (i < n)
        for (int j = j0; j < min(j0 + kMaxAbsColumns, i + 1); ++j) {
            // Non-finite entries are left out: they surface as a non-finite pivot at their own column.
            const D v = a[std::size_t(j) * lda + i];
            if (finite_value(v)) m = fmax(m, abs_of(v));
        }
    __shared__ R partial[kThreads];
    partial[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) partial[threadIdx.x] = fmax(partial[threadIdx.x], partial[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0 && partial[0] != R(0)) atomic_max_bits(bits, partial[0]);
}

// LDL^T of one diagonal leaf (m <= kLeafOrder) in shared memory, by one thread block: for each column,
// the pivot (checked against sqrt(n) u max|a_ij|), the column of L, then the rank-1 update of the rest.
// info receives column_offset + j + 1 for the first bad pivot unless an earlier leaf set it (leaves
// run in column order on one stream).
template <class D, bool Conjugate>
__global__ void __launch_bounds__(kThreads)
factor_leaf_kernel(int m, D* a, int lda, const typename ordered_bits<real_of_t<D>>::type* max_bits, int n_total,
                   int column_offset, int* info) {
    using R = real_of_t<D>;
    extern __shared__ unsigned char shared_bytes[];
    D* s = reinterpret_cast<D*>(shared_bytes);
    constexpr int ld = kLeafOrder + 1;  // odd stride: a column walk and a row walk hit different banks
    __shared__ int bad;
    for (int idx = threadIdx.x; idx < m * m; idx += blockDim.x) {
        const int i = idx % m, j = idx / m;
        if (i >= j) s[j * ld + i] = a[std::size_t(j) * lda + i];
    }
    if (threadIdx.x == 0) bad = 0;
    const R threshold = sqrt(R(n_total)) * (cuda::std::numeric_limits<R>::epsilon() / 2) * from_bits(max_bits);  // see ldlt.hpp
    __syncthreads();
    for (int j = 0; j < m; ++j) {
        D d = s[j * ld + j];
        if (Conjugate) d = real_part_only(d);
        const D inverse = D(1) / d;
        __syncthreads();  // every thread has read the pivot before it is rewritten
        if (threadIdx.x == 0) {
            s[j * ld + j] = d;
            if (bad == 0 && (!(abs_of(d) > threshold) || !finite_value(d))) bad = column_offset + j + 1;
        }
        for (int i = j + 1 + threadIdx.x; i < m; i += blockDim.x) s[j * ld + i] *= inverse;
        __syncthreads();
        // Thread t updates row t % kLeafOrder, every (kThreads / kLeafOrder)-th column of it: a warp
        // walks consecutive rows of one column (no bank conflicts, l_kj broadcast), no index division.
        const int i = threadIdx.x % kLeafOrder;
        if (i > j && i < m) {
            const D l_ij = s[j * ld + i];
            for (int k = j + 1 + threadIdx.x / kLeafOrder; k <= i; k += kThreads / kLeafOrder)
                s[k * ld + i] -= l_ij * (d * conj_if(s[j * ld + k], Conjugate));
        }
        __syncthreads();
    }
    for (int idx = threadIdx.x; idx < m * m; idx += blockDim.x) {
        const int i = idx % m, j = idx / m;
        if (i >= j) a[std::size_t(j) * lda + i] = s[j * ld + i];
    }
    if (threadIdx.x == 0 && bad != 0 && *info == 0) *info = bad;
}

// After the TRSM: A21 holds W = L21 D1. Keep W for the trailing update and leave L21 = W D1^-1.
template <class D>
__global__ void keep_and_scale_kernel(int rows, int cols, D* a21, int lda, const D* a11, D* w, int ldw) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (i >= rows) return;
    const D value = a21[std::size_t(j) * lda + i];
    w[std::size_t(j) * ldw + i] = value;
    a21[std::size_t(j) * lda + i] = value / a11[std::size_t(j) * lda + j];
}

template <class D>
__global__ void scale_rows_kernel(int n, int nrhs, const D* a, int lda, D* b, int ldb) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (i < n) b[std::size_t(j) * ldb + i] /= a[std::size_t(i) * lda + i];
}

// ---- conversions and transforms ----------------------------------------------------------------------

// dst = diag(A, I) (full storage) from A's lower triangle: a 32 x 32 output tile reads its own tile
// for the lower part and the mirrored tile (through shared memory, so both reads are coalesced) for
// the upper part.
template <class H, class L, bool Conjugate>
__global__ void expand_lower_kernel(int n, const H* a, int lda, int npad, L* dst, int ldd, double pad_scale, int* overflow) {
    __shared__ H mirror[kTile][kTile + 1];
    const int i0 = blockIdx.x * kTile, j0 = blockIdx.y * kTile;
    const int tx = threadIdx.x;
    bool bad = false;
    for (int ty = threadIdx.y; ty < kTile; ty += kTileRows) {
        // mirror[ty][tx] = a(j0 + tx, i0 + ty): the element (i0 + ty, j0 + tx) of the upper part.
        const int r = j0 + tx, c = i0 + ty;
        if (r < n && c < n && r >= c) mirror[ty][tx] = a[std::size_t(c) * lda + r];
    }
    __syncthreads();
    for (int ty = threadIdx.y; ty < kTile; ty += kTileRows) {
        const int i = i0 + tx, j = j0 + ty;
        if (i >= npad || j >= npad) continue;
        L v;
        if (i < n && j < n) {
            const H h = i >= j ? a[std::size_t(j) * lda + i] : conj_if(mirror[tx][ty], Conjugate);
            v = convert_to<L>(i == j && Conjugate ? real_part_only(h) : h);
            bad = bad || !finite_value(v);
        } else {
            v = L(i == j ? real_of_t<L>(ldlt_detail::padding_value(i - n, pad_scale)) : real_of_t<L>(0));
        }
        dst[std::size_t(j) * ldd + i] = v;
    }
    if (bad) *overflow = 1;
}

// One level of U^T A U: thread (ii, jj) of [0, npad/2)^2 owns the four entries its row pair and column
// pair of the level's butterflies meet at.
template <class D>
__global__ void rbt_matrix_kernel(int npad, int m, const real_of_t<D>* r, D* a, int lda) {
    using R = real_of_t<D>;
    const int half = npad / 2, h = m / 2;
    const int ii = blockIdx.x * blockDim.x + threadIdx.x;
    const int jj = blockIdx.y;
    if (ii >= half) return;
    const int p = ii / h, u = ii % h, q = jj / h, v = jj % h;
    const int i0 = p * m + u, i1 = i0 + h, j0 = q * m + v, j1 = j0 + h;
    const R r0 = r[p * m + u], r1 = r[p * m + h + u];
    const R half_scale = R(0.5);  // (1/sqrt 2)^2: one factor from each side
    const R c0 = r[q * m + v] * half_scale, c1 = r[q * m + h + v] * half_scale;
    D& x00 = a[std::size_t(j0) * lda + i0];
    D& x01 = a[std::size_t(j1) * lda + i0];
    D& x10 = a[std::size_t(j0) * lda + i1];
    D& x11 = a[std::size_t(j1) * lda + i1];
    const D t00 = (x00 + x10) * r0, t01 = (x01 + x11) * r0;
    const D t10 = (x00 - x10) * r1, t11 = (x01 - x11) * r1;
    x00 = (t00 + t01) * c0;
    x01 = (t00 - t01) * c1;
    x10 = (t10 + t11) * c0;
    x11 = (t10 - t11) * c1;
}

template <class D>
__global__ void rbt_vectors_kernel(bool transpose, int npad, int m, const real_of_t<D>* r, D* x, int ldx) {
    using R = real_of_t<D>;
    const int h = m / 2;
    const int ii = blockIdx.x * blockDim.x + threadIdx.x;
    if (ii >= npad / 2) return;
    const int p = ii / h, u = ii % h;
    const int i0 = p * m + u, i1 = i0 + h;
    const R scale = R(0.70710678118654752440);
    const R r0 = r[p * m + u] * scale, r1 = r[p * m + h + u] * scale;
    D* col = x + std::size_t(blockIdx.y) * ldx;
    const D top = col[i0], bottom = col[i1];
    if (transpose) {
        col[i0] = (top + bottom) * r0;
        col[i1] = (top - bottom) * r1;
    } else {
        col[i0] = top * r0 + bottom * r1;
        col[i1] = top * r0 - bottom * r1;
    }
}

__global__ void widen_pivots_kernel(int n, const int* ipiv, std::int64_t* wide) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) wide[i] = ipiv[i];
}

// *flag = 1 when any of rows x cols entries of X is Inf or NaN (the flag is cleared beforehand).
template <class D>
__global__ void flag_non_finite_kernel(int rows, const D* x, int ldx, int* flag) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows && !finite_value(x[std::size_t(blockIdx.y) * ldx + i])) *flag = 1;
}

// ---- cuBLAS / cuSOLVER by type --------------------------------------------------------------------

cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasOperation_t op, int m, int n, const float* a, int lda,
                    float* b, int ldb) {
    const float one = 1;
    return cublasStrsm(h, side, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_UNIT, m, n, &one, a, lda, b, ldb);
}
cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasOperation_t op, int m, int n, const double* a,
                    int lda, double* b, int ldb) {
    const double one = 1;
    return cublasDtrsm(h, side, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_UNIT, m, n, &one, a, lda, b, ldb);
}
cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasOperation_t op, int m, int n,
                    const std::complex<float>* a, int lda, std::complex<float>* b, int ldb) {
    const cuComplex one{1, 0};
    return cublasCtrsm(h, side, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_UNIT, m, n, &one, cu(a), lda, cu(b), ldb);
}
cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasOperation_t op, int m, int n,
                    const std::complex<double>* a, int lda, std::complex<double>* b, int ldb) {
    const cuDoubleComplex one{1, 0};
    return cublasZtrsm(h, side, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_UNIT, m, n, &one, cu(a), lda, cu(b), ldb);
}

// One right-hand side: TRSV, the matrix-vector kernel, instead of TRSM with one column.
cublasStatus_t trsv(cublasHandle_t h, cublasOperation_t op, int n, const float* a, int lda, float* x) {
    return cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_UNIT, n, a, lda, x, 1);
}
cublasStatus_t trsv(cublasHandle_t h, cublasOperation_t op, int n, const double* a, int lda, double* x) {
    return cublasDtrsv(h, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_UNIT, n, a, lda, x, 1);
}
cublasStatus_t trsv(cublasHandle_t h, cublasOperation_t op, int n, const std::complex<float>* a, int lda, std::complex<float>* x) {
    return cublasCtrsv(h, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_UNIT, n, cu(a), lda, cu(x), 1);
}
cublasStatus_t trsv(cublasHandle_t h, cublasOperation_t op, int n, const std::complex<double>* a, int lda, std::complex<double>* x) {
    return cublasZtrsv(h, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_UNIT, n, cu(a), lda, cu(x), 1);
}

// C (lower) -= L W^T (symmetric: SYRKX) or L W^H (Hermitian: HERKX, a real beta).
cublasStatus_t lower_update(cublasHandle_t h, Symmetry, int n, int k, const float* l, int ldl, const float* w, int ldw,
                            float* c, int ldc) {
    const float minus_one = -1, one = 1;
    return cublasSsyrkx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &minus_one, l, ldl, w, ldw, &one, c, ldc);
}
cublasStatus_t lower_update(cublasHandle_t h, Symmetry, int n, int k, const double* l, int ldl, const double* w, int ldw,
                            double* c, int ldc) {
    const double minus_one = -1, one = 1;
    return cublasDsyrkx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &minus_one, l, ldl, w, ldw, &one, c, ldc);
}
cublasStatus_t lower_update(cublasHandle_t h, Symmetry s, int n, int k, const std::complex<float>* l, int ldl,
                            const std::complex<float>* w, int ldw, std::complex<float>* c, int ldc) {
    const cuComplex minus_one{-1, 0}, one{1, 0};
    const float real_one = 1;
    if (s == Symmetry::hermitian)
        return cublasCherkx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &minus_one, cu(l), ldl, cu(w), ldw, &real_one,
                            cu(c), ldc);
    return cublasCsyrkx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &minus_one, cu(l), ldl, cu(w), ldw, &one, cu(c), ldc);
}
cublasStatus_t lower_update(cublasHandle_t h, Symmetry s, int n, int k, const std::complex<double>* l, int ldl,
                            const std::complex<double>* w, int ldw, std::complex<double>* c, int ldc) {
    const cuDoubleComplex minus_one{-1, 0}, one{1, 0};
    const double real_one = 1;
    if (s == Symmetry::hermitian)
        return cublasZherkx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &minus_one, cu(l), ldl, cu(w), ldw, &real_one,
                            cu(c), ldc);
    return cublasZsyrkx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &minus_one, cu(l), ldl, cu(w), ldw, &one, cu(c), ldc);
}

cudaDataType data_type(float) { return CUDA_R_32F; }
cudaDataType data_type(double) { return CUDA_R_64F; }
cudaDataType data_type(std::complex<float>) { return CUDA_C_32F; }
cudaDataType data_type(std::complex<double>) { return CUDA_C_64F; }

cusolverStatus_t sytrf_size(cusolverDnHandle_t h, int n, float* a, int* lwork) { return cusolverDnSsytrf_bufferSize(h, n, a, n, lwork); }
cusolverStatus_t sytrf_size(cusolverDnHandle_t h, int n, double* a, int* lwork) { return cusolverDnDsytrf_bufferSize(h, n, a, n, lwork); }
cusolverStatus_t sytrf_size(cusolverDnHandle_t h, int n, std::complex<float>* a, int* lwork) { return cusolverDnCsytrf_bufferSize(h, n, cu(a), n, lwork); }
cusolverStatus_t sytrf_size(cusolverDnHandle_t h, int n, std::complex<double>* a, int* lwork) { return cusolverDnZsytrf_bufferSize(h, n, cu(a), n, lwork); }
cusolverStatus_t sytrf(cusolverDnHandle_t h, int n, float* a, int* ipiv, float* work, int lwork, int* info) {
    return cusolverDnSsytrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, ipiv, work, lwork, info);
}
cusolverStatus_t sytrf(cusolverDnHandle_t h, int n, double* a, int* ipiv, double* work, int lwork, int* info) {
    return cusolverDnDsytrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, ipiv, work, lwork, info);
}
cusolverStatus_t sytrf(cusolverDnHandle_t h, int n, std::complex<float>* a, int* ipiv, std::complex<float>* work, int lwork, int* info) {
    return cusolverDnCsytrf(h, CUBLAS_FILL_MODE_LOWER, n, cu(a), n, ipiv, cu(work), lwork, info);
}
cusolverStatus_t sytrf(cusolverDnHandle_t h, int n, std::complex<double>* a, int* ipiv, std::complex<double>* work, int lwork, int* info) {
    return cusolverDnZsytrf(h, CUBLAS_FILL_MODE_LOWER, n, cu(a), n, ipiv, cu(work), lwork, info);
}
cusolverStatus_t getrf_size(cusolverDnHandle_t h, int n, float* a, int* lwork) { return cusolverDnSgetrf_bufferSize(h, n, n, a, n, lwork); }
cusolverStatus_t getrf_size(cusolverDnHandle_t h, int n, double* a, int* lwork) { return cusolverDnDgetrf_bufferSize(h, n, n, a, n, lwork); }
cusolverStatus_t getrf_size(cusolverDnHandle_t h, int n, std::complex<float>* a, int* lwork) { return cusolverDnCgetrf_bufferSize(h, n, n, cu(a), n, lwork); }
cusolverStatus_t getrf_size(cusolverDnHandle_t h, int n, std::complex<double>* a, int* lwork) { return cusolverDnZgetrf_bufferSize(h, n, n, cu(a), n, lwork); }
cusolverStatus_t getrf(cusolverDnHandle_t h, int n, float* a, float* work, int* ipiv, int* info) { return cusolverDnSgetrf(h, n, n, a, n, work, ipiv, info); }
cusolverStatus_t getrf(cusolverDnHandle_t h, int n, double* a, double* work, int* ipiv, int* info) { return cusolverDnDgetrf(h, n, n, a, n, work, ipiv, info); }
cusolverStatus_t getrf(cusolverDnHandle_t h, int n, std::complex<float>* a, std::complex<float>* work, int* ipiv, int* info) {
    return cusolverDnCgetrf(h, n, n, cu(a), n, cu(work), ipiv, info);
}
cusolverStatus_t getrf(cusolverDnHandle_t h, int n, std::complex<double>* a, std::complex<double>* work, int* ipiv, int* info) {
    return cusolverDnZgetrf(h, n, n, cu(a), n, cu(work), ipiv, info);
}
cusolverStatus_t getrs(cusolverDnHandle_t h, int n, int nrhs, const float* a, const int* ipiv, float* b, int ldb, int* info) {
    return cusolverDnSgetrs(h, CUBLAS_OP_N, n, nrhs, a, n, ipiv, b, ldb, info);
}
cusolverStatus_t getrs(cusolverDnHandle_t h, int n, int nrhs, const double* a, const int* ipiv, double* b, int ldb, int* info) {
    return cusolverDnDgetrs(h, CUBLAS_OP_N, n, nrhs, a, n, ipiv, b, ldb, info);
}
cusolverStatus_t getrs(cusolverDnHandle_t h, int n, int nrhs, const std::complex<float>* a, const int* ipiv, std::complex<float>* b, int ldb, int* info) {
    return cusolverDnCgetrs(h, CUBLAS_OP_N, n, nrhs, cu(a), n, ipiv, cu(b), ldb, info);
}
cusolverStatus_t getrs(cusolverDnHandle_t h, int n, int nrhs, const std::complex<double>* a, const int* ipiv, std::complex<double>* b, int ldb, int* info) {
    return cusolverDnZgetrs(h, CUBLAS_OP_N, n, nrhs, cu(a), n, ipiv, cu(b), ldb, info);
}

cublasOperation_t transpose_of(Symmetry s) { return s == Symmetry::hermitian ? CUBLAS_OP_C : CUBLAS_OP_T; }

// C (m x n) -= A (m x k) op(B) (op(B) = B^T or B^H, B: n x k), through cublasGemmEx so that a
// single-precision product may run on TF32 tensor cores.
template <class T>
void gemm_minus(cublasHandle_t h, cublasOperation_t op_b, int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c,
                int ldc, bool tensor_cores) {
    constexpr bool single = std::is_same_v<real_t<T>, float>;
    const cublasComputeType_t compute =
        single ? (tensor_cores ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F) : CUBLAS_COMPUTE_64F;
    const T minus_one(-1), one(1);
    BATCHSOLVE_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, op_b, m, n, k, &minus_one, a, data_type(T{}), lda, b, data_type(T{}), ldb,
                                         &one, c, data_type(T{}), ldc, compute, CUBLAS_GEMM_DEFAULT));
}

// The lower triangle's update C -= L op(W): one ?syrkx / ?herkx, or with TF32 (no ?syrkx takes a
// compute type) above `leaf` two half triangles (recursion) and the square block below them
// as one TF32 GEMM.
template <class T>
void lower_update_split(cublasHandle_t h, Symmetry s, int m, int k, const T* l, int ldl, const T* w, int ldw, T* c, int ldc,
                        bool tensor_cores, int leaf) {
    if (!tensor_cores || m <= leaf) {
        BATCHSOLVE_CUBLAS_CHECK(lower_update(h, s, m, k, l, ldl, w, ldw, c, ldc));
        return;
    }
    const int m1 = m / 2, m2 = m - m1;
    lower_update_split(h, s, m1, k, l, ldl, w, ldw, c, ldc, tensor_cores, leaf);
    gemm_minus(h, transpose_of(s), m2, m1, k, l + m1, ldl, w, ldw, c + m1, ldc, tensor_cores);
    lower_update_split(h, s, m2, k, l + m1, ldl, w + m1, ldw, c + std::size_t(m1) * ldc + m1, ldc, tensor_cores, leaf);
}

CudaResources& prepare(Context& ctx, const char* routine) {
    CudaResources& r = detail::resources_of(ctx, routine);
    BATCHSOLVE_CUBLAS_CHECK(cublasSetPointerMode(r.cublas(), CUBLAS_POINTER_MODE_HOST));
    return r;
}

// ---- the recursive factorisation --------------------------------------------------------------------

template <class T>
void launch_leaf(Symmetry s, int m, T* a, int lda, const void* max_bits, int n_total, int column_offset, int* info,
                 cudaStream_t stream) {
    using D = dev_t<T>;
    using Bits = typename ordered_bits<real_t<T>>::type;
    // The kernel as codegen/ldlt/ldlt_family.hpp describes it (a fixed kernel behind the generator
    // interface): its shared memory and threads come from there, as a generated kernel's would.
    const codegen::ldlt::LdltFamily& family = codegen::ldlt::ldlt_family();
    codegen::ldlt::LdltKernelSpec spec;
    spec.kernel = codegen::ldlt::LdltKernel::diagonal_leaf, spec.precision = precision_v<T>;
    spec.hermitian = s == Symmetry::hermitian && is_complex_v<T>;
    spec.config = family.default_config(spec);
    const codegen::KernelResources launch = family.resources(spec);
    const std::size_t shared = launch.shared_bytes;
    const unsigned threads = unsigned(launch.threads_per_block);
    // Above 48 KB a kernel must opt in to its dynamic shared memory, once per kernel.
    static std::once_flag opted_in[2];
    auto opt_in = [&](auto kernel, std::once_flag& flag) {
        std::call_once(flag, [&] {
            BATCHSOLVE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
        });
    };
    if (s == Symmetry::hermitian && is_complex_v<T>) {
        opt_in(factor_leaf_kernel<D, true>, opted_in[1]);
        factor_leaf_kernel<D, true><<<1, threads, shared, stream>>>(m, dev(a), lda, static_cast<const Bits*>(max_bits),
                                                                        n_total, column_offset, info);
    } else {
        opt_in(factor_leaf_kernel<D, false>, opted_in[0]);
        factor_leaf_kernel<D, false><<<1, threads, shared, stream>>>(m, dev(a), lda, static_cast<const Bits*>(max_bits),
                                                                         n_total, column_offset, info);
    }
    BATCHSOLVE_LAUNCH_CHECK("factor_leaf_kernel");
}

template <class T>
void factor_recursive(CudaResources& r, Symmetry s, int m, T* a, int lda, T* w, const void* max_bits, int n_total,
                      int column_offset, int* info, bool tensor_cores) {
    if (m <= kLeafOrder) {
        launch_leaf(s, m, a, lda, max_bits, n_total, column_offset, info, r.stream());
        return;
    }
    const int n1 = ldlt_detail::split_order(m), n2 = m - n1;
    factor_recursive(r, s, n1, a, lda, w, max_bits, n_total, column_offset, info, tensor_cores);
    T* a21 = a + n1;
    BATCHSOLVE_CUBLAS_CHECK(trsm(r.cublas(), CUBLAS_SIDE_RIGHT, transpose_of(s), n2, n1, a, lda, a21, lda));
    keep_and_scale_kernel<<<dim3(blocks_for(n2), n1), kThreads, 0, r.stream()>>>(n2, n1, dev(a21), lda, dev(a), dev(w), n2);
    BATCHSOLVE_LAUNCH_CHECK("keep_and_scale_kernel");
    T* a22 = a + std::size_t(n1) * lda + n1;
    lower_update_split(r.cublas(), s, n2, n1, a21, lda, w, n2, a22, lda, tensor_cores, blocking_of<T>(r, n_total).update_leaf);
    factor_recursive(r, s, n2, a22, lda, w, max_bits, n_total, column_offset + n1, info, tensor_cores);
}

// Right-looking over block columns of the table's panel order: the diagonal block by the recursion, the
// panel below it by TRSM and scaling, the trailing lower triangle by a rank-panel_order update.
template <class T>
void factor_blocked(CudaResources& r, Symmetry s, int n, T* a, int lda, T* w, const void* max_bits, int* info,
                    bool tensor_cores) {
    const LdltBlocking blocking = blocking_of<T>(r, n);
    for (int k = 0; k < n; k += blocking.panel_order) {
        const int kb = std::min(blocking.panel_order, n - k), m = n - k - kb;
        T* akk = a + std::size_t(k) * lda + k;
        factor_recursive(r, s, kb, akk, lda, w, max_bits, n, k, info, tensor_cores);
        if (m == 0) break;
        T* a21 = akk + kb;
        BATCHSOLVE_CUBLAS_CHECK(trsm(r.cublas(), CUBLAS_SIDE_RIGHT, transpose_of(s), m, kb, akk, lda, a21, lda));
        keep_and_scale_kernel<<<dim3(blocks_for(m), kb), kThreads, 0, r.stream()>>>(m, kb, dev(a21), lda, dev(akk), dev(w), m);
        BATCHSOLVE_LAUNCH_CHECK("keep_and_scale_kernel");
        lower_update_split(r.cublas(), s, m, kb, a21, lda, w, m, akk + std::size_t(kb) * lda + kb, lda, tensor_cores, blocking.update_leaf);
    }
}

}  // namespace

template <class T>
BATCHSOLVE_LDLT_FACTOR(T) {
    CudaResources& r = prepare(ctx, "sytrf_nopiv");
    DeviceGuard guard(r.device_);
    r.require_device_memory(a, "sytrf_nopiv", "a");
    r.require_device_memory(info, "sytrf_nopiv", "info");
    BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), r.stream()));
    if (n == 0) return;
    using Bits = typename ordered_bits<real_t<T>>::type;
    auto* max_bits = static_cast<Bits*>(workspace);
    T* w = reinterpret_cast<T*>(static_cast<char*>(workspace) + ldlt_detail::align_up(sizeof(double)));
    BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(max_bits, 0, sizeof(Bits), r.stream()));
    max_abs_lower_kernel<<<dim3(blocks_for(n), unsigned((n + kMaxAbsColumns - 1) / kMaxAbsColumns)), kThreads, 0,
                           r.stream()>>>(n, dev(a), lda, max_bits);
    BATCHSOLVE_LAUNCH_CHECK("max_abs_lower_kernel");
    factor_blocked(r, s, n, a, lda, w, max_bits, info, tensor_cores && std::is_same_v<real_t<T>, float>);
}

template <class T>
BATCHSOLVE_LDLT_SOLVE(T) {
    CudaResources& r = prepare(ctx, "sytrs_nopiv");
    DeviceGuard guard(r.device_);
    if (nrhs == 1) BATCHSOLVE_CUBLAS_CHECK(trsv(r.cublas(), CUBLAS_OP_N, n, a, lda, b));
    else BATCHSOLVE_CUBLAS_CHECK(trsm(r.cublas(), CUBLAS_SIDE_LEFT, CUBLAS_OP_N, n, nrhs, a, lda, b, ldb));
    scale_rows_kernel<<<dim3(blocks_for(n), nrhs), kThreads, 0, r.stream()>>>(n, nrhs, dev(a), lda, dev(b), ldb);
    BATCHSOLVE_LAUNCH_CHECK("scale_rows_kernel");
    if (nrhs == 1) BATCHSOLVE_CUBLAS_CHECK(trsv(r.cublas(), transpose_of(s), n, a, lda, b));
    else BATCHSOLVE_CUBLAS_CHECK(trsm(r.cublas(), CUBLAS_SIDE_LEFT, transpose_of(s), n, nrhs, a, lda, b, ldb));
}

template <class Hi, class Lo>
BATCHSOLVE_LDLT_EXPAND_LOWER(Hi, Lo) {
    CudaResources& r = prepare(ctx, "sysv_mixed");
    DeviceGuard guard(r.device_);
    // sysv_mixed's first step: its factor's cuBLAS kernels start loading beside the call (context.cu).
    if constexpr (std::is_same_v<Lo, float> || std::is_same_v<Lo, double>)
        detail::start_library_warm_up_for_solver(r.device_, std::is_same_v<Lo, float>);
    const unsigned tiles = unsigned((npad + kTile - 1) / kTile);
    const dim3 grid(tiles, tiles), block(kTile, kTileRows);
    if (s == Symmetry::hermitian && is_complex_v<Hi>)
        expand_lower_kernel<dev_t<Hi>, dev_t<Lo>, true><<<grid, block, 0, r.stream()>>>(n, dev(a), lda, npad, dev(dst), ldd, pad_scale, overflow);
    else
        expand_lower_kernel<dev_t<Hi>, dev_t<Lo>, false><<<grid, block, 0, r.stream()>>>(n, dev(a), lda, npad, dev(dst), ldd, pad_scale, overflow);
    BATCHSOLVE_LAUNCH_CHECK("expand_lower_kernel");
}

template <class T>
BATCHSOLVE_LDLT_RBT_MATRIX(T) {
    CudaResources& r = prepare(ctx, "sysv_mixed");
    DeviceGuard guard(r.device_);
    for (int level = 0; level < depth; ++level) {
        const int m = npad >> level;
        rbt_matrix_kernel<<<dim3(blocks_for(npad / 2), unsigned(npad / 2)), kThreads, 0, r.stream()>>>(
            npad, m, rd + std::size_t(level) * npad, dev(a), lda);
        BATCHSOLVE_LAUNCH_CHECK("rbt_matrix_kernel");
    }
}

template <class T>
BATCHSOLVE_LDLT_RBT_VECTORS(T) {
    CudaResources& r = prepare(ctx, "sysv_mixed");
    DeviceGuard guard(r.device_);
    for (int step = 0; step < depth; ++step) {
        const int level = transpose ? step : depth - 1 - step;  // U^T: W_1^T first; U: W_d first
        rbt_vectors_kernel<<<dim3(blocks_for(npad / 2), nrhs), kThreads, 0, r.stream()>>>(
            transpose, npad, npad >> level, rd + std::size_t(level) * npad, dev(x), ldx);
        BATCHSOLVE_LAUNCH_CHECK("rbt_vectors_kernel");
    }
}

// ---- the pivoted fallback ----------------------------------------------------------------------------

namespace {

// $BATCHSOLVE_LDLT_TRACE set (not empty): the Bunch-Kaufman route's outcome on stderr (sytrf's and
// sytrs's info, whether the solution had Inf/NaN, the first pivots), to diagnose a fallback on a GPU.
void trace_pivoted(int n, int nrhs, int sytrf_info, int sytrs_info, int non_finite, const int* ipiv, cudaStream_t stream) {
    static const bool on = [] {
        const char* v = std::getenv("BATCHSOLVE_LDLT_TRACE");
        return v != nullptr && *v != '\0';
    }();
    if (!on) return;
    std::vector<int> pivots(std::size_t(std::min(n, 8)));
    if (!pivots.empty()) {
        BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(pivots.data(), ipiv, pivots.size() * sizeof(int), cudaMemcpyDeviceToHost, stream));
        BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    std::string text;
    for (int p : pivots) text += " " + std::to_string(p);
    std::fprintf(stderr, "batchsolve ldlt pivoted: n %d nrhs %d sytrf info %d sytrs info %d non-finite %d ipiv[0:8]%s\n", n,
                 nrhs, sytrf_info, sytrs_info, non_finite, text.c_str());
}

// The pieces of the pivoted fallback's workspace: a full copy of A, pivots (32- and 64-bit), info and
// a non-finite flag, the right-hand sides packed with leading dimension n (sytrs solves there: the
// call then has exactly the n, nrhs and ldb = n its buffer size was queried for, and X is written only
// once a solution is known to be finite), and cuSOLVER's own buffer (the largest of sytrf's, sytrs's
// and getrf's).
template <class T>
struct PivotedLayout {
    std::size_t copy = 0, ipiv = 0, ipiv64 = 0, info = 0, flag = 0, rhs = 0, library = 0, library_bytes = 0,
                host_bytes = 0, total = 0;
    PivotedLayout(CudaResources& r, int n, int nrhs) {
        using ldlt_detail::align_up;
        std::size_t at = 0;
        copy = at, at += align_up(std::size_t(n) * n * sizeof(T));
        ipiv = at, at += align_up(std::size_t(n) * sizeof(int));
        ipiv64 = at, at += align_up(std::size_t(n) * sizeof(std::int64_t));
        info = at, at += align_up(sizeof(int));
        flag = at, at += align_up(sizeof(int));
        rhs = at, at += align_up(std::size_t(n) * std::max(1, nrhs) * sizeof(T));
        int lwork_sytrf = 0, lwork_getrf = 0;
        // The size queries read no data, but a library may refuse null pointers: hand them scratch.
        void* dummy = r.scratch(256);
        T* dummy_t = static_cast<T*>(dummy);
        BATCHSOLVE_CUSOLVER_CHECK(sytrf_size(r.cusolver(), std::max(1, n), dummy_t, &lwork_sytrf));
        BATCHSOLVE_CUSOLVER_CHECK(getrf_size(r.cusolver(), std::max(1, n), dummy_t, &lwork_getrf));
        std::size_t sytrs_device = 0;
        BATCHSOLVE_CUSOLVER_CHECK(cusolverDnXsytrs_bufferSize(r.cusolver(), CUBLAS_FILL_MODE_LOWER, n, std::max(1, nrhs),
                                                              data_type(T{}), dummy, std::max(1, n),
                                                              static_cast<const std::int64_t*>(dummy), data_type(T{}), dummy,
                                                              std::max(1, n), &sytrs_device, &host_bytes));
        library_bytes = std::max({std::size_t(lwork_sytrf) * sizeof(T), std::size_t(lwork_getrf) * sizeof(T), sytrs_device,
                                  std::size_t(1)});
        library = at, at += align_up(library_bytes);
        total = at;
    }
};

// Whether cuSOLVER's sytrf/sytrs treat complex input as complex symmetric (A^T = A), checked once
// per process on a 2 x 2 system whose symmetric and Hermitian readings have different solutions.
template <class T>
bool sytrf_is_complex_symmetric(CudaResources& r) {
    if constexpr (!is_complex_v<T>) {
        (void)r;
        return true;
    } else {
        static std::once_flag once;
        static bool symmetric = false;
        std::call_once(once, [&] {
            // A = [1+i 2; 2 3-i] (lower stored), x = (1, 1): b = A x = (3+i, 5-i) when A^T = A. Read as
            // Hermitian (real diagonal, A12 = conj(A21)) the solution would differ.
            const T host_a[4] = {T(1, 1), T(2, 0), T(0, 0), T(3, -1)};
            T host_b[2] = {T(3, 1), T(5, -1)};
            PivotedLayout<T> layout(r, 2, 1);
            std::size_t bytes = layout.total + ldlt_detail::align_up(sizeof(host_b));
            void* memory = detail::device_allocate(bytes, "sytrf probe");
            char* base = static_cast<char*>(memory);
            T* a = reinterpret_cast<T*>(base + layout.copy);
            T* b = reinterpret_cast<T*>(base + layout.total);
            int* info = reinterpret_cast<int*>(base + layout.info);
            std::vector<char> host(layout.host_bytes + 1);
            bool ok = false;
            try {
                BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(a, host_a, sizeof(host_a), cudaMemcpyHostToDevice, r.stream()));
                BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(b, host_b, sizeof(host_b), cudaMemcpyHostToDevice, r.stream()));
                BATCHSOLVE_CUSOLVER_CHECK(sytrf(r.cusolver(), 2, a, reinterpret_cast<int*>(base + layout.ipiv),
                                                reinterpret_cast<T*>(base + layout.library), int(layout.library_bytes / sizeof(T)), info));
                widen_pivots_kernel<<<1, 32, 0, r.stream()>>>(2, reinterpret_cast<int*>(base + layout.ipiv),
                                                              reinterpret_cast<std::int64_t*>(base + layout.ipiv64));
                BATCHSOLVE_CUSOLVER_CHECK(cusolverDnXsytrs(r.cusolver(), CUBLAS_FILL_MODE_LOWER, 2, 1, data_type(T{}), a, 2,
                                                           reinterpret_cast<std::int64_t*>(base + layout.ipiv64), data_type(T{}),
                                                           b, 2, base + layout.library, layout.library_bytes, host.data(),
                                                           layout.host_bytes, info));
                BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(host_b, b, sizeof(host_b), cudaMemcpyDeviceToHost, r.stream()));
                BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r.stream()));
                ok = std::abs(host_b[0] - T(1)) < 1e-4 && std::abs(host_b[1] - T(1)) < 1e-4;
            } catch (...) {
                cudaFree(memory);
                throw;
            }
            cudaFree(memory);
            symmetric = ok;
        });
        return symmetric;
    }
}

}  // namespace

template <class T>
BATCHSOLVE_LDLT_PIVOTED_WORKSPACE_BYTES(T) {
    CudaResources& r = prepare(ctx, "sysv_mixed_workspace_size");
    DeviceGuard guard(r.device_);
    return PivotedLayout<T>(r, n, nrhs).total;
}

template <class T>
BATCHSOLVE_LDLT_PIVOTED_SOLVE(T) {
    CudaResources& r = prepare(ctx, "sysv_mixed");
    DeviceGuard guard(r.device_);
    const PivotedLayout<T> layout(r, n, nrhs);
    char* base = static_cast<char*>(workspace);
    T* copy = reinterpret_cast<T*>(base + layout.copy);
    int* ipiv = reinterpret_cast<int*>(base + layout.ipiv);
    auto* ipiv64 = reinterpret_cast<std::int64_t*>(base + layout.ipiv64);
    int* info = reinterpret_cast<int*>(base + layout.info);
    T* work = reinterpret_cast<T*>(base + layout.library);
    const int lwork = int(layout.library_bytes / sizeof(T));
    int* non_finite = reinterpret_cast<int*>(base + layout.flag);
    T* rhs = reinterpret_cast<T*>(base + layout.rhs);
    const bool use_sytrf = !(is_complex_v<T> && s == Symmetry::hermitian) && sytrf_is_complex_symmetric<T>(r);
    if (use_sytrf) {
        copy_matrix(n, n, a, lda, copy, n, ctx);
        BATCHSOLVE_CUSOLVER_CHECK(sytrf(r.cusolver(), n, copy, ipiv, work, lwork, info));
        BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(info_host, info, sizeof(int), cudaMemcpyDeviceToHost, r.stream()));
        BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r.stream()));
        const int sytrf_info = *info_host;
        if (sytrf_info == 0) {
            widen_pivots_kernel<<<blocks_for(n), kThreads, 0, r.stream()>>>(n, ipiv, ipiv64);
            BATCHSOLVE_LAUNCH_CHECK("widen_pivots_kernel");
            copy_matrix(n, nrhs, x, ldx, rhs, n, ctx);  // X holds B (sysv_mixed's pivoted step)
            std::vector<char> host(layout.host_bytes + 1);
            BATCHSOLVE_CUSOLVER_CHECK(cusolverDnXsytrs(r.cusolver(), CUBLAS_FILL_MODE_LOWER, n, nrhs, data_type(T{}), copy, n,
                                                       ipiv64, data_type(T{}), rhs, n, work, layout.library_bytes,
                                                       host.data(), layout.host_bytes, info));
            BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(non_finite, 0, sizeof(int), r.stream()));
            flag_non_finite_kernel<<<dim3(blocks_for(n), nrhs), kThreads, 0, r.stream()>>>(n, dev(rhs), n, non_finite);
            BATCHSOLVE_LAUNCH_CHECK("flag_non_finite_kernel");
            int status[2] = {0, 0};  // sytrs's info, the non-finite flag (adjacent pieces: two copies)
            BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(&status[0], info, sizeof(int), cudaMemcpyDeviceToHost, r.stream()));
            BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(&status[1], non_finite, sizeof(int), cudaMemcpyDeviceToHost, r.stream()));
            BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r.stream()));
            trace_pivoted(n, nrhs, sytrf_info, status[0], status[1], ipiv, r.stream());
            if (status[0] == 0 && status[1] == 0) {
                copy_matrix(n, nrhs, rhs, n, x, ldx, ctx);
                BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r.stream()));
                return SolvePath::pivoted_high_sytrf;
            }
            // Bunch-Kaufman gave no finite solution of a matrix it factored without a zero pivot: the
            // H100/H200 suites met this (cuSOLVER's sytrf + Xsytrs, z at n = 2 and 34, d at n = 96, on
            // zero-diagonal saddle points that LAPACK's ?sytrf/?sytrs solve). LU with partial pivoting
            // below solves any nonsingular matrix; X still holds B.
        } else {
            trace_pivoted(n, nrhs, sytrf_info, -1, -1, ipiv, r.stream());
            // A zero pivot of D: singular in exact arithmetic, unless sytrf misjudged; LU decides.
        }
    }
    // LU on the full matrix: Hermitian input (cuSOLVER has no hetrf), a sytrf that read complex input
    // as Hermitian, or a Bunch-Kaufman route that gave no finite solution.
    int* overflow = info;  // T -> T cannot overflow; getrf overwrites the slot with its info
    const unsigned tiles = unsigned((n + kTile - 1) / kTile);
    if (s == Symmetry::hermitian && is_complex_v<T>)
        expand_lower_kernel<dev_t<T>, dev_t<T>, true><<<dim3(tiles, tiles), dim3(kTile, kTileRows), 0, r.stream()>>>(
            n, dev(a), lda, n, dev(copy), n, 1.0, overflow);
    else
        expand_lower_kernel<dev_t<T>, dev_t<T>, false><<<dim3(tiles, tiles), dim3(kTile, kTileRows), 0, r.stream()>>>(
            n, dev(a), lda, n, dev(copy), n, 1.0, overflow);
    BATCHSOLVE_LAUNCH_CHECK("expand_lower_kernel");
    BATCHSOLVE_CUSOLVER_CHECK(getrf(r.cusolver(), n, copy, work, ipiv, info));
    BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(info_host, info, sizeof(int), cudaMemcpyDeviceToHost, r.stream()));
    BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r.stream()));
    if (*info_host != 0) return SolvePath::pivoted_high_getrf;
    BATCHSOLVE_CUSOLVER_CHECK(getrs(r.cusolver(), n, nrhs, copy, ipiv, x, ldx, info));
    return SolvePath::pivoted_high_getrf;
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_LDLT_ROUTINES)

}  // namespace batchsolve::cuda_backend

namespace batchsolve::codegen::ldlt {

// The blocking the kernels above are compiled with: the leaf order of the recursion and the block size.
const LdltFamily& ldlt_family() {
    static const LdltFamily family({ldlt_detail::kLeafOrder, cuda_backend::kThreads});
    return family;
}

}  // namespace batchsolve::codegen::ldlt
