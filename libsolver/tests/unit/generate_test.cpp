// The host generators of generate.hpp in every precision: determinism in the seed, exact Hermitian
// symmetry, the requested condition number, B = A X, and spoiled members failing where announced.
#include "test_support.hpp"

namespace batchsolve::test {
namespace {

template <class T>
class Generate : public ::testing::Test {};
TYPED_TEST_SUITE(Generate, AllPrecisions);

// y = A v for one packed matrix (both triangles), in long double.
template <class T>
std::vector<std::complex<long double>> multiply(const std::vector<T>& a, int n, const std::vector<std::complex<long double>>& v) {
    std::vector<std::complex<long double>> y(n);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
            y[i] += std::complex<long double>(std::real(a[std::size_t(j) * n + i]), std::imag(a[std::size_t(j) * n + i])) * v[j];
    return y;
}

template <class T>
T narrow_to(const std::complex<long double>& x) {
    if constexpr (is_complex_v<T>) return T(real_t<T>(x.real()), real_t<T>(x.imag()));
    else return T(x.real());
}

long double normalize(std::vector<std::complex<long double>>& v) {
    long double s = 0;
    for (const auto& x : v) s += std::norm(x);
    s = std::sqrt(s);
    for (auto& x : v) x /= s;
    return s;
}

TYPED_TEST(Generate, DeterministicInTheSeed) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 9, count = 5;
    const std::vector<T> a = generate_spd_batch<T>(n, count, 1e3, seed);
    EXPECT_EQ(bitwise_differences(a, generate_spd_batch<T>(n, count, 1e3, seed)), 0);
    EXPECT_GT(bitwise_differences(a, generate_spd_batch<T>(n, count, 1e3, seed + 1)), n * n * count / 2);
    // Matrices differ from each other within the batch.
    EXPECT_GT(bitwise_differences(matrix_of(a, n, n, 0), matrix_of(a, n, n, 1)), n * n / 2);
    const RhsWithSolution<T> r1 = generate_rhs_batch(a, n, count, 3, seed), r2 = generate_rhs_batch(a, n, count, 3, seed);
    EXPECT_EQ(bitwise_differences(r1.x, r2.x), 0);
    EXPECT_EQ(bitwise_differences(r1.b, r2.b), 0);
    EXPECT_GT(bitwise_differences(r1.x, generate_rhs_batch(a, n, count, 3, seed + 1).x), n * 3 * count / 2);
}

TYPED_TEST(Generate, HermitianWithRealDiagonalAndLargestEntryOne) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (int n : {1, 2, 7, 33}) {
        const int count = 4;
        const std::vector<T> a = generate_spd_batch<T>(n, count, 1e2, seed + n);
        ASSERT_EQ(a.size(), std::size_t(n) * n * count);
        for (int k = 0; k < count; ++k) {
            double largest = 0;
            int asymmetric = 0;
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) {
                    const T x = a[packed_index(n, n, k, i, j)], y = a[packed_index(n, n, k, j, i)];
                    asymmetric += !(x == conj_of(y));  // values: +0 and -0 imaginary parts are equal
                    largest = std::max(largest, double(std::abs(x)));
                }
            EXPECT_EQ(asymmetric, 0) << "n=" << n << " matrix " << k << " is not exactly Hermitian";
            EXPECT_NEAR(largest, 1.0, 8 * double(unit_roundoff<T>())) << "n=" << n << " matrix " << k;
            for (int j = 0; j < n; ++j) {
                EXPECT_GT(std::real(a[packed_index(n, n, k, j, j)]), 0);
                EXPECT_EQ(std::imag(a[packed_index(n, n, k, j, j)]), 0);
            }
        }
    }
}

