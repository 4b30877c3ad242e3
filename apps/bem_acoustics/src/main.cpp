// bem: time-harmonic acoustic scattering by closed surfaces with the boundary-element method.
// Subcommands: sphere (generate a mesh), check (mesh checks), solve, validate (sphere vs Mie under
// refinement), bench (GPU assembly and solvers side by side). `bem <subcommand> --help` for each.
#include <boost/program_options.hpp>
#include <batchsolve/multi_device.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "app.hpp"
#include "batchsolve_io/hdf5.hpp"
#include "batchsolve_io/output.hpp"

namespace po = boost::program_options;
using namespace bem;

namespace {

int usage() {
    std::cout << "bem: boundary-element acoustic scattering (apps/bem_acoustics/README.md)\n\n"
                 "usage: bem <subcommand> [options]\n"
                 "  sphere    generate a sphere mesh (icosphere, octasphere or Gmsh) and write it as PLY\n"
                 "  check     read a mesh (PLY, STL, Gmsh .msh), run the surface checks, print its statistics\n"
                 "  solve     scatter a plane wave or point source; surface solution, far field, field on a grid\n"
                 "  validate  unit sphere against the Mie series over a refinement sequence (error vs h)\n"
                 "  bench     GPU assembly time and GPU solvers (LU, IRS) side by side on one mesh\n"
                 "`bem <subcommand> --help` lists the options of each.\n";
    return 0;
}

bool parse(int argc, char** argv, po::options_description& opts, po::variables_map& vm, const char* synopsis,
           po::positional_options_description* positional = nullptr) {
    opts.add_options()("help,h", "show this help");
    po::command_line_parser parser(argc, argv);
    parser.options(opts);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
        std::cout << synopsis << "\n\n" << opts << '\n';
        return false;
    }
    po::notify(vm);
    return true;
}

// A floating-point option that must be a finite number within [lo, hi] (exit 2 otherwise).
double checked(double v, const char* option, double lo, double hi) {
    if (!std::isfinite(v) || v < lo || v > hi) {
        std::ostringstream m;
        m << option << ": " << v << " is not a finite number within [" << lo << ", " << hi << "]";
        throw std::invalid_argument(m.str());
    }
    return v;
}

// The far-field table holds per angle its angle, direction, value and reference (8 + 24 + 16 + 16
// bytes); the far field costs angles x unknowns kernel evaluations. Refused with the size before
// any assembly, beyond a million angles (a 0.00036-degree step) or the memory.
void check_angles(int angles, const char* option) {
    constexpr int kMaxAngles = 1000000;
    if (angles < 2) throw std::invalid_argument(std::string(option) + ": need at least 2 angles (got " + std::to_string(angles) + ")");
    const double bytes = 64.0 * angles, available = double(batchsolve::io::h5::available_host_bytes());
    if (angles > kMaxAngles || bytes > available) {
        char m[256];
        std::snprintf(m, sizeof m, "%s: %d angles need a far-field table of %.1f GiB (%.1f GiB available); at most %d angles", option, angles,
                      bytes / double(1ull << 30), available / double(1ull << 30), kMaxAngles);
        throw std::invalid_argument(m);
    }
}

