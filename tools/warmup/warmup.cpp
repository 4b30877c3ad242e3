// batchsolve-warmup: fills the disk kernel cache with the generated kernels that the plain routines
// would run for a set of calls (routine x precision x layout x n), so that a program's first call finds
// them there instead of compiling. The kernels are those of the tuning table of this GPU (else the
// defaults), compiled on several threads; nothing is launched.
//   batchsolve-warmup --routines potrf,posv --precisions s,d --layouts column_major,interleaved --n 1:128
// or, with --kernels FILE, exactly the kernels of a manifest a run recorded ($BATCHSOLVE_KERNEL_MANIFEST;
// warm_up_manifest of batchsolve/kernel_manifest.hpp), e.g. those the GPU suites compile
// (libsolver/tests/gpu/run-all.sh); --families gemm,potf2,triangular adds the tables' GEMM, large-Cholesky
// POTF2 and triangular leaf kernels, as manifest lines (table_kernel_lines), which --list prints instead
// of compiling.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/kernel_manifest.hpp"
#include "batchsolve_io/progress.hpp"

namespace {

using namespace batchsolve;

int usage(std::ostream& out, int code) {
    out << "usage: batchsolve-warmup [options]\n"
           "  Compiles into the disk kernel cache ($BATCHSOLVE_CACHE_DIR, else $XDG_CACHE_HOME/batchsolve, else\n"
           "  ~/.cache/batchsolve) the generated kernels the plain routines would run for every combination\n"
           "  below on this GPU (tuning table, else defaults). A later process's first call then loads them.\n"
           "  --routines LIST    potrf,potrs,posv (default all three)\n"
           "  --precisions LIST  s,d,c,z (default s,d)\n"
           "  --layouts LIST     column_major,interleaved,chunked (default column_major,interleaved)\n"
           "  --n LIST           orders: 8,32,128 or ranges 1:128 (default 1:128)\n"
           "  --nrhs K           right-hand sides of potrs/posv (default 1)\n"
           "  --batch COUNT      batch size the tuning table is consulted for (default 16384)\n"
           "  --chunk C          chunk width of the chunked layout (default 32)\n"
           "  --uplo lower|upper (default lower)\n"
           "  --threads T        compile threads (default: the hardware threads)\n"
           "  --cache-dir DIR    the disk cache to fill (sets BATCHSOLVE_CACHE_DIR)\n"
           "  --device D         CUDA device whose architecture the kernels are for (default 0)\n"
           "  --arch A           compile for compute capability A (e.g. 90) without a GPU instead; with\n"
           "                     --cache-dir, a folder to ship as prebuilt kernels ($BATCHSOLVE_PREBUILT_DIR)\n"
           "  --families LIST    cholesky (the combinations above), gemm (every kernel the GEMM-based routines\n"
           "                     gemm/syrk/herk/syr2k/her2k/symm/hemm_vbatched run with the tuning tables'\n"
           "                     tiles for --precisions: size bins, uniform and variable batches), potf2 (the\n"
           "                     large Cholesky's fused POTF2 kernel for each table row's blocking; s, d),\n"
           "                     triangular (the leaf kernels of trsm/trmm/potrf_vbatched: solve, multiply,\n"
           "                     invert, potrf panel, both orientations, the default blocking)\n"
           "                     (default cholesky). LDL^T needs none: its kernels are compiled with the library\n"
           "  --list             print the kernel manifest lines of the gemm, potf2 and triangular families and compile\n"
           "                     nothing (no GPU needed with --arch)\n"
           "  --kernels FILE     instead of the combinations above, exactly the kernels listed in FILE, a\n"
           "                     manifest a run recorded with BATCHSOLVE_KERNEL_MANIFEST=FILE (one kernel spec\n"
           "                     per line; duplicates and blank lines are skipped)\n"
           "  --check-only       with --kernels: read and check the manifest, compile nothing (no GPU needed)\n"
           "Prints one summary line (and every case whose configuration cannot run).\n";
    return code;
}

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

int parse_int(const std::string& text, const char* option) {
    std::size_t used = 0;
    int v = 0;
    try {
        v = std::stoi(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty())
        throw InvalidArgument("batchsolve-warmup", option, "an integer (got '" + text + "')");
    return v;
}

std::vector<int> parse_orders(const std::string& text) {
    std::vector<int> out;
    for (const std::string& item : split(text)) {
        const std::size_t colon = item.find(':');
        if (colon == std::string::npos) {
            out.push_back(parse_int(item, "--n"));
            continue;
        }
        const int lo = parse_int(item.substr(0, colon), "--n"), hi = parse_int(item.substr(colon + 1), "--n");
        if (lo > hi) throw InvalidArgument("batchsolve-warmup", "--n", "a range lo:hi with lo <= hi (got " + item + ")");
        for (int n = lo; n <= hi; ++n) out.push_back(n);
    }
    for (int n : out)
        if (n < 1) throw InvalidArgument("batchsolve-warmup", "--n", "orders >= 1");
    return out;
}

// --kernels FILE: the manifest's kernels into the disk cache (the bar advances per batch of
// kernels). A malformed line is reported with its number and skipped; any makes the exit code 1.
int warm_manifest(const std::string& path, int device, int arch, int threads, bool check_only,
                  const std::vector<std::string>* lines = nullptr) {
    ManifestOptions options;
    options.device = device, options.arch = arch, options.threads = threads, options.check_only = check_only;
    std::unique_ptr<io::Progress> progress;
    options.progress = [&](std::size_t done, std::size_t total) {
        if (!progress) progress = std::make_unique<io::Progress>("warm-up", total);
        progress->advance();
        if (done == total) progress->finish();
    };
    const ManifestReport report = lines ? warm_up_lines(*lines, options, path) : warm_up_manifest(path, options);
    for (const std::string& r : report.refused) std::cout << "cannot run: " << r << "\n";
    const int bad = static_cast<int>(report.refused.size());
    if (check_only) {
        std::printf("%s: %zu kernel specs, %d lines refused\n", path.c_str(), report.kernels, bad);
        return bad == 0 ? 0 : 1;
    }
    std::printf("warm-up of %s for %s: %zu kernels (%d already cached, %d compiled), %d lines refused, %.2f s with %d "
                "threads\n",
                path.c_str(), arch > 0 ? ("sm_" + std::to_string(arch)).c_str() : ("device " + std::to_string(device)).c_str(),
                report.kernels, report.already_cached, report.compiled, bad, report.seconds, threads);
    return bad == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::vector<Routine> routines = {Routine::potrf, Routine::potrs, Routine::posv};
        std::vector<Precision> precisions = {Precision::s, Precision::d};
        std::vector<LayoutKind> layouts = {LayoutKind::column_major, LayoutKind::interleaved};
        std::vector<int> orders = parse_orders("1:128");
        int nrhs = 1, batch = 16384, chunk = 32, device = 0, arch = 0;
        int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
        Uplo uplo = Uplo::lower;
        std::string manifest;
        bool check_only = false, list = false;
        std::vector<std::string> families = {"cholesky"};
        for (int i = 1; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw InvalidArgument("batchsolve-warmup", arg, "a value");
                return argv[++i];
            };
            if (arg == "--help" || arg == "-h") return usage(std::cout, 0);
            else if (arg == "--routines") {
                routines.clear();
                for (const auto& r : split(value())) routines.push_back(parse_routine(r));
            } else if (arg == "--precisions") {
                precisions.clear();
                for (const auto& p : split(value())) precisions.push_back(parse_precision(p));
            } else if (arg == "--layouts") {
                layouts.clear();
                for (const auto& l : split(value())) {
                    const LayoutKind k = parse_layout(l);
                    if (k == LayoutKind::pointer_array)
                        throw InvalidArgument("batchsolve-warmup", "--layouts",
                                              "column_major, interleaved or chunked (pointer_array runs the column-major kernels)");
                    layouts.push_back(k);
                }
            } else if (arg == "--n") orders = parse_orders(value());
            else if (arg == "--nrhs") nrhs = parse_int(value(), "--nrhs");
            else if (arg == "--batch") batch = parse_int(value(), "--batch");
            else if (arg == "--chunk") chunk = parse_int(value(), "--chunk");
            else if (arg == "--threads") threads = parse_int(value(), "--threads");
            else if (arg == "--device") device = parse_int(value(), "--device");
            else if (arg == "--arch") {
                arch = parse_int(value(), "--arch");
                if (arch < 10) throw InvalidArgument("batchsolve-warmup", "--arch", "a compute capability such as 90");
            }
            else if (arg == "--uplo") {
                const std::string u = value();
                if (u != "lower" && u != "upper") throw InvalidArgument("batchsolve-warmup", "--uplo", "lower or upper");
                uplo = u == "lower" ? Uplo::lower : Uplo::upper;
            } else if (arg == "--cache-dir") {
                const std::string dir = value();
                if (dir.empty()) throw InvalidArgument("batchsolve-warmup", "--cache-dir", "a directory");
                setenv("BATCHSOLVE_CACHE_DIR", dir.c_str(), 1);
            } else if (arg == "--families") {
                families = split(value());
                for (const std::string& f : families)
                    if (f != "cholesky" && f != "gemm" && f != "potf2" && f != "triangular")
                        throw InvalidArgument("batchsolve-warmup", "--families",
                                              "cholesky, gemm, potf2 or triangular (got '" + f + "')");
                if (families.empty()) throw InvalidArgument("batchsolve-warmup", "--families", "at least one family");
            } else if (arg == "--list") {
                list = true;
            } else if (arg == "--check-only") {
                check_only = true;
            } else if (arg == "--kernels") {
                manifest = value();
                if (manifest.empty()) throw InvalidArgument("batchsolve-warmup", "--kernels", "a file");
            } else throw InvalidArgument("batchsolve-warmup", arg, "a known option (--help)");
        }
        if (nrhs < 1) throw InvalidArgument("batchsolve-warmup", "--nrhs", ">= 1");
        if (batch < 1) throw InvalidArgument("batchsolve-warmup", "--batch", ">= 1");
        if (chunk < 1) throw InvalidArgument("batchsolve-warmup", "--chunk", ">= 1");
        if (threads < 1) throw InvalidArgument("batchsolve-warmup", "--threads", ">= 1");
        if (check_only) {
            if (manifest.empty()) throw InvalidArgument("batchsolve-warmup", "--check-only", "with --kernels FILE");
            return warm_manifest(manifest, device, arch, threads, true);
        }
        const bool cholesky = std::find(families.begin(), families.end(), "cholesky") != families.end();
        if (list && cholesky)
            throw InvalidArgument("batchsolve-warmup", "--list",
                                  "--families gemm, potf2 and/or triangular (a cholesky warm-up run with BATCHSOLVE_KERNEL_MANIFEST=FILE "
                                  "records its lines)");
        if (list && !manifest.empty()) throw InvalidArgument("batchsolve-warmup", "--list", "without --kernels");
        if (arch == 0 && !Context::cuda_available()) {
            std::cout << "skipped: no GPU (give --arch to compile for an architecture without one)\n";
            return 0;
        }
        if (!manifest.empty()) return warm_manifest(manifest, device, arch, threads, false);
        // The GEMM and POTF2 families: their tables' kernels as manifest lines (one spec format).
        std::vector<std::string> lines;
        for (const std::string& f : families) {
            if (f == "cholesky") continue;
            for (Precision p : precisions) {
                const std::vector<std::string> part = table_kernel_lines(f, p, arch, device);
                lines.insert(lines.end(), part.begin(), part.end());
            }
        }
        if (list) {
            for (const std::string& line : lines) std::cout << line << "\n";
            return 0;
        }
        int status = 0;
        if (!lines.empty()) {
            std::string origin;
            for (const std::string& f : families)
                if (f != "cholesky") origin += (origin.empty() ? "" : ",") + f;
            status = warm_manifest("the " + origin + " tables", device, arch, threads, false, &lines);
        }
        if (!cholesky) return status;
        std::unique_ptr<Context> ctx;
        if (arch == 0) ctx = std::make_unique<Context>(Backend::cuda, device);

        // One warm_up call per order: the compile threads stay busy within it, and the bar advances.
        WarmUpReport total;
        io::Progress progress("warm-up", orders.size());
        for (int n : orders) {
            std::vector<KernelCase> cases;
            for (Routine r : routines)
                for (Precision p : precisions)
                    for (LayoutKind l : layouts) {
                        KernelCase c;
                        c.routine = r, c.precision = p, c.layout = l, c.uplo = uplo;
                        c.n = n, c.nrhs = nrhs, c.count = batch;
                        c.chunk_size = l == LayoutKind::chunked_interleaved ? chunk : 0;
                        cases.push_back(c);
                    }
            const WarmUpReport part = ctx ? warm_up(cases, threads, *ctx) : warm_up_for_arch(cases, arch, threads);
            total.cases += part.cases, total.kernels += part.kernels;
            total.already_cached += part.already_cached, total.compiled += part.compiled;
            total.without_kernels += part.without_kernels, total.seconds += part.seconds;
            total.problems.insert(total.problems.end(), part.problems.begin(), part.problems.end());
            progress.advance();
        }
        progress.finish();
        for (const std::string& p : total.problems) std::cout << "cannot run: " << p << "\n";
        std::printf("warm-up on %s: %d cases, %d kernels (%d already cached, %d compiled), %d cases without "
                    "generated kernels, %zu refused, %.2f s with %d threads\n",
                    ctx ? ctx->device_name().c_str() : ("sm_" + std::to_string(arch)).c_str(), total.cases, total.kernels, total.already_cached, total.compiled,
                    total.without_kernels, total.problems.size(), total.seconds, threads);
        return total.problems.empty() ? status : 1;
    } catch (const std::exception& e) {
        std::cerr << "batchsolve-warmup: " << e.what() << "\n";
        return 2;
    }
}
