// Kernel manifest lines of the large Cholesky's fused POTF2 kernel (the format of tuned/kernel_plan.hpp's
// manifests, replayed by batchsolve-warmup --kernels), and the spec and cache request the
// factorisation uses (cholesky_large.cu), so that a manifest or a warm-up of the table compiles exactly
// the kernel a call loads:
//   potf2 <precision s|d> <uplo lower|upper> <capacity> <ib> <threads> <strip columns|warp> <resident 0|1>
#pragma once

#include <string>

#include "../jit/kernel_cache.hpp"
#include "batchsolve/cholesky_large.hpp"
#include "codegen/large/potf2.hpp"

namespace batchsolve::cuda_backend {

// The POTF2 kernel a factorisation with the resolved `config` runs on its diagonal blocks when
// config.diagonal is fused (capacity from nb and recursion_depth, threads and residency by default).
codegen::large::Potf2Spec potf2_spec(Precision precision, Uplo uplo, const LargeCholeskyConfig& config);
std::string potf2_manifest_line(const codegen::large::Potf2Spec& spec);
// The cache request of the kernel (key, generator, shared-memory opt-in on `device` at load); the
// caller has checked potf2_family().can_implement(spec).
jit::KernelRequest potf2_request(const codegen::large::Potf2Spec& spec, int device);
// The cache request of a "potf2 ..." line; InvalidArgument naming the field of a malformed line or a
// kernel the family cannot implement.
jit::KernelRequest potf2_manifest_request(const std::string& line);

}  // namespace batchsolve::cuda_backend
