// The CPU reference backend of the symmetric indefinite solvers: a recursive no-pivot LDL^T on CBLAS
// (LAPACK has none), the butterfly transforms and the conversion of A in plain loops, and LAPACK's
// Bunch-Kaufman ?sytrf/?hetrf for the pivoted fallback. One large matrix per call, so OpenBLAS runs on
// every thread here (the batched routines keep it single-threaded per matrix).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "../core/ldlt_backend.hpp"
#include "../core/refinement_backend.hpp"  // copy_matrix
#include "../host/lapack.hpp"

namespace batchsolve::reference {

namespace {

using ldlt_detail::kLeafOrder;

// Width of the column panels of the CPU trailing update (each panel one GEMM; the diagonal block's
// strict upper part is saved and restored around it, since A's upper triangle is never written).
constexpr int kUpdatePanel = 128;

template <class T> T conj_if(T v, bool conjugate) {
    if constexpr (is_complex_v<T>) return conjugate ? std::conj(v) : v;
    else { (void)conjugate; return v; }
}
template <class T> bool finite(T v) {
    if constexpr (is_complex_v<T>) return std::isfinite(v.real()) && std::isfinite(v.imag());
    else return std::isfinite(v);
}

// ---- CBLAS by type ---------------------------------------------------------------------------------

CBLAS_TRANSPOSE transpose_of(Symmetry s) { return s == Symmetry::hermitian ? CblasConjTrans : CblasTrans; }

void trsm(CBLAS_SIDE side, CBLAS_TRANSPOSE trans, int m, int n, const float* a, int lda, float* b, int ldb) {
    cblas_strsm(CblasColMajor, side, CblasLower, trans, CblasUnit, m, n, 1.0f, a, lda, b, ldb);
}
void trsm(CBLAS_SIDE side, CBLAS_TRANSPOSE trans, int m, int n, const double* a, int lda, double* b, int ldb) {
    cblas_dtrsm(CblasColMajor, side, CblasLower, trans, CblasUnit, m, n, 1.0, a, lda, b, ldb);
}
void trsm(CBLAS_SIDE side, CBLAS_TRANSPOSE trans, int m, int n, const std::complex<float>* a, int lda,
          std::complex<float>* b, int ldb) {
    const std::complex<float> one(1);
    cblas_ctrsm(CblasColMajor, side, CblasLower, trans, CblasUnit, m, n, &one, a, lda, b, ldb);
}
void trsm(CBLAS_SIDE side, CBLAS_TRANSPOSE trans, int m, int n, const std::complex<double>* a, int lda,
          std::complex<double>* b, int ldb) {
    const std::complex<double> one(1);
    cblas_ztrsm(CblasColMajor, side, CblasLower, trans, CblasUnit, m, n, &one, a, lda, b, ldb);
}

// C -= A op(B)^T-style product: C (m x n) -= A (m x k) * op(B) with op(B) = B^T or B^H (B: n x k).
void gemm_minus(CBLAS_TRANSPOSE tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
    cblas_sgemm(CblasColMajor, CblasNoTrans, tb, m, n, k, -1.0f, a, lda, b, ldb, 1.0f, c, ldc);
}
void gemm_minus(CBLAS_TRANSPOSE tb, int m, int n, int k, const double* a, int lda, const double* b, int ldb, double* c, int ldc) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, tb, m, n, k, -1.0, a, lda, b, ldb, 1.0, c, ldc);
}
void gemm_minus(CBLAS_TRANSPOSE tb, int m, int n, int k, const std::complex<float>* a, int lda,
                const std::complex<float>* b, int ldb, std::complex<float>* c, int ldc) {
    const std::complex<float> minus_one(-1), one(1);
    cblas_cgemm(CblasColMajor, CblasNoTrans, tb, m, n, k, &minus_one, a, lda, b, ldb, &one, c, ldc);
}
void gemm_minus(CBLAS_TRANSPOSE tb, int m, int n, int k, const std::complex<double>* a, int lda,
                const std::complex<double>* b, int ldb, std::complex<double>* c, int ldc) {
    const std::complex<double> minus_one(-1), one(1);
    cblas_zgemm(CblasColMajor, CblasNoTrans, tb, m, n, k, &minus_one, a, lda, b, ldb, &one, c, ldc);
}

// ---- the factorisation -------------------------------------------------------------------------------

