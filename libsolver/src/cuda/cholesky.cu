// Batched Cholesky on the CUDA backend: picks the implementation for a call. For now every call
// goes to the cuSOLVER path; the tuned kernels will be dispatched from here, with cuSOLVER kept as
// the fallback for what they do not cover.
#include "../core/backends.hpp"
#include "cholesky_cusolver.hpp"

namespace batchsolve::cuda_backend {

template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, Context& ctx) {
    cusolver_potrf_batched(uplo, a, info, ctx);
}

template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, Context& ctx) {
    cusolver_potrs_batched(uplo, a, b, ctx);
}

template <class T>
void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, Context& ctx) {
    cusolver_posv_batched(uplo, a, b, info, ctx);
}

#define INSTANTIATE(T)                                                                               \
    template void potrf_batched<T>(Uplo, const BatchView<T>&, int*, Context&);                       \
    template void potrs_batched<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, Context&); \
    template void posv_batched<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve::cuda_backend
