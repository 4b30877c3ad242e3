// No GPU needed: every sampled variant of the interleaved Cholesky kernels compiles through NVRTC to an
// sm_90 CUBIN (reporting ptxas registers and spills), the defaults do not spill, and the pieces of the
// JIT infrastructure behave: hashing, the checksummed disk cache, option and error handling.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "cuda/jit/jit.hpp"
#include "codegen/cholesky/interleaved.hpp"
#include "batchsolve/tuning.hpp"
#include "variant_samples.hpp"

namespace {

using namespace batchsolve;
using namespace batchsolve::cuda_backend;
namespace tuned = batchsolve::codegen::cholesky;  // the generators
using tuned::InterleavedKernelSpec;
using tuned::Routine;

constexpr int arch = 90;  // H100/H200, the architecture the project builds for

struct Compiled {
    std::string name;
    std::string error;  // empty when it compiled
    jit::PtxasStats stats;
    double seconds = 0;
    std::size_t source_bytes = 0;
};

// BATCHSOLVE_TEST_VERBOSE=1 prints every compiled variant as it finishes.
bool verbose() {
    const char* v = std::getenv("BATCHSOLVE_TEST_VERBOSE");
    return v && *v && std::string(v) != "0";
}
std::mutex& print_mutex() {
    static std::mutex m;
    return m;
}

// Compiles every spec with NVRTC on `threads` threads (NVRTC is thread-safe per program).
std::vector<Compiled> compile_all(const std::vector<InterleavedKernelSpec>& specs, int threads) {
    std::vector<Compiled> out(specs.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i = next++; i < specs.size(); i = next++) {
            Compiled& c = out[i];
            try {
                jit::KernelSource k = tuned::generate_interleaved_kernel(specs[i]);
                c.name = k.kernel_name;
                c.source_bytes = k.source.size();
                k.options.push_back("--ptxas-options=-v");
                std::string log;
                const auto t0 = std::chrono::steady_clock::now();
                const std::string cubin = jit::compile_to_cubin(k, arch, &log);
                c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                c.stats = jit::parse_ptxas_log(log, k.kernel_name);
                if (verbose()) {
                    std::lock_guard<std::mutex> lock(print_mutex());
                    std::cout << "[ compiled ] " << std::setw(7) << std::fixed << std::setprecision(2) << c.seconds
                              << " s  registers " << std::setw(4) << c.stats.registers << " spill "
                              << c.stats.spill_store_bytes << "  " << k.kernel_name << std::endl;
                }
                if (cubin.size() < 4 || cubin.compare(0, 4, "\x7f" "ELF") != 0) c.error = "the CUBIN is not an ELF image";
            } catch (const std::exception& e) {
                c.error = e.what();
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    return out;
}

int worker_count() {
    const unsigned hw = std::thread::hardware_concurrency();
    return hw >= 2 ? 2 : 1;  // CI gives us 2 cores
}

TEST(JitCompile, EverySampledInterleavedVariantCompilesForSm90) {
    const auto specs = jit_tests::sample_specs(jit_tests::Sample::nvrtc);
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = compile_all(specs, worker_count());
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    int failures = 0, spilling = 0;
    double slowest = 0;
    std::string slowest_name;
    std::map<std::string, std::pair<int, int>> by_group;  // "potrf d nb<n" -> (count, max registers)
    for (std::size_t i = 0; i < results.size(); ++i) {
        const Compiled& c = results[i];
        if (!c.error.empty()) {
            ++failures;
            ADD_FAILURE() << "variant " << (c.name.empty() ? std::to_string(i) : c.name) << ": " << c.error;
            continue;
        }
        EXPECT_GT(c.stats.registers, 0) << c.name << ": no register count in the ptxas log";
        if (c.stats.spill_store_bytes > 0) ++spilling;
        if (c.seconds > slowest) slowest = c.seconds, slowest_name = c.name;
        const auto& s = specs[i];
        const std::string group = std::string(batchsolve::to_string(s.routine)) + " " + precision_letter(s.precision) +
                                  (s.config.nb == s.n ? " whole" : " tiles") + (s.config.full_unroll ? " unrolled" : " partial");
        auto& g = by_group[group];
        g.first++, g.second = std::max(g.second, c.stats.registers);
    }
    std::cout << "[ report   ] " << results.size() << " variants compiled in " << std::fixed << std::setprecision(1) << wall
              << " s on " << worker_count() << " threads; slowest " << slowest << " s (" << slowest_name << "); "
              << spilling << " spill (allowed for non-default configs)\n";
    for (const auto& [group, g] : by_group)
        std::cout << "[ report   ]   " << std::setw(28) << std::left << group << " variants " << std::setw(4) << g.first
                  << " max registers " << g.second << "\n";
    RecordProperty("variants", static_cast<int>(results.size()));
    RecordProperty("wall_seconds", std::to_string(wall));
    EXPECT_EQ(failures, 0);
}

// The configurations the library runs without a tuning table must not spill: estimate -> registers.
TEST(JitCompile, DefaultConfigurationsDoNotSpill) {
    std::vector<InterleavedKernelSpec> specs;
    const int ns[] = {1, 2, 3, 4, 5, 8, 12, 13, 16, 17, 18, 19, 24, 32, 33, 48, 64, 100, 128};
    for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z})
        for (int n : ns) {
            if ((p == Precision::c || p == Precision::z) && n % 2 == 0 && n != 16) continue;  // sample complex
            for (Routine r : {Routine::potrf, Routine::potrs, Routine::posv}) {
                if (r != Routine::potrf && n != 8 && n != 17 && n != 64 && n != 128) continue;
                InterleavedKernelSpec s;
                s.routine = r, s.precision = p, s.uplo = n % 2 ? Uplo::upper : Uplo::lower, s.n = n;
                s.config = tuned::default_interleaved_config(r, p, n);
                specs.push_back(s);
            }
        }
    const auto results = compile_all(specs, worker_count());
    for (std::size_t i = 0; i < results.size(); ++i) {
        const Compiled& c = results[i];
        ASSERT_TRUE(c.error.empty()) << c.error;
        EXPECT_EQ(c.stats.spill_store_bytes, 0) << c.name << " (default config " << to_string(specs[i].config)
                                                << ") spills; registers " << c.stats.registers;
        std::cout << "[ report   ] " << std::setw(58) << std::left << c.name << " registers " << std::setw(4)
                  << c.stats.registers << " (estimated tiles "
                  << tuned::estimated_tile_registers(specs[i].routine, specs[i].precision, specs[i].n, specs[i].config)
                  << ") stack " << c.stats.stack_bytes << "\n";
    }
}

TEST(JitCompile, CompileErrorNamesTheKernelAndCarriesTheLog) {
    jit::KernelSource k;
    k.kernel_name = "broken_kernel";
    k.source = "extern \"C\" __global__ void broken_kernel(float* x) { x[0] = undefined_symbol; }\n";
    try {
        jit::compile_to_cubin(k, arch);
        FAIL() << "compiling invalid source did not throw";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("broken_kernel"), std::string::npos) << what;
        EXPECT_NE(what.find("undefined_symbol"), std::string::npos) << what;
    }
}

