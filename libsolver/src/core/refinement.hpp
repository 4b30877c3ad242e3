// The stopping test of the mixed-precision solvers' iterative refinement (sysv_mixed in ldlt.cpp,
// posv_mixed in cholesky_large.cpp), from the per-right-hand-side norms they fetch from the device.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace batchsolve::refinement {

struct Measure {
    double scaled = 0;   // max over right-hand sides of ||r_j|| / (||A|| ||x_j||)
    bool met = true;     // every one meets ||r_j|| <= ||x_j|| ||A|| eps sqrt(n)
    bool finite = true;  // no residual or solution norm is Inf or NaN
};

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
        m.met = m.met && r <= scale * eps * std::sqrt(double(n));
        m.scaled = std::max(m.scaled, scale > 0 ? r / scale : (r > 0 ? std::numeric_limits<double>::infinity() : 0.0));
    }
    return m;
}

}  // namespace batchsolve::refinement
