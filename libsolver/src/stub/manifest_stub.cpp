// Stands in for the CUDA backend of warm_up_manifest in a CPU-only build (no kernels to replay).
#include "../core/manifest_backend.hpp"

#include "batchsolve/types.hpp"

namespace batchsolve::cuda_backend {

std::string manifest_line_problem(const std::string&) { throw NotCompiled("warm_up_manifest", "cuda"); }

ManifestFill fill_from_manifest(const std::vector<std::string>&, int, int, int) {
    throw NotCompiled("warm_up_manifest", "cuda");
}

std::vector<std::string> table_manifest_lines(const std::string&, Precision, int, int) {
    throw NotCompiled("table_kernel_lines", "cuda");
}

}  // namespace batchsolve::cuda_backend
