// bsolve: the command-line front end of batchsolve: generate, inspect and solve HDF5 batch files.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/checked_size.hpp"
#include "batchsolve_io/batch_file.hpp"
#include "batchsolve_io/hdf5.hpp"

namespace po = boost::program_options;
using namespace batchsolve;

namespace {

#ifndef BSOLVE_VERSION
#define BSOLVE_VERSION "unknown"
#endif

// Exit codes, documented in --help and data/README.md.
constexpr int exit_ok = 0;
constexpr int exit_failed_matrices = 1;  // solved, but some info != 0 (or a result failed its check)
constexpr int exit_usage = 2;
constexpr int exit_file = 3;
constexpr int exit_runtime = 4;          // backend or solver error (no CUDA, out of memory, ...)

// Normwise backward errors (accuracy.hpp) above this are not the result of a backward-stable solve.
constexpr double backward_error_threshold = 30;
// How many failed or mismatching matrices are listed by index before "...".
constexpr int listed_matrices = 10;

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

const char* const main_help =
    "bsolve " BSOLVE_VERSION ": batched Cholesky solves of HDF5 batch files (schema: data/README.md)\n"
    "\n"
    "usage: bsolve <command> [options]\n"
    "\n"
    "commands:\n"
    "  generate   write a batch of random SPD/HPD systems A X = B with a known solution X_true\n"
    "  solve      solve a batch file with posv_batched and write the solution file\n"
    "  inspect    print what a batch or solution file holds (a batch is checked, its matrices not read)\n"
    "\n"
    "Run 'bsolve <command> --help' for the options of a command.\n"
    "\n"
    "exit codes:\n"
    "  0  success\n"
    "  1  solve finished and wrote its output, but some matrices failed (info != 0), info differs from\n"
    "     the file's /expected_info, or a backward error exceeds 30\n"
    "  2  usage error (unknown command or option, bad option value)\n"
    "  3  file error (missing, unreadable or malformed input; output not writable, existing without\n"
    "     --force, the input itself, a device or read-only)\n"
    "  4  backend or solver error (e.g. --backend cuda without a CUDA build or device, out of memory)\n"
    "Outputs: an existing output file is replaced only with --force (atomically, keeping its\n"
    "permissions); an output that is the input, a device, a directory or read-only is refused.\n"
    "Errors are one line on stderr: 'bsolve: error: <file>: <dataset>: <reason>' for files.\n";

std::string sci(double v, int digits = 3) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

// "--name" for messages.
std::string opt(const char* name) { return std::string("--") + name; }

po::variables_map parse(const std::vector<std::string>& args, const po::options_description& desc) {
    po::variables_map vm;
    // No guessing: "--n" must never be taken for "--nrhs" or the other way round.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(desc).style(style).run(), vm);
    return vm;
}

void require_options(const po::variables_map& vm, std::initializer_list<const char*> names, const char* command) {
    for (const char* name : names)
        if (!vm.count(name)) throw UsageError(opt(name) + " is required (see 'bsolve " + command + " --help')");
}

// "3,17,42" or "3:5,17" (matrix index, optionally ':' and the 0-based column to spoil).
struct BadSpec {
    int matrix;
    int column;
};
std::vector<BadSpec> parse_bad_list(const std::string& text, const char* name, int n, int count) {
    std::vector<BadSpec> out;
    if (text.empty()) return out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const auto colon = item.find(':');
        const std::string k_text = item.substr(0, colon);
        const std::string c_text = colon == std::string::npos ? "" : item.substr(colon + 1);
        auto to_int = [&](const std::string& s) {
            std::size_t used = 0;
            long v = -1;
            try {
                v = std::stol(s, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != s.size() || s.empty() || v < 0 || v > std::numeric_limits<int>::max())
                throw UsageError(opt(name) + ": '" + item + "' is not INDEX or INDEX:COLUMN with non-negative integers");
            return int(v);
        };
        BadSpec b{to_int(k_text), c_text.empty() ? n / 2 : to_int(c_text)};
        if (b.matrix >= count)
            throw UsageError(opt(name) + ": matrix index " + std::to_string(b.matrix) + " is not below --count " +
                             std::to_string(count));
        if (n == 0) throw UsageError(opt(name) + ": n = 0 matrices have no entry to spoil");
        if (b.column >= n)
            throw UsageError(opt(name) + ": column " + std::to_string(b.column) + " is not below --n " + std::to_string(n));
        out.push_back(b);
    }
    return out;
}

std::uint64_t parse_seed(const std::string& text) {
    std::size_t used = 0;
    std::uint64_t v = 0;
    try {
        if (!text.empty() && text[0] != '-') v = std::stoull(text, &used, 0);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size())
        throw UsageError("--seed: '" + text + "' is not a non-negative 64-bit integer");
    return v;
}

// Every option check that does not need the file happens before the output path is touched; the
// output rules (data/README.md) are applied here, before any lengthy work, and again on writing.
void check_output_target(const std::string& path, const io::OutputOptions& rules) {
    namespace fs = std::filesystem;
    io::check_output(path, rules);  // what the target is comes first: "/dev/null is a device", not "/dev is not writable"
    const fs::path dir = fs::path(path).parent_path();
    const fs::path d = dir.empty() ? fs::path(".") : dir;
    if (::access(d.c_str(), W_OK) != 0) throw io::FileError(path, "/", "the directory '" + d.string() + "' is not writable");
}

io::Existing existing_rule(const po::variables_map& vm) {
    return vm["force"].as<bool>() ? io::Existing::replace : io::Existing::refuse;
}

// ---- generate --------------------------------------------------------------------------------------

struct GenerateOptions {
    std::string output;
    int n = 0, count = 0, nrhs = 1;
    Precision precision = Precision::d;
    double cond = 1e3;
    std::uint64_t seed = 0;
    Uplo uplo = Uplo::lower;
    std::vector<BadSpec> bad_indefinite, bad_nan, bad_nan_b;
    io::OutputOptions rules;
};

// Host memory generate needs at its peak: A, B and X_true, the HDF5 image built in memory and its
// copy written out (each about the size of the data), and room for OpenBLAS's buffers and threads.
constexpr std::uint64_t blas_headroom_bytes = std::uint64_t(256) << 20;

void require_generate_memory(const GenerateOptions& o) {
    const std::size_t element = o.precision == Precision::s ? 4 : o.precision == Precision::z ? 16 : 8;
    const auto a = checked_product({std::uint64_t(o.count), std::uint64_t(o.n), std::uint64_t(o.n), element});
    const auto b = checked_product({std::uint64_t(o.count), std::uint64_t(o.n), std::uint64_t(o.nrhs), element});
    std::optional<std::uint64_t> data = a && b ? checked_add(*a, checked_mul(*b, 2).value_or(UINT64_MAX)) : std::nullopt;
    std::optional<std::uint64_t> peak = data ? checked_mul(*data, 3) : std::nullopt;
    if (peak) peak = checked_add(*peak, blas_headroom_bytes);
    const std::string what = "generate: a batch of " + std::to_string(o.count) + " matrices of order " +
                             std::to_string(o.n) + " with " + std::to_string(o.nrhs) + " right-hand sides (precision " +
                             precision_letter(o.precision) + ")";
    if (!peak) throw Error(what + " has more than 2^64 bytes: refused");
    require_host_memory(*peak, what);
}

template <class T>
T nan_value();  // below, with the solve

template <class T>
void generate_batch(const GenerateOptions& o) {
    io::BatchProblem<T> p;
    p.uplo = o.uplo, p.n = o.n, p.count = o.count, p.nrhs = o.nrhs;
    p.a = generate_spd_batch<T>(o.n, o.count, o.cond, o.seed);
    // The right-hand sides draw from a stream of their own, so changing nrhs leaves A unchanged.
    RhsWithSolution<T> rhs = generate_rhs_batch<T>(p.a, o.n, o.count, o.nrhs, o.seed ^ 0x9e3779b97f4a7c15ULL);
    p.x_true = std::move(rhs.x);
    p.b = std::move(rhs.b);
    // Spoil after B = A X_true so that B stays finite; the expected info is the first spoiled column.
    if (!o.bad_indefinite.empty() || !o.bad_nan.empty()) {
        p.expected_info.assign(std::size_t(o.count), 0);
        auto spoil = [&](const std::vector<BadSpec>& list, BadMatrix kind) {
            for (const BadSpec& b : list) {
                spoil_matrix(p.a, o.n, b.matrix, b.column, kind);
                int& e = p.expected_info[std::size_t(b.matrix)];
                e = e == 0 ? b.column + 1 : std::min(e, b.column + 1);
            }
        };
        spoil(o.bad_indefinite, BadMatrix::indefinite);
        spoil(o.bad_nan, BadMatrix::nan);
    }
    // A NaN in B only (entry COLUMN of the first right-hand side): A stays positive definite (info 0),
    // the solution is not finite, which `solve` must report per system.
    for (const BadSpec& b : o.bad_nan_b)
        if (o.nrhs > 0) p.b[std::size_t(b.matrix) * std::size_t(o.n) * std::size_t(o.nrhs) + std::size_t(b.column)] = nan_value<T>();
    p.generator.name = "bsolve generate " BSOLVE_VERSION;
    p.generator.cond = o.cond;
    p.generator.seed = o.seed;
    io::write_batch(o.output, p, o.rules);
}

int run_generate(const std::vector<std::string>& args) {
    po::options_description desc(
        "usage: bsolve generate --output FILE --n N --count K [options]\n\n"
        "Writes K random Hermitian positive definite n x n matrices A (2-norm condition number --cond),\n"
        "right-hand sides B = A X_true and the known solution X_true to an HDF5 batch file.\n\noptions");
    // clang-format off
    desc.add_options()
        ("help,h", "print this help")
        ("output,o", po::value<std::string>(), "batch file to write (an existing one only with --force)")
        ("force", po::bool_switch(), "replace an existing output file (atomically, keeping its permissions)")
        ("n", po::value<int>(), "order of each matrix (>= 0)")
        ("count", po::value<int>(), "number of matrices (>= 0)")
        ("nrhs", po::value<int>()->default_value(1), "right-hand sides per matrix (>= 0)")
        ("precision", po::value<std::string>()->default_value("d"), "s | d | c | z (float, double, complex float, complex double)")
        ("cond", po::value<double>()->default_value(1e3, "1e3"), "2-norm condition number of every matrix (>= 1)")
        ("seed", po::value<std::string>(), "random seed (default: a fresh one, printed and stored in the file)")
        ("uplo", po::value<std::string>()->default_value("lower"), "lower | upper: the triangle a solver should read")
        ("bad-indefinite", po::value<std::string>()->default_value(""),
         "comma-separated matrices made indefinite: INDEX or INDEX:COLUMN (0-based; default column n/2); "
         "expected info COLUMN+1")
        ("bad-nan", po::value<std::string>()->default_value(""),
         "comma-separated matrices given a NaN on the diagonal: INDEX or INDEX:COLUMN, as --bad-indefinite")
        ("bad-nan-b", po::value<std::string>()->default_value(""),
         "comma-separated systems given a NaN in B (not in A): INDEX or INDEX:ROW; info stays 0");
    // clang-format on
    const po::variables_map vm = parse(args, desc);
    if (vm.count("help")) {
        std::cout << desc << "\nexample:\n  bsolve generate --output spd.h5 --n 32 --count 10000 --cond 1e6 --seed 1\n";
        return exit_ok;
    }
    require_options(vm, {"output", "n", "count"}, "generate");

    GenerateOptions o;
    o.output = vm["output"].as<std::string>();
    o.n = vm["n"].as<int>();
    o.count = vm["count"].as<int>();
    o.nrhs = vm["nrhs"].as<int>();
    if (o.n < 0) throw UsageError("--n must be >= 0 (got " + std::to_string(o.n) + ")");
    if (o.count < 0) throw UsageError("--count must be >= 0 (got " + std::to_string(o.count) + ")");
    if (o.nrhs < 0) throw UsageError("--nrhs must be >= 0 (got " + std::to_string(o.nrhs) + ")");
    o.cond = vm["cond"].as<double>();
    if (!(o.cond >= 1) || !std::isfinite(o.cond))
        throw UsageError("--cond must be a finite number >= 1 (got " + sci(o.cond) + ")");
    const std::string prec = vm["precision"].as<std::string>();
    if (prec.size() != 1 || std::string("sdcz").find(prec) == std::string::npos)
        throw UsageError("--precision: '" + prec + "' is not one of s, d, c, z");
    o.precision = parse_precision(prec);
    try {
        o.uplo = parse_uplo(vm["uplo"].as<std::string>());
    } catch (const InvalidArgument&) {
        throw UsageError("--uplo: '" + vm["uplo"].as<std::string>() + "' is not one of lower, upper");
    }
    o.seed = vm.count("seed") ? parse_seed(vm["seed"].as<std::string>())
                              : (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    o.bad_indefinite = parse_bad_list(vm["bad-indefinite"].as<std::string>(), "bad-indefinite", o.n, o.count);
    o.bad_nan = parse_bad_list(vm["bad-nan"].as<std::string>(), "bad-nan", o.n, o.count);
    o.bad_nan_b = parse_bad_list(vm["bad-nan-b"].as<std::string>(), "bad-nan-b", o.n, o.count);
    o.rules.existing = existing_rule(vm);
    check_output_target(o.output, o.rules);
    require_generate_memory(o);

    switch (o.precision) {
        case Precision::s: generate_batch<float>(o); break;
        case Precision::d: generate_batch<double>(o); break;
        case Precision::c: generate_batch<std::complex<float>>(o); break;
        case Precision::z: generate_batch<std::complex<double>>(o); break;
    }
    std::cout << "bsolve generate: wrote " << o.output << "\n"
              << "  count " << o.count << ", n " << o.n << ", nrhs " << o.nrhs << ", precision "
              << precision_letter(o.precision) << ", uplo " << to_string(o.uplo) << ", cond " << sci(o.cond)
              << ", seed " << o.seed << "\n";
    auto list_bad = [&](const std::vector<BadSpec>& list, const char* what) {
        for (const BadSpec& b : list)
            std::cout << "  matrix " << b.matrix << " " << what << " at column " << b.column << " (expected info "
                      << b.column + 1 << ")\n";
    };
    list_bad(o.bad_indefinite, "made indefinite");
    list_bad(o.bad_nan, "given a NaN");
    return exit_ok;
}

// ---- inspect ---------------------------------------------------------------------------------------

std::string list_indices(const std::vector<std::pair<int, std::string>>& items) {
    std::string s;
    for (std::size_t i = 0; i < items.size() && i < std::size_t(listed_matrices); ++i)
        s += (i ? ", " : "") + ("matrix " + std::to_string(items[i].first) + " " + items[i].second);
    if (items.size() > std::size_t(listed_matrices)) s += ", ...";
    return s;
}

template <class T>
void print_solution(const std::string& path, const io::BatchSolution<T>& s) {
    std::vector<std::pair<int, std::string>> failed;
    for (int k = 0; k < s.count; ++k)
        if (s.info[std::size_t(k)] != 0) failed.push_back({k, "info " + std::to_string(s.info[std::size_t(k)])});
    const io::SolveRecord& r = s.record;
    std::cout << path << ": batchsolve solution file\n"
              << "  count " << s.count << ", n " << s.n << ", nrhs " << s.nrhs << ", precision "
              << precision_letter(precision_v<T>) << ", uplo " << to_string(s.uplo) << "\n"
              << "  solved from " << r.source << " on " << r.backend << " (" << r.device << "), layout "
              << r.solve_layout << (r.solve_layout == "chunked" ? " " + std::to_string(r.chunk_size) : "")
              << ", posv " << sci(r.time_s * 1e3, 4) << " ms\n"
              << "  failed " << failed.size() << " of " << s.count << (failed.empty() ? "" : ": " + list_indices(failed))
              << "\n"
              << "  max backward error " << sci(r.max_backward_error);
    if (r.max_forward_error) std::cout << ", max forward error " << sci(*r.max_forward_error);
    std::cout << "\n  factor " << (s.factor.empty() ? "absent" : "present") << "\n";
}

int run_inspect(const std::vector<std::string>& args) {
    po::options_description desc(
        "usage: bsolve inspect [--input] FILE\n\nChecks a batch or solution file and prints what it holds.\n\noptions");
    desc.add_options()("help,h", "print this help")("input,i", po::value<std::string>(), "batch file to inspect");
    po::positional_options_description pos;
    pos.add("input", 1);
    po::variables_map vm;
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(desc).positional(pos).style(style).run(), vm);
    if (vm.count("help")) {
        std::cout << desc;
        return exit_ok;
    }
    require_options(vm, {"input"}, "inspect");
    const std::string path = vm["input"].as<std::string>();
    // Read once in a child process: a crash or hang of HDF5 on a crafted file is reported, not suffered.
    io::h5::probe_in_child(path, [&] {
        if (io::file_format(path) == io::solution_format) {
            switch (io::file_precision(path)) {
                case Precision::s: io::read_solution<float>(path); break;
                case Precision::d: io::read_solution<double>(path); break;
                case Precision::c: io::read_solution<std::complex<float>>(path); break;
                case Precision::z: io::read_solution<std::complex<double>>(path); break;
            }
        } else {
            io::inspect_batch(path);
        }
    });
    if (io::file_format(path) == io::solution_format) {
        switch (io::file_precision(path)) {
            case Precision::s: print_solution(path, io::read_solution<float>(path)); break;
            case Precision::d: print_solution(path, io::read_solution<double>(path)); break;
            case Precision::c: print_solution(path, io::read_solution<std::complex<float>>(path)); break;
            case Precision::z: print_solution(path, io::read_solution<std::complex<double>>(path)); break;
        }
        return exit_ok;
    }
    const io::BatchFileInfo info = io::inspect_batch(path);
    std::cout << path << ": batchsolve batch file\n"
              << "  count " << info.count << ", n " << info.n << ", nrhs " << info.nrhs << ", precision "
              << precision_letter(info.precision) << ", uplo " << to_string(info.uplo) << "\n"
              << "  X_true " << (info.has_x_true ? "present" : "absent") << ", expected_info "
              << (info.has_expected_info ? "present" : "absent") << "\n";
    if (!info.generator.name.empty() || info.generator.cond || info.generator.seed) {
        std::cout << "  generator " << (info.generator.name.empty() ? "?" : info.generator.name);
        if (info.generator.cond) std::cout << ", cond " << sci(*info.generator.cond);
        if (info.generator.seed) std::cout << ", seed " << *info.generator.seed;
        std::cout << "\n";
    }
    return exit_ok;
}

// ---- solve -----------------------------------------------------------------------------------------

struct SolveOptions {
    std::string input, output;
    Backend backend = Backend::automatic;
    int device = 0;
    LayoutKind layout = LayoutKind::column_major;
    int chunk = 32;
    bool save_factor = false;
    bool warmup = true;
    io::OutputOptions rules;
};

// Where a batch lives on the backend while it is solved: the packed column-major copy, plus the
// layout-converted copy or pointer array that the solver actually gets.
template <class T>
struct DeviceBatch {
    Buffer<T> packed;
    Buffer<T> converted;  // interleaved / chunked only
    Buffer<T*> pointers;  // pointer_array only
    BatchView<T> packed_view;
    BatchView<T> solve_view;
};

template <class T>
DeviceBatch<T> stage(Context& ctx, const std::vector<T>& host, int rows, int cols, int count, const SolveOptions& o) {
    DeviceBatch<T> d;
    d.packed = Buffer<T>(ctx, host);
    // LAPACK's ld >= max(1, rows) holds even for empty matrices (n = 0), which still get an info.
    const int ld = std::max(1, rows);
    d.packed_view = BatchView<T>::column_major(d.packed.data(), rows, cols, ld, std::int64_t(ld) * cols, count);
    switch (o.layout) {
        case LayoutKind::column_major: d.solve_view = d.packed_view; break;
        case LayoutKind::pointer_array: {
            std::vector<T*> p(static_cast<std::size_t>(count));
            for (int k = 0; k < count; ++k) p[std::size_t(k)] = d.packed.data() + std::size_t(k) * rows * cols;
            d.pointers = Buffer<T*>(ctx, p);
            d.solve_view = BatchView<T>::pointer_array(d.pointers.data(), rows, cols, ld, count);
            break;
        }
        case LayoutKind::interleaved:
        case LayoutKind::chunked_interleaved:
            d.converted = Buffer<T>(ctx, host.size());
            d.solve_view = o.layout == LayoutKind::interleaved
                               ? BatchView<T>::interleaved(d.converted.data(), rows, cols, count)
                               : BatchView<T>::chunked(d.converted.data(), rows, cols, count, o.chunk);
            break;
    }
    return d;
}

template <class T>
bool needs_conversion(const DeviceBatch<T>& d) {
    return d.solve_view.is_interleaved();
}

// ||X - X_true||_F / ||X_true||_F of one matrix's right-hand sides (0 when X_true is zero and X equals it).
template <class T>
double forward_error(const T* x, const T* x_true, std::size_t len) {
    long double diff = 0, ref = 0;
    for (std::size_t i = 0; i < len; ++i) {
        diff += std::norm(std::complex<long double>(x[i]) - std::complex<long double>(x_true[i]));
        ref += std::norm(std::complex<long double>(x_true[i]));
    }
    if (ref == 0) return diff == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    return double(std::sqrt(diff / ref));
}

// One complete posv on freshly uploaded data: stage A and B, convert to the solve layout, solve
// (timed, synchronised), convert back. Also serves as the warm-up, so that one-off costs such as
// run-time kernel compilation on first use do not land in the reported time.
template <class T>
struct PosvRun {
    DeviceBatch<T> a, b;
    Buffer<int> info;
    double solve_s = 0, convert_s = 0;
};

template <class T>
PosvRun<T> run_posv(Context& ctx, const io::BatchProblem<T>& p, const SolveOptions& o) {
    using clock = std::chrono::steady_clock;
    auto seconds = [](clock::time_point t0, clock::time_point t1) { return std::chrono::duration<double>(t1 - t0).count(); };
    PosvRun<T> r;
    r.a = stage(ctx, p.a, p.n, p.n, p.count, o);
    r.b = stage(ctx, p.b, p.n, p.nrhs, p.count, o);
    r.info = Buffer<int>(ctx, std::size_t(p.count));
    r.info.fill_bytes(0xFF);  // -1 everywhere: an entry the backend never wrote shows up afterwards
    const bool convert = needs_conversion(r.a);
    if (convert) {
        ctx.synchronize();
        const auto t0 = clock::now();
        convert_layout<T>(r.a.packed_view, r.a.solve_view, ctx);
        convert_layout<T>(r.b.packed_view, r.b.solve_view, ctx);
        ctx.synchronize();
        r.convert_s += seconds(t0, clock::now());
    }
    ctx.synchronize();
    const auto t0 = clock::now();
    posv_batched<T>(p.uplo, r.a.solve_view, r.b.solve_view, r.info.data(), ctx);
    ctx.synchronize();
    r.solve_s = seconds(t0, clock::now());
    if (convert) {
        const auto t1 = clock::now();
        convert_layout<T>(r.b.solve_view, r.b.packed_view, ctx);
        if (o.save_factor) convert_layout<T>(r.a.solve_view, r.a.packed_view, ctx);
        ctx.synchronize();
        r.convert_s += seconds(t1, clock::now());
    }
    return r;
}

template <class T>
T nan_value() {
    const real_t<T> nan = std::numeric_limits<real_t<T>>::quiet_NaN();
    if constexpr (is_complex_v<T>) return T(nan, nan);
    else return nan;
}

template <class T>
int solve_batch(io::BatchProblem<T>& p, const SolveOptions& o) {
    const int n = p.n, count = p.count, nrhs = p.nrhs;
    Context ctx(o.backend, o.device);
    if (o.warmup) run_posv(ctx, p, o);
    const PosvRun<T> run = run_posv(ctx, p, o);
    const double solve_s = run.solve_s, convert_s = run.convert_s;

    io::BatchSolution<T> s;
    s.uplo = p.uplo, s.n = n, s.count = count, s.nrhs = nrhs;
    s.x = run.b.packed.to_host();
    s.info = run.info.to_host();
    if (o.save_factor) {
        s.factor = run.a.packed.to_host();
        // Zero the triangle the solver did not touch (it still holds A), so /factor is exactly L or U.
        for (int k = 0; k < count; ++k)
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i)
                    if (p.uplo == Uplo::lower ? i < j : i > j)
                        s.factor[std::size_t(k) * n * n + std::size_t(j) * n + i] = T(0);
    }

