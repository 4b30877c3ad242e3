// Variable-size batched triangular BLAS-3 (TRMM, TRSM) and Cholesky (POTRF): many independent
// problems of different sizes in one call, each problem's sizes, leading dimension and pointers read
// from arrays (MAGMA's vbatched routines; Abdelfattah et al., ICS'17).
//
// Conventions: those of vbatched_blas.hpp (arrays of `batch` entries in the backend's memory, host
// scalars, the three entry levels name / name_max / name_max_nocheck, info -p for an invalid p-th
// argument in the BLAS/LAPACK argument order, invalid problems skipped, whole-call errors thrown,
// batch > 65,535 allowed, zero sizes free). Per problem:
//  * TRMM:  B <- alpha op(A) B (Side::left) or alpha B op(A) (Side::right).
//    TRSM:  solves op(A) X = alpha B (left) or X op(A) = alpha B (right); X overwrites B.
//    A is m x m (left) or n x n (right), B is m x n; only the `uplo` triangle of A is read and a unit
//    diagonal (Diag::unit) is not read at all. Op::conj_trans equals Op::trans for real data. A
//    singular A (a zero on a non-unit diagonal) gives Inf/NaN in that problem's X, as in BLAS.
//  * POTRF: A = L L^H (lower) or U^H U (upper) per matrix, the factor overwriting the `uplo` triangle
//    (the other triangle is never touched). info is written for every matrix at every level, including
//    _max_nocheck (it is the factorisation's result): 0 success, k > 0 the leading minor of order k is
//    not positive definite (a pivot <= 0 or NaN; that matrix stops there, the rest of the batch is
//    unaffected), -p an invalid argument p (checked levels).
#pragma once

#include <cstddef>
#include <string>

#include "batchsolve/context.hpp"
#include "batchsolve/types.hpp"
#include "batchsolve/vbatched_blas.hpp"  // Side, Op

namespace batchsolve {

enum class Diag { non_unit, unit };
const char* to_string(Diag d);
Diag parse_diag(const std::string& text);  // "non_unit"/"N" | "unit"/"U"

// How a TRSM runs on the GPU (the CPU backend calls its BLAS and ignores this).
//   inversion: the nb x nb diagonal blocks of op(A) are inverted into a workspace, then each block row
//              of X is the inverse times its right-hand sides, followed by a GEMM update of the rest
//              (MAGMA's TRSM with inverted blocks: parallel products instead of a serial substitution).
//   recursive: in place, op(A) split in two until a triangle fits one warp's substitution in shared
//              memory (register rows, shuffles), the off-diagonal block applied by GEMM.
//   automatic: the size rule of TriangularConfig (measured, see libsolver/tests/triangular/README.md).
enum class TrsmAlgorithm { automatic, inversion, recursive };
const char* to_string(TrsmAlgorithm a);
TrsmAlgorithm parse_trsm_algorithm(const std::string& text);  // "automatic" | "inversion" | "recursive"

// Tuning of the CUDA kernels of this header; every field has a default that is safe everywhere.
struct TriangularConfig {
    TrsmAlgorithm trsm_algorithm = TrsmAlgorithm::automatic;
    // automatic picks inversion when the largest triangle's order (m for left, n for right) is at least
    // this, else recursive (0 = always inversion). -1: the crossover of the device's tuning table
    // (libsolver/tuning/sm<arch>-trsm.json, measured by the autotuner's trsm stage; tuning.hpp's
    // TrsmCrossover), whose safe default keeps the recursive algorithm at every order.
    int inversion_from_order = -1;
    int leaf_order = 32;            // largest triangle a leaf kernel handles (1..32: one warp's rows)
    int inversion_block = 32;       // nb of the inverted diagonal blocks (1..32)
    int columns_per_thread = 4;     // right-hand sides each lane of a leaf kernel keeps in registers (1..4;
                                    // 4 beat 2 by 1.06-1.31x at x = 32 on an H100, 02:20 run)
    int warps_per_block = 4;        // warps of a leaf kernel, each on its own columns (1..32)
    // At most this many thread blocks of a leaf kernel per problem along the right-hand sides, each
    // looping over its share of the column groups (fewer blocks load the triangle fewer times, but the
    // largest problem's share runs longer); 0: one block per group of columns.
    int column_blocks = 0;
    int potrf_panel = 32;           // potrf_vbatched's block column width (1..32), the panel kernel's order
};
// "" when the configuration is usable, else "<field>: <reason>" (the routines throw InvalidArgument
// naming config.<field>).
std::string triangular_config_problem(const TriangularConfig& config);

// Positions of the arguments in the BLAS/LAPACK argument order, the magnitudes of the negative info codes.
namespace vbatched_arg {
// trmm/trsm(side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb)
inline constexpr int tr_m = 5, tr_n = 6, tr_a = 8, tr_lda = 9, tr_b = 10, tr_ldb = 11;
// potrf(uplo, n, A, lda)
inline constexpr int potrf_n = 2, potrf_a = 3, potrf_lda = 4;
}  // namespace vbatched_arg

// ---- TRMM --------------------------------------------------------------------------------------------
template <class T>
void trmm_vbatched(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,
                   const T* const* a, const int* lda, T* const* b, const int* ldb, int batch, int* info,
                   Context& ctx, const TriangularConfig& config = {});
template <class T>
void trmm_vbatched_max(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,
                       const T* const* a, const int* lda, T* const* b, const int* ldb, int max_m, int max_n,
                       int batch, int* info, Context& ctx, const TriangularConfig& config = {});
template <class T>
void trmm_vbatched_max_nocheck(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,
                               const T* const* a, const int* lda, T* const* b, const int* ldb, int max_m,
                               int max_n, int batch, Context& ctx, const TriangularConfig& config = {});

// ---- TRSM (same arguments as TRMM) ---------------------------------------------------------------------
template <class T>
void trsm_vbatched(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,
                   const T* const* a, const int* lda, T* const* b, const int* ldb, int batch, int* info,
                   Context& ctx, const TriangularConfig& config = {});
template <class T>
void trsm_vbatched_max(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,
                       const T* const* a, const int* lda, T* const* b, const int* ldb, int max_m, int max_n,
                       int batch, int* info, Context& ctx, const TriangularConfig& config = {});
template <class T>
void trsm_vbatched_max_nocheck(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,
                               const T* const* a, const int* lda, T* const* b, const int* ldb, int max_m,
                               int max_n, int batch, Context& ctx, const TriangularConfig& config = {});

// Scratch bytes trsm_vbatched (any level) takes from ctx.workspace() for these maxima: the inverted
// diagonal blocks when the inversion-based algorithm runs (CUDA), else 0. Calling it and
// ctx.workspace(bytes) before a timed loop keeps the loop free of allocations.
template <class T>
std::size_t trsm_vbatched_workspace_size(Side side, int max_m, int max_n, int batch, Context& ctx,
                                         const TriangularConfig& config = {});

// ---- POTRF ---------------------------------------------------------------------------------------------
template <class T>
void potrf_vbatched(Uplo uplo, const int* n, T* const* a, const int* lda, int batch, int* info, Context& ctx,
                    const TriangularConfig& config = {});
template <class T>
void potrf_vbatched_max(Uplo uplo, const int* n, T* const* a, const int* lda, int max_n, int batch, int* info,
                        Context& ctx, const TriangularConfig& config = {});
template <class T>
void potrf_vbatched_max_nocheck(Uplo uplo, const int* n, T* const* a, const int* lda, int max_n, int batch,
                                int* info, Context& ctx, const TriangularConfig& config = {});

}  // namespace batchsolve
