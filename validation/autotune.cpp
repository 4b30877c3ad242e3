// autotune: times the kernel configurations of the batched Cholesky routines (tile size, looking
// order, unrolling, thread shape, block size, chunk size) on the GPU and writes the fastest one per
// routine, precision, layout family and n to a tuning table (libsolver/tuning/sm<arch>.json).
//
// How a full sweep fits a GPU budget of minutes (see libsolver/tuning/README.md):
//  * Candidates are compiled by NVRTC on --jobs host threads (batchsolve::prepare_kernel, each thread
//    with a Context of its own), in order of need and far ahead of the single timing thread, which
//    times whichever case has its kernels ready. Compilation is the bottleneck, so the search space
//    is pruned by hardware limits and by compile cost before anything is compiled.
//  * The search is staged (coordinate search): the kernel shape first, then block size, chunk size,
//    unrolling or (column-major potrs) the steps loaded ahead, around the best few. posv starts from
//    potrf's best shapes (its factorisation is potrf's code), the chunked layout from the plain
//    interleaved one's (the same kernels: the chunk size is a run-time argument).
//  * A candidate whose first timed run is far behind the best so far is not repeated.
//  * The matrices are generated once per (precision, n): kDistinctMatrices on the host, repeated on
//    the device to fill the batch, converted to each layout there.
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/tuning.hpp"
#include "bench.hpp"
#include "command_line.hpp"
#include "gpu.hpp"

#ifndef BATCHSOLVE_TESTER_COMMIT
#define BATCHSOLVE_TESTER_COMMIT "unknown"
#endif

namespace po = boost::program_options;
// Field order as written (the table reads like to_string(CholeskyConfig) and the schema).
using json = nlohmann::ordered_json;

