// CUDA assembly of the P0 single layer: regular pass (one thread per (test, trial) pair of the
// lower triangle), singular pass (one thread per vertex-sharing pair, Sauter–Schwab rules), then a
// tiled mirror of the lower triangle into the upper. The integrals are kernels.hpp's, the same code
// the CPU assembly runs.
#include "assembly.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace bem {
namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA assembly: ") + what + ": " + cudaGetErrorString(e));
}

template <class T>
struct DeviceArray {
    T* data = nullptr;
    explicit DeviceArray(std::size_t count) { check(cudaMalloc(&data, count * sizeof(T) + 1), "cudaMalloc"); }
    DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
        check(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
    }
    ~DeviceArray() { cudaFree(data); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
};

// Threads of a block take consecutive test panels i (rows of the column-major matrix), so a warp
// writes 32 consecutive entries of column j; blocks wholly above the diagonal leave at once.
constexpr int regular_block_x = 32, regular_block_y = 8;
constexpr int regular_points_per_panel = 6;  // triangle_rule_regular(); checked against the geometry at run time

__device__ inline void store(double2* a, std::size_t at, double re, double im) { a[at] = make_double2(re, im); }
__device__ inline void store(float2* a, std::size_t at, double re, double im) { a[at] = make_float2(float(re), float(im)); }

// The regular (non-singular) P0 entry of lower pair (i >= j), as both the one-device and the
// column-block kernels compute it: same code, same bits.
__device__ inline kern::Cplx p0_regular_value(int i, int j, const double* centroid, const double* diameter, double near_factor,
                                              const double* __restrict__ regular_points, const double* __restrict__ regular_weights,
                                              const double* near_points, const double* near_weights, int near_count, double k) {
    const double d = kern::distance(centroid + 3 * i, centroid + 3 * j);
    const bool near = d < near_factor * fmax(diameter[i], diameter[j]);
    kern::Cplx v;
    if (near) {
        v = kern::p0_tensor_rule(near_points + 3 * near_count * std::size_t(i), near_weights + near_count * std::size_t(i), near_count,
                                 near_points + 3 * near_count * std::size_t(j), near_weights + near_count * std::size_t(j), near_count, k);
    } else {
        // The common case with its point count known at compile time: the test panel's points in
        // registers, the trial panel's read once per warp (all 32 threads share j). Same summation
        // order as kern::p0_tensor_rule, so CPU and GPU agree to rounding.
        double tp[regular_points_per_panel][3], tw[regular_points_per_panel];
#pragma unroll
        for (int q = 0; q < regular_points_per_panel; ++q) {
            for (int c = 0; c < 3; ++c) tp[q][c] = regular_points[3 * (regular_points_per_panel * std::size_t(i) + q) + c];
            tw[q] = regular_weights[regular_points_per_panel * std::size_t(i) + q];
        }
        const double* sp = regular_points + 3 * regular_points_per_panel * std::size_t(j);
        const double* sw = regular_weights + regular_points_per_panel * std::size_t(j);
        kern::Cplx row[regular_points_per_panel];
#pragma unroll
        for (int q = 0; q < regular_points_per_panel; ++q) row[q] = {0, 0};
#pragma unroll 1
        for (int r = 0; r < regular_points_per_panel; ++r) {
            const double y[3] = {sp[3 * r], sp[3 * r + 1], sp[3 * r + 2]};
            const double w = sw[r];
#pragma unroll
            for (int q = 0; q < regular_points_per_panel; ++q) row[q] = row[q] + w * kern::green(kern::distance(tp[q], y), k);
        }
        v = {0, 0};
#pragma unroll
        for (int q = 0; q < regular_points_per_panel; ++q) v = v + tw[q] * row[q];
    }
    return v;
}

template <class Stored>
__global__ void p0_regular_pass(int n, const int* tri, const double* centroid, const double* diameter, double near_factor,
                                const double* __restrict__ regular_points, const double* __restrict__ regular_weights,
                                const double* near_points, const double* near_weights, int near_count, double k, Stored* a) {
    const int block_last_row = blockIdx.x * blockDim.x + blockDim.x - 1;
    if (block_last_row < int(blockIdx.y * blockDim.y)) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n || i < j) return;
    int pa[3], pb[3];
    if (kern::shared_vertices(tri + 3 * i, tri + 3 * j, pa, pb) > 0) return;  // the singular pass writes these
    const kern::Cplx v = p0_regular_value(i, j, centroid, diameter, near_factor, regular_points, regular_weights, near_points, near_weights,
                                          near_count, k);
    store(a, std::size_t(i) + std::size_t(j) * n, v.re, v.im);
}

// The singular P0 entry of vertex-sharing pair (i >= j) (Sauter-Schwab), shared by both assemblies.
__device__ inline kern::Cplx p0_singular_value(int i, int j, const int* tri, const kern::Panel* panels, const double* jacobian,
                                               const double* coincident, int coincident_count, const double* edge, int edge_count,
                                               const double* vertex, int vertex_count, double k) {
    int pa[3], pb[3];
    const int shared = kern::shared_vertices(tri + 3 * i, tri + 3 * j, pa, pb);
    kern::Panel ti, tj;
    for (int v = 0; v < 3; ++v)
        for (int c = 0; c < 3; ++c) {
            ti.p[v][c] = panels[i].p[pa[v]][c];
            tj.p[v][c] = panels[j].p[pb[v]][c];
        }
    const double* rule = shared == 3 ? coincident : shared == 2 ? edge : vertex;
    const int count = shared == 3 ? coincident_count : shared == 2 ? edge_count : vertex_count;
    const kern::Cplx v = kern::p0_pair_rule(ti, tj, rule, count, k);
    const double jac = jacobian[i] * jacobian[j];
    return {jac * v.re, jac * v.im};
}

template <class Stored>
__global__ void p0_singular_pass(int pairs, int n, const int* pair_i, const int* pair_j, const int* tri, const kern::Panel* panels,
                                 const double* jacobian, const double* coincident, int coincident_count, const double* edge,
                                 int edge_count, const double* vertex, int vertex_count, double k, Stored* a) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= pairs) return;
    const int i = pair_i[s], j = pair_j[s];
    const kern::Cplx v = p0_singular_value(i, j, tri, panels, jacobian, coincident, coincident_count, edge, edge_count, vertex, vertex_count, k);
    store(a, std::size_t(i) + std::size_t(j) * n, v.re, v.im);
}

// Copies the strictly lower triangle to the upper through 32x32 shared-memory tiles, so that both
// the reads and the writes are coalesced.
constexpr int mirror_tile = 32;
template <class Stored>
__global__ void mirror_lower_to_upper(int n, Stored* a) {
    if (blockIdx.x < blockIdx.y) return;  // tile row >= tile column: lower tiles only
    __shared__ Stored tile[mirror_tile][mirror_tile + 1];
    const int row0 = blockIdx.x * mirror_tile, col0 = blockIdx.y * mirror_tile;
    for (int c = threadIdx.y; c < mirror_tile; c += blockDim.y) {
        const int i = row0 + threadIdx.x, j = col0 + c;
        if (i < n && j < n) tile[c][threadIdx.x] = a[std::size_t(i) + std::size_t(j) * n];
    }
    __syncthreads();
    for (int c = threadIdx.y; c < mirror_tile; c += blockDim.y) {
        // write entry (col0 + threadIdx.x, row0 + c) = lower entry (row0 + c, col0 + threadIdx.x)
        const int i = col0 + threadIdx.x, j = row0 + c;
        if (i < n && j < n && j > i) a[std::size_t(i) + std::size_t(j) * n] = tile[threadIdx.x][c];
    }
}

