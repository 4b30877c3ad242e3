// Stands in for the CUDA backend of the variable-size BLAS-3 routines in a CPU-only build: each entry
// throws NotCompiled naming the routine.
#include "../core/blas3_internal.hpp"

namespace batchsolve::cuda_backend {

void check_vbatched(const blas3_detail::ProblemChecks&, int, int*, int*, Context&) {
    throw NotCompiled("vbatched BLAS-3 argument check", "cuda");
}

template <class T>
void gemm_vbatched(blas3_detail::Operand, blas3_detail::Operand, blas3_detail::VSize, blas3_detail::VSize,
                   blas3_detail::VSize, T, const T* const*, const int*, const T* const*, const int*, T, T* const*,
                   const int*, int, int, int, int, const blas3_detail::GemmExtras&, Context&) {
    throw NotCompiled("gemm_vbatched", "cuda");
}

#define INSTANTIATE(T)                                                                                               \
    template void gemm_vbatched<T>(blas3_detail::Operand, blas3_detail::Operand, blas3_detail::VSize,                \
                                   blas3_detail::VSize, blas3_detail::VSize, T, const T* const*, const int*,          \
                                   const T* const*, const int*, T, T* const*, const int*, int, int, int, int,        \
                                   const blas3_detail::GemmExtras&, Context&);
BATCHSOLVE_BLAS3_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve::cuda_backend
