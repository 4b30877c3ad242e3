// The mixed-precision refinement driver, written once for every solver that factors in a lower
// precision and refines in the working precision (posv_mixed in cholesky_large.cpp, sysv_mixed in
// ldlt.cpp), in the structure of LAPACK's ?sposv / ?sgesv: the solver plugs in its factorisation
// (a LowFactor: round A down, factor, solve with the factor) and its working-precision fallback
// (a DirectSolve), lists the steps of its chain, and the driver runs them with one stopping test,
// one set of residual / norm / update primitives (core/refinement_backend.hpp) and one result type
// (batchsolve/refinement.hpp). How a pass solves its correction equation A d = r is a Corrector:
// classical refinement solves it with the low factor alone; a GMRES-based refinement (GMRES on
// A d = r preconditioned by the low factor) is a second Corrector, the rest unchanged.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "batchsolve/buffer.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/refinement.hpp"
#include "batchsolve/types.hpp"
#include "checks.hpp"
#include "refinement_backend.hpp"

namespace batchsolve::refinement {

// ---- the stopping test, from the per-right-hand-side norms fetched from the backend -------------------

struct Measure {
    double scaled = 0;   // max over right-hand sides of ||r_j|| / (||A|| ||x_j||)
    bool met = true;     // every one meets ||r_j|| <= ||x_j|| ||A|| eps max(sqrt(n), kSmallOrderFloor)
    bool finite = true;  // no residual or solution norm is Inf or NaN
};

// The smallest factor of eps in the criterion, for small n. eps sqrt(n) alone is below the rounding
// floor of a complex residual at n = 1: x rounded per component (u |x|), the complex product a x
// (up to sqrt(5) u |a| |x|) and the refinement's own rounding of x put ||b - A x|| / (||A|| ||x||) up
// to about 5.5 u = 2.7 eps, however often one refines. Measured (numpy, well-conditioned complex
// symmetric systems refined to their floor): at n = 1 the ratio exceeds 1 eps in 0.5% of the solves
// (max 1.86 eps over 20,000); at n >= 2 it stays below 0.81 eps sqrt(n); real systems stay below
// 0.98 eps sqrt(n). sysv_mixed's test met it: complex n = 1 "stalled after 3 iterations (residual
// 2.35e-16)" > eps = 2.22e-16 (seed 17261395628548517917), then took another path. 4 eps is still
// the working precision's rounding level.
inline constexpr double kSmallOrderFloor = 4;

// `r_norms[j]` = ||r_j||_inf and `x_norms[j]` = ||x_j||_inf, j < nrhs; `eps` the working precision's
// machine epsilon (2^-52 in double: with the unit roundoff 2^-53 the criterion sits at the rounding
// floor of the residual itself for small n, and refinement would stall just short of it).
template <class R>
Measure measure(const R* r_norms, const R* x_norms, int nrhs, int n, double norm_a, double eps) {
    Measure m;
    for (int j = 0; j < nrhs; ++j) {
        const double r = r_norms[j], x = x_norms[j];
        if (!std::isfinite(r) || !std::isfinite(x)) {
            m.finite = false, m.met = false, m.scaled = std::numeric_limits<double>::infinity();
            continue;
        }
        const double scale = x * norm_a;
        m.met = m.met && r <= scale * eps * std::max(std::sqrt(double(n)), kSmallOrderFloor);
        m.scaled = std::max(m.scaled, scale > 0 ? r / scale : (r > 0 ? std::numeric_limits<double>::infinity() : 0.0));
    }
    return m;
}

// ---- the checks every mixed-precision entry point runs ----------------------------------------------

// nrhs, B and X (n x nrhs, ldb / ldx); X must not overlap A (n x n, lda) or B. A is checked by the
// caller (its triangle rules differ).
template <class T>
void check_system(const char* routine, int n, int nrhs, const T* a, int lda, const T* b, int ldb, const T* x, int ldx) {
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    checks::check_dense_rhs(routine, "b", "ldb", n, nrhs, b, ldb);
    checks::check_dense_rhs(routine, "x", "ldx", n, nrhs, x, ldx);
    if (n == 0 || nrhs == 0) return;
    const std::size_t x_bytes = checks::dense_bytes<T>(n, nrhs, ldx);
    checks::require(!checks::overlaps(x, x_bytes, a, checks::dense_bytes<T>(n, n, lda)), routine, "x", "must not overlap a");
    checks::require(!checks::overlaps(x, x_bytes, b, checks::dense_bytes<T>(n, nrhs, ldb)), routine, "x", "must not overlap b");
}

inline void check_options(const char* routine, const RefinementOptions& o) {
    checks::require(o.max_iterations >= 0, routine, "options.max_iterations",
                    "max_iterations >= 0 (got " + std::to_string(o.max_iterations) + ")");
    checks::require(o.stall_ratio > 0 && o.stall_ratio <= 1, routine, "options.stall_ratio", "0 < stall_ratio <= 1");
}

// ---- the driver ----------------------------------------------------------------------------------------

// The lower precision a working precision factors in.
template <class T> struct lower_precision;
template <> struct lower_precision<double> { using type = float; };
template <> struct lower_precision<std::complex<double>> { using type = std::complex<float>; };
template <class T> using lower_t = typename lower_precision<T>::type;

inline std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// The working-precision A: its stored triangle and what A^T = A means for complex data.
template <class T>
struct Operator {
    Uplo uplo = Uplo::lower;
    Symmetry symmetry = Symmetry::symmetric;
    int n = 0;
    const T* a = nullptr;
    int lda = 0;
};

// What the driver lends its plug-ins: the matrix region (the low factor's and the fallback's, never
// alive together), two flags in the backend's memory, cleared before each step, and ||A||_inf.
struct Scratch {
    void* matrix = nullptr;
    int* overflow = nullptr;  // set by a conversion that meets a value not finite in the lower precision
    int* info = nullptr;      // a factorisation's info
    double norm_a = 0;
};

template <class U>
U* piece(void* base, std::size_t offset) {
    return reinterpret_cast<U*>(static_cast<char*>(base) + offset);
}

template <class U>
void fetch(Context& ctx, U* host, const U* source, std::size_t count) {
    detail::backend_copy_to_host(ctx, host, source, count * sizeof(U));
}

inline int read_flag(Context& ctx, const int* flag) {
    int value = 0;
    fetch(ctx, &value, flag, 1);
    return value;
}

// The lower-precision factorisation a refined step corrects with. The driver passes the system,
// its scratch and the context to every call: a plug-in holds only what is its own.
template <class T>
class LowFactor {
public:
    using Lo = lower_t<T>;
    virtual ~LowFactor() = default;
    virtual SolvePath path() const = 0;
    // Rows of the correction vectors (the factor's order: padded for the butterflies).
    virtual int rows(const Operator<T>& op) const = 0;
    // A rounded to Lo and factored into scratch.matrix. False when that failed: `step` then holds
    // the outcome (overflow, breakdown, not_positive_definite) and the column.
    virtual bool factor(const Operator<T>& op, bool tensor_cores, const Scratch& scratch, SolveStep& step,
                        Context& ctx) = 0;
    // d <- M^-1 d for nrhs columns of rows() entries (leading dimension ldd), M the factor.
    virtual void solve(const Operator<T>& op, int nrhs, Lo* d, int ldd, const Scratch& scratch, Context& ctx) = 0;
};

// A factorisation and solve in the working precision (the chain's fallback).
template <class T>
class DirectSolve {
public:
    virtual ~DirectSolve() = default;
    // x (ldx) holds B on entry and X on return. The step's path and outcome: solved, or the
    // factorisation's failure (not_positive_definite, singular) with its column. The driver then
    // measures the residual.
    virtual SolveStep solve(const Operator<T>& op, int nrhs, T* x, int ldx, const Scratch& scratch, Context& ctx) = 0;
};

// One pass's correction: x += d with A d ~ r.
template <class T>
struct Pass {
    const Operator<T>& op;
    int nrhs;
    const T* r;      // n x nrhs, ld n: the current residual
    lower_t<T>* d;   // rows(op) x nrhs of the factor, ld rows(op): the correction's room
    T* x;
    int ldx;
    const Scratch& scratch;
};

template <class T>
class Corrector {
public:
    virtual ~Corrector() = default;
    // False when the residual does not fit the lower precision (the step ends with overflow).
    virtual bool correct(LowFactor<T>& factor, const Pass<T>& pass, Context& ctx) = 0;
};

// Classical refinement: d = M^-1 r, solved in the lower precision.
template <class T>
class ClassicalCorrector final : public Corrector<T> {
public:
    bool correct(LowFactor<T>& factor, const Pass<T>& p, Context& ctx) override {
        using Lo = lower_t<T>;
        const int rows = factor.rows(p.op);
        BATCHSOLVE_ON_BACKEND(ctx, convert_down<T, Lo>(p.op.n, rows, p.nrhs, p.r, p.op.n, p.d, rows, p.scratch.overflow, ctx));
        if (read_flag(ctx, p.scratch.overflow)) return false;
        factor.solve(p.op, p.nrhs, p.d, rows, p.scratch, ctx);
        BATCHSOLVE_ON_BACKEND(ctx, add_correction<T, Lo>(p.op.n, p.nrhs, p.d, rows, p.x, p.ldx, ctx));
        return true;
    }
};

// One step of a chain: a refined factor or a direct solve (exactly one is set).
template <class T>
struct ChainStep {
    LowFactor<T>* refined = nullptr;
    DirectSolve<T>* direct = nullptr;
};

// The driver's workspace, in bytes from its start: the plug-ins' matrix region first, then the
// vectors (residual, correction, row sums, norms, flags).
struct Layout {
    std::size_t matrix = 0, residual = 0, correction = 0, row_sums = 0, norms = 0, flags = 0, total = 0;

