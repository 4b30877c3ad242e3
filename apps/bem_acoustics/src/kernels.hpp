// Helmholtz Galerkin integrals over triangle pairs, shared verbatim by the CPU (OpenMP) and the
// CUDA assembly so that the two agree by construction: the Green's function, points on a panel in
// Sauter–Schwab's reference coordinates, the shared-vertex classification of a pair and the
// quadrature sums for P0 (constant) and P1 (linear) elements.
//
// Reference triangle (Sauter & Schwab, "Boundary Element Methods", ch. 5): {0 <= x2 <= x1 <= 1},
// mapped to a panel (P0, P1, P2) by chi(x) = P0 + x1 (P1 - P0) + x2 (P2 - P1); its Jacobian is twice
// the panel's area and the barycentric coordinates are (1 - x1, x1 - x2, x2).
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define BEM_HD __host__ __device__ inline
#else
#define BEM_HD inline
#endif

namespace bem::kern {

struct Cplx {
    double re, im;
};
BEM_HD Cplx operator+(Cplx a, Cplx b) { return {a.re + b.re, a.im + b.im}; }
BEM_HD Cplx operator*(double s, Cplx a) { return {s * a.re, s * a.im}; }

constexpr double inv_four_pi = 0.079577471545947667884;  // 1 / (4 pi)

// G(r) = exp(i k r) / (4 pi r), the outgoing free-space Green's function (time factor exp(-i w t)).
BEM_HD Cplx green(double r, double k) {
    double s, c;
#if defined(__CUDA_ARCH__)
    sincos(k * r, &s, &c);
#else
    s = std::sin(k * r);
    c = std::cos(k * r);
#endif
    const double scale = inv_four_pi / r;
    return {c * scale, s * scale};
}

// A panel as three corner points (row-major 3x3: corner, coordinate).
struct Panel {
    double p[3][3];
};

BEM_HD void panel_point(const Panel& t, double x1, double x2, double out[3]) {
    for (int c = 0; c < 3; ++c) out[c] = t.p[0][c] + x1 * (t.p[1][c] - t.p[0][c]) + x2 * (t.p[2][c] - t.p[1][c]);
}

BEM_HD double distance(const double a[3], const double b[3]) {
    const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

// How two triangles touch: 0 (disjoint), 1 (a vertex), 2 (an edge), 3 (the same triangle). The
// permutations put the shared vertices first, in the same order in both, which is what the
// Sauter–Schwab rules of each case expect (common vertex at P0, common edge P0-P1).
BEM_HD int shared_vertices(const int a[3], const int b[3], int pa[3], int pb[3]) {
    int count = 0;
    bool used_a[3] = {false, false, false}, used_b[3] = {false, false, false};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            if (a[i] == b[j]) {
                pa[count] = i;
                pb[count] = j;
                used_a[i] = used_b[j] = true;
                ++count;
            }
    int fa = count, fb = count;
    for (int i = 0; i < 3; ++i) {
        if (!used_a[i]) pa[fa++] = i;
        if (!used_b[i]) pb[fb++] = i;
    }
    return count;
}

// Sum over a pair rule: `rule` holds (x1, x2, y1, y2, w) per point in reference coordinates of the
// (reordered) test and trial panels; the caller multiplies by both Jacobians.
BEM_HD Cplx p0_pair_rule(const Panel& test, const Panel& trial, const double* rule, int count, double k) {
    Cplx sum{0, 0};
    for (int q = 0; q < count; ++q) {
        const double* r = rule + 5 * q;
        double x[3], y[3];
        panel_point(test, r[0], r[1], x);
        panel_point(trial, r[2], r[3], y);
        sum = sum + r[4] * green(distance(x, y), k);
    }
    return sum;
}

// Sum over the tensor product of two per-panel point sets (physical points, weights that already
// include the Jacobian): the regular (disjoint) pairs.
BEM_HD Cplx p0_tensor_rule(const double* test_points, const double* test_weights, int test_count,
                           const double* trial_points, const double* trial_weights, int trial_count, double k) {
    Cplx sum{0, 0};
    for (int a = 0; a < test_count; ++a) {
        Cplx row{0, 0};
        for (int b = 0; b < trial_count; ++b)
            row = row + trial_weights[b] * green(distance(test_points + 3 * a, trial_points + 3 * b), k);
        sum = sum + test_weights[a] * row;
    }
    return sum;
}

// ---- P1 (continuous piecewise linear) ----------------------------------------------------------

// The integrals a P1 pair needs, in each panel's original vertex order: int int G and
// int int G lambda_a(x) lambda_b(y). P1 single layer is `basis`; Maue's hypersingular form combines
// both with the (constant) surface curls and normals.
struct P1Pair {
    Cplx plain;
    Cplx basis[3][3];
};

BEM_HD void p1_clear(P1Pair& p) {
    p.plain = {0, 0};
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) p.basis[a][b] = {0, 0};
}

BEM_HD void p1_add(P1Pair& p, const double la[3], const double lb[3], Cplx weighted_g) {
    p.plain = p.plain + weighted_g;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) p.basis[a][b] = p.basis[a][b] + (la[a] * lb[b]) * weighted_g;
}

