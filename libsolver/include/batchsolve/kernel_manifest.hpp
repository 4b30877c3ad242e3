// Replaying a kernel manifest: the generated kernels a run asked the kernel cache for, recorded with
// BATCHSOLVE_KERNEL_MANIFEST=FILE (one kernel spec per line), compiled again into the disk kernel
// cache ($BATCHSOLVE_CACHE_DIR, see the README) so that a later process's first calls find them
// there. What batchsolve-warmup --kernels runs; nothing is loaded or launched. And the same lines for
// the tuning tables' GEMM and large-Cholesky POTF2 kernels (table_kernel_lines), which is how
// batchsolve-warmup --families gemm,potf2 (and the prebuilt kernels of an install) compile them.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "batchsolve/types.hpp"

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
// The same for manifest lines in memory; refused lines are reported as "<origin>:<line number>: ...".
ManifestReport warm_up_lines(const std::vector<std::string>& lines, const ManifestOptions& options = {},
                             const std::string& origin = "lines");

// The generated kernels that the tuning tables of compute capability `arch` (e.g. 90) give a family
// whose kernels the small-Cholesky warm-up (warm_up, warm_up_for_arch) does not plan, as manifest lines,
// resolved by the family's launcher's own planner (so a warm-up compiles exactly what a call loads):
//   "gemm"   every kernel gemm/syrk/herk/syr2k/her2k/symm/hemm_vbatched run with the tables' tiles for
//            `precision`: every operand form, uniform batches (whole and ragged tiles) and variable-size
//            batches (the size bins) at the end of every size class (gemm lines);
//   "potf2"  the large Cholesky's fused POTF2 kernel, both triangles, for the blocking of each table row
//            with fused diagonal blocks (potf2 lines; s and d, none for c and z);
//   "triangular" the leaf kernels of trsm/trmm/potrf_vbatched (solve, multiply, invert, potrf panel;
//            both orientations) with the default TriangularConfig's blocking (triangular lines).
// The LDL^T kernels need no entry: they are compiled with the library (no NVRTC). arch 0: the
// architecture of CUDA device `device` (else no GPU is needed). Throws InvalidArgument for another
// family, NotCompiled in a CPU-only build.
std::vector<std::string> table_kernel_lines(const std::string& family, Precision precision, int arch, int device = 0);

}  // namespace batchsolve
