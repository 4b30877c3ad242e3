// The mixed-precision refinement driver (src/core/refinement.hpp) with plug-ins whose quality the
// test sets, on the CPU backend: a factor too weak to refine with ends in the stated outcome and
// the fallback's answer (or NaN without a fallback), never in a silently worse X; a TF32 step that
// fails for precision is repeated without TF32; a custom Corrector is the one the passes use.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "../../src/core/refinement.hpp"
#include "../../src/host/lapack.hpp"
#include "batchsolve/generate.hpp"
#include "batchsolve/refinement.hpp"

namespace batchsolve {
namespace {

using refinement::ChainStep;
using refinement::Driver;
using refinement::Layout;
using refinement::Operator;
using refinement::Scratch;

constexpr double kEps = std::numeric_limits<double>::epsilon();

// The float Cholesky factor of A (lower), whose solve is multiplied by `gain`: the error of a pass
// is then multiplied by I - gain A M^-1 ~ (1 - gain) I. gain 1: refinement converges; gain 3: the
// error doubles each pass (diverges); gain 0.05: it shrinks by 0.95 (stalls at stall_ratio 0.9);
// gain 0.5: it halves (neither stalls nor meets the criterion within two corrections). A gain
// multiplies the correction, so the driver's tests see exactly what a bad factor would give them.
class ScaledFactor final : public refinement::LowFactor<double> {
public:
    ScaledFactor(const std::vector<double>& a, int n, double gain, double tf32_gain = 0)
        : a_(a), n_(n), gain_(gain), tf32_gain_(tf32_gain) {}
    // Wall time a factorisation and a solve take at least (the cost-bound tests set the ratio of a
    // pass to a factor, as a large matrix on a GPU has it).
    std::chrono::milliseconds factor_delay{0}, solve_delay{0};
    SolvePath path() const override { return SolvePath::single_refined; }
    int rows(const Operator<double>&) const override { return n_; }
    bool factor(const Operator<double>&, bool tensor_cores, const Scratch& scratch, SolveStep& step, Context&) override {
        ++factorisations;
        std::this_thread::sleep_for(factor_delay);
        used_gain_ = tensor_cores && tf32_gain_ != 0 ? tf32_gain_ : gain_;
        float* low = static_cast<float*>(scratch.matrix);
        for (std::size_t k = 0; k < a_.size(); ++k) low[k] = float(a_[k]);
        const lapack_int info = LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', n_, low, n_);
        if (info != 0) {
            step.outcome = StepOutcome::not_positive_definite;
            step.column = int(info);
            return false;
        }
        return true;
    }
    void solve(const Operator<double>&, int nrhs, float* d, int ldd, const Scratch& scratch, Context&) override {
        std::this_thread::sleep_for(solve_delay);
        LAPACKE_spotrs(LAPACK_COL_MAJOR, 'L', n_, nrhs, static_cast<const float*>(scratch.matrix), n_, d, ldd);
        for (int j = 0; j < nrhs; ++j)
            for (int i = 0; i < n_; ++i) d[std::size_t(j) * ldd + i] *= float(used_gain_);
    }
    int factorisations = 0;

private:
    const std::vector<double>& a_;
    int n_;
    double gain_, tf32_gain_, used_gain_ = 1;
};

// A factor that always breaks down (the chain must move on).
class BrokenFactor final : public refinement::LowFactor<double> {
public:
    explicit BrokenFactor(int n) : n_(n) {}
    SolvePath path() const override { return SolvePath::nopiv_low; }
    int rows(const Operator<double>&) const override { return n_; }
    bool factor(const Operator<double>&, bool, const Scratch&, SolveStep& step, Context&) override {
        step.outcome = StepOutcome::breakdown;
        step.column = 3;
        return false;
    }
    void solve(const Operator<double>&, int, float*, int, const Scratch&, Context&) override {
        ADD_FAILURE() << "solve after a breakdown";
    }

private:
    int n_;
};

// LAPACK's dposv on a copy of A.
class DirectCholesky final : public refinement::DirectSolve<double> {
public:
    DirectCholesky(const std::vector<double>& a, int n) : a_(a), n_(n) {}
    SolveStep solve(const Operator<double>&, int nrhs, double* x, int ldx, const Scratch& scratch, Context&) override {
        SolveStep step;
        step.path = SolvePath::double_direct;
        double* copy = static_cast<double*>(scratch.matrix);
        std::copy(a_.begin(), a_.end(), copy);
        const lapack_int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n_, nrhs, copy, n_, x, ldx);
        step.outcome = info == 0 ? StepOutcome::solved : StepOutcome::not_positive_definite;
        step.column = int(info);
        return step;
    }

private:
    const std::vector<double>& a_;
    int n_;
};

// Counts the passes and delegates to classical refinement (the slot a GMRES corrector takes).
class CountingCorrector final : public refinement::Corrector<double> {
public:
    bool correct(refinement::LowFactor<double>& f, const refinement::Pass<double>& p, Context& ctx) override {
        ++passes;
        return classical_.correct(f, p, ctx);
    }
    int passes = 0;

private:
    refinement::ClassicalCorrector<double> classical_;
};

struct System {
    static constexpr int n = 96;
    static constexpr int nrhs = 2;
    static constexpr double cond = 1e4;
    std::vector<double> a, b, x_exact;

