// The tester's cuSolverDx peer (--ref cusolverdx): NVIDIA cuSolverDx's batched small Cholesky, timed by
// its benchmark program bench_cusolverdx (../shared/tools/peers/cusolverdx/, or built for more orders by
// validation/cusolverdx/build-peer.sh), which the tester runs as a child process. cuSolverDx is a
// device-function library whose kernels are generated and LTO-linked at build time through libmathdx
// (about 15 minutes for 90 configurations), so it cannot be linked into the tester; its benchmark is the
// one program that holds them, and it times its own best configuration per case. The tester passes the
// run's sizes, precisions, batches, repeat and warm-up counts, and times its own rows of the run the way
// that program does (bench.hpp: Settings::restore_each_call).
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace batchsolve::validation::peer {

// One case as bench_cusolverdx reports it: the best configuration whose own error check passed, the
// library's suggested configuration, and cuSOLVER's potrfBatched(+potrsBatched) in the same process.
struct DxFigure {
    double ms = 0;               // median time of the best configuration
    double error = 0;            // its error: ||A - L L^T||_F / (n ||A||_F u), posv: the backward error / (n u)
    std::string config;          // e.g. cusolverdx_bpb8_t32: BatchesPerBlock 8, 32 threads
    double suggested_ms = 0;     // cuSolverDx's suggested configuration (0: none)
    double cusolver_ms = 0;      // cuSOLVER in the same process (0: none)
    int rejected = 0;            // configurations excluded from the best for failing their check
};

class CusolverDx {
public:
    // The program: `option` (--cusolverdx) when given, else $BATCHSOLVE_CUSOLVERDX, else bench_cusolverdx
    // in `beside` (the tester's own folder: the GPU bundle's bin/). Empty when none of them is a file.
    static std::string locate(const std::string& option, const std::string& beside);

    // Reads the program's configurations (bench_cusolverdx --list, no GPU needed); throws Error naming
    // the program and its output when it does not run.
    explicit CusolverDx(std::string program);

    const std::string& program() const { return program_; }
    const std::string& version() const { return version_; }  // "cuSolverDx 0.5.0 (MathDx 26.06.1), 90 configurations"
    std::string orders() const;                               // "8,16,32,64,100,128"
    int configurations() const { return configurations_; }
    // A configuration was generated for this precision ('s', 'd'), order and routine (potrf, posv).
    bool has(char precision, int n, const std::string& routine) const;

    // The one run to make (the tester makes it at start): every combination of these (those without a
    // configuration are left out), median of `repeat` runs after `warmup`, at most `seconds` long.
    void plan(std::vector<char> precisions, std::vector<int> ns, std::vector<long long> batches,
              std::vector<std::string> routines, int repeat, int warmup, double seconds);
    // Runs the planned benchmark once (later calls return at once). False when it failed: why().
    bool run();
    bool ran() const { return ran_; }
    const std::string& why() const { return why_; }

    // The figure of one case, null when the run has none; `note` then says why (skipped for memory,
    // no configuration, the run failed).
    const DxFigure* find(char precision, int n, long long batch, const std::string& routine, std::string& note) const;

    // What the run printed and how it went, for the tester's JSON.
    const std::string& command() const { return command_; }
    const std::string& output() const { return output_; }
    double seconds() const { return seconds_; }
    int exit_code() const { return exit_code_; }
    std::vector<std::string> header_lines() const;  // the "# device", "# cuda runtime", "# timing", "# d2d copy" lines

    // Parses bench_cusolverdx's CSV and comment lines (public for the unit test).
    void parse(const std::string& text);

private:
    using Key = std::tuple<char, int, long long, std::string>;  // precision, n, batch, routine
    std::string program_, version_, command_, output_, why_;
    int configurations_ = 0;
    std::set<std::tuple<char, int, std::string>> available_;
    std::map<Key, DxFigure> figures_;
    std::map<Key, std::string> skipped_;  // the program's own "# skip" lines
    std::vector<std::string> args_;
    double limit_seconds_ = 0, seconds_ = 0;
    int exit_code_ = -1;
    bool planned_ = false, attempted_ = false, ran_ = false;
};

// Runs `command` through /bin/sh, stdout and stderr together; returns the exit status (-1: could not
// start). `text` receives the output.
int run_command(const std::string& command, std::string& text);
// `word` quoted for /bin/sh.
std::string shell_quote(const std::string& word);

}  // namespace batchsolve::validation::peer
