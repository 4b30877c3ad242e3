// posv_mixed on the CPU backend, through the same chain the GPU runs (the CPU factors its "FP16" step
// in FP32): every answer meets ||b - A x||_inf <= ||x||_inf ||A||_inf eps max(sqrt(n), 4) (measured
// here in long double from the original A, independently of the solver's own test) or the solver says
// it failed and returns NaN; GMRES-based refinement converges where classical refinement cannot; a
// matrix too ill-conditioned for the low factor ends at the FP64 fallback; upper storage and several
// right-hand sides give the same answers. Matrices Q diag(d) Q^T with a chosen condition number
// (generate_spd_batch); the seed of every case is printed, and BATCHSOLVE_TEST_SEED replays it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "batchsolve/cholesky_large.hpp"
#include "batchsolve/generate.hpp"

namespace batchsolve {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

std::uint64_t test_seed() {
    if (const char* s = std::getenv("BATCHSOLVE_TEST_SEED")) return std::strtoull(s, nullptr, 10);
    return std::random_device{}() * 4294967296ULL + std::random_device{}();
}

struct System {
    int n = 0, nrhs = 1;
    double cond = 0;
    std::uint64_t seed = 0;
    std::vector<double> a, b;  // A with both triangles
};

System make_system(int n, int nrhs, double cond, std::uint64_t seed) {
    System s;
    s.n = n, s.nrhs = nrhs, s.cond = cond, s.seed = seed;
    s.a = generate_spd_batch<double>(n, 1, cond, seed);
    std::mt19937_64 rng(seed ^ 0x5eed);
    std::uniform_real_distribution<double> u(-1, 1);
    s.b.resize(std::size_t(n) * nrhs);
    for (double& v : s.b) v = u(rng);
    return s;
}

// max_j ||b_j - A x_j||_inf / (||A||_inf ||x_j||_inf), in long double from the full A.
double scaled_residual(const System& s, const std::vector<double>& x) {
    const int n = s.n;
    long double norm_a = 0;
    for (int i = 0; i < n; ++i) {
        long double row = 0;
        for (int k = 0; k < n; ++k) row += std::fabs((long double)s.a[std::size_t(k) * n + i]);
        norm_a = std::max(norm_a, row);
    }
    double worst = 0;
    for (int j = 0; j < s.nrhs; ++j) {
        long double r = 0, xm = 0;
        for (int i = 0; i < n; ++i) {
            long double sum = s.b[std::size_t(j) * n + i];
            for (int k = 0; k < n; ++k) sum -= (long double)s.a[std::size_t(k) * n + i] * x[std::size_t(j) * n + k];
            r = std::max(r, std::fabs(sum));
            xm = std::max(xm, std::fabs((long double)x[std::size_t(j) * n + i]));
        }
        if (!std::isfinite(double(r)) || !std::isfinite(double(xm))) return std::numeric_limits<double>::infinity();
        worst = std::max(worst, double(r / (norm_a * xm)));
    }
    return worst;
}

double criterion(int n) { return kEps * std::max(std::sqrt(double(n)), 4.0); }

// Lower storage: the strict upper triangle poisoned (the solver must read only its triangle).
std::vector<double> only_triangle(const System& s, Uplo uplo) {
    std::vector<double> a = s.a;
    for (int j = 0; j < s.n; ++j)
        for (int i = 0; i < s.n; ++i)
            if (uplo == Uplo::lower ? i < j : i > j) a[std::size_t(j) * s.n + i] = std::numeric_limits<double>::quiet_NaN();
    return a;
}

// Every case: a fresh seed (printed by where(), replayed by BATCHSOLVE_TEST_SEED), systems from it, and
// posv_mixed on the CPU backend with A's other triangle poisoned and X poisoned (every entry must be
// written).
class PosvMixed : public ::testing::Test {
protected:
    System system(int n, int nrhs, double cond) const { return make_system(n, nrhs, cond, seed_); }

