// The tester's variable-size BLAS-3 routines (vbatched_blas.hpp): gemm_vbatched (set-ups gemm: m = n = k = s_i;
// gemm_k16, gemm_k32: m = n = s_i, k = 16 / 32), syrk_vbatched (syrk; herk in complex precisions; n = s_i,
// k = 32, lower, no transpose), syr2k_vbatched (syr2k, her2k; the same), symm_vbatched (symm, hemm; m = n = s_i,
// left, lower), sizes s_i uniform in [1, x]; gemm_skewed (asked for by --setups): m = n = k = s_i with 90 % of
// the s_i uniform in [1, min(32, x)] and 10 % in [3x/4, x], a batch of mostly small problems and a few large;
// gemm_bin (asked for by --setups): m = n = k = s_i uniform in [x/2 + 1, x], the problems one size bin of the
// size-binned dispatch holds (the tuning sweep of the bins above the first). Ours is the _max level (the caller gives the maxima, as cuBLAS's
// host size arrays do); the checked level's time is in the JSON. Peers: cublas-grouped (cuBLAS grouped GEMM,
// one group per problem: GEMM only), cublas (one cuBLAS call per problem over 16 streams), cpu (our CPU
// backend). Error: ||C_ours - C_cublas||_F / (||C_cublas||_F u sqrt(k_max)), C_cublas the per-problem result
// from the same inputs.
#include <cuComplex.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "suite_cuda.hpp"

