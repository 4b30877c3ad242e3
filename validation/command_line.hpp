// Command-line helpers shared by the tester and the autotuner: list options ("8,16,32", "4:128:4"),
// the usage-error type both report, and the provenance strings written into their JSON.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "batchsolve/types.hpp"

namespace batchsolve::validation {

// A command-line problem, reported as "<program>: invalid --option 'value': reason".
struct UsageError : std::runtime_error {
    UsageError(const std::string& option, const std::string& value, const std::string& reason)
        : std::runtime_error("invalid --" + option + " '" + value + "': " + reason) {}
};

std::vector<std::string> split(const std::string& text, char sep);

// "8,16,32", "4:128:4" (first:last:step, last included when reached), "1:20" (step 1), or a mix;
// in the order given, duplicates dropped; every value >= min_value.
std::vector<int> parse_int_list(const std::string& option, const std::string& text, int min_value);

// A comma-separated list of items parsed by `parse` (which throws InvalidArgument on a bad item);
// in the order given, duplicates dropped.
template <class T, class Parse>
std::vector<T> parse_list(const std::string& option, const std::string& text, Parse parse) {
    std::vector<T> values;
    for (const std::string& item : split(text, ',')) {
        try {
            const T v = parse(item);
            if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
        } catch (const InvalidArgument& e) {
            throw UsageError(option, text, e.condition());
        }
    }
    if (values.empty()) throw UsageError(option, text, "no values");
    return values;
}

std::string utc_now();                                     // "2026-11-22T04:00:00Z"
std::string quoted_command_line(int argc, char** argv);    // shell-quoted where needed
std::string cuda_version_text(int version);                // CUDA's 13000 -> "13.0"

}  // namespace batchsolve::validation
