// Kernel configurations of the batched Cholesky routines (tile size, looking order, unrolling, block
// shape) and the expert entry points that take one explicitly; the autotuner sweeps these.
//
// The plain routines of cholesky.hpp pick a configuration from the tuning table of the device (or a
// safe default); the overloads below run exactly the configuration given, which is how the autotuner
// times candidates and how an expert pins a kernel. The CPU backend accepts and ignores the config.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "batchsolve/batch.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve {

// Order in which the tiles of the factorisation are visited (Dongarra et al., Proc. IEEE 2018, §IV):
// right: factor a tile column, then update the whole trailing matrix (eager);
// left:  update the current tile column from all columns to its left, then factor it (lazy);
// top:   row-wise; update a tile row from the rows above it, then factor its diagonal tile.
enum class Looking { left, right, top };

inline const char* to_string(Looking l) {
    switch (l) {
        case Looking::left: return "left";
        case Looking::right: return "right";
        case Looking::top: return "top";
    }
    return "?";
}

// The routines a kernel configuration is for.
enum class Routine { potrf, potrs, posv };

inline const char* to_string(Routine r) {
    switch (r) {
        case Routine::potrf: return "potrf";
        case Routine::potrs: return "potrs";
        case Routine::posv: return "posv";
    }
    return "?";
}

inline Routine parse_routine(const std::string& text) {
    if (text == "potrf") return Routine::potrf;
    if (text == "potrs") return Routine::potrs;
    if (text == "posv") return Routine::posv;
    throw InvalidArgument("parse_routine", "routine", "one of potrf, potrs, posv (got '" + text + "')");
}

inline Looking parse_looking(const std::string& text) {
    if (text == "left") return Looking::left;
    if (text == "right") return Looking::right;
    if (text == "top") return Looking::top;
    throw InvalidArgument("parse_looking", "text", "one of left, right, top (got '" + text + "')");
}

// One point of the search space. The interleaved kernels run one thread per matrix and use nb,
// looking, full_unroll, threads_per_block, fast_math, nrhs_block and max_registers; interleaved
// potrf, potrs and posv also take warps_per_matrix = 2, 4 or 8: the cooperative kernels, where that
// many warps share the tile rows of 32 matrices (threads_per_block is then 32 * warps_per_matrix;
// the factorisation is left-looking), and grid_blocks_per_sm. matrices_per_block, rows_per_thread
// and threads_per_row belong to the column-major kernels and must be 0 for interleaved layouts.
struct CholeskyConfig {
    int nb = 0;                  // tile size 1..n (n % nb != 0: a narrower last tile); 0 = the library default
                                 // for n (then looking and full_unroll are the default's too). Column-major
                                 // kernels: potrf/posv the update chunk (staged: the panel width); potrs the
                                 // steps of a substitution whose columns are loaded ahead, 1..8
    Looking looking = Looking::top;
    bool full_unroll = false;    // false: loops over tiles stay loops, tile operations are straight-line code
    int chunk_size = 0;          // 0: as the view's layout says; else must equal the chunked view's chunk size
    int threads_per_block = 128;
    int warps_per_matrix = 0;
    // Cooperative kernels: launch at most this many blocks per multiprocessor, each looping over groups
    // of 32 matrices (0: one block per group, as many resident as fit). Fewer groups in flight keep
    // what a group reads first (potrs: L in the forward pass; potrf: the tiles left-looking re-reads)
    // in L2 until it is read again.
    int grid_blocks_per_sm = 0;
    int matrices_per_block = 0;
    bool fast_math = false;      // approximate rsqrt/reciprocal instead of IEEE sqrt and division
    int nrhs_block = 1;          // potrs/posv: right-hand sides solved together (kept in registers)
    int max_registers = 0;       // per-thread register cap handed to the compiler; 0 = compiler's choice
    // Column-major kernels: each thread keeps rows_per_thread rows of a matrix, each row split over
    // threads_per_row threads (0 = the library default for n and precision).
    int rows_per_thread = 0;
    int threads_per_row = 0;
    // Column-major layouts only: convert the uplo triangle (and B) into an interleaved workspace, run
    // the interleaved kernel of this configuration (nb, looking, full_unroll, threads_per_block,
    // nrhs_block) and convert back; the conversions are part of the call's time. The tuner picks it
    // where the interleaved kernel's speed pays for the two extra passes over the triangle.
    bool through_interleaved = false;
    // Column-major layouts only: stage each matrix's triangle in shared memory (asynchronous copies).
    // potrf and posv factorise it there, blocked right-looking: panels of nb columns (nb <= 32; one
    // warp factors the diagonal block with shuffles, the group's threads solve the panel and update
    // the trailing matrix in register tiles). posv then solves from the factor in shared memory, and
    // potrs (no nb) stages the factor and solves from there, so L is read once; one right-hand side
    // per warp at a time. warps_per_matrix warps per matrix, matrices_per_block matrices per block.
    // Wins at large n, where one matrix's registers no longer hold it.
    bool staged = false;
    // Staged potrf and posv in double precision only: the trailing update of each panel runs on the
    // FP64 tensor cores (mma.sync m8n8k4: a warp updates an 8 x 8 tile of the trailing triangle per
    // instruction sequence, 4 columns of the panel per mma) instead of each thread's register tile.
    // The same products and sums, in another order: results differ from the scalar update by
    // rounding only. Devices before sm_80 (no FP64 mma) run the same text with shuffles.
    bool tensor_cores = false;
    // posv on the interleaved layouts only (also through_interleaved): > 0 runs posv as two kernels
    // instead of the fused one -- the factorisation of this configuration (potrf's kernel: nb, looking,
    // warps_per_matrix, ...), then the cooperative potrs kernel with solve_warps_per_matrix = 2, 4 or 8
    // warps per 32 systems, tile solve_nb (0: its default) and this configuration's nrhs_block and
    // fast_math. The solve skips the matrices whose info is not 0, so B of a failed matrix stays
    // untouched, as with the fused kernel. Above n ~ 64 the fused kernel must use one tile size and
    // warp count for both phases, and potrf and potrs tuned apart were faster than it (run 42, H100:
    // d interleaved n = 100, fused 1.48x potrf's time, the two kernels 1.24x).
    int solve_warps_per_matrix = 0;
    int solve_nb = 0;
    // Column-major potrf's rows kernel (one row per lane: rows_per_thread = threads_per_row = 1,
    // looking = left, n = 4, 8, 16, 32) and the square-grid kernel (below) only; any other kernel
    // refuses it. The rows kernel: each lane addresses its row from
    // one base pointer stepped by lda (no 64-bit offset per element held in registers), and without
    // max_registers the launch bounds leave the register count to the compiler (no minimum of blocks).
    // The same arithmetic and memory accesses; fewer registers, more resident matrices per SM.
    // Column-major potrf and posv on a square thread grid (the square-grid kernel): its lean step loop
    // -- no branch around a step (a failed pivot freezes the matrix through a zero scale; info
    // and the frozen contents as without it for finite entries), no row guards where the side divides
    // n, the step's column read as 16-byte vectors, one scaling per product (rounding differs slightly);
    // posv substitutes its first right-hand side forward within the elimination.
    bool lean_addressing = false;
    // Column-major potrf and posv on a square thread grid only (the square-grid kernel; any other kernel
    // refuses it): the kernel text takes lda = n, so every element of a thread's share sits at a
    // compile-time offset from one pointer (no run-time stride walk). A call whose lda is not n runs the
    // same configuration with this off (lda at run time). The same arithmetic and memory accesses.
    bool compile_time_ld = false;
};

