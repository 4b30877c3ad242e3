// The library-internal entry to the one variable-size GEMM routine (the _max_nocheck level, extended
// for the routines built on it: uniform offsets into every problem's matrices, sizes derived from a
// size array, symmetric/Hermitian operands, one triangle of C), and the backend functions behind
// vbatched_blas.hpp. TRMM/TRSM and potrf_vbatched (vb-tri) call blas3_detail::gemm_vbatched; the
// public routines of vbatched_blas.hpp are checked in src/core/blas3.cpp and run here.
#pragma once

#include <climits>
#include <cstdint>

#include "batchsolve/context.hpp"
#include "batchsolve/types.hpp"
#include "batchsolve/vbatched_blas.hpp"
#include "declare.hpp"

namespace batchsolve::blas3_detail {

// The size of problem i along one dimension: clamp(values[i] - subtract, 0, limit). A plain array
// converts to it (subtract 0, no limit); recursive algorithms pass the caller's size array with the
// part already done subtracted and the block width as the limit, so that no size array is rebuilt
// per step (m_i - j1 rows below a diagonal block of width j1: {m, j1}; the block itself: {m, 0, j1}).
// values == nullptr is the constant `limit` for every problem (a uniform dimension).
struct VSize {
    const int* values = nullptr;  // batch entries in the backend's memory
    int subtract = 0;
    int limit = INT_MAX;
    VSize(const int* v = nullptr, int subtract_ = 0, int limit_ = INT_MAX) : values(v), subtract(subtract_), limit(limit_) {}
};

// How the GEMM reads an operand X (A or B), in terms of its stored matrix S:
//  no_trans S, trans S^T, conj_trans S^H; symmetric_* / hermitian_*: the full symmetric (Hermitian)
//  matrix whose `*` triangle S holds (the other triangle is never read; hermitian reads the diagonal
//  as real), as SYMM/HEMM's A.
enum class Operand { no_trans, trans, conj_trans, symmetric_lower, symmetric_upper, hermitian_lower, hermitian_upper };
inline Operand operand_of(Op op) {
    return op == Op::no_trans ? Operand::no_trans : op == Op::trans ? Operand::trans : Operand::conj_trans;
}

// Which part of C a GEMM computes and writes: all of it, or only its lower / upper triangle (SYRK,
// SYR2K: the thread blocks entirely in the other triangle exit at once, diagonal blocks write their
// triangle only).
enum class Part { full, lower, upper };

// Element offsets added to every problem's pointer (row, column of the STORED matrix, before op):
// X_i + row + col * ldx_i. Uniform over the batch.
struct Offsets {
    int a_row = 0, a_col = 0, b_row = 0, b_col = 0, c_row = 0, c_col = 0;
};

struct GemmExtras {
    Offsets offsets{};
    Part part = Part::full;
    // Zero the imaginary part of C's diagonal after the update (HERK/HER2K), complex only.
    bool real_diagonal = false;
    // Problems with skip[i] != 0 are left alone (the info array of the checked levels); nullptr: none.
    const int* skip = nullptr;
    // The CUDA kernel's tile configuration; nullptr: default_gemm_config's choice.
    const GemmConfig* config = nullptr;
};

// C_i = alpha op(A_i) op(B_i) + beta C_i for every problem, with BLAS's semantics: m_i or n_i zero
// (after VSize) leaves C_i alone, k_i zero or alpha zero scales C_i by beta, beta zero writes C_i
// without reading it. op(A_i) is m_i x k_i, op(B_i) k_i x n_i; a symmetric/Hermitian operand is
// square (m_i x m_i for A, n_i x n_i for B; k must then equal that order).
// max_m, max_n, max_k bound every problem's effective sizes (the CUDA grid is sized by them).
// Arrays in the backend's memory; nothing is checked (the caller guarantees valid arguments); nothing
// returns to the host (asynchronous on the context's stream), so a loop of calls never synchronises.
template <class T>
void gemm_vbatched(Operand op_a, Operand op_b, VSize m, VSize n, VSize k, T alpha, const T* const* a, const int* lda,
                   const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int max_m, int max_n,
                   int max_k, int batch, Context& ctx, const GemmExtras& extras = {});

// The same with the public Op (the common call).
template <class T>
void gemm_vbatched(Op trans_a, Op trans_b, VSize m, VSize n, VSize k, T alpha, const T* const* a, const int* lda,
                   const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int max_m, int max_n,
                   int max_k, int batch, Context& ctx, const GemmExtras& extras = {}) {
    gemm_vbatched(operand_of(trans_a), operand_of(trans_b), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, max_m,
                  max_n, max_k, batch, ctx, extras);
}

// ---- the per-problem argument check of the checked levels -------------------------------------------

// Up to three size arrays and three (pointer, ld) operands of one routine, with the BLAS argument
// position of each: what the check needs to know about a routine, independent of which it is.
struct ProblemChecks {
    struct Size {
        const int* values = nullptr;  // nullptr: unused slot
        int position = 0;             // -position is the info code
        int max = -1;                 // the _max level's bound; -1: no bound (checked level reduces)
    };
    struct Matrix {
        const void* const* pointers = nullptr;  // nullptr: unused slot
        const int* ld = nullptr;
        int pointer_position = 0, ld_position = 0;
        int rows_size = 0, cols_size = 0;  // indices into sizes[] of the stored matrix's rows and columns
    };
    Size sizes[3];
    Matrix matrices[3];
};

// What the checked level's pass reduces over the batch: the largest and smallest size of each slot
// over the valid problems (0 and INT_MAX when none) and the number of invalid problems. All problems
// valid and min == max in every slot is a uniform batch: the GEMM then runs its uniform-size path.
struct SizeSummary {
    int max[3] = {0, 0, 0};
    int min[3] = {INT_MAX, INT_MAX, INT_MAX};
    int invalid = 0;
};

}  // namespace batchsolve::blas3_detail

