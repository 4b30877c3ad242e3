// A BEM system assembled and solved over several devices: the matrix is dealt to the
// members of a batchsolve::DeviceGroup in tiles of columns (batchsolve::TiledMatrix, cuSOLVERMg's
// layout), each member assembles its own columns where they lie, and batchsolve::gesv factors the
// tiles in place (cuSOLVERMg LU over the GPUs). The whole matrix is never on one device or the host.
// CPU groups run the same column-block code on the host (how CI tests it).
#pragma once

#include <batchsolve/multi_device.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "assembly.hpp"
#include "physics.hpp"

namespace bem {

struct DistributedResult {
    std::vector<cd> x;
    std::size_t order = 0;
    std::string group;                       // DeviceGroup::describe()
    int tile = 0;
    double assembly_s = 0;                   // wall clock, every member's columns (members concurrently on GPUs)
    double upload_s = 0, factor_s = 0, solve_s = 0, download_s = 0;  // gesv's phases
    double residual_assembly_s = 0;          // the columns assembled again after the factorisation overwrote them
    double residual_s = 0;                   // A x over the members and the norms
    double scaled_residual = 0;              // ||b - Ax||_inf / (n ||A||_inf ||x||_inf), A x summed in double from every member
    std::size_t bytes_per_member = 0;        // matrix tiles on the fullest member
    std::string engine;                      // gesv's engine
};

// Device memory one member needs for order n over `members` (matrix tiles, geometry of `triangles`,
// the right-hand side's tiles and pivots, a workspace allowance); checked before anything is allocated.
std::uint64_t distributed_reserve_bytes(std::size_t n, std::size_t triangles, int tile, int members);

// Fills every member's columns of `a` (order: triangles for soft-p0, vertices for P1) with the
// formulation's matrix; CUDA members concurrently, CPU members one after another (OpenMP inside each).
// Returns the wall-clock seconds.
double assemble_distributed(Formulation f, const Mesh& mesh, const Geometry& g, double k, const QuadratureOptions& q,
                            batchsolve::TiledMatrix<cd>& a, batchsolve::DeviceGroup& group);

// ||b - A x||_inf / (n ||A||_inf ||x||_inf) with A in tiles (every member adds its columns' part).
double distributed_scaled_residual(const batchsolve::TiledMatrix<cd>& a, const std::vector<cd>& x, const std::vector<cd>& b,
                                   batchsolve::DeviceGroup& group);

// Assembles over the group, solves by batchsolve::gesv on the tiles (LU, partial pivoting), then
// assembles the columns again (the factorisation overwrote them; assembly costs a small fraction of
// the LU) for the residual. Throws when the system does not fit the group (the bytes per member and
// what the member has) or U is singular.
DistributedResult solve_distributed(Formulation f, const Mesh& mesh, const Geometry& g, double k, const std::vector<cd>& b,
                                    batchsolve::DeviceGroup& group, int tile, const QuadratureOptions& q = {});

}  // namespace bem
