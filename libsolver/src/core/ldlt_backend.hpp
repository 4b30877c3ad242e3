// The primitives of the symmetric indefinite solvers (ldlt.hpp) that each backend implements: the
// no-pivot LDL^T and its solve, the butterfly transforms, the conversion of A to the lower precision,
// and the pivoted fallback (the refinement's residuals and norms are core/refinement_backend.hpp's).
// src/core/ldlt.cpp checks arguments and plugs them into the refinement driver for sysv_mixed; src/reference/ldlt.cpp implements them on the CPU, src/cuda/ldlt/ on the GPU, and
// src/stub/ldlt_stub.cpp throws NotCompiled in a CPU-only build. Pointers are in the backend's memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "batchsolve/context.hpp"
#include "batchsolve/limits.hpp"
#include "batchsolve/ldlt.hpp"
#include "batchsolve/types.hpp"
#include "declare.hpp"
#include "tuning_table.hpp"

// padding_value below runs in the CUDA backend's kernels too.
#ifdef __CUDACC__
#define BATCHSOLVE_LDLT_HOST_DEVICE __host__ __device__
#else
#define BATCHSOLVE_LDLT_HOST_DEVICE
#endif

namespace batchsolve::ldlt_detail {

// Order at or below which the recursive LDL^T factors a diagonal block directly (one fused kernel on
// the GPU, whose shared memory holds the block: 64 x 65 complex<double> = 66.5 KB, within the H100's
// 227 KB opt-in). Larger leaves mean fewer launches but a longer serial chain inside one block.
constexpr int kLeafOrder = limits::ldlt_leaf_order;  // batchsolve/limits.hpp

// The recursion splits order m into m1 + (m - m1) with m1 a multiple of the leaf order near m / 2,
// so that every leaf but the last is full and the top trailing update is the largest product.
inline int split_order(int m) {
    const int half_leaves = ((m + kLeafOrder - 1) / kLeafOrder) / 2;
    return half_leaves * kLeafOrder;
}

// The GPU factorisation's blocking for order n on the context's GPU (tuning.hpp's LdltBlocking: the
// tuning table libsolver/tuning/sm<arch>-ldlt.json, else its safe default). It runs right-looking
// over panels of panel_order columns (each factored by the recursion), so nearly all flops are
// trailing updates of rank panel_order (GEMMs with a long inner dimension, TF32-capable) instead of
// the recursion's large TRSMs (half its flops). The workspace and the factorisation ask alike.
template <class T>
LdltBlocking blocking(int n, Context& ctx) {
    return tuned_ldlt_blocking(precision_v<T>, n, tuning::context_arch(ctx));
}

// Elements of the scratch copy of L21 D kept for the trailing updates: the recursion's top level
// (the CPU's whole factorisation, the GPU's panels) or the GPU's widest panel, whichever is larger.
inline std::size_t factor_scratch_elements(int n, int panel_order) {
    if (n <= kLeafOrder) return 0;
    const int n1 = split_order(n);
    const std::size_t recursion = std::size_t(n1) * std::size_t(n - n1);
    const std::size_t panels = n > panel_order ? std::size_t(panel_order) * std::size_t(n - panel_order) : 0;
    return recursion > panels ? recursion : panels;
}

// n rounded up to a multiple of 2^depth.
inline int padded_order(int n, int depth) {
    const std::int64_t step = std::int64_t(1) << depth;
    return int((std::int64_t(n) + step - 1) / step * step);
}

// Diagonal entry k (0-based, counted from the first padded row) of the butterflies' padding P in
// diag(A, P): pad_scale (||A||_inf) times values spread over [1, 2) by the golden ratio. Not the
// identity: a butterfly adds the two halves of D's diagonal blocks, and diag(A, I) turns singular
// under it whenever A has the eigenvalue -1 in the wrong place (seen with +-1 test spectra).
BATCHSOLVE_LDLT_HOST_DEVICE inline double padding_value(int k, double pad_scale) {
    const double spread = (k + 1) * 0.6180339887498949;
    return pad_scale * (1 + (spread - static_cast<long long>(spread)));
}

inline std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// sytrf_nopiv's workspace in bytes: the breakdown threshold's slot, then the L21 D copy.
template <class T>
std::size_t factor_workspace_bytes(int n, Context& ctx) {
    return align_up(sizeof(double)) + align_up(factor_scratch_elements(n, blocking<T>(n, ctx).panel_order) * sizeof(T));
}

}  // namespace batchsolve::ldlt_detail

