// Memory of a context's kind: malloc on the CPU backend, cudaMalloc on the CUDA backend.
#include "batchsolve/buffer.hpp"

#include <cstdlib>
#include <cstring>

#include "backends.hpp"

namespace batchsolve::detail {

void* backend_allocate(Context& ctx, std::size_t bytes) {
    if (bytes == 0) return nullptr;
    if (ctx.backend() == Backend::cuda) return cuda_backend::allocate(ctx.cuda(), bytes);
    void* p = std::malloc(bytes);
    if (p == nullptr) throw Error("Buffer: out of host memory allocating " + std::to_string(bytes) + " bytes");
    return p;
}

void backend_free(Backend backend, void* p) noexcept {
    if (p == nullptr) return;
    if (backend == Backend::cuda) cuda_backend::free(p);
    else std::free(p);
}

void backend_copy_to_backend(Context& ctx, void* dst, const void* host_src, std::size_t bytes) {
    if (bytes == 0) return;
    if (ctx.backend() == Backend::cuda) cuda_backend::copy_to_device(ctx.cuda(), dst, host_src, bytes);
    else std::memcpy(dst, host_src, bytes);
}

void backend_copy_to_host(Context& ctx, void* host_dst, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    if (ctx.backend() == Backend::cuda) cuda_backend::copy_to_host(ctx.cuda(), host_dst, src, bytes);
    else std::memcpy(host_dst, src, bytes);
}

void backend_fill_bytes(Context& ctx, void* dst, unsigned char value, std::size_t bytes) {
    if (bytes == 0) return;
    if (ctx.backend() == Backend::cuda) cuda_backend::fill_bytes(ctx.cuda(), dst, value, bytes);
    else std::memset(dst, value, bytes);
}

}  // namespace batchsolve::detail
