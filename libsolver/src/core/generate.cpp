// Host generators of test batches: SPD/HPD matrices Q diag(d) Q^H with a chosen condition number,
// right-hand sides B = A X with known X, and deliberately spoiled members.
#include "batchsolve/generate.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

#include "backends.hpp"
#include "checks.hpp"
#include "extended.hpp"

namespace batchsolve {

namespace {

// Matrices are built in double (complex<double>) whatever T is, then rounded once, so s and d batches
// of one seed hold the same matrices up to rounding.
template <class T>
using Work = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;

using extended::abs2;
using extended::conj_of;
using extended::mul;
using extended::widen;

// Each matrix (and each right-hand side block) draws from its own engine, seeded from (seed, purpose,
// k) through SplitMix64, so the batch does not depend on the number of threads that built it.
enum class Stream : std::uint64_t { matrix = 1, rhs = 2 };

std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

std::mt19937_64 engine_for(std::uint64_t seed, Stream stream, int k) {
    return std::mt19937_64(splitmix64(splitmix64(seed ^ splitmix64(std::uint64_t(stream))) + std::uint64_t(k)));
}

template <class W>
W gaussian(std::mt19937_64& engine, std::normal_distribution<double>& normal) {
    if constexpr (std::is_same_v<W, double>) {
        return normal(engine);
    } else {
        const double re = normal(engine);
        return {re, normal(engine)};
    }
}

// One n x n matrix Q diag(d) Q^H into `a` (packed, both triangles, n >= 1): Q is the product of n
// Householder reflectors H = I - tau v v^H of Gaussian vectors v, each applied from both sides
// (A <- H A H keeps A Hermitian and its eigenvalues d). Only the lower triangle is updated; the
// upper one is its mirror image, written at the end.
template <class W>
void spd_matrix(int n, double cond, std::mt19937_64& engine, std::vector<W>& a, std::vector<W>& v,
                std::vector<W>& p) {
    std::normal_distribution<double> normal(0.0, 1.0);
    auto at = [&a, n](int i, int j) -> W& { return a[std::size_t(j) * n + i]; };
    std::fill(a.begin(), a.end(), W(0));
    for (int i = 0; i < n; ++i) at(i, i) = n == 1 ? 1.0 : std::pow(cond, -double(i) / (n - 1));
    for (int r = 0; r < n; ++r) {
        double vnorm2 = 0;
        for (int i = 0; i < n; ++i) {
            v[i] = gaussian<W>(engine, normal);
            vnorm2 += abs2(v[i]);
        }
        if (vnorm2 == 0) continue;  // probability zero; H = I then
        const double tau = 2.0 / vnorm2;
        // p = A v from the lower triangle (Hermitian), alpha = v^H A v (real).
        std::fill(p.begin(), p.end(), W(0));
        for (int j = 0; j < n; ++j) {
            W upper_part = mul(at(j, j), v[j]);
            for (int i = j + 1; i < n; ++i) {
                p[i] += mul(at(i, j), v[j]);
                upper_part += mul(conj_of(at(i, j)), v[i]);
            }
            p[j] += upper_part;
        }
        double alpha = 0;
        for (int i = 0; i < n; ++i) alpha += std::real(mul(conj_of(v[i]), p[i]));
        // p <- tau A v - (tau^2 alpha / 2) v, so that H A H = A - p v^H - v p^H.
        const double half = tau * tau * alpha / 2;
        for (int i = 0; i < n; ++i) p[i] = tau * p[i] - half * v[i];
        for (int j = 0; j < n; ++j) {
            const W vj = conj_of(v[j]), pj = conj_of(p[j]);
            for (int i = j; i < n; ++i) at(i, j) -= mul(p[i], vj) + mul(v[i], pj);
        }
    }
    // Exactly Hermitian with a real diagonal, largest |entry| 1.
    double largest2 = 0;
    for (int j = 0; j < n; ++j) {
        at(j, j) = std::real(at(j, j));
        for (int i = j; i < n; ++i) largest2 = std::max(largest2, abs2(at(i, j)));
    }
    const double largest = std::sqrt(largest2);
    for (int j = 0; j < n; ++j) {
        at(j, j) /= largest;
        for (int i = j + 1; i < n; ++i) {
            at(i, j) /= largest;
            at(j, i) = conj_of(at(i, j));
        }
    }
}

template <class T>
T uniform_entry(std::mt19937_64& engine, std::uniform_real_distribution<double>& uniform) {
    using R = real_t<T>;
    if constexpr (is_complex_v<T>) {
        const R re = R(uniform(engine));
        return T(re, R(uniform(engine)));
    } else {
        return T(uniform(engine));
    }
}

}  // namespace

template <class T>
std::vector<T> generate_spd_batch(int n, int count, double cond, std::uint64_t seed) {
    constexpr const char* routine = "generate_spd_batch";
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(count >= 0, routine, "count", "count >= 0 (got " + std::to_string(count) + ")");
    checks::require(cond >= 1 && std::isfinite(cond), routine, "cond",
                    "a finite condition number >= 1 (got " + std::to_string(cond) + ")");
    using R = real_t<T>;
    const std::size_t nn = std::size_t(n) * n;
    std::vector<T> out(nn * count);
    if (nn == 0) return out;
#pragma omp parallel
    {
        std::vector<Work<T>> a(nn), v(n), p(n);
#pragma omp for schedule(dynamic)
        for (int k = 0; k < count; ++k) {
            std::mt19937_64 engine = engine_for(seed, Stream::matrix, k);
            spd_matrix(n, cond, engine, a, v, p);
            T* dst = out.data() + nn * k;
            for (std::size_t e = 0; e < nn; ++e) {
                if constexpr (is_complex_v<T>) dst[e] = T(R(a[e].real()), R(a[e].imag()));
                else dst[e] = T(a[e]);
            }
        }
    }
    return out;
}

template <class T>
RhsWithSolution<T> generate_rhs_batch(const std::vector<T>& a, int n, int count, int nrhs, std::uint64_t seed) {
    constexpr const char* routine = "generate_rhs_batch";
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(count >= 0, routine, "count", "count >= 0 (got " + std::to_string(count) + ")");
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    const std::size_t nn = std::size_t(n) * n, nr = std::size_t(n) * nrhs;
    checks::require(a.size() == nn * count, routine, "a",
                    "n * n * count = " + std::to_string(nn * count) + " elements (got " + std::to_string(a.size()) + ")");
    RhsWithSolution<T> out{std::vector<T>(nr * count), std::vector<T>(nr * count)};
    if (nr == 0) return out;
#pragma omp parallel for schedule(dynamic)
    for (int k = 0; k < count; ++k) {
        std::mt19937_64 engine = engine_for(seed, Stream::rhs, k);
        std::uniform_real_distribution<double> uniform(-1.0, 1.0);
        T* x = out.x.data() + nr * k;
        for (std::size_t e = 0; e < nr; ++e) x[e] = uniform_entry<T>(engine, uniform);
        // B = A X with the whole stored matrix (both triangles), accumulated in long double.
        const T* ak = a.data() + nn * k;
        T* b = out.b.data() + nr * k;
        for (int r = 0; r < nrhs; ++r)
            for (int i = 0; i < n; ++i) {
                extended::Wide<T> sum = 0;
                for (int j = 0; j < n; ++j) sum += mul(widen(ak[std::size_t(j) * n + i]), widen(x[std::size_t(r) * n + j]));
                b[std::size_t(r) * n + i] = extended::narrow<T>(sum);
            }
    }
    return out;
}

template <class T>
void spoil_matrix(std::vector<T>& a, int n, int k, int col, BadMatrix kind) {
    constexpr const char* routine = "spoil_matrix";
    checks::require(n >= 1, routine, "n", "n >= 1 (got " + std::to_string(n) + ")");
    const std::size_t nn = std::size_t(n) * n;
    checks::require(k >= 0 && std::size_t(k) < a.size() / nn, routine, "k",
                    "0 <= k < count = " + std::to_string(a.size() / nn) + " (got " + std::to_string(k) + ")");
    checks::require(col >= 0 && col < n, routine, "col", "0 <= col < n (got " + std::to_string(col) + ")");
    T& diagonal = a[nn * k + std::size_t(col) * n + col];
    using R = real_t<T>;
    switch (kind) {
        case BadMatrix::indefinite:
            // The pivot of column col is a(col,col) minus a sum of squares, so a negative entry makes
            // it negative whatever the rest; the leading minors before col are unchanged.
            diagonal = T(-(R(1) + std::abs(diagonal)));
            break;
        case BadMatrix::nan: {
            const R nan = std::numeric_limits<R>::quiet_NaN();
            if constexpr (is_complex_v<T>) diagonal = T(nan, nan);
            else diagonal = nan;
            break;
        }
    }
}

#define INSTANTIATE(T)                                                                                       \
    template std::vector<T> generate_spd_batch<T>(int, int, double, std::uint64_t);                          \
    template RhsWithSolution<T> generate_rhs_batch<T>(const std::vector<T>&, int, int, int, std::uint64_t); \
    template void spoil_matrix<T>(std::vector<T>&, int, int, int, BadMatrix);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve
