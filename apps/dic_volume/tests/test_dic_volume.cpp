// Tests of dvc: readers (and their malformed inputs), interpolation, IC-GN on known fields (CPU;
// GPU against CPU), status codes, strain, outputs and the command line. Volumes are small (48^3 -
// 64^3) so that the suite runs in well under a minute on two cores.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>

#include <batchsolve/context.hpp>

#include "batchsolve_io/hdf5.hpp"
#include "commands.hpp"
#include "correlate.hpp"
#include "generate.hpp"
#include "icgn_math.hpp"
#include "interpolation.hpp"
#include "output.hpp"
#include "strain.hpp"
#include "volume.hpp"
#include "../../../libsolver/tests/test_seed.hpp"

using namespace dvc;
namespace h5 = batchsolve::io::h5;

namespace {

bool file_exists(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0;
}

std::string scratch(const std::string& name) {
    // Under GoogleTest's temporary folder (TEST_TMPDIR or /tmp), never the caller's working directory.
    static const std::string dir = ::testing::TempDir() + "dvc_test_scratch_" + std::to_string(::getpid());
    ::mkdir(dir.c_str(), 0755);
    const std::string path = dir + "/" + name;
    std::remove(path.c_str());
    return path;
}

// The test's seed (libsolver/tests/test_seed.hpp): fresh per test, printed on failure,
// BATCHSOLVE_TEST_SEED replays. The same value for every call within one test.
std::uint64_t test_seed() { return batchsolve::test::base_seed(); }

struct Pair {
    Volume ref, def;
    DisplacementField field;
};

Pair make_pair(std::int64_t n, const DisplacementField& field, double noise = 0) {
    SpeckleOptions so;
    so.dims = {n, n, n};
    so.seed = test_seed();
    Pair p;
    p.ref = make_speckle(so);
    p.field = field;
    p.field.centre = {0.5 * (n - 1), 0.5 * (n - 1), 0.5 * (n - 1)};
    DeformOptions d;
    d.noise_sigma = noise;
    p.def = deform(p.ref, p.field, d);
    return p;
}

double rmse_converged(const CorrelationResult& r, const DisplacementField& f, std::int64_t* converged = nullptr) {
    const auto t = compare_with_truth(r, f);
    double sq = 0;
    std::int64_t n = 0;
    for (std::size_t k = 0; k < r.status.size(); ++k) {
        if (r.status[k] != 0) continue;
        for (int i = 0; i < 3; ++i) sq += t.error[3 * k + i] * t.error[3 * k + i];
        ++n;
    }
    if (converged) *converged = n;
    return n ? std::sqrt(sq / n) : std::numeric_limits<double>::infinity();
}

void expect_no_nan(const CorrelationResult& r) {
    for (std::size_t k = 0; k < r.status.size(); ++k) {
        EXPECT_GE(r.status[k], 0);
        EXPECT_LT(r.status[k], kPointStatusCount - 1) << "point " << k << " left not_run";
        for (int i = 0; i < 12; ++i) EXPECT_TRUE(std::isfinite(r.params[12 * k + i])) << "point " << k;
        EXPECT_TRUE(std::isfinite(r.zncc[k])) << "point " << k;
    }
}

}  // namespace

// ---- interpolation ----------------------------------------------------------------------------------

TEST(Interpolation, SplinesInterpolateTheSamples) {
    Volume v;
    v.dims = {11, 12, 13};
    std::mt19937 rng{unsigned(test_seed())};
    std::uniform_real_distribution<float> u(0, 255);
    for (std::size_t i = 0; i < v.voxels(); ++i) v.data.push_back(u(rng));
    const auto c3 = bspline_coefficients(v, 3), c5 = bspline_coefficients(v, 5);
    const auto om = interpolation_coefficients(v, Interpolation::cubic_omoms);
    // Relative to the grey-level range: the prefilter runs in double, coefficients are stored as float.
    const double tol = 255 * 64 * std::numeric_limits<float>::epsilon();
    for (int z = 1; z < 9; ++z)
        for (int y = 1; y < 10; ++y)
            for (int x = 1; x < 11; ++x) {
                EXPECT_NEAR(sample_cubic(c3.data(), 12, 13, float(z), float(y), float(x)), v.at(z, y, x), tol);
                EXPECT_NEAR(sample_omoms(om.data(), 12, 13, float(z), float(y), float(x)), v.at(z, y, x), tol);
                EXPECT_NEAR(sample_quintic(c5, v.dims, z, y, x), v.at(z, y, x), tol);
                if (z >= 2 && z < 8 && y >= 2 && y < 9 && x >= 2 && x < 10) {  // the float sampler's reach
                    EXPECT_NEAR(sample_quintic_f(c5.data(), 12, 13, float(z), float(y), float(x)), v.at(z, y, x), tol);
                }
            }
    // Between the nodes the float quintic sampler is the double one of the generator.
    for (const float p : {2.25f, 4.5f, 6.875f})
        EXPECT_NEAR(sample_quintic_f(c5.data(), 12, 13, p, p + 0.3f, p + 0.6f), sample_quintic(c5, v.dims, p, p + 0.3f, p + 0.6f), tol);
}

