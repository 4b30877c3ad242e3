// trmm_vbatched, trsm_vbatched and potrf_vbatched on every backend and precision: every option
// combination (side x uplo x op x diag) with exact small-integer TRMM checks and scaled-residual
// TRSM checks, both TRSM algorithms, mixed zero sizes, per-problem argument errors, the three entry
// levels agreeing bit for bit, batches above 65,535, potrf against its definition and LAPACK's info.
#include <array>
#include <limits>

#include "../test_support.hpp"
#include "batchsolve/vbatched_triangular.hpp"

namespace batchsolve::test {
namespace {

// Wide accumulators for the host's reference results: exact for the integer tests, and residuals of
// the TRSM checks computed well below the precision under test.
template <class T>
using Wide = std::conditional_t<is_complex_v<T>, std::complex<long double>, long double>;

template <class T>
T conj_of(T v) {
    if constexpr (is_complex_v<T>) return std::conj(v);
    else return v;
}
template <class T>
long double abs_of(T v) {
    return std::abs(v);
}

// ---- a batch of variable-size problems: host copy and backend copy -------------------------------

// Each problem's A and B lie in one storage vector each, with ld = rows + 0..2 and a gap after every
// matrix; everything not part of a matrix is poisoned, so stray writes show.
template <class T>
struct Problems {
    int batch = 0;
    std::vector<int> m, n, lda, ldb;
    std::vector<std::size_t> a_at, b_at;
    std::vector<T> a, b;
};

constexpr std::size_t kGap = 3;

// The order of A (m for left, n for right).
inline int order_of(Side side, int m, int n) { return side == Side::left ? m : n; }

template <class T>
Problems<T> layout_problems(Side side, const std::vector<int>& m, const std::vector<int>& n, std::mt19937_64& rng) {
    Problems<T> p;
    p.batch = int(m.size());
    p.m = m, p.n = n;
    std::uniform_int_distribution<int> extra(0, 2);
    std::size_t a_size = 0, b_size = 0;
    for (int i = 0; i < p.batch; ++i) {
        const int k = order_of(side, std::max(m[i], 0), std::max(n[i], 0));
        p.lda.push_back(std::max(1, k) + extra(rng));
        p.ldb.push_back(std::max(1, m[i]) + extra(rng));
        p.a_at.push_back(a_size), p.b_at.push_back(b_size);
        a_size += std::size_t(p.lda[i]) * std::max(k, 0) + kGap;
        b_size += std::size_t(p.ldb[i]) * std::max(n[i], 0) + kGap;
    }
    p.a.assign(a_size, poison_value<T>());
    p.b.assign(b_size, poison_value<T>());
    return p;
}

template <class T>
T& at(std::vector<T>& v, std::size_t base, int ld, int i, int j) {
    return v[base + std::size_t(j) * ld + i];
}
template <class T>
const T& at(const std::vector<T>& v, std::size_t base, int ld, int i, int j) {
    return v[base + std::size_t(j) * ld + i];
}

template <class T>
T random_integer(std::mt19937_64& rng, int range) {
    std::uniform_int_distribution<int> d(-range, range);
    if constexpr (is_complex_v<T>) return T(real_t<T>(d(rng)), real_t<T>(d(rng)));
    else return T(d(rng));
}
template <class T>
T random_unit_box(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> d(-1, 1);
    if constexpr (is_complex_v<T>) return T(real_t<T>(d(rng)), real_t<T>(d(rng)));
    else return T(d(rng));
}

// Fills A (the whole stored square, both triangles: only `uplo` may be read) and B. integers: entries
// in [-2, 2] (TRMM's exact checks); else a well-conditioned triangle for TRSM: diagonal of modulus 1..2
// with a random sign or phase, off-diagonal entries of modulus <= 0.5 / order.
template <class T>
void fill_problems(Problems<T>& p, Side side, bool integers, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> magnitude(1, 2), angle(0, 2 * 3.141592653589793);
    for (int i = 0; i < p.batch; ++i) {
        const int k = order_of(side, p.m[i], p.n[i]);
        for (int c = 0; c < k; ++c)
            for (int r = 0; r < k; ++r) {
                T v;
                if (integers) v = random_integer<T>(rng, 2);
                else if (r != c) v = random_unit_box<T>(rng) * real_t<T>(0.5 / k);
                else if constexpr (is_complex_v<T>) v = std::polar(real_t<T>(magnitude(rng)), real_t<T>(angle(rng)));
                else v = T(magnitude(rng) * (rng() % 2 ? 1 : -1));
                at(p.a, p.a_at[i], p.lda[i], r, c) = v;
            }
        for (int c = 0; c < p.n[i]; ++c)
            for (int r = 0; r < p.m[i]; ++r)
                at(p.b, p.b_at[i], p.ldb[i], r, c) = integers ? random_integer<T>(rng, 2) : random_unit_box<T>(rng);
    }
}

// Problems in the backend's memory: the storage, pointer arrays into it and the size arrays.
template <class T>
struct OnBackend {
    Buffer<T> a, b;
    Buffer<const T*> a_ptr;
    Buffer<T*> b_ptr;
    Buffer<int> m, n, lda, ldb, info;

