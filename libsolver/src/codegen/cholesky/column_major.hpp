// Source generator of the batched Cholesky kernels (potrf, potrs, fused posv) for the standard
// column-major layouts (strided and pointer array), specialised for n and a thread shape at run time.
//
// Pure C++ (no CUDA header): CI compiles every variant with NVRTC without a GPU, and the emulation
// test compiles the same text as host C++ (define BS_HOST_EMULATION and the emulator's built-ins).
//
// Factorisation (potrf, and the first phase of posv): right-looking Cholesky with the matrix held in
// registers (potrf with config.staged instead stages the matrix in shared memory and factorises it
// blocked: codegen/cholesky/staged.hpp). Thread (tr, tc) of a matrix owns the rows i = tr + TR*a (a < rows_per_thread) and, of
// each, the columns j = tc + TC*b (TC = threads_per_row). Step k: the owners of column k publish
// their entries of it in shared memory (double-buffered, so one barrier per step), every thread reads
// the pivot and the column and applies the rank-1 update to the part of the trailing matrix it owns.
// Columns are kept unscaled during elimination (the update is a_ij -= a_ik conj(a_jk) / a_kk, which
// needs one reciprocal per step and no square root on the critical path); one pass at the end turns
// column j into L(:, j) = a(:, j) / sqrt(a_jj). Loads and stores of the lower triangle are coalesced
// column reads straight into registers; the upper triangle (U = L^H) goes through a packed copy in
// shared memory so that global accesses stay coalesced. A pivot not in (0, Inf) (or NaN) at column k sets
// info = k + 1 and freezes that matrix only: columns < k hold L, the rest the Schur complement of
// step k (raw, like LAPACK's potf2 leaves a(k, k)).
//
// potrf on a square thread grid (TR = TC = P >= column_major_square_grid_min_side) runs its own text:
// element (P x + tr, P y + tc) in thread (tr, tc), as above, but the thread keeps only the elements of
// the triangle (x >= y: L (L + 1) / 2 of its L x L share, L = ceil(n / P)), the columns are scaled as
// they are read from the step's buffer, both triangles load and store straight from global memory
// (lanes along the contiguous index), and each thread addresses its elements from one pointer stepped
// by P * lda. posv (sides that are multiples of column_major_square_grid_posv_side) then solves from
// the factor packed in shared memory, a warp per right-hand side. Name suffix _sq<P>; nb and
// nrhs_block do not change it. config.lean_addressing runs its lean step loop (square_grid.hpp: no
// branch around a step, no row guards where P divides n, the step's column as 16-byte vectors; posv
// substitutes its first right-hand side forward within the elimination), suffix _lean.
//
// One row per lane with config.lean_addressing (looking = left, rows_per_thread = threads_per_row = 1) at
// n <= 32 a multiple of the 16-byte vector: potrf where n does not divide 32, and posv at every such n,
// run the packed rows kernel (floor(32 / n) whole matrices per warp, no block barrier; posv factors,
// substitutes forward within the elimination and backward from its rows of L staged in shared memory,
// so A and B are each read and written once). Name suffix _rows_lean, as the potrf rows kernel's.
//
// The elimination is either fully unrolled (config.full_unroll: fewest registers, but NVRTC needs
// ~10-60 s at n = 128) or a static sequence of column blocks with a run-time loop over the steps of
// a block (compiles in about a second, uses more registers).
//
// Solves (potrs, and the second phase of posv): a segment of L lanes (a warp, or a power-of-two part
// of one for n < 32) per (matrix, group of nrhs_block right-hand sides); lane l owns the rows
// l + L*a. potrs reads column k of the stored triangle at step k (coalesced): the forward pass with
// the lower factor and the backward pass with the upper one are "axpy" steps (the new unknown is
// broadcast with a shuffle), the other two are "dot" steps (a butterfly reduction). posv keeps the
// factor as packed rows in shared memory, so A and B are each read once and written once: the first
// nrhs_block right-hand sides are forward-substituted during the elimination itself (row k of B is
// published with column k of A), and the backward pass reads rows of L from shared memory as axpy
// steps in blocks of column_major_solve_block (one shuffle round per block).
#pragma once

#include <cstddef>
#include <string>

