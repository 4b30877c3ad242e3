// Tuned batched Cholesky (potrf, potrs, fused posv) for the standard column-major layouts (strided
// and pointer array) with n <= column_major_max_n (128): run-time generated kernels (see
// codegen/cholesky/column_major.hpp), launched on the context's stream; n = 129..256 cuSOLVER from these
// launchers, or the shared-memory family (codegen/cholesky/shared_memory.hpp) where the configuration
// selects it and one matrix fits a block's shared memory. Larger n is not taken: the dispatcher sends it to cuSOLVER
// (column_major_supports says which).
#pragma once

#include "batchsolve/batch.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"
#include "../jit/jit.hpp"
#include "codegen/cholesky/column_major.hpp"

namespace batchsolve::cuda_backend::tuned {

// The Cholesky generators (codegen/cholesky/: specs, checks, defaults, text) by the names the
// launchers and their tests use.
using namespace codegen::cholesky;

// True when these kernels take matrices of order n in `layout` (column_major or pointer_array).
bool column_major_supports(LayoutKind layout, int n);

// n = 129..256 that the launchers below hand to cuSOLVER: every such call unless `config` selects the
// shared-memory family (explicitly, or through a measured tuning-table entry) and one matrix of
// `precision` fits a block's shared memory; true, with cuSOLVER's workspace (nrhs 0 for potrf) in
// `workspace_bytes`. kernel_plan.cpp plans such a call this way.
bool column_major_plan_cusolver(Precision precision, int n, int nrhs, int count, const CholeskyConfig& config,
                                std::size_t& workspace_bytes);

// Configuration fields read (0 = the library default for n and precision; config.nb == 0 also
// takes full_unroll from the default):
//   potrf/posv: rows_per_thread, threads_per_row, warps_per_matrix (a cap on the shape),
//               matrices_per_block (else as many as threads_per_block allows), nb (columns per
//               thread per update chunk), full_unroll, fast_math, max_registers;
//               posv also nrhs_block (right-hand sides per solve segment).
//   potrs:      threads_per_block (multiple of 32), nrhs_block, fast_math, max_registers.
//   potrf/posv with staged (codegen/cholesky/staged.hpp): nb (panel width, 1..32, required),
//               warps_per_matrix (1..32, required; posv: each warp solves one right-hand side at a
//               time), matrices_per_block (0 = 1), fast_math, max_registers; the register-shape
//               fields must be 0 and nrhs_block is not read. potrs with staged: the same without nb
//               (the factor is staged in shared memory, then solved from there: L read once).
// A configuration that cannot run the problem throws InvalidArgument naming the config field.
// Device memory only; A and B may be strided or pointer arrays independently. No workspace.

// Factorises every matrix; info (device, count ints): 0, or the 1-based column of the first
// non-positive or NaN pivot (that matrix then holds L in the columns before it and its partially
// updated trailing matrix after; the others are unaffected). n == 0: info set to 0.
template <class T>
void potrf_column_major(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig& config, Context& ctx);

// Solves A X = B with the factor from potrf (only its uplo triangle is read), any nrhs.
template <class T>
void potrs_column_major(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, const CholeskyConfig& config,
                        Context& ctx);

// Factor and solve in one kernel (each matrix and right-hand side read once and written once).
// A matrix whose factorisation fails keeps its B untouched.
template <class T>
void posv_column_major(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, const CholeskyConfig& config,
                       Context& ctx);

// The spec a call of `routine` would run (config resolved as the routines above do); for the
// autotuner and tests.
ColumnMajorSpec column_major_spec(ColumnMajorRoutine routine, Precision precision, Uplo uplo, int n, int nrhs,
                                  const CholeskyConfig& config);

// Compiles (or loads) the kernel a call would run, without running it (autotuner, prepare_kernel).
struct ColumnMajorPrepared {
    ColumnMajorSpec spec;
    jit::LoadedKernel kernel;
    int block_threads = 0;  // threads per block of the launch
    int blocks_per_sm = 0;  // occupancy at that block size and shared memory
};
ColumnMajorPrepared prepare_column_major(ColumnMajorRoutine routine, Precision precision, Uplo uplo, int n, int nrhs,
                                         const CholeskyConfig& config, Context& ctx);

}  // namespace batchsolve::cuda_backend::tuned
