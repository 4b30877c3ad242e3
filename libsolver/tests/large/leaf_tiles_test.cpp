// The tiled leaf of posv_mixed's tensor-core factor (MixedFactorConfig::tiled_leaf; its plan in
// src/cuda/large/leaf_tiles.hpp, its kernel tiled_leaf_kernel in src/cuda/large/mixed_factor.cu) run on
// the CPU: every task in ticket order, one after the other, each doing what the kernel's block does on
// its 32 x 32 tiles (the same padding, products and order of operations per entry up to the FMA), with
// the launch's flags emulated. Checks what the GPU run cannot show without a GPU: every task once, each
// wait on a tile published by an earlier ticket (so the kernel's waits end whatever the residency), the
// factor (||L L^T - A|| within m u ||A||) and its inverse (||X L - I|| within m u cond), X's upper part
// exactly 0, L's upper triangle and everything outside the leaf untouched, the first failing column
// as cuSOLVER's info (merged only into a zero info) and the flags back at zero. Uneven orders, an
// offset leaf inside a larger ld. The seed is printed by every case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "cuda/large/leaf_tiles.hpp"

namespace batchsolve::test {
namespace {

namespace lt = cuda_backend::leaf_tiles;
constexpr int T = lt::kTile;
using Tile = std::vector<float>;  // T x T, (r, c) at r * T + c

struct Launch {
    int n, off, m, p;
    std::vector<float>& l;    // ld n
    std::vector<float>& inv;  // ld n, the leaf's rows at off, columns 0 .. m - 1
    std::vector<int> flags;
    int& info;
    int published_waits = 0;

    float* ltile(int a, int b) { return l.data() + std::size_t(off + b * T) * n + off + a * T; }
    float* xtile(int a, int b) { return inv.data() + std::size_t(b * T) * n + off + a * T; }
    void wait(int flag, const std::string& what) {
        ASSERT_NE(flags[flag], 0) << what << " waited on before it was published: a later ticket";
        ++published_waits;
    }
    Tile load(const float* src, int rows, int cols, float pad, bool transposed) const {
        Tile s(T * T);
        for (int c = 0; c < T; ++c)
            for (int r = 0; r < T; ++r) {
                const float v = r < rows && c < cols ? src[std::size_t(c) * n + r] : (r == c ? pad : 0.0f);
                (transposed ? s[c * T + r] : s[r * T + c]) = v;
            }
        return s;
    }
    // acc(r, c) += sign sum_q a(r, q) b(c, q), the kernel's sum per entry then one FMA into acc.
    static void product(Tile& acc, const Tile& a, const Tile& b, float sign) {
        for (int r = 0; r < T; ++r)
            for (int c = 0; c < T; ++c) {
                float sum = 0;
                for (int q = 0; q < T; ++q) sum = std::fma(a[r * T + q], b[c * T + q], sum);
                acc[r * T + c] = std::fma(sign, sum, acc[r * T + c]);
            }
    }
    void store(float* dst, const Tile& t, int rows, int cols, bool lower_only) const {
        for (int c = 0; c < cols; ++c)
            for (int r = 0; r < rows; ++r)
                if (!lower_only || r >= c) dst[std::size_t(c) * n + r] = t[r * T + c];
    }
    static void record_first(int& slot, int v) {
        if (slot == 0 || v < slot) slot = v;
    }