TEST(JitCompile, OptionsReachNvrtc) {
    jit::KernelSource k;
    k.kernel_name = "scale_kernel";
    k.source = "extern \"C\" __global__ void scale_kernel(float* x) { x[threadIdx.x] = sqrtf(x[threadIdx.x]); }\n";
    k.options = {"--use_fast_math", "--ptxas-options=-v"};
    std::string log;
    EXPECT_FALSE(jit::compile_to_cubin(k, arch, &log).empty());
    EXPECT_NE(log.find("scale_kernel"), std::string::npos) << "ptxas -v output missing: " << log;
    k.options = {"--no-such-option"};
    EXPECT_THROW(jit::compile_to_cubin(k, arch), Error);
}

TEST(JitCompile, ProfiledSourceIsWrittenAndCompiledWithLineInfo) {
    jit::KernelSource k;
    k.kernel_name = "scale_kernel";
    k.source = "extern \"C\" __global__ void scale_kernel(float* x) { x[threadIdx.x] = sqrtf(x[threadIdx.x]); }\n";
    const std::string dir = ::testing::TempDir() + "bs-jit-source-" + std::to_string(::getpid());
    const jit::KernelSource p = jit::profiled(k, dir);
    ASSERT_EQ(p.program_name.substr(0, 1), "/") << "an absolute path, so a profiler finds the file";
    EXPECT_NE(p.program_name.find("bs-jit-source-"), std::string::npos);
    EXPECT_EQ(p.program_name.substr(p.program_name.size() - 16), "/scale_kernel.cu");
    std::ifstream in(p.program_name);
    const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(written, k.source);
    EXPECT_EQ(p.options, std::vector<std::string>{"-lineinfo"});
    const std::string cubin = jit::compile_to_cubin(p, arch);
    EXPECT_NE(cubin.find("scale_kernel.cu"), std::string::npos) << "the line table names the written file";
    EXPECT_EQ(jit::compile_to_cubin(k, arch).find("scale_kernel.cu"), std::string::npos)
        << "without -lineinfo no line table";
    std::filesystem::remove_all(dir);
    try {
        jit::profiled(k, "/proc/batchsolve-no-such-dir");
        FAIL() << "an unwritable directory must throw";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("/proc/batchsolve-no-such-dir/scale_kernel.cu"), std::string::npos) << e.what();
    }
}