// The pivot of column j: its diagonal, real for Hermitian matrices (the imaginary part is ignored).
template <class T>
T pivot_value(T v, Symmetry s) {
    if constexpr (is_complex_v<T>) return s == Symmetry::hermitian ? T(v.real()) : v;
    else { (void)s; return v; }
}

// Unblocked right-looking LDL^T of an m x m leaf; column_offset: its first column in the whole matrix.
template <class T>
void factor_leaf(Symmetry s, int m, T* a, int lda, double threshold, int column_offset, int* info) {
    const bool herm = s == Symmetry::hermitian;
    auto at = [&](int i, int j) -> T& { return a[std::size_t(j) * lda + i]; };
    for (int j = 0; j < m; ++j) {
        const T d = pivot_value(at(j, j), s);
        at(j, j) = d;
        if (!(std::abs(d) > threshold) || !finite(d)) {
            if (*info == 0) *info = column_offset + j + 1;
        }
        const T inverse = T(1) / d;
        for (int i = j + 1; i < m; ++i) at(i, j) *= inverse;
        // A(j+1:, j+1:) -= l d l^T (or l d l^H), lower triangle only.
        for (int k = j + 1; k < m; ++k) {
            const T w = d * conj_if(at(k, j), herm);
            for (int i = k; i < m; ++i) at(i, k) -= at(i, j) * w;
        }
    }
}

template <class T>
void lower_update(Symmetry s, int m, int k, const T* l, int ldl, const T* w, int ldw, T* c, int ldc) {
    std::vector<T> saved(std::size_t(kUpdatePanel) * kUpdatePanel);
    for (int j0 = 0; j0 < m; j0 += kUpdatePanel) {
        const int width = std::min(kUpdatePanel, m - j0);
        T* diagonal = c + std::size_t(j0) * ldc + j0;
        for (int j = 1; j < width; ++j)
            for (int i = 0; i < j; ++i) saved[std::size_t(j) * kUpdatePanel + i] = diagonal[std::size_t(j) * ldc + i];
        gemm_minus(transpose_of(s), m - j0, width, k, l + j0, ldl, w + j0, ldw, diagonal, ldc);
        for (int j = 1; j < width; ++j)
            for (int i = 0; i < j; ++i) diagonal[std::size_t(j) * ldc + i] = saved[std::size_t(j) * kUpdatePanel + i];
    }
}

template <class T>
void factor_recursive(Symmetry s, int m, T* a, int lda, T* w, double threshold, int column_offset, int* info) {
    if (m <= kLeafOrder) {
        factor_leaf(s, m, a, lda, threshold, column_offset, info);
        return;
    }
    const int n1 = ldlt_detail::split_order(m), n2 = m - n1;
    factor_recursive(s, n1, a, lda, w, threshold, column_offset, info);
    T* a21 = a + n1;
    // W = A21 L11^-T = L21 D1 (L11^-H for Hermitian), then L21 = W D1^-1.
    trsm(CblasRight, transpose_of(s), n2, n1, a, lda, a21, lda);
    for (int j = 0; j < n1; ++j) {
        const T inverse = T(1) / a[std::size_t(j) * lda + j];
        for (int i = 0; i < n2; ++i) {
            T& v = a21[std::size_t(j) * lda + i];
            w[std::size_t(j) * n2 + i] = v;
            v *= inverse;
        }
    }
    T* a22 = a + std::size_t(n1) * lda + n1;
    lower_update(s, n2, n1, a21, lda, w, n2, a22, lda);
    factor_recursive(s, n2, a22, lda, w, threshold, column_offset + n1, info);
}

}  // namespace

template <class T>
BATCHSOLVE_LDLT_FACTOR(T) {
    *info = 0;
    if (n == 0) return;
    host::ScopedAllThreadsBlas threads;
    // A pivot at or below sqrt(n) u max|a_ij| is zero up to the rounding it picks up (a random walk of
    // about n roundings); n u would flag honest pivots of large random matrices in single precision.
    // Non-finite entries are left out of the maximum: they make their own pivot (or a later one)
    // non-finite, reported at its column.
    double max_abs = 0;
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            const T v = a[std::size_t(j) * lda + i];
            if (finite(v)) max_abs = std::max(max_abs, double(std::abs(v)));
        }
    const double threshold = std::sqrt(double(n)) * double(unit_roundoff<T>()) * max_abs;
    T* w = reinterpret_cast<T*>(static_cast<char*>(workspace) + ldlt_detail::align_up(sizeof(double)));
    factor_recursive(s, n, a, lda, w, threshold, 0, info);
}

