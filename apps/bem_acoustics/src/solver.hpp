// One small interface for the dense complex symmetric BEM systems: LAPACK LU (zgesv) and
// Bunch–Kaufman (zsysv) on the CPU, cuSOLVER LU (Zgetrf/Zgetrs) and iterative refinement (ZCgesv,
// ZYgesv) on the GPU, and the library's mixed-precision LDL^T (sysv_mixed) as another method.
// Every result carries the seed's scaled residual ||b - Ax||_inf / (N ||A||_inf ||x||_inf), the path
// taken, iterations and a condition estimate where the method gives one.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "assembly.hpp"

namespace bem {

enum class SolveMethod {
    cpu_lu,         // LAPACK zgesv (partial pivoting)
    cpu_symmetric,  // LAPACK zsysv (Bunch–Kaufman, complex symmetric A^T = A)
    gpu_lu,         // cuSOLVER cusolverDnZgetrf + Zgetrs
    gpu_irs_c,      // cuSOLVER cusolverDnZCgesv: factor in complex single, refine in double
    gpu_irs_y,      // cuSOLVER cusolverDnZYgesv: factor with TF32 tensor cores, refine in double
    cpu_ldlt,       // batchsolve::sysv_mixed on the CPU backend: LDL^T without pivoting in
                    // complex single, refinement in double, RBT and pivoted fallbacks
    gpu_ldlt,       // the same on the CUDA backend
    multi_lu,       // LU over a DeviceGroup (bem solve --devices): cuSOLVERMg on GPUs, LAPACK on CPU members
                    // (distributed.hpp; not a method of solve(), the matrix never sits in one place)
};
const char* to_string(SolveMethod m);
SolveMethod parse_solve_method(const std::string& text);  // cpu-lu, cpu-sym, gpu-lu, gpu-irs-c, gpu-irs-y, cpu-ldlt, gpu-ldlt
bool is_gpu(SolveMethod m);

struct SolveResult {
    std::vector<cd> x;
    SolveMethod method{};
    std::string path;              // what actually ran (e.g. "ZYgesv: refinement converged")
    int iterations = 0;            // refinement iterations (0 for a direct solve)
    double scaled_residual = 0;    // ||b - Ax||_inf / (N ||A||_inf ||x||_inf), computed in double on the host
    double seconds = 0;            // factor + solve (device time for GPU methods, matrix already resident)
    double rcond = -1;             // 1-norm reciprocal condition estimate (LAPACK ?gecon/?sycon); -1 if not computed
};

SolveResult solve(SolveMethod method, const Matrix& a, const std::vector<cd>& b, bool estimate_condition = true);
double scaled_residual(const Matrix& a, const std::vector<cd>& x, const std::vector<cd>& b);

// Bytes of GPU memory a method needs for order n (matrix, factor copy, right-hand side, solution,
// cuSOLVER workspace estimate); solve() checks it against the free memory before allocating.
std::uint64_t gpu_solve_bytes(SolveMethod method, std::size_t n);
// GPU half (solver_cuda.cu or the stub).
SolveResult solve_gpu(SolveMethod method, const Matrix& a, const std::vector<cd>& b);
// cuSOLVER LU / ZCgesv / ZYgesv on a matrix already in device memory (device_a, n x n, lda n),
// which is overwritten (the factor); x comes back, scaled_residual is left 0 (pipeline.hpp computes it).
SolveResult solve_gpu_in_place(SolveMethod method, std::size_t n, cd* device_a, const std::vector<cd>& b);

// Interior-resonance heuristic: a 1-norm condition estimate above this multiple of the matrix order
// is reported as a likely interior resonance. Measured on the icosphere (README, 'Interior
// resonances'): cond_1 / n = 0.07-0.16 (P0 V), 0.76 (P1 V), 0.26 (P1 W) away from resonances; 4.3
// for P0 V at k = 3.15 (near pi, the first zero of j_0) and 3.7 for P1 W at k = 2.08 (near 2.0816,
// the first zero of j_1').
constexpr double resonance_condition_per_unknown = 2.0;
bool looks_resonant(const SolveResult& r, std::size_t n);

}  // namespace bem
