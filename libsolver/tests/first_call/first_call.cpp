// Measures what a program pays the first time it calls a routine: Context creation, the first call
// (kernel generation, NVRTC or the disk cache, module load, launch) and the second call, each timed
// to completion in this fresh process; --vendor times the vendor's call instead (cuSOLVER's batched
// potrf/potrs; cuBLAS's grouped GEMM, cusolverDnXpotrf, cusolverDnDSgesv, with their handle's creation
// timed apart). One JSON line on stdout. scripts/gpu/first-call.sh runs it with an empty and a
// populated kernel cache and with a prebuilt folder.
//   batchsolve_first_call --routine potrf|potrs|posv --precision s|d --layout column_major|interleaved
//                         --n N --batch COUNT [--vendor]
//   batchsolve_first_call --routine gemm_vbatched --precision s|d --n MAX --batch COUNT [--vendor]
//   batchsolve_first_call --routine trsm_vbatched --precision s|d --n N --batch COUNT [--vendor]
//   batchsolve_first_call --routine potrf_large [--diagonal automatic|fused] [--then-n M] [--prepay STEPS] [--graph off] [--pause S]
//                         --precision s|d --n N [--vendor]
//   batchsolve_first_call --routine sysv_mixed [--prepay STEPS] [--pause S] --precision d --n N [--vendor]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "batchsolve/batchsolve.hpp"

#ifdef BATCHSOLVE_FIRST_CALL_PEERS  // the vendor libraries the CUDA build links (CMakeLists.txt)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#endif

namespace {

using namespace batchsolve;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// A CUDA Context and the seconds its creation took to completion (members initialised in order);
// ready: when it was, so that a run reports how long its inputs took before the first call (setup_s:
// the time the library's background work, if any, had before the first call).
struct TimedContext {
    Clock::time_point start = Clock::now();
    Context ctx{Backend::cuda};
    double seconds = (ctx.synchronize(), seconds_since(start));
    Clock::time_point ready = Clock::now();
};

// The SPD matrix n I + ones (eigenvalues n and 2n) in each of `count` column-major slots, built directly:
// the SPD generator's cost at n = 128, 16384 matrices would dwarf what is measured.
template <class T>
std::vector<T> identity_times_n_plus_ones(int n, int count) {
    std::vector<T> a(std::size_t(n) * n * count);
    for (std::size_t k = 0; k < std::size_t(count); ++k)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) a[(k * n + j) * n + i] = T(i == j ? n + 1 : 1);
    return a;
}

struct Options {
    std::string name = "potrf";  // the routine's name: a Routine, or gemm_vbatched, potrf_large, sysv_mixed
    Routine routine = Routine::potrf;
    CholeskyDiagonal diagonal = CholeskyDiagonal::automatic;  // potrf_large
    int then_n = 0;  // potrf_large: > 0, then the first call of this order in the same (warm) process
    bool graph_off = false;  // potrf_large: the table's configuration pinned, without its CUDA graph
    std::vector<std::string> prepay;  // potrf_large, sysv_mixed: steps paid (and timed) before the first call
    double pause_s = 0;  // potrf_large, sysv_mixed: seconds slept after the inputs, before the first call
    Precision precision = Precision::s;
    LayoutKind layout = LayoutKind::column_major;
    int n = 32, batch = 16384;
    bool vendor = false;
};

int usage(std::ostream& out, int code) {
    out << "usage: batchsolve_first_call --routine potrf|potrs|posv --precision s|d\n"
           "                             --layout column_major|interleaved --n N --batch COUNT [--vendor]\n"
           "       batchsolve_first_call --routine gemm_vbatched --precision s|d --n MAX --batch COUNT [--vendor]\n"
           "       batchsolve_first_call --routine trsm_vbatched --precision s|d --n N --batch COUNT [--vendor]\n"
           "       batchsolve_first_call --routine potrf_large [--diagonal automatic|fused] [--then-n M] [--graph on|off] [--pause S]\n"
           "                             --precision s|d --n N [--vendor]\n"
           "       batchsolve_first_call --routine sysv_mixed --precision d --n N [--vendor]\n"
           "  Times Context creation, the first and the second call of the routine in this process (each\n"
           "  synchronised); --vendor: cuSOLVER's batched potrf/potrs (column_major only), cuBLAS's grouped\n"
           "  GEMM (one group per problem), cusolverDnXpotrf, cusolverDnDSgesv (their handle's creation apart).\n"
           "  gemm_vbatched: COUNT square problems of orders 1..MAX (problem 0 of order MAX; the size bins\n"
           "  above 128 when MAX > 128). potrf_large: --then-n M\n"
           "  also times the first call of order M after the two calls (the per-size share of a first call,\n"
           "  apart from what the process pays once). One JSON line.\n"
           "  potrf_large --graph off: the table's configuration for N pinned, its CUDA graph off (the first call\n"
           "  uncaptured). potrf_large, sysv_mixed: --prepay STEP[,STEP...] runs these before the first call, each timed\n"
           "  (prepay_s): cublas (a cuBLAS handle made and destroyed), cusolver (the same for cuSOLVER), gemm\n"
           "  (cublasGemmEx), dgemm (cublas<t>gemm), syrk, trsm (one cuBLAS call of order 256 in the routine's\n"
           "  precision, handle included), xpotrf\n"
           "  (cusolverDnXpotrf of order 512), graph (a one-node stream capture, instantiated and launched),\n"
           "  potrf:M (batchsolve's potrf of order M), so that the first call's cost splits by what it pays once.\n"
           "  potrf_large, sysv_mixed: --pause S sleeps S seconds after the inputs are made, before the first call\n"
           "  (setup_s includes it: how long the library's background work had).\n";
    return code;
}

