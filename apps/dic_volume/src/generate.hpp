// Synthetic speckle volumes and known displacement fields: the ground truth of the tests, the
// accuracy tables and the benchmark.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "icgn.hpp"
#include "volume.hpp"

namespace dvc {

enum class SpeckleKind { smoothed_noise, blobs };
SpeckleKind parse_speckle_kind(const std::string& text);  // "noise" | "blobs"

struct SpeckleOptions {
    Dims dims{64, 64, 64};
    SpeckleKind kind = SpeckleKind::smoothed_noise;
    double sigma = 2.0;       // Gaussian smoothing of the noise / blob radius, voxels
    double blob_density = 0.5;  // blobs per sigma^3 voxels
    double mean = 128.0, contrast = 40.0;  // grey-level mean and standard deviation of the result
    std::uint64_t seed = 1;
};
Volume make_speckle(const SpeckleOptions& options);

// Separable Gaussian filter in place (radius 3 sigma, mirrored borders); sigma <= 0 leaves v as is.
void gaussian_smooth(Volume& v, double sigma);

// u(X) = t + L (X - c) + a * (sin(2 pi X_x / w), sin(2 pi X_z / w), sin(2 pi X_y / w)) for a
// reference point X (z, y, x): a translation, a homogeneous gradient L (strain, rotation), and a
// sinusoid of amplitude a and wavelength w. All in voxels.
struct DisplacementField {
    std::string kind = "translation";  // what built it: translation | strain | rotation | sinusoidal (for reports)
    std::array<double, 3> translation{0, 0, 0};
    std::array<double, 9> gradient{0, 0, 0, 0, 0, 0, 0, 0, 0};  // L, row-major, z y x
    std::array<double, 3> centre{0, 0, 0};
    double amplitude = 0, wavelength = 32;

    Point3 displacement(const Point3& X) const;
    std::array<double, 9> displacement_gradient(const Point3& X) const;
};
// Rotation by `degrees` about axis "z" | "y" | "x" through `centre`: L = R - I.
DisplacementField rotation_field(double degrees, char axis, const std::array<double, 3>& centre);

struct DeformOptions {
    double noise_sigma = 0;                // Gaussian grey-level noise added to both volumes
    double brightness = 0, contrast = 1;   // deformed = contrast * f + brightness (before noise)
    std::uint64_t noise_seed = 7;
};
// The deformed volume g(x) = f(X) with x = X + u(X), f sampled by its degree-5 B-spline (one order
// above the correlation's cubic) at X found by fixed-point iteration; noise is added to `reference`
// too (in place) when requested, with independent draws.
Volume deform(Volume& reference, const DisplacementField& field, const DeformOptions& options);

}  // namespace dvc
