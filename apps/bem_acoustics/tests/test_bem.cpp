// Tests of the BEM application on the CPU (and the GPU where present): mesh readers and checks,
// quadrature rules, the spherical functions, symmetric assembly, sphere scattering against the Mie
// series (sound-soft P0/P1, sound-hard P1), solvers, output files, CPU/GPU agreement.
#include <gtest/gtest.h>

#include <batchsolve_io/hdf5.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "app.hpp"

using namespace bem;
namespace fs = std::filesystem;

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();

fs::path temp_dir() {
    const fs::path dir = fs::temp_directory_path() / ("bem_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir;
}

std::string expect_mesh_error(Mesh mesh) {
    try {
        check_surface(mesh);
    } catch (const MeshError& e) {
        return e.what();
    }
    ADD_FAILURE() << "check_surface accepted a broken mesh";
    return "";
}

void write_binary_ply(const Mesh& m, const std::string& path, bool big_endian) {
    std::ofstream out(path, std::ios::binary);
    out << "ply\nformat " << (big_endian ? "binary_big_endian" : "binary_little_endian") << " 1.0\nelement vertex " << m.vertex_count()
        << "\nproperty float x\nproperty float y\nproperty float z\nelement face " << m.triangle_count()
        << "\nproperty list uchar uint vertex_indices\nend_header\n";
    auto put = [&](const void* p, std::size_t n) {
        char buf[8];
        std::memcpy(buf, p, n);
        if (big_endian) std::reverse(buf, buf + n);
        out.write(buf, std::streamsize(n));
    };
    for (const auto& v : m.vertices)
        for (double c : v) {
            const float f = float(c);
            put(&f, 4);
        }
    for (const auto& t : m.triangles) {
        const unsigned char three = 3;
        out.write(reinterpret_cast<const char*>(&three), 1);
        for (auto idx : t) {
            const std::uint32_t u = std::uint32_t(idx);
            put(&u, 4);
        }
    }
}

void write_stl(const Mesh& m, const std::string& path, bool binary) {
    std::ofstream out(path, std::ios::binary);
    if (binary) {
        char header[80] = "binary stl written by test_bem";
        out.write(header, 80);
        const std::uint32_t count = std::uint32_t(m.triangle_count());
        out.write(reinterpret_cast<const char*>(&count), 4);
        for (const auto& t : m.triangles) {
            float rec[12] = {0, 0, 0};
            for (int v = 0; v < 3; ++v)
                for (int c = 0; c < 3; ++c) rec[3 + 3 * v + c] = float(m.vertices[t[v]][c]);
            out.write(reinterpret_cast<const char*>(rec), 48);
            const std::uint16_t attr = 0;
            out.write(reinterpret_cast<const char*>(&attr), 2);
        }
    } else {
        out << "solid test\n";
        out.precision(17);
        for (const auto& t : m.triangles) {
            out << " facet normal 0 0 0\n  outer loop\n";
            for (int v = 0; v < 3; ++v) out << "   vertex " << m.vertices[t[v]][0] << ' ' << m.vertices[t[v]][1] << ' ' << m.vertices[t[v]][2] << '\n';
            out << "  endloop\n endfacet\n";
        }
        out << "endsolid test\n";
    }
}

double max_asymmetry(const Matrix& a) {
    double asym = 0, scale = 0;
    for (std::size_t j = 0; j < a.n; ++j)
        for (std::size_t i = 0; i < a.n; ++i) {
            asym = std::max(asym, std::abs(a(i, j) - a(j, i)));
            scale = std::max(scale, std::abs(a(i, j)));
        }
    return asym / scale;
}

}  // namespace

// ---- meshes -------------------------------------------------------------------------------------