    PosvMixedResult solve(const System& s, Uplo uplo, const PosvMixedOptions& options, std::vector<double>& x) const {
        Context ctx(Backend::cpu);
        const std::vector<double> a = only_triangle(s, uplo);
        x.assign(std::size_t(s.n) * s.nrhs, -7.0);
        ctx.workspace(posv_mixed_workspace_size<double>(uplo, s.n, s.nrhs, options, ctx));
        return posv_mixed<double>(uplo, s.n, s.nrhs, a.data(), s.n, s.b.data(), s.n, x.data(), s.n, options, ctx);
    }

    static std::string where(const System& s) {
        return "seed " + std::to_string(s.seed) + " (BATCHSOLVE_TEST_SEED), n = " + std::to_string(s.n) + ", cond = " +
               std::to_string(s.cond);
    }

    const std::uint64_t seed_ = test_seed();
};

// The automatic chain on well- and ill-conditioned systems: a refined path, the criterion met.
TEST_F(PosvMixed, AutomaticChainMeetsTheCriterion) {
    for (double cond : {1e2, 1e5}) {
        const System s = system(160, 1, cond);
        std::vector<double> x;
        const PosvMixedResult r = solve(s, Uplo::lower, PosvMixedOptions{}, x);
        SCOPED_TRACE(where(s) + ": " + r.describe());
        EXPECT_TRUE(is_refined(r.path));
        EXPECT_LE(scaled_residual(s, x), criterion(s.n));
        EXPECT_LE(r.normwise_residual, criterion(s.n));
    }
}

// kappa(A) u_fp32 ~ 6: classical refinement with the FP32 factor gains little per pass (measured: about
// 30 passes to the criterion), GMRES preconditioned by the same factor needs a few; with ten passes
// allowed, classical ends without an answer (NaN) and GMRES and the automatic method (which escalates
// to it) meet the criterion.
TEST_F(PosvMixed, GmresConvergesWhereClassicalCannot) {
    const double cond = 1e8;
    const System s = system(120, 1, cond);
    PosvMixedOptions options;
    options.factor_precision = LowPrecision::fp16;  // on the CPU: the scaled FP32 factor
    options.allow_fallback = false;
    options.shift_units = 64;  // a positive definite factor, however the rounding falls
    options.max_iterations = 10;
    std::vector<double> x;
    options.method = CorrectionMethod::classical;
    const PosvMixedResult classical = solve(s, Uplo::lower, options, x);
    SCOPED_TRACE(where(s) + ": classical " + classical.describe());
    EXPECT_EQ(classical.path, SolvePath::none);
    for (double v : x) ASSERT_TRUE(std::isnan(v)) << "no NaN after a failed chain";
    for (CorrectionMethod m : {CorrectionMethod::gmres, CorrectionMethod::automatic}) {
        options.method = m;
        const PosvMixedResult r = solve(s, Uplo::lower, options, x);
        SCOPED_TRACE(std::string(to_string(m)) + " " + r.describe());
        EXPECT_EQ(r.path, SolvePath::half_refined);
        ASSERT_FALSE(r.steps.empty());
        EXPECT_TRUE(r.steps.back().gmres);
        EXPECT_GT(r.inner_iterations, 0);
        EXPECT_LE(scaled_residual(s, x), criterion(s.n));
    }
}

// Too ill-conditioned for any FP32 factor to precondition within the iteration limits: the chain ends
// at the FP64 fallback, whose answer meets the criterion; without the fallback: NaN, path none.
TEST_F(PosvMixed, FallsBackToDoubleWhenRefinementCannotConverge) {
    const double cond = 1e13;
    const System s = system(120, 1, cond);
    PosvMixedOptions options;
    options.gmres_restart = 8;
    options.max_iterations = 4;
    std::vector<double> x;
    const PosvMixedResult r = solve(s, Uplo::lower, options, x);
    SCOPED_TRACE(where(s) + ": " + r.describe());
    EXPECT_EQ(r.path, SolvePath::double_direct);
    EXPECT_GE(r.steps.size(), 2u);
    EXPECT_LE(scaled_residual(s, x), criterion(s.n));
    options.allow_fallback = false;
    const PosvMixedResult none = solve(s, Uplo::lower, options, x);
    EXPECT_EQ(none.path, SolvePath::none) << none.describe();
    for (double v : x) ASSERT_TRUE(std::isnan(v));
}

// Not positive definite even in FP64: every step fails, NaN; never a silently wrong X.
TEST_F(PosvMixed, IndefiniteMatrixEndsInNaN) {
    System s = system(64, 1, 1e2);
    s.a[std::size_t(20) * s.n + 20] = -1;
    std::vector<double> x;
    const PosvMixedResult r = solve(s, Uplo::lower, PosvMixedOptions{}, x);
    SCOPED_TRACE(where(s) + ": " + r.describe());
    EXPECT_EQ(r.path, SolvePath::none);
    ASSERT_FALSE(r.steps.empty());
    EXPECT_EQ(r.steps.front().outcome, StepOutcome::not_positive_definite);
    EXPECT_EQ(r.steps.front().column, 21);
    for (double v : x) ASSERT_TRUE(std::isnan(v));
}

// Upper storage, three right-hand sides, each design: the criterion for every column.
TEST_F(PosvMixed, EveryDesignUpperAndSeveralRightHandSides) {
    const System s = system(64, 3, 1e4);
    for (LowPrecision p : {LowPrecision::fp32, LowPrecision::tf32, LowPrecision::fp16, LowPrecision::bf16,
                           LowPrecision::fp16_split, LowPrecision::automatic})
        for (CorrectionMethod m : {CorrectionMethod::classical, CorrectionMethod::gmres, CorrectionMethod::automatic})
            for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
                PosvMixedOptions options;
                options.factor_precision = p, options.method = m;
                std::vector<double> x;
                const PosvMixedResult r = solve(s, uplo, options, x);
                SCOPED_TRACE(where(s) + " " + to_string(p) + "/" + to_string(m) + "/" +
                             (uplo == Uplo::lower ? "lower" : "upper") + ": " + r.describe());
                EXPECT_TRUE(is_refined(r.path));
                EXPECT_LE(scaled_residual(s, x), criterion(s.n));
            }
}

