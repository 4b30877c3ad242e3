// Tests of the symmetric indefinite solvers (ldlt.hpp) on every backend: no-pivot LDL^T reconstruction
// and solves against LAPACK, breakdown reporting, symmetric vs Hermitian, the butterflies against
// their definition, sysv_mixed's chain (converging, falling back and saying so), n = 0 / 1 / odd,
// argument errors. CUDA instances skip visibly without a GPU and compare with the CPU backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "../../src/core/ldlt_backend.hpp"
#include "../../src/host/lapack.hpp"
#include "../test_support.hpp"
#include "batchsolve/ldlt.hpp"

namespace batchsolve::test {
namespace {

using Matrix = std::vector<std::complex<double>>;  // exact-ish host arithmetic for every precision

template <class T> std::complex<double> widen(T v) { return std::complex<double>(v); }
template <class T> T narrow(std::complex<double> v) {
    if constexpr (is_complex_v<T>) return T(real_t<T>(v.real()), real_t<T>(v.imag()));
    else return T(v.real());
}
std::complex<double> mirror(std::complex<double> v, Symmetry s) { return s == Symmetry::hermitian ? std::conj(v) : v; }

// Symmetry of the test: Hermitian only matters for complex data.
template <class T> Symmetry effective(Symmetry s) { return is_complex_v<T> ? s : Symmetry::symmetric; }

// Q (unitary for complex T, else orthogonal) from modified Gram-Schmidt on a Gaussian matrix.
template <class T>
Matrix random_unitary(int n, std::mt19937_64& engine) {
    std::normal_distribution<double> normal;
    Matrix q(std::size_t(n) * n);
    for (auto& v : q) v = is_complex_v<T> ? std::complex<double>(normal(engine), normal(engine)) : normal(engine);
    for (int j = 0; j < n; ++j) {
        for (int k = 0; k < j; ++k) {
            std::complex<double> dot = 0;
            for (int i = 0; i < n; ++i) dot += std::conj(q[k * std::size_t(n) + i]) * q[j * std::size_t(n) + i];
            for (int i = 0; i < n; ++i) q[j * std::size_t(n) + i] -= dot * q[k * std::size_t(n) + i];
        }
        double norm = 0;
        for (int i = 0; i < n; ++i) norm += std::norm(q[j * std::size_t(n) + i]);
        norm = std::sqrt(norm);
        for (int i = 0; i < n; ++i) q[j * std::size_t(n) + i] /= norm;
    }
    return q;
}

// A = Q L Q^T (symmetric; complex L: singular values |l_k|) or Q L Q^H (Hermitian, real L), with
// |l_k| spread geometrically from 1 to 1/cond and random signs (phases): indefinite, cond(A) = cond.
template <class T>
Matrix indefinite_matrix(Symmetry s, int n, double cond, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    const Matrix q = random_unitary<T>(n, engine);
    std::uniform_real_distribution<double> uniform(0, 2 * M_PI);
    std::vector<std::complex<double>> lambda(n);
    for (int k = 0; k < n; ++k) {
        const double magnitude = n > 1 ? std::pow(cond, -double(k) / (n - 1)) : 1.0;
        const bool complex_phase = is_complex_v<T> && s == Symmetry::symmetric;
        lambda[k] = complex_phase ? std::polar(magnitude, uniform(engine)) : (engine() % 2 ? magnitude : -magnitude);
    }
    Matrix a(std::size_t(n) * n);
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            std::complex<double> sum = 0;
            for (int k = 0; k < n; ++k) sum += q[k * std::size_t(n) + i] * lambda[k] * mirror(q[k * std::size_t(n) + j], s);
            if (i == j && s == Symmetry::hermitian) sum = sum.real();
            a[j * std::size_t(n) + i] = sum;
            a[i * std::size_t(n) + j] = mirror(sum, s);
        }
    return a;
}

// The matrix in T, column-major with ld, the strict upper triangle NaN (it must never be read).
template <class T>
std::vector<T> lower_storage(const Matrix& a, int n, int ld) {
    std::vector<T> out(std::size_t(ld) * std::max(n, 1), poison_value<T>());
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) out[j * std::size_t(ld) + i] = narrow<T>(a[j * std::size_t(n) + i]);
    return out;
}

// Rounded back from T: the matrix the routine actually saw.
template <class T>
Matrix as_seen(const std::vector<T>& stored, Symmetry s, int n, int ld) {
    Matrix a(std::size_t(n) * n);
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            std::complex<double> v = widen(stored[j * std::size_t(ld) + i]);
            if (i == j && s == Symmetry::hermitian) v = v.real();
            a[j * std::size_t(n) + i] = v;
            a[i * std::size_t(n) + j] = mirror(v, s);
        }
    return a;
}

double frobenius(const Matrix& a) {
    double s = 0;
    for (auto v : a) s += std::norm(v);
    return std::sqrt(s);
}

// ||A - L D L^T|| / (n u || |L| |D| |L|^T ||): the backward error of a no-pivot factorisation is
// bounded by a small multiple of n u |L||D||L^T| whatever the growth (Higham, ch. 11), so this stays
// below kAcceptance for any correct factor.
template <class T>
double reconstruction_error(const Matrix& a, const std::vector<T>& f, Symmetry s, int n, int ld) {
    Matrix residual(std::size_t(n) * n), magnitude(std::size_t(n) * n);
    auto l = [&](int i, int k) -> std::complex<double> { return i == k ? 1.0 : (i > k ? widen(f[k * std::size_t(ld) + i]) : 0.0); };
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            std::complex<double> sum = 0;
            double abs_sum = 0;
            for (int k = 0; k <= std::min(i, j); ++k) {
                const std::complex<double> d = widen(f[k * std::size_t(ld) + k]);
                const std::complex<double> term = l(i, k) * d * mirror(l(j, k), s);
                sum += term;
                abs_sum += std::abs(l(i, k)) * std::abs(d) * std::abs(l(j, k));
            }
            residual[j * std::size_t(n) + i] = a[j * std::size_t(n) + i] - sum;
            magnitude[j * std::size_t(n) + i] = abs_sum;
        }
    const double scale = std::max(n, 1) * double(unit_roundoff<T>()) * frobenius(magnitude);
    return scale > 0 ? frobenius(residual) / scale : frobenius(residual);
}

