// The variable-size GEMM's tuning table: the configuration per precision and size class (the largest
// of max_m and max_n), each row with where it was measured. Every crossover of the GEMM lives here,
// nowhere else (MAGMA's get_batched_crossover habit). Rows are tried in order; the first whose bound
// covers the call wins.
#pragma once

#include "batchsolve/types.hpp"
#include "batchsolve/vbatched_blas.hpp"

namespace batchsolve::codegen::blas3 {

struct GemmTuningRow {
    Precision precision;
    int max_size;  // the row applies when max(max_m, max_n) <= max_size
    GemmConfig config;
    const char* provenance;
};

// clang-format off
inline constexpr GemmTuningRow gemm_tuning_table[] = {
    // Untuned starting points (MAGMA's batched dgemm shapes), to be replaced by the sweep's winners.
    {Precision::s,      32, {32, 32,  8, 16, 16, false}, "default (untuned)"},
    {Precision::s, 1 << 30, {64, 64,  8, 16, 16, false}, "default (untuned)"},
    {Precision::d,      32, {32, 32,  8, 16, 16, false}, "default (untuned)"},
    {Precision::d, 1 << 30, {64, 64,  8, 16, 16, false}, "default (untuned)"},
    {Precision::c,      32, {32, 32,  8, 16, 16, false}, "default (untuned)"},
    {Precision::c, 1 << 30, {32, 32,  8, 16, 16, false}, "default (untuned)"},
    {Precision::z,      32, {32, 32,  8, 16, 16, false}, "default (untuned)"},
    {Precision::z, 1 << 30, {32, 32,  8, 16, 16, false}, "default (untuned)"},
};
// clang-format on

inline GemmConfig tuned_gemm_config(Precision p, int max_m, int max_n, int /*max_k*/) {
    const int size = max_m > max_n ? max_m : max_n;
    for (const GemmTuningRow& row : gemm_tuning_table)
        if (row.precision == p && size <= row.max_size) return row.config;
    return GemmConfig{};
}

}  // namespace batchsolve::codegen::blas3
