// Tests of the variable-size BLAS-3 routines (vbatched_blas.hpp) on every backend and precision:
// exact results on small-integer data for every routine and option, scaled errors on random data,
// zero-size problems mixed in, invalid problems reported per problem without touching the others,
// argument errors, the three entry levels agreeing, batches beyond 65,535 problems, and the internal
// GEMM entry's offsets and derived sizes. The CUDA instances skip visibly without a GPU and compare
// against the CPU backend as well as against the host formulas here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../test_support.hpp"
#include "batchsolve/vbatched_blas.hpp"
#include "core/blas3_internal.hpp"

namespace batchsolve::test {
namespace {

template <class T> T conj_of(T v) {
    if constexpr (is_complex_v<T>) return std::conj(v);
    else return v;
}
template <class T> T real_only(T v) {
    if constexpr (is_complex_v<T>) return T(v.real(), 0);
    else return v;
}
template <class T> bool is_nan(T v) {
    if constexpr (is_complex_v<T>) return std::isnan(v.real()) || std::isnan(v.imag());
    else return std::isnan(v);
}
template <class T> double magnitude(T v) { return std::abs(v); }
template <class T> inline constexpr bool is_single_v = std::is_same_v<real_t<T>, float>;

// A random value: small integers in [-3, 3] (exact arithmetic in every precision for the sizes here)
// or uniform in [-1, 1].
template <class T>
T random_value(std::mt19937_64& engine, bool integers) {
    std::uniform_int_distribution<int> i(-3, 3);
    std::uniform_real_distribution<double> u(-1, 1);
    auto draw = [&] { return integers ? real_t<T>(i(engine)) : real_t<T>(u(engine)); };
    if constexpr (is_complex_v<T>) return T(draw(), draw());
    else return draw();
}

// The matrices of one role (A, B or C) for a whole batch: column-major, ld = rows + extra, one host
// copy, and the backend's data, pointer array and ld array.
template <class T>
struct Role {
    std::vector<int> rows, cols, ld;
    std::vector<std::size_t> offset;
    std::vector<T> host;
    Buffer<T> data;
    Buffer<T*> pointers;
    Buffer<int> lds;

    void build(Context& ctx, const std::vector<int>& r, const std::vector<int>& c, std::mt19937_64& engine,
               bool integers) {
        rows = r, cols = c;
        const std::size_t count = r.size();
        ld.resize(count), offset.resize(count);
        std::size_t total = 0;
        std::uniform_int_distribution<int> extra(0, 3);
        for (std::size_t i = 0; i < count; ++i) {
            ld[i] = std::max(1, r[i] + extra(engine));
            offset[i] = total;
            total += std::size_t(ld[i]) * std::max(c[i], 0) + 1;  // a one-element gap between matrices
        }
        host.resize(std::max<std::size_t>(total, 1));
        for (T& x : host) x = random_value<T>(engine, integers);
        upload(ctx);
    }
    void upload(Context& ctx) {
        data = Buffer<T>(ctx, host);
        std::vector<T*> p(rows.size());
        for (std::size_t i = 0; i < p.size(); ++i) p[i] = data.data() + offset[i];
        pointers = Buffer<T*>(ctx, p);
        lds = Buffer<int>(ctx, ld);
    }
    T& at(std::vector<T>& v, int i, int r, int c) const { return v[offset[i] + std::size_t(c) * ld[i] + r]; }
    T at(const std::vector<T>& v, int i, int r, int c) const { return v[offset[i] + std::size_t(c) * ld[i] + r]; }
    T* const* ptrs() const { return pointers.data(); }
    const T* const* cptrs() const { return reinterpret_cast<const T* const*>(pointers.data()); }
};

// Element (r, c) of op(X) / of the symmetric (Hermitian) matrix whose `uplo` triangle X holds.
template <class T>
T op_element(const Role<T>& x, int i, Op op, int r, int c) {
    if (op == Op::no_trans) return x.at(x.host, i, r, c);
    if (op == Op::trans || !is_complex_v<T>) return x.at(x.host, i, c, r);
    return conj_of(x.at(x.host, i, c, r));
}
template <class T>
T sym_element(const Role<T>& x, int i, Uplo uplo, bool hermitian, int r, int c) {
    const bool stored = uplo == Uplo::lower ? r >= c : r <= c;
    if (r == c && hermitian) return real_only(x.at(x.host, i, r, r));
    return stored ? x.at(x.host, i, r, c) : (hermitian ? conj_of(x.at(x.host, i, c, r)) : x.at(x.host, i, c, r));
}

// Compares every element of C's storage (gaps and rows beyond m included) with the expected copy:
// exactly, or within tol(i, r, c) for elements inside problem i's matrix.
template <class T>
void expect_storage(const Role<T>& c, const std::vector<T>& got, const std::vector<T>& expected,
                    const std::function<double(int, int, int)>& tol = nullptr) {
    ASSERT_EQ(got.size(), expected.size());
    int failures = 0;
    for (std::size_t i = 0; i < c.rows.size() && failures < 10; ++i)
        for (int col = 0; col < c.cols[i]; ++col)
            for (int r = 0; r < c.ld[i]; ++r) {
                const std::size_t at = c.offset[i] + std::size_t(col) * c.ld[i] + r;
                const bool inside = r < c.rows[i];
                bool ok;
                if (tol && inside) ok = !is_nan(got[at]) && magnitude(got[at] - expected[at]) <= tol(int(i), r, col);
                else ok = got[at] == expected[at] || (is_nan(got[at]) && is_nan(expected[at]));
                if (!ok && ++failures <= 10)
                    ADD_FAILURE() << "problem " << i << " (" << c.rows[i] << " x " << c.cols[i] << ") element (" << r
                                  << ", " << col << "): got " << got[at] << ", expected " << expected[at];
            }
    // the gaps between matrices are never written
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
        const std::size_t gap = c.offset[i] + std::size_t(c.ld[i]) * std::max(c.cols[i], 0);
        if (gap < got.size()) {
            EXPECT_TRUE(got[gap] == expected[gap] || (is_nan(got[gap]) && is_nan(expected[gap])));
        }
    }
}

std::vector<int> random_sizes(std::mt19937_64& engine, int count, int max, double zero_fraction) {
    std::uniform_int_distribution<int> size(1, max);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<int> s(count);
    for (int& x : s) x = u(engine) < zero_fraction ? 0 : size(engine);
    return s;
}

template <class C>
class VbatchedBlas : public BackendTest<C> {
protected:
    using T = typename C::value_type;
    std::mt19937_64 engine_{0};
    std::uint64_t seed_ = 0;
    void SetUp() override {
        BackendTest<C>::SetUp();
        seed_ = fresh_seed();
        engine_.seed(seed_);
    }
    std::vector<int> sizes(int count, int max, double zeros = 0.15) { return random_sizes(engine_, count, max, zeros); }
    T scalar(bool integers) {
        T v = random_value<T>(engine_, integers);
        return v == T(0) ? T(2) : v;
    }
};
TYPED_TEST_SUITE(VbatchedBlas, AllConfigs);

constexpr Op kOps[] = {Op::no_trans, Op::trans, Op::conj_trans};
constexpr Uplo kUplos[] = {Uplo::lower, Uplo::upper};

// ---- GEMM ------------------------------------------------------------------------------------------

// Runs gemm on one batch at `level` (0 checked, 1 _max, 2 _max_nocheck) and returns C's storage.
template <class T>
struct GemmBatch {
    std::vector<int> m, n, k;
    Role<T> a, b, c;
    Buffer<int> md, nd, kd, info;
    Op ta = Op::no_trans, tb = Op::no_trans;

