// The run-time generated interleaved Cholesky kernels on the GPU, through the expert entry points of
// tuning.hpp, against the CPU reference backend: the boundary orders of 1..128 (gpu_boundary_orders(); every n is
// the CPU emulation suite's; s, d) under the default and two
// other configurations (all looking orders, both unrolling modes, ragged tiles, block sizes), batch
// sizes 1, 31, 33 and 1000 (guards for the threads past count), plain and chunked layouts with narrow
// last chunks, NaN and indefinite members at random positions, outputs poisoned beforehand. Then
// potrs and fused posv, a complex sample, argument errors and a resource report.
// Skips (visibly) without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <random>
#include <thread>
#include <tuple>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/tuning.hpp"
#include "cuda/tuned/interleaved_cholesky.hpp"
#include "codegen/cholesky/interleaved.hpp"
#include "host_checks.hpp"
#include "../test_seed.hpp"

namespace {

using namespace batchsolve;
using batchsolve::cuda_backend::tuned::Routine;
namespace tuned = batchsolve::cuda_backend::tuned;
using jit_tests::from_interleaved;
using jit_tests::in_triangle;
using jit_tests::to_interleaved;

constexpr double tolerance = 30;  // scaled errors (accuracy.hpp) of a backward-stable algorithm
constexpr double condition = 100;

using batchsolve::test::fresh_seed;  // test_seed.hpp: BATCHSOLVE_TEST_SEED replays, printed on failure
#define TRACE_SEED(seed) BATCHSOLVE_TRACE_SEED(seed)

// A layout for the batch: plain interleaved (chunk 0) or chunked with that width.
struct Shape {
    int count;
    int chunk;
};
template <class T>
BatchView<T> view_of(T* data, int rows, int cols, const Shape& s) {
    return s.chunk == 0 ? BatchView<T>::interleaved(data, rows, cols, s.count)
                        : BatchView<T>::chunked(data, rows, cols, s.count, s.chunk);
}
std::string describe(const Shape& s) {
    return "count " + std::to_string(s.count) + (s.chunk ? ", chunked C=" + std::to_string(s.chunk) : ", interleaved");
}

// Batch sizes 1, 31, 33, 1000 in turn (1000 only up to n = 48, to bound the host-side checks; 97
// above: still not a multiple of 32), plain interleaved for even n, chunked with C = 32..512 (narrow
// last chunk) for odd n.
Shape shape_for(int n) {
    static const int counts[] = {1, 31, 33, 1000};
    int count = counts[n % 4];
    if (count == 1000 && n > 48) count = 97;
    static const int chunks[] = {32, 64, 128, 256, 512};
    return Shape{count, n % 2 == 0 ? 0 : chunks[(n / 2) % 5]};
}

// The default configuration (nb = 0) and two others that cycle, over n, through the looking orders,
// full/partial unrolling, a ragged middle-size tile and a small tile, block sizes 64 and 256. Tiles
// stay under ~200 estimated registers: spilling kernels (which the compile test covers) would make
// the driver reserve local memory for every resident thread in a correctness test.
std::vector<CholeskyConfig> potrf_configs(Precision p, int n) {
    std::vector<CholeskyConfig> out = {CholeskyConfig{}};
    const Looking order[] = {Looking::left, Looking::right, Looking::top};
    for (int v = 0; v < 2; ++v) {
        CholeskyConfig c;
        c.looking = order[(n + v) % 3];
        int nb = v == 0 ? (n + 2) / 3 : std::min(n, 1 + n % 4);
        auto fits = [&](int t) {
            CholeskyConfig probe = c;
            probe.nb = t;
            return tuned::estimated_tile_registers(Routine::potrf, p, n, probe) <= 200;
        };
        while (nb > 1 && !fits(nb)) --nb;
        c.nb = nb;
        c.full_unroll = n <= tuned::max_full_unroll_n && (n + v) % 2 == 0 && (n <= 16 || nb <= 8) &&
                        (n + nb - 1) / nb <= tuned::max_full_unroll_tiles;
        c.threads_per_block = v == 0 ? 64 : 256;
        out.push_back(c);
    }
    return out;
}

// Compiles the kernels a test will launch on all host cores first (NVRTC takes ~0.2-10 s per
// kernel; the launches then find them in memory). Failures surface in the test's own calls.
struct Warmup {
    Routine routine;
    Precision precision;
    Uplo uplo;
    int n, nrhs, count, chunk;
    CholeskyConfig config;
};
void warm_up(const std::vector<Warmup>& work, Context& ctx) {
    std::atomic<std::size_t> next{0};
    auto run = [&] {
        for (std::size_t i = next++; i < work.size(); i = next++) {
            const Warmup& w = work[i];
            try {
                switch (w.precision) {
                    case Precision::s: tuned::prepare_interleaved<float>(w.routine, w.uplo, w.n, w.nrhs, w.count, w.chunk, w.config, ctx); break;
                    case Precision::d: tuned::prepare_interleaved<double>(w.routine, w.uplo, w.n, w.nrhs, w.count, w.chunk, w.config, ctx); break;
                    case Precision::c: tuned::prepare_interleaved<std::complex<float>>(w.routine, w.uplo, w.n, w.nrhs, w.count, w.chunk, w.config, ctx); break;
                    case Precision::z: tuned::prepare_interleaved<std::complex<double>>(w.routine, w.uplo, w.n, w.nrhs, w.count, w.chunk, w.config, ctx); break;
                }
            } catch (const std::exception&) {
                // reported by the test's own call of the same configuration
            }
        }
    };
    const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(run);
    for (auto& t : pool) t.join();
}

// potrf's "every order" sweep on the GPU runs at the boundary orders of the kernel classes (first
// orders, tile edges, each side of 32/64/128, n = 100 where the tables change); every order 1..128
// of every configuration ran here before (about 1,000 NVRTC compiles of the 3,200 the GPU suites
// ask for). Each generated kernel's arithmetic at every n stays checked on the CPU by the
// interleaved emulation suite (../codegen/interleaved, in CI).
std::vector<int> gpu_boundary_orders() {
    return {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 32, 33, 48, 63, 64, 65, 96, 100, 127, 128};
}

class InterleavedGpu : public ::testing::Test {
protected:
    void SetUp() override {
        if (!Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
        gpu_ = std::make_unique<Context>(Backend::cuda);
        cpu_ = std::make_unique<Context>(Backend::cpu);
    }
    Context& gpu() { return *gpu_; }
    Context& cpu() { return *cpu_; }

    // CPU reference info of potrf on column-major copies of `a` (packed, both triangles).
    template <class T>
    std::vector<int> reference_info(Uplo uplo, const std::vector<T>& a, int n, int count) {
        Buffer<T> ref(cpu(), a);
        Buffer<int> info(cpu(), static_cast<std::size_t>(count));
        potrf_batched(uplo, BatchView<T>::column_major(ref.data(), n, n, count), info.data(), cpu());
        return info.to_host();
    }

    // Factors `a` with `config` on the GPU and checks info (against `expected` and the CPU
    // reference), the scaled factorisation error of each info-0 matrix, and the other triangle.
    template <class T>
    void potrf_case(Uplo uplo, const std::vector<T>& a, int n, const Shape& shape, const CholeskyConfig& config,
                    const std::vector<int>& expected) {
        SCOPED_TRACE(::testing::Message() << "potrf " << precision_letter(precision_v<T>) << " " << to_string(uplo)
                                          << " n=" << n << ", " << describe(shape) << ", config " << to_string(config));
        const int count = shape.count;
        const std::vector<T> host = to_interleaved(a, view_of<T>(nullptr, n, n, shape), &uplo);
        Buffer<T> dev(gpu(), host);
        Buffer<int> info(gpu(), static_cast<std::size_t>(count));
        info.fill_bytes(0xFF);
        potrf_batched(uplo, view_of<T>(dev.data(), n, n, shape), info.data(), config, gpu());
        const std::vector<T> out = dev.to_host();
        const std::vector<int> got = info.to_host();
        EXPECT_EQ(got, expected);
        EXPECT_EQ(got, reference_info(uplo, a, n, count)) << "GPU and CPU reference disagree on info";
        const BatchView<T> layout = view_of<T>(nullptr, n, n, shape);
        int written_outside = 0;
        for (int k = 0; k < count; ++k)
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i)
                    if (!in_triangle(uplo, i, j))
                        written_outside += !jit_tests::same_bits(out, host, layout.offset(k, i, j));
        EXPECT_EQ(written_outside, 0) << "entries outside the " << to_string(uplo) << " triangle were written";
        const std::vector<T> factor = from_interleaved(out, layout);
        const std::vector<double> errors = factorization_error(uplo, a, factor, n, count);
        int bad = 0;
        for (int k = 0; k < count; ++k)
            if (expected[k] == 0 && !(errors[k] < tolerance) && bad++ < 5)
                ADD_FAILURE() << "matrix " << k << ": scaled ||A - L L^H|| = " << errors[k];
        EXPECT_EQ(bad, 0) << "matrices with a large factorisation error";
    }

