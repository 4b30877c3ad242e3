// multi_bench: batched posv on one device against N devices in the same run (multi_device.hpp, issue
// 30): device-resident batches already split (the scaling of the solver itself) and host-resident
// batches staged through pinned memory (what a caller with the data in host memory gets). Seconds
// (median of repeats, wall clock to the last device's completion), GFLOP/s, the speed-up of N devices
// over one, the normwise backward error of a sample, failed matrices; JSON and a markdown table.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <omp.h>

#include <random>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/multi_device.hpp"

namespace bs = batchsolve;
namespace po = boost::program_options;
using json = nlohmann::ordered_json;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? NAN : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::vector<std::string> split_list(const std::string& s, char sep = ',') {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, sep))
        if (!item.empty()) out.push_back(item);
    return out;
}

struct Options {
    std::vector<int> sizes;
    std::vector<std::string> precisions;
    int batch = 1000000, host_batch = 200000, distinct = 4096, repeat = 5, nrhs = 1;
    std::vector<std::string> modes;
    std::vector<int> devices;
    bs::Backend backend = bs::Backend::automatic;
    double cond = 1e3;
    std::uint64_t seed = 1;
    std::string json_path, markdown_path;
    std::vector<int> dense_sizes;  // gesv rows (one large system), when given
    std::string dense_precision = "z";
    int tile = 256;
};

struct Row {
    std::string precision, mode, device;
    int n = 0, batch = 0, devices = 0;
    double seconds = NAN, gflops = NAN, speedup = NAN, backward_error = NAN;
    long failed = 0;
};

// Called after every row: the JSON and the table are rewritten, so a run cut short by a time limit
// keeps what it measured.
std::function<void(const std::vector<Row>&)> after_row = [](const std::vector<Row>&) {};

// posv flops: potrf n^3/3 + potrs 2 n^2 per right-hand side (complex: x4), the tester's counts.
template <class T>
double posv_flops(int n, int nrhs, long count) {
    const double f = double(n) * n * n / 3.0 + 2.0 * double(n) * n * nrhs;
    return f * double(count) * (bs::is_complex_v<T> ? 4.0 : 1.0);
}

// A batch of `count` matrices made of `distinct` SPD matrices repeated (generating a million
// independent ones would take longer than the benchmark), and right-hand sides likewise.
template <class T>
struct HostBatch {
    std::vector<T> a, b, a_distinct, b_distinct;
    int n = 0, nrhs = 0, count = 0, distinct = 0;
};

template <class T>
HostBatch<T> make_batch(int n, int nrhs, int count, int distinct, double cond, std::uint64_t seed) {
    HostBatch<T> h;
    h.n = n, h.nrhs = nrhs, h.count = count, h.distinct = std::min(distinct, count);
    h.a_distinct = bs::generate_spd_batch<T>(n, h.distinct, cond, seed);
    h.b_distinct = bs::generate_rhs_batch(h.a_distinct, n, h.distinct, nrhs, seed + 1).b;
    const std::size_t na = std::size_t(n) * n, nb = std::size_t(n) * nrhs;
    h.a.resize(na * std::size_t(count));
    h.b.resize(nb * std::size_t(count));
#pragma omp parallel for schedule(static)
    for (long k = 0; k < count; ++k) {
        const std::size_t src = std::size_t(k % h.distinct);
        std::memcpy(&h.a[na * std::size_t(k)], &h.a_distinct[na * src], na * sizeof(T));
        std::memcpy(&h.b[nb * std::size_t(k)], &h.b_distinct[nb * src], nb * sizeof(T));
    }
    return h;
}

// Backward error of a sample of solutions (every `step`-th matrix), against the generated originals.
template <class T>
double sample_error(const HostBatch<T>& h, const std::vector<std::pair<long, std::vector<T>>>& solutions) {
    std::vector<T> a, x, b;
    const std::size_t na = std::size_t(h.n) * h.n, nb = std::size_t(h.n) * h.nrhs;
    for (const auto& [k, sol] : solutions) {
        const std::size_t src = std::size_t(k % h.distinct);
        a.insert(a.end(), h.a_distinct.begin() + std::ptrdiff_t(na * src), h.a_distinct.begin() + std::ptrdiff_t(na * (src + 1)));
        b.insert(b.end(), h.b_distinct.begin() + std::ptrdiff_t(nb * src), h.b_distinct.begin() + std::ptrdiff_t(nb * (src + 1)));
        x.insert(x.end(), sol.begin(), sol.end());
    }
    return bs::max_or_nan(bs::solve_backward_error(bs::Uplo::lower, a, x, b, h.n, h.nrhs, int(solutions.size())));
}