    GemmBatch(Context& ctx, std::mt19937_64& engine, std::vector<int> m_, std::vector<int> n_, std::vector<int> k_,
              Op ta_, Op tb_, bool integers)
        : m(m_), n(n_), k(k_), ta(ta_), tb(tb_) {
        a.build(ctx, ta == Op::no_trans ? m : k, ta == Op::no_trans ? k : m, engine, integers);
        b.build(ctx, tb == Op::no_trans ? k : n, tb == Op::no_trans ? n : k, engine, integers);
        c.build(ctx, m, n, engine, integers);
        md = Buffer<int>(ctx, m), nd = Buffer<int>(ctx, n), kd = Buffer<int>(ctx, k);
        info = Buffer<int>(ctx, std::max<std::size_t>(m.size(), 1));
        info.fill_bytes(0x7F);  // poisoned: every entry must be written
    }
    int count() const { return int(m.size()); }
    std::vector<T> run(Context& ctx, int level, T alpha, T beta) {
        const int max_m = *std::max_element(m.begin(), m.end()), max_n = *std::max_element(n.begin(), n.end()),
                  max_k = *std::max_element(k.begin(), k.end());
        if (level == 0)
            gemm_vbatched<T>(ta, tb, md.data(), nd.data(), kd.data(), alpha, a.cptrs(), a.lds.data(), b.cptrs(),
                             b.lds.data(), beta, c.ptrs(), c.lds.data(), count(), info.data(), ctx);
        else if (level == 1)
            gemm_vbatched_max<T>(ta, tb, md.data(), nd.data(), kd.data(), alpha, a.cptrs(), a.lds.data(), b.cptrs(),
                                 b.lds.data(), beta, c.ptrs(), c.lds.data(), max_m, max_n, max_k, count(), info.data(),
                                 ctx);
        else
            gemm_vbatched_max_nocheck<T>(ta, tb, md.data(), nd.data(), kd.data(), alpha, a.cptrs(), a.lds.data(),
                                         b.cptrs(), b.lds.data(), beta, c.ptrs(), c.lds.data(), max_m, max_n, max_k,
                                         count(), ctx);
        return c.data.to_host();
    }
    // The expected storage: BLAS's formula per problem, beta = 0 not reading C.
    std::vector<T> expected(T alpha, T beta, const std::vector<int>* skip = nullptr) const {
        std::vector<T> e = c.host;
        for (int i = 0; i < count(); ++i) {
            if (skip && (*skip)[i] != 0) continue;
            for (int col = 0; col < n[i]; ++col)
                for (int r = 0; r < m[i]; ++r) {
                    T sum(0);
                    if (alpha != T(0))  // BLAS: A and B not read
                        for (int p = 0; p < k[i]; ++p) sum += op_element(a, i, ta, r, p) * op_element(b, i, tb, p, col);
                    T& out = c.at(e, i, r, col);
                    out = alpha * sum + (beta == T(0) ? T(0) : beta * out);
                }
        }
        return e;
    }
    // |alpha| |op(A)| |op(B)| + |beta| |C| at (r, col), the scale of the rounding error.
    double scale(int i, int r, int col, T alpha, T beta) const {
        double s = 0;
        for (int p = 0; p < k[i]; ++p)
            s += magnitude(op_element(a, i, ta, r, p)) * magnitude(op_element(b, i, tb, p, col));
        return magnitude(alpha) * s + magnitude(beta) * magnitude(c.at(c.host, i, r, col));
    }
};

TYPED_TEST(VbatchedBlas, GemmExactEveryTransposeWithZeroSizes) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 60;
    for (Op ta : kOps)
        for (Op tb : kOps) {
            SCOPED_TRACE(std::string("trans_a ") + to_string(ta) + ", trans_b " + to_string(tb));
            GemmBatch<T> g(this->ctx(), this->engine_, this->sizes(count, 70), this->sizes(count, 70),
                           this->sizes(count, 40), ta, tb, true);
            const T alpha = this->scalar(true), beta = this->scalar(true);
            const std::vector<T> got = g.run(this->ctx(), 0, alpha, beta);
            expect_storage(g.c, got, g.expected(alpha, beta));
            EXPECT_EQ(g.info.to_host(), std::vector<int>(count, 0));
        }
}

TYPED_TEST(VbatchedBlas, GemmScaledErrorRandomData) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 40;
    for (Op ta : {Op::no_trans, Op::conj_trans})
        for (Op tb : {Op::no_trans, Op::trans}) {
            GemmBatch<T> g(this->ctx(), this->engine_, this->sizes(count, 90, 0.05), this->sizes(count, 90, 0.05),
                           this->sizes(count, 150, 0.05), ta, tb, false);
            const T alpha = this->scalar(false), beta = this->scalar(false);
            const std::vector<T> got = g.run(this->ctx(), 0, alpha, beta);
            const double u = double(unit_roundoff<T>());
            // |fl(C) - C| <= (k + 2) u (|alpha||A||B| + |beta||C|) elementwise (complex: a factor ~ sqrt 2 more)
            expect_storage(g.c, got, g.expected(alpha, beta), [&](int i, int r, int col) {
                return 4.0 * (g.k[i] + 2) * u * g.scale(i, r, col, alpha, beta);
            });
        }
}

