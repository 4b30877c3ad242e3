// Variable-size batched BLAS-3 around one GEMM routine: gemm, syrk/herk, syr2k/her2k and symm/hemm
// on many independent problems of different sizes in one call, each at three entry levels.
//
// Conventions (MAGMA's vbatched interface with BLAS semantics per problem):
//  * Everything per problem is an array of `batch` entries in the backend's memory (device memory for a
//    CUDA context, host memory for a CPU one): the sizes (int), the leading dimensions (int) and the
//    matrix pointers (arrays of pointers; the matrices are column-major). Only the scalars alpha and
//    beta and the maxima are host values shared by the whole batch.
//  * Problem i is exactly the BLAS call with the i-th entries, e.g. for gemm
//    C_i = alpha op(A_i) op(B_i) + beta C_i, op(A_i) m_i x k_i, op(B_i) k_i x n_i, C_i m_i x n_i.
//    Zero sizes are legal and cost nothing (m = 0 or n = 0: C untouched; k = 0 or alpha = 0: C = beta C).
//    beta = 0 writes C without reading it, so NaN in an unset C does not propagate (as in BLAS).
//  * Op::conj_trans on real data is Op::trans. herk/her2k/hemm on real data are syrk/syr2k/symm;
//    on complex data herk/her2k's beta (and herk's alpha) are real, the imaginary parts of C's diagonal
//    are set to zero and A's diagonal is read as real by hemm, as in BLAS.
//  * syrk/herk/syr2k/her2k read and write only the `uplo` triangle of C (the other is never touched);
//    symm/hemm read only the `uplo` triangle of A.
//  * Three entry levels:
//      name(...)            checked: one device pass validates every problem's arguments into `info`
//                           and reduces the maxima of the valid problems' sizes (one small copy to the
//                           host, the only synchronisation), then runs the valid problems.
//      name_max(...)        the caller gives the maxima: the same per-problem validation into `info`
//                           (a size above its maximum is invalid too), no reduction, no synchronisation.
//      name_max_nocheck(...) the caller guarantees valid arguments and the maxima: no validation, no
//                           info (undefined behaviour when they are wrong, as in MAGMA).
//  * info (checked levels; `batch` ints in the backend's memory): 0 for a problem that ran, or -p when
//    its p-th argument in the BLAS argument order is invalid (LAPACK's xerbla numbering: for gemm
//    m -> -3, n -> -4, k -> -5, A -> -7, lda -> -8, B -> -9, ldb -> -10, C -> -12, ldc -> -13; see
//    VbatchedArg below). An invalid problem is skipped and its C left untouched; the others run.
//    Size checks: sizes >= 0 (and <= the given maximum at the _max level), ld >= max(1, rows of the
//    stored matrix), pointers non-null where the problem reads or writes anything.
//  * Arguments shared by the whole batch (batch < 0, the per-problem arrays null while batch > 0, a
//    negative maximum, an op not allowed for the routine) throw InvalidArgument naming the argument,
//    before any work.
//  * batch may exceed 65,535 (the CUDA grid loops over problems).
//  * Outputs must not overlap inputs (C_i must not overlap any A_j or B_j).
#pragma once

#include <string>

#include "batchsolve/context.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve {

// op(X): X, X^T or X^H.
enum class Op { no_trans, trans, conj_trans };
const char* to_string(Op op);
Op parse_op(const std::string& text);  // "n"/"no_trans" | "t"/"trans" | "c"/"conj_trans"

// Which side the symmetric matrix of symm/hemm multiplies from (C = A B or C = B A).
enum class Side { left, right };
const char* to_string(Side side);
Side parse_side(const std::string& text);  // "left"/"L" | "right"/"R"

// Positions of the arguments in the BLAS argument order, the magnitudes of the negative info codes.
namespace vbatched_arg {
// gemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
inline constexpr int gemm_m = 3, gemm_n = 4, gemm_k = 5, gemm_a = 7, gemm_lda = 8, gemm_b = 9, gemm_ldb = 10,
                     gemm_c = 12, gemm_ldc = 13;
// syrk/herk(uplo, trans, n, k, alpha, A, lda, beta, C, ldc)
inline constexpr int rk_n = 3, rk_k = 4, rk_a = 6, rk_lda = 7, rk_c = 9, rk_ldc = 10;
// syr2k/her2k(uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
inline constexpr int r2k_n = 3, r2k_k = 4, r2k_a = 6, r2k_lda = 7, r2k_b = 8, r2k_ldb = 9, r2k_c = 11, r2k_ldc = 12;
// symm/hemm(side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc)
inline constexpr int mm_m = 3, mm_n = 4, mm_a = 6, mm_lda = 7, mm_b = 8, mm_ldb = 9, mm_c = 11, mm_ldc = 12;
}  // namespace vbatched_arg

