// The host layer under every part of the library that runs LAPACK or CBLAS on the CPU (the reference
// backend, support's test-matrix generator, multi's host-side solves): OpenBLAS's CBLAS and LAPACKE
// with std::complex arguments, and the control of OpenBLAS's threads. Code that runs one matrix per
// OpenMP thread keeps OpenBLAS on the calling thread (its own threads would oversubscribe the
// cores); code that runs one large matrix per call gives it every thread.
#pragma once

#include <omp.h>

#include <complex>

// LAPACKE's complex arguments as std::complex (same memory layout as Fortran COMPLEX).
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <cblas.h>  // OpenBLAS's: openblas_set_num_threads
#include <lapacke.h>

namespace batchsolve::host {

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

// One large matrix per call: OpenBLAS on every OpenMP thread for the scope, then the caller's
// setting again.
class ScopedAllThreadsBlas {
public:
    ScopedAllThreadsBlas() : before_(openblas_get_num_threads()) { openblas_set_num_threads(omp_get_max_threads()); }
    ~ScopedAllThreadsBlas() { openblas_set_num_threads(before_); }
    ScopedAllThreadsBlas(const ScopedAllThreadsBlas&) = delete;
    ScopedAllThreadsBlas& operator=(const ScopedAllThreadsBlas&) = delete;

private:
    int before_;
};

}  // namespace batchsolve::host