// Singular pairs: `test` and `trial` reordered by shared_vertices (perms pa, pb), `jacobian` the
// product of both panels' Jacobians.
BEM_HD void p1_pair_rule(const Panel& test, const Panel& trial, const int pa[3], const int pb[3], const double* rule, int count, double k,
                         double jacobian, P1Pair& out) {
    p1_clear(out);
    for (int q = 0; q < count; ++q) {
        const double* r = rule + 5 * q;
        double x[3], y[3];
        panel_point(test, r[0], r[1], x);
        panel_point(trial, r[2], r[3], y);
        const double rx[3] = {1 - r[0], r[0] - r[1], r[1]}, ry[3] = {1 - r[2], r[2] - r[3], r[3]};
        double la[3], lb[3];
        for (int m = 0; m < 3; ++m) {
            la[pa[m]] = rx[m];
            lb[pb[m]] = ry[m];
        }
        p1_add(out, la, lb, (r[4] * jacobian) * green(distance(x, y), k));
    }
}

// Disjoint pairs: per-panel physical points and weights (Jacobian included) of the same reference
// rule `ref` (x1, x2, w per point). Factored like the P0 rule: for each test point the trial sums
// row[q] = sum_b w_b G(x_a, y_b) lambda_q(y_b) (3 complex accumulations per kernel evaluation instead
// of 10), then basis[p][q] += w_a lambda_p(x_a) row[q] once per test point; `plain` is the sum of all
// nine (the barycentric functions sum to one), so it costs nothing per evaluation.
BEM_HD void p1_tensor_rule(const double* test_points, const double* test_weights, const double* trial_points, const double* trial_weights,
                           const double* ref, int count, double k, P1Pair& out) {
    p1_clear(out);
    for (int a = 0; a < count; ++a) {
        Cplx row[3] = {{0, 0}, {0, 0}, {0, 0}};
        for (int b = 0; b < count; ++b) {
            const double lb[3] = {1 - ref[3 * b], ref[3 * b] - ref[3 * b + 1], ref[3 * b + 1]};
            const Cplx g = trial_weights[b] * green(distance(test_points + 3 * a, trial_points + 3 * b), k);
            for (int q = 0; q < 3; ++q) row[q] = row[q] + lb[q] * g;
        }
        const double la[3] = {1 - ref[3 * a], ref[3 * a] - ref[3 * a + 1], ref[3 * a + 1]};
        for (int p = 0; p < 3; ++p)
            for (int q = 0; q < 3; ++q) out.basis[p][q] = out.basis[p][q] + (test_weights[a] * la[p]) * row[q];
    }
    for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q) out.plain = out.plain + out.basis[p][q];
}

