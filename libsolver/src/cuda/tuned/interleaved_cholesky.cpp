// Host side of the interleaved-layout Cholesky kernels: configuration checks, kernel lookup (generate,
// compile, cache) and launch on the context's stream.
#include "interleaved_cholesky.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "../jit/call_cache.hpp"
#include "../jit/jit.hpp"
#include "../jit/kernel_cache.hpp"
#include "../resources.hpp"
#include "codegen/cholesky/cooperative.hpp"
#include "codegen/cholesky/families.hpp"
#include "kernel_plan.hpp"

namespace batchsolve::cuda_backend::tuned {

namespace {

void check_cuda(cudaError_t e, const std::string& call) {
    if (e != cudaSuccess) throw CudaError(call, static_cast<int>(e), cudaGetErrorString(e));
}

// The chunk width the kernels use: the view's (chunked) or count (plain interleaved), and the config's
// chunk_size must not contradict it (0 = as the layout says).
template <class T>
int chunk_of(const BatchView<T>& v, const CholeskyConfig& config, const char* routine) {
    if (!v.is_interleaved())
        throw InvalidArgument(routine, "a.layout", "interleaved or chunked_interleaved for the interleaved kernels");
    const int chunk = v.chunk();
    if (config.chunk_size != 0 && config.chunk_size != chunk)
        throw InvalidArgument(routine, "config.chunk_size",
                              "0 or the view's chunk width " + std::to_string(chunk) + " (got " +
                                  std::to_string(config.chunk_size) + ")");
    if (v.count > INT_MAX - 1024) throw InvalidArgument(routine, "a.count", "count <= INT_MAX - 1024");
    return chunk;
}

// A call's kernel, loaded: the launch needs the function and, for the cooperative kernels' capped
// grids, the occupancy (LoadedKernel::blocks_per_sm, set once when the kernel is loaded).
using LaunchableKernel = jit::LoadedKernel;

// Dynamic shared memory of a launch: the cooperative kernels' buffers, none for the others.
std::size_t shared_bytes_of(const InterleavedKernelSpec& spec) { return family_of(spec).resources(spec).shared_bytes; }

// The kernel cache's request for a spec (kernel_plan.hpp's key: family and kernel name, the
// configuration's text in the disk key), with the launch's checks and occupancy when it is loaded.
jit::KernelRequest request_of(const InterleavedKernelSpec& spec) {
    jit::KernelRequest r = cache_request(spec);
    r.on_load = [spec](jit::LoadedKernel& k) {
        if (k.max_threads < spec.config.threads_per_block)
            throw InvalidArgument(k.name, "config.threads_per_block",
                                  "at most " + std::to_string(k.max_threads) + " for this kernel");
        check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.blocks_per_sm, static_cast<const void*>(k.function),
                                                                  spec.config.threads_per_block, shared_bytes_of(spec)),
                   "cudaOccupancyMaxActiveBlocksPerMultiprocessor(" + k.name + ")");
    };
    return r;
}

const LaunchableKernel& lookup(const InterleavedKernelSpec& spec, int device) {
    const std::string family = codegen::cache_family(family_of(spec));
    if (const jit::LoadedKernel* k = jit::find_kernel(family, interleaved_kernel_name(spec), device)) return *k;
    const jit::KernelRequest r = request_of(spec);
    return jit::cached_kernel(r.key, device, r.generate, r.on_load);
}

// Two kernels of one call (two-kernel posv), built in parallel when neither is cached.
std::pair<const LaunchableKernel*, const LaunchableKernel*> lookup_pair(const InterleavedKernelSpec& first,
                                                                        const InterleavedKernelSpec& second, int device) {
    const LaunchableKernel* a = jit::find_kernel(codegen::cache_family(family_of(first)),
                                                 family_of(first).kernel_name(first), device);
    const LaunchableKernel* b = jit::find_kernel(codegen::cache_family(family_of(second)),
                                                 family_of(second).kernel_name(second), device);
    if (a != nullptr && b != nullptr) return {a, b};  // the hot path
    const auto k = jit::cached_kernels({request_of(first), request_of(second)}, device, 2);
    return {k[0], k[1]};
}

