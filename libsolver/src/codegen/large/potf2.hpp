// The fused POTF2 kernel of the large-matrix Cholesky (cholesky_large.hpp): one thread block factors
// one diagonal block of order m <= capacity in a single launch that loops over the block in strips of
// ib columns ("loop-inclusive", the GPU-only Cholesky paper's fused potf2 with inner blocking). Each
// strip is brought into shared memory, receives the updates of the strips to its left (their columns
// streamed through registers ib at a time, the strip's own rows of them staged in shared memory),
// and is then factored column by column in place, which also solves the rows below the strip's
// diagonal block; the strip goes back to global memory once. Pure C++ (no CUDA header).
#pragma once

#include <string>

#include "batchsolve/types.hpp"
#include "codegen/family.hpp"
#include "codegen/kernel_source.hpp"

namespace batchsolve::codegen::large {

// How a strip is factored once its left updates are in.
enum class StripFactor {
    columns,  // column by column by the whole block: two barriers per column (the paper's design)
    warp      // the ib x ib diagonal block in one warp's registers (shuffles, no barrier), then every
              // thread solves its rows below against it: four barriers per strip
};

// The tuning fields of one kernel: inner blocking, threads per block, strip factorisation.
struct Potf2Config {
    int ib = 16;        // strip width: 8, 16 or 32
    int threads = 256;  // a multiple of 32, 32..1024
    StripFactor strip = StripFactor::columns;
    // The whole block in shared memory for the kernel's life (read once, written once): the strips'
    // left updates then read shared memory instead of global. Only where capacity^2 elements fit.
    bool resident = false;
};

// Everything that changes the kernel's text.
struct Potf2Spec {
    Precision precision = Precision::d;  // s or d
    Uplo uplo = Uplo::lower;
    int capacity = 64;                   // largest order m the kernel accepts (rows of the shared strip)
    Potf2Config config;
};

// Kernel arguments, in order: (int m, T* a, int lda, int* info, int column_offset). `a` points at the
// block's (0, 0) entry, `info` at the factorisation's info: a block that finds a non-positive or
// non-finite pivot at its column j (1-based) writes column_offset + j there unless it is already set,
// and a block launched while info is set does nothing (LAPACK stops at the first failure).
// The family answers codegen/family.hpp's questions; its configuration type is Potf2Config.
class Potf2Family final : public GeneratorFamily<Potf2Spec, Potf2Config> {
public:
    const char* area() const override { return "large"; }
    const char* name() const override { return "potf2"; }
    // "" or "<config field>: <reason>" (capacity problems are reported as "nb").
    std::string can_implement(const Potf2Spec& spec) const override;
    KernelResources resources(const Potf2Spec& spec) const override;
    // ib and strip as configured by the caller, threads from the capacity (a thread per row up to 256),
    // resident when the block fits in shared memory next to the strip.
    Potf2Config default_config(const Potf2Spec& spec) const override;
    std::string kernel_name(const Potf2Spec& spec) const override;
    KernelSource generate(const Potf2Spec& spec) const override;
};

const Potf2Family& potf2_family();
// potf2_family().kernel_name(spec)
std::string potf2_kernel_name(const Potf2Spec& spec);

}  // namespace batchsolve::codegen::large
