// The primitives of the large-matrix Cholesky solvers (cholesky_large.hpp) that each backend
// implements, the limits of their configuration and the table of defaults. src/core/cholesky_large.cpp
// checks arguments and plugs the factor and solve into the refinement driver for posv_mixed (whose
// residuals and norms are core/refinement_backend.hpp's); src/reference/cholesky_large.cpp implements them on the CPU,
// src/cuda/large/ on the GPU, and src/stub/large_stub.cpp throws NotCompiled in a CPU-only build.
#pragma once

#include <cstddef>
#include <string>

#include "batchsolve/cholesky_large.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/limits.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"
#include "declare.hpp"

namespace batchsolve::cholesky_large_detail {

// ---- limits of LargeCholeskyConfig (checked by core, relied on by the generated POTF2) ----------------
inline constexpr int kMinPanel = limits::large_min_panel;  // batchsolve/limits.hpp: the one place
inline constexpr int kMaxPanel = limits::large_max_panel;
inline constexpr int kMaxRecursionDepth = limits::large_max_recursion_depth;
// A leaf of the recursive POTF2 is never narrower than this: below it the TRSM/SYRK between two
// leaves cost more in launches than the fused kernel saves.
inline constexpr int kMinLeaf = 32;
inline constexpr bool valid_inner_blocking(int ib) { return ib == 8 || ib == 16 || ib == 32; }
// PanelSolve::inverse applies the inverse to the rows below a diagonal block through a buffer of this
// many panels' rows (8 nb: each GEMM is then 8 nb x nb x nb, enough tiles for every SM at nb >= 256,
// and the buffer stays at most 8 nb^2 elements per stream).
inline constexpr int kInverseSlicePanels = 8;
// The smallest syrk_leaf (a SYRK split below it costs more launches than its triangle saves).
inline constexpr int kMinSyrkLeaf = 32;

// "" when `config` (fields resolved, none automatic) is valid for order n, else
// "<field>: <reason>" (the caller turns it into InvalidArgument naming config.<field>).
std::string config_problem(const LargeCholeskyConfig& config);

// Whether the caller left the whole blocking (nb, ib, variant, depth, strip, diagonal, panel_solve) to
// the table: the table's lookahead and graph apply then, and the backend may factor another way.
bool table_blocking(const LargeCholeskyConfig& config);

// The configuration with every automatic field taken from the tuning table of GPU architecture `arch`
// (libsolver/tuning/sm<arch>-large.json; the plain routines pass the context's), else the safe default.
template <class T>
LargeCholeskyConfig resolve(const LargeCholeskyConfig& config, int n, int arch = kShippedTuningArch);

inline std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace batchsolve::cholesky_large_detail

// ---- the family, declared once (core/declare.hpp) -------------------------------------------------
// Pointers are in the backend's memory; every routine runs on the context's stream.

// The uplo triangle of A = L L^T / U^T U; info (backend memory) 0 or the first bad column. The
// configuration is resolved and checked; times (may be null) receives the GPU's phase split.
// table_blocking: the caller left the whole blocking to the table, so the backend may factor another
// way with the same result (the CUDA backend's first calls of a process: cuSOLVER's whole-matrix
// factor while cuBLAS's kernels load in the background).
#define BATCHSOLVE_LARGE_FACTOR(T)                                                                        \
    void large_factor(Uplo uplo, int n, T* a, int lda, int* info, const LargeCholeskyConfig& config,     \
                      bool table_blocking, CholeskyPhaseTimes* times, Context& ctx)
#define BATCHSOLVE_LARGE_SOLVE(T) \
    void large_solve(Uplo uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb, Context& ctx)
// dst (n x n, ldd) = A's uplo triangle rounded to float and mirrored into the other triangle (only
// A's uplo triangle is read; every entry of dst is written: the factorisations after it may read a
// diagonal block's whole square); *overflow set to 1 (never cleared) when a stored entry is not
// finite in float.
#define BATCHSOLVE_LARGE_CONVERT_SYMMETRIC(T)                                                             \
    void convert_symmetric(Uplo uplo, int n, const T* a, int lda, float* dst, int ldd, int* overflow, Context& ctx)
#define BATCHSOLVE_LARGE_ROUTINES(ROUTINE)                                        \
    ROUTINE(REAL_PRECISIONS, BATCHSOLVE_LARGE_FACTOR, "potrf")                    \
    ROUTINE(REAL_PRECISIONS, BATCHSOLVE_LARGE_SOLVE, "potrs")                     \
    ROUTINE(REAL_PRECISIONS, BATCHSOLVE_LARGE_CONVERT_SYMMETRIC, "posv_mixed")

BATCHSOLVE_DECLARE_FAMILY(BATCHSOLVE_LARGE_ROUTINES)
