// Stands in for the CUDA backend in a CPU-only build: the library links, Context::cuda_compiled()
// is false, and every CUDA entry point throws NotCompiled with its routine's name.
#include "../core/backends.hpp"
#include "batchsolve/cholesky.hpp"

namespace batchsolve::cuda_backend {

bool compiled() { return false; }
int device_count() { return 0; }
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

template <class T> void potrf_batched(Uplo, const BatchView<T>&, int*, const CholeskyConfig*, Context&) { throw NotCompiled("potrf_batched", "cuda"); }
template <class T> void potrs_batched(Uplo, const BatchView<const T>&, const BatchView<T>&, const CholeskyConfig*, Context&) { throw NotCompiled("potrs_batched", "cuda"); }
template <class T> void posv_batched(Uplo, const BatchView<T>&, const BatchView<T>&, int*, const CholeskyConfig*, Context&) { throw NotCompiled("posv_batched", "cuda"); }
template <class T> void convert_layout(const BatchView<const T>&, const BatchView<T>&, Context&) { throw NotCompiled("convert_layout", "cuda"); }
template <class T> KernelReport prepare_kernel(const std::string&, Uplo, const BatchView<const T>&, int, const CholeskyConfig*, Context&) { throw NotCompiled("prepare_kernel", "cuda"); }
template <class T> std::string config_problem(Routine, Uplo, const BatchView<const T>&, int, const CholeskyConfig&) { throw NotCompiled("config_problem", "cuda"); }
template <class T> std::size_t workspace_bytes(Routine, Uplo, const BatchView<const T>&, int, const CholeskyConfig*, Context&) { throw NotCompiled("workspace_bytes", "cuda"); }

#define INSTANTIATE(T)                                                                               \
    template void potrf_batched<T>(Uplo, const BatchView<T>&, int*, const CholeskyConfig*, Context&);                  \
    template void potrs_batched<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, const CholeskyConfig*, Context&); \
    template void posv_batched<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, const CholeskyConfig*, Context&); \
    template void convert_layout<T>(const BatchView<const T>&, const BatchView<T>&, Context&);               \
    template KernelReport prepare_kernel<T>(const std::string&, Uplo, const BatchView<const T>&, int, const CholeskyConfig*, Context&); \
    template std::string config_problem<T>(Routine, Uplo, const BatchView<const T>&, int, const CholeskyConfig&);  \
    template std::size_t workspace_bytes<T>(Routine, Uplo, const BatchView<const T>&, int, const CholeskyConfig*, Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

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
