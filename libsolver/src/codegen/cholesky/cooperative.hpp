// Source generators of the cooperative kernels for the interleaved and chunked interleaved layouts:
// a block of W warps serves 32 consecutive matrices (lane l of every warp works on matrix
// blockIdx.x * 32 + l) and shares out the tile rows of each matrix between its warps.
//   potrs: warp w keeps tile rows w, w + W, ... of B in registers; y and x of a finished tile row
//          pass to the other warps through shared memory.
//   potrf: left-looking by tile columns; the owner of tile row K factors the diagonal tile and
//          publishes L_KK (and which matrices failed) through shared memory, then every warp solves
//          the tiles of column K in the rows it owns.
//   posv:  the potrf steps with the forward substitution of the first nrhs_block right-hand sides
//          folded in (their rows in shared memory), one barrier, the backward substitution; the
//          other groups of right-hand sides then run the potrs solve (grid.y = 1) with the L the block
//          has just written. Only the matrices that did not fail are solved (a failed matrix's B is
//          never touched).
//
// Pure C++ (no CUDA header), like codegen/cholesky/interleaved.hpp: CI compiles the variants with NVRTC
// without a GPU, and the emulation test (tests/codegen/cooperative) runs the same text on the host.
#pragma once

#include <cstddef>
#include <string>

#include "codegen/cholesky/interleaved.hpp"