// Sets the strict upper triangle to NaN (tiles above the diagonal only).
__global__ void poison_upper(int n, double2* a) {
    if (blockIdx.x > blockIdx.y) return;  // tile row > tile column: wholly lower
    const double nan = __longlong_as_double(0x7ff8000000000000ll);
    for (int c = threadIdx.y; c < mirror_tile; c += blockDim.y) {
        const int i = blockIdx.x * mirror_tile + threadIdx.x, j = blockIdx.y * mirror_tile + c;
        if (i < n && j < n && i < j) a[std::size_t(i) + std::size_t(j) * n] = make_double2(nan, nan);
    }
}

// P1: one thread per element pair (i >= j); each adds its 3x3 local matrix at (a, b) and, for
// i != j, at (b, a) with double-precision atomics (several element pairs share a vertex pair).
// lower_only (what the LDL^T reads): each contribution once, at (max, min) of its vertex pair: half
// the atomics. A pair i != j that lands on the diagonal (a shared vertex) adds there twice (its two
// mirrored places coincide); the coincident pair i == j adds (a, b) for a >= b only, since its own
// (b, a) entry is the same number.
__device__ inline void atomic_add_cplx(double* at, kern::Cplx v) {
    atomicAdd(at, v.re);
    atomicAdd(at + 1, v.im);
}
__device__ void add_local(double* a, int nv, const int* tri, int i, int j, const kern::Cplx local[3][3], bool lower_only) {
    if (lower_only) {
        for (int p = 0; p < 3; ++p)
            for (int q = 0; q < 3; ++q) {
                const int ga = tri[3 * i + p], gb = tri[3 * j + q];
                if (i == j && ga < gb) continue;
                const std::size_t r = std::size_t(ga > gb ? ga : gb), c = std::size_t(ga > gb ? gb : ga);
                const double twice = (i != j && ga == gb) ? 2.0 : 1.0;
                atomic_add_cplx(a + 2 * (r + c * std::size_t(nv)), twice * local[p][q]);
            }
        return;
    }
    for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q) {
            const std::size_t ga = std::size_t(tri[3 * i + p]), gb = std::size_t(tri[3 * j + q]);
            double* at = a + 2 * (ga + gb * std::size_t(nv));
            atomicAdd(at, local[p][q].re);
            atomicAdd(at + 1, local[p][q].im);
            if (i != j) {
                double* mirrored = a + 2 * (gb + ga * std::size_t(nv));
                atomicAdd(mirrored, local[p][q].re);
                atomicAdd(mirrored + 1, local[p][q].im);
            }
        }
}

// The regular and singular passes' times from events e0 -> e1 -> e2 (e2 already synchronised),
// into `timing` when given; the events are destroyed. Returns the total seconds.
double finish_two_pass_timing(cudaEvent_t e0, cudaEvent_t e1, cudaEvent_t e2, GpuAssemblyTiming* timing) {
    float ms[2];
    cudaEventElapsedTime(&ms[0], e0, e1);
    cudaEventElapsedTime(&ms[1], e1, e2);
    if (timing) {
        timing->regular_s = ms[0] / 1e3;
        timing->singular_s = ms[1] / 1e3;
        timing->mirror_s = 0;
        timing->total_s = (ms[0] + ms[1]) / 1e3;
    }
    for (cudaEvent_t e : {e0, e1, e2}) cudaEventDestroy(e);
    return (ms[0] + ms[1]) / 1e3;
}

struct P1DeviceGeometry {
    int n, nv;
    const int* tri;
    const kern::Panel* panels;
    const double *jacobian, *normal, *centroid, *diameter;
    const double *regular_points, *regular_weights, *regular_ref;
    const double *near_points, *near_weights, *near_ref;
    int regular_count, near_count;
    double near_factor, k;
    bool hypersingular;
    bool lower_only;  // add_local: the lower triangle only (LDL^T), else the whole matrix
};

// The 3x3 local matrix of regular element pair (i >= j) (no shared vertex), for both P1 assemblies.
__device__ inline void p1_regular_local(const P1DeviceGeometry& g, int i, int j, kern::Cplx local[3][3]) {
    const bool near = kern::distance(g.centroid + 3 * i, g.centroid + 3 * j) < g.near_factor * fmax(g.diameter[i], g.diameter[j]);
    const int cnt = near ? g.near_count : g.regular_count;
    const double* pts = near ? g.near_points : g.regular_points;
    const double* wts = near ? g.near_weights : g.regular_weights;
    kern::P1Pair pair;
    // The common (far) case with the point count a compile-time constant, so that the factored
    // tensor rule's loops unroll and the accumulators stay in registers, as in the P0 pass.
    if (!near && cnt == regular_points_per_panel)
        kern::p1_tensor_rule(pts + 3 * regular_points_per_panel * std::size_t(i), wts + regular_points_per_panel * std::size_t(i),
                             pts + 3 * regular_points_per_panel * std::size_t(j), wts + regular_points_per_panel * std::size_t(j), g.regular_ref,
                             regular_points_per_panel, g.k, pair);
    else
        kern::p1_tensor_rule(pts + 3 * cnt * std::size_t(i), wts + cnt * std::size_t(i), pts + 3 * cnt * std::size_t(j), wts + cnt * std::size_t(j),
                             near ? g.near_ref : g.regular_ref, cnt, g.k, pair);
    kern::p1_local_matrix(pair, g.hypersingular, g.panels[i], g.jacobian[i], g.normal + 3 * i, g.panels[j], g.jacobian[j], g.normal + 3 * j, g.k,
                          local);
}

// The same for a vertex-sharing pair (Sauter-Schwab).
__device__ inline void p1_singular_local(const P1DeviceGeometry& g, int i, int j, const double* coincident, int coincident_count, const double* edge,
                                         int edge_count, const double* vertex, int vertex_count, kern::Cplx local[3][3]) {
    int pa[3], pb[3];
    const int shared = kern::shared_vertices(g.tri + 3 * i, g.tri + 3 * j, pa, pb);
    kern::Panel ti, tj;
    for (int v = 0; v < 3; ++v)
        for (int c = 0; c < 3; ++c) {
            ti.p[v][c] = g.panels[i].p[pa[v]][c];
            tj.p[v][c] = g.panels[j].p[pb[v]][c];
        }
    const double* rule = shared == 3 ? coincident : shared == 2 ? edge : vertex;
    const int count = shared == 3 ? coincident_count : shared == 2 ? edge_count : vertex_count;
    kern::P1Pair pair;
    kern::p1_pair_rule(ti, tj, pa, pb, rule, count, g.k, g.jacobian[i] * g.jacobian[j], pair);
    kern::p1_local_matrix(pair, g.hypersingular, g.panels[i], g.jacobian[i], g.normal + 3 * i, g.panels[j], g.jacobian[j], g.normal + 3 * j, g.k,
                          local);
}

