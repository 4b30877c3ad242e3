// The CUDA engine's entry points in a build without CUDA: a clear error instead of a missing symbol.
#include <cstring>

#include "engine.hpp"

namespace als {

std::unique_ptr<Engine> make_cuda_engine(const Csr&, const Csr&, const EngineSettings&, const Partition*) {
    throw Error("--backend cuda: this build of als was built without CUDA (configure with nvcc present)");
}
bool cuda_engine_available() { return false; }
int cuda_device_count() { return 0; }
std::uint64_t cuda_free_bytes(int) { return 0; }
void cuda_release_device(int) {}
std::uint64_t cuda_engine_bytes(const Csr&, const Csr&, const EngineSettings&, const Partition*) { return 0; }

std::shared_ptr<CudaWarmup> start_cuda_warmup(const EngineSettings&, std::int64_t, std::int64_t) { return nullptr; }
double cuda_warmup_seconds(const CudaWarmup&) { return 0; }
std::string cuda_warmup_summary(const CudaWarmup&) { return ""; }

void engine_copy_to_host(void* host, const void* engine_memory, std::size_t bytes, bool device_memory, void*) {
    if (device_memory) throw Error("engine_copy_to_host: device memory in a build without CUDA (a bug)");
    if (bytes) std::memcpy(host, engine_memory, bytes);
}
void engine_copy_from_host(void* engine_memory, const void* host, std::size_t bytes, bool device_memory, void*) {
    if (device_memory) throw Error("engine_copy_from_host: device memory in a build without CUDA (a bug)");
    if (bytes) std::memcpy(engine_memory, host, bytes);
}

}  // namespace als

// Without CUDA there is no NCCL either: multi-device training exchanges through host memory.
#include "exchange_nccl.hpp"
namespace als {
std::vector<std::unique_ptr<Exchange>> make_nccl_exchanges(const std::vector<int>&) { return {}; }
}  // namespace als
