// Kernel manifest lines of the triangular leaf family (the format of tuned/kernel_plan.hpp's manifests,
// replayed by batchsolve-warmup --kernels and --families triangular), so that a prebuilt folder holds
// the kernels trsm_vbatched, trmm_vbatched and potrf_vbatched load:
//   triangular <kind solve|multiply|invert|potrf_panel> <precision s|d|c|z> <lower|upper> <columns_per_thread> <warps_per_block>
#pragma once

#include <string>
#include <vector>

#include "../jit/kernel_cache.hpp"
#include "codegen/triangular/triangular.hpp"

namespace batchsolve::cuda_backend {

std::string triangular_manifest_line(const codegen::triangular::TriangularKernelSpec& spec);
// The cache request of a "triangular ..." line; InvalidArgument naming the field of a malformed line
// or of a kernel the family cannot implement.
jit::KernelRequest triangular_manifest_request(const std::string& line);
// The lines of every kernel kind, both orientations, with the default TriangularConfig's blocking
// (what the routines run when the caller leaves the configuration alone), one per kernel name.
std::vector<std::string> triangular_table_lines(Precision precision);

}  // namespace batchsolve::cuda_backend
