// Tests of the large-matrix Cholesky solvers (cholesky_large.hpp) on every backend: potrf's backward
// error against LAPACK's for both triangles and every GPU configuration (variants, lookahead,
// recursion, inner blocking), the other triangle never touched, info at the first bad column (also
// in a later panel), potrs's backward error, posv_mixed reaching FP64 accuracy on a well-conditioned
// matrix and falling back (and saying so) on one with condition 1e9, argument errors. CUDA instances
// skip visibly without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../../src/core/cholesky_large_backend.hpp"
#include "../../src/host/lapack.hpp"
#include "../test_support.hpp"
#include "batchsolve/cholesky_large.hpp"

namespace batchsolve::test {
namespace {

// SPD matrix of order n, both triangles, packed (ld = n), condition number about `cond`: the
// library's generator (Q diag Q^T) up to order 600; above it (its QR is slow here), G G^T / n + I
// with G Gaussian, whose condition is modest (below ~10) and whose entries are O(1).
std::vector<double> spd_matrix(int n, double cond, std::uint64_t seed) {
    if (n <= 600) return generate_spd_batch<double>(n, 1, cond, seed);
    std::mt19937_64 engine(seed);
    std::normal_distribution<double> normal;
    std::vector<double> g(std::size_t(n) * n), a(std::size_t(n) * n);
    for (double& v : g) v = normal(engine);
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0 / n, g.data(), n, 0.0, a.data(), n);
    for (int j = 0; j < n; ++j) {
        a[std::size_t(j) * n + j] += 1.0;
        for (int i = j + 1; i < n; ++i) a[std::size_t(i) * n + j] = a[std::size_t(j) * n + i];
    }
    return a;
}

// The uplo triangle of packed A in T with leading dimension ld, everything else poisoned (NaN
// bytes): a routine that reads or writes outside its triangle is caught.
template <class T>
std::vector<T> stored_triangle(const std::vector<double>& a, int n, int ld, Uplo uplo) {
    std::vector<T> out(std::size_t(ld) * std::max(n, 1), poison_value<T>());
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
            if (uplo == Uplo::lower ? i >= j : i <= j) out[std::size_t(j) * ld + i] = T(a[std::size_t(j) * n + i]);
    return out;
}

// The matrix as the routine saw it (rounded to T), full, in double.
template <class T>
std::vector<double> as_seen(const std::vector<T>& stored, int n, int ld, Uplo uplo) {
    std::vector<double> a(std::size_t(n) * n);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            const bool in = uplo == Uplo::lower ? i >= j : i <= j;
            a[std::size_t(j) * n + i] = in ? double(stored[std::size_t(j) * ld + i]) : double(stored[std::size_t(i) * ld + j]);
        }
    return a;
}

// ||A - L L^T||_F / (n u ||A||_F) with L read from the factor (L = U^T for upper), in double.
template <class T>
double factor_backward_error(const std::vector<double>& a, const std::vector<T>& factor, int n, int ld, Uplo uplo) {
    std::vector<double> l(std::size_t(n) * n, 0.0);
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i)
            l[std::size_t(j) * n + i] =
                double(uplo == Uplo::lower ? factor[std::size_t(j) * ld + i] : factor[std::size_t(i) * ld + j]);
    std::vector<double> r = a;
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, -1.0, l.data(), n, 1.0, r.data(), n);
    double num = 0, den = 0;
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            const double w = i == j ? 1 : 2;
            num += w * r[std::size_t(j) * n + i] * r[std::size_t(j) * n + i];
            den += w * a[std::size_t(j) * n + i] * a[std::size_t(j) * n + i];
        }
    return std::sqrt(num) / (std::max(n, 1) * double(unit_roundoff<T>()) * std::sqrt(den));
}

// Entries outside the stored triangle still hold the poison.
template <class T>
bool other_triangle_untouched(const std::vector<T>& stored, int n, int ld, Uplo uplo) {
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < ld; ++i) {
            const bool in = i < n && (uplo == Uplo::lower ? i >= j : i <= j);
            if (!in && !is_poison(stored[std::size_t(j) * ld + i])) return false;
        }
    return true;
}