// ---- the backend functions (same names in src/reference/blas3.cpp, src/cuda/blas3/, src/stub/) --------
// Declared once (core/declare.hpp); the CUDA backend runs the rank-k and symmetric-matrix routines on
// its GEMM (one triangle of C, a symmetric operand), the CPU backend calls BLAS per problem. All take
// the maxima (valid for every problem not skipped) and skip (the info of the checked levels, or null).

#define BATCHSOLVE_BLAS3_GEMM(T)                                                                                   \
    void gemm_vbatched(blas3_detail::Operand op_a, blas3_detail::Operand op_b, blas3_detail::VSize m,              \
                       blas3_detail::VSize n, blas3_detail::VSize k, T alpha, const T* const* a, const int* lda,    \
                       const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int max_m,          \
                       int max_n, int max_k, int batch, const blas3_detail::GemmExtras& extras, Context& ctx)
/* SYRK (b == nullptr) or SYR2K; HERK/HER2K when hermitian (complex T): C = alpha op(A) op(B)^T|H
   + alpha' op(B) op(A)^T|H + beta C on the uplo triangle, alpha' = conj(alpha) for HER2K. */
#define BATCHSOLVE_BLAS3_RANK_K(T)                                                                                 \
    void rank_k_vbatched(bool hermitian, Uplo uplo, Op trans, const int* n, const int* k, T alpha,                  \
                         const T* const* a, const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, \
                         const int* ldc, int max_n, int max_k, int batch, const int* skip, const GemmConfig* config, \
                         Context& ctx)
#define BATCHSOLVE_BLAS3_SYMMETRIC_MM(T)                                                                           \
    void symmetric_mm_vbatched(bool hermitian, Side side, Uplo uplo, const int* m, const int* n, T alpha,           \
                               const T* const* a, const int* lda, const T* const* b, const int* ldb, T beta,        \
                               T* const* c, const int* ldc, int max_m, int max_n, int batch, const int* skip,       \
                               Context& ctx)
#define BATCHSOLVE_BLAS3_ROUTINES(ROUTINE)                          \
    ROUTINE(PRECISIONS, BATCHSOLVE_BLAS3_GEMM, "gemm_vbatched")     \
    ROUTINE(PRECISIONS, BATCHSOLVE_BLAS3_RANK_K, "syrk_vbatched")   \
    ROUTINE(PRECISIONS, BATCHSOLVE_BLAS3_SYMMETRIC_MM, "symm_vbatched")
BATCHSOLVE_DECLARE_FAMILY(BATCHSOLVE_BLAS3_ROUTINES)

// The per-problem check (not a template: the same for every precision). info[i] = 0 or -p for every
// problem (ProblemChecks); when summary != nullptr (host), the reduction over the batch, which
// synchronises.
namespace batchsolve::reference {
void check_vbatched(const blas3_detail::ProblemChecks& checks, int batch, int* info, blas3_detail::SizeSummary* summary,
                    Context& ctx);
}
namespace batchsolve::cuda_backend {
void check_vbatched(const blas3_detail::ProblemChecks& checks, int batch, int* info, blas3_detail::SizeSummary* summary,
                    Context& ctx);
}
