// Runs the generated interleaved Cholesky kernels on the CPU: their CUDA text, compiled unchanged by
// the host compiler (emit_emulated_variants + emulated_variants.hpp), executed thread by thread over batches in
// the plain and chunked interleaved layouts. Checks the factors and solutions against scaled error
// bounds, per-matrix info for NaN, Inf and indefinite members, and that nothing outside the uplo triangle
// (or B of a failed posv) is touched. No GPU needed: this is what catches indexing bugs before GPU time.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <sstream>

#include "nonfinite_cases.hpp"
#include "emulated_variants.hpp"
#include "host_checks.hpp"
#include "../../test_seed.hpp"

namespace batchsolve::emulator {
std::vector<Variant>& variants() {
    static std::vector<Variant> all;
    return all;
}
}  // namespace batchsolve::emulator

namespace {

using namespace batchsolve;
using namespace batchsolve::jit_tests;
using batchsolve::codegen::cholesky::Routine;
using batchsolve::emulator::Variant;

constexpr double tolerance = 30;  // scaled errors of a backward-stable algorithm are O(1)

struct Scenario {
    int count;
    int chunk;  // 0: plain interleaved
};
// Single matrix, plain interleaved, chunked with a one-matrix tail, chunked with a wider tail.
const Scenario scenarios[] = {{1, 0}, {6, 0}, {7, 3}, {5, 2}};

template <class T>
BatchView<T> layout_of(T* data, int rows, int cols, const Scenario& s) {
    return s.chunk == 0 ? BatchView<T>::interleaved(data, rows, cols, s.count)
                        : BatchView<T>::chunked(data, rows, cols, s.count, s.chunk);
}

// Matrix 1 gets a NaN pivot at column n/2, matrix 3 an indefinite leading minor at column n-1.
struct Spoiled {
    int mat, col;
};
std::vector<Spoiled> spoil_plan(int n, int count) {
    std::vector<Spoiled> plan;
    if (count > 1) plan.push_back({1, n / 2});
    if (count > 3) plan.push_back({3, n - 1});
    return plan;
}
template <class T>
void spoil(std::vector<T>& a, int n, const Spoiled& s, bool nan) {
    T& d = a[static_cast<std::size_t>(s.mat) * n * n + static_cast<std::size_t>(s.col) * n + s.col];
    d = nan ? poison<T>() : T(-1);  // diagonal entries are ~1 + |row|^2/n: -1 makes pivot col negative
}

template <class T>
void check_potrf(const Variant& v, const Scenario& sc, std::uint64_t seed) {
    const int n = v.spec.n, count = sc.count;
    const Uplo uplo = v.spec.uplo;
    std::vector<T> a = random_hpd<T>(n, count, seed);
    const auto plan = spoil_plan(n, count);
    for (std::size_t i = 0; i < plan.size(); ++i) spoil(a, n, plan[i], i == 0);
    std::vector<T> buf = to_interleaved(a, layout_of<T>(nullptr, n, n, sc), &uplo);
    const std::vector<T> before = buf;
    std::vector<int> info(count, -7);
    v.run(buf.data(), nullptr, 0, info.data(), count, sc.chunk == 0 ? count : sc.chunk);

    const BatchView<T> view = layout_of<T>(buf.data(), n, n, sc);
    const std::vector<T> f = from_interleaved(buf, view);
    for (int k = 0; k < count; ++k) {
        int expected = 0;
        for (const auto& s : plan)
            if (s.mat == k) expected = s.col + 1;
        EXPECT_EQ(info[k], expected) << "matrix " << k;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                if (in_triangle(uplo, i, j)) continue;
                ASSERT_TRUE(same_bits(buf, before, view.offset(k, i, j)))
                    << "matrix " << k << ": element (" << i << ", " << j << ") outside the triangle was written";
            }
        if (expected != 0) continue;
        const double err = factorization_error_one(uplo, &a[static_cast<std::size_t>(k) * n * n],
                                                   &f[static_cast<std::size_t>(k) * n * n], n);
        EXPECT_LT(err, tolerance) << "matrix " << k << ": scaled ||A - L L^H||";
    }
}