// ---- the GEMM routine's configuration (CUDA) -----------------------------------------------------------

// The tile shape of the one generated GEMM kernel every routine here runs on (CUDA; the CPU ignores
// it). A thread block computes a blk_m x blk_n tile of C, stepping through k in slices of blk_k staged
// in shared memory. Without tensor cores the block has dim_x x dim_y threads, each computing a
// (blk_m/dim_x) x (blk_n/dim_y) sub-tile (rows dim_x apart, columns dim_y apart); with tensor_cores
// it has dim_x x dim_y warps, each computing a (blk_m/dim_x) x (blk_n/dim_y) sub-tile of fragments:
//  * d, z: the FP64 tensor cores (8x8x4 DMMA; products and sums in FP64 as with FMA, so the accuracy
//    is that of the SIMT kernel; complex as four real products). The tuning table may choose them.
//  * s, c: TF32 tensor cores (16x8x8, FP32 accumulation), an EXPLICIT option only, never a default:
//    the inputs are rounded to TF32's 10-bit mantissa, so each product carries a relative error up to
//    2^-11 (about 5e-4) and C is accurate to about 1e-3 relative (k u_tf32 |A||B| elementwise, u_tf32 =
//    2^-11) instead of FP32's 6e-8.
// The defaults come from the tuning table (libsolver/tuning/sm<arch>-gemm.json), by precision and size.
struct GemmConfig {
    int blk_m = 32;
    int blk_n = 32;
    int blk_k = 8;
    int dim_x = 16;
    int dim_y = 16;
    bool tensor_cores = false;
    // Blocks per SM the compiler must leave registers for (__launch_bounds__; 0 or 1: no bound). The
    // generated kernels are latency-bound at small sizes, where occupancy pays more than registers.
    int min_blocks_per_sm = 0;
    // How the k-slices reach shared memory. 0: through registers, double-buffered (the next slice is
    // loaded into registers while the current one is multiplied; every operand form). 2..4: a ring of
    // `stages` shared slices filled by asynchronous copies (cp.async), up to stages - 1 slices in flight
    // while one is multiplied, so that the latency of global memory is hidden by the copies rather than
    // by resident warps. Hermitian operands (HEMM) always take the register path.
    int stages = 0;
    // How an element's global address is formed when a k-slice is loaded (registers) or copied (ring).
    // 0: from the problem's base pointer with 64-bit offsets, per element. 1: each operand's slice base
    // pointer once per slice (64-bit, shared by the block) plus a 32-bit offset per element (fewer
    // integer instructions and registers per loaded element). 2 (the ring only): as 1, with the copy
    // loop unrolled so that each thread's offsets and shared destinations are computed once per
    // problem and held across the slices. With 1 or 2, a problem whose leading dimension exceeds
    // (2^31 - 1 - 256) / 256 elements, and symmetric operands, take form 0's addresses. 3 (the register
    // path or the ring): each thread's element pointers formed once per problem and advanced by one
    // slice per step, its bounds folded into one comparison per element (symmetric and Hermitian
    // operands take form 0's); with the ring each element's cp.async takes its source from them.
    int copy_offsets = 0;
    // How thread blocks find their tiles. 0: a grid of ceil(max_m / blk_m) x ceil(max_n / blk_n) blocks
    // per problem, the blocks beyond a problem's own tiles exiting at once. 1: a persistent grid (as many
    // blocks as the GPU holds at once) looping over one list of (problem, tile) pairs, the tile counts of
    // the problems summed on the device first (one scan per call), so that no block is launched for an
    // empty tile and the last wave is shared by every problem's tiles.
    int tile_list = 0;
    // The FP64 tensor-core instruction (d with tensor_cores): 0 mma m8n8k4, 1 mma m16n8k8 (sm_90), where
    // each warp's tile has rows in multiples of 16 and columns of 8 and blk_k is a multiple of 8.
    int dmma16 = 0;
    // d's tensor-core slices in shared memory (d with tensor_cores only; else 0): each k-row of a slice
    // starts tc_row elements apart mod 16 from the previous one. 4: the stores of a k-fastest slice
    // (op(B) = B, op(A) = A^T) spread over all 16 eight-byte bank pairs; 8: the layout before rows 4
    // were measured, which some small tiles keep. 0: the library's default (4).
    int tc_row = 0;
    // How the size-binned dispatch (a call without a configuration whose problems span several size
    // classes) runs its bins; read from the entry of the call's largest class, ignored elsewhere (no
    // kernel's text depends on them). bin_launch 0: one launch per bin on the context's stream, the
    // largest bin first, each waiting for the one before (its last wave runs on a partly idle GPU);
    // 1: every bin on a stream of its own (the largest on the highest priority), joined on the
    // context's stream, so that a bin's last wave overlaps the next bin's blocks; 2: every bin in one
    // launch, each bin's tile a code path of one kernel on its own range of the grid's blocks, the
    // largest bin's first (where the bins' tiles share a block size and none is region-split or on the
    // tile list; else as 0). bin_order 0: a bin's
    // problems in the order the binning pass lists them; 1: sorted on the device by m * n * k, the
    // largest first, so that a bin's last wave holds its smallest problems.
    int bin_launch = 0;
    int bin_order = 0;
};
#define BATCHSOLVE_GEMM_CONFIG_FIELDS(F) \
    F(blk_m) F(blk_n) F(blk_k) F(dim_x) F(dim_y) F(tensor_cores) F(min_blocks_per_sm) F(stages) F(copy_offsets) \
    F(tile_list) F(dmma16) F(tc_row) F(bin_launch) F(bin_order)

