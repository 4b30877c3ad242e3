// The tuning tables compiled into the library (libsolver/tuning/sm*.json) and the configuration text
// they are written in: every entry must be a configuration the library accepts for its case (a bad
// entry would make the plain routines throw on the GPU, far from the commit that wrote it), and
// to_string / parse_config must be inverse. No GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "batchsolve/tuning.hpp"
#include "core/tuning_table.hpp"
#include "cuda/tuned/column_major_cholesky.hpp"
#include "codegen/cholesky/interleaved.hpp"
#include "../../test_seed.hpp"

namespace batchsolve {
namespace {

namespace tuned = cuda_backend::tuned;

constexpr int kArch = 90;  // sm90.json: the table this repository ships
constexpr int kMaxN = 128;

using batchsolve::test::fresh_seed;  // test_seed.hpp: BATCHSOLVE_TEST_SEED replays, printed on failure

// "" when the library would run `c` for this case, else why not (the checks the launchers make).
std::string problem_of(const std::string& routine, Precision p, const std::string& family, int n,
                       const CholeskyConfig& c) {
    const bool interleaved_kernel = family != "column_major" || c.through_interleaved;
    if (interleaved_kernel) {
        tuned::InterleavedKernelSpec spec;
        spec.routine = routine == "potrf" ? tuned::Routine::potrf
                       : routine == "potrs" ? tuned::Routine::potrs
                                            : tuned::Routine::posv;
        spec.precision = p;
        spec.n = n;
        CholeskyConfig k = c;
        k.through_interleaved = false;
        if (spec.routine == tuned::Routine::posv && tuned::is_two_kernel_posv(k)) {  // its potrf and potrs kernels
            const tuned::TwoKernelPosvConfigs two = tuned::split_two_kernel_posv(k);
            if (two.solve.warps_per_matrix <= 0) return "solve_warps_per_matrix: 2, 4 or 8 with solve_nb";
            std::string problem;
            for (const auto& [routine_k, config_k] : {std::pair{tuned::Routine::potrf, two.factor},
                                                      std::pair{tuned::Routine::potrs, two.solve}}) {
                tuned::InterleavedKernelSpec part = spec;
                part.routine = routine_k;
                part.config = tuned::resolve_interleaved_config(routine_k, p, n, config_k);
                part.config.chunk_size = 0;
                problem += tuned::interleaved_spec_problem(part);
            }
            return problem;
        }
        spec.config = tuned::resolve_interleaved_config(spec.routine, p, n, k);
        spec.config.chunk_size = 0;  // a run-time argument
        return tuned::interleaved_spec_problem(spec);
    }
    const tuned::ColumnMajorRoutine r = routine == "potrf" ? tuned::ColumnMajorRoutine::potrf
                                        : routine == "potrs" ? tuned::ColumnMajorRoutine::potrs
                                                             : tuned::ColumnMajorRoutine::posv;
    return tuned::column_major_spec_problem(tuned::column_major_spec(r, p, Uplo::lower, n, 1, c));
}

TEST(TuningTable, EveryEntryIsAConfigurationTheLibraryRuns) {
    ASSERT_FALSE(tuning::table_description(kArch).empty()) << "no embedded table for sm_" << kArch;
    int entries = 0;
    const LayoutKind families[] = {LayoutKind::interleaved, LayoutKind::chunked_interleaved, LayoutKind::column_major};
    // One batch size per shipped table (sm90.json at 16384, sm90-batch100000.json): each lookup
    // answers from the table nearest to its count, so together they read every entry.
    for (const int count : {16384, 100000})
    for (const std::string routine : {"potrf", "potrs", "posv"})
        for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z})
            for (LayoutKind layout : families)
                for (int n = 1; n <= kMaxN; ++n) {
                    const auto c = tuning::lookup(routine, p, layout, n, kArch, count);
                    if (!c) continue;
                    ++entries;
                    const std::string family = tuning::layout_family(layout);
                    EXPECT_EQ(problem_of(routine, p, family, n, *c), "")
                        << routine << " " << precision_letter(p) << " " << family << " n=" << n << " count "
                        << count << ": " << to_string(*c);
                    if (c->through_interleaved) {
                        EXPECT_EQ(family, "column_major") << routine << " n=" << n;
                    }
                }
    // sm90.json holds the s and d cases of the sweeps (results/autotune-h200); far fewer means the
    // table was not embedded or not read.
    EXPECT_GT(entries, 1000) << tuning::table_description(kArch);
    // pointer arrays share the column-major entries
    EXPECT_EQ(tuning::lookup("potrf", Precision::s, LayoutKind::pointer_array, 32, kArch, 1000).has_value(),
              tuning::lookup("potrf", Precision::s, LayoutKind::column_major, 32, kArch, 1000).has_value());
    EXPECT_FALSE(tuning::lookup("potrf", Precision::s, LayoutKind::interleaved, 32, kArch + 1, 1000).has_value())
        << "an architecture without a table has no entries";
}