    OnBackend(Context& ctx, const Problems<T>& p)
        : a(ctx, std::max<std::size_t>(p.a.size(), 1)), b(ctx, std::max<std::size_t>(p.b.size(), 1)),
          a_ptr(ctx, std::max(p.batch, 1)), b_ptr(ctx, std::max(p.batch, 1)), m(ctx, std::max(p.batch, 1)),
          n(ctx, std::max(p.batch, 1)), lda(ctx, std::max(p.batch, 1)), ldb(ctx, std::max(p.batch, 1)),
          info(ctx, std::max(p.batch, 1)) {
        if (!p.a.empty()) a.upload(p.a);
        if (!p.b.empty()) b.upload(p.b);
        std::vector<const T*> ap(p.batch);
        std::vector<T*> bp(p.batch);
        for (int i = 0; i < p.batch; ++i) ap[i] = a.data() + p.a_at[i], bp[i] = b.data() + p.b_at[i];
        if (p.batch > 0) {
            a_ptr.upload(ap), b_ptr.upload(bp);
            m.upload(p.m), n.upload(p.n), lda.upload(p.lda), ldb.upload(p.ldb);
        }
        info.fill_bytes(0xFF);
    }
    std::vector<T> b_host(const Problems<T>& p) const {
        std::vector<T> out(p.b.size());
        if (!out.empty()) b.download(out.data(), out.size());
        return out;
    }
    std::vector<T> a_host(const Problems<T>& p) const {
        std::vector<T> out(p.a.size());
        if (!out.empty()) a.download(out.data(), out.size());
        return out;
    }
    std::vector<int> info_host(int batch) const {
        std::vector<int> out(batch);
        if (batch > 0) info.download(out.data(), batch);
        return out;
    }
};

// ---- the host's reference semantics ----------------------------------------------------------------

struct Options {
    Side side;
    Uplo uplo;
    Op op;
    Diag diag;
    std::string name() const {
        const char* op_name = op == Op::no_trans ? "N" : op == Op::trans ? "T" : "C";
        return std::string(side == Side::left ? "left" : "right") + "/" + to_string(uplo) + "/" + op_name + "/" +
               to_string(diag);
    }
};

inline std::vector<Options> every_option() {
    std::vector<Options> all;
    for (Side s : {Side::left, Side::right})
        for (Uplo u : {Uplo::lower, Uplo::upper})
            for (Op o : {Op::no_trans, Op::trans, Op::conj_trans})
                for (Diag d : {Diag::non_unit, Diag::unit}) all.push_back({s, u, o, d});
    return all;
}

// op(A)(r, c) of problem i, as BLAS reads it (the other triangle and a unit diagonal never read).
template <class T>
Wide<T> op_a(const Problems<T>& p, const Options& o, int i, int r, int c) {
    auto tri = [&](int rr, int cc) -> Wide<T> {
        if (rr == cc && o.diag == Diag::unit) return Wide<T>(1);
        if ((o.uplo == Uplo::lower && rr < cc) || (o.uplo == Uplo::upper && rr > cc)) return Wide<T>(0);
        return Wide<T>(at(p.a, p.a_at[i], p.lda[i], rr, cc));
    };
    if (o.op == Op::no_trans) return tri(r, c);
    if (o.op == Op::trans) return tri(c, r);
    return conj_of(tri(c, r));
}

// alpha op(A) B or alpha B op(A) for problem i, exactly (integers) or in the wide type.
template <class T>
std::vector<Wide<T>> host_trmm(const Problems<T>& p, const Options& o, T alpha, int i, const std::vector<T>& b) {
    const int m = p.m[i], n = p.n[i];
    std::vector<Wide<T>> out(std::size_t(m) * n);
    for (int c = 0; c < n; ++c)
        for (int r = 0; r < m; ++r) {
            Wide<T> sum(0);
            if (o.side == Side::left)
                for (int k = 0; k < m; ++k) sum += op_a(p, o, i, r, k) * Wide<T>(at(b, p.b_at[i], p.ldb[i], k, c));
            else
                for (int k = 0; k < n; ++k) sum += Wide<T>(at(b, p.b_at[i], p.ldb[i], r, k)) * op_a(p, o, i, k, c);
            out[std::size_t(c) * m + r] = Wide<T>(alpha) * sum;
        }
    return out;
}

// Scaled residual of a TRSM solution x for problem i: ||op(A) X - alpha B||_F (or X op(A) - alpha B)
// divided by (order u (|| |op(A)| |X| ||_F + |alpha| ||B||_F)).
template <class T>
double trsm_residual(const Problems<T>& p, const Options& o, T alpha, int i, const std::vector<T>& x) {
    const int m = p.m[i], n = p.n[i];
    const int k_order = order_of(o.side, m, n);
    long double residual = 0, scale = 0;
    for (int c = 0; c < n; ++c)
        for (int r = 0; r < m; ++r) {
            Wide<T> sum(0);
            long double abs_sum = 0;
            for (int k = 0; k < k_order; ++k) {
                const Wide<T> term = o.side == Side::left
                                         ? op_a(p, o, i, r, k) * Wide<T>(at(x, p.b_at[i], p.ldb[i], k, c))
                                         : Wide<T>(at(x, p.b_at[i], p.ldb[i], r, k)) * op_a(p, o, i, k, c);
                sum += term;
                abs_sum += std::abs(term);
            }
            const Wide<T> rhs = Wide<T>(alpha) * Wide<T>(at(p.b, p.b_at[i], p.ldb[i], r, c));
            residual += std::norm(sum - rhs);
            scale += abs_sum * abs_sum + std::norm(rhs);
        }
    if (residual == 0) return 0;
    const long double denominator = std::max(k_order, 1) * (long double)unit_roundoff<T>() * std::sqrt(scale);
    return double(std::sqrt(residual) / denominator);
}

// Elements of `after` outside the problems' m x n blocks of B that differ (bitwise) from `before`.
template <class T>
int outside_changes(const Problems<T>& p, const std::vector<T>& before, const std::vector<T>& after) {
    std::vector<char> inside(before.size(), 0);
    for (int i = 0; i < p.batch; ++i)
        for (int c = 0; c < std::max(p.n[i], 0); ++c)
            for (int r = 0; r < std::max(p.m[i], 0); ++r) inside[p.b_at[i] + std::size_t(c) * p.ldb[i] + r] = 1;
    int changed = 0;
    for (std::size_t e = 0; e < before.size(); ++e)
        if (!inside[e] && std::memcmp(&before[e], &after[e], sizeof(T)) != 0) ++changed;
    return changed;
}

// Sizes drawn from [0, max] with about one problem in eight empty (m = 0 or n = 0).
inline std::vector<int> random_sizes(int count, int max, std::mt19937_64& rng) {
    std::uniform_int_distribution<int> d(1, std::max(max, 1));
    std::vector<int> out(count);
    for (int& v : out) v = rng() % 8 == 0 ? 0 : d(rng);
    return out;
}

enum class Level { checked, max, max_nocheck };
const char* to_string(Level l) { return l == Level::checked ? "checked" : l == Level::max ? "_max" : "_max_nocheck"; }

template <class T>
void run_tr(bool solve, Level level, const Options& o, OnBackend<T>& d, T alpha, int batch, int max_m, int max_n,
            Context& ctx, const TriangularConfig& config = {}) {
    const T* const* a = d.a_ptr.data();
    if (solve) {
        if (level == Level::checked)
            trsm_vbatched(o.side, o.uplo, o.op, o.diag, d.m.data(), d.n.data(), alpha, a, d.lda.data(), d.b_ptr.data(),
                          d.ldb.data(), batch, d.info.data(), ctx, config);
        else if (level == Level::max)
            trsm_vbatched_max(o.side, o.uplo, o.op, o.diag, d.m.data(), d.n.data(), alpha, a, d.lda.data(),
                              d.b_ptr.data(), d.ldb.data(), max_m, max_n, batch, d.info.data(), ctx, config);
        else
            trsm_vbatched_max_nocheck(o.side, o.uplo, o.op, o.diag, d.m.data(), d.n.data(), alpha, a, d.lda.data(),
                                      d.b_ptr.data(), d.ldb.data(), max_m, max_n, batch, ctx, config);
    } else {
        if (level == Level::checked)
            trmm_vbatched(o.side, o.uplo, o.op, o.diag, d.m.data(), d.n.data(), alpha, a, d.lda.data(), d.b_ptr.data(),
                          d.ldb.data(), batch, d.info.data(), ctx, config);
        else if (level == Level::max)
            trmm_vbatched_max(o.side, o.uplo, o.op, o.diag, d.m.data(), d.n.data(), alpha, a, d.lda.data(),
                              d.b_ptr.data(), d.ldb.data(), max_m, max_n, batch, d.info.data(), ctx, config);
        else
            trmm_vbatched_max_nocheck(o.side, o.uplo, o.op, o.diag, d.m.data(), d.n.data(), alpha, a, d.lda.data(),
                                      d.b_ptr.data(), d.ldb.data(), max_m, max_n, batch, ctx, config);
    }
    ctx.synchronize();
}

// The configurations the CUDA backend is run in: the default, and each TRSM algorithm with small
// leaves and blocks so that modest sizes recurse several levels (the CPU ignores them).
inline std::vector<std::pair<std::string, TriangularConfig>> configurations(bool cuda) {
    std::vector<std::pair<std::string, TriangularConfig>> out{{"default", {}}};
    if (!cuda) return out;
    TriangularConfig inv, rec;
    inv.trsm_algorithm = TrsmAlgorithm::inversion, inv.inversion_block = 8, inv.columns_per_thread = 3;
    rec.trsm_algorithm = TrsmAlgorithm::recursive, rec.leaf_order = 5, rec.warps_per_block = 2;
    out.push_back({"inversion nb=8", inv});
    out.push_back({"recursive leaf=5", rec});
    return out;
}

template <class C>
class VbatchedTriangular : public BackendTest<C> {};
TYPED_TEST_SUITE(VbatchedTriangular, AllConfigs);

// TRMM: exact on small integers (every partial sum is an integer below 2^24), every option.
TYPED_TEST(VbatchedTriangular, TrmmEveryOptionExactOnIntegers) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    const T alpha = T(2);
    for (const auto& [config_name, config] : configurations(this->is_cuda))
        for (const Options& o : every_option()) {
            SCOPED_TRACE(o.name() + " " + config_name);
            const int batch = 23;
            // Up to 70: past the 32-row leaves, so that the recursion and its GEMM updates run.
            const std::vector<int> m = random_sizes(batch, 70, rng), n = random_sizes(batch, 40, rng);
            Problems<T> p = layout_problems<T>(o.side, m, n, rng);
            fill_problems(p, o.side, true, rng);
            OnBackend<T> d(this->ctx(), p);
            run_tr<T>(false, Level::checked, o, d, alpha, batch, 0, 0, this->ctx(), config);
            const std::vector<T> out = d.b_host(p);
            EXPECT_EQ(d.info_host(batch), std::vector<int>(batch, 0));
            EXPECT_EQ(outside_changes(p, p.b, out), 0) << "memory outside the B blocks was written";
            const std::vector<T> a_after = d.a_host(p);
            EXPECT_EQ(std::memcmp(a_after.data(), p.a.data(), p.a.size() * sizeof(T)), 0) << "A was written";
            int wrong = 0;
            for (int i = 0; i < batch; ++i) {
                const std::vector<Wide<T>> want = host_trmm(p, o, alpha, i, p.b);
                for (int c = 0; c < n[i]; ++c)
                    for (int r = 0; r < m[i]; ++r)
                        if (Wide<T>(at(out, p.b_at[i], p.ldb[i], r, c)) != want[std::size_t(c) * m[i] + r]) ++wrong;
            }
            EXPECT_EQ(wrong, 0) << "elements differing from the exact product";
        }
}

// TRSM: scaled residuals below 30 for every option; on CUDA, both algorithms and agreement with the
// CPU reference.
TYPED_TEST(VbatchedTriangular, TrsmEveryOptionScaledResidual) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    T alpha = T(0.75);
    if constexpr (is_complex_v<T>) alpha = T(real_t<T>(0.75), real_t<T>(-0.5));
    for (const auto& [config_name, config] : configurations(this->is_cuda))
        for (const Options& o : every_option()) {
            SCOPED_TRACE(o.name() + " " + config_name);
            const int batch = 21;
            const std::vector<int> m = random_sizes(batch, 75, rng), n = random_sizes(batch, 37, rng);
            Problems<T> p = layout_problems<T>(o.side, m, n, rng);
            fill_problems(p, o.side, false, rng);
            OnBackend<T> d(this->ctx(), p);
            run_tr<T>(true, Level::checked, o, d, alpha, batch, 0, 0, this->ctx(), config);
            const std::vector<T> x = d.b_host(p);
            EXPECT_EQ(d.info_host(batch), std::vector<int>(batch, 0));
            EXPECT_EQ(outside_changes(p, p.b, x), 0) << "memory outside the B blocks was written";
            double worst = 0;
            for (int i = 0; i < batch; ++i) worst = std::max(worst, trsm_residual(p, o, alpha, i, x));
            EXPECT_LT(worst, kAcceptance) << "largest scaled residual";
            if (this->is_cuda) {
                OnBackend<T> r(this->reference(), p);
                run_tr<T>(true, Level::checked, o, r, alpha, batch, 0, 0, this->reference());
                const std::vector<T> xr = r.b_host(p);
                double diff = 0, norm = 0;
                for (std::size_t e = 0; e < x.size(); ++e)
                    if (!is_poison(xr[e])) diff += std::norm(x[e] - xr[e]), norm += std::norm(xr[e]);
                // The triangles' condition numbers are below 3 (unit-dominant diagonal).
                EXPECT_LE(std::sqrt(diff / std::max(norm, 1e-300)), 3 * cross_backend_tolerance<T>(75) / kCond)
                    << "CUDA and the CPU reference disagree";
            }
        }
}

