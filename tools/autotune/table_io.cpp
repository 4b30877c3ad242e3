// The autotuner's table I/O (table_io.hpp), and the Tuner's reading of --resume and writing of the
// table and the --resume file.
#include "table_io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "tuner.hpp"

namespace batchsolve::autotune {

json config_json(const CholeskyConfig& c) { return json::parse(to_string(c)); }

CholeskyConfig config_from_json(const json& j) { return parse_config(j.dump()); }

std::vector<CholeskyConfig> winners_of(const Entry& e) {
    std::vector<CholeskyConfig> out = {e.best.config};
    if (e.runner_up) out.push_back(e.runner_up->config);
    return out;
}

json winner_json(const Winner& w) { return {{"config", config_json(w.config)}, {"gflops", w.gflops}, {"ms", w.ms}}; }

json entry_json(const Entry& e) {
    json j = {{"routine", to_string(e.key.routine)},
              {"precision", std::string(1, precision_letter(e.key.precision))},
              {"layout", to_string(e.key.family)},
              {"n", e.key.n},
              {"best", winner_json(e.best)},
              {"runner_up", e.runner_up ? winner_json(*e.runner_up) : json(nullptr)},
              {"candidates", e.candidates}};
    return j;
}

// ---- --candidates-from: the winners of another table as the only candidates ---------------------

// The winners (best, then runner-up) of every entry of a tuning table, by case. A table tuned at one
// batch size seeds a table for another (the search space is pruned to what won), and a table's
// neighbouring sizes seed the sizes it lacks.
std::map<CaseKey, std::vector<CholeskyConfig>> load_table_winners(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw Error("--candidates-from: cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    const json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("entries") || !j.at("entries").is_array())
        throw Error("--candidates-from " + path + ": not a tuning table (a JSON object with an \"entries\" array)");
    std::map<CaseKey, std::vector<CholeskyConfig>> out;
    int index = 0;
    for (const json& e : j.at("entries")) {
        try {
            CaseKey k;
            k.routine = parse_routine(e.at("routine").get<std::string>());
            k.precision = parse_precision(e.at("precision").get<std::string>());
            k.family = parse_family(e.at("layout").get<std::string>());
            k.n = e.at("n").get<int>();
            std::vector<CholeskyConfig>& list = out[k];
            list.push_back(config_from_json(e.at("best").at("config")));
            if (e.contains("runner_up") && !e.at("runner_up").is_null())
                list.push_back(config_from_json(e.at("runner_up").at("config")));
        } catch (const std::exception& x) {
            throw Error("--candidates-from " + path + ": entry " + std::to_string(index) + ": " + x.what());
        }
        ++index;
    }
    return out;
}

// Candidates of a case under --candidates-from: the table's winners at n, then those of the
// `neighbours` nearest tuned sizes below and above n (same routine, precision and family), nearest
// first, without duplicates. A neighbour's configuration that does not fit n (an nb above n, say)
// is refused by the compile step and dropped with a note, like any unsupported candidate.
std::vector<CholeskyConfig> known_candidates(const CaseKey& k, const std::map<CaseKey, std::vector<CholeskyConfig>>& known,
                                             int neighbours) {
    std::vector<CholeskyConfig> out;
    std::set<std::string> seen;
    auto add = [&](const CaseKey& at) {
        const auto it = known.find(at);
        if (it == known.end()) return false;
        for (const CholeskyConfig& c : it->second)
            if (seen.insert(to_string(c)).second) out.push_back(c);
        return true;
    };
    add(k);
    int below = 0, above = 0;
    for (int d = 1; d < 1024 && (below < neighbours || above < neighbours); ++d) {
        CaseKey lo = k, hi = k;
        lo.n = k.n - d, hi.n = k.n + d;
        if (below < neighbours && lo.n >= 1 && add(lo)) ++below;
        if (above < neighbours && add(hi)) ++above;
    }
    return out;
}

void Tuner::load_resume() {
    if (opt_.resume.empty()) return;
    std::ifstream in(opt_.resume);
    if (!in) return;  // a first run: the file is created below
    int line_no = 0, used = 0;
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            const json j = json::parse(line);
            if (j.value("batch", opt_.batch) != opt_.batch || j.value("device", gpu_.name) != gpu_.name) {
                std::cerr << "autotune: --resume " << opt_.resume << " line " << line_no
                          << ": another batch size or GPU; ignored\n";
                continue;
            }
            Entry e;
            e.key.routine = parse_routine(j.at("routine").get<std::string>());
            e.key.precision = parse_precision(j.at("precision").get<std::string>());
            e.key.family = parse_family(j.at("layout").get<std::string>());
            e.key.n = j.at("n").get<int>();
            e.best.config = config_from_json(j.at("best").at("config"));
            e.best.ms = j.at("best").at("ms").get<double>();
            e.best.gflops = j.at("best").at("gflops").get<double>();
            if (j.contains("runner_up") && !j.at("runner_up").is_null()) {
                Winner w;
                w.config = config_from_json(j.at("runner_up").at("config"));
                w.ms = j.at("runner_up").at("ms").get<double>();
                w.gflops = j.at("runner_up").at("gflops").get<double>();
                e.runner_up = w;
            }
            e.candidates = j.value("candidates", 0);
            for (const json& s : j.value("stage1_top", json::array())) e.stage1_top.push_back(config_from_json(s));
            for (const json& s : j.value("staged_top", json::array())) e.staged_top.push_back(config_from_json(s));
            e.seconds = j.value("seconds", 0.0);
            resumed_seeds_[e.key] = e.stage1_top;
            entries_[e.key] = e;
            ++used;
        } catch (const std::exception& e) {  // e.g. the last line of a killed run, cut short
            std::cerr << "autotune: --resume " << opt_.resume << " line " << line_no << " skipped: " << e.what() << "\n";
        }
    }
    std::printf("resume: %d finished cases read from %s\n", used, opt_.resume.c_str());
}

