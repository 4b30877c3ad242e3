// The column-major potrf and posv kernel on a square thread grid (ceil(n / rows_per_thread) ==
// threads_per_row = P): thread (tr, tc) keeps only its cyclic share of the triangle in registers (see
// codegen/cholesky/column_major.hpp); the text and the rule that selects it, behind the column-major
// generator (column_major_kernel_name's _sq<P>, column_major_shape's plan).
#pragma once

#include <string>

#include "codegen/cholesky/column_major.hpp"

namespace batchsolve::codegen::cholesky {

// Whether (spec, its resolved row_threads x threads_per_row grid) runs the square-grid kernel: potrf at a
// side >= column_major_square_grid_min_side; posv at a side that is a multiple of
// column_major_square_grid_posv_side with block barriers; never staged or through the interleaved kernels.
bool square_grid_potrf(const ColumnMajorSpec& spec, int row_threads, int threads_per_row);
inline bool square_grid_potrf(const ColumnMajorSpec& spec, const ColumnMajorShape& s) {
    return square_grid_potrf(spec, s.row_threads, s.threads_per_row);
}

// config.lean_addressing on a square grid (the lean step loop, kSquareGridLeanKernel): elements per row
// block of the step's column buffer. Thread block t's rows P x + t sit at t * pitch + x, so a thread's
// share of the column is whole 16-byte vectors (vec elements); an odd number of vectors per block keeps
// the P distinct vectors a warp reads on distinct banks. Otherwise the side L itself (rows P x + t at P x + t).
int square_grid_column_pitch(const ColumnMajorSpec& spec, int side, int vec);
// Elements of one of the two column buffers of a matrix slot: pitch * P, and with the lean loop's posv
// one more vector (the step's element of the first right-hand side, forward-substituted in the loop).
long long square_grid_buffer_elements(const ColumnMajorSpec& spec, int side, int threads_per_row, int vec);

// The kernel's text (potrf's or posv's parameters, column_major.hpp) for a spec that square_grid_potrf
// accepts, with __launch_bounds__(block_threads, min_blocks) (0: the register count left to ptxas).
// config.compile_time_ld: the text ignores its lda argument and addresses A with lda = n (the
// launcher runs it only where the call's lda is n). config.lean_addressing: the lean step loop (see
// square_grid.cpp): no branch around a step (a failed pivot zeroes the step's scale, so the update
// subtracts nothing and the matrix stays frozen; info still the first bad column), no row guards where
// P divides n, the column read as 16-byte vectors, one scale per product.
std::string square_grid_kernel(const ColumnMajorSpec& spec, const ColumnMajorShape& shape, const std::string& name,
                               int min_blocks);

}  // namespace batchsolve::codegen::cholesky
