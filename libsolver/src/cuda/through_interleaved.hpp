// Column-major (strided or pointer-array) batches solved by the interleaved kernels: the uplo
// triangle (and B) converted into an interleaved workspace, the interleaved kernel, and the written
// parts converted back, all on the context's stream. The tuning table selects this path
// (CholeskyConfig::through_interleaved) for the sizes where the interleaved kernel is fast enough to
// pay for the two extra passes over the triangle (the table's measurements time them as part of the
// call).
#pragma once

#include "batchsolve/batch.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/tuning.hpp"
#include "tuned/interleaved_cholesky.hpp"

namespace batchsolve::cuda_backend {

// The interleaved workspace is at most this large; bigger batches go through it in slices. Large
// enough that a slice still fills the GPU (n = 128, double: 7 800 matrices, ~60 per SM of an H100),
// small enough never to double the memory of a huge batch.
inline constexpr std::size_t through_interleaved_workspace_bytes = std::size_t(1) << 31;

// Matrices per slice for order n, nrhs right-hand sides (0 for potrf) and element size.
int through_interleaved_slice(int n, int nrhs, std::size_t element_bytes, int count);
// Bytes of Context::workspace a call takes with slices of `slice` matrices: A's slice and, with
// right-hand sides, B's, each rounded up to detail::Carve's 256-byte alignment (as the call carves it).
inline std::size_t through_interleaved_workspace_bytes_of(int n, int nrhs, std::size_t element_bytes, int slice) {
    auto carved = [](std::size_t bytes) { return (bytes + 255) / 256 * 256; };
    const std::size_t a = carved(std::size_t(slice) * n * n * element_bytes);
    return nrhs > 0 ? a + carved(std::size_t(slice) * n * nrhs * element_bytes) : a;
}

// `config` is the interleaved kernel's configuration with through_interleaved set; a view that is
// not column-major or pointer-array is an InvalidArgument naming "a.layout".
template <class T>
void potrf_through_interleaved(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig& config,
                               Context& ctx);
template <class T>
void potrs_through_interleaved(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b,
                               const CholeskyConfig& config, Context& ctx);
template <class T>
void posv_through_interleaved(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info,
                              const CholeskyConfig& config, Context& ctx);

// The interleaved kernel such a call runs (compiled or loaded from the cache), for prepare_kernel.
template <class T>
tuned::InterleavedKernelReport prepare_through_interleaved(tuned::Routine routine, Uplo uplo, int n, int nrhs,
                                                           int count, const CholeskyConfig& config, Context& ctx);

}  // namespace batchsolve::cuda_backend
