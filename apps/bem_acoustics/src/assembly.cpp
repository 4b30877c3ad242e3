// Quadrature rules, mesh geometry and the CPU (OpenMP) Galerkin assembly of assembly.hpp.
#include "assembly.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <stdexcept>

#include <batchsolve_io/progress.hpp>

namespace bem {

namespace {
std::atomic<std::uint64_t> host_matrix_bytes{0};
}

Matrix host_matrix(std::size_t n) {
    Matrix m;
    m.n = n;
    m.a.assign(n * n, cd(0, 0));
    host_matrix_bytes += std::uint64_t(n) * n * sizeof(cd);
    return m;
}

std::uint64_t host_matrix_bytes_allocated() { return host_matrix_bytes.load(); }

void gauss_legendre_01(int order, std::vector<double>& nodes, std::vector<double>& weights) {
    if (order < 1 || order > 64) throw std::invalid_argument("gauss_legendre_01: order must be 1..64");
    nodes.assign(order, 0);
    weights.assign(order, 0);
    for (int i = 0; i < order; ++i) {
        // Newton on P_order from Chebyshev-like starting values; the recurrence gives P and P'.
        double x = std::cos(M_PI * (i + 0.75) / (order + 0.5)), dp = 0;
        for (int it = 0; it < 100; ++it) {
            double p0 = 1, p1 = x;
            for (int m = 2; m <= order; ++m) {
                const double p2 = ((2 * m - 1) * x * p1 - (m - 1) * p0) / m;
                p0 = p1;
                p1 = p2;
            }
            if (order == 1) { p1 = x; p0 = 1; }
            dp = order * (x * p1 - p0) / (x * x - 1);
            const double dx = p1 / dp;
            x -= dx;
            if (std::abs(dx) < 1e-16) break;
        }
        nodes[i] = 0.5 * (1 - x);
        weights[i] = 1.0 / ((1 - x * x) * dp * dp);  // 2/((1-x^2)P'^2) on [-1,1], halved for [0,1]
    }
}

SingularRules make_singular_rules(int order) {
    std::vector<double> g, w;
    gauss_legendre_01(order, g, w);
    SingularRules r;
    auto put = [](std::vector<double>& out, double x1, double x2, double y1, double y2, double weight) {
        out.insert(out.end(), {x1, x2, y1, y2, weight});
    };
    for (int a = 0; a < order; ++a)
        for (int b = 0; b < order; ++b)
            for (int c = 0; c < order; ++c)
                for (int d = 0; d < order; ++d) {
                    const double xi = g[a], e1 = g[b], e2 = g[c], e3 = g[d];
                    const double weight = w[a] * w[b] * w[c] * w[d];
                    const double x3 = xi * xi * xi;
                    // Coincident panels: six regions, Jacobian xi^3 e1^2 e2.
                    const double jc = weight * x3 * e1 * e1 * e2;
                    put(r.coincident, xi, xi * (1 - e1 + e1 * e2), xi * (1 - e1 * e2 * e3), xi * (1 - e1), jc);
                    put(r.coincident, xi * (1 - e1 * e2 * e3), xi * (1 - e1), xi, xi * (1 - e1 + e1 * e2), jc);
                    put(r.coincident, xi, xi * e1 * (1 - e2 + e2 * e3), xi * (1 - e1 * e2), xi * e1 * (1 - e2), jc);
                    put(r.coincident, xi * (1 - e1 * e2), xi * e1 * (1 - e2), xi, xi * e1 * (1 - e2 + e2 * e3), jc);
                    put(r.coincident, xi * (1 - e1 * e2 * e3), xi * e1 * (1 - e2 * e3), xi, xi * e1 * (1 - e2), jc);
                    put(r.coincident, xi, xi * e1 * (1 - e2), xi * (1 - e1 * e2 * e3), xi * e1 * (1 - e2 * e3), jc);
                    // Common edge P0-P1 (x2 = 0 on both panels): five regions.
                    const double je1 = weight * x3 * e1 * e1, je = je1 * e2;
                    put(r.edge, xi, xi * e1 * e3, xi * (1 - e1 * e2), xi * e1 * (1 - e2), je1);
                    put(r.edge, xi, xi * e1, xi * (1 - e1 * e2 * e3), xi * e1 * e2 * (1 - e3), je);
                    put(r.edge, xi * (1 - e1 * e2), xi * e1 * (1 - e2), xi, xi * e1 * e2 * e3, je);
                    put(r.edge, xi * (1 - e1 * e2 * e3), xi * e1 * e2 * (1 - e3), xi, xi * e1, je);
                    put(r.edge, xi * (1 - e1 * e2 * e3), xi * e1 * (1 - e2 * e3), xi, xi * e1 * e2, je);
                    // Common vertex P0: two regions, Jacobian xi^3 e2.
                    const double jv = weight * x3 * e2;
                    put(r.vertex, xi, xi * e1, xi * e2, xi * e2 * e3, jv);
                    put(r.vertex, xi * e2, xi * e2 * e3, xi, xi * e1, jv);
                }
    return r;
}

std::vector<double> triangle_rule_regular() {
    // Strang–Fix/Dunavant 6-point rule, exact for degree 4, in barycentric coordinates.
    const double a = 0.445948490915965, wa = 0.223381589678011;
    const double b = 0.091576213509771, wb = 0.109951743655322;
    const double bary[6][3] = {{a, a, 1 - 2 * a}, {a, 1 - 2 * a, a}, {1 - 2 * a, a, a},
                               {b, b, 1 - 2 * b}, {b, 1 - 2 * b, b}, {1 - 2 * b, b, b}};
    std::vector<double> rule;
    for (int p = 0; p < 6; ++p) rule.insert(rule.end(), {1 - bary[p][0], bary[p][2], 0.5 * (p < 3 ? wa : wb)});
    return rule;
}

std::vector<double> triangle_rule_near() {
    const std::vector<double> base = triangle_rule_regular();
    // The reference triangle (0,0), (1,0), (1,1) split at its edge midpoints.
    const double sub[4][3][2] = {{{0, 0}, {0.5, 0}, {0.5, 0.5}},
                                 {{0.5, 0}, {1, 0}, {1, 0.5}},
                                 {{0.5, 0.5}, {1, 0.5}, {1, 1}},
                                 {{0.5, 0}, {1, 0.5}, {0.5, 0.5}}};
    std::vector<double> rule;
    for (const auto& s : sub)
        for (std::size_t p = 0; p < base.size(); p += 3) {
            const double l1 = base[p] - base[p + 1], l2 = base[p + 1], l0 = 1 - base[p];
            rule.insert(rule.end(), {l0 * s[0][0] + l1 * s[1][0] + l2 * s[2][0], l0 * s[0][1] + l1 * s[1][1] + l2 * s[2][1],
                                     base[p + 2] / 4});
        }
    return rule;
}

Geometry make_geometry(const Mesh& mesh) {
    Geometry g;
    g.n = mesh.triangle_count();
    g.regular_ref = triangle_rule_regular();
    g.near_ref = triangle_rule_near();
    g.regular_count = int(g.regular_ref.size() / 3);
    g.near_count = int(g.near_ref.size() / 3);
    g.panels.resize(g.n);
    g.tri.resize(3 * g.n);
    g.normal.resize(3 * g.n);
    g.centroid.resize(3 * g.n);
    g.jacobian.resize(g.n);
    g.diameter.resize(g.n);
    g.regular_points.resize(3 * g.regular_count * g.n);
    g.regular_weights.resize(g.regular_count * g.n);
    g.near_points.resize(3 * g.near_count * g.n);
    g.near_weights.resize(g.near_count * g.n);
    for (std::size_t t = 0; t < g.n; ++t) {
        kern::Panel& p = g.panels[t];
        for (int v = 0; v < 3; ++v) {
            g.tri[3 * t + v] = mesh.triangles[t][v];
            for (int c = 0; c < 3; ++c) p.p[v][c] = mesh.vertices[mesh.triangles[t][v]][c];
        }
        double e1[3], e2[3], n[3];
        for (int c = 0; c < 3; ++c) { e1[c] = p.p[1][c] - p.p[0][c]; e2[c] = p.p[2][c] - p.p[0][c]; }
        n[0] = e1[1] * e2[2] - e1[2] * e2[1];
        n[1] = e1[2] * e2[0] - e1[0] * e2[2];
        n[2] = e1[0] * e2[1] - e1[1] * e2[0];
        const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        g.jacobian[t] = len;
        double diam = 0;
        for (int c = 0; c < 3; ++c) {
            g.normal[3 * t + c] = n[c] / len;
            g.centroid[3 * t + c] = (p.p[0][c] + p.p[1][c] + p.p[2][c]) / 3;
        }
        for (int a = 0; a < 3; ++a) diam = std::max(diam, kern::distance(p.p[a], p.p[(a + 1) % 3]));
        g.diameter[t] = diam;
        for (int q = 0; q < g.regular_count; ++q) {
            kern::panel_point(p, g.regular_ref[3 * q], g.regular_ref[3 * q + 1], &g.regular_points[3 * (t * g.regular_count + q)]);
            g.regular_weights[t * g.regular_count + q] = g.regular_ref[3 * q + 2] * len;
        }
        for (int q = 0; q < g.near_count; ++q) {
            kern::panel_point(p, g.near_ref[3 * q], g.near_ref[3 * q + 1], &g.near_points[3 * (t * g.near_count + q)]);
            g.near_weights[t * g.near_count + q] = g.near_ref[3 * q + 2] * len;
        }
    }
    // Singular pairs from the vertex-to-triangle incidence: each (i >= j) pair that shares a vertex.
    std::vector<std::vector<std::int32_t>> around(mesh.vertex_count());
    for (std::size_t t = 0; t < g.n; ++t)
        for (int v = 0; v < 3; ++v) around[mesh.triangles[t][v]].push_back(std::int32_t(t));
    for (std::size_t i = 0; i < g.n; ++i) {
        std::vector<std::int32_t> touching;
        for (int v = 0; v < 3; ++v)
            for (std::int32_t j : around[mesh.triangles[i][v]])
                if (std::size_t(j) <= i) touching.push_back(j);
        std::sort(touching.begin(), touching.end());
        touching.erase(std::unique(touching.begin(), touching.end()), touching.end());
        for (std::int32_t j : touching) {
            int pa[3], pb[3];
            const int shared = kern::shared_vertices(&g.tri[3 * i], &g.tri[3 * j], pa, pb);
            g.singular_i.push_back(std::int32_t(i));
            g.singular_j.push_back(j);
            g.singular_case.push_back(shared);
        }
    }
    return g;
}

namespace {

kern::Panel reordered(const kern::Panel& p, const int perm[3]) {
    kern::Panel r;
    for (int v = 0; v < 3; ++v)
        for (int c = 0; c < 3; ++c) r.p[v][c] = p.p[perm[v]][c];
    return r;
}

bool is_near(const Geometry& g, std::size_t i, std::size_t j, double factor) {
    const double d = kern::distance(&g.centroid[3 * i], &g.centroid[3 * j]);
    return d < factor * std::max(g.diameter[i], g.diameter[j]);
}

}  // namespace

cd p0_single_layer_entry(const Geometry& g, const SingularRules& rules, std::size_t i, std::size_t j, double k, const QuadratureOptions& q) {
    int pa[3], pb[3];
    const int shared = kern::shared_vertices(&g.tri[3 * i], &g.tri[3 * j], pa, pb);
    if (shared > 0) {
        const std::vector<double>& rule = rules.of_case(shared);
        const kern::Cplx v = kern::p0_pair_rule(reordered(g.panels[i], pa), reordered(g.panels[j], pb), rule.data(), int(rule.size() / 5), k);
        return g.jacobian[i] * g.jacobian[j] * cd(v.re, v.im);
    }
    const bool near = is_near(g, i, j, q.near_factor);
    const int cnt = near ? g.near_count : g.regular_count;
    const double* pts = near ? g.near_points.data() : g.regular_points.data();
    const double* wts = near ? g.near_weights.data() : g.regular_weights.data();
    const kern::Cplx v = kern::p0_tensor_rule(pts + 3 * cnt * i, wts + cnt * i, cnt, pts + 3 * cnt * j, wts + cnt * j, cnt, k);
    return cd(v.re, v.im);
}

Matrix assemble_p0_single_layer(const Geometry& g, double k, const QuadratureOptions& q) {
    const SingularRules rules = make_singular_rules(q.singular_order);
    Matrix m = host_matrix(g.n);
    const std::int64_t n = std::int64_t(g.n);
    batchsolve::io::Progress progress("assemble P0 V", std::uint64_t(n));
#pragma omp parallel for schedule(dynamic, 8)
    for (std::int64_t j = 0; j < n; ++j) {
        for (std::int64_t i = j; i < n; ++i) {
            int pa[3], pb[3];
            if (kern::shared_vertices(&g.tri[3 * i], &g.tri[3 * j], pa, pb) > 0) continue;  // singular pass
            const bool near = is_near(g, std::size_t(i), std::size_t(j), q.near_factor);
            const int cnt = near ? g.near_count : g.regular_count;
            const double* pts = near ? g.near_points.data() : g.regular_points.data();
            const double* wts = near ? g.near_weights.data() : g.regular_weights.data();
            const kern::Cplx v = kern::p0_tensor_rule(pts + 3 * cnt * i, wts + cnt * i, cnt, pts + 3 * cnt * j, wts + cnt * j, cnt, k);
            m.a[std::size_t(i + j * n)] = cd(v.re, v.im);
        }
#pragma omp critical(bem_progress)
        progress.advance();
    }
    const std::int64_t pairs = std::int64_t(g.singular_i.size());
#pragma omp parallel for schedule(dynamic, 64)
    for (std::int64_t s = 0; s < pairs; ++s) {
        const std::size_t i = std::size_t(g.singular_i[s]), j = std::size_t(g.singular_j[s]);
        m.a[i + j * g.n] = p0_single_layer_entry(g, rules, i, j, k, q);
    }
    for (std::size_t j = 0; j < g.n; ++j)
        for (std::size_t i = j + 1; i < g.n; ++i) m.a[j + i * g.n] = m.a[i + j * g.n];
    return m;
}

namespace {

// The P1 integrals of pair (i, j) exactly as the CUDA assembly computes them (kernels.hpp).
kern::P1Pair p1_pair(const Geometry& g, const SingularRules& rules, std::size_t i, std::size_t j, double k, double near_factor) {
    kern::P1Pair out;
    int pa[3], pb[3];
    const int shared = kern::shared_vertices(&g.tri[3 * i], &g.tri[3 * j], pa, pb);
    if (shared > 0) {
        const std::vector<double>& rule = rules.of_case(shared);
        kern::p1_pair_rule(reordered(g.panels[i], pa), reordered(g.panels[j], pb), pa, pb, rule.data(), int(rule.size() / 5), k,
                           g.jacobian[i] * g.jacobian[j], out);
        return out;
    }
    const bool near = is_near(g, i, j, near_factor);
    const int cnt = near ? g.near_count : g.regular_count;
    const double* ref = near ? g.near_ref.data() : g.regular_ref.data();
    const double* pts = near ? g.near_points.data() : g.regular_points.data();
    const double* wts = near ? g.near_weights.data() : g.regular_weights.data();
    kern::p1_tensor_rule(pts + 3 * cnt * i, wts + cnt * i, pts + 3 * cnt * j, wts + cnt * j, ref, cnt, k, out);
    return out;
}

}  // namespace

// ---- column blocks ---------------------------------------------------------------------------------

void assemble_p0_columns(const Geometry& g, double k, const QuadratureOptions& q, const ColumnBlock& block, cd* local) {
    const SingularRules rules = make_singular_rules(q.singular_order);
    const std::int64_t n = std::int64_t(g.n);
    // p0_single_layer_entry is the one-device assembly's computation of lower entry (i >= j), regular
    // and singular alike, so every column equals the one-device matrix bit for bit.
#pragma omp parallel for schedule(dynamic, 4)
    for (std::int64_t c = 0; c < block.local_columns; ++c) {
        const std::size_t j = std::size_t(block.global(c));
        for (std::int64_t i = 0; i < n; ++i)
            local[std::size_t(i + c * block.order)] =
                p0_single_layer_entry(g, rules, std::max(std::size_t(i), j), std::min(std::size_t(i), j), k, q);
    }
}

void column_block_matvec(const ColumnBlock& block, const cd* local, const cd* x, cd* y, double* row_abs) {
    const std::int64_t n = block.order;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        cd acc = 0;
        double s = 0;
        for (std::int64_t c = 0; c < block.local_columns; ++c) {
            const cd aij = local[std::size_t(i + c * n)];
            acc += aij * x[std::size_t(block.global(c))];
            s += std::abs(aij);
        }
        y[std::size_t(i)] += acc;
        row_abs[std::size_t(i)] += s;
    }
}

