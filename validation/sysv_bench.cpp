// sysv_bench: the symmetric indefinite solvers (ldlt.hpp) side by side with cuSOLVER on one large
// random matrix per size, in one process: our sytrf_nopiv (z) and sysv_mixed (z via c, d via s)
// against cuSOLVER ?getrf, ?sytrf and the IRS refinement solvers (ZZ, ZC, ZK, ZE, ZY / DD, DS, DH,
// DB, DX gesv), each with a backward error beside its time (CUDA events, warm-up, median), GFLOP/s
// against a measured GEMM rate, JSON and a markdown table. Without a GPU it says "skipped: no GPU".
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve_io/hdf5.hpp"

using namespace batchsolve;
using nlohmann::json;

#include "bench_errors.hpp"

namespace {

const char* kUsage = R"(sysv_bench: symmetric indefinite solvers (ldlt.hpp) against cuSOLVER, side by side.

usage: sysv_bench [options]
  --n LIST          matrix orders, comma-separated (default 2048,4096,10424,15135)
  --precision LIST  z (complex symmetric), d (real symmetric) or both (default z,d)
  --repeat R        timed runs per routine after one warm-up; the median is reported (default 3)
  --nrhs K          right-hand sides of the solvers (default 1)
  --seed S          seed of the random matrices (default 2025)
  --only LIST       run only these rows (names as in the table, e.g. sytrf_nopiv,Zgetrf,ZYgesv)
  --matrix FILE     also a complex symmetric matrix from a file: bem solve --write-matrix's HDF5
                    (schema bem_acoustics.matrix/1: /A complex128 (n, n), /b complex128 (n,)); its rows
                    are marked "file" in the precision column, and nrhs is 1 for it
  --json FILE       results as JSON (GPU, commit, date, one object per row)
  --markdown FILE   results as a markdown table
  --help            this text

Matrices: entries uniform in [-1, 1] (both parts for z), symmetric (A^T = A, complex symmetric for z),
indefinite. Times: CUDA events on one stream around each call, inputs restored (untimed) before every
run. Errors: normwise backward error ||b - A x||_inf / (||A||_inf ||x||_inf) for every row; sysv_mixed
also reports its componentwise one. GFLOP/s: LDL^T and sytrf n^3/3, getrf 2n^3/3 (x4 for complex);
solvers (gesv, sysv_mixed) are given the time of the whole solve and the flops of their factorisation.
)";

using bench_errors::check;
using bench_errors::fail;
using bench_errors::parse_ints;
std::vector<std::string> parse_list(const std::string& text) {
    std::vector<std::string> values;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) values.push_back(item);
    return values;
}

// A counter-based generator: entry (i, j) of matrix `seed` is the same whoever computes it.
double uniform_at(std::uint64_t seed, std::uint64_t index) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + index * 0xBF58476D1CE4E5B9ULL + 0x94D049BB133111EBULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return double(z >> 11) * 0x1.0p-53 * 2 - 1;
}

template <class T>
std::vector<T> random_symmetric(int n, std::uint64_t seed, double* norm_inf) {
    std::vector<T> a(std::size_t(n) * n);
#pragma omp parallel for schedule(dynamic, 16)
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            const std::uint64_t k = std::uint64_t(j) * n + i;
            T v;
            if constexpr (std::is_same_v<T, double>) v = uniform_at(seed, k);
            else v = T(uniform_at(seed, 2 * k), uniform_at(seed, 2 * k + 1));
            a[std::size_t(j) * n + i] = v;
            a[std::size_t(i) * n + j] = v;
        }
    double worst = 0;
#pragma omp parallel for reduction(max : worst)
    for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int i = 0; i < n; ++i) s += std::abs(a[std::size_t(j) * n + i]);
        worst = std::max(worst, s);
    }
    *norm_inf = worst;  // symmetric: the 1-norm of a column is the inf-norm of a row
    return a;
}

template <class T> struct cu;
template <> struct cu<double> {
    using type = double;
    static constexpr cudaDataType data = CUDA_R_64F;
};
template <> struct cu<std::complex<double>> {
    using type = cuDoubleComplex;
    static constexpr cudaDataType data = CUDA_C_64F;
};
template <class T> typename cu<T>::type* as_cu(T* p) { return reinterpret_cast<typename cu<T>::type*>(p); }
template <class T> const typename cu<T>::type* as_cu(const T* p) { return reinterpret_cast<const typename cu<T>::type*>(p); }

