// Symmetric indefinite solvers for one large dense matrix per call (n in the thousands): LDL^T
// without pivoting (sytrf_nopiv / sytrs_nopiv), the symmetric random butterfly transformation (RBT)
// that makes it safe, and sysv_mixed, which factors in the lower precision, refines in the higher one
// and falls back (RBT, then a pivoted factorisation) when it must, saying which path it took.
//
// Conventions (LAPACK's, one matrix instead of a batch):
//  * Matrices are column-major with a leading dimension, in the backend's memory (device memory for a
//    CUDA context, host memory for a CPU one). Only the LOWER triangle of A is read; Uplo::upper is
//    refused with InvalidArgument (not implemented).
//  * Symmetry says what A^T = A means for complex data: `symmetric` is A^T = A (complex symmetric,
//    e.g. BEM matrices; factor A = L D L^T with complex D), `hermitian` is A^H = A (A = L D L^H with
//    real D; imaginary parts of the diagonal are ignored, as in LAPACK's ?hetrf). For real data the
//    two are the same factorisation.
//  * `info` (one int, in the backend's memory): 0 success; k > 0 the pivot d_k (1-based column k) was
//    zero, tiny (|d_k| <= sqrt(n) u max|a_ij|: within the rounding error a zero pivot picks up on its
//    way, so indistinguishable from zero), or not finite. The factorisation then carries on without stopping (it never leaves the device) but its
//    output is meaningless: check info before using it.
//  * Argument errors throw InvalidArgument naming the argument, before any work.
//  * Every routine that needs scratch memory has a *_workspace_size query (bytes); the routine takes
//    that much from ctx.workspace(), so calling the query and ctx.workspace(bytes) first keeps a
//    timed call free of allocations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "batchsolve/context.hpp"
#include "batchsolve/refinement.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve {

enum class Symmetry { symmetric, hermitian };
const char* to_string(Symmetry s);
Symmetry parse_symmetry(const std::string& text);  // "symmetric" | "hermitian"

// ---- LDL^T without pivoting ------------------------------------------------------------------------

// Scratch bytes of sytrf_nopiv for order n (the trailing updates keep a copy of L21 D, at most
// (n/2)^2 elements, and the breakdown threshold).
template <class T>
std::size_t sytrf_nopiv_workspace_size(int n, Context& ctx);

// A = L D L^T (symmetric) or L D L^H (hermitian), L unit lower triangular, D diagonal: L overwrites
// the strict lower triangle of A and D its diagonal; the strict upper triangle is not touched.
template <class T>
void sytrf_nopiv(Symmetry symmetry, Uplo uplo, int n, T* a, int lda, int* info, Context& ctx);

// Solves A X = B with the factor of sytrf_nopiv; B (n x nrhs, ldb) is overwritten with X.
template <class T>
void sytrs_nopiv(Symmetry symmetry, Uplo uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb, Context& ctx);

// ---- random butterfly transformation -----------------------------------------------------------------

// U = W_1 W_2 ... W_depth of order n_padded = n rounded up to a multiple of 2^depth. Level k is block
// diagonal with 2^(k-1) butterflies B = 1/sqrt(2) [R0 R1; R0 -R1] of order n_padded / 2^(k-1), each
// with random diagonal R0, R1 of entries exp(r/10), r uniform in [-1/2, 1/2] (Parker's butterflies
// as the seed paper uses them). U is real, so U^T A U keeps A symmetric and Hermitian alike; A is
// padded as diag(A, I) and b with zeros. `diagonals` holds depth x n_padded entries (level k's
// R0 and R1 of butterfly p at [(k-1) n_padded + p m + (0 | m/2)], m = n_padded / 2^(k-1)).
struct Butterfly {
    int n = 0;
    int depth = 0;
    int n_padded = 0;
    std::uint64_t seed = 0;
    std::vector<double> diagonals;
};
constexpr int kDefaultButterflyDepth = 2;
Butterfly make_butterfly(int n, int depth, std::uint64_t seed);  // InvalidArgument for n < 0, depth < 0 or > 20

// ---- mixed-precision solver with fallback --------------------------------------------------------------

// sysv_mixed reports in refinement.hpp's vocabulary: paths nopiv_low, rbt_nopiv_low,
// pivoted_high_sytrf, pivoted_high_getrf; outcomes converged, solved, overflow, breakdown, stalled,
// diverged, too_many_iterations, singular. SysvResult is MixedResult under its earlier name.
using SysvResult = MixedResult;

struct SysvOptions : RefinementOptions {
    bool allow_rbt = true;                 // the second step of the chain
    bool allow_pivoted = true;             // the last step
    bool start_with_rbt = false;           // skip the plain no-pivot attempt
    int butterfly_depth = kDefaultButterflyDepth;
    std::uint64_t seed = 0x5eedba77e7f1ULL;  // of the butterflies
};

// Scratch bytes of sysv_mixed for order n with nrhs right-hand sides (the lower-precision copy of
// the padded A, the pivoted fallback's copy of A and its library workspace, vectors).
template <class T>
std::size_t sysv_mixed_workspace_size(Symmetry symmetry, int n, int nrhs, const SysvOptions& options, Context& ctx);

// Solves A X = B for T = double (factor in float) and std::complex<double> (factor in complex<float>).
// Refinement stops when every column meets ||b - A x||_inf <= ||x||_inf ||A||_inf eps max(sqrt(n), 4),
// eps = 2^-52 (the seed paper's criterion with the machine epsilon of double; at least 4 eps, since a
// complex residual's own rounding can exceed eps sqrt(n) at n = 1, however often one refines).
// A (lower triangle) and B are read only; X (n x nrhs, ldx) must not overlap them. Throws
// InvalidArgument for argument errors. The chain: nopiv_low (unless start_with_rbt), rbt_nopiv_low
// (allow_rbt or start_with_rbt), then the pivoted step (allow_pivoted); TF32 updates, when asked for,
// on the first refined step only. A system that every allowed step fails on returns with
// path == none and X filled with NaN (never silently wrong).
template <class T>
SysvResult sysv_mixed(Symmetry symmetry, Uplo uplo, int n, int nrhs, const T* a, int lda, const T* b, int ldb, T* x,
                      int ldx, const SysvOptions& options, Context& ctx);

}  // namespace batchsolve
