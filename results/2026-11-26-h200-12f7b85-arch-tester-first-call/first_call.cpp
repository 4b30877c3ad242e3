// Measures the cost of the first batched Cholesky call in a fresh process, from outside the library:
// Context creation, then the first potrf_batched (or cuSOLVER's, with --vendor) on a batch of SPD
// matrices, each timed with a host clock after synchronisation. One process per measurement: the
// caller runs it with an empty or a populated BATCHSOLVE_CACHE_DIR.
//   first_call PRECISION N LAYOUT BATCH [--vendor]     prints one JSON line
#include <batchsolve/batchsolve.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace batchsolve;
using Clock = std::chrono::steady_clock;
static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

template <class T>
int run(int n, const std::string& layout, int batch, bool vendor) {
    std::vector<T> host = generate_spd_batch<T>(n, batch, 1e3, 7);
    if (layout == "interleaved") {  // element (i,j) of consecutive matrices adjacent
        std::vector<T> il(host.size());
        for (int k = 0; k < batch; ++k)
            for (int e = 0; e < n * n; ++e) il[std::size_t(e) * batch + k] = host[std::size_t(k) * n * n + e];
        host.swap(il);
    }
    auto t0 = Clock::now();
    Context ctx(Backend::cuda);
    const double t_context = since(t0);
    Buffer<T> a(ctx, host);
    Buffer<int> info(ctx, std::size_t(batch));
    ctx.synchronize();
    auto view = layout == "interleaved" ? BatchView<T>::interleaved(a.data(), n, n, batch)
                                        : BatchView<T>::column_major(a.data(), n, n, batch);
    auto t1 = Clock::now();
    if (vendor) vendor::potrf_batched<T>(Uplo::lower, view, info.data(), ctx);
    else potrf_batched<T>(Uplo::lower, view, info.data(), ctx);
    ctx.synchronize();
    const double t_first = since(t1);
    a.upload(host);
    auto t2 = Clock::now();
    if (vendor) vendor::potrf_batched<T>(Uplo::lower, view, info.data(), ctx);
    else potrf_batched<T>(Uplo::lower, view, info.data(), ctx);
    ctx.synchronize();
    const double t_second = since(t2);
    int failed = 0;
    for (int v : info.to_host()) failed += v != 0;
    std::printf("{\"precision\": \"%c\", \"n\": %d, \"layout\": \"%s\", \"batch\": %d, \"routine\": \"%s\", "
                "\"context_s\": %.6f, \"first_call_s\": %.6f, \"second_call_s\": %.6f, \"failed\": %d}\n",
                precision_letter(precision_v<T>), n, layout.c_str(), batch, vendor ? "cusolver" : "batchsolve",
                t_context, t_first, t_second, failed);
    return failed != 0;
}

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: first_call s|d N column_major|interleaved BATCH [--vendor]\n");
        return 2;
    }
    const bool vendor = argc > 5 && std::strcmp(argv[5], "--vendor") == 0;
    const int n = std::atoi(argv[2]), batch = std::atoi(argv[4]);
    return argv[1][0] == 's' ? run<float>(n, argv[3], batch, vendor) : run<double>(n, argv[3], batch, vendor);
}
