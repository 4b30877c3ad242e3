// Per-line and per-voxel arithmetic of the volume stages (Gaussian pre-smoothing, B-spline
// prefilter, spline gradients, 2x downsampling), written once for the host and the device: the CPU
// stages (interpolation.cpp, generate.cpp, pyramid.cpp) and the CUDA kernels (device_stages.cu) call
// these functions, so the two backends compute the same numbers and the GPU's math is tested on the
// host (test_dic_volume: VolumeMath.*).
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define DVC_VM_HD __host__ __device__ __forceinline__
#else
#define DVC_VM_HD inline
#endif

namespace dvc {

// Whole-sample symmetric mirror of an index into [0, n): -1 -> 1, n -> n - 2 (any distance).
DVC_VM_HD std::int64_t mirror_index(std::int64_t i, std::int64_t n) {
    if (i >= 0 && i < n) return i;  // inside: no 64-bit division (most calls, and slow on a GPU)
    if (n == 1) return 0;
    const std::int64_t period = 2 * (n - 1);
    i %= period;
    if (i < 0) i += period;
    return i < n ? i : period - i;
}

// Poles of the spline prefilters (Unser 1999): B-spline degree 3 one pole, degree 5 two; the cubic
// O-MOMS (code kOmomsPrefilter) one, the root of z^2 + 13/4 z + 1 inside the unit circle (its
// kernel is 4/21, 13/21, 4/21 at the nodes).
constexpr int kOmomsPrefilter = -3;
struct SplinePoles {
    double z[2];
    int count;
};
DVC_VM_HD SplinePoles spline_poles(int degree) {
    SplinePoles p{{0, 0}, 0};
    if (degree == 3) p.z[0] = -0.26794919243112270648, p.count = 1;  // sqrt(3) - 2
    else if (degree == 5) p.z[0] = -0.43057534709997379, p.z[1] = -0.043096288203264653, p.count = 2;
    else if (degree == kOmomsPrefilter) p.z[0] = -0.34413115425505025, p.count = 1;  // (sqrt(105) - 13) / 8
    return p;
}

// Relative size at which the causal filter's initial value (a geometric sum over the mirrored line)
// is truncated: z^k below it no longer changes a float coefficient (float's unit roundoff is 6e-8).
constexpr double kPrefilterTruncation = 1e-12;

// B-spline prefilter of one line of n samples at `stride` (in place), mirror boundaries: the gain,
// then per pole a causal and an anticausal first-order recursion. The causal initial value is the
// exact mirrored sum for lines shorter than the truncation horizon, else the sum truncated where
// |z|^k < kPrefilterTruncation. Arithmetic in double; the line is stored in T (float or double).
template <class T>
DVC_VM_HD void prefilter_line_strided(T* c, std::int64_t n, std::int64_t stride, const SplinePoles& poles) {
    if (n == 1) return;
    double gain = 1.0;
    for (int p = 0; p < poles.count; ++p) gain *= (1.0 - poles.z[p]) * (1.0 - 1.0 / poles.z[p]);
    for (std::int64_t k = 0; k < n; ++k) c[k * stride] = T(double(c[k * stride]) * gain);
    for (int p = 0; p < poles.count; ++p) {
        const double z = poles.z[p];
        const std::int64_t horizon = std::int64_t(ceil(log(kPrefilterTruncation) / log(fabs(z))));
        double c0;
        if (horizon < n) {
            double zn = z, sum = double(c[0]);
            for (std::int64_t k = 1; k < horizon; ++k) sum += zn * double(c[k * stride]), zn *= z;
            c0 = sum;
        } else {
            // Exact: sum over the mirrored signal of period 2(n - 1).
            double zn = z, iz = 1.0 / z, z2n = pow(z, double(n - 1));
            double sum = double(c[0]) + z2n * double(c[(n - 1) * stride]);
            z2n *= z2n * iz;
            for (std::int64_t k = 1; k < n - 1; ++k) {
                sum += (zn + z2n) * double(c[k * stride]);
                zn *= z;
                z2n *= iz;
            }
            c0 = sum / (1.0 - zn * zn);
        }
        c[0] = T(c0);
        double prev = c0;
        for (std::int64_t k = 1; k < n; ++k) {
            prev = double(c[k * stride]) + z * prev;
            c[k * stride] = T(prev);
        }
        const double before_last = double(c[(n - 2) * stride]);
        prev = (z / (z * z - 1.0)) * (z * before_last + prev);
        c[(n - 1) * stride] = T(prev);
        for (std::int64_t k = n - 2; k >= 0; --k) {
            prev = z * (prev - double(c[k * stride]));
            c[k * stride] = T(prev);
        }
    }
}

// Radius of the pre-smoothing Gaussian (taps -radius..radius).
DVC_VM_HD int gaussian_radius(double sigma) { return int(ceil(3 * sigma)); }

// Normalised Gaussian taps (2 radius + 1 values) into `kernel`.
DVC_VM_HD void gaussian_taps(double sigma, double* kernel) {
    const int radius = gaussian_radius(sigma);
    double total = 0;
    for (int i = -radius; i <= radius; ++i) total += kernel[i + radius] = exp(-0.5 * i * i / (sigma * sigma));
    for (int i = 0; i <= 2 * radius; ++i) kernel[i] /= total;
}

// One output sample k of the Gaussian along a line (input `in` at `stride`, n samples), mirrored.
DVC_VM_HD double gaussian_at(const float* in, std::int64_t n, std::int64_t stride, std::int64_t k, const double* kernel, int radius) {
    double s = 0;
    if (k >= radius && k + radius < n) {  // interior: the same sum without the mirror
        const float* p = in + (k - radius) * stride;
        for (int i = 0; i <= 2 * radius; ++i) s += kernel[i] * double(p[i * stride]);
        return s;
    }
    for (int i = -radius; i <= radius; ++i) s += kernel[i + radius] * double(in[mirror_index(k + i, n) * stride]);
    return s;
}

// Gradient (d/dz, d/dy, d/dx) of the image at voxel (z, y, x), mirrored at the borders: for the
// cubic spline (src: its coefficients) the exact derivative at the node, i.e. the central
// difference of the coefficients along the axis smoothed by (1, 4, 1) / 6 along the other two;
// for trilinear (src: the samples) the central difference.
DVC_VM_HD void gradient_at(const float* src, std::int64_t nz, std::int64_t ny, std::int64_t nx, std::int64_t z, std::int64_t y,
                           std::int64_t x, bool cubic, float out[3]) {
    const float smooth[3] = {cubic ? 1.0f / 6.0f : 0.0f, cubic ? 4.0f / 6.0f : 1.0f, cubic ? 1.0f / 6.0f : 0.0f};
    const std::int64_t zi[3] = {mirror_index(z - 1, nz), z, mirror_index(z + 1, nz)};
    const std::int64_t yi[3] = {mirror_index(y - 1, ny), y, mirror_index(y + 1, ny)};
    const std::int64_t xi[3] = {mirror_index(x - 1, nx), x, mirror_index(x + 1, nx)};
    float dz = 0, dy = 0, dx = 0;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            const float w = smooth[a] * smooth[b] * 0.5f;
            if (w == 0.0f) continue;
            dz += w * (src[(zi[2] * ny + yi[a]) * nx + xi[b]] - src[(zi[0] * ny + yi[a]) * nx + xi[b]]);
            dy += w * (src[(zi[a] * ny + yi[2]) * nx + xi[b]] - src[(zi[a] * ny + yi[0]) * nx + xi[b]]);
            dx += w * (src[(zi[a] * ny + yi[b]) * nx + xi[2]] - src[(zi[a] * ny + yi[b]) * nx + xi[0]]);
        }
    out[0] = dz, out[1] = dy, out[2] = dx;
}

// Voxel (z, y, x) of the 2x-downsampled volume (dims floor(n / 2)): the mean of the 2x2x2 block
// of the finer volume (dims nz, ny, nx) it covers; coarse voxel j is centred on fine 2 j + 0.5.
DVC_VM_HD float downsample_at(const float* fine, std::int64_t ny, std::int64_t nx, std::int64_t z, std::int64_t y, std::int64_t x) {
    float s = 0;
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b)
            for (int c = 0; c < 2; ++c) s += fine[((2 * z + a) * ny + (2 * y + b)) * nx + (2 * x + c)];
    return 0.125f * s;
}

}  // namespace dvc
