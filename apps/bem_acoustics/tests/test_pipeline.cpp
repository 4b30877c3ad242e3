// The device-resident pipeline (pipeline.hpp) on the host device, which runs the same logic as the
// CUDA one in host memory, and the Burton-Miller formulations (CTest apps.bem_acoustics.Pipeline.*,
// apps.bem_acoustics.BurtonMiller.*).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <complex>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

#include "app.hpp"
#include "pipeline.hpp"

namespace bem {
namespace {

struct Sphere {
    Mesh mesh;
    Geometry g;
    explicit Sphere(const std::string& spec) : mesh(load_mesh(spec, 1.0)), g(make_geometry(mesh)) {}
};

double max_abs_diff(const std::vector<cd>& a, const std::vector<cd>& b) {
    double d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
    return d;
}
double max_abs(const std::vector<cd>& a) {
    double d = 0;
    for (const cd& v : a) d = std::max(d, std::abs(v));
    return d;
}

constexpr double u = 0x1p-53;

// The lower-triangle product of the LDL^T's residual check equals the full product on a symmetric
// matrix, to rounding (n u |A| |x|).
TEST(Pipeline, LowerSymmetricMatvecEqualsFullProduct) {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> z;
    for (std::size_t n : {1u, 2u, 33u, 70u}) {
        std::vector<cd> a(n * n), x(n), y1(n), y2(n);
        std::vector<double> r1(n), r2(n);
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t i = j; i < n; ++i) a[i + j * n] = a[j + i * n] = cd(z(rng), z(rng));
        for (cd& v : x) v = cd(z(rng), z(rng));
        full_matvec(n, a.data(), x.data(), y1.data(), r1.data());
        // The strict upper triangle poisoned: the lower-triangle product must not read it.
        for (std::size_t j = 1; j < n; ++j)
            for (std::size_t i = 0; i < j; ++i) a[i + j * n] = cd(NAN, NAN);
        lower_symmetric_matvec(n, a.data(), x.data(), y2.data(), r2.data());
        double rmax = 0, xmax = max_abs(x);
        for (double v : r1) rmax = std::max(rmax, v);
        EXPECT_LE(max_abs_diff(y1, y2), 4 * double(n) * u * rmax * xmax) << "n = " << n;
        for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(r1[i], r2[i], 4 * double(n) * u * rmax) << "n = " << n << ", row " << i;
    }
}

// The pipeline with LU on the host device gives the host path's solution, makes no host matrix, and
// its residual from the device parts is the host path's (both at rounding level).
TEST(Pipeline, HostDeviceLuEqualsHostPathWithoutAHostMatrix) {
    const Sphere s("ico:2");
    const double k = 2;
    const std::vector<cd> b = right_hand_side(Formulation::soft_p0, s.mesh, s.g, Incident{}, k);
    const SolveResult host = solve(SolveMethod::cpu_lu, assemble(Formulation::soft_p0, s.mesh, s.g, k), b, false);
    auto device = make_host_resident_device();
    const std::uint64_t before = host_matrix_bytes_allocated();
    const ResidentRun run = run_resident(*device, Formulation::soft_p0, false, SolveMethod::cpu_lu, s.mesh, s.g, k, b, nullptr);
    EXPECT_EQ(host_matrix_bytes_allocated(), before) << "the resident path made an n x n host matrix";
    EXPECT_LE(max_abs_diff(run.solve.x, host.x), 1e-12 * max_abs(host.x));
    EXPECT_LT(run.solve.scaled_residual, 10 * double(b.size()) * u);
    EXPECT_GT(run.residual_reassembly_s, 0) << "LU overwrote A: the residual needs it assembled again";
    EXPECT_EQ(run.plan.matrix, std::uint64_t(b.size()) * b.size() * 16);
}

// cpu-ldlt reads the lower triangle only (the host device poisons the upper one with NaN, as the GPU
// assembly leaves it), and the residual is computed from the same, untouched A.
TEST(Pipeline, LdltReadsTheLowerTriangleOnly) {
    for (Formulation f : {Formulation::soft_p0, Formulation::hard_p1}) {
        const Sphere s("ico:2");
        const double k = f == Formulation::soft_p0 ? 2.0 : 2.5;
        const std::vector<cd> b = right_hand_side(f, s.mesh, s.g, Incident{}, k);
        const SolveResult lu = solve(SolveMethod::cpu_lu, assemble(f, s.mesh, s.g, k), b);
        auto device = make_host_resident_device();
        const ResidentRun run = run_resident(*device, f, false, SolveMethod::cpu_ldlt, s.mesh, s.g, k, b, nullptr);
        EXPECT_EQ(run.residual_reassembly_s, 0) << "sysv_mixed leaves A intact";
        EXPECT_LT(run.solve.scaled_residual, 10 * double(b.size()) * u) << to_string(f);
        // Forward error bound of two backward-stable solves: cond_1 x (their scaled residuals) x n.
        const double bound = 10 * double(b.size()) / lu.rcond * (run.solve.scaled_residual + lu.scaled_residual) + 1e-13;
        EXPECT_LE(max_abs_diff(run.solve.x, lu.x) / max_abs(lu.x), bound) << to_string(f);
    }
}

// --write-matrix is the one n x n host buffer: exactly one, and it is the whole (mirrored) matrix.
TEST(Pipeline, WriteMatrixCopiesTheMatrixOutInBlocks) {
    const Sphere s("ico:2");
    const double k = 2.5;
    const std::vector<cd> b = right_hand_side(Formulation::hard_p1, s.mesh, s.g, Incident{}, k);
    const Matrix reference = assemble(Formulation::hard_p1, s.mesh, s.g, k);
    auto device = make_host_resident_device();
    const std::uint64_t before = host_matrix_bytes_allocated();
    int calls = 0;
    double diff = 0, scale = 0;
    run_resident(*device, Formulation::hard_p1, false, SolveMethod::cpu_ldlt, s.mesh, s.g, k, b, [&](const Matrix& m) {
        ++calls;
        ASSERT_EQ(m.n, reference.n);
        for (std::size_t e = 0; e < m.a.size(); ++e) {
            diff = std::max(diff, std::abs(m.a[e] - reference.a[e]));
            scale = std::max(scale, std::abs(reference.a[e]));
        }
    });
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(host_matrix_bytes_allocated() - before, std::uint64_t(reference.n) * reference.n * 16);
    EXPECT_LE(diff, 1e-13 * scale);  // P1: contributions added in another order
}

// A system that does not fit is refused before any work, naming the sizes and the way out.
TEST(Pipeline, RefusesASystemThatDoesNotFitNamingTheSizes) {
    const Sphere s("ico:2");  // n = 320: a 1.6 MB matrix
    const std::vector<cd> b = right_hand_side(Formulation::soft_p0, s.mesh, s.g, Incident{}, 2.0);
    auto device = make_host_resident_device(1u << 20);
    try {
        run_resident(*device, Formulation::soft_p0, false, SolveMethod::cpu_lu, s.mesh, s.g, 2.0, b, nullptr);
        FAIL() << "a 1.6 MB matrix on a 1 MiB device was accepted";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        for (const char* part : {"order 320", "needs A 1.6 MiB", "+ solver", "+ residual", "+ geometry", "which has 1.0 MiB free", "--devices"})
            EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' missing in: " << what;
    }
    EXPECT_EQ(device->used_bytes(), 0u) << "nothing may be allocated before the plan is checked";
}

// bem solve through the host device writes the same far field as the host path.
TEST(Pipeline, SolveThroughTheHostDeviceWritesTheHostPathsFarField) {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("bem_pipeline_" + std::to_string(::getpid()));
    SolveOptions o;
    o.mesh = "ico:2";
    o.wavenumbers = {2.0};
    o.angles = 24;
    o.force = true;
    o.output_dir = (root / "host").string();
    ASSERT_EQ(run_solve(o), 0);
    o.output_dir = (root / "resident").string();
    o.emulate_device_on_host = true;
    o.solver = SolveMethod::cpu_ldlt;
    ASSERT_EQ(run_solve(o), 0);
    auto read = [](const fs::path& p) {
        std::ifstream in(p);
        std::string line;
        std::getline(in, line);  // header
        std::vector<cd> v;
        while (std::getline(in, line)) {
            std::stringstream ss(line);
            std::string cell;
            std::vector<double> cells;
            while (std::getline(ss, cell, ',')) cells.push_back(std::stod(cell));
            v.emplace_back(cells.at(1), cells.at(2));
        }
        return v;
    };
    const std::vector<cd> a = read(root / "host" / "far_field_f0.csv"), c = read(root / "resident" / "far_field_f0.csv");
    ASSERT_EQ(a.size(), 24u);
    ASSERT_EQ(c.size(), a.size());
    EXPECT_LE(max_abs_diff(a, c), 1e-9 * max_abs(a));
    fs::remove_all(root);
}

double far_field_error(Formulation f, const Sphere& s, double k, const std::vector<cd>& x);

// On a GPU (skipped here): the CUDA device's pipeline against the host path, for the lower-only
// assembly (P0 without the mirror, P1 with half the atomics) read by gpu-ldlt and the full one of
// gpu-lu; the matrix it copies out for --write-matrix against the CPU assembly.
TEST(Pipeline, CudaDeviceMatchesTheHostPath) {
    if (!gpu_available()) GTEST_SKIP() << "skipped: no GPU";
    const Sphere s("ico:3");
    auto device = make_cuda_resident_device();
    for (Formulation f : {Formulation::soft_p0, Formulation::soft_p1, Formulation::hard_p1}) {
        const double k = f == Formulation::hard_p1 ? 2.5 : 2.0;
        const std::vector<cd> b = right_hand_side(f, s.mesh, s.g, Incident{}, k);
        const Matrix reference = assemble(f, s.mesh, s.g, k);
        const SolveResult lu = solve(SolveMethod::cpu_lu, reference, b);
        for (SolveMethod m : {SolveMethod::gpu_ldlt, SolveMethod::gpu_lu}) {
            const std::uint64_t before = host_matrix_bytes_allocated();
            double diff = 0, scale = 0;
            const ResidentRun run = run_resident(*device, f, false, m, s.mesh, s.g, k, b, [&](const Matrix& host) {
                for (std::size_t e = 0; e < host.a.size(); ++e) {
                    diff = std::max(diff, std::abs(host.a[e] - reference.a[e]));
                    scale = std::max(scale, std::abs(reference.a[e]));
                }
            });
            EXPECT_EQ(host_matrix_bytes_allocated() - before, std::uint64_t(b.size()) * b.size() * 16) << "only --write-matrix's copy";
            EXPECT_LE(diff, 1e-12 * scale) << to_string(f) << " " << to_string(m);
            EXPECT_LT(run.solve.scaled_residual, 10 * double(b.size()) * u) << to_string(f) << " " << to_string(m);
            const double bound = 10 * double(b.size()) / lu.rcond * (run.solve.scaled_residual + lu.scaled_residual) + 1e-13;
            EXPECT_LE(max_abs_diff(run.solve.x, lu.x) / max_abs(lu.x), bound) << to_string(f) << " " << to_string(m);
            EXPECT_GT(run.peak_device_bytes, run.plan.matrix);
        }
    }
    // Burton-Miller assembled on the GPU, solved by cuSOLVER LU, against the CPU matrix.
    for (Formulation f : {Formulation::soft_p0, Formulation::hard_p1}) {
        const double k = f == Formulation::soft_p0 ? M_PI : 2.0816;
        const std::vector<cd> b = right_hand_side_burton_miller(f, s.mesh, s.g, Incident{}, k);
        const Matrix reference = assemble_burton_miller(f, s.mesh, s.g, k);
        double diff = 0, scale = 0;
        const ResidentRun run = run_resident(*device, f, true, SolveMethod::gpu_lu, s.mesh, s.g, k, b, [&](const Matrix& host) {
            for (std::size_t e = 0; e < host.a.size(); ++e) {
                diff = std::max(diff, std::abs(host.a[e] - reference.a[e]));
                scale = std::max(scale, std::abs(reference.a[e]));
            }
        });
        EXPECT_LE(diff, 1e-12 * scale) << to_string(f);
        EXPECT_LT(run.solve.scaled_residual, 10 * double(b.size()) * u) << to_string(f);
        EXPECT_LT(far_field_error(f, s, k, run.solve.x), 0.01) << to_string(f);
    }
}

// ---- Burton-Miller ------------------------------------------------------------------------------------

double far_field_error(Formulation f, const Sphere& s, double k, const std::vector<cd>& x) {
    FarFieldTable t = far_field_directions({1, 0, 0}, 181, false);
    t.values = far_field(f, s.mesh, s.g, x, k, t.directions);
    for (double deg : t.angles_deg) t.reference.push_back(mie_far_field(f == Formulation::hard_p1, k, 1.0, deg * M_PI / 180));
    return relative_l2_error(t.values, t.reference);
}

double surface_error(Formulation f, const Sphere& s, double k, const std::vector<cd>& x) {
    return mie_surface_error(f, s.mesh, s.g, x, k, 1.0, {1, 0, 0});
}

struct Compared {
    double far_plain, far_bm, surface_plain, surface_bm, rcond_plain, rcond_bm;
};
Compared compare_at(Formulation f, const Sphere& s, double k) {
    const SolveResult plain = solve(SolveMethod::cpu_lu, assemble(f, s.mesh, s.g, k), right_hand_side(f, s.mesh, s.g, Incident{}, k));
    const SolveResult bm =
        solve(SolveMethod::cpu_lu, assemble_burton_miller(f, s.mesh, s.g, k), right_hand_side_burton_miller(f, s.mesh, s.g, Incident{}, k));
    Compared c{far_field_error(f, s, k, plain.x), far_field_error(f, s, k, bm.x), surface_error(f, s, k, plain.x), surface_error(f, s, k, bm.x),
               plain.rcond, bm.rcond};
    std::printf("%s k = %.6g: far field %.3e (single operator) %.3e (Burton-Miller); surface %.3e / %.3e; rcond %.2e / %.2e\n", to_string(f), k,
                c.far_plain, c.far_bm, c.surface_plain, c.surface_bm, c.rcond_plain, c.rcond_bm);
    return c;
}

// The sound-soft sphere at its first interior Dirichlet eigenvalue: ka = pi (the first zero of j_0),
// and k = 3.1505, where this polyhedron's own eigenvalue lies (LAPACK's condition estimate of V peaks
// there: 1.8e-4 at 3.15, 5.4e-5 at 3.1505, 7.7e-5 at 3.151). V phi = -u_inc is then nearly singular:
// its null vector, the non-radiating density of the interior mode, pollutes phi (the far field stays
// good, the mode does not radiate). Burton-Miller's condition stays put and phi with it.
TEST(BurtonMiller, SoundSoftAtTheFirstDirichletEigenvalue) {
    const Sphere s("ico:3");
    const Compared at_pi = compare_at(Formulation::soft_p0, s, M_PI);
    EXPECT_LT(at_pi.far_bm, 0.01);
    EXPECT_LT(at_pi.surface_bm, 0.01);
    const Compared at_mesh = compare_at(Formulation::soft_p0, s, 3.1505);
    EXPECT_LT(at_mesh.far_bm, 0.01);
    EXPECT_LT(at_mesh.surface_bm, 0.01);
    EXPECT_GT(at_mesh.surface_plain, 5 * at_mesh.surface_bm) << "the single-layer density no longer fails at the eigenvalue";
    EXPECT_GT(at_mesh.rcond_bm, 100 * at_mesh.rcond_plain);
    EXPECT_GT(at_mesh.rcond_bm, 0.5 * at_pi.rcond_bm) << "Burton-Miller's condition must not depend on the eigenvalue";
}

// Away from resonances Burton-Miller gives the single-operator equation's far field (same unknowns,
// same discretisation error).
TEST(BurtonMiller, AgreesWithTheSingleOperatorEquationAwayFromResonances) {
    const Sphere s("ico:2");
    for (Formulation f : {Formulation::soft_p0, Formulation::hard_p1}) {
        const double k = 2.5;  // no interior eigenvalue of the unit sphere within 0.4 (README table)
        const SolveResult plain = solve(SolveMethod::cpu_lu, assemble(f, s.mesh, s.g, k), right_hand_side(f, s.mesh, s.g, Incident{}, k), false);
        const SolveResult bm = solve(SolveMethod::cpu_lu, assemble_burton_miller(f, s.mesh, s.g, k),
                                     right_hand_side_burton_miller(f, s.mesh, s.g, Incident{}, k), false);
        const double e_plain = far_field_error(f, s, k, plain.x), e_bm = far_field_error(f, s, k, bm.x);
        EXPECT_LT(e_bm, 1.3 * e_plain) << to_string(f) << ": BM " << e_bm << ", single operator " << e_plain;
        EXPECT_LT(e_bm, 0.06) << to_string(f);
    }
}

TEST(BurtonMiller, NotForSoftP1NorTheSymmetricSolvers) {
    bool bm = false;
    EXPECT_THROW(parse_formulation("soft-p1-bm", bm), std::invalid_argument);
    EXPECT_EQ(parse_formulation("hard-p1-bm", bm), Formulation::hard_p1);
    EXPECT_TRUE(bm);
    EXPECT_EQ(parse_formulation("soft-p0", bm), Formulation::soft_p0);
    EXPECT_FALSE(bm);
    SolveOptions o;
    o.mesh = "ico:1";
    o.wavenumbers = {2.0};
    o.output_dir = (std::filesystem::temp_directory_path() / "bem_bm_refused").string();
    o.force = true;
    o.burton_miller = true;
    o.solver = SolveMethod::cpu_ldlt;
    EXPECT_THROW(run_solve(o), std::invalid_argument);
}

}  // namespace
}  // namespace bem
