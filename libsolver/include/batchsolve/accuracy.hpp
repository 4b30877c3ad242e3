// Scaled error measures on host data (packed column-major, ld = n), used by tests, the tester and
// bsolve. Each is normalised so that a backward-stable algorithm gives a value of order 1; the
// customary acceptance threshold is 30. Computed in double (long double accumulation for sums).
#pragma once

#include <vector>

#include "batchsolve/types.hpp"

namespace batchsolve {

// ||A - L L^H||_F / (n ||A||_F u) for lower, ||A - U^H U||_F / (n ||A||_F u) for upper, with u the
// unit roundoff of T. `a` holds the original matrices, `factor` the output of potrf (only the
// `uplo` triangle of each is read). Returns one value per matrix (NaN propagates, so a NaN factor
// can never pass a `< tol` check).
template <class T>
std::vector<double> factorization_error(Uplo uplo, const std::vector<T>& a, const std::vector<T>& factor,
                                        int n, int count);

// Normwise backward error of solves, ||B - A X||_F / (n (||A||_F ||X||_F + ||B||_F) u), one value per
// matrix (A Hermitian; its `uplo` triangle is read, the other one implied).
template <class T>
std::vector<double> solve_backward_error(Uplo uplo, const std::vector<T>& a, const std::vector<T>& x,
                                         const std::vector<T>& b, int n, int nrhs, int count);

// Largest value, NaN if any entry is NaN (so NaN never passes `max < tol`).
double max_or_nan(const std::vector<double>& values);

}  // namespace batchsolve