template <class T>
int run(const Options& o) {
    const int n = o.n, nrhs = 1, count = o.batch;
    TimedContext timed_context;
    Context& ctx = timed_context.ctx;
    const double context_s = timed_context.seconds;

    // Inputs (not timed).
    const std::vector<T> host_a = identity_times_n_plus_ones<T>(n, count);
    std::vector<T> host_b(std::size_t(n) * nrhs * count, T(1));
    Buffer<T> a(ctx, host_a), b(ctx, host_b), a_copy(ctx, host_a.size()), b_copy(ctx, host_b.size());
    Buffer<int> info(ctx, count);
    const auto A_cm = BatchView<T>::column_major(a.data(), n, n, count);
    const auto B_cm = BatchView<T>::column_major(b.data(), n, nrhs, count);
    const bool interleaved = o.layout == LayoutKind::interleaved;
    const auto A = interleaved ? BatchView<T>::interleaved(a_copy.data(), n, n, count) : A_cm;
    const auto B = interleaved ? BatchView<T>::interleaved(b_copy.data(), n, nrhs, count) : B_cm;
    if (interleaved) {
        convert_layout(A_cm, A, ctx);
        convert_layout(B_cm, B, ctx);
    }
    ctx.synchronize();

    auto call = [&] {
        const auto start = Clock::now();
        if (o.vendor) {
            if (o.routine == Routine::potrs) vendor::potrs_batched(Uplo::lower, A, B, ctx);
            else vendor::potrf_batched(Uplo::lower, A, info.data(), ctx);  // posv: its factorisation only
        } else if (o.routine == Routine::potrf) {
            potrf_batched(Uplo::lower, A, info.data(), ctx);
        } else if (o.routine == Routine::potrs) {
            potrs_batched(Uplo::lower, A, B, ctx);
        } else {
            posv_batched(Uplo::lower, A, B, info.data(), ctx);
        }
        ctx.synchronize();
        return seconds_since(start);
    };
    const double setup_s = seconds_since(timed_context.ready);
    const double first_s = call();
    const double second_s = call();
    std::printf("{\"routine\":\"%s\",\"precision\":\"%c\",\"layout\":\"%s\",\"n\":%d,\"batch\":%d,\"impl\":\"%s\","
                "\"context_s\":%.4f,\"setup_s\":%.4f,\"first_call_s\":%.4f,\"second_call_s\":%.5f,\"device\":\"%s\"}\n",
                to_string(o.routine), precision_letter(o.precision), to_string(o.layout), n, count,
                o.vendor ? "cusolver" : "batchsolve", context_s, setup_s, first_s, second_s, ctx.device_name().c_str());
    return 0;
}


// ---- the routines beyond the small Cholesky: gemm_vbatched, potrf_large, sysv_mixed ----------------

struct Times {
    double context_s = 0, setup_s = 0, handle_s = -1, first_s = 0, second_s = 0, then_first_s = -1;
    std::string note;
    std::string prepay = "[]";  // JSON: [{"step":..., "s":...}, ...]
};

template <class F>
double timed(Context& ctx, F&& f) {
    ctx.synchronize();
    const auto start = Clock::now();
    f();
    ctx.synchronize();
    return seconds_since(start);
}