template <class T>
class DeviceArray {
public:
    explicit DeviceArray(std::size_t count) : count_(count) {
        if (count) CHECK(cudaMalloc(&data_, count * sizeof(T)));
    }
    ~DeviceArray() { cudaFree(data_); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    T* get() const { return data_; }

private:
    T* data_ = nullptr;
    std::size_t count_;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size();
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

struct Row {
    std::string precision, routine, note;
    int n = 0;
    double ms = 0, gflops = 0, of_gemm = 0, backward_error = 0, componentwise = -1;
    int iterations = -1;
    bool failed = false;
};

// One problem: A (full symmetric storage, restored into `work` before each run), b, and the shared
// stream / handles. run() times `call` after `prepare` (untimed), repeats, and measures the error of
// the X that `solution` points at.
template <class T>
class Problem {
public:
    // host_a: n x n, both triangles; host_b: n x nrhs; norm_a: ||A||_inf.
    Problem(int n, int nrhs, const std::vector<T>& host_a, const std::vector<T>& host_b, double norm_a, cudaStream_t stream,
            cublasHandle_t blas, cusolverDnHandle_t solver)
        : n_(n), nrhs_(nrhs), stream_(stream), blas_(blas), solver_(solver), a_(std::size_t(n) * n), work_(std::size_t(n) * n),
          b_(std::size_t(n) * nrhs), x_(std::size_t(n) * nrhs), r_(std::size_t(n) * nrhs), norm_a_(norm_a) {
        CHECK(cudaMemcpy(a_.get(), host_a.data(), host_a.size() * sizeof(T), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(b_.get(), host_b.data(), host_b.size() * sizeof(T), cudaMemcpyHostToDevice));
    }

    int n() const { return n_; }
    int nrhs() const { return nrhs_; }
    T* a() const { return a_.get(); }
    T* work() const { return work_.get(); }
    T* b() const { return b_.get(); }
    T* x() const { return x_.get(); }
    cudaStream_t stream() const { return stream_; }
    cublasHandle_t blas() const { return blas_; }
    cusolverDnHandle_t solver() const { return solver_; }

    void restore_work() const {
        CHECK(cudaMemcpyAsync(work_.get(), a_.get(), std::size_t(n_) * n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
    }
    void b_into_x() const {
        CHECK(cudaMemcpyAsync(x_.get(), b_.get(), std::size_t(n_) * nrhs_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
    }

    // Median milliseconds of `repeat` runs after one warm-up.
    double time(int repeat, const std::function<void()>& prepare, const std::function<void()>& call) const {
        cudaEvent_t start, stop;
        CHECK(cudaEventCreate(&start));
        CHECK(cudaEventCreate(&stop));
        std::vector<double> ms;
        for (int k = 0; k <= repeat; ++k) {
            prepare();
            CHECK(cudaEventRecord(start, stream_));
            call();
            CHECK(cudaEventRecord(stop, stream_));
            CHECK(cudaEventSynchronize(stop));
            float elapsed = 0;
            CHECK(cudaEventElapsedTime(&elapsed, start, stop));
            if (k > 0) ms.push_back(elapsed);
        }
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        return median(ms);
    }

    // ||b - A x||_inf / (||A||_inf ||x||_inf), worst right-hand side, for X in x().
    double backward_error() const {
        CHECK(cudaMemcpyAsync(r_.get(), b_.get(), std::size_t(n_) * nrhs_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
        const T minus_one(-1), one(1);
        if constexpr (std::is_same_v<T, double>)
            CHECK(cublasDgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n_, nrhs_, n_, &minus_one, a_.get(), n_, x_.get(), n_, &one, r_.get(), n_));
        else
            CHECK(cublasZgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n_, nrhs_, n_, as_cu(&minus_one), as_cu(a_.get()), n_, as_cu(x_.get()), n_,
                              as_cu(&one), as_cu(r_.get()), n_));
        std::vector<T> r(std::size_t(n_) * nrhs_), x(r.size());
        CHECK(cudaMemcpyAsync(r.data(), r_.get(), r.size() * sizeof(T), cudaMemcpyDeviceToHost, stream_));
        CHECK(cudaMemcpyAsync(x.data(), x_.get(), x.size() * sizeof(T), cudaMemcpyDeviceToHost, stream_));
        CHECK(cudaStreamSynchronize(stream_));
        double worst = 0;
        for (int c = 0; c < nrhs_; ++c) {
            double rm = 0, xm = 0;
            for (int i = 0; i < n_; ++i) {
                rm = std::max(rm, double(std::abs(r[std::size_t(c) * n_ + i])));
                xm = std::max(xm, double(std::abs(x[std::size_t(c) * n_ + i])));
            }
            const double e = rm / (norm_a_ * xm);
            worst = std::isnan(e) ? e : std::max(worst, e);
        }
        return worst;
    }

private:
    int n_, nrhs_;
    cudaStream_t stream_;
    cublasHandle_t blas_;
    cusolverDnHandle_t solver_;
    DeviceArray<T> a_, work_, b_, x_, r_;
    double norm_a_ = 0;
};

// GFLOP/s of square GEMM of order min(n, 8192) in this precision: the scale of "fraction of GEMM".
template <class T>
double gemm_gflops(int n, cudaStream_t stream, cublasHandle_t blas, int repeat) {
    const int m = std::min(n, 8192);
    DeviceArray<T> a(std::size_t(m) * m), b(std::size_t(m) * m), c(std::size_t(m) * m);
    CHECK(cudaMemsetAsync(a.get(), 0, std::size_t(m) * m * sizeof(T), stream));
    CHECK(cudaMemsetAsync(b.get(), 0, std::size_t(m) * m * sizeof(T), stream));
    const T one(1), zero(0);
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<double> ms;
    for (int k = 0; k <= repeat; ++k) {
        CHECK(cudaEventRecord(start, stream));
        if constexpr (std::is_same_v<T, double>)
            CHECK(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a.get(), m, b.get(), m, &zero, c.get(), m));
        else
            CHECK(cublasZgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, as_cu(&one), as_cu(a.get()), m, as_cu(b.get()), m, as_cu(&zero),
                              as_cu(c.get()), m));
        CHECK(cudaEventRecord(stop, stream));
        CHECK(cudaEventSynchronize(stop));
        float e = 0;
        CHECK(cudaEventElapsedTime(&e, start, stop));
        if (k) ms.push_back(e);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    const double flops = (std::is_same_v<T, double> ? 2.0 : 8.0) * double(m) * m * m;
    return flops / (median(ms) * 1e-3) / 1e9;
}

// GFLOP/s of the lower triangle's update C -= A B^T (cuBLAS ?syrkx, what sytrf_nopiv's trailing
// updates call) at order m = min(n, 8192) / 2 and rank m, counting only the triangle's flops: beside the
// GEMM rate it says how much of GEMM's speed the trailing updates can reach.
// The same triangle's update split recursively: C11 and C22 (recursion, ?syrkx at or below `leaf`) and
// the square C21 by one GEMM, as an alternative for sytrf_nopiv's trailing updates.
template <class T>
void lower_update_split(cublasHandle_t blas, int m, int k, const T* a, const T* b, T* c, int ld, int leaf) {
    const T minus_one(-1), one(1);
    if (m <= leaf) {
        if constexpr (std::is_same_v<T, double>)
            CHECK(cublasDsyrkx(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, m, k, &minus_one, a, ld, b, ld, &one, c, ld));
        else
            CHECK(cublasZsyrkx(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, m, k, as_cu(&minus_one), as_cu(a), ld, as_cu(b), ld, as_cu(&one),
                               as_cu(c), ld));
        return;
    }
    const int m1 = m / 2, m2 = m - m1;
    lower_update_split(blas, m1, k, a, b, c, ld, leaf);
    if constexpr (std::is_same_v<T, double>)
        CHECK(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, m2, m1, k, &minus_one, a + m1, ld, b, ld, &one, c + m1, ld));
    else
        CHECK(cublasZgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, m2, m1, k, as_cu(&minus_one), as_cu(a + m1), ld, as_cu(b), ld, as_cu(&one),
                          as_cu(c + m1), ld));
    lower_update_split(blas, m2, k, a + m1, b + m1, c + std::size_t(m1) * ld + m1, ld, leaf);
}

// GFLOP/s of the triangle's update at order and rank min(n, 8192) / 2: leaf == 0 one ?syrkx call,
// else lower_update_split with that leaf.
template <class T>
double syrkx_gflops(int n, cudaStream_t stream, cublasHandle_t blas, int repeat, int leaf) {
    const int m = std::min(n, 8192) / 2;
    DeviceArray<T> a(std::size_t(m) * m), b(std::size_t(m) * m), c(std::size_t(m) * m);
    CHECK(cudaMemsetAsync(a.get(), 0, std::size_t(m) * m * sizeof(T), stream));
    CHECK(cudaMemsetAsync(b.get(), 0, std::size_t(m) * m * sizeof(T), stream));
    CHECK(cudaMemsetAsync(c.get(), 0, std::size_t(m) * m * sizeof(T), stream));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<double> ms;
    for (int k = 0; k <= repeat; ++k) {
        CHECK(cudaEventRecord(start, stream));
        lower_update_split<T>(blas, m, m, a.get(), b.get(), c.get(), m, leaf == 0 ? m : leaf);
        CHECK(cudaEventRecord(stop, stream));
        CHECK(cudaEventSynchronize(stop));
        float e = 0;
        CHECK(cudaEventElapsedTime(&e, start, stop));
        if (k) ms.push_back(e);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    const double flops = (std::is_same_v<T, double> ? 1.0 : 4.0) * double(m) * (m + 1) * m;
    return flops / (median(ms) * 1e-3) / 1e9;
}

struct Settings {
    std::vector<int> sizes{2048, 4096, 10424, 15135};
    std::vector<std::string> precisions{"z", "d"};
    std::vector<std::string> only;
    int repeat = 3, nrhs = 1;
    std::uint64_t seed = 2025;
    std::string json_file, markdown_file, matrix_file;
    bool wanted(const std::string& name) const { return only.empty() || std::find(only.begin(), only.end(), name) != only.end(); }
};

// Runs every row on `pr`; `label` goes into the precision column ("z", "d" or "file").
template <class T>
void run_problem(const Settings& settings, const Problem<T>& pr, const std::string& label, Context& ctx, cublasHandle_t blas,
                 cusolverDnHandle_t solver, double gemm_rate, std::vector<Row>& rows) {
    (void)blas;
    constexpr bool complex_case = !std::is_same_v<T, double>;
    const int n = pr.n();
    const std::string p = label;
    const std::string P = complex_case ? "Z" : "D";
    const double scale = complex_case ? 4.0 : 1.0;
    const double ldlt_flops = scale * double(n) * n * n / 3, lu_flops = 2 * ldlt_flops;
    const int repeat = settings.repeat, nrhs = pr.nrhs();
    auto add = [&](const std::string& routine, double ms, double flops, double error, const std::string& note = "",
                   int iterations = -1, double componentwise = -1) {
        Row r;
        r.precision = p, r.routine = routine, r.n = n, r.ms = ms, r.note = note;
        r.gflops = flops / (ms * 1e-3) / 1e9;
        r.of_gemm = r.gflops / gemm_rate;
        r.backward_error = error, r.iterations = iterations, r.componentwise = componentwise;
        r.failed = !(error < 1e-6) || std::isnan(error);
        rows.push_back(r);
        std::printf("%-2s %6d  %-18s %10.2f ms %9.1f GFLOP/s %5.2f of GEMM  berr %9.2e%s%s\n", p.c_str(), n, routine.c_str(), ms,
                    r.gflops, r.of_gemm, error, note.empty() ? "" : "  ", note.c_str());
        std::fflush(stdout);
    };
    DeviceArray<int> info(1);
    DeviceArray<int> ipiv(n);
    DeviceArray<std::int64_t> ipiv64(n);

    // ---- ours: sytrf_nopiv (+ sytrs_nopiv for the error) ----
    if (complex_case && settings.wanted("sytrf_nopiv")) {
        ctx.workspace(sytrf_nopiv_workspace_size<T>(n, ctx));
        const double ms = pr.time(repeat, [&] { pr.restore_work(); },
                                  [&] { sytrf_nopiv(Symmetry::symmetric, Uplo::lower, n, pr.work(), n, info.get(), ctx); });
        int host_info = 0;
        CHECK(cudaMemcpy(&host_info, info.get(), sizeof(int), cudaMemcpyDeviceToHost));
        pr.b_into_x();
        sytrs_nopiv(Symmetry::symmetric, Uplo::lower, n, nrhs, pr.work(), n, pr.x(), n, ctx);
        add("sytrf_nopiv", ms, ldlt_flops, pr.backward_error(), host_info ? "info " + std::to_string(host_info) : "no refinement");
    }
    // ---- ours: sysv_mixed (low-precision factor + refinement, fallback chain) ----
    for (bool tf32 : {false, true}) {
        const std::string name = tf32 ? "sysv_mixed_tf32" : "sysv_mixed";
        if (!settings.wanted(name)) continue;
        SysvOptions options;
        options.tensor_core_updates = tf32;
        ctx.workspace(sysv_mixed_workspace_size<T>(Symmetry::symmetric, n, nrhs, options, ctx));
        SysvResult result;
        const double ms = pr.time(repeat, [] {}, [&] {
            result = sysv_mixed(Symmetry::symmetric, Uplo::lower, n, nrhs, pr.a(), n, pr.b(), n, pr.x(), n, options, ctx);
        });
        add(name, ms, ldlt_flops, pr.backward_error(), result.describe(), result.iterations, result.backward_error);
    }
    // ---- cuSOLVER getrf (+ getrs) ----
    if (settings.wanted(P + "getrf")) {
        int lwork = 0;
        if constexpr (complex_case) CHECK(cusolverDnZgetrf_bufferSize(solver, n, n, as_cu(pr.work()), n, &lwork));
        else CHECK(cusolverDnDgetrf_bufferSize(solver, n, n, pr.work(), n, &lwork));
        DeviceArray<T> w(std::max(lwork, 1));
        const double ms = pr.time(repeat, [&] { pr.restore_work(); }, [&] {
            if constexpr (complex_case) CHECK(cusolverDnZgetrf(solver, n, n, as_cu(pr.work()), n, as_cu(w.get()), ipiv.get(), info.get()));
            else CHECK(cusolverDnDgetrf(solver, n, n, pr.work(), n, w.get(), ipiv.get(), info.get()));
        });
        pr.b_into_x();
        if constexpr (complex_case) CHECK(cusolverDnZgetrs(solver, CUBLAS_OP_N, n, nrhs, as_cu(pr.work()), n, ipiv.get(), as_cu(pr.x()), n, info.get()));
        else CHECK(cusolverDnDgetrs(solver, CUBLAS_OP_N, n, nrhs, pr.work(), n, ipiv.get(), pr.x(), n, info.get()));
        add(P + "getrf", ms, lu_flops, pr.backward_error(), "factor only; error via getrs");
    }
    // ---- cuSOLVER sytrf (Bunch-Kaufman; + Xsytrs) ----
    if (settings.wanted(P + "sytrf")) {
        int lwork = 0;
        if constexpr (complex_case) CHECK(cusolverDnZsytrf_bufferSize(solver, n, as_cu(pr.work()), n, &lwork));
        else CHECK(cusolverDnDsytrf_bufferSize(solver, n, pr.work(), n, &lwork));
        DeviceArray<T> w(std::max(lwork, 1));
        const double ms = pr.time(repeat, [&] { pr.restore_work(); }, [&] {
            if constexpr (complex_case)
                CHECK(cusolverDnZsytrf(solver, CUBLAS_FILL_MODE_LOWER, n, as_cu(pr.work()), n, ipiv.get(), as_cu(w.get()), lwork, info.get()));
            else CHECK(cusolverDnDsytrf(solver, CUBLAS_FILL_MODE_LOWER, n, pr.work(), n, ipiv.get(), w.get(), lwork, info.get()));
        });
        std::vector<int> host_ipiv(n);
        CHECK(cudaMemcpy(host_ipiv.data(), ipiv.get(), n * sizeof(int), cudaMemcpyDeviceToHost));
        std::vector<std::int64_t> wide(host_ipiv.begin(), host_ipiv.end());
        CHECK(cudaMemcpy(ipiv64.get(), wide.data(), n * sizeof(std::int64_t), cudaMemcpyHostToDevice));
        std::size_t device_bytes = 0, host_bytes = 0;
        CHECK(cusolverDnXsytrs_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, n, nrhs, cu<T>::data, pr.work(), n, ipiv64.get(), cu<T>::data,
                                          pr.x(), n, &device_bytes, &host_bytes));
        DeviceArray<char> dw(std::max<std::size_t>(device_bytes, 1));
        std::vector<char> hw(host_bytes + 1);
        pr.b_into_x();
        CHECK(cusolverDnXsytrs(solver, CUBLAS_FILL_MODE_LOWER, n, nrhs, cu<T>::data, pr.work(), n, ipiv64.get(), cu<T>::data, pr.x(), n,
                               dw.get(), device_bytes, hw.data(), host_bytes, info.get()));
        add(P + "sytrf", ms, ldlt_flops, pr.backward_error(), "factor only; error via Xsytrs");
    }
    // ---- cuSOLVER IRS refinement solvers ----
    using Gesv = cusolverStatus_t (*)(cusolverDnHandle_t, cusolver_int_t, cusolver_int_t, typename cu<T>::type*, cusolver_int_t,
                                      cusolver_int_t*, typename cu<T>::type*, cusolver_int_t, typename cu<T>::type*, cusolver_int_t, void*,
                                      size_t, cusolver_int_t*, cusolver_int_t*);
    using GesvSize = cusolverStatus_t (*)(cusolverDnHandle_t, cusolver_int_t, cusolver_int_t, typename cu<T>::type*, cusolver_int_t,
                                          cusolver_int_t*, typename cu<T>::type*, cusolver_int_t, typename cu<T>::type*, cusolver_int_t,
                                          void*, size_t*);
    struct Irs {
        std::string name;
        Gesv run;
        GesvSize size;
        const char* lowest;
    };
    std::vector<Irs> irs;
    if constexpr (complex_case)
        irs = {{"ZZgesv", cusolverDnZZgesv, cusolverDnZZgesv_bufferSize, "z"},
               {"ZCgesv", cusolverDnZCgesv, cusolverDnZCgesv_bufferSize, "c"},
               {"ZKgesv", cusolverDnZKgesv, cusolverDnZKgesv_bufferSize, "fp16"},
               {"ZEgesv", cusolverDnZEgesv, cusolverDnZEgesv_bufferSize, "bf16"},
               {"ZYgesv", cusolverDnZYgesv, cusolverDnZYgesv_bufferSize, "tf32"}};
    else
        irs = {{"DDgesv", cusolverDnDDgesv, cusolverDnDDgesv_bufferSize, "d"},
               {"DSgesv", cusolverDnDSgesv, cusolverDnDSgesv_bufferSize, "s"},
               {"DHgesv", cusolverDnDHgesv, cusolverDnDHgesv_bufferSize, "fp16"},
               {"DBgesv", cusolverDnDBgesv, cusolverDnDBgesv_bufferSize, "bf16"},
               {"DXgesv", cusolverDnDXgesv, cusolverDnDXgesv_bufferSize, "tf32"}};
    for (const Irs& s : irs) {
        if (!settings.wanted(s.name)) continue;
        std::size_t bytes = 0;
        CHECK(s.size(solver, n, nrhs, as_cu(pr.work()), n, ipiv.get(), as_cu(pr.b()), n, as_cu(pr.x()), n, nullptr, &bytes));
        DeviceArray<char> w(std::max<std::size_t>(bytes, 1));
        int iterations = 0;
        const double ms = pr.time(repeat, [&] { pr.restore_work(); }, [&] {
            CHECK(s.run(solver, n, nrhs, as_cu(pr.work()), n, ipiv.get(), as_cu(pr.b()), n, as_cu(pr.x()), n, w.get(), bytes, &iterations,
                        info.get()));
        });
        // iter < 0: the refinement failed and cuSOLVER fell back to the full-precision LU.
        add(s.name, ms, lu_flops, pr.backward_error(),
            std::string("lowest ") + s.lowest + (iterations < 0 ? ", fell back (iter " + std::to_string(iterations) + ")" : ""), iterations);
    }
}

// A random symmetric problem of order n (entries uniform in [-1, 1]).
template <class T>
void run_size(const Settings& settings, int n, Context& ctx, cublasHandle_t blas, cusolverDnHandle_t solver, double gemm_rate,
              std::vector<Row>& rows) {
    constexpr bool complex_case = !std::is_same_v<T, double>;
    const std::uint64_t seed = settings.seed + n + (complex_case ? 7 : 0);
    double norm_a = 0;
    std::vector<T> b(std::size_t(n) * settings.nrhs);
    for (std::size_t k = 0; k < b.size(); ++k) {
        if constexpr (std::is_same_v<T, double>) b[k] = uniform_at(seed + 1, k);
        else b[k] = T(uniform_at(seed + 1, 2 * k), uniform_at(seed + 1, 2 * k + 1));
    }
    // The matrix first: norm_a is an output of random_symmetric, and argument evaluation order is unspecified.
    std::vector<T> a = random_symmetric<T>(n, seed, &norm_a);
    const Problem<T> pr(n, settings.nrhs, a, b, norm_a, static_cast<cudaStream_t>(ctx.stream()), blas, solver);
    a.clear();
    a.shrink_to_fit();
    run_problem(settings, pr, complex_case ? "z" : "d", ctx, blas, solver, gemm_rate, rows);
}

// The BEM matrix of bem solve --write-matrix (schema bem_acoustics.matrix/1).
void run_file(const Settings& settings, Context& ctx, cublasHandle_t blas, cusolverDnHandle_t solver, double gemm_rate,
              std::vector<Row>& rows) {
    using Z = std::complex<double>;
    namespace h5 = batchsolve::io::h5;
    const h5::File file = h5::File::open(settings.matrix_file);
    const h5::Shape shape = file.shape("/A");
    if (shape.size() != 2 || shape[0] != shape[1] || shape[0] < 1 || shape[0] > 100000)
        fail(settings.matrix_file + ": /A: a square matrix of order 1 to 100000 expected, got " + h5::shape_text(shape));
    const int n = int(shape[0]);
    std::vector<Z> a = file.read_exact<Z>("/A", shape);
    const std::vector<Z> b = file.read_exact<Z>("/b", h5::Shape{shape[0]});
    // Symmetric, so the row-major file reads the same column-major; check it rather than trust it.
    double norm_a = 0, asymmetry = 0, largest = 0;
    for (int j = 0; j < n; ++j) {
        double column = 0;
        for (int i = 0; i < n; ++i) {
            const Z v = a[std::size_t(j) * n + i];
            column += std::abs(v);
            largest = std::max(largest, std::abs(v));
            if (i > j) asymmetry = std::max(asymmetry, std::abs(v - a[std::size_t(i) * n + j]));
        }
        norm_a = std::max(norm_a, column);
    }
    if (!(asymmetry <= 1e-12 * largest))
        fail(settings.matrix_file + ": /A: not complex symmetric (max |a_ij - a_ji| = " + std::to_string(asymmetry) + ")");
    std::printf("file %s: n = %d, ||A||_inf = %.3e\n", settings.matrix_file.c_str(), n, norm_a);
    const Problem<Z> pr(n, 1, a, b, norm_a, static_cast<cudaStream_t>(ctx.stream()), blas, solver);
    a.clear();
    a.shrink_to_fit();
    run_problem(settings, pr, "file", ctx, blas, solver, gemm_rate, rows);
}

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
            settings.precisions = parse_list(value());
            for (auto& p : settings.precisions)
                if (p != "z" && p != "d") fail("invalid --precision '" + p + "' (z or d)");
        } else if (arg == "--repeat") settings.repeat = parse_ints(value(), "--repeat").at(0);
        else if (arg == "--nrhs") settings.nrhs = parse_ints(value(), "--nrhs").at(0);
        else if (arg == "--seed") settings.seed = std::strtoull(value().c_str(), nullptr, 0);
        else if (arg == "--only") settings.only = parse_list(value());
        else if (arg == "--json") settings.json_file = value();
        else if (arg == "--matrix") settings.matrix_file = value();
        else if (arg == "--markdown") settings.markdown_file = value();
        else fail("unknown option '" + arg + "' (see --help)");
    }
    if (!Context::cuda_available()) {
        std::cout << "sysv_bench: skipped: no GPU\n";
        return 0;
    }
    Context ctx(Backend::cuda);
    cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream());
    cublasHandle_t blas;
    cusolverDnHandle_t solver;
    CHECK(cublasCreate(&blas));
    CHECK(cublasSetStream(blas, stream));
    CHECK(cusolverDnCreate(&solver));
    CHECK(cusolverDnSetStream(solver, stream));

