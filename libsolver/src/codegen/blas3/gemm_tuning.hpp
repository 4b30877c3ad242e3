// The variable-size GEMM's tuning table: the configuration per precision and size class (the largest
// of max_m and max_n), each row with where it was measured. Every crossover of the GEMM lives here,
// nowhere else (MAGMA's get_batched_crossover habit). Rows are tried in order; the first whose bound
// covers the call wins.
#pragma once

#include "batchsolve/types.hpp"
#include "batchsolve/vbatched_blas.hpp"

namespace batchsolve::codegen::blas3 {

// What a row is for: the full GEMM, or one triangle of C (SYRK/HERK/SYR2K/HER2K: the diagonal blocks
// compute a whole tile for half of it, so smaller tiles than GEMM's pay at the same size).
enum class GemmUse { full, triangle };

struct GemmTuningRow {
    Precision precision;
    GemmUse use;
    int max_size;  // the row applies when max(max_m, max_n) <= max_size
    GemmConfig config;
    const char* provenance;
};

// clang-format off
inline constexpr GemmTuningRow gemm_tuning_table[] = {
    // The sweep's winners (vbatched_bench --sweep, square GEMM, 2000 problems, sizes uniform in [1, x]);
    // rows marked untuned are MAGMA's batched dgemm shapes, kept until measured.
    {Precision::s, GemmUse::full,      32, {32, 32,  8, 16, 16, false}, "default (untuned)"},
    {Precision::s, GemmUse::full, 1 << 30, {64, 64,  8, 16, 16, false}, "default (untuned)"},
    {Precision::d, GemmUse::full,      32, {32, 32,  8,  2,  2, true},  "H100 sweep 2026-11-27 01:50, x = 128: 4.8 TFLOP/s (2nd); smaller tiles for x <= 32 untuned"},
    {Precision::d, GemmUse::full, 1 << 30, {64, 64,  8,  2,  4, true},  "H100 sweep 2026-11-27 01:50, x = 128: 5.6 TFLOP/s (best of 17; SIMT best 4.0)"},
    {Precision::c, GemmUse::full,      32, {32, 32,  8, 16, 16, false}, "default (untuned)"},
    {Precision::c, GemmUse::full, 1 << 30, {32, 32,  8, 16, 16, false}, "default (untuned)"},
    {Precision::z, GemmUse::full,      32, {32, 32,  8,  8,  8, false}, "H100 sweep 2026-11-27 01:50, x = 128 (9.4 TFLOP/s) applied to x <= 32 untested"},
    {Precision::z, GemmUse::full, 1 << 30, {32, 32,  8,  8,  8, false}, "H100 sweep 2026-11-27 01:50, x = 128: 9.4 TFLOP/s (best of 9 SIMT; DMMA not yet swept)"},
};
// clang-format on

// The first row of the precision and use whose bound covers the call; a triangle without rows of its
// own takes the full GEMM's.
inline GemmConfig tuned_gemm_config(Precision p, int max_m, int max_n, int /*max_k*/, GemmUse use = GemmUse::full) {
    const int size = max_m > max_n ? max_m : max_n;
    for (const GemmTuningRow& row : gemm_tuning_table)
        if (row.precision == p && row.use == use && size <= row.max_size) return row.config;
    if (use == GemmUse::triangle) return tuned_gemm_config(p, max_m, max_n, 0, GemmUse::full);
    return GemmConfig{};
}

}  // namespace batchsolve::codegen::blas3