// alpha = 0: B becomes zero without A being read (A all NaN here), as in BLAS.
TYPED_TEST(VbatchedTriangular, AlphaZeroZeroesBWithoutReadingA) {
    using T = typename TypeParam::value_type;
    std::mt19937_64 rng(fresh_seed());
    for (bool solve : {false, true}) {
        const Options o{Side::left, Uplo::lower, Op::no_trans, Diag::non_unit};
        const std::vector<int> m{3, 40, 0}, n{2, 5, 4};
        Problems<T> p = layout_problems<T>(o.side, m, n, rng);
        fill_problems(p, o.side, true, rng);
        std::fill(p.a.begin(), p.a.end(), poison_value<T>());
        OnBackend<T> d(this->ctx(), p);
        run_tr<T>(solve, Level::checked, o, d, T(0), 3, 0, 0, this->ctx());
        const std::vector<T> out = d.b_host(p);
        for (int i = 0; i < 3; ++i)
            for (int c = 0; c < n[i]; ++c)
                for (int r = 0; r < m[i]; ++r) EXPECT_EQ(at(out, p.b_at[i], p.ldb[i], r, c), T(0)) << (solve ? "trsm" : "trmm");
    }
}

// The three levels give the same bits; the _max level accepts maxima above the true ones.
TYPED_TEST(VbatchedTriangular, LevelsAgree) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    for (bool solve : {false, true})
        for (const Options& o : {Options{Side::left, Uplo::upper, Op::trans, Diag::non_unit},
                                 Options{Side::right, Uplo::lower, Op::conj_trans, Diag::unit}}) {
            SCOPED_TRACE(o.name() + (solve ? " trsm" : " trmm"));
            const int batch = 30;
            const std::vector<int> m = random_sizes(batch, 66, rng), n = random_sizes(batch, 50, rng);
            Problems<T> p = layout_problems<T>(o.side, m, n, rng);
            fill_problems(p, o.side, !solve, rng);
            const int max_m = *std::max_element(m.begin(), m.end()), max_n = *std::max_element(n.begin(), n.end());
            std::vector<std::vector<T>> outs;
            for (Level level : {Level::checked, Level::max, Level::max_nocheck}) {
                OnBackend<T> d(this->ctx(), p);
                const int extra = level == Level::max ? 7 : 0;
                run_tr<T>(solve, level, o, d, T(2), batch, max_m + extra, max_n + extra, this->ctx());
                outs.push_back(d.b_host(p));
                if (level != Level::max_nocheck) {
                    EXPECT_EQ(d.info_host(batch), std::vector<int>(batch, 0)) << to_string(level);
                }
            }
            EXPECT_EQ(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(T)), 0) << "checked vs _max";
            EXPECT_EQ(std::memcmp(outs[0].data(), outs[2].data(), outs[0].size() * sizeof(T)), 0) << "checked vs _max_nocheck";
        }
}