// The spec of a call, resolved but not checked (make_spec checks it).
InterleavedKernelSpec resolved_spec(Routine routine, Precision precision, Uplo uplo, int n, int nrhs, int count, int chunk,
                                    const CholeskyConfig& config) {
    InterleavedKernelSpec spec;
    spec.routine = routine;
    spec.precision = precision;
    spec.uplo = uplo;
    spec.n = n;
    spec.config = resolve_interleaved_config(routine, precision, n, config);
    spec.config.chunk_size = 0;  // a run-time argument, not part of the generated text
    spec.wide_index = interleaved_needs_wide_index(n, routine == Routine::potrf ? 0 : nrhs, count, chunk);
    return spec;
}

InterleavedKernelSpec make_spec(Routine routine, Precision precision, Uplo uplo, int n, int nrhs, int count, int chunk,
                                const CholeskyConfig& config, const char* name) {
    const InterleavedKernelSpec spec = resolved_spec(routine, precision, uplo, n, nrhs, count, chunk, config);
    check_interleaved_spec(spec, name);
    return spec;
}

// posv in two kernels (CholeskyConfig::solve_warps_per_matrix > 0): potrf of the configuration without
// the solve fields, then the cooperative potrs of solve_nb, solve_warps_per_matrix and the config's
// nrhs_block and fast_math. Both specs are checked before anything runs; a problem of the solve
// kernel names the config's solve field.
struct TwoKernelPosv {
    InterleavedKernelSpec factor, solve;
};

TwoKernelPosv two_kernel_posv_specs(Precision precision, Uplo uplo, int n, int nrhs, int count, int chunk,
                                    const CholeskyConfig& config, const char* name) {
    if (config.solve_warps_per_matrix <= 0)
        throw InvalidArgument(name, "config.solve_warps_per_matrix",
                              "2, 4 or 8 when config.solve_nb is set (got " +
                                  std::to_string(config.solve_warps_per_matrix) + ")");
    if (config.solve_nb < 0)
        throw InvalidArgument(name, "config.solve_nb", ">= 0, 0 for the default tile (got " +
                                                            std::to_string(config.solve_nb) + ")");
    const TwoKernelPosvConfigs configs = split_two_kernel_posv(config);
    TwoKernelPosv out;
    out.factor = make_spec(Routine::potrf, precision, uplo, n, 0, count, chunk, configs.factor, name);
    out.solve = resolved_spec(Routine::potrs, precision, uplo, n, nrhs, count, chunk, configs.solve);
    if (const std::string problem = interleaved_spec_problem(out.solve); !problem.empty()) {
        const std::size_t colon = problem.find(':');
        const std::string field = problem.substr(0, colon);
        const std::string config_field = field == "nb"                                              ? "solve_nb"
                                         : field == "warps_per_matrix" || field == "threads_per_block" ? "solve_warps_per_matrix"
                                                                                                     : field;
        throw InvalidArgument(name, field == "n" ? "a.rows" : "config." + config_field,
                              problem.substr(colon + 2) + " (the solve kernel of a two-kernel posv)");
    }
    return out;
}

// ---- the hot path: one resolution per distinct call --------------------------------------------------
//
// A call's kernels depend on (device, routine, precision, uplo, n, the configuration as given, and
// whether 32-bit offsets suffice); everything else (pointers, count, chunk, nrhs) is a launch argument.
// The first call of such a combination resolves and checks the spec(s), formats the kernel names and
// looks the kernels up (compiling them if need be); later calls find the result by an integer key:
// no string is formatted, no memory allocated and no spec re-checked on the way to the launch. (The
// resolution builds a dozen strings: the kernel name, the family's and the memory key, and the
// cooperative family's check texts; on an H200 that cost ~3 us per call at n = 8.)
// tests/gpu/launch_path_bench.cpp times this path on the host: on a 2-core build machine, mean of
// potrf/potrs/posv s/d n = 8/16/32 interleaved/chunked, 670 ns and 5-6 heap allocations per call
// resolved every time, 31 ns and none cached (the table lookup before it: 44 ns, none). With the
// argument checks' texts (core/checks.hpp) lazy too, n = 8 potrs/posv interleaved/chunked on an H200
// kept 0.91-1.23 of the best earlier speed-up over cuSOLVER, against 0.80-0.89 without
// (results/2026-11-27-h200-b024f08-issue21-launch-path).
struct CallKey {
    int device = 0;
    Routine routine = Routine::potrf;
    Precision precision = Precision::s;
    Uplo uplo = Uplo::lower;
    int n = 0;
    bool wide_index = false;         // interleaved_needs_wide_index with the call's right-hand sides
    bool wide_index_factor = false;  // ... with none (the factor kernel of a two-kernel posv)
    CholeskyConfig config;           // as the launcher received it (resolution fills in the defaults)

