// The CUDA backend's blocked Cholesky (src/cuda/large/algorithm.hpp) run on the CPU: the generated
// POTF2 kernels by the kernel emulator, the vendor's diagonal blocks by LAPACKE (with the GPU's rule
// for their info), the leaf kernel's thread steps (cuda/large/leaf_cholesky.hpp) each thread in turn
// between its barriers, TRSM/SYRK/GEMM by CBLAS, the two lanes one after the other (program order).
// Checks what the GPU run cannot show without a GPU: the recursion of the diagonal blocks, the
// right-looking (with and without lookahead), left-looking and recursive variants, the inverse panel
// solve through its slice buffer, the SYRK split into GEMMs, the translation of the lower factor into
// BLAS calls for upper storage and the first bad column, against the backward error bound, with the
// other triangle untouched.
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
#include "cuda/large/leaf_cholesky.hpp"
#include "emulator.hpp"

#include "emulated_potf2.inc"

namespace batchsolve::test {
namespace {

namespace lg = cuda_backend::large;

template <class T>
class CpuExecutor {
public:
    CpuExecutor(Uplo uplo, int lda, const LargeCholeskyConfig& c, int slice_panels)
        : lda_(lda), uplo_(uplo), inverse_(std::size_t(c.nb) * c.nb, poison_value<T>()),
          slice_(std::size_t(lg::inverse_slice_rows(c.nb, slice_panels)) * c.nb, poison_value<T>()) {
        spec_.precision = std::is_same_v<T, float> ? Precision::s : Precision::d;
        spec_.uplo = uplo;
        spec_.capacity = lg::leaf_capacity(c.nb, c.recursion_depth, 32);
        spec_.config.ib = c.ib;
        spec_.config.strip = c.strip == Potf2Strip::warp ? codegen::large::StripFactor::warp : codegen::large::StripFactor::columns;
        spec_.config = codegen::large::potf2_family().default_config(spec_);
    }
    int info = 0;
    int kernels = 0;
    int vendor_blocks = 0;

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
    // LAPACKE on the block, then the CUDA executor's rule: the first of LAPACK's info and the first
    // diagonal entry that is not finite and positive, unless info is already set.
    void potrf_vendor(lg::Lane, T* block, int m, int column_offset) {
        const char fill = uplo_ == Uplo::lower ? 'L' : 'U';
        int reported = 0;
        if constexpr (std::is_same_v<T, float>) reported = LAPACKE_spotrf(LAPACK_COL_MAJOR, fill, m, block, lda_);
        else reported = LAPACKE_dpotrf(LAPACK_COL_MAJOR, fill, m, block, lda_);
        int column = m + 1;
        for (int j = 0; j < m; ++j) {
            const T d = block[std::size_t(j) * lda_ + j];
            if (!(std::isfinite(double(d)) && d > T(0))) {
                column = j + 1;
                break;
            }
        }
        if (reported > 0 && reported < column) column = reported;
        if (column <= m && info == 0) info = column_offset + column;
        ++vendor_blocks;
    }
    // The kernel's 256 threads one after the other between its barriers (their tiles kept apart).
    void potrf_leaf(lg::Lane, T* block, int m, int column_offset) {
        ASSERT_LE(m, lg::leaf::kMaxOrder);
        if (lg::leaf::tile_for(m) == 4) run_leaf<4>(block, m, column_offset);
        else run_leaf<8>(block, m, column_offset);
        ++leaf_blocks;
    }
    int leaf_blocks = 0;
    template <int TS>
    void run_leaf(T* block, int m, int column_offset) {
        namespace lf = lg::leaf;
        std::vector<lf::Tile<T, TS>> t(lf::kThreads);
        lf::Shared<T> s;
        for (auto& c : s.column) std::fill(std::begin(c), std::end(c), poison_value<T>());
        s.pivot[0] = s.pivot[1] = poison_value<T>();
        const bool lower = uplo_ == Uplo::lower;
        for (int tid = 0; tid < lf::kThreads; ++tid) lf::leaf_load<T, TS>(t[tid], tid, m, block, lda_, lower);
        int failed = 0;
        for (int jb = 0; jb < (m + TS - 1) / TS && !failed; ++jb)
            for (int jj = 0; jj < TS; ++jj) {
                for (int tid = 0; tid < lf::kThreads; ++tid) lf::leaf_publish<T, TS>(t[tid], tid, jb, jj, s);
                T v;
                if (!lf::leaf_pivot_ok<T>(s, jb * TS + jj, v)) {
                    failed = jb * TS + jj + 1;
                    break;
                }
                for (int tid = 0; tid < lf::kThreads; ++tid) lf::leaf_step<T, TS>(t[tid], tid, jb, jj, v, s);
            }
        for (int tid = 0; tid < lf::kThreads; ++tid) lf::leaf_store<T, TS>(t[tid], tid, m, block, lda_, lower);
        if (failed && info == 0) info = column_offset + failed;
    }
    T* inverse_buffer(lg::Lane) { return inverse_.data(); }
    T* slice_buffer(lg::Lane) { return slice_.data(); }
    void identity(lg::Lane, int m, T* w, int ldw) {
        for (int j = 0; j < m; ++j)
            for (int i = 0; i < m; ++i) w[std::size_t(j) * ldw + i] = i == j ? T(1) : T(0);
    }
    void copy(lg::Lane, int rows, int cols, const T* src, int lds, T* dst, int ldd) {
        ASSERT_LE(std::size_t(ldd) * (cols - 1) + rows, slice_.size()) << "slice buffer overrun";
        for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i) dst[std::size_t(j) * ldd + i] = src[std::size_t(j) * lds + i];
    }
    void gemm_assign(lg::Lane, lg::Trans ta, lg::Trans tb, int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c,
                     int ldc) {
        const auto oa = ta == lg::Trans::yes ? CblasTrans : CblasNoTrans, ob = tb == lg::Trans::yes ? CblasTrans : CblasNoTrans;
        if constexpr (std::is_same_v<T, float>) cblas_sgemm(CblasColMajor, oa, ob, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
        else cblas_dgemm(CblasColMajor, oa, ob, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
        ++gemms;
    }
    int gemms = 0, syrks = 0, trsms = 0;
    void trsm(lg::Lane, lg::Side side, Uplo fill, lg::Trans t, int m, int n, const T* a, int lda, T* b, int ldb) {
        const auto s = side == lg::Side::left ? CblasLeft : CblasRight;
        const auto f = fill == Uplo::lower ? CblasLower : CblasUpper;
        const auto o = t == lg::Trans::yes ? CblasTrans : CblasNoTrans;
        if constexpr (std::is_same_v<T, float>) cblas_strsm(CblasColMajor, s, f, o, CblasNonUnit, m, n, 1.0f, a, lda, b, ldb);
        else cblas_dtrsm(CblasColMajor, s, f, o, CblasNonUnit, m, n, 1.0, a, lda, b, ldb);
        ++trsms;
    }
    void syrk(lg::Lane, Uplo fill, lg::Trans t, int n, int k, const T* a, int lda, T* c, int ldc) {
        const auto f = fill == Uplo::lower ? CblasLower : CblasUpper;
        const auto o = t == lg::Trans::yes ? CblasTrans : CblasNoTrans;
        if constexpr (std::is_same_v<T, float>) cblas_ssyrk(CblasColMajor, f, o, n, k, -1.0f, a, lda, 1.0f, c, ldc);
        else cblas_dsyrk(CblasColMajor, f, o, n, k, -1.0, a, lda, 1.0, c, ldc);
        ++syrks;
        largest_syrk = std::max(largest_syrk, n);
    }
    int largest_syrk = 0;
    void gemm(lg::Lane, lg::Trans ta, lg::Trans tb, int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc) {
        const auto oa = ta == lg::Trans::yes ? CblasTrans : CblasNoTrans, ob = tb == lg::Trans::yes ? CblasTrans : CblasNoTrans;
        if constexpr (std::is_same_v<T, float>) cblas_sgemm(CblasColMajor, oa, ob, m, n, k, -1.0f, a, lda, b, ldb, 1.0f, c, ldc);
        else cblas_dgemm(CblasColMajor, oa, ob, m, n, k, -1.0, a, lda, b, ldb, 1.0, c, ldc);
        ++gemms;
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
    Uplo uplo_;
    codegen::large::Potf2Spec spec_;
    std::vector<T> inverse_, slice_;
};

template <class T>
class AlgorithmEmulation : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(AlgorithmEmulation, Precisions);

// SPD A = G G^T / n + I (both triangles, ld n).
std::vector<double> spd_matrix(int n, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::normal_distribution<double> normal;
    std::vector<double> g(std::size_t(n) * n), a(std::size_t(n) * n);
    for (double& v : g) v = normal(engine);
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0 / n, g.data(), n, 0.0, a.data(), n);
    for (int j = 0; j < n; ++j) {
        a[std::size_t(j) * n + j] += 1;
        for (int i = j + 1; i < n; ++i) a[std::size_t(i) * n + j] = a[std::size_t(j) * n + i];
    }
    return a;
}

// A's uplo triangle in an lda x n array whose other entries are poison.
template <class T>
std::vector<T> stored_triangle(const std::vector<double>& a, int n, int lda, Uplo u) {
    std::vector<T> stored(std::size_t(lda) * n, poison_value<T>());
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
            if (u == Uplo::lower ? i >= j : i <= j) stored[std::size_t(j) * lda + i] = T(a[std::size_t(j) * n + i]);
    return stored;
}

// The other triangle and the padding untouched, ||A - L L^T||_F / (n u ||A||_F) below the acceptance.
template <class T>
void expect_factor(const std::vector<T>& stored, const std::vector<double>& a, int n, int lda, Uplo u) {
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
    double num = 0, den = 0;
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            double s = 0;
            for (int k = 0; k <= j; ++k) s += l(i, k) * l(j, k);
            const double aij = double(T(a[std::size_t(j) * n + i]));
            num += (aij - s) * (aij - s), den += aij * aij;
        }
    EXPECT_LT(std::sqrt(num / den) / (n * double(unit_roundoff<T>())), kAcceptance);
}

TYPED_TEST(AlgorithmEmulation, EveryVariantFactorsBothTriangles) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 203, lda = n + 5;
    // Configurations whose leaves are the emitted kernels (capacity 32 ib 8, 64 ib 16, 96 ib 32).
    struct Shape { int nb, ib, depth; };
    const Shape shapes[] = {{32, 8, 0}, {128, 16, 1}, {192, 32, 1}, {64, 8, 1}};
    const std::vector<double> a = spd_matrix(n, seed);
    int index = 0;
    for (const Shape& shape : shapes)
        for (CholeskyVariant v : {CholeskyVariant::right_looking, CholeskyVariant::left_looking})
            for (bool lookahead : {true, false})
                for (Uplo u : {Uplo::lower, Uplo::upper}) {
                    if (v == CholeskyVariant::left_looking && !lookahead) continue;
                    LargeCholeskyConfig c;
                    c.nb = shape.nb, c.ib = shape.ib, c.recursion_depth = shape.depth, c.variant = v, c.lookahead = lookahead;
                    c.strip = (index++ % 2) ? Potf2Strip::warp : Potf2Strip::columns;
                    c.diagonal = CholeskyDiagonal::fused, c.panel_solve = PanelSolve::trsm, c.syrk_leaf = 1024;
                    SCOPED_TRACE(::testing::Message() << "nb " << c.nb << " ib " << c.ib << " depth " << c.recursion_depth << " "
                                                      << to_string(v) << (lookahead ? " lookahead " : " ") << to_string(u) << " "
                                                      << to_string(c.strip));
                    std::vector<T> stored = stored_triangle<T>(a, n, lda, u);
                    CpuExecutor<T> x(u, lda, c, 8);
                    lg::BlockedCholesky<T, CpuExecutor<T>> algorithm(x, u, n, stored.data(), lda, c, 32, 8);
                    const int panels = algorithm.run(false);
                    EXPECT_EQ(panels, (n + c.nb - 1) / c.nb);
                    ASSERT_EQ(x.info, 0);
                    expect_factor(stored, a, n, lda, u);
                }
}

// Every variant with each diagonal-block factor (fused, vendor, leaf), both panel solves (TRSM, inverse
// through a one-panel slice, so that a panel's rows take several slices) and SYRKs split down to 64.
TYPED_TEST(AlgorithmEmulation, EveryDesignFactorsBothTriangles) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 203, lda = n + 3, nb = 64, slice_panels = 1;
    const std::vector<double> a = spd_matrix(n, seed);
    struct Variant { CholeskyVariant v; bool lookahead; };
    const Variant variants[] = {{CholeskyVariant::right_looking, true}, {CholeskyVariant::right_looking, false},
                                {CholeskyVariant::left_looking, false}, {CholeskyVariant::recursive, false}};
    for (const Variant& variant : variants)
        for (CholeskyDiagonal d : {CholeskyDiagonal::fused, CholeskyDiagonal::vendor, CholeskyDiagonal::leaf})
            for (PanelSolve p : {PanelSolve::trsm, PanelSolve::inverse})
                for (Uplo u : {Uplo::lower, Uplo::upper}) {
                    LargeCholeskyConfig c;
                    c.nb = nb, c.ib = 8, c.recursion_depth = 1, c.strip = Potf2Strip::warp;
                    c.variant = variant.v, c.lookahead = variant.lookahead, c.diagonal = d, c.panel_solve = p, c.syrk_leaf = 64;
                    SCOPED_TRACE(::testing::Message() << to_string(variant.v) << (variant.lookahead ? " lookahead " : " ")
                                                      << to_string(d) << " " << to_string(p) << " " << to_string(u));
                    std::vector<T> stored = stored_triangle<T>(a, n, lda, u);
                    CpuExecutor<T> x(u, lda, c, slice_panels);
                    lg::BlockedCholesky<T, CpuExecutor<T>> algorithm(x, u, n, stored.data(), lda, c, 32, slice_panels);
                    const int panels = algorithm.run(false);
                    EXPECT_EQ(panels, (n + nb - 1) / nb);
                    ASSERT_EQ(x.info, 0);
                    EXPECT_EQ(x.vendor_blocks, d == CholeskyDiagonal::vendor ? panels : 0);
                    EXPECT_EQ(x.leaf_blocks, d == CholeskyDiagonal::leaf ? panels : 0);
                    EXPECT_LE(x.largest_syrk, c.syrk_leaf);
                    EXPECT_GT(x.gemms, 0);
                    expect_factor(stored, a, n, lda, u);
                }
}