// The fields of CholeskyConfig in their serialised order, one F(field) each: equality, to_string,
// parse_config, the tuning tables' reader and the autotuner's writer all walk this list, so a new
// field is added here and in the struct, nowhere else.
#define BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(F)                                                          \
    F(nb) F(looking) F(full_unroll) F(chunk_size) F(threads_per_block) F(warps_per_matrix)             \
    F(grid_blocks_per_sm) F(matrices_per_block) F(fast_math) F(nrhs_block) F(max_registers)            \
    F(rows_per_thread) F(threads_per_row) F(through_interleaved) F(staged) F(tensor_cores)             \
    F(solve_warps_per_matrix) F(solve_nb) F(lean_addressing) F(compile_time_ld)

inline bool operator==(const CholeskyConfig& a, const CholeskyConfig& b) {
#define BATCHSOLVE_CONFIG_FIELD_EQUAL(field) \
    if (!(a.field == b.field)) return false;
    BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_CONFIG_FIELD_EQUAL)
#undef BATCHSOLVE_CONFIG_FIELD_EQUAL
    return true;
}
inline bool operator!=(const CholeskyConfig& a, const CholeskyConfig& b) { return !(a == b); }

// One-line JSON object of every field in BATCHSOLVE_CHOLESKY_CONFIG_FIELDS order, e.g.
// {"nb":8,"looking":"top","full_unroll":false,...}; stable, so it doubles as a key in tuning tables
// and logs.
std::string to_string(const CholeskyConfig& c);

// The inverse of to_string(CholeskyConfig): fields left out keep their defaults; a field of the
// wrong type or a bad value throws InvalidArgument naming the field.
CholeskyConfig parse_config(const std::string& json_object);

// Expert entry points: as in cholesky.hpp, but with the kernel configuration fixed by the caller.
// A configuration that cannot run this problem (nb > n, a chunk size that contradicts the view, a
// block too large, ...) throws InvalidArgument naming the config field.
template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig& config, Context& ctx);

