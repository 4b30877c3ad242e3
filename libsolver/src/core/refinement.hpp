// The mixed-precision refinement driver, written once for every solver that factors in a lower
// precision and refines in the working precision (posv_mixed in cholesky_large.cpp, sysv_mixed in
// ldlt.cpp), in the structure of LAPACK's ?sposv / ?sgesv: the solver plugs in its factorisation
// (a LowFactor: round A down, factor, solve with the factor) and its working-precision fallback
// (a DirectSolve), lists the steps of its chain, and the driver runs them with one stopping test,
// one set of residual / norm / update primitives (core/refinement_backend.hpp) and one result type
// (batchsolve/refinement.hpp). How a pass solves its correction equation A d = r is a Corrector:
// classical refinement solves it with the low factor alone; GMRES-based refinement runs GMRES on
// A M^-1 u = r, d = M^-1 u (products with A in the working precision, M the low factor); the automatic
// corrector starts classical and escalates to GMRES when a pass shrinks the residual too little.
#pragma once

#include <algorithm>
#include <chrono>
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
    checks::require(o.fused_pass >= -1 && o.fused_pass <= 64, routine, "options.fused_pass",
                    "-1 (the tuned value), 0 (off) or 1 .. 64 (got " + std::to_string(o.fused_pass) + ")");
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
    void* krylov = nullptr;   // the GMRES corrector's basis and vectors (Layout::krylov bytes)
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
    // The unit of the diagonal shift this factor can apply to its scaled matrix (its precision's
    // unit roundoff), 0 when it applies none; the driver sets the shift before factor() on a retry.
    virtual double shift_unit() const { return 0; }
    virtual void set_shift(double) {}
    // The factor runs its updates on tensor cores whatever the TF32 flag says.
    virtual bool tensor_cores() const { return false; }
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

// Seconds on the host's steady clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The cost bound of a refined step (RefinementOptions::refinement_budget): what the chain's next step
// is estimated to cost, and how far the scaled residual still has to fall. `steps_left` projects
// the units of work (passes, GMRES products) still needed at the rate seen so far.
struct Budget {
    double next_seconds = 0;  // the next step's estimated cost; <= 0: unbounded
    double reduction = 1;     // the criterion over the scaled residual at the start of the pass (< 1)
    bool exceeded = false;    // set by a corrector that gave up inside its pass
    bool bounded() const { return next_seconds > 0; }
    // `done` units brought the residual down by `achieved` (new / old); the units still needed to
    // reach `needed` at that geometric rate (infinite when it made no progress), at least one.
    static double steps_left(int done, double achieved, double needed) {
        if (!(achieved < 1) || done <= 0) return std::numeric_limits<double>::infinity();
        if (achieved <= needed) return 0;
        const double rate = std::pow(achieved, 1.0 / done);
        return std::max(1.0, std::ceil(std::log(needed / achieved) / std::log(rate)));
    }
    // True when `left` more units of `unit_seconds` each cost more than the next step.
    bool over(double left, double unit_seconds) const { return bounded() && left * unit_seconds > next_seconds; }
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
    Budget* budget = nullptr;  // the step's cost bound (null: unbounded)
};

template <class T>
class Corrector {
public:
    virtual ~Corrector() = default;
    // A refined step begins (per-step state back to its start).
    virtual void begin_step() {}
    // False when the residual does not fit the lower precision (the step ends with overflow).
    virtual bool correct(LowFactor<T>& factor, const Pass<T>& pass, Context& ctx) = 0;
    // After a pass whose residual shrank by `ratio` (new / old, > 1 when it grew): true when the
    // corrector changed to a stronger method, so that the pass is not judged by the stall and
    // divergence tests of the method it left.
    virtual bool escalate(double /*ratio*/) { return false; }
    virtual bool gmres() const { return false; }      // the last pass was a GMRES pass
    // The next pass is d = M^-1 r, x += d and nothing else (the driver may then fuse it: Driver).
    virtual bool classical_next() const { return false; }
    virtual int inner_iterations() const { return 0; }  // GMRES products with A in this step
};

