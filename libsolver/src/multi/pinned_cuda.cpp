// Pinned staging memory through the CUDA runtime (see pinned.hpp); falls back to ordinary host memory
// when no driver is loaded (CPU members of a CUDA build never need page-locked memory).
#include <cuda_runtime.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include "batchsolve/types.hpp"
#include "pinned.hpp"

namespace batchsolve::multi {

namespace {
// Which blocks came from cudaHostAlloc, so that pinned_free releases each the way it was allocated.
std::mutex pinned_mutex;
std::set<void*>& pinned_blocks() {
    static std::set<void*> blocks;
    return blocks;
}
}  // namespace

void* pinned_allocate(std::size_t bytes) {
    if (bytes == 0) bytes = 1;
    void* p = nullptr;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 &&
        cudaHostAlloc(&p, bytes, cudaHostAllocPortable) == cudaSuccess) {
        std::lock_guard<std::mutex> lock(pinned_mutex);
        pinned_blocks().insert(p);
        return p;
    }
    cudaGetLastError();  // no driver or no device: not an error for host memory
    p = std::malloc(bytes);
    if (p == nullptr) throw Error("multi-device staging: cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    return p;
}

void pinned_free(void* p) noexcept {
    if (p == nullptr) return;
    {
        std::lock_guard<std::mutex> lock(pinned_mutex);
        auto it = pinned_blocks().find(p);
        if (it != pinned_blocks().end()) {
            pinned_blocks().erase(it);
            cudaFreeHost(p);
            return;
        }
    }
    std::free(p);
}

}  // namespace batchsolve::multi
