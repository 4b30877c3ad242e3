// The tuning tables of libsolver/tuning/*.json, embedded into the library at build time
// (BATCHSOLVE_TUNING_FILE overrides with files read at run time), for every family: small batched
// Cholesky (the kernel configuration per routine, precision, layout family and n), the variable-size
// GEMM, large Cholesky, LDL^T's blocking, TRSM's crossover and the CPU backend's vector path (per
// precision and size class). A missing entry means "use the safe default".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "batchsolve/context.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"
#include "batchsolve/vbatched_blas.hpp"

namespace batchsolve::tuning {

struct LargeTuning;  // tuning_json.hpp

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

// Provenance of the small-Cholesky tables in use for `arch` ("" when there is none; several joined by
// "; "), e.g. for tester headers.
std::string table_description(int arch);

// The architecture key of the CPU backend's table (cpu.json).
inline constexpr int kCpuArch = 0;
// The compute capability of the context's GPU (e.g. 90), kCpuArch on the CPU backend.
int context_arch(Context& ctx);

// The other families (size classes: the entry with the smallest n >= size, else the largest).
// GEMM: size = max(max_m, max_n); triangle: the one-triangle form (SYRK/HERK/SYR2K/HER2K), which takes
// the full GEMM's entry where it has none of its own.
std::optional<GemmConfig> lookup_gemm(Precision precision, bool triangle, int size, int arch);
std::optional<LargeTuning> lookup_large(Precision precision, int n, int arch);
std::optional<LdltBlocking> lookup_ldlt(Precision precision, int n, int arch);
std::optional<TrsmCrossover> lookup_trsm(Precision precision, int order, int arch);
std::optional<CpuSwitchOver> lookup_cpu(Precision precision);

// Large Cholesky's answer with the safe default filled in (tuning_json.hpp's LargeTuning initialisers).
LargeTuning large_tuning(Precision precision, int n, int arch);
// posv_mixed's automatic chain (tuning_json.hpp's MixedTuning; its initialisers where no table has one).
struct MixedTuning;
MixedTuning mixed_tuning(Precision precision, int n, int arch);

}  // namespace batchsolve::tuning
