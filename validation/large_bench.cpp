// large_bench: the large-matrix Cholesky (cholesky_large.hpp) side by side with cuSOLVER in one
// process: our DPOTRF/SPOTRF against cusolverDnXpotrf at n = 1024 ... 32768, each as a fraction of the
// GEMM rate measured in the same run, the CPU reference (LAPACK on every core) for n <= 8192 within a
// time box, posv_mixed (FP32 and TF32 factors + FP64 refinement) against cuSOLVER's FP64 potrf + potrs,
// backward errors beside every time, the time split panel / TRSM / update of our factorisation, and a
// sweep of nb / ib / variant / recursion depth for the tuning table. JSON + markdown. Without a GPU it
// says "skipped: no GPU".
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve_io/progress.hpp"

using namespace batchsolve;
using nlohmann::json;

#include "bench_errors.hpp"

namespace {

const char* kUsage = R"(large_bench: Cholesky of one large matrix (cholesky_large.hpp) against cuSOLVER, side by side.

usage: large_bench [options]
  --n LIST            orders, comma-separated (default 1024,2048,4096,8192,16384,32768)
  --precision LIST    d, s or both (default d,s)
  --repeat R          timed runs per routine after one warm-up; the median is reported (default 3)
  --cond K            condition number of the test matrices (default 100)
  --cpu-max N         largest order the CPU reference runs (default 8192)
  --cpu-seconds S     time box of all CPU runs together; an order whose predicted time (8x the
                      previous one) does not fit is skipped (default 60)
  --mixed-min N       posv_mixed against cuSOLVER FP64 potrf + potrs for n >= N (default 4096; 0: off)
  --no-split          skip the panel / TRSM / update time split
  --sweep LIST        instead of the comparison: time every nb / ib / variant / recursion depth at these
                      orders (e.g. 2048,4096,8192,16384) and print the best per order and precision
  --seed S            seed of the matrices (default 2026)
  --json FILE         results as JSON (GPU, commit, date, one object per row)
  --markdown FILE     results as markdown tables
  --help              this text

Matrices: A = D + S, S symmetric with entries uniform in [-1, 1] (a hash of (i, j) and the seed),
D = r (K + 1) / (K - 1) I with r = 2 sqrt(n / 3) the spectral radius of S (semicircle law): SPD with
condition number about K. Times: CUDA events on one stream around each call, A restored (untimed)
before every run, median of R runs. GFLOP/s: n^3 / 3 for potrf; solvers are given the time of the
whole solve and the flops of the factorisation. Errors: normwise backward error
||b - A x||_inf / (||A||_inf ||x||_inf) of a solve with the factor (potrs after potrf), b uniform.
)";

using bench_errors::check;
using bench_errors::fail;
using bench_errors::parse_ints;

struct Settings {
    std::vector<int> sizes = {1024, 2048, 4096, 8192, 16384, 32768};
    std::vector<char> precisions = {'d', 's'};
    int repeat = 3;
    double cond = 100;
    int cpu_max = 8192;
    double cpu_seconds = 60;
    int mixed_min = 4096;
    bool split = true;
    std::vector<int> sweep;
    std::uint64_t seed = 2026;
    std::string json_path, markdown_path;
};

