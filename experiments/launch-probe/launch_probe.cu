// Probe (measured once on an H200 at 46f54a0, output in
// results/2026-11-22-h200-46f54a0-staged-posv/launch-probe.txt; not built by the project): where the ~11 us of a
// small library call go. Per case: the call timed alone on an idle GPU (as the tester times it),
// queued behind other work (host time hidden), the host time per call, and CUDA-graph replay per call;
// plus an empty kernel timed alone. Built by hand: nvcc -O2 -std=c++17 -arch=sm_90 -Ilibsolver/include
// -Ibuild/libsolver/include launch_probe.cu -Lbuild/libsolver -lbatchsolve.
#include <batchsolve/batchsolve.hpp>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
using namespace batchsolve;
__global__ void empty_kernel(int* p) { if (p && threadIdx.x == 12345) *p = 1; }
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <class T>
int probe(Context& ctx, int n, int count, const char* label, bool column_major) {
    cudaStream_t s = (cudaStream_t)ctx.stream();
    std::vector<T> host = generate_spd_batch<T>(n, count, 100.0, 7);
    const int sets = 8;
    std::vector<Buffer<T>> a; std::vector<Buffer<int>> info;
    Buffer<T> pristine(ctx, host.size());
    pristine.upload(host);  // column-major content; for interleaved only timing matters, so convert once
    for (int k = 0; k < sets; ++k) { a.emplace_back(ctx, host.size()); info.emplace_back(ctx, count); }
    auto view = [&](int k) {
        return column_major ? BatchView<T>::column_major(a[k].data(), n, n, count)
                            : BatchView<T>::interleaved(a[k].data(), n, n, count);
    };
    auto restore = [&](int k) {
        if (column_major) CK(cudaMemcpyAsync(a[k].data(), pristine.data(), host.size() * sizeof(T), cudaMemcpyDeviceToDevice, s));
        else convert_layout(BatchView<const T>::column_major(pristine.data(), n, n, count), view(k), ctx);
        return 0;
    };
    for (int k = 0; k < sets; ++k) restore(k);
    for (int w = 0; w < 3; ++w) potrf_batched<T>(Uplo::lower, view(0), info[0].data(), ctx);
    ctx.synchronize();
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    // 1. single calls, event-timed, GPU idle before each (as the tester does after its first call)
    std::vector<double> single;
    for (int r = 0; r < 40; ++r) {
        int k = r % sets; if (k == 0) { for (int j = 0; j < sets; ++j) restore(j); CK(cudaStreamSynchronize(s)); }
        CK(cudaEventRecord(e0, s)); potrf_batched<T>(Uplo::lower, view(k), info[k].data(), ctx); CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); single.push_back(ms * 1e3);
    }
    // 2. single call queued behind a busy GPU (host overhead hidden): sleep kernel proxy = restore of all sets first
    std::vector<double> queued;
    for (int r = 0; r < 20; ++r) {
        for (int j = 0; j < sets; ++j) restore(j);
        for (int j = 0; j < sets; ++j) restore(j);
        CK(cudaEventRecord(e0, s)); potrf_batched<T>(Uplo::lower, view(0), info[0].data(), ctx); CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); queued.push_back(ms * 1e3);
    }
    // 3. host submit time per call (no sync), 8 calls per sample
    std::vector<double> host_us;
    for (int r = 0; r < 50; ++r) {
        CK(cudaStreamSynchronize(s));
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < sets; ++k) potrf_batched<T>(Uplo::lower, view(k), info[k].data(), ctx);
        host_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / sets);
    }
    CK(cudaStreamSynchronize(s));
    // 4. graph of 8 calls (data already factored: timing only), replay time per call
    cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < sets; ++k) potrf_batched<T>(Uplo::lower, view(k), info[k].data(), ctx);
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ge, g, 0));
    std::vector<double> graph;
    for (int r = 0; r < 20; ++r) {
        for (int j = 0; j < sets; ++j) restore(j);
        CK(cudaEventRecord(e0, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); graph.push_back(ms * 1e3 / sets);
    }
    std::printf("%-28s n=%3d batch=%6d  single %7.2f us | queued %7.2f us | host submit %6.2f us | graph/call %7.2f us\n",
                label, n, count, med(single), med(queued), med(host_us), med(graph));
    return 0;
}

int main() {
    Context ctx(Backend::cuda);
    cudaStream_t s = (cudaStream_t)ctx.stream();
    std::printf("device: %s\n", ctx.device_name().c_str());
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    for (int w = 0; w < 10; ++w) empty_kernel<<<1, 32, 0, s>>>(nullptr);
    CK(cudaStreamSynchronize(s));
    for (int blocks : {1, 132, 512}) {
        std::vector<double> t;
        for (int r = 0; r < 50; ++r) {
            CK(cudaEventRecord(e0, s)); empty_kernel<<<blocks, 128, 0, s>>>(nullptr); CK(cudaEventRecord(e1, s));
            CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms * 1e3);
        }
        std::printf("empty kernel %4d blocks: %.2f us (event-timed single launch)\n", blocks, med(t));
    }
    for (int count : {32, 16384, 100000}) {
        for (int n : {8, 16, 32}) {
            probe<float>(ctx, n, count, "s interleaved", false);
            probe<double>(ctx, n, count, "d interleaved", false);
        }
        probe<float>(ctx, 8, count, "s column_major", true);
        probe<double>(ctx, 64, count, "d interleaved", false);
    }
    return 0;
}