    std::vector<std::pair<int, std::string>> failed, unwritten, mismatched;
    for (int k = 0; k < count; ++k) {
        const int v = s.info[std::size_t(k)];
        if (v < 0) unwritten.push_back({k, "info " + std::to_string(v)});
        else if (v > 0) failed.push_back({k, "info " + std::to_string(v)});
        if (!p.expected_info.empty() && v != p.expected_info[std::size_t(k)])
            mismatched.push_back({k, "info " + std::to_string(v) + " expected " +
                                         std::to_string(p.expected_info[std::size_t(k)])});
    }
    if (!unwritten.empty())
        throw Error("posv_batched on the " + std::string(to_string(ctx.backend())) + " backend left " +
                    std::to_string(unwritten.size()) + " info entries unwritten or negative: " + list_indices(unwritten));

    // Errors over the matrices that succeeded; the original A and B are still on the host.
    const std::vector<double> berr = solve_backward_error<T>(p.uplo, p.a, s.x, p.b, n, nrhs, count);
    double max_berr = std::numeric_limits<double>::quiet_NaN(), max_ferr = max_berr;
    int good = 0;
    std::vector<std::pair<int, std::string>> inaccurate;
    const std::size_t xlen = std::size_t(n) * nrhs;
    for (int k = 0; k < count; ++k) {
        if (s.info[std::size_t(k)] != 0) continue;
        const double e = berr[std::size_t(k)];
        max_berr = good == 0 || e > max_berr || std::isnan(e) ? e : max_berr;
        if (!(e < backward_error_threshold)) inaccurate.push_back({k, "backward error " + sci(e)});
        if (!p.x_true.empty()) {
            const double f = forward_error(s.x.data() + k * xlen, p.x_true.data() + k * xlen, xlen);
            max_ferr = good == 0 || f > max_ferr || std::isnan(f) ? f : max_ferr;
        }
        ++good;
    }
    // A NaN or Inf only in B passes the factorisation (info 0) and makes that system's X non-finite:
    // each such system is named on stderr, and the run fails (exit 1), output written all the same.
    std::vector<std::pair<int, std::string>> nonfinite_b;
    for (int k = 0; k < count; ++k) {
        if (s.info[std::size_t(k)] != 0) continue;
        const T* bk = p.b.data() + std::size_t(k) * xlen;
        for (std::size_t i = 0; i < xlen; ++i)
            if (!std::isfinite(std::real(bk[i])) || !std::isfinite(std::imag(bk[i]))) {
                nonfinite_b.push_back({k, "B not finite"});
                break;
            }
    }
    // A failed matrix has no solution: NaN, so that nobody mistakes what is left in B for one.
    for (int k = 0; k < count; ++k)
        if (s.info[std::size_t(k)] != 0)
            std::fill_n(s.x.begin() + std::ptrdiff_t(k * xlen), xlen, nan_value<T>());

