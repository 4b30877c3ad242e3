// Strain: Green-Lagrange tensors from each subset's own displacement gradient, and from the
// smoothed displacement field of the converged grid points (finite differences).
#pragma once

#include <array>
#include <vector>

#include "correlate.hpp"

namespace dvc {

// E = (F^T F - I) / 2 with F = I + G (G row-major, z y x): 9 values, row-major.
std::array<double, 9> green_lagrange(const double* G);

// Per point (9 values each, row-major): the Green-Lagrange strain of the displacement field of the
// converged points, smoothed and differentiated by a Gaussian-weighted (sigma grid spacings) linear
// least-squares fit over the neighbours. Points that did not converge, or whose converged
// neighbours are too few or coplanar, get NaN and valid = 0.
struct FieldStrain {
    std::vector<double> strain;
    std::vector<std::int32_t> valid;
};
// On the backend that correlated (result.backend): the CPU (OpenMP over points), or the GPU
// (strain_cuda.cu: one thread per point; the same arithmetic, strain_math.hpp).
FieldStrain strain_from_field(const CorrelationResult& result, double sigma = 1.0);
FieldStrain strain_from_field_cuda(const CorrelationResult& result, double sigma);  // throws Error without CUDA

// The converged displacements on the full grid (3 per node, z slowest) and which nodes hold one.
struct FieldGrid {
    std::vector<double> u;
    std::vector<char> ok;
};
FieldGrid field_grid(const CorrelationResult& result);

}  // namespace dvc