void print(const Options& o, const Times& t, const std::string& device) {
    std::printf("{\"routine\":\"%s\",\"precision\":\"%c\",\"layout\":\"column_major\",\"n\":%d,\"batch\":%d,"
                "\"diagonal\":\"%s\",\"graph\":\"%s\",\"impl\":\"%s\",\"context_s\":%.4f,\"setup_s\":%.4f,\"handle_s\":%.4f,\"first_call_s\":%.4f,"
                "\"second_call_s\":%.5f,\"then_n\":%d,\"then_first_call_s\":%.4f,\"prepay\":%s,\"note\":\"%s\","
                "\"device\":\"%s\"}\n",
                o.name.c_str(), precision_letter(o.precision), o.n, o.name == "gemm_vbatched" || o.name == "trsm_vbatched" ? o.batch : 1,
                to_string(o.diagonal), o.graph_off ? "off" : "table", o.vendor ? (o.name == "gemm_vbatched" || o.name == "trsm_vbatched" ? "cublas" : "cusolver") : "batchsolve",
                t.context_s, t.setup_s, t.handle_s, t.first_s, t.second_s, o.then_n, t.then_first_s, t.prepay.c_str(), t.note.c_str(),
                device.c_str());
}

#ifdef BATCHSOLVE_FIRST_CALL_PEERS
void vendor_ok(int status, const char* call) {
    if (status != 0) throw Error(std::string(call) + " failed with status " + std::to_string(status));
}

// The vendor's cuBLAS handle of gemm_vbatched/trsm_vbatched: created on request (timed into handle_s),
// destroyed with the object.
struct CublasHandle {
    cublasHandle_t h = nullptr;
    CublasHandle() = default;
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    ~CublasHandle() {
        if (h) cublasDestroy(h);
    }
    void create(Context& ctx, Times& t) {
        t.handle_s = timed(ctx, [&] { vendor_ok(cublasCreate(&h), "cublasCreate"); });
    }
};
#endif

// One run of a routine beyond the small Cholesky: the Context, its creation timed into the run's Times.
struct TimedRun {
    TimedContext timed_context;
    Context& ctx = timed_context.ctx;
    Times t;
    TimedRun() { t.context_s = timed_context.seconds; }

