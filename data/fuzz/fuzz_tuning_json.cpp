// libFuzzer target of the tuning-table reader (batchsolve/tuning_file.hpp: parse_tuning_file),
// which reads the files named by BATCHSOLVE_TUNING_FILE at run time: any text must give a table or a
// batchsolve::Error naming the file, never a crash, a sanitizer report or another exception (a JSON
// library exception would reach the user without the file's name). Kept with data/'s targets: it
// is the library's one reader of a user-supplied file outside HDF5.
#include <cstdint>
#include <string>

#include "batchsolve/tuning_file.hpp"
#include "batchsolve/types.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const batchsolve::TuningFileContents t = batchsolve::parse_tuning_file(text, "fuzz.json");
        for (const auto& e : t.entries) (void)e.config.size();
    } catch (const batchsolve::Error&) {
    }
    return 0;
}
