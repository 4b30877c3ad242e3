// Stands in for the CUDA backend of the variable-size triangular routines in a CPU-only build: every
// primitive throws NotCompiled naming the routine.
#include "../core/triangular_backend.hpp"

namespace batchsolve::cuda_backend {

namespace {
[[noreturn]] void not_compiled(const char* routine) { throw NotCompiled(routine, "cuda"); }
}  // namespace

template <class T>
triangular_detail::Maxima check_vbatched(const triangular_detail::CheckSpec& spec, const int*, const int*,
                                         const T* const*, const int*, T* const*, const int*, int, int*, int*, int*,
                                         Context&) {
    not_compiled(spec.potrf ? "potrf_vbatched" : "trmm_vbatched/trsm_vbatched");
}
template <class T>
void trmm_vbatched(Side, Uplo, Op, Diag, const int*, const int*, T, const T* const*, const int*, T* const*, const int*,
                   int, int, int, const TriangularConfig&, Context&) {
    not_compiled("trmm_vbatched");
}
template <class T>
void trsm_vbatched(Side, Uplo, Op, Diag, const int*, const int*, T, const T* const*, const int*, T* const*, const int*,
                   int, int, int, const TriangularConfig&, Context&) {
    not_compiled("trsm_vbatched");
}
template <class T>
void potrf_vbatched(Uplo, const int*, T* const*, const int*, int, int, int*, bool, const TriangularConfig&, Context&) {
    not_compiled("potrf_vbatched");
}

#define INSTANTIATE(T)                                                                                           \
    template triangular_detail::Maxima check_vbatched<T>(const triangular_detail::CheckSpec&, const int*,        \
                                                         const int*, const T* const*, const int*, T* const*,     \
                                                         const int*, int, int*, int*, int*, Context&);           \
    template void trmm_vbatched<T>(Side, Uplo, Op, Diag, const int*, const int*, T, const T* const*, const int*, \
                                   T* const*, const int*, int, int, int, const TriangularConfig&, Context&);     \
    template void trsm_vbatched<T>(Side, Uplo, Op, Diag, const int*, const int*, T, const T* const*, const int*, \
                                   T* const*, const int*, int, int, int, const TriangularConfig&, Context&);     \
    template void potrf_vbatched<T>(Uplo, const int*, T* const*, const int*, int, int, int*, bool,               \
                                    const TriangularConfig&, Context&);
BATCHSOLVE_TRIANGULAR_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve::cuda_backend