    // Marks the end of the inputs' set-up (setup_s): before the first call or its --prepay steps; then
    // sleeps --pause seconds (counted in setup_s: how long background work had).
    void inputs_ready(double pause_s = 0) {
        if (pause_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
        t.setup_s = seconds_since(timed_context.ready);
    }

    // The first and the second call, `restore` (the inputs) between them; prints the JSON line.
    int first_and_second(const Options& o, const std::function<void()>& call, const std::function<void()>& restore = {}) {
        inputs_ready();
        t.first_s = timed(ctx, call);
        if (restore) restore();
        t.second_s = timed(ctx, call);
        print(o, t, ctx.device_name());
        return 0;
    }
};

// --prepay: each step paid before the timed first call, timed to completion; "[{"step":"cublas","s":0.0031},...]".
// The vendor steps use their own handles (made and destroyed inside the step), so that what stays
// paid is the process's share: library initialisation, kernel modules loaded on first launch.
template <class T>
std::string prepay(const Options& o, Context& ctx) {
    std::string json = "[";
    for (const std::string& step : o.prepay) {
        std::function<void()> f;
        const bool ours = step.rfind("potrf:", 0) == 0;
        const int order = ours ? std::stoi(step.substr(6)) : step == "xpotrf" ? 512 : 256;
        const std::vector<T> host = identity_times_n_plus_ones<T>(order, 1);
        Buffer<T> a(ctx, host), b(ctx, host), c(ctx, host);
        Buffer<int> info(ctx, 1);
        if (ours) {
            f = [&] { potrf(Uplo::lower, order, a.data(), order, info.data(), ctx); };
        } else {
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
            constexpr bool single = std::is_same_v<T, float>;
            const cudaDataType type = single ? CUDA_R_32F : CUDA_R_64F;
            const T one(1), minus_one(-1);
            if (step == "cublas" || step == "gemm" || step == "dgemm" || step == "syrk" || step == "trsm") {
                f = [&] {
                    cublasHandle_t h = nullptr;
                    vendor_ok(cublasCreate(&h), "cublasCreate");
                    if (step == "gemm")
                        vendor_ok(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, order, order, order, &minus_one, a.data(), type, order,
                                               b.data(), type, order, &one, c.data(), type, order,
                                               single ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
                                  "cublasGemmEx");
                    if (step == "dgemm") {  // the legacy cublas<t>gemm entry point beside cublasGemmEx
                        if constexpr (single)
                            vendor_ok(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, order, order, order, &minus_one, a.data(), order,
                                                  b.data(), order, &one, c.data(), order), "cublasSgemm");
                        else
                            vendor_ok(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, order, order, order, &minus_one, a.data(), order,
                                                  b.data(), order, &one, c.data(), order), "cublasDgemm");
                    }
                    if (step == "syrk") {
                        if constexpr (single)
                            vendor_ok(cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, order, order, &minus_one, a.data(), order,
                                                  &one, c.data(), order), "cublasSsyrk");
                        else
                            vendor_ok(cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, order, order, &minus_one, a.data(), order,
                                                  &one, c.data(), order), "cublasDsyrk");
                    }
                    if (step == "trsm") {
                        if constexpr (single)
                            vendor_ok(cublasStrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT,
                                                  order, order, &one, a.data(), order, c.data(), order), "cublasStrsm");
                        else
                            vendor_ok(cublasDtrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT,
                                                  order, order, &one, a.data(), order, c.data(), order), "cublasDtrsm");
                    }
                    vendor_ok(int(cudaDeviceSynchronize()), "cudaDeviceSynchronize");
                    cublasDestroy(h);
                };
            } else if (step == "cusolver" || step == "xpotrf") {
                f = [&] {
                    cusolverDnHandle_t h = nullptr;
                    cusolverDnParams_t params = nullptr;
                    vendor_ok(cusolverDnCreate(&h), "cusolverDnCreate");
                    vendor_ok(cusolverDnCreateParams(&params), "cusolverDnCreateParams");
                    if (step == "xpotrf") {
                        std::size_t device_bytes = 0, host_bytes = 0;
                        vendor_ok(cusolverDnXpotrf_bufferSize(h, params, CUBLAS_FILL_MODE_LOWER, order, type, a.data(), order, type,
                                                              &device_bytes, &host_bytes), "cusolverDnXpotrf_bufferSize");
                        Buffer<T> work(ctx, device_bytes / sizeof(T) + 1);
                        std::vector<char> host_work(std::max<std::size_t>(host_bytes, 1));
                        vendor_ok(cusolverDnXpotrf(h, params, CUBLAS_FILL_MODE_LOWER, order, type, a.data(), order, type, work.data(),
                                                   device_bytes, host_work.data(), host_bytes, info.data()), "cusolverDnXpotrf");
                        vendor_ok(int(cudaDeviceSynchronize()), "cudaDeviceSynchronize");
                    }
                    cusolverDnDestroyParams(params);
                    cusolverDnDestroy(h);
                };
            } else if (step == "graph") {
                f = [&] {
                    cudaStream_t s = nullptr;
                    cudaGraph_t g = nullptr;
                    cudaGraphExec_t e = nullptr;
                    vendor_ok(int(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)), "cudaStreamCreateWithFlags");
                    vendor_ok(int(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed)), "cudaStreamBeginCapture");
                    vendor_ok(int(cudaMemsetAsync(info.data(), 0, sizeof(int), s)), "cudaMemsetAsync");
                    vendor_ok(int(cudaStreamEndCapture(s, &g)), "cudaStreamEndCapture");
                    vendor_ok(int(cudaGraphInstantiate(&e, g, 0)), "cudaGraphInstantiate");
                    vendor_ok(int(cudaGraphLaunch(e, s)), "cudaGraphLaunch");
                    vendor_ok(int(cudaStreamSynchronize(s)), "cudaStreamSynchronize");
                    cudaGraphExecDestroy(e);
                    cudaGraphDestroy(g);
                    cudaStreamDestroy(s);
                };
            }
#endif
        }
        if (!f)
            throw InvalidArgument("batchsolve_first_call", "--prepay",
                                  "steps of cublas, cusolver, gemm, dgemm, syrk, trsm, xpotrf, graph (a build linked with cuBLAS/cuSOLVER) "
                                  "or potrf:M (got '" + step + "')");
        const double s = timed(ctx, f);
        char item[160];
        std::snprintf(item, sizeof item, "%s{\"step\":\"%s\",\"s\":%.4f}", json.size() > 1 ? "," : "", step.c_str(), s);
        json += item;
    }
    return json + "]";
}

