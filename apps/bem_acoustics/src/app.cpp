// The subcommands of the bem tool (app.hpp): solve, validate and bench, and mesh loading.
#include "app.hpp"

#include "batchsolve_io/output.hpp"

#include "distributed.hpp"
#include "pipeline.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>

namespace bem {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string utc_now() {
    char buf[32];
    const std::time_t t = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

// A solve is declared a success when its scaled residual ||b - Ax||_inf / (n ||A||_inf ||x||_inf)
// (solver.hpp) is below kResidualFactor * n * u, u = 2^-53. Why that bound: LU with partial
// pivoting gives |b - Ax| <= gamma_3n |L||U| |x| (Higham, Thm 9.4), so with ||(|L||U|)|| = rho ||A||
// the scaled residual is at most about 3 rho u, plus about u from forming b - Ax in double; the
// refined LDL^T stops at a componentwise backward error of order n u. kResidualFactor = 10 (the
// tests' factor) leaves room for a growth rho of up to about 3n, far beyond what these well-
// conditioned BEM matrices show, and still refuses a solve stuck at single accuracy (scaled
// residual ~ 6e-8, against 1.9e-11 at n = 17,432).
constexpr double kResidualFactor = 10;
bool residual_accepted(double scaled_residual, std::size_t n) {
    return scaled_residual < kResidualFactor * double(std::max<std::size_t>(n, 1)) * 0x1p-53;
}

void report_resonance(const SolveResult& r, std::size_t n) {
    if (looks_resonant(r, n))
        std::fprintf(stderr,
                     "warning: condition estimate %.3g exceeds %.0f x n (n = %zu): the wavenumber is probably close to an "
                     "interior resonance of the surface; the solution may be inaccurate (README, 'Interior resonances')\n",
                     1.0 / r.rcond, resonance_condition_per_unknown, n);
}

}  // namespace

bool is_sphere_spec(const std::string& spec) {
    return spec.rfind("ico:", 0) == 0 || spec.rfind("octa:", 0) == 0 || spec.rfind("gmsh:", 0) == 0 || spec.rfind("geo:", 0) == 0;
}

Mesh make_sphere_from_spec(const std::string& spec, double radius) {
    const auto colon = spec.find(':');
    if (colon == std::string::npos || !is_sphere_spec(spec)) throw std::invalid_argument("sphere spec: expected ico:L, octa:L, geo:m or gmsh:h, got '" + spec + "'");
    const std::string kind = spec.substr(0, colon), value = spec.substr(colon + 1);
    try {
        if (kind == "gmsh") return make_gmsh_sphere(std::stod(value), radius);
        std::size_t used = 0;
        const int level = std::stoi(value, &used);
        if (used != value.size()) throw std::invalid_argument("");
        if (kind == "geo") return make_geodesic_sphere(level, radius);
        return make_refined_sphere(level, radius, kind == "ico" ? SphereBase::icosahedron : SphereBase::octahedron);
    } catch (const MeshError&) {
        throw;
    } catch (const std::exception&) {
        throw std::invalid_argument("sphere spec: bad number in '" + spec + "'");
    }
}

Mesh load_mesh(const std::string& spec, double unit_scale) {
    Mesh mesh = is_sphere_spec(spec) ? make_sphere_from_spec(spec, unit_scale) : read_mesh(spec, unit_scale);
    const SurfaceReport report = check_surface(mesh);
    if (report.flipped_to_outward) std::fprintf(stderr, "note: %s: normals pointed inward; all triangles reversed\n", mesh.source.c_str());
    if (report.removed_unused_vertices)
        std::fprintf(stderr, "note: %s: %zu vertices used by no triangle were dropped\n", mesh.source.c_str(), report.removed_unused_vertices);
    return mesh;
}

double warn_resolution(const MeshStats& stats, double k) {
    const double epw = elements_per_wavelength(stats, k);
    if (epw < 6)
        std::fprintf(stderr, "warning: %.1f elements per wavelength at k = %g (mean edge %.3g): under 6, the solution will be inaccurate\n", epw, k,
                     stats.mean_edge);
    return epw;
}

// ---- solve --------------------------------------------------------------------------------------

int run_solve(const SolveOptions& o) {
    Mesh mesh = load_mesh(o.mesh, o.unit_scale);
    // The host holds the n x n matrix except on the device-resident path (pipeline.hpp), where only
    // --write-matrix copies it out; that path plans the device's memory itself.
    const bool resident_path = o.devices.empty() && (o.emulate_device_on_host || (o.gpu_assembly && resident_supports(o.solver, true)));
    if (!resident_path || !o.matrix_path.empty())
        plan_dense_matrix(o.mesh, o.formulation == Formulation::soft_p0 ? mesh.triangle_count() : mesh.vertex_count());
    const MeshStats stats = mesh_stats(mesh);
    const Geometry g = make_geometry(mesh);
    std::filesystem::create_directories(o.output_dir);
    const std::string dir = o.output_dir + "/";
    // Every output is checked before any work: none may replace the mesh, and none an existing file
    // without --force (the HDF5 writers check again when they create their files).
    {
        std::vector<std::string> outputs = {dir + "surface.h5"};
        if (!o.matrix_path.empty()) outputs.push_back(o.matrix_path);
        for (std::size_t f = 0; f < o.wavenumbers.size(); ++f) {
            const std::string tag = "_f" + std::to_string(f);
            for (const char* name : {"far_field", "surface"}) outputs.push_back(dir + name + tag + (name[0] == 'f' ? ".csv" : ".vtu"));
            if (!o.grid.empty()) {
                outputs.push_back(dir + "grid" + tag + ".h5");
                outputs.push_back(dir + "grid" + tag + ".vtk");
            }
        }
        std::vector<batchsolve::io::OutputTarget> targets;
        for (const std::string& out : outputs) targets.push_back({"--output-dir", out});
        if (!o.matrix_path.empty()) targets[1].option = "--write-matrix";
        batchsolve::io::check_outputs(targets, output_rules(o.force, {o.mesh}));
    }
    std::printf("mesh %s: %zu triangles, %zu vertices, mean edge %.4g m\n", mesh.source.c_str(), mesh.triangle_count(), mesh.vertex_count(), stats.mean_edge);
    std::vector<RunInfo> runs;
    std::vector<std::vector<cd>> solutions;
    int failures = 0;
    std::unique_ptr<batchsolve::DeviceGroup> group;
    if (!o.devices.empty()) {
        const batchsolve::Backend backend = o.gpu_assembly ? batchsolve::Backend::cuda : batchsolve::Backend::cpu;
        group = std::make_unique<batchsolve::DeviceGroup>(backend, batchsolve::DeviceGroup::parse_devices(o.devices, backend));
        if (o.device_memory_gib > 0) group->set_memory_limit(std::size_t(o.device_memory_gib * double(1ull << 30)));
    }
    // The device-resident pipeline (pipeline.hpp): GPU assembly with a GPU solver on one device; the
    // host device stands in for it in tests (emulate_device_on_host).
    std::unique_ptr<ResidentDevice> resident;
    if (resident_path) {
        resident = o.emulate_device_on_host ? make_host_resident_device(o.host_device_memory_cap) : make_cuda_resident_device(0);
        if (!resident_supports(o.solver, resident->is_gpu()))
            throw std::invalid_argument(std::string("--solver ") + to_string(o.solver) + ": not a solver of the device-resident pipeline on " +
                                        resident->name());
    }
    if (o.burton_miller && (o.solver == SolveMethod::cpu_symmetric || o.solver == SolveMethod::cpu_ldlt || o.solver == SolveMethod::gpu_ldlt))
        throw std::invalid_argument(std::string("--solver ") + to_string(o.solver) +
                                    ": reads the lower triangle of a complex-symmetric matrix, and the Burton-Miller operator is not "
                                    "symmetric; use an LU solver (cpu-lu, gpu-lu)");
    if (o.burton_miller && group) throw std::invalid_argument("--devices: the Burton-Miller operators are assembled on one device only");
    // Far field, surface and grid files of frequency f, then the solution kept for surface.h5.
    auto finish_frequency = [&](std::size_t f, double k, std::vector<cd> x, const RunInfo& info) {
        FarFieldTable table = far_field_directions(o.incident.direction, o.angles, true);
        table.values = far_field(o.formulation, mesh, g, x, k, table.directions);
        if (o.mie_radius > 0 && !o.incident.point_source) {
            for (double deg : table.angles_deg)
                table.reference.push_back(mie_far_field(o.formulation == Formulation::hard_p1, k, o.mie_radius, deg * M_PI / 180));
            std::printf("  far field vs Mie (radius %g): relative L2 error %.3e over %d angles; surface %s vs Mie: relative L2 error %.3e\n",
                        o.mie_radius, relative_l2_error(table.values, table.reference), o.angles,
                        o.formulation == Formulation::hard_p1 ? "field" : "density", mie_surface_error(o.formulation, mesh, g, x, k, o.mie_radius, o.incident.direction));
        }
        const std::string tag = "_f" + std::to_string(f);
        write_far_field_csv(dir + "far_field" + tag + ".csv", table, 1.0, output_rules(o.force, {o.mesh}));
        write_surface_vtu(dir + "surface" + tag + ".vtu", mesh, o.formulation, x, output_rules(o.force, {o.mesh}));
        if (!o.grid.empty()) {
            const PlaneGrid grid = parse_plane_grid(o.grid);
            const auto pts = grid.points();
            std::vector<cd> inc(pts.size());
            for (std::size_t p = 0; p < pts.size(); ++p) inc[p] = o.incident.value(pts[p].data(), k);
            const std::vector<cd> sc = scattered_field(o.formulation, mesh, g, x, k, pts);
            write_grid_h5(dir + "grid" + tag + ".h5", grid, inc, sc, o.force, {o.mesh});
            write_grid_vtk(dir + "grid" + tag + ".vtk", grid, inc, sc, output_rules(o.force, {o.mesh}));
        }
        solutions.push_back(std::move(x));
        runs.push_back(info);
    };
    for (std::size_t f = 0; f < o.wavenumbers.size(); ++f) {
        const double k = o.wavenumbers[f];
        const double epw = warn_resolution(stats, k);
        RunInfo info;
        info.mesh_source = mesh.source;
        info.command_line = o.command_line;
        info.formulation = o.formulation;
        info.wavenumber = k;
        info.speed_of_sound = o.speed_of_sound;
        info.frequency = k * o.speed_of_sound / (2 * M_PI);
        info.incident = o.incident;
        if (group) {
            // Over several devices: assembly, solve and residual where the tiles lie (distributed.hpp).
            const std::vector<cd> b = right_hand_side(o.formulation, mesh, g, o.incident, k);
            DistributedResult d = solve_distributed(o.formulation, mesh, g, k, b, *group, o.tile);
            info.assembly_seconds = d.assembly_s;
            SolveResult r;
            r.method = SolveMethod::multi_lu;
            r.path = d.engine + " on " + d.group;
            r.seconds = d.factor_s + d.solve_s;
            r.scaled_residual = d.scaled_residual;
            r.x = std::move(d.x);
            info.solve = r;
            std::printf("k = %.6g (f = %.1f Hz, %.1f elements/wavelength): n = %zu over %s, tiles of %d columns (%.2f GiB per member); "
                        "assembly %.3f s; %s: upload %.3f s, factor %.3f s, solve %.3f s; residual (columns assembled again %.3f s) "
                        "%.3f s, scaled residual %.2e\n",
                        k, info.frequency, epw, d.order, d.group.c_str(), d.tile, double(d.bytes_per_member) / double(1u << 30), d.assembly_s,
                        d.engine.c_str(), d.upload_s, d.factor_s, d.solve_s, d.residual_assembly_s, d.residual_s, d.scaled_residual);
            if (!residual_accepted(r.scaled_residual, d.order)) {
                std::fprintf(stderr, "error: scaled residual %.2e (accepted below %g n u): the solve failed\n", r.scaled_residual, kResidualFactor);
                ++failures;
            }
            finish_frequency(f, k, std::move(r.x), info);
            continue;
        }
        const std::vector<cd> b = o.burton_miller ? right_hand_side_burton_miller(o.formulation, mesh, g, o.incident, k)
                                                  : right_hand_side(o.formulation, mesh, g, o.incident, k);
        if (resident) {
            // The matrix stays on the device: assembled, solved and multiplied there (pipeline.hpp).
            auto writer = [&](const Matrix& host) { write_matrix_h5(o.matrix_path, host, info, b, o.force, {o.mesh}); };
            ResidentRun run = run_resident(*resident, o.formulation, o.burton_miller, o.solver, mesh, g, k, b,
                                           f == 0 && !o.matrix_path.empty() ? std::function<void(const Matrix&)>(writer) : nullptr);
            info.assembly_seconds = run.assembly_s;
            SolveResult& r = run.solve;
            if (o.burton_miller) r.path = "Burton-Miller (coupling i/k); " + r.path;
            info.solve = r;
            const double gib = double(1ull << 30);
            std::printf("k = %.6g (f = %.1f Hz, %.1f elements/wavelength): n = %zu on %s, matrix resident (planned %s); %s: scaled residual %.2e, "
                        "iterations %d\n",
                        k, info.frequency, epw, b.size(), resident->name().c_str(), run.plan.describe().c_str(), r.path.c_str(), r.scaled_residual,
                        r.iterations);
            const auto t_out = std::chrono::steady_clock::now();
            const std::size_t order = b.size();
            const bool failed = !residual_accepted(r.scaled_residual, order);
            if (failed) {
                std::fprintf(stderr, "error: scaled residual %.2e (accepted below %g n u): the solve failed\n", r.scaled_residual, kResidualFactor);
                ++failures;
            }
            finish_frequency(f, k, std::move(r.x), info);
            std::printf("  stages: assembly %.3f s (kernels %.3f s, %.3g element pairs/s), solve %.3f s, residual %.3f s (reassembly %.3f s), "
                        "outputs %.3f s%s; peak memory: host %.2f GiB (maxrss), device %.2f GiB (in use at the stage ends)\n",
                        run.assembly_s, run.assembly_device_s, double(g.n) * double(g.n + 1) / 2 / run.assembly_device_s, run.solve_s, run.residual_s,
                        run.residual_reassembly_s, seconds_since(t_out),
                        run.write_matrix_s > 0 ? (", --write-matrix " + std::to_string(run.write_matrix_s) + " s").c_str() : "",
                        double(peak_host_bytes()) / gib, double(run.peak_device_bytes) / gib);
            continue;
        }
        auto t0 = std::chrono::steady_clock::now();
        Matrix a;
        if (o.burton_miller) {
            if (o.gpu_assembly)
                throw std::invalid_argument(std::string("--assembly gpu: the GPU assembles the Burton-Miller operators in the device-resident pipeline, "
                                                        "with a GPU LU solver (--solver gpu-lu); with --solver ") + to_string(o.solver) + " use --assembly cpu");
            a = assemble_burton_miller(o.formulation, mesh, g, k);
        } else if (o.gpu_assembly) {
            GpuAssemblyTiming timing;
            if (o.formulation == Formulation::soft_p0) a = assemble_p0_single_layer_gpu(g, k, {}, &timing);
            else a = assemble_p1_gpu(mesh, g, k, o.formulation == Formulation::hard_p1 ? P1Operator::hypersingular : P1Operator::single_layer, {}, &timing);
        } else {
            a = assemble(o.formulation, mesh, g, k);
        }
        info.assembly_seconds = seconds_since(t0);
        if (f == 0 && !o.matrix_path.empty()) write_matrix_h5(o.matrix_path, a, info, b, o.force, {o.mesh});
        const auto t_solve = std::chrono::steady_clock::now();
        SolveResult r = solve(o.solver, a, b);
        const double solve_wall = seconds_since(t_solve);
        if (o.burton_miller) r.path = "Burton-Miller (coupling i/k); " + r.path;
        info.solve = r;
        std::printf("k = %.6g (f = %.1f Hz, %.1f elements/wavelength): n = %zu, assembly %.3f s; %s: %.3f s, scaled residual %.2e, "
                    "iterations %d, rcond %.2e\n",
                    k, info.frequency, epw, a.n, info.assembly_seconds, r.path.c_str(), r.seconds, r.scaled_residual, r.iterations, r.rcond);
        // Burton-Miller has no interior resonances: the condition heuristic is for the single-operator
        // equations only.
        if (!o.burton_miller) report_resonance(r, a.n);
        if (!residual_accepted(r.scaled_residual, a.n)) {
            std::fprintf(stderr, "error: scaled residual %.2e (accepted below %g n u): the solve failed\n", r.scaled_residual, kResidualFactor);
            ++failures;
        }
        const std::size_t order = a.n;
        a = Matrix{};  // the host matrix is not needed for the outputs
        const auto t_out = std::chrono::steady_clock::now();
        finish_frequency(f, k, std::move(r.x), info);
        std::printf("  stages: assembly %.3f s, solve %.3f s (with the upload and the host residual of order %zu), outputs %.3f s; peak host memory "
                    "%.2f GiB (maxrss)\n",
                    info.assembly_seconds, solve_wall, order, seconds_since(t_out), double(peak_host_bytes()) / double(1ull << 30));
    }
    write_surface_h5(dir + "surface.h5", mesh, runs, solutions, o.force, {o.mesh});
    std::printf("results in %s (surface.h5, surface_f*.vtu, far_field_f*.csv%s)\n", o.output_dir.c_str(), o.grid.empty() ? "" : ", grid_f*.h5/.vtk");
    return failures ? 1 : 0;
}

// ---- validate -----------------------------------------------------------------------------------

ValidationRow validate_sphere(Formulation f, const std::string& spec, double k, int angles, const QuadratureOptions& q, bool gpu_assembly) {
    Mesh mesh = load_mesh(spec, 1.0);
    const MeshStats stats = mesh_stats(mesh);
    const Geometry g = make_geometry(mesh);
    ValidationRow row;
    row.mesh = spec;
    row.triangles = mesh.triangle_count();
    row.wavenumber = k;
    row.mean_edge = stats.mean_edge;
    row.elements_per_wavelength = warn_resolution(stats, k);
    auto t0 = std::chrono::steady_clock::now();
    Matrix a;
    if (gpu_assembly) {
        if (f == Formulation::soft_p0) a = assemble_p0_single_layer_gpu(g, k, q, nullptr);
        else a = assemble_p1_gpu(mesh, g, k, f == Formulation::hard_p1 ? P1Operator::hypersingular : P1Operator::single_layer, q, nullptr);
    } else if (f == Formulation::soft_p0) {
        a = assemble_p0_single_layer(g, k, q);
    } else {
        a = assemble_p1(mesh, g, k, f == Formulation::hard_p1 ? P1Operator::hypersingular : P1Operator::single_layer, q);
    }
    row.assembly_s = seconds_since(t0);
    row.unknowns = a.n;
    Incident inc;  // plane wave along +x
    const std::vector<cd> b = right_hand_side(f, mesh, g, inc, k);
    const SolveResult r = solve(SolveMethod::cpu_lu, a, b);
    row.solve_s = r.seconds;
    row.scaled_residual = r.scaled_residual;
    row.rcond = r.rcond;
    report_resonance(r, a.n);
    FarFieldTable table = far_field_directions(inc.direction, angles, false);
    table.values = far_field(f, mesh, g, r.x, k, table.directions);
    for (double deg : table.angles_deg) table.reference.push_back(mie_far_field(f == Formulation::hard_p1, k, 1.0, deg * M_PI / 180));
    row.far_field_error = relative_l2_error(table.values, table.reference);
    return row;
}

int run_validate(const ValidateOptions& o) {
    std::vector<ValidationRow> rows;
    std::printf("%-12s %9s %9s %8s %9s %7s %12s %10s %9s %10s %10s\n", "mesh", "triangles", "unknowns", "k", "h", "el/wl", "far-field err",
                "assembly s", "solve s", "residual", "cond est");
    for (std::size_t m = 0; m < o.meshes.size(); ++m) {
        const double k = o.wavenumbers.size() == 1 ? o.wavenumbers[0] : o.wavenumbers[m];
        const ValidationRow r = validate_sphere(o.formulation, o.meshes[m], k, o.angles, o.quadrature, o.assembly == "gpu");
        std::printf("%-12s %9zu %9zu %8.3g %9.4f %7.1f %12.3e %10.2f %9.2f %10.2e %10.2e\n", r.mesh.c_str(), r.triangles, r.unknowns, r.wavenumber,
                    r.mean_edge, r.elements_per_wavelength, r.far_field_error, r.assembly_s, r.solve_s, r.scaled_residual, 1.0 / r.rcond);
        std::fflush(stdout);
        rows.push_back(r);
    }
    if (!o.csv.empty()) {
        // Checked (and refused without --force) by the command line before any work.
        batchsolve::io::OutputStream file(o.csv, output_rules(true, {}));
        std::ostream& out = file.stream();
        out << "formulation,mesh,triangles,unknowns,wavenumber,mean_edge,elements_per_wavelength,far_field_error,assembly_s,solve_s,scaled_residual,"
               "condition_estimate\n";
        out.precision(10);
        for (const auto& r : rows)
            out << to_string(o.formulation) << ',' << r.mesh << ',' << r.triangles << ',' << r.unknowns << ',' << r.wavenumber << ',' << r.mean_edge
                << ',' << r.elements_per_wavelength << ',' << r.far_field_error << ',' << r.assembly_s << ',' << r.solve_s << ','
                << r.scaled_residual << ',' << 1.0 / r.rcond << '\n';
        file.commit();
    }
    return 0;
}

// ---- bench --------------------------------------------------------------------------------------

int run_bench(const BenchOptions& o) {
    if (!gpu_available()) throw std::runtime_error("bench: needs a CUDA device (GPU assembly and cuSOLVER)");
    Mesh mesh = load_mesh(o.mesh, o.unit_scale);
    const MeshStats stats = mesh_stats(mesh);
    const Geometry g = make_geometry(mesh);
    const std::size_t n = g.n;
    const QuadratureOptions q;
    const SingularRules rules = make_singular_rules(q.singular_order);
    // GPU memory first: the assembly holds one n x n complex double matrix; each solver uploads it
    // again (after the assembly's copy is freed) with its own workspace.
    std::uint64_t solver_bytes = 0;
    for (SolveMethod m : o.solvers) solver_bytes = std::max(solver_bytes, gpu_solve_bytes(m, n));
    const double gib = double(1 << 30);
    std::printf("bench: %s, %zu triangles (P0 n = %zu), mean edge %.3g m; GPU memory: assembly %.2f GiB, largest solver %.2f GiB\n",
                mesh.source.c_str(), n, n, stats.mean_edge, double(n) * n * 16 / gib, double(solver_bytes) / gib);
    nlohmann::json out;
    out["mesh"] = mesh.source;
    out["triangles"] = n;
    out["mean_edge_m"] = stats.mean_edge;
    out["date"] = utc_now();
    out["singular_pairs"] = g.singular_i.size();
    const char* commit = std::getenv("BEM_COMMIT");
    out["commit"] = commit ? commit : "unknown";
    int failures = 0;
    for (double f : o.frequencies) {
        const double k = 2 * M_PI * f / o.speed_of_sound;
        const double epw = warn_resolution(stats, k);
        nlohmann::json row;
        row["frequency_hz"] = f;
        row["wavenumber"] = k;
        row["elements_per_wavelength"] = epw;
        // First the pipeline `bem solve --assembly gpu` runs (pipeline.hpp), matrix resident: P0 V
        // with each of the solvers it takes, and P1 W (Maue) with gpu-ldlt; stage times as solve prints.
        {
            Incident inc;
            auto device = make_cuda_resident_device(0);
            const double element_pairs = double(g.n) * double(g.n + 1) / 2;
            auto pipeline_row = [&](Formulation form, SolveMethod m) {
                nlohmann::json s;
                s["formulation"] = to_string(form);
                s["solver"] = to_string(m);
                try {
                    const std::vector<cd> rhs = right_hand_side(form, mesh, g, inc, k);
                    const ResidentRun run = run_resident(*device, form, false, m, mesh, g, k, rhs, nullptr);
                    s["order"] = rhs.size();
                    s["assembly_s"] = run.assembly_s;
                    s["assembly_kernels_s"] = run.assembly_device_s;
                    s["element_pairs_per_s"] = element_pairs / run.assembly_device_s;
                    s["solve_s"] = run.solve_s;
                    s["residual_s"] = run.residual_s;
                    s["residual_reassembly_s"] = run.residual_reassembly_s;
                    s["peak_device_bytes"] = run.peak_device_bytes;
                    s["planned_device_bytes"] = run.plan.total();
                    s["scaled_residual"] = run.solve.scaled_residual;
                    s["iterations"] = run.solve.iterations;
                    s["path"] = run.solve.path;
                    std::printf("  pipeline %s %-9s n = %zu: assembly %.4f s (kernels %.4f s, %.3g element pairs/s), solve %.4f s, residual %.4f s, "
                                "device peak %.2f GiB, scaled residual %.2e (%s)\n",
                                to_string(form), to_string(m), rhs.size(), run.assembly_s, run.assembly_device_s, element_pairs / run.assembly_device_s,
                                run.solve_s, run.residual_s, double(run.peak_device_bytes) / double(1ull << 30), run.solve.scaled_residual,
                                run.solve.path.c_str());
                    if (!residual_accepted(run.solve.scaled_residual, rhs.size())) ++failures;
                } catch (const std::exception& e) {
                    s["error"] = e.what();
                    std::printf("  pipeline %s %s failed: %s\n", to_string(form), to_string(m), e.what());
                    ++failures;
                }
                row["pipeline"].push_back(s);
            };
            for (SolveMethod m : o.solvers)
                if (resident_supports(m, true)) pipeline_row(Formulation::soft_p0, m);
            pipeline_row(Formulation::hard_p1, SolveMethod::gpu_ldlt);
        }
        GpuAssemblyTiming best;
        best.total_s = 1e300;
        Matrix a;
        for (int r = 0; r < std::max(1, o.repeat); ++r) {
            GpuAssemblyTiming t;
            a = assemble_p0_single_layer_gpu(g, k, q, &t);
            if (t.total_s < best.total_s) best = t;
        }
        out["device"] = best.device;
        const double entries = double(n) * double(n + 1) / 2;
        row["assembly"] = {{"regular_s", best.regular_s}, {"singular_s", best.singular_s}, {"mirror_s", best.mirror_s}, {"total_s", best.total_s},
                           {"upload_s", best.upload_s}, {"lower_entries_per_s", entries / best.total_s}, {"target_s", 0.25}};
        std::printf("f = %.0f Hz (k = %.4g, %.1f el/wl): GPU assembly %.4f s (regular %.4f, singular %.4f, mirror %.4f), %.3g lower entries/s [%s]\n", f,
                    k, epw, best.total_s, best.regular_s, best.singular_s, best.mirror_s, entries / best.total_s, best.device.c_str());
        std::size_t nonfinite = 0;
#pragma omp parallel for reduction(+ : nonfinite)
        for (std::int64_t e = 0; e < std::int64_t(a.a.size()); ++e) nonfinite += std::isfinite(a.a[std::size_t(e)].real()) && std::isfinite(a.a[std::size_t(e)].imag()) ? 0 : 1;
        row["assembly"]["nonfinite_entries"] = nonfinite;
        if (nonfinite) {
            std::printf("  error: %zu entries of the GPU matrix are not finite (unwritten or overflow)\n", nonfinite);
            ++failures;
        }
        // The lower triangle in complex single (what a single-precision LDL^T reads): half the bytes.
        {
            GpuAssemblyTiming single;
            single.total_s = 1e300;
            std::vector<std::complex<float>> lower;
            for (int r = 0; r < std::max(1, o.repeat); ++r) {
                GpuAssemblyTiming t;
                lower = assemble_p0_lower_single_gpu(g, k, q, &t);
                if (t.total_s < single.total_s) single = t;
            }
            double diff = 0, scale = 0;
            std::size_t bad = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(max : diff, scale) reduction(+ : bad)
            for (std::int64_t j = 0; j < std::int64_t(n); ++j)
                for (std::size_t i = std::size_t(j); i < n; ++i) {
                    const std::complex<float> v = lower[i + std::size_t(j) * n];
                    if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) { ++bad; continue; }
                    diff = std::max(diff, std::abs(cd(v) - a(i, std::size_t(j))));
                    scale = std::max(scale, std::abs(a(i, std::size_t(j))));
                }
            row["assembly_single_lower"] = {{"regular_s", single.regular_s}, {"singular_s", single.singular_s}, {"total_s", single.total_s},
                                            {"lower_entries_per_s", entries / single.total_s}, {"max_rel_diff_vs_double", diff / scale},
                                            {"nonfinite_lower_entries", bad}, {"target_s", 0.25}};
            std::printf("  single-precision lower triangle: %.4f s (regular %.4f, singular %.4f); max |c - z| / max |z| = %.2e\n", single.total_s,
                        single.regular_s, single.singular_s, diff / scale);
            if (bad || !(diff / scale < 1e-6)) ++failures;
        }
        // CPU/GPU agreement on spread rows, and symmetry of the GPU matrix.
        if (o.cpu_check_rows > 0) {
            double diff = 0, scale = 0, asym = 0;
            const int rows = std::min<int>(o.cpu_check_rows, int(n));
#pragma omp parallel for schedule(dynamic, 1) reduction(max : diff, scale, asym)
            for (int r = 0; r < rows; ++r) {
                const std::size_t i = std::size_t((double(r) + 0.5) * double(n) / rows);
                for (std::size_t j = 0; j < n; ++j) {
                    const cd cpu = p0_single_layer_entry(g, rules, std::max(i, j), std::min(i, j), k, q);
                    diff = std::max(diff, std::abs(a(i, j) - cpu));
                    scale = std::max(scale, std::abs(cpu));
                    asym = std::max(asym, std::abs(a(i, j) - a(j, i)));
                }
            }
            row["cpu_gpu_max_rel_diff"] = diff / scale;
            row["symmetry_max_rel_diff"] = asym / scale;
            std::printf("  CPU vs GPU on %d rows: max |diff| / max |a| = %.2e; symmetry %.2e\n", rows, diff / scale, asym / scale);
            if (!(diff / scale < 1e-10)) ++failures;
        }
        Incident inc;
        const std::vector<cd> b = right_hand_side(Formulation::soft_p0, mesh, g, inc, k);
        for (SolveMethod m : o.solvers) {
            nlohmann::json s;
            s["solver"] = to_string(m);
            try {
                const SolveResult r = solve(m, a, b, false);
                s["seconds"] = r.seconds;
                s["scaled_residual"] = r.scaled_residual;
                s["iterations"] = r.iterations;
                s["path"] = r.path;
                std::printf("  %-10s %8.4f s  scaled residual %.2e  iterations %d  (%s)\n", to_string(m), r.seconds, r.scaled_residual, r.iterations,
                            r.path.c_str());
                if (!residual_accepted(r.scaled_residual, a.n)) ++failures;
            } catch (const std::exception& e) {
                s["error"] = e.what();
                std::printf("  %-10s failed: %s\n", to_string(m), e.what());
                ++failures;
            }
            row["solvers"].push_back(s);
        }
        // Sound-hard P1 (Maue) on the same mesh: one GPU assembly, timed, every entry finite.
        try {
            GpuAssemblyTiming t;
            const Matrix w = assemble_p1_gpu(mesh, g, k, P1Operator::hypersingular, q, &t);
            std::size_t bad = 0;
            for (const cd& v : w.a) bad += std::isfinite(v.real()) && std::isfinite(v.imag()) ? 0 : 1;
            row["assembly_p1_hypersingular"] = {{"order", w.n}, {"regular_s", t.regular_s}, {"singular_s", t.singular_s}, {"total_s", t.total_s},
                                                {"nonfinite_entries", bad}};
            std::printf("  P1 W (Maue) GPU assembly, order %zu: %.4f s (regular %.4f, singular %.4f)\n", w.n, t.total_s, t.regular_s, t.singular_s);
            if (bad) ++failures;
        } catch (const std::exception& e) {
            row["assembly_p1_hypersingular"] = {{"error", e.what()}};
            std::printf("  P1 W GPU assembly failed: %s\n", e.what());
            ++failures;
        }
        out["runs"].push_back(row);
        // Written after every frequency, so that a run cut off by a time limit keeps what it measured.
        if (!o.json.empty()) {
            batchsolve::io::write_text_file(o.json, out.dump(2) + "\n", output_rules(true, {o.mesh}));  // checked before the work
        }
    }
    return failures ? 1 : 0;
}

}  // namespace bem
