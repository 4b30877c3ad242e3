// Tests of multi_device.hpp: the split, and potrf/potrs/posv over groups of 1, 2 and 3 members (CPU
// members here and in CI, every GPU of the machine where there is one) against one context, in every
// layout, with uneven splits, failed matrices reported at their global index, and member errors.
#include <gtest/gtest.h>

#include <numeric>

#include "../test_support.hpp"
#include "batchsolve/multi_device.hpp"

namespace batchsolve::test {
namespace {

// ---- split_batch ---------------------------------------------------------------------------------

TEST(SplitBatch, SharesAreContiguousCoverTheBatchAndFollowTheWeights) {
    for (int count : {0, 1, 2, 7, 37, 1000, 1000003})
        for (const std::vector<double>& w : std::vector<std::vector<double>>{{1}, {1, 1}, {1, 1, 1}, {1, 3}, {2, 0, 1}}) {
            const auto s = split_batch(count, w);
            ASSERT_EQ(s.size(), w.size());
            int next = 0;
            for (std::size_t p = 0; p < s.size(); ++p) {
                EXPECT_EQ(s[p].first, next) << "count " << count << " member " << p;
                EXPECT_GE(s[p].count, 0);
                if (w[p] == 0) {
                    EXPECT_EQ(s[p].count, 0);
                }
                // Largest remainder: each share within one matrix of its exact proportion.
                const double exact = double(count) * w[p] / std::accumulate(w.begin(), w.end(), 0.0);
                EXPECT_LT(std::abs(s[p].count - exact), 1.0) << "count " << count << " member " << p;
                next += s[p].count;
            }
            EXPECT_EQ(next, count);
        }
}

TEST(SplitBatch, AlignedSharesStartOnChunkBoundaries) {
    const auto s = split_batch(37, {1, 1, 1}, 7);  // 6 units of 7 (the last 2 wide): 2 + 2 + 2
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].first, 0);
    EXPECT_EQ(s[0].count, 14);
    EXPECT_EQ(s[1].first, 14);
    EXPECT_EQ(s[1].count, 14);
    EXPECT_EQ(s[2].first, 28);
    EXPECT_EQ(s[2].count, 9);
    const auto t = split_batch(5, {1, 1, 1}, 32);  // one chunk: the first member takes it, the others nothing
    EXPECT_EQ(t[0].count, 5);
    EXPECT_EQ(t[1].count, 0);
    EXPECT_EQ(t[2].count, 0);
}

TEST(SplitBatch, BadArgumentsNameTheArgument) {
    auto argument_of = [](auto&& call) {
        try {
            call();
        } catch (const InvalidArgument& e) {
            return e.argument();
        }
        return std::string("no exception");
    };
    EXPECT_EQ(argument_of([] { split_batch(10, {}); }), "weights");
    EXPECT_EQ(argument_of([] { split_batch(10, {1, -1}); }), "weights");
    EXPECT_EQ(argument_of([] { split_batch(10, {0, 0}); }), "weights");
    EXPECT_EQ(argument_of([] { split_batch(10, {1, std::nan("")}); }), "weights");
    EXPECT_EQ(argument_of([] { split_batch(10, {1}, 0); }), "align");
    EXPECT_EQ(argument_of([] { split_batch(-1, {1}); }), "count");
}

// ---- DeviceGroup ---------------------------------------------------------------------------------

TEST(DeviceGroup, ParsesDeviceListsAndRejectsBadOnes) {
    EXPECT_EQ(DeviceGroup::parse_devices("0,1,3", Backend::cpu), (std::vector<int>{0, 1, 3}));
    EXPECT_EQ(DeviceGroup::parse_devices("all", Backend::cpu), (std::vector<int>{0}));
    for (const char* bad : {"", "0,", "a", "0,-1", "1.5", ",0"}) {
        try {
            DeviceGroup::parse_devices(bad, Backend::cpu);
            ADD_FAILURE() << "'" << bad << "' was accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.argument(), "devices") << bad;
        }
    }
    EXPECT_THROW(DeviceGroup(Backend::cpu, {}), InvalidArgument);
    if (Context::cuda_compiled()) {
        try {
            DeviceGroup(Backend::cuda, {0, 0});
            ADD_FAILURE() << "a repeated CUDA device was accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.argument(), "devices");
        } catch (const Error&) {
            // no driver here: Context's own error, which is fine too
        }
    }
}