TEST(Mesh, RefinedSpheresAreClosedWithExpectedCounts) {
    for (int level = 0; level <= 3; ++level) {
        Mesh ico = make_refined_sphere(level);
        EXPECT_EQ(ico.triangle_count(), 20u << (2 * level));
        EXPECT_NO_THROW(check_surface(ico));
        Mesh octa = make_refined_sphere(level, 1.0, SphereBase::octahedron);
        EXPECT_EQ(octa.triangle_count(), 8u << (2 * level));
        const SurfaceReport r = check_surface(octa);
        EXPECT_FALSE(r.flipped_to_outward);
        // Vertices on the unit sphere, each refinement's new vertices pushed out onto it: the
        // polyhedron contains the octahedron (volume 4/3) and lies inside the ball (4 pi / 3).
        const double volume = mesh_stats(octa).volume;
        if (level == 0) EXPECT_NEAR(volume, 4.0 / 3.0, 1e-12);
        else EXPECT_GT(volume, 4.0 / 3.0) << "level " << level;
        EXPECT_LT(volume, 4.0 * M_PI / 3.0) << "level " << level;
    }
    EXPECT_EQ(make_refined_sphere(5, 1.0, SphereBase::octahedron).triangle_count(), 8192u);  // bempp-cl's regular_sphere(5)
}

TEST(Mesh, GmshSphereIsClosed) {
    Mesh m = make_gmsh_sphere(0.3);
    EXPECT_NO_THROW(check_surface(m));
    EXPECT_GT(m.triangle_count(), 100u);
    EXPECT_NEAR(mesh_stats(m).area, 4 * M_PI, 0.1 * 4 * M_PI);
}

TEST(Mesh, BrokenSurfacesNameTheFirstOffendingElement) {
    const Mesh good = make_refined_sphere(1);
    Mesh open = good;
    open.triangles.erase(open.triangles.begin() + 7);
    EXPECT_NE(expect_mesh_error(open).find("open surface"), std::string::npos);

    Mesh duplicate = good;
    duplicate.triangles.push_back({good.triangles[3][1], good.triangles[3][2], good.triangles[3][0]});
    const std::string dup = expect_mesh_error(duplicate);
    EXPECT_NE(dup.find("triangle 80"), std::string::npos) << dup;
    EXPECT_NE(dup.find("duplicate of triangle 3"), std::string::npos) << dup;

    Mesh flipped = good;
    std::swap(flipped.triangles[5][1], flipped.triangles[5][2]);
    EXPECT_NE(expect_mesh_error(flipped).find("inconsistent orientation"), std::string::npos);

    Mesh degenerate = good;
    degenerate.triangles[9][2] = degenerate.triangles[9][1];
    const std::string deg = expect_mesh_error(degenerate);
    EXPECT_NE(deg.find("triangle 9"), std::string::npos) << deg;
    EXPECT_NE(deg.find("degenerate"), std::string::npos) << deg;

    Mesh collinear;
    collinear.source = "collinear";
    collinear.vertices = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
    collinear.triangles = {{0, 1, 2}};
    EXPECT_NE(expect_mesh_error(collinear).find("zero area"), std::string::npos);
}

TEST(Mesh, InwardMeshIsReversed) {
    Mesh m = make_refined_sphere(1);
    for (auto& t : m.triangles) std::swap(t[1], t[2]);
    const SurfaceReport r = check_surface(m);
    EXPECT_TRUE(r.flipped_to_outward);
    // Reversed back: the same enclosed volume as the mesh that was never reversed.
    EXPECT_NEAR(mesh_stats(m).volume, mesh_stats(make_refined_sphere(1)).volume, 1e-12);
}

TEST(Mesh, PlyAsciiAndBinaryBothEndiannessesRoundTrip) {
    const fs::path dir = temp_dir();
    Mesh m = make_refined_sphere(2);
    write_ply_ascii(m, (dir / "a.ply").string());
    write_binary_ply(m, (dir / "le.ply").string(), false);
    write_binary_ply(m, (dir / "be.ply").string(), true);
    for (const char* name : {"a.ply", "le.ply", "be.ply"}) {
        Mesh r = read_mesh((dir / name).string(), 1e-3);
        ASSERT_EQ(r.triangle_count(), m.triangle_count()) << name;
        ASSERT_EQ(r.vertex_count(), m.vertex_count()) << name;
        EXPECT_NEAR(r.vertices[5][1], 1e-3 * m.vertices[5][1], 1e-9) << name;
        EXPECT_NO_THROW(check_surface(r)) << name;
    }
}

