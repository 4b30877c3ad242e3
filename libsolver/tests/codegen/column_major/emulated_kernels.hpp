// Registry of the host-compiled kernels of the emulation test (filled by the generated shards).
#pragma once

#include <vector>

#include "emulator.hpp"

struct EmulatedKernel {
    int spec_index;           // into batchsolve::test::column_major::emulation_specs()
    const char* kernel_name;  // as generated; the test checks it still matches the spec
    bs_emu::Entry entry;
};

// gtest prints a parameter by name, not as bytes.
#include <ostream>
inline void PrintTo(const EmulatedKernel& k, std::ostream* os) { *os << k.kernel_name; }

// One per shard (8, as CMakeLists.txt asks column_major_emit for), defined in the generated emulated_kernels_<i>.cpp.
#define BATCHSOLVE_DECLARE_SHARD(i) void register_emulated_shard_##i(std::vector<EmulatedKernel>& out);
BATCHSOLVE_DECLARE_SHARD(0)
BATCHSOLVE_DECLARE_SHARD(1)
BATCHSOLVE_DECLARE_SHARD(2)
BATCHSOLVE_DECLARE_SHARD(3)
BATCHSOLVE_DECLARE_SHARD(4)
BATCHSOLVE_DECLARE_SHARD(5)
BATCHSOLVE_DECLARE_SHARD(6)
BATCHSOLVE_DECLARE_SHARD(7)
#undef BATCHSOLVE_DECLARE_SHARD

inline std::vector<EmulatedKernel> emulated_kernels() {
    std::vector<EmulatedKernel> all;
    register_emulated_shard_0(all);
    register_emulated_shard_1(all);
    register_emulated_shard_2(all);
    register_emulated_shard_3(all);
    register_emulated_shard_4(all);
    register_emulated_shard_5(all);
    register_emulated_shard_6(all);
    register_emulated_shard_7(all);
    return all;
}
