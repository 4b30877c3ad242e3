// Cholesky factorisation, solve and a mixed-precision SPD solver for ONE large dense matrix per call
// (n in the thousands to tens of thousands): potrf, potrs and posv_mixed. On the GPU everything runs
// on the device (blocked left- or right-looking, a generated fused POTF2 kernel for the diagonal
// blocks, cuBLAS TRSM/SYRK/GEMM for the rest, the next panel on a second stream); on the CPU LAPACK's
// ?potrf/?potrs on every core.
//
// Conventions (LAPACK's, as in ldlt.hpp):
//  * Matrices are column-major with a leading dimension, in the backend's memory (device memory for a
//    CUDA context, host memory for a CPU one). Only the `uplo` triangle of A is read and written
//    (A = L L^T for lower, A = U^T U for upper); the other triangle is never touched.
//  * `info` (one int, in the backend's memory): 0 success; k > 0 the leading minor of order k is not
//    positive definite (the pivot of column k, 1-based, was <= 0 or not finite). The columns after
//    k hold partial results (the GPU's fused diagonal blocks stop there, cuSOLVER's blocks and the
//    updates run on). The GPU finds k without returning to the host: read info after the call.
//  * Argument errors throw InvalidArgument naming the argument, before any work.
//  * Every routine that needs scratch memory has a *_workspace_size query (bytes); the routine takes
//    that much from ctx.workspace(), so calling the query and ctx.workspace(bytes) first keeps a
//    timed call free of allocations.
//  * Precisions: float and double.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "batchsolve/context.hpp"
#include "batchsolve/refinement.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve {

// ---- the factorisation's configuration (the GPU's; the CPU backend reads none of it) ----------------

// Blocked Cholesky orders its work by panels of nb columns. Right-looking: factor a panel, then
// update the whole trailing matrix with it (SYRK, one large rank-nb update; with lookahead the next
// panel is updated and factored first on a second stream). Left-looking: before a panel is factored
// it receives every update of the panels to its left (one GEMM with a long inner dimension); no
// trailing matrix is written more than once per panel.
// Recursive: top-down halving, A11 = L11 L11^T, L21 = A21 L11^-T, A22 -= L21 L21^T, then A22 (each
// half again, down to diagonal blocks of order <= nb); the TRSM halves recursively the same way and its
// off-diagonal parts, like every SYRK above syrk_leaf, are large GEMMs.
// Vendor: the whole matrix by one cusolverDnXpotrf (a building block, for the sizes and precisions
// where the tuning table measured it fastest; the first failing column then found as for a vendor
// diagonal block). The blocking fields are then unused.
enum class CholeskyVariant { automatic, right_looking, left_looking, recursive, vendor };
const char* to_string(CholeskyVariant v);
// "automatic" | "right" | "left" | "recursive" | "vendor" (and right_looking, left_looking)
CholeskyVariant parse_cholesky_variant(const std::string& text);

// What factors a diagonal block of order <= nb: the generated fused POTF2 (split recursion_depth times),
// cuSOLVER's cusolverDnXpotrf on the block (the first failing column then found from its info and
// the block's diagonal), or one register-tiled kernel launch per block (leaf: nb <=
// limits::large_leaf_max_order, the block in the registers of 256 threads; for the short diagonal
// chains of small n, where each cuSOLVER block costs several of its own launches).
enum class CholeskyDiagonal { automatic, fused, vendor, leaf };
const char* to_string(CholeskyDiagonal d);
CholeskyDiagonal parse_cholesky_diagonal(const std::string& text);  // "automatic" | "fused" | "vendor" | "leaf"

// How the rows below a factored diagonal block L11 (order <= nb) are solved, B := B L11^-T: one cuBLAS
// TRSM, or L11's inverse (a TRSM of the identity, nb x nb) applied by GEMMs to the rows, a slice of
// 8 nb rows at a time through a buffer (a tall TRSM with k = nb runs far below the GEMM rate).
enum class PanelSolve { automatic, trsm, inverse };
const char* to_string(PanelSolve p);
PanelSolve parse_panel_solve(const std::string& text);  // "automatic" | "trsm" | "inverse"

// How the fused POTF2 kernel factors each strip of ib columns once its left updates are in: column
// by column with the whole thread block (two barriers per column), or the ib x ib diagonal block in
// one warp's registers by shuffles and the rows below it solved by every thread (four barriers per
// strip).
enum class Potf2Strip { automatic, columns, warp };
const char* to_string(Potf2Strip s);