// Device-resident: each member's share uploaded once next to a pristine copy; every repeat restores
// the working copy on the device (untimed) and times posv over the group.
template <class T>
Row run_device_resident(const HostBatch<T>& h, bs::DeviceGroup& group, int repeat) {
    const int m = group.size(), n = h.n, nrhs = h.nrhs;
    const auto shares = group.split(h.count);
    const std::size_t na = std::size_t(n) * n, nb = std::size_t(n) * nrhs;
    std::vector<bs::Buffer<T>> pa(static_cast<std::size_t>(m)), pb(static_cast<std::size_t>(m)), wa(static_cast<std::size_t>(m)), wb(static_cast<std::size_t>(m));
    std::vector<bs::Buffer<int>> info(static_cast<std::size_t>(m));
    std::vector<bs::BatchView<T>> va(static_cast<std::size_t>(m)), vb(static_cast<std::size_t>(m));
    std::vector<int*> vi(static_cast<std::size_t>(m));
    std::vector<int> counts(static_cast<std::size_t>(m));
    group.run([&](int p) {
        const auto s = shares[std::size_t(p)];
        bs::Context& ctx = group.context(p);
        const std::size_t c = std::size_t(std::max(s.count, 1));
        pa[std::size_t(p)] = bs::Buffer<T>(ctx, na * c), pb[std::size_t(p)] = bs::Buffer<T>(ctx, nb * c);
        wa[std::size_t(p)] = bs::Buffer<T>(ctx, na * c), wb[std::size_t(p)] = bs::Buffer<T>(ctx, nb * c);
        info[std::size_t(p)] = bs::Buffer<int>(ctx, c);
        pa[std::size_t(p)].upload(h.a.data() + na * std::size_t(s.first), na * std::size_t(s.count));
        pb[std::size_t(p)].upload(h.b.data() + nb * std::size_t(s.first), nb * std::size_t(s.count));
        va[std::size_t(p)] = bs::BatchView<T>::column_major(wa[std::size_t(p)].data(), n, n, s.count);
        vb[std::size_t(p)] = bs::BatchView<T>::column_major(wb[std::size_t(p)].data(), n, nrhs, s.count);
        vi[std::size_t(p)] = info[std::size_t(p)].data();
        counts[std::size_t(p)] = s.count;
    });
    auto restore = [&] {
        group.run([&](int p) {
            const auto s = shares[std::size_t(p)];
            if (s.count == 0) return;
            bs::Context& ctx = group.context(p);
            bs::convert_layout(bs::BatchView<T>::column_major(pa[std::size_t(p)].data(), n, n, s.count), va[std::size_t(p)], ctx);
            bs::convert_layout(bs::BatchView<T>::column_major(pb[std::size_t(p)].data(), n, nrhs, s.count), vb[std::size_t(p)], ctx);
            info[std::size_t(p)].fill_bytes(0xFF);
        });
    };
    std::vector<double> times;
    for (int r = 0; r <= repeat; ++r) {  // r = 0: the warm-up (kernel compilation, first touch)
        restore();
        const auto t0 = Clock::now();
        bs::posv_batched(bs::Uplo::lower, va, vb, vi, group);  // returns when every member is done
        if (r > 0) times.push_back(since(t0));
    }
    Row row;
    row.seconds = median(times);
    const auto all_info = bs::gather_info(group, vi, counts);
    row.failed = long(std::count_if(all_info.begin(), all_info.end(), [](int i) { return i != 0; }));
    // A sample of about 1000 solutions, from every member's share.
    std::vector<std::pair<long, std::vector<T>>> sample;
    const long step = std::max(1L, long(h.count) / 1000);
    for (int p = 0; p < m; ++p) {
        const auto s = shares[std::size_t(p)];
        if (s.count == 0) continue;
        const auto part = wb[std::size_t(p)].to_host();
        for (long k = s.first; k < long(s.first) + s.count; k += step)
            sample.emplace_back(k, std::vector<T>(part.begin() + std::ptrdiff_t(nb * std::size_t(k - s.first)),
                                                  part.begin() + std::ptrdiff_t(nb * std::size_t(k - s.first + 1))));
    }
    row.backward_error = sample_error(h, sample);
    return row;
}