// The whole-matrix vendor variant: one Xpotrf (LAPACK here) of order n, no panel solve, no update,
// whatever the blocking fields say; both triangles, lda > n.
TYPED_TEST(AlgorithmEmulation, VendorVariantIsOneWholeMatrixFactor) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 203, lda = n + 2;
    const std::vector<double> a = spd_matrix(n, seed);
    for (PanelSolve p : {PanelSolve::trsm, PanelSolve::inverse})
        for (Uplo u : {Uplo::lower, Uplo::upper}) {
            SCOPED_TRACE(::testing::Message() << to_string(p) << " " << to_string(u));
            LargeCholeskyConfig c;
            c.nb = 64, c.ib = 8, c.recursion_depth = 1, c.strip = Potf2Strip::warp, c.variant = CholeskyVariant::vendor;
            c.lookahead = true, c.diagonal = CholeskyDiagonal::fused, c.panel_solve = p, c.syrk_leaf = 64;
            std::vector<T> stored = stored_triangle<T>(a, n, lda, u);
            CpuExecutor<T> x(u, lda, c, 8);
            lg::BlockedCholesky<T, CpuExecutor<T>> algorithm(x, u, n, stored.data(), lda, c, 32, 8);
            EXPECT_EQ(algorithm.run(false), 1);
            ASSERT_EQ(x.info, 0);
            EXPECT_EQ(x.vendor_blocks, 1);
            EXPECT_EQ(x.kernels, 0);
            EXPECT_EQ(x.gemms, 0);
            expect_factor(stored, a, n, lda, u);
        }
}

