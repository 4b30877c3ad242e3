// Scheduling of the autotuner's cases: the Tuner plans every (routine, precision, family, n) case,
// keeps the compile pool ahead of the timing thread, runs each case's stages as their kernels and
// inputs become ready, and records the winners.
#pragma once

#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "compile_pool.hpp"
#include "measure.hpp"
#include "stages.hpp"
#include "table_io.hpp"

namespace batchsolve::autotune {

struct CaseState {
    CaseKey key;
    int group = 0;
    long index = 0;  // global order: priority of its compilations
    std::vector<std::string> plan;
    int stage = -1;
    std::vector<Measured> pending;  // candidates of the current stage
    std::vector<std::shared_ptr<CompileJob>> jobs;
    std::vector<Measured> results;  // every candidate tried
    std::vector<CholeskyConfig> stage1_top;
    std::vector<CholeskyConfig> staged_top;  // the best staged shapes (scalar update), fastest first
    bool waiting = false;                    // the stage c.stage waits for another case (stage_ready)
    std::vector<CaseKey> anchors;            // a size between anchors: the cases it takes its candidates from
    bool queued_ahead = false;               // ... whose kernels were queued before it started (queue_fills_ahead)
    std::optional<CholeskyConfig> resumed_best;  // --revisit: the winner of the resumed entry, timed again
    bool stage1_done = false, started = false, done = false, skipped = false;
    std::string note;
    std::chrono::steady_clock::time_point t0;
    double seconds = 0;
};

class Tuner {
public:
    Tuner(const Options& opt, const validation::GpuProperties& gpu, const std::string& command)
        : opt_(opt), gpu_(gpu), command_(command) {}

    int run();

private:
    void load_resume();
    void plan_cases();
    void start_group(Group& g);
    bool ensure_resident(Group& g);
    void close(CaseState& c, bool skipped);
    bool seed_ready(const CaseState& c, std::vector<CholeskyConfig>& seeds, bool& have) const;
    void start_case(CaseState& c);
    void begin(CaseState& c, const std::vector<CholeskyConfig>& first_stage);
    CompileRequest request_of(const CaseKey& k, const CholeskyConfig& config) const;
    void submit_stage(CaseState& c, const std::vector<CholeskyConfig>& configs);
    void queue_fills_ahead();
    bool advance(CaseState& c);  // moves to the next non-empty stage; false when none is left
    bool stage_ready(const CaseState& c) const;
    bool submit_current(CaseState& c);
    std::optional<CaseKey> staged_seed_source(const CaseState& c) const;
    bool settled(const CaseKey& k) const;
    bool split_ready(const CaseKey& k) const;
    bool anchors_ready(const CaseState& c) const;
    std::vector<CholeskyConfig> anchor_candidates(const CaseState& c) const;
    std::vector<CholeskyConfig> through_candidates(const CaseKey& k) const;
    std::vector<CholeskyConfig> split_candidates(const CaseKey& k) const;
    bool compiled(const CaseState& c) const;
    void run_stage(CaseState& c);
    template <class T>
    void run_stage_typed(CaseState& c);
    template <class T>
    void finish_typed(CaseState& c);
    void finish(CaseState& c);
    void log_candidate(const CaseState& c, const Measured& m);
    void record(const Entry& e);
    void write_output();
    double elapsed() const { return seconds_since(t0_); }
    bool over_budget() const { return opt_.budget_s > 0 && elapsed() > opt_.budget_s; }

    const Options& opt_;
    validation::GpuProperties gpu_;
    std::string command_;
    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
    std::unique_ptr<Context> ctx_;
    std::unique_ptr<CompilePool> pool_;
    Workspace workspace_;
    Buffer<std::byte> flush_;
    std::vector<std::unique_ptr<Group>> groups_;
    std::vector<CaseState> cases_;
    std::map<CaseKey, long> case_index_;
    std::map<CaseKey, Entry> entries_;  // finished: resumed or tuned now
    std::map<CaseKey, std::vector<CholeskyConfig>> resumed_seeds_;
    std::map<CaseKey, std::vector<CholeskyConfig>> known_;  // --candidates-from
    std::ofstream log_, resume_;
    double timing_s_ = 0, waiting_s_ = 0;
    long timed_ = 0;
    int sanity_failures_ = 0;
};

}  // namespace batchsolve::autotune
