// Green-Lagrange strain from the subset gradients and from the smoothed displacement field.
#include "strain.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dvc {

std::array<double, 9> green_lagrange(const double* G) {
    std::array<double, 9> E{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double ftf = 0;
            for (int k = 0; k < 3; ++k) ftf += (G[3 * k + i] + (k == i)) * (G[3 * k + j] + (k == j));
            E[3 * i + j] = 0.5 * (ftf - (i == j ? 1.0 : 0.0));
        }
    return E;
}

FieldStrain strain_from_field(const CorrelationResult& r, double sigma) {
    const auto& shape = r.grid.grid_shape;
    const std::int64_t total = shape[0] * shape[1] * shape[2], count = std::int64_t(r.grid.centres.size());
    std::vector<double> u(std::size_t(total) * 3, 0.0);
    std::vector<char> ok(total, 0);
    for (std::int64_t k = 0; k < count; ++k) {
        if (r.status[k] != std::int8_t(PointStatus::converged)) continue;
        const std::int64_t g = r.grid.grid_index[k];
        ok[g] = 1;
        for (int i = 0; i < 3; ++i) u[3 * g + i] = r.params[12 * k + i];
    }
    // Smoothing and differentiation in one step: a Gaussian-weighted least-squares fit of a linear
    // field u(x) = a + G (x - x_k) to the converged neighbours within 2 sigma (at least one grid step);
    // G is the smoothed gradient. Exact for a homogeneous field, also at the grid's border where a
    // weighted average would be one-sided.
    const double s = sigma > 0 ? sigma : 1.0;
    const int radius = std::max(1, int(std::ceil(2 * s)));
    FieldStrain out;
    out.strain.assign(std::size_t(count) * 9, std::numeric_limits<double>::quiet_NaN());
    out.valid.assign(count, 0);
    const double h = r.grid.spacing;
    // Points are independent (each writes its own row): OpenMP over them; at 2 x 10^5 points with
    // 125 neighbours each this is ~10^9 flops, the host's largest step after reading.
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < count; ++k) {
        if (r.status[k] != std::int8_t(PointStatus::converged)) continue;
        const std::int64_t g = r.grid.grid_index[k];
        const std::int64_t c[3] = {g / (shape[1] * shape[2]), (g / shape[2]) % shape[1], g % shape[2]};
        double A[4][4] = {}, B[4][3] = {};
        int used = 0;
        for (int a = -radius; a <= radius; ++a)
            for (int b = -radius; b <= radius; ++b)
                for (int d = -radius; d <= radius; ++d) {
                    const std::int64_t q[3] = {c[0] + a, c[1] + b, c[2] + d};
                    if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= shape[0] || q[1] >= shape[1] || q[2] >= shape[2]) continue;
                    const std::int64_t j = (q[0] * shape[1] + q[1]) * shape[2] + q[2];
                    if (!ok[j]) continue;
                    const double w = std::exp(-0.5 * (a * a + b * b + d * d) / (s * s));
                    const double x[4] = {1.0, a * h, b * h, d * h};
                    for (int m = 0; m < 4; ++m) {
                        for (int n = 0; n < 4; ++n) A[m][n] += w * x[m] * x[n];
                        for (int i = 0; i < 3; ++i) B[m][i] += w * x[m] * u[3 * j + i];
                    }
                    ++used;
                }
        if (used < 4) continue;
        // Gaussian elimination with partial pivoting on the 4x4 normal equations; a (near) singular
        // system means the neighbours are coplanar: no gradient there.
        bool singular = false;
        const double scale = A[0][0];
        for (int col = 0; col < 4 && !singular; ++col) {
            int piv = col;
            for (int row = col + 1; row < 4; ++row) if (std::fabs(A[row][col]) > std::fabs(A[piv][col])) piv = row;
            const double norm = col == 0 ? scale : scale * h * h;
            if (!(std::fabs(A[piv][col]) > 1e-9 * norm)) { singular = true; break; }
            for (int n = 0; n < 4; ++n) std::swap(A[col][n], A[piv][n]);
            for (int i = 0; i < 3; ++i) std::swap(B[col][i], B[piv][i]);
            for (int row = col + 1; row < 4; ++row) {
                const double f = A[row][col] / A[col][col];
                for (int n = col; n < 4; ++n) A[row][n] -= f * A[col][n];
                for (int i = 0; i < 3; ++i) B[row][i] -= f * B[col][i];
            }
        }
        if (singular) continue;
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
        const auto E = green_lagrange(G);
        for (int q = 0; q < 9; ++q) out.strain[9 * k + q] = E[q];
        out.valid[k] = 1;
    }
    return out;
}

}  // namespace dvc