TYPED_TEST(VbatchedBlas, GemmSizeBinsExactAtEveryLevel) {
    // sizes across the dispatch's size bins (up to 128, to 256, above), zeros and ones among them: on the
    // GPU the default configuration bins the problems on the device and runs each bin's tile on its list
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 24;
    std::vector<int> m = this->sizes(count, 300), n = this->sizes(count, 300), k = this->sizes(count, 60);
    m[0] = 300, n[0] = 257, m[1] = 1, n[1] = 129, m[2] = 128, n[2] = 1, k[3] = 0, m[4] = 0;
    for (int level : {0, 1, 2}) {
        SCOPED_TRACE("level " + std::to_string(level));
        GemmBatch<T> g(this->ctx(), this->engine_, m, n, k, Op::no_trans, Op::trans, true);
        const T alpha = this->scalar(true), beta = level == 1 ? T(0) : this->scalar(true);
        if (level == 1) g.c.data.fill_bytes(0xFF);  // NaN: beta = 0 must not read C
        const std::vector<T> want = level == 1 ? [&] {
            GemmBatch<T>& h = g;
            std::vector<T> e = h.c.data.to_host();
            std::vector<T> formula = h.expected(alpha, beta);
            for (int i = 0; i < h.count(); ++i)
                for (int col = 0; col < h.n[i]; ++col)
                    for (int r = 0; r < h.m[i]; ++r) h.c.at(e, i, r, col) = h.c.at(formula, i, r, col);
            return e;
        }() : g.expected(alpha, beta);
        const std::vector<T> got = g.run(this->ctx(), level, alpha, beta);
        expect_storage(g.c, got, want);
    }
}

TYPED_TEST(VbatchedBlas, GemmBetaZeroIgnoresNaNInC) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    GemmBatch<T> g(this->ctx(), this->engine_, this->sizes(30, 50), this->sizes(30, 50), this->sizes(30, 20),
                   Op::no_trans, Op::trans, true);
    std::fill(g.c.host.begin(), g.c.host.end(), T(std::numeric_limits<real_t<T>>::quiet_NaN()));
    g.c.upload(this->ctx());
    const T alpha = this->scalar(true);
    const std::vector<T> got = g.run(this->ctx(), 0, alpha, T(0));
    expect_storage(g.c, got, g.expected(alpha, T(0)));  // NaN only outside the matrices
}

TYPED_TEST(VbatchedBlas, GemmAlphaZeroAndKZeroScaleC) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    std::vector<int> k(25, 0);
    GemmBatch<T> g(this->ctx(), this->engine_, this->sizes(25, 40), this->sizes(25, 40), k, Op::no_trans,
                   Op::no_trans, true);
    const T beta = this->scalar(true);
    expect_storage(g.c, g.run(this->ctx(), 0, T(1), beta), g.expected(T(1), beta));
    GemmBatch<T> h(this->ctx(), this->engine_, this->sizes(25, 40), this->sizes(25, 40), this->sizes(25, 10),
                   Op::no_trans, Op::no_trans, true);
    // alpha = 0: A and B are not read (NaN in them must not reach C)
    std::fill(h.a.host.begin(), h.a.host.end(), T(std::numeric_limits<real_t<T>>::quiet_NaN()));
    h.a.upload(this->ctx());
    expect_storage(h.c, h.run(this->ctx(), 0, T(0), beta), h.expected(T(0), beta));
}

TYPED_TEST(VbatchedBlas, GemmUniformSizesTakeTheUniformPath) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    // all problems valid and of one size: whole tiles (64, 64, 32) and ragged ones (37, 37, 37)
    for (int size : {64, 37}) {
        const int count = 30, k = size == 64 ? 32 : 37;
        GemmBatch<T> g(this->ctx(), this->engine_, std::vector<int>(count, size), std::vector<int>(count, size),
                       std::vector<int>(count, k), Op::no_trans, Op::conj_trans, true);
        const T alpha = this->scalar(true), beta = this->scalar(true);
        expect_storage(g.c, g.run(this->ctx(), 0, alpha, beta), g.expected(alpha, beta));
        EXPECT_EQ(g.info.to_host(), std::vector<int>(count, 0));
    }
}

// The tensor-core configurations through the expert entry: FP64 DMMA (d, z) within the ordinary error
// bound, TF32 (s, c) within TF32's (the rounding of the inputs to a 10-bit mantissa).
TYPED_TEST(VbatchedBlas, GemmTensorCoreConfigurationsWithinTheirAccuracy) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 40;
    const bool tf32 = is_single_v<T>;
    const GemmConfig config = tf32 ? GemmConfig{64, 32, 8, 2, 2, true} : GemmConfig{32, 32, 8, 2, 2, true};
    GemmBatch<T> g(this->ctx(), this->engine_, this->sizes(count, 100, 0.05), this->sizes(count, 100, 0.05),
                   this->sizes(count, 80, 0.05), Op::no_trans, Op::conj_trans, false);
    const T alpha = this->scalar(false), beta = this->scalar(false);
    const int max_m = *std::max_element(g.m.begin(), g.m.end()), max_n = *std::max_element(g.n.begin(), g.n.end()),
              max_k = *std::max_element(g.k.begin(), g.k.end());
    gemm_vbatched_max_nocheck<T>(Op::no_trans, Op::conj_trans, g.md.data(), g.nd.data(), g.kd.data(), alpha, g.a.cptrs(),
                                 g.a.lds.data(), g.b.cptrs(), g.b.lds.data(), beta, g.c.ptrs(), g.c.lds.data(), max_m,
                                 max_n, max_k, count, config, this->ctx());
    const double u = tf32 ? std::ldexp(1.0, -11) : double(unit_roundoff<T>());
    expect_storage(g.c, g.c.data.to_host(), g.expected(alpha, beta), [&](int i, int r, int col) {
        return 4.0 * (g.k[i] + 2) * u * g.scale(i, r, col, alpha, beta);
    });
}

