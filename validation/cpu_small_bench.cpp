// cpu_small_bench: the CPU backend's small-n batched potrf and posv (issue 29) side by side with the
// loops a CPU user would otherwise write, in one process: LAPACKE per matrix under OpenMP on all
// cores, the same loop on one thread, and the backend's own LAPACKE path (BATCHSOLVE_CPU_SIMD=off);
// plus the machine's measured peak (DGEMM / SGEMM through OpenBLAS on all cores). Prints a table and
// writes JSON (validation/cpu_small_bench.py adds numpy, the table, the plot and the results folder).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <cblas.h>
#include <lapacke.h>
#include <nlohmann/json.hpp>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve_io/progress.hpp"

namespace bs = batchsolve;

namespace {

const char* kUsage = R"(cpu_small_bench: batched Cholesky (potrf, posv with one right-hand side) on the CPU, the
batchsolve CPU backend against LAPACKE loops, median of several rounds, GFLOP/s and the fraction of
the machine's measured GEMM peak.

Usage: cpu_small_bench [options]
  --n LIST          orders (default 4,8,12,16,24,32,48,64,100,128)
  --batch N         matrices per call (default 16384)
  --precision LIST  d,s (default d,s)
  --routine LIST    potrf,posv (default potrf,posv)
  --rounds N        timed rounds per method, interleaved across methods (default 5)
  --distinct N      distinct matrices, repeated over the batch (default 512; generation is O(n^3) each)
  --json FILE       write the results as JSON
  --help            this text

Methods (all on the same column-major batch, inputs restored before every timed call, not timed):
  batchsolve        potrf_batched / posv_batched, Backend::cpu (its vector path where it applies)
  batchsolve_off    the same with BATCHSOLVE_CPU_SIMD=off: the backend's LAPACKE loop before issue 29
  lapacke_omp       LAPACKE_?potrf_work / ?posv_work per matrix, OpenMP static loop on all threads
  lapacke_1thread   the same loop on one thread
Every method's output is checked: info all 0 and the scaled backward error of 64 sample matrices
(accuracy.hpp; < 30 passes). Exit status 2 for a bad option, 1 when a check fails.
)";

[[noreturn]] void fail(const std::string& what) {
    std::cerr << "cpu_small_bench: " << what << "\n";
    std::exit(2);
}

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) out.push_back(item);
    return out;
}

int parse_int(const std::string& text, const char* option, int low, int high) {
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < low || v > high)
        fail(std::string("invalid ") + option + " '" + text + "' (an integer in [" + std::to_string(low) + ", " +
             std::to_string(high) + "])");
    return int(v);
}

struct Options {
    std::vector<int> orders = {4, 8, 12, 16, 24, 32, 48, 64, 100, 128};
    int batch = 16384, rounds = 5, distinct = 512;
    std::vector<std::string> precisions = {"d", "s"}, routines = {"potrf", "posv"};
    std::string json;
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::cout << kUsage;
            std::exit(0);
        }
        if (i + 1 >= argc) fail("option " + arg + " needs a value (see --help)");
        const std::string value = argv[++i];
        if (arg == "--n") {
            o.orders.clear();
            for (const std::string& t : split(value)) o.orders.push_back(parse_int(t, "--n", 1, 1024));
        } else if (arg == "--batch") {
            o.batch = parse_int(value, "--batch", 1, 10000000);
        } else if (arg == "--rounds") {
            o.rounds = parse_int(value, "--rounds", 1, 1000);
        } else if (arg == "--distinct") {
            o.distinct = parse_int(value, "--distinct", 1, 10000000);
        } else if (arg == "--precision") {
            o.precisions = split(value);
            for (const std::string& p : o.precisions)
                if (p != "d" && p != "s") fail("invalid --precision '" + value + "' (d, s)");
        } else if (arg == "--routine") {
            o.routines = split(value);
            for (const std::string& r : o.routines)
                if (r != "potrf" && r != "posv") fail("invalid --routine '" + value + "' (potrf, posv)");
        } else if (arg == "--json") {
            o.json = value;
        } else {
            fail("unknown option " + arg + " (see --help)");
        }
    }
    return o;
}

// ---- LAPACKE per matrix --------------------------------------------------------------------------
lapack_int potrf_one(int n, double* a) { return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, a, n); }
lapack_int potrf_one(int n, float* a) { return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'L', n, a, n); }
lapack_int posv_one(int n, double* a, double* b) { return LAPACKE_dposv_work(LAPACK_COL_MAJOR, 'L', n, 1, a, n, b, n); }
lapack_int posv_one(int n, float* a, float* b) { return LAPACKE_sposv_work(LAPACK_COL_MAJOR, 'L', n, 1, a, n, b, n); }

// ---- peak: GEMM through OpenBLAS on all cores ------------------------------------------------------
void gemm(int m, const double* a, const double* b, double* c) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, a, m, b, m, 0.0, c, m);
}
void gemm(int m, const float* a, const float* b, float* c) {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, a, m, b, m, 0.0f, c, m);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