// The same measure by probing, O(n^2) instead of O(n^3) for the large GPU orders: for a few random
// vectors v, max_i |(A v - L (D (L^T v)))_i| / (n u (|L| (|D| (|L|^T |v|)))_i); a wrong factor shows
// in any probe with probability 1.
template <class T>
double probed_reconstruction_error(const Matrix& a, const std::vector<T>& f, Symmetry s, int n, int ld, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    double worst = 0;
    for (int probe = 0; probe < 3; ++probe) {
        std::vector<std::complex<double>> v(n), t(n), y(n);
        std::vector<double> tm(n), ym(n);
        for (auto& x : v) x = std::complex<double>(u(engine), is_complex_v<T> ? u(engine) : 0.0);
        // t = D (L^T v) (L^H for Hermitian), tm = |D| (|L|^T |v|)
        for (int k = 0; k < n; ++k) {
            std::complex<double> sum = v[k];
            double mag = std::abs(v[k]);
            for (int i = k + 1; i < n; ++i) {
                const std::complex<double> l = widen(f[k * std::size_t(ld) + i]);
                sum += mirror(l, s) * v[i];
                mag += std::abs(l) * std::abs(v[i]);
            }
            const std::complex<double> d = widen(f[k * std::size_t(ld) + k]);
            t[k] = d * sum;
            tm[k] = std::abs(d) * mag;
        }
        // y = L t, ym = |L| tm
        for (int i = 0; i < n; ++i) y[i] = t[i], ym[i] = tm[i];
        for (int k = 0; k < n; ++k)
            for (int i = k + 1; i < n; ++i) {
                const std::complex<double> l = widen(f[k * std::size_t(ld) + i]);
                y[i] += l * t[k];
                ym[i] += std::abs(l) * tm[k];
            }
        for (int i = 0; i < n; ++i) {
            std::complex<double> av = 0;
            for (int j = 0; j < n; ++j) av += a[j * std::size_t(n) + i] * v[j];
            const double scale = n * double(unit_roundoff<T>()) * ym[i];
            worst = std::max(worst, std::abs(av - y[i]) / (scale > 0 ? scale : 1.0));
        }
    }
    return worst;
}

// ||b - A x||_inf / (||A||_inf ||x||_inf n u), the worst column; `scale` replaces ||A||_inf when given.
template <class T>
double normwise_backward_error(const Matrix& a, const std::vector<T>& x, int ldx, const Matrix& b, int n, int nrhs,
                               double scale = 0) {
    double norm_a = 0;
    for (int i = 0; i < n; ++i) {
        double row = 0;
        for (int j = 0; j < n; ++j) row += std::abs(a[j * std::size_t(n) + i]);
        norm_a = std::max(norm_a, row);
    }
    if (scale > 0) norm_a = scale;
    double worst = 0;
    for (int c = 0; c < nrhs; ++c) {
        double r_max = 0, x_max = 0;
        for (int i = 0; i < n; ++i) {
            std::complex<double> r = b[c * std::size_t(n) + i];
            for (int j = 0; j < n; ++j) r -= a[j * std::size_t(n) + i] * widen(x[c * std::size_t(ldx) + j]);
            r_max = std::max(r_max, std::abs(r));
            x_max = std::max(x_max, std::abs(widen(x[c * std::size_t(ldx) + i])));
        }
        if (std::isnan(r_max) || std::isnan(x_max)) return std::numeric_limits<double>::infinity();
        worst = std::max(worst, r_max / (norm_a * x_max * n * double(unit_roundoff<T>())));
    }
    return worst;
}

// || |L| |D| |L|^T ||_inf of a factor: the scale of a no-pivot solve's backward error, which may
// exceed ||A|| by the growth of the factorisation.
template <class T>
double factor_magnitude_norm(const std::vector<T>& f, int n, int ld) {
    auto l = [&](int i, int k) { return i == k ? 1.0 : (i > k ? std::abs(widen(f[k * std::size_t(ld) + i])) : 0.0); };
    double worst = 0;
    for (int i = 0; i < n; ++i) {
        double row = 0;
        for (int j = 0; j < n; ++j)
            for (int k = 0; k <= std::min(i, j); ++k) row += l(i, k) * std::abs(widen(f[k * std::size_t(ld) + k])) * l(j, k);
        worst = std::max(worst, row);
    }
    return worst;
}

// Diagonally dominant and indefinite: off-diagonal entries uniform in [-1, 1] (both parts for
// complex), diagonal +-(row sum + 1) with random signs (and phases for complex symmetric). No
// pivoting is stable here (growth stays bounded), so the solve must match LAPACK's accuracy.
template <class T>
Matrix dominant_indefinite(Symmetry s, int n, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    Matrix a(std::size_t(n) * n);
    for (int j = 0; j < n; ++j)
        for (int i = j + 1; i < n; ++i) {
            const std::complex<double> v = is_complex_v<T> ? std::complex<double>(u(engine), u(engine)) : u(engine);
            a[j * std::size_t(n) + i] = v;
            a[i * std::size_t(n) + j] = mirror(v, s);
        }
    for (int i = 0; i < n; ++i) {
        double row = 1;
        for (int j = 0; j < n; ++j)
            if (j != i) row += std::abs(a[j * std::size_t(n) + i]);
        const double sign = engine() % 2 ? 1.0 : -1.0;
        a[i * std::size_t(n) + i] = is_complex_v<T> && s == Symmetry::symmetric ? std::polar(row, M_PI * u(engine)) : sign * row;
    }
    return a;
}

Matrix random_rhs(int n, int nrhs, bool complex_values, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    Matrix b(std::size_t(n) * nrhs);
    for (auto& v : b) v = complex_values ? std::complex<double>(u(engine), u(engine)) : u(engine);
    return b;
}

template <class T>
std::vector<T> dense_in(const Matrix& b, int n, int cols, int ld) {
    std::vector<T> out(std::size_t(ld) * cols, poison_value<T>());
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < n; ++i) out[j * std::size_t(ld) + i] = narrow<T>(b[j * std::size_t(n) + i]);
    return out;
}

