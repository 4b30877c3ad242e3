// Test scenarios of the column-major kernels, shared by the host emulation test and the GPU test:
// batches in host storage with ld > n, gaps between matrices (strided) or shuffled slots (pointer
// array), everything outside the referenced triangle poisoned with NaN and checked untouched after
// the run, bad members (NaN / indefinite at random positions, or the Inf / NaN members of
// nonfinite_cases.hpp), and results judged by the scaled error measures of accuracy.hpp and against
// the CPU reference backend. The caller supplies how a kernel runs on the storage (emulated on the
// host, or on the GPU).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "nonfinite_cases.hpp"
#include "test_support.hpp"
#include "batchsolve/batchsolve.hpp"

namespace batchsolve::test::column_major {

// One operand in one flat host array: matrix k starts at element offsets[k]; each is column-major
// with leading dimension ld. Strided: offsets[k] = k * stride. Pointer array: the matrices sit in
// shuffled slots with gaps (the kernel gets data + offsets[k] per matrix).
template <class T>
struct Storage {
    int rows = 0, cols = 0, ld = 1, count = 0;
    long long stride = 0;
    bool pointers = false;
    std::vector<long long> offsets;
    std::vector<T> data;

    T& at(int k, int i, int j) { return data[offsets[k] + static_cast<long long>(j) * ld + i]; }
    const T& at(int k, int i, int j) const { return data[offsets[k] + static_cast<long long>(j) * ld + i]; }
};

// Set by a test (ContiguousStorage below) for strided batches with ld = rows and stride = rows * cols:
// the contiguous batches the shared-memory kernels copy as flat runs of 16-byte vectors
// (codegen/cholesky/shared_memory.hpp). Pointer arrays take ld = rows too and keep their gaps.
inline bool& contiguous_storage() {
    static bool on = false;
    return on;
}
struct ContiguousStorage {
    ContiguousStorage() { contiguous_storage() = true; }
    ~ContiguousStorage() { contiguous_storage() = false; }
    ContiguousStorage(const ContiguousStorage&) = delete;
    ContiguousStorage& operator=(const ContiguousStorage&) = delete;
};

template <class T>
Storage<T> make_storage(int rows, int cols, int count, bool pointers, std::mt19937_64& rng) {
    Storage<T> s;
    s.rows = rows, s.cols = cols, s.count = count, s.pointers = pointers;
    s.ld = std::max(1, rows + 1 + static_cast<int>(rng() % 3));                // ld > rows
    const long long matrix = static_cast<long long>(s.ld) * std::max(cols, 1);
    s.stride = matrix + 1 + static_cast<long long>(rng() % 7);                  // stride > ld * cols
    if (contiguous_storage()) {  // pointer arrays: ld = rows, their slots keep the gaps
        s.ld = std::max(1, rows);
        s.stride = static_cast<long long>(s.ld) * std::max(cols, 1) + (pointers ? s.stride - matrix : 0);
    }
    s.offsets.resize(count);
    if (!pointers) {
        for (int k = 0; k < count; ++k) s.offsets[k] = k * s.stride;
    } else {
        std::vector<int> slot(count);
        std::iota(slot.begin(), slot.end(), 0);
        std::shuffle(slot.begin(), slot.end(), rng);
        for (int k = 0; k < count; ++k) s.offsets[k] = slot[k] * s.stride + 3;
    }
    const long long size = static_cast<long long>(count) * s.stride + 8;
    s.data.assign(static_cast<std::size_t>(size), poison_value<T>());
    return s;
}

// Whether (i, j) of a matrix is in the triangle `uplo` of an n x n matrix.
inline bool in_triangle(Uplo uplo, int i, int j, int n) {
    return i < n && j < n && (uplo == Uplo::lower ? i >= j : i <= j);
}

// Packed (ld = n) matrix k of `packed` into the `uplo` triangle of storage (the rest stays poison).
template <class T>
void put_triangle(Storage<T>& s, const std::vector<T>& packed, int k, Uplo uplo) {
    const int n = s.rows;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
            if (in_triangle(uplo, i, j, n)) s.at(k, i, j) = packed[static_cast<std::size_t>(k) * n * n + j * n + i];
}
template <class T>
void put_all(Storage<T>& s, const std::vector<T>& packed, int k) {
    const long long m = static_cast<long long>(s.rows) * s.cols;
    for (int j = 0; j < s.cols; ++j)
        for (int i = 0; i < s.rows; ++i) s.at(k, i, j) = packed[k * m + static_cast<long long>(j) * s.rows + i];
}
// Matrix k of storage as a packed rows x cols matrix (zero outside `uplo` when given).
template <class T>
std::vector<T> get(const Storage<T>& s, int k, const Uplo* uplo = nullptr) {
    std::vector<T> m(static_cast<std::size_t>(s.rows) * s.cols, T(0));
    for (int j = 0; j < s.cols; ++j)
        for (int i = 0; i < s.rows; ++i)
            if (!uplo || in_triangle(*uplo, i, j, s.rows)) m[static_cast<std::size_t>(j) * s.rows + i] = s.at(k, i, j);
    return m;
}

// Every element of `after` outside the given regions is bit-identical to `before`; `region(k, i, j)`
// says which elements of matrix k a routine may write. Reports the first difference.
template <class T, class Region>
void expect_untouched_outside(const Storage<T>& before, const Storage<T>& after, const Region& region,
                              const std::string& what) {
    std::vector<char> writable(before.data.size(), 0);
    for (int k = 0; k < before.count; ++k)
        for (int j = 0; j < before.cols; ++j)
            for (int i = 0; i < before.rows; ++i)
                if (region(k, i, j)) writable[before.offsets[k] + static_cast<long long>(j) * before.ld + i] = 1;
    for (std::size_t p = 0; p < before.data.size(); ++p) {
        if (writable[p]) continue;
        if (std::memcmp(&before.data[p], &after.data[p], sizeof(T)) != 0) {
            ADD_FAILURE() << what << ": element " << p << " outside what the routine may write was changed";
            return;
        }
    }
}

// Normwise relative difference ||x - y||_F / ||y||_F (NaN if any entry of x is NaN).
template <class T>
double relative_difference(const std::vector<T>& x, const std::vector<T>& y) {
    long double num = 0, den = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const long double d = std::abs(std::complex<long double>(x[i]) - std::complex<long double>(y[i]));
        const long double r = std::abs(std::complex<long double>(y[i]));
        num += d * d, den += r * r;
        if (x[i] != x[i]) return std::nan("");
    }
    return den > 0 ? static_cast<double>(std::sqrt(num / den)) : static_cast<double>(std::sqrt(num));
}

