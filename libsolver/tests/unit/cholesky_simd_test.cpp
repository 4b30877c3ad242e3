// The CPU backend's vector path at small n (src/reference/cholesky_simd.hpp), each instruction set
// forced in turn through BATCHSOLVE_CPU_SIMD (a set this CPU lacks is skipped visibly): potrf, posv and
// potrs against the LAPACKE path of the same backend (BATCHSOLVE_CPU_SIMD=off) in every layout, both
// triangles, batches that do not fill the last vector group; info at the failing column when only one
// lane of a group fails (indefinite, NaN, +Inf), its neighbours bit for bit as in a clean run; the
// switch itself (off, unknown values, complex and large n left to LAPACKE).
#include <cstdlib>
#include <tuple>

#include "../../src/reference/cholesky_simd.hpp"
#include "nonfinite_cases.hpp"
#include "test_support.hpp"

namespace batchsolve::test {
namespace {

namespace simd = batchsolve::reference::simd;

// BATCHSOLVE_CPU_SIMD set to `value` for the scope (nullptr: unset), the previous setting restored.
class ScopedSimdSetting {
public:
    explicit ScopedSimdSetting(const char* value) {
        if (const char* old = std::getenv(kName)) had_ = true, old_ = old;
        if (value) setenv(kName, value, 1);
        else unsetenv(kName);
    }
    ~ScopedSimdSetting() {
        if (had_) setenv(kName, old_.c_str(), 1);
        else unsetenv(kName);
    }
    ScopedSimdSetting(const ScopedSimdSetting&) = delete;
    ScopedSimdSetting& operator=(const ScopedSimdSetting&) = delete;

private:
    static constexpr const char* kName = "BATCHSOLVE_CPU_SIMD";
    bool had_ = false;
    std::string old_;
};

template <class T>
int lanes_of(simd::Isa isa) {
    switch (isa) {
        case simd::Isa::avx512: return simd::avx512_kernels<T>().lanes;
        case simd::Isa::avx2: return simd::avx2_kernels<T>().lanes;
        default: return simd::portable_kernels<T>().lanes;
    }
}

// The orders of the accuracy sweep: every n to 17, around the vector widths (8, 16) and the row blocks
// of the kernels (8 rows per pass, then 4, 2, 1), and up to the switch-over.
template <class T>
std::vector<int> simd_orders() {
    std::vector<int> sizes;
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 23, 24, 31, 32, 33, 48, 64, 100, 128, 160, 192})
        if (n <= simd::SimdSwitchOver<T>::max_order) sizes.push_back(n);
    return sizes;
}

