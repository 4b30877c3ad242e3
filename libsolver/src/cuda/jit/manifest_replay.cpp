// The CUDA backend of warm_up_manifest (core/manifest_backend.hpp): manifest lines through the
// planner's reader (tuned/kernel_plan.hpp) into the one kernel cache's disk fill (jit/kernel_cache.hpp).
#include <exception>

#include "../../core/manifest_backend.hpp"
#include "../tuned/kernel_plan.hpp"
#include "kernel_cache.hpp"

namespace batchsolve::cuda_backend {

std::string manifest_line_problem(const std::string& line) {
    try {
        (void)tuned::manifest_request(line);
        return "";
    } catch (const std::exception& e) {
        return e.what();
    }
}

ManifestFill fill_from_manifest(const std::vector<std::string>& lines, int device, int arch, int threads) {
    std::vector<jit::KernelRequest> requests;
    requests.reserve(lines.size());
    for (const std::string& line : lines) requests.push_back(tuned::manifest_request(line));
    const jit::DiskFill fill =
        arch > 0 ? jit::fill_disk_cache_for_arch(requests, arch, threads) : jit::fill_disk_cache(requests, device, threads);
    return ManifestFill{fill.already_on_disk, fill.compiled};
}

}  // namespace batchsolve::cuda_backend
