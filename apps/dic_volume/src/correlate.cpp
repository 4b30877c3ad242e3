// The correlation driver: point grid, FFT initial guesses, IC-GN passes with neighbour seeding.
#include "correlate.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <mutex>

#include "batchsolve_io/progress.hpp"
#include "generate.hpp"

namespace dvc {

GuessMode parse_guess_mode(const std::string& text) {
    if (text == "seeded") return GuessMode::seeded;
    if (text == "fft") return GuessMode::fft;
    if (text == "none" || text == "zero") return GuessMode::none;
    throw Error("--guess: '" + text + "' is not one of seeded, fft, none");
}

const char* to_string(GuessMode g) {
    return g == GuessMode::seeded ? "seeded" : g == GuessMode::fft ? "fft" : "none";
}

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

PointGrid make_point_grid(const Dims& dims, const CorrelationOptions& o) {
    const int s = o.icgn.subset;
    if (o.spacing < 1) throw Error("--spacing: must be at least 1 voxel");
    PointGrid grid;
    grid.spacing = o.spacing;
    const std::int64_t margin = kGridMargin;
    for (int i = 0; i < 3; ++i) {
        const std::int64_t hi_region = o.region_hi[i] <= 0 ? dims[i] : std::min<std::int64_t>(o.region_hi[i], dims[i]);
        const std::int64_t lo = std::max<std::int64_t>(o.region_lo[i], margin);
        const std::int64_t hi = std::min<std::int64_t>(hi_region, dims[i] - margin);
        const std::int64_t room = hi - lo - s;
        if (room < 0)
            throw Error("--subset: " + std::to_string(s) + " voxels do not fit in the region of interest along axis " +
                        "zyx"[i] + " (" + std::to_string(std::max<std::int64_t>(hi - lo, 0)) + " voxels available, " + std::to_string(kGridMargin) +
                        " of margin at the volume's border)");
        const std::int64_t count = room / o.spacing + 1;
        grid.grid_shape[i] = count;
        grid.origin[i] = double(lo + (room - (count - 1) * o.spacing) / 2) + subset_half(s);
    }
    if (o.mask && o.mask->dims != dims)
        throw Error("--mask: dimensions " + dims_text(o.mask->dims) + " differ from the volumes' " + dims_text(dims));
    const std::int64_t total = grid.grid_shape[0] * grid.grid_shape[1] * grid.grid_shape[2];
    std::vector<std::int64_t> kept;
    for (std::int64_t g = 0; g < total; ++g) {
        const std::int64_t gz = g / (grid.grid_shape[1] * grid.grid_shape[2]), gy = (g / grid.grid_shape[2]) % grid.grid_shape[1],
                           gx = g % grid.grid_shape[2];
        const Point3 c{grid.origin[0] + gz * o.spacing, grid.origin[1] + gy * o.spacing, grid.origin[2] + gx * o.spacing};
        if (o.mask && o.mask->at(std::int64_t(c[0]), std::int64_t(c[1]), std::int64_t(c[2])) == 0.0f) continue;
        kept.push_back(g);
    }
    if (kept.empty()) throw Error("--mask: no grid point has its centre inside the mask");
    if (o.max_points > 0 && std::int64_t(kept.size()) > o.max_points) {
        std::vector<std::int64_t> spread;
        for (std::int64_t i = 0; i < o.max_points; ++i) spread.push_back(kept[std::size_t(i * std::int64_t(kept.size()) / o.max_points)]);
        kept.swap(spread);
    }
    for (auto g : kept) {
        const std::int64_t gz = g / (grid.grid_shape[1] * grid.grid_shape[2]), gy = (g / grid.grid_shape[2]) % grid.grid_shape[1],
                           gx = g % grid.grid_shape[2];
        grid.centres.push_back({grid.origin[0] + gz * o.spacing, grid.origin[1] + gy * o.spacing, grid.origin[2] + gx * o.spacing});
        grid.grid_index.push_back(g);
    }
    return grid;
}

namespace {

bool retry_worthy(std::int8_t s) {
    return s == std::int8_t(PointStatus::iteration_limit) || s == std::int8_t(PointStatus::diverged) ||
           s == std::int8_t(PointStatus::outside_volume) || s == std::int8_t(PointStatus::low_correlation);
}

// Parameters of point `to` extrapolated from the converged affine map of point `from`.
void extrapolate(const double* from_params, const Point3& from, const Point3& to, double* out) {
    const double d[3] = {to[0] - from[0], to[1] - from[1], to[2] - from[2]};
    std::copy(from_params, from_params + 12, out);
    for (int i = 0; i < 3; ++i) out[i] = from_params[i] + from_params[3 + 3 * i] * d[0] + from_params[4 + 3 * i] * d[1] + from_params[5 + 3 * i] * d[2];
}

}  // namespace

CorrelationResult correlate(const Volume& ref_in, const Volume& def_in, const CorrelationOptions& o, batchsolve::Context& ctx) {
    const auto start = Clock::now();
    check_icgn_inputs(ref_in, def_in, o.icgn);
    if (o.presmooth_sigma < 0 || o.presmooth_sigma > 10) throw Error("--presmooth: must lie in [0, 10] voxels");
    if (o.search_radius < 0) throw Error("--search-radius: must not be negative");
    const Volume& ref = ref_in;
    const Volume& def = def_in;
    CorrelationResult r;
    r.grid = make_point_grid(ref.dims, o);
    const std::int64_t count = std::int64_t(r.grid.centres.size());
    r.params.assign(std::size_t(count) * 12, 0.0);
    r.zncc.assign(count, 0.0f);
    r.iterations.assign(count, 0);
    r.status.assign(count, std::int8_t(PointStatus::not_run));
    r.initial_shift.assign(std::size_t(count) * 3, 0);
    r.pass.assign(count, 0);
    IcgnSettings settings = o.icgn;
    settings.presmooth_sigma = o.presmooth_sigma;
    const int levels = o.guess == GuessMode::none ? 0 : pyramid_levels(ref.dims, o.icgn.subset, o.search_radius, o.pyramid_levels);
    const auto& shape = r.grid.grid_shape;
    std::vector<std::int64_t> point_of(std::size_t(shape[0] * shape[1] * shape[2]), -1);
    for (std::int64_t k = 0; k < count; ++k) point_of[r.grid.grid_index[k]] = k;
    auto grid_coords = [&](std::int64_t k) {
        const std::int64_t g = r.grid.grid_index[k];
        return std::array<std::int64_t, 3>{g / (shape[1] * shape[2]), (g / shape[2]) % shape[1], g % shape[2]};
    };

    // Seeded: the seeds are every stride-th grid point per axis (the FFT guess runs there first).
    const int stride = std::max(1, o.seed_stride), offset = (stride - 1) / 2;
    std::vector<std::int64_t> seeds, others;
    if (o.guess == GuessMode::seeded)
        for (std::int64_t k = 0; k < count; ++k) {
            const auto g = grid_coords(k);
            // A short axis (fewer grid points than the stride) takes its middle point as the seed row.
            bool seed = true;
            for (int i = 0; i < 3; ++i) {
                const std::int64_t off = std::min<std::int64_t>(offset, (shape[i] - 1) / 2);
                seed = seed && (g[i] - off) % stride == 0 && g[i] >= off;
            }
            (seed ? seeds : others).push_back(k);
        }
    // On the GPU the first FFT search's cuFFT plans are made beside the engine's upload and prefilters.
    std::future<void> plans;
    if (o.guess != GuessMode::none && ctx.backend() == batchsolve::Backend::cuda)
        plans = plan_gpu_shift_searches(o.icgn.subset, o.search_radius, levels,
                                        std::size_t(o.guess == GuessMode::seeded ? seeds.size() : std::size_t(count)));
    auto engine = make_icgn_engine(ref, def, settings, ctx, r.icgn);
    r.backend = engine->backend_name();

    // Runs IC-GN on `points` from `guesses` (12 each); keeps a result where the point had none yet,
    // or where `only_improve` and the new one converged.
    auto run_pass = [&](const std::vector<std::int64_t>& points, const std::vector<double>& guesses, int pass, bool only_improve) {
        if (points.empty()) return;
        std::vector<Point3> centres;
        for (auto k : points) centres.push_back(r.grid.centres[k]);
        std::vector<double> params(guesses);
        std::vector<float> zncc;
        std::vector<std::int32_t> iterations;
        std::vector<std::int8_t> status;
        engine->run(centres, params, zncc, iterations, status, r.icgn);
        for (std::size_t i = 0; i < points.size(); ++i)
            if (status[i] == std::int8_t(PointStatus::converged) && !(zncc[i] >= o.min_zncc))
                status[i] = std::int8_t(PointStatus::low_correlation);
        for (std::size_t i = 0; i < points.size(); ++i) {
            const std::int64_t k = points[i];
            if (only_improve && status[i] != std::int8_t(PointStatus::converged)) continue;
            std::copy(&params[12 * i], &params[12 * i] + 12, &r.params[12 * k]);
            r.zncc[k] = zncc[i], r.iterations[k] = iterations[i], r.status[k] = status[i], r.pass[k] = std::int8_t(pass);
        }
    };
    auto fft_guesses = [&](const std::vector<std::int64_t>& points) {
        std::vector<Point3> centres;
        for (auto k : points) centres.push_back(r.grid.centres[k]);
        const auto t0 = Clock::now();
        const auto shifts = engine->integer_shifts(centres, o.search_radius, levels, o.progress);
        r.guess.fft_s += seconds_since(t0);
        r.guess.fft_points += std::int64_t(points.size());
        std::vector<double> guesses(points.size() * 12, 0.0);
        for (std::size_t i = 0; i < points.size(); ++i)
            for (int a = 0; a < 3; ++a) {
                guesses[12 * i + a] = shifts[3 * i + a];
                r.initial_shift[3 * points[i] + a] = shifts[3 * i + a];
            }
        return guesses;
    };

    std::vector<std::int64_t> all(count);
    for (std::int64_t k = 0; k < count; ++k) all[k] = k;
    if (o.guess == GuessMode::none) {
        run_pass(all, std::vector<double>(std::size_t(count) * 12, 0.0), 0, false);
    } else if (o.guess == GuessMode::fft) {
        run_pass(all, fft_guesses(all), 0, false);
    } else {
        run_pass(seeds, fft_guesses(seeds), 0, false);
        // Every other point starts from the nearest converged seed (27 seed-lattice candidates).
        std::vector<std::int64_t> from_seed, need_fft;
        std::vector<double> seeded_guesses;
        for (auto k : others) {
            const auto g = grid_coords(k);
            std::int64_t best = -1;
            double best_d = std::numeric_limits<double>::infinity();
            std::int64_t base[3];
            for (int i = 0; i < 3; ++i) {
                const std::int64_t off = std::min<std::int64_t>(offset, (shape[i] - 1) / 2);
                base[i] = off + stride * std::llround(double(g[i] - off) / stride);
            }
            for (int a = -1; a <= 1; ++a)
                for (int b = -1; b <= 1; ++b)
                    for (int c = -1; c <= 1; ++c) {
                        const std::int64_t q[3] = {base[0] + a * stride, base[1] + b * stride, base[2] + c * stride};
                        if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= shape[0] || q[1] >= shape[1] || q[2] >= shape[2]) continue;
                        const std::int64_t j = point_of[(q[0] * shape[1] + q[1]) * shape[2] + q[2]];
                        if (j < 0 || r.status[j] != std::int8_t(PointStatus::converged)) continue;
                        const double d = double((q[0] - g[0]) * (q[0] - g[0]) + (q[1] - g[1]) * (q[1] - g[1]) + (q[2] - g[2]) * (q[2] - g[2]));
                        if (d < best_d || (d == best_d && r.zncc[j] > r.zncc[best])) best_d = d, best = j;
                    }
            if (best < 0) {
                need_fft.push_back(k);
                continue;
            }
            from_seed.push_back(k);
            seeded_guesses.resize(seeded_guesses.size() + 12);
            extrapolate(&r.params[12 * best], r.grid.centres[best], r.grid.centres[k], &seeded_guesses[seeded_guesses.size() - 12]);
        }
        run_pass(from_seed, seeded_guesses, 1, false);
        if (!need_fft.empty()) run_pass(need_fft, fft_guesses(need_fft), 1, false);
    }