// max over columns of ||b - A x||_inf / (||A||_inf ||x||_inf n u).
template <class T>
double solve_backward_error(const std::vector<double>& a, const std::vector<T>& x, const std::vector<double>& b, int n,
                            int nrhs, double u) {
    double norm_a = 0;
    for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int j = 0; j < n; ++j) s += std::abs(a[std::size_t(j) * n + i]);
        norm_a = std::max(norm_a, s);
    }
    double worst = 0;
    for (int c = 0; c < nrhs; ++c) {
        double rmax = 0, xmax = 0;
        for (int i = 0; i < n; ++i) {
            long double s = b[std::size_t(c) * n + i];
            for (int j = 0; j < n; ++j) s -= (long double)a[std::size_t(j) * n + i] * (long double)x[std::size_t(c) * n + j];
            rmax = std::max(rmax, double(std::fabs(s)));
            xmax = std::max(xmax, std::abs(double(x[std::size_t(c) * n + i])));
        }
        worst = std::max(worst, rmax / (norm_a * xmax * n * u));
    }
    return worst;
}

template <class C>
class LargeCholesky : public BackendTest<C> {};

using Configs = ::testing::Types<Config<Backend::cpu, float>, Config<Backend::cpu, double>, Config<Backend::cuda, float>,
                                 Config<Backend::cuda, double>>;
TYPED_TEST_SUITE(LargeCholesky, Configs);

// Runs potrf on A's uplo triangle (ld = n + 3) and checks backward error, info and the other triangle.
template <class T>
void check_factor(Context& ctx, int n, Uplo uplo, const LargeCholeskyConfig& config, std::uint64_t seed) {
    SCOPED_TRACE(::testing::Message() << "n = " << n << ", " << to_string(uplo) << ", nb " << config.nb << " ib " << config.ib
                                      << " depth " << config.recursion_depth << " " << to_string(config.variant) << " strip "
                                      << to_string(config.strip)
                                      << (config.lookahead ? " lookahead" : ""));
    const int ld = n + 3;
    const std::vector<double> a = spd_matrix(n, 1e3, seed);
    const std::vector<T> stored = stored_triangle<T>(a, n, ld, uplo);
    Buffer<T> da(ctx, stored);
    Buffer<int> info(ctx, std::vector<int>{-7});  // poisoned: the routine must write it
    potrf<T>(uplo, n, da.data(), ld, info.data(), config, ctx);
    const std::vector<T> factor = da.to_host();
    ASSERT_EQ(info.to_host()[0], 0);
    EXPECT_TRUE(other_triangle_untouched(factor, n, ld, uplo));
    const double ours = factor_backward_error(as_seen(stored, n, ld, uplo), factor, n, ld, uplo);
    // LAPACK on the same input, for the scale of what a correct factor achieves.
    std::vector<T> lapack = stored;
    Context cpu(Backend::cpu);
    int lapack_info = -1;
    potrf<T>(uplo, n, lapack.data(), ld, &lapack_info, cpu);
    const double theirs = factor_backward_error(as_seen(stored, n, ld, uplo), lapack, n, ld, uplo);
    EXPECT_LT(ours, kAcceptance) << "LAPACK's: " << theirs;
    EXPECT_LT(ours, std::max(10 * theirs, 1.0)) << "LAPACK's: " << theirs;
}

TYPED_TEST(LargeCholesky, FactorBackwardErrorBothTriangles) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::vector<int> sizes = {1, 7, 64, 200, 513};
    if (this->is_cuda) sizes.insert(sizes.end(), {1100, 2500});
    for (int n : sizes)
        for (Uplo uplo : {Uplo::lower, Uplo::upper}) check_factor<T>(this->ctx(), n, uplo, LargeCholeskyConfig{}, seed + n);
}

