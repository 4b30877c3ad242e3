// Stands in for the CUDA backend of the symmetric indefinite solvers in a CPU-only build: every
// primitive of the family (core/ldlt_backend.hpp) throws NotCompiled naming the routine.
#include "../core/ldlt_backend.hpp"

namespace batchsolve::cuda_backend {

BATCHSOLVE_STUB_FAMILY(BATCHSOLVE_LDLT_ROUTINES)

}  // namespace batchsolve::cuda_backend
