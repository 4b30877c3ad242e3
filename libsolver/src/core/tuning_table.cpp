// Loads the tuning tables once (packed into the library at build time, or BATCHSOLVE_TUNING_FILE's JSON
// read at run time) and answers lookups.
#include "tuning_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "backends.hpp"
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

// An entry of a family with size classes: its configuration packed, its n and its note.
struct Stored {
    Fields fields;
    int n = 0;
    std::string provenance;
};

// One family's entries of one file (a file holding several families is indexed as one Table each).
struct Table {
    Family family = Family::cholesky;
    std::string description;
    int arch_number = 0;  // the table's own "arch_number" (0: not recorded)
    int batch = 0;        // matrices per batch it was tuned at (0: not recorded)
    std::unordered_map<Key, CholeskyConfig> entries;  // small Cholesky: exact n
    std::map<Key, Stored> classes;                    // the other families: ordered by n within a case
};

void add_entry(Table& t, const std::string& routine, char precision, const std::string& layout, int n, Family family,
               const Fields& fields, const std::string& provenance) {
    const Key key = make_key(register_name(routine), precision, register_name(layout), n);
    if (family == Family::cholesky)
        t.entries[key] = config_from_ints(fields.v);
    else
        t.classes[key] = Stored{fields, n, provenance};
}

// A table as the lookups index it: each case one integer key; one Table per family the file holds.
std::vector<Table> index_table(const ParsedTable& parsed) {
    std::vector<Table> tables;
    for (const Family f : kFamilies) {
        Table t;
        t.family = f;
        t.description = parsed.description;
        t.arch_number = parsed.arch_number;
        t.batch = parsed.batch;
        for (const TableEntry& e : parsed.entries)
            if (e.family == f) add_entry(t, e.routine, e.precision[0], e.layout, e.n, f, e.fields, e.provenance);
        if (!t.entries.empty() || !t.classes.empty()) tables.push_back(std::move(t));
    }
    return tables;
}

// A packed table (built into the library, see pack_tuning_tables.cpp): no JSON to parse at run time,
// so the first lookup of a process costs about a millisecond instead of parsing 1.8 MB of JSON
// (0.24 s on the 2-core CI machine).
Table index_packed_table(const PackedTable& packed) {
    Table t;
    t.family = static_cast<Family>(packed.family);
    t.description = packed.description;
    t.arch_number = packed.arch_number;
    t.batch = packed.batch;
    if (t.family == Family::cholesky) t.entries.reserve(std::size_t(packed.count));
    for (int i = 0; i < packed.count; ++i) {
        const PackedEntry& e = packed.entries[i];
        Fields fields;
        for (int f = 0; f < kMaxFieldCount; ++f) fields.v[f] = e.fields[f];
        add_entry(t, e.routine, e.precision, e.layout, e.n, t.family, fields, e.provenance);
    }
    return t;
}