// Every GPU code path: the three variants, the lookahead on and off, recursion depths, inner
// blockings, panel widths that do and do not divide n, fused and cuSOLVER diagonal blocks, TRSM and
// inverse panel solves (the CPU backend accepts and ignores them).
TYPED_TEST(LargeCholesky, EveryConfigurationFactorsCorrectly) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    // Panel shapes: narrow without recursion, a resident leaf of 64 under one level, deep recursion,
    // a wide non-resident leaf (256 x 256 stays in global memory). The emulation suites cover more
    // shapes without a GPU; here every shape meets every variant, strip and triangle (NVRTC compiles
    // each kernel once, which is most of this test's time on a fresh machine).
    struct Shape { int nb, ib, depth; };
    std::vector<LargeCholeskyConfig> configs;
    for (CholeskyVariant v : {CholeskyVariant::right_looking, CholeskyVariant::left_looking})
        for (bool lookahead : {true, false})
            for (Shape shape : {Shape{32, 8, 0}, Shape{96, 32, 1}, Shape{256, 16, 3}, Shape{256, 32, 0}})
                for (Potf2Strip strip : {Potf2Strip::columns, Potf2Strip::warp}) {
                    if (v == CholeskyVariant::left_looking && !lookahead) continue;
                    LargeCholeskyConfig c;
                    c.nb = shape.nb, c.ib = shape.ib, c.recursion_depth = shape.depth, c.variant = v, c.lookahead = lookahead;
                    c.strip = strip;
                    c.diagonal = CholeskyDiagonal::fused, c.panel_solve = PanelSolve::trsm;
                    configs.push_back(c);
                }
    // cuSOLVER's diagonal blocks, both panel solves, SYRKs split into GEMMs, every variant.
    for (CholeskyVariant v : {CholeskyVariant::right_looking, CholeskyVariant::left_looking, CholeskyVariant::recursive})
        for (PanelSolve solve : {PanelSolve::trsm, PanelSolve::inverse}) {
            LargeCholeskyConfig c;
            c.nb = 128, c.ib = 16, c.recursion_depth = 0, c.variant = v, c.strip = Potf2Strip::warp;
            c.lookahead = v == CholeskyVariant::right_looking, c.diagonal = CholeskyDiagonal::vendor, c.panel_solve = solve;
            c.syrk_leaf = 128;
            configs.push_back(c);
        }
    // The whole matrix by one Xpotrf (the blocking fields ignored), captured and not.
    for (bool graph : {false, true}) {
        LargeCholeskyConfig c;
        c.nb = 128, c.ib = 16, c.recursion_depth = 0, c.variant = CholeskyVariant::vendor, c.strip = Potf2Strip::warp;
        c.lookahead = false, c.diagonal = CholeskyDiagonal::fused, c.panel_solve = PanelSolve::inverse, c.syrk_leaf = 128;
        c.graph = graph;
        configs.push_back(c);
    }
    const int n = this->is_cuda ? 777 : 150;
    for (const auto& c : configs)
        for (Uplo uplo : {Uplo::lower, Uplo::upper}) check_factor<T>(this->ctx(), n, uplo, c, seed);
}

// config.graph: the first call captures, later calls with the same arguments replay; a replay reads
// A's current content (a second, different matrix at the same address is factored correctly), and a
// failing matrix still reports its info through the replay.
TYPED_TEST(LargeCholesky, GraphReplayFactorsTheCurrentContent) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = this->is_cuda ? 900 : 150;
    LargeCholeskyConfig c;
    c.graph = true;
    c.nb = 128;  // several panels: the lookahead's second stream is part of the graph
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        Buffer<T> da(this->ctx(), std::size_t(n) * n);
        Buffer<int> info(this->ctx(), 1);
        for (int round = 0; round < 3; ++round) {
            SCOPED_TRACE(::testing::Message() << to_string(uplo) << " round " << round);
            std::vector<double> a = spd_matrix(n, 1e2, seed + round);
            if (round == 2) spoil_matrix(a, n, 0, n / 2, BadMatrix::indefinite);
            const std::vector<T> stored = stored_triangle<T>(a, n, n, uplo);
            da.upload(stored);
            potrf<T>(uplo, n, da.data(), n, info.data(), c, this->ctx());
            if (round == 2) {
                EXPECT_EQ(info.to_host()[0], n / 2 + 1);
                continue;
            }
            ASSERT_EQ(info.to_host()[0], 0);
            EXPECT_LT(factor_backward_error(as_seen(stored, n, n, uplo), da.to_host(), n, n, uplo), kAcceptance);
        }
    }
}

