// The tester's several-device solvers (multi_device.hpp): multi_posv, batched posv over groups of the
// first g of --devices (g = 1 .. count), device-resident (already split: the scaling of the solver) and
// host-resident (staged through pinned memory: what a caller with host data gets); multi_gesv, one large
// dense system (LU over the devices with cuSOLVERMg). The peer one-device is the same call on the first
// device alone. Times: wall clock to the last member's completion, median of --repeat after --warmup.
// With the CPU backend the members are CPU contexts (a dry run without a GPU).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/multi_device.hpp"
#include "suite.hpp"

namespace batchsolve::validation::suite {

namespace {

namespace bs = batchsolve;
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct MultiRow {
    double seconds = NAN, backward_error = NAN;
    long failed = 0;
};

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
MultiRow run_device_resident(const HostBatch<T>& h, bs::DeviceGroup& group, int warmup, int repeat) {
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
    for (int r = 0; r < warmup + repeat; ++r) {  // the warm-ups: kernel compilation, first touch
        restore();
        const auto t0 = Clock::now();
        bs::posv_batched(bs::Uplo::lower, va, vb, vi, group);  // returns when every member is done
        if (r >= warmup) times.push_back(since(t0));
    }
    MultiRow row;
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
MultiRow run_host_resident(const HostBatch<T>& h, bs::DeviceGroup& group, int warmup, int repeat) {
    std::vector<T> a(h.a.size()), b(h.b.size());
    std::vector<int> info(std::size_t(h.count));
    std::vector<double> times;
    for (int r = 0; r < warmup + repeat; ++r) {
        std::memcpy(a.data(), h.a.data(), a.size() * sizeof(T));
        std::memcpy(b.data(), h.b.data(), b.size() * sizeof(T));
        std::fill(info.begin(), info.end(), -1);
        const auto t0 = Clock::now();
        bs::posv_batched(bs::Uplo::lower, bs::BatchView<T>::column_major(a.data(), h.n, h.n, h.count),
                         bs::BatchView<T>::column_major(b.data(), h.n, h.nrhs, h.count), info.data(), group);
        if (r >= warmup) times.push_back(since(t0));
    }
    MultiRow row;
    row.seconds = median(times);
    row.failed = long(std::count_if(info.begin(), info.end(), [](int i) { return i != 0; }));
    std::vector<std::pair<long, std::vector<T>>> sample;
    const std::size_t nb = std::size_t(h.n) * h.nrhs;
    for (long k = 0; k < h.count; k += std::max(1L, long(h.count) / 1000))
        sample.emplace_back(k, std::vector<T>(b.begin() + std::ptrdiff_t(nb * std::size_t(k)), b.begin() + std::ptrdiff_t(nb * std::size_t(k + 1))));
    row.backward_error = sample_error(h, sample);
    return row;
}

template <class T>
void run_posv(const Options& o, const std::string& precision, Backend backend, const std::vector<int>& devices,
              const Sink& sink) {
    const std::vector<int> ns = !o.ns.empty() ? o.ns : std::vector<int>{16, 32};
    const std::vector<std::string> modes = !o.modes.empty() ? o.modes : std::vector<std::string>{"device", "host"};
    const int nrhs = o.nrhs.empty() ? 1 : o.nrhs.front();
    const double cond = o.cond > 0 ? o.cond : 1e3;
    for (int n : ns)
        for (const std::string& mode : modes) {
            const int count = mode == "host" ? o.host_batch : o.batches.empty() ? 1000000 : o.batches.front();
            const HostBatch<T> h = make_batch<T>(n, nrhs, count, o.distinct, cond, o.seed + std::uint64_t(n));
            double one = NAN;
            for (int g = 1; g <= int(devices.size()); ++g) {
                bs::DeviceGroup group(backend, std::vector<int>(devices.begin(), devices.begin() + g));
                const MultiRow m = mode == "host" ? run_host_resident(h, group, o.warmup, o.repeat)
                                                  : run_device_resident(h, group, o.warmup, o.repeat);
                Row r;
                r.routine = "multi_posv", r.precision = precision, r.n = n, r.batch = count, r.nrhs = nrhs;
                r.shape = "n=" + std::to_string(n) + " " + mode + " devices=" + std::to_string(g);
                r.variant = mode;
                r.flops = posv_flops<T>(n, nrhs, count);
                r.ran = true, r.ms = m.seconds * 1e3, r.gflops = r.flops / m.seconds * 1e-9;
                r.checked = true, r.error = m.backward_error;
                r.error_definition = "the tester's scaled backward error (accuracy.hpp) of about 1000 sampled solutions";
                if (m.failed) r.status = Status::failed, r.note = std::to_string(m.failed) + " matrices with info != 0";
                if (g == 1) one = m.seconds;
                if (g > 1 && wants(o, "one-device")) {
                    Peer q;
                    q.name = "one-device";
                    q.ran = true, q.ms = one * 1e3, q.gflops = r.flops / one * 1e-9;
                    q.note = "the same call on device " + std::to_string(devices.front()) + " alone";
                    r.peers.push_back(q);
                }
                r.detail = {{"mode", mode}, {"devices", g}, {"device", group.describe()}, {"seconds", m.seconds},
                            {"speedup_vs_one", one / m.seconds}, {"backward_error", m.backward_error}, {"failed", m.failed}};
                judge(r, o.tolerance);
                sink(std::move(r));
            }
        }
}

template <class T>
void run_gesv(const Options& o, const std::string& precision, Backend backend, const std::vector<int>& devices,
              const Sink& sink) {
    const std::vector<int> ns = !o.ns.empty() ? o.ns : std::vector<int>{16384};
    for (int n : ns) {
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
        double one = NAN;
        for (int g = 1; g <= int(devices.size()); ++g) {
            bs::DeviceGroup group(backend, std::vector<int>(devices.begin(), devices.begin() + g));
            std::vector<T> a = a0, b = b0;
            std::vector<int> ipiv(static_cast<std::size_t>(n));
            Row r;
            r.routine = "multi_gesv", r.precision = precision, r.n = n, r.nrhs = 1;
            r.shape = "n=" + std::to_string(n) + " devices=" + std::to_string(g);
            r.flops = (2.0 * double(n) * n * n / 3.0 + 2.0 * double(n) * n) * (bs::is_complex_v<T> ? 4.0 : 1.0);
            r.error_definition = "||b - A x||_inf / (n ||A||_inf ||x||_inf u)";
            try {
                const auto t1 = Clock::now();
                const auto rep = bs::gesv(n, 1, a.data(), n, ipiv.data(), b.data(), n, group, o.tile);
                const double total = since(t1);
                const double seconds = rep.factor_s + rep.solve_s;
                r.ran = true, r.ms = seconds * 1e3, r.gflops = r.flops / seconds * 1e-9;
                if (rep.info != 0) r.status = Status::failed, r.note = "info " + std::to_string(rep.info);
                r.detail = {{"engine", rep.engine}, {"whole_call_seconds", total}, {"device", group.describe()}};
            } catch (const std::exception& e) {
                r.status = Status::failed, r.note = e.what();
                sink(std::move(r));
                continue;
            }
            double r_norm = 0, a_norm = 0, x_norm = 0;
            for (const T& v : b) x_norm = std::max(x_norm, double(std::abs(v)));
#pragma omp parallel for reduction(max : r_norm, a_norm) schedule(static)
            for (long i = 0; i < n; ++i) {
                std::complex<double> res = std::complex<double>(std::real(b0[std::size_t(i)]), std::imag(b0[std::size_t(i)]));
                double row_sum = 0;
                for (long j = 0; j < n; ++j) {
                    const T aij = a0[std::size_t(j) * n + std::size_t(i)];
                    row_sum += std::abs(aij);
                    res -= std::complex<double>(std::real(aij), std::imag(aij)) *
                           std::complex<double>(std::real(b[std::size_t(j)]), std::imag(b[std::size_t(j)]));
                }
                r_norm = std::max(r_norm, std::abs(res)), a_norm = std::max(a_norm, row_sum);
            }
            r.checked = true;
            r.error = r_norm / (double(n) * a_norm * x_norm * double(bs::unit_roundoff<T>()));
            if (g == 1) one = r.ms;
            r.detail["devices"] = g;
            r.detail["speedup_vs_one"] = one / r.ms;
            r.detail["failed"] = r.status == Status::ok ? 0 : 1;
            if (g > 1 && wants(o, "one-device")) {
                Peer q;
                q.name = "one-device";
                q.ran = true, q.ms = one, q.gflops = r.flops / (one * 1e-3) * 1e-9;
                q.note = "the same call on device " + std::to_string(devices.front()) + " alone";
                r.peers.push_back(q);
            }
            judge(r, o.tolerance);
            sink(std::move(r));
        }
    }
}

}  // namespace

void run_multi(const std::string& routine, const Options& o, const Sink& sink) {
    const Backend backend = o.cuda_backend ? Backend::cuda : Backend::cpu;
    const std::vector<int> devices = bs::DeviceGroup::parse_devices(o.device_ids, backend);
    const std::vector<std::string> precisions =
        !o.precisions.empty() ? o.precisions : routine == "multi_gesv" ? std::vector<std::string>{"z"}
                                                                       : std::vector<std::string>{"s", "d"};
    for (const std::string& p : precisions)
        if (p != "s" && p != "d" && p != "c" && p != "z") throw std::runtime_error("invalid --precision '" + p + "'");
    for (const std::string& m : o.modes)
        if (m != "device" && m != "host") throw std::runtime_error("invalid --modes '" + m + "': device or host");
    for (const std::string& p : precisions) {
        if (routine == "multi_gesv") {
            if (p == "s") run_gesv<float>(o, p, backend, devices, sink);
            if (p == "d") run_gesv<double>(o, p, backend, devices, sink);
            if (p == "c") run_gesv<std::complex<float>>(o, p, backend, devices, sink);
            if (p == "z") run_gesv<std::complex<double>>(o, p, backend, devices, sink);
        } else {
            if (p == "s") run_posv<float>(o, p, backend, devices, sink);
            if (p == "d") run_posv<double>(o, p, backend, devices, sink);
            if (p == "c") run_posv<std::complex<float>>(o, p, backend, devices, sink);
            if (p == "z") run_posv<std::complex<double>>(o, p, backend, devices, sink);
        }
    }
}

}  // namespace batchsolve::validation::suite