// Host-resident: the whole batch in host memory, restored before every repeat (untimed); posv over the
// group stages each member's share through pinned memory and its device.
template <class T>
Row run_host_resident(const HostBatch<T>& h, bs::DeviceGroup& group, int repeat) {
    std::vector<T> a(h.a.size()), b(h.b.size());
    std::vector<int> info(std::size_t(h.count));
    std::vector<double> times;
    for (int r = 0; r <= repeat; ++r) {
        std::memcpy(a.data(), h.a.data(), a.size() * sizeof(T));
        std::memcpy(b.data(), h.b.data(), b.size() * sizeof(T));
        std::fill(info.begin(), info.end(), -1);
        const auto t0 = Clock::now();
        bs::posv_batched(bs::Uplo::lower, bs::BatchView<T>::column_major(a.data(), h.n, h.n, h.count),
                         bs::BatchView<T>::column_major(b.data(), h.n, h.nrhs, h.count), info.data(), group);
        if (r > 0) times.push_back(since(t0));
    }
    Row row;
    row.seconds = median(times);
    row.failed = long(std::count_if(info.begin(), info.end(), [](int i) { return i != 0; }));
    std::vector<std::pair<long, std::vector<T>>> sample;
    const std::size_t nb = std::size_t(h.n) * h.nrhs;
    for (long k = 0; k < h.count; k += std::max(1L, long(h.count) / 1000))
        sample.emplace_back(k, std::vector<T>(b.begin() + std::ptrdiff_t(nb * std::size_t(k)), b.begin() + std::ptrdiff_t(nb * std::size_t(k + 1))));
    row.backward_error = sample_error(h, sample);
    return row;
}

