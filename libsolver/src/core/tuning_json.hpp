// The tuning tables' JSON (libsolver/tuning/sm<arch>*.json) read into typed entries, and a
// configuration's fields as plain integers: shared by the library (tuning_table.cpp, which reads
// BATCHSOLVE_TUNING_FILE at run time and the packed tables otherwise) and by the build step that packs
// the committed tables into the library (pack_tuning_tables.cpp), so both read a table the same way.
#pragma once

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::tuning {

// One field of a configuration to and from JSON, by its C++ type; a value of the wrong type or out of
// range throws InvalidArgument naming the field.
inline void read_field(const nlohmann::json& j, const char* field, int& value) {
    // get<int> of a wider integer would wrap silently.
    if (!j.is_number_integer() || j.get<std::int64_t>() < std::numeric_limits<int>::min() ||
        (j.is_number_unsigned() ? j.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<int>::max())
                                : j.get<std::int64_t>() > std::numeric_limits<int>::max()))
        throw InvalidArgument("tuning table", field, "an integer within int's range");
    value = j.get<int>();
}
inline void read_field(const nlohmann::json& j, const char* field, bool& value) {
    if (!j.is_boolean()) throw InvalidArgument("tuning table", field, "true or false");
    value = j.get<bool>();
}
inline void read_field(const nlohmann::json& j, const char* field, Looking& value) {
    if (!j.is_string()) throw InvalidArgument("tuning table", field, "a string");
    value = parse_looking(j.get<std::string>());
}
inline nlohmann::ordered_json field_json(int value) { return value; }
inline nlohmann::ordered_json field_json(bool value) { return value; }
inline nlohmann::ordered_json field_json(Looking value) { return to_string(value); }

// Fields left out keep their defaults (older tables lack the newer fields).
inline CholeskyConfig config_from_json(const nlohmann::json& j) {
    CholeskyConfig c;
#define BATCHSOLVE_READ_FIELD(field) \
    if (const auto it = j.find(#field); it != j.end()) read_field(*it, #field, c.field);
    BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_READ_FIELD)
#undef BATCHSOLVE_READ_FIELD
    return c;
}

// A configuration as integers in BATCHSOLVE_CHOLESKY_CONFIG_FIELDS order (bool 0/1, Looking its
// enumerator's value), and back: the packed tables' form.
inline int field_int(int v) { return v; }
inline int field_int(bool v) { return v ? 1 : 0; }
inline int field_int(Looking v) { return static_cast<int>(v); }
inline void set_field(int v, int& f) { f = v; }
inline void set_field(int v, bool& f) { f = v != 0; }
inline void set_field(int v, Looking& f) { f = static_cast<Looking>(v); }
#define BATCHSOLVE_COUNT_FIELD(field) +1
inline constexpr int kConfigFieldCount = 0 BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_COUNT_FIELD);
#undef BATCHSOLVE_COUNT_FIELD
inline void config_to_ints(const CholeskyConfig& c, int* out) {
    int i = 0;
#define BATCHSOLVE_FIELD_TO_INT(field) out[i++] = field_int(c.field);
    BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_FIELD_TO_INT)
#undef BATCHSOLVE_FIELD_TO_INT
}
inline CholeskyConfig config_from_ints(const int* in) {
    CholeskyConfig c;
    int i = 0;
#define BATCHSOLVE_FIELD_FROM_INT(field) set_field(in[i++], c.field);
    BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_FIELD_FROM_INT)
#undef BATCHSOLVE_FIELD_FROM_INT
    return c;
}

// A table as its file says: provenance (device, CUDA, date, commit, batch) and every entry's case and
// winning configuration. The evidence (runner-up, timings) is not read.
struct TableEntry {
    std::string routine, precision, layout;  // "potrf", "s", "column_major" | "interleaved" | "chunked"
    int n = 0;
    CholeskyConfig config;
};
struct ParsedTable {
    std::string description;  // "<origin>: <device>, CUDA <version>, <date>, commit <c>, batch <b>"
    int arch_number = 0;      // the table's own "arch_number" (0: not recorded)
    int batch = 0;            // matrices per batch it was tuned at (0: not recorded)
    std::vector<TableEntry> entries;
};

// Throws Error naming `origin` (and the entry, and the field where one is at fault) when the text is
// not a JSON object, or a member is missing or of the wrong type or range; the JSON library's own
// exceptions never escape (they did: found by data/fuzz/fuzz_tuning_json).
inline ParsedTable parse_table_json(const std::string& text, const std::string& origin) {
    ParsedTable t;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) throw Error("tuning table " + origin + ": not a JSON object");
    std::string where = "header";
    try {
        int value = 0;
        if (j.contains("batch")) read_field(j["batch"], "batch", value), t.batch = value;
        if (j.contains("arch_number")) read_field(j["arch_number"], "arch_number", value), t.arch_number = value;
        std::ostringstream d;
        d << origin << ": " << j.value("device", std::string("?")) << ", CUDA " << j.value("cuda_version", std::string("?"))
          << ", " << j.value("date", std::string("?")) << ", commit " << j.value("commit", std::string("?")) << ", batch "
          << (t.batch > 0 ? std::to_string(t.batch) : std::string("?"));
        t.description = d.str();
        const nlohmann::json entries = j.value("entries", nlohmann::json::array());
        if (!entries.is_array()) throw Error("tuning table " + origin + ": 'entries' is not an array");
        for (std::size_t k = 0; k < entries.size(); ++k) {
            where = "entry " + std::to_string(k);
            const nlohmann::json& e = entries[k];
            TableEntry entry;
            entry.routine = e.at("routine").get<std::string>();
            entry.precision = e.at("precision").get<std::string>();
            entry.layout = e.at("layout").get<std::string>();
            read_field(e.at("n"), "n", entry.n);
            entry.config = config_from_json(e.at("best").at("config"));
            t.entries.push_back(std::move(entry));
        }
    } catch (const nlohmann::json::exception& x) {
        throw Error("tuning table " + origin + ": " + where + ": " + x.what());
    } catch (const InvalidArgument& x) {  // a configuration field: named, now with the file and entry
        throw Error("tuning table " + origin + ": " + where + ": " + x.what());
    }
    return t;
}

}  // namespace batchsolve::tuning
