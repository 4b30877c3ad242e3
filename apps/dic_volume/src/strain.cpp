// Green-Lagrange strain from the subset gradients and from the smoothed displacement field.
#include "strain.hpp"

#include "strain_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dvc {

std::array<double, 9> green_lagrange(const double* G) {
    std::array<double, 9> E{};
    green_lagrange_of(G, E.data());
    return E;
}

FieldGrid field_grid(const CorrelationResult& r) {
    const auto& shape = r.grid.grid_shape;
    const std::int64_t total = shape[0] * shape[1] * shape[2], count = std::int64_t(r.grid.centres.size());
    FieldGrid f;
    f.u.assign(std::size_t(total) * 3, 0.0);
    f.ok.assign(std::size_t(total), 0);
    for (std::int64_t k = 0; k < count; ++k) {
        if (r.status[k] != std::int8_t(PointStatus::converged)) continue;
        const std::int64_t g = r.grid.grid_index[k];
        f.ok[std::size_t(g)] = 1;
        for (int i = 0; i < 3; ++i) f.u[3 * std::size_t(g) + i] = r.params[12 * k + i];
    }
    return f;
}

FieldStrain strain_from_field(const CorrelationResult& r, double sigma) {
    if (r.backend == "cuda") return strain_from_field_cuda(r, sigma);
    const auto& shape = r.grid.grid_shape;
    const std::int64_t count = std::int64_t(r.grid.centres.size());
    const FieldGrid f = field_grid(r);
    const int radius = field_strain_radius(sigma);
    FieldStrain out;
    out.strain.assign(std::size_t(count) * 9, std::numeric_limits<double>::quiet_NaN());
    out.valid.assign(count, 0);
    // Points are independent (each writes its own row): OpenMP over them; at 2 x 10^5 points with
    // 125 neighbours each this is ~10^9 flops.
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < count; ++k) {
        if (r.status[k] != std::int8_t(PointStatus::converged)) continue;
        const std::int64_t g = r.grid.grid_index[k];
        const std::int64_t c[3] = {g / (shape[1] * shape[2]), (g / shape[2]) % shape[1], g % shape[2]};
        if (field_strain_at(f.u.data(), f.ok.data(), shape.data(), c, r.grid.spacing, sigma, radius, &out.strain[9 * std::size_t(k)]))
            out.valid[k] = 1;
    }
    return out;
}

}  // namespace dvc
