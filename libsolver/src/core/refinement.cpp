// The names of refinement.hpp's vocabulary and MixedResult::describe (one for every mixed-precision
// solver).
#include "batchsolve/refinement.hpp"

#include <sstream>

#include "batchsolve/types.hpp"

namespace batchsolve {

const char* to_string(SolvePath p) {
    switch (p) {
        case SolvePath::single_refined: return "single_refined";
        case SolvePath::tf32_refined: return "tf32_refined";
        case SolvePath::half_refined: return "half_refined";
        case SolvePath::bfloat_refined: return "bfloat_refined";
        case SolvePath::half_split_refined: return "half_split_refined";
        case SolvePath::double_direct: return "double_direct";
        case SolvePath::nopiv_low: return "nopiv_low";
        case SolvePath::rbt_nopiv_low: return "rbt_nopiv_low";
        case SolvePath::pivoted_high_sytrf: return "pivoted_high_sytrf";
        case SolvePath::pivoted_high_getrf: return "pivoted_high_getrf";
        case SolvePath::none: return "none";
    }
    return "?";
}

bool is_refined(SolvePath p) {
    return p == SolvePath::single_refined || p == SolvePath::tf32_refined || p == SolvePath::half_refined ||
           p == SolvePath::bfloat_refined || p == SolvePath::half_split_refined || p == SolvePath::nopiv_low ||
           p == SolvePath::rbt_nopiv_low;
}

const char* to_string(LowPrecision p) {
    switch (p) {
        case LowPrecision::automatic: return "automatic";
        case LowPrecision::fp32: return "fp32";
        case LowPrecision::tf32: return "tf32";
        case LowPrecision::fp16: return "fp16";
        case LowPrecision::bf16: return "bf16";
        case LowPrecision::fp16_split: return "fp16_split";
    }
    return "?";
}

LowPrecision parse_low_precision(const std::string& text) {
    for (LowPrecision p : {LowPrecision::automatic, LowPrecision::fp32, LowPrecision::tf32, LowPrecision::fp16,
                           LowPrecision::bf16, LowPrecision::fp16_split})
        if (text == to_string(p)) return p;
    throw InvalidArgument("parse_low_precision", "text",
                          "automatic, fp32, tf32, fp16, bf16 or fp16_split (got '" + text + "')");
}

const char* to_string(CorrectionMethod m) {
    switch (m) {
        case CorrectionMethod::automatic: return "automatic";
        case CorrectionMethod::classical: return "classical";
        case CorrectionMethod::gmres: return "gmres";
    }
    return "?";
}

CorrectionMethod parse_correction_method(const std::string& text) {
    for (CorrectionMethod m : {CorrectionMethod::automatic, CorrectionMethod::classical, CorrectionMethod::gmres})
        if (text == to_string(m)) return m;
    throw InvalidArgument("parse_correction_method", "text", "automatic, classical or gmres (got '" + text + "')");
}

const char* to_string(StepOutcome o) {
    switch (o) {
        case StepOutcome::converged: return "converged";
        case StepOutcome::solved: return "solved";
        case StepOutcome::overflow: return "overflow";
        case StepOutcome::breakdown: return "breakdown";
        case StepOutcome::not_positive_definite: return "not_positive_definite";
        case StepOutcome::stalled: return "stalled";
        case StepOutcome::diverged: return "diverged";
        case StepOutcome::too_many_iterations: return "too_many_iterations";
        case StepOutcome::over_budget: return "over_budget";
        case StepOutcome::singular: return "singular";
    }
    return "?";
}

std::string MixedResult::describe() const {
    std::ostringstream text;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const SolveStep& s = steps[k];
        if (k) text << " -> ";
        text << to_string(s.path) << (s.tensor_cores && s.path == SolvePath::single_refined ? " (TF32)" : "");
        if (s.shift != 0) text << " (shift " << s.shift << ")";
        text << ": " << to_string(s.outcome);
        if (s.outcome == StepOutcome::breakdown || s.outcome == StepOutcome::not_positive_definite ||
            s.outcome == StepOutcome::singular)
            text << " at column " << s.column;
        if (is_refined(s.path)) text << " after " << s.iterations << " iterations";
        if (s.gmres) text << " (GMRES, " << s.inner_iterations << " products)";
        if (s.residual != 0) text << " (residual " << s.residual << ")";
    }
    if (steps.empty()) text << "nothing to solve";
    return text.str();
}

}  // namespace batchsolve
