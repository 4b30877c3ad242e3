// What every kernel generator shares, defined once: precision helpers, integer rounding and the
// limits on the order n. Pure C++ (no CUDA header): the generators run on machines without a GPU.
#pragma once

#include <cstddef>

#include "batchsolve/limits.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::codegen {

// ---- precisions ---------------------------------------------------------------------------------
// (The letter of a precision is batchsolve::precision_letter, types.hpp.)
constexpr bool is_complex(Precision p) { return p == Precision::c || p == Precision::z; }
constexpr bool is_single(Precision p) { return p == Precision::s || p == Precision::c; }
// Bytes of one real part (float or double) and of one element (real or complex).
constexpr int real_bytes(Precision p) { return is_single(p) ? 4 : 8; }
constexpr int element_bytes(Precision p) { return real_bytes(p) * (is_complex(p) ? 2 : 1); }
// 32-bit registers one element occupies: s 1, d 2, c 2, z 4.
constexpr int words_per_element(Precision p) { return element_bytes(p) / 4; }

// ---- integers -----------------------------------------------------------------------------------
constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
constexpr int round_up(int a, int b) { return ceil_div(a, b) * b; }
constexpr std::size_t align16(std::size_t x) { return (x + 15) / 16 * 16; }
constexpr int pow2_ceil(int x) {
    int p = 1;
    while (p < x) p *= 2;
    return p;
}

// ---- limits of the hardware every family plans for -------------------------------------------------
// Threads of one block (every CUDA GPU since sm_20).
inline constexpr int max_threads_per_block = limits::max_threads_per_block;

// ---- limits on n ----------------------------------------------------------------------------------
// The limits are batchsolve/limits.hpp's (the one place; tools read them there). Largest order the
// library sends to a generated interleaved kernel and to the column-major register kernels; column-major
// calls up to limits::column_major_max_n run the shared-memory family, larger n cuSOLVER.
inline constexpr int max_dispatched_n = limits::interleaved_max_n;
// Largest order the one-thread-per-matrix and cooperative interleaved generators accept (beyond it a
// thread's tile loops get absurdly long and another algorithm is better); above max_dispatched_n
// only tests and experiments reach them.
inline constexpr int max_interleaved_generator_n = limits::interleaved_generator_max_n;
// Largest order the column-major register generators accept: what the dispatcher sends them.
inline constexpr int max_column_major_generator_n = limits::column_major_register_max_n;

}  // namespace batchsolve::codegen
