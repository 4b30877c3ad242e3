// The scattering problem around the operators: incident fields, Galerkin right-hand sides, far-field
// and near-field evaluation, and the Mie series of the sphere (spherical Bessel/Hankel functions and
// Legendre polynomials by stable recurrences) that the solutions are validated against.
#pragma once

#include <array>
#include <complex>
#include <string>
#include <vector>

#include "assembly.hpp"

namespace bem {

enum class Formulation {
    soft_p0,  // sound-soft, V phi = -u_inc, P0 (one unknown per triangle)
    soft_p1,  // sound-soft, V phi = -u_inc, P1 (one unknown per vertex)
    hard_p1,  // sound-hard, W u = d_n u_inc (Maue's form), P1; u is the total field on the surface
};
const char* to_string(Formulation f);
Formulation parse_formulation(const std::string& text);  // soft-p0 | soft-p1 | hard-p1
// The same, and soft-p0-bm | hard-p1-bm: the formulation's Burton-Miller equation (burton_miller set).
Formulation parse_formulation(const std::string& text, bool& burton_miller);

struct Incident {
    bool point_source = false;
    std::array<double, 3> direction{1, 0, 0};  // plane wave exp(i k d.x), d unit
    std::array<double, 3> source{0, 0, 0};     // point source exp(i k r) / (4 pi r)
    std::complex<double> value(const double x[3], double k) const;
    std::complex<double> normal_derivative(const double x[3], const double n[3], double k) const;
};

// Right-hand side of the Galerkin system for the formulation (length: triangles or vertices).
std::vector<cd> right_hand_side(Formulation f, const Mesh& mesh, const Geometry& g, const Incident& inc, double k);
// The operator matrix of the formulation (CPU assembly).
Matrix assemble(Formulation f, const Mesh& mesh, const Geometry& g, double k, const QuadratureOptions& q = {});

// Burton–Miller combined field (assembly.hpp, coupling i/k): the same unknowns, far field and
// output as the formulation, an operator without interior resonances. soft-p0 and hard-p1 only
// (others: std::invalid_argument naming --formulation).
bool has_burton_miller(Formulation f);
std::vector<cd> right_hand_side_burton_miller(Formulation f, const Mesh& mesh, const Geometry& g, const Incident& inc, double k);
Matrix assemble_burton_miller(Formulation f, const Mesh& mesh, const Geometry& g, double k, const QuadratureOptions& q = {});

// Far-field pattern F(d) with u_s(r d) ~ exp(i k r) / r F(d), for unit directions d.
std::vector<cd> far_field(Formulation f, const Mesh& mesh, const Geometry& g, const std::vector<cd>& coefficients, double k,
                          const std::vector<std::array<double, 3>>& directions);
// Scattered field at points off the surface (single- or double-layer potential of the solution).
std::vector<cd> scattered_field(Formulation f, const Mesh& mesh, const Geometry& g, const std::vector<cd>& coefficients, double k,
                                const std::vector<std::array<double, 3>>& points);

// ---- Mie series ------------------------------------------------------------------------------
// j_n(x), y_n(x) for n = 0..nmax: j by Miller's downward recurrence normalised with
// sum (2n+1) j_n^2 = 1, y by the upward recurrence (both stable in their direction).
void spherical_bessel(int nmax, double x, std::vector<double>& j, std::vector<double>& y);
void legendre(int nmax, double t, std::vector<double>& p);  // P_0..P_nmax(t)
int mie_terms(double ka);
// Far-field pattern of a plane wave scattered by a sphere of radius a, at angle theta from the
// incident direction (same normalisation as far_field()).
std::complex<double> mie_far_field(bool sound_hard, double k, double a, double theta);
// The surface unknown of the formulation on the sphere of radius a at angle theta from the incident
// direction: sound-soft phi = -d_n u (the density of V phi = -u_inc), sound-hard the total field u.
std::complex<double> mie_surface_field(bool sound_hard, double k, double a, double theta);
// Relative L2 error of a solution's surface unknown against mie_surface_field on a sphere of radius
// `radius` about the origin (plane wave along `direction`): P0 at the triangle centroids with area
// weights, P1 at the vertices with lumped-mass weights.
double mie_surface_error(Formulation f, const Mesh& mesh, const Geometry& g, const std::vector<cd>& x, double k, double radius,
                         const std::array<double, 3>& direction);
// Relative L2 error sqrt(sum |F - F_ref|^2 / sum |F_ref|^2).
double relative_l2_error(const std::vector<cd>& f, const std::vector<cd>& ref);

// Interior eigenvalues k a of the unit-radius sphere where the formulation's operator is singular
// (Dirichlet: zeros of j_n; Neumann: zeros of j_n'), below `kmax`, with their degree n.
std::vector<std::pair<double, int>> sphere_resonances(bool sound_hard, double kmax);

}  // namespace bem