TYPED_TEST(LargeCholesky, TensorCoreUpdatesStayWithinTheirAccuracy) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = this->is_cuda ? 1500 : 200;
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        const std::vector<double> a = spd_matrix(n, 1e2, seed);
        const std::vector<T> stored = stored_triangle<T>(a, n, n, uplo);
        Buffer<T> da(this->ctx(), stored);
        Buffer<int> info(this->ctx(), 1);
        LargeCholeskyConfig c;
        c.tf32_updates = true;
        potrf<T>(uplo, n, da.data(), n, info.data(), c, this->ctx());
        ASSERT_EQ(info.to_host()[0], 0);
        // TF32 products carry 2^-11 relative error: the factor's backward error is bounded by
        // that instead of u (float only; double ignores the option).
        const double scale = std::is_same_v<T, float> ? double(1 << 13) : 1.0;
        EXPECT_LT(factor_backward_error(as_seen(stored, n, n, uplo), da.to_host(), n, n, uplo), kAcceptance * scale);
    }
}

TYPED_TEST(LargeCholesky, InfoIsTheFirstBadColumn) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 300;
    LargeCholeskyConfig small_panels;
    small_panels.nb = 64, small_panels.ib = 16, small_panels.recursion_depth = 1;  // column 150 lies in panel 3
    for (BadMatrix kind : {BadMatrix::indefinite, BadMatrix::nan})
        for (int col : {0, 150, 299})
            for (Uplo uplo : {Uplo::lower, Uplo::upper})
                for (CholeskyVariant v : {CholeskyVariant::right_looking, CholeskyVariant::left_looking, CholeskyVariant::recursive,
                                          CholeskyVariant::vendor})
                for (CholeskyDiagonal diagonal : {CholeskyDiagonal::fused, CholeskyDiagonal::vendor}) {
                    const Potf2Strip strip = v == CholeskyVariant::left_looking ? Potf2Strip::warp : Potf2Strip::columns;
                    SCOPED_TRACE(::testing::Message() << "column " << col << (kind == BadMatrix::nan ? " NaN " : " indefinite ")
                                                      << to_string(uplo) << " " << to_string(v) << " " << to_string(strip) << " "
                                                      << to_string(diagonal));
                    std::vector<double> a = spd_matrix(n, 10, seed);
                    spoil_matrix(a, n, 0, col, kind);
                    Buffer<T> da(this->ctx(), stored_triangle<T>(a, n, n, uplo));
                    Buffer<int> info(this->ctx(), std::vector<int>{-7});
                    LargeCholeskyConfig c = small_panels;
                    c.variant = v;
                    c.strip = strip;
                    c.diagonal = diagonal;
                    c.panel_solve = diagonal == CholeskyDiagonal::vendor ? PanelSolve::inverse : PanelSolve::trsm;
                    potrf<T>(uplo, n, da.data(), n, info.data(), c, this->ctx());
                    EXPECT_EQ(info.to_host()[0], col + 1);
                }
}

TYPED_TEST(LargeCholesky, PotrsSolves) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = this->is_cuda ? 1200 : 300;
    for (int nrhs : {1, 5})
        for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
            const std::vector<double> a = spd_matrix(n, 1e3, seed);
            const std::vector<T> stored = stored_triangle<T>(a, n, n, uplo);
            std::mt19937_64 engine(seed + 1);
            std::uniform_real_distribution<double> uniform(-1, 1);
            std::vector<double> b(std::size_t(n) * nrhs);
            for (double& v : b) v = uniform(engine);
            std::vector<T> bt(b.begin(), b.end());
            Buffer<T> da(this->ctx(), stored), db(this->ctx(), bt);
            Buffer<int> info(this->ctx(), 1);
            potrf<T>(uplo, n, da.data(), n, info.data(), this->ctx());
            ASSERT_EQ(info.to_host()[0], 0);
            potrs<T>(uplo, n, nrhs, da.data(), n, db.data(), n, this->ctx());
            std::vector<double> b_seen(bt.begin(), bt.end());
            EXPECT_LT(solve_backward_error(as_seen(stored, n, n, uplo), db.to_host(), b_seen, n, nrhs, double(unit_roundoff<T>())),
                      kAcceptance)
                << "nrhs " << nrhs << " " << to_string(uplo);
        }
}

