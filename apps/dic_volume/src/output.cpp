// Writers of the correlation results: HDF5, VTK XML (.vti, .vtu) and the PNG slice.
#include "output.hpp"

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <memory>

#include "batchsolve_io/output.hpp"
#include "timeline.hpp"

namespace dvc {

namespace h5 = batchsolve::io::h5;

TruthComparison compare_with_truth(const CorrelationResult& r, const DisplacementField& field) {
    TruthComparison t;
    t.present = true;
    t.field = field;
    const std::size_t n = r.grid.centres.size();
    t.displacement.resize(3 * n), t.error.resize(3 * n);
    for (std::size_t k = 0; k < n; ++k) {
        const auto u = field.displacement(r.grid.centres[k]);
        for (int i = 0; i < 3; ++i) t.displacement[3 * k + i] = u[i], t.error[3 * k + i] = r.params[12 * k + i] - u[i];
    }
    return t;
}

void write_field_attributes(h5::File& f, const std::string& g, const DisplacementField& d) {
    f.create_group(g);
    f.set_attribute(g, "kind", d.kind);
    f.set_attribute(g, "translation", std::vector<double>(d.translation.begin(), d.translation.end()));
    f.set_attribute(g, "gradient", std::vector<double>(d.gradient.begin(), d.gradient.end()));
    f.set_attribute(g, "centre", std::vector<double>(d.centre.begin(), d.centre.end()));
    f.set_attribute(g, "amplitude", d.amplitude);
    f.set_attribute(g, "wavelength", d.wavelength);
    f.set_attribute(g, "formula", "u(X) = translation + gradient (X - centre) + amplitude (sin(2 pi X_x / w), sin(2 pi X_z / w), sin(2 pi X_y / w)), z y x order, voxels");
}

DisplacementField read_field_attributes(const h5::File& f, const std::string& g) {
    DisplacementField d;
    auto vec = [&](const char* name, std::size_t n) {
        auto v = f.doubles_attribute(g, name);
        if (v.size() != n) throw Error(f.path() + ": " + g + ": attribute " + name + " has " + std::to_string(v.size()) + " values, " + std::to_string(n) + " expected");
        return v;
    };
    d.kind = f.string_attribute(g, "kind");
    auto t = vec("translation", 3), L = vec("gradient", 9), c = vec("centre", 3);
    std::copy(t.begin(), t.end(), d.translation.begin());
    std::copy(L.begin(), L.end(), d.gradient.begin());
    std::copy(c.begin(), c.end(), d.centre.begin());
    d.amplitude = f.double_attribute(g, "amplitude");
    d.wavelength = f.double_attribute(g, "wavelength");
    // A field with a NaN or Inf in it compares every point with NaN: refused, not reported as 0 error.
    bool finite = std::isfinite(d.amplitude) && std::isfinite(d.wavelength);
    for (double x : t) finite = finite && std::isfinite(x);
    for (double x : L) finite = finite && std::isfinite(x);
    for (double x : c) finite = finite && std::isfinite(x);
    if (!finite) throw Error(f.path() + ": " + g + ": the field's attributes are not all finite numbers (NaN or Inf)");
    return d;
}

namespace {

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

}  // namespace

void write_results_h5(const std::string& path, bool force, const std::vector<std::string>& inputs, const CorrelationResult& r,
                      const FieldStrain& fs, const TruthComparison& truth, const RunDescription& run, h5::WriteMode mode) {
    const std::uint64_t n = r.grid.centres.size();
    auto f = h5::File::create(path, force ? h5::Existing::replace : h5::Existing::refuse, inputs, mode);
    // Derived per-point arrays (39 MB at 2e5 points): not zero-filled by one thread first, but
    // filled, and so first touched, by all threads.
    auto uninitialised = [](std::size_t count) { return std::unique_ptr<double[]>(new double[count]); };
    const auto centre = uninitialised(3 * n), disp = uninitialised(3 * n), F = uninitialised(9 * n), E = uninitialised(9 * n);
    const std::int64_t points = std::int64_t(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < points; ++k) {
        for (int i = 0; i < 3; ++i) centre[3 * k + i] = r.grid.centres[k][i], disp[3 * k + i] = r.params[12 * k + i];
        const double* G = &r.params[12 * k + 3];
        const auto e = green_lagrange(G);
        for (int q = 0; q < 9; ++q) F[9 * k + q] = G[q] + (q % 4 == 0 ? 1.0 : 0.0), E[9 * k + q] = e[q];
    }
    std::vector<std::int32_t> status(r.status.begin(), r.status.end()), pass(r.pass.begin(), r.pass.end());
    // The point datasets are stored without deflate: float64 results compress to about half, but
    // deflate runs at tens of MB/s on one thread, so at 10^5 points it took seconds, longer than
    // the correlation on a GPU (3.6 s for 110,592 points on the 2-core machine).
    constexpr bool compress = false;
    f.write("/points/centre", centre.get(), {n, 3}, compress);
    f.write("/points/grid_index", r.grid.grid_index.data(), {n}, compress);
    f.write("/points/displacement", disp.get(), {n, 3}, compress);
    f.write("/points/parameters", r.params.data(), {n, 12}, compress);
    f.write("/points/deformation_gradient", F.get(), {n, 3, 3}, compress);
    f.write("/points/strain_subset", E.get(), {n, 3, 3}, compress);
    f.write("/points/strain_field", fs.strain.data(), {n, 3, 3}, compress);
    f.write("/points/strain_field_valid", fs.valid.data(), {n}, compress);
    f.write("/points/zncc", r.zncc.data(), {n}, compress);
    f.write("/points/iterations", r.iterations.data(), {n}, compress);
    f.write("/points/status", status.data(), {n}, compress);
    f.write("/points/initial_shift", r.initial_shift.data(), {n, 3}, compress);
    f.write("/points/pass", pass.data(), {n}, compress);
    f.set_attribute("/points/status", "codes", "0 converged, 1 iteration_limit, 2 diverged, 3 flat_subset, 4 outside_volume, 5 low_correlation");
    f.set_attribute("/points/parameters", "order", "t_z t_y t_x G_zz G_zy G_zx G_yz G_yy G_yx G_xz G_xy G_xx (G_ij = du_i/dx_j)");
    f.create_group("/grid");
    f.set_attribute("/grid", "shape", std::vector<double>{double(r.grid.grid_shape[0]), double(r.grid.grid_shape[1]), double(r.grid.grid_shape[2])});
    f.set_attribute("/grid", "origin", std::vector<double>(r.grid.origin.begin(), r.grid.origin.end()));
    f.set_attribute("/grid", "spacing", std::int64_t(r.grid.spacing));
    if (truth.present) {
        f.write("/truth/displacement", truth.displacement.data(), {n, 3}, compress);
        f.write("/truth/error", truth.error.data(), {n, 3}, compress);
        write_field_attributes(f, "/truth", truth.field);
    }
    const auto& o = run.options;
    f.set_attribute("/", "reference", run.reference);
    f.set_attribute("/", "deformed", run.deformed);
    f.set_attribute("/", "command", run.command_line);
    f.set_attribute("/", "created", utc_now());
    f.set_attribute("/", "backend", r.backend);
    f.set_attribute("/", "subset", std::int64_t(o.icgn.subset));
    f.set_attribute("/", "spacing", std::int64_t(o.spacing));
    f.set_attribute("/", "interpolation", to_string(o.icgn.interpolation));
    f.set_attribute("/", "guess", to_string(o.guess));
    f.set_attribute("/", "tolerance", o.icgn.tolerance);
    f.set_attribute("/", "max_iterations", std::int64_t(o.icgn.max_iterations));
    f.create_group("/timings");
    f.set_attribute("/timings", "fft_guess_s", r.guess.fft_s);
    f.set_attribute("/timings", "prepare_s", r.icgn.prepare_s);
    f.set_attribute("/timings", "hessian_s", r.icgn.hessian_s);
    f.set_attribute("/timings", "factor_s", r.icgn.factor_s);
    f.set_attribute("/timings", "interpolation_s", r.icgn.interpolation_s);
    f.set_attribute("/timings", "solve_s", r.icgn.solve_s);
    f.set_attribute("/timings", "update_s", r.icgn.update_s);
    f.set_attribute("/timings", "total_s", r.total_s);
    timeline::mark("results_file_built");
    f.commit();
}

namespace {

// Grid-shaped copies of the per-point data for VTK (NaN / -1 where a grid node has no point).
struct GridArrays {
    std::vector<double> disp, strain;
    std::vector<float> zncc;
    std::vector<int> status;
};

GridArrays to_grid(const CorrelationResult& r, const FieldStrain& fs) {
    const auto& s = r.grid.grid_shape;
    const std::size_t total = std::size_t(s[0] * s[1] * s[2]);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    GridArrays g{std::vector<double>(3 * total, nan), std::vector<double>(9 * total, nan), std::vector<float>(total, float(nan)),
                 std::vector<int>(total, -1)};
    for (std::size_t k = 0; k < r.grid.centres.size(); ++k) {
        const std::size_t i = std::size_t(r.grid.grid_index[k]);
        // VTK vectors are (x, y, z).
        for (int a = 0; a < 3; ++a) g.disp[3 * i + a] = r.params[12 * k + 2 - a];
        for (int q = 0; q < 9; ++q) g.strain[9 * i + q] = fs.strain[9 * k + (2 - q / 3) * 3 + (2 - q % 3)];
        g.zncc[i] = r.zncc[k];
        g.status[i] = r.status[k];
    }
    return g;
}

template <class T>
void write_array(std::ostream& out, const char* type, const char* name, int components, const std::vector<T>& v) {
    out << "        <DataArray type=\"" << type << "\" Name=\"" << name << "\" NumberOfComponents=\"" << components
        << "\" format=\"ascii\">\n";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (std::isnan(double(v[i]))) out << "nan";
        else out << v[i];
        out << ((i + 1) % (components * 4) == 0 ? '\n' : ' ');
    }
    out << "\n        </DataArray>\n";
}


}  // namespace