// LAPACK's pivoted solve of the same system (?sysv / ?hesv), for the side-by-side error.
template <class T>
std::vector<T> lapack_solve(Symmetry s, const std::vector<T>& a_lower, int n, int lda, std::vector<T> b, int ldb, int nrhs) {
    std::vector<T> a = a_lower;
    std::vector<lapack_int> ipiv(std::max(n, 1));
    lapack_int info = 0;
    if constexpr (std::is_same_v<T, float>) info = LAPACKE_ssysv(LAPACK_COL_MAJOR, 'L', n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb);
    else if constexpr (std::is_same_v<T, double>) info = LAPACKE_dsysv(LAPACK_COL_MAJOR, 'L', n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb);
    else if constexpr (std::is_same_v<T, std::complex<float>>)
        info = s == Symmetry::hermitian ? LAPACKE_chesv(LAPACK_COL_MAJOR, 'L', n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb)
                                        : LAPACKE_csysv(LAPACK_COL_MAJOR, 'L', n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb);
    else
        info = s == Symmetry::hermitian ? LAPACKE_zhesv(LAPACK_COL_MAJOR, 'L', n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb)
                                        : LAPACKE_zsysv(LAPACK_COL_MAJOR, 'L', n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb);
    EXPECT_EQ(info, 0) << "LAPACK sysv failed";
    return b;
}

int fetch_info(Buffer<int>& info) { return info.to_host()[0]; }

}  // namespace

// ---- sytrf_nopiv / sytrs_nopiv -------------------------------------------------------------------------

template <class C>
class Ldlt : public BackendTest<C> {};
TYPED_TEST_SUITE(Ldlt, AllConfigs);

TYPED_TEST(Ldlt, FactorReconstructsAndLeavesUpperTriangle) {
    using T = typename TypeParam::value_type;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (Symmetry s : {Symmetry::symmetric, Symmetry::hermitian}) {
        if (!is_complex_v<T> && s == Symmetry::hermitian) continue;
        // Around the leaf order (one leaf, a full and a partial second), odd, and a deeper recursion;
        // on the GPU also orders past one 512-wide block column and past the GEMM split of the trailing
        // update (above 512), checked by probing (the matrix generator is O(n^3) all the same).
        std::vector<int> sizes{1, 2, 17, 63, 64, 65, 130, 257, 400};
        if (this->is_cuda && s == Symmetry::symmetric) sizes.push_back(1100);
        for (int n : sizes) {
            SCOPED_TRACE(::testing::Message() << to_string(s) << " n = " << n);
            const int lda = n + 3;
            // (The large GPU order takes the O(n^2) diagonally dominant generator.)
            const Matrix exact = n > 300 ? dominant_indefinite<T>(s, n, seed + n) : indefinite_matrix<T>(s, n, 100, seed + n);
            const std::vector<T> input = lower_storage<T>(exact, n, lda);
            Buffer<T> a(this->ctx(), input);
            Buffer<int> info(this->ctx(), 1);
            info.fill_bytes(0xFF);
            sytrf_nopiv(s, Uplo::lower, n, a.data(), lda, info.data(), this->ctx());
            ASSERT_EQ(fetch_info(info), 0);
            const std::vector<T> factor = a.to_host();
            for (int j = 1; j < n; ++j)
                for (int i = 0; i < j; ++i)
                    ASSERT_TRUE(is_poison(factor[j * std::size_t(lda) + i])) << "upper triangle written at " << i << "," << j;
            if (n >= 2) {
                EXPECT_GT(bitwise_differences(factor, input), 0) << "L must have been written";
            }
            const double error = n > 300 ? probed_reconstruction_error(as_seen(input, s, n, lda), factor, s, n, lda, seed)
                                         : reconstruction_error(as_seen(input, s, n, lda), factor, s, n, lda);
            EXPECT_LT(error, kAcceptance) << "||A - L D L^T|| / (n u |||L||D||L^T|||)";
        }
    }
}

TYPED_TEST(Ldlt, SolveMatchesLapackBackwardError) {
    using T = typename TypeParam::value_type;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 200, nrhs = 3, lda = n + 1, ldb = n + 2;
    for (Symmetry s : {Symmetry::symmetric, Symmetry::hermitian}) {
        if (!is_complex_v<T> && s == Symmetry::hermitian) continue;
        for (bool dominant : {true, false}) {
            SCOPED_TRACE(::testing::Message() << to_string(s) << (dominant ? " diagonally dominant" : " random spectrum"));
            const Matrix exact = dominant ? dominant_indefinite<T>(s, n, seed) : indefinite_matrix<T>(s, n, 100, seed);
            const std::vector<T> input = lower_storage<T>(exact, n, lda);
            const Matrix seen = as_seen(input, s, n, lda);
            const Matrix b = random_rhs(n, nrhs, is_complex_v<T>, seed + 1);
            Buffer<T> a(this->ctx(), input), x(this->ctx(), dense_in<T>(b, n, nrhs, ldb));
            Buffer<int> info(this->ctx(), 1);
            sytrf_nopiv(s, Uplo::lower, n, a.data(), lda, info.data(), this->ctx());
            ASSERT_EQ(fetch_info(info), 0);
            sytrs_nopiv(s, Uplo::lower, n, nrhs, a.data(), lda, x.data(), ldb, this->ctx());
            const std::vector<T> ours_x = x.to_host();
            const double ours = normwise_backward_error(seen, ours_x, ldb, b, n, nrhs);
            const std::vector<T> lapack = lapack_solve<T>(s, input, n, lda, dense_in<T>(b, n, nrhs, ldb), ldb, nrhs);
            const double theirs = normwise_backward_error(seen, lapack, ldb, b, n, nrhs);
            if (dominant) {
                // Stable without pivoting: the customary acceptance, and close to Bunch-Kaufman's.
                EXPECT_LT(ours, kAcceptance) << "LAPACK: " << theirs;
                EXPECT_LT(ours, std::max(10 * theirs, 1.0)) << "LAPACK: " << theirs;
            } else {
                // Without pivoting the factor may grow (no bound in ||A||: that is what sysv_mixed's
                // refinement and fallback are for), but the solve is backward stable relative to
                // || |L||D||L^T| ||.
                const double growth_scale = factor_magnitude_norm(a.to_host(), n, lda);
                EXPECT_LT(normwise_backward_error(seen, ours_x, ldb, b, n, nrhs, growth_scale), kAcceptance)
                    << "normwise against ||A||: " << ours << ", LAPACK's: " << theirs;
            }
        }
    }
}

