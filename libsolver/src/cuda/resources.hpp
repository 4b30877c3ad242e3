// The CUDA backend's per-context state (detail::CudaResources) and the error-checking helpers that
// every file of src/cuda uses.
#pragma once

#include <array>
#include <cstddef>
#include <mutex>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "batchsolve/context.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::detail {

// Throw CudaError naming the failed call, its status code and the library's text for it.
[[noreturn]] void throw_cuda_error(const char* call, cudaError_t status);
[[noreturn]] void throw_cublas_error(const char* call, cublasStatus_t status);
[[noreturn]] void throw_cusolver_error(const char* call, cusolverStatus_t status);

inline void check_cuda(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw_cuda_error(call, status);
}
inline void check_cublas(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS) throw_cublas_error(call, status);
}
inline void check_cusolver(cusolverStatus_t status, const char* call) {
    if (status != CUSOLVER_STATUS_SUCCESS) throw_cusolver_error(call, status);
}

}  // namespace batchsolve::detail

#define BATCHSOLVE_CUDA_CHECK(call) ::batchsolve::detail::check_cuda((call), #call)
#define BATCHSOLVE_CUBLAS_CHECK(call) ::batchsolve::detail::check_cublas((call), #call)
#define BATCHSOLVE_CUSOLVER_CHECK(call) ::batchsolve::detail::check_cusolver((call), #call)
// Right after a kernel launch: a bad configuration (grid, block, shared memory) is reported here,
// named after the kernel, instead of surfacing at some later unrelated call.
#define BATCHSOLVE_LAUNCH_CHECK(kernel_name) \
    ::batchsolve::detail::check_cuda(cudaGetLastError(), "launch of kernel " kernel_name)

namespace batchsolve::detail {

// cuBLAS's and cuSOLVER's kernels of the large routines loaded by a background thread of (device,
// precision: single = float), at most one per process (context.cu): start (unless it was started) and
// whether it has finished (false when not started; true when BATCHSOLVE_LIBRARY_WARMUP=off). Neither
// waits.
void start_library_warm_up(int device, bool single);
bool library_warm_up_done(int device, bool single);

// Everything a CUDA Context owns. Library handles are created on first use, so that a context used
// only for conversions or hand-written kernels does not pay cuBLAS/cuSOLVER start-up (and a timed
// loop after a warm-up call never creates one).
struct CudaResources {
    explicit CudaResources(int device);  // throws CudaError / InvalidArgument
    ~CudaResources();
    CudaResources(const CudaResources&) = delete;
    CudaResources& operator=(const CudaResources&) = delete;

    cudaStream_t stream() const { return stream_; }
    // nullptr returns to the context's own stream. Work already issued is waited for first, because
    // it may still use the scratch memory and workspace that the new stream will reuse.
    void set_stream(cudaStream_t stream);
    cublasHandle_t cublas();
    cusolverDnHandle_t cusolver();

    // Device scratch for small per-call data (pointer arrays, info arrays), grown on demand. The
    // contents are not kept; a pointer stays valid until the next call that asks for more bytes, so
    // a routine asks once, for everything it needs (see Carve).
    void* scratch(std::size_t bytes);

    // Throws InvalidArgument when `p` is ordinary host memory the GPU cannot read (a common mistake
    // that would otherwise end in an illegal-address fault). Skipped on systems where the GPU can
    // read pageable host memory (HMM/ATS).
    void require_device_memory(const void* p, const char* routine, const std::string& argument) const;

    int device_ = 0;
    std::string name_;  // filled on first use (device_name), under name_mutex_
    std::mutex name_mutex_;
    int sm_count_ = 0;
    int cc_major_ = 0, cc_minor_ = 0;
    std::size_t l2_bytes_ = 0;
    std::size_t shared_per_block_optin_ = 0;  // dynamic shared memory a kernel may opt in to
    bool pageable_access_ = false;

    cudaStream_t owned_stream_ = nullptr;  // created with cudaStreamNonBlocking
    cudaStream_t stream_ = nullptr;        // owned_stream_ or the user's
    cublasHandle_t cublas_ = nullptr;
    cusolverDnHandle_t cusolver_ = nullptr;
    void* scratch_ = nullptr;
    std::size_t scratch_bytes_ = 0;

private:
    void release() noexcept;

    // Addresses require_device_memory found GPU-accessible, most recent last (a ring): an application
    // or a timed loop that reuses its buffers asks cudaPointerGetAttributes once per buffer instead of
    // on every call. (On the H200 VM the column-major path, which checks A and info, spent 2.9 us more
    // host time per call than the interleaved path, which checks nothing.)
    // A freed device address stays accepted; were it reused for host memory, the kernel's fault would
    // still surface as a CudaError, as for any invalid pointer.
    static constexpr std::size_t kVerifiedAddresses = 64;
    mutable std::array<const void*, kVerifiedAddresses> verified_{};
    mutable std::size_t verified_next_ = 0;
    mutable std::mutex verified_mutex_;
};

// Makes `device` current for the scope and restores the caller's device after: every entry point
// takes one, so a context on device 1 works from a thread whose current device is 0.
class DeviceGuard {
public:
    explicit DeviceGuard(int device);
    ~DeviceGuard();
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = -1;  // -1: nothing to restore
};

// The CUDA resources of `ctx`; InvalidArgument naming `routine` for a CPU context.
CudaResources& resources_of(Context& ctx, const char* routine);

// cudaMalloc with an error that says what the memory was for and how much was asked.
void* device_allocate(std::size_t bytes, const char* what);

// Sub-allocations of one scratch or workspace block. Every piece starts on a 256-byte boundary, so
// it suits any element type and keeps vector loads aligned.
class Carve {
public:
    static constexpr std::size_t alignment = 256;
    template <class U>
    std::size_t reserve(std::size_t count) {
        const std::size_t at = size_;
        size_ += (count * sizeof(U) + alignment - 1) / alignment * alignment;
        return at;
    }
    std::size_t size() const { return size_; }
    template <class U>
    static U* at(void* base, std::size_t offset) {
        return reinterpret_cast<U*>(static_cast<char*>(base) + offset);
    }

private:
    std::size_t size_ = 0;
};

}  // namespace batchsolve::detail