TEST(Interpolation, OmomsWeightsSumToOneAndReproduceALine) {
    // O-MOMS reproduces polynomials up to degree 3 (order 4): weights sum to 1 and sum w_k (k - 1 - t) = 0.
    for (const float t : {0.0f, 0.2f, 0.5f, 0.93f}) {
        float w[4], q[6];
        cubic_omoms_weights(t, w);
        quintic_bspline_weights(t, q);
        EXPECT_NEAR(w[0] + w[1] + w[2] + w[3], 1.0, 8 * std::numeric_limits<float>::epsilon());
        EXPECT_NEAR(-1 * w[0] + 0 * w[1] + 1 * w[2] + 2 * w[3], t, 8 * std::numeric_limits<float>::epsilon());
        EXPECT_NEAR(q[0] + q[1] + q[2] + q[3] + q[4] + q[5], 1.0, 8 * std::numeric_limits<float>::epsilon());
        EXPECT_NEAR(-2 * q[0] - q[1] + q[3] + 2 * q[4] + 3 * q[5], t, 8 * std::numeric_limits<float>::epsilon());
    }
}

// The GPU's reference sums (55 running sums of voxels sharing d_x, expanded) against J J^T summed directly.
TEST(IcgnMath, ReferenceLineSumsExpandToTheDirectSums) {
    std::mt19937 rng{unsigned(test_seed())};
    std::uniform_real_distribution<float> u(-1, 1);
    const float dx = 5.5f;
    ReferenceLineSums line;
    double direct[kReferenceSums] = {};
    double magnitude[kReferenceSums] = {};
    for (int v = 0; v < 200; ++v) {
        const float g[3] = {u(rng), u(rng), u(rng)}, f = 10 * u(rng), dz = 15.5f * u(rng), dy = 15.5f * u(rng);
        line.add(g, f, dz, dy);
        const double d[3] = {dz, dy, dx};
        double J[12];
        for (int a = 0; a < 3; ++a) {
            J[a] = g[a];
            for (int b = 0; b < 3; ++b) J[3 + 3 * a + b] = double(g[a]) * d[b];
        }
        int q = 0;
        for (int i = 0; i < 12; ++i)
            for (int j = i; j < 12; ++j, ++q) direct[q] += J[i] * J[j], magnitude[q] += std::fabs(J[i] * J[j]);
        for (int i = 0; i < 12; ++i) direct[78 + i] += J[i] * f, magnitude[78 + i] += std::fabs(J[i] * f);
        for (int i = 0; i < 12; ++i) direct[90 + i] += J[i], magnitude[90 + i] += std::fabs(J[i]);
        direct[102] += double(f) * f, magnitude[102] += double(f) * f;
    }
    float expanded[kReferenceSums];
    line.expand(dx, expanded);
    // float running sums of 200 terms: a few hundred ulps of the sum of magnitudes.
    for (int q = 0; q < kReferenceSums; ++q)
        EXPECT_NEAR(expanded[q], direct[q], 4 * 200 * std::numeric_limits<float>::epsilon() * magnitude[q]) << "sum " << q;
}

TEST(Interpolation, TrilinearAndCubicReproduceALinearRamp) {
    Volume v;
    v.dims = {32, 32, 32};
    for (int z = 0; z < 32; ++z)
        for (int y = 0; y < 32; ++y)
            for (int x = 0; x < 32; ++x) v.data.push_back(float(3 * z - 2 * y + 0.5 * x));
    const auto c3 = bspline_coefficients(v, 3);
    const float p[3] = {15.3f, 16.71f, 14.14f};
    const double truth = 3 * p[0] - 2 * p[1] + 0.5 * p[2];
    // float positions and sums: a few ulps of the values (~100)
    const double tol = 100 * 64 * std::numeric_limits<float>::epsilon();
    EXPECT_NEAR(sample_trilinear(v.data.data(), 32, 32, p[0], p[1], p[2]), truth, tol);
    // The mirror boundary bends the spline of a ramp near the border; 15 voxels inside, the bend
    // has decayed by (2 - sqrt 3)^15 ~ 4e-9.
    EXPECT_NEAR(sample_cubic(c3.data(), 32, 32, p[0], p[1], p[2]), truth, tol);
}

// ---- warp algebra -----------------------------------------------------------------------------------