TYPED_TEST(LargeCholesky, ArgumentErrorsNameTheArgument) {
    using T = typename TypeParam::value_type;
    Buffer<T> a(this->ctx(), 16);
    Buffer<int> info(this->ctx(), 1);
    auto expect_argument = [](auto call, const std::string& name) {
        try {
            call();
            ADD_FAILURE() << "no InvalidArgument for " << name;
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    };
    expect_argument([&] { potrf<T>(Uplo::lower, 4, a.data(), 3, info.data(), this->ctx()); }, "lda");
    expect_argument([&] { potrf<T>(Uplo::lower, -1, a.data(), 4, info.data(), this->ctx()); }, "n");
    expect_argument([&] { potrf<T>(Uplo::lower, 4, a.data(), 4, nullptr, this->ctx()); }, "info");
    LargeCholeskyConfig c;
    c.nb = 48, c.ib = 32;
    expect_argument([&] { potrf<T>(Uplo::lower, 4, a.data(), 4, info.data(), c, this->ctx()); }, "config.nb");
    c.nb = 64, c.ib = 12;
    expect_argument([&] { potrf<T>(Uplo::lower, 4, a.data(), 4, info.data(), c, this->ctx()); }, "config.ib");
    c.ib = 16, c.recursion_depth = 9;
    expect_argument([&] { potrf<T>(Uplo::lower, 4, a.data(), 4, info.data(), c, this->ctx()); }, "config.recursion_depth");
    expect_argument([&] { potrs<T>(Uplo::lower, 4, 1, a.data(), 4, a.data() + 8, 3, this->ctx()); }, "ldb");
    expect_argument([&] { potrs<T>(Uplo::lower, 4, 1, a.data(), 4, a.data() + 8, 4, this->ctx()); }, "must not overlap");
    // n = 0 is a valid empty problem: info 0.
    Buffer<int> zero(this->ctx(), std::vector<int>{-7});
    potrf<T>(Uplo::upper, 0, a.data(), 1, zero.data(), this->ctx());
    EXPECT_EQ(zero.to_host()[0], 0);
}

// ---- posv_mixed (double via float) -----------------------------------------------------------------------

template <class C>
class PosvMixed : public BackendTest<C> {};
using DoubleConfigs = ::testing::Types<Config<Backend::cpu, double>, Config<Backend::cuda, double>>;
TYPED_TEST_SUITE(PosvMixed, DoubleConfigs);

struct MixedRun {
    PosvMixedResult result;
    std::vector<double> x;
    double backward_error = 0;  // recomputed here: ||b - A x|| / (||A|| ||x|| n u)
};

MixedRun run_mixed(Context& ctx, int n, int nrhs, double cond, Uplo uplo, const PosvMixedOptions& options,
                   std::uint64_t seed) {
    const std::vector<double> a = spd_matrix(n, cond, seed);
    const auto rhs = generate_rhs_batch<double>(a, n, 1, nrhs, seed + 1);
    Buffer<double> da(ctx, stored_triangle<double>(a, n, n, uplo)), db(ctx, rhs.b), dx(ctx, std::size_t(n) * nrhs);
    dx.fill_bytes(0xFF);  // poisoned output
    ctx.workspace(posv_mixed_workspace_size<double>(uplo, n, nrhs, options, ctx));
    MixedRun run;
    run.result = posv_mixed<double>(uplo, n, nrhs, da.data(), n, db.data(), n, dx.data(), n, options, ctx);
    run.x = dx.to_host();
    run.backward_error = solve_backward_error(a, run.x, rhs.b, n, nrhs, unit_roundoff<double>());
    return run;
}

TYPED_TEST(PosvMixed, ReachesDoubleAccuracyOnAWellConditionedMatrix) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = this->is_cuda ? 2000 : 400;
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
        for (int nrhs : {1, 3}) {
            const MixedRun run = run_mixed(this->ctx(), n, nrhs, 1e3, uplo, PosvMixedOptions{}, seed);
            SCOPED_TRACE(run.result.describe());
            EXPECT_EQ(run.result.path, PosvPath::single_refined);
            ASSERT_EQ(run.result.steps.size(), 1u);
            EXPECT_EQ(run.result.steps[0].outcome, PosvOutcome::converged);
            EXPECT_GE(run.result.iterations, 1);  // a float solve alone is not double-accurate at cond 1e3
            EXPECT_LE(run.result.normwise_residual, std::sqrt(double(n)) * std::numeric_limits<double>::epsilon());
            EXPECT_LT(run.backward_error, kAcceptance);
            EXPECT_LT(run.result.backward_error, kAcceptance * n * unit_roundoff<double>());
        }
}

