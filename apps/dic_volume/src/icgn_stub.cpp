// Stand-in for icgn_cuda.cu in builds without CUDA: asking for the GPU engine is a clear error.
#include "icgn.hpp"

#include <future>

namespace dvc {

std::unique_ptr<IcgnEngine> make_cuda_icgn_engine(const Volume&, const Volume&, const IcgnSettings&, batchsolve::Context&,
                                                  IcgnTimings&) {
    throw Error("the GPU IC-GN engine: this dvc was built without CUDA (configure with BATCHSOLVE_CUDA=ON)");
}

}  // namespace dvc

// The GPU field strain without CUDA.
#include "strain.hpp"

namespace dvc {
FieldStrain strain_from_field_cuda(const CorrelationResult&, double) {
    throw Error("the GPU field strain: this dvc was built without CUDA (configure with BATCHSOLVE_CUDA=ON)");
}
}  // namespace dvc

// The GPU stages' test entry points (device_checks.hpp) without CUDA.
#include "device_checks.hpp"

namespace dvc {
namespace {
[[noreturn]] void no_cuda() { throw Error("the GPU volume stages: this dvc was built without CUDA"); }
}  // namespace
bool gpu_stages_available() { return false; }
Volume gpu_stage_prefilter(const Volume&, int) { no_cuda(); }
Volume gpu_stage_smooth(const Volume&, double) { no_cuda(); }
std::array<Volume, 3> gpu_stage_gradients(const Volume&, bool) { no_cuda(); }
Volume gpu_stage_downsample(const Volume&) { no_cuda(); }
std::vector<std::int32_t> gpu_stage_shift_search(const Volume&, const Volume&, const ShiftSearch&) { no_cuda(); }
}  // namespace dvc

namespace dvc {
std::future<void> plan_gpu_shift_searches(int, int, int, std::size_t) {
    std::promise<void> done;
    done.set_value();
    return done.get_future();
}
struct GpuWarmUp::State {};
GpuWarmUp::GpuWarmUp(std::size_t) : state_(nullptr) {}
GpuWarmUp::~GpuWarmUp() = default;
void GpuWarmUp::wait() {}
struct GpuRelease::State {};
void GpuRelease::start() {}
void GpuRelease::join() {}
}  // namespace dvc
