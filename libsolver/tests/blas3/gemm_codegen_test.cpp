// The variable-size GEMM generator without a GPU: every operand form, part and precision compiles
// through NVRTC to sm_90 (the tuning table's rows and a few sweep shapes included) without spilling,
// text is deterministic, and the generator refuses what it cannot implement, naming the field.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "codegen/blas3/gemm.hpp"
#include "batchsolve/tuning.hpp"
#include "codegen/common.hpp"
#include "cuda/jit/jit.hpp"

namespace batchsolve::codegen::blas3 {
namespace {

constexpr int kArch = 90;

constexpr int kMaxSpillBytes = 96;
constexpr int kMaxHermitianSpillBytes = 320;
// The unrolled 32-bit slice offsets (copy_offsets 2) hold each copy's offset for the whole problem; on s
// 128x128 with 2 blocks per SM ptxas spills 148 bytes of them, read once per slice outside the product,
// and the form is the fastest measured all the same (22.9 TFLOP/s against 21.9 with 64-bit addresses and
// 21.6 with the rolled form at the 512 bin: results/2026-12-03-h200-23e7de5-gemm-offsets).
constexpr int kMaxHeldOffsetSpillBytes = 160;

void expect_compiles(const GemmSpec& spec) {
    ASSERT_EQ(gemm_family().can_implement(spec), "") << gemm_family().kernel_name(spec);
    const KernelSource k = gemm_family().generate(spec);
    EXPECT_EQ(k.kernel_name, gemm_family().kernel_name(spec));
    EXPECT_EQ(gemm_family().generate(spec).source, k.source) << "generation is not deterministic";
    std::string log;
    KernelSource verbose = k;
    verbose.options.push_back("--ptxas-options=-v");
    std::string cubin;
    try {
        cubin = cuda_backend::jit::compile_to_cubin(verbose, kArch, &log);
    } catch (const std::exception& e) {
        FAIL() << k.kernel_name << ": " << e.what();
    }
    EXPECT_FALSE(cubin.empty());
    const auto stats = cuda_backend::jit::parse_ptxas_log(log, k.kernel_name);
    // The tuned register caps (min_blocks_per_sm) trade a few spilled bytes for resident warps: the H200
    // sweep's s winner 128x128 with 2 blocks per SM spills 16 bytes, d's 64x32 with 6 up to 48, z's 64x32
    // with 4 up to 80, outside the product's inner loop (results/2026-12-02-h200-5e7029d-gemm-vbatched-tuned,
    // its SASS). More than that means a change moved the accumulators or the slices to local memory.
    // A Hermitian operand (HEMM) stays on the register path whatever stages says, where z's capped tile
    // spills more (up to 284 bytes of stores for 64x32 with 4 blocks per SM): a HEMM entry of its own
    // would lift the cap.
    const bool hermitian = spec.op_a == GemmOperand::hermitian_lower || spec.op_a == GemmOperand::hermitian_upper ||
                           spec.op_b == GemmOperand::hermitian_lower || spec.op_b == GemmOperand::hermitian_upper;
    const int cap = hermitian ? kMaxHermitianSpillBytes : spec.config.copy_offsets == 2 ? kMaxHeldOffsetSpillBytes : kMaxSpillBytes;
    EXPECT_LE(stats.spill_store_bytes, cap) << k.kernel_name << " spills:\n" << log;
}

TEST(GemmCodegen, EveryOperandFormAndPartCompiles) {
    const GemmOperand plain[] = {GemmOperand::no_trans, GemmOperand::trans, GemmOperand::conj_trans};
    for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z}) {
        GemmSpec spec;
        spec.precision = p;
        spec.config = default_gemm_config(p, 256, 256, 256);
        for (GemmOperand a : plain)
            for (GemmOperand b : plain) {
                spec.op_a = a, spec.op_b = b;
                expect_compiles(spec);
            }
        spec.op_a = GemmOperand::no_trans, spec.op_b = GemmOperand::trans;
        for (GemmPart part : {GemmPart::lower, GemmPart::upper}) {
            spec.part = part;
            spec.real_diagonal = is_complex(p);
            expect_compiles(spec);
        }
        spec.part = GemmPart::full, spec.real_diagonal = false;
        const bool herm = is_complex(p);
        spec.op_a = herm ? GemmOperand::hermitian_lower : GemmOperand::symmetric_lower, spec.op_b = GemmOperand::no_trans;
        expect_compiles(spec);
        spec.op_a = GemmOperand::no_trans, spec.op_b = GemmOperand::symmetric_upper;
        expect_compiles(spec);
    }
}

