// The CPU reference backend of the mixed-precision refinement's primitives (core/refinement_backend.hpp):
// the working-precision residual through CBLAS's SYMM/SYMV (HEMM/HEMV for Hermitian data) on every
// thread, |A||x| with one row per OpenMP iteration, and the conversions and norms in plain loops.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "../core/refinement_backend.hpp"
#include "../host/lapack.hpp"

namespace batchsolve::reference {

namespace {

template <class T> bool finite(T v) {
    if constexpr (is_complex_v<T>) return std::isfinite(v.real()) && std::isfinite(v.imag());
    else return std::isfinite(v);
}
template <class T> T nan_value() {
    const real_t<T> q = std::numeric_limits<real_t<T>>::quiet_NaN();
    if constexpr (is_complex_v<T>) return T(q, q);
    else return q;
}
// Max that keeps NaN (any NaN makes the result NaN).
template <class R> R max_nan(R a, R b) {
    return std::isnan(a) || std::isnan(b) ? std::numeric_limits<R>::quiet_NaN() : std::max(a, b);
}

CBLAS_UPLO cblas_uplo(Uplo u) { return u == Uplo::lower ? CblasLower : CblasUpper; }

// r -= A x for nrhs columns (SYMV for one: a matrix-vector product reads A once at full bandwidth).
void symm_minus(Uplo u, Symmetry, int n, int nrhs, const float* a, int lda, const float* x, int ldx, float* r, int ldr) {
    if (nrhs == 1) cblas_ssymv(CblasColMajor, cblas_uplo(u), n, -1.0f, a, lda, x, 1, 1.0f, r, 1);
    else cblas_ssymm(CblasColMajor, CblasLeft, cblas_uplo(u), n, nrhs, -1.0f, a, lda, x, ldx, 1.0f, r, ldr);
}
void symm_minus(Uplo u, Symmetry, int n, int nrhs, const double* a, int lda, const double* x, int ldx, double* r, int ldr) {
    if (nrhs == 1) cblas_dsymv(CblasColMajor, cblas_uplo(u), n, -1.0, a, lda, x, 1, 1.0, r, 1);
    else cblas_dsymm(CblasColMajor, CblasLeft, cblas_uplo(u), n, nrhs, -1.0, a, lda, x, ldx, 1.0, r, ldr);
}
// Complex: HEMV/HEMM for Hermitian A; CBLAS has no complex symmetric SYMV, so SYMM serves one column too.
void symm_minus(Uplo u, Symmetry s, int n, int nrhs, const std::complex<float>* a, int lda, const std::complex<float>* x,
                int ldx, std::complex<float>* r, int ldr) {
    const std::complex<float> minus_one(-1), one(1);
    if (s == Symmetry::hermitian && nrhs == 1) cblas_chemv(CblasColMajor, cblas_uplo(u), n, &minus_one, a, lda, x, 1, &one, r, 1);
    else if (s == Symmetry::hermitian)
        cblas_chemm(CblasColMajor, CblasLeft, cblas_uplo(u), n, nrhs, &minus_one, a, lda, x, ldx, &one, r, ldr);
    else cblas_csymm(CblasColMajor, CblasLeft, cblas_uplo(u), n, nrhs, &minus_one, a, lda, x, ldx, &one, r, ldr);
}
void symm_minus(Uplo u, Symmetry s, int n, int nrhs, const std::complex<double>* a, int lda, const std::complex<double>* x,
                int ldx, std::complex<double>* r, int ldr) {
    const std::complex<double> minus_one(-1), one(1);
    if (s == Symmetry::hermitian && nrhs == 1) cblas_zhemv(CblasColMajor, cblas_uplo(u), n, &minus_one, a, lda, x, 1, &one, r, 1);
    else if (s == Symmetry::hermitian)
        cblas_zhemm(CblasColMajor, CblasLeft, cblas_uplo(u), n, nrhs, &minus_one, a, lda, x, ldx, &one, r, ldr);
    else cblas_zsymm(CblasColMajor, CblasLeft, cblas_uplo(u), n, nrhs, &minus_one, a, lda, x, ldx, &one, r, ldr);
}

// The stored entry (i, j) of a matrix kept in its uplo triangle (its modulus is the same whether the
// mirror is the entry or its conjugate).
template <class T>
T stored(Uplo u, const T* a, int lda, int i, int j) {
    const bool in_triangle = u == Uplo::lower ? i >= j : i <= j;
    return in_triangle ? a[std::size_t(j) * lda + i] : a[std::size_t(i) * lda + j];
}

}  // namespace

template <class Hi, class Lo>
BATCHSOLVE_REFINEMENT_CONVERT_DOWN(Hi, Lo) {
    bool bad = false;
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows_padded; ++i) {
            const Lo v = i < rows ? Lo(src[std::size_t(j) * lds + i]) : Lo(0);
            bad = bad || !finite(v);
            dst[std::size_t(j) * ldd + i] = v;
        }
    if (bad) *overflow = 1;
}

template <class Hi, class Lo>
BATCHSOLVE_REFINEMENT_ADD_CORRECTION(Hi, Lo) {
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i) x[std::size_t(j) * ldx + i] += Hi(d[std::size_t(j) * ldd + i]);
}

template <class T>
BATCHSOLVE_REFINEMENT_RESIDUAL(T) {
    for (int j = 0; j < nrhs; ++j)
        std::memcpy(res + std::size_t(j) * ldr, b + std::size_t(j) * ldb, std::size_t(n) * sizeof(T));
    if (n == 0) return;
    host::ScopedAllThreadsBlas threads;
    symm_minus(uplo, s, n, nrhs, a, lda, x, ldx, res, ldr);
}

