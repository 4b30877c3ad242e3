// Host time and heap allocations of the interleaved launchers' path from a call to its launch
// (configuration lookup, spec resolution and checks, kernel-cache lookup), without a GPU: the kernels
// are registered in the cache as loaded (never launched), so only host work is timed. "before" is
// the per-call sequence of a611ee2 (make_spec, then the kernel name, the family's name and the
// memory key formatted for every call); "after" is resolve_interleaved_launch, which the launchers
// call now. --check (the ctest) fails unless both resolve to the same kernel and "after" allocates
// nothing per call.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "codegen/cholesky/families.hpp"
#include "core/tuning_table.hpp"
#include "cuda/jit/kernel_cache.hpp"
#include "cuda/tuned/interleaved_cholesky.hpp"
#include "cuda/tuned/kernel_plan.hpp"

// ---- counting allocations: every operator new of this process ----------------------------------------

namespace {
std::atomic<long long> g_allocations{0};
}

void* operator new(std::size_t bytes) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace batchsolve;
using namespace batchsolve::cuda_backend;
using codegen::cholesky::InterleavedKernelSpec;
using codegen::cholesky::Routine;

constexpr int kArch = 90;  // the tables' sm_90 entries, as on an H100/H200
constexpr int kDevice = 0;

struct Case {
    Routine routine;
    Precision precision;
    LayoutKind layout;
    int n, nrhs, count, chunk;
};

// As cholesky.cu's resolve_config_for_arch: the table's entry for the call, else the defaults.
CholeskyConfig table_config(const Case& c) {
    if (auto tuned = tuning::lookup(to_string(c.routine), c.precision, c.layout, c.n, kArch, c.count)) {
        CholeskyConfig config = *tuned;
        config.chunk_size = c.layout == LayoutKind::chunked_interleaved ? c.chunk : 0;
        return config;
    }
    return CholeskyConfig{};
}

// The spec(s) as the launchers resolved them at a611ee2 (interleaved_cholesky.cpp's make_spec and
// two_kernel_posv_specs), checked.
InterleavedKernelSpec spec_before(Routine routine, Precision precision, int n, int nrhs, int count, int chunk,
                                  const CholeskyConfig& config) {
    InterleavedKernelSpec spec;
    spec.routine = routine;
    spec.precision = precision;
    spec.uplo = Uplo::lower;
    spec.n = n;
    spec.config = codegen::cholesky::resolve_interleaved_config(routine, precision, n, config);
    spec.config.chunk_size = 0;
    spec.wide_index = codegen::cholesky::interleaved_needs_wide_index(n, routine == Routine::potrf ? 0 : nrhs, count, chunk);
    codegen::cholesky::check_interleaved_spec(spec, "launch_path_bench");
    return spec;
}

std::vector<InterleavedKernelSpec> specs_before(const Case& c, const CholeskyConfig& config) {
    if (c.routine == Routine::posv && codegen::cholesky::is_two_kernel_posv(config)) {
        const auto two = codegen::cholesky::split_two_kernel_posv(config);
        return {spec_before(Routine::potrf, c.precision, c.n, 0, c.count, c.chunk, two.factor),
                spec_before(Routine::potrs, c.precision, c.n, std::max(c.nrhs, 1), c.count, c.chunk, two.solve)};
    }
    return {spec_before(c.routine, c.precision, c.n, c.nrhs, c.count, c.chunk, config)};
}

// a611ee2's lookup(): the family's name and the kernel name formatted, then the cache's memory key.
const jit::LoadedKernel* lookup_before(const InterleavedKernelSpec& spec) {
    const std::string family = std::string("cholesky.") + codegen::cholesky::family_of(spec).name();
    return jit::find_kernel(family, codegen::cholesky::interleaved_kernel_name(spec), kDevice);
}

const jit::LoadedKernel* call_before(const Case& c, const CholeskyConfig& config) {
    const jit::LoadedKernel* k = nullptr;
    for (const auto& spec : specs_before(c, config)) k = lookup_before(spec);  // two-kernel posv: both, the last returned
    return k;
}

const jit::LoadedKernel* call_after(const Case& c, const CholeskyConfig& config) {
    const auto r = tuned::resolve_interleaved_launch(c.routine, c.precision, Uplo::lower, c.n,
                                                     c.routine == Routine::potrf ? 0 : c.nrhs, c.count, c.chunk, config,
                                                     kDevice, "launch_path_bench");
    return r.solve_kernel != nullptr ? r.solve_kernel : r.kernel;
}

template <class F>
double best_ns_per_call(int iterations, int repeats, F&& f) {
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iterations; ++i) f();
        const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        best = std::min(best, ns / iterations);
    }
    return best;
}

template <class F>
double allocations_per_call(int iterations, F&& f) {
    const long long before = g_allocations.load();
    for (int i = 0; i < iterations; ++i) f();
    return double(g_allocations.load() - before) / iterations;
}

void usage() {
    std::printf(
        "usage: batchsolve_launch_path_bench [--iterations N] [--check]\n"
        "Host time (ns per call, best of 5) and heap allocations per call of the interleaved launchers' path\n"
        "from the call to the launch (table lookup, spec resolution and checks, kernel-cache lookup) for\n"
        "potrf/potrs/posv s/d, n = 8, 16, 32, batch 16384, interleaved and chunked (sm_90 tables), before\n"
        "(a611ee2's per-call sequence) and after (the cached resolution). No GPU needed: the kernels are\n"
        "registered as loaded and never launched.\n"
        "  --iterations N  calls per timed repeat (default 200000)\n"
        "  --check         exit 1 unless both paths find the same kernel and the new one allocates nothing\n"
        "  --record-only-check  with BATCHSOLVE_KERNEL_RECORD_ONLY and BATCHSOLVE_KERNEL_MANIFEST set: exit 1\n"
        "                  unless a kernel not in the cache is refused (not compiled) and written to the manifest\n");
}

}  // namespace

