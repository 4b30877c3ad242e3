// The large-matrix Cholesky solvers of cholesky_large.hpp: argument and configuration checks, the
// table of default configurations, dispatch to the context's backend, and posv_mixed's refinement
// (FP32 factor, FP64 residuals, FP64 fallback), written once for both backends.
#include "batchsolve/cholesky_large.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "batchsolve/buffer.hpp"
#include "batchsolve/checked_size.hpp"
#include "checks.hpp"
#include "refinement.hpp"
#include "cholesky_large_backend.hpp"
#include "ldlt_backend.hpp"  // the generic vector primitives: convert_down, add_correction, norms, copies

namespace batchsolve {

const char* to_string(CholeskyVariant v) {
    switch (v) {
        case CholeskyVariant::automatic: return "automatic";
        case CholeskyVariant::right_looking: return "right";
        case CholeskyVariant::left_looking: return "left";
    }
    return "?";
}

CholeskyVariant parse_cholesky_variant(const std::string& text) {
    if (text == "automatic") return CholeskyVariant::automatic;
    if (text == "right" || text == "right_looking") return CholeskyVariant::right_looking;
    if (text == "left" || text == "left_looking") return CholeskyVariant::left_looking;
    throw InvalidArgument("parse_cholesky_variant", "text", "'automatic', 'right' or 'left' (got '" + text + "')");
}

const char* to_string(Potf2Strip s) {
    switch (s) {
        case Potf2Strip::automatic: return "automatic";
        case Potf2Strip::columns: return "columns";
        case Potf2Strip::warp: return "warp";
    }
    return "?";
}

const char* to_string(PosvPath p) {
    switch (p) {
        case PosvPath::single_refined: return "single_refined";
        case PosvPath::double_direct: return "double_direct";
        case PosvPath::none: return "none";
    }
    return "?";
}

const char* to_string(PosvOutcome o) {
    switch (o) {
        case PosvOutcome::converged: return "converged";
        case PosvOutcome::solved: return "solved";
        case PosvOutcome::overflow: return "overflow";
        case PosvOutcome::not_positive_definite: return "not_positive_definite";
        case PosvOutcome::stalled: return "stalled";
        case PosvOutcome::diverged: return "diverged";
        case PosvOutcome::too_many_iterations: return "too_many_iterations";
    }
    return "?";
}

std::string PosvMixedResult::describe() const {
    std::ostringstream text;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const PosvStep& s = steps[k];
        if (k) text << " -> ";
        text << to_string(s.path) << (s.tensor_cores ? " (TF32)" : "") << ": " << to_string(s.outcome);
        if (s.outcome == PosvOutcome::not_positive_definite) text << " at column " << s.column;
        if (s.path == PosvPath::single_refined) text << " after " << s.iterations << " iterations";
        if (s.residual != 0) text << " (residual " << s.residual << ")";
    }
    if (steps.empty()) text << "nothing to solve";
    return text.str();
}

// ---- configurations ------------------------------------------------------------------------------------

namespace cholesky_large_detail {

namespace {

// Defaults per precision (first row with n <= n_max). The first H100 run (01:40 call, 0d598ef)
// showed the panel bound at every n up to 16384 (74% of the time at 4096, 38% at 16384) with leaves
// that re-read global memory and cuBLAS TRSM/SYRK between them: the defaults now take leaves that
// live in shared memory (128 for d, 128-192 for s), factored by one warp per strip, and recursion
// only where the panel is wide enough for the trailing update to hide it. large_bench --sweep
// measures the alternatives.
constexpr DefaultRow kDoubleRows[] = {
    {3072, 128, 16, 0, CholeskyVariant::right_looking, Potf2Strip::warp},
    {12288, 256, 16, 1, CholeskyVariant::right_looking, Potf2Strip::warp},
    {std::numeric_limits<int>::max(), 512, 16, 2, CholeskyVariant::right_looking, Potf2Strip::warp},
};
constexpr DefaultRow kSingleRows[] = {
    {3072, 128, 16, 0, CholeskyVariant::right_looking, Potf2Strip::warp},
    {12288, 256, 16, 1, CholeskyVariant::right_looking, Potf2Strip::warp},
    {std::numeric_limits<int>::max(), 512, 16, 2, CholeskyVariant::right_looking, Potf2Strip::warp},
};

template <std::size_t N>
const DefaultRow& row_for(const DefaultRow (&rows)[N], int n) {
    for (const DefaultRow& r : rows)
        if (n <= r.n_max) return r;
    return rows[N - 1];
}

}  // namespace

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
    return "";
}