    template <class T>
    static Layout of(int n, int nrhs, int correction_rows, std::size_t matrix_bytes) {
        using Lo = lower_t<T>;
        using R = real_t<T>;
        Layout l;
        std::size_t at = 0;
        l.matrix = at, at += align_up(matrix_bytes);
        l.residual = at, at += align_up(std::size_t(n) * nrhs * sizeof(T));
        l.correction = at, at += align_up(std::size_t(correction_rows) * nrhs * sizeof(Lo));
        l.row_sums = at, at += align_up(std::size_t(n) * sizeof(R));
        l.norms = at, at += align_up(std::size_t(2 * nrhs + 2) * sizeof(R));
        l.flags = at, at += align_up(2 * sizeof(int));
        l.total = at;
        return l;
    }
};

template <class T>
class Driver {
public:
    using Lo = lower_t<T>;
    using R = real_t<T>;

    // `workspace`: layout.total bytes in the backend's memory. X must not overlap A or B.
    Driver(const Operator<T>& op, int nrhs, const T* b, int ldb, T* x, int ldx, const RefinementOptions& options,
           const Layout& layout, void* workspace, Context& ctx, Corrector<T>* corrector = nullptr)
        : op_(op), nrhs_(nrhs), b_(b), ldb_(ldb), x_(x), ldx_(ldx), options_(options), ctx_(ctx),
          corrector_(corrector ? corrector : &classical_) {
        scratch_.matrix = static_cast<char*>(workspace) + layout.matrix;
        r_ = piece<T>(workspace, layout.residual);
        d_ = piece<Lo>(workspace, layout.correction);
        sums_ = piece<R>(workspace, layout.row_sums);
        norms_ = piece<R>(workspace, layout.norms);
        flags_ = piece<int>(workspace, layout.flags);
        scratch_.overflow = flags_;
        scratch_.info = flags_ + 1;
    }

