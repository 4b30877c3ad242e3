// The autotuner's stages: which stages a case runs (its plan, after the measured pruning and
// --skip-stages), where its first stage's seeds come from, and the candidates of each later stage,
// built around the ranking of what was timed so far.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "options.hpp"
#include "search_space.hpp"

namespace batchsolve::autotune {

// One timed (or refused) candidate.
struct Measured {
    CholeskyConfig config;
    std::string stage;
    bool supported = false;
    std::string note;      // why not supported / not timed
    std::string kernel;
    int registers = 0, local_bytes = 0;
    double compile_s = 0;
    bool timed = false, pruned = false;
    std::vector<double> samples_ms;
    double ms = 0, gflops = 0;
};

// The stages --revisit runs on a finished case: those of kRevisitStages that apply to its routine and
// family and are named in `wanted` (--revisit-stages).
std::vector<std::string> revisit_stages(Routine r, Family f, const std::vector<std::string>& wanted);
// A plan without the stages of `skip`.
std::vector<std::string> without(std::vector<std::string> plan, const std::vector<std::string>& skip);
// The stages of a case, in order.
std::vector<std::string> stage_plan(Routine r, Family f, int nrhs);
// Column-major potrf/posv of order n: only staged kernels are searched (kColumnMajorRegisterMaxN)
// or none (kColumnMajorStagedMinN), unless exhaustive.
bool column_major_staged_only(Routine r, Family f, int n, bool exhaustive);
bool column_major_without_staged(Routine r, Family f, int n, bool exhaustive);
// Interleaved/chunked posv of order n: only the split stage is searched (kPosvSplitOnlyAboveN).
bool posv_split_only(Routine r, Family f, int n, bool exhaustive);
// Interleaved/chunked potrs and posv of order n: only cooperative kernels (kCoopOnlyAboveN).
bool cooperative_only(Routine r, Family f, int n, bool exhaustive);
// The stages of a full search of case (r, f, n): stage_plan less --skip-stages and the pruned stages.
std::vector<std::string> search_plan(Routine r, Family f, int n, int nrhs, bool exhaustive,
                                     const std::vector<std::string>& skip);
// --candidates-from and sizes between anchors: the table's (anchors') winners, then "through"/"split".
std::vector<std::string> known_plan(Routine r, Family f, int n, bool exhaustive);

// A plan whose first stage is the cooperative one takes no seeds.
bool takes_no_seeds(const std::vector<std::string>& plan);
// Whose stage-1 ranking seeds a case: posv from potrf, chunked from interleaved; none for the rest.
std::optional<CaseKey> seed_source(const CaseKey& k);
// Stage-1 candidates of a case whose plan starts with `first`: the full list, or the seeds.
std::vector<CholeskyConfig> stage1_candidates(const CaseKey& k, const std::string& first,
                                              const std::vector<CholeskyConfig>* seeds, bool exhaustive);

// Timed candidates, fastest first (fully timed ones before pruned ones).
std::vector<const Measured*> ranking(const std::vector<Measured>& results);
// Candidates of a later stage, built around the best so far.
std::vector<CholeskyConfig> later_stage(const std::string& stage, const CaseKey& k, const std::vector<Measured>& results,
                                        const Options& opt, int sm_count);

}  // namespace batchsolve::autotune
