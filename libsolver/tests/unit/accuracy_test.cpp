// The error measures of accuracy.hpp in every precision: zero on exact integer data, above the
// threshold for perturbed data, NaN for NaN, only the `uplo` triangle read, sizes checked.
#include "test_support.hpp"

namespace batchsolve::test {
namespace {

template <class T>
class Accuracy : public ::testing::Test {};
TYPED_TEST_SUITE(Accuracy, AllPrecisions);

// Small integers (Gaussian integers for complex): every product and sum below is exact.
template <class T>
T small_integer(std::mt19937_64& engine) {
    std::uniform_int_distribution<int> digit(-3, 3);
    if constexpr (is_complex_v<T>) {
        const int re = digit(engine);
        return T(real_t<T>(re), real_t<T>(digit(engine)));
    } else {
        return T(digit(engine));
    }
}

// An integer lower-triangular L with positive diagonal, and A = L L^H (both triangles), exactly.
template <class T>
struct ExactFactor {
    std::vector<T> l, a;
};

template <class T>
ExactFactor<T> exact_factor(int n, int count, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    ExactFactor<T> out{std::vector<T>(std::size_t(n) * n * count, T(0)), std::vector<T>(std::size_t(n) * n * count)};
    for (int k = 0; k < count; ++k) {
        for (int j = 0; j < n; ++j) {
            out.l[packed_index(n, n, k, j, j)] = T(real_t<T>(1 + std::uniform_int_distribution<int>(0, 3)(engine)));
            for (int i = j + 1; i < n; ++i) out.l[packed_index(n, n, k, i, j)] = small_integer<T>(engine);
        }
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                T sum(0);
                for (int p = 0; p <= std::min(i, j); ++p)
                    sum += out.l[packed_index(n, n, k, i, p)] * conj_of(out.l[packed_index(n, n, k, j, p)]);
                out.a[packed_index(n, n, k, i, j)] = sum;
            }
    }
    return out;
}

// U = L^H, stored in the upper triangle.
template <class T>
std::vector<T> conjugate_transpose(const std::vector<T>& l, int n, int count) {
    std::vector<T> u(l.size());
    for (int k = 0; k < count; ++k)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) u[packed_index(n, n, k, i, j)] = conj_of(l[packed_index(n, n, k, j, i)]);
    return u;
}

TYPED_TEST(Accuracy, FactorizationErrorIsZeroForAnExactFactor) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 6, count = 4;  // entries of A stay below 2^24: exact in single precision too
    const ExactFactor<T> e = exact_factor<T>(n, count, seed);
    const std::vector<T> u = conjugate_transpose(e.l, n, count);
    EXPECT_EQ(factorization_error(Uplo::lower, e.a, e.l, n, count), std::vector<double>(count, 0.0));
    EXPECT_EQ(factorization_error(Uplo::upper, e.a, u, n, count), std::vector<double>(count, 0.0));
    // The other triangle of A and of the factor is not read.
    EXPECT_EQ(factorization_error(Uplo::lower, with_other_triangle_poisoned(e.a, Uplo::lower, n, count),
                                  with_other_triangle_poisoned(e.l, Uplo::lower, n, count), n, count),
              std::vector<double>(count, 0.0));
    EXPECT_EQ(factorization_error(Uplo::upper, with_other_triangle_poisoned(e.a, Uplo::upper, n, count),
                                  with_other_triangle_poisoned(u, Uplo::upper, n, count), n, count),
              std::vector<double>(count, 0.0));
}

TYPED_TEST(Accuracy, FactorizationErrorCatchesAPerturbedOrNanFactor) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 6, count = 3;
    const ExactFactor<T> e = exact_factor<T>(n, count, seed);
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        std::vector<T> f = uplo == Uplo::lower ? e.l : conjugate_transpose(e.l, n, count);
        // Matrix 0: one entry off by 10^4 n u relative: far above the threshold.
        f[packed_index(n, n, 0, n - 1, n - 1)] *= real_t<T>(1 + 1e4 * n * double(unit_roundoff<T>()));
        // Matrix 2: a NaN in the triangle.
        f[packed_index(n, n, 2, 2, 2)] = std::numeric_limits<real_t<T>>::quiet_NaN();
        const std::vector<double> err = factorization_error(uplo, e.a, f, n, count);
        EXPECT_GT(err[0], kAcceptance) << to_string(uplo);
        EXPECT_EQ(err[1], 0.0) << to_string(uplo);
        EXPECT_TRUE(std::isnan(err[2])) << to_string(uplo);
        EXPECT_TRUE(std::isnan(max_or_nan(err)));
        EXPECT_FALSE(max_or_nan(err) < kAcceptance);
    }
}

TYPED_TEST(Accuracy, SolveBackwardErrorSeparatesGoodFromBadSolutions) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 5, nrhs = 2, count = 3;
    const ExactFactor<T> e = exact_factor<T>(n, count, seed);
    std::mt19937_64 engine(seed + 1);
    std::vector<T> x(std::size_t(n) * nrhs * count), b(x.size());
    for (T& v : x) v = small_integer<T>(engine);
    for (int k = 0; k < count; ++k)
        for (int r = 0; r < nrhs; ++r)
            for (int i = 0; i < n; ++i) {
                T sum(0);
                for (int j = 0; j < n; ++j) sum += e.a[packed_index(n, n, k, i, j)] * x[packed_index(n, nrhs, k, j, r)];
                b[packed_index(n, nrhs, k, i, r)] = sum;
            }
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        const std::vector<T> a = with_other_triangle_poisoned(e.a, uplo, n, count);
        EXPECT_EQ(solve_backward_error(uplo, a, x, b, n, nrhs, count), std::vector<double>(count, 0.0));
        std::vector<T> bad = x;
        bad[packed_index(n, nrhs, 1, 0, 1)] += T(real_t<T>(1e5 * n * double(unit_roundoff<T>())));
        bad[packed_index(n, nrhs, 2, n - 1, 0)] = std::numeric_limits<real_t<T>>::quiet_NaN();
        const std::vector<double> err = solve_backward_error(uplo, a, bad, b, n, nrhs, count);
        EXPECT_EQ(err[0], 0.0);
        EXPECT_GT(err[1], kAcceptance);
        EXPECT_TRUE(std::isnan(err[2]));
    }
}

TEST(AccuracyMaxOrNan, LargestOrNan) {
    EXPECT_EQ(max_or_nan({1.0, 3.0, 2.0}), 3.0);
    EXPECT_EQ(max_or_nan({}), 0.0);
    EXPECT_TRUE(std::isnan(max_or_nan({1.0, std::nan(""), 2.0})));
    EXPECT_TRUE(std::isnan(max_or_nan({std::nan(""), 5.0})));
}

TYPED_TEST(Accuracy, SizeMismatchesNameTheArgument) {
    using T = TypeParam;
    const std::vector<T> a(2 * 9), f(2 * 9), short_f(9), x(2 * 3), b(2 * 3);
    expect_invalid_argument([&] { factorization_error(Uplo::lower, a, short_f, 3, 2); }, "factor");
    expect_invalid_argument([&] { factorization_error(Uplo::lower, short_f, f, 3, 2); }, "a");
    expect_invalid_argument([&] { solve_backward_error(Uplo::lower, a, x, b, 3, 2, 2); }, "x");
    expect_invalid_argument([&] { solve_backward_error(Uplo::lower, a, x, std::vector<T>(5), 3, 1, 2); }, "b");
    expect_invalid_argument([&] { solve_backward_error(Uplo::lower, a, x, b, 3, -1, 2); }, "nrhs");
}

}  // namespace
}  // namespace batchsolve::test