template <class T>
LargeCholeskyConfig resolve(const LargeCholeskyConfig& config, int n) {
    const DefaultRow& row = std::is_same_v<real_t<T>, float> ? row_for(kSingleRows, n) : row_for(kDoubleRows, n);
    LargeCholeskyConfig c = config;
    if (c.nb == 0) c.nb = row.nb;
    if (c.ib == 0) c.ib = row.ib;
    if (c.recursion_depth == -1) c.recursion_depth = row.recursion_depth;
    if (c.variant == CholeskyVariant::automatic) c.variant = row.variant;
    if (c.strip == Potf2Strip::automatic) c.strip = row.strip;
    return c;
}

template LargeCholeskyConfig resolve<float>(const LargeCholeskyConfig&, int);
template LargeCholeskyConfig resolve<double>(const LargeCholeskyConfig&, int);

}  // namespace cholesky_large_detail

template <class T>
LargeCholeskyConfig cholesky_large_default_config(int n) {
    checks::require(n >= 0, "cholesky_large_default_config", "n", "n >= 0 (got " + std::to_string(n) + ")");
    return cholesky_large_detail::resolve<T>(LargeCholeskyConfig{}, n);
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

void check_rhs_arguments(const char* routine, const char* name, const char* ld_name, int n, int nrhs, const void* b,
                         int ldb) {
    checks::require(ldb >= std::max(1, n), routine, ld_name,
                    std::string(ld_name) + " >= max(1, n) (got " + std::to_string(ldb) + ", n = " + std::to_string(n) + ")");
    checks::require(n == 0 || nrhs == 0 || b != nullptr, routine, name, "non-null");
}

// Bytes from the first to one past the last element of a rows x cols matrix (ld): the checks of
// size overflow and of overlap both use it.
template <class T>
std::size_t matrix_bytes(int rows, int cols, int ld) {
    if (rows == 0 || cols == 0) return 0;
    return (std::size_t(cols - 1) * std::size_t(ld) + std::size_t(rows)) * sizeof(T);
}

bool overlaps(const void* p, std::size_t p_bytes, const void* q, std::size_t q_bytes) {
    auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(q);
    return a < b + q_bytes && b < a + p_bytes;
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
    const LargeCholeskyConfig resolved = cholesky_large_detail::resolve<T>(config, n);
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
    check_rhs_arguments(routine, "b", "ldb", n, nrhs, b, ldb);
    if (n == 0 || nrhs == 0) return;
    checks::require(!overlaps(b, matrix_bytes<T>(n, nrhs, ldb), a, matrix_bytes<T>(n, n, lda)), routine, "b",
                    "must not overlap a");
    BATCHSOLVE_ON_BACKEND(ctx, large_solve<T>(uplo, n, nrhs, a, lda, b, ldb, ctx));
}

// ---- posv_mixed ------------------------------------------------------------------------------------

namespace {

template <class T> struct factor_precision;
template <> struct factor_precision<double> { using type = float; };

// posv_mixed's workspace, in bytes from its start. The FP32 copy of A and the FP64 fallback's copy
// are never alive together: they share `matrix_region`.
template <class T>
struct PosvLayout {
    using Lo = typename factor_precision<T>::type;
    std::size_t matrix_region = 0, residual = 0, correction = 0, row_sums = 0, norms = 0, flags = 0, total = 0;

    PosvLayout(int n, int nrhs, const PosvMixedOptions& options) {
        using cholesky_large_detail::align_up;
        // n^2 < 2^62 always; its bytes may not fit (checked before any allocation).
        const std::uint64_t elements = std::uint64_t(n) * std::uint64_t(n);
        const auto bytes = checked_bytes(elements, sizeof(T));
        checks::require(bytes.has_value(), "posv_mixed", "n", "n^2 doubles addressable (got n = " + std::to_string(n) + ")");
        const std::size_t low = std::size_t(elements) * sizeof(Lo);
        const std::size_t high = options.allow_fallback ? *bytes : 0;
        std::size_t at = 0;
        matrix_region = at, at += align_up(std::max(low, high));
        residual = at, at += align_up(std::size_t(n) * nrhs * sizeof(T));
        correction = at, at += align_up(std::size_t(n) * nrhs * sizeof(Lo));
        row_sums = at, at += align_up(std::size_t(n) * sizeof(T));
        norms = at, at += align_up(std::size_t(2 * nrhs + 2) * sizeof(T));
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
class PosvMixed {
public:
    using Lo = typename factor_precision<T>::type;

    PosvMixed(Uplo uplo, int n, int nrhs, const T* a, int lda, const T* b, int ldb, T* x, int ldx,
              const PosvMixedOptions& options, Context& ctx)
        : uplo_(uplo), n_(n), nrhs_(nrhs), a_(a), lda_(lda), b_(b), ldb_(ldb), x_(x), ldx_(ldx), options_(options),
          ctx_(ctx), layout_(n, nrhs, options) {
        base_ = ctx.workspace(layout_.total);
        r_ = piece<T>(base_, layout_.residual);
        d_ = piece<Lo>(base_, layout_.correction);
        sums_ = piece<T>(base_, layout_.row_sums);
        norms_ = piece<T>(base_, layout_.norms);
        flags_ = piece<int>(base_, layout_.flags);
    }

    PosvMixedResult run() {
        PosvMixedResult result;
        // ||A||_inf: the scale of the stopping criterion and of the normwise residual.
        BATCHSOLVE_ON_BACKEND(ctx_, abs_symmetric_times<T>(uplo_, n_, a_, lda_, nullptr, sums_, ctx_));
        BATCHSOLVE_ON_BACKEND(ctx_, max_of<T>(n_, sums_, norms_, ctx_));
        fetch(ctx_, &norm_a_, norms_, 1);

        auto precision_failure = [](PosvOutcome o) {
            return o == PosvOutcome::stalled || o == PosvOutcome::diverged || o == PosvOutcome::too_many_iterations;
        };
        result.steps.push_back(refined(options_.tensor_core_updates));
        if (result.steps.back().outcome == PosvOutcome::converged) return finish(result);
        // TF32's 10-bit products are the likelier cause of a refinement failure than A itself: plain
        // FP32 once more before the FP64 factorisation.
        if (options_.tensor_core_updates && precision_failure(result.steps.back().outcome)) {
            result.steps.push_back(refined(false));
            if (result.steps.back().outcome == PosvOutcome::converged) return finish(result);
        }
        if (options_.allow_fallback) {
            result.steps.push_back(direct());
            if (result.steps.back().outcome == PosvOutcome::solved) return finish(result);
        }
        BATCHSOLVE_ON_BACKEND(ctx_, fill_nan<T>(n_, nrhs_, x_, ldx_, ctx_));
        result.path = PosvPath::none;
        result.iterations = result.steps.back().iterations;
        result.backward_error = std::numeric_limits<double>::quiet_NaN();
        result.normwise_residual = std::numeric_limits<double>::quiet_NaN();
        return result;
    }

private:
    using Measure = refinement::Measure;
    Measure measure() {
        BATCHSOLVE_ON_BACKEND(ctx_, column_max_abs<T>(n_, nrhs_, r_, n_, norms_, ctx_));
        BATCHSOLVE_ON_BACKEND(ctx_, column_max_abs<T>(n_, nrhs_, x_, ldx_, norms_ + nrhs_, ctx_));
        std::vector<T> host(2 * std::size_t(nrhs_));
        fetch(ctx_, host.data(), norms_, host.size());
        return refinement::measure(host.data(), host.data() + nrhs_, nrhs_, n_, norm_a_,
                                   double(std::numeric_limits<T>::epsilon()));
    }

    int fetch_flag(int index) {
        int value = 0;
        fetch(ctx_, &value, flags_ + index, 1);
        return value;
    }

    // FP32 Cholesky of A rounded to float, then refinement with FP64 residuals.
    PosvStep refined(bool tensor_cores) {
        PosvStep step;
        step.path = PosvPath::single_refined;
        step.tensor_cores = tensor_cores;
        Lo* low = piece<Lo>(base_, layout_.matrix_region);
        int* overflow = flags_;
        int* info = flags_ + 1;
        ctx_.synchronize();
        detail::backend_fill_bytes(ctx_, flags_, 0, 2 * sizeof(int));
        BATCHSOLVE_ON_BACKEND(ctx_, convert_triangle<T>(uplo_, n_, a_, lda_, low, n_, overflow, ctx_));
        if (fetch_flag(0)) {
            step.outcome = PosvOutcome::overflow;
            return step;
        }
        LargeCholeskyConfig config;
        config.tf32_updates = tensor_cores;
        const LargeCholeskyConfig resolved = cholesky_large_detail::resolve<Lo>(config, n_);
        BATCHSOLVE_ON_BACKEND(ctx_, large_factor<Lo>(uplo_, n_, low, n_, info, resolved, nullptr, ctx_));
        step.column = fetch_flag(1);
        if (step.column != 0) {
            step.outcome = PosvOutcome::not_positive_definite;
            return step;
        }

        // x = 0, r = b; every pass solves for the correction of the current residual.
        BATCHSOLVE_ON_BACKEND(ctx_, copy_matrix<T>(n_, nrhs_, b_, ldb_, r_, n_, ctx_));
        for (int j = 0; j < nrhs_; ++j)
            detail::backend_fill_bytes(ctx_, x_ + std::size_t(j) * ldx_, 0, std::size_t(n_) * sizeof(T));
        double previous = std::numeric_limits<double>::infinity();
        for (int pass = 0;; ++pass) {
            BATCHSOLVE_ON_BACKEND(ctx_, convert_down<T, Lo>(n_, n_, nrhs_, r_, n_, d_, n_, overflow, ctx_));
            if (fetch_flag(0)) {
                step.outcome = PosvOutcome::overflow;
                return step;
            }
            BATCHSOLVE_ON_BACKEND(ctx_, large_solve<Lo>(uplo_, n_, nrhs_, low, n_, d_, n_, ctx_));
            BATCHSOLVE_ON_BACKEND(ctx_, add_correction<T, Lo>(n_, nrhs_, d_, n_, x_, ldx_, ctx_));
            BATCHSOLVE_ON_BACKEND(ctx_, symmetric_residual<T>(uplo_, n_, nrhs_, a_, lda_, x_, ldx_, b_, ldb_, r_, n_, ctx_));
            step.iterations = pass;  // the first pass is the solve, the later ones corrections
            const Measure m = measure();
            step.residual = m.scaled;
            if (!m.finite || m.scaled > previous) {
                step.outcome = PosvOutcome::diverged;
                return step;
            }
            if (m.met) {
                step.outcome = PosvOutcome::converged;
                return step;
            }
            if (pass > 0 && m.scaled > options_.stall_ratio * previous) {
                step.outcome = PosvOutcome::stalled;
                return step;
            }
            if (pass >= options_.max_iterations) {
                step.outcome = PosvOutcome::too_many_iterations;
                return step;
            }
            previous = m.scaled;
        }
    }

    // FP64 Cholesky of a copy of A and one solve; its residual is measured, not refined.
    PosvStep direct() {
        PosvStep step;
        step.path = PosvPath::double_direct;
        T* copy = piece<T>(base_, layout_.matrix_region);
        int* info = flags_ + 1;
        detail::backend_fill_bytes(ctx_, info, 0, sizeof(int));
        BATCHSOLVE_ON_BACKEND(ctx_, copy_matrix<T>(n_, n_, a_, lda_, copy, n_, ctx_));
        const LargeCholeskyConfig resolved = cholesky_large_detail::resolve<T>(LargeCholeskyConfig{}, n_);
        BATCHSOLVE_ON_BACKEND(ctx_, large_factor<T>(uplo_, n_, copy, n_, info, resolved, nullptr, ctx_));
        step.column = fetch_flag(1);
        if (step.column != 0) {
            step.outcome = PosvOutcome::not_positive_definite;
            return step;
        }
        BATCHSOLVE_ON_BACKEND(ctx_, copy_matrix<T>(n_, nrhs_, b_, ldb_, x_, ldx_, ctx_));
        BATCHSOLVE_ON_BACKEND(ctx_, large_solve<T>(uplo_, n_, nrhs_, copy, n_, x_, ldx_, ctx_));
        BATCHSOLVE_ON_BACKEND(ctx_, symmetric_residual<T>(uplo_, n_, nrhs_, a_, lda_, x_, ldx_, b_, ldb_, r_, n_, ctx_));
        const Measure m = measure();
        step.residual = m.scaled;
        step.outcome = m.finite ? PosvOutcome::solved : PosvOutcome::diverged;
        return step;
    }

    // The returned step's path and iterations; the componentwise backward error of X (r_ holds the
    // last step's residual).
    PosvMixedResult finish(PosvMixedResult& result) {
        const PosvStep& last = result.steps.back();
        result.path = last.path;
        result.iterations = last.iterations;
        result.normwise_residual = last.residual;
        double worst = 0;
        for (int j = 0; j < nrhs_; ++j) {
            const T* xj = x_ + std::size_t(j) * ldx_;
            BATCHSOLVE_ON_BACKEND(ctx_, abs_symmetric_times<T>(uplo_, n_, a_, lda_, xj, sums_, ctx_));
            BATCHSOLVE_ON_BACKEND(ctx_, componentwise_ratio<T>(n_, r_ + std::size_t(j) * n_, sums_, b_ + std::size_t(j) * ldb_,
                                                        norms_, ctx_));
            T value = 0;
            fetch(ctx_, &value, norms_, 1);
            worst = std::isnan(double(value)) ? double(value) : std::max(worst, double(value));
        }
        result.backward_error = worst;
        return result;
    }

    Uplo uplo_;
    int n_, nrhs_;
    const T* a_;
    int lda_;
    const T* b_;
    int ldb_;
    T* x_;
    int ldx_;
    PosvMixedOptions options_;
    Context& ctx_;
    PosvLayout<T> layout_;
    void* base_ = nullptr;
    T* r_ = nullptr;
    Lo* d_ = nullptr;
    T* sums_ = nullptr;
    T* norms_ = nullptr;
    int* flags_ = nullptr;
    double norm_a_ = 0;
};

void check_options(const char* routine, const PosvMixedOptions& o) {
    checks::require(o.max_iterations >= 0, routine, "options.max_iterations",
                    "max_iterations >= 0 (got " + std::to_string(o.max_iterations) + ")");
    checks::require(o.stall_ratio > 0 && o.stall_ratio <= 1, routine, "options.stall_ratio", "0 < stall_ratio <= 1");
}

}  // namespace

template <class T>
std::size_t posv_mixed_workspace_size(Uplo uplo, int n, int nrhs, const PosvMixedOptions& options, Context&) {
    constexpr const char* routine = "posv_mixed_workspace_size";
    check_uplo(routine, uplo);
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    check_options(routine, options);
    if (n == 0 || nrhs == 0) return 0;
    return PosvLayout<T>(n, nrhs, options).total;
}

template <class T>
PosvMixedResult posv_mixed(Uplo uplo, int n, int nrhs, const T* a, int lda, const T* b, int ldb, T* x, int ldx,
                           const PosvMixedOptions& options, Context& ctx) {
    constexpr const char* routine = "posv_mixed";
    check_uplo(routine, uplo);
    check_matrix_arguments(routine, n, a, lda);
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    check_rhs_arguments(routine, "b", "ldb", n, nrhs, b, ldb);
    check_rhs_arguments(routine, "x", "ldx", n, nrhs, x, ldx);
    check_options(routine, options);
    if (n == 0 || nrhs == 0) return PosvMixedResult{};
    const std::size_t x_bytes = matrix_bytes<T>(n, nrhs, ldx);
    checks::require(!overlaps(x, x_bytes, a, matrix_bytes<T>(n, n, lda)), routine, "x", "must not overlap a");
    checks::require(!overlaps(x, x_bytes, b, matrix_bytes<T>(n, nrhs, ldb)), routine, "x", "must not overlap b");
    PosvMixed<T> solver(uplo, n, nrhs, a, lda, b, ldb, x, ldx, options, ctx);
    return solver.run();
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
