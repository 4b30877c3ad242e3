// Shared by the autotuner's files: the names it takes from the tester, the run's policy constants
// (pruning of slow candidates, memory shares, compile-thread priority), the layout families and the
// key of a case (routine, precision, family, n).
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/tuning.hpp"
#include "bench.hpp"
#include "command_line.hpp"
#include "gpu.hpp"

// Field order as written (the table reads like to_string(CholeskyConfig) and the schema).
using json = nlohmann::ordered_json;

namespace batchsolve::autotune {

// What the tester already defines: the routines, their operation counts, and the command line.
using validation::flops_per_matrix;
using validation::parse_int_list;
using validation::parse_list;
using validation::parse_routine;
using validation::quoted_command_line;
using validation::Routine;
using validation::to_string;
using validation::UsageError;
using validation::utc_now;
using validation::cuda_version_text;

// ---- run policy -------------------------------------------------------------------------------------
// A candidate whose first timed run takes longer than this times the best median so far is not
// timed again (its single sample is logged, flagged "pruned").
constexpr double kPruneFactor = 1.5;
// Distinct matrices generated per (precision, n), repeated to fill the batch: generation is O(n^3)
// per matrix on the host, and the kernels' speed does not depend on the values.
constexpr int kDistinctMatrices = 1024;
// Device memory the input sets may take, as a fraction of what is free.
constexpr double kDeviceMemoryShare = 0.8;
// (precision, n) groups whose inputs are resident at once: the next group's cases can run while the
// current one waits for compilation.
constexpr int kGroupsAhead = 2;
// Compile threads run at this nice value where SCHED_IDLE is refused, so that the timing thread keeps
// a core for its launches.
constexpr int kCompileNice = 10;
// Regions inside an input set start at multiples of this (cudaMalloc's own alignment).
constexpr std::size_t kRegionAlign = 256;
// Winners whose sanity check fails are replaced by the next best, at most this many times.
constexpr int kSanityTries = 3;
// SMs assumed by --dry-run (H100/H200 SXM), which has no GPU to ask.
constexpr int kDryRunSmCount = 132;
constexpr int kUsageError = 255;

// ---- layout families and cases --------------------------------------------------------------------

enum class Family { interleaved, chunked, column_major };
const char* to_string(Family f);
Family parse_family(const std::string& t);  // throws InvalidArgument naming --layout
LayoutKind layout_of(Family f);

struct CaseKey {
    Routine routine = Routine::potrf;
    Precision precision = Precision::s;
    Family family = Family::interleaved;
    int n = 0;
    std::string text() const {
        return std::string(to_string(routine)) + " " + precision_letter(precision) + " " + to_string(family) + " n=" +
               std::to_string(n);
    }
    bool operator<(const CaseKey& o) const {
        return std::make_tuple(int(routine), int(precision), int(family), n) <
               std::make_tuple(int(o.routine), int(o.precision), int(o.family), o.n);
    }
};

// ---- small helpers --------------------------------------------------------------------------------

double seconds_since(std::chrono::steady_clock::time_point t0);
inline int ceil_div(int a, int b) { return (a + b - 1) / b; }
std::size_t align_up(std::size_t bytes);  // to kRegionAlign
int words_per_element(Precision p);
std::size_t element_bytes(Precision p);
// "a,b,c"
std::string joined(const std::vector<std::string>& items, const char* separator = ",");
// A configuration in a few words, for the progress lines (the log and the table have all fields).
std::string short_text(const CholeskyConfig& c, Family f, Routine r);

}  // namespace batchsolve::autotune
