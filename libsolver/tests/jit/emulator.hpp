// Host emulation of the generated interleaved kernels: the definitions that let the host compiler
// build their CUDA text unchanged (the kernel wrapper is left out by BS_HOST_EMULATION), and the
// registry through which each compiled variant announces itself to the emulator test.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "codegen/cholesky/interleaved.hpp"

#define BS_HOST_EMULATION 1
#define BS_FUNC inline
#define BS_OPAQUE(x) ((void)0)

// CUDA math functions the generated text may call that the host library lacks.
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

namespace batchsolve::emulator {

// Runs the variant's body for every matrix mat = 0..count-1 of the batch, as the kernel's threads would.
using RunFn = void (*)(void* a, void* b, int nrhs, int* info, int count, int chunk);

struct Variant {
    codegen::cholesky::InterleavedKernelSpec spec;
    std::string name;
    RunFn run = nullptr;
};

std::vector<Variant>& variants();  // defined by the test
inline bool add_variant(const Variant& v) {
    variants().push_back(v);
    return true;
}

}  // namespace batchsolve::emulator