// Element pointers advanced per slice (copy_offsets 3, the register path): SIMT with vector reads of the
// slices and, for d and z, DMMA; every stored operand form; empty problems and sizes past several slices
// mixed in; within 4 (k + 2) u of the formula.
TYPED_TEST(VbatchedBlas, GemmAdvancedPointersWithinTheirAccuracy) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 120;
    auto m = this->sizes(count, 150, 0.05), n = this->sizes(count, 150, 0.05), k = this->sizes(count, 90, 0.05);
    m[2] = 0, k[4] = 0;
    std::vector<GemmConfig> configs{GemmConfig{64, 64, 8, 16, 16, false, 0, 0, 3}, GemmConfig{64, 32, 8, 8, 8, false, 8, 0, 3}};
    if (!is_single_v<T>) configs.push_back(GemmConfig{64, 32, 8, 2, 2, true, 6, 0, 3});
    if (std::is_same_v<T, double>) {  // and on the 16x8x8 DMMA form (dmma16)
        GemmConfig m16{64, 64, 8, 2, 2, true, 3, 0, 3};
        m16.dmma16 = 1;
        configs.push_back(m16);
    }
    const std::pair<Op, Op> ops[] = {{Op::no_trans, Op::no_trans}, {Op::trans, Op::conj_trans}, {Op::conj_trans, Op::trans}};
    for (const GemmConfig& config : configs)
        for (auto [op_a, op_b] : ops) {
            SCOPED_TRACE(to_string(config));
            GemmBatch<T> g(this->ctx(), this->engine_, m, n, k, op_a, op_b, false);
            const T alpha = this->scalar(false), beta = this->scalar(false);
            const int max_m = *std::max_element(m.begin(), m.end()), max_n = *std::max_element(n.begin(), n.end()),
                      max_k = *std::max_element(k.begin(), k.end());
            gemm_vbatched_max_nocheck<T>(op_a, op_b, g.md.data(), g.nd.data(), g.kd.data(), alpha, g.a.cptrs(), g.a.lds.data(),
                                         g.b.cptrs(), g.b.lds.data(), beta, g.c.ptrs(), g.c.lds.data(), max_m, max_n, max_k, count,
                                         config, this->ctx());
            expect_storage(g.c, g.c.data.to_host(), g.expected(alpha, beta), [&](int i, int r, int col) {
                return 4.0 * (g.k[i] + 2) * double(unit_roundoff<T>()) * g.scale(i, r, col, alpha, beta);
            });
        }
}

// The tile list (a persistent grid over the scanned (problem, tile) pairs) computes each tile as the
// block grid does: the same bits, with empty and skipped-size problems mixed in and more tiles than blocks.
TYPED_TEST(VbatchedBlas, GemmTileListMatchesTheBlockGrid) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 300;
    auto m = this->sizes(count, 90), n = this->sizes(count, 90), k = this->sizes(count, 70);
    m[3] = 0, n[5] = 0, k[7] = 0;
    const T alpha = this->scalar(false), beta = this->scalar(false);
    std::vector<std::vector<T>> results;
    for (int tile_list : {0, 1}) {
        std::mt19937_64 same(this->seed_ + 1);  // identical inputs for both
        GemmBatch<T> g(this->ctx(), same, m, n, k, Op::no_trans, Op::trans, false);
        GemmConfig config{32, 32, 8, 8, 8, false, 0, 3};
        config.tile_list = tile_list;
        const int max_m = *std::max_element(m.begin(), m.end()), max_n = *std::max_element(n.begin(), n.end()),
                  max_k = *std::max_element(k.begin(), k.end());
        gemm_vbatched_max_nocheck<T>(Op::no_trans, Op::trans, g.md.data(), g.nd.data(), g.kd.data(), alpha, g.a.cptrs(),
                                     g.a.lds.data(), g.b.cptrs(), g.b.lds.data(), beta, g.c.ptrs(), g.c.lds.data(), max_m,
                                     max_n, max_k, count, config, this->ctx());
        results.push_back(g.c.data.to_host());
        if (tile_list) expect_storage(g.c, results.back(), g.expected(alpha, beta), [&](int i, int r, int col) {
            return 4.0 * (g.k[i] + 2) * double(unit_roundoff<T>()) * g.scale(i, r, col, alpha, beta);
        });
    }
    EXPECT_TRUE(results[0] == results[1]) << "the tile list and the block grid differ";
}

TYPED_TEST(VbatchedBlas, GemmThreeLevelsAgree) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 50;
    const auto m = this->sizes(count, 80), n = this->sizes(count, 80), k = this->sizes(count, 60);
    const T alpha = this->scalar(false), beta = this->scalar(false);
    std::vector<std::vector<T>> results;
    for (int level = 0; level < 3; ++level) {
        std::mt19937_64 same(this->seed_ + 1);  // identical inputs for each level
        GemmBatch<T> g(this->ctx(), same, m, n, k, Op::trans, Op::no_trans, false);
        results.push_back(g.run(this->ctx(), level, alpha, beta));
        if (level < 2) {
            EXPECT_EQ(g.info.to_host(), std::vector<int>(count, 0)) << "level " << level;
        }
    }
    EXPECT_TRUE(results[0] == results[1]) << "checked and _max differ";
    EXPECT_TRUE(results[0] == results[2]) << "checked and _max_nocheck differ";
}

TYPED_TEST(VbatchedBlas, GemmInvalidProblemsReportedPerProblem) {
    using T = typename TestFixture::T;
    namespace arg = vbatched_arg;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 12;
    std::vector<int> m(count, 20), n(count, 17), k(count, 9);
    m[1] = -1, n[2] = -4, k[3] = -2;
    GemmBatch<T> g(this->ctx(), this->engine_, std::vector<int>(count, 20), n, k, Op::no_trans, Op::no_trans, true);
    g.md = Buffer<int>(this->ctx(), m);
    g.m = m;
    // ld too small: A's (m = 20 rows), B's (k = 9 rows), C's
    std::vector<int> lda = g.a.ld, ldb = g.b.ld, ldc = g.c.ld;
    lda[4] = 19, ldb[5] = 8, ldc[6] = 0;
    g.a.lds = Buffer<int>(this->ctx(), lda), g.b.lds = Buffer<int>(this->ctx(), ldb), g.c.lds = Buffer<int>(this->ctx(), ldc);
    // null pointers where a matrix is needed
    std::vector<T*> pa(count), pc(count);
    for (int i = 0; i < count; ++i) pa[i] = g.a.data.data() + g.a.offset[i], pc[i] = g.c.data.data() + g.c.offset[i];
    pa[7] = nullptr, pc[8] = nullptr;
    g.a.pointers = Buffer<T*>(this->ctx(), pa), g.c.pointers = Buffer<T*>(this->ctx(), pc);
    // _max level: a size above the maximum
    std::vector<int> info_expected(count, 0);
    info_expected[1] = -arg::gemm_m, info_expected[2] = -arg::gemm_n, info_expected[3] = -arg::gemm_k;
    info_expected[4] = -arg::gemm_lda, info_expected[5] = -arg::gemm_ldb, info_expected[6] = -arg::gemm_ldc;
    info_expected[7] = -arg::gemm_a, info_expected[8] = -arg::gemm_c;
    const T alpha = this->scalar(true), beta = this->scalar(true);
    for (int level = 0; level < 2; ++level) {
        g.c.upload(this->ctx());
        g.c.pointers = Buffer<T*>(this->ctx(), [&] {
            std::vector<T*> p(count);
            for (int i = 0; i < count; ++i) p[i] = i == 8 ? nullptr : g.c.data.data() + g.c.offset[i];
            return p;
        }());
        g.c.lds = Buffer<int>(this->ctx(), ldc);
        std::vector<T> got;
        if (level == 0) got = g.run(this->ctx(), 0, alpha, beta);
        else {
            gemm_vbatched_max<T>(Op::no_trans, Op::no_trans, g.md.data(), g.nd.data(), g.kd.data(), alpha, g.a.cptrs(),
                                 g.a.lds.data(), g.b.cptrs(), g.b.lds.data(), beta, g.c.ptrs(), g.c.lds.data(), 20, 16, 9,
                                 count, g.info.data(), this->ctx());
            got = g.c.data.to_host();
        }
        std::vector<int> want = info_expected;
        if (level == 1)  // n = 17 > max_n = 16: every problem fails at n, except problem 1 at m (lower position)
            for (int i = 0; i < count; ++i) want[i] = i == 1 ? -arg::gemm_m : -arg::gemm_n;
        EXPECT_EQ(g.info.to_host(), want) << "level " << level;
        std::vector<int> skip(count);
        for (int i = 0; i < count; ++i) skip[i] = want[i];
        std::vector<int> valid_m = m;
        for (int& x : valid_m) x = std::max(x, 0);
        g.m = valid_m;
        g.n = n;
        for (int& x : g.n) x = std::max(x, 0);
        g.k = k;
        for (int& x : g.k) x = std::max(x, 0);
        expect_storage(g.c, got, g.expected(alpha, beta, &skip));
    }
}

