// Command-line helpers shared by the tester and the autotuner (see command_line.hpp).
#include "command_line.hpp"

#include <ctime>
#include <sstream>

namespace batchsolve::validation {

std::vector<std::string> split(const std::string& text, char sep) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, sep);) parts.push_back(item);
    if (!text.empty() && text.back() == sep) parts.emplace_back();
    return parts;
}

namespace {
int parse_int(const std::string& option, const std::string& text, const std::string& whole) {
    std::size_t used = 0;
    long v = 0;
    try {
        v = std::stol(text, &used);
    } catch (const std::exception&) {
        throw UsageError(option, whole, "'" + text + "' is not an integer");
    }
    if (used != text.size() || v < -2147483647L || v > 2147483647L)
        throw UsageError(option, whole, "'" + text + "' is not an integer");
    return int(v);
}
}  // namespace

std::vector<int> parse_int_list(const std::string& option, const std::string& text, int min_value) {
    std::vector<int> values;
    for (const std::string& item : split(text, ',')) {
        if (item.empty()) throw UsageError(option, text, "empty list item");
        const std::vector<std::string> r = split(item, ':');
        if (r.size() > 3) throw UsageError(option, text, "'" + item + "' is not a value or first:last[:step]");
        const int first = parse_int(option, r[0], text);
        const int last = r.size() > 1 ? parse_int(option, r[1], text) : first;
        const int step = r.size() > 2 ? parse_int(option, r[2], text) : 1;
        if (step < 1) throw UsageError(option, text, "step must be >= 1");
        if (last < first) throw UsageError(option, text, "range '" + item + "' ends before it starts");
        for (long v = first; v <= last; v += step)
            if (std::find(values.begin(), values.end(), int(v)) == values.end()) values.push_back(int(v));
    }
    if (values.empty()) throw UsageError(option, text, "no values");
    for (int v : values)
        if (v < min_value) throw UsageError(option, text, "values must be >= " + std::to_string(min_value));
    return values;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

std::string quoted_command_line(int argc, char** argv) {
    std::string line;
    for (int i = 0; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg.empty() || arg.find_first_of(" \t\"'$\\") != std::string::npos) arg = "'" + arg + "'";
        line += (i ? " " : "") + arg;
    }
    return line;
}

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace batchsolve::validation
