// als: the ALS recommender's command line (import, split, train, evaluate, recommend, generate, bench).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "batchsolve/multi_device.hpp"
#include "memory_plan.hpp"
#include "batchsolve_io/hdf5.hpp"
#include "batchsolve_io/output.hpp"
#include "batchsolve_io/progress.hpp"
#include "model.hpp"
#include "ranks.hpp"
#include "ratings.hpp"

namespace po = boost::program_options;
using namespace als;

namespace {

constexpr int exit_ok = 0, exit_usage = 2, exit_error = 3;

// The MPI ranks this process is one of (mpirun -np N als ...), or nullptr when it runs alone.
RankGroup* g_ranks = nullptr;
bool distributed() { return g_ranks != nullptr && g_ranks->size() > 1; }
// Rank 0 speaks for the job (progress, results, files); the others stay quiet.
bool speaker() { return g_ranks == nullptr || g_ranks->rank() == 0; }

// HDF5 1.10 can crash or hang on a crafted file (docs/input-checks.md; fuzz_als_model found both in
// model files): outside MPI each input is read once in a child process first, as bsolve does, so such
// a file ends in a one-line error naming it instead of a segfault or a hang of the job. Under mpirun
// the ranks read directly: fork() inside an MPI process is unsafe with some of Open MPI's transports.
// probe_s / read_s, when given, receive the wall seconds of the child's read and of this process's.
Ratings read_ratings_checked(const std::string& path, double* probe_s = nullptr, double* read_s = nullptr) {
    const auto t0 = std::chrono::steady_clock::now();
    if (g_ranks == nullptr) batchsolve::io::h5::probe_in_child(path, [&] { probe_ratings(path); });
    const auto t1 = std::chrono::steady_clock::now();
    Ratings r = read_ratings(path);
    if (probe_s) *probe_s = std::chrono::duration<double>(t1 - t0).count();
    if (read_s) *read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    return r;
}
Model read_model_checked(const std::string& path) {
    if (g_ranks == nullptr) batchsolve::io::h5::probe_in_child(path, [&] { read_model(path); });
    return read_model(path);
}

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Seconds since this process was started (exec), from /proc (clock-tick resolution); -1 where unknown.
double seconds_since_process_start() {
    std::ifstream stat("/proc/self/stat"), up("/proc/uptime");
    std::string text;
    double uptime = 0;
    if (!std::getline(stat, text) || !(up >> uptime)) return -1;
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream rest(text.substr(close + 1));
    std::string field;
    for (int i = 3; i <= 22 && rest >> field; ++i) {
    }  // field 22: starttime in clock ticks since boot
    try {
        return uptime - double(std::stoll(field)) / double(sysconf(_SC_CLK_TCK));
    } catch (const std::exception&) {
        return -1;
    }
}

std::string fmt(double v, const char* f = "%.4f") {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// A bad option value is a usage error (exit 2) wherever it is found, also by the parsers of
// model.hpp and ratings.hpp (which throw Error, as they do for files).
template <class F>
auto option_value(F&& parse) -> decltype(parse()) {
    try {
        return parse();
    } catch (const UsageError&) {
        throw;
    } catch (const std::exception& e) {
        throw UsageError(e.what());
    }
}

// A floating-point option that must be a finite number within [lo, hi].
template <class T>
T finite_option(const po::variables_map& vm, const char* name, double lo, double hi) {
    const T v = vm[name].as<T>();
    if (!std::isfinite(double(v)) || double(v) < lo || double(v) > hi) {
        std::ostringstream m;
        m << "--" << name << " must be a finite number in [" << lo << ", " << hi << "] (got " << v << ")";
        throw UsageError(m.str());
    }
    return v;
}

batchsolve::io::OutputOptions output_rules(bool force, std::vector<std::string> inputs) {
    return {force ? batchsolve::io::Existing::replace : batchsolve::io::Existing::refuse, std::move(inputs)};
}

// One rating far beyond the others (3e38 among stars) makes the squares of the fit overflow or
// dominate it: the fit "succeeds" with a loss of 1e73. Said once, with the rating and where it is.
void warn_outliers(const Ratings& r, const std::string& what) {
    const auto& v = r.by_user.values;
    if (v.size() < 2) return;
    constexpr double kOutlierRatio = 1e6;  // Last.fm's play counts span ~1e3 times their median
    {
        // The common case without a sort: when at most half the |ratings| lie below largest / ratio
        // (a hair above, against rounding), the median is at least that and nothing is to be said.
        const std::int64_t n = std::int64_t(v.size());
        const float* p = v.data();
        float largest = 0;
#pragma omp parallel for schedule(static) reduction(max : largest)
        for (std::int64_t e = 0; e < n; ++e) largest = std::max(largest, std::fabs(p[e]));
        const double bar = double(largest) / kOutlierRatio * (1 + 1e-9);
        std::int64_t below = 0;
#pragma omp parallel for schedule(static) reduction(+ : below)
        for (std::int64_t e = 0; e < n; ++e) below += double(std::fabs(p[e])) < bar;
        if (std::isfinite(largest) && bar > 1e-30 && below <= n / 2) return;
    }
    std::vector<float> mags(v.size());
    std::size_t worst = 0;
    for (std::size_t e = 0; e < v.size(); ++e) {
        mags[e] = std::fabs(v[e]);
        if (mags[e] > mags[worst]) worst = e;
    }
    const float largest = mags[worst];
    std::nth_element(mags.begin(), mags.begin() + std::ptrdiff_t(mags.size() / 2), mags.end());
    const double median = std::max(double(mags[mags.size() / 2]), 1e-30);
    if (double(largest) <= kOutlierRatio * median) return;
    const auto row = std::upper_bound(r.by_user.indptr.begin(), r.by_user.indptr.end(), std::int64_t(worst)) - r.by_user.indptr.begin() - 1;
    std::cerr << "als: warning: " << what << ": rating " << largest << " (user '" << r.user_ids[std::size_t(row)] << "', item '"
              << r.item_ids[std::size_t(r.by_user.indices[worst])] << "') is " << fmt(double(largest) / median, "%.3g")
              << " times the median |rating| " << median << ": it will dominate the fit (rescale or remove it)\n";
}

const char* const main_help =
    "als: alternating least squares recommender on batched exact Cholesky solves (batchsolve posv)\n"
    "\n"
    "usage: als <command> [options]      (als <command> --help for its options)\n"
    "\n"
    "commands:\n"
    "  import     ratings text file (MovieLens, Last.fm, generic CSV/TSV) -> HDF5 ratings file\n"
    "  split      ratings file -> train and test files (random per interaction, or leave-k-out per user)\n"
    "  train      explicit ALS-WR or implicit ALS on a ratings file -> HDF5 model\n"
    "  evaluate   RMSE/MAE (explicit) or P@k, MAP@k, NDCG@k, AUC (implicit) of a model on a test file,\n"
    "             with the baselines beside\n"
    "  recommend  top-N items for users (seen items excluded) or items similar to an item\n"
    "  generate   a synthetic rating set (power-law item popularity, planted low-rank signal)\n"
    "  bench      generate (or read) a set, train ours on each backend and, when available, `implicit`,\n"
    "             and print seconds per iteration and P@10 side by side (table + JSON)\n"
    "\n"
    "several devices and nodes: als train --devices 0,1 (one process, NCCL between the GPUs), or\n"
    "  mpirun -np N als train --seed S ... (one partition per rank, MPI between them; rank 0 writes)\n"
    "\n"
    "exit codes: 0 success, 2 usage error, 3 input/output or runtime error (one line on stderr)\n";

po::variables_map parse(const std::vector<std::string>& args, const po::options_description& desc) {
    po::variables_map vm;
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(desc).style(style).run(), vm);
    po::notify(vm);
    return vm;
}

bool wants_help(const std::vector<std::string>& args) {
    return std::find(args.begin(), args.end(), "--help") != args.end() || std::find(args.begin(), args.end(), "-h") != args.end();
}

void require(const po::variables_map& vm, std::initializer_list<const char*> names, const char* command) {
    for (const char* n : names)
        if (!vm.count(n)) throw UsageError(std::string("--") + n + " is required (see 'als " + command + " --help')");
}

std::uint64_t seed_from(const po::variables_map& vm) {
    if (vm.count("seed")) {
        const std::string t = vm["seed"].as<std::string>();
        std::size_t used = 0;
        unsigned long long v = 0;
        try {
            v = std::stoull(t, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != t.size() || t.empty() || t[0] == '-') throw UsageError("--seed must be a non-negative integer (got '" + t + "')");
        return v;
    }
    const std::uint64_t s = (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    std::cerr << "als: seed " << s << " (pass --seed " << s << " to repeat)\n";
    return s;
}

std::string command_line_text(const char* command, const std::vector<std::string>& args) {
    std::string s = std::string("als ") + command;
    for (const auto& a : args) s += " " + a;
    return s;
}


// ---- import --------------------------------------------------------------------------------------

int run_import(const std::vector<std::string>& args) {
    po::options_description d(
        "als import: a ratings text file -> HDF5 ratings file (schema: apps/als_recommender/README.md)\n\n"
        "Formats: movielens-csv (ratings.csv: userId,movieId,rating,timestamp with a header),\n"
        "movielens-100k (u.data: tab, no header), movielens-dat (ratings.dat: '::'), lastfm\n"
        "(user_artists.dat: tab, header, implicit play counts, duplicates summed), csv / tsv (generic:\n"
        "--columns and --header say the rest). Malformed lines stop the import with file:line and the\n"
        "reason, or are skipped and counted with --skip-bad. Repeated (user, item) pairs: --duplicates.\n\nOptions");
    d.add_options()("help,h", "this help")
        ("input,i", po::value<std::string>(), "text file to read")
        ("format", po::value<std::string>()->default_value("movielens-csv"), "movielens-csv | movielens-100k | movielens-dat | lastfm | csv | tsv")
        ("output,o", po::value<std::string>(), "HDF5 ratings file to write")
        ("columns", po::value<std::string>(), "csv/tsv: USER,ITEM[,RATING] 0-based column numbers (default 0,1,2; no RATING: every line counts 1)")
        ("header", po::value<bool>(), "csv/tsv: the first line is a header (default false)")
        ("delimiter", po::value<std::string>(), "override the format's field separator (\"space\" for runs of blanks)")
        ("feedback", po::value<std::string>(), "explicit | implicit (default: the format's: lastfm implicit, others explicit)")
        ("duplicates", po::value<std::string>(), "sum | last | error (default: lastfm sum, others last: a re-rating replaces the earlier)")
        ("skip-bad", "skip malformed lines (counted and the first one printed) instead of stopping")
        ("force", "replace the output file if it exists");
    if (wants_help(args)) return std::cout << d << "\n", exit_ok;
    const auto vm = parse(args, d);
    require(vm, {"input", "output"}, "import");
    TextFormat f = option_value([&] { return named_format(vm["format"].as<std::string>()); });
    if (vm.count("columns")) {
        if (f.name != "csv" && f.name != "tsv") throw UsageError("--columns is for --format csv or tsv");
        std::vector<int> cols;
        std::stringstream ss(vm["columns"].as<std::string>());
        std::string item;
        while (std::getline(ss, item, ',')) {
            std::size_t used = 0;
            int v = -1;
            try {
                v = std::stoi(item, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != item.size() || v < 0) throw UsageError("--columns: '" + item + "' is not a column number >= 0");
            cols.push_back(v);
        }
        if (cols.size() < 2 || cols.size() > 3) throw UsageError("--columns takes USER,ITEM or USER,ITEM,RATING");
        f.user_column = cols[0], f.item_column = cols[1], f.rating_column = cols.size() == 3 ? cols[2] : -1;
    }
    if (vm.count("header")) f.header = vm["header"].as<bool>();
    if (vm.count("delimiter")) f.delimiter = vm["delimiter"].as<std::string>() == "space" ? " " : vm["delimiter"].as<std::string>();
    if (f.delimiter.empty()) throw UsageError("--delimiter must not be empty");
    if (vm.count("feedback")) f.feedback = option_value([&] { return parse_feedback(vm["feedback"].as<std::string>()); });
    if (vm.count("duplicates")) f.duplicates = option_value([&] { return parse_duplicates(vm["duplicates"].as<std::string>()); });
    ImportReport rep;
    const std::string input = vm["input"].as<std::string>(), output = vm["output"].as<std::string>();
    batchsolve::io::check_outputs({{"--output", output}}, output_rules(vm.count("force") > 0, {input}));
    Ratings r = import_text(input, f, vm.count("skip-bad") > 0, &rep);
    warn_outliers(r, input);
    write_ratings(output, r, vm.count("force") > 0, {input}, command_line_text("import", args));
    std::cout << "imported " << r.nnz() << " " << to_string(r.feedback) << " ratings: " << r.users() << " users, " << r.items()
              << " items, " << rep.lines << " data lines, " << rep.duplicates_merged << " duplicate pairs merged ("
              << to_string(f.duplicates) << "), " << rep.bad_lines << " malformed lines skipped\n";
    if (rep.bad_lines) std::cout << "first skipped line: " << rep.first_bad << "\n";
    std::cout << "wrote " << output << "\n";
    return exit_ok;
}

// ---- split ---------------------------------------------------------------------------------------

int run_split(const std::vector<std::string>& args) {
    po::options_description d("als split: a ratings file -> train and test files with the same id maps\n\nOptions");
    d.add_options()("help,h", "this help")
        ("input,i", po::value<std::string>(), "ratings file")
        ("train", po::value<std::string>(), "training file to write")
        ("test", po::value<std::string>(), "test file to write")
        ("mode", po::value<std::string>()->default_value("random"), "random (each interaction to test with probability --test-fraction) | leave-k-out (k per user; users with <= k keep all in train)")
        ("test-fraction", po::value<double>()->default_value(0.2), "random: fraction of interactions in the test set")
        ("leave-k", po::value<int>()->default_value(1), "leave-k-out: test interactions per user")
        ("seed", po::value<std::string>(), "random seed (default: a fresh one, printed)")
        ("force", "replace the outputs if they exist");
    if (wants_help(args)) return std::cout << d << "\n", exit_ok;
    const auto vm = parse(args, d);
    require(vm, {"input", "train", "test"}, "split");
    SplitOptions o;
    const std::string mode = vm["mode"].as<std::string>();
    if (mode == "random") o.mode = SplitMode::random;
    else if (mode == "leave-k-out") o.mode = SplitMode::leave_k_out;
    else throw UsageError("--mode must be random or leave-k-out (got '" + mode + "')");
    o.test_fraction = vm["test-fraction"].as<double>();
    o.leave_k = vm["leave-k"].as<int>();
    if (o.mode == SplitMode::random && !(o.test_fraction > 0 && o.test_fraction < 1))
        throw UsageError("--test-fraction must be in (0, 1)");
    if (o.mode == SplitMode::leave_k_out && o.leave_k < 1) throw UsageError("--leave-k must be >= 1");
    const std::string in = vm["input"].as<std::string>(), tr = vm["train"].as<std::string>(), te = vm["test"].as<std::string>();
    // Both outputs before any work (and not the same file, by name or by inode).
    batchsolve::io::check_outputs({{"--train", tr}, {"--test", te}}, output_rules(vm.count("force") > 0, {in}));
    o.seed = seed_from(vm);
    const Ratings all = read_ratings_checked(in);
    auto [train_set, test_set] = split(all, o);
    const std::string cl = command_line_text("split", args);
    write_ratings(tr, train_set, vm.count("force") > 0, {in}, cl);
    write_ratings(te, test_set, vm.count("force") > 0, {in, tr}, cl);
    std::cout << "split " << all.nnz() << " ratings (seed " << o.seed << "): train " << train_set.nnz() << ", test "
              << test_set.nnz() << "\nwrote " << tr << " and " << te << "\n";
    return exit_ok;
}

// ---- train ---------------------------------------------------------------------------------------

void add_hyper_options(po::options_description& d) {
    d.add_options()
        ("factors,k", po::value<int>()->default_value(64), "latent factors k (GPU: posv's tuned kernels take systems up to 128, cuSOLVER "
                                                           "beyond; the CUDA engine goes to 256 (255 with --biases) with the tf32x3 build, 176 with fp32, the CPU to 1024)")
        ("iterations", po::value<int>()->default_value(15), "ALS iterations (each: users then items)")
        ("lambda", po::value<float>(), "regularisation (default 0.01 implicit, 0.05 explicit; explicit is scaled by each row's count: ALS-WR)")
        ("alpha", po::value<float>()->default_value(1.f), "implicit: confidence c = 1 + alpha * f(r)")
        ("weighting", po::value<std::string>()->default_value("none"), "implicit: f(r) = r (none), log(1 + r / eps) (log), or BM25 (bm25, K1 100, B 0.8)")
        ("log-epsilon", po::value<float>()->default_value(1.f), "implicit log weighting: eps")
        ("biases", "explicit: learn user and item biases beside the global mean")
        ("seed", po::value<std::string>(), "random seed of the initial factors (default: a fresh one, printed)")
        ("backend", po::value<std::string>()->default_value("auto"), "auto | cpu | cuda (auto: the GPU when present)")
        ("layout", po::value<std::string>()->default_value("column_major"), "GPU systems' layout for posv: column_major | interleaved | chunked")
        ("build-kernel", po::value<std::string>()->default_value("tf32x3-blocked"), "GPU: how each row's system is accumulated: "
                                                                                   "tf32x3-blocked (tensor cores, tf32x3's sums with "
                                                                                   "the operands split once per entry, 32 x 32 blocks "
                                                                                   "per warp, gathers overlapped by cp.async) | tf32x3 "
                                                                                   "(tensor cores, 16 x 16 tiles, three TF32 products "
                                                                                   "per step: FP32-level sums) | fp32 (FP32 multiply-"
                                                                                   "adds) | tf32 (one TF32 product per step: TF32-level "
                                                                                   "sums, ~1e-3 relative)")
        ("gram-kernel", po::value<std::string>()->default_value("split"), "GPU, implicit: how the Gram matrix of the other side's "
                                                                        "factors is formed: syrk (cuBLAS SSYRK over all rows) | split "
                                                                        "(the rows in parts summed on their own, then added in a fixed order)")
        ("solve-kernel", po::value<std::string>()->default_value("auto"), "GPU: how each slice of systems is solved: auto (tiled "
                                                                         "at widths 128 and 256, column-major; posv elsewhere) | posv (the "
                                                                         "library's posv_batched: generated kernels up to width "
                                                                         "241, cuSOLVER beyond) | vbatched (potrf_vbatched and two "
                                                                         "trsm_vbatched) | fused (the tf32x3-blocked build solves "
                                                                         "each system in shared memory: widths <= 256, sides whose "
                                                                         "rows have <= 131,072 entries; other sides posv) | "
                                                                         "fused-blocked (the same, Cholesky by panels of 16) | "
                                                                         "two-level (2 x 2 blocks: generated potrf/potrs kernels of "
                                                                         "half the width, trsm/syrk_vbatched between them) | "
                                                                         "tiled (one system per thread block, held in registers "
                                                                         "as 8 x 8 tiles: widths <= 256) | tiled-prefetch (the "
                                                                         "same, each block gathering its next system while it "
                                                                         "solves one)")
        ("overlap", po::value<std::string>()->default_value("off"), "GPU: on | builds-first | off: build the next slice of systems "
                                                                   "on a second stream while the current one is solved (sides of "
                                                                   "two or more slices; twice the slice memory; --solve-kernel "
                                                                   "posv, vbatched, two-level or tiled*); builds-first: that stream at the "
                                                                   "greatest priority (a build's blocks ahead of a solve's)")
        ("solver", po::value<std::string>()->default_value("exact"), "exact (Cholesky of each row's system) | cg (--cg-steps conjugate-"
                                                                    "gradient steps from the row's current factors, the system never "
                                                                    "formed, as `implicit`'s default; --backend cpu)")
        ("cg-steps", po::value<int>()->default_value(3), "--solver cg: steps per row and half-iteration")
        ("chunk-size", po::value<int>()->default_value(32), "chunked layout: systems per chunk")
        ("slice-mb", po::value<int>()->default_value(0), "solve at most this many MiB of systems at once (0: 4096 GPU, 1024 CPU)")
        ("devices", po::value<std::string>(), "train on several devices of this process: CUDA device ids (0,1 or all), or with --backend "
                                              "cpu as many CPU partitions as ids (for tests); users and items are partitioned, ratings stay "
                                              "with their partition. Under mpirun: the GPU of each rank (devices[local rank % count])")
        ("device-memory-mb", po::value<std::int64_t>()->default_value(0), "take each device to have this much memory (0: its free memory); "
                                                                         "every partition's estimate is checked against it before training, "
                                                                         "and with --backend cpu it simulates devices of that size")
        ("partitions", po::value<std::string>()->default_value("all"), "with --devices: all (one partition per listed device) | fit (the "
                                                                       "fewest of the listed devices whose partitions fit their memory)");
}

Hyper hyper_from(const po::variables_map& vm, Feedback feedback) {
    Hyper h;
    h.feedback = feedback;
    h.factors = vm["factors"].as<int>();
    h.iterations = vm["iterations"].as<int>();
    h.lambda = vm.count("lambda") ? vm["lambda"].as<float>() : (feedback == Feedback::implicit_counts ? 0.01f : 0.05f);
    h.alpha = vm["alpha"].as<float>();
    h.weighting = option_value([&] { return parse_weighting(vm["weighting"].as<std::string>()); });
    h.log_epsilon = vm["log-epsilon"].as<float>();
    h.biases = vm.count("biases") > 0;
    if (h.factors < 1 || h.factors > 1024) throw UsageError("--factors must be in [1, 1024] (got " + std::to_string(h.factors) + ")");
    if (h.iterations < 0) throw UsageError("--iterations must be >= 0");
    if (vm.count("lambda")) finite_option<float>(vm, "lambda", 0, 1e30);
    finite_option<float>(vm, "alpha", 0, 1e30);
    if (!(h.log_epsilon > 0) || !std::isfinite(h.log_epsilon)) throw UsageError("--log-epsilon must be a finite number > 0");
    h.seed = seed_from(vm);
    return h;
}

TrainOptions train_options_from(const po::variables_map& vm) {
    TrainOptions o;
    o.backend = vm["backend"].as<std::string>();
    o.layout = option_value([&] { return parse_layout(vm["layout"].as<std::string>()); });
    o.build = option_value([&] { return parse_build_kernel(vm["build-kernel"].as<std::string>()); });
    o.gram = option_value([&] { return parse_gram_kernel(vm["gram-kernel"].as<std::string>()); });
    o.solve_kernel = option_value([&] { return parse_solve_kernel(vm["solve-kernel"].as<std::string>()); });
    o.solver = option_value([&] { return parse_solver(vm["solver"].as<std::string>()); });
    const std::string overlap = vm["overlap"].as<std::string>();
    if (overlap != "on" && overlap != "builds-first" && overlap != "off")
        throw UsageError("--overlap must be on, builds-first or off (got '" + overlap + "')");
    o.overlap = overlap != "off", o.builds_first = overlap == "builds-first";
    o.cg_steps = vm["cg-steps"].as<int>();
    if (o.cg_steps < 1 || o.cg_steps > 1000) throw UsageError("--cg-steps must be in [1, 1000] (got " + std::to_string(o.cg_steps) + ")");
    if (o.solver == Solver::cg && o.backend == "cuda")
        throw UsageError("--solver cg runs on --backend cpu (the CUDA engine solves each system exactly)");
    o.chunk_size = vm["chunk-size"].as<int>();
    if (o.chunk_size < 1) throw UsageError("--chunk-size must be >= 1");
    const int mb = vm["slice-mb"].as<int>();
    if (mb < 0) throw UsageError("--slice-mb must be >= 0");
    o.slice_bytes = std::uint64_t(mb) << 20;
    if (vm.count("devices")) {
        const auto backend = o.backend == "cpu" ? batchsolve::Backend::cpu : o.backend == "cuda" ? batchsolve::Backend::cuda
                                                                                                  : batchsolve::Backend::automatic;
        try {
            o.devices = batchsolve::DeviceGroup::parse_devices(vm["devices"].as<std::string>(), backend);
        } catch (const batchsolve::InvalidArgument& e) {
            throw UsageError("--devices: " + e.condition());
        }
    }
    const std::int64_t memory_mb = vm["device-memory-mb"].as<std::int64_t>();
    if (memory_mb < 0) throw UsageError("--device-memory-mb must be >= 0");
    o.device_memory_bytes = std::uint64_t(memory_mb) << 20;
    const std::string partitions = vm["partitions"].as<std::string>();
    if (partitions != "all" && partitions != "fit") throw UsageError("--partitions must be all or fit (got '" + partitions + "')");
    o.fit_partitions = partitions == "fit";
    o.ranks = g_ranks;
    return o;
}

int run_train(const std::vector<std::string>& args) {
    po::options_description d(
        "als train: ALS on a ratings file -> HDF5 model. Each half-iteration builds one k x k system per user\n"
        "(item) and solves them all with one batched FP32 Cholesky posv; per iteration it prints the time\n"
        "spent building and solving, the training loss and the test metric (RMSE or P@10).\n\nOptions");
    d.add_options()("help,h", "this help")
        ("train", po::value<std::string>(), "training ratings file")
        ("test", po::value<std::string>(), "test ratings file (from als split) for the per-iteration metric")
        ("output,o", po::value<std::string>(), "model file to write")
        ("resume", po::value<std::string>(), "continue from this model (same factors, biases, feedback and ids); --iterations more")
        ("eval-every", po::value<int>()->default_value(1), "test metric every N iterations (0: never)")
        ("no-loss", "skip the training loss (it costs a pass over the data per iteration)")
        ("force", "replace the output file if it exists");
    add_hyper_options(d);
    if (wants_help(args)) return std::cout << d << "\n", exit_ok;
    const auto vm = parse(args, d);
    require(vm, {"train", "output"}, "train");
    if (distributed() && !vm.count("seed") && !vm.count("resume"))
        throw UsageError("under mpirun, --seed is required: every rank must start from the same factors");
    const std::string train_path = vm["train"].as<std::string>(), out = vm["output"].as<std::string>();
    if (vm["eval-every"].as<int>() < 0) throw UsageError("--eval-every must be >= 0 (0: never)");
    {
        std::vector<std::string> inputs{train_path};
        if (vm.count("test")) inputs.push_back(vm["test"].as<std::string>());
        if (vm.count("resume")) inputs.push_back(vm["resume"].as<std::string>());
        if (speaker()) batchsolve::io::check_outputs({{"--output", out}}, output_rules(vm.count("force") > 0, inputs));
    }
    const auto started = std::chrono::steady_clock::now();
    const double before_main = seconds_since_process_start();  // loading the program and its libraries
    auto since_start = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
    TrainOptions o = train_options_from(vm);
    double probe_s = 0, read_s = 0;
    // Every input is probed before the set-up thread starts: no fork() while it runs.
    const std::string test_path = vm.count("test") ? vm["test"].as<std::string>() : std::string();
    const std::string resume_path = vm.count("resume") ? vm["resume"].as<std::string>() : std::string();
    if (g_ranks == nullptr) {
        batchsolve::io::h5::probe_in_child(train_path, [&] { probe_ratings(train_path); });
        if (!test_path.empty()) batchsolve::io::h5::probe_in_child(test_path, [&] { probe_ratings(test_path); });
        if (!resume_path.empty()) batchsolve::io::h5::probe_in_child(resume_path, [&] { read_model(resume_path); });
    }
    const auto probed = std::chrono::steady_clock::now();
    probe_s = std::chrono::duration<double>(probed - started).count();
    // The file read in the child without harm: the CUDA engine's set-up (context, cuBLAS, kernels)
    // starts on a thread of its own now and runs while this thread reads the file. One engine only
    // (several devices and MPI ranks set up their own).
    const std::string backend = vm["backend"].as<std::string>();
    if (!distributed() && o.devices.size() <= 1 && (backend == "cuda" || backend == "auto")) {
        try {
            const RatingsShape shape = read_ratings_shape(train_path);
            EngineSettings es;
            es.width = vm["factors"].as<int>() + (vm.count("biases") ? 1 : 0);
            es.implicit = shape.feedback == Feedback::implicit_counts;
            es.biases = vm.count("biases") > 0;
            es.layout = o.layout, es.chunk_size = o.chunk_size, es.build = o.build, es.gram = o.gram;
            // The slices train's engine will solve (so that the warm-up prepares their kernels).
            es.slice_bytes = o.slice_bytes ? o.slice_bytes : EngineSettings::kDefaultGpuSliceBytes;
            es.solve_kernel = resolve_solve_kernel(o.solve_kernel, es.width, es.layout);
            es.device = o.devices.empty() ? 0 : o.devices.front();
            o.cuda_warmup = start_cuda_warmup(es, shape.users, shape.items);
        } catch (const Error&) {
            // No announced shape: the engine sets itself up after the read, as without a warm-up.
        }
    }
    Ratings train_set = read_ratings(train_path);
    read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - probed).count();
    if (speaker()) warn_outliers(train_set, train_path);
    std::unique_ptr<Ratings> test_set;
    if (!test_path.empty()) test_set = std::make_unique<Ratings>(read_ratings(test_path));
    std::unique_ptr<Model> resume;
    if (!resume_path.empty()) resume = std::make_unique<Model>(read_model(resume_path));
    Hyper h = hyper_from(vm, train_set.feedback);
    o.compute_loss = vm.count("no-loss") == 0;
    o.eval_every = vm["eval-every"].as<int>();
    if (speaker()) std::cout << "training " << to_string(h.feedback) << " ALS: " << train_set.users() << " users, " << train_set.items() << " items, "
              << train_set.nnz() << " ratings; k " << h.factors << ", lambda " << h.lambda
              << (h.feedback == Feedback::implicit_counts ? ", alpha " + fmt(h.alpha, "%g") + ", weighting " + to_string(h.weighting) : "")
              << (h.biases ? ", biases" : "") << "\n";
    std::optional<batchsolve::io::Progress> progress;
    if (speaker()) progress.emplace("train", std::uint64_t(std::max(h.iterations, 0)));
    o.on_iteration = [&](const IterationLog& l) {
        if (!speaker()) return;
        std::ostringstream line;
        line << "iter " << l.iteration << "  build " << fmt(l.build_s) << " s  solve " << fmt(l.solve_s) << " s";
        // --overlap on: builds and solves ran at once for this long (the iteration took build + solve - overlapped).
        if (l.overlap_s > 0) line << "  overlapped " << fmt(l.overlap_s) << " s";
        if (l.exchange_s > 0) line << "  exchange " << fmt(l.exchange_s) << " s";
        // Where the half-iterations' time goes (GPU): users' and items' build and solve, the Gram matrices' part of the build.
        if (l.gram_s > 0)
            line << "  (users build " << fmt(l.users_build_s) << " solve " << fmt(l.users_solve_s) << ", items build "
                 << fmt(l.build_s - l.users_build_s) << " solve " << fmt(l.solve_s - l.users_solve_s) << "; Gram " << fmt(l.gram_s) << " of the builds)";
        if (!std::isnan(l.loss)) line << "  loss " << fmt(l.loss, "%.6g");
        if (!std::isnan(l.test_metric)) line << (h.feedback == Feedback::explicit_ratings ? "  test RMSE " : "  test P@10 ") << fmt(l.test_metric);
        if (l.failed) line << "  (" << l.failed << " systems not positive definite: rows set to 0)";
        if (isatty(fileno(stderr))) std::cerr << "\r\033[K";  // clear the progress bar's line before printing
        std::cout << line.str() << std::endl;
        progress->advance();
    };
    // Start-up stages on one line before the first iteration's, so a user sees where the wait goes.
    std::ostringstream stages;
    stages << "start-up: probe of the file in a child " << fmt(probe_s, "%.3f") << " s, read + checks " << fmt(read_s, "%.3f") << " s";
    std::ostringstream finishing;  // the stages after the last iteration, printed with the total
    bool iterating = false;
    o.on_stage = [&](const char* name, double seconds) {
        if (iterating) {
            finishing << (finishing.tellp() > 0 ? ", " : "") << name << " " << fmt(seconds, "%.3f") << " s";
            return;
        }
        stages << ", " << name << " " << fmt(seconds, "%.3f") << " s";
        iterating = std::string(name) == "first iteration";
        if (std::string(name) == "first iteration" && speaker()) {
            if (o.cuda_warmup && cuda_warmup_seconds(*o.cuda_warmup) > 0)
                stages << " (CUDA set-up on its own thread from the end of the probe on, beside the read: "
                       << fmt(cuda_warmup_seconds(*o.cuda_warmup), "%.3f") << " s: " << cuda_warmup_summary(*o.cuda_warmup) << ")";
            std::cout << stages.str() << "; time to first iteration " << fmt(since_start(), "%.3f") << " s" << std::endl;
        }
    };
    std::future<void> engine_released;
    o.engine_release = &engine_released;
    // This process ends after the model is written (the quick exit below): the engine's thread also
    // tears down the GPU context beside the writing.
    o.release_device = g_ranks == nullptr;
    Model m = train(std::move(train_set), h, o, test_set.get(), resume.get());
    const auto trained = std::chrono::steady_clock::now();
    if (!speaker()) return exit_ok;  // every rank holds the same model; rank 0 writes it
    progress->finish();
    // A model of NaN or Inf factors (an overflowing fit) is an error, never written as a result.
    for (const auto* v : {&m.user_factors, &m.item_factors})
        if (!all_finite(*v))
            throw Error("training diverged: the factors are not finite (NaN or Inf); nothing written to " + out +
                        " (check the ratings' range, or raise --lambda)");
    m.command_line = command_line_text("train", args);
    std::vector<std::string> inputs{train_path};
    if (vm.count("test")) inputs.push_back(vm["test"].as<std::string>());
    if (vm.count("resume")) inputs.push_back(vm["resume"].as<std::string>());
    write_model(out, m, vm.count("force") > 0, inputs);
    const auto written = std::chrono::steady_clock::now();
    const double write_s = std::chrono::duration<double>(written - trained).count();
    if (engine_released.valid()) {
        engine_released.get();
        finishing << (finishing.tellp() > 0 ? ", " : "") << "device memory released beside the writing (waited "
                  << fmt(std::chrono::duration<double>(std::chrono::steady_clock::now() - written).count(), "%.3f") << " s for it)";
    }
    if (!m.partition_plan.empty()) std::cout << "device memory: " << m.partition_plan << "\n";
    std::cout << "backend " << m.backend << " (" << m.device << ")";
    if (m.peak_device_bytes)
        std::cout << ", peak GPU memory in use " << fmt(double(m.peak_device_bytes) / double(1 << 30), "%.2f") << " GiB (CUDA context included)";
    std::cout << "; wrote " << out << "\n";
    std::cout << "total " << fmt(since_start(), "%.3f") << " s (reading, training, writing the model: " << fmt(write_s, "%.3f")
              << " s)";
    if (before_main >= 0) std::cout << "; the process had run " << fmt(before_main, "%.2f") << " s before reading began";
    std::cout << "\n";
    if (finishing.tellp() > 0) std::cout << "finishing: " << finishing.str() << "\n";
    if (!m.engine_notes.empty()) std::cout << "solver kernels: " << m.engine_notes << "\n";
    if (g_ranks == nullptr) {
        // The model is committed and the GPU released: the process ends here, without the static
        // destructors and the runtime's exit handlers (nothing left for them but freeing memory).
        std::cout.flush();
        std::fflush(nullptr);
        std::_Exit(exit_ok);
    }
    return exit_ok;
}

// ---- evaluate ------------------------------------------------------------------------------------

int run_evaluate(const std::vector<std::string>& args) {
    po::options_description d(
        "als evaluate: a model on a test file. Explicit: RMSE and MAE, beside the global mean and damped\n"
        "user + item biases (these need --train). Implicit: precision@k, MAP@k, NDCG@k (definitions of\n"
        "implicit.evaluation.ranking_metrics_at_k) and AUC, the model's training items excluded, beside\n"
        "item popularity.\n\nOptions");
    d.add_options()("help,h", "this help")
        ("model,m", po::value<std::string>(), "model file")
        ("test", po::value<std::string>(), "test ratings file")
        ("train", po::value<std::string>(), "training file (explicit baselines; implicit popularity uses the model's seen items)")
        ("k", po::value<int>()->default_value(10), "cut-off of the ranking metrics")
        ("json", po::value<std::string>(), "also write the numbers to this JSON file")
        ("force", "replace the JSON file if it exists");
    if (wants_help(args)) return std::cout << d << "\n", exit_ok;
    const auto vm = parse(args, d);
    require(vm, {"model", "test"}, "evaluate");
    if (vm["k"].as<int>() < 1) throw UsageError("--k must be >= 1");
    std::vector<std::string> inputs{vm["model"].as<std::string>(), vm["test"].as<std::string>()};
    if (vm.count("train")) inputs.push_back(vm["train"].as<std::string>());
    const batchsolve::io::OutputOptions rules = output_rules(vm.count("force") > 0, inputs);
    if (vm.count("json")) batchsolve::io::check_outputs({{"--json", vm["json"].as<std::string>()}}, rules);
    const Model m = read_model_checked(vm["model"].as<std::string>());
    const Ratings test = read_ratings_checked(vm["test"].as<std::string>());
    if (test.nnz() == 0) throw Error(vm["test"].as<std::string>() + ": holds no ratings: nothing to evaluate");
    nlohmann::json j;
    if (m.hyper.feedback == Feedback::explicit_ratings) {
        const auto r = evaluate_explicit(m, test);
        std::cout << "model            RMSE " << fmt(r.rmse) << "  MAE " << fmt(r.mae) << "  (" << r.count << " test ratings)\n";
        j["model"] = {{"rmse", r.rmse}, {"mae", r.mae}, {"count", r.count}};
        if (vm.count("train")) {
            const Ratings train_set = read_ratings_checked(vm["train"].as<std::string>());
            const auto g = baseline_global_mean(train_set, test), b = baseline_biases(train_set, test);
            std::cout << "global mean      RMSE " << fmt(g.rmse) << "  MAE " << fmt(g.mae) << "\n";
            std::cout << "user+item biases RMSE " << fmt(b.rmse) << "  MAE " << fmt(b.mae) << "\n";
            j["global_mean"] = {{"rmse", g.rmse}, {"mae", g.mae}};
            j["biases"] = {{"rmse", b.rmse}, {"mae", b.mae}};
        } else {
            std::cout << "(pass --train for the global-mean and bias baselines)\n";
        }
    } else {
        const int k = vm["k"].as<int>();
        const auto r = evaluate_ranking(m, test, k);
        Ratings seen_only;
        seen_only.by_user = m.seen;
        seen_only.by_user.values.assign(m.seen.indices.size(), 1.f);
        seen_only.by_item = transpose(seen_only.by_user);
        const auto p = baseline_popularity(seen_only, test, k);
        auto row = [&](const char* name, const RankingMetrics& x) {
            std::cout << name << "  P@" << k << " " << fmt(x.precision) << "  MAP@" << k << " " << fmt(x.map) << "  NDCG@" << k << " "
                      << fmt(x.ndcg) << "  AUC " << fmt(x.auc) << "  (" << x.users << " users)\n";
            return nlohmann::json{{"precision", x.precision}, {"map", x.map}, {"ndcg", x.ndcg}, {"auc", x.auc}, {"users", x.users}};
        };
        j["k"] = k;
        j["model"] = row("model     ", r);
        j["popularity"] = row("popularity", p);
    }
    if (vm.count("json")) batchsolve::io::write_text_file(vm["json"].as<std::string>(), j.dump(2) + "\n", rules);
    return exit_ok;
}

// ---- recommend -----------------------------------------------------------------------------------

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw Error(path + ": cannot open for reading");
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) out.push_back(line);
    }
    return out;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

int run_recommend(const std::vector<std::string>& args) {
    po::options_description d(
        "als recommend: top-N items for users (their training items excluded) or, with --similar-to, the\n"
        "items closest to an item by the cosine of their factors. Ids are those of the source file.\n\nOptions");
    d.add_options()("help,h", "this help")
        ("model,m", po::value<std::string>(), "model file")
        ("users", po::value<std::string>(), "comma-separated user ids")
        ("users-file", po::value<std::string>(), "file with one user id per line")
        ("similar-to", po::value<std::string>(), "comma-separated item ids: similar items instead of recommendations")
        ("n", po::value<int>()->default_value(10), "items per user (or per item)")
        ("items-allowed", po::value<std::string>(), "file with one item id per line: recommend only these")
        ("format", po::value<std::string>()->default_value("csv"), "csv | json")
        ("output,o", po::value<std::string>(), "file to write (default: standard output)")
        ("force", "replace the output file if it exists");
    if (wants_help(args)) return std::cout << d << "\n", exit_ok;
    const auto vm = parse(args, d);
    require(vm, {"model"}, "recommend");
    std::vector<std::string> inputs{vm["model"].as<std::string>()};
    for (const char* in : {"users-file", "items-allowed"})
        if (vm.count(in)) inputs.push_back(vm[in].as<std::string>());
    const batchsolve::io::OutputOptions rules = output_rules(vm.count("force") > 0, inputs);
    if (vm.count("output")) batchsolve::io::check_outputs({{"--output", vm["output"].as<std::string>()}}, rules);
    const std::string model_path = vm["model"].as<std::string>();
    const std::string format = vm["format"].as<std::string>();
    if (format != "csv" && format != "json") throw UsageError("--format must be csv or json");
    const int n = vm["n"].as<int>();
    if (n < 1) throw UsageError("--n must be >= 1");
    const Model m = read_model_checked(model_path);
    struct Query {
        std::string id;
        std::vector<Scored> result;
    };
    std::vector<Query> queries;
    const bool similar = vm.count("similar-to") > 0;
    if (similar) {
        for (const auto& id : split_list(vm["similar-to"].as<std::string>()))
            queries.push_back({id, similar_items(m, find_id(m.item_ids, id, "item", model_path), n)});
    } else {
        std::vector<std::string> users;
        if (vm.count("users")) users = split_list(vm["users"].as<std::string>());
        if (vm.count("users-file")) {
            const auto more = read_lines(vm["users-file"].as<std::string>());
            users.insert(users.end(), more.begin(), more.end());
        }
        if (users.empty()) throw UsageError("--users, --users-file or --similar-to is required");
        std::vector<char> allowed;
        if (vm.count("items-allowed")) {
            allowed.assign(std::size_t(m.items()), 0);
            for (const auto& id : read_lines(vm["items-allowed"].as<std::string>()))
                allowed[std::size_t(find_id(m.item_ids, id, "item", model_path))] = 1;
        }
        for (const auto& id : users)
            queries.push_back({id, recommend(m, find_id(m.user_ids, id, "user", model_path), n, allowed.empty() ? nullptr : &allowed)});
    }
    std::ostringstream out;
    const char* key = similar ? "item" : "user";
    if (format == "csv") {
        out << key << ",rank,item,score\n";
        for (const auto& q : queries)
            for (std::size_t r = 0; r < q.result.size(); ++r)
                out << csv_field(q.id) << "," << r + 1 << "," << csv_field(m.item_ids[std::size_t(q.result[r].index)]) << ","
                    << q.result[r].score << "\n";
    } else {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& q : queries) {
            nlohmann::json items = nlohmann::json::array();
            for (const auto& s : q.result) items.push_back({{"item", m.item_ids[std::size_t(s.index)]}, {"score", s.score}});
            j.push_back({{key, q.id}, {"items", items}});
        }
        out << j.dump(2) << "\n";
    }
    if (vm.count("output")) {
        batchsolve::io::write_text_file(vm["output"].as<std::string>(), out.str(), rules);
    } else {
        std::cout << out.str();
    }
    return exit_ok;
}