// One large dense system A X = b (A Gaussian random, as hard for LU as BEM's complex symmetric
// matrices are easy) on 1..N devices with gesv (cuSOLVERMg): seconds of the factorisation and of
// the whole call (uploads and downloads included), the backward error, the engine.
template <class T>
void run_dense(const Options& o, std::vector<Row>& rows) {
    for (int n : o.dense_sizes) {
        const auto t0 = Clock::now();
        std::vector<T> a0(std::size_t(n) * n), b0(static_cast<std::size_t>(n));
#pragma omp parallel
        {
            std::mt19937_64 rng(o.seed + 977 * std::uint64_t(omp_get_thread_num()));
            std::normal_distribution<double> g;
#pragma omp for schedule(static)
            for (long j = 0; j < n; ++j)
                for (long i = 0; i < n; ++i) {
                    if constexpr (bs::is_complex_v<T>) a0[std::size_t(j) * n + std::size_t(i)] = T(g(rng), g(rng));
                    else a0[std::size_t(j) * n + std::size_t(i)] = T(g(rng));
                }
        }
        for (auto& v : b0) v = T(1);
        std::cerr << "multi_bench: dense n " << n << " ready in " << since(t0) << " s" << std::endl;
        double one = NAN;
        for (int g = 1; g <= int(o.devices.size()); ++g) {
            bs::DeviceGroup group(o.backend, std::vector<int>(o.devices.begin(), o.devices.begin() + g));
            std::vector<T> a = a0, b = b0;
            std::vector<int> ipiv(static_cast<std::size_t>(n));
            Row row;
            row.precision = o.dense_precision, row.mode = "dense", row.device = group.describe(), row.n = n, row.batch = 1, row.devices = g;
            const auto t1 = Clock::now();
            try {
                const auto rep = bs::gesv(n, 1, a.data(), n, ipiv.data(), b.data(), n, group, o.tile);
                const double total = since(t1);
                row.seconds = rep.factor_s + rep.solve_s;
                row.failed = rep.info != 0;
                row.device += "; " + rep.engine + "; whole call " + std::to_string(total) + " s";
            } catch (const std::exception& e) {
                std::cout << "dense n " << n << " on " << g << " device(s): " << e.what() << std::endl;
                continue;
            }
            // ||b - A x||_inf / (n ||A||_inf ||x||_inf u), in double, rows in parallel.
            double r_norm = 0, a_norm = 0, x_norm = 0;
            for (const T& v : b) x_norm = std::max(x_norm, double(std::abs(v)));
#pragma omp parallel for reduction(max : r_norm, a_norm) schedule(static)
            for (long i = 0; i < n; ++i) {
                std::complex<double> r = std::complex<double>(std::real(b0[std::size_t(i)]), std::imag(b0[std::size_t(i)]));
                double row_sum = 0;
                for (long j = 0; j < n; ++j) {
                    const T aij = a0[std::size_t(j) * n + std::size_t(i)];
                    row_sum += std::abs(aij);
                    r -= std::complex<double>(std::real(aij), std::imag(aij)) *
                         std::complex<double>(std::real(b[std::size_t(j)]), std::imag(b[std::size_t(j)]));
                }
                r_norm = std::max(r_norm, std::abs(r)), a_norm = std::max(a_norm, row_sum);
            }
            row.backward_error = r_norm / (double(n) * a_norm * x_norm * double(bs::unit_roundoff<T>()));
            // getrf 2n^3/3 + getrs 2n^2 (complex x4).
            row.gflops = (2.0 * double(n) * n * n / 3.0 + 2.0 * double(n) * n) * (bs::is_complex_v<T> ? 4.0 : 1.0) / row.seconds * 1e-9;
            if (g == 1) one = row.seconds;
            row.speedup = one / row.seconds;
            std::printf("%s dense n %6d on %-60s factor+solve %8.3f s %9.1f GFLOP/s  x%5.2f vs 1  berr %.2g  info %ld\n",
                        o.dense_precision.c_str(), n, row.device.c_str(), row.seconds, row.gflops, row.speedup, row.backward_error, row.failed);
            std::fflush(stdout);
            rows.push_back(row);
            after_row(rows);
        }
    }
}

template <class T>
void run_precision(const Options& o, const std::string& precision, std::vector<Row>& rows) {
    // Group sizes: 1, then every count up to all devices (1, 2 for two GPUs; 1, 2, 3, 4 for four).
    std::vector<int> sizes;
    for (int g = 1; g <= int(o.devices.size()); ++g) sizes.push_back(g);
    for (int n : o.sizes)
        for (const std::string& mode : o.modes) {
            const int count = mode == "host" ? o.host_batch : o.batch;
            const auto t0 = Clock::now();
            const HostBatch<T> h = make_batch<T>(n, o.nrhs, count, o.distinct, o.cond, o.seed + std::uint64_t(n));
            std::cerr << "multi_bench: " << precision << " n " << n << " " << mode << "-resident batch of " << count << " ready in "
                      << since(t0) << " s" << std::endl;
            double one = NAN;
            for (int g : sizes) {
                bs::DeviceGroup group(o.backend, std::vector<int>(o.devices.begin(), o.devices.begin() + g));
                Row row = mode == "host" ? run_host_resident(h, group, o.repeat) : run_device_resident(h, group, o.repeat);
                row.precision = precision, row.mode = mode, row.device = group.describe(), row.n = n, row.batch = count, row.devices = g;
                row.gflops = posv_flops<T>(n, o.nrhs, count) / row.seconds * 1e-9;
                if (g == 1) one = row.seconds;
                row.speedup = one / row.seconds;
                char line[512];
                std::snprintf(line, sizeof line, "%s n %3d %-6s batch %8d on %-46s %9.5f s %9.1f GFLOP/s  x%5.2f vs 1  berr %.2g  failed %ld",
                              precision.c_str(), n, mode.c_str(), count, row.device.c_str(), row.seconds, row.gflops, row.speedup,
                              row.backward_error, row.failed);
                std::cout << line << std::endl;
                rows.push_back(row);
                after_row(rows);
            }
        }
}

