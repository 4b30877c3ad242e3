// The fused POTF2 kernels (codegen/large/potf2.*) run on the CPU by the kernel emulator
// (tests/codegen/emulator: every thread a fiber, barriers and shuffles checked): for both strip
// factorisations, ib 8 / 16 / 32, s and d, lower and upper storage, orders from 1 to the kernel's
// capacity (partial last strips included) with lda > m; the factor against LAPACK's backward error,
// the other triangle untouched, info at the first bad pivot (negative and NaN), and a block launched
// while info is already set doing nothing. No GPU needed: this checks the kernel text in CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "codegen/large/potf2.hpp"
#include "emulator.hpp"

#include "emulated_potf2.inc"

namespace batchsolve::test {
namespace {

using codegen::large::Potf2Spec;
using codegen::large::StripFactor;

// Runs the emulated kernel of `spec` on the m x m block at a (lda), info as given.
template <class T>
void run_kernel(const Potf2Spec& spec, int m, T* a, int lda, int* info, int column_offset) {
    const std::string name = codegen::large::potf2_kernel_name(spec);
    const auto* found = std::find_if(std::begin(kEmulatedKernels), std::end(kEmulatedKernels),
                                     [&](const EmulatedKernel& k) { return name == k.name; });
    ASSERT_NE(found, std::end(kEmulatedKernels)) << name << " not emitted";
    const auto res = codegen::large::potf2_family().resources(spec);
    void* args[] = {&m, &a, &lda, &info, &column_offset};
    bs_emu::Dim3 grid, block;
    block.x = unsigned(res.threads_per_block);
    bs_emu::launch(found->entry, grid, block, res.shared_bytes, args);
}

template <class T>
Potf2Spec spec_for(Uplo u, StripFactor strip, int capacity, int ib, bool resident) {
    Potf2Spec s;
    s.precision = std::is_same_v<T, float> ? Precision::s : Precision::d;
    s.uplo = u, s.capacity = capacity, s.config.ib = ib, s.config.strip = strip;
    s.config = codegen::large::potf2_family().default_config(s);
    s.config.resident = resident;
    return s;
}

// A (m x m, both triangles) = G G^T / m + I: SPD, well conditioned.
std::vector<double> spd(int m, std::mt19937_64& engine) {
    std::normal_distribution<double> normal;
    std::vector<double> g(std::size_t(m) * m), a(std::size_t(m) * m, 0.0);
    for (double& v : g) v = normal(engine);
    for (int j = 0; j < m; ++j)
        for (int i = 0; i < m; ++i) {
            double s = i == j ? 1.0 : 0.0;
            for (int k = 0; k < m; ++k) s += g[std::size_t(k) * m + i] * g[std::size_t(k) * m + j] / m;
            a[std::size_t(j) * m + i] = s;
        }
    return a;
}

template <class T>
class Potf2Emulation : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Potf2Emulation, Precisions);

TYPED_TEST(Potf2Emulation, FactorsEveryOrderUpToTheCapacity) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 engine(seed);
    for (bool resident : {false, true})
    for (Uplo u : {Uplo::lower, Uplo::upper})
        for (StripFactor strip : {StripFactor::columns, StripFactor::warp})
            for (auto [capacity, ib] : {std::pair{32, 8}, std::pair{64, 16}, std::pair{96, 32}})
                for (int m : {1, 5, ib, ib + 3, capacity - 1, capacity}) {
                    SCOPED_TRACE(::testing::Message() << to_string(u) << (strip == StripFactor::warp ? " warp" : " columns")
                                                      << (resident ? " resident" : "")
                                                      << " capacity " << capacity << " ib " << ib << " m " << m);
                    const int lda = m + 2;
                    const std::vector<double> a = spd(m, engine);
                    std::vector<T> stored(std::size_t(lda) * m, poison_value<T>());
                    for (int j = 0; j < m; ++j)
                        for (int i = 0; i < m; ++i)
                            if (u == Uplo::lower ? i >= j : i <= j) stored[std::size_t(j) * lda + i] = T(a[std::size_t(j) * m + i]);
                    int info = 0;
                    run_kernel(spec_for<T>(u, strip, capacity, ib, resident), m, stored.data(), lda, &info, 100);
                    ASSERT_EQ(info, 0);
                    // L from the factor; ||A - L L^T|| / (m u ||A||) with A as rounded to T.
                    double num = 0, den = 0;
                    for (int j = 0; j < lda; ++j)
                        for (int i = 0; i < lda && j < m; ++i) {
                            const bool in = i < m && (u == Uplo::lower ? i >= j : i <= j);
                            if (!in) {
                                ASSERT_TRUE(is_poison(stored[std::size_t(j) * lda + i])) << "(" << i << ", " << j << ") written";
                            }
                        }
                    auto l = [&](int i, int k) -> double {
                        if (k > i) return 0;
                        return double(u == Uplo::lower ? stored[std::size_t(k) * lda + i] : stored[std::size_t(i) * lda + k]);
                    };
                    for (int j = 0; j < m; ++j)
                        for (int i = j; i < m; ++i) {
                            double s = 0;
                            for (int k = 0; k <= j; ++k) s += l(i, k) * l(j, k);
                            const double aij = double(T(a[std::size_t(j) * m + i]));
                            num += (aij - s) * (aij - s), den += aij * aij;
                        }
                    EXPECT_LT(std::sqrt(num / den) / (m * double(unit_roundoff<T>())), kAcceptance);
                }
}

TYPED_TEST(Potf2Emulation, InfoIsTheFirstBadPivotAndAFailedFactorisationStops) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 engine(seed);
    const int m = 64;
    for (bool resident : {false, true})
    for (StripFactor strip : {StripFactor::columns, StripFactor::warp})
        for (int bad : {0, 17, 63})
            for (bool nan : {false, true}) {
                SCOPED_TRACE(::testing::Message() << (strip == StripFactor::warp ? "warp" : "columns") << " column " << bad
                                                  << (nan ? " NaN" : " negative"));
                std::vector<double> a = spd(m, engine);
                a[std::size_t(bad) * m + bad] = nan ? std::nan("") : -1.0;
                std::vector<T> stored(a.begin(), a.end());
                int info = 0;
                run_kernel(spec_for<T>(Uplo::lower, strip, 64, 16, resident), m, stored.data(), m, &info, 1000);
                EXPECT_EQ(info, 1000 + bad + 1);
                // A later block (same info) does nothing.
                std::vector<T> other(a.begin(), a.end());
                const std::vector<T> before = other;
                run_kernel(spec_for<T>(Uplo::lower, strip, 64, 16, resident), m, other.data(), m, &info, 5000);
                EXPECT_EQ(info, 1000 + bad + 1);
                EXPECT_EQ(std::memcmp(other.data(), before.data(), before.size() * sizeof(T)), 0);
            }
}

}  // namespace
}  // namespace batchsolve::test