void write_vti(const std::string& path, const CorrelationResult& r, const FieldStrain& fs, const batchsolve::io::OutputOptions& rules) {
    const auto g = to_grid(r, fs);
    const auto& s = r.grid.grid_shape;
    batchsolve::io::OutputStream file(path, rules);
    std::ostream& out = file.stream();
    out.precision(9);
    out << "<?xml version=\"1.0\"?>\n<VTKFile type=\"ImageData\" version=\"0.1\" byte_order=\"LittleEndian\">\n";
    out << "  <ImageData WholeExtent=\"0 " << s[2] - 1 << " 0 " << s[1] - 1 << " 0 " << s[0] - 1 << "\" Origin=\"" << r.grid.origin[2]
        << " " << r.grid.origin[1] << " " << r.grid.origin[0] << "\" Spacing=\"" << r.grid.spacing << " " << r.grid.spacing << " "
        << r.grid.spacing << "\">\n";
    out << "    <Piece Extent=\"0 " << s[2] - 1 << " 0 " << s[1] - 1 << " 0 " << s[0] - 1 << "\">\n";
    out << "      <PointData Vectors=\"displacement\" Scalars=\"zncc\">\n";
    write_array(out, "Float64", "displacement", 3, g.disp);
    write_array(out, "Float64", "strain_field", 9, g.strain);
    write_array(out, "Float32", "zncc", 1, g.zncc);
    write_array(out, "Int32", "status", 1, g.status);
    out << "      </PointData>\n    </Piece>\n  </ImageData>\n</VTKFile>\n";
    file.commit();
}

