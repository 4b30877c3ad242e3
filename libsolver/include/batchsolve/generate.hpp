// Host-side generators of test batches: SPD/HPD matrices with a chosen 2-norm condition number,
// right-hand sides with a known solution, and deliberately bad members. All write packed
// column-major host memory (ld = n, stride = n * n), both triangles; convert_layout moves them on.
#pragma once

#include <cstdint>
#include <vector>

#include "batchsolve/types.hpp"

namespace batchsolve {

// count matrices A = Q diag(d) Q^H, Q a random unitary (the Q of the QR factorisation of a Gaussian matrix),
// d log-spaced from 1 to 1/cond (then scaled so that the largest entry of |A| is about 1): the
// 2-norm condition number of each matrix is `cond` up to rounding. Deterministic in `seed`.
template <class T>
std::vector<T> generate_spd_batch(int n, int count, double cond, std::uint64_t seed);

// A known solution X (n x nrhs per matrix, entries uniform in [-1, 1]) and B = A X, computed in
// the next higher accuracy available (long double for real types). Returns {X, B}, packed.
template <class T>
struct RhsWithSolution {
    std::vector<T> x;
    std::vector<T> b;
};
template <class T>
RhsWithSolution<T> generate_rhs_batch(const std::vector<T>& a, int n, int count, int nrhs, std::uint64_t seed);

// Deliberately bad members for tests of per-matrix info.
enum class BadMatrix {
    indefinite,  // the diagonal entry (col, col) made negative enough that leading minor col+1 fails
    nan          // a NaN placed at (col, col)
};
// Spoils matrix k of a packed batch at 0-based column `col`; the expected info is then col + 1.
template <class T>
void spoil_matrix(std::vector<T>& a, int n, int k, int col, BadMatrix kind);

}  // namespace batchsolve
