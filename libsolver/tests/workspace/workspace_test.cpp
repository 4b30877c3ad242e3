// Context::workspace in a hot loop: once the size a routine's query reports is reserved, its calls
// neither free nor allocate (Context::workspace_allocations stays put, the block stays where it was),
// on every backend; a context given less grows once, on its first call, and never again. CUDA cases
// say "skipped: no GPU" without a device.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <random>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "../test_seed.hpp"

namespace {

using namespace batchsolve;

using batchsolve::test::fresh_seed;  // BATCHSOLVE_TEST_SEED replays; printed on failure

bool usable(Backend backend) { return backend == Backend::cpu || Context::cuda_available(); }

// Counts what a context's workspace did between two points of a test.
struct WorkspaceWatch {
    explicit WorkspaceWatch(Context& c) : ctx(c), allocations(c.workspace_allocations()), block(c.workspace(0)) {}
    void expect_untouched(const std::string& what) const {
        EXPECT_EQ(ctx.workspace_allocations(), allocations) << what << ": the workspace was reallocated";
        EXPECT_EQ(ctx.workspace(0), block) << what << ": the workspace moved";
    }
    Context& ctx;
    std::size_t allocations;
    void* block;
};

class WorkspaceTest : public ::testing::TestWithParam<Backend> {
protected:
    void SetUp() override {
        if (!usable(GetParam())) GTEST_SKIP() << "skipped: no GPU";
    }
};

// potrf, potrs, posv in the column-major and interleaved layouts at a few orders (cuSOLVER's
// interleaved path beyond 128 on the GPU converts slices into the workspace), after reserving what
// workspace_bytes says: three calls each, no allocation, every matrix factored.
TEST_P(WorkspaceTest, CholeskyCallsAllocateNothingOnceReserved) {
    using T = double;
    Context ctx(GetParam());
    const std::uint64_t seed = fresh_seed();
    const int count = 40, nrhs = 2;
    for (const int n : {8, 33, 140}) {
        for (const LayoutKind layout : {LayoutKind::column_major, LayoutKind::interleaved}) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", " + to_string(layout) + ", seed " + std::to_string(seed));
            const bool interleaved = layout == LayoutKind::interleaved;
            const std::vector<T> column_major = generate_spd_batch<T>(n, count, 100.0, seed);
            std::vector<T> host_a = column_major;
            if (interleaved)  // element (i, j) of matrix k at (j n + i) count + k
                for (int k = 0; k < count; ++k)
                    for (std::size_t ij = 0; ij < std::size_t(n) * n; ++ij)
                        host_a[ij * count + k] = column_major[std::size_t(k) * n * n + ij];
            const std::vector<T> host_b(std::size_t(n) * nrhs * count, T(1));
            Buffer<T> a(ctx, host_a), b(ctx, host_b);
            Buffer<int> info(ctx, count);
            const auto A = interleaved ? BatchView<T>::interleaved(a.data(), n, n, count)
                                       : BatchView<T>::column_major(a.data(), n, n, count);
            const auto B = interleaved ? BatchView<T>::interleaved(b.data(), n, nrhs, count)
                                       : BatchView<T>::column_major(b.data(), n, nrhs, count);
            std::size_t bytes = 0;
            for (const Routine r : {Routine::potrf, Routine::potrs, Routine::posv})
                bytes = std::max(bytes, workspace_bytes(r, Uplo::lower, BatchView<const T>(A), nrhs, ctx));
            ctx.workspace(bytes);
            const WorkspaceWatch watch(ctx);
            for (int call = 0; call < 3; ++call) {
                a.upload(host_a);
                posv_batched(Uplo::lower, A, B, info.data(), ctx);
                a.upload(host_a);
                potrf_batched(Uplo::lower, A, info.data(), ctx);
                potrs_batched(Uplo::lower, A, B, ctx);
            }
            ctx.synchronize();
            watch.expect_untouched("potrf/potrs/posv after workspace_bytes");
            for (const int i : info.to_host()) ASSERT_EQ(i, 0) << "an SPD matrix failed to factor";
        }
    }
}

// The LDL^T routines after their own size queries: sytrf_nopiv and sysv_mixed (every step of its
// chain allowed, the pivoted fallback's scratch included) allocate nothing in three calls.
TEST_P(WorkspaceTest, LdltCallsAllocateNothingOnceReserved) {
    using T = double;
    Context ctx(GetParam());
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const int n = 96, nrhs = 3;
    const std::vector<T> host_a = generate_spd_batch<T>(n, 1, 1e3, seed);
    const std::vector<T> host_b(std::size_t(n) * nrhs, T(1));
    Buffer<T> a(ctx, host_a), factor(ctx, host_a), b(ctx, host_b), x(ctx, host_b.size());
    Buffer<int> info(ctx, 1);
    SysvOptions options;
    ctx.workspace(std::max(sytrf_nopiv_workspace_size<T>(n, ctx),
                           sysv_mixed_workspace_size<T>(Symmetry::symmetric, n, nrhs, options, ctx)));
    const WorkspaceWatch watch(ctx);
    for (int call = 0; call < 3; ++call) {
        factor.upload(host_a);
        sytrf_nopiv(Symmetry::symmetric, Uplo::lower, n, factor.data(), n, info.data(), ctx);
        const SysvResult result =
            sysv_mixed(Symmetry::symmetric, Uplo::lower, n, nrhs, a.data(), n, b.data(), n, x.data(), n, options, ctx);
        EXPECT_NE(result.path, SolvePath::none);
    }
    ctx.synchronize();
    watch.expect_untouched("sytrf_nopiv/sysv_mixed after their size queries");
    EXPECT_EQ(info.to_host()[0], 0);
}

// Given nothing, a context grows once, on the first call that needs scratch, and reuses that block.
TEST_P(WorkspaceTest, GrowsOnceThenReuses) {
    using T = double;
    Context ctx(GetParam());
    const int n = 64;
    const std::vector<T> host_a = generate_spd_batch<T>(n, 1, 10.0, fresh_seed());
    Buffer<T> factor(ctx, host_a);
    Buffer<int> info(ctx, 1);
    const std::size_t before = ctx.workspace_allocations();
    factor.upload(host_a);
    sytrf_nopiv(Symmetry::symmetric, Uplo::lower, n, factor.data(), n, info.data(), ctx);
    const std::size_t after_first = ctx.workspace_allocations();
    EXPECT_EQ(after_first, before + 1) << "the first call takes its workspace once";
    EXPECT_GE(ctx.workspace_size(), sytrf_nopiv_workspace_size<T>(n, ctx));
    const WorkspaceWatch watch(ctx);
    for (int call = 0; call < 3; ++call) {
        factor.upload(host_a);
        sytrf_nopiv(Symmetry::symmetric, Uplo::lower, n, factor.data(), n, info.data(), ctx);
    }
    ctx.synchronize();
    watch.expect_untouched("later calls");
    // A smaller request returns the same block: the workspace never shrinks.
    EXPECT_EQ(ctx.workspace(1), watch.block);
    EXPECT_EQ(ctx.workspace_allocations(), after_first);
}

INSTANTIATE_TEST_SUITE_P(Backends, WorkspaceTest, ::testing::Values(Backend::cpu, Backend::cuda),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                             return info.param == Backend::cpu ? std::string("cpu") : std::string("cuda");
                         });

}  // namespace
