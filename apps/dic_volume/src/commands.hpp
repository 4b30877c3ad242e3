// The `dvc` command line (generate, correlate, bench), callable from tests without a process.
#pragma once

#include <string>
#include <vector>

namespace dvc {

// Exit codes (README.md): 0 ok, 1 finished but the run failed its own check (bench accuracy,
// correlate --require-converged), 2 usage, 3 file or input error, 4 backend error.
int run_cli(const std::vector<std::string>& args);

// The process's entry (main.cpp): run_cli as the whole process. A `correlate` that wrote its
// outputs then ends the process without freeing (unless --free-at-exit); --timeline is written last.
int run_process(const std::vector<std::string>& args);

}  // namespace dvc
