// The stopping test of the mixed-precision solvers' iterative refinement (sysv_mixed in ldlt.cpp,
// posv_mixed in cholesky_large.cpp), from the per-right-hand-side norms they fetch from the device.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace batchsolve::refinement {

struct Measure {
    double scaled = 0;   // max over right-hand sides of ||r_j|| / (||A|| ||x_j||)
    bool met = true;     // every one meets ||r_j|| <= ||x_j|| ||A|| eps max(sqrt(n), kSmallOrderFloor)
    bool finite = true;  // no residual or solution norm is Inf or NaN
};

// The smallest factor of eps in the criterion, for small n. eps sqrt(n) alone is below the rounding
// floor of a complex residual at n = 1: x rounded per component (u |x|), the complex product a x
// (up to sqrt(5) u |a| |x|) and the refinement's own rounding of x put ||b - A x|| / (||A|| ||x||) up
// to about 5.5 u = 2.7 eps, however often one refines. Measured (numpy, well-conditioned complex
// symmetric systems refined to their floor): at n = 1 the ratio exceeds 1 eps in 0.5% of the solves
// (max 1.86 eps over 20,000); at n >= 2 it stays below 0.81 eps sqrt(n); real systems stay below
// 0.98 eps sqrt(n). sysv_mixed's test met it: complex n = 1 "stalled after 3 iterations (residual
// 2.35e-16)" > eps = 2.22e-16 (seed 17261395628548517917), then took another path. 4 eps is still
// the working precision's rounding level.
inline constexpr double kSmallOrderFloor = 4;

// `r_norms[j]` = ||r_j||_inf and `x_norms[j]` = ||x_j||_inf, j < nrhs; `eps` the working precision's
// machine epsilon (2^-52 in double: with the unit roundoff 2^-53 the criterion sits at the rounding
// floor of the residual itself for small n, and refinement would stall just short of it).
template <class R>
Measure measure(const R* r_norms, const R* x_norms, int nrhs, int n, double norm_a, double eps) {
    Measure m;
    for (int j = 0; j < nrhs; ++j) {
        const double r = r_norms[j], x = x_norms[j];
        if (!std::isfinite(r) || !std::isfinite(x)) {
            m.finite = false, m.met = false, m.scaled = std::numeric_limits<double>::infinity();
            continue;
        }
        const double scale = x * norm_a;
        m.met = m.met && r <= scale * eps * std::max(std::sqrt(double(n)), kSmallOrderFloor);
        m.scaled = std::max(m.scaled, scale > 0 ? r / scale : (r > 0 ? std::numeric_limits<double>::infinity() : 0.0));
    }
    return m;
}

}  // namespace batchsolve::refinement
