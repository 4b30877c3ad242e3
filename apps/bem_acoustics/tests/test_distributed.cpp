// BEM over several devices (distributed.hpp, issue 30): the column-block assembly on 1, 2 and 3 CPU
// members equals the one-device matrix (P0 bit for bit, P1 to rounding), the solve over the group
// equals the one-device LU within the bound the condition number gives, a system that does not fit
// the members is refused naming the bytes, and on a GPU the same against the one-GPU path.
#include <gtest/gtest.h>

#include <batchsolve/multi_device.hpp>
#include <batchsolve/types.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <limits>
#include <string>
#include <unistd.h>

#include "app.hpp"
#include "distributed.hpp"
#include "solver.hpp"

using namespace bem;

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();

struct Sphere {
    Mesh mesh;
    Geometry g;
    explicit Sphere(const std::string& spec) : mesh(make_sphere_from_spec(spec)), g(make_geometry(mesh)) {}
};

Matrix one_device(Formulation f, const Sphere& s, double k) { return assemble(f, s.mesh, s.g, k); }

double max_abs(const std::vector<cd>& v) {
    double m = 0;
    for (const cd& z : v) m = std::max(m, std::abs(z));
    return m;
}

// (members, tile): uneven tiles, a last short tile, and a member left without columns (3 members,
// 2 tiles of 200 for n = 320).
const std::vector<std::pair<int, int>> splits = {{1, 1024}, {2, 64}, {2, 7}, {3, 128}, {3, 200}};
// The solve and P1 tests (a P1 member visits every element pair): two of them, to keep CI short.
const std::vector<std::pair<int, int>> few_splits = {{2, 7}, {3, 200}};

}  // namespace

TEST(Distributed, P0ColumnsEqualOneDeviceBitForBit) {
    const Sphere s("ico:2");  // 320 triangles
    const double k = 2.0;
    const Matrix ref = one_device(Formulation::soft_p0, s, k);
    for (auto [members, tile] : splits) {
        batchsolve::DeviceGroup group(batchsolve::Backend::cpu, std::vector<int>(std::size_t(members), 0));
        batchsolve::TiledMatrix<cd> a(group, int(ref.n), int(ref.n), tile);
        assemble_distributed(Formulation::soft_p0, s.mesh, s.g, k, {}, a, group);
        const std::vector<cd> full = a.gather();
        std::size_t differ = 0;
        for (std::size_t e = 0; e < full.size(); ++e) differ += full[e] != ref.a[e];
        EXPECT_EQ(differ, 0u) << members << " members, tiles of " << tile;
    }
}

TEST(Distributed, P1ColumnsEqualOneDeviceToRounding) {
    const Sphere s("ico:2");  // 162 vertices
    const double k = 2.0;
    for (Formulation f : {Formulation::soft_p1, Formulation::hard_p1}) {
        const Matrix ref = one_device(f, s, k);
        for (auto [members, tile] : few_splits) {
            batchsolve::DeviceGroup group(batchsolve::Backend::cpu, std::vector<int>(std::size_t(members), 0));
            batchsolve::TiledMatrix<cd> a(group, int(ref.n), int(ref.n), tile);
            assemble_distributed(f, s.mesh, s.g, k, {}, a, group);
            const std::vector<cd> full = a.gather();
            // An entry sums the local matrices of the element pairs around two vertices (at most 6 x 6
            // pairs x 9 terms on these meshes), added in another order than the one-device OpenMP atomics:
            // the difference is below (terms) x eps x the largest partial sum, far under 1e-12 x max |a|.
            double diff = 0;
            for (std::size_t e = 0; e < full.size(); ++e) diff = std::max(diff, std::abs(full[e] - ref.a[e]));
            EXPECT_LE(diff, 1e-12 * max_abs(ref.a)) << to_string(f) << ", " << members << " members, tiles of " << tile;
        }
    }
}