void write_vtu(const std::string& path, const CorrelationResult& r, const FieldStrain& fs, const batchsolve::io::OutputOptions& rules) {
    const std::size_t n = r.grid.centres.size();
    std::vector<double> pts(3 * n), disp(3 * n), strain(9 * n);
    std::vector<int> status(n), connectivity(n), offsets(n), types(n, 1 /* VTK_VERTEX */);
    for (std::size_t k = 0; k < n; ++k) {
        for (int a = 0; a < 3; ++a) pts[3 * k + a] = r.grid.centres[k][2 - a], disp[3 * k + a] = r.params[12 * k + 2 - a];
        for (int q = 0; q < 9; ++q) strain[9 * k + q] = fs.strain[9 * k + (2 - q / 3) * 3 + (2 - q % 3)];
        status[k] = r.status[k], connectivity[k] = int(k), offsets[k] = int(k + 1);
    }
    batchsolve::io::OutputStream file(path, rules);
    std::ostream& out = file.stream();
    out.precision(9);
    out << "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">\n";
    out << "  <UnstructuredGrid>\n    <Piece NumberOfPoints=\"" << n << "\" NumberOfCells=\"" << n << "\">\n";
    out << "      <Points>\n";
    write_array(out, "Float64", "position", 3, pts);
    out << "      </Points>\n      <Cells>\n";
    write_array(out, "Int32", "connectivity", 1, connectivity);
    write_array(out, "Int32", "offsets", 1, offsets);
    write_array(out, "UInt8", "types", 1, types);
    out << "      </Cells>\n      <PointData Vectors=\"displacement\" Scalars=\"zncc\">\n";
    write_array(out, "Float64", "displacement", 3, disp);
    write_array(out, "Float64", "strain_field", 9, strain);
    write_array(out, "Float32", "zncc", 1, r.zncc);
    write_array(out, "Int32", "status", 1, status);
    out << "      </PointData>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n";
    file.commit();
}

