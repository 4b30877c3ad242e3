// The bem command's subcommands as library functions (bem_acoustics_core), so tests and the
// executable share them: mesh loading with checks, solve, validate (Mie), bench (GPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "output.hpp"

namespace bem {

// "ico:L", "octa:L" or "gmsh:h" (unit sphere scaled by radius).
bool is_sphere_spec(const std::string& spec);
Mesh make_sphere_from_spec(const std::string& spec, double radius = 1.0);
// A file (read, scaled) or a sphere spec; runs check_surface and prints what it changed.
Mesh load_mesh(const std::string& spec, double unit_scale);
// Prints a warning (stderr) under 6 elements per wavelength; returns elements per wavelength.
double warn_resolution(const MeshStats& stats, double wavenumber);

struct SolveOptions {
    std::string mesh, output_dir, grid, matrix_path, command_line;
    double unit_scale = 1, speed_of_sound = 343, mie_radius = 0;
    std::vector<double> wavenumbers;
    Incident incident;
    Formulation formulation = Formulation::soft_p0;
    SolveMethod solver = SolveMethod::cpu_lu;
    bool gpu_assembly = false, force = false;
    int angles = 361;
    // Several devices: a DeviceGroup of these GPUs (--assembly gpu) or CPU members
    // (--assembly cpu); each assembles its tiles of `tile` columns, LU by cuSOLVERMg. Empty: one device.
    std::string devices;
    int tile = 256;  // batchsolve::cusolvermg_max_tile
    double device_memory_gib = 0;  // cap on each member's memory (0: the device's own)
    // Burton-Miller combined field instead of the single-operator equation (soft-p0, hard-p1).
    bool burton_miller = false;
    // Tests: the device-resident pipeline on the host device (pipeline.hpp) with cpu-lu or cpu-ldlt,
    // the host pretending to have host_device_memory_cap bytes free (0: no cap).
    bool emulate_device_on_host = false;
    std::uint64_t host_device_memory_cap = 0;
};
int run_solve(const SolveOptions& o);

struct ValidationRow {
    std::string mesh;
    std::size_t triangles = 0, unknowns = 0;
    double wavenumber = 0, mean_edge = 0, elements_per_wavelength = 0;
    double far_field_error = 0, assembly_s = 0, solve_s = 0, scaled_residual = 0, rcond = 0;
};
struct ValidateOptions {
    Formulation formulation = Formulation::soft_p0;
    std::vector<std::string> meshes;
    std::vector<double> wavenumbers;
    QuadratureOptions quadrature;
    std::string assembly = "cpu", csv;
    int angles = 181;
};
// One row: the unit sphere (mesh spec or file) at wavenumber k against the Mie series.
ValidationRow validate_sphere(Formulation f, const std::string& mesh, double k, int angles, const QuadratureOptions& q, bool gpu_assembly);
int run_validate(const ValidateOptions& o);

struct BenchOptions {
    std::string mesh, json;
    double unit_scale = 1, speed_of_sound = 343;
    std::vector<double> frequencies;
    std::vector<SolveMethod> solvers;
    int cpu_check_rows = 64, repeat = 3;
};
int run_bench(const BenchOptions& o);

}  // namespace bem
