// The generated variable-size GEMM kernels run in the host emulator (tests/codegen/emulator: every
// thread a fiber, __syncthreads and warp shuffles honoured; the DMMA form through a shuffle model of
// the 8x8x4 fragment layout) on small-integer data, against the BLAS formula: every precision,
// operand form, triangle of C, the grid's z loop over problems, derived sizes and offsets. No GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "codegen/blas3/gemm.hpp"
#include "codegen/common.hpp"
#include "emulation_specs.hpp"
#include "emulator.hpp"

std::vector<bs_emu::Entry> emulated_gemm_kernels();  // the emitted file

namespace batchsolve::test::blas3 {
namespace {

using codegen::blas3::GemmOperand;
using codegen::blas3::GemmPart;
using codegen::blas3::GemmSpec;

template <class T> T conj_of(T v) {
    if constexpr (is_complex_v<T>) return std::conj(v);
    else return v;
}
template <class T> T real_only(T v) {
    if constexpr (is_complex_v<T>) return T(v.real(), 0);
    else return v;
}

// Element (r, c) of the operand as the kernel reads it from stored X (column-major, ld).
template <class T>
T operand(GemmOperand op, const T* x, int ld, int r, int c) {
    auto at = [&](int i, int j) { return x[std::size_t(j) * ld + i]; };
    switch (op) {
        case GemmOperand::no_trans: return at(r, c);
        case GemmOperand::trans: return at(c, r);
        case GemmOperand::conj_trans: return conj_of(at(c, r));
        case GemmOperand::symmetric_lower: return r >= c ? at(r, c) : at(c, r);
        case GemmOperand::symmetric_upper: return r <= c ? at(r, c) : at(c, r);
        case GemmOperand::hermitian_lower: return r > c ? at(r, c) : r < c ? conj_of(at(c, r)) : real_only(at(r, r));
        case GemmOperand::hermitian_upper: return r < c ? at(r, c) : r > c ? conj_of(at(c, r)) : real_only(at(r, r));
    }
    return T(0);
}
bool transposed(GemmOperand op) { return op == GemmOperand::trans || op == GemmOperand::conj_trans; }
bool symmetric(GemmOperand op) { return op >= GemmOperand::symmetric_lower; }

// Derived sizes and offsets of the internal entry (blas3_internal.hpp: VSize, Offsets).
struct Shape {
    int m_sub = 0, m_lim = 1 << 30, n_sub = 0, n_lim = 1 << 30, k_sub = 0, k_lim = 1 << 30;
    int a_row = 0, a_col = 0, b_row = 0, b_col = 0, c_row = 0, c_col = 0;
};
int clamp_size(int v, int sub, int lim) { return std::max(0, std::min(v - sub, lim)); }

template <class T> bool is_nan(T v) {
    if constexpr (is_complex_v<T>) return std::isnan(v.real()) || std::isnan(v.imag());
    else return std::isnan(v);
}
// Equal, or both NaN (a poisoned C left alone).
template <class T> bool same(T x, T y) { return x == y || (is_nan(x) && is_nan(y)); }

// The problems a listed kernel (one size bin) runs, out of order; the others must stay untouched.
const std::vector<int> kListed = {6, 3, 0, 4, 1};

// beta_zero: C poisoned with NaN and beta = 0, so that a kernel that reads C when it must not (BLAS:
// beta = 0 writes C without reading it) leaves NaN where the formula has a number.
template <class T>
void run_spec(const GemmSpec& spec, bs_emu::Entry entry, const Shape& sh, std::uint64_t seed, bool beta_zero = false) {
    std::mt19937_64 engine(seed);
    std::uniform_int_distribution<int> size(0, 45), ksize(0, 40), value(-3, 3);
    auto draw = [&]() {
        if constexpr (is_complex_v<T>) return T(real_t<T>(value(engine)), real_t<T>(value(engine)));
        else return T(value(engine));
    };
    const int batch = 7;
    std::vector<int> m(batch), n(batch), k(batch);
    for (int i = 0; i < batch; ++i) {
        m[i] = size(engine), n[i] = spec.part == GemmPart::full ? size(engine) : m[i], k[i] = ksize(engine);
        if (symmetric(spec.op_a)) k[i] = m[i];
        if (symmetric(spec.op_b)) k[i] = n[i];
    }
    if (spec.full_tiles) {  // the uniform-size path: one size for all, whole tiles, sizes as constants
        std::fill(m.begin(), m.end(), 2 * spec.config.blk_m), std::fill(n.begin(), n.end(), 3 * spec.config.blk_n);
        std::fill(k.begin(), k.end(), 2 * spec.config.blk_k);
    } else {
        m[2] = 0, k[3] = 0;  // empty problems mixed in
        m[4] = 1, k[5] = 1;  // and sizes of one
        if (spec.part == GemmPart::full) n[6] = 1;
        else n[4] = m[4];
        for (int i = 0; i < batch; ++i) {
            if (symmetric(spec.op_a)) k[i] = m[i];
            if (symmetric(spec.op_b)) k[i] = n[i];
        }
    }
    std::vector<int> me(batch), ne(batch), ke(batch);
    for (int i = 0; i < batch; ++i)
        me[i] = clamp_size(m[i], sh.m_sub, sh.m_lim), ne[i] = clamp_size(n[i], sh.n_sub, sh.n_lim),
        ke[i] = clamp_size(k[i], sh.k_sub, sh.k_lim);
    // stored matrices large enough for the raw sizes plus the offsets, ld with a little slack
    auto stored = [&](int rows, int cols, int row_off, int col_off, std::vector<T>& data, int& ld) {
        ld = rows + row_off + 2;
        data.resize(std::size_t(ld) * (cols + col_off) + 1);
        for (T& x : data) x = draw();
    };
    std::vector<std::vector<T>> A(batch), B(batch), C(batch);
    std::vector<int> lda(batch), ldb(batch), ldc(batch);
    for (int i = 0; i < batch; ++i) {
        const bool ta = transposed(spec.op_a), tb = transposed(spec.op_b);
        stored(ta ? k[i] : m[i], ta ? m[i] : k[i], sh.a_row, sh.a_col, A[i], lda[i]);
        stored(tb ? n[i] : k[i], tb ? k[i] : n[i], sh.b_row, sh.b_col, B[i], ldb[i]);
        stored(m[i], n[i], sh.c_row, sh.c_col, C[i], ldc[i]);
    }
    if (beta_zero)
        for (auto& x : C) std::fill(x.begin(), x.end(), T(std::numeric_limits<real_t<T>>::quiet_NaN()));
    const T alpha = T(2), beta = beta_zero ? T(0) : T(-1);
    std::vector<bool> runs(batch, !spec.problem_list);
    if (spec.problem_list)
        for (int i : kListed) runs[i] = true;
    // expected
    // the elements the kernel's region covers (the region split: whole tiles, or the rest)
    auto covered = [&](int i, int r, int c) {
        if (spec.region == codegen::blas3::GemmRegion::interior)
            return r < me[i] / spec.config.blk_m * spec.config.blk_m && c < ne[i] / spec.config.blk_n * spec.config.blk_n;
        if (spec.region == codegen::blas3::GemmRegion::edge)
            return !(r < me[i] / spec.edge_m * spec.edge_m && c < ne[i] / spec.edge_n * spec.edge_n);
        return true;
    };
    std::vector<std::vector<T>> E = C;
    for (int i = 0; i < batch; ++i) {
        if (!runs[i]) continue;
        const T* a = A[i].data() + sh.a_row + std::size_t(sh.a_col) * lda[i];
        const T* b = B[i].data() + sh.b_row + std::size_t(sh.b_col) * ldb[i];
        T* e = E[i].data() + sh.c_row + std::size_t(sh.c_col) * ldc[i];
        for (int c = 0; c < ne[i]; ++c)
            for (int r = 0; r < me[i]; ++r) {
                if (spec.part == GemmPart::lower && r < c) continue;
                if (spec.part == GemmPart::upper && r > c) continue;
                if (!covered(i, r, c)) continue;
                T sum(0);
                for (int p = 0; p < ke[i]; ++p) sum += operand(spec.op_a, a, lda[i], r, p) * operand(spec.op_b, b, ldb[i], p, c);
                T& out = e[std::size_t(c) * ldc[i] + r];
                out = beta_zero ? alpha * sum : alpha * sum + beta * out;
                if (spec.real_diagonal && r == c) out = real_only(out);
            }
    }
    // launch: pointer arrays on the host (the emulator runs on the host)
    std::vector<const T*> pa(batch), pb(batch);
    std::vector<T*> pc(batch);
    for (int i = 0; i < batch; ++i) pa[i] = A[i].data(), pb[i] = B[i].data(), pc[i] = C[i].data();
    const int max_m = *std::max_element(me.begin(), me.end()), max_n = *std::max_element(ne.begin(), ne.end());
    const GemmConfig& cfg = spec.config;
    const codegen::KernelResources res = codegen::blas3::gemm_family().resources(spec);
    int batch_ = batch;
    const int* m_v = m.data(); int m_sub = sh.m_sub, m_lim = sh.m_lim;
    const int* n_v = n.data(); int n_sub = sh.n_sub, n_lim = sh.n_lim;
    const int* k_v = k.data(); int k_sub = sh.k_sub, k_lim = sh.k_lim;
    if (spec.full_tiles) m_v = n_v = k_v = nullptr, m_lim = m[0], n_lim = n[0], k_lim = k[0];
    T al = alpha, be = beta;
    const T* const* a_p = pa.data();
    const T* const* b_p = pb.data();
    T* const* c_p = pc.data();
    const int* lda_p = lda.data(); const int* ldb_p = ldb.data(); const int* ldc_p = ldc.data();
    int a_row = sh.a_row, a_col = sh.a_col, b_row = sh.b_row, b_col = sh.b_col, c_row = sh.c_row, c_col = sh.c_col;
    const int* skip = nullptr;
    const int listed_count = int(kListed.size());
    const int* list = kListed.data();
    const int* list_count = &listed_count;
    // the tile list's scan, as the launcher's: the tiles of the listed (or all) problems summed
    std::vector<int> tile_end;
    for (int z = 0; z < (spec.problem_list ? listed_count : batch); ++z) {
        const int p = spec.problem_list ? kListed[std::size_t(z)] : z;
        const int t = codegen::ceil_div(me[p], cfg.blk_m) * codegen::ceil_div(ne[p], cfg.blk_n);
        tile_end.push_back((tile_end.empty() ? 0 : tile_end.back()) + t);
    }
    const int* tile_end_p = tile_end.data();
    void* listed_args[] = {&batch_, &m_v, &m_sub, &m_lim, &n_v, &n_sub, &n_lim, &k_v, &k_sub, &k_lim,
                           &al, &a_p, &lda_p, &a_row, &a_col, &b_p, &ldb_p, &b_row, &b_col,
                           &be, &c_p, &ldc_p, &c_row, &c_col, &skip, &list, &list_count, &tile_end_p};
    void* whole_args[] = {&batch_, &m_v, &m_sub, &m_lim, &n_v, &n_sub, &n_lim, &k_v, &k_sub, &k_lim,
                          &al, &a_p, &lda_p, &a_row, &a_col, &b_p, &ldb_p, &b_row, &b_col,
                          &be, &c_p, &ldc_p, &c_row, &c_col, &skip, &tile_end_p};
    void** args = spec.problem_list || !cfg.tile_list ? listed_args : whole_args;
    bs_emu::Dim3 grid, block;
    grid.x = unsigned(std::max(1, codegen::ceil_div(max_m, cfg.blk_m)));
    grid.y = unsigned(std::max(1, codegen::ceil_div(max_n, cfg.blk_n)));
    grid.z = 3;  // fewer than the problems: the kernel's loop over problems is exercised
    if (cfg.tile_list) grid.x = 3, grid.y = grid.z = 1;  // fewer blocks than tiles: the loop over tiles is exercised
    block.x = unsigned(res.threads_per_block);
    if (max_m > 0 && max_n > 0) bs_emu::launch(entry, grid, block, res.shared_bytes, args);
    for (int i = 0; i < batch; ++i)
        for (std::size_t e = 0; e < C[i].size(); ++e)
            ASSERT_TRUE(same(C[i][e], E[i][e])) << "problem " << i << " (" << me[i] << " x " << ne[i] << " x " << ke[i]
                                        << ") storage element " << e << " (row " << e % ldc[i] << ", col "
                                        << e / ldc[i] << ", ldc " << ldc[i] << ")";
}

// A fused kernel (GemmSpec::fused) launched as the launcher does: the problems binned by max(m, n) into
// one list per path's bin (path 0 the largest bin; each list in reverse order, as the device's atomics
// may leave it), the path table of block ranges and grids, a one-dimensional grid. Ragged sizes across
// every bin, problems with m, n or k zero, z extents below the bins' problem counts (the paths' loops
// over problems). beta_zero: C poisoned with NaN, beta = 0.
template <class T>
void run_fused_spec(const GemmSpec& spec, bs_emu::Entry entry, std::uint64_t seed, bool beta_zero) {
    std::mt19937_64 engine(seed);
    std::uniform_int_distribution<int> value(-3, 3);
    auto draw = [&]() {
        if constexpr (is_complex_v<T>) return T(real_t<T>(value(engine)), real_t<T>(value(engine)));
        else return T(value(engine));
    };
    const int paths = int(spec.fused.size());
    // bin b (ascending) holds max(m, n) in (hi[b-1], hi[b]]; path i runs bin paths - 1 - i
    std::vector<int> hi(static_cast<std::size_t>(paths));
    for (int b = 0; b < paths; ++b) hi[std::size_t(b)] = 12 + 58 * b / std::max(paths - 1, 1);
    const int batch = 4 * paths + 3;
    std::vector<int> m(batch), n(batch), k(batch);
    for (int i = 0; i < batch; ++i) {
        const int b = i % paths, lo = b > 0 ? hi[std::size_t(b - 1)] + 1 : 1;
        const int big = std::uniform_int_distribution<int>(lo, hi[std::size_t(b)])(engine);
        const int other = std::uniform_int_distribution<int>(1, big)(engine);
        m[i] = i % 2 ? big : other, n[i] = i % 2 ? other : big, k[i] = std::uniform_int_distribution<int>(1, 40)(engine);
        if (spec.part != GemmPart::full) n[i] = m[i] = big;
    }
    m[batch - 1] = 0, n[batch - 2] = 0, k[batch - 3] = 0, k[0] = 0;  // empty problems, and C = beta C
    std::vector<std::vector<int>> lists(static_cast<std::size_t>(paths));
    for (int i = batch - 1; i >= 0; --i) {
        if (m[i] == 0 || n[i] == 0) continue;
        int b = 0;
        while (b + 1 < paths && std::max(m[i], n[i]) > hi[std::size_t(b)]) ++b;
        lists[std::size_t(b)].push_back(i);
    }
    std::vector<int> flat(static_cast<std::size_t>(paths) * batch, -1), counts(static_cast<std::size_t>(paths));
    for (int b = 0; b < paths; ++b) {
        counts[std::size_t(b)] = int(lists[std::size_t(b)].size());
        std::copy(lists[std::size_t(b)].begin(), lists[std::size_t(b)].end(), flat.begin() + std::ptrdiff_t(b) * batch);
    }
    std::vector<std::vector<T>> A(batch), B(batch), C(batch);
    std::vector<int> lda(batch), ldb(batch), ldc(batch);
    auto stored = [&](int rows, int cols, std::vector<T>& data, int& ld) {
        ld = rows + 2;
        data.resize(std::size_t(ld) * cols + 1);
        for (T& x : data) x = draw();
    };
    for (int i = 0; i < batch; ++i) {
        const bool ta = transposed(spec.op_a), tb = transposed(spec.op_b);
        stored(ta ? k[i] : m[i], ta ? m[i] : k[i], A[i], lda[i]);
        stored(tb ? n[i] : k[i], tb ? k[i] : n[i], B[i], ldb[i]);
        stored(m[i], n[i], C[i], ldc[i]);
    }
    if (beta_zero)
        for (auto& x : C) std::fill(x.begin(), x.end(), T(std::numeric_limits<real_t<T>>::quiet_NaN()));
    const T alpha = T(2), beta = beta_zero ? T(0) : T(-1);
    std::vector<std::vector<T>> E = C;
    for (int i = 0; i < batch; ++i)
        for (int c = 0; c < n[i]; ++c)
            for (int r = 0; r < m[i]; ++r) {
                if (spec.part == GemmPart::lower && r < c) continue;
                if (spec.part == GemmPart::upper && r > c) continue;
                T sum(0);
                for (int p = 0; p < k[i]; ++p) sum += operand(spec.op_a, A[i].data(), lda[i], r, p) * operand(spec.op_b, B[i].data(), ldb[i], p, c);
                T& out = E[i][std::size_t(c) * ldc[i] + r];
                out = beta_zero ? alpha * sum : alpha * sum + beta * out;
                if (spec.real_diagonal && r == c) out = real_only(out);
            }
    const int max_m = *std::max_element(m.begin(), m.end()), max_n = *std::max_element(n.begin(), n.end());
    // the path table, kFusedTableFields arrays of `paths` ints: end, gx, gy, gz, bin
    std::vector<int> table(std::size_t(codegen::blas3::kFusedTableFields) * paths);
    int end = 0;
    for (int i = 0; i < paths; ++i) {
        const GemmConfig& c = spec.fused[std::size_t(i)];
        const int bin = paths - 1 - i, gz = 2;
        const int gx = codegen::ceil_div(std::min(max_m, hi[std::size_t(bin)]), c.blk_m);
        const int gy = codegen::ceil_div(std::min(max_n, hi[std::size_t(bin)]), c.blk_n);
        end += gx * gy * gz;
        table[std::size_t(i)] = end, table[std::size_t(paths + i)] = gx, table[std::size_t(2 * paths + i)] = gy;
        table[std::size_t(3 * paths + i)] = gz, table[std::size_t(4 * paths + i)] = bin;
    }
    std::vector<const T*> pa(batch), pb(batch);
    std::vector<T*> pc(batch);
    for (int i = 0; i < batch; ++i) pa[i] = A[i].data(), pb[i] = B[i].data(), pc[i] = C[i].data();
    int batch_ = batch, zero = 0, lim = 1 << 30;
    const int* m_v = m.data(); const int* n_v = n.data(); const int* k_v = k.data();
    T al = alpha, be = beta;
    const T* const* a_p = pa.data();
    const T* const* b_p = pb.data();
    T* const* c_p = pc.data();
    const int* lda_p = lda.data(); const int* ldb_p = ldb.data(); const int* ldc_p = ldc.data();
    const int* skip = nullptr;
    const int* lists_p = flat.data();
    const int* counts_p = counts.data();
    void* args[] = {&batch_, &m_v, &zero, &lim, &n_v, &zero, &lim, &k_v, &zero, &lim,
                    &al, &a_p, &lda_p, &zero, &zero, &b_p, &ldb_p, &zero, &zero,
                    &be, &c_p, &ldc_p, &zero, &zero, &skip, &lists_p, &counts_p, table.data()};
    const codegen::KernelResources res = codegen::blas3::gemm_family().resources(spec);
    bs_emu::Dim3 grid, block;
    grid.x = unsigned(end);
    block.x = unsigned(res.threads_per_block);
    bs_emu::launch(entry, grid, block, res.shared_bytes, args);
    for (int i = 0; i < batch; ++i)
        for (std::size_t e = 0; e < C[i].size(); ++e)
            ASSERT_TRUE(same(C[i][e], E[i][e])) << "problem " << i << " (" << m[i] << " x " << n[i] << " x " << k[i]
                                        << ") storage element " << e << " (row " << e % ldc[i] << ", col "
                                        << e / ldc[i] << ", ldc " << ldc[i] << "), seed " << seed;
}

void run_fused(const GemmSpec& spec, bs_emu::Entry entry, std::uint64_t seed, bool beta_zero) {
    switch (spec.precision) {
        case Precision::s: return run_fused_spec<float>(spec, entry, seed, beta_zero);
        case Precision::d: return run_fused_spec<double>(spec, entry, seed, beta_zero);
        case Precision::c: return run_fused_spec<std::complex<float>>(spec, entry, seed, beta_zero);
        case Precision::z: return run_fused_spec<std::complex<double>>(spec, entry, seed, beta_zero);
    }
}

void run(const GemmSpec& spec, bs_emu::Entry entry, const Shape& shape, std::uint64_t seed, bool beta_zero = false) {
    switch (spec.precision) {
        case Precision::s: return run_spec<float>(spec, entry, shape, seed, beta_zero);
        case Precision::d: return run_spec<double>(spec, entry, shape, seed, beta_zero);
        case Precision::c: return run_spec<std::complex<float>>(spec, entry, shape, seed, beta_zero);
        case Precision::z: return run_spec<std::complex<double>>(spec, entry, shape, seed, beta_zero);
    }
}

TEST(GemmEmulation, EverySpecMatchesTheFormula) {
    const auto specs = emulation_specs();
    const auto kernels = emulated_gemm_kernels();
    ASSERT_EQ(specs.size(), kernels.size());
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        if (!specs[i].fused.empty()) continue;  // FusedBins
        SCOPED_TRACE(codegen::blas3::gemm_family().kernel_name(specs[i]));
        run(specs[i], kernels[i], Shape{}, seed + i);
    }
}

TEST(GemmEmulation, FusedBins) {
    // every size bin in one launch: each problem computed once by its bin's path, beta = 0 never reads C
    const auto specs = emulation_specs();
    const auto kernels = emulated_gemm_kernels();
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    int fused = 0;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        if (specs[i].fused.empty()) continue;
        ++fused;
        SCOPED_TRACE(codegen::blas3::gemm_family().kernel_name(specs[i]));
        EXPECT_EQ(codegen::blas3::gemm_family().can_implement(specs[i]), "");
        for (bool beta_zero : {false, true}) run_fused(specs[i], kernels[i], seed + 2 * i + (beta_zero ? 1 : 0), beta_zero);
    }
    EXPECT_GE(fused, 4);
}

