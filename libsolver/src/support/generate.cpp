// Host generators of test batches: SPD/HPD matrices Q diag(d) Q^H with a chosen condition number,
// right-hand sides B = A X with known X, and deliberately spoiled members.
#include "batchsolve/generate.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

#include <omp.h>

#include "batchsolve/checked_size.hpp"
#include "../core/backends.hpp"
#include "../core/checks.hpp"
#include "../core/extended.hpp"
#include "../host/lapack.hpp"

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

// LAPACK's QR of the Gaussian matrix and the rank-n update, in the working type: the _work variants
// with the caller's workspace (no allocation and no NaN scan per matrix). A workspace of
// kLapackBlock * n elements lets geqrf and orgqr/ungqr run blocked (their block size is at most 64).
constexpr int kLapackBlock = 64;
lapack_int geqrf(int n, double* a, double* tau, std::vector<double>& work) {
    return LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, n, n, a, n, tau, work.data(), lapack_int(work.size()));
}
lapack_int geqrf(int n, std::complex<double>* a, std::complex<double>* tau, std::vector<std::complex<double>>& work) {
    return LAPACKE_zgeqrf_work(LAPACK_COL_MAJOR, n, n, a, n, tau, work.data(), lapack_int(work.size()));
}
lapack_int form_q(int n, double* a, const double* tau, std::vector<double>& work) {
    return LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, n, n, n, a, n, tau, work.data(), lapack_int(work.size()));
}
lapack_int form_q(int n, std::complex<double>* a, const std::complex<double>* tau,
                  std::vector<std::complex<double>>& work) {
    return LAPACKE_zungqr_work(LAPACK_COL_MAJOR, n, n, n, a, n, tau, work.data(), lapack_int(work.size()));
}
void lower_of_b_bh(int n, const double* b, double* a) {  // a = b b^T, lower triangle
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0, b, n, 0.0, a, n);
}
void lower_of_b_bh(int n, const std::complex<double>* b, std::complex<double>* a) {  // a = b b^H, lower triangle
    cblas_zherk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0, b, n, 0.0, a, n);
}

// One n x n matrix Q diag(d) Q^H into `a` (packed, both triangles, n >= 1): Q is the unitary factor
// of the QR factorisation of an n x n Gaussian matrix G (Haar-distributed up to the phases of its
// columns, which Q diag(d) Q^H does not see), and A = B B^H with B = Q diag(sqrt(d)), by LAPACK and
// a rank-n update instead of n Householder reflectors applied from both sides by hand: 4096 d
// matrices of n = 128 take 2.2 s instead of 3.2 s on two cores (1024 z: 1.1 s instead of 2.4 s),
// about a third of it now drawing the Gaussian numbers. `g`, `tau` and `work` are workspace (n * n,
// n and kLapackBlock * n). False if LAPACK refused (it does not for n >= 1).
template <class W>
bool spd_matrix(int n, double cond, std::mt19937_64& engine, std::vector<W>& a, std::vector<W>& g,
                std::vector<W>& tau, std::vector<W>& work) {
    std::normal_distribution<double> normal(0.0, 1.0);
    auto at = [&a, n](int i, int j) -> W& { return a[std::size_t(j) * n + i]; };
    for (W& x : g) x = gaussian<W>(engine, normal);
    if (geqrf(n, g.data(), tau.data(), work) != 0 || form_q(n, g.data(), tau.data(), work) != 0) return false;
    for (int j = 0; j < n; ++j) {  // B = Q diag(sqrt(d))
        const double scale = std::sqrt(n == 1 ? 1.0 : std::pow(cond, -double(j) / (n - 1)));
        for (int i = 0; i < n; ++i) g[std::size_t(j) * n + i] *= scale;
    }
    lower_of_b_bh(n, g.data(), a.data());
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
    return true;
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
    // Sizes checked before any allocation, and every allocation made outside the OpenMP region (an
    // exception may not leave it): the batch, then each thread's work arrays (two n x n matrices).
    const auto bytes = checked_bytes(checked_mul(nn, std::uint64_t(count)).value_or(UINT64_MAX), sizeof(T));
    checks::require(bytes.has_value(), routine, "n * n * count",
                    "a batch that fits the address space (n = " + std::to_string(n) +
                        ", count = " + std::to_string(count) + ")");
    std::vector<T> out(nn * count);
    if (nn == 0 || count == 0) return out;
    const int threads = std::max(1, std::min(count, reference::thread_count()));
    std::vector<std::vector<Work<T>>> a_of(threads), g_of(threads), tau_of(threads), work_of(threads);
    for (int t = 0; t < threads; ++t) {
        a_of[t].resize(nn);
        g_of[t].resize(nn);
        tau_of[t].resize(n);
        work_of[t].resize(std::size_t(kLapackBlock) * n);
    }
    const host::ScopedSingleThreadedBlas one_thread;  // one matrix per OpenMP thread
    std::atomic<bool> failed{false};
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        auto &a = a_of[t], &g = g_of[t], &tau = tau_of[t], &work = work_of[t];
#pragma omp for schedule(dynamic)
        for (int k = 0; k < count; ++k) {
            std::mt19937_64 engine = engine_for(seed, Stream::matrix, k);
            if (!spd_matrix(n, cond, engine, a, g, tau, work)) {  // no exception may leave the parallel region
                failed = true;
                continue;
            }
            T* dst = out.data() + nn * k;
            for (std::size_t e = 0; e < nn; ++e) {
                if constexpr (is_complex_v<T>) dst[e] = T(R(a[e].real()), R(a[e].imag()));
                else dst[e] = T(a[e]);
            }
        }
    }
    if (failed) throw Error(std::string(routine) + ": LAPACK's QR of a Gaussian matrix failed (n = " + std::to_string(n) + ")");
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
    checks::require(checked_bytes(checked_mul(nr, std::uint64_t(count)).value_or(UINT64_MAX), 2 * sizeof(T)).has_value(),
                    routine, "n * nrhs * count", "right-hand sides that fit the address space (nrhs = " +
                    std::to_string(nrhs) + ", count = " + std::to_string(count) + ")");
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
