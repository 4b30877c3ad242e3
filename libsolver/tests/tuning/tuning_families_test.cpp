// The one tuning form (libsolver/tuning/*.json) for every family: each shipped table read with the
// library's reader, every entry found again through tuned_config (the packed tables the library
// holds: what the build wrote is what the files say), each family's configuration to JSON and back,
// malformed tables an Error naming the file, the entry and the field, and unknown routines refused.
// BATCHSOLVE_TUNING_FILE is empty here (CTest), so the packed tables answer.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "batchsolve/cholesky_large.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/vbatched_blas.hpp"
#include "core/tuning_json.hpp"
#include "core/tuning_table.hpp"

namespace batchsolve {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

LayoutKind layout_of(const std::string& family) {
    if (family == "interleaved") return LayoutKind::interleaved;
    if (family == "chunked") return LayoutKind::chunked_interleaved;
    return LayoutKind::column_major;
}

int arch_of_file(const std::string& name) { return name.rfind("cpu", 0) == 0 ? 0 : std::stoi(name.substr(2)); }

// Every entry of every shipped table, looked up as the dispatch does, gives back the file's
// configuration (and n, note and table), so the packing round-trips; each family has a table.
TEST(TuningTables, EveryShippedEntryRoundTripsThroughThePackedTables) {
    std::set<std::string> families;
    int files = 0;
    for (const auto& f : fs::directory_iterator(BATCHSOLVE_TUNING_DIR)) {
        if (f.path().extension() != ".json") continue;
        ++files;
        const std::string name = f.path().filename().string();
        const tuning::ParsedTable t = tuning::parse_table_json(read(f.path()), name);
        ASSERT_FALSE(t.entries.empty()) << name;
        EXPECT_NE(t.description.find("commit"), std::string::npos) << name << ": no provenance";
        const int arch = arch_of_file(name);
        EXPECT_EQ(t.arch_number, arch) << name << ": arch_number and file name disagree";
        for (const tuning::TableEntry& e : t.entries) {
            families.insert(tuning::to_string(e.family));
            const Precision p = parse_precision(e.precision);
            const TunedEntry got = tuned_config(e.routine, p, layout_of(e.layout), e.n, arch, t.batch > 0 ? t.batch : 16384);
            const std::string where = name + ": " + e.routine + " " + e.precision + " " + e.layout + " n=" + std::to_string(e.n);
            ASSERT_TRUE(got.found) << where;
            EXPECT_EQ(got.config, tuning::fields_to_json(e.family, e.fields)) << where;
            EXPECT_EQ(got.family, tuning::to_string(e.family)) << where;
            EXPECT_EQ(got.n, e.n) << where;
            EXPECT_EQ(got.provenance, e.provenance) << where;
            EXPECT_NE(got.table.find(name), std::string::npos) << where << ": answered by " << got.table;
            // the configuration's JSON reads back to the same fields
            const nlohmann::json back = nlohmann::json::parse(got.config);
            const tuning::Fields again = tuning::fields_from_json(e.family, back);
            for (int k = 0; k < tuning::kMaxFieldCount; ++k) EXPECT_EQ(again.v[k], e.fields.v[k]) << where << " field " << k;
            if (e.family != tuning::Family::cholesky) EXPECT_FALSE(e.provenance.empty()) << where << ": no provenance";
        }
    }
    EXPECT_GE(files, 7);
    for (const char* f : {"cholesky", "gemm", "large", "ldlt", "trsm", "cpu"})
        EXPECT_TRUE(families.count(f)) << "no shipped table of family " << f;
}

// Size classes: the entry with the smallest n >= the size answers, above the largest n the largest.
TEST(TuningTables, SizeClassesAndSafeDefaults) {
    // sm90-gemm.json: d has classes 32, 64, 128, 256 and 2^31-1; the triangle form (SYRK/SYR2K) has d entries of its own.
    const GemmConfig small = default_gemm_config(Precision::d, 20, 32, 7, false, 90);
    const GemmConfig large = default_gemm_config(Precision::d, 33, 10, 7, false, 90);
    EXPECT_NE(small, large);
    EXPECT_EQ(small, default_gemm_config(Precision::d, 1, 1, 1, false, 90));
    EXPECT_EQ(large, default_gemm_config(Precision::d, 64, 1, 1, false, 90));
    EXPECT_EQ(default_gemm_config(Precision::d, 100, 100, 100, true, 90), default_gemm_config(Precision::d, 100, 100, 100, false, 90));
    // the H200 sweep's winners (results/2026-12-03-h200-8936072-gemm-designs/sweep-uniform.json): classes 64
    // and 256 the 64x32 tile with advanced pointers, class 256 on the cp.async ring and the largest class
    // 64x64x16 on 16x8x8 DMMA with a 3-stage ring (results/2026-12-04-h200-3f40ac1-gemm-ab)
    EXPECT_EQ(to_string(large),
              R"({"blk_m":64,"blk_n":32,"blk_k":8,"dim_x":2,"dim_y":2,"tensor_cores":true,"min_blocks_per_sm":6,"stages":0,"copy_offsets":3,"tc_row":4})");
    EXPECT_EQ(to_string(default_gemm_config(Precision::d, 200, 1, 1, false, 90)),
              R"({"blk_m":64,"blk_n":32,"blk_k":8,"dim_x":2,"dim_y":2,"tensor_cores":true,"min_blocks_per_sm":6,"stages":3,"copy_offsets":3,"tc_row":4})");
    EXPECT_EQ(to_string(default_gemm_config(Precision::d, 100000, 1, 1, false, 90)),
              R"({"blk_m":64,"blk_n":64,"blk_k":16,"dim_x":2,"dim_y":2,"tensor_cores":true,"min_blocks_per_sm":3,"stages":3,"copy_offsets":3,"dmma16":1,"tc_row":4})");
    // SYRK/SYR2K's one-triangle form keeps the tile it had before the top class moved to 64x64x16 (the
    // rank-k rows of results/2026-12-04-h200-3fc7d11-gemm-adopted ran slower on it); below, the same entries.
    EXPECT_EQ(to_string(default_gemm_config(Precision::d, 100000, 1, 1, true, 90)),
              R"({"blk_m":64,"blk_n":64,"blk_k":8,"dim_x":2,"dim_y":2,"tensor_cores":true,"min_blocks_per_sm":4,"stages":0,"copy_offsets":3,"dmma16":1,"tc_row":4})");
    EXPECT_EQ(default_gemm_config(Precision::d, 200, 1, 1, true, 90).stages, 0);
    for (int x : {1, 32, 33, 64, 100, 128})
        EXPECT_EQ(default_gemm_config(Precision::d, x, 1, 1, true, 90), default_gemm_config(Precision::d, x, 1, 1, false, 90)) << x;
    // d's slice rows by class: 8 apart at the x = 32 class, 4 above (results/2026-12-03-h200-e28e399-gemm-ktiles-confirm)
    EXPECT_EQ(default_gemm_config(Precision::d, 20, 32, 7, false, 90).tc_row, 8);
    EXPECT_EQ(default_gemm_config(Precision::d, 64, 64, 64, false, 90).tc_row, 4);
    // an architecture without tables: the safe defaults
    EXPECT_EQ(default_gemm_config(Precision::d, 100, 100, 100, false, 75), GemmConfig{});
    EXPECT_FALSE(tuned_config("gemm_vbatched", Precision::d, LayoutKind::column_major, 100, 75).found);
    EXPECT_EQ(tuned_ldlt_blocking(Precision::d, 5000, 75).panel_order, LdltBlocking{}.panel_order);
    EXPECT_EQ(tuned_trsm_crossover(Precision::d, 5000, 75).inversion_from_order, TrsmCrossover{}.inversion_from_order);
    // large Cholesky by class (the H200 measurements of results/2026-12-02-h200-ddd4878-large-cholesky-designs):
    // d right-looking + lookahead, nb 1024 up to 16384 (syrk_leaf 512 up to 12288), nb 512 above; s nb 1024
    // up to 3072, 512 up to 6144, 1024 up to 12288, then recursive nb 512 with TRSM panel solves; the whole
    // matrix by Xpotrf (variant vendor) for s everywhere and d up to 16384
    // (results/2026-12-03-h200-6296ebe-large-vendor-graph), the blocking kept beside
    EXPECT_EQ(cholesky_large_default_config<double>(2048).nb, 1024);
    EXPECT_EQ(cholesky_large_default_config<double>(2048).variant, CholeskyVariant::vendor);
    EXPECT_EQ(cholesky_large_default_config<double>(16384).variant, CholeskyVariant::vendor);
    EXPECT_EQ(cholesky_large_default_config<double>(16385).variant, CholeskyVariant::right_looking);
    EXPECT_TRUE(cholesky_large_default_config<double>(2048).lookahead);
    EXPECT_EQ(cholesky_large_default_config<double>(2048).panel_solve, PanelSolve::inverse);
    EXPECT_EQ(cholesky_large_default_config<double>(12288).syrk_leaf, 512);
    EXPECT_EQ(cholesky_large_default_config<double>(12289).syrk_leaf, 1024);
    EXPECT_EQ(cholesky_large_default_config<double>(16384).nb, 1024);
    EXPECT_EQ(cholesky_large_default_config<double>(16385).nb, 512);
    EXPECT_EQ(cholesky_large_default_config<double>(20000).diagonal, CholeskyDiagonal::vendor);
    EXPECT_EQ(cholesky_large_default_config<float>(3072).nb, 1024);
    EXPECT_EQ(cholesky_large_default_config<float>(4096).nb, 512);
    EXPECT_EQ(cholesky_large_default_config<float>(8192).nb, 1024);
    EXPECT_EQ(cholesky_large_default_config<float>(40000).nb, 512);
    EXPECT_EQ(cholesky_large_default_config<float>(40000).variant, CholeskyVariant::vendor);
    EXPECT_EQ(cholesky_large_default_config<float>(40000).panel_solve, PanelSolve::trsm);
    EXPECT_EQ(cholesky_large_default_config<float>(40000).recursion_depth, 2);
    // posv_mixed's automatic chain: FP32 up to 12288, split FP16 (leaves' inverses, M^-1 by block rows of 128) without
    // the shift retry above
    const TunedEntry m1 = tuned_config("posv_mixed", Precision::d, LayoutKind::column_major, 8192, 90);
    EXPECT_TRUE(m1.found);
    EXPECT_EQ(m1.config, R"({"factor":"fp32","method":"automatic","second":"none","shift_retry":true,"next_step_cost_percent":110,"leaf":512,"panel_solve":"trsm","solve_block":0,"fused_solve":false,"graph":true,"lookahead":false,"solve_rows":0,"update_width":0,"tiled_leaf":false,"fused_pass":0})");
    EXPECT_EQ(tuned_config("posv_mixed", Precision::d, LayoutKind::column_major, 16384, 90).config,
              R"({"factor":"fp16_split","method":"automatic","second":"none","shift_retry":false,"next_step_cost_percent":130,"leaf":512,"panel_solve":"inverse","solve_block":0,"fused_solve":false,"graph":true,"lookahead":false,"solve_rows":128,"update_width":0,"tiled_leaf":false,"fused_pass":0})");
    EXPECT_EQ(tuned_config("posv_mixed", Precision::d, LayoutKind::column_major, 16384, 75).config,
              R"({"factor":"fp32","method":"automatic","second":"none","shift_retry":true,"next_step_cost_percent":100,"leaf":512,"panel_solve":"trsm","solve_block":0,"fused_solve":false,"graph":false,"lookahead":false,"solve_rows":0,"update_width":0,"tiled_leaf":false,"fused_pass":0})")
        << "no table: the safe default chain";
    // the CPU's switch-over (cpu.json)
    EXPECT_EQ(tuned_cpu_switch_over(Precision::d).simd_max_order, 160);
    EXPECT_EQ(tuned_cpu_switch_over(Precision::s).simd_max_order, 192);
    EXPECT_EQ(cpu_cholesky_path().simd_max_order_d, 160);
    EXPECT_THROW(tuned_config("getrf", Precision::d, LayoutKind::column_major, 10, 90), InvalidArgument);
}

std::string message(const std::string& text) {
    try {
        tuning::parse_table_json(text, "t.json");
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

void expect_has(const std::string& m, std::initializer_list<const char*> parts) {
    for (const char* p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' missing in: " << m;
}

std::string table(const std::string& routine, const std::string& config, const std::string& precision = "d") {
    const std::string ok = R"({"routine":"gemm_vbatched","precision":"d","layout":"column_major","n":8,"best":{"config":{}}})";
    return R"({"arch_number":90,"entries":[)" + ok + R"(,{"routine":")" + routine + R"(","precision":")" + precision +
           R"(","layout":"column_major","n":100,"best":{"config":)" + config + "}}]}";
}

