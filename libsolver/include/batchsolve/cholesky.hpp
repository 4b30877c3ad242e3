// Batched Cholesky factorisation (potrf), triangular solves with the factor (potrs), and both in
// one call (posv), for a batch of Hermitian positive definite matrices of one size n.
//
// Semantics follow LAPACK per matrix and MAGMA per batch:
//  * `info` has one entry per matrix, in the backend's memory: 0 success, k > 0 the leading minor of
//    order k is not positive definite (a non-positive or NaN pivot at column k, 1-based). A failed
//    matrix never stops, throws for, or perturbs the other matrices of the batch.
//  * Argument errors (negative sizes, ld < n, null pointers, mismatched batch counts or layouts)
//    throw InvalidArgument naming the argument before any work starts.
//  * Only the `uplo` triangle of A is read; the factor overwrites it (L with A = L L^H for lower,
//    U with A = U^H U for upper); the other triangle is left untouched.
//  * B (n x nrhs per matrix, any nrhs >= 0) is overwritten with the solution X. A and B must be in
//    the same family of layouts: both column-major (strided or pointer array, mixed freely) or both
//    interleaved with the same chunk size.
#pragma once

#include <type_traits>

#include "batchsolve/batch.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve {

template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, Context& ctx);

template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, Context& ctx);

template <class T>
void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, Context& ctx);

// potrs with the factor in a non-const view (the view potrf wrote it through): T is deduced from
// both arguments, which the const overload above cannot do without an explicit potrs_batched<T>.
template <class T, class = std::enable_if_t<!std::is_const_v<T>>>
void potrs_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, Context& ctx) {
    potrs_batched<T>(uplo, BatchView<const T>(a), b, ctx);
}

// The vendor baseline: cuSOLVER's potrfBatched / potrsBatched path, on column-major batches only
// (strided or pointer array; interleaved layouts throw InvalidArgument). It is what the tuned
// kernels are measured against. Same semantics as above (LAPACK info, any nrhs, only the uplo
// triangle touched). CUDA backend only: a CPU context throws InvalidArgument, a CPU-only build
// NotCompiled.
namespace vendor {
template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, Context& ctx);
template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, Context& ctx);
template <class T, class = std::enable_if_t<!std::is_const_v<T>>>
void potrs_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, Context& ctx) {
    vendor::potrs_batched<T>(uplo, BatchView<const T>(a), b, ctx);  // qualified: ADL would add batchsolve's
}
}  // namespace vendor

}  // namespace batchsolve
