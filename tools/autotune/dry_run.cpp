// --dry-run: the candidates the tuner would time per case, counted without a GPU (the CTests
// autotune.* check the search space and the measured pruning through it).
#include <cstdio>
#include <fstream>
#include <set>

#include "options.hpp"
#include "stages.hpp"
#include "table_io.hpp"

namespace batchsolve::autotune {

// The split stage's candidates: potrf's best and runner-up, each with potrs's (if cooperative).
constexpr int kSplitAtMost = 4;

int dry_run(const Options& opt) {
    std::ofstream log;
    if (!opt.log.empty()) {
        log.open(opt.log);
        if (!log) throw Error("cannot open --log " + opt.log + " for writing");
    }
    long total1 = 0, total_later = 0, compiles = 0, fills = 0;
    std::set<std::string> kernels;
    std::map<CaseKey, std::vector<CholeskyConfig>> known;
    if (!opt.candidates_from.empty()) known = load_table_winners(opt.candidates_from);
    std::printf("%-34s %8s %8s %8s  %s\n", "case", "stage1", "later<=", "compile", "stages");
    // Sizes whose anchors (kFillStep) are both in the run time the anchors' winners only.
    const auto between_anchors = [&](int n) {
        int anchors = 0;
        for (int m : fill_anchors(n, opt.exhaustive)) anchors += std::find(opt.ns.begin(), opt.ns.end(), m) != opt.ns.end();
        return known.empty() && anchors == 2;
    };
    // posv's staged stage takes potrf's ranking when potrf (in the run) searches its staged stage.
    const auto potrf_ranks_staged = [&](const CaseKey& k) {
        CaseKey src = k;
        src.routine = Routine::potrf;
        const std::vector<std::string> plan = search_plan(Routine::potrf, k.family, k.n, opt.nrhs, opt.exhaustive, opt.skip_stages);
        return std::find(opt.routines.begin(), opt.routines.end(), Routine::potrf) != opt.routines.end() &&
               known_candidates(src, known, opt.neighbours).empty() && !between_anchors(k.n) &&
               std::find(plan.begin(), plan.end(), "staged") != plan.end();
    };
    for (int n : opt.ns)
        for (Precision p : opt.precisions)
            for (Routine r : opt.routines)
                for (Family f : opt.families) {
                    const CaseKey k{r, p, f, n};
                    if (const auto list = known_candidates(k, known, opt.neighbours); !list.empty()) {
                        std::printf("%-34s %8zu %8d %8zu  %s\n", k.text().c_str(), list.size(), 0, list.size(),
                                    joined(without(known_plan(r, f, n, opt.exhaustive), opt.skip_stages)).c_str());
                        total1 += long(list.size()), compiles += long(list.size());
                        continue;
                    }
                    if (between_anchors(n)) {
                        const int at_most = 2;  // the winner of each of the two anchors
                        const std::vector<std::string> plan = without(known_plan(r, f, n, opt.exhaustive), opt.skip_stages);
                        const int through = std::find(plan.begin(), plan.end(), "through") != plan.end() ? 2 : 0;
                        const int split = std::find(plan.begin(), plan.end(), "split") != plan.end() ? kSplitAtMost : 0;
                        std::printf("%-34s %8d %8d %8d  %s\n", k.text().c_str(), at_most, through + split, at_most,
                                    joined(plan).c_str());
                        total1 += at_most, total_later += through + split, compiles += at_most, ++fills;
                        continue;
                    }
                    const std::vector<std::string> plan = search_plan(r, f, n, opt.nrhs, opt.exhaustive, opt.skip_stages);
                    const std::optional<CaseKey> src = seed_source(k);
                    // seeded by a source that runs a real stage 1 (not a table's winners)
                    const bool seeded = src && !takes_no_seeds(plan) && std::find(opt.routines.begin(), opt.routines.end(), src->routine) !=
                                                   opt.routines.end() &&
                                        std::find(opt.families.begin(), opt.families.end(), src->family) !=
                                            opt.families.end() &&
                                        known_candidates(*src, known, opt.neighbours).empty();
                    if (!plan.empty() && plan[0] == "split") {  // posv_split_only: potrf's and potrs's kernels
                        const int later = std::find(plan.begin(), plan.end(), "nrhs_block") != plan.end() ? 3 : 0;
                        std::printf("%-34s %8d %8d %8d  %s\n", k.text().c_str(), kSplitAtMost, later, 0, joined(plan).c_str());
                        total1 += kSplitAtMost, total_later += later;
                        continue;
                    }
                    std::vector<CholeskyConfig> list = stage1_candidates(k, plan.empty() ? "" : plan[0], nullptr, opt.exhaustive);
                    const int seeds = f == Family::chunked ? kSeedShapesChunked : kSeedShapesPosv;
                    const int stage1 = seeded ? std::min<int>(seeds, int(list.size())) : int(list.size());
                    // Kernels of their own: the chunked layout shares the interleaved kernels (chunk is
                    // a run-time argument); a seeded posv compiles its seeds.
                    int own = 0;
                    if (f != Family::chunked || !seeded) {
                        if (seeded) own = stage1;
                        else
                            for (const CholeskyConfig& c : list) {
                                CholeskyConfig kc = c;
                                kc.chunk_size = 0;
                                const std::string key = std::string(to_string(r)) + precision_letter(p) +
                                                        (f == Family::column_major ? "cm" : "il") + std::to_string(n) +
                                                        to_string(kc);
                                own += kernels.insert(key).second;
                            }
                    }
                    int block_sizes = 0;
                    for (int t : kThreadsPerBlock) block_sizes += ceil_div(opt.batch, t) >= kMinBusySmFraction * kDryRunSmCount;
                    int later = 0;
                    for (std::size_t si = 1; si < plan.size(); ++si) {  // stage 1 is `list`
                        const std::string& s = plan[si];
                        if (s == "coop") later += int(coop_candidates(r, n, CholeskyConfig{}, opt.exhaustive).size());
                        if (s == "grid")
                            for (int g : kGridBlocksPerSm) later += static_cast<long long>(g) * kDryRunSmCount < ceil_div(opt.batch, 32);
                        if (s == "threads")
                            later += f == Family::column_major ? (r == Routine::potrs ? 0 : 3) : std::max(0, block_sizes - 1);
                        if (s == "chunk") later += kTopForNextStage * (int(std::size(kChunkSizes)) - 1);
                        if (s == "unroll") later += n <= kColumnMajorMaxFullUnrollN ? 3 : 2;
                        if (s == "prefetch") later += int(std::size(kColumnMajorPotrsPrefetch));
                        if (s == "nrhs_block") later += 3;
                        if (s == "split") later += kSplitAtMost;
                        if (s == "staged")
                            later += r == Routine::posv && !opt.exhaustive && seeded && potrf_ranks_staged(k)
                                         ? std::min<int>(kSeedStagedPosv, int(staged_candidates(k, false).size()))
                                         : int(staged_candidates(k, opt.exhaustive).size());
                        if (s == "shared_memory") later += int(shared_memory_candidates(k, opt.exhaustive).size());
                        if (s == "fused") later += int(fused_candidates(k, opt.exhaustive).size());
                        if (s == "warp_steps") later += kTopForNextStage;  // at most: the register shapes that qualify
                        if (s == "tensor_cores") {
                            const int all = int(tensor_core_candidates(k, opt.exhaustive).size());
                            const bool after_staged = std::find(plan.begin(), plan.end(), "staged") != plan.end();
                            later += after_staged ? std::min(all, kTensorCoreFromStaged) : all;
                        }
                    }
                    std::printf("%-34s %8d %8d %8d  %s\n", k.text().c_str(), stage1, later, own, joined(plan).c_str());
                    total1 += stage1, total_later += later, compiles += own;
                    if (log.is_open())
                        for (const CholeskyConfig& c : list)
                            log << json({{"routine", to_string(r)}, {"precision", std::string(1, precision_letter(p))},
                                         {"layout", to_string(f)}, {"n", n}, {"config", config_json(c)}, {"stage", "dry-run"}})
                                       .dump()
                                << '\n';
                }
    std::printf("\ndry run: %ld stage-1 candidates, later stages at most %ld more; %ld stage-1 kernels to compile; "
                "%ld cases between anchors\n",
                total1, total_later, compiles, fills);
    return 0;
}

}  // namespace batchsolve::autotune