    // ||A||_inf (also the scale the LDL^T's butterfly padding takes).
    double norm_a() {
        if (!have_norm_) {
            BATCHSOLVE_ON_BACKEND(ctx_, abs_times<T>(op_.uplo, op_.n, op_.a, op_.lda, nullptr, sums_, ctx_));
            BATCHSOLVE_ON_BACKEND(ctx_, max_of<R>(op_.n, sums_, norms_, ctx_));
            R value = 0;
            fetch(ctx_, &value, norms_, 1);
            scratch_.norm_a = double(value);
            have_norm_ = true;
        }
        return scratch_.norm_a;
    }

    // Runs the chain's steps in order until one produces X. TF32 updates, when asked for, on the
    // first refined step only: if it then stalls, diverges or runs out of iterations, TF32's 10-bit
    // products are the likelier cause than A itself, so the same step runs again without them
    // before the chain moves on (and the later steps run without them too).
    MixedResult run(const std::vector<ChainStep<T>>& chain) {
        MixedResult result;
        norm_a();
        bool first_refined = true;
        for (const ChainStep<T>& link : chain) {
            if (link.refined) {
                const bool tensor_cores = first_refined && options_.tensor_core_updates;
                first_refined = false;
                result.steps.push_back(refined(*link.refined, tensor_cores));
                if (result.steps.back().outcome == StepOutcome::converged) return finish(result);
                if (tensor_cores && precision_failure(result.steps.back().outcome)) {
                    result.steps.push_back(refined(*link.refined, false));
                    if (result.steps.back().outcome == StepOutcome::converged) return finish(result);
                }
            } else {
                result.steps.push_back(direct(*link.direct));
                if (result.steps.back().outcome == StepOutcome::solved) return finish(result);
            }
        }
        // Nothing passed: NaN, never an unchecked X.
        BATCHSOLVE_ON_BACKEND(ctx_, fill_nan<T>(op_.n, nrhs_, x_, ldx_, ctx_));
        result.path = SolvePath::none;
        result.iterations = result.steps.empty() ? 0 : result.steps.back().iterations;
        result.backward_error = std::numeric_limits<double>::quiet_NaN();
        result.normwise_residual = std::numeric_limits<double>::quiet_NaN();
        return result;
    }

private:
    static bool precision_failure(StepOutcome o) {
        return o == StepOutcome::stalled || o == StepOutcome::diverged || o == StepOutcome::too_many_iterations;
    }