TYPED_TEST(Ldlt, BreakdownNamesTheColumn) {
    using T = typename TypeParam::value_type;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    struct Case {
        const char* what;
        int n, column;
    };
    // A zero pivot at `column`: A = L D L^T with d_column = 0 and a random unit L (so no entry of A is
    // conspicuously zero), L's entries in {0, +-1/4, +-1/2} and D's in {+-1, +-2}, so that A and every
    // step of its elimination are exact in single precision and the pivot comes out exactly 0 (a
    // rounded A would move it by ~u ||A||_2, which grows with n); a 2x2-block matrix [0 1; 1 0] ⊕ ...;
    // Inf and NaN entries.
    for (const Case c : {Case{"zero pivot", 150, 1}, Case{"zero pivot", 150, 70}, Case{"zero pivot", 150, 150},
                         Case{"2x2 blocks", 10, 1}, Case{"tiny pivot", 90, 33}, Case{"inf", 40, 5}, Case{"nan", 40, 5}}) {
        SCOPED_TRACE(::testing::Message() << c.what << " column " << c.column);
        const int n = c.n;
        std::mt19937_64 engine(seed);
        std::uniform_real_distribution<double> u(-1, 1);
        Matrix a(std::size_t(n) * n, 0.0);
        const std::string what = c.what;
        if (what == "2x2 blocks") {
            for (int k = 0; k + 1 < n; k += 2) a[k * std::size_t(n) + k + 1] = a[(k + 1) * std::size_t(n) + k] = 1.0 + k;
        } else {
            Matrix l(std::size_t(n) * n, 0.0);
            std::vector<double> d(n);
            for (int j = 0; j < n; ++j) {
                l[j * std::size_t(n) + j] = 1;
                for (int i = j + 1; i < n; ++i) l[j * std::size_t(n) + i] = double(int(engine() % 5) - 2) / 4;
                d[j] = (engine() % 2 ? 1.0 : -1.0) * double(1 + engine() % 2);
            }
            if (what == "zero pivot") d[c.column - 1] = 0;
            if (what == "tiny pivot") d[c.column - 1] = 1e-3 * double(unit_roundoff<T>());
            for (int j = 0; j < n; ++j)
                for (int i = j; i < n; ++i) {
                    std::complex<double> sum = 0;
                    for (int k = 0; k <= j; ++k) sum += l[k * std::size_t(n) + i] * d[k] * l[k * std::size_t(n) + j];
                    a[j * std::size_t(n) + i] = a[i * std::size_t(n) + j] = sum;
                }
            if (what == "inf") a[(c.column - 1) * std::size_t(n) + c.column - 1] = std::numeric_limits<double>::infinity();
            if (what == "nan") a[(c.column - 1) * std::size_t(n) + c.column + 3] = std::numeric_limits<double>::quiet_NaN();
        }
        // A zero pivot of the exact matrix comes out of the rounded one as O(u ||A||): below the
        // threshold sqrt(n) u max|a_ij|, so reported all the same.
        const std::vector<T> input = lower_storage<T>(a, n, n);
        Buffer<T> dev(this->ctx(), input);
        Buffer<int> info(this->ctx(), 1);
        for (Symmetry s : {Symmetry::symmetric, Symmetry::hermitian}) {
            dev.upload(input);
            sytrf_nopiv(s, Uplo::lower, n, dev.data(), n, info.data(), this->ctx());
            const int got = fetch_info(info);
            if (what == "nan") {
                // The NaN in row column+4 reaches that row's pivot at the latest.
                EXPECT_GE(got, 1);
                EXPECT_LE(got, c.column + 4);
            } else {
                EXPECT_EQ(got, c.column) << to_string(s);
            }
        }
    }
}

TYPED_TEST(Ldlt, SymmetricAndHermitianDiffer) {
    using T = typename TypeParam::value_type;
    if constexpr (!is_complex_v<T>) {
        GTEST_SKIP() << "real data: one factorisation";
    } else {
        const auto seed = fresh_seed();
        BATCHSOLVE_TRACE_SEED(seed);
        const int n = 80;
        // One stored lower triangle, read as complex symmetric and as Hermitian (conjugate upper part):
        // two matrices with two solutions. Each reading must solve its own system. The matrix is
        // diagonally dominant with a real diagonal, so that BOTH readings are safe without pivoting
        // (a random-spectrum symmetric matrix read as Hermitian has uncontrolled pivot growth: the
        // no-pivot solve then missed 30 n u on some seeds).
        const Matrix exact = dominant_indefinite<T>(Symmetry::hermitian, n, seed);
        const std::vector<T> input = lower_storage<T>(exact, n, n);
        const Matrix b = random_rhs(n, 1, true, seed + 1);
        std::vector<std::vector<T>> solutions;
        for (Symmetry s : {Symmetry::symmetric, Symmetry::hermitian}) {
            Buffer<T> a(this->ctx(), input), x(this->ctx(), dense_in<T>(b, n, 1, n));
            Buffer<int> info(this->ctx(), 1);
            sytrf_nopiv(s, Uplo::lower, n, a.data(), n, info.data(), this->ctx());
            ASSERT_EQ(fetch_info(info), 0) << to_string(s);
            sytrs_nopiv(s, Uplo::lower, n, 1, a.data(), n, x.data(), n, this->ctx());
            solutions.push_back(x.to_host());
            EXPECT_LT(normwise_backward_error(as_seen(input, s, n, n), solutions.back(), n, b, n, 1), kAcceptance) << to_string(s);
        }
        // The symmetric solution does not solve the Hermitian reading (and vice versa): a relative
        // residual above 1e-3, i.e. a scaled error above 1e-3 / (n u).
        const double wrong = 1e-3 / (n * double(unit_roundoff<T>()));
        EXPECT_GT(normwise_backward_error(as_seen(input, Symmetry::hermitian, n, n), solutions[0], n, b, n, 1), wrong);
        EXPECT_GT(normwise_backward_error(as_seen(input, Symmetry::symmetric, n, n), solutions[1], n, b, n, 1), wrong);
    }
}

TYPED_TEST(Ldlt, EmptyAndArgumentErrors) {
    using T = typename TypeParam::value_type;
    Context& ctx = this->ctx();
    Buffer<T> a(ctx, 16), b(ctx, 16);
    Buffer<int> info(ctx, 1);
    info.fill_bytes(0xFF);
    sytrf_nopiv<T>(Symmetry::symmetric, Uplo::lower, 0, nullptr, 1, info.data(), ctx);
    EXPECT_EQ(fetch_info(info), 0) << "n = 0 succeeds";
    sytrs_nopiv<T>(Symmetry::symmetric, Uplo::lower, 0, 3, nullptr, 1, nullptr, 1, ctx);
    auto expect_argument = [](auto&& call, const std::string& argument) {
        try {
            call();
            ADD_FAILURE() << "no InvalidArgument for " << argument;
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.argument(), argument) << e.what();
        }
    };
    expect_argument([&] { sytrf_nopiv(Symmetry::symmetric, Uplo::upper, 4, a.data(), 4, info.data(), ctx); }, "uplo");
    expect_argument([&] { sytrf_nopiv(Symmetry::symmetric, Uplo::lower, -1, a.data(), 4, info.data(), ctx); }, "n");
    expect_argument([&] { sytrf_nopiv(Symmetry::symmetric, Uplo::lower, 4, a.data(), 3, info.data(), ctx); }, "lda");
    expect_argument([&] { sytrf_nopiv<T>(Symmetry::symmetric, Uplo::lower, 4, nullptr, 4, info.data(), ctx); }, "a");
    expect_argument([&] { sytrf_nopiv(Symmetry::symmetric, Uplo::lower, 4, a.data(), 4, nullptr, ctx); }, "info");
    expect_argument([&] { sytrs_nopiv(Symmetry::symmetric, Uplo::lower, 4, -1, a.data(), 4, b.data(), 4, ctx); }, "nrhs");
    expect_argument([&] { sytrs_nopiv(Symmetry::symmetric, Uplo::lower, 4, 1, a.data(), 4, b.data(), 2, ctx); }, "ldb");
    expect_argument([&] { sytrs_nopiv<T>(Symmetry::symmetric, Uplo::lower, 4, 1, a.data(), 4, nullptr, 4, ctx); }, "b");
    expect_argument([&] { make_butterfly(4, 21, 1); }, "depth");
    expect_argument([&] { make_butterfly(-1, 2, 1); }, "n");
    expect_argument([&] { parse_symmetry("skew"); }, "text");
}

// ---- random butterflies -----------------------------------------------------------------------------------

TYPED_TEST(Ldlt, ButterfliesMatchTheirDefinition) {
    using T = typename TypeParam::value_type;
    using R = real_t<T>;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (int n : {1, 7, 12, 33}) {
        for (int depth : {1, 2, 3}) {
            SCOPED_TRACE(::testing::Message() << "n = " << n << " depth " << depth);
            const Butterfly u = make_butterfly(n, depth, seed);
            const int np = u.n_padded;
            ASSERT_EQ(np % (1 << depth), 0);
            ASSERT_GE(np, n);
            ASSERT_LT(np - n, 1 << depth);
            for (double v : u.diagonals) ASSERT_TRUE(v >= std::exp(-0.05) && v <= std::exp(0.05)) << v;
            // U = W_1 ... W_depth built densely from the definition.
            Matrix dense(std::size_t(np) * np, 0.0);
            for (int i = 0; i < np; ++i) dense[i * std::size_t(np) + i] = 1;
            for (int level = 0; level < depth; ++level) {
                const int m = np >> level, h = m / 2;
                Matrix w(std::size_t(np) * np, 0.0);
                for (int p = 0; p < np / m; ++p)
                    for (int k = 0; k < h; ++k) {
                        const double r0 = u.diagonals[level * std::size_t(np) + p * m + k];
                        const double r1 = u.diagonals[level * std::size_t(np) + p * m + h + k];
                        const int top = p * m + k, bottom = top + h;
                        w[top * std::size_t(np) + top] = r0 / std::sqrt(2.0);
                        w[bottom * std::size_t(np) + top] = r1 / std::sqrt(2.0);
                        w[top * std::size_t(np) + bottom] = r0 / std::sqrt(2.0);
                        w[bottom * std::size_t(np) + bottom] = -r1 / std::sqrt(2.0);
                    }
                Matrix product(std::size_t(np) * np, 0.0);
                for (int j = 0; j < np; ++j)
                    for (int k = 0; k < np; ++k)
                        for (int i = 0; i < np; ++i) product[j * std::size_t(np) + i] += dense[k * std::size_t(np) + i] * w[j * std::size_t(np) + k];
                dense = product;
            }
            // The backend's vectors transform: U x and U^T x for a random x.
            const Matrix x = random_rhs(np, 2, is_complex_v<T>, seed + 3);
            std::vector<R> diagonals(u.diagonals.begin(), u.diagonals.end());
            Buffer<R> r(this->ctx(), diagonals);
            for (bool transpose : {false, true}) {
                Buffer<T> v(this->ctx(), dense_in<T>(x, np, 2, np));
                (this->is_cuda ? cuda_backend::rbt_vectors<T> : reference::rbt_vectors<T>)(transpose, np, 2, depth, r.data(), v.data(), np, this->ctx());
                const std::vector<T> got = v.to_host();
                for (int c = 0; c < 2; ++c)
                    for (int i = 0; i < np; ++i) {
                        std::complex<double> expect = 0;
                        for (int k = 0; k < np; ++k)
                            expect += (transpose ? dense[i * std::size_t(np) + k] : dense[k * std::size_t(np) + i]) * x[c * std::size_t(np) + k];
                        EXPECT_NEAR(std::abs(widen(got[c * std::size_t(np) + i]) - expect), 0.0, 20 * double(unit_roundoff<T>()))
                            << (transpose ? "U^T x" : "U x") << " row " << i;
                    }
            }
            // The matrix transform: U^T diag(A, P) U from A's lower triangle (P: the padding).
            const Symmetry s = Symmetry::symmetric;
            const Matrix a = indefinite_matrix<T>(s, n, 10, seed + 5);
            Buffer<T> a_dev(this->ctx(), lower_storage<T>(a, n, n));
            Buffer<T> full(this->ctx(), std::size_t(np) * np);
            Buffer<int> overflow(this->ctx(), 1);
            overflow.fill_bytes(0);
            // Same-precision expansion is not instantiated; expand through the low type of the pair.
            if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>) {
                using Hi = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;
                Buffer<Hi> a_hi(this->ctx(), lower_storage<Hi>(a, n, n));
                (this->is_cuda ? cuda_backend::expand_lower<Hi, T> : reference::expand_lower<Hi, T>)(s, n, a_hi.data(), n, np, full.data(), np, 1.5, overflow.data(), this->ctx());
                (this->is_cuda ? cuda_backend::rbt_matrix<T> : reference::rbt_matrix<T>)(np, depth, r.data(), full.data(), np, this->ctx());
                EXPECT_EQ(overflow.to_host()[0], 0);
                const std::vector<T> got = full.to_host();
                double worst = 0;
                for (int j = 0; j < np; ++j)
                    for (int i = 0; i < np; ++i) {
                        std::complex<double> expect = 0;
                        for (int k = 0; k < np; ++k)
                            for (int l = 0; l < np; ++l) {
                                const std::complex<double> akl = k < n && l < n ? a[l * std::size_t(n) + k]
                                                                 : (k == l ? ldlt_detail::padding_value(k - n, 1.5) : 0.0);
                                expect += dense[i * std::size_t(np) + k] * akl * dense[j * std::size_t(np) + l];
                            }
                        worst = std::max(worst, std::abs(widen(got[j * std::size_t(np) + i]) - expect));
                    }
                EXPECT_LT(worst, 50 * double(unit_roundoff<T>())) << "U^T A U";
            }
        }
    }
}

