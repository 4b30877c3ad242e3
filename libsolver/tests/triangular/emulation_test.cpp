// The CUDA backend's algorithms (src/cuda/triangular/algorithm.hpp) run on the CPU: the generated
// kernels' text compiled by the host compiler and run thread by thread by the kernel emulator
// (tests/codegen/emulator: fibers, barriers, shuffles), the GEMM updates by the CPU's gemm_vbatched;
// compared with the CPU reference backend for every option combination, both TRSM algorithms, TRMM
// and potrf in every precision. No GPU needed: this is what checks the kernels and the recursion in CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "batchsolve/vbatched_triangular.hpp"
#include "cuda/triangular/algorithm.hpp"
#include "emulator.hpp"

#include "emulated_kernels.inc"

namespace batchsolve::test {
namespace {

using codegen::triangular::KernelArguments;
using codegen::triangular::TriangularKernelSpec;

// The executor of algorithm.hpp on the host: kernels by the emulator, GEMM by the CPU backend.
template <class T>
class EmulatedExecutor {
public:
    explicit EmulatedExecutor(Context& cpu) : cpu_(cpu) {}
    void kernel(const TriangularKernelSpec& spec, KernelArguments args, unsigned grid_x, unsigned grid_y) {
        const std::string name = codegen::triangular::triangular_family().kernel_name(spec);
        const auto* found = std::find_if(std::begin(kEmulatedKernels), std::end(kEmulatedKernels),
                                         [&](const EmulatedKernel& k) { return name == k.name; });
        ASSERT_NE(found, std::end(kEmulatedKernels)) << "kernel " << name << " is not emitted for the emulator";
        const codegen::KernelResources res = codegen::triangular::triangular_family().resources(spec);
        void* params[] = {&args};
        bs_emu::Dim3 grid, block;
        grid.x = grid_x, grid.y = std::max(1u, std::min(grid_y, 65535u));
        block.x = unsigned(res.threads_per_block);
        bs_emu::launch(found->entry, grid, block, res.shared_bytes, params);
        ++launches;
    }
    void gemm(blas3_detail::Operand op_a, blas3_detail::Operand op_b, blas3_detail::VSize m, blas3_detail::VSize n,
              blas3_detail::VSize k, T alpha, const T* const* a, const int* lda, const T* const* b, const int* ldb, T beta,
              T* const* c, const int* ldc, int max_m, int max_n, int max_k, int batch,
              const blas3_detail::GemmExtras& extras) {
        blas3_detail::gemm_vbatched<T>(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, max_m, max_n, max_k,
                                       batch, cpu_, extras);
        ++gemms;
    }
    void* workspace(std::size_t bytes) {
        work_.assign(bytes + 64, 0xFF);  // NaN: a block read before it is written shows
        return work_.data();
    }
    void zero_info(int* info, int batch) { std::fill(info, info + batch, 0); }
    int launches = 0, gemms = 0;

private:
    Context& cpu_;
    std::vector<unsigned char> work_;
};

template <class T>
T random_value(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> d(-1, 1);
    if constexpr (is_complex_v<T>) return T(real_t<T>(d(rng)), real_t<T>(d(rng)));
    else return T(d(rng));
}

// Problems with ld = rows + 1, A well conditioned (diagonal of modulus 1..2, off-diagonal <= 0.5 / order).
template <class T>
struct Problems {
    std::vector<int> m, n, lda, ldb;
    std::vector<std::size_t> a_at, b_at;
    std::vector<T> a, b;
    int max_m = 0, max_n = 0;
};

template <class T>
Problems<T> make_problems(Side side, int batch, int max_size, std::mt19937_64& rng) {
    Problems<T> p;
    std::uniform_int_distribution<int> size(0, max_size), rhs(0, 13);
    std::size_t a_size = 0, b_size = 0;
    for (int i = 0; i < batch; ++i) {
        const int mi = i == 0 ? max_size : size(rng), ni = rhs(rng);
        p.m.push_back(mi), p.n.push_back(ni);
        const int order = side == Side::left ? mi : ni;
        p.lda.push_back(order + 1), p.ldb.push_back(mi + 1);
        p.a_at.push_back(a_size), p.b_at.push_back(b_size);
        a_size += std::size_t(order + 1) * order, b_size += std::size_t(mi + 1) * ni;
        p.max_m = std::max(p.max_m, mi), p.max_n = std::max(p.max_n, ni);
    }
    p.a.resize(a_size), p.b.resize(b_size);
    for (int i = 0; i < batch; ++i) {
        const int order = side == Side::left ? p.m[i] : p.n[i];
        for (int c = 0; c < order; ++c)
            for (int r = 0; r < order + 1; ++r) {
                T v = random_value<T>(rng) * real_t<T>(0.5 / std::max(order, 1));
                if (r == c) v = T(real_t<T>((rng() % 2 ? 1 : -1) * (1 + 0.5 * (rng() % 3))));
                if (r == order) v = poison_value<T>();  // the row beyond the matrix: never read
                p.a[p.a_at[i] + std::size_t(c) * (order + 1) + r] = v;
            }
    }
    for (T& v : p.b) v = random_value<T>(rng);
    return p;
}

template <class T>
double relative_difference(const std::vector<T>& x, const std::vector<T>& y) {
    long double diff = 0, norm = 0;
    for (std::size_t e = 0; e < x.size(); ++e) {
        if (is_poison(y[e])) continue;
        diff += std::norm(x[e] - y[e]), norm += std::norm(y[e]);
    }
    if (!(diff == diff)) return 1e300;
    return norm == 0 ? double(std::sqrt(diff)) : double(std::sqrt(diff / norm));
}

template <class T>
class TriangularEmulation : public ::testing::Test {};
TYPED_TEST_SUITE(TriangularEmulation, AllPrecisions);

TYPED_TEST(TriangularEmulation, TrmmTrsmEveryOptionMatchTheReference) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    Context cpu(Backend::cpu);
    TriangularConfig small;  // small leaves and blocks: several recursion levels at these sizes
    small.leaf_order = 7, small.inversion_block = 6, small.columns_per_thread = 2, small.warps_per_block = 4;
    small.column_blocks = 1;  // one block per problem loops over every group of right-hand sides
    TriangularConfig wide;   // the default leaves, another blocking (d only: the kernels emitted)
    if constexpr (std::is_same_v<T, double>) wide.columns_per_thread = 3, wide.warps_per_block = 2;
    T alpha = T(0.75);
    if constexpr (is_complex_v<T>) alpha = T(real_t<T>(0.75), real_t<T>(-0.5));
    for (Side side : {Side::left, Side::right})
        for (Uplo uplo : {Uplo::lower, Uplo::upper})
            for (Op op : {Op::no_trans, Op::trans, Op::conj_trans})
                for (Diag diag : {Diag::non_unit, Diag::unit})
                    for (int routine = 0; routine < 3; ++routine)  // trmm, trsm recursive, trsm inversion
                        for (const TriangularConfig* base : {&small, &wide}) {
                            TriangularConfig config = *base;
                            config.trsm_algorithm = routine == 2 ? TrsmAlgorithm::inversion : TrsmAlgorithm::recursive;
                            const int max_size = base == &small ? 23 : 45;
                            SCOPED_TRACE(::testing::Message()
                                         << (side == Side::left ? "left" : "right") << " " << to_string(uplo) << " op "
                                         << int(op) << " " << to_string(diag) << " routine " << routine << " leaf "
                                         << config.leaf_order);
                            Problems<T> p = make_problems<T>(side, 6, max_size, rng);
                            std::vector<T> ours = p.b, ref = p.b;
                            std::vector<const T*> ap;
                            std::vector<T*> bp_ours, bp_ref;
                            for (std::size_t i = 0; i < p.m.size(); ++i) {
                                ap.push_back(p.a.data() + p.a_at[i]);
                                bp_ours.push_back(ours.data() + p.b_at[i]), bp_ref.push_back(ref.data() + p.b_at[i]);
                            }
                            const int batch = int(p.m.size());
                            EmulatedExecutor<T> x(cpu);
                            if (routine == 0) {
                                triangular_algorithm::trmm(side, uplo, op, diag, p.m.data(), p.n.data(), alpha, ap.data(),
                                                           p.lda.data(), bp_ours.data(), p.ldb.data(), p.max_m, p.max_n,
                                                           batch, config, x);
                                trmm_vbatched_max_nocheck(side, uplo, op, diag, p.m.data(), p.n.data(), alpha, ap.data(),
                                                          p.lda.data(), bp_ref.data(), p.ldb.data(), p.max_m, p.max_n,
                                                          batch, cpu);
                            } else {
                                triangular_algorithm::trsm(side, uplo, op, diag, p.m.data(), p.n.data(), alpha, ap.data(),
                                                           p.lda.data(), bp_ours.data(), p.ldb.data(), p.max_m, p.max_n,
                                                           batch, config, x);
                                trsm_vbatched_max_nocheck(side, uplo, op, diag, p.m.data(), p.n.data(), alpha, ap.data(),
                                                          p.lda.data(), bp_ref.data(), p.ldb.data(), p.max_m, p.max_n,
                                                          batch, cpu);
                            }
                            if (::testing::Test::HasFatalFailure()) return;
                            EXPECT_LE(relative_difference(ours, ref), 30.0 * max_size * double(unit_roundoff<T>()))
                                << x.launches << " kernels, " << x.gemms << " GEMMs";
                            // ld padding (row m of each column of B) untouched
                            int padding = 0;
                            for (int i = 0; i < batch; ++i)
                                for (int c = 0; c < p.n[i]; ++c) {
                                    const std::size_t e = p.b_at[i] + std::size_t(c) * p.ldb[i] + p.m[i];
                                    if (std::memcmp(&ours[e], &p.b[e], sizeof(T)) != 0) ++padding;
                                }
                            EXPECT_EQ(padding, 0) << "ld padding of B written";
                        }
}

TYPED_TEST(TriangularEmulation, AlphaZeroWritesZerosWithoutReadingA) {
    using T = TypeParam;
    std::mt19937_64 rng(fresh_seed());
    Context cpu(Backend::cpu);
    Problems<T> p = make_problems<T>(Side::left, 5, 40, rng);
    std::fill(p.a.begin(), p.a.end(), poison_value<T>());
    std::vector<const T*> ap;
    std::vector<T*> bp;
    for (std::size_t i = 0; i < p.m.size(); ++i) ap.push_back(p.a.data() + p.a_at[i]), bp.push_back(p.b.data() + p.b_at[i]);
    EmulatedExecutor<T> x(cpu);
    triangular_algorithm::trsm(Side::left, Uplo::upper, Op::trans, Diag::non_unit, p.m.data(), p.n.data(), T(0), ap.data(),
                               p.lda.data(), bp.data(), p.ldb.data(), p.max_m, p.max_n, 5, TriangularConfig{}, x);
    for (int i = 0; i < 5; ++i)
        for (int c = 0; c < p.n[i]; ++c)
            for (int r = 0; r < p.m[i]; ++r) EXPECT_EQ(p.b[p.b_at[i] + std::size_t(c) * p.ldb[i] + r], T(0));
}

// potrf: the panel kernel, the leaf TRSM and the GEMM on one triangle agree with LAPACK's factor and
// info (a negative pivot placed past the first panels), both triangles, two panel widths.
TYPED_TEST(TriangularEmulation, PotrfMatchesTheReference) {
    using T = TypeParam;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    std::mt19937_64 rng(seed);
    Context cpu(Backend::cpu);
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
        for (int panel : {5, 32}) {
            SCOPED_TRACE(::testing::Message() << to_string(uplo) << " panel " << panel);
            std::vector<int> n{40, 0, 1, 17, 33, 12, 70};
            std::vector<int> lda;
            std::vector<std::size_t> at;
            std::size_t size = 0;
            for (int order : n) lda.push_back(order + 2), at.push_back(size), size += std::size_t(order + 2) * order;
            std::vector<T> a(size, poison_value<T>());
            for (std::size_t i = 0; i < n.size(); ++i) {
                const std::vector<T> one = generate_spd_batch<T>(n[i], 1, 100, rng());
                for (int c = 0; c < n[i]; ++c)
                    for (int r = 0; r < n[i]; ++r) a[at[i] + std::size_t(c) * lda[i] + r] = one[std::size_t(c) * n[i] + r];
            }
            a[at[4] + std::size_t(20) * lda[4] + 20] = T(-1);  // matrix 4 fails at 21
            std::vector<T> ours = a, ref = a;
            std::vector<T*> po, pr;
            for (std::size_t i = 0; i < n.size(); ++i) po.push_back(ours.data() + at[i]), pr.push_back(ref.data() + at[i]);
            std::vector<int> info_ours(n.size(), -7), info_ref(n.size(), -7);
            TriangularConfig config;
            config.potrf_panel = panel;
            EmulatedExecutor<T> x(cpu);
            triangular_algorithm::potrf(uplo, n.data(), po.data(), lda.data(), 70, int(n.size()), info_ours.data(), true,
                                        config, x);
            potrf_vbatched_max_nocheck(uplo, n.data(), pr.data(), lda.data(), 70, int(n.size()), info_ref.data(), cpu);
            EXPECT_EQ(info_ours, info_ref);
            EXPECT_EQ(info_ours[4], 21);
            // Compare the factors of the matrices that succeeded (a failed one stops at a point that
            // depends on the blocking).
            for (std::size_t i = 0; i < n.size(); ++i) {
                if (info_ref[i] != 0) continue;
                std::vector<T> fo(ours.begin() + at[i], ours.begin() + at[i] + std::size_t(lda[i]) * n[i]);
                std::vector<T> fr(ref.begin() + at[i], ref.begin() + at[i] + std::size_t(lda[i]) * n[i]);
                EXPECT_LE(relative_difference(fo, fr), 30.0 * std::max(n[i], 1) * double(unit_roundoff<T>()) * 100)
                    << "matrix " << i;
                int other = 0;
                for (int c = 0; c < n[i]; ++c)
                    for (int r = 0; r < lda[i]; ++r) {
                        const bool factor_part = r < n[i] && (uplo == Uplo::lower ? r >= c : r <= c);
                        if (!factor_part && std::memcmp(&fo[std::size_t(c) * lda[i] + r], &a[at[i] + std::size_t(c) * lda[i] + r], sizeof(T)))
                            ++other;
                    }
                EXPECT_EQ(other, 0) << "matrix " << i << ": elements outside the factor's triangle written";
            }
        }
}

}  // namespace
}  // namespace batchsolve::test