TYPED_TEST(Generate, ConditionNumberAsRequested) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 10, count = 3, iterations = 100;  // eigenvalue ratio cond^(-1/(n-1)) ~ 0.46 per step
    const double cond = 1e3;
    const std::vector<T> a = generate_spd_batch<T>(n, count, cond, seed);
    Context cpu(Backend::cpu);
    const FactorResult<T> f = reference_potrf(cpu, Uplo::lower, a, n, count);
    ASSERT_EQ(f.info, std::vector<int>(count, 0));
    for (int k = 0; k < count; ++k) {
        const std::vector<T> ak = matrix_of(a, n, n, k), fk = matrix_of(f.factor, n, n, k);
        // Largest eigenvalue by power iteration, smallest by inverse iteration (solves with the factor).
        std::vector<std::complex<long double>> v(n, 1), w(n, 1);
        long double largest = 0, inverse_largest = 0;
        for (int it = 0; it < iterations; ++it) {
            normalize(v);
            v = multiply(ak, n, v);
            largest = normalize(v);
            normalize(w);
            std::vector<T> rhs(n);
            for (int i = 0; i < n; ++i) rhs[i] = narrow_to<T>(w[i]);
            const std::vector<T> sol = reference_potrs(cpu, Uplo::lower, fk, rhs, n, 1, 1);
            for (int i = 0; i < n; ++i) w[i] = {std::real(sol[i]), std::imag(sol[i])};
            inverse_largest = normalize(w);
        }
        const double measured = double(largest * inverse_largest);
        EXPECT_NEAR(measured / cond, 1.0, 100 * n * double(unit_roundoff<T>()) * cond)
            << "matrix " << k << ": 2-norm condition number " << measured << ", asked for " << cond;
    }
}

TYPED_TEST(Generate, RhsHoldsAKnownSolution) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 13, count = 6;
    const std::vector<T> a = generate_spd_batch<T>(n, count, 1e2, seed);
    for (int nrhs : {0, 1, 4}) {
        const RhsWithSolution<T> r = generate_rhs_batch(a, n, count, nrhs, seed + 1);
        ASSERT_EQ(r.x.size(), std::size_t(n) * nrhs * count);
        ASSERT_EQ(r.b.size(), r.x.size());
        for (const T& x : r.x) {
            EXPECT_LE(std::abs(std::real(x)), 1);
            EXPECT_LE(std::abs(std::imag(x)), 1);
        }
        // B = A X rounded once: far below the acceptance threshold of a computed solution.
        EXPECT_LT(max_or_nan(solve_backward_error(Uplo::lower, a, r.x, r.b, n, nrhs, count)), 1.0);
        EXPECT_LT(max_or_nan(solve_backward_error(Uplo::upper, a, r.x, r.b, n, nrhs, count)), 1.0);
    }
}

TYPED_TEST(Generate, SpoiledMatricesFailAtTheirColumn) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 7, count = 2 * n;
    Context cpu(Backend::cpu);
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        std::vector<T> a = generate_spd_batch<T>(n, count + 1, 1e2, seed);
        std::vector<int> expected(count + 1, 0);
        for (int col = 0; col < n; ++col) {
            spoil_matrix(a, n, col, col, BadMatrix::indefinite);
            spoil_matrix(a, n, n + col, col, BadMatrix::nan);
            expected[col] = expected[n + col] = col + 1;
        }
        EXPECT_EQ(reference_potrf(cpu, uplo, a, n, count + 1).info, expected) << to_string(uplo);
    }
}

TYPED_TEST(Generate, ArgumentErrorsNameTheArgument) {
    using T = TypeParam;
    expect_invalid_argument([] { generate_spd_batch<T>(4, 2, 0.5, 1); }, "cond");
    expect_invalid_argument([] { generate_spd_batch<T>(-1, 2, 10, 1); }, "n");
    expect_invalid_argument([] { generate_spd_batch<T>(4, -2, 10, 1); }, "count");
    std::vector<T> a = generate_spd_batch<T>(4, 2, 10, 1);
    expect_invalid_argument([&] { generate_rhs_batch(a, 4, 3, 1, 1); }, "a");
    expect_invalid_argument([&] { generate_rhs_batch(a, 4, 2, -1, 1); }, "nrhs");
    expect_invalid_argument([&] { spoil_matrix(a, 4, 2, 0, BadMatrix::nan); }, "k");
    expect_invalid_argument([&] { spoil_matrix(a, 4, 1, 4, BadMatrix::nan); }, "col");
}

// Issue 22 item 4: sizes whose element count wraps are refused before any allocation (they once
// threw std::bad_alloc inside the OpenMP region: terminate), and an empty batch of a huge order
// allocates nothing.
TYPED_TEST(Generate, HugeSizesAreRefusedBeforeAllocating) {
    using T = TypeParam;
    expect_invalid_argument([] { generate_spd_batch<T>(1 << 30, 1 << 30, 10, 1); }, "n * n * count");
    EXPECT_TRUE(generate_spd_batch<T>(1 << 20, 0, 10, 1).empty());
}

}  // namespace
}  // namespace batchsolve::test