TEST(DeviceGroup, AMemberThatThrowsIsNamedAndTheOthersFinish) {
    DeviceGroup group(Backend::cpu, {0, 1, 2});
    std::vector<int> ran(3, 0);
    try {
        group.run([&](int member) {
            if (member == 1) throw Error("disk on fire");
            ran[std::size_t(member)] = 1;
        });
        ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("member 1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("disk on fire"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ran, (std::vector<int>{1, 0, 1}));
    // enqueue: the same from the calling thread, every member issued before the error is raised.
    ran.assign(3, 0);
    try {
        group.enqueue([&](int member) {
            if (member == 0) throw Error("queue jammed");
            ran[std::size_t(member)] = 1;
        });
        ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("member 0"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("queue jammed"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ran, (std::vector<int>{0, 1, 1}));
}

// ---- host-resident batches, CPU members, bit for bit against one context -------------------------
// The CPU backend solves each matrix by itself (LAPACK per matrix), so a split cannot change a bit.

template <class T>
class MultiCpu : public ::testing::Test {};
using Precisions = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(MultiCpu, Precisions);

template <class T>
void check_posv_against_one_context(const LayoutSpec& layout, int members, std::vector<double> weights, int n, int count,
                                    std::uint64_t seed) {
    SCOPED_TRACE(layout.name() + ", " + std::to_string(members) + " members, n " + std::to_string(n) + ", count " +
                 std::to_string(count));
    Context one(Backend::cpu);
    const int nrhs = 2;
    std::vector<T> a = test_matrices<T>(n, count, seed);
    // Spoil a matrix near the end (the last member's share) and one in the middle.
    const int bad_last = count - 2, bad_mid = count / 2;
    spoil_matrix(a, n, bad_last, n - 1, BadMatrix::indefinite);
    spoil_matrix(a, n, bad_mid, 0, BadMatrix::nan);
    const auto rhs = generate_rhs_batch(a, n, count, nrhs, seed + 1);
    BackendBatch<T> a1(one, layout, n, n, count), b1(one, rhs_layouts_for(layout).front(), n, nrhs, count);
    BackendBatch<T> am(one, layout, n, n, count), bm(one, rhs_layouts_for(layout).front(), n, nrhs, count);
    a1.upload(a), b1.upload(rhs.b), am.upload(a), bm.upload(rhs.b);
    std::vector<int> info1(std::size_t(count), -7), infom(std::size_t(count), -7);
    posv_batched(Uplo::lower, a1.view(), b1.view(), info1.data(), one);

    std::vector<int> ids(static_cast<std::size_t>(members));
    std::iota(ids.begin(), ids.end(), 0);
    DeviceGroup group(Backend::cpu, ids);
    if (!weights.empty()) group.set_weights(weights);
    group.set_staging_bytes(std::size_t(1) << 20);
    posv_batched(Uplo::lower, am.view(), bm.view(), infom.data(), group);

    EXPECT_EQ(infom, info1);
    EXPECT_EQ(infom[std::size_t(bad_last)], n) << "the indefinite matrix at global index " << bad_last;
    EXPECT_EQ(infom[std::size_t(bad_mid)], 1) << "the NaN matrix at global index " << bad_mid;
    EXPECT_EQ(bitwise_differences(am.download(), a1.download()), 0) << "factors differ from one context's";
    EXPECT_EQ(bitwise_differences(bm.download(), b1.download()), 0) << "solutions differ from one context's";
    EXPECT_EQ(am.padding_changes(), 0);
    EXPECT_EQ(bm.padding_changes(), 0);
}

TYPED_TEST(MultiCpu, PosvEqualsOneContextForOneTwoThreeMembersInEveryLayout) {
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (const LayoutSpec& layout : all_layouts())
        for (int members : {1, 2, 3}) check_posv_against_one_context<TypeParam>(layout, members, {}, 9, 37, seed);
}

TYPED_TEST(MultiCpu, UnevenWeightsAndEmptyShares) {
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    check_posv_against_one_context<TypeParam>(packed_column_major(), 3, {1, 0, 5}, 5, 23, seed);
    check_posv_against_one_context<TypeParam>(chunked_layout(7), 3, {1, 3, 1}, 5, 23, seed);
    check_posv_against_one_context<TypeParam>(interleaved_layout(), 2, {3, 1}, 5, 23, seed);
}

TYPED_TEST(MultiCpu, PotrfAndPotrsEqualOneContext) {
    using T = TypeParam;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 6, count = 29;
    Context one(Backend::cpu);
    DeviceGroup group(Backend::cpu, {0, 1, 2});
    for (const LayoutSpec& layout : {padded_column_major(), pointer_array_layout(), interleaved_layout()}) {
        SCOPED_TRACE(layout.name());
        std::vector<T> a = test_matrices<T>(n, count, seed);
        spoil_matrix(a, n, 20, 3, BadMatrix::indefinite);  // in the third member's share
        BackendBatch<T> a1(one, layout, n, n, count), am(one, layout, n, n, count);
        a1.upload(a), am.upload(a);
        std::vector<int> info1(std::size_t(count), -7), infom(std::size_t(count), -7);
        potrf_batched(Uplo::upper, a1.view(), info1.data(), one);
        potrf_batched(Uplo::upper, am.view(), infom.data(), group);
        EXPECT_EQ(infom, info1);
        EXPECT_EQ(infom[20], 4);
        EXPECT_EQ(bitwise_differences(am.download(), a1.download()), 0);
        // potrs with the good factors (the failed one's solution is whatever LAPACK leaves; compare all).
        const auto rhs = random_values<T>(std::size_t(n) * 3 * count, seed + 2);
        BackendBatch<T> b1(one, rhs_layouts_for(layout).back(), n, 3, count), bm(one, rhs_layouts_for(layout).back(), n, 3, count);
        b1.upload(rhs), bm.upload(rhs);
        potrs_batched(Uplo::upper, BatchView<const T>(a1.view()), b1.view(), one);
        potrs_batched(Uplo::upper, BatchView<const T>(am.view()), bm.view(), group);
        EXPECT_EQ(bitwise_differences(bm.download(), b1.download()), 0);
    }
}

// ---- device-resident parts -----------------------------------------------------------------------

TEST(MultiDeviceResident, PartsSolveInPlaceAndInfoComesBackInGlobalOrder) {
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 8;
    const std::vector<int> counts{5, 0, 11};  // an empty part in the middle
    const int total = 16;
    std::vector<double> a = test_matrices<double>(n, total, seed);
    spoil_matrix(a, n, 13, 2, BadMatrix::indefinite);  // global 13 = part 2's matrix 8
    const auto rhs = generate_rhs_batch(a, n, total, 1, seed + 1);
    Context one(Backend::cpu);
    std::vector<double> a1 = a, b1 = rhs.b;
    std::vector<int> info1(total);
    posv_batched(Uplo::lower, BatchView<double>::column_major(a1.data(), n, n, total),
                 BatchView<double>::column_major(b1.data(), n, 1, total), info1.data(), one);

    DeviceGroup group(Backend::cpu, {0, 1, 2});
    std::vector<Buffer<double>> pa, pb;
    std::vector<Buffer<int>> pinfo;
    std::vector<BatchView<double>> va, vb;
    std::vector<int*> vi;
    int first = 0;
    for (int p = 0; p < 3; ++p) {
        const int c = counts[std::size_t(p)];
        pa.emplace_back(group.context(p), std::vector<double>(a.begin() + std::ptrdiff_t(first) * n * n, a.begin() + std::ptrdiff_t(first + c) * n * n));
        pb.emplace_back(group.context(p), std::vector<double>(rhs.b.begin() + std::ptrdiff_t(first) * n, rhs.b.begin() + std::ptrdiff_t(first + c) * n));
        pinfo.emplace_back(group.context(p), std::size_t(std::max(c, 1)));
        pinfo.back().fill_bytes(0xFF);
        va.push_back(BatchView<double>::column_major(pa.back().data(), n, n, c));
        vb.push_back(BatchView<double>::column_major(pb.back().data(), n, 1, c));
        vi.push_back(pinfo.back().data());
        first += c;
    }
    posv_batched(Uplo::lower, va, vb, vi, group);
    const std::vector<int> info = gather_info(group, vi, counts);
    EXPECT_EQ(info, info1);
    EXPECT_EQ(info[13], 3);
    std::vector<double> b;
    for (auto& part : pb) {
        const auto h = part.to_host();
        b.insert(b.end(), h.begin(), h.end());
    }
    EXPECT_EQ(bitwise_differences(b, b1), 0);
    EXPECT_THROW(posv_batched(Uplo::lower, std::vector<BatchView<double>>(2), vb, vi, group), InvalidArgument);
}

TEST(MultiHostResident, BadArgumentsAreReportedBeforeAnyWork) {
    DeviceGroup group(Backend::cpu, {0, 1});
    std::vector<double> a(4 * 4 * 3), b(4 * 3);
    std::vector<int> info(3, -7);
    auto A = BatchView<double>::column_major(a.data(), 4, 4, 3);
    auto B = BatchView<double>::column_major(b.data(), 4, 1, 2);  // count mismatch
    try {
        posv_batched(Uplo::lower, A, B, info.data(), group);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.argument(), "b.count");
    }
    EXPECT_THROW(posv_batched(Uplo::lower, A, BatchView<double>::column_major(b.data(), 4, 1, 3), nullptr, group), InvalidArgument);
    // A bad view (ld < rows) fails inside every member: the error names the member and the argument.
    auto bad = BatchView<double>::column_major(a.data(), 4, 4, 2, 16, 3);
    try {
        potrf_batched(Uplo::lower, bad, info.data(), group);
        ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("member 0"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("a.ld"), std::string::npos) << e.what();
    }
}

// ---- CUDA members: every GPU of the machine against the CPU backend ------------------------------

template <class T>
class MultiCuda : public ::testing::Test {
protected:
    void SetUp() override {
        if (!Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
    }
};
TYPED_TEST_SUITE(MultiCuda, Precisions);

TYPED_TEST(MultiCuda, HostResidentPosvOnEveryGpuMatchesTheCpu) {
    using T = TypeParam;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    DeviceGroup group(Backend::cuda, DeviceGroup::parse_devices("all", Backend::cuda));
    group.set_staging_bytes(std::size_t(1) << 20);  // many pieces per member
    Context cpu(Backend::cpu);
    const int n = 24, count = 3001, nrhs = 1;
    for (const LayoutSpec& layout : {padded_column_major(), chunked_layout(32), interleaved_layout()}) {
        SCOPED_TRACE(layout.name() + " on " + group.describe());
        std::vector<T> a = test_matrices<T>(n, count, seed);
        spoil_matrix(a, n, count - 1, 5, BadMatrix::indefinite);
        const auto rhs = generate_rhs_batch(a, n, count, nrhs, seed + 1);
        BackendBatch<T> ac(cpu, layout, n, n, count), bc(cpu, rhs_layouts_for(layout).front(), n, nrhs, count);
        BackendBatch<T> ag(cpu, layout, n, n, count), bg(cpu, rhs_layouts_for(layout).front(), n, nrhs, count);
        ac.upload(a), bc.upload(rhs.b), ag.upload(a), bg.upload(rhs.b);
        std::vector<int> infoc(std::size_t(count), -7), infog(std::size_t(count), -7);
        posv_batched(Uplo::lower, ac.view(), bc.view(), infoc.data(), cpu);
        posv_batched(Uplo::lower, ag.view(), bg.view(), infog.data(), group);
        EXPECT_EQ(infog, infoc);
        EXPECT_EQ(infog[std::size_t(count - 1)], 6);
        const auto xg = bg.download(), xc = bc.download();
        // Forward errors of two backends on matrices of condition kCond: within 30 n u kCond of each other.
        const double bound = kAcceptance * n * double(unit_roundoff<T>()) * kCond;
        for (int k = 0; k < count - 1; k += 97)
            EXPECT_LT(relative_difference(xg, xc, n, nrhs, k, Part::whole), bound) << "matrix " << k;
    }
}

TYPED_TEST(MultiCuda, DeviceResidentPartsOnEveryGpu) {
    using T = TypeParam;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    DeviceGroup group(Backend::cuda, DeviceGroup::parse_devices("all", Backend::cuda));
    const int n = 16, count = 1001;
    const auto shares = group.split(count);
    std::vector<T> a = test_matrices<T>(n, count, seed);
    spoil_matrix(a, n, count - 3, 0, BadMatrix::nan);
    std::vector<Buffer<T>> parts;
    std::vector<Buffer<int>> infos;
    std::vector<BatchView<T>> views;
    std::vector<int*> info_ptrs;
    std::vector<int> counts;
    for (int p = 0; p < group.size(); ++p) {
        const auto s = shares[std::size_t(p)];
        parts.emplace_back(group.context(p), std::vector<T>(a.begin() + std::ptrdiff_t(s.first) * n * n,
                                                            a.begin() + std::ptrdiff_t(s.first + s.count) * n * n));
        infos.emplace_back(group.context(p), std::size_t(std::max(s.count, 1)));
        infos.back().fill_bytes(0xFF);
        views.push_back(BatchView<T>::column_major(parts.back().data(), n, n, s.count));
        info_ptrs.push_back(infos.back().data());
        counts.push_back(s.count);
    }
    potrf_batched(Uplo::lower, views, info_ptrs, group);
    const auto info = gather_info(group, info_ptrs, counts);
    for (int k = 0; k < count; ++k) EXPECT_EQ(info[std::size_t(k)], k == count - 3 ? 1 : 0) << "matrix " << k;
}

}  // namespace
}  // namespace batchsolve::test

// ---- gesv: one large dense system over the group -------------------------------------------------

namespace batchsolve::test {
namespace {

// ||B - A X||_inf / (n ||A||_inf ||X||_inf u): backward error of a dense solve, order 1 when stable.
template <class T>
double dense_backward_error(int n, int nrhs, const std::vector<T>& a, const std::vector<T>& x, const std::vector<T>& b) {
    double a_norm = 0, x_norm = 0, r_norm = 0;
    for (int i = 0; i < n; ++i) {
        double row = 0;
        for (int j = 0; j < n; ++j) row += std::abs(a[std::size_t(j) * n + i]);
        a_norm = std::max(a_norm, row);
    }
    for (int c = 0; c < nrhs; ++c)
        for (int i = 0; i < n; ++i) {
            std::complex<long double> r = std::complex<long double>(std::real(b[std::size_t(c) * n + i]), std::imag(b[std::size_t(c) * n + i]));
            for (int j = 0; j < n; ++j) {
                const T aij = a[std::size_t(j) * n + i], xj = x[std::size_t(c) * n + j];
                r -= std::complex<long double>(std::real(aij), std::imag(aij)) * std::complex<long double>(std::real(xj), std::imag(xj));
            }
            r_norm = std::max(r_norm, double(std::abs(r)));
            x_norm = std::max(x_norm, double(std::abs(x[std::size_t(c) * n + i])));
        }
    return r_norm / (double(n) * a_norm * x_norm * double(unit_roundoff<T>()));
}

template <class T>
class MultiDense : public ::testing::Test {};
TYPED_TEST_SUITE(MultiDense, Precisions);

TYPED_TEST(MultiDense, CpuGroupSolvesLikeLapackAndReportsSingularity) {
    using T = TypeParam;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 150, nrhs = 3;
    const auto a0 = random_values<T>(std::size_t(n) * n, seed), b0 = random_values<T>(std::size_t(n) * nrhs, seed + 1);
    DeviceGroup group(Backend::cpu, {0, 1});
    std::vector<T> a = a0, b = b0;
    std::vector<int> ipiv(std::size_t(n), -7);
    const auto report = gesv(n, nrhs, a.data(), n, ipiv.data(), b.data(), n, group);
    EXPECT_EQ(report.info, 0);
    EXPECT_LT(dense_backward_error(n, nrhs, a0, b, b0), kAcceptance);
    for (int p : ipiv) EXPECT_TRUE(p >= 1 && p <= n);
    // A zero column: U(k, k) = 0 exactly, info k + 1, as LAPACK.
    std::vector<T> s = a0, sb = b0;
    for (int i = 0; i < n; ++i) s[std::size_t(40) * n + i] = T(0);
    EXPECT_GT(gesv(n, nrhs, s.data(), n, ipiv.data(), sb.data(), n, group).info, 0);
    EXPECT_THROW(gesv(n, nrhs, a.data(), n - 1, ipiv.data(), b.data(), n, group), InvalidArgument);
    EXPECT_THROW(gesv(n, nrhs, a.data(), n, ipiv.data(), b.data(), n, group, 0), InvalidArgument);
    EXPECT_THROW(gesv(n, nrhs, a.data(), n, static_cast<int*>(nullptr), b.data(), n, group), InvalidArgument);
}

TYPED_TEST(MultiDense, EveryGpuWithCuSolverMgSolvesToBackwardStability) {
    using T = TypeParam;
    if (!Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    DeviceGroup group(Backend::cuda, DeviceGroup::parse_devices("all", Backend::cuda));
    // n not a multiple of the tile, more tiles than devices, a leading dimension with padding.
    const int n = 1000, nrhs = 2, lda = n + 3, tile = 128;
    const auto a0 = random_values<T>(std::size_t(n) * n, seed), b0 = random_values<T>(std::size_t(n) * nrhs, seed + 1);
    std::vector<T> a(std::size_t(lda) * n, poison_value<T>()), b = b0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) a[std::size_t(j) * lda + i] = a0[std::size_t(j) * n + i];
    std::vector<int> ipiv(std::size_t(n), -7);
    const auto report = gesv(n, nrhs, a.data(), lda, ipiv.data(), b.data(), n, group, tile);
    std::cout << "[          ] " << report.engine << ": factor " << report.factor_s << " s, solve " << report.solve_s << " s\n";
    EXPECT_EQ(report.info, 0);
    EXPECT_LT(dense_backward_error(n, nrhs, a0, b, b0), kAcceptance) << group.describe();
    for (int j = 0; j < n; ++j)
        for (int i = n; i < lda; ++i) ASSERT_TRUE(is_poison(a[std::size_t(j) * lda + i])) << "padding of column " << j << " overwritten";
    int valid = 0;
    for (int p : ipiv) valid += p >= 1 && p <= n;
    EXPECT_EQ(valid, n) << "pivots outside [1, n]";
}

// ---- TiledMatrix: a matrix dealt to the members in tiles of columns, and gesv on it -------------------

// Fills a TiledMatrix from a host matrix the way an application does: each member its own columns.
template <class T>
void fill_tiles(TiledMatrix<T>& t, const std::vector<T>& host, DeviceGroup& group) {
    for (int p = 0; p < t.members(); ++p) {
        std::vector<T> part(std::size_t(t.local_columns(p)) * std::size_t(t.rows()));
        for (std::int64_t c = 0; c < t.local_columns(p); ++c)
            std::copy_n(host.data() + std::int64_t(t.global_column(p, c)) * t.rows(), t.rows(), part.data() + c * t.rows());
        if (!part.empty()) detail::backend_copy_to_backend(group.context(p), t.data(p), part.data(), part.size() * sizeof(T));
    }
}

TEST(TiledMatrix, TilesAreDealtRoundRobinAndCoverEveryColumnOnce) {
    for (int members : {1, 2, 3}) {
        DeviceGroup group(Backend::cpu, std::vector<int>(std::size_t(members), 0));
        for (int tile : {1, 4, 7, 64}) {
            const int cols = 45;
            TiledMatrix<double> t(group, 9, cols, tile);
            std::vector<int> seen(std::size_t(cols), 0);
            std::int64_t total = 0;
            for (int p = 0; p < members; ++p) {
                total += t.local_columns(p);
                for (std::int64_t c = 0; c < t.local_columns(p); ++c) {
                    const int j = t.global_column(p, c);
                    ASSERT_TRUE(j >= 0 && j < cols) << "member " << p << " local " << c;
                    EXPECT_EQ(t.owner(j), p);
                    EXPECT_EQ(t.local_column(j), c);
                    ++seen[std::size_t(j)];
                }
            }
            EXPECT_EQ(total, cols) << members << " members, tile " << tile;
            for (int j = 0; j < cols; ++j) EXPECT_EQ(seen[std::size_t(j)], 1) << "column " << j;
            const std::size_t most = TiledMatrix<double>::bytes_per_member(9, cols, tile, members);
            for (int p = 0; p < members; ++p) EXPECT_LE(std::size_t(t.local_columns(p)) * 9 * sizeof(double), most);
        }
    }
}

TYPED_TEST(MultiDense, TiledCpuGroupEqualsHostGesvBitForBit) {
    using T = TypeParam;
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 61, nrhs = 2;
    const auto a0 = random_values<T>(std::size_t(n) * n, seed), b0 = random_values<T>(std::size_t(n) * nrhs, seed + 1);
    DeviceGroup group(Backend::cpu, {0, 1, 2});
    std::vector<T> a = a0, b = b0;
    std::vector<int> ipiv(static_cast<std::size_t>(n), 0);
    gesv(n, nrhs, a.data(), n, ipiv.data(), b.data(), n, group);
    // Tiles of 8: 8 tiles over 3 members, the last one short; LAPACK runs on the gathered matrix, so
    // X, the pivots and L\U (written back into the tiles) equal the host call's bit for bit.
    TiledMatrix<T> t(group, n, n, 8);
    fill_tiles(t, a0, group);
    std::vector<T> x = b0;
    std::vector<int> tiled_ipiv(std::size_t(n), -7);
    const auto report = gesv(t, tiled_ipiv.data(), nrhs, x.data(), n, group);
    EXPECT_EQ(report.info, 0);
    EXPECT_EQ(x, b);
    EXPECT_EQ(tiled_ipiv, ipiv);
    EXPECT_EQ(t.gather(), a);
    EXPECT_LT(dense_backward_error(n, nrhs, a0, x, b0), kAcceptance);
}

TEST(TiledMatrix, ArgumentsAndMemoryAreCheckedBeforeAnyAllocation) {
    DeviceGroup group(Backend::cpu, {0, 1});
    EXPECT_THROW(TiledMatrix<double>(group, -1, 4, 2), InvalidArgument);
    EXPECT_THROW(TiledMatrix<double>(group, 4, 4, 0), InvalidArgument);
    TiledMatrix<double> rect(group, 4, 5, 2);
    std::vector<int> ipiv(5);
    std::vector<double> b(5);
    EXPECT_THROW(gesv(rect, ipiv.data(), 1, b.data(), 5, group), InvalidArgument);  // not square
    TiledMatrix<double> sq(group, 5, 5, 2);
    EXPECT_THROW(gesv(sq, ipiv.data(), -1, b.data(), 5, group), InvalidArgument);
    EXPECT_THROW(gesv(sq, ipiv.data(), 1, b.data(), 4, group), InvalidArgument);  // ldb < n
    DeviceGroup three(Backend::cpu, {0, 1, 2});
    EXPECT_THROW(gesv(sq, ipiv.data(), 1, b.data(), 5, three), InvalidArgument);  // tiles of another group
    // A 2000 x 2000 double matrix is 30.5 MiB; members capped at 4 MiB: refused, naming the need.
    group.set_memory_limit(std::size_t(4) << 20);
    EXPECT_EQ(group.available_bytes(0), std::size_t(4) << 20);
    try {
        TiledMatrix<double> big(group, 2000, 2000, 100);
        ADD_FAILURE() << "a 30 MiB matrix was accepted by two members of 4 MiB";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("needs 0.01 GiB on member 0"), std::string::npos) << what;
        EXPECT_NE(what.find("does not fit"), std::string::npos) << what;
    }
}

TYPED_TEST(MultiDense, TiledOnEveryGpuSolvesLikeTheHostResidentGesv) {
    using T = TypeParam;
    if (!Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
    const auto seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    DeviceGroup group(Backend::cuda, DeviceGroup::parse_devices("all", Backend::cuda));
    const int n = 700, nrhs = 1, tile = 96;
    const auto a0 = random_values<T>(std::size_t(n) * n, seed), b0 = random_values<T>(std::size_t(n) * nrhs, seed + 1);
    TiledMatrix<T> t(group, n, n, tile);
    fill_tiles(t, a0, group);
    std::vector<T> x = b0;
    std::vector<int> ipiv(std::size_t(n), -7);
    const auto report = gesv(t, ipiv.data(), nrhs, x.data(), n, group);
    EXPECT_EQ(report.info, 0) << report.engine;
    EXPECT_LT(dense_backward_error(n, nrhs, a0, x, b0), kAcceptance) << group.describe();
    int valid = 0;
    for (int p : ipiv) valid += p >= 1 && p <= n;
    EXPECT_EQ(valid, n) << "pivots outside [1, n]";
}

}  // namespace
}  // namespace batchsolve::test
