// The stages of the families beside small Cholesky (families.hpp): candidate lists, timing through
// the library's public entry points, and the tables in the one tuning form.
#include "families.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/ldlt.hpp"
#include "batchsolve/limits.hpp"
#include "batchsolve/tuning_file.hpp"
#include "batchsolve/vbatched_triangular.hpp"

namespace batchsolve::autotune {

namespace {

using Clock = std::chrono::steady_clock;
bool same(const LdltBlocking& a, const LdltBlocking& b) { return a.panel_order == b.panel_order && a.update_leaf == b.update_leaf; }
bool same(const LargeCholeskyConfig& a, const LargeCholeskyConfig& b) {
    return a.nb == b.nb && a.ib == b.ib && a.variant == b.variant && a.recursion_depth == b.recursion_depth &&
           a.strip == b.strip && a.lookahead == b.lookahead;
}
template <class C>
bool listed(const std::vector<C>& list, const C& c) {
    for (const C& x : list)
        if (same(x, c)) return true;
    return false;
}
constexpr int kAllSizes = std::numeric_limits<int>::max();  // the last size class: every larger size

// Median wall time in ms of `repeat` calls of `run` (each after `reset`, outside the timing), one
// warm-up call first; the context is synchronised around each call, so a call's launch latency is
// in its time (these calls take 0.05 ms and more).
template <class Reset, class Run>
double median_ms(Context& ctx, int repeat, Reset reset, Run run) {
    reset();
    run();
    ctx.synchronize();
    std::vector<double> ms;
    for (int r = 0; r < repeat; ++r) {
        reset();
        ctx.synchronize();
        const auto t0 = Clock::now();
        run();
        ctx.synchronize();
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

template <class T>
T random_value(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-1, 1);
    if constexpr (is_complex_v<T>) return T(u(rng), u(rng));
    else return T(u(rng));
}

// A symmetric, diagonally dominant n x n matrix (column-major): SPD with a positive diagonal, and with
// diagonal signs alternating (indefinite) an LDL^T without pivoting stays stable on it. O(n^2) to make.
template <class T>
std::vector<T> dominant_matrix(int n, bool indefinite, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<T> a(std::size_t(n) * n);
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            T v = random_value<T>(rng);
            if (i == j) v = T(real_t<T>((indefinite && j % 2) ? -2.0 * n : 2.0 * n));
            a[std::size_t(j) * n + i] = v;
            a[std::size_t(i) * n + j] = v;
        }
    return a;
}

struct Entry {
    std::string routine, precision;
    int n = 0;
    std::string config, runner_up, provenance;
    double ms = 0, runner_up_ms = 0;
    int candidates = 0;
};

Entry entry_for(const char* routine, Precision p, int n) {
    Entry e;
    e.routine = routine;
    e.precision = std::string(1, precision_letter(p));
    e.n = n;
    return e;
}

template <class Config, class ToJson>
void rank(std::vector<std::pair<double, Config>>& timed, Entry& e, ToJson to_json) {
    std::sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    e.candidates = int(timed.size());
    e.ms = timed[0].first;
    e.config = to_json(timed[0].second);
    if (timed.size() > 1) e.runner_up = to_json(timed[1].second), e.runner_up_ms = timed[1].first;
}

template <class V>
std::vector<V> cut(std::vector<V> v, int max_candidates) {
    if (max_candidates > 0 && int(v.size()) > max_candidates) v.resize(std::size_t(max_candidates));
    return v;
}

// ---- GEMM -------------------------------------------------------------------------------------------------

template <class T>
double time_gemm(Context& ctx, int x, int problems, const GemmConfig& config, int repeat, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> size(1, x);
    std::vector<int> dims(static_cast<std::size_t>(problems), 0);
    for (int& d : dims) d = size(rng);
    std::size_t total = 0;
    for (int d : dims) total += std::size_t(d) * d;
    std::vector<T> host(total);
    for (T& v : host) v = random_value<T>(rng);
    Buffer<T> a(ctx, host), b(ctx, host), c(ctx, host);
    std::vector<T*> pa(dims.size()), pb(dims.size()), pc(dims.size());
    std::size_t at = 0;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        pa[i] = a.data() + at, pb[i] = b.data() + at, pc[i] = c.data() + at;
        at += std::size_t(dims[i]) * dims[i];
    }
    Buffer<int> d(ctx, dims);
    Buffer<T*> da(ctx, pa), db(ctx, pb), dc(ctx, pc);
    return median_ms(ctx, repeat, [] {}, [&] {
        gemm_vbatched_max_nocheck<T>(Op::no_trans, Op::no_trans, d.data(), d.data(), d.data(), T(1),
                                     reinterpret_cast<const T* const*>(da.data()), d.data(),
                                     reinterpret_cast<const T* const*>(db.data()), d.data(), T(0), dc.data(), d.data(), x,
                                     x, x, problems, config, ctx);
    });
}

// ---- large Cholesky ---------------------------------------------------------------------------------------

template <class T>
double time_large(Context& ctx, int n, const LargeCholeskyConfig& config, int repeat, std::uint64_t seed) {
    const std::vector<T> host = dominant_matrix<T>(n, false, seed);
    Buffer<T> a(ctx, host.size());
    Buffer<int> info(ctx, 1);
    return median_ms(ctx, repeat, [&] { a.upload(host); },
                     [&] { potrf<T>(Uplo::lower, n, a.data(), n, info.data(), config, ctx, nullptr); });
}

// ---- TRSM crossover ---------------------------------------------------------------------------------------

template <class T>
double time_trsm(Context& ctx, int order, int problems, TrsmAlgorithm algorithm, int repeat, std::uint64_t seed) {
    const std::vector<T> tri = dominant_matrix<T>(order, false, seed);
    const int nrhs = order;
    std::vector<T> rhs(std::size_t(order) * nrhs, T(1));
    std::vector<T> host_a, host_b;
    for (int i = 0; i < problems; ++i) host_a.insert(host_a.end(), tri.begin(), tri.end());
    for (int i = 0; i < problems; ++i) host_b.insert(host_b.end(), rhs.begin(), rhs.end());
    Buffer<T> a(ctx, host_a), b(ctx, host_b.size());
    std::vector<T*> pa(static_cast<std::size_t>(problems), nullptr), pb(static_cast<std::size_t>(problems), nullptr);
    for (int i = 0; i < problems; ++i)
        pa[std::size_t(i)] = a.data() + std::size_t(i) * tri.size(), pb[std::size_t(i)] = b.data() + std::size_t(i) * rhs.size();
    Buffer<T*> da(ctx, pa), db(ctx, pb);
    Buffer<int> m(ctx, std::vector<int>(std::size_t(problems), order));
    TriangularConfig config;
    config.trsm_algorithm = algorithm;
    ctx.workspace(trsm_vbatched_workspace_size<T>(Side::left, order, nrhs, problems, ctx, config));
    return median_ms(ctx, repeat, [&] { b.upload(host_b); }, [&] {
        trsm_vbatched_max_nocheck<T>(Side::left, Uplo::lower, Op::no_trans, Diag::non_unit, m.data(), m.data(), T(1),
                                     reinterpret_cast<const T* const*>(da.data()), m.data(), db.data(), m.data(), order,
                                     order, problems, ctx, config);
    });
}

// ---- LDL^T: each candidate in a child process whose BATCHSOLVE_TUNING_FILE holds it -------------------------

std::string self_path() {
    char buffer[4096];
    const ssize_t len = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
    if (len <= 0) throw Error("autotune: cannot find its own executable (/proc/self/exe)");
    buffer[len] = '\0';
    return buffer;
}

double time_ldlt_in_child(Precision p, int n, const LdltBlocking& b, int repeat, int arch, const std::string& dir) {
    const std::string table = dir + "/ldlt-candidate.json";
    {
        nlohmann::ordered_json t = {{"arch_number", arch}, {"device", "candidate"}, {"date", utc_now()}, {"commit", "candidate"}};
        t["entries"] = nlohmann::ordered_json::array({{{"routine", "sytrf_nopiv"}, {"precision", std::string(1, precision_letter(p))},
                                               {"layout", "column_major"}, {"n", kAllSizes},
                                               {"best", {{"config", {{"panel_order", b.panel_order}, {"update_leaf", b.update_leaf}}}}}}});
        std::ofstream(table) << t.dump() << "\n";
    }
    const std::string command = "BATCHSOLVE_TUNING_FILE='" + table + "' '" + self_path() + "' --ldlt-probe --precision " +
                                std::string(1, precision_letter(p)) + " --n " + std::to_string(n) + " --repeat " +
                                std::to_string(repeat);
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) throw Error("autotune: cannot start " + command);
    double ms = -1;
    char line[256];
    while (std::fgets(line, sizeof line, pipe))
        if (std::sscanf(line, "ms %lf", &ms) == 1) break;
    pclose(pipe);
    if (!(ms > 0)) throw Error("autotune: the LDL^T probe gave no time: " + command);
    return ms;
}

