// Stands in for the CUDA backend of the variable-size triangular routines in a CPU-only build: every
// primitive throws NotCompiled naming the routine.
#include "../core/triangular_backend.hpp"

namespace batchsolve::cuda_backend {
BATCHSOLVE_STUB_FAMILY(BATCHSOLVE_TRIANGULAR_ROUTINES)
}  // namespace batchsolve::cuda_backend
