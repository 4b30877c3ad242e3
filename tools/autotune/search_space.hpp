// The autotuner's search space: the limits candidates must respect, the measured pruning of the
// default search (with its evidence), and the candidate lists of each kind of kernel.
#pragma once

#include <limits>
#include <vector>

#include "batchsolve/limits.hpp"  // the library's limits (the one place they are stated)
#include "common.hpp"

namespace batchsolve::autotune {

// ---- search-space limits and search policy --------------------------------------------------------
// Measured with NVRTC of CUDA 13.0 for sm_90 (one core): compile time is what bounds a sweep.

// A thread has at most 255 registers. Interleaved tiles whose live values (the library's estimate,
// estimated_registers below) exceed that spill heavily, run slowly and compile slowly (s, nb = 16:
// 7.5 s and 46 KB of spills); they are not compiled.
constexpr int kMaxRegistersPerThread = limits::max_registers_per_thread;
// Full unrolling of the interleaved kernels only for n <= 24 and at most 12 tiles per dimension. The
// library allows n <= 32, but there 20 of the 21 fully unrolled variants of n = 32 spill, each takes
// 2-10 s to compile (s and d alike), and the seed paper saw full unrolling pay off only up to n ~ 20.
constexpr int kInterleavedMaxFullUnrollN = 24;
constexpr int kInterleavedMaxFullUnrollTiles = limits::interleaved_max_full_unroll_tiles;
// potrs tiles: nb <= 16. The solves are bound by reading the factor once, so larger tiles buy little,
// and their straight-line code explodes (s, n = 128: nb = 32 compiles in 6.6 s, nb = 64 in 89 s).
constexpr int kMaxSolveTile = 16;
// Block sizes of the one-thread-per-matrix kernels. __launch_bounds__ takes the block size, so each
// is a kernel of its own (compiled). One kernel for all four would save the threads stage's
// compilations, but the bound changes the code even where it allows the same 255 registers: of 4
// sampled kernels (NVRTC 13.0, sm_90), 2 compiled to other machine code at one of the block sizes.
// Stage 1 runs kStage1ThreadsPerBlock.
constexpr int kThreadsPerBlock[] = {32, 64, 128, 256};
constexpr int kStage1ThreadsPerBlock = 64;
// A block size is skipped when the batch would fill fewer than this fraction of the SMs with one
// block each (batch 16384 on 132 SMs: 256 threads per block leave half of them idle).
constexpr double kMinBusySmFraction = 0.5;
// Chunk sizes of the chunked layout (Dongarra et al. 2018, §X.D); stage 1 uses the warp size.
constexpr int kChunkSizes[] = {32, 64, 128, 256, 512};
constexpr int kStage1Chunk = 32;
// Column-major kernels: thread shapes (threads_per_row x rows_per_thread) of stage 1, and the limits
// the library enforces (column_major_codegen.hpp), applied here so that dry runs count what is timed.
constexpr int kColumnMajorThreadsPerRow[] = {1, 2, 4, 8, 16};
constexpr int kColumnMajorRowsPerThread[] = {1, 2, 4, 8};
// These two and kStagedMaxSharedBytes below are the library's own limits (batchsolve/limits.hpp). estimated_registers (search_space.cpp) restates the library's
// estimated_tile_registers, a function that CPU-only builds (which run --dry-run) do not compile.
constexpr int kColumnMajorMaxTileWords = limits::column_major_max_tile_words;
constexpr int kColumnMajorMaxThreadsPerMatrix = limits::max_threads_per_block;
// Their update chunk (config.nb) in elements: the library's default (8 floats, 4 of the wider
// types), given explicitly because nb = 0 would also select the default full unrolling; stage 2 tries
// half and twice of it.
constexpr int kColumnMajorChunkSingle = 8;
constexpr int kColumnMajorChunkWide = 4;
// Fully unrolled column-major kernels only up to this n: their compile time grows like n^2 (potrf
// s: n = 64 4.6 s, n = 128 28 s; posv d n = 64: 12 s), so they would take most of a sweep's budget,
// and the blocked form is what a user's first call compiles quickly.
constexpr int kColumnMajorMaxFullUnrollN = 64;
// Column-major block sizes (matrices per block follow from them): stage 1, then the others.
constexpr int kColumnMajorStage1ThreadsPerBlock = 128;
constexpr int kColumnMajorThreadsPerBlock[] = {64, 128, 256, 512};
constexpr int kColumnMajorSolveThreadsPerBlock[] = {32, 64, 128, 256, 512};
// Column-major potrs: steps of a substitution whose columns are loaded ahead (config.nb; the library
// takes 1..8, its default is 8 in single precision and 1 otherwise, column_major_codegen.hpp).
constexpr int kColumnMajorPotrsPrefetch[] = {1, 2, 4, 8};
// Right-hand sides per pass (only with --nrhs > 1; the library caps it at 8 and 16).
constexpr int kNrhsBlocks[] = {2, 4, 8};
// How many of a stage's best configurations the chunk stage varies (the other later stages vary the
// best one only), and how many stage-1 shapes a seeded case takes over: posv's are kernels of their
// own (compiled), the chunked layout's are the interleaved kernels (only timed).
constexpr int kTopForNextStage = 2;
constexpr int kSeedShapesPosv = 4;
// In a full search, the tensor_cores stage times this many of the case's best staged shapes again on
// the tensor cores, rather than every staged shape: over d potrf and posv n = 48..128 (162 cases),
// the best of the 4 best staged shapes (ranked in runs 19-26, H200) on the tensor cores was within
// 0.3% of the best of all of them (run 40, H100) in 90% of the cases and 16% at worst (2: 6% and
// 34%; 3: 1% and 16%). --revisit, which has no staged ranking, still times every staged shape.
constexpr int kTensorCoreFromStaged = 4;
constexpr int kSeedShapesChunked = 6;

// ---- measured pruning: the default search leaves out what earlier full searches never picked ------
// The rules below cut the compile work of a full s and d sweep, which bounds its time (see the tuning
// README). Their evidence is every timed candidate of runs 3-43 (H200 and H100, batch 16384, logs in
// results/2026-11-25-h100-5787a87-autotune-runs-1-43), recomputed by prune_evidence.py: "loss" is the
// best time a rule keeps over the best time of the candidates it was chosen from, per case and run. --exhaustive
// turns every rule off (the report's figures of the whole space, or a GPU unlike sm_90).
//
// Interleaved potrf/posv above n = 12: the kInterleavedLargestTiles largest tiles that fit in
// registers, looking top and left, right-looking at the largest tile only (111 cases per precision,
// n = 13..128: loss 1.000 in all; right-looking won no case above n = 2). Below, up to 50 small
// kernels per n; n = 3..12 would lose up to 2.6%.
constexpr int kInterleavedPrunedAboveN = 12;
constexpr int kInterleavedLargestTiles = 3;
// Interleaved potrs above n = 24: tiles of at least 7 (s: loss 1.000 in 86 of 86 cases; d: 85, one
// case 5.7% slower). Up to n = 24 the unrolled small tiles win (from n = 13: up to 23% lost).
constexpr int kSolvePrunedAboveN = 24;
constexpr int kSolvePrunedMinTile = 7;
// Column-major register kernels: at most 8 threads per row and 4 rows per thread (potrf 121 cases
// per precision, posv 64 s and 75 d: loss 1.000 in all).
constexpr int kColumnMajorPrunedMaxThreadsPerRow = 8;
constexpr int kColumnMajorPrunedMaxRowsPerThread = 4;
// Staged kernels: at most 4 warps per block (staged potrf 367 cases: at worst 1.1% slower; posv 226:
// 2.4%; potrs 270: one case 3.8%, the rest within 3%; tensor cores 200: 0.3%).
constexpr int kStagedPrunedMaxWarps = 4;
// posv's staged stage times potrf's 4 best staged shapes of the same n (210 cases: the best of them
// within 2.6% of posv's own best, equal in 90%), as its stage 1 starts from potrf's shapes.
constexpr int kSeedStagedPosv = 4;
// Cooperative kernels (warps per 32 matrices x tile, coop_candidates): the shapes left out, by routine
// and n (kAnyCoop: every warp count or tile).
//   potrf, tile 4: its best in 0 of 495 cases; within 2% of the best in none.
//   posv, tile 4: 301 cases of runs 3-42, whose posv cooperative stage was always searched whole,
//     loss at most 1.005; in run 42 292 kernels and 2.1% of the sweep's NVRTC time.
//   posv at n = 17..64, tile 8: 253 cases of runs 3-43, loss 1.000 but one (run 15, s chunked n = 32:
//     1.019); run 43: 3.9% of the NVRTC time. Above n = 64 tile 8 still won (up to 8% lost without).
//   potrs above n = 32, 2 warps: 644 cases, loss 1.000; run 43: 2.3%.
//   potrf at n = 17..32, 8 warps: 242 cases, loss 1.000; run 43: 0.6%. Above n = 32 8 warps won
//     cases (up to 25% lost without).
constexpr int kAnyCoop = -1;
constexpr int kEveryLargerN = std::numeric_limits<int>::max();
struct CoopPruned {
    Routine routine;
    int min_n, max_n;
    int warps, nb;
};
constexpr CoopPruned kCoopPruned[] = {
    {Routine::potrf, 1, kEveryLargerN, kAnyCoop, 4}, {Routine::posv, 1, kEveryLargerN, kAnyCoop, 4},
    {Routine::posv, 17, 64, kAnyCoop, 8},             {Routine::potrs, 33, kEveryLargerN, 2, kAnyCoop},
    {Routine::potrf, 17, 32, 8, kAnyCoop},
};
bool coop_pruned(Routine r, int n, int warps, int nb);

// Column-major staged kernels: panels wider than 16 only up to n = 32 (kStagedWideMaxN allows 48;
// potrf and posv search staged kernels from n = 33, kColumnMajorStagedMinN): at n = 33..48 a panel of
// 32 was the best in none of 114 cases (loss 1.000); run 43: 40 kernels of 12 s each, 2.8%.
constexpr int kStagedWidePrunedMaxN = 32;
// Column-major potrf/posv above n = 64: the staged kernels only (stages staged and tensor_cores; no
// register kernels, so no shape, unroll, threads or through stage). In runs 3-42 above n = 64 a
// staged kernel was the case's best in all 164 s and 181 d cases that timed both kinds
// (prune_evidence.py; runs that timed only staged kernels there cannot judge the rule); the best
// register kernel was at least 1.08x slower (median 1.5x), the through-interleaved route at least
// 1.075x. At n = 57..64 register kernels still won 5 of 56 cases. The stages left out took 11% of
// run 42's NVRTC time (677 kernels: the column-major register kernels compile slowest).
constexpr int kColumnMajorRegisterMaxN = 64;
// ... and up to n = 32 the register kernels only (no staged or tensor_cores stage): a register
// kernel was the case's best in all 157 s and 155 d cases of runs 3-42 (prune_evidence.py), the
// best staged one at least 1.12x slower where fully timed (median 1.5x; most were dropped after one
// sample as 1.5x slower than the best, kPruneFactor). The stages left out took 5% of
// run 42's NVRTC time (752 kernels).
constexpr int kColumnMajorStagedMinN = 33;
// Interleaved and chunked posv above n = 64: the two-kernel form only (the split stage: potrf's and
// potrs's winners of the case, nothing compiled), no fused kernel. In run 43 (H100, the first with
// the split stage) two kernels were the best in all 32 s and 32 d anchor cases above n = 64, where
// both were timed (prune_evidence.py), the best fused kernel 1.006-1.24x slower (the 96 + 96 sizes
// between anchors took two-kernel winners from their anchors); at n = 49..64 they won 48 of 128
// cases, at n <= 48 none. The fused search above n = 64 took 8.7% of run 43's NVRTC time.
// That evidence predates the fused cooperative kernel's folded forward substitution (2f7dcc4, posv
// 0.81-0.96x its earlier time at n = 24..64) and is from batch 16384: at batch 100000 (run 46, H200,
// --revisit-stages split) the recorded fused winners beat two kernels in 104 of 128 s cases above
// n = 64. To be judged again with an --exhaustive posv search above n = 64 at batch 16384.
constexpr int kPosvSplitOnlyAboveN = 64;
// Interleaved and chunked potrs and posv above n = 32 (posv up to kPosvSplitOnlyAboveN): the
// cooperative kernels only (stages coop and grid, posv then split), no one-thread kernels. Above
// n = 32 a one-thread kernel was never a case's best where a search timed both kinds (runs 3-43,
// prune_evidence.py): potrs 508 cases, posv 72. The cooperative stage then starts the case and, in
// the chunked layout, times every chunk size (a run-time argument: nothing more to compile) instead
// of taking the one-thread winner's. The stages left out took 3.9% of run 43's NVRTC time.
constexpr int kCoopOnlyAboveN = 32;
// Fill sizes: above n = 32 only every kFillStep-th n (the anchors) gets the full search; a size in
// between times the winners of the anchors each side (column-major: then the through stage),
// compiled for its own n. Over the 1296 cases between anchors of 4 above n = 32 of sm90.json before
// run 42 (full searches; logs/table-before-run42.json.xz of results/2026-11-25-h100-5787a87-autotune-runs-1-43),
// the anchors' winners hold the case's winner in 851; where the logs timed them at that n (900 cases),
// they were within 5% of the winner in all but 5 (worst 1.17x). The runners-up as well would hold it
// in 977 (18 of 1019 judged over 5%, worst 1.48x) for 2.5 distinct configurations per case instead
// of 1.6: too little for the compilations, which bound a sweep (run 42: compile-bound, 497 of 521 s
// waiting). The sizes in between then compile 1-2 kernels instead of 20-60.
constexpr int kFillAboveN = 32;
constexpr int kFillStep = 4;

// ---- candidate lists ------------------------------------------------------------------------------

// Tile sizes n, ceil(n/2), ceil(n/3), ..., 1 (distinct values, largest first), as in §VII.
std::vector<int> tile_sizes(int n);
// Registers of the values an interleaved kernel keeps live, as the library estimates them.
int estimated_registers(Routine r, Precision p, int n, int nb, int nrhs_block);
// Stage 1 of the interleaved kernels: tile size x looking order x unrolling, at kStage1ThreadsPerBlock
// (pruned: see kInterleavedPrunedAboveN and kSolvePrunedAboveN).
std::vector<CholeskyConfig> interleaved_shapes(Routine r, Precision p, int n, bool exhaustive);
int column_major_default_chunk(Precision p);
// Stage 1 of the column-major factorisations: thread shapes, blocked elimination.
std::vector<CholeskyConfig> column_major_shapes(Precision p, int n, bool exhaustive);
std::vector<CholeskyConfig> column_major_solve_shapes();

// Cooperative potrf/potrs/posv candidates (interleaved layouts): warps per 32 matrices x tile size
// (0: the kernel's default; posv: potrf's, for both phases), at the chunk size of `best`. posv also
// at a looser register cap: its fused kernel holds the values of both phases and spills at the 128
// registers the cooperative kernels are compiled for (H200, d n = 128, 4 warps: 336 B of local
// memory); 168 removes most of that and still keeps 3 blocks of 4 warps per SM.
constexpr int kCoopWarps[] = {2, 4, 8};
constexpr int kCoopTileSizes[] = {0, 4, 6, 8};
constexpr int kCoopPosvRegisterCaps[] = {0, 168};
// Measured pruning: above n = 32 posv's cooperative kernels only at the cap of 168. Without the
// uncapped ones (and grid caps built on them), the best of a case's whole search was the same in the
// 48 s cases of runs 41-42 above n = 32 and at most 0.6% slower in the 48 d cases
// (prune_evidence.py); at n <= 32 it would lose up to 3.7% (s) and 6.5% (d). Half of the stage's
// kernels; the stage took 19% of run 42's NVRTC time above n = 36.
constexpr int kCoopPosvUncappedMaxN = 32;
std::vector<CholeskyConfig> coop_candidates(Routine routine, int n, const CholeskyConfig& best, bool exhaustive);

// Grid caps of the cooperative winner (config.grid_blocks_per_sm): fewer groups of 32 systems in
// flight, so that what a group reads first is still in L2 when it reads it again. The kernel is the
// same at every cap, so the stage costs no compilation. Only caps that bind at the tuning batch
// (cap x SMs < groups of 32): a cap that does not is the uncapped launch here, so its timing says
// nothing, yet it would bind at a larger batch (run 14 recorded such caps from timing noise and
// they cost up to 1.8x at batch 100000).
constexpr int kGridBlocksPerSm[] = {1, 2, 3, 4, 6, 8};
std::vector<CholeskyConfig> grid_candidates(const CholeskyConfig& best, int batch, int sm_count);

// Column-major, "staged" stage: the matrix staged in shared memory (CholeskyConfig::staged; posv also
// solves there, potrs only solves there).
// Panel widths, warps per matrix and matrices per block; a block stays within kStagedMaxWarps warps
// and the shared memory one block may have (the shape check refuses the rest anyway; this only
// saves their compilations). Wider panels than 16 only for small n, where one panel is the matrix.
constexpr int kStagedPanels[] = {8, 16, 32};
constexpr int kStagedWideMaxN = 48;
constexpr int kStagedWarps[] = {1, 2, 4};
constexpr int kStagedMatrices[] = {1, 2, 4, 8};
constexpr int kStagedMaxWarps = 8;
constexpr double kStagedMaxSharedBytes = double(limits::max_shared_bytes_per_block);  // sm_90's 227 KB
std::vector<CholeskyConfig> staged_candidates(const CaseKey& k, bool exhaustive);
// Column-major potrf and posv in double precision, "tensor_cores" stage: the staged candidates again
// with the trailing update on the FP64 tensor cores (CholeskyConfig::tensor_cores); none elsewhere.
std::vector<CholeskyConfig> tensor_core_candidates(const CaseKey& k, bool exhaustive);

// Column-major potrf and posv, "fused" stage: chunks of matrices transposed into shared memory and
// factored there by the one-thread interleaved kernels (codegen/cholesky/fused.hpp, CholeskyConfig::
// staged with warps_per_matrix = 0), up to n = kFusedMaxN (beyond, a block's squares leave too few
// matrices per SM): the interleaved stage-1 shapes of the same routine (their best kFusedTiles tile
// orders by the pruning, all with --exhaustive) and the library default (nb = 0), at kFusedMatrices
// matrices per block within a block's shared memory.
constexpr int kFusedMaxN = 32;
constexpr int kFusedTiles = 4;
constexpr int kFusedMatrices[] = {16, 32, 64};
std::vector<CholeskyConfig> fused_candidates(const CaseKey& k, bool exhaustive);
// Column-major potrf and posv, "warp_steps" stage (n <= kFusedMaxN): the kTopForNextStage best
// register shapes so far again with looking = left (their steps synchronised per warp), where a
// matrix's threads divide a warp.
std::vector<CholeskyConfig> warp_step_candidates(const CaseKey& k, const std::vector<CholeskyConfig>& ranked);

// Column-major, "shared_memory" stage (issue 29): whole matrices in shared memory
// (codegen/cholesky/shared_memory.hpp, CholeskyConfig::staged with looking = left). Not measured yet:
// the space spans the reasoned default's neighbourhood. Panels of 8 and 16 (s, c) or 4, 8 and 16 (d, z);
// warps per matrix 1..16, at most one per 8 rows (n = 128: 16); matrices per block 1..8 within
// kSharedMemoryMaxWarps warps per block and a block's shared memory; the update's register tile 4
// (2 up to n = 16). --exhaustive: panels 4, 8, 16, 32 and tiles 1, 2, 3, 4, 6, 8. potrs: shapes only.
constexpr int kSharedMemoryPanelsSingle[] = {8, 16};
constexpr int kSharedMemoryPanelsWide[] = {4, 8, 16};
constexpr int kSharedMemoryPanelsExhaustive[] = {4, 8, 16, 32};
constexpr int kSharedMemoryWarps[] = {1, 2, 4, 8, 16};
constexpr int kSharedMemoryMatrices[] = {1, 2, 4, 8};
constexpr int kSharedMemoryTilesExhaustive[] = {1, 2, 3, 4, 6, 8};
// The register tile the pruned search times above n = 16: the library's default for the family (its
// generator's shared_memory_default_tile, 4: 10 multiply-adds per 8 shared loads at 16 accumulators).
constexpr int kSharedMemoryDefaultTile = 4;
constexpr int kSharedMemoryMaxWarps = 16;
constexpr int kSharedMemoryRowsPerWarp = 8;
std::vector<CholeskyConfig> shared_memory_candidates(const CaseKey& k, bool exhaustive);

// The anchors a size between anchors takes its candidates from (kFillStep), or none: a size that
// gets the full search itself (as does one whose two anchors are not both tuned in the run or resumed).
std::vector<int> fill_anchors(int n, bool exhaustive);

}  // namespace batchsolve::autotune
