// The fixed cost of a CUDA process on this machine, phase by phase, for the end-to-end budgets of
// dvc and als: exec to main, loading the CUDA libraries the apps link (dlopen, as the loader would),
// creating the primary context (cudaFree(nullptr)), library handles, then _exit with the context
// and any allocations left to the driver (the quick exit of dvc correlate). Prints one JSON line;
// time the whole process from outside to see the exit.
//   cuda_start_floor [--libs] [--handles] [--device-mib N] [--pinned-mib N] [--reset]
// --reset: cudaDeviceReset() before _exit (timed: reset_s), to compare an in-process teardown with
// the driver's at exit.
// Build: nvcc -O2 -o cuda_start_floor cuda_start_floor.cu -ldl   (cudart static: nothing else loads)
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {
// Seconds since the process was started (fork), from /proc (clock-tick resolution).
double since_process_start() {
    std::ifstream stat("/proc/self/stat"), up("/proc/uptime");
    std::string text;
    double uptime = 0;
    if (!std::getline(stat, text) || !(up >> uptime)) return -1;
    const char* p = text.c_str() + text.rfind(')') + 2;
    for (int field = 3; field < 22; ++field) p = std::strchr(p, ' ') + 1;
    return uptime - std::strtod(p, nullptr) / double(sysconf(_SC_CLK_TCK));
}
using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
}  // namespace

int main(int argc, char** argv) {
    const auto t0 = Clock::now();
    const double at_main = since_process_start();
    bool libs = false, handles = false, reset = false;
    long device_mib = 0, pinned_mib = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--libs") libs = true;
        else if (a == "--handles") libs = handles = true;
        else if (a == "--device-mib" && i + 1 < argc) device_mib = std::atol(argv[++i]);
        else if (a == "--pinned-mib" && i + 1 < argc) pinned_mib = std::atol(argv[++i]);
        else if (a == "--reset") reset = true;
    }
    double libs_s = 0, context_s = 0, handles_s = 0, alloc_s = 0, reset_s = 0;
    void* cublas = nullptr;
    void* cusolver = nullptr;
    if (libs) {
        const auto a = Clock::now();
        cublas = dlopen("libcublas.so.13", RTLD_NOW | RTLD_GLOBAL);
        cusolver = dlopen("libcusolver.so.12", RTLD_NOW | RTLD_GLOBAL);
        void* cufft = dlopen("libcufft.so.12", RTLD_NOW | RTLD_GLOBAL);
        void* nvrtc = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_GLOBAL);
        libs_s = seconds(a, Clock::now());
        if (!cublas || !cusolver || !cufft || !nvrtc) std::fprintf(stderr, "dlopen: %s\n", dlerror());
    }
    {
        const auto a = Clock::now();
        const cudaError_t e = cudaFree(nullptr);
        context_s = seconds(a, Clock::now());
        if (e != cudaSuccess) return std::fprintf(stderr, "cudaFree: %s\n", cudaGetErrorString(e)), 1;
    }
    if (handles && cublas && cusolver) {
        using create_fn = int (*)(void**);
        const auto a = Clock::now();
        void* h1 = nullptr;
        void* h2 = nullptr;
        auto c1 = reinterpret_cast<create_fn>(dlsym(cublas, "cublasCreate_v2"));
        auto c2 = reinterpret_cast<create_fn>(dlsym(cusolver, "cusolverDnCreate"));
        if (c1) c1(&h1);
        if (c2) c2(&h2);
        handles_s = seconds(a, Clock::now());
    }
    if (device_mib > 0 || pinned_mib > 0) {
        const auto a = Clock::now();
        void* d = nullptr;
        void* h = nullptr;
        if (device_mib > 0 && cudaMalloc(&d, std::size_t(device_mib) << 20) != cudaSuccess) return 1;
        if (pinned_mib > 0 && cudaHostAlloc(&h, std::size_t(pinned_mib) << 20, cudaHostAllocDefault) != cudaSuccess) return 1;
        if (d) cudaMemset(d, 1, std::size_t(device_mib) << 20);
        cudaDeviceSynchronize();
        alloc_s = seconds(a, Clock::now());
    }
    if (reset) {
        const auto a = Clock::now();
        cudaDeviceReset();
        reset_s = seconds(a, Clock::now());
    }
    std::printf("{\"at_main_s\": %.4f, \"libs_s\": %.4f, \"context_s\": %.4f, \"handles_s\": %.4f, \"alloc_s\": %.4f, \"reset_s\": %.4f, \"before_exit_s\": %.4f}\n",
                at_main, libs_s, context_s, handles_s, alloc_s, reset_s, at_main + seconds(t0, Clock::now()));
    std::fflush(stdout);
    _exit(0);
}