    s.record.source = o.input;
    s.record.backend = to_string(ctx.backend());
    s.record.device = ctx.device_name();
    s.record.solve_layout = to_string(o.layout);
    s.record.chunk_size = o.layout == LayoutKind::chunked_interleaved ? o.chunk : 0;
    s.record.time_s = solve_s;
    s.record.max_backward_error = max_berr;
    if (!p.x_true.empty()) s.record.max_forward_error = max_ferr;
    io::write_solution(o.output, s, o.rules);

    // potrf n^3/3 plus potrs 2 n^2 per right-hand side; complex arithmetic costs four times as much.
    const double flops = (is_complex_v<T> ? 4.0 : 1.0) * count *
                         (std::pow(double(n), 3) / 3 + 2.0 * double(n) * n * nrhs);
    std::cout << "bsolve solve: " << o.input << " -> " << o.output << "\n"
              << "  backend      " << to_string(ctx.backend()) << " (" << ctx.device_name() << ")\n"
              << "  problem      count " << count << ", n " << n << ", nrhs " << nrhs << ", precision "
              << precision_letter(precision_v<T>) << ", uplo " << to_string(p.uplo) << ", layout "
              << to_string(o.layout) << (o.layout == LayoutKind::chunked_interleaved ? " " + std::to_string(o.chunk) : "")
              << "\n"
              << "  time         posv " << sci(solve_s * 1e3, 4) << " ms ("
              << (solve_s > 0 ? sci(flops / solve_s * 1e-9, 4) : std::string("-")) << " GFLOP/s)";
    if (o.warmup) std::cout << ", after a warm-up solve";
    if (needs_conversion(run.a)) std::cout << ", layout conversion " << sci(convert_s * 1e3, 4) << " ms (not included)";
    std::cout << "\n  failed       " << failed.size() << " of " << count << " matrices (info != 0)"
              << (failed.empty() ? "" : ": " + list_indices(failed)) << "\n";
    if (!p.expected_info.empty())
        std::cout << "  expected     "
                  << (mismatched.empty() ? "info matches /expected_info for every matrix"
                                         : std::to_string(mismatched.size()) + " matrices differ from /expected_info: " +
                                               list_indices(mismatched))
                  << "\n";
    if (good > 0) {
        std::cout << "  backward     max ||B - A X||_F / (n (||A||_F ||X||_F + ||B||_F) u) = " << sci(max_berr)
                  << " over " << good << " solved matrices (" << (inaccurate.empty() ? "ok" : "FAILED") << ", threshold "
                  << sci(backward_error_threshold) << ")\n";
        if (!inaccurate.empty()) std::cout << "               above threshold: " << list_indices(inaccurate) << "\n";
        if (!p.x_true.empty()) {
            std::cout << "  forward      max ||X - X_true||_F / ||X_true||_F = " << sci(max_ferr);
            if (p.generator.cond)
                std::cout << " (cond * u = " << sci(*p.generator.cond * double(unit_roundoff<T>())) << ")";
            std::cout << "\n";
        }
    } else {
        std::cout << "  backward     no solved matrices to measure\n";
    }
    if (!nonfinite_b.empty()) {
        std::cout << "  non-finite B " << nonfinite_b.size() << " systems have NaN or Inf in B (their X is not finite): "
                  << list_indices(nonfinite_b) << "\n";
        std::cerr << "bsolve: warning: " << nonfinite_b.size() << " of " << count
                  << " systems have NaN or Inf in their right-hand side B, so their solution X is not finite (info 0: A is fine): "
                  << list_indices(nonfinite_b) << "\n";
    }
    const bool clean = failed.empty() && mismatched.empty() && inaccurate.empty() && nonfinite_b.empty();
    return clean ? exit_ok : exit_failed_matrices;
}

