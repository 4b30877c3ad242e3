// The symmetric indefinite solvers of ldlt.hpp: argument checks, dispatch of the primitives to the
// context's backend, the butterflies' random diagonals, and sysv_mixed's chain of steps (no-pivot
// LDL^T in the lower precision with refinement, the same after a random butterfly transformation,
// a pivoted factorisation in the working precision), written once for both backends.
#include "batchsolve/ldlt.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "batchsolve/buffer.hpp"
#include "checks.hpp"
#include "refinement.hpp"
#include "ldlt_backend.hpp"

namespace batchsolve {

const char* to_string(Symmetry s) { return s == Symmetry::symmetric ? "symmetric" : "hermitian"; }

Symmetry parse_symmetry(const std::string& text) {
    if (text == "symmetric") return Symmetry::symmetric;
    if (text == "hermitian") return Symmetry::hermitian;
    throw InvalidArgument("parse_symmetry", "text", "'symmetric' or 'hermitian' (got '" + text + "')");
}

const char* to_string(SolvePath p) {
    switch (p) {
        case SolvePath::nopiv_low: return "nopiv_low";
        case SolvePath::rbt_nopiv_low: return "rbt_nopiv_low";
        case SolvePath::pivoted_high_sytrf: return "pivoted_high_sytrf";
        case SolvePath::pivoted_high_getrf: return "pivoted_high_getrf";
        case SolvePath::none: return "none";
    }
    return "?";
}

const char* to_string(StepOutcome o) {
    switch (o) {
        case StepOutcome::converged: return "converged";
        case StepOutcome::solved: return "solved";
        case StepOutcome::overflow: return "overflow";
        case StepOutcome::breakdown: return "breakdown";
        case StepOutcome::stalled: return "stalled";
        case StepOutcome::diverged: return "diverged";
        case StepOutcome::too_many_iterations: return "too_many_iterations";
        case StepOutcome::singular: return "singular";
    }
    return "?";
}

std::string SysvResult::describe() const {
    std::ostringstream text;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const SolveStep& s = steps[k];
        if (k) text << " -> ";
        text << to_string(s.path) << (s.tensor_cores ? " (TF32)" : "") << ": " << to_string(s.outcome);
        if (s.outcome == StepOutcome::breakdown || s.outcome == StepOutcome::singular) text << " at column " << s.column;
        if (s.path == SolvePath::nopiv_low || s.path == SolvePath::rbt_nopiv_low) text << " after " << s.iterations << " iterations";
        if (s.residual != 0) text << " (residual " << s.residual << ")";
    }
    if (steps.empty()) text << "nothing to solve";
    return text.str();
}

Butterfly make_butterfly(int n, int depth, std::uint64_t seed) {
    checks::require(n >= 0, "make_butterfly", "n", "n >= 0 (got " + std::to_string(n) + ")");
    // 2^20 levels already exceed any matrix that fits in memory; the bound keeps the padding exact.
    checks::require(depth >= 0 && depth <= 20, "make_butterfly", "depth", "0 <= depth <= 20 (got " + std::to_string(depth) + ")");
    Butterfly u;
    u.n = n;
    u.depth = depth;
    u.n_padded = ldlt_detail::padded_order(n, depth);
    u.seed = seed;
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> r(-0.5, 0.5);
    u.diagonals.resize(std::size_t(depth) * std::size_t(u.n_padded));
    for (double& v : u.diagonals) v = std::exp(r(engine) / 10);
    return u;
}