TEST(GemmEmulation, FusedKernelsAreCheckedAndNamed) {
    using codegen::blas3::GemmRegion;
    const auto& family = codegen::blas3::gemm_family();
    GemmSpec s;
    s.precision = Precision::d;
    s.fused = {GemmConfig{64, 64, 8, 2, 2, true, 4}, GemmConfig{64, 32, 8, 2, 2, true, 6}};
    EXPECT_EQ(family.can_implement(s), "");
    EXPECT_NE(family.kernel_name(s).find("_fused_64x64x8"), std::string::npos);
    EXPECT_NE(family.kernel_name(s).find("_then_64x32x8"), std::string::npos);
    // the block: the paths' common threads, the largest path's shared memory
    GemmSpec big;
    big.precision = Precision::d, big.config = s.fused[0];
    EXPECT_EQ(family.resources(s).shared_bytes, family.resources(big).shared_bytes);
    EXPECT_EQ(family.resources(s).threads_per_block, 128);
    // the launch bound of the most registers any path was tuned with
    EXPECT_NE(family.generate(s).source.find("BS_KERNEL_HEAD(128, 4)"), std::string::npos);
    GemmSpec mixed = s;
    mixed.fused[1] = GemmConfig{64, 32, 8, 16, 16, false};  // 256 threads beside 128
    EXPECT_EQ(family.can_implement(mixed).rfind("config.bin_launch:", 0), 0u);
    GemmSpec one = s;
    one.fused.pop_back();
    EXPECT_EQ(family.can_implement(one).rfind("config.bin_launch:", 0), 0u);
    GemmSpec listed = s;
    listed.fused[1].tile_list = 1;
    EXPECT_EQ(family.can_implement(listed).rfind("config.tile_list:", 0), 0u);
    GemmSpec region = s;
    region.region = GemmRegion::interior;
    EXPECT_NE(family.can_implement(region), "");
    GemmSpec bad = s;
    bad.fused[0].blk_k = 0;  // a path's own problem, by its field
    EXPECT_EQ(family.can_implement(bad).rfind("config.blk_k:", 0), 0u);
}

