// The symmetric indefinite solvers of ldlt.hpp: argument checks, dispatch of the primitives to the
// context's backend, the butterflies' random diagonals, and sysv_mixed's plug-ins of the refinement
// driver (no-pivot LDL^T in the lower precision, the same after a random butterfly transformation,
// a pivoted factorisation in the working precision), written once for both backends.
#include "batchsolve/ldlt.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "batchsolve/buffer.hpp"
#include "checks.hpp"
#include "ldlt_backend.hpp"
#include "refinement.hpp"

namespace batchsolve {

const char* to_string(Symmetry s) { return s == Symmetry::symmetric ? "symmetric" : "hermitian"; }

Symmetry parse_symmetry(const std::string& text) {
    if (text == "symmetric") return Symmetry::symmetric;
    if (text == "hermitian") return Symmetry::hermitian;
    throw InvalidArgument("parse_symmetry", "text", "'symmetric' or 'hermitian' (got '" + text + "')");
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

// Symmetry::hermitian of real data is the symmetric factorisation: one code path.
template <class T>
Symmetry effective(Symmetry s) {
    return is_complex_v<T> ? s : Symmetry::symmetric;
}

}  // namespace

template <class T>
std::size_t sytrf_nopiv_workspace_size(int n, Context& ctx) {
    checks::require(n >= 0, "sytrf_nopiv_workspace_size", "n", "n >= 0 (got " + std::to_string(n) + ")");
    return ldlt_detail::factor_workspace_bytes<T>(n, ctx);
}

template <class T>
void sytrf_nopiv(Symmetry symmetry, Uplo uplo, int n, T* a, int lda, int* info, Context& ctx) {
    constexpr const char* routine = "sytrf_nopiv";
    check_matrix_arguments<T>(routine, uplo, n, a, lda);
    checks::require(info != nullptr, routine, "info", "non-null");
    void* workspace = ctx.workspace(ldlt_detail::factor_workspace_bytes<T>(n, ctx));
    BATCHSOLVE_ON_BACKEND(ctx, ldlt_factor<T>(effective<T>(symmetry), n, a, lda, info, workspace, false, ctx));
}

template <class T>
void sytrs_nopiv(Symmetry symmetry, Uplo uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb, Context& ctx) {
    constexpr const char* routine = "sytrs_nopiv";
    check_matrix_arguments<T>(routine, uplo, n, a, lda);
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    checks::check_dense_rhs(routine, "b", "ldb", n, nrhs, b, ldb);
    if (n == 0 || nrhs == 0) return;
    BATCHSOLVE_ON_BACKEND(ctx, ldlt_solve<T>(effective<T>(symmetry), n, nrhs, a, lda, b, ldb, ctx));
}

// ---- sysv_mixed ------------------------------------------------------------------------------------------
// No-pivot LDL^T in the lower precision (plain, then after random butterflies), refined in the
// working precision, then a pivoted factorisation: the plug-ins of the refinement driver
// (core/refinement.hpp), which runs the chain.

namespace {

using refinement::lower_t;

// Where the no-pivot steps keep their pieces inside the driver's matrix region: the padded low
// matrix, its factor scratch, the butterflies' diagonals. The pivoted step's copy of A (and its
// library workspace) reuses the region from its start: the two are never alive together.
template <class T>
struct LdltPieces {
    using Lo = lower_t<T>;
    int npad = 0;  // the padded order when a step uses the butterflies, else n
    std::size_t low_matrix = 0, factor_scratch = 0, butterfly = 0, low_bytes = 0, pivoted_bytes = 0;

    LdltPieces(Symmetry symmetry, int n, int nrhs, const SysvOptions& options, Context& ctx) {
        using refinement::align_up;
        npad = options.allow_rbt || options.start_with_rbt ? ldlt_detail::padded_order(n, options.butterfly_depth) : n;
        low_matrix = 0;
        factor_scratch = align_up(std::size_t(npad) * npad * sizeof(Lo));
        butterfly = factor_scratch + align_up(ldlt_detail::factor_workspace_bytes<Lo>(npad, ctx));
        low_bytes = butterfly + align_up(std::size_t(options.butterfly_depth) * npad * sizeof(real_t<Lo>));
        if (options.allow_pivoted)
            pivoted_bytes = BATCHSOLVE_ON_BACKEND(ctx, pivoted_workspace_bytes(TypeTag<T>{}, symmetry, n, nrhs, ctx));
    }
    refinement::Layout layout(int n, int nrhs) const {
        return refinement::Layout::of<T>(n, nrhs, npad, std::max(low_bytes, pivoted_bytes));
    }
};

using refinement::Operator;
using refinement::Scratch;

// LDL^T without pivoting of A rounded down, with or without the butterflies U^T A U (then a
// correction is U (U^T A U)^-1 U^T r, of the padded order).
template <class T>
class LdltLow final : public refinement::LowFactor<T> {
public:
    using Lo = lower_t<T>;
    using RLo = real_t<Lo>;
    LdltLow(bool rbt, const LdltPieces<T>& pieces, const SysvOptions& options)
        : rbt_(rbt), pieces_(pieces), options_(options) {}
    SolvePath path() const override { return rbt_ ? SolvePath::rbt_nopiv_low : SolvePath::nopiv_low; }
    int rows(const Operator<T>& op) const override { return rbt_ ? pieces_.npad : op.n; }

