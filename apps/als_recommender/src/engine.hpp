// The half-iteration of ALS behind one interface, with a CPU engine (OpenMP + BLAS + the reference
// posv) and a CUDA engine (cuBLAS Gram matrix, a gather kernel, the batched posv), so that the
// training loop never knows which one runs.
//
// One half-iteration solves, for every row r of `rows` (a user, or an item), the s x s system
//   implicit:  (G + sum_j (c_rj - 1) d_j d_j^T + lambda I) x_r = sum_j c_rj d_j,     G = D^T D
//   explicit:  (sum_j d_j d_j^T + lambda max(n_r, 1) I) x_r = sum_j (v_rj - o_j) d_j  (ALS-WR)
// where j runs over the row's entries, d_j is row j of the other side's factors D, c_rj (implicit)
// or v_rj (explicit) the prepared value of the entry. With biases (explicit only) the factors carry
// their bias in the last of the s columns: d_j is the other side's row with that column replaced by
// 1 and o_j is the bias it held, so x_r's last entry is this side's bias. A system that is not
// positive definite (lambda = 0 on an empty row) yields x_r = 0 and is counted.
//
// Distributed training (several devices of one process, or MPI ranks): each engine owns contiguous
// ranges of users and items (a Partition), holds only those rows' ratings in its memory, and solves
// only those rows. The Gram matrix is summed from each partition's own rows of the other side, and
// the solved rows are exchanged after each half-iteration, through an Exchange (NCCL or host memory
// within a process, MPI between ranks). With no partition an engine does exactly what it did alone.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ratings.hpp"