// ---- writing a family's table -----------------------------------------------------------------------------

void write_table(const std::string& path, const std::string& family, const std::vector<Entry>& entries, int arch,
                 const std::string& device, const std::string& cuda, const Options& opt) {
    nlohmann::ordered_json t;
    t["arch"] = "sm_" + std::to_string(arch);
    t["arch_number"] = arch;
    t["device"] = device;
    t["cuda_version"] = cuda;
    t["date"] = utc_now();
    t["commit"] = opt.commit;
    t["note"] = "autotune --family " + family + ": n is the upper end of each entry's size class";
    t["entries"] = nlohmann::ordered_json::array();
    for (const Entry& e : entries) {
        nlohmann::ordered_json j;
        j["routine"] = e.routine;
        j["precision"] = e.precision;
        j["layout"] = "column_major";
        j["n"] = e.n;
        j["best"] = {{"config", nlohmann::ordered_json::parse(e.config)}, {"ms", e.ms}};
        j["runner_up"] = e.runner_up.empty() ? nlohmann::ordered_json(nullptr)
                                             : nlohmann::ordered_json{{"config", nlohmann::ordered_json::parse(e.runner_up)},
                                                                      {"ms", e.runner_up_ms}};
        j["candidates"] = e.candidates;
        j["provenance"] = e.provenance;
        t["entries"].push_back(j);
    }
    std::ofstream(path) << t.dump(1) << "\n";
    const TuningFileContents back = read_tuning_file(path);  // the library's reader: a valid table or an Error
    std::printf("autotune: %zu %s entries in %s\n", back.entries.size(), family.c_str(), path.c_str());
}

