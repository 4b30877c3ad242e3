// The vendor path of batched Cholesky: cuSOLVER's potrfBatched/potrsBatched behind batchsolve's
// semantics, for every layout. The fallback of cholesky.cu and the baseline the tuned kernels are
// measured against (batchsolve::vendor:: in cholesky.hpp exposes the column-major part of it).
#pragma once

#include "batchsolve/batch.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::cuda_backend {

// Arguments as checked by src/core (sizes, ld, layouts, A/B compatibility); these functions add the
// device-side checks (device memory, alignment). What they guarantee beyond cuSOLVER itself:
//  * info is LAPACK's: the first column whose pivot is non-positive or NaN (cuSOLVER's own info is
//    re-checked against the factor's diagonal, so NaN input is reported at the right column);
//  * n == 0 sets info to 0; any nrhs (cuSOLVER solves one right-hand side per call);
//  * posv leaves B untouched for the matrices whose factorisation failed;
//  * interleaved and chunked batches go through a column-major copy in ctx.workspace (in slices of
//    at most 256 MiB); only the uplo triangle of A is read from or written back to the user's batch;
//  * batches of any size (cuSOLVER is called on pieces of at most 262,140 matrices).
//
// cuSOLVER's batched routines write outside LAPACK's contract (seen on an H200, CUDA 13.0: potrfBatched
// writes the other triangle of A, potrsBatched writes into the factor). Operand::preserve therefore
// moves column-major operands through the workspace as well, so only the uplo triangle of A is ever
// written and potrs leaves A as it was; Operand::in_place hands column-major operands to cuSOLVER
// directly -- the raw vendor behaviour, which batchsolve::vendor exposes as the baseline.
enum class Operand { preserve, in_place };

// Bytes of Context::workspace the preserve mode takes for n x n matrices, nrhs right-hand sides (0:
// potrf), `count` matrices of element_bytes each (converted slice by slice; 0 when nothing runs).
std::size_t cusolver_workspace_bytes(int n, int nrhs, int count, std::size_t element_bytes);

template <class T>
void cusolver_potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, Context& ctx,
                            Operand mode = Operand::preserve);

template <class T>
void cusolver_potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, Context& ctx,
                            Operand mode = Operand::preserve);

template <class T>
void cusolver_posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, Context& ctx,
                           Operand mode = Operand::preserve);

}  // namespace batchsolve::cuda_backend
