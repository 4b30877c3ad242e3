// The CUDA backend's blocked Cholesky (src/cuda/large/algorithm.hpp) run on the CPU: the generated
// POTF2 kernels by the kernel emulator, TRSM/SYRK/GEMM by CBLAS, the two lanes one after the other
// (program order). Checks what the GPU run cannot show without a GPU: the recursion, both variants
// with and without lookahead, and the translation of the lower factor into BLAS calls for upper
// storage, against the backward error bound, with the other triangle untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../../src/host/lapack.hpp"
#include "../test_support.hpp"
#include "codegen/large/potf2.hpp"
#include "cuda/large/algorithm.hpp"
#include "emulator.hpp"

#include "emulated_potf2.inc"

namespace batchsolve::test {
namespace {

namespace lg = cuda_backend::large;

template <class T>
class CpuExecutor {
public:
    CpuExecutor(Uplo uplo, int lda, const LargeCholeskyConfig& c) : lda_(lda) {
        spec_.precision = std::is_same_v<T, float> ? Precision::s : Precision::d;
        spec_.uplo = uplo;
        spec_.capacity = lg::leaf_capacity(c.nb, c.recursion_depth, 32);
        spec_.config.ib = c.ib;
        spec_.config.strip = c.strip == Potf2Strip::warp ? codegen::large::StripFactor::warp : codegen::large::StripFactor::columns;
        spec_.config = codegen::large::potf2_family().default_config(spec_);
    }
    int info = 0;
    int kernels = 0;

