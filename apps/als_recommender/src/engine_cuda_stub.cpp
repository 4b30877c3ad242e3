// The CUDA engine's entry points in a build without CUDA: a clear error instead of a missing symbol.
#include "engine.hpp"

namespace als {

std::unique_ptr<Engine> make_cuda_engine(const Csr&, const Csr&, const EngineSettings&) {
    throw Error("--backend cuda: this build of als was built without CUDA (configure with nvcc present)");
}
bool cuda_engine_available() { return false; }
std::uint64_t cuda_engine_bytes(const Csr&, const Csr&, const EngineSettings&) { return 0; }

}  // namespace als