namespace {

template <class T>
void check_matrix_arguments(const char* routine, Uplo uplo, int n, const void* a, int lda) {
    checks::require(uplo == Uplo::lower, routine, "uplo", "Uplo::lower (upper storage is not implemented)");
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(lda >= std::max(1, n), routine, "lda",
                    "lda >= max(1, n) (got lda = " + std::to_string(lda) + ", n = " + std::to_string(n) + ")");
    checks::require(n == 0 || a != nullptr, routine, "a", "non-null");
}

template <class T>
void check_rhs_arguments(const char* routine, const char* name, const char* ld_name, int n, int nrhs, const void* b,
                         int ldb) {
    checks::require(ldb >= std::max(1, n), routine, ld_name,
                    std::string(ld_name) + " >= max(1, n) (got " + std::to_string(ldb) + ", n = " + std::to_string(n) + ")");
    checks::require(n == 0 || nrhs == 0 || b != nullptr, routine, name, "non-null");
}

// Symmetry::hermitian of real data is the symmetric factorisation: one code path.
template <class T>
Symmetry effective(Symmetry s) {
    return is_complex_v<T> ? s : Symmetry::symmetric;
}

// [begin, end) of two memory ranges, for the no-overlap rule of sysv_mixed's output.
bool overlaps(const void* p, std::size_t p_bytes, const void* q, std::size_t q_bytes) {
    auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(q);
    return a < b + q_bytes && b < a + p_bytes;
}

template <class T>
std::size_t matrix_bytes(int rows, int cols, int ld) {
    if (rows == 0 || cols == 0) return 0;
    return (std::size_t(cols - 1) * std::size_t(ld) + std::size_t(rows)) * sizeof(T);
}

}  // namespace

template <class T>
std::size_t sytrf_nopiv_workspace_size(int n, Context&) {
    checks::require(n >= 0, "sytrf_nopiv_workspace_size", "n", "n >= 0 (got " + std::to_string(n) + ")");
    return ldlt_detail::factor_workspace_bytes<T>(n);
}

template <class T>
void sytrf_nopiv(Symmetry symmetry, Uplo uplo, int n, T* a, int lda, int* info, Context& ctx) {
    constexpr const char* routine = "sytrf_nopiv";
    check_matrix_arguments<T>(routine, uplo, n, a, lda);
    checks::require(info != nullptr, routine, "info", "non-null");
    void* workspace = ctx.workspace(ldlt_detail::factor_workspace_bytes<T>(n));
    BATCHSOLVE_ON_BACKEND(ctx, ldlt_factor<T>(effective<T>(symmetry), n, a, lda, info, workspace, false, ctx));
}

template <class T>
void sytrs_nopiv(Symmetry symmetry, Uplo uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb, Context& ctx) {
    constexpr const char* routine = "sytrs_nopiv";
    check_matrix_arguments<T>(routine, uplo, n, a, lda);
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    check_rhs_arguments<T>(routine, "b", "ldb", n, nrhs, b, ldb);
    if (n == 0 || nrhs == 0) return;
    BATCHSOLVE_ON_BACKEND(ctx, ldlt_solve<T>(effective<T>(symmetry), n, nrhs, a, lda, b, ldb, ctx));
}

// ---- sysv_mixed ------------------------------------------------------------------------------------------

namespace {

template <class T> struct lower_precision;
template <> struct lower_precision<double> { using type = float; };
template <> struct lower_precision<std::complex<double>> { using type = std::complex<float>; };

// The pieces of sysv_mixed's workspace, in bytes from its start. The no-pivot steps' low-precision
// matrix (and its factor scratch) and the pivoted step's copy of A are never alive together: they share
// `matrix_region`.
template <class T>
struct MixedLayout {
    using Lo = typename lower_precision<T>::type;
    using R = real_t<T>;
    int n = 0, nrhs = 0, npad = 0;
    std::size_t low_matrix = 0, factor_scratch = 0, pivoted = 0, matrix_region = 0;
    std::size_t butterfly = 0, residual = 0, correction = 0, row_sums = 0, norms = 0, flags = 0, total = 0;

