// No GPU needed: every sampled cooperative potrs, potrf and posv variant compiles through NVRTC to an sm_90 CUBIN
// (ptxas registers and spills reported per variant), and the configuration checks accept what the
// kernel can run and name the field of what it cannot.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "coop_specs.hpp"
#include "cuda/jit/jit.hpp"

namespace batchsolve::test::coop {
namespace {

namespace tuned = codegen::cholesky;
namespace jit = cuda_backend::jit;

constexpr int arch = 90;  // H100/H200, what the project builds for

struct Compiled {
    std::string name, error;
    jit::PtxasStats stats;
    double seconds = 0;
};

// NVRTC is thread-safe per program; CI has 2 cores.
std::vector<Compiled> compile_all(const std::vector<InterleavedKernelSpec>& specs) {
    std::vector<Compiled> out(specs.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i = next++; i < specs.size(); i = next++) {
            Compiled& c = out[i];
            try {
                jit::KernelSource k = tuned::generate_interleaved_kernel(specs[i]);
                c.name = k.kernel_name;
                k.options.push_back("--ptxas-options=-v");
                std::string log;
                const auto t0 = std::chrono::steady_clock::now();
                const std::string cubin = jit::compile_to_cubin(k, arch, &log);
                c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                c.stats = jit::parse_ptxas_log(log, k.kernel_name);
                if (cubin.size() < 4 || cubin.compare(0, 4, "\x7f" "ELF") != 0) c.error = "the CUBIN is not an ELF image";
            } catch (const std::exception& e) {
                c.error = e.what();
            }
        }
    };
    std::vector<std::thread> pool;
    const int threads = std::thread::hardware_concurrency() >= 2 ? 2 : 1;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    return out;
}

// One line per kernel for the log: registers, spills and compile time.
void report(const Compiled& r) {
    std::cout << "[ report   ] " << r.name << ": " << r.stats.registers << " registers, " << r.stats.spill_store_bytes
              << " bytes spilled, " << std::fixed << std::setprecision(2) << r.seconds << " s\n";
}

// potrf and posv resolve a cooperative configuration alike: 32 W threads, left-looking, potrf's
// default tile. Returns the resolved configuration for the routine's own checks.
CholeskyConfig expect_resolved_like_coop_potrf(Routine routine) {
    CholeskyConfig c;
    c.warps_per_matrix = 8, c.threads_per_block = 32, c.looking = Looking::top, c.nb = 0, c.nrhs_block = 0;
    const CholeskyConfig rc = tuned::resolve_interleaved_config(routine, Precision::d, 100, c);
    EXPECT_EQ(rc.threads_per_block, 256);
    EXPECT_EQ(rc.looking, Looking::left);
    EXPECT_EQ(rc.nb, tuned::default_coop_potrf_nb(Precision::d, 100, 8));
    return rc;
}

TEST(CoopCompile, EverySampledVariantCompilesForSm90) {
    const auto specs = sample_specs();
    ASSERT_GE(specs.size(), 30u) << "the sample lost its variants (spec checks too strict?)";
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = compile_all(specs);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double slowest = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const Compiled& c = results[i];
        EXPECT_TRUE(c.error.empty()) << tuned::interleaved_kernel_name(specs[i]) << ": " << c.error;
        EXPECT_GT(c.stats.registers, 0) << c.name << ": no register count in the ptxas log";
        slowest = std::max(slowest, c.seconds);
        std::cout << "[ compiled ] " << std::setw(6) << std::fixed << std::setprecision(2) << c.seconds << " s  registers "
                  << std::setw(3) << c.stats.registers << " spill " << std::setw(3) << c.stats.spill_store_bytes
                  << " (estimate " << std::setw(3) << tuned::estimated_coop_registers(specs[i]) << ", cap from "
                  << tuned::coop_min_blocks(specs[i]) << " blocks/SM)  " << c.name << "\n";
    }
    std::cout << "[ report   ] " << results.size() << " variants in " << std::fixed << std::setprecision(1) << wall
              << " s wall, slowest " << slowest << " s\n";
}