TEST(Warp, InverseCompositionalUpdateComposes) {
    double p[12] = {0.3, -1.2, 2.0, 0.01, 0.002, -0.003, 0.004, -0.02, 0.001, 0.0, 0.003, 0.015};
    const double dp[12] = {0.05, 0.01, -0.02, 0.001, -0.002, 0.0005, 0.0, 0.001, -0.001, 0.002, 0.0, -0.001};
    double q[12];
    std::copy(p, p + 12, q);
    ASSERT_TRUE(compose_inverse(q, dp));
    // W(q) o W(dp) must be W(p): check on a few offsets.
    auto apply = [](const double* w, const double* d, double* out) {
        for (int i = 0; i < 3; ++i) out[i] = d[i] + w[i] + w[3 + 3 * i] * d[0] + w[4 + 3 * i] * d[1] + w[5 + 3 * i] * d[2];
    };
    for (double d0 : {-7.0, 3.0})
        for (double d1 : {-2.0, 5.0}) {
            const double d[3] = {d0, d1, 1.5};
            double a[3], b[3], c[3];
            apply(dp, d, a);
            apply(q, a, b);
            apply(p, d, c);
            for (int i = 0; i < 3; ++i) EXPECT_NEAR(b[i], c[i], 64 * std::numeric_limits<double>::epsilon() * 10);
        }
}

// ---- IC-GN on known fields (CPU) ------------------------------------------------------------------------

TEST(Icgn, SubVoxelTranslationRecovered) {
    DisplacementField f;
    f.translation = {0.3, -0.4, 0.25};
    const Pair p = make_pair(48, f);
    batchsolve::Context ctx(batchsolve::Backend::cpu);
    for (auto interp : {Interpolation::cubic_bspline, Interpolation::cubic_omoms, Interpolation::quintic_bspline, Interpolation::trilinear}) {
        CorrelationOptions o;
        o.icgn.subset = 17, o.spacing = 8, o.icgn.interpolation = interp, o.progress = false;
        const auto r = correlate(p.ref, p.def, o, ctx);
        expect_no_nan(r);
        std::int64_t converged = 0;
        const double rmse = rmse_converged(r, f, &converged);
        EXPECT_EQ(converged, std::int64_t(r.status.size())) << to_string(interp);
        // Interpolation bias of a 17^3 subset of sigma-2 speckle: cubic ~1e-4..5e-4, trilinear ~5e-3.
        EXPECT_LT(rmse, is_spline(interp) ? 1.5e-3 : 2e-2) << to_string(interp) << " seed " << test_seed();
        for (float z : r.zncc) EXPECT_GT(z, 0.99f);
    }
}

// The final phase goes on from the first interpolant's fixed point to the final one's: within the
// stopping rule's 2 tol (Gpu.AgreesWithTheCpu explains the bound) of the points that iterate with
// the final interpolant from the start.
TEST(Icgn, FinalPhaseReachesTheFinalInterpolantsFixedPoint) {
    DisplacementField f;
    f.translation = {0.3, -0.4, 0.25};
    const Pair p = make_pair(48, f);
    batchsolve::Context ctx(batchsolve::Backend::cpu);
    CorrelationOptions o;
    o.icgn.subset = 17, o.spacing = 8, o.progress = false;
    o.icgn.interpolation = Interpolation::quintic_bspline;
    const auto quintic = correlate(p.ref, p.def, o, ctx);
    o.icgn.interpolation = Interpolation::cubic_omoms, o.icgn.final_phase = true, o.icgn.final_interpolation = Interpolation::quintic_bspline;
    const auto phased = correlate(p.ref, p.def, o, ctx);
    ASSERT_EQ(quintic.status.size(), phased.status.size());
    for (std::size_t k = 0; k < quintic.status.size(); ++k) {
        ASSERT_EQ(phased.status[k], std::int8_t(PointStatus::converged)) << "point " << k;
        for (int i = 0; i < 3; ++i) EXPECT_NEAR(phased.params[12 * k + i], quintic.params[12 * k + i], 2 * o.icgn.tolerance) << "point " << k;
    }
}

TEST(Icgn, StrainAndRotationRecovered) {
    auto f = rotation_field(3.0, 'z', {0, 0, 0});
    f.translation = {0.2, 0.1, -0.3};
    for (int i = 0; i < 3; ++i) f.gradient[4 * i] += 0.02;
    const Pair p = make_pair(56, f);
    batchsolve::Context ctx(batchsolve::Backend::cpu);
    CorrelationOptions o;
    // Without pre-smoothing: a 2 % strain blurs the deformed speckle differently from the
    // reference's, and a smoothed pair's error grows to ~3.5e-3 (results/defaults_study.md).
    o.icgn.subset = 19, o.spacing = 9, o.progress = false, o.presmooth_sigma = 0;
    const auto r = correlate(p.ref, p.def, o, ctx);
    expect_no_nan(r);
    std::int64_t converged = 0;
    EXPECT_LT(rmse_converged(r, p.field, &converged), 3e-3) << "seed " << test_seed();
    EXPECT_EQ(converged, std::int64_t(r.status.size()));
    for (std::size_t k = 0; k < r.status.size(); ++k)
        for (int q = 0; q < 9; ++q) EXPECT_NEAR(r.params[12 * k + 3 + q], p.field.gradient[q], 2e-3) << "point " << k << " G" << q;
    // Strain of the field: smooth displacement, finite differences; a homogeneous field is exact up to the noise.
    const auto fs = strain_from_field(r, 1.0);
    const auto E = green_lagrange(p.field.gradient.data());
    int checked = 0;
    for (std::size_t k = 0; k < r.status.size(); ++k) {
        if (!fs.valid[k]) continue;
        ++checked;
        for (int q = 0; q < 9; ++q) EXPECT_NEAR(fs.strain[9 * k + q], E[q], 1e-3);
    }
    EXPECT_GT(checked, 0);
}

