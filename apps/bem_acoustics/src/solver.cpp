// CPU half of solver.hpp: LAPACK zgesv / zsysv with condition estimates, the scaled residual.
#include "solver.hpp"

#include <batchsolve/batchsolve.hpp>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace bem {

const char* to_string(SolveMethod m) {
    switch (m) {
        case SolveMethod::cpu_lu: return "cpu-lu";
        case SolveMethod::cpu_symmetric: return "cpu-sym";
        case SolveMethod::gpu_lu: return "gpu-lu";
        case SolveMethod::gpu_irs_c: return "gpu-irs-c";
        case SolveMethod::gpu_irs_y: return "gpu-irs-y";
        case SolveMethod::cpu_ldlt: return "cpu-ldlt";
        case SolveMethod::gpu_ldlt: return "gpu-ldlt";
        case SolveMethod::multi_lu: return "multi-lu";
    }
    return "?";
}

SolveMethod parse_solve_method(const std::string& text) {
    for (SolveMethod m : {SolveMethod::cpu_lu, SolveMethod::cpu_symmetric, SolveMethod::gpu_lu, SolveMethod::gpu_irs_c, SolveMethod::gpu_irs_y,
                          SolveMethod::cpu_ldlt, SolveMethod::gpu_ldlt})
        if (text == to_string(m)) return m;
    throw std::invalid_argument("--solver: expected cpu-lu, cpu-sym, gpu-lu, gpu-irs-c, gpu-irs-y, cpu-ldlt or gpu-ldlt, got '" + text + "'");
}

bool is_gpu(SolveMethod m) { return m == SolveMethod::gpu_lu || m == SolveMethod::gpu_irs_c || m == SolveMethod::gpu_irs_y; }

namespace {

// The mixed-precision LDL^T of the library (sysv_mixed): reads the lower triangle only, factors in
// complex single, refines in double and falls back (RBT, then pivoted) when it must.
SolveResult solve_ldlt(SolveMethod method, const Matrix& a, const std::vector<cd>& b) {
    namespace bs = batchsolve;
    bs::Context ctx(method == SolveMethod::gpu_ldlt ? bs::Backend::cuda : bs::Backend::cpu);
    const int n = int(a.n);
    const bs::SysvOptions options;
    const std::size_t workspace = bs::sysv_mixed_workspace_size<cd>(bs::Symmetry::symmetric, n, 1, options, ctx);
    bs::Buffer<cd> da(ctx, a.a), db(ctx, b), dx(ctx, a.n);
    ctx.workspace(workspace);
    ctx.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    const bs::SysvResult r = bs::sysv_mixed<cd>(bs::Symmetry::symmetric, bs::Uplo::lower, n, 1, da.data(), n, db.data(), n, dx.data(), n,
                                                options, ctx);
    ctx.synchronize();
    SolveResult out;
    out.method = method;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.x = dx.to_host();
    out.iterations = r.iterations;
    out.path = std::string("batchsolve sysv_mixed (") + (method == SolveMethod::gpu_ldlt ? "CUDA" : "CPU") + "): " + r.describe();
    if (r.path == bs::SolvePath::none) throw std::runtime_error(out.path + ": no step of the fallback chain solved the system");
    out.scaled_residual = scaled_residual(a, out.x, b);
    return out;
}

}  // namespace

double scaled_residual(const Matrix& a, const std::vector<cd>& x, const std::vector<cd>& b) {
    const std::size_t n = a.n;
    std::vector<cd> r(b);
    std::vector<double> row_sum(n, 0.0);
    const std::int64_t nn = std::int64_t(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < nn; ++i) {
        cd acc = 0;
        double s = 0;
        for (std::size_t j = 0; j < n; ++j) {
            const cd aij = a.a[std::size_t(i) + j * n];
            acc += aij * x[j];
            s += std::abs(aij);
        }
        r[std::size_t(i)] -= acc;
        row_sum[std::size_t(i)] = s;
    }
    double rn = 0, xn = 0, an = 0;
    for (std::size_t i = 0; i < n; ++i) {
        rn = std::max(rn, std::abs(r[i]));
        xn = std::max(xn, std::abs(x[i]));
        an = std::max(an, row_sum[i]);
    }
    if (xn == 0 || an == 0) return rn == 0 ? 0 : INFINITY;
    return rn / (double(n) * an * xn);
}

