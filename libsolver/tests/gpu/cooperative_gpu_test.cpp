// The cooperative potrs, potrf and posv kernels on the GPU through the public expert entry points
// potrs_batched(uplo, a, b, config, ctx), potrf_batched(uplo, a, info, config, ctx) and
// posv_batched(uplo, a, b, info, config, ctx) with
// config.warps_per_matrix set, in the interleaved and chunked layouts, against the CPU backend
// (LAPACKE) within scaled tolerances; potrf and posv batches hold a not-SPD and a NaN matrix at random
// lanes (posv: their B untouched, their neighbours bit for bit as without them).
// Skips visibly without a GPU.
#include <gtest/gtest.h>

#include <array>
#include <complex>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "coop_potrf_check.hpp"
#include "cuda/tuned/interleaved_cholesky.hpp"
#include "codegen/cholesky/cooperative.hpp"

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

    // posv without right-hand sides (packed column-major or interleaved A): the factorisation alone,
    // as potrf with tile nb leaves it (info, A; a not-SPD and a NaN matrix among 70).
    void check_posv_without_rhs(const LayoutSpec& layout, const CholeskyConfig& config, int nb) {
        const int n = 17, count = 70;
        const std::uint64_t seed = fresh_seed();
        BATCHSOLVE_TRACE_SEED(seed);
        const PotrfInput<double> in = potrf_input<double>(Uplo::lower, n, count, seed, true);
        BackendBatch<double> a_dev(gpu(), layout, n, n, count);
        a_dev.upload(in.a);
        BackendInfo info(gpu(), count);
        Buffer<double> b(gpu(), 1);
        const auto b0 = layout.column_major_family() ? BatchView<double>::column_major(b.data(), n, 0, count)
                                                     : BatchView<double>::interleaved(b.data(), n, 0, count);
        ASSERT_NO_THROW(posv_batched<double>(Uplo::lower, a_dev.view(), b0, info.data(), config, gpu()));
        gpu().synchronize();
        check_potrf_output(cpu(), Uplo::lower, n, count, nb, in, a_dev.download(), info.download());
    }

    // One posv call with `config` on the GPU vs LAPACKE potrf + potrs on the CPU (check_posv_output):
    // a not-SPD and a NaN matrix at random lanes; A, B and info poisoned outside what is uploaded (and
    // info entirely) before the call; then the same call without the failures, whose sound lanes must
    // match bit for bit (a lane's result never depends on its neighbours).
    template <class T>
    void check_posv(Uplo uplo, int n, int count, int nrhs, const LayoutSpec& layout, const CholeskyConfig& config) {
        const std::uint64_t seed = fresh_seed();
        BATCHSOLVE_TRACE_SEED(seed);
        SCOPED_TRACE(::testing::Message() << "posv " << precision_letter(precision_v<T>) << " " << to_string(uplo)
                                          << " n " << n << " count " << count << " nrhs " << nrhs << " " << layout.name()
                                          << " config " << to_string(config));
        // posv in two kernels (config.solve_warps_per_matrix): the factorisation is potrf's kernel
        CholeskyConfig factor_config = config;
        factor_config.solve_warps_per_matrix = 0, factor_config.solve_nb = 0;
        tuned::InterleavedKernelSpec spec;
        spec.routine = config.solve_warps_per_matrix != 0 ? tuned::Routine::potrf : tuned::Routine::posv;
        spec.precision = precision_v<T>, spec.uplo = uplo, spec.n = n;
        spec.config = tuned::resolve_interleaved_config(spec.routine, spec.precision, n, factor_config);
        BackendBatch<T> a_dev(gpu(), layout, n, n, count), b_dev(gpu(), layout, n, nrhs, count);
        BackendInfo info(gpu(), count);
        const std::string problem = tuned::interleaved_spec_problem(spec);
        if (!problem.empty()) {
            const std::string field = problem.substr(0, problem.find(':'));
            expect_invalid_argument([&] { posv_batched<T>(uplo, a_dev.view(), b_dev.view(), info.data(), config, gpu()); },
                                    field == "n" ? "a.rows" : "config." + field);
            ++refused_;
            return;
        }
        ++run_;
        const bool failures = count >= 2;
        const PosvInput<T> in = posv_input<T>(uplo, n, count, nrhs, seed, failures);
        a_dev.upload(in.a.a);
        b_dev.upload(in.b);
        ASSERT_NO_THROW(posv_batched<T>(uplo, a_dev.view(), b_dev.view(), info.data(), config, gpu()));
        gpu().synchronize();
        EXPECT_EQ(a_dev.padding_changes(), 0) << "A written outside the matrices";
        EXPECT_EQ(b_dev.padding_changes(), 0) << "B written outside the systems";
        const std::vector<T> factor = a_dev.download(), x = b_dev.download();
        check_posv_output(cpu(), uplo, n, count, nrhs, spec.config.nb, in, factor, info.download(), x);
        if (!failures) return;
        info.poison();
        a_dev.upload(in.sound);
        b_dev.upload(in.b);
        ASSERT_NO_THROW(posv_batched<T>(uplo, a_dev.view(), b_dev.view(), info.data(), config, gpu()));
        gpu().synchronize();
        EXPECT_EQ(neighbour_differences(factor, a_dev.download(), n, n, count, in.a.not_spd, in.a.nan_lane), 0)
            << "the factors of sound matrices depend on their failed neighbours";
        EXPECT_EQ(neighbour_differences(x, b_dev.download(), n, nrhs, count, in.a.not_spd, in.a.nan_lane), 0)
            << "the solutions of sound systems depend on their failed neighbours";
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

// The real-precision sample, the same for the three routines: n = 1..128, both triangles, W = 2, 4,
// 8 in turn, batches 1, 31, 33, 1000, interleaved and chunked (7, 32, 33); the second double case
// with nb = 5 (a narrower last tile for most n) and nrhs_block 2 (potrf ignores it).
// run(T{}, uplo, n, count, nrhs, layout, config), with nrhs[i] right-hand sides in case i.
template <class Run>
void real_sample(const std::array<int, 3>& nrhs, const Run& run) {
    const int warps[] = {2, 4, 8};
    int turn = 0;
    for (int n : {1, 2, 5, 8, 13, 17, 31, 32, 33, 48, 64, 100, 127, 128}) {
        for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
            const int w = warps[turn++ % 3];
            const int count = batches[turn % 4];
            const LayoutSpec layout = turn % 2 ? interleaved_layout() : chunked_layout(turn % 4 == 0 ? 32 : 7);
            run(float{}, uplo, n, count, nrhs[0], layout, coop_config(w, 0, 1));
            run(double{}, uplo, n, count, nrhs[1], layout, coop_config(w, n >= 6 ? 5 : n, 2));
            run(double{}, uplo, n, batches[(turn + 1) % 4], nrhs[2], chunked_layout(33), coop_config(warps[turn % 3], 0, 1));
        }
    }
}