namespace als {

// How the systems are stored for the batched solver (the GPU engine measures both).
enum class SystemLayout { column_major, interleaved, chunked };
SystemLayout parse_layout(const std::string& text);
const char* to_string(SystemLayout l);

// How the CUDA engine accumulates each row's sum_j w_j d_j d_j^T: fp32, FP32 multiply-adds on a 4 x 4
// tile of the lower triangle per thread; tf32x3, tensor-core 16 x 16 x 8 products of the staged rows
// with each operand split into a TF32 high part and a TF32 remainder (hi*hi + hi*lo + lo*hi), which
// keeps the products' error at FP32 level; tf32, the same tiles with one TF32 product per step (inputs
// rounded to 10 mantissa bits, sums in FP32: the error of TF32, about 1e-3 relative per product);
// tf32x3_blocked, the tf32x3 arithmetic restructured: each staged entry scaled by sqrt|w_j| and split
// into its TF32 parts once (not once per tile that reads it), each warp a 32 x 32 block of the lower
// triangle (every operand fragment feeds four products), and the next entries' rows gathered with
// cp.async while the current ones are multiplied (the default: 1.47x tf32x3's build at k = 128 and 2.16x
// at 256 on an H200, the models within 1.2e-5, results/2026-12-03-h200-8936072-als-designs). The CPU
// engine always accumulates in FP32.
enum class BuildKernel { fp32, tf32x3, tf32, tf32x3_blocked };
BuildKernel parse_build_kernel(const std::string& text);
const char* to_string(BuildKernel b);

// How the CUDA engine forms the implicit Gram matrix G = D^T D of the other side's factors (one s x s
// matrix from all its rows): syrk, cuBLAS SSYRK (one call over every row); split, the rows cut into
// parts whose 64 x 64 tiles of D^T D are FP32 sums of their own, then added part by part in a fixed
// order (no atomics: the same bits every run), so that a tall D (138,493 x 64) spreads over the GPU.
enum class GramKernel { syrk, split };
GramKernel parse_gram_kernel(const std::string& text);
const char* to_string(GramKernel g);

// How each row's system is solved: exact, Cholesky (posv) of the built system; cg, a few conjugate-
// gradient steps started from the row's current factors, A applied through the row's entries (the
// system is never formed), as Takacs et al. 2011 and `implicit` do. CPU engine only.
enum class Solver { exact, cg };
Solver parse_solver(const std::string& text);
const char* to_string(Solver s);

// How the CUDA engine solves each slice of built systems: posv, the library's posv_batched (generated
// kernels up to width 241, cuSOLVER's potrfBatched/potrsBatched beyond); vbatched, the library's
// potrf_vbatched (blocked: panel kernels and batched GEMM updates across the whole slice) and two
// trsm_vbatched triangular solves, at any width; fused, each row's system built by the tf32x3-blocked
// kernel in shared memory and solved there by the same thread block (Cholesky, two triangular solves),
// never stored (the lower triangle packed by columns in the staging area: widths up to 256), on
// sides whose longest row has at most 131,072 entries (the block takes the whole row, the rows
// launched longest first); other sides run the chosen build and posv; fused-blocked, the same with the
// Cholesky factorisation blocked by panels of 16 columns (the trailing update from register tiles).
// On an H200 both fused forms lose to the build + posv at k = 64, 128 and 256 (the in-block Cholesky
// waits at its barriers: results/2026-12-03-h200-8936072-als-designs), vbatched ties cuSOLVER at 256
// and loses to the generated kernels at 128. two-level: each system as 2 x 2
// blocks of orders s / 2 and s - s / 2, the diagonal blocks by the generated potrf/potrs kernels, the
// off-diagonal block by trsm_vbatched, the Schur complement by syrk_vbatched (column-major only).
// tiled: one system per thread block, its lower triangle in registers as 8 x 8 tiles (one a thread;
// width 256: 528 tiles, 17 warps), factored right-looking by tile columns with the forward solve riding
// along, then the backward solve; only x is written (widths up to 256, any layout). tiled-prefetch:
// the same with resident blocks that loop over the slice, each gathering its next system into shared
// memory by cp.async while it factors the current one. automatic (train's default, "auto"): tiled at
// the column-major widths where it was measured faster than posv (kTiledWidths), posv elsewhere;
// resolve_solve_kernel turns it into one of the others before an engine sees it.
enum class SolveKernel { posv, vbatched, fused, fused_blocked, two_level, tiled, tiled_prefetch, automatic };
SolveKernel parse_solve_kernel(const std::string& text);
const char* to_string(SolveKernel s);
// The widths "auto" solves tiled (column-major): results/2026-12-04-h200-07b8848-als-k256 measured
// the tiled solve against the shipped path on the ML-20M shape at k = 128 (0.0169 vs posv's 0.0272 s
// of solve per iteration) and 256 (0.1151 vs two-level's 0.2046, cuSOLVER's posv 0.3695), models
// agreeing to 1.2e-5. Other widths are unmeasured and keep posv.
inline constexpr int kTiledWidths[] = {128, 256};
SolveKernel resolve_solve_kernel(SolveKernel kernel, int width, SystemLayout layout);

class CudaWarmup;

struct EngineSettings {
    int width = 64;             // s: factors per row, including the bias column when biases is on
    bool implicit = true;
    bool biases = false;        // explicit only
    float lambda = 0.01f;
    SystemLayout layout = SystemLayout::column_major;
    int chunk_size = 32;        // chunked layout only
    // Systems built and solved at once are limited to this many bytes of matrices (GPU: bounds its
    // memory on very large batches; 0: everything at once).
    std::uint64_t slice_bytes = 0;
    // train's default slices (TrainOptions::slice_bytes 0): the warm-up prepares kernels for the same.
    static constexpr std::uint64_t kDefaultGpuSliceBytes = std::uint64_t(4) << 30, kDefaultCpuSliceBytes = std::uint64_t(1) << 30;
    int device = 0;             // CUDA engine: the device it runs on
    BuildKernel build = BuildKernel::tf32x3_blocked;  // CUDA engine only
    GramKernel gram = GramKernel::split;      // CUDA engine only
    SolveKernel solve_kernel = SolveKernel::posv;  // CUDA engine only
    // CUDA engine, sides of several slices: the next slice's systems are built on a second stream into
    // a second slice of memory while the current slice is solved, so that the build kernels (tensor
    // cores, gathers of the other side's rows) and the solver's (FP32 arithmetic on systems held in
    // registers or shared memory) share the GPU instead of taking turns; twice the slice memory.
    bool overlap = false;
    // With overlap: the builds' stream at the device's greatest priority, so that a build's blocks are
    // dispatched ahead of a solve's waiting ones (the solve fills what the build leaves); else both
    // streams at the default priority (each kernel's blocks in launch order, the other in its tail).
    bool builds_first = false;
    Solver solver = Solver::exact;
    int cg_steps = 3;                         // Solver::cg: steps per row and half-iteration
    // CUDA engine: the set-up already started beside the reading of the ratings (start_cuda_warmup);
    // the engine takes its context, cuBLAS handle and prepared kernels when they match its device.
    std::shared_ptr<CudaWarmup> warmup;
};

struct HalfTiming {
    double build_s = 0, solve_s = 0;
    double gram_s = 0;        // of build_s: the implicit Gram matrix (GPU; the CPU engine counts it in build_s only)
    double exchange_s = 0;    // distributed: Gram all-reduce and factor all-gather (0 alone)
    // EngineSettings::overlap: of build_s + solve_s, the time both ran at once (the half-iteration's
    // device time is build_s + solve_s - overlap_s; 0 without overlap).
    double overlap_s = 0;
    std::int64_t failed = 0;  // systems that were not positive definite (their rows set to 0)
};

// Rows [first, first + count) of one side.
struct RowRange {
    std::int64_t first = 0, count = 0;
};

// How the partitions of a distributed training share results: one object per partition, every call
// made by every partition in the same order (collectives). Memory is the engine's: device memory
// of the CUDA engine (`stream`: its cudaStream_t, work ordered after what the engine queued), host
// memory of the CPU engine (stream nullptr). Failures throw Error; a partition that cannot go on
// calls abort() so that the others throw instead of waiting for it.
class Exchange {
public:
    virtual ~Exchange() = default;
    // data (n floats) becomes the sum over the partitions' data.
    virtual void allreduce_sum(float* data, std::size_t n, void* stream) = 0;
    // Partition p's rows [ranges[p].first, + count) of `factors` (rows x width) reach every partition.
    virtual void allgather_rows(float* factors, const std::vector<RowRange>& ranges, int width, void* stream) = 0;
    virtual void abort(const std::string& why) { (void)why; }
    virtual std::string name() const = 0;  // "NCCL", "host memory", "MPI" (for the log)
};

// One engine's part of a distributed training: the ranges of every partition (users and items) and
// which one is its own. The exchange must outlive the engine.
struct Partition {
    int index = 0;
    std::vector<RowRange> users, items;
    Exchange* exchange = nullptr;
};

// Contiguous ranges of rows, one per part, of about equal work: a row costs its entries plus
// width / 3 (the build is O(entries * width^2), the solve O(width^3 / 3)). Parts may be empty.
std::vector<RowRange> partition_rows(const Csr& m, int parts, int width);
// Error unless the ranges cover each side in order, one per part, and index names one of them.
void check_partition(const Csr& by_user, const Csr& by_item, const Partition& partition);

class Engine {
public:
    virtual ~Engine() = default;
    // Factors of both sides, row-major (rows x width), in and out of the engine's memory.
    virtual void set_factors(const std::vector<float>& users, const std::vector<float>& items) = 0;
    virtual void get_factors(std::vector<float>& users, std::vector<float>& items) = 0;
    virtual HalfTiming solve_users() = 0;  // against the item factors
    virtual HalfTiming solve_items() = 0;  // against the user factors
    virtual std::string device() const = 0;
    // Peak bytes of device memory the engine held (0 for the CPU engine).
    virtual std::uint64_t peak_device_bytes() const { return 0; }
    // What the run's log should say about how the engine ran ("" when nothing): CUDA, solves that ran
    // a stand-in kernel while the table's compiled.
    virtual std::string notes() const { return ""; }
};

// by_user and by_item hold the prepared values (confidence c for implicit, rating minus the global
// mean for explicit) and must stay alive as long as the engine. With a partition the engine solves
// and holds (CUDA: uploads) only the partition's own rows of each; without, every row.
std::unique_ptr<Engine> make_cpu_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings,
                                        const Partition* partition = nullptr);
