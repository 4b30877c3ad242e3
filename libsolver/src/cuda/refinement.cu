// The CUDA backend of the mixed-precision refinement's primitives (core/refinement_backend.hpp), for
// posv_mixed and sysv_mixed alike: element-wise conversions and corrections, the working-precision
// residual through cuBLAS SYMM/SYMV (HEMM/HEMV for Hermitian data), |A||x| from the stored triangle
// in 32 x 32 tiles, and one-block reductions for the norms. Nothing returns to the host here; core
// fetches the few norms it tests.
#include <algorithm>
#include <complex>
#include <cstddef>

#include "../core/refinement_backend.hpp"
#include "device_scalar.cuh"
#include "resources.hpp"

namespace batchsolve::cuda_backend {

using detail::CudaResources;
using detail::DeviceGuard;

namespace {

// Threads of the element-wise kernels and of the one-block reductions (block_max's shared array).
constexpr int kThreads = 256;
// Tile of the |A||x| kernel: 32 x 32 entries, 32 x 8 threads (a warp reads 32 rows of one column).
constexpr int kTile = 32;
constexpr int kTileRows = 8;

unsigned blocks_for(long long count, int threads = kThreads) { return unsigned((count + threads - 1) / threads); }

CudaResources& prepare(Context& ctx, const char* routine) {
    CudaResources& r = detail::resources_of(ctx, routine);
    BATCHSOLVE_CUBLAS_CHECK(cublasSetPointerMode(r.cublas(), CUBLAS_POINTER_MODE_HOST));
    return r;
}

constexpr const char* kRoutine = "mixed-precision refinement";

// ---- kernels ------------------------------------------------------------------------------------------

template <class H, class L>
__global__ void convert_down_kernel(int rows, int rows_padded, const H* src, int lds, L* dst, int ldd, int* overflow) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (i >= rows_padded) return;
    const L v = i < rows ? convert_to<L>(src[std::size_t(j) * lds + i]) : L(0);
    if (!finite_value(v)) *overflow = 1;
    dst[std::size_t(j) * ldd + i] = v;
}

template <class H, class L>
__global__ void add_correction_kernel(int rows, const L* d, int ldd, H* x, int ldx) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (i >= rows) return;
    const L v = d[std::size_t(j) * ldd + i];
    if constexpr (is_complex_dev<H>) x[std::size_t(j) * ldx + i] += H(v.real(), v.imag());
    else x[std::size_t(j) * ldx + i] += H(v);
}

// The maximum over the block (blockDim.x == kThreads), NaN if any value is.
template <class R>
__device__ R block_max(R v) {
    __shared__ R partial[kThreads];
    partial[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) partial[threadIdx.x] = max_nan(partial[threadIdx.x], partial[threadIdx.x + s]);
        __syncthreads();
    }
    return partial[0];
}

template <class D>
__global__ void column_max_abs_kernel(int rows, const D* x, int ldx, real_of_t<D>* out) {
    using R = real_of_t<D>;
    const D* col = x + std::size_t(blockIdx.x) * ldx;
    R m = 0;
    for (int i = threadIdx.x; i < rows; i += blockDim.x) m = max_nan(m, abs_of(col[i]));
    m = block_max(m);
    if (threadIdx.x == 0) out[blockIdx.x] = m;
}

// sums += |A| |x| (x == nullptr: ones) from the stored triangle: a tile of the triangle adds its row
// sums (|a_ij| |x_j| into row i) and, off the diagonal, its mirrored column sums (|a_ij| |x_i| into
// row j).
template <class D>
__global__ void abs_times_kernel(bool lower, int n, const D* a, int lda, const D* x, real_of_t<D>* sums) {
    using R = real_of_t<D>;
    if (lower ? blockIdx.x < blockIdx.y : blockIdx.x > blockIdx.y) return;  // tiles of the other triangle
    __shared__ R row_part[kTileRows][kTile];
    const int i = blockIdx.x * kTile + threadIdx.x;
    const R xi = (x == nullptr || i >= n) ? R(1) : abs_of(x[i]);
    R row_sum = 0;
    for (int c = threadIdx.y; c < kTile; c += kTileRows) {
        const int j = blockIdx.y * kTile + c;
        R column_value = 0;
        if (i < n && j < n && (lower ? i >= j : i <= j)) {
            const R v = abs_of(a[std::size_t(j) * lda + i]);
            row_sum += v * (x == nullptr ? R(1) : abs_of(x[j]));
            if (i != j) column_value = v * xi;
        }
        for (int offset = 16; offset > 0; offset /= 2) column_value += __shfl_down_sync(0xffffffffu, column_value, offset);
        if (threadIdx.x == 0 && j < n && column_value != R(0)) atomicAdd(sums + j, column_value);
    }
    row_part[threadIdx.y][threadIdx.x] = row_sum;
    __syncthreads();
    if (threadIdx.y == 0 && i < n) {
        R total = 0;
        for (int k = 0; k < kTileRows; ++k) total += row_part[k][threadIdx.x];
        if (total != R(0)) atomicAdd(sums + i, total);
    }
}

