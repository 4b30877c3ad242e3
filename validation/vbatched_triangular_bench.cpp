// vbatched_triangular_bench: the variable-size triangular routines (vbatched_triangular.hpp) side by
// side with their vendor baselines in one process, on the seed paper's set-ups (Abdelfattah et al.,
// ICS'17, section 6): 2000 problems, each size uniform in [1, x].
//   trsm_square  op(A) X = B, left lower no-trans non-unit, m = n per problem      (Fig. 16a)
//   trsm_chol    X A^H = B, right lower conj-trans non-unit, n = 32, m in [1, x]   (Fig. 16b, Cholesky's panel)
//   trmm         B = A B, left lower no-trans non-unit, m = n per problem         (Fig. 15)
//   potrf        A = L L^H per matrix
// Ours (TRSM both algorithms and the automatic choice) against cuBLAS ?trsm / ?trmm issued one problem
// at a time round-robin over 16 streams (the seed's baseline), cuSOLVER ?potrfBatched called once per
// distinct size, the fixed-size potrf_batched on a uniform batch of order x (x <= 128), and the CPU
// reference (OpenMP over problems). CUDA events, one warm-up, median of repeats, B or A restored before
// every run (not timed); each row carries the difference from the CPU reference's result.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/vbatched_triangular.hpp"

using namespace batchsolve;
using nlohmann::json;

#include "bench_errors.hpp"

namespace {

const char* kUsage = R"(vbatched_triangular_bench: trsm/trmm/potrf_vbatched against cuBLAS, cuSOLVER and the CPU.

usage: vbatched_triangular_bench [options]
  --x LIST          largest size of each set-up, comma-separated (default 32,64,128,256,512)
  --batch N         problems per call (default 2000)
  --precision LIST  s,d,c,z (default d)
  --routines LIST   trsm_square,trsm_chol,trmm,potrf (default all four)
  --repeat R        timed GPU runs after one warm-up; the median is reported (default 5)
  --cpu-repeat R    timed runs of the CPU reference (default 1; 0 skips the CPU rows and the
                    differences, which are then measured against nothing)
  --seed S          sizes and matrices (default 2017)
  --blockings LIST  extra leaf-kernel blockings to time, columns_per_thread:warps_per_block[:column_blocks]
                    (e.g. 4:4,4:8:4); each adds "ours <algorithm> c<C>w<W>[b<B>]" rows (default none)
  --inversion-blocks LIST  extra nb of the inversion-based TRSM to time (e.g. 16) (default none)
  --json FILE       rows as JSON (GPU, commit, date)
  --markdown FILE   the table as markdown
  --help            this text
Without a GPU it prints "skipped: no GPU" and exits 0.
)";

using bench_errors::check;
using bench_errors::fail;