    MixedLayout(Symmetry symmetry, int n_, int nrhs_, const SysvOptions& options, Context& ctx, bool with_pivoted)
        : n(n_), nrhs(nrhs_) {
        using ldlt_detail::align_up;
        npad = options.allow_rbt || options.start_with_rbt ? ldlt_detail::padded_order(n, options.butterfly_depth) : n;
        const std::size_t low_bytes = align_up(std::size_t(npad) * npad * sizeof(Lo));
        const std::size_t factor_bytes = ldlt_detail::factor_workspace_bytes<Lo>(npad);
        std::size_t pivoted_bytes = 0;
        if (with_pivoted && options.allow_pivoted)
            pivoted_bytes = BATCHSOLVE_ON_BACKEND(ctx, pivoted_workspace_bytes(TypeTag<T>{}, symmetry, n, nrhs, ctx));
        std::size_t at = 0;
        low_matrix = at;
        factor_scratch = low_bytes;
        pivoted = 0;
        matrix_region = std::max(low_bytes + factor_bytes, align_up(pivoted_bytes));
        at += matrix_region;
        butterfly = at, at += align_up(std::size_t(options.butterfly_depth) * npad * sizeof(real_t<Lo>));
        residual = at, at += align_up(std::size_t(n) * nrhs * sizeof(T));
        correction = at, at += align_up(std::size_t(npad) * nrhs * sizeof(Lo));
        row_sums = at, at += align_up(std::size_t(n) * sizeof(R));
        norms = at, at += align_up(std::size_t(2 * nrhs + 2) * sizeof(R));
        flags = at, at += align_up(2 * sizeof(int));
        total = at;
    }
};

template <class U>
U* piece(void* base, std::size_t offset) {
    return reinterpret_cast<U*>(static_cast<char*>(base) + offset);
}

template <class U>
void fetch(Context& ctx, U* host, const U* source, std::size_t count) {
    detail::backend_copy_to_host(ctx, host, source, count * sizeof(U));
}

template <class T>
class MixedSolver {
public:
    using Lo = typename lower_precision<T>::type;
    using R = real_t<T>;
    using RLo = real_t<Lo>;

    MixedSolver(Symmetry symmetry, int n, int nrhs, const T* a, int lda, const T* b, int ldb, T* x, int ldx,
                const SysvOptions& options, Context& ctx)
        : symmetry_(symmetry), n_(n), nrhs_(nrhs), a_(a), lda_(lda), b_(b), ldb_(ldb), x_(x), ldx_(ldx),
          options_(options), ctx_(ctx), layout_(symmetry, n, nrhs, options, ctx, true) {
        base_ = ctx.workspace(layout_.total);
        r_ = piece<T>(base_, layout_.residual);
        d_ = piece<Lo>(base_, layout_.correction);
        sums_ = piece<R>(base_, layout_.row_sums);
        norms_ = piece<R>(base_, layout_.norms);
        flags_ = piece<int>(base_, layout_.flags);
    }