template <class F>
void for_precisions(const Options& opt, bool real_only, F f) {
    for (Precision p : opt.precisions) {
        if (real_only && (p == Precision::c || p == Precision::z)) continue;
        switch (p) {
            case Precision::s: f(p, float{}); break;
            case Precision::d: f(p, double{}); break;
            case Precision::c: f(p, std::complex<float>{}); break;
            case Precision::z: f(p, std::complex<double>{}); break;
        }
    }
}

bool wants(const FamilyOptions& f, const char* family) {
    return std::find(f.families.begin(), f.families.end(), family) != f.families.end();
}

}  // namespace

std::vector<GemmConfig> gemm_candidates(Precision p, bool exhaustive) {
    std::vector<GemmConfig> out = {default_gemm_config(p, 128, 128, 128, false, kShippedTuningArch)};
    auto add = [&](const GemmConfig& c) {
        if (gemm_config_problem(p, c).empty() && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    };
    const bool dmma = p == Precision::d || p == Precision::z;  // FP64 tensor cores (TF32 for s, c: never a default)
    // the cp.async ring's tiles first (GemmConfig::stages), so that a cut search still measures them
    if (dmma)
        for (const GemmConfig& c : {GemmConfig{64, 64, 16, 2, 2, true, 0, 3}, GemmConfig{64, 64, 16, 2, 2, true, 4, 3},
                                    GemmConfig{128, 64, 8, 4, 2, true, 2, 4}, GemmConfig{64, 64, 8, 2, 2, true, 0, 4},
                                    GemmConfig{32, 32, 8, 2, 2, true, 0, 3}})
            add(c);
    for (const GemmConfig& c : {GemmConfig{128, 128, 8, 16, 16, false, 0, 3}, GemmConfig{128, 64, 8, 16, 16, false, 0, 3},
                                GemmConfig{64, 64, 8, 8, 8, false, 6, 4}, GemmConfig{64, 64, 8, 16, 16, false, 0, 3},
                                GemmConfig{32, 32, 8, 8, 8, false, 0, 3}})
        add(c);
    for (int bm : {16, 32, 64, 128})
        for (int bn : {16, 32, 64, 128})
            for (int bk : exhaustive ? std::vector<int>{8, 16, 32} : std::vector<int>{8, 16}) {
                for (int dx : {8, 16, 32})
                    for (int dy : {8, 16, 32}) add(GemmConfig{bm, bn, bk, dx, dy, false, 0});
                if (dmma)
                    for (int wx : {1, 2, 4})
                        for (int wy : {1, 2, 4}) add(GemmConfig{bm, bn, bk, wx, wy, true, 0});
            }
    return out;
}

std::vector<LargeCholeskyConfig> large_candidates(int n) {
    std::vector<LargeCholeskyConfig> out = {cholesky_large_default_config<double>(n)};
    for (int nb : {128, 256, 512})
        for (int ib : limits::large_inner_blockings)
            for (CholeskyVariant v : {CholeskyVariant::right_looking, CholeskyVariant::left_looking})
                for (int depth = 0; depth <= 2; ++depth)
                    for (bool lookahead : {true, false}) {
                        if (nb > std::max(n, limits::large_min_panel) || nb % ib) continue;
                        if (v == CholeskyVariant::left_looking && !lookahead) continue;  // lookahead: right-looking only
                        LargeCholeskyConfig c;
                        c.nb = nb, c.ib = ib, c.variant = v, c.recursion_depth = depth, c.lookahead = lookahead;
                        c.strip = Potf2Strip::warp;
                        if (!listed(out, c)) out.push_back(c);
                    }
    return out;
}

std::vector<LdltBlocking> ldlt_candidates(int n) {
    // Panels of order >= n are all one panel (the recursion alone): only the smallest of them is kept.
    std::vector<LdltBlocking> out = {tuned_ldlt_blocking(Precision::d, n, kShippedTuningArch)};
    bool whole = false;
    for (int panel : {256, 512, 1024}) {
        if (panel >= n) {
            if (whole) continue;
            whole = true;
        }
        for (int leaf : {256, 512, 1024})
            if (!listed(out, LdltBlocking{panel, leaf})) out.push_back(LdltBlocking{panel, leaf});
    }
    return out;
}

namespace {

std::string large_json(const LargeCholeskyConfig& c) {
    nlohmann::ordered_json j = {{"nb", c.nb}, {"ib", c.ib}, {"variant", c.variant == CholeskyVariant::left_looking ? "left" : "right"},
                                {"recursion_depth", c.recursion_depth}, {"strip", c.strip == Potf2Strip::columns ? "columns" : "warp"},
                                {"lookahead", c.lookahead}};
    return j.dump();
}
std::string ldlt_json(const LdltBlocking& b) {
    return nlohmann::ordered_json{{"panel_order", b.panel_order}, {"update_leaf", b.update_leaf}}.dump();
}

}  // namespace

int families_dry_run(const Options& opt, const FamilyOptions& f) {
    for (const char* p_text : {"s", "d", "c", "z"}) {
        const Precision p = parse_precision(p_text);
        if (std::find(opt.precisions.begin(), opt.precisions.end(), p) == opt.precisions.end()) continue;
        if (wants(f, "gemm"))
            for (int x : f.gemm_sizes)
                std::printf("gemm %s x=%d +%zu\n", p_text, x, cut(gemm_candidates(p, opt.exhaustive), f.max_candidates).size());
        if (wants(f, "large") && !(p == Precision::c || p == Precision::z))
            for (int n : f.large_n) std::printf("large %s n=%d +%zu\n", p_text, n, cut(large_candidates(n), f.max_candidates).size());
        if (wants(f, "ldlt"))
            for (int n : f.ldlt_n) std::printf("ldlt %s n=%d +%zu\n", p_text, n, cut(ldlt_candidates(n), f.max_candidates).size());
        if (wants(f, "trsm"))
            std::printf("trsm %s orders=%zu +%zu\n", p_text, f.trsm_orders.size(), 2 * f.trsm_orders.size());
    }
    return 0;
}

int ldlt_probe(Precision p, int n, int repeat) {
    Context ctx(Backend::cuda);
    double ms = 0;
    auto run = [&](auto zero) {
        using T = decltype(zero);
        const std::vector<T> host = dominant_matrix<T>(n, true, 12345);
        Buffer<T> a(ctx, host.size());
        Buffer<int> info(ctx, 1);
        ctx.workspace(sytrf_nopiv_workspace_size<T>(n, ctx));
        ms = median_ms(ctx, repeat, [&] { a.upload(host); },
                       [&] { sytrf_nopiv<T>(Symmetry::symmetric, Uplo::lower, n, a.data(), n, info.data(), ctx); });
    };
    switch (p) {
        case Precision::s: run(float{}); break;
        case Precision::d: run(double{}); break;
        case Precision::c: run(std::complex<float>{}); break;
        case Precision::z: run(std::complex<double>{}); break;
    }
    std::printf("ms %.6f\n", ms);
    return 0;
}

int tune_families(const Options& opt, const FamilyOptions& f, const std::string& out_dir, int arch,
                  const std::string& device, const std::string& cuda) {
    Context ctx(Backend::cuda, opt.device);
    std::filesystem::create_directories(out_dir);
    const std::string where = device + ", commit " + opt.commit + ", " + utc_now();
    if (wants(f, "gemm")) {
        std::vector<Entry> entries;
        for_precisions(opt, false, [&](Precision p, auto zero) {
            using T = decltype(zero);
            for (std::size_t i = 0; i < f.gemm_sizes.size(); ++i) {
                const int x = f.gemm_sizes[i];
                std::vector<std::pair<double, GemmConfig>> timed;
                for (const GemmConfig& c : cut(gemm_candidates(p, opt.exhaustive), f.max_candidates))
                    timed.push_back({time_gemm<T>(ctx, x, f.gemm_problems, c, opt.repeat, opt.seed), c});
                Entry e = entry_for("gemm_vbatched", p, i + 1 == f.gemm_sizes.size() ? kAllSizes : x);
                rank(timed, e, [](const GemmConfig& c) { return to_string(c); });
                e.provenance = "autotune --family gemm, " + where + ": square GEMM, " + std::to_string(f.gemm_problems) +
                               " problems, sizes uniform in [1, " + std::to_string(x) + "], best of " + std::to_string(e.candidates);
                std::printf("gemm %c x=%d: %.4f ms %s\n", precision_letter(p), x, e.ms, e.config.c_str());
                entries.push_back(e);
            }
        });
        write_table(out_dir + "/sm" + std::to_string(arch) + "-gemm.json", "gemm", entries, arch, device, cuda, opt);
    }
    if (wants(f, "large")) {
        std::vector<Entry> entries;
        for_precisions(opt, true, [&](Precision p, auto zero) {
            using T = decltype(zero);
            if constexpr (!is_complex_v<T>)
                for (std::size_t i = 0; i < f.large_n.size(); ++i) {
                    const int n = f.large_n[i];
                    std::vector<std::pair<double, LargeCholeskyConfig>> timed;
                    for (const LargeCholeskyConfig& c : cut(large_candidates(n), f.max_candidates))
                        timed.push_back({time_large<T>(ctx, n, c, opt.repeat, opt.seed), c});
                    Entry e = entry_for("potrf_large", p, i + 1 == f.large_n.size() ? kAllSizes : n);
                    rank(timed, e, large_json);
                    e.provenance = "autotune --family large, " + where + ": potrf at n = " + std::to_string(n) +
                                   ", best of " + std::to_string(e.candidates);
                    std::printf("large %c n=%d: %.3f ms %s\n", precision_letter(p), n, e.ms, e.config.c_str());
                    entries.push_back(e);
                }
        });
        write_table(out_dir + "/sm" + std::to_string(arch) + "-large.json", "large", entries, arch, device, cuda, opt);
    }
    if (wants(f, "ldlt")) {
        std::vector<Entry> entries;
        for (Precision p : opt.precisions)
            for (std::size_t i = 0; i < f.ldlt_n.size(); ++i) {
                const int n = f.ldlt_n[i];
                std::vector<std::pair<double, LdltBlocking>> timed;
                for (const LdltBlocking& b : cut(ldlt_candidates(n), f.max_candidates))
                    timed.push_back({time_ldlt_in_child(p, n, b, opt.repeat, arch, out_dir), b});
                Entry e = entry_for("sytrf_nopiv", p, i + 1 == f.ldlt_n.size() ? kAllSizes : n);
                rank(timed, e, ldlt_json);
                e.provenance = "autotune --family ldlt, " + where + ": sytrf_nopiv at n = " + std::to_string(n) +
                               " (each candidate a process of its own through BATCHSOLVE_TUNING_FILE), best of " +
                               std::to_string(e.candidates);
                std::printf("ldlt %c n=%d: %.3f ms %s\n", precision_letter(p), n, e.ms, e.config.c_str());
                entries.push_back(e);
            }
        std::remove((out_dir + "/ldlt-candidate.json").c_str());
        write_table(out_dir + "/sm" + std::to_string(arch) + "-ldlt.json", "ldlt", entries, arch, device, cuda, opt);
    }
    if (wants(f, "trsm")) {
        std::vector<Entry> entries;
        for_precisions(opt, false, [&](Precision p, auto zero) {
            using T = decltype(zero);
            // The crossover: the smallest order from which inversion beat recursion at every larger
            // order timed (never: 2^30, the recursive algorithm everywhere).
            std::vector<bool> inversion_wins;
            std::string timings;
            for (int order : f.trsm_orders) {
                const double inv = time_trsm<T>(ctx, order, f.trsm_problems, TrsmAlgorithm::inversion, opt.repeat, opt.seed);
                const double rec = time_trsm<T>(ctx, order, f.trsm_problems, TrsmAlgorithm::recursive, opt.repeat, opt.seed);
                inversion_wins.push_back(inv < rec);
                char text[96];
                std::snprintf(text, sizeof text, "%s%d: inversion %.3f / recursive %.3f ms", timings.empty() ? "" : "; ", order, inv, rec);
                timings += text;
            }
            int crossover = 1 << 30;
            for (int i = int(f.trsm_orders.size()) - 1; i >= 0 && inversion_wins[std::size_t(i)]; --i) crossover = f.trsm_orders[std::size_t(i)];
            Entry e = entry_for("trsm_vbatched", p, kAllSizes);
            e.config = nlohmann::ordered_json{{"inversion_from_order", crossover}}.dump();
            e.candidates = 2 * int(f.trsm_orders.size());
            e.provenance = "autotune --family trsm, " + where + ": left lower TRSM, " + std::to_string(f.trsm_problems) +
                           " problems of order x with x right-hand sides; " + timings;
            std::printf("trsm %c: inversion from %d (%s)\n", precision_letter(p), crossover, timings.c_str());
            entries.push_back(e);
        });
        write_table(out_dir + "/sm" + std::to_string(arch) + "-trsm.json", "trsm", entries, arch, device, cuda, opt);
    }
    return 0;
}

}  // namespace batchsolve::autotune