// The complex sample: fewer n; c at 4 warps, z alternating 8 and `z_warps` warps with nrhs_block 2.
template <class Run>
void complex_sample(int z_warps, const std::array<int, 2>& nrhs, const Run& run) {
    int turn = 0;
    for (int n : {1, 5, 17, 33, 64, 100}) {
        for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
            ++turn;
            const LayoutSpec layout = turn % 2 ? interleaved_layout() : chunked_layout(7);
            run(std::complex<float>{}, uplo, n, batches[turn % 4], nrhs[0], layout, coop_config(4, 0, 1));
            run(std::complex<double>{}, uplo, n, batches[(turn + 2) % 4], nrhs[1], layout,
                coop_config(turn % 2 ? 8 : z_warps, 0, 2));
        }
    }
}

// The kernels of a sample (`routine` at each case's configuration), compiled ahead: a sample meets
// some 80 kernels.
template <class Sample>
void compile_sample_ahead(const std::string& routine, const Sample& sample) {
    std::vector<CompileJob> jobs;
    sample([&](auto element, Uplo uplo, int n, int count, int nrhs, const LayoutSpec& layout, const CholeskyConfig& config) {
        jobs.push_back(kernel_of<decltype(element)>(routine, uplo, layout, n, count, nrhs, config));
    });
    compile_ahead(jobs);  // the configurations a sample expects refused are met by the check itself
}