__global__ void p1_regular_pass(P1DeviceGeometry g, double* a) {
    const int block_last_row = blockIdx.x * blockDim.x + blockDim.x - 1;
    if (block_last_row < int(blockIdx.y * blockDim.y)) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= g.n || j >= g.n || i < j) return;
    int pa[3], pb[3];
    if (kern::shared_vertices(g.tri + 3 * i, g.tri + 3 * j, pa, pb) > 0) return;
    kern::Cplx local[3][3];
    p1_regular_local(g, i, j, local);
    add_local(a, g.nv, g.tri, i, j, local, g.lower_only);
}

__global__ void p1_singular_pass(P1DeviceGeometry g, int pairs, const int* pair_i, const int* pair_j, const double* coincident, int coincident_count,
                                 const double* edge, int edge_count, const double* vertex, int vertex_count, double* a) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= pairs) return;
    const int i = pair_i[s], j = pair_j[s];
    kern::Cplx local[3][3];
    p1_singular_local(g, i, j, coincident, coincident_count, edge, edge_count, vertex, vertex_count, local);
    add_local(a, g.nv, g.tri, i, j, local, g.lower_only);
}

// ---- Burton-Miller, sound-soft P0: A = V + eta (M/2 + K'), eta = i/k (assembly.hpp) ----------------
// One thread per lower pair (i >= j), as the P0 passes; one pass over the points gives V_ij, K'_ij
// and K'_ji (kern::P0Combined, the CPU assembly's code), written at (i, j) and (j, i): the matrix is
// not symmetric, so there is no mirror pass.
__device__ inline void store_combined(double2* a, int n, int i, int j, const kern::P0Combined& v, double k) {
    const double inv_k = 1.0 / k;  // eta K = (i/k)(re + i im) = (-im/k) + i (re/k)
    a[std::size_t(i) + std::size_t(j) * n] = make_double2(v.v.re - inv_k * v.kp_ij.im, v.v.im + inv_k * v.kp_ij.re);
    if (i != j) a[std::size_t(j) + std::size_t(i) * n] = make_double2(v.v.re - inv_k * v.kp_ji.im, v.v.im + inv_k * v.kp_ji.re);
}

__global__ void p0_bm_regular_pass(int n, const int* tri, const double* centroid, const double* diameter, const double* normal, double near_factor,
                                   const double* regular_points, const double* regular_weights, const double* near_points,
                                   const double* near_weights, int near_count, double k, double2* a) {
    const int block_last_row = blockIdx.x * blockDim.x + blockDim.x - 1;
    if (block_last_row < int(blockIdx.y * blockDim.y)) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n || i < j) return;
    int pa[3], pb[3];
    if (kern::shared_vertices(tri + 3 * i, tri + 3 * j, pa, pb) > 0) return;
    const bool near = kern::distance(centroid + 3 * i, centroid + 3 * j) < near_factor * fmax(diameter[i], diameter[j]);
    const int cnt = near ? near_count : regular_points_per_panel;
    const double* pts = near ? near_points : regular_points;
    const double* wts = near ? near_weights : regular_weights;
    const kern::P0Combined v = kern::p0_combined_tensor_rule(pts + 3 * cnt * std::size_t(i), wts + cnt * std::size_t(i), cnt,
                                                             pts + 3 * cnt * std::size_t(j), wts + cnt * std::size_t(j), cnt, normal + 3 * i,
                                                             normal + 3 * j, k);
    store_combined(a, n, i, j, v, k);
}

__global__ void p0_bm_singular_pass(int pairs, int n, const int* pair_i, const int* pair_j, const int* tri, const kern::Panel* panels,
                                    const double* jacobian, const double* normal, const double* coincident, int coincident_count,
                                    const double* edge, int edge_count, const double* vertex, int vertex_count, double k, double2* a) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= pairs) return;
    const int i = pair_i[s], j = pair_j[s];
    int pa[3], pb[3];
    const int shared = kern::shared_vertices(tri + 3 * i, tri + 3 * j, pa, pb);
    kern::Panel ti, tj;
    for (int v = 0; v < 3; ++v)
        for (int c = 0; c < 3; ++c) {
            ti.p[v][c] = panels[i].p[pa[v]][c];
            tj.p[v][c] = panels[j].p[pb[v]][c];
        }
    const double* rule = shared == 3 ? coincident : shared == 2 ? edge : vertex;
    const int count = shared == 3 ? coincident_count : shared == 2 ? edge_count : vertex_count;
    kern::P0Combined v = kern::p0_combined_pair_rule(ti, tj, rule, count, normal + 3 * i, normal + 3 * j, jacobian[i] * jacobian[j], k);
    // The identity term on the diagonal (P0 mass: the area), added where the CPU assembly adds it.
    store_combined(a, n, i, j, v, k);
    if (i == j) {
        double2& d = a[std::size_t(i) + std::size_t(i) * n];
        d.y += (0.5 * 0.5 * jacobian[i]) / k;  // eta (area / 2) = i area / (2 k)
    }
}

// ---- Burton-Miller, sound-hard P1: A = M/2 - K - eta W, eta = i/k (assembly.hpp) ---------------------
// One thread per lower element pair (i >= j): W's local matrix (symmetric, mirrored) and the double
// layer of both orders (kern::P1DoubleLayer, the CPU assembly's code), added with double atomics into
// the whole matrix; then the mass term, one thread per triangle.
__device__ void add_local_burton_miller(double* a, int nv, const int* tri, int i, int j, const kern::Cplx w[3][3], const kern::P1DoubleLayer& dl,
                                        double k) {
    const double inv_k = 1.0 / k;  // -eta w = -(i/k)(re + i im) = (im/k) - i (re/k)
    for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q) {
            const std::size_t ga = std::size_t(tri[3 * i + p]), gb = std::size_t(tri[3 * j + q]);
            const kern::Cplx ew{w[p][q].im * inv_k, -w[p][q].re * inv_k};
            atomic_add_cplx(a + 2 * (ga + gb * std::size_t(nv)), {ew.re - dl.ij[p][q].re, ew.im - dl.ij[p][q].im});
            if (i != j) atomic_add_cplx(a + 2 * (gb + ga * std::size_t(nv)), {ew.re - dl.ji[p][q].re, ew.im - dl.ji[p][q].im});
        }
}

__global__ void p1_bm_regular_pass(P1DeviceGeometry g, double* a) {
    const int block_last_row = blockIdx.x * blockDim.x + blockDim.x - 1;
    if (block_last_row < int(blockIdx.y * blockDim.y)) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= g.n || j >= g.n || i < j) return;
    int pa[3], pb[3];
    if (kern::shared_vertices(g.tri + 3 * i, g.tri + 3 * j, pa, pb) > 0) return;
    kern::Cplx w[3][3];
    p1_regular_local(g, i, j, w);
    const bool near = kern::distance(g.centroid + 3 * i, g.centroid + 3 * j) < g.near_factor * fmax(g.diameter[i], g.diameter[j]);
    const int cnt = near ? g.near_count : g.regular_count;
    const double* pts = near ? g.near_points : g.regular_points;
    const double* wts = near ? g.near_weights : g.regular_weights;
    kern::P1DoubleLayer dl;
    kern::p1_double_layer_tensor_rule(pts + 3 * cnt * std::size_t(i), wts + cnt * std::size_t(i), pts + 3 * cnt * std::size_t(j),
                                      wts + cnt * std::size_t(j), near ? g.near_ref : g.regular_ref, cnt, g.normal + 3 * i, g.normal + 3 * j, g.k, dl);
    add_local_burton_miller(a, g.nv, g.tri, i, j, w, dl, g.k);
}