template <class T>
BATCHSOLVE_REFINEMENT_ABS_TIMES(T) {
    using R = real_t<T>;
    // One row per iteration: no two threads add into the same sum.
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) {
        R sum = 0;
        for (int k = 0; k < n; ++k) sum += std::abs(stored(uplo, a, lda, i, k)) * (x ? std::abs(x[k]) : R(1));
        sums[i] = sum;
    }
}

template <class T>
BATCHSOLVE_REFINEMENT_COLUMN_MAX_ABS(T) {
    using R = real_t<T>;
    for (int j = 0; j < cols; ++j) {
        R m = 0;
        for (int i = 0; i < rows; ++i) m = max_nan(m, R(std::abs(x[std::size_t(j) * ldx + i])));
        out[j] = m;
    }
}

template <class T>
BATCHSOLVE_REFINEMENT_COMPONENTWISE_RATIO(T) {
    using R = real_t<T>;
    R worst = 0;
    for (int i = 0; i < n; ++i) {
        const R num = std::abs(res[i]), den = s[i] + std::abs(b[i]);
        worst = max_nan(worst, num == 0 ? R(0) : num / den);
    }
    *out = worst;
}

template <class T>
BATCHSOLVE_REFINEMENT_MAX_OF(T) {
    T m = n > 0 ? v[0] : T(0);
    for (int i = 1; i < n; ++i) m = max_nan(m, v[i]);
    *out = m;
}

template <class T>
BATCHSOLVE_REFINEMENT_COPY_MATRIX(T) {
    for (int j = 0; j < cols; ++j)
        std::memcpy(dst + std::size_t(j) * ldd, src + std::size_t(j) * lds, std::size_t(rows) * sizeof(T));
}

template <class T>
BATCHSOLVE_REFINEMENT_FILL_NAN(T) {
    for (int j = 0; j < cols; ++j) std::fill(x + std::size_t(j) * ldx, x + std::size_t(j) * ldx + rows, nan_value<T>());
}

template <class Hi, class Lo>
BATCHSOLVE_REFINEMENT_CONVERT_UP(Hi, Lo) {
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i) dst[std::size_t(j) * ldd + i] = Hi(src[std::size_t(j) * lds + i]);
}

template <class T>
BATCHSOLVE_REFINEMENT_PRODUCT(T) {
    std::fill(y, y + n, T(0));
    if (n == 0) return;
    host::ScopedAllThreadsBlas threads;
    // y = 0 - A x through the residual's product, then the sign.
    symm_minus(uplo, s, n, 1, a, lda, x, n, y, n);
    for (int i = 0; i < n; ++i) y[i] = -y[i];
}

template <class T>
BATCHSOLVE_REFINEMENT_GEMV(T) {
    const int out = adjoint ? cols : rows;
    for (int i = 0; i < out; ++i) y[i] = beta == T(0) ? T(0) : beta * y[i];
    if (alpha == T(0)) return;
    if (adjoint) {
#pragma omp parallel for schedule(static)
        for (int j = 0; j < cols; ++j) {
            T sum = 0;
            const T* column = v + std::size_t(j) * ldv;
            for (int i = 0; i < rows; ++i) {
                if constexpr (is_complex_v<T>) sum += std::conj(column[i]) * x[i];
                else sum += column[i] * x[i];
            }
            y[j] += alpha * sum;
        }
    } else {
        for (int j = 0; j < cols; ++j) {
            const T scaled = alpha * x[j];
            const T* column = v + std::size_t(j) * ldv;
            for (int i = 0; i < rows; ++i) y[i] += column[i] * scaled;
        }
    }
}

template <class T>
BATCHSOLVE_REFINEMENT_SCALE_ADD(T) {
    for (int i = 0; i < n; ++i) {
        const T base = beta == T(0) ? T(0) : beta * y[i];
        y[i] = alpha == T(0) ? base : base + alpha * x[i];
    }
}

// The fused pass's two halves in the order of the GPU's: the product with x + d (the sums fused_finish
// forms again, bit for bit), then everything element-wise in one loop.
template <class Hi, class Lo>
BATCHSOLVE_REFINEMENT_FUSED_PRODUCT(Hi, Lo) {
    status[0] = status[1] = status[2] = 0;
    if (n == 0) return;
    const std::size_t count = static_cast<std::size_t>(n);
    std::vector<Hi> xn(count), minus(count, Hi(0));
    for (int i = 0; i < n; ++i) xn[i] = x[i] + Hi(d[i]);
    {
        host::ScopedAllThreadsBlas threads;
        symm_minus(uplo, s, n, 1, a, lda, xn.data(), n, minus.data(), n);  // minus = -A (x + d)
    }
    for (int i = 0; i < n; ++i) acc[i] -= minus[i];
}

template <class Hi, class Lo>
BATCHSOLVE_REFINEMENT_FUSED_FINISH(Hi, Lo) {
    using R = real_t<Hi>;
    R r_max = 0, x_max = 0;
    bool bad = false;
    for (int i = 0; i < n; ++i) {
        x[i] += Hi(d[i]);
        r[i] = b[i] - acc[i];
        acc[i] = Hi(0);
        const Lo low = Lo(r[i]);
        bad = bad || !finite(low);
        d[i] = low;
        r_max = max_nan(r_max, R(std::abs(r[i])));
        x_max = max_nan(x_max, R(std::abs(x[i])));
    }
    status[0] = r_max, status[1] = x_max;
    if (bad) status[2] = 1;
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_REFINEMENT_ROUTINES)

}  // namespace batchsolve::reference