// Runs the three routines in `layout` on the vector path and on the LAPACKE path and compares.
// Bounds: backward errors < kAcceptance (30, in units of n u) and differences from LAPACKE's results
// within cross_backend_tolerance (30 n u cond, cond = 100). Measured over 220 seeds x 15 orders (1..160,
// 37 or 19 matrices, lower, column-major, AVX-512, posv) the worst values were 0.089 of the first bound
// (n = 1 in d: the refined reciprocal square root's last ulps) and 0.034 of the second: a margin of
// > 10x for every seed.
template <class T>
void compare_with_lapacke(Uplo uplo, const LayoutSpec& layout, int n, int count, std::uint64_t seed, T scale = 1) {
    SCOPED_TRACE(::testing::Message() << to_string(uplo) << " n=" << n << " count=" << count << " " << layout.name()
                                      << " scale=" << scale);
    Context cpu(Backend::cpu);
    std::vector<T> a = test_matrices<T>(n, count, seed);
    for (T& x : a) x *= scale;
    const std::vector<T> input = with_other_triangle_poisoned(a, uplo, n, count);
    const int nrhs = n % 3 == 0 ? 5 : 1;  // 5: more than one block of right-hand sides (kRhsBlock = 4)
    const std::vector<T> b = random_values<T>(std::size_t(n) * nrhs * count, seed + 1);

    // The LAPACKE path on packed copies: the reference.
    std::vector<T> factor_ref = input, x_ref = b;
    std::vector<int> info_ref(count, -1);
    {
        ScopedSimdSetting off("off");
        posv_batched(uplo, BatchView<T>::column_major(factor_ref.data(), n, n, count),
                     BatchView<T>::column_major(x_ref.data(), n, nrhs, count), info_ref.data(), cpu);
    }
    ASSERT_EQ(info_ref, std::vector<int>(count, 0)) << "test bug: the LAPACKE path failed on an SPD batch";
    const LayoutSpec b_layout = layout.column_major_family() ? padded_column_major() : layout;

    // potrf
    BackendBatch<T> fa(cpu, layout, n, n, count);
    fa.upload(input);
    BackendInfo info(cpu, count);
    potrf_batched(uplo, fa.view(), info.data(), cpu);
    const std::vector<T> factor = fa.download();
    EXPECT_EQ(info.download(), std::vector<int>(count, 0));
    EXPECT_EQ(other_triangle_changes(input, factor, uplo, n, count), 0) << "potrf wrote the other triangle";
    EXPECT_EQ(fa.padding_changes(), 0) << "potrf wrote outside the matrices";
    const std::vector<double> errors = factorization_error(uplo, a, factor, n, count);
    for (int k = 0; k < count; ++k) {
        EXPECT_LT(errors[k], kAcceptance) << "potrf backward error, matrix " << k;
        EXPECT_LE(relative_difference(factor, factor_ref, n, n, k, triangle_part(uplo)), cross_backend_tolerance<T>(n))
            << "potrf factor of matrix " << k << " differs from LAPACKE's";
    }

    // posv
    BackendBatch<T> pa(cpu, layout, n, n, count), pb(cpu, b_layout, n, nrhs, count);
    pa.upload(input);
    pb.upload(b);
    info.poison();
    posv_batched(uplo, pa.view(), pb.view(), info.data(), cpu);
    const std::vector<T> x = pb.download();
    EXPECT_EQ(info.download(), std::vector<int>(count, 0));
    EXPECT_EQ(pa.padding_changes() + pb.padding_changes(), 0) << "posv wrote outside the matrices";
    const std::vector<double> solve_errors = solve_backward_error(uplo, a, x, b, n, nrhs, count);
    for (int k = 0; k < count; ++k) {
        EXPECT_LT(solve_errors[k], kAcceptance) << "posv backward error, matrix " << k;
        EXPECT_LE(relative_difference(x, x_ref, n, nrhs, k, Part::whole), cross_backend_tolerance<T>(n))
            << "posv solution of matrix " << k << " differs from LAPACKE's";
    }

    // potrs with LAPACKE's factor, which it must only read
    BackendBatch<T> sa(cpu, layout, n, n, count), sb(cpu, b_layout, n, nrhs, count);
    sa.upload(factor_ref);
    sb.upload(b);
    potrs_batched(uplo, BatchView<const T>(sa.view()), sb.view(), cpu);
    EXPECT_EQ(bitwise_differences(sa.download(), factor_ref), 0) << "potrs wrote its input factor";
    const std::vector<T> xs = sb.download();
    EXPECT_EQ(sb.padding_changes(), 0) << "potrs wrote outside B";
    const std::vector<double> potrs_errors = solve_backward_error(uplo, a, xs, b, n, nrhs, count);
    for (int k = 0; k < count; ++k) {
        EXPECT_LT(potrs_errors[k], kAcceptance) << "potrs backward error, matrix " << k;
        EXPECT_LE(relative_difference(xs, x_ref, n, nrhs, k, Part::whole), cross_backend_tolerance<T>(n))
            << "potrs solution of matrix " << k << " differs from LAPACKE's";
    }
}

// One spoiled member of a batch: which matrix, where, what.
struct Spoil {
    int k, row, col;
    enum Kind { indefinite, nan, inf } kind;
    int expected_info() const { return row + 1; }
};

template <class T>
void apply(std::vector<T>& a, int n, const Spoil& s) {
    const std::size_t base = std::size_t(s.k) * n * n;
    if (s.kind == Spoil::indefinite) {
        spoil_matrix(a, n, s.k, s.col, BadMatrix::indefinite);
        return;
    }
    const T value = nonfinite_value<T>(s.kind == Spoil::inf ? NonFiniteMember::inf : NonFiniteMember::nan);
    a[base + std::size_t(s.col) * n + s.row] = value;  // both triangles: either uplo reads it
    a[base + std::size_t(s.row) * n + s.col] = value;
}