    std::vector<Row> rows;
    json gemm_rates = json::object();
    for (const std::string& p : settings.precisions) {
        const int largest = *std::max_element(settings.sizes.begin(), settings.sizes.end());
        const double rate = p == "z" ? gemm_gflops<std::complex<double>>(largest, stream, blas, settings.repeat)
                                     : gemm_gflops<double>(largest, stream, blas, settings.repeat);
        gemm_rates[p] = rate;
        std::printf("%sGEMM rate (order %d): %.1f GFLOP/s\n", p == "z" ? "Z" : "D", std::min(largest, 8192), rate);
        for (int leaf : {0, 256, 512, 1024}) {
            const double syrkx_rate = p == "z" ? syrkx_gflops<std::complex<double>>(largest, stream, blas, settings.repeat, leaf)
                                               : syrkx_gflops<double>(largest, stream, blas, settings.repeat, leaf);
            gemm_rates[p + "_lower_update_leaf" + std::to_string(leaf)] = syrkx_rate;
            std::printf("  lower-triangle update, order and rank %d, %s: %.1f GFLOP/s (triangle's flops)\n", std::min(largest, 8192) / 2,
                        leaf == 0 ? "one SYRKX" : ("GEMM split, SYRKX at <= " + std::to_string(leaf)).c_str(), syrkx_rate);
        }
        for (int n : settings.sizes) {
            if (p == "z") run_size<std::complex<double>>(settings, n, ctx, blas, solver, rate, rows);
            else run_size<double>(settings, n, ctx, blas, solver, rate, rows);
        }
        if (p == "z" && !settings.matrix_file.empty()) {
            try {
                run_file(settings, ctx, blas, solver, rate, rows);
            } catch (const std::exception& e) {
                fail(e.what());
            }
        }
    }