template <class T>
int run_gemm(const Options& o) {
    TimedRun r;
    Context& ctx = r.ctx;
    const int count = o.batch, x = o.n;
    std::vector<int> order(count);
    std::vector<std::size_t> at(count + 1, 0);
    for (int i = 0; i < count; ++i) {
        order[i] = i == 0 ? x : 1 + int((std::uint64_t(i) * 2654435761ULL) % std::uint64_t(x));  // spread over 1..x
        at[i + 1] = at[i] + std::size_t(order[i]) * order[i];
    }
    Buffer<T> a(ctx, at[count]), b(ctx, at[count]), c(ctx, at[count]);
    a.fill_bytes(0), b.fill_bytes(0), c.fill_bytes(0);  // values do not change the work
    std::vector<T*> pa(count), pb(count), pc(count);
    for (int i = 0; i < count; ++i) pa[i] = a.data() + at[i], pb[i] = b.data() + at[i], pc[i] = c.data() + at[i];
    Buffer<T*> da(ctx, pa), db(ctx, pb), dc(ctx, pc);
    Buffer<int> sizes(ctx, order), info(ctx, count);
    std::function<void()> call;
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
    CublasHandle handle;
    std::vector<cublasOperation_t> ops(count, CUBLAS_OP_N);
    std::vector<int> groups(count, 1);
    std::vector<T> alphas(count, T(1)), betas(count, T(0));
#endif
    if (o.vendor) {
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
        handle.create(ctx, r.t);
        call = [&] {
            if constexpr (std::is_same_v<T, float>)
                vendor_ok(cublasSgemmGroupedBatched(handle.h, ops.data(), ops.data(), order.data(), order.data(), order.data(),
                                                    alphas.data(), da.data(), order.data(), db.data(), order.data(),
                                                    betas.data(), dc.data(), order.data(), count, groups.data()),
                          "cublasSgemmGroupedBatched");
            else
                vendor_ok(cublasDgemmGroupedBatched(handle.h, ops.data(), ops.data(), order.data(), order.data(), order.data(),
                                                    alphas.data(), da.data(), order.data(), db.data(), order.data(),
                                                    betas.data(), dc.data(), order.data(), count, groups.data()),
                          "cublasDgemmGroupedBatched");
            vendor_ok(int(cudaDeviceSynchronize()), "cudaDeviceSynchronize");
        };
        r.t.note = "cublas<t>gemmGroupedBatched, one group per problem";
#endif
    } else {
        call = [&] {
            gemm_vbatched<T>(Op::no_trans, Op::no_trans, sizes.data(), sizes.data(), sizes.data(), T(1), da.data(),
                             sizes.data(), db.data(), sizes.data(), T(0), dc.data(), sizes.data(), count, info.data(), ctx);
        };
    }
    return r.first_and_second(o, call);
}

// trsm_vbatched: COUNT left, lower, non-transposed solves L X = B of order N with N right-hand sides
// (L: 2 on the diagonal, 1 below; B: ones); the vendor: cublas<t>trsmBatched on the same pointers.
template <class T>
int run_trsm(const Options& o) {
    TimedRun r;
    Context& ctx = r.ctx;
    const int count = o.batch, n = o.n;
    const std::size_t each = std::size_t(n) * n;
    std::vector<T> host_l(each), host_b(each * count, T(1));
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) host_l[std::size_t(j) * n + i] = T(i == j ? 2 : i > j ? 1 : 0);
    std::vector<T> host_a(each * count);
    for (int k = 0; k < count; ++k) std::copy(host_l.begin(), host_l.end(), host_a.begin() + k * each);
    Buffer<T> a(ctx, host_a), b(ctx, host_b);
    std::vector<T*> pa(count), pb(count);
    for (int i = 0; i < count; ++i) pa[i] = a.data() + i * each, pb[i] = b.data() + i * each;
    Buffer<T*> da(ctx, pa), db(ctx, pb);
    Buffer<int> sizes(ctx, std::vector<int>(count, n)), info(ctx, count);
    std::function<void()> call;
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
    CublasHandle handle;
#endif
    const T one(1);
    if (o.vendor) {
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
        handle.create(ctx, r.t);
        call = [&] {
            if constexpr (std::is_same_v<T, float>)
                vendor_ok(cublasStrsmBatched(handle.h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, n,
                                             &one, da.data(), n, db.data(), n, count), "cublasStrsmBatched");
            else
                vendor_ok(cublasDtrsmBatched(handle.h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, n,
                                             &one, da.data(), n, db.data(), n, count), "cublasDtrsmBatched");
            vendor_ok(int(cudaDeviceSynchronize()), "cudaDeviceSynchronize");
        };
        r.t.note = "cublas<t>trsmBatched";
#endif
    } else {
        call = [&] {
            trsm_vbatched<T>(Side::left, Uplo::lower, Op::no_trans, Diag::non_unit, sizes.data(), sizes.data(), one, da.data(),
                             sizes.data(), db.data(), sizes.data(), count, info.data(), ctx);
        };
    }
    return r.first_and_second(o, call, [&] { b.upload(host_b); });
}