    Measure measure_residual() {
        BATCHSOLVE_ON_BACKEND(ctx_, column_max_abs<T>(op_.n, nrhs_, r_, op_.n, norms_, ctx_));
        BATCHSOLVE_ON_BACKEND(ctx_, column_max_abs<T>(op_.n, nrhs_, x_, ldx_, norms_ + nrhs_, ctx_));
        std::vector<R> host(2 * std::size_t(nrhs_));
        fetch(ctx_, host.data(), norms_, host.size());
        return measure(host.data(), host.data() + nrhs_, nrhs_, op_.n, scratch_.norm_a,
                       double(std::numeric_limits<R>::epsilon()));
    }

    void compute_residual() {
        BATCHSOLVE_ON_BACKEND(ctx_, residual<T>(op_.uplo, op_.symmetry, op_.n, nrhs_, op_.a, op_.lda, x_, ldx_, b_, ldb_, r_,
                                                op_.n, ctx_));
    }

    void clear_flags() {
        // The flags may still be read by work queued before (the previous step's last fetch
        // returned, but a backend may keep a conversion in flight).
        ctx_.synchronize();
        detail::backend_fill_bytes(ctx_, flags_, 0, 2 * sizeof(int));
    }

    SolveStep refined(LowFactor<T>& factor, bool tensor_cores) {
        SolveStep step;
        step.path = factor.path();
        step.tensor_cores = tensor_cores;
        clear_flags();
        if (!factor.factor(op_, tensor_cores, scratch_, step, ctx_)) return step;

        // x = 0, r = b; every pass solves for the correction of the current residual.
        BATCHSOLVE_ON_BACKEND(ctx_, copy_matrix<T>(op_.n, nrhs_, b_, ldb_, r_, op_.n, ctx_));
        for (int j = 0; j < nrhs_; ++j)
            detail::backend_fill_bytes(ctx_, x_ + std::size_t(j) * ldx_, 0, std::size_t(op_.n) * sizeof(T));
        const Pass<T> pass{op_, nrhs_, r_, d_, x_, ldx_, scratch_};
        double previous = std::numeric_limits<double>::infinity();
        for (int k = 0;; ++k) {
            if (!corrector_->correct(factor, pass, ctx_)) {
                step.outcome = StepOutcome::overflow;
                return step;
            }
            compute_residual();
            step.iterations = k;  // the first pass is the solve, the later ones corrections
            const Measure m = measure_residual();
            step.residual = m.scaled;
            if (!m.finite || m.scaled > previous) {
                step.outcome = StepOutcome::diverged;
                return step;
            }
            if (m.met) {
                step.outcome = StepOutcome::converged;
                return step;
            }
            if (k > 0 && m.scaled > options_.stall_ratio * previous) {
                step.outcome = StepOutcome::stalled;
                return step;
            }
            if (k >= options_.max_iterations) {
                step.outcome = StepOutcome::too_many_iterations;
                return step;
            }
            previous = m.scaled;
        }
    }