TEST(GemmCodegen, TuningRowsAndSweepShapesCompile) {
    std::set<std::string> seen;
    // Every entry of the shipped GEMM table (sm90-gemm.json: one per size class; the sizes below reach
    // each class of the table and the largest), full and triangle.
    for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z})
        for (int size : {1, 16, 32, 33, 64, 128, 256, 1 << 20})
            for (bool triangle : {false, true}) {
                GemmSpec spec;
                spec.precision = p;
                spec.config = default_gemm_config(p, size, size, size, triangle, kShippedTuningArch);
                if (seen.insert(gemm_family().kernel_name(spec)).second) expect_compiles(spec);
            }
    GemmSpec tc;
    tc.precision = Precision::d;
    tc.config = GemmConfig{64, 64, 8, 2, 2, true};
    expect_compiles(tc);
    tc.config = GemmConfig{64, 64, 8, 2, 4, true, 2};  // with an occupancy bound: still no spills
    expect_compiles(tc);
    tc.config = GemmConfig{32, 32, 8, 2, 2, true};
    tc.op_a = GemmOperand::trans;
    expect_compiles(tc);
    tc.precision = Precision::z;
    tc.op_a = GemmOperand::conj_trans;
    expect_compiles(tc);
    for (Precision p : {Precision::s, Precision::c}) {  // TF32, the explicit option
        tc.precision = p;
        tc.config = GemmConfig{64, 32, 8, 2, 2, true};
        expect_compiles(tc);
    }
}

// ptxas's statistics of the size-bin (problem-list) kernel for precision p and tile c, which the
// generator must accept.
cuda_backend::jit::PtxasStats list_kernel_stats(Precision p, const GemmConfig& c) {
    GemmSpec spec;
    spec.precision = p, spec.config = c, spec.problem_list = true;
    EXPECT_EQ(gemm_family().can_implement(spec), "");
    KernelSource k = gemm_family().generate(spec);
    k.options.push_back("--ptxas-options=-v");
    std::string log;
    cuda_backend::jit::compile_to_cubin(k, kArch, &log);
    return cuda_backend::jit::parse_ptxas_log(log, k.kernel_name);
}

// The 32-bit slice offsets (copy_offsets 1) of the x >= 256 tiles: with NVRTC for sm_90 the s 128x128 ring
// tile with 2 blocks per SM spills nothing (68 bytes with 64-bit addresses), d's 64x32 register tile with
// 6 nothing (8), d's 64x64 with 4 at most 20 (76). The unrolled form (2) compiles (it spills more: a
// measured design, not a default).
TEST(GemmCodegen, ThirtyTwoBitSliceOffsetsCompileWithoutSpills) {
    EXPECT_EQ(list_kernel_stats(Precision::s, GemmConfig{128, 128, 8, 16, 16, false, 2, 4, 1}).spill_store_bytes, 0);
    EXPECT_EQ(list_kernel_stats(Precision::d, GemmConfig{64, 32, 8, 2, 2, true, 6, 0, 1}).spill_store_bytes, 0);
    EXPECT_LE(list_kernel_stats(Precision::d, GemmConfig{64, 64, 8, 2, 2, true, 4, 0, 1}).spill_store_bytes, 20);
    EXPECT_GE(list_kernel_stats(Precision::s, GemmConfig{128, 128, 8, 16, 16, false, 2, 4, 2}).registers, 1);
}