namespace batchsolve::autotune {

// What the tester already defines: the routines, their operation counts, and the command line.
using validation::flops_per_matrix;
using validation::parse_int_list;
using validation::parse_list;
using validation::parse_routine;
using validation::quoted_command_line;
using validation::Routine;
using validation::to_string;
using validation::UsageError;
using validation::utc_now;
using validation::cuda_version_text;

namespace {

// ---- search-space limits and search policy --------------------------------------------------------
// Measured with NVRTC of CUDA 13.0 for sm_90 (one core): compile time is what bounds a sweep.

// A thread has at most 255 registers. Interleaved tiles whose live values (the library's estimate,
// estimated_registers below) exceed that spill heavily, run slowly and compile slowly (s, nb = 16:
// 7.5 s and 46 KB of spills); they are not compiled.
constexpr int kMaxRegistersPerThread = 255;
// Full unrolling of the interleaved kernels only for n <= 24 and at most 12 tiles per dimension. The
// library allows n <= 32, but there 20 of the 21 fully unrolled variants of n = 32 spill, each takes
// 2-10 s to compile (s and d alike), and the seed paper saw full unrolling pay off only up to n ~ 20.
constexpr int kInterleavedMaxFullUnrollN = 24;
constexpr int kInterleavedMaxFullUnrollTiles = 12;
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
constexpr int kColumnMajorMaxTileWords = 224;
constexpr int kColumnMajorMaxThreadsPerMatrix = 1024;
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
// results/autotune-h200), recomputed by validation/prune_evidence.py: "loss" is the best time a
// rule keeps over the best time of the candidates it was chosen from, per case and run. --exhaustive
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
bool coop_pruned(Routine r, int n, int warps, int nb) {
    for (const CoopPruned& p : kCoopPruned)
        if (p.routine == r && p.min_n <= n && n <= p.max_n && (p.warps == kAnyCoop || p.warps == warps) &&
            (p.nb == kAnyCoop || p.nb == nb))
            return true;
    return false;
}
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
// run 42 (full searches; results/autotune-h200/logs/table-before-run42.json.xz), the
// anchors' winners hold the case's winner in 851; where the logs timed them at that n (900 cases),
// they were within 5% of the winner in all but 5 (worst 1.17x). The runners-up as well would hold it
// in 977 (18 of 1019 judged over 5%, worst 1.48x) for 2.5 distinct configurations per case instead
// of 1.6: too little for the compilations, which bound a sweep (run 42: compile-bound, 497 of 521 s
// waiting). The sizes in between then compile 1-2 kernels instead of 20-60.
constexpr int kFillAboveN = 32;
constexpr int kFillStep = 4;
// A candidate whose first timed run takes longer than this times the best median so far is not
// timed again (its single sample is logged, flagged "pruned").
constexpr double kPruneFactor = 1.5;
// Distinct matrices generated per (precision, n), repeated to fill the batch: generation is O(n^3)
// per matrix on the host, and the kernels' speed does not depend on the values.
constexpr int kDistinctMatrices = 1024;
// Device memory the input sets may take, as a fraction of what is free.
constexpr double kDeviceMemoryShare = 0.8;
// (precision, n) groups whose inputs are resident at once: the next group's cases can run while the
// current one waits for compilation.
constexpr int kGroupsAhead = 2;
// Compile threads run at this nice value where SCHED_IDLE is refused, so that the timing thread keeps
// a core for its launches.
constexpr int kCompileNice = 10;
// Regions inside an input set start at multiples of this (cudaMalloc's own alignment).
constexpr std::size_t kRegionAlign = 256;
// Winners whose sanity check fails are replaced by the next best, at most this many times.
constexpr int kSanityTries = 3;
// SMs assumed by --dry-run (H100/H200 SXM), which has no GPU to ask.
constexpr int kDryRunSmCount = 132;
constexpr int kUsageError = 255;

// ---- small helpers --------------------------------------------------------------------------------

enum class Family { interleaved, chunked, column_major };

const char* to_string(Family f) {
    switch (f) {
        case Family::interleaved: return "interleaved";
        case Family::chunked: return "chunked";
        case Family::column_major: return "column_major";
    }
    return "?";
}
Family parse_family(const std::string& t) {
    if (t == "interleaved") return Family::interleaved;
    if (t == "chunked") return Family::chunked;
    if (t == "column_major") return Family::column_major;
    throw InvalidArgument("autotune", "layout", "'" + t + "' is not one of interleaved, chunked, column_major");
}
LayoutKind layout_of(Family f) {
    switch (f) {
        case Family::interleaved: return LayoutKind::interleaved;
        case Family::chunked: return LayoutKind::chunked_interleaved;
        case Family::column_major: return LayoutKind::column_major;
    }
    return LayoutKind::column_major;
}


double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }
std::size_t align_up(std::size_t bytes) { return (bytes + kRegionAlign - 1) / kRegionAlign * kRegionAlign; }

int words_per_element(Precision p) { return p == Precision::s ? 1 : p == Precision::z ? 4 : 2; }
std::size_t element_bytes(Precision p) { return std::size_t(4) * words_per_element(p); }

json config_json(const CholeskyConfig& c) { return json::parse(to_string(c)); }

// A configuration in a few words, for the progress lines (the log and the table have all fields).
std::string short_text(const CholeskyConfig& c, Family f, Routine r) {
    if (c.through_interleaved) {
        CholeskyConfig k = c;
        k.through_interleaved = false;
        return "through interleaved: " + short_text(k, Family::interleaved, r);
    }
    std::string t;
    if (f == Family::column_major && c.staged) {
        t = "staged, panel " + std::to_string(c.nb) + ", " + std::to_string(c.warps_per_matrix) + " warps x " +
            std::to_string(c.matrices_per_block) + " matrices per block" + (c.tensor_cores ? ", tensor cores" : "");
        return t;
    }
    if (f == Family::column_major) {
        if (r != Routine::potrs)
            t = "rows " + std::to_string(c.rows_per_thread) + " x threads " + std::to_string(c.threads_per_row) +
                ", chunk " + std::to_string(c.nb) + (c.full_unroll ? ", unrolled" : ", blocked") + ", ";
    } else {
        t = "nb " + std::to_string(c.nb) + (r == Routine::potrs ? "" : std::string(", ") + to_string(c.looking)) +
            (c.full_unroll ? ", unrolled" : ", partial") + ", ";
        if (f == Family::chunked) t += "chunk " + std::to_string(c.chunk_size) + ", ";
        if (c.warps_per_matrix > 0) t += "cooperative, " + std::to_string(c.warps_per_matrix) + " warps per 32 systems, ";
        if (c.grid_blocks_per_sm > 0) t += "grid " + std::to_string(c.grid_blocks_per_sm) + " blocks/SM, ";
    }
    t += std::to_string(c.threads_per_block) + " threads/block";
    if (r != Routine::potrf && c.nrhs_block > 1) t += ", nrhs_block " + std::to_string(c.nrhs_block);
    if (c.solve_warps_per_matrix > 0)
        t += "; then potrs: " + (c.solve_nb > 0 ? "nb " + std::to_string(c.solve_nb) : std::string("default nb")) +
             ", cooperative, " + std::to_string(c.solve_warps_per_matrix) + " warps";
    return t;
}

CholeskyConfig config_from_json(const json& j) { return parse_config(j.dump()); }

// ---- the search space -------------------------------------------------------------------------------

// Tile sizes n, ceil(n/2), ceil(n/3), ..., 1 (distinct values, largest first), as in §VII.
std::vector<int> tile_sizes(int n) {
    std::set<int, std::greater<int>> s;
    for (int k = 1; k <= n; ++k) s.insert(ceil_div(n, k));
    return {s.begin(), s.end()};
}

// Registers of the values an interleaved kernel keeps live, as the library estimates them
// (interleaved_codegen.hpp, estimated_tile_registers): potrf nb < n: nb(nb+1)/2 + nb + nb^2 + 2 nb
// elements, nb = n: n(n+1)/2 + n; potrs nb * nrhs_block + nb + nrhs_block; posv the larger.
int estimated_registers(Routine r, Precision p, int n, int nb, int nrhs_block) {
    int factor = nb * (nb + 1) / 2 + nb;
    if (nb < n) factor += nb * nb + 2 * nb;
    const int solve = nb * nrhs_block + nb + nrhs_block;
    const int live = r == Routine::potrf ? factor : r == Routine::potrs ? solve : std::max(factor, solve);
    return live * words_per_element(p);
}

// Stage 1 of the interleaved kernels: tile size x looking order x unrolling, at kStage1ThreadsPerBlock
// (pruned: see kInterleavedPrunedAboveN and kSolvePrunedAboveN).
std::vector<CholeskyConfig> interleaved_shapes(Routine r, Precision p, int n, bool exhaustive) {
    std::vector<int> tiles;  // largest first
    for (int nb : tile_sizes(n)) {
        if (r == Routine::potrs && nb > kMaxSolveTile) continue;
        if (estimated_registers(r, p, n, nb, 1) > kMaxRegistersPerThread) continue;
        if (!exhaustive && r == Routine::potrs && n > kSolvePrunedAboveN && nb < kSolvePrunedMinTile) continue;
        if (!exhaustive && r != Routine::potrs && n > kInterleavedPrunedAboveN &&
            int(tiles.size()) == kInterleavedLargestTiles)
            continue;
        tiles.push_back(nb);
    }
    std::vector<CholeskyConfig> out;
    for (int nb : tiles) {
        // One tile (nb = n) has no tile loops: every looking order and unrolling give the same code.
        std::vector<Looking> lookings = {Looking::top};
        if (r != Routine::potrs && nb < n) lookings = {Looking::top, Looking::left, Looking::right};
        if (!exhaustive && r != Routine::potrs && n > kInterleavedPrunedAboveN && nb != tiles.front())
            lookings.pop_back();  // right-looking
        std::vector<bool> unrolls = {false};
        if (nb < n && n <= kInterleavedMaxFullUnrollN && ceil_div(n, nb) <= kInterleavedMaxFullUnrollTiles)
            unrolls.push_back(true);
        for (Looking l : lookings)
            for (bool u : unrolls) {
                CholeskyConfig c;
                c.nb = nb, c.looking = l, c.full_unroll = u;
                c.threads_per_block = kStage1ThreadsPerBlock;
                c.nrhs_block = 1;
                out.push_back(c);
            }
    }
    return out;
}

int column_major_default_chunk(Precision p) { return p == Precision::s ? kColumnMajorChunkSingle : kColumnMajorChunkWide; }

// Stage 1 of the column-major factorisations: thread shapes, blocked elimination.
std::vector<CholeskyConfig> column_major_shapes(Precision p, int n, bool exhaustive) {
    std::vector<CholeskyConfig> out;
    const int words = words_per_element(p);
    for (int tc : kColumnMajorThreadsPerRow) {
        if (tc > 1 && tc > n) continue;
        if (!exhaustive && tc > kColumnMajorPrunedMaxThreadsPerRow) continue;
        for (int ra : kColumnMajorRowsPerThread) {
            if (ra > 1 && ra > n) continue;
            if (!exhaustive && ra > kColumnMajorPrunedMaxRowsPerThread) continue;
            if (ceil_div(n, ra) * tc > kColumnMajorMaxThreadsPerMatrix) continue;
            if (ra * ceil_div(n, tc) * words > kColumnMajorMaxTileWords) continue;
            CholeskyConfig c;
            c.nb = column_major_default_chunk(p);
            c.looking = Looking::right;  // the only order these kernels have
            c.full_unroll = false;
            c.threads_per_block = kColumnMajorStage1ThreadsPerBlock;
            c.rows_per_thread = ra, c.threads_per_row = tc;
            c.nrhs_block = 1;
            out.push_back(c);
        }
    }
    return out;
}

std::vector<CholeskyConfig> column_major_solve_shapes() {
    std::vector<CholeskyConfig> out;
    for (int t : kColumnMajorSolveThreadsPerBlock) {
        CholeskyConfig c;
        c.looking = Looking::right;
        c.threads_per_block = t;
        c.nrhs_block = 1;
        out.push_back(c);
    }
    return out;
}

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
std::vector<CholeskyConfig> coop_candidates(Routine routine, int n, const CholeskyConfig& best, bool exhaustive) {
    std::vector<CholeskyConfig> out;
    for (int cap : kCoopPosvRegisterCaps) {
        if (cap != 0 && routine != Routine::posv) continue;
        if (cap == 0 && routine == Routine::posv && !exhaustive && n > kCoopPosvUncappedMaxN) continue;
        for (int w : kCoopWarps)
            for (int nb : kCoopTileSizes) {
                if (!exhaustive && coop_pruned(routine, n, w, nb)) continue;
                CholeskyConfig c;
                c.warps_per_matrix = w, c.nb = nb;
                c.threads_per_block = 32 * w;
                c.chunk_size = best.chunk_size;
                c.nrhs_block = 1;
                c.max_registers = cap;
                out.push_back(c);
            }
    }
    return out;
}

// Grid caps of the cooperative winner (config.grid_blocks_per_sm): fewer groups of 32 systems in
// flight, so that what a group reads first is still in L2 when it reads it again. The kernel is the
// same at every cap, so the stage costs no compilation. Only caps that bind at the tuning batch
// (cap x SMs < groups of 32): a cap that does not is the uncapped launch here, so its timing says
// nothing, yet it would bind at a larger batch (run 14 recorded such caps from timing noise and
// they cost up to 1.8x at batch 100000).
constexpr int kGridBlocksPerSm[] = {1, 2, 3, 4, 6, 8};
std::vector<CholeskyConfig> grid_candidates(const CholeskyConfig& best, int batch, int sm_count) {
    std::vector<CholeskyConfig> out;
    if (best.warps_per_matrix == 0) return out;  // one thread per system: one block per 32 systems
    const long long groups = ceil_div(batch, 32);
    for (int g : kGridBlocksPerSm) {
        if (static_cast<long long>(g) * sm_count >= groups) continue;
        CholeskyConfig c = best;
        c.grid_blocks_per_sm = g;
        out.push_back(c);
    }
    return out;
}

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
constexpr double kStagedMaxSharedBytes = 232448;  // 227 KB, sm_90's opt-in limit per block

// Every stage added after the first sweeps, which --revisit can run on finished cases.
const std::vector<std::string> kRevisitStages = {"through", "coop", "grid", "staged", "tensor_cores", "split"};

// The stages --revisit runs on a finished case: those of kRevisitStages that apply to its routine and
// family and are named in `wanted` (--revisit-stages).
std::vector<std::string> revisit_stages(Routine r, Family f, const std::vector<std::string>& wanted) {
    std::vector<std::string> apply;
    if (f == Family::column_major) apply = {"through", "staged", "tensor_cores"};
    else apply = {"coop", "grid"};  // potrf, potrs and posv all have cooperative kernels
    if (f != Family::column_major && r == Routine::posv) apply.push_back("split");
    std::vector<std::string> out;
    for (const std::string& s : apply)
        if (std::find(wanted.begin(), wanted.end(), s) != wanted.end()) out.push_back(s);
    return out;
}

// Stages that --skip-stages may leave out: never the first of a plan (stage 1 builds on nothing).
// Leaving out coop also leaves out cooperative_only, whose plan starts with it.
const std::vector<std::string> kSkippableStages = {"unroll", "chunk",        "prefetch",   "through", "coop", "grid",
                                                   "staged", "tensor_cores", "nrhs_block", "split"};

// "a,b,c"
std::string joined(const std::vector<std::string>& items, const char* separator = ",") {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
    return out;
}

// A plan without the stages of `skip`.
std::vector<std::string> without(std::vector<std::string> plan, const std::vector<std::string>& skip) {
    plan.erase(std::remove_if(plan.begin(), plan.end(),
                              [&](const std::string& s) { return std::find(skip.begin(), skip.end(), s) != skip.end(); }),
               plan.end());
    return plan;
}

// The stages of a case, in order.
std::vector<std::string> stage_plan(Routine r, Family f, int nrhs) {
    std::vector<std::string> plan;
    // "through": the interleaved family's winners run through a converted workspace (last, since
    // it needs the interleaved case of the same size finished).
    // "prefetch": how many steps of a substitution the register potrs loads ahead (config.nb).
    if (f == Family::column_major && r == Routine::potrs) plan = {"threads", "prefetch", "through", "staged"};
    // "tensor_cores": the staged kernels with their trailing update on the FP64 tensor cores (d only).
    else if (f == Family::column_major) plan = {"shape", "unroll", "threads", "through", "staged", "tensor_cores"};
    else if (f == Family::chunked) plan = {"shape", "chunk", "threads"};
    else plan = {"shape", "threads"};
    // "coop": the cooperative kernels (several warps per 32 matrices) next to the one-thread ones.
    if (f != Family::column_major) plan.insert(plan.end(), {"coop", "grid"});
    // "split": posv as potrf's and potrs's winners of the same case, two kernels (split_candidates).
    if (f != Family::column_major && r == Routine::posv) plan.push_back("split");
    if (r != Routine::potrf && nrhs > 1) plan.push_back("nrhs_block");
    return plan;
}

// Column-major potrf/posv of order n: only staged kernels are searched (kColumnMajorRegisterMaxN)
// or none (kColumnMajorStagedMinN), unless exhaustive.
bool column_major_staged_only(Routine r, Family f, int n, bool exhaustive) {
    return !exhaustive && f == Family::column_major && r != Routine::potrs && n > kColumnMajorRegisterMaxN;
}
bool column_major_without_staged(Routine r, Family f, int n, bool exhaustive) {
    return !exhaustive && f == Family::column_major && r != Routine::potrs && n < kColumnMajorStagedMinN;
}
// Interleaved/chunked posv of order n: only the split stage is searched (kPosvSplitOnlyAboveN).
bool posv_split_only(Routine r, Family f, int n, bool exhaustive) {
    return !exhaustive && f != Family::column_major && r == Routine::posv && n > kPosvSplitOnlyAboveN;
}
// Interleaved/chunked potrs and posv of order n: only cooperative kernels (kCoopOnlyAboveN).
bool cooperative_only(Routine r, Family f, int n, bool exhaustive) {
    return !exhaustive && f != Family::column_major && r != Routine::potrf && n > kCoopOnlyAboveN;
}

// The stages of a full search of case (r, f, n): stage_plan less --skip-stages, and less the stages
// the four rules above leave out (--skip-stages staged keeps the register stages at every n, so that
// a plan always has a first stage).
std::vector<std::string> search_plan(Routine r, Family f, int n, int nrhs, bool exhaustive,
                                     const std::vector<std::string>& skip) {
    const std::vector<std::string> plan = without(stage_plan(r, f, nrhs), skip);
    const auto has = [&](const char* stage) { return std::find(plan.begin(), plan.end(), stage) != plan.end(); };
    if (column_major_staged_only(r, f, n, exhaustive) && has("staged"))
        return without(plan, {"shape", "unroll", "threads", "through"});
    if (column_major_without_staged(r, f, n, exhaustive)) return without(plan, {"staged", "tensor_cores"});
    if (posv_split_only(r, f, n, exhaustive) && has("split")) return without(plan, {"shape", "chunk", "threads", "coop", "grid"});
    if (cooperative_only(r, f, n, exhaustive) && has("coop")) return without(plan, {"shape", "chunk", "threads"});
    return plan;
}

// --candidates-from: the table's winners only (column-major: and the interleaved winners of this run
// through a converted workspace, as in the full search, where it searches them; --skip-stages
// through leaves them out).
// Interleaved posv also times its split stage: the two-kernel form from this run's potrf and potrs
// winners of the same n (kernels they compiled already).
std::vector<std::string> known_plan(Routine r, Family f, int n, bool exhaustive) {
    if (f != Family::column_major) return r == Routine::posv ? std::vector<std::string>{"known", "split"}
                                                             : std::vector<std::string>{"known"};
    if (column_major_staged_only(r, f, n, exhaustive)) return {"known"};
    return {"known", "through"};
}

struct CaseKey {
    Routine routine = Routine::potrf;
    Precision precision = Precision::s;
    Family family = Family::interleaved;
    int n = 0;
    std::string text() const {
        return std::string(to_string(routine)) + " " + precision_letter(precision) + " " + to_string(family) + " n=" +
               std::to_string(n);
    }
    bool operator<(const CaseKey& o) const {
        return std::make_tuple(int(routine), int(precision), int(family), n) <
               std::make_tuple(int(o.routine), int(o.precision), int(o.family), o.n);
    }
};

std::vector<CholeskyConfig> staged_candidates(const CaseKey& k, bool exhaustive) {
    std::vector<CholeskyConfig> out;
    if (k.family != Family::column_major) return out;
    const double element = double(element_bytes(k.precision));
    // potrs has no panels (nb is not read): one pass with nb = 0
    const std::vector<int> panels = k.routine == Routine::potrs
                                        ? std::vector<int>{0}
                                        : std::vector<int>(std::begin(kStagedPanels), std::end(kStagedPanels));
    for (int nb : panels) {
        if (nb > 16 && k.n > (exhaustive ? kStagedWideMaxN : kStagedWidePrunedMaxN)) continue;
        if (nb > k.n && nb != kStagedPanels[0]) continue;  // a panel wider than n: the same kernel as nb = n
        for (int w : kStagedWarps) {
            if (w > 1 && 32 * (w - 1) >= k.n) continue;  // warps with no row of the panel to solve
            for (int m : kStagedMatrices) {
                if (w * m > (exhaustive ? kStagedMaxWarps : kStagedPrunedMaxWarps)) continue;
                if (m * (k.n * (k.n + 1) / 2.0 + 1) * element > kStagedMaxSharedBytes) continue;
                CholeskyConfig c;
                c.staged = true, c.nb = nb, c.warps_per_matrix = w, c.matrices_per_block = m;
                out.push_back(c);
            }
        }
    }
    return out;
}

// Column-major potrf and posv in double precision, "tensor_cores" stage: the staged candidates again
// with the trailing update on the FP64 tensor cores (CholeskyConfig::tensor_cores); none elsewhere.
std::vector<CholeskyConfig> tensor_core_candidates(const CaseKey& k, bool exhaustive) {
    std::vector<CholeskyConfig> out;
    if (k.routine == Routine::potrs || k.precision != Precision::d) return out;
    for (CholeskyConfig c : staged_candidates(k, exhaustive)) {
        c.tensor_cores = true;
        out.push_back(c);
    }
    return out;
}

// A plan whose first stage is the cooperative one (cooperative_only) takes no seeds: they are
// one-thread kernel shapes. It still waits for its seed source's stage 1: a chunked case's
// cooperative kernels are its interleaved source's (the chunk is a run-time argument), and queued
// beside them they would be compiled twice at once.
bool takes_no_seeds(const std::vector<std::string>& plan) { return !plan.empty() && plan[0] == "coop"; }

// Whose stage-1 ranking seeds a case: posv from potrf (same family; chunked from interleaved
// first), chunked from interleaved (same routine). None for the rest.
std::optional<CaseKey> seed_source(const CaseKey& k) {
    CaseKey s = k;
    if (k.family == Family::chunked) {
        s.family = Family::interleaved;
        return s;
    }
    if (k.routine == Routine::posv) {
        s.routine = Routine::potrf;
        return s;
    }
    return std::nullopt;
}

// Stage-1 candidates of a case whose plan starts with `first`: the full list, or the seeds (a posv
// case keeps potrf's shapes, or above kColumnMajorRegisterMaxN its staged shapes; a chunked case
// gets the stage-1 chunk size). A cooperative first stage (cooperative_only) takes no seeds and, in
// the chunked layout, times its shapes at every chunk size.
std::vector<CholeskyConfig> stage1_candidates(const CaseKey& k, const std::string& first,
                                              const std::vector<CholeskyConfig>* seeds, bool exhaustive) {
    std::vector<CholeskyConfig> list;
    if (first == "coop") {
        const std::vector<int> chunks = k.family == Family::chunked ? std::vector<int>(std::begin(kChunkSizes), std::end(kChunkSizes))
                                                                    : std::vector<int>{0};
        for (int chunk : chunks) {
            CholeskyConfig at;
            at.chunk_size = chunk;
            for (const CholeskyConfig& c : coop_candidates(k.routine, k.n, at, exhaustive)) list.push_back(c);
        }
        return list;
    }
    if (seeds != nullptr && !seeds->empty()) {
        const std::size_t take = k.family == Family::chunked ? kSeedShapesChunked : kSeedShapesPosv;
        list.assign(seeds->begin(), seeds->begin() + std::min(take, seeds->size()));
    } else if (first == "staged") {
        list = staged_candidates(k, exhaustive);
    } else if (k.family == Family::column_major) {
        list = k.routine == Routine::potrs ? column_major_solve_shapes() : column_major_shapes(k.precision, k.n, exhaustive);
    } else {
        list = interleaved_shapes(k.routine, k.precision, k.n, exhaustive);
    }
    for (CholeskyConfig& c : list) {
        c.chunk_size = k.family == Family::chunked ? kStage1Chunk : 0;
        c.nrhs_block = 1;
    }
    return list;
}

// ---- compilation: a pool of host threads calling prepare_kernel -----------------------------------

struct CompileRequest {
    Routine routine = Routine::potrf;
    Precision precision = Precision::s;
    LayoutKind layout = LayoutKind::interleaved;
    int n = 0, count = 0, chunk = 0, nrhs = 0;
    CholeskyConfig config;
    std::string key() const {
        return std::string(to_string(routine)) + "|" + precision_letter(precision) + "|" + batchsolve::to_string(layout) +
               "|" + std::to_string(chunk) + "|" + std::to_string(n) + "|" + std::to_string(count) + "|" +
               std::to_string(nrhs) + "|" + batchsolve::to_string(config);
    }
};

struct CompileJob {
    CompileRequest request;
    bool taken = false;             // a worker has started it (under the pool's mutex)
    std::atomic<bool> done{false};  // report is valid
    KernelReport report;
    double wall_seconds = 0;
};

template <class T>
BatchView<T> make_view(LayoutKind layout, T* data, int rows, int cols, int count, int chunk) {
    switch (layout) {
        case LayoutKind::interleaved: return BatchView<T>::interleaved(data, rows, cols, count);
        case LayoutKind::chunked_interleaved: return BatchView<T>::chunked(data, rows, cols, count, chunk);
        default: return BatchView<T>::column_major(data, rows, cols, std::max(rows, 1), std::int64_t(rows) * cols, count);
    }
}

template <class T>
KernelReport prepare_typed(const CompileRequest& r, Context& ctx) {
    const BatchView<const T> shape = make_view<const T>(r.layout, nullptr, r.n, r.n, r.count, r.chunk);
    return prepare_kernel<T>(to_string(r.routine), Uplo::lower, shape, r.nrhs, r.config, ctx);
}

KernelReport prepare(const CompileRequest& r, Context& ctx) {
    switch (r.precision) {
        case Precision::s: return prepare_typed<float>(r, ctx);
        case Precision::d: return prepare_typed<double>(r, ctx);
        case Precision::c: return prepare_typed<std::complex<float>>(r, ctx);
        case Precision::z: return prepare_typed<std::complex<double>>(r, ctx);
    }
    throw Error("unknown precision");
}

class CompilePool {
public:
    CompilePool(int jobs, int device) {
        for (int i = 0; i < jobs; ++i) threads_.emplace_back([this, device] { worker(device); });
    }
    ~CompilePool() {
        {
            std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
        }
        work_cv_.notify_all();
        for (std::thread& t : threads_) t.join();
    }
    CompilePool(const CompilePool&) = delete;
    CompilePool& operator=(const CompilePool&) = delete;