struct LargeCholeskyConfig {
    // 0 (or automatic): from the library's table per precision and n (cholesky_large_default_config).
    int nb = 0;   // panel width: 32 <= nb <= 1024, a multiple of ib
    int ib = 0;   // inner blocking of the fused POTF2 kernel: 8, 16 or 32
    CholeskyVariant variant = CholeskyVariant::automatic;
    // Levels of recursion of the diagonal block's POTF2: 0 factors the nb x nb block with one fused
    // kernel; d > 0 splits it in halves (POTF2, TRSM, SYRK, POTF2) d times. -1: from the table.
    int recursion_depth = -1;
    Potf2Strip strip = Potf2Strip::automatic;
    bool lookahead = true;  // right-looking only: the next panel on a second stream
    CholeskyDiagonal diagonal = CholeskyDiagonal::automatic;
    PanelSolve panel_solve = PanelSolve::automatic;
    // A SYRK update of order <= syrk_leaf is one cuBLAS SYRK; a larger one splits into two half
    // triangles and the square block between them as one GEMM, recursively. 0: from the table.
    int syrk_leaf = 0;
    // Threads per block of the factorisation's element-wise kernels (identity, info of a vendor
    // block): a multiple of 32 up to 1024. 0: from the table.
    int elementwise_threads = 0;
    // CUDA: capture the whole factorisation as a CUDA graph on the first call with these arguments
    // (a, lda, n, info, uplo, the context's stream and this configuration) and replay it on later
    // ones: the host then issues one launch instead of ~10 library calls per panel (a few us each,
    // which small n would otherwise wait for). The first call pays the capture; up to 64 graphs are
    // kept for the life of the process (later distinct calls run uncaptured). Not with `times`.
    // Where the caller leaves the whole blocking automatic (nb, ib, variant, depth, strip, diagonal,
    // panel_solve), the table's choice applies instead, as for lookahead.
    bool graph = false;
    // Single precision only: SYRK/GEMM updates on TF32 tensor cores (products with 10-bit mantissas;
    // the factor is then only accurate to ~1e-3 relative: posv_mixed's tensor_core_updates uses it).
    bool tf32_updates = false;
};

// The table the library uses when a field above is left at 0/automatic/-1 (both backends answer it;
// the CPU ignores the result).
template <class T>
LargeCholeskyConfig cholesky_large_default_config(int n);

// Where a GPU factorisation spent its time, per phase, summed over panels (CUDA events around each
// phase: a timed run serialises the lookahead's overlap, so use it to see the split, not the total).
struct CholeskyPhaseTimes {
    double panel_seconds = 0;   // the diagonal blocks' POTF2 (and its recursion)
    double trsm_seconds = 0;    // the off-diagonal panels' TRSM
    double update_seconds = 0;  // SYRK/GEMM updates
    int panels = 0;
};

// ---- potrf / potrs ------------------------------------------------------------------------------------

// Scratch bytes of potrf for order n (the info of the panels and the lookahead's bookkeeping).
template <class T>
std::size_t potrf_workspace_size(int n, Context& ctx);

// A = L L^T (uplo lower) or U^T U (upper); the factor overwrites the uplo triangle of A.
template <class T>
void potrf(Uplo uplo, int n, T* a, int lda, int* info, Context& ctx);
// The same with an explicit configuration (checked: InvalidArgument naming config.<field>); `times`
// (optional, GPU only) receives the phase split of this call.
template <class T>
void potrf(Uplo uplo, int n, T* a, int lda, int* info, const LargeCholeskyConfig& config, Context& ctx,
           CholeskyPhaseTimes* times = nullptr);

// Solves A X = B with potrf's factor; B (n x nrhs, ldb) is overwritten with X.
template <class T>
void potrs(Uplo uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb, Context& ctx);

// ---- the mixed-precision SPD solver ----------------------------------------------------------------

// posv_mixed reports in refinement.hpp's vocabulary: paths single_refined (FP32 Cholesky + FP64
// refinement) and double_direct (FP64 Cholesky + solve, checked by one FP64 residual); outcomes
// converged, solved, overflow, not_positive_definite, stalled, diverged, too_many_iterations,
// over_budget (the cost bound gave way to the next step: RefinementOptions::refinement_budget). The
// names below are the same types under their earlier names.
using PosvPath = SolvePath;
using PosvOutcome = StepOutcome;
using PosvStep = SolveStep;
using PosvMixedResult = MixedResult;

struct PosvMixedOptions : RefinementOptions {
    bool allow_fallback = true;  // FP64 potrf + potrs when refinement fails
};

// Scratch bytes of posv_mixed (the FP32 copy of A's triangle, the FP64 fallback's copy, vectors).
template <class T>
std::size_t posv_mixed_workspace_size(Uplo uplo, int n, int nrhs, const PosvMixedOptions& options, Context& ctx);

// Solves A X = B for T = double, A symmetric positive definite (uplo triangle read), factoring in
// float. Refinement stops when every column meets ||b - A x||_inf <= ||x||_inf ||A||_inf eps max(sqrt(n), 4)
// with eps = 2^-52 (sysv_mixed's criterion). A and B are read only; X (n x nrhs, ldx) must not overlap
// them. The chain: with factor_precision automatic the tuning table's refined steps for n (GPU: FP32
// up to 12288, split FP16 on the tensor cores above; CPU: FP32), else the one asked for; then
// double_direct when allow_fallback; a system every allowed step fails on returns with path == none
// and X filled with NaN. A refined step followed by another gives way to it once its projected
// cost to finish exceeds the next step's estimated cost (refinement_budget; -1: the table's).
template <class T>
PosvMixedResult posv_mixed(Uplo uplo, int n, int nrhs, const T* a, int lda, const T* b, int ldb, T* x, int ldx,
                           const PosvMixedOptions& options, Context& ctx);

}  // namespace batchsolve