template <class T>
void check_potrs(const Variant& v, const Scenario& sc, int nrhs, std::uint64_t seed) {
    const int n = v.spec.n, count = sc.count;
    const Uplo uplo = v.spec.uplo;
    const std::vector<T> a = random_hpd<T>(n, count, seed);
    std::vector<T> factor = a;
    for (int k = 0; k < count; ++k) ASSERT_TRUE(host_cholesky(uplo, &factor[static_cast<std::size_t>(k) * n * n], n));
    const std::vector<T> b = random_matrices<T>(n, nrhs, count, seed + 1);
    std::vector<T> abuf = to_interleaved(factor, layout_of<T>(nullptr, n, n, sc), &uplo);
    const std::vector<T> abefore = abuf;
    std::vector<T> bbuf = to_interleaved(b, layout_of<T>(nullptr, n, nrhs, sc), nullptr);
    v.run(abuf.data(), bbuf.data(), nrhs, nullptr, count, sc.chunk == 0 ? count : sc.chunk);

    ASSERT_TRUE(std::memcmp(abuf.data(), abefore.data(), abuf.size() * sizeof(T)) == 0) << "potrs wrote to A";
    const std::vector<T> x = from_interleaved(bbuf, layout_of<T>(bbuf.data(), n, nrhs, sc));
    for (int k = 0; k < count; ++k) {
        const std::size_t ao = static_cast<std::size_t>(k) * n * n, bo = static_cast<std::size_t>(k) * n * nrhs;
        EXPECT_LT(backward_error_one(uplo, &a[ao], &x[bo], &b[bo], n, nrhs), tolerance) << "system " << k;
    }
}

template <class T>
void check_posv(const Variant& v, const Scenario& sc, int nrhs, std::uint64_t seed) {
    const int n = v.spec.n, count = sc.count;
    const Uplo uplo = v.spec.uplo;
    std::vector<T> a = random_hpd<T>(n, count, seed);
    const auto plan = spoil_plan(n, count);
    for (std::size_t i = 0; i < plan.size(); ++i) spoil(a, n, plan[i], i == 1);
    const std::vector<T> b = random_matrices<T>(n, nrhs, count, seed + 1);
    std::vector<T> abuf = to_interleaved(a, layout_of<T>(nullptr, n, n, sc), &uplo);
    std::vector<T> bbuf = to_interleaved(b, layout_of<T>(nullptr, n, nrhs, sc), nullptr);
    const std::vector<T> bbefore = bbuf;
    std::vector<int> info(count, -7);
    v.run(abuf.data(), bbuf.data(), nrhs, info.data(), count, sc.chunk == 0 ? count : sc.chunk);

    const BatchView<T> bview = layout_of<T>(bbuf.data(), n, nrhs, sc);
    const std::vector<T> f = from_interleaved(abuf, layout_of<T>(abuf.data(), n, n, sc));
    const std::vector<T> x = from_interleaved(bbuf, bview);
    for (int k = 0; k < count; ++k) {
        int expected = 0;
        for (const auto& s : plan)
            if (s.mat == k) expected = s.col + 1;
        EXPECT_EQ(info[k], expected) << "matrix " << k;
        const std::size_t ao = static_cast<std::size_t>(k) * n * n, bo = static_cast<std::size_t>(k) * n * nrhs;
        if (expected != 0) {
            for (int c = 0; c < nrhs; ++c)
                for (int i = 0; i < n; ++i)
                    ASSERT_TRUE(same_bits(bbuf, bbefore, bview.offset(k, i, c))) << "failed matrix " << k << ": B was written";
            continue;
        }
        EXPECT_LT(factorization_error_one(uplo, &a[ao], &f[ao], n), tolerance) << "matrix " << k;
        EXPECT_LT(backward_error_one(uplo, &a[ao], &x[bo], &b[bo], n, nrhs), tolerance) << "system " << k;
    }
}

// Non-finite members (issue 22, ../nonfinite_cases.hpp): +Inf on the diagonal at the first, middle
// and last column, NaN and Inf below it, among good matrices: info of the first bad pivot, never 0;
// the good matrices factored (and solved) as usual; B of a failed posv untouched.
template <class T>
void check_nonfinite(const Variant& v, std::uint64_t seed) {
    const int n = v.spec.n, count = 13, nrhs = v.spec.routine == Routine::posv ? 2 : 0;
    const Uplo uplo = v.spec.uplo;
    const Scenario sc{count, 0};
    const std::vector<T> good = random_hpd<T>(n, count, seed);
    std::vector<T> a = good;
    const std::vector<test::NonFiniteMember> members = test::nonfinite_members(n, count);
    const std::vector<int> expected = test::spoil_nonfinite(a, n, count, members);
    const std::vector<T> b = random_matrices<T>(n, std::max(nrhs, 1), count, seed + 1);
    std::vector<T> abuf = to_interleaved(a, layout_of<T>(nullptr, n, n, sc), &uplo);
    std::vector<T> bbuf = to_interleaved(b, layout_of<T>(nullptr, n, std::max(nrhs, 1), sc), nullptr);
    const std::vector<T> bbefore = bbuf;
    std::vector<int> info(count, -7);
    v.run(abuf.data(), bbuf.data(), nrhs, info.data(), count, count);

    const std::vector<T> f = from_interleaved(abuf, layout_of<T>(abuf.data(), n, n, sc));
    const BatchView<T> bview = layout_of<T>(bbuf.data(), n, std::max(nrhs, 1), sc);
    const std::vector<T> x = from_interleaved(bbuf, bview);
    for (const test::NonFiniteMember& m : members) EXPECT_EQ(info[m.k], m.expected_info()) << m.describe();
    for (int k = 0; k < count; ++k) {
        const std::size_t ao = static_cast<std::size_t>(k) * n * n, bo = static_cast<std::size_t>(k) * n * nrhs;
        if (expected[k] != 0) {
            for (int c = 0; c < nrhs; ++c)
                for (int i = 0; i < n; ++i)
                    ASSERT_TRUE(same_bits(bbuf, bbefore, bview.offset(k, i, c))) << "failed matrix " << k << ": B was written";
            continue;
        }
        EXPECT_EQ(info[k], 0) << "good matrix " << k;
        EXPECT_LT(factorization_error_one(uplo, &good[ao], &f[ao], n), tolerance) << "good matrix " << k;
        if (nrhs > 0) {
            EXPECT_LT(backward_error_one(uplo, &good[ao], &x[bo], &b[bo], n, nrhs), tolerance) << "system " << k;
        }
    }
}

