// Column-block assembly and the solve over a DeviceGroup (distributed.hpp).
#include "distributed.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace bem {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

ColumnBlock block_of(const batchsolve::TiledMatrix<cd>& a, batchsolve::DeviceGroup& group, int member) {
    ColumnBlock b;
    b.member = member;
    b.members = a.members();
    b.tile = a.tile();
    b.local_columns = a.local_columns(member);
    b.order = a.rows();
    b.device = group.context(member).device();
    return b;
}

std::size_t order_of(Formulation f, const Mesh& mesh) { return f == Formulation::soft_p0 ? mesh.triangle_count() : mesh.vertex_count(); }

}  // namespace

std::uint64_t distributed_reserve_bytes(std::size_t n, std::size_t triangles, int tile, int members) {
    // Geometry on each device (ColumnGeometry: points and weights of both rules, panels, pairs ~ 13 per
    // triangle), B's tiles and the pivots, and cuSOLVERMg's workspace: about two panels of tile columns
    // per device; gesv checks the exact workspace again before allocating it.
    const std::uint64_t geometry = std::uint64_t(triangles) * (3 * 4 + 16 * 8 + 3 * 8 * 30 + 13 * 8) + (64u << 20);
    const std::uint64_t rhs = std::uint64_t(tile) * n * 16 + std::uint64_t(n) * 4 / std::uint64_t(std::max(1, members)) + std::uint64_t(tile) * 4;
    const std::uint64_t workspace = 2 * std::uint64_t(tile) * n * 16 + (256u << 20);
    return geometry + rhs + workspace;
}

double assemble_distributed(Formulation f, const Mesh& mesh, const Geometry& g, double k, const QuadratureOptions& q,
                            batchsolve::TiledMatrix<cd>& a, batchsolve::DeviceGroup& group) {
    if (std::size_t(a.rows()) != order_of(f, mesh) || a.cols() != a.rows())
        throw std::invalid_argument("assemble_distributed: the tiles hold a " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                    " matrix, the " + to_string(f) + " system has order " + std::to_string(order_of(f, mesh)));
    const auto t0 = Clock::now();
    const P1Operator op = f == Formulation::hard_p1 ? P1Operator::hypersingular : P1Operator::single_layer;
    auto one = [&](int member) {
        const ColumnBlock block = block_of(a, group, member);
        cd* local = a.data(member);
        const bool gpu = group.backend() == batchsolve::Backend::cuda;
        if (f == Formulation::soft_p0) {
            if (gpu) assemble_p0_columns_gpu(g, k, q, block, local);
            else assemble_p0_columns(g, k, q, block, local);
        } else {
            if (gpu) assemble_p1_columns_gpu(g, mesh.vertex_count(), k, op, q, block, local);
            else assemble_p1_columns(g, mesh.vertex_count(), k, op, q, block, local);
        }
    };
    if (group.backend() == batchsolve::Backend::cuda) group.run(one);  // one host thread per GPU
    else
        for (int m = 0; m < group.size(); ++m) one(m);  // the host's threads go to each member in turn
    return since(t0);
}