    SysvResult run() {
        SysvResult result;
        // ||A||_inf: the scale of the stopping criterion and of the normwise residual.
        BATCHSOLVE_ON_BACKEND(ctx_, abs_matrix_times<T>(n_, a_, lda_, nullptr, sums_, ctx_));
        BATCHSOLVE_ON_BACKEND(ctx_, max_of<R>(n_, sums_, norms_, ctx_));
        fetch(ctx_, &norm_a_, norms_, 1);

        // TF32 updates first when asked for; if refinement then stalls, diverges or runs out of
        // iterations, the likelier cause is TF32's precision, so the same step runs again in plain
        // single precision before the chain moves on (and stays in plain single precision).
        const bool tensor_cores = options_.tensor_core_updates;
        auto precision_failure = [](StepOutcome o) {
            return o == StepOutcome::stalled || o == StepOutcome::diverged || o == StepOutcome::too_many_iterations;
        };
        if (!options_.start_with_rbt) {
            result.steps.push_back(refined(false, tensor_cores));
            if (result.steps.back().outcome == StepOutcome::converged) return finish(result);
            if (tensor_cores && precision_failure(result.steps.back().outcome)) {
                result.steps.push_back(refined(false, false));
                if (result.steps.back().outcome == StepOutcome::converged) return finish(result);
            }
        }
        if (options_.allow_rbt || options_.start_with_rbt) {
            result.steps.push_back(refined(true, tensor_cores && options_.start_with_rbt));
            if (result.steps.back().outcome == StepOutcome::converged) return finish(result);
            if (result.steps.back().tensor_cores && precision_failure(result.steps.back().outcome)) {
                result.steps.push_back(refined(true, false));
                if (result.steps.back().outcome == StepOutcome::converged) return finish(result);
            }
        }
        if (options_.allow_pivoted) {
            result.steps.push_back(pivoted());
            if (result.steps.back().outcome == StepOutcome::solved) return finish(result);
        }
        BATCHSOLVE_ON_BACKEND(ctx_, fill_nan<T>(n_, nrhs_, x_, ldx_, ctx_));
        result.path = SolvePath::none;
        result.backward_error = std::numeric_limits<double>::quiet_NaN();
        result.normwise_residual = std::numeric_limits<double>::quiet_NaN();
        return result;
    }

private:
    using Measure = refinement::Measure;
    Measure measure() {
        BATCHSOLVE_ON_BACKEND(ctx_, column_max_abs<T>(n_, nrhs_, r_, n_, norms_, ctx_));
        BATCHSOLVE_ON_BACKEND(ctx_, column_max_abs<T>(n_, nrhs_, x_, ldx_, norms_ + nrhs_, ctx_));
        std::vector<R> host(2 * std::size_t(nrhs_));
        fetch(ctx_, host.data(), norms_, host.size());
        return refinement::measure(host.data(), host.data() + nrhs_, nrhs_, n_, norm_a_,
                                   double(std::numeric_limits<R>::epsilon()));
    }

    int fetch_flag(int index) {
        int value = 0;
        fetch(ctx_, &value, flags_ + index, 1);
        return value;
    }

    // The low-precision factorisation, with or without butterflies, then refinement.
    SolveStep refined(bool rbt, bool tensor_cores) {
        SolveStep step;
        step.path = rbt ? SolvePath::rbt_nopiv_low : SolvePath::nopiv_low;
        step.tensor_cores = tensor_cores;
        const int npad = rbt ? layout_.npad : n_;
        Lo* low = piece<Lo>(base_, layout_.low_matrix);
        RLo* diagonals = piece<RLo>(base_, layout_.butterfly);
        int* overflow = flags_;
        int* info = flags_ + 1;
        ctx_.synchronize();
        detail::backend_fill_bytes(ctx_, flags_, 0, 2 * sizeof(int));

        BATCHSOLVE_ON_BACKEND(ctx_, expand_lower<T, Lo>(symmetry_, n_, a_, lda_, npad, low, npad, norm_a_, overflow, ctx_));
        if (rbt) {
            const Butterfly u = make_butterfly(n_, options_.butterfly_depth, options_.seed);
            std::vector<RLo> values(u.diagonals.begin(), u.diagonals.end());
            detail::backend_copy_to_backend(ctx_, diagonals, values.data(), values.size() * sizeof(RLo));
            BATCHSOLVE_ON_BACKEND(ctx_, rbt_matrix<Lo>(npad, u.depth, diagonals, low, npad, ctx_));
        }
        if (fetch_flag(0)) {
            step.outcome = StepOutcome::overflow;
            return step;
        }
        BATCHSOLVE_ON_BACKEND(ctx_, ldlt_factor<Lo>(symmetry_, npad, low, npad, info, piece<char>(base_, layout_.factor_scratch),
                                             tensor_cores, ctx_));
        step.column = fetch_flag(1);
        if (step.column != 0) {
            step.outcome = StepOutcome::breakdown;
            return step;
        }

        // x = 0, r = b; every pass solves for the correction of the current residual.
        BATCHSOLVE_ON_BACKEND(ctx_, copy_matrix<T>(n_, nrhs_, b_, ldb_, r_, n_, ctx_));
        zero_x();
        double previous = std::numeric_limits<double>::infinity();
        for (int pass = 0;; ++pass) {
            BATCHSOLVE_ON_BACKEND(ctx_, convert_down<T, Lo>(n_, npad, nrhs_, r_, n_, d_, npad, overflow, ctx_));
            if (fetch_flag(0)) {
                step.outcome = StepOutcome::overflow;
                return step;
            }
            if (rbt) BATCHSOLVE_ON_BACKEND(ctx_, rbt_vectors<Lo>(true, npad, nrhs_, options_.butterfly_depth, diagonals, d_, npad, ctx_));
            BATCHSOLVE_ON_BACKEND(ctx_, ldlt_solve<Lo>(symmetry_, npad, nrhs_, low, npad, d_, npad, ctx_));
            if (rbt) BATCHSOLVE_ON_BACKEND(ctx_, rbt_vectors<Lo>(false, npad, nrhs_, options_.butterfly_depth, diagonals, d_, npad, ctx_));
            BATCHSOLVE_ON_BACKEND(ctx_, add_correction<T, Lo>(n_, nrhs_, d_, npad, x_, ldx_, ctx_));
            BATCHSOLVE_ON_BACKEND(ctx_, residual<T>(symmetry_, n_, nrhs_, a_, lda_, x_, ldx_, b_, ldb_, r_, n_, ctx_));
            step.iterations = pass;  // the first pass is the solve, the later ones corrections
            const Measure m = measure();
            step.residual = m.scaled;
            if (!m.finite || m.scaled > previous) {
                step.outcome = StepOutcome::diverged;
                return step;
            }
            if (m.met) {
                step.outcome = StepOutcome::converged;
                return step;
            }
            if (pass > 0 && m.scaled > options_.stall_ratio * previous) {
                step.outcome = StepOutcome::stalled;
                return step;
            }
            if (pass >= options_.max_iterations) {
                step.outcome = StepOutcome::too_many_iterations;
                return step;
            }
            previous = m.scaled;
        }
    }