// The kernel the brief sizes: W = 4, n = 128, d. Its registers must stay at the cap (128) with at
// most a few bytes of spill (ptxas keeps one or two loop-invariant words on the stack).
TEST(CoopCompile, FourWarpsAtN128StayWithin128Registers) {
    for (Precision p : {Precision::s, Precision::d}) {
        const InterleavedKernelSpec spec = make_spec(p, Uplo::lower, 128, 8, 4, 1);
        const auto r = compile_all({spec}).front();
        ASSERT_TRUE(r.error.empty()) << r.error;
        report(r);
        EXPECT_LE(r.stats.registers, tuned::coop_register_cap);
        EXPECT_LE(r.stats.spill_store_bytes, 16) << "more than a couple of spilled words";
    }
}

// The default potrf tiles at n = 64 and 128, W = 4 (s, d): within coop_register_cap and without spills
// (coop_potrf_register_overhead is calibrated so); the report names the registers per variant.
TEST(CoopCompile, PotrfDefaultsAtN64AndN128StayWithinTheCapWithoutSpills) {
    std::vector<InterleavedKernelSpec> specs;
    for (int n : {64, 128})
        for (Precision p : {Precision::s, Precision::d}) specs.push_back(make_potrf_spec(p, Uplo::lower, n, 0, 4));
    const auto results = compile_all(specs);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const Compiled& r = results[i];
        ASSERT_TRUE(r.error.empty()) << r.error;
        report(r);
        EXPECT_LE(r.stats.registers, tuned::coop_register_cap) << r.name;
        EXPECT_EQ(r.stats.spill_store_bytes, 0) << r.name;
    }
}

