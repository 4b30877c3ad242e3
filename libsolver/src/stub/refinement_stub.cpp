// Stands in for the CUDA backend of the mixed-precision refinement's primitives in a CPU-only build:
// every primitive of the family (core/refinement_backend.hpp) throws NotCompiled naming the routine.
#include "../core/refinement_backend.hpp"

namespace batchsolve::cuda_backend {

BATCHSOLVE_STUB_FAMILY(BATCHSOLVE_REFINEMENT_ROUTINES)

}  // namespace batchsolve::cuda_backend
