// The column-major kernels on the GPU against the CPU reference backend: the boundary sizes of 1..128
// (gpu_boundary_sizes(); every n is the CPU emulation suites'; s and d,
// both triangles, potrf / posv / potrs), batch sizes 1, 31, 33 and 1000 (and 100000 for small n),
// strided batches with ld > n and stride > ld * n, pointer arrays, NaN / indefinite members at random
// positions, nrhs 1, 3 and 17, other thread shapes and complex types at sampled n. Skips without a
// GPU. Kernels are compiled up front on several threads (compile_ahead), so the sweep is not compile-bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/jit/jit.hpp"
#include "scenario.hpp"
#include "test_specs.hpp"

namespace batchsolve::test::column_major {
namespace {

namespace tuned = cuda_backend::tuned;

// ---- running on the GPU --------------------------------------------------------------------------

// Host storage copied to the device, with its view (strided, or a device array of pointers).
template <class T>
struct DeviceOperand {
    Buffer<T> data;
    Buffer<T*> table;
    BatchView<T> view;
    DeviceOperand(Context& ctx, const Storage<T>& s) : data(ctx, s.data) {
        if (s.pointers) {
            std::vector<T*> p(s.count);
            for (int k = 0; k < s.count; ++k) p[k] = data.data() + s.offsets[k];
            table = Buffer<T*>(ctx, p);
            view = BatchView<T>::pointer_array(table.data(), s.rows, s.cols, s.ld, s.count);
        } else {
            view = BatchView<T>::column_major(data.data(), s.rows, s.cols, s.ld, s.stride, s.count);
        }
    }
    void download(Storage<T>& s) const { data.download(s.data.data(), s.data.size()); }
};

template <class T>
RunPotrf<T> gpu_potrf(Context& ctx, Uplo uplo, const CholeskyConfig& config) {
    return [&ctx, uplo, config](Storage<T>& a, std::vector<int>& info) {
        DeviceOperand<T> A(ctx, a);
        Buffer<int> d_info(ctx, a.count);
        d_info.fill_bytes(0xFF);  // poison: -1
        tuned::potrf_column_major<T>(uplo, A.view, d_info.data(), config, ctx);
        ctx.synchronize();
        A.download(a);
        info = d_info.to_host();
    };
}

template <class T>
RunPosv<T> gpu_posv(Context& ctx, Uplo uplo, const CholeskyConfig& config) {
    return [&ctx, uplo, config](Storage<T>& a, Storage<T>& b, std::vector<int>& info) {
        DeviceOperand<T> A(ctx, a), B(ctx, b);
        Buffer<int> d_info(ctx, a.count);
        d_info.fill_bytes(0xFF);
        tuned::posv_column_major<T>(uplo, A.view, B.view, d_info.data(), config, ctx);
        ctx.synchronize();
        A.download(a);
        B.download(b);
        info = d_info.to_host();
    };
}

template <class T>
RunPotrs<T> gpu_potrs(Context& ctx, Uplo uplo, const CholeskyConfig& config) {
    return [&ctx, uplo, config](const Storage<T>& a, Storage<T>& b) {
        DeviceOperand<T> A(ctx, a), B(ctx, b);
        tuned::potrs_column_major<T>(uplo, BatchView<const T>(A.view), B.view, config, ctx);
        ctx.synchronize();
        B.download(b);
        Storage<T> a_after = a;
        A.download(a_after);
        expect_untouched_outside(a, a_after, [](int, int, int) { return false; }, "potrs A (device)");
    };
}

// The public expert entry points with config.through_interleaved: the batch converted into an
// interleaved workspace, the interleaved kernels, and the results converted back.
CholeskyConfig through_interleaved() {
    CholeskyConfig c;  // nb == 0: the interleaved kernels' default for n
    c.through_interleaved = true;
    return c;
}

template <class T>
RunPotrf<T> through_potrf(Context& ctx, Uplo uplo) {
    return [&ctx, uplo](Storage<T>& a, std::vector<int>& info) {
        DeviceOperand<T> A(ctx, a);
        Buffer<int> d_info(ctx, a.count);
        d_info.fill_bytes(0xFF);
        potrf_batched<T>(uplo, A.view, d_info.data(), through_interleaved(), ctx);
        ctx.synchronize();
        A.download(a);
        info = d_info.to_host();
    };
}

template <class T>
RunPosv<T> through_posv(Context& ctx, Uplo uplo) {
    return [&ctx, uplo](Storage<T>& a, Storage<T>& b, std::vector<int>& info) {
        DeviceOperand<T> A(ctx, a), B(ctx, b);
        Buffer<int> d_info(ctx, a.count);
        d_info.fill_bytes(0xFF);
        posv_batched<T>(uplo, A.view, B.view, d_info.data(), through_interleaved(), ctx);
        ctx.synchronize();
        A.download(a);
        B.download(b);
        info = d_info.to_host();
    };
}

template <class T>
RunPotrs<T> through_potrs(Context& ctx, Uplo uplo) {
    return [&ctx, uplo](const Storage<T>& a, Storage<T>& b) {
        DeviceOperand<T> A(ctx, a), B(ctx, b);
        potrs_batched<T>(uplo, BatchView<const T>(A.view), B.view, through_interleaved(), ctx);
        ctx.synchronize();
        B.download(b);
        Storage<T> a_after = a;
        A.download(a_after);
        expect_untouched_outside(a, a_after, [](int, int, int) { return false; }, "potrs A (device)");
    };
}

// Compiles (or loads from the disk cache) every kernel of `specs` ahead of the sweep, on several
// threads; none may fail. Through the launchers' own lookup (prepare_column_major: the configuration
// resolved as a call resolves it, the cache key a call looks up, shared memory opted in on load), so
// that the sweep's calls find each kernel in memory, and a run's kernel manifest lists them. (A kernel
// compiled by its text instead, jit::get_kernel, sits under another key: every call then compiled it
// a second time, one after another, and the boundary-size tests spent 100 s of their shard in NVRTC.)
void precompile(const std::vector<ColumnMajorSpec>& specs) {
    std::vector<CompileJob> jobs;
    for (const ColumnMajorSpec& spec : specs)
        jobs.push_back([spec](Context& ctx) {
            (void)tuned::prepare_column_major(spec.routine, spec.precision, spec.uplo, spec.n, spec.nrhs, spec.config, ctx);
        });
    for (const std::string& e : compile_ahead(jobs)) ADD_FAILURE() << e;
}

class ColumnMajorGpu : public ::testing::Test {
protected:
    void SetUp() override {
        if (!Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
        ctx_ = std::make_unique<Context>(Backend::cuda);
    }
    Context& ctx() { return *ctx_; }

private:
    std::unique_ptr<Context> ctx_;
};

// The every-n sweeps use the blocked loops (NVRTC compiles them in about a second); the default,
// fully unrolled kernels are covered at the sampled sizes.
CholeskyConfig blocked(ColumnMajorRoutine r, Precision p, int n, int nrhs) {
    CholeskyConfig c = tuned::default_column_major_config(r, p, n, nrhs);
    c.full_unroll = false;
    c.nb = p == Precision::s ? 8 : 4;  // nb != 0 keeps full_unroll as given
    c.nrhs_block = 2;
    return c;
}

// The "every n" sweeps on the GPU run at the boundary sizes of the kernel classes only: the first
// sizes, each side of a warp (31/32/33), of two warps (63/64/65) and of the register limit (127/128),
// n = 3k, 3k+1, 3k+2 (the staged panels of 8/12/16 end full and partial). Every n of 1..128 of every
// routine, precision, uplo and nrhs ran here before (about 2,000 NVRTC compiles, 0.1-2.5 s each: 4
// shards of 150 s did not finish). Every generated kernel's arithmetic at every n is checked on the
// CPU by the column-major emulation suite (../codegen/column_major, in CI), so the GPU keeps what
// only the GPU shows (launch shapes, shared memory, the warp boundaries) at one size per class.
std::vector<int> gpu_boundary_sizes() {
    std::vector<int> sizes;
    for (int n : {1, 2, 3, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128})
        if (n <= tuned::column_major_max_n) sizes.push_back(n);
    return sizes;
}

Uplo uplo_for(int n, int salt) { return (n + salt) % 2 == 0 ? Uplo::lower : Uplo::upper; }

std::uint64_t seed_for(std::uint64_t base, int a, int b = 0, int c = 0) {
    return base ^ (std::uint64_t(a) * 0x9E3779B97F4A7C15ull) ^ (std::uint64_t(b) << 40) ^ (std::uint64_t(c) << 52);
}

template <class T>
void potrf_every_n(Context& ctx, std::uint64_t seed) {
    const Precision p = precision_v<T>;
    std::vector<ColumnMajorSpec> specs;
    for (int n : gpu_boundary_sizes())
        for (Uplo u : {Uplo::lower, Uplo::upper})
            specs.push_back(tuned::column_major_spec(ColumnMajorRoutine::potrf, p, u, n, 0,
                                                     blocked(ColumnMajorRoutine::potrf, p, n, 0)));
    precompile(specs);
    for (int n : gpu_boundary_sizes()) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const CholeskyConfig c = blocked(ColumnMajorRoutine::potrf, p, n, 0);
        for (Uplo u : {Uplo::lower, Uplo::upper}) {
            SCOPED_TRACE(to_string(u));
            potrf_scenario<T>(u, n, 1, false, seed_for(seed, n, 1, int(u)), gpu_potrf<T>(ctx, u, c));
            potrf_scenario<T>(u, n, 33, false, seed_for(seed, n, 2, int(u)), gpu_potrf<T>(ctx, u, c));
            potrf_scenario<T>(u, n, 31, true, seed_for(seed, n, 3, int(u)), gpu_potrf<T>(ctx, u, c));
            if (::testing::Test::HasFatalFailure()) return;
        }
    }
}

template <class T>
void posv_every_n(Context& ctx, std::uint64_t seed) {
    const Precision p = precision_v<T>;
    std::vector<ColumnMajorSpec> specs;
    for (int n : gpu_boundary_sizes())
        for (int nrhs : {1, 3, 17})
            specs.push_back(tuned::column_major_spec(ColumnMajorRoutine::posv, p, uplo_for(n, nrhs), n, nrhs,
                                                     blocked(ColumnMajorRoutine::posv, p, n, nrhs)));
    precompile(specs);
    for (int n : gpu_boundary_sizes()) {
        SCOPED_TRACE("n = " + std::to_string(n));
        for (int nrhs : {1, 3, 17}) {
            const Uplo u = uplo_for(n, nrhs);
            const CholeskyConfig c = blocked(ColumnMajorRoutine::posv, p, n, nrhs);
            SCOPED_TRACE(std::string(to_string(u)) + ", nrhs = " + std::to_string(nrhs));
            posv_scenario<T>(u, n, 33, nrhs, nrhs == 3, nrhs == 17, seed_for(seed, n, nrhs), gpu_posv<T>(ctx, u, c));
            if (::testing::Test::HasFatalFailure()) return;
        }
    }
}

template <class T>
void potrs_every_n(Context& ctx, std::uint64_t seed) {
    const Precision p = precision_v<T>;
    std::vector<ColumnMajorSpec> specs;
    for (int n : gpu_boundary_sizes())
        for (int nrhs : {1, 3, 17})
            specs.push_back(tuned::column_major_spec(ColumnMajorRoutine::potrs, p, uplo_for(n, nrhs), n, nrhs,
                                                     blocked(ColumnMajorRoutine::potrs, p, n, nrhs)));
    precompile(specs);
    for (int n : gpu_boundary_sizes()) {
        SCOPED_TRACE("n = " + std::to_string(n));
        for (int nrhs : {1, 3, 17}) {
            const Uplo u = uplo_for(n, nrhs);
            const CholeskyConfig c = blocked(ColumnMajorRoutine::potrs, p, n, nrhs);
            SCOPED_TRACE(std::string(to_string(u)) + ", nrhs = " + std::to_string(nrhs));
            potrs_scenario<T>(u, n, 33, nrhs, nrhs == 17, nrhs == 3, seed_for(seed, n, nrhs), gpu_potrs<T>(ctx, u, c));
            if (::testing::Test::HasFatalFailure()) return;
        }
    }
}

// Defaults (what a plain call runs) at the sampled sizes with every batch size of the issue. The
// default kernels are fully unrolled: NVRTC takes 5-25 s for each posv kernel of n >= 31 (measured
// for sm_90 on a build machine's core), and the product of 12 sizes x potrf on both triangles x posv
// and potrs at 3 (triangle, nrhs) pairs was 96 kernels per precision. Each size now runs potrf on one
// triangle and posv and potrs at one (triangle, nrhs) pair each, drawn with the test's seed so that
// every pair (nrhs 1 and 17 on the lower triangle, 3 on the upper) and both triangles of potrf meet
// several sizes; 36 kernels per precision. The other pairs of a size are the same generated kernel
// at another nrhs or triangle, whose arithmetic the emulation suite checks at every n
// (../codegen/column_major), and the boundary-size tests above launch on both triangles.
struct DefaultsCase {
    int n;
    Uplo potrf_uplo;
    std::pair<Uplo, int> posv, potrs;  // (triangle, nrhs)
};
std::vector<DefaultsCase> defaults_cases(std::uint64_t seed) {
    const std::vector<std::pair<Uplo, int>> pairs = {{Uplo::lower, 1}, {Uplo::lower, 17}, {Uplo::upper, 3}};
    std::mt19937_64 rng(seed);
    std::vector<std::pair<Uplo, int>> posv, potrs;
    std::vector<Uplo> potrf;
    const std::vector<int> sizes = sampled_sizes();
    while (posv.size() < sizes.size()) {  // each pair once per round, in a fresh order
        auto round = pairs;
        std::shuffle(round.begin(), round.end(), rng);
        posv.insert(posv.end(), round.begin(), round.end());
        std::shuffle(round.begin(), round.end(), rng);
        potrs.insert(potrs.end(), round.begin(), round.end());
    }
    while (potrf.size() < sizes.size()) {
        std::vector<Uplo> both = {Uplo::lower, Uplo::upper};
        std::shuffle(both.begin(), both.end(), rng);
        potrf.insert(potrf.end(), both.begin(), both.end());
    }
    std::vector<DefaultsCase> out;
    std::string listed;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        out.push_back({sizes[i], potrf[i], posv[i], potrs[i]});
        listed += " n=" + std::to_string(sizes[i]) + " potrf " + to_string(potrf[i]) + ", posv " +
                  to_string(posv[i].first) + "/" + std::to_string(posv[i].second) + ", potrs " +
                  to_string(potrs[i].first) + "/" + std::to_string(potrs[i].second) + ";";
    }
    std::printf("[ sample   ] seed %llu (BATCHSOLVE_TEST_SEED=%llu replays it):%s\n", static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(base_seed()), listed.c_str());
    std::fflush(stdout);
    return out;
}

template <class T>
void defaults_at_sampled_sizes(Context& ctx, std::uint64_t seed) {
    BATCHSOLVE_TRACE_SEED(seed);
    const Precision p = precision_v<T>;
    const std::vector<DefaultsCase> cases = defaults_cases(seed);
    auto config = [p](ColumnMajorRoutine r, int n, int nrhs) { return tuned::default_column_major_config(r, p, n, nrhs); };
    std::vector<ColumnMajorSpec> specs;
    for (const DefaultsCase& d : cases) {
        specs.push_back(tuned::column_major_spec(ColumnMajorRoutine::potrf, p, d.potrf_uplo, d.n, 0,
                                                 config(ColumnMajorRoutine::potrf, d.n, 0)));
        specs.push_back(tuned::column_major_spec(ColumnMajorRoutine::posv, p, d.posv.first, d.n, d.posv.second,
                                                 config(ColumnMajorRoutine::posv, d.n, d.posv.second)));
        specs.push_back(tuned::column_major_spec(ColumnMajorRoutine::potrs, p, d.potrs.first, d.n, d.potrs.second,
                                                 config(ColumnMajorRoutine::potrs, d.n, d.potrs.second)));
    }
    precompile(specs);
    for (const DefaultsCase& d : cases) {
        const int n = d.n;
        SCOPED_TRACE("n = " + std::to_string(n));
        int salt = 0;
        {
            const Uplo u = d.potrf_uplo;
            SCOPED_TRACE(std::string("potrf ") + to_string(u));
            const CholeskyConfig c = config(ColumnMajorRoutine::potrf, n, 0);
            // every batch size for potrf; the large batch once per routine (host-side generation
            // and checks of 1000 matrices of order 128 take seconds)
            for (int count : {1, 31, 33, 1000})
                potrf_scenario<T>(u, n, count, count == 31, seed_for(seed, n, ++salt, int(u)), gpu_potrf<T>(ctx, u, c));
        }
        {
            const auto [u, nrhs] = d.posv;
            SCOPED_TRACE(std::string("posv ") + to_string(u) + ", nrhs = " + std::to_string(nrhs));
            const CholeskyConfig cv = config(ColumnMajorRoutine::posv, n, nrhs);
            posv_scenario<T>(u, n, 33, nrhs, nrhs != 3, nrhs == 3, seed_for(seed, n, ++salt, int(u)), gpu_posv<T>(ctx, u, cv));
            posv_scenario<T>(u, n, 1, nrhs, false, true, seed_for(seed, n, ++salt, int(u)), gpu_posv<T>(ctx, u, cv));
            if (nrhs != 17)
                posv_scenario<T>(u, n, 1000, nrhs, false, false, seed_for(seed, n, ++salt, int(u)), gpu_posv<T>(ctx, u, cv));
        }
        {
            const auto [u, nrhs] = d.potrs;
            SCOPED_TRACE(std::string("potrs ") + to_string(u) + ", nrhs = " + std::to_string(nrhs));
            const CholeskyConfig cs = config(ColumnMajorRoutine::potrs, n, nrhs);
            potrs_scenario<T>(u, n, 31, nrhs, nrhs == 3, nrhs != 3, seed_for(seed, n, ++salt, int(u)), gpu_potrs<T>(ctx, u, cs));
            potrs_scenario<T>(u, n, 1, nrhs, true, false, seed_for(seed, n, ++salt, int(u)), gpu_potrs<T>(ctx, u, cs));
            if (nrhs != 17)
                potrs_scenario<T>(u, n, 1000, nrhs, false, true, seed_for(seed, n, ++salt, int(u)), gpu_potrs<T>(ctx, u, cs));
        }
        if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST_F(ColumnMajorGpu, PotrfBoundarySizesSingle) { potrf_every_n<float>(ctx(), fresh_seed()); }
TEST_F(ColumnMajorGpu, PotrfBoundarySizesDouble) { potrf_every_n<double>(ctx(), fresh_seed()); }
TEST_F(ColumnMajorGpu, PosvBoundarySizesSingle) { posv_every_n<float>(ctx(), fresh_seed()); }
TEST_F(ColumnMajorGpu, PosvBoundarySizesDouble) { posv_every_n<double>(ctx(), fresh_seed()); }
TEST_F(ColumnMajorGpu, PotrsBoundarySizesSingle) { potrs_every_n<float>(ctx(), fresh_seed()); }
TEST_F(ColumnMajorGpu, PotrsBoundarySizesDouble) { potrs_every_n<double>(ctx(), fresh_seed()); }
TEST_F(ColumnMajorGpu, DefaultsAtSampledSizesSingle) { defaults_at_sampled_sizes<float>(ctx(), fresh_seed()); }
TEST_F(ColumnMajorGpu, DefaultsAtSampledSizesDouble) { defaults_at_sampled_sizes<double>(ctx(), fresh_seed()); }

// The sample of DefaultsAtSampledSizes* (no GPU needed): every sampled size once, each (triangle,
// nrhs) pair of posv and of potrs at a third of the sizes, potrf's triangles at half of them.
TEST(ColumnMajorGpuSample, DefaultsCoverEverySizeAndPair) {
    for (int draw = 0; draw < 20; ++draw) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE(::testing::Message() << "seed " << seed);
        const std::vector<DefaultsCase> cases = defaults_cases(seed);
        ASSERT_EQ(cases.size(), sampled_sizes().size());
        std::map<std::pair<Uplo, int>, int> posv, potrs;
        std::map<Uplo, int> potrf;
        for (std::size_t i = 0; i < cases.size(); ++i) {
            EXPECT_EQ(cases[i].n, sampled_sizes()[i]);
            ++posv[cases[i].posv], ++potrs[cases[i].potrs], ++potrf[cases[i].potrf_uplo];
        }
        const int third = int(cases.size()) / 3, half = int(cases.size()) / 2;
        for (const auto& pair : {std::pair<Uplo, int>{Uplo::lower, 1}, {Uplo::lower, 17}, {Uplo::upper, 3}}) {
            EXPECT_EQ(posv[pair], third) << "posv " << to_string(pair.first) << " nrhs " << pair.second;
            EXPECT_EQ(potrs[pair], third) << "potrs " << to_string(pair.first) << " nrhs " << pair.second;
        }
        EXPECT_EQ(potrf[Uplo::lower], half);
        EXPECT_EQ(potrf[Uplo::upper], half);
    }
}

// The emulation test's variants (other thread shapes, complex types) on the real hardware.
TEST_F(ColumnMajorGpu, ShapesAndComplexAtSampledSizes) {
    const auto specs = emulation_specs();
    precompile(specs);
    const std::uint64_t seed = fresh_seed();
    int salt = 0;
    for (const ColumnMajorSpec& s : specs) {
        SCOPED_TRACE(tuned::column_major_kernel_name(s));
        const auto shape = tuned::column_major_shape(s);
        const int count = 2 * std::max(shape.matrices_per_block, shape.segments_per_block) + 1;
        const bool odd = ++salt % 2 == 1;
        const std::uint64_t case_seed = seed_for(seed, salt);
        auto run = [&](auto zero) {
            using T = decltype(zero);
            switch (s.routine) {
                case ColumnMajorRoutine::potrf:
                    potrf_scenario<T>(s.uplo, s.n, count, odd, case_seed, gpu_potrf<T>(ctx(), s.uplo, s.config));
                    break;
                case ColumnMajorRoutine::posv:
                    posv_scenario<T>(s.uplo, s.n, count, s.nrhs, true, odd, case_seed,
                                     gpu_posv<T>(ctx(), s.uplo, s.config));
                    break;
                case ColumnMajorRoutine::potrs:
                    potrs_scenario<T>(s.uplo, s.n, count, s.nrhs, odd, true, case_seed,
                                      gpu_potrs<T>(ctx(), s.uplo, s.config));
                    break;
            }
        };
        switch (s.precision) {
            case Precision::s: run(float{}); break;
            case Precision::d: run(double{}); break;
            case Precision::c: run(std::complex<float>{}); break;
            case Precision::z: run(std::complex<double>{}); break;
        }
        if (::testing::Test::HasFatalFailure()) return;
    }
}

// The staged kernels (matrix in shared memory) at every n, s and d, both triangles alternating: panel
// widths that do and do not divide n (potrs has none), two matrices per block where they fit (33
// matrices: the last block has an empty slot), bad members at random positions; the solves with 1,
// 3 and 6 right-hand sides (fewer, about as many and more than the warps of a matrix) and the
// pointer-array forms of A and B alternating. posv's bad members keep their B; potrs leaves A
// untouched.
// With tensor_cores: the trailing update on the FP64 tensor cores (double precision only), panels of
// 8, 12 and 16 (a last panel of any width, so the last mma of a panel may be partly empty).
void staged_every_n(Context& ctx, ColumnMajorRoutine routine, bool tensor_cores = false) {
    std::vector<ColumnMajorSpec> specs;
    for (int n : gpu_boundary_sizes())
        for (Precision p : {Precision::s, Precision::d}) {
            if (tensor_cores && p != Precision::d) continue;
            const int nb = routine == ColumnMajorRoutine::potrs ? 0
                           : n % 3 == 0                       ? 8
                           : tensor_cores && n % 3 == 2       ? 12
                                                              : 16;
            const int warps = n <= 32 ? 1 : n <= 64 ? 2 : 4;
            const int matrices = n <= 64 ? 2 : 1;
            // the solves' right-hand sides in turn (the k-th case, from 1): 1, 3, 6 (the kernel the call
            // runs is the spec's at that nrhs, so the one compiled ahead)
            const int k = int(specs.size()) + 1;
            const int nrhs = routine == ColumnMajorRoutine::potrf ? 0 : k % 3 == 0 ? 6 : k % 3 == 1 ? 1 : 3;
            ColumnMajorSpec s = staged_spec(p, n % 2 ? Uplo::lower : Uplo::upper, n, nb, warps, matrices, routine, nrhs);
            s.config.tensor_cores = tensor_cores;
            specs.push_back(s);
        }
    precompile(specs);
    const std::uint64_t seed = fresh_seed();
    int salt = 0;
    for (const ColumnMajorSpec& s : specs) {
        SCOPED_TRACE(tuned::column_major_kernel_name(s));
        ++salt;
        const int nrhs = s.nrhs;
        const bool a_pointers = salt % 2 == 0, b_pointers = salt % 4 < 2;
        const std::uint64_t case_seed = seed_for(seed, salt);
        auto run = [&](auto zero) {
            using T = decltype(zero);
            switch (routine) {
                case ColumnMajorRoutine::potrf:
                    potrf_scenario<T>(s.uplo, s.n, 33, a_pointers, case_seed, gpu_potrf<T>(ctx, s.uplo, s.config));
                    break;
                case ColumnMajorRoutine::posv:
                    posv_scenario<T>(s.uplo, s.n, 33, nrhs, a_pointers, b_pointers, case_seed,
                                     gpu_posv<T>(ctx, s.uplo, s.config));
                    break;
                case ColumnMajorRoutine::potrs:
                    potrs_scenario<T>(s.uplo, s.n, 33, nrhs, a_pointers, b_pointers, case_seed,
                                      gpu_potrs<T>(ctx, s.uplo, s.config));
                    break;
            }
        };
        if (s.precision == Precision::s) run(float{});
        else run(double{});
        if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST_F(ColumnMajorGpu, StagedPotrfBoundarySizes) { staged_every_n(ctx(), ColumnMajorRoutine::potrf); }
TEST_F(ColumnMajorGpu, StagedPosvBoundarySizes) { staged_every_n(ctx(), ColumnMajorRoutine::posv); }
TEST_F(ColumnMajorGpu, StagedPotrsBoundarySizes) { staged_every_n(ctx(), ColumnMajorRoutine::potrs); }
TEST_F(ColumnMajorGpu, StagedTensorCorePotrfBoundarySizes) { staged_every_n(ctx(), ColumnMajorRoutine::potrf, true); }
TEST_F(ColumnMajorGpu, StagedTensorCorePosvBoundarySizes) { staged_every_n(ctx(), ColumnMajorRoutine::posv, true); }

// Many small matrices: grids far beyond one wave, every info checked, a sample of the factors.
TEST_F(ColumnMajorGpu, LargeBatches) {
    const std::uint64_t seed = fresh_seed();
    potrf_scenario<float>(Uplo::lower, 8, 100000, false, seed,
                          gpu_potrf<float>(ctx(), Uplo::lower, tuned::default_column_major_config(ColumnMajorRoutine::potrf, Precision::s, 8, 0)));
    potrf_scenario<double>(Uplo::upper, 32, 16384, true, seed + 1,
                           gpu_potrf<double>(ctx(), Uplo::upper, tuned::default_column_major_config(ColumnMajorRoutine::potrf, Precision::d, 32, 0)));
    posv_scenario<float>(Uplo::upper, 16, 100000, 1, false, false, seed + 2,
                         gpu_posv<float>(ctx(), Uplo::upper, tuned::default_column_major_config(ColumnMajorRoutine::posv, Precision::s, 16, 1)));
    potrs_scenario<double>(Uplo::lower, 5, 100000, 3, true, false, seed + 3,
                           gpu_potrs<double>(ctx(), Uplo::lower, tuned::default_column_major_config(ColumnMajorRoutine::potrs, Precision::d, 5, 3)));
    potrf_scenario<double>(Uplo::lower, 100, 16384, false, seed + 4,
                           gpu_potrf<double>(ctx(), Uplo::lower, staged_spec(Precision::d, Uplo::lower, 100, 16, 4, 1).config));
}

// Column-major batches through the interleaved kernels (CholeskyConfig::through_interleaved), at
// sampled n, both triangles, strided and pointer arrays, bad members, all four precisions.
template <class T>
void through_interleaved_at(Context& ctx, std::uint64_t seed, const std::vector<int>& sizes) {
    int salt = 0;
    for (int n : sizes) {
        SCOPED_TRACE("n = " + std::to_string(n));
        for (Uplo u : {Uplo::lower, Uplo::upper}) {
            SCOPED_TRACE(to_string(u));
            potrf_scenario<T>(u, n, 33, true, seed_for(seed, n, ++salt), through_potrf<T>(ctx, u));
            potrf_scenario<T>(u, n, 1000, false, seed_for(seed, n, ++salt), through_potrf<T>(ctx, u));
            posv_scenario<T>(u, n, 31, 3, true, false, seed_for(seed, n, ++salt), through_posv<T>(ctx, u));
            potrs_scenario<T>(u, n, 33, 1, false, true, seed_for(seed, n, ++salt), through_potrs<T>(ctx, u));
            if (::testing::Test::HasFatalFailure()) return;
        }
    }
}

TEST_F(ColumnMajorGpu, ThroughInterleaved) {
    const std::uint64_t seed = fresh_seed();
    through_interleaved_at<float>(ctx(), seed, {1, 7, 33, 64, 100, 128});
    through_interleaved_at<double>(ctx(), seed + 1, {2, 16, 45, 128});
    through_interleaved_at<std::complex<float>>(ctx(), seed + 2, {5, 40});
    through_interleaved_at<std::complex<double>>(ctx(), seed + 3, {3, 33});
    // an interleaved view with the flag is refused, naming the field
    Buffer<float> a(ctx(), 4 * 4 * 2);
    Buffer<int> info(ctx(), 2);
    try {
        potrf_batched<float>(Uplo::lower, BatchView<float>::interleaved(a.data(), 4, 4, 2), info.data(),
                             through_interleaved(), ctx());
        ADD_FAILURE() << "an interleaved view with through_interleaved was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("through_interleaved"), std::string::npos) << e.what();
    }
}

// Degenerate sizes and bad arguments.
TEST_F(ColumnMajorGpu, EdgeCases) {
    const CholeskyConfig c = tuned::default_column_major_config(ColumnMajorRoutine::potrf, Precision::d, 4, 1);
    // n == 0: info set to 0
    Buffer<int> info(ctx(), 5);
    info.fill_bytes(0xFF);
    Buffer<double> a(ctx(), 1);
    tuned::potrf_column_major<double>(Uplo::lower, BatchView<double>::column_major(a.data(), 0, 0, 1, 0, 5), info.data(),
                                      c, ctx());
    EXPECT_EQ(info.to_host(), std::vector<int>(5, 0));
    info.fill_bytes(0xFF);
    tuned::posv_column_major<double>(Uplo::upper, BatchView<double>::column_major(a.data(), 0, 0, 1, 0, 5),
                                     BatchView<double>::column_major(a.data(), 0, 2, 1, 0, 5), info.data(), c, ctx());
    EXPECT_EQ(info.to_host(), std::vector<int>(5, 0));
    // n beyond the launchers' range (n <= 256 since issue 29: 129..256 runs the shared-memory family or
    // cuSOLVER) and interleaved views are refused, not run
    Buffer<double> big(ctx(), 257 * 257);
    EXPECT_THROW(tuned::potrf_column_major<double>(Uplo::lower, BatchView<double>::column_major(big.data(), 257, 257, 1),
                                                   info.data(), c, ctx()),
                 InvalidArgument);
    EXPECT_THROW(tuned::potrf_column_major<double>(Uplo::lower, BatchView<double>::interleaved(big.data(), 4, 4, 2),
                                                   info.data(), c, ctx()),
                 InvalidArgument);
}

}  // namespace
}  // namespace batchsolve::test::column_major