    std::size_t hash() const noexcept {  // every field, as jit/call_cache.hpp's keys are hashed
        jit::KeyHasher h;
        h.mix(device), h.mix(static_cast<int>(routine)), h.mix(static_cast<int>(precision));
        h.mix(static_cast<int>(uplo)), h.mix(n), h.mix(wide_index), h.mix(wide_index_factor);
#define BATCHSOLVE_MIX_FIELD(field) h.mix(static_cast<long long>(config.field));
        BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_MIX_FIELD)
#undef BATCHSOLVE_MIX_FIELD
        return h.value();
    }
};

bool operator==(const CallKey& a, const CallKey& b) {
    return a.device == b.device && a.routine == b.routine && a.precision == b.precision && a.uplo == b.uplo &&
           a.n == b.n && a.wide_index == b.wide_index && a.wide_index_factor == b.wide_index_factor &&
           a.config == b.config;
}

// The resolved call: its kernel, or a two-kernel posv's factor and solve kernels.
struct ResolvedCall {
    InterleavedKernelSpec first;
    const LaunchableKernel* first_kernel = nullptr;
    InterleavedKernelSpec second;  // two-kernel posv: the solve
    const LaunchableKernel* second_kernel = nullptr;
};

// The resolved calls, in front of the kernel cache (jit/call_cache.hpp).
jit::CallCache<CallKey, ResolvedCall>& call_cache() {
    static jit::CallCache<CallKey, ResolvedCall> c;
    return c;
}

// The kernels of a call with `nrhs` right-hand sides (0 for potrf; a two-kernel posv takes at least 1),
// resolved once per CallKey; a configuration problem throws InvalidArgument naming `name`'s field on
// every call (nothing is cached for it).
const ResolvedCall& resolve_call(Routine routine, Precision precision, Uplo uplo, int n, int nrhs, int count, int chunk,
                                 const CholeskyConfig& config, int device, const char* name) {
    CallKey key;
    key.device = device;
    key.routine = routine;
    key.precision = precision;
    key.uplo = uplo;
    key.n = n;
    key.wide_index = interleaved_needs_wide_index(n, routine == Routine::potrf ? 0 : nrhs, count, chunk);
    key.wide_index_factor = interleaved_needs_wide_index(n, 0, count, chunk);
    key.config = config;
    jit::CallCache<CallKey, ResolvedCall>& cache = call_cache();
    if (const ResolvedCall* known = cache.find(key)) return *known;
    auto resolved = std::make_unique<ResolvedCall>();
    if (routine == Routine::posv && is_two_kernel_posv(config)) {
        const TwoKernelPosv specs = two_kernel_posv_specs(precision, uplo, n, nrhs, count, chunk, config, name);
        // both kernels ready (compiled, launchable) before the first runs: a failure leaves A and info as they were
        const auto [factor_kernel, solve_kernel] = lookup_pair(specs.factor, specs.solve, device);
        resolved->first = specs.factor, resolved->first_kernel = factor_kernel;
        resolved->second = specs.solve, resolved->second_kernel = solve_kernel;
    } else {
        resolved->first = make_spec(routine, precision, uplo, n, nrhs, count, chunk, config, name);
        resolved->first_kernel = &lookup(resolved->first, device);
    }
    return *cache.insert(key, std::move(resolved));  // a racing thread's equal resolution stays
}

unsigned grid_for(int count, int threads_per_block) {
    return static_cast<unsigned>((static_cast<long long>(count) + threads_per_block - 1) / threads_per_block);
}

// Launches the kernel of `spec` over `count` systems on the context's stream: cooperative kernels in
// the shape coop_launch_shape gives (W warps per 32 systems; potrs: groups of right-hand sides on
// grid.y), the others one thread per matrix.
void launch_interleaved(const InterleavedKernelSpec& spec, const LaunchableKernel& k, int count, int nrhs, void** args,
                        const char* routine, Context& ctx) {
    cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream());
    if (is_cooperative(spec)) {
        const CoopLaunchShape shape = coop_launch_shape(spec, count, nrhs, detail::resources_of(ctx, routine).sm_count_);
        jit::launch(k, shape.grid_x, shape.grid_y, shape.block_x, 1, static_cast<unsigned>(shape.shared_bytes),
                    stream, args);
        return;
    }
    jit::launch(k, grid_for(count, spec.config.threads_per_block), 1, spec.config.threads_per_block, 1, 0, stream,
                args);
}

}  // namespace

