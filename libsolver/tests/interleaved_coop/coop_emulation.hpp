// What the generated cooperative kernels need to compile as host C++: the fiber emulator of
// tests/column_major (threadIdx, __syncthreads, dynamic shared memory, BS_KERNEL_HEAD,
// BS_DECLARE_SMEM) plus the two macros of the interleaved prelude and rsqrt, and the registry through
// which the build-time shards announce their kernels.
#pragma once

#include <cmath>
#include <ostream>
#include <vector>

#include "emulator.hpp"

#define BS_FUNC inline
#define BS_OPAQUE(x) ((void)0)
// CUDA's reciprocal square roots, for the fast-math potrf variants
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

struct CoopEmulatedKernel {
    int spec_index;           // into batchsolve::test::coop::emulation_specs()
    const char* kernel_name;  // as generated; the test checks it still matches the spec
    bs_emu::Entry entry;
};
inline void PrintTo(const CoopEmulatedKernel& k, std::ostream* os) { *os << k.kernel_name; }

// One per shard (4, as CMakeLists.txt asks coop_emit for), defined in the generated coop_kernels_<i>.cpp.
void register_coop_shard_0(std::vector<CoopEmulatedKernel>& out);
void register_coop_shard_1(std::vector<CoopEmulatedKernel>& out);
void register_coop_shard_2(std::vector<CoopEmulatedKernel>& out);
void register_coop_shard_3(std::vector<CoopEmulatedKernel>& out);

inline std::vector<CoopEmulatedKernel> coop_emulated_kernels() {
    std::vector<CoopEmulatedKernel> all;
    register_coop_shard_0(all);
    register_coop_shard_1(all);
    register_coop_shard_2(all);
    register_coop_shard_3(all);
    return all;
}