namespace batchsolve::validation::suite {

namespace {

namespace bs = batchsolve;
using nlohmann::json;

#define CUDA_OK(call) SUITE_CHECK(call)
#define CUBLAS_OK(call) SUITE_CHECK(call)

// ---- the set-ups --------------------------------------------------------------------------------

enum class Kind { gemm, syrk, syr2k, symm };
struct Setup {
    std::string name;
    Kind kind;
    int fixed_k;  // 0: k = s_i
    bool hermitian;
    bool skewed = false;  // sizes: 90 % uniform in [1, min(32, x)], 10 % in [3x/4, x] (else all in [1, x])
    bool bin = false;     // sizes uniform in [x/2 + 1, x]: one size bin of the binned dispatch
};
Setup setup_of(const std::string& name) {
    if (name == "gemm") return {name, Kind::gemm, 0, false};
    if (name == "gemm_skewed") return {name, Kind::gemm, 0, false, true};
    if (name == "gemm_bin") return {name, Kind::gemm, 0, false, false, true};
    if (name == "gemm_k16") return {name, Kind::gemm, 16, false};
    if (name == "gemm_k32") return {name, Kind::gemm, 32, false};
    if (name == "syrk" || name == "herk") return {name, Kind::syrk, 32, name == "herk"};
    if (name == "syr2k" || name == "her2k") return {name, Kind::syr2k, 32, name == "her2k"};
    if (name == "symm" || name == "hemm") return {name, Kind::symm, 0, name == "hemm"};
    throw std::runtime_error("unknown set-up '" + name + "'");
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
    double time(int repeat, const std::function<void(int)>& call, int warmup = 1) {
        for (int w = 0; w < warmup; ++w) call(0);
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

std::vector<int> draw_sizes(std::mt19937_64& engine, int count, int x, bool skewed, bool bin) {
    std::uniform_int_distribution<int> size(bin ? x / 2 + 1 : 1, x), small(1, std::min(32, x)), large(std::max(1, 3 * x / 4), x);
    std::uniform_real_distribution<double> which(0, 1);
    std::vector<int> s(count);
    for (int& v : s) v = !skewed ? size(engine) : which(engine) < 0.9 ? small(engine) : large(engine);
    return s;
}

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

// The tuning pass: square GEMM with each candidate configuration: the list of the precision's letter in
// the --configs file where it has one, else the built-in space below.
template <class T>
std::vector<bs::GemmConfig> builtin_sweep_candidates();
template <class T>
std::vector<bs::GemmConfig> sweep_candidates(const std::string& file) {
    if (!file.empty()) {
        std::ifstream in(file);
        if (!in) throw std::runtime_error("--configs: cannot read '" + file + "'");
        json doc;
        try {
            doc = json::parse(in);
        } catch (const std::exception& e) {
            throw std::runtime_error("--configs: '" + file + "' is not JSON (" + e.what() + ")");
        }
        const std::string p(1, bs::precision_letter(bs::precision_v<T>));
        if (!doc.is_object()) throw std::runtime_error("--configs: '" + file + "' is not an object of lists by precision");
        if (doc.contains(p)) {
            std::vector<bs::GemmConfig> out;
            for (const json& c : doc.at(p)) {
                const bs::GemmConfig config = bs::parse_gemm_config(c.dump());
                const std::string problem = bs::gemm_config_problem(bs::precision_v<T>, config);
                if (!problem.empty()) throw std::runtime_error("--configs: " + p + " " + c.dump() + ": " + problem);
                out.push_back(config);
            }
            return out;
        }
    }
    return builtin_sweep_candidates<T>();
}
template <class T>
std::vector<bs::GemmConfig> builtin_sweep_candidates() {
    // s and d: the tiles of the size bins side by side: the register-staged tiles the table had, and the
    // cp.async ring (the last field) with larger tiles, DMMA for d and FP32 SIMT for s
    if constexpr (std::is_same_v<T, double>)
        return {{32, 32, 8, 2, 2, true},           {64, 32, 8, 2, 2, true},           {64, 64, 8, 2, 2, true},
                {32, 32, 8, 2, 2, true, 0, 3},     {64, 64, 8, 2, 2, true, 0, 4},     {64, 64, 16, 2, 2, true, 0, 3},
                {64, 64, 16, 2, 2, true, 4, 3},    {128, 64, 8, 4, 2, true, 2, 4},    {128, 128, 8, 4, 4, true, 0, 3}};
    if constexpr (std::is_same_v<T, float>)
        return {{32, 32, 8, 16, 16, false},        {64, 64, 8, 16, 16, false},        {32, 32, 8, 8, 8, false, 0, 3},
                {64, 64, 8, 16, 16, false, 0, 3},  {64, 64, 8, 8, 8, false, 6, 4},    {128, 64, 8, 16, 16, false, 0, 3},
                {128, 128, 8, 16, 16, false, 0, 3}, {128, 128, 8, 16, 16, false, 2, 3}};
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

// The set-ups of a routine, and its default ones.
std::vector<std::string> setups_of(const std::string& routine, const std::vector<std::string>& asked, bool complex_case) {
    std::vector<std::string> all;
    if (routine == "gemm_vbatched") all = {"gemm", "gemm_k16", "gemm_k32", "gemm_skewed", "gemm_bin"};
    if (routine == "syrk_vbatched") all = {"syrk", "herk"};
    if (routine == "syr2k_vbatched") all = {"syr2k", "her2k"};
    if (routine == "symm_vbatched") all = {"symm", "hemm"};
    // One --setups list serves every routine of a run: a set-up of another routine is left to it.
    static const std::vector<std::string> every = {"gemm", "gemm_k16", "gemm_k32", "gemm_skewed", "gemm_bin", "syrk", "herk", "syr2k", "her2k", "symm", "hemm"};
    std::vector<std::string> out;
    bool any_of_this = asked.empty();
    for (const std::string& s : asked) {
        if (std::find(every.begin(), every.end(), s) == every.end())
            throw std::runtime_error("invalid --setups '" + s +
                                     "' (gemm, gemm_k16, gemm_k32, gemm_skewed, gemm_bin, syrk, herk, syr2k, her2k, symm, hemm)");
        any_of_this = any_of_this || std::find(all.begin(), all.end(), s) != all.end();
    }
    std::vector<std::string> defaults = all;  // gemm_skewed and gemm_bin only when asked for
    defaults.erase(std::remove(defaults.begin(), defaults.end(), "gemm_skewed"), defaults.end());
    defaults.erase(std::remove(defaults.begin(), defaults.end(), "gemm_bin"), defaults.end());
    for (const std::string& s : asked.empty() || !any_of_this ? defaults : asked)
        if (std::find(all.begin(), all.end(), s) != all.end() && (!setup_of(s).hermitian || complex_case)) out.push_back(s);
    return out;
}

template <class T>
void bench_row(const std::string& routine, const Options& o, const Setup& s, int x, int batch, Gpu* gpu, bs::Context* cpu,
               std::mt19937_64& engine, double dgemm_peak, const Sink& sink) {
    const char p = bs::precision_letter(bs::precision_v<T>);
    Row row;
    row.routine = routine, row.precision = std::string(1, p), row.n = x, row.batch = batch;
    row.shape = "x=" + std::to_string(x) + " count=" + std::to_string(batch) + " " + s.name;
    row.variant = "";
    row.error_definition = "||C - C_cublas||_F / (||C_cublas||_F u sqrt(k_max)), C_cublas: cuBLAS per problem";
    row.roofline_basis = "cuBLAS DGEMM 8192^3, same run";
    row.detail = {{"setup", s.name}, {"x", x}, {"batch", batch}};
    const std::vector<int> sizes = draw_sizes(engine, batch, x, s.skewed, s.bin);
    const int W = o.warmup, R = o.repeat;
    if (o.sweep) {  // the tuning pass: every candidate configuration, a row each (GEMM and its triangle form)
        const std::vector<bs::GemmConfig> candidates = sweep_candidates<T>(o.sweep_configs);  // a bad file fails here too
        if (!gpu || (s.kind != Kind::gemm && s.kind != Kind::syrk) || s.hermitian) return;
        Batch<T> q(*gpu->ctx, s, sizes, engine);
        row.flops = q.flops;
        for (const bs::GemmConfig& c : candidates) {
            if (c.tensor_cores && bs::is_complex_v<T> != std::is_same_v<T, std::complex<double>> && !std::is_same_v<T, double>)
                continue;  // TF32 is an explicit option, never a default: not swept
            Row r = row;
            r.variant = bs::to_string(c);
            const double t = gpu->time(R, [&](int) {
                if (s.kind == Kind::gemm)
                    bs::gemm_vbatched_max_nocheck<T>(bs::Op::no_trans, bs::Op::no_trans, q.md.data(), q.nd.data(), q.kd.data(),
                                                     alpha_value<T>(), q.A(), q.ldad.data(), q.B(), q.ldbd.data(),
                                                     beta_value<T>(), q.cp.data(), q.ldcd.data(), q.max_m, q.max_n, q.max_k,
                                                     q.count(), c, *gpu->ctx);
                else
                    bs::syrk_vbatched_max_nocheck<T>(bs::Uplo::lower, bs::Op::no_trans, q.nd.data(), q.kd.data(),
                                                     alpha_value<T>(), q.A(), q.ldad.data(), beta_value<T>(), q.cp.data(),
                                                     q.ldcd.data(), q.max_n, q.max_k, q.count(), c, *gpu->ctx);
            }, W);
            r.ran = true, r.ms = t * 1e3, r.gflops = q.flops / t * 1e-9;
            if (dgemm_peak > 0) r.roofline = r.gflops / dgemm_peak;
            r.detail["config"] = json::parse(bs::to_string(c));
            sink(std::move(r));
        }
        return;
    }
    double ours = 0, checked = 0, grouped = 0, streams = 0, cpu_seconds = 0;
    double flops = 0;
    bool supported = false;
    if (gpu) {
        // input sets rotated when a set would sit in L2 (the H100/H200's 50-60 MB)
        std::vector<std::unique_ptr<Batch<T>>> sets;
        sets.push_back(std::make_unique<Batch<T>>(*gpu->ctx, s, sizes, engine));
        const int rotate = sets[0]->bytes() < (64u << 20) ? 4 : 1;
        for (int r = 1; r < rotate; ++r) sets.push_back(std::make_unique<Batch<T>>(*gpu->ctx, s, sizes, engine));
        flops = sets[0]->flops;
        row.detail["config"] = json::parse(bs::to_string(bs::default_gemm_config(bs::precision_v<T>, x, x, s.fixed_k ? s.fixed_k : x)));
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
        row.checked = true;
        row.error = relative_difference(mine, theirs) /
                    (double(bs::unit_roundoff<T>()) * std::sqrt(double(std::max(q0.max_k, 1))));
        if (std::isnan(row.error)) row.error = INFINITY;
        const std::vector<int> info = q0.info.to_host();
        const auto bad = std::count_if(info.begin(), info.end(), [](int v) { return v != 0; });
        if (bad) row.status = Status::failed, row.note = "info != 0 in " + std::to_string(bad) + " problems";

        ours = gpu->time(R, [&](int r) { run_ours(s, *sets[r % rotate], 1, *gpu->ctx); }, W);
        checked = gpu->time(R, [&](int r) { run_ours(s, *sets[r % rotate], 0, *gpu->ctx); }, W);
        if (s.kind == Kind::gemm && wants(o, "cublas-grouped")) {
            supported = grouped_call(*gpu, q0);
            CUDA_OK(cudaStreamSynchronize(gpu->stream));
            if (supported) grouped = gpu->time(R, [&](int r) { grouped_call(*gpu, *sets[r % rotate]); }, W);
        }
        // At most 3 timed runs: 2000 launches per run at x = 512 take seconds.
        if (wants(o, "cublas"))
            streams = gpu->time(std::min(R, 3), [&](int r) {
                const int k = r % rotate;
                gpu->streams_call(s, *sets[k], pa[k], pb[k], pc[k]);
            }, W);
    }
    const bool cpu_runs = cpu && (gpu == nullptr || (wants(o, "cpu") && x <= o.cpu_max_vbatched));
    if (cpu_runs) {
        Batch<T> q(*cpu, s, sizes, engine);
        flops = q.flops;
        std::vector<double> t;
        for (int r = 0; r < std::min(R, 3) + W; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            run_ours(s, q, 1, *cpu);
            const auto t1 = std::chrono::steady_clock::now();
            if (r >= W) t.push_back(std::chrono::duration<double>(t1 - t0).count());
        }
        cpu_seconds = median(t);
    }
    row.flops = flops;
    auto rate = [&](double seconds) { return seconds > 0 ? flops / seconds * 1e-9 : 0.0; };
    if (gpu) {
        row.ran = true, row.ms = ours * 1e3, row.gflops = rate(ours);
        if (dgemm_peak > 0) row.roofline = rate(ours) / dgemm_peak;
        if (s.kind == Kind::gemm && wants(o, "cublas-grouped")) {
            Peer q;
            q.name = "cublas-grouped";
            q.ran = supported, q.ms = grouped * 1e3, q.gflops = rate(grouped);
            q.note = supported ? "cublas<t>gemmGroupedBatched, one group per problem" : "not supported for this type";
            row.peers.push_back(q);
        }
        if (wants(o, "cublas")) {
            Peer q;
            q.name = "cublas";
            q.ran = true, q.ms = streams * 1e3, q.gflops = rate(streams), q.error = 0;
            q.note = "one cuBLAS call per problem, 16 streams";
            row.peers.push_back(q);
        }
        if (wants(o, "cpu")) {
            Peer q;
            q.name = "cpu";
            q.ran = cpu_seconds > 0, q.ms = cpu_seconds * 1e3, q.gflops = rate(cpu_seconds);
            q.note = q.ran ? "our CPU backend" : "x above --cpu-max";
            row.peers.push_back(q);
        }
    } else {  // the CPU backend is the contestant; without a GPU there is no reference for its result
        row.ran = true, row.ms = cpu_seconds * 1e3, row.gflops = rate(cpu_seconds);
        row.note = "CPU backend; no reference result without a GPU (not checked)";
    }
    row.detail["flops"] = flops;
    row.detail["gflops"] = {{"ours", rate(ours)}, {"ours_checked", rate(checked)}, {"cublas_grouped", rate(grouped)},
                            {"cublas_streams", rate(streams)}, {"cpu", rate(cpu_seconds)}};
    row.detail["seconds"] = {{"ours", ours}, {"ours_checked", checked}, {"cublas_grouped", grouped}, {"cublas_streams", streams}};
    if (gpu) row.detail["cublas_grouped_supported"] = supported;
    judge(row, o.tolerance);
    // The checked level (sizes checked and maxima found on the device, one host round trip) as a row of
    // its own, so that its ratios to the peers are reported and judged like the _max level's.
    Row checked_row;
    if (gpu && checked > 0) {
        checked_row = row;
        checked_row.variant = "checked";
        checked_row.ms = checked * 1e3, checked_row.gflops = rate(checked);
        if (dgemm_peak > 0) checked_row.roofline = rate(checked) / dgemm_peak;
    }
    sink(std::move(row));
    if (!checked_row.variant.empty()) sink(std::move(checked_row));
}

}  // namespace

void run_vbatched(const std::string& routine, const Options& o, const Sink& sink) {
    const std::vector<std::string> precisions = !o.precisions.empty() ? o.precisions : std::vector<std::string>{"d", "z"};
    const std::vector<int> xs = !o.ns.empty() ? o.ns : std::vector<int>{32, 64, 128, 256, 512};
    const std::vector<int> batches = !o.batches.empty() ? o.batches : std::vector<int>{2000};
    for (const std::string& p : precisions)
        if (p != "s" && p != "d" && p != "c" && p != "z") throw std::runtime_error("invalid --precision '" + p + "'");
    for (const std::string& p : precisions) setups_of(routine, o.setups, p == "c" || p == "z");  // checks --setups
    const bool on_gpu = o.gpu && o.cuda_backend;
    std::unique_ptr<bs::Context> gctx;
    std::unique_ptr<Gpu> gpu;
    if (on_gpu) {
        gctx = std::make_unique<bs::Context>(bs::Backend::cuda, o.device);
        gpu = std::make_unique<Gpu>(*gctx, 16);
    }
    bs::Context cctx(bs::Backend::cpu);
    const double peak = gpu ? measure_dgemm_peak(*gpu) : 0;
    std::mt19937_64 engine(o.seed);
    for (const std::string& p : precisions)
        for (const std::string& name : setups_of(routine, o.setups, p == "c" || p == "z")) {
            const Setup s = setup_of(name);
            for (int batch : batches)
                for (int x : xs) {
                    try {
                        if (p == "s") bench_row<float>(routine, o, s, x, batch, gpu.get(), &cctx, engine, peak, sink);
                        if (p == "d") bench_row<double>(routine, o, s, x, batch, gpu.get(), &cctx, engine, peak, sink);
                        if (p == "c")
                            bench_row<std::complex<float>>(routine, o, s, x, batch, gpu.get(), &cctx, engine, peak, sink);
                        if (p == "z")
                            bench_row<std::complex<double>>(routine, o, s, x, batch, gpu.get(), &cctx, engine, peak, sink);
                    } catch (const std::exception& e) {
                        Row r;
                        r.routine = routine, r.precision = p, r.n = x, r.batch = batch;
                        r.shape = "x=" + std::to_string(x) + " " + name;
                        r.status = Status::failed, r.note = e.what();
                        sink(std::move(r));
                    }
                }
        }
}

}  // namespace batchsolve::validation::suite
