// Writers of output.hpp: HDF5 through batchsolve::io::h5, .vtu / legacy .vtk text, CSV.
#include "output.hpp"

#include <batchsolve_io/hdf5.hpp>
#include <batchsolve_io/output.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace bem {
namespace h5 = batchsolve::io::h5;

batchsolve::io::OutputOptions output_rules(bool force, std::vector<std::string> inputs) {
    return {force ? batchsolve::io::Existing::replace : batchsolve::io::Existing::refuse, std::move(inputs)};
}

void plan_dense_matrix(const std::string& mesh, std::size_t unknowns) {
    const double bytes = 16.0 * double(unknowns) * double(unknowns);  // one n x n complex<double> matrix
    const double available = double(h5::available_host_bytes());
    if (bytes > available) {
        char m[320];
        std::snprintf(m, sizeof m, "%s: %zu unknowns make a dense %zu x %zu complex matrix of %.1f GiB, %.1f GiB of memory available "
                      "(use a coarser mesh)", mesh.c_str(), unknowns, unknowns, unknowns, bytes / double(1ull << 30), available / double(1ull << 30));
        throw ResourceError(m);
    }
}

namespace {
std::vector<double> flatten(const std::vector<std::array<double, 3>>& v) {
    std::vector<double> out;
    out.reserve(3 * v.size());
    for (const auto& p : v) out.insert(out.end(), p.begin(), p.end());
    return out;
}
void set_run_attributes(h5::File& file, const std::string& group, const RunInfo& r) {
    file.set_attribute(group, "formulation", to_string(r.formulation));
    file.set_attribute(group, "wavenumber", r.wavenumber);
    file.set_attribute(group, "frequency_hz", r.frequency);
    file.set_attribute(group, "speed_of_sound", r.speed_of_sound);
    file.set_attribute(group, "incident", r.incident.point_source ? "point_source" : "plane_wave");
    file.set_attribute(group, "incident_vector",
                       std::vector<double>(r.incident.point_source ? r.incident.source.begin() : r.incident.direction.begin(),
                                           r.incident.point_source ? r.incident.source.end() : r.incident.direction.end()));
    file.set_attribute(group, "solver", to_string(r.solve.method));
    file.set_attribute(group, "solver_path", r.solve.path);
    file.set_attribute(group, "iterations", r.solve.iterations);
    file.set_attribute(group, "scaled_residual", r.solve.scaled_residual);
    file.set_attribute(group, "rcond_estimate", r.solve.rcond);
    file.set_attribute(group, "solve_seconds", r.solve.seconds);
    file.set_attribute(group, "assembly_seconds", r.assembly_seconds);
}
}  // namespace

void write_surface_h5(const std::string& path, const Mesh& mesh, const std::vector<RunInfo>& runs,
                      const std::vector<std::vector<cd>>& solutions, bool force, const std::vector<std::string>& inputs) {
    h5::File file = h5::File::create(path, force ? h5::Existing::replace : h5::Existing::refuse, inputs);
    file.set_attribute("/", "schema", "bem_acoustics.surface/1");
    file.set_attribute("/", "mesh_source", mesh.source);
    file.write("/mesh/vertices", flatten(mesh.vertices).data(), h5::Shape{mesh.vertex_count(), 3});
    std::vector<std::int32_t> tri;
    for (const auto& t : mesh.triangles) tri.insert(tri.end(), t.begin(), t.end());
    file.write("/mesh/triangles", tri.data(), h5::Shape{mesh.triangle_count(), 3});
    for (std::size_t f = 0; f < runs.size(); ++f) {
        const std::string group = "/f" + std::to_string(f);
        file.create_group(group);
        set_run_attributes(file, group, runs[f]);
        file.write(group + "/solution", solutions[f]);
        file.set_attribute(group + "/solution", "located_on", runs[f].formulation == Formulation::soft_p0 ? "triangles" : "vertices");
    }
    file.set_attribute("/", "command_line", runs.empty() ? std::string() : runs[0].command_line);
    file.commit();
}