template <class T>
double gemm_peak_gflops(int threads) {
    const int m = 2048;
    std::vector<T> a(std::size_t(m) * m), b(a.size()), c(a.size());
    std::mt19937 engine(7);
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (std::size_t e = 0; e < a.size(); ++e) a[e] = T(uniform(engine)), b[e] = T(uniform(engine));
    openblas_set_num_threads(threads);
    gemm(m, a.data(), b.data(), c.data());  // warm-up (threads, pages)
    std::vector<double> seconds;
    for (int r = 0; r < 5; ++r) {
        const double t0 = omp_get_wtime();
        gemm(m, a.data(), b.data(), c.data());
        seconds.push_back(omp_get_wtime() - t0);
    }
    openblas_set_num_threads(1);
    return 2.0 * double(m) * m * m / median(seconds) * 1e-9;
}

double potrf_flops(double n) { return n * n * n / 3 + n * n / 2 + n / 6; }
double posv_flops(double n) { return potrf_flops(n) + 2 * n * n; }  // one right-hand side

std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return a + " " + b + " " + c;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
}

// One case: a batch of `count` matrices (the `distinct` generated ones repeated), each method timed
// `rounds` times in turn, its last output checked.
template <class T>
nlohmann::json run_case(const std::string& routine, int n, const Options& o, bs::Context& ctx, bool& all_ok) {
    const int count = o.batch, distinct = std::min(o.distinct, o.batch);
    const std::size_t nn = std::size_t(n) * n;
    const std::vector<T> a0 = bs::generate_spd_batch<T>(n, distinct, 100.0, 20261127 + n);
    std::vector<T> b0(std::size_t(n) * distinct);
    std::mt19937_64 engine(n);
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (T& x : b0) x = T(uniform(engine));
    std::vector<T> a(nn * count), b(std::size_t(n) * count);
    std::vector<int> info(count);
    const bool posv = routine == "posv";
    auto restore = [&] {
#pragma omp parallel for schedule(static)
        for (int k = 0; k < count; ++k) {
            std::memcpy(&a[nn * k], &a0[nn * (k % distinct)], nn * sizeof(T));
            std::memcpy(&b[std::size_t(n) * k], &b0[std::size_t(n) * (k % distinct)], n * sizeof(T));
        }
        std::fill(info.begin(), info.end(), -1);
    };
    auto view_a = bs::BatchView<T>::column_major(a.data(), n, n, count);
    auto view_b = bs::BatchView<T>::column_major(b.data(), n, 1, count);
    auto batchsolve_call = [&] {
        if (posv) bs::posv_batched(bs::Uplo::lower, view_a, view_b, info.data(), ctx);
        else bs::potrf_batched(bs::Uplo::lower, view_a, info.data(), ctx);
    };
    auto lapacke_loop = [&](bool parallel) {
        const int threads = parallel ? omp_get_max_threads() : 1;
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int k = 0; k < count; ++k)
            info[k] = int(posv ? posv_one(n, &a[nn * k], &b[std::size_t(n) * k]) : potrf_one(n, &a[nn * k]));
    };
    struct Method {
        const char* name;
        std::function<void()> run;
    };
    const std::vector<Method> methods = {
        {"batchsolve", [&] { batchsolve_call(); }},
        {"batchsolve_off",
         [&] {
             // The caller's setting (e.g. BATCHSOLVE_CPU_SIMD=avx2 for the batchsolve row) comes back after.
             const char* before = std::getenv("BATCHSOLVE_CPU_SIMD");
             const std::string saved = before ? before : "";
             setenv("BATCHSOLVE_CPU_SIMD", "off", 1);
             batchsolve_call();
             if (before) setenv("BATCHSOLVE_CPU_SIMD", saved.c_str(), 1);
             else unsetenv("BATCHSOLVE_CPU_SIMD");
         }},
        {"lapacke_omp", [&] { lapacke_loop(true); }},
        {"lapacke_1thread", [&] { lapacke_loop(false); }},
    };
    std::map<std::string, std::vector<double>> seconds;
    std::map<std::string, double> worst_error;
    for (int r = 0; r <= o.rounds; ++r)  // round 0 warms up (pages, OpenMP threads), untimed
        for (const Method& m : methods) {
            restore();
            const double t0 = omp_get_wtime();
            m.run();
            const double t = omp_get_wtime() - t0;
            if (r > 0) seconds[m.name].push_back(t);
            if (r != o.rounds) continue;
            // The last round's output: every info 0, backward errors of a sample.
            const bool infos_ok = std::all_of(info.begin(), info.end(), [](int i) { return i == 0; });
            const int sample = std::min(64, count);
            std::vector<T> sample_a, rhs;  // the inputs of matrices 0 .. sample - 1
            for (int k = 0; k < sample; ++k) {
                const std::size_t d = std::size_t(k % distinct);
                sample_a.insert(sample_a.end(), a0.begin() + nn * d, a0.begin() + nn * (d + 1));
                rhs.insert(rhs.end(), b0.begin() + n * d, b0.begin() + n * (d + 1));
            }
            double error;
            if (posv) {
                const std::vector<T> x(b.begin(), b.begin() + std::size_t(n) * sample);
                error = bs::max_or_nan(bs::solve_backward_error(bs::Uplo::lower, sample_a, x, rhs, n, 1, sample));
            } else {
                std::vector<T> factor(a.begin(), a.begin() + nn * sample);
                error = bs::max_or_nan(bs::factorization_error(bs::Uplo::lower, sample_a, factor, n, sample));
            }
            worst_error[m.name] = infos_ok ? error : NAN;
            if (!infos_ok || !(error < 30)) {
                all_ok = false;
                std::cerr << "cpu_small_bench: " << routine << " n=" << n << " " << m.name << ": check FAILED ("
                          << (infos_ok ? "backward error " + std::to_string(error) : std::string("info not 0")) << ")\n";
            }
        }
    const double flops = double(count) * (posv ? posv_flops(n) : potrf_flops(n));
    nlohmann::json row = {{"routine", routine}, {"precision", sizeof(T) == 8 ? "d" : "s"}, {"n", n},
                          {"batch", count}, {"nrhs", posv ? 1 : 0}, {"flops", flops}};
    for (const Method& m : methods) {
        const double t = median(seconds[m.name]);
        row["methods"][m.name] = {{"seconds", t}, {"seconds_all", seconds[m.name]}, {"gflops", flops / t * 1e-9},
                                  {"backward_error", worst_error[m.name]}};
    }
    return row;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    bs::Context ctx(bs::Backend::cpu);
    const int threads = omp_get_max_threads();
    const std::string load_before = load_average();
    std::cerr << "cpu_small_bench: measuring the GEMM peak on " << threads << " threads\n";
    const double peak_d = gemm_peak_gflops<double>(threads), peak_s = gemm_peak_gflops<float>(threads);
    nlohmann::json doc;
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    const char* isa = std::getenv("BATCHSOLVE_CPU_SIMD");
    doc["header"] = {{"program", "cpu_small_bench"}, {"date", date}, {"cpu", cpu_model()}, {"threads", threads},
                     {"BATCHSOLVE_CPU_SIMD", isa ? isa : "(unset: auto)"}, {"openblas", openblas_get_config()},
                     {"load_average_before", load_before},
                     {"peak_gflops", {{"d", peak_d}, {"s", peak_s}}},
                     {"peak_method", "median of 5 OpenBLAS ?GEMM calls, m = n = k = 2048, all threads"}};
    std::printf("peak (OpenBLAS GEMM, %d threads): d %.1f GFLOP/s, s %.1f GFLOP/s\n", threads, peak_d, peak_s);
    std::printf("%-5s %-2s %4s %8s | %10s %10s %10s %10s | %7s %7s %7s | %6s\n", "rout", "p", "n", "batch",
                "bs GF/s", "off GF/s", "omp GF/s", "1thr GF/s", "bs/omp", "bs/1t", "bs/off", "%peak");
    bool all_ok = true;
    const std::size_t cases = o.routines.size() * o.precisions.size() * o.orders.size();
    bs::io::Progress progress("cpu_small_bench", cases);
    for (const std::string& routine : o.routines)
        for (const std::string& p : o.precisions)
            for (int n : o.orders) {
                nlohmann::json row = p == "d" ? run_case<double>(routine, n, o, ctx, all_ok)
                                              : run_case<float>(routine, n, o, ctx, all_ok);
                const double peak = p == "d" ? peak_d : peak_s;
                auto& m = row["methods"];
                const double bs_t = m["batchsolve"]["seconds"], omp_t = m["lapacke_omp"]["seconds"],
                             one_t = m["lapacke_1thread"]["seconds"], off_t = m["batchsolve_off"]["seconds"];
                row["speedup"] = {{"over_lapacke_omp", omp_t / bs_t}, {"over_lapacke_1thread", one_t / bs_t},
                                  {"over_batchsolve_off", off_t / bs_t}};
                row["fraction_of_peak"] = double(m["batchsolve"]["gflops"]) / peak;
                progress.advance();
                std::printf("%-5s %-2s %4d %8d | %10.2f %10.2f %10.2f %10.2f | %7.2f %7.2f %7.2f | %5.1f%%\n",
                            routine.c_str(), p.c_str(), n, o.batch, double(m["batchsolve"]["gflops"]),
                            double(m["batchsolve_off"]["gflops"]), double(m["lapacke_omp"]["gflops"]),
                            double(m["lapacke_1thread"]["gflops"]), omp_t / bs_t, one_t / bs_t, off_t / bs_t,
                            100 * double(row["fraction_of_peak"]));
                std::fflush(stdout);
                doc["rows"].push_back(row);
            }
    progress.finish();
    doc["header"]["load_average_after"] = load_average();
    if (!o.json.empty()) {
        std::ofstream out(o.json);
        out << doc.dump(1) << "\n";
        if (!out) fail(o.json + ": could not write");
    }
    std::printf("checks: %s\n", all_ok ? "all ok (info 0, backward error < 30 on 64 samples per method)" : "FAILED");
    return all_ok ? 0 : 1;
}