// ---- generate ------------------------------------------------------------------------------------

void add_generate_options(po::options_description& d) {
    d.add_options()
        ("shape", po::value<std::string>(), "ml20m (138,493 x 26,744, 20.0 M) | netflix (480,189 x 17,770, 100 M); --users etc. override")
        ("users", po::value<std::int64_t>(), "users (default 1000)")
        ("items", po::value<std::int64_t>(), "items (default 500)")
        ("interactions", po::value<std::int64_t>(), "interactions wanted (default 20000; the result is close, printed)")
        ("rank", po::value<int>()->default_value(16), "rank of the planted signal")
        ("zipf", po::value<double>()->default_value(1.0), "item popularity exponent")
        ("noise", po::value<double>()->default_value(0.3), "noise on the planted affinity of each draw")
        ("feedback", po::value<std::string>()->default_value("implicit"), "implicit (counts) | explicit (1..5 stars)");
}

GenerateOptions generate_options_from(const po::variables_map& vm) {
    GenerateOptions o;
    if (vm.count("shape")) {
        const std::string s = vm["shape"].as<std::string>();
        if (s == "ml20m") o.users = 138493, o.items = 26744, o.interactions = 20000263;
        else if (s == "netflix") o.users = 480189, o.items = 17770, o.interactions = 100480507;
        else throw UsageError("--shape must be ml20m or netflix (got '" + s + "')");
    }
    if (vm.count("users")) o.users = vm["users"].as<std::int64_t>();
    if (vm.count("items")) o.items = vm["items"].as<std::int64_t>();
    if (vm.count("interactions")) o.interactions = vm["interactions"].as<std::int64_t>();
    o.rank = vm["rank"].as<int>();
    o.zipf = finite_option<double>(vm, "zipf", 0, 100);
    o.noise = finite_option<double>(vm, "noise", 0, 1e6);
    o.feedback = option_value([&] { return parse_feedback(vm["feedback"].as<std::string>()); });
    if (o.rank < 1 || o.rank > 1024) throw UsageError("--rank must be in [1, 1024]");
    if (o.users < 1 || o.items < 1 || o.interactions < 1) throw UsageError("--users, --items and --interactions must be >= 1");
    return o;
}