TEST(Mesh, MalformedPlyIsReportedWithFileAndPlace) {
    const fs::path dir = temp_dir();
    Mesh m = make_refined_sphere(1);
    write_binary_ply(m, (dir / "t.ply").string(), false);
    fs::resize_file(dir / "t.ply", fs::file_size(dir / "t.ply") - 7);
    try {
        read_ply((dir / "t.ply").string());
        FAIL() << "truncated PLY accepted";
    } catch (const MeshError& e) {
        EXPECT_NE(std::string(e.what()).find("t.ply: face 79: file ends early"), std::string::npos) << e.what();
    }
    std::ofstream(dir / "h.ply") << "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nend_header\n0 0\n";
    EXPECT_THROW(read_ply((dir / "h.ply").string()), MeshError);
    std::ofstream(dir / "i.ply") << "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
                                    "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n";
    try {
        read_ply((dir / "i.ply").string());
        FAIL() << "out-of-range index accepted";
    } catch (const MeshError& e) {
        EXPECT_NE(std::string(e.what()).find("face 0: vertex index 7 outside 0..2"), std::string::npos) << e.what();
    }
    std::ofstream(dir / "c.ply") << "ply\nformat binary_little_endian 1.0\nelement vertex 99999999999\nproperty float x\nend_header\n";
    EXPECT_THROW(read_ply((dir / "c.ply").string()), MeshError);  // count beyond the file: refused before allocating
}

TEST(Mesh, StlBinaryAndAsciiAreWelded) {
    const fs::path dir = temp_dir();
    Mesh m = make_refined_sphere(2);
    write_stl(m, (dir / "b.stl").string(), true);
    write_stl(m, (dir / "a.stl").string(), false);
    for (const char* name : {"b.stl", "a.stl"}) {
        Mesh r = read_mesh((dir / name).string());
        EXPECT_EQ(r.triangle_count(), m.triangle_count()) << name;
        EXPECT_EQ(r.vertex_count(), m.vertex_count()) << name;
        EXPECT_NO_THROW(check_surface(r)) << name;
    }
    std::ofstream(dir / "bad.stl") << "solid x\n facet normal 0 0 0\n outer loop\n vertex 0 0 0\n vertex 1 0 0\n endloop\n";
    EXPECT_THROW(read_stl((dir / "bad.stl").string()), MeshError);
}

TEST(Mesh, GmshMshFileIsReadThroughTheSdk) {
    const fs::path dir = temp_dir();
    // An octahedron in MSH 2.2 ASCII.
    std::ofstream(dir / "o.msh") << "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n6\n1 1 0 0\n2 -1 0 0\n3 0 1 0\n4 0 -1 0\n5 0 0 1\n6 0 0 -1\n$EndNodes\n"
                                    "$Elements\n8\n1 2 2 1 1 1 3 5\n2 2 2 1 1 3 2 5\n3 2 2 1 1 2 4 5\n4 2 2 1 1 4 1 5\n"
                                    "5 2 2 1 1 3 1 6\n6 2 2 1 1 2 3 6\n7 2 2 1 1 4 2 6\n8 2 2 1 1 1 4 6\n$EndElements\n";
    Mesh m = read_mesh((dir / "o.msh").string());
    EXPECT_EQ(m.triangle_count(), 8u);
    EXPECT_EQ(m.vertex_count(), 6u);
    EXPECT_NO_THROW(check_surface(m));
    std::ofstream(dir / "x.msh") << "not a mesh\n";
    EXPECT_THROW(read_msh((dir / "x.msh").string()), MeshError);
    // Gmsh's own diagnosis comes through: an element naming a node that does not exist.
    std::ifstream in(dir / "o.msh");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.replace(text.find("8 2 2 1 1 1 4 6"), 15, "8 2 2 1 1 1 4 60");
    std::ofstream(dir / "bad.msh") << text;
    try {
        read_msh((dir / "bad.msh").string());
        FAIL() << "a missing node was accepted";
    } catch (const MeshError& e) {
        EXPECT_NE(std::string(e.what()).find("bad.msh: gmsh: Wrong node index 60"), std::string::npos) << e.what();
    }
}

