// Stands in for the CUDA backend of the large-matrix Cholesky solvers in a CPU-only build: every
// primitive throws NotCompiled naming the routine.
#include "../core/cholesky_large_backend.hpp"

namespace batchsolve::cuda_backend {
BATCHSOLVE_STUB_FAMILY(BATCHSOLVE_LARGE_ROUTINES)
}  // namespace batchsolve::cuda_backend
