// What the mixed-precision solvers report (posv_mixed in cholesky_large.hpp, sysv_mixed in ldlt.hpp):
// one vocabulary of paths, step outcomes and results for every solver that factors in a lower
// precision, refines in the working precision and falls back to a working-precision solve.
//
// Every such solver runs a chain of steps, stopping at the first that produces an answer:
//  * a refined step: factor A rounded to the lower precision, then x_0 = 0, r_0 = b and
//    x_{k+1} = x_k + d_k with d_k solved from r_k through the low factor, r_{k+1} = b - A x_{k+1} in
//    the working precision (LAPACK's ?sposv / ?sgesv scheme); it ends converged, or with the reason
//    it gave up (overflow, breakdown, stalled, diverged, too_many_iterations);
//  * a direct step: a factorisation and solve in the working precision, checked by one residual.
// A chain every allowed step fails on returns path == none and X filled with NaN: never an answer
// that did not pass the stopping test (refined steps) or come from a successful working-precision
// factorisation (direct steps).
//
// A refined step corrects either classically (d_k = M^-1 r_k, M the low factor) or by GMRES on
// A M^-1 u = r_k, d_k = M^-1 u (GMRES-IR: Carson and Higham; Haidar et al., SC18; right-preconditioned
// here, so that GMRES minimises the true residual), whose products with A are in the working
// precision and whose preconditioner is the low factor: it converges where kappa(A) u_low > 1 stalls
// classical refinement. The automatic choice starts classical and switches to GMRES
// on the first pass whose residual shrinks by less than gmres_switch_ratio.
//
// A refined step with a later step in its chain is cost-bounded: the driver times the step's factor
// and each pass (and each GMRES product), projects from the residual's rate so far what the rest of
// the step would cost to reach the criterion, and ends the step (over_budget) once that exceeds the
// estimated cost of the chain's next step (refinement_budget times the measured factor time).
#pragma once

#include <string>
#include <vector>

