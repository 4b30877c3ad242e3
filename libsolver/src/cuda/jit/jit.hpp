// Run-time specialisation: CUDA C++ source generated per kernel configuration, compiled with NVRTC
// for the device's architecture, cached in memory and on disk (keyed by GPU, CUDA version and a hash
// of source + options) so that a second process pays nothing. Compilation itself needs no GPU, which
// is how CI checks that every generated variant compiles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_source.hpp"

namespace batchsolve::cuda_backend::jit {

// A generated kernel (codegen/kernel_source.hpp: text, name, NVRTC options), what jit compiles.
using KernelSource = codegen::KernelSource;

// Compiles to a CUBIN for sm_<arch> (e.g. 90) without touching a GPU. Throws batchsolve::Error with
// the NVRTC log (and the first lines of the source) when compilation fails. `log` (optional)
// receives the NVRTC log; resource usage is read later from the loaded function.
std::string compile_to_cubin(const KernelSource& kernel, int arch, std::string* log = nullptr);

// $BATCHSOLVE_JIT_SOURCE_DIR, read once ("" when unset): see profiled() below.
const std::string& profiling_source_directory();

// Where compiled modules are cached on disk: $BATCHSOLVE_CACHE_DIR, else $XDG_CACHE_HOME/batchsolve,
// else $HOME/.cache/batchsolve; an empty string disables the disk cache.
std::string cache_directory();

// A loaded kernel on the current device, kept opaque so no CUDA header leaks from here.
struct LoadedKernel {
    void* function = nullptr;  // cudaKernel_t (from cudaLibraryGetKernel; no driver API linked)
    int registers = 0;         // per thread, from cudaFuncGetAttributes
    int local_bytes = 0;       // spills / stack per thread
    int max_threads = 0;       // per block
    // Additions (jit.cpp): for reports and the autotuner.
    std::string name;              // the kernel's name, for error messages
    bool from_disk_cache = false;  // the CUBIN came from the disk cache (no NVRTC run)
    double compile_seconds = 0;    // NVRTC time when it was compiled by this process
    int blocks_per_sm = 0;         // occupancy at the launch shape, where the launcher's OnLoad sets it
};

// Profiling aid: with $BATCHSOLVE_JIT_SOURCE_DIR set (not empty), get_kernel writes each kernel's
// generated source to <dir>/<kernel_name>.cu and compiles it with -lineinfo under that path, so that
// Nsight Compute (--import-source yes) attributes instructions and stalls to the generated lines.
// The option is part of the cache key: profiled and plain CUBINs never mix. profiled() is the
// transformation (writes the file; throws batchsolve::Error naming the path when it cannot).
KernelSource profiled(const KernelSource& kernel, const std::string& dir);

// Returns the loaded kernel for this source on `device` through the one kernel cache
// (kernel_cache.hpp), keyed by a hash of the whole text: for tests that hold a source already. Every
// launcher uses jit::family_kernel (its family's cheap key) instead, so that a call whose kernel is
// loaded, or on disk, generates no text. Thread-safe.
LoadedKernel get_kernel(const KernelSource& kernel, int device);

// Loads a CUBIN on the current device and reads the function's attributes (no cache involved).
// Throws CudaError naming the kernel when the driver refuses it.
LoadedKernel load_cubin(const std::string& cubin, const std::string& kernel_name);

// Launches with cudaLaunchKernel on `stream` (a cudaStream_t); `args` point at the arguments.
void launch(const LoadedKernel& k, unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,
            unsigned shared_bytes, void* stream, void** args);

// Hash used for cache keys (FNV-1a 64 of the bytes), exposed for tests.
std::uint64_t hash_bytes(const std::string& bytes);

// ---- additions (jit.cpp) ----------------------------------------------------------------------

// Resource use reported by ptxas when compile_to_cubin is given "--ptxas-options=-v" (no GPU needed);
// -1 where the log does not say.
struct PtxasStats {
    int registers = -1;
    int stack_bytes = -1;
    int spill_store_bytes = -1;
    int spill_load_bytes = -1;
};
PtxasStats parse_ptxas_log(const std::string& log, const std::string& kernel_name);

// The disk cache's file for a key and its (atomic, checksummed) read and write; a missing, short or
// corrupt file reads as empty. Exposed for tests.
std::string cache_file_name(const std::string& key_text);
bool read_cache_file(const std::string& path, const std::string& key_text, std::string& cubin);
bool write_cache_file(const std::string& path, const std::string& key_text, const std::string& cubin);

// Makes `device` current for the lifetime of the object and restores the previous one.
class ScopedDevice {
public:
    explicit ScopedDevice(int device);
    ~ScopedDevice();
    ScopedDevice(const ScopedDevice&) = delete;
    ScopedDevice& operator=(const ScopedDevice&) = delete;

private:
    int previous_ = -1;
};

}  // namespace batchsolve::cuda_backend::jit
