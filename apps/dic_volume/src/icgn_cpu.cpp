// The CPU IC-GN engine: OpenMP over points inside each batched stage, the Hessians factored and
// solved by the library's CPU backend (same algorithm as the GPU engine, stage for stage).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include <batchsolve/batch.hpp>
#include <batchsolve/cholesky.hpp>

#include "generate.hpp"
#include "icgn.hpp"
#include "icgn_math.hpp"
#include "initial_guess.hpp"

namespace dvc {

const char* to_string(PointStatus s) {
    switch (s) {
    case PointStatus::converged: return "converged";
    case PointStatus::iteration_limit: return "iteration_limit";
    case PointStatus::diverged: return "diverged";
    case PointStatus::flat_subset: return "flat_subset";
    case PointStatus::outside_volume: return "outside_volume";
    case PointStatus::low_correlation: return "low_correlation";
    case PointStatus::not_run: return "not_run";
    }
    return "?";
}

void check_icgn_inputs(const Volume& reference, const Volume& deformed, const IcgnSettings& s) {
    if (reference.dims != deformed.dims)
        throw Error("the reference (" + dims_text(reference.dims) + ") and deformed (" + dims_text(deformed.dims) +
                    ") volumes differ in size");
    if (s.subset < 3 || s.subset > kMaxSubset)
        throw Error("--subset: " + std::to_string(s.subset) + " is outside 3.." + std::to_string(kMaxSubset) + " voxels");
    for (int i = 0; i < 3; ++i)
        if (s.subset + 4 > reference.dims[i])
            throw Error("--subset: " + std::to_string(s.subset) + " voxels (plus 2 of margin on each side for the interpolation) do not fit in the volume of " +
                        dims_text(reference.dims));
    if (s.max_iterations < 1) throw Error("--max-iterations: must be at least 1");
    if (!(s.tolerance > 0)) throw Error("--tolerance: must be positive");
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// `v` itself, or its pre-smoothed copy kept in `store`.
const Volume& smoothed(const Volume& v, double sigma, Volume& store) {
    if (!(sigma > 0)) return v;
    store = v;
    gaussian_smooth(store, sigma);
    return store;
}

class CpuEngine final : public IcgnEngine {
public:
    CpuEngine(const Volume& reference, const Volume& deformed, const IcgnSettings& settings, batchsolve::Context& ctx,
              IcgnTimings& timings)
        : t0_(Clock::now()),
          ref_(smoothed(reference, settings.presmooth_sigma, ref_smooth_)),
          def_(smoothed(deformed, settings.presmooth_sigma, def_smooth_)),
          s_(settings),
          ctx_(ctx) {
        check_icgn_inputs(reference, deformed, settings);
        const auto t0 = t0_;
        const bool spline = is_spline(s_.interpolation);
        std::vector<float> ref_coefficients;
        if (spline) {
            ref_coefficients = bspline_coefficients(ref_, 3);
            def_coefficients_ = interpolation_coefficients(def_, s_.interpolation);
        }
        if (s_.final_phase) final_coefficients_ = interpolation_coefficients(def_, s_.final_interpolation);
        image_gradients(ref_, spline ? &ref_coefficients : nullptr, s_.interpolation, gz_, gy_, gx_);
        timings.prepare_s += seconds_since(t0);
    }

    std::string backend_name() const override { return "cpu"; }

    std::vector<std::int32_t> integer_shifts(const std::vector<Point3>& centres, int radius, int levels, bool progress) override {
        // Coarser levels are made on first use and kept for later calls.
        while (int(ref_levels_.size()) < levels) {
            const Volume& r = ref_levels_.empty() ? ref_ : ref_levels_.back();
            const Volume& d = def_levels_.empty() ? def_ : def_levels_.back();
            ref_levels_.push_back(downsample2(r));
            def_levels_.push_back(downsample2(d));
        }
        return pyramid_shifts(centres, ref_.dims, s_.subset, radius, levels, [&](int level, const ShiftSearch& search) {
            return level == 0 ? fft_shift_search(ref_, def_, search, progress)
                              : fft_shift_search(ref_levels_[level - 1], def_levels_[level - 1], search, false);
        });
    }

    void run(const std::vector<Point3>& centres, std::vector<double>& params, std::vector<float>& zncc,
             std::vector<std::int32_t>& iterations, std::vector<std::int8_t>& status, IcgnTimings& timings) override {
        const std::int64_t count = std::int64_t(centres.size());
        if (std::int64_t(params.size()) != count * kParams) throw Error("IC-GN: params holds the wrong number of values");
        zncc.assign(count, 0.0f);
        iterations.assign(count, 0);
        status.assign(count, std::int8_t(PointStatus::not_run));
        if (count == 0) return;
        const int s = s_.subset;
        const double half = subset_half(s);
        const double n = double(s) * s * s;
        const auto reach = sampler_reach(s_.interpolation);
        const double max_change = s_.max_displacement_change < 0 ? 0.5 * s : s_.max_displacement_change;
        const std::int64_t dims[3] = {ref_.nz(), ref_.ny(), ref_.nx()};

        // Reference statistics and Hessians (upper triangle accumulated, mirrored for potrf).
        auto t0 = Clock::now();
        hessians_.assign(std::size_t(count) * 144, 0.0);
        jf_.assign(std::size_t(count) * 12, 0.0);
        j1_.assign(std::size_t(count) * 12, 0.0);
        fmean_.assign(count, 0.0);
        df_.assign(count, 0.0);
        std::vector<double> initial(params);
        const double zero_p[12] = {};
#pragma omp parallel for schedule(dynamic, 4)
        for (std::int64_t k = 0; k < count; ++k) {
            const double* c = centres[k].data();
            if (!warped_subset_inside(zero_p, c, half, dims, 1.0, 1.0)) {
                status[k] = std::int8_t(PointStatus::outside_volume);
                continue;
            }
            reference_statistics(c, k);
        }
        timings.hessian_s += seconds_since(t0);

        t0 = Clock::now();
        std::vector<int> info(count, 0);
        batchsolve::potrf_batched(batchsolve::Uplo::lower,
                                  batchsolve::BatchView<double>::column_major(hessians_.data(), 12, 12, int(count)), info.data(), ctx_);
        timings.factor_s += seconds_since(t0);

        std::vector<std::int64_t> active;
        for (std::int64_t k = 0; k < count; ++k) {
            if (status[k] != std::int8_t(PointStatus::not_run)) continue;
            if (info[k] != 0 || !(df_[k] > 1e-6 * std::sqrt(n) * (std::fabs(fmean_[k]) + 1e-30))) {
                status[k] = std::int8_t(PointStatus::flat_subset);
                continue;
            }
            if (!warped_subset_inside(&params[12 * k], centres[k].data(), half, dims, reach.lower, reach.upper)) {
                status[k] = std::int8_t(PointStatus::outside_volume);
                continue;
            }
            active.push_back(k);
        }

        std::vector<double> rhs;
        std::vector<const double*> factors;
        int iteration = 0;
        // Iterates the active points with one interpolant until none is left or `last` iterations.
        auto iterate = [&](Interpolation interp, const float* src, SamplerReach bounds, int last) {
            while (!active.empty() && iteration < last) {
                ++iteration;
                const std::int64_t m = std::int64_t(active.size());
                rhs.assign(std::size_t(m) * 12, 0.0);
                factors.resize(m);
                std::vector<char> usable(m, 1);
                t0 = Clock::now();
#pragma omp parallel for schedule(dynamic, 2)
                for (std::int64_t a = 0; a < m; ++a) {
                    const std::int64_t k = active[a];
                    factors[a] = &hessians_[std::size_t(k) * 144];
                    if (!deformed_rhs(interp, src, centres[k].data(), &params[12 * k], k, &rhs[12 * a], &zncc[k])) {
                        usable[a] = 0;
                        std::fill(&rhs[12 * a], &rhs[12 * a] + 12, 0.0);
                    }
                }
                timings.interpolation_s += seconds_since(t0);

                t0 = Clock::now();
                batchsolve::potrs_batched(batchsolve::Uplo::lower,
                                          batchsolve::BatchView<const double>::pointer_array(factors.data(), 12, 12, 12, int(m)),
                                          batchsolve::BatchView<double>::column_major(rhs.data(), 12, 1, int(m)), ctx_);
                timings.solve_s += seconds_since(t0);

                t0 = Clock::now();
                std::vector<std::int64_t> still;
                still.reserve(active.size());
                for (std::int64_t a = 0; a < m; ++a) {
                    const std::int64_t k = active[a];
                    double* p = &params[12 * k];
                    const double* dp = &rhs[12 * a];
                    iterations[k] = iteration;
                    PointStatus outcome = PointStatus::not_run;
                    bool finite = true;
                    for (int i = 0; i < 12; ++i) finite = finite && std::isfinite(dp[i]);
                    if (!usable[a] || !finite || !compose_inverse(p, dp)) {
                        outcome = PointStatus::diverged;
                    } else {
                        const double moved = std::sqrt((p[0] - initial[12 * k]) * (p[0] - initial[12 * k]) +
                                                       (p[1] - initial[12 * k + 1]) * (p[1] - initial[12 * k + 1]) +
                                                       (p[2] - initial[12 * k + 2]) * (p[2] - initial[12 * k + 2]));
                        double gmax = 0;
                        for (int i = 3; i < 12; ++i) gmax = std::max(gmax, std::fabs(p[i]));
                        if (!(moved <= max_change) || !(gmax <= s_.max_gradient)) outcome = PointStatus::diverged;
                        else if (!warped_subset_inside(p, centres[k].data(), half, dims, bounds.lower, bounds.upper))
                            outcome = PointStatus::outside_volume;
                        else if (step_norm(dp, half) < s_.tolerance) outcome = PointStatus::converged;
                    }
                    if (outcome == PointStatus::not_run) still.push_back(k);
                    else status[k] = std::int8_t(outcome);
                }
                active.swap(still);
                timings.update_s += seconds_since(t0);
            }
            for (auto k : active) status[k] = std::int8_t(PointStatus::iteration_limit);
            active.clear();
        };
        const float* first_src = is_spline(s_.interpolation) ? def_coefficients_.data() : def_.data.data();
        iterate(s_.interpolation, first_src, reach, s_.max_iterations);
        if (s_.final_phase) {
            // The converged points go on with the final interpolant; a failure there restores them.
            const auto final_reach = sampler_reach(s_.final_interpolation);
            std::vector<std::int64_t> again;
            for (std::int64_t k = 0; k < count; ++k)
                if (status[k] == std::int8_t(PointStatus::converged) &&
                    warped_subset_inside(&params[12 * k], centres[k].data(), half, dims, final_reach.lower, final_reach.upper))
                    again.push_back(k);
            std::vector<double> kept_params(12 * again.size());
            std::vector<float> kept_zncc(again.size());
            std::vector<std::int32_t> kept_iterations(again.size());
            for (std::size_t a = 0; a < again.size(); ++a) {
                const std::int64_t k = again[a];
                std::copy(&params[12 * k], &params[12 * k] + 12, &kept_params[12 * a]);
                kept_zncc[a] = zncc[k], kept_iterations[a] = iterations[k];
                status[k] = std::int8_t(PointStatus::not_run);
            }
            active = again;
            const int first_iterations = iteration;
            iterate(s_.final_interpolation, final_coefficients_.data(), final_reach, first_iterations + s_.max_iterations);
            for (std::size_t a = 0; a < again.size(); ++a) {
                const std::int64_t k = again[a];
                if (status[k] == std::int8_t(PointStatus::converged)) continue;
                std::copy(&kept_params[12 * a], &kept_params[12 * a] + 12, &params[12 * k]);
                zncc[k] = kept_zncc[a], iterations[k] = kept_iterations[a];
                status[k] = std::int8_t(PointStatus::converged);
            }
        }
        timings.iterations += iteration;
        for (std::int64_t k = 0; k < count; ++k) timings.point_iterations += iterations[k];
    }

private:
    // Subset voxel (a, b, c) of a point: offsets from the centre d = index - half.
    void reference_statistics(const double* centre, std::int64_t k) {
        const int s = s_.subset;
        const double half = subset_half(s);
        const std::int64_t z0 = std::llround(centre[0] - half), y0 = std::llround(centre[1] - half), x0 = std::llround(centre[2] - half);
        double fsum = 0;
        for (int a = 0; a < s; ++a)
            for (int b = 0; b < s; ++b) {
                const float* row = &ref_.data[ref_.index(z0 + a, y0 + b, x0)];
                for (int c = 0; c < s; ++c) fsum += row[c];
            }
        const double fmean = fsum / (double(s) * s * s);
        double h[78] = {}, jf[12] = {}, j1[12] = {}, ff = 0;
        double J[12];
        for (int a = 0; a < s; ++a)
            for (int b = 0; b < s; ++b) {
                const std::size_t row = ref_.index(z0 + a, y0 + b, x0);
                for (int c = 0; c < s; ++c) {
                    const double d[3] = {a - half, b - half, c - half};
                    const double g[3] = {gz_[row + c], gy_[row + c], gx_[row + c]};
                    for (int i = 0; i < 3; ++i) {
                        J[i] = g[i];
                        for (int j = 0; j < 3; ++j) J[3 + 3 * i + j] = g[i] * d[j];
                    }
                    const double f = ref_.data[row + c] - fmean;
                    ff += f * f;
                    int q = 0;
                    for (int i = 0; i < 12; ++i) {
                        jf[i] += J[i] * f;
                        j1[i] += J[i];
                        for (int j = i; j < 12; ++j) h[q++] += J[i] * J[j];
                    }
                }
            }
        double* H = &hessians_[std::size_t(k) * 144];
        int q = 0;
        for (int i = 0; i < 12; ++i)
            for (int j = i; j < 12; ++j, ++q) H[i * 12 + j] = H[j * 12 + i] = h[q];
        std::copy(jf, jf + 12, &jf_[12 * k]);
        std::copy(j1, j1 + 12, &j1_[12 * k]);
        fmean_[k] = fmean;
        df_[k] = std::sqrt(ff);
    }

    // Interpolates the deformed subset under the warp p and forms the right-hand side.
    // src: the coefficients of interp (the samples for trilinear).
    bool deformed_rhs(Interpolation interp, const float* src, const double* centre, const double* p, std::int64_t k, double* b, float* zncc) const {
        switch (interp) {
            case Interpolation::cubic_bspline: return deformed_rhs<sample_cubic>(src, centre, p, k, b, zncc);
            case Interpolation::cubic_omoms: return deformed_rhs<sample_omoms>(src, centre, p, k, b, zncc);
            case Interpolation::quintic_bspline: return deformed_rhs<sample_quintic_f>(src, centre, p, k, b, zncc);
            case Interpolation::trilinear: break;
        }
        return deformed_rhs<sample_trilinear>(src, centre, p, k, b, zncc);
    }
    template <float (*Sample)(const float*, std::int64_t, std::int64_t, float, float, float)>
    bool deformed_rhs(const float* src, const double* centre, const double* p, std::int64_t k, double* b, float* zncc) const {
        const int s = s_.subset;
        const double half = subset_half(s);
        const std::int64_t ny = def_.ny(), nx = def_.nx();
        const std::int64_t z0 = std::llround(centre[0] - half), y0 = std::llround(centre[1] - half), x0 = std::llround(centre[2] - half);
        const double shift = fmean_[k];
        double jg[12] = {}, g1 = 0, gg = 0, fg = 0;
        for (int a = 0; a < s; ++a)
            for (int bb = 0; bb < s; ++bb) {
                const std::size_t row = ref_.index(z0 + a, y0 + bb, x0);
                const double da = a - half, db = bb - half;
                for (int c = 0; c < s; ++c) {
                    const double d[3] = {da, db, c - half};
                    float pos[3];
                    for (int i = 0; i < 3; ++i)
                        pos[i] = float(centre[i] + p[i] + d[i] + p[3 + 3 * i] * d[0] + p[4 + 3 * i] * d[1] + p[5 + 3 * i] * d[2]);
                    const double g = Sample(src, ny, nx, pos[0], pos[1], pos[2]) - shift;
                    const double f = ref_.data[row + c] - shift;
                    g1 += g, gg += g * g, fg += f * g;
                    const double w[3] = {gz_[row + c] * g, gy_[row + c] * g, gx_[row + c] * g};
                    for (int i = 0; i < 3; ++i) {
                        jg[i] += w[i];
                        jg[3 + 3 * i] += w[i] * d[0], jg[4 + 3 * i] += w[i] * d[1], jg[5 + 3 * i] += w[i] * d[2];
                    }
                }
            }
        return znssd_rhs(&jf_[12 * k], jg, &j1_[12 * k], g1, gg, fg, double(s) * s * s, df_[k], b, zncc);
    }

    Clock::time_point t0_;
    Volume ref_smooth_, def_smooth_;  // the pre-smoothed volumes (empty without pre-smoothing)
    const Volume& ref_;
    const Volume& def_;
    std::vector<Volume> ref_levels_, def_levels_;  // pyramid levels 1, 2, ...
    IcgnSettings s_;
    batchsolve::Context& ctx_;
    std::vector<float> def_coefficients_, final_coefficients_, gz_, gy_, gx_;
    std::vector<double> hessians_, jf_, j1_, fmean_, df_;
};

}  // namespace

std::unique_ptr<IcgnEngine> make_cpu_icgn_engine(const Volume& reference, const Volume& deformed,
                                                 const IcgnSettings& settings, batchsolve::Context& ctx, IcgnTimings& timings) {
    return std::make_unique<CpuEngine>(reference, deformed, settings, ctx, timings);
}

std::unique_ptr<IcgnEngine> make_icgn_engine(const Volume& reference, const Volume& deformed, const IcgnSettings& settings,
                                             batchsolve::Context& ctx, IcgnTimings& timings) {
    if (ctx.backend() == batchsolve::Backend::cuda) return make_cuda_icgn_engine(reference, deformed, settings, ctx, timings);
    if (reference.unread || deformed.unread) throw Error("the CPU engine needs the volumes in memory (read_volume, not open_for_device)");
    return make_cpu_icgn_engine(reference, deformed, settings, ctx, timings);
}

}  // namespace dvc
