// The staged column-major factorisation and solves (CholeskyConfig::staged): each matrix's
// triangle is copied into shared memory (packed by columns, asynchronous copies), factorised there
// by a group of warps_per_matrix warps and copied back. Blocked right-looking over panels of nb columns:
//   1. one warp factors the nb x nb diagonal block in registers (lane i holds row i; the column's
//      pivot and entries reach the other lanes by shuffles or shared memory), and stores 1/l_kk of
//      each column;
//   2. every thread of the group solves rows of the panel below (L21 = A21 L11^-H, one row each);
//   3. the group updates the trailing triangle, each thread a column_major_staged_tile square tile
//      at a time (A22 -= L21 L21^H: 2 * tile shared loads feed tile^2 multiply-adds), or each warp
//      an 8 x 8 tile on the FP64 tensor cores (config.tensor_cores, double precision). The
//      tensor-core update runs one panel ahead: the tiles of the next panel's columns first, then
//      warp 0 factors the next diagonal block (step 1) while the other warps update the rest.
// Three barriers per panel. A pivot not in (0, Inf) (or NaN) stops that matrix (info = its column; the
// panel's columns before it are solved, so every column before info holds L) and only that one.
// posv (the fused solve) then solves L L^H X = B from the factor still in shared memory, one
// right-hand side per warp at a time, so L is read from global memory once; a failed matrix leaves
// its B untouched. potrs stages the factor the same way and runs only that solve (L read once, where
// the register kernels read it once per substitution). The kernel shares the generated prelude and the launch interface (potrf's or
// posv's parameters) of codegen/cholesky/column_major.hpp.
#pragma once

#include <string>

#include "codegen/cholesky/column_major.hpp"

namespace batchsolve::codegen::cholesky {

// Side of the square register tile of a thread in the trailing update: 4 makes every shared-memory
// load feed 4 multiply-adds at 16 accumulators (measured on the H200: tiles of 2 were no faster,
// experiments/staged-prototype).
inline constexpr int column_major_staged_tile = 4;
// Widest panel: the diagonal block is factored by one warp, one row per lane.
inline constexpr int column_major_staged_max_nb = 32;

// Smallest n whose copies between A and shared memory go by columns (a warp per column) rather
// than by packed elements (a thread per element, unpacked to row and column): by columns needs a
// fraction of the instructions (d n = 128 potrf: 1.74e9 -> 1.50e9 executed, 4.90 -> 4.57 ms, by
// Nsight Compute on the H200) but below n = 64 a column leaves most of a warp idle (potrs d n = 40-56
// went 10-18% slower).
inline constexpr int column_major_staged_copy_by_column_min_n = 64;

// Narrowest panel whose diagonal block passes column c to the other lanes through shared memory
// (each lane writes its entry, __syncwarp, broadcast reads) rather than by shuffles. Under the warp-0
// branch the compiler cannot prove the shuffles convergent and emits collective sequences (about 9
// instructions per value on sm_90), which cost more the wider the panel; the shared-memory exchange
// adds a __syncwarp per column instead. Measured on the H200 (figures recorded with commit bbd8034;
// the run's files were not kept): nb 16 went
// 2-5% faster (d n = 128 potrf 4.59 -> 4.37 ms, posv 5.14 -> 4.94 ms), nb 8 went 1-9% slower
// (s n = 100 potrf 1.21 -> 1.32 ms).
inline constexpr int column_major_staged_shared_diagonal_min_nb = 16;

// Elements of one matrix's slot in shared memory: the packed triangle plus one, so that consecutive
// slots start in different banks.
inline long long column_major_staged_pitch(int n) { return (long long)n * (n + 1) / 2 + 1; }

// The kernel text after the prelude (the caller adds the prelude and the host entry). The shape's
// shared-memory plan (column_major_shape): slots at off_packed, 1/l_kk of a panel per slot at
// off_diag, a failure flag per slot at off_flags.
std::string column_major_staged_kernel(const ColumnMajorSpec& spec, const ColumnMajorShape& shape,
                                       const std::string& name, int min_blocks);

}  // namespace batchsolve::codegen::cholesky