// A slowly converging system with a fallback: GMRES preconditioned by the FP32 factor needs many
// products at kappa(A) u_fp32 ~ 6. With the next step estimated far cheaper than any product (budget
// 1e-9 factors) the bound must end the refined step inside its first GMRES pass and the FP64 fallback
// answer, its backward error within the double bound (c n u); unbounded, the same chain stays refined.
TEST_F(PosvMixed, SlowGmresGivesWayToTheFallbackUnderTheCostBound) {
    const double cond = 1e8;
    const System s = system(120, 1, cond);
    PosvMixedOptions options;
    options.factor_precision = LowPrecision::fp16;  // on the CPU: the scaled FP32 factor
    options.method = CorrectionMethod::gmres;
    options.shift_units = 64;
    options.refinement_budget = 1e-9;
    std::vector<double> x;
    const PosvMixedResult r = solve(s, Uplo::lower, options, x);
    SCOPED_TRACE(where(s) + ": " + r.describe());
    ASSERT_GE(r.steps.size(), 2u);
    EXPECT_EQ(r.steps.front().outcome, StepOutcome::over_budget);
    EXPECT_GT(r.steps.front().factor_seconds, 0);
    EXPECT_EQ(r.path, SolvePath::double_direct);
    EXPECT_LE(r.backward_error, 4 * s.n * kEps / 2);
    EXPECT_LE(scaled_residual(s, x), criterion(s.n));
    options.refinement_budget = 0;
    const PosvMixedResult unbounded = solve(s, Uplo::lower, options, x);
    SCOPED_TRACE("unbounded: " + unbounded.describe());
    EXPECT_EQ(unbounded.path, SolvePath::half_refined);
    EXPECT_LE(scaled_residual(s, x), criterion(s.n));
}