ResolvedLaunch resolve_interleaved_launch(Routine routine, Precision precision, Uplo uplo, int n, int nrhs, int count,
                                          int chunk, const CholeskyConfig& config, int device, const char* routine_name) {
    const ResolvedCall& call = resolve_call(routine, precision, uplo, n, nrhs, count, chunk, config, device, routine_name);
    ResolvedLaunch r;
    r.spec = &call.first;
    r.kernel = call.first_kernel;
    if (call.second_kernel != nullptr) r.solve_spec = &call.second, r.solve_kernel = call.second_kernel;
    return r;
}

template <class T>
void potrf_interleaved(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig& config, Context& ctx) {
    constexpr const char* routine = "potrf_batched";
    int count = a.count;
    int chunk = chunk_of(a, config, routine);
    if (count == 0) return;
    jit::ScopedDevice on(ctx.device());
    cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream());
    if (a.rows == 0) {
        check_cuda(cudaMemsetAsync(info, 0, sizeof(int) * static_cast<std::size_t>(count), stream),
                   "cudaMemsetAsync(info)");
        return;
    }
    const ResolvedCall& call =
        resolve_call(Routine::potrf, precision_v<T>, uplo, a.rows, 0, count, chunk, config, ctx.device(), routine);
    T* data = a.data;
    void* args[] = {&data, &info, &count, &chunk};
    launch_interleaved(call.first, *call.first_kernel, count, 0, args, routine, ctx);
}

template <class T>
void potrs_interleaved(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, const CholeskyConfig& config,
                       Context& ctx) {
    constexpr const char* routine = "potrs_batched";
    int count = a.count;
    int chunk = chunk_of(a, config, routine);
    if (b.chunk() != chunk || !b.is_interleaved())
        throw InvalidArgument(routine, "b.layout", "the same interleaved layout and chunk width as a");
    int nrhs = b.cols;
    if (count == 0 || a.rows == 0 || nrhs == 0) return;
    jit::ScopedDevice on(ctx.device());
    const ResolvedCall& call =
        resolve_call(Routine::potrs, precision_v<T>, uplo, a.rows, nrhs, count, chunk, config, ctx.device(), routine);
    const InterleavedKernelSpec& spec = call.first;
    const LaunchableKernel& k = *call.first_kernel;
    const T* a_data = a.data;
    T* b_data = b.data;
    const int* no_info = nullptr;  // the cooperative kernel skips systems with info != 0 (two-kernel posv)
    void* args[] = {&a_data, &b_data, &nrhs, &count, &chunk};
    void* coop_args[] = {&a_data, &b_data, &nrhs, &no_info, &count, &chunk};
    launch_interleaved(spec, k, count, nrhs, is_cooperative(spec) ? coop_args : args, routine, ctx);
}

template <class T>
void posv_interleaved(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, const CholeskyConfig& config,
                      Context& ctx) {
    constexpr const char* routine = "posv_batched";
    int count = a.count;
    int chunk = chunk_of(a, config, routine);
    if (b.chunk() != chunk || !b.is_interleaved())
        throw InvalidArgument(routine, "b.layout", "the same interleaved layout and chunk width as a");
    int nrhs = b.cols;
    if (count == 0) return;
    if (is_two_kernel_posv(config)) {  // potrf, then potrs on the systems whose info is 0
        if (a.rows == 0) return potrf_interleaved(uplo, a, info, CholeskyConfig{}, ctx);  // info = 0, as the fused form
        jit::ScopedDevice on(ctx.device());
        // both kernels ready (resolve_call loads them together) before the first runs: a failure leaves
        // A and info as they were
        const ResolvedCall& call = resolve_call(Routine::posv, precision_v<T>, uplo, a.rows, std::max(nrhs, 1), count, chunk,
                                                config, ctx.device(), routine);
        T* a_data = a.data;
        T* b_data = b.data;
        void* factor_args[] = {&a_data, &info, &count, &chunk};
        launch_interleaved(call.first, *call.first_kernel, count, 0, factor_args, routine, ctx);
        if (nrhs == 0) return;
        const int* failed = info;
        void* solve_args[] = {&a_data, &b_data, &nrhs, &failed, &count, &chunk};
        launch_interleaved(call.second, *call.second_kernel, count, nrhs, solve_args, routine, ctx);
        return;
    }
    if (a.rows == 0 || nrhs == 0) {  // nothing to solve: the factorisation alone (info = 0 for n = 0)
        // ... but a configuration posv would refuse (nrhs_block, the solve's shared memory or registers)
        // is refused here too. One posv accepts gives potrf the same factorisation: same nb (0 resolves
        // alike for both), same W, left-looking when cooperative.
        if (a.rows > 0) make_spec(Routine::posv, precision_v<T>, uplo, a.rows, 1, count, chunk, config, routine);
        potrf_interleaved(uplo, a, info, config, ctx);
        return;
    }
    jit::ScopedDevice on(ctx.device());
    const ResolvedCall& call =
        resolve_call(Routine::posv, precision_v<T>, uplo, a.rows, nrhs, count, chunk, config, ctx.device(), routine);
    T* a_data = a.data;
    T* b_data = b.data;
    void* args[] = {&a_data, &b_data, &nrhs, &info, &count, &chunk};
    launch_interleaved(call.first, *call.first_kernel, count, nrhs, args, routine, ctx);  // cooperative: factor, barrier, solve; grid.y 1
}