template <class T>
void check_variant(const Variant& v, std::uint64_t seed) {
    if (v.spec.routine != Routine::potrs) {
        SCOPED_TRACE("non-finite members");
        check_nonfinite<T>(v, seed + 100);
    }
    for (const Scenario& sc : scenarios) {
        SCOPED_TRACE("count " + std::to_string(sc.count) + ", chunk " + std::to_string(sc.chunk));
        switch (v.spec.routine) {
            case Routine::potrf: check_potrf<T>(v, sc, seed); break;
            case Routine::potrs:
                for (int nrhs : {1, v.spec.config.nrhs_block + 1}) check_potrs<T>(v, sc, nrhs, seed);
                break;
            case Routine::posv:
                for (int nrhs : {1, v.spec.config.nrhs_block + 1}) check_posv<T>(v, sc, nrhs, seed);
                break;
        }
        ++seed;
    }
}

class Emulated : public ::testing::TestWithParam<int> {};

TEST_P(Emulated, MatchesScaledErrorBoundsAndInfo) {
    const Variant& v = emulator::variants().at(GetParam());
    const std::uint64_t seed = batchsolve::test::fresh_seed();  // BATCHSOLVE_TEST_SEED replays
    SCOPED_TRACE(v.name + ", seed " + std::to_string(seed));
    switch (v.spec.precision) {
        case Precision::s: check_variant<float>(v, seed); break;
        case Precision::d: check_variant<double>(v, seed); break;
        case Precision::c: check_variant<std::complex<float>>(v, seed); break;
        case Precision::z: check_variant<std::complex<double>>(v, seed); break;
    }
}

std::vector<int> variant_indices() {
    std::vector<int> i(emulator::variants().size());
    for (std::size_t k = 0; k < i.size(); ++k) i[k] = static_cast<int>(k);
    return i;
}

INSTANTIATE_TEST_SUITE_P(Interleaved, Emulated, ::testing::ValuesIn(variant_indices()),
                         [](const ::testing::TestParamInfo<int>& p) { return emulator::variants().at(p.param).name; });

// The sample covers what it claims: every routine, looking order, unrolling mode, uplo and precision.
TEST(EmulatedSample, CoversTheSearchSpaceDimensions) {
    std::set<std::string> seen;
    for (const Variant& v : emulator::variants()) {
        const auto& s = v.spec;
        seen.insert(std::string("routine ") + batchsolve::to_string(s.routine));
        seen.insert(std::string("precision ") + precision_letter(s.precision));
        seen.insert(std::string("uplo ") + to_string(s.uplo));
        seen.insert(s.config.full_unroll ? "full" : "partial");
        if (s.routine == Routine::potrf) seen.insert(std::string("looking ") + to_string(s.config.looking));
        if (s.config.nb < s.n && s.n % s.config.nb != 0) seen.insert("ragged");
        if (s.config.nb == s.n) seen.insert("whole");
        if (s.config.nb == 1) seen.insert("nb1");
    }
    for (const char* want : {"routine potrf", "routine potrs", "routine posv", "precision s", "precision d", "precision c",
                             "precision z", "uplo lower", "uplo upper", "full", "partial", "looking left",
                             "looking right", "looking top", "ragged", "whole", "nb1"})
        EXPECT_TRUE(seen.count(want)) << "no emulated variant with " << want;
}

}  // namespace
