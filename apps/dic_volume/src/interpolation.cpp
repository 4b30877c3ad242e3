// B-spline prefilter (Unser's recursive filters), the quintic sampler of the generator and the
// reference-image gradients used by the IC-GN Hessian.
#include "interpolation.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace dvc {

Interpolation parse_interpolation(const std::string& text) {
    if (text == "cubic" || text == "cubic_bspline" || text == "bspline") return Interpolation::cubic_bspline;
    if (text == "linear" || text == "trilinear") return Interpolation::trilinear;
    throw Error("--interpolation: '" + text + "' is not one of cubic, trilinear");
}

const char* to_string(Interpolation i) { return i == Interpolation::cubic_bspline ? "cubic" : "trilinear"; }

namespace {

// Causal initial value for mirror boundaries (exact sum over the mirrored signal).
double initial_causal(const double* c, std::int64_t n, double z) {
    if (n == 1) return c[0];
    double zn = z, iz = 1.0 / z, z2n = std::pow(z, double(n - 1));
    double sum = c[0] + z2n * c[n - 1];
    z2n *= z2n * iz;
    for (std::int64_t k = 1; k < n - 1; ++k) {
        sum += (zn + z2n) * c[k];
        zn *= z;
        z2n *= iz;
    }
    return sum / (1.0 - zn * zn);
}

void prefilter_line(double* c, std::int64_t n, const double* poles, int pole_count) {
    if (n == 1) return;
    double gain = 1.0;
    for (int p = 0; p < pole_count; ++p) gain *= (1.0 - poles[p]) * (1.0 - 1.0 / poles[p]);
    for (std::int64_t k = 0; k < n; ++k) c[k] *= gain;
    for (int p = 0; p < pole_count; ++p) {
        const double z = poles[p];
        c[0] = initial_causal(c, n, z);
        for (std::int64_t k = 1; k < n; ++k) c[k] += z * c[k - 1];
        c[n - 1] = (z / (z * z - 1.0)) * (z * c[n - 2] + c[n - 1]);
        for (std::int64_t k = n - 2; k >= 0; --k) c[k] = z * (c[k + 1] - c[k]);
    }
}

// Mirror an index into [0, n) (whole-sample symmetric: -1 -> 1, n -> n - 2).
inline std::int64_t mirror(std::int64_t i, std::int64_t n) {
    if (n == 1) return 0;
    const std::int64_t period = 2 * (n - 1);
    i %= period;
    if (i < 0) i += period;
    return i < n ? i : period - i;
}

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

std::vector<float> bspline_coefficients(const Volume& v, int degree) {
    double poles[2];
    int pole_count;
    if (degree == 3) poles[0] = std::sqrt(3.0) - 2.0, pole_count = 1;
    else if (degree == 5) poles[0] = -0.43057534709997379, poles[1] = -0.043096288203264653, pole_count = 2;
    else throw Error("bspline_coefficients: degree " + std::to_string(degree) + " (3 or 5 supported)");
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
                prefilter_line(line.data(), n, poles, pole_count);
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
    const bool cubic = interp == Interpolation::cubic_bspline;
    if (cubic && (!coefficients || coefficients->size() != image.voxels()))
        throw Error("image_gradients: the cubic gradient needs the volume's coefficients");
    const float* src = cubic ? coefficients->data() : image.data.data();
    gz.assign(image.voxels(), 0.0f), gy.assign(image.voxels(), 0.0f), gx.assign(image.voxels(), 0.0f);
    // The derivative of the cubic spline at a node is the central difference of the coefficients along
    // the axis, smoothed by the node values of the B-spline (1, 4, 1) / 6 along the other two axes.
    const float smooth[3] = {cubic ? 1.0f / 6.0f : 0.0f, cubic ? 4.0f / 6.0f : 1.0f, cubic ? 1.0f / 6.0f : 0.0f};
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t z = 0; z < nz; ++z)
        for (std::int64_t y = 0; y < ny; ++y)
            for (std::int64_t x = 0; x < nx; ++x) {
                const std::int64_t zi[3] = {mirror(z - 1, nz), z, mirror(z + 1, nz)};
                const std::int64_t yi[3] = {mirror(y - 1, ny), y, mirror(y + 1, ny)};
                const std::int64_t xi[3] = {mirror(x - 1, nx), x, mirror(x + 1, nx)};
                auto at = [&](int a, int b, int d) { return src[(zi[a] * ny + yi[b]) * nx + xi[d]]; };
                float dz = 0, dy = 0, dx = 0;
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b) {
                        dz += smooth[a] * smooth[b] * 0.5f * (at(2, a, b) - at(0, a, b));
                        dy += smooth[a] * smooth[b] * 0.5f * (at(a, 2, b) - at(a, 0, b));
                        dx += smooth[a] * smooth[b] * 0.5f * (at(a, b, 2) - at(a, b, 0));
                    }
                const std::size_t i = image.index(z, y, x);
                gz[i] = dz, gy[i] = dy, gx[i] = dx;
            }
}

}  // namespace dvc