template <class T>
InterleavedKernelReport prepare_interleaved(Routine routine, Uplo uplo, int n, int nrhs, int count, int chunk,
                                            const CholeskyConfig& config, Context& ctx) {
    const char* name = "prepare_interleaved";
    if (count < 1) throw InvalidArgument(name, "count", ">= 1");
    if (chunk < 1) throw InvalidArgument(name, "chunk", ">= 1");
    if (n < 1) throw InvalidArgument(name, "n", ">= 1");
    if (routine == Routine::posv && is_two_kernel_posv(config)) {  // both kernels; the report sums them up
        const TwoKernelPosv specs = two_kernel_posv_specs(precision_v<T>, uplo, n, std::max(nrhs, 1), count, chunk, config, name);
        const auto [factor_kernel, solve_kernel] = lookup_pair(specs.factor, specs.solve, ctx.device());
        const LaunchableKernel &f = *factor_kernel, &s = *solve_kernel;
        InterleavedKernelReport r;
        r.name = f.name + " + " + s.name;
        r.config = specs.factor.config;
        r.config.solve_warps_per_matrix = specs.solve.config.warps_per_matrix;
        r.config.solve_nb = specs.solve.config.nb;
        r.registers = std::max(f.registers, s.registers);
        r.local_bytes = std::max(f.local_bytes, s.local_bytes);
        r.max_threads = std::min(f.max_threads, s.max_threads);
        r.blocks_per_sm = std::min(f.blocks_per_sm, s.blocks_per_sm);
        r.from_disk_cache = f.from_disk_cache && s.from_disk_cache;
        r.compile_seconds = f.compile_seconds + s.compile_seconds;
        return r;
    }
    const InterleavedKernelSpec spec = make_spec(routine, precision_v<T>, uplo, n, nrhs, count, chunk, config, name);
    const LaunchableKernel& k = lookup(spec, ctx.device());
    InterleavedKernelReport r;
    r.name = k.name;
    r.config = spec.config;
    r.registers = k.registers;
    r.local_bytes = k.local_bytes;
    r.max_threads = k.max_threads;
    r.blocks_per_sm = k.blocks_per_sm;
    r.from_disk_cache = k.from_disk_cache;
    r.compile_seconds = k.compile_seconds;
    return r;
}

#define INSTANTIATE(T)                                                                                          \
    template void potrf_interleaved<T>(Uplo, const BatchView<T>&, int*, const CholeskyConfig&, Context&);        \
    template void potrs_interleaved<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, const CholeskyConfig&, \
                                       Context&);                                                                 \
    template void posv_interleaved<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, const CholeskyConfig&, \
                                      Context&);                                                                  \
    template InterleavedKernelReport prepare_interleaved<T>(Routine, Uplo, int, int, int, int, const CholeskyConfig&, \
                                                            Context&);
INSTANTIATE(float)
INSTANTIATE(double)
INSTANTIATE(std::complex<float>)
INSTANTIATE(std::complex<double>)
#undef INSTANTIATE

}  // namespace batchsolve::cuda_backend::tuned
