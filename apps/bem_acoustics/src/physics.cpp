// Incident fields, right-hand sides, far/near fields and the Mie series of physics.hpp.
#include "physics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace bem {
namespace {
constexpr cd I(0, 1);
double dot3(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
}  // namespace

const char* to_string(Formulation f) {
    switch (f) {
        case Formulation::soft_p0: return "soft-p0";
        case Formulation::soft_p1: return "soft-p1";
        case Formulation::hard_p1: return "hard-p1";
    }
    return "?";
}

Formulation parse_formulation(const std::string& text) {
    for (Formulation f : {Formulation::soft_p0, Formulation::soft_p1, Formulation::hard_p1})
        if (text == to_string(f)) return f;
    throw std::invalid_argument("--formulation: expected soft-p0, soft-p1, hard-p1, soft-p0-bm or hard-p1-bm, got '" + text + "'");
}

cd Incident::value(const double x[3], double k) const {
    if (!point_source) return std::exp(I * k * dot3(direction.data(), x));
    const double d[3] = {x[0] - source[0], x[1] - source[1], x[2] - source[2]};
    const double r = std::sqrt(dot3(d, d));
    return std::exp(I * k * r) / (4 * M_PI * r);
}

cd Incident::normal_derivative(const double x[3], const double n[3], double k) const {
    if (!point_source) return I * k * dot3(direction.data(), n) * std::exp(I * k * dot3(direction.data(), x));
    const double d[3] = {x[0] - source[0], x[1] - source[1], x[2] - source[2]};
    const double r = std::sqrt(dot3(d, d));
    return std::exp(I * k * r) / (4 * M_PI * r) * (I * k - 1.0 / r) * dot3(d, n) / r;
}

std::vector<cd> right_hand_side(Formulation f, const Mesh& mesh, const Geometry& g, const Incident& inc, double k) {
    const bool p0 = f == Formulation::soft_p0;
    std::vector<cd> b(p0 ? g.n : mesh.vertex_count(), cd(0, 0));
    for (std::size_t t = 0; t < g.n; ++t)
        for (int q = 0; q < g.near_count; ++q) {
            const double* x = &g.near_points[3 * (t * g.near_count + q)];
            const double w = g.near_weights[t * g.near_count + q];
            const double* ref = &g.near_ref[3 * q];
            const cd v = f == Formulation::hard_p1 ? inc.normal_derivative(x, &g.normal[3 * t], k) : -inc.value(x, k);
            if (p0) {
                b[t] += w * v;
            } else {
                const double lambda[3] = {1 - ref[0], ref[0] - ref[1], ref[1]};
                for (int a = 0; a < 3; ++a) b[std::size_t(g.tri[3 * t + a])] += w * lambda[a] * v;
            }
        }
    return b;
}

Formulation parse_formulation(const std::string& text, bool& burton_miller) {
    const std::string suffix = "-bm";
    burton_miller = text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
    if (!burton_miller) return parse_formulation(text);
    const std::string base = text.substr(0, text.size() - suffix.size());
    if (base != "soft-p0" && base != "hard-p1")
        throw std::invalid_argument("--formulation: expected soft-p0, soft-p1, hard-p1, soft-p0-bm or hard-p1-bm, got '" + text + "'");
    return parse_formulation(base);
}

bool has_burton_miller(Formulation f) { return f == Formulation::soft_p0 || f == Formulation::hard_p1; }

namespace {
void require_burton_miller(Formulation f) {
    if (!has_burton_miller(f))
        throw std::invalid_argument(std::string("--formulation: Burton-Miller is implemented for soft-p0 and hard-p1, not ") + to_string(f));
}
}  // namespace

std::vector<cd> right_hand_side_burton_miller(Formulation f, const Mesh& mesh, const Geometry& g, const Incident& inc, double k) {
    require_burton_miller(f);
    const bool p0 = f == Formulation::soft_p0;
    const cd eta = burton_miller_coupling(k);
    std::vector<cd> b(p0 ? g.n : mesh.vertex_count(), cd(0, 0));
    for (std::size_t t = 0; t < g.n; ++t)
        for (int q = 0; q < g.near_count; ++q) {
            const double* x = &g.near_points[3 * (t * g.near_count + q)];
            const double w = g.near_weights[t * g.near_count + q];
            const cd u = inc.value(x, k), dn = inc.normal_derivative(x, &g.normal[3 * t], k);
            if (p0) {
                b[t] += w * -(u + eta * dn);
            } else {
                const double* ref = &g.near_ref[3 * q];
                const double lambda[3] = {1 - ref[0], ref[0] - ref[1], ref[1]};
                for (int a = 0; a < 3; ++a) b[std::size_t(g.tri[3 * t + a])] += w * lambda[a] * (u - eta * dn);
            }
        }
    return b;
}

Matrix assemble_burton_miller(Formulation f, const Mesh& mesh, const Geometry& g, double k, const QuadratureOptions& q) {
    require_burton_miller(f);
    return f == Formulation::soft_p0 ? assemble_p0_burton_miller_soft(g, k, q) : assemble_p1_burton_miller_hard(mesh, g, k, q);
}

Matrix assemble(Formulation f, const Mesh& mesh, const Geometry& g, double k, const QuadratureOptions& q) {
    switch (f) {
        case Formulation::soft_p0: return assemble_p0_single_layer(g, k, q);
        case Formulation::soft_p1: return assemble_p1(mesh, g, k, P1Operator::single_layer, q);
        case Formulation::hard_p1: return assemble_p1(mesh, g, k, P1Operator::hypersingular, q);
    }
    throw std::logic_error("assemble: formulation");
}

namespace {
// Value of the solution at quadrature point q of triangle t.
cd density_at(Formulation f, const Geometry& g, const std::vector<cd>& c, std::size_t t, int q) {
    if (f == Formulation::soft_p0) return c[t];
    const double* ref = &g.near_ref[3 * q];
    const double lambda[3] = {1 - ref[0], ref[0] - ref[1], ref[1]};
    cd v = 0;
    for (int a = 0; a < 3; ++a) v += lambda[a] * c[std::size_t(g.tri[3 * t + a])];
    return v;
}
}  // namespace

std::vector<cd> far_field(Formulation f, const Mesh&, const Geometry& g, const std::vector<cd>& c, double k,
                          const std::vector<std::array<double, 3>>& directions) {
    // The weighted density at every quadrature point once (not once per direction): the loop over
    // directions is then a dot product, one sincos and a complex multiply-add per point.
    const std::size_t points = g.n * std::size_t(g.near_count);
    std::vector<cd> wd(points);
    const std::int64_t tn = std::int64_t(g.n);
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < tn; ++t)
        for (int q = 0; q < g.near_count; ++q) {
            const std::size_t at = std::size_t(t) * std::size_t(g.near_count) + std::size_t(q);
            wd[at] = g.near_weights[at] * density_at(f, g, c, std::size_t(t), q);
        }
    const bool hard = f == Formulation::hard_p1;
    std::vector<cd> out(directions.size());
    const std::int64_t m = std::int64_t(directions.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t d = 0; d < m; ++d) {
        const double* dir = directions[std::size_t(d)].data();
        double re = 0, im = 0;
        for (std::size_t t = 0; t < g.n; ++t) {
            // Double layer: d/dn_y exp(-i k d.y) = -i k (d.n_y) exp(-i k d.y).
            const double dn = hard ? k * dot3(dir, &g.normal[3 * t]) : 0.0;
            double tre = 0, tim = 0;
            for (int q = 0; q < g.near_count; ++q) {
                const std::size_t at = t * std::size_t(g.near_count) + std::size_t(q);
                const double phase = -k * dot3(dir, &g.near_points[3 * at]);
                const double cs = std::cos(phase), sn = std::sin(phase);  // exp(-i k d.y)
                tre += cs * wd[at].real() - sn * wd[at].imag();
                tim += cs * wd[at].imag() + sn * wd[at].real();
            }
            if (hard) {  // times -i dn
                re += dn * tim;
                im -= dn * tre;
            } else {
                re += tre;
                im += tim;
            }
        }
        out[std::size_t(d)] = cd(re, im) / (4 * M_PI);
    }
    return out;
}

