// One case of the tester's sweep (routine, precision, layout, uplo, n, batch, nrhs): inputs, timed
// runs of the library and of the references, checks on the host, and the figures of one output row.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "batchsolve/context.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::validation {

namespace peer {
class CusolverDx;
}

// The library's routine enumeration (tuning.hpp), its names and its parser ("potrf" | "potrs" |
// "posv"; anything else is InvalidArgument naming "routine").
using Routine = batchsolve::Routine;
using batchsolve::parse_routine;
using batchsolve::to_string;

// The standard operation counts per matrix (potrf n^3/3, potrs 2 n^2 per right-hand side, posv
// both; real flops, so complex counts four times), and the bytes a perfect implementation moves
// per matrix (the triangle read and written for potrf, read once for potrs, B read and written).
double flops_per_matrix(Routine r, Precision p, int n, int nrhs);
double roofline_bytes_per_matrix(Routine r, Precision p, int n, int nrhs);

struct CaseSpec {
    Routine routine = Routine::potrf;
    Precision precision = Precision::s;
    LayoutKind layout = LayoutKind::column_major;
    int chunk = 32;  // chunked layout only
    Uplo uplo = Uplo::lower;
    int n = 0;
    int batch = 0;
    int nrhs = 0;                  // 0 for potrf
    Backend backend = Backend::cpu;  // resolved: cpu or cuda
    std::uint64_t seed = 0;
};

// What is common to every case of one tester run.
struct Settings {
    int repeat = 10;
    int warmup = 1;
    bool check = false;
    double tolerance = 30;
    double cond = 1e3;
    // Matrices generated per case; a larger batch repeats them. Generation costs O(n^3) host time per
    // matrix (n = 128: about 1.4 ms of one core), about 100 s on 16 cores for the column-major
    // routines at n = 8..128 and batch 100000; the kernels' time does not depend on the values.
    int distinct = 16384;
    bool fast_math = false;     // the library's GPU kernels with CholeskyConfig::fast_math (approximate sqrt/division)
    std::vector<std::string> refs;  // "lapack", "cusolver", "cusolverdx", ..., in the order asked for
    // The timing of cuSolverDx's benchmark, for every GPU row of a run with --ref cusolverdx: before each
    // timed call its one input set is restored and the L2 is flushed by reading a buffer twice its size,
    // then the call is queued behind them (no synchronisation between) and timed by events. Otherwise:
    // rotated input sets, restored and flushed once per round, the GPU idle before each call.
    bool restore_each_call = false;
    peer::CusolverDx* cusolverdx = nullptr;  // --ref cusolverdx: the program that times the peer
    double bandwidth = 0;       // measured device copy bandwidth, bytes/s (0: none)
    std::size_t l2_bytes = 0;   // device L2 size, sizes the rotated input sets
    // The host's GEMM rates (GFLOP/s, s and d; 0: not measured, --cpu-peak): the bound of the CPU rows'
    // roofline column (c and z rows use s and d: their flops are counted in real operations).
    double cpu_peak_s = 0, cpu_peak_d = 0;
};

struct Timing {
    double median_ms = 0;
    std::vector<double> samples_ms;
    int sets = 0;  // input sets rotated
};

struct RefResult {
    std::string name;     // "lapack" | "lapack1" | "cpu" | "cpu-lapacke" | "cusolver" | "cusolverdx"
    bool ran = false;
    std::string note;     // why not, or what went wrong (non-zero info, ...)
    Timing timing;
    double gflops = 0;
    int info_failures = 0;
    // A peer timed by a program of its own (cusolverdx): what it ran and its own check of the result.
    std::string config;   // the configuration that was timed (cuSolverDx: the fastest that passed its check)
    std::string layout;   // its layout, where it is not the row's (cuSolverDx: column-major only)
    double self_error = -1;  // its error in its own units (< 0: none)
    std::vector<std::pair<std::string, double>> figures;  // further figures it reported (suggested_ms, ...)
};

enum class Status { ok, failed, skipped };

struct CaseResult {
    Status status = Status::ok;
    std::string note;          // reason for skipped / failed
    bool ran = false;          // the library call ran and was timed
    Timing timing;
    double gflops = 0;
    double roofline = -1;      // GPU rows: fraction of the copy bandwidth; CPU rows: of the GEMM peak; < 0: none
    double bytes = 0;          // roofline bytes of the whole batch
    bool checked = false;
    double error = 0;          // factorization error (potrf) or solve backward error (potrs, posv)
    bool compared = false;
    double vs_lapack = 0;      // scaled difference from the lapack result
    int info_failures = 0;
    std::vector<RefResult> refs;
    KernelReport kernel;       // the generated kernel the library ran (GPU rows; supported = false otherwise)
};

// The seed of a case's inputs, derived from the run's seed: rows of the same precision, n and batch
// (other layouts, routines, uplo) see the same matrices.
std::uint64_t case_seed(std::uint64_t run_seed, Precision p, int n, int batch);

// The inputs of the last case, kept for the next one when only the layout or the backend changes
// (generating 16384 matrices of n = 128 takes seconds).
struct InputCache {
    CaseSpec key;
    std::shared_ptr<const void> inputs;
};

// The generated kernel the library's plain routine runs for this case on `gpu` (compiled now, or
// found in the caches): name, configuration and the compiler's resource use. Not supported where
// cuSOLVER runs instead.
KernelReport kernel_report(const CaseSpec& spec, Context& gpu);

// Runs one case. `cpu` is a Context(Backend::cpu); `gpu` is null when no GPU is usable.
CaseResult run_case(const CaseSpec& spec, const Settings& settings, Context& cpu, Context* gpu, InputCache& cache);

}  // namespace batchsolve::validation
