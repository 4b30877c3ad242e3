// Typed kernel configurations: the field table behind ==, to_string and parse_config; the routine
// enumeration; config_problem / check_config naming the offending field (no GPU needed); the
// workspace query (0 on the CPU; on the GPU the size a through-interleaved call asks for, after
// which the call neither frees nor allocates: skipped without a GPU).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"

namespace batchsolve {
namespace {

// The serialised form is a key of tuning tables and logs: its field order and spelling are fixed.
TEST(Config, ToStringKeepsTheTablesFormat) {
    EXPECT_EQ(to_string(CholeskyConfig{}),
              "{\"nb\":0,\"looking\":\"top\",\"full_unroll\":false,\"chunk_size\":0,\"threads_per_block\":128,"
              "\"warps_per_matrix\":0,\"grid_blocks_per_sm\":0,\"matrices_per_block\":0,\"fast_math\":false,"
              "\"nrhs_block\":1,\"max_registers\":0,\"rows_per_thread\":0,\"threads_per_row\":0,"
              "\"through_interleaved\":false,\"staged\":false,\"tensor_cores\":false,\"solve_warps_per_matrix\":0,"
              "\"solve_nb\":0,\"lean_addressing\":false,\"compile_time_ld\":false}");
}

// A value other than the default, per type of field.
void change(bool& v) { v = !v; }
void change(int& v) { v += 3; }
void change(Looking& v) { v = v == Looking::left ? Looking::right : Looking::left; }

TEST(Config, EveryFieldTakesPartInEqualityAndTheRoundTrip) {
    // One configuration per field, that field changed from the default: each must differ from the
    // default and survive to_string -> parse_config.
    std::vector<CholeskyConfig> changed;
#define BATCHSOLVE_TEST_CHANGE(field) \
    {                                 \
        CholeskyConfig c;             \
        change(c.field);              \
        changed.push_back(c);         \
    }
    BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_TEST_CHANGE)
#undef BATCHSOLVE_TEST_CHANGE
    EXPECT_EQ(changed.size(), 20u);
    for (const CholeskyConfig& c : changed) {
        EXPECT_NE(c, CholeskyConfig{}) << to_string(c);
        EXPECT_EQ(parse_config(to_string(c)), c) << to_string(c);
    }
}

TEST(Config, ParseNamesTheFieldOfAWrongValue) {
    for (const auto& [json, field] : std::vector<std::pair<std::string, std::string>>{
             {"{\"nb\":\"eight\"}", "nb"}, {"{\"fast_math\":1}", "fast_math"}, {"{\"looking\":3}", "looking"}}) {
        try {
            parse_config(json);
            ADD_FAILURE() << json << " was accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(parse_config("[1, 2]"), InvalidArgument);
}

TEST(Config, RoutineNamesRoundTrip) {
    for (Routine r : {Routine::potrf, Routine::potrs, Routine::posv}) EXPECT_EQ(parse_routine(to_string(r)), r);
    try {
        parse_routine("getrf");
        ADD_FAILURE() << "getrf was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("routine"), std::string::npos) << e.what();
    }
}

// Shapes only: config_problem reads no data.
BatchView<const double> shape(LayoutKind layout, int n, int count) {
    switch (layout) {
        case LayoutKind::interleaved: return BatchView<const double>::interleaved(nullptr, n, n, count);
        case LayoutKind::chunked_interleaved: return BatchView<const double>::chunked(nullptr, n, n, count, 32);
        default: return BatchView<const double>::column_major(nullptr, n, n, count);
    }
}

TEST(Config, DefaultsRunEverySizeAndLayout) {
    if (!Context::cuda_compiled()) GTEST_SKIP() << "skipped: CUDA backend not compiled";
    for (Routine r : {Routine::potrf, Routine::potrs, Routine::posv})
        for (LayoutKind layout : {LayoutKind::interleaved, LayoutKind::chunked_interleaved, LayoutKind::column_major})
            for (int n = 1; n <= 160; n += 7)
                EXPECT_EQ(config_problem(r, Uplo::lower, shape(layout, n, 1000), 1, CholeskyConfig{}), "")
                    << to_string(r) << " " << to_string(layout) << " n = " << n;
}

TEST(Config, CheckNamesTheOffendingField) {
    if (!Context::cuda_compiled()) GTEST_SKIP() << "skipped: CUDA backend not compiled";
    struct Bad {
        LayoutKind layout;
        CholeskyConfig config;
        std::string field;
    };
    std::vector<Bad> bad;
    {
        CholeskyConfig c;
        c.nb = 64;  // a tile larger than n = 32
        bad.push_back({LayoutKind::interleaved, c, "config.nb"});
    }
    {
        CholeskyConfig c;
        c.chunk_size = 64;  // the view's chunks are 32 wide
        bad.push_back({LayoutKind::chunked_interleaved, c, "config.chunk_size"});
    }
    {
        CholeskyConfig c;
        c.through_interleaved = true;  // the batch is interleaved already
        bad.push_back({LayoutKind::interleaved, c, "config.through_interleaved"});
    }
    {
        CholeskyConfig c;
        c.warps_per_matrix = 3;  // 2, 4 or 8
        bad.push_back({LayoutKind::interleaved, c, "config.warps_per_matrix"});
    }
    {
        CholeskyConfig c;
        c.max_registers = 3;  // 0 or 16..255
        bad.push_back({LayoutKind::column_major, c, "config.max_registers"});
    }
    for (const Bad& b : bad) {
        const std::string problem = config_problem(Routine::potrf, Uplo::lower, shape(b.layout, 32, 1000), 1, b.config);
        EXPECT_EQ(problem.rfind(b.field + ":", 0), 0u) << problem;
        try {
            check_config(Routine::potrf, Uplo::lower, shape(b.layout, 32, 1000), 1, b.config);
            ADD_FAILURE() << to_string(b.config) << " passed check_config";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(b.field), std::string::npos) << e.what();
        }
    }
}

TEST(Config, CpuBackendNeedsNoWorkspace) {
    Context ctx(Backend::cpu);
    CholeskyConfig through;
    through.through_interleaved = true;
    EXPECT_EQ(workspace_bytes(Routine::posv, Uplo::lower, shape(LayoutKind::column_major, 32, 1000), 4, ctx), 0u);
    EXPECT_EQ(workspace_bytes(Routine::potrf, Uplo::lower, shape(LayoutKind::column_major, 32, 1000), 0, through, ctx), 0u);
    EXPECT_FALSE(prepare_kernel(Routine::potrf, Uplo::lower, shape(LayoutKind::column_major, 32, 1000), 0, ctx).supported);
}

TEST(Config, WorkspaceQueryIsWhatTheCallTakes) {
    if (!Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
    Context ctx(Backend::cuda);
    const int n = 24, nrhs = 3, count = 5000;
    CholeskyConfig through;
    through.through_interleaved = true;
    Buffer<double> a(ctx, generate_spd_batch<double>(n, count, 1e3, 7)), b(ctx, std::size_t(n) * nrhs * count);
    Buffer<int> info(ctx, count);
    b.fill_bytes(0);
    const auto A = BatchView<double>::column_major(a.data(), n, n, count);
    const auto B = BatchView<double>::column_major(b.data(), n, nrhs, count);
    const std::size_t bytes = workspace_bytes(Routine::posv, Uplo::lower, BatchView<const double>(A), nrhs, through, ctx);
    EXPECT_GT(bytes, std::size_t(n) * (n + nrhs) * sizeof(double));  // a slice of A and B at least
    ctx.workspace(bytes);
    void* before = ctx.workspace(bytes);
    posv_batched(Uplo::lower, A, B, info.data(), through, ctx);
    ctx.synchronize();
    EXPECT_EQ(ctx.workspace_size(), bytes);      // the call found it large enough ...
    EXPECT_EQ(ctx.workspace(bytes), before);     // ... and kept the same block
    // the column-major kernels themselves take none
    EXPECT_EQ(workspace_bytes(Routine::posv, Uplo::lower, BatchView<const double>(A), nrhs, CholeskyConfig{}, ctx), 0u);
}

}  // namespace
}  // namespace batchsolve