    // Retries: a failed point starts again from its best converged grid neighbour (highest ZNCC).
    for (int pass = 0; o.guess != GuessMode::none && pass < o.retry_passes; ++pass) {
        std::vector<std::int64_t> retry;
        std::vector<double> guesses;
        for (std::int64_t k = 0; k < count; ++k) {
            if (!retry_worthy(r.status[k])) continue;
            const auto g = grid_coords(k);
            std::int64_t best = -1;
            for (int a = -1; a <= 1; ++a)
                for (int b = -1; b <= 1; ++b)
                    for (int c = -1; c <= 1; ++c) {
                        const std::int64_t q[3] = {g[0] + a, g[1] + b, g[2] + c};
                        if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= shape[0] || q[1] >= shape[1] || q[2] >= shape[2]) continue;
                        const std::int64_t j = point_of[(q[0] * shape[1] + q[1]) * shape[2] + q[2]];
                        if (j < 0 || j == k || r.status[j] != std::int8_t(PointStatus::converged)) continue;
                        if (best < 0 || r.zncc[j] > r.zncc[best]) best = j;
                    }
            if (best < 0) continue;
            retry.push_back(k);
            guesses.resize(guesses.size() + 12);
            extrapolate(&r.params[12 * best], r.grid.centres[best], r.grid.centres[k], &guesses[guesses.size() - 12]);
        }
        if (retry.empty()) break;
        run_pass(retry, guesses, 2 + pass, true);
    }
    r.total_s = seconds_since(start);
    return r;
}

}  // namespace dvc
