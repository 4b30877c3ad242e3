// The Tuner's scheduling of cases and stages (tuner.hpp); its table I/O is in table_io.cpp.
#include "tuner.hpp"

#include <cstdio>
#include <iostream>

namespace batchsolve::autotune {

void Tuner::plan_cases() {
    // n outermost, so that a budget cut leaves whole sizes out; within a (precision, n) group the
    // seeds come first (potrf before posv, interleaved before chunked) and potrs sits between them,
    // giving posv's compilations time.
    // The sizes between anchors (kFillStep) come after all the others, so that their anchors on both
    // sides are done when they start.
    const Routine routine_order[] = {Routine::potrf, Routine::potrs, Routine::posv};
    const Family family_order[] = {Family::interleaved, Family::column_major, Family::chunked};
    std::vector<int> sizes;
    for (int n : opt_.ns)
        if (fill_anchors(n, opt_.exhaustive).empty()) sizes.push_back(n);
    for (int n : opt_.ns)
        if (!fill_anchors(n, opt_.exhaustive).empty()) sizes.push_back(n);
    for (int n : sizes)
        for (Precision p : opt_.precisions) {
            auto g = std::make_unique<Group>();
            g->precision = p, g->n = n;
            g->seed = mix(mix(opt_.seed, std::uint64_t(p)), std::uint64_t(n));
            bool any = false;
            for (Routine r : routine_order) {
                if (std::find(opt_.routines.begin(), opt_.routines.end(), r) == opt_.routines.end()) continue;
                for (Family f : family_order) {
                    if (std::find(opt_.families.begin(), opt_.families.end(), f) == opt_.families.end()) continue;
                    CaseState c;
                    c.key = {r, p, f, n};
                    if (auto e = entries_.find(c.key); e != entries_.end()) {  // done in an earlier run
                        if (!opt_.revisit || without(revisit_stages(r, f, opt_.revisit_stages), opt_.skip_stages).empty())
                            continue;
                        c.resumed_best = e->second.best.config;
                    }
                    c.group = int(groups_.size());
                    c.index = long(cases_.size());
                    if (!c.resumed_best && known_.empty()) {  // both anchors tuned now or resumed, else a full search
                        for (int m : fill_anchors(n, opt_.exhaustive)) {
                            CaseKey a = c.key;
                            a.n = m;
                            if (entries_.count(a) || std::find(opt_.ns.begin(), opt_.ns.end(), m) != opt_.ns.end())
                                c.anchors.push_back(a);
                        }
                        if (c.anchors.size() < 2) c.anchors.clear();
                    }
                    if (c.resumed_best) c.plan = revisit_stages(r, f, opt_.revisit_stages);
                    else if (!known_.empty() && !known_candidates(c.key, known_, opt_.neighbours).empty())
                        c.plan = known_plan(r, f, n, opt_.exhaustive);
                    else if (!c.anchors.empty()) c.plan = known_plan(r, f, n, opt_.exhaustive);
                    else c.plan = search_plan(r, f, n, opt_.nrhs, opt_.exhaustive, opt_.skip_stages);
                    c.plan = without(c.plan, opt_.skip_stages);
                    case_index_[c.key] = c.index;
                    ++g->open_cases;
                    (r == Routine::potrs ? g->needs_l : g->needs_a) = true;
                    cases_.push_back(std::move(c));
                    any = true;
                }
            }
            if (any) groups_.push_back(std::move(g));
        }
}

void Tuner::start_group(Group& g) {
    if (g.generating || g.resident || g.failed) return;
    const int distinct = std::min(kDistinctMatrices, opt_.batch);
    const int nrhs = opt_.nrhs;
    const double cond = opt_.cond;
    const Precision p = g.precision;
    const int n = g.n;
    const std::uint64_t seed = g.seed;
    g.host = std::async(std::launch::async, [=] { return make_host_inputs(p, n, nrhs, distinct, cond, seed); });
    g.generating = true;
}

bool Tuner::ensure_resident(Group& g) {
    if (g.resident) return true;
    if (g.failed) return false;
    start_group(g);
    if (g.host.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    try {
        // The previous case's input sets (3 copies of its batch at least) are rebuilt by every stage
        // anyway: freed first, they leave the device to the new inputs (d n = 128 at batch 100000
        // ran out of an 80 GB H100 beside them in run 38).
        workspace_.release();
        make_resident(g, g.host.get(), opt_.batch, opt_.nrhs, *ctx_);
    } catch (const std::exception& e) {
        g.failed = true;
        g.error = e.what();
        std::cerr << "autotune: inputs of " << precision_letter(g.precision) << " n=" << g.n << ": " << e.what() << "\n";
        return false;
    }
    return true;
}

// A case is over (done, or skipped by the budget); the last one of a group frees its inputs.
void Tuner::close(CaseState& c, bool skipped) {
    if (c.done || c.skipped) return;
    (skipped ? c.skipped : c.done) = true;
    Group& g = *groups_[c.group];
    if (--g.open_cases == 0) {
        g.a = Buffer<std::byte>(), g.l = Buffer<std::byte>(), g.b = Buffer<std::byte>();
        g.resident = false;
    }
}

// Seeds of a case when its source's stage 1 is known (`have` false: no seeds, use the full list);
// returns false while the source is still running.
bool Tuner::seed_ready(const CaseState& c, std::vector<CholeskyConfig>& seeds, bool& have) const {
    have = false;
    const std::optional<CaseKey> src = seed_source(c.key);
    if (!src) return true;
    std::vector<CholeskyConfig> staged;  // the source's best staged shapes
    if (auto it = case_index_.find(*src); it != case_index_.end()) {
        const CaseState& s = cases_[it->second];
        if (s.skipped) return true;
        if (!s.stage1_done && !s.done) return false;
        if (takes_no_seeds(c.plan)) return true;  // waited all the same: a chunked case runs its source's kernels
        seeds = s.stage1_top, staged = s.staged_top;
    } else if (takes_no_seeds(c.plan)) {
        return true;
    } else if (auto it = resumed_seeds_.find(*src); it != resumed_seeds_.end()) {
        seeds = it->second;
        if (const auto e = entries_.find(*src); e != entries_.end()) staged = e->second.staged_top;
    }
    // Seeds of the kind the case's first stage times: staged shapes for a staged first stage (search_plan),
    // kernel shapes otherwise. The source may have searched the other way (a resumed entry of another
    // search, or --exhaustive / --skip-stages on one side): then its staged ranking, or no seeds.
    const bool want_staged = !c.plan.empty() && c.plan[0] == "staged";
    // Two-kernel posv configurations (a split-only source) seed nothing: stage 1 times kernel shapes.
    seeds.erase(std::remove_if(seeds.begin(), seeds.end(),
                               [&](const CholeskyConfig& s) { return s.staged != want_staged || s.solve_warps_per_matrix > 0; }),
                seeds.end());
    if (want_staged && seeds.empty()) seeds = staged;
    have = !seeds.empty();
    return true;
}

CompileRequest Tuner::request_of(const CaseKey& k, const CholeskyConfig& config) const {
    CompileRequest r;
    r.routine = k.routine, r.precision = k.precision, r.layout = layout_of(k.family);
    r.n = k.n, r.count = opt_.batch, r.chunk = k.family == Family::chunked ? config.chunk_size : 0;
    r.nrhs = k.routine == Routine::potrf ? 0 : opt_.nrhs;
    r.config = config;
    return r;
}

// The sizes between anchors wait for their anchors and then run in (precision, n) groups, a few
// groups at a time (kGroupsAhead, for the inputs' memory); each compiles only 1-2 kernels, so the
// compile threads would idle while the timing thread works through them one group after another
// (run 42: its part of them used 6.6 of 16 threads). Their kernels are therefore queued as soon as
// their anchors are settled, at the case's priority, while the timing thread waits.
void Tuner::queue_fills_ahead() {
    for (CaseState& c : cases_) {
        if (c.queued_ahead || c.started || c.done || c.skipped || c.anchors.empty() || !anchors_ready(c)) continue;
        c.queued_ahead = true;
        for (const CholeskyConfig& config : anchor_candidates(c)) pool_->submit(request_of(c.key, config), c.index);
    }
}

void Tuner::submit_stage(CaseState& c, const std::vector<CholeskyConfig>& configs) {
    c.pending.clear();
    c.jobs.clear();
    std::set<std::string> tried;
    for (const Measured& m : c.results) tried.insert(to_string(m.config));
    for (const CholeskyConfig& config : configs) {
        if (!tried.insert(to_string(config)).second) continue;
        Measured m;
        m.config = config;
        m.stage = c.plan[c.stage];
        c.jobs.push_back(pool_->submit(request_of(c.key, config), c.index));
        c.pending.push_back(std::move(m));
    }
}

// The case starts: its first stage (c.plan[0]) with these candidates.
void Tuner::begin(CaseState& c, const std::vector<CholeskyConfig>& first_stage) {
    c.started = true;
    c.t0 = std::chrono::steady_clock::now();
    c.stage = 0;
    submit_stage(c, first_stage);
}

void Tuner::start_case(CaseState& c) {
    if (c.resumed_best) {  // --revisit: the recorded winner and the new stage's candidates, side by side
        std::vector<CholeskyConfig> configs = {*c.resumed_best};
        const std::vector<CholeskyConfig> added = c.plan[0] == "through"  ? through_candidates(c.key)
                                                  : c.plan[0] == "split"  ? split_candidates(c.key)
                                                  : c.plan[0] == "coop"   ? coop_candidates(c.key.routine, c.key.n, *c.resumed_best, opt_.exhaustive)
                                                  : c.plan[0] == "staged" ? staged_candidates(c.key, opt_.exhaustive)
                                                  : c.plan[0] == "tensor_cores" ? tensor_core_candidates(c.key, opt_.exhaustive)
                                                                          : grid_candidates(*c.resumed_best, opt_.batch,
                                                                                            gpu_.sm_count);
        configs.insert(configs.end(), added.begin(), added.end());
        return begin(c, configs);
    }
    if (c.plan[0] == "known") {
        const std::vector<CholeskyConfig> configs =
            c.anchors.empty() ? known_candidates(c.key, known_, opt_.neighbours) : anchor_candidates(c);
        if (!configs.empty()) return begin(c, configs);
        c.plan = search_plan(c.key.routine, c.key.family, c.key.n, opt_.nrhs, opt_.exhaustive,
                             opt_.skip_stages);  // anchors without an entry
        c.anchors.clear();
    }
    if (c.plan[0] == "split") {  // posv_split_only: potrf's and potrs's winners of this case
        if (!split_ready(c.key)) return;  // not started: the main loop comes back
        const std::vector<CholeskyConfig> configs = split_candidates(c.key);
        if (!configs.empty()) return begin(c, configs);
        // neither tuned (or potrs has no cooperative winner): the fused search after all, under the
        // other rules
        std::vector<std::string> skip = opt_.skip_stages;
        skip.push_back("split");
        c.plan = search_plan(c.key.routine, c.key.family, c.key.n, opt_.nrhs, opt_.exhaustive, skip);
    }
    std::vector<CholeskyConfig> seeds;
    bool have = false;
    seed_ready(c, seeds, have);
    begin(c, stage1_candidates(c.key, c.plan[0], have ? &seeds : nullptr, opt_.exhaustive));
}

std::vector<CholeskyConfig> Tuner::through_candidates(const CaseKey& k) const {
    CaseKey source = k;
    source.family = Family::interleaved;
    std::vector<CholeskyConfig> out;
    const auto e = entries_.find(source);
    if (e == entries_.end()) return out;  // not tuned (yet): the stage is skipped
    for (CholeskyConfig c : winners_of(e->second)) {
        c.chunk_size = 0;
        c.through_interleaved = true;
        out.push_back(c);
    }
    return out;
}

// Interleaved posv in two kernels (CholeskyConfig::solve_warps_per_matrix): potrf's winners (best and
// runner-up) of the same case, each followed by the cooperative solve of potrs's winners there (the
// one-thread potrs kernels have no two-kernel form), at the factorisation's chunk size. Their kernels
// are potrf's and potrs's, compiled already: the stage only times. The solve part has no grid or
// register cap of its own: a potrs winner with a register cap (another kernel) is left out, one with
// a grid cap runs uncapped (the same kernel). Empty until both are tuned.
std::vector<CholeskyConfig> Tuner::split_candidates(const CaseKey& k) const {
    CaseKey factor = k, solve = k;
    factor.routine = Routine::potrf, solve.routine = Routine::potrs;
    std::vector<CholeskyConfig> out;
    const auto f = entries_.find(factor), s = entries_.find(solve);
    if (k.routine != Routine::posv || k.family == Family::column_major || f == entries_.end() || s == entries_.end())
        return out;
    for (const CholeskyConfig& fc : winners_of(f->second))
        for (const CholeskyConfig& sc : winners_of(s->second)) {
            if (sc.warps_per_matrix <= 0 || sc.max_registers != 0) continue;
            CholeskyConfig c = fc;
            c.solve_warps_per_matrix = sc.warps_per_matrix, c.solve_nb = sc.nb;
            c.nrhs_block = sc.nrhs_block;
            out.push_back(c);
        }
    return out;
}

// posv's staged stage starts from potrf's staged ranking (kSeedStagedPosv): the potrf case whose
// ranking it takes, when the measured pruning is on and potrf is tuned in this run or resumed.
std::optional<CaseKey> Tuner::staged_seed_source(const CaseState& c) const {
    if (opt_.exhaustive || c.resumed_best || c.key.routine != Routine::posv || c.key.family != Family::column_major)
        return std::nullopt;
    if (c.stage < 0 || c.stage >= int(c.plan.size()) || c.plan[c.stage] != "staged") return std::nullopt;
    CaseKey src = c.key;
    src.routine = Routine::potrf;
    // only a potrf that ranks staged shapes: not one timing a table's or its anchors' winners
    if (const auto it = case_index_.find(src); it != case_index_.end()) {
        const std::vector<std::string>& plan = cases_[it->second].plan;
        if (!cases_[it->second].resumed_best && std::find(plan.begin(), plan.end(), "staged") != plan.end()) return src;
        return std::nullopt;
    }
    if (const auto e = entries_.find(src); e != entries_.end() && !e->second.staged_top.empty()) return src;
    return std::nullopt;
}

// True unless case k is tuned in this run and still open.
bool Tuner::settled(const CaseKey& k) const {
    const auto it = case_index_.find(k);
    return it == case_index_.end() || cases_[it->second].done || cases_[it->second].skipped;
}

// A size between anchors starts when the anchors tuned in this run are done.
bool Tuner::anchors_ready(const CaseState& c) const {
    return std::all_of(c.anchors.begin(), c.anchors.end(), [this](const CaseKey& a) { return settled(a); });
}

// The winners of a size's anchors (kFillStep): --candidates-from's lookup of the nearest tuned size
// each side, given the anchors' winners only (an anchor without an entry found no winner).
std::vector<CholeskyConfig> Tuner::anchor_candidates(const CaseState& c) const {
    std::map<CaseKey, std::vector<CholeskyConfig>> anchors;
    for (const CaseKey& a : c.anchors)
        if (const auto e = entries_.find(a); e != entries_.end()) anchors[a] = {e->second.best.config};
    return known_candidates(c.key, anchors, 1);
}

// The split stage of posv needs potrf and potrs of the same case finished (or not in this run).
bool Tuner::split_ready(const CaseKey& k) const {
    CaseKey factor = k, solve = k;
    factor.routine = Routine::potrf, solve.routine = Routine::potrs;
    return settled(factor) && settled(solve);
}

// False while the case's current stage needs a case of this run that has not finished yet.
bool Tuner::stage_ready(const CaseState& c) const {
    if (c.stage >= 0 && c.stage < int(c.plan.size()) && c.plan[c.stage] == "split") return split_ready(c.key);
    const std::optional<CaseKey> src = staged_seed_source(c);
    return !src || settled(*src);
}

// Submits the candidates of stage c.stage; false when it has none.
bool Tuner::submit_current(CaseState& c) {
    const std::string& stage = c.plan[c.stage];
    std::vector<CholeskyConfig> configs;
    if (const std::optional<CaseKey> src = staged_seed_source(c)) {
        const auto e = entries_.find(*src);  // not there: potrf found no winner, so posv gets the full list
        if (e != entries_.end())
            for (const CholeskyConfig& s : e->second.staged_top)
                if (int(configs.size()) < kSeedStagedPosv) configs.push_back(s);
    }
    if (configs.empty())
        configs = stage == "through" ? through_candidates(c.key)
                  : stage == "split" ? split_candidates(c.key)
                                     : later_stage(stage, c.key, c.results, opt_, gpu_.sm_count);
    submit_stage(c, configs);
    return !c.pending.empty();
}

bool Tuner::advance(CaseState& c) {
    while (++c.stage < int(c.plan.size())) {
        if (!stage_ready(c)) {
            c.waiting = true;  // submitted by the main loop once the other case is done
            c.pending.clear(), c.jobs.clear();
            return true;
        }
        if (submit_current(c)) return true;
    }
    return false;
}

bool Tuner::compiled(const CaseState& c) const {
    return std::all_of(c.jobs.begin(), c.jobs.end(), [](const auto& j) { return j->done.load(); });
}

void Tuner::log_candidate(const CaseState& c, const Measured& m) {
    if (!log_.is_open()) return;
    json j = {{"routine", to_string(c.key.routine)},
              {"precision", std::string(1, precision_letter(c.key.precision))},
              {"layout", to_string(c.key.family)},
              {"n", c.key.n},
              {"config", config_json(m.config)},
              {"stage", m.stage},
              {"supported", m.supported},
              {"kernel", m.kernel},
              {"registers", m.registers},
              {"local_bytes", m.local_bytes},
              {"compile_s", m.compile_s}};
    if (m.timed) {
        j["ms"] = m.ms;
        j["gflops"] = m.gflops;
        j["samples_ms"] = m.samples_ms;
        j["pruned"] = m.pruned;
    } else {
        j["ms"] = nullptr;
        j["gflops"] = nullptr;
    }
    if (!m.note.empty()) j["note"] = m.note;
    log_ << j.dump() << '\n';
    log_.flush();
}

template <class T>
void Tuner::run_stage_typed(CaseState& c) {
    Group& g = *groups_[c.group];
    Bench<T> bench(c.key, opt_, g, workspace_, flush_, *ctx_);
    const double flops = flops_per_matrix(c.key.routine, c.key.precision, c.key.n, opt_.nrhs) * opt_.batch;
    // Candidates that share a kernel and launch (the library resolves some fields to the same
    // kernel) are timed once. The launch: the chunk width and the grid cap (same kernel text).
    auto launch_key = [](const std::string& kernel, const CholeskyConfig& config) {
        return kernel + "|" + std::to_string(config.chunk_size) + "|" + std::to_string(config.grid_blocks_per_sm);
    };
    std::set<std::string> kernels;
    for (const Measured& m : c.results)
        if (m.timed) kernels.insert(launch_key(m.kernel, m.config));
    // Chunked candidates sorted by chunk size: one conversion of the inputs per size.
    std::vector<std::size_t> order(c.pending.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return c.pending[a].config.chunk_size < c.pending[b].config.chunk_size;
    });
    for (std::size_t i : order) {
        Measured& m = c.pending[i];
        const KernelReport& rep = c.jobs[i]->report;
        m.supported = rep.supported;
        m.kernel = rep.name;
        m.registers = rep.registers, m.local_bytes = rep.local_bytes;
        m.compile_s = rep.compile_seconds;
        if (!rep.supported) {
            m.note = rep.note.empty() ? "not supported" : rep.note;
        } else if (!kernels.insert(launch_key(rep.name, m.config)).second) {
            m.note = "same kernel and launch as a candidate timed before";
        } else {
            const std::vector<const Measured*> r = ranking(c.results);
            const double best = r.empty() || r.front()->pruned ? 0 : r.front()->ms;
            try {
                bench.time(m, best);
                m.gflops = m.ms > 0 ? flops / (m.ms * 1e-3) / 1e9 : 0;
                ++timed_;
            } catch (const InvalidArgument& e) {
                m.timed = false, m.samples_ms.clear();
                m.note = std::string("refused: ") + e.what();
            } catch (const CudaError& e) {
                m.timed = false, m.samples_ms.clear();
                m.note = std::string("CUDA error: ") + e.what();
                ctx_->synchronize();  // a sticky error (the context is lost) throws here and ends the run
            }
        }
        log_candidate(c, m);
        c.results.push_back(std::move(m));
    }
    c.pending.clear();
    c.jobs.clear();
}

void Tuner::run_stage(CaseState& c) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
        switch (c.key.precision) {
            case Precision::s: run_stage_typed<float>(c); break;
            case Precision::d: run_stage_typed<double>(c); break;
            case Precision::c: run_stage_typed<std::complex<float>>(c); break;
            case Precision::z: run_stage_typed<std::complex<double>>(c); break;
        }
    } catch (const CudaError&) {
        throw;  // the device is in an unknown state: stop (outputs are written by the caller)
    } catch (const std::exception& e) {  // e.g. not enough memory for this n: the case is given up
        c.note = e.what();
        c.pending.clear(), c.jobs.clear();
        close(c, false);
        std::printf("%-34s failed: %s\n", c.key.text().c_str(), e.what());
        std::fflush(stdout);
        timing_s_ += seconds_since(t0);
        return;
    }
    if (c.plan[c.stage] == "staged")
        for (const Measured* m : ranking(c.results))
            if (int(c.staged_top.size()) < kSeedStagedPosv && m->config.staged && !m->config.tensor_cores)
                c.staged_top.push_back(m->config);
    if (c.stage == 0 && takes_no_seeds(c.plan) && ranking(c.results).empty()) {
        // a cooperative first stage (cooperative_only) that timed nothing (every shape refused): the
        // search without the rule after all
        c.plan = without(stage_plan(c.key.routine, c.key.family, opt_.nrhs), opt_.skip_stages);
        begin(c, stage1_candidates(c.key, c.plan[0], nullptr, opt_.exhaustive));
        timing_s_ += seconds_since(t0);
        return;
    }
    if (c.plan[c.stage] == "shape" || c.stage == 0) {
        c.stage1_done = true;
        // Seeds come from a real stage 1 only: not from a revisit's, a table's or anchors' winners,
        // nor from a cooperative first stage (staged, cooperative or grid-capped configurations, not
        // shapes); without them the seeded case searches its full list.
        if (!c.resumed_best && c.plan[0] != "known" && !takes_no_seeds(c.plan))
            for (const Measured* m : ranking(c.results))  // seeds are kernel shapes: not the through-interleaved route
                if (int(c.stage1_top.size()) < std::max(kSeedShapesPosv, kSeedShapesChunked) && !m->config.through_interleaved)
                    c.stage1_top.push_back(m->config);
    }
    if (!advance(c)) finish(c);
    timing_s_ += seconds_since(t0);
}