Matrix assemble_p1(const Mesh& mesh, const Geometry& g, double k, P1Operator op, const QuadratureOptions& q) {
    const SingularRules rules = make_singular_rules(q.singular_order);
    Matrix m = host_matrix(mesh.vertex_count());
    const std::int64_t n = std::int64_t(g.n);
    const bool hypersingular = op == P1Operator::hypersingular;
    batchsolve::io::Progress progress(hypersingular ? "assemble P1 W" : "assemble P1 V", std::uint64_t(n));
#pragma omp parallel for schedule(dynamic, 4)
    for (std::int64_t j = 0; j < n; ++j) {
        for (std::int64_t i = j; i < n; ++i) {
            const kern::P1Pair pair = p1_pair(g, rules, std::size_t(i), std::size_t(j), k, q.near_factor);
            kern::Cplx local[3][3];
            kern::p1_local_matrix(pair, hypersingular, g.panels[i], g.jacobian[i], &g.normal[3 * i], g.panels[j], g.jacobian[j],
                                  &g.normal[3 * j], k, local);
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) {
                    const std::size_t ga = std::size_t(g.tri[3 * i + a]), gb = std::size_t(g.tri[3 * j + b]);
                    auto accumulate = [&m](std::size_t r, std::size_t c, kern::Cplx v) {
                        double* entry = reinterpret_cast<double*>(&m.a[r + c * m.n]);
#pragma omp atomic
                        entry[0] += v.re;
#pragma omp atomic
                        entry[1] += v.im;
                    };
                    accumulate(ga, gb, local[a][b]);
                    if (i != j) accumulate(gb, ga, local[a][b]);  // the mirrored element pair (j, i)
                }
        }
#pragma omp critical(bem_progress)
        progress.advance();
    }
    return m;
}

