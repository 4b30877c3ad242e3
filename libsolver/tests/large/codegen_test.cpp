// The generated fused POTF2 kernels of the large-matrix Cholesky (codegen/large/potf2.*): a sample of
// specs over precision, triangle, capacity and strip width compiles through NVRTC for sm_90 without
// more than a token spill (no GPU needed), the generator's limits are reported against the right field, and the
// text is deterministic.
#include <gtest/gtest.h>

#include <string>

#include "codegen/large/potf2.hpp"
#include "cuda/jit/jit.hpp"

namespace batchsolve::test {
namespace {

using codegen::large::Potf2Spec;

Potf2Spec spec_of(Precision p, Uplo u, int capacity, int ib) {  // columns strips unless changed
    Potf2Spec s;
    s.precision = p;
    s.uplo = u;
    s.capacity = capacity;
    s.config.ib = ib;
    s.config = codegen::large::potf2_family().default_config(s);
    return s;
}

TEST(LargePotf2Codegen, SampledKernelsCompileWithoutSpills) {
    const auto& family = codegen::large::potf2_family();
    const std::pair<int, int> shapes[] = {{32, 8}, {64, 16}, {128, 32}, {512, 16}};
    // Every shape in lower storage, the upper storage's index macro at one shape (its text differs
    // from the lower one only there): 20 compilations, ~20 s of NVRTC on one core.
    for (Precision p : {Precision::s, Precision::d})
        for (Uplo u : {Uplo::lower, Uplo::upper})
            for (auto [capacity, ib] : shapes)
                for (auto strip : {codegen::large::StripFactor::columns, codegen::large::StripFactor::warp}) {
                if (u == Uplo::upper && capacity != 128) continue;
                Potf2Spec s = spec_of(p, u, capacity, ib);
                s.config.strip = strip;
                SCOPED_TRACE(codegen::large::potf2_kernel_name(s));
                ASSERT_EQ(family.can_implement(s), "");
                codegen::KernelSource k = family.generate(s);
                k.options.push_back("--ptxas-options=-v");
                std::string log;
                EXPECT_FALSE(cuda_backend::jit::compile_to_cubin(k, 90, &log).empty());
                const auto stats = cuda_backend::jit::parse_ptxas_log(log, k.kernel_name);
                // ptxas spills a word or two for some float ib = 32 column-strip variants (s_lower_m128_ib32:
                // 8 bytes at 96 registers); the warp strips' straight-line diagonal factor spills up to
                // ~200 bytes (no local arrays in the PTX: ptxas's own choice, L1-resident). Beyond those the
                // strip's registers no longer fit.
                const int allowed = strip == codegen::large::StripFactor::warp ? 256 : 16;
                EXPECT_LE(stats.spill_store_bytes, allowed) << log;
                EXPECT_LE(stats.registers, 65536 / s.config.threads) << log;
            }
}

TEST(LargePotf2Codegen, LimitsNameTheField) {
    const auto& family = codegen::large::potf2_family();
    // 1024 x 32 doubles need 256 KB of shared memory: more than a block may have.
    EXPECT_EQ(family.can_implement(spec_of(Precision::d, Uplo::lower, 1024, 32)).rfind("nb:", 0), 0u);
    EXPECT_EQ(family.can_implement(spec_of(Precision::d, Uplo::lower, 1024, 16)), "");
    Potf2Spec bad = spec_of(Precision::s, Uplo::lower, 64, 16);
    bad.config.ib = 12;
    EXPECT_EQ(family.can_implement(bad).rfind("ib:", 0), 0u);
    bad = spec_of(Precision::z, Uplo::lower, 64, 16);
    EXPECT_EQ(family.can_implement(bad).rfind("precision:", 0), 0u);
    const Potf2Spec s = spec_of(Precision::d, Uplo::upper, 128, 16);
    EXPECT_EQ(family.generate(s).source, family.generate(s).source);
    EXPECT_NE(family.generate(s).source, family.generate(spec_of(Precision::d, Uplo::lower, 128, 16)).source);
}

}  // namespace
}  // namespace batchsolve::test
