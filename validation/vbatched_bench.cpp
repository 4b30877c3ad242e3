// vbatched_bench: the variable-size BLAS-3 routines (vbatched_blas.hpp) against cuBLAS in one process,
// on the seed paper's set-ups (Abdelfattah et al., ICS'17, section 6): a batch of problems whose sizes
// are drawn uniformly from [1, x]. Peers side by side: cuBLAS ?gemmGroupedBatched (one group per
// problem), cuBLAS issued per problem over 16 streams, and the library's CPU backend. GFLOP/s, ratios,
// the fraction of the DGEMM peak measured in the same run, an error column, JSON and a markdown table.
// --sweep times a list of GEMM configurations instead (the tuning pass).
#include <cublas_v2.h>
#include <cuda_runtime.h>

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
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "batchsolve/buffer.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/vbatched_blas.hpp"
#include "batchsolve_io/progress.hpp"

namespace bs = batchsolve;
using json = nlohmann::ordered_json;

namespace {

const char* kHelp = R"(vbatched_bench: variable-size batched BLAS-3 (batchsolve) against cuBLAS, side by side.

usage: vbatched_bench [options]
  --routines LIST   gemm,gemm_k16,gemm_k32,syrk,herk,syr2k,her2k,symm,hemm (default: all; herk/her2k/hemm
                    only in complex precisions)
  --precisions LIST s,d,c,z (default d,z)
  --gemm-precisions LIST  square GEMM rows also in these precisions (default none)
  --x LIST          largest size x of each set-up; sizes drawn uniformly from [1, x] (default 32,64,128,256,512)
  --batch N         problems per call (default 2000)
  --repeat R        timed calls after one warm-up; the median is reported (default 5)
  --cpu-max X       CPU backend rows only up to this x (default 512; 0: none)
  --no-gpu          CPU rows only (the default without a GPU, where GPU rows say "skipped: no GPU")
  --streams S       cuBLAS streams of the per-problem baseline (default 16)
  --sweep           time the GEMM configurations of the tuning pass instead (GPU only): square gemm and
                    syrk (k = 32) where --routines names them
  --seed N          random seed (default: fresh; printed)
  --json FILE       rows as JSON        --md FILE  the table as markdown
  --help            this text

Set-ups (the seed paper's): gemm m = n = k = s_i (square); gemm_k16/gemm_k32: m = n = s_i, k = 16/32;
syrk/herk/syr2k/her2k: n = s_i, k = 32, lower, no_trans; symm/hemm: m = n = s_i, left, lower.
Flops: gemm 2mnk, syrk kn(n+1), syr2k 2kn(n+1), symm 2m^2n; complex 4x. Ours is the _max level (the
caller gives the maxima, as cuBLAS's host size arrays do); the checked level's time is in the JSON.
Timing: CUDA events around the call, warm-up first, median of R; input sets rotated when the batch is
small enough to sit in L2. Error: ||C_ours - C_cublas||_F / ||C_cublas||_F from the same inputs,
ok when below 30 u sqrt(k_max) (u the unit roundoff).
)";

#define CUDA_OK(call)                                                                                       \
    do {                                                                                                    \
        cudaError_t e_ = (call);                                                                            \
        if (e_ != cudaSuccess) throw std::runtime_error(std::string(#call) + ": " + cudaGetErrorString(e_)); \
    } while (0)
#define CUBLAS_OK(call)                                                                                  \
    do {                                                                                                 \
        cublasStatus_t s_ = (call);                                                                      \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                                 \
            throw std::runtime_error(std::string(#call) + ": cuBLAS status " + std::to_string(int(s_))); \
    } while (0)

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

struct Settings {
    std::vector<std::string> routines = {"gemm", "gemm_k16", "gemm_k32", "syrk", "herk", "syr2k", "her2k", "symm", "hemm"};
    std::vector<std::string> precisions = {"d", "z"};
    std::vector<std::string> gemm_precisions;  // square GEMM rows only
    std::vector<int> xs = {32, 64, 128, 256, 512};
    int batch = 2000, repeat = 5, cpu_max = 512, streams = 16;
    bool gpu = true, sweep = false;
    std::uint64_t seed = 0;
    std::string json_file, md_file;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// ---- the set-ups --------------------------------------------------------------------------------

enum class Kind { gemm, syrk, syr2k, symm };
struct Setup {
    std::string name;
    Kind kind;
    int fixed_k;  // 0: k = s_i
    bool hermitian;
};
Setup setup_of(const std::string& name) {
    if (name == "gemm") return {name, Kind::gemm, 0, false};
    if (name == "gemm_k16") return {name, Kind::gemm, 16, false};
    if (name == "gemm_k32") return {name, Kind::gemm, 32, false};
    if (name == "syrk" || name == "herk") return {name, Kind::syrk, 32, name == "herk"};
    if (name == "syr2k" || name == "her2k") return {name, Kind::syr2k, 32, name == "her2k"};
    if (name == "symm" || name == "hemm") return {name, Kind::symm, 0, name == "hemm"};
    throw std::runtime_error("unknown routine '" + name + "' (see --help)");
}

template <class T> constexpr bool is_complex = bs::is_complex_v<T>;

// dst[0, count) = src[0, count) in the context's memory.
template <class T>
void copy_within(bs::Context& ctx, T* dst, const T* src, std::size_t count) {
    if (ctx.backend() == bs::Backend::cuda)
        CUDA_OK(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(ctx.stream())));
    else
        std::copy(src, src + count, dst);
}

// Elements uniform in [-1, 1] (real and imaginary parts): a pool of 2^20 random values, copied in
// chunks from random offsets (gigabytes at x = 512 would take the host seconds to draw one by one;
// the timing does not care that values repeat, and every peer gets the same data).
template <class T>
bs::Buffer<T> filled(bs::Context& ctx, std::size_t size, std::mt19937_64& engine) {
    constexpr std::size_t pool_size = 1 << 20;
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<T> pool(pool_size);
    for (T& x : pool) {
        if constexpr (is_complex<T>) x = T(u(engine), u(engine));
        else x = T(u(engine));
    }
    bs::Buffer<T> out(ctx, std::max<std::size_t>(size, 1));
    if (size <= pool_size) {
        out.upload(pool.data(), std::max<std::size_t>(size, 1));
        return out;
    }
    bs::Buffer<T> device_pool(ctx, pool);
    std::uniform_int_distribution<std::size_t> start(0, pool_size / 2);
    for (std::size_t at = 0; at < size;) {
        const std::size_t from = start(engine), chunk = std::min(pool_size - from, size - at);
        copy_within(ctx, out.data() + at, device_pool.data() + from, chunk);
        at += chunk;
    }
    ctx.synchronize();  // the pool is freed on return
    return out;
}

// One batch of one set-up in a context's memory: packed column-major matrices (ld = rows), pointer
// and size arrays, and a pristine copy of C to restore.
template <class T>
struct Batch {
    std::vector<int> m, n, k, lda, ldb, ldc;
    int max_m = 0, max_n = 0, max_k = 0;
    double flops = 0;
    std::vector<std::size_t> a_off, b_off, c_off;
    bs::Buffer<T> a, b, c, c0;
    bs::Buffer<T*> ap, bp, cp;
    bs::Buffer<int> md, nd, kd, ldad, ldbd, ldcd, info;

    Batch(bs::Context& ctx, const Setup& s, const std::vector<int>& sizes, std::mt19937_64& engine) {
        const int count = int(sizes.size());
        m = n = sizes;
        k.resize(count);
        for (int i = 0; i < count; ++i) k[i] = s.fixed_k ? s.fixed_k : sizes[i];
        if (s.kind == Kind::symm) k = m;  // A is m x m
        std::size_t sa = 0, sb = 0, sc = 0;
        const double cx = is_complex<T> ? 4 : 1;
        for (int i = 0; i < count; ++i) {
            int ar = 0, ac = 0, br = 0, bc = 0;
            switch (s.kind) {
                case Kind::gemm: ar = m[i], ac = k[i], br = k[i], bc = n[i]; flops += cx * 2.0 * m[i] * n[i] * k[i]; break;
                case Kind::syrk: ar = n[i], ac = k[i], br = 0, bc = 0; flops += cx * double(k[i]) * n[i] * (n[i] + 1); break;
                case Kind::syr2k: ar = n[i], ac = k[i], br = n[i], bc = k[i]; flops += cx * 2.0 * k[i] * n[i] * (n[i] + 1); break;
                case Kind::symm: ar = m[i], ac = m[i], br = m[i], bc = n[i]; flops += cx * 2.0 * m[i] * m[i] * n[i]; break;
            }
            lda.push_back(std::max(1, ar)), ldb.push_back(std::max(1, br)), ldc.push_back(std::max(1, m[i]));
            a_off.push_back(sa), b_off.push_back(sb), c_off.push_back(sc);
            sa += std::size_t(ar) * ac, sb += std::size_t(br) * bc, sc += std::size_t(m[i]) * n[i];
        }
        max_m = *std::max_element(m.begin(), m.end()), max_n = *std::max_element(n.begin(), n.end());
        max_k = *std::max_element(k.begin(), k.end());
        a = filled<T>(ctx, sa, engine), b = filled<T>(ctx, sb, engine), c = filled<T>(ctx, sc, engine);
        c0 = bs::Buffer<T>(ctx, c.size());
        copy_within(ctx, c0.data(), c.data(), c.size());
        std::vector<T*> pa(count), pb(count), pc(count);
        for (int i = 0; i < count; ++i)
            pa[i] = a.data() + a_off[i], pb[i] = b.data() + b_off[i], pc[i] = c.data() + c_off[i];
        ap = bs::Buffer<T*>(ctx, pa), bp = bs::Buffer<T*>(ctx, pb), cp = bs::Buffer<T*>(ctx, pc);
        md = bs::Buffer<int>(ctx, m), nd = bs::Buffer<int>(ctx, n), kd = bs::Buffer<int>(ctx, k);
        ldad = bs::Buffer<int>(ctx, lda), ldbd = bs::Buffer<int>(ctx, ldb), ldcd = bs::Buffer<int>(ctx, ldc);
        info = bs::Buffer<int>(ctx, std::size_t(count));
    }
    int count() const { return int(m.size()); }
    std::size_t bytes() const { return (a.size() + b.size() + 2 * c.size()) * sizeof(T); }
    const T* const* A() const { return reinterpret_cast<const T* const*>(ap.data()); }
    const T* const* B() const { return reinterpret_cast<const T* const*>(bp.data()); }
};

template <class T> T alpha_value() {
    if constexpr (is_complex<T>) return T(0.5, 0.125);
    else return T(0.5);
}
template <class T> T beta_value() {
    if constexpr (is_complex<T>) return T(-0.25, 0.0625);
    else return T(-0.25);
}

// The library's call for a set-up; level 0 checked, 1 _max.
template <class T>
void run_ours(const Setup& s, Batch<T>& q, int level, bs::Context& ctx) {
    const T alpha = alpha_value<T>(), beta = beta_value<T>();
    const bs::real_t<T> ra = std::real(alpha), rb = std::real(beta);
    int* info = q.info.data();
    const int c = q.count();
    switch (s.kind) {
        case Kind::gemm:
            if (level == 0)
                bs::gemm_vbatched<T>(bs::Op::no_trans, bs::Op::no_trans, q.md.data(), q.nd.data(), q.kd.data(), alpha, q.A(),
                                     q.ldad.data(), q.B(), q.ldbd.data(), beta, q.cp.data(), q.ldcd.data(), c, info, ctx);
            else
                bs::gemm_vbatched_max<T>(bs::Op::no_trans, bs::Op::no_trans, q.md.data(), q.nd.data(), q.kd.data(), alpha,
                                         q.A(), q.ldad.data(), q.B(), q.ldbd.data(), beta, q.cp.data(), q.ldcd.data(),
                                         q.max_m, q.max_n, q.max_k, c, info, ctx);
            break;
        case Kind::syrk:
            if (s.hermitian) {
                if (level == 0)
                    bs::herk_vbatched<T>(bs::Uplo::lower, bs::Op::no_trans, q.nd.data(), q.kd.data(), ra, q.A(), q.ldad.data(), rb,
                                         q.cp.data(), q.ldcd.data(), c, info, ctx);
                else
                    bs::herk_vbatched_max<T>(bs::Uplo::lower, bs::Op::no_trans, q.nd.data(), q.kd.data(), ra, q.A(),
                                             q.ldad.data(), rb, q.cp.data(), q.ldcd.data(), q.max_n, q.max_k, c, info, ctx);
            } else {
                if (level == 0)
                    bs::syrk_vbatched<T>(bs::Uplo::lower, bs::Op::no_trans, q.nd.data(), q.kd.data(), alpha, q.A(), q.ldad.data(),
                                         beta, q.cp.data(), q.ldcd.data(), c, info, ctx);
                else
                    bs::syrk_vbatched_max<T>(bs::Uplo::lower, bs::Op::no_trans, q.nd.data(), q.kd.data(), alpha, q.A(),
                                             q.ldad.data(), beta, q.cp.data(), q.ldcd.data(), q.max_n, q.max_k, c, info, ctx);
            }
            break;
        case Kind::syr2k:
            if (s.hermitian) {
                if (level == 0)
                    bs::her2k_vbatched<T>(bs::Uplo::lower, bs::Op::no_trans, q.nd.data(), q.kd.data(), alpha, q.A(), q.ldad.data(),
                                          q.B(), q.ldbd.data(), rb, q.cp.data(), q.ldcd.data(), c, info, ctx);
                else
                    bs::her2k_vbatched_max<T>(bs::Uplo::lower, bs::Op::no_trans, q.nd.data(), q.kd.data(), alpha, q.A(),
                                              q.ldad.data(), q.B(), q.ldbd.data(), rb, q.cp.data(), q.ldcd.data(), q.max_n,
                                              q.max_k, c, info, ctx);
            } else {
                if (level == 0)
                    bs::syr2k_vbatched<T>(bs::Uplo::lower, bs::Op::no_trans, q.nd.data(), q.kd.data(), alpha, q.A(), q.ldad.data(),
                                          q.B(), q.ldbd.data(), beta, q.cp.data(), q.ldcd.data(), c, info, ctx);
                else
                    bs::syr2k_vbatched_max<T>(bs::Uplo::lower, bs::Op::no_trans, q.nd.data(), q.kd.data(), alpha, q.A(),
                                              q.ldad.data(), q.B(), q.ldbd.data(), beta, q.cp.data(), q.ldcd.data(), q.max_n,
                                              q.max_k, c, info, ctx);
            }
            break;
        case Kind::symm: {
            auto fn = s.hermitian ? &bs::hemm_vbatched_max<T> : &bs::symm_vbatched_max<T>;
            auto fc = s.hermitian ? &bs::hemm_vbatched<T> : &bs::symm_vbatched<T>;
            if (level == 0)
                fc(bs::Side::left, bs::Uplo::lower, q.md.data(), q.nd.data(), alpha, q.A(), q.ldad.data(), q.B(), q.ldbd.data(),
                   beta, q.cp.data(), q.ldcd.data(), c, info, ctx);
            else
                fn(bs::Side::left, bs::Uplo::lower, q.md.data(), q.nd.data(), alpha, q.A(), q.ldad.data(), q.B(), q.ldbd.data(),
                   beta, q.cp.data(), q.ldcd.data(), q.max_m, q.max_n, c, info, ctx);
            break;
        }
    }
}

// ---- cuBLAS ----------------------------------------------------------------------------------------

template <class T> cudaDataType data_type();
template <> cudaDataType data_type<float>() { return CUDA_R_32F; }
template <> cudaDataType data_type<double>() { return CUDA_R_64F; }
template <> cudaDataType data_type<std::complex<float>>() { return CUDA_C_32F; }
template <> cudaDataType data_type<std::complex<double>>() { return CUDA_C_64F; }

// One cuBLAS call for problem i of a set-up (the per-problem baseline).
template <class T>
void cublas_one(cublasHandle_t h, const Setup& s, const Batch<T>& q, const std::vector<T*>& pa, const std::vector<T*>& pb,
                const std::vector<T*>& pc, int i) {
    const T alpha = alpha_value<T>(), beta = beta_value<T>();
    const int m = q.m[i], n = q.n[i], k = q.k[i];
    if (m == 0 || n == 0) return;
    using D = std::conditional_t<std::is_same_v<T, float>, float,
              std::conditional_t<std::is_same_v<T, double>, double,
              std::conditional_t<std::is_same_v<T, std::complex<float>>, cuComplex, cuDoubleComplex>>>;
    auto d = [](const T* p) { return reinterpret_cast<const D*>(p); };
    auto w = [](T* p) { return reinterpret_cast<D*>(p); };
    const D* al = reinterpret_cast<const D*>(&alpha);
    const D* be = reinterpret_cast<const D*>(&beta);
    const auto ra = std::real(alpha), rb = std::real(beta);
    const cublasOperation_t N = CUBLAS_OP_N;
    const cublasFillMode_t L = CUBLAS_FILL_MODE_LOWER;
    if constexpr (std::is_same_v<T, float>) {
        if (s.kind == Kind::gemm) CUBLAS_OK(cublasSgemm(h, N, N, m, n, k, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syrk) CUBLAS_OK(cublasSsyrk(h, L, N, n, k, al, d(pa[i]), q.lda[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syr2k) CUBLAS_OK(cublasSsyr2k(h, L, N, n, k, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::symm) CUBLAS_OK(cublasSsymm(h, CUBLAS_SIDE_LEFT, L, m, n, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
    } else if constexpr (std::is_same_v<T, double>) {
        if (s.kind == Kind::gemm) CUBLAS_OK(cublasDgemm(h, N, N, m, n, k, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syrk) CUBLAS_OK(cublasDsyrk(h, L, N, n, k, al, d(pa[i]), q.lda[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syr2k) CUBLAS_OK(cublasDsyr2k(h, L, N, n, k, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::symm) CUBLAS_OK(cublasDsymm(h, CUBLAS_SIDE_LEFT, L, m, n, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
    } else if constexpr (std::is_same_v<T, std::complex<float>>) {
        if (s.kind == Kind::gemm) CUBLAS_OK(cublasCgemm(h, N, N, m, n, k, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syrk && !s.hermitian) CUBLAS_OK(cublasCsyrk(h, L, N, n, k, al, d(pa[i]), q.lda[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syrk && s.hermitian) CUBLAS_OK(cublasCherk(h, L, N, n, k, &ra, d(pa[i]), q.lda[i], &rb, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syr2k && !s.hermitian) CUBLAS_OK(cublasCsyr2k(h, L, N, n, k, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syr2k && s.hermitian) CUBLAS_OK(cublasCher2k(h, L, N, n, k, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], &rb, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::symm) CUBLAS_OK((s.hermitian ? cublasChemm : cublasCsymm)(h, CUBLAS_SIDE_LEFT, L, m, n, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
    } else {
        if (s.kind == Kind::gemm) CUBLAS_OK(cublasZgemm(h, N, N, m, n, k, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syrk && !s.hermitian) CUBLAS_OK(cublasZsyrk(h, L, N, n, k, al, d(pa[i]), q.lda[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syrk && s.hermitian) CUBLAS_OK(cublasZherk(h, L, N, n, k, &ra, d(pa[i]), q.lda[i], &rb, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syr2k && !s.hermitian) CUBLAS_OK(cublasZsyr2k(h, L, N, n, k, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::syr2k && s.hermitian) CUBLAS_OK(cublasZher2k(h, L, N, n, k, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], &rb, w(pc[i]), q.ldc[i]));
        if (s.kind == Kind::symm) CUBLAS_OK((s.hermitian ? cublasZhemm : cublasZsymm)(h, CUBLAS_SIDE_LEFT, L, m, n, al, d(pa[i]), q.lda[i], d(pb[i]), q.ldb[i], be, w(pc[i]), q.ldc[i]));
    }
}

// The GPU side: the context's stream, the stream pool of the per-problem baseline, timing.
struct Gpu {
    bs::Context* ctx = nullptr;
    cudaStream_t stream = nullptr;
    cublasHandle_t handle = nullptr;            // on `stream` (grouped calls, the DGEMM peak)
    std::vector<cudaStream_t> pool;
    std::vector<cublasHandle_t> pool_handles;  // one per pool stream
    cudaEvent_t start = nullptr, stop = nullptr;
    std::vector<cudaEvent_t> joins;

    Gpu(bs::Context& c, int streams) : ctx(&c), stream(static_cast<cudaStream_t>(c.stream())) {
        CUBLAS_OK(cublasCreate(&handle));
        CUBLAS_OK(cublasSetStream(handle, stream));
        pool.resize(streams), pool_handles.resize(streams), joins.resize(streams);
        for (int s = 0; s < streams; ++s) {
            CUDA_OK(cudaStreamCreateWithFlags(&pool[s], cudaStreamNonBlocking));
            CUBLAS_OK(cublasCreate(&pool_handles[s]));
            CUBLAS_OK(cublasSetStream(pool_handles[s], pool[s]));
            CUDA_OK(cudaEventCreateWithFlags(&joins[s], cudaEventDisableTiming));
        }
        CUDA_OK(cudaEventCreate(&start));
        CUDA_OK(cudaEventCreate(&stop));
    }
    ~Gpu() {
        for (std::size_t s = 0; s < pool.size(); ++s) {
            cublasDestroy(pool_handles[s]);
            cudaStreamDestroy(pool[s]);
            cudaEventDestroy(joins[s]);
        }
        cublasDestroy(handle);
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    // Median seconds of `repeat` calls after one warm-up; call(r) gets the repetition number.
    double time(int repeat, const std::function<void(int)>& call) {
        call(0);
        CUDA_OK(cudaStreamSynchronize(stream));
        std::vector<double> t;
        for (int r = 0; r < repeat; ++r) {
            CUDA_OK(cudaEventRecord(start, stream));
            call(r + 1);
            CUDA_OK(cudaEventRecord(stop, stream));
            CUDA_OK(cudaEventSynchronize(stop));
            float ms = 0;
            CUDA_OK(cudaEventElapsedTime(&ms, start, stop));
            t.push_back(ms * 1e-3);
        }
        return median(t);
    }
    // The per-problem baseline: problem i on pool stream i % S, the pool joined back into `stream`.
    template <class T>
    void streams_call(const Setup& s, const Batch<T>& q, const std::vector<T*>& pa, const std::vector<T*>& pb,
                      const std::vector<T*>& pc) {
        CUDA_OK(cudaEventRecord(joins[0], stream));
        for (std::size_t p = 0; p < pool.size(); ++p) CUDA_OK(cudaStreamWaitEvent(pool[p], joins[0], 0));
        for (int i = 0; i < q.count(); ++i) cublas_one(pool_handles[i % pool.size()], s, q, pa, pb, pc, i);
        for (std::size_t p = 0; p < pool.size(); ++p) {
            CUDA_OK(cudaEventRecord(joins[p], pool[p]));
            CUDA_OK(cudaStreamWaitEvent(stream, joins[p], 0));
        }
    }
};

// cuBLAS's grouped GEMM, one group per problem. Returns false when cuBLAS refuses the type.
template <class T>
bool grouped_call(Gpu& g, Batch<T>& q) {
    const int count = q.count();
    static thread_local std::vector<cublasOperation_t> ops;
    static thread_local std::vector<int> group;
    static thread_local std::vector<T> alphas, betas;
    ops.assign(count, CUBLAS_OP_N), group.assign(count, 1);
    alphas.assign(count, alpha_value<T>()), betas.assign(count, beta_value<T>());
    cublasStatus_t st;
    if constexpr (std::is_same_v<T, double>)
        st = cublasDgemmGroupedBatched(g.handle, ops.data(), ops.data(), q.m.data(), q.n.data(), q.k.data(), alphas.data(),
                                       q.A(), q.lda.data(), q.B(), q.ldb.data(), betas.data(), q.cp.data(), q.ldc.data(),
                                       count, group.data());
    else if constexpr (std::is_same_v<T, float>)
        st = cublasSgemmGroupedBatched(g.handle, ops.data(), ops.data(), q.m.data(), q.n.data(), q.k.data(), alphas.data(),
                                       q.A(), q.lda.data(), q.B(), q.ldb.data(), betas.data(), q.cp.data(), q.ldc.data(),
                                       count, group.data());
    else
        st = cublasGemmGroupedBatchedEx(g.handle, ops.data(), ops.data(), q.m.data(), q.n.data(), q.k.data(), alphas.data(),
                                        reinterpret_cast<const void* const*>(q.ap.data()), data_type<T>(), q.lda.data(),
                                        reinterpret_cast<const void* const*>(q.bp.data()), data_type<T>(), q.ldb.data(),
                                        betas.data(), reinterpret_cast<void* const*>(q.cp.data()), data_type<T>(),
                                        q.ldc.data(), count, group.data(),
                                        std::is_same_v<T, std::complex<float>> ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE) return false;
    CUBLAS_OK(st);
    return true;
}

// ||x - y||_F / ||y||_F over the batch's C storage.
template <class T>
double relative_difference(const std::vector<T>& x, const std::vector<T>& y) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < x.size(); ++i) num += std::norm(x[i] - y[i]), den += std::norm(y[i]);
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

std::vector<int> draw_sizes(std::mt19937_64& engine, int count, int x) {
    std::uniform_int_distribution<int> size(1, x);
    std::vector<int> s(count);
    for (int& v : s) v = size(engine);
    return s;
}

std::string fmt(double v, int digits = 1) {
    if (!(v > 0)) return "-";
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(digits);
    o << v;
    return o.str();
}

std::string error_text(double e) {
    if (e < 0) return "-";
    char b[32];
    std::snprintf(b, sizeof b, "%.1e", e);
    return b;
}

struct Row {
    json j;
    std::string line;
};

// One row: ours (_max and checked) and the peers on the GPU, the CPU backend, the error.
template <class T>
Row bench_row(const Settings& st, const Setup& s, int x, Gpu* gpu, bs::Context* cpu, std::mt19937_64& engine,
              double dgemm_peak) {
    const char p = bs::precision_letter(bs::precision_v<T>);
    json j;
    j["routine"] = s.name, j["precision"] = std::string(1, p), j["x"] = x, j["batch"] = st.batch;
    const std::vector<int> sizes = draw_sizes(engine, st.batch, x);
    double ours = 0, checked = 0, grouped = 0, streams = 0, cpu_rate = 0, error = -1;
    bool ok = true;
    double flops = 0;
    if (gpu) {
        // input sets rotated when a set would sit in L2 (the H100/H200's 50-60 MB)
        std::vector<std::unique_ptr<Batch<T>>> sets;
        sets.push_back(std::make_unique<Batch<T>>(*gpu->ctx, s, sizes, engine));
        const int rotate = sets[0]->bytes() < (64u << 20) ? 4 : 1;
        for (int r = 1; r < rotate; ++r) sets.push_back(std::make_unique<Batch<T>>(*gpu->ctx, s, sizes, engine));
        flops = sets[0]->flops;
        j["config"] = json::parse(bs::to_string(bs::default_gemm_config(bs::precision_v<T>, x, x, s.fixed_k ? s.fixed_k : x)));
        std::vector<std::vector<T*>> pa(rotate), pb(rotate), pc(rotate);
        for (int r = 0; r < rotate; ++r) {
            const Batch<T>& q = *sets[r];
            for (int i = 0; i < q.count(); ++i)
                pa[r].push_back(q.a.data() + q.a_off[i]), pb[r].push_back(q.b.data() + q.b_off[i]),
                    pc[r].push_back(q.c.data() + q.c_off[i]);
        }
        // the check: ours and the per-problem cuBLAS from the same C
        Batch<T>& q0 = *sets[0];
        auto restore = [&] {
            CUDA_OK(cudaMemcpyAsync(q0.c.data(), q0.c0.data(), q0.c.size() * sizeof(T), cudaMemcpyDeviceToDevice, gpu->stream));
        };
        restore();
        run_ours(s, q0, 1, *gpu->ctx);
        const std::vector<T> mine = q0.c.to_host();
        restore();
        gpu->streams_call(s, q0, pa[0], pb[0], pc[0]);
        CUDA_OK(cudaStreamSynchronize(gpu->stream));
        const std::vector<T> theirs = q0.c.to_host();
        error = relative_difference(mine, theirs);
        ok = error < 30 * double(bs::unit_roundoff<T>()) * std::sqrt(double(std::max(q0.max_k, 1)));
        const std::vector<int> info = q0.info.to_host();
        if (std::any_of(info.begin(), info.end(), [](int v) { return v != 0; })) ok = false;

        ours = gpu->time(st.repeat, [&](int r) { run_ours(s, *sets[r % rotate], 1, *gpu->ctx); });
        checked = gpu->time(st.repeat, [&](int r) { run_ours(s, *sets[r % rotate], 0, *gpu->ctx); });
        if (s.kind == Kind::gemm) {
            bool supported = grouped_call(*gpu, q0);
            CUDA_OK(cudaStreamSynchronize(gpu->stream));
            if (supported) grouped = gpu->time(st.repeat, [&](int r) { grouped_call(*gpu, *sets[r % rotate]); });
            j["cublas_grouped_supported"] = supported;
        }
        streams = gpu->time(std::min(st.repeat, 3), [&](int r) {
            const int k = r % rotate;
            gpu->streams_call(s, *sets[k], pa[k], pb[k], pc[k]);
        });
    }
    if (cpu && x <= st.cpu_max) {
        Batch<T> q(*cpu, s, sizes, engine);
        flops = q.flops;
        std::vector<double> t;
        for (int r = 0; r < std::min(st.repeat, 3) + 1; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            run_ours(s, q, 1, *cpu);
            const auto t1 = std::chrono::steady_clock::now();
            if (r > 0) t.push_back(std::chrono::duration<double>(t1 - t0).count());
        }
        cpu_rate = flops / median(t) * 1e-9;
    }
    auto rate = [&](double seconds) { return seconds > 0 ? flops / seconds * 1e-9 : 0.0; };
    j["flops"] = flops;
    j["gflops"] = {{"ours", rate(ours)}, {"ours_checked", rate(checked)}, {"cublas_grouped", rate(grouped)},
                   {"cublas_streams", rate(streams)}, {"cpu", cpu_rate}};
    j["seconds"] = {{"ours", ours}, {"ours_checked", checked}, {"cublas_grouped", grouped}, {"cublas_streams", streams}};
    j["ratio"] = {{"vs_cublas_grouped", grouped > 0 ? grouped / ours : 0.0},
                  {"vs_cublas_streams", streams > 0 && ours > 0 ? streams / ours : 0.0},
                  {"vs_cpu", cpu_rate > 0 && ours > 0 ? rate(ours) / cpu_rate : 0.0}};
    if (dgemm_peak > 0) j["fraction_of_dgemm_peak"] = rate(ours) / dgemm_peak;
    j["error"] = error;
    j["ok"] = ok;
    std::ostringstream line;
    char buf[512];
    std::snprintf(buf, sizeof buf, "| %-8s | %c | %4d | %9s | %9s | %9s | %9s | %9s | %6s | %6s | %8s | %s |",
                  s.name.c_str(), p, x, gpu ? fmt(rate(ours)).c_str() : "skipped: no GPU", fmt(rate(checked)).c_str(),
                  fmt(rate(grouped)).c_str(), fmt(rate(streams)).c_str(), fmt(cpu_rate).c_str(),
                  fmt(grouped > 0 && ours > 0 ? grouped / ours : 0, 2).c_str(),
                  fmt(streams > 0 && ours > 0 ? streams / ours : 0, 2).c_str(), error_text(error).c_str(),
                  !gpu ? "-" : ok ? "ok" : "FAILED");
    return {j, buf};
}

const char* kTableHead =
    "| routine  | p |    x | ours GF/s | checked   | cuBLAS grp| cuBLAS 16s| CPU GF/s  | x grp  | x 16s  | error    | ok |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|";

// cuBLAS DGEMM on one large square problem: the peak the rows are a fraction of.
double measure_dgemm_peak(Gpu& g) {
    const int n = 8192;
    double *a, *b, *c;
    const std::size_t bytes = std::size_t(n) * n * sizeof(double);
    CUDA_OK(cudaMalloc(&a, bytes));
    CUDA_OK(cudaMalloc(&b, bytes));
    CUDA_OK(cudaMalloc(&c, bytes));
    CUDA_OK(cudaMemsetAsync(a, 0, bytes, g.stream));
    CUDA_OK(cudaMemsetAsync(b, 0, bytes, g.stream));
    const double one = 1, zero = 0;
    const double s = g.time(3, [&](int) {
        CUBLAS_OK(cublasDgemm(g.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
    });
    cudaFree(a), cudaFree(b), cudaFree(c);
    return 2.0 * n * n * double(n) / s * 1e-9;
}

// The tuning pass: square GEMM with each candidate configuration.
template <class T>
std::vector<bs::GemmConfig> sweep_candidates() {
    std::vector<bs::GemmConfig> c = {
        {16, 16, 8, 8, 8, false},   {32, 32, 8, 8, 8, false},   {32, 32, 8, 16, 16, false}, {32, 32, 16, 16, 16, false},
        {64, 32, 8, 16, 16, false}, {64, 64, 8, 16, 16, false}, {64, 64, 16, 16, 16, false}, {64, 64, 8, 32, 8, false},
        {128, 64, 8, 32, 16, false}};
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>) {
        for (bs::GemmConfig t : std::vector<bs::GemmConfig>{{32, 32, 8, 2, 2, true}, {32, 32, 16, 2, 2, true},
                                                             {32, 32, 8, 1, 1, true}, {64, 64, 8, 2, 2, true},
                                                             {64, 64, 16, 2, 2, true}, {64, 32, 8, 2, 2, true},
                                                             {64, 64, 8, 2, 4, true}, {128, 64, 8, 4, 2, true}})
            c.push_back(t);
    }
    // the best-known shapes again with an occupancy bound (registers traded for resident blocks)
    for (bs::GemmConfig t : std::vector<bs::GemmConfig>{{32, 32, 8, 8, 8, false, 2}, {64, 64, 8, 16, 16, false, 2},
                                                         {32, 32, 8, 2, 2, true, 3}, {64, 64, 8, 2, 4, true, 2},
                                                         {64, 32, 8, 2, 2, true, 3}})
        if (!t.tensor_cores || std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>) c.push_back(t);
    std::vector<bs::GemmConfig> usable;
    for (const bs::GemmConfig& x : c)
        if (bs::gemm_config_problem(bs::precision_v<T>, x).empty()) usable.push_back(x);
    return usable;
}

template <class T>
void sweep(const Settings& st, Gpu& g, std::mt19937_64& engine, json& out, std::ostream& md) {
    const char p = bs::precision_letter(bs::precision_v<T>);
    for (const std::string& name : st.routines) {
        if (name != "gemm" && name != "syrk") continue;  // the GEMM and its triangle form
        const Setup s = setup_of(name);
        for (int x : st.xs) {
            Batch<T> q(*g.ctx, s, draw_sizes(engine, st.batch, x), engine);
            double best = 0;
            bs::GemmConfig winner{};
            for (const bs::GemmConfig& c : sweep_candidates<T>()) {
                if (c.tensor_cores && bs::is_complex_v<T> != std::is_same_v<T, std::complex<double>> &&
                    !std::is_same_v<T, double>)
                    continue;  // TF32 is an explicit option, never a default: not swept
                const double t = g.time(st.repeat, [&](int) {
                    if (s.kind == Kind::gemm)
                        bs::gemm_vbatched_max_nocheck<T>(bs::Op::no_trans, bs::Op::no_trans, q.md.data(), q.nd.data(),
                                                         q.kd.data(), alpha_value<T>(), q.A(), q.ldad.data(), q.B(),
                                                         q.ldbd.data(), beta_value<T>(), q.cp.data(), q.ldcd.data(), q.max_m,
                                                         q.max_n, q.max_k, q.count(), c, *g.ctx);
                    else
                        bs::syrk_vbatched_max_nocheck<T>(bs::Uplo::lower, bs::Op::no_trans, q.nd.data(), q.kd.data(),
                                                         alpha_value<T>(), q.A(), q.ldad.data(), beta_value<T>(), q.cp.data(),
                                                         q.ldcd.data(), q.max_n, q.max_k, q.count(), c, *g.ctx);
                });
                const double rate = q.flops / t * 1e-9;
                out.push_back({{"routine", name}, {"precision", std::string(1, p)}, {"x", x},
                               {"config", json::parse(bs::to_string(c))}, {"gflops", rate}});
                std::printf("sweep %s %c x=%4d %-84s %9.1f GFLOP/s\n", name.c_str(), p, x, bs::to_string(c).c_str(), rate);
                std::fflush(stdout);
                if (rate > best) best = rate, winner = c;
            }
            md << "| " << name << " | " << p << " | " << x << " | `" << bs::to_string(winner) << "` | " << fmt(best) << " |\n";
            std::printf("winner %s %c x=%d: %s %.1f GFLOP/s\n", name.c_str(), p, x, bs::to_string(winner).c_str(), best);
            std::fflush(stdout);
        }
    }
}

// The JSON and markdown files (rewritten after every row, so that a time limit keeps what was measured).
void write_outputs(const Settings& st, const json& doc, const std::string& table) {
    if (!st.json_file.empty()) std::ofstream(st.json_file) << doc.dump(1) << "\n";
    if (!st.md_file.empty()) {
        std::ofstream out(st.md_file);
        out << "# vbatched_bench on " << doc["device"].get<std::string>() << ", batch " << st.batch << ", "
            << doc["date"].get<std::string>() << (doc.contains("commit") ? ", commit " + doc["commit"].get<std::string>() : "")
            << "\n\nGFLOP/s (ours: the _max level; checked: the checked level); x grp / x 16s: our speed-up over cuBLAS "
               "grouped / 16 streams.\n\n"
            << table;
    }
}

}  // namespace

int main(int argc, char** argv) {
    Settings st;
    bool seeded = false;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw std::runtime_error("option " + a + " needs a value");
                return argv[++i];
            };
            auto ints = [&](const std::string& text) {
                std::vector<int> v;
                for (const std::string& x : split(text)) {
                    const int n = std::stoi(x);
                    if (n < 1) throw std::runtime_error("invalid " + a + " '" + text + "' (positive integers)");
                    v.push_back(n);
                }
                return v;
            };
            if (a == "--help" || a == "-h") {
                std::cout << kHelp;
                return 0;
            } else if (a == "--routines") st.routines = split(value());
            else if (a == "--precisions") st.precisions = split(value());
            else if (a == "--gemm-precisions") st.gemm_precisions = split(value());
            else if (a == "--x") st.xs = ints(value());
            else if (a == "--batch") st.batch = ints(value()).at(0);
            else if (a == "--repeat") st.repeat = ints(value()).at(0);
            else if (a == "--cpu-max") st.cpu_max = std::stoi(value());
            else if (a == "--streams") st.streams = ints(value()).at(0);
            else if (a == "--no-gpu") st.gpu = false;
            else if (a == "--sweep") st.sweep = true;
            else if (a == "--seed") st.seed = std::stoull(value()), seeded = true;
            else if (a == "--json") st.json_file = value();
            else if (a == "--md") st.md_file = value();
            else throw std::runtime_error("unknown option '" + a + "' (see --help)");
        }
        for (const std::string& r : st.routines) setup_of(r);
        for (const auto* list : {&st.precisions, &st.gemm_precisions})
            for (const std::string& p : *list)
                if (p != "s" && p != "d" && p != "c" && p != "z") throw std::runtime_error("invalid precision '" + p + "'");
    } catch (const std::exception& e) {
        std::cerr << "vbatched_bench: " << e.what() << "\n";
        return 255;
    }
    if (!seeded) st.seed = std::random_device{}();
    std::mt19937_64 engine(st.seed);

    const bool have_gpu = st.gpu && bs::Context::cuda_available();
    std::unique_ptr<bs::Context> gctx, cctx;
    std::unique_ptr<Gpu> gpu;
    if (have_gpu) {
        gctx = std::make_unique<bs::Context>(bs::Backend::cuda);
        gpu = std::make_unique<Gpu>(*gctx, st.streams);
    }
    cctx = std::make_unique<bs::Context>(bs::Backend::cpu);

    json doc;
    doc["tool"] = "vbatched_bench";
    doc["device"] = gctx ? gctx->device_name() : "no GPU";
    doc["cpu"] = cctx->device_name();
    if (const char* commit = std::getenv("BATCHSOLVE_COMMIT")) doc["commit"] = commit;
    {
        char date[32];
        const std::time_t now = std::time(nullptr);
        std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
        doc["date"] = date;
    }
    doc["seed"] = st.seed;
    doc["batch"] = st.batch;
    std::printf("vbatched_bench on %s (CPU: %s), batch %d, seed %llu\n", doc["device"].get<std::string>().c_str(),
                doc["cpu"].get<std::string>().c_str(), st.batch, (unsigned long long)st.seed);
    std::fflush(stdout);

    std::ostringstream md;
    try {
        double peak = 0;
        if (gpu) {
            peak = measure_dgemm_peak(*gpu);
            doc["dgemm_peak_gflops"] = peak;
            std::printf("cuBLAS DGEMM 8192^3 (the peak of this run): %.0f GFLOP/s\n", peak);
        }
        auto dispatch = [&](const std::string& p, const auto& body) {
            if (p == "s") body(float{});
            if (p == "d") body(double{});
            if (p == "c") body(std::complex<float>{});
            if (p == "z") body(std::complex<double>{});
        };
        if (st.sweep) {
            if (!gpu) {
                std::printf("sweep: skipped: no GPU\n");
                return 0;
            }
            json rows = json::array();
            md << "| routine | p | x | winner | GFLOP/s |\n|---|---|---|---|---|\n";
            for (const std::string& p : st.precisions)
                dispatch(p, [&](auto zero) { sweep<decltype(zero)>(st, *gpu, engine, rows, md); });
            doc["sweep"] = rows;
        } else {
            // the plan, routine by routine (GEMM first when listed first, so that a time limit keeps the
            // issue's main rows): every routine in --precisions, square GEMM also in --gemm-precisions
            std::vector<std::pair<std::string, std::string>> plan;
            for (const std::string& r : st.routines) {
                std::vector<std::string> ps = st.precisions;
                if (r == "gemm")
                    for (const std::string& p : st.gemm_precisions)
                        if (std::find(ps.begin(), ps.end(), p) == ps.end()) ps.push_back(p);
                for (const std::string& p : ps)
                    if (!setup_of(r).hermitian || p == "c" || p == "z") plan.push_back({p, r});
            }
            json rows = json::array();
            std::vector<std::string> lines;
            batchsolve::io::Progress progress("vbatched_bench", plan.size() * st.xs.size());
            for (const auto& [p, r] : plan) {
                const Setup s = setup_of(r);
                for (int x : st.xs) {
                    dispatch(p, [&](auto zero) {
                        using T = decltype(zero);
                        Row row = bench_row<T>(st, s, x, gpu.get(), cctx.get(), engine, peak);
                        rows.push_back(row.j);
                        lines.push_back(row.line);
                        // each row as it completes, and the files so far (a time limit keeps what was measured)
                        std::printf("row %s\n", row.line.c_str());
                        std::fflush(stdout);
                        doc["rows"] = rows;
                        std::ostringstream table;
                        table << kTableHead << "\n";
                        for (const std::string& l : lines) table << l << "\n";
                        write_outputs(st, doc, table.str());
                    });
                    progress.advance();
                }
            }
            progress.finish();
            md << kTableHead << "\n";
            for (const std::string& l : lines) md << l << "\n";
            std::cout << md.str();
        }
    } catch (const std::exception& e) {
        std::cerr << "vbatched_bench: " << e.what() << "\n";
        return 1;
    }
    write_outputs(st, doc, md.str());
    int failed = 0;
    if (doc.contains("rows"))
        for (const json& r : doc["rows"]) failed += r["ok"].get<bool>() ? 0 : 1;
    std::printf("vbatched_bench: %d rows failed the check\n", failed);
    return failed;
}
