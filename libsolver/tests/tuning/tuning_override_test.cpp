// BATCHSOLVE_TUNING_FILE (CTest sets it to testdata/override.json for this process) changes what the
// dispatch picks for every family it holds entries of, and only those: the GEMM, large-Cholesky,
// LDL^T, TRSM and CPU choices change, observed through the queries the dispatch itself uses, while the
// small-Cholesky tables stay the embedded ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "batchsolve/cholesky_large.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/vbatched_blas.hpp"
#include "core/tuning_table.hpp"

namespace batchsolve {
namespace {

TEST(TuningOverride, TheFileChangesEachFamilysChoice) {
    const char* file = std::getenv("BATCHSOLVE_TUNING_FILE");
    ASSERT_TRUE(file != nullptr && std::string(file).find("override.json") != std::string::npos)
        << "run through CTest (it sets BATCHSOLVE_TUNING_FILE)";
    // GEMM: two classes of its own for d (<= 64, above), a triangle entry; s has none in the file, so
    // the safe default (the embedded GEMM table is replaced as a whole).
    EXPECT_EQ(default_gemm_config(Precision::d, 64, 3, 3, false, 90), (GemmConfig{16, 16, 8, 8, 8, false, 0}));
    EXPECT_EQ(default_gemm_config(Precision::d, 65, 3, 3, false, 90), (GemmConfig{32, 64, 16, 8, 16, false, 0}));
    EXPECT_EQ(default_gemm_config(Precision::d, 65, 3, 3, true, 90), (GemmConfig{16, 16, 4, 4, 4, false, 0}));
    EXPECT_EQ(default_gemm_config(Precision::s, 200, 200, 200, false, 90), GemmConfig{});
    const TunedEntry g = tuned_config("gemm_vbatched", Precision::d, LayoutKind::column_major, 10, 90);
    EXPECT_TRUE(g.found);
    EXPECT_EQ(g.n, 64);
    EXPECT_EQ(g.provenance, "test: sizes <= 64");
    EXPECT_NE(g.table.find("override.json"), std::string::npos) << g.table;
    // Large Cholesky: d up to 4000 from the file, every field (lookahead too, since the caller left the
    // blocking automatic); above 4000 the file's largest class.
    const LargeCholeskyConfig l = cholesky_large_default_config<double>(1000);
    EXPECT_EQ(l.nb, 96);
    EXPECT_EQ(l.ib, 32);
    EXPECT_EQ(l.variant, CholeskyVariant::left_looking);
    EXPECT_EQ(l.recursion_depth, 3);
    EXPECT_EQ(l.strip, Potf2Strip::columns);
    EXPECT_FALSE(l.lookahead);
    EXPECT_EQ(cholesky_large_default_config<double>(9000).nb, 96);
    EXPECT_EQ(cholesky_large_default_config<float>(1000).nb, 256) << "s has no entry: the safe default";
    // LDL^T blocking (z only), TRSM's crossover (s only), the CPU's switch-over (d only).
    EXPECT_EQ(tuned_ldlt_blocking(Precision::z, 3000, 90).panel_order, 256);
    EXPECT_EQ(tuned_ldlt_blocking(Precision::z, 3000, 90).update_leaf, 1024);
    EXPECT_EQ(tuned_ldlt_blocking(Precision::d, 3000, 90).panel_order, LdltBlocking{}.panel_order);
    EXPECT_EQ(tuned_trsm_crossover(Precision::s, 10, 90).inversion_from_order, 48);
    EXPECT_EQ(tuned_trsm_crossover(Precision::d, 10, 90).inversion_from_order, TrsmCrossover{}.inversion_from_order);
    EXPECT_EQ(cpu_cholesky_path().simd_max_order_d, 64);
    EXPECT_EQ(cpu_cholesky_path().simd_max_order_s, CpuSwitchOver{}.simd_max_order);
    // The small-Cholesky tables are still the embedded ones (the file has no entry of theirs).
    EXPECT_TRUE(tuning::lookup("potrf", Precision::d, LayoutKind::interleaved, 16, 90, 16384).has_value());
    EXPECT_NE(tuning::table_description(90).find("sm90.json"), std::string::npos);
}

}  // namespace
}  // namespace batchsolve