std::vector<cd> scattered_field(Formulation f, const Mesh&, const Geometry& g, const std::vector<cd>& c, double k,
                                const std::vector<std::array<double, 3>>& points) {
    std::vector<cd> out(points.size());
    const std::int64_t m = std::int64_t(points.size());
#pragma omp parallel for schedule(dynamic, 16)
    for (std::int64_t p = 0; p < m; ++p) {
        const double* x = points[std::size_t(p)].data();
        cd sum = 0;
        for (std::size_t t = 0; t < g.n; ++t)
            for (int q = 0; q < g.near_count; ++q) {
                const double* y = &g.near_points[3 * (t * g.near_count + q)];
                const double d[3] = {y[0] - x[0], y[1] - x[1], y[2] - x[2]};
                const double r = std::sqrt(dot3(d, d));
                if (r == 0) continue;  // a point on the surface: skip the singular sample
                const kern::Cplx gv = kern::green(r, k);
                cd kernel(gv.re, gv.im);
                if (f == Formulation::hard_p1) kernel *= (I * k - 1.0 / r) * dot3(d, &g.normal[3 * t]) / r;
                sum += g.near_weights[t * g.near_count + q] * kernel * density_at(f, g, c, t, q);
            }
        out[std::size_t(p)] = sum;
    }
    return out;
}

