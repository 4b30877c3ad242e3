// bench_cusolverdx as the tester's peer: finding it, its configurations (--list), one run for the
// whole sweep, and its output read back (cusolverdx_peer.hpp).
#include "cusolverdx_peer.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "batchsolve/types.hpp"

namespace batchsolve::validation::peer {

namespace {

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::vector<std::string> split_text(const std::string& text, char sep) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep)) parts.push_back(part);
    return parts;
}

// "float" / "double" as the program writes them -> 's' / 'd' (0: neither).
char precision_of(const std::string& word) { return word == "float" ? 's' : word == "double" ? 'd' : 0; }

template <class T>
std::string join(const std::vector<T>& values) {
    std::ostringstream out;
    for (std::size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
    return out.str();
}

// The last `lines` lines of a program's output on one line (" | " between), for an error message.
std::string tail_of(const std::string& text, int lines) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
    std::size_t start = t.size();
    for (int k = 0; k < lines && start > 0; ++k) {
        const std::size_t nl = t.rfind('\n', start - 1);
        start = nl == std::string::npos ? 0 : nl;
        if (nl == std::string::npos) break;
    }
    std::string tail = t.substr(start < t.size() && t[start] == '\n' ? start + 1 : start);
    for (std::size_t i; (i = tail.find('\n')) != std::string::npos;) tail.replace(i, 1, " | ");
    return tail.empty() ? "(nothing)" : tail;
}

}  // namespace