    // The targets of issue 25, per size: sysv_mixed z vs the fastest IRS, sytrf_nopiv z vs Zgetrf and Zsytrf.
    std::printf("\nsummary (ratios of times, same run):\n");
    json summary = json::array();
    std::vector<int> summary_sizes = settings.sizes;
    for (const Row& r : rows)
        if (r.precision == "file" && std::find(summary_sizes.begin(), summary_sizes.end(), r.n) == summary_sizes.end())
            summary_sizes.push_back(r.n);
    for (int n : summary_sizes) {
        auto find = [&](const std::string& p, const std::string& routine) -> const Row* {
            for (const Row& r : rows)
                if (r.precision == p && r.routine == routine && r.n == n) return &r;
            return nullptr;
        };
        for (const std::string p : {"z", "d", "file"}) {
            const Row* mixed = find(p, "sysv_mixed");
            const Row* mixed_tf32 = find(p, "sysv_mixed_tf32");
            if (mixed && mixed_tf32 && mixed_tf32->ms < mixed->ms && !mixed_tf32->failed) mixed = mixed_tf32;
            const Row* fastest = nullptr;
            for (const Row& r : rows)
                if (r.precision == p && r.n == n && r.routine.size() == 6 && r.routine.substr(2) == "gesv" && !r.failed &&
                    (!fastest || r.ms < fastest->ms))
                    fastest = &r;
            if (mixed && fastest) {
                std::printf("  %s n=%-6d %s / fastest IRS (%s) = %.3f  (target <= 0.5)\n", p.c_str(), n, mixed->routine.c_str(),
                            fastest->routine.c_str(), mixed->ms / fastest->ms);
                summary.push_back({{"precision", p}, {"n", n}, {"ratio", mixed->routine + "/" + fastest->routine}, {"value", mixed->ms / fastest->ms},
                                   {"target", "<= 0.5"}});
            }
        }
        for (const std::string p : {"z", "file"}) {
            const Row* ours = find(p, "sytrf_nopiv");
            for (const std::string other : {"Zgetrf", "Zsytrf"}) {
                const Row* them = find(p, other);
                if (ours && them) {
                    const double speedup = them->ms / ours->ms;
                    std::printf("  %s n=%-6d %s / sytrf_nopiv = %.2fx  (target >= %s)\n", p.c_str(), n, other.c_str(), speedup,
                                other == "Zgetrf" ? "1.8" : "4");
                    summary.push_back({{"precision", p}, {"n", n}, {"ratio", other + "/sytrf_nopiv"}, {"value", speedup},
                                       {"target", other == "Zgetrf" ? ">= 1.8" : ">= 4"}});
                }
            }
        }
    }

    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, ctx.device()));
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    if (!settings.json_file.empty()) {
        json out = {{"gpu", prop.name}, {"commit", git_commit()}, {"date", date}, {"cuda_runtime", runtime},
                    {"repeat", settings.repeat}, {"nrhs", settings.nrhs}, {"seed", settings.seed}, {"gemm_gflops", gemm_rates},
                    {"summary", summary}, {"rows", json::array()}};
        for (const Row& r : rows)
            out["rows"].push_back({{"precision", r.precision}, {"routine", r.routine}, {"n", r.n}, {"ms", r.ms}, {"gflops", r.gflops},
                                   {"fraction_of_gemm", r.of_gemm}, {"backward_error", r.backward_error},
                                   {"componentwise_backward_error", r.componentwise}, {"iterations", r.iterations}, {"note", r.note}});
        std::ofstream(settings.json_file) << out.dump(2) << "\n";
    }
    if (!settings.markdown_file.empty()) {
        std::ofstream md(settings.markdown_file);
        md << "# sysv_bench: " << prop.name << ", commit " << git_commit() << ", " << date << "\n\n";
        md << "Median of " << settings.repeat << " runs after a warm-up; nrhs " << settings.nrhs << ". GEMM rate:";
        for (auto& [k, v] : gemm_rates.items()) md << " " << k << " " << v.get<double>() << " GFLOP/s";
        md << "\n\n| prec | n | routine | ms | GFLOP/s | of GEMM | backward error | iter | note |\n|---|---|---|---|---|---|---|---|---|\n";
        for (const Row& r : rows) {
            char line[512];
            std::snprintf(line, sizeof line, "| %s | %d | %s | %.2f | %.1f | %.2f | %.2e | %s | %s |\n", r.precision.c_str(), r.n, r.routine.c_str(),
                          r.ms, r.gflops, r.of_gemm, r.backward_error, r.iterations == -1 ? "" : std::to_string(r.iterations).c_str(),
                          r.note.c_str());
            md << line;
        }
        md << "\n## Targets (issue 25)\n\n| prec | n | ratio | value | target |\n|---|---|---|---|---|\n";
        for (const auto& s : summary)
            md << "| " << s["precision"].get<std::string>() << " | " << s["n"].get<int>() << " | " << s["ratio"].get<std::string>() << " | "
               << s["value"].get<double>() << " | " << s["target"].get<std::string>() << " |\n";
    }
    cusolverDnDestroy(solver);
    cublasDestroy(blas);
    int failed = 0;
    for (const Row& r : rows) failed += r.failed;
    std::printf("sysv_bench: %zu rows, %d with a backward error above 1e-6 or NaN\n", rows.size(), failed);
    return 0;
}