    explicit System(std::uint64_t seed) {
        a = generate_spd_batch<double>(n, 1, cond, seed);
        std::mt19937_64 engine(seed + 1);
        std::uniform_real_distribution<double> u(-1, 1);
        b.resize(std::size_t(n) * nrhs);
        for (double& v : b) v = u(engine);
        std::vector<double> factor = a;
        x_exact = b;
        EXPECT_EQ(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, nrhs, factor.data(), n, x_exact.data(), n), 0);
    }
    // max_j ||x_j - x_exact_j||_inf / ||x_exact_j||_inf
    double forward_error(const std::vector<double>& x) const {
        double worst = 0;
        for (int j = 0; j < nrhs; ++j) {
            double diff = 0, size = 0;
            for (int i = 0; i < n; ++i) {
                const std::size_t k = std::size_t(j) * n + i;
                diff = std::max(diff, std::abs(x[k] - x_exact[k]));
                size = std::max(size, std::abs(x_exact[k]));
            }
            worst = std::max(worst, diff / size);
        }
        return worst;
    }
};

struct ChainRun {
    MixedResult result;
    std::vector<double> x;
};

ChainRun run_chain(const System& s, const std::vector<ChainStep<double>>& chain, const RefinementOptions& options,
              refinement::Corrector<double>* corrector = nullptr) {
    Context ctx(Backend::cpu);
    const Operator<double> op{Uplo::lower, Symmetry::symmetric, System::n, s.a.data(), System::n};
    const Layout layout = Layout::of<double>(System::n, System::nrhs, System::n, s.a.size() * sizeof(double));
    ChainRun run;
    run.x.assign(s.b.size(), -7.0);  // poison: every entry must be written
    Driver<double> driver(op, System::nrhs, s.b.data(), System::n, run.x.data(), System::n, options, layout,
                          ctx.workspace(layout.total), ctx, corrector);
    run.result = driver.run(chain);
    return run;
}

// Accepted answers: backward error within a small multiple of n eps; forward error within cond
// times that (the system is solved to working precision, whichever step produced it).
void expect_accurate(const System& s, const ChainRun& run) {
    EXPECT_LE(run.result.backward_error, 4 * System::n * kEps) << run.result.describe();
    EXPECT_LE(run.result.normwise_residual, 4 * System::n * kEps) << run.result.describe();
    EXPECT_LE(s.forward_error(run.x), System::cond * 4 * System::n * kEps) << run.result.describe();
}