void spherical_bessel(int nmax, double x, std::vector<double>& j, std::vector<double>& y) {
    if (!(x > 0)) throw std::invalid_argument("spherical_bessel: x must be positive");
    j.assign(std::size_t(nmax) + 1, 0.0);
    y.assign(std::size_t(nmax) + 1, 0.0);
    // Miller: start well above both nmax and x, where j_n is negligible, and recur downwards.
    const int start = nmax + int(std::sqrt(40.0 * (nmax + x))) + int(x) + 20;
    double jp1 = 0, jn = 1e-30, sum = 0;  // the start value only sets the scale
    std::vector<double> tmp(std::size_t(start) + 1, 0.0);
    for (int n = start; n >= 0; --n) {
        tmp[std::size_t(n)] = jn;
        sum += (2 * n + 1) * jn * jn;
        const double jm1 = (2 * n + 1) / x * jn - jp1;
        jp1 = jn;
        jn = jm1;
        if (std::abs(jn) > 1e100) {  // rescale everything so far to stay in range
            for (int m = n; m <= start; ++m) tmp[std::size_t(m)] *= 1e-100;
            jp1 *= 1e-100;
            jn *= 1e-100;
            sum *= 1e-200;
        }
    }
    const double scale = 1.0 / std::sqrt(sum);
    // Fix the sign with j_0 = sin x / x where it is not tiny, else with j_1.
    const double j0 = std::sin(x) / x, j1 = std::sin(x) / (x * x) - std::cos(x) / x;
    double sign = 1;
    if (std::abs(j0) > std::abs(j1)) sign = (j0 * tmp[0] >= 0) ? 1 : -1;
    else sign = (j1 * tmp[1] >= 0) ? 1 : -1;
    for (int n = 0; n <= nmax; ++n) j[std::size_t(n)] = sign * scale * tmp[std::size_t(n)];
    y[0] = -std::cos(x) / x;
    if (nmax >= 1) y[1] = -std::cos(x) / (x * x) - std::sin(x) / x;
    for (int n = 1; n < nmax; ++n) y[std::size_t(n) + 1] = (2 * n + 1) / x * y[std::size_t(n)] - y[std::size_t(n) - 1];
}

void legendre(int nmax, double t, std::vector<double>& p) {
    p.assign(std::size_t(nmax) + 1, 0.0);
    p[0] = 1;
    if (nmax >= 1) p[1] = t;
    for (int n = 1; n < nmax; ++n) p[std::size_t(n) + 1] = ((2 * n + 1) * t * p[std::size_t(n)] - n * p[std::size_t(n) - 1]) / (n + 1);
}

int mie_terms(double ka) { return int(ka + 4.0 * std::cbrt(ka) + 10); }

std::complex<double> mie_far_field(bool sound_hard, double k, double a, double theta) {
    const double ka = k * a;
    const int nmax = mie_terms(ka);
    std::vector<double> j, y, p;
    spherical_bessel(nmax + 1, ka, j, y);
    legendre(nmax, std::cos(theta), p);
    cd sum = 0;
    for (int n = 0; n <= nmax; ++n) {
        cd ratio;
        if (!sound_hard) {
            ratio = j[std::size_t(n)] / cd(j[std::size_t(n)], y[std::size_t(n)]);
        } else {
            // f_n' = n/x f_n - f_{n+1}
            const double jd = n / ka * j[std::size_t(n)] - j[std::size_t(n) + 1];
            const double yd = n / ka * y[std::size_t(n)] - y[std::size_t(n) + 1];
            ratio = jd / cd(jd, yd);
        }
        sum += double(2 * n + 1) * ratio * p[std::size_t(n)];
    }
    // u_s = -sum (2n+1) i^n ratio_n h_n(kr) P_n and h_n(kr) ~ (-i)^(n+1) exp(ikr)/(kr): F = (i/k) sum (2n+1) ratio_n P_n.
    return I / k * sum;
}

