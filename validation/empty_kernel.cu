// The empty kernel behind the tester's launch floor (measure_launch_floor_ms in gpu_cuda.cpp): a
// launch that does no memory traffic, so its event-timed duration is launch and completion latency.
#include <cuda_runtime.h>

namespace batchsolve::validation {

namespace {
__global__ void empty_kernel() {}
}  // namespace

// Launches it on `stream` and returns the launch's status (cudaGetLastError), for the caller to check.
cudaError_t launch_empty_kernel(int blocks, int threads_per_block, cudaStream_t stream) {
    empty_kernel<<<blocks, threads_per_block, 0, stream>>>();
    return cudaGetLastError();
}

}  // namespace batchsolve::validation
