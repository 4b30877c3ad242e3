// Replaying a kernel manifest: the generated kernels a run asked the kernel cache for, recorded with
// BATCHSOLVE_KERNEL_MANIFEST=FILE (one kernel spec per line), compiled again into the disk kernel
// cache ($BATCHSOLVE_CACHE_DIR, see the README) so that a later process's first calls find them
// there. What batchsolve-warmup --kernels runs; nothing is loaded or launched.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace batchsolve {

struct ManifestOptions {
    int device = 0;           // the CUDA device whose architecture the kernels are for
    int arch = 0;             // > 0: compile for this compute capability (e.g. 90) without a device
    int threads = 1;          // compile threads
    bool check_only = false;  // read and check the lines only: no compilation, no GPU needed
    // Called after each batch of kernels is compiled (done, total batches); may be empty.
    std::function<void(std::size_t, std::size_t)> progress;
};

struct ManifestReport {
    std::size_t kernels = 0;            // distinct kernel specs the library accepts (blank and repeated lines skipped)
    std::vector<std::string> refused;   // "<file>:<line>: <reason>" for every line that is not one
    int already_cached = 0;             // found in the disk cache
    int compiled = 0;                   // generated and compiled now
    double seconds = 0;
};

// Reads the manifest at `path` and, unless options.check_only, compiles its kernels into the disk
// cache. Throws Error when the file cannot be read, NotCompiled in a CPU-only build, and Error when
// the disk cache is disabled; refused lines are reported, not thrown.
ManifestReport warm_up_manifest(const std::string& path, const ManifestOptions& options = {});

}  // namespace batchsolve
