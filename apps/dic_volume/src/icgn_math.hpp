// The per-point algebra of IC-GN shared by the CPU and GPU engines: the affine warp of a parameter
// vector, its inverse-compositional update, the step norm, and the test that a warped subset
// stays where the sampler may read.
#pragma once

#include <cmath>

#include "icgn.hpp"
#include "interpolation.hpp"

namespace dvc {

// The reference sums of a point (kReferenceSums: the 78 upper-triangle entries of H = sum J J^T
// row by row, sum J f~, sum J, sum f~^2) over voxels that share one x offset d_x, as the GPU's
// threads hold them. J = (g, g_z d, g_y d, g_x d) at offset d = (d_z, d_y, d_x): entry i is
// g[jacobian_gradient(i)] times 1 (i < 3) or d[jacobian_offset(i)]. With d_x constant the six
// products g_a g_c need only the six monomials of degree <= 2 in (d_z, d_y) (36 sums), g f~ and g
// only 1, d_z, d_y (18): 55 running sums and about 60 multiply-adds per voxel instead of 103 and
// 115; expand() multiplies in the powers of d_x.
constexpr int kReferenceSums = 78 + 12 + 12 + 1;
DVC_HD constexpr int jacobian_gradient(int i) { return i < 3 ? i : (i - 3) / 3; }
DVC_HD constexpr int jacobian_offset(int i) { return i < 3 ? -1 : (i - 3) % 3; }
DVC_HD constexpr int gradient_pair(int a, int c) { return a <= c ? a * 3 - a * (a - 1) / 2 + (c - a) : c * 3 - c * (c - 1) / 2 + (a - c); }
// Index of d_z^nz d_y^ny in (1, d_z, d_y, d_z^2, d_z d_y, d_y^2).
DVC_HD constexpr int zy_monomial(int nz, int ny) { return nz == 0 ? (ny == 0 ? 0 : ny == 1 ? 2 : 5) : nz == 1 ? (ny == 0 ? 1 : 4) : 3; }

struct ReferenceLineSums {
    float gg[6][6] = {};
    float gf[3][3] = {};
    float g1[3][3] = {};
    float ff = 0.0f;
    // One voxel: gradient g, f~ = f - mean, offsets d_z, d_y.
    DVC_HD void add(const float g[3], float f, float dz, float dy) {
        const float mono[6] = {1.0f, dz, dy, dz * dz, dz * dy, dy * dy};
DVC_UNROLL
        for (int a = 0; a < 3; ++a)
DVC_UNROLL
            for (int c = a; c < 3; ++c) {
                const float prod = g[a] * g[c];
DVC_UNROLL
                for (int q = 0; q < 6; ++q) gg[gradient_pair(a, c)][q] += prod * mono[q];
            }
DVC_UNROLL
        for (int a = 0; a < 3; ++a) {
            const float w = g[a] * f;
DVC_UNROLL
            for (int q = 0; q < 3; ++q) gf[a][q] += w * mono[q], g1[a][q] += g[a] * mono[q];
        }
        ff += f * f;
    }
    // The kReferenceSums sums of these voxels, whose x offset is dx.
    DVC_HD void expand(float dx, float out[kReferenceSums]) const {
        int q = 0;
DVC_UNROLL
        for (int i = 0; i < 12; ++i)
DVC_UNROLL
            for (int j = i; j < 12; ++j) {
                const int oi = jacobian_offset(i), oj = jacobian_offset(j);
                const int nz = (oi == 0) + (oj == 0), ny = (oi == 1) + (oj == 1), nx = (oi == 2) + (oj == 2);
                const float sum = gg[gradient_pair(jacobian_gradient(i), jacobian_gradient(j))][zy_monomial(nz, ny)];
                out[q++] = nx == 0 ? sum : nx == 1 ? dx * sum : dx * dx * sum;
            }
DVC_UNROLL
        for (int i = 0; i < 12; ++i) {
            const int o = jacobian_offset(i), a = jacobian_gradient(i);
            const int m = o == 0 ? 1 : o == 1 ? 2 : 0;  // the monomial 1, d_z or d_y; d_x is a factor
            out[78 + i] = o == 2 ? dx * gf[a][0] : gf[a][m];
            out[90 + i] = o == 2 ? dx * g1[a][0] : g1[a][m];
        }
        out[102] = ff;
    }
};

// 3x4 affine map [I + G | t] of local offsets, row-major.
DVC_HD void warp_from_params(const double* p, double a[12]) {
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) a[4 * i + j] = p[3 + 3 * i + j] + (i == j ? 1.0 : 0.0);
        a[4 * i + 3] = p[i];
    }
}

DVC_HD void params_from_warp(const double a[12], double* p) {
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) p[3 + 3 * i + j] = a[4 * i + j] - (i == j ? 1.0 : 0.0);
        p[i] = a[4 * i + 3];
    }
}

