// The cooperative potrs and potrf kernels on the GPU through the public expert entry points
// potrs_batched(uplo, a, b, config, ctx) and potrf_batched(uplo, a, info, config, ctx) with
// config.warps_per_matrix set, in the interleaved and chunked layouts, against the CPU backend
// (LAPACKE) within scaled tolerances; potrf batches hold a not-SPD and a NaN matrix at random lanes.
// Skips visibly without a GPU.
#include <gtest/gtest.h>

#include <complex>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "coop_potrf_check.hpp"
#include "cuda/tuned/interleaved_cholesky.hpp"
#include "cuda/tuned/interleaved_coop_codegen.hpp"

namespace batchsolve::test::coop {
namespace {

namespace tuned = cuda_backend::tuned;

class CoopGpu : public ::testing::Test {
protected:
    void SetUp() override {
        if (!Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
        gpu_ = std::make_unique<Context>(Backend::cuda);
        cpu_ = std::make_unique<Context>(Backend::cpu);
    }
    Context& gpu() { return *gpu_; }
    Context& cpu() { return *cpu_; }

    // One potrs call with `config` on the GPU vs LAPACKE on the CPU; the factor comes from the CPU
    // (so both solve with the same L) with its other triangle poisoned.
    template <class T>
    void check(Uplo uplo, int n, int count, int nrhs, const LayoutSpec& layout, const CholeskyConfig& config) {
        const std::uint64_t seed = fresh_seed();
        BATCHSOLVE_TRACE_SEED(seed);
        SCOPED_TRACE(::testing::Message() << precision_letter(precision_v<T>) << " " << to_string(uplo) << " n " << n
                                          << " count " << count << " nrhs " << nrhs << " " << layout.name() << " config "
                                          << to_string(config));
        // a configuration the kernel cannot run (too many registers, ...) must be refused by name
        tuned::InterleavedKernelSpec spec;
        spec.routine = tuned::Routine::potrs, spec.precision = precision_v<T>, spec.uplo = uplo, spec.n = n;
        spec.config = tuned::resolve_interleaved_config(spec.routine, spec.precision, n, config);
        const std::string problem = tuned::interleaved_spec_problem(spec);
        if (!problem.empty()) {
            BackendBatch<T> a_dev(gpu(), layout, n, n, count), b_dev(gpu(), layout, n, nrhs, count);
            const std::string field = problem.substr(0, problem.find(':'));
            expect_invalid_argument([&] { potrs_batched<T>(uplo, a_dev.view(), b_dev.view(), config, gpu()); },
                                    field == "n" ? "a.rows" : "config." + field);
            ++refused_;
            return;
        }
        ++run_;
        const std::vector<T> a = test_matrices<T>(n, count, seed);
        const FactorResult<T> f = reference_potrf(cpu(), uplo, a, n, count);
        for (int k = 0; k < count; ++k) ASSERT_EQ(f.info[k], 0);
        const std::vector<T> factor = with_other_triangle_poisoned(f.factor, uplo, n, count);
        const RhsWithSolution<T> rhs = generate_rhs_batch(a, n, count, nrhs, seed + 1);
        const std::vector<T> x_ref = reference_potrs(cpu(), uplo, factor, rhs.b, n, nrhs, count);

        BackendBatch<T> a_dev(gpu(), layout, n, n, count), b_dev(gpu(), layout, n, nrhs, count);
        a_dev.upload(factor);
        b_dev.upload(rhs.b);
        ASSERT_NO_THROW(potrs_batched<T>(uplo, a_dev.view(), b_dev.view(), config, gpu()));
        gpu().synchronize();
        const std::vector<T> x = b_dev.download();
        EXPECT_EQ(bitwise_differences(a_dev.download(), factor), 0) << "the factor was written";
        const double backward = max_or_nan(solve_backward_error(uplo, a, x, rhs.b, n, nrhs, count));
        EXPECT_LT(backward, kAcceptance);
        const double tol = cross_backend_tolerance<T>(n);
        for (int k = 0; k < count; ++k) {
            const double d = relative_difference(x, x_ref, n, nrhs, k, Part::whole);
            if (!(d <= tol)) {
                ADD_FAILURE() << "system " << k << ": ||X - X_cpu|| / ||X_cpu|| = " << d << " > " << tol;
                break;
            }
        }
    }

    // One potrf call with `config` on the GPU vs LAPACKE on the CPU (coop_potrf_check.hpp); info and
    // the storage outside the matrices poisoned before the call.
    template <class T>
    void check_potrf(Uplo uplo, int n, int count, const LayoutSpec& layout, const CholeskyConfig& config) {
        const std::uint64_t seed = fresh_seed();
        BATCHSOLVE_TRACE_SEED(seed);
        SCOPED_TRACE(::testing::Message() << "potrf " << precision_letter(precision_v<T>) << " " << to_string(uplo)
                                          << " n " << n << " count " << count << " " << layout.name() << " config "
                                          << to_string(config));
        tuned::InterleavedKernelSpec spec;
        spec.routine = tuned::Routine::potrf, spec.precision = precision_v<T>, spec.uplo = uplo, spec.n = n;
        spec.config = tuned::resolve_interleaved_config(spec.routine, spec.precision, n, config);
        BackendBatch<T> a_dev(gpu(), layout, n, n, count);
        BackendInfo info(gpu(), count);
        const std::string problem = tuned::interleaved_spec_problem(spec);
        if (!problem.empty()) {
            const std::string field = problem.substr(0, problem.find(':'));
            expect_invalid_argument([&] { potrf_batched<T>(uplo, a_dev.view(), info.data(), config, gpu()); },
                                    field == "n" ? "a.rows" : "config." + field);
            ++refused_;
            return;
        }
        ++run_;
        const PotrfInput<T> in = potrf_input<T>(uplo, n, count, seed, count >= 2);
        a_dev.upload(in.a);
        ASSERT_NO_THROW(potrf_batched<T>(uplo, a_dev.view(), info.data(), config, gpu()));
        gpu().synchronize();
        EXPECT_EQ(a_dev.padding_changes(), 0) << "written outside the matrices";
        check_potrf_output(cpu(), uplo, n, count, spec.config.nb, in, a_dev.download(), info.download());
    }

    void TearDown() override {
        if (run_ + refused_ == 0) return;  // skipped, or a test without solves
        std::cout << "[ report   ] " << run_ << " calls checked, " << refused_ << " configurations refused by name\n";
        EXPECT_GT(run_, 2 * refused_) << "most sampled configurations must run";
    }

private:
    std::unique_ptr<Context> gpu_, cpu_;
    int run_ = 0, refused_ = 0;
};

CholeskyConfig coop_config(int warps, int nb, int nrhs_block) {
    CholeskyConfig c;
    c.warps_per_matrix = warps;
    c.nb = nb;
    c.nrhs_block = nrhs_block;
    return c;
}

const int batches[] = {1, 31, 33, 1000};

TEST_F(CoopGpu, RealPrecisionsMatchTheCpuBackend) {
    const int warps[] = {2, 4, 8};
    int turn = 0;
    for (int n : {1, 2, 5, 8, 13, 17, 31, 32, 33, 48, 64, 100, 127, 128}) {
        for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
            const int w = warps[turn++ % 3];
            const int count = batches[turn % 4];
            const LayoutSpec layout = turn % 2 ? interleaved_layout() : chunked_layout(turn % 4 == 0 ? 32 : 7);
            check<float>(uplo, n, count, 1, layout, coop_config(w, 0, 1));
            check<double>(uplo, n, count, 3, layout, coop_config(w, n >= 6 ? 5 : n, 2));
            check<double>(uplo, n, batches[(turn + 1) % 4], 2, chunked_layout(33), coop_config(warps[turn % 3], 0, 1));
        }
    }
}

TEST_F(CoopGpu, ComplexPrecisionsMatchTheCpuBackend) {
    int turn = 0;
    for (int n : {1, 5, 17, 33, 64, 100}) {
        for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
            ++turn;
            const LayoutSpec layout = turn % 2 ? interleaved_layout() : chunked_layout(7);
            check<std::complex<float>>(uplo, n, batches[turn % 4], 2, layout, coop_config(4, 0, 1));
            check<std::complex<double>>(uplo, n, batches[(turn + 2) % 4], 3, layout, coop_config(turn % 2 ? 8 : 4, 0, 2));
        }
    }
}

TEST_F(CoopGpu, PotrfRealPrecisionsMatchTheCpuBackend) {
    const int warps[] = {2, 4, 8};
    int turn = 0;
    for (int n : {1, 2, 5, 8, 13, 17, 31, 32, 33, 48, 64, 100, 127, 128}) {
        for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
            const int w = warps[turn++ % 3];
            const int count = batches[turn % 4];
            const LayoutSpec layout = turn % 2 ? interleaved_layout() : chunked_layout(turn % 4 == 0 ? 32 : 7);
            check_potrf<float>(uplo, n, count, layout, coop_config(w, 0, 1));
            check_potrf<double>(uplo, n, count, layout, coop_config(w, n >= 6 ? 5 : n, 1));
            check_potrf<double>(uplo, n, batches[(turn + 1) % 4], chunked_layout(33), coop_config(warps[turn % 3], 0, 1));
        }
    }
}