TEST(GemmEmulation, DerivedSizesAndOffsets) {
    // the update below a diagonal block of a recursive solver: m = {m, 3}, k = {k, 0, 9}, offsets
    const auto specs = emulation_specs();
    const auto kernels = emulated_gemm_kernels();
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    Shape s;
    s.m_sub = 3, s.k_lim = 9, s.a_row = 3, s.c_row = 3, s.b_col = 1, s.c_col = 1;
    // SIMT and DMMA through registers, then through the cp.async ring, all no_trans x no_trans
    for (std::size_t i : {std::size_t(0), std::size_t(6), std::size_t(12), std::size_t(18)}) {
        SCOPED_TRACE(codegen::blas3::gemm_family().kernel_name(specs[i]));
        run(specs[i], kernels[i], s, seed + i);
    }
}

TEST(GemmEmulation, BetaZeroNeverReadsC) {
    // C poisoned with NaN, beta = 0: every entry the formula writes must be a number, the rest NaN
    const auto specs = emulation_specs();
    const auto kernels = emulated_gemm_kernels();
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        if (specs[i].config.stages < 2 && !specs[i].problem_list) continue;  // the ring and the listed kernels
        SCOPED_TRACE(codegen::blas3::gemm_family().kernel_name(specs[i]));
        run(specs[i], kernels[i], Shape{}, seed + i, /*beta_zero=*/true);
    }
}