// ---- the family, declared once (core/declare.hpp) -------------------------------------------------
// Pointers are in the backend's memory; every routine runs on the context's stream.

// A = L D L^T|H in the lower triangle; info (backend memory) 0 or the first bad column.
// tensor_cores: TF32 trailing updates of a single-precision factor (CUDA; the CPU ignores it).
#define BATCHSOLVE_LDLT_FACTOR(T)                                                                             \
    void ldlt_factor(Symmetry s, int n, T* a, int lda, int* info, void* workspace, bool tensor_cores, Context& ctx)
#define BATCHSOLVE_LDLT_SOLVE(T) \
    void ldlt_solve(Symmetry s, int n, int nrhs, const T* a, int lda, T* b, int ldb, Context& ctx)
// dst (npad x npad, full storage) = diag(A, P) from A's lower triangle, rounded to Lo, P the padding
// (padding_value); *overflow set to 1 (never cleared) when an entry is not finite in Lo.
#define BATCHSOLVE_LDLT_EXPAND_LOWER(Hi, Lo)                                                                   \
    void expand_lower(Symmetry s, int n, const Hi* a, int lda, int npad, Lo* dst, int ldd, double pad_scale,  \
                      int* overflow, Context& ctx)
// A <- U^T A U in place (full storage), rd: the butterfly diagonals (depth x npad).
#define BATCHSOLVE_LDLT_RBT_MATRIX(T) \
    void rbt_matrix(int npad, int depth, const real_t<T>* rd, T* a, int lda, Context& ctx)
// X <- U^T X (transpose) or U X.
#define BATCHSOLVE_LDLT_RBT_VECTORS(T) \
    void rbt_vectors(bool transpose, int npad, int nrhs, int depth, const real_t<T>* rd, T* x, int ldx, Context& ctx)
// Bunch-Kaufman (or LU, see SolvePath) in the working precision on a copy of A; x holds B on entry and
// X on return. Returns the path taken; *info_host the library's info (k > 0: singular at k).
#define BATCHSOLVE_LDLT_PIVOTED_WORKSPACE_BYTES(T) \
    std::size_t pivoted_workspace_bytes(TypeTag<T>, Symmetry s, int n, int nrhs, Context& ctx)
#define BATCHSOLVE_LDLT_PIVOTED_SOLVE(T)                                                                       \
    SolvePath pivoted_solve(Symmetry s, int n, int nrhs, const T* a, int lda, T* x, int ldx, void* workspace,  \
                            int* info_host, Context& ctx)

#define BATCHSOLVE_LDLT_ROUTINES(ROUTINE)                                                   \
    ROUTINE(PRECISIONS, BATCHSOLVE_LDLT_FACTOR, "sytrf_nopiv")                              \
    ROUTINE(PRECISIONS, BATCHSOLVE_LDLT_SOLVE, "sytrs_nopiv")                               \
    ROUTINE(MIXED_PAIRS, BATCHSOLVE_LDLT_EXPAND_LOWER, "sysv_mixed")                        \
    ROUTINE(PRECISIONS, BATCHSOLVE_LDLT_RBT_MATRIX, "sysv_mixed")                           \
    ROUTINE(PRECISIONS, BATCHSOLVE_LDLT_RBT_VECTORS, "sysv_mixed")                          \
    ROUTINE(PRECISIONS, BATCHSOLVE_LDLT_PIVOTED_WORKSPACE_BYTES, "sysv_mixed_workspace_size") \
    ROUTINE(PRECISIONS, BATCHSOLVE_LDLT_PIVOTED_SOLVE, "sysv_mixed")
BATCHSOLVE_DECLARE_FAMILY(BATCHSOLVE_LDLT_ROUTINES)