TEST(Icgn, FlatSubsetsAndOutsidePointsAreFlagged) {
    DisplacementField f;
    f.translation = {0.2, 0.2, 0.2};
    Pair p = make_pair(48, f);
    // A constant block: every subset inside it has no texture.
    for (int z = 0; z < 30; ++z)
        for (int y = 0; y < 30; ++y)
            for (int x = 0; x < 30; ++x) p.ref.at(z, y, x) = 100.0f, p.def.at(z, y, x) = 100.0f;
    batchsolve::Context ctx(batchsolve::Backend::cpu);
    IcgnSettings s;
    s.subset = 15;
    IcgnTimings t;
    auto engine = make_cpu_icgn_engine(p.ref, p.def, s, ctx, t);
    std::vector<Point3> centres{{10, 10, 10}, {33, 33, 33}, {33, 33, 33}};
    std::vector<double> params(36, 0.0);
    params[12 * 2 + 0] = 20.0;  // the third point's start lies outside the volume
    std::vector<float> zncc;
    std::vector<std::int32_t> its;
    std::vector<std::int8_t> status;
    engine->run(centres, params, zncc, its, status, t);
    EXPECT_EQ(status[0], std::int8_t(PointStatus::flat_subset));
    EXPECT_EQ(status[1], std::int8_t(PointStatus::converged));
    EXPECT_EQ(status[2], std::int8_t(PointStatus::outside_volume));
    for (double v : params) EXPECT_TRUE(std::isfinite(v));
}

TEST(Icgn, UnrelatedVolumesFailWithoutNaN) {
    DisplacementField f;
    Pair p = make_pair(48, f);
    SpeckleOptions other;
    other.dims = p.ref.dims;
    other.seed = test_seed() + 99;
    p.def = make_speckle(other);
    batchsolve::Context ctx(batchsolve::Backend::cpu);
    CorrelationOptions o;
    o.icgn.subset = 15, o.spacing = 10, o.guess = GuessMode::none, o.progress = false;
    const auto r = correlate(p.ref, p.def, o, ctx);
    expect_no_nan(r);
    for (std::size_t k = 0; k < r.status.size(); ++k)
        EXPECT_NE(r.status[k], 0) << "point " << k << ": a converged match between unrelated volumes (ZNCC " << r.zncc[k] << ")";
}

TEST(Correlate, FiveDegreeRotationConvergesEverywhereWithSeeding) {
    const Pair p = make_pair(64, rotation_field(5.0, 'z', {0, 0, 0}));
    batchsolve::Context ctx(batchsolve::Backend::cpu);
    CorrelationOptions o;
    o.icgn.subset = 17, o.spacing = 8, o.progress = false;
    const auto r = correlate(p.ref, p.def, o, ctx);
    // Interior points: the truly warped subset stays where the cubic sampler reads.
    std::int64_t interior = 0, converged = 0;
    const std::int64_t dims[3] = {64, 64, 64};
    for (std::size_t k = 0; k < r.status.size(); ++k) {
        double truth[12] = {};
        const auto u = p.field.displacement(r.grid.centres[k]);
        for (int i = 0; i < 3; ++i) truth[i] = u[i];
        for (int q = 0; q < 9; ++q) truth[3 + q] = p.field.gradient[q];
        if (!warped_subset_inside(truth, r.grid.centres[k].data(), subset_half(17), dims, 1.0, 2.0)) {
            EXPECT_NE(r.status[k], 0) << "point " << k << " converged with its subset outside the volume";
            continue;
        }
        ++interior;
        converged += r.status[k] == 0;
    }
    EXPECT_GT(interior, 100);
    EXPECT_EQ(converged, interior);
    EXPECT_LT(rmse_converged(r, p.field), 5e-3) << "seed " << test_seed();
}

// ---- inputs ---------------------------------------------------------------------------------------------

TEST(Inputs, SubsetLargerThanTheVolumeAndEmptyMask) {
    DisplacementField f;
    const Pair p = make_pair(24, f);
    batchsolve::Context ctx(batchsolve::Backend::cpu);
    CorrelationOptions o;
    o.icgn.subset = 32, o.progress = false;
    EXPECT_THROW({
        try { correlate(p.ref, p.def, o, ctx); } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("--subset"), std::string::npos) << e.what();
            throw;
        }
    }, Error);
    o.icgn.subset = 9;
    Volume mask;
    mask.dims = p.ref.dims;
    mask.data.assign(mask.voxels(), 0.0f);
    o.mask = &mask;
    EXPECT_THROW({
        try { correlate(p.ref, p.def, o, ctx); } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("--mask"), std::string::npos) << e.what();
            throw;
        }
    }, Error);
    Volume small = p.def;
    small.dims = {24, 24, 12};
    small.data.resize(small.voxels());
    o.mask = nullptr;
    EXPECT_THROW(correlate(p.ref, small, o, ctx), Error);
}