// Failures in single lanes of a group: the first and last lane of the first group, a middle lane of the
// second, a lane of the narrow last group; on the diagonal (first, middle, last column) and below it.
template <class T>
void check_single_lane_failures(int lanes, int n, std::uint64_t seed) {
    const int count = 2 * lanes + 3;  // two full groups and a narrow one
    std::vector<Spoil> spoils = {{0, 0, 0, Spoil::indefinite},
                                 {lanes - 1, n / 2, n / 2, Spoil::nan},
                                 {lanes + lanes / 2, n - 1, n - 1, Spoil::inf},
                                 {2 * lanes + 1, n - 1, n - 1, Spoil::indefinite}};
    if (n >= 2) {
        spoils.push_back({lanes + 1, n - 1, 0, Spoil::nan});       // NaN below the diagonal: info at its row
        spoils.push_back({2 * lanes + 2, n - 1, n / 2, Spoil::inf});  // Inf below the diagonal
    }
    const std::vector<T> good = test_matrices<T>(n, count, seed);
    std::vector<T> spoiled = good;
    std::vector<int> expected(count, 0);
    for (const Spoil& s : spoils) {
        apply(spoiled, n, s);
        expected[s.k] = s.kind == Spoil::indefinite ? s.col + 1 : s.expected_info();
    }
    const std::vector<T> b = random_values<T>(std::size_t(n) * count, seed + 2);
    Context cpu(Backend::cpu);
    for (const LayoutSpec& layout :
         {packed_column_major(), pointer_array_layout(), interleaved_layout(), chunked_layout(7)})
        for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
            SCOPED_TRACE(::testing::Message() << to_string(uplo) << " n=" << n << " count=" << count << " "
                                              << layout.name());
            const LayoutSpec b_layout = layout.column_major_family() ? padded_column_major() : layout;
            auto run = [&](const std::vector<T>& a, std::vector<int>& info_out, std::vector<T>& x_out) {
                BackendBatch<T> ba(cpu, layout, n, n, count), bb(cpu, b_layout, n, 1, count);
                ba.upload(with_other_triangle_poisoned(a, uplo, n, count));
                bb.upload(b);
                BackendInfo info(cpu, count);
                posv_batched(uplo, ba.view(), bb.view(), info.data(), cpu);
                info_out = info.download();
                x_out = bb.download();
                std::vector<T> factor = ba.download();
                BackendInfo potrf_info(cpu, count);
                ba.upload(with_other_triangle_poisoned(a, uplo, n, count));
                potrf_batched(uplo, ba.view(), potrf_info.data(), cpu);
                EXPECT_EQ(potrf_info.download(), info_out) << "potrf and posv disagree on info";
                EXPECT_EQ(bitwise_differences(ba.download(), factor), 0) << "potrf and posv factors differ";
                return factor;
            };
            std::vector<int> clean_info, mixed_info;
            std::vector<T> clean_x, mixed_x;
            const std::vector<T> clean = run(good, clean_info, clean_x);
            const std::vector<T> mixed = run(spoiled, mixed_info, mixed_x);
            EXPECT_EQ(clean_info, std::vector<int>(count, 0));
            EXPECT_EQ(mixed_info, expected) << "info per matrix (k: the pivot of column k failed)";
            const std::size_t nn = std::size_t(n) * n;
            for (int k = 0; k < count; ++k) {
                const std::size_t first = std::size_t(n) * k, end = first + n;
                if (expected[k] != 0) {
                    EXPECT_EQ(bitwise_differences(mixed_x, b, first, end), 0) << "B of failed matrix " << k << " was written";
                    continue;
                }
                // Lanes never mix: a good matrix's results are those of the clean run, bit for bit.
                EXPECT_EQ(bitwise_differences(mixed, clean, nn * k, nn * (k + 1)), 0) << "factor of good matrix " << k;
                EXPECT_EQ(bitwise_differences(mixed_x, clean_x, first, end), 0) << "solution of good matrix " << k;
            }
        }
}

// ---- the suite: (instruction set, precision) -------------------------------------------------------

class CholeskySimd : public ::testing::TestWithParam<std::tuple<simd::Isa, char>> {
protected:
    void SetUp() override {
        isa_ = std::get<0>(GetParam());
        if (!simd::isa_supported(isa_)) GTEST_SKIP() << "skipped: this CPU lacks " << simd::to_string(isa_);
        setting_ = std::make_unique<ScopedSimdSetting>(simd::to_string(isa_));
        ASSERT_EQ(simd::active_isa(), isa_) << "BATCHSOLVE_CPU_SIMD did not select the instruction set";
    }
    void TearDown() override { setting_.reset(); }
    bool is_double() const { return std::get<1>(GetParam()) == 'd'; }
    simd::Isa isa_ = simd::Isa::portable;
    std::unique_ptr<ScopedSimdSetting> setting_;
};

template <class T>
void every_layout_every_size(std::uint64_t seed) {
    for (int n : simd_orders<T>()) {
        const int count = n <= 33 ? 37 : 19;  // neither a multiple of 2, 4, 8 nor 16 lanes
        for (const LayoutSpec& layout : all_layouts())
            for (Uplo uplo : {Uplo::lower, Uplo::upper}) compare_with_lapacke<T>(uplo, layout, n, count, seed + n);
    }
}