TEST_F(CoopGpu, RealPrecisionsMatchTheCpuBackend) {
    const auto sample = [](const auto& run) { real_sample({1, 3, 2}, run); };
    compile_sample_ahead("potrs", sample);
    sample([this](auto element, Uplo uplo, int n, int count, int nrhs, const LayoutSpec& layout,
           const CholeskyConfig& config) {
        this->template check<decltype(element)>(uplo, n, count, nrhs, layout, config);
    });
}

TEST_F(CoopGpu, ComplexPrecisionsMatchTheCpuBackend) {
    const auto sample = [](const auto& run) { complex_sample(4, {2, 3}, run); };
    compile_sample_ahead("potrs", sample);
    sample([this](auto element, Uplo uplo, int n, int count, int nrhs, const LayoutSpec& layout,
           const CholeskyConfig& config) {
        this->template check<decltype(element)>(uplo, n, count, nrhs, layout, config);
    });
}

TEST_F(CoopGpu, PotrfRealPrecisionsMatchTheCpuBackend) {
    const auto sample = [](const auto& run) { real_sample({0, 0, 0}, run); };
    compile_sample_ahead("potrf", sample);
    sample([this](auto element, Uplo uplo, int n, int count, int, const LayoutSpec& layout,
           const CholeskyConfig& config) {
        this->template check_potrf<decltype(element)>(uplo, n, count, layout, config);
    });
}

TEST_F(CoopGpu, PotrfComplexPrecisionsMatchTheCpuBackend) {
    const auto sample = [](const auto& run) { complex_sample(2, {0, 0}, run); };
    compile_sample_ahead("potrf", sample);
    sample([this](auto element, Uplo uplo, int n, int count, int, const LayoutSpec& layout,
           const CholeskyConfig& config) {
        this->template check_potrf<decltype(element)>(uplo, n, count, layout, config);
    });
}

TEST_F(CoopGpu, PosvRealPrecisionsMatchTheCpuBackend) {
    // nrhs 5 in the nrhs_block 2 case: 2 groups of 2 and a partial one
    const auto sample = [](const auto& run) { real_sample({1, 5, 2}, run); };
    compile_sample_ahead("posv", sample);
    sample([this](auto element, Uplo uplo, int n, int count, int nrhs, const LayoutSpec& layout,
           const CholeskyConfig& config) {
        this->template check_posv<decltype(element)>(uplo, n, count, nrhs, layout, config);
    });
}

TEST_F(CoopGpu, PosvComplexPrecisionsMatchTheCpuBackend) {
    const auto sample = [](const auto& run) { complex_sample(4, {2, 3}, run); };
    compile_sample_ahead("posv", sample);
    sample([this](auto element, Uplo uplo, int n, int count, int nrhs, const LayoutSpec& layout,
           const CholeskyConfig& config) {
        this->template check_posv<decltype(element)>(uplo, n, count, nrhs, layout, config);
    });
}