// W(p) <- W(p) o W(dp)^-1. Returns false when W(dp) is singular.
DVC_HD bool compose_inverse(double* p, const double* dp) {
    double d[12];
    warp_from_params(dp, d);
    // Inverse of the 3x3 part M by cofactors; the inverse translation is -M^-1 t.
    const double m00 = d[0], m01 = d[1], m02 = d[2], m10 = d[4], m11 = d[5], m12 = d[6], m20 = d[8], m21 = d[9], m22 = d[10];
    const double c00 = m11 * m22 - m12 * m21, c01 = m02 * m21 - m01 * m22, c02 = m01 * m12 - m02 * m11;
    const double c10 = m12 * m20 - m10 * m22, c11 = m00 * m22 - m02 * m20, c12 = m02 * m10 - m00 * m12;
    const double c20 = m10 * m21 - m11 * m20, c21 = m01 * m20 - m00 * m21, c22 = m00 * m11 - m01 * m10;
    const double det = m00 * c00 + m01 * c10 + m02 * c20;
    if (!(fabs(det) > 1e-12)) return false;
    const double r = 1.0 / det;
    double inv[12] = {c00 * r, c01 * r, c02 * r, 0, c10 * r, c11 * r, c12 * r, 0, c20 * r, c21 * r, c22 * r, 0};
    for (int i = 0; i < 3; ++i) inv[4 * i + 3] = -(inv[4 * i] * d[3] + inv[4 * i + 1] * d[7] + inv[4 * i + 2] * d[11]);
    double a[12], out[12];
    warp_from_params(p, a);
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 4; ++j) {
            double s = a[4 * i] * inv[j] + a[4 * i + 1] * inv[4 + j] + a[4 * i + 2] * inv[8 + j];
            if (j == 3) s += a[4 * i + 3];
            out[4 * i + j] = s;
        }
    }
    params_from_warp(out, p);
    return true;
}

// ||dp|| with the gradient terms weighted by the subset half-width, so that both are in voxels.
DVC_HD double step_norm(const double* dp, double half) {
    double t = dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2], g = 0.0;
    for (int k = 3; k < 12; ++k) g += dp[k] * dp[k];
    return sqrt(t + half * half * g);
}

// Whether every voxel of the subset around `centre` (half-width h), warped by p, lies where the
// sampler of `reach` reads inside a volume of dims (z, y, x). An affine image of a box is the
// convex hull of its warped corners, so the eight corners decide.
DVC_HD bool warped_subset_inside(const double* p, const double* centre, double h, const std::int64_t* dims,
                                 double reach_lower, double reach_upper) {
    for (int corner = 0; corner < 8; ++corner) {
        const double d[3] = {(corner & 4) ? h : -h, (corner & 2) ? h : -h, (corner & 1) ? h : -h};
        for (int i = 0; i < 3; ++i) {
            const double x = centre[i] + p[i] + d[i] + p[3 + 3 * i] * d[0] + p[4 + 3 * i] * d[1] + p[5 + 3 * i] * d[2];
            if (!(x >= reach_lower && x < double(dims[i]) - reach_upper - 1e-6)) return false;
        }
    }
    return true;
}

// Right-hand side of H dp = -b for ZNSSD from the point's sums (see IcgnSums below), and ZNCC.
// Sums over the subset of N voxels, with f~ = f - f_mean, g~ = g - shift for a shift chosen near
// the mean (to keep the float sums of the GPU free of cancellation):
//   jf[12] = sum J f~,  jg[12] = sum J g~,  j1[12] = sum J,  g1 = sum g~,  gg = sum g~^2,  fg = sum f~ g~.
// ZNSSD's Gauss-Newton step: b = sum J (f~ - (df/dg)(g - g_mean)) with
//   sum J (g - g_mean) = jg - (g1/N) j1,  dg = sqrt(gg - g1^2/N),  df = sqrt(sum f~^2).
// Returns false when the deformed subset has no contrast.
DVC_HD bool znssd_rhs(const double* jf, const double* jg, const double* j1, double g1, double gg, double fg, double n,
                      double df, double* b, float* zncc) {
    const double gmean = g1 / n;
    const double var = gg - g1 * gmean;
    if (!(var > 1e-12 * (gg + 1e-300)) || !(var > 0)) return false;
    const double dg = sqrt(var);
    const double ratio = df / dg;
    for (int k = 0; k < 12; ++k) b[k] = -(jf[k] - ratio * (jg[k] - gmean * j1[k]));
    // fg = sum f~ g~ with sum f~ = 0, so sum f~ (g - g_mean) = fg.
    *zncc = float(fg / (df * dg));
    return true;
}

}  // namespace dvc
