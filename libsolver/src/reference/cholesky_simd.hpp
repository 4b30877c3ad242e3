// Small-n batched Cholesky on the CPU with several matrices per SIMD register: the interleaved idea
// of the GPU kernels (and of MKL's "compact" routines) on vector lanes. The reference backend's
// potrf/potrs/posv (cholesky.cpp) hand a call here first; it is taken when the precision is real, the
// order is at most the measured switch-over and an instruction set is enabled, else LAPACKE per matrix.
//
// How a call runs: the batch is cut into groups of W consecutive matrices (W = lanes of one vector
// register: 8 doubles / 16 floats for AVX-512, 4 / 8 for AVX2, 4 / 8 for the portable 32-byte generic
// vectors); OpenMP hands each thread a contiguous range of groups; per group the referenced triangle is
// copied into a thread-private, lane-interleaved scratch (element (i, k) of lane q at
// scratch[(i (i+1) / 2 + k) W + q], the lower factor stored by rows, so that the dot products of the
// left-looking factorisation and of the forward substitution read consecutive vectors), factored and
// solved there with vector instructions, and copied back. Interleaved layouts copy W adjacent lanes with
// one vector load; column-major ones and pointer arrays transpose through the scratch on the fly.
//
// Instruction sets: cholesky_simd_{avx512,avx2,portable}.cpp compile one kernel source
// (cholesky_simd_kernels.hpp) each under `#pragma GCC target`, so the library runs on any x86-64; the
// one used is the best the CPU supports (__builtin_cpu_supports), or the one BATCHSOLVE_CPU_SIMD asks for:
//   auto (or unset)   the best supported
//   avx512 | avx2     that one, or the best supported below it when the CPU lacks it
//   portable          GCC generic vectors only (SSE2 on x86-64)
//   off               no SIMD path: LAPACKE per matrix
// Results contract as the LAPACKE path: info per matrix (first column whose pivot is not positive and
// finite; +Inf and NaN pivots are failures), only the `uplo` triangle read and written, B of a failed
// matrix in posv untouched. The factor of a failed matrix is LAPACK's up to its failing column; later
// columns hold what the vector lanes computed (LAPACK leaves them unspecified as well).
#pragma once

#include <cstddef>
#include <cstdint>

#include "batchsolve/batch.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::reference::simd {

enum class Isa { off, portable, avx2, avx512 };
const char* to_string(Isa isa);
bool isa_supported(Isa isa);      // the CPU (and OS) can run it; off and portable always
Isa best_supported_isa();
// What a call made now runs with: BATCHSOLVE_CPU_SIMD (read at each call, so a test may switch it)
// capped by what the CPU supports. Throws Error for a value it does not know, naming the variable.
Isa active_isa();

// The switch-over: the largest order the vector path takes, per precision. Above it the LAPACKE loop
// (blocked, BLAS-3 per matrix) is faster: the vector path's scratch (n^2 / 2 x W elements) outgrows
// L2 while each matrix's trailing updates still fit OpenBLAS's GEMM kernels. The orders are the CPU
// backend's tuning table (libsolver/tuning/cpu.json: measured on the 2-core CI machine, each entry with
// its ratios; BATCHSOLVE_TUNING_FILE may replace it), else tuning.hpp's CpuSwitchOver default.
// SimdSwitchOver<T>::max_order reads as an int wherever it is used (read at each use, so the table
// is loaded once, on the first call, not at library load).
template <class T>
struct SimdSwitchOver {
    struct MaxOrder {
        operator int() const { return tuned_cpu_switch_over(precision_v<T>).simd_max_order; }
    };
    static constexpr MaxOrder max_order{};
};

// Right-hand sides solved per pass over a group's factor: the block of B copied into the scratch.
constexpr int kRhsBlock = 4;

// Elements of scratch one thread needs for groups of `lanes` matrices of order n.
inline std::size_t scratch_elements(int n, int lanes) {
    const std::size_t triangle = std::size_t(n) * (n + 1) / 2;
    return std::size_t(lanes) * (triangle + std::size_t(n) * kRhsBlock + n) + 64;  // + slack to align
}

// The entry points the reference backend calls; false when the call is not for this path (complex T,
// n = 0 or above the switch-over, BATCHSOLVE_CPU_SIMD=off), true when it ran the call.
template <class T>
bool potrf(Uplo uplo, const BatchView<T>& a, int* info);
template <class T>
bool potrs(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b);
template <class T>
bool posv(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info);

// ---- the per-instruction-set kernels (cholesky_simd_<isa>.cpp), called from inside the OpenMP region ----

// Each works on groups [first_group, end_group) of `lanes` consecutive matrices with one thread's
// scratch (scratch_elements(n, lanes) elements, any alignment).
template <class T>
struct SimdKernels {
    int lanes = 0;
    void (*potrf)(Uplo uplo, const BatchView<T>& a, int* info, int first_group, int end_group, T* scratch) = nullptr;
    void (*potrs)(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, int first_group, int end_group,
                  T* scratch) = nullptr;
    void (*posv)(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, int first_group, int end_group,
                 T* scratch) = nullptr;
};
template <class T>
SimdKernels<T> portable_kernels();
template <class T>
SimdKernels<T> avx2_kernels();
template <class T>
SimdKernels<T> avx512_kernels();

}  // namespace batchsolve::reference::simd