TEST(RefinementDriver, GoodFactorConverges) {
    const System s(101);
    ScaledFactor low(s.a, System::n, 1.0);
    DirectCholesky direct(s.a, System::n);
    const ChainRun run = run_chain(s, {{&low, nullptr}, {nullptr, &direct}}, RefinementOptions{});
    ASSERT_EQ(run.result.steps.size(), 1u) << run.result.describe();
    EXPECT_EQ(run.result.path, SolvePath::single_refined);
    EXPECT_EQ(run.result.steps[0].outcome, StepOutcome::converged);
    EXPECT_GE(run.result.iterations, 1);  // float's factor alone does not reach double's criterion
    expect_accurate(s, run);
}

TEST(RefinementDriver, DivergingFactorFallsBackToTheDirectSolve) {
    const System s(202);
    ScaledFactor low(s.a, System::n, 3.0);
    DirectCholesky direct(s.a, System::n);
    const ChainRun run = run_chain(s, {{&low, nullptr}, {nullptr, &direct}}, RefinementOptions{});
    ASSERT_EQ(run.result.steps.size(), 2u) << run.result.describe();
    EXPECT_EQ(run.result.steps[0].outcome, StepOutcome::diverged);
    EXPECT_EQ(run.result.steps[1].outcome, StepOutcome::solved);
    EXPECT_EQ(run.result.path, SolvePath::double_direct);
    EXPECT_EQ(run.result.iterations, 0);
    expect_accurate(s, run);
}

TEST(RefinementDriver, StalledRefinementReportsStalledThenFallsBack) {
    const System s(303);
    ScaledFactor low(s.a, System::n, 0.05);
    DirectCholesky direct(s.a, System::n);
    RefinementOptions options;
    options.stall_ratio = 0.9;
    const ChainRun run = run_chain(s, {{&low, nullptr}, {nullptr, &direct}}, options);
    ASSERT_EQ(run.result.steps.size(), 2u) << run.result.describe();
    EXPECT_EQ(run.result.steps[0].outcome, StepOutcome::stalled);
    // r_k ~ 0.95^k b and x_k ~ (1 - 0.95^k) x: the scaled residual's ratio 0.95 (1 - q^k) / (1 - q^(k+1))
    // passes 0.9 near k = 13, well before the iteration limit.
    EXPECT_GT(run.result.steps[0].iterations, 5);
    EXPECT_LT(run.result.steps[0].iterations, options.max_iterations);
    EXPECT_EQ(run.result.path, SolvePath::double_direct);
    EXPECT_NE(run.result.describe().find("single_refined: stalled after"), std::string::npos) << run.result.describe();
    expect_accurate(s, run);
}

TEST(RefinementDriver, IterationLimitReportsTooManyIterations) {
    const System s(404);
    ScaledFactor low(s.a, System::n, 0.5);
    DirectCholesky direct(s.a, System::n);
    RefinementOptions options;
    options.max_iterations = 2;
    const ChainRun run = run_chain(s, {{&low, nullptr}, {nullptr, &direct}}, options);
    ASSERT_EQ(run.result.steps.size(), 2u) << run.result.describe();
    EXPECT_EQ(run.result.steps[0].outcome, StepOutcome::too_many_iterations);
    EXPECT_EQ(run.result.steps[0].iterations, 2);
    EXPECT_EQ(run.result.path, SolvePath::double_direct);
    expect_accurate(s, run);
}

TEST(RefinementDriver, WeakFactorWithoutFallbackReturnsNaNNotAWorseAnswer) {
    const System s(505);
    for (double gain : {3.0, 0.05}) {
        ScaledFactor low(s.a, System::n, gain);
        const ChainRun run = run_chain(s, {{&low, nullptr}}, RefinementOptions{});
        EXPECT_EQ(run.result.path, SolvePath::none) << run.result.describe();
        ASSERT_EQ(run.result.steps.size(), 1u);
        EXPECT_NE(run.result.steps[0].outcome, StepOutcome::converged);
        EXPECT_TRUE(std::isnan(run.result.backward_error));
        EXPECT_TRUE(std::isnan(run.result.normwise_residual));
        for (double v : run.x) ASSERT_TRUE(std::isnan(v)) << "gain " << gain << ": X must be NaN, not a partial answer";
    }
}

