// The tester's variable-size triangular routines (vbatched_triangular.hpp): trsm_vbatched (set-ups
// "square": left, lower, no transpose, B m x m; "chol": right, lower, conjugate transpose, B m x 32, the
// solve of a blocked Cholesky), trmm_vbatched (left, lower, B m x m) and potrf_vbatched, sizes uniform in
// [1, x]. The default row runs the library's default configuration (no per-case choice); --all-variants
// adds a row per TRSM algorithm. Peers: cublas (TRSM: cublas<t>trsmBatched once per distinct size;
// TRMM: cuBLAS has no batched TRMM, so cublas<t>trmm per problem over 16 streams), cublas-streams (the
// per-problem calls over 16 streams for TRSM too), cusolver (potrf: potrfBatched once per distinct
// size), cpu (our CPU backend, also the reference of the differences).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "suite_cuda.hpp"

namespace batchsolve::validation::suite {

namespace {


cublasStatus_t vendor_trsm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                           cublasDiagType_t d, int m, int n, const float* al, const float* a, int lda, float* b, int ldb) {
    return cublasStrsm(h, s, u, o, d, m, n, al, a, lda, b, ldb);
}
cublasStatus_t vendor_trsm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                           cublasDiagType_t d, int m, int n, const double* al, const double* a, int lda, double* b, int ldb) {
    return cublasDtrsm(h, s, u, o, d, m, n, al, a, lda, b, ldb);
}
cublasStatus_t vendor_trsm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                           cublasDiagType_t d, int m, int n, const std::complex<float>* al, const std::complex<float>* a,
                           int lda, std::complex<float>* b, int ldb) {
    return cublasCtrsm(h, s, u, o, d, m, n, reinterpret_cast<const cuComplex*>(al), reinterpret_cast<const cuComplex*>(a),
                       lda, reinterpret_cast<cuComplex*>(b), ldb);
}
cublasStatus_t vendor_trsm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                           cublasDiagType_t d, int m, int n, const std::complex<double>* al,
                           const std::complex<double>* a, int lda, std::complex<double>* b, int ldb) {
    return cublasZtrsm(h, s, u, o, d, m, n, reinterpret_cast<const cuDoubleComplex*>(al),
                       reinterpret_cast<const cuDoubleComplex*>(a), lda, reinterpret_cast<cuDoubleComplex*>(b), ldb);
}
// cuBLAS's trmm is out of place (C = alpha op(A) B); C = B gives the in-place BLAS semantics.
cublasStatus_t vendor_trmm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                           cublasDiagType_t d, int m, int n, const float* al, const float* a, int lda, float* b, int ldb) {
    return cublasStrmm(h, s, u, o, d, m, n, al, a, lda, b, ldb, b, ldb);
}
cublasStatus_t vendor_trmm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                           cublasDiagType_t d, int m, int n, const double* al, const double* a, int lda, double* b, int ldb) {
    return cublasDtrmm(h, s, u, o, d, m, n, al, a, lda, b, ldb, b, ldb);
}
cublasStatus_t vendor_trmm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                           cublasDiagType_t d, int m, int n, const std::complex<float>* al, const std::complex<float>* a,
                           int lda, std::complex<float>* b, int ldb) {
    auto* bb = reinterpret_cast<cuComplex*>(b);
    return cublasCtrmm(h, s, u, o, d, m, n, reinterpret_cast<const cuComplex*>(al), reinterpret_cast<const cuComplex*>(a),
                       lda, bb, ldb, bb, ldb);
}
cublasStatus_t vendor_trmm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                           cublasDiagType_t d, int m, int n, const std::complex<double>* al,
                           const std::complex<double>* a, int lda, std::complex<double>* b, int ldb) {
    auto* bb = reinterpret_cast<cuDoubleComplex*>(b);
    return cublasZtrmm(h, s, u, o, d, m, n, reinterpret_cast<const cuDoubleComplex*>(al),
                       reinterpret_cast<const cuDoubleComplex*>(a), lda, bb, ldb, bb, ldb);
}
cusolverStatus_t vendor_potrf_batched(cusolverDnHandle_t h, int n, float** a, int lda, int* info, int count) {
    return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, info, count);
}
cusolverStatus_t vendor_potrf_batched(cusolverDnHandle_t h, int n, double** a, int lda, int* info, int count) {
    return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, info, count);
}
cusolverStatus_t vendor_potrf_batched(cusolverDnHandle_t h, int n, std::complex<float>** a, int lda, int* info, int count) {
    return cusolverDnCpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuComplex**>(a), lda, info, count);
}
cusolverStatus_t vendor_potrf_batched(cusolverDnHandle_t h, int n, std::complex<double>** a, int lda, int* info,
                                      int count) {
    return cusolverDnZpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuDoubleComplex**>(a), lda, info,
                                   count);
}