TEST(Distributed, SolveEqualsOneDeviceLu) {
    const Sphere s("ico:2");
    const double k = 2.0;
    Incident inc;
    for (Formulation f : {Formulation::soft_p0, Formulation::hard_p1}) {
        const Matrix a1 = one_device(f, s, k);
        const std::vector<cd> b = right_hand_side(f, s.mesh, s.g, inc, k);
        const SolveResult one = solve(SolveMethod::cpu_lu, a1, b);
        for (auto [members, tile] : few_splits) {
            batchsolve::DeviceGroup group(batchsolve::Backend::cpu, std::vector<int>(std::size_t(members), 0));
            const DistributedResult d = solve_distributed(f, s.mesh, s.g, k, b, group, tile);
            // Partial-pivoting LU is backward stable: both scaled residuals are a small multiple of eps
            // (measured 1e-19 - 1e-17 here); 1e-14 leaves three orders of margin.
            EXPECT_LT(d.scaled_residual, 1e-14) << to_string(f) << ", " << members << " members";
            // Two solutions with scaled residuals s1, s2 differ by at most cond(A) n (s1 + s2) relative
            // (forward error <= condition x backward error); LAPACK's estimate of cond is within a
            // factor 10 of the true value, hence the 10.
            const double bound = 10.0 / one.rcond * double(a1.n) * (d.scaled_residual + one.scaled_residual) + 4 * eps;
            double diff = 0;
            for (std::size_t i = 0; i < b.size(); ++i) diff = std::max(diff, std::abs(d.x[i] - one.x[i]));
            EXPECT_LE(diff / max_abs(one.x), bound) << to_string(f) << ", " << members << " members, tiles of " << tile;
        }
    }
}

TEST(Distributed, SystemLargerThanTheMembersIsRefusedNamingTheBytes) {
    const Sphere s("ico:3");  // 1280 triangles: 25 MiB in complex double
    batchsolve::DeviceGroup group(batchsolve::Backend::cpu, {0, 1});
    group.set_memory_limit(std::size_t(8) << 20);  // two "devices" of 8 MiB each
    const std::vector<cd> b(s.g.n, cd(1, 0));
    try {
        solve_distributed(Formulation::soft_p0, s.mesh, s.g, 2.0, b, group, 64);
        ADD_FAILURE() << "a 25 MiB system was accepted by two members of 8 MiB";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("system of order 1280 (0.02 GiB in complex double"), std::string::npos) << what;
        EXPECT_NE(what.find("does not fit"), std::string::npos) << what;
        EXPECT_NE(what.find("0.01 GiB available"), std::string::npos) << what;
        EXPECT_NE(what.find("2 member(s)"), std::string::npos) << what;
    }
}

TEST(Distributed, WrongSizesAreArgumentErrors) {
    const Sphere s("ico:1");
    batchsolve::DeviceGroup group(batchsolve::Backend::cpu, {0, 1});
    EXPECT_THROW(solve_distributed(Formulation::soft_p0, s.mesh, s.g, 2.0, std::vector<cd>(3), group, 16), std::invalid_argument);
    EXPECT_THROW(solve_distributed(Formulation::soft_p0, s.mesh, s.g, 2.0, std::vector<cd>(s.g.n), group, 0), std::invalid_argument);
    batchsolve::TiledMatrix<cd> wrong(group, 10, 10, 4);
    EXPECT_THROW(assemble_distributed(Formulation::soft_p0, s.mesh, s.g, 2.0, {}, wrong, group), std::invalid_argument);
}

TEST(Distributed, SolveCommandWritesTheSameFarField) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("bem_distributed_" + std::to_string(::getpid()));
    SolveOptions o;
    o.mesh = "ico:1";
    o.wavenumbers = {2.0};
    o.angles = 12;
    o.force = true;
    o.output_dir = (dir / "one").string();
    ASSERT_EQ(run_solve(o), 0);
    o.output_dir = (dir / "two").string();
    o.devices = "0,1";
    o.tile = 16;
    ASSERT_EQ(run_solve(o), 0);
    // Every number of the two CSVs (theta, re, im, abs, level): the solves agree to ~1e-15
    // (SolveEqualsOneDeviceLu); the files print 10 significant digits, so a last digit may round
    // differently: compared to 1e-8 relative, far above that and far below any real difference.
    auto numbers = [](const std::filesystem::path& p) {
        std::ifstream in(p);
        std::string line;
        std::getline(in, line);  // header
        std::vector<double> v;
        while (std::getline(in, line)) {
            std::stringstream row(line);
            std::string cell;
            while (std::getline(row, cell, ',')) v.push_back(std::stod(cell));
        }
        return v;
    };
    const std::vector<double> one = numbers(dir / "one" / "far_field_f0.csv"), two = numbers(dir / "two" / "far_field_f0.csv");
    ASSERT_EQ(one.size(), two.size());
    ASSERT_GE(one.size(), 12u * 5);
    for (std::size_t e = 0; e < one.size(); ++e) EXPECT_NEAR(two[e], one[e], 1e-8 * std::max(1.0, std::abs(one[e]))) << "value " << e;
    std::filesystem::remove_all(dir);
}