__global__ void p1_bm_singular_pass(P1DeviceGeometry g, int pairs, const int* pair_i, const int* pair_j, const double* coincident, int coincident_count,
                                    const double* edge, int edge_count, const double* vertex, int vertex_count, double* a) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= pairs) return;
    const int i = pair_i[s], j = pair_j[s];
    kern::Cplx w[3][3];
    p1_singular_local(g, i, j, coincident, coincident_count, edge, edge_count, vertex, vertex_count, w);
    int pa[3], pb[3];
    const int shared = kern::shared_vertices(g.tri + 3 * i, g.tri + 3 * j, pa, pb);
    kern::Panel ti, tj;
    for (int v = 0; v < 3; ++v)
        for (int c = 0; c < 3; ++c) {
            ti.p[v][c] = g.panels[i].p[pa[v]][c];
            tj.p[v][c] = g.panels[j].p[pb[v]][c];
        }
    const double* rule = shared == 3 ? coincident : shared == 2 ? edge : vertex;
    const int count = shared == 3 ? coincident_count : shared == 2 ? edge_count : vertex_count;
    kern::P1DoubleLayer dl;
    kern::p1_double_layer_pair_rule(ti, tj, pa, pb, rule, count, g.normal + 3 * i, g.normal + 3 * j, g.jacobian[i] * g.jacobian[j], g.k, dl);
    add_local_burton_miller(a, g.nv, g.tri, i, j, w, dl, g.k);
}

// M/2: the P1 mass matrix, area / 12 x (1 + delta_pq) per triangle, halved.
__global__ void p1_half_mass(int n, int nv, const int* tri, const double* jacobian, double* a) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    const double area = 0.5 * jacobian[t];
    for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q) {
            const std::size_t r = std::size_t(tri[3 * t + p]), c = std::size_t(tri[3 * t + q]);
            atomicAdd(a + 2 * (r + c * std::size_t(nv)), 0.5 * area / 12.0 * (p == q ? 2.0 : 1.0));
        }
}

// ---- column blocks (assembly.hpp, ColumnBlock) ---------------------------------------------------

struct DeviceColumns {
    int member, members, tile;
    long long local_columns, order;
    __device__ bool owns(long long column) const { return (column / tile) % members == member; }
    __device__ long long local(long long column) const { return (column / tile / members) * tile + column % tile; }
    __device__ long long global(long long c) const { return ((c / tile) * members + member) * tile + c % tile; }
};

// One thread per (row i, local column c): entry (i, j) as the one-device lower entry (max, min).
__global__ void p0_regular_columns(DeviceColumns cols, const int* tri, const double* centroid, const double* diameter, double near_factor,
                                   const double* __restrict__ regular_points, const double* __restrict__ regular_weights,
                                   const double* near_points, const double* near_weights, int near_count, double k, double2* a) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long c = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    if (i >= cols.order || c >= cols.local_columns) return;
    const long long j = cols.global(c);
    const int r = int(i > j ? i : j), s = int(i > j ? j : i);
    int pa[3], pb[3];
    if (kern::shared_vertices(tri + 3 * r, tri + 3 * s, pa, pb) > 0) return;  // the singular pass writes these
    const kern::Cplx v = p0_regular_value(r, s, centroid, diameter, near_factor, regular_points, regular_weights, near_points, near_weights,
                                          near_count, k);
    a[i + c * cols.order] = make_double2(v.re, v.im);
}

// One thread per vertex-sharing pair (i >= j): written at (i, j) and (j, i) where those columns are here.
__global__ void p0_singular_columns(DeviceColumns cols, int pairs, const int* pair_i, const int* pair_j, const int* tri, const kern::Panel* panels,
                                    const double* jacobian, const double* coincident, int coincident_count, const double* edge, int edge_count,
                                    const double* vertex, int vertex_count, double k, double2* a) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= pairs) return;
    const int i = pair_i[s], j = pair_j[s];
    const bool at_ij = cols.owns(j), at_ji = i != j && cols.owns(i);
    if (!at_ij && !at_ji) return;
    const kern::Cplx v = p0_singular_value(i, j, tri, panels, jacobian, coincident, coincident_count, edge, edge_count, vertex, vertex_count, k);
    if (at_ij) a[i + cols.local(j) * cols.order] = make_double2(v.re, v.im);
    if (at_ji) a[j + cols.local(i) * cols.order] = make_double2(v.re, v.im);
}

__device__ bool touches(const DeviceColumns& cols, const int* tri, int e) {
    return cols.owns(tri[3 * e]) || cols.owns(tri[3 * e + 1]) || cols.owns(tri[3 * e + 2]);
}

// Element pair (i, j)'s local matrix added where its columns are here (and mirrored for i != j).
__device__ void add_local_columns(const DeviceColumns& cols, double* a, const int* tri, int i, int j, const kern::Cplx local[3][3]) {
    for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q) {
            const long long ga = tri[3 * i + p], gb = tri[3 * j + q];
            if (cols.owns(gb)) {
                double* at = a + 2 * (ga + cols.local(gb) * cols.order);
                atomicAdd(at, local[p][q].re);
                atomicAdd(at + 1, local[p][q].im);
            }
            if (i != j && cols.owns(ga)) {
                double* at = a + 2 * (gb + cols.local(ga) * cols.order);
                atomicAdd(at, local[p][q].re);
                atomicAdd(at + 1, local[p][q].im);
            }
        }
}

__global__ void p1_regular_columns(P1DeviceGeometry g, DeviceColumns cols, double* a) {
    const int block_last_row = blockIdx.x * blockDim.x + blockDim.x - 1;
    if (block_last_row < int(blockIdx.y * blockDim.y)) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= g.n || j >= g.n || i < j) return;
    if (!touches(cols, g.tri, i) && !touches(cols, g.tri, j)) return;  // nothing of this pair lands here
    int pa[3], pb[3];
    if (kern::shared_vertices(g.tri + 3 * i, g.tri + 3 * j, pa, pb) > 0) return;
    kern::Cplx local[3][3];
    p1_regular_local(g, i, j, local);
    add_local_columns(cols, a, g.tri, i, j, local);
}

__global__ void p1_singular_columns(P1DeviceGeometry g, DeviceColumns cols, int pairs, const int* pair_i, const int* pair_j,
                                    const double* coincident, int coincident_count, const double* edge, int edge_count, const double* vertex,
                                    int vertex_count, double* a) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= pairs) return;
    const int i = pair_i[s], j = pair_j[s];
    if (!touches(cols, g.tri, i) && !touches(cols, g.tri, j)) return;
    kern::Cplx local[3][3];
    p1_singular_local(g, i, j, coincident, coincident_count, edge, edge_count, vertex, vertex_count, local);
    add_local_columns(cols, a, g.tri, i, j, local);
}

