// Inputs and checks of the cooperative potrf and posv tests (host emulation and GPU): random HPD
// batches with a not-positive-definite matrix and a NaN matrix at random lanes, the other triangle
// poisoned, and the verdict on a kernel's output against LAPACKE potrf (posv: and potrs) through the
// CPU backend.
#pragma once

#include <gtest/gtest.h>

#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "test_support.hpp"

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

// ---- posv: the same factorisation checks, plus the solutions ------------------------------------------

template <class T>
struct PosvInput {
    PotrfInput<T> a;        // A as potrf_input makes it (a not-SPD and a NaN matrix at random lanes)
    std::vector<T> sound;   // the same batch without the failures (equal to a.a at every other lane)
    std::vector<T> whole;   // `sound` with both triangles (for B = A X and the backward error)
    std::vector<T> b;       // right-hand sides, from `whole`
};

template <class T>
PosvInput<T> posv_input(Uplo uplo, int n, int count, int nrhs, std::uint64_t seed, bool with_failures) {
    PosvInput<T> in;
    in.a = potrf_input<T>(uplo, n, count, seed, with_failures);
    in.sound = potrf_input<T>(uplo, n, count, seed, false).a;
    in.whole = test_matrices<T>(n, count, seed);
    in.b = generate_rhs_batch(in.whole, n, count, nrhs, seed + 1).b;
    return in;
}

// The verdict on what a posv kernel with tile size nb left (A as `factor`, B as `x`, `info`):
//  - A and info exactly as check_potrf_output demands of potrf;
//  - a failed matrix (LAPACKE potrf's info > 0): its B bit for bit as given;
//  - a sound one: scaled backward error ||B - A X|| / (n (||A|| ||X|| + ||B||) u) < kAcceptance and
//    ||X - X_lapack|| / ||X_lapack|| within cross_backend_tolerance (X_lapack: LAPACKE potrf + potrs).
template <class T>
void check_posv_output(Context& cpu, Uplo uplo, int n, int count, int nrhs, int nb, const PosvInput<T>& in,
                       const std::vector<T>& factor, const std::vector<int>& info, const std::vector<T>& x) {
    check_potrf_output(cpu, uplo, n, count, nb, in.a, factor, info);
    ASSERT_EQ(x.size(), in.b.size());
    const FactorResult<T> ref = reference_potrf(cpu, uplo, in.a.a, n, count);
    // LAPACKE's X; a failed matrix solves with the identity instead of its partial factor (not compared)
    std::vector<T> l = ref.factor;
    for (int k = 0; k < count; ++k)
        if (ref.info[k] != 0)
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) l[packed_index(n, n, k, i, j)] = i == j ? T(1) : T(0);
    const std::vector<T> x_ref = reference_potrs(cpu, uplo, l, in.b, n, nrhs, count);
    const std::vector<double> backward = solve_backward_error(uplo, in.whole, x, in.b, n, nrhs, count);
    const double tol = cross_backend_tolerance<T>(n);
    int solved = 0, failures = 0;
    for (int k = 0; k < count; ++k) {
        if (ref.info[k] != 0) {
            int written = 0;
            for (int j = 0; j < nrhs; ++j)
                for (int i = 0; i < n; ++i)
                    written += !bitwise_equal(x[packed_index(n, nrhs, k, i, j)], in.b[packed_index(n, nrhs, k, i, j)]);
            if (written > 0) {
                ADD_FAILURE() << "system " << k << " (info " << ref.info[k] << "): " << written
                              << " entries of its B were written";
                if (++failures > 5) return;
            }
            continue;
        }
        ++solved;
        const double d = relative_difference(x, x_ref, n, nrhs, k, Part::whole);
        if (!(backward[k] < kAcceptance) || !(d <= tol)) {
            ADD_FAILURE() << "system " << k << ": ||B - A X|| / (n (||A|| ||X|| + ||B||) u) = " << backward[k]
                          << ", ||X - X_lapack|| / ||X_lapack|| = " << d << " (tolerance " << tol << ")";
            if (++failures > 5) return;
        }
    }
    EXPECT_GT(solved, 0) << "no system was solved";
}

// Entries of the matrices other than `skip_a` / `skip_b` that differ bit for bit between two runs'
// packed outputs (rows x cols per matrix): a lane's result must not depend on its neighbours.
template <class T>
int neighbour_differences(const std::vector<T>& x, const std::vector<T>& y, int rows, int cols, int count, int skip_a,
                          int skip_b) {
    int differ = 0;
    for (int k = 0; k < count; ++k) {
        if (k == skip_a || k == skip_b) continue;
        for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i)
                differ += !bitwise_equal(x[packed_index(rows, cols, k, i, j)], y[packed_index(rows, cols, k, i, j)]);
    }
    return differ;
}

}  // namespace batchsolve::test::coop