TYPED_TEST(PosvMixed, FallsBackToDoubleWhenSingleCannotConverge) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 400;
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        const MixedRun run = run_mixed(this->ctx(), n, 2, 1e9, uplo, PosvMixedOptions{}, seed);
        SCOPED_TRACE(run.result.describe());
        EXPECT_EQ(run.result.path, PosvPath::double_direct);
        ASSERT_EQ(run.result.steps.size(), 2u);
        const PosvOutcome first = run.result.steps[0].outcome;
        EXPECT_TRUE(first == PosvOutcome::stalled || first == PosvOutcome::diverged ||
                    first == PosvOutcome::not_positive_definite || first == PosvOutcome::too_many_iterations)
            << to_string(first);
        EXPECT_EQ(run.result.steps[1].outcome, PosvOutcome::solved);
        EXPECT_NE(run.result.describe().find("-> double_direct: solved"), std::string::npos);
        EXPECT_LT(run.backward_error, kAcceptance);
    }
}

TYPED_TEST(PosvMixed, WithoutFallbackAFailureIsNaNNeverSilent) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    PosvMixedOptions options;
    options.allow_fallback = false;
    const MixedRun run = run_mixed(this->ctx(), 300, 1, 1e9, Uplo::lower, options, seed);
    SCOPED_TRACE(run.result.describe());
    EXPECT_EQ(run.result.path, PosvPath::none);
    EXPECT_TRUE(std::isnan(run.result.backward_error));
    for (double v : run.x) ASSERT_TRUE(std::isnan(v));
}

TYPED_TEST(PosvMixed, TensorCoreOptionConvergesOrSaysWhy) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    PosvMixedOptions options;
    options.tensor_core_updates = true;
    const int n = this->is_cuda ? 1500 : 300;
    const MixedRun run = run_mixed(this->ctx(), n, 1, 10, Uplo::lower, options, seed);
    SCOPED_TRACE(run.result.describe());
    EXPECT_EQ(run.result.path, PosvPath::single_refined);
    EXPECT_TRUE(run.result.steps[0].tensor_cores);
    EXPECT_LT(run.backward_error, kAcceptance);
}

// The tensor-core factors at leaf orders that split n = 1300 into many uneven leaves (128: the last
// leaves shorter; 384), both triangles, one and two right-hand sides (one: M^-1 by the whole-factor
// STRSV, or leaf by leaf when the table says panel_solve inverse; two: STRSM): double accuracy from the
// refined step itself at cond 1e3 (GMRES for FP16, whose classical rate there is ~0.5).
TYPED_TEST(PosvMixed, TensorCoreFactorsReachDoubleAccuracyAtEveryLeafOrder) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = this->is_cuda ? 1300 : 300;
    const std::pair<LowPrecision, CorrectionMethod> factors[] = {{LowPrecision::fp16_split, CorrectionMethod::automatic},
                                                                 {LowPrecision::fp16, CorrectionMethod::gmres},
                                                                 {LowPrecision::tf32, CorrectionMethod::automatic}};
    for (const auto& [precision, method] : factors)
        for (int leaf : {128, 384})
            for (Uplo uplo : {Uplo::lower, Uplo::upper})
                for (int nrhs : {1, 2}) {
                    PosvMixedOptions options;
                    options.factor_precision = precision;
                    options.method = method;
                    options.factor_leaf = leaf;
                    options.refinement_budget = 0;  // accuracy, not the cost bound, is under test
                    const MixedRun run = run_mixed(this->ctx(), n, nrhs, 1e3, uplo, options, seed + leaf + nrhs);
                    SCOPED_TRACE(std::string(to_string(precision)) + " leaf " + std::to_string(leaf) + " nrhs " +
                                 std::to_string(nrhs) + ": " + run.result.describe());
                    ASSERT_FALSE(run.result.steps.empty());
                    EXPECT_EQ(run.result.steps[0].outcome, PosvOutcome::converged);
                    EXPECT_NE(run.result.path, PosvPath::double_direct);
                    EXPECT_LT(run.backward_error, kAcceptance);
                }
}