    // The working-precision solve; its residual is measured, not refined.
    SolveStep direct(DirectSolve<T>& solver) {
        clear_flags();
        BATCHSOLVE_ON_BACKEND(ctx_, copy_matrix<T>(op_.n, nrhs_, b_, ldb_, x_, ldx_, ctx_));
        SolveStep step = solver.solve(op_, nrhs_, x_, ldx_, scratch_, ctx_);
        if (step.outcome != StepOutcome::solved) return step;
        compute_residual();
        const Measure m = measure_residual();
        step.residual = m.scaled;
        step.outcome = m.finite ? StepOutcome::solved : StepOutcome::diverged;
        return step;
    }

    // The returned step's path and iterations; the componentwise backward error of X (r_ holds the
    // last step's residual).
    MixedResult finish(MixedResult& result) {
        const SolveStep& last = result.steps.back();
        result.path = last.path;
        result.iterations = last.iterations;
        result.normwise_residual = last.residual;
        double worst = 0;
        for (int j = 0; j < nrhs_; ++j) {
            const T* xj = x_ + std::size_t(j) * ldx_;
            BATCHSOLVE_ON_BACKEND(ctx_, abs_times<T>(op_.uplo, op_.n, op_.a, op_.lda, xj, sums_, ctx_));
            BATCHSOLVE_ON_BACKEND(ctx_, componentwise_ratio<T>(op_.n, r_ + std::size_t(j) * op_.n, sums_,
                                                               b_ + std::size_t(j) * ldb_, norms_, ctx_));
            R value = 0;
            fetch(ctx_, &value, norms_, 1);
            worst = std::isnan(double(value)) ? double(value) : std::max(worst, double(value));
        }
        result.backward_error = worst;
        return result;
    }

    Operator<T> op_;
    int nrhs_;
    const T* b_;
    int ldb_;
    T* x_;
    int ldx_;
    RefinementOptions options_;
    Context& ctx_;
    ClassicalCorrector<T> classical_;
    Corrector<T>* corrector_;
    Scratch scratch_;
    T* r_ = nullptr;
    Lo* d_ = nullptr;
    R* sums_ = nullptr;
    R* norms_ = nullptr;
    int* flags_ = nullptr;
    bool have_norm_ = false;
};

}  // namespace batchsolve::refinement
