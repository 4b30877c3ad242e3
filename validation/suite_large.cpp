// The tester's large-matrix Cholesky (cholesky_large.hpp): potrf_large, potrs_large and posv_mixed on
// one matrix of order n per call, against cusolverDnXpotrf / Xpotrs, LAPACKE with all threads in its
// BLAS, and our CPU backend (posv_mixed: against FP64 Xpotrf + Xpotrs and cuSOLVER's LU-based
// mixed-precision solvers, on Q diag(lambda) Q^T matrices of condition 1e2 to 1e8); each row's
// fraction of the GEMM rate measured in the same run, its normwise backward error in units of n u
// (posv_mixed: of the stopping test's u max(sqrt(n), 4)).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "peers.hpp"
#include "suite_cuda.hpp"

namespace batchsolve::validation::suite {

namespace {

// Entry (i, j) of S, symmetric by construction: a splitmix64 hash of (seed, min, max) to [-1, 1).
double symmetric_entry(std::uint64_t seed, int i, int j) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL *
                                 (std::uint64_t(std::min(i, j)) * 0x100000001ULL + std::uint64_t(std::max(i, j)) + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return double(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

// A = D + S, S symmetric with entries uniform in [-1, 1), D = r (K + 1) / (K - 1) I with r = 2 sqrt(n / 3)
// the spectral radius of S (semicircle law): SPD with condition number about K. Both triangles, ld = n.
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

// A large-Cholesky configuration as the tuning table writes it.
nlohmann::json config_json(const LargeCholeskyConfig& c) {
    return {{"nb", c.nb}, {"ib", c.ib}, {"variant", to_string(c.variant)}, {"recursion_depth", c.recursion_depth},
            {"strip", to_string(c.strip)}, {"lookahead", c.lookahead}, {"diagonal", to_string(c.diagonal)},
            {"panel_solve", to_string(c.panel_solve)}, {"syrk_leaf", c.syrk_leaf}, {"graph", c.graph},
            {"elementwise_threads", c.elementwise_threads}};
}

// The designs --all-variants measures beside the table's configuration (the same n and matrix, one
// after the other on one stream; --designs NAME,... only the named ones): recursive (top-down halving),
// right-looking with lookahead and left-looking, with cuSOLVER's diagonal blocks or the register-tiled
// leaf kernel (one launch per block of <= 128), inverse or TRSM panel solves, SYRKs split into GEMMs
// above the table's syrk_leaf and a CUDA graph; the name says the fields that differ.
struct FactorDesign {
    const char* name;
    CholeskyVariant variant;
    int nb;
    PanelSolve solve;
    CholeskyDiagonal diagonal = CholeskyDiagonal::vendor;
};
constexpr FactorDesign kFactorDesigns[] = {
    {"recursive/nb256/inverse", CholeskyVariant::recursive, 256, PanelSolve::inverse},
    {"recursive/nb512/inverse", CholeskyVariant::recursive, 512, PanelSolve::inverse},
    {"recursive/nb512/trsm", CholeskyVariant::recursive, 512, PanelSolve::trsm},
    {"right+lookahead/nb512/inverse", CholeskyVariant::right_looking, 512, PanelSolve::inverse},
    {"right+lookahead/nb1024/inverse", CholeskyVariant::right_looking, 1024, PanelSolve::inverse},
    {"right+lookahead/nb64/leaf/trsm", CholeskyVariant::right_looking, 64, PanelSolve::trsm, CholeskyDiagonal::leaf},
    {"right+lookahead/nb128/leaf/trsm", CholeskyVariant::right_looking, 128, PanelSolve::trsm, CholeskyDiagonal::leaf},
    {"recursive/nb128/leaf/trsm", CholeskyVariant::recursive, 128, PanelSolve::trsm, CholeskyDiagonal::leaf},
    {"left/nb128/leaf/trsm", CholeskyVariant::left_looking, 128, PanelSolve::trsm, CholeskyDiagonal::leaf},
    // cuSOLVER's blocks at the leaf's order: the per-column cost the leaf kernel has to beat
    {"right+lookahead/nb128/trsm", CholeskyVariant::right_looking, 128, PanelSolve::trsm},
    // the whole matrix by one cusolverDnXpotrf through our entry point (what a vendor table row runs)
    {"vendor", CholeskyVariant::vendor, 512, PanelSolve::trsm},
};

bool design_wanted(const Options& o, const std::string& name) {
    return o.designs.empty() ? o.all_variants : std::find(o.designs.begin(), o.designs.end(), name) != o.designs.end();
}

bool same_config(const LargeCholeskyConfig& a, const LargeCholeskyConfig& b) {
    return config_json(a) == config_json(b);
}

cudaDataType data_type(float) { return CUDA_R_32F; }
cudaDataType data_type(double) { return CUDA_R_64F; }

template <class T>
struct Problem {
    int n;
    double norm_a;
    std::vector<T> host_a;
    DeviceArray<T> a, work, b, x;
    DeviceArray<int> info;
    Problem(int n_, std::vector<T> ha, double norm, const std::vector<double>& host_b)
        : n(n_), norm_a(norm), host_a(std::move(ha)), a(host_a.size()), work(host_a.size()), b(n_), x(n_), info(1) {
        SUITE_CHECK(cudaMemcpy(a.get(), host_a.data(), host_a.size() * sizeof(T), cudaMemcpyHostToDevice));
        std::vector<T> bt(host_b.begin(), host_b.end());
        SUITE_CHECK(cudaMemcpy(b.get(), bt.data(), bt.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    void restore(cudaStream_t s) const {
        SUITE_CHECK(cudaMemcpyAsync(work.get(), a.get(), std::size_t(n) * n * sizeof(T), cudaMemcpyDeviceToDevice, s));
    }
    void b_into_x(cudaStream_t s) const {
        SUITE_CHECK(cudaMemcpyAsync(x.get(), b.get(), n * sizeof(T), cudaMemcpyDeviceToDevice, s));
    }
    int read_info() const {
        int v = 0;
        SUITE_CHECK(cudaMemcpy(&v, info.get(), sizeof(int), cudaMemcpyDeviceToHost));
        return v;
    }
};

// ||b - A x||_inf / (||A||_inf ||x||_inf) with the pristine A (lower triangle), in the working precision.
template <class T>
double backward_error(cublasHandle_t blas, cudaStream_t stream, const Problem<T>& p, const T* x) {
    const int n = p.n;
    DeviceArray<T> r(n);
    SUITE_CHECK(cudaMemcpyAsync(r.get(), p.b.get(), n * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    const T minus_one = -1, one = 1;
    if constexpr (std::is_same_v<T, double>)
        SUITE_CHECK(cublasDsymv(blas, CUBLAS_FILL_MODE_LOWER, n, &minus_one, p.a.get(), n, x, 1, &one, r.get(), 1));
    else
        SUITE_CHECK(cublasSsymv(blas, CUBLAS_FILL_MODE_LOWER, n, &minus_one, p.a.get(), n, x, 1, &one, r.get(), 1));
    std::vector<T> hr(n), hx(n);
    SUITE_CHECK(cudaStreamSynchronize(stream));
    SUITE_CHECK(cudaMemcpy(hr.data(), r.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
    SUITE_CHECK(cudaMemcpy(hx.data(), x, n * sizeof(T), cudaMemcpyDeviceToHost));
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
    Handles(Context& ctx) {
        stream = static_cast<cudaStream_t>(ctx.stream());
        SUITE_CHECK(cublasCreate(&blas));
        SUITE_CHECK(cublasSetStream(blas, stream));
        SUITE_CHECK(cusolverDnCreate(&solver));
        SUITE_CHECK(cusolverDnSetStream(solver, stream));
        SUITE_CHECK(cusolverDnCreateParams(&params));
    }
    ~Handles() {
        cusolverDnDestroyParams(params);
        cusolverDnDestroy(solver);
        cublasDestroy(blas);
    }
};

// cuSOLVER's Xpotrf / Xpotrs (lower) on the working copy, its buffers sized once (outside any timing).
template <class T>
struct Cusolver {
    std::size_t device_bytes = 0, host_bytes = 0;
    std::unique_ptr<DeviceArray<char>> device;
    std::vector<char> host;
    Cusolver(Handles& h, Problem<T>& p) {
        SUITE_CHECK(cusolverDnXpotrf_bufferSize(h.solver, h.params, CUBLAS_FILL_MODE_LOWER, p.n, data_type(T{}), p.work.get(),
                                                p.n, data_type(T{}), &device_bytes, &host_bytes));
        device = std::make_unique<DeviceArray<char>>(std::max<std::size_t>(device_bytes, 1));
        host.resize(std::max<std::size_t>(host_bytes, 1));
    }
    void factor(Handles& h, Problem<T>& p) {
        SUITE_CHECK(cusolverDnXpotrf(h.solver, h.params, CUBLAS_FILL_MODE_LOWER, p.n, data_type(T{}), p.work.get(), p.n,
                                     data_type(T{}), device->get(), device_bytes, host.data(), host_bytes, p.info.get()));
    }
    void solve(Handles& h, Problem<T>& p, T* x) {
        SUITE_CHECK(cusolverDnXpotrs(h.solver, h.params, CUBLAS_FILL_MODE_LOWER, p.n, 1, data_type(T{}), p.work.get(), p.n,
                                     data_type(T{}), x, p.n, p.info.get()));
    }
};

// GEMM rate (TFLOP/s) at m = n = k = min(order, 8192), default math (no TF32 for s): the bound of the
// roofline column.
template <class T>
double gemm_tflops(Handles& h, int order, int warmup, int repeat) {
    const int m = std::min(order, 8192);
    DeviceArray<T> a(std::size_t(m) * m), b(std::size_t(m) * m), c(std::size_t(m) * m);
    SUITE_CHECK(cudaMemsetAsync(a.get(), 0, std::size_t(m) * m * sizeof(T), h.stream));
    SUITE_CHECK(cudaMemsetAsync(b.get(), 0, std::size_t(m) * m * sizeof(T), h.stream));
    const T one = 1, zero = 0;
    const double ms = time_ms(h.stream, warmup, repeat, [] {}, [&] {
        if constexpr (std::is_same_v<T, double>)
            SUITE_CHECK(cublasDgemm(h.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a.get(), m, b.get(), m, &zero, c.get(), m));
        else
            SUITE_CHECK(cublasSgemm(h.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a.get(), m, b.get(), m, &zero, c.get(), m));
    });
    return 2.0 * m * double(m) * m / (ms * 1e-3) * 1e-12;
}

double potrf_flops(int n) { return double(n) * n * n / 3.0; }

// The CPU peers' time box: an order whose predicted time (the last one's times (n / n_last)^3) would
// not fit in what is left of --cpu-seconds is skipped.
struct CpuBox {
    double used = 0, last_seconds = 0;
    int last_n = 0;
    bool fits(const Options& o, int n) const {
        if (n > o.cpu_max) return false;
        const double predicted = last_n ? last_seconds * std::pow(double(n) / last_n, 3) : 0;
        return used + predicted <= o.cpu_seconds;
    }
    void add(int n, double seconds) { used += seconds, last_seconds = seconds, last_n = n; }
};

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class T>
void run_t(const std::string& routine, const Options& o, int n, Context& ctx, Handles& h, CpuBox& box, const Sink& sink) {
    const char letter = std::is_same_v<T, double> ? 'd' : 's';
    const double u = std::numeric_limits<T>::epsilon() / 2;
    const double cond = o.cond > 0 ? o.cond : 100;
    const std::uint64_t seed = o.seed + std::uint64_t(n);
    double norm_a = 0;
    std::vector<T> host_a = make_matrix<T>(n, cond, seed, &norm_a);
    const std::vector<double> host_b = make_rhs(n, seed);
    Problem<T> p(n, std::move(host_a), norm_a, host_b);
    const int R = o.repeat, W = o.warmup;
    const double gemm = gemm_tflops<T>(h, n, W, R);
    const auto tflops = [&](double flops, double ms) { return flops / (ms * 1e-3) * 1e-12; };
    const std::string definition = "||b - A x||_inf / (||A||_inf ||x||_inf n u), one right-hand side";
    const std::string basis = std::string("cuBLAS ") + char(std::toupper(letter)) + "GEMM at order " +
                              std::to_string(std::min(n, 8192)) + ", same run";

    Row row;
    row.routine = routine, row.precision = std::string(1, letter), row.n = n, row.batch = 1;
    row.nrhs = routine == "potrf_large" ? 0 : 1;
    row.shape = "n=" + std::to_string(n);
    row.error_definition = definition, row.roofline_basis = basis;
    row.detail = {{"gemm_tflops", gemm}, {"cond", cond}};
    const LargeCholeskyConfig config = cholesky_large_default_config<T>(n);
    row.detail["config"] = config_json(config);
    ctx.workspace(potrf_workspace_size<T>(n, ctx));
    Cusolver<T> vendor(h, p);

    // The CPU peers (LAPACKE with all threads in its BLAS; our CPU backend), time-boxed.
    const auto cpu_peers = [&](bool solve) {
        for (const std::string& name : {std::string("lapack"), std::string("cpu")}) {
            if (!wants(o, name)) continue;
            Peer peer;
            peer.name = name;
            if (!box.fits(o, n)) {
                peer.note = "over --cpu-max / --cpu-seconds";
                row.peers.push_back(peer);
                continue;
            }
            std::vector<T> a = p.host_a, x(host_b.begin(), host_b.end());
            int info = 0;
            double seconds = 0;
            if (name == "lapack") {
                const auto t0 = std::chrono::steady_clock::now();
                info = peer::lapacke_potrf_one<T>(Uplo::lower, n, a.data(), n, omp_get_max_threads());
                seconds = since(t0);
                if (solve && info == 0) {
                    const auto t1 = std::chrono::steady_clock::now();
                    peer::lapacke_potrs_one<T>(Uplo::lower, n, 1, a.data(), n, x.data(), n, omp_get_max_threads());
                    seconds = routine == "potrs_large" ? since(t1) : seconds + since(t1);
                }
            } else {
                Context cpu(Backend::cpu);
                const auto t0 = std::chrono::steady_clock::now();
                potrf<T>(Uplo::lower, n, a.data(), n, &info, cpu);
                seconds = since(t0);
                if (solve && info == 0) {
                    const auto t1 = std::chrono::steady_clock::now();
                    potrs<T>(Uplo::lower, n, 1, a.data(), n, x.data(), n, cpu);
                    seconds = routine == "potrs_large" ? since(t1) : seconds + since(t1);
                }
            }
            box.add(n, seconds);
            peer.ran = info == 0;
            peer.ms = seconds * 1e3;
            peer.gflops = row.flops / (seconds * 1e9);
            peer.note = info ? "info " + std::to_string(info) : "one run (" + std::to_string(omp_get_max_threads()) + " threads)";
            row.peers.push_back(peer);
        }
    };

    if (routine == "potrf_large" && o.sweep) {
        // Every configuration of the search space: leaves (nb halved depth times, rounded up to 32) of
        // 48 to 256 columns; right-looking with lookahead and left-looking; both strip factorisations.
        row.flops = potrf_flops(n);
        Peer theirs;
        if (wants(o, "cusolver")) {
            theirs.name = "cusolver", theirs.ran = true, theirs.note = "cusolverDnXpotrf";
            theirs.ms = time_ms(h.stream, W, R, [&] { p.restore(h.stream); }, [&] { vendor.factor(h, p); });
            theirs.gflops = tflops(row.flops, theirs.ms) * 1e3;
        }
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
                            Row r = row;
                            r.variant = "nb" + std::to_string(nb) + "/ib" + std::to_string(ib) + "/d" + std::to_string(depth) +
                                        (left ? "/left" : "/right+la") + "/" + to_string(strip);
                            r.detail["config"] = {{"nb", nb}, {"ib", ib}, {"variant", to_string(c.variant)},
                                                  {"recursion_depth", depth}, {"lookahead", c.lookahead}, {"strip", to_string(strip)}};
                            try {
                                r.ms = time_ms(h.stream, W, R, [&] { p.restore(h.stream); },
                                               [&] { potrf<T>(Uplo::lower, n, p.work.get(), n, p.info.get(), c, ctx); });
                            } catch (const InvalidArgument& e) {
                                continue;  // a configuration the device cannot run (shared memory): not a result
                            }
                            r.ran = true;
                            r.gflops = tflops(r.flops, r.ms) * 1e3;
                            r.roofline = tflops(r.flops, r.ms) / gemm;
                            if (p.read_info() != 0) r.status = Status::failed, r.note = "info " + std::to_string(p.read_info());
                            if (theirs.ran) r.peers.push_back(theirs);
                            sink(std::move(r));
                        }
        return;
    }

    if (routine == "potrf_large") {
        row.flops = potrf_flops(n);
        std::vector<double> samples;
        row.ms = time_ms(h.stream, W, R, [&] { p.restore(h.stream); },
                         [&] { potrf<T>(Uplo::lower, n, p.work.get(), n, p.info.get(), ctx); }, &samples);
        row.ran = true;
        const int info = p.read_info();
        p.b_into_x(h.stream);
        potrs<T>(Uplo::lower, n, 1, p.work.get(), n, p.x.get(), n, ctx);
        row.checked = true;
        row.error = backward_error(h.blas, h.stream, p, p.x.get()) / (n * u);
        if (info != 0) row.status = Status::failed, row.note = "info " + std::to_string(info);
        row.gflops = tflops(row.flops, row.ms) * 1e3;
        row.roofline = tflops(row.flops, row.ms) / gemm;
        row.detail["times_ms"] = samples;
        row.detail["ours_seconds"] = row.ms * 1e-3;
        row.detail["ours_tflops"] = tflops(row.flops, row.ms);
        row.detail["ours_fraction_of_gemm"] = row.roofline;
        if (o.split) {
            CholeskyPhaseTimes split;
            p.restore(h.stream);
            potrf<T>(Uplo::lower, n, p.work.get(), n, p.info.get(), config, ctx, &split);
            row.detail["split_seconds"] = {{"panel", split.panel_seconds}, {"trsm", split.trsm_seconds},
                                           {"update", split.update_seconds}, {"panels", split.panels}};
        }
        if (wants(o, "cusolver")) {
            Peer peer;
            peer.name = "cusolver";
            peer.ms = time_ms(h.stream, W, R, [&] { p.restore(h.stream); }, [&] { vendor.factor(h, p); });
            peer.ran = true;
            peer.gflops = tflops(row.flops, peer.ms) * 1e3;
            const int their_info = p.read_info();
            p.b_into_x(h.stream);
            vendor.solve(h, p, p.x.get());
            peer.error = backward_error(h.blas, h.stream, p, p.x.get()) / (n * u);
            peer.note = "cusolverDnXpotrf" + (their_info ? ", info " + std::to_string(their_info) : std::string());
            row.detail["cusolver_seconds"] = peer.ms * 1e-3;
            row.detail["cusolver_tflops"] = tflops(row.flops, peer.ms);
            row.detail["cusolver_fraction_of_gemm"] = tflops(row.flops, peer.ms) / gemm;
            row.peers.push_back(peer);
        }
        cpu_peers(false);
        judge(row, o.tolerance);
        Row base = row;
        sink(std::move(row));
        if (!o.all_variants && o.designs.empty()) return;
        // Each design beside the table's: time, info, backward error, phase split, cuSOLVER's time.
        base.peers.erase(std::remove_if(base.peers.begin(), base.peers.end(), [](const Peer& q) { return q.name != "cusolver"; }),
                         base.peers.end());
        for (const FactorDesign& d : kFactorDesigns) {
            if (!design_wanted(o, d.name)) continue;
            LargeCholeskyConfig c = config;
            c.variant = d.variant, c.nb = d.nb, c.panel_solve = d.solve, c.diagonal = d.diagonal;
            c.lookahead = d.variant == CholeskyVariant::right_looking, c.graph = true;
            if (same_config(c, config)) continue;  // the table's row above
            Row r = base;
            r.variant = d.name;
            r.detail = {{"gemm_tflops", gemm}, {"cond", cond}, {"config", config_json(c)}};
            try {
                std::vector<double> times;
                r.ms = time_ms(h.stream, W, R, [&] { p.restore(h.stream); },
                               [&] { potrf<T>(Uplo::lower, n, p.work.get(), n, p.info.get(), c, ctx); }, &times);
                r.ran = true;
                const int design_info = p.read_info();
                p.b_into_x(h.stream);
                potrs<T>(Uplo::lower, n, 1, p.work.get(), n, p.x.get(), n, ctx);
                r.checked = true;
                r.error = backward_error(h.blas, h.stream, p, p.x.get()) / (n * u);
                r.status = Status::ok, r.note.clear();
                if (design_info != 0) r.status = Status::failed, r.note = "info " + std::to_string(design_info);
                r.gflops = tflops(r.flops, r.ms) * 1e3;
                r.roofline = tflops(r.flops, r.ms) / gemm;
                r.detail["times_ms"] = times;
                r.detail["ours_seconds"] = r.ms * 1e-3;
                r.detail["ours_tflops"] = tflops(r.flops, r.ms);
                if (o.split) {
                    CholeskyPhaseTimes split;
                    p.restore(h.stream);
                    potrf<T>(Uplo::lower, n, p.work.get(), n, p.info.get(), c, ctx, &split);
                    r.detail["split_seconds"] = {{"panel", split.panel_seconds}, {"trsm", split.trsm_seconds},
                                                 {"update", split.update_seconds}, {"panels", split.panels}};
                }
                judge(r, o.tolerance);
            } catch (const std::exception& e) {
                cudaDeviceSynchronize();  // a failed capture or launch: leave the device usable for the next row
                cudaGetLastError();
                r.ran = false, r.status = Status::failed, r.note = e.what();
            }
            sink(std::move(r));
        }
        return;
    }

    if (routine == "potrs_large") {
        row.flops = 2.0 * n * double(n);
        p.restore(h.stream);
        potrf<T>(Uplo::lower, n, p.work.get(), n, p.info.get(), ctx);
        const int info = p.read_info();
        row.ms = time_ms(h.stream, W, R, [&] { p.b_into_x(h.stream); },
                         [&] { potrs<T>(Uplo::lower, n, 1, p.work.get(), n, p.x.get(), n, ctx); });
        row.ran = true;
        row.checked = true;
        row.error = backward_error(h.blas, h.stream, p, p.x.get()) / (n * u);
        if (info != 0) row.status = Status::failed, row.note = "potrf info " + std::to_string(info);
        row.gflops = tflops(row.flops, row.ms) * 1e3;
        row.roofline = -1;  // a solve is bound by reading the factor, not by GEMM
        if (wants(o, "cusolver")) {
            Peer peer;
            peer.name = "cusolver";
            p.restore(h.stream);
            vendor.factor(h, p);
            peer.ms = time_ms(h.stream, W, R, [&] { p.b_into_x(h.stream); }, [&] { vendor.solve(h, p, p.x.get()); });
            peer.ran = true;
            peer.gflops = tflops(row.flops, peer.ms) * 1e3;
            peer.error = backward_error(h.blas, h.stream, p, p.x.get()) / (n * u);
            peer.note = "cusolverDnXpotrs";
            row.peers.push_back(peer);
        }
        cpu_peers(true);
        judge(row, o.tolerance);
        sink(std::move(row));
        return;
    }

}

// ---- posv_mixed ------------------------------------------------------------------------------------------
// SPD A = Q diag(lambda) Q^T with Q the orthogonal factor of a Gaussian matrix (cuSOLVER DGEQRF +
// DORGQR on the GPU) and lambda log-spaced from 1 to 1/cond: 2-norm condition number cond. Both
// triangles are stored (the LU-based peers read the whole matrix). Against cuSOLVER's FP64
// Xpotrf + Xpotrs and its LU-based mixed-precision solvers (DSgesv, DHgesv, DBgesv, DXgesv: LU in
// FP32/FP16/BF16/TF32 with classical refinement, and IRSXgesv with FP16 LU and GMRES refinement), each
// timed over its whole call, the same A and b, on the same stream.

// The Gaussian matrix's entries: Box-Muller on two splitmix64 draws of (seed, index).
double gaussian_entry(std::uint64_t seed, std::uint64_t index) {
    auto draw = [](std::uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        return (double(z >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    };
    const double u1 = draw(seed + 0x9e3779b97f4a7c15ULL * (2 * index + 1));
    const double u2 = draw(seed + 0x9e3779b97f4a7c15ULL * (2 * index + 2));
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Q (n x n, ld n, device) orthogonal: the Q of a Gaussian matrix's QR.
void random_orthogonal(Handles& h, int n, std::uint64_t seed, double* q) {
    std::vector<double> host(std::size_t(n) * n);
#pragma omp parallel for schedule(static)
    for (long long k = 0; k < (long long)host.size(); ++k) host[k] = gaussian_entry(seed, std::uint64_t(k));
    SUITE_CHECK(cudaMemcpy(q, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice));
    DeviceArray<double> tau(n);
    DeviceArray<int> info(1);
    int lwork_qr = 0, lwork_q = 0;
    SUITE_CHECK(cusolverDnDgeqrf_bufferSize(h.solver, n, n, q, n, &lwork_qr));
    SUITE_CHECK(cusolverDnDorgqr_bufferSize(h.solver, n, n, n, q, n, tau.get(), &lwork_q));
    DeviceArray<double> work(std::max(lwork_qr, lwork_q));
    SUITE_CHECK(cusolverDnDgeqrf(h.solver, n, n, q, n, tau.get(), work.get(), lwork_qr, info.get()));
    SUITE_CHECK(cusolverDnDorgqr(h.solver, n, n, n, q, n, tau.get(), work.get(), lwork_q, info.get()));
    SUITE_CHECK(cudaStreamSynchronize(h.stream));
}

// A = Q diag(lambda) Q^T (full, ld n) as W W^T, W = Q diag(sqrt(lambda)); ||A||_inf from the host.
double spd_from_spectrum(Handles& h, int n, double cond, const double* q, double* w, double* a) {
    std::vector<double> root(n);
    for (int i = 0; i < n; ++i) root[i] = std::sqrt(std::pow(cond, -double(i) / std::max(1, n - 1)));
    DeviceArray<double> droot(n);
    SUITE_CHECK(cudaMemcpy(droot.get(), root.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    SUITE_CHECK(cublasDdgmm(h.blas, CUBLAS_SIDE_RIGHT, n, n, q, n, droot.get(), 1, w, n));
    const double one = 1, zero = 0;
    SUITE_CHECK(cublasDgemm(h.blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, w, n, w, n, &zero, a, n));
    // ||A||_inf: the largest row sum of |a_ij| (A symmetric: the column sums), by DASUM per column.
    SUITE_CHECK(cublasSetPointerMode(h.blas, CUBLAS_POINTER_MODE_HOST));
    std::vector<double> sums(n);
    for (int j = 0; j < n; ++j) SUITE_CHECK(cublasDasum(h.blas, n, a + std::size_t(j) * n, 1, &sums[j]));
    return *std::max_element(sums.begin(), sums.end());
}

// cuSOLVER's FP64 Xpotrf + Xpotrs (lower) on `a`, its buffers sized once (outside any timing).
struct VendorCholesky {
    Handles& h;
    int n;
    double* a;
    int* info;
    std::size_t device_bytes = 0, host_bytes = 0;
    std::unique_ptr<DeviceArray<char>> device;
    std::vector<char> host;
    VendorCholesky(Handles& handles, int order, double* matrix, int* info_) : h(handles), n(order), a(matrix), info(info_) {
        SUITE_CHECK(cusolverDnXpotrf_bufferSize(h.solver, h.params, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_64F, a, n, CUDA_R_64F,
                                                &device_bytes, &host_bytes));
        device = std::make_unique<DeviceArray<char>>(std::max<std::size_t>(device_bytes, 1));
        host.resize(std::max<std::size_t>(host_bytes, 1));
    }
    void factor() {
        SUITE_CHECK(cusolverDnXpotrf(h.solver, h.params, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_64F, a, n, CUDA_R_64F, device->get(),
                                     device_bytes, host.data(), host_bytes, info));
    }
    void solve(double* x) {
        SUITE_CHECK(cusolverDnXpotrs(h.solver, h.params, CUBLAS_FILL_MODE_LOWER, n, 1, CUDA_R_64F, a, n, CUDA_R_64F, x, n, info));
    }
};

// One of cuSOLVER's LU-based mixed-precision solvers on the SPD matrix.
struct IrsPeer {
    std::string name, note;
    cusolverDnIRSParams_t params = nullptr;  // IRSXgesv only
    cusolverDnIRSInfos_t infos = nullptr;
    int kind = 0;  // 0 DSgesv, 1 DHgesv, 2 DBgesv, 3 DXgesv, 4 IRSXgesv (FP16 LU, GMRES)
};

std::vector<IrsPeer> irs_peers(const Options& o) {
    std::vector<IrsPeer> peers;
    const std::pair<const char*, const char*> names[] = {
        {"cusolver-dsgesv", "cusolverDnDSgesv (FP32 LU + refinement)"},
        {"cusolver-dhgesv", "cusolverDnDHgesv (FP16 LU + refinement)"},
        {"cusolver-dbgesv", "cusolverDnDBgesv (BF16 LU + refinement)"},
        {"cusolver-dxgesv", "cusolverDnDXgesv (TF32 LU + refinement)"},
        {"cusolver-irs-gmres", "cusolverDnIRSXgesv (FP16 LU + GMRES refinement)"}};
    for (int k = 0; k < 5; ++k) {
        if (!wants(o, names[k].first) && !wants(o, "cusolver-irs")) continue;
        IrsPeer p;
        p.name = names[k].first, p.note = names[k].second, p.kind = k;
        peers.push_back(p);
    }
    return peers;
}

// Times peer p; x receives its solution, `iterations` cuSOLVER's count (< 0: it fell back to FP64).
double run_irs(Handles& h, const Options& o, IrsPeer& p, int n, const double* a_pristine, double* a_work, const double* b,
               double* x, int* info, int* iterations) {
    std::size_t lwork = 0;
    DeviceArray<int> pivots(n);
    switch (p.kind) {
        case 0: SUITE_CHECK(cusolverDnDSgesv_bufferSize(h.solver, n, 1, a_work, n, pivots.get(), const_cast<double*>(b), n, x, n, nullptr, &lwork)); break;
        case 1: SUITE_CHECK(cusolverDnDHgesv_bufferSize(h.solver, n, 1, a_work, n, pivots.get(), const_cast<double*>(b), n, x, n, nullptr, &lwork)); break;
        case 2: SUITE_CHECK(cusolverDnDBgesv_bufferSize(h.solver, n, 1, a_work, n, pivots.get(), const_cast<double*>(b), n, x, n, nullptr, &lwork)); break;
        case 3: SUITE_CHECK(cusolverDnDXgesv_bufferSize(h.solver, n, 1, a_work, n, pivots.get(), const_cast<double*>(b), n, x, n, nullptr, &lwork)); break;
        default:
            SUITE_CHECK(cusolverDnIRSParamsCreate(&p.params));
            SUITE_CHECK(cusolverDnIRSParamsSetSolverPrecisions(p.params, CUSOLVER_R_64F, CUSOLVER_R_16F));
            SUITE_CHECK(cusolverDnIRSParamsSetRefinementSolver(p.params, CUSOLVER_IRS_REFINE_GMRES));
            SUITE_CHECK(cusolverDnIRSInfosCreate(&p.infos));
            SUITE_CHECK(cusolverDnIRSXgesv_bufferSize(h.solver, p.params, n, 1, &lwork));
    }
    DeviceArray<char> work(std::max<std::size_t>(lwork, 1));
    int iters = 0;
    const double ms = time_ms(h.stream, o.warmup, o.repeat,
        [&] { SUITE_CHECK(cudaMemcpyAsync(a_work, a_pristine, std::size_t(n) * n * sizeof(double), cudaMemcpyDeviceToDevice, h.stream)); },
        [&] {
            double* bb = const_cast<double*>(b);
            switch (p.kind) {
                case 0: SUITE_CHECK(cusolverDnDSgesv(h.solver, n, 1, a_work, n, pivots.get(), bb, n, x, n, work.get(), lwork, &iters, info)); break;
                case 1: SUITE_CHECK(cusolverDnDHgesv(h.solver, n, 1, a_work, n, pivots.get(), bb, n, x, n, work.get(), lwork, &iters, info)); break;
                case 2: SUITE_CHECK(cusolverDnDBgesv(h.solver, n, 1, a_work, n, pivots.get(), bb, n, x, n, work.get(), lwork, &iters, info)); break;
                case 3: SUITE_CHECK(cusolverDnDXgesv(h.solver, n, 1, a_work, n, pivots.get(), bb, n, x, n, work.get(), lwork, &iters, info)); break;
                default:
                    SUITE_CHECK(cusolverDnIRSXgesv(h.solver, p.params, p.infos, n, 1, a_work, n, bb, n, x, n, work.get(), lwork,
                                                   &iters, info));
            }
        });
    if (p.infos) cusolverDnIRSInfosDestroy(p.infos), p.infos = nullptr;
    if (p.params) cusolverDnIRSParamsDestroy(p.params), p.params = nullptr;
    *iterations = iters;
    return ms;
}

// A design of ours (the variant column): factor precision, correction method, M^-1's blocking.
struct Design {
    std::string name;
    LowPrecision precision = LowPrecision::automatic;
    CorrectionMethod method = CorrectionMethod::automatic;
    int solve_block = -1;
    bool tf32_blocked = false;  // fp32 with TF32 updates of the blocked factor (the earlier variant)
    double budget = -1;         // PosvMixedOptions::refinement_budget (-1: the table's, 0: unbounded)
    int leaf = 0;               // PosvMixedOptions::factor_leaf (0: the table's)
    int fused = -1;             // PosvMixedOptions::fused_pass (-1: the table's, 0: off)
};

// Every factor precision with each correction method (classical IR, GMRES-IR, and the automatic
// classical-then-GMRES escalation), the automatic chain first; --designs keeps the named ones ("auto":
// the automatic chain) and needs no --all-variants. A named design may end in /leafN (the tensor-core
// factor's leaves of order N instead of the table's), /blockedN (M^-1 in blocks of N rows) and /budgetN
// (the cost bound's next step at N percent of the step's factor time instead of the table's; 0:
// unbounded) and /fusedN (classical passes fused with a residual strip of N tile rows; 0: separate).
std::vector<Design> designs(const Options& o) {
    std::vector<Design> d{{"", LowPrecision::automatic, CorrectionMethod::automatic}};
    if (o.all_variants || !o.designs.empty()) {
        d.push_back({"auto/unbounded", LowPrecision::automatic, CorrectionMethod::automatic, -1, false, 0});
        d.push_back({"fp32/classical", LowPrecision::fp32, CorrectionMethod::classical});
        d.push_back({"fp32/gmres", LowPrecision::fp32, CorrectionMethod::gmres});
        d.push_back({"fp32/auto", LowPrecision::fp32, CorrectionMethod::automatic});
        d.push_back({"tf32/classical", LowPrecision::tf32, CorrectionMethod::classical});
        d.push_back({"tf32/gmres", LowPrecision::tf32, CorrectionMethod::gmres});
        d.push_back({"tf32/auto", LowPrecision::tf32, CorrectionMethod::automatic});
        d.push_back({"bf16/classical", LowPrecision::bf16, CorrectionMethod::classical});
        d.push_back({"bf16/gmres", LowPrecision::bf16, CorrectionMethod::gmres});
        d.push_back({"fp16/classical", LowPrecision::fp16, CorrectionMethod::classical});
        d.push_back({"fp16/gmres", LowPrecision::fp16, CorrectionMethod::gmres});
        d.push_back({"fp16/auto", LowPrecision::fp16, CorrectionMethod::automatic});
        d.push_back({"fp16/gmres/blocked512", LowPrecision::fp16, CorrectionMethod::gmres, 512});
        d.push_back({"fp16_split/classical", LowPrecision::fp16_split, CorrectionMethod::classical});
        d.push_back({"fp16_split/gmres", LowPrecision::fp16_split, CorrectionMethod::gmres});
    }
    if (o.designs.empty()) return d;
    std::vector<Design> kept;
    for (const std::string& name : o.designs) {
        // Trailing /leafN and /blockedN parts, then the base design.
        std::string base = name;
        int leaf = 0, block = -1, budget = -1, fused = -1;
        for (;;) {
            const std::size_t slash = base.rfind('/');
            if (slash == std::string::npos) break;
            const std::string part = base.substr(slash + 1);
            const auto number = [&](const char* prefix) {
                const std::size_t p = std::strlen(prefix);
                if (part.size() <= p || part.compare(0, p, prefix) != 0 ||
                    part.find_first_not_of("0123456789", p) != std::string::npos)
                    return -1;
                return std::stoi(part.substr(p));
            };
            if (const int v = number("leaf"); v > 0) leaf = v;
            else if (const int b = number("blocked"); b >= 0) block = b;
            else if (const int p = number("budget"); p >= 0) budget = p;
            else if (const int f = number("fused"); f >= 0) fused = f;
            else break;
            base.erase(slash);
        }
        auto it = std::find_if(d.begin(), d.end(), [&](const Design& x) { return (x.name.empty() ? "auto" : x.name) == name; });
        if (it == d.end())
            it = std::find_if(d.begin(), d.end(), [&](const Design& x) { return (x.name.empty() ? "auto" : x.name) == base; });
        if (it == d.end()) throw std::runtime_error("invalid --designs '" + name + "' for posv_mixed");
        Design k = *it;
        if (base != name) {  // a base design with /leafN or /blockedN
            k.name = name;
            if (leaf > 0) k.leaf = leaf;
            if (block >= 0) k.solve_block = block;
            if (budget >= 0) k.budget = budget / 100.0;
            if (fused >= 0) k.fused = fused;
        }
        kept.push_back(k);
    }
    return kept;
}

std::string cond_text(double cond) {
    char text[32];
    std::snprintf(text, sizeof text, "cond%.0e", cond);
    std::string s = text;
    s.erase(std::remove(s.begin(), s.end(), '+'), s.end());
    const std::size_t e = s.find("e0");
    if (e != std::string::npos) s.erase(e + 1, 1);
    return s;  // "cond1e2", "cond1e8"
}

void run_posv_mixed(const Options& o, int n, Context& ctx, Handles& h, const Sink& sink) {
    const double u = std::numeric_limits<double>::epsilon() / 2;
    const double criterion = u * std::max(std::sqrt(double(n)), 4.0);
    const std::vector<double> conds = o.cond > 0 ? std::vector<double>{o.cond} : std::vector<double>{1e2, 1e4, 1e6, 1e8};
    const std::uint64_t seed = o.seed + std::uint64_t(n);
    const std::size_t nn = std::size_t(n) * n;
    DeviceArray<double> q(nn), w(nn), a(nn), work(nn), b(n), x(n);
    DeviceArray<int> info(1);
    random_orthogonal(h, n, seed, q.get());
    const std::vector<double> host_b = make_rhs(n, seed);
    SUITE_CHECK(cudaMemcpy(b.get(), host_b.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    const double gemm = gemm_tflops<double>(h, n, o.warmup, o.repeat);
    for (double cond : conds) {
        const double norm_a = spd_from_spectrum(h, n, cond, q.get(), w.get(), a.get());
        SUITE_CHECK(cudaStreamSynchronize(h.stream));
        // Problem's backward_error reads p.a, p.b, p.n, p.norm_a: a view of these arrays.
        const auto scaled_residual = [&](const double* xs) {
            DeviceArray<double> r(n);
            SUITE_CHECK(cudaMemcpyAsync(r.get(), b.get(), n * sizeof(double), cudaMemcpyDeviceToDevice, h.stream));
            const double minus_one = -1, one = 1;
            SUITE_CHECK(cublasDsymv(h.blas, CUBLAS_FILL_MODE_LOWER, n, &minus_one, a.get(), n, xs, 1, &one, r.get(), 1));
            std::vector<double> hr(n), hx(n);
            SUITE_CHECK(cudaStreamSynchronize(h.stream));
            SUITE_CHECK(cudaMemcpy(hr.data(), r.get(), n * sizeof(double), cudaMemcpyDeviceToHost));
            SUITE_CHECK(cudaMemcpy(hx.data(), xs, n * sizeof(double), cudaMemcpyDeviceToHost));
            double rmax = 0, xmax = 0;
            for (int i = 0; i < n; ++i) {
                if (!std::isfinite(hr[i]) || !std::isfinite(hx[i])) return std::numeric_limits<double>::infinity();
                rmax = std::max(rmax, std::abs(hr[i])), xmax = std::max(xmax, std::abs(hx[i]));
            }
            return rmax / (norm_a * xmax);
        };
        Row row;
        row.routine = "posv_mixed", row.precision = "d", row.n = n, row.batch = 1, row.nrhs = 1;
        row.shape = "n=" + std::to_string(n) + " " + cond_text(cond);
        row.flops = potrf_flops(n);
        row.error_definition = "||b - A x||_inf / (||A||_inf ||x||_inf u max(sqrt(n), 4)), u = 2^-53 (<= 2: the library's "
                               "stopping test, eps = 2u)";
        row.roofline_basis = "cuBLAS DGEMM at order " + std::to_string(std::min(n, 8192)) + ", same run";
        row.detail = {{"gemm_tflops", gemm}, {"cond", cond}, {"norm_a_inf", norm_a}};
        std::vector<Peer> peers;
        if (wants(o, "cusolver")) {
            VendorCholesky vendor(h, n, work.get(), info.get());
            Peer p;
            p.name = "cusolver", p.ran = true, p.note = "FP64 cusolverDnXpotrf + Xpotrs";
            p.ms = time_ms(h.stream, o.warmup, o.repeat,
                [&] {
                    SUITE_CHECK(cudaMemcpyAsync(work.get(), a.get(), nn * sizeof(double), cudaMemcpyDeviceToDevice, h.stream));
                    SUITE_CHECK(cudaMemcpyAsync(x.get(), b.get(), n * sizeof(double), cudaMemcpyDeviceToDevice, h.stream));
                },
                [&] {
                    vendor.factor();
                    vendor.solve(x.get());
                });
            p.gflops = row.flops / (p.ms * 1e6);
            p.error = scaled_residual(x.get()) / criterion;
            peers.push_back(p);
        }
        Peer best;
        best.name = "cusolver-irs-best";
        for (IrsPeer& irs : irs_peers(o)) {
            Peer p;
            p.name = irs.name;
            int iterations = 0;
            try {
                p.ms = run_irs(h, o, irs, n, a.get(), work.get(), b.get(), x.get(), info.get(), &iterations);
                p.ran = true;
                p.gflops = row.flops / (p.ms * 1e6);
                p.error = scaled_residual(x.get()) / criterion;
                p.note = irs.note + ", iterations " + std::to_string(iterations) + (iterations < 0 ? " (fell back to FP64)" : "");
                row.detail["iterations_" + irs.name] = iterations;
            } catch (const std::exception& e) {
                p.note = e.what();
            }
            if (p.ran && (!best.ran || p.ms < best.ms)) best = p, best.name = "cusolver-irs-best", best.note = "fastest: " + irs.name;
            peers.push_back(p);
        }
        if (best.ran) peers.push_back(best);
        for (const Design& d : designs(o)) {
            Row r = row;
            r.variant = cond_text(cond) + (d.name.empty() ? "" : "/" + d.name);
            r.peers = peers;
            PosvMixedOptions options;
            options.factor_precision = d.precision;
            options.method = d.method;
            options.solve_block = d.solve_block;
            options.refinement_budget = d.budget;
            options.factor_leaf = d.leaf;
            options.fused_pass = d.fused;
            PosvMixedResult result;
            try {
                ctx.workspace(posv_mixed_workspace_size<double>(Uplo::lower, n, 1, options, ctx));
                std::vector<double> samples;
                r.ms = time_ms(h.stream, o.warmup, o.repeat, [] {}, [&] {
                    result = posv_mixed<double>(Uplo::lower, n, 1, a.get(), n, b.get(), n, x.get(), n, options, ctx);
                }, &samples);
                r.detail["times_ms"] = samples;
            } catch (const std::exception& e) {
                r.status = Status::failed, r.note = e.what();
                sink(std::move(r));
                continue;
            }
            r.ran = true;
            r.gflops = r.flops / (r.ms * 1e6);
            r.roofline = r.gflops * 1e-3 / gemm;
            r.checked = true;
            r.error = scaled_residual(x.get()) / criterion;
            r.note = result.describe();
            r.detail["path"] = to_string(result.path);
            r.detail["iterations"] = result.iterations;
            r.detail["inner_iterations"] = result.inner_iterations;
            r.detail["componentwise_backward_error"] = result.backward_error;
            r.detail["meets_u_criterion"] = r.error <= 1;
            nlohmann::json steps = nlohmann::json::array();
            for (const SolveStep& s : result.steps)
                steps.push_back({{"path", to_string(s.path)}, {"outcome", to_string(s.outcome)}, {"iterations", s.iterations},
                                 {"inner_iterations", s.inner_iterations}, {"gmres", s.gmres}, {"shift", s.shift},
                                 {"history", s.history}, {"factor_ms", s.factor_seconds * 1e3},
                                 {"refine_ms", s.refine_seconds * 1e3}});
            r.detail["steps"] = steps;
            r.detail["seconds"] = r.ms * 1e-3;
            if (!(r.error <= 2)) r.status = Status::failed, r.note += "; above the stopping test";
            sink(std::move(r));
        }
    }
}

}  // namespace

void run_large(const std::string& routine, const Options& o, const Sink& sink) {
    const std::vector<std::string> precisions =
        !o.precisions.empty() ? o.precisions
                              : routine == "posv_mixed" ? std::vector<std::string>{"d"} : std::vector<std::string>{"d", "s"};
    const std::vector<int> ns = !o.ns.empty() ? o.ns : std::vector<int>{1024, 2048, 4096, 8192, 16384, 32768};
    for (const std::string& p : precisions)
        if (p != "s" && p != "d") throw std::runtime_error("invalid --precision '" + p + "' for " + routine + ": s or d");
    // A bad --designs name fails before any work.
    if (routine == "posv_mixed") designs(o);
    if (routine == "potrf_large")
        for (const std::string& name : o.designs)
            if (std::none_of(std::begin(kFactorDesigns), std::end(kFactorDesigns), [&](const FactorDesign& d) { return name == d.name; }))
                throw std::runtime_error("invalid --designs '" + name + "' for potrf_large");
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
    CpuBox box;
    if (routine == "posv_mixed") {
        for (int n : ns) {
            try {
                run_posv_mixed(o, n, ctx, h, sink);
            } catch (const std::exception& e) {
                Row r;
                r.routine = routine, r.precision = "d", r.n = n, r.shape = "n=" + std::to_string(n);
                r.status = Status::failed, r.note = e.what();
                sink(std::move(r));
            }
        }
        return;
    }
    for (const std::string& p : precisions)
        for (int n : ns) {
            try {
                if (p == "d") run_t<double>(routine, o, n, ctx, h, box, sink);
                else run_t<float>(routine, o, n, ctx, h, box, sink);
            } catch (const std::exception& e) {
                Row r;
                r.routine = routine, r.precision = p, r.n = n, r.shape = "n=" + std::to_string(n);
                r.status = Status::failed, r.note = e.what();
                sink(std::move(r));
            }
        }
}

}  // namespace batchsolve::validation::suite
