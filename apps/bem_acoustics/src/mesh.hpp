// Triangle surface meshes for the boundary-element solver: readers (PLY, STL, Gmsh .msh), the
// icosphere/octasphere and Gmsh sphere generators, and the checks a scattering surface must pass.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "batchsolve_io/batch_file.hpp"  // io::OutputOptions

namespace bem {

// Every reader and check reports through this: "<file>: <where>: <reason>".
class MeshError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Mesh {
    std::vector<std::array<double, 3>> vertices;
    std::vector<std::array<std::int32_t, 3>> triangles;  // counter-clockwise seen from outside
    std::string source;                                  // file name or generator, for messages

    std::size_t vertex_count() const { return vertices.size(); }
    std::size_t triangle_count() const { return triangles.size(); }
};

// Geometry summary used for the wavelength check and reports.
struct MeshStats {
    double mean_edge = 0, max_edge = 0, min_edge = 0;
    double area = 0, volume = 0;  // enclosed volume (positive when the normals point outward)
    double max_radius = 0;        // largest distance of a vertex from the origin
};
MeshStats mesh_stats(const Mesh& mesh);

enum class SphereBase { icosahedron, octahedron };
// Unit sphere (radius `radius`) by `level` midpoint refinements of a platonic solid, vertices
// projected on the sphere: 20·4^level (icosahedron) or 8·4^level (octahedron) triangles.
Mesh make_refined_sphere(int level, double radius = 1.0, SphereBase base = SphereBase::icosahedron);
// A sphere meshed by Gmsh's frontal algorithm with target element size h (OpenCASCADE geometry).
Mesh make_gmsh_sphere(double h, double radius = 1.0);
// Geodesic sphere of frequency m: each icosahedron face cut into m^2 triangles (vertices on the face's
// m-grid projected to the sphere): 20 m^2 triangles, 10 m^2 + 2 vertices, any size without Gmsh
// (m = 2^L gives the counts of make_refined_sphere(L)). Spec "geo:m".
Mesh make_geodesic_sphere(int frequency, double radius = 1.0);

// Readers: the format is chosen by extension (.ply, .stl, .msh). Coordinates are multiplied by
// `unit_scale` (0.001 for millimetres). Coincident vertices of STL files are merged.
Mesh read_mesh(const std::string& path, double unit_scale = 1.0);
Mesh read_ply(const std::string& path);
Mesh read_stl(const std::string& path);
Mesh read_msh(const std::string& path);
double parse_unit(const std::string& unit);  // "m" -> 1, "mm" -> 1e-3, "cm" -> 1e-2

// Through batchsolve::io::OutputStream: the default replaces an existing file.
void write_ply_ascii(const Mesh& mesh, const std::string& path, const batchsolve::io::OutputOptions& rules = {});

// What check_surface found that is not an error.
struct SurfaceReport {
    bool flipped_to_outward = false;  // the whole mesh was oriented inward and has been reversed
    std::size_t removed_unused_vertices = 0;
};
// Checks that the surface is a closed, consistently oriented 2-manifold without degenerate or
// duplicate triangles; throws MeshError naming the first offending triangle (or edge). Reorients
// an inward mesh and drops unreferenced vertices, saying so in the report.
SurfaceReport check_surface(Mesh& mesh);

// Elements per wavelength (wavelength / mean edge) at wavenumber k.
double elements_per_wavelength(const MeshStats& stats, double wavenumber);

}  // namespace bem