// Element pointers advanced per slice (copy_offsets 3): with NVRTC for sm_90 d's 64x32 DMMA register tile
// with 6 blocks per SM holds in its 80 registers without spilling (8 bytes with copy_offsets 0), the
// 128x64 one (4 x 2 warps, 2 blocks per SM) too; s's 64x64 SIMT tile with vector reads and 4 blocks.
TEST(GemmCodegen, AdvancedPointersCompileWithoutSpills) {
    EXPECT_EQ(list_kernel_stats(Precision::d, GemmConfig{64, 32, 8, 2, 2, true, 6, 0, 3}).spill_store_bytes, 0);
    EXPECT_EQ(list_kernel_stats(Precision::d, GemmConfig{128, 64, 8, 4, 2, true, 2, 0, 3}).spill_store_bytes, 0);
    EXPECT_EQ(list_kernel_stats(Precision::s, GemmConfig{64, 64, 8, 16, 16, false, 4, 0, 3}).spill_store_bytes, 0);
}

// The fused kernels of the shipped table's bins (bin_launch 2: every bin of a call in one launch, the
// largest bin's path first) at x = 512 and 256, as the launcher forms them (the classes from 128 up,
// neighbours with the same tile merged): s, d and z compile for sm_90 within the spill cap of their
// paths; the kernel's registers are the hungriest path's (its launch bound the smallest min_blocks_per_sm
// of the paths); c's bins (16 x 8 beside 16 x 16 threads) are refused by the field, so its calls keep
// one launch per bin. NVRTC for sm_90 at this commit: s 128 registers, 44 bytes of spill stores (its paths
// alone 24 and 0); d at 512 128 and 68 (64, 0, 8: the 64x32 paths then run at 4 blocks per SM, not 6);
// d at 256 80 and 64 (0, 8). z's shipped bins share one tile (no fused kernel).
TEST(GemmCodegen, FusedKernelsOfTheShippedBinsCompile) {
    for (Precision p : {Precision::s, Precision::d, Precision::z, Precision::c})
        for (int x : {512, 256}) {
            GemmSpec spec;
            spec.precision = p;
            for (int hi = x; hi >= 128; hi /= 2) {
                GemmConfig c = default_gemm_config(p, hi, hi, x, false, kShippedTuningArch);
                c.bin_launch = 0, c.bin_order = 0;
                if (spec.fused.empty() || !(spec.fused.back() == c)) spec.fused.push_back(c);
            }
            // a single bin's tile would be one kernel, not fused
            if (spec.fused.size() < 2) continue;
            SCOPED_TRACE(gemm_family().kernel_name(spec));
            if (p == Precision::c) {
                EXPECT_EQ(gemm_family().can_implement(spec).rfind("config.bin_launch:", 0), 0u);
                continue;
            }
            expect_compiles(spec);
        }
}

TEST(GemmCodegen, RefusesWhatItCannotImplement) {
    GemmSpec spec;
    spec.precision = Precision::s;
    spec.config = GemmConfig{64, 64, 8, 8, 2, true};  // 8-row warp tiles: TF32 fragments are 16 rows
    EXPECT_EQ(gemm_family().can_implement(spec).rfind("config.blk_m", 0), 0u);
    spec.config = GemmConfig{};
    spec.config.blk_k = 0;
    EXPECT_EQ(gemm_family().can_implement(spec).rfind("config.blk_k", 0), 0u);
    spec.config = GemmConfig{};
    spec.config.dim_x = 64, spec.config.dim_y = 32;
    EXPECT_NE(gemm_family().can_implement(spec), "");
    spec.config = GemmConfig{};
    spec.op_a = GemmOperand::hermitian_lower;
    EXPECT_EQ(gemm_family().can_implement(spec).rfind("precision", 0), 0u);
}

}  // namespace
}  // namespace batchsolve::codegen::blas3