TEST(JitUnits, HashIsFnv1a64) {
    EXPECT_EQ(jit::hash_bytes(""), 0xcbf29ce484222325ULL);
    EXPECT_EQ(jit::hash_bytes("a"), 0xaf63dc4c8601ec8cULL);
    EXPECT_NE(jit::hash_bytes("source 1"), jit::hash_bytes("source 2"));
}

TEST(JitUnits, ParsesPtxasLog) {
    const std::string log =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'other' for 'sm_90'\n"
        "ptxas info    : Function properties for other\n"
        "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 12 registers, used 0 barriers\n"
        "ptxas info    : Compiling entry function 'mine' for 'sm_90'\n"
        "ptxas info    : Function properties for mine\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 168 registers, used 0 barriers, 380 bytes cmem[0]\n";
    const jit::PtxasStats s = jit::parse_ptxas_log(log, "mine");
    EXPECT_EQ(s.registers, 168);
    EXPECT_EQ(s.stack_bytes, 0);
    EXPECT_EQ(s.spill_store_bytes, 0);
    EXPECT_EQ(s.spill_load_bytes, 0);
    const jit::PtxasStats o = jit::parse_ptxas_log(log, "other");
    EXPECT_EQ(o.registers, 12);
    EXPECT_EQ(o.spill_store_bytes, 4);
}

class DiskCache : public ::testing::Test {
protected:
    void SetUp() override {
        const std::uint64_t seed = std::random_device{}();
        dir_ = std::filesystem::temp_directory_path() / ("batchsolve-jit-test-" + std::to_string(seed));
        std::filesystem::create_directories(dir_);
        path_ = (dir_ / jit::cache_file_name(key_)).string();
        cubin_ = std::string("\x7f" "ELF", 4) + std::string(1000, 'x') + std::string(1, '\0') + "tail";
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::filesystem::path dir_;
    std::string key_ = "device H100\nsm_90\nsource ...";
    std::string path_, cubin_;
};

TEST_F(DiskCache, RoundTripsAndLeavesNoTemporaryFiles) {
    ASSERT_TRUE(jit::write_cache_file(path_, key_, cubin_));
    std::string back;
    ASSERT_TRUE(jit::read_cache_file(path_, key_, back));
    EXPECT_EQ(back, cubin_);
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
        ++files;
        EXPECT_EQ(e.path().string(), path_) << "left behind: " << e.path();
    }
    EXPECT_EQ(files, 1);
    // Overwriting (a recompiled kernel) replaces the file atomically.
    ASSERT_TRUE(jit::write_cache_file(path_, key_, cubin_ + "v2"));
    ASSERT_TRUE(jit::read_cache_file(path_, key_, back));
    EXPECT_EQ(back, cubin_ + "v2");
}

