// Source generator of the one-thread-per-matrix Cholesky kernels (potrf, potrs, fused posv) for the
// interleaved and chunked interleaved layouts: straight-line tile code specialised for n, nb, looking
// order and unrolling, emitted as CUDA C++ for NVRTC (and compilable as host C++ for emulation).
//
// Pure C++ (no CUDA header): CI compiles every variant with NVRTC without a GPU, and the emulator
// test compiles the same text with the host compiler.
#pragma once

#include <functional>
#include <string>

#include "batchsolve/limits.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"
#include "codegen/kernel_source.hpp"

namespace batchsolve::codegen::cholesky {

// The routine a kernel is for: the public enumeration (to_string, parse_routine in tuning.hpp).
using Routine = batchsolve::Routine;

// Everything that changes the generated text.
struct InterleavedKernelSpec {
    Routine routine = Routine::potrf;
    Precision precision = Precision::d;
    Uplo uplo = Uplo::lower;
    int n = 1;
    CholeskyConfig config;     // nb resolved (> 0); chunk_size is a run-time argument, not part of the text
    bool wide_index = false;   // 64-bit element offsets (see interleaved_needs_wide_index)
};

// Largest n for which full unrolling is offered: the straight-line code grows like n^3/6 statements,
// and NVRTC/ptxas time and spills with it (sm_90, CUDA 13.0: n = 32 takes 4-9 s and already spills
// for nb >= 8; n = 48 takes 23 s; n = 64 right-looking took 310 s and spilled 37 KB).
inline constexpr int max_full_unroll_n = 32;
// ... and for at most this many tiles per dimension, ceil(n / nb): many tiny tile operations are what
// ptxas handles worst (n = 32: nb = 2 compiles in 6 s, nb = 1 did not finish in 5 minutes).
inline constexpr int max_full_unroll_tiles = limits::interleaved_max_full_unroll_tiles;
// Largest potrs/posv nrhs_block (registers: nb * nrhs_block values of the solution).
inline constexpr int max_nrhs_block = 8;

// "" when `spec` can be generated and launched, else "<config field>: <reason>". A spec with
// config.warps_per_matrix != 0 describes a cooperative kernel (codegen/cholesky/cooperative.hpp) and is
// judged by its rules.
std::string interleaved_spec_problem(const InterleavedKernelSpec& spec);
// Throws InvalidArgument(routine, "config.<field>", reason) when interleaved_spec_problem is not "".
void check_interleaved_spec(const InterleavedKernelSpec& spec, const char* routine);

// Kernel name: routine, precision, uplo, n, nb, looking, unrolling and the options that change code,
// e.g. potrf_interleaved_d_lower_n32_nb8_top_partial_t128 (cooperative kernels: see
// interleaved_coop_kernel_name).
std::string interleaved_kernel_name(const InterleavedKernelSpec& spec);

// The complete source (deterministic: same spec, same text). The kernel takes
//   potrf: (T* a, int* info, int count, int chunk)
//   potrs: (const T* a, T* b, int nrhs, int count, int chunk)
//   posv:  (T* a, T* b, int nrhs, int* info, int count, int chunk)
// with chunk = count for plain interleaved, and runs one thread per matrix (grid-stride free: launch
// ceil(count / threads_per_block) blocks of threads_per_block threads). The body is also available as
// bs_<routine>_body(..., int mat) for host emulation (define BS_HOST_EMULATION before the text).
// A cooperative spec (warps_per_matrix != 0) yields generate_interleaved_coop_kernel's text (same
// kernel arguments, another launch shape: coop_launch_shape).
codegen::KernelSource generate_interleaved_kernel(const InterleavedKernelSpec& spec);

// The per-matrix body of a one-thread-per-matrix kernel alone (bs_potrf_body, bs_potrs_body or
// bs_posv_body, the same statements as in generate_interleaved_kernel's text; no prelude, no kernel),
// with locate(indent) in place of the chunk arithmetic: lines that declare, from the body's arguments,
// `a` (T*; const T* for potrs), the stride `w` (idx_t) and, for potrs and posv, `b`. For kernels that
// hold matrices in the interleaved order somewhere else (shared memory: codegen/cholesky/fused.hpp).
std::string interleaved_body_function(const InterleavedKernelSpec& spec,
                                      const std::function<std::string(const std::string&)>& locate);

// Pieces of the generated text shared with the cooperative kernels: the one prelude of every
// generated kernel (codegen/prelude.hpp: BS_DEVICE, R, T, the bs_* helpers), then idx_t and N ...
std::string interleaved_prelude(Precision precision, bool wide_index, int n);
// ... the prelude's macro that hides an idx_t from the optimiser (BS_OPAQUE_I32 or BS_OPAQUE_I64) ...
std::string interleaved_opaque(bool wide_index);
// ... and the chunk arithmetic of batch.hpp for matrix `mat` (count, chunk, a_batch and, with_b,
// b_batch and nrhs in scope): declares chunk_index, lane (index in the chunk), rest, w (the chunk's
// width: the distance between elements (i, j) and (i + 1, j)), a and, with_b, b; one line each.
std::string interleaved_locate_code(bool const_a, bool with_b, const std::string& indent);

// True when element offsets inside one chunk can exceed 2^31 - 1 (then wide_index is required).
bool interleaved_needs_wide_index(int n, int nrhs, int count, int chunk);

// A safe configuration for n when no tuning entry exists (register-aware choice of nb; see the .cpp
// for the register estimates behind it).
CholeskyConfig default_interleaved_config(Routine routine, Precision precision, int n);

// Fills the fields left at "default" (nb == 0, nrhs_block <= 0, threads_per_block <= 0) from
// default_interleaved_config; other fields are kept as given. Cooperative potrs (warps_per_matrix >
// 0): nb == 0 takes default_coop_nb, and threads_per_block is always set to 32 * warps_per_matrix.
// Cooperative potrf and posv: nb == 0 takes default_coop_potrf_nb (posv: for both phases),
// threads_per_block is 32 * warps_per_matrix and looking is left (the factorisation's only order).
CholeskyConfig resolve_interleaved_config(Routine routine, Precision precision, int n, const CholeskyConfig& config);

// posv in two kernels (config.solve_warps_per_matrix or solve_nb set): the configuration of its potrf
// kernel (the config without the solve fields) and of its cooperative potrs kernel (nb = solve_nb,
// warps_per_matrix = solve_warps_per_matrix, the config's nrhs_block and fast_math), both unresolved.
struct TwoKernelPosvConfigs {
    CholeskyConfig factor, solve;
};
inline bool is_two_kernel_posv(const CholeskyConfig& c) { return c.solve_warps_per_matrix != 0 || c.solve_nb != 0; }
TwoKernelPosvConfigs split_two_kernel_posv(const CholeskyConfig& posv);

// Estimated 32-bit registers per thread of the values a kernel keeps live (tiles, reciprocals,
// streamed operands; addressing not included), used for defaults, for refusing hopeless tiles and for
// documentation; the compiler's count comes from jit (LoadedKernel::registers). potrf, nb < n:
// w * (nb(nb+1)/2 + nb + nb^2 + 2 nb), nb = n: w * (n(n+1)/2 + n); potrs: w * (nb * nrhs_block + nb +
// nrhs_block); posv: the larger of the two; w = 1 (s), 2 (d, c), 4 (z).
int estimated_tile_registers(Routine routine, Precision precision, int n, const CholeskyConfig& config);

// Configurations whose estimate exceeds this are refused: past it ptxas spills kilobytes per thread
// or gives up on registers altogether (sm_90, CUDA 13.0: s nb = 13 right-looking, estimate 299: 32
// registers and 40-67 KB of spills; d nb = 11, estimate 440: 67 KB; n = 128, nb = 32: 233 s of
// ptxas, 384 KB), and the driver reserves local memory for every resident thread. Largest tiles
// accepted: s nb = 12, d/c nb = 8, z nb = 5; whole matrix (nb = n): s n <= 22, d/c n <= 15, z n <= 10.
inline constexpr int max_tile_registers = 280;

}  // namespace batchsolve::codegen::cholesky
