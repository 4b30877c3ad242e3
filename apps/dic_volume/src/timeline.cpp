// Process timeline (timeline.hpp).
#include "timeline.hpp"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

namespace dvc::timeline {
namespace {

struct State {
    std::mutex mutex;
    std::function<void(const std::string&)> writer;
    std::vector<std::pair<std::string, double>> events;
};

State& state() {
    static State s;
    return s;
}

// The process's start in seconds since boot: field 22 of /proc/self/stat (clock ticks), read once.
double start_since_boot() {
    static const double start = [] {
        std::ifstream in("/proc/self/stat");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto paren = text.rfind(')');  // the command name may hold spaces
        if (paren == std::string::npos) return -1.0;
        std::istringstream fields(text.substr(paren + 2));
        std::string f;
        // Fields after the name start at 3 (state); starttime is field 22.
        for (int i = 3; i < 22 && fields >> f; ++i) {}
        unsigned long long ticks = 0;
        if (!(fields >> ticks)) return -1.0;
        return double(ticks) / double(::sysconf(_SC_CLK_TCK));
    }();
    return start;
}

double now_since_boot() {
    timespec t{};
    ::clock_gettime(CLOCK_BOOTTIME, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

}  // namespace

double process_age_s() {
    const double start = start_since_boot();
    return start < 0 ? 0.0 : now_since_boot() - start;
}

void mark(const std::string& event) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.events.emplace_back(event, process_age_s());
}

void request(std::function<void(const std::string& json)> writer) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.writer = std::move(writer);
}

void write_if_requested() {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.writer) return;
    std::ostringstream out;
    out.precision(6);
    out << std::fixed << "{\n  \"clock\": \"seconds since the process started (/proc/self/stat, 10 ms resolution)\",\n  \"events\": [\n";
    for (std::size_t i = 0; i < s.events.size(); ++i)
        out << "    {\"event\": \"" << s.events[i].first << "\", \"s\": " << s.events[i].second << "}" << (i + 1 < s.events.size() ? "," : "") << "\n";
    out << "  ]\n}\n";
    // The last act of the process: a failure here is reported, the command's outputs stand.
    try {
        s.writer(out.str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "dvc: warning: the timeline was not written: %s\n", e.what());
    }
    s.writer = nullptr;
    s.events.clear();
}

}  // namespace dvc::timeline