namespace batchsolve {

// The method of one step (and of the returned X).
enum class SolvePath {
    single_refined,      // Cholesky in FP32 (SIMT; TF32 updates when tensor_cores) + refinement (posv_mixed)
    tf32_refined,        // Cholesky with every update on TF32 tensor cores (FP32 storage) + refinement
    half_refined,        // Cholesky with FP16 tensor-core updates of a scaled copy (FP32 storage) + refinement
    bfloat_refined,      // the same with BF16 updates
    half_split_refined,  // FP16 tensor-core updates of a hi + lo split of every panel (three products:
                         // about FP32 accuracy, about a third of the FP16 rate) + refinement
    double_direct,       // Cholesky + solve in the working precision (posv_mixed's fallback)
    nopiv_low,           // LDL^T without pivoting in the lower precision + refinement (sysv_mixed)
    rbt_nopiv_low,       // the same on U^T A U (random butterflies) + refinement
    pivoted_high_sytrf,  // Bunch-Kaufman ?sytrf/?sytrs (?hetrf on the CPU) in the working precision
    pivoted_high_getrf,  // LU with partial pivoting in the working precision (where no sytrf fits)
    none                 // nothing ran (n == 0 or nrhs == 0), or every step failed (X is NaN)
};
const char* to_string(SolvePath p);
// True for the paths that refine a lower-precision factor (their steps count iterations).
bool is_refined(SolvePath p);

// Why one step ended.
enum class StepOutcome {
    converged,              // refinement met the stopping criterion: this step's X is the answer
    solved,                 // a direct solve returned a finite X: this step's X is the answer
    overflow,               // A or a residual does not fit the lower precision
    breakdown,              // LDL^T: zero, tiny or non-finite pivot (column in `column`)
    not_positive_definite,  // Cholesky: a non-positive or non-finite pivot (column in `column`)
    stalled,                // a correction shrank the residual by less than stall_ratio
    diverged,               // the residual grew or became non-finite
    too_many_iterations,
    over_budget,            // the projected cost of finishing this step exceeded the next step's (refinement_budget)
    singular                // the pivoted factorisation found an exactly singular matrix (column)
};
const char* to_string(StepOutcome o);

struct SolveStep {
    SolvePath path = SolvePath::none;
    StepOutcome outcome = StepOutcome::converged;
    int column = 0;             // breakdown / not_positive_definite / singular: the 1-based column
    int iterations = 0;         // refinement corrections applied (0: the first solve met the criterion)
    double residual = 0;        // max over rhs of ||b - A x||_inf / (||A||_inf ||x||_inf) at the end
    bool tensor_cores = false;  // this step's low factor ran its updates on tensor cores
    bool gmres = false;         // its last correction was a GMRES pass (else classical)
    int inner_iterations = 0;   // GMRES: preconditioned products with A, summed over passes
    double shift = 0;           // the diagonal shift of the scaled matrix the low factor factored (0: none)
    std::vector<double> history;  // the scaled residual after each pass
    double factor_seconds = 0;    // wall time of the step's factorisation (host clock, synchronised)
    double refine_seconds = 0;    // wall time of its passes after the factorisation
};

// The precision of the low factor (posv_mixed; sysv_mixed factors in the working precision's lower one).
enum class LowPrecision {
    automatic,  // the tuning table's chain for n (posv_mixed: FP32, or split FP16 on the GPU above 12288), then FP64
    fp32,       // plain single precision (tensor_core_updates: TF32 updates of the blocked factor)
    tf32,       // TF32 tensor cores for every update of a recursive factor
    fp16,       // FP16 tensor cores, FP32 accumulation, on the unit-diagonal scaling of A
    bf16,       // BF16 tensor cores, FP32 accumulation
    fp16_split  // FP16 hi + lo products (three per update): about FP32 accuracy on tensor cores
};
const char* to_string(LowPrecision p);
LowPrecision parse_low_precision(const std::string& text);  // the to_string names

// How a refined step solves its correction equation.
enum class CorrectionMethod { automatic, classical, gmres };
const char* to_string(CorrectionMethod m);
CorrectionMethod parse_correction_method(const std::string& text);

// The refinement's controls, shared by every mixed-precision solver's options.
struct RefinementOptions {
    int max_iterations = 30;  // LAPACK ?sgesv's ITERMAX
    // A correction that shrinks the normwise residual by less than this factor counts as a stall
    // (each correction gains a factor ~ growth kappa(A) u_low, < 1 when refinement works; slow
    // convergence is still cheap next to a factorisation, so only a near-standstill counts).
    double stall_ratio = 0.9;
    // CUDA: the single-precision factor's updates on TF32 tensor cores (products with 10-bit
    // mantissas: the factor is then accurate to about 1e-3 relative instead of 1e-7, so each
    // correction gains ~ kappa(A) 1e-3 and refinement stalls for kappa(A) above ~1e3). Only the
    // chain's first refined step uses them; if it stalls, diverges or runs out of iterations it is
    // repeated in plain single precision before the chain moves on. The CPU backend ignores it (the
    // step is marked all the same).
    bool tensor_core_updates = false;
    // posv_mixed: the low factor's precision and the corrections (see the enums above).
    LowPrecision factor_precision = LowPrecision::automatic;
    CorrectionMethod method = CorrectionMethod::automatic;
    // Automatic method: a classical pass that shrinks the residual by less than this switches the
    // step to GMRES (classical refinement at that rate needs more passes than GMRES needs products).
    double gmres_switch_ratio = 0.05;
    // One GMRES pass: at most gmres_restart preconditioned products, ended early once its residual
    // has shrunk by gmres_tolerance (the outer pass then measures the true residual in the working
    // precision).
    int gmres_restart = 40;
    double gmres_tolerance = 1e-6;
    // The low factor's diagonal shift, in units of its unit roundoff, applied to the unit-diagonal
    // scaling of A when the unshifted factor is not positive definite (Higham and Pranesh; Abdelfattah
    // et al.): one retry with it before the chain moves on. 0: no retry.
    double shift_units = 8;
    // posv_mixed's tensor-core factor (CUDA): the order of its cuSOLVER leaves and of its STRSM leaves
    // (0: the default, 512), and how M^-1 runs for one right-hand side: 0 cuBLAS STRSV on the whole
    // factor, b > 0 blocks of b rows (STRSV + SGEMV), -1 the default.
    int factor_leaf = 0;
    int solve_block = -1;
    // The cost bound of a refined step that has a later step in its chain: the next step's cost in
    // units of this step's measured factor time. Once the projected cost of finishing this step
    // (passes or GMRES products still needed at the residual's rate so far, each at its measured
    // cost) exceeds it, the step ends over_budget and the chain moves on. -1: the solver's tuned
    // value (posv_mixed: the tuning table's next_step_cost_percent / 100; sysv_mixed: unbounded);
    // 0: unbounded.
    double refinement_budget = -1;
    // Classical passes for one right-hand side fused into M^-1 and two launches (A (x + d) from the
    // stored triangle; then x += d, r = b - A x, its conversion down with the overflow test and both
    // norms, read back once a pass): the product kernel's strip of 32-row tiles per block (CUDA), 0
    // the separate primitives, -1 the solver's tuned value (posv_mixed: the tuning table's fused_pass;
    // sysv_mixed: 0). The criterion and every test on the norms are the same either way.
    int fused_pass = -1;
};

struct MixedResult {
    SolvePath path = SolvePath::none;  // the step whose X was returned
    int iterations = 0;                // its refinement iterations (outer passes after the first)
    int inner_iterations = 0;          // GMRES: its preconditioned products with A
    double backward_error = 0;         // componentwise max_i |b - Ax|_i / (|A||x| + |b|)_i, max over rhs
    double normwise_residual = 0;      // max over rhs of ||b - Ax||_inf / (||A||_inf ||x||_inf)
    std::vector<SolveStep> steps;      // every step tried, in order, the returned one last
    std::string describe() const;      // "single_refined: stalled after 4 iterations -> double_direct: solved"
};

}  // namespace batchsolve