// The fused classical pass (options.fused_pass: M^-1, then A (x + d) in one launch and x += d, r, its
// conversion down and both norms in another, one read a pass) beside the separate primitives on the
// same systems: the same chain, the criterion met by both, the passes within one of each other (the
// residual's summation order differs, so a pass at the criterion's edge may fall either side), double
// accuracy recomputed here; both triangles, an uneven n, the FP32 factor and a tensor-core one (whose
// automatic method may escalate to GMRES, which then runs unfused), strips of 1 and 8 tile rows.
TYPED_TEST(PosvMixed, FusedPassesMeetTheCriterionAsTheSeparateOnesDo) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = this->is_cuda ? 1777 : 301;
    for (LowPrecision precision : {LowPrecision::fp32, LowPrecision::fp16_split})
        for (double cond : {1e2, 1e5})
            for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
                PosvMixedOptions options;
                options.factor_precision = precision;
                options.refinement_budget = 0;
                options.fused_pass = 0;
                const MixedRun plain = run_mixed(this->ctx(), n, 1, cond, uplo, options, seed);
                for (int strip : {1, 8}) {
                    options.fused_pass = strip;
                    const MixedRun fused = run_mixed(this->ctx(), n, 1, cond, uplo, options, seed);
                    SCOPED_TRACE(std::string(to_string(precision)) + " cond " + std::to_string(cond) + " strip " +
                                 std::to_string(strip) + (uplo == Uplo::lower ? " lower" : " upper") + ": separate " +
                                 plain.result.describe() + " | fused " + fused.result.describe());
                    ASSERT_FALSE(fused.result.steps.empty());
                    EXPECT_EQ(fused.result.path, plain.result.path);
                    EXPECT_EQ(fused.result.steps[0].outcome, plain.result.steps[0].outcome);
                    EXPECT_LE(std::abs(fused.result.iterations - plain.result.iterations), 1);
                    EXPECT_LE(fused.result.normwise_residual,
                              std::max(std::sqrt(double(n)), 4.0) * std::numeric_limits<double>::epsilon());
                    EXPECT_LT(fused.backward_error, kAcceptance);
                    EXPECT_LT(fused.result.backward_error, kAcceptance * n * unit_roundoff<double>());
                }
            }
}

// A right-hand side beyond FP32's range: the fused step's first conversion overflows, the step ends
// with that outcome before any solve and the FP64 fallback answers, as without fusion.
TYPED_TEST(PosvMixed, FusedPassReportsAnOverflowingResidual) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 200;
    const std::vector<double> a = spd_matrix(n, 1e2, seed);
    std::vector<double> b(std::size_t(n), 1.0);
    b[17] = 1e300;
    for (int fused : {0, 8}) {
        PosvMixedOptions options;
        options.factor_precision = LowPrecision::fp32;
        options.fused_pass = fused;
        Buffer<double> da(this->ctx(), a), db(this->ctx(), b), dx(this->ctx(), std::size_t(n));
        this->ctx().workspace(posv_mixed_workspace_size<double>(Uplo::lower, n, 1, options, this->ctx()));
        const PosvMixedResult r = posv_mixed<double>(Uplo::lower, n, 1, da.data(), n, db.data(), n, dx.data(), n, options, this->ctx());
        SCOPED_TRACE("fused_pass " + std::to_string(fused) + ": " + r.describe());
        ASSERT_EQ(r.steps.size(), 2u);
        EXPECT_EQ(r.steps[0].outcome, PosvOutcome::overflow);
        EXPECT_EQ(r.path, PosvPath::double_direct);
        const std::vector<double> x = dx.to_host();
        EXPECT_LT(solve_backward_error(a, x, b, n, 1, unit_roundoff<double>()), kAcceptance);
    }
}