template <class T>
BATCHSOLVE_LDLT_SOLVE(T) {
    host::ScopedAllThreadsBlas threads;
    trsm(CblasLeft, CblasNoTrans, n, nrhs, a, lda, b, ldb);
    for (int j = 0; j < nrhs; ++j)
        for (int i = 0; i < n; ++i) b[std::size_t(j) * ldb + i] /= a[std::size_t(i) * lda + i];
    trsm(CblasLeft, transpose_of(s), n, nrhs, a, lda, b, ldb);
}

template <class Hi, class Lo>
BATCHSOLVE_LDLT_EXPAND_LOWER(Hi, Lo) {
    const bool herm = s == Symmetry::hermitian;
    bool bad = false;
#pragma omp parallel for reduction(|| : bad) schedule(static)
    for (int j = 0; j < npad; ++j) {
        for (int i = 0; i < npad; ++i) {
            Lo v(0);
            if (i < n && j < n) {
                // Lower triangle as stored; the upper one mirrored (conjugated for Hermitian).
                v = i >= j ? Lo(a[std::size_t(j) * lda + i]) : Lo(conj_if(a[std::size_t(i) * lda + j], herm));
                if (i == j) v = pivot_value(v, s);
                bad = bad || !finite(v);
            } else if (i == j) {
                v = Lo(real_t<Lo>(ldlt_detail::padding_value(i - n, pad_scale)));
            }
            dst[std::size_t(j) * ldd + i] = v;
        }
    }
    if (bad) *overflow = 1;
}

namespace {
// One level's butterflies: for index u of butterfly p (rows p m + u and p m + u + h), R0 and R1.
struct LevelIndex {
    int m, h;
};
LevelIndex level_shape(int npad, int level) {
    const int m = npad >> level;  // level 0 is W_1: one butterfly of order npad
    return {m, m / 2};
}
}  // namespace

template <class T>
BATCHSOLVE_LDLT_RBT_MATRIX(T) {
    using R = real_t<T>;
    const R scale = R(1) / std::sqrt(R(2));
    for (int level = 0; level < depth; ++level) {
        // Plain names, not a structured binding: clang 14 cannot capture one in an OpenMP region.
        const LevelIndex shape = level_shape(npad, level);
        const int m = shape.m, h = shape.h;
        const R* rl = rd + std::size_t(level) * npad;
        const int half = npad / 2;
#pragma omp parallel for schedule(static)
        for (int jj = 0; jj < half; ++jj) {
            const int q = jj / h, v = jj % h;
            const int j0 = q * m + v, j1 = j0 + h;
            const R c0 = rl[q * m + v], c1 = rl[q * m + h + v];
            for (int ii = 0; ii < half; ++ii) {
                const int p = ii / h, u = ii % h;
                const int i0 = p * m + u, i1 = i0 + h;
                const R r0 = rl[p * m + u], r1 = rl[p * m + h + u];
                T& x00 = a[std::size_t(j0) * lda + i0];
                T& x01 = a[std::size_t(j1) * lda + i0];
                T& x10 = a[std::size_t(j0) * lda + i1];
                T& x11 = a[std::size_t(j1) * lda + i1];
                // Left by B^T (rows), then right by B (columns).
                const T t00 = (x00 + x10) * r0, t01 = (x01 + x11) * r0;
                const T t10 = (x00 - x10) * r1, t11 = (x01 - x11) * r1;
                x00 = (t00 + t01) * (c0 * scale * scale);
                x01 = (t00 - t01) * (c1 * scale * scale);
                x10 = (t10 + t11) * (c0 * scale * scale);
                x11 = (t10 - t11) * (c1 * scale * scale);
            }
        }
    }
}