#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"
#include "codegen/common.hpp"
#include "codegen/kernel_source.hpp"

namespace batchsolve::codegen::cholesky {

// The routine of a column-major kernel: the public enumeration, as for the interleaved kernels.
using ColumnMajorRoutine = batchsolve::Routine;

// Largest n the column-major kernels take; the dispatcher sends larger n elsewhere (cuSOLVER).
inline constexpr int column_major_max_n = codegen::max_column_major_generator_n;
// Largest n whose default configuration is fully unrolled (compile time, see default_column_major_config).
inline constexpr int default_full_unroll_max_n = 64;
// Smallest side of the square thread grids (ceil(n / rows_per_thread) == threads_per_row) whose potrf
// runs the square-grid kernel (each thread keeps only its share of the triangle; square_grid.cpp,
// kSquareGridKernel). The shipped tables' square grids below it (1 x 1 at n = 1, 2 x 2 at d n = 3)
// keep the general register kernel's text.
inline constexpr int column_major_square_grid_min_side = 4;
// posv on a square grid takes the square-grid kernel where the side is a multiple of this (a matrix's
// P * P threads whole warps: the solve runs a warp per right-hand side); other sides keep the general one.
inline constexpr int column_major_square_grid_posv_side = 8;
// Largest rows_per_thread * columns-per-thread * (32-bit words per element) accepted: beyond it the
// per-thread tile no longer fits the 255-register limit next to addressing and temporaries.
inline constexpr int column_major_max_tile_words = limits::column_major_max_tile_words;
// Largest nrhs_block of the solve kernels (registers: rows per lane * nrhs_block * words).
inline constexpr int column_major_max_nrhs_block = 16;
// Steps per block of the solves' axpy passes (see axpy_blocked in the .cpp): the unknowns of a block
// are gathered with one round of shuffles and solved redundantly in every lane, which shortens the
// serial dependency chain of a substitution by about this factor.
inline constexpr int column_major_solve_block = 8;
// The packed rows kernel's backward pass (posv): elements of L loaded from shared memory ahead of the
// substitution step that needs them, at most this many (a compiler fence every this many steps; a power of
// two): unfenced, the fully unrolled pass hoisted all n loads and held n more registers.
inline constexpr int column_major_rows_solve_ahead = 8;
// Register potrs (not staged): config.nb = the steps of a substitution pass whose columns of L are
// loaded before the first of them runs (the loads do not depend on the unknowns), 1..this; 0 takes
// column_major_potrs_default_prefetch.
inline constexpr int column_major_solve_prefetch = 8;
// The default: in single precision as many steps (up to 8) as keep the loaded elements within 32
// registers; otherwise 1, the plain loop. Measured on the H200 (results/autotune-h200, run 31): s
// gained 10-25% at n >= 48 (a warp no longer waits for global memory at every step); d lost 5-25%
// with the same thread shapes (n = 128: 88 registers instead of 72, occupancy 31% instead of 44%).
inline int column_major_potrs_default_prefetch(Precision p, int rows_per_lane) {
    if (p != Precision::s) return 1;
    int d = column_major_solve_prefetch;
    while (d > 1 && d * rows_per_lane > 32) d /= 2;
    return d;
}
// Shared memory one block may opt in to on sm_90 (227 KB); the launcher re-checks the device's limit.
inline constexpr std::size_t column_major_max_shared_bytes = limits::max_shared_bytes_per_block;

// What changes the generated text. nrhs is only used to cap nrhs_block (a solve never needs more
// right-hand sides per segment than the call has); it is not part of the kernel.
struct ColumnMajorSpec {
    ColumnMajorRoutine routine = ColumnMajorRoutine::potrf;
    Precision precision = Precision::d;
    Uplo uplo = Uplo::lower;
    int n = 1;
    int nrhs = 1;
    CholeskyConfig config;
};

// The resolved thread shape and shared-memory plan of a spec (defaults filled in).
struct ColumnMajorShape {
    // factorisation (potrf, posv)
    int rows_per_thread = 0;     // RA
    int threads_per_row = 0;     // TC
    int row_threads = 0;         // TR = ceil(n / RA)
    int cols_per_thread = 0;     // RB = ceil(n / TC)
    int threads_per_matrix = 0;  // P = TR * TC
    int matrices_per_block = 0;  // MPB
    int slots = 0;               // matrix slots in shared memory incl. the padding threads' (>= MPB)
    int update_chunk = 0;        // columns per thread per skippable chunk and per loop block (config.nb;
                                 // default 8 for s, 4 otherwise; a multiple of vec)
    int col_pitch = 0;           // elements per threads_per_row-row of the column buffer (multiple of vec)
    // solves (potrs, posv)
    int seg_lanes = 0;           // L: lanes per solve segment (power of two <= 32)
    int seg_rows = 0;            // ceil(n / L): rows per lane
    int nrhs_block = 0;          // right-hand sides per segment
    int segments_per_block = 0;
    int solve_prefetch = 0;      // register potrs: steps of a pass loaded ahead (config.nb, else the default)
    // launch
    int block_threads = 0;       // multiple of 32
    int vec = 0;                 // elements per 16-byte vector
    int words = 0;               // 32-bit words per element
    std::size_t shared_bytes = 0;
    int rhs_per_thread = 0;      // posv: ceil(nrhs_block / TC) fused right-hand sides per row thread
    std::size_t off_col = 0, off_diag = 0, off_flags = 0, off_packed = 0;  // byte offsets into shared memory
    std::size_t off_rows = 0, off_y = 0;  // posv: published rows of B, forward solutions
    bool packed = false;         // the packed-triangle buffer is used (upper, or posv)
};

// Register kernels (not staged) of potrf and posv with config.looking = left: the elimination's
// steps are synchronised per warp (__syncwarp) instead of per block, which needs the threads of a
// matrix (threads_per_matrix) to divide 32, so that every warp holds whole matrices and a step's
// exchange through shared memory stays within it. Any other looking order: one block barrier per
// step (the kernels have no other order; column_major_spec writes right for them).
inline bool warp_synchronous_steps(const ColumnMajorSpec& spec) {
    return !spec.config.staged && spec.routine != ColumnMajorRoutine::potrs && spec.config.looking == Looking::left;
}

// The library's default configuration for (routine, precision, n); nrhs sizes nrhs_block.
CholeskyConfig default_column_major_config(ColumnMajorRoutine routine, Precision precision, int n, int nrhs);

// "" when `spec` can be generated and launched, else "config.<field>: <reason>" (or "n: ...").
std::string column_major_spec_problem(const ColumnMajorSpec& spec);
// The shape of a spec; throws InvalidArgument(routine, "config.<field>", reason) for a bad spec.
ColumnMajorShape column_major_shape(const ColumnMajorSpec& spec, const char* routine = "column_major");

// Name of the kernel: routine, precision, uplo, n and the resolved shape, e.g.
// potrf_cm_s_lower_n32_r1x1_m4_c8 (unique per generated text).
std::string column_major_kernel_name(const ColumnMajorSpec& spec);

// The complete source (deterministic). Kernel parameters:
//   potrf: (T* a, T* const* a_ptrs, long long a_stride, int lda, int* info, int count, int zero)
//   posv:  (T* a, T* const* a_ptrs, long long a_stride, int lda, T* b, T* const* b_ptrs,
//           long long b_stride, int ldb, int nrhs, int ngroups, int* info, int count, int zero)
//   potrs: (const T* a, const T* const* a_ptrs, long long a_stride, int lda, T* b, T* const* b_ptrs,
//           long long b_stride, int ldb, int nrhs, int ngroups, int count)
// with T the element type (std::complex layout for c/z), a_ptrs / b_ptrs null for strided batches,
// ngroups = ceil(nrhs / nrhs_block), zero = 0 (an opaque zero that orders shared loads; see the
// .cpp). Launch: potrf/posv ceil(count / matrices_per_block) blocks,
// potrs ceil(count * ngroups / segments_per_block) blocks (linear index blockIdx.y * gridDim.x +
// blockIdx.x), block_threads threads, shared_bytes of dynamic shared memory.
// Under BS_HOST_EMULATION the text also defines bs_host_entry(void** args), which unpacks the
// arguments like cudaLaunchKernel does and calls the kernel.
codegen::KernelSource generate_column_major_kernel(const ColumnMajorSpec& spec);

}  // namespace batchsolve::codegen::cholesky