void write_png_rgb(const std::string& path, int width, int height, const std::vector<unsigned char>& rgb,
                   const batchsolve::io::OutputOptions& rules) {
    std::vector<unsigned char> raw;
    raw.reserve(std::size_t(height) * (3 * width + 1));
    for (int y = 0; y < height; ++y) {
        raw.push_back(0);  // filter: none
        raw.insert(raw.end(), rgb.begin() + std::size_t(y) * 3 * width, rgb.begin() + std::size_t(y + 1) * 3 * width);
    }
    uLongf packed_size = compressBound(uLong(raw.size()));
    std::vector<unsigned char> packed(packed_size);
    if (compress2(packed.data(), &packed_size, raw.data(), uLong(raw.size()), 6) != Z_OK) throw Error(path + ": zlib compression failed");
    packed.resize(packed_size);
    batchsolve::io::OutputStream file(path, rules);
    std::ostream& out = file.stream();
    auto u32 = [](std::vector<unsigned char>& v, std::uint32_t x) {
        for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<unsigned char>(x >> s));
    };
    auto chunk = [&](const char* type, const std::vector<unsigned char>& data) {
        std::vector<unsigned char> c;
        u32(c, std::uint32_t(data.size()));
        c.insert(c.end(), type, type + 4);
        c.insert(c.end(), data.begin(), data.end());
        std::vector<unsigned char> crc;
        u32(crc, std::uint32_t(crc32(0L, c.data() + 4, uInt(c.size() - 4))));
        out.write(reinterpret_cast<const char*>(c.data()), std::streamsize(c.size()));
        out.write(reinterpret_cast<const char*>(crc.data()), 4);
    };
    const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    out.write(reinterpret_cast<const char*>(signature), 8);
    std::vector<unsigned char> ihdr;
    u32(ihdr, std::uint32_t(width)), u32(ihdr, std::uint32_t(height));
    ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8-bit RGB, deflate, no filter choice, no interlace
    chunk("IHDR", ihdr);
    chunk("IDAT", packed);
    chunk("IEND", {});
    file.commit();
}

namespace {
// A perceptually ordered map (dark blue - teal - yellow), piecewise linear through 5 stops.
void colour(double t, unsigned char* rgb) {
    static const double stops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    t = std::clamp(t, 0.0, 1.0) * 4.0;
    const int i = std::min(3, int(t));
    const double f = t - i;
    for (int c = 0; c < 3; ++c) rgb[c] = static_cast<unsigned char>(std::lround(stops[i][c] + f * (stops[i + 1][c] - stops[i][c])));
}
}  // namespace

SliceRange write_slice_png(const std::string& path, const CorrelationResult& r, int component, std::int64_t slice, int scale,
                           const batchsolve::io::OutputOptions& rules) {
    const auto& s = r.grid.grid_shape;
    SliceRange range;
    range.slice = slice < 0 ? s[0] / 2 : slice;
    if (range.slice >= s[0]) throw Error("--png-slice: " + std::to_string(slice) + " is beyond the grid's " + std::to_string(s[0]) + " z slices");
    if (scale < 1 || scale > 64) throw Error("--png-scale: must be within 1..64");
    const std::size_t plane = std::size_t(s[1] * s[2]);
    std::vector<double> value(plane, std::numeric_limits<double>::quiet_NaN()), zncc(plane, std::numeric_limits<double>::quiet_NaN());
    range.lo = std::numeric_limits<double>::infinity(), range.hi = -range.lo;
    for (std::size_t k = 0; k < r.grid.centres.size(); ++k) {
        const std::int64_t g = r.grid.grid_index[k];
        if (g / std::int64_t(plane) != range.slice) continue;
        const std::size_t i = std::size_t(g % std::int64_t(plane));
        zncc[i] = r.zncc[k];
        if (r.status[k] != std::int8_t(PointStatus::converged)) continue;
        const double* t = &r.params[12 * k];
        value[i] = component == 3 ? std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]) : t[component];
        range.lo = std::min(range.lo, value[i]), range.hi = std::max(range.hi, value[i]);
    }
    if (!(range.hi >= range.lo)) range.lo = 0, range.hi = 1;
    const double span = range.hi > range.lo ? range.hi - range.lo : 1.0;
    range.zncc_lo = 0.5, range.zncc_hi = 1.0;
    const int gap = 2 * scale, w = int(2 * s[2] * scale + gap), h = int(s[1] * scale);
    std::vector<unsigned char> rgb(std::size_t(w) * h * 3, 255);
    for (std::int64_t y = 0; y < s[1]; ++y)
        for (std::int64_t x = 0; x < s[2]; ++x) {
            const std::size_t i = std::size_t(y * s[2] + x);
            unsigned char left[3] = {128, 128, 128}, right[3] = {128, 128, 128};
            if (std::isfinite(value[i])) colour((value[i] - range.lo) / span, left);
            if (std::isfinite(zncc[i])) colour((zncc[i] - range.zncc_lo) / (range.zncc_hi - range.zncc_lo), right);
            for (int a = 0; a < scale; ++a)
                for (int b = 0; b < scale; ++b) {
                    const std::size_t row = std::size_t(y * scale + a) * w;
                    std::copy(left, left + 3, &rgb[3 * (row + x * scale + b)]);
                    std::copy(right, right + 3, &rgb[3 * (row + s[2] * scale + gap + x * scale + b)]);
                }
        }
    write_png_rgb(path, w, h, rgb, rules);
    return range;
}

}  // namespace dvc