std::string shell_quote(const std::string& word) {
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

int run_command(const std::string& command, std::string& text) {
    text.clear();
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return -1;
    char buffer[4096];
    std::size_t got;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, got);
    const int status = ::pclose(pipe);
    if (status == -1) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string CusolverDx::locate(const std::string& option, const std::string& beside) {
    if (!option.empty()) return option;  // checked by the constructor, which names it
    const char* env = std::getenv("BATCHSOLVE_CUSOLVERDX");
    if (env != nullptr && *env != '\0') return env;
    const std::string next_to = beside + "/bench_cusolverdx";
    return is_executable_file(next_to) ? next_to : std::string();
}

CusolverDx::CusolverDx(std::string program) : program_(std::move(program)) {
    if (!is_executable_file(program_)) throw Error("cuSolverDx peer '" + program_ + "': not an executable file");
    std::string text;
    const int rc = run_command(shell_quote(program_) + " --list", text);
    // "# cuSolverDx 0.5.0 (MathDx 26.06.1), 90 configurations", a CSV header, then one line per configuration:
    // precision,n,routine,bpb,block_x,block_y,block_z,suggested,smem_bytes,symbol
    for (const std::string& line : split_text(text, '\n')) {
        if (line.rfind("# cuSolverDx ", 0) == 0) version_ = line.substr(2);
        const std::vector<std::string> f = split_text(line, ',');
        if (f.size() < 3 || precision_of(f[0]) == 0) continue;
        available_.insert({precision_of(f[0]), std::atoi(f[1].c_str()), f[2]});
        ++configurations_;
    }
    if (rc != 0 || configurations_ == 0)
        throw Error("cuSolverDx peer '" + program_ + "' --list: exit status " + std::to_string(rc) + ", " +
                    std::to_string(configurations_) + " configurations; it printed: " + tail_of(text, 5));
}

std::string CusolverDx::orders() const {
    std::set<int> ns;
    for (const auto& a : available_) ns.insert(std::get<1>(a));
    return join(std::vector<int>(ns.begin(), ns.end()));
}

bool CusolverDx::has(char precision, int n, const std::string& routine) const {
    return available_.count({precision, n, routine}) > 0;
}

void CusolverDx::plan(std::vector<char> precisions, std::vector<int> ns, std::vector<long long> batches,
                      std::vector<std::string> routines, int repeat, int warmup, double seconds) {
    std::vector<std::string> precision_words;
    std::vector<int> wanted_ns;
    for (char p : precisions)
        if (p == 's' || p == 'd') precision_words.push_back(p == 's' ? "float" : "double");
    for (int n : ns)
        for (char p : precisions)
            for (const std::string& r : routines)
                if (has(p, n, r) && (wanted_ns.empty() || wanted_ns.back() != n)) wanted_ns.push_back(n);
    planned_ = !precision_words.empty() && !wanted_ns.empty() && !batches.empty() && !routines.empty();
    // --only-best: the best, the suggested and cuSOLVER's rows per case (every configuration is still
    // timed); the program restores the inputs and flushes the L2 before every timed run.
    args_ = {"--n", join(wanted_ns), "--prec", join(precision_words), "--batch", join(batches), "--routine",
             join(routines), "--reps", std::to_string(repeat), "--warmup", std::to_string(warmup), "--only-best"};
    limit_seconds_ = seconds;
}

bool CusolverDx::run() {
    if (attempted_) return ran_;
    attempted_ = true;
    if (!planned_) {
        why_ = "nothing of this run has a cuSolverDx configuration";
        return false;
    }
    // `timeout` ends a hung program (and the tester goes on without its figures).
    command_ = "timeout -k 5 " + std::to_string(int(std::ceil(limit_seconds_))) + " " + shell_quote(program_);
    for (const std::string& a : args_) command_ += " " + shell_quote(a);
    const auto t0 = std::chrono::steady_clock::now();
    exit_code_ = run_command(command_, output_);
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    parse(output_);
    if (exit_code_ != 0) {
        why_ = "bench_cusolverdx exit status " + std::to_string(exit_code_) +
               (exit_code_ == 124 ? " (time limit --cusolverdx-seconds)" : "") + ": " + tail_of(output_, 2);
        // Rows printed before a failure are real measurements; the cases after it say why they have none.
    }
    ran_ = !figures_.empty();
    if (!ran_ && why_.empty()) why_ = "bench_cusolverdx printed no rows: " + tail_of(output_, 3);
    return ran_;
}

void CusolverDx::parse(const std::string& text) {
    for (const std::string& line : split_text(text, '\n')) {
        if (line.rfind("# best cusolverdx ", 0) == 0) {
            // "# best cusolverdx float n=8 batch=16384 potrf: cusolverdx_bpb8_t32"
            char prec[16] = {}, routine[16] = {}, config[96] = {};
            int n = 0;
            long long batch = 0;
            if (std::sscanf(line.c_str(), "# best cusolverdx %15s n=%d batch=%lld %15[a-z]: %95s", prec, &n, &batch,
                            routine, config) == 5)
                figures_[{precision_of(prec), n, batch, routine}].config = config;
        } else if (line.rfind("# skip ", 0) == 0) {
            // "# skip float n=128 batch=100000: needs 26.2 GB, 20.0 GB free" (both routines)
            char prec[16] = {};
            int n = 0;
            long long batch = 0;
            if (std::sscanf(line.c_str(), "# skip %15s n=%d batch=%lld", prec, &n, &batch) == 3)
                for (const char* r : {"potrf", "posv"}) skipped_[{precision_of(prec), n, batch, r}] = line.substr(7);
        } else if (line.rfind("# WARNING ", 0) == 0) {
            // "# WARNING cusolverdx_bpb16_t32 float n=8 batch=16384 potrf: err 3e+02, excluded from best"
            char config[96] = {}, prec[16] = {}, routine[16] = {};
            int n = 0;
            long long batch = 0;
            if (std::sscanf(line.c_str(), "# WARNING %95s %15s n=%d batch=%lld %15[a-z]:", config, prec, &n, &batch,
                            routine) == 5)
                ++figures_[{precision_of(prec), n, batch, routine}].rejected;
        } else if (!line.empty() && line[0] != '#') {
            // impl,precision,n,batch,routine,ms,GFLOP/s,roofline_fraction,err
            const std::vector<std::string> f = split_text(line, ',');
            if (f.size() < 9 || precision_of(f[1]) == 0) continue;
            const Key key{precision_of(f[1]), std::atoi(f[2].c_str()), std::atoll(f[3].c_str()), f[4]};
            const double ms = std::strtod(f[5].c_str(), nullptr);
            if (f[0] == "cusolverdx") {
                DxFigure& fig = figures_[key];
                fig.ms = ms;
                fig.error = std::strtod(f[8].c_str(), nullptr);  // "nan" when a matrix reported info != 0
            } else if (f[0] == "cusolverdx_suggested") {
                figures_[key].suggested_ms = ms;
            } else if (f[0] == "cusolver") {
                figures_[key].cusolver_ms = ms;
            }
        }
    }
    // A case with only a cuSOLVER row (no cuSolverDx configuration ran) has no figure.
    for (auto it = figures_.begin(); it != figures_.end();) it = it->second.ms > 0 ? std::next(it) : figures_.erase(it);
}

const DxFigure* CusolverDx::find(char precision, int n, long long batch, const std::string& routine,
                                 std::string& note) const {
    const Key key{precision, n, batch, routine};
    const auto it = figures_.find(key);
    if (it != figures_.end()) return &it->second;
    const auto skip = skipped_.find(key);
    if (skip != skipped_.end()) note = "skipped by bench_cusolverdx: " + skip->second;
    else if (!has(precision, n, routine)) note = "no configuration for n = " + std::to_string(n) + " (built for n = " + orders() + ")";
    else if (!why_.empty()) note = why_;
    else note = "no row in bench_cusolverdx's output";
    return nullptr;
}

std::vector<std::string> CusolverDx::header_lines() const {
    std::vector<std::string> lines;
    for (const std::string& line : split_text(output_, '\n'))
        for (const char* prefix : {"# device:", "# cuda runtime", "# timing:", "# d2d copy:"})
            if (line.rfind(prefix, 0) == 0) lines.push_back(line.substr(2));
    return lines;
}

}  // namespace batchsolve::validation::peer
