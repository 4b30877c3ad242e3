// The interface each backend implements. src/core checks arguments and dispatches here;
// src/reference implements it on the CPU, src/cuda on the GPU, and src/stub stands in for CUDA in a
// CPU-only build (throwing NotCompiled). The Cholesky and layout routines are declared once as
// families (core/declare.hpp explains the mechanism); the CUDA context's plumbing below is plain.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "batchsolve/batch.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"
#include "declare.hpp"

// ---- Cholesky (cholesky.hpp) ----------------------------------------------------------------------
// `config`: the caller's kernel configuration (expert entry points of tuning.hpp), or nullptr for the
// tuning table's choice (else the safe default). The CPU backend has no kernel configurations.
#define BATCHSOLVE_CHOLESKY_POTRF(T) \
    void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig* config, Context& ctx)
#define BATCHSOLVE_CHOLESKY_POTRS(T)                                                                   \
    void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, const CholeskyConfig* config, \
                       Context& ctx)
#define BATCHSOLVE_CHOLESKY_POSV(T)                                                                     \
    void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, const CholeskyConfig* config, \
                      Context& ctx)
#define BATCHSOLVE_CHOLESKY_ROUTINES(ROUTINE)                        \
    ROUTINE(PRECISIONS, BATCHSOLVE_CHOLESKY_POTRF, "potrf_batched") \
    ROUTINE(PRECISIONS, BATCHSOLVE_CHOLESKY_POTRS, "potrs_batched") \
    ROUTINE(PRECISIONS, BATCHSOLVE_CHOLESKY_POSV, "posv_batched")
BATCHSOLVE_DECLARE_FAMILY(BATCHSOLVE_CHOLESKY_ROUTINES)

// The generated kernels' side of Cholesky, CUDA only (core answers for the CPU itself).
// prepare_kernel, config == nullptr: the configuration the plain routines would resolve (tuning table,
// else default). config_problem and workspace_bytes as tuning.hpp's (config_problem needs no device;
// workspace_bytes with config == nullptr: the configuration the plain routines resolve).
#define BATCHSOLVE_CHOLESKY_PREPARE_KERNEL(T)                                                                  \
    KernelReport prepare_kernel(const std::string& routine, Uplo uplo, const BatchView<const T>& shape, int nrhs, \
                                const CholeskyConfig* config, Context& ctx)
#define BATCHSOLVE_CHOLESKY_CONFIG_PROBLEM(T)                                                                \
    std::string config_problem(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,        \
                               const CholeskyConfig& config)
#define BATCHSOLVE_CHOLESKY_WORKSPACE_BYTES(T)                                                              \
    std::size_t workspace_bytes(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,      \
                                const CholeskyConfig* config, Context& ctx)
#define BATCHSOLVE_CHOLESKY_KERNEL_ROUTINES(ROUTINE)                               \
    ROUTINE(PRECISIONS, BATCHSOLVE_CHOLESKY_PREPARE_KERNEL, "prepare_kernel")     \
    ROUTINE(PRECISIONS, BATCHSOLVE_CHOLESKY_CONFIG_PROBLEM, "config_problem")     \
    ROUTINE(PRECISIONS, BATCHSOLVE_CHOLESKY_WORKSPACE_BYTES, "workspace_bytes")
BATCHSOLVE_DECLARE_CUDA_FAMILY(BATCHSOLVE_CHOLESKY_KERNEL_ROUTINES)

// ---- layouts (layout.hpp) -------------------------------------------------------------------------
#define BATCHSOLVE_LAYOUT_CONVERT(T) \
    void convert_layout(const BatchView<const T>& src, const BatchView<T>& dst, Context& ctx)
#define BATCHSOLVE_LAYOUT_ROUTINES(ROUTINE) ROUTINE(PRECISIONS, BATCHSOLVE_LAYOUT_CONVERT, "convert_layout")
BATCHSOLVE_DECLARE_FAMILY(BATCHSOLVE_LAYOUT_ROUTINES)

// ---- the backends' plumbing ------------------------------------------------------------------------
namespace batchsolve {

namespace reference {
int thread_count();
}  // namespace reference

namespace cuda_backend {
bool compiled();
int device_count();  // 0 when no driver or no device (never throws)
// Compute capability of the context's GPU as one number (9.0: 90): the tuning tables' key.
int compute_capability(Context& ctx);
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
// tuning.hpp's warm_up (cases checked by core).
WarmUpReport warm_up(const std::vector<KernelCase>& cases, int threads, Context& ctx);
WarmUpReport warm_up_for_arch(const std::vector<KernelCase>& cases, int arch, int threads);
}  // namespace cuda_backend

}  // namespace batchsolve
