// Spline interpolation of volumes: the prefilters that turn samples into coefficients (cubic
// B-spline, cubic O-MOMS, quintic B-spline), and the samplers shared by the CPU and GPU code
// (DVC_HD functions compile for both).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "volume.hpp"

#if defined(__CUDACC__)
#define DVC_HD __host__ __device__ __forceinline__
#define DVC_UNROLL _Pragma("unroll")
#else
#define DVC_HD inline
#define DVC_UNROLL
#endif
// Volume reads of the samplers: through the read-only data cache on the GPU (the volumes never
// change during a kernel), plain loads on the host.
#if defined(__CUDA_ARCH__)
#define DVC_LOAD(p) __ldg(p)
#else
#define DVC_LOAD(p) (*(p))
#endif

namespace dvc {

// The deformed volume's interpolant in IC-GN. cubic_omoms is Blu, Thevenaz and Unser's cubic of
// maximal order and minimal support (2001): the cubic B-spline plus 1/42 of its second derivative,
// the same 4 x 4 x 4 taps, an interpolation error about a quarter of the B-spline's at the
// speckle's frequencies. quintic_bspline: 6 x 6 x 6 taps (3.4 times the reads).
enum class Interpolation { trilinear, cubic_bspline, cubic_omoms, quintic_bspline };
// "linear"/"trilinear" | "cubic" | "omoms" | "quintic"
Interpolation parse_interpolation(const std::string& text);
const char* to_string(Interpolation i);
// True for the spline interpolants (prefiltered coefficients, spline gradients of the reference).
constexpr bool is_spline(Interpolation i) { return i != Interpolation::trilinear; }

// B-spline coefficients of degree 3 or 5 such that the spline interpolates the samples, with
// mirror (whole-sample symmetric) boundaries; computed in double along each axis.
std::vector<float> bspline_coefficients(const Volume& v, int degree);
// Coefficients of any spline interpolant (prefilter_degree below): cubic and quintic B-splines, O-MOMS.
std::vector<float> interpolation_coefficients(const Volume& v, Interpolation i);
// The prefilter code of volume_math.hpp's spline_poles for an interpolant: 3, 5, or
// kOmomsPrefilter; 0 for trilinear (no prefilter).
int prefilter_degree(Interpolation i);

// How far inside the volume a sample position must stay so that every tap of the sampler is a
// voxel of the volume: lower <= position < n - upper along each axis.
struct SamplerReach {
    double lower;
    double upper;
};
constexpr SamplerReach sampler_reach(Interpolation i) {
    return i == Interpolation::trilinear ? SamplerReach{0.0, 1.0} : i == Interpolation::quintic_bspline ? SamplerReach{2.0, 3.0} : SamplerReach{1.0, 2.0};
}

// Cubic B-spline weights of the taps floor(x)-1 .. floor(x)+2 at fraction t in [0, 1).
DVC_HD void cubic_bspline_weights(float t, float w[4]) {
    const float t2 = t * t, t3 = t2 * t, u = 1.0f - t;
    w[0] = u * u * u * (1.0f / 6.0f);
    w[1] = (3.0f * t3 - 6.0f * t2 + 4.0f) * (1.0f / 6.0f);
    w[2] = (-3.0f * t3 + 3.0f * t2 + 3.0f * t + 1.0f) * (1.0f / 6.0f);
    w[3] = t3 * (1.0f / 6.0f);
}

// Cubic O-MOMS weights of the same taps: the B-spline's plus 1/42 of its second derivative's.
DVC_HD void cubic_omoms_weights(float t, float w[4]) {
    cubic_bspline_weights(t, w);
    const float u = 1.0f - t;
    w[0] += u * (1.0f / 42.0f);
    w[1] += (3.0f * t - 2.0f) * (1.0f / 42.0f);
    w[2] += (1.0f - 3.0f * t) * (1.0f / 42.0f);
    w[3] += t * (1.0f / 42.0f);
}

// Quintic B-spline weights of the taps floor(x)-2 .. floor(x)+3 at fraction t in [0, 1).
DVC_HD void quintic_bspline_weights(float t, float w[6]) {
    const float u = 1.0f - t, t2 = t * t, u2 = u * u;
    const float t4 = t2 * t2, u4 = u2 * u2;
    w[0] = u4 * u * (1.0f / 120.0f);
    w[1] = (1.0f + 5.0f * u + 10.0f * u2 + 10.0f * u2 * u + 5.0f * u4 - 5.0f * u4 * u) * (1.0f / 120.0f);
    w[2] = (66.0f - 60.0f * t2 + 30.0f * t4 - 10.0f * t4 * t) * (1.0f / 120.0f);
    w[3] = (66.0f - 60.0f * u2 + 30.0f * u4 - 10.0f * u4 * u) * (1.0f / 120.0f);
    w[4] = (1.0f + 5.0f * t + 10.0f * t2 + 10.0f * t2 * t + 5.0f * t4 - 5.0f * t4 * t) * (1.0f / 120.0f);
    w[5] = t4 * t * (1.0f / 120.0f);
}

// Value of a separable spline with `Taps` taps per axis (weights by Weights, the first tap at
// floor(x) - (Taps / 2 - 1)) from coefficients c (x fastest, row stride nx, slice stride ny * nx)
// at (z, y, x); the caller guarantees the reach of sampler_reach.
template <int Taps, void (*Weights)(float, float*)>
DVC_HD float sample_spline(const float* c, std::int64_t ny, std::int64_t nx, float z, float y, float x) {
    const float fz = floorf(z), fy = floorf(y), fx = floorf(x);
    float wz[Taps], wy[Taps], wx[Taps];
    Weights(z - fz, wz);
    Weights(y - fy, wy);
    Weights(x - fx, wx);
    constexpr int back = Taps / 2 - 1;
    const float* base = c + ((std::int64_t(fz) - back) * ny + (std::int64_t(fy) - back)) * nx + (std::int64_t(fx) - back);
    float sum = 0.0f;
    for (int a = 0; a < Taps; ++a) {
        float plane = 0.0f;
        for (int b = 0; b < Taps; ++b) {
            const float* row = base + (a * ny + b) * nx;
            float r = wx[0] * DVC_LOAD(row);
            for (int k = 1; k < Taps; ++k) r += wx[k] * DVC_LOAD(row + k);
            plane += wy[b] * r;
        }
        sum += wz[a] * plane;
    }
    return sum;
}

// The cubic B-spline's value (the reach of sampler_reach(cubic_bspline)).
DVC_HD float sample_cubic(const float* c, std::int64_t ny, std::int64_t nx, float z, float y, float x) {
    return sample_spline<4, cubic_bspline_weights>(c, ny, nx, z, y, x);
}
DVC_HD float sample_omoms(const float* c, std::int64_t ny, std::int64_t nx, float z, float y, float x) {
    return sample_spline<4, cubic_omoms_weights>(c, ny, nx, z, y, x);
}
DVC_HD float sample_quintic_f(const float* c, std::int64_t ny, std::int64_t nx, float z, float y, float x) {
    return sample_spline<6, quintic_bspline_weights>(c, ny, nx, z, y, x);
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

// Gradient of the reference image at every voxel (three volumes, d/dz, d/dy, d/dx): for every
// spline interpolant the exact derivative of the cubic B-spline at the nodes (its coefficients
// given: the steepest-descent images steer IC-GN, the deformed subset's interpolant sets where it
// stops), central differences of the samples for trilinear; mirrored at the borders.
void image_gradients(const Volume& image, const std::vector<float>* cubic_coefficients, Interpolation interp,
                     std::vector<float>& gz, std::vector<float>& gy, std::vector<float>& gx);

}  // namespace dvc