TYPED_TEST(VbatchedBlas, ArgumentErrorsThrowNamingTheArgument) {
    using T = typename TestFixture::T;
    Context& ctx = this->ctx();
    Buffer<int> sizes(ctx, std::vector<int>{1}), info(ctx, 1);
    Role<T> x;
    x.build(ctx, {1}, {1}, this->engine_, true);
    auto expect_argument = [](const std::function<void()>& call, const std::string& argument) {
        try {
            call();
            ADD_FAILURE() << "no InvalidArgument for " << argument;
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.argument(), argument) << e.what();
        }
    };
    expect_argument([&] { gemm_vbatched<T>(Op::no_trans, Op::no_trans, sizes.data(), sizes.data(), sizes.data(), T(1), x.cptrs(), x.lds.data(), x.cptrs(), x.lds.data(), T(0), x.ptrs(), x.lds.data(), -1, info.data(), ctx); }, "batch");
    expect_argument([&] { gemm_vbatched<T>(Op::no_trans, Op::no_trans, nullptr, sizes.data(), sizes.data(), T(1), x.cptrs(), x.lds.data(), x.cptrs(), x.lds.data(), T(0), x.ptrs(), x.lds.data(), 1, info.data(), ctx); }, "m");
    expect_argument([&] { gemm_vbatched<T>(Op::no_trans, Op::no_trans, sizes.data(), sizes.data(), sizes.data(), T(1), x.cptrs(), x.lds.data(), x.cptrs(), x.lds.data(), T(0), x.ptrs(), x.lds.data(), 1, nullptr, ctx); }, "info");
    expect_argument([&] { gemm_vbatched_max<T>(Op::no_trans, Op::no_trans, sizes.data(), sizes.data(), sizes.data(), T(1), x.cptrs(), x.lds.data(), x.cptrs(), x.lds.data(), T(0), x.ptrs(), x.lds.data(), 1, -1, 1, 1, info.data(), ctx); }, "max_n");
    expect_argument([&] { syrk_vbatched<T>(Uplo::lower, Op::no_trans, sizes.data(), sizes.data(), T(1), nullptr, x.lds.data(), T(0), x.ptrs(), x.lds.data(), 1, info.data(), ctx); }, "a");
    if constexpr (is_complex_v<T>) {
        expect_argument([&] { herk_vbatched<T>(Uplo::lower, Op::trans, sizes.data(), sizes.data(), 1, x.cptrs(), x.lds.data(), 0, x.ptrs(), x.lds.data(), 1, info.data(), ctx); }, "trans");
        expect_argument([&] { syrk_vbatched<T>(Uplo::lower, Op::conj_trans, sizes.data(), sizes.data(), T(1), x.cptrs(), x.lds.data(), T(0), x.ptrs(), x.lds.data(), 1, info.data(), ctx); }, "trans");
    }
    GemmConfig bad;
    bad.dim_x = 7;
    expect_argument([&] { gemm_vbatched_max_nocheck<T>(Op::no_trans, Op::no_trans, sizes.data(), sizes.data(), sizes.data(), T(1), x.cptrs(), x.lds.data(), x.cptrs(), x.lds.data(), T(0), x.ptrs(), x.lds.data(), 1, 1, 1, 1, bad, ctx); }, "config.dim_x");
    // batch == 0 with null arrays is a legal empty call
    gemm_vbatched<T>(Op::no_trans, Op::no_trans, nullptr, nullptr, nullptr, T(1), nullptr, nullptr, nullptr, nullptr, T(0), nullptr, nullptr, 0, nullptr, ctx);
}

// ---- SYRK/HERK, SYR2K/HER2K ----------------------------------------------------------------------------

// The expected C of syrk (b == nullptr) / syr2k, herk / her2k: only the uplo triangle changes.
template <class T>
std::vector<T> rank_k_expected(const Role<T>& a, const Role<T>* b, const Role<T>& c, const std::vector<int>& n,
                               const std::vector<int>& k, Uplo uplo, Op trans, bool herm, T alpha, T beta,
                               const std::vector<int>* skip = nullptr) {
    std::vector<T> e = c.host;
    const Op t2 = trans == Op::no_trans ? (herm ? Op::conj_trans : Op::trans) : Op::no_trans;
    const Op t1 = trans == Op::no_trans ? Op::no_trans : (herm ? Op::conj_trans : Op::trans);
    for (std::size_t i = 0; i < n.size(); ++i) {
        if (skip && (*skip)[i] != 0) continue;
        for (int col = 0; col < n[i]; ++col)
            for (int r = 0; r < n[i]; ++r) {
                if (uplo == Uplo::lower ? r < col : r > col) continue;
                T sum(0), sum2(0);
                for (int p = 0; p < k[i]; ++p) {
                    const Role<T>& second = b ? *b : a;
                    // op(A)(r, p) op(B)^T|H (p, col), op(X) = X for no_trans (n x k), X^T|H for trans
                    sum += op_element(a, int(i), t1, r, p) * op_element(second, int(i), t2, p, col);
                    if (b) sum2 += op_element(*b, int(i), t1, r, p) * op_element(a, int(i), t2, p, col);
                }
                T& out = c.at(e, int(i), r, col);
                const T alpha2 = herm ? conj_of(alpha) : alpha;
                out = alpha * sum + (b ? alpha2 * sum2 : T(0)) + (beta == T(0) ? T(0) : beta * out);
                if (herm && r == col) out = real_only(out);
            }
    }
    return e;
}