std::complex<double> mie_surface_field(bool sound_hard, double k, double a, double theta) {
    const double ka = k * a;
    const int nmax = mie_terms(ka);
    std::vector<double> j, y, p;
    spherical_bessel(nmax + 1, ka, j, y);
    legendre(nmax, std::cos(theta), p);
    cd sum = 0, in = 1;  // in = i^n
    for (int n = 0; n <= nmax; ++n, in *= I) {
        const cd h(j[std::size_t(n)], y[std::size_t(n)]);
        // Wronskian j_n y_n' - j_n' y_n = 1/x^2: soft, d_r u(a) = k sum (2n+1) i^n (j_n' h_n - j_n h_n') / h_n P_n
        // = -i / (k a^2) sum (2n+1) i^n P_n / h_n; hard, u(a) = sum (2n+1) i^n (j_n h_n' - j_n' h_n) / h_n' P_n
        // = i / (ka)^2 sum (2n+1) i^n P_n / h_n'.
        if (!sound_hard) {
            sum += double(2 * n + 1) * in * p[std::size_t(n)] / h;
        } else {
            const cd hd(n / ka * j[std::size_t(n)] - j[std::size_t(n) + 1], n / ka * y[std::size_t(n)] - y[std::size_t(n) + 1]);
            sum += double(2 * n + 1) * in * p[std::size_t(n)] / hd;
        }
    }
    // soft: phi = -d_n u (V phi = -u_inc, u_s = S phi); hard: the total field.
    return sound_hard ? I / (ka * ka) * sum : I / (k * a * a) * sum;
}

double mie_surface_error(Formulation f, const Mesh& mesh, const Geometry& g, const std::vector<cd>& x, double k, double radius,
                         const std::array<double, 3>& direction) {
    const bool p0 = f == Formulation::soft_p0;
    std::vector<double> weight(x.size(), 0.0);
    std::vector<std::array<double, 3>> at(x.size());
    for (std::size_t t = 0; t < g.n; ++t) {
        const double area = 0.5 * g.jacobian[t];
        if (p0) {
            weight[t] = area;
            at[t] = {g.centroid[3 * t], g.centroid[3 * t + 1], g.centroid[3 * t + 2]};
        } else {
            for (int v = 0; v < 3; ++v) weight[std::size_t(g.tri[3 * t + v])] += area / 3;
        }
    }
    if (!p0)
        for (std::size_t v = 0; v < x.size(); ++v) at[v] = mesh.vertices[v];
    const double dn = std::sqrt(dot3(direction.data(), direction.data()));
    double num = 0, den = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double r = std::sqrt(dot3(at[i].data(), at[i].data()));
        const double c = std::clamp(dot3(at[i].data(), direction.data()) / (r * dn), -1.0, 1.0);
        const cd ref = mie_surface_field(f == Formulation::hard_p1, k, radius, std::acos(c));
        num += weight[i] * std::norm(x[i] - ref);
        den += weight[i] * std::norm(ref);
    }
    return std::sqrt(num / den);
}

double relative_l2_error(const std::vector<cd>& f, const std::vector<cd>& ref) {
    if (f.size() != ref.size()) throw std::invalid_argument("relative_l2_error: sizes differ");
    double num = 0, den = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
        num += std::norm(f[i] - ref[i]);
        den += std::norm(ref[i]);
    }
    return std::sqrt(num / den);
}

std::vector<std::pair<double, int>> sphere_resonances(bool sound_hard, double kmax) {
    // Scan a fine grid for sign changes of j_n (or j_n') and bisect.
    std::vector<std::pair<double, int>> out;
    const int nmax = int(kmax) + 2;
    auto f = [&](int n, double x) {
        std::vector<double> j, y;
        spherical_bessel(n + 1, x, j, y);
        return sound_hard ? n / x * j[std::size_t(n)] - j[std::size_t(n) + 1] : j[std::size_t(n)];
    };
    for (int n = 0; n <= nmax; ++n) {
        const double step = 0.01;
        double a = 0.05, fa = f(n, a);
        for (double b = a + step; b <= kmax; b += step) {
            const double fb = f(n, b);
            if (fa * fb < 0) {
                double lo = b - step, hi = b, flo = fa;
                for (int it = 0; it < 60; ++it) {
                    const double mid = 0.5 * (lo + hi), fm = f(n, mid);
                    if (flo * fm <= 0) hi = mid;
                    else { lo = mid; flo = fm; }
                }
                out.emplace_back(0.5 * (lo + hi), n);
            }
            fa = fb;
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace bem
