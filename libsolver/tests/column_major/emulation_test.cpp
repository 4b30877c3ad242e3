// Runs the generated column-major kernels (compiled as host C++ at build time) in the fiber emulator
// against the CPU reference: catches indexing, barrier and shuffle mistakes without a GPU. Also checks
// that the emulator itself detects the bugs it is there to catch.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulated_kernels.hpp"
#include "scenario.hpp"
#include "test_specs.hpp"

namespace batchsolve::test::column_major {
namespace {

using cuda_backend::tuned::ColumnMajorShape;
using cuda_backend::tuned::column_major_kernel_name;
using cuda_backend::tuned::column_major_shape;

unsigned blocks(long long items, int per_block) { return static_cast<unsigned>((items + per_block - 1) / per_block); }

template <class T>
struct HostArgs {  // one operand as kernel arguments (host memory)
    T* data = nullptr;
    std::vector<T*> table;
    T* const* pointers = nullptr;
    long long stride = 0;
    int ld = 0;
    explicit HostArgs(Storage<T>& s) : ld(s.ld) {
        if (s.pointers) {
            for (int k = 0; k < s.count; ++k) table.push_back(s.data.data() + s.offsets[k]);
            pointers = table.data();
        } else {
            data = s.data.data(), stride = s.stride;
        }
    }
};

template <class T>
RunPotrf<T> emulated_potrf(const EmulatedKernel& kernel, const ColumnMajorShape& shape) {
    return [&kernel, shape](Storage<T>& a, std::vector<int>& info) {
        HostArgs<T> A(a);
        int* info_ptr = info.data();
        int count = a.count, zero = 0;
        void* args[] = {&A.data, &A.pointers, &A.stride, &A.ld, &info_ptr, &count, &zero};
        bs_emu::launch(kernel.entry, {blocks(count, shape.matrices_per_block), 1, 1},
                       {static_cast<unsigned>(shape.block_threads), 1, 1}, shape.shared_bytes, args);
    };
}

template <class T>
RunPosv<T> emulated_posv(const EmulatedKernel& kernel, const ColumnMajorShape& shape) {
    return [&kernel, shape](Storage<T>& a, Storage<T>& b, std::vector<int>& info) {
        HostArgs<T> A(a), B(b);
        int* info_ptr = info.data();
        int count = a.count, zero = 0, nrhs = b.cols;
        int ngroups = (nrhs + shape.nrhs_block - 1) / shape.nrhs_block;
        void* args[] = {&A.data, &A.pointers, &A.stride, &A.ld, &B.data, &B.pointers, &B.stride, &B.ld,
                        &nrhs,   &ngroups,    &info_ptr, &count, &zero};
        bs_emu::launch(kernel.entry, {blocks(count, shape.matrices_per_block), 1, 1},
                       {static_cast<unsigned>(shape.block_threads), 1, 1}, shape.shared_bytes, args);
    };
}

template <class T>
RunPotrs<T> emulated_potrs(const EmulatedKernel& kernel, const ColumnMajorShape& shape, bool staged) {
    return [&kernel, shape, staged](const Storage<T>& a_const, Storage<T>& b) {
        Storage<T>& a = const_cast<Storage<T>&>(a_const);  // the kernel only reads it (checked after)
        HostArgs<T> A(a), B(b);
        int count = a.count, nrhs = b.cols;
        int ngroups = (nrhs + shape.nrhs_block - 1) / shape.nrhs_block;
        void* args[] = {&A.data, &A.pointers, &A.stride, &A.ld, &B.data, &B.pointers, &B.stride, &B.ld,
                        &nrhs,   &ngroups,    &count};
        if (staged)  // a group of warps per matrix (codegen/cholesky/staged.hpp)
            bs_emu::launch(kernel.entry, {blocks(count, shape.matrices_per_block), 1, 1},
                           {static_cast<unsigned>(shape.block_threads), 1, 1}, shape.shared_bytes, args);
        else
            bs_emu::launch(kernel.entry, {blocks(static_cast<long long>(count) * ngroups, shape.segments_per_block), 1, 1},
                           {static_cast<unsigned>(shape.block_threads), 1, 1}, 0, args);
    };
}

template <class T>
void run_all(const ColumnMajorSpec& spec, const EmulatedKernel& kernel) {
    const ColumnMajorShape shape = column_major_shape(spec);
    const std::uint64_t seed = fresh_seed();
    const int n = spec.n;
    switch (spec.routine) {
        case ColumnMajorRoutine::potrf: {
            // a full block and a partial one (at least 3 matrices: two bad members and a good one)
            const int count = shape.matrices_per_block + std::min(shape.matrices_per_block, 5) + 1;
            potrf_scenario<T>(spec.uplo, n, count, false, seed, emulated_potrf<T>(kernel, shape));
            potrf_scenario<T>(spec.uplo, n, count, true, seed + 2, emulated_potrf<T>(kernel, shape));
            potrf_scenario<T>(spec.uplo, n, 1, false, seed + 4, emulated_potrf<T>(kernel, shape));
            // Inf on the diagonal, NaN and Inf below it (issue 22), among good matrices
            potrf_scenario<T>(spec.uplo, n, 13, false, seed + 6, emulated_potrf<T>(kernel, shape), true);
            break;
        }
        case ColumnMajorRoutine::posv: {
            const int count = shape.matrices_per_block + std::min(shape.matrices_per_block, 5) + 1;
            posv_scenario<T>(spec.uplo, n, count, 1, false, true, seed, emulated_posv<T>(kernel, shape));
            posv_scenario<T>(spec.uplo, n, count, 2 * shape.nrhs_block + 1, true, false, seed + 2,
                             emulated_posv<T>(kernel, shape));
            posv_scenario<T>(spec.uplo, n, count, 0, false, false, seed + 4, emulated_posv<T>(kernel, shape));
            posv_scenario<T>(spec.uplo, n, 13, 2, false, true, seed + 6, emulated_posv<T>(kernel, shape), true);
            break;
        }
        case ColumnMajorRoutine::potrs: {
            // several blocks, a partial one
            const bool staged = spec.config.staged;
            const int count = (staged ? 2 * shape.matrices_per_block : shape.segments_per_block) + 3;
            potrs_scenario<T>(spec.uplo, n, count, 1, false, true, seed, emulated_potrs<T>(kernel, shape, staged));
            potrs_scenario<T>(spec.uplo, n, count, 2 * shape.nrhs_block + 1, true, false, seed + 2,
                              emulated_potrs<T>(kernel, shape, staged));
            break;
        }
    }
}

class Emulated : public ::testing::TestWithParam<EmulatedKernel> {};

TEST_P(Emulated, MatchesReference) {
    const EmulatedKernel& kernel = GetParam();
    const auto specs = emulation_specs();
    ASSERT_LT(kernel.spec_index, static_cast<int>(specs.size()));
    const ColumnMajorSpec& spec = specs[kernel.spec_index];
    // the host-compiled text must be what the library generates today (else: rebuild)
    ASSERT_EQ(column_major_kernel_name(spec), std::string(kernel.kernel_name));
    switch (spec.precision) {
        case Precision::s: run_all<float>(spec, kernel); break;
        case Precision::d: run_all<double>(spec, kernel); break;
        case Precision::c: run_all<std::complex<float>>(spec, kernel); break;
        case Precision::z: run_all<std::complex<double>>(spec, kernel); break;
    }
}

INSTANTIATE_TEST_SUITE_P(ColumnMajor, Emulated, ::testing::ValuesIn(emulated_kernels()),
                         [](const ::testing::TestParamInfo<EmulatedKernel>& info) {
                             return std::string(info.param.kernel_name);
                         });

TEST(EmulatedKernels, CoverEverySpec) {
    EXPECT_EQ(emulated_kernels().size(), emulation_specs().size())
        << "the build-time kernel sources are stale: rebuild column_major_emulation_test";
}

// ---- the emulator catches what it should ------------------------------------------------------

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
}  // namespace batchsolve::test::column_major
