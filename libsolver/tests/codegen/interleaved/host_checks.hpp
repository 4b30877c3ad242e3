// Host-side helpers of the interleaved-kernel tests that must not depend on the library's reference
// backend: random Hermitian positive definite batches, packing into the (chunked) interleaved layout
// through BatchView's index formula, a plain Cholesky, and the scaled error measures of
// ARCHITECTURE.md, accumulated in long double.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "batchsolve/batch.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::jit_tests {

template <class T> struct Wide { using type = long double; };
template <class R> struct Wide<std::complex<R>> { using type = std::complex<long double>; };
template <class T> using wide_t = typename Wide<T>::type;

inline long double conj_wide(long double x) { return x; }
inline std::complex<long double> conj_wide(const std::complex<long double>& x) { return std::conj(x); }
template <class T> T conj_of(const T& x) {
    if constexpr (is_complex_v<T>) return std::conj(x);
    else return x;
}
template <class T> double abs2(const T& x) { return static_cast<double>(std::norm(static_cast<wide_t<T>>(x))); }

template <class T> T random_entry(std::mt19937_64& g) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    if constexpr (is_complex_v<T>) return T(static_cast<real_t<T>>(u(g)), static_cast<real_t<T>>(u(g)));
    else return static_cast<T>(u(g));
}

// count Hermitian positive definite n x n matrices, packed column-major, both triangles:
// A = G G^H / n + I with G uniform in [-1, 1] (condition number of order 10).
template <class T>
std::vector<T> random_hpd(int n, int count, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::vector<T> a(static_cast<std::size_t>(n) * n * count);
    std::vector<T> gm(static_cast<std::size_t>(n) * n);
    for (int k = 0; k < count; ++k) {
        for (auto& x : gm) x = random_entry<T>(g);
        T* m = a.data() + static_cast<std::size_t>(k) * n * n;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                wide_t<T> s = 0;
                for (int p = 0; p < n; ++p)
                    s += static_cast<wide_t<T>>(gm[p * n + i]) * conj_wide(static_cast<wide_t<T>>(gm[p * n + j]));
                s /= static_cast<long double>(n);
                if (i == j) s = static_cast<wide_t<T>>(std::real(s) + 1.0L);
                m[j * n + i] = static_cast<T>(s);
            }
    }
    return a;
}

template <class T>
std::vector<T> random_matrices(int rows, int cols, int count, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::vector<T> b(static_cast<std::size_t>(rows) * cols * count);
    for (auto& x : b) x = random_entry<T>(g);
    return b;
}

inline bool in_triangle(Uplo uplo, int i, int j) { return uplo == Uplo::lower ? i >= j : i <= j; }

// A quiet NaN with a recognisable payload: what the untouched triangle and unused outputs hold.
template <class T> T poison() {
    const real_t<T> q = std::numeric_limits<real_t<T>>::quiet_NaN();
    if constexpr (is_complex_v<T>) return T(q, q);
    else return q;
}

// Packed column-major -> (chunked) interleaved view storage. With `triangle`, only that triangle is
// copied and the rest is poisoned.
template <class T>
std::vector<T> to_interleaved(const std::vector<T>& cm, const BatchView<T>& layout, const Uplo* triangle) {
    std::vector<T> out(static_cast<std::size_t>(layout.storage_elements()), poison<T>());
    const int r = layout.rows, c = layout.cols;
    for (int k = 0; k < layout.count; ++k)
        for (int j = 0; j < c; ++j)
            for (int i = 0; i < r; ++i)
                if (!triangle || in_triangle(*triangle, i, j))
                    out[layout.offset(k, i, j)] = cm[static_cast<std::size_t>(k) * r * c + j * r + i];
    return out;
}
template <class T>
std::vector<T> from_interleaved(const std::vector<T>& il, const BatchView<T>& layout) {
    std::vector<T> cm(static_cast<std::size_t>(layout.count) * layout.rows * layout.cols);
    for (int k = 0; k < layout.count; ++k)
        for (int j = 0; j < layout.cols; ++j)
            for (int i = 0; i < layout.rows; ++i)
                cm[static_cast<std::size_t>(k) * layout.rows * layout.cols + j * layout.rows + i] = il[layout.offset(k, i, j)];
    return cm;
}