TEST(CoopSpec, AcceptsWhatItCanRunAndNamesTheFieldOfWhatItCannot) {
    auto problem = [](InterleavedKernelSpec s) { return tuned::interleaved_spec_problem(s); };
    auto field_of = [&](const InterleavedKernelSpec& s) {
        const std::string p = problem(s);
        return p.substr(0, p.find(':'));
    };
    EXPECT_EQ(problem(make_spec(Precision::d, Uplo::lower, 128, 8, 4, 1)), "");
    EXPECT_EQ(problem(make_spec(Precision::z, Uplo::upper, 1, 1, 8, 8)), "");
    // resolution: threads_per_block is 32 W whatever was asked, nb 0 takes the cooperative default
    CholeskyConfig asked;
    asked.warps_per_matrix = 2, asked.threads_per_block = 512, asked.nb = 0;
    const CholeskyConfig r = tuned::resolve_interleaved_config(Routine::potrs, Precision::d, 100, asked);
    EXPECT_EQ(r.threads_per_block, 64);
    EXPECT_EQ(r.nb, tuned::default_coop_nb(100, 2));
    EXPECT_GE(r.nb, 1);
    // refused: W not in {2, 4, 8}
    for (int w : {1, 3, 16, -2}) {
        InterleavedKernelSpec s = make_spec(Precision::d, Uplo::lower, 32, 4, 2, 1);
        s.config.warps_per_matrix = w;
        s.config.threads_per_block = 32 * std::max(w, 1);
        EXPECT_EQ(field_of(s), "warps_per_matrix") << "W = " << w;
    }
    // posv: resolved like potrf (left-looking, 32 W threads, the potrf default tile for both phases);
    // the rules of both phases apply, and a bad field is named
    {
        EXPECT_EQ(problem(make_posv_spec(Precision::d, Uplo::lower, 128, 0, 4, 1)), "");
        EXPECT_EQ(problem(make_posv_spec(Precision::z, Uplo::upper, 1, 0, 8, 8)), "");
        EXPECT_EQ(expect_resolved_like_coop_potrf(Routine::posv).nrhs_block, 1);
        for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z})
            for (int n : {1, 7, 48, 128})
                for (int w : {2, 4, 8}) {
                    // the default tile is potrf's; the solve phase then needs what potrs needs with it (z,
                    // n = 128, W = 2 keeps 64 rows of z per thread, which potrs refuses at any tile)
                    const InterleavedKernelSpec posv = make_posv_spec(p, Uplo::lower, n, 0, w, 1);
                    const InterleavedKernelSpec solve = make_spec(p, Uplo::lower, n, posv.config.nb, w, 1);
                    if (problem(solve).empty()) EXPECT_EQ(problem(posv), "") << n << " " << w;
                    else EXPECT_EQ(field_of(posv), "nb") << n << " " << w;
                    EXPECT_EQ(posv.config.nb, tuned::default_coop_potrf_nb(p, n, w));
                }
        InterleavedKernelSpec s = make_posv_spec(Precision::d, Uplo::lower, 32, 4, 4, 1);
        s.config.warps_per_matrix = 3;
        s.config.threads_per_block = 96;
        EXPECT_EQ(field_of(s), "warps_per_matrix");
        s = make_posv_spec(Precision::d, Uplo::lower, 32, 4, 4, 1);
        s.config.looking = Looking::top;
        EXPECT_EQ(field_of(s), "looking");
        s = make_posv_spec(Precision::d, Uplo::lower, 32, 4, 4, 1);
        s.config.threads_per_block = 64;
        EXPECT_EQ(field_of(s), "threads_per_block");
        EXPECT_EQ(field_of(make_posv_spec(Precision::d, Uplo::lower, 32, 4, 4, 9)), "nrhs_block");
        EXPECT_EQ(field_of(make_posv_spec(Precision::d, Uplo::lower, 32, 33, 4, 1)), "nb");
        EXPECT_EQ(field_of(make_posv_spec(Precision::z, Uplo::lower, 128, 8, 4, 1)), "nb");  // potrf phase: 320 registers
        EXPECT_EQ(field_of(make_posv_spec(Precision::z, Uplo::lower, 128, 5, 2, 1)), "nb");  // solve phase: 65 rows of z
        // z, nb = 8, nrhs_block = 8: the solve's buffers (64 KiB) are the larger, past the 48 KiB
        EXPECT_EQ(field_of(make_posv_spec(Precision::z, Uplo::lower, 64, 8, 8, 8)), "nrhs_block");
        s = make_posv_spec(Precision::d, Uplo::lower, 32, 4, 4, 1);
        s.config.full_unroll = true;
        EXPECT_EQ(field_of(s), "full_unroll");
        s = make_posv_spec(Precision::d, Uplo::lower, 32, 4, 4, 1);
        s.config.grid_blocks_per_sm = tuned::coop_max_grid_blocks_per_sm + 1;
        EXPECT_EQ(field_of(s), "grid_blocks_per_sm");
        try {
            tuned::generate_interleaved_kernel(make_posv_spec(Precision::d, Uplo::lower, 32, 4, 4, 9));
            ADD_FAILURE() << "nrhs_block = 9 generated";
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.argument(), "config.nrhs_block") << e.what();
        }
    }
    // potrf: resolution makes it left-looking with 32 W threads; other orders, unrolling, W = 3 and
    // hopeless tiles are refused by name; nrhs_block is not its business
    {
        EXPECT_EQ(problem(make_potrf_spec(Precision::d, Uplo::lower, 128, 0, 4)), "");
        EXPECT_EQ(problem(make_potrf_spec(Precision::z, Uplo::upper, 1, 0, 8)), "");
        EXPECT_GE(expect_resolved_like_coop_potrf(Routine::potrf).nb, 1);
        for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z})
            for (int n : {1, 7, 48, 128})
                for (int w : {2, 4, 8}) {
                    const int nb = tuned::default_coop_potrf_nb(p, n, w);
                    EXPECT_TRUE(nb >= 1 && nb <= std::min(n, tuned::coop_potrf_max_default_nb)) << n << " " << w << ": " << nb;
                    EXPECT_EQ(problem(make_potrf_spec(p, Uplo::lower, n, 0, w)), "") << n << " " << w;
                }
        InterleavedKernelSpec s = make_potrf_spec(Precision::d, Uplo::lower, 32, 4, 4);
        s.config.looking = Looking::top;
        EXPECT_EQ(field_of(s), "looking");
        s = make_potrf_spec(Precision::d, Uplo::lower, 32, 4, 4);
        s.config.full_unroll = true;
        EXPECT_EQ(field_of(s), "full_unroll");
        s = make_potrf_spec(Precision::d, Uplo::lower, 32, 4, 4);
        s.config.nrhs_block = 0;
        EXPECT_EQ(problem(s), "");
        s = make_potrf_spec(Precision::d, Uplo::lower, 32, 4, 4);
        s.config.warps_per_matrix = 3;
        s.config.threads_per_block = 96;
        EXPECT_EQ(field_of(s), "warps_per_matrix");
        EXPECT_EQ(field_of(make_potrf_spec(Precision::z, Uplo::lower, 128, 8, 4)), "nb");  // 320 registers of tiles
        EXPECT_EQ(field_of(make_potrf_spec(Precision::d, Uplo::lower, 32, 33, 4)), "nb");
        const jit::KernelSource k = tuned::generate_interleaved_kernel(make_potrf_spec(Precision::z, Uplo::upper, 33, 4, 2, true, true));
        EXPECT_EQ(k.kernel_name, "potrf_interleaved_coop_z_upper_n33_nb4_w2_fast_i64");
        EXPECT_NE(std::find(k.options.begin(), k.options.end(), "--use_fast_math"), k.options.end());
        // T = 9 tile columns, one barrier per column but the last: one __syncthreads site in a loop,
        // and one closing each group of 32 matrices
        std::size_t sites = 0;
        for (std::size_t at = k.source.find("__syncthreads()"); at != std::string::npos; at = k.source.find("__syncthreads()", at + 1))
            ++sites;
        EXPECT_EQ(sites, 2u);
        const auto shape = tuned::coop_launch_shape(make_potrf_spec(Precision::z, Uplo::upper, 33, 4, 2), 1000, 7, 132);
        EXPECT_EQ(shape.grid_x, 32u);
        EXPECT_EQ(shape.grid_y, 1u);
        EXPECT_EQ(shape.block_x, 64u);
        EXPECT_EQ(shape.shared_bytes, 2u * 10 * 32 * 16 + 2 * 32 * 4);  // L_KK (10 elements of z) + flags
    }
    InterleavedKernelSpec s = make_spec(Precision::d, Uplo::lower, 32, 4, 4, 1);
    s.config.threads_per_block = 64;
    EXPECT_EQ(field_of(s), "threads_per_block");
    s = make_spec(Precision::d, Uplo::lower, 32, 4, 4, 1);
    s.config.full_unroll = true;
    EXPECT_EQ(field_of(s), "full_unroll");
    s = make_spec(Precision::d, Uplo::lower, 32, 33, 4, 1);
    EXPECT_EQ(field_of(s), "nb");
    s = make_spec(Precision::d, Uplo::lower, 32, 4, 4, 9);
    EXPECT_EQ(field_of(s), "nrhs_block");
    s = make_spec(Precision::z, Uplo::lower, 128, 16, 8, 8);  // 2 x 16 x 8 x 32 x 16 bytes = 128 KiB of shared memory
    EXPECT_EQ(field_of(s), "nrhs_block");
    s = make_spec(Precision::z, Uplo::lower, 128, 8, 2, 1);  // 64 rows of z per thread: too many registers
    EXPECT_EQ(field_of(s), "nb");
    s = make_spec(Precision::d, Uplo::lower, 257, 8, 4, 1);
    EXPECT_EQ(field_of(s), "n");
    for (int g : {-1, tuned::coop_max_grid_blocks_per_sm + 1}) {
        s = make_spec(Precision::d, Uplo::lower, 32, 4, 4, 1);
        s.config.grid_blocks_per_sm = g;
        EXPECT_EQ(field_of(s), "grid_blocks_per_sm") << g;
    }
    try {
        s = make_spec(Precision::d, Uplo::lower, 32, 4, 3, 1);
        tuned::generate_interleaved_kernel(s);
        ADD_FAILURE() << "W = 3 generated";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.argument(), "config.warps_per_matrix") << e.what();
    }
}