int cmd_sphere(int argc, char** argv) {
    po::options_description opts("bem sphere options");
    std::string kind, output;
    int level;
    double h, radius;
    opts.add_options()("kind", po::value(&kind)->default_value("ico"), "ico (icosahedron refined: 20*4^L triangles), octa (8*4^L), gmsh (Gmsh frontal mesh of size h)")
        ("level", po::value(&level)->default_value(3), "refinement level for ico/octa")
        ("h", po::value(&h)->default_value(0.1), "element size for gmsh")
        ("radius", po::value(&radius)->default_value(1.0), "sphere radius")
        ("output,o", po::value(&output)->required(), "output PLY file (ASCII)")
        ("force", "replace the output file if it exists");
    po::variables_map vm;
    if (!parse(argc, argv, opts, vm, "bem sphere --kind ico|octa|gmsh [--level L | --h H] --output FILE.ply")) return 0;
    checked(radius, "--radius", 1e-12, 1e12);
    if (kind != "ico" && kind != "octa" && kind != "gmsh") throw std::invalid_argument("--kind: expected ico, octa or gmsh (got '" + kind + "')");
    if (kind != "gmsh" && (level < 0 || level > 9)) throw std::invalid_argument("--level: must be within 0..9 (got " + std::to_string(level) + ")");
    if (kind == "gmsh") checked(h, "--h", 1e-4 * radius, 10 * radius);
    const batchsolve::io::OutputOptions rules = output_rules(vm.count("force") > 0, {});
    batchsolve::io::check_outputs({{"--output", output}}, rules);
    Mesh mesh = make_sphere_from_spec(kind == "gmsh" ? "gmsh:" + std::to_string(h) : kind + ":" + std::to_string(level), radius);
    write_ply_ascii(mesh, output, rules);
    const MeshStats s = mesh_stats(mesh);
    std::printf("%s: %zu triangles, %zu vertices, mean edge %.4g\n", output.c_str(), mesh.triangle_count(), mesh.vertex_count(), s.mean_edge);
    return 0;
}

int cmd_check(int argc, char** argv) {
    po::options_description opts("bem check options");
    std::string path, unit;
    double frequency, c;
    opts.add_options()("mesh", po::value(&path)->required(), "mesh file (.ply, .stl, .msh) or sphere spec (ico:L, octa:L, geo:m, gmsh:h)")
        ("unit", po::value(&unit)->default_value("m"), "unit of the mesh coordinates: m, cm, mm")
        ("frequency", po::value(&frequency)->default_value(0), "frequency in Hz for the elements-per-wavelength check")
        ("speed-of-sound", po::value(&c)->default_value(343.0), "m/s");
    po::positional_options_description pos;
    pos.add("mesh", 1);
    po::variables_map vm;
    if (!parse(argc, argv, opts, vm, "bem check MESH [--unit mm] [--frequency HZ]", &pos)) return 0;
    Mesh mesh = load_mesh(path, parse_unit(unit));
    const MeshStats s = mesh_stats(mesh);
    std::printf("%s: closed, consistently oriented surface: %zu triangles, %zu vertices\n", mesh.source.c_str(), mesh.triangle_count(),
                mesh.vertex_count());
    std::printf("  edges: mean %.4g m, min %.4g m, max %.4g m; area %.6g m^2; volume %.6g m^3\n", s.mean_edge, s.min_edge, s.max_edge, s.area,
                s.volume);
    std::printf("  10 elements per wavelength up to %.1f Hz (c = %g m/s)\n", c / (10 * s.mean_edge), c);
    if (frequency > 0) warn_resolution(s, 2 * M_PI * frequency / c);
    return 0;
}

std::vector<double> parse_list(const std::string& text, const char* option) {
    std::vector<double> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        try {
            std::size_t used = 0;
            out.push_back(std::stod(item, &used));
            if (used != item.size()) throw std::invalid_argument("");
        } catch (const std::exception&) {
            throw std::invalid_argument(std::string(option) + ": not a number: '" + item + "'");
        }
    }
    return out;
}

std::array<double, 3> parse_vector(const std::string& text, const char* option, bool normalise) {
    const auto v = parse_list(text, option);
    if (v.size() != 3) throw std::invalid_argument(std::string(option) + ": expected x,y,z");
    std::array<double, 3> out{v[0], v[1], v[2]};
    if (normalise) {
        const double len = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (!(len > 0)) throw std::invalid_argument(std::string(option) + ": zero vector");
        for (double& x : out) x /= len;
    }
    return out;
}

