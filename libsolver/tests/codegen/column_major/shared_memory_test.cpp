// The shared-memory column-major family (codegen/cholesky/shared_memory.hpp) without a GPU: its
// defaults, limits and checks, how a configuration reaches it (families, column_major_spec, the
// kernel plan of n = 129..256) and its names. Its kernels' arithmetic is checked by the emulation
// test (shared_memory_specs() in test_specs.hpp), their CUDA text by the NVRTC sample.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "codegen/cholesky/families.hpp"
#include "codegen/cholesky/shared_memory.hpp"
#include "cuda/tuned/column_major_cholesky.hpp"
#include "cuda/tuned/kernel_plan.hpp"
#include "test_specs.hpp"

namespace batchsolve::test::column_major {
namespace {

using codegen::cholesky::shared_memory_default_config;
using codegen::cholesky::shared_memory_largest_n;
using cuda_backend::tuned::column_major_spec;
using cuda_backend::tuned::column_major_spec_problem;

bool starts(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

TEST(ColumnMajorSharedMemory, LargestOrderThatFitsOneBlock) {
    // n^2 elements within 232448 bytes: 241^2 * 4 = 232324, 170^2 * 8 = 231200, 120^2 * 16 = 230400
    EXPECT_EQ(shared_memory_largest_n(Precision::s), 241);
    EXPECT_EQ(shared_memory_largest_n(Precision::d), 170);
    EXPECT_EQ(shared_memory_largest_n(Precision::c), 170);
    EXPECT_EQ(shared_memory_largest_n(Precision::z), 120);
}

// The defaults as shared_memory.cpp documents them (and validation/cusolverdx/shared_memory_table.py
// mirrors them): one warp per 32 rows and at least 8 warps per SM, up to 4 warps of matrices per
// block within 64 KiB, panels of 8 (at most n), tiles of 4 (2 up to n = 16).
TEST(ColumnMajorSharedMemory, DefaultsAsDocumented) {
    struct Expect {
        Routine r;
        Precision p;
        int n, warps, matrices, nb, tile;
    };
    for (const Expect& e : {Expect{Routine::potrf, Precision::s, 8, 1, 4, 8, 2}, Expect{Routine::potrf, Precision::d, 64, 2, 2, 8, 4},
                            Expect{Routine::posv, Precision::s, 128, 4, 1, 8, 4}, Expect{Routine::potrf, Precision::d, 128, 8, 1, 8, 4},
                            Expect{Routine::potrf, Precision::s, 200, 8, 1, 8, 4}, Expect{Routine::potrs, Precision::d, 100, 4, 1, 0, 0},
                            Expect{Routine::potrf, Precision::z, 3, 1, 4, 3, 2}}) {
        const CholeskyConfig c = shared_memory_default_config(e.r, e.p, e.n);
        SCOPED_TRACE(std::string(to_string(e.r)) + " " + precision_letter(e.p) + " n = " + std::to_string(e.n));
        EXPECT_TRUE(codegen::cholesky::is_shared_memory_config(c));
        EXPECT_EQ(c.warps_per_matrix, e.warps);
        EXPECT_EQ(c.matrices_per_block, e.matrices);
        EXPECT_EQ(c.nb, e.nb);
        EXPECT_EQ(c.rows_per_thread, e.tile);
        const auto spec = column_major_spec(e.r, e.p, Uplo::lower, e.n, 1, c);
        EXPECT_EQ(column_major_spec_problem(spec), "");
    }
}

TEST(ColumnMajorSharedMemory, RejectsBadConfigsNamingTheField) {
    auto problem = [](Precision p, int n, auto edit, Routine r = Routine::potrf) {
        CholeskyConfig c = shared_memory_default_config(r, p, n);
        edit(c);
        return column_major_spec_problem(column_major_spec(r, p, Uplo::lower, n, 1, c));
    };
    EXPECT_TRUE(starts(problem(Precision::d, 171, [](CholeskyConfig&) {}), "n:"));
    EXPECT_TRUE(starts(problem(Precision::s, 242, [](CholeskyConfig&) {}), "n:"));
    EXPECT_TRUE(starts(problem(Precision::d, 32, [](CholeskyConfig& c) { c.tensor_cores = true; }), "config.tensor_cores:"));
    EXPECT_TRUE(starts(problem(Precision::d, 32, [](CholeskyConfig& c) { c.nb = 0; }), "config.nb:"));
    EXPECT_TRUE(starts(problem(Precision::d, 32, [](CholeskyConfig& c) { c.nb = 33; }), "config.nb:"));
    EXPECT_TRUE(starts(problem(Precision::d, 32, [](CholeskyConfig& c) { c.rows_per_thread = 9; }), "config.rows_per_thread:"));
    EXPECT_TRUE(starts(problem(Precision::d, 32, [](CholeskyConfig& c) { c.warps_per_matrix = -1; }), "config.warps_per_matrix:"));
    // (warps_per_matrix = 0 selects the fused family: fused_test.cpp)
    EXPECT_TRUE(starts(problem(Precision::d, 32, [](CholeskyConfig& c) { c.warps_per_matrix = 33; }), "config.warps_per_matrix:"));
    EXPECT_TRUE(starts(problem(Precision::d, 32, [](CholeskyConfig& c) { c.threads_per_row = 2; }), "config.threads_per_row:"));
    EXPECT_TRUE(starts(problem(Precision::d, 32, [](CholeskyConfig& c) { c.warps_per_matrix = 8, c.matrices_per_block = 5; }),
                       "config.matrices_per_block:"));  // 1280 threads
    EXPECT_TRUE(starts(problem(Precision::d, 128, [](CholeskyConfig& c) { c.matrices_per_block = 2; }),
                       "config.matrices_per_block:"));  // 256 KiB of shared memory
    EXPECT_TRUE(starts(problem(Precision::s, 64, [](CholeskyConfig& c) { c.max_registers = 8; }), "config.max_registers:"));
}

TEST(ColumnMajorSharedMemory, ReachedThroughStagedWithLookingLeft) {
    const CholeskyConfig c = shared_memory_default_config(Routine::potrf, Precision::s, 64);
    const auto spec = column_major_spec(Routine::potrf, Precision::s, Uplo::upper, 64, 0, c);
    EXPECT_EQ(spec.config.looking, Looking::left);  // kept: the family's mark
    EXPECT_EQ(std::string(codegen::cholesky::family_of(spec).name()), "shared_memory");
    EXPECT_EQ(codegen::cholesky::shared_memory_family().can_implement(spec), "");
    EXPECT_TRUE(starts(codegen::cholesky::staged_family().can_implement(spec), "looking:"));
    EXPECT_EQ(cuda_backend::tuned::column_major_kernel_name(spec), "potrf_cm_s_upper_n64_smem_nb8_w2_m2_t4");
    // the staged kernels keep their own family (looking is not theirs: set to right as before)
    CholeskyConfig staged;
    staged.staged = true, staged.nb = 8, staged.warps_per_matrix = 2, staged.matrices_per_block = 1;
    const auto old = column_major_spec(Routine::potrf, Precision::s, Uplo::lower, 64, 0, staged);
    EXPECT_EQ(std::string(codegen::cholesky::family_of(old).name()), "staged");
    EXPECT_EQ(old.config.looking, Looking::right);
}

// n = 129..256: the library default (an empty configuration, as with no table entry) is cuSOLVER;
// a shared-memory configuration runs the family where one matrix fits; any other is refused by its
// own kernel's checks.
TEST(ColumnMajorSharedMemory, DefaultBeyond128) {
    const CholeskyConfig reg = cuda_backend::tuned::default_column_major_config(Routine::potrf, Precision::d, 129, 1);
    EXPECT_TRUE(starts(column_major_spec_problem(column_major_spec(Routine::potrf, Precision::d, Uplo::lower, 129, 0, reg)), "n:"));
    EXPECT_TRUE(cuda_backend::tuned::column_major_supports(LayoutKind::column_major, 256));
    EXPECT_FALSE(cuda_backend::tuned::column_major_supports(LayoutKind::column_major, 257));
    EXPECT_FALSE(cuda_backend::tuned::column_major_supports(LayoutKind::interleaved, 129));
    std::size_t bytes = 0;
    EXPECT_TRUE(cuda_backend::tuned::column_major_plan_cusolver(Precision::d, 150, 1, 100, CholeskyConfig{}, bytes));
    EXPECT_TRUE(cuda_backend::tuned::column_major_plan_cusolver(Precision::d, 150, 1, 100, reg, bytes));
    EXPECT_FALSE(cuda_backend::tuned::column_major_plan_cusolver(
        Precision::d, 150, 1, 100, shared_memory_default_config(Routine::posv, Precision::d, 150), bytes));
    EXPECT_TRUE(cuda_backend::tuned::column_major_plan_cusolver(
        Precision::d, 171, 1, 100, shared_memory_default_config(Routine::posv, Precision::d, 150), bytes));
    EXPECT_FALSE(cuda_backend::tuned::column_major_plan_cusolver(Precision::d, 128, 1, 100, CholeskyConfig{}, bytes));
}

// The kernel plan (what check_config, workspace_bytes and the warm-up see): cuSOLVER (no kernel, its
// workspace) by default and where the family cannot hold n, its kernel where a configuration selects
// it, a problem past 256.
TEST(ColumnMajorSharedMemory, PlanOfLargeOrders) {
    using cuda_backend::tuned::plan_kernels;
    const auto smem = shared_memory_default_config(Routine::potrf, Precision::s, 200);
    const auto fits = plan_kernels(Routine::potrf, Precision::s, Uplo::lower, LayoutKind::column_major, 200, 1, 1000, 1000, smem);
    EXPECT_EQ(fits.problem, "");
    ASSERT_EQ(fits.column_major.size(), 1u);
    EXPECT_TRUE(codegen::cholesky::is_shared_memory_config(fits.column_major[0].config));
    for (const auto& [precision, config] : {std::pair{Precision::s, CholeskyConfig{}}, std::pair{Precision::d, smem}}) {
        const auto vendor = plan_kernels(Routine::posv, precision, Uplo::lower, LayoutKind::pointer_array, 200, 2, 1000,
                                         1000, config);
        EXPECT_EQ(vendor.problem, "");
        EXPECT_TRUE(vendor.column_major.empty());
        EXPECT_TRUE(vendor.interleaved.empty());
        EXPECT_GT(vendor.workspace_bytes, 0u);  // cuSOLVER's preserve mode converts slices
    }
    const auto beyond = plan_kernels(Routine::potrf, Precision::s, Uplo::lower, LayoutKind::column_major, 257, 1, 10, 10, smem);
    EXPECT_TRUE(starts(beyond.problem, "n:"));
    // interleaved layouts keep their limit
    const auto interleaved = plan_kernels(Routine::potrf, Precision::s, Uplo::lower, LayoutKind::interleaved, 129, 1, 10,
                                          10, CholeskyConfig{});
    EXPECT_TRUE(starts(interleaved.problem, "n:"));
}

TEST(ColumnMajorSharedMemory, NamesAreUniqueAndTextDeterministic) {
    std::set<std::string> names;
    for (const auto& spec : shared_memory_specs()) {
        const auto a = cuda_backend::tuned::generate_column_major_kernel(spec);
        const auto b = cuda_backend::tuned::generate_column_major_kernel(spec);
        EXPECT_EQ(a.source, b.source);
        EXPECT_TRUE(names.insert(a.kernel_name).second) << a.kernel_name;
        EXPECT_NE(a.source.find("cp.async"), std::string::npos) << a.kernel_name;
    }
}

}  // namespace
}  // namespace batchsolve::test::column_major