template <class D>
__global__ void componentwise_ratio_kernel(int n, const D* r, const real_of_t<D>* s, const D* b, real_of_t<D>* out) {
    using R = real_of_t<D>;
    R m = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const R num = abs_of(r[i]);
        m = max_nan(m, num == R(0) ? R(0) : num / (s[i] + abs_of(b[i])));
    }
    m = block_max(m);
    if (threadIdx.x == 0) *out = m;
}

template <class R>
__global__ void max_of_kernel(int n, const R* v, R* out) {
    R m = n > 0 ? v[0] : R(0);
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = max_nan(m, v[i]);
    m = block_max(m);
    if (threadIdx.x == 0) *out = m;
}

template <class D>
__global__ void fill_nan_kernel(int rows, D* x, int ldx) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows) x[std::size_t(blockIdx.y) * ldx + i] = nan_of<D>();
}

template <class H, class L>
__global__ void convert_up_kernel(int rows, const L* src, int lds, H* dst, int ldd) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const L v = src[std::size_t(blockIdx.y) * lds + i];
    if constexpr (is_complex_dev<H>) dst[std::size_t(blockIdx.y) * ldd + i] = H(v.real(), v.imag());
    else dst[std::size_t(blockIdx.y) * ldd + i] = H(v);
}

template <class D>
__global__ void scale_add_kernel(int n, D alpha, const D* x, D beta, D* y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const D base = beta == D(0) ? D(0) : beta * y[i];
    y[i] = alpha == D(0) ? base : base + alpha * x[i];
}

// ---- the fused classical pass (core/refinement.hpp's Driver, options.fused_pass) ----------------------------

template <class H, class L>
__device__ __forceinline__ H widen(L v) {
    if constexpr (is_complex_dev<H>) return H(v.real(), v.imag());
    else return H(v);
}
template <class D>
__device__ __forceinline__ void atomic_add_dev(D* p, D v) {
    if constexpr (is_complex_dev<D>) {
        auto* parts = reinterpret_cast<real_of_t<D>*>(p);
        atomicAdd(parts, v.real());
        atomicAdd(parts + 1, v.imag());
    } else {
        atomicAdd(p, v);
    }
}
// *p = max(*p, v) for v >= 0 or NaN (sign cleared; the working precisions' reals are double): the bits of non-negative IEEE values order as the
// values do, and a NaN's lie above infinity's, so the maximum keeps NaN as max_nan does.
__device__ __forceinline__ void atomic_max_nonneg(double* p, double v) {
    atomicMax(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(__double_as_longlong(fabs(v))));
}

// acc += A (x + d) from the stored triangle: block (s, J) takes the stored 32 x 32 tiles (I, J) of tile
// column J with I in [s strip, (s + 1) strip) (lower: I >= J, upper: I <= J), threads as the |A||x|
// kernel's (a warp reads 32 rows of one column: 256 coalesced bytes of double). Each tile adds its row
// sums a_ij (x + d)_j into acc_i at once (one atomic per row and tile) and keeps its mirrored column
// sums op(a_ij) (x + d)_i (op: conj for Hermitian A) in registers across the strip, added into acc_j at
// the end: A is read once, x + d formed on the fly (the same sums fused_finish stores). The order of
// the atomic additions varies from run to run: acc's last bits may, its error bound does not.
template <class D, class L>
__global__ void __launch_bounds__(kTile * kTileRows)
    fused_product_kernel(bool lower, bool hermitian, int n, const D* a, int lda, const D* x, const L* d, D* acc,
                         real_of_t<D>* status, int strip) {
    constexpr int kColumns = kTile / kTileRows;  // columns of a tile per thread
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) status[0] = status[1] = status[2] = 0;
    const int tiles = (n + kTile - 1) / kTile, tile_col = blockIdx.y;
    int first = blockIdx.x * strip, last = min(tiles, first + strip);  // tile rows [first, last)
    if (lower) first = max(first, tile_col);
    else last = min(last, tile_col + 1);
    if (first >= last) return;
    __shared__ D row_part[kTileRows][kTile];
    const int tx = threadIdx.x, ty = threadIdx.y;
    D xj[kColumns], mirrored[kColumns];