int run_solve(const std::vector<std::string>& args) {
    po::options_description desc(
        "usage: bsolve solve --input FILE --output FILE [options]\n\n"
        "Solves every system A_k X_k = B_k of a batch file with posv_batched (Cholesky), writes X and the\n"
        "per-matrix info to the output file, and prints the time, the failures and the backward error.\n"
        "Exit code 1 when some matrix failed (info != 0); the output is written all the same.\n\noptions");
    // clang-format off
    desc.add_options()
        ("help,h", "print this help")
        ("input,i", po::value<std::string>(), "batch file to solve")
        ("output,o", po::value<std::string>(), "solution file to write (never the input; never left half-written)")
        ("force", po::bool_switch(), "replace an existing output file (atomically, keeping its permissions)")
        ("backend", po::value<std::string>()->default_value("auto"), "auto | cpu | cuda (auto: cuda when built and a GPU is present)")
        ("device", po::value<int>()->default_value(0), "CUDA device number")
        ("layout", po::value<std::string>()->default_value("column_major"),
         "layout the solver runs on: column_major | pointer_array | interleaved | chunked (converted on the backend)")
        ("chunk", po::value<int>()->default_value(32), "chunk size for --layout chunked (>= 1)")
        ("save-factor", po::bool_switch(), "also write the Cholesky factors to /factor")
        ("no-warmup", po::bool_switch(), "time the first solve (by default an untimed warm-up solve runs first)");
    // clang-format on
    const po::variables_map vm = parse(args, desc);
    if (vm.count("help")) {
        std::cout << desc << "\nexample:\n  bsolve solve --input spd.h5 --output x.h5 --backend cpu --layout interleaved\n";
        return exit_ok;
    }
    require_options(vm, {"input", "output"}, "solve");

    SolveOptions o;
    o.input = vm["input"].as<std::string>();
    o.output = vm["output"].as<std::string>();
    try {
        o.backend = parse_backend(vm["backend"].as<std::string>());
    } catch (const InvalidArgument&) {
        throw UsageError("--backend: '" + vm["backend"].as<std::string>() + "' is not one of auto, cpu, cuda");
    }
    o.device = vm["device"].as<int>();
    if (o.device < 0) throw UsageError("--device must be >= 0 (got " + std::to_string(o.device) + ")");
    try {
        o.layout = parse_layout(vm["layout"].as<std::string>());
    } catch (const InvalidArgument&) {
        throw UsageError("--layout: '" + vm["layout"].as<std::string>() +
                         "' is not one of column_major, pointer_array, interleaved, chunked");
    }
    o.chunk = vm["chunk"].as<int>();
    if (o.chunk < 1) throw UsageError("--chunk must be >= 1 (got " + std::to_string(o.chunk) + ")");
    o.save_factor = vm["save-factor"].as<bool>();
    o.warmup = !vm["no-warmup"].as<bool>();

    o.rules.existing = existing_rule(vm);
    o.rules.inputs = {o.input};
    check_output_target(o.output, o.rules);
    // Read once in a child process: a crash or hang of HDF5 on a crafted file is reported, not suffered.
    io::h5::probe_in_child(o.input, [&] { io::read_any_batch(o.input); });
    io::AnyBatchProblem problem = io::read_any_batch(o.input);
    return std::visit([&](auto& p) { return solve_batch(p, o); }, problem);
}

}  // namespace

