// The tester's CUDA runtime services (gpu.hpp) on a real device; every call's status is checked.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "batchsolve/types.hpp"
#include "gpu.hpp"

namespace batchsolve::validation {

namespace {
void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw CudaError(call, int(status), cudaGetErrorString(status));
}
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }
double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size();
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}
}  // namespace

// Defined in empty_kernel.cu: this file is compiled as plain C++, the kernel needs nvcc.
cudaError_t launch_empty_kernel(int blocks, int threads_per_block, cudaStream_t stream);
// Defined in l2_read.cu.
cudaError_t launch_read_words(void* words, std::size_t count, int blocks, int threads, cudaStream_t stream);

GpuProperties gpu_properties(int device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    GpuProperties p;
    p.name = prop.name;
    p.sm_count = prop.multiProcessorCount;
    p.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    p.cc_major = prop.major, p.cc_minor = prop.minor;
    p.l2_bytes = std::size_t(prop.l2CacheSize);
    p.total_bytes = prop.totalGlobalMem;
    check(cudaRuntimeGetVersion(&p.runtime_version), "cudaRuntimeGetVersion");
    check(cudaDriverGetVersion(&p.driver_version), "cudaDriverGetVersion");
    return p;
}

std::size_t gpu_free_bytes() {
    std::size_t free_bytes = 0, total = 0;
    check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    return free_bytes;
}

void device_copy_async(void* dst, const void* src, std::size_t bytes, void* stream) {
    if (bytes == 0) return;
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, as_stream(stream)), "cudaMemcpyAsync(D2D)");
}

void device_fill_async(void* dst, unsigned char value, std::size_t bytes, void* stream) {
    if (bytes == 0) return;
    check(cudaMemsetAsync(dst, value, bytes, as_stream(stream)), "cudaMemsetAsync");
}

// Ordered on the stream and waited for: a plain cudaMemcpy runs on the legacy default stream, which
// a non-blocking context stream does not wait for (and a pageable upload may return early).
void device_read_async(void* buffer, std::size_t bytes, void* stream) {
    if (bytes == 0) return;
    if (bytes % 16 != 0 || reinterpret_cast<std::uintptr_t>(buffer) % 16 != 0)
        throw InvalidArgument("device_read_async", "bytes", "buffer and size must be multiples of 16 bytes");
    int device = 0, sms = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    constexpr int kBlocksPerSm = 4, kThreads = 512;  // enough loads in flight to run at copy bandwidth
    check(launch_read_words(buffer, bytes / 16, kBlocksPerSm * sms, kThreads, as_stream(stream)), "read_words<<<>>>");
}

void upload(void* device_dst, const void* host_src, std::size_t bytes, void* stream) {
    if (bytes == 0) return;
    check(cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice, as_stream(stream)),
          "cudaMemcpyAsync(H2D)");
    check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
}

void download(void* host_dst, const void* device_src, std::size_t bytes, void* stream) {
    if (bytes == 0) return;
    check(cudaMemcpyAsync(host_dst, device_src, bytes, cudaMemcpyDeviceToHost, as_stream(stream)),
          "cudaMemcpyAsync(D2H)");
    check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
}

EventTimer::EventTimer(void* stream) : stream_(stream) {
    cudaEvent_t a = nullptr, b = nullptr;
    check(cudaEventCreate(&a), "cudaEventCreate");
    start_ = a;
    check(cudaEventCreate(&b), "cudaEventCreate");
    stop_ = b;
}

EventTimer::~EventTimer() {
    if (start_ != nullptr) cudaEventDestroy(as_event(start_));
    if (stop_ != nullptr) cudaEventDestroy(as_event(stop_));
}

void EventTimer::start() { check(cudaEventRecord(as_event(start_), as_stream(stream_)), "cudaEventRecord"); }
void EventTimer::stop() { check(cudaEventRecord(as_event(stop_), as_stream(stream_)), "cudaEventRecord"); }

double EventTimer::elapsed_ms() {
    check(cudaEventSynchronize(as_event(stop_)), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, as_event(start_), as_event(stop_)), "cudaEventElapsedTime");
    return ms;
}

double measure_copy_bandwidth(std::size_t bytes, int repeats, void* stream) {
    void* src = nullptr;
    void* dst = nullptr;
    check(cudaMalloc(&src, bytes), "cudaMalloc(bandwidth source)");
    cudaError_t status = cudaMalloc(&dst, bytes);
    if (status != cudaSuccess) {
        cudaFree(src);
        check(status, "cudaMalloc(bandwidth destination)");
    }
    std::vector<double> ms;
    try {
        device_fill_async(src, 0x3c, bytes, stream);
        EventTimer timer(stream);
        for (int r = 0; r <= repeats; ++r) {  // r == 0 is the warm-up
            timer.start();
            device_copy_async(dst, src, bytes, stream);
            timer.stop();
            const double t = timer.elapsed_ms();
            if (r > 0) ms.push_back(t);
        }
    } catch (...) {
        cudaFree(src), cudaFree(dst);
        throw;
    }
    cudaFree(src), cudaFree(dst);
    return 2.0 * double(bytes) / (median_of(ms) * 1e-3);
}

// Timed as CallTimer times a library call (events around the launch, then wait for the stop event),
// with the stream drained first so that no queued work hides the launch latency.
double measure_launch_floor_ms(int blocks, int threads_per_block, int warmups, int samples, void* stream) {
    const char* routine = "measure_launch_floor_ms";
    if (blocks < 1) throw InvalidArgument(routine, "blocks", "must be >= 1, got " + std::to_string(blocks));
    if (threads_per_block < 1)
        throw InvalidArgument(routine, "threads_per_block", "must be >= 1, got " + std::to_string(threads_per_block));
    if (warmups < 0) throw InvalidArgument(routine, "warmups", "must be >= 0, got " + std::to_string(warmups));
    if (samples < 1) throw InvalidArgument(routine, "samples", "must be >= 1, got " + std::to_string(samples));
    EventTimer timer(stream);
    std::vector<double> ms;
    ms.reserve(std::size_t(samples));
    for (int r = 0; r < warmups + samples; ++r) {
        check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");  // the GPU idle
        timer.start();
        check(launch_empty_kernel(blocks, threads_per_block, as_stream(stream)), "empty_kernel<<<>>>");
        timer.stop();
        const double t = timer.elapsed_ms();
        if (r >= warmups) ms.push_back(t);
    }
    return median_of(ms);
}

}  // namespace batchsolve::validation
