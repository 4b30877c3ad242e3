// Buffer<T>: owning memory of a context's kind (host for cpu, device for cuda), so applications
// and tests move data without including CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "batchsolve/context.hpp"

namespace batchsolve {

namespace detail {
// count * element_size, checked: InvalidArgument("Buffer", "count", ...) when it does not fit 64 bits
// (what a pointer can address), instead of a wrapped size and a too-small allocation.
std::size_t buffer_bytes(std::size_t count, std::size_t element_size);
// A copy of `count` elements into or out of a Buffer of `size`: InvalidArgument(routine, "count", ...)
// when count > size.
void require_within(const char* routine, std::size_t count, std::size_t size);
void* backend_allocate(Context& ctx, std::size_t bytes);
void backend_free(Backend backend, void* p) noexcept;
void backend_copy_to_backend(Context& ctx, void* dst, const void* host_src, std::size_t bytes);
void backend_copy_to_host(Context& ctx, void* host_dst, const void* src, std::size_t bytes);
void backend_fill_bytes(Context& ctx, void* dst, unsigned char value, std::size_t bytes);
}  // namespace detail

template <class T>
class Buffer {
public:
    Buffer() = default;
    Buffer(Context& ctx, std::size_t count)
        : ctx_(&ctx), backend_(ctx.backend()), size_(count),
          data_(static_cast<T*>(detail::backend_allocate(ctx, detail::buffer_bytes(count, sizeof(T))))) {}
    Buffer(Context& ctx, const std::vector<T>& host) : Buffer(ctx, host.size()) { upload(host); }
    ~Buffer() { detail::backend_free(backend_, data_); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& o) noexcept { swap(o); }
    Buffer& operator=(Buffer&& o) noexcept { swap(o); return *this; }

    T* data() const { return data_; }
    std::size_t size() const { return size_; }

    // Synchronous copies (the context's stream is synchronised first).
    void upload(const T* host, std::size_t count) {
        detail::require_within("Buffer::upload", count, size_);
        detail::backend_copy_to_backend(*ctx_, data_, host, count * sizeof(T));
    }
    void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
    void download(T* host, std::size_t count) const {
        detail::require_within("Buffer::download", count, size_);
        detail::backend_copy_to_host(*ctx_, host, data_, count * sizeof(T));
    }
    std::vector<T> to_host() const {
        std::vector<T> h(size_);
        download(h.data(), size_);
        return h;
    }
    // Sets every byte to `value` (0xFF poisons floating-point data with NaNs).
    void fill_bytes(unsigned char value) { detail::backend_fill_bytes(*ctx_, data_, value, size_ * sizeof(T)); }

private:
    void swap(Buffer& o) noexcept {
        std::swap(ctx_, o.ctx_), std::swap(backend_, o.backend_), std::swap(size_, o.size_), std::swap(data_, o.data_);
    }
    Context* ctx_ = nullptr;
    Backend backend_ = Backend::cpu;
    std::size_t size_ = 0;
    T* data_ = nullptr;
};

}  // namespace batchsolve