// Bad arguments of single problems: their info names the argument, their B is untouched, the
// others run; whole-call errors throw InvalidArgument naming the argument.
TYPED_TEST(VbatchedTriangular, ArgumentErrorsPerProblem) {
    using T = typename TypeParam::value_type;
    std::mt19937_64 rng(fresh_seed());
    namespace arg = vbatched_arg;
    for (bool solve : {false, true})
        for (Side side : {Side::left, Side::right}) {
            const Options o{side, Uplo::lower, Op::no_trans, Diag::unit};
            SCOPED_TRACE(o.name() + (solve ? " trsm" : " trmm"));
            // problems: ok, m < 0, n < 0, lda too small, ldb too small, A null, B null, ok, m above max
            std::vector<int> m{4, -1, 3, 5, 6, 3, 2, 7, 9}, n{3, 2, -2, 4, 2, 3, 3, 5, 2};
            Problems<T> p = layout_problems<T>(side, m, n, rng);
            fill_problems(p, side, true, rng);
            p.lda[3] = std::max(1, order_of(side, m[3], n[3])) - 1;
            p.ldb[4] = m[4] - 1;
            const std::vector<int> expected{0, -arg::tr_m, -arg::tr_n, -arg::tr_lda, -arg::tr_ldb, -arg::tr_a, -arg::tr_b, 0,
                                            -arg::tr_m};
            // m[8] = 9 is above the _max level's max_m = 8; the checked level finds 9 and accepts it.
            for (Level level : {Level::checked, Level::max}) {
                OnBackend<T> fresh(this->ctx(), p);
                std::vector<const T*> ap(p.batch);
                std::vector<T*> bp(p.batch);
                for (int i = 0; i < p.batch; ++i) ap[i] = fresh.a.data() + p.a_at[i], bp[i] = fresh.b.data() + p.b_at[i];
                ap[5] = nullptr, bp[6] = nullptr;
                fresh.a_ptr.upload(ap), fresh.b_ptr.upload(bp);
                run_tr<T>(solve, level, o, fresh, T(1), p.batch, 8, 5, this->ctx());
                std::vector<int> want = expected;
                if (level == Level::checked) want[8] = 0;
                EXPECT_EQ(fresh.info_host(p.batch), want) << to_string(level);
                const std::vector<T> out = fresh.b_host(p);
                for (int i : {1, 2, 3, 4, 5}) {
                    const std::size_t end = i + 1 < p.batch ? p.b_at[i + 1] : p.b.size();
                    EXPECT_EQ(std::memcmp(&out[p.b_at[i]], &p.b[p.b_at[i]], (end - p.b_at[i]) * sizeof(T)), 0)
                        << "B of invalid problem " << i << " was written (" << to_string(level) << ")";
                }
                for (int i : {0, 7}) {
                    const std::vector<Wide<T>> want_b = solve ? std::vector<Wide<T>>() : host_trmm(p, o, T(1), i, p.b);
                    if (solve) {
                        EXPECT_LT(trsm_residual(p, o, T(1), i, out), kAcceptance) << "problem " << i;
                    } else {
                        for (int c = 0; c < n[i]; ++c)
                            for (int r = 0; r < m[i]; ++r)
                                EXPECT_EQ(Wide<T>(at(out, p.b_at[i], p.ldb[i], r, c)), want_b[std::size_t(c) * m[i] + r]);
                    }
                }
            }
        }

    // Whole-call arguments.
    const Options o{Side::left, Uplo::lower, Op::no_trans, Diag::non_unit};
    Problems<T> p = layout_problems<T>(o.side, {2}, {2}, rng);
    fill_problems(p, o.side, true, rng);
    OnBackend<T> d(this->ctx(), p);
    auto expect_argument = [&](const char* argument, auto&& call) {
        try {
            call();
            ADD_FAILURE() << "no InvalidArgument for " << argument;
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.argument(), argument) << e.what();
        }
    };
    expect_argument("batch", [&] {
        trsm_vbatched(o.side, o.uplo, o.op, o.diag, d.m.data(), d.n.data(), T(1), d.a_ptr.data(), d.lda.data(),
                      d.b_ptr.data(), d.ldb.data(), -1, d.info.data(), this->ctx());
    });
    expect_argument("m", [&] {
        trmm_vbatched(o.side, o.uplo, o.op, o.diag, static_cast<const int*>(nullptr), d.n.data(), T(1), d.a_ptr.data(),
                      d.lda.data(), d.b_ptr.data(), d.ldb.data(), 1, d.info.data(), this->ctx());
    });
    expect_argument("info", [&] {
        trsm_vbatched(o.side, o.uplo, o.op, o.diag, d.m.data(), d.n.data(), T(1), d.a_ptr.data(), d.lda.data(),
                      d.b_ptr.data(), d.ldb.data(), 1, nullptr, this->ctx());
    });
    expect_argument("max_n", [&] {
        trsm_vbatched_max_nocheck(o.side, o.uplo, o.op, o.diag, d.m.data(), d.n.data(), T(1), d.a_ptr.data(),
                                  d.lda.data(), d.b_ptr.data(), d.ldb.data(), 2, -1, 1, this->ctx());
    });
    expect_argument("side", [&] {
        trsm_vbatched(static_cast<Side>(7), o.uplo, o.op, o.diag, d.m.data(), d.n.data(), T(1), d.a_ptr.data(),
                      d.lda.data(), d.b_ptr.data(), d.ldb.data(), 1, d.info.data(), this->ctx());
    });
    TriangularConfig bad;
    bad.leaf_order = 33;
    expect_argument("config.leaf_order", [&] {
        trsm_vbatched(o.side, o.uplo, o.op, o.diag, d.m.data(), d.n.data(), T(1), d.a_ptr.data(), d.lda.data(),
                      d.b_ptr.data(), d.ldb.data(), 1, d.info.data(), this->ctx(), bad);
    });
    // batch = 0 with null arrays is a legal empty call.
    trsm_vbatched<T>(o.side, o.uplo, o.op, o.diag, nullptr, nullptr, T(1), nullptr, nullptr, nullptr, nullptr, 0,
                     nullptr, this->ctx());
    potrf_vbatched<T>(Uplo::lower, nullptr, nullptr, nullptr, 0, nullptr, this->ctx());
}