// posv: a batch large enough for many blocks per SM, the grid cap (blocks loop over groups of 32
// systems) and fast math.
TEST_F(CoopGpu, PosvLargeBatchGridCapAndFastMath) {
    check_posv<double>(Uplo::lower, 64, 2053, 1, interleaved_layout(), coop_config(4, 0, 1));  // 2053 = 32 x 64 + 5
    CholeskyConfig capped = coop_config(4, 0, 2);
    capped.grid_blocks_per_sm = 1;  // fewer blocks than groups on any GPU with < 1600 SMs
    check_posv<double>(Uplo::upper, 33, 51200 + 17, 3, chunked_layout(64), capped);
    CholeskyConfig fast = coop_config(8, 0, 1);
    fast.fast_math = true;
    check_posv<float>(Uplo::lower, 48, 1000, 2, interleaved_layout(), fast);
}

// posv in two kernels: a factorisation (cooperative or one-thread left-looking), then the cooperative
// potrs of solve_warps_per_matrix and solve_nb, which skips the failed matrices (check_posv: a not-SPD
// and a NaN matrix get LAPACK's info and keep B bit for bit; the others match the CPU backend).
TEST_F(CoopGpu, PosvInTwoKernelsMatchesTheCpuBackend) {
    auto two_kernels = [](CholeskyConfig factor, int solve_warps, int solve_nb) {
        factor.solve_warps_per_matrix = solve_warps, factor.solve_nb = solve_nb;
        return factor;
    };
    CholeskyConfig one_thread_left;
    one_thread_left.nb = 4, one_thread_left.looking = Looking::left, one_thread_left.threads_per_block = 64;
    check_posv<double>(Uplo::lower, 100, 1000, 1, interleaved_layout(), two_kernels(coop_config(8, 8, 1), 4, 4));
    check_posv<double>(Uplo::upper, 128, 2053, 1, chunked_layout(64), two_kernels(coop_config(2, 8, 1), 4, 0));
    check_posv<float>(Uplo::lower, 64, 2053, 3, chunked_layout(32), two_kernels(coop_config(8, 6, 2), 8, 0));
    check_posv<float>(Uplo::upper, 37, 70, 1, interleaved_layout(), two_kernels(one_thread_left, 2, 5));
    check_posv<std::complex<double>>(Uplo::lower, 33, 70, 2, interleaved_layout(), two_kernels(coop_config(4, 0, 1), 2, 3));
    check_posv<std::complex<float>>(Uplo::upper, 17, 33, 1, chunked_layout(32), two_kernels(coop_config(4, 0, 1), 4, 0));
    check_posv<double>(Uplo::lower, 1, 31, 1, interleaved_layout(), two_kernels(coop_config(2, 0, 1), 2, 0));
    // column-major batches through a converted interleaved workspace (through_interleaved)
    CholeskyConfig through = two_kernels(coop_config(4, 6, 1), 4, 0);
    through.through_interleaved = true;
    check_posv<double>(Uplo::lower, 72, 1000, 2, padded_column_major(), through);
    check_posv<float>(Uplo::upper, 40, 70, 1, pointer_array_layout(), through);
    // ... and without right-hand sides: the factorisation alone, under the two-kernel configuration
    check_posv_without_rhs(packed_column_major(), through, 6);
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
    for (int w : {3, 16})
        expect_invalid_argument([&] { posv_batched<double>(Uplo::lower, am, bv, info.data(), coop_config(w, 0, 1), gpu()); },
                                "config.warps_per_matrix");
    expect_invalid_argument([&] { posv_batched<double>(Uplo::lower, am, bv, info.data(), coop_config(4, 0, 9), gpu()); },
                            "config.nrhs_block");
    // posv with nothing to solve still runs potrf, but under posv's rules (potrf ignores nrhs_block)
    const auto b0 = BatchView<double>::interleaved(b.data(), 8, 0, 40);
    expect_invalid_argument([&] { posv_batched<double>(Uplo::lower, am, b0, info.data(), coop_config(3, 0, 1), gpu()); },
                            "config.warps_per_matrix");
    expect_invalid_argument([&] { posv_batched<double>(Uplo::lower, am, b0, info.data(), coop_config(4, 0, 9), gpu()); },
                            "config.nrhs_block");
    for (int w : {3, 16})
        expect_invalid_argument([&] { potrf_batched<double>(Uplo::lower, am, info.data(), coop_config(w, 0, 1), gpu()); },
                                "config.warps_per_matrix");
    CholeskyConfig unrolled = coop_config(4, 4, 1);
    unrolled.full_unroll = true;
    expect_invalid_argument([&] { potrf_batched<double>(Uplo::lower, am, info.data(), unrolled, gpu()); },
                            "config.full_unroll");
    // posv in two kernels: the solve's fields are named as such; potrf and potrs have no two-kernel form
    CholeskyConfig split = coop_config(4, 0, 1);
    split.solve_warps_per_matrix = 3;
    expect_invalid_argument([&] { posv_batched<double>(Uplo::lower, am, bv, info.data(), split, gpu()); },
                            "config.solve_warps_per_matrix");
    split.solve_warps_per_matrix = 0, split.solve_nb = 4;
    expect_invalid_argument([&] { posv_batched<double>(Uplo::lower, am, bv, info.data(), split, gpu()); },
                            "config.solve_warps_per_matrix");
    split.solve_warps_per_matrix = 4, split.solve_nb = 9;  // > n = 8
    expect_invalid_argument([&] { posv_batched<double>(Uplo::lower, am, bv, info.data(), split, gpu()); },
                            "config.solve_nb");
    split.solve_nb = 0;
    expect_invalid_argument([&] { potrf_batched<double>(Uplo::lower, am, info.data(), split, gpu()); },
                            "config.solve_warps_per_matrix");
    expect_invalid_argument([&] { potrs_batched<double>(Uplo::lower, av, bv, split, gpu()); },
                            "config.solve_warps_per_matrix");
    Buffer<double> cm_a(gpu(), 8 * 8 * 40), cm_b(gpu(), 8 * 40);
    const auto cm_av = BatchView<double>::column_major(cm_a.data(), 8, 8, 40);
    const auto cm_bv = BatchView<double>::column_major(cm_b.data(), 8, 1, 40);
    CholeskyConfig cm_split;
    cm_split.solve_warps_per_matrix = 4;
    expect_invalid_argument([&] { posv_batched<double>(Uplo::lower, cm_av, cm_bv, info.data(), cm_split, gpu()); },
                            "config.solve_warps_per_matrix");
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

// posv without right-hand sides: the cooperative factorisation alone, as potrf leaves it (info, A).
TEST_F(CoopGpu, PosvWithoutRightHandSidesFactors) { check_posv_without_rhs(interleaved_layout(), coop_config(4, 4, 1), 4); }

// Registers, local memory and occupancy of the cooperative posv kernels at n = 64 and 128 (W = 4,
// default tile; informational, the union of both phases).
TEST_F(CoopGpu, ReportsResourcesOfThePosvKernels) {
    std::cout << "[ report   ] " << gpu().device_name() << "\n";
    for (int n : {32, 64, 128}) {
        auto show = [&](const tuned::InterleavedKernelReport& r) {
            std::cout << "[ report   ] " << std::setw(48) << std::left << r.name << " registers " << std::setw(4)
                      << r.registers << " local " << std::setw(4) << r.local_bytes << " blocks/SM " << r.blocks_per_sm
                      << " compile " << std::fixed << std::setprecision(2) << r.compile_seconds << " s\n";
            EXPECT_EQ(r.config.threads_per_block, 128);
            EXPECT_EQ(r.config.looking, Looking::left);
            EXPECT_GT(r.blocks_per_sm, 0);
        };
        show(tuned::prepare_interleaved<float>(tuned::Routine::posv, Uplo::lower, n, 1, 16384, 16384,
                                               coop_config(4, 0, 1), gpu()));
        show(tuned::prepare_interleaved<double>(tuned::Routine::posv, Uplo::lower, n, 1, 16384, 16384,
                                                coop_config(4, 0, 1), gpu()));
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
