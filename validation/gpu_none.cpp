// Stands in for gpu_cuda.cpp when the CUDA backend is not built: the tester never calls these
// (Context::cuda_available() is false), and a call by mistake throws NotCompiled naming it.
#include "batchsolve/types.hpp"
#include "gpu.hpp"

namespace batchsolve::validation {

namespace {
[[noreturn]] void missing(const char* what) { throw NotCompiled(std::string("tester ") + what, "cuda"); }
}  // namespace

GpuProperties gpu_properties(int) { missing("gpu_properties"); }
std::size_t gpu_free_bytes() { missing("gpu_free_bytes"); }
void device_copy_async(void*, const void*, std::size_t, void*) { missing("device_copy_async"); }
void device_fill_async(void*, unsigned char, std::size_t, void*) { missing("device_fill_async"); }
void device_read_async(void*, std::size_t, void*) { missing("device_read_async"); }
void upload(void*, const void*, std::size_t, void*) { missing("upload"); }
void download(void*, const void*, std::size_t, void*) { missing("download"); }
EventTimer::EventTimer(void* stream) : stream_(stream) { missing("EventTimer"); }
EventTimer::~EventTimer() = default;
void EventTimer::start() { missing("EventTimer::start"); }
void EventTimer::stop() { missing("EventTimer::stop"); }
double EventTimer::elapsed_ms() { missing("EventTimer::elapsed_ms"); }
double measure_copy_bandwidth(std::size_t, int, void*) { missing("measure_copy_bandwidth"); }
double measure_launch_floor_ms(int, int, int, int, void*) { missing("measure_launch_floor_ms"); }

}  // namespace batchsolve::validation
