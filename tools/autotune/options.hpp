// The autotuner's command-line options, and the stage names they may list.
#pragma once

#include "common.hpp"

namespace batchsolve::autotune {

// Every stage added after the first sweeps, which --revisit can run on finished cases.
inline const std::vector<std::string> kRevisitStages = {"through", "coop", "grid", "staged", "tensor_cores", "split",
                                                       "shared_memory", "fused", "warp_steps"};

// Stages that --skip-stages may leave out: never the first of a plan (stage 1 builds on nothing).
// Leaving out coop also leaves out cooperative_only, whose plan starts with it.
inline const std::vector<std::string> kSkippableStages = {"unroll", "chunk",        "prefetch",   "through", "coop", "grid",
                                                          "staged", "tensor_cores", "nrhs_block", "split",
                                                          "shared_memory", "fused", "warp_steps"};

struct Options {
    std::vector<Routine> routines;
    std::vector<Precision> precisions;
    std::vector<Family> families;
    std::vector<int> ns;
    int batch = 16384;
    int nrhs = 1;
    int repeat = 5;
    int jobs = 1;
    int device = 0;
    double budget_s = 0;
    double cond = 1e3;
    std::uint64_t seed = 0;
    std::string output, log, resume, commit;
    bool dry_run = false;
    bool revisit = false;  // cases of --resume: time their winner against the stages added since (revisit_stages)
    std::vector<std::string> revisit_stages = kRevisitStages;  // --revisit-stages
    std::vector<std::string> skip_stages;                      // --skip-stages: left out of every plan
    std::string candidates_from;  // --candidates-from: a tuning table whose winners are a case's only candidates
    int neighbours = 1;           // --neighbours: also the winners of this many tuned sizes below and above n
    bool exhaustive = false;      // --exhaustive: none of the measured pruning (kInterleavedPrunedAboveN ...)
};

// --dry-run: the stage-1 candidates per case, without a GPU, and the most later stages may add.
int dry_run(const Options& opt);

}  // namespace batchsolve::autotune