TEST(Readers, RawRoundTripAndMalformedFiles) {
    const std::string path = scratch("v.raw");
    {
        std::ofstream out(path, std::ios::binary);
        for (int i = 0; i < 2 * 3 * 4; ++i) {
            const std::uint16_t v = std::uint16_t(1000 + i);
            out.write(reinterpret_cast<const char*>(&v), 2);
        }
    }
    const Volume v = read_raw(path, {2, 3, 4}, VoxelType::uint16);
    EXPECT_EQ(v.at(1, 2, 3), 1000.0f + 23);
    auto message = [&](const Dims& d, VoxelType t) {
        try {
            read_raw(path, d, t);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message({2, 3, 5}, VoxelType::uint16).find("truncated"), std::string::npos);  // dims larger than the file
    EXPECT_NE(message({2, 3, 4}, VoxelType::float32).find("truncated"), std::string::npos); // wrong dtype
    EXPECT_NE(message({2, 3, 4}, VoxelType::uint8).find("too long"), std::string::npos);
    EXPECT_NE(message({2, 3, 4}, VoxelType::uint8).find(path), std::string::npos);
    EXPECT_THROW(parse_dims("4x0x3", "--dims"), Error);
    EXPECT_THROW(parse_dims("4x3", "--dims"), Error);
    EXPECT_THROW(parse_dims("100000000x100000000x100000000", "--dims"), Error);
    EXPECT_THROW(read_raw(scratch("missing.raw"), {1, 1, 1}, VoxelType::uint8), Error);
}

// The GPU engine reads raw files in parts on several threads (RawFile::read): the same samples as
// read_raw, and a non-finite voxel is named as one thread would name it (the first in the file).
TEST(Readers, RawFileReadsPartsOnThreads) {
    Volume v;
    v.dims = {9, 70, 130};  // 81,900 voxels: two parts of more than 65,536 voxels' worth of threads
    std::mt19937 rng{unsigned(test_seed())};
    std::uniform_real_distribution<float> u(-5, 5);
    for (std::size_t i = 0; i < v.voxels(); ++i) v.data.push_back(u(rng));
    const std::string path = scratch("parts.raw");
    write_raw_file(path, v.data.data(), v.voxels() * 4, true);
    const RawFile file(path, v.dims, VoxelType::float32, 0);
    std::vector<float> got(v.voxels() - 100, 0.0f);
    file.read(100, got.size(), got.data(), 3);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), v.data.begin() + 100));
    const Volume opened = open_for_device(VolumeSource{path, "", v.dims, VoxelType::float32, 0});
    EXPECT_TRUE(opened.data.empty());
    ASSERT_TRUE(opened.unread);
    EXPECT_EQ(opened.unread->voxels(), v.voxels());
    v.data[81000] = std::numeric_limits<float>::infinity();
    v.data[70000] = std::numeric_limits<float>::quiet_NaN();
    write_raw_file(path, v.data.data(), v.voxels() * 4, true);
    const RawFile bad(path, v.dims, VoxelType::float32, 0);
    std::vector<float> all(v.voxels());
    try {
        bad.read(0, v.voxels(), all.data(), 4);
        FAIL() << "a NaN was read without an error";
    } catch (const Error& e) {
        // voxel 70000 = (z, y, x) (7, 48, 60)
        EXPECT_NE(std::string(e.what()).find("(7, 48, 60)"), std::string::npos) << e.what();
    }
    EXPECT_THROW(RawFile(path, {9, 70, 131}, VoxelType::float32, 0), Error);
}

TEST(Readers, TiffStackRoundTripAndGarbage) {
    Volume v;
    v.dims = {3, 5, 7};
    for (std::size_t i = 0; i < v.voxels(); ++i) v.data.push_back(float(i % 251));
    for (auto t : {VoxelType::uint8, VoxelType::uint16, VoxelType::float32}) {
        const std::string path = scratch(std::string("v_") + to_string(t) + ".tif");
        write_tiff_stack(path, v, t);
        const Volume back = read_tiff_stack(path);
        ASSERT_EQ(back.dims, v.dims);
        EXPECT_EQ(back.data, v.data) << to_string(t);
    }
    const std::string bad = scratch("garbage.tif");
    std::ofstream(bad) << "II*\0 this is not a tiff";
    EXPECT_THROW(read_tiff_stack(bad), Error);
}