    // The job for `r`, queued at `priority` (smaller runs first); an identical request shares one job
    // (and moves up when asked for with a better priority).
    std::shared_ptr<CompileJob> submit(const CompileRequest& r, long priority) {
        std::lock_guard<std::mutex> lock(m_);
        const std::string key = r.key();
        std::shared_ptr<CompileJob>& job = jobs_[key];
        if (job) {
            if (!job->taken && priority < best_priority_[key]) {
                best_priority_[key] = priority;
                queue_.push({priority, seq_++, job});
            }
            return job;
        }
        job = std::make_shared<CompileJob>();
        job->request = r;
        best_priority_[key] = priority;
        queue_.push({priority, seq_++, job});
        work_cv_.notify_one();
        return job;
    }

    // Returns when a job finished since the last call, or after `timeout`.
    void wait_for_progress(std::chrono::milliseconds timeout) {
        std::unique_lock<std::mutex> lock(m_);
        done_cv_.wait_for(lock, timeout, [&] { return completed_ != seen_ || !error_.empty(); });
        seen_ = completed_;
    }

    // Drops the queued jobs whose priority is above `keep` (they stay "not done" until submitted
    // again with a priority <= keep, which queues them anew).
    void cancel_above(long keep) {
        std::lock_guard<std::mutex> lock(m_);
        std::priority_queue<Entry> kept;
        for (; !queue_.empty(); queue_.pop())
            if (queue_.top().priority <= keep) kept.push(queue_.top());
        queue_ = std::move(kept);
    }

    // A worker that could not create its Context: the run cannot go on.
    std::string error() {
        std::lock_guard<std::mutex> lock(m_);
        return error_;
    }
    long compiled() const { return compiled_.load(); }
    double compile_seconds() const { return double(compile_microseconds_.load()) * 1e-6; }

private:
    struct Entry {
        long priority;
        long seq;
        std::shared_ptr<CompileJob> job;
        bool operator<(const Entry& o) const {  // std::priority_queue pops the largest
            return priority != o.priority ? priority > o.priority : seq > o.seq;
        }
    };

    void worker(int device) {
        // Below the timing thread: NVRTC on every core must not delay its kernel launches (a launch
        // that waits for a core shows up in the event timing). SCHED_IDLE yields to it at once; where
        // that is refused, a high nice value at least lowers the compile threads' share.
        sched_param idle{};
        if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) != 0)
            setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kCompileNice);
        std::unique_ptr<Context> ctx;
        try {
            ctx = std::make_unique<Context>(Backend::cuda, device);
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lock(m_);
            error_ = std::string("a compile thread could not create its CUDA context: ") + e.what();
            done_cv_.notify_all();
            return;
        }
        for (;;) {
            std::shared_ptr<CompileJob> job;
            {
                std::unique_lock<std::mutex> lock(m_);
                work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
                if (stop_) return;
                job = queue_.top().job;
                queue_.pop();
                if (job->taken) continue;
                job->taken = true;
            }
            const auto t0 = std::chrono::steady_clock::now();
            KernelReport report;
            try {
                report = prepare(job->request, *ctx);
            } catch (const std::exception& e) {
                report = KernelReport{};
                report.supported = false;
                report.note = std::string("prepare_kernel threw: ") + e.what();
            }
            job->report = std::move(report);
            job->wall_seconds = seconds_since(t0);
            {
                std::lock_guard<std::mutex> lock(m_);
                // A kernel that an earlier job compiled (the chunked layout's, or one a later stage
                // asks for again) reports that compilation's time again: counted once, by name.
                if (!job->report.from_disk_cache && job->report.compile_seconds > 0 &&
                    compiled_names_.insert(job->report.name).second) {
                    compiled_.fetch_add(1);
                    compile_microseconds_.fetch_add((long long)(job->report.compile_seconds * 1e6));
                }
                job->done.store(true);
                ++completed_;
            }
            done_cv_.notify_all();
        }
    }

    std::mutex m_;
    std::condition_variable work_cv_, done_cv_;
    std::priority_queue<Entry> queue_;
    std::map<std::string, std::shared_ptr<CompileJob>> jobs_;
    std::map<std::string, long> best_priority_;
    long seq_ = 0;
    std::uint64_t completed_ = 0, seen_ = 0;
    bool stop_ = false;
    std::string error_;
    std::atomic<long> compiled_{0};
    std::atomic<long long> compile_microseconds_{0};
    std::set<std::string> compiled_names_;  // guarded by m_
    std::vector<std::thread> threads_;
};

// ---- inputs -----------------------------------------------------------------------------------------

struct Options {
    std::vector<Routine> routines;
    std::vector<Precision> precisions;
    std::vector<Family> families;
    std::vector<int> ns;
    int batch = 16384;
    int nrhs = 1;
    int repeat = 5;
    int jobs = 1;
    int device = 0;
    double budget_s = 0;
    double cond = 1e3;
    std::uint64_t seed = 0;
    std::string output, log, resume, commit;
    bool dry_run = false;
    bool revisit = false;  // cases of --resume: time their winner against the stages added since (revisit_stages)
    std::vector<std::string> revisit_stages = kRevisitStages;  // --revisit-stages
    std::vector<std::string> skip_stages;                      // --skip-stages: left out of every plan
    std::string candidates_from;  // --candidates-from: a tuning table whose winners are a case's only candidates
    int neighbours = 1;           // --neighbours: also the winners of this many tuned sizes below and above n
    bool exhaustive = false;      // --exhaustive: none of the measured pruning (kInterleavedPrunedAboveN ...)
};

// The anchors a size between anchors takes its candidates from (kFillStep), or none: a size that
// gets the full search itself (as does one whose two anchors are not both tuned in the run or resumed).
std::vector<int> fill_anchors(int n, bool exhaustive) {
    if (exhaustive || n <= kFillAboveN || n % kFillStep == 0) return {};
    const int below = n - n % kFillStep;
    return {below, below + kFillStep};
}

// One (precision, n): the distinct matrices A, their factors L and right-hand sides B on the host
// (packed column-major bytes), then the whole batch of each on the device.
struct HostInputs {
    std::vector<std::byte> a, l, b;
    int distinct = 0;
};

