// posv_mixed (cholesky_large.hpp): the mixed-precision SPD solver's plug-ins of the refinement driver
// (core/refinement.hpp) and its chain, written once for both backends.
//  * CholeskyLow: A rounded to FP32 and factored by potrf's blocked FP32 Cholesky (SIMT; TF32
//    updates when tensor_core_updates): path single_refined.
//  * TensorLow: the scaled recursive factor of core/mixed_factor_backend.hpp with TF32, FP16, BF16 or
//    split-FP16 tensor-core updates (paths tf32/half/bfloat/half_split_refined); it supports the
//    driver's diagonal-shift retry.
//  * CholeskyDirect: FP64 Cholesky + solve of a copy of A (double_direct), the fallback.
// The automatic chain: the tuning table's refined steps for n (libsolver/tuning/sm<arch>-large.json,
// routine posv_mixed: factor precision, correction method, an optional second step; without an entry,
// and on the CPU, the FP32 factor corrected classically then by GMRES-IR), then FP64 when
// allow_fallback: an answer is always at double accuracy or from the FP64 solve, never silently worse.
// Every refined step but the last is cost-bounded (refinement.hpp's Budget): it gives way to the next
// step once finishing it is projected to cost more than the table's next_step_cost_percent of its
// measured factor time.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "batchsolve/cholesky_large.hpp"
#include "checks.hpp"
#include "batchsolve/checked_size.hpp"
#include "cholesky_large_backend.hpp"
#include "mixed_factor_backend.hpp"
#include "refinement.hpp"
#include "tuning_json.hpp"
#include "tuning_table.hpp"

namespace batchsolve {

namespace {

using mixed_factor_detail::MixedFactorConfig;
using refinement::lower_t;
using refinement::Operator;
using refinement::Scratch;

void check_arguments(const char* routine, Uplo uplo, int n, const void* a, int lda) {
    checks::require(uplo == Uplo::lower || uplo == Uplo::upper, routine, "uplo", "Uplo::lower or Uplo::upper");
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(lda >= std::max(1, n), routine, "lda",
                    "lda >= max(1, n) (got lda = " + std::to_string(lda) + ", n = " + std::to_string(n) + ")");
    checks::require(n == 0 || a != nullptr, routine, "a", "non-null");
}

void check_posv_options(const char* routine, const PosvMixedOptions& o) {
    refinement::check_options(routine, o);
    checks::require(o.gmres_restart >= 1, routine, "options.gmres_restart",
                    "gmres_restart >= 1 (got " + std::to_string(o.gmres_restart) + ")");
    checks::require(o.gmres_tolerance > 0 && o.gmres_tolerance < 1, routine, "options.gmres_tolerance", "0 < gmres_tolerance < 1");
    checks::require(o.gmres_switch_ratio > 0, routine, "options.gmres_switch_ratio", "gmres_switch_ratio > 0");
    checks::require(o.shift_units >= 0, routine, "options.shift_units", "shift_units >= 0");
    checks::require(o.factor_leaf == 0 || (o.factor_leaf >= 32 && o.factor_leaf <= 8192), routine, "options.factor_leaf",
                    "0 (default) or 32 <= factor_leaf <= 8192 (got " + std::to_string(o.factor_leaf) + ")");
    checks::require(o.solve_block >= -1, routine, "options.solve_block", "solve_block >= -1");
    checks::require(o.refinement_budget == -1 || o.refinement_budget >= 0, routine, "options.refinement_budget",
                    "-1 (the tuning table's) or >= 0 (got " + std::to_string(o.refinement_budget) + ")");
}

// The GPU factor's configuration: the tuning table's for n, the options' leaf and solve blocking
// where they are set.
MixedFactorConfig factor_config(const PosvMixedOptions& o, int n, Context& ctx) {
    const tuning::MixedTuning t = tuning::mixed_tuning(Precision::d, n, tuning::context_arch(ctx));
    MixedFactorConfig c;
    c.leaf = c.trsm_leaf = t.leaf;
    c.solve_block = t.solve_block;
    c.inverse = t.panel_solve == PanelSolve::inverse;
    c.fused_solve = c.inverse && t.fused_solve;
    c.graph = t.graph;
    c.lookahead = t.lookahead;
    c.update_width = t.update_width;
    c.solve_rows = t.solve_rows;
    // The tiled leaf forms each leaf's inverse in its launch: the off-diagonal solve leaves use it.
    c.tiled_leaf = t.tiled_leaf;
    c.inverse = c.inverse || c.tiled_leaf;
    if (o.factor_leaf > 0) c.leaf = c.trsm_leaf = o.factor_leaf;
    if (o.solve_block >= 0) c.solve_block = o.solve_block;
    return c;
}

// The FP32 factor of A's uplo triangle by potrf's blocked Cholesky (in the driver's matrix region).
template <class T>
class CholeskyLow final : public refinement::LowFactor<T> {
public:
    using Lo = lower_t<T>;
    SolvePath path() const override { return SolvePath::single_refined; }
    int rows(const Operator<T>& op) const override { return op.n; }