// y[i] = sum over local columns of a(i, c) x[global(c)], row_abs[i] = sum |a(i, c)|: one thread per
// row (consecutive threads read consecutive entries of a column).
__global__ void columns_matvec(DeviceColumns cols, const double2* a, const double2* x, double2* y, double* row_abs) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= cols.order) return;
    double re = 0, im = 0, s = 0;
    for (long long c = 0; c < cols.local_columns; ++c) {
        const double2 v = a[i + c * cols.order], xv = x[cols.global(c)];
        re += v.x * xv.x - v.y * xv.y;
        im += v.x * xv.y + v.y * xv.x;
        s += hypot(v.x, v.y);
    }
    y[i] = make_double2(re, im);
    row_abs[i] = s;
}

// y = A x and row_abs = |A| 1 for a complex-symmetric A of which only the lower triangle (i >= j) is
// stored (the residual check of the LDL^T). One block per 32 x 32 tile of the lower triangle, 32 x 8
// threads: thread (tx, ty) reads entries (row0 + tx, col0 + ty + 8 c), coalesced down the column. An
// entry adds a x_j to row i and, off the diagonal, a x_i to row j; both are reduced in the block
// (rows over ty through shared memory, columns over tx in the warp) before one atomic add per row
// and column of the tile.
constexpr int matvec_tile = 32, matvec_rows_per_pass = 8;
__global__ void lower_symmetric_matvec_kernel(int n, const double2* __restrict__ a, const double2* __restrict__ x, double* y, double* row_abs) {
    const int bi = blockIdx.x, bj = blockIdx.y;
    if (bi < bj) return;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i = bi * matvec_tile + tx;
    const double2 xi = i < n ? x[i] : make_double2(0, 0);
    double rre = 0, rim = 0, rs = 0;
    for (int c = ty; c < matvec_tile; c += matvec_rows_per_pass) {
        const int j = bj * matvec_tile + c;
        const bool valid = i < n && j < n && i >= j;
        const double2 v = valid ? a[std::size_t(i) + std::size_t(j) * std::size_t(n)] : make_double2(0, 0);
        const double av = valid ? hypot(v.x, v.y) : 0.0;
        const double2 xj = j < n ? x[j] : make_double2(0, 0);
        rre += v.x * xj.x - v.y * xj.y;
        rim += v.x * xj.y + v.y * xj.x;
        rs += av;
        const bool mirrored = valid && i != j;
        double cre = mirrored ? v.x * xi.x - v.y * xi.y : 0.0, cim = mirrored ? v.x * xi.y + v.y * xi.x : 0.0, cs = mirrored ? av : 0.0;
        for (int off = 16; off > 0; off >>= 1) {
            cre += __shfl_down_sync(0xffffffffu, cre, off);
            cim += __shfl_down_sync(0xffffffffu, cim, off);
            cs += __shfl_down_sync(0xffffffffu, cs, off);
        }
        if (tx == 0 && j < n && (cre != 0 || cim != 0 || cs != 0)) {
            atomicAdd(y + 2 * j, cre);
            atomicAdd(y + 2 * j + 1, cim);
            atomicAdd(row_abs + j, cs);
        }
    }
    __shared__ double part[3][matvec_rows_per_pass][matvec_tile];
    part[0][ty][tx] = rre;
    part[1][ty][tx] = rim;
    part[2][ty][tx] = rs;
    __syncthreads();
    if (ty == 0 && i < n) {
        for (int r = 1; r < matvec_rows_per_pass; ++r) {
            rre += part[0][r][tx];
            rim += part[1][r][tx];
            rs += part[2][r][tx];
        }
        atomicAdd(y + 2 * i, rre);
        atomicAdd(y + 2 * i + 1, rim);
        atomicAdd(row_abs + i, rs);
    }
}

DeviceColumns device_columns(const ColumnBlock& b) {
    return {b.member, b.members, b.tile, (long long)b.local_columns, (long long)b.order};
}

}  // namespace

bool gpu_available() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

namespace {

// Assembles into device memory `a` of `Stored` (double2: full matrix with the mirror pass, or the
// lower triangle only; float2: the lower triangle, what a single-precision factorisation reads).
// The whole matrix is poisoned first (NaN bytes), so that an entry no pass writes shows up in every
// check (the upper triangle stays NaN without the mirror).
template <class Stored>
void assemble_p0_into(const Geometry& g, double k, const QuadratureOptions& q, bool mirror, GpuAssemblyTiming* timing, Stored* a_device) {
    if (g.regular_count != regular_points_per_panel) throw std::logic_error("GPU assembly: the regular rule changed size; update regular_points_per_panel");
    const std::size_t n = g.n;
    cudaDeviceProp prop{};
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    cudaEvent_t e0, e1, e2, e3, e4;
    for (cudaEvent_t* e : {&e0, &e1, &e2, &e3, &e4}) check(cudaEventCreate(e), "cudaEventCreate");

    const SingularRules rules = make_singular_rules(q.singular_order);
    cudaEventRecord(e0);
    DeviceArray<int> tri(g.tri), pair_i(g.singular_i), pair_j(g.singular_j);
    DeviceArray<double> centroid(g.centroid), diameter(g.diameter), jacobian(g.jacobian);
    DeviceArray<double> reg_pts(g.regular_points), reg_w(g.regular_weights), near_pts(g.near_points), near_w(g.near_weights);
    DeviceArray<kern::Panel> panels(g.panels);
    DeviceArray<double> coincident(rules.coincident), edge(rules.edge), vertex(rules.vertex);
    struct View {
        Stored* data;
    } a{a_device};
    check(cudaMemset(a.data, 0xff, n * n * sizeof(Stored)), "poison");
    cudaEventRecord(e1);
    const dim3 block(regular_block_x, regular_block_y);
    const dim3 grid(unsigned((n + block.x - 1) / block.x), unsigned((n + block.y - 1) / block.y));
    p0_regular_pass<<<grid, block>>>(int(n), tri.data, centroid.data, diameter.data, q.near_factor, reg_pts.data, reg_w.data,
                                     near_pts.data, near_w.data, g.near_count, k, a.data);
    check(cudaGetLastError(), "regular pass launch");
    cudaEventRecord(e2);
    const int pairs = int(g.singular_i.size());
    p0_singular_pass<<<(pairs + 127) / 128, 128>>>(pairs, int(n), pair_i.data, pair_j.data, tri.data, panels.data, jacobian.data,
                                                   coincident.data, int(rules.coincident.size() / 5), edge.data,
                                                   int(rules.edge.size() / 5), vertex.data, int(rules.vertex.size() / 5), k, a.data);
    check(cudaGetLastError(), "singular pass launch");
    cudaEventRecord(e3);
    if (mirror) {
        const unsigned tiles = unsigned((n + mirror_tile - 1) / mirror_tile);
        mirror_lower_to_upper<<<dim3(tiles, tiles), dim3(mirror_tile, 8)>>>(int(n), a.data);
        check(cudaGetLastError(), "mirror launch");
    }
    cudaEventRecord(e4);
    check(cudaEventSynchronize(e4), "assembly");
    float ms[4];
    cudaEventElapsedTime(&ms[0], e0, e1);
    cudaEventElapsedTime(&ms[1], e1, e2);
    cudaEventElapsedTime(&ms[2], e2, e3);
    cudaEventElapsedTime(&ms[3], e3, e4);
    if (timing) {
        timing->upload_s = ms[0] / 1e3;
        timing->regular_s = ms[1] / 1e3;
        timing->singular_s = ms[2] / 1e3;
        timing->mirror_s = ms[3] / 1e3;
        timing->total_s = (ms[1] + ms[2] + ms[3]) / 1e3;
        timing->device = prop.name;
    }
    for (cudaEvent_t e : {e0, e1, e2, e3, e4}) cudaEventDestroy(e);
}

// The same into a temporary device matrix, then copied to `host` (the host-matrix paths and bench).
template <class Stored>
void assemble_on_device(const Geometry& g, double k, const QuadratureOptions& q, bool mirror, GpuAssemblyTiming* timing, Stored* host) {
    if (!gpu_available()) throw std::runtime_error("GPU assembly: no CUDA device");
    const std::size_t n = g.n;
    const double matrix_bytes = double(n) * double(n) * sizeof(Stored);
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const double geometry_bytes = double(n) * (3 * 4 + 16 * 8 + 3 * 8 * (g.regular_count + g.near_count)) + 64e6;
    if (matrix_bytes + geometry_bytes > double(free_bytes))
        throw std::runtime_error("GPU assembly: the P0 matrix of order " + std::to_string(n) + " needs " +
                                 std::to_string((matrix_bytes + geometry_bytes) / double(1 << 30)) + " GiB of GPU memory, " +
                                 std::to_string(double(free_bytes) / double(1 << 30)) + " GiB free");
    DeviceArray<Stored> a(n * n);
    assemble_p0_into(g, k, q, mirror, timing, a.data);
    check(cudaMemcpy(host, a.data, n * n * sizeof(Stored), cudaMemcpyDeviceToHost), "download");
}

}  // namespace