TEST(Distributed, GeodesicSpheresAreClosedWithTheExpectedCounts) {
    for (int m : {1, 2, 3, 4, 7}) {
        Mesh mesh = make_geodesic_sphere(m, 2.0);
        EXPECT_EQ(mesh.triangle_count(), std::size_t(20 * m * m)) << m;
        EXPECT_EQ(mesh.vertex_count(), std::size_t(10 * m * m + 2)) << m;
        const SurfaceReport report = check_surface(mesh);  // throws on an open, non-manifold or degenerate surface
        EXPECT_FALSE(report.flipped_to_outward) << "frequency " << m << ": faces must come out outward";
        EXPECT_EQ(report.removed_unused_vertices, 0u);
        for (const auto& v : mesh.vertices) ASSERT_NEAR(std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), 2.0, 1e-12);
    }
    EXPECT_EQ(make_sphere_from_spec("geo:6").triangle_count(), 720u);
    EXPECT_THROW(make_geodesic_sphere(0), MeshError);
}

// ---- GPU: a DeviceGroup of every GPU against the one-GPU assembly and solve ------------------------

TEST(DistributedGpu, ColumnsAndSolveAgreeWithOneGpu) {
    if (!gpu_available()) GTEST_SKIP() << "skipped: no GPU";
    const Sphere s("ico:3");
    const double k = 4.0;
    batchsolve::DeviceGroup group(batchsolve::Backend::cuda, batchsolve::DeviceGroup::parse_devices("all", batchsolve::Backend::cuda));
    const Matrix p0 = assemble_p0_single_layer_gpu(s.g, k, {}, nullptr);
    for (int tile : {128, 100}) {
        batchsolve::TiledMatrix<cd> a(group, int(p0.n), int(p0.n), tile);
        assemble_distributed(Formulation::soft_p0, s.mesh, s.g, k, {}, a, group);
        const std::vector<cd> full = a.gather();
        double diff = 0;
        for (std::size_t e = 0; e < full.size(); ++e) diff = std::max(diff, std::abs(full[e] - p0.a[e]));
        // The same device code as the one-GPU kernels (p0_regular_value, p0_singular_value): equal to
        // rounding (the CPU/GPU agreement bound of Gpu.AssemblyAgreesWithCpu).
        EXPECT_LT(diff, 1e-13 * max_abs(p0.a)) << "tiles of " << tile;
    }
    const Matrix w = assemble_p1_gpu(s.mesh, s.g, k, P1Operator::hypersingular, {}, nullptr);
    {
        batchsolve::TiledMatrix<cd> a(group, int(w.n), int(w.n), 64);
        assemble_distributed(Formulation::hard_p1, s.mesh, s.g, k, {}, a, group);
        const std::vector<cd> full = a.gather();
        double diff = 0;
        for (std::size_t e = 0; e < full.size(); ++e) diff = std::max(diff, std::abs(full[e] - w.a[e]));
        EXPECT_LT(diff, 1e-12 * max_abs(w.a));  // atomics in another order (P1ColumnsEqualOneDeviceToRounding)
    }
    Incident inc;
    const std::vector<cd> b = right_hand_side(Formulation::soft_p0, s.mesh, s.g, inc, k);
    const SolveResult one = solve(SolveMethod::cpu_lu, p0, b);
    const DistributedResult d = solve_distributed(Formulation::soft_p0, s.mesh, s.g, k, b, group, 256);
    EXPECT_LT(d.scaled_residual, 1e-14) << d.engine;
    const double bound = 10.0 / one.rcond * double(p0.n) * (d.scaled_residual + one.scaled_residual) + 4 * eps;
    double diff = 0;
    for (std::size_t i = 0; i < b.size(); ++i) diff = std::max(diff, std::abs(d.x[i] - one.x[i]));
    EXPECT_LE(diff / max_abs(one.x), bound) << d.engine;
}