#pragma unroll
    for (int u = 0; u < kColumns; ++u) {
        const int j = tile_col * kTile + ty + kTileRows * u;
        xj[u] = j < n ? x[j] + widen<D>(d[j]) : D(0);
        mirrored[u] = D(0);
    }
    for (int tile_row = first; tile_row < last; ++tile_row) {
        const int i = tile_row * kTile + tx;
        const D xi = i < n ? x[i] + widen<D>(d[i]) : D(0);
        D v[kColumns];
#pragma unroll
        for (int u = 0; u < kColumns; ++u) {  // every load of the tile in flight before the sums
            const int j = tile_col * kTile + ty + kTileRows * u;
            const bool in = i < n && j < n && (lower ? i >= j : i <= j);
            v[u] = in ? a[std::size_t(j) * lda + i] : D(0);
        }
        D row_sum = D(0);
#pragma unroll
        for (int u = 0; u < kColumns; ++u) {
            const int j = tile_col * kTile + ty + kTileRows * u;
            if (i == j) {
                if (hermitian) v[u] = real_part_only(v[u]);
                row_sum += v[u] * xj[u];
            } else {
                row_sum += v[u] * xj[u];
                mirrored[u] += conj_if(v[u], hermitian) * xi;
            }
        }
        row_part[ty][tx] = row_sum;
        __syncthreads();
        if (ty == 0 && i < n) {
            D total = D(0);
#pragma unroll
            for (int k = 0; k < kTileRows; ++k) total += row_part[k][tx];
            atomic_add_dev(acc + i, total);
        }
        __syncthreads();
    }
#pragma unroll
    for (int u = 0; u < kColumns; ++u) {
        D m = mirrored[u];
        if constexpr (is_complex_dev<D>) {
            real_of_t<D> re = m.real(), im = m.imag();
            for (int o = 16; o > 0; o /= 2) re += __shfl_down_sync(0xffffffffu, re, o), im += __shfl_down_sync(0xffffffffu, im, o);
            m = D(re, im);
        } else {
            for (int o = 16; o > 0; o /= 2) m += __shfl_down_sync(0xffffffffu, m, o);
        }
        const int j = tile_col * kTile + ty + kTileRows * u;
        if (tx == 0 && j < n) atomic_add_dev(acc + j, m);
    }
}

// x += d, r = b - acc, acc = 0, d = r rounded down (status[2] = 1 where not finite), and the two
// maxima into status[0] (|r|) and status[1] (|x|) through one atomic per block each.
template <class D, class L>
__global__ void fused_finish_kernel(int n, const D* b, D* acc, D* x, L* d, D* r, real_of_t<D>* status) {
    using R = real_of_t<D>;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    R r_abs = 0, x_abs = 0;
    if (i < n) {
        const D xn = x[i] + widen<D>(d[i]);
        x[i] = xn;
        const D ri = b[i] - acc[i];
        r[i] = ri;
        acc[i] = D(0);
        const L low = convert_to<L>(ri);
        if (!finite_value(low)) status[2] = R(1);
        d[i] = low;
        r_abs = abs_of(ri), x_abs = abs_of(xn);
    }
    r_abs = block_max(r_abs);
    __syncthreads();  // block_max's shared array is reused
    x_abs = block_max(x_abs);
    if (threadIdx.x == 0) {
        atomic_max_nonneg(status, r_abs);
        atomic_max_nonneg(status + 1, x_abs);
    }
}

