// warm_up_manifest (kernel_manifest.hpp): reads the manifest, skips blank and repeated lines,
// reports the lines the planner refuses with their numbers, and fills the disk cache in batches
// through the CUDA backend (the progress callback advances per batch).
#include "batchsolve/kernel_manifest.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>

#include "batchsolve/types.hpp"
#include "manifest_backend.hpp"

namespace batchsolve {

ManifestReport warm_up_manifest(const std::string& path, const ManifestOptions& options) {
    if (options.threads < 1) throw InvalidArgument("warm_up_manifest", "options.threads", ">= 1");
    std::ifstream in(path);
    if (!in) throw Error("warm_up_manifest: " + path + ": cannot read");
    ManifestReport report;
    std::vector<std::string> seen, accepted;
    int number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        if (std::find(seen.begin(), seen.end(), line) != seen.end()) continue;
        seen.push_back(line);
        const std::string problem = cuda_backend::manifest_line_problem(line);  // NotCompiled without CUDA
        if (problem.empty()) accepted.push_back(line);
        else report.refused.push_back(path + ":" + std::to_string(number) + ": " + problem);
    }
    report.kernels = accepted.size();
    if (options.check_only) return report;

    const auto start = std::chrono::steady_clock::now();
    // Batches of a few kernels per thread: the threads stay busy within one, and the caller sees progress.
    const std::size_t batch = std::size_t(options.threads) * 4;
    const std::size_t batches = (accepted.size() + batch - 1) / batch;
    for (std::size_t at = 0, done = 0; at < accepted.size(); at += batch) {
        const std::vector<std::string> part(accepted.begin() + at, accepted.begin() + std::min(accepted.size(), at + batch));
        const cuda_backend::ManifestFill fill =
            cuda_backend::fill_from_manifest(part, options.device, options.arch, options.threads);
        report.already_cached += fill.already_cached, report.compiled += fill.compiled;
        if (options.progress) options.progress(++done, batches);
    }
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace batchsolve
