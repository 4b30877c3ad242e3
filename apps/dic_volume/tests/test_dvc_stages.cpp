// Tests of the volume stages shared by the engines: the host/device arithmetic of volume_math.hpp
// run on the host the way the GPU kernels run it (float lines in place at a stride) against the CPU
// stages, the multi-scale initial guess (pyramid geometry, a 25-voxel translation plus a rotation
// found without tuning --search-radius), and, with a GPU, the device stages against the CPU
// ("skipped: no GPU" without one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <batchsolve/context.hpp>

#include "correlate.hpp"
#include "device_checks.hpp"
#include "generate.hpp"
#include "initial_guess.hpp"
#include "interpolation.hpp"
#include "volume_math.hpp"

using namespace dvc;

namespace {

Volume random_volume(const Dims& dims, std::uint64_t seed) {
    Volume v;
    v.dims = dims;
    v.data.resize(v.voxels());
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> n(100.0f, 30.0f);
    for (auto& f : v.data) f = n(rng);
    return v;
}

float max_abs(const std::vector<float>& v) {
    float m = 0;
    for (float f : v) m = std::max(m, std::fabs(f));
    return m;
}

float max_difference(const std::vector<float>& a, const std::vector<float>& b) {
    float m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

// The GPU prefilter's arithmetic on the host: every line filtered in place in float at its stride,
// axes x, y, z in turn (the device runs the x axis on a transposed copy: the same numbers).
Volume emulated_device_prefilter(const Volume& v, int degree) {
    Volume c = v;
    const SplinePoles poles = spline_poles(degree);
    const std::int64_t nz = v.nz(), ny = v.ny(), nx = v.nx();
    for (std::int64_t z = 0; z < nz; ++z)
        for (std::int64_t y = 0; y < ny; ++y) prefilter_line_strided(&c.at(z, y, 0), nx, 1, poles);
    for (std::int64_t z = 0; z < nz; ++z)
        for (std::int64_t x = 0; x < nx; ++x) prefilter_line_strided(&c.at(z, 0, x), ny, nx, poles);
    for (std::int64_t y = 0; y < ny; ++y)
        for (std::int64_t x = 0; x < nx; ++x) prefilter_line_strided(&c.at(0, y, x), nz, ny * nx, poles);
    return c;
}

}  // namespace

// Float storage between the recursions (the device) against the CPU's double lines: within a few
// float roundings of the coefficients' size. Axes of 5 and 9 voxels take the exact initial value
// (shorter than the truncation horizon), 37 and 41 the truncated one.
TEST(VolumeMath, FloatLinePrefilterMatchesTheCpuPrefilter) {
    for (const Dims& dims : {Dims{37, 29, 41}, Dims{5, 9, 40}}) {
        const Volume v = random_volume(dims, 11);
        for (int degree : {3, 5}) {
            const std::vector<float> cpu = bspline_coefficients(v, degree);
            const Volume emulated = emulated_device_prefilter(v, degree);
            const float scale = max_abs(cpu);
            EXPECT_LE(max_difference(cpu, emulated.data), 2e-6f * scale) << "degree " << degree << ", dims " << dims_text(dims);
            // And not the identity: the test would notice a prefilter that did nothing.
            EXPECT_GT(max_difference(cpu, v.data), 1e-2f * scale);
        }
    }
}

// The cubic prefilter inverts the spline's node values (c[k-1] + 4 c[k] + c[k+1]) / 6 with mirrored
// ends, on a long line (truncated initial value) and a short one (the exact sum), in double.
TEST(VolumeMath, PrefilterInvertsTheSplineOnLongAndShortLines) {
    for (std::int64_t n : {64, 7}) {
        std::vector<double> line(n);
        std::mt19937_64 rng(3);
        std::normal_distribution<double> d(0, 1);
        for (auto& x : line) x = d(rng);
        std::vector<double> c = line;
        prefilter_line_strided(c.data(), n, 1, spline_poles(3));
        double worst = 0;
        for (std::int64_t k = 0; k < n; ++k) {
            const double node = (c[std::size_t(mirror_index(k - 1, n))] + 4 * c[k] + c[std::size_t(mirror_index(k + 1, n))]) / 6;
            worst = std::max(worst, std::fabs(node - line[k]));
        }
        EXPECT_LT(worst, 1e-11) << "line of " << n;
    }
}

TEST(VolumeMath, DownsampleAveragesBlocksOfARamp) {
    Volume v;
    v.dims = {9, 12, 14};
    v.data.resize(v.voxels());
    for (std::int64_t z = 0; z < 9; ++z)
        for (std::int64_t y = 0; y < 12; ++y)
            for (std::int64_t x = 0; x < 14; ++x) v.at(z, y, x) = float(3 * z - 2 * y + 0.5 * x + 7);
    const Volume c = downsample2(v);
    ASSERT_EQ(c.dims, (Dims{4, 6, 7}));
    for (std::int64_t z = 0; z < 4; ++z)
        for (std::int64_t y = 0; y < 6; ++y)
            for (std::int64_t x = 0; x < 7; ++x)
                EXPECT_NEAR(c.at(z, y, x), 3 * (2 * z + 0.5) - 2 * (2 * y + 0.5) + 0.5 * (2 * x + 0.5) + 7, 1e-4);
}

TEST(Pyramid, LevelsFitTheVolume) {
    EXPECT_EQ(pyramid_levels({512, 512, 512}, 32, 8, -1), 3);
    EXPECT_EQ(pyramid_levels({160, 160, 160}, 32, 8, -1), 2);  // level 2: 40 voxels >= 16 + 16 + 4
    EXPECT_EQ(pyramid_levels({128, 128, 128}, 32, 8, -1), 1);
    EXPECT_EQ(pyramid_levels({48, 48, 48}, 32, 8, -1), 0);
    EXPECT_EQ(pyramid_levels({512, 512, 512}, 32, 8, 0), 0);
    EXPECT_THROW(pyramid_levels({128, 128, 128}, 32, 8, 3), Error);
    EXPECT_EQ(pyramid_subset(32, 1), 16);
    EXPECT_EQ(pyramid_subset(48, 1), 24);
    EXPECT_EQ(pyramid_subset(12, 2), 12);  // never above the subset itself
}

// A 25-voxel translation along z plus a 4-degree rotation about z (up to 5.6 voxels more across the
// volume): the default search box (+-8) alone cannot reach it; the pyramid's two coarser levels do.
TEST(Pyramid, FindsA25VoxelTranslationWithRotationByDefault) {
    SpeckleOptions so;
    so.dims = {160, 160, 160};
    so.seed = 5;
    Volume ref = make_speckle(so);
    const std::array<double, 3> centre{79.5, 79.5, 79.5};
    DisplacementField field = rotation_field(4.0, 'z', centre);
    field.centre = centre;
    field.translation = {25.0, 0.0, 0.0};
    const Volume def = deform(ref, field, DeformOptions{});
    CorrelationOptions o;
    o.icgn.subset = 32;
    o.spacing = 20;
    o.progress = false;
    auto run = [&](int levels) {
        o.pyramid_levels = levels;
        batchsolve::Context ctx(batchsolve::Backend::cpu);
        return correlate(ref, def, o, ctx);
    };
    // Points whose deformed subset (under the true map, plus the sampler's reach) stays inside.
    auto reachable = [&](const CorrelationResult& r, std::size_t k) {
        const Point3& c = r.grid.centres[k];
        const Point3 u = field.displacement(c);
        const double half = subset_half(o.icgn.subset) * 1.1 + 2;
        for (int i = 0; i < 3; ++i)
            if (c[i] + u[i] - half < 1 || c[i] + u[i] + half > 160 - 3) return false;
        return true;
    };
    auto score = [&](const CorrelationResult& r, double& converged_fraction, double& rmse) {
        std::int64_t reach = 0, ok = 0;
        double sq = 0;
        for (std::size_t k = 0; k < r.status.size(); ++k) {
            if (!reachable(r, k)) continue;
            ++reach;
            if (r.status[k] != std::int8_t(PointStatus::converged)) continue;
            ++ok;
            const Point3 u = field.displacement(r.grid.centres[k]);
            for (int i = 0; i < 3; ++i) sq += (r.params[12 * k + i] - u[i]) * (r.params[12 * k + i] - u[i]);
        }
        ASSERT_GT(reach, 20);
        converged_fraction = double(ok) / double(reach);
        rmse = ok ? std::sqrt(sq / double(3 * ok)) : INFINITY;
    };
    double fraction = 0, rmse = 0;
    score(run(-1), fraction, rmse);
    EXPECT_GE(fraction, 0.95);
    EXPECT_LT(rmse, 2e-3);
    double fraction0 = 0, rmse0 = 0;
    score(run(0), fraction0, rmse0);
    EXPECT_LT(fraction0, 0.5) << "without the pyramid the +-8 box should not reach 25 voxels (the test would not see a broken pyramid)";
}

// ---- GPU stages against the CPU ----------------------------------------------------------------

TEST(Gpu, DeviceStagesMatchTheCpu) {
    if (!gpu_stages_available()) GTEST_SKIP() << "skipped: no GPU";
    const Volume v = random_volume({33, 40, 45}, 21);
    for (int degree : {3, 5}) {
        const Volume g = gpu_stage_prefilter(v, degree);
        const std::vector<float> cpu = bspline_coefficients(v, degree);
        EXPECT_LE(max_difference(cpu, g.data), 2e-6f * max_abs(cpu)) << "prefilter degree " << degree;
    }
    {
        Volume cpu = v;
        gaussian_smooth(cpu, 1.0);
        EXPECT_LE(max_difference(cpu.data, gpu_stage_smooth(v, 1.0).data), 1e-5f * max_abs(cpu.data)) << "smoothing";
    }
    for (bool cubic : {true, false}) {
        const std::vector<float> c = bspline_coefficients(v, 3);
        Volume src = v;
        if (cubic) src.data = c;
        std::vector<float> gz, gy, gx;
        image_gradients(v, cubic ? &c : nullptr, cubic ? Interpolation::cubic_bspline : Interpolation::trilinear, gz, gy, gx);
        const auto g = gpu_stage_gradients(src, cubic);
        EXPECT_LE(max_difference(gz, g[0].data), 1e-5f * max_abs(gz)) << "gradient z, cubic " << cubic;
        EXPECT_LE(max_difference(gy, g[1].data), 1e-5f * max_abs(gy)) << "gradient y, cubic " << cubic;
        EXPECT_LE(max_difference(gx, g[2].data), 1e-5f * max_abs(gx)) << "gradient x, cubic " << cubic;
    }
    EXPECT_LE(max_difference(downsample2(v).data, gpu_stage_downsample(v).data), 1e-4f) << "downsampling";
    // The shift search on a generated pair with a known integer-ish translation and strain.
    SpeckleOptions so;
    so.dims = {64, 72, 80};
    Volume ref = make_speckle(so);
    DisplacementField field;
    field.centre = {31.5, 35.5, 39.5};
    field.translation = {3.0, -4.0, 5.0};
    field.gradient = {0.01, 0, 0, 0, -0.01, 0, 0, 0, 0.005};
    const Volume def = deform(ref, field, DeformOptions{});
    ShiftSearch search;
    search.subset = 20, search.radius = 7;
    for (int z = 4; z + 20 + 4 < 64; z += 9)
        for (int y = 6; y + 20 + 6 < 72; y += 9)
            for (int x = 7; x + 20 + 7 < 80; x += 9) {
                search.starts.insert(search.starts.end(), {z, y, x});
                search.predicted.insert(search.predicted.end(), {0, 0, 0});
            }
    search.predicted[0] = 1;  // a predicted shift off zero: the box moves with it
    const auto cpu = fft_shift_search(ref, def, search, false);
    const auto gpu = gpu_stage_shift_search(ref, def, search);
    ASSERT_EQ(cpu.size(), gpu.size());
    std::size_t equal = 0;
    for (std::size_t i = 0; i < cpu.size(); i += 3) {
        equal += cpu[i] == gpu[i] && cpu[i + 1] == gpu[i + 1] && cpu[i + 2] == gpu[i + 2];
        for (int a = 0; a < 3; ++a) EXPECT_LE(std::abs(cpu[i + a] - gpu[i + a]), 1) << "point " << i / 3;
    }
    EXPECT_GE(double(equal), 0.95 * double(cpu.size() / 3));
}