TEST_F(CoopGpu, PotrfComplexPrecisionsMatchTheCpuBackend) {
    int turn = 0;
    for (int n : {1, 5, 17, 33, 64, 100}) {
        for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
            ++turn;
            const LayoutSpec layout = turn % 2 ? interleaved_layout() : chunked_layout(7);
            check_potrf<std::complex<float>>(uplo, n, batches[turn % 4], layout, coop_config(4, 0, 1));
            check_potrf<std::complex<double>>(uplo, n, batches[(turn + 2) % 4], layout, coop_config(turn % 2 ? 8 : 2, 0, 1));
        }
    }
}

// The fast-math variant and a batch large enough for many blocks per SM (the timing-relevant shape).
TEST_F(CoopGpu, PotrfFastMathAndLargeBatch) {
    CholeskyConfig fast = coop_config(4, 0, 1);
    fast.fast_math = true;
    check_potrf<float>(Uplo::lower, 64, 1000, interleaved_layout(), fast);
    check_potrf<double>(Uplo::upper, 128, 2053, chunked_layout(64), coop_config(4, 0, 1));  // 2053 = 32 x 64 + 5
}

TEST_F(CoopGpu, BadConfigurationsNameTheirField) {
    Buffer<double> a(gpu(), 8 * 8 * 40), b(gpu(), 8 * 40);
    const auto av = BatchView<const double>::interleaved(a.data(), 8, 8, 40);
    const auto bv = BatchView<double>::interleaved(b.data(), 8, 1, 40);
    for (int w : {3, 16}) {
        try {
            potrs_batched<double>(Uplo::lower, av, bv, coop_config(w, 0, 1), gpu());
            ADD_FAILURE() << "warps_per_matrix = " << w << " accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.argument(), "config.warps_per_matrix") << e.what();
        }
    }
    Buffer<int> info(gpu(), 40);
    const auto am = BatchView<double>::interleaved(a.data(), 8, 8, 40);
    try {
        posv_batched<double>(Uplo::lower, am, bv, info.data(), coop_config(4, 0, 1), gpu());
        ADD_FAILURE() << "posv accepted warps_per_matrix";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.argument(), "config.warps_per_matrix") << e.what();
    }
    // posv with nothing to solve still runs potrf, but under posv's rules
    const auto b0 = BatchView<double>::interleaved(b.data(), 8, 0, 40);
    expect_invalid_argument([&] { posv_batched<double>(Uplo::lower, am, b0, info.data(), coop_config(4, 0, 1), gpu()); },
                            "config.warps_per_matrix");
    for (int w : {3, 16})
        expect_invalid_argument([&] { potrf_batched<double>(Uplo::lower, am, info.data(), coop_config(w, 0, 1), gpu()); },
                                "config.warps_per_matrix");
    CholeskyConfig unrolled = coop_config(4, 4, 1);
    unrolled.full_unroll = true;
    expect_invalid_argument([&] { potrf_batched<double>(Uplo::lower, am, info.data(), unrolled, gpu()); },
                            "config.full_unroll");
}