TYPED_TEST(VbatchedBlas, SyrkHerkExactEveryOption) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 50;
    Context& ctx = this->ctx();
    for (bool herm : {false, true})
        for (Uplo uplo : kUplos)
            for (Op trans : {Op::no_trans, is_complex_v<T> ? (herm ? Op::conj_trans : Op::trans) : Op::trans}) {
                SCOPED_TRACE(std::string(herm ? "herk " : "syrk ") + to_string(uplo) + " " + to_string(trans));
                const auto n = this->sizes(count, 70), k = this->sizes(count, 40);
                Role<T> a, c;
                a.build(ctx, trans == Op::no_trans ? n : k, trans == Op::no_trans ? k : n, this->engine_, true);
                c.build(ctx, n, n, this->engine_, true);
                Buffer<int> nd(ctx, n), kd(ctx, k), info(ctx, count);
                T alpha = this->scalar(true), beta = this->scalar(true);
                if (herm) alpha = real_only(alpha), beta = real_only(beta);
                if (herm) {
                    if (alpha == T(0)) alpha = T(1);
                    herk_vbatched<T>(uplo, trans, nd.data(), kd.data(), std::real(alpha), a.cptrs(), a.lds.data(),
                                     std::real(beta), c.ptrs(), c.lds.data(), count, info.data(), ctx);
                } else {
                    syrk_vbatched<T>(uplo, trans, nd.data(), kd.data(), alpha, a.cptrs(), a.lds.data(), beta, c.ptrs(),
                                     c.lds.data(), count, info.data(), ctx);
                }
                expect_storage(c, c.data.to_host(), rank_k_expected<T>(a, nullptr, c, n, k, uplo, trans, herm && is_complex_v<T>, alpha, beta));
                EXPECT_EQ(info.to_host(), std::vector<int>(count, 0));
            }
}

TYPED_TEST(VbatchedBlas, Syr2kHer2kExactEveryOption) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 40;
    Context& ctx = this->ctx();
    for (bool herm : {false, true})
        for (Uplo uplo : kUplos)
            for (Op trans : {Op::no_trans, is_complex_v<T> ? (herm ? Op::conj_trans : Op::trans) : Op::trans}) {
                SCOPED_TRACE(std::string(herm ? "her2k " : "syr2k ") + to_string(uplo) + " " + to_string(trans));
                const auto n = this->sizes(count, 60), k = this->sizes(count, 30);
                Role<T> a, b, c;
                a.build(ctx, trans == Op::no_trans ? n : k, trans == Op::no_trans ? k : n, this->engine_, true);
                b.build(ctx, trans == Op::no_trans ? n : k, trans == Op::no_trans ? k : n, this->engine_, true);
                c.build(ctx, n, n, this->engine_, true);
                Buffer<int> nd(ctx, n), kd(ctx, k), info(ctx, count);
                const T alpha = this->scalar(true);
                T beta = this->scalar(true);
                if (herm) beta = real_only(beta);
                if (herm)
                    her2k_vbatched<T>(uplo, trans, nd.data(), kd.data(), alpha, a.cptrs(), a.lds.data(), b.cptrs(),
                                      b.lds.data(), std::real(beta), c.ptrs(), c.lds.data(), count, info.data(), ctx);
                else
                    syr2k_vbatched<T>(uplo, trans, nd.data(), kd.data(), alpha, a.cptrs(), a.lds.data(), b.cptrs(),
                                      b.lds.data(), beta, c.ptrs(), c.lds.data(), count, info.data(), ctx);
                expect_storage(c, c.data.to_host(), rank_k_expected<T>(a, &b, c, n, k, uplo, trans, herm && is_complex_v<T>, alpha, beta));
                EXPECT_EQ(info.to_host(), std::vector<int>(count, 0));
            }
}

// ---- SYMM/HEMM ---------------------------------------------------------------------------------------

TYPED_TEST(VbatchedBlas, SymmHemmExactEveryOptionOtherTriangleNotRead) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 40;
    Context& ctx = this->ctx();
    for (bool herm : {false, true})
        for (Side side : {Side::left, Side::right})
            for (Uplo uplo : kUplos) {
                SCOPED_TRACE(std::string(herm ? "hemm " : "symm ") + to_string(side) + " " + to_string(uplo));
                const auto m = this->sizes(count, 60), n = this->sizes(count, 60);
                const auto& order = side == Side::left ? m : n;
                Role<T> a, b, c;
                a.build(ctx, order, order, this->engine_, true);
                // the triangle that must not be read: NaN
                for (int i = 0; i < count; ++i)
                    for (int col = 0; col < order[i]; ++col)
                        for (int r = 0; r < order[i]; ++r)
                            if (uplo == Uplo::lower ? r < col : r > col)
                                a.at(a.host, i, r, col) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
                a.upload(ctx);
                b.build(ctx, m, n, this->engine_, true);
                c.build(ctx, m, n, this->engine_, true);
                Buffer<int> md(ctx, m), nd(ctx, n), info(ctx, count);
                const T alpha = this->scalar(true), beta = this->scalar(true);
                if (herm)
                    hemm_vbatched<T>(side, uplo, md.data(), nd.data(), alpha, a.cptrs(), a.lds.data(), b.cptrs(),
                                     b.lds.data(), beta, c.ptrs(), c.lds.data(), count, info.data(), ctx);
                else
                    symm_vbatched<T>(side, uplo, md.data(), nd.data(), alpha, a.cptrs(), a.lds.data(), b.cptrs(),
                                     b.lds.data(), beta, c.ptrs(), c.lds.data(), count, info.data(), ctx);
                std::vector<T> e = c.host;
                const bool h = herm && is_complex_v<T>;
                for (int i = 0; i < count; ++i)
                    for (int col = 0; col < n[i]; ++col)
                        for (int r = 0; r < m[i]; ++r) {
                            T sum(0);
                            if (side == Side::left)
                                for (int p = 0; p < m[i]; ++p) sum += sym_element(a, i, uplo, h, r, p) * b.at(b.host, i, p, col);
                            else
                                for (int p = 0; p < n[i]; ++p) sum += b.at(b.host, i, r, p) * sym_element(a, i, uplo, h, p, col);
                            T& out = c.at(e, i, r, col);
                            out = alpha * sum + beta * out;
                        }
                expect_storage(c, c.data.to_host(), e);
                EXPECT_EQ(info.to_host(), std::vector<int>(count, 0));
            }
}

