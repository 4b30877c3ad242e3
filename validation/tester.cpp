// tester: accuracy and speed of batchsolve's routines against their peers (LAPACK, cuSOLVER, cuBLAS, our
// CPU backend) over a sweep of cases, one aligned row per case as it finishes, optional JSON and
// targets report; exit code = failed rows. potrf/potrs/posv run here and in bench.cpp; the other
// routines in their families (suite.hpp).
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <atomic>
#include <chrono>
#include <set>

#include <omp.h>
#include <unistd.h>

#include "batchsolve/batchsolve.hpp"
#include "bench.hpp"
#include "command_line.hpp"
#include "cusolverdx_peer.hpp"
#include "gpu.hpp"
#include "peers.hpp"
#include "suite.hpp"

#ifndef BATCHSOLVE_TESTER_COMMIT
#define BATCHSOLVE_TESTER_COMMIT "unknown"
#endif

namespace po = boost::program_options;
using nlohmann::json;
using namespace batchsolve;
using namespace batchsolve::validation;

namespace {

constexpr std::size_t kBandwidthBytes = std::size_t(1) << 30;  // size of the copy that measures bandwidth
constexpr int kBandwidthRepeats = 5;
// The launch floor: samples (odd, for a plain median) and warm-ups of the empty-kernel launch, and its
// block size (one warp: launch latency hardly depends on it; the grid has one block per SM).
constexpr int kLaunchFloorSamples = 101;
constexpr int kLaunchFloorWarmups = 5;
constexpr int kLaunchFloorThreads = 32;
constexpr int kUsageError = 255;

std::string number_text(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

std::string layout_text(const CaseSpec& c) {
    return c.layout == LayoutKind::chunked_interleaved ? "chunked:" + std::to_string(c.chunk) : to_string(c.layout);
}

std::string format(const char* fmt, double v) {
    char text[64];
    std::snprintf(text, sizeof text, fmt, v);
    return text;
}

// Rates from 0.001 to 50,000 GFLOP/s in one column: three significant digits or more.
std::string rate(double v) { return format(v >= 1000 ? "%.0f" : v >= 10 ? "%.1f" : "%.3f", v); }

// ---- the table ------------------------------------------------------------------------------------

struct Column {
    std::string title;
    int width;
    bool left;
};

class Table {
public:
    explicit Table(const std::vector<std::string>& refs) {
        columns_ = {{"routine", 7, true}, {"prec", 4, true}, {"layout", 13, true}, {"uplo", 5, true},
                    {"n", 5, false},      {"batch", 8, false}, {"nrhs", 4, false},  {"dev", 4, true},
                    {"time_ms", 11, false}, {"GFLOP/s", 10, false}, {"roofline", 8, false}};
        for (const std::string& r : refs) {
            columns_.push_back({r + "_ms", std::max<int>(11, int(r.size()) + 3), false});
            columns_.push_back({r + "_GF/s", std::max<int>(10, int(r.size()) + 5), false});
            columns_.push_back({"x_" + r, std::max<int>(7, int(r.size()) + 2), false});
        }
        columns_.push_back({"error", 9, false});
        columns_.push_back({"diff_lapack", 11, false});
        columns_.push_back({"regs/spill/occ", 15, false});
    }
    std::string header() const {
        std::vector<std::string> cells;
        for (const Column& c : columns_) cells.push_back(c.title);
        return line(cells) + "  status";
    }
    std::string line(const std::vector<std::string>& cells) const {
        std::string out;
        for (std::size_t i = 0; i < columns_.size() && i < cells.size(); ++i) {
            const Column& c = columns_[i];
            std::string cell = cells[i];
            if (int(cell.size()) < c.width) {
                const std::string pad(c.width - cell.size(), ' ');
                cell = c.left ? cell + pad : pad + cell;
            }
            out += (i ? " " : "") + cell;
        }
        return out;
    }

private:
    std::vector<Column> columns_;
};

std::string status_text(const CaseResult& r) {
    std::string text = r.status == Status::ok ? "ok" : r.status == Status::failed ? "FAILED" : "skipped";
    if (!r.note.empty()) text += r.status == Status::skipped ? ": " + r.note : " (" + r.note + ")";
    for (const RefResult& ref : r.refs)
        if (!ref.note.empty() && ref.note != "not run" && ref.note != "no GPU")  // the header says so
            text += " [" + ref.name + ": " + ref.note + "]";
    return text;
}

// Registers per thread, spilled bytes per thread, and occupancy (resident threads per SM over the
// most a multiprocessor holds), e.g. "96/0/25%".
int max_threads_per_sm = 0;  // of the GPU in use, set once in main
std::string kernel_resources(const KernelReport& k) {
    const int occupancy = max_threads_per_sm > 0 ? 100 * k.blocks_per_sm * k.threads_per_block / max_threads_per_sm : 0;
    return std::to_string(k.registers) + "/" + std::to_string(k.local_bytes) + "/" + std::to_string(occupancy) + "%";
}

std::string row_text(const Table& table, const CaseSpec& c, const CaseResult& r) {
    const std::string dash = "-";
    std::vector<std::string> cells = {to_string(c.routine), std::string(1, precision_letter(c.precision)),
                                      layout_text(c), to_string(c.uplo), std::to_string(c.n),
                                      std::to_string(c.batch), c.routine == Routine::potrf ? dash : std::to_string(c.nrhs),
                                      to_string(c.backend)};
    cells.push_back(r.ran ? format("%.4f", r.timing.median_ms) : dash);
    cells.push_back(r.ran ? rate(r.gflops) : dash);
    cells.push_back(r.ran && r.roofline >= 0 ? format("%.3f", r.roofline) : dash);
    for (const RefResult& ref : r.refs) {
        cells.push_back(ref.ran ? format("%.4f", ref.timing.median_ms) : dash);
        cells.push_back(ref.ran ? rate(ref.gflops) : dash);
        cells.push_back(ref.ran && r.ran && r.timing.median_ms > 0
                            ? format("%.2f", ref.timing.median_ms / r.timing.median_ms) : dash);
    }
    cells.push_back(r.checked ? format("%.2e", r.error) : dash);
    cells.push_back(r.compared ? format("%.2e", r.vs_lapack) : dash);
    cells.push_back(r.kernel.supported ? kernel_resources(r.kernel) : dash);
    return table.line(cells) + "  " + status_text(r);
}

// ---- JSON -----------------------------------------------------------------------------------------

json number_or_null(bool present, double v) { return present && std::isfinite(v) ? json(v) : json(nullptr); }

json timing_json(const Timing& t) {
    return {{"time_ms", t.median_ms}, {"times_ms", t.samples_ms}, {"sets", t.sets}};
}

// launch_floor_ms: the measured launch floor (0: none).
json row_json(const CaseSpec& c, const CaseResult& r, const Settings& s, double launch_floor_ms) {
    json row = {{"routine", to_string(c.routine)},
                {"precision", std::string(1, precision_letter(c.precision))},
                {"layout", to_string(c.layout)},
                {"uplo", to_string(c.uplo)},
                {"n", c.n},
                {"batch", c.batch},
                {"nrhs", c.routine == Routine::potrf ? 0 : c.nrhs},
                {"backend", to_string(c.backend)},
                {"seed", c.seed},
                {"status", r.status == Status::ok ? "ok" : r.status == Status::failed ? "FAILED" : "skipped"},
                {"note", r.note},
                {"flops", flops_per_matrix(c.routine, c.precision, c.n, c.nrhs) * c.batch},
                {"bytes", r.bytes}};
    if (c.layout == LayoutKind::chunked_interleaved) row["chunk"] = c.chunk;
    if (r.ran) row.update(timing_json(r.timing));
    row["gflops"] = number_or_null(r.ran, r.gflops);
    row["roofline"] = number_or_null(r.ran && r.roofline >= 0, r.roofline);
    // The memory roofline as GFLOP/s: flops per byte times the measured copy bandwidth.
    row["roofline_gflops"] = number_or_null(s.bandwidth > 0 && r.bytes > 0,
                                            double(row["flops"]) / r.bytes * s.bandwidth / 1e9);
    // The largest roofline fraction a call timed alone could reach: its event-timed duration is at
    // least the launch floor, however little the kernel does.
    const double roofline_ms = s.bandwidth > 0 ? r.bytes / s.bandwidth * 1e3 : 0;
    row["roofline_ceiling"] = number_or_null(c.backend == Backend::cuda && roofline_ms > 0 && launch_floor_ms > 0,
                                             roofline_ms / std::max(roofline_ms, launch_floor_ms));
    row["error"] = number_or_null(r.checked, r.error);
    row["diff_lapack"] = number_or_null(r.compared, r.vs_lapack);
    row["info_failures"] = r.info_failures;
    json refs = json::object();
    for (const RefResult& ref : r.refs) {
        json j = {{"ran", ref.ran}, {"note", ref.note}};
        if (ref.ran) {
            j.update(timing_json(ref.timing));
            j["gflops"] = ref.gflops;
            j["info_failures"] = ref.info_failures;
            j["speedup"] = number_or_null(r.ran && r.timing.median_ms > 0, ref.timing.median_ms / r.timing.median_ms);
        }
        if (!ref.config.empty()) j["config"] = ref.config;
        if (!ref.layout.empty()) j["layout"] = ref.layout;
        if (ref.self_error >= 0 || std::isnan(ref.self_error)) j["self_error"] = number_or_null(true, ref.self_error);
        for (const auto& [name, value] : ref.figures) j[name] = value;
        refs[ref.name] = j;
    }
    row["refs"] = refs;
    if (r.kernel.supported)
        row["kernel"] = {{"name", r.kernel.name}, {"config", json::parse(r.kernel.config)},
                         {"registers", r.kernel.registers}, {"local_bytes", r.kernel.local_bytes},
                         {"threads_per_block", r.kernel.threads_per_block}, {"blocks_per_sm", r.kernel.blocks_per_sm},
                         {"occupancy", max_threads_per_sm > 0 ? double(r.kernel.blocks_per_sm) *
                                                                    r.kernel.threads_per_block / max_threads_per_sm
                                                              : 0.0}};
    return row;
}

// bench_cusolverdx: which program, what it holds, and (once it ran) how and what it printed.
json peer_json(const peer::CusolverDx& dx) {
    json j = {{"program", dx.program()}, {"version", dx.version()}, {"configurations", dx.configurations()},
              {"orders", dx.orders()}, {"layout", "column_major, ld = n, lower"}, {"ran", dx.ran()}};
    if (!dx.command().empty())
        j.update({{"command", dx.command()}, {"exit_code", dx.exit_code()}, {"seconds", dx.seconds()},
                  {"header", dx.header_lines()}, {"output", dx.output()}});
    if (!dx.why().empty()) j["note"] = dx.why();
    return j;
}

// The folder of this executable (the GPU bundle's bin/ there), where bench_cusolverdx may sit beside it.
std::string executable_folder() {
    char path[4096];
    const ssize_t len = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (len <= 0) return ".";
    const std::string self(path, std::size_t(len));
    const std::size_t slash = self.rfind('/');
    return slash == std::string::npos ? "." : self.substr(0, slash);
}

void write_json(const std::string& path, const json& doc) {
    std::ofstream out(path);
    if (!out) throw std::runtime_error("cannot open --json file '" + path + "' for writing");
    out << doc.dump(2) << '\n';
    if (!out) throw std::runtime_error("cannot write --json file '" + path + "'");
}

// ---- rows of the other families (suite.hpp) ------------------------------------------------------

std::string suite_status_text(const suite::Row& r) {
    std::string text = r.status == suite::Status::ok ? "ok" : r.status == suite::Status::failed ? "FAILED" : "skipped";
    if (!r.note.empty()) text += r.status == suite::Status::skipped ? ": " + r.note : " (" + r.note + ")";
    for (const suite::Peer& p : r.peers)
        if (!p.ran && !p.note.empty()) text += " [" + p.name + ": " + p.note + "]";
    return text;
}

std::string pad(const std::string& text, int width, bool left) {
    if (int(text.size()) >= width) return text;
    const std::string fill(width - text.size(), ' ');
    return left ? text + fill : fill + text;
}

// The header of a group of rows: the common columns, then time and ratio per peer.
std::string suite_header(const suite::Row& r) {
    std::string h = pad("routine", 14, true) + " " + pad("prec", 4, true) + " " + pad("case", 26, true) + " " +
                    pad("variant", 9, true) + " " + pad("time_ms", 11, false) + " " + pad("GFLOP/s", 10, false) + " " +
                    pad("roofline", 8, false);
    for (const suite::Peer& p : r.peers)
        h += " " + pad(p.name + "_ms", std::max<int>(11, int(p.name.size()) + 3), false) + " " +
             pad("x_" + p.name, std::max<int>(7, int(p.name.size()) + 2), false);
    return h + " " + pad("error", 9, false) + "  status";
}

std::string suite_line(const suite::Row& r) {
    const std::string dash = "-";
    std::string l = pad(r.routine, 14, true) + " " + pad(r.precision, 4, true) + " " + pad(r.shape, 26, true) + " " +
                    pad(r.variant.empty() ? "default" : r.variant, 9, true) + " " +
                    pad(r.ran ? format("%.4f", r.ms) : dash, 11, false) + " " +
                    pad(r.ran ? rate(r.gflops) : dash, 10, false) + " " +
                    pad(r.ran && r.roofline >= 0 ? format("%.3f", r.roofline) : dash, 8, false);
    for (const suite::Peer& p : r.peers)
        l += " " + pad(p.ran ? format("%.4f", p.ms) : dash, std::max<int>(11, int(p.name.size()) + 3), false) + " " +
             pad(p.ran && r.ran && r.ms > 0 ? format("%.2f", p.ms / r.ms) : dash, std::max<int>(7, int(p.name.size()) + 2),
                 false);
    return l + " " + pad(r.checked ? format("%.2e", r.error) : dash, 9, false) + "  " + suite_status_text(r);
}

// The same keys as row_json where they mean the same (routine, precision, n, batch, nrhs, time_ms, gflops,
// roofline, error, status, refs{name: time_ms, gflops, speedup}), the family's own figures under "detail".
json suite_json(const suite::Row& r) {
    json row = {{"routine", r.routine}, {"precision", r.precision}, {"case", r.shape}, {"variant", r.variant},
                {"n", r.n}, {"batch", r.batch}, {"nrhs", r.nrhs},
                {"status", r.status == suite::Status::ok ? "ok" : r.status == suite::Status::failed ? "FAILED" : "skipped"},
                {"note", r.note}, {"flops", r.flops}};
    if (r.ran) row["time_ms"] = r.ms;
    row["gflops"] = number_or_null(r.ran, r.gflops);
    row["roofline"] = number_or_null(r.ran && r.roofline >= 0, r.roofline);
    row["roofline_basis"] = r.roofline_basis;
    row["error"] = number_or_null(r.checked, r.error);
    row["error_definition"] = r.error_definition;
    json refs = json::object();
    for (const suite::Peer& p : r.peers) {
        json j = {{"ran", p.ran}, {"note", p.note}};
        if (p.ran) {
            j["time_ms"] = p.ms;
            j["gflops"] = p.gflops;
            j["speedup"] = number_or_null(r.ran && r.ms > 0, p.ms / r.ms);
            j["error"] = number_or_null(std::isfinite(p.error), p.error);
        }
        refs[p.name] = j;
    }
    row["refs"] = refs;
    row["detail"] = r.detail;
    return row;
}

// ---- targets -------------------------------------------------------------------------------------

// A target: rows selected by routine (and optionally precision, n, batch, variant), a metric of those
// rows, a comparison and a value. Metrics: "speedup:<peer>" (peer time / our time), "gflops",
// "roofline", "time_ms", "error". Each selected row gives one entry of targets.json.
json evaluate_targets(const json& definitions, const json& rows) {
    json out = json::array();
    for (const json& t : definitions) {
        for (const char* key : {"routine", "metric", "op", "value"})
            if (!t.contains(key)) throw std::runtime_error(std::string("target without \"") + key + "\": " + t.dump());
        const std::string metric = t["metric"], op = t["op"];
        if (op != ">=" && op != "<=") throw std::runtime_error("target op must be >= or <=: " + t.dump());
        const double value = t["value"];
        bool any = false;
        for (const json& row : rows) {
            if (row["routine"] != t["routine"]) continue;
            bool selected = true;
            for (const char* key : {"precision", "n", "batch", "variant", "layout"})
                if (t.contains(key) && (!row.contains(key) || row[key] != t[key])) selected = false;
            if (!selected) continue;
            any = true;
            double measured = NAN;
            if (metric.rfind("speedup:", 0) == 0) {
                const std::string peer = metric.substr(8);
                if (row["refs"].contains(peer) && row["refs"][peer].contains("speedup") && row["refs"][peer]["speedup"].is_number())
                    measured = row["refs"][peer]["speedup"];
            } else if (row.contains(metric) && row[metric].is_number()) {
                measured = row[metric];
            }
            const bool met = row["status"] == "ok" && std::isfinite(measured) && (op == ">=" ? measured >= value : measured <= value);
            json entry = {{"target", t}, {"routine", row["routine"]}, {"precision", row["precision"]}, {"n", row["n"]},
                          {"batch", row["batch"]}, {"measured", number_or_null(std::isfinite(measured), measured)},
                          {"met", met}, {"row_status", row["status"]}};
            if (row.contains("variant")) entry["variant"] = row["variant"];
            if (row.contains("layout")) entry["layout"] = row["layout"];
            out.push_back(entry);
        }
        if (!any) out.push_back({{"target", t}, {"measured", nullptr}, {"met", false}, {"row_status", "no row"}});
    }
    return out;
}

// Compiles the generated kernels of every GPU case on `jobs` host threads (each with a context of its
// own) before anything is timed: NVRTC needs 0.1-10 s per kernel, which one after another would
// dominate a run on a cold cache. Problems are left for the case itself to report.
void prepare_kernels(const std::vector<CaseSpec>& cases, int jobs, int device) {
    std::vector<CaseSpec> distinct;
    std::set<std::string> seen;
    for (const CaseSpec& c : cases) {
        const std::string key = std::string(to_string(c.routine)) + precision_letter(c.precision) +
                                to_string(c.layout) + to_string(c.uplo) + "," + std::to_string(c.n) + "," +
                                std::to_string(c.batch) + "," + std::to_string(c.nrhs) + "," + std::to_string(c.chunk);
        if (seen.insert(key).second) distinct.push_back(c);
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::atomic<std::size_t> next{0};
    std::atomic<int> compiled{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < std::min<int>(jobs, int(distinct.size())); ++t)
        pool.emplace_back([&] {
            try {
                Context ctx(Backend::cuda, device);
                for (std::size_t i; (i = next++) < distinct.size();) {
                    try {
                        const KernelReport k = kernel_report(distinct[i], ctx);
                        compiled += k.supported && !k.from_disk_cache && k.compile_seconds > 0;
                    } catch (const std::exception&) {
                    }
                }
            } catch (const std::exception&) {
            }
        });
    for (std::thread& t : pool) t.join();
    std::printf("kernels of %zu cases prepared on %d threads in %.1f s (%d compiled by NVRTC, the rest cached)\n\n",
                distinct.size(), jobs,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), int(compiled));
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description desc(
        "tester: batchsolve's routines against their peers, one row per case.\n"
        "Routines: potrf, potrs, posv (batched, fixed n); potrf_large, potrs_large, posv_mixed (one large matrix);\n"
        "sytrf_nopiv, sysv_mixed (symmetric indefinite); gemm_vbatched, syrk_vbatched, syr2k_vbatched,\n"
        "symm_vbatched, trsm_vbatched, trmm_vbatched, potrf_vbatched (variable sizes); multi_posv, multi_gesv\n"
        "(several devices).\n"
        "Lists: comma-separated values or first:last[:step] ranges, e.g. --n 4:128:4 or --n 8,16,32.\n"
        "Where --precision, --n, --batch or --cond are not given, a routine outside potrf/potrs/posv uses\n"
        "its own defaults (validation/README.md).\n"
        "Options");
    std::string routines_text, precisions_text, n_text, batch_text, layouts_text, uplo_text, nrhs_text, backend_text,
        refs_text, json_path, targets_path, targets_out, setups_text, designs_text, devices_text, modes_text;
    suite::Options so;
    bool cpu_peak = false;
    Settings settings;
    int chunk = 32, device = 0;
    int jobs = int(std::max(1u, std::thread::hardware_concurrency()));
    std::uint64_t seed = 0;
    std::string cusolverdx_path;
    double cusolverdx_seconds = 300;
    std::string timing_text;
    desc.add_options()
        ("help,h", "this help")
        ("routine", po::value(&routines_text)->default_value("potrf"), "routines (list; see above)")
        ("precision", po::value(&precisions_text)->default_value("s,d"), "s, d, c, z (list)")
        ("n", po::value(&n_text)->default_value("8,16,32,64,100,128"), "matrix sizes (list, >= 0)")
        ("batch", po::value(&batch_text)->default_value("16384"), "matrices per batch (list, >= 1)")
        ("layout", po::value(&layouts_text)->default_value("column_major"),
         "column_major, pointer_array, interleaved, chunked (list)")
        ("chunk", po::value(&chunk)->default_value(32), "chunk size of the chunked layout (>= 1)")
        ("uplo", po::value(&uplo_text)->default_value("lower"), "lower, upper (list)")
        ("nrhs", po::value(&nrhs_text)->default_value("1"), "right-hand sides for potrs, posv (list, >= 0)")
        ("backend", po::value(&backend_text)->default_value("auto"), "auto, cpu, cuda: what runs the library")
        ("check", po::bool_switch(&settings.check), "compute errors on the host (and compare with lapack)")
        ("cpu-peak", po::bool_switch(&cpu_peak),
         "measure the host's GEMM rate (OpenBLAS, all threads): the CPU rows' roofline column is then their fraction of it")
        ("fast-math", po::bool_switch(&settings.fast_math),
         "GPU kernels with approximate square roots and divisions (the tuned configuration otherwise)")
        ("ref", po::value(&refs_text)->default_value(""),
         "peers to run (list): lapack (LAPACKE per matrix, one matrix per OpenMP thread, BLAS on one thread; "
         "*_large: one call, BLAS on every thread), lapack1 (the same loop on one thread), cpu (batchsolve's CPU "
         "backend), cpu-lapacke (the CPU backend with its vector path off, BATCHSOLVE_CPU_SIMD=off: its LAPACKE loop), "
         "cusolverdx (NVIDIA cuSolverDx's best configuration, potrf/posv s/d lower, column-major, timed by its "
         "benchmark bench_cusolverdx as a child process once per run; every GPU row is then timed its way: one "
         "input set restored and the L2 flushed by a read before each call; see --cusolverdx), "
         "cusolver (cuSOLVER alone in the timed region: potrfBatched/potrsBatched, Xpotrf/Xpotrs, "
         "getrf, sytrf, the IRS gesv solvers; potrfBatched per distinct size for potrf_vbatched), cublas-grouped "
         "(gemm_vbatched: grouped GEMM), cublas (trsm_vbatched: trsmBatched per distinct size; the other "
         "*_vbatched: one call per problem over 16 streams), cublas-streams (trsm_vbatched: one trsm per problem "
         "over 16 streams), one-device (multi_*); --check compares with lapack's result")
        ("cusolverdx", po::value(&cusolverdx_path),
         "the cuSolverDx benchmark program for --ref cusolverdx (default: $BATCHSOLVE_CUSOLVERDX, else "
         "bench_cusolverdx beside the tester)")
        ("timing", po::value(&timing_text)->default_value("rotate"),
         "how GPU calls are timed: rotate (input sets rotated past the L2, the GPU idle before each call) or "
         "restore-each (one set restored and the L2 flushed by a read before each call, queued behind them: "
         "bench_cusolverdx's method, which --ref cusolverdx implies)")
        ("cusolverdx-seconds", po::value(&cusolverdx_seconds)->default_value(300),
         "time limit of the cuSolverDx benchmark's one run (> 0)")
        ("repeat", po::value(&settings.repeat)->default_value(10), "timed runs per case (median reported, >= 1)")
        ("warmup", po::value(&settings.warmup)->default_value(1), "untimed runs first (>= 0)")
        ("tol", po::value(&settings.tolerance)->default_value(30), "tolerance of the scaled errors (> 0)")
        ("cond", po::value(&settings.cond)->default_value(1e3), "2-norm condition number of the generated matrices")
        ("distinct", po::value(&settings.distinct)->default_value(16384),
         "matrices generated per case (>= 1); a larger batch repeats them (host generation is O(n^3) per matrix)")
        ("seed", po::value(&seed), "seed of the inputs (default: a fresh random one, printed)")
        ("device", po::value(&device)->default_value(0), "CUDA device")
        ("jobs", po::value(&jobs)->default_value(jobs),
         "host threads compiling the generated kernels before the sweep (NVRTC; 0: compile on first call)")
        ("json", po::value(&json_path), "write the header and all rows to this JSON file")
        ("targets", po::value(&targets_path),
         "JSON file of targets (a list of {routine, [precision, n, batch, variant], metric, op, value}; metric: "
         "speedup:<peer>, gflops, roofline, time_ms, error; op: >= or <=): each selected row's measured value and "
         "whether it is met go to --targets-out")
        ("targets-out", po::value(&targets_out)->default_value("targets.json"), "where the targets report goes")
        ("all-variants", po::bool_switch(&so.all_variants),
         "routine option: besides the default configuration, a row per variant (potrf_large: graph; posv_mixed, "
         "sysv_mixed: tf32; trsm_vbatched: recursive, inversion)")
        ("sweep", po::bool_switch(&so.sweep),
         "routine option (potrf_large, gemm_vbatched, syrk_vbatched): a row per configuration of the tuning search "
         "space (the variant column names it) instead of the default configuration")
        ("configs", po::value(&so.sweep_configs),
         "routine option (gemm_vbatched, syrk_vbatched with --sweep): the candidate configurations from this JSON "
         "file, {\"s\": [GemmConfig, ...], \"d\": [...], ...} (a precision without a list: the built-in search space)")
        ("cpu-max", po::value(&so.cpu_max)->default_value(8192), "routine option (*_large): largest n of the CPU peers")
        ("cpu-seconds", po::value(&so.cpu_seconds)->default_value(60),
         "routine option (*_large): time box of all CPU peer runs (an n predicted not to fit is skipped)")
        ("cpu-max-x", po::value(&so.cpu_max_vbatched)->default_value(512),
         "routine option (*_vbatched): largest x of the cpu peer")
        ("split", po::bool_switch(&so.split), "routine option (potrf_large): time split panel / TRSM / update (JSON)")
        ("designs", po::value(&designs_text)->default_value(""),
         "routine option (posv_mixed, potrf_large): only these design rows, comma-separated (posv_mixed: the variant "
         "names without the condition, auto the automatic chain; potrf_large: the table's row and these designs)")
        ("matrix", po::value(&so.matrix_file),
         "routine option (sytrf_nopiv, sysv_mixed): also this complex symmetric matrix (bem solve --write-matrix's HDF5)")
        ("setups", po::value(&setups_text)->default_value(""),
         "routine option (*_vbatched): size set-ups (validation/README.md)")
        ("devices", po::value(&devices_text)->default_value(""),
         "routine option (multi_*): device ids or all (default); rows for the first g of them, g = 1 .. count")
        ("tile", po::value(&so.tile)->default_value(256), "routine option (multi_gesv): columns per tile")
        ("host-batch", po::value(&so.host_batch)->default_value(200000), "routine option (multi_posv): host-mode batch")
        ("modes", po::value(&modes_text)->default_value(""), "routine option (multi_posv): device, host (list)");

    std::vector<Routine> routines;
    std::vector<std::string> suite_routines;
    std::vector<Precision> precisions;
    std::vector<LayoutKind> layouts;
    std::vector<Uplo> uplos;
    std::vector<int> ns, batches, nrhss;
    Backend backend = Backend::automatic;
    json target_definitions;
    try {
        po::variables_map vm;
        const po::positional_options_description no_positional;  // a stray word is an error, not ignored
        po::store(po::command_line_parser(argc, argv).options(desc).positional(no_positional).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << desc << "\nExit code: the number of FAILED rows (at most 255); 255 also for bad options.\n";
            return 0;
        }
        for (const std::string& name : split(routines_text, ',')) {
            if (!suite::family_of(name).empty()) {
                if (std::find(suite_routines.begin(), suite_routines.end(), name) == suite_routines.end())
                    suite_routines.push_back(name);
                continue;
            }
            try {
                const Routine r = parse_routine(name);
                if (std::find(routines.begin(), routines.end(), r) == routines.end()) routines.push_back(r);
            } catch (const InvalidArgument&) {
                throw UsageError("routine", routines_text, "'" + name + "' is not a routine (tester --help lists them)");
            }
        }
        if (routines.empty() && suite_routines.empty()) throw UsageError("routine", routines_text, "no values");
        precisions = parse_list<Precision>("precision", precisions_text, parse_precision);
        layouts = parse_list<LayoutKind>("layout", layouts_text, parse_layout);
        uplos = parse_list<Uplo>("uplo", uplo_text, parse_uplo);
        ns = parse_int_list("n", n_text, 0);
        batches = parse_int_list("batch", batch_text, 1);
        nrhss = parse_int_list("nrhs", nrhs_text, 0);
        try {
            backend = parse_backend(backend_text);
        } catch (const InvalidArgument& e) {
            throw UsageError("backend", backend_text, e.condition());
        }
        // A peer must belong to at least one routine asked for; a routine runs only the peers it has.
        std::vector<std::string> known;
        if (!routines.empty()) known = {"lapack", "lapack1", "cpu", "cpu-lapacke", "cusolver", "cusolverdx"};
        for (const std::string& r : suite_routines)
            for (const std::string& p : suite::peers_of(r))
                if (std::find(known.begin(), known.end(), p) == known.end()) known.push_back(p);
        std::vector<std::string> all_refs;
        if (!refs_text.empty())
            all_refs = parse_list<std::string>("ref", refs_text, [&](const std::string& r) {
                if (std::find(known.begin(), known.end(), r) == known.end()) {
                    std::string list;
                    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
                    throw InvalidArgument("tester", "ref", "'" + r + "' is no peer of these routines (" + list + ")");
                }
                return r;
            });
        for (const std::string& r : all_refs)
            if (r == "lapack" || r == "lapack1" || r == "cpu" || r == "cpu-lapacke" || r == "cusolver" || r == "cusolverdx")
                settings.refs.push_back(r);
        if (timing_text == "restore-each") settings.restore_each_call = true;
        else if (timing_text != "rotate") throw UsageError("timing", timing_text, "must be rotate or restore-each");
        if (!(cusolverdx_seconds > 0)) throw UsageError("cusolverdx-seconds", number_text(cusolverdx_seconds), "must be > 0");
        so.refs = all_refs;
        if (!vm["precision"].defaulted()) so.precisions = split(precisions_text, ',');
        if (!vm["n"].defaulted()) so.ns = ns;
        if (!vm["batch"].defaulted()) so.batches = batches;
        if (!vm["nrhs"].defaulted()) so.nrhs = nrhss;
        if (!vm["cond"].defaulted()) so.cond = settings.cond;
        if (!vm["distinct"].defaulted()) so.distinct = settings.distinct;
        if (!setups_text.empty()) so.setups = split(setups_text, ',');
        if (!designs_text.empty()) so.designs = split(designs_text, ',');
        if (!devices_text.empty()) so.device_ids = devices_text;
        if (!modes_text.empty()) so.modes = split(modes_text, ',');
        if (so.cpu_max < 0) throw UsageError("cpu-max", std::to_string(so.cpu_max), "must be >= 0");
        if (!(so.cpu_seconds >= 0)) throw UsageError("cpu-seconds", number_text(so.cpu_seconds), "must be >= 0");
        if (so.host_batch < 1) throw UsageError("host-batch", std::to_string(so.host_batch), "must be >= 1");
        if (!targets_path.empty()) {
            std::ifstream in(targets_path);
            if (!in) throw UsageError("targets", targets_path, "cannot be read");
            try {
                target_definitions = json::parse(in);
            } catch (const std::exception& e) {
                throw UsageError("targets", targets_path, std::string("not JSON: ") + e.what());
            }
            if (!target_definitions.is_array()) throw UsageError("targets", targets_path, "must hold a JSON list of targets");
        }
        if (chunk < 1) throw UsageError("chunk", std::to_string(chunk), "must be >= 1");
        if (settings.repeat < 1) throw UsageError("repeat", std::to_string(settings.repeat), "must be >= 1");
        if (settings.warmup < 0) throw UsageError("warmup", std::to_string(settings.warmup), "must be >= 0");
        if (!(settings.tolerance > 0)) throw UsageError("tol", number_text(settings.tolerance), "must be > 0");
        if (settings.distinct < 1) throw UsageError("distinct", std::to_string(settings.distinct), "must be >= 1");
        if (!(settings.cond >= 1) || !std::isfinite(settings.cond))
            throw UsageError("cond", number_text(settings.cond), "must be a finite number >= 1");
        if (device < 0) throw UsageError("device", std::to_string(device), "must be >= 0");
        if (jobs < 0) throw UsageError("jobs", std::to_string(jobs), "must be >= 0");
        if (!vm.count("seed")) seed = (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    } catch (const std::exception& e) {
        std::cerr << "tester: " << e.what() << "\n(tester --help lists the options)\n";
        return kUsageError;
    }

    // ---- the machine ------------------------------------------------------------------------------
    // The build's commit, unless BATCHSOLVE_COMMIT names the one the run belongs to (set by
    // scripts/on-gpu.sh, since a bundle may be built before its commit is made).
    const char* commit_override = std::getenv("BATCHSOLVE_COMMIT");
    const std::string commit = commit_override != nullptr && *commit_override != '\0' ? commit_override
                                                                                     : BATCHSOLVE_TESTER_COMMIT;
    const std::string date = utc_now();
    const std::string command_line = quoted_command_line(argc, argv);
    const bool gpu_present = Context::cuda_available();
    const Backend lib_backend = backend == Backend::automatic ? (gpu_present ? Backend::cuda : Backend::cpu) : backend;
    const bool wants_gpu = lib_backend == Backend::cuda ||
                           std::count(settings.refs.begin(), settings.refs.end(), "cusolver") > 0 ||
                           std::count(settings.refs.begin(), settings.refs.end(), "cusolverdx") > 0;
    json gpu_json = {{"present", gpu_present}, {"cuda_compiled", Context::cuda_compiled()}};
    std::unique_ptr<Context> gpu;
    double launch_floor_ms = 0;  // 0: not measured (no GPU)
    Context cpu(Backend::cpu);
    std::cout << "batchsolve tester, commit " << commit << ", " << date << "\n"
              << "command: " << command_line << "\n";
    // ---- the cuSolverDx peer -------------------------------------------------------------------------
    std::unique_ptr<peer::CusolverDx> cusolverdx;
    if (std::count(settings.refs.begin(), settings.refs.end(), "cusolverdx") > 0) {
        settings.restore_each_call = true;  // every GPU row of the run is timed the peer's way
        const std::string folder = executable_folder();
        const std::string program = peer::CusolverDx::locate(cusolverdx_path, folder);
        std::string problem;
        if (program.empty()) {
            problem = "bench_cusolverdx not found (--cusolverdx PATH, $BATCHSOLVE_CUSOLVERDX, or bench_cusolverdx in " +
                      folder + ")";
        } else {
            try {
                cusolverdx = std::make_unique<peer::CusolverDx>(program);
            } catch (const std::exception& e) {
                problem = e.what();
            }
        }
        if (!problem.empty() && gpu_present) {
            std::cerr << "tester: --ref cusolverdx: " << problem << "\n";
            return kUsageError;
        }
        if (cusolverdx) {
            std::vector<char> letters;
            for (Precision p : precisions) letters.push_back(precision_letter(p));
            std::vector<std::string> dx_routines;
            const bool lower = std::count(uplos.begin(), uplos.end(), Uplo::lower) > 0;
            if (lower && std::count(routines.begin(), routines.end(), Routine::potrf)) dx_routines.push_back("potrf");
            if (lower && std::count(routines.begin(), routines.end(), Routine::posv) && std::count(nrhss.begin(), nrhss.end(), 1))
                dx_routines.push_back("posv");
            cusolverdx->plan(letters, ns, std::vector<long long>(batches.begin(), batches.end()), dx_routines,
                             settings.repeat, settings.warmup, cusolverdx_seconds);
            settings.cusolverdx = cusolverdx.get();
            std::printf("cuSolverDx peer: %s: %s, n = %s; %s\n", program.c_str(), cusolverdx->version().c_str(),
                        cusolverdx->orders().c_str(),
                        gpu_present ? "run now, once for the whole sweep; every GPU row timed its way: one input set "
                                      "restored and the L2 flushed by a read before each call"
                                    : "skipped: no GPU");
            // Before this process makes its CUDA context: the peer has the GPU to itself (all its memory,
            // and a GPU in exclusive-process mode would refuse a second process).
            if (gpu_present) {
                std::fflush(stdout);
                const bool ran = cusolverdx->run();
                std::printf("cuSolverDx peer: %s in %.1f s (exit status %d)%s%s\n", ran ? "ran" : "FAILED",
                            cusolverdx->seconds(), cusolverdx->exit_code(), cusolverdx->why().empty() ? "" : ": ",
                            cusolverdx->why().c_str());
                for (const std::string& line : cusolverdx->header_lines()) std::printf("cuSolverDx peer: %s\n", line.c_str());
            }
        } else {
            std::printf("cuSolverDx peer: %s; skipped: no GPU\n", problem.c_str());
        }
    }
    try {
        if (gpu_present) {
            const GpuProperties p = gpu_properties(device);
            gpu_json.update({{"name", p.name}, {"sm_count", p.sm_count},
                             {"compute_capability", std::to_string(p.cc_major) + "." + std::to_string(p.cc_minor)},
                             {"l2_bytes", p.l2_bytes}, {"memory_bytes", p.total_bytes},
                             {"cuda_runtime_version", cuda_version_text(p.runtime_version)},
                             {"cuda_driver_version", cuda_version_text(p.driver_version)}});
            std::printf("GPU: %s (%d SMs, sm_%d%d, L2 %.1f MiB, %.1f GiB), CUDA runtime %s, driver %s\n",
                        p.name.c_str(), p.sm_count, p.cc_major, p.cc_minor, p.l2_bytes / 1048576.0,
                        p.total_bytes / 1073741824.0, cuda_version_text(p.runtime_version).c_str(),
                        cuda_version_text(p.driver_version).c_str());
            gpu = std::make_unique<Context>(Backend::cuda, device);
            settings.l2_bytes = p.l2_bytes;
            max_threads_per_sm = p.max_threads_per_sm;
            const std::size_t bytes = std::min(kBandwidthBytes, gpu_free_bytes() / 4);
            settings.bandwidth = measure_copy_bandwidth(bytes, kBandwidthRepeats, gpu->stream());
            gpu_json["copy_bandwidth_GBps"] = settings.bandwidth / 1e9;
            gpu_json["copy_bandwidth_bytes"] = bytes;
            std::printf("device-to-device copy bandwidth: %.1f GB/s (bytes read + written; median of %d copies of "
                        "%.2f GiB)\n", settings.bandwidth / 1e9, kBandwidthRepeats, bytes / 1073741824.0);
            launch_floor_ms = measure_launch_floor_ms(p.sm_count, kLaunchFloorThreads, kLaunchFloorWarmups,
                                                      kLaunchFloorSamples, gpu->stream());
            gpu_json["launch_floor_us"] = launch_floor_ms * 1e3;
            gpu_json["launch_floor_samples"] = kLaunchFloorSamples;
            gpu_json["launch_floor_blocks"] = p.sm_count;
            gpu_json["launch_floor_threads_per_block"] = kLaunchFloorThreads;
            std::printf("launch floor: %.2f us (median event-timed single launch of an empty kernel, one block per "
                        "SM; %d samples)\n", launch_floor_ms * 1e3, kLaunchFloorSamples);
        } else {
            std::printf("GPU: none (CUDA backend %s)%s\n", Context::cuda_compiled() ? "compiled" : "not compiled",
                        wants_gpu ? "; GPU work is skipped" : "");
        }
    } catch (const std::exception& e) {
        std::cerr << "tester: the GPU is present but unusable: " << e.what() << "\n";
        return kUsageError;
    }
    if (cpu_peak) {
        settings.cpu_peak_s = peer::cpu_gemm_peak_gflops(true, omp_get_max_threads());
        settings.cpu_peak_d = peer::cpu_gemm_peak_gflops(false, omp_get_max_threads());
        std::printf("host GEMM rate (OpenBLAS, %d threads, 2048^3): s %.1f, d %.1f GFLOP/s\n", omp_get_max_threads(),
                    settings.cpu_peak_s, settings.cpu_peak_d);
    }
    const CpuCholeskyPath cpu_path = cpu_cholesky_path();
    const std::string lapack_library = peer::lapack_library();
    std::printf("CPU: %s; batchsolve's CPU backend: vector path %s for real s/d n <= %d/%d, LAPACKE per matrix "
                "otherwise; LAPACK peer: LAPACKE per matrix, one matrix per thread (BLAS: %s)\n",
                cpu.device_name().c_str(), cpu_path.isa.c_str(), cpu_path.simd_max_order_s, cpu_path.simd_max_order_d,
                lapack_library.c_str());
    // Unbound OpenMP threads make CPU timings bimodal from process to process: now and then two threads
    // share a CPU and every parallel region waits out a scheduler slice (a 0.3 ms call then takes ~7 ms
    // in every repeat). Say so where it applies, so a reader of the figures knows which they got.
    const char* omp_bind = std::getenv("OMP_PROC_BIND");
    const char* omp_places = std::getenv("OMP_PLACES");
    const std::string omp_binding = std::string("OMP_PROC_BIND=") + (omp_bind ? omp_bind : "unset") +
                                    " OMP_PLACES=" + (omp_places ? omp_places : "unset");
    if (!omp_bind || std::string(omp_bind) == "false")
        std::printf("OpenMP threads unbound (%s): CPU times can differ by a scheduler slice from one process to "
                    "the next; OMP_PROC_BIND=close OMP_PLACES=cores binds one thread per core\n", omp_binding.c_str());
    std::printf("seed %llu, cond %g, distinct matrices %d, tolerance %g, repeat %d (median), warm-up %d, check %s\n\n",
                static_cast<unsigned long long>(seed), settings.cond, settings.distinct, settings.tolerance,
                settings.repeat, settings.warmup, settings.check ? "on" : "off");

    json doc = {{"header",
                 {{"tester", "batchsolve validation/tester"},
                  {"git_commit", commit},
                  {"date", date},
                  {"command_line", command_line},
                  {"gpu", gpu_json},
                  {"cpu", {{"threads", cpu_path.threads},
                           {"backend_simd_isa", cpu_path.isa},
                           {"backend_simd_max_order", {{"s", cpu_path.simd_max_order_s}, {"d", cpu_path.simd_max_order_d}}},
                           {"backend_path", "vector path (" + cpu_path.isa + ") for real s/d up to the max order, "
                                            "LAPACKE per matrix otherwise"},
                           {"lapack_peer", "LAPACKE_?potrf/potrs/posv_work per matrix, OpenMP static loop, BLAS on one thread"},
                           {"lapack_library", lapack_library},
                           {"openmp_binding", omp_binding},
                           {"gemm_peak_gflops", {{"s", settings.cpu_peak_s}, {"d", settings.cpu_peak_d}}},
                           {"gemm_peak_method", "median of 5 OpenBLAS ?GEMM calls, m = n = k = 2048, all threads (0: not measured)"}}},
                  {"seed", seed},
                  {"cond", settings.cond},
                  {"distinct", settings.distinct},
                  {"tolerance", settings.tolerance},
                  {"repeat", settings.repeat},
                  {"warmup", settings.warmup},
                  {"check", settings.check},
                  {"fast_math", settings.fast_math},
                  {"refs", settings.refs},
                  {"timing", settings.restore_each_call
                                 ? "per timed call: its one input set restored, the L2 flushed by reading a buffer twice "
                                   "its size, then the call between two events, queued behind them (bench_cusolverdx's "
                                   "method, for --ref cusolverdx)"
                                 : "per round: every input set restored and the L2 flushed by a write; then one call per "
                                   "set, each between two events on an idle GPU"},
                  {"backend", to_string(lib_backend)}}},
                {"rows", json::array()}};

    if (cusolverdx) doc["header"]["cusolverdx"] = peer_json(*cusolverdx);
    if (!json_path.empty()) {  // fail now rather than after an hour of measurements
        try {
            write_json(json_path, doc);
        } catch (const std::exception& e) {
            std::cerr << "tester: " << e.what() << "\n";
            return kUsageError;
        }
    }

    // ---- the sweep --------------------------------------------------------------------------------
    // Layout innermost: rows that differ only in layout sit together and share their inputs.
    std::vector<CaseSpec> cases;
    for (Routine routine : routines)
        for (Precision precision : precisions)
            for (Uplo uplo : uplos)
                for (std::size_t r = 0; r < (routine == Routine::potrf ? 1 : nrhss.size()); ++r)
                    for (int batch : batches)
                        for (int n : ns)
                            for (LayoutKind layout : layouts) {
                                CaseSpec c;
                                c.routine = routine, c.precision = precision, c.layout = layout, c.chunk = chunk;
                                c.uplo = uplo, c.n = n, c.batch = batch;
                                c.nrhs = routine == Routine::potrf ? 0 : nrhss[r];
                                c.backend = lib_backend;
                                c.seed = case_seed(seed, precision, n, batch);
                                cases.push_back(c);
                            }
    if (gpu && lib_backend == Backend::cuda && jobs > 0) prepare_kernels(cases, jobs, device);

    const Table table(settings.refs);
    if (!cases.empty()) std::cout << table.header() << std::endl;
    int ok = 0, failed = 0, skipped = 0;
    InputCache cache;
    for (const CaseSpec& c : cases) {
        CaseResult result;
        try {
            result = run_case(c, settings, cpu, gpu.get(), cache);
        } catch (const std::exception& e) {  // run_case reports its own; this is a last resort
            result.status = Status::failed, result.note = e.what();
        }
        std::cout << row_text(table, c, result) << std::endl;
        ok += result.status == Status::ok;
        failed += result.status == Status::failed;
        skipped += result.status == Status::skipped;
        doc["rows"].push_back(row_json(c, result, settings, launch_floor_ms));  // also what targets read
        if (cusolverdx) doc["header"]["cusolverdx"] = peer_json(*cusolverdx);
        doc["summary"] = {{"ok", ok}, {"failed", failed}, {"skipped", skipped}};
        if (!json_path.empty()) {
            try {
                write_json(json_path, doc);  // after every row: a killed run keeps its rows
            } catch (const std::exception& e) {
                std::cerr << "tester: " << e.what() << "\n";
                return kUsageError;
            }
        }
    }
    // ---- the other families ------------------------------------------------------------------------
    so.repeat = settings.repeat, so.warmup = settings.warmup, so.tolerance = settings.tolerance;
    so.seed = seed, so.device = device, so.gpu = gpu_present, so.cuda_backend = lib_backend == Backend::cuda;
    so.check = settings.check;
    for (const std::string& routine : suite_routines) {
        std::string last_header;
        const suite::Sink sink = [&](suite::Row&& r) {
            const std::string header = suite_header(r);
            if (header != last_header) std::cout << "\n" << header << std::endl, last_header = header;
            std::cout << suite_line(r) << std::endl;
            ok += r.status == suite::Status::ok;
            failed += r.status == suite::Status::failed;
            skipped += r.status == suite::Status::skipped;
            doc["rows"].push_back(suite_json(r));
            doc["summary"] = {{"ok", ok}, {"failed", failed}, {"skipped", skipped}};
            if (!json_path.empty()) write_json(json_path, doc);  // after every row: a killed run keeps its rows
        };
        try {
            const std::string family = suite::family_of(routine);
            if (family == "large") suite::run_large(routine, so, sink);
            else if (family == "ldlt") suite::run_ldlt(routine, so, sink);
            else if (family == "triangular") suite::run_triangular(routine, so, sink);
            else if (family == "vbatched") suite::run_vbatched(routine, so, sink);
            else if (family == "multi") suite::run_multi(routine, so, sink);
        } catch (const std::exception& e) {
            std::cerr << "tester: " << routine << ": " << e.what() << "\n";
            return kUsageError;
        }
    }
    std::printf("\ntester: %d rows: %d ok, %d failed, %d skipped\n", ok + failed + skipped, ok, failed, skipped);
    if (!target_definitions.is_null()) {
        const json& rows = doc["rows"];
        const json report = {{"tester_json", json_path}, {"git_commit", commit}, {"date", date},
                             {"targets", evaluate_targets(target_definitions, rows)}};
        int met = 0, total = 0;
        for (const json& t : report["targets"]) met += t["met"].get<bool>(), ++total;
        try {
            write_json(targets_out, report);
        } catch (const std::exception& e) {
            std::cerr << "tester: " << e.what() << "\n";
            return kUsageError;
        }
        std::printf("targets: %d of %d met (%s)\n", met, total, targets_out.c_str());
    }
    return std::min(failed, 255);
}
