// The small interface every kernel generator family answers, whatever it generates: can it
// implement this kernel (and if not, why), what the kernel needs to launch, its default
// configuration, and the text. The CUDA backend asks these questions and does the launching and
// caching; a new family (BLAS-3, LDL^T) implements the same five functions for its own spec type.
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

// `Spec` is everything that changes a family's text (e.g. cholesky::InterleavedKernelSpec);
// `Problem` the call a default configuration is asked for.
template <class Spec>
class GeneratorFamily {
public:
    virtual ~GeneratorFamily() = default;
    // Short name, e.g. "interleaved", "cooperative", "column_major", "staged".
    virtual const char* name() const = 0;
    // "" when this family can generate and launch `spec`, else "<config field>: <reason>"
    // (or "n: <reason>"); the launchers turn it into InvalidArgument naming config.<field>.
    virtual std::string problem(const Spec& spec) const = 0;
    // Shared memory and threads per block of the launch (spec as resolved; problem(spec) == "").
    virtual KernelResources resources(const Spec& spec) const = 0;
    // The configuration this family runs for `spec`'s routine, precision and n when no tuning table
    // has an entry (spec.config is not read).
    virtual CholeskyConfig default_config(const Spec& spec) const = 0;
    // The complete source (deterministic: same spec, same text and name).
    virtual KernelSource generate(const Spec& spec) const = 0;
};

}  // namespace batchsolve::codegen