// A malformed table of each family is an Error naming the file, the entry (its index and routine)
// and the field.
TEST(TuningTables, MalformedTablesOfEveryFamilyNameFileEntryAndField) {
    EXPECT_EQ(tuning::parse_table_json(table("gemm_vbatched", "{\"blk_m\":64}"), "t.json").entries.size(), 2u);
    expect_has(message(table("gemm_vbatched", R"({"blk_m":"64"})")), {"t.json", "entry 1", "gemm_vbatched", "'blk_m'"});
    expect_has(message(table("gemm_vbatched", R"({"blk_q":64})")), {"t.json", "entry 1", "'blk_q'", "blk_m"});
    expect_has(message(table("gemm_vbatched_triangle", R"({"tensor_cores":1})")), {"t.json", "entry 1", "'tensor_cores'"});
    expect_has(message(table("potrf_large", R"({"variant":"diagonal"})")), {"t.json", "entry 1", "potrf_large", "'variant'", "diagonal"});
    expect_has(message(table("potrf_large", R"({"strip":7})")), {"t.json", "entry 1", "'strip'"});
    expect_has(message(table("potrf_large", R"({"nb":4294967296})")), {"t.json", "entry 1", "'nb'"});
    expect_has(message(table("sytrf_nopiv", R"({"panel_order":1.5})")), {"t.json", "entry 1", "sytrf_nopiv", "'panel_order'"});
    expect_has(message(table("trsm_vbatched", R"({"inversion_from_order":"never"})")), {"t.json", "entry 1", "'inversion_from_order'"});
    expect_has(message(table("cpu_vector_path", R"({"simd_max_order":true})")), {"t.json", "entry 1", "'simd_max_order'"});
    expect_has(message(table("posv_mixed", R"({"factor":"fp8"})")), {"t.json", "entry 1", "posv_mixed", "'factor'", "fp8"});
    expect_has(message(table("posv_mixed", R"({"second":"automatic"})")), {"t.json", "entry 1", "'second'"});
    expect_has(message(table("posv_mixed", R"({"method":"cg"})")), {"t.json", "entry 1", "'method'"});
    expect_has(message(table("posv_mixed", R"({"next_step_cost_percent":-5})")), {"t.json", "entry 1", "next_step_cost_percent", "-5"});
    expect_has(message(table("posv_mixed", R"({"leaf":16})")), {"t.json", "entry 1", "'leaf'", "16"});
    expect_has(message(table("posv_mixed", R"({"solve_block":-1})")), {"t.json", "entry 1", "'solve_block'", "-1"});
    expect_has(message(table("posv_mixed", R"({"panel_solve":"lu"})")), {"t.json", "entry 1", "'panel_solve'", "lu"});
    expect_has(message(table("posv_mixed", R"({"solve_rows":96})")), {"t.json", "entry 1", "'solve_rows'", "96"});
    expect_has(message(table("posv_mixed", R"({"update_width":-512})")), {"t.json", "entry 1", "'update_width'", "-512"});
    expect_has(message(table("posv_mixed", R"({"lookahead":2})")), {"t.json", "entry 1", "'lookahead'"});
    expect_has(message(table("posv_mixed", R"({"fused_pass":65})")), {"t.json", "entry 1", "'fused_pass'", "65"});
    expect_has(message(table("posv_mixed", R"({"tiled_leaf":"yes"})")), {"t.json", "entry 1", "'tiled_leaf'"});
    expect_has(message(table("trsm_vbatched", R"([48])")), {"t.json", "entry 1", "best.config"});
    expect_has(message(table("getrf_vbatched", "{}")), {"t.json", "entry 1", "'routine'", "getrf_vbatched"});
    expect_has(message(table("sytrf_nopiv", "{}", "q")), {"t.json", "entry 1", "'precision'"});
    expect_has(message(R"({"entries":[{"routine":"potrf_large","precision":"d","layout":"column_major","n":-3,"best":{"config":{}}}]})"),
               {"t.json", "entry 0", "'n'"});
}

}  // namespace
}  // namespace batchsolve
