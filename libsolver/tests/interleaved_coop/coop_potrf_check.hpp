// Inputs and checks of the cooperative potrf tests (host emulation and GPU): random HPD batches with
// a not-positive-definite matrix and a NaN matrix at random lanes, the other triangle poisoned, and
// the verdict on a kernel's output against LAPACKE potrf through the CPU backend.
#pragma once

#include <gtest/gtest.h>

#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "../test_support.hpp"

namespace batchsolve::test::coop {

template <class T>
struct PotrfInput {
    std::vector<T> a;          // packed, both triangles; the other triangle NaN
    int not_spd = -1;          // lane whose pivot `bad_column` (0-based) is negative, -1: none
    int bad_column = -1;
    int nan_lane = -1;         // lane with a NaN in its triangle, -1: none
};

// L(i, j), i >= j, of a packed matrix stored in `uplo` (upper: conj(U(j, i))).
template <class T>
T lower_element(const std::vector<T>& a, Uplo uplo, int n, int k, int i, int j) {
    return uplo == Uplo::lower ? a[packed_index(n, n, k, i, j)] : conj_of(a[packed_index(n, n, k, j, i)]);
}

// `with_failures` (needs count >= 2): one lane gets A(j, j) negated at a random column j (its leading
// minor j + 1 is then not positive definite, the ones before are), another a NaN at a random entry
// (r, c) of its triangle (pivot r turns NaN).
template <class T>
PotrfInput<T> potrf_input(Uplo uplo, int n, int count, std::uint64_t seed, bool with_failures) {
    PotrfInput<T> in;
    in.a = with_other_triangle_poisoned(test_matrices<T>(n, count, seed), uplo, n, count);
    if (!with_failures || count < 2) return in;
    std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
    in.not_spd = int(rng() % count);
    in.nan_lane = int((in.not_spd + 1 + rng() % (count - 1)) % count);
    in.bad_column = int(rng() % n);
    T& d = in.a[packed_index(n, n, in.not_spd, in.bad_column, in.bad_column)];
    d = -d;
    const int r = int(rng() % n), c = int(rng() % (r + 1));
    const auto nan = std::numeric_limits<real_t<T>>::quiet_NaN();
    T value{};
    if constexpr (std::is_same_v<T, real_t<T>>) value = nan;
    else value = T(nan, nan);
    in.a[uplo == Uplo::lower ? packed_index(n, n, in.nan_lane, r, c) : packed_index(n, n, in.nan_lane, c, r)] = value;
    return in;
}

// Columns 0 .. m - 1 of the Cholesky factor of matrix k (lower coordinates, long double): what a
// factorisation that stops after m columns must have written.
template <class T>
std::vector<std::complex<long double>> leading_columns(const std::vector<T>& a, Uplo uplo, int n, int k, int m) {
    using C = std::complex<long double>;
    auto at = [&](int i, int j) {
        const T v = lower_element(a, uplo, n, k, i, j);
        return C(std::real(v), std::imag(v));
    };
    std::vector<C> l(std::size_t(n) * m);
    for (int c = 0; c < m; ++c) {
        C d = at(c, c);
        for (int p = 0; p < c; ++p) d -= l[p * n + c] * std::conj(l[p * n + c]);
        const long double s = std::sqrt(d.real());
        l[c * n + c] = s;
        for (int i = c + 1; i < n; ++i) {
            C x = at(i, c);
            for (int p = 0; p < c; ++p) x -= l[p * n + i] * std::conj(l[p * n + c]);
            l[c * n + i] = x / s;
        }
    }
    return l;
}

// The verdict on `factor` and `info` (what a kernel with tile size nb left) for input `in`:
//  - info as LAPACKE potrf (CPU backend) says, for every matrix;
//  - the other triangle bit for bit as it was (NaN: it was never read into a result either);
//  - a good matrix: ||A - L L^H|| / (n ||A|| u) < kAcceptance and within cross_backend_tolerance of
//    LAPACKE's factor;
//  - a failed matrix (first bad pivot in tile column K): tile columns before K hold its L (within
//    tolerance of leading_columns; not checked for the NaN matrix, whose L may hold the NaN), the
//    others are untouched bit for bit (as the one-thread left-looking kernel leaves them).
template <class T>
void check_potrf_output(Context& cpu, Uplo uplo, int n, int count, int nb, const PotrfInput<T>& in,
                        const std::vector<T>& factor, const std::vector<int>& info) {
    const FactorResult<T> ref = reference_potrf(cpu, uplo, in.a, n, count);
    ASSERT_EQ(info.size(), std::size_t(count));
    EXPECT_EQ(other_triangle_changes(in.a, factor, uplo, n, count), 0) << "the other triangle was written";
    const std::vector<double> error = factorization_error(uplo, in.a, factor, n, count);
    const double tol = cross_backend_tolerance<T>(n);
    int good = 0, failures = 0;
    for (int k = 0; k < count; ++k) {
        if (info[k] != ref.info[k]) {
            ADD_FAILURE() << "matrix " << k << ": info " << info[k] << ", LAPACKE says " << ref.info[k];
            if (++failures > 5) return;
            continue;
        }
        if (k == in.not_spd) {
            EXPECT_EQ(info[k], in.bad_column + 1) << "matrix " << k << " (made not SPD)";
        }
        if (k == in.nan_lane) {
            EXPECT_GT(info[k], 0) << "matrix " << k << " (holds a NaN)";
        }
        if (info[k] == 0) {
            ++good;
            const double diff = relative_difference(factor, ref.factor, n, n, k, triangle_part(uplo));
            if (!(error[k] < kAcceptance) || !(diff <= tol)) {
                ADD_FAILURE() << "matrix " << k << ": ||A - L L^H|| / (n ||A|| u) = " << error[k]
                              << ", ||L - L_lapack|| / ||L_lapack|| = " << diff << " (tolerance " << tol << ")";
                if (++failures > 5) return;
            }
            continue;
        }
        if (info[k] < 0) continue;  // reported above (info must equal LAPACKE's, which is >= 0)
        const int m = (info[k] - 1) / nb * nb;  // columns of the tile columns before the failing one
        int changed = 0;
        long double d2 = 0, l2 = 0;
        const auto l = leading_columns(in.a, uplo, n, k, m);
        for (int j = 0; j < n; ++j)
            for (int i = j; i < n; ++i) {
                const std::size_t e = uplo == Uplo::lower ? packed_index(n, n, k, i, j) : packed_index(n, n, k, j, i);
                if (j >= m) {
                    changed += !bitwise_equal(factor[e], in.a[e]);
                } else {
                    const T v = lower_element(factor, uplo, n, k, i, j);
                    d2 += std::norm(std::complex<long double>(std::real(v), std::imag(v)) - l[std::size_t(j) * n + i]);
                    l2 += std::norm(l[std::size_t(j) * n + i]);
                }
            }
        EXPECT_EQ(changed, 0) << "matrix " << k << " (info " << info[k] << "): entries of tile columns from " << m
                              << " on were written";
        if (k != in.nan_lane && m > 0) {
            EXPECT_LE(double(std::sqrt(d2 / l2)), tol) << "matrix " << k << " (info " << info[k] << "): columns before "
                                                       << m << " do not hold L";
        }
    }
    EXPECT_GT(good, 0) << "no matrix was factored";
}

}  // namespace batchsolve::test::coop
