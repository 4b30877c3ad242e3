// The autotuner's stage plans and the candidates of each stage (stages.hpp).
#include "stages.hpp"

#include <iterator>

namespace batchsolve::autotune {

std::vector<std::string> revisit_stages(Routine r, Family f, const std::vector<std::string>& wanted) {
    std::vector<std::string> apply;
    if (f == Family::column_major) apply = {"through", "staged", "tensor_cores", "shared_memory", "fused", "warp_steps"};
    else apply = {"coop", "grid"};  // potrf, potrs and posv all have cooperative kernels
    if (f != Family::column_major && r == Routine::posv) apply.push_back("split");
    std::vector<std::string> out;
    for (const std::string& s : apply)
        if (std::find(wanted.begin(), wanted.end(), s) != wanted.end()) out.push_back(s);
    return out;
}

std::vector<std::string> without(std::vector<std::string> plan, const std::vector<std::string>& skip) {
    plan.erase(std::remove_if(plan.begin(), plan.end(),
                              [&](const std::string& s) { return std::find(skip.begin(), skip.end(), s) != skip.end(); }),
               plan.end());
    return plan;
}

// The stages of a case, in order.
std::vector<std::string> stage_plan(Routine r, Family f, int nrhs) {
    std::vector<std::string> plan;
    // "through": the interleaved family's winners run through a converted workspace (last, since
    // it needs the interleaved case of the same size finished).
    // "prefetch": how many steps of a substitution the register potrs loads ahead (config.nb).
    // "shared_memory": whole matrices in shared memory (issue 29), last.
    if (f == Family::column_major && r == Routine::potrs) plan = {"threads", "prefetch", "through", "staged", "shared_memory"};
    // "tensor_cores": the staged kernels with their trailing update on the FP64 tensor cores (d only).
    else if (f == Family::column_major)
        plan = {"shape", "unroll", "threads", "through", "staged", "tensor_cores", "shared_memory", "fused", "warp_steps"};
    else if (f == Family::chunked) plan = {"shape", "chunk", "threads"};
    else plan = {"shape", "threads"};
    // "coop": the cooperative kernels (several warps per 32 matrices) next to the one-thread ones.
    if (f != Family::column_major) plan.insert(plan.end(), {"coop", "grid"});
    // "split": posv as potrf's and potrs's winners of the same case, two kernels (split_candidates).
    if (f != Family::column_major && r == Routine::posv) plan.push_back("split");
    if (r != Routine::potrf && nrhs > 1) plan.push_back("nrhs_block");
    return plan;
}

// Column-major potrf/posv of order n: only staged kernels are searched (kColumnMajorRegisterMaxN)
// or none (kColumnMajorStagedMinN), unless exhaustive.
bool column_major_staged_only(Routine r, Family f, int n, bool exhaustive) {
    return !exhaustive && f == Family::column_major && r != Routine::potrs && n > kColumnMajorRegisterMaxN;
}
bool column_major_without_staged(Routine r, Family f, int n, bool exhaustive) {
    return !exhaustive && f == Family::column_major && r != Routine::potrs && n < kColumnMajorStagedMinN;
}
// Interleaved/chunked posv of order n: only the split stage is searched (kPosvSplitOnlyAboveN).
bool posv_split_only(Routine r, Family f, int n, bool exhaustive) {
    return !exhaustive && f != Family::column_major && r == Routine::posv && n > kPosvSplitOnlyAboveN;
}
// Interleaved/chunked potrs and posv of order n: only cooperative kernels (kCoopOnlyAboveN).
bool cooperative_only(Routine r, Family f, int n, bool exhaustive) {
    return !exhaustive && f != Family::column_major && r != Routine::potrf && n > kCoopOnlyAboveN;
}

// The stages of a full search of case (r, f, n): stage_plan less --skip-stages, and less the stages
// the four rules above leave out (--skip-stages staged keeps the register stages at every n, so that
// a plan always has a first stage).
std::vector<std::string> search_plan(Routine r, Family f, int n, int nrhs, bool exhaustive,
                                     const std::vector<std::string>& skip) {
    std::vector<std::string> plan = without(stage_plan(r, f, nrhs), skip);
    if (n > kFusedMaxN) plan = without(plan, {"fused", "warp_steps"});  // their kernels stop at kFusedMaxN
    const auto has = [&](const char* stage) { return std::find(plan.begin(), plan.end(), stage) != plan.end(); };
    if (column_major_staged_only(r, f, n, exhaustive) && has("staged"))
        return without(plan, {"shape", "unroll", "threads", "through"});
    if (column_major_without_staged(r, f, n, exhaustive)) return without(plan, {"staged", "tensor_cores"});
    if (posv_split_only(r, f, n, exhaustive) && has("split")) return without(plan, {"shape", "chunk", "threads", "coop", "grid"});
    if (cooperative_only(r, f, n, exhaustive) && has("coop")) return without(plan, {"shape", "chunk", "threads"});
    return plan;
}

// --candidates-from: the table's winners only (column-major: and the interleaved winners of this run
// through a converted workspace, as in the full search, where it searches them; --skip-stages
// through leaves them out).
// Interleaved posv also times its split stage: the two-kernel form from this run's potrf and potrs
// winners of the same n (kernels they compiled already).
std::vector<std::string> known_plan(Routine r, Family f, int n, bool exhaustive) {
    if (f != Family::column_major) return r == Routine::posv ? std::vector<std::string>{"known", "split"}
                                                             : std::vector<std::string>{"known"};
    if (column_major_staged_only(r, f, n, exhaustive)) return {"known"};
    return {"known", "through"};
}

// A plan whose first stage is the cooperative one (cooperative_only) takes no seeds: they are
// one-thread kernel shapes. It still waits for its seed source's stage 1: a chunked case's
// cooperative kernels are its interleaved source's (the chunk is a run-time argument), and queued
// beside them they would be compiled twice at once.
bool takes_no_seeds(const std::vector<std::string>& plan) { return !plan.empty() && plan[0] == "coop"; }

// Whose stage-1 ranking seeds a case: posv from potrf (same family; chunked from interleaved
// first), chunked from interleaved (same routine). None for the rest.
std::optional<CaseKey> seed_source(const CaseKey& k) {
    CaseKey s = k;
    if (k.family == Family::chunked) {
        s.family = Family::interleaved;
        return s;
    }
    if (k.routine == Routine::posv) {
        s.routine = Routine::potrf;
        return s;
    }
    return std::nullopt;
}

// Stage-1 candidates of a case whose plan starts with `first`: the full list, or the seeds (a posv
// case keeps potrf's shapes, or above kColumnMajorRegisterMaxN its staged shapes; a chunked case
// gets the stage-1 chunk size). A cooperative first stage (cooperative_only) takes no seeds and, in
// the chunked layout, times its shapes at every chunk size.
std::vector<CholeskyConfig> stage1_candidates(const CaseKey& k, const std::string& first,
                                              const std::vector<CholeskyConfig>* seeds, bool exhaustive) {
    std::vector<CholeskyConfig> list;
    if (first == "coop") {
        const std::vector<int> chunks = k.family == Family::chunked ? std::vector<int>(std::begin(kChunkSizes), std::end(kChunkSizes))
                                                                    : std::vector<int>{0};
        for (int chunk : chunks) {
            CholeskyConfig at;
            at.chunk_size = chunk;
            for (const CholeskyConfig& c : coop_candidates(k.routine, k.n, at, exhaustive)) list.push_back(c);
        }
        return list;
    }
    if (seeds != nullptr && !seeds->empty()) {
        const std::size_t take = k.family == Family::chunked ? kSeedShapesChunked : kSeedShapesPosv;
        list.assign(seeds->begin(), seeds->begin() + std::min(take, seeds->size()));
    } else if (first == "staged") {
        list = staged_candidates(k, exhaustive);
    } else if (k.family == Family::column_major) {
        list = k.routine == Routine::potrs ? column_major_solve_shapes() : column_major_shapes(k.precision, k.n, exhaustive);
    } else {
        list = interleaved_shapes(k.routine, k.precision, k.n, exhaustive);
    }
    for (CholeskyConfig& c : list) {
        c.chunk_size = k.family == Family::chunked ? kStage1Chunk : 0;
        c.nrhs_block = 1;
    }
    return list;
}

std::vector<const Measured*> ranking(const std::vector<Measured>& results) {
    std::vector<const Measured*> r;
    for (const Measured& m : results)
        if (m.timed) r.push_back(&m);
    std::stable_sort(r.begin(), r.end(), [](const Measured* a, const Measured* b) {
        if (a->pruned != b->pruned) return !a->pruned;
        return a->ms < b->ms;
    });
    return r;
}

std::vector<CholeskyConfig> later_stage(const std::string& stage, const CaseKey& k, const std::vector<Measured>& results,
                                        const Options& opt, int sm_count) {
    const std::vector<const Measured*> r = ranking(results);
    std::vector<CholeskyConfig> out;
    if (r.empty()) return out;
    std::vector<CholeskyConfig> top;
    for (const Measured* m : r)
        if (int(top.size()) < kTopForNextStage) top.push_back(m->config);
    const CholeskyConfig best = top.front();
    if (stage == "threads") {
        if (k.family == Family::column_major) {
            const auto& list = k.routine == Routine::potrs ? std::vector<int>(std::begin(kColumnMajorSolveThreadsPerBlock),
                                                                              std::end(kColumnMajorSolveThreadsPerBlock))
                                                           : std::vector<int>(std::begin(kColumnMajorThreadsPerBlock),
                                                                              std::end(kColumnMajorThreadsPerBlock));
            for (int t : list) {
                CholeskyConfig c = best;
                c.threads_per_block = t;
                out.push_back(c);
            }
        } else {
            for (int t : kThreadsPerBlock) {
                if (ceil_div(opt.batch, t) < kMinBusySmFraction * sm_count && t != best.threads_per_block) continue;
                CholeskyConfig c = best;
                c.threads_per_block = t;
                out.push_back(c);
            }
        }
    } else if (stage == "chunk") {
        for (const CholeskyConfig& base : top)
            for (int chunk : kChunkSizes) {
                CholeskyConfig c = base;
                c.chunk_size = chunk;
                out.push_back(c);
            }
    } else if (stage == "unroll") {
        const int chunk = column_major_default_chunk(k.precision);
        if (k.n <= kColumnMajorMaxFullUnrollN) {
            CholeskyConfig c = best;
            c.full_unroll = true, c.nb = chunk;
            out.push_back(c);
        }
        // A larger chunk than a thread's columns (ceil(n / threads_per_row)) changes nothing.
        const int columns = ceil_div(k.n, std::max(best.threads_per_row, 1));
        for (int nb : {chunk / 2, chunk * 2}) {
            if (nb > chunk && columns <= chunk) continue;
            CholeskyConfig c = best;
            c.full_unroll = false, c.nb = nb;
            out.push_back(c);
        }
    } else if (stage == "prefetch") {
        for (int nb : kColumnMajorPotrsPrefetch) {
            CholeskyConfig c = best;
            c.nb = nb;
            out.push_back(c);
        }
    } else if (stage == "coop") {
        out = coop_candidates(k.routine, k.n, best, opt.exhaustive);
    } else if (stage == "grid") {
        out = grid_candidates(best, opt.batch, sm_count);
    } else if (stage == "staged") {
        out = staged_candidates(k, opt.exhaustive);
    } else if (stage == "tensor_cores") {
        const std::vector<CholeskyConfig> all = tensor_core_candidates(k, opt.exhaustive);  // none outside d potrf/posv
        for (const Measured* m : r) {
            if (all.empty() || int(out.size()) == kTensorCoreFromStaged) break;
            if (!m->config.staged || m->config.tensor_cores) continue;
            CholeskyConfig c = m->config;
            c.tensor_cores = true;
            out.push_back(c);
        }
        if (out.empty()) out = all;  // no staged shape timed (e.g. --skip-stages staged)
    } else if (stage == "shared_memory") {
        out = shared_memory_candidates(k, opt.exhaustive);
    } else if (stage == "fused") {
        out = fused_candidates(k, opt.exhaustive);
    } else if (stage == "warp_steps") {
        std::vector<CholeskyConfig> ranked;
        for (const Measured* m : r) ranked.push_back(m->config);
        out = warp_step_candidates(k, ranked);
    } else if (stage == "nrhs_block") {
        for (int nrb : kNrhsBlocks) {
            if (nrb > opt.nrhs) continue;
            CholeskyConfig c = best;
            c.nrhs_block = nrb;
            out.push_back(c);
        }
    }
    return out;
}

}  // namespace batchsolve::autotune
