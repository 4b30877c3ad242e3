// Reading a tuning table the way the library reads BATCHSOLVE_TUNING_FILE (tuning.hpp): for tools
// that write or check tables (the autotuner, a fuzzer, a test of the reader's error messages) without
// the library's internal reader.
#pragma once

#include <string>
#include <vector>

namespace batchsolve {

struct TuningFileEntry {
    std::string family;      // cholesky, gemm, large, ldlt, trsm, cpu, mixed
    std::string routine;     // potrf, gemm_vbatched, potrf_large, ...
    std::string precision;   // s, d, c, z
    std::string layout;      // small Cholesky's layout, else ""
    int n = 0;
    std::string config;      // the entry's configuration as the library read it, one-line JSON
    std::string provenance;  // the entry's own note ("" if none)
};

struct TuningFileContents {
    std::string description;  // "<origin>: <device>, CUDA <version>, <date>, commit <c>, batch <b>"
    int arch_number = 0;      // the table's "arch_number" (0: not recorded)
    int batch = 0;            // matrices per batch it was tuned at (0: not recorded)
    std::vector<TuningFileEntry> entries;
};

// `text` is a table's JSON, `origin` the name errors give (a file name). Throws Error naming the
// origin, and the entry and the field where one is at fault, for any text that is not a valid table.
TuningFileContents parse_tuning_file(const std::string& text, const std::string& origin);
// The same for the file at `path` (Error naming it when it cannot be read).
TuningFileContents read_tuning_file(const std::string& path);

}  // namespace batchsolve
