// The tester's routines beyond batched potrf/potrs/posv (bench.hpp): large-matrix Cholesky, the LDL^T
// solvers, the variable-size BLAS-3 and triangular routines, the several-device solver. Each family
// (suite_<family>.cpp) turns the tester's options into cases, times our routine and the peers that
// --ref asks for, and hands every case to the tester as one Row, printed and written like the others.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace batchsolve::validation::suite {

// What every family reads from the command line. A list the user left at its default is empty here,
// and each family then uses its own default (documented in --help).
struct Options {
    std::vector<std::string> precisions;  // "s", "d", "c", "z"
    std::vector<int> ns;                  // orders (large, ldlt, multi) or largest sizes (vbatched)
    std::vector<int> batches;             // problems per call (vbatched, multi)
    std::vector<int> nrhs;
    std::vector<std::string> refs;        // the peers asked for, in order
    int repeat = 10, warmup = 1;
    double tolerance = 30;                // the bound of the scaled errors (units per family, see Row::error)
    double cond = 0;                      // 0: the family's default
    std::uint64_t seed = 0;
    int device = 0;
    bool check = false;                   // --check (the families always measure errors; this adds host checks)
    bool gpu = false;                     // a usable GPU is present
    bool cuda_backend = false;            // the library runs on the GPU (else the CPU backend, where a family has one)
    // Family options (tester --help, "routine options").
    int cpu_max = 8192;                   // large: largest n the CPU peers run
    double cpu_seconds = 60;              // large: time box of all CPU peer runs
    bool split = false;                   // large: potrf_large's time split panel / TRSM / update
    std::string matrix_file;              // ldlt: also a complex symmetric matrix from this HDF5 file
    std::vector<std::string> setups;      // vbatched, triangular: size set-ups
    int cpu_max_vbatched = 512;           // vbatched: largest x of the cpu peer
    bool all_variants = false;            // also the variant rows besides the default configuration
    std::vector<std::string> designs;     // posv_mixed: only these design rows ("auto" the default one; empty: all)
    bool sweep = false;                   // potrf_large, gemm/syrk_vbatched: a row per configuration of the search space
    std::string sweep_configs;            // gemm/syrk_vbatched --sweep: the candidates from this JSON file (else built in)
    std::string device_ids = "all";       // multi: device ids (groups of the first g of them, g = 1 .. count)
    int tile = 256;                       // multi_gesv: columns per tile (cuSOLVERMg's widest)
    int host_batch = 200000;              // multi: batch of the host-resident mode
    std::vector<std::string> modes;       // multi: device, host
    int distinct = 4096;                  // multi: distinct matrices
};

// One peer's figures beside a row.
struct Peer {
    std::string name;     // as --ref names it, or a more precise label ("cusolver ZCgesv")
    bool ran = false;
    double ms = 0, gflops = 0;
    double error = NAN;   // in the row's units, NaN when not measured
    std::string note;
};

enum class Status { ok, failed, skipped };

struct Row {
    std::string routine, precision;
    std::string shape;    // e.g. "n=4096 nrhs=1", "x=256 count=2000 gemm"
    std::string variant;  // "" for the default configuration
    int n = 0, batch = 1, nrhs = 0;
    bool ran = false;
    double ms = 0, gflops = 0, flops = 0;
    double roofline = -1;           // fraction of the bound named in roofline_basis, < 0: none
    std::string roofline_basis;     // e.g. "cublasDgemm rate at order 8192, same run"
    bool checked = false;
    double error = NAN;             // scaled error (error_definition), compared with Options::tolerance
    std::string error_definition;
    Status status = Status::ok;
    std::string note;
    std::vector<Peer> peers;
    nlohmann::json detail = nlohmann::json::object();  // the family's own figures (names as its results use)
};

using Sink = std::function<void(Row&&)>;

// The families; `routine` is one of the names routines_of returns. Each throws std::exception only for
// problems of the whole run (a bad option value); a case's problem is its row's status and note.
void run_large(const std::string& routine, const Options& o, const Sink& sink);
void run_ldlt(const std::string& routine, const Options& o, const Sink& sink);
void run_vbatched(const std::string& routine, const Options& o, const Sink& sink);
void run_triangular(const std::string& routine, const Options& o, const Sink& sink);
void run_multi(const std::string& routine, const Options& o, const Sink& sink);  // multi_posv, multi_gesv

// The family of a routine name, or "" when it is none of these.
std::string family_of(const std::string& routine);
// The peers --ref may name for a routine (for the error message of a wrong --ref).
std::vector<std::string> peers_of(const std::string& routine);

// Helpers shared by the families.
inline double median(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size();
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}
inline bool wants(const Options& o, const std::string& ref) {
    return std::find(o.refs.begin(), o.refs.end(), ref) != o.refs.end();
}
// Marks a row failed when its error is not below the tolerance (NaN fails), with a note.
inline void judge(Row& r, double tolerance) {
    if (!r.checked) return;
    if (!(r.error < tolerance)) {
        r.status = Status::failed;
        r.note += std::string(r.note.empty() ? "" : "; ") + "error above tolerance";
    }
}

}  // namespace batchsolve::validation::suite