// The leaf kernel's 8 x 8 tiles (blocks of 65 to 128) and its padding (a last block of 45 = 301 - 256;
// nb 100 is no multiple of the tile), right-looking with lookahead and recursive, both triangles.
TYPED_TEST(AlgorithmEmulation, LeafBlocksUpTo128FactorBothTriangles) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 301, lda = n + 1;
    const std::vector<double> a = spd_matrix(n, seed);
    for (int nb : {128, 100})
        for (CholeskyVariant v : {CholeskyVariant::right_looking, CholeskyVariant::recursive})
            for (Uplo u : {Uplo::lower, Uplo::upper}) {
                SCOPED_TRACE(::testing::Message() << "nb " << nb << " " << to_string(v) << " " << to_string(u));
                LargeCholeskyConfig c;
                c.nb = nb, c.ib = 8, c.recursion_depth = 0, c.strip = Potf2Strip::warp, c.variant = v;
                c.lookahead = true, c.diagonal = CholeskyDiagonal::leaf, c.panel_solve = PanelSolve::trsm, c.syrk_leaf = 64;
                std::vector<T> stored = stored_triangle<T>(a, n, lda, u);
                CpuExecutor<T> x(u, lda, c, 8);
                lg::BlockedCholesky<T, CpuExecutor<T>> algorithm(x, u, n, stored.data(), lda, c, 32, 8);
                const int panels = algorithm.run(false);
                ASSERT_EQ(x.info, 0);
                EXPECT_EQ(x.leaf_blocks, panels);
                expect_factor(stored, a, n, lda, u);
            }
}