// Bad members: for count >= 3, one NaN and one indefinite matrix at random positions and columns.
struct BadMember {
    int k, col;
    BadMatrix kind;
};
inline std::vector<BadMember> pick_bad(int n, int count, std::mt19937_64& rng) {
    if (count < 3 || n < 1) return {};
    const int k1 = static_cast<int>(rng() % count);
    int k2 = static_cast<int>(rng() % (count - 1));
    if (k2 >= k1) ++k2;
    return {{k1, static_cast<int>(rng() % n), BadMatrix::nan}, {k2, static_cast<int>(rng() % n), BadMatrix::indefinite}};
}

// The bad members of a scenario: pick_bad's NaN and indefinite ones, or (nonfinite) the Inf and NaN
// members of nonfinite_cases.hpp (issue 22); `original` spoiled, the expected infos returned.
template <class T>
std::vector<int> spoil_members(std::vector<T>& original, int n, int count, bool nonfinite, std::mt19937_64& rng) {
    if (nonfinite) return spoil_nonfinite(original, n, count, nonfinite_members(n, count));
    std::vector<int> expected(count, 0);
    for (const BadMember& b : pick_bad(n, count, rng)) {
        spoil_matrix(original, n, b.k, b.col, b.kind);
        expected[b.k] = b.col + 1;
    }
    return expected;
}

// How a scenario runs the kernel under test on host storage (results written back into it).
template <class T>
using RunPotrf = std::function<void(Storage<T>& a, std::vector<int>& info)>;
template <class T>
using RunPosv = std::function<void(Storage<T>& a, Storage<T>& b, std::vector<int>& info)>;
template <class T>
using RunPotrs = std::function<void(const Storage<T>& a, Storage<T>& b)>;

// Tolerance of a factor compared with the CPU reference's: forward error ~ cond * n * u.
template <class T>
double factor_tolerance(int n) {
    return kAcceptance * std::max(n, 1) * static_cast<double>(unit_roundoff<T>()) * kCond;
}