cublasStatus_t vendor_trsm_batched(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                                   cublasDiagType_t d, int m, int n, const float* al, float* const* a, int lda,
                                   float* const* b, int ldb, int count) {
    return cublasStrsmBatched(h, s, u, o, d, m, n, al, a, lda, b, ldb, count);
}
cublasStatus_t vendor_trsm_batched(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                                   cublasDiagType_t d, int m, int n, const double* al, double* const* a, int lda,
                                   double* const* b, int ldb, int count) {
    return cublasDtrsmBatched(h, s, u, o, d, m, n, al, a, lda, b, ldb, count);
}
cublasStatus_t vendor_trsm_batched(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                                   cublasDiagType_t d, int m, int n, const std::complex<float>* al,
                                   std::complex<float>* const* a, int lda, std::complex<float>* const* b, int ldb,
                                   int count) {
    return cublasCtrsmBatched(h, s, u, o, d, m, n, reinterpret_cast<const cuComplex*>(al),
                              reinterpret_cast<cuComplex* const*>(a), lda, reinterpret_cast<cuComplex* const*>(b), ldb,
                              count);
}
cublasStatus_t vendor_trsm_batched(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u, cublasOperation_t o,
                                   cublasDiagType_t d, int m, int n, const std::complex<double>* al,
                                   std::complex<double>* const* a, int lda, std::complex<double>* const* b, int ldb,
                                   int count) {
    return cublasZtrsmBatched(h, s, u, o, d, m, n, reinterpret_cast<const cuDoubleComplex*>(al),
                              reinterpret_cast<cuDoubleComplex* const*>(a), lda,
                              reinterpret_cast<cuDoubleComplex* const*>(b), ldb, count);
}

template <class T>
T random_value(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> d(-1, 1);
    if constexpr (is_complex_v<T>) return T(real_t<T>(d(rng)), real_t<T>(d(rng)));
    else return T(d(rng));
}

// One set-up's batch: sizes, packed storage (ld = rows), pointers into it on the host and device.
template <class T>
struct Batch {
    int count = 0;
    std::vector<int> m, n;                 // B is m x n; A is order x order
    std::vector<int> order;                // triangle (or potrf matrix) order per problem
    std::vector<std::size_t> a_at, b_at;
    std::vector<T> a, b;                   // host copies of the inputs
    double flops = 0;                      // real flops of the whole batch
    int max_m = 0, max_n = 0, max_order = 0;
};

template <class T>
Batch<T> make_batch(const std::string& routine, int x, int count, std::mt19937_64& rng) {
    Batch<T> p;
    p.count = count;
    std::uniform_int_distribution<int> size(1, x);
    const double complex_factor = is_complex_v<T> ? 4 : 1;
    std::size_t a_size = 0, b_size = 0;
    for (int i = 0; i < count; ++i) {
        int m = size(rng), n = m, order = m;
        if (routine == "trsm_chol") n = 32, order = 32;
        if (routine == "potrf") n = 0;
        p.m.push_back(m), p.n.push_back(n), p.order.push_back(order);
        p.a_at.push_back(a_size), p.b_at.push_back(b_size);
        a_size += std::size_t(order) * order, b_size += std::size_t(m) * n;
        p.max_m = std::max(p.max_m, m), p.max_n = std::max(p.max_n, n), p.max_order = std::max(p.max_order, order);
        if (routine == "potrf") p.flops += complex_factor * double(order) * order * order / 3;
        else if (routine == "trsm_chol") p.flops += complex_factor * double(order) * order * m;  // right: n^2 m
        else p.flops += complex_factor * double(m) * m * n;                                     // left: m^2 n
    }
    p.a.resize(a_size), p.b.resize(b_size);
    // Triangles (and potrf's matrices) diagonally dominant: well conditioned at every size, so the
    // repeated runs stay finite and the differences measure rounding only.
    for (int i = 0; i < count; ++i) {
        const int k = p.order[i];
        T* a = p.a.data() + p.a_at[i];
        // Off-diagonal moduli <= 0.71, diagonal k + 1: Gershgorin keeps every eigenvalue above 0.29 k.
        for (int c = 0; c < k; ++c)
            for (int r = c; r < k; ++r) {
                const T v = r == c ? T(real_t<T>(k + 1)) : random_value<T>(rng) * real_t<T>(0.5);
                a[r + std::size_t(c) * k] = v;
                if constexpr (is_complex_v<T>) a[c + std::size_t(r) * k] = std::conj(v);
                else a[c + std::size_t(r) * k] = v;
            }
    }
    for (T& v : p.b) v = random_value<T>(rng);
    if (routine == "potrf") p.max_n = 0;
    return p;
}

