// The CUDA backend's one kernel cache: every generated kernel (every codegen/family.hpp family:
// Cholesky's, GEMM, triangular, the fused POTF2) is looked up here by one key scheme, in memory and
// then on disk, and its source is generated and compiled only when neither has it. A launcher asks
// through family_kernel() below; per-call fast paths in front of it keep kernels from here
// (call_cache.hpp), never private copies.
//
//   in memory: (device, family, kernel name)        a hash-map probe per call, no text generated
//              family = codegen::cache_family(f) ("<area>.<name>"), kernel name = f.kernel_name(spec)
//   on disk:   family, kernel name, typed spec text, generator version (a digest of src/codegen),
//              sm_<arch>, CUDA runtime and NVRTC versions, the profiling aid's source folder
//              ($BATCHSOLVE_CACHE_DIR, see jit::cache_directory; read_cache_file checks the whole key)
//
// A family's kernel name must encode everything that changes the text (the digest guard
// tests/codegen checks that no two table kernels share a name); the spec text in the disk key is a
// second line of defence for configurations outside the tables.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/family.hpp"
#include "jit.hpp"

namespace batchsolve::cuda_backend::jit {

// What identifies a generated kernel without generating it.
struct KernelKey {
    std::string family;       // generator family, e.g. "cholesky.interleaved"
    std::string kernel_name;  // the family's name for the kernel (encodes its spec)
    // The typed spec as text (e.g. the configuration's to_string), part of the disk key only; left
    // empty where the name is all there is. Computed only when the kernel is not in memory.
    std::function<std::string()> spec_text;
};

// Called once when a kernel is first loaded on a device, before it is shared: checks against the
// loaded function (threads per block), shared-memory opt-in, occupancy into LoadedKernel::blocks_per_sm.
// Throwing keeps the kernel out of the cache.
using OnLoad = std::function<void(LoadedKernel&)>;

// The kernel (family, kernel name) on `device` when this process has loaded it, else nullptr: the
// hot path of a launcher, which builds its KernelRequest (closures, spec text) only on a miss.
const LoadedKernel* find_kernel(const std::string& family, const std::string& kernel_name, int device);

// The kernel of `key` on `device`: from memory, else from the disk cache, else generate() is called
// and its text compiled (and written to the disk cache). Thread-safe; two threads missing the same
// kernel both build it and the first one stored is kept. The reference stays valid for the process.
const LoadedKernel& cached_kernel(const KernelKey& key, int device, const std::function<KernelSource()>& generate,
                                  const OnLoad& on_load = {});

// The kernel of `spec` from `family` (a codegen::GeneratorFamily) on `device` through the cache above:
// key (cache_family(family), family.kernel_name(spec)); on a miss the family generates the text.
// `spec_text` (disk key only) and `on_load` as for cached_kernel. The caller has checked
// family.can_implement(spec).
template <class Family>
const LoadedKernel& family_kernel(const Family& family, const typename Family::spec_type& spec, int device,
                                  std::function<std::string()> spec_text = {}, const OnLoad& on_load = {}) {
    const std::string family_key = codegen::cache_family(family);
    const std::string name = family.kernel_name(spec);
    if (const LoadedKernel* k = find_kernel(family_key, name, device)) return *k;
    return cached_kernel(KernelKey{family_key, name, std::move(spec_text)}, device, [&] { return family.generate(spec); },
                         on_load);
}

// Several kernels at once (one call's kernels, a warm-up list): the misses are generated and
// compiled on up to `threads` threads (NVRTC is thread-safe per program), then loaded. The result
// is in the order of `keys`. With $BATCHSOLVE_KERNEL_RECORD_ONLY set, a miss throws Error instead
// (a run that only lists its kernels in a manifest: tuned/kernel_plan.hpp).
struct KernelRequest {
    KernelKey key;
    std::function<KernelSource()> generate;
    OnLoad on_load;
};
std::vector<const LoadedKernel*> cached_kernels(const std::vector<KernelRequest>& requests, int device, int threads);

// Fills the disk cache for `device`'s architecture without loading anything: each request's CUBIN is
// read from disk, else generated, compiled and written, on up to `threads` threads. Loading stays
// with the launchers (their OnLoad sets what a launch needs). Throws the first failure after all
// were tried; with no disk cache (cache_directory() empty) there is nothing to fill: throws Error.
struct DiskFill {
    int already_on_disk = 0;
    int compiled = 0;
};
DiskFill fill_disk_cache(const std::vector<KernelRequest>& requests, int device, int threads);
// The same for an architecture (compute capability, e.g. 90) without a device.
DiskFill fill_disk_cache_for_arch(const std::vector<KernelRequest>& requests, int arch, int threads);

// A read-only cache searched when the disk cache misses (before compiling): $BATCHSOLVE_PREBUILT_DIR,
// else the install prefix's share/batchsolve/kernels (filled by a build with BATCHSOLVE_PREBUILT_KERNELS);
// "" when neither is set or exists.
const std::string& prebuilt_directory();

// Kernel manifests (tuned/kernel_plan.hpp has the format): with $BATCHSOLVE_KERNEL_MANIFEST=FILE set,
// each family's launcher appends the manifest line of every kernel it asks this cache for to FILE,
// once per process (one write() per line: concurrent processes' lines do not interleave).
void record_in_manifest(const std::string& line);

// The generator version in disk keys: a digest of the code-generation sources this library was built
// from (src/codegen), so that a changed generator never reads an older generator's CUBIN.
const char* generator_version();

// Puts a kernel loaded elsewhere into the in-memory cache under `key` (a slot already filled is
// kept). For host-only tests and benchmarks of the lookup path (tests/gpu/launch_path_bench.cpp),
// which register a LoadedKernel they never launch.
void insert_loaded_kernel(const KernelKey& key, int device, const LoadedKernel& kernel);

// Counters of this process's cache traffic (tests, first-call measurements).
struct CacheStatistics {
    long long memory_hits = 0;
    long long disk_hits = 0;
    long long compiled = 0;
    double generate_seconds = 0;  // source generation on misses
    double compile_seconds = 0;   // NVRTC
    double disk_seconds = 0;      // cache file reads and writes
    double load_seconds = 0;      // cudaLibraryLoadData + attributes + on_load
};
CacheStatistics cache_statistics();

}  // namespace batchsolve::cuda_backend::jit
