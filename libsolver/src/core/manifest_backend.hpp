// The CUDA backend's side of warm_up_manifest (kernel_manifest.hpp): a manifest line turned into a
// kernel request of the one kernel cache, and the disk fill. core/kernel_manifest.cpp reads the file;
// src/cuda/jit/manifest_replay.cpp implements these, src/stub/manifest_stub.cpp throws NotCompiled.
#pragma once

#include <string>
#include <vector>

#include "batchsolve/types.hpp"

namespace batchsolve::cuda_backend {

// "" when `line` is a kernel spec the planner accepts, else the reason it is refused.
std::string manifest_line_problem(const std::string& line);

struct ManifestFill {
    int already_cached = 0;
    int compiled = 0;
};
// The kernels of `lines` (each accepted by manifest_line_problem) into the disk cache, for `device`
// or, arch > 0, for that compute capability without one.
ManifestFill fill_from_manifest(const std::vector<std::string>& lines, int device, int arch, int threads);

// table_kernel_lines of kernel_manifest.hpp.
std::vector<std::string> table_manifest_lines(const std::string& family, Precision precision, int arch, int device);

}  // namespace batchsolve::cuda_backend