    bool factor(const Operator<T>& op, bool tensor_cores, const Scratch& scratch, SolveStep& step, Context& ctx) override {
        Lo* low = static_cast<Lo*>(scratch.matrix);
        BATCHSOLVE_ON_BACKEND(ctx, convert_symmetric<T>(op.uplo, op.n, op.a, op.lda, low, op.n, scratch.overflow, ctx));
        if (refinement::read_flag(ctx, scratch.overflow)) {
            step.outcome = StepOutcome::overflow;
            return false;
        }
        LargeCholeskyConfig config;
        config.tf32_updates = tensor_cores;
        const LargeCholeskyConfig resolved = cholesky_large_detail::resolve<Lo>(config, op.n, tuning::context_arch(ctx));
        BATCHSOLVE_ON_BACKEND(ctx, large_factor<Lo>(op.uplo, op.n, low, op.n, scratch.info, resolved, false, nullptr, ctx));
        step.column = refinement::read_flag(ctx, scratch.info);
        if (step.column != 0) step.outcome = StepOutcome::not_positive_definite;
        return step.column == 0;
    }

    void solve(const Operator<T>& op, int nrhs, Lo* d, int ldd, const Scratch& scratch, Context& ctx) override {
        BATCHSOLVE_ON_BACKEND(ctx, large_solve<Lo>(op.uplo, op.n, nrhs, static_cast<const Lo*>(scratch.matrix), op.n, d, ldd, ctx));
    }
};

// The scaled recursive factor with tensor-core updates (mixed_factor_backend.hpp).
template <class T>
class TensorLow final : public refinement::LowFactor<T> {
public:
    using Lo = lower_t<T>;
    // cpu: the CPU backend, which factors every precision in FP32 (its shift unit is FP32's).
    TensorLow(LowPrecision precision, const MixedFactorConfig& config, bool cpu)
        : precision_(precision), config_(config), cpu_(cpu) {}
    SolvePath path() const override {
        switch (precision_) {
            case LowPrecision::tf32: return SolvePath::tf32_refined;
            case LowPrecision::bf16: return SolvePath::bfloat_refined;
            case LowPrecision::fp16_split: return SolvePath::half_split_refined;
            default: return SolvePath::half_refined;
        }
    }
    int rows(const Operator<T>& op) const override { return op.n; }
    bool tensor_cores() const override { return true; }
    double shift_unit() const override {
        return mixed_factor_detail::unit_roundoff(cpu_ ? LowPrecision::fp32 : precision_);
    }
    void set_shift(double shift) override { shift_ = shift; }

    bool factor(const Operator<T>& op, bool, const Scratch& scratch, SolveStep& step, Context& ctx) override {
        BATCHSOLVE_ON_BACKEND(ctx, mixed_factor<T>(op.uplo, op.n, op.a, op.lda, shift_, precision_, config_, scratch.matrix,
                                                   scratch.info, ctx));
        step.column = refinement::read_flag(ctx, scratch.info);
        if (step.column != 0) step.outcome = StepOutcome::not_positive_definite;
        return step.column == 0;
    }

    void solve(const Operator<T>& op, int nrhs, Lo* d, int ldd, const Scratch& scratch, Context& ctx) override {
        BATCHSOLVE_ON_BACKEND(ctx, mixed_solve<T>(TypeTag<T>{}, op.n, nrhs, scratch.matrix, d, ldd, config_, ctx));
    }

private:
    LowPrecision precision_;
    MixedFactorConfig config_;
    bool cpu_;
    double shift_ = 0;
};

// FP64 Cholesky of a copy of A (in the driver's matrix region) and one solve.
template <class T>
class CholeskyDirect final : public refinement::DirectSolve<T> {
public:
    SolveStep solve(const Operator<T>& op, int nrhs, T* x, int ldx, const Scratch& scratch, Context& ctx) override {
        T* copy = static_cast<T*>(scratch.matrix);
        BATCHSOLVE_ON_BACKEND(ctx, copy_matrix<T>(op.n, op.n, op.a, op.lda, copy, op.n, ctx));
        const LargeCholeskyConfig resolved = cholesky_large_detail::resolve<T>(LargeCholeskyConfig{}, op.n, tuning::context_arch(ctx));
        BATCHSOLVE_ON_BACKEND(ctx, large_factor<T>(op.uplo, op.n, copy, op.n, scratch.info, resolved, false, nullptr, ctx));
        SolveStep step;
        step.path = SolvePath::double_direct;
        step.column = refinement::read_flag(ctx, scratch.info);
        step.outcome = step.column == 0 ? StepOutcome::solved : StepOutcome::not_positive_definite;
        if (step.column == 0) BATCHSOLVE_ON_BACKEND(ctx, large_solve<T>(op.uplo, op.n, nrhs, copy, op.n, x, ldx, ctx));
        return step;
    }
};

// The automatic choices resolved: factor_precision automatic takes the tuning table's chain for n on
// the context's architecture (tuning_json.hpp's MixedTuning: one or two refined steps), and with it the
// table's correction method where the caller left that automatic too.
struct Chain {
    std::vector<LowPrecision> precisions;  // the refined steps in order
    CorrectionMethod method;
    bool shift_retry = true;  // false: the table's chain skips options.shift_units' retry
    double budget = 0;        // RefinementOptions::refinement_budget resolved (0: unbounded)
};
Chain resolve_chain(const PosvMixedOptions& o, int n, Context& ctx) {
    const tuning::MixedTuning t = tuning::mixed_tuning(Precision::d, n, tuning::context_arch(ctx));
    const double budget = o.refinement_budget >= 0 ? o.refinement_budget : t.next_step_cost_percent / 100.0;
    if (o.factor_precision != LowPrecision::automatic) return {{o.factor_precision}, o.method, true, budget};
    Chain c{{t.factor}, o.method == CorrectionMethod::automatic ? t.method : o.method, t.shift_retry, budget};
    if (t.second != LowPrecision::automatic && t.second != t.factor) c.precisions.push_back(t.second);
    return c;
}

// The driver's workspace: the low factors and the FP64 fallback's copy are never alive together, so
// they share its matrix region.
template <class T>
refinement::Layout posv_layout(int n, int nrhs, const PosvMixedOptions& options, Context& ctx) {
    // n^2 < 2^62 always; its bytes may not fit (checked before any allocation).
    const std::uint64_t elements = std::uint64_t(n) * std::uint64_t(n);
    const auto bytes = checked_bytes(elements, sizeof(T));
    checks::require(bytes.has_value(), "posv_mixed", "n", "n^2 doubles addressable (got n = " + std::to_string(n) + ")");
    std::size_t low = 0;
    const Chain chain = resolve_chain(options, n, ctx);
    for (LowPrecision p : chain.precisions)
        low = std::max(low, p == LowPrecision::fp32
                                ? std::size_t(elements) * sizeof(lower_t<T>)
                                : BATCHSOLVE_ON_BACKEND(ctx, mixed_factor_bytes(TypeTag<T>{}, n, p, factor_config(options, n, ctx), ctx)));
    const std::size_t high = options.allow_fallback ? *bytes : 0;
    const std::size_t krylov =
        chain.method != CorrectionMethod::classical ? refinement::GmresCorrector<T>::krylov_bytes(n, options.gmres_restart) : 0;
    return refinement::Layout::of<T>(n, nrhs, n, std::max(low, high), krylov);
}

}  // namespace

template <class T>
std::size_t posv_mixed_workspace_size(Uplo uplo, int n, int nrhs, const PosvMixedOptions& options, Context& ctx) {
    constexpr const char* routine = "posv_mixed_workspace_size";
    checks::require(uplo == Uplo::lower || uplo == Uplo::upper, routine, "uplo", "Uplo::lower or Uplo::upper");
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    check_posv_options(routine, options);
    if (n == 0 || nrhs == 0) return 0;
    return posv_layout<T>(n, nrhs, options, ctx).total;
}

template <class T>
PosvMixedResult posv_mixed(Uplo uplo, int n, int nrhs, const T* a, int lda, const T* b, int ldb, T* x, int ldx,
                           const PosvMixedOptions& options, Context& ctx) {
    constexpr const char* routine = "posv_mixed";
    check_arguments(routine, uplo, n, a, lda);
    refinement::check_system(routine, n, nrhs, a, lda, b, ldb, x, ldx);
    check_posv_options(routine, options);
    if (n == 0 || nrhs == 0) return MixedResult{};
    const refinement::Operator<T> op{uplo, Symmetry::symmetric, n, a, lda};
    const refinement::Layout layout = posv_layout<T>(n, nrhs, options, ctx);
    refinement::ClassicalCorrector<T> classical;
    refinement::GmresCorrector<T> gmres(options.gmres_restart, options.gmres_tolerance);
    refinement::AutomaticCorrector<T> automatic(options.gmres_restart, options.gmres_tolerance, options.gmres_switch_ratio);
    const Chain resolved = resolve_chain(options, n, ctx);
    refinement::Corrector<T>* corrector = resolved.method == CorrectionMethod::classical ? static_cast<refinement::Corrector<T>*>(&classical)
                                          : resolved.method == CorrectionMethod::gmres ? static_cast<refinement::Corrector<T>*>(&gmres)
                                                                                       : &automatic;
    PosvMixedOptions driven = options;
    if (!resolved.shift_retry) driven.shift_units = 0;
    driven.refinement_budget = resolved.budget;
    driven.fused_pass =
        options.fused_pass >= 0 ? options.fused_pass : tuning::mixed_tuning(Precision::d, n, tuning::context_arch(ctx)).fused_pass;
    refinement::Driver<T> driver(op, nrhs, b, ldb, x, ldx, driven, layout, ctx.workspace(layout.total), ctx, corrector);
    const MixedFactorConfig config = factor_config(options, n, ctx);
    CholeskyLow<T> single;
    std::vector<std::unique_ptr<TensorLow<T>>> tensor;
    CholeskyDirect<T> direct;
    std::vector<refinement::ChainStep<T>> chain;
    for (LowPrecision p : resolved.precisions) {
        if (p == LowPrecision::fp32) {
            chain.push_back({&single, nullptr});
        } else {
            tensor.push_back(std::make_unique<TensorLow<T>>(p, config, ctx.backend() == Backend::cpu));
            chain.push_back({tensor.back().get(), nullptr});
        }
    }
    if (options.allow_fallback) chain.push_back({nullptr, &direct});
    return driver.run(chain);
}

template std::size_t posv_mixed_workspace_size<double>(Uplo, int, int, const PosvMixedOptions&, Context&);
template PosvMixedResult posv_mixed<double>(Uplo, int, int, const double*, int, const double*, int, double*, int,
                                            const PosvMixedOptions&, Context&);

}  // namespace batchsolve