    void zero_x() {
        for (int j = 0; j < nrhs_; ++j)
            detail::backend_fill_bytes(ctx_, x_ + std::size_t(j) * ldx_, 0, std::size_t(n_) * sizeof(T));
    }

    SolveStep pivoted() {
        SolveStep step;
        int info = 0;
        BATCHSOLVE_ON_BACKEND(ctx_, copy_matrix<T>(n_, nrhs_, b_, ldb_, x_, ldx_, ctx_));
        step.path = BATCHSOLVE_ON_BACKEND(ctx_, pivoted_solve<T>(symmetry_, n_, nrhs_, a_, lda_, x_, ldx_,
                                                         piece<char>(base_, layout_.pivoted), &info, ctx_));
        if (info > 0) {
            step.outcome = StepOutcome::singular;
            step.column = info;
            return step;
        }
        BATCHSOLVE_ON_BACKEND(ctx_, residual<T>(symmetry_, n_, nrhs_, a_, lda_, x_, ldx_, b_, ldb_, r_, n_, ctx_));
        const Measure m = measure();
        step.residual = m.scaled;
        step.outcome = m.finite ? StepOutcome::solved : StepOutcome::diverged;
        return step;
    }

    // The returned step's path and iterations; the componentwise backward error of X (the residual of
    // the last step is current in r_).
    SysvResult finish(SysvResult& result) {
        const SolveStep& last = result.steps.back();
        result.path = last.path;
        result.iterations = last.iterations;
        result.normwise_residual = last.residual;
        double worst = 0;
        for (int j = 0; j < nrhs_; ++j) {
            const T* xj = x_ + std::size_t(j) * ldx_;
            BATCHSOLVE_ON_BACKEND(ctx_, abs_matrix_times<T>(n_, a_, lda_, xj, sums_, ctx_));
            BATCHSOLVE_ON_BACKEND(ctx_, componentwise_ratio<T>(n_, r_ + std::size_t(j) * n_, sums_, b_ + std::size_t(j) * ldb_,
                                                       norms_, ctx_));
            R value = 0;
            fetch(ctx_, &value, norms_, 1);
            worst = std::isnan(double(value)) ? double(value) : std::max(worst, double(value));
        }
        result.backward_error = worst;
        return result;
    }

