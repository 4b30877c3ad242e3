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

int cmd_sphere(int argc, char** argv) {
    po::options_description opts("bem sphere options");
    std::string kind, output;
    int level;
    double h, radius;
    opts.add_options()("kind", po::value(&kind)->default_value("ico"), "ico (icosahedron refined: 20*4^L triangles), octa (8*4^L), gmsh (Gmsh frontal mesh of size h)")
        ("level", po::value(&level)->default_value(3), "refinement level for ico/octa")
        ("h", po::value(&h)->default_value(0.1), "element size for gmsh")
        ("radius", po::value(&radius)->default_value(1.0), "sphere radius")
        ("output,o", po::value(&output)->required(), "output PLY file (ASCII)");
    po::variables_map vm;
    if (!parse(argc, argv, opts, vm, "bem sphere --kind ico|octa|gmsh [--level L | --h H] --output FILE.ply")) return 0;
    Mesh mesh = make_sphere_from_spec(kind == "gmsh" ? "gmsh:" + std::to_string(h) : kind + ":" + std::to_string(level), radius);
    write_ply_ascii(mesh, output);
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
                                                                     "(Burton-Miller combined field, coupling i/k: no interior resonances; LU solvers; GPU assembly for soft-p0-bm with gpu-lu)")
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
        ("csv", po::value(&o.csv), "write the table (h, n, error, times) to this CSV file");
    po::variables_map vm;
    if (!parse(argc, argv, opts, vm, "bem validate [--formulation F] [--meshes LIST] [-k K,...] [--csv FILE]")) return 0;
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
        ("json", po::value(&o.json), "write the results to this JSON file");
    po::variables_map vm;
    if (!parse(argc, argv, opts, vm, "bem bench --mesh MESH [--unit mm] [-f HZ,...] [--solvers LIST] [--json FILE]")) return 0;
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
        if (sub == "solve") return cmd_solve(argc - 1, argv + 1);
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
    } catch (const std::exception& e) {
        std::cerr << "bem " << sub << ": error: " << e.what() << '\n';
        return 1;
    }
}
