// Without the CUDA backend the GPU-only families have nothing to run: every case is a skipped row
// saying so (suite.hpp).
#include "suite.hpp"

namespace batchsolve::validation::suite {

namespace {
void skip_all(const std::string& routine, const Options& o, const Sink& sink) {
    for (const std::string& p : o.precisions.empty() ? std::vector<std::string>{"d"} : o.precisions)
        for (int n : o.ns.empty() ? std::vector<int>{0} : o.ns) {
            Row r;
            r.routine = routine, r.precision = p, r.n = n, r.shape = "n=" + std::to_string(n);
            r.status = Status::skipped, r.note = "no GPU (this build has no CUDA backend)";
            sink(std::move(r));
        }
}
}  // namespace

void run_large(const std::string& routine, const Options& o, const Sink& sink) { skip_all(routine, o, sink); }
void run_ldlt(const std::string& routine, const Options& o, const Sink& sink) { skip_all(routine, o, sink); }
void run_triangular(const std::string& routine, const Options& o, const Sink& sink) { skip_all(routine, o, sink); }
void run_vbatched(const std::string& routine, const Options& o, const Sink& sink) { skip_all(routine, o, sink); }

}  // namespace batchsolve::validation::suite
