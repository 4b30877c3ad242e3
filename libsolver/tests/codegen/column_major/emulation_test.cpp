// Runs the generated column-major kernels (compiled as host C++ at build time) in the fiber emulator
// against the CPU reference: catches indexing, barrier and shuffle mistakes without a GPU (the
// emulator's own checks are tested in ../emulator/emulator_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <optional>
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

// The families with a flat 16-byte copy-in of contiguous batches (shared_memory.hpp, fused.hpp): their
// scenarios run once more on such a batch.
bool flat_copy_in(const ColumnMajorSpec& spec) {
    return cuda_backend::tuned::is_shared_memory_config(spec.config) || codegen::cholesky::is_fused_config(spec.config);
}

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
    // lda = n compiled into the text (config.compile_time_ld): every scenario's matrices stored so
    std::optional<ContiguousStorage> ld_n;
    if (spec.config.compile_time_ld) ld_n.emplace();
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
            if (flat_copy_in(spec)) {  // its flat 16-byte copy-in
                ContiguousStorage contiguous;
                potrf_scenario<T>(spec.uplo, n, count, false, seed + 8, emulated_potrf<T>(kernel, shape));
                potrf_scenario<T>(spec.uplo, n, 13, false, seed + 10, emulated_potrf<T>(kernel, shape), true);
            }
            break;
        }
        case ColumnMajorRoutine::posv: {
            const int count = shape.matrices_per_block + std::min(shape.matrices_per_block, 5) + 1;
            posv_scenario<T>(spec.uplo, n, count, 1, false, true, seed, emulated_posv<T>(kernel, shape));
            posv_scenario<T>(spec.uplo, n, count, 2 * shape.nrhs_block + 1, true, false, seed + 2,
                             emulated_posv<T>(kernel, shape));
            posv_scenario<T>(spec.uplo, n, count, 0, false, false, seed + 4, emulated_posv<T>(kernel, shape));
            posv_scenario<T>(spec.uplo, n, 13, 2, false, true, seed + 6, emulated_posv<T>(kernel, shape), true);
            if (flat_copy_in(spec)) {
                ContiguousStorage contiguous;
                posv_scenario<T>(spec.uplo, n, count, 2, false, false, seed + 8, emulated_posv<T>(kernel, shape));
            }
            break;
        }
        case ColumnMajorRoutine::potrs: {
            // several blocks, a partial one
            const bool staged = spec.config.staged;
            const int count = (staged ? 2 * shape.matrices_per_block : shape.segments_per_block) + 3;
            potrs_scenario<T>(spec.uplo, n, count, 1, false, true, seed, emulated_potrs<T>(kernel, shape, staged));
            potrs_scenario<T>(spec.uplo, n, count, 2 * shape.nrhs_block + 1, true, false, seed + 2,
                              emulated_potrs<T>(kernel, shape, staged));
            if (flat_copy_in(spec)) {
                ContiguousStorage contiguous;
                potrs_scenario<T>(spec.uplo, n, count, 3, false, false, seed + 4, emulated_potrs<T>(kernel, shape, staged));
            }
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

}  // namespace
}  // namespace batchsolve::test::column_major