TEST(GemmEmulation, RegionSpecsAreCheckedAndNamedApart) {
    // an interior kernel and the edge kernel beside it (EverySpecMatchesTheFormula runs such pairs: each
    // writes exactly its region, the other elements stay as they were)
    using codegen::blas3::GemmRegion;
    GemmSpec whole, in, out;
    whole.config = in.config = GemmConfig{32, 32, 8, 8, 8, false};
    in.region = GemmRegion::interior;
    out.config = GemmConfig{16, 8, 8, 4, 4, false};
    out.region = GemmRegion::edge, out.edge_m = 32, out.edge_n = 32;
    const auto& family = codegen::blas3::gemm_family();
    EXPECT_EQ(family.can_implement(in), "");
    EXPECT_EQ(family.can_implement(out), "");
    GemmSpec bad = out;
    bad.edge_m = 24;  // not a multiple of blk_m
    EXPECT_NE(family.can_implement(bad), "");
    EXPECT_NE(family.kernel_name(in), family.kernel_name(whole));
    EXPECT_NE(family.kernel_name(out), family.kernel_name(bad));
}

TEST(GemmEmulation, RingAndListedKernelsAreNamedApart) {
    const auto specs = emulation_specs();
    std::vector<std::string> names;
    for (const GemmSpec& s : specs) names.push_back(codegen::blas3::gemm_family().kernel_name(s));
    std::sort(names.begin(), names.end());
    EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

}  // namespace
}  // namespace batchsolve::test::blas3
