// The tuning tables of libsolver/tuning/<arch>.json, embedded into the library at build time
// (BATCHSOLVE_TUNING_FILE overrides with a file read at run time): the autotuned kernel configuration
// per routine, precision, layout family and n. A missing entry means "use the safe default".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::tuning {

// Layout families that share a table: column_major also serves pointer_array.
std::string layout_family(LayoutKind layout);

// The tuned configuration for `routine` ("potrf", "potrs", "posv") on a GPU of compute capability
// `arch` (e.g. 90 for sm_90) and a batch of `count` matrices, or nothing when no table has an entry.
// An architecture may have tables tuned at several batch sizes (libsolver/tuning/sm90.json,
// sm90-batch100000.json, ...): the entry comes from the table tuned nearest to `count` (in ratio)
// among those that have the case, since the fastest kernel changes with the batch size.
std::optional<CholeskyConfig> lookup(std::string_view routine, Precision precision, LayoutKind layout, int n,
                                     int arch, int count);

// Index of the batch size nearest to `count` in ratio (|log count - log batch| smallest; a batch of 0,
// not recorded, ranks last; ties go to the first), or -1 for an empty list. Exposed for tests.
int nearest_batch(const std::vector<int>& batches, int count);

// Provenance of the tables in use for `arch` ("" when there is none; several joined by "; "), e.g.
// for tester headers.
std::string table_description(int arch);

}  // namespace batchsolve::tuning