// Whether element (i, j) of matrix k is bitwise the same in two interleaved buffers.
template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y, std::int64_t at) {
    return std::memcmp(&x[at], &y[at], sizeof(T)) == 0;
}

// Lower-coordinate factor entry L(i, j), i >= j, of matrix m (packed column-major n x n) holding
// L (lower) or U = L^H (upper).
template <class T>
wide_t<T> factor_entry(Uplo uplo, const T* m, int n, int i, int j) {
    if (uplo == Uplo::lower) return static_cast<wide_t<T>>(m[j * n + i]);
    return conj_wide(static_cast<wide_t<T>>(m[i * n + j]));
}
// Full Hermitian entry A(i, j) from the uplo triangle of m.
template <class T>
wide_t<T> hermitian_entry(Uplo uplo, const T* m, int n, int i, int j) {
    if (in_triangle(uplo, i, j)) {
        wide_t<T> v = static_cast<wide_t<T>>(m[j * n + i]);
        if (i == j) v = static_cast<wide_t<T>>(std::real(v));
        return v;
    }
    return conj_wide(static_cast<wide_t<T>>(m[i * n + j]));
}

// ||A - L L^H||_F / (n ||A||_F u), one matrix (packed column-major).
template <class T>
double factorization_error_one(Uplo uplo, const T* a, const T* f, int n) {
    long double r2 = 0, a2 = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            wide_t<T> s = 0;
            for (int p = 0; p <= std::min(i, j); ++p)
                s += factor_entry(uplo, f, n, i, p) * conj_wide(factor_entry(uplo, f, n, j, p));
            const wide_t<T> aij = hermitian_entry(uplo, a, n, i, j);
            r2 += std::norm(aij - s);
            a2 += std::norm(aij);
        }
    const long double u = unit_roundoff<T>();
    return static_cast<double>(std::sqrt(r2) / (n * std::sqrt(a2) * u));
}

// ||B - A X||_F / (n (||A||_F ||X||_F + ||B||_F) u), one system (packed column-major).
template <class T>
double backward_error_one(Uplo uplo, const T* a, const T* x, const T* b, int n, int nrhs) {
    long double r2 = 0, a2 = 0, x2 = 0, b2 = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) a2 += std::norm(hermitian_entry(uplo, a, n, i, j));
    for (int c = 0; c < nrhs; ++c)
        for (int i = 0; i < n; ++i) {
            wide_t<T> s = 0;
            for (int p = 0; p < n; ++p) s += hermitian_entry(uplo, a, n, i, p) * static_cast<wide_t<T>>(x[c * n + p]);
            r2 += std::norm(static_cast<wide_t<T>>(b[c * n + i]) - s);
            x2 += std::norm(static_cast<wide_t<T>>(x[c * n + i]));
            b2 += std::norm(static_cast<wide_t<T>>(b[c * n + i]));
        }
    const long double u = unit_roundoff<T>();
    return static_cast<double>(std::sqrt(r2) / (n * (std::sqrt(a2) * std::sqrt(x2) + std::sqrt(b2)) * u));
}

// Plain unblocked Cholesky of matrix m (packed column-major, uplo triangle used and overwritten),
// in long double; the input of the potrs tests. Returns false for a non-positive pivot.
template <class T>
bool host_cholesky(Uplo uplo, T* m, int n) {
    std::vector<wide_t<T>> l(static_cast<std::size_t>(n) * n, wide_t<T>(0));
    for (int j = 0; j < n; ++j) {
        long double d = std::real(hermitian_entry(uplo, m, n, j, j));
        for (int p = 0; p < j; ++p) d -= std::norm(l[p * n + j]);
        if (!(d > 0)) return false;
        const long double s = std::sqrt(d);
        l[j * n + j] = s;
        for (int i = j + 1; i < n; ++i) {
            wide_t<T> v = hermitian_entry(uplo, m, n, i, j);
            for (int p = 0; p < j; ++p) v -= l[p * n + i] * conj_wide(l[p * n + j]);
            l[j * n + i] = v / s;
        }
    }
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            if (uplo == Uplo::lower) m[j * n + i] = static_cast<T>(l[j * n + i]);
            else m[i * n + j] = static_cast<T>(conj_wide(l[j * n + i]));
        }
    return true;
}

}  // namespace batchsolve::jit_tests
