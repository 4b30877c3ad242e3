// OpenBLAS on the calling thread only: the host code that calls BLAS or LAPACK per matrix (the CPU
// reference backend, the test-matrix generator) runs one matrix per OpenMP thread, and OpenBLAS's
// own threads would oversubscribe the cores. Include after <cblas.h> (OpenBLAS's).
#pragma once

namespace batchsolve::reference {

// Set once, before the first call (the setting is process-wide).
inline void single_threaded_blas() {
    static const bool done = [] {
        openblas_set_num_threads(1);
        return true;
    }();
    (void)done;
}

}  // namespace batchsolve::reference