inline bool operator==(const GemmConfig& a, const GemmConfig& b) {
#define BATCHSOLVE_GEMM_FIELD_EQUAL(field) \
    if (!(a.field == b.field)) return false;
    BATCHSOLVE_GEMM_CONFIG_FIELDS(BATCHSOLVE_GEMM_FIELD_EQUAL)
#undef BATCHSOLVE_GEMM_FIELD_EQUAL
    return true;
}
inline bool operator!=(const GemmConfig& a, const GemmConfig& b) { return !(a == b); }
// One-line JSON in field order ({"blk_m":32,...,"tensor_cores":false}) and its inverse (fields left out
// keep their defaults; a bad field throws InvalidArgument naming it).
std::string to_string(const GemmConfig& config);
GemmConfig parse_gemm_config(const std::string& json_object);
// "" when `config` can run precision p's kernels, else "config.<field>: <reason>" (no GPU needed).
std::string gemm_config_problem(Precision p, const GemmConfig& config);
// The configuration the library picks for a call with these maxima on a GPU of compute capability
// `arch` (90: sm_90): the tuning table's entry for the precision and the size class of max(max_m,
// max_n) (libsolver/tuning/sm<arch>-gemm.json), else GemmConfig{}; triangle: for one triangle of C
// (syrk/herk/syr2k/her2k), which takes the full GEMM's entry where it has none of its own.
GemmConfig default_gemm_config(Precision p, int max_m, int max_n, int max_k, bool triangle = false, int arch = 90);

// ---- GEMM: C_i = alpha op(A_i) op(B_i) + beta C_i ---------------------------------------------------

template <class T>
void gemm_vbatched(Op trans_a, Op trans_b, const int* m, const int* n, const int* k, T alpha, const T* const* a,
                   const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int batch,
                   int* info, Context& ctx);
template <class T>
void gemm_vbatched_max(Op trans_a, Op trans_b, const int* m, const int* n, const int* k, T alpha, const T* const* a,
                       const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc,
                       int max_m, int max_n, int max_k, int batch, int* info, Context& ctx);
template <class T>
void gemm_vbatched_max_nocheck(Op trans_a, Op trans_b, const int* m, const int* n, const int* k, T alpha,
                               const T* const* a, const int* lda, const T* const* b, const int* ldb, T beta,
                               T* const* c, const int* ldc, int max_m, int max_n, int max_k, int batch, Context& ctx);

// Expert entry (the tuner's): the _max_nocheck GEMM with the kernel configuration fixed by the caller;
// an unusable configuration throws InvalidArgument naming config.<field>.
template <class T>
void gemm_vbatched_max_nocheck(Op trans_a, Op trans_b, const int* m, const int* n, const int* k, T alpha,
                               const T* const* a, const int* lda, const T* const* b, const int* ldb, T beta,
                               T* const* c, const int* ldc, int max_m, int max_n, int max_k, int batch,
                               const GemmConfig& config, Context& ctx);

// ---- SYRK: C_i = alpha A_i A_i^T + beta C_i (trans = no_trans, A n x k) or alpha A_i^T A_i + beta C_i
// (trans = trans, A k x n); HERK the same with ^H (trans = no_trans | conj_trans), alpha, beta real. ----

template <class T>
void syrk_vbatched(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a, const int* lda, T beta,
                   T* const* c, const int* ldc, int batch, int* info, Context& ctx);