double assemble_p0_single_layer_device(const Geometry& g, double k, const QuadratureOptions& q, bool lower_only, cd* a, GpuAssemblyTiming* timing) {
    GpuAssemblyTiming t;
    assemble_p0_into(g, k, q, !lower_only, &t, reinterpret_cast<double2*>(a));
    if (timing) *timing = t;
    return t.total_s;
}

void matvec_device(std::size_t n, const cd* a, bool lower_symmetric, const cd* x, cd* y, double* row_abs) {
    DeviceArray<double2> dx(n), dy(n);
    DeviceArray<double> drow(n);
    check(cudaMemcpy(dx.data, x, n * sizeof(double2), cudaMemcpyHostToDevice), "upload x");
    if (lower_symmetric) {
        check(cudaMemset(dy.data, 0, n * sizeof(double2)), "clear A x");
        check(cudaMemset(drow.data, 0, n * sizeof(double)), "clear row sums");
        const unsigned tiles = unsigned((n + matvec_tile - 1) / matvec_tile);
        lower_symmetric_matvec_kernel<<<dim3(tiles, tiles), dim3(matvec_tile, matvec_rows_per_pass)>>>(
            int(n), reinterpret_cast<const double2*>(a), dx.data, reinterpret_cast<double*>(dy.data), drow.data);
    } else {
        const DeviceColumns all{0, 1, int(n), (long long)n, (long long)n};
        columns_matvec<<<unsigned((n + 127) / 128), 128>>>(all, reinterpret_cast<const double2*>(a), dx.data, dy.data, drow.data);
    }
    check(cudaGetLastError(), "residual matvec launch");
    check(cudaMemcpy(y, dy.data, n * sizeof(double2), cudaMemcpyDeviceToHost), "download A x");
    check(cudaMemcpy(row_abs, drow.data, n * sizeof(double), cudaMemcpyDeviceToHost), "download row sums");
}

Matrix assemble_p0_single_layer_gpu(const Geometry& g, double k, const QuadratureOptions& q, GpuAssemblyTiming* timing) {
    Matrix m = host_matrix(g.n);
    assemble_on_device(g, k, q, true, timing, reinterpret_cast<double2*>(m.a.data()));
    return m;
}

std::vector<std::complex<float>> assemble_p0_lower_single_gpu(const Geometry& g, double k, const QuadratureOptions& q, GpuAssemblyTiming* timing) {
    std::vector<std::complex<float>> lower(g.n * g.n);
    assemble_on_device(g, k, q, false, timing, reinterpret_cast<float2*>(lower.data()));
    return lower;
}

double assemble_p0_burton_miller_soft_device(const Geometry& g, double k, const QuadratureOptions& q, cd* a_device, GpuAssemblyTiming* timing) {
    if (g.regular_count != regular_points_per_panel) throw std::logic_error("GPU assembly: the regular rule changed size; update regular_points_per_panel");
    const std::size_t n = g.n;
    const SingularRules rules = make_singular_rules(q.singular_order);
    DeviceArray<int> tri(g.tri), pair_i(g.singular_i), pair_j(g.singular_j);
    DeviceArray<double> centroid(g.centroid), diameter(g.diameter), jacobian(g.jacobian), normal(g.normal);
    DeviceArray<double> reg_pts(g.regular_points), reg_w(g.regular_weights), near_pts(g.near_points), near_w(g.near_weights);
    DeviceArray<kern::Panel> panels(g.panels);
    DeviceArray<double> coincident(rules.coincident), edge(rules.edge), vertex(rules.vertex);
    auto* a = reinterpret_cast<double2*>(a_device);
    check(cudaMemset(a, 0xff, n * n * sizeof(double2)), "poison");  // every entry is written: NaN shows one that is not
    cudaEvent_t e0, e1, e2;
    for (cudaEvent_t* e : {&e0, &e1, &e2}) check(cudaEventCreate(e), "cudaEventCreate");
    cudaEventRecord(e0);
    const dim3 block(regular_block_x, regular_block_y);
    const dim3 grid(unsigned((n + block.x - 1) / block.x), unsigned((n + block.y - 1) / block.y));
    p0_bm_regular_pass<<<grid, block>>>(int(n), tri.data, centroid.data, diameter.data, normal.data, q.near_factor, reg_pts.data, reg_w.data,
                                        near_pts.data, near_w.data, g.near_count, k, a);
    check(cudaGetLastError(), "Burton-Miller regular pass launch");
    cudaEventRecord(e1);
    const int pairs = int(g.singular_i.size());
    p0_bm_singular_pass<<<(pairs + 127) / 128, 128>>>(pairs, int(n), pair_i.data, pair_j.data, tri.data, panels.data, jacobian.data, normal.data,
                                                      coincident.data, int(rules.coincident.size() / 5), edge.data, int(rules.edge.size() / 5),
                                                      vertex.data, int(rules.vertex.size() / 5), k, a);
    check(cudaGetLastError(), "Burton-Miller singular pass launch");
    cudaEventRecord(e2);
    check(cudaEventSynchronize(e2), "Burton-Miller assembly");
    return finish_two_pass_timing(e0, e1, e2, timing);
}

