// Run-time specialisation: CUDA C++ source generated per kernel configuration, compiled with NVRTC
// for the device's architecture, cached in memory and on disk (keyed by GPU, CUDA version and a hash
// of source + options) so that a second process pays nothing. Compilation itself needs no GPU, which
// is how CI checks that every generated variant compiles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace batchsolve::cuda_backend::jit {

// A generated kernel: complete CUDA C++ source (no #include of CUDA headers needed beyond what
// NVRTC provides; use `extern "C" __global__` so the name is not mangled) and the kernel's name.
struct KernelSource {
    std::string source;
    std::string kernel_name;
    std::vector<std::string> options;  // extra NVRTC options, e.g. "--use_fast_math"
};

// Compiles to a CUBIN for sm_<arch> (e.g. 90) without touching a GPU. Throws batchsolve::Error with
// the NVRTC log (and the first lines of the source) when compilation fails. `report` (optional)
// receives the NVRTC log; resource usage is read later from the loaded function.
std::string compile_to_cubin(const KernelSource& kernel, int arch, std::string* log = nullptr);

// Where compiled modules are cached on disk: $BATCHSOLVE_CACHE_DIR, else $XDG_CACHE_HOME/batchsolve,
// else $HOME/.cache/batchsolve; an empty string disables the disk cache.
std::string cache_directory();

// A loaded kernel on the current device, kept opaque so no CUDA header leaks from here.
struct LoadedKernel {
    void* function = nullptr;  // cudaKernel_t (from cudaLibraryGetKernel; no driver API linked)
    int registers = 0;         // per thread, from cuFuncGetAttribute
    int local_bytes = 0;       // spills / stack per thread
    int max_threads = 0;       // per block
};

// Returns the loaded kernel for this source on `device`, compiling (or reading the disk cache) on
// first use; later calls with the same source hit an in-memory map. Thread-safe.
LoadedKernel get_kernel(const KernelSource& kernel, int device);

// Launches with cudaLaunchKernel on `stream` (a cudaStream_t); `args` point at the arguments.
void launch(const LoadedKernel& k, unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,
            unsigned shared_bytes, void* stream, void** args);

// Hash used for cache keys (FNV-1a 64 of the bytes), exposed for tests.
std::uint64_t hash_bytes(const std::string& bytes);

}  // namespace batchsolve::cuda_backend::jit