// Which matrices get the (O(n^3) on the host) error checks: all of a small batch; of a large one the
// first, the last, the bad members' neighbours and a random sample, `limit` in all.
inline std::vector<char> checked_members(int count, int limit, const std::vector<int>& expected, std::mt19937_64& rng) {
    std::vector<char> on(count, count <= limit ? 1 : 0);
    if (count <= limit) return on;
    on[0] = on[count - 1] = 1;
    for (int k = 0; k < count; ++k)
        if (expected[k] != 0) {
            if (k > 0) on[k - 1] = 1;
            if (k + 1 < count) on[k + 1] = 1;
        }
    for (int i = 0; i < limit; ++i) on[rng() % count] = 1;
    return on;
}

// Checks of a factor in storage against the original (packed) matrices and the CPU reference.
template <class T>
void check_factors(Uplo uplo, int n, int count, const std::vector<T>& original, const Storage<T>& a,
                   const std::vector<int>& info, const std::vector<int>& expected, const std::vector<T>& reference,
                   const std::vector<char>& checked) {
    for (int k = 0; k < count; ++k) {
        ASSERT_EQ(info[k], expected[k]) << "info of matrix " << k << " (n = " << n << ")";
        if (expected[k] != 0 || !checked[k]) continue;
        const std::vector<T> factor = get(a, k, &uplo);
        const std::vector<T> mine(original.begin() + static_cast<long long>(k) * n * n,
                                  original.begin() + static_cast<long long>(k + 1) * n * n);
        const double err = factorization_error<T>(uplo, mine, factor, n, 1)[0];
        ASSERT_LT(err, kAcceptance) << "||A - L L^H|| / (n ||A|| u) of matrix " << k << " (n = " << n << ")";
        std::vector<T> ref(reference.begin() + static_cast<long long>(k) * n * n,
                           reference.begin() + static_cast<long long>(k + 1) * n * n);
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                if (!in_triangle(uplo, i, j, n)) ref[j * n + i] = T(0);
        ASSERT_LE(relative_difference(factor, ref), factor_tolerance<T>(n))
            << "factor of matrix " << k << " differs from the CPU reference (n = " << n << ")";
    }
}

// potrf: factor a batch with bad members; info, factors, untouched memory.
// Matrices whose results get the full error checks in a large batch (see checked_members).
constexpr int kCheckedLimit = 64;

template <class T>
void potrf_scenario(Uplo uplo, int n, int count, bool pointers, std::uint64_t seed, const RunPotrf<T>& run,
                    bool nonfinite = false) {
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    std::vector<T> original = test_matrices<T>(n, count, seed);
    const std::vector<int> expected = spoil_members(original, n, count, nonfinite, rng);
    Storage<T> a = make_storage<T>(n, n, count, pointers, rng);
    for (int k = 0; k < count; ++k) put_triangle(a, original, k, uplo);
    const Storage<T> before = a;
    std::vector<int> info(count, -12345);
    run(a, info);

    Context cpu(Backend::cpu);
    std::vector<T> reference = original;
    std::vector<int> reference_info(count, -1);
    potrf_batched(uplo, BatchView<T>::column_major(reference.data(), n, n, count), reference_info.data(), cpu);
    ASSERT_EQ(reference_info, expected) << "the CPU reference disagrees with the spoiled members";
    expect_untouched_outside(before, a, [&](int, int i, int j) { return in_triangle(uplo, i, j, n); }, "potrf A");
    check_factors(uplo, n, count, original, a, info, expected, reference,
                  checked_members(count, kCheckedLimit, expected, rng));
}