double assemble_p1_device(const Geometry& g, std::size_t vertices, double k, P1Operator op, const QuadratureOptions& q, bool lower_only, cd* a_device,
                          GpuAssemblyTiming* timing) {
    const std::size_t n = g.n, nv = vertices;
    cudaDeviceProp prop{};
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    const SingularRules rules = make_singular_rules(q.singular_order);
    DeviceArray<int> tri(g.tri), pair_i(g.singular_i), pair_j(g.singular_j);
    DeviceArray<double> centroid(g.centroid), diameter(g.diameter), jacobian(g.jacobian), normal(g.normal);
    DeviceArray<double> reg_pts(g.regular_points), reg_w(g.regular_weights), near_pts(g.near_points), near_w(g.near_weights);
    DeviceArray<double> reg_ref(g.regular_ref), near_ref(g.near_ref);
    DeviceArray<kern::Panel> panels(g.panels);
    DeviceArray<double> coincident(rules.coincident), edge(rules.edge), vertex(rules.vertex);
    struct View {
        double* data;
    } a{reinterpret_cast<double*>(a_device)};
    // Accumulated into: zero, not poison. Lower only: the upper triangle is poisoned (NaN bytes), so
    // that a reader of it shows up.
    check(cudaMemset(a.data, 0, nv * nv * 16), "clear");
    if (lower_only) {
        const unsigned tiles = unsigned((nv + mirror_tile - 1) / mirror_tile);
        poison_upper<<<dim3(tiles, tiles), dim3(mirror_tile, 8)>>>(int(nv), reinterpret_cast<double2*>(a.data));
        check(cudaGetLastError(), "poison launch");
    }
    P1DeviceGeometry dg{int(n), int(nv), tri.data, panels.data, jacobian.data, normal.data, centroid.data, diameter.data,
                        reg_pts.data, reg_w.data, reg_ref.data, near_pts.data, near_w.data, near_ref.data,
                        g.regular_count, g.near_count, q.near_factor, k, op == P1Operator::hypersingular, lower_only};
    cudaEvent_t e0, e1, e2;
    for (cudaEvent_t* e : {&e0, &e1, &e2}) check(cudaEventCreate(e), "cudaEventCreate");
    cudaEventRecord(e0);
    const dim3 block(regular_block_x, regular_block_y);
    const dim3 grid(unsigned((n + block.x - 1) / block.x), unsigned((n + block.y - 1) / block.y));
    p1_regular_pass<<<grid, block>>>(dg, a.data);
    check(cudaGetLastError(), "P1 regular pass launch");
    cudaEventRecord(e1);
    const int pairs = int(g.singular_i.size());
    p1_singular_pass<<<(pairs + 127) / 128, 128>>>(dg, pairs, pair_i.data, pair_j.data, coincident.data, int(rules.coincident.size() / 5),
                                                   edge.data, int(rules.edge.size() / 5), vertex.data, int(rules.vertex.size() / 5), a.data);
    check(cudaGetLastError(), "P1 singular pass launch");
    cudaEventRecord(e2);
    check(cudaEventSynchronize(e2), "P1 assembly");
    float ms[2];
    cudaEventElapsedTime(&ms[0], e0, e1);
    cudaEventElapsedTime(&ms[1], e1, e2);
    if (timing) {
        timing->regular_s = ms[0] / 1e3;
        timing->singular_s = ms[1] / 1e3;
        timing->mirror_s = 0;
        timing->total_s = (ms[0] + ms[1]) / 1e3;
        timing->device = prop.name;
    }
    for (cudaEvent_t e : {e0, e1, e2}) cudaEventDestroy(e);
    return (ms[0] + ms[1]) / 1e3;
}

double assemble_p1_burton_miller_hard_device(const Geometry& g, std::size_t vertices, double k, const QuadratureOptions& q, cd* a_device,
                                             GpuAssemblyTiming* timing) {
    const std::size_t n = g.n, nv = vertices;
    const SingularRules rules = make_singular_rules(q.singular_order);
    DeviceArray<int> tri(g.tri), pair_i(g.singular_i), pair_j(g.singular_j);
    DeviceArray<double> centroid(g.centroid), diameter(g.diameter), jacobian(g.jacobian), normal(g.normal);
    DeviceArray<double> reg_pts(g.regular_points), reg_w(g.regular_weights), near_pts(g.near_points), near_w(g.near_weights);
    DeviceArray<double> reg_ref(g.regular_ref), near_ref(g.near_ref);
    DeviceArray<kern::Panel> panels(g.panels);
    DeviceArray<double> coincident(rules.coincident), edge(rules.edge), vertex(rules.vertex);
    auto* a = reinterpret_cast<double*>(a_device);
    check(cudaMemset(a, 0, nv * nv * 16), "clear");  // accumulated into
    P1DeviceGeometry dg{int(n), int(nv), tri.data, panels.data, jacobian.data, normal.data, centroid.data, diameter.data,
                        reg_pts.data, reg_w.data, reg_ref.data, near_pts.data, near_w.data, near_ref.data,
                        g.regular_count, g.near_count, q.near_factor, k, true, false};
    cudaEvent_t e0, e1, e2;
    for (cudaEvent_t* e : {&e0, &e1, &e2}) check(cudaEventCreate(e), "cudaEventCreate");
    cudaEventRecord(e0);
    const dim3 block(regular_block_x, regular_block_y);
    const dim3 grid(unsigned((n + block.x - 1) / block.x), unsigned((n + block.y - 1) / block.y));
    p1_bm_regular_pass<<<grid, block>>>(dg, a);
    check(cudaGetLastError(), "P1 Burton-Miller regular pass launch");
    cudaEventRecord(e1);
    const int pairs = int(g.singular_i.size());
    p1_bm_singular_pass<<<(pairs + 127) / 128, 128>>>(dg, pairs, pair_i.data, pair_j.data, coincident.data, int(rules.coincident.size() / 5),
                                                      edge.data, int(rules.edge.size() / 5), vertex.data, int(rules.vertex.size() / 5), a);
    check(cudaGetLastError(), "P1 Burton-Miller singular pass launch");
    p1_half_mass<<<unsigned((n + 127) / 128), 128>>>(int(n), int(nv), tri.data, jacobian.data, a);
    check(cudaGetLastError(), "P1 mass launch");
    cudaEventRecord(e2);
    check(cudaEventSynchronize(e2), "P1 Burton-Miller assembly");
    return finish_two_pass_timing(e0, e1, e2, timing);
}

Matrix assemble_p1_gpu(const Mesh& mesh, const Geometry& g, double k, P1Operator op, const QuadratureOptions& q, GpuAssemblyTiming* timing) {
    if (!gpu_available()) throw std::runtime_error("GPU assembly: no CUDA device");
    const std::size_t n = g.n, nv = mesh.vertex_count();
    const double matrix_bytes = double(nv) * double(nv) * 16;
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const double geometry_bytes = double(n) * (3 * 4 + 160 + 3 * 8 * (g.regular_count + g.near_count)) + 64e6;
    if (matrix_bytes + geometry_bytes > double(free_bytes))
        throw std::runtime_error("GPU assembly: the P1 matrix of order " + std::to_string(nv) + " needs " +
                                 std::to_string((matrix_bytes + geometry_bytes) / double(1 << 30)) + " GiB of GPU memory, " +
                                 std::to_string(double(free_bytes) / double(1 << 30)) + " GiB free");
    DeviceArray<cd> a(nv * nv);
    assemble_p1_device(g, nv, k, op, q, false, a.data, timing);
    Matrix m = host_matrix(nv);
    check(cudaMemcpy(m.a.data(), a.data, nv * nv * 16, cudaMemcpyDeviceToHost), "download");
    return m;
}