// ---- cuBLAS by type: R (n x nrhs) -= A X ----------------------------------------------------------------
// SYMV / HEMV for one right-hand side (a matrix-vector product reads A once at full bandwidth, which
// SYMM with one column does not promise).

cublasFillMode_t fill_of(Uplo u) { return u == Uplo::lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }

cublasStatus_t symm_minus(cublasHandle_t h, cublasFillMode_t fill, Symmetry, int n, int nrhs, const float* a, int lda,
                          const float* x, int ldx, float* r, int ldr) {
    const float minus_one = -1, one = 1;
    if (nrhs == 1) return cublasSsymv(h, fill, n, &minus_one, a, lda, x, 1, &one, r, 1);
    return cublasSsymm(h, CUBLAS_SIDE_LEFT, fill, n, nrhs, &minus_one, a, lda, x, ldx, &one, r, ldr);
}
cublasStatus_t symm_minus(cublasHandle_t h, cublasFillMode_t fill, Symmetry, int n, int nrhs, const double* a, int lda,
                          const double* x, int ldx, double* r, int ldr) {
    const double minus_one = -1, one = 1;
    if (nrhs == 1) return cublasDsymv(h, fill, n, &minus_one, a, lda, x, 1, &one, r, 1);
    return cublasDsymm(h, CUBLAS_SIDE_LEFT, fill, n, nrhs, &minus_one, a, lda, x, ldx, &one, r, ldr);
}
cublasStatus_t symm_minus(cublasHandle_t h, cublasFillMode_t fill, Symmetry s, int n, int nrhs, const std::complex<float>* a,
                          int lda, const std::complex<float>* x, int ldx, std::complex<float>* r, int ldr) {
    const cuComplex minus_one{-1, 0}, one{1, 0};
    const bool herm = s == Symmetry::hermitian;
    if (nrhs == 1) return (herm ? cublasChemv : cublasCsymv)(h, fill, n, &minus_one, cu(a), lda, cu(x), 1, &one, cu(r), 1);
    return (herm ? cublasChemm : cublasCsymm)(h, CUBLAS_SIDE_LEFT, fill, n, nrhs, &minus_one, cu(a), lda, cu(x), ldx, &one,
                                               cu(r), ldr);
}
cublasStatus_t symm_minus(cublasHandle_t h, cublasFillMode_t fill, Symmetry s, int n, int nrhs,
                          const std::complex<double>* a, int lda, const std::complex<double>* x, int ldx,
                          std::complex<double>* r, int ldr) {
    const cuDoubleComplex minus_one{-1, 0}, one{1, 0};
    const bool herm = s == Symmetry::hermitian;
    if (nrhs == 1) return (herm ? cublasZhemv : cublasZsymv)(h, fill, n, &minus_one, cu(a), lda, cu(x), 1, &one, cu(r), 1);
    return (herm ? cublasZhemm : cublasZsymm)(h, CUBLAS_SIDE_LEFT, fill, n, nrhs, &minus_one, cu(a), lda, cu(x), ldx, &one,
                                               cu(r), ldr);
}

// y = alpha A x + beta y (one vector).
cublasStatus_t symv(cublasHandle_t h, cublasFillMode_t fill, Symmetry, int n, float alpha, const float* a, int lda,
                    const float* x, float beta, float* y) {
    return cublasSsymv(h, fill, n, &alpha, a, lda, x, 1, &beta, y, 1);
}
cublasStatus_t symv(cublasHandle_t h, cublasFillMode_t fill, Symmetry, int n, double alpha, const double* a, int lda,
                    const double* x, double beta, double* y) {
    return cublasDsymv(h, fill, n, &alpha, a, lda, x, 1, &beta, y, 1);
}
cublasStatus_t symv(cublasHandle_t h, cublasFillMode_t fill, Symmetry s, int n, std::complex<float> alpha,
                    const std::complex<float>* a, int lda, const std::complex<float>* x, std::complex<float> beta,
                    std::complex<float>* y) {
    return (s == Symmetry::hermitian ? cublasChemv : cublasCsymv)(h, fill, n, cu(&alpha), cu(a), lda, cu(x), 1, cu(&beta),
                                                                  cu(y), 1);
}
cublasStatus_t symv(cublasHandle_t h, cublasFillMode_t fill, Symmetry s, int n, std::complex<double> alpha,
                    const std::complex<double>* a, int lda, const std::complex<double>* x, std::complex<double> beta,
                    std::complex<double>* y) {
    return (s == Symmetry::hermitian ? cublasZhemv : cublasZsymv)(h, fill, n, cu(&alpha), cu(a), lda, cu(x), 1, cu(&beta),
                                                                  cu(y), 1);
}

cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, float alpha, const float* a, int lda,
                    const float* x, float beta, float* y) {
    return cublasSgemv(h, op, m, n, &alpha, a, lda, x, 1, &beta, y, 1);
}
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, double alpha, const double* a, int lda,
                    const double* x, double beta, double* y) {
    return cublasDgemv(h, op, m, n, &alpha, a, lda, x, 1, &beta, y, 1);
}
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, std::complex<float> alpha,
                    const std::complex<float>* a, int lda, const std::complex<float>* x, std::complex<float> beta,
                    std::complex<float>* y) {
    return cublasCgemv(h, op, m, n, cu(&alpha), cu(a), lda, cu(x), 1, cu(&beta), cu(y), 1);
}
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, std::complex<double> alpha,
                    const std::complex<double>* a, int lda, const std::complex<double>* x, std::complex<double> beta,
                    std::complex<double>* y) {
    return cublasZgemv(h, op, m, n, cu(&alpha), cu(a), lda, cu(x), 1, cu(&beta), cu(y), 1);
}

}  // namespace

template <class Hi, class Lo>
BATCHSOLVE_REFINEMENT_CONVERT_DOWN(Hi, Lo) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    if (rows_padded == 0 || cols == 0) return;
    convert_down_kernel<<<dim3(blocks_for(rows_padded), cols), kThreads, 0, r.stream()>>>(rows, rows_padded, dev(src), lds,
                                                                                          dev(dst), ldd, overflow);
    BATCHSOLVE_LAUNCH_CHECK("convert_down_kernel");
}

template <class Hi, class Lo>
BATCHSOLVE_REFINEMENT_ADD_CORRECTION(Hi, Lo) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    if (rows == 0 || cols == 0) return;
    add_correction_kernel<<<dim3(blocks_for(rows), cols), kThreads, 0, r.stream()>>>(rows, dev(d), ldd, dev(x), ldx);
    BATCHSOLVE_LAUNCH_CHECK("add_correction_kernel");
}

template <class T>
BATCHSOLVE_REFINEMENT_COPY_MATRIX(T) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    if (rows == 0 || cols == 0) return;
    BATCHSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(dst, std::size_t(ldd) * sizeof(T), src, std::size_t(lds) * sizeof(T),
                                            std::size_t(rows) * sizeof(T), cols, cudaMemcpyDeviceToDevice, r.stream()));
}

template <class T>
BATCHSOLVE_REFINEMENT_RESIDUAL(T) {
    copy_matrix(n, nrhs, b, ldb, res, ldr, ctx);
    if (n == 0 || nrhs == 0) return;
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    BATCHSOLVE_CUBLAS_CHECK(symm_minus(r.cublas(), fill_of(uplo), s, n, nrhs, a, lda, x, ldx, res, ldr));
}

template <class T>
BATCHSOLVE_REFINEMENT_ABS_TIMES(T) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    if (n == 0) return;
    BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(sums, 0, std::size_t(n) * sizeof(real_t<T>), r.stream()));
    const unsigned tiles = unsigned((n + kTile - 1) / kTile);
    abs_times_kernel<<<dim3(tiles, tiles), dim3(kTile, kTileRows), 0, r.stream()>>>(uplo == Uplo::lower, n, dev(a), lda,
                                                                                    dev(x), sums);
    BATCHSOLVE_LAUNCH_CHECK("abs_times_kernel");
}

template <class T>
BATCHSOLVE_REFINEMENT_COLUMN_MAX_ABS(T) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    if (cols == 0) return;
    column_max_abs_kernel<<<cols, kThreads, 0, r.stream()>>>(rows, dev(x), ldx, out);
    BATCHSOLVE_LAUNCH_CHECK("column_max_abs_kernel");
}

