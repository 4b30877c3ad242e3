// The few CUDA runtime services the tester needs beyond the library (events, raw copies at offsets,
// an L2-evicting read, device properties, copy bandwidth, launch floor), behind a header without CUDA types: gpu_cuda.cpp
// (with empty_kernel.cu) implements them with the CUDA runtime, gpu_none.cpp stands in (throwing) when
// the CUDA backend is not built.
#pragma once

#include <cstddef>
#include <string>

namespace batchsolve::validation {

struct GpuProperties {
    std::string name;
    int sm_count = 0;
    int max_threads_per_sm = 0;
    int cc_major = 0, cc_minor = 0;
    std::size_t l2_bytes = 0;
    std::size_t total_bytes = 0;
    int runtime_version = 0;  // CUDA's encoding: 13000 = 13.0
    int driver_version = 0;
};

// Makes `device` current for the calling thread and describes it.
GpuProperties gpu_properties(int device);

// Device memory that is free right now.
std::size_t gpu_free_bytes();

// Raw copies, ordered on `stream` (a cudaStream_t: the library context's stream). The *_async ones
// return at once; upload and download return when the copy (and all earlier work) is done.
void device_copy_async(void* dst, const void* src, std::size_t bytes, void* stream);
void device_fill_async(void* dst, unsigned char value, std::size_t bytes, void* stream);
void upload(void* device_dst, const void* host_src, std::size_t bytes, void* stream);
void download(void* host_dst, const void* device_src, std::size_t bytes, void* stream);
// Reads `bytes` (a multiple of 16) at the 16-byte aligned `buffer` on `stream`, 4 blocks per SM: sized
// twice the L2, it evicts everything else and leaves only clean lines (l2_read.cu says why not a
// write). The buffer must hold zeros (cudaMemset).
void device_read_async(void* buffer, std::size_t bytes, void* stream);

// Elapsed time between two CUDA events recorded on one stream.
class EventTimer {
public:
    explicit EventTimer(void* stream);
    ~EventTimer();
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;
    void start();
    void stop();
    double elapsed_ms();  // waits for the stop event

private:
    void* stream_;
    void* start_ = nullptr;
    void* stop_ = nullptr;
};

// Device-to-device copy bandwidth in bytes per second, counting bytes read plus bytes written: the
// median over `repeats` copies (after one warm-up) of `bytes` between two fresh allocations.
double measure_copy_bandwidth(std::size_t bytes, int repeats, void* stream);

// The launch floor in milliseconds: the median over `samples` (after `warmups` untimed ones) of the
// event-timed duration of ONE launch of an empty kernel (no memory traffic; `blocks` blocks of
// `threads_per_block` threads) on `stream`, timed as the tester times a call (start event, launch,
// stop event, wait for it), the GPU idle before each. No call timed this way can take less.
double measure_launch_floor_ms(int blocks, int threads_per_block, int warmups, int samples, void* stream);

}  // namespace batchsolve::validation