int run_generate(const std::vector<std::string>& args) {
    po::options_description d("als generate: a synthetic rating set -> HDF5 ratings file\n\nOptions");
    d.add_options()("help,h", "this help")("output,o", po::value<std::string>(), "ratings file to write")
        ("seed", po::value<std::string>(), "random seed (default: a fresh one, printed)")("force", "replace the output if it exists")
        ("fill-memory", po::value<double>(), "size the set from device memory: users and interactions of the shape scaled so that one "
                                             "GPU engine needs this multiple of a device's memory (e.g. 1.5: does not fit one device)")
        ("device-memory-mb", po::value<std::int64_t>()->default_value(0), "with --fill-memory: the device's memory (0: device 0's free memory)")
        ("factors", po::value<int>()->default_value(64), "with --fill-memory: the factors the estimate is for")
        ("slice-mb", po::value<int>()->default_value(0), "with --fill-memory: train's --slice-mb the estimate is for (0: 4096)");
    add_generate_options(d);
    if (wants_help(args)) return std::cout << d << "\n", exit_ok;
    const auto vm = parse(args, d);
    require(vm, {"output"}, "generate");
    GenerateOptions o = generate_options_from(vm);
    batchsolve::io::check_outputs({{"--output", vm["output"].as<std::string>()}}, output_rules(vm.count("force") > 0, {}));
    o.seed = seed_from(vm);
    if (vm.count("fill-memory")) {
        const double fraction = vm["fill-memory"].as<double>();
        if (!(fraction > 0) || !std::isfinite(fraction)) throw UsageError("--fill-memory must be > 0");
        const int factors = vm["factors"].as<int>();
        if (factors < 1) throw UsageError("--factors must be >= 1");
        const std::int64_t mb = vm["device-memory-mb"].as<std::int64_t>();
        if (mb < 0) throw UsageError("--device-memory-mb must be >= 0");
        std::uint64_t memory = std::uint64_t(mb) << 20;
        if (memory == 0) memory = cuda_free_bytes(0);
        if (memory == 0) throw UsageError("--fill-memory: no GPU to size the set from; give --device-memory-mb");
        const int slice_mb = vm["slice-mb"].as<int>();
        if (slice_mb < 0) throw UsageError("--slice-mb must be >= 0");
        o = scale_to_memory(o, factors, std::uint64_t(fraction * double(memory)), std::uint64_t(slice_mb) << 20);
        std::cout << "sized for " << fmt(fraction, "%.2f") << " x " << fmt(double(memory) / double(1ull << 30), "%.2f") << " GiB of device memory (k = "
                  << factors << "): " << o.users << " users x " << o.items << " items, " << o.interactions << " interactions wanted\n";
    }
    const auto t0 = std::chrono::steady_clock::now();
    const Ratings r = generate(o);
    write_ratings(vm["output"].as<std::string>(), r, vm.count("force") > 0, {}, command_line_text("generate", args));
    std::cout << "generated " << r.nnz() << " " << to_string(r.feedback) << " ratings, " << r.users() << " users x " << r.items()
              << " items in " << fmt(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), "%.1f")
              << " s; wrote " << vm["output"].as<std::string>() << "\n";
    return exit_ok;
}