    void run_task(int ticket) {
        const lt::Task task = lt::task_of(ticket, p);
        const int i = task.i, j = task.j, rows_i = lt::rows_of(i, m), rows_j = lt::rows_of(j, m);
        const std::string name = std::string(task.inverse ? "inverse" : "factor") + " (" + std::to_string(i) + ", " +
                                 std::to_string(j) + ")";
        if (!task.inverse) {
            Tile acc = load(ltile(i, j), rows_i, rows_j, i == j ? 1.0f : 0.0f, false);
            for (int k = 0; k < j; ++k) {
                wait(lt::factor_flag(p, i, k), name);
                if (i != j) wait(lt::factor_flag(p, j, k), name);
                product(acc, load(ltile(i, k), rows_i, T, 0, false), load(ltile(j, k), rows_j, T, 0, false), -1.0f);
            }
            if (i == j) {
                Tile& sc = acc;
                for (int k = 0; k < T; ++k) {
                    const float d = sc[k * T + k];
                    if (k < rows_j && !(d > 0.0f && std::isfinite(d))) record_first(flags[2], j * T + k + 1);
                    const float root = std::sqrt(d);
                    for (int lane = k + 1; lane < T; ++lane) sc[lane * T + k] /= root;
                    sc[k * T + k] = root;
                    for (int lane = k + 1; lane < T; ++lane) {
                        const float lck = sc[lane * T + k];
                        for (int r = lane; r < T; ++r) sc[r * T + lane] -= sc[r * T + k] * lck;
                    }
                }
                Tile x(T * T, 0.0f);
                for (int lane = 0; lane < T; ++lane)
                    for (int r = 0; r < T; ++r) {
                        float v = r == lane ? 1.0f : 0.0f;
                        for (int q = 0; q < r; ++q) v -= sc[r * T + q] * x[q * T + lane];
                        x[r * T + lane] = r >= lane ? v / sc[r * T + r] : 0.0f;
                    }
                store(ltile(j, j), sc, rows_j, rows_j, true);
                store(xtile(j, j), x, rows_j, rows_j, false);
                const Tile zero(T * T, 0.0f);
                for (int c = j + 1; c < p; ++c) store(xtile(j, c), zero, rows_j, lt::rows_of(c, m), false);
            } else {
                wait(lt::factor_flag(p, j, j), name);
                Tile out(T * T, 0.0f);
                product(out, acc, load(xtile(j, j), rows_j, rows_j, 0, false), 1.0f);
                store(ltile(i, j), out, rows_i, rows_j, false);
            }
            flags[lt::factor_flag(p, i, j)] = 1;
        } else {
            ASSERT_GT(i, j) << name;
            Tile acc(T * T, 0.0f);
            for (int k = j; k < i; ++k) {
                wait(lt::factor_flag(p, i, k), name);
                wait(k == j ? lt::factor_flag(p, j, j) : lt::inverse_flag(p, k, j), name);
                product(acc, load(ltile(i, k), rows_i, T, 0, false), load(xtile(k, j), T, T, 0, true), 1.0f);
            }
            wait(lt::factor_flag(p, i, i), name);
            Tile accT(T * T);
            for (int r = 0; r < T; ++r)
                for (int c = 0; c < T; ++c) accT[c * T + r] = acc[r * T + c];
            Tile out(T * T, 0.0f);
            product(out, load(xtile(i, i), rows_i, rows_i, 0, false), accT, -1.0f);
            store(xtile(i, j), out, rows_i, T, false);
            flags[lt::inverse_flag(p, i, j)] = 1;
        }
    }