TEST(RefinementDriver, BreakdownMovesToTheNextStep) {
    const System s(606);
    BrokenFactor broken(System::n);
    ScaledFactor low(s.a, System::n, 1.0);
    const ChainRun run = run_chain(s, {{&broken, nullptr}, {&low, nullptr}}, RefinementOptions{});
    ASSERT_EQ(run.result.steps.size(), 2u) << run.result.describe();
    EXPECT_EQ(run.result.steps[0].outcome, StepOutcome::breakdown);
    EXPECT_EQ(run.result.steps[0].column, 3);
    EXPECT_EQ(run.result.steps[1].outcome, StepOutcome::converged);
    EXPECT_NE(run.result.describe().find("nopiv_low: breakdown at column 3"), std::string::npos) << run.result.describe();
    expect_accurate(s, run);
}

TEST(RefinementDriver, TensorCoreStepThatFailsIsRepeatedWithoutThem) {
    const System s(707);
    // Diverges with its "TF32" factor, converges with the plain one.
    ScaledFactor low(s.a, System::n, 1.0, /*tf32_gain=*/3.0);
    DirectCholesky direct(s.a, System::n);
    RefinementOptions options;
    options.tensor_core_updates = true;
    const ChainRun run = run_chain(s, {{&low, nullptr}, {nullptr, &direct}}, options);
    ASSERT_EQ(run.result.steps.size(), 2u) << run.result.describe();
    EXPECT_TRUE(run.result.steps[0].tensor_cores);
    EXPECT_EQ(run.result.steps[0].outcome, StepOutcome::diverged);
    EXPECT_FALSE(run.result.steps[1].tensor_cores);
    EXPECT_EQ(run.result.steps[1].outcome, StepOutcome::converged);
    EXPECT_EQ(run.result.path, SolvePath::single_refined);
    EXPECT_EQ(low.factorisations, 2);
    expect_accurate(s, run);
}

TEST(RefinementDriver, TensorCoresOnlyOnTheFirstRefinedStep) {
    const System s(808);
    BrokenFactor broken(System::n);
    ScaledFactor low(s.a, System::n, 1.0, /*tf32_gain=*/3.0);
    RefinementOptions options;
    options.tensor_core_updates = true;
    const ChainRun run = run_chain(s, {{&broken, nullptr}, {&low, nullptr}}, options);
    ASSERT_EQ(run.result.steps.size(), 2u) << run.result.describe();
    EXPECT_TRUE(run.result.steps[0].tensor_cores);
    EXPECT_FALSE(run.result.steps[1].tensor_cores);
    EXPECT_EQ(run.result.steps[1].outcome, StepOutcome::converged);
}

TEST(RefinementDriver, PassesGoThroughThePluggedCorrector) {
    const System s(909);
    ScaledFactor low(s.a, System::n, 1.0);
    CountingCorrector corrector;
    const ChainRun run = run_chain(s, {{&low, nullptr}}, RefinementOptions{}, &corrector);
    EXPECT_EQ(run.result.path, SolvePath::single_refined) << run.result.describe();
    EXPECT_EQ(corrector.passes, run.result.iterations + 1);
    expect_accurate(s, run);
}

