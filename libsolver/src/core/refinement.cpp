// The names of refinement.hpp's vocabulary and MixedResult::describe (one for every mixed-precision
// solver).
#include "batchsolve/refinement.hpp"

#include <sstream>

namespace batchsolve {

const char* to_string(SolvePath p) {
    switch (p) {
        case SolvePath::single_refined: return "single_refined";
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
    return p == SolvePath::single_refined || p == SolvePath::nopiv_low || p == SolvePath::rbt_nopiv_low;
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
        case StepOutcome::singular: return "singular";
    }
    return "?";
}

std::string MixedResult::describe() const {
    std::ostringstream text;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const SolveStep& s = steps[k];
        if (k) text << " -> ";
        text << to_string(s.path) << (s.tensor_cores ? " (TF32)" : "") << ": " << to_string(s.outcome);
        if (s.outcome == StepOutcome::breakdown || s.outcome == StepOutcome::not_positive_definite ||
            s.outcome == StepOutcome::singular)
            text << " at column " << s.column;
        if (is_refined(s.path)) text << " after " << s.iterations << " iterations";
        if (s.residual != 0) text << " (residual " << s.residual << ")";
    }
    if (steps.empty()) text << "nothing to solve";
    return text.str();
}

}  // namespace batchsolve