// A kernel nobody registered, asked for in a record-only run (run-all.sh RECORD_ONLY=1): the cache must
// refuse it before touching a GPU, and the manifest must name it.
int record_only_check() {
    const char* manifest = std::getenv("BATCHSOLVE_KERNEL_MANIFEST");
    if (manifest == nullptr || std::getenv("BATCHSOLVE_KERNEL_RECORD_ONLY") == nullptr) {
        std::printf("FAIL: set BATCHSOLVE_KERNEL_RECORD_ONLY and BATCHSOLVE_KERNEL_MANIFEST\n");
        return 1;
    }
    try {
        tuned::resolve_interleaved_launch(Routine::potrf, Precision::s, Uplo::lower, 5, 0, 100, 100, CholeskyConfig{},
                                          kDevice, "launch_path_bench");
        std::printf("FAIL: a record-only run resolved a kernel it never compiled\n");
        return 1;
    } catch (const Error& e) {
        if (std::string(e.what()).find("BATCHSOLVE_KERNEL_RECORD_ONLY") == std::string::npos) {
            std::printf("FAIL: unexpected error: %s\n", e.what());
            return 1;
        }
    }
    std::FILE* f = std::fopen(manifest, "r");
    char line[4096] = {0};
    const bool recorded = f != nullptr && std::fgets(line, sizeof line, f) != nullptr &&
                          std::strncmp(line, "interleaved potrf s lower 5 0 {", 31) == 0;
    if (f != nullptr) std::fclose(f);
    if (!recorded) {
        std::printf("FAIL: the manifest %s does not name the refused kernel (first line: %s)\n", manifest, line);
        return 1;
    }
    std::printf("ok: refused and recorded: %s", line);
    return 0;
}

int main(int argc, char** argv) {
    int iterations = 200000;
    bool check = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) return usage(), 0;
        if (!std::strcmp(argv[i], "--record-only-check")) return record_only_check();
        if (!std::strcmp(argv[i], "--check")) check = true;
        else if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "batchsolve_launch_path_bench: unknown argument '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (iterations < 1) {
        std::fprintf(stderr, "batchsolve_launch_path_bench: --iterations must be >= 1\n");
        return 2;
    }
    std::vector<Case> cases;
    for (Routine r : {Routine::potrf, Routine::potrs, Routine::posv})
        for (Precision p : {Precision::s, Precision::d})
            for (int n : {8, 16, 32})
                for (LayoutKind layout : {LayoutKind::interleaved, LayoutKind::chunked_interleaved})
                    cases.push_back({r, p, layout, n, 1, 16384, layout == LayoutKind::interleaved ? 16384 : 4096});

    int failures = 0;
    double sum_before = 0, sum_after = 0, sum_table = 0;
    std::printf("%-6s %-2s %-12s %4s | %9s %9s %9s | %8s %8s\n", "call", "p", "layout", "n", "table ns", "before ns",
                "after ns", "allocs b", "allocs a");
    for (const Case& c : cases) {
        const CholeskyConfig config = table_config(c);
        // Register the call's kernels as loaded (a fake function pointer: nothing is launched).
        for (const auto& spec : specs_before(c, config)) {
            jit::LoadedKernel fake;
            fake.function = reinterpret_cast<void*>(std::uintptr_t(0x1000));
            fake.name = codegen::cholesky::interleaved_kernel_name(spec);
            jit::insert_loaded_kernel(tuned::cache_key(spec), kDevice, fake);
        }
        const jit::LoadedKernel* before = call_before(c, config);
        const jit::LoadedKernel* after = call_after(c, config);  // the first call resolves and caches
        if (before == nullptr || before != after) {
            std::printf("FAIL: %s %c n=%d: the cached resolution found another kernel\n", to_string(c.routine),
                        precision_letter(c.precision), c.n);
            ++failures;
        }
        const double table_ns = best_ns_per_call(iterations, 5, [&] { (void)table_config(c); });
        const double before_ns = best_ns_per_call(iterations, 5, [&] { (void)call_before(c, config); });
        const double after_ns = best_ns_per_call(iterations, 5, [&] { (void)call_after(c, config); });
        const double allocs_before = allocations_per_call(1000, [&] { (void)call_before(c, config); });
        const double allocs_after = allocations_per_call(1000, [&] { (void)call_after(c, config); });
        if (allocs_after != 0) {
            std::printf("FAIL: %s %c n=%d: the cached resolution allocates %.2f times per call\n", to_string(c.routine),
                        precision_letter(c.precision), c.n, allocs_after);
            ++failures;
        }
        sum_before += before_ns, sum_after += after_ns, sum_table += table_ns;
        std::printf("%-6s %-2c %-12s %4d | %9.0f %9.0f %9.0f | %8.1f %8.1f\n", to_string(c.routine),
                    precision_letter(c.precision), to_string(c.layout), c.n, table_ns, before_ns, after_ns, allocs_before,
                    allocs_after);
    }
    const double k = double(cases.size());
    std::printf("mean over %zu cases: table lookup %.0f ns (unchanged, both paths), resolution + cache lookup %.0f ns "
                "before, %.0f ns after (%.1fx less host time)\n",
                cases.size(), sum_table / k, sum_before / k, sum_after / k, sum_before / std::max(sum_after, 1.0));
    if (check && failures > 0) return 1;
    return 0;
}
