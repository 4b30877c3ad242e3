// OpenBLAS on the calling thread only: the host code that calls BLAS or LAPACK per matrix (the CPU
// reference backend, the test-matrix generator) runs one matrix per OpenMP thread, and OpenBLAS's
// own threads would oversubscribe the cores. Include after <cblas.h> (OpenBLAS's).
#pragma once

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