// Throws Error "built without CUDA" in a CPU-only build, and, before any work, when the data and
// workspace would not fit in the GPU's memory (naming the bytes needed and available).
std::unique_ptr<Engine> make_cuda_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings,
                                         const Partition* partition = nullptr);
bool cuda_engine_available();  // compiled in and a device present
int cuda_device_count();       // 0 without CUDA or a device
std::uint64_t cuda_free_bytes(int device);  // free memory of a CUDA device (0 without CUDA)
// Tears down the device's primary context (cudaDeviceReset; errors ignored): the last use of the GPU
// in a process that then ends, so that the driver's work at the exit is done beside the host's.
void cuda_release_device(int device);

// Bytes the CUDA engine needs for this problem (CSR on both sides, factors, one slice of systems,
// right-hand sides, info), for the up-front check and --help text; with a partition, its own rows'.
std::uint64_t cuda_engine_bytes(const Csr& by_user, const Csr& by_item, const EngineSettings& settings,
                                const Partition* partition = nullptr);

// Several devices of this process (CUDA device ids, or CPU members for tests: each a partition of
// its own with the host's threads), one host thread each per half-iteration; the exchange is NCCL
// between GPUs when libnccl loads (else host memory), host memory between CPU members and between
// partitions that share a GPU (a device named twice: tests the partitioned path on one GPU). The result
// equals one engine's to rounding (the Gram matrix is summed in another order).
std::unique_ptr<Engine> make_multi_device_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings,
                                                 bool cuda, const std::vector<int>& devices);

// What the CUDA engine needs before it sees a rating: the device's context and stream, cuBLAS (its
// first SSYRK), the engine's own kernels loaded and the solver's kernels for systems of this width
// and the slices of `users` and `items` rows started (cuda_engine::SolverKernels: each compiles on a
// thread of its own, the first ready one stands in for the others). Started on a
// thread of its own, so that it runs while the ratings file is read; make_cuda_engine waits for it
// and takes it over. Errors are kept and rethrown by the engine that takes it. Without CUDA: nullptr.
std::shared_ptr<CudaWarmup> start_cuda_warmup(const EngineSettings& settings, std::int64_t users, std::int64_t items);
// Seconds the warm-up ran on its thread and what it did ("context, cuBLAS, 2 solver kernels (disk
// cache)"), once an engine has taken it; 0 and "" before.
double cuda_warmup_seconds(const CudaWarmup& warmup);
std::string cuda_warmup_summary(const CudaWarmup& warmup);

// Copies between engine memory (device memory when `device_memory`) and host memory, ordered on
// `stream` (the CUDA engine's); plain memcpy for host memory. For exchanges that stage through the host.
void engine_copy_to_host(void* host, const void* engine_memory, std::size_t bytes, bool device_memory, void* stream);
void engine_copy_from_host(void* engine_memory, const void* host, std::size_t bytes, bool device_memory, void* stream);

}  // namespace als
