// The column-major kernel generator without a GPU: every sampled variant compiles with NVRTC (and
// ptxas) for sm_90, defaults exist for every n, kernel names are unique, and bad configurations are
// rejected naming the config field. BATCHSOLVE_LONG_TESTS=1 also compiles the defaults of every n.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "cuda/jit/jit.hpp"
#include "test_specs.hpp"

namespace batchsolve::test::column_major {

namespace jit = ::batchsolve::cuda_backend::jit;

namespace {

using cuda_backend::tuned::column_major_kernel_name;
using cuda_backend::tuned::column_major_max_n;
using cuda_backend::tuned::column_major_shape;
using cuda_backend::tuned::column_major_spec_problem;
using cuda_backend::tuned::default_column_major_config;
using cuda_backend::tuned::generate_column_major_kernel;

constexpr int kArch = 90;  // H100 / H200
const std::vector<ColumnMajorRoutine> kRoutines = {ColumnMajorRoutine::potrf, ColumnMajorRoutine::potrs,
                                                   ColumnMajorRoutine::posv};
const std::vector<Precision> kPrecisions = {Precision::s, Precision::d, Precision::c, Precision::z};

// The NVRTC sample: every sampled n with the default and three other shapes (s and d, both
// triangles, all three routines), complex at two sizes. Kernels of n >= 100 use the blocked loops
// with 2 threads per row (NVRTC needs 10-60 s for a fully unrolled one: those are compiled by the
// long test and by the GPU test); their other shapes run in the emulation test.
std::vector<ColumnMajorSpec> nvrtc_sample() {
    std::vector<ColumnMajorSpec> out;
    auto add = [&](const ColumnMajorSpec& s) {
        if (usable(s)) out.push_back(s);
    };
    const std::vector<Shape> shapes = factor_shapes();
    const Shape blocked_t2{"blocked_t2", 1, 2, 1, 4, false};
    for (int n : sampled_sizes()) {
        if (n >= 100) {
            add(make_spec(ColumnMajorRoutine::potrf, Precision::s, Uplo::lower, n, 0, blocked_t2));
            add(make_spec(ColumnMajorRoutine::potrf, Precision::d, Uplo::upper, n, 0, blocked_t2));
            add(make_spec(ColumnMajorRoutine::posv, Precision::s, Uplo::upper, n, 1, blocked_t2, 1));
        } else {
            add(make_spec(ColumnMajorRoutine::potrf, Precision::s, Uplo::lower, n, 0, shapes[0]));
            add(make_spec(ColumnMajorRoutine::potrf, Precision::d, Uplo::upper, n, 0, shapes[0]));
            add(make_spec(ColumnMajorRoutine::potrf, Precision::s, Uplo::upper, n, 0, shapes[1]));
            add(make_spec(ColumnMajorRoutine::potrf, Precision::d, Uplo::lower, n, 0, shapes[2]));
            add(make_spec(ColumnMajorRoutine::potrf, Precision::d, Uplo::upper, n, 0, shapes[3]));
            add(make_spec(ColumnMajorRoutine::posv, Precision::s, Uplo::upper, n, 1, shapes[0], 1));
            add(make_spec(ColumnMajorRoutine::posv, Precision::d, Uplo::lower, n, 3, shapes[2], 2));
        }
        add(make_spec(ColumnMajorRoutine::potrs, Precision::s, Uplo::lower, n, 1, shapes[0], 1, 128));
        add(make_spec(ColumnMajorRoutine::potrs, Precision::d, Uplo::upper, n, 8, shapes[0], 4, 256));
    }
    for (const ColumnMajorSpec& s : staged_specs()) add(s);  // the staged potrf, every precision
    for (const ColumnMajorSpec& s : staged_tensor_core_specs()) add(s);  // ... its mma.sync update (kArch >= 80)
    {  // whole matrices in shared memory (n <= 256): 9 of the emulated ones (0.3-4 s each): every routine,
       // s, d, z, c, both triangles, the largest n (the emulation test runs them all)
        const auto smem = shared_memory_specs();
        for (std::size_t i : {0, 7, 11, 12, 13, 16, 20, 21, 26}) add(smem[i]);
    }
    {  // the packed rows kernel (registers and spills of the ptxas log): posv s 12, d 32, c 12, potrf s 24
        const auto rows = rows_packed_specs();
        for (std::size_t i : {2, 8, 11, 13}) add(rows[i]);
    }
    for (int n : {5, 32}) {
        for (Precision p : {Precision::c, Precision::z}) {
            add(make_spec(ColumnMajorRoutine::potrf, p, Uplo::upper, n, 0, shapes[0]));
            add(make_spec(ColumnMajorRoutine::posv, p, Uplo::lower, n, 2, shapes[0], 2));
            add(make_spec(ColumnMajorRoutine::potrs, p, Uplo::upper, n, 2, shapes[0], 2, 64));
        }
    }
    return out;
}

// Compiles every spec on all hardware threads; returns the failures (kernel name: message).
std::vector<std::string> compile_all(const std::vector<ColumnMajorSpec>& specs, bool verbose) {
    std::atomic<std::size_t> next{0};
    std::mutex m;
    std::vector<std::string> failures;
    auto worker = [&] {
        for (std::size_t i; (i = next++) < specs.size();) {
            const auto t0 = std::chrono::steady_clock::now();
            std::string name = "?";
            try {
                jit::KernelSource k = generate_column_major_kernel(specs[i]);
                name = k.kernel_name;
                k.options.push_back("--ptxas-options=-v");
                std::string log;
                const std::string cubin = jit::compile_to_cubin(k, kArch, &log);
                if (cubin.empty()) throw Error("empty CUBIN");
                const auto stats = jit::parse_ptxas_log(log, name);
                const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                if (verbose) {
                    std::lock_guard<std::mutex> lock(m);
                    std::cout << "  " << name << ": " << stats.registers << " registers, " << stats.spill_store_bytes
                              << " bytes spilled, " << s << " s\n";
                }
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(m);
                failures.push_back(name + ": " + e.what());
            }
        }
    };
    const unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    return failures;
}

}  // namespace

TEST(ColumnMajorCodegen, DefaultsExistForEveryN) {
    for (ColumnMajorRoutine r : kRoutines)
        for (Precision p : kPrecisions)
            for (Uplo u : {Uplo::lower, Uplo::upper})
                for (int n = 1; n <= column_major_max_n; ++n)
                    for (int nrhs : {1, 17}) {
                        const ColumnMajorSpec s =
                            cuda_backend::tuned::column_major_spec(r, p, u, n, nrhs, default_column_major_config(r, p, n, nrhs));
                        ASSERT_EQ(column_major_spec_problem(s), "")
                            << to_string(r) << " " << precision_letter(p) << " n = " << n;
                        const auto shape = column_major_shape(s);
                        EXPECT_LE(shape.block_threads, 1024);
                        EXPECT_EQ(shape.block_threads % 32, 0);
                        EXPECT_LE(shape.shared_bytes, cuda_backend::tuned::column_major_max_shared_bytes);
                    }
}

TEST(ColumnMajorCodegen, NamesAreUniqueAndTextDeterministic) {
    const auto specs = nvrtc_sample();
    std::set<std::string> names;
    for (const auto& s : specs) {
        const jit::KernelSource a = generate_column_major_kernel(s), b = generate_column_major_kernel(s);
        EXPECT_EQ(a.source, b.source);
        EXPECT_EQ(a.kernel_name, column_major_kernel_name(s));
        EXPECT_NE(a.source.find(a.kernel_name + "("), std::string::npos);
        names.insert(a.kernel_name);
    }
    // the sample has no duplicate specs, so every kernel has its own name
    EXPECT_EQ(names.size(), specs.size());
}

TEST(ColumnMajorCodegen, RejectsBadConfigsNamingTheField) {
    auto problem = [](ColumnMajorRoutine r, int n, auto edit) {
        CholeskyConfig c = default_column_major_config(r, Precision::d, n, 1);
        edit(c);
        return column_major_spec_problem(cuda_backend::tuned::column_major_spec(r, Precision::d, Uplo::lower, n, 1, c));
    };
    auto starts = [](const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; };
    EXPECT_TRUE(starts(problem(ColumnMajorRoutine::potrf, 129, [](CholeskyConfig&) {}), "n:"));
    EXPECT_TRUE(starts(problem(ColumnMajorRoutine::potrf, 8, [](CholeskyConfig& c) { c.rows_per_thread = 9; }),
                       "config.rows_per_thread:"));
    EXPECT_TRUE(starts(problem(ColumnMajorRoutine::potrf, 128, [](CholeskyConfig& c) { c.threads_per_row = 1; }),
                       "config.threads_per_row:"));  // 128 doubles per thread
    EXPECT_TRUE(starts(problem(ColumnMajorRoutine::potrf, 64, [](CholeskyConfig& c) { c.matrices_per_block = 20; }),
                       "config.matrices_per_block:"));
    EXPECT_TRUE(starts(problem(ColumnMajorRoutine::potrf, 64, [](CholeskyConfig& c) { c.warps_per_matrix = 1; }),
                       "config.warps_per_matrix:") ||
                problem(ColumnMajorRoutine::potrf, 64, [](CholeskyConfig& c) { c.warps_per_matrix = 1; }).empty());
    EXPECT_TRUE(starts(problem(ColumnMajorRoutine::potrs, 8, [](CholeskyConfig& c) { c.threads_per_block = 100; }),
                       "config.threads_per_block:"));
    EXPECT_TRUE(starts(problem(ColumnMajorRoutine::potrs, 64, [](CholeskyConfig& c) { c.nb = 9; }),
                       "config.nb:"));  // steps loaded ahead: 1..8
    {  // the steps loaded ahead reach the kernel (and its name); 0 is the precision's default
        auto name = [](Precision p, int nb) {
            CholeskyConfig c = cuda_backend::tuned::default_column_major_config(ColumnMajorRoutine::potrs, p, 64, 1);
            c.nb = nb;
            return cuda_backend::tuned::column_major_kernel_name(
                cuda_backend::tuned::column_major_spec(ColumnMajorRoutine::potrs, p, Uplo::lower, 64, 1, c));
        };
        EXPECT_EQ(name(Precision::d, 4), "potrs_cm_d_lower_n64_l32_nr1_p4_t128");
        EXPECT_EQ(name(Precision::d, 0), "potrs_cm_d_lower_n64_l32_nr1_p1_t128");
        EXPECT_EQ(name(Precision::s, 0), "potrs_cm_s_lower_n64_l32_nr1_p8_t128");
    }
    EXPECT_TRUE(starts(problem(ColumnMajorRoutine::posv, 8, [](CholeskyConfig& c) { c.nrhs_block = 17; }),
                       "config.nrhs_block:"));
    EXPECT_TRUE(starts(problem(ColumnMajorRoutine::potrf, 8, [](CholeskyConfig& c) { c.max_registers = 8; }),
                       "config.max_registers:"));
    // the staged potrf, posv and potrs
    auto staged = [&](ColumnMajorRoutine r, int n, int nb, int warps, int matrices) {
        CholeskyConfig c;
        c.staged = true, c.nb = nb, c.warps_per_matrix = warps, c.matrices_per_block = matrices;
        return cuda_backend::tuned::column_major_spec_problem(
            cuda_backend::tuned::column_major_spec(r, Precision::d, Uplo::lower, n, 1, c));
    };
    EXPECT_EQ(staged(ColumnMajorRoutine::potrf, 128, 16, 4, 1), "");
    EXPECT_EQ(staged(ColumnMajorRoutine::posv, 64, 16, 2, 1), "");
    EXPECT_EQ(staged(ColumnMajorRoutine::potrs, 64, 0, 2, 1), "");  // potrs has no panels: nb is not read
    EXPECT_TRUE(starts(staged(ColumnMajorRoutine::potrs, 64, 0, -1, 1), "config.warps_per_matrix:"));  // 0 selects the fused family
    {
        CholeskyConfig c;
        c.staged = true, c.nb = 16, c.warps_per_matrix = 2;
        const auto spec = cuda_backend::tuned::column_major_spec(ColumnMajorRoutine::potrs, Precision::d, Uplo::lower,
                                                                 64, 1, c);
        EXPECT_TRUE(spec.config.staged);
        EXPECT_EQ(cuda_backend::tuned::column_major_kernel_name(spec), "potrs_cm_d_lower_n64_staged_w2_m1");
    }
    EXPECT_TRUE(starts(staged(ColumnMajorRoutine::potrf, 64, 33, 2, 1), "config.nb:"));
    EXPECT_TRUE(starts(staged(ColumnMajorRoutine::potrf, 64, 0, 2, 1), "config.nb:"));
    EXPECT_TRUE(starts(staged(ColumnMajorRoutine::potrf, 64, 16, -1, 1), "config.warps_per_matrix:"));
    EXPECT_TRUE(starts(staged(ColumnMajorRoutine::potrf, 64, 16, 8, 5), "config.matrices_per_block:"));  // 1280 threads
    EXPECT_TRUE(starts(staged(ColumnMajorRoutine::potrf, 128, 16, 4, 4), "config.matrices_per_block:"));  // 264 KB
    // the trailing update on the FP64 tensor cores: staged potrf and posv in double precision only
    auto tensor_cores = [&](ColumnMajorRoutine r, Precision p, bool staged) {
        CholeskyConfig c = staged ? CholeskyConfig{} : default_column_major_config(r, p, 64, 1);
        if (staged) c.staged = true, c.nb = r == ColumnMajorRoutine::potrs ? 0 : 16, c.warps_per_matrix = 2;
        c.tensor_cores = true;
        return cuda_backend::tuned::column_major_spec_problem(cuda_backend::tuned::column_major_spec(r, p, Uplo::lower, 64, 1, c));
    };
    EXPECT_EQ(tensor_cores(ColumnMajorRoutine::potrf, Precision::d, true), "");
    EXPECT_EQ(tensor_cores(ColumnMajorRoutine::posv, Precision::d, true), "");
    EXPECT_TRUE(starts(tensor_cores(ColumnMajorRoutine::potrf, Precision::s, true), "config.tensor_cores:"));
    EXPECT_TRUE(starts(tensor_cores(ColumnMajorRoutine::posv, Precision::z, true), "config.tensor_cores:"));
    EXPECT_TRUE(starts(tensor_cores(ColumnMajorRoutine::potrs, Precision::d, true), "config.tensor_cores:"));
    EXPECT_TRUE(starts(tensor_cores(ColumnMajorRoutine::potrf, Precision::d, false), "config.tensor_cores:"));
    EXPECT_TRUE(starts(tensor_cores(ColumnMajorRoutine::potrs, Precision::d, false), "config.tensor_cores:"));
    {
        CholeskyConfig c;
        c.staged = true, c.nb = 16, c.warps_per_matrix = 4, c.tensor_cores = true;
        const auto spec = cuda_backend::tuned::column_major_spec(ColumnMajorRoutine::potrf, Precision::d, Uplo::lower,
                                                                 128, 0, c);
        EXPECT_EQ(cuda_backend::tuned::column_major_kernel_name(spec), "potrf_cm_d_lower_n128_staged_nb16_w4_m1_tc");
        EXPECT_NE(generate_column_major_kernel(spec).source.find("mma.sync.aligned.m8n8k4.row.col.f64"), std::string::npos);
    }
    // and the throwing form names the routine and the field
    try {
        CholeskyConfig c = default_column_major_config(ColumnMajorRoutine::potrf, Precision::d, 8, 1);
        c.rows_per_thread = 9;
        column_major_shape(cuda_backend::tuned::column_major_spec(ColumnMajorRoutine::potrf, Precision::d, Uplo::lower,
                                                                  8, 1, c),
                           "potrf_batched");
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.routine(), "potrf_batched");
        EXPECT_EQ(e.argument(), "config.rows_per_thread");
    }
}

TEST(ColumnMajorCodegen, SampledVariantsCompileWithNvrtc) {
    const auto specs = nvrtc_sample();
    std::cout << "compiling " << specs.size() << " kernels for sm_" << kArch << "\n";
    const auto failures = compile_all(specs, true);
    for (const auto& f : failures) ADD_FAILURE() << f;
}

TEST(ColumnMajorCodegen, EveryDefaultCompiles) {
    const char* on = std::getenv("BATCHSOLVE_LONG_TESTS");
    if (!on || std::string(on) != "1") GTEST_SKIP() << "long test: set BATCHSOLVE_LONG_TESTS=1";
    std::vector<ColumnMajorSpec> specs;
    for (ColumnMajorRoutine r : kRoutines)
        for (Precision p : {Precision::s, Precision::d})
            for (Uplo u : {Uplo::lower, Uplo::upper})
                for (int n = 1; n <= column_major_max_n; ++n)
                    specs.push_back(cuda_backend::tuned::column_major_spec(r, p, u, n, 1,
                                                                          default_column_major_config(r, p, n, 1)));
    const auto failures = compile_all(specs, false);
    for (const auto& f : failures) ADD_FAILURE() << f;
}

}  // namespace batchsolve::test::column_major