template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, const CholeskyConfig& config,
                   Context& ctx);

template <class T>
void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, const CholeskyConfig& config,
                  Context& ctx);

// potrs with the factor in a non-const view (T deduced from both views).
template <class T, class = std::enable_if_t<!std::is_const_v<T>>>
void potrs_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, const CholeskyConfig& config,
                   Context& ctx) {
    potrs_batched<T>(uplo, BatchView<const T>(a), b, config, ctx);
}

// What the kernel of a call would be, compiled (or loaded from the disk cache) without running it:
// lets a tuner compile its candidates in parallel and keep NVRTC out of timed loops, and reports the
// compiler's resource use. `shape` describes the call (layout, n, count, chunk size; its pointers are
// not read); `nrhs` is ignored by potrf. `supported` is false (with the reason in `note`) where the
// configuration cannot run this problem or the call would not reach a generated kernel (CPU backend,
// n beyond the generated kernels, where cuSOLVER runs).
struct KernelReport {
    bool supported = false;
    std::string note;
    std::string name;            // the generated kernel's name
    std::string config;          // the resolved configuration, to_string(CholeskyConfig)
    int registers = 0;           // per thread
    int local_bytes = 0;         // local memory per thread: > 0 means spills or a stack
    int threads_per_block = 0;   // of the launch
    int blocks_per_sm = 0;       // resident blocks per multiprocessor (occupancy calculator)
    bool from_disk_cache = false;
    double compile_seconds = 0;  // NVRTC time of the kernel when this process compiled it (repeated by
                                 // later calls that reuse it; 0 when it came from the disk cache)
};

template <class T>
KernelReport prepare_kernel(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                            const CholeskyConfig& config, Context& ctx);
template <class T>
KernelReport prepare_kernel(const std::string& routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                            const CholeskyConfig& config, Context& ctx);
// The same for the configuration the plain routines of cholesky.hpp would run for this call (the
// tuning table's entry, else the default): what a benchmark reports next to its timings, and a way
// to compile a program's kernels ahead of its first call.
template <class T>
KernelReport prepare_kernel(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs, Context& ctx);
template <class T>
KernelReport prepare_kernel(const std::string& routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                            Context& ctx);
// Both with the shape given as a non-const view (T deduced from it).
template <class T, class = std::enable_if_t<!std::is_const_v<T>>>
KernelReport prepare_kernel(const std::string& routine, Uplo uplo, const BatchView<T>& shape, int nrhs,
                            const CholeskyConfig& config, Context& ctx) {
    return prepare_kernel<T>(routine, uplo, BatchView<const T>(shape), nrhs, config, ctx);
}
template <class T, class = std::enable_if_t<!std::is_const_v<T>>>
KernelReport prepare_kernel(const std::string& routine, Uplo uplo, const BatchView<T>& shape, int nrhs, Context& ctx) {
    return prepare_kernel<T>(routine, uplo, BatchView<const T>(shape), nrhs, ctx);
}


// "" when the CUDA backend's generated kernels can run `config` for `routine` on this shape (layout,
// n, count, chunk size; pointers not read) with nrhs right-hand sides, else "config.<field>: <reason>"
// (or "n: <reason>" where n is beyond the generated kernels). No GPU needed; the device's own limits
// (shared memory per block) are checked at the call. CPU-only builds throw NotCompiled.
template <class T>
std::string config_problem(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                           const CholeskyConfig& config);
// Throws InvalidArgument("check_config", "config.<field>", reason) where config_problem is not "".
template <class T>
void check_config(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs, const CholeskyConfig& config);

// Bytes of Context::workspace that a call of `routine` on this shape takes (0 for most calls; the
// column-major calls that run through the interleaved kernels convert slices of the batch into it,
// cuSOLVER's interleaved calls too). Ask once and call ctx.workspace(bytes) before a timed loop: a
// call finds its workspace large enough and neither frees nor allocates. The first form is for the
// configuration the plain routines pick (tuning table, else default), the second for `config`.
template <class T>
std::size_t workspace_bytes(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs, Context& ctx);
template <class T>
std::size_t workspace_bytes(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                            const CholeskyConfig& config, Context& ctx);

// One call for warm_up: the routine, precision, layout family and sizes the kernels are chosen by.
struct KernelCase {
    Routine routine = Routine::potrf;
    Precision precision = Precision::d;
    LayoutKind layout = LayoutKind::column_major;  // column_major and pointer_array share kernels
    Uplo uplo = Uplo::lower;
    int n = 1;
    int nrhs = 1;         // ignored by potrf
    int count = 16384;    // the batch size (tuning tables are per batch class; interleaved offsets)
    int chunk_size = 0;   // chunked_interleaved: the chunk width
};

