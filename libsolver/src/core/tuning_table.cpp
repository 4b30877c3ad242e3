// Loads the tuning tables once (packed into the library at build time, or BATCHSOLVE_TUNING_FILE's JSON
// read at run time) and answers lookups.
#include "tuning_table.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "tuning_json.hpp"
#include "packed_tuning_tables.hpp"  // generated at build time from libsolver/tuning/*.json (after tuning_json.hpp)

namespace batchsolve::tuning {

namespace {

// Every library call looks a case up (about 1 us with a map keyed by strings, a tenth of a small
// call), so a case is one integer: the indexes of its routine and layout family among the names the
// tables use, its precision letter and n. The names are registered while the tables load (once);
// lookups only read them.
using Key = std::uint64_t;

std::vector<std::string>& registered_names() {
    static std::vector<std::string> names;
    return names;
}
// Index of `name`, registered if new (loading only).
std::uint64_t register_name(const std::string& name) {
    auto& names = registered_names();
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return i;
    names.push_back(name);
    return names.size() - 1;
}
// Index of `name`, or nothing when no table uses it (lookups).
std::optional<std::uint64_t> name_index(std::string_view name) {
    const auto& names = registered_names();
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return i;
    return std::nullopt;
}
Key make_key(std::uint64_t routine, char precision, std::uint64_t family, int n) {
    return routine << 48 | family << 40 | std::uint64_t(static_cast<unsigned char>(precision)) << 32 |
           std::uint64_t(static_cast<std::uint32_t>(n));
}

struct Table {
    std::string description;
    int arch_number = 0;  // the table's own "arch_number" (0: not recorded)
    int batch = 0;        // matrices per batch it was tuned at (0: not recorded)
    std::unordered_map<Key, CholeskyConfig> entries;
};

// A table as the lookups index it: each case one integer key.
Table index_table(const ParsedTable& parsed) {
    Table t;
    t.description = parsed.description;
    t.arch_number = parsed.arch_number;
    t.batch = parsed.batch;
    t.entries.reserve(parsed.entries.size());
    for (const TableEntry& e : parsed.entries)
        t.entries[make_key(register_name(e.routine), e.precision.empty() ? '?' : e.precision[0], register_name(e.layout),
                           e.n)] = e.config;
    return t;
}

// A packed table (built into the library, see pack_tuning_tables.cpp): no JSON to parse at run time,
// so the first lookup of a process costs about a millisecond instead of parsing 1.8 MB of JSON
// (0.24 s on the 2-core CI machine).
Table index_packed_table(const PackedTable& packed) {
    Table t;
    t.description = packed.description;
    t.arch_number = packed.arch_number;
    t.batch = packed.batch;
    t.entries.reserve(std::size_t(packed.count));
    for (int i = 0; i < packed.count; ++i) {
        const PackedEntry& e = packed.entries[i];
        t.entries[make_key(register_name(e.routine), e.precision, register_name(e.layout), e.n)] =
            config_from_ints(e.fields);
    }
    return t;
}

// arch -> its tables (one per tuning batch size), loaded on first use. Override files replace every
// embedded table.
const std::map<int, std::vector<Table>>& tables() {
    static std::map<int, std::vector<Table>> all;
    static std::once_flag once;
    std::call_once(once, [] {
        if (const char* list = std::getenv("BATCHSOLVE_TUNING_FILE"); list != nullptr && *list != '\0') {
            std::stringstream paths(list);
            for (std::string path; std::getline(paths, path, ':');) {
                if (path.empty()) continue;
                std::ifstream in(path);
                if (!in) throw Error("BATCHSOLVE_TUNING_FILE: cannot read " + path);
                std::stringstream s;
                s << in.rdbuf();
                Table t = index_table(parse_table_json(s.str(), path));
                all[t.arch_number].push_back(std::move(t));
            }
            return;
        }
        for (const PackedTable& packed : packed_tuning_tables()) all[packed.arch].push_back(index_packed_table(packed));
    });
    return all;
}

}  // namespace

namespace {

std::string_view family_name(LayoutKind layout) {
    switch (layout) {
        case LayoutKind::column_major:
        case LayoutKind::pointer_array: return "column_major";
        case LayoutKind::interleaved: return "interleaved";
        case LayoutKind::chunked_interleaved: return "chunked";
    }
    return "?";
}

}  // namespace

std::string layout_family(LayoutKind layout) { return std::string(family_name(layout)); }

namespace {

// How far a table tuned at `batch` is from a call of `count` matrices: the ratio, in log scale; an
// unrecorded batch (0) ranks last.
double batch_distance(int batch, int count) {
    return batch > 0 ? std::fabs(std::log(double(std::max(count, 1))) - std::log(double(batch))) : 1e300;
}

}  // namespace

int nearest_batch(const std::vector<int>& batches, int count) {
    int best = -1;
    for (std::size_t i = 0; i < batches.size(); ++i)  // ties go to the earlier table
        if (best < 0 || batch_distance(batches[i], count) < batch_distance(batches[std::size_t(best)], count))
            best = int(i);
    return best;
}

std::optional<CholeskyConfig> lookup(std::string_view routine, Precision precision, LayoutKind layout, int n,
                                     int arch, int count) {
    const auto& all = tables();
    const auto found = all.find(arch);
    if (found == all.end()) return std::nullopt;
    const auto routine_index = name_index(routine);
    const auto family_index = name_index(family_name(layout));
    if (!routine_index || !family_index) return std::nullopt;
    const Key key = make_key(*routine_index, precision_letter(precision), *family_index, n);
    // Among the tables that have the case, the one tuned nearest to this batch size (as nearest_batch;
    // every call of the library comes here, so no list is built).
    const CholeskyConfig* best = nullptr;
    double best_distance = 0;
    const std::vector<Table>& candidates = found->second;
    for (const Table& t : candidates)
        if (const auto e = t.entries.find(key); e != t.entries.end()) {
            if (candidates.size() == 1) return e->second;  // one table: no distance to compare
            const double d = batch_distance(t.batch, count);
            if (best == nullptr || d < best_distance) best = &e->second, best_distance = d;
        }
    if (best == nullptr) return std::nullopt;
    return *best;
}

std::string table_description(int arch) {
    const auto& all = tables();
    const auto found = all.find(arch);
    if (found == all.end()) return std::string();
    std::string text;
    for (const Table& t : found->second) text += (text.empty() ? "" : "; ") + t.description;
    return text;
}

}  // namespace batchsolve::tuning

namespace batchsolve {

std::string to_string(const CholeskyConfig& c) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
#define BATCHSOLVE_WRITE_FIELD(field) j[#field] = tuning::field_json(c.field);
    BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_WRITE_FIELD)
#undef BATCHSOLVE_WRITE_FIELD
    return j.dump();
}

CholeskyConfig parse_config(const std::string& json_object) {
    const nlohmann::json j = nlohmann::json::parse(json_object, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InvalidArgument("parse_config", "json_object", "a JSON object");
    return tuning::config_from_json(j);
}

}  // namespace batchsolve
