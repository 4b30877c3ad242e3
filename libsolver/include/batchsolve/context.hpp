// Context: which backend runs a call, and the resources it owns (device, stream, library handles,
// workspace). The last argument of every routine; non-copyable. No CUDA header leaks from here:
// the stream is passed as an opaque pointer (a cudaStream_t).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "batchsolve/types.hpp"

namespace batchsolve {

namespace detail {
struct CudaResources;  // defined by the CUDA backend (src/cuda/context.cu); opaque here
}

class Context {
public:
    // Backend::automatic resolves to cuda when the CUDA backend is compiled in and a device is
    // present, else to cpu. Asking for cuda explicitly without it throws NotCompiled or CudaError.
    explicit Context(Backend backend = Backend::automatic, int device = 0);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    Backend backend() const { return backend_; }  // cpu or cuda, never automatic
    int device() const { return device_; }
    std::string device_name() const;              // "CPU (N threads)" or the GPU's name

    // The stream every CUDA call of this context is ordered on (nullptr: a stream of its own).
    void* stream() const;
    void set_stream(void* cuda_stream);
    // Waits for all work issued through this context.
    void synchronize();

    // Scratch memory of the backend's kind (host or device), grown on demand and reused (never shrunk
    // or freed before the context). Every routine that takes some has a size query (workspace_bytes
    // in tuning.hpp, sytrf_nopiv_workspace_size and sysv_mixed_workspace_size in ldlt.hpp, ...):
    // reserve that before a timed loop and the calls neither free nor allocate.
    void* workspace(std::size_t bytes);
    std::size_t workspace_size() const { return workspace_bytes_; }
    // How many times workspace() has allocated (grown) so far: a program, or a test, can check that
    // its hot loop allocated nothing.
    std::size_t workspace_allocations() const { return workspace_allocations_; }

    // CUDA backend internals (library handles, device properties); nullptr on the CPU backend.
    detail::CudaResources* cuda() const { return cuda_.get(); }

    static bool cuda_compiled();   // the CUDA backend is part of this build
    static bool cuda_available();  // ... and at least one device is usable

private:
    Backend backend_;
    int device_;
    std::unique_ptr<detail::CudaResources, void (*)(detail::CudaResources*)> cuda_;
    void* workspace_ = nullptr;
    std::size_t workspace_bytes_ = 0;
    std::size_t workspace_allocations_ = 0;
};

// What the CPU backend runs for batched Cholesky (potrf/potrs/posv) as a call made now would run it, so
// that a benchmark can name the code behind its CPU figures: real s/d calls up to the switch-over order
// go to the vector path with instruction set `isa` ("avx512", "avx2", "portable"; "off" when
// BATCHSOLVE_CPU_SIMD=off disables it), everything else (complex, larger n) to LAPACKE per matrix.
struct CpuCholeskyPath {
    std::string isa;
    int simd_max_order_s = 0;  // largest n the vector path takes in single precision
    int simd_max_order_d = 0;  // ... in double precision
    int threads = 0;           // OpenMP threads the backend runs on
};
CpuCholeskyPath cpu_cholesky_path();

}  // namespace batchsolve