template <class T>
std::vector<std::byte> as_bytes(const std::vector<T>& v) {
    std::vector<std::byte> out(v.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

template <class T>
HostInputs make_host_inputs_typed(int n, int nrhs, int distinct, double cond, std::uint64_t seed) {
    HostInputs h;
    h.distinct = distinct;
    std::vector<T> a = generate_spd_batch<T>(n, distinct, cond, seed);
    std::vector<T> l = a;
    {
        Context cpu(Backend::cpu);
        std::vector<int> info(distinct, -1);
        potrf_batched<T>(Uplo::lower, BatchView<T>::column_major(l.data(), n, n, distinct), info.data(), cpu);
        const auto bad = std::count_if(info.begin(), info.end(), [](int v) { return v != 0; });
        if (bad > 0)
            throw Error("the CPU reference could not factor " + std::to_string(bad) + " generated matrices of n = " +
                        std::to_string(n) + " (lower --cond)");
    }
    std::vector<T> b(std::size_t(distinct) * n * std::max(nrhs, 0));
    std::mt19937_64 engine(seed ^ 0x5bd1e995ull);
    std::uniform_real_distribution<double> u(-1, 1);
    for (T& v : b) {
        if constexpr (is_complex_v<T>) {
            const double re = u(engine);
            v = T(real_t<T>(re), real_t<T>(u(engine)));
        } else {
            v = T(u(engine));
        }
    }
    h.a = as_bytes(a), h.l = as_bytes(l), h.b = as_bytes(b);
    return h;
}

HostInputs make_host_inputs(Precision p, int n, int nrhs, int distinct, double cond, std::uint64_t seed) {
    switch (p) {
        case Precision::s: return make_host_inputs_typed<float>(n, nrhs, distinct, cond, seed);
        case Precision::d: return make_host_inputs_typed<double>(n, nrhs, distinct, cond, seed);
        case Precision::c: return make_host_inputs_typed<std::complex<float>>(n, nrhs, distinct, cond, seed);
        case Precision::z: return make_host_inputs_typed<std::complex<double>>(n, nrhs, distinct, cond, seed);
    }
    throw Error("unknown precision");
}

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {  // splitmix64 of a combination: independent seeds
    std::uint64_t z = a + 0x9e3779b97f4a7c15ull * (b + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Fills `total` bytes at `base` by repeating its first `unit` bytes (doubling device copies).
void replicate(std::byte* base, std::size_t unit, std::size_t total, void* stream) {
    for (std::size_t done = unit; done < total;) {
        const std::size_t k = std::min(done, total - done);
        validation::device_copy_async(base + done, base, k, stream);
        done += k;
    }
}

struct Group {
    Precision precision = Precision::s;
    int n = 0;
    std::uint64_t seed = 0;
    std::future<HostInputs> host;
    bool generating = false, resident = false, failed = false;
    // Which device copies the group's cases read: potrf and posv factor A, potrs solves with L. Each
    // is a whole batch (d n = 128 at batch 100000: 13.1 GB), so only those needed are made.
    bool needs_a = false, needs_l = false;
    int open_cases = 0;  // neither done nor skipped; the device copies are freed at 0
    std::string error;
    Buffer<std::byte> a, l, b;  // device, packed column-major, the whole batch
};

void make_resident(Group& g, const HostInputs& h, int batch, int nrhs, Context& ctx) {
    const std::size_t es = element_bytes(g.precision), n = std::size_t(g.n);
    auto put = [&](Buffer<std::byte>& dst, const std::vector<std::byte>& src, std::size_t per_matrix) {
        const std::size_t total = per_matrix * batch;
        dst = Buffer<std::byte>(ctx, std::max<std::size_t>(total, 1));
        const std::size_t unit = std::min(src.size(), total);
        if (unit == 0) return;
        validation::upload(dst.data(), src.data(), unit, ctx.stream());
        replicate(dst.data(), unit, total, ctx.stream());
    };
    if (g.needs_a) put(g.a, h.a, n * n * es);
    if (g.needs_l) put(g.l, h.l, n * n * es);
    put(g.b, h.b, n * std::size_t(nrhs) * es);
    ctx.synchronize();
    g.resident = true;
}

// ---- timing -----------------------------------------------------------------------------------------

struct Measured {
    CholeskyConfig config;
    std::string stage;
    bool supported = false;
    std::string note;      // why not supported / not timed
    std::string kernel;
    int registers = 0, local_bytes = 0;
    double compile_s = 0;
    bool timed = false, pruned = false;
    std::vector<double> samples_ms;
    double ms = 0, gflops = 0;
};

// Device memory the timing reuses: [pristine | set 0 | set 1 | ...] and the cache-flush buffer.
class Workspace {
public:
    std::byte* get(Context& ctx, std::size_t bytes) {
        if (buffer_.size() < bytes) {
            buffer_ = Buffer<std::byte>();  // free first: both may not fit
            buffer_ = Buffer<std::byte>(ctx, bytes);
        }
        return buffer_.data();
    }
    std::size_t size() const { return buffer_.size(); }
    void release() { buffer_ = Buffer<std::byte>(); }  // the next get() allocates again

private:
    Buffer<std::byte> buffer_;
};

// Times the candidates of one case: input sets in the case's layout, restored from a pristine copy
// and the L2 flushed outside the timed region, as the tester does.
template <class T>
class Bench {
public:
    Bench(const CaseKey& key, const Options& opt, Group& group, Workspace& ws, Buffer<std::byte>& flush, Context& ctx)
        : key_(key), opt_(opt), group_(group), ctx_(ctx), flush_(flush) {
        const std::size_t es = sizeof(T), n = std::size_t(key.n), count = std::size_t(opt.batch);
        nrhs_ = key.routine == Routine::potrf ? 0 : opt.nrhs;
        a_bytes_ = count * n * n * es;
        b_bytes_ = count * n * std::size_t(nrhs_) * es;
        info_bytes_ = key.routine == Routine::potrs ? 0 : count * sizeof(int);
        b_off_ = align_up(a_bytes_);
        info_off_ = b_off_ + align_up(b_bytes_);
        pitch_ = std::max(kRegionAlign, info_off_ + align_up(info_bytes_));
        // Enough sets that together they exceed the L2 twice (at least 2), at most --repeat, and what
        // fits in free memory next to the pristine copy.
        const std::size_t l2 = flush.size() / 2;
        std::size_t sets = std::max<std::size_t>(2, 2 * l2 / pitch_ + 1);
        sets = std::min<std::size_t>(sets, std::max(2, opt.repeat));
        const std::size_t have = ws.size();
        const double free_bytes = kDeviceMemoryShare * double(validation::gpu_free_bytes()) + double(have);
        while (sets > 1 && double(pitch_ * (sets + 1)) > free_bytes) --sets;
        if (double(pitch_ * (sets + 1)) > free_bytes)
            throw Error("not enough device memory for " + key.text() + " (" + std::to_string(pitch_ >> 20) +
                        " MiB per input set)");
        sets_ = int(sets);
        base_ = ws.get(ctx, pitch_ * (sets + 1));
    }

    int sets() const { return sets_; }

    // Builds the pristine image for `chunk` (chunked layout; ignored otherwise) and the sets.
    void prepare(int chunk) {
        if (prepared_ && (key_.family != Family::chunked || chunk == chunk_)) return;
        chunk_ = chunk;
        const LayoutKind layout = layout_of(key_.family);
        const Buffer<std::byte>& a_src = key_.routine == Routine::potrs ? group_.l : group_.a;
        auto put = [&](const Buffer<std::byte>& src, std::size_t off, std::size_t bytes, int cols) {
            if (bytes == 0) return;
            if (layout == LayoutKind::column_major) {
                validation::device_copy_async(base_ + off, src.data(), bytes, ctx_.stream());
                return;
            }
            const BatchView<const T> from = BatchView<const T>::column_major(reinterpret_cast<const T*>(src.data()),
                                                                             key_.n, cols, opt_.batch);
            convert_layout<T>(from, make_view<T>(layout, reinterpret_cast<T*>(base_ + off), key_.n, cols, opt_.batch, chunk),
                              ctx_);
        };
        put(a_src, 0, a_bytes_, key_.n);
        put(group_.b, b_off_, b_bytes_, nrhs_);
        if (info_bytes_ > 0) validation::device_fill_async(base_ + info_off_, 0xFF, info_bytes_, ctx_.stream());
        // The factor of potrs is never written: copied into every set once.
        if (key_.routine == Routine::potrs)
            for (int s = 0; s < sets_; ++s) validation::device_copy_async(set(s), base_, a_bytes_, ctx_.stream());
        ctx_.synchronize();
        prepared_ = true;
    }

    // Every set gets what the routine overwrites back from the pristine copy; then the L2 is flushed.
    void restore() {
        if (key_.routine == Routine::potrs) {
            for (int s = 0; s < sets_; ++s)
                validation::device_copy_async(set(s) + b_off_, base_ + b_off_, b_bytes_, ctx_.stream());
        } else {
            validation::device_copy_async(set(0), base_, pitch_, ctx_.stream());
            replicate(set(0), pitch_, pitch_ * sets_, ctx_.stream());
        }
        validation::device_fill_async(flush_.data(), 0, flush_.size(), ctx_.stream());
    }

    void call(const CholeskyConfig& config, int s) {
        const LayoutKind layout = layout_of(key_.family);
        const int chunk = key_.family == Family::chunked ? chunk_ : 0;
        const BatchView<T> a = make_view<T>(layout, reinterpret_cast<T*>(set(s)), key_.n, key_.n, opt_.batch, chunk);
        const BatchView<T> b = make_view<T>(layout, reinterpret_cast<T*>(set(s) + b_off_), key_.n, nrhs_, opt_.batch, chunk);
        int* info = reinterpret_cast<int*>(set(s) + info_off_);
        switch (key_.routine) {
            case Routine::potrf: potrf_batched<T>(Uplo::lower, a, info, config, ctx_); break;
            case Routine::potrs: potrs_batched<T>(Uplo::lower, BatchView<const T>(a), b, config, ctx_); break;
            case Routine::posv: posv_batched<T>(Uplo::lower, a, b, info, config, ctx_); break;
        }
    }

    // Warm-up, then --repeat timed calls (each on a fresh set), unless the first is already more than
    // kPruneFactor times `best_ms` behind.
    void time(Measured& m, double best_ms) {
        prepare(m.config.chunk_size);
        restore();
        call(m.config, 0);
        ctx_.synchronize();
        validation::EventTimer timer(ctx_.stream());
        while (int(m.samples_ms.size()) < opt_.repeat) {
            restore();
            for (int s = 0; s < sets_ && int(m.samples_ms.size()) < opt_.repeat; ++s) {
                timer.start();
                call(m.config, s);
                timer.stop();
                m.samples_ms.push_back(timer.elapsed_ms());
                if (m.samples_ms.size() == 1 && best_ms > 0 && m.samples_ms[0] > kPruneFactor * best_ms) {
                    m.pruned = true;
                    break;
                }
            }
            if (m.pruned) break;
        }
        std::vector<double> v = m.samples_ms;
        std::sort(v.begin(), v.end());
        const std::size_t k = v.size();
        m.ms = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
        m.timed = true;
    }

    // One more call on fresh inputs: every info 0 (potrf, posv), every solution entry finite (potrs,
    // posv). "" when it passes, else what failed.
    std::string sanity(const CholeskyConfig& config) {
        prepare(config.chunk_size);
        restore();
        call(config, 0);
        ctx_.synchronize();
        if (info_bytes_ > 0) {
            std::vector<int> info(std::size_t(opt_.batch));
            validation::download(info.data(), set(0) + info_off_, info_bytes_, ctx_.stream());
            const auto bad = std::count_if(info.begin(), info.end(), [](int v) { return v != 0; });
            if (bad > 0) return "info != 0 for " + std::to_string(bad) + " matrices";
        }
        if (b_bytes_ > 0) {
            std::vector<T> x(b_bytes_ / sizeof(T));
            validation::download(x.data(), set(0) + b_off_, b_bytes_, ctx_.stream());
            const auto bad = std::count_if(x.begin(), x.end(), [](const T& v) {
                if constexpr (is_complex_v<T>) return !std::isfinite(v.real()) || !std::isfinite(v.imag());
                else return !std::isfinite(v);
            });
            if (bad > 0) return std::to_string(bad) + " solution entries are not finite";
        }
        return "";
    }

private:
    std::byte* set(int s) const { return base_ + pitch_ * std::size_t(s + 1); }

    const CaseKey key_;
    const Options& opt_;
    Group& group_;
    Context& ctx_;
    Buffer<std::byte>& flush_;
    int nrhs_ = 0;
    std::size_t a_bytes_ = 0, b_bytes_ = 0, info_bytes_ = 0, b_off_ = 0, info_off_ = 0, pitch_ = 0;
    int sets_ = 1;
    std::byte* base_ = nullptr;
    int chunk_ = 0;
    bool prepared_ = false;
};

// ---- cases and their stages -------------------------------------------------------------------------

struct Winner {
    CholeskyConfig config;
    double ms = 0, gflops = 0;
};

// A finished case, as written to the table and to the --resume file.
struct Entry {
    CaseKey key;
    Winner best;
    std::optional<Winner> runner_up;
    int candidates = 0;
    std::vector<CholeskyConfig> stage1_top;  // seeds for posv / chunked after a resume
    std::vector<CholeskyConfig> staged_top;  // column-major potrf: seeds of posv's staged stage
    double seconds = 0;
};

// An entry's winner and runner-up (if any), fastest first.
std::vector<CholeskyConfig> winners_of(const Entry& e) {
    std::vector<CholeskyConfig> out = {e.best.config};
    if (e.runner_up) out.push_back(e.runner_up->config);
    return out;
}

json winner_json(const Winner& w) { return {{"config", config_json(w.config)}, {"gflops", w.gflops}, {"ms", w.ms}}; }

json entry_json(const Entry& e) {
    json j = {{"routine", to_string(e.key.routine)},
              {"precision", std::string(1, precision_letter(e.key.precision))},
              {"layout", to_string(e.key.family)},
              {"n", e.key.n},
              {"best", winner_json(e.best)},
              {"runner_up", e.runner_up ? winner_json(*e.runner_up) : json(nullptr)},
              {"candidates", e.candidates}};
    return j;
}

// ---- --candidates-from: the winners of another table as the only candidates ---------------------

// The winners (best, then runner-up) of every entry of a tuning table, by case. A table tuned at one
// batch size seeds a table for another (the search space is pruned to what won), and a table's
// neighbouring sizes seed the sizes it lacks.
std::map<CaseKey, std::vector<CholeskyConfig>> load_table_winners(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw Error("--candidates-from: cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    const json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("entries") || !j.at("entries").is_array())
        throw Error("--candidates-from " + path + ": not a tuning table (a JSON object with an \"entries\" array)");
    std::map<CaseKey, std::vector<CholeskyConfig>> out;
    int index = 0;
    for (const json& e : j.at("entries")) {
        try {
            CaseKey k;
            k.routine = parse_routine(e.at("routine").get<std::string>());
            k.precision = parse_precision(e.at("precision").get<std::string>());
            k.family = parse_family(e.at("layout").get<std::string>());
            k.n = e.at("n").get<int>();
            std::vector<CholeskyConfig>& list = out[k];
            list.push_back(config_from_json(e.at("best").at("config")));
            if (e.contains("runner_up") && !e.at("runner_up").is_null())
                list.push_back(config_from_json(e.at("runner_up").at("config")));
        } catch (const std::exception& x) {
            throw Error("--candidates-from " + path + ": entry " + std::to_string(index) + ": " + x.what());
        }
        ++index;
    }
    return out;
}

// Candidates of a case under --candidates-from: the table's winners at n, then those of the
// `neighbours` nearest tuned sizes below and above n (same routine, precision and family), nearest
// first, without duplicates. A neighbour's configuration that does not fit n (an nb above n, say)
// is refused by the compile step and dropped with a note, like any unsupported candidate.
std::vector<CholeskyConfig> known_candidates(const CaseKey& k, const std::map<CaseKey, std::vector<CholeskyConfig>>& known,
                                             int neighbours) {
    std::vector<CholeskyConfig> out;
    std::set<std::string> seen;
    auto add = [&](const CaseKey& at) {
        const auto it = known.find(at);
        if (it == known.end()) return false;
        for (const CholeskyConfig& c : it->second)
            if (seen.insert(to_string(c)).second) out.push_back(c);
        return true;
    };
    add(k);
    int below = 0, above = 0;
    for (int d = 1; d < 1024 && (below < neighbours || above < neighbours); ++d) {
        CaseKey lo = k, hi = k;
        lo.n = k.n - d, hi.n = k.n + d;
        if (below < neighbours && lo.n >= 1 && add(lo)) ++below;
        if (above < neighbours && add(hi)) ++above;
    }
    return out;
}

struct CaseState {
    CaseKey key;
    int group = 0;
    long index = 0;  // global order: priority of its compilations
    std::vector<std::string> plan;
    int stage = -1;
    std::vector<Measured> pending;  // candidates of the current stage
    std::vector<std::shared_ptr<CompileJob>> jobs;
    std::vector<Measured> results;  // every candidate tried
    std::vector<CholeskyConfig> stage1_top;
    std::vector<CholeskyConfig> staged_top;  // the best staged shapes (scalar update), fastest first
    bool waiting = false;                    // the stage c.stage waits for another case (stage_ready)
    std::vector<CaseKey> anchors;            // a size between anchors: the cases it takes its candidates from
    bool queued_ahead = false;               // ... whose kernels were queued before it started (queue_fills_ahead)
    std::optional<CholeskyConfig> resumed_best;  // --revisit: the winner of the resumed entry, timed again
    bool stage1_done = false, started = false, done = false, skipped = false;
    std::string note;
    std::chrono::steady_clock::time_point t0;
    double seconds = 0;
};

// Timed candidates, fastest first (fully timed ones before pruned ones).
std::vector<const Measured*> ranking(const std::vector<Measured>& results) {
    std::vector<const Measured*> r;
    for (const Measured& m : results)
        if (m.timed) r.push_back(&m);
    std::stable_sort(r.begin(), r.end(), [](const Measured* a, const Measured* b) {
        if (a->pruned != b->pruned) return !a->pruned;
        return a->ms < b->ms;
    });
    return r;
}

// Candidates of a later stage, built around the best so far.
std::vector<CholeskyConfig> later_stage(const std::string& stage, const CaseKey& k, const std::vector<Measured>& results,
                                        const Options& opt, int sm_count) {
    const std::vector<const Measured*> r = ranking(results);
    std::vector<CholeskyConfig> out;
    if (r.empty()) return out;
    std::vector<CholeskyConfig> top;
    for (const Measured* m : r)
        if (int(top.size()) < kTopForNextStage) top.push_back(m->config);
    const CholeskyConfig best = top.front();
    if (stage == "threads") {
        if (k.family == Family::column_major) {
            const auto& list = k.routine == Routine::potrs ? std::vector<int>(std::begin(kColumnMajorSolveThreadsPerBlock),
                                                                              std::end(kColumnMajorSolveThreadsPerBlock))
                                                           : std::vector<int>(std::begin(kColumnMajorThreadsPerBlock),
                                                                              std::end(kColumnMajorThreadsPerBlock));
            for (int t : list) {
                CholeskyConfig c = best;
                c.threads_per_block = t;
                out.push_back(c);
            }
        } else {
            for (int t : kThreadsPerBlock) {
                if (ceil_div(opt.batch, t) < kMinBusySmFraction * sm_count && t != best.threads_per_block) continue;
                CholeskyConfig c = best;
                c.threads_per_block = t;
                out.push_back(c);
            }
        }
    } else if (stage == "chunk") {
        for (const CholeskyConfig& base : top)
            for (int chunk : kChunkSizes) {
                CholeskyConfig c = base;
                c.chunk_size = chunk;
                out.push_back(c);
            }
    } else if (stage == "unroll") {
        const int chunk = column_major_default_chunk(k.precision);
        if (k.n <= kColumnMajorMaxFullUnrollN) {
            CholeskyConfig c = best;
            c.full_unroll = true, c.nb = chunk;
            out.push_back(c);
        }
        // A larger chunk than a thread's columns (ceil(n / threads_per_row)) changes nothing.
        const int columns = ceil_div(k.n, std::max(best.threads_per_row, 1));
        for (int nb : {chunk / 2, chunk * 2}) {
            if (nb > chunk && columns <= chunk) continue;
            CholeskyConfig c = best;
            c.full_unroll = false, c.nb = nb;
            out.push_back(c);
        }
    } else if (stage == "prefetch") {
        for (int nb : kColumnMajorPotrsPrefetch) {
            CholeskyConfig c = best;
            c.nb = nb;
            out.push_back(c);
        }
    } else if (stage == "coop") {
        out = coop_candidates(k.routine, k.n, best, opt.exhaustive);
    } else if (stage == "grid") {
        out = grid_candidates(best, opt.batch, sm_count);
    } else if (stage == "staged") {
        out = staged_candidates(k, opt.exhaustive);
    } else if (stage == "tensor_cores") {
        const std::vector<CholeskyConfig> all = tensor_core_candidates(k, opt.exhaustive);  // none outside d potrf/posv
        for (const Measured* m : r) {
            if (all.empty() || int(out.size()) == kTensorCoreFromStaged) break;
            if (!m->config.staged || m->config.tensor_cores) continue;
            CholeskyConfig c = m->config;
            c.tensor_cores = true;
            out.push_back(c);
        }
        if (out.empty()) out = all;  // no staged shape timed (e.g. --skip-stages staged)
    } else if (stage == "nrhs_block") {
        for (int nrb : kNrhsBlocks) {
            if (nrb > opt.nrhs) continue;
            CholeskyConfig c = best;
            c.nrhs_block = nrb;
            out.push_back(c);
        }
    }
    return out;
}

// ---- the run ------------------------------------------------------------------------------------------

class Tuner {
public:
    Tuner(const Options& opt, const validation::GpuProperties& gpu, const std::string& command)
        : opt_(opt), gpu_(gpu), command_(command) {}

    int run();

private:
    void load_resume();
    void plan_cases();
    void start_group(Group& g);
    bool ensure_resident(Group& g);
    void close(CaseState& c, bool skipped);
    bool seed_ready(const CaseState& c, std::vector<CholeskyConfig>& seeds, bool& have) const;
    void start_case(CaseState& c);
    void begin(CaseState& c, const std::vector<CholeskyConfig>& first_stage);
    CompileRequest request_of(const CaseKey& k, const CholeskyConfig& config) const;
    void submit_stage(CaseState& c, const std::vector<CholeskyConfig>& configs);
    void queue_fills_ahead();
    bool advance(CaseState& c);  // moves to the next non-empty stage; false when none is left
    bool stage_ready(const CaseState& c) const;
    bool submit_current(CaseState& c);
    std::optional<CaseKey> staged_seed_source(const CaseState& c) const;
    bool settled(const CaseKey& k) const;
    bool split_ready(const CaseKey& k) const;
    bool anchors_ready(const CaseState& c) const;
    std::vector<CholeskyConfig> anchor_candidates(const CaseState& c) const;
    std::vector<CholeskyConfig> through_candidates(const CaseKey& k) const;
    std::vector<CholeskyConfig> split_candidates(const CaseKey& k) const;
    bool compiled(const CaseState& c) const;
    void run_stage(CaseState& c);
    template <class T>
    void run_stage_typed(CaseState& c);
    template <class T>
    void finish_typed(CaseState& c);
    void finish(CaseState& c);
    void log_candidate(const CaseState& c, const Measured& m);
    void record(const Entry& e);
    void write_output();
    double elapsed() const { return seconds_since(t0_); }
    bool over_budget() const { return opt_.budget_s > 0 && elapsed() > opt_.budget_s; }

    const Options& opt_;
    validation::GpuProperties gpu_;
    std::string command_;
    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
    std::unique_ptr<Context> ctx_;
    std::unique_ptr<CompilePool> pool_;
    Workspace workspace_;
    Buffer<std::byte> flush_;
    std::vector<std::unique_ptr<Group>> groups_;
    std::vector<CaseState> cases_;
    std::map<CaseKey, long> case_index_;
    std::map<CaseKey, Entry> entries_;  // finished: resumed or tuned now
    std::map<CaseKey, std::vector<CholeskyConfig>> resumed_seeds_;
    std::map<CaseKey, std::vector<CholeskyConfig>> known_;  // --candidates-from
    std::ofstream log_, resume_;
    double timing_s_ = 0, waiting_s_ = 0;
    long timed_ = 0;
    int sanity_failures_ = 0;
};

void Tuner::load_resume() {
    if (opt_.resume.empty()) return;
    std::ifstream in(opt_.resume);
    if (!in) return;  // a first run: the file is created below
    int line_no = 0, used = 0;
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            const json j = json::parse(line);
            if (j.value("batch", opt_.batch) != opt_.batch || j.value("device", gpu_.name) != gpu_.name) {
                std::cerr << "autotune: --resume " << opt_.resume << " line " << line_no
                          << ": another batch size or GPU; ignored\n";
                continue;
            }
            Entry e;
            e.key.routine = parse_routine(j.at("routine").get<std::string>());
            e.key.precision = parse_precision(j.at("precision").get<std::string>());
            e.key.family = parse_family(j.at("layout").get<std::string>());
            e.key.n = j.at("n").get<int>();
            e.best.config = config_from_json(j.at("best").at("config"));
            e.best.ms = j.at("best").at("ms").get<double>();
            e.best.gflops = j.at("best").at("gflops").get<double>();
            if (j.contains("runner_up") && !j.at("runner_up").is_null()) {
                Winner w;
                w.config = config_from_json(j.at("runner_up").at("config"));
                w.ms = j.at("runner_up").at("ms").get<double>();
                w.gflops = j.at("runner_up").at("gflops").get<double>();
                e.runner_up = w;
            }
            e.candidates = j.value("candidates", 0);
            for (const json& s : j.value("stage1_top", json::array())) e.stage1_top.push_back(config_from_json(s));
            for (const json& s : j.value("staged_top", json::array())) e.staged_top.push_back(config_from_json(s));
            e.seconds = j.value("seconds", 0.0);
            resumed_seeds_[e.key] = e.stage1_top;
            entries_[e.key] = e;
            ++used;
        } catch (const std::exception& e) {  // e.g. the last line of a killed run, cut short
            std::cerr << "autotune: --resume " << opt_.resume << " line " << line_no << " skipped: " << e.what() << "\n";
        }
    }
    std::printf("resume: %d finished cases read from %s\n", used, opt_.resume.c_str());
}

void Tuner::plan_cases() {
    // n outermost, so that a budget cut leaves whole sizes out; within a (precision, n) group the
    // seeds come first (potrf before posv, interleaved before chunked) and potrs sits between them,
    // giving posv's compilations time.
    // The sizes between anchors (kFillStep) come after all the others, so that their anchors on both
    // sides are done when they start.
    const Routine routine_order[] = {Routine::potrf, Routine::potrs, Routine::posv};
    const Family family_order[] = {Family::interleaved, Family::column_major, Family::chunked};
    std::vector<int> sizes;
    for (int n : opt_.ns)
        if (fill_anchors(n, opt_.exhaustive).empty()) sizes.push_back(n);
    for (int n : opt_.ns)
        if (!fill_anchors(n, opt_.exhaustive).empty()) sizes.push_back(n);
    for (int n : sizes)
        for (Precision p : opt_.precisions) {
            auto g = std::make_unique<Group>();
            g->precision = p, g->n = n;
            g->seed = mix(mix(opt_.seed, std::uint64_t(p)), std::uint64_t(n));
            bool any = false;
            for (Routine r : routine_order) {
                if (std::find(opt_.routines.begin(), opt_.routines.end(), r) == opt_.routines.end()) continue;
                for (Family f : family_order) {
                    if (std::find(opt_.families.begin(), opt_.families.end(), f) == opt_.families.end()) continue;
                    CaseState c;
                    c.key = {r, p, f, n};
                    if (auto e = entries_.find(c.key); e != entries_.end()) {  // done in an earlier run
                        if (!opt_.revisit || without(revisit_stages(r, f, opt_.revisit_stages), opt_.skip_stages).empty())
                            continue;
                        c.resumed_best = e->second.best.config;
                    }
                    c.group = int(groups_.size());
                    c.index = long(cases_.size());
                    if (!c.resumed_best && known_.empty()) {  // both anchors tuned now or resumed, else a full search
                        for (int m : fill_anchors(n, opt_.exhaustive)) {
                            CaseKey a = c.key;
                            a.n = m;
                            if (entries_.count(a) || std::find(opt_.ns.begin(), opt_.ns.end(), m) != opt_.ns.end())
                                c.anchors.push_back(a);
                        }
                        if (c.anchors.size() < 2) c.anchors.clear();
                    }
                    if (c.resumed_best) c.plan = revisit_stages(r, f, opt_.revisit_stages);
                    else if (!known_.empty() && !known_candidates(c.key, known_, opt_.neighbours).empty())
                        c.plan = known_plan(r, f, n, opt_.exhaustive);
                    else if (!c.anchors.empty()) c.plan = known_plan(r, f, n, opt_.exhaustive);
                    else c.plan = search_plan(r, f, n, opt_.nrhs, opt_.exhaustive, opt_.skip_stages);
                    c.plan = without(c.plan, opt_.skip_stages);
                    case_index_[c.key] = c.index;
                    ++g->open_cases;
                    (r == Routine::potrs ? g->needs_l : g->needs_a) = true;
                    cases_.push_back(std::move(c));
                    any = true;
                }
            }
            if (any) groups_.push_back(std::move(g));
        }
}

void Tuner::start_group(Group& g) {
    if (g.generating || g.resident || g.failed) return;
    const int distinct = std::min(kDistinctMatrices, opt_.batch);
    const int nrhs = opt_.nrhs;
    const double cond = opt_.cond;
    const Precision p = g.precision;
    const int n = g.n;
    const std::uint64_t seed = g.seed;
    g.host = std::async(std::launch::async, [=] { return make_host_inputs(p, n, nrhs, distinct, cond, seed); });
    g.generating = true;
}

bool Tuner::ensure_resident(Group& g) {
    if (g.resident) return true;
    if (g.failed) return false;
    start_group(g);
    if (g.host.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    try {
        // The previous case's input sets (3 copies of its batch at least) are rebuilt by every stage
        // anyway: freed first, they leave the device to the new inputs (d n = 128 at batch 100000
        // ran out of an 80 GB H100 beside them in run 38).
        workspace_.release();
        make_resident(g, g.host.get(), opt_.batch, opt_.nrhs, *ctx_);
    } catch (const std::exception& e) {
        g.failed = true;
        g.error = e.what();
        std::cerr << "autotune: inputs of " << precision_letter(g.precision) << " n=" << g.n << ": " << e.what() << "\n";
        return false;
    }
    return true;
}

// A case is over (done, or skipped by the budget); the last one of a group frees its inputs.
void Tuner::close(CaseState& c, bool skipped) {
    if (c.done || c.skipped) return;
    (skipped ? c.skipped : c.done) = true;
    Group& g = *groups_[c.group];
    if (--g.open_cases == 0) {
        g.a = Buffer<std::byte>(), g.l = Buffer<std::byte>(), g.b = Buffer<std::byte>();
        g.resident = false;
    }
}

// Seeds of a case when its source's stage 1 is known (`have` false: no seeds, use the full list);
// returns false while the source is still running.
bool Tuner::seed_ready(const CaseState& c, std::vector<CholeskyConfig>& seeds, bool& have) const {
    have = false;
    const std::optional<CaseKey> src = seed_source(c.key);
    if (!src) return true;
    std::vector<CholeskyConfig> staged;  // the source's best staged shapes
    if (auto it = case_index_.find(*src); it != case_index_.end()) {
        const CaseState& s = cases_[it->second];
        if (s.skipped) return true;
        if (!s.stage1_done && !s.done) return false;
        if (takes_no_seeds(c.plan)) return true;  // waited all the same: a chunked case runs its source's kernels
        seeds = s.stage1_top, staged = s.staged_top;
    } else if (takes_no_seeds(c.plan)) {
        return true;
    } else if (auto it = resumed_seeds_.find(*src); it != resumed_seeds_.end()) {
        seeds = it->second;
        if (const auto e = entries_.find(*src); e != entries_.end()) staged = e->second.staged_top;
    }
    // Seeds of the kind the case's first stage times: staged shapes for a staged first stage (search_plan),
    // kernel shapes otherwise. The source may have searched the other way (a resumed entry of another
    // search, or --exhaustive / --skip-stages on one side): then its staged ranking, or no seeds.
    const bool want_staged = !c.plan.empty() && c.plan[0] == "staged";
    // Two-kernel posv configurations (a split-only source) seed nothing: stage 1 times kernel shapes.
    seeds.erase(std::remove_if(seeds.begin(), seeds.end(),
                               [&](const CholeskyConfig& s) { return s.staged != want_staged || s.solve_warps_per_matrix > 0; }),
                seeds.end());
    if (want_staged && seeds.empty()) seeds = staged;
    have = !seeds.empty();
    return true;
}

CompileRequest Tuner::request_of(const CaseKey& k, const CholeskyConfig& config) const {
    CompileRequest r;
    r.routine = k.routine, r.precision = k.precision, r.layout = layout_of(k.family);
    r.n = k.n, r.count = opt_.batch, r.chunk = k.family == Family::chunked ? config.chunk_size : 0;
    r.nrhs = k.routine == Routine::potrf ? 0 : opt_.nrhs;
    r.config = config;
    return r;
}

// The sizes between anchors wait for their anchors and then run in (precision, n) groups, a few
// groups at a time (kGroupsAhead, for the inputs' memory); each compiles only 1-2 kernels, so the
// compile threads would idle while the timing thread works through them one group after another
// (run 42: its part of them used 6.6 of 16 threads). Their kernels are therefore queued as soon as
// their anchors are settled, at the case's priority, while the timing thread waits.
void Tuner::queue_fills_ahead() {
    for (CaseState& c : cases_) {
        if (c.queued_ahead || c.started || c.done || c.skipped || c.anchors.empty() || !anchors_ready(c)) continue;
        c.queued_ahead = true;
        for (const CholeskyConfig& config : anchor_candidates(c)) pool_->submit(request_of(c.key, config), c.index);
    }
}

void Tuner::submit_stage(CaseState& c, const std::vector<CholeskyConfig>& configs) {
    c.pending.clear();
    c.jobs.clear();
    std::set<std::string> tried;
    for (const Measured& m : c.results) tried.insert(to_string(m.config));
    for (const CholeskyConfig& config : configs) {
        if (!tried.insert(to_string(config)).second) continue;
        Measured m;
        m.config = config;
        m.stage = c.plan[c.stage];
        c.jobs.push_back(pool_->submit(request_of(c.key, config), c.index));
        c.pending.push_back(std::move(m));
    }
}

// The case starts: its first stage (c.plan[0]) with these candidates.
void Tuner::begin(CaseState& c, const std::vector<CholeskyConfig>& first_stage) {
    c.started = true;
    c.t0 = std::chrono::steady_clock::now();
    c.stage = 0;
    submit_stage(c, first_stage);
}

void Tuner::start_case(CaseState& c) {
    if (c.resumed_best) {  // --revisit: the recorded winner and the new stage's candidates, side by side
        std::vector<CholeskyConfig> configs = {*c.resumed_best};
        const std::vector<CholeskyConfig> added = c.plan[0] == "through"  ? through_candidates(c.key)
                                                  : c.plan[0] == "split"  ? split_candidates(c.key)
                                                  : c.plan[0] == "coop"   ? coop_candidates(c.key.routine, c.key.n, *c.resumed_best, opt_.exhaustive)
                                                  : c.plan[0] == "staged" ? staged_candidates(c.key, opt_.exhaustive)
                                                  : c.plan[0] == "tensor_cores" ? tensor_core_candidates(c.key, opt_.exhaustive)
                                                                          : grid_candidates(*c.resumed_best, opt_.batch,
                                                                                            gpu_.sm_count);
        configs.insert(configs.end(), added.begin(), added.end());
        return begin(c, configs);
    }
    if (c.plan[0] == "known") {
        const std::vector<CholeskyConfig> configs =
            c.anchors.empty() ? known_candidates(c.key, known_, opt_.neighbours) : anchor_candidates(c);
        if (!configs.empty()) return begin(c, configs);
        c.plan = search_plan(c.key.routine, c.key.family, c.key.n, opt_.nrhs, opt_.exhaustive,
                             opt_.skip_stages);  // anchors without an entry
        c.anchors.clear();
    }
    if (c.plan[0] == "split") {  // posv_split_only: potrf's and potrs's winners of this case
        if (!split_ready(c.key)) return;  // not started: the main loop comes back
        const std::vector<CholeskyConfig> configs = split_candidates(c.key);
        if (!configs.empty()) return begin(c, configs);
        // neither tuned (or potrs has no cooperative winner): the fused search after all, under the
        // other rules
        std::vector<std::string> skip = opt_.skip_stages;
        skip.push_back("split");
        c.plan = search_plan(c.key.routine, c.key.family, c.key.n, opt_.nrhs, opt_.exhaustive, skip);
    }
    std::vector<CholeskyConfig> seeds;
    bool have = false;
    seed_ready(c, seeds, have);
    begin(c, stage1_candidates(c.key, c.plan[0], have ? &seeds : nullptr, opt_.exhaustive));
}

std::vector<CholeskyConfig> Tuner::through_candidates(const CaseKey& k) const {
    CaseKey source = k;
    source.family = Family::interleaved;
    std::vector<CholeskyConfig> out;
    const auto e = entries_.find(source);
    if (e == entries_.end()) return out;  // not tuned (yet): the stage is skipped
    for (CholeskyConfig c : winners_of(e->second)) {
        c.chunk_size = 0;
        c.through_interleaved = true;
        out.push_back(c);
    }
    return out;
}

// Interleaved posv in two kernels (CholeskyConfig::solve_warps_per_matrix): potrf's winners (best and
// runner-up) of the same case, each followed by the cooperative solve of potrs's winners there (the
// one-thread potrs kernels have no two-kernel form), at the factorisation's chunk size. Their kernels
// are potrf's and potrs's, compiled already: the stage only times. The solve part has no grid or
// register cap of its own: a potrs winner with a register cap (another kernel) is left out, one with
// a grid cap runs uncapped (the same kernel). Empty until both are tuned.
std::vector<CholeskyConfig> Tuner::split_candidates(const CaseKey& k) const {
    CaseKey factor = k, solve = k;
    factor.routine = Routine::potrf, solve.routine = Routine::potrs;
    std::vector<CholeskyConfig> out;
    const auto f = entries_.find(factor), s = entries_.find(solve);
    if (k.routine != Routine::posv || k.family == Family::column_major || f == entries_.end() || s == entries_.end())
        return out;
    for (const CholeskyConfig& fc : winners_of(f->second))
        for (const CholeskyConfig& sc : winners_of(s->second)) {
            if (sc.warps_per_matrix <= 0 || sc.max_registers != 0) continue;
            CholeskyConfig c = fc;
            c.solve_warps_per_matrix = sc.warps_per_matrix, c.solve_nb = sc.nb;
            c.nrhs_block = sc.nrhs_block;
            out.push_back(c);
        }
    return out;
}

// posv's staged stage starts from potrf's staged ranking (kSeedStagedPosv): the potrf case whose
// ranking it takes, when the measured pruning is on and potrf is tuned in this run or resumed.
std::optional<CaseKey> Tuner::staged_seed_source(const CaseState& c) const {
    if (opt_.exhaustive || c.resumed_best || c.key.routine != Routine::posv || c.key.family != Family::column_major)
        return std::nullopt;
    if (c.stage < 0 || c.stage >= int(c.plan.size()) || c.plan[c.stage] != "staged") return std::nullopt;
    CaseKey src = c.key;
    src.routine = Routine::potrf;
    // only a potrf that ranks staged shapes: not one timing a table's or its anchors' winners
    if (const auto it = case_index_.find(src); it != case_index_.end()) {
        const std::vector<std::string>& plan = cases_[it->second].plan;
        if (!cases_[it->second].resumed_best && std::find(plan.begin(), plan.end(), "staged") != plan.end()) return src;
        return std::nullopt;
    }
    if (const auto e = entries_.find(src); e != entries_.end() && !e->second.staged_top.empty()) return src;
    return std::nullopt;
}

// True unless case k is tuned in this run and still open.
bool Tuner::settled(const CaseKey& k) const {
    const auto it = case_index_.find(k);
    return it == case_index_.end() || cases_[it->second].done || cases_[it->second].skipped;
}

// A size between anchors starts when the anchors tuned in this run are done.
bool Tuner::anchors_ready(const CaseState& c) const {
    return std::all_of(c.anchors.begin(), c.anchors.end(), [this](const CaseKey& a) { return settled(a); });
}

// The winners of a size's anchors (kFillStep): --candidates-from's lookup of the nearest tuned size
// each side, given the anchors' winners only (an anchor without an entry found no winner).
std::vector<CholeskyConfig> Tuner::anchor_candidates(const CaseState& c) const {
    std::map<CaseKey, std::vector<CholeskyConfig>> anchors;
    for (const CaseKey& a : c.anchors)
        if (const auto e = entries_.find(a); e != entries_.end()) anchors[a] = {e->second.best.config};
    return known_candidates(c.key, anchors, 1);
}

// The split stage of posv needs potrf and potrs of the same case finished (or not in this run).
bool Tuner::split_ready(const CaseKey& k) const {
    CaseKey factor = k, solve = k;
    factor.routine = Routine::potrf, solve.routine = Routine::potrs;
    return settled(factor) && settled(solve);
}

// False while the case's current stage needs a case of this run that has not finished yet.
bool Tuner::stage_ready(const CaseState& c) const {
    if (c.stage >= 0 && c.stage < int(c.plan.size()) && c.plan[c.stage] == "split") return split_ready(c.key);
    const std::optional<CaseKey> src = staged_seed_source(c);
    return !src || settled(*src);
}

// Submits the candidates of stage c.stage; false when it has none.
bool Tuner::submit_current(CaseState& c) {
    const std::string& stage = c.plan[c.stage];
    std::vector<CholeskyConfig> configs;
    if (const std::optional<CaseKey> src = staged_seed_source(c)) {
        const auto e = entries_.find(*src);  // not there: potrf found no winner, so posv gets the full list
        if (e != entries_.end())
            for (const CholeskyConfig& s : e->second.staged_top)
                if (int(configs.size()) < kSeedStagedPosv) configs.push_back(s);
    }
    if (configs.empty())
        configs = stage == "through" ? through_candidates(c.key)
                  : stage == "split" ? split_candidates(c.key)
                                     : later_stage(stage, c.key, c.results, opt_, gpu_.sm_count);
    submit_stage(c, configs);
    return !c.pending.empty();
}

bool Tuner::advance(CaseState& c) {
    while (++c.stage < int(c.plan.size())) {
        if (!stage_ready(c)) {
            c.waiting = true;  // submitted by the main loop once the other case is done
            c.pending.clear(), c.jobs.clear();
            return true;
        }
        if (submit_current(c)) return true;
    }
    return false;
}

bool Tuner::compiled(const CaseState& c) const {
    return std::all_of(c.jobs.begin(), c.jobs.end(), [](const auto& j) { return j->done.load(); });
}

void Tuner::log_candidate(const CaseState& c, const Measured& m) {
    if (!log_.is_open()) return;
    json j = {{"routine", to_string(c.key.routine)},
              {"precision", std::string(1, precision_letter(c.key.precision))},
              {"layout", to_string(c.key.family)},
              {"n", c.key.n},
              {"config", config_json(m.config)},
              {"stage", m.stage},
              {"supported", m.supported},
              {"kernel", m.kernel},
              {"registers", m.registers},
              {"local_bytes", m.local_bytes},
              {"compile_s", m.compile_s}};
    if (m.timed) {
        j["ms"] = m.ms;
        j["gflops"] = m.gflops;
        j["samples_ms"] = m.samples_ms;
        j["pruned"] = m.pruned;
    } else {
        j["ms"] = nullptr;
        j["gflops"] = nullptr;
    }
    if (!m.note.empty()) j["note"] = m.note;
    log_ << j.dump() << '\n';
    log_.flush();
}

template <class T>
void Tuner::run_stage_typed(CaseState& c) {
    Group& g = *groups_[c.group];
    Bench<T> bench(c.key, opt_, g, workspace_, flush_, *ctx_);
    const double flops = flops_per_matrix(c.key.routine, c.key.precision, c.key.n, opt_.nrhs) * opt_.batch;
    // Candidates that share a kernel and launch (the library resolves some fields to the same
    // kernel) are timed once. The launch: the chunk width and the grid cap (same kernel text).
    auto launch_key = [](const std::string& kernel, const CholeskyConfig& config) {
        return kernel + "|" + std::to_string(config.chunk_size) + "|" + std::to_string(config.grid_blocks_per_sm);
    };
    std::set<std::string> kernels;
    for (const Measured& m : c.results)
        if (m.timed) kernels.insert(launch_key(m.kernel, m.config));
    // Chunked candidates sorted by chunk size: one conversion of the inputs per size.
    std::vector<std::size_t> order(c.pending.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return c.pending[a].config.chunk_size < c.pending[b].config.chunk_size;
    });
    for (std::size_t i : order) {
        Measured& m = c.pending[i];
        const KernelReport& rep = c.jobs[i]->report;
        m.supported = rep.supported;
        m.kernel = rep.name;
        m.registers = rep.registers, m.local_bytes = rep.local_bytes;
        m.compile_s = rep.compile_seconds;
        if (!rep.supported) {
            m.note = rep.note.empty() ? "not supported" : rep.note;
        } else if (!kernels.insert(launch_key(rep.name, m.config)).second) {
            m.note = "same kernel and launch as a candidate timed before";
        } else {
            const std::vector<const Measured*> r = ranking(c.results);
            const double best = r.empty() || r.front()->pruned ? 0 : r.front()->ms;
            try {
                bench.time(m, best);
                m.gflops = m.ms > 0 ? flops / (m.ms * 1e-3) / 1e9 : 0;
                ++timed_;
            } catch (const InvalidArgument& e) {
                m.timed = false, m.samples_ms.clear();
                m.note = std::string("refused: ") + e.what();
            } catch (const CudaError& e) {
                m.timed = false, m.samples_ms.clear();
                m.note = std::string("CUDA error: ") + e.what();
                ctx_->synchronize();  // a sticky error (the context is lost) throws here and ends the run
            }
        }
        log_candidate(c, m);
        c.results.push_back(std::move(m));
    }
    c.pending.clear();
    c.jobs.clear();
}

void Tuner::run_stage(CaseState& c) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
        switch (c.key.precision) {
            case Precision::s: run_stage_typed<float>(c); break;
            case Precision::d: run_stage_typed<double>(c); break;
            case Precision::c: run_stage_typed<std::complex<float>>(c); break;
            case Precision::z: run_stage_typed<std::complex<double>>(c); break;
        }
    } catch (const CudaError&) {
        throw;  // the device is in an unknown state: stop (outputs are written by the caller)
    } catch (const std::exception& e) {  // e.g. not enough memory for this n: the case is given up
        c.note = e.what();
        c.pending.clear(), c.jobs.clear();
        close(c, false);
        std::printf("%-34s failed: %s\n", c.key.text().c_str(), e.what());
        std::fflush(stdout);
        timing_s_ += seconds_since(t0);
        return;
    }
    if (c.plan[c.stage] == "staged")
        for (const Measured* m : ranking(c.results))
            if (int(c.staged_top.size()) < kSeedStagedPosv && m->config.staged && !m->config.tensor_cores)
                c.staged_top.push_back(m->config);
    if (c.stage == 0 && takes_no_seeds(c.plan) && ranking(c.results).empty()) {
        // a cooperative first stage (cooperative_only) that timed nothing (every shape refused): the
        // search without the rule after all
        c.plan = without(stage_plan(c.key.routine, c.key.family, opt_.nrhs), opt_.skip_stages);
        begin(c, stage1_candidates(c.key, c.plan[0], nullptr, opt_.exhaustive));
        timing_s_ += seconds_since(t0);
        return;
    }
    if (c.plan[c.stage] == "shape" || c.stage == 0) {
        c.stage1_done = true;
        // Seeds come from a real stage 1 only: not from a revisit's, a table's or anchors' winners,
        // nor from a cooperative first stage (staged, cooperative or grid-capped configurations, not
        // shapes); without them the seeded case searches its full list.
        if (!c.resumed_best && c.plan[0] != "known" && !takes_no_seeds(c.plan))
            for (const Measured* m : ranking(c.results))  // seeds are kernel shapes: not the through-interleaved route
                if (int(c.stage1_top.size()) < std::max(kSeedShapesPosv, kSeedShapesChunked) && !m->config.through_interleaved)
                    c.stage1_top.push_back(m->config);
    }
    if (!advance(c)) finish(c);
    timing_s_ += seconds_since(t0);
}

template <class T>
void Tuner::finish_typed(CaseState& c) {
    std::vector<const Measured*> r = ranking(c.results);
    if (r.empty()) {
        c.note = "no supported candidate";
        for (const Measured& m : c.results)
            if (!m.note.empty()) {
                c.note += " (e.g. " + m.note + ")";
                break;
            }
        return;
    }
    // The winner must leave every info 0 (and finite solutions); else the next one takes its place.
    Bench<T> bench(c.key, opt_, *groups_[c.group], workspace_, flush_, *ctx_);
    std::size_t first = 0;
    for (; first < r.size() && first < std::size_t(kSanityTries); ++first) {
        const std::string problem = bench.sanity(r[first]->config);
        if (problem.empty()) break;
        std::fprintf(stderr, "autotune: %s: %s failed the sanity check: %s\n", c.key.text().c_str(),
                     to_string(r[first]->config).c_str(), problem.c_str());
        ++sanity_failures_;
        c.note += (c.note.empty() ? "" : "; ") + std::string("dropped a candidate: ") + problem;
    }
    if (first == r.size() || first == std::size_t(kSanityTries)) {
        c.note = "no candidate passed the sanity check: " + c.note;
        return;
    }
    Entry e;
    e.key = c.key;
    e.best = {r[first]->config, r[first]->ms, r[first]->gflops};
    if (first + 1 < r.size()) e.runner_up = Winner{r[first + 1]->config, r[first + 1]->ms, r[first + 1]->gflops};
    e.candidates = int(std::count_if(c.results.begin(), c.results.end(), [](const Measured& m) { return m.timed; }));
    e.stage1_top = c.stage1_top;
    e.staged_top = c.staged_top;
    if (c.resumed_best)  // --revisit: keep the seeds of the search that made the entry, unless it ran that stage
        if (const auto old = entries_.find(c.key); old != entries_.end()) {
            e.stage1_top = old->second.stage1_top;
            if (e.staged_top.empty()) e.staged_top = old->second.staged_top;
        }
    e.seconds = seconds_since(c.t0);
    record(e);
}

void Tuner::finish(CaseState& c) {
    try {
        switch (c.key.precision) {
            case Precision::s: finish_typed<float>(c); break;
            case Precision::d: finish_typed<double>(c); break;
            case Precision::c: finish_typed<std::complex<float>>(c); break;
            case Precision::z: finish_typed<std::complex<double>>(c); break;
        }
    } catch (const CudaError&) {
        throw;
    } catch (const std::exception& e) {
        c.note = e.what();
    }
    c.seconds = seconds_since(c.t0);
    close(c, false);
    auto e = entries_.find(c.key);
    if (e == entries_.end()) {
        std::printf("%-34s no entry: %s\n", c.key.text().c_str(), c.note.c_str());
    } else {
        const Entry& en = e->second;
        std::printf("%-34s %9.1f GFLOP/s %9.4f ms  %s  (%d timed, %.1f s)\n", c.key.text().c_str(), en.best.gflops,
                    en.best.ms, short_text(en.best.config, c.key.family, c.key.routine).c_str(), en.candidates,
                    c.seconds);
    }
    std::fflush(stdout);
}

void Tuner::record(const Entry& e) {
    entries_[e.key] = e;
    if (resume_.is_open()) {
        json j = entry_json(e);
        j["batch"] = opt_.batch;
        j["device"] = gpu_.name;
        j["seconds"] = e.seconds;
        json top = json::array();
        for (const CholeskyConfig& s : e.stage1_top) top.push_back(config_json(s));
        j["stage1_top"] = top;
        if (!e.staged_top.empty()) {
            json staged = json::array();
            for (const CholeskyConfig& s : e.staged_top) staged.push_back(config_json(s));
            j["staged_top"] = staged;
        }
        resume_ << j.dump() << '\n';
        resume_.flush();
    }
    write_output();
}

// The table, written whole after every case (through a temporary file, so that a killed run leaves
// the last complete one).
void Tuner::write_output() {
    json entries = json::array();
    for (const auto& [key, e] : entries_) entries.push_back(entry_json(e));  // sorted by the key
    const json doc = {{"arch", "sm_" + std::to_string(gpu_.cc_major) + std::to_string(gpu_.cc_minor)},
                      {"arch_number", gpu_.cc_major * 10 + gpu_.cc_minor},
                      {"device", gpu_.name},
                      {"cuda_version", cuda_version_text(gpu_.runtime_version)},
                      {"date", utc_now()},
                      {"commit", opt_.commit},
                      {"batch", opt_.batch},
                      {"entries", entries}};
    const std::string tmp = opt_.output + ".tmp";
    {
        std::ofstream out(tmp);
        out << doc.dump(1) << '\n';
        if (!out) throw Error("cannot write --output " + tmp);
    }
    if (std::rename(tmp.c_str(), opt_.output.c_str()) != 0)
        throw Error("cannot rename " + tmp + " to --output " + opt_.output + ": " + std::strerror(errno));
}

int Tuner::run() {
    load_resume();
    if (!opt_.candidates_from.empty()) {
        known_ = load_table_winners(opt_.candidates_from);
        std::printf("candidates: the winners of %zu entries of %s (and of %d neighbouring sizes each side)\n",
                    known_.size(), opt_.candidates_from.c_str(), opt_.neighbours);
    }
    plan_cases();
    if (!opt_.log.empty()) {
        log_.open(opt_.log, opt_.resume.empty() ? std::ios::trunc : std::ios::app);
        if (!log_) throw Error("cannot open --log " + opt_.log + " for writing");
        log_ << json({{"event", "start"}, {"command", command_}, {"device", gpu_.name}, {"date", utc_now()},
                      {"seed", opt_.seed}, {"batch", opt_.batch}, {"repeat", opt_.repeat}, {"commit", opt_.commit},
                      {"search", opt_.exhaustive ? "exhaustive" : "pruned"}})
                    .dump()
             << '\n';
    }
    if (!opt_.resume.empty()) {
        resume_.open(opt_.resume, std::ios::app);
        if (!resume_) throw Error("cannot open --resume " + opt_.resume + " for appending");
    }
    {  // fail now rather than after the sweep (the table itself is first written after a case)
        const std::string probe = opt_.output + ".tmp";
        std::ofstream out(probe);
        if (!out) throw Error("cannot write next to --output " + opt_.output + " (" + probe + ")");
        out.close();
        std::remove(probe.c_str());
    }
    if (!entries_.empty()) write_output();  // the resumed entries
    std::printf("cases: %zu to tune, %zu taken from --resume; %zu (precision, n) groups\n\n", cases_.size(),
                entries_.size(), groups_.size());
    std::fflush(stdout);

    ctx_ = std::make_unique<Context>(Backend::cuda, opt_.device);
    flush_ = Buffer<std::byte>(*ctx_, std::max<std::size_t>(2 * gpu_.l2_bytes, kRegionAlign));
    pool_ = std::make_unique<CompilePool>(opt_.jobs, opt_.device);
    // Stage 1 of every case that needs no seeds is queued now, in case order, so that the compile
    // threads run ahead of the timing thread from the start.
    for (CaseState& c : cases_) {
        std::vector<CholeskyConfig> seeds;
        bool have = false;
        // --revisit, --candidates-from and sizes between anchors time other candidates than stage 1's
        if (c.resumed_best || c.plan.empty() || c.plan[0] == "known" || c.plan[0] == "split") continue;
        if (seed_source(c.key) && case_index_.count(*seed_source(c.key))) continue;  // waits for its seeds
        seed_ready(c, seeds, have);
        for (const CholeskyConfig& config : stage1_candidates(c.key, c.plan[0], have ? &seeds : nullptr, opt_.exhaustive))
            pool_->submit(request_of(c.key, config), c.index);
    }

    bool budget_hit = false;
    std::size_t first_open = 0;  // cases before it are done or skipped
    for (;;) {
        if (!pool_->error().empty()) throw Error(pool_->error());
        while (first_open < cases_.size() && (cases_[first_open].done || cases_[first_open].skipped)) ++first_open;
        if (first_open == cases_.size()) break;
        if (over_budget() && !budget_hit) {
            budget_hit = true;
            long last_started = -1;
            for (const CaseState& c : cases_)
                if (c.started) last_started = std::max(last_started, c.index);
            pool_->cancel_above(last_started);
            std::printf("\nautotune: --budget-s %.0f reached after %.0f s: no new cases start\n", opt_.budget_s, elapsed());
        }
        const int window_end = cases_[first_open].group + kGroupsAhead;
        for (int gi = cases_[first_open].group; gi < std::min<int>(window_end, int(groups_.size())); ++gi)
            start_group(*groups_[gi]);
        bool ran = false;
        for (std::size_t i = first_open; i < cases_.size() && cases_[i].group < window_end; ++i) {
            CaseState& c = cases_[i];
            if (c.done || c.skipped) continue;
            if (!c.started) {
                if (budget_hit) {
                    close(c, true);
                    continue;
                }
                std::vector<CholeskyConfig> seeds;
                bool have = false;
                if (!seed_ready(c, seeds, have) || !anchors_ready(c)) continue;
                start_case(c);
                if (!c.started) continue;  // a first stage that waits for other cases (start_case)
            }
            if (c.waiting) {
                if (!stage_ready(c)) continue;
                c.waiting = false;
                if (!submit_current(c) && !advance(c)) {
                    finish(c);
                    continue;
                }
                if (c.waiting) continue;
            }
            if (!compiled(c)) continue;
            Group& g = *groups_[c.group];
            if (!ensure_resident(g)) {
                if (g.failed) {
                    c.note = "inputs: " + g.error;
                    close(c, false);
                    std::printf("%-34s no entry: %s\n", c.key.text().c_str(), c.note.c_str());
                }
                continue;
            }
            if (c.pending.empty()) {  // stage 1 had no candidates at all
                if (!advance(c)) finish(c);
            } else {
                run_stage(c);
            }
            ran = true;
            break;  // from the front again: earlier cases first
        }
        if (!ran) {
            if (!budget_hit) queue_fills_ahead();
            const auto t0 = std::chrono::steady_clock::now();
            pool_->wait_for_progress(std::chrono::milliseconds(20));
            waiting_s_ += seconds_since(t0);
        }
    }
    pool_->cancel_above(-1);

    std::vector<std::string> left;
    for (const CaseState& c : cases_)
        if (c.skipped) left.push_back(c.key.text());
    write_output();
    std::printf("\nautotune: %zu entries in %s; %ld candidates timed in %.0f s; %.0f s waiting for compilation or "
                "inputs; %ld kernels compiled (%.0f s of NVRTC on %d threads); %.0f s in all\n",
                entries_.size(), opt_.output.c_str(), timed_, timing_s_, waiting_s_, pool_->compiled(),
                pool_->compile_seconds(), opt_.jobs, elapsed());
    if (!left.empty()) {
        std::printf("autotune: %zu cases left for a later run (--resume):", left.size());
        for (const std::string& s : left) std::printf("\n  %s", s.c_str());
        std::printf("\n");
    }
    int failed = 0;
    for (const CaseState& c : cases_)
        if (c.done && !entries_.count(c.key)) ++failed;
    if (failed > 0) std::printf("autotune: %d cases without an entry (see above)\n", failed);
    if (sanity_failures_ > 0)
        std::printf("autotune: %d winners failed the sanity check (info != 0 or non-finite solutions): a kernel "
                    "bug to report; exit code 2\n", sanity_failures_);
    pool_.reset();  // joins the compile threads (each finishes its current kernel)
    return sanity_failures_ > 0 ? 2 : 0;
}

// --dry-run: the stage-1 candidates per case, without a GPU, and the most later stages may add.
// The split stage's candidates: potrf's best and runner-up, each with potrs's (if cooperative).
constexpr int kSplitAtMost = 4;

int dry_run(const Options& opt) {
    std::ofstream log;
    if (!opt.log.empty()) {
        log.open(opt.log);
        if (!log) throw Error("cannot open --log " + opt.log + " for writing");
    }
    long total1 = 0, total_later = 0, compiles = 0, fills = 0;
    std::set<std::string> kernels;
    std::map<CaseKey, std::vector<CholeskyConfig>> known;
    if (!opt.candidates_from.empty()) known = load_table_winners(opt.candidates_from);
    std::printf("%-34s %8s %8s %8s  %s\n", "case", "stage1", "later<=", "compile", "stages");
    // Sizes whose anchors (kFillStep) are both in the run time the anchors' winners only.
    const auto between_anchors = [&](int n) {
        int anchors = 0;
        for (int m : fill_anchors(n, opt.exhaustive)) anchors += std::find(opt.ns.begin(), opt.ns.end(), m) != opt.ns.end();
        return known.empty() && anchors == 2;
    };
    // posv's staged stage takes potrf's ranking when potrf (in the run) searches its staged stage.
    const auto potrf_ranks_staged = [&](const CaseKey& k) {
        CaseKey src = k;
        src.routine = Routine::potrf;
        const std::vector<std::string> plan = search_plan(Routine::potrf, k.family, k.n, opt.nrhs, opt.exhaustive, opt.skip_stages);
        return std::find(opt.routines.begin(), opt.routines.end(), Routine::potrf) != opt.routines.end() &&
               known_candidates(src, known, opt.neighbours).empty() && !between_anchors(k.n) &&
               std::find(plan.begin(), plan.end(), "staged") != plan.end();
    };
    for (int n : opt.ns)
        for (Precision p : opt.precisions)
            for (Routine r : opt.routines)
                for (Family f : opt.families) {
                    const CaseKey k{r, p, f, n};
                    if (const auto list = known_candidates(k, known, opt.neighbours); !list.empty()) {
                        std::printf("%-34s %8zu %8d %8zu  %s\n", k.text().c_str(), list.size(), 0, list.size(),
                                    joined(without(known_plan(r, f, n, opt.exhaustive), opt.skip_stages)).c_str());
                        total1 += long(list.size()), compiles += long(list.size());
                        continue;
                    }
                    if (between_anchors(n)) {
                        const int at_most = 2;  // the winner of each of the two anchors
                        const std::vector<std::string> plan = without(known_plan(r, f, n, opt.exhaustive), opt.skip_stages);
                        const int through = std::find(plan.begin(), plan.end(), "through") != plan.end() ? 2 : 0;
                        const int split = std::find(plan.begin(), plan.end(), "split") != plan.end() ? kSplitAtMost : 0;
                        std::printf("%-34s %8d %8d %8d  %s\n", k.text().c_str(), at_most, through + split, at_most,
                                    joined(plan).c_str());
                        total1 += at_most, total_later += through + split, compiles += at_most, ++fills;
                        continue;
                    }
                    const std::vector<std::string> plan = search_plan(r, f, n, opt.nrhs, opt.exhaustive, opt.skip_stages);
                    const std::optional<CaseKey> src = seed_source(k);
                    // seeded by a source that runs a real stage 1 (not a table's winners)
                    const bool seeded = src && !takes_no_seeds(plan) && std::find(opt.routines.begin(), opt.routines.end(), src->routine) !=
                                                   opt.routines.end() &&
                                        std::find(opt.families.begin(), opt.families.end(), src->family) !=
                                            opt.families.end() &&
                                        known_candidates(*src, known, opt.neighbours).empty();
                    if (!plan.empty() && plan[0] == "split") {  // posv_split_only: potrf's and potrs's kernels
                        const int later = std::find(plan.begin(), plan.end(), "nrhs_block") != plan.end() ? 3 : 0;
                        std::printf("%-34s %8d %8d %8d  %s\n", k.text().c_str(), kSplitAtMost, later, 0, joined(plan).c_str());
                        total1 += kSplitAtMost, total_later += later;
                        continue;
                    }
                    std::vector<CholeskyConfig> list = stage1_candidates(k, plan.empty() ? "" : plan[0], nullptr, opt.exhaustive);
                    const int seeds = f == Family::chunked ? kSeedShapesChunked : kSeedShapesPosv;
                    const int stage1 = seeded ? std::min<int>(seeds, int(list.size())) : int(list.size());
                    // Kernels of their own: the chunked layout shares the interleaved kernels (chunk is
                    // a run-time argument); a seeded posv compiles its seeds.
                    int own = 0;
                    if (f != Family::chunked || !seeded) {
                        if (seeded) own = stage1;
                        else
                            for (const CholeskyConfig& c : list) {
                                CholeskyConfig kc = c;
                                kc.chunk_size = 0;
                                const std::string key = std::string(to_string(r)) + precision_letter(p) +
                                                        (f == Family::column_major ? "cm" : "il") + std::to_string(n) +
                                                        to_string(kc);
                                own += kernels.insert(key).second;
                            }
                    }
                    int block_sizes = 0;
                    for (int t : kThreadsPerBlock) block_sizes += ceil_div(opt.batch, t) >= kMinBusySmFraction * kDryRunSmCount;
                    int later = 0;
                    for (std::size_t si = 1; si < plan.size(); ++si) {  // stage 1 is `list`
                        const std::string& s = plan[si];
                        if (s == "coop") later += int(coop_candidates(r, n, CholeskyConfig{}, opt.exhaustive).size());
                        if (s == "grid")
                            for (int g : kGridBlocksPerSm) later += static_cast<long long>(g) * kDryRunSmCount < ceil_div(opt.batch, 32);
                        if (s == "threads")
                            later += f == Family::column_major ? (r == Routine::potrs ? 0 : 3) : std::max(0, block_sizes - 1);
                        if (s == "chunk") later += kTopForNextStage * (int(std::size(kChunkSizes)) - 1);
                        if (s == "unroll") later += n <= kColumnMajorMaxFullUnrollN ? 3 : 2;
                        if (s == "prefetch") later += int(std::size(kColumnMajorPotrsPrefetch));
                        if (s == "nrhs_block") later += 3;
                        if (s == "split") later += kSplitAtMost;
                        if (s == "staged")
                            later += r == Routine::posv && !opt.exhaustive && seeded && potrf_ranks_staged(k)
                                         ? std::min<int>(kSeedStagedPosv, int(staged_candidates(k, false).size()))
                                         : int(staged_candidates(k, opt.exhaustive).size());
                        if (s == "tensor_cores") {
                            const int all = int(tensor_core_candidates(k, opt.exhaustive).size());
                            const bool after_staged = std::find(plan.begin(), plan.end(), "staged") != plan.end();
                            later += after_staged ? std::min(all, kTensorCoreFromStaged) : all;
                        }
                    }
                    std::printf("%-34s %8d %8d %8d  %s\n", k.text().c_str(), stage1, later, own, joined(plan).c_str());
                    total1 += stage1, total_later += later, compiles += own;
                    if (log.is_open())
                        for (const CholeskyConfig& c : list)
                            log << json({{"routine", to_string(r)}, {"precision", std::string(1, precision_letter(p))},
                                         {"layout", to_string(f)}, {"n", n}, {"config", config_json(c)}, {"stage", "dry-run"}})
                                       .dump()
                                << '\n';
                }
    std::printf("\ndry run: %ld stage-1 candidates, later stages at most %ld more; %ld stage-1 kernels to compile; "
                "%ld cases between anchors\n",
                total1, total_later, compiles, fills);
    return 0;
}

}  // namespace

}  // namespace batchsolve::autotune