// Classical refinement: d = M^-1 r, solved in the lower precision.
template <class T>
class ClassicalCorrector final : public Corrector<T> {
public:
    bool classical_next() const override { return true; }
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

// GMRES-IR's correction (Carson and Higham 2018; Haidar et al., SC18): GMRES on A M^-1 u = r, d = M^-1 u
// (right preconditioning: GMRES then minimises the true residual of the correction equation, so its
// stopping test speaks of what the outer pass measures), in its flexible form (the preconditioned
// vectors z_k = M^-1 v_k are kept and d = Z y: M^-1 in a low precision is no fixed linear operator,
// and applying it once more to V y would break A Z = V H), one right-hand side at a time, with the
// products A z in the working precision, M^-1 by the low factor (the vector rounded to its precision
// and back) and classical Gram-Schmidt repeated once (CGS2: GEMVs against the basis and one host
// fetch per iteration). Not restarted: a pass ends at `restart` products or when the residual has
// shrunk by `tolerance`, and the outer pass measures the true residual. The basis lives in
// Scratch::krylov (krylov_bytes). Under a bounded Budget the pass gives up (budget->exceeded) after a
// product once the products still needed for the step's whole reduction, at the rate of its inner
// residual so far and the measured cost per product, would cost more than the chain's next step.
template <class T>
class GmresCorrector : public Corrector<T> {
public:
    using Lo = lower_t<T>;
    using R = real_t<T>;
    GmresCorrector(int restart, double tolerance) : restart_(std::max(1, restart)), tolerance_(tolerance) {}

    static std::size_t krylov_bytes(int n, int restart) {
        const std::size_t m = std::size_t(std::max(1, restart));
        return align_up((m + 1) * std::size_t(n) * sizeof(T)) + align_up(m * std::size_t(n) * sizeof(T)) +
               align_up(2 * (m + 2) * sizeof(T));
    }

    void begin_step() override { inner_ = 0; }
    bool gmres() const override { return true; }
    int inner_iterations() const override { return inner_; }