// The workspace query: the inverted blocks of the inversion-based TRSM on CUDA, nothing otherwise;
// after ctx.workspace(bytes) a call allocates nothing more.
TYPED_TEST(VbatchedTriangular, WorkspaceQuery) {
    using T = typename TypeParam::value_type;
    TriangularConfig inv, rec;
    inv.trsm_algorithm = TrsmAlgorithm::inversion, rec.trsm_algorithm = TrsmAlgorithm::recursive;
    const std::size_t expected = this->is_cuda ? std::size_t(4) * 32 * 32 * 50 * sizeof(T) : 0;  // ceil(100 / 32) = 4
    EXPECT_EQ(trsm_vbatched_workspace_size<T>(Side::left, 100, 7, 50, this->ctx(), inv), expected);
    EXPECT_EQ(trsm_vbatched_workspace_size<T>(Side::right, 7, 100, 50, this->ctx(), inv), expected);
    EXPECT_EQ(trsm_vbatched_workspace_size<T>(Side::left, 100, 7, 50, this->ctx(), rec), 0u);
    EXPECT_THROW(trsm_vbatched_workspace_size<T>(Side::left, -1, 7, 50, this->ctx()), InvalidArgument);
    if (!this->is_cuda) return;
    std::mt19937_64 rng(fresh_seed());
    const Options o{Side::left, Uplo::lower, Op::no_trans, Diag::non_unit};
    const std::vector<int> m = random_sizes(50, 100, rng), n = random_sizes(50, 7, rng);
    Problems<T> p = layout_problems<T>(o.side, m, n, rng);
    fill_problems(p, o.side, false, rng);
    OnBackend<T> d(this->ctx(), p);
    const int max_m = *std::max_element(m.begin(), m.end()), max_n = *std::max_element(n.begin(), n.end());
    const std::size_t bytes = trsm_vbatched_workspace_size<T>(o.side, max_m, max_n, 50, this->ctx(), inv);
    this->ctx().workspace(bytes);
    const std::size_t before = this->ctx().workspace_size();
    run_tr<T>(true, Level::max_nocheck, o, d, T(1), 50, max_m, max_n, this->ctx(), inv);
    EXPECT_EQ(this->ctx().workspace_size(), before) << "the call grew the workspace beyond the query";
    const std::vector<T> x = d.b_host(p);
    for (int i = 0; i < 50; ++i) EXPECT_LT(trsm_residual(p, o, T(1), i, x), kAcceptance) << "problem " << i;
}