// The cost bound (RefinementOptions::refinement_budget). A factor of >= 20 ms and passes of >= 3 ms
// each: with gain 0.5 the error halves per pass, so reaching the criterion from the first pass takes
// about 30 more passes (>= 90 ms), more than the next step estimated at one factor (budget 1: ~20 ms):
// the step must give way after its first correction, and the fallback's answer be accurate.
TEST(RefinementDriver, SlowRefinementGivesWayToTheCheaperNextStep) {
    const System s(606);
    ScaledFactor low(s.a, System::n, 0.5);
    low.factor_delay = std::chrono::milliseconds(20), low.solve_delay = std::chrono::milliseconds(3);
    DirectCholesky direct(s.a, System::n);
    RefinementOptions options;
    options.max_iterations = 100;  // the bound, not the iteration limit, must end the step
    options.refinement_budget = 1;
    const ChainRun run = run_chain(s, {{&low, nullptr}, {nullptr, &direct}}, options);
    ASSERT_EQ(run.result.steps.size(), 2u) << run.result.describe();
    EXPECT_EQ(run.result.steps[0].outcome, StepOutcome::over_budget) << run.result.describe();
    EXPECT_LE(run.result.steps[0].iterations, 2) << run.result.describe();
    EXPECT_GE(run.result.steps[0].factor_seconds, 0.02);
    EXPECT_EQ(run.result.path, SolvePath::double_direct);
    EXPECT_NE(run.result.describe().find("single_refined: over_budget after"), std::string::npos) << run.result.describe();
    expect_accurate(s, run);
    // Unbounded, the same step converges (slowly): the bound is what switched.
    options.refinement_budget = 0;
    const ChainRun slow = run_chain(s, {{&low, nullptr}, {nullptr, &direct}}, options);
    ASSERT_EQ(slow.result.steps.size(), 1u) << slow.result.describe();
    EXPECT_EQ(slow.result.path, SolvePath::single_refined);
    EXPECT_GT(slow.result.iterations, 10);
    expect_accurate(s, slow);
}

// The same costs with a good factor: one or two more passes (<= ~6 ms) are cheaper than the next
// step, so the step converges; and the last step of a chain is never bounded (nothing to switch to).
TEST(RefinementDriver, CostBoundKeepsConvergingStepsAndTheLastStep) {
    const System s(707);
    DirectCholesky direct(s.a, System::n);
    RefinementOptions options;
    options.max_iterations = 100;
    options.refinement_budget = 1;
    ScaledFactor good(s.a, System::n, 1.0);
    good.factor_delay = std::chrono::milliseconds(20), good.solve_delay = std::chrono::milliseconds(3);
    const ChainRun run = run_chain(s, {{&good, nullptr}, {nullptr, &direct}}, options);
    ASSERT_EQ(run.result.steps.size(), 1u) << run.result.describe();
    EXPECT_EQ(run.result.steps[0].outcome, StepOutcome::converged);
    expect_accurate(s, run);
    ScaledFactor slow(s.a, System::n, 0.5);
    options.refinement_budget = 1e-9;
    const ChainRun last = run_chain(s, {{&slow, nullptr}}, options);
    ASSERT_EQ(last.result.steps.size(), 1u) << last.result.describe();
    EXPECT_EQ(last.result.path, SolvePath::single_refined) << last.result.describe();
    expect_accurate(s, last);
}

// Budget::steps_left: the geometric projection the bound uses.
TEST(RefinementDriver, BudgetProjectsTheRemainingSteps) {
    using refinement::Budget;
    EXPECT_EQ(Budget::steps_left(2, 1e-2, 1e-8), 6);   // rate 0.1 per unit: 6 more for 1e-6
    EXPECT_EQ(Budget::steps_left(1, 0.5, 0.4), 1);     // at least one
    EXPECT_EQ(Budget::steps_left(3, 1e-9, 1e-8), 0);   // already there
    EXPECT_TRUE(std::isinf(Budget::steps_left(2, 1.0, 1e-8)));  // no progress
    Budget b;
    EXPECT_FALSE(b.over(1e9, 1.0)) << "unbounded by default";
    b.next_seconds = 0.1;
    EXPECT_TRUE(b.over(11, 0.01));
    EXPECT_FALSE(b.over(9, 0.01));
}

}  // namespace
}  // namespace batchsolve