bool looks_resonant(const SolveResult& r, std::size_t n) {
    return r.rcond > 0 && 1.0 / r.rcond > resonance_condition_per_unknown * double(n);
}

SolveResult solve(SolveMethod method, const Matrix& a, const std::vector<cd>& b, bool estimate_condition) {
    if (b.size() != a.n) throw std::invalid_argument("solve: right-hand side has " + std::to_string(b.size()) + " entries, matrix order is " + std::to_string(a.n));
    if (method == SolveMethod::multi_lu) throw std::invalid_argument("solve: multi-lu runs on a DeviceGroup (solve_distributed, bem solve --devices)");
    if (is_gpu(method)) return solve_gpu(method, a, b);
    if (method == SolveMethod::cpu_ldlt || method == SolveMethod::gpu_ldlt) return solve_ldlt(method, a, b);
    const lapack_int n = lapack_int(a.n);
    SolveResult out;
    out.method = method;
    std::vector<lapack_complex_double> f(a.a.size());
    std::copy(a.a.begin(), a.a.end(), reinterpret_cast<cd*>(f.data()));  // the input matrix is kept
    out.x = b;
    auto* x = reinterpret_cast<lapack_complex_double*>(out.x.data());
    std::vector<lapack_int> ipiv(std::size_t(std::max<lapack_int>(n, 1)));
    const double anorm = n ? LAPACKE_zlange(LAPACK_COL_MAJOR, '1', n, n, f.data(), n) : 0.0;
    const auto t0 = std::chrono::steady_clock::now();
    lapack_int info;
    if (method == SolveMethod::cpu_lu) {
        info = LAPACKE_zgesv(LAPACK_COL_MAJOR, n, 1, f.data(), n, ipiv.data(), x, n);
        out.path = "LAPACK zgesv (LU, partial pivoting)";
    } else {
        info = LAPACKE_zsysv(LAPACK_COL_MAJOR, 'L', n, 1, f.data(), n, ipiv.data(), x, n);
        out.path = "LAPACK zsysv (Bunch-Kaufman LDL^T, complex symmetric)";
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (info > 0) throw std::runtime_error(out.path + ": exactly singular matrix (zero pivot at " + std::to_string(info) + ")");
    if (info < 0) throw std::runtime_error(out.path + ": argument " + std::to_string(-info) + " invalid");
    if (estimate_condition && n > 0) {
        double rcond = 0;
        if (method == SolveMethod::cpu_lu) LAPACKE_zgecon(LAPACK_COL_MAJOR, '1', n, f.data(), n, anorm, &rcond);
        else LAPACKE_zsycon(LAPACK_COL_MAJOR, 'L', n, f.data(), n, ipiv.data(), anorm, &rcond);
        out.rcond = rcond;
    }
    out.scaled_residual = scaled_residual(a, out.x, b);
    return out;
}

}  // namespace bem

namespace bem {
std::uint64_t gpu_solve_bytes(SolveMethod method, std::size_t n) {
    const std::uint64_t matrix = std::uint64_t(n) * n * 16;
    const std::uint64_t vectors = std::uint64_t(n) * (3 * 16 + 8);
    // cuSOLVER workspaces: getrf's is a few panels; the IRS solvers keep a low-precision copy of A
    // (8 bytes per complex single entry) plus panels: n^2 x 8 + 1 %.
    // sysv_mixed keeps the complex-single copy of the padded matrix and the pivoted fallback's copy.
    const std::uint64_t workspace = method == SolveMethod::gpu_lu     ? std::uint64_t(n) * 1024 * 16
                                    : method == SolveMethod::gpu_ldlt ? std::uint64_t(n + 64) * (n + 64) * (8 + 16) + matrix / 100
                                                                      : std::uint64_t(n) * n * 8 + matrix / 100;
    return matrix + vectors + workspace + (64u << 20);
}
}  // namespace bem