// The JSON and the markdown table of the rows so far (and the table on stdout when `print`); returns
// the rows with failed matrices or a backward error >= 30.
int write_outputs(const Options& o, const std::vector<Row>& rows, bool print) {
    int bad = 0;
    json j = json::array();
    std::ostringstream md;
    md << "| precision | n | mode | batch | devices | seconds | GFLOP/s | speed-up vs 1 | backward error | failed |\n"
       << "|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Row& r : rows) {
        const bool ok = r.failed == 0 && r.backward_error < 30;
        bad += !ok;
        j.push_back({{"precision", r.precision}, {"n", r.n}, {"mode", r.mode}, {"batch", r.batch}, {"devices", r.devices},
                     {"device", r.device}, {"seconds", r.seconds}, {"gflops", r.gflops}, {"speedup_vs_one", r.speedup},
                     {"backward_error", r.backward_error}, {"failed", r.failed}, {"ok", ok}});
        char line[512];
        std::snprintf(line, sizeof line, "| %s | %d | %s | %d | %s | %.5f | %.1f | %.2fx | %.2g | %ld |\n", r.precision.c_str(), r.n,
                      r.mode.c_str(), r.batch, r.device.c_str(), r.seconds, r.gflops, r.speedup, r.backward_error, r.failed);
        md << line;
    }
    if (print) std::cout << "\n" << md.str();
    char when[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    if (!o.json_path.empty()) {
        std::ofstream f(o.json_path);
        f << json{{"tool", "multi_bench"}, {"date", when}, {"backend", o.backend == bs::Backend::cuda ? "cuda" : "cpu"}, {"rows", j}}.dump(2) << "\n";
        if (!f) std::cerr << "multi_bench: error: " << o.json_path << ": cannot write\n";
    }
    if (!o.markdown_path.empty()) {
        std::ofstream f(o.markdown_path);
        f << md.str();
        if (!f) std::cerr << "multi_bench: error: " << o.markdown_path << ": cannot write\n";
    }
    return bad;
}

const char* kHelp = R"(multi_bench: batched posv on 1 device vs N devices in one run (batchsolve multi_device.hpp).

usage: multi_bench [options]
  --n LIST          matrix orders (default 16,32)
  --precision LIST  s,d,c,z (default s,d)
  --batch N         matrices of the device-resident runs (default 1000000)
  --host-batch N    matrices of the host-resident runs (default 200000)
  --distinct N      distinct SPD matrices the batch repeats (default 4096; condition --cond, default 1e3)
  --modes LIST      device (already split over the devices), host (staged through pinned memory); default device,host
  --devices LIST    device ids, or all (default all); runs every group of the first g of them, g = 1..count
  --backend B       auto | cuda | cpu (cpu: CPU members, for a dry run without a GPU)
  --repeat R        timed repeats after one warm-up; the median is reported (default 5)
  --seed S          generator seed (default 1)
  --dense LIST      also one large dense system per n (gesv: LU over the devices with cuSOLVERMg), e.g. 16384,33000
  --dense-precision P  s, d, c or z (default z, as BEM's systems); --tile T  columns per tile (default 256, cuSOLVERMg's widest)
  --json FILE       results as JSON;  --markdown FILE  the table
Exit code: the number of rows with failed matrices or a backward error above 30.
)";

}  // namespace

