// The generated triangular kernels (codegen/triangular) compile through NVRTC for sm_90 in every
// kind, precision and orientation, with the default and the extreme register blockings, without
// spilling (no GPU needed: CI runs this).
#include <gtest/gtest.h>

#include "codegen/triangular/triangular.hpp"
#include "cuda/jit/jit.hpp"

namespace batchsolve::codegen::triangular {
namespace {

TEST(TriangularCodegen, EveryKernelCompilesWithoutSpills) {
    int compiled = 0;
    for (KernelKind kind : {KernelKind::solve, KernelKind::multiply, KernelKind::invert, KernelKind::potrf_panel})
        for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z})
            for (bool lower : {true, false})
                for (auto [cpt, warps] : {std::pair{2, 4}, std::pair{1, 1}, std::pair{4, 8}}) {
                    if (kind == KernelKind::potrf_panel && (!lower || cpt != 2)) continue;
                    if (kind == KernelKind::invert && cpt != 2) continue;
                    TriangularKernelSpec spec;
                    spec.kind = kind, spec.precision = p, spec.lower = lower;
                    spec.config.columns_per_thread = cpt, spec.config.warps_per_block = warps;
                    ASSERT_EQ(triangular_family().can_implement(spec), "");
                    KernelSource source = triangular_family().generate(spec);
                    SCOPED_TRACE(source.kernel_name);
                    source.options.push_back("--ptxas-options=-v");
                    std::string log;
                    ASSERT_NO_THROW(cuda_backend::jit::compile_to_cubin(source, 90, &log));
                    const cuda_backend::jit::PtxasStats stats = cuda_backend::jit::parse_ptxas_log(log, source.kernel_name);
                    EXPECT_EQ(stats.spill_store_bytes, 0) << log;
                    ++compiled;
                }
    EXPECT_EQ(compiled, 60);  // (2 kinds x 3 blockings + invert) x 4 precisions x 2 orientations + 4 panels
}

TEST(TriangularCodegen, NamesAreDistinctAndStable) {
    TriangularKernelSpec a, b;
    b.lower = false;
    EXPECT_NE(triangular_family().kernel_name(a), triangular_family().kernel_name(b));
    EXPECT_EQ(triangular_family().generate(a).source, triangular_family().generate(a).source);
    a.config.columns_per_thread = 5;
    EXPECT_NE(triangular_family().can_implement(a), "");
}

}  // namespace
}  // namespace batchsolve::codegen::triangular