struct Settings {
    std::vector<int> x{32, 64, 128, 256, 512};
    int batch = 2000;
    std::vector<std::string> precisions{"d"};
    std::vector<std::string> routines{"trsm_square", "trsm_chol", "trmm", "potrf"};
    int repeat = 5;
    int cpu_repeat = 1;
    std::uint64_t seed = 2017;
    std::string json_file, markdown_file;
    struct Blocking {
        int columns, warps, column_blocks;
    };
    std::vector<Blocking> blockings;
    std::vector<int> inversion_blocks;
};

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream s(text);
    for (std::string item; std::getline(s, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

// ---- vendor calls per precision -------------------------------------------------------------------

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

// ---- problems -----------------------------------------------------------------------------------------

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

struct Row {
    std::string routine, precision, method;
    int x = 0, count = 0;
    double ms = 0, gflops = 0, difference = -1;
    std::string note;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// Times `run` with CUDA events on `stream` after `restore` (not timed); one warm-up first.
double time_gpu(cudaStream_t stream, int repeat, const std::function<void()>& restore, const std::function<void()>& run) {
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    std::vector<double> ms;
    for (int k = 0; k <= repeat; ++k) {
        restore();
        check(cudaEventRecord(start, stream), "cudaEventRecord");
        run();
        check(cudaEventRecord(stop, stream), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float t = 0;
        check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
        if (k > 0) ms.push_back(t);
    }
    cudaEventDestroy(start), cudaEventDestroy(stop);
    return median(ms);
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
void run_setup(const Settings& s, const std::string& routine, int x, Context& gpu, Context& cpu, cublasHandle_t blas,
               cusolverDnHandle_t solver, const std::vector<cudaStream_t>& streams, std::vector<Row>& rows) {
    std::mt19937_64 rng(s.seed + std::uint64_t(x) * 131 + std::hash<std::string>()(routine));
    const Batch<T> p = make_batch<T>(routine, x, s.batch, rng);
    const std::string prec(1, precision_letter(precision_v<T>));
    const bool potrf = routine == "potrf";
    const cudaStream_t stream = static_cast<cudaStream_t>(gpu.stream());

    // Device copies: pristine inputs and the working arrays, pointers, sizes.
    Buffer<T> a0(gpu, std::max<std::size_t>(p.a.size(), 1)), b0(gpu, std::max<std::size_t>(p.b.size(), 1));
    Buffer<T> a(gpu, std::max<std::size_t>(p.a.size(), 1)), b(gpu, std::max<std::size_t>(p.b.size(), 1));
    a0.upload(p.a);
    if (!p.b.empty()) b0.upload(p.b);
    std::vector<T*> a_ptr(p.count), b_ptr(p.count);
    for (int i = 0; i < p.count; ++i) a_ptr[i] = a.data() + p.a_at[i], b_ptr[i] = b.data() + p.b_at[i];
    Buffer<T*> a_ptr_d(gpu, a_ptr), b_ptr_d(gpu, b_ptr);
    Buffer<int> m_d(gpu, p.m), n_d(gpu, p.n), order_d(gpu, p.order), info_d(gpu, std::size_t(p.count));
    const std::vector<int> ldb_h = [&] {
        std::vector<int> v(p.count);
        for (int i = 0; i < p.count; ++i) v[i] = std::max(1, p.m[i]);
        return v;
    }();
    Buffer<int> lda_d(gpu, p.order), ldb_d(gpu, ldb_h);
    auto restore = [&] {
        check(cudaMemcpyAsync(a.data(), a0.data(), p.a.size() * sizeof(T), cudaMemcpyDeviceToDevice, stream), "restore A");
        if (!p.b.empty())
            check(cudaMemcpyAsync(b.data(), b0.data(), p.b.size() * sizeof(T), cudaMemcpyDeviceToDevice, stream), "restore B");
    };
    const T* const* a_in = reinterpret_cast<const T* const*>(a_ptr_d.data());

    // The CPU reference: its result is what every GPU row is compared with.
    std::vector<T> reference;
    auto add = [&](const std::string& method, double ms, double difference, const std::string& note = "") {
        Row r;
        r.routine = routine, r.precision = prec, r.method = method, r.x = x, r.count = p.count;
        r.ms = ms, r.gflops = ms > 0 ? p.flops / (ms * 1e6) : 0, r.difference = difference, r.note = note;
        rows.push_back(r);
        std::printf("%-12s %s x=%-4d %-26s %10.3f ms %10.1f GFLOP/s  diff %.2e %s\n", routine.c_str(), prec.c_str(), x,
                    method.c_str(), ms, r.gflops, difference, note.c_str());
        std::fflush(stdout);
    };
    if (s.cpu_repeat > 0) {
        std::vector<T> ha, hb;
        std::vector<T*> ha_ptr(p.count), hb_ptr(p.count);
        std::vector<double> times;
        std::vector<int> info(p.count);
        for (int k = 0; k < s.cpu_repeat; ++k) {
            ha = p.a, hb = p.b;
            for (int i = 0; i < p.count; ++i) ha_ptr[i] = ha.data() + p.a_at[i], hb_ptr[i] = hb.data() + p.b_at[i];
            const T* const* hac = ha_ptr.data();
            const auto t0 = std::chrono::steady_clock::now();
            if (routine == "trsm_square")
                trsm_vbatched_max_nocheck(Side::left, Uplo::lower, Op::no_trans, Diag::non_unit, p.m.data(), p.n.data(),
                                          T(1), hac, p.order.data(), hb_ptr.data(), ldb_h.data(), p.max_m, p.max_n,
                                          p.count, cpu);
            else if (routine == "trsm_chol")
                trsm_vbatched_max_nocheck(Side::right, Uplo::lower, Op::conj_trans, Diag::non_unit, p.m.data(),
                                          p.n.data(), T(1), hac, p.order.data(), hb_ptr.data(), ldb_h.data(), p.max_m,
                                          p.max_n, p.count, cpu);
            else if (routine == "trmm")
                trmm_vbatched_max_nocheck(Side::left, Uplo::lower, Op::no_trans, Diag::non_unit, p.m.data(), p.n.data(),
                                          T(1), hac, p.order.data(), hb_ptr.data(), ldb_h.data(), p.max_m, p.max_n,
                                          p.count, cpu);
            else
                potrf_vbatched_max_nocheck(Uplo::lower, p.order.data(), ha_ptr.data(), p.order.data(), p.max_order,
                                           p.count, info.data(), cpu);
            times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        reference = potrf ? ha : hb;
        add("cpu reference (" + std::to_string(omp_get_max_threads()) + " threads)", median(times), 0);
    }
    auto difference = [&](const Buffer<T>& out) {
        if (reference.empty()) return -1.0;
        return relative_difference(download(out, reference.size()), reference);
    };

    // Ours.
    auto ours = [&](const TriangularConfig& config) {
        if (routine == "trsm_square")
            trsm_vbatched_max_nocheck(Side::left, Uplo::lower, Op::no_trans, Diag::non_unit, m_d.data(), n_d.data(), T(1),
                                      a_in, lda_d.data(), b_ptr_d.data(), ldb_d.data(), p.max_m, p.max_n, p.count, gpu,
                                      config);
        else if (routine == "trsm_chol")
            trsm_vbatched_max_nocheck(Side::right, Uplo::lower, Op::conj_trans, Diag::non_unit, m_d.data(), n_d.data(),
                                      T(1), a_in, lda_d.data(), b_ptr_d.data(), ldb_d.data(), p.max_m, p.max_n, p.count,
                                      gpu, config);
        else if (routine == "trmm")
            trmm_vbatched_max_nocheck(Side::left, Uplo::lower, Op::no_trans, Diag::non_unit, m_d.data(), n_d.data(), T(1),
                                      a_in, lda_d.data(), b_ptr_d.data(), ldb_d.data(), p.max_m, p.max_n, p.count, gpu,
                                      config);
        else
            potrf_vbatched_max_nocheck(Uplo::lower, order_d.data(), a_ptr_d.data(), lda_d.data(), p.max_order, p.count,
                                       info_d.data(), gpu, config);
    };
    std::vector<std::pair<std::string, TriangularConfig>> variants;
    if (routine.rfind("trsm", 0) == 0) {
        TriangularConfig rec, inv;
        rec.trsm_algorithm = TrsmAlgorithm::recursive, inv.trsm_algorithm = TrsmAlgorithm::inversion;
        variants = {{"ours recursive", rec}, {"ours inversion", inv}};
        for (int nb : s.inversion_blocks) {
            TriangularConfig c = inv;
            c.inversion_block = nb;
            variants.push_back({"ours inversion nb" + std::to_string(nb), c});
        }
    } else {
        variants = {{"ours", TriangularConfig{}}};
    }
    const std::size_t plain = variants.size();
    for (const Settings::Blocking& blocking : s.blockings)
        for (std::size_t v = 0; v < plain; ++v) {
            TriangularConfig c = variants[v].second;
            c.columns_per_thread = blocking.columns, c.warps_per_block = blocking.warps;
            c.column_blocks = blocking.column_blocks;
            std::string name = variants[v].first + " c" + std::to_string(blocking.columns) + "w" + std::to_string(blocking.warps);
            if (blocking.column_blocks > 0) name += "b" + std::to_string(blocking.column_blocks);
            variants.push_back({name, c});
        }
    double best_ours = 0;
    for (const auto& [name, config] : variants) {
        // A library error (an invalid blocking, a kernel that fails to compile) is a row, not the end.
        try {
            const double ms = time_gpu(stream, s.repeat, restore, [&] { ours(config); });
            gpu.synchronize();
            add(name, ms, difference(potrf ? a : b));
            best_ours = best_ours == 0 ? ms : std::min(best_ours, ms);
        } catch (const batchsolve::Error& e) {
            add(name, 0, -1, std::string("error: ") + e.what());
        }
    }

    // Vendor.
    if (!potrf) {
        const cublasSideMode_t side = routine == "trsm_chol" ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
        const cublasOperation_t op = routine == "trsm_chol" ? (is_complex_v<T> ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
        const T one(1);
        cudaEvent_t fork, join;
        check(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), "cudaEventCreate");
        check(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), "cudaEventCreate");
        auto vendor = [&] {
            check(cudaEventRecord(fork, stream), "cudaEventRecord");
            for (cudaStream_t st : streams) check(cudaStreamWaitEvent(st, fork, 0), "cudaStreamWaitEvent");
            for (int i = 0; i < p.count; ++i) {
                check(cublasSetStream(blas, streams[i % streams.size()]), "cublasSetStream");
                if (routine == "trmm")
                    check(vendor_trmm(blas, side, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_NON_UNIT, p.m[i], p.n[i], &one,
                                      a_ptr[i], p.order[i], b_ptr[i], ldb_h[i]),
                          "cublas trmm");
                else
                    check(vendor_trsm(blas, side, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_NON_UNIT, p.m[i], p.n[i], &one,
                                      a_ptr[i], p.order[i], b_ptr[i], ldb_h[i]),
                          "cublas trsm");
            }
            for (cudaStream_t st : streams) {
                check(cudaEventRecord(join, st), "cudaEventRecord");
                check(cudaStreamWaitEvent(stream, join, 0), "cudaStreamWaitEvent");
            }
        };
        const double ms = time_gpu(stream, s.repeat, restore, vendor);
        check(cudaStreamSynchronize(stream), "sync");
        add("cublas 16 streams", ms, difference(b), "ours " + std::to_string(ms / best_ours) + "x");
        cudaEventDestroy(fork), cudaEventDestroy(join);
    } else {
        // cuSOLVER potrfBatched once per distinct size (the pointer arrays grouped by size on the device).
        std::map<int, std::vector<int>> by_size;
        for (int i = 0; i < p.count; ++i) by_size[p.order[i]].push_back(i);
        std::vector<T*> grouped;
        std::vector<std::pair<int, std::size_t>> groups;  // (size, first index in grouped)
        for (const auto& [size, members] : by_size) {
            groups.push_back({size, grouped.size()});
            for (int i : members) grouped.push_back(a_ptr[i]);
        }
        Buffer<T*> grouped_d(gpu, grouped);
        check(cusolverDnSetStream(solver, stream), "cusolverDnSetStream");
        auto vendor = [&] {
            for (std::size_t g = 0; g < groups.size(); ++g) {
                const int size = groups[g].first;
                const std::size_t first = groups[g].second;
                const std::size_t end = g + 1 < groups.size() ? groups[g + 1].second : grouped.size();
                check(vendor_potrf_batched(solver, size, grouped_d.data() + first, size, info_d.data(), int(end - first)),
                      "cusolverDn?potrfBatched");
            }
        };
        const double ms = time_gpu(stream, s.repeat, restore, vendor);
        add("cusolver potrfBatched per size", ms, difference(a),
            std::to_string(groups.size()) + " calls; ours " + std::to_string(ms / best_ours) + "x");

        // Uniform batch of order x: the fixed-size potrf_batched against potrf_vbatched.
        if (x <= 128) {
            const std::size_t elements = std::size_t(x) * x * p.count;
            std::vector<T> uniform(elements);
            for (int i = 0; i < p.count; ++i)
                for (int c = 0; c < x; ++c)
                    for (int r = 0; r < x; ++r)
                        uniform[std::size_t(i) * x * x + r + std::size_t(c) * x] =
                            r == c ? T(real_t<T>(x + 1)) : T(real_t<T>(1.0 / (1 + r + c)));
            Buffer<T> u0(gpu, uniform), u(gpu, elements);
            std::vector<T*> u_ptr(p.count);
            for (int i = 0; i < p.count; ++i) u_ptr[i] = u.data() + std::size_t(i) * x * x;
            Buffer<T*> u_ptr_d(gpu, u_ptr);
            Buffer<int> u_n(gpu, std::vector<int>(p.count, x));
            auto restore_u = [&] {
                check(cudaMemcpyAsync(u.data(), u0.data(), elements * sizeof(T), cudaMemcpyDeviceToDevice, stream), "restore");
            };
            const double flops = (is_complex_v<T> ? 4 : 1) * double(x) * x * x / 3 * p.count;
            double fixed = 0, varied = 0;
            try {  // a library error is a row's note, not the end of the run
                fixed = time_gpu(stream, s.repeat, restore_u, [&] {
                    potrf_batched(Uplo::lower, BatchView<T>::column_major(u.data(), x, x, p.count), info_d.data(), gpu);
                });
                varied = time_gpu(stream, s.repeat, restore_u, [&] {
                    potrf_vbatched_max_nocheck(Uplo::lower, u_n.data(), u_ptr_d.data(), u_n.data(), x, p.count,
                                               info_d.data(), gpu);
                });
            } catch (const batchsolve::Error& e) {
                std::printf("potrf uniform x=%d: error: %s\n", x, e.what());
            }
            for (auto [name, ms2] : {std::pair{std::string("uniform: potrf_batched (fixed n)"), fixed},
                                     std::pair{std::string("uniform: ours vbatched"), varied}}) {
                Row r;
                r.routine = routine, r.precision = prec, r.method = name, r.x = x, r.count = p.count, r.ms = ms2;
                r.gflops = ms2 > 0 ? flops / (ms2 * 1e6) : 0;
                r.note = "all n = " + std::to_string(x);
                rows.push_back(r);
                std::printf("%-12s %s x=%-4d %-26s %10.3f ms %10.1f GFLOP/s  %s\n", routine.c_str(), prec.c_str(), x,
                            name.c_str(), ms2, r.gflops, r.note.c_str());
            }
        }
    }
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
    Settings s;
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        auto value = [&]() -> std::string {
            if (k + 1 >= argc) fail("option " + arg + " needs a value");
            return argv[++k];
        };
        auto number = [&](const std::string& text) {
            try {
                std::size_t used = 0;
                const long long v = std::stoll(text, &used);
                if (used != text.size() || v < 0 || v > (1 << 30)) throw std::invalid_argument(text);
                return int(v);
            } catch (const std::exception&) {
                fail("invalid " + arg + " '" + text + "'");
            }
        };
        if (arg == "--help" || arg == "-h") {
            std::cout << kUsage;
            return 0;
        } else if (arg == "--x") {
            s.x.clear();
            for (const std::string& t : split(value())) s.x.push_back(number(t));
            for (int x : s.x)
                if (x < 1) fail("invalid --x: sizes must be >= 1");
        } else if (arg == "--batch") {
            s.batch = number(value());
            if (s.batch < 1) fail("invalid --batch: must be >= 1");
        } else if (arg == "--precision") {
            s.precisions = split(value());
            for (const std::string& p : s.precisions)
                if (p != "s" && p != "d" && p != "c" && p != "z") fail("invalid --precision '" + p + "'");
        } else if (arg == "--routines") {
            s.routines = split(value());
            for (const std::string& r : s.routines)
                if (r != "trsm_square" && r != "trsm_chol" && r != "trmm" && r != "potrf") fail("invalid --routines '" + r + "'");
        } else if (arg == "--repeat") s.repeat = std::max(1, number(value()));
        else if (arg == "--cpu-repeat") s.cpu_repeat = number(value());
        else if (arg == "--seed") s.seed = std::uint64_t(number(value()));
        else if (arg == "--blockings") {
            for (const std::string& t : split(value())) {
                std::vector<int> fields;
                std::stringstream parts(t);
                for (std::string f; std::getline(parts, f, ':');) fields.push_back(number(f));
                if (fields.size() < 2 || fields.size() > 3) fail("invalid --blockings '" + t + "' (columns:warps[:blocks])");
                s.blockings.push_back({fields[0], fields[1], fields.size() == 3 ? fields[2] : 0});
            }
        } else if (arg == "--inversion-blocks") {
            for (const std::string& t : split(value())) s.inversion_blocks.push_back(number(t));
        }
        else if (arg == "--json") s.json_file = value();
        else if (arg == "--markdown") s.markdown_file = value();
        else fail("unknown option '" + arg + "' (see --help)");
    }
    if (!Context::cuda_available()) {
        std::cout << "vbatched_triangular_bench: skipped: no GPU\n";
        return 0;
    }
    Context gpu(Backend::cuda), cpu(Backend::cpu);
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, gpu.device()), "cudaGetDeviceProperties");
    cublasHandle_t blas;
    cusolverDnHandle_t solver;
    check(cublasCreate(&blas), "cublasCreate");
    check(cusolverDnCreate(&solver), "cusolverDnCreate");
    std::vector<cudaStream_t> streams(16);
    for (cudaStream_t& st : streams) check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate");

    std::printf("vbatched_triangular_bench: %s, commit %s, batch %d, sizes uniform in [1, x]\n", prop.name,
                git_commit().c_str(), s.batch);
    std::vector<Row> rows;
    for (const std::string& prec : s.precisions)
        for (const std::string& routine : s.routines)
            for (int x : s.x) {
                if (prec == "s") run_setup<float>(s, routine, x, gpu, cpu, blas, solver, streams, rows);
                if (prec == "d") run_setup<double>(s, routine, x, gpu, cpu, blas, solver, streams, rows);
                if (prec == "c") run_setup<std::complex<float>>(s, routine, x, gpu, cpu, blas, solver, streams, rows);
                if (prec == "z") run_setup<std::complex<double>>(s, routine, x, gpu, cpu, blas, solver, streams, rows);
            }

    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    // Summary: ours (best variant) against the vendor row of each set-up.
    json summary = json::array();
    std::ostringstream table;
    table << "| routine | prec | x | method | ms | GFLOP/s | diff vs CPU | note |\n|---|---|---|---|---|---|---|---|\n";
    for (const Row& r : rows) {
        char line[512];
        std::snprintf(line, sizeof line, "| %s | %s | %d | %s | %.3f | %.1f | %.1e | %s |\n", r.routine.c_str(),
                      r.precision.c_str(), r.x, r.method.c_str(), r.ms, r.gflops, r.difference, r.note.c_str());
        table << line;
    }
    std::printf("\nsummary (ours best / vendor, GFLOP/s ratio; target >= 5x cuBLAS in 16 streams for x <= 256):\n");
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const Row& v = rows[k];
        if (v.method != "cublas 16 streams" && v.method != "cusolver potrfBatched per size") continue;
        double best = 0;
        std::string best_method;
        for (const Row& r : rows)
            if (r.routine == v.routine && r.precision == v.precision && r.x == v.x && r.method.rfind("ours", 0) == 0 &&
                r.gflops > best)
                best = r.gflops, best_method = r.method;
        const double ratio = v.gflops > 0 ? best / v.gflops : 0;
        std::printf("  %-12s %s x=%-4d %-16s %9.1f vs %9.1f GFLOP/s  %6.2fx\n", v.routine.c_str(), v.precision.c_str(),
                    v.x, best_method.c_str(), best, v.gflops, ratio);
        summary.push_back({{"routine", v.routine}, {"precision", v.precision}, {"x", v.x}, {"ours", best_method},
                           {"ours_gflops", best}, {"vendor", v.method}, {"vendor_gflops", v.gflops}, {"ratio", ratio}});
    }
    if (!s.json_file.empty()) {
        json out = {{"gpu", prop.name}, {"commit", git_commit()}, {"date", date}, {"batch", s.batch},
                    {"summary", summary}, {"rows", json::array()}};
        for (const Row& r : rows)
            out["rows"].push_back({{"routine", r.routine}, {"precision", r.precision}, {"x", r.x}, {"method", r.method},
                                   {"count", r.count}, {"ms", r.ms}, {"gflops", r.gflops}, {"difference", r.difference},
                                   {"note", r.note}});
        std::ofstream(s.json_file) << out.dump(2) << "\n";
    }
    if (!s.markdown_file.empty()) {
        std::ofstream md(s.markdown_file);
        md << "# vbatched_triangular_bench: " << prop.name << ", commit " << git_commit() << ", " << date << "\n\n"
           << s.batch << " problems per call, sizes uniform in [1, x]; diff = ||X - X_cpu||_F / ||X_cpu||_F.\n\n"
           << table.str();
    }
    for (cudaStream_t st : streams) cudaStreamDestroy(st);
    cublasDestroy(blas);
    cusolverDnDestroy(solver);
    return 0;
}
