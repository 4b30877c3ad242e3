// What the generated cooperative kernels need to compile as host C++: the one host emulator of the
// generated kernels (tests/codegen/emulator: threadIdx, __syncthreads, dynamic shared memory and the
// prelude's macros), and the registry through which the build-time shards announce their kernels.
#pragma once

#include <ostream>
#include <vector>

#include "emulator.hpp"

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