namespace batchsolve::codegen::cholesky {

// Warps per block (config.warps_per_matrix) the cooperative kernels are generated for: more than one
// (one warp is the one-thread-per-system kernel with extra barriers), at most 8 (beyond that the
// tile rows per warp get too few to hide the barrier of every step at n <= 128).
inline constexpr int coop_warp_counts[] = {2, 4, 8};
// Systems per block: one per lane of a warp, so that a warp's loads of one element are coalesced.
inline constexpr int coop_systems_per_block = 32;
// Shared memory of one block is capped at the static limit, so that no launch needs the opt-in
// attribute for more (2 buffers x nb x nrhs_block x 32 systems; d, nb = 16, nrhs_block = 8: 64 KiB).
inline constexpr std::size_t coop_max_shared_bytes = 48 * 1024;
// 32-bit registers of factor values a thread loads ahead of the FMAs that use them (whole columns of
// an update tile, at least one): enough loads in flight per warp to cover global-memory latency
// (d, nb = 8: 2 columns = 16 loads) while the kernel at W = 4, n = 128 stays within coop_register_cap.
inline constexpr int coop_prefetch_registers = 32;
// Per-thread register cap the kernel is compiled for (through __launch_bounds__' minimum of resident
// blocks) unless config.max_registers says otherwise: left alone, ptxas hoists the factor loads of
// whole update tiles and takes 190-255 registers (d, n = 128, W = 4: 238), which leaves room for
// only one or two blocks per SM; capped at 128, W = 4 keeps 4 blocks (16 warps) per SM resident. A
// configuration whose estimate plus coop_register_overhead exceeds the cap gets that larger cap.
inline constexpr int coop_register_cap = 128;
// Registers a thread needs beyond estimated_coop_registers, per 32-bit word of an element: addresses,
// loop counters, the diagonal tile's values during a solve, complex products' temporaries (ptxas
// interleaves the prefetched loads with the FMAs, so the estimate is already generous for real data:
// d, n = 128, nb = 8, W = 4 estimates 100 and fits 128; z, n = 100, nb = 6, W = 8 estimates 100 and
// spilled 36 bytes at 128).
inline constexpr int coop_register_overhead = 8;
// Registers of one SM (sm_90), for turning a per-thread cap into a number of resident blocks.
inline constexpr int coop_registers_per_sm = 65536;
// Largest grid.y (the hardware limit); more groups of nrhs_block right-hand sides are looped over.
inline constexpr int coop_max_grid_y = 65535;
// Largest config.grid_blocks_per_sm: the resident-block limit of an SM (sm_90); more is the same
// as 0.
inline constexpr int coop_max_grid_blocks_per_sm = 32;
// Registers the potrf kernel needs beyond estimated_coop_registers, whatever the precision: tile
// addresses and strides, the chunk arithmetic, loop counters, flags. Calibrated on sm_90, CUDA 13.0, n =
// 128, W = 4 at coop_register_cap: the largest tiles that compile without spills are s nb = 6 (estimate
// 60), d and c nb = 5 (70), z nb = 3 (60), while s nb = 7 (77), d/c nb = 6 (96) and z nb = 4 (96) spill
// 40-360 bytes; 56 separates the two groups (ptxas keeps many element offsets live across a column).
inline constexpr int coop_potrf_register_overhead = 56;
// Largest default potrf tile: the straight-line code of a tile step grows like nb^3 (NVRTC time);
// coop_potrf_register_overhead bounds it further (s 6, d/c 5, z 3 at n >= 12 W).
inline constexpr int coop_potrf_max_default_nb = 8;
// Smallest default potrf tile where n allows: below it a step's barrier, flag and address arithmetic
// cost more than its few FMAs, even if some warps then own no tile row (small n, many warps).
inline constexpr int coop_potrf_min_default_nb = 4;

// True for the specs the cooperative generators handle: warps_per_matrix != 0 (potrf, potrs, posv).
bool is_cooperative(const InterleavedKernelSpec& spec);

// Tile size when config.nb == 0: at least two tile rows per warp where n allows it (so that every
// warp works in most steps), at most 8 (the registers of the prefetched columns grow with nb).
int default_coop_nb(int n, int warps);
// potrf tile size when config.nb == 0: about two tile rows per warp (n / 2W), at least
// min(n, coop_potrf_min_default_nb), at most coop_potrf_max_default_nb, and shrunk until estimated_coop_registers + coop_potrf_register_overhead
// fits coop_register_cap (no spills at the cap).
int default_coop_potrf_nb(Precision precision, int n, int warps);

// "" when the cooperative `spec` (config.warps_per_matrix != 0) can be generated and launched, else
// "<config field>: <reason>" (interleaved_spec_problem forwards here). potrf ignores nrhs_block;
// potrf and posv need looking = left (resolve_interleaved_config sets it: the factorisation is
// left-looking). posv must satisfy the rules of both phases (same nb and W).
std::string interleaved_coop_spec_problem(const InterleavedKernelSpec& spec);

// e.g. potrs_interleaved_coop_d_lower_n128_nb8_w4_r1, potrf_interleaved_coop_d_lower_n128_nb6_w4,
// posv_interleaved_coop_d_lower_n64_nb6_w4_r1 (+ _fast, _reg<k>, _i64 as the options say).
std::string interleaved_coop_kernel_name(const InterleavedKernelSpec& spec);

// Estimated 32-bit registers per thread of the values the kernel keeps live. potrs: the thread's rows
// of the right-hand sides (ceil(T / W) tiles of nb x nrhs_block), the prefetched factor values and one
// row of y or x from shared memory; potrf: the nb x nb tile being solved and the prefetched columns of
// its two operands; posv: the larger of the two (the phases run one after the other). Addressing not
// included.
int estimated_coop_registers(const InterleavedKernelSpec& spec);

// Minimum resident blocks per SM written into __launch_bounds__ (1 when config.max_registers is set):
// as many as coop_register_cap allows, fewer when the estimate plus the overhead (potrs:
// coop_register_overhead per word of an element, potrf: coop_potrf_register_overhead; posv: the larger
// of its two phases' sums) exceeds it.
int coop_min_blocks(const InterleavedKernelSpec& spec);

// Launch geometry of a call: grid (ceil(count / 32) groups of systems, at most
// config.grid_blocks_per_sm * multiprocessors when that is set (the blocks loop over the groups);
// min(groups of nrhs_block columns, 65535), potrf and posv: 1), block 32 * W threads, dynamic shared
// memory (coop_shared_bytes) potrs: 2 * nb * nrhs_block * 32 * sizeof(T) bytes; potrf: 2 * nb(nb+1)/2
// * 32 * sizeof(T) (L_KK, double-buffered) + 2 * 32 ints (the failed-matrix flags, double-buffered);
// posv: the larger of the two phases' element buffers (they are separated by a barrier) + the flags,
// + n * nrhs_block * 32 * sizeof(T) for the first group's rows when coop_posv_folds_forward.
// nrhs is ignored for potrf and posv.
struct CoopLaunchShape {
    unsigned grid_x = 0, grid_y = 0, block_x = 0;
    std::size_t shared_bytes = 0;
};
CoopLaunchShape coop_launch_shape(const InterleavedKernelSpec& spec, int count, int nrhs, int multiprocessors);
std::size_t coop_shared_bytes(const InterleavedKernelSpec& spec);

// posv: whether the kernel folds the forward substitution of the first nrhs_block right-hand sides
// into the factorisation (codegen/cholesky/cooperative.cpp explains how): when their rows (n x
// nrhs_block x 32 elements) fit in shared memory beside the factorisation's buffers
// (coop_max_shared_bytes). Otherwise, and for the later groups, the solve re-reads L.
bool coop_posv_folds_forward(const InterleavedKernelSpec& spec);
// Byte offset of those rows in the posv kernel's shared memory (after the L_KK / y / x buffers).
std::size_t coop_posv_rhs_offset(const InterleavedKernelSpec& spec);

// The complete source (deterministic). The kernel takes (const T* a, T* b, int nrhs, const int* info,
// int count, int chunk) for potrs (info null, or the potrf info of a posv in two kernels: systems
// with info != 0 are skipped), (T* a, int* info, int count, int chunk) for potrf, (T* a, T* b, int nrhs,
// int* info, int count, int chunk) for posv (as the one-thread kernels), chunk = count for plain
// interleaved, and is launched with coop_launch_shape. For host
// emulation (BS_HOST_EMULATION defined, with the host emulator of tests/codegen/emulator supplying
// threadIdx, __syncthreads, BS_DECLARE_SMEM and BS_KERNEL_HEAD, and BS_FUNC, BS_OPAQUE defined
// by the includer) the text also defines bs_host_entry(void** args).
codegen::KernelSource generate_interleaved_coop_kernel(const InterleavedKernelSpec& spec);

}  // namespace batchsolve::codegen::cholesky