int cmd_solve(int argc, char** argv) {
    po::options_description opts("bem solve options");
    SolveOptions o;
    std::string unit, wavenumbers, frequencies, direction, source, formulation, solver, assembly;
    opts.add_options()("mesh", po::value(&o.mesh)->required(), "mesh file (.ply, .stl, .msh) or sphere spec (ico:L, octa:L, geo:m, gmsh:h)")
        ("unit", po::value(&unit)->default_value("m"), "unit of the mesh coordinates: m, cm, mm")
        ("wavenumber,k", po::value(&wavenumbers), "wavenumbers in 1/m, comma separated")
        ("frequency,f", po::value(&frequencies), "frequencies in Hz, comma separated (k = 2 pi f / c)")
        ("speed-of-sound", po::value(&o.speed_of_sound)->default_value(343.0), "m/s")
        ("direction", po::value(&direction)->default_value("1,0,0"), "plane-wave direction x,y,z")
        ("point-source", po::value(&source), "point source at x,y,z instead of a plane wave")
        ("formulation", po::value(&formulation)->default_value("soft-p0"), "soft-p0 | soft-p1 (V phi = -u_inc) | hard-p1 (W u = d_n u_inc) | soft-p0-bm | hard-p1-bm "
                                                                     "(Burton-Miller combined field, coupling i/k: no interior resonances; LU solvers; GPU assembly with gpu-lu)")
        ("solver", po::value(&solver)->default_value("cpu-lu"), "cpu-lu | cpu-sym | gpu-lu | gpu-irs-c | gpu-irs-y | cpu-ldlt | gpu-ldlt (mixed-precision LDL^T)")
        ("assembly", po::value(&assembly)->default_value("cpu"), "cpu | gpu")
        ("angles", po::value(&o.angles)->default_value(361), "far-field angles over the full circle in the plane of the incident direction")
        ("grid", po::value(&o.grid), "field on a plane grid: plane=xz,extent=3,n=101[,offset=0]")
        ("mie-radius", po::value(&o.mie_radius)->default_value(0), "compare the far field with the Mie series of a sphere of this radius (plane wave)")
        ("write-matrix", po::value(&o.matrix_path), "write the assembled matrix and right-hand side to this HDF5 file (first frequency)")
        ("output-dir,o", po::value(&o.output_dir)->required(), "directory for the result files")
        ("force", po::bool_switch(&o.force), "replace existing result files")
        ("devices", po::value(&o.devices), "assemble and solve over several devices: GPUs 0,1,... or 'all' with --assembly gpu "
                                          "(each assembles its column tiles, LU by cuSOLVERMg), CPU members 0,1,... with --assembly cpu")
        ("tile", po::value(&o.tile)->default_value(256), "with --devices: columns per tile, tiles dealt round robin (cuSOLVERMg's layout; at most 256 on GPUs)")
        ("device-memory-gib", po::value(&o.device_memory_gib)->default_value(0), "with --devices: take each member to have at most this "
                                                                                 "much memory (0: the device's own; tests and sharing)");
    po::variables_map vm;
    if (!parse(argc, argv, opts, vm, "bem solve --mesh MESH (-k K | -f HZ) [options] -o DIR")) return 0;
    // Every option value before the mesh is read or anything assembled.
    check_angles(o.angles, "--angles");
    if (!o.grid.empty()) parse_plane_grid(o.grid);
    checked(o.mie_radius, "--mie-radius", 0, 1e12);
    checked(o.speed_of_sound, "--speed-of-sound", 1e-6, 1e12);
    if (vm.count("devices")) {
        if (!vm["solver"].defaulted()) throw std::invalid_argument("--solver: not with --devices (the solve over several devices is LU: cuSOLVERMg)");
        if (vm.count("write-matrix")) throw std::invalid_argument("--write-matrix: not with --devices (the matrix never sits in one place)");
        if (o.tile < 1) throw std::invalid_argument("--tile: at least 1 (got " + std::to_string(o.tile) + ")");
        try {  // the list's syntax now, before the mesh is read (the devices themselves when the group starts)
            batchsolve::DeviceGroup::parse_devices(o.devices, assembly == "gpu" ? batchsolve::Backend::cuda : batchsolve::Backend::cpu);
        } catch (const batchsolve::InvalidArgument& e) {
            throw std::invalid_argument(std::string("--devices: ") + e.what());
        }
        if (!(o.device_memory_gib >= 0)) throw std::invalid_argument("--device-memory-gib: at least 0");
    }
    o.unit_scale = parse_unit(unit);
    if (vm.count("wavenumber")) o.wavenumbers = parse_list(wavenumbers, "--wavenumber");
    if (vm.count("frequency"))
        for (double f : parse_list(frequencies, "--frequency")) o.wavenumbers.push_back(2 * M_PI * f / o.speed_of_sound);
    if (o.wavenumbers.empty()) throw std::invalid_argument("solve: give --wavenumber or --frequency");
    for (double k : o.wavenumbers)
        if (!(k > 0) || !std::isfinite(k)) throw std::invalid_argument("solve: wavenumbers and frequencies must be positive");
    o.incident.direction = parse_vector(direction, "--direction", true);
    if (vm.count("point-source")) {
        o.incident.point_source = true;
        o.incident.source = parse_vector(source, "--point-source", false);
    }
    o.formulation = parse_formulation(formulation, o.burton_miller);
    o.solver = parse_solve_method(solver);
    if (assembly != "cpu" && assembly != "gpu") throw std::invalid_argument("--assembly: expected cpu or gpu");
    o.gpu_assembly = assembly == "gpu";
    std::ostringstream cmd;
    for (int i = 0; i < argc; ++i) cmd << (i ? " " : "") << argv[i];
    o.command_line = cmd.str();
    return run_solve(o);
}