template <class T>
double relative_difference(const std::vector<T>& x, const std::vector<T>& reference) {
    long double diff = 0, norm = 0;
    for (std::size_t e = 0; e < x.size(); ++e) diff += std::norm(x[e] - reference[e]), norm += std::norm(reference[e]);
    if (!(diff == diff)) return INFINITY;
    return norm == 0 ? double(std::sqrt(diff)) : double(std::sqrt(diff / norm));
}

template <class T>
std::vector<T> download(const Buffer<T>& b, std::size_t count) {
    std::vector<T> out(count);
    if (count) b.download(out.data(), count);
    return out;
}

template <class T>
void run_setup(const std::string& routine, const std::string& setup, const Options& o, int x, int batch, Context& gpu,
               Context& cpu, cublasHandle_t blas, cusolverDnHandle_t solver, const std::vector<cudaStream_t>& streams,
               const Sink& sink) {
    // The problem's name as the sizes' seed knows it (results of earlier runs used the same sizes).
    const std::string kind = routine == "potrf_vbatched" ? "potrf" : routine == "trmm_vbatched" ? "trmm" : "trsm_" + setup;
    std::mt19937_64 rng(o.seed + std::uint64_t(x) * 131 + std::hash<std::string>()(kind));
    const Batch<T> p = make_batch<T>(kind, x, batch, rng);
    const bool potrf = kind == "potrf";
    const cudaStream_t stream = static_cast<cudaStream_t>(gpu.stream());
    const int W = o.warmup, R = o.repeat;
    const double u = double(std::numeric_limits<real_t<T>>::epsilon()) / 2;

    Buffer<T> a0(gpu, std::max<std::size_t>(p.a.size(), 1)), b0(gpu, std::max<std::size_t>(p.b.size(), 1));
    Buffer<T> a(gpu, std::max<std::size_t>(p.a.size(), 1)), b(gpu, std::max<std::size_t>(p.b.size(), 1));
    a0.upload(p.a);
    if (!p.b.empty()) b0.upload(p.b);
    std::vector<T*> a_ptr(p.count), b_ptr(p.count);
    for (int i = 0; i < p.count; ++i) a_ptr[i] = a.data() + p.a_at[i], b_ptr[i] = b.data() + p.b_at[i];
    Buffer<T*> a_ptr_d(gpu, a_ptr), b_ptr_d(gpu, b_ptr);
    Buffer<int> m_d(gpu, p.m), n_d(gpu, p.n), order_d(gpu, p.order), info_d(gpu, std::size_t(p.count));
    std::vector<int> ldb_h(p.count);
    for (int i = 0; i < p.count; ++i) ldb_h[i] = std::max(1, p.m[i]);
    Buffer<int> lda_d(gpu, p.order), ldb_d(gpu, ldb_h);
    auto restore = [&] {
        SUITE_CHECK(cudaMemcpyAsync(a.data(), a0.data(), p.a.size() * sizeof(T), cudaMemcpyDeviceToDevice, stream));
        if (!p.b.empty())
            SUITE_CHECK(cudaMemcpyAsync(b.data(), b0.data(), p.b.size() * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    };
    const T* const* a_in = reinterpret_cast<const T* const*>(a_ptr_d.data());
    const Side side = setup == "chol" ? Side::right : Side::left;
    const Op op = setup == "chol" ? Op::conj_trans : Op::no_trans;

    Row row;
    row.routine = routine, row.precision = std::string(1, precision_letter(precision_v<T>));
    row.n = x, row.batch = p.count;
    row.shape = "x=" + std::to_string(x) + " count=" + std::to_string(p.count) + (setup.empty() ? "" : " " + setup);
    row.flops = p.flops;
    row.error_definition = "||Y - Y_cpu||_F / (||Y_cpu||_F u x), Y the batch's outputs, Y_cpu our CPU backend's";
    row.detail = {{"setup", kind}, {"x", x}, {"count", p.count}};

    // Our CPU backend: the reference of the differences, and the cpu peer when asked for.
    std::vector<T> reference;
    double cpu_ms = 0;
    {
        std::vector<T> ha = p.a, hb = p.b;
        std::vector<T*> ha_ptr(p.count), hb_ptr(p.count);
        for (int i = 0; i < p.count; ++i) ha_ptr[i] = ha.data() + p.a_at[i], hb_ptr[i] = hb.data() + p.b_at[i];
        std::vector<int> info(p.count);
        const T* const* hac = ha_ptr.data();
        const auto t0 = std::chrono::steady_clock::now();
        if (kind == "trmm")
            trmm_vbatched_max_nocheck(Side::left, Uplo::lower, Op::no_trans, Diag::non_unit, p.m.data(), p.n.data(), T(1), hac,
                                      p.order.data(), hb_ptr.data(), ldb_h.data(), p.max_m, p.max_n, p.count, cpu);
        else if (!potrf)
            trsm_vbatched_max_nocheck(side, Uplo::lower, op, Diag::non_unit, p.m.data(), p.n.data(), T(1), hac, p.order.data(),
                                      hb_ptr.data(), ldb_h.data(), p.max_m, p.max_n, p.count, cpu);
        else
            potrf_vbatched_max_nocheck(Uplo::lower, p.order.data(), ha_ptr.data(), p.order.data(), p.max_order, p.count,
                                       info.data(), cpu);
        cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        reference = potrf ? ha : hb;
    }
    const auto error_of = [&](const Buffer<T>& out) {
        std::vector<T> y(reference.size());
        if (!y.empty()) out.download(y.data(), y.size());
        return relative_difference(y, reference) / (u * x);
    };

    auto ours = [&](const TriangularConfig& config) {
        if (kind == "trmm")
            trmm_vbatched_max_nocheck(Side::left, Uplo::lower, Op::no_trans, Diag::non_unit, m_d.data(), n_d.data(), T(1), a_in,
                                      lda_d.data(), b_ptr_d.data(), ldb_d.data(), p.max_m, p.max_n, p.count, gpu, config);
        else if (!potrf)
            trsm_vbatched_max_nocheck(side, Uplo::lower, op, Diag::non_unit, m_d.data(), n_d.data(), T(1), a_in, lda_d.data(),
                                      b_ptr_d.data(), ldb_d.data(), p.max_m, p.max_n, p.count, gpu, config);
        else
            potrf_vbatched_max_nocheck(Uplo::lower, order_d.data(), a_ptr_d.data(), lda_d.data(), p.max_order, p.count,
                                       info_d.data(), gpu, config);
    };

    // The peers, timed once for all of this set-up's rows.
    std::vector<Peer> peers;
    const T one(1);
    const cublasSideMode_t cside = setup == "chol" ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
    const cublasOperation_t cop = setup == "chol" ? (is_complex_v<T> ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
    // Per problem over 16 streams (the only batched form of TRMM cuBLAS offers).
    const auto streams_peer = [&](const std::string& name) {
        Peer q;
        q.name = name;
        cudaEvent_t fork, join;
        SUITE_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
        SUITE_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
        auto vendor = [&] {
            SUITE_CHECK(cudaEventRecord(fork, stream));
            for (cudaStream_t st : streams) SUITE_CHECK(cudaStreamWaitEvent(st, fork, 0));
            for (int i = 0; i < p.count; ++i) {
                SUITE_CHECK(cublasSetStream(blas, streams[i % streams.size()]));
                if (kind == "trmm")
                    SUITE_CHECK(vendor_trmm(blas, cside, CUBLAS_FILL_MODE_LOWER, cop, CUBLAS_DIAG_NON_UNIT, p.m[i], p.n[i], &one,
                                            a_ptr[i], p.order[i], b_ptr[i], ldb_h[i]));
                else
                    SUITE_CHECK(vendor_trsm(blas, cside, CUBLAS_FILL_MODE_LOWER, cop, CUBLAS_DIAG_NON_UNIT, p.m[i], p.n[i], &one,
                                            a_ptr[i], p.order[i], b_ptr[i], ldb_h[i]));
            }
            for (cudaStream_t st : streams) {
                SUITE_CHECK(cudaEventRecord(join, st));
                SUITE_CHECK(cudaStreamWaitEvent(stream, join, 0));
            }
        };
        q.ms = time_ms(stream, W, R, restore, vendor);
        SUITE_CHECK(cudaStreamSynchronize(stream));
        cudaEventDestroy(fork), cudaEventDestroy(join);
        q.ran = true, q.gflops = p.flops / (q.ms * 1e6), q.error = error_of(b);
        q.note = "cublas<t>" + std::string(kind == "trmm" ? "trmm" : "trsm") + " per problem, 16 streams";
        peers.push_back(q);
    };
    // Problems grouped by their sizes: one batched call per distinct (m, n, order).
    std::map<std::tuple<int, int, int>, std::vector<int>> by_size;
    for (int i = 0; i < p.count; ++i) by_size[{p.m[i], p.n[i], p.order[i]}].push_back(i);
    std::vector<T*> grouped_a, grouped_b;
    std::vector<std::pair<std::tuple<int, int, int>, std::size_t>> groups;
    for (const auto& [size, members] : by_size) {
        groups.push_back({size, grouped_a.size()});
        for (int i : members) grouped_a.push_back(a_ptr[i]), grouped_b.push_back(b_ptr[i]);
    }
    Buffer<T*> grouped_a_d(gpu, grouped_a), grouped_b_d(gpu, grouped_b);
    const auto group_end = [&](std::size_t g) { return g + 1 < groups.size() ? groups[g + 1].second : grouped_a.size(); };
    if (kind == "trmm") {
        if (wants(o, "cublas")) streams_peer("cublas");
    } else if (!potrf) {
        if (wants(o, "cublas")) {
            Peer q;
            q.name = "cublas";
            SUITE_CHECK(cublasSetStream(blas, stream));
            q.ms = time_ms(stream, W, R, restore, [&] {
                for (std::size_t g = 0; g < groups.size(); ++g) {
                    const auto [m, n, order] = groups[g].first;
                    const std::size_t first = groups[g].second;
                    SUITE_CHECK(vendor_trsm_batched(blas, cside, CUBLAS_FILL_MODE_LOWER, cop, CUBLAS_DIAG_NON_UNIT, m, n, &one,
                                                    grouped_a_d.data() + first, order, grouped_b_d.data() + first,
                                                    std::max(1, m), int(group_end(g) - first)));
                }
            });
            q.ran = true, q.gflops = p.flops / (q.ms * 1e6), q.error = error_of(b);
            q.note = "cublas<t>trsmBatched per distinct size (" + std::to_string(groups.size()) + " calls)";
            peers.push_back(q);
        }
        if (wants(o, "cublas-streams")) streams_peer("cublas-streams");
    } else if (wants(o, "cusolver")) {
        Peer q;
        q.name = "cusolver";
        SUITE_CHECK(cusolverDnSetStream(solver, stream));
        q.ms = time_ms(stream, W, R, restore, [&] {
            for (std::size_t g = 0; g < groups.size(); ++g) {
                const int order = std::get<2>(groups[g].first);
                const std::size_t first = groups[g].second;
                SUITE_CHECK(vendor_potrf_batched(solver, order, grouped_a_d.data() + first, order, info_d.data(),
                                                 int(group_end(g) - first)));
            }
        });
        q.ran = true, q.gflops = p.flops / (q.ms * 1e6), q.error = error_of(a);
        q.note = "cusolverDn<t>potrfBatched per distinct size (" + std::to_string(groups.size()) + " calls)";
        peers.push_back(q);
    }
    if (wants(o, "cpu")) {
        Peer q;
        q.name = "cpu";
        q.ran = true, q.ms = cpu_ms, q.gflops = p.flops / (cpu_ms * 1e6), q.error = 0;
        q.note = "our CPU backend, one run (" + std::to_string(omp_get_max_threads()) + " threads)";
        peers.push_back(q);
    }

    // The default configuration first, then (--all-variants) each TRSM algorithm.
    std::vector<std::pair<std::string, TriangularConfig>> variants = {{"", TriangularConfig{}}};
    if (o.all_variants && !potrf && kind != "trmm") {
        TriangularConfig rec, inv;
        rec.trsm_algorithm = TrsmAlgorithm::recursive, inv.trsm_algorithm = TrsmAlgorithm::inversion;
        variants.push_back({"recursive", rec});
        variants.push_back({"inversion", inv});
    }
    for (const auto& [name, config] : variants) {
        Row r = row;
        r.variant = name;
        r.peers = peers;
        try {  // a library error (a kernel that fails to compile) is this row's, not the run's
            r.ms = time_ms(stream, W, R, restore, [&] { ours(config); });
            gpu.synchronize();
            r.ran = true;
            r.gflops = p.flops / (r.ms * 1e6);
            r.checked = true;
            r.error = error_of(potrf ? a : b);
        } catch (const batchsolve::Error& e) {
            r.status = Status::failed, r.note = e.what();
        }
        judge(r, o.tolerance);
        sink(std::move(r));
    }
}

}  // namespace

void run_triangular(const std::string& routine, const Options& o, const Sink& sink) {
    const std::vector<std::string> precisions = !o.precisions.empty() ? o.precisions : std::vector<std::string>{"d"};
    const std::vector<int> xs = !o.ns.empty() ? o.ns : std::vector<int>{32, 64, 128, 256, 512};
    const std::vector<int> batches = !o.batches.empty() ? o.batches : std::vector<int>{2000};
    std::vector<std::string> setups = {""};
    if (routine == "trsm_vbatched") setups = !o.setups.empty() ? o.setups : std::vector<std::string>{"square", "chol"};
    for (const std::string& s : setups)
        if (routine == "trsm_vbatched" && s != "square" && s != "chol")
            throw std::runtime_error("invalid --setups '" + s + "' for trsm_vbatched: square, chol");
    for (const std::string& p : precisions)
        if (p != "s" && p != "d" && p != "c" && p != "z") throw std::runtime_error("invalid --precision '" + p + "'");
    if (!o.gpu || !o.cuda_backend) {
        for (const std::string& p : precisions)
            for (int x : xs) {
                Row r;
                r.routine = routine, r.precision = p, r.n = x, r.shape = "x=" + std::to_string(x);
                r.status = Status::skipped, r.note = o.gpu ? "GPU routine (--backend cuda)" : "no GPU";
                sink(std::move(r));
            }
        return;
    }
    Context gpu(Backend::cuda, o.device), cpu(Backend::cpu);
    cublasHandle_t blas;
    cusolverDnHandle_t solver;
    SUITE_CHECK(cublasCreate(&blas));
    SUITE_CHECK(cusolverDnCreate(&solver));
    std::vector<cudaStream_t> streams(16);
    for (cudaStream_t& st : streams) SUITE_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (const std::string& p : precisions)
        for (const std::string& setup : setups)
            for (int batch : batches)
                for (int x : xs) {
                    try {
                        if (p == "s") run_setup<float>(routine, setup, o, x, batch, gpu, cpu, blas, solver, streams, sink);
                        if (p == "d") run_setup<double>(routine, setup, o, x, batch, gpu, cpu, blas, solver, streams, sink);
                        if (p == "c")
                            run_setup<std::complex<float>>(routine, setup, o, x, batch, gpu, cpu, blas, solver, streams, sink);
                        if (p == "z")
                            run_setup<std::complex<double>>(routine, setup, o, x, batch, gpu, cpu, blas, solver, streams, sink);
                    } catch (const std::exception& e) {
                        Row r;
                        r.routine = routine, r.precision = p, r.n = x, r.shape = "x=" + std::to_string(x);
                        r.status = Status::failed, r.note = e.what();
                        sink(std::move(r));
                    }
                }
    for (cudaStream_t st : streams) cudaStreamDestroy(st);
    cusolverDnDestroy(solver);
    cublasDestroy(blas);
}

}  // namespace batchsolve::validation::suite
