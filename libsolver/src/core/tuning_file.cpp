// tuning_file.hpp: the library's own tuning-table reader (tuning_json.hpp) behind a public entry point.
#include "batchsolve/tuning_file.hpp"

#include <fstream>
#include <sstream>

#include "batchsolve/tuning.hpp"
#include "tuning_json.hpp"

namespace batchsolve {

namespace {

std::string config_text(const tuning::TableEntry& e) {
    switch (e.family) {
        case tuning::Family::cholesky: return to_string(e.config);
        case tuning::Family::gemm: return tuning::gemm_to_json(tuning::gemm_from_fields(e.fields));
        case tuning::Family::large: return tuning::large_to_json(tuning::large_from_fields(e.fields));
        case tuning::Family::ldlt: return tuning::ldlt_to_json(tuning::ldlt_from_fields(e.fields));
        case tuning::Family::trsm: return tuning::trsm_to_json(tuning::trsm_from_fields(e.fields));
        case tuning::Family::cpu: return tuning::cpu_to_json(tuning::cpu_from_fields(e.fields));
        case tuning::Family::mixed: return tuning::mixed_to_json(tuning::mixed_from_fields(e.fields));
    }
    return "";
}

}  // namespace

TuningFileContents parse_tuning_file(const std::string& text, const std::string& origin) {
    const tuning::ParsedTable table = tuning::parse_table_json(text, origin);
    TuningFileContents out;
    out.description = table.description;
    out.arch_number = table.arch_number;
    out.batch = table.batch;
    for (const tuning::TableEntry& e : table.entries)
        out.entries.push_back({tuning::to_string(e.family), e.routine, e.precision, e.layout, e.n, config_text(e), e.provenance});
    return out;
}

TuningFileContents read_tuning_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw Error("tuning table " + path + ": cannot read");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_tuning_file(text.str(), path);
}

}  // namespace batchsolve