// Gmsh 4.8 itself segfaults on this mutated file (found by fuzzing the seed corpus); read_msh runs
// Gmsh in a child process, so the crash becomes a one-line error.
TEST(Mesh, GmshCrashIsAnErrorNotACrash) {
    const std::string path = std::string(BEM_SOURCE_DIR) + "/fuzz/corpus/msh/gmsh_segfault.msh";
    try {
        read_msh(path);
        FAIL() << "a file that crashes Gmsh was accepted";
    } catch (const MeshError& e) {
        EXPECT_NE(std::string(e.what()).find("gmsh: the Gmsh reader crashed"), std::string::npos) << e.what();
    }
}

TEST(Mesh, HeadMeshFromSharedData) {
    const std::string path = std::string(BEM_SHARED_DATA) + "/meshes/mesh2hrtf_head_16kHz.ply";
    if (!fs::exists(path)) GTEST_SKIP() << "skipped: " << path << " absent";
    Mesh m = read_mesh(path, 1e-3);
    EXPECT_EQ(m.triangle_count(), 17432u);
    EXPECT_NO_THROW(check_surface(m));
    EXPECT_NEAR(mesh_stats(m).mean_edge, 4.6e-3, 1e-3);
}

// ---- quadrature and special functions ---------------------------------------------------------

TEST(Quadrature, GaussLegendreIsExact) {
    std::vector<double> x, w;
    gauss_legendre_01(5, x, w);
    for (int p = 0; p <= 9; ++p) {
        double s = 0;
        for (int i = 0; i < 5; ++i) s += w[i] * std::pow(x[i], p);
        EXPECT_NEAR(s, 1.0 / (p + 1), 20 * eps) << "degree " << p;
    }
}

TEST(Quadrature, TriangleRulesIntegrateDegreeFour) {
    for (const auto& rule : {triangle_rule_regular(), triangle_rule_near()}) {
        // int over {0 <= x2 <= x1 <= 1} of x1^2 x2^2 = int x1^5 / 3 = 1/18
        double s = 0, area = 0;
        for (std::size_t q = 0; q < rule.size(); q += 3) {
            s += rule[q + 2] * rule[q] * rule[q] * rule[q + 1] * rule[q + 1];
            area += rule[q + 2];
        }
        EXPECT_NEAR(area, 0.5, 1e-14);
        EXPECT_NEAR(s, 1.0 / 18, 1e-12);
    }
}

// The Sauter–Schwab rules of all three cases, checked together: for the homogeneous 1/r kernel the
// coincident integral over a triangle equals the sum over the 16 ordered pairs of its 4 midpoint
// subtriangles (4 coincident, 6 edge-adjacent, 6 vertex-adjacent), each by its own rule.
TEST(Quadrature, SauterSchwabRulesAreSelfConsistentUnderSubdivision) {
    const SingularRules rules = make_singular_rules(6);
    for (const auto* r : {&rules.coincident, &rules.edge, &rules.vertex}) {
        double w = 0;
        for (std::size_t q = 4; q < r->size(); q += 5) w += (*r)[q];
        EXPECT_NEAR(w, 0.25, 1e-13);
    }
    Mesh big;
    big.source = "triangle";
    big.vertices = {{0, 0, 0}, {1, 0, 0}, {0.3, 0.8, 0}, {0.5, 0, 0}, {0.65, 0.4, 0}, {0.15, 0.4, 0}};
    big.triangles = {{0, 1, 2}};
    Mesh sub = big;
    sub.triangles = {{0, 3, 5}, {3, 1, 4}, {5, 4, 2}, {3, 4, 5}};
    const QuadratureOptions q{6, 2.0};
    const double k = 1e-9;  // the static kernel: G -> 1 / (4 pi r)
    const Geometry gb = make_geometry(big), gs = make_geometry(sub);
    const cd whole = p0_single_layer_entry(gb, rules, 0, 0, k, q);
    cd parts = 0;
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j) parts += p0_single_layer_entry(gs, rules, std::max(i, j), std::min(i, j), k, q);
    EXPECT_NEAR(parts.real() / whole.real(), 1.0, 2e-5) << whole << " vs " << parts;
}