template <class T>
void Tuner::finish_typed(CaseState& c) {
    std::vector<const Measured*> r = ranking(c.results);
    if (r.empty()) {
        c.note = "no supported candidate";
        for (const Measured& m : c.results)
            if (!m.note.empty()) {
                c.note += " (e.g. " + m.note + ")";
                break;
            }
        return;
    }
    // The winner must leave every info 0 (and finite solutions); else the next one takes its place.
    Bench<T> bench(c.key, opt_, *groups_[c.group], workspace_, flush_, *ctx_);
    std::size_t first = 0;
    for (; first < r.size() && first < std::size_t(kSanityTries); ++first) {
        const std::string problem = bench.sanity(r[first]->config);
        if (problem.empty()) break;
        std::fprintf(stderr, "autotune: %s: %s failed the sanity check: %s\n", c.key.text().c_str(),
                     to_string(r[first]->config).c_str(), problem.c_str());
        ++sanity_failures_;
        c.note += (c.note.empty() ? "" : "; ") + std::string("dropped a candidate: ") + problem;
    }
    if (first == r.size() || first == std::size_t(kSanityTries)) {
        c.note = "no candidate passed the sanity check: " + c.note;
        return;
    }
    Entry e;
    e.key = c.key;
    e.best = {r[first]->config, r[first]->ms, r[first]->gflops};
    if (first + 1 < r.size()) e.runner_up = Winner{r[first + 1]->config, r[first + 1]->ms, r[first + 1]->gflops};
    e.candidates = int(std::count_if(c.results.begin(), c.results.end(), [](const Measured& m) { return m.timed; }));
    e.stage1_top = c.stage1_top;
    e.staged_top = c.staged_top;
    if (c.resumed_best)  // --revisit: keep the seeds of the search that made the entry, unless it ran that stage
        if (const auto old = entries_.find(c.key); old != entries_.end()) {
            e.stage1_top = old->second.stage1_top;
            if (e.staged_top.empty()) e.staged_top = old->second.staged_top;
        }
    e.seconds = seconds_since(c.t0);
    record(e);
}