// posv: factor and solve; failed members keep B; solutions judged by their backward error.
template <class T>
void posv_scenario(Uplo uplo, int n, int count, int nrhs, bool a_pointers, bool b_pointers, std::uint64_t seed,
                   const RunPosv<T>& run, bool nonfinite = false) {
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    std::vector<T> original = test_matrices<T>(n, count, seed);
    const RhsWithSolution<T> rhs = generate_rhs_batch(original, n, count, nrhs, seed + 1);
    const std::vector<int> expected = spoil_members(original, n, count, nonfinite, rng);
    Storage<T> a = make_storage<T>(n, n, count, a_pointers, rng);
    Storage<T> b = make_storage<T>(n, nrhs, count, b_pointers, rng);
    for (int k = 0; k < count; ++k) put_triangle(a, original, k, uplo), put_all(b, rhs.b, k);
    const Storage<T> a_before = a, b_before = b;
    std::vector<int> info(count, -12345);
    run(a, b, info);

    Context cpu(Backend::cpu);
    std::vector<T> reference = original;
    std::vector<int> reference_info(count, -1);
    potrf_batched(uplo, BatchView<T>::column_major(reference.data(), n, n, count), reference_info.data(), cpu);
    ASSERT_EQ(reference_info, expected) << "the CPU reference disagrees with the spoiled members";
    expect_untouched_outside(a_before, a, [&](int, int i, int j) { return in_triangle(uplo, i, j, n); }, "posv A");
    expect_untouched_outside(b_before, b, [&](int k, int, int) { return expected[k] == 0; }, "posv B");
    const std::vector<char> checked = checked_members(count, kCheckedLimit, expected, rng);
    check_factors(uplo, n, count, original, a, info, expected, reference, checked);
    for (int k = 0; k < count && nrhs > 0; ++k) {
        if (expected[k] != 0 || !checked[k]) continue;
        const std::vector<T> x = get(b, k);
        const std::vector<T> mine(original.begin() + static_cast<long long>(k) * n * n,
                                  original.begin() + static_cast<long long>(k + 1) * n * n);
        const std::vector<T> bk(rhs.b.begin() + static_cast<long long>(k) * n * nrhs,
                                rhs.b.begin() + static_cast<long long>(k + 1) * n * nrhs);
        const double err = solve_backward_error<T>(uplo, mine, x, bk, n, nrhs, 1)[0];
        ASSERT_LT(err, kAcceptance) << "backward error of the solve of matrix " << k << " (n = " << n
                                    << ", nrhs = " << nrhs << ")";
    }
}

// potrs: solve with a factor computed by the CPU reference (the other triangle is NaN and must not
// be read); A untouched, B overwritten with solutions of small backward error.
template <class T>
void potrs_scenario(Uplo uplo, int n, int count, int nrhs, bool a_pointers, bool b_pointers, std::uint64_t seed,
                    const RunPotrs<T>& run) {
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    const std::vector<T> original = test_matrices<T>(n, count, seed);
    const RhsWithSolution<T> rhs = generate_rhs_batch(original, n, count, nrhs, seed + 1);
    Context cpu(Backend::cpu);
    std::vector<T> factor = original;
    std::vector<int> info(count, -1);
    potrf_batched(uplo, BatchView<T>::column_major(factor.data(), n, n, count), info.data(), cpu);
    ASSERT_EQ(info, std::vector<int>(count, 0));
    Storage<T> a = make_storage<T>(n, n, count, a_pointers, rng);
    Storage<T> b = make_storage<T>(n, nrhs, count, b_pointers, rng);
    for (int k = 0; k < count; ++k) put_triangle(a, factor, k, uplo), put_all(b, rhs.b, k);
    const Storage<T> a_before = a, b_before = b;
    run(a, b);
    expect_untouched_outside(a_before, a, [](int, int, int) { return false; }, "potrs A");
    expect_untouched_outside(b_before, b, [](int, int, int) { return true; }, "potrs B");
    const std::vector<char> checked = checked_members(count, kCheckedLimit, std::vector<int>(count, 0), rng);
    for (int k = 0; k < count; ++k) {
        if (!checked[k]) continue;
        const std::vector<T> x = get(b, k);
        const std::vector<T> mine(original.begin() + static_cast<long long>(k) * n * n,
                                  original.begin() + static_cast<long long>(k + 1) * n * n);
        const std::vector<T> bk(rhs.b.begin() + static_cast<long long>(k) * n * nrhs,
                                rhs.b.begin() + static_cast<long long>(k + 1) * n * nrhs);
        const double err = solve_backward_error<T>(uplo, mine, x, bk, n, nrhs, 1)[0];
        ASSERT_LT(err, kAcceptance) << "backward error of the solve of matrix " << k << " (n = " << n
                                    << ", nrhs = " << nrhs << ")";
    }
}

}  // namespace batchsolve::test::column_major
