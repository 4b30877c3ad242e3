// The description of the LDL^T factorisation's fixed kernels (see ldlt_family.hpp).
#include "codegen/ldlt/ldlt_family.hpp"

#include "codegen/common.hpp"

namespace batchsolve::codegen::ldlt {

const char* to_string(LdltKernel k) {
    switch (k) {
        case LdltKernel::max_abs_lower: return "max_abs_lower";
        case LdltKernel::diagonal_leaf: return "diagonal_leaf";
        case LdltKernel::keep_and_scale: return "keep_and_scale";
        case LdltKernel::scale_rows: return "scale_rows";
    }
    return "?";
}

std::string LdltFamily::can_implement(const LdltKernelSpec& spec) const {
    if (spec.config.leaf_order != compiled_.leaf_order)
        return "leaf_order: the compiled kernels factor leaves of " + std::to_string(compiled_.leaf_order) + " (got " +
               std::to_string(spec.config.leaf_order) + ")";
    if (spec.config.threads != compiled_.threads)
        return "threads: the compiled kernels run " + std::to_string(compiled_.threads) + " threads per block (got " +
               std::to_string(spec.config.threads) + ")";
    if (spec.hermitian && !is_complex(spec.precision))
        return "hermitian: a real matrix is symmetric (hermitian = false)";
    return "";
}

KernelResources LdltFamily::resources(const LdltKernelSpec& spec) const {
    KernelResources r;
    r.threads_per_block = spec.config.threads;
    // The leaf in shared memory with an odd column stride (leaf_order + 1: a column walk and a row
    // walk hit different banks); the other kernels use none dynamically.
    if (spec.kernel == LdltKernel::diagonal_leaf)
        r.shared_bytes = std::size_t(spec.config.leaf_order) * std::size_t(spec.config.leaf_order + 1) *
                         std::size_t(element_bytes(spec.precision));
    return r;
}

std::string LdltFamily::kernel_name(const LdltKernelSpec& spec) const {
    std::string name = std::string("ldlt_") + to_string(spec.kernel) + "_" + precision_letter(spec.precision);
    if (spec.kernel == LdltKernel::diagonal_leaf && spec.hermitian) name += "_hermitian";
    return name;
}

}  // namespace batchsolve::codegen::ldlt