void write_surface_vtu(const std::string& path, const Mesh& mesh, Formulation f, const std::vector<cd>& solution,
                       const batchsolve::io::OutputOptions& rules) {
    batchsolve::io::OutputStream file(path, rules);
    std::ostream& out = file.stream();
    out.precision(12);
    const bool on_cells = f == Formulation::soft_p0;
    out << "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">\n<UnstructuredGrid>\n"
        << "<Piece NumberOfPoints=\"" << mesh.vertex_count() << "\" NumberOfCells=\"" << mesh.triangle_count() << "\">\n"
        << "<Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n";
    for (const auto& v : mesh.vertices) out << v[0] << ' ' << v[1] << ' ' << v[2] << '\n';
    out << "</DataArray></Points>\n<Cells><DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">\n";
    for (const auto& t : mesh.triangles) out << t[0] << ' ' << t[1] << ' ' << t[2] << '\n';
    out << "</DataArray><DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">\n";
    for (std::size_t t = 0; t < mesh.triangle_count(); ++t) out << 3 * (t + 1) << '\n';
    out << "</DataArray><DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n";
    for (std::size_t t = 0; t < mesh.triangle_count(); ++t) out << "5\n";  // VTK_TRIANGLE
    out << "</DataArray></Cells>\n" << (on_cells ? "<CellData>" : "<PointData>") << '\n';
    const char* name = f == Formulation::hard_p1 ? "total_field" : "density";
    for (const char* part : {"real", "imag", "abs"}) {
        out << "<DataArray type=\"Float64\" Name=\"" << name << '_' << part << "\" format=\"ascii\">\n";
        for (const cd& v : solution) out << (part[0] == 'r' ? v.real() : part[0] == 'i' ? v.imag() : std::abs(v)) << '\n';
        out << "</DataArray>\n";
    }
    out << (on_cells ? "</CellData>" : "</PointData>") << "\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n";
    file.commit();
}

FarFieldTable far_field_directions(const std::array<double, 3>& d, int count, bool full_circle) {
    if (count < 2) throw std::invalid_argument("--angles: need at least 2 angles (got " + std::to_string(count) + ")");
    // A unit vector t orthogonal to d: the plane of the pattern contains d and t.
    std::array<double, 3> helper = std::abs(d[2]) < 0.9 ? std::array<double, 3>{0, 0, 1} : std::array<double, 3>{0, 1, 0};
    std::array<double, 3> t{helper[1] * d[2] - helper[2] * d[1], helper[2] * d[0] - helper[0] * d[2], helper[0] * d[1] - helper[1] * d[0]};
    const double len = std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    for (double& c : t) c /= len;
    FarFieldTable table;
    for (int a = 0; a < count; ++a) {
        const double deg = full_circle ? 360.0 * a / count : 180.0 * a / (count - 1);
        const double th = deg * M_PI / 180;
        table.angles_deg.push_back(deg);
        table.directions.push_back({std::cos(th) * d[0] + std::sin(th) * t[0], std::cos(th) * d[1] + std::sin(th) * t[1],
                                    std::cos(th) * d[2] + std::sin(th) * t[2]});
    }
    return table;
}

void write_far_field_csv(const std::string& path, const FarFieldTable& t, double reference_area, const batchsolve::io::OutputOptions& rules) {
    batchsolve::io::OutputStream file(path, rules);
    std::ostream& out = file.stream();
    out.precision(12);
    const bool ref = !t.reference.empty();
    out << "theta_deg,re,im,abs,level_db" << (ref ? ",mie_re,mie_im,mie_level_db" : "") << '\n';
    auto level = [reference_area](cd v) { return 10 * std::log10(4 * M_PI * std::norm(v) / reference_area); };
    for (std::size_t a = 0; a < t.values.size(); ++a) {
        out << t.angles_deg[a] << ',' << t.values[a].real() << ',' << t.values[a].imag() << ',' << std::abs(t.values[a]) << ','
            << level(t.values[a]);
        if (ref) out << ',' << t.reference[a].real() << ',' << t.reference[a].imag() << ',' << level(t.reference[a]);
        out << '\n';
    }
    file.commit();
}

std::vector<std::array<double, 3>> PlaneGrid::points() const {
    std::vector<std::array<double, 3>> p;
    p.reserve(std::size_t(nu) * std::size_t(nv));
    for (int j = 0; j < nv; ++j)
        for (int i = 0; i < nu; ++i) {
            const double s = nu > 1 ? double(i) / (nu - 1) : 0, r = nv > 1 ? double(j) / (nv - 1) : 0;
            p.push_back({origin[0] + s * u[0] + r * v[0], origin[1] + s * u[1] + r * v[1], origin[2] + s * u[2] + r * v[2]});
        }
    return p;
}

