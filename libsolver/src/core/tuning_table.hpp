// The tuning tables of libsolver/tuning/<arch>.json, embedded into the library at build time
// (BATCHSOLVE_TUNING_FILE overrides with a file read at run time): the autotuned kernel configuration
// per routine, precision, layout family and n. A missing entry means "use the safe default".
#pragma once

#include <optional>
#include <string>

#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::tuning {

// Layout families that share a table: column_major also serves pointer_array.
std::string layout_family(LayoutKind layout);

// The tuned configuration for `routine` ("potrf", "potrs", "posv") on a GPU of compute capability
// `arch` (e.g. 90 for sm_90), or nothing when the table has no entry.
std::optional<CholeskyConfig> lookup(const std::string& routine, Precision precision, LayoutKind layout, int n,
                                     int arch);

// Provenance line of the table in use for `arch` ("" when there is none), e.g. for tester headers.
std::string table_description(int arch);

}  // namespace batchsolve::tuning