// ---- sysv_mixed ---------------------------------------------------------------------------------------------

template <class C>
class SysvMixed : public BackendTest<C> {};
}  // namespace batchsolve::test
struct mixed_cpu_d : batchsolve::test::Config<batchsolve::Backend::cpu, double> {};
struct mixed_cpu_z : batchsolve::test::Config<batchsolve::Backend::cpu, std::complex<double>> {};
struct mixed_cuda_d : batchsolve::test::Config<batchsolve::Backend::cuda, double> {};
struct mixed_cuda_z : batchsolve::test::Config<batchsolve::Backend::cuda, std::complex<double>> {};
namespace batchsolve::test {
using MixedConfigs = ::testing::Types<mixed_cpu_d, mixed_cpu_z, mixed_cuda_d, mixed_cuda_z>;
TYPED_TEST_SUITE(SysvMixed, MixedConfigs);

namespace {
// Runs sysv_mixed on `a` (full host matrix) and checks X against the matrix it was given: the
// componentwise backward error it reports and a normwise one computed here.
template <class T>
SysvResult run_mixed(Context& ctx, Symmetry s, const Matrix& a, int n, int nrhs, const SysvOptions& options,
                     std::uint64_t seed, double* normwise = nullptr) {
    const int lda = n + 2, ldb = n + 1, ldx = n + 3;
    const std::vector<T> input = lower_storage<T>(a, n, lda);
    const Matrix b = random_rhs(n, nrhs, is_complex_v<T>, seed);
    Buffer<T> a_dev(ctx, input), b_dev(ctx, dense_in<T>(b, n, nrhs, ldb)), x(ctx, std::size_t(ldx) * std::max(nrhs, 1));
    x.fill_bytes(0xFF);
    ctx.workspace(sysv_mixed_workspace_size<T>(s, n, nrhs, options, ctx));
    const SysvResult result = sysv_mixed(s, Uplo::lower, n, nrhs, a_dev.data(), lda, b_dev.data(), ldb, x.data(), ldx, options, ctx);
    EXPECT_EQ(bitwise_differences(a_dev.to_host(), input), 0) << "A must be left as it was";
    const double error = normwise_backward_error(as_seen(input, s, n, lda), x.to_host(), ldx, b, n, nrhs);
    if (normwise) *normwise = error;
    return result;
}
}  // namespace

TYPED_TEST(SysvMixed, ConvergesOnTheLowPathWhenWellConditioned) {
    using T = typename TypeParam::value_type;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (Symmetry s : {Symmetry::symmetric, Symmetry::hermitian}) {
        if (!is_complex_v<T> && s == Symmetry::hermitian) continue;
        for (int n : {1, 64, 199}) {
            SCOPED_TRACE(::testing::Message() << to_string(s) << " n = " << n);
            double normwise = 0;
            const SysvOptions options;
            const SysvResult r = run_mixed<T>(this->ctx(), s, indefinite_matrix<T>(s, n, 100, seed + n), n, 4, options, seed, &normwise);
            // What holds for every such matrix: the path (no fallback to the pivoted factor) and the
            // final accuracy. The number of iterations does not have a bound here: the factor is
            // unpivoted (after the random butterflies), and on random indefinite matrices its growth
            // is not bounded, so each correction's gain is not either. Over 400 fresh seeds at n = 199
            // (double) it was 3 in 78%, at most 6 in 99%, 8 or 10 in 3 runs (recorded as test properties,
            // not asserted). A count is asserted only on the diagonally dominant matrices of
            // TensorCoreUpdatesStillConverge, where no growth makes the rate argument hold.
            EXPECT_EQ(r.path, SolvePath::nopiv_low) << r.describe();
            ASSERT_EQ(r.steps.size(), 1u) << r.describe();
            EXPECT_EQ(r.steps[0].outcome, StepOutcome::converged) << r.describe();
            EXPECT_LE(r.iterations, options.max_iterations) << r.describe();
            this->RecordProperty("iterations_n" + std::to_string(n), r.iterations);
            EXPECT_LT(normwise, kAcceptance);
            EXPECT_LT(r.backward_error, kAcceptance * n * double(unit_roundoff<T>())) << "componentwise";
        }
    }
}

TYPED_TEST(SysvMixed, TensorCoreUpdatesStillConverge) {
    using T = typename TypeParam::value_type;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    // Large enough for the trailing updates to be split into GEMMs (above 512), where TF32 applies;
    // diagonally dominant (kappa ~ 10), so refinement converges even from a 1e-3 factor.
    const int n = this->is_cuda ? 1200 : 300;  // the CPU ignores the option: a quick run of the same path
    SysvOptions options;
    options.tensor_core_updates = true;
    for (Symmetry s : {Symmetry::symmetric, Symmetry::hermitian}) {
        if (!is_complex_v<T> && s == Symmetry::hermitian) continue;
        SCOPED_TRACE(to_string(s));
        double normwise = 0;
        const SysvResult r = run_mixed<T>(this->ctx(), s, dominant_indefinite<T>(s, n, seed), n, 2, options, seed, &normwise);
        EXPECT_EQ(r.path, SolvePath::nopiv_low) << r.describe();
        // Each pass multiplies the residual by about kappa x the factor's relative error. These
        // matrices are strongly diagonally dominant (|a_ii| = 1 + sum_j |a_ij|: no growth, kappa of a
        // few), and the TF32 updates (u = 2^-11) are small beside the diagonal, so the rate is
        // <~ 1e-3 and 5 passes reach eps sqrt(n); measured on an H200 (issue 21's GPU request,
        // 12 fresh-seed solves of d and z, symmetric and Hermitian): 2 passes every time. 10 leaves
        // room for a rate of 0.04 and still fails a refinement that crawls.
        std::cout << "[ measure  ] " << to_string(s) << " n = " << n << ": " << r.iterations << " refinement passes ("
                  << (r.steps.back().tensor_cores ? "tensor_core_updates on" : "repeated without tensor cores") << ")\n";
        EXPECT_LE(r.iterations, 10) << r.describe();
        EXPECT_LT(normwise, kAcceptance) << r.describe();
    }
}

TYPED_TEST(SysvMixed, ZeroDiagonalNeedsButterfliesAndSaysSo) {
    using T = typename TypeParam::value_type;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    // The saddle-point structure [0 B; B^T 0] (B square, random): a11 = 0, so LDL^T without pivoting
    // breaks down at once; Bunch-Kaufman needs 2x2 pivots. (Consecutive 2x2 blocks [0 b; b 0] are no
    // test for depth-2 butterflies: a column of U meets only even or only odd rows of such a block
    // pattern when n/4 is even, so U^T A U keeps a zero diagonal.)
    for (int n : {2, 34, 96}) {
        SCOPED_TRACE(::testing::Message() << "n = " << n);
        std::mt19937_64 engine(seed + n);
        std::uniform_real_distribution<double> u(-1, 1);
        const int h = n / 2;
        Matrix a(std::size_t(n) * n, 0.0);
        for (int j = 0; j < h; ++j)
            for (int i = 0; i < h; ++i) {
                // B well conditioned: the random part has norm ~ sqrt(h), the shift exceeds it.
                const double v = u(engine) + (i == j ? 1 + 1.5 * std::sqrt(double(h)) : 0.0);
                a[(h + j) * std::size_t(n) + i] = a[i * std::size_t(n) + h + j] = v;
            }
        double normwise = 0;
        const SysvResult r = run_mixed<T>(this->ctx(), Symmetry::symmetric, a, n, 2, SysvOptions{}, seed, &normwise);
        ASSERT_GE(r.steps.size(), 2u) << r.describe();
        EXPECT_EQ(r.steps[0].path, SolvePath::nopiv_low);
        EXPECT_EQ(r.steps[0].outcome, StepOutcome::breakdown) << r.describe();
        EXPECT_EQ(r.steps[0].column, 1);
        EXPECT_EQ(r.path, SolvePath::rbt_nopiv_low) << r.describe();
        EXPECT_LT(normwise, kAcceptance) << r.describe();

        SysvOptions no_rbt;
        no_rbt.allow_rbt = false;
        const SysvResult p = run_mixed<T>(this->ctx(), Symmetry::symmetric, a, n, 2, no_rbt, seed, &normwise);
        ASSERT_EQ(p.steps.size(), 2u) << p.describe();
        EXPECT_TRUE(p.path == SolvePath::pivoted_high_sytrf || p.path == SolvePath::pivoted_high_getrf) << p.describe();
        EXPECT_LT(normwise, kAcceptance) << p.describe();
    }
}

TYPED_TEST(SysvMixed, IllConditionedFallsBackToPivoted) {
    using T = typename TypeParam::value_type;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    // cond 1e12: kappa u_low >> 1, so refinement in single precision cannot converge.
    const int n = 120;
    for (Symmetry s : {Symmetry::symmetric, Symmetry::hermitian}) {
        if (!is_complex_v<T> && s == Symmetry::hermitian) continue;
        SCOPED_TRACE(to_string(s));
        double normwise = 0;
        const SysvResult r = run_mixed<T>(this->ctx(), s, indefinite_matrix<T>(s, n, 1e12, seed), n, 2, SysvOptions{}, seed, &normwise);
        ASSERT_EQ(r.steps.size(), 3u) << r.describe();
        for (int k = 0; k < 2; ++k)
            EXPECT_NE(r.steps[k].outcome, StepOutcome::converged) << r.describe();
        EXPECT_TRUE(r.path == SolvePath::pivoted_high_sytrf || r.path == SolvePath::pivoted_high_getrf) << r.describe();
        EXPECT_EQ(r.steps[2].outcome, StepOutcome::solved);
        EXPECT_LT(normwise, kAcceptance) << r.describe();
    }
}

TYPED_TEST(SysvMixed, FailedTensorCoreStepIsRepeatedWithout) {
    using T = typename TypeParam::value_type;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    // Ill-conditioned for refinement from a single-precision factor: the TF32 step fails; if by
    // stalling or diverging, it is repeated in plain single precision, else the chain moves on to
    // butterflies; every later step is plain single precision; the last one solves the system.
    const int n = 100;
    SysvOptions options;
    options.tensor_core_updates = true;
    for (double cond : {1e7, 1e12}) {
        SCOPED_TRACE(::testing::Message() << "cond " << cond);
        double normwise = 0;
        const SysvResult r = run_mixed<T>(this->ctx(), Symmetry::symmetric, indefinite_matrix<T>(Symmetry::symmetric, n, cond, seed), n,
                                          1, options, seed, &normwise);
        // kappa 1e7 sometimes still converges slowly from a single-precision factor, and either
        // kappa may break down instead of stalling: check the rule on whatever happened.
        ASSERT_GE(r.steps.size(), 1u);
        EXPECT_EQ(r.steps[0].path, SolvePath::nopiv_low);
        EXPECT_TRUE(r.steps[0].tensor_cores);
        if (r.steps.size() >= 2) {
            const StepOutcome first = r.steps[0].outcome;
            const bool precision = first == StepOutcome::stalled || first == StepOutcome::diverged || first == StepOutcome::too_many_iterations;
            EXPECT_EQ(r.steps[1].path, precision ? SolvePath::nopiv_low : SolvePath::rbt_nopiv_low) << r.describe();
        }
        for (std::size_t k = 1; k < r.steps.size(); ++k) EXPECT_FALSE(r.steps[k].tensor_cores) << r.describe();
        if (cond == 1e12) {
            EXPECT_GE(r.steps.size(), 3u) << "no single-precision factor can serve kappa 1e12: " << r.describe();
        }
        EXPECT_TRUE(r.steps.back().outcome == StepOutcome::converged || r.steps.back().outcome == StepOutcome::solved) << r.describe();
        EXPECT_LT(normwise, kAcceptance) << r.describe();
    }
}

TYPED_TEST(SysvMixed, ButterfliesOnOddOrders) {
    using T = typename TypeParam::value_type;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    SysvOptions options;
    options.start_with_rbt = true;
    for (int depth : {1, 2, 3})
        for (int n : {1, 3, 7, 65}) {
            SCOPED_TRACE(::testing::Message() << "n = " << n << " depth " << depth);
            options.butterfly_depth = depth;
            double normwise = 0;
            const SysvResult r = run_mixed<T>(this->ctx(), Symmetry::symmetric, indefinite_matrix<T>(Symmetry::symmetric, n, 30, seed), n, 1,
                                              options, seed, &normwise);
            EXPECT_EQ(r.path, SolvePath::rbt_nopiv_low) << r.describe();
            EXPECT_LT(normwise, kAcceptance) << r.describe();
        }
}

TYPED_TEST(SysvMixed, OverflowInTheLowerPrecisionFallsBack) {
    using T = typename TypeParam::value_type;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 40;
    Matrix a = indefinite_matrix<T>(Symmetry::symmetric, n, 10, seed);
    for (auto& v : a) v *= 1e45;  // beyond float's range (3.4e38), fine in double
    double normwise = 0;
    const SysvResult r = run_mixed<T>(this->ctx(), Symmetry::symmetric, a, n, 1, SysvOptions{}, seed, &normwise);
    ASSERT_EQ(r.steps.size(), 3u) << r.describe();
    EXPECT_EQ(r.steps[0].outcome, StepOutcome::overflow);
    EXPECT_EQ(r.steps[1].outcome, StepOutcome::overflow);
    EXPECT_EQ(r.steps[2].outcome, StepOutcome::solved);
    EXPECT_LT(normwise, kAcceptance) << r.describe();
}

TYPED_TEST(SysvMixed, NothingAllowedReturnsNaNAndSaysNone) {
    using T = typename TypeParam::value_type;
    const int n = 6;
    Matrix a(std::size_t(n) * n, 0.0);  // singular: every step fails
    SysvOptions options;
    const SysvResult r = run_mixed<T>(this->ctx(), Symmetry::symmetric, a, n, 1, options, 7);
    EXPECT_EQ(r.path, SolvePath::none) << r.describe();
    EXPECT_EQ(r.steps.size(), 3u) << r.describe();
    EXPECT_TRUE(std::isnan(r.backward_error));
}

TYPED_TEST(SysvMixed, ArgumentErrorsNameTheArgument) {
    using T = typename TypeParam::value_type;
    Context& ctx = this->ctx();
    Buffer<T> a(ctx, 64), b(ctx, 16), x(ctx, 16);
    const SysvOptions o;
    auto expect_argument = [](auto&& call, const std::string& argument) {
        try {
            call();
            ADD_FAILURE() << "no InvalidArgument for " << argument;
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.argument(), argument) << e.what();
        }
    };
    expect_argument([&] { sysv_mixed(Symmetry::symmetric, Uplo::lower, 4, 1, a.data(), 4, b.data(), 4, b.data(), 4, o, ctx); }, "x");
    expect_argument([&] { sysv_mixed(Symmetry::symmetric, Uplo::lower, 4, 1, a.data(), 4, b.data(), 4, a.data() + 8, 4, o, ctx); }, "x");
    expect_argument([&] { sysv_mixed(Symmetry::symmetric, Uplo::lower, 4, 1, a.data(), 4, b.data(), 4, x.data(), 3, o, ctx); }, "ldx");
    expect_argument([&] { sysv_mixed(Symmetry::symmetric, Uplo::lower, 4, -2, a.data(), 4, b.data(), 4, x.data(), 4, o, ctx); }, "nrhs");
    SysvOptions bad = o;
    bad.butterfly_depth = 0;
    expect_argument([&] { sysv_mixed(Symmetry::symmetric, Uplo::lower, 4, 1, a.data(), 4, b.data(), 4, x.data(), 4, bad, ctx); },
                    "options.butterfly_depth");
    const SysvResult empty = sysv_mixed<T>(Symmetry::symmetric, Uplo::lower, 0, 1, nullptr, 1, nullptr, 1, nullptr, 1, o, ctx);
    EXPECT_EQ(empty.path, SolvePath::none);
    EXPECT_TRUE(empty.steps.empty());
}

}  // namespace batchsolve::test