TEST(CoopGenerator, NamesSharedMemoryAndTextAreConsistent) {
    const InterleavedKernelSpec s = make_spec(Precision::c, Uplo::upper, 33, 4, 8, 3, true);
    const jit::KernelSource k = tuned::generate_interleaved_kernel(s);
    EXPECT_EQ(k.kernel_name, "potrs_interleaved_coop_c_upper_n33_nb4_w8_r3_i64");
    EXPECT_EQ(k.kernel_name, tuned::interleaved_kernel_name(s));
    EXPECT_NE(k.source.find(k.kernel_name + "("), std::string::npos);
    EXPECT_NE(k.source.find("typedef long long idx_t"), std::string::npos);
    EXPECT_EQ(k.source, tuned::generate_interleaved_kernel(s).source) << "generation is not deterministic";
    const auto shape = tuned::coop_launch_shape(s, 1000, 7, 132);
    EXPECT_EQ(shape.grid_x, 32u);              // ceil(1000 / 32)
    EXPECT_EQ(shape.grid_y, 3u);               // ceil(7 / 3) groups of right-hand sides
    EXPECT_EQ(shape.block_x, 256u);            // 8 warps
    EXPECT_EQ(shape.shared_bytes, 2u * 4 * 3 * 32 * 8);  // 2 buffers x nb x nrhs_block x 32 systems x sizeof(c)
    // one barrier per step, 2T - 2 steps with T = 9 tile rows: the text has 3 __syncthreads sites,
    // and one more closing each group of 32 systems
    std::size_t sites = 0;
    for (std::size_t at = k.source.find("__syncthreads()"); at != std::string::npos; at = k.source.find("__syncthreads()", at + 1))
        ++sites;
    EXPECT_EQ(sites, 4u);
    // grid_blocks_per_sm caps the grid at that many blocks per multiprocessor (the kernel is the same)
    InterleavedKernelSpec capped = s;
    capped.config.grid_blocks_per_sm = 2;
    EXPECT_EQ(tuned::coop_launch_shape(capped, 100000, 7, 132).grid_x, 264u);  // 2 x 132 < 3125 groups
    EXPECT_EQ(tuned::coop_launch_shape(capped, 1000, 7, 132).grid_x, 32u);     // fewer groups than that
    EXPECT_EQ(tuned::generate_interleaved_kernel(capped).source, k.source);
}