// ---- batches beyond the grid, the internal entry ---------------------------------------------------------

TYPED_TEST(VbatchedBlas, BatchBeyond65535Problems) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 70001;
    GemmBatch<T> g(this->ctx(), this->engine_, this->sizes(count, 5, 0.2), this->sizes(count, 5, 0.2),
                   this->sizes(count, 4, 0.2), Op::no_trans, Op::conj_trans, true);
    const T alpha = this->scalar(true), beta = this->scalar(true);
    expect_storage(g.c, g.run(this->ctx(), 0, alpha, beta), g.expected(alpha, beta));
    const std::vector<int> info = g.info.to_host();
    EXPECT_EQ(std::count(info.begin(), info.end(), 0), count);
}

TYPED_TEST(VbatchedBlas, InternalEntryOffsetsAndDerivedSizes) {
    using T = typename TestFixture::T;
    BATCHSOLVE_TRACE_SEED(this->seed_);
    // C(j1:, :) -= A(j1:, 0:j1) B(0:j1, :) on square A (order s_i), B and C s_i x n_i: the update of a
    // blocked triangular solve below a diagonal block of width j1 (m = {s, j1}, k = {s, 0, j1}).
    const int count = 30, j1 = 8;
    Context& ctx = this->ctx();
    const auto s = this->sizes(count, 40), n = this->sizes(count, 30);
    Role<T> a, b, c;
    a.build(ctx, s, s, this->engine_, true);
    b.build(ctx, s, n, this->engine_, true);
    c.build(ctx, s, n, this->engine_, true);
    Buffer<int> sd(ctx, s), nd(ctx, n);
    blas3_detail::GemmExtras extras;
    extras.offsets.a_row = j1, extras.offsets.c_row = j1;
    const int max_s = *std::max_element(s.begin(), s.end()), max_n = *std::max_element(n.begin(), n.end());
    blas3_detail::gemm_vbatched<T>(Op::no_trans, Op::no_trans, blas3_detail::VSize(sd.data(), j1), nd.data(),
                                   blas3_detail::VSize(sd.data(), 0, j1), T(-1), a.cptrs(), a.lds.data(), b.cptrs(),
                                   b.lds.data(), T(1), c.ptrs(), c.lds.data(), std::max(max_s - j1, 0), max_n, j1,
                                   count, ctx, extras);
    std::vector<T> e = c.host;
    for (int i = 0; i < count; ++i)
        for (int col = 0; col < n[i]; ++col)
            for (int r = j1; r < s[i]; ++r) {
                T sum(0);
                for (int p = 0; p < std::min(s[i], j1); ++p) sum += a.at(a.host, i, r, p) * b.at(b.host, i, p, col);
                c.at(e, i, r, col) -= sum;
            }
    expect_storage(c, c.data.to_host(), e);
}

// The GPU's results equal the CPU backend's on integer data (every product and sum exact).
TYPED_TEST(VbatchedBlas, MatchesCpuBackendExactly) {
    using T = typename TestFixture::T;
    if (!TestFixture::is_cuda) GTEST_SKIP() << "the CUDA instance compares against the CPU backend";
    BATCHSOLVE_TRACE_SEED(this->seed_);
    const int count = 80;
    const auto m = this->sizes(count, 150), n = this->sizes(count, 150), k = this->sizes(count, 100);
    const T alpha = this->scalar(true), beta = this->scalar(true);
    std::mt19937_64 e1(this->seed_ + 7), e2(this->seed_ + 7);
    GemmBatch<T> gpu(this->ctx(), e1, m, n, k, Op::conj_trans, Op::no_trans, true);
    GemmBatch<T> cpu(this->reference(), e2, m, n, k, Op::conj_trans, Op::no_trans, true);
    EXPECT_TRUE(gpu.run(this->ctx(), 0, alpha, beta) == cpu.run(this->reference(), 0, alpha, beta));
}

