// Stands in for the CUDA backend of posv_mixed's low-precision Cholesky in a CPU-only build: every
// primitive throws NotCompiled naming the routine.
#include "../core/mixed_factor_backend.hpp"

namespace batchsolve::cuda_backend {
BATCHSOLVE_STUB_FAMILY(BATCHSOLVE_MIXED_FACTOR_ROUTINES)
}  // namespace batchsolve::cuda_backend