void Tuner::record(const Entry& e) {
    entries_[e.key] = e;
    if (resume_.is_open()) {
        json j = entry_json(e);
        j["batch"] = opt_.batch;
        j["device"] = gpu_.name;
        j["seconds"] = e.seconds;
        json top = json::array();
        for (const CholeskyConfig& s : e.stage1_top) top.push_back(config_json(s));
        j["stage1_top"] = top;
        if (!e.staged_top.empty()) {
            json staged = json::array();
            for (const CholeskyConfig& s : e.staged_top) staged.push_back(config_json(s));
            j["staged_top"] = staged;
        }
        resume_ << j.dump() << '\n';
        resume_.flush();
    }
    write_output();
}

// The table, written whole after every case (through a temporary file, so that a killed run leaves
// the last complete one).
void Tuner::write_output() {
    json entries = json::array();
    for (const auto& [key, e] : entries_) entries.push_back(entry_json(e));  // sorted by the key
    const json doc = {{"arch", "sm_" + std::to_string(gpu_.cc_major) + std::to_string(gpu_.cc_minor)},
                      {"arch_number", gpu_.cc_major * 10 + gpu_.cc_minor},
                      {"device", gpu_.name},
                      {"cuda_version", cuda_version_text(gpu_.runtime_version)},
                      {"date", utc_now()},
                      {"commit", opt_.commit},
                      {"batch", opt_.batch},
                      {"entries", entries}};
    const std::string tmp = opt_.output + ".tmp";
    {
        std::ofstream out(tmp);
        out << doc.dump(1) << '\n';
        if (!out) throw Error("cannot write --output " + tmp);
    }
    if (std::rename(tmp.c_str(), opt_.output.c_str()) != 0)
        throw Error("cannot rename " + tmp + " to --output " + opt_.output + ": " + std::strerror(errno));
}

}  // namespace batchsolve::autotune