// arch -> its tables (small Cholesky: one per tuning batch size; one per other family), loaded on
// first use. Override files replace, for each family they hold entries of, every embedded table of
// that family (a GEMM table alone leaves the Cholesky tables embedded).
const std::map<int, std::vector<Table>>& tables() {
    static std::map<int, std::vector<Table>> all;
    static std::once_flag once;
    std::call_once(once, [] {
        bool overridden[std::size(kFamilies)] = {};
        if (const char* list = std::getenv("BATCHSOLVE_TUNING_FILE"); list != nullptr && *list != '\0') {
            std::stringstream paths(list);
            for (std::string path; std::getline(paths, path, ':');) {
                if (path.empty()) continue;
                std::ifstream in(path);
                if (!in) throw Error("BATCHSOLVE_TUNING_FILE: cannot read " + path);
                std::stringstream s;
                s << in.rdbuf();
                for (Table& t : index_table(parse_table_json(s.str(), path))) {
                    overridden[static_cast<int>(t.family)] = true;
                    const int arch = t.family == Family::cpu ? kCpuArch : t.arch_number;  // the CPU's entries
                    all[arch].push_back(std::move(t));
                }
            }
        }
        for (const PackedTable& packed : packed_tuning_tables())
            if (!overridden[packed.family]) all[packed.arch].push_back(index_packed_table(packed));
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
        if (t.family != Family::cholesky) continue;
        else if (const auto e = t.entries.find(key); e != t.entries.end()) {
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
    for (const Table& t : found->second)
        if (t.family == Family::cholesky) text += (text.empty() ? "" : "; ") + t.description;
    return text;
}

int context_arch(Context& ctx) {
    return ctx.backend() == Backend::cuda ? cuda_backend::compute_capability(ctx) : kCpuArch;
}

namespace {

// The layout key of the families other than small Cholesky: their routines take column-major
// matrices (the CPU's vector path: any layout).
const char* class_layout(Family f) { return f == Family::cpu ? "any" : "column_major"; }

// A family with size classes: the entry of (routine, precision) with the smallest n >= size, else
// the largest n; the first table of `arch` that has the case answers (one table per family ships).
// `table` (optional) receives that table's description.
const Stored* find_class(Family family, std::string_view routine, Precision precision, int size, int arch,
                         std::string* table = nullptr) {
    const auto& all = tables();
    const auto found = all.find(arch);
    if (found == all.end()) return nullptr;
    const auto routine_index = name_index(routine);
    const auto layout_index = name_index(class_layout(family));
    if (!routine_index || !layout_index) return nullptr;
    const char p = precision_letter(precision);
    const Key first = make_key(*routine_index, p, *layout_index, 0);
    const Key last = make_key(*routine_index, p, *layout_index, std::numeric_limits<int>::max());
    for (const Table& t : found->second) {
        if (t.family != family) continue;
        auto it = t.classes.lower_bound(make_key(*routine_index, p, *layout_index, std::max(size, 0)));
        if (it == t.classes.end() || it->first > last) {  // above every class: the largest
            if (it == t.classes.begin()) continue;
            --it;
            if (it->first < first) continue;
        }
        if (table) *table = t.description;
        return &it->second;
    }
    return nullptr;
}

}  // namespace

std::optional<GemmConfig> lookup_gemm(Precision precision, bool triangle, int size, int arch) {
    const Stored* s = triangle ? find_class(Family::gemm, "gemm_vbatched_triangle", precision, size, arch) : nullptr;
    if (!s) s = find_class(Family::gemm, "gemm_vbatched", precision, size, arch);
    if (!s) return std::nullopt;
    return gemm_from_fields(s->fields);
}

std::optional<LargeTuning> lookup_large(Precision precision, int n, int arch) {
    const Stored* s = find_class(Family::large, "potrf_large", precision, n, arch);
    if (!s) return std::nullopt;
    return large_from_fields(s->fields);
}

LargeTuning large_tuning(Precision precision, int n, int arch) {
    return lookup_large(precision, n, arch).value_or(LargeTuning{});
}

std::optional<LdltBlocking> lookup_ldlt(Precision precision, int n, int arch) {
    const Stored* s = find_class(Family::ldlt, "sytrf_nopiv", precision, n, arch);
    if (!s) return std::nullopt;
    return ldlt_from_fields(s->fields);
}

std::optional<TrsmCrossover> lookup_trsm(Precision precision, int order, int arch) {
    const Stored* s = find_class(Family::trsm, "trsm_vbatched", precision, order, arch);
    if (!s) return std::nullopt;
    return trsm_from_fields(s->fields);
}

MixedTuning mixed_tuning(Precision precision, int n, int arch) {
    const Stored* s = find_class(Family::mixed, "posv_mixed", precision, n, arch);
    return s ? mixed_from_fields(s->fields) : MixedTuning{};
}

std::optional<CpuSwitchOver> lookup_cpu(Precision precision) {
    const Stored* s = find_class(Family::cpu, "cpu_vector_path", precision, 0, kCpuArch);
    if (!s) return std::nullopt;
    return cpu_from_fields(s->fields);
}

}  // namespace batchsolve::tuning

namespace batchsolve {

TunedEntry tuned_config(const std::string& routine, Precision precision, LayoutKind layout, int n, int arch,
                        int count) {
    using namespace tuning;
    Family family{};
    if (!family_of(routine, family))
        throw InvalidArgument("tuned_config", "routine", std::string("one of ") + kKnownRoutines + " (got '" + routine + "')");
    TunedEntry out;
    out.family = to_string(family);
    if (family == Family::cholesky) {
        out.n = n;
        const auto c = lookup(routine, precision, layout, n, arch, count);
        out.found = c.has_value();
        out.config = to_string(c.value_or(CholeskyConfig{}));
        if (out.found) out.table = table_description(arch);
        return out;
    }
    std::string table;
    const bool triangle = routine == "gemm_vbatched_triangle";
    const Stored* s = find_class(family, routine, precision, n, family == Family::cpu ? kCpuArch : arch, &table);
    if (!s && triangle) s = find_class(family, "gemm_vbatched", precision, n, arch, &table);
    if (s) {
        out.found = true;
        out.n = s->n;
        out.table = table;
        out.provenance = s->provenance;
        out.config = fields_to_json(family, s->fields);
        return out;
    }
    switch (family) {  // the safe defaults
        case Family::gemm: out.config = fields_to_json(family, gemm_to_fields(GemmConfig{})); break;
        case Family::large: out.config = fields_to_json(family, large_to_fields(LargeTuning{})); break;
        case Family::ldlt: out.config = fields_to_json(family, ldlt_to_fields(LdltBlocking{})); break;
        case Family::trsm: out.config = fields_to_json(family, trsm_to_fields(TrsmCrossover{})); break;
        case Family::cpu: out.config = fields_to_json(family, cpu_to_fields(CpuSwitchOver{})); break;
        case Family::mixed: out.config = fields_to_json(family, mixed_to_fields(MixedTuning{})); break;
        case Family::cholesky: break;
    }
    return out;
}

GemmConfig default_gemm_config(Precision p, int max_m, int max_n, int /*max_k*/, bool triangle, int arch) {
    return tuning::lookup_gemm(p, triangle, std::max(max_m, max_n), arch).value_or(GemmConfig{});
}

LdltBlocking tuned_ldlt_blocking(Precision precision, int n, int arch) {
    return tuning::lookup_ldlt(precision, n, arch).value_or(LdltBlocking{});
}
TrsmCrossover tuned_trsm_crossover(Precision precision, int order, int arch) {
    return tuning::lookup_trsm(precision, order, arch).value_or(TrsmCrossover{});
}
CpuSwitchOver tuned_cpu_switch_over(Precision precision) {
    return tuning::lookup_cpu(precision).value_or(CpuSwitchOver{});
}

std::string tuning_tables_in_use() {
    std::string text;
    for (const auto& [arch, list] : tuning::tables())
        for (const auto& t : list) text += std::string(tuning::to_string(t.family)) + ": " + t.description + "\n";
    return text;
}

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
