// Kernel manifest lines of the variable-size GEMM family (the format of tuned/kernel_plan.hpp's
// manifests, replayed by batchsolve-warmup --kernels), so that a run's GEMM kernels can be compiled on
// every core, or for an architecture without a GPU, before the run:
//   gemm <precision> <op_a> <op_b> <part> <real_diagonal 0|1> <full_tiles 0|1> <problem_list 0|1> <configuration JSON>
// op: n, t, c, syl, syu, hel, heu (codegen/blas3/gemm.hpp's to_string); part: full, lower, upper.
#pragma once

#include <string>

#include "../jit/kernel_cache.hpp"
#include "codegen/blas3/gemm.hpp"

namespace batchsolve::cuda_backend {

std::string gemm_manifest_line(const codegen::blas3::GemmSpec& spec);
// The cache request of a "gemm ..." line, as the launcher loads the kernel (shared memory opt-in
// included); InvalidArgument naming the field of a malformed line or a configuration that cannot run.
jit::KernelRequest gemm_manifest_request(const std::string& line);

}  // namespace batchsolve::cuda_backend