double distributed_scaled_residual(const batchsolve::TiledMatrix<cd>& a, const std::vector<cd>& x, const std::vector<cd>& b,
                                   batchsolve::DeviceGroup& group) {
    const std::size_t n = std::size_t(a.rows());
    if (x.size() != n || b.size() != n) throw std::invalid_argument("distributed_scaled_residual: x and b need " + std::to_string(n) + " entries");
    // Each member its own partial sums (no shared writes), added on the host.
    std::vector<std::vector<cd>> y(std::size_t(group.size()), std::vector<cd>(n));
    std::vector<std::vector<double>> row_abs(std::size_t(group.size()), std::vector<double>(n));
    auto one = [&](int member) {
        const ColumnBlock block = block_of(a, group, member);
        if (group.backend() == batchsolve::Backend::cuda)
            column_block_matvec_gpu(block, a.data(member), x.data(), y[std::size_t(member)].data(), row_abs[std::size_t(member)].data());
        else
            column_block_matvec(block, a.data(member), x.data(), y[std::size_t(member)].data(), row_abs[std::size_t(member)].data());
    };
    if (group.backend() == batchsolve::Backend::cuda) group.run(one);
    else
        for (int m = 0; m < group.size(); ++m) one(m);
    double rn = 0, xn = 0, an = 0;
    for (std::size_t i = 0; i < n; ++i) {
        cd ax = 0;
        double s = 0;
        for (int m = 0; m < group.size(); ++m) {
            ax += y[std::size_t(m)][i];
            s += row_abs[std::size_t(m)][i];
        }
        rn = std::max(rn, std::abs(b[i] - ax));
        xn = std::max(xn, std::abs(x[i]));
        an = std::max(an, s);
    }
    if (xn == 0 || an == 0) return rn == 0 ? 0 : INFINITY;
    return rn / (double(n) * an * xn);
}

DistributedResult solve_distributed(Formulation f, const Mesh& mesh, const Geometry& g, double k, const std::vector<cd>& b,
                                    batchsolve::DeviceGroup& group, int tile, const QuadratureOptions& q) {
    const std::size_t n = order_of(f, mesh);
    if (b.size() != n)
        throw std::invalid_argument("solve_distributed: right-hand side has " + std::to_string(b.size()) + " entries, the system " + std::to_string(n));
    if (tile < 1) throw std::invalid_argument("--tile: at least 1 (got " + std::to_string(tile) + ")");
    if (n > std::size_t(2147483647)) throw std::invalid_argument("solve_distributed: order " + std::to_string(n) + " exceeds cuSOLVERMg's 32-bit index");
    DistributedResult r;
    r.order = n;
    r.tile = tile;
    r.group = group.describe();
    // The tiles and what each member needs beside them, checked on every member before any allocation.
    std::unique_ptr<batchsolve::TiledMatrix<cd>> tiles;
    try {
        tiles = std::make_unique<batchsolve::TiledMatrix<cd>>(group, int(n), int(n), tile, distributed_reserve_bytes(n, g.n, tile, group.size()));
    } catch (const batchsolve::Error& e) {
        char size[96];
        std::snprintf(size, sizeof size, "%.2f GiB in complex double, %.2f GiB of tiles on the fullest member", double(n) * double(n) * 16 / double(1ull << 30),
                      double(batchsolve::TiledMatrix<cd>::bytes_per_member(int(n), int(n), tile, group.size())) / double(1ull << 30));
        throw std::runtime_error(std::string("the ") + to_string(f) + " system of order " + std::to_string(n) + " (" + size + ") does not fit " +
                                 group.describe() + ": " + e.what());
    }
    batchsolve::TiledMatrix<cd>& a = *tiles;
    r.bytes_per_member = batchsolve::TiledMatrix<cd>::bytes_per_member(int(n), int(n), tile, group.size());
    r.assembly_s = assemble_distributed(f, mesh, g, k, q, a, group);
    r.x = b;
    std::vector<int> ipiv(n);
    const batchsolve::DenseSolveReport rep = batchsolve::gesv(a, ipiv.data(), 1, r.x.data(), int(n), group);
    if (rep.info > 0) throw std::runtime_error(rep.engine + ": exactly singular matrix (zero pivot at " + std::to_string(rep.info) + ")");
    r.upload_s = rep.upload_s, r.factor_s = rep.factor_s, r.solve_s = rep.solve_s, r.download_s = rep.download_s;
    r.engine = rep.engine;
    r.residual_assembly_s = assemble_distributed(f, mesh, g, k, q, a, group);
    const auto t0 = Clock::now();
    r.scaled_residual = distributed_scaled_residual(a, r.x, b, group);
    r.residual_s = since(t0);
    return r;
}

}  // namespace bem