void assemble_p1_columns(const Geometry& g, std::size_t vertices, double k, P1Operator op, const QuadratureOptions& q, const ColumnBlock& block,
                         cd* local) {
    const SingularRules rules = make_singular_rules(q.singular_order);
    std::fill(local, local + std::size_t(block.local_columns * block.order), cd(0, 0));
    (void)vertices;
    const std::int64_t n = std::int64_t(g.n);
    const bool hypersingular = op == P1Operator::hypersingular;
    // Element pair (i, j) adds local[a][b] at (tri_i[a], tri_j[b]) and, for i != j, at the mirrored
    // (tri_j[b], tri_i[a]): a pair matters to this member when one of its six vertices is a column here.
#pragma omp parallel for schedule(dynamic, 4)
    for (std::int64_t j = 0; j < n; ++j) {
        bool j_owned = false;
        for (int b = 0; b < 3; ++b) j_owned = j_owned || block.owns(g.tri[3 * j + b]);
        for (std::int64_t i = j; i < n; ++i) {
            bool i_owned = false;
            for (int a = 0; a < 3; ++a) i_owned = i_owned || block.owns(g.tri[3 * i + a]);
            if (!i_owned && !j_owned) continue;
            const kern::P1Pair pair = p1_pair(g, rules, std::size_t(i), std::size_t(j), k, q.near_factor);
            kern::Cplx lm[3][3];
            kern::p1_local_matrix(pair, hypersingular, g.panels[i], g.jacobian[i], &g.normal[3 * i], g.panels[j], g.jacobian[j], &g.normal[3 * j], k,
                                  lm);
            auto accumulate = [&](std::int64_t r, std::int64_t col, kern::Cplx v) {
                if (!block.owns(col)) return;
                double* entry = reinterpret_cast<double*>(&local[std::size_t(r + block.local(col) * block.order)]);
#pragma omp atomic
                entry[0] += v.re;
#pragma omp atomic
                entry[1] += v.im;
            };
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) {
                    const std::int64_t ga = g.tri[3 * i + a], gb = g.tri[3 * j + b];
                    accumulate(ga, gb, lm[a][b]);
                    if (i != j) accumulate(gb, ga, lm[a][b]);
                }
        }
    }
}