// The fused posv kernel: name, launch shape (grid.y 1 whatever nrhs), shared memory (the larger phase's
// buffers, the first group's rows of B when the forward substitution is folded, the flags), the kernel
// arguments of the one-thread posv kernel, and its barriers.
TEST(CoopGenerator, PosvNamesSharedMemoryAndTextAreConsistent) {
    const InterleavedKernelSpec s = make_posv_spec(Precision::d, Uplo::lower, 64, 6, 4, 1);
    const jit::KernelSource k = tuned::generate_interleaved_kernel(s);
    EXPECT_EQ(k.kernel_name, "posv_interleaved_coop_d_lower_n64_nb6_w4_r1");
    EXPECT_EQ(k.kernel_name, tuned::interleaved_kernel_name(s));
    EXPECT_TRUE(tuned::is_cooperative(s));
    EXPECT_NE(k.source.find(k.kernel_name + "(T* a_batch, T* __restrict__ b_batch, int nrhs, int* __restrict__ info, int count, int chunk)"),
              std::string::npos)
        << "a_batch must not be __restrict__ (the solve reads L written by other warps)";
    EXPECT_EQ(k.source, tuned::generate_interleaved_kernel(s).source) << "generation is not deterministic";
    const auto shape = tuned::coop_launch_shape(s, 1000, 7, 132);
    EXPECT_EQ(shape.grid_x, 32u);
    EXPECT_EQ(shape.grid_y, 1u) << "the factorisation must run once per group of systems";
    EXPECT_EQ(shape.block_x, 128u);
    // potrf: 2 x 21 x 32 doubles (L_KK, nb = 6) > potrs: 2 x 6 x 1 x 32; then the folded rows of B
    // (64 x 1 x 32 doubles); + 2 x 32 int flags
    EXPECT_TRUE(tuned::coop_posv_folds_forward(s));
    EXPECT_EQ(tuned::coop_posv_rhs_offset(s), 2u * 21 * 32 * 8);
    EXPECT_EQ(shape.shared_bytes, 2u * 21 * 32 * 8 + 64 * 32 * 8 + 2 * 32 * 4);
    EXPECT_NE(k.source.find("bs_smem + " + std::to_string(2 * 21 * 32 * 8) + ");  // [64][1][32]"), std::string::npos)
        << "the rows of B must lie after both phases' buffers";
    EXPECT_NE(k.source.find("bs_smem + " + std::to_string(2 * 21 * 32 * 8 + 64 * 32 * 8) + ")"), std::string::npos)
        << "the flags must lie after the rows of B";
    // a solve with larger buffers than the factorisation's: nb = 2, nrhs_block = 8 (z); its rows of B
    // (9 x 8 x 32 x 16 bytes) do not fit beside them: not folded
    const InterleavedKernelSpec wide = make_posv_spec(Precision::z, Uplo::upper, 9, 2, 2, 8);
    EXPECT_FALSE(tuned::coop_posv_folds_forward(wide));
    EXPECT_EQ(tuned::coop_shared_bytes(wide), 2u * 2 * 8 * 32 * 16 + 2 * 32 * 4);
    const std::string wide_text = tuned::generate_interleaved_kernel(wide).source;
    EXPECT_NE(wide_text.find("bs_smem + " + std::to_string(2 * 2 * 8 * 32 * 16) + ")"), std::string::npos);
    EXPECT_EQ(wide_text.find("bsh"), std::string::npos);
    EXPECT_NE(wide_text.find("for (int g = 0; g < groups; ++g)"), std::string::npos) << "every group: the potrs solve";
    // T = 11 tiles: potrf's step loop (1 site), the barrier between the phases, the folded group's
    // backward loop (1), the other groups' potrs forward loop, last step and backward loop (3), and the
    // one closing each group of 32 systems
    std::size_t sites = 0;
    for (std::size_t at = k.source.find("__syncthreads()"); at != std::string::npos; at = k.source.find("__syncthreads()", at + 1))
        ++sites;
    EXPECT_EQ(sites, 7u);
    EXPECT_NE(k.source.find("for (int g = 1; g < groups; ++g)"), std::string::npos) << "the groups after the folded one";
    EXPECT_EQ(k.source.find("blockIdx.y"), std::string::npos);
    // the register cap holds the larger of the two phases
    InterleavedKernelSpec f = s, v = s;
    f.routine = Routine::potrf;
    v.routine = Routine::potrs;
    EXPECT_EQ(tuned::coop_min_blocks(s), std::min(tuned::coop_min_blocks(f), tuned::coop_min_blocks(v)));
    EXPECT_EQ(tuned::estimated_coop_registers(s),
              std::max(tuned::estimated_coop_registers(f), tuned::estimated_coop_registers(v)));
    // one tile (n <= nb): no barrier inside either phase, still the one between them
    const std::string one = tuned::generate_interleaved_kernel(make_posv_spec(Precision::s, Uplo::upper, 5, 5, 2, 2)).source;
    sites = 0;
    for (std::size_t at = one.find("__syncthreads()"); at != std::string::npos; at = one.find("__syncthreads()", at + 1)) ++sites;
    EXPECT_EQ(sites, 2u);
}

// The posv kernel at the sizes the brief measured (n = 64, 128, W = 4, default tile, s and d):
// compiles, within the register cap the phases ask for (reported).
TEST(CoopCompile, PosvDefaultsAtN64AndN128) {
    std::vector<InterleavedKernelSpec> specs;
    for (int n : {64, 128})
        for (Precision p : {Precision::s, Precision::d}) specs.push_back(make_posv_spec(p, Uplo::lower, n, 0, 4, 1));
    const auto results = compile_all(specs);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const Compiled& r = results[i];
        ASSERT_TRUE(r.error.empty()) << r.error;
        report(r);
        EXPECT_LE(r.stats.registers, tuned::coop_registers_per_sm / (32 * 4 * tuned::coop_min_blocks(specs[i]))) << r.name;
    }
}

}  // namespace
}  // namespace batchsolve::test::coop