// A pivot that is negative or NaN at column col (0-based) makes info col + 1, through later panels,
// the recursion and both diagonal-block factors.
TYPED_TEST(AlgorithmEmulation, InfoIsTheFirstBadColumn) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 203, lda = n, nb = 64;
    const std::vector<double> good = spd_matrix(n, seed);
    for (int col : {0, 70, 150})
        for (bool nan : {false, true})
            for (CholeskyVariant v : {CholeskyVariant::right_looking, CholeskyVariant::recursive, CholeskyVariant::vendor})
                for (CholeskyDiagonal d : {CholeskyDiagonal::fused, CholeskyDiagonal::vendor, CholeskyDiagonal::leaf})
                    for (Uplo u : {Uplo::lower, Uplo::upper}) {
                        SCOPED_TRACE(::testing::Message() << "column " << col << (nan ? " NaN " : " negative ") << to_string(v) << " "
                                                          << to_string(d) << " " << to_string(u));
                        std::vector<double> a = good;
                        a[std::size_t(col) * n + col] = nan ? std::nan("") : -1.0;
                        LargeCholeskyConfig c;
                        c.nb = nb, c.ib = 8, c.recursion_depth = 1, c.strip = Potf2Strip::columns, c.variant = v;
                        c.lookahead = true, c.diagonal = d, c.panel_solve = PanelSolve::inverse, c.syrk_leaf = 64;
                        std::vector<T> stored = stored_triangle<T>(a, n, lda, u);
                        CpuExecutor<T> x(u, lda, c, 8);
                        lg::BlockedCholesky<T, CpuExecutor<T>> algorithm(x, u, n, stored.data(), lda, c, 32, 8);
                        algorithm.run(false);
                        EXPECT_EQ(x.info, col + 1);
                    }
}

}  // namespace
}  // namespace batchsolve::test