    void potf2(lg::Lane, T* block, int m, int column_offset) {
        ASSERT_LE(m, spec_.capacity);
        const std::string name = codegen::large::potf2_kernel_name(spec_);
        const auto* found = std::find_if(std::begin(kEmulatedKernels), std::end(kEmulatedKernels),
                                         [&](const EmulatedKernel& k) { return name == k.name; });
        ASSERT_NE(found, std::end(kEmulatedKernels)) << name << " not emitted";
        int* info_ptr = &info;
        int lda = lda_;
        void* args[] = {&m, &block, &lda, &info_ptr, &column_offset};
        bs_emu::Dim3 grid, block_dim;
        block_dim.x = unsigned(spec_.config.threads);
        bs_emu::launch(found->entry, grid, block_dim, codegen::large::potf2_family().resources(spec_).shared_bytes, args);
        ++kernels;
    }
    void trsm(lg::Lane, lg::Side side, Uplo fill, lg::Trans t, int m, int n, const T* a, int lda, T* b, int ldb) {
        const auto s = side == lg::Side::left ? CblasLeft : CblasRight;
        const auto f = fill == Uplo::lower ? CblasLower : CblasUpper;
        const auto o = t == lg::Trans::yes ? CblasTrans : CblasNoTrans;
        if constexpr (std::is_same_v<T, float>) cblas_strsm(CblasColMajor, s, f, o, CblasNonUnit, m, n, 1.0f, a, lda, b, ldb);
        else cblas_dtrsm(CblasColMajor, s, f, o, CblasNonUnit, m, n, 1.0, a, lda, b, ldb);
    }
    void syrk(lg::Lane, Uplo fill, lg::Trans t, int n, int k, const T* a, int lda, T* c, int ldc) {
        const auto f = fill == Uplo::lower ? CblasLower : CblasUpper;
        const auto o = t == lg::Trans::yes ? CblasTrans : CblasNoTrans;
        if constexpr (std::is_same_v<T, float>) cblas_ssyrk(CblasColMajor, f, o, n, k, -1.0f, a, lda, 1.0f, c, ldc);
        else cblas_dsyrk(CblasColMajor, f, o, n, k, -1.0, a, lda, 1.0, c, ldc);
    }
    void gemm(lg::Lane, lg::Trans ta, lg::Trans tb, int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc) {
        const auto oa = ta == lg::Trans::yes ? CblasTrans : CblasNoTrans, ob = tb == lg::Trans::yes ? CblasTrans : CblasNoTrans;
        if constexpr (std::is_same_v<T, float>) cblas_sgemm(CblasColMajor, oa, ob, m, n, k, -1.0f, a, lda, b, ldb, 1.0f, c, ldc);
        else cblas_dgemm(CblasColMajor, oa, ob, m, n, k, -1.0, a, lda, b, ldb, 1.0, c, ldc);
    }
    // One thread runs both lanes in program order: a valid order of the GPU's two streams.
    void fork() {}
    void join() {}
    void panel_ready_signal() {}
    void panel_ready_wait() {}
    void update_done_signal() {}
    void update_done_wait() {}
    void begin(lg::Lane) {}
    void end(lg::Lane, lg::Phase) {}

private:
    int lda_;
    codegen::large::Potf2Spec spec_;
};

template <class T>
class AlgorithmEmulation : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(AlgorithmEmulation, Precisions);

TYPED_TEST(AlgorithmEmulation, EveryVariantFactorsBothTriangles) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 203, lda = n + 5;
    // Configurations whose leaves are the emitted kernels (capacity 32 ib 8, 64 ib 16, 96 ib 32).
    struct Shape { int nb, ib, depth; };
    const Shape shapes[] = {{32, 8, 0}, {128, 16, 1}, {192, 32, 1}, {64, 8, 1}};
    std::mt19937_64 engine(seed);
    std::normal_distribution<double> normal;
    std::vector<double> g(std::size_t(n) * n), a(std::size_t(n) * n);
    for (double& v : g) v = normal(engine);
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0 / n, g.data(), n, 0.0, a.data(), n);
    for (int j = 0; j < n; ++j) {
        a[std::size_t(j) * n + j] += 1;
        for (int i = j + 1; i < n; ++i) a[std::size_t(i) * n + j] = a[std::size_t(j) * n + i];
    }
    int index = 0;
    for (const Shape& shape : shapes)
        for (CholeskyVariant v : {CholeskyVariant::right_looking, CholeskyVariant::left_looking})
            for (bool lookahead : {true, false})
                for (Uplo u : {Uplo::lower, Uplo::upper}) {
                    if (v == CholeskyVariant::left_looking && !lookahead) continue;
                    LargeCholeskyConfig c;
                    c.nb = shape.nb, c.ib = shape.ib, c.recursion_depth = shape.depth, c.variant = v, c.lookahead = lookahead;
                    c.strip = (index++ % 2) ? Potf2Strip::warp : Potf2Strip::columns;
                    SCOPED_TRACE(::testing::Message() << "nb " << c.nb << " ib " << c.ib << " depth " << c.recursion_depth << " "
                                                      << to_string(v) << (lookahead ? " lookahead " : " ") << to_string(u) << " "
                                                      << to_string(c.strip));
                    std::vector<T> stored(std::size_t(lda) * n, poison_value<T>());
                    for (int j = 0; j < n; ++j)
                        for (int i = 0; i < n; ++i)
                            if (u == Uplo::lower ? i >= j : i <= j) stored[std::size_t(j) * lda + i] = T(a[std::size_t(j) * n + i]);
                    CpuExecutor<T> x(u, lda, c);
                    lg::BlockedCholesky<T, CpuExecutor<T>> algorithm(x, u, n, stored.data(), lda, c, 32);
                    const int panels = algorithm.run(false);
                    EXPECT_EQ(panels, (n + c.nb - 1) / c.nb);
                    ASSERT_EQ(x.info, 0);
                    double num = 0, den = 0;
                    auto l = [&](int i, int k) -> double {
                        return double(u == Uplo::lower ? stored[std::size_t(k) * lda + i] : stored[std::size_t(i) * lda + k]);
                    };
                    for (int j = 0; j < n; ++j)
                        for (int i = 0; i < lda; ++i) {
                            const bool in = i < n && (u == Uplo::lower ? i >= j : i <= j);
                            if (!in) {
                                ASSERT_TRUE(is_poison(stored[std::size_t(j) * lda + i])) << "(" << i << ", " << j << ") written";
                            }
                        }
                    for (int j = 0; j < n; ++j)
                        for (int i = j; i < n; ++i) {
                            double s = 0;
                            for (int k = 0; k <= j; ++k) s += l(i, k) * l(j, k);
                            const double aij = double(T(a[std::size_t(j) * n + i]));
                            num += (aij - s) * (aij - s), den += aij * aij;
                        }
                    EXPECT_LT(std::sqrt(num / den) / (n * double(unit_roundoff<T>())), kAcceptance);
                }
}

}  // namespace
}  // namespace batchsolve::test