TEST(Mie, SphericalBesselMatchesClosedForms) {
    for (double x : {0.3, 1.0, 4.7, 12.0}) {
        std::vector<double> j, y;
        spherical_bessel(6, x, j, y);
        EXPECT_NEAR(j[0], std::sin(x) / x, 1e-14);
        EXPECT_NEAR(j[1], std::sin(x) / (x * x) - std::cos(x) / x, 1e-14);
        EXPECT_NEAR(j[2], (3 / (x * x) - 1) * std::sin(x) / x - 3 * std::cos(x) / (x * x), 1e-13);
        EXPECT_NEAR(y[0], -std::cos(x) / x, 1e-14);
        // Wronskian j_n y_{n-1} - j_{n-1} y_n = 1 / x^2 ties j and y together for every n.
        for (int n = 1; n <= 6; ++n) EXPECT_NEAR((j[n] * y[n - 1] - j[n - 1] * y[n]) * x * x, 1.0, 1e-10) << "n " << n << " x " << x;
    }
    std::vector<double> p;
    legendre(3, 0.4, p);
    EXPECT_NEAR(p[2], 0.5 * (3 * 0.16 - 1), 1e-15);
    EXPECT_NEAR(p[3], 0.5 * (5 * 0.064 - 3 * 0.4), 1e-15);
    // Low-frequency limit of the sound-soft sphere: F -> -a (monopole), independent of angle.
    EXPECT_NEAR(std::abs(mie_far_field(false, 1e-4, 1.0, 0.7) + 1.0), 0.0, 1e-3);
}

TEST(Mie, KnownSphereResonances) {
    const auto soft = sphere_resonances(false, 5.0);
    ASSERT_GE(soft.size(), 2u);
    EXPECT_NEAR(soft[0].first, M_PI, 1e-9);
    EXPECT_NEAR(soft[1].first, 4.493409457909064, 1e-8);
    const auto hard = sphere_resonances(true, 3.0);
    ASSERT_GE(hard.size(), 1u);
    EXPECT_NEAR(hard[0].first, 2.081575977818101, 1e-8);  // first zero of j_1'
}

// ---- assembly and scattering ------------------------------------------------------------------

TEST(Assembly, MatricesAreSymmetricToRounding) {
    Mesh m = make_refined_sphere(1);
    check_surface(m);
    const Geometry g = make_geometry(m);
    EXPECT_LT(max_asymmetry(assemble_p0_single_layer(g, 2.0)), 4 * eps);
    EXPECT_LT(max_asymmetry(assemble_p1(m, g, 2.0, P1Operator::single_layer)), 64 * eps);
    EXPECT_LT(max_asymmetry(assemble_p1(m, g, 2.0, P1Operator::hypersingular)), 64 * eps);
}

TEST(Scattering, SoundSoftP0ConvergesToMie) {
    const double k = 2.0;
    const ValidationRow coarse = validate_sphere(Formulation::soft_p0, "ico:2", k, 181, {}, false);
    const ValidationRow fine = validate_sphere(Formulation::soft_p0, "ico:3", k, 181, {}, false);
    EXPECT_LT(fine.far_field_error, 0.6 * coarse.far_field_error) << coarse.far_field_error << " -> " << fine.far_field_error;
    EXPECT_LT(fine.far_field_error, 1e-2);
    EXPECT_LT(fine.scaled_residual, 10 * fine.unknowns * eps);
}