// More than 65,535 problems (the CUDA grid's y and z limit): every one solved.
TYPED_TEST(VbatchedTriangular, BatchAbove65535) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    const int batch = 70001;
    const Options o{Side::right, Uplo::upper, Op::no_trans, Diag::non_unit};
    const std::vector<int> m = random_sizes(batch, 3, rng), n = random_sizes(batch, 3, rng);
    Problems<T> p = layout_problems<T>(o.side, m, n, rng);
    fill_problems(p, o.side, false, rng);
    OnBackend<T> d(this->ctx(), p);
    run_tr<T>(true, Level::checked, o, d, T(1), batch, 0, 0, this->ctx());
    const std::vector<T> x = d.b_host(p);
    double worst = 0;
    for (int i = 0; i < batch; ++i) worst = std::max(worst, trsm_residual(p, o, T(1), i, x));
    EXPECT_LT(worst, kAcceptance);
    EXPECT_EQ(d.info_host(batch), std::vector<int>(batch, 0));
}

// ---- potrf_vbatched ----------------------------------------------------------------------------------

// SPD matrices of random orders in [0, max] with both triangles stored (ld = n + 0..2), and the
// factor's backward error ||A - L L^H||_F / (n ||A||_F u) per matrix.
template <class T>
struct SpdProblems {
    std::vector<int> n, lda;
    std::vector<std::size_t> at;
    std::vector<T> a;
};