TEST(Readers, Hdf5VolumeSchema) {
    const std::string path = scratch("v.h5");
    {
        auto f = h5::File::create(path);
        std::vector<std::uint8_t> u8(4 * 5 * 6);
        for (std::size_t i = 0; i < u8.size(); ++i) u8[i] = std::uint8_t(i);
        f.write("/volume", u8.data(), {4, 5, 6});
        f.set_attribute("/volume", "voxel_size", 0.5);
        f.write("/flat", u8.data(), {20, 6});
        std::vector<double> d(8, 1.0);
        f.write("/doubles", d.data(), {2, 2, 2});
        f.commit();
    }
    const Volume v = read_volume(parse_volume_source(path));
    EXPECT_EQ(v.dims, (Dims{4, 5, 6}));
    EXPECT_EQ(v.voxel_size, 0.5);
    EXPECT_EQ(v.at(3, 4, 5), 119.0f);
    try {
        read_volume(parse_volume_source(path + ":/flat"));
        ADD_FAILURE() << "a 2-D dataset was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("three-dimensional"), std::string::npos) << e.what();
    }
    // float64 -> float32 cannot keep every value: the HDF5 layer refuses it with its FileError.
    EXPECT_ANY_THROW(read_volume(parse_volume_source(path + ":/doubles")));
    EXPECT_THROW(read_volume(parse_volume_source(path + ":/nothing")), Error);
}

TEST(Readers, RealTomographyPairIfPresent) {
    const std::string ref = std::string(DVC_SHARED_DATA) + "/reference_192x192x192_u8.raw";
    if (!file_exists(ref)) GTEST_SKIP() << "skipped: " << ref << " not present";
    const Volume v = read_raw(ref, {192, 192, 192}, VoxelType::uint8);
    ASSERT_EQ(v.dims, (Dims{192, 192, 192}));
    // Against the file's bytes read here independently (C order: z slowest, x fastest): every voxel
    // holds its byte's value at its index, so a reader that swapped axes, dropped or repeated a
    // slice, scaled or offset the values fails; two voxels also through at(z, y, x).
    std::ifstream in(ref, std::ios::binary);
    std::vector<unsigned char> bytes(std::size_t(192) * 192 * 192);
    in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
    ASSERT_EQ(std::size_t(in.gcount()), bytes.size());
    std::size_t differ = 0;
    for (std::size_t e = 0; e < bytes.size(); ++e) differ += v.data[e] != float(bytes[e]);
    EXPECT_EQ(differ, 0u) << "voxels that are not their byte";
    auto byte_at = [&](int z, int y, int x) { return float(bytes[(std::size_t(z) * 192 + y) * 192 + x]); };
    EXPECT_EQ(v.at(5, 100, 37), byte_at(5, 100, 37));
    EXPECT_EQ(v.at(150, 3, 191), byte_at(150, 3, 191));
}

// A whole-voxel translation is generated as a plain shift of the samples: it must be what the
// degree-5 sampler gives at those nodes, mirrored beyond the border included.
TEST(Generate, WholeVoxelTranslationIsTheSplineAtTheShiftedNodes) {
    Volume ref;
    ref.dims = {14, 13, 12};
    std::mt19937 rng{unsigned(test_seed())};
    std::uniform_real_distribution<float> u(0, 255);
    for (std::size_t i = 0; i < ref.voxels(); ++i) ref.data.push_back(u(rng));
    DisplacementField f;
    f.translation = {3, -2, 5};
    const Volume g = deform(ref, f, DeformOptions{});
    const auto c5 = bspline_coefficients(ref, 5);
    const double tol = 255 * 64 * std::numeric_limits<float>::epsilon();  // as SplinesInterpolateTheSamples
    for (std::int64_t z = 0; z < ref.nz(); ++z)
        for (std::int64_t y = 0; y < ref.ny(); ++y)
            for (std::int64_t x = 0; x < ref.nx(); ++x)
                ASSERT_NEAR(g.at(z, y, x), sample_quintic(c5, ref.dims, double(z - 3), double(y + 2), double(x - 5)), tol)
                    << "voxel " << z << " " << y << " " << x;
}

// ---- strain ---------------------------------------------------------------------------------------------

TEST(Strain, GreenLagrangeOfAKnownGradient) {
    const double G[9] = {0.02, 0.01, 0, 0, -0.01, 0.03, 0, 0, 0.005};
    const auto E = green_lagrange(G);
    // E_01 = (G_01 + G_10 + sum_k G_k0 G_k1) / 2
    EXPECT_NEAR(E[1], 0.5 * (0.01 + 0 + 0.02 * 0.01 + 0 * -0.01 + 0 * 0), 1e-15);
    EXPECT_NEAR(E[0], 0.02 + 0.5 * 0.02 * 0.02, 1e-15);
    EXPECT_NEAR(E[3], E[1], 1e-15);
}

// ---- outputs and the command line ---------------------------------------------------------------------

