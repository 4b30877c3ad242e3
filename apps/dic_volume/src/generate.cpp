// Speckle synthesis (smoothed noise or Gaussian blobs) and exact resampling by known fields.
#include "generate.hpp"

#include <omp.h>

#include <cmath>
#include <random>

#include "interpolation.hpp"
#include "volume_math.hpp"

namespace dvc {

SpeckleKind parse_speckle_kind(const std::string& text) {
    if (text == "noise" || text == "smoothed_noise") return SpeckleKind::smoothed_noise;
    if (text == "blobs") return SpeckleKind::blobs;
    throw Error("--speckle: '" + text + "' is not one of noise, blobs");
}

void gaussian_smooth(Volume& v, double sigma) {
    if (sigma <= 0) return;
    const int radius = gaussian_radius(sigma);
    std::vector<double> kernel(2 * radius + 1);
    gaussian_taps(sigma, kernel.data());
    const std::int64_t n[3] = {v.nz(), v.ny(), v.nx()}, stride[3] = {v.ny() * v.nx(), v.nx(), 1};
    for (int axis = 0; axis < 3; ++axis) {
        const std::int64_t len = n[axis], lines = std::int64_t(v.voxels()) / len;
#pragma omp parallel
        {
            std::vector<float> line(len);
#pragma omp for
            for (std::int64_t l = 0; l < lines; ++l) {
                std::int64_t base = axis == 2 ? l * n[2] : axis == 1 ? (l / n[2]) * n[1] * n[2] + l % n[2] : l;
                for (std::int64_t k = 0; k < len; ++k) line[k] = v.data[base + k * stride[axis]];
                for (std::int64_t k = 0; k < len; ++k)
                    v.data[base + k * stride[axis]] = float(gaussian_at(line.data(), len, 1, k, kernel.data(), radius));
            }
        }
    }
}

namespace {

void normalise(Volume& v, double mean, double contrast) {
    // Sums per z slice on all threads, then over the slices in order: the same result for any
    // thread count (as the speckle's per-slice generators).
    const std::int64_t slice = v.ny() * v.nx();
    std::vector<double> s(std::size_t(v.nz()), 0.0), ss(std::size_t(v.nz()), 0.0);
#pragma omp parallel for schedule(static)
    for (std::int64_t z = 0; z < v.nz(); ++z) {
        double a = 0, b = 0;
        for (std::int64_t i = z * slice; i < (z + 1) * slice; ++i) a += v.data[i], b += double(v.data[i]) * v.data[i];
        s[z] = a, ss[z] = b;
    }
    double total = 0, total_sq = 0;
    for (std::int64_t z = 0; z < v.nz(); ++z) total += s[z], total_sq += ss[z];
    const double m = total / v.voxels(), sd = std::sqrt(std::max(total_sq / v.voxels() - m * m, 1e-30));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < std::int64_t(v.voxels()); ++i) v.data[i] = float(mean + contrast * (v.data[i] - m) / sd);
}

}  // namespace

Volume make_speckle(const SpeckleOptions& o) {
    checked_volume_bytes(o.dims, sizeof(float), "--size");
    if (!(o.sigma > 0)) throw Error("--sigma: must be positive");
    Volume v;
    v.dims = o.dims;
    v.data.assign(v.voxels(), 0.0f);
    if (o.kind == SpeckleKind::smoothed_noise) {
        // One generator per z slice keeps the result independent of the thread count.
#pragma omp parallel for
        for (std::int64_t z = 0; z < v.nz(); ++z) {
            std::mt19937_64 rng(o.seed * 1000003ULL + std::uint64_t(z));
            std::normal_distribution<float> normal(0.0f, 1.0f);
            for (std::int64_t i = 0; i < v.ny() * v.nx(); ++i) v.data[v.index(z, 0, 0) + i] = normal(rng);
        }
        gaussian_smooth(v, o.sigma);
    } else {
        std::mt19937_64 rng(o.seed);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        const std::int64_t blobs = std::max<std::int64_t>(1, std::int64_t(o.blob_density * double(v.voxels()) / (o.sigma * o.sigma * o.sigma)));
        const int radius = int(std::ceil(3 * o.sigma));
        for (std::int64_t b = 0; b < blobs; ++b) {
            const double c[3] = {unit(rng) * v.nz(), unit(rng) * v.ny(), unit(rng) * v.nx()};
            const double amp = 0.5 + 0.5 * unit(rng);
            for (std::int64_t z = std::max<std::int64_t>(0, std::int64_t(c[0]) - radius); z <= std::min<std::int64_t>(v.nz() - 1, std::int64_t(c[0]) + radius); ++z)
                for (std::int64_t y = std::max<std::int64_t>(0, std::int64_t(c[1]) - radius); y <= std::min<std::int64_t>(v.ny() - 1, std::int64_t(c[1]) + radius); ++y)
                    for (std::int64_t x = std::max<std::int64_t>(0, std::int64_t(c[2]) - radius); x <= std::min<std::int64_t>(v.nx() - 1, std::int64_t(c[2]) + radius); ++x) {
                        const double d2 = (z - c[0]) * (z - c[0]) + (y - c[1]) * (y - c[1]) + (x - c[2]) * (x - c[2]);
                        v.at(z, y, x) += float(amp * std::exp(-0.5 * d2 / (o.sigma * o.sigma)));
                    }
        }
    }
    normalise(v, o.mean, o.contrast);
    return v;
}