    bool correct(LowFactor<T>& factor, const Pass<T>& p, Context& ctx) override {
        const int n = p.op.n, m = restart_;
        T* basis = static_cast<T*>(p.scratch.krylov);  // V: n x (m + 1)
        T* preconditioned = piece<T>(p.scratch.krylov, align_up((std::size_t(m) + 1) * n * sizeof(T)));  // Z: n x m
        T* coefficients = piece<T>(p.scratch.krylov, align_up((std::size_t(m) + 1) * n * sizeof(T)) +
                                                         align_up(std::size_t(m) * n * sizeof(T)));  // 2 (m + 2)
        std::vector<T> h(std::size_t(m + 1) * m, T(0)), fetched(2 * std::size_t(m + 2));
        std::vector<R> cs(m);
        std::vector<T> sn(m), g(m + 1, T(0));
        for (int j = 0; j < p.nrhs; ++j) {
            const T* r = p.r + std::size_t(j) * n;
            // v_0 = r / beta.
            BATCHSOLVE_ON_BACKEND(ctx, copy_matrix<T>(n, 1, r, n, basis, n, ctx));
            const R beta = norm(n, basis, coefficients, ctx);
            if (!(beta > 0) || !std::isfinite(double(beta))) {
                if (beta == R(0)) continue;  // r = 0: nothing to correct
                return false;
            }
            BATCHSOLVE_ON_BACKEND(ctx, scale_add<T>(n, T(0), nullptr, T(R(1) / beta), basis, ctx));
            std::fill(g.begin(), g.end(), T(0));
            g[0] = T(beta);
            const auto started = std::chrono::steady_clock::now();
            int k = 0;
            for (; k < m; ++k) {
                T* w = basis + std::size_t(k + 1) * n;
                // z_k = M^-1 v_k, w = A z_k.
                T* z = preconditioned + std::size_t(k) * n;
                if (!precondition(factor, p, basis + std::size_t(k) * n, z, ctx)) return false;
                BATCHSOLVE_ON_BACKEND(ctx, symmetric_product<T>(p.op.uplo, p.op.symmetry, n, p.op.a, p.op.lda, z, w, ctx));
                ++inner_;
                // CGS2: h1 = V^H w, w -= V h1; then [V w]^H w (the last entry ||w||^2), w -= V h2.
                BATCHSOLVE_ON_BACKEND(ctx, dense_gemv<T>(true, n, k + 1, T(1), basis, n, w, T(0), coefficients, ctx));
                BATCHSOLVE_ON_BACKEND(ctx, dense_gemv<T>(false, n, k + 1, T(-1), basis, n, coefficients, T(1), w, ctx));
                // h2 right after h1, so that the one fetch reads only entries this product wrote.
                const int at = k + 1;
                T* second = coefficients + at;
                BATCHSOLVE_ON_BACKEND(ctx, dense_gemv<T>(true, n, k + 2, T(1), basis, n, w, T(0), second, ctx));
                BATCHSOLVE_ON_BACKEND(ctx, dense_gemv<T>(false, n, k + 1, T(-1), basis, n, second, T(1), w, ctx));
                fetch(ctx, fetched.data(), coefficients, std::size_t(2 * k + 3));
                R removed = 0;
                for (int i = 0; i <= k; ++i) {
                    h[std::size_t(k) * (m + 1) + i] = fetched[i] + fetched[at + i];
                    removed += std::norm(fetched[at + i]);
                }
                const R squared = std::real(fetched[at + k + 1]) - removed;
                const R next = squared > 0 ? std::sqrt(squared) : R(0);
                if (!std::isfinite(double(next))) return false;
                h[std::size_t(k) * (m + 1) + k + 1] = T(next);
                // Givens rotations keep the Hessenberg matrix triangular; |g_{k+1}| is the residual.
                for (int i = 0; i < k; ++i) rotate(cs[i], sn[i], h[std::size_t(k) * (m + 1) + i], h[std::size_t(k) * (m + 1) + i + 1]);
                givens(h[std::size_t(k) * (m + 1) + k], h[std::size_t(k) * (m + 1) + k + 1], cs[k], sn[k]);
                rotate(cs[k], sn[k], g[k], g[k + 1]);
                const bool done = std::abs(g[k + 1]) <= tolerance_ * beta || next == R(0);
                // Every product ends in a fetch: the host clock measures the device's work. One
                // product says nothing about the rate yet.
                if (!done && k >= 1 && p.budget && p.budget->bounded()) {
                    const double achieved = double(std::abs(g[k + 1]) / beta);
                    const double left = Budget::steps_left(k + 1, achieved, p.budget->reduction);
                    if (p.budget->over(left, seconds_since(started) / (k + 1))) {
                        p.budget->exceeded = true;
                        return true;
                    }
                }
                if (!done && k + 1 < m)
                    BATCHSOLVE_ON_BACKEND(ctx, scale_add<T>(n, T(0), nullptr, T(R(1) / next), w, ctx));
                if (done) {
                    ++k;
                    break;
                }
            }
            if (k == 0) continue;
            // y = H(1:k, 1:k)^-1 g(1:k); x_j += Z(:, 1:k) y.
            std::vector<T> y(k);
            for (int i = k - 1; i >= 0; --i) {
                T sum = g[i];
                for (int c = i + 1; c < k; ++c) sum -= h[std::size_t(c) * (m + 1) + i] * y[c];
                y[i] = sum / h[std::size_t(i) * (m + 1) + i];
            }
            detail::backend_copy_to_backend(ctx, coefficients, y.data(), std::size_t(k) * sizeof(T));
            BATCHSOLVE_ON_BACKEND(ctx, dense_gemv<T>(false, n, k, T(1), preconditioned, n, coefficients, T(1),
                                                     p.x + std::size_t(j) * p.ldx, ctx));
        }
        return true;
    }

private:
    // out = M^-1 v (n entries, working precision), through the low factor's precision.
    bool precondition(LowFactor<T>& factor, const Pass<T>& p, const T* v, T* out, Context& ctx) {
        const int n = p.op.n, rows = factor.rows(p.op);
        BATCHSOLVE_ON_BACKEND(ctx, convert_down<T, Lo>(n, rows, 1, v, n, p.d, rows, p.scratch.overflow, ctx));
        if (read_flag(ctx, p.scratch.overflow)) return false;
        factor.solve(p.op, 1, p.d, rows, p.scratch, ctx);
        BATCHSOLVE_ON_BACKEND(ctx, convert_up<T, Lo>(n, 1, p.d, rows, out, n, ctx));
        return true;
    }
    R norm(int n, const T* v, T* scratch, Context& ctx) {
        BATCHSOLVE_ON_BACKEND(ctx, dense_gemv<T>(true, n, 1, T(1), v, n, v, T(0), scratch, ctx));
        T value{};
        fetch(ctx, &value, scratch, 1);
        return std::sqrt(std::max(R(0), std::real(value)));
    }
    static T conj_of(T v) {
        if constexpr (is_complex_v<T>) return std::conj(v);
        else return v;
    }
    // The rotation [c s; -conj(s) c] with c real that zeroes b in (a, b); a becomes r.
    static void givens(T& a, T& b, R& c, T& s) {
        const R ma = std::abs(a), mb = std::abs(b);
        if (mb == R(0)) {
            c = 1, s = T(0);
            return;
        }
        if (ma == R(0)) {
            c = 0, s = T(1);
            a = b, b = T(0);
            return;
        }
        const R rho = std::hypot(ma, mb);
        c = ma / rho;
        const T phase = a / ma;
        s = phase * conj_of(b) / rho;
        a = phase * rho;
        b = T(0);
    }
    static void rotate(R c, const T& s, T& a, T& b) {
        const T top = c * a + s * b;
        b = -conj_of(s) * a + c * b;
        a = top;
    }

