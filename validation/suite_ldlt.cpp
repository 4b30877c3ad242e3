// The tester's symmetric indefinite solvers (ldlt.hpp): sytrf_nopiv (+ sytrs_nopiv for its error) and
// sysv_mixed on one matrix of order n, against cuSOLVER's getrf and sytrf (factorisations) and its
// IRS solvers ?gesv (whole solves). Errors: the normwise backward error in units of n u (a row fails
// at --tol; validation/README.md derives the bound).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve_io/hdf5.hpp"
#include "suite_cuda.hpp"

namespace batchsolve::validation::suite {

namespace {

// A counter-based generator: entry (i, j) of matrix `seed` is the same whoever computes it.
double uniform_at(std::uint64_t seed, std::uint64_t index) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + index * 0xBF58476D1CE4E5B9ULL + 0x94D049BB133111EBULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return double(z >> 11) * 0x1.0p-53 * 2 - 1;
}

// Entries uniform in [-1, 1] (both parts for z), symmetric (A^T = A: complex symmetric for z), indefinite.
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

// One problem: A (both triangles, restored into `work` before each factorisation), B, X, and the
// handles, all on the context's stream.
template <class T>
class Problem {
public:
    Problem(int n, int nrhs, const std::vector<T>& host_a, const std::vector<T>& host_b, double norm_a, cudaStream_t stream,
            cublasHandle_t blas)
        : n_(n), nrhs_(nrhs), stream_(stream), blas_(blas), a_(std::size_t(n) * n), work_(std::size_t(n) * n),
          b_(std::size_t(n) * nrhs), x_(std::size_t(n) * nrhs), r_(std::size_t(n) * nrhs), norm_a_(norm_a) {
        SUITE_CHECK(cudaMemcpy(a_.get(), host_a.data(), host_a.size() * sizeof(T), cudaMemcpyHostToDevice));
        SUITE_CHECK(cudaMemcpy(b_.get(), host_b.data(), host_b.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    int n() const { return n_; }
    int nrhs() const { return nrhs_; }
    T* a() const { return a_.get(); }
    T* work() const { return work_.get(); }
    T* b() const { return b_.get(); }
    T* x() const { return x_.get(); }
    void restore_work() const {
        SUITE_CHECK(cudaMemcpyAsync(work_.get(), a_.get(), std::size_t(n_) * n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
    }
    void b_into_x() const {
        SUITE_CHECK(cudaMemcpyAsync(x_.get(), b_.get(), std::size_t(n_) * nrhs_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
    }
    // ||b - A x||_inf / (||A||_inf ||x||_inf), worst right-hand side, for X in x().
    double backward_error() const {
        SUITE_CHECK(cudaMemcpyAsync(r_.get(), b_.get(), std::size_t(n_) * nrhs_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
        const T minus_one(-1), one(1);
        if constexpr (std::is_same_v<T, double>)
            SUITE_CHECK(cublasDgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n_, nrhs_, n_, &minus_one, a_.get(), n_, x_.get(), n_, &one,
                                    r_.get(), n_));
        else
            SUITE_CHECK(cublasZgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n_, nrhs_, n_, as_cu(&minus_one), as_cu(a_.get()), n_,
                                    as_cu(x_.get()), n_, as_cu(&one), as_cu(r_.get()), n_));
        std::vector<T> r(std::size_t(n_) * nrhs_), x(r.size());
        SUITE_CHECK(cudaMemcpyAsync(r.data(), r_.get(), r.size() * sizeof(T), cudaMemcpyDeviceToHost, stream_));
        SUITE_CHECK(cudaMemcpyAsync(x.data(), x_.get(), x.size() * sizeof(T), cudaMemcpyDeviceToHost, stream_));
        SUITE_CHECK(cudaStreamSynchronize(stream_));
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
    DeviceArray<T> a_, work_, b_, x_, r_;
    double norm_a_ = 0;
};

// GFLOP/s of square GEMM of order min(n, 8192) in this precision: the roofline column's bound.
template <class T>
double gemm_gflops(int n, cudaStream_t stream, cublasHandle_t blas, int warmup, int repeat) {
    const int m = std::min(n, 8192);
    DeviceArray<T> a(std::size_t(m) * m), b(std::size_t(m) * m), c(std::size_t(m) * m);
    SUITE_CHECK(cudaMemsetAsync(a.get(), 0, std::size_t(m) * m * sizeof(T), stream));
    SUITE_CHECK(cudaMemsetAsync(b.get(), 0, std::size_t(m) * m * sizeof(T), stream));
    const T one(1), zero(0);
    const double ms = time_ms(stream, warmup, repeat, [] {}, [&] {
        if constexpr (std::is_same_v<T, double>)
            SUITE_CHECK(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a.get(), m, b.get(), m, &zero, c.get(), m));
        else
            SUITE_CHECK(cublasZgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, as_cu(&one), as_cu(a.get()), m, as_cu(b.get()), m,
                                    as_cu(&zero), as_cu(c.get()), m));
    });
    const double flops = (std::is_same_v<T, double> ? 2.0 : 8.0) * double(m) * m * m;
    return flops / (ms * 1e-3) / 1e9;
}

struct Handles {
    cudaStream_t stream;
    cublasHandle_t blas = nullptr;
    cusolverDnHandle_t solver = nullptr;
    explicit Handles(Context& ctx) : stream(static_cast<cudaStream_t>(ctx.stream())) {
        SUITE_CHECK(cublasCreate(&blas));
        SUITE_CHECK(cublasSetStream(blas, stream));
        SUITE_CHECK(cusolverDnCreate(&solver));
        SUITE_CHECK(cusolverDnSetStream(solver, stream));
    }
    ~Handles() {
        cusolverDnDestroy(solver);
        cublasDestroy(blas);
    }
};

// The rows of one problem; `label` is the precision column ("z", "d" or "file").
template <class T>
void run_problem(const std::string& routine, const Options& o, const Problem<T>& pr, const std::string& label, Context& ctx,
                 Handles& h, double gemm_rate, const Sink& sink) {
    constexpr bool complex_case = !std::is_same_v<T, double>;
    const int n = pr.n(), nrhs = pr.nrhs(), W = o.warmup, R = o.repeat;
    const double u = std::numeric_limits<double>::epsilon() / 2;
    const double scale = complex_case ? 4.0 : 1.0;
    const double ldlt_flops = scale * double(n) * n * n / 3, lu_flops = 2 * ldlt_flops;
    const std::string P = complex_case ? "Z" : "D";
    const cudaStream_t stream = h.stream;
    cusolverDnHandle_t solver = h.solver;
    DeviceArray<int> info(1);
    DeviceArray<int> ipiv(n);
    DeviceArray<std::int64_t> ipiv64(n);
    const auto gflops = [](double flops, double ms) { return flops / (ms * 1e-3) / 1e9; };

    Row base;
    base.routine = routine, base.precision = label, base.n = n, base.nrhs = nrhs;
    base.shape = "n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs);
    base.error_definition = "||b - A x||_inf / (||A||_inf ||x||_inf n u), worst right-hand side";
    base.roofline_basis = "cuBLAS " + P + "GEMM at order " + std::to_string(std::min(n, 8192)) + ", same run";
    base.detail = {{"gemm_gflops", gemm_rate}};
    const bool peers = wants(o, "cusolver");

    if (routine == "sytrf_nopiv") {
        Row r = base;
        r.flops = ldlt_flops;
        ctx.workspace(sytrf_nopiv_workspace_size<T>(n, ctx));
        r.ms = time_ms(stream, W, R, [&] { pr.restore_work(); },
                       [&] { sytrf_nopiv(Symmetry::symmetric, Uplo::lower, n, pr.work(), n, info.get(), ctx); });
        r.ran = true;
        int host_info = 0;
        SUITE_CHECK(cudaMemcpy(&host_info, info.get(), sizeof(int), cudaMemcpyDeviceToHost));
        pr.b_into_x();
        sytrs_nopiv(Symmetry::symmetric, Uplo::lower, n, nrhs, pr.work(), n, pr.x(), n, ctx);
        r.checked = true;
        r.error = pr.backward_error() / (n * u);
        r.gflops = gflops(r.flops, r.ms);
        r.roofline = r.gflops / gemm_rate;
        r.note = host_info ? "info " + std::to_string(host_info) : "";
        if (peers) {
            // cuSOLVER's factorisations alone (getrs / Xsytrs after them only for the error).
            Peer getrf;
            getrf.name = "cusolver:" + P + "getrf";
            int lwork = 0;
            if constexpr (complex_case) SUITE_CHECK(cusolverDnZgetrf_bufferSize(solver, n, n, as_cu(pr.work()), n, &lwork));
            else SUITE_CHECK(cusolverDnDgetrf_bufferSize(solver, n, n, pr.work(), n, &lwork));
            {
                DeviceArray<T> w(std::max(lwork, 1));
                getrf.ms = time_ms(stream, W, R, [&] { pr.restore_work(); }, [&] {
                    if constexpr (complex_case)
                        SUITE_CHECK(cusolverDnZgetrf(solver, n, n, as_cu(pr.work()), n, as_cu(w.get()), ipiv.get(), info.get()));
                    else SUITE_CHECK(cusolverDnDgetrf(solver, n, n, pr.work(), n, w.get(), ipiv.get(), info.get()));
                });
            }
            pr.b_into_x();
            if constexpr (complex_case)
                SUITE_CHECK(cusolverDnZgetrs(solver, CUBLAS_OP_N, n, nrhs, as_cu(pr.work()), n, ipiv.get(), as_cu(pr.x()), n, info.get()));
            else SUITE_CHECK(cusolverDnDgetrs(solver, CUBLAS_OP_N, n, nrhs, pr.work(), n, ipiv.get(), pr.x(), n, info.get()));
            getrf.ran = true, getrf.gflops = gflops(lu_flops, getrf.ms), getrf.error = pr.backward_error() / (n * u);
            getrf.note = "LU, partial pivoting; factor only";
            r.peers.push_back(getrf);

            Peer sytrf;
            sytrf.name = "cusolver:" + P + "sytrf";
            if constexpr (complex_case) SUITE_CHECK(cusolverDnZsytrf_bufferSize(solver, n, as_cu(pr.work()), n, &lwork));
            else SUITE_CHECK(cusolverDnDsytrf_bufferSize(solver, n, pr.work(), n, &lwork));
            {
                DeviceArray<T> w(std::max(lwork, 1));
                sytrf.ms = time_ms(stream, W, R, [&] { pr.restore_work(); }, [&] {
                    if constexpr (complex_case)
                        SUITE_CHECK(cusolverDnZsytrf(solver, CUBLAS_FILL_MODE_LOWER, n, as_cu(pr.work()), n, ipiv.get(),
                                                     as_cu(w.get()), lwork, info.get()));
                    else
                        SUITE_CHECK(cusolverDnDsytrf(solver, CUBLAS_FILL_MODE_LOWER, n, pr.work(), n, ipiv.get(), w.get(), lwork,
                                                     info.get()));
                });
            }
            std::vector<int> host_ipiv(n);
            SUITE_CHECK(cudaMemcpy(host_ipiv.data(), ipiv.get(), n * sizeof(int), cudaMemcpyDeviceToHost));
            std::vector<std::int64_t> wide(host_ipiv.begin(), host_ipiv.end());
            SUITE_CHECK(cudaMemcpy(ipiv64.get(), wide.data(), n * sizeof(std::int64_t), cudaMemcpyHostToDevice));
            std::size_t device_bytes = 0, host_bytes = 0;
            SUITE_CHECK(cusolverDnXsytrs_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, n, nrhs, cu<T>::data, pr.work(), n, ipiv64.get(),
                                                    cu<T>::data, pr.x(), n, &device_bytes, &host_bytes));
            DeviceArray<char> dw(std::max<std::size_t>(device_bytes, 1));
            std::vector<char> hw(host_bytes + 1);
            pr.b_into_x();
            SUITE_CHECK(cusolverDnXsytrs(solver, CUBLAS_FILL_MODE_LOWER, n, nrhs, cu<T>::data, pr.work(), n, ipiv64.get(),
                                         cu<T>::data, pr.x(), n, dw.get(), device_bytes, hw.data(), host_bytes, info.get()));
            sytrf.ran = true, sytrf.gflops = gflops(ldlt_flops, sytrf.ms), sytrf.error = pr.backward_error() / (n * u);
            sytrf.note = "Bunch-Kaufman; factor only";
            r.peers.push_back(sytrf);
        }
        judge(r, o.tolerance);
        sink(std::move(r));
        return;
    }

    // sysv_mixed against the IRS solvers, the whole solve on both sides. The IRS peers are timed once per
    // problem and shared by the default and TF32 rows.
    using Gesv = cusolverStatus_t (*)(cusolverDnHandle_t, cusolver_int_t, cusolver_int_t, typename cu<T>::type*, cusolver_int_t,
                                      cusolver_int_t*, typename cu<T>::type*, cusolver_int_t, typename cu<T>::type*,
                                      cusolver_int_t, void*, size_t, cusolver_int_t*, cusolver_int_t*);
    using GesvSize = cusolverStatus_t (*)(cusolverDnHandle_t, cusolver_int_t, cusolver_int_t, typename cu<T>::type*,
                                          cusolver_int_t, cusolver_int_t*, typename cu<T>::type*, cusolver_int_t,
                                          typename cu<T>::type*, cusolver_int_t, void*, size_t*);
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
    std::vector<Peer> irs_peers;
    if (peers)
        for (const Irs& s : irs) {
            std::size_t bytes = 0;
            SUITE_CHECK(s.size(solver, n, nrhs, as_cu(pr.work()), n, ipiv.get(), as_cu(pr.b()), n, as_cu(pr.x()), n, nullptr, &bytes));
            DeviceArray<char> w(std::max<std::size_t>(bytes, 1));
            int iterations = 0;
            Peer q;
            q.name = "cusolver:" + s.name;
            q.ms = time_ms(stream, W, R, [&] { pr.restore_work(); }, [&] {
                SUITE_CHECK(s.run(solver, n, nrhs, as_cu(pr.work()), n, ipiv.get(), as_cu(pr.b()), n, as_cu(pr.x()), n, w.get(),
                                  bytes, &iterations, info.get()));
            });
            q.ran = true, q.gflops = gflops(lu_flops, q.ms), q.error = pr.backward_error() / (n * u);
            // iter < 0: the refinement failed and cuSOLVER fell back to the full-precision LU.
            q.note = std::string("lowest ") + s.lowest + ", " +
                     (iterations < 0 ? "fell back (iter " + std::to_string(iterations) + ")"
                                     : std::to_string(iterations) + " iterations");
            irs_peers.push_back(q);
        }
    for (bool tf32 : {false, true}) {
        if (tf32 && !o.all_variants) break;
        Row r = base;
        r.variant = tf32 ? "tf32" : "";
        r.flops = ldlt_flops;  // solvers are given the flops of their factorisation
        SysvOptions options;
        options.tensor_core_updates = tf32;
        ctx.workspace(sysv_mixed_workspace_size<T>(Symmetry::symmetric, n, nrhs, options, ctx));
        SysvResult result;
        r.ms = time_ms(stream, W, R, [] {}, [&] {
            result = sysv_mixed(Symmetry::symmetric, Uplo::lower, n, nrhs, pr.a(), n, pr.b(), n, pr.x(), n, options, ctx);
        });
        r.ran = true;
        r.checked = true;
        r.error = pr.backward_error() / (n * u);
        r.gflops = gflops(r.flops, r.ms);
        r.roofline = r.gflops / gemm_rate;
        r.note = result.describe();
        r.detail["iterations"] = result.iterations;
        r.detail["componentwise_backward_error"] = result.backward_error;
        r.peers = irs_peers;
        // The fastest IRS solver that is accurate (its error within the same bound): the peer at its best.
        const Peer* fastest = nullptr;
        for (const Peer& q : irs_peers)
            if (q.error < o.tolerance && (!fastest || q.ms < fastest->ms)) fastest = &q;
        if (fastest) r.detail["fastest_irs"] = {{"name", fastest->name}, {"ms", fastest->ms}, {"ratio", r.ms / fastest->ms}};
        judge(r, o.tolerance);
        sink(std::move(r));
    }
}

template <class T>
void run_size(const std::string& routine, const Options& o, int n, int nrhs, Context& ctx, Handles& h, double gemm_rate,
              const Sink& sink) {
    constexpr bool complex_case = !std::is_same_v<T, double>;
    const std::uint64_t seed = o.seed + n + (complex_case ? 7 : 0);
    double norm_a = 0;
    std::vector<T> b(std::size_t(n) * nrhs);
    for (std::size_t k = 0; k < b.size(); ++k) {
        if constexpr (std::is_same_v<T, double>) b[k] = uniform_at(seed + 1, k);
        else b[k] = T(uniform_at(seed + 1, 2 * k), uniform_at(seed + 1, 2 * k + 1));
    }
    std::vector<T> a = random_symmetric<T>(n, seed, &norm_a);  // first: norm_a is its output
    const Problem<T> pr(n, nrhs, a, b, norm_a, h.stream, h.blas);
    a.clear();
    a.shrink_to_fit();
    run_problem(routine, o, pr, complex_case ? "z" : "d", ctx, h, gemm_rate, sink);
}

// The BEM matrix of bem solve --write-matrix (schema bem_acoustics.matrix/1: /A complex128 (n, n), /b (n,)).
void run_file(const std::string& routine, const Options& o, Context& ctx, Handles& h, double gemm_rate, const Sink& sink) {
    using Z = std::complex<double>;
    namespace h5 = batchsolve::io::h5;
    const h5::File file = h5::File::open(o.matrix_file);
    const h5::Shape shape = file.shape("/A");
    if (shape.size() != 2 || shape[0] != shape[1] || shape[0] < 1 || shape[0] > 100000)
        throw std::runtime_error(o.matrix_file + ": /A: a square matrix of order 1 to 100000 expected, got " + h5::shape_text(shape));
    const int n = int(shape[0]);
    std::vector<Z> a = file.read_exact<Z>("/A", shape);
    const std::vector<Z> b = file.read_exact<Z>("/b", h5::Shape{shape[0]});
    // Symmetric, so the row-major file reads the same column-major; checked rather than trusted.
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
        throw std::runtime_error(o.matrix_file + ": /A: not complex symmetric (max |a_ij - a_ji| = " + std::to_string(asymmetry) + ")");
    const Problem<Z> pr(n, 1, a, b, norm_a, h.stream, h.blas);
    a.clear();
    a.shrink_to_fit();
    run_problem(routine, o, pr, "file", ctx, h, gemm_rate, sink);
}

}  // namespace

void run_ldlt(const std::string& routine, const Options& o, const Sink& sink) {
    const std::vector<std::string> precisions =
        !o.precisions.empty() ? o.precisions
                              : routine == "sytrf_nopiv" ? std::vector<std::string>{"z"} : std::vector<std::string>{"z", "d"};
    const std::vector<int> ns = !o.ns.empty() ? o.ns : std::vector<int>{2048, 4096, 10424, 15135};
    const int nrhs = o.nrhs.empty() ? 1 : o.nrhs.front();
    for (const std::string& p : precisions)
        if (p != "z" && p != "d") throw std::runtime_error("invalid --precision '" + p + "' for " + routine + ": z or d");
    if (nrhs < 1) throw std::runtime_error("--nrhs must be >= 1 for " + routine);
    if (!o.gpu || !o.cuda_backend) {
        for (const std::string& p : precisions)
            for (int n : ns) {
                Row r;
                r.routine = routine, r.precision = p, r.n = n, r.shape = "n=" + std::to_string(n);
                r.status = Status::skipped, r.note = o.gpu ? "GPU routine (--backend cuda)" : "no GPU";
                sink(std::move(r));
            }
        return;
    }
    Context ctx(Backend::cuda, o.device);
    Handles h(ctx);
    const int largest = *std::max_element(ns.begin(), ns.end());
    for (const std::string& p : precisions) {
        const double rate = p == "z" ? gemm_gflops<std::complex<double>>(largest, h.stream, h.blas, o.warmup, o.repeat)
                                     : gemm_gflops<double>(largest, h.stream, h.blas, o.warmup, o.repeat);
        for (int n : ns) {
            try {
                if (p == "z") run_size<std::complex<double>>(routine, o, n, nrhs, ctx, h, rate, sink);
                else run_size<double>(routine, o, n, nrhs, ctx, h, rate, sink);
            } catch (const std::exception& e) {
                Row r;
                r.routine = routine, r.precision = p, r.n = n, r.shape = "n=" + std::to_string(n);
                r.status = Status::failed, r.note = e.what();
                sink(std::move(r));
            }
        }
        if (p == "z" && !o.matrix_file.empty()) run_file(routine, o, ctx, h, rate, sink);
    }
}

}  // namespace batchsolve::validation::suite