    Symmetry symmetry_;
    int n_, nrhs_;
    const T* a_;
    int lda_;
    const T* b_;
    int ldb_;
    T* x_;
    int ldx_;
    SysvOptions options_;
    Context& ctx_;
    MixedLayout<T> layout_;
    void* base_ = nullptr;
    T* r_ = nullptr;
    Lo* d_ = nullptr;
    R* sums_ = nullptr;
    R* norms_ = nullptr;
    int* flags_ = nullptr;
    double norm_a_ = 0;
};

void check_options(const char* routine, const SysvOptions& o) {
    checks::require(o.butterfly_depth >= 1 && o.butterfly_depth <= 20, routine, "options.butterfly_depth",
                    "1 <= butterfly_depth <= 20 (got " + std::to_string(o.butterfly_depth) + ")");
    checks::require(o.max_iterations >= 0, routine, "options.max_iterations", "max_iterations >= 0");
    checks::require(o.stall_ratio > 0 && o.stall_ratio <= 1, routine, "options.stall_ratio", "0 < stall_ratio <= 1");
}

}  // namespace

template <class T>
std::size_t sysv_mixed_workspace_size(Symmetry symmetry, int n, int nrhs, const SysvOptions& options, Context& ctx) {
    constexpr const char* routine = "sysv_mixed_workspace_size";
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    check_options(routine, options);
    if (n == 0 || nrhs == 0) return 0;
    return MixedLayout<T>(effective<T>(symmetry), n, nrhs, options, ctx, true).total;
}

template <class T>
SysvResult sysv_mixed(Symmetry symmetry, Uplo uplo, int n, int nrhs, const T* a, int lda, const T* b, int ldb, T* x,
                      int ldx, const SysvOptions& options, Context& ctx) {
    constexpr const char* routine = "sysv_mixed";
    check_matrix_arguments<T>(routine, uplo, n, a, lda);
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    check_rhs_arguments<T>(routine, "b", "ldb", n, nrhs, b, ldb);
    check_rhs_arguments<T>(routine, "x", "ldx", n, nrhs, x, ldx);
    check_options(routine, options);
    if (n == 0 || nrhs == 0) return SysvResult{};
    const std::size_t x_bytes = matrix_bytes<T>(n, nrhs, ldx);
    checks::require(!overlaps(x, x_bytes, a, matrix_bytes<T>(n, n, lda)), routine, "x", "must not overlap a");
    checks::require(!overlaps(x, x_bytes, b, matrix_bytes<T>(n, nrhs, ldb)), routine, "x", "must not overlap b");
    MixedSolver<T> solver(effective<T>(symmetry), n, nrhs, a, lda, b, ldb, x, ldx, options, ctx);
    return solver.run();
}

#define INSTANTIATE(T)                                                                                   \
    template std::size_t sytrf_nopiv_workspace_size<T>(int, Context&);                                  \
    template void sytrf_nopiv<T>(Symmetry, Uplo, int, T*, int, int*, Context&);                          \
    template void sytrs_nopiv<T>(Symmetry, Uplo, int, int, const T*, int, T*, int, Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

#define INSTANTIATE_MIXED(T)                                                                              \
    template std::size_t sysv_mixed_workspace_size<T>(Symmetry, int, int, const SysvOptions&, Context&); \
    template SysvResult sysv_mixed<T>(Symmetry, Uplo, int, int, const T*, int, const T*, int, T*, int,   \
                                      const SysvOptions&, Context&);
INSTANTIATE_MIXED(double)
INSTANTIATE_MIXED(std::complex<double>)
#undef INSTANTIATE_MIXED

}  // namespace batchsolve