Point3 DisplacementField::displacement(const Point3& X) const {
    Point3 u;
    const double d[3] = {X[0] - centre[0], X[1] - centre[1], X[2] - centre[2]};
    for (int i = 0; i < 3; ++i) u[i] = translation[i] + gradient[3 * i] * d[0] + gradient[3 * i + 1] * d[1] + gradient[3 * i + 2] * d[2];
    if (amplitude != 0) {
        const double k = 2 * M_PI / wavelength;
        u[0] += amplitude * std::sin(k * X[2]);
        u[1] += amplitude * std::sin(k * X[0]);
        u[2] += amplitude * std::sin(k * X[1]);
    }
    return u;
}

std::array<double, 9> DisplacementField::displacement_gradient(const Point3& X) const {
    auto g = gradient;
    if (amplitude != 0) {
        const double k = 2 * M_PI / wavelength;
        g[2] += amplitude * k * std::cos(k * X[2]);  // du_z/dx
        g[3] += amplitude * k * std::cos(k * X[0]);  // du_y/dz
        g[7] += amplitude * k * std::cos(k * X[1]);  // du_x/dy
    }
    return g;
}

DisplacementField rotation_field(double degrees, char axis, const std::array<double, 3>& centre) {
    DisplacementField f;
    f.kind = "rotation";
    f.centre = centre;
    const double a = degrees * M_PI / 180.0, c = std::cos(a), s = std::sin(a);
    // Rotation in the plane of the two other axes (z y x order: axis index 0, 1, 2).
    const int k = axis == 'z' ? 0 : axis == 'y' ? 1 : axis == 'x' ? 2 : -1;
    if (k < 0) throw Error("--rotation-axis: '" + std::string(1, axis) + "' is not one of z, y, x");
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    std::array<double, 9> R{1, 0, 0, 0, 1, 0, 0, 0, 1};
    R[3 * i + i] = c, R[3 * i + j] = -s, R[3 * j + i] = s, R[3 * j + j] = c;
    for (int q = 0; q < 9; ++q) f.gradient[q] = R[q] - (q % 4 == 0 ? 1.0 : 0.0);
    return f;
}

namespace {

// A rigid translation by whole voxels: the degree-5 spline at the nodes is the samples themselves
// (it interpolates them, and its mirrored coefficients are the mirrored samples' coefficients), so
// g(x) = f(mirror(x - t)) exactly, without the prefilter or the 216-tap sampling.
bool whole_voxel_translation(const DisplacementField& field) {
    if (field.amplitude != 0) return false;
    for (double g : field.gradient)
        if (g != 0) return false;
    for (double t : field.translation)
        if (t != std::round(t)) return false;
    return true;
}

}  // namespace

Volume deform(Volume& reference, const DisplacementField& field, const DeformOptions& o) {
    Volume g;
    g.dims = reference.dims;
    g.voxel_size = reference.voxel_size;
    g.data.resize(reference.voxels());
    if (whole_voxel_translation(field)) {
        const std::int64_t t[3] = {std::int64_t(field.translation[0]), std::int64_t(field.translation[1]), std::int64_t(field.translation[2])};
#pragma omp parallel for collapse(2) schedule(static)
        for (std::int64_t z = 0; z < g.nz(); ++z)
            for (std::int64_t y = 0; y < g.ny(); ++y) {
                const std::int64_t zs = mirror_index(z - t[0], g.nz()), ys = mirror_index(y - t[1], g.ny());
                for (std::int64_t x = 0; x < g.nx(); ++x)
                    g.at(z, y, x) = float(o.contrast * reference.at(zs, ys, mirror_index(x - t[2], g.nx())) + o.brightness);
            }
    } else {
        const auto coefficients = bspline_coefficients(reference, 5);
#pragma omp parallel for collapse(2) schedule(dynamic, 4)
        for (std::int64_t z = 0; z < g.nz(); ++z)
            for (std::int64_t y = 0; y < g.ny(); ++y)
                for (std::int64_t x = 0; x < g.nx(); ++x) {
                    const Point3 target{double(z), double(y), double(x)};
                    // X = x - u(X): a contraction for |grad u| < 1; 60 steps reach rounding for |grad u| <= 0.5.
                    Point3 X = target;
                    for (int it = 0; it < 60; ++it) {
                        const Point3 u = field.displacement(X);
                        Point3 next{target[0] - u[0], target[1] - u[1], target[2] - u[2]};
                        const double change = std::fabs(next[0] - X[0]) + std::fabs(next[1] - X[1]) + std::fabs(next[2] - X[2]);
                        X = next;
                        if (change < 1e-13) break;
                    }
                    g.at(z, y, x) = float(o.contrast * sample_quintic(coefficients, reference.dims, X[0], X[1], X[2]) + o.brightness);
                }
    }
    if (o.noise_sigma > 0) {
        for (int which = 0; which < 2; ++which) {
            Volume& v = which == 0 ? reference : g;
#pragma omp parallel for
            for (std::int64_t z = 0; z < v.nz(); ++z) {
                std::mt19937_64 rng(o.noise_seed * 7919ULL + std::uint64_t(which) * 1000003ULL + std::uint64_t(z));
                std::normal_distribution<float> normal(0.0f, float(o.noise_sigma));
                for (std::int64_t i = 0; i < v.ny() * v.nx(); ++i) v.data[v.index(z, 0, 0) + i] += normal(rng);
            }
        }
    }
    return g;
}

}  // namespace dvc