int cmd_validate(int argc, char** argv) {
    po::options_description opts("bem validate options");
    ValidateOptions o;
    std::string formulation, meshes, wavenumbers;
    opts.add_options()("formulation", po::value(&formulation)->default_value("soft-p0"), "soft-p0 | soft-p1 | hard-p1")
        ("meshes", po::value(&meshes)->default_value("ico:1,ico:2,ico:3,ico:4"), "unit-sphere meshes, comma separated (ico:L, octa:L, geo:m, gmsh:h, or files)")
        ("wavenumber,k", po::value(&wavenumbers)->default_value("2"), "one wavenumber for all meshes, or one per mesh")
        ("angles", po::value(&o.angles)->default_value(181), "far-field angles over [0, 180] degrees")
        ("singular-order", po::value(&o.quadrature.singular_order)->default_value(4), "Gauss points per dimension of the Sauter-Schwab rules")
        ("assembly", po::value(&o.assembly)->default_value("cpu"), "cpu | gpu")
        ("csv", po::value(&o.csv), "write the table (h, n, error, times) to this CSV file")
        ("force", "replace the CSV file if it exists");
    po::variables_map vm;
    if (!parse(argc, argv, opts, vm, "bem validate [--formulation F] [--meshes LIST] [-k K,...] [--csv FILE]")) return 0;
    check_angles(o.angles, "--angles");
    if (o.quadrature.singular_order < 1 || o.quadrature.singular_order > 64)
        throw std::invalid_argument("--singular-order: must be within 1..64 Gauss points (got " + std::to_string(o.quadrature.singular_order) + ")");
    if (!o.csv.empty()) batchsolve::io::check_outputs({{"--csv", o.csv}}, output_rules(vm.count("force") > 0, {}));
    o.formulation = parse_formulation(formulation);
    std::stringstream ss(meshes);
    std::string item;
    while (std::getline(ss, item, ',')) o.meshes.push_back(item);
    o.wavenumbers = parse_list(wavenumbers, "--wavenumber");
    if (o.wavenumbers.size() != 1 && o.wavenumbers.size() != o.meshes.size())
        throw std::invalid_argument("--wavenumber: give one value or one per mesh");
    if (o.assembly != "cpu" && o.assembly != "gpu") throw std::invalid_argument("--assembly: expected cpu or gpu");
    return run_validate(o);
}

