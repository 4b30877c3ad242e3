// Context: resolves the backend and owns the CUDA resources and the workspace.
#include "batchsolve/context.hpp"

#include <cstdlib>

#include "backends.hpp"

namespace batchsolve {

namespace {
void destroy(detail::CudaResources* r) { cuda_backend::destroy_resources(r); }

Backend resolve(Backend requested) {
    if (requested != Backend::automatic) return requested;
    return Context::cuda_available() ? Backend::cuda : Backend::cpu;
}
}  // namespace

bool Context::cuda_compiled() { return cuda_backend::compiled(); }
bool Context::cuda_available() { return cuda_backend::compiled() && cuda_backend::device_count() > 0; }

Context::Context(Backend backend, int device)
    : backend_(resolve(backend)), device_(device), cuda_(nullptr, &destroy) {
    if (device < 0) throw InvalidArgument("Context", "device", "device >= 0");
    if (backend_ == Backend::cuda) {
        if (!cuda_backend::compiled()) throw NotCompiled("Context", "cuda");
        cuda_.reset(cuda_backend::create_resources(device));
    }
}

Context::~Context() {
    if (workspace_ == nullptr) return;
    if (backend_ == Backend::cuda) cuda_backend::free(workspace_);
    else std::free(workspace_);
}

std::string Context::device_name() const {
    if (backend_ == Backend::cuda) return cuda_backend::device_name(cuda_.get());
    return "CPU (" + std::to_string(reference::thread_count()) + " threads)";
}

void* Context::stream() const { return backend_ == Backend::cuda ? cuda_backend::stream(cuda_.get()) : nullptr; }

void Context::set_stream(void* cuda_stream) {
    if (backend_ != Backend::cuda) throw InvalidArgument("Context::set_stream", "backend", "a CUDA context");
    cuda_backend::set_stream(cuda_.get(), cuda_stream);
}

void Context::synchronize() {
    if (backend_ == Backend::cuda) cuda_backend::synchronize(cuda_.get());
}

void* Context::workspace(std::size_t bytes) {
    if (bytes <= workspace_bytes_) return workspace_;
    if (backend_ == Backend::cuda) {
        cuda_backend::synchronize(cuda_.get());  // the old workspace may still be in use
        cuda_backend::free(workspace_);
        workspace_ = nullptr, workspace_bytes_ = 0;
        workspace_ = cuda_backend::allocate(cuda_.get(), bytes);
    } else {
        std::free(workspace_);
        workspace_ = nullptr, workspace_bytes_ = 0;
        workspace_ = std::malloc(bytes);
        if (workspace_ == nullptr) throw Error("Context::workspace: out of host memory");
    }
    workspace_bytes_ = bytes;
    ++workspace_allocations_;
    return workspace_;
}

}  // namespace batchsolve