template <class T>
SpdProblems<T> spd_problems(const std::vector<int>& n, std::uint64_t seed) {
    SpdProblems<T> p;
    p.n = n;
    std::mt19937_64 rng(seed);
    std::size_t size = 0;
    for (int order : n) {
        p.lda.push_back(std::max(order, 1) + int(rng() % 3));
        p.at.push_back(size);
        size += std::size_t(p.lda.back()) * order + kGap;
    }
    p.a.assign(size, poison_value<T>());
    for (std::size_t i = 0; i < n.size(); ++i) {
        if (n[i] == 0) continue;
        const std::vector<T> one = test_matrices<T>(n[i], 1, seed + 1000 + i);
        for (int c = 0; c < n[i]; ++c)
            for (int r = 0; r < n[i]; ++r) at(p.a, p.at[i], p.lda[i], r, c) = one[std::size_t(c) * n[i] + r];
    }
    return p;
}

template <class T>
double cholesky_error(const SpdProblems<T>& p, const std::vector<T>& f, Uplo uplo, int i) {
    const int n = p.n[i];
    long double diff = 0, norm = 0;
    auto factor = [&](int r, int c) -> Wide<T> {  // L(r, c) (lower) or U^H(r, c) (upper)
        if (c > r) return Wide<T>(0);
        if (uplo == Uplo::lower) return Wide<T>(at(f, p.at[i], p.lda[i], r, c));
        return conj_of(Wide<T>(at(f, p.at[i], p.lda[i], c, r)));
    };
    for (int c = 0; c < n; ++c)
        for (int r = 0; r < n; ++r) {
            Wide<T> sum(0);
            for (int k = 0; k <= std::min(r, c); ++k) sum += factor(r, k) * conj_of(factor(c, k));
            const Wide<T> a(at(p.a, p.at[i], p.lda[i], r, c));
            diff += std::norm(sum - a), norm += std::norm(a);
        }
    if (diff == 0) return 0;
    return double(std::sqrt(diff / norm) / (std::max(n, 1) * (long double)unit_roundoff<T>()));
}

template <class T>
struct PotrfOnBackend {
    Buffer<T> a;
    Buffer<T*> ptr;
    Buffer<int> n, lda, info;
    PotrfOnBackend(Context& ctx, const SpdProblems<T>& p)
        : a(ctx, std::max<std::size_t>(p.a.size(), 1)), ptr(ctx, std::max<std::size_t>(p.n.size(), 1)),
          n(ctx, std::max<std::size_t>(p.n.size(), 1)), lda(ctx, std::max<std::size_t>(p.n.size(), 1)),
          info(ctx, std::max<std::size_t>(p.n.size(), 1)) {
        a.upload(p.a);
        std::vector<T*> pp;
        for (std::size_t at : p.at) pp.push_back(a.data() + at);
        ptr.upload(pp), n.upload(p.n), lda.upload(p.lda);
        info.fill_bytes(0xFF);
    }
};

template <class T>
void run_potrf(Level level, Uplo uplo, PotrfOnBackend<T>& d, int batch, int max_n, Context& ctx,
               const TriangularConfig& config = {}) {
    if (level == Level::checked) potrf_vbatched(uplo, d.n.data(), d.ptr.data(), d.lda.data(), batch, d.info.data(), ctx, config);
    else if (level == Level::max)
        potrf_vbatched_max(uplo, d.n.data(), d.ptr.data(), d.lda.data(), max_n, batch, d.info.data(), ctx, config);
    else
        potrf_vbatched_max_nocheck(uplo, d.n.data(), d.ptr.data(), d.lda.data(), max_n, batch, d.info.data(), ctx, config);
    ctx.synchronize();
}