int main(int argc, char** argv) {
    // Past a file size limit, a write should fail with EFBIG and be reported, not kill the process.
    std::signal(SIGXFSZ, SIG_IGN);
    std::vector<std::string> args(argv + 1, argv + argc);
    auto usage_error = [](const std::string& what) {
        std::cerr << "bsolve: error: " << what << "\n";
        return exit_usage;
    };
    if (args.empty()) {
        std::cerr << main_help;
        return exit_usage;
    }
    const std::string command = args.front();
    args.erase(args.begin());
    try {
        if (command == "--help" || command == "-h" || command == "help") {
            std::cout << main_help;
            return exit_ok;
        }
        if (command == "--version") {
            std::cout << "bsolve " BSOLVE_VERSION "\n";
            return exit_ok;
        }
        if (command == "generate") return run_generate(args);
        if (command == "solve") return run_solve(args);
        if (command == "inspect") return run_inspect(args);
        return usage_error("unknown command '" + command + "' (commands: generate, solve, inspect; see bsolve --help)");
    } catch (const po::error& e) {
        return usage_error(std::string(e.what()) + " (see 'bsolve " + command + " --help')");
    } catch (const UsageError& e) {
        return usage_error(e.what());
    } catch (const io::FileError& e) {
        std::cerr << "bsolve: error: " << e.what() << "\n";
        return exit_file;
    } catch (const std::bad_alloc&) {
        std::cerr << "bsolve: error: out of host memory\n";
        return exit_runtime;
    } catch (const std::exception& e) {
        std::string what = e.what();
        std::replace(what.begin(), what.end(), '\n', ' ');
        std::cerr << "bsolve: error: " << what << "\n";
        return exit_runtime;
    }
}
