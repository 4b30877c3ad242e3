// warm_up_manifest and warm_up_lines (kernel_manifest.hpp): read the manifest, skip blank and repeated
// lines, report the lines the planner refuses with their numbers, and fill the disk cache in batches
// through the CUDA backend (the progress callback advances per batch); table_kernel_lines' checks.
#include "batchsolve/kernel_manifest.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>

#include "batchsolve/types.hpp"
#include "checks.hpp"
#include "manifest_backend.hpp"

namespace batchsolve {

ManifestReport warm_up_manifest(const std::string& path, const ManifestOptions& options) {
    if (options.threads < 1) throw InvalidArgument("warm_up_manifest", "options.threads", ">= 1");
    std::ifstream in(path);
    if (!in) throw Error("warm_up_manifest: " + path + ": cannot read");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return warm_up_lines(lines, options, path);
}

std::vector<std::string> table_kernel_lines(const std::string& family, Precision precision, int arch, int device) {
    checks::require(arch == 0 || arch >= 10, "table_kernel_lines", "arch",
                    "0 (device's) or a compute capability such as 90 (got " + std::to_string(arch) + ")");
    return cuda_backend::table_manifest_lines(family, precision, arch, device);
}

ManifestReport warm_up_lines(const std::vector<std::string>& lines, const ManifestOptions& options, const std::string& origin) {
    if (options.threads < 1) throw InvalidArgument("warm_up_lines", "options.threads", ">= 1");
    ManifestReport report;
    std::set<std::string> seen;
    std::vector<std::string> accepted;
    int number = 0;
    for (const std::string& line : lines) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        if (!seen.insert(line).second) continue;
        const std::string problem = cuda_backend::manifest_line_problem(line);  // NotCompiled without CUDA
        if (problem.empty()) accepted.push_back(line);
        else report.refused.push_back(origin + ":" + std::to_string(number) + ": " + problem);
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