TEST_F(DiskCache, RejectsCorruptTruncatedForeignAndMissingFiles) {
    std::string back = "unchanged";
    EXPECT_FALSE(jit::read_cache_file(path_, key_, back)) << "missing file";
    ASSERT_TRUE(jit::write_cache_file(path_, key_, cubin_));
    EXPECT_FALSE(jit::read_cache_file(path_, key_ + " ", back)) << "another key under the same name";

    auto rewrite = [&](const std::function<void(std::string&)>& damage) {
        std::ifstream in(path_, std::ios::binary);
        std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        in.close();
        damage(data);
        std::ofstream out(path_, std::ios::binary | std::ios::trunc);
        out << data;
    };
    rewrite([](std::string& d) { d[d.size() - 3] ^= 0x20; });
    EXPECT_FALSE(jit::read_cache_file(path_, key_, back)) << "flipped payload bit";
    ASSERT_TRUE(jit::write_cache_file(path_, key_, cubin_));
    rewrite([](std::string& d) { d.resize(d.size() / 2); });
    EXPECT_FALSE(jit::read_cache_file(path_, key_, back)) << "truncated";
    rewrite([](std::string& d) { d.clear(); });
    EXPECT_FALSE(jit::read_cache_file(path_, key_, back)) << "empty";
    rewrite([](std::string& d) { d = std::string(64, 'z'); });
    EXPECT_FALSE(jit::read_cache_file(path_, key_, back)) << "garbage";
    EXPECT_EQ(back, "unchanged") << "a rejected file must not touch the output";
}

TEST_F(DiskCache, UnwritableDirectoryIsNotAnError) {
    EXPECT_FALSE(jit::write_cache_file("/proc/batchsolve-no-such-dir/x.cubin", key_, cubin_));
}