TEST(Scattering, SoundSoftP1MatchesMie) {
    // Measured 2.3e-2 at 10.5 elements per wavelength (ico:2), 5.9e-3 at ico:3: O(h^2) like P0.
    const ValidationRow r = validate_sphere(Formulation::soft_p1, "ico:2", 2.0, 181, {}, false);
    EXPECT_LT(r.far_field_error, 3e-2);
}

TEST(Scattering, SoundHardP1MatchesMieWithinOnePercent) {
    const ValidationRow r = validate_sphere(Formulation::hard_p1, "ico:3", 2.5, 181, {}, false);
    EXPECT_LT(r.far_field_error, 1e-2);
    EXPECT_LT(r.scaled_residual, 10 * r.unknowns * eps);
}

// A point source inside a closed scatterer: outside, the unique radiating solution is u_s = -u_inc
// whatever the boundary condition, which checks the point source, both formulations and the
// near-field potentials at once.
TEST(Scattering, InteriorPointSourceIsCancelledOutside) {
    const double k = 1.5;  // below the first soft (pi) and hard (2.08) interior resonances
    Mesh m = make_refined_sphere(2);
    check_surface(m);
    const Geometry g = make_geometry(m);
    Incident inc;
    inc.point_source = true;
    inc.source = {0.1, 0.2, -0.15};
    const std::vector<std::array<double, 3>> points = {{2, 0, 0}, {0, -3, 1}, {1.5, 1.5, 1.5}};
    for (Formulation f : {Formulation::soft_p0, Formulation::hard_p1}) {
        const Matrix a = assemble(f, m, g, k);
        const SolveResult r = solve(SolveMethod::cpu_lu, a, right_hand_side(f, m, g, inc, k));
        const std::vector<cd> us = scattered_field(f, m, g, r.x, k, points);
        for (std::size_t p = 0; p < points.size(); ++p) {
            const cd expected = -inc.value(points[p].data(), k);
            // Measured 1.7e-4 (soft P0) and 6e-5 (hard P1) on this 320-triangle mesh.
            EXPECT_LT(std::abs(us[p] - expected) / std::abs(expected), 1e-3) << to_string(f) << " at point " << p;
        }
    }
}

TEST(Solver, LuAndBunchKaufmanAgree) {
    Mesh m = make_refined_sphere(2);
    check_surface(m);
    const Geometry g = make_geometry(m);
    const Matrix a = assemble_p0_single_layer(g, 3.0);
    const std::vector<cd> b = right_hand_side(Formulation::soft_p0, m, g, Incident{}, 3.0);
    const SolveResult lu = solve(SolveMethod::cpu_lu, a, b), bk = solve(SolveMethod::cpu_symmetric, a, b);
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        diff = std::max(diff, std::abs(lu.x[i] - bk.x[i]));
        scale = std::max(scale, std::abs(lu.x[i]));
    }
    EXPECT_LT(diff / scale, 1e4 * a.n * eps);  // both backward stable; condition ~1e2
    EXPECT_LT(lu.scaled_residual, 10 * a.n * eps);
    EXPECT_LT(bk.scaled_residual, 10 * a.n * eps);
    // The estimate of 1/cond_1: this matrix's condition is ~1e2 (above), so an rcond outside
    // [1e-4, 1] is a wrong estimate (0 or NaN included), with a factor of 100 to spare.
    EXPECT_GE(lu.rcond, 1e-4);
    EXPECT_LE(lu.rcond, 1.0);
    EXPECT_FALSE(looks_resonant(lu, a.n));
    EXPECT_THROW(solve(SolveMethod::cpu_lu, a, std::vector<cd>(3)), std::invalid_argument);
}