int main(int argc, char** argv) {
    using namespace batchsolve;
    using namespace batchsolve::autotune;
    po::options_description desc(
        "autotune: times the kernel configurations of batchsolve's batched Cholesky routines on the GPU and\n"
        "writes the fastest per routine, precision, layout family and n to a tuning table.\n"
        "Lists: comma-separated values or first:last[:step] ranges, e.g. --n 1:128.\n"
        "Options");
    std::string routines_text, precisions_text, n_text, layouts_text, revisit_text, skip_text;
    Options opt;
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    desc.add_options()
        ("help,h", "this help")
        ("routine", po::value(&routines_text)->default_value("potrf"), "potrf, posv, potrs (list)")
        ("precision", po::value(&precisions_text)->default_value("s,d"), "s, d, c, z (list)")
        ("n", po::value(&n_text)->default_value("1:128"), "matrix sizes (list, >= 1)")
        ("layout", po::value(&layouts_text)->default_value("interleaved,chunked,column_major"),
         "layout families: interleaved, chunked, column_major (list)")
        ("batch", po::value(&opt.batch)->default_value(16384), "matrices per batch (>= 1)")
        ("nrhs", po::value(&opt.nrhs)->default_value(1), "right-hand sides of potrs and posv (>= 1)")
        ("output", po::value(&opt.output), "the tuning table to write (e.g. libsolver/tuning/sm90.json)")
        ("log", po::value(&opt.log), "every candidate as a JSON line (appended to with --resume)")
        ("resume", po::value(&opt.resume), "finished cases, one JSON line each: read first and skipped, then appended to")
        ("jobs", po::value(&opt.jobs)->default_value(int(hw)), "host threads compiling candidates (NVRTC)")
        ("repeat", po::value(&opt.repeat)->default_value(5), "timed runs per candidate (median; >= 1)")
        ("budget-s", po::value(&opt.budget_s)->default_value(0), "start no case after this many seconds (0: no limit)")
        ("commit", po::value(&opt.commit), "commit recorded in the table (default: $BATCHSOLVE_COMMIT, else the build's)")
        ("device", po::value(&opt.device)->default_value(0), "CUDA device")
        ("seed", po::value(&opt.seed), "seed of the inputs (default: a fresh random one, printed)")
        ("cond", po::value(&opt.cond)->default_value(1e3), "2-norm condition number of the generated matrices")
        ("dry-run", po::bool_switch(&opt.dry_run), "list the candidates per case (no GPU needed) and stop")
        ("exhaustive", po::bool_switch(&opt.exhaustive),
         "search the whole space at every n: none of the measured pruning of the default search "
         "(libsolver/tuning/README.md, \"Measured pruning\": e.g. the largest 3 interleaved tiles above n = 12, "
         "column-major potrf/posv staged kernels only above n = 64 and none up to n = 32) and above n = 32 no "
         "sizes that only time the winners of the anchors (every 4th n) each side; e.g. for the report's figures "
         "or on another GPU")
        ("revisit", po::bool_switch(&opt.revisit),
         "cases already in --resume: time their winner against the stages added since (column-major: the "
         "interleaved winners through a converted workspace, then the staged kernel; interleaved and "
         "chunked potrf, potrs and posv: the cooperative kernel, then the grid cap of a cooperative winner) and "
         "keep the faster")
        ("revisit-stages", po::value(&revisit_text)->default_value("through,coop,grid,staged"),
         "the stages --revisit runs: through, coop, grid, staged (list)")
        ("skip-stages", po::value(&skip_text)->default_value(""),
         "stages left out of every case (list of unroll, chunk, prefetch, through, coop, grid, staged, "
         "nrhs_block); e.g. through with --candidates-from: the column-major cases then compile no "
         "interleaved kernels")
        ("candidates-from", po::value(&opt.candidates_from),
         "a tuning table: each case not in --resume times only that table's winners (best and runner-up) at its "
         "n and at the --neighbours nearest tuned sizes below and above (e.g. a table tuned at another --batch, or "
         "sizes the table lacks); a case with none of these gets the full search")
        ("neighbours", po::value(&opt.neighbours)->default_value(1),
         "with --candidates-from: tuned sizes each side of n whose winners are candidates too (>= 0)");
    try {
        po::variables_map vm;
        const po::positional_options_description no_positional;
        po::store(po::command_line_parser(argc, argv).options(desc).positional(no_positional).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << desc << "\nExit code: 0 when the run finished (cases left by --budget-s included), 1 on "
                                 "a run-time error, 2 when a winner failed its sanity check (info != 0 or a "
                                 "non-finite solution), 255 for bad options.\n";
            return 0;
        }
        opt.routines = parse_list<Routine>("routine", routines_text, parse_routine);
        opt.precisions = parse_list<Precision>("precision", precisions_text, parse_precision);
        opt.families = parse_list<Family>("layout", layouts_text, parse_family);
        opt.ns = parse_int_list("n", n_text, 1);
        opt.revisit_stages = parse_list<std::string>("revisit-stages", revisit_text, [](const std::string& t) {
            if (std::find(kRevisitStages.begin(), kRevisitStages.end(), t) == kRevisitStages.end())
                throw UsageError("revisit-stages", t, "must be one of " + joined(kRevisitStages, ", "));
            return t;
        });
        if (!skip_text.empty())
            opt.skip_stages = parse_list<std::string>("skip-stages", skip_text, [](const std::string& t) {
                if (std::find(kSkippableStages.begin(), kSkippableStages.end(), t) == kSkippableStages.end())
                    throw UsageError("skip-stages", t, "must be one of " + joined(kSkippableStages, ", "));
                return t;
            });
        std::sort(opt.ns.begin(), opt.ns.end());  // small n first: their kernels compile fastest
        if (opt.batch < 1) throw UsageError("batch", std::to_string(opt.batch), "must be >= 1");
        if (opt.nrhs < 1) throw UsageError("nrhs", std::to_string(opt.nrhs), "must be >= 1");
        if (opt.repeat < 1) throw UsageError("repeat", std::to_string(opt.repeat), "must be >= 1");
        if (opt.jobs < 1) throw UsageError("jobs", std::to_string(opt.jobs), "must be >= 1");
        if (opt.neighbours < 0) throw UsageError("neighbours", std::to_string(opt.neighbours), "must be >= 0");
        if (opt.device < 0) throw UsageError("device", std::to_string(opt.device), "must be >= 0");
        if (!(opt.budget_s >= 0)) throw UsageError("budget-s", std::to_string(opt.budget_s), "must be >= 0");
        if (!(opt.cond >= 1) || !std::isfinite(opt.cond))
            throw UsageError("cond", std::to_string(opt.cond), "must be a finite number >= 1");
        if (!opt.dry_run && opt.output.empty()) throw UsageError("output", "", "a tuning table file is required");
        if (!vm.count("seed")) opt.seed = (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
        if (!vm.count("commit")) {
            const char* env = std::getenv("BATCHSOLVE_COMMIT");
            opt.commit = env != nullptr && *env != '\0' ? env : BATCHSOLVE_TESTER_COMMIT;
        }
    } catch (const std::exception& e) {
        std::cerr << "autotune: " << e.what() << "\n(autotune --help lists the options)\n";
        return kUsageError;
    }

    const std::string command = quoted_command_line(argc, argv);
    try {
        if (opt.dry_run) return dry_run(opt);
        if (!Context::cuda_available()) {
            std::printf("autotune: skipped: no GPU (CUDA backend %s)\n",
                        Context::cuda_compiled() ? "compiled" : "not compiled");
            return 0;
        }
        const validation::GpuProperties gpu = validation::gpu_properties(opt.device);
        std::printf("batchsolve autotune, commit %s, %s\ncommand: %s\n", opt.commit.c_str(), utc_now().c_str(),
                    command.c_str());
        std::printf("GPU: %s (%d SMs, sm_%d%d, L2 %.1f MiB), CUDA runtime %s; %d compile threads; seed %llu, "
                    "batch %d, repeat %d\n",
                    gpu.name.c_str(), gpu.sm_count, gpu.cc_major, gpu.cc_minor, gpu.l2_bytes / 1048576.0,
                    cuda_version_text(gpu.runtime_version).c_str(), opt.jobs, static_cast<unsigned long long>(opt.seed),
                    opt.batch, opt.repeat);
        Tuner tuner(opt, gpu, command);
        return tuner.run();
    } catch (const std::exception& e) {
        std::cerr << "autotune: " << e.what() << "\n";
        return 1;
    }
}