int cmd_bench(int argc, char** argv) {
    po::options_description opts("bem bench options");
    BenchOptions o;
    std::string unit, frequencies, solvers;
    opts.add_options()("mesh", po::value(&o.mesh)->required(), "mesh file or sphere spec")
        ("unit", po::value(&unit)->default_value("m"), "m, cm, mm")
        ("frequency,f", po::value(&frequencies)->default_value("1000"), "frequencies in Hz, comma separated")
        ("speed-of-sound", po::value(&o.speed_of_sound)->default_value(343.0), "m/s")
        ("solvers", po::value(&solvers)->default_value("gpu-lu,gpu-irs-c,gpu-irs-y,gpu-ldlt"), "solvers run side by side on the same matrix")
        ("cpu-check", po::value(&o.cpu_check_rows)->default_value(64), "rows of the GPU matrix compared with the CPU assembly (0: none)")
        ("repeat", po::value(&o.repeat)->default_value(3), "GPU assemblies per frequency (the best is reported)")
        ("json", po::value(&o.json), "write the results to this JSON file")
        ("force", "replace the JSON file if it exists");
    po::variables_map vm;
    if (!parse(argc, argv, opts, vm, "bem bench --mesh MESH [--unit mm] [-f HZ,...] [--solvers LIST] [--json FILE]")) return 0;
    if (!o.json.empty()) batchsolve::io::check_outputs({{"--json", o.json}}, output_rules(vm.count("force") > 0, {o.mesh}));
    o.unit_scale = parse_unit(unit);
    o.frequencies = parse_list(frequencies, "--frequency");
    std::stringstream ss(solvers);
    std::string item;
    while (std::getline(ss, item, ',')) o.solvers.push_back(parse_solve_method(item));
    return run_bench(o);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") return usage();
    const std::string sub = argv[1];
    try {
        if (sub == "sphere") return cmd_sphere(argc - 1, argv + 1);
        if (sub == "check") return cmd_check(argc - 1, argv + 1);
        if (sub == "solve") {
            // A run refused or failed leaves no empty result directory behind that it made itself.
            std::string dir;
            for (int i = 2; i + 1 < argc; ++i)
                if (std::string(argv[i]) == "-o" || std::string(argv[i]) == "--output-dir") dir = argv[i + 1];
            std::error_code ec;
            const bool existed = dir.empty() || std::filesystem::exists(dir, ec);
            try {
                return cmd_solve(argc - 1, argv + 1);
            } catch (...) {
                if (!existed && std::filesystem::is_directory(dir, ec) && std::filesystem::is_empty(dir, ec)) std::filesystem::remove(dir, ec);
                throw;
            }
        }
        if (sub == "validate") return cmd_validate(argc - 1, argv + 1);
        if (sub == "bench") return cmd_bench(argc - 1, argv + 1);
        std::cerr << "bem: unknown subcommand '" << sub << "' (bem --help)\n";
        return 2;
    } catch (const po::error& e) {
        std::cerr << "bem " << sub << ": " << e.what() << " (bem " << sub << " --help)\n";
        return 2;
    } catch (const std::invalid_argument& e) {
        std::cerr << "bem " << sub << ": " << e.what() << '\n';
        return 2;
    } catch (const batchsolve::io::FileError& e) {
        std::cerr << "bem " << sub << ": error: " << e.what() << '\n';
        return 3;
    } catch (const MeshError& e) {  // a mesh file missing, unreadable or malformed
        std::cerr << "bem " << sub << ": error: " << e.what() << '\n';
        return 3;
    } catch (const std::filesystem::filesystem_error& e) {
        // Not the library's "filesystem error: cannot ...: <why> [path]": the path first, then why.
        std::cerr << "bem " << sub << ": error: " << e.path1().string() << ": " << e.code().message() << '\n';
        return 3;
    } catch (const std::bad_alloc&) {
        std::cerr << "bem " << sub << ": error: out of memory (the problem does not fit this machine's memory)\n";
        return 4;
    } catch (const ResourceError& e) {
        std::cerr << "bem " << sub << ": error: " << e.what() << '\n';
        return 4;
    } catch (const std::exception& e) {
        std::cerr << "bem " << sub << ": error: " << e.what() << '\n';
        return 1;
    }
}