PlaneGrid parse_plane_grid(const std::string& spec) {
    std::map<std::string, std::string> kv;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const auto eq = item.find('=');
        if (eq == std::string::npos) throw std::invalid_argument("--grid: expected key=value items, got '" + item + "'");
        kv[item.substr(0, eq)] = item.substr(eq + 1);
    }
    for (const auto& [key, value] : kv)
        if (key != "plane" && key != "extent" && key != "n" && key != "offset")
            throw std::invalid_argument("--grid: unknown key '" + key + "' (plane, extent, n, offset)");
    const std::string plane = kv.count("plane") ? kv["plane"] : "xz";
    double extent = 3, offset = 0;
    int n = 101;
    try {
        if (kv.count("extent")) extent = std::stod(kv["extent"]);
        if (kv.count("offset")) offset = std::stod(kv["offset"]);
        if (kv.count("n")) n = std::stoi(kv["n"]);
    } catch (const std::exception&) {
        throw std::invalid_argument("--grid: extent, offset and n must be numbers ('" + spec + "')");
    }
    if (!(extent > 0) || n < 2 || n > 2000) throw std::invalid_argument("--grid: extent must be > 0 and n in 2..2000");
    int a, b, c;
    if (plane == "xy") { a = 0; b = 1; c = 2; }
    else if (plane == "xz") { a = 0; b = 2; c = 1; }
    else if (plane == "yz") { a = 1; b = 2; c = 0; }
    else throw std::invalid_argument("--grid: plane must be xy, xz or yz");
    PlaneGrid g;
    g.nu = g.nv = n;
    g.origin[a] = -extent;
    g.origin[b] = -extent;
    g.origin[c] = offset;
    g.u[a] = 2 * extent;
    g.v[b] = 2 * extent;
    return g;
}

void write_grid_h5(const std::string& path, const PlaneGrid& grid, const std::vector<cd>& incident, const std::vector<cd>& scattered,
                   bool force, const std::vector<std::string>& inputs) {
    h5::File file = h5::File::create(path, force ? h5::Existing::replace : h5::Existing::refuse, inputs);
    file.set_attribute("/", "schema", "bem_acoustics.grid/1");
    const auto pts = grid.points();
    const h5::Shape shape{std::uint64_t(grid.nv), std::uint64_t(grid.nu)};
    file.write("/points", flatten(pts).data(), h5::Shape{std::uint64_t(grid.nv), std::uint64_t(grid.nu), 3});
    file.write("/incident", incident.data(), shape);
    file.write("/scattered", scattered.data(), shape);
    std::vector<cd> total(incident.size());
    for (std::size_t i = 0; i < total.size(); ++i) total[i] = incident[i] + scattered[i];
    file.write("/total", total.data(), shape);
    file.commit();
}

void write_grid_vtk(const std::string& path, const PlaneGrid& grid, const std::vector<cd>& incident, const std::vector<cd>& scattered,
                    const batchsolve::io::OutputOptions& rules) {
    batchsolve::io::OutputStream file(path, rules);
    std::ostream& out = file.stream();
    out.precision(12);
    out << "# vtk DataFile Version 3.0\nbem_acoustics field on a plane grid\nASCII\nDATASET STRUCTURED_GRID\nDIMENSIONS " << grid.nu << ' '
        << grid.nv << " 1\nPOINTS " << std::size_t(grid.nu) * grid.nv << " double\n";
    for (const auto& p : grid.points()) out << p[0] << ' ' << p[1] << ' ' << p[2] << '\n';
    out << "POINT_DATA " << incident.size() << '\n';
    auto field = [&](const char* name, auto value) {
        out << "SCALARS " << name << " double 1\nLOOKUP_TABLE default\n";
        for (std::size_t i = 0; i < incident.size(); ++i) out << value(i) << '\n';
    };
    field("total_real", [&](std::size_t i) { return (incident[i] + scattered[i]).real(); });
    field("total_abs", [&](std::size_t i) { return std::abs(incident[i] + scattered[i]); });
    field("scattered_real", [&](std::size_t i) { return scattered[i].real(); });
    field("scattered_abs", [&](std::size_t i) { return std::abs(scattered[i]); });
    file.commit();
}

void write_matrix_h5(const std::string& path, const Matrix& m, const RunInfo& info, const std::vector<cd>& rhs, bool force,
                     const std::vector<std::string>& inputs) {
    h5::File file = h5::File::create(path, force ? h5::Existing::replace : h5::Existing::refuse, inputs);
    file.set_attribute("/", "schema", "bem_acoustics.matrix/1");
    file.set_attribute("/", "symmetry", "complex_symmetric");
    file.set_attribute("/", "storage", "column_major");
    file.set_attribute("/", "mesh_source", info.mesh_source);
    file.set_attribute("/", "formulation", to_string(info.formulation));
    file.set_attribute("/", "wavenumber", info.wavenumber);
    // Column-major n x n is the row-major (n, n) array of A^T = A: the same numbers either way.
    file.write("/A", m.a.data(), h5::Shape{m.n, m.n});
    file.write("/b", rhs);
    file.commit();
}

}  // namespace bem