// ---- column blocks: host side -------------------------------------------------------------------

namespace {
// Everything the column kernels read about the mesh, on the member's device.
struct ColumnGeometry {
    SingularRules rules;
    DeviceArray<int> tri, pair_i, pair_j;
    DeviceArray<double> centroid, diameter, jacobian, normal, reg_pts, reg_w, near_pts, near_w, reg_ref, near_ref;
    DeviceArray<kern::Panel> panels;
    DeviceArray<double> coincident, edge, vertex;
    ColumnGeometry(const Geometry& g, const QuadratureOptions& q)
        : rules(make_singular_rules(q.singular_order)), tri(g.tri), pair_i(g.singular_i), pair_j(g.singular_j), centroid(g.centroid),
          diameter(g.diameter), jacobian(g.jacobian), normal(g.normal), reg_pts(g.regular_points), reg_w(g.regular_weights),
          near_pts(g.near_points), near_w(g.near_weights), reg_ref(g.regular_ref), near_ref(g.near_ref), panels(g.panels),
          coincident(rules.coincident), edge(rules.edge), vertex(rules.vertex) {}
};

struct EventTimer {
    cudaEvent_t start, stop;
    EventTimer() {
        check(cudaEventCreate(&start), "cudaEventCreate");
        check(cudaEventCreate(&stop), "cudaEventCreate");
        cudaEventRecord(start);
    }
    double seconds() {
        cudaEventRecord(stop);
        check(cudaEventSynchronize(stop), "column assembly");
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        return ms / 1e3;
    }
    ~EventTimer() {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
};
}  // namespace

double assemble_p0_columns_gpu(const Geometry& g, double k, const QuadratureOptions& q, const ColumnBlock& block, cd* local) {
    if (g.regular_count != regular_points_per_panel) throw std::logic_error("GPU assembly: the regular rule changed size; update regular_points_per_panel");
    check(cudaSetDevice(block.device), "cudaSetDevice");
    if (block.local_columns == 0) return 0;  // a member without columns (more members than tiles)
    ColumnGeometry dg(g, q);
    auto* a = reinterpret_cast<double2*>(local);
    // Poisoned first (NaN bytes), so that an entry no pass writes shows up in the residual check.
    check(cudaMemset(a, 0xff, std::size_t(block.local_columns * block.order) * sizeof(double2)), "poison");
    EventTimer timer;
    const DeviceColumns cols = device_columns(block);
    if (block.local_columns > 0) {
        const dim3 threads(regular_block_x, regular_block_y);
        const dim3 grid(unsigned((block.order + threads.x - 1) / threads.x), unsigned((block.local_columns + threads.y - 1) / threads.y));
        p0_regular_columns<<<grid, threads>>>(cols, dg.tri.data, dg.centroid.data, dg.diameter.data, q.near_factor, dg.reg_pts.data, dg.reg_w.data,
                                              dg.near_pts.data, dg.near_w.data, g.near_count, k, a);
        check(cudaGetLastError(), "column regular pass launch");
        const int pairs = int(g.singular_i.size());
        p0_singular_columns<<<(pairs + 127) / 128, 128>>>(cols, pairs, dg.pair_i.data, dg.pair_j.data, dg.tri.data, dg.panels.data, dg.jacobian.data,
                                                          dg.coincident.data, int(dg.rules.coincident.size() / 5), dg.edge.data,
                                                          int(dg.rules.edge.size() / 5), dg.vertex.data, int(dg.rules.vertex.size() / 5), k, a);
        check(cudaGetLastError(), "column singular pass launch");
    }
    return timer.seconds();
}

double assemble_p1_columns_gpu(const Geometry& g, std::size_t vertices, double k, P1Operator op, const QuadratureOptions& q, const ColumnBlock& block,
                               cd* local) {
    check(cudaSetDevice(block.device), "cudaSetDevice");
    if (block.local_columns == 0) return 0;
    ColumnGeometry dg(g, q);
    auto* a = reinterpret_cast<double*>(local);
    check(cudaMemset(a, 0, std::size_t(block.local_columns * block.order) * 16), "clear");  // accumulated into
    P1DeviceGeometry pg{int(g.n), int(vertices), dg.tri.data, dg.panels.data, dg.jacobian.data, dg.normal.data, dg.centroid.data, dg.diameter.data,
                        dg.reg_pts.data, dg.reg_w.data, dg.reg_ref.data, dg.near_pts.data, dg.near_w.data, dg.near_ref.data,
                        g.regular_count, g.near_count, q.near_factor, k, op == P1Operator::hypersingular, false};
    EventTimer timer;
    const DeviceColumns cols = device_columns(block);
    if (block.local_columns > 0) {
        const dim3 threads(regular_block_x, regular_block_y);
        const dim3 grid(unsigned((g.n + threads.x - 1) / threads.x), unsigned((g.n + threads.y - 1) / threads.y));
        p1_regular_columns<<<grid, threads>>>(pg, cols, a);
        check(cudaGetLastError(), "P1 column regular pass launch");
        const int pairs = int(g.singular_i.size());
        p1_singular_columns<<<(pairs + 127) / 128, 128>>>(pg, cols, pairs, dg.pair_i.data, dg.pair_j.data, dg.coincident.data,
                                                          int(dg.rules.coincident.size() / 5), dg.edge.data, int(dg.rules.edge.size() / 5),
                                                          dg.vertex.data, int(dg.rules.vertex.size() / 5), a);
        check(cudaGetLastError(), "P1 column singular pass launch");
    }
    return timer.seconds();
}

void column_block_matvec_gpu(const ColumnBlock& block, const cd* local, const cd* x, cd* y, double* row_abs) {
    check(cudaSetDevice(block.device), "cudaSetDevice");
    if (block.local_columns == 0) return;  // adds nothing
    const std::size_t n = std::size_t(block.order);
    DeviceArray<double2> dx(n), dy(n);
    DeviceArray<double> drow(n);
    check(cudaMemcpy(dx.data, x, n * sizeof(double2), cudaMemcpyHostToDevice), "upload x");
    columns_matvec<<<unsigned((n + 127) / 128), 128>>>(device_columns(block), reinterpret_cast<const double2*>(local), dx.data, dy.data, drow.data);
    check(cudaGetLastError(), "matvec launch");
    std::vector<cd> part(n);
    std::vector<double> part_abs(n);
    check(cudaMemcpy(part.data(), dy.data, n * sizeof(double2), cudaMemcpyDeviceToHost), "download A x");
    check(cudaMemcpy(part_abs.data(), drow.data, n * sizeof(double), cudaMemcpyDeviceToHost), "download row sums");
    for (std::size_t i = 0; i < n; ++i) {
        y[i] += part[i];
        row_abs[i] += part_abs[i];
    }
}

}  // namespace bem
