// The vector Cholesky path of the CPU backend (cholesky_simd.hpp): which instruction set runs, and the
// OpenMP loop that hands each thread its range of matrix groups and its scratch.
#include "cholesky_simd.hpp"
#include "batchsolve/context.hpp"

#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

namespace batchsolve::reference::simd {

const char* to_string(Isa isa) {
    switch (isa) {
        case Isa::off: return "off";
        case Isa::portable: return "portable";
        case Isa::avx2: return "avx2";
        case Isa::avx512: return "avx512";
    }
    return "?";
}

bool isa_supported(Isa isa) {
#if defined(__x86_64__) && defined(BATCHSOLVE_SIMD_X86)
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    switch (isa) {
        case Isa::off:
        case Isa::portable: return true;
        case Isa::avx2: return avx2;
        case Isa::avx512:
            return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512dq");
    }
    return false;
#else
    return isa == Isa::off || isa == Isa::portable;
#endif
}

Isa best_supported_isa() {
    for (Isa isa : {Isa::avx512, Isa::avx2})
        if (isa_supported(isa)) return isa;
    return Isa::portable;
}

Isa active_isa() {
    const char* text = std::getenv("BATCHSOLVE_CPU_SIMD");
    const std::string value = text ? text : "";
    Isa wanted;
    if (value.empty() || value == "auto") return best_supported_isa();
    else if (value == "off") return Isa::off;
    else if (value == "portable") wanted = Isa::portable;
    else if (value == "avx2") wanted = Isa::avx2;
    else if (value == "avx512") wanted = Isa::avx512;
    else
        throw Error("BATCHSOLVE_CPU_SIMD='" + value + "': unknown value (expected auto, avx512, avx2, portable or off)");
    // A set the CPU lacks gives way to the best one below it (a setting copied from another machine
    // still runs).
    while (!isa_supported(wanted)) wanted = Isa(int(wanted) - 1);
    return wanted;
}

namespace {

template <class T>
SimdKernels<T> kernels_for(Isa isa) {
#if defined(BATCHSOLVE_SIMD_X86)
    if (isa == Isa::avx512) return avx512_kernels<T>();
    if (isa == Isa::avx2) return avx2_kernels<T>();
#endif
    return portable_kernels<T>();
}

// The orders this path takes for T (real precisions only; complex ones keep the LAPACKE loop).
template <class T>
bool takes(int n, int count) {
    if constexpr (!std::is_floating_point_v<T>) return false;
    else return n >= 1 && n <= SimdSwitchOver<T>::max_order && count > 0;
}

// Runs run(first_group, end_group, scratch) on every thread over a contiguous range of the groups of
// `lanes` matrices (the static split of the LAPACKE loop, for the same reasons: equal work, no shared
// counter, neighbouring outputs written by one thread). The scratch is allocated before the parallel
// region, so that an allocation failure throws to the caller instead of ending the process.
template <class T, class Run>
void for_each_group_range(int count, int lanes, int n, const Run& run) {
    const int groups = count / lanes + (count % lanes != 0);  // count + lanes - 1 could overflow
    const int threads = std::max(1, std::min(omp_get_max_threads(), groups));
    // Whole cache lines per thread, so that threads never share one.
    const std::size_t per_thread = (scratch_elements(n, lanes) + 63) / 64 * 64;
    std::vector<T> scratch(per_thread * threads);
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), used = omp_get_num_threads();
        const int first = int(std::int64_t(groups) * t / used), end = int(std::int64_t(groups) * (t + 1) / used);
        if (first < end) run(first, end, scratch.data() + per_thread * t);
    }
}

}  // namespace

template <class T>
bool potrf(Uplo uplo, const BatchView<T>& a, int* info) {
    if constexpr (!std::is_floating_point_v<T>) {
        return false;
    } else {
        if (!takes<T>(a.rows, a.count)) return false;
        const Isa isa = active_isa();
        if (isa == Isa::off) return false;
        const SimdKernels<T> kernels = kernels_for<T>(isa);
        for_each_group_range<T>(a.count, kernels.lanes, a.rows, [&](int first, int end, T* scratch) {
            kernels.potrf(uplo, a, info, first, end, scratch);
        });
        return true;
    }
}

template <class T>
bool potrs(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b) {
    if constexpr (!std::is_floating_point_v<T>) {
        return false;
    } else {
        if (!takes<T>(a.rows, a.count)) return false;
        const Isa isa = active_isa();
        if (isa == Isa::off) return false;
        const SimdKernels<T> kernels = kernels_for<T>(isa);
        for_each_group_range<T>(a.count, kernels.lanes, a.rows, [&](int first, int end, T* scratch) {
            kernels.potrs(uplo, a, b, first, end, scratch);
        });
        return true;
    }
}

template <class T>
bool posv(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info) {
    if constexpr (!std::is_floating_point_v<T>) {
        return false;
    } else {
        if (!takes<T>(a.rows, a.count)) return false;
        const Isa isa = active_isa();
        if (isa == Isa::off) return false;
        const SimdKernels<T> kernels = kernels_for<T>(isa);
        for_each_group_range<T>(a.count, kernels.lanes, a.rows, [&](int first, int end, T* scratch) {
            kernels.posv(uplo, a, b, info, first, end, scratch);
        });
        return true;
    }
}

#define BATCHSOLVE_SIMD_INSTANTIATE(T)                                                    \
    template bool potrf<T>(Uplo, const BatchView<T>&, int*);                             \
    template bool potrs<T>(Uplo, const BatchView<const T>&, const BatchView<T>&);       \
    template bool posv<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*);
BATCHSOLVE_SIMD_INSTANTIATE(float)
BATCHSOLVE_SIMD_INSTANTIATE(double)
BATCHSOLVE_SIMD_INSTANTIATE(std::complex<float>)
BATCHSOLVE_SIMD_INSTANTIATE(std::complex<double>)
#undef BATCHSOLVE_SIMD_INSTANTIATE

}  // namespace batchsolve::reference::simd

namespace batchsolve {

// Declared in batchsolve/context.hpp; answered here, where the instruction set and the switch-over live.
CpuCholeskyPath cpu_cholesky_path() {
    CpuCholeskyPath p;
    p.isa = reference::simd::to_string(reference::simd::active_isa());
    p.simd_max_order_s = reference::simd::SimdSwitchOver<float>::max_order;
    p.simd_max_order_d = reference::simd::SimdSwitchOver<double>::max_order;
    p.threads = omp_get_max_threads();
    return p;
}

}  // namespace batchsolve
