// B-spline interpolation of volumes: the prefilter that turns samples into B-spline coefficients
// (degree 3 for the correlation, degree 5 for the generator), and the samplers shared by the CPU
// and GPU code (DVC_HD functions compile for both).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "volume.hpp"

#if defined(__CUDACC__)
#define DVC_HD __host__ __device__ __forceinline__
#else
#define DVC_HD inline
#endif
// Volume reads of the samplers: through the read-only data cache on the GPU (the volumes never
// change during a kernel), plain loads on the host.
#if defined(__CUDA_ARCH__)
#define DVC_LOAD(p) __ldg(p)
#else
#define DVC_LOAD(p) (*(p))
#endif

namespace dvc {

enum class Interpolation { trilinear, cubic_bspline };
Interpolation parse_interpolation(const std::string& text);  // "linear"/"trilinear" | "cubic"
const char* to_string(Interpolation i);

// B-spline coefficients of degree 3 or 5 such that the spline interpolates the samples, with
// mirror (whole-sample symmetric) boundaries; computed in double along each axis.
std::vector<float> bspline_coefficients(const Volume& v, int degree);

// How far inside the volume a sample position must stay so that every tap of the sampler is a
// voxel of the volume: lower <= position < n - upper along each axis.
struct SamplerReach {
    double lower;
    double upper;
};
constexpr SamplerReach sampler_reach(Interpolation i) {
    return i == Interpolation::cubic_bspline ? SamplerReach{1.0, 2.0} : SamplerReach{0.0, 1.0};
}

// Cubic B-spline weights of the taps floor(x)-1 .. floor(x)+2 at fraction t in [0, 1).
DVC_HD void cubic_bspline_weights(float t, float w[4]) {
    const float t2 = t * t, t3 = t2 * t, u = 1.0f - t;
    w[0] = u * u * u * (1.0f / 6.0f);
    w[1] = (3.0f * t3 - 6.0f * t2 + 4.0f) * (1.0f / 6.0f);
    w[2] = (-3.0f * t3 + 3.0f * t2 + 3.0f * t + 1.0f) * (1.0f / 6.0f);
    w[3] = t3 * (1.0f / 6.0f);
}

// Value of the cubic spline with coefficients c (x fastest, row stride nx, slice stride ny * nx) at
// (z, y, x); the caller guarantees the reach of sampler_reach(cubic_bspline).
DVC_HD float sample_cubic(const float* c, std::int64_t ny, std::int64_t nx, float z, float y, float x) {
    const float fz = floorf(z), fy = floorf(y), fx = floorf(x);
    float wz[4], wy[4], wx[4];
    cubic_bspline_weights(z - fz, wz);
    cubic_bspline_weights(y - fy, wy);
    cubic_bspline_weights(x - fx, wx);
    const float* base = c + ((std::int64_t(fz) - 1) * ny + (std::int64_t(fy) - 1)) * nx + (std::int64_t(fx) - 1);
    float sum = 0.0f;
    for (int a = 0; a < 4; ++a) {
        float plane = 0.0f;
        for (int b = 0; b < 4; ++b) {
            const float* row = base + (a * ny + b) * nx;
            plane += wy[b] * (wx[0] * DVC_LOAD(row) + wx[1] * DVC_LOAD(row + 1) + wx[2] * DVC_LOAD(row + 2) + wx[3] * DVC_LOAD(row + 3));
        }
        sum += wz[a] * plane;
    }
    return sum;
}

DVC_HD float sample_trilinear(const float* v, std::int64_t ny, std::int64_t nx, float z, float y, float x) {
    const float fz = floorf(z), fy = floorf(y), fx = floorf(x);
    const float tz = z - fz, ty = y - fy, tx = x - fx;
    const float* p = v + (std::int64_t(fz) * ny + std::int64_t(fy)) * nx + std::int64_t(fx);
    const float* q = p + ny * nx;
    const float p0 = DVC_LOAD(p), p1 = DVC_LOAD(p + 1), p2 = DVC_LOAD(p + nx), p3 = DVC_LOAD(p + nx + 1);
    const float q0 = DVC_LOAD(q), q1 = DVC_LOAD(q + 1), q2 = DVC_LOAD(q + nx), q3 = DVC_LOAD(q + nx + 1);
    const float a = p0 + tx * (p1 - p0), b = p2 + tx * (p3 - p2);
    const float c = q0 + tx * (q1 - q0), d = q2 + tx * (q3 - q2);
    const float e = a + ty * (b - a), f = c + ty * (d - c);
    return e + tz * (f - e);
}

// Value of a degree-5 spline (coefficients from bspline_coefficients(v, 5)) anywhere, mirrored at
// the borders; double precision (the generator's ground truth).
double sample_quintic(const std::vector<float>& c, const Dims& dims, double z, double y, double x);

// Gradient of the reference image at every voxel (three volumes, d/dz, d/dy, d/dx): the exact
// derivative of the cubic spline at the nodes for cubic_bspline (coefficients c given), central
// differences of the samples for trilinear; mirrored at the borders.
void image_gradients(const Volume& image, const std::vector<float>* cubic_coefficients, Interpolation interp,
                     std::vector<float>& gz, std::vector<float>& gy, std::vector<float>& gx);

}  // namespace dvc