template <class T>
class DeviceArray {
public:
    explicit DeviceArray(std::size_t count) : count_(count) {
        if (count) CHECK(cudaMalloc(&p_, count * sizeof(T)));
    }
    ~DeviceArray() { cudaFree(p_); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    T* get() const { return p_; }

private:
    T* p_ = nullptr;
    std::size_t count_ = 0;
};

// Entry (i, j) of S, symmetric by construction: a splitmix64 hash of (seed, min, max) to [-1, 1).
double symmetric_entry(std::uint64_t seed, int i, int j) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (std::uint64_t(std::min(i, j)) * 0x100000001ULL + std::uint64_t(std::max(i, j)) + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return double(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

// The test matrix (both triangles, ld = n) and its infinity norm.
template <class T>
std::vector<T> make_matrix(int n, double cond, std::uint64_t seed, double* norm_inf) {
    std::vector<T> a(std::size_t(n) * n);
    const double radius = 2 * std::sqrt(n / 3.0);
    const double diagonal = radius * (cond + 1) / (cond - 1);
    double norm = 0;
#pragma omp parallel for schedule(static) reduction(max : norm)
    for (int j = 0; j < n; ++j) {
        double column = 0;  // = row j's sum (symmetric)
        for (int i = 0; i < n; ++i) {
            const double v = i == j ? diagonal : symmetric_entry(seed, i, j);
            a[std::size_t(j) * n + i] = T(v);
            column += std::abs(double(T(v)));
        }
        norm = std::max(norm, column);
    }
    *norm_inf = norm;
    return a;
}

std::vector<double> make_rhs(int n, std::uint64_t seed) {
    std::vector<double> b(n);
    for (int i = 0; i < n; ++i) b[i] = symmetric_entry(seed ^ 0xb0b, i, n + i);
    return b;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Times `call` on `stream` with CUDA events after `prepare` (untimed): one warm-up, then `repeat` runs.
double time_median(cudaStream_t stream, int repeat, const std::function<void()>& prepare, const std::function<void()>& call) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<double> seconds;
    for (int k = 0; k <= repeat; ++k) {
        prepare();
        CHECK(cudaEventRecord(start, stream));
        call();
        CHECK(cudaEventRecord(stop, stream));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (k > 0) seconds.push_back(ms * 1e-3);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return median(seconds);
}

cudaDataType data_type(float) { return CUDA_R_32F; }
cudaDataType data_type(double) { return CUDA_R_64F; }

// Everything one (precision, n) needs on the device: the pristine matrix, a working copy, b, x.
template <class T>
struct Problem {
    int n;
    double norm_a;
    DeviceArray<T> a, work;
    DeviceArray<T> b, x;
    DeviceArray<int> info;
    Problem(int n_, const std::vector<T>& host_a, double norm, const std::vector<double>& host_b)
        : n(n_), norm_a(norm), a(host_a.size()), work(host_a.size()), b(n_), x(n_), info(1) {
        CHECK(cudaMemcpy(a.get(), host_a.data(), host_a.size() * sizeof(T), cudaMemcpyHostToDevice));
        std::vector<T> bt(host_b.begin(), host_b.end());
        CHECK(cudaMemcpy(b.get(), bt.data(), bt.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    void restore(cudaStream_t s) const {
        CHECK(cudaMemcpyAsync(work.get(), a.get(), std::size_t(n) * n * sizeof(T), cudaMemcpyDeviceToDevice, s));
    }
    int read_info() const {
        int v = 0;
        CHECK(cudaMemcpy(&v, info.get(), sizeof(int), cudaMemcpyDeviceToHost));
        return v;
    }
};

// ||b - A x||_inf / (||A||_inf ||x||_inf) with the pristine A (lower triangle) in the working precision.
template <class T>
double normwise_backward_error(cublasHandle_t blas, cudaStream_t stream, const Problem<T>& p, const T* x, const T* b) {
    const int n = p.n;
    DeviceArray<T> r(n);
    CHECK(cudaMemcpyAsync(r.get(), b, n * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    const T minus_one = -1, one = 1;
    if constexpr (std::is_same_v<T, double>)
        CHECK(cublasDsymv(blas, CUBLAS_FILL_MODE_LOWER, n, &minus_one, p.a.get(), n, x, 1, &one, r.get(), 1));
    else
        CHECK(cublasSsymv(blas, CUBLAS_FILL_MODE_LOWER, n, &minus_one, p.a.get(), n, x, 1, &one, r.get(), 1));
    std::vector<T> hr(n), hx(n);
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaMemcpy(hr.data(), r.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hx.data(), x, n * sizeof(T), cudaMemcpyDeviceToHost));
    double rmax = 0, xmax = 0;
    for (int i = 0; i < n; ++i) {
        if (!std::isfinite(double(hr[i])) || !std::isfinite(double(hx[i]))) return std::numeric_limits<double>::infinity();
        rmax = std::max(rmax, std::abs(double(hr[i])));
        xmax = std::max(xmax, std::abs(double(hx[i])));
    }
    return rmax / (p.norm_a * xmax);
}

struct Handles {
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    cusolverDnHandle_t solver = nullptr;
    cusolverDnParams_t params = nullptr;
};

// cuSOLVER's Xpotrf (lower) on the working copy; its buffers sized once.
template <class T>
struct CusolverPotrf {
    std::size_t device_bytes = 0, host_bytes = 0;
    DeviceArray<char>* device = nullptr;
    std::vector<char> host;
    CusolverPotrf(Handles& h, Problem<T>& p) {
        CHECK(cusolverDnXpotrf_bufferSize(h.solver, h.params, CUBLAS_FILL_MODE_LOWER, p.n, data_type(T{}), p.work.get(), p.n,
                                          data_type(T{}), &device_bytes, &host_bytes));
        device = new DeviceArray<char>(std::max<std::size_t>(device_bytes, 1));
        host.resize(std::max<std::size_t>(host_bytes, 1));
    }
    ~CusolverPotrf() { delete device; }
    void factor(Handles& h, Problem<T>& p) {
        CHECK(cusolverDnXpotrf(h.solver, h.params, CUBLAS_FILL_MODE_LOWER, p.n, data_type(T{}), p.work.get(), p.n, data_type(T{}),
                               device->get(), device_bytes, host.data(), host_bytes, p.info.get()));
    }
    void solve(Handles& h, Problem<T>& p, T* x) {
        CHECK(cusolverDnXpotrs(h.solver, h.params, CUBLAS_FILL_MODE_LOWER, p.n, 1, data_type(T{}), p.work.get(), p.n,
                               data_type(T{}), x, p.n, p.info.get()));
    }
};

// GEMM rate (TFLOP/s) at m = n = k = min(order, 8192), default math (no TF32 for s).
template <class T>
double gemm_tflops(Handles& h, int order, int repeat) {
    const int m = std::min(order, 8192);
    DeviceArray<T> a(std::size_t(m) * m), b(std::size_t(m) * m), c(std::size_t(m) * m);
    CHECK(cudaMemsetAsync(a.get(), 0, std::size_t(m) * m * sizeof(T), h.stream));
    CHECK(cudaMemsetAsync(b.get(), 0, std::size_t(m) * m * sizeof(T), h.stream));
    const T one = 1, zero = 0;
    const double s = time_median(h.stream, repeat, [] {}, [&] {
        if constexpr (std::is_same_v<T, double>)
            CHECK(cublasDgemm(h.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a.get(), m, b.get(), m, &zero, c.get(), m));
        else
            CHECK(cublasSgemm(h.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a.get(), m, b.get(), m, &zero, c.get(), m));
    });
    return 2.0 * m * double(m) * m / s * 1e-12;
}

double potrf_tflops(int n, double seconds) { return double(n) * n * n / 3.0 / seconds * 1e-12; }

std::string git_commit() {
    if (const char* c = std::getenv("BATCHSOLVE_COMMIT")) return c;
    FILE* pipe = popen("git rev-parse --short HEAD 2>/dev/null", "r");
    if (!pipe) return "unknown";
    char buffer[64] = {0};
    const bool ok = std::fgets(buffer, sizeof buffer, pipe) != nullptr;
    pclose(pipe);
    std::string s = ok ? buffer : "unknown";
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s.empty() ? "unknown" : s;
}

struct Report {
    json rows = json::array();
    json sweep = json::array();
    std::ostringstream potrf_table, mixed_table, split_table, sweep_table;
    double cpu_seconds_used = 0;
    double last_cpu_seconds = 0;
    int last_cpu_n = 0;
};

// One (precision, n) of the comparison: ours, cuSOLVER, GEMM, CPU, split, and for d posv_mixed.
template <class T>
void compare(const Settings& settings, Handles& h, Context& ctx, int n, Report& report) {
    const char letter = std::is_same_v<T, double> ? 'd' : 's';
    double norm_a = 0;
    const std::vector<T> host_a = make_matrix<T>(n, settings.cond, settings.seed + n, &norm_a);
    const std::vector<double> host_b = make_rhs(n, settings.seed + n);
    Problem<T> p(n, host_a, norm_a, host_b);
    ctx.workspace(potrf_workspace_size<T>(n, ctx));
    const LargeCholeskyConfig config = cholesky_large_default_config<T>(n);

    // Ours.
    const double ours = time_median(h.stream, settings.repeat, [&] { p.restore(h.stream); },
                                    [&] { potrf<T>(Uplo::lower, n, p.work.get(), n, p.info.get(), ctx); });
    const int ours_info = p.read_info();
    // The same with the factorisation captured once as a CUDA graph and replayed (config.graph).
    LargeCholeskyConfig graph_config = config;
    graph_config.graph = true;
    const double ours_graph = time_median(h.stream, settings.repeat, [&] { p.restore(h.stream); },
                                          [&] { potrf<T>(Uplo::lower, n, p.work.get(), n, p.info.get(), graph_config, ctx); });
    if (p.read_info() != 0) fail("graph replay: info " + std::to_string(p.read_info()));
    CHECK(cudaMemcpyAsync(p.x.get(), p.b.get(), n * sizeof(T), cudaMemcpyDeviceToDevice, h.stream));
    potrs<T>(Uplo::lower, n, 1, p.work.get(), n, p.x.get(), n, ctx);
    const double ours_error = normwise_backward_error(h.blas, h.stream, p, p.x.get(), p.b.get());

    // cuSOLVER.
    CusolverPotrf<T> vendor(h, p);
    const double theirs = time_median(h.stream, settings.repeat, [&] { p.restore(h.stream); }, [&] { vendor.factor(h, p); });
    const int their_info = p.read_info();
    CHECK(cudaMemcpyAsync(p.x.get(), p.b.get(), n * sizeof(T), cudaMemcpyDeviceToDevice, h.stream));
    vendor.solve(h, p, p.x.get());
    const double their_error = normwise_backward_error(h.blas, h.stream, p, p.x.get(), p.b.get());

    const double gemm = gemm_tflops<T>(h, n, settings.repeat);

    // CPU reference, time-boxed.
    double cpu = -1;
    if (n <= settings.cpu_max) {
        const double predicted = report.last_cpu_n ? report.last_cpu_seconds * std::pow(double(n) / report.last_cpu_n, 3) : 0;
        if (report.cpu_seconds_used + predicted <= settings.cpu_seconds) {
            Context cpu_ctx(Backend::cpu);
            std::vector<T> copy = host_a;
            int info = -1;
            const auto t0 = std::chrono::steady_clock::now();
            potrf<T>(Uplo::lower, n, copy.data(), n, &info, cpu_ctx);
            cpu = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (info != 0) fail("CPU potrf info " + std::to_string(info) + " at n = " + std::to_string(n));
            report.cpu_seconds_used += cpu;
            if (letter == 'd') report.last_cpu_seconds = cpu, report.last_cpu_n = n;
        }
    }

    // The time split (one run, phases serialised on one stream).
    CholeskyPhaseTimes split;
    if (settings.split) {
        p.restore(h.stream);
        potrf<T>(Uplo::lower, n, p.work.get(), n, p.info.get(), config, ctx, &split);
    }

    json row = {{"routine", "potrf"},
                {"precision", std::string(1, letter)},
                {"n", n},
                {"config", {{"nb", config.nb}, {"ib", config.ib}, {"variant", to_string(config.variant)},
                            {"recursion_depth", config.recursion_depth}, {"lookahead", config.lookahead},
                            {"strip", to_string(config.strip)}}},
                {"ours_seconds", ours},
                {"ours_tflops", potrf_tflops(n, ours)},
                {"ours_info", ours_info},
                {"ours_graph_seconds", ours_graph},
                {"ours_graph_tflops", potrf_tflops(n, ours_graph)},
                {"speedup_graph_vs_cusolver", theirs / ours_graph},
                {"ours_backward_error", ours_error},
                {"cusolver_seconds", theirs},
                {"cusolver_tflops", potrf_tflops(n, theirs)},
                {"cusolver_info", their_info},
                {"cusolver_backward_error", their_error},
                {"speedup_vs_cusolver", theirs / ours},
                {"gemm_tflops", gemm},
                {"ours_fraction_of_gemm", potrf_tflops(n, ours) / gemm},
                {"cusolver_fraction_of_gemm", potrf_tflops(n, theirs) / gemm},
                {"cpu_seconds", cpu < 0 ? json(nullptr) : json(cpu)},
                {"cpu_threads", omp_get_max_threads()}};
    if (settings.split)
        row["split_seconds"] = {{"panel", split.panel_seconds}, {"trsm", split.trsm_seconds}, {"update", split.update_seconds},
                                {"panels", split.panels}};
    report.rows.push_back(row);
    char line[512];
    std::snprintf(line, sizeof line, "| %c | %d | %d/%d/%s/%d/%s | %.3f | %.1f | %.3f (x%.2f) | %.3f | %.1f | **%.2f** | %.1f | %.2f | %s | %.1e | %.1e |\n",
                  letter, n, config.nb, config.ib, to_string(config.variant), config.recursion_depth, to_string(config.strip), ours * 1e3,
                  potrf_tflops(n, ours), ours_graph * 1e3, theirs / ours_graph, theirs * 1e3, potrf_tflops(n, theirs), theirs / ours, gemm,
                  potrf_tflops(n, ours) / gemm,
                  cpu < 0 ? "-" : (std::to_string(cpu * 1e3).substr(0, 8)).c_str(), ours_error, their_error);
    report.potrf_table << line;
    std::printf("%c n=%6d  ours %9.3f ms %6.1f TFLOP/s (graph %.3f ms)  cuSOLVER %9.3f ms %6.1f TFLOP/s  x%.2f  GEMM %.1f  berr %.1e / %.1e%s\n",
                letter, n, ours * 1e3, potrf_tflops(n, ours), ours_graph * 1e3, theirs * 1e3, potrf_tflops(n, theirs), theirs / ours, gemm, ours_error,
                their_error, cpu < 0 ? "" : ("  CPU " + std::to_string(cpu) + " s").c_str());
    if (settings.split) {
        const double total = split.panel_seconds + split.trsm_seconds + split.update_seconds;
        std::snprintf(line, sizeof line, "| %c | %d | %d | %.3f (%.0f%%) | %.3f (%.0f%%) | %.3f (%.0f%%) | %.3f |\n", letter, n, split.panels,
                      split.panel_seconds * 1e3, 100 * split.panel_seconds / total, split.trsm_seconds * 1e3,
                      100 * split.trsm_seconds / total, split.update_seconds * 1e3, 100 * split.update_seconds / total, total * 1e3);
        report.split_table << line;
    }

    // posv_mixed against cuSOLVER FP64 potrf + potrs (double only).
    if constexpr (std::is_same_v<T, double>) {
        if (settings.mixed_min > 0 && n >= settings.mixed_min) {
            const double direct = time_median(h.stream, settings.repeat, [&] { p.restore(h.stream); }, [&] {
                CHECK(cudaMemcpyAsync(p.x.get(), p.b.get(), n * sizeof(T), cudaMemcpyDeviceToDevice, h.stream));
                vendor.factor(h, p);
                vendor.solve(h, p, p.x.get());
            });
            const double direct_error = normwise_backward_error(h.blas, h.stream, p, p.x.get(), p.b.get());
            json mixed_row = {{"routine", "posv"}, {"precision", "d"}, {"n", n}, {"cusolver_potrf_potrs_seconds", direct},
                              {"cusolver_backward_error", direct_error}};
            std::string cells;
            for (bool tf32 : {false, true}) {
                PosvMixedOptions options;
                options.tensor_core_updates = tf32;
                ctx.workspace(posv_mixed_workspace_size<double>(Uplo::lower, n, 1, options, ctx));
                PosvMixedResult result;
                const double t = time_median(h.stream, settings.repeat, [] {}, [&] {
                    result = posv_mixed<double>(Uplo::lower, n, 1, p.a.get(), n, p.b.get(), n, p.x.get(), n, options, ctx);
                });
                const double error = normwise_backward_error(h.blas, h.stream, p, p.x.get(), p.b.get());
                const std::string key = tf32 ? "tf32" : "fp32";
                mixed_row[key] = {{"seconds", t}, {"speedup_vs_cusolver_fp64", direct / t}, {"path", to_string(result.path)},
                                  {"iterations", result.iterations}, {"componentwise_backward_error", result.backward_error},
                                  {"normwise_backward_error", error}, {"describe", result.describe()}};
                char cell[256];
                std::snprintf(cell, sizeof cell, " %.3f | %s, %d it | %.1e | **%.2f** |", t * 1e3, to_string(result.path), result.iterations,
                              error, direct / t);
                cells += cell;
                std::printf("  posv_mixed%s n=%d  %.3f ms  x%.2f vs cuSOLVER FP64 potrf+potrs (%.3f ms)  %s  berr %.1e / %.1e\n",
                            tf32 ? " TF32" : "", n, t * 1e3, direct / t, direct * 1e3, result.describe().c_str(), error, direct_error);
            }
            report.rows.push_back(mixed_row);
            std::snprintf(line, sizeof line, "| %d | %.3f | %.1e |", n, direct * 1e3, direct_error);
            report.mixed_table << line << cells << "\n";
        }
    }
}

// The sweep: every configuration at one order, best first.
template <class T>
void sweep(const Settings& settings, Handles& h, Context& ctx, int n, Report& report) {
    const char letter = std::is_same_v<T, double> ? 'd' : 's';
    double norm_a = 0;
    const std::vector<T> host_a = make_matrix<T>(n, settings.cond, settings.seed + n, &norm_a);
    Problem<T> p(n, host_a, norm_a, make_rhs(n, settings.seed));
    CusolverPotrf<T> vendor(h, p);
    const double theirs = time_median(h.stream, settings.repeat, [&] { p.restore(h.stream); }, [&] { vendor.factor(h, p); });
    struct Entry {
        LargeCholeskyConfig c;
        double seconds;
    };
    std::vector<Entry> entries;
    std::vector<LargeCholeskyConfig> configs;
    // Leaves (nb halved depth times, rounded up to 32) of 32 to 256 columns; right-looking with
    // lookahead and left-looking; both strip factorisations (the leaf is resident in shared memory
    // when it fits, as the library decides).
    for (int nb : {64, 96, 128, 192, 256, 384, 512, 768})
        for (int ib : {16, 32})
            for (int depth : {0, 1, 2, 3})
                for (bool left : {false, true})
                    for (Potf2Strip strip : {Potf2Strip::columns, Potf2Strip::warp}) {
                        int leaf = nb;
                        for (int d = 0; d < depth; ++d) leaf = std::min(leaf, ((leaf + 1) / 2 + 31) / 32 * 32);
                        if (nb % ib != 0 || leaf > 256 || leaf < 48 || (depth > 0 && nb <= 64)) continue;
                        LargeCholeskyConfig c;
                        c.nb = nb, c.ib = ib, c.recursion_depth = depth, c.strip = strip;
                        c.variant = left ? CholeskyVariant::left_looking : CholeskyVariant::right_looking;
                        c.lookahead = !left;
                        configs.push_back(c);
                    }
    io::Progress progress("sweep " + std::string(1, letter) + " n=" + std::to_string(n), configs.size());
    for (const auto& c : configs) {
        try {
            const double t = time_median(h.stream, settings.repeat, [&] { p.restore(h.stream); },
                                         [&] { potrf<T>(Uplo::lower, n, p.work.get(), n, p.info.get(), c, ctx); });
            if (p.read_info() != 0) fail("sweep: info " + std::to_string(p.read_info()));
            entries.push_back({c, t});
        } catch (const InvalidArgument& e) {
            // A configuration the device cannot run (shared memory): not a result.
        }
        progress.advance();
    }
    progress.finish();
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.seconds < b.seconds; });
    std::printf("sweep %c n=%d (cuSOLVER %.3f ms, %.1f TFLOP/s); best first:\n", letter, n, theirs * 1e3, potrf_tflops(n, theirs));
    for (std::size_t k = 0; k < entries.size(); ++k) {
        const auto& e = entries[k];
        const std::string variant = e.c.variant == CholeskyVariant::left_looking ? "left" : (e.c.lookahead ? "right+lookahead" : "right");
        report.sweep.push_back({{"precision", std::string(1, letter)}, {"n", n}, {"nb", e.c.nb}, {"ib", e.c.ib}, {"strip", to_string(e.c.strip)},
                                {"recursion_depth", e.c.recursion_depth}, {"variant", variant}, {"seconds", e.seconds},
                                {"tflops", potrf_tflops(n, e.seconds)}, {"speedup_vs_cusolver", theirs / e.seconds}});
        if (k < 10) std::printf("  nb %4d ib %2d depth %d %-16s %-7s %9.3f ms  %6.1f TFLOP/s  x%.2f\n", e.c.nb, e.c.ib,
                                e.c.recursion_depth, variant.c_str(), to_string(e.c.strip), e.seconds * 1e3,
                                potrf_tflops(n, e.seconds), theirs / e.seconds);
        if (k == 0) {
            char line[256];
            std::snprintf(line, sizeof line, "| %c | %d | %d | %d | %d | %s | %s | %.3f | %.1f | %.2f |\n", letter, n, e.c.nb, e.c.ib,
                          e.c.recursion_depth, variant.c_str(), to_string(e.c.strip), e.seconds * 1e3, potrf_tflops(n, e.seconds),
                          theirs / e.seconds);
            report.sweep_table << line;
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    Settings settings;
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        auto value = [&]() -> std::string {
            if (k + 1 >= argc) fail("option " + arg + " needs a value");
            return argv[++k];
        };
        if (arg == "--help" || arg == "-h") {
            std::cout << kUsage;
            return 0;
        } else if (arg == "--n") settings.sizes = parse_ints(value(), "--n");
        else if (arg == "--precision") {
            settings.precisions.clear();
            std::stringstream in(value());
            std::string item;
            while (std::getline(in, item, ',')) {
                if (item != "d" && item != "s") fail("invalid --precision '" + item + "' (d or s)");
                settings.precisions.push_back(item[0]);
            }
        } else if (arg == "--repeat") settings.repeat = parse_ints(value(), "--repeat")[0];
        else if (arg == "--cond") {
            settings.cond = std::atof(value().c_str());
            if (!(settings.cond > 1)) fail("--cond must be > 1");
        } else if (arg == "--cpu-max") settings.cpu_max = std::atoi(value().c_str());
        else if (arg == "--cpu-seconds") settings.cpu_seconds = std::atof(value().c_str());
        else if (arg == "--mixed-min") settings.mixed_min = std::atoi(value().c_str());
        else if (arg == "--no-split") settings.split = false;
        else if (arg == "--sweep") settings.sweep = parse_ints(value(), "--sweep");
        else if (arg == "--seed") settings.seed = std::strtoull(value().c_str(), nullptr, 0);
        else if (arg == "--json") settings.json_path = value();
        else if (arg == "--markdown") settings.markdown_path = value();
        else fail("unknown option '" + arg + "' (see --help)");
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::cout << "large_bench: skipped: no GPU\n";
        return 0;
    }
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int runtime = 0;
    CHECK(cudaRuntimeGetVersion(&runtime));
    Handles h;
    CHECK(cudaStreamCreateWithFlags(&h.stream, cudaStreamNonBlocking));
    CHECK(cublasCreate(&h.blas));
    CHECK(cublasSetStream(h.blas, h.stream));
    CHECK(cusolverDnCreate(&h.solver));
    CHECK(cusolverDnSetStream(h.solver, h.stream));
    CHECK(cusolverDnCreateParams(&h.params));
    Context ctx(Backend::cuda);
    ctx.set_stream(h.stream);
    std::printf("large_bench: %s, commit %s, %d CPU threads\n", prop.name, git_commit().c_str(), omp_get_max_threads());

    Report report;
    if (!settings.sweep.empty()) {
        for (int n : settings.sweep)
            for (char p : settings.precisions) p == 'd' ? sweep<double>(settings, h, ctx, n, report) : sweep<float>(settings, h, ctx, n, report);
    } else {
        io::Progress progress("large_bench", settings.sizes.size() * settings.precisions.size());
        for (char p : settings.precisions)
            for (int n : settings.sizes) {
                p == 'd' ? compare<double>(settings, h, ctx, n, report) : compare<float>(settings, h, ctx, n, report);
                progress.advance();
            }
    }

    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    if (!settings.json_path.empty()) {
        json out = {{"gpu", prop.name}, {"commit", git_commit()}, {"date", date}, {"cuda_runtime", runtime},
                    {"cpu_threads", omp_get_max_threads()}, {"cond", settings.cond}, {"repeat", settings.repeat},
                    {"rows", report.rows}, {"sweep", report.sweep}};
        std::ofstream(settings.json_path) << out.dump(1) << "\n";
    }
    std::ostringstream md;
    md << "# large_bench: " << prop.name << ", commit " << git_commit() << ", " << date << "\n\n";
    if (!report.potrf_table.str().empty())
        md << "## potrf (lower) vs cusolverDnXpotrf, median of " << settings.repeat << "\n\n"
           << "| prec | n | nb/ib/variant/depth/strip | ours ms | TFLOP/s | ours as a graph ms (vs cuSOLVER) | cuSOLVER ms | TFLOP/s | speed-up | GEMM TFLOP/s | ours/GEMM | CPU ms ("
           << omp_get_max_threads() << " thr) | berr ours | berr cuSOLVER |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
           << report.potrf_table.str() << "\n";
    if (!report.split_table.str().empty())
        md << "## time split of our potrf (phases timed one after another on one stream)\n\n"
           << "| prec | n | panels | panel POTF2 ms | TRSM ms | SYRK/GEMM ms | sum ms |\n|---|---|---|---|---|---|---|\n"
           << report.split_table.str() << "\n";
    if (!report.mixed_table.str().empty())
        md << "## posv_mixed (FP32 / TF32 factor + FP64 refinement) vs cuSOLVER FP64 potrf + potrs\n\n"
           << "| n | cuSOLVER ms | berr | FP32 ms | path | berr | speed-up | TF32 ms | path | berr | speed-up |\n"
           << "|---|---|---|---|---|---|---|---|---|---|---|\n"
           << report.mixed_table.str() << "\n";
    if (!report.sweep_table.str().empty())
        md << "## sweep: best configuration per order\n\n| prec | n | nb | ib | depth | variant | strip | ms | TFLOP/s | vs cuSOLVER |\n"
           << "|---|---|---|---|---|---|---|---|---|---|\n"
           << report.sweep_table.str() << "\n";
    if (!settings.markdown_path.empty()) std::ofstream(settings.markdown_path) << md.str();
    std::cout << "\n" << md.str();
    return 0;
}