// ---- Burton–Miller -----------------------------------------------------------------------------------

void assemble_p0_burton_miller_soft_into(const Geometry& g, double k, const QuadratureOptions& q, cd* a) {
    const SingularRules rules = make_singular_rules(q.singular_order);
    const std::size_t n = g.n;
    const cd eta = burton_miller_coupling(k);
    // One pass over the lower pairs (i >= j) gives V_ij (symmetric), K'_ij and K'_ji.
    auto store = [&](std::size_t i, std::size_t j, const kern::P0Combined& v) {
        const cd vij(v.v.re, v.v.im), kij(v.kp_ij.re, v.kp_ij.im), kji(v.kp_ji.re, v.kp_ji.im);
        a[i + j * n] = vij + eta * kij;
        if (i != j) a[j + i * n] = vij + eta * kji;
    };
    batchsolve::io::Progress progress("assemble P0 Burton-Miller", std::uint64_t(n));
#pragma omp parallel for schedule(dynamic, 8)
    for (std::int64_t jj = 0; jj < std::int64_t(n); ++jj) {
        const std::size_t j = std::size_t(jj);
        for (std::size_t i = j; i < n; ++i) {
            int pa[3], pb[3];
            if (kern::shared_vertices(&g.tri[3 * i], &g.tri[3 * j], pa, pb) > 0) continue;  // singular pass
            const bool near = is_near(g, i, j, q.near_factor);
            const int cnt = near ? g.near_count : g.regular_count;
            const double* pts = near ? g.near_points.data() : g.regular_points.data();
            const double* wts = near ? g.near_weights.data() : g.regular_weights.data();
            store(i, j, kern::p0_combined_tensor_rule(pts + 3 * cnt * i, wts + cnt * i, cnt, pts + 3 * cnt * j, wts + cnt * j, cnt, &g.normal[3 * i],
                                                      &g.normal[3 * j], k));
        }
#pragma omp critical(bem_progress)
        progress.advance();
    }
    const std::int64_t pairs = std::int64_t(g.singular_i.size());
#pragma omp parallel for schedule(dynamic, 64)
    for (std::int64_t s = 0; s < pairs; ++s) {
        const std::size_t i = std::size_t(g.singular_i[std::size_t(s)]), j = std::size_t(g.singular_j[std::size_t(s)]);
        int pa[3], pb[3];
        const int shared = kern::shared_vertices(&g.tri[3 * i], &g.tri[3 * j], pa, pb);
        const std::vector<double>& rule = rules.of_case(shared);
        store(i, j, kern::p0_combined_pair_rule(reordered(g.panels[i], pa), reordered(g.panels[j], pb), rule.data(), int(rule.size() / 5),
                                                &g.normal[3 * i], &g.normal[3 * j], g.jacobian[i] * g.jacobian[j], k));
    }
    // The identity term: the P0 mass matrix is diagonal, the triangle areas.
    for (std::size_t i = 0; i < n; ++i) a[i + i * n] += eta * (0.5 * 0.5 * g.jacobian[i]);
}