int main(int argc, char** argv) {
    po::options_description d("options");
    d.add_options()("help,h", "")("n", po::value<std::string>()->default_value("16,32"), "")
        ("precision", po::value<std::string>()->default_value("s,d"), "")("batch", po::value<int>()->default_value(1000000), "")
        ("host-batch", po::value<int>()->default_value(200000), "")("distinct", po::value<int>()->default_value(4096), "")
        ("cond", po::value<double>()->default_value(1e3), "")("modes", po::value<std::string>()->default_value("device,host"), "")
        ("devices", po::value<std::string>()->default_value("all"), "")("backend", po::value<std::string>()->default_value("auto"), "")
        ("repeat", po::value<int>()->default_value(5), "")("seed", po::value<std::uint64_t>()->default_value(1), "")
        ("json", po::value<std::string>(), "")("markdown", po::value<std::string>(), "")
        ("dense", po::value<std::string>()->default_value(""), "")("dense-precision", po::value<std::string>()->default_value("z"), "")
        ("tile", po::value<int>()->default_value(256), "");
    Options o;
    try {
        po::variables_map vm;
        po::store(po::parse_command_line(argc, argv, d), vm);
        po::notify(vm);
        if (vm.count("help")) return std::cout << kHelp, 0;
        for (const auto& s : split_list(vm["n"].as<std::string>())) o.sizes.push_back(std::stoi(s));
        o.precisions = split_list(vm["precision"].as<std::string>());
        o.batch = vm["batch"].as<int>(), o.host_batch = vm["host-batch"].as<int>(), o.distinct = vm["distinct"].as<int>();
        o.cond = vm["cond"].as<double>(), o.repeat = vm["repeat"].as<int>(), o.seed = vm["seed"].as<std::uint64_t>();
        o.modes = split_list(vm["modes"].as<std::string>());
        if (vm.count("json")) o.json_path = vm["json"].as<std::string>();
        for (const auto& s : split_list(vm["dense"].as<std::string>())) o.dense_sizes.push_back(std::stoi(s));
        o.dense_precision = vm["dense-precision"].as<std::string>(), o.tile = vm["tile"].as<int>();
        if (vm.count("markdown")) o.markdown_path = vm["markdown"].as<std::string>();
        const std::string b = vm["backend"].as<std::string>();
        o.backend = b == "cpu" ? bs::Backend::cpu : b == "cuda" ? bs::Backend::cuda : bs::Backend::automatic;
        if (b != "cpu" && b != "cuda" && b != "auto") throw std::invalid_argument("--backend must be auto, cuda or cpu");
        if (o.backend == bs::Backend::automatic) o.backend = bs::Context::cuda_available() ? bs::Backend::cuda : bs::Backend::cpu;
        o.devices = bs::DeviceGroup::parse_devices(vm["devices"].as<std::string>(), o.backend);
        if (o.batch < 1 || o.host_batch < 1 || o.distinct < 1 || o.repeat < 1) throw std::invalid_argument("--batch, --host-batch, --distinct and --repeat must be >= 1");
        for (const auto& m : o.modes)
            if (m != "device" && m != "host") throw std::invalid_argument("--modes: device or host (got '" + m + "')");
        for (const auto& p : o.precisions)
            if (p != "s" && p != "d" && p != "c" && p != "z") throw std::invalid_argument("--precision: s, d, c or z (got '" + p + "')");
    } catch (const std::exception& e) {
        std::cerr << "multi_bench: error: " << e.what() << " (see --help)\n";
        return 255;
    }
    if (o.backend == bs::Backend::cpu) std::cout << "multi_bench: GPU rows skipped: no GPU (CPU members instead)\n";
    std::vector<Row> rows;
    after_row = [&](const std::vector<Row>& so_far) { write_outputs(o, so_far, false); };
    try {
        if (!o.dense_sizes.empty()) {
            if (o.dense_precision == "s") run_dense<float>(o, rows);
            else if (o.dense_precision == "d") run_dense<double>(o, rows);
            else if (o.dense_precision == "c") run_dense<std::complex<float>>(o, rows);
            else if (o.dense_precision == "z") run_dense<std::complex<double>>(o, rows);
            else throw std::invalid_argument("--dense-precision: s, d, c or z");
        }
        for (const auto& p : o.precisions) {
            if (p == "s") run_precision<float>(o, p, rows);
            if (p == "d") run_precision<double>(o, p, rows);
            if (p == "c") run_precision<std::complex<float>>(o, p, rows);
            if (p == "z") run_precision<std::complex<double>>(o, p, rows);
        }
    } catch (const std::exception& e) {
        std::cerr << "multi_bench: error: " << e.what() << "\n";
        return 255;
    }
    const int bad = write_outputs(o, rows, true);
    std::cout << "multi_bench: " << rows.size() << " rows, " << bad << " with failed matrices or backward error >= 30\n";
    return bad;
}