// The library's mixed-precision LDL^T (issue 25) on the CPU backend: the BEM matrix is complex
// symmetric and well conditioned away from resonances, so no-pivot LDL^T in complex single plus
// refinement reaches double accuracy.
TEST(Solver, MixedPrecisionLdltReachesDoubleAccuracy) {
    Mesh m = make_refined_sphere(2);
    check_surface(m);
    const Geometry g = make_geometry(m);
    const Matrix a = assemble_p0_single_layer(g, 3.0);
    const std::vector<cd> b = right_hand_side(Formulation::soft_p0, m, g, Incident{}, 3.0);
    const SolveResult lu = solve(SolveMethod::cpu_lu, a, b), ldlt = solve(SolveMethod::cpu_ldlt, a, b);
    EXPECT_LT(ldlt.scaled_residual, 10 * a.n * eps) << ldlt.path;
    EXPECT_GT(ldlt.iterations, 0) << ldlt.path;
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        diff = std::max(diff, std::abs(lu.x[i] - ldlt.x[i]));
        scale = std::max(scale, std::abs(lu.x[i]));
    }
    EXPECT_LT(diff / scale, 1e4 * a.n * eps) << ldlt.path;
}

TEST(Arguments, BadValuesNameTheOption) {
    auto message = [](auto fn) {
        try {
            fn();
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(message([] { parse_formulation("soft"); }).find("--formulation"), std::string::npos);
    EXPECT_NE(message([] { parse_solve_method("qr"); }).find("--solver"), std::string::npos);
    EXPECT_NE(message([] { parse_plane_grid("plane=ab"); }).find("--grid"), std::string::npos);
    EXPECT_NE(message([] { parse_unit("ft"); }).find("--unit"), std::string::npos);
    EXPECT_NE(message([] { make_sphere_from_spec("ico:x"); }).find("sphere spec"), std::string::npos);
}

// ---- outputs ----------------------------------------------------------------------------------

TEST(Output, SolveWritesEveryResultFile) {
    const fs::path dir = temp_dir() / "solve";
    SolveOptions o;
    o.mesh = "ico:2";
    o.output_dir = dir.string();
    o.wavenumbers = {1.5, 2.0};
    o.mie_radius = 1.0;
    o.grid = "plane=xz,extent=2,n=11";
    o.angles = 36;
    o.force = true;
    o.matrix_path = (dir / "A.h5").string();
    fs::create_directories(dir);
    ASSERT_EQ(run_solve(o), 0);
    for (const char* f : {"surface.h5", "surface_f0.vtu", "surface_f1.vtu", "far_field_f0.csv", "grid_f1.h5", "grid_f1.vtk"})
        EXPECT_TRUE(fs::exists(dir / f)) << f;
    o.force = false;  // a second run must not replace the results silently
    try {
        run_solve(o);
        ADD_FAILURE() << "existing results replaced without --force";
    } catch (const batchsolve::io::FileError& e) {  // the output layer's refusal (exit 3 of bem solve)
        EXPECT_NE(std::string(e.what()).find("exists; pass --force"), std::string::npos) << e.what();
    }
    const auto file = batchsolve::io::h5::File::open((dir / "surface.h5").string());
    EXPECT_EQ(file.read<cd>("/f1/solution").size(), 320u);
    EXPECT_EQ(file.string_attribute("/f1", "formulation"), "soft-p0");
    EXPECT_NEAR(file.double_attribute("/f0", "wavenumber"), 1.5, 0);
    EXPECT_LT(file.double_attribute("/f0", "scaled_residual"), 1e-12);
    const auto matrix = batchsolve::io::h5::File::open((dir / "A.h5").string());
    const auto a = matrix.read_exact<cd>("/A", {320, 320});
    EXPECT_EQ(a[3 + 7 * 320], a[7 + 3 * 320]);
    EXPECT_EQ(matrix.read<cd>("/b").size(), 320u);
    EXPECT_EQ(matrix.string_attribute("/", "symmetry"), "complex_symmetric");
    const auto grid = batchsolve::io::h5::File::open((dir / "grid_f1.h5").string());
    const auto total = grid.read<cd>("/total");
    ASSERT_EQ(total.size(), 121u);
    // Far from the sphere the total field is bounded by a few times the incident amplitude.
    EXPECT_LT(std::abs(total[0]), 3.0);
}

// ---- GPU --------------------------------------------------------------------------------------

TEST(Gpu, AssemblyAgreesWithCpu) {
    if (!gpu_available()) GTEST_SKIP() << "skipped: no GPU";
    Mesh m = make_refined_sphere(3);
    check_surface(m);
    const Geometry g = make_geometry(m);
    const Matrix cpu = assemble_p0_single_layer(g, 4.0);
    GpuAssemblyTiming t;
    const Matrix gpu = assemble_p0_single_layer_gpu(g, 4.0, {}, &t);
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < cpu.a.size(); ++i) {
        diff = std::max(diff, std::abs(cpu.a[i] - gpu.a[i]));
        scale = std::max(scale, std::abs(cpu.a[i]));
    }
    EXPECT_LT(diff / scale, 1e-13);
    EXPECT_LT(max_asymmetry(gpu), 4 * eps);
}

TEST(Gpu, P1AssemblyAgreesWithCpu) {
    if (!gpu_available()) GTEST_SKIP() << "skipped: no GPU";
    Mesh m = make_refined_sphere(2);
    check_surface(m);
    const Geometry g = make_geometry(m);
    for (P1Operator op : {P1Operator::single_layer, P1Operator::hypersingular}) {
        const Matrix cpu = assemble_p1(m, g, 2.5, op);
        const Matrix gpu = assemble_p1_gpu(m, g, 2.5, op, {}, nullptr);
        double diff = 0, scale = 0;
        for (std::size_t i = 0; i < cpu.a.size(); ++i) {
            diff = std::max(diff, std::abs(cpu.a[i] - gpu.a[i]));
            scale = std::max(scale, std::abs(cpu.a[i]));
        }
        // Atomic accumulation sums the element contributions in another order: rounding only.
        EXPECT_LT(diff / scale, 1e-13) << (op == P1Operator::hypersingular ? "W" : "V");
    }
    const ValidationRow row = validate_sphere(Formulation::hard_p1, "ico:3", 2.5, 181, {}, true);
    EXPECT_LT(row.far_field_error, 1e-2);
}

TEST(Gpu, SingleLowerTriangleMatchesDouble) {
    if (!gpu_available()) GTEST_SKIP() << "skipped: no GPU";
    Mesh m = make_refined_sphere(2);
    check_surface(m);
    const Geometry g = make_geometry(m);
    const Matrix z = assemble_p0_single_layer(g, 3.0);
    const std::vector<std::complex<float>> c = assemble_p0_lower_single_gpu(g, 3.0, {}, nullptr);
    double diff = 0, scale = 0;
    for (std::size_t j = 0; j < z.n; ++j)
        for (std::size_t i = 0; i < z.n; ++i) {
            const std::complex<float> v = c[i + j * z.n];
            if (i < j) {
                EXPECT_TRUE(std::isnan(v.real())) << "upper entry (" << i << ", " << j << ") was written";
                continue;
            }
            diff = std::max(diff, std::abs(cd(v) - z(i, j)));
            scale = std::max(scale, std::abs(z(i, j)));
        }
    EXPECT_LT(diff / scale, 4 * std::numeric_limits<float>::epsilon());
}

TEST(Gpu, SolversReachDoubleAccuracy) {
    if (!gpu_available()) GTEST_SKIP() << "skipped: no GPU";
    Mesh m = make_refined_sphere(3);
    check_surface(m);
    const Geometry g = make_geometry(m);
    const Matrix a = assemble_p0_single_layer(g, 4.0);
    const std::vector<cd> b = right_hand_side(Formulation::soft_p0, m, g, Incident{}, 4.0);
    for (SolveMethod s : {SolveMethod::gpu_lu, SolveMethod::gpu_irs_c, SolveMethod::gpu_irs_y, SolveMethod::gpu_ldlt}) {
        const SolveResult r = solve(s, a, b);
        EXPECT_LT(r.scaled_residual, 10 * a.n * eps) << to_string(s) << ": " << r.path;
    }
    const ValidationRow row = validate_sphere(Formulation::soft_p0, "ico:3", 2.0, 181, {}, true);
    EXPECT_LT(row.far_field_error, 1e-2);
}