    int restart_;
    double tolerance_;
    int inner_ = 0;
};

// The automatic choice: classical passes while each shrinks the residual by at least switch_ratio,
// GMRES from the first pass that does not (and for the rest of the step).
template <class T>
class AutomaticCorrector final : public Corrector<T> {
public:
    AutomaticCorrector(int restart, double tolerance, double switch_ratio)
        : gmres_(restart, tolerance), switch_ratio_(switch_ratio) {}
    void begin_step() override {
        use_gmres_ = false;
        gmres_.begin_step();
    }
    bool correct(LowFactor<T>& factor, const Pass<T>& p, Context& ctx) override {
        return use_gmres_ ? gmres_.correct(factor, p, ctx) : classical_.correct(factor, p, ctx);
    }
    bool escalate(double ratio) override {
        if (use_gmres_ || !(ratio > switch_ratio_)) return false;
        use_gmres_ = true;
        return true;
    }
    bool gmres() const override { return use_gmres_; }
    bool classical_next() const override { return !use_gmres_; }
    int inner_iterations() const override { return gmres_.inner_iterations(); }

private:
    ClassicalCorrector<T> classical_;
    GmresCorrector<T> gmres_;
    double switch_ratio_;
    bool use_gmres_ = false;
};

// One step of a chain: a refined factor or a direct solve (exactly one is set); a refined step's
// corrector (null: the driver's).
template <class T>
struct ChainStep {
    LowFactor<T>* refined = nullptr;
    DirectSolve<T>* direct = nullptr;
    Corrector<T>* corrector = nullptr;
};

// The driver's workspace, in bytes from its start: the plug-ins' matrix region first, then the
// vectors (residual, correction, row sums, norms, flags).
struct Layout {
    std::size_t matrix = 0, residual = 0, correction = 0, row_sums = 0, norms = 0, flags = 0, accumulator = 0, krylov = 0,
                total = 0;