// ---- bench ---------------------------------------------------------------------------------------

double median(std::vector<double> v) {
    if (v.empty()) return std::nan("");
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int run_bench(const std::vector<std::string>& args) {
    po::options_description d(
        "als bench: implicit ALS on a synthetic set (or --input) split 80/20 per interaction, trained by ours on\n"
        "each backend and, with --implicit-script, by `implicit` (CPU, and GPU when its CUDA extension and rmm\n"
        "load) in a Python subprocess on the same files with the same k, lambda, alpha and iterations. Prints\n"
        "seconds per iteration (median of iterations 2..N, wall clock; ours also split into build and solve),\n"
        "speed-ups over `implicit` and P@10 of every model by the same evaluation code, and writes JSON and a\n"
        "markdown table. Confidence: ours 1 + alpha r; `implicit` is given the same values (1 + alpha r as its\n"
        "data, alpha 1) so that both fit the same objective.\n\nOptions");
    d.add_options()("help,h", "this help")
        ("input,i", po::value<std::string>(), "ratings file to use instead of generating one")
        ("factors-list", po::value<std::string>()->default_value("64"), "comma-separated k values")
        ("iterations", po::value<int>()->default_value(5), "iterations per fit")
        ("lambda", po::value<float>()->default_value(0.01f), "regularisation")
        ("alpha", po::value<float>()->default_value(1.f), "confidence 1 + alpha r")
        ("backends", po::value<std::string>()->default_value("cuda,cpu"), "our backends to run (cuda is skipped without a GPU)")
        ("solver", po::value<std::string>()->default_value("exact"), "ours: exact | cg (CPU backend; `implicit` runs CG unless "
                                                                    "IMPLICIT_EXACT=1)")
        ("cg-steps", po::value<int>()->default_value(3), "ours with --solver cg: steps per row and half-iteration")
        ("layouts", po::value<std::string>()->default_value("column_major"), "GPU: comma-separated layouts to time (column_major, interleaved, chunked)")
        ("device-sets", po::value<std::string>()->default_value(""), "train once per set of devices, ';'-separated (e.g. '0;0,1': one GPU, then two); "
                                                                       "rows get the speed-up over the first set. Default: one engine")
        ("cpu-max-interactions", po::value<std::int64_t>()->default_value(30000000), "skip CPU fits (ours and implicit's) above this many interactions")
        ("eval-users", po::value<std::int64_t>()->default_value(20000), "P@10 etc. on this many test users (a seeded sample, the same for every model; 0: all)")
        ("implicit-script", po::value<std::string>(), "scripts/bench_implicit.py: run `implicit` beside ours")
        ("python", po::value<std::string>()->default_value("python3"), "Python interpreter for the script")
        ("implicit-timeout", po::value<int>()->default_value(0), "seconds the script may run per k (0: no limit; needs coreutils' timeout)")
        ("work-dir", po::value<std::string>()->default_value("."), "where the generated files go")
        ("json", po::value<std::string>(), "results JSON to write")
        ("markdown", po::value<std::string>(), "results table (markdown) to write")
        ("force", "replace --json and --markdown files if they exist")
        ("seed", po::value<std::string>(), "seed of the generator, split and initial factors (default: fresh, printed)");
    add_generate_options(d);
    if (wants_help(args)) return std::cout << d << "\n", exit_ok;
    const auto vm = parse(args, d);
    std::vector<std::string> bench_inputs;
    if (vm.count("input")) bench_inputs.push_back(vm["input"].as<std::string>());
    batchsolve::io::OutputOptions report_rules = output_rules(vm.count("force") > 0, bench_inputs);
    {
        std::vector<batchsolve::io::OutputTarget> reports;
        for (const char* key : {"json", "markdown"})
            if (vm.count(key)) reports.push_back({std::string("--") + key, vm[key].as<std::string>()});
        batchsolve::io::check_outputs(reports, report_rules);
    }
    const std::uint64_t seed = seed_from(vm);
    namespace fs = std::filesystem;
    const fs::path work = vm["work-dir"].as<std::string>();
    fs::create_directories(work);
    const auto t0 = std::chrono::steady_clock::now();
    Ratings all;
    std::string data_name;
    if (vm.count("input")) {
        all = read_ratings_checked(vm["input"].as<std::string>());
        data_name = vm["input"].as<std::string>();
    } else {
        GenerateOptions g = generate_options_from(vm);
        g.seed = seed;
        all = generate(g);
        data_name = vm.count("shape") ? vm["shape"].as<std::string>() : std::string("synthetic");
    }
    if (all.feedback != Feedback::implicit_counts) throw UsageError("bench runs implicit ALS: the ratings must be implicit");
    SplitOptions so;
    so.seed = seed + 1;
    auto [train_set, test_set] = split(all, so);
    const fs::path train_path = work / "bench_train.h5", test_path = work / "bench_test.h5";
    write_ratings(train_path.string(), train_set, true, {}, command_line_text("bench", args));
    write_ratings(test_path.string(), test_set, true, {}, command_line_text("bench", args));
    std::cout << "data " << data_name << ": " << all.users() << " users x " << all.items() << " items, " << all.nnz()
              << " interactions (train " << train_set.nnz() << ", test " << test_set.nnz() << "), prepared in "
              << fmt(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), "%.1f") << " s\n";

    // The evaluation sample: the same users' test items for every model.
    const Ratings test_sample = [&] {
        const std::int64_t want = vm["eval-users"].as<std::int64_t>();
        if (want <= 0 || want >= test_set.users()) return test_set;
        std::vector<std::int64_t> order(static_cast<std::size_t>(test_set.users()));
        std::iota(order.begin(), order.end(), std::int64_t(0));
        std::mt19937_64 rng(seed + 4);
        std::shuffle(order.begin(), order.end(), rng);
        order.resize(std::size_t(want));
        std::sort(order.begin(), order.end());
        std::vector<std::int32_t> us, is;
        std::vector<float> vs;
        for (std::int64_t u : order)
            for (std::int64_t e = test_set.by_user.indptr[u]; e < test_set.by_user.indptr[u + 1]; ++e)
                us.push_back(std::int32_t(u)), is.push_back(test_set.by_user.indices[e]), vs.push_back(test_set.by_user.values[e]);
        return from_triplets(test_set.feedback, test_set.user_ids, test_set.item_ids, us, is, vs, test_set.provenance + " (sample)");
    }();
    const int iterations = vm["iterations"].as<int>();
    if (iterations < 2) throw UsageError("--iterations must be >= 2 (the first is a warm-up in the median)");
    const float lambda = vm["lambda"].as<float>(), alpha = vm["alpha"].as<float>();
    const bool cpu_ok = train_set.nnz() <= vm["cpu-max-interactions"].as<std::int64_t>();
    nlohmann::json results = nlohmann::json::array();
    // The JSON is rewritten after every fit, so that a run cut short by a time limit keeps what it measured.
    batchsolve::io::OutputOptions json_rules = report_rules;
    auto save_json = [&] {
        if (!vm.count("json")) return;
        nlohmann::json doc{{"data", data_name}, {"users", all.users()}, {"items", all.items()}, {"interactions", all.nnz()},
                           {"train_interactions", train_set.nnz()}, {"lambda", lambda}, {"alpha", alpha}, {"iterations", iterations},
                           {"seed", seed}, {"results", results}};
        batchsolve::io::write_text_file(vm["json"].as<std::string>(), doc.dump(2) + "\n", json_rules);
        json_rules.existing = batchsolve::io::Existing::replace;  // rewritten after every fit: our own file from now on
    };
    std::vector<int> ks;
    for (const auto& k : split_list(vm["factors-list"].as<std::string>())) ks.push_back(std::stoi(k));
    std::vector<std::string> layouts = split_list(vm["layouts"].as<std::string>());
    // Device sets ("" = one engine as always); each is parsed like train's --devices.
    std::vector<std::string> device_sets;
    {
        std::stringstream in(vm["device-sets"].as<std::string>());
        std::string set;
        while (std::getline(in, set, ';'))
            if (!set.empty()) device_sets.push_back(set);
        if (device_sets.empty()) device_sets.push_back("");
    }
    for (int k : ks) {
        for (const auto& backend : split_list(vm["backends"].as<std::string>())) {
            if (backend == "cuda" && !cuda_engine_available()) {
                std::cout << "ours cuda: skipped: no GPU\n";
                continue;
            }
            if (backend == "cpu" && !cpu_ok) {
                std::cout << "ours cpu: skipped (more than --cpu-max-interactions)\n";
                continue;
            }
            for (const auto& layout : backend == "cuda" ? layouts : std::vector<std::string>{"column_major"})
            for (const auto& devices : device_sets) {
                Hyper h;
                h.feedback = Feedback::implicit_counts, h.factors = k, h.iterations = iterations, h.lambda = lambda, h.alpha = alpha;
                h.seed = seed + 2;
                TrainOptions o;
                o.backend = backend, o.layout = parse_layout(layout), o.compute_loss = false, o.eval_every = 0;
                o.solver = option_value([&] { return parse_solver(vm["solver"].as<std::string>()); });
                o.cg_steps = vm["cg-steps"].as<int>();
                if (o.solver == Solver::cg && backend == "cuda") {
                    std::cout << "ours cuda: skipped with --solver cg (the CUDA engine solves exactly)\n";
                    continue;
                }
                if (!devices.empty()) {
                    try {
                        o.devices = batchsolve::DeviceGroup::parse_devices(
                            devices, backend == "cuda" ? batchsolve::Backend::cuda : batchsolve::Backend::cpu);
                    } catch (const batchsolve::InvalidArgument& e) {
                        throw UsageError("--device-sets: '" + devices + "': " + e.condition());
                    }
                }
                std::vector<double> wall, build, solve;
                auto last = std::chrono::steady_clock::now();
                const auto start = last;
                o.on_iteration = [&](const IterationLog& l) {
                    const auto now = std::chrono::steady_clock::now();
                    wall.push_back(std::chrono::duration<double>(now - last).count());
                    last = now;
                    build.push_back(l.build_s), solve.push_back(l.solve_s);
                };
                const Model m = train(train_set, h, o);
                const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                std::vector<double> tail(wall.begin() + 1, wall.end()), tb(build.begin() + 1, build.end()), ts(solve.begin() + 1, solve.end());
                // Set-up (preparing values, uploads, compiling the solver's kernels) as implicit's is
                // measured: the fit's time less the median iteration times the iterations.
                const double setup = total - median(tail) * iterations;
                const auto metrics = evaluate_ranking(m, test_sample, 10);
                nlohmann::json r{{"tool", "ours"}, {"backend", backend}, {"layout", layout}, {"device", m.device}, {"factors", k},
                                 {"solver", o.solver == Solver::cg ? "conjugate gradient, " + std::to_string(o.cg_steps) + " steps" : std::string("exact Cholesky (posv)")},
                                 {"devices", devices.empty() ? std::string("default") : devices}, {"device_count", std::max<std::size_t>(o.devices.size(), 1)},
                                 {"iterations", iterations}, {"seconds_per_iteration", median(tail)}, {"build_seconds", median(tb)},
                                 {"solve_seconds", median(ts)}, {"iteration_seconds", wall}, {"setup_seconds", setup},
                                 {"peak_gpu_bytes", m.peak_device_bytes}, {"eval_users", metrics.users},
                                 {"p_at_10", metrics.precision}, {"map_at_10", metrics.map}, {"ndcg_at_10", metrics.ndcg}, {"auc", metrics.auc}};
                // The first device set of this backend, layout and k is the one the others are compared with.
                for (const auto& p : results)
                    if (p["tool"] == "ours" && p["backend"] == backend && p["layout"] == layout && p["factors"] == k &&
                        p["devices"] == (device_sets.front().empty() ? std::string("default") : device_sets.front())) {
                        r["speedup_vs_first_device_set"] = p["seconds_per_iteration"].get<double>() / median(tail);
                        break;
                    }
                if (device_sets.size() > 1 && !r.contains("speedup_vs_first_device_set")) r["speedup_vs_first_device_set"] = 1.0;
                std::cout << "ours " << backend << (backend == "cuda" ? " " + layout : "") << (devices.empty() ? "" : " devices " + devices)
                          << " k " << k << ": " << fmt(median(tail))
                          << " s/iter (build " << fmt(median(tb)) << ", solve " << fmt(median(ts)) << "), setup " << fmt(setup, "%.2f")
                          << " s, P@10 " << fmt(metrics.precision)
                          << (m.peak_device_bytes ? ", peak GPU memory " + fmt(double(m.peak_device_bytes) / double(1 << 30), "%.2f") + " GiB" : std::string())
                          << (r.contains("speedup_vs_first_device_set") ? ", " + fmt(r["speedup_vs_first_device_set"].get<double>(), "%.2fx") + " the first device set" : std::string())
                          << std::endl;
                results.push_back(r);
                save_json();
            }
        }
        if (vm.count("implicit-script")) {
            const fs::path out_json = work / ("implicit_k" + std::to_string(k) + ".json");
            const fs::path factors = work / ("implicit_k" + std::to_string(k) + "_factors.h5");
            std::ostringstream cmd;
            if (vm["implicit-timeout"].as<int>() > 0) cmd << "timeout " << vm["implicit-timeout"].as<int>() << " ";
            cmd << vm["python"].as<std::string>() << " " << vm["implicit-script"].as<std::string>() << " --train " << train_path
                << " --factors " << k << " --iterations " << iterations << " --lambda " << lambda << " --alpha " << alpha << " --seed "
                << seed + 3 << " --json " << out_json << " --factors-out " << factors << (cpu_ok ? "" : " --no-cpu");
            std::cout << "running: " << cmd.str() << std::endl;
            const int status = std::system(cmd.str().c_str());
            if (status != 0) {
                std::cout << "implicit: the script failed (status " << status << "); its rows are left out\n";
            } else {
                std::ifstream in(out_json);
                const nlohmann::json runs = nlohmann::json::parse(in);
                for (auto r : runs) {
                    // P@10 of implicit's factors by our evaluation code, on the same test set.
                    if (r.value("factors_group", std::string()).size()) {
                        batchsolve::io::h5::File f = batchsolve::io::h5::File::open(factors.string());
                        const std::string g = r["factors_group"];
                        Model im;
                        im.hyper.factors = k, im.user_ids = train_set.user_ids, im.item_ids = train_set.item_ids;
                        im.seen = train_set.by_user;
                        im.user_factors = f.read_exact<float>(g + "/users", {std::uint64_t(train_set.users()), std::uint64_t(k)});
                        im.item_factors = f.read_exact<float>(g + "/items", {std::uint64_t(train_set.items()), std::uint64_t(k)});
                        const auto met = evaluate_ranking(im, test_sample, 10);
                        r["p_at_10"] = met.precision, r["map_at_10"] = met.map, r["ndcg_at_10"] = met.ndcg, r["auc"] = met.auc;
                    }
                    std::cout << "implicit " << r.value("backend", "?") << " k " << k << ": " << fmt(r.value("seconds_per_iteration", double(NAN)))
                              << " s/iter, setup " << fmt(r.value("setup_seconds", double(NAN)), "%.2f") << " s, P@10 " << fmt(r.value("p_at_10", double(NAN)))
                              << std::endl;
                    results.push_back(r);
                }
                save_json();
            }
        }
    }
    // The table: every row with its speed-up over implicit's GPU and CPU fits of the same k.
    std::ostringstream md;
    md << "| tool | backend | layout | devices | k | s/iter | build s | solve s | setup s | vs first device set | vs implicit GPU | vs implicit CPU | P@10 | MAP@10 | NDCG@10 | AUC |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (auto& r : results) {
        auto peer = [&](const char* backend) {
            for (const auto& p : results)
                if (p["tool"] == "implicit" && p["backend"] == backend && p["factors"] == r["factors"])
                    return p.value("seconds_per_iteration", double(NAN));
            return double(NAN);
        };
        const double s = r.value("seconds_per_iteration", double(NAN)), g = peer("gpu"), c = peer("cpu");
        r["speedup_vs_implicit_gpu"] = g / s, r["speedup_vs_implicit_cpu"] = c / s;
        auto num = [&](const char* key, const char* f) { return r.contains(key) && r[key].is_number() ? fmt(r[key].get<double>(), f) : std::string("-"); };
        md << "| " << r.value("tool", "?") << " | " << r.value("backend", "?") << " (" << r.value("device", "?") << ") | " << r.value("layout", "-")
           << " | " << r.value("devices", "-") << " | " << r["factors"] << " | " << num("seconds_per_iteration", "%.4f") << " | " << num("build_seconds", "%.4f") << " | "
           << num("solve_seconds", "%.4f") << " | " << num("setup_seconds", "%.2f") << " | " << num("speedup_vs_first_device_set", "%.2fx") << " | "
           << (std::isnan(g / s) ? std::string("-") : fmt(g / s, "%.2fx")) << " | " << (std::isnan(c / s) ? std::string("-") : fmt(c / s, "%.2fx"))
           << " | " << num("p_at_10", "%.4f") << " | " << num("map_at_10", "%.4f") << " | " << num("ndcg_at_10", "%.4f") << " | " << num("auc", "%.4f") << " |\n";
    }
    std::cout << "\n" << md.str();
    save_json();
    if (vm.count("markdown")) batchsolve::io::write_text_file(vm["markdown"].as<std::string>(), md.str(), report_rules);
    return exit_ok;
}


