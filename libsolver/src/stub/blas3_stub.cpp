// Stands in for the CUDA backend of the variable-size BLAS-3 routines in a CPU-only build: each entry
// throws NotCompiled naming the routine.
#include "../core/blas3_internal.hpp"

namespace batchsolve::cuda_backend {

void check_vbatched(const blas3_detail::ProblemChecks&, int, int*, blas3_detail::SizeSummary*, Context&) {
    throw NotCompiled("vbatched BLAS-3 argument check", "cuda");
}

BATCHSOLVE_STUB_FAMILY(BATCHSOLVE_BLAS3_ROUTINES)

}  // namespace batchsolve::cuda_backend
