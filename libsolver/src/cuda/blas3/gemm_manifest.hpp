// Kernel manifest lines of the variable-size GEMM family (the format of tuned/kernel_plan.hpp's
// manifests, replayed by batchsolve-warmup --kernels), so that a run's GEMM kernels can be compiled on
// every core, or for an architecture without a GPU, before the run:
//   gemm <precision> <op_a> <op_b> <part> <real_diagonal 0|1> <full_tiles 0|1> <problem_list 0|1> <configuration JSON>
// (a fused kernel of the binned dispatch: its paths' configurations as one JSON array, problem_list 1)
// op: n, t, c, syl, syu, hel, heu (codegen/blas3/gemm.hpp's to_string); part: full, lower, upper.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "../jit/kernel_cache.hpp"
#include "codegen/blas3/gemm.hpp"

namespace batchsolve::cuda_backend {

// Problems up to this max(m_i, n_i) share the first size bin of the binned dispatch; the bins above
// it double in size up to the largest problem. Below it one more launch (2-4 us) costs more than a
// better tile can save: at x = 512 the problems with max(m, n) <= 128 hold under 1 % of the flops.
inline constexpr int kGemmFirstBinSize = 128;

// The kernels one gemm_vbatched call launches, resolved as the launcher resolves them (blas3.cu) and
// nothing compiled: the size bins' upper bounds (one bin: no binned dispatch), the kernels in launch
// order and each one's bin. What the launcher runs and what a warm-up of the tables compiles.
struct GemmPlan {
    std::vector<int> bin_hi;
    std::vector<codegen::blas3::GemmSpec> specs;
    std::vector<std::size_t> bin_of;
    // How the bins run (GemmConfig::bin_launch, bin_order of the largest bin's entry; 0 with one bin).
    // bin_launch 2: specs holds the one fused kernel (GemmSpec::fused), path_bin each path's bin; where
    // the bins' kernels cannot be fused the plan is bin_launch 0's.
    int bin_launch = 0, bin_order = 0;
    std::vector<std::size_t> path_bin;
};
// `spec` holds the call's precision, operands, part and real_diagonal; constant_sizes: m, n and k are
// constants of the call (their limits); `config`: the caller's tile, nullptr for the tables'.
GemmPlan plan_gemm(const codegen::blas3::GemmSpec& spec, int max_m, int max_n, int max_k, bool constant_sizes,
                   int m_limit, int n_limit, int k_limit, const GemmConfig* config, int arch);

std::string gemm_manifest_line(const codegen::blas3::GemmSpec& spec);
// The cache request of a "gemm ..." line, as the launcher loads the kernel (shared memory opt-in
// included); InvalidArgument naming the field of a malformed line or a configuration that cannot run.
jit::KernelRequest gemm_manifest_request(const std::string& line);

}  // namespace batchsolve::cuda_backend
