// The Cholesky generators answering codegen::GeneratorFamily (see families.hpp): each member
// forwards to the family's own checks, shape, defaults and text, so the text is theirs unchanged.
#include "codegen/cholesky/families.hpp"

#include "codegen/cholesky/cooperative.hpp"
#include "codegen/cholesky/fused.hpp"
#include "codegen/cholesky/shared_memory.hpp"
#include "codegen/cholesky/staged.hpp"

namespace batchsolve::codegen::cholesky {

namespace {

// Warps per 32 matrices of the cooperative default: the middle of coop_warp_counts.
constexpr int default_coop_warps = 4;

// Staged default (no table entry): the most frequent staged winner of libsolver/tuning/sm90.json
// (batch 16384): panels of 8 columns, 4 warps, one matrix per block, the FP64 tensor cores for d
// potrf and posv (32 entries each); potrs stages the factor only (no panel width).
constexpr int default_staged_nb = 8;
constexpr int default_staged_warps = 4;

class OneThreadFamily final : public InterleavedFamily {
public:
    const char* area() const override { return "cholesky"; }
    const char* name() const override { return "interleaved"; }
    std::string can_implement(const InterleavedKernelSpec& spec) const override {
        if (is_cooperative(spec)) return "warps_per_matrix: 0 for the one-thread-per-matrix kernels";
        return interleaved_spec_problem(spec);
    }
    KernelResources resources(const InterleavedKernelSpec& spec) const override {
        return {0, spec.config.threads_per_block};
    }
    CholeskyConfig default_config(const InterleavedKernelSpec& spec) const override {
        return default_interleaved_config(spec.routine, spec.precision, spec.n);
    }
    std::string kernel_name(const InterleavedKernelSpec& spec) const override { return interleaved_kernel_name(spec); }
    KernelSource generate(const InterleavedKernelSpec& spec) const override { return generate_interleaved_kernel(spec); }
};

class CooperativeFamily final : public InterleavedFamily {
public:
    const char* area() const override { return "cholesky"; }
    const char* name() const override { return "cooperative"; }
    std::string can_implement(const InterleavedKernelSpec& spec) const override {
        if (!is_cooperative(spec)) return "warps_per_matrix: 2, 4 or 8 for the cooperative kernels";
        return interleaved_coop_spec_problem(spec);
    }
    KernelResources resources(const InterleavedKernelSpec& spec) const override {
        return {coop_shared_bytes(spec), 32 * spec.config.warps_per_matrix};
    }
    CholeskyConfig default_config(const InterleavedKernelSpec& spec) const override {
        CholeskyConfig c;
        c.warps_per_matrix = default_coop_warps;
        return resolve_interleaved_config(spec.routine, spec.precision, spec.n, c);
    }
    std::string kernel_name(const InterleavedKernelSpec& spec) const override { return interleaved_kernel_name(spec); }
    KernelSource generate(const InterleavedKernelSpec& spec) const override { return generate_interleaved_coop_kernel(spec); }
};

// What the three column-major families share: one spec type, one shape (column_major_shape gives the
// block and its shared memory), one name and one generator entry point.
class ColumnMajorBase : public ColumnMajorFamily {
public:
    const char* area() const override { return "cholesky"; }
    KernelResources resources(const ColumnMajorSpec& spec) const override {
        const ColumnMajorShape shape = column_major_shape(spec);
        return {shape.shared_bytes, shape.block_threads};
    }
    std::string kernel_name(const ColumnMajorSpec& spec) const override { return column_major_kernel_name(spec); }
    KernelSource generate(const ColumnMajorSpec& spec) const override { return generate_column_major_kernel(spec); }
};

class RegistersOrStagedFamily final : public ColumnMajorBase {
public:
    explicit RegistersOrStagedFamily(bool staged) : staged_(staged) {}
    const char* name() const override { return staged_ ? "staged" : "column_major"; }
    std::string can_implement(const ColumnMajorSpec& spec) const override {
        if (spec.config.staged != staged_)
            return std::string("staged: ") + (staged_ ? "true" : "false") + " for the " + name() + " kernels";
        if (is_shared_memory_config(spec.config))
            return "looking: not left for the staged kernels (looking = left selects the shared_memory family)";
        if (is_fused_config(spec.config))
            return "warps_per_matrix: 1..32 for the staged kernels (0 selects the fused family)";
        return column_major_spec_problem(spec);
    }
    CholeskyConfig default_config(const ColumnMajorSpec& spec) const override {
        if (!staged_) return default_column_major_config(spec.routine, spec.precision, spec.n, spec.nrhs);
        CholeskyConfig c;
        c.staged = true;
        c.nb = spec.routine == ColumnMajorRoutine::potrs ? 0 : default_staged_nb;
        c.warps_per_matrix = default_staged_warps;
        c.matrices_per_block = 1;
        c.tensor_cores = spec.precision == Precision::d && spec.routine != ColumnMajorRoutine::potrs;
        return c;
    }

private:
    bool staged_;
};

// Whole matrices in shared memory (shared_memory.hpp): staged with looking = left.
class SharedMemoryFamily final : public ColumnMajorBase {
public:
    const char* name() const override { return "shared_memory"; }
    std::string can_implement(const ColumnMajorSpec& spec) const override {
        if (!is_shared_memory_config(spec.config))
            return "staged: true with looking = left for the shared_memory kernels";
        return column_major_spec_problem(spec);
    }
    CholeskyConfig default_config(const ColumnMajorSpec& spec) const override {
        return shared_memory_default_config(spec.routine, spec.precision, spec.n);
    }
};

// Column-major matrices through the interleaved kernels in shared memory (fused.hpp): staged with
// warps_per_matrix = 0.
class FusedFamily final : public ColumnMajorBase {
public:
    const char* name() const override { return "fused"; }
    std::string can_implement(const ColumnMajorSpec& spec) const override {
        if (!is_fused_config(spec.config)) return "staged: true with warps_per_matrix = 0 for the fused kernels";
        return column_major_spec_problem(spec);
    }
    CholeskyConfig default_config(const ColumnMajorSpec& spec) const override {
        return fused_default_config(spec.routine, spec.precision, spec.n);
    }
};

}  // namespace

const InterleavedFamily& one_thread_family() {
    static const OneThreadFamily family;
    return family;
}
const InterleavedFamily& cooperative_family() {
    static const CooperativeFamily family;
    return family;
}
const ColumnMajorFamily& column_major_family() {
    static const RegistersOrStagedFamily family(false);
    return family;
}
const ColumnMajorFamily& staged_family() {
    static const RegistersOrStagedFamily family(true);
    return family;
}

const ColumnMajorFamily& shared_memory_family() {
    static const SharedMemoryFamily family;
    return family;
}

const ColumnMajorFamily& fused_family() {
    static const FusedFamily family;
    return family;
}

const InterleavedFamily& family_of(const InterleavedKernelSpec& spec) {
    return is_cooperative(spec) ? cooperative_family() : one_thread_family();
}
const ColumnMajorFamily& family_of(const ColumnMajorSpec& spec) {
    if (is_fused_config(spec.config)) return fused_family();
    if (is_shared_memory_config(spec.config)) return shared_memory_family();
    return spec.config.staged ? staged_family() : column_major_family();
}

}  // namespace batchsolve::codegen::cholesky
