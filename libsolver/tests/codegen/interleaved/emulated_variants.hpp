// The registry through which each host-compiled interleaved variant announces itself to the
// emulator test (the generated files include this after the shared host emulator, which lets the
// host compiler build their CUDA text unchanged; the kernel wrapper is left out by
// BS_HOST_EMULATION and the test calls the per-matrix body).
#pragma once

#include <string>
#include <vector>

#include "codegen/cholesky/interleaved.hpp"
#include "emulator.hpp"  // tests/codegen/emulator: the one host emulator of the generated kernels

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
