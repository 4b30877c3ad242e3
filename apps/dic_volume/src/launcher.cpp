// dvc's executable: a small launcher that starts the GPU context first and loads the program
// (libdvc_app.so: the commands and every library they link) while the driver works. Linked as one
// executable, the ~60 shared libraries (HDF5 and its network stack, OpenBLAS, NVRTC, ...) were
// mapped and relocated before main, and the context (a quarter of a second on an H200) started
// only after them. Built with DVC_LINKED it is that one executable (dvc_linked, to compare).
extern "C" int dvc_main(int argc, char** argv);

#ifndef DVC_LINKED
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>

namespace {

// Whether the command will use the GPU: correlate or bench, not for --help, and not with
// --backend cpu. DVC_EARLY_CONTEXT=0 leaves the context to the program (to compare).
bool wants_gpu_early(int argc, char** argv) {
    const char* early = std::getenv("DVC_EARLY_CONTEXT");
    if (early && std::strcmp(early, "0") == 0) return false;
    if (argc < 2 || (std::strcmp(argv[1], "correlate") != 0 && std::strcmp(argv[1], "bench") != 0)) return false;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return false;
        if (std::strcmp(argv[i], "--backend=cpu") == 0) return false;
        if (std::strcmp(argv[i], "--backend") == 0 && i + 1 < argc && std::strcmp(argv[i + 1], "cpu") == 0) return false;
    }
    return true;
}

}  // namespace
#endif

int main(int argc, char** argv) {
#ifdef DVC_LINKED
    return dvc_main(argc, argv);
#else
    // cudaFree(nullptr) makes the primary context; the program's own warm-up then finds it made (or
    // waits for it inside the runtime). Errors are left to the program, which reports them. The
    // runtime loads the driver library (dlopen) first: the program is loaded after that, so that
    // its dlopen, which holds the loader's lock throughout, does not hold the driver's up.
    std::thread context;
    if (wants_gpu_early(argc, argv)) {
        std::promise<void> driver_loaded;
        std::future<void> loaded = driver_loaded.get_future();
        context = std::thread([&driver_loaded] {
            int version = 0, count = 0;
            cudaDriverGetVersion(&version);
            driver_loaded.set_value();
            if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) cudaFree(nullptr);
        });
        loaded.wait();
    }
    void* program = dlopen("libdvc_app.so", RTLD_LAZY | RTLD_LOCAL);
    auto* entry = program ? reinterpret_cast<int (*)(int, char**)>(dlsym(program, "dvc_main")) : nullptr;
    if (!entry) {
        std::fprintf(stderr, "dvc: error: libdvc_app.so: %s (it is installed beside dvc's libraries)\n", dlerror());
        if (context.joinable()) context.join();
        return 4;
    }
    const int rc = entry(argc, argv);  // a finished correlate ends the process inside (its quick exit)
    if (context.joinable()) context.join();
    return rc;
#endif
}