    template <class T>
    void potrf_every_n() {
        const std::uint64_t seed = fresh_seed();
        TRACE_SEED(seed);
        const Precision p = precision_v<T>;
        std::vector<Warmup> work;
        for (int n : gpu_boundary_orders()) {
            const Shape s = shape_for(n);
            int v = 0;
            for (const CholeskyConfig& c : potrf_configs(p, n))
                work.push_back({Routine::potrf, p, (n + v++) % 2 ? Uplo::upper : Uplo::lower, n, 0, s.count,
                                s.chunk ? s.chunk : s.count, c});
        }
        warm_up(work, gpu());
        std::mt19937_64 rng(seed);
        for (int n : gpu_boundary_orders()) {
            const Shape shape = shape_for(n);
            std::vector<T> a = generate_spd_batch<T>(n, shape.count, condition, seed + n);
            // Bad members at random positions: a NaN pivot, an indefinite leading minor.
            std::vector<int> expected(shape.count, 0);
            if (shape.count >= 2) {
                const int k1 = static_cast<int>(rng() % shape.count);
                int k2 = static_cast<int>(rng() % shape.count);
                if (k2 == k1) k2 = (k1 + 1) % shape.count;
                const int c1 = static_cast<int>(rng() % n), c2 = static_cast<int>(rng() % n);
                spoil_matrix(a, n, k1, c1, BadMatrix::nan);
                spoil_matrix(a, n, k2, c2, BadMatrix::indefinite);
                expected[k1] = c1 + 1, expected[k2] = c2 + 1;
            }
            int v = 0;
            for (const CholeskyConfig& c : potrf_configs(p, n))
                potrf_case(((n + v++) % 2) ? Uplo::upper : Uplo::lower, a, n, shape, c, expected);
            if (HasFatalFailure()) return;
        }
    }