template <class T>
void syrk_vbatched_max(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a, const int* lda,
                       T beta, T* const* c, const int* ldc, int max_n, int max_k, int batch, int* info, Context& ctx);
template <class T>
void syrk_vbatched_max_nocheck(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a,
                               const int* lda, T beta, T* const* c, const int* ldc, int max_n, int max_k, int batch,
                               Context& ctx);

// Expert entry (the tuner's): the _max_nocheck SYRK with the kernel configuration fixed by the caller.
template <class T>
void syrk_vbatched_max_nocheck(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a,
                               const int* lda, T beta, T* const* c, const int* ldc, int max_n, int max_k, int batch,
                               const GemmConfig& config, Context& ctx);

template <class T>
void herk_vbatched(Uplo uplo, Op trans, const int* n, const int* k, real_t<T> alpha, const T* const* a, const int* lda,
                   real_t<T> beta, T* const* c, const int* ldc, int batch, int* info, Context& ctx);
template <class T>
void herk_vbatched_max(Uplo uplo, Op trans, const int* n, const int* k, real_t<T> alpha, const T* const* a,
                       const int* lda, real_t<T> beta, T* const* c, const int* ldc, int max_n, int max_k, int batch,
                       int* info, Context& ctx);
template <class T>
void herk_vbatched_max_nocheck(Uplo uplo, Op trans, const int* n, const int* k, real_t<T> alpha, const T* const* a,
                               const int* lda, real_t<T> beta, T* const* c, const int* ldc, int max_n, int max_k,
                               int batch, Context& ctx);

// ---- SYR2K: C_i = alpha A_i B_i^T + alpha B_i A_i^T + beta C_i (no_trans; A, B n x k) or with A^T B,
// B^T A (trans; k x n); HER2K: alpha A B^H + conj(alpha) B A^H + beta C, beta real. -----------------

template <class T>
void syr2k_vbatched(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a, const int* lda,
                    const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int batch, int* info,
                    Context& ctx);
template <class T>
void syr2k_vbatched_max(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a, const int* lda,
                        const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int max_n, int max_k,
                        int batch, int* info, Context& ctx);
template <class T>
void syr2k_vbatched_max_nocheck(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a,
                                const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc,
                                int max_n, int max_k, int batch, Context& ctx);

template <class T>
void her2k_vbatched(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a, const int* lda,
                    const T* const* b, const int* ldb, real_t<T> beta, T* const* c, const int* ldc, int batch,
                    int* info, Context& ctx);
template <class T>
void her2k_vbatched_max(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a, const int* lda,
                        const T* const* b, const int* ldb, real_t<T> beta, T* const* c, const int* ldc, int max_n,
                        int max_k, int batch, int* info, Context& ctx);
template <class T>
void her2k_vbatched_max_nocheck(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a,
                                const int* lda, const T* const* b, const int* ldb, real_t<T> beta, T* const* c,
                                const int* ldc, int max_n, int max_k, int batch, Context& ctx);

// ---- SYMM: C_i = alpha A_i B_i + beta C_i (side left, A m x m) or alpha B_i A_i + beta C_i (side
// right, A n x n), A symmetric with only its uplo triangle read; HEMM: A Hermitian. C, B m x n. -----

template <class T>
void symm_vbatched(Side side, Uplo uplo, const int* m, const int* n, T alpha, const T* const* a, const int* lda,
                   const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int batch, int* info,
                   Context& ctx);
template <class T>
void symm_vbatched_max(Side side, Uplo uplo, const int* m, const int* n, T alpha, const T* const* a, const int* lda,
                       const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int max_m, int max_n,
                       int batch, int* info, Context& ctx);
template <class T>
void symm_vbatched_max_nocheck(Side side, Uplo uplo, const int* m, const int* n, T alpha, const T* const* a,
                               const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc,
                               int max_m, int max_n, int batch, Context& ctx);

template <class T>
void hemm_vbatched(Side side, Uplo uplo, const int* m, const int* n, T alpha, const T* const* a, const int* lda,
                   const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int batch, int* info,
                   Context& ctx);
template <class T>
void hemm_vbatched_max(Side side, Uplo uplo, const int* m, const int* n, T alpha, const T* const* a, const int* lda,
                       const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int max_m, int max_n,
                       int batch, int* info, Context& ctx);
template <class T>
void hemm_vbatched_max_nocheck(Side side, Uplo uplo, const int* m, const int* n, T alpha, const T* const* a,
                               const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc,
                               int max_m, int max_n, int batch, Context& ctx);

}  // namespace batchsolve