template <class T>
BATCHSOLVE_REFINEMENT_COMPONENTWISE_RATIO(T) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    componentwise_ratio_kernel<<<1, kThreads, 0, r.stream()>>>(n, dev(res), s, dev(b), out);
    BATCHSOLVE_LAUNCH_CHECK("componentwise_ratio_kernel");
}

template <class T>
BATCHSOLVE_REFINEMENT_MAX_OF(T) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    max_of_kernel<<<1, kThreads, 0, r.stream()>>>(n, v, out);
    BATCHSOLVE_LAUNCH_CHECK("max_of_kernel");
}

template <class T>
BATCHSOLVE_REFINEMENT_FILL_NAN(T) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    if (rows == 0 || cols == 0) return;
    fill_nan_kernel<<<dim3(blocks_for(rows), cols), kThreads, 0, r.stream()>>>(rows, dev(x), ldx);
    BATCHSOLVE_LAUNCH_CHECK("fill_nan_kernel");
}

template <class Hi, class Lo>
BATCHSOLVE_REFINEMENT_CONVERT_UP(Hi, Lo) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    if (rows == 0 || cols == 0) return;
    convert_up_kernel<<<dim3(blocks_for(rows), cols), kThreads, 0, r.stream()>>>(rows, dev(src), lds, dev(dst), ldd);
    BATCHSOLVE_LAUNCH_CHECK("convert_up_kernel");
}

template <class T>
BATCHSOLVE_REFINEMENT_PRODUCT(T) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    if (n == 0) return;
    // beta = 0: cuBLAS does not read y.
    BATCHSOLVE_CUBLAS_CHECK(symv(r.cublas(), fill_of(uplo), s, n, T(1), a, lda, x, T(0), y));
}

template <class T>
BATCHSOLVE_REFINEMENT_GEMV(T) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    const int out = adjoint ? cols : rows;
    if (out == 0) return;
    if (rows == 0 || cols == 0) {
        scale_add(out, T(0), static_cast<const T*>(nullptr), beta, y, ctx);
        return;
    }
    const cublasOperation_t op = adjoint ? (is_complex_v<T> ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
    BATCHSOLVE_CUBLAS_CHECK(gemv(r.cublas(), op, rows, cols, alpha, v, ldv, x, beta, y));
}

template <class T>
BATCHSOLVE_REFINEMENT_SCALE_ADD(T) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    if (n == 0) return;
    using D = dev_t<T>;
    const auto to_device = [](T v) {
        if constexpr (is_complex_v<T>) return D(v.real(), v.imag());
        else return D(v);
    };
    scale_add_kernel<<<blocks_for(n), kThreads, 0, r.stream()>>>(n, to_device(alpha), dev(x), to_device(beta), dev(y));
    BATCHSOLVE_LAUNCH_CHECK("scale_add_kernel");
}

template <class Hi, class Lo>
BATCHSOLVE_REFINEMENT_FUSED_PRODUCT(Hi, Lo) {
    CudaResources& r = prepare(ctx, kRoutine);
    DeviceGuard guard(r.device_);
    if (n == 0) {
        BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(status, 0, 3 * sizeof(real_t<Hi>), r.stream()));
        return;
    }
    const int tiles = (n + kTile - 1) / kTile, rows = std::max(1, strip);
    const dim3 grid(unsigned((tiles + rows - 1) / rows), unsigned(tiles));
    fused_product_kernel<<<grid, dim3(kTile, kTileRows), 0, r.stream()>>>(uplo == Uplo::lower, s == Symmetry::hermitian, n, dev(a),
                                                                          lda, dev(x), dev(d), dev(acc), status, rows);
    BATCHSOLVE_LAUNCH_CHECK("fused_product_kernel");
}

template <class Hi, class Lo>
BATCHSOLVE_REFINEMENT_FUSED_FINISH(Hi, Lo) {
    CudaResources& rs = prepare(ctx, kRoutine);
    DeviceGuard guard(rs.device_);
    if (n == 0) return;
    fused_finish_kernel<<<blocks_for(n), kThreads, 0, rs.stream()>>>(n, dev(b), dev(acc), dev(x), dev(d), dev(r), status);
    BATCHSOLVE_LAUNCH_CHECK("fused_finish_kernel");
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_REFINEMENT_ROUTINES)

}  // namespace batchsolve::cuda_backend
