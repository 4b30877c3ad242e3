// Build step of libbatchsolve: reads the committed tuning tables (libsolver/tuning/sm<arch>*.json and
// cpu.json, every family) with the library's own reader (tuning_json.hpp) and writes them as C++ data
// (packed_tuning_tables.hpp: each entry's case and its configuration as integers), so that the library
// parses no JSON at run time. The evidence the tables keep (runner-up, timings) stays in the files.
// A file holding entries of several families becomes one packed table per family.
//   batchsolve_pack_tuning_tables OUTPUT.hpp TABLE.json...
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "tuning_json.hpp"

namespace {

using namespace batchsolve;

// A C++ string literal of `text` (quotes and backslashes escaped; tables hold no control characters
// but newlines are escaped too).
std::string literal(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

std::string base_name(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The compute capability a table file is for: the digits after "sm" in its name (sm90-batch100000.json:
// 90); the CPU backend's table (cpu*.json) is kCpuArch, 0.
int arch_of(const std::string& name) {
    if (name.rfind("cpu", 0) == 0) return 0;
    if (name.rfind("sm", 0) != 0) throw Error("pack_tuning_tables: " + name + ": the name does not start with sm<arch>");
    std::size_t end = 2;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    if (end == 2) throw Error("pack_tuning_tables: " + name + ": no architecture number after 'sm'");
    return std::stoi(name.substr(2, end - 2));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) == "--help") {
        std::cerr << "usage: batchsolve_pack_tuning_tables OUTPUT.hpp TABLE.json...\n"
                     "  Writes the tables' entries as C++ data for libbatchsolve (build step).\n";
        return argc < 2 ? 2 : 0;
    }
    try {
        std::ostringstream out;
        out << "// Generated at build time by batchsolve_pack_tuning_tables (libsolver/src/core/pack_tuning_tables.cpp)\n"
               "// from libsolver/tuning/sm*.json and cpu*.json: every entry's case, configuration (the family's\n"
               "// fields in the order of its field list in tuning_json.hpp, as integers) and note. Do not edit.\n"
               "#pragma once\n\n#include <vector>\n\n// Included after src/core/tuning_json.hpp (kMaxFieldCount).\n\n"
               "namespace batchsolve::tuning {\n\n"
               "struct PackedEntry {\n    const char* routine;\n    const char* layout;\n    char precision;\n    int n;\n"
               "    int fields[kMaxFieldCount];\n    const char* provenance;\n};\n"
               "struct PackedTable {\n    int arch;              // from the file name\n    const char* name;\n"
               "    const char* description;\n    int arch_number;\n    int batch;\n    int family;            // tuning::Family\n"
               "    const PackedEntry* entries;\n    int count;\n};\n\n";
        std::ostringstream list;
        int tables = 0;
        for (int a = 2; a < argc; ++a) {
            const std::string path = argv[a], name = base_name(path);
            std::ifstream in(path);
            if (!in) throw Error("pack_tuning_tables: cannot read " + path);
            std::stringstream text;
            text << in.rdbuf();
            const tuning::ParsedTable t = tuning::parse_table_json(text.str(), "libsolver/tuning/" + name);
            for (const tuning::Family family : tuning::kFamilies) {
                std::size_t count = 0;
                for (const auto& e : t.entries) count += e.family == family;
                if (count == 0) continue;
                const std::string array = "kTable" + std::to_string(tables++);
                out << "// " << name << ": " << count << " " << tuning::to_string(family) << " entries\n";
                out << "inline const PackedEntry " << array << "[] = {\n";
                for (const auto& e : t.entries) {
                    if (e.family != family) continue;
                    out << "    {" << literal(e.routine) << ", " << literal(e.layout) << ", '" << e.precision[0] << "', "
                        << e.n << ", {";
                    for (int f = 0; f < tuning::kMaxFieldCount; ++f) out << (f ? ", " : "") << e.fields.v[f];
                    out << "}, " << literal(e.provenance) << "},\n";
                }
                out << "};\n\n";
                list << "        {" << arch_of(name) << ", " << literal(name) << ", " << literal(t.description) << ", "
                     << t.arch_number << ", " << t.batch << ", " << static_cast<int>(family) << ", " << array << ", "
                     << count << "},\n";
            }
        }
        out << "inline std::vector<PackedTable> packed_tuning_tables() {\n    return {\n" << list.str()
            << "    };\n}\n\n}  // namespace batchsolve::tuning\n";
        const std::string output = argv[1];
        std::ofstream file(output, std::ios::trunc);
        file << out.str();
        file.close();
        if (!file) throw Error("pack_tuning_tables: cannot write " + output);
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "batchsolve_pack_tuning_tables: " << e.what() << "\n";
        return 1;
    }
}