// posv_mixed's FP32 copy of A (convert_symmetric): into a poisoned square (NaN bytes) with a larger
// leading dimension, at an order that is not a multiple of the GPU's 32 x 32 tiles, from A whose other
// triangle is poisoned too: every entry of the square written, the stored triangle rounded to float
// and mirrored (exactly: no arithmetic), the padding rows untouched, no overflow reported; an Inf in
// the stored triangle reported, one in the other triangle not read.
TYPED_TEST(PosvMixed, ConversionWritesTheWholeSquareFromTheStoredTriangle) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 77, ldd = 80;
    const std::vector<double> a = spd_matrix(n, 1e3, seed);
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        SCOPED_TRACE(uplo == Uplo::lower ? "lower" : "upper");
        std::vector<double> stored = stored_triangle<double>(a, n, n, uplo);
        Buffer<double> da(this->ctx(), stored);
        Buffer<float> dst(this->ctx(), std::size_t(ldd) * n);
        dst.fill_bytes(0xFF);
        Buffer<int> overflow(this->ctx(), std::vector<int>{0});
        BATCHSOLVE_ON_BACKEND(this->ctx(), convert_symmetric<double>(uplo, n, da.data(), n, dst.data(), ldd, overflow.data(),
                                                                     this->ctx()));
        const std::vector<float> out = dst.to_host();
        EXPECT_EQ(overflow.to_host()[0], 0);
        for (int j = 0; j < n; ++j) {
            for (int i = 0; i < n; ++i)
                ASSERT_EQ(out[std::size_t(j) * ldd + i], float(a[std::size_t(j) * n + i])) << "entry (" << i << ", " << j << ")";
            for (int i = n; i < ldd; ++i) ASSERT_TRUE(std::isnan(out[std::size_t(j) * ldd + i])) << "padding row " << i << " written";
        }
        const int inside = uplo == Uplo::lower ? 5 * n + 40 : 40 * n + 5, outside = uplo == Uplo::lower ? 40 * n + 5 : 5 * n + 40;
        stored[std::size_t(outside)] = std::numeric_limits<double>::infinity();
        da.upload(stored);
        BATCHSOLVE_ON_BACKEND(this->ctx(), convert_symmetric<double>(uplo, n, da.data(), n, dst.data(), ldd, overflow.data(),
                                                                     this->ctx()));
        EXPECT_EQ(overflow.to_host()[0], 0) << "an entry outside the stored triangle was read";
        stored[std::size_t(inside)] = 1e300;  // not finite in float
        da.upload(stored);
        BATCHSOLVE_ON_BACKEND(this->ctx(), convert_symmetric<double>(uplo, n, da.data(), n, dst.data(), ldd, overflow.data(),
                                                                     this->ctx()));
        EXPECT_EQ(overflow.to_host()[0], 1);
    }
}

TYPED_TEST(PosvMixed, ArgumentErrors) {
    Buffer<double> a(this->ctx(), 16), b(this->ctx(), 8);
    auto expect_argument = [](auto call, const std::string& name) {
        try {
            call();
            ADD_FAILURE() << "no InvalidArgument for " << name;
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    };
    PosvMixedOptions o;
    expect_argument([&] { posv_mixed<double>(Uplo::lower, 4, 1, a.data(), 4, b.data(), 4, b.data(), 4, o, this->ctx()); }, "x");
    expect_argument([&] { posv_mixed<double>(Uplo::lower, 4, 1, a.data(), 4, b.data(), 4, b.data() + 4, 3, o, this->ctx()); },
                    "ldx");
    o.stall_ratio = 0;
    expect_argument([&] { posv_mixed<double>(Uplo::lower, 4, 1, a.data(), 4, b.data(), 4, b.data() + 4, 4, o, this->ctx()); },
                    "options.stall_ratio");
    EXPECT_EQ(posv_mixed<double>(Uplo::lower, 0, 1, a.data(), 1, b.data(), 1, b.data() + 4, 1, PosvMixedOptions{}, this->ctx()).path,
              PosvPath::none);
}

TEST(LargeCholeskyDefaults, TableCoversEveryOrderWithValidConfigurations) {
    for (int n : {1, 100, 1536, 1537, 4096, 6145, 32768, 100000}) {
        const auto d = cholesky_large_default_config<double>(n), s = cholesky_large_default_config<float>(n);
        for (const auto& c : {d, s}) {
            EXPECT_GE(c.nb, 32);
            EXPECT_EQ(c.nb % c.ib, 0);
            EXPECT_NE(c.variant, CholeskyVariant::automatic);
            EXPECT_GE(c.recursion_depth, 0);
            EXPECT_NE(c.strip, Potf2Strip::automatic);
        }
    }
    EXPECT_EQ(parse_cholesky_variant("left"), CholeskyVariant::left_looking);
    EXPECT_THROW(parse_cholesky_variant("diagonal"), InvalidArgument);
}

}  // namespace
}  // namespace batchsolve::test
