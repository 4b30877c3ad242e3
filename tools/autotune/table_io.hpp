// The autotuner's table I/O: entries as written to the tuning table and the --resume file, and the
// winners of an existing table (--candidates-from). The configuration's own fields are serialised by
// the library (to_string / parse_config of CholeskyConfig).
#pragma once

#include <map>
#include <optional>

#include "common.hpp"

namespace batchsolve::autotune {

struct Winner {
    CholeskyConfig config;
    double ms = 0, gflops = 0;
};

// A finished case, as written to the table and to the --resume file.
struct Entry {
    CaseKey key;
    Winner best;
    std::optional<Winner> runner_up;
    int candidates = 0;
    std::vector<CholeskyConfig> stage1_top;  // seeds for posv / chunked after a resume
    std::vector<CholeskyConfig> staged_top;  // column-major potrf: seeds of posv's staged stage
    double seconds = 0;
};

// An entry's winner and runner-up (if any), fastest first.
std::vector<CholeskyConfig> winners_of(const Entry& e);
json config_json(const CholeskyConfig& c);
CholeskyConfig config_from_json(const json& j);
json winner_json(const Winner& w);
json entry_json(const Entry& e);

// The winners (best, then runner-up) of every entry of a tuning table, by case.
std::map<CaseKey, std::vector<CholeskyConfig>> load_table_winners(const std::string& path);
// Candidates of a case under --candidates-from: the table's winners at n, then those of the
// `neighbours` nearest tuned sizes below and above n, nearest first, without duplicates.
std::vector<CholeskyConfig> known_candidates(const CaseKey& k, const std::map<CaseKey, std::vector<CholeskyConfig>>& known,
                                             int neighbours);

}  // namespace batchsolve::autotune
