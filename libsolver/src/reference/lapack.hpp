// OpenBLAS's CBLAS and LAPACKE for the host code that calls them per matrix (the CPU reference
// backend, the test-matrix generator), and OpenBLAS kept on the calling thread: that code runs one
// matrix per OpenMP thread, and OpenBLAS's own threads would oversubscribe the cores.
#pragma once

#include <complex>

// LAPACKE's complex arguments as std::complex (same memory layout as Fortran COMPLEX).
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <cblas.h>  // OpenBLAS's: openblas_set_num_threads
#include <lapacke.h>

namespace batchsolve::reference {

// The CPU backend: set once, before its first call (the setting is process-wide).
inline void single_threaded_blas() {
    static const bool done = [] {
        openblas_set_num_threads(1);
        return true;
    }();
    (void)done;
}

// The generator: single-threaded for its parallel region, then the caller's setting again (a user of
// the library may run their own OpenBLAS calls multi-threaded).
class ScopedSingleThreadedBlas {
public:
    ScopedSingleThreadedBlas() : before_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
    ~ScopedSingleThreadedBlas() { openblas_set_num_threads(before_); }
    ScopedSingleThreadedBlas(const ScopedSingleThreadedBlas&) = delete;
    ScopedSingleThreadedBlas& operator=(const ScopedSingleThreadedBlas&) = delete;

private:
    int before_;
};

}  // namespace batchsolve::reference