Matrix assemble_p0_burton_miller_soft(const Geometry& g, double k, const QuadratureOptions& q) {
    Matrix m = host_matrix(g.n);
    assemble_p0_burton_miller_soft_into(g, k, q, m.a.data());
    return m;
}

void assemble_p1_burton_miller_hard_into(const Geometry& g, std::size_t vertices, double k, const QuadratureOptions& q, cd* a) {
    const SingularRules rules = make_singular_rules(q.singular_order);
    const std::size_t nv = vertices;
    std::fill(a, a + nv * nv, cd(0, 0));
    const cd eta = burton_miller_coupling(k);
    auto accumulate = [&](std::size_t r, std::size_t c, cd v) {
        double* entry = reinterpret_cast<double*>(&a[r + c * nv]);
#pragma omp atomic
        entry[0] += v.real();
#pragma omp atomic
        entry[1] += v.imag();
    };
    batchsolve::io::Progress progress("assemble P1 Burton-Miller", std::uint64_t(g.n));
#pragma omp parallel for schedule(dynamic, 4)
    for (std::int64_t jj = 0; jj < std::int64_t(g.n); ++jj) {
        const std::size_t j = std::size_t(jj);
        for (std::size_t i = j; i < g.n; ++i) {
            const kern::P1Pair pair = p1_pair(g, rules, i, j, k, q.near_factor);
            kern::Cplx w[3][3];
            kern::p1_local_matrix(pair, true, g.panels[i], g.jacobian[i], &g.normal[3 * i], g.panels[j], g.jacobian[j], &g.normal[3 * j], k, w);
            kern::P1DoubleLayer dl;
            int pa[3], pb[3];
            const int shared = kern::shared_vertices(&g.tri[3 * i], &g.tri[3 * j], pa, pb);
            if (shared > 0) {
                const std::vector<double>& rule = rules.of_case(shared);
                kern::p1_double_layer_pair_rule(reordered(g.panels[i], pa), reordered(g.panels[j], pb), pa, pb, rule.data(), int(rule.size() / 5),
                                                &g.normal[3 * i], &g.normal[3 * j], g.jacobian[i] * g.jacobian[j], k, dl);
            } else {
                const bool near = is_near(g, i, j, q.near_factor);
                const int cnt = near ? g.near_count : g.regular_count;
                const double* ref = near ? g.near_ref.data() : g.regular_ref.data();
                const double* pts = near ? g.near_points.data() : g.regular_points.data();
                const double* wts = near ? g.near_weights.data() : g.regular_weights.data();
                kern::p1_double_layer_tensor_rule(pts + 3 * cnt * i, wts + cnt * i, pts + 3 * cnt * j, wts + cnt * j, ref, cnt, &g.normal[3 * i],
                                                  &g.normal[3 * j], k, dl);
            }
            // A = M/2 - K - eta W: W symmetric (the pair and its mirror), K from both orders.
            for (int p = 0; p < 3; ++p)
                for (int qq = 0; qq < 3; ++qq) {
                    const std::size_t ga = std::size_t(g.tri[3 * i + p]), gb = std::size_t(g.tri[3 * j + qq]);
                    const cd wv(w[p][qq].re, w[p][qq].im);
                    accumulate(ga, gb, -cd(dl.ij[p][qq].re, dl.ij[p][qq].im) - eta * wv);
                    if (i != j) accumulate(gb, ga, -cd(dl.ji[p][qq].re, dl.ji[p][qq].im) - eta * wv);
                }
        }
#pragma omp critical(bem_progress)
        progress.advance();
    }
    // The identity term: the P1 mass matrix, area / 12 x (1 + delta_pq) per triangle.
    for (std::size_t t = 0; t < g.n; ++t) {
        const double area = 0.5 * g.jacobian[t];
        for (int p = 0; p < 3; ++p)
            for (int qq = 0; qq < 3; ++qq) {
                const std::size_t r = std::size_t(g.tri[3 * t + p]), c = std::size_t(g.tri[3 * t + qq]);
                a[r + c * nv] += 0.5 * area / 12.0 * (p == qq ? 2.0 : 1.0);
            }
    }
}

Matrix assemble_p1_burton_miller_hard(const Mesh& mesh, const Geometry& g, double k, const QuadratureOptions& q) {
    Matrix m = host_matrix(mesh.vertex_count());
    assemble_p1_burton_miller_hard_into(g, mesh.vertex_count(), k, q, m.a.data());
    return m;
}

}  // namespace bem
