// The shared-memory column-major Cholesky family (potrf, potrs, fused posv): each of a
// block's matrices_per_block matrices is held whole in shared memory as an n x n square with the
// leading dimension n, so n goes up to what one block's 227 KiB hold (s n <= 241, d and c n <= 170,
// z n <= 120). Column-major n = 129..256 runs cuSOLVER unless the configuration (the caller's, or a
// measured tuning-table entry) selects this family: on the H200 its defaults were slower than
// cuSOLVER there and slower than the register/staged kernels at n <= 128
// (results/2026-11-27-h200-b024f08-small-cholesky-vs-cusolverdx).
//
//   copy in   a batch of contiguous, 16-byte aligned lower triangles (strided, lda = n, stride = n^2) is
//             copied as one flat run of 16-byte cp.async per block; any other batch (lda > n, pointer
//             arrays, odd offsets) element by element over the referenced triangle, consecutive
//             threads on consecutive rows of a column (coalesced), also cp.async. The other triangle
//             is never written back.
//   factor    blocked right-looking over panels of nb columns by the group of warps_per_matrix warps
//             of the matrix, three block barriers per panel: (1) warp 0 factors the nb x nb diagonal
//             block in registers (lane i holds row i; columns reach the other lanes by shuffles, no
//             barrier per column); a bad pivot stays raw on the diagonal, where every thread of the
//             group finds it (a factored column holds sqrt(pivot) > 0), (2) every thread solves
//             rows of the panel below, L21 = A21 L11^-H, one row at a time (rows are independent),
//             (3) the trailing triangle A22 -= L21 L21^H in register tiles of
//             rows_per_thread x rows_per_thread entries whose rows and columns are strided by the
//             number of tiles per side: neighbouring threads read neighbouring rows of L21 (no
//             bank conflicts) and every tile of the square grid holds only lower-triangle work
//             (the entries above the diagonal of a tile are neither computed nor stored), so the
//             update does exactly the triangle's multiply-adds with 2 * tile shared loads per column
//             of the panel.
//   solve     posv after the copy-out, potrs right after the copy-in: one right-hand side per warp at
//             a time, lane l holding rows l + 32 a, forward and backward substitution as axpy steps
//             (the unknown broadcast by a shuffle) from the factor in shared memory: L read once.
//
// Per-matrix info as the other kernels: the first pivot not in (0, Inf) (or NaN) stops that matrix
// (info = its column, 1-based; every column before it holds L) and only that one; posv leaves B of a
// failed matrix untouched. The upper triangle (A = U^H U) is transposed (and conjugated) into the
// slot's lower triangle on the way in and back on the way out (element by element: the flat copy
// serves lower only), so the factorisation and solves are one text for both triangles.
//
// It is the column-major generator family "shared_memory" (codegen/cholesky/families.hpp), selected by
// CholeskyConfig::staged with looking = left (the public configuration gets no new field for it;
// staged kernels never read `looking`, and column_major_spec keeps `left` only for this family).
// Its typed configuration, all in CholeskyConfig: nb = panel width (1..32; potrs: 0),
// warps_per_matrix = warps per matrix (1..32), matrices_per_block (>= 1), rows_per_thread = side of
// the update's register tile (1..8; 0: shared_memory_default_tile). Defaults per n:
// shared_memory_default_config.
#pragma once

#include <cstddef>
#include <string>

#include "codegen/cholesky/column_major.hpp"

namespace batchsolve::codegen::cholesky {

// Largest n this family generates (the square must also fit one block's shared memory).
inline constexpr int shared_memory_max_n = limits::column_major_max_n;
// Widest panel (registers of the panel phase are one row's nb entries at most).
inline constexpr int shared_memory_max_nb = limits::shared_memory_max_nb;
// Largest side of the trailing update's register tile (tile^2 accumulators per thread).
inline constexpr int shared_memory_max_tile = limits::shared_memory_max_tile;
// Default side of the register tile: 4 gives 10 multiply-adds per 8 shared loads per panel column
// at 16 registers of accumulators (a tile of 2 gives 3 per 4, one of 8 36 per 16 at 64 registers).
inline constexpr int shared_memory_default_tile = 4;

// True when `config` selects this family (staged with looking = left).
// (warps_per_matrix = 0 selects the fused family instead: codegen/cholesky/fused.hpp.)
inline bool is_shared_memory_config(const CholeskyConfig& c) {
    return c.staged && c.looking == Looking::left && c.warps_per_matrix != 0;
}

// Bytes of shared memory for `matrices` squares of order n in precision p.
inline std::size_t shared_memory_bytes(Precision p, int n, int matrices) {
    return std::size_t(matrices) * std::size_t(n) * std::size_t(n) * std::size_t(codegen::element_bytes(p));
}
// Largest n one matrix per block holds in shared memory (column_major_max_shared_bytes), capped at
// shared_memory_max_n: s 241, d and c 170, z 120.
inline int shared_memory_largest_n(Precision p) { return limits::shared_memory_largest_n(p); }

// The default configuration for (routine, precision, n), reasoned (not yet tuned on a GPU): see the
// .cpp for the rules (one warp per 32 rows and at least 8 warps per multiprocessor, several matrices
// per block at small n, panels of 8 columns, register tiles of 4).
CholeskyConfig shared_memory_default_config(Routine routine, Precision precision, int n);

// "" when the family can generate and launch `spec` (spec.config selects it), else
// "config.<field>: <reason>" or "n: <reason>"; fills `shape` (block_threads, threads_per_matrix,
// matrices_per_block, rows_per_thread = tile side, shared_bytes, words, vec).
std::string shared_memory_resolve(const ColumnMajorSpec& spec, ColumnMajorShape& shape);

// Kernel name, e.g. potrf_cm_s_lower_n128_smem_nb8_w4_m1_t4.
std::string shared_memory_kernel_name(const ColumnMajorSpec& spec, const ColumnMajorShape& shape);

// The kernel text after the prelude (the caller adds the prelude and the host entry); parameters
// and launch as the staged kernels (column_major.hpp: potrf's, posv's or potrs's parameters;
// ceil(count / matrices_per_block) blocks of block_threads threads, shared_bytes dynamic).
std::string shared_memory_kernel(const ColumnMajorSpec& spec, const ColumnMajorShape& shape, const std::string& name,
                                 int min_blocks);

}  // namespace batchsolve::codegen::cholesky
