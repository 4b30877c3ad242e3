// Stands in for the CUDA backend in a CPU-only build: the library links, Context::cuda_compiled()
// is false, and every CUDA entry point throws NotCompiled with its routine's name.
#include "../core/backends.hpp"
#include "batchsolve/cholesky.hpp"

namespace batchsolve::cuda_backend {

bool compiled() { return false; }
int device_count() { return 0; }
int compute_capability(Context&) { throw NotCompiled("compute_capability", "cuda"); }
detail::CudaResources* create_resources(int) { throw NotCompiled("Context", "cuda"); }
void destroy_resources(detail::CudaResources*) noexcept {}
std::string device_name(detail::CudaResources*) { throw NotCompiled("Context::device_name", "cuda"); }
void* stream(detail::CudaResources*) { return nullptr; }
void set_stream(detail::CudaResources*, void*) { throw NotCompiled("Context::set_stream", "cuda"); }
void synchronize(detail::CudaResources*) {}
void* allocate(detail::CudaResources*, std::size_t) { throw NotCompiled("Buffer", "cuda"); }
void free(void*) noexcept {}
void copy_to_device(detail::CudaResources*, void*, const void*, std::size_t) { throw NotCompiled("Buffer::upload", "cuda"); }
void copy_to_host(detail::CudaResources*, void*, const void*, std::size_t) { throw NotCompiled("Buffer::download", "cuda"); }
void fill_bytes(detail::CudaResources*, void*, unsigned char, std::size_t) { throw NotCompiled("Buffer::fill_bytes", "cuda"); }
WarmUpReport warm_up(const std::vector<KernelCase>&, int, Context&) { throw NotCompiled("warm_up", "cuda"); }
WarmUpReport warm_up_for_arch(const std::vector<KernelCase>&, int, int) { throw NotCompiled("warm_up_for_arch", "cuda"); }

BATCHSOLVE_STUB_FAMILY(BATCHSOLVE_CHOLESKY_ROUTINES)
BATCHSOLVE_STUB_FAMILY(BATCHSOLVE_CHOLESKY_KERNEL_ROUTINES)
BATCHSOLVE_STUB_FAMILY(BATCHSOLVE_LAYOUT_ROUTINES)

}  // namespace batchsolve::cuda_backend

namespace batchsolve::vendor {

template <class T> void potrf_batched(Uplo, const BatchView<T>&, int*, Context&) { throw NotCompiled("vendor::potrf_batched", "cuda"); }
template <class T> void potrs_batched(Uplo, const BatchView<const T>&, const BatchView<T>&, Context&) { throw NotCompiled("vendor::potrs_batched", "cuda"); }

#define INSTANTIATE(T)                                                         \
    template void potrf_batched<T>(Uplo, const BatchView<T>&, int*, Context&); \
    template void potrs_batched<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve::vendor