TEST_P(CholeskySimd, AgreesWithLapackeInEveryLayout) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    if (is_double()) every_layout_every_size<double>(seed);
    else every_layout_every_size<float>(seed);
}

TEST_P(CholeskySimd, OneFailingLaneReportsItsColumnAndSparesItsNeighbours) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (int n : {1, 5, 16, 33}) {
        if (is_double()) check_single_lane_failures<double>(lanes_of<double>(isa_), n, seed + n);
        else check_single_lane_failures<float>(lanes_of<float>(isa_), n, seed + n);
    }
}

// Matrices scaled far from 1 (pivots down to 2^-1000 in d, 2^-110 in s, and up to the inverse): the
// AVX-512 pivots come from a refined reciprocal square root, whose refinement would overflow for tiny
// pivots; those columns must take the exact route and agree with LAPACKE like any other.
template <class T>
void extreme_scales(std::uint64_t seed) {
    const T small = sizeof(T) == 8 ? T(0x1p-1000) : T(0x1p-110);
    for (T scale : {small, T(1) / small})
        for (int n : {5, 16, 33})
            for (const LayoutSpec& layout : {packed_column_major(), interleaved_layout()})
                for (Uplo uplo : {Uplo::lower, Uplo::upper}) compare_with_lapacke<T>(uplo, layout, n, 37, seed + n, scale);
}

TEST_P(CholeskySimd, TinyAndHugeScalesAgreeWithLapacke) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    if (is_double()) extreme_scales<double>(seed);
    else extreme_scales<float>(seed);
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<simd::Isa, char>>& info) {
    return std::string(simd::to_string(std::get<0>(info.param))) + "_" + std::get<1>(info.param);
}
INSTANTIATE_TEST_SUITE_P(Isa, CholeskySimd,
                         ::testing::Combine(::testing::Values(simd::Isa::portable, simd::Isa::avx2, simd::Isa::avx512),
                                            ::testing::Values('s', 'd')),
                         case_name);

// ---- the switch ----------------------------------------------------------------------------------

TEST(CholeskySimdSwitch, OffUnknownComplexAndLargeOrdersLeaveItToLapacke) {
    const int n = 4, count = 3;
    std::vector<double> a = test_matrices<double>(n, count, 1);
    std::vector<int> info(count, -1);
    const auto view = BatchView<double>::column_major(a.data(), n, n, count);
    {
        ScopedSimdSetting off("off");
        EXPECT_EQ(simd::active_isa(), simd::Isa::off);
        EXPECT_FALSE(simd::potrf<double>(Uplo::lower, view, info.data())) << "BATCHSOLVE_CPU_SIMD=off took the path";
        EXPECT_EQ(info, std::vector<int>(count, -1)) << "a call not taken wrote info";
    }
    {
        ScopedSimdSetting automatic(nullptr);
        EXPECT_EQ(simd::active_isa(), simd::best_supported_isa());
        EXPECT_TRUE(simd::potrf<double>(Uplo::lower, view, info.data()));
        EXPECT_EQ(info, std::vector<int>(count, 0));
    }
    {
        ScopedSimdSetting bad("avx1024");
        try {
            simd::active_isa();
            ADD_FAILURE() << "an unknown BATCHSOLVE_CPU_SIMD value was accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("BATCHSOLVE_CPU_SIMD='avx1024'"), std::string::npos) << e.what();
        }
        // Through the public API too: the call throws before touching anything.
        Context cpu(Backend::cpu);
        std::fill(info.begin(), info.end(), -1);
        EXPECT_THROW(potrf_batched(Uplo::lower, view, info.data(), cpu), Error);
        EXPECT_EQ(info, std::vector<int>(count, -1));
    }
    // Complex precisions and orders above the switch-over keep the LAPACKE loop.
    std::vector<std::complex<double>> z = test_matrices<std::complex<double>>(n, count, 2);
    EXPECT_FALSE(simd::potrf<std::complex<double>>(
        Uplo::lower, BatchView<std::complex<double>>::column_major(z.data(), n, n, count), info.data()));
    const int big = simd::SimdSwitchOver<double>::max_order + 1;
    std::vector<double> large = test_matrices<double>(big, 1, 3);
    EXPECT_FALSE(simd::potrf<double>(Uplo::lower, BatchView<double>::column_major(large.data(), big, big, 1), info.data()));
}

}  // namespace
}  // namespace batchsolve::test