template <class T>
BATCHSOLVE_LDLT_RBT_VECTORS(T) {
    using R = real_t<T>;
    const R scale = R(1) / std::sqrt(R(2));
    for (int step = 0; step < depth; ++step) {
        // U^T x = W_d^T ... W_1^T x: W_1^T first; U x = W_1 ... W_d x: W_d first.
        const int level = transpose ? step : depth - 1 - step;
        // Plain names, not a structured binding: clang 14 cannot capture one in an OpenMP region.
        const LevelIndex shape = level_shape(npad, level);
        const int m = shape.m, h = shape.h;
        const R* rl = rd + std::size_t(level) * npad;
        for (int j = 0; j < nrhs; ++j) {
            T* col = x + std::size_t(j) * ldx;
            for (int ii = 0; ii < npad / 2; ++ii) {
                const int p = ii / h, u = ii % h;
                const int i0 = p * m + u, i1 = i0 + h;
                const R r0 = rl[p * m + u], r1 = rl[p * m + h + u];
                const T top = col[i0], bottom = col[i1];
                if (transpose) {
                    col[i0] = (top + bottom) * (r0 * scale);
                    col[i1] = (top - bottom) * (r1 * scale);
                } else {
                    col[i0] = (top * r0 + bottom * r1) * scale;
                    col[i1] = (top * r0 - bottom * r1) * scale;
                }
            }
        }
    }
}

// ---- pivoted fallback: LAPACK Bunch-Kaufman ---------------------------------------------------------

namespace {
lapack_int sytrf(Symmetry, int n, float* a, lapack_int* ipiv) { return LAPACKE_ssytrf(LAPACK_COL_MAJOR, 'L', n, a, n, ipiv); }
lapack_int sytrf(Symmetry, int n, double* a, lapack_int* ipiv) { return LAPACKE_dsytrf(LAPACK_COL_MAJOR, 'L', n, a, n, ipiv); }
lapack_int sytrf(Symmetry s, int n, std::complex<float>* a, lapack_int* ipiv) {
    return s == Symmetry::hermitian ? LAPACKE_chetrf(LAPACK_COL_MAJOR, 'L', n, a, n, ipiv)
                                    : LAPACKE_csytrf(LAPACK_COL_MAJOR, 'L', n, a, n, ipiv);
}
lapack_int sytrf(Symmetry s, int n, std::complex<double>* a, lapack_int* ipiv) {
    return s == Symmetry::hermitian ? LAPACKE_zhetrf(LAPACK_COL_MAJOR, 'L', n, a, n, ipiv)
                                    : LAPACKE_zsytrf(LAPACK_COL_MAJOR, 'L', n, a, n, ipiv);
}
lapack_int sytrs(Symmetry, int n, int nrhs, const float* a, const lapack_int* ipiv, float* b, int ldb) {
    return LAPACKE_ssytrs(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, ipiv, b, ldb);
}
lapack_int sytrs(Symmetry, int n, int nrhs, const double* a, const lapack_int* ipiv, double* b, int ldb) {
    return LAPACKE_dsytrs(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, ipiv, b, ldb);
}
lapack_int sytrs(Symmetry s, int n, int nrhs, const std::complex<float>* a, const lapack_int* ipiv,
                 std::complex<float>* b, int ldb) {
    return s == Symmetry::hermitian ? LAPACKE_chetrs(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, ipiv, b, ldb)
                                    : LAPACKE_csytrs(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, ipiv, b, ldb);
}
lapack_int sytrs(Symmetry s, int n, int nrhs, const std::complex<double>* a, const lapack_int* ipiv,
                 std::complex<double>* b, int ldb) {
    return s == Symmetry::hermitian ? LAPACKE_zhetrs(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, ipiv, b, ldb)
                                    : LAPACKE_zsytrs(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, ipiv, b, ldb);
}
}  // namespace

template <class T>
BATCHSOLVE_LDLT_PIVOTED_WORKSPACE_BYTES(T) {
    return ldlt_detail::align_up(std::size_t(n) * n * sizeof(T)) + ldlt_detail::align_up(std::size_t(n) * sizeof(lapack_int));
}

template <class T>
BATCHSOLVE_LDLT_PIVOTED_SOLVE(T) {
    host::ScopedAllThreadsBlas threads;
    T* copy = static_cast<T*>(workspace);
    auto* ipiv = reinterpret_cast<lapack_int*>(static_cast<char*>(workspace) + ldlt_detail::align_up(std::size_t(n) * n * sizeof(T)));
    copy_matrix(n, n, a, lda, copy, n, ctx);
    const lapack_int info = sytrf(s, n, copy, ipiv);
    *info_host = int(info);
    if (info == 0) sytrs(s, n, nrhs, copy, ipiv, x, ldx);
    return SolvePath::pivoted_high_sytrf;
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_LDLT_ROUTINES)

}  // namespace batchsolve::reference
