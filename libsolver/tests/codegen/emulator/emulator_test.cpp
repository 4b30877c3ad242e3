// The host emulator of the generated kernels (emulator.hpp) runs barriers and shuffles as a GPU
// would and catches what it is there to catch: a barrier not every thread reaches, a full-mask
// shuffle in a partial warp, a misaligned 16-byte vector load, a write past the dynamic shared memory.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "emulator.hpp"

namespace {

void block_sum_kernel(void** args) {  // per block: sum of threadIdx.x over the block, by shuffles
    int* out = *static_cast<int**>(args[0]);
    unsigned char* smem = ::bs_emu::shared_memory();
    int* partial = reinterpret_cast<int*>(smem);
    int v = static_cast<int>(threadIdx.x);
    for (int off = 16; off >= 1; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off, 32);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        int total = 0;
        for (unsigned w = 0; w < blockDim.x / 32; ++w) total += partial[w];
        out[blockIdx.x] = total;
    }
}

void divergent_barrier_kernel(void**) {
    if (threadIdx.x != 5) __syncthreads();
}

void partial_warp_shuffle_kernel(void**) { (void)__shfl_sync(0xffffffffu, 1.0f, 0, 32); }

void shared_overrun_kernel(void** args) {
    const int bytes = *static_cast<int*>(args[0]);
    if (threadIdx.x == 0) ::bs_emu::shared_memory()[bytes] = 1;
}

struct alignas(16) bs_vec {  // what BS_VEC_AT reads in the generated kernels
    float v[4];
};
void vector_load_kernel(void** args) {
    const int offset = *static_cast<int*>(args[0]);
    const float* base = reinterpret_cast<const float*>(::bs_emu::shared_memory());
    const bs_vec u = BS_VEC_AT(base + offset);
    (void)u;
}

TEST(Emulator, DetectsMisalignedVectorLoad) {
    int offset = 4;
    void* args[] = {&offset};
    EXPECT_NO_THROW(bs_emu::launch(vector_load_kernel, {1, 1, 1}, {32, 1, 1}, 64, args));
    offset = 2;
    EXPECT_THROW(bs_emu::launch(vector_load_kernel, {1, 1, 1}, {32, 1, 1}, 64, args), std::runtime_error);
}

TEST(Emulator, RunsBarriersAndShuffles) {
    std::vector<int> out(3, -1);
    int* p = out.data();
    void* args[] = {&p};
    bs_emu::launch(block_sum_kernel, {3, 1, 1}, {96, 1, 1}, 64, args);
    EXPECT_EQ(out, std::vector<int>(3, 95 * 96 / 2));
}

TEST(Emulator, DetectsDivergentBarrier) {
    EXPECT_THROW(bs_emu::launch(divergent_barrier_kernel, {1, 1, 1}, {64, 1, 1}, 0, nullptr), std::runtime_error);
}

TEST(Emulator, DetectsFullMaskShuffleInPartialWarp) {
    EXPECT_THROW(bs_emu::launch(partial_warp_shuffle_kernel, {1, 1, 1}, {48, 1, 1}, 0, nullptr), std::runtime_error);
}

TEST(Emulator, DetectsSharedMemoryOverrun) {
    int bytes = 128;
    void* args[] = {&bytes};
    EXPECT_THROW(bs_emu::launch(shared_overrun_kernel, {1, 1, 1}, {32, 1, 1}, 128, args), std::runtime_error);
    EXPECT_NO_THROW([&] {
        bytes = 127;
        bs_emu::launch(shared_overrun_kernel, {1, 1, 1}, {32, 1, 1}, 128, args);
    }());
}

}  // namespace
