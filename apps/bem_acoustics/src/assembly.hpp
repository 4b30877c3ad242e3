// Galerkin assembly of the Helmholtz single-layer (P0, P1) and hypersingular (P1, Maue's form)
// operators: the quadrature rules, the per-mesh geometry both backends read, the CPU (OpenMP)
// assembly, and the CUDA assembly's interface (assembly_cuda.cu, or a stub that throws).
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "mesh.hpp"

namespace bem {

using cd = std::complex<double>;

// Every quadrature choice in one place (why: accuracy against the Mie series at 10 elements per
// wavelength is set by P0/P1 discretisation, ~1e-2; these rules keep quadrature error well below).
struct QuadratureOptions {
    int singular_order = 4;      // Gauss points per dimension of the 4-D Sauter–Schwab rules
    double near_factor = 2.0;    // a disjoint pair is "near" when its centroid distance < factor x larger diameter
    // Regular pairs: the 6-point degree-4 rule on each panel (36 kernel evaluations per pair); near
    // pairs: the same rule on the 4 midpoint subtriangles (24 points, 576 evaluations).
};

// Gauss–Legendre nodes and weights on [0, 1].
void gauss_legendre_01(int order, std::vector<double>& nodes, std::vector<double>& weights);

// Sauter–Schwab rules as flat (x1, x2, y1, y2, w) lists on the reference triangle, per case:
// 3 coincident, 2 common edge, 1 common vertex. Each integrates a smooth f over T x T to the
// reference measure (sum of w for f = 1 is 1/4).
struct SingularRules {
    std::vector<double> coincident, edge, vertex;
    const std::vector<double>& of_case(int shared) const { return shared == 3 ? coincident : shared == 2 ? edge : vertex; }
};
SingularRules make_singular_rules(int order);

// Per-panel regular rules in reference coordinates (x1, x2, w), weights summing to 1/2.
std::vector<double> triangle_rule_regular();  // 6 points, degree 4
std::vector<double> triangle_rule_near();     // 24 points: the regular rule on 4 subtriangles

// Everything the assembly reads about a mesh, computed once.
struct Geometry {
    std::size_t n = 0;                        // triangles
    std::vector<kern::Panel> panels;          // original vertex order
    std::vector<int> tri;                     // 3 per triangle
    std::vector<double> normal, centroid;     // 3 per triangle (outward unit normal)
    std::vector<double> jacobian, diameter;   // per triangle (jacobian = 2 x area)
    int regular_count = 0, near_count = 0;    // points per panel of each rule
    std::vector<double> regular_points, regular_weights;  // physical points (3 per point), weights x jacobian
    std::vector<double> near_points, near_weights;
    std::vector<double> regular_ref, near_ref;            // the rules in reference coordinates (x1, x2, w)
    // Pairs (test i >= trial j) that share a vertex, with their case 1..3, for the singular pass.
    std::vector<std::int32_t> singular_i, singular_j, singular_case;
};
Geometry make_geometry(const Mesh& mesh);

// Dense column-major matrices, n x n.
struct Matrix {
    std::size_t n = 0;
    std::vector<cd> a;
    cd& operator()(std::size_t i, std::size_t j) { return a[i + j * n]; }
    cd operator()(std::size_t i, std::size_t j) const { return a[i + j * n]; }
};

// Every n x n host matrix of the application is allocated here (zero-filled) and counted, so that a
// test can check that a path makes none (the device-resident pipeline of pipeline.hpp keeps the
// matrix on the device; only --write-matrix and the CPU paths hold it on the host).
Matrix host_matrix(std::size_t n);
std::uint64_t host_matrix_bytes_allocated();  // running total of host_matrix() bytes since start-up

// P0 single layer V_ij = int_Ti int_Tj G(x, y) dy dx: lower triangle computed, mirrored.
Matrix assemble_p0_single_layer(const Geometry& g, double k, const QuadratureOptions& q = {});

// One P0 entry exactly as both assemblies compute it (spot checks of the GPU matrix).
cd p0_single_layer_entry(const Geometry& g, const SingularRules& rules, std::size_t i, std::size_t j, double k, const QuadratureOptions& q);

// P1 operators on the vertices: single layer V and hypersingular W (Maue: int int G [curl u . curl v
// - k^2 (n_x . n_y) u v]). Element pairs i >= j are integrated, each contributing to (a, b) and (b, a).
enum class P1Operator { single_layer, hypersingular };
Matrix assemble_p1(const Mesh& mesh, const Geometry& g, double k, P1Operator op, const QuadratureOptions& q = {});

// Burton–Miller combined-field operators (README, 'Formulations'), coupling eta = i / k; neither is
// symmetric (the double layers are not), so they need an LU solver.
//   sound-soft, P0:  A = V + eta (M/2 + K'),   A phi = -(u_inc + eta d_n u_inc)   (phi as for V phi = -u_inc)
//   sound-hard, P1:  A = M/2 - K - eta W,      A u = u_inc - eta d_n u_inc        (u the total field)
// K u(x) = int d/dn_y G(x, y) u(y) dy, K' phi(x) = int d/dn_x G(x, y) phi(y) dy, M the mass matrix.
inline cd burton_miller_coupling(double k) { return cd(0, 1.0 / k); }
Matrix assemble_p0_burton_miller_soft(const Geometry& g, double k, const QuadratureOptions& q = {});
Matrix assemble_p1_burton_miller_hard(const Mesh& mesh, const Geometry& g, double k, const QuadratureOptions& q = {});
// The same into caller memory (n x n column-major, every entry written).
void assemble_p0_burton_miller_soft_into(const Geometry& g, double k, const QuadratureOptions& q, cd* a);
void assemble_p1_burton_miller_hard_into(const Geometry& g, std::size_t vertices, double k, const QuadratureOptions& q, cd* a);

// GPU assembly of the P0 single layer (assembly_cuda.cu): the regular pass one thread per (test,
// trial) pair of the lower triangle, the singular pairs in a second pass, then the mirror.
struct GpuAssemblyTiming {
    double regular_s = 0, singular_s = 0, mirror_s = 0, total_s = 0;  // device time (CUDA events)
    double upload_s = 0;
    std::string device;
};
bool gpu_available();  // false when built without CUDA or no device is present
// P1 single layer or hypersingular on the GPU: one thread per element pair (i >= j) of the regular
// part, the singular pairs in a second pass, local 3x3 blocks added with double atomics.
Matrix assemble_p1_gpu(const Mesh& mesh, const Geometry& g, double k, P1Operator op, const QuadratureOptions& q, GpuAssemblyTiming* timing);
Matrix assemble_p0_single_layer_gpu(const Geometry& g, double k, const QuadratureOptions& q, GpuAssemblyTiming* timing);
// The same integrals stored as complex single, lower triangle only (entries above the diagonal are
// left as NaN): what a single-precision LDL^T factorisation reads, in half the bytes of a double
// triangle. Column-major n x n.
std::vector<std::complex<float>> assemble_p0_lower_single_gpu(const Geometry& g, double k, const QuadratureOptions& q,
                                                              GpuAssemblyTiming* timing);

// Into device memory `a` of the current CUDA device (order x order, lda = order), nothing copied to
// the host (the device-resident pipeline, pipeline.hpp): the full matrix, or with lower_only the
// lower triangle (i >= j) only, what the LDL^T reads (P0: no mirror pass; P1: each contribution
// added once, half the atomics); the strict upper triangle is then left NaN. Device seconds.
double assemble_p0_single_layer_device(const Geometry& g, double k, const QuadratureOptions& q, bool lower_only, cd* a, GpuAssemblyTiming* timing);
double assemble_p1_device(const Geometry& g, std::size_t vertices, double k, P1Operator op, const QuadratureOptions& q, bool lower_only, cd* a,
                          GpuAssemblyTiming* timing);
// The sound-soft Burton-Miller matrix (P0) into device memory, every entry (not symmetric).
double assemble_p0_burton_miller_soft_device(const Geometry& g, double k, const QuadratureOptions& q, cd* a, GpuAssemblyTiming* timing);
// The sound-hard one (P1), every entry.
double assemble_p1_burton_miller_hard_device(const Geometry& g, std::size_t vertices, double k, const QuadratureOptions& q, cd* a,
                                             GpuAssemblyTiming* timing);
// y = A x and row_abs = |A| 1 (host vectors x, y, row_abs of n entries) from device matrix a:
// lower_symmetric reads the lower triangle of a complex-symmetric A only, else all of it.
void matvec_device(std::size_t n, const cd* a, bool lower_symmetric, const cd* x, cd* y, double* row_abs);

// ---- column blocks (several devices) ---------------------------------------------------------------
// The columns one member of a batchsolve::TiledMatrix holds: tiles of `tile` columns dealt round robin
// over `members`, so local column c is global column ((c / tile) * members + member) * tile + c % tile.
// Every entry (i, j) is computed as the lower-triangle entry (max(i, j), min(i, j)) of the one-device
// assembly, with the same code: P0 columns equal the one-device matrix bit for bit; P1 columns (sums of
// element-pair contributions, added in another order) to rounding.
struct ColumnBlock {
    int member = 0, members = 1, tile = 1;
    std::int64_t local_columns = 0;  // columns this member holds
    std::int64_t order = 0;          // matrix order n (rows, and the leading dimension)
    int device = 0;                  // CUDA device of the member (GPU functions)
    bool owns(std::int64_t column) const { return (column / tile) % members == member; }
    std::int64_t local(std::int64_t column) const { return (column / tile / members) * tile + column % tile; }
    std::int64_t global(std::int64_t c) const { return ((c / tile) * members + member) * tile + c % tile; }
};
// CPU: the member's columns into host memory `local` (order x local_columns, column-major).
void assemble_p0_columns(const Geometry& g, double k, const QuadratureOptions& q, const ColumnBlock& block, cd* local);
void assemble_p1_columns(const Geometry& g, std::size_t vertices, double k, P1Operator op, const QuadratureOptions& q, const ColumnBlock& block,
                         cd* local);
// CUDA (assembly_cuda.cu): the same into device memory `local` of block.device; returns device seconds.
double assemble_p0_columns_gpu(const Geometry& g, double k, const QuadratureOptions& q, const ColumnBlock& block, cd* local);
double assemble_p1_columns_gpu(const Geometry& g, std::size_t vertices, double k, P1Operator op, const QuadratureOptions& q,
                               const ColumnBlock& block, cd* local);
// The member's part of A x for the residual: y[i] += sum over its columns j of a(i, j) x[j] and
// row_abs[i] += |a(i, j)| (host arrays of n entries; x the whole solution). CPU and CUDA versions.
void column_block_matvec(const ColumnBlock& block, const cd* local, const cd* x, cd* y, double* row_abs);
void column_block_matvec_gpu(const ColumnBlock& block, const cd* local, const cd* x, cd* y, double* row_abs);

}  // namespace bem