struct WarmUpReport {
    int cases = 0;
    int kernels = 0;             // distinct generated kernels of the cases
    int already_cached = 0;      // found in the disk cache
    int compiled = 0;            // generated and compiled now
    int without_kernels = 0;     // cases that run cuSOLVER (or nothing): no generated kernel
    std::vector<std::string> problems;  // "<case>: <reason>" for cases whose configuration cannot run
    double seconds = 0;
};

// Compiles into the disk kernel cache ($BATCHSOLVE_CACHE_DIR, see the README) the generated kernels
// that the plain routines would run for each case on this context's GPU (the tuning table's
// configuration, else the default), on up to `threads` threads, so that a later process finds them
// there on its first call. Nothing is loaded or launched. Needs a CUDA context; throws NotCompiled in a
// CPU-only build and Error when the disk cache is disabled.
WarmUpReport warm_up(const std::vector<KernelCase>& cases, int threads, Context& ctx);
// The same for a GPU architecture (compute capability, e.g. 90) without a device: what a build machine
// runs to ship prebuilt kernels (the CMake option BATCHSOLVE_PREBUILT_KERNELS; a library finds them in
// $BATCHSOLVE_PREBUILT_DIR, else in <prefix>/share/batchsolve/kernels, when its own cache misses).
WarmUpReport warm_up_for_arch(const std::vector<KernelCase>& cases, int arch, int threads);
std::string to_string(const KernelCase& c);  // "potrf d column_major lower n=32 nrhs=1 count=16384"

// ---- the tuning tables of every family --------------------------------------------------------------
// One form for every family (libsolver/tuning/README.md): JSON tables per GPU architecture
// (libsolver/tuning/sm<arch>*.json) and one for the CPU backend (cpu.json), each with its provenance
// (device, CUDA version, date, commit), compiled into the library; BATCHSOLVE_TUNING_FILE replaces,
// for each family that its files hold entries of, every embedded table of that family. A case that no
// table has runs the family's safe default (the initialisers of the structs below, GemmConfig{},
// and for small Cholesky the kernels' default).

// The architecture the shipped GPU tables are for (sm_90: H100, H200); queries without a device use it.
inline constexpr int kShippedTuningArch = 90;

// LDL^T (ldlt.hpp) on the GPU: the factorisation runs right-looking over block columns of panel_order
// (each factored by the recursion), and a TF32 trailing update of a triangle of order <= update_leaf
// is one SYRK (above: two half triangles and a TF32 GEMM between them). Safe default: the H200
// measurements the kernels were written with (results/2026-11-26-h200-12f7b85-ldlt-sysv-bench).
struct LdltBlocking {
    int panel_order = 512;
    int update_leaf = 512;
};
// TRSM (vbatched_triangular.hpp), TrsmAlgorithm::automatic: the inversion-based algorithm for
// triangles of order >= inversion_from_order, else the recursive one. Safe default: always recursive.
struct TrsmCrossover {
    int inversion_from_order = 1 << 30;
};
// The CPU backend's vector Cholesky: the largest order it takes (real precisions); above it the
// LAPACKE loop runs. Safe default 128, where the vector path measured faster in both precisions.
struct CpuSwitchOver {
    int simd_max_order = 128;
};

// What the tables say for one case, as the library's dispatch reads it.
struct TunedEntry {
    bool found = false;       // false: no table has the case; `config` is the family's safe default
    std::string family;       // cholesky, gemm, large, ldlt, trsm, cpu, mixed
    std::string config;       // the configuration, one-line JSON of the family's fields
    int n = 0;                // the entry's n: small Cholesky the case's n, the others the upper end of
                              // the size class the entry covers
    std::string table;        // the answering table's provenance: file, device, CUDA, date, commit, batch
    std::string provenance;   // the entry's own note where it has one (which measurement), else ""
};
// routine: potrf, potrs, posv (layout: its family; n exact; count: the batch, which picks among
// tables tuned at several batch sizes), gemm_vbatched or gemm_vbatched_triangle (n = max(max_m,
// max_n)), potrf_large, sytrf_nopiv, trsm_vbatched (n: the largest triangle's order),
// cpu_vector_path (arch ignored: the CPU's table) and posv_mixed (its automatic chain); arch: compute capability (90 for sm_90). An
// unknown routine throws InvalidArgument naming it.
TunedEntry tuned_config(const std::string& routine, Precision precision, LayoutKind layout, int n, int arch,
                        int count = 16384);
// The typed answers the dispatch uses (table entry, else the safe default).
LdltBlocking tuned_ldlt_blocking(Precision precision, int n, int arch);
TrsmCrossover tuned_trsm_crossover(Precision precision, int order, int arch);
CpuSwitchOver tuned_cpu_switch_over(Precision precision);
// Provenance of every table in use ("" when none), one per line: for reports beside timings.
std::string tuning_tables_in_use();

}  // namespace batchsolve