// The first call's factor checked (untimed) at `samples` entries of the lower triangle: max |(L L^T -
// A)(i, j)| / (n eps max|A|), A = n I + ones (its largest entry n + 1); "factor error" in the note.
template <class T>
double sampled_factor_error(const std::vector<T>& l, int n, int samples) {
    double worst = 0;
    std::uint64_t state = 0x9e3779b97f4a7c15ULL;
    for (int s = 0; s < samples; ++s) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const int i = int((state >> 33) % std::uint64_t(n));
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const int j = s == 0 ? i : int((state >> 33) % std::uint64_t(i + 1));  // j <= i; one diagonal entry at least
        double sum = 0;
        for (int k = 0; k <= j; ++k) sum += double(l[std::size_t(k) * n + i]) * double(l[std::size_t(k) * n + j]);
        worst = std::max(worst, std::abs(sum - (i == j ? n + 1.0 : 1.0)));
    }
    return worst / (double(n) * double(std::numeric_limits<T>::epsilon()) * (n + 1.0));
}

// potrf_large on n I + ones (SPD, eigenvalues n and 2n), restored before each call.
template <class T>
int run_large(const Options& o) {
    TimedRun r;
    Context& ctx = r.ctx;
    Times& t = r.t;
    const int n = o.n;
    const std::vector<T> host_a = identity_times_n_plus_ones<T>(n, 1);
    Buffer<T> a(ctx, host_a);
    Buffer<int> info(ctx, 1);
    std::function<void()> call;
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
    cusolverDnHandle_t handle = nullptr;
    cusolverDnParams_t params = nullptr;
    void* device_work = nullptr;
    std::vector<char> host_work;
    const cudaDataType type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
#endif
    if (o.vendor) {
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
        t.handle_s = timed(ctx, [&] {
            vendor_ok(cusolverDnCreate(&handle), "cusolverDnCreate");
            vendor_ok(cusolverDnCreateParams(&params), "cusolverDnCreateParams");
        });
        call = [&] {  // what a first call needs: the workspace query and its allocation, then the factorisation
            std::size_t device_bytes = 0, host_bytes = 0;
            vendor_ok(cusolverDnXpotrf_bufferSize(handle, params, CUBLAS_FILL_MODE_LOWER, n, type, a.data(), n, type,
                                                  &device_bytes, &host_bytes), "cusolverDnXpotrf_bufferSize");
            if (!device_work) vendor_ok(int(cudaMalloc(&device_work, std::max<std::size_t>(device_bytes, 1))), "cudaMalloc");
            host_work.resize(std::max<std::size_t>(host_bytes, 1));
            vendor_ok(cusolverDnXpotrf(handle, params, CUBLAS_FILL_MODE_LOWER, n, type, a.data(), n, type, device_work,
                                       device_bytes, host_work.data(), host_bytes, info.data()), "cusolverDnXpotrf");
            vendor_ok(int(cudaDeviceSynchronize()), "cudaDeviceSynchronize");
        };
        t.note = "cusolverDnXpotrf (workspace query and allocation included)";
#endif
    } else {
        LargeCholeskyConfig config;
        if (o.graph_off) config = cholesky_large_default_config<T>(n), config.graph = false;  // pinned: the table's graph stays off
        if (o.diagonal != CholeskyDiagonal::automatic) config.diagonal = o.diagonal;
        call = [&, config] { potrf(Uplo::lower, n, a.data(), n, info.data(), config, ctx); };
    }
    r.inputs_ready(o.pause_s);
    t.prepay = prepay<T>(o, ctx);
    t.first_s = timed(ctx, call);
    std::vector<T> factor(host_a.size());
    a.download(factor.data(), factor.size());
    char error[64];
    std::snprintf(error, sizeof error, "first call's factor error %.2g", sampled_factor_error(factor, n, 64));
    t.note += std::string(t.note.empty() ? "" : "; ") + error;
    a.upload(host_a);
    t.second_s = timed(ctx, call);
    if (o.then_n > 0 && !o.vendor) {  // another order's first call, everything per process already paid
        const int m = o.then_n;
        std::vector<T> host_m(std::size_t(m) * m);
        for (int j = 0; j < m; ++j)
            for (int i = 0; i < m; ++i) host_m[std::size_t(j) * m + i] = T(i == j ? m + 1 : 1);
        Buffer<T> am(ctx, host_m);
        LargeCholeskyConfig config;
        config.diagonal = o.diagonal;
        t.then_first_s = timed(ctx, [&] { potrf(Uplo::lower, m, am.data(), m, info.data(), config, ctx); });
    }
    int host_info = -1;
    info.download(&host_info, 1);
    if (host_info != 0) t.note += std::string(t.note.empty() ? "" : "; ") + "info " + std::to_string(host_info);
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
    if (device_work) cudaFree(device_work);
    if (params) cusolverDnDestroyParams(params);
    if (handle) cusolverDnDestroy(handle);
#endif
    print(o, t, ctx.device_name());
    return 0;
}