// Every level, both triangles: backward errors below 30, the other triangle untouched, info 0; on
// CUDA also a narrow panel (several block columns at modest n) and agreement with the CPU.
TYPED_TEST(VbatchedTriangular, PotrfBackwardErrorEveryLevel) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    std::vector<std::pair<std::string, TriangularConfig>> configs{{"default", {}}};
    if (this->is_cuda) {
        TriangularConfig narrow;
        narrow.potrf_panel = 7;
        configs.push_back({"panel=7", narrow});
    }
    for (const auto& [config_name, config] : configs)
        for (Level level : {Level::checked, Level::max, Level::max_nocheck})
            for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
                SCOPED_TRACE(std::string(to_string(uplo)) + " " + to_string(level) + " " + config_name);
                const int batch = 25;
                const std::vector<int> n = random_sizes(batch, 90, rng);
                const SpdProblems<T> p = spd_problems<T>(n, rng());
                PotrfOnBackend<T> d(this->ctx(), p);
                run_potrf(level, uplo, d, batch, *std::max_element(n.begin(), n.end()), this->ctx(), config);
                std::vector<T> f(p.a.size());
                d.a.download(f.data(), f.size());
                std::vector<int> info(batch);
                d.info.download(info.data(), batch);
                EXPECT_EQ(info, std::vector<int>(batch, 0));
                int other = 0;
                double worst = 0;
                for (int i = 0; i < batch; ++i) {
                    worst = std::max(worst, cholesky_error(p, f, uplo, i));
                    for (int c = 0; c < n[i]; ++c)
                        for (int r = 0; r < n[i]; ++r)
                            if ((uplo == Uplo::lower ? r < c : r > c) &&
                                std::memcmp(&at(f, p.at[i], p.lda[i], r, c), &at(p.a, p.at[i], p.lda[i], r, c), sizeof(T)))
                                ++other;
                }
                EXPECT_LT(worst, kAcceptance) << "largest backward error";
                EXPECT_EQ(other, 0) << "elements of the other triangle written";
                int outside = 0;
                for (std::size_t e = 0; e < f.size(); ++e)
                    if (is_poison(p.a[e]) && !is_poison(f[e])) ++outside;
                EXPECT_EQ(outside, 0) << "padding written";
            }
}

// Members that are not positive definite get LAPACK's info (the order of the first failing leading
// minor: a negative or NaN diagonal entry at k), the others factor normally; bad arguments -p.
TYPED_TEST(VbatchedTriangular, PotrfInfoPerMatrix) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        SCOPED_TRACE(to_string(uplo));
        std::vector<int> n{10, 40, 1, 70, 33, 5, 0, 64, 12};
        SpdProblems<T> p = spd_problems<T>(n, seed);
        // matrix 1 fails at 17 (negative), 3 at 70 (the last), 4 at 1, 7 at 33 (NaN, past a panel)
        const std::vector<std::pair<int, int>> bad{{1, 17}, {3, 70}, {4, 1}, {7, 33}};
        for (auto [i, k] : bad)
            at(p.a, p.at[i], p.lda[i], k - 1, k - 1) = i == 7 ? T(std::numeric_limits<real_t<T>>::quiet_NaN()) : T(-5);
        p.lda[8] = 11;  // lda < n: argument 4
        PotrfOnBackend<T> d(this->ctx(), p);
        run_potrf(Level::checked, uplo, d, int(n.size()), 0, this->ctx());
        std::vector<int> info(n.size());
        d.info.download(info.data(), info.size());
        std::vector<int> want(n.size(), 0);
        for (auto [i, k] : bad) want[i] = k;
        want[8] = -vbatched_arg::potrf_lda;
        EXPECT_EQ(info, want);
        std::vector<T> f(p.a.size());
        d.a.download(f.data(), f.size());
        for (int i : {0, 2, 5})
            EXPECT_LT(cholesky_error(p, f, uplo, i), kAcceptance) << "matrix " << i;
        EXPECT_EQ(std::memcmp(&f[p.at[8]], &p.a[p.at[8]], (p.a.size() - p.at[8]) * sizeof(T)), 0)
            << "the invalid matrix was written";
    }
}

TYPED_TEST(VbatchedTriangular, PotrfBatchAbove65535) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    const int batch = 66000;
    std::vector<int> n = random_sizes(batch, 4, rng);
    // Built directly (the generator per matrix would dominate): diagonally dominant Hermitian.
    SpdProblems<T> p;
    p.n = n;
    std::size_t size = 0;
    for (int order : n) p.lda.push_back(std::max(order, 1)), p.at.push_back(size), size += std::size_t(p.lda.back()) * order;
    p.a.resize(size);
    for (int i = 0; i < batch; ++i)
        for (int c = 0; c < n[i]; ++c)
            for (int r = c; r < n[i]; ++r) {
                const T v = r == c ? T(real_t<T>(n[i] + 1 + rng() % 3)) : random_unit_box<T>(rng);
                at(p.a, p.at[i], p.lda[i], r, c) = v;
                at(p.a, p.at[i], p.lda[i], c, r) = conj_of(v);
            }
    PotrfOnBackend<T> d(this->ctx(), p);
    run_potrf(Level::checked, Uplo::lower, d, batch, 0, this->ctx());
    std::vector<T> f(p.a.size());
    d.a.download(f.data(), f.size());
    std::vector<int> info(batch);
    d.info.download(info.data(), batch);
    EXPECT_EQ(info, std::vector<int>(batch, 0));
    double worst = 0;
    for (int i = 0; i < batch; ++i) worst = std::max(worst, cholesky_error(p, f, Uplo::lower, i));
    EXPECT_LT(worst, kAcceptance);
}

}  // namespace
}  // namespace batchsolve::test
