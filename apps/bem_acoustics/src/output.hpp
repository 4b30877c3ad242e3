// Result files of a scattering run: the surface solution (HDF5 and ParaView .vtu), far-field
// pattern (CSV), the field on a plane grid (HDF5 and legacy VTK), and the assembled matrix (HDF5).
// The HDF5 schemas are documented in apps/bem_acoustics/README.md.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "batchsolve_io/batch_file.hpp"  // io::OutputOptions
#include "physics.hpp"
#include "solver.hpp"

namespace bem {

// The rules every result file is written by (batchsolve_io/output.hpp: a checked temporary renamed
// over the target): an existing file only with --force, never one of `inputs` (the mesh).
batchsolve::io::OutputOptions output_rules(bool force, std::vector<std::string> inputs);
// A problem that does not fit this machine (exit 4 of the command line, as bsolve's and dvc's).
struct ResourceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// Refuses (ResourceError), with the sizes, a mesh whose dense n x n complex matrix does not fit the
// memory, before anything is allocated (instead of std::bad_alloc after minutes).
void plan_dense_matrix(const std::string& mesh, std::size_t unknowns);

struct RunInfo {
    std::string mesh_source, command_line;
    Formulation formulation{};
    double wavenumber = 0, frequency = 0, speed_of_sound = 0;
    Incident incident;
    SolveResult solve;  // x is not used here
    double assembly_seconds = 0;
};

// One group per frequency "/f<index>" in a file that accumulates frequencies of one run.
void write_surface_h5(const std::string& path, const Mesh& mesh, const std::vector<RunInfo>& runs,
                      const std::vector<std::vector<cd>>& solutions, bool force, const std::vector<std::string>& inputs);
void write_surface_vtu(const std::string& path, const Mesh& mesh, Formulation f, const std::vector<cd>& solution,
                       const batchsolve::io::OutputOptions& rules = {});

struct FarFieldTable {
    std::vector<double> angles_deg;                // in the plane of the incident direction and `plane_normal`
    std::vector<std::array<double, 3>> directions;
    std::vector<cd> values;
    std::vector<cd> reference;                     // Mie series when validating (else empty)
};
// Directions d(theta) = cos(theta) d_inc + sin(theta) t, theta in [0, 360) or [0, 180] degrees.
FarFieldTable far_field_directions(const std::array<double, 3>& incident_direction, int count, bool full_circle);
// Columns: theta_deg, re, im, abs, level_db (10 log10(4 pi |F|^2 / pi a^2 ... ) see README), and
// the reference columns when present.
void write_far_field_csv(const std::string& path, const FarFieldTable& table, double reference_area,
                         const batchsolve::io::OutputOptions& rules = {});

struct PlaneGrid {
    std::array<double, 3> origin{}, u{}, v{};  // points origin + i/(nu-1) u + j/(nv-1) v
    int nu = 0, nv = 0;
    std::vector<std::array<double, 3>> points() const;
};
PlaneGrid parse_plane_grid(const std::string& spec);  // "plane=xz,extent=3,n=101[,offset=0]"
void write_grid_h5(const std::string& path, const PlaneGrid& grid, const std::vector<cd>& incident, const std::vector<cd>& scattered,
                   bool force, const std::vector<std::string>& inputs);
void write_grid_vtk(const std::string& path, const PlaneGrid& grid, const std::vector<cd>& incident, const std::vector<cd>& scattered,
                    const batchsolve::io::OutputOptions& rules = {});

void write_matrix_h5(const std::string& path, const Matrix& m, const RunInfo& info, const std::vector<cd>& rhs, bool force,
                     const std::vector<std::string>& inputs);

}  // namespace bem