// sysv_mixed on a symmetric indefinite, diagonally dominant A (diagonal +-(n + 1), ones elsewhere), one
// right-hand side of ones; the vendor: cusolverDnDSgesv (FP32 LU with refinement), A restored first.
int run_sysv(const Options& o) {
    TimedRun r;
    Context& ctx = r.ctx;
    Times& t = r.t;
    const int n = o.n;
    std::vector<double> host_a(std::size_t(n) * n);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) host_a[std::size_t(j) * n + i] = i == j ? (i % 2 == 0 ? n + 1.0 : -(n + 1.0)) : 1.0;
    Buffer<double> a(ctx, host_a), b(ctx, std::vector<double>(n, 1.0)), x(ctx, n);
    std::function<void()> call;
    SysvResult result;
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
    cusolverDnHandle_t handle = nullptr;
    void* work = nullptr;
    Buffer<int> pivots(ctx, n), info(ctx, 1);
    int iterations = 0;
#endif
    if (o.vendor) {
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
        t.handle_s = timed(ctx, [&] { vendor_ok(cusolverDnCreate(&handle), "cusolverDnCreate"); });
        call = [&] {  // the workspace query and its allocation, then the solve
            std::size_t bytes = 0;
            vendor_ok(cusolverDnDSgesv_bufferSize(handle, n, 1, a.data(), n, pivots.data(), b.data(), n, x.data(), n,
                                                  nullptr, &bytes), "cusolverDnDSgesv_bufferSize");
            if (!work) vendor_ok(int(cudaMalloc(&work, std::max<std::size_t>(bytes, 1))), "cudaMalloc");
            vendor_ok(cusolverDnDSgesv(handle, n, 1, a.data(), n, pivots.data(), b.data(), n, x.data(), n, work, bytes,
                                       &iterations, info.data()), "cusolverDnDSgesv");
            vendor_ok(int(cudaDeviceSynchronize()), "cudaDeviceSynchronize");
        };
#endif
    } else {
        call = [&] { result = sysv_mixed(Symmetry::symmetric, Uplo::lower, n, 1, a.data(), n, b.data(), n, x.data(), n, SysvOptions{}, ctx); };
    }
    r.inputs_ready(o.pause_s);
    t.prepay = prepay<float>(o, ctx);  // the factor's precision
    t.first_s = timed(ctx, call);
    a.upload(host_a);
    t.second_s = timed(ctx, call);
#ifdef BATCHSOLVE_FIRST_CALL_PEERS
    if (o.vendor) t.note = "cusolverDnDSgesv (FP32 LU + refinement, workspace included): " + std::to_string(iterations) + " iterations";
    if (work) cudaFree(work);
    if (handle) cusolverDnDestroy(handle);