// Registers, local memory and occupancy of the cooperative potrf kernels at n = 64 and 128 (the
// default tile for W = 4): within coop_register_cap, no local memory.
TEST_F(CoopGpu, ReportsResourcesOfThePotrfKernels) {
    std::cout << "[ report   ] " << gpu().device_name() << "\n";
    for (int n : {64, 128})
        for (int w : {2, 4, 8}) {
            auto show = [&](const tuned::InterleavedKernelReport& r) {
                std::cout << "[ report   ] " << std::setw(48) << std::left << r.name << " registers " << std::setw(4)
                          << r.registers << " local " << std::setw(4) << r.local_bytes << " blocks/SM " << r.blocks_per_sm
                          << " compile " << std::fixed << std::setprecision(2) << r.compile_seconds << " s\n";
                EXPECT_EQ(r.config.threads_per_block, 32 * w);
                EXPECT_EQ(r.config.looking, Looking::left);
                EXPECT_GT(r.blocks_per_sm, 0);
                if (w == 4) {
                    EXPECT_LE(r.registers, tuned::coop_register_cap) << r.name;
                    EXPECT_EQ(r.local_bytes, 0) << r.name;
                }
            };
            show(tuned::prepare_interleaved<float>(tuned::Routine::potrf, Uplo::lower, n, 0, 16384, 16384,
                                                   coop_config(w, 0, 1), gpu()));
            show(tuned::prepare_interleaved<double>(tuned::Routine::potrf, Uplo::lower, n, 0, 16384, 16384,
                                                    coop_config(w, 0, 1), gpu()));
        }
}

// Registers, local memory and occupancy of the kernel the brief sizes (informational, plus a bound).
TEST_F(CoopGpu, ReportsResourcesOfTheN128Kernels) {
    std::cout << "[ report   ] " << gpu().device_name() << "\n";
    for (int w : {2, 4, 8}) {
        const auto r = tuned::prepare_interleaved<double>(tuned::Routine::potrs, Uplo::lower, 128, 1, 16384, 16384,
                                                          coop_config(w, 8, 1), gpu());
        std::cout << "[ report   ] " << std::setw(48) << std::left << r.name << " registers " << std::setw(4) << r.registers
                  << " local " << std::setw(4) << r.local_bytes << " blocks/SM " << r.blocks_per_sm << " compile "
                  << std::fixed << std::setprecision(2) << r.compile_seconds << " s\n";
        EXPECT_EQ(r.config.threads_per_block, 32 * w);
        EXPECT_GT(r.blocks_per_sm, 0);
        if (w == 4) {
            EXPECT_LE(r.registers, tuned::coop_register_cap);
        }
    }
}

}  // namespace
}  // namespace batchsolve::test::coop