    bool factor(const Operator<T>& op, bool tensor_cores, const Scratch& scratch, SolveStep& step, Context& ctx) override {
        const int npad = rows(op);
        Lo* low = refinement::piece<Lo>(scratch.matrix, pieces_.low_matrix);
        BATCHSOLVE_ON_BACKEND(ctx, expand_lower<T, Lo>(op.symmetry, op.n, op.a, op.lda, npad, low, npad, scratch.norm_a,
                                                       scratch.overflow, ctx));
        if (rbt_) {
            const Butterfly u = make_butterfly(op.n, options_.butterfly_depth, options_.seed);
            std::vector<RLo> values(u.diagonals.begin(), u.diagonals.end());
            detail::backend_copy_to_backend(ctx, diagonals(scratch), values.data(), values.size() * sizeof(RLo));
            BATCHSOLVE_ON_BACKEND(ctx, rbt_matrix<Lo>(npad, u.depth, diagonals(scratch), low, npad, ctx));
        }
        if (refinement::read_flag(ctx, scratch.overflow)) {
            step.outcome = StepOutcome::overflow;
            return false;
        }
        char* factor_scratch = refinement::piece<char>(scratch.matrix, pieces_.factor_scratch);
        BATCHSOLVE_ON_BACKEND(ctx, ldlt_factor<Lo>(op.symmetry, npad, low, npad, scratch.info, factor_scratch, tensor_cores, ctx));
        step.column = refinement::read_flag(ctx, scratch.info);
        if (step.column != 0) step.outcome = StepOutcome::breakdown;
        return step.column == 0;
    }

    void solve(const Operator<T>& op, int nrhs, Lo* d, int ldd, const Scratch& scratch, Context& ctx) override {
        const int npad = rows(op), depth = options_.butterfly_depth;
        const Lo* low = refinement::piece<Lo>(scratch.matrix, pieces_.low_matrix);
        if (rbt_) BATCHSOLVE_ON_BACKEND(ctx, rbt_vectors<Lo>(true, npad, nrhs, depth, diagonals(scratch), d, ldd, ctx));
        BATCHSOLVE_ON_BACKEND(ctx, ldlt_solve<Lo>(op.symmetry, npad, nrhs, low, npad, d, ldd, ctx));
        if (rbt_) BATCHSOLVE_ON_BACKEND(ctx, rbt_vectors<Lo>(false, npad, nrhs, depth, diagonals(scratch), d, ldd, ctx));
    }

private:
    RLo* diagonals(const Scratch& scratch) const { return refinement::piece<RLo>(scratch.matrix, pieces_.butterfly); }

    bool rbt_;
    const LdltPieces<T>& pieces_;
    const SysvOptions& options_;
};

// Bunch-Kaufman (or LU where no sytrf fits) in the working precision; x holds B on entry.
template <class T>
class PivotedDirect final : public refinement::DirectSolve<T> {
public:
    SolveStep solve(const Operator<T>& op, int nrhs, T* x, int ldx, const Scratch& scratch, Context& ctx) override {
        int info = 0;
        char* workspace = static_cast<char*>(scratch.matrix);
        const SolvePath path =
            BATCHSOLVE_ON_BACKEND(ctx, pivoted_solve<T>(op.symmetry, op.n, nrhs, op.a, op.lda, x, ldx, workspace, &info, ctx));
        SolveStep step;
        step.path = path;
        step.outcome = info > 0 ? StepOutcome::singular : StepOutcome::solved;
        step.column = std::max(info, 0);
        return step;
    }
};

void check_options(const char* routine, const SysvOptions& o) {
    checks::require(o.butterfly_depth >= 1 && o.butterfly_depth <= 20, routine, "options.butterfly_depth",
                    "1 <= butterfly_depth <= 20 (got " + std::to_string(o.butterfly_depth) + ")");
    refinement::check_options(routine, o);
}

}  // namespace

template <class T>
std::size_t sysv_mixed_workspace_size(Symmetry symmetry, int n, int nrhs, const SysvOptions& options, Context& ctx) {
    constexpr const char* routine = "sysv_mixed_workspace_size";
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    check_options(routine, options);
    if (n == 0 || nrhs == 0) return 0;
    return LdltPieces<T>(effective<T>(symmetry), n, nrhs, options, ctx).layout(n, nrhs).total;
}

template <class T>
SysvResult sysv_mixed(Symmetry symmetry, Uplo uplo, int n, int nrhs, const T* a, int lda, const T* b, int ldb, T* x,
                      int ldx, const SysvOptions& options, Context& ctx) {
    constexpr const char* routine = "sysv_mixed";
    check_matrix_arguments<T>(routine, uplo, n, a, lda);
    refinement::check_system(routine, n, nrhs, a, lda, b, ldb, x, ldx);
    check_options(routine, options);
    if (n == 0 || nrhs == 0) return MixedResult{};
    const refinement::Operator<T> op{uplo, effective<T>(symmetry), n, a, lda};
    const LdltPieces<T> pieces(op.symmetry, n, nrhs, options, ctx);
    const refinement::Layout layout = pieces.layout(n, nrhs);
    refinement::Driver<T> driver(op, nrhs, b, ldb, x, ldx, options, layout, ctx.workspace(layout.total), ctx);
    LdltLow<T> plain(false, pieces, options), butterflies(true, pieces, options);
    PivotedDirect<T> pivoted;
    std::vector<refinement::ChainStep<T>> chain;
    if (!options.start_with_rbt) chain.push_back({&plain, nullptr});
    if (options.allow_rbt || options.start_with_rbt) chain.push_back({&butterflies, nullptr});
    if (options.allow_pivoted) chain.push_back({nullptr, &pivoted});
    return driver.run(chain);
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