// Which table answers a lookup: the one tuned nearest in ratio to the call's batch size.
TEST(TuningTable, NearestBatchIsNearestInRatio) {
    const std::vector<int> shipped = {16384, 100000};
    EXPECT_EQ(tuning::nearest_batch(shipped, 1), 0);
    EXPECT_EQ(tuning::nearest_batch(shipped, 16384), 0);
    EXPECT_EQ(tuning::nearest_batch(shipped, 40000), 0);   // below the geometric mean 40477
    EXPECT_EQ(tuning::nearest_batch(shipped, 41000), 1);   // above it
    EXPECT_EQ(tuning::nearest_batch(shipped, 100000), 1);
    EXPECT_EQ(tuning::nearest_batch(shipped, 5000000), 1);
    EXPECT_EQ(tuning::nearest_batch({100000, 16384}, 20000), 1) << "the order of the tables does not matter";
    EXPECT_EQ(tuning::nearest_batch({}, 100), -1);
    EXPECT_EQ(tuning::nearest_batch({0, 16384}, 5), 1) << "a table without a recorded batch ranks last";
    EXPECT_EQ(tuning::nearest_batch({0}, 5), 0) << "... but still answers when it is the only one";
    EXPECT_EQ(tuning::nearest_batch({16384, 16384}, 7), 0) << "ties go to the first";
    EXPECT_EQ(tuning::nearest_batch(shipped, 0), 0) << "count 0 counts as 1";
}

CholeskyConfig random_config(std::mt19937_64& rng) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    CholeskyConfig c;
    c.nb = pick(0, 128);
    c.looking = static_cast<Looking>(pick(0, 2));
    c.full_unroll = pick(0, 1);
    c.chunk_size = pick(0, 512);
    c.threads_per_block = 32 * pick(1, 32);
    c.warps_per_matrix = pick(0, 8);
    c.grid_blocks_per_sm = pick(0, 32);
    c.matrices_per_block = pick(0, 64);
    c.fast_math = pick(0, 1);
    c.nrhs_block = pick(0, 16);
    c.max_registers = pick(0, 255);
    c.rows_per_thread = pick(0, 8);
    c.threads_per_row = pick(0, 16);
    c.through_interleaved = pick(0, 1);
    c.staged = pick(0, 1);
    c.tensor_cores = pick(0, 1);
    c.solve_warps_per_matrix = pick(0, 8);
    c.solve_nb = pick(0, 128);
    return c;
}

TEST(TuningConfig, ToStringAndParseConfigAreInverse) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 1000; ++i) {
        const CholeskyConfig c = random_config(rng);
        const CholeskyConfig back = parse_config(to_string(c));
        EXPECT_EQ(back, c) << to_string(c) << " came back as " << to_string(back);
        if (back != c) return;
    }
    // every field is in the text, so a change of any one field changes the text
    CholeskyConfig a, b;
    b.through_interleaved = true;
    EXPECT_NE(to_string(a), to_string(b));
}

TEST(TuningConfig, MissingFieldsKeepTheirDefaults) {
    const CholeskyConfig c = parse_config(R"({"nb": 6, "looking": "left"})");
    CholeskyConfig expected;
    expected.nb = 6, expected.looking = Looking::left;
    EXPECT_EQ(c, expected);
    EXPECT_EQ(parse_config("{}"), CholeskyConfig{});
}

TEST(TuningConfig, BadTextNamesTheField) {
    auto field_of = [](const std::string& text) {
        try {
            parse_config(text);
        } catch (const InvalidArgument& e) {
            return e.argument();
        }
        return std::string("(accepted)");
    };
    EXPECT_EQ(field_of("[1, 2]"), "json_object");
    EXPECT_EQ(field_of("{\"nb\": "), "json_object");
    EXPECT_EQ(field_of(R"({"nb": "eight"})"), "nb");
    EXPECT_EQ(field_of(R"({"through_interleaved": 1})"), "through_interleaved");
    EXPECT_EQ(field_of(R"({"full_unroll": "yes"})"), "full_unroll");
    EXPECT_EQ(field_of(R"({"looking": 3})"), "looking");
    EXPECT_EQ(field_of(R"({"looking": "sideways"})"), "text");  // parse_looking names its own argument
}

}  // namespace
}  // namespace batchsolve