TEST(GemmConfigTest, JsonRoundTripAndProblems) {
    GemmConfig c;
    c.blk_m = 64, c.blk_n = 32, c.blk_k = 16, c.dim_x = 16, c.dim_y = 8, c.tensor_cores = true;
    EXPECT_EQ(parse_gemm_config(to_string(c)), c);
    c.min_blocks_per_sm = 2;
    EXPECT_EQ(parse_gemm_config(to_string(c)), c);
    EXPECT_EQ(to_string(c), "{\"blk_m\":64,\"blk_n\":32,\"blk_k\":16,\"dim_x\":16,\"dim_y\":8,\"tensor_cores\":true,"
                            "\"min_blocks_per_sm\":2,\"stages\":0}");
    GemmConfig ring{64, 64, 32, 2, 2, true, 0, 3};  // the cp.async ring: 108 KB of shared slices
    EXPECT_EQ(parse_gemm_config(to_string(ring)), ring);
    EXPECT_EQ(gemm_config_problem(Precision::d, ring), "");
    ring.stages = 0;  // the same slices through registers exceed the 48 KB of a launch without opt-in
    EXPECT_EQ(gemm_config_problem(Precision::d, ring).rfind("config.blk_k:", 0), 0u);
    ring.stages = 1;
    EXPECT_EQ(gemm_config_problem(Precision::d, ring).rfind("config.stages:", 0), 0u);
    ring.stages = 6, ring.blk_k = 64;  // 6 x 64 x 144 doubles: above 227 KB
    EXPECT_EQ(gemm_config_problem(Precision::d, ring).rfind("config.stages:", 0), 0u);
    // the address form: 0 is left out of the text (tables and kernel keys written before the field read
    // the same), 1 and 2 round-trip, 2 only with the ring, other values refused by name
    GemmConfig offsets{128, 128, 8, 16, 16, false, 2, 4, 1};
    EXPECT_EQ(parse_gemm_config(to_string(offsets)), offsets);
    EXPECT_NE(to_string(offsets).find("\"copy_offsets\":1"), std::string::npos);
    EXPECT_EQ(to_string(c).find("copy_offsets"), std::string::npos);
    offsets.copy_offsets = 2;
    EXPECT_EQ(parse_gemm_config(to_string(offsets)), offsets);
    EXPECT_EQ(gemm_config_problem(Precision::s, offsets), "");
    offsets.stages = 0;
    EXPECT_EQ(gemm_config_problem(Precision::s, offsets).rfind("config.copy_offsets:", 0), 0u);
    offsets.copy_offsets = 1;
    EXPECT_EQ(gemm_config_problem(Precision::s, offsets), "");
    offsets.copy_offsets = 3;  // pointers advanced per slice: the register path and the ring
    EXPECT_EQ(gemm_config_problem(Precision::s, offsets), "");
    EXPECT_EQ(parse_gemm_config(to_string(offsets)), offsets);
    offsets.stages = 4;
    EXPECT_EQ(gemm_config_problem(Precision::s, offsets), "");
    EXPECT_EQ(parse_gemm_config(to_string(offsets)), offsets);
    offsets.stages = 0, offsets.copy_offsets = 4;
    EXPECT_EQ(gemm_config_problem(Precision::s, offsets).rfind("config.copy_offsets:", 0), 0u);
    // the 16x8x8 DMMA form: 0 left out of the text, 1 round-trips where the warp tile holds whole
    // fragments (d on tensor cores), refused elsewhere by name
    GemmConfig m16{64, 32, 8, 2, 2, true, 6, 0, 3};
    EXPECT_EQ(to_string(m16).find("dmma16"), std::string::npos);
    m16.dmma16 = 1;
    EXPECT_EQ(parse_gemm_config(to_string(m16)), m16);
    EXPECT_EQ(gemm_config_problem(Precision::d, m16), "");
    EXPECT_EQ(gemm_config_problem(Precision::z, m16).rfind("config.dmma16:", 0), 0u);
    EXPECT_EQ(gemm_config_problem(Precision::s, m16).rfind("config.dmma16:", 0), 0u);
    m16.blk_n = 16;  // 8-column warp tiles hold whole 16x8 fragments; 8-row ones would not
    EXPECT_EQ(gemm_config_problem(Precision::d, m16), "");
    m16.blk_m = 16;
    EXPECT_EQ(gemm_config_problem(Precision::d, m16).rfind("config.dmma16:", 0), 0u);
    // d's slice rows (tc_row): 0 left out of the text, 4 and 8 round-trip on d's tensor cores, refused
    // elsewhere and for other values by name; 0 and 4 are the same kernel, 8 one of its own
    GemmConfig rows{32, 32, 8, 2, 2, true, 6, 0, 3};
    EXPECT_EQ(to_string(rows).find("tc_row"), std::string::npos);
    for (int r : {4, 8}) {
        rows.tc_row = r;
        EXPECT_EQ(parse_gemm_config(to_string(rows)), rows);
        EXPECT_EQ(gemm_config_problem(Precision::d, rows), "");
        EXPECT_EQ(gemm_config_problem(Precision::z, rows).rfind("config.tc_row:", 0), 0u);
        EXPECT_EQ(gemm_config_problem(Precision::s, rows).rfind("config.tc_row:", 0), 0u);
    }
    rows.tc_row = 6;
    EXPECT_EQ(gemm_config_problem(Precision::d, rows).rfind("config.tc_row:", 0), 0u);
    rows.tc_row = 4, rows.tensor_cores = false, rows.dim_x = rows.dim_y = 8;
    EXPECT_EQ(gemm_config_problem(Precision::d, rows).rfind("config.tc_row:", 0), 0u);
    // how the binned dispatch runs its bins (bin_launch, bin_order): 0 left out of the text (every kernel
    // key and table written before the fields read the same), 1 and 2 round-trip, other values refused
    GemmConfig dispatch{64, 32, 8, 2, 2, true, 6, 0, 3};
    EXPECT_EQ(to_string(dispatch).find("bin_"), std::string::npos);
    for (int launch : {1, 2})
        for (int order : {0, 1}) {
            dispatch.bin_launch = launch, dispatch.bin_order = order;
            EXPECT_EQ(parse_gemm_config(to_string(dispatch)), dispatch);
            EXPECT_EQ(gemm_config_problem(Precision::d, dispatch), "");
            EXPECT_EQ(gemm_config_problem(Precision::c, GemmConfig{dispatch.blk_m, dispatch.blk_n, 8, 16, 8, false, 0, 0, 0, 0, 0, 0, launch, order}), "");
        }
    dispatch.bin_launch = 3;
    EXPECT_EQ(gemm_config_problem(Precision::d, dispatch).rfind("config.bin_launch:", 0), 0u);
    dispatch.bin_launch = 0, dispatch.bin_order = 2;
    EXPECT_EQ(gemm_config_problem(Precision::d, dispatch).rfind("config.bin_order:", 0), 0u);
    dispatch.bin_order = -1;
    EXPECT_EQ(gemm_config_problem(Precision::d, dispatch).rfind("config.bin_order:", 0), 0u);
    // the tile list: 0 left out of the text, 1 round-trips (any tile, ring or registers), other values refused
    GemmConfig tiles{64, 32, 8, 2, 2, true, 6, 0};
    tiles.tile_list = 1;
    EXPECT_EQ(parse_gemm_config(to_string(tiles)), tiles);
    EXPECT_NE(to_string(tiles).find("\"tile_list\":1"), std::string::npos);
    EXPECT_EQ(to_string(c).find("tile_list"), std::string::npos);
    EXPECT_EQ(gemm_config_problem(Precision::d, tiles), "");
    tiles.tile_list = 2;
    EXPECT_EQ(gemm_config_problem(Precision::d, tiles).rfind("config.tile_list:", 0), 0u);
    try {
        parse_gemm_config("{\"blk_q\":1}");
        ADD_FAILURE() << "unknown field accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.argument(), "config.blk_q");
    }
    EXPECT_EQ(gemm_config_problem(Precision::d, GemmConfig{}), "");
    GemmConfig tc;
    tc.blk_m = 64, tc.blk_n = 64, tc.blk_k = 8, tc.dim_x = 2, tc.dim_y = 2, tc.tensor_cores = true;
    EXPECT_EQ(gemm_config_problem(Precision::d, tc), "");
    EXPECT_EQ(gemm_config_problem(Precision::s, tc), "");  // TF32 (the explicit option)
    tc.dim_x = 8;  // 8-row warp tiles: TF32 fragments have 16 rows
    EXPECT_EQ(gemm_config_problem(Precision::s, tc).rfind("config.blk_m", 0), 0u);
    GemmConfig odd;
    odd.blk_m = 30;
    EXPECT_EQ(gemm_config_problem(Precision::d, odd).rfind("config.dim_x", 0), 0u);
    for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z})
        for (int size : {1, 32, 33, 128, 512})
            EXPECT_EQ(gemm_config_problem(p, default_gemm_config(p, size, size, size)), "") << precision_letter(p) << size;
}

}  // namespace
}  // namespace batchsolve::test