// Surface curl of the barycentric function of vertex v on a panel: -(P_{v+2} - P_{v+1}) / jacobian
// (the sign convention cancels in the product of two curls on a consistently oriented surface).
BEM_HD void surface_curls(const Panel& p, double jacobian, double curl[3][3]) {
    for (int v = 0; v < 3; ++v)
        for (int c = 0; c < 3; ++c) curl[v][c] = -(p.p[(v + 2) % 3][c] - p.p[(v + 1) % 3][c]) / jacobian;
}

// The 3x3 local matrix of a pair: single layer (basis) or Maue's hypersingular form
// curl_a . curl_b int int G - k^2 (n_x . n_y) int int G lambda_a lambda_b.
BEM_HD void p1_local_matrix(const P1Pair& p, bool hypersingular, const Panel& test, double test_jacobian, const double* test_normal,
                            const Panel& trial, double trial_jacobian, const double* trial_normal, double k, Cplx local[3][3]) {
    if (!hypersingular) {
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) local[a][b] = p.basis[a][b];
        return;
    }
    double ci[3][3], cj[3][3];
    surface_curls(test, test_jacobian, ci);
    surface_curls(trial, trial_jacobian, cj);
    const double nn = test_normal[0] * trial_normal[0] + test_normal[1] * trial_normal[1] + test_normal[2] * trial_normal[2];
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            const double cc = ci[a][0] * cj[b][0] + ci[a][1] * cj[b][1] + ci[a][2] * cj[b][2];
            local[a][b] = cc * p.plain + (-k * k * nn) * p.basis[a][b];
        }
}

// ---- double-layer kernels (Burton–Miller) -------------------------------------------------------

BEM_HD Cplx operator*(Cplx a, Cplx b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }

// G(r) and h(r) = G'(r) / r = G(r) (i k - 1/r) / r, so that grad_x G(x, y) = h (x - y):
// the normal derivatives are d/dn_x G = h (x - y) . n_x and d/dn_y G = h (y - x) . n_y.
BEM_HD void green_and_gradient(double r, double k, Cplx& g, Cplx& h) {
    g = green(r, k);
    const double inv_r = 1.0 / r;
    h = inv_r * (g * Cplx{-inv_r, k});
}

// The P0 integrals of one pair (x on the test panel i, y on the trial panel j) that the combined
// sound-soft equation needs, from one pass over the points: V_ij = int int G, the adjoint double layer
// K'_ij = int int d/dn_x G (n_x = n_i) and K'_ji = int_Tj int_Ti d/dn G (normal n_j, the mirrored pair).
struct P0Combined {
    Cplx v, kp_ij, kp_ji;
};
BEM_HD void p0_combined_add(P0Combined& out, const double x[3], const double y[3], const double ni[3], const double nj[3], double w, double k) {
    const double d[3] = {x[0] - y[0], x[1] - y[1], x[2] - y[2]};
    Cplx g, h;
    green_and_gradient(sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), k, g, h);
    out.v = out.v + w * g;
    out.kp_ij = out.kp_ij + (w * (d[0] * ni[0] + d[1] * ni[1] + d[2] * ni[2])) * h;
    out.kp_ji = out.kp_ji + (-w * (d[0] * nj[0] + d[1] * nj[1] + d[2] * nj[2])) * h;
}
// Disjoint pairs: per-panel physical points with Jacobian-weighted weights.
BEM_HD P0Combined p0_combined_tensor_rule(const double* test_points, const double* test_weights, int test_count, const double* trial_points,
                                          const double* trial_weights, int trial_count, const double ni[3], const double nj[3], double k) {
    P0Combined out{{0, 0}, {0, 0}, {0, 0}};
    for (int a = 0; a < test_count; ++a)
        for (int b = 0; b < trial_count; ++b)
            p0_combined_add(out, test_points + 3 * a, trial_points + 3 * b, ni, nj, test_weights[a] * trial_weights[b], k);
    return out;
}
// Vertex-sharing pairs (reordered panels, Sauter–Schwab rule); `jacobian` the product of both.
BEM_HD P0Combined p0_combined_pair_rule(const Panel& test, const Panel& trial, const double* rule, int count, const double ni[3], const double nj[3],
                                        double jacobian, double k) {
    P0Combined out{{0, 0}, {0, 0}, {0, 0}};
    for (int q = 0; q < count; ++q) {
        const double* r = rule + 5 * q;
        double x[3], y[3];
        panel_point(test, r[0], r[1], x);
        panel_point(trial, r[2], r[3], y);
        p0_combined_add(out, x, y, ni, nj, r[4] * jacobian, k);
    }
    return out;
}

// P1 double layer of one pair, both orders: ij[p][q] = int int lambda_p(x) lambda_q(y) d/dn_y G (x on
// panel i, y on panel j, normal n_j: the entry (tri_i[p], tri_j[q]) of K), ji[p][q] = the same with
// d/dn_x G (normal n_i: the mirrored pair's contribution at (tri_j[q], tri_i[p])).
struct P1DoubleLayer {
    Cplx ij[3][3], ji[3][3];
};
BEM_HD void p1_double_layer_clear(P1DoubleLayer& p) {
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) p.ij[a][b] = p.ji[a][b] = {0, 0};
}
BEM_HD void p1_double_layer_add(P1DoubleLayer& out, const double x[3], const double y[3], const double la[3], const double lb[3],
                                const double ni[3], const double nj[3], double w, double k) {
    const double d[3] = {x[0] - y[0], x[1] - y[1], x[2] - y[2]};
    Cplx g, h;
    green_and_gradient(sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), k, g, h);
    const Cplx hy = (-w * (d[0] * nj[0] + d[1] * nj[1] + d[2] * nj[2])) * h;
    const Cplx hx = (w * (d[0] * ni[0] + d[1] * ni[1] + d[2] * ni[2])) * h;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            out.ij[a][b] = out.ij[a][b] + (la[a] * lb[b]) * hy;
            out.ji[a][b] = out.ji[a][b] + (la[a] * lb[b]) * hx;
        }
}
BEM_HD void p1_double_layer_tensor_rule(const double* test_points, const double* test_weights, const double* trial_points, const double* trial_weights,
                                        const double* ref, int count, const double ni[3], const double nj[3], double k, P1DoubleLayer& out) {
    p1_double_layer_clear(out);
    for (int a = 0; a < count; ++a) {
        const double la[3] = {1 - ref[3 * a], ref[3 * a] - ref[3 * a + 1], ref[3 * a + 1]};
        for (int b = 0; b < count; ++b) {
            const double lb[3] = {1 - ref[3 * b], ref[3 * b] - ref[3 * b + 1], ref[3 * b + 1]};
            p1_double_layer_add(out, test_points + 3 * a, trial_points + 3 * b, la, lb, ni, nj, test_weights[a] * trial_weights[b], k);
        }
    }
}
BEM_HD void p1_double_layer_pair_rule(const Panel& test, const Panel& trial, const int pa[3], const int pb[3], const double* rule, int count,
                                      const double ni[3], const double nj[3], double jacobian, double k, P1DoubleLayer& out) {
    p1_double_layer_clear(out);
    for (int q = 0; q < count; ++q) {
        const double* r = rule + 5 * q;
        double x[3], y[3];
        panel_point(test, r[0], r[1], x);
        panel_point(trial, r[2], r[3], y);
        const double rx[3] = {1 - r[0], r[0] - r[1], r[1]}, ry[3] = {1 - r[2], r[2] - r[3], r[3]};
        double la[3], lb[3];
        for (int m = 0; m < 3; ++m) {
            la[pa[m]] = rx[m];
            lb[pb[m]] = ry[m];
        }
        p1_double_layer_add(out, x, y, la, lb, ni, nj, r[4] * jacobian, k);
    }
}

}  // namespace bem::kern