// The fused classical pass (options.fused_pass) in the chains above: with ten passes allowed at
// kappa(A) u_fp32 ~ 6, classical refinement still ends without an answer (NaN, path none), and the
// automatic method still escalates from its fused classical passes to GMRES (unfused) and meets the
// criterion; on a well-conditioned system, both triangles, fused and separate passes converge alike.
TEST_F(PosvMixed, FusedPassesKeepTheChainsDecisions) {
    const System hard = system(120, 1, 1e8);
    PosvMixedOptions options;
    options.factor_precision = LowPrecision::fp16;
    options.allow_fallback = false;
    options.shift_units = 64;
    options.max_iterations = 10;
    options.fused_pass = 8;
    std::vector<double> x;
    options.method = CorrectionMethod::classical;
    const PosvMixedResult classical = solve(hard, Uplo::lower, options, x);
    SCOPED_TRACE(where(hard) + ": fused classical " + classical.describe());
    EXPECT_EQ(classical.path, SolvePath::none);
    for (double v : x) ASSERT_TRUE(std::isnan(v));
    options.method = CorrectionMethod::automatic;
    const PosvMixedResult automatic = solve(hard, Uplo::lower, options, x);
    SCOPED_TRACE("fused automatic " + automatic.describe());
    EXPECT_EQ(automatic.path, SolvePath::half_refined);
    ASSERT_FALSE(automatic.steps.empty());
    EXPECT_TRUE(automatic.steps.back().gmres);
    EXPECT_LE(scaled_residual(hard, x), criterion(hard.n));

    const System easy = system(97, 1, 1e3);
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        PosvMixedOptions o;
        o.method = CorrectionMethod::classical;
        o.fused_pass = 0;
        const PosvMixedResult separate = solve(easy, uplo, o, x);
        o.fused_pass = 3;
        const PosvMixedResult fused = solve(easy, uplo, o, x);
        SCOPED_TRACE(where(easy) + ": separate " + separate.describe() + " | fused " + fused.describe());
        EXPECT_EQ(fused.path, separate.path);
        EXPECT_LE(std::abs(fused.iterations - separate.iterations), 1);
        EXPECT_LE(scaled_residual(easy, x), criterion(easy.n));
        EXPECT_LE(fused.normwise_residual, criterion(easy.n));
    }
}

TEST_F(PosvMixed, RejectsBadOptions) {
    Context ctx(Backend::cpu);
    PosvMixedOptions o;
    o.gmres_restart = 0;
    EXPECT_THROW(posv_mixed_workspace_size<double>(Uplo::lower, 8, 1, o, ctx), InvalidArgument);
    o = PosvMixedOptions{};
    o.gmres_tolerance = 1.5;
    EXPECT_THROW(posv_mixed_workspace_size<double>(Uplo::lower, 8, 1, o, ctx), InvalidArgument);
    o = PosvMixedOptions{};
    o.refinement_budget = -0.5;
    EXPECT_THROW(posv_mixed_workspace_size<double>(Uplo::lower, 8, 1, o, ctx), InvalidArgument);
    for (int fused : {-2, 65}) {
        o = PosvMixedOptions{};
        o.fused_pass = fused;
        EXPECT_THROW(posv_mixed_workspace_size<double>(Uplo::lower, 8, 1, o, ctx), InvalidArgument) << fused;
    }
    EXPECT_EQ(parse_low_precision("fp16_split"), LowPrecision::fp16_split);
    EXPECT_THROW(parse_low_precision("fp8"), InvalidArgument);
    EXPECT_EQ(parse_correction_method("gmres"), CorrectionMethod::gmres);
}

}  // namespace
}  // namespace batchsolve
