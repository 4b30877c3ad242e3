// The one interface every kernel family answers, whatever it generates (CUTLASS's order of questions):
//
//   can_implement(spec)   "" when the family can generate and launch `spec`, else "<field>: <reason>"
//   resources(spec)       what a launch needs besides its arguments (threads, dynamic shared memory)
//   default_config(query) the family's own typed configuration when no tuning table has an entry
//   kernel_name(spec)     the name of the kernel without generating it (the kernel cache's key)
//   generate(spec)        the complete text
//
// A family is a GeneratorFamily<Spec, Config, Query>: `Spec` is everything that changes its text,
// `Config` its own configuration type (CholeskyConfig, GemmConfig, Potf2Config, ...: never a shared
// struct of fields that are "0 unless"), `Query` what its default configuration is asked for (the
// spec itself unless the family needs more, e.g. GEMM's largest m, n, k). The CUDA backend asks these
// questions, and loads every family's kernels through the one kernel cache (cuda/jit/kernel_cache.hpp)
// under the key (device, cache_family(family), kernel_name(spec)).
//
// A kernel compiled with the library instead of generated (LDL^T's, codegen/ldlt/ldlt_family.hpp)
// answers the same questions through FixedKernelFamily below: its generate() returns no text, and its
// can_implement, resources and default_config are what the launcher checks and launches with.
#pragma once

#include <cstddef>
#include <string>

#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"
#include "codegen/kernel_source.hpp"

namespace batchsolve::codegen {

// What a kernel needs from a launch besides its arguments.
struct KernelResources {
    std::size_t shared_bytes = 0;  // dynamic shared memory per block
    int threads_per_block = 0;
};

template <class Spec, class Config, class Query = Spec>
class GeneratorFamily {
public:
    using spec_type = Spec;
    using config_type = Config;
    using query_type = Query;

    virtual ~GeneratorFamily() = default;
    // The routine group, e.g. "cholesky", "blas3", "triangular", "large", "ldlt".
    virtual const char* area() const = 0;
    // Short name within the area, e.g. "interleaved", "cooperative", "column_major", "staged", "gemm".
    virtual const char* name() const = 0;
    // "" when this family can generate and launch `spec`, else "<config field>: <reason>" (or
    // "n: <reason>", "precision: <reason>"); the launchers turn it into InvalidArgument naming the field.
    virtual std::string can_implement(const Spec& spec) const = 0;
    // Shared memory and threads per block of the launch (spec as resolved; can_implement(spec) == "").
    virtual KernelResources resources(const Spec& spec) const = 0;
    // The configuration this family runs for `query` when no tuning table (and no caller) gives one.
    virtual Config default_config(const Query& query) const = 0;
    // The kernel's name, which encodes everything that changes its text (tests/codegen's digest guards
    // check that no two kernels share one): the cache finds a kernel by it without generating.
    virtual std::string kernel_name(const Spec& spec) const = 0;
    // The complete source (deterministic: same spec, same text and name).
    virtual KernelSource generate(const Spec& spec) const = 0;
};

// The family part of the kernel cache's key: "<area>.<name>", e.g. "cholesky.staged", "blas3.gemm".
template <class Spec, class Config, class Query>
std::string cache_family(const GeneratorFamily<Spec, Config, Query>& family) {
    return std::string(family.area()) + "." + family.name();
}

// The adapter of kernels compiled with the library (nvcc) rather than generated: the same questions,
// and generate() hands back the kernel's name and no source (there is nothing to compile at run time;
// is_fixed() tells a caller that treats both kinds alike). The digest guard of tests/codegen records
// such a family's description (name, resources, default configuration) instead of text.
template <class Spec, class Config, class Query = Spec>
class FixedKernelFamily : public GeneratorFamily<Spec, Config, Query> {
public:
    KernelSource generate(const Spec& spec) const final {
        KernelSource k;
        k.kernel_name = this->kernel_name(spec);
        return k;
    }
    static constexpr bool is_fixed() { return true; }
};

}  // namespace batchsolve::codegen
