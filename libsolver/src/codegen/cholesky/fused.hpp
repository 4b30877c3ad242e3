// The fused-transposition column-major Cholesky family (potrf, fused posv): column-major matrices
// run through the one-thread-per-matrix interleaved kernels, the transposition fused into the kernel.
//
//   copy in   a block takes a chunk of matrices_per_block = C consecutive matrices of the batch (one
//             thread each) and copies them into shared memory in the interleaved order: element
//             (i, j) of the block's matrix m at (j * n + i) * W + m, W = C + 1 (odd, so that the copy's
//             writes of one matrix's consecutive elements fall in different banks). A contiguous,
//             16-byte aligned batch (strided, lda = n, stride = n^2) is read as one flat run of
//             16-byte loads per block (the whole squares); any other batch (lda > n, pointer arrays,
//             odd offsets) element by element over the referenced triangle, consecutive threads on
//             consecutive rows of a column (coalesced). Each thread issues 8 loads before it stores
//             any (a store waits for its load), so a block's copy takes a few round trips to memory.
//   factor    thread m runs the interleaved kernel's body (codegen/cholesky/interleaved.hpp: the same
//             statements, nb, looking order and unrolling of the configuration) on its matrix with
//             the stride W: a warp's accesses to one element are 32 consecutive words of shared
//             memory (no bank conflicts), and no barrier is needed until the copy out.
//   copy out  the referenced triangle only, element by element (coalesced); the other triangle is
//             never written.
//   posv      the right-hand sides follow nrhs_block columns at a time through shared memory
//             (element (i, r) of matrix m at (r * n + i) * W + m), solved by the interleaved potrs
//             body from the factor still in shared memory: A and B are each read and written once.
//             A failed matrix leaves its B untouched.
//
// One pass over global memory and no conversion kernel (the through_interleaved configurations
// convert into a workspace and back: three passes). Shared memory holds C squares of n^2 elements,
// so the family suits small n (s n <= ~32, d n <= ~24 at a useful C); the tuning tables choose it per n.
//
// It is the column-major generator family "fused" (codegen/cholesky/families.hpp), selected by
// CholeskyConfig::staged with warps_per_matrix = 0 (one thread per matrix, as warps_per_matrix = 0
// means for the interleaved kernels; the staged and shared-memory kernels need 1..32 warps). Its typed
// configuration, all in CholeskyConfig: nb, looking, full_unroll, fast_math, max_registers and (posv)
// nrhs_block are the interleaved kernel's; threads_per_block = C, the matrices (and threads) per
// block, 1..1024.
#pragma once

#include <string>

#include "codegen/cholesky/column_major.hpp"
#include "codegen/cholesky/interleaved.hpp"

namespace batchsolve::codegen::cholesky {

// The configurations of this family.
inline bool is_fused_config(const CholeskyConfig& c) { return c.staged && c.warps_per_matrix == 0; }

// Distance in elements between consecutive elements of one matrix in shared memory for C matrices
// per block: odd, so that 32 consecutive elements of a matrix (the flat copy) meet distinct banks.
inline int fused_pitch(int matrices_per_block) { return matrices_per_block | 1; }

// The interleaved spec whose body runs phase `routine` (potrf; potrs for posv's solve) of `spec`.
InterleavedKernelSpec fused_interleaved_spec(const ColumnMajorSpec& spec, Routine routine);

// "" when `spec` (is_fused_config) can be generated, else "config.<field>: <reason>"; fills `shape`
// (matrices_per_block = slots = block_threads = C, threads_per_matrix = 1, nrhs_block, col_pitch = W,
// shared memory: the squares at off_packed, the right-hand sides at off_rows, the info flags at
// off_flags).
std::string fused_resolve(const ColumnMajorSpec& spec, ColumnMajorShape& shape);

// E.g. potrf_cmfused_s_lower_n16_nb8_top_unrolled_m64 (everything that changes the text).
std::string fused_kernel_name(const ColumnMajorSpec& spec, const ColumnMajorShape& shape);

// The kernel text after the one prelude (the caller adds the prelude and the host entry); the
// column-major kernels' parameters and launch (column_major.hpp).
std::string fused_kernel(const ColumnMajorSpec& spec, const ColumnMajorShape& shape, const std::string& name,
                         int min_blocks);

// The family's configuration when no table entry names one: the interleaved kernel's default for n,
// 64 matrices per block, halved until their squares fit 96 KB of shared memory (two blocks per SM).
CholeskyConfig fused_default_config(Routine routine, Precision precision, int n);

}  // namespace batchsolve::codegen::cholesky
