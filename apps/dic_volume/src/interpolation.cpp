// B-spline prefilter (Unser's recursive filters), the quintic sampler of the generator and the
// reference-image gradients used by the IC-GN Hessian.
#include "interpolation.hpp"

#include "volume_math.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace dvc {

Interpolation parse_interpolation(const std::string& text) {
    if (text == "cubic" || text == "cubic_bspline" || text == "bspline") return Interpolation::cubic_bspline;
    if (text == "omoms" || text == "cubic_omoms") return Interpolation::cubic_omoms;
    if (text == "quintic" || text == "quintic_bspline") return Interpolation::quintic_bspline;
    if (text == "linear" || text == "trilinear") return Interpolation::trilinear;
    throw Error("--interpolation: '" + text + "' is not one of cubic, omoms, quintic, trilinear");
}

const char* to_string(Interpolation i) {
    switch (i) {
        case Interpolation::cubic_bspline: return "cubic";
        case Interpolation::cubic_omoms: return "omoms";
        case Interpolation::quintic_bspline: return "quintic";
        case Interpolation::trilinear: break;
    }
    return "trilinear";
}

int prefilter_degree(Interpolation i) {
    switch (i) {
        case Interpolation::cubic_bspline: return 3;
        case Interpolation::cubic_omoms: return kOmomsPrefilter;
        case Interpolation::quintic_bspline: return 5;
        case Interpolation::trilinear: break;
    }
    return 0;
}

namespace {

inline std::int64_t mirror(std::int64_t i, std::int64_t n) { return mirror_index(i, n); }

// Degree-5 B-spline weights of taps floor(x)-2 .. floor(x)+3 at fraction t.
void quintic_weights(double t, double w[6]) {
    for (int k = 0; k < 6; ++k) {
        const double d = std::fabs(t - double(k - 2));
        double v = 0.0;
        if (d < 1.0) v = 11.0 / 20.0 - d * d / 2.0 + d * d * d * d / 4.0 - d * d * d * d * d / 12.0;
        else if (d < 2.0) v = 17.0 / 40.0 + 5.0 * d / 8.0 - 7.0 * d * d / 4.0 + 5.0 * d * d * d / 4.0 - 3.0 * d * d * d * d / 8.0 + d * d * d * d * d / 24.0;
        else if (d < 3.0) { const double e = 3.0 - d; v = e * e * e * e * e / 120.0; }
        w[k] = v;
    }
}

}  // namespace

std::vector<float> interpolation_coefficients(const Volume& v, Interpolation i) {
    if (!is_spline(i)) throw Error("interpolation_coefficients: trilinear interpolation has no coefficients");
    return bspline_coefficients(v, prefilter_degree(i));
}

std::vector<float> bspline_coefficients(const Volume& v, int degree) {
    if (degree != 3 && degree != 5 && degree != kOmomsPrefilter)
        throw Error("bspline_coefficients: degree " + std::to_string(degree) + " (3, 5 or the O-MOMS code supported)");
    const SplinePoles poles = spline_poles(degree);
    std::vector<float> c(v.data);
    const std::int64_t nz = v.nz(), ny = v.ny(), nx = v.nx();
    const std::int64_t lengths[3] = {nz, ny, nx};
    const std::int64_t strides[3] = {ny * nx, nx, 1};
    for (int axis = 2; axis >= 0; --axis) {
        const std::int64_t n = lengths[axis], stride = strides[axis];
        const std::int64_t lines = nz * ny * nx / n;
#pragma omp parallel
        {
            std::vector<double> line(static_cast<std::size_t>(n));
#pragma omp for schedule(static)
            for (std::int64_t l = 0; l < lines; ++l) {
                // The l-th line along `axis`: its first element's offset.
                std::int64_t base;
                if (axis == 2) base = l * nx;
                else if (axis == 1) base = (l / nx) * ny * nx + (l % nx);
                else base = l;
                for (std::int64_t k = 0; k < n; ++k) line[k] = c[base + k * stride];
                prefilter_line_strided(line.data(), n, 1, poles);
                for (std::int64_t k = 0; k < n; ++k) c[base + k * stride] = float(line[k]);
            }
        }
    }
    return c;
}

double sample_quintic(const std::vector<float>& c, const Dims& dims, double z, double y, double x) {
    const double fz = std::floor(z), fy = std::floor(y), fx = std::floor(x);
    double wz[6], wy[6], wx[6];
    quintic_weights(z - fz, wz);
    quintic_weights(y - fy, wy);
    quintic_weights(x - fx, wx);
    std::int64_t iz[6], iy[6], ix[6];
    for (int k = 0; k < 6; ++k) {
        iz[k] = mirror(std::int64_t(fz) - 2 + k, dims[0]);
        iy[k] = mirror(std::int64_t(fy) - 2 + k, dims[1]);
        ix[k] = mirror(std::int64_t(fx) - 2 + k, dims[2]);
    }
    double sum = 0.0;
    for (int a = 0; a < 6; ++a) {
        double plane = 0.0;
        for (int b = 0; b < 6; ++b) {
            const float* row = &c[std::size_t((iz[a] * dims[1] + iy[b]) * dims[2])];
            double r = 0.0;
            for (int k = 0; k < 6; ++k) r += wx[k] * row[ix[k]];
            plane += wy[b] * r;
        }
        sum += wz[a] * plane;
    }
    return sum;
}

void image_gradients(const Volume& image, const std::vector<float>* coefficients, Interpolation interp,
                     std::vector<float>& gz, std::vector<float>& gy, std::vector<float>& gx) {
    const std::int64_t nz = image.nz(), ny = image.ny(), nx = image.nx();
    const bool cubic = is_spline(interp);
    if (cubic && (!coefficients || coefficients->size() != image.voxels()))
        throw Error("image_gradients: the spline gradient needs the volume's cubic B-spline coefficients");
    const float* src = cubic ? coefficients->data() : image.data.data();
    gz.assign(image.voxels(), 0.0f), gy.assign(image.voxels(), 0.0f), gx.assign(image.voxels(), 0.0f);
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t z = 0; z < nz; ++z)
        for (std::int64_t y = 0; y < ny; ++y)
            for (std::int64_t x = 0; x < nx; ++x) {
                float g[3];
                gradient_at(src, nz, ny, nx, z, y, x, cubic, g);
                const float dz = g[0], dy = g[1], dx = g[2];
                const std::size_t i = image.index(z, y, x);
                gz[i] = dz, gy[i] = dy, gx[i] = dx;
            }
}

}  // namespace dvc