    template <class T>
    static Layout of(int n, int nrhs, int correction_rows, std::size_t matrix_bytes, std::size_t krylov_bytes = 0) {
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
        l.accumulator = at, at += align_up(std::size_t(n) * sizeof(T));  // the fused pass's A (x + d)
        l.krylov = at, at += align_up(krylov_bytes);
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
        scratch_.krylov = layout.krylov == layout.total ? nullptr : static_cast<char*>(workspace) + layout.krylov;
        r_ = piece<T>(workspace, layout.residual);
        d_ = piece<Lo>(workspace, layout.correction);
        sums_ = piece<R>(workspace, layout.row_sums);
        norms_ = piece<R>(workspace, layout.norms);
        flags_ = piece<int>(workspace, layout.flags);
        acc_ = piece<T>(workspace, layout.accumulator);
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
        for (std::size_t at = 0; at < chain.size(); ++at) {
            const ChainStep<T>& link = chain[at];
            next_exists_ = at + 1 < chain.size();
            if (link.refined) {
                const bool tensor_cores = first_refined && options_.tensor_core_updates;
                first_refined = false;
                Corrector<T>& corrector = link.corrector ? *link.corrector : *corrector_;
                result.steps.push_back(refined(*link.refined, corrector, tensor_cores, 0));
                if (result.steps.back().outcome == StepOutcome::converged) return finish(result);
                if (tensor_cores && precision_failure(result.steps.back().outcome)) {
                    result.steps.push_back(refined(*link.refined, corrector, false, 0));
                    if (result.steps.back().outcome == StepOutcome::converged) return finish(result);
                }
                // A low factor that is not positive definite may be after a diagonal shift of its
                // scaled matrix (a factor that supports one says so through shift_unit()).
                const double unit = link.refined->shift_unit();
                if (result.steps.back().outcome == StepOutcome::not_positive_definite && unit > 0 &&
                    options_.shift_units > 0) {
                    result.steps.push_back(refined(*link.refined, corrector, false, options_.shift_units * unit));
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
        result.inner_iterations = result.steps.empty() ? 0 : result.steps.back().inner_iterations;
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

    SolveStep refined(LowFactor<T>& factor, Corrector<T>& corrector, bool tensor_cores, double shift) {
        SolveStep step;
        step.path = factor.path();
        step.tensor_cores = tensor_cores || factor.tensor_cores();
        step.shift = shift;
        clear_flags();
        factor.set_shift(shift);
        // factor() reads its info back: the host clock then spans the device's factorisation.
        const auto factor_start = std::chrono::steady_clock::now();
        const bool factored = factor.factor(op_, tensor_cores, scratch_, step, ctx_);
        step.factor_seconds = seconds_since(factor_start);
        factor.set_shift(0);
        if (!factored) return step;
        // The cost bound: only a step with a later one in the chain has something to switch to.
        Budget budget;
        if (next_exists_ && options_.refinement_budget > 0) budget.next_seconds = options_.refinement_budget * step.factor_seconds;
        const double target = double(std::numeric_limits<R>::epsilon()) * std::max(std::sqrt(double(op_.n)), kSmallOrderFloor);
        const auto refine_start = std::chrono::steady_clock::now();
        corrector.begin_step();
        const auto note = [&] {
            step.gmres = corrector.gmres();
            step.inner_iterations = corrector.inner_iterations();
        };

        // x = 0, r = b; every pass solves for the correction of the current residual.
        BATCHSOLVE_ON_BACKEND(ctx_, copy_matrix<T>(op_.n, nrhs_, b_, ldb_, r_, op_.n, ctx_));
        for (int j = 0; j < nrhs_; ++j)
            detail::backend_fill_bytes(ctx_, x_ + std::size_t(j) * ldx_, 0, std::size_t(op_.n) * sizeof(T));
        if (options_.fused_pass > 0) detail::backend_fill_bytes(ctx_, acc_, 0, std::size_t(op_.n) * sizeof(T));  // fused_product adds into it
        const Pass<T> pass{op_, nrhs_, r_, d_, x_, ldx_, scratch_, &budget};
        // The fused classical pass (options.fused_pass > 0, one right-hand side, a factor of order n):
        // M^-1 on d, then fused_product (A (x + d) read once) and fused_finish (x += d, r = b - A x, r
        // rounded into d for the next pass with its overflow test, both norms) and one read of the
        // norms and the overflow indicator, instead of convert_down + a flag read + M^-1 + add_correction
        // + residual + two column norms + a read. The next pass's d is then ready; `pending_overflow`
        // says whether its conversion overflowed (the pass then ends as an unfused one would have,
        // before its solve). The stopping test reads the same two norms of the same r and x.
        const bool fusable = options_.fused_pass > 0 && nrhs_ == 1 && factor.rows(op_) == op_.n;
        bool d_ready = false, pending_overflow = false;
        R* status = norms_;  // 2 nrhs + 2 >= 3 reals
        double previous = std::numeric_limits<double>::infinity();
        for (int k = 0;; ++k) {
            const auto pass_start = std::chrono::steady_clock::now();
            budget.reduction = std::isfinite(previous) && previous > 0 ? target / previous : target;
            bool ok = true, measured = false;
            Measure fused_measure;
            if (fusable && corrector.classical_next()) {
                if (!d_ready) {
                    BATCHSOLVE_ON_BACKEND(ctx_, convert_down<T, Lo>(op_.n, op_.n, 1, r_, op_.n, d_, op_.n, scratch_.overflow, ctx_));
                    pending_overflow = read_flag(ctx_, scratch_.overflow) != 0;
                }
                ok = !pending_overflow;
                if (ok) {
                    factor.solve(op_, 1, d_, op_.n, scratch_, ctx_);
                    BATCHSOLVE_ON_BACKEND(ctx_, fused_product<T, Lo>(op_.uplo, op_.symmetry, op_.n, op_.a, op_.lda, x_, d_, acc_,
                                                                     status, options_.fused_pass, ctx_));
                    BATCHSOLVE_ON_BACKEND(ctx_, fused_finish<T, Lo>(op_.n, b_, acc_, x_, d_, r_, status, ctx_));
                    R host[3] = {};
                    fetch(ctx_, host, status, 3);
                    fused_measure = measure(&host[0], &host[1], 1, op_.n, scratch_.norm_a, double(std::numeric_limits<R>::epsilon()));
                    pending_overflow = host[2] != R(0);
                    d_ready = measured = true;
                }
            } else {
                d_ready = false;
                ok = corrector.correct(factor, pass, ctx_);
            }
            note();
            step.refine_seconds = seconds_since(refine_start);
            if (!ok) {
                step.outcome = StepOutcome::overflow;
                return step;
            }
            if (budget.exceeded) {
                step.iterations = k;
                step.outcome = StepOutcome::over_budget;
                return step;
            }
            if (!measured) compute_residual();
            step.iterations = k;  // the first pass is the solve, the later ones corrections
            const Measure m = measured ? fused_measure : measure_residual();
            step.refine_seconds = seconds_since(refine_start);
            const double pass_seconds = seconds_since(pass_start);
            step.residual = m.scaled;
            step.history.push_back(m.scaled);
            if (!m.finite) {
                step.outcome = StepOutcome::diverged;
                return step;
            }
            // The first pass is the solve: its ratio to "infinity" says nothing about the method. A
            // pass that met the criterion needs no stronger one.
            const bool escalated = k > 0 && !m.met && corrector.escalate(m.scaled / previous);
            if (!escalated && m.scaled > previous) {
                step.outcome = StepOutcome::diverged;
                return step;
            }
            if (m.met) {
                step.outcome = StepOutcome::converged;
                return step;
            }
            if (!escalated && k > 0 && m.scaled > options_.stall_ratio * previous) {
                step.outcome = StepOutcome::stalled;
                return step;
            }
            if (k >= options_.max_iterations) {
                step.outcome = StepOutcome::too_many_iterations;
                return step;
            }
            // The passes still needed at this pass's rate, each as dear as this one (a pass that
            // escalated has no rate of its new method yet).
            if (!escalated && k > 0 &&
                budget.over(Budget::steps_left(1, m.scaled / previous, target / m.scaled), pass_seconds)) {
                step.outcome = StepOutcome::over_budget;
                return step;
            }
            previous = m.scaled;
        }
    }

    // The working-precision solve; its residual is measured, not refined.
    SolveStep direct(DirectSolve<T>& solver) {
        clear_flags();
        BATCHSOLVE_ON_BACKEND(ctx_, copy_matrix<T>(op_.n, nrhs_, b_, ldb_, x_, ldx_, ctx_));
        const auto start = std::chrono::steady_clock::now();
        SolveStep step = solver.solve(op_, nrhs_, x_, ldx_, scratch_, ctx_);
        ctx_.synchronize();
        step.factor_seconds = seconds_since(start);  // factorisation and solve: the cost a bound compares with
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
        result.inner_iterations = last.inner_iterations;
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
    T* acc_ = nullptr;
    bool have_norm_ = false;
    bool next_exists_ = false;  // the step running has a later step in its chain
};

}  // namespace batchsolve::refinement
