// Non-finite members of a test batch (issue 22): +Inf on the diagonal at the first, a middle and the
// last column, NaN and Inf below the diagonal, each with the info LAPACK's potrf gives it. Shared by
// the public-API suite (nonfinite_test.cpp, every backend) and the generators' emulation suites.
//
// Why these infos: a pivot is a(j, j) minus the squares of row j of L, so +Inf on the diagonal at
// column c leaves the earlier pivots alone and makes pivot c Inf (sqrt(Inf) = Inf passes a plain
// d > 0 test: the hole issue 22 found); a NaN or Inf at (r, c), r > c, makes L(r, c) non-finite, and
// that reaches pivot r (NaN, or Inf - Inf, or -Inf) but no pivot before it. So the expected info is
// c + 1 for the diagonal and r + 1 below it, counted from 1 as LAPACK does.
#pragma once

#include <complex>
#include <limits>
#include <string>
#include <vector>

namespace batchsolve::test {

struct NonFiniteMember {
    enum Kind { inf, nan };
    int k;    // member of the batch
    int row;  // position in the lower triangle (row >= col); the upper triangle gets the mirror
    int col;
    Kind kind;
    int expected_info() const { return row + 1; }  // row == col on the diagonal
    std::string describe() const {
        return std::string(kind == inf ? "Inf" : "NaN") + " at (" + std::to_string(row) + ", " + std::to_string(col) +
               ") of matrix " + std::to_string(k);
    }
};

// The cases for order n, spread over a batch of `count` matrices (members 1, 3, 5, ... so that good
// matrices sit between them); fewer when the batch is too small to hold them all (at least one:
// Inf on the last diagonal entry). Off-diagonal cases need n >= 2.
inline std::vector<NonFiniteMember> nonfinite_members(int n, int count) {
    std::vector<NonFiniteMember> wanted = {
        {0, n - 1, n - 1, NonFiniteMember::inf},  // the last column: every earlier pivot is fine
        {0, 0, 0, NonFiniteMember::inf},          // the first column
        {0, n / 2, n / 2, NonFiniteMember::inf},  // a middle column (in a later tile or panel)
    };
    if (n >= 2) {
        wanted.push_back({0, n - 1, 0, NonFiniteMember::nan});          // NaN in the first column, last row
        wanted.push_back({0, n / 2, (n / 2) / 2, NonFiniteMember::nan});  // NaN in the middle
        wanted.push_back({0, n - 1, n / 2, NonFiniteMember::inf});      // Inf below the diagonal
    }
    std::vector<NonFiniteMember> out;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        const int k = static_cast<int>(2 * i + 1);
        if (k >= count) break;
        wanted[i].k = k;
        out.push_back(wanted[i]);
    }
    if (out.empty() && count >= 1) out.push_back({0, n - 1, n - 1, NonFiniteMember::inf});
    return out;
}

template <class T>
T nonfinite_value(NonFiniteMember::Kind kind) {
    using R = decltype(std::abs(T()));
    const R v = kind == NonFiniteMember::inf ? std::numeric_limits<R>::infinity() : std::numeric_limits<R>::quiet_NaN();
    return T(v);  // a complex Inf or NaN has it in the real part, as a real matrix entry would
}

// Writes the member's value into a packed batch (n x n, ld = n) at (row, col) and (col, row), so
// that whichever triangle the routine reads holds it; returns the expected infos of the batch.
template <class T>
std::vector<int> spoil_nonfinite(std::vector<T>& packed, int n, int count, const std::vector<NonFiniteMember>& members) {
    std::vector<int> expected(count, 0);
    for (const NonFiniteMember& m : members) {
        const std::size_t base = static_cast<std::size_t>(m.k) * n * n;
        packed[base + static_cast<std::size_t>(m.col) * n + m.row] = nonfinite_value<T>(m.kind);
        packed[base + static_cast<std::size_t>(m.row) * n + m.col] = nonfinite_value<T>(m.kind);
        expected[m.k] = m.expected_info();
    }
    return expected;
}

}  // namespace batchsolve::test
