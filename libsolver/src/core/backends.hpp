// The interface each backend implements. src/core checks arguments and dispatches here;
// src/reference implements it on the CPU, src/cuda on the GPU, and src/stub stands in for CUDA in a
// CPU-only build (throwing NotCompiled). Same function names in every backend folder.
#pragma once

#include <cstddef>
#include <string>

#include "batchsolve/batch.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve {

namespace reference {
template <class T> void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, Context& ctx);
template <class T> void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, Context& ctx);
template <class T> void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, Context& ctx);
template <class T> void convert_layout(const BatchView<const T>& src, const BatchView<T>& dst, Context& ctx);
int thread_count();
}  // namespace reference

namespace cuda_backend {
bool compiled();
int device_count();  // 0 when no driver or no device (never throws)
detail::CudaResources* create_resources(int device);
void destroy_resources(detail::CudaResources* r) noexcept;
std::string device_name(detail::CudaResources* r);
void* stream(detail::CudaResources* r);
void set_stream(detail::CudaResources* r, void* stream);
void synchronize(detail::CudaResources* r);
void* allocate(detail::CudaResources* r, std::size_t bytes);
void free(void* p) noexcept;
void copy_to_device(detail::CudaResources* r, void* dst, const void* src, std::size_t bytes);
void copy_to_host(detail::CudaResources* r, void* dst, const void* src, std::size_t bytes);
void fill_bytes(detail::CudaResources* r, void* dst, unsigned char value, std::size_t bytes);

// `config`: the caller's kernel configuration (expert entry points of tuning.hpp), or nullptr for
// the tuning table's choice (else the safe default).
template <class T> void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig* config,
                                      Context& ctx);
template <class T> void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b,
                                      const CholeskyConfig* config, Context& ctx);
template <class T> void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info,
                                     const CholeskyConfig* config, Context& ctx);
template <class T> void convert_layout(const BatchView<const T>& src, const BatchView<T>& dst, Context& ctx);
// config == nullptr: the configuration the plain routines would resolve (tuning table, else default).
template <class T> KernelReport prepare_kernel(const std::string& routine, Uplo uplo, const BatchView<const T>& shape,
                                               int nrhs, const CholeskyConfig* config, Context& ctx);
// As tuning.hpp's config_problem (no device needed) and workspace_bytes (config == nullptr: the
// configuration the plain routines resolve).
template <class T> std::string config_problem(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                                              const CholeskyConfig& config);
template <class T> std::size_t workspace_bytes(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                                               const CholeskyConfig* config, Context& ctx);
}  // namespace cuda_backend

// Calls F<float>, F<double>, F<complex<float>>, F<complex<double>> explicit instantiations.
#define BATCHSOLVE_FOR_EACH_PRECISION(MACRO) \
    MACRO(float)                            \
    MACRO(double)                           \
    MACRO(std::complex<float>)              \
    MACRO(std::complex<double>)

}  // namespace batchsolve
