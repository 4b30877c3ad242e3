// The library's limits, in one place: the largest n each family and layout runs with its own kernels
// (above it a call goes elsewhere, or is refused, as each routine's header says), and the hardware
// limits the kernel generators plan for. The generators, the dispatch and tools (the autotuner's
// search space) all read these; nothing else states them.
#pragma once

#include <cstddef>

#include "batchsolve/types.hpp"

namespace batchsolve::limits {

// ---- hardware every generated kernel plans for ---------------------------------------------------------
// Threads of one block (every CUDA GPU since sm_20).
inline constexpr int max_threads_per_block = 1024;
// Registers one thread may hold (the compiler's cap).
inline constexpr int max_registers_per_thread = 255;
// Shared memory one block may opt in to on sm_90 (227 KB); a launch re-checks the device's own limit.
inline constexpr std::size_t max_shared_bytes_per_block = 232448;

// ---- small batched Cholesky (cholesky.hpp, tuning.hpp) ---------------------------------------------------
// Interleaved and chunked layouts: generated kernels up to this n; larger n runs cuSOLVER (the autotuner's
// interleaved search ends here too).
inline constexpr int interleaved_max_n = 128;
// Largest n the interleaved generators accept at all (beyond it a thread's tile loops get absurdly long
// and another algorithm is better): between interleaved_max_n and this only tests and experiments
// reach them, through the expert entry points.
inline constexpr int interleaved_generator_max_n = 256;
// Column-major layouts (and pointer arrays): register kernels (one matrix's rows spread over a
// group's registers) up to this n ...
inline constexpr int column_major_register_max_n = 128;
// ... and the shared-memory family (the triangle staged in one block's shared memory) up to this n,
// where one matrix also fits max_shared_bytes_per_block (shared_memory_largest_n); larger n runs cuSOLVER.
inline constexpr int column_major_max_n = 256;
// Interleaved kernels: full unrolling for at most this many tiles per dimension (ptxas: n = 32 with
// nb = 2 compiles in 6 s, nb = 1 did not finish in 5 minutes).
inline constexpr int interleaved_max_full_unroll_tiles = 12;
// Column-major register kernels: rows_per_thread * columns per thread * 32-bit words per element at
// most this (beyond it the tile no longer fits 255 registers beside addressing and temporaries).
inline constexpr int column_major_max_tile_words = 224;
// Shared-memory family: widest panel, largest side of the update's register tile.
inline constexpr int shared_memory_max_nb = 32;
inline constexpr int shared_memory_max_tile = 8;

constexpr int element_bytes(Precision p) {
    return (p == Precision::s ? 4 : p == Precision::d || p == Precision::c ? 8 : 16);
}
// Bytes of shared memory for `matrices` squares of order n in precision p (the shared-memory family).
constexpr std::size_t shared_memory_bytes(Precision p, int n, int matrices) {
    return std::size_t(matrices) * std::size_t(n) * std::size_t(n) * std::size_t(element_bytes(p));
}
// Largest n one matrix per block holds in shared memory, capped at column_major_max_n: s 241, d and c
// 170, z 120.
constexpr int shared_memory_largest_n(Precision p) {
    int n = 1;
    while (n < column_major_max_n && shared_memory_bytes(p, n + 1, 1) <= max_shared_bytes_per_block) ++n;
    return n;
}
// The largest n a column-major call of precision p runs with generated kernels.
constexpr int column_major_generated_max_n(Precision p) { return shared_memory_largest_n(p); }

// ---- large Cholesky (cholesky_large.hpp) ------------------------------------------------------------------
inline constexpr int large_min_panel = 32;    // LargeCholeskyConfig::nb
inline constexpr int large_max_panel = 1024;
inline constexpr int large_max_recursion_depth = 4;
// CholeskyDiagonal::leaf: the largest diagonal block its register-tiled kernel factors (16 x 16 threads,
// 8 x 8 entries each); the kernel is compiled for it, so it is a limit, not a tuning entry.
inline constexpr int large_leaf_max_order = 128;
inline constexpr int large_inner_blockings[] = {8, 16, 32};  // LargeCholeskyConfig::ib

// ---- LDL^T (ldlt.hpp) ---------------------------------------------------------------------------------
// Order of the diagonal leaves one thread block factors in shared memory (64 x 65 complex<double> =
// 66.5 KB); the kernel is compiled for it, so it is a limit, not a tuning entry.
inline constexpr int ldlt_leaf_order = 64;

// ---- variable-size TRSM/TRMM/POTRF (vbatched_triangular.hpp) --------------------------------------------
// Leaf triangles, inverted blocks and POTRF panels: one warp's rows.
inline constexpr int triangular_max_leaf = 32;

}  // namespace batchsolve::limits
