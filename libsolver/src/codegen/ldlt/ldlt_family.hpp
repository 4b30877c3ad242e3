// The LDL^T factorisation's own kernels behind codegen/family.hpp, as fixed kernels: they are
// compiled with the library (cuda/ldlt/ldlt.cu, one template per precision) instead of generated,
// and this family describes them to the launcher: which spec the compiled kernels implement, the
// threads and shared memory of a launch, the blocking they were compiled for, and their names.
//
// Why fixed and not generated: each runs once per diagonal leaf or panel of one large matrix (not
// once per matrix of a batch), so nothing is gained by specialising the text to a size, and the
// factorisation's time is in cuBLAS's TRSM and SYRKX/GEMM updates, not in these kernels; the leaf
// kernel's only free parameters (leaf order, threads) are compile-time constants of the recursion
// (core/ldlt_backend.hpp splits at multiples of the leaf order). Generating them would add an NVRTC
// compile to the first call and a second, run-time path to verify, for no configuration space.
// Pure C++ (no CUDA header).
#pragma once

#include <string>

#include "batchsolve/types.hpp"
#include "codegen/family.hpp"

namespace batchsolve::codegen::ldlt {

enum class LdltKernel {
    max_abs_lower,   // max |a_ij| of the lower triangle (the pivot threshold's scale)
    diagonal_leaf,   // LDL^T of one diagonal block of order <= leaf_order in shared memory
    keep_and_scale,  // after the panel's TRSM: keep W = L21 D1 for the update, leave L21 = W D1^-1
    scale_rows       // the solve's diagonal step, b_i /= d_i
};
const char* to_string(LdltKernel k);

// The blocking the kernels are compiled for.
struct LdltConfig {
    int leaf_order = 0;  // largest diagonal block diagonal_leaf factors
    int threads = 0;     // threads per block of every kernel
};

struct LdltKernelSpec {
    LdltKernel kernel = LdltKernel::diagonal_leaf;
    Precision precision = Precision::d;
    bool hermitian = false;  // conjugated updates (complex Hermitian); a real matrix is symmetric
    LdltConfig config;
};

class LdltFamily final : public FixedKernelFamily<LdltKernelSpec, LdltConfig> {
public:
    // `compiled`: the blocking the CUDA backend's kernels were compiled with.
    explicit LdltFamily(LdltConfig compiled) : compiled_(compiled) {}
    const char* area() const override { return "ldlt"; }
    const char* name() const override { return "fixed"; }
    // The compiled kernels run their own blocking only: any other leaf_order or threads is refused.
    std::string can_implement(const LdltKernelSpec& spec) const override;
    KernelResources resources(const LdltKernelSpec& spec) const override;
    LdltConfig default_config(const LdltKernelSpec&) const override { return compiled_; }
    // The kernel template's name and instantiation, e.g. "ldlt_diagonal_leaf_z_hermitian".
    std::string kernel_name(const LdltKernelSpec& spec) const override;

private:
    LdltConfig compiled_;
};

// The family of the kernels this library was built with; defined by the CUDA backend
// (cuda/ldlt/ldlt.cu), which compiles them and knows their blocking.
const LdltFamily& ldlt_family();

}  // namespace batchsolve::codegen::ldlt
