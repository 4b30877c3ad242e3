// potrf/potrs/posv: argument checks, then dispatch to the backend of the context.
#include "batchsolve/cholesky.hpp"

#include "backends.hpp"
#include "checks.hpp"

namespace batchsolve {

template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, Context& ctx) {
    constexpr const char* routine = "potrf_batched";
    checks::check_view(a, routine, "a");
    checks::check_square(a, routine, "a");
    checks::require(a.count == 0 || info != nullptr, routine, "info", "non-null");
    if (a.count == 0) return;
    if (ctx.backend() == Backend::cuda) cuda_backend::potrf_batched(uplo, a, info, ctx);
    else reference::potrf_batched(uplo, a, info, ctx);
}

template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, Context& ctx) {
    constexpr const char* routine = "potrs_batched";
    checks::check_view(a, routine, "a");
    checks::check_square(a, routine, "a");
    checks::check_view(b, routine, "b");
    checks::check_rhs(a, b, routine);
    if (a.count == 0 || a.rows == 0 || b.cols == 0) return;
    if (ctx.backend() == Backend::cuda) cuda_backend::potrs_batched(uplo, a, b, ctx);
    else reference::potrs_batched(uplo, a, b, ctx);
}

template <class T>
void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, Context& ctx) {
    constexpr const char* routine = "posv_batched";
    checks::check_view(a, routine, "a");
    checks::check_square(a, routine, "a");
    checks::check_view(b, routine, "b");
    checks::check_rhs(a, b, routine);
    checks::require(a.count == 0 || info != nullptr, routine, "info", "non-null");
    if (a.count == 0) return;
    if (ctx.backend() == Backend::cuda) cuda_backend::posv_batched(uplo, a, b, info, ctx);
    else reference::posv_batched(uplo, a, b, info, ctx);
}

#define INSTANTIATE(T)                                                                               \
    template void potrf_batched<T>(Uplo, const BatchView<T>&, int*, Context&);                       \
    template void potrs_batched<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, Context&); \
    template void posv_batched<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve
