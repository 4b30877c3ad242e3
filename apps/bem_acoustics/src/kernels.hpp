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
// rule `ref` (x1, x2, w per point).
BEM_HD void p1_tensor_rule(const double* test_points, const double* test_weights, const double* trial_points, const double* trial_weights,
                           const double* ref, int count, double k, P1Pair& out) {
    p1_clear(out);
    for (int a = 0; a < count; ++a) {
        const double la[3] = {1 - ref[3 * a], ref[3 * a] - ref[3 * a + 1], ref[3 * a + 1]};
        for (int b = 0; b < count; ++b) {
            const double lb[3] = {1 - ref[3 * b], ref[3 * b] - ref[3 * b + 1], ref[3 * b + 1]};
            p1_add(out, la, lb, (test_weights[a] * trial_weights[b]) * green(distance(test_points + 3 * a, trial_points + 3 * b), k));
        }
    }
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

}  // namespace bem::kern
