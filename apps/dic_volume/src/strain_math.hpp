// The field strain of one grid point (strain.hpp), written once for the host and the device: the
// CPU loop (strain.cpp) and the CUDA kernel (strain_cuda.cu) call field_strain_at, so the two
// backends compute the same numbers and the GPU's arithmetic is tested on the host.
#pragma once

#include <cmath>
#include <cstdint>

#include "volume_math.hpp"

namespace dvc {

// E = (F^T F - I) / 2 with F = I + G (G row-major, z y x): 9 values, row-major.
DVC_VM_HD void green_lagrange_of(const double* G, double* E) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double ftf = 0;
            for (int k = 0; k < 3; ++k) ftf += (G[3 * k + i] + (k == i ? 1.0 : 0.0)) * (G[3 * k + j] + (k == j ? 1.0 : 0.0));
            E[3 * i + j] = 0.5 * (ftf - (i == j ? 1.0 : 0.0));
        }
}

// Neighbours within `radius` grid steps of the fit (at least one, 2 sigma rounded up).
DVC_VM_HD int field_strain_radius(double sigma) {
    const double s = sigma > 0 ? sigma : 1.0;
    const int r = int(ceil(2 * s));
    return r > 1 ? r : 1;
}

// Smoothing and differentiation in one step: a Gaussian-weighted least-squares fit of a linear field
// u(x) = a + G (x - x_c) to the converged neighbours of grid node c (z, y, x) within `radius`
// (u: 3 per grid node, ok: 1 where the node holds a converged point; shape: the grid; h: spacing);
// G is the smoothed gradient, E its Green-Lagrange strain. Exact for a homogeneous field, also at
// the grid's border where a weighted average would be one-sided. Returns false (E untouched) when
// fewer than 4 neighbours converged or they are coplanar (a near-singular 4x4 system).
DVC_VM_HD bool field_strain_at(const double* u, const char* ok, const std::int64_t* shape, const std::int64_t* c, double h,
                               double sigma, int radius, double* E) {
    const double s = sigma > 0 ? sigma : 1.0;
    double A[4][4] = {}, B[4][3] = {};
    int used = 0;
    for (int a = -radius; a <= radius; ++a)
        for (int b = -radius; b <= radius; ++b)
            for (int d = -radius; d <= radius; ++d) {
                const std::int64_t q[3] = {c[0] + a, c[1] + b, c[2] + d};
                if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= shape[0] || q[1] >= shape[1] || q[2] >= shape[2]) continue;
                const std::int64_t j = (q[0] * shape[1] + q[1]) * shape[2] + q[2];
                if (!ok[j]) continue;
                const double w = exp(-0.5 * (a * a + b * b + d * d) / (s * s));
                const double x[4] = {1.0, a * h, b * h, d * h};
                for (int m = 0; m < 4; ++m) {
                    for (int n = 0; n < 4; ++n) A[m][n] += w * x[m] * x[n];
                    for (int i = 0; i < 3; ++i) B[m][i] += w * x[m] * u[3 * j + i];
                }
                ++used;
            }
    if (used < 4) return false;
    // Gaussian elimination with partial pivoting on the 4x4 normal equations.
    const double scale = A[0][0];
    for (int col = 0; col < 4; ++col) {
        int piv = col;
        for (int row = col + 1; row < 4; ++row)
            if (fabs(A[row][col]) > fabs(A[piv][col])) piv = row;
        const double norm = col == 0 ? scale : scale * h * h;
        if (!(fabs(A[piv][col]) > 1e-9 * norm)) return false;
        for (int n = 0; n < 4; ++n) {
            const double t = A[col][n];
            A[col][n] = A[piv][n], A[piv][n] = t;
        }
        for (int i = 0; i < 3; ++i) {
            const double t = B[col][i];
            B[col][i] = B[piv][i], B[piv][i] = t;
        }
        for (int row = col + 1; row < 4; ++row) {
            const double f = A[row][col] / A[col][col];
            for (int n = col; n < 4; ++n) A[row][n] -= f * A[col][n];
            for (int i = 0; i < 3; ++i) B[row][i] -= f * B[col][i];
        }
    }
    double X[4][3];
    for (int row = 3; row >= 0; --row)
        for (int i = 0; i < 3; ++i) {
            double v = B[row][i];
            for (int n = row + 1; n < 4; ++n) v -= A[row][n] * X[n][i];
            X[row][i] = v / A[row][row];
        }
    double G[9];
    for (int i = 0; i < 3; ++i)
        for (int axis = 0; axis < 3; ++axis) G[3 * i + axis] = X[1 + axis][i];
    green_lagrange_of(G, E);
    return true;
}

}  // namespace dvc