int run_command(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) return std::cerr << main_help, exit_usage;
    const std::string command = args.front();
    args.erase(args.begin());
    try {
        if (command == "--help" || command == "-h" || command == "help") return std::cout << main_help, exit_ok;
        if (distributed() && command != "train")
            throw UsageError("only 'als train' runs as several MPI ranks ('" + command + "' would run once per rank)");
        if (command == "import") return run_import(args);
        if (command == "split") return run_split(args);
        if (command == "train") return run_train(args);
        if (command == "evaluate") return run_evaluate(args);
        if (command == "recommend") return run_recommend(args);
        if (command == "generate") return run_generate(args);
        if (command == "bench") return run_bench(args);
        std::cerr << "als: error: unknown command '" << command << "' (see als --help)\n";
        return exit_usage;
    } catch (const po::error& e) {
        // Usage errors are the same on every rank (same arguments): each exits, rank 0 says why.
        if (speaker()) std::cerr << "als: error: " << e.what() << " (see 'als " << command << " --help')\n";
        return exit_usage;
    } catch (const UsageError& e) {
        if (speaker()) std::cerr << "als: error: " << e.what() << "\n";
        return exit_usage;
    } catch (const std::exception& e) {
        std::string what = dynamic_cast<const std::bad_alloc*>(&e) ? std::string("out of host memory") : std::string(e.what());
        std::replace(what.begin(), what.end(), '\n', ' ');
        if (!distributed()) {
            std::cerr << "als: error: " << what << "\n";
            return exit_error;
        }
        // An error every rank raised together (a rank's failure agreed on): each exits normally.
        // Any other error is this rank's alone: the others would wait for it in their next exchange,
        // so the job ends here, after this rank has said why.
        if (g_ranks->is_agreed_failure(e)) {
            if (speaker()) std::cerr << "als: error: " << what << "\n";
            return exit_error;
        }
        std::cerr << "als: rank " << g_ranks->rank() << " of " << g_ranks->size() << ": error: " << what << " (ending the job)\n";
        g_ranks->abort_job(exit_error);
        return exit_error;  // not reached
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::unique_ptr<RankGroup> ranks;
    try {
        ranks = start_ranks(&argc, &argv);  // MPI only when started by mpirun
    } catch (const std::exception& e) {
        std::cerr << "als: error: " << e.what() << "\n";
        return exit_error;
    }
    g_ranks = ranks.get();
    return run_command(argc, argv);
}