TEST(Cli, GenerateCorrelateWritesEveryOutput) {
    const std::string pair = scratch("pair.h5"), out = scratch("out.h5"), vti = scratch("out.vti"), vtu = scratch("out.vtu"),
                      png = scratch("out.png"), json = scratch("out.json"), timeline_json = scratch("timeline.json");
    ASSERT_EQ(run_cli({"generate", "-o", pair, "--size", "40", "--translation", "0.5,0.25,-0.3", "--seed", std::to_string(test_seed() % 100000)}), 0);
    ASSERT_EQ(run_cli({"correlate", "--pair", pair, "-o", out, "--subset", "15", "--spacing", "8", "--backend", "cpu", "-q", "--vti", vti,
                       "--vtu", vtu, "--png", png, "--summary-json", json, "--timeline", timeline_json}), 0);
    {
        std::ifstream t(timeline_json);
        const std::string text((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
        for (const char* event : {"volumes_read", "correlation_done", "results_written", "results_freed"})
            EXPECT_NE(text.find(std::string("\"") + event + "\""), std::string::npos) << event << " missing from " << text;
    }
    auto f = h5::File::open(out);
    const auto shape = f.shape("/points/displacement");
    ASSERT_EQ(shape.size(), 2u);
    EXPECT_EQ(shape[1], 3u);
    const auto status = f.read<std::int32_t>("/points/status");
    for (auto s : status) EXPECT_EQ(s, 0);
    const auto err = f.read<double>("/truth/error");
    for (double e : err) EXPECT_LT(std::fabs(e), 5e-3);
    std::ifstream p(png, std::ios::binary);
    char sig[8] = {};
    p.read(sig, 8);
    EXPECT_EQ(std::string(sig + 1, 3), "PNG");
    EXPECT_TRUE(file_exists(vti) && file_exists(vtu) && file_exists(json));
    // An existing output is refused without --force, and left as it was.
    EXPECT_EQ(run_cli({"correlate", "--pair", pair, "-o", out, "--subset", "15", "--backend", "cpu", "-q"}), 3);
    EXPECT_TRUE(file_exists(out));
    EXPECT_EQ(run_cli({"correlate", "--help"}), 0);
    EXPECT_EQ(run_cli({"generate", "--help"}), 0);
    EXPECT_EQ(run_cli({"bench", "--help"}), 0);
}

TEST(Cli, BenchReportsEveryBackendAndSubset) {
    const std::string json = scratch("bench.json");
    ASSERT_EQ(run_cli({"bench", "--size", "40", "--subsets", "11,15", "--backends", "cpu", "--cpu-points", "20", "-q", "--json", json}), 0);
    std::ifstream in(json);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"subset\": 11"), std::string::npos) << text;
    EXPECT_NE(text.find("\"subset\": 15"), std::string::npos);
    EXPECT_NE(text.find("icgn_points_per_s"), std::string::npos);
    EXPECT_EQ(run_cli({"bench", "--size", "10"}), 2);
    // The spam comparison: whole calls need the end-to-end runs; a failing peer command is an error
    // that says so (the peer itself, scripts/spam_correlate.py, needs spam: results/bench_beside_spam.md).
    EXPECT_EQ(run_cli({"bench", "--size", "40", "--subsets", "11", "--backends", "cpu", "-q", "--end-to-end", "0", "--spam", "true"}), 2);
    EXPECT_EQ(run_cli({"bench", "--size", "40", "--subsets", "11", "--backends", "cpu", "--cpu-points", "8", "-q", "--spam", "false",
                       "--spam-points", "5"}), 3);
}

TEST(Cli, MalformedInputsLeaveNoOutput) {
    const std::string raw = scratch("short.raw"), out = scratch("never.h5");
    std::ofstream(raw, std::ios::binary) << std::string(1000, 'x');
    EXPECT_EQ(run_cli({"correlate", "--reference", raw, "--deformed", raw, "--dims", "10x10x11", "-o", out, "-q"}), 3);
    EXPECT_FALSE(file_exists(out));
    EXPECT_EQ(run_cli({"correlate", "--reference", raw, "--deformed", raw, "--dims", "10x10x10", "--subset", "32", "-o", out, "-q"}), 3);
    EXPECT_FALSE(file_exists(out));
    EXPECT_EQ(run_cli({"correlate", "--reference", raw, "-o", out}), 2);
    EXPECT_EQ(run_cli({"correlate", "--pair", raw, "--interpolation", "quartic", "-o", out}), 2);
    EXPECT_EQ(run_cli({"correlate", "--pair", raw, "--final-interpolation", "trilinear", "-o", out}), 2);
    EXPECT_FALSE(file_exists(out));
    EXPECT_EQ(run_cli({"frobnicate"}), 2);
}

// ---- GPU ----------------------------------------------------------------------------------------------