TEST(JitUnits, CacheDirectoryFollowsTheEnvironment) {
    const char* saved = std::getenv("BATCHSOLVE_CACHE_DIR");
    const std::string saved_value = saved ? saved : "";
    setenv("BATCHSOLVE_CACHE_DIR", "/tmp/bs-cache-test", 1);
    EXPECT_EQ(jit::cache_directory(), "/tmp/bs-cache-test");
    setenv("BATCHSOLVE_CACHE_DIR", "", 1);
    EXPECT_EQ(jit::cache_directory(), "") << "an empty value disables the disk cache";
    unsetenv("BATCHSOLVE_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
    EXPECT_EQ(jit::cache_directory(), "/tmp/xdg/batchsolve");
    unsetenv("XDG_CACHE_HOME");
    if (const char* home = std::getenv("HOME"); home && *home) {
        EXPECT_EQ(jit::cache_directory(), std::string(home) + "/.cache/batchsolve");
    }
    if (saved) setenv("BATCHSOLVE_CACHE_DIR", saved_value.c_str(), 1);
}

// ---- the generator's contract ----------------------------------------------------------------------

InterleavedKernelSpec spec_of(int n, int nb, Looking l, bool full) {
    return jit_tests::make_spec(Routine::potrf, Precision::d, Uplo::lower, n, nb, l, full);
}

TEST(InterleavedGenerator, IsDeterministicAndNamesWhatChangesTheCode) {
    const auto a = tuned::generate_interleaved_kernel(spec_of(33, 8, Looking::top, false));
    const auto b = tuned::generate_interleaved_kernel(spec_of(33, 8, Looking::top, false));
    EXPECT_EQ(a.source, b.source);
    EXPECT_EQ(a.kernel_name, b.kernel_name);
    EXPECT_NE(a.source.find("extern \"C\" __global__"), std::string::npos);
    EXPECT_EQ(a.source.find("#include"), std::string::npos) << "generated sources must not include headers";
    std::set<std::string> names;
    for (Looking l : {Looking::left, Looking::right, Looking::top})
        for (bool full : {false, true})
            for (int nb : {3, 4, 8}) names.insert(tuned::generate_interleaved_kernel(spec_of(24, nb, l, full)).kernel_name);
    EXPECT_EQ(names.size(), 18u);
    InterleavedKernelSpec fast = spec_of(24, 4, Looking::left, false);
    fast.config.fast_math = true;
    const auto f = tuned::generate_interleaved_kernel(fast);
    EXPECT_NE(f.kernel_name, tuned::generate_interleaved_kernel(spec_of(24, 4, Looking::left, false)).kernel_name);
    EXPECT_NE(std::find(f.options.begin(), f.options.end(), "--use_fast_math"), f.options.end());
    EXPECT_NE(f.source.find("rsqrt"), std::string::npos);
}

TEST(InterleavedGenerator, RefusesConfigurationsItCannotRun) {
    auto problem = [](InterleavedKernelSpec s) { return tuned::interleaved_spec_problem(s); };
    EXPECT_EQ(problem(spec_of(33, 8, Looking::top, false)), "");
    EXPECT_EQ(problem(spec_of(33, 34, Looking::top, false)).rfind("nb:", 0), 0u);
    EXPECT_EQ(problem(spec_of(33, 0, Looking::top, false)).rfind("nb:", 0), 0u);
    EXPECT_EQ(problem(spec_of(33, 4, Looking::top, true)).rfind("full_unroll:", 0), 0u);
    EXPECT_EQ(problem(spec_of(128, 32, Looking::top, false)).rfind("nb:", 0), 0u) << "hopeless register tiles";
    InterleavedKernelSpec s = spec_of(16, 4, Looking::left, false);
    s.config.threads_per_block = 100;
    EXPECT_EQ(problem(s).rfind("threads_per_block:", 0), 0u);
    s = spec_of(16, 4, Looking::left, false);
    s.routine = Routine::posv;  // the cooperative kernels take 2, 4 or 8 warps per 32 matrices
    s.config.warps_per_matrix = 3;
    EXPECT_EQ(problem(s).rfind("warps_per_matrix:", 0), 0u);
    s = spec_of(16, 4, Looking::left, false);
    s.routine = Routine::potrs;
    s.config.nrhs_block = 0;
    EXPECT_EQ(problem(s).rfind("nrhs_block:", 0), 0u);
    for (Routine r : {Routine::potrf, Routine::potrs, Routine::posv}) {  // a kernel is one phase of a two-kernel posv
        s = spec_of(16, 4, Looking::left, false);
        s.routine = r;
        s.config.solve_warps_per_matrix = 4;
        EXPECT_EQ(problem(s).rfind("solve_warps_per_matrix:", 0), 0u) << to_string(r);
        s.config.solve_warps_per_matrix = 0, s.config.solve_nb = 2;
        EXPECT_EQ(problem(s).rfind("solve_warps_per_matrix:", 0), 0u) << to_string(r);
    }
    try {
        tuned::check_interleaved_spec(spec_of(5, 6, Looking::top, false), "potrf_batched");
        FAIL() << "nb > n accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.argument(), "config.nb");
        EXPECT_EQ(e.routine(), "potrf_batched");
    }
}

TEST(InterleavedGenerator, WideIndexOnlyWhenOffsetsOverflow) {
    EXPECT_FALSE(tuned::interleaved_needs_wide_index(128, 0, 100000, 100000));   // 1.6e9 < 2^31
    EXPECT_TRUE(tuned::interleaved_needs_wide_index(128, 0, 200000, 200000));    // 3.3e9
    EXPECT_FALSE(tuned::interleaved_needs_wide_index(128, 0, 10000000, 512));    // chunked: width 512
    EXPECT_TRUE(tuned::interleaved_needs_wide_index(4, 200000, 4000, 4000));     // B: n * nrhs * width
}

TEST(TuningConfig, DescribesItselfAsJson) {
    CholeskyConfig c;
    c.nb = 6, c.looking = Looking::left, c.full_unroll = true, c.threads_per_block = 64;
    const std::string s = to_string(c);
    EXPECT_EQ(s.front(), '{');
    EXPECT_EQ(s.back(), '}');
    EXPECT_NE(s.find("\"nb\":6"), std::string::npos) << s;
    EXPECT_NE(s.find("\"looking\":\"left\""), std::string::npos) << s;
    EXPECT_NE(s.find("\"full_unroll\":true"), std::string::npos) << s;
    EXPECT_EQ(parse_looking("right"), Looking::right);
    EXPECT_THROW(parse_looking("sideways"), InvalidArgument);
    CholeskyConfig d = c;
    EXPECT_TRUE(c == d);
    d.fast_math = true;
    EXPECT_TRUE(c != d);
}

TEST(TuningConfig, DefaultsResolveAndAreValid) {
    for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z})
        for (int n = 1; n <= 256; ++n)
            for (Routine r : {Routine::potrf, Routine::potrs, Routine::posv}) {
                InterleavedKernelSpec s;
                s.routine = r, s.precision = p, s.n = n;
                s.config = tuned::resolve_interleaved_config(r, p, n, CholeskyConfig{});
                ASSERT_EQ(tuned::interleaved_spec_problem(s), "") << "default for n = " << n << ", "
                                                                  << precision_letter(p) << " " << batchsolve::to_string(r);
            }
}

}  // namespace