    void run() {
        flags.assign(std::size_t(lt::flag_count(p)), 0);
        std::vector<int> seen(std::size_t(2 * p * p), 0);
        for (int t = 0; t < lt::task_count(p); ++t) {
            const lt::Task task = lt::task_of(t, p);
            ASSERT_TRUE(task.i >= task.j && task.i < p && task.j >= 0 && (!task.inverse || task.i > task.j)) << "ticket " << t;
            ++seen[std::size_t((task.inverse ? p * p : 0) + task.i * p + task.j)];
            run_task(t);
            if (::testing::Test::HasFatalFailure()) return;
        }
        for (int i = 0; i < p; ++i)
            for (int j = 0; j <= i; ++j) {
                EXPECT_EQ(seen[std::size_t(i * p + j)], 1) << "factor tile " << i << ", " << j;
                if (i > j) EXPECT_EQ(seen[std::size_t(p * p + i * p + j)], 1) << "inverse tile " << i << ", " << j;
            }
        // The last block: the info, then the flags back to zero.
        if (flags[2] != 0 && info == 0) info = off + flags[2];
        std::fill(flags.begin(), flags.end(), 0);
    }
};

struct Case {
    int n, off, m;
};

// A = G G^T / m + I (lower, FP32) at (off, off) of an n x n array whose other entries are poisoned.
void fill_leaf(std::vector<float>& l, int n, int off, int m, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::normal_distribution<double> normal;
    std::vector<double> g(std::size_t(m) * m);
    for (double& v : g) v = normal(engine);
    for (int j = 0; j < m; ++j)
        for (int i = 0; i < m; ++i) {
            double s = i == j ? 1.0 : 0.0;
            for (int k = 0; k < m; ++k) s += g[std::size_t(k) * m + i] * g[std::size_t(k) * m + j] / m;
            l[std::size_t(off + j) * n + off + i] = float(s);
        }
}

TEST(LeafTiles, FactorAndInverseOfEveryOrderInTicketOrder) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const float u = 0x1p-24f;
    for (const Case& c : {Case{1, 0, 1}, Case{40, 3, 31}, Case{64, 0, 32}, Case{80, 7, 33}, Case{130, 2, 100},
                          Case{300, 20, 257}, Case{520, 8, 512}}) {
        SCOPED_TRACE("n " + std::to_string(c.n) + " off " + std::to_string(c.off) + " m " + std::to_string(c.m));
        const float poison = 12345.0f;
        std::vector<float> l(std::size_t(c.n) * c.n, poison), inv(std::size_t(c.n) * c.n, poison);
        fill_leaf(l, c.n, c.off, c.m, seed + c.m);
        // The upper triangle of the leaf holds the mirror (the factor's scaled copy writes both).
        for (int j = 0; j < c.m; ++j)
            for (int i = 0; i < j; ++i) l[std::size_t(c.off + j) * c.n + c.off + i] = l[std::size_t(c.off + i) * c.n + c.off + j];
        const std::vector<float> a = l;
        int info = 0;
        Launch launch{c.n, c.off, c.m, lt::tiles_of(c.m), l, inv, {}, info};
        launch.run();
        if (HasFatalFailure()) return;
        EXPECT_EQ(info, 0);
        for (int f : launch.flags) ASSERT_EQ(f, 0);
        const auto L = [&](int i, int j) { return i >= j ? double(l[std::size_t(c.off + j) * c.n + c.off + i]) : 0.0; };
        const auto X = [&](int i, int j) { return double(inv[std::size_t(j) * c.n + c.off + i]); };
        double worst_factor = 0, worst_inverse = 0, norm_a = 0;
        for (int i = 0; i < c.m; ++i) {
            double row = 0;
            for (int j = 0; j < c.m; ++j) row += std::fabs(a[std::size_t(c.off + j) * c.n + c.off + i]);
            norm_a = std::max(norm_a, row);
        }
        for (int i = 0; i < c.m; ++i)
            for (int j = 0; j <= i; ++j) {
                double s = 0, e = 0;
                for (int k = 0; k <= j; ++k) s += L(i, k) * L(j, k);
                for (int k = j; k <= i; ++k) e += X(i, k) * L(k, j);
                worst_factor = std::max(worst_factor, std::fabs(s - a[std::size_t(c.off + j) * c.n + c.off + i]));
                worst_inverse = std::max(worst_inverse, std::fabs(e - (i == j ? 1.0 : 0.0)));
            }
        // cond(L) = sqrt(cond(A)) is below 3 here.
        EXPECT_LE(worst_factor, kAcceptance * c.m * u * norm_a);
        EXPECT_LE(worst_inverse, kAcceptance * c.m * u * 3);
        for (int j = 0; j < c.m; ++j)
            for (int i = 0; i < j; ++i) {
                ASSERT_EQ(X(i, j), 0.0) << "inverse above its diagonal at " << i << ", " << j;
                ASSERT_EQ(l[std::size_t(c.off + j) * c.n + c.off + i], a[std::size_t(c.off + j) * c.n + c.off + i])
                    << "the upper triangle written at " << i << ", " << j;
            }
        for (int j = 0; j < c.n; ++j)
            for (int i = 0; i < c.n; ++i) {
                const bool in_leaf = i >= c.off && i < c.off + c.m && j >= c.off && j < c.off + c.m;
                if (!in_leaf) ASSERT_EQ(l[std::size_t(j) * c.n + i], poison) << "L outside the leaf at " << i << ", " << j;
                const bool in_inverse = i >= c.off && i < c.off + c.m && j < c.m;
                if (!in_inverse) ASSERT_EQ(inv[std::size_t(j) * c.n + i], poison) << "inv outside its block at " << i << ", " << j;
            }
        if (c.m > T) EXPECT_GT(launch.published_waits, 0);
    }
}

// A non-positive pivot at leaf column 41 (a_40,40 = -1 in a diagonally dominant matrix, so the earlier
// pivots are positive): info = off + 41 when it was 0, unchanged when an earlier leaf had set it.
TEST(LeafTiles, FirstFailingColumnIsMergedIntoAZeroInfo) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (int preset : {0, 3}) {
        const int n = 140, off = 10, m = 100;
        std::vector<float> l(std::size_t(n) * n, 0.0f), inv(std::size_t(n) * n, 0.0f);
        fill_leaf(l, n, off, m, seed);
        l[std::size_t(off + 40) * n + off + 40] = -1.0f;
        int info = preset;
        Launch launch{n, off, m, lt::tiles_of(m), l, inv, {}, info};
        launch.run();
        if (HasFatalFailure()) return;
        EXPECT_EQ(info, preset == 0 ? off + 41 : preset);
        for (int f : launch.flags) ASSERT_EQ(f, 0);
    }
}

}  // namespace
}  // namespace batchsolve::test