TEST(Gpu, AgreesWithTheCpu) {
    if (!batchsolve::Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
    auto f = rotation_field(2.0, 'y', {0, 0, 0});
    f.translation = {0.35, -0.2, 0.6};
    for (int i = 0; i < 3; ++i) f.gradient[4 * i] += 0.01;
    const Pair p = make_pair(64, f);
    // Each interpolant, and O-MOMS with a quintic final phase (interp -1).
    for (int variant : {int(Interpolation::cubic_omoms), int(Interpolation::cubic_bspline), int(Interpolation::quintic_bspline),
                        int(Interpolation::trilinear), -1}) {
        const Interpolation interp = variant < 0 ? Interpolation::cubic_omoms : Interpolation(variant);
        CorrelationOptions o;
        o.icgn.subset = 21, o.spacing = 8, o.icgn.interpolation = interp, o.progress = false;
        o.icgn.final_phase = variant < 0;
        batchsolve::Context cpu(batchsolve::Backend::cpu), gpu(batchsolve::Backend::cuda);
        const auto rc = correlate(p.ref, p.def, o, cpu);
        const auto rg = correlate(p.ref, p.def, o, gpu);
        EXPECT_EQ(rg.backend, "cuda");
        expect_no_nan(rg);
        ASSERT_EQ(rc.status.size(), rg.status.size());
        // Both engines iterate to the same fixed point and stop once a step is below the tolerance
        // tol; with Gauss-Newton contracting by at least half per step near it, each stopping point
        // lies within tol of the fixed point (on the CPU, 10 seeds of this pair: within 9e-6 voxel
        // of the point reached at tol = 1e-9), so the two differ by at most 2 tol per component. The
        // GPU's float arithmetic moves the fixed point itself far less: its positions are floats
        // relative to a double centre (half an ulp at 64 voxels: 4e-6 voxel) and its sums of
        // 21^3 float terms change the step by about 1e-8 voxel. The error against the truth is the
        // method's (the default pre-smoothing does not commute with this 1 % strain + 2 degree
        // rotation: 1.2e-3 to 1.6e-3 voxel over 40 seeds on the CPU, cubic), so the GPU's is held
        // to the CPU's on the same pair, within the same 2 tol.
        const double agreement = 2 * o.icgn.tolerance;
        std::int64_t converged_cpu = 0, converged_gpu = 0;
        const double rmse_cpu = rmse_converged(rc, p.field, &converged_cpu), rmse_gpu = rmse_converged(rg, p.field, &converged_gpu);
        EXPECT_EQ(converged_cpu, std::int64_t(rc.status.size()));
        EXPECT_EQ(converged_gpu, std::int64_t(rg.status.size()));
        EXPECT_NEAR(rmse_gpu, rmse_cpu, agreement) << to_string(interp) << (o.icgn.final_phase ? "+final" : "");
        for (std::size_t k = 0; k < rc.status.size(); ++k) {
            EXPECT_EQ(rc.status[k], rg.status[k]) << to_string(interp) << (o.icgn.final_phase ? "+final" : "") << " point " << k;
            for (int i = 0; i < 3; ++i)
                EXPECT_NEAR(rc.params[12 * k + i], rg.params[12 * k + i], agreement) << to_string(interp) << (o.icgn.final_phase ? "+final" : "") << " point " << k;
            EXPECT_NEAR(rc.zncc[k], rg.zncc[k], 1e-4);
        }
    }
}

TEST(Gpu, FieldStrainMatchesTheCpu) {
    if (!batchsolve::Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
    // A CPU correlation's points (a few left out of the converged set, so that the fit meets holes
    // and the grid's border), their field strain on each backend: the same double arithmetic
    // (strain_math.hpp), so they agree to rounding (exp and fused multiply-adds: ~1e-15 relative).
    DisplacementField f;
    f.translation = {0.3, -0.2, 0.1};
    f.gradient = {0.01, 0.002, 0, 0, -0.005, 0.001, 0.003, 0, 0.008};
    const Pair p = make_pair(64, f);
    CorrelationOptions o;
    o.icgn.subset = 15, o.spacing = 6, o.progress = false;
    batchsolve::Context cpu(batchsolve::Backend::cpu);
    CorrelationResult r = correlate(p.ref, p.def, o, cpu);
    for (std::size_t k = 0; k < r.status.size(); k += 7) r.status[k] = std::int8_t(PointStatus::diverged);
    const FieldStrain on_cpu = strain_from_field(r, 1.0);
    r.backend = "cuda";
    const FieldStrain on_gpu = strain_from_field(r, 1.0);
    ASSERT_EQ(on_cpu.valid, on_gpu.valid);
    std::int64_t valid = 0;
    for (std::size_t k = 0; k < on_cpu.valid.size(); ++k) {
        if (!on_cpu.valid[k]) {
            for (int q = 0; q < 9; ++q) EXPECT_TRUE(std::isnan(on_gpu.strain[9 * k + q])) << "point " << k;
            continue;
        }
        ++valid;
        for (int q = 0; q < 9; ++q) EXPECT_NEAR(on_gpu.strain[9 * k + q], on_cpu.strain[9 * k + q], 1e-12) << "point " << k;
    }
    EXPECT_GT(valid, std::int64_t(on_cpu.valid.size() / 2));
}