#endif
    if (!o.vendor) t.note = result.describe();
    for (char& ch : t.note)
        if (ch == '"' || ch == '\\') ch = '\'';
    print(o, t, ctx.device_name());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw InvalidArgument("batchsolve_first_call", arg, "a value");
                return argv[++i];
            };
            if (arg == "--help" || arg == "-h") return usage(std::cout, 0);
            else if (arg == "--routine") {
                o.name = value();
                if (o.name != "gemm_vbatched" && o.name != "trsm_vbatched" && o.name != "potrf_large" && o.name != "sysv_mixed")
                    o.routine = parse_routine(o.name);
            } else if (arg == "--diagonal") {
                o.diagonal = parse_cholesky_diagonal(value());
            } else if (arg == "--then-n") {
                o.then_n = std::stoi(value());
            } else if (arg == "--graph") {
                const std::string g = value();
                if (g != "on" && g != "off") throw InvalidArgument("batchsolve_first_call", "--graph", "on or off");
                o.graph_off = g == "off";
            } else if (arg == "--pause") {
                o.pause_s = std::stod(value());
                if (!(o.pause_s >= 0 && o.pause_s <= 60)) throw InvalidArgument("batchsolve_first_call", "--pause", "0..60 seconds");
            } else if (arg == "--prepay") {
                const std::string list = value();
                for (std::size_t at = 0; at <= list.size();) {
                    const std::size_t comma = std::min(list.find(',', at), list.size());
                    if (comma > at) o.prepay.push_back(list.substr(at, comma - at));
                    at = comma + 1;
                }
            }
            else if (arg == "--precision") o.precision = parse_precision(value());
            else if (arg == "--layout") {
                const std::string l = value();
                if (l != "column_major" && l != "interleaved")
                    throw InvalidArgument("batchsolve_first_call", "--layout", "column_major or interleaved");
                o.layout = l == "interleaved" ? LayoutKind::interleaved : LayoutKind::column_major;
            } else if (arg == "--n") o.n = std::stoi(value());
            else if (arg == "--batch") o.batch = std::stoi(value());
            else if (arg == "--vendor") o.vendor = true;
            else throw InvalidArgument("batchsolve_first_call", arg, "a known option (--help)");
        }
        if (o.n < 1 || o.batch < 1) throw InvalidArgument("batchsolve_first_call", "--n/--batch", ">= 1");
        if (o.vendor && o.layout != LayoutKind::column_major)
            throw InvalidArgument("batchsolve_first_call", "--vendor", "with --layout column_major");
        const bool extended = o.name == "gemm_vbatched" || o.name == "trsm_vbatched" || o.name == "potrf_large" || o.name == "sysv_mixed";
        if (extended && o.precision != Precision::s && o.precision != Precision::d)
            throw InvalidArgument("batchsolve_first_call", "--precision", "s or d for " + o.name);
        if (o.name == "sysv_mixed" && o.precision != Precision::d)
            throw InvalidArgument("batchsolve_first_call", "--precision", "d for sysv_mixed (factor in float, refined in double)");
        if (o.diagonal != CholeskyDiagonal::automatic && o.name != "potrf_large")
            throw InvalidArgument("batchsolve_first_call", "--diagonal", "with --routine potrf_large");
        if (o.then_n != 0 && o.name != "potrf_large")
            throw InvalidArgument("batchsolve_first_call", "--then-n", "with --routine potrf_large");
        if (o.then_n < 0) throw InvalidArgument("batchsolve_first_call", "--then-n", ">= 1");
        if (o.graph_off && o.name != "potrf_large") throw InvalidArgument("batchsolve_first_call", "--graph", "with --routine potrf_large");
        if (o.pause_s > 0 && o.name != "potrf_large" && o.name != "sysv_mixed")
            throw InvalidArgument("batchsolve_first_call", "--pause", "with --routine potrf_large or sysv_mixed");
        if (!o.prepay.empty() && o.name != "potrf_large" && o.name != "sysv_mixed")
            throw InvalidArgument("batchsolve_first_call", "--prepay", "with --routine potrf_large or sysv_mixed");
        for (const std::string& step : o.prepay) {
            static const char* const known[] = {"cublas", "cusolver", "gemm", "dgemm", "syrk", "trsm", "xpotrf", "graph"};
            const bool ours = step.rfind("potrf:", 0) == 0 && step.size() > 6 &&
                              step.find_first_not_of("0123456789", 6) == std::string::npos && std::stoi(step.substr(6)) >= 1;
            if (!ours && std::find(std::begin(known), std::end(known), step) == std::end(known))
                throw InvalidArgument("batchsolve_first_call", "--prepay",
                                      "steps of cublas, cusolver, gemm, dgemm, syrk, trsm, xpotrf, graph, potrf:M (M >= 1; got '" + step + "')");
        }
        if (!Context::cuda_available()) {
            std::cout << "skipped: no GPU\n";
            return 0;
        }
#ifndef BATCHSOLVE_FIRST_CALL_PEERS
        if (extended && o.vendor) throw InvalidArgument("batchsolve_first_call", "--vendor", "a build linked with cuBLAS/cuSOLVER");
#endif
        if (o.name == "gemm_vbatched") return o.precision == Precision::s ? run_gemm<float>(o) : run_gemm<double>(o);
        if (o.name == "trsm_vbatched") return o.precision == Precision::s ? run_trsm<float>(o) : run_trsm<double>(o);
        if (o.name == "potrf_large") return o.precision == Precision::s ? run_large<float>(o) : run_large<double>(o);
        if (o.name == "sysv_mixed") return run_sysv(o);
        switch (o.precision) {
            case Precision::s: return run<float>(o);
            case Precision::d: return run<double>(o);
            case Precision::c: return run<std::complex<float>>(o);
            case Precision::z: return run<std::complex<double>>(o);
        }
    } catch (const std::exception& e) {
        std::cerr << "batchsolve_first_call: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