    // potrs with the CPU reference's factor, and fused posv with two bad members; both against the
    // scaled backward error, posv's info against the CPU reference, a failed member's B untouched.
    template <class T>
    void solves(const std::vector<int>& sizes) {
        const std::uint64_t seed = fresh_seed();
        TRACE_SEED(seed);
        const Precision p = precision_v<T>;
        auto configs = [&](int n) {
            std::vector<CholeskyConfig> cs = {CholeskyConfig{}};
            CholeskyConfig c;
            c.nb = std::max(1, std::min(n, 3 + n % 5));
            c.looking = n % 3 == 0 ? Looking::left : n % 3 == 1 ? Looking::right : Looking::top;
            c.full_unroll = n <= 16;
            c.nrhs_block = 2;
            c.threads_per_block = 64;
            while (c.nb > 1 && tuned::estimated_tile_registers(Routine::posv, p, n, c) > 200) --c.nb;
            cs.push_back(c);
            return cs;
        };
        std::vector<Warmup> work;
        for (int n : sizes)
            for (const CholeskyConfig& c : configs(n))
                for (int nrhs : {1, 3})
                    for (Routine r : {Routine::potrs, Routine::posv}) {
                        const Shape s = Shape{n % 2 ? 33 : 100, n % 2 ? 32 : 0};
                        work.push_back({r, p, n % 2 ? Uplo::upper : Uplo::lower, n, nrhs, s.count, s.chunk ? s.chunk : s.count, c});
                    }
        warm_up(work, gpu());

        for (int n : sizes) {
            const Uplo uplo = n % 2 ? Uplo::upper : Uplo::lower;
            const Shape shape{n % 2 ? 33 : 100, n % 2 ? 32 : 0};
            const int count = shape.count;
            const std::vector<T> a = generate_spd_batch<T>(n, count, condition, seed + n);
            // The reference factor, computed on column-major copies by the CPU backend.
            Buffer<T> ref(cpu(), a);
            Buffer<int> ref_info(cpu(), static_cast<std::size_t>(count));
            potrf_batched(uplo, BatchView<T>::column_major(ref.data(), n, n, count), ref_info.data(), cpu());
            const std::vector<T> factor = ref.to_host();
            for (int nrhs : {1, 3}) {
                const RhsWithSolution<T> rhs = generate_rhs_batch(a, n, count, nrhs, seed + 1000 + n);
                for (const CholeskyConfig& c : configs(n)) {
                    SCOPED_TRACE(::testing::Message() << precision_letter(p) << " " << to_string(uplo) << " n=" << n
                                                      << " nrhs=" << nrhs << ", " << describe(shape) << ", config "
                                                      << to_string(c));
                    {  // potrs
                        Buffer<T> da(gpu(), to_interleaved(factor, view_of<T>(nullptr, n, n, shape), &uplo));
                        const std::vector<T> b_host = to_interleaved(rhs.b, view_of<T>(nullptr, n, nrhs, shape), nullptr);
                        Buffer<T> db(gpu(), b_host);
                        potrs_batched<T>(uplo, view_of<T>(da.data(), n, n, shape), view_of<T>(db.data(), n, nrhs, shape),
                                         c, gpu());
                        const std::vector<T> x = from_interleaved(db.to_host(), view_of<T>(nullptr, n, nrhs, shape));
                        const double err = max_or_nan(solve_backward_error(uplo, a, x, rhs.b, n, nrhs, count));
                        EXPECT_LT(err, tolerance) << "potrs: scaled backward error";
                    }
                    {  // posv with two bad members
                        std::vector<T> spoiled = a;
                        std::vector<int> expected(count, 0);
                        const int k1 = count / 3, k2 = count - 1, c1 = n / 2, c2 = n - 1;
                        spoil_matrix(spoiled, n, k1, c1, BadMatrix::nan);
                        spoil_matrix(spoiled, n, k2, c2, BadMatrix::indefinite);
                        expected[k1] = c1 + 1, expected[k2] = c2 + 1;
                        Buffer<T> da(gpu(), to_interleaved(spoiled, view_of<T>(nullptr, n, n, shape), &uplo));
                        const std::vector<T> b_host = to_interleaved(rhs.b, view_of<T>(nullptr, n, nrhs, shape), nullptr);
                        Buffer<T> db(gpu(), b_host);
                        Buffer<int> info(gpu(), static_cast<std::size_t>(count));
                        info.fill_bytes(0xFF);
                        posv_batched<T>(uplo, view_of<T>(da.data(), n, n, shape), view_of<T>(db.data(), n, nrhs, shape),
                                        info.data(), c, gpu());
                        const std::vector<int> got = info.to_host();
                        EXPECT_EQ(got, expected);
                        // CPU reference posv on column-major copies: the same info.
                        Buffer<T> ca(cpu(), spoiled);
                        Buffer<T> cb(cpu(), rhs.b);
                        Buffer<int> cinfo(cpu(), static_cast<std::size_t>(count));
                        posv_batched<T>(uplo, BatchView<T>::column_major(ca.data(), n, n, count),
                                        BatchView<T>::column_major(cb.data(), n, nrhs, count), cinfo.data(), cpu());
                        EXPECT_EQ(got, cinfo.to_host()) << "GPU and CPU reference disagree on info";
                        const std::vector<T> b_out = db.to_host();
                        const BatchView<T> bl = view_of<T>(nullptr, n, nrhs, shape);
                        for (int k : {k1, k2})
                            for (int col = 0; col < nrhs; ++col)
                                for (int i = 0; i < n; ++i)
                                    ASSERT_TRUE(jit_tests::same_bits(b_out, b_host, bl.offset(k, i, col)))
                                        << "B of failed matrix " << k << " was written";
                        const std::vector<T> x = from_interleaved(b_out, bl);
                        const std::vector<double> errs = solve_backward_error(uplo, a, x, rhs.b, n, nrhs, count);
                        for (int k = 0; k < count; ++k) {
                            if (expected[k] != 0) continue;
                            EXPECT_LT(errs[k], tolerance) << "posv: system " << k;
                        }
                    }
                    if (HasFatalFailure()) return;
                }
            }
        }
    }

private:
    std::unique_ptr<Context> gpu_, cpu_;
};

TEST_F(InterleavedGpu, PotrfBoundaryOrdersSingle) { potrf_every_n<float>(); }
TEST_F(InterleavedGpu, PotrfBoundaryOrdersDouble) { potrf_every_n<double>(); }

const std::vector<int> solve_sizes = {1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 24, 31, 32, 33, 40, 48, 63, 64, 65, 96, 100, 127, 128};
TEST_F(InterleavedGpu, PotrsAndPosvSingle) { solves<float>(solve_sizes); }
TEST_F(InterleavedGpu, PotrsAndPosvDouble) { solves<double>(solve_sizes); }
TEST_F(InterleavedGpu, PotrsAndPosvComplexSingle) { solves<std::complex<float>>({1, 5, 16, 33, 64}); }
TEST_F(InterleavedGpu, PotrsAndPosvComplexDouble) { solves<std::complex<double>>({1, 6, 17, 32, 100}); }

TEST_F(InterleavedGpu, PotrfComplexSample) {
    const std::uint64_t seed = fresh_seed();
    TRACE_SEED(seed);
    for (int n : {1, 5, 16, 33, 64}) {
        const Shape shape = shape_for(n);
        std::vector<int> expected(shape.count, 0);
        const auto zc = generate_spd_batch<std::complex<double>>(n, shape.count, condition, seed + n);
        const auto cc = generate_spd_batch<std::complex<float>>(n, shape.count, condition, seed + n);
        for (const CholeskyConfig& c : potrf_configs(Precision::z, n)) potrf_case(Uplo::upper, zc, n, shape, c, expected);
        for (const CholeskyConfig& c : potrf_configs(Precision::c, n)) potrf_case(Uplo::lower, cc, n, shape, c, expected);
    }
}

// fast_math (rsqrt, approximate division) and a register cap still give backward-stable factors.
TEST_F(InterleavedGpu, FastMathAndRegisterCap) {
    const std::uint64_t seed = fresh_seed();
    TRACE_SEED(seed);
    for (int n : {7, 24, 64}) {
        const Shape shape{333, 64};
        const auto a = generate_spd_batch<float>(n, shape.count, condition, seed + n);
        const auto d = generate_spd_batch<double>(n, shape.count, condition, seed + n);
        CholeskyConfig c;
        c.nb = std::min(n, 8), c.looking = Looking::top, c.fast_math = true;
        potrf_case(Uplo::lower, a, n, shape, c, std::vector<int>(shape.count, 0));
        potrf_case(Uplo::upper, d, n, shape, c, std::vector<int>(shape.count, 0));
        c.fast_math = false, c.nb = std::min(n, 6), c.max_registers = 128, c.threads_per_block = 256;
        potrf_case(Uplo::lower, d, n, shape, c, std::vector<int>(shape.count, 0));
    }
}

TEST_F(InterleavedGpu, EmptyAndDegenerateBatches) {
    // n = 0: info set to 0 for every matrix; count = 0: nothing happens.
    Buffer<int> info(gpu(), 5);
    info.fill_bytes(0xFF);
    Buffer<double> none(gpu(), 1);
    potrf_batched(Uplo::lower, BatchView<double>::interleaved(none.data(), 0, 0, 5), info.data(), CholeskyConfig{}, gpu());
    EXPECT_EQ(info.to_host(), std::vector<int>(5, 0));
    EXPECT_NO_THROW(potrf_batched(Uplo::lower, BatchView<double>::interleaved(none.data(), 4, 4, 0), info.data(),
                                  CholeskyConfig{}, gpu()));
    // nrhs = 0: posv still factors and sets info.
    const auto a = generate_spd_batch<double>(4, 5, condition, fresh_seed());
    const Uplo lower = Uplo::lower;
    Buffer<double> da(gpu(), to_interleaved(a, BatchView<double>::interleaved(nullptr, 4, 4, 5), &lower));
    info.fill_bytes(0xFF);
    posv_batched<double>(Uplo::lower, BatchView<double>::interleaved(da.data(), 4, 4, 5),
                         BatchView<double>::interleaved(none.data(), 4, 0, 5), info.data(), CholeskyConfig{}, gpu());
    EXPECT_EQ(info.to_host(), std::vector<int>(5, 0));
}

TEST_F(InterleavedGpu, ConfigurationErrorsNameTheField) {
    Buffer<float> a(gpu(), 8 * 8 * 40);
    Buffer<int> info(gpu(), 40);
    auto expect_field = [&](const CholeskyConfig& c, const BatchView<float>& v, const std::string& field) {
        try {
            potrf_batched(Uplo::lower, v, info.data(), c, gpu());
            ADD_FAILURE() << "config " << to_string(c) << " accepted; expected an error naming " << field;
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.argument(), field) << e.what();
        }
    };
    const auto plain = BatchView<float>::interleaved(a.data(), 8, 8, 40);
    const auto chunked = BatchView<float>::chunked(a.data(), 8, 8, 40, 32);
    CholeskyConfig c;
    c.nb = 9;
    expect_field(c, plain, "config.nb");
    c = CholeskyConfig{};
    c.chunk_size = 64;
    expect_field(c, chunked, "config.chunk_size");
    c = CholeskyConfig{};
    c.threads_per_block = 48;
    expect_field(c, plain, "config.threads_per_block");
    c = CholeskyConfig{};
    c.warps_per_matrix = 3;  // the cooperative kernels take 2, 4 or 8 warps per 32 matrices
    Buffer<float> b(gpu(), 8 * 40);
    try {
        posv_batched(Uplo::lower, plain, BatchView<float>::interleaved(b.data(), 8, 1, 40), info.data(), c, gpu());
        ADD_FAILURE() << "posv accepted warps_per_matrix = 3";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.argument(), "config.warps_per_matrix") << e.what();
    }
    c = CholeskyConfig{};
    c.nb = 8, c.full_unroll = true;
    c.chunk_size = 32;
    EXPECT_NO_THROW(potrf_batched(Uplo::lower, chunked, info.data(), c, gpu())) << "chunk_size equal to the view's";
}

// Registers, local memory and occupancy of the default kernels (informational; no spills expected).
TEST_F(InterleavedGpu, DefaultKernelsUseNoLocalMemory) {
    std::cout << "[ report   ] " << gpu().device_name() << "\n";
    for (int n : {2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128}) {
        for (Precision p : {Precision::s, Precision::d}) {
            const tuned::InterleavedKernelReport r =
                p == Precision::s ? tuned::prepare_interleaved<float>(Routine::potrf, Uplo::lower, n, 0, 16384, 16384, {}, gpu())
                                  : tuned::prepare_interleaved<double>(Routine::potrf, Uplo::lower, n, 0, 16384, 16384, {}, gpu());
            std::cout << "[ report   ] " << std::setw(52) << std::left << r.name << " registers " << std::setw(4)
                      << r.registers << " local " << std::setw(5) << r.local_bytes << " blocks/SM " << r.blocks_per_sm
                      << " compile " << std::fixed << std::setprecision(2) << r.compile_seconds << " s"
                      << (r.from_disk_cache ? " (disk cache)" : "") << "\n";
            EXPECT_EQ(r.local_bytes, 0) << r.name << " spills";
            EXPECT_GT(r.blocks_per_sm, 0) << r.name;
        }
    }
}

}  // namespace
