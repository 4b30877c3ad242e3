// Scaled error measures of factorisations and solves on packed host batches, accumulated in long
// double so that the measure itself adds far less error than the precision it judges.
#include "batchsolve/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "../core/backends.hpp"
#include "../core/checks.hpp"
#include "../core/extended.hpp"

namespace batchsolve {

namespace {

using extended::abs2;
using extended::conj_of;
using extended::mul;
using extended::widen;
template <class T>
using Wide = extended::Wide<T>;

// Element (i, j) of the Hermitian matrix whose `uplo` triangle is stored at `a` (packed, ld = n).
template <class T>
Wide<T> hermitian_at(Uplo uplo, const T* a, int n, int i, int j) {
    const bool stored = uplo == Uplo::lower ? i >= j : i <= j;
    return stored ? widen(a[std::size_t(j) * n + i]) : conj_of(widen(a[std::size_t(i) * n + j]));
}

// numerator / denominator, with 0 / 0 (nothing to measure) as 0; NaN stays NaN.
double scaled(long double numerator, long double denominator) {
    if (numerator == 0 && denominator == 0) return 0;
    return double(numerator / denominator);
}

void require_size(std::size_t size, std::size_t expected, const char* routine, const char* argument, const char* what) {
    checks::require(size == expected, routine, argument,
                    std::string(what) + " = " + std::to_string(expected) + " elements (got " + std::to_string(size) + ")");
}

}  // namespace

template <class T>
std::vector<double> factorization_error(Uplo uplo, const std::vector<T>& a, const std::vector<T>& factor, int n,
                                        int count) {
    constexpr const char* routine = "factorization_error";
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(count >= 0, routine, "count", "count >= 0 (got " + std::to_string(count) + ")");
    const std::size_t nn = std::size_t(n) * n;
    require_size(a.size(), nn * count, routine, "a", "n * n * count");
    require_size(factor.size(), nn * count, routine, "factor", "n * n * count");
    std::vector<double> errors(count, 0.0);
    if (n == 0) return errors;
    const long double u = unit_roundoff<T>();
#pragma omp parallel
    {
        // L as a lower triangle in extended precision: the factor itself, or U^H for upper.
        std::vector<Wide<T>> l(nn);
#pragma omp for schedule(dynamic)
        for (int k = 0; k < count; ++k) {
            const T* ak = a.data() + nn * k;
            const T* fk = factor.data() + nn * k;
            for (int j = 0; j < n; ++j)
                for (int i = j; i < n; ++i)
                    l[std::size_t(j) * n + i] = uplo == Uplo::lower ? widen(fk[std::size_t(j) * n + i])
                                                                    : conj_of(widen(fk[std::size_t(i) * n + j]));
            // The difference is Hermitian: its lower triangle, off-diagonal entries counted twice.
            long double diff2 = 0, norm2 = 0;
            for (int j = 0; j < n; ++j)
                for (int i = j; i < n; ++i) {
                    Wide<T> llh = 0;
                    for (int p = 0; p <= j; ++p)
                        llh += mul(l[std::size_t(p) * n + i], conj_of(l[std::size_t(p) * n + j]));
                    const Wide<T> aij = hermitian_at(uplo, ak, n, i, j);
                    const long double weight = i == j ? 1 : 2;
                    diff2 += weight * abs2(aij - llh);
                    norm2 += weight * abs2(aij);
                }
            errors[k] = scaled(std::sqrt(diff2), n * std::sqrt(norm2) * u);
        }
    }
    return errors;
}

template <class T>
std::vector<double> solve_backward_error(Uplo uplo, const std::vector<T>& a, const std::vector<T>& x,
                                         const std::vector<T>& b, int n, int nrhs, int count) {
    constexpr const char* routine = "solve_backward_error";
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    checks::require(count >= 0, routine, "count", "count >= 0 (got " + std::to_string(count) + ")");
    const std::size_t nn = std::size_t(n) * n, nr = std::size_t(n) * nrhs;
    require_size(a.size(), nn * count, routine, "a", "n * n * count");
    require_size(x.size(), nr * count, routine, "x", "n * nrhs * count");
    require_size(b.size(), nr * count, routine, "b", "n * nrhs * count");
    std::vector<double> errors(count, 0.0);
    if (nr == 0) return errors;
    const long double u = unit_roundoff<T>();
#pragma omp parallel for schedule(dynamic)
    for (int k = 0; k < count; ++k) {
        const T* ak = a.data() + nn * k;
        const T* xk = x.data() + nr * k;
        const T* bk = b.data() + nr * k;
        long double a2 = 0, x2 = 0, b2 = 0, r2 = 0;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) a2 += abs2(hermitian_at(uplo, ak, n, i, j));
        for (std::size_t e = 0; e < nr; ++e) x2 += abs2(widen(xk[e])), b2 += abs2(widen(bk[e]));
        for (int r = 0; r < nrhs; ++r)
            for (int i = 0; i < n; ++i) {
                Wide<T> residual = widen(bk[std::size_t(r) * n + i]);
                for (int j = 0; j < n; ++j)
                    residual -= mul(hermitian_at(uplo, ak, n, i, j), widen(xk[std::size_t(r) * n + j]));
                r2 += abs2(residual);
            }
        errors[k] = scaled(std::sqrt(r2), n * (std::sqrt(a2) * std::sqrt(x2) + std::sqrt(b2)) * u);
    }
    return errors;
}

double max_or_nan(const std::vector<double>& values) {
    double largest = 0;
    for (double v : values) {
        if (std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
        largest = std::max(largest, v);
    }
    return largest;
}

#define INSTANTIATE(T)                                                                                         \
    template std::vector<double> factorization_error<T>(Uplo, const std::vector<T>&, const std::vector<T>&, int, \
                                                        int);                                                  \
    template std::vector<double> solve_backward_error<T>(Uplo, const std::vector<T>&, const std::vector<T>&,    \
                                                         const std::vector<T>&, int, int, int);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve
