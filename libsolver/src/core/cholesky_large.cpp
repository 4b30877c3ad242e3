// The large-matrix Cholesky solvers of cholesky_large.hpp: argument and configuration checks, the
// table of default configurations, dispatch to the context's backend, and posv_mixed's plug-ins of the
// refinement driver (FP32 factor, FP64 fallback), written once for both backends.
#include "batchsolve/cholesky_large.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "batchsolve/buffer.hpp"
#include "batchsolve/checked_size.hpp"
#include "checks.hpp"
#include "cholesky_large_backend.hpp"
#include "refinement.hpp"
#include "tuning_json.hpp"
#include "tuning_table.hpp"

namespace batchsolve {

const char* to_string(CholeskyVariant v) {
    switch (v) {
        case CholeskyVariant::automatic: return "automatic";
        case CholeskyVariant::right_looking: return "right";
        case CholeskyVariant::left_looking: return "left";
        case CholeskyVariant::recursive: return "recursive";
    }
    return "?";
}

CholeskyVariant parse_cholesky_variant(const std::string& text) {
    if (text == "automatic") return CholeskyVariant::automatic;
    if (text == "right" || text == "right_looking") return CholeskyVariant::right_looking;
    if (text == "left" || text == "left_looking") return CholeskyVariant::left_looking;
    if (text == "recursive") return CholeskyVariant::recursive;
    throw InvalidArgument("parse_cholesky_variant", "text", "'automatic', 'right', 'left' or 'recursive' (got '" + text + "')");
}

const char* to_string(CholeskyDiagonal d) {
    switch (d) {
        case CholeskyDiagonal::automatic: return "automatic";
        case CholeskyDiagonal::fused: return "fused";
        case CholeskyDiagonal::vendor: return "vendor";
    }
    return "?";
}

CholeskyDiagonal parse_cholesky_diagonal(const std::string& text) {
    if (text == "automatic") return CholeskyDiagonal::automatic;
    if (text == "fused") return CholeskyDiagonal::fused;
    if (text == "vendor") return CholeskyDiagonal::vendor;
    throw InvalidArgument("parse_cholesky_diagonal", "text", "'automatic', 'fused' or 'vendor' (got '" + text + "')");
}

const char* to_string(PanelSolve p) {
    switch (p) {
        case PanelSolve::automatic: return "automatic";
        case PanelSolve::trsm: return "trsm";
        case PanelSolve::inverse: return "inverse";
    }
    return "?";
}

PanelSolve parse_panel_solve(const std::string& text) {
    if (text == "automatic") return PanelSolve::automatic;
    if (text == "trsm") return PanelSolve::trsm;
    if (text == "inverse") return PanelSolve::inverse;
    throw InvalidArgument("parse_panel_solve", "text", "'automatic', 'trsm' or 'inverse' (got '" + text + "')");
}

const char* to_string(Potf2Strip s) {
    switch (s) {
        case Potf2Strip::automatic: return "automatic";
        case Potf2Strip::columns: return "columns";
        case Potf2Strip::warp: return "warp";
    }
    return "?";
}

// ---- configurations ------------------------------------------------------------------------------------

namespace cholesky_large_detail {

std::string config_problem(const LargeCholeskyConfig& c) {
    if (c.nb < kMinPanel || c.nb > kMaxPanel)
        return "nb: " + std::to_string(kMinPanel) + " <= nb <= " + std::to_string(kMaxPanel) + " (got " + std::to_string(c.nb) + ")";
    if (!valid_inner_blocking(c.ib)) return "ib: 8, 16 or 32 (got " + std::to_string(c.ib) + ")";
    if (c.nb % c.ib != 0) return "nb: a multiple of ib (got nb = " + std::to_string(c.nb) + ", ib = " + std::to_string(c.ib) + ")";
    if (c.recursion_depth < 0 || c.recursion_depth > kMaxRecursionDepth)
        return "recursion_depth: 0 <= recursion_depth <= " + std::to_string(kMaxRecursionDepth) + " (got " +
               std::to_string(c.recursion_depth) + ")";
    if (c.variant == CholeskyVariant::automatic) return "variant: resolved before the check";
    if (c.strip == Potf2Strip::automatic) return "strip: resolved before the check";
    if (c.diagonal == CholeskyDiagonal::automatic) return "diagonal: resolved before the check";
    if (c.panel_solve == PanelSolve::automatic) return "panel_solve: resolved before the check";
    if (c.syrk_leaf < kMinSyrkLeaf)
        return "syrk_leaf: syrk_leaf >= " + std::to_string(kMinSyrkLeaf) + " (got " + std::to_string(c.syrk_leaf) + ")";
    if (c.elementwise_threads < 32 || c.elementwise_threads > 1024 || c.elementwise_threads % 32 != 0)
        return "elementwise_threads: a multiple of 32 from 32 to 1024 (got " + std::to_string(c.elementwise_threads) + ")";
    return "";
}

// The automatic fields from the tuning table (libsolver/tuning/sm<arch>-large.json: per precision and
// size class of n), else its safe default (tuning_json.hpp's LargeTuning). The table's lookahead and
// graph apply where the caller left the whole blocking automatic (nb, ib, variant, depth, strip,
// diagonal and panel_solve): a caller who pins the blocking keeps its own.
template <class T>
LargeCholeskyConfig resolve(const LargeCholeskyConfig& config, int n, int arch) {
    const tuning::LargeTuning row = tuning::large_tuning(precision_v<T>, n, arch);
    LargeCholeskyConfig c = config;
    if (c.nb == 0 && c.ib == 0 && c.recursion_depth == -1 && c.variant == CholeskyVariant::automatic &&
        c.strip == Potf2Strip::automatic && c.diagonal == CholeskyDiagonal::automatic &&
        c.panel_solve == PanelSolve::automatic) {
        c.lookahead = row.lookahead;
        c.graph = c.graph || row.graph;
    }
    if (c.nb == 0) c.nb = row.nb;
    if (c.ib == 0) c.ib = row.ib;
    if (c.recursion_depth == -1) c.recursion_depth = row.recursion_depth;
    if (c.variant == CholeskyVariant::automatic) c.variant = row.variant;
    if (c.strip == Potf2Strip::automatic) c.strip = row.strip;
    if (c.diagonal == CholeskyDiagonal::automatic) c.diagonal = row.diagonal;
    if (c.panel_solve == PanelSolve::automatic) c.panel_solve = row.panel_solve;
    if (c.syrk_leaf == 0) c.syrk_leaf = row.syrk_leaf;
    if (c.elementwise_threads == 0) c.elementwise_threads = row.elementwise_threads;
    return c;
}

template LargeCholeskyConfig resolve<float>(const LargeCholeskyConfig&, int, int);
template LargeCholeskyConfig resolve<double>(const LargeCholeskyConfig&, int, int);

}  // namespace cholesky_large_detail

template <class T>
LargeCholeskyConfig cholesky_large_default_config(int n) {
    checks::require(n >= 0, "cholesky_large_default_config", "n", "n >= 0 (got " + std::to_string(n) + ")");
    return cholesky_large_detail::resolve<T>(LargeCholeskyConfig{}, n, kShippedTuningArch);
}

namespace {

void check_matrix_arguments(const char* routine, int n, const void* a, int lda) {
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(lda >= std::max(1, n), routine, "lda",
                    "lda >= max(1, n) (got lda = " + std::to_string(lda) + ", n = " + std::to_string(n) + ")");
    checks::require(n == 0 || a != nullptr, routine, "a", "non-null");
}

void check_uplo(const char* routine, Uplo uplo) {
    checks::require(uplo == Uplo::lower || uplo == Uplo::upper, routine, "uplo", "Uplo::lower or Uplo::upper");
}

}  // namespace

template <class T>
std::size_t potrf_workspace_size(int n, Context&) {
    checks::require(n >= 0, "potrf_workspace_size", "n", "n >= 0 (got " + std::to_string(n) + ")");
    // Both backends factor in place: panels, TRSM and updates all work on A itself, and the info of
    // the panels is written straight into the caller's info.
    return 0;
}

template <class T>
void potrf(Uplo uplo, int n, T* a, int lda, int* info, const LargeCholeskyConfig& config, Context& ctx,
           CholeskyPhaseTimes* times) {
    constexpr const char* routine = "potrf";
    check_uplo(routine, uplo);
    check_matrix_arguments(routine, n, a, lda);
    checks::require(info != nullptr, routine, "info", "non-null");
    const LargeCholeskyConfig resolved = cholesky_large_detail::resolve<T>(config, n, tuning::context_arch(ctx));
    const std::string problem = cholesky_large_detail::config_problem(resolved);
    if (!problem.empty()) {
        const std::size_t colon = problem.find(':');
        throw InvalidArgument(routine, "config." + problem.substr(0, colon), problem.substr(colon + 2));
    }
    if (times) *times = CholeskyPhaseTimes{};
    BATCHSOLVE_ON_BACKEND(ctx, large_factor<T>(uplo, n, a, lda, info, resolved, times, ctx));
}

template <class T>
void potrf(Uplo uplo, int n, T* a, int lda, int* info, Context& ctx) {
    potrf<T>(uplo, n, a, lda, info, LargeCholeskyConfig{}, ctx, nullptr);
}

template <class T>
void potrs(Uplo uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb, Context& ctx) {
    constexpr const char* routine = "potrs";
    check_uplo(routine, uplo);
    check_matrix_arguments(routine, n, a, lda);
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    checks::check_dense_rhs(routine, "b", "ldb", n, nrhs, b, ldb);
    if (n == 0 || nrhs == 0) return;
    checks::require(!checks::overlaps(b, checks::dense_bytes<T>(n, nrhs, ldb), a, checks::dense_bytes<T>(n, n, lda)),
                    routine, "b", "must not overlap a");
    BATCHSOLVE_ON_BACKEND(ctx, large_solve<T>(uplo, n, nrhs, a, lda, b, ldb, ctx));
}

// ---- posv_mixed ------------------------------------------------------------------------------------
// FP32 Cholesky refined in FP64, then FP64 Cholesky: the plug-ins of the refinement driver
// (core/refinement.hpp), which runs the chain.

namespace {

using refinement::lower_t;

using refinement::Operator;
using refinement::Scratch;

// The FP32 factor of A's uplo triangle (in the driver's matrix region).
template <class T>
class CholeskyLow final : public refinement::LowFactor<T> {
public:
    using Lo = lower_t<T>;
    SolvePath path() const override { return SolvePath::single_refined; }
    int rows(const Operator<T>& op) const override { return op.n; }

    bool factor(const Operator<T>& op, bool tensor_cores, const Scratch& scratch, SolveStep& step, Context& ctx) override {
        Lo* low = static_cast<Lo*>(scratch.matrix);
        BATCHSOLVE_ON_BACKEND(ctx, convert_triangle<T>(op.uplo, op.n, op.a, op.lda, low, op.n, scratch.overflow, ctx));
        if (refinement::read_flag(ctx, scratch.overflow)) {
            step.outcome = StepOutcome::overflow;
            return false;
        }
        LargeCholeskyConfig config;
        config.tf32_updates = tensor_cores;
        const LargeCholeskyConfig resolved = cholesky_large_detail::resolve<Lo>(config, op.n, tuning::context_arch(ctx));
        BATCHSOLVE_ON_BACKEND(ctx, large_factor<Lo>(op.uplo, op.n, low, op.n, scratch.info, resolved, nullptr, ctx));
        step.column = refinement::read_flag(ctx, scratch.info);
        if (step.column != 0) step.outcome = StepOutcome::not_positive_definite;
        return step.column == 0;
    }

    void solve(const Operator<T>& op, int nrhs, Lo* d, int ldd, const Scratch& scratch, Context& ctx) override {
        BATCHSOLVE_ON_BACKEND(ctx, large_solve<Lo>(op.uplo, op.n, nrhs, static_cast<const Lo*>(scratch.matrix), op.n, d, ldd, ctx));
    }
};

// FP64 Cholesky of a copy of A (in the driver's matrix region) and one solve.
template <class T>
class CholeskyDirect final : public refinement::DirectSolve<T> {
public:
    SolveStep solve(const Operator<T>& op, int nrhs, T* x, int ldx, const Scratch& scratch, Context& ctx) override {
        T* copy = static_cast<T*>(scratch.matrix);
        BATCHSOLVE_ON_BACKEND(ctx, copy_matrix<T>(op.n, op.n, op.a, op.lda, copy, op.n, ctx));
        const LargeCholeskyConfig resolved = cholesky_large_detail::resolve<T>(LargeCholeskyConfig{}, op.n, tuning::context_arch(ctx));
        BATCHSOLVE_ON_BACKEND(ctx, large_factor<T>(op.uplo, op.n, copy, op.n, scratch.info, resolved, nullptr, ctx));
        SolveStep step;
        step.path = SolvePath::double_direct;
        step.column = refinement::read_flag(ctx, scratch.info);
        step.outcome = step.column == 0 ? StepOutcome::solved : StepOutcome::not_positive_definite;
        if (step.column == 0) BATCHSOLVE_ON_BACKEND(ctx, large_solve<T>(op.uplo, op.n, nrhs, copy, op.n, x, ldx, ctx));
        return step;
    }
};

// The driver's workspace: the FP32 copy of A and the FP64 fallback's copy are never alive together,
// so they share its matrix region.
template <class T>
refinement::Layout posv_layout(int n, int nrhs, const PosvMixedOptions& options) {
    // n^2 < 2^62 always; its bytes may not fit (checked before any allocation).
    const std::uint64_t elements = std::uint64_t(n) * std::uint64_t(n);
    const auto bytes = checked_bytes(elements, sizeof(T));
    checks::require(bytes.has_value(), "posv_mixed", "n", "n^2 doubles addressable (got n = " + std::to_string(n) + ")");
    const std::size_t low = std::size_t(elements) * sizeof(lower_t<T>);
    const std::size_t high = options.allow_fallback ? *bytes : 0;
    return refinement::Layout::of<T>(n, nrhs, n, std::max(low, high));
}

}  // namespace

template <class T>
std::size_t posv_mixed_workspace_size(Uplo uplo, int n, int nrhs, const PosvMixedOptions& options, Context&) {
    constexpr const char* routine = "posv_mixed_workspace_size";
    check_uplo(routine, uplo);
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    refinement::check_options(routine, options);
    if (n == 0 || nrhs == 0) return 0;
    return posv_layout<T>(n, nrhs, options).total;
}

template <class T>
PosvMixedResult posv_mixed(Uplo uplo, int n, int nrhs, const T* a, int lda, const T* b, int ldb, T* x, int ldx,
                           const PosvMixedOptions& options, Context& ctx) {
    constexpr const char* routine = "posv_mixed";
    check_uplo(routine, uplo);
    check_matrix_arguments(routine, n, a, lda);
    refinement::check_system(routine, n, nrhs, a, lda, b, ldb, x, ldx);
    refinement::check_options(routine, options);
    if (n == 0 || nrhs == 0) return MixedResult{};
    const refinement::Operator<T> op{uplo, Symmetry::symmetric, n, a, lda};
    const refinement::Layout layout = posv_layout<T>(n, nrhs, options);
    refinement::Driver<T> driver(op, nrhs, b, ldb, x, ldx, options, layout, ctx.workspace(layout.total), ctx);
    CholeskyLow<T> low;
    CholeskyDirect<T> direct;
    std::vector<refinement::ChainStep<T>> chain{{&low, nullptr}};
    if (options.allow_fallback) chain.push_back({nullptr, &direct});
    return driver.run(chain);
}

#define INSTANTIATE(T)                                                                                            \
    template LargeCholeskyConfig cholesky_large_default_config<T>(int);                                          \
    template std::size_t potrf_workspace_size<T>(int, Context&);                                                 \
    template void potrf<T>(Uplo, int, T*, int, int*, Context&);                                                  \
    template void potrf<T>(Uplo, int, T*, int, int*, const LargeCholeskyConfig&, Context&, CholeskyPhaseTimes*); \
    template void potrs<T>(Uplo, int, int, const T*, int, T*, int, Context&);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

template std::size_t posv_mixed_workspace_size<double>(Uplo, int, int, const PosvMixedOptions&, Context&);
template PosvMixedResult posv_mixed<double>(Uplo, int, int, const double*, int, const double*, int, double*, int,
                                            const PosvMixedOptions&, Context&);

}  // namespace batchsolve