void Tuner::finish(CaseState& c) {
    try {
        switch (c.key.precision) {
            case Precision::s: finish_typed<float>(c); break;
            case Precision::d: finish_typed<double>(c); break;
            case Precision::c: finish_typed<std::complex<float>>(c); break;
            case Precision::z: finish_typed<std::complex<double>>(c); break;
        }
    } catch (const CudaError&) {
        throw;
    } catch (const std::exception& e) {
        c.note = e.what();
    }
    c.seconds = seconds_since(c.t0);
    close(c, false);
    auto e = entries_.find(c.key);
    if (e == entries_.end()) {
        std::printf("%-34s no entry: %s\n", c.key.text().c_str(), c.note.c_str());
    } else {
        const Entry& en = e->second;
        std::printf("%-34s %9.1f GFLOP/s %9.4f ms  %s  (%d timed, %.1f s)\n", c.key.text().c_str(), en.best.gflops,
                    en.best.ms, short_text(en.best.config, c.key.family, c.key.routine).c_str(), en.candidates,
                    c.seconds);
    }
    std::fflush(stdout);
}

int Tuner::run() {
    load_resume();
    if (!opt_.candidates_from.empty()) {
        known_ = load_table_winners(opt_.candidates_from);
        std::printf("candidates: the winners of %zu entries of %s (and of %d neighbouring sizes each side)\n",
                    known_.size(), opt_.candidates_from.c_str(), opt_.neighbours);
    }
    plan_cases();
    if (!opt_.log.empty()) {
        log_.open(opt_.log, opt_.resume.empty() ? std::ios::trunc : std::ios::app);
        if (!log_) throw Error("cannot open --log " + opt_.log + " for writing");
        log_ << json({{"event", "start"}, {"command", command_}, {"device", gpu_.name}, {"date", utc_now()},
                      {"seed", opt_.seed}, {"batch", opt_.batch}, {"repeat", opt_.repeat}, {"commit", opt_.commit},
                      {"search", opt_.exhaustive ? "exhaustive" : "pruned"}})
                    .dump()
             << '\n';
    }
    if (!opt_.resume.empty()) {
        resume_.open(opt_.resume, std::ios::app);
        if (!resume_) throw Error("cannot open --resume " + opt_.resume + " for appending");
    }
    {  // fail now rather than after the sweep (the table itself is first written after a case)
        const std::string probe = opt_.output + ".tmp";
        std::ofstream out(probe);
        if (!out) throw Error("cannot write next to --output " + opt_.output + " (" + probe + ")");
        out.close();
        std::remove(probe.c_str());
    }
    if (!entries_.empty()) write_output();  // the resumed entries
    std::printf("cases: %zu to tune, %zu taken from --resume; %zu (precision, n) groups\n\n", cases_.size(),
                entries_.size(), groups_.size());
    std::fflush(stdout);

    ctx_ = std::make_unique<Context>(Backend::cuda, opt_.device);
    flush_ = Buffer<std::byte>(*ctx_, std::max<std::size_t>(2 * gpu_.l2_bytes, kRegionAlign));
    pool_ = std::make_unique<CompilePool>(opt_.jobs, opt_.device);
    // Stage 1 of every case that needs no seeds is queued now, in case order, so that the compile
    // threads run ahead of the timing thread from the start.
    for (CaseState& c : cases_) {
        std::vector<CholeskyConfig> seeds;
        bool have = false;
        // --revisit, --candidates-from and sizes between anchors time other candidates than stage 1's
        if (c.resumed_best || c.plan.empty() || c.plan[0] == "known" || c.plan[0] == "split") continue;
        if (seed_source(c.key) && case_index_.count(*seed_source(c.key))) continue;  // waits for its seeds
        seed_ready(c, seeds, have);
        for (const CholeskyConfig& config : stage1_candidates(c.key, c.plan[0], have ? &seeds : nullptr, opt_.exhaustive))
            pool_->submit(request_of(c.key, config), c.index);
    }

    bool budget_hit = false;
    std::size_t first_open = 0;  // cases before it are done or skipped
    for (;;) {
        if (!pool_->error().empty()) throw Error(pool_->error());
        while (first_open < cases_.size() && (cases_[first_open].done || cases_[first_open].skipped)) ++first_open;
        if (first_open == cases_.size()) break;
        if (over_budget() && !budget_hit) {
            budget_hit = true;
            long last_started = -1;
            for (const CaseState& c : cases_)
                if (c.started) last_started = std::max(last_started, c.index);
            pool_->cancel_above(last_started);
            std::printf("\nautotune: --budget-s %.0f reached after %.0f s: no new cases start\n", opt_.budget_s, elapsed());
        }
        const int window_end = cases_[first_open].group + kGroupsAhead;
        for (int gi = cases_[first_open].group; gi < std::min<int>(window_end, int(groups_.size())); ++gi)
            start_group(*groups_[gi]);
        bool ran = false;
        for (std::size_t i = first_open; i < cases_.size() && cases_[i].group < window_end; ++i) {
            CaseState& c = cases_[i];
            if (c.done || c.skipped) continue;
            if (!c.started) {
                if (budget_hit) {
                    close(c, true);
                    continue;
                }
                std::vector<CholeskyConfig> seeds;
                bool have = false;
                if (!seed_ready(c, seeds, have) || !anchors_ready(c)) continue;
                start_case(c);
                if (!c.started) continue;  // a first stage that waits for other cases (start_case)
            }
            if (c.waiting) {
                if (!stage_ready(c)) continue;
                c.waiting = false;
                if (!submit_current(c) && !advance(c)) {
                    finish(c);
                    continue;
                }
                if (c.waiting) continue;
            }
            if (!compiled(c)) continue;
            Group& g = *groups_[c.group];
            if (!ensure_resident(g)) {
                if (g.failed) {
                    c.note = "inputs: " + g.error;
                    close(c, false);
                    std::printf("%-34s no entry: %s\n", c.key.text().c_str(), c.note.c_str());
                }
                continue;
            }
            if (c.pending.empty()) {  // stage 1 had no candidates at all
                if (!advance(c)) finish(c);
            } else {
                run_stage(c);
            }
            ran = true;
            break;  // from the front again: earlier cases first
        }
        if (!ran) {
            if (!budget_hit) queue_fills_ahead();
            const auto t0 = std::chrono::steady_clock::now();
            pool_->wait_for_progress(std::chrono::milliseconds(20));
            waiting_s_ += seconds_since(t0);
        }
    }
    pool_->cancel_above(-1);

    std::vector<std::string> left;
    for (const CaseState& c : cases_)
        if (c.skipped) left.push_back(c.key.text());
    write_output();
    std::printf("\nautotune: %zu entries in %s; %ld candidates timed in %.0f s; %.0f s waiting for compilation or "
                "inputs; %ld kernels compiled (%.0f s of NVRTC on %d threads); %.0f s in all\n",
                entries_.size(), opt_.output.c_str(), timed_, timing_s_, waiting_s_, pool_->compiled(),
                pool_->compile_seconds(), opt_.jobs, elapsed());
    if (!left.empty()) {
        std::printf("autotune: %zu cases left for a later run (--resume):", left.size());
        for (const std::string& s : left) std::printf("\n  %s", s.c_str());
        std::printf("\n");
    }
    int failed = 0;
    for (const CaseState& c : cases_)
        if (c.done && !entries_.count(c.key)) ++failed;
    if (failed > 0) std::printf("autotune: %d cases without an entry (see above)\n", failed);
    if (sanity_failures_ > 0)
        std::printf("autotune: %d winners failed the sanity check (info != 0 or non-finite solutions): a kernel "
                    "bug to report; exit code 2\n", sanity_failures_);
    pool_.reset();  // joins the compile threads (each finishes its current kernel)
    return sanity_failures_ > 0 ? 2 : 0;
}

}  // namespace batchsolve::autotune
