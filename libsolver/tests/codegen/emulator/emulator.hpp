// The one host emulator of the generated kernels (every generator family's emulation suite uses it):
// the CUDA built-ins and the prelude's macros (codegen/prelude.hpp) for the host compiler, so that a
// kernel's text compiles as C++ and runs on the CPU. Thread and block indices, dynamic shared
// memory, __syncthreads, __syncwarp and full-warp shuffles: every CUDA thread of a block is a fiber,
// barriers and shuffles switch between fibers. It also checks what a GPU would not report: a barrier
// that not every live thread reaches (deadlock), a shuffle in a warp that is partial or not
// converged, a misaligned vector load and writes past the end of the dynamic shared memory.
// Kernels of one thread per matrix (the interleaved family) can also be run without fibers by
// calling their per-matrix body in a loop (codegen/interleaved).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstring>
#include <math.h>

#define BS_HOST_EMULATION 1

namespace bs_emu {

struct Dim3 {
    unsigned x = 1, y = 1, z = 1;
};

const Dim3& thread_idx();
const Dim3& block_idx();
const Dim3& block_dim();
const Dim3& grid_dim();
unsigned char* shared_memory();
void syncthreads();
int lane_id();
// Shuffle core: publishes `bytes` of `value` for the warp and returns lane `src`'s (absolute lane
// index) in `out`. Throws (via the emulator) unless all 32 lanes of the warp exist, are live and take
// part, as a full mask requires.
void warp_exchange(unsigned mask, const void* value, void* out, std::size_t bytes, int src);

// __syncwarp: every lane of the warp must arrive (an exchange that carries nothing).
inline void syncwarp() {
    int none = 0, out = 0;
    warp_exchange(0xffffffffu, &none, &out, sizeof none, lane_id());
}
template <class V>
V shfl_sync(unsigned mask, V v, int src, int width) {
    const int lane = lane_id();
    const int base = lane & ~(width - 1);
    V out;
    warp_exchange(mask, &v, &out, sizeof(V), base + (src & (width - 1)));
    return out;
}
template <class V>
V shfl_xor_sync(unsigned mask, V v, int lane_mask, int width) {
    const int lane = lane_id();
    int src = lane ^ lane_mask;
    if ((src & ~(width - 1)) != (lane & ~(width - 1))) src = lane;  // outside the segment: own value
    V out;
    warp_exchange(mask, &v, &out, sizeof(V), src);
    return out;
}

inline int float_as_int(float f) {
    int i;
    std::memcpy(&i, &f, sizeof i);
    return i;
}
inline int double2loint(double d) {
    unsigned long long i;
    std::memcpy(&i, &d, sizeof i);
    return static_cast<int>(static_cast<unsigned>(i & 0xffffffffu));
}

// p, after checking that it is 16-byte aligned (as a vector load on the GPU requires).
const void* aligned16(const void* p);

// A kernel's host entry (bs_host_entry of the generated text): unpacks cudaLaunchKernel-style args.
using Entry = void (*)(void**);

// Runs `entry` on every block of `grid` (blocks one after another, the threads of a block as
// fibers). Throws std::runtime_error naming the block on a deadlock, a bad shuffle or a shared
// memory overrun. Shared memory starts filled with 0xFF bytes (NaN) in every block.
void launch(Entry entry, Dim3 grid, Dim3 block, std::size_t shared_bytes, void** args);

}  // namespace bs_emu

#define threadIdx (::bs_emu::thread_idx())
#define blockIdx (::bs_emu::block_idx())
#define blockDim (::bs_emu::block_dim())
#define gridDim (::bs_emu::grid_dim())
#define __syncthreads() ::bs_emu::syncthreads()
#define __syncwarp() ::bs_emu::syncwarp()
#define __shfl_sync(mask, v, src, width) ::bs_emu::shfl_sync((mask), (v), (src), (width))
#define __shfl_xor_sync(mask, v, lane_mask, width) ::bs_emu::shfl_xor_sync((mask), (v), (lane_mask), (width))
#define __float_as_int(f) ::bs_emu::float_as_int(f)
#define __double2loint(d) ::bs_emu::double2loint(d)
// CUDA's reciprocal square roots (the fast-math variants call them); the host library lacks them
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
#define BS_DEVICE inline
#define BS_DECLARE_SMEM(name) unsigned char* name = ::bs_emu::shared_memory()
#define BS_KERNEL_HEAD(threads, min_blocks) void
#define BS_FENCE() ((void)0)
#define BS_OPAQUE_I32(i) ((void)0)
#define BS_OPAQUE_I64(i) ((void)0)
#define BS_VEC_AT(p) (*reinterpret_cast<const bs_vec*>(::bs_emu::aligned16(p)))
