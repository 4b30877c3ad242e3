// The tuning tables' JSON (libsolver/tuning/sm<arch>*.json, cpu.json) read into typed entries, and a
// configuration's fields as plain integers: shared by the library (tuning_table.cpp, which reads
// BATCHSOLVE_TUNING_FILE at run time and the packed tables otherwise) and by the build step that packs
// the committed tables into the library (pack_tuning_tables.cpp), so both read a table the same way.
// Every family (small Cholesky, GEMM, large Cholesky, LDL^T, TRSM, the CPU backend's vector path) is
// one table form: the same header, the same entry key (routine, precision, layout, n), its own typed
// configuration under best.config, read through its field list below.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "batchsolve/cholesky_large.hpp"
#include "batchsolve/tuning.hpp"
#include "batchsolve/vbatched_blas.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::tuning {

// One field of a configuration to and from JSON, by its C++ type; a value of the wrong type or out of
// range throws InvalidArgument naming the field.
inline void read_field(const nlohmann::json& j, const char* field, int& value) {
    // get<int> of a wider integer would wrap silently.
    if (!j.is_number_integer() || j.get<std::int64_t>() < std::numeric_limits<int>::min() ||
        (j.is_number_unsigned() ? j.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<int>::max())
                                : j.get<std::int64_t>() > std::numeric_limits<int>::max()))
        throw InvalidArgument("tuning table", field, "an integer within int's range");
    value = j.get<int>();
}
inline void read_field(const nlohmann::json& j, const char* field, bool& value) {
    if (!j.is_boolean()) throw InvalidArgument("tuning table", field, "true or false");
    value = j.get<bool>();
}
inline void read_field(const nlohmann::json& j, const char* field, Looking& value) {
    if (!j.is_string()) throw InvalidArgument("tuning table", field, "a string");
    value = parse_looking(j.get<std::string>());
}
inline nlohmann::ordered_json field_json(int value) { return value; }
inline nlohmann::ordered_json field_json(bool value) { return value; }
inline nlohmann::ordered_json field_json(Looking value) { return to_string(value); }

// Fields left out keep their defaults (older tables lack the newer fields).
inline CholeskyConfig config_from_json(const nlohmann::json& j) {
    CholeskyConfig c;
#define BATCHSOLVE_READ_FIELD(field) \
    if (const auto it = j.find(#field); it != j.end()) read_field(*it, #field, c.field);
    BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_READ_FIELD)
#undef BATCHSOLVE_READ_FIELD
    return c;
}

// A configuration as integers in BATCHSOLVE_CHOLESKY_CONFIG_FIELDS order (bool 0/1, Looking its
// enumerator's value), and back: the packed tables' form.
inline int field_int(int v) { return v; }
inline int field_int(bool v) { return v ? 1 : 0; }
inline int field_int(Looking v) { return static_cast<int>(v); }
inline void set_field(int v, int& f) { f = v; }
inline void set_field(int v, bool& f) { f = v != 0; }
inline void set_field(int v, Looking& f) { f = static_cast<Looking>(v); }
#define BATCHSOLVE_COUNT_FIELD(field) +1
inline constexpr int kConfigFieldCount = 0 BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_COUNT_FIELD);
#undef BATCHSOLVE_COUNT_FIELD
inline void config_to_ints(const CholeskyConfig& c, int* out) {
    int i = 0;
#define BATCHSOLVE_FIELD_TO_INT(field) out[i++] = field_int(c.field);
    BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_FIELD_TO_INT)
#undef BATCHSOLVE_FIELD_TO_INT
}
inline CholeskyConfig config_from_ints(const int* in) {
    CholeskyConfig c;
    int i = 0;
#define BATCHSOLVE_FIELD_FROM_INT(field) set_field(in[i++], c.field);
    BATCHSOLVE_CHOLESKY_CONFIG_FIELDS(BATCHSOLVE_FIELD_FROM_INT)
#undef BATCHSOLVE_FIELD_FROM_INT
    return c;
}

// ---- the other families' configurations ---------------------------------------------------------
// Each has a field list F(field) like BATCHSOLVE_CHOLESKY_CONFIG_FIELDS: JSON in, integers out (the
// packed form) and back. Enumerations are written as the public to_string names.

inline void read_field(const nlohmann::json& j, const char* field, CholeskyVariant& value) {
    if (!j.is_string()) throw InvalidArgument("tuning table", field, "a string");
    const std::string t = j.get<std::string>();
    if (t == "right" || t == "right_looking") value = CholeskyVariant::right_looking;
    else if (t == "left" || t == "left_looking") value = CholeskyVariant::left_looking;
    else if (t == "recursive") value = CholeskyVariant::recursive;
    else if (t == "vendor") value = CholeskyVariant::vendor;
    else throw InvalidArgument("tuning table", field, "right, left, recursive or vendor (got '" + t + "')");
}
inline void read_field(const nlohmann::json& j, const char* field, CholeskyDiagonal& value) {
    if (!j.is_string()) throw InvalidArgument("tuning table", field, "a string");
    const std::string t = j.get<std::string>();
    if (t == "fused") value = CholeskyDiagonal::fused;
    else if (t == "vendor") value = CholeskyDiagonal::vendor;
    else if (t == "leaf") value = CholeskyDiagonal::leaf;
    else throw InvalidArgument("tuning table", field, "fused, vendor or leaf (got '" + t + "')");
}
inline void read_field(const nlohmann::json& j, const char* field, PanelSolve& value) {
    if (!j.is_string()) throw InvalidArgument("tuning table", field, "a string");
    const std::string t = j.get<std::string>();
    if (t == "trsm") value = PanelSolve::trsm;
    else if (t == "inverse") value = PanelSolve::inverse;
    else throw InvalidArgument("tuning table", field, "trsm or inverse (got '" + t + "')");
}
inline void read_field(const nlohmann::json& j, const char* field, Potf2Strip& value) {
    if (!j.is_string()) throw InvalidArgument("tuning table", field, "a string");
    const std::string t = j.get<std::string>();
    if (t == "columns") value = Potf2Strip::columns;
    else if (t == "warp") value = Potf2Strip::warp;
    else throw InvalidArgument("tuning table", field, "columns or warp (got '" + t + "')");
}
inline int field_int(CholeskyVariant v) { return static_cast<int>(v); }
inline int field_int(Potf2Strip v) { return static_cast<int>(v); }
inline int field_int(CholeskyDiagonal v) { return static_cast<int>(v); }
inline int field_int(PanelSolve v) { return static_cast<int>(v); }
inline void set_field(int v, CholeskyVariant& f) { f = static_cast<CholeskyVariant>(v); }
inline void set_field(int v, Potf2Strip& f) { f = static_cast<Potf2Strip>(v); }
inline void set_field(int v, CholeskyDiagonal& f) { f = static_cast<CholeskyDiagonal>(v); }
inline void set_field(int v, PanelSolve& f) { f = static_cast<PanelSolve>(v); }
inline nlohmann::ordered_json field_json(CholeskyVariant v) { return to_string(v); }
inline nlohmann::ordered_json field_json(Potf2Strip v) { return v == Potf2Strip::warp ? "warp" : "columns"; }
inline nlohmann::ordered_json field_json(CholeskyDiagonal v) {
    return v == CholeskyDiagonal::vendor ? "vendor" : v == CholeskyDiagonal::leaf ? "leaf" : "fused";
}
inline nlohmann::ordered_json field_json(PanelSolve v) { return v == PanelSolve::inverse ? "inverse" : "trsm"; }
// posv_mixed's chain: factor precisions by their to_string names ("none" for LowPrecision::automatic,
// a chain step left out), correction methods likewise; spelled here too, since the table packer links
// none of the library.
inline const char* mixed_name(LowPrecision p) {
    switch (p) {
        case LowPrecision::fp32: return "fp32";
        case LowPrecision::tf32: return "tf32";
        case LowPrecision::fp16: return "fp16";
        case LowPrecision::bf16: return "bf16";
        case LowPrecision::fp16_split: return "fp16_split";
        case LowPrecision::automatic: break;
    }
    return "none";
}
inline const char* mixed_name(CorrectionMethod m) {
    return m == CorrectionMethod::classical ? "classical" : m == CorrectionMethod::gmres ? "gmres" : "automatic";
}
inline void read_field(const nlohmann::json& j, const char* field, LowPrecision& value) {
    if (!j.is_string()) throw InvalidArgument("tuning table", field, "a string");
    const std::string t = j.get<std::string>();
    for (LowPrecision p : {LowPrecision::fp32, LowPrecision::tf32, LowPrecision::fp16, LowPrecision::bf16, LowPrecision::fp16_split})
        if (t == mixed_name(p)) {
            value = p;
            return;
        }
    if (t != "none") throw InvalidArgument("tuning table", field, "fp32, tf32, fp16, bf16, fp16_split or none (got '" + t + "')");
    value = LowPrecision::automatic;
}
inline void read_field(const nlohmann::json& j, const char* field, CorrectionMethod& value) {
    if (!j.is_string()) throw InvalidArgument("tuning table", field, "a string");
    const std::string t = j.get<std::string>();
    for (CorrectionMethod m : {CorrectionMethod::automatic, CorrectionMethod::classical, CorrectionMethod::gmres})
        if (t == mixed_name(m)) {
            value = m;
            return;
        }
    throw InvalidArgument("tuning table", field, "automatic, classical or gmres (got '" + t + "')");
}
inline int field_int(LowPrecision v) { return static_cast<int>(v); }
inline int field_int(CorrectionMethod v) { return static_cast<int>(v); }
inline void set_field(int v, LowPrecision& f) { f = static_cast<LowPrecision>(v); }
inline void set_field(int v, CorrectionMethod& f) { f = static_cast<CorrectionMethod>(v); }
inline nlohmann::ordered_json field_json(LowPrecision v) { return mixed_name(v); }
inline nlohmann::ordered_json field_json(CorrectionMethod v) { return mixed_name(v); }

// The tuned fields of each family (the table's best.config).
#define BATCHSOLVE_LARGE_TUNING_FIELDS(F) \
    F(nb) F(ib) F(variant) F(recursion_depth) F(strip) F(lookahead) F(diagonal) F(panel_solve) F(syrk_leaf) F(graph) \
    F(elementwise_threads)
#define BATCHSOLVE_LDLT_TUNING_FIELDS(F) F(panel_order) F(update_leaf)
#define BATCHSOLVE_TRSM_TUNING_FIELDS(F) F(inversion_from_order)
#define BATCHSOLVE_CPU_TUNING_FIELDS(F) F(simd_max_order)
#define BATCHSOLVE_MIXED_TUNING_FIELDS(F) \
    F(factor) F(method) F(second) F(shift_retry) F(next_step_cost_percent) F(leaf) F(panel_solve) F(solve_block) F(fused_solve) F(graph) \
        F(lookahead) F(solve_rows) F(update_width) F(tiled_leaf) F(fused_pass)

// The families a table's entries belong to, by routine name.
enum class Family { cholesky, gemm, large, ldlt, trsm, cpu, mixed };
inline constexpr Family kFamilies[] = {Family::cholesky, Family::gemm, Family::large, Family::ldlt,
                                       Family::trsm,     Family::cpu,  Family::mixed};
inline const char* to_string(Family f) {
    switch (f) {
        case Family::cholesky: return "cholesky";
        case Family::gemm: return "gemm";
        case Family::large: return "large";
        case Family::ldlt: return "ldlt";
        case Family::trsm: return "trsm";
        case Family::cpu: return "cpu";
        case Family::mixed: return "mixed";
    }
    return "?";
}
// The routine names of the entries: potrf, potrs, posv (small batched Cholesky); gemm_vbatched (the
// variable-size GEMM), gemm_vbatched_triangle (its one-triangle form for SYRK/HERK/SYR2K/HER2K),
// gemm_vbatched_edge (a size bin's ragged edges beside its interior of whole tiles: the region split);
// potrf_large; sytrf_nopiv (LDL^T's blocking); trsm_vbatched (its algorithm crossover);
// cpu_vector_path (the CPU backend's vector Cholesky: its switch-over to LAPACKE). false: unknown.
inline bool family_of(const std::string& routine, Family& family) {
    if (routine == "potrf" || routine == "potrs" || routine == "posv") family = Family::cholesky;
    else if (routine == "gemm_vbatched" || routine == "gemm_vbatched_triangle" || routine == "gemm_vbatched_edge") family = Family::gemm;
    else if (routine == "potrf_large") family = Family::large;
    else if (routine == "sytrf_nopiv") family = Family::ldlt;
    else if (routine == "trsm_vbatched") family = Family::trsm;
    else if (routine == "cpu_vector_path") family = Family::cpu;
    else if (routine == "posv_mixed") family = Family::mixed;
    else return false;
    return true;
}
inline const char* kKnownRoutines =
    "potrf, potrs, posv, gemm_vbatched, gemm_vbatched_triangle, gemm_vbatched_edge, potrf_large, sytrf_nopiv, trsm_vbatched, "
    "cpu_vector_path or posv_mixed";

// Small Cholesky looks its entries up by exact n; every other family's n is the upper end of a size
// class (the entry serves sizes above the next smaller entry's n up to its own; above the largest n,
// the largest entry).
inline bool exact_n(Family f) { return f == Family::cholesky; }

// The other families' configurations as the tables hold them (fields as in their F lists).
// Large Cholesky: LargeCholeskyConfig's tuned fields (syrk_leaf: the order up to which an update of a
// triangle is one SYRK; above it two half triangles and a GEMM). The initialisers are the safe
// default of a case no table has (valid for every n; the middle size class of the first H100 runs).
struct LargeTuning {
    int nb = 256, ib = 16;
    CholeskyVariant variant = CholeskyVariant::right_looking;
    int recursion_depth = 1;
    Potf2Strip strip = Potf2Strip::warp;
    bool lookahead = true;
    CholeskyDiagonal diagonal = CholeskyDiagonal::fused;
    PanelSolve panel_solve = PanelSolve::trsm;
    int syrk_leaf = 512;
    bool graph = false;
    int elementwise_threads = 256;
};

// posv_mixed's automatic chain per precision and size class of n: the first refined step's factor
// precision and correction method, an optional second refined step (none: straight to the FP64
// fallback, which always ends the chain when allowed), and whether a factor that is not positive
// definite is retried once with a diagonal shift (options.shift_units) or the chain moves on at once.
// next_step_cost_percent bounds each refined step's cost (RefinementOptions::refinement_budget): the
// chain's next step is taken to cost this percentage of the step's measured factor time, and the step
// ends once finishing it is projected to cost more (0: unbounded).
// The initialisers are the chain of a case no table has: the FP32 factor, classical then GMRES, the
// shift retry, then FP64, the next step taken at 100% of the factor (a lower bound wherever the
// fallback factors the same matrix in a higher precision, so the bound switches only when refinement
// would cost more than any factorisation).
struct MixedTuning {
    LowPrecision factor = LowPrecision::fp32;
    CorrectionMethod method = CorrectionMethod::automatic;
    LowPrecision second = LowPrecision::automatic;
    bool shift_retry = true;
    int next_step_cost_percent = 100;
    // The tensor-core factor's blocking (mixed_factor_backend.hpp's MixedFactorConfig): the order of
    // its diagonal leaves (one cuSOLVER SPOTRF each) and of its off-diagonal solve leaves; trsm solves
    // those by cuBLAS STRSM, inverse by a GEMM with each leaf's inverse; solve_block as
    // MixedFactorConfig's (0: STRSV on the whole); fused_solve (with inverse): each triangle of M^-1
    // for one right-hand side in one kernel launch through the leaves' inverses.
    int leaf = 512;
    PanelSolve panel_solve = PanelSolve::trsm;
    int solve_block = 0;
    bool fused_solve = false;
    // The tensor-core factor captured as a CUDA graph on its first call with given arguments and
    // replayed after (its chain of leaves is hundreds of short library calls).
    bool graph = false;
    // The tensor-core factor right-looking in blocks of `leaf` columns with lookahead instead of
    // recursive: each block's diagonal leaf, its inverse, its panel's solve and low-precision copy on a
    // second stream while the main one runs the previous block's trailing update, the next block
    // column first, the rest in pieces of update_width columns (a multiple of leaf; 0: one piece).
    bool lookahead = false;
    // M^-1 for one right-hand side in one launch per triangle in block rows of solve_rows (64 or 128;
    // 0: cuBLAS STRSV or solve_block): each block row's products with the solved blocks as they are
    // published, then its diagonal block's inverse (formed after the factor), with S applied in them.
    int solve_rows = 0;
    int update_width = 0;
    // The diagonal leaves (order <= leaf) factored and inverted by one launch of a ticketed 32 x 32
    // tile kernel instead of cuSOLVER SPOTRF followed by the inverse's identity + STRSM (the inverse is
    // then always formed and the off-diagonal solve leaves use it, as with panel_solve inverse).
    bool tiled_leaf = false;
    // Each classical refinement pass for one right-hand side fused (core/refinement.hpp): after M^-1,
    // one launch forms A (x + d) from the stored triangle and one finishes x += d, r = b - A x, its
    // conversion down (overflow flagged on the device) and both norms, fetched in one read. The value is
    // the product kernel's strip: tile rows of 32 per block (0: off, the separate primitives).
    int fused_pass = 0;
};

// The most integers any family's configuration packs into.
#define BATCHSOLVE_COUNT_FIELD(field) +1
inline constexpr int kGemmFieldCount = 0 BATCHSOLVE_GEMM_CONFIG_FIELDS(BATCHSOLVE_COUNT_FIELD);
inline constexpr int kLargeFieldCount = 0 BATCHSOLVE_LARGE_TUNING_FIELDS(BATCHSOLVE_COUNT_FIELD);
inline constexpr int kLdltFieldCount = 0 BATCHSOLVE_LDLT_TUNING_FIELDS(BATCHSOLVE_COUNT_FIELD);
inline constexpr int kTrsmFieldCount = 0 BATCHSOLVE_TRSM_TUNING_FIELDS(BATCHSOLVE_COUNT_FIELD);
inline constexpr int kCpuFieldCount = 0 BATCHSOLVE_CPU_TUNING_FIELDS(BATCHSOLVE_COUNT_FIELD);
inline constexpr int kMixedFieldCount = 0 BATCHSOLVE_MIXED_TUNING_FIELDS(BATCHSOLVE_COUNT_FIELD);
#undef BATCHSOLVE_COUNT_FIELD
constexpr int max_of(std::initializer_list<int> v) {
    int m = 0;
    for (int x : v) m = x > m ? x : m;
    return m;
}
inline constexpr int kMaxFieldCount =
    max_of({kConfigFieldCount, kGemmFieldCount, kLargeFieldCount, kLdltFieldCount, kTrsmFieldCount, kCpuFieldCount,
            kMixedFieldCount});

// One family's configuration in its packed form: kMaxFieldCount integers (unused ones 0).
struct Fields {
    int v[kMaxFieldCount] = {};
};

// Generic walkers over a struct with an F list: JSON object -> struct (fields left out keep the
// struct's defaults, a field the family does not have is refused by name), struct -> integers and back.
#define BATCHSOLVE_TUNING_FAMILY_IO(Type, LIST, suffix)                                                          \
    inline Type suffix##_from_json(const nlohmann::json& j) {                                                    \
        Type c{};                                                                                                \
        if (!j.is_object()) throw InvalidArgument("tuning table", "best.config", "a JSON object");              \
        for (auto it = j.begin(); it != j.end(); ++it) {                                                         \
            bool known = false;                                                                                  \
            LIST(BATCHSOLVE_TUNING_KNOWN)                                                                        \
            if (!known) throw InvalidArgument("tuning table", it.key(), "a field of " #Type ":" LIST(BATCHSOLVE_TUNING_NAME)); \
        }                                                                                                        \
        LIST(BATCHSOLVE_TUNING_READ)                                                                             \
        return c;                                                                                                \
    }                                                                                                            \
    inline Fields suffix##_to_fields(const Type& c) {                                                            \
        Fields f;                                                                                                \
        int i = 0;                                                                                               \
        LIST(BATCHSOLVE_TUNING_TO_INT)                                                                           \
        return f;                                                                                                \
    }                                                                                                            \
    inline Type suffix##_from_fields(const Fields& f) {                                                          \
        Type c{};                                                                                                \
        int i = 0;                                                                                               \
        LIST(BATCHSOLVE_TUNING_FROM_INT)                                                                         \
        return c;                                                                                                \
    }                                                                                                            \
    inline std::string suffix##_to_json(const Type& c) {                                                         \
        nlohmann::ordered_json j = nlohmann::ordered_json::object();                                             \
        LIST(BATCHSOLVE_TUNING_WRITE)                                                                            \
        return j.dump();                                                                                         \
    }
#define BATCHSOLVE_TUNING_KNOWN(field) known = known || it.key() == #field;
#define BATCHSOLVE_TUNING_NAME(field) " " #field
#define BATCHSOLVE_TUNING_READ(field) \
    if (const auto it = j.find(#field); it != j.end()) read_field(*it, #field, c.field);
#define BATCHSOLVE_TUNING_TO_INT(field) f.v[i++] = field_int(c.field);
#define BATCHSOLVE_TUNING_FROM_INT(field) set_field(f.v[i++], c.field);
#define BATCHSOLVE_TUNING_WRITE(field) j[#field] = field_json(c.field);
BATCHSOLVE_TUNING_FAMILY_IO(GemmConfig, BATCHSOLVE_GEMM_CONFIG_FIELDS, gemm)
BATCHSOLVE_TUNING_FAMILY_IO(LargeTuning, BATCHSOLVE_LARGE_TUNING_FIELDS, large)
BATCHSOLVE_TUNING_FAMILY_IO(LdltBlocking, BATCHSOLVE_LDLT_TUNING_FIELDS, ldlt)
BATCHSOLVE_TUNING_FAMILY_IO(TrsmCrossover, BATCHSOLVE_TRSM_TUNING_FIELDS, trsm)
BATCHSOLVE_TUNING_FAMILY_IO(CpuSwitchOver, BATCHSOLVE_CPU_TUNING_FIELDS, cpu)
BATCHSOLVE_TUNING_FAMILY_IO(MixedTuning, BATCHSOLVE_MIXED_TUNING_FIELDS, mixed)
#undef BATCHSOLVE_TUNING_KNOWN
#undef BATCHSOLVE_TUNING_NAME
#undef BATCHSOLVE_TUNING_READ
#undef BATCHSOLVE_TUNING_TO_INT
#undef BATCHSOLVE_TUNING_FROM_INT
#undef BATCHSOLVE_TUNING_WRITE
#undef BATCHSOLVE_TUNING_FAMILY_IO

inline Fields cholesky_to_fields(const CholeskyConfig& c) {
    Fields f;
    config_to_ints(c, f.v);
    return f;
}

// An entry's best.config of family f in the packed form (InvalidArgument naming a bad field).
inline Fields fields_from_json(Family f, const nlohmann::json& j) {
    switch (f) {
        case Family::cholesky: return cholesky_to_fields(config_from_json(j));
        case Family::gemm: return gemm_to_fields(gemm_from_json(j));
        case Family::large: return large_to_fields(large_from_json(j));
        case Family::ldlt: return ldlt_to_fields(ldlt_from_json(j));
        case Family::trsm: return trsm_to_fields(trsm_from_json(j));
        case Family::cpu: return cpu_to_fields(cpu_from_json(j));
        case Family::mixed: {
            const MixedTuning m = mixed_from_json(j);
            if (m.next_step_cost_percent < 0)
                throw InvalidArgument("tuning table", "next_step_cost_percent",
                                      ">= 0 (0: unbounded; got " + std::to_string(m.next_step_cost_percent) + ")");
            if (m.leaf < 32 || m.leaf > 8192)
                throw InvalidArgument("tuning table", "leaf", "32 <= leaf <= 8192 (got " + std::to_string(m.leaf) + ")");
            if (m.solve_block < 0)
                throw InvalidArgument("tuning table", "solve_block", ">= 0 (got " + std::to_string(m.solve_block) + ")");
            if (m.solve_rows != 0 && m.solve_rows != 64 && m.solve_rows != 128)
                throw InvalidArgument("tuning table", "solve_rows", "0, 64 or 128 (got " + std::to_string(m.solve_rows) + ")");
            if (m.update_width < 0)
                throw InvalidArgument("tuning table", "update_width", ">= 0 (got " + std::to_string(m.update_width) + ")");
            if (m.fused_pass < 0 || m.fused_pass > 64)
                throw InvalidArgument("tuning table", "fused_pass", "0 <= fused_pass <= 64 (got " + std::to_string(m.fused_pass) + ")");
            return mixed_to_fields(m);
        }
    }
    return Fields{};
}
// ... and back to the configuration's one-line JSON (tuned_config's answer, the round-trip tests).
inline std::string fields_to_json(Family f, const Fields& v) {
    switch (f) {
        case Family::cholesky: return to_string(config_from_ints(v.v));
        case Family::gemm: return gemm_to_json(gemm_from_fields(v));
        case Family::large: return large_to_json(large_from_fields(v));
        case Family::ldlt: return ldlt_to_json(ldlt_from_fields(v));
        case Family::trsm: return trsm_to_json(trsm_from_fields(v));
        case Family::cpu: return cpu_to_json(cpu_from_fields(v));
        case Family::mixed: return mixed_to_json(mixed_from_fields(v));
    }
    return "{}";
}

// A table as its file says: provenance (device, CUDA, date, commit, batch) and every entry's case and
// winning configuration. The evidence (runner-up, timings) is not read.
struct TableEntry {
    std::string routine, precision, layout;  // "potrf", "s", "column_major" | "interleaved" | "chunked"
    int n = 0;
    Family family = Family::cholesky;
    CholeskyConfig config;       // family cholesky: the configuration
    Fields fields;               // every family: the configuration packed
    std::string provenance;      // the entry's own note ("" if none): where it was measured
};
struct ParsedTable {
    std::string description;  // "<origin>: <device>, CUDA <version>, <date>, commit <c>, batch <b>"
    int arch_number = 0;      // the table's own "arch_number" (0: not recorded; the CPU's table: 0)
    int batch = 0;            // matrices per batch it was tuned at (0: not recorded)
    std::vector<TableEntry> entries;
};

// Throws Error naming `origin` (and the entry, and the field where one is at fault) when the text is
// not a JSON object, or a member is missing or of the wrong type or range; the JSON library's own
// exceptions never escape (they did: found by data/fuzz/fuzz_tuning_json).
inline ParsedTable parse_table_json(const std::string& text, const std::string& origin) {
    ParsedTable t;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) throw Error("tuning table " + origin + ": not a JSON object");
    std::string where = "header";
    try {
        int value = 0;
        if (j.contains("batch")) read_field(j["batch"], "batch", value), t.batch = value;
        if (j.contains("arch_number")) read_field(j["arch_number"], "arch_number", value), t.arch_number = value;
        std::ostringstream d;
        d << origin << ": " << j.value("device", std::string("?")) << ", CUDA " << j.value("cuda_version", std::string("?"))
          << ", " << j.value("date", std::string("?")) << ", commit " << j.value("commit", std::string("?"));
        if (t.batch > 0) d << ", batch " << t.batch;  // the small-Cholesky tables' tuning batch
        t.description = d.str();
        const nlohmann::json entries = j.value("entries", nlohmann::json::array());
        if (!entries.is_array()) throw Error("tuning table " + origin + ": 'entries' is not an array");
        for (std::size_t k = 0; k < entries.size(); ++k) {
            where = "entry " + std::to_string(k);
            const nlohmann::json& e = entries[k];
            TableEntry entry;
            entry.routine = e.at("routine").get<std::string>();
            where += " (" + entry.routine + ")";
            if (!family_of(entry.routine, entry.family))
                throw InvalidArgument("tuning table", "routine", std::string("one of ") + kKnownRoutines + " (got '" +
                                                                     entry.routine + "')");
            entry.precision = e.at("precision").get<std::string>();
            if (entry.precision.size() != 1 || std::string("sdcz").find(entry.precision[0]) == std::string::npos)
                throw InvalidArgument("tuning table", "precision", "s, d, c or z (got '" + entry.precision + "')");
            entry.layout = e.at("layout").get<std::string>();
            read_field(e.at("n"), "n", entry.n);
            if (entry.n < 0) throw InvalidArgument("tuning table", "n", "n >= 0 (got " + std::to_string(entry.n) + ")");
            if (const auto p = e.find("provenance"); p != e.end()) {
                if (!p->is_string()) throw InvalidArgument("tuning table", "provenance", "a string");
                entry.provenance = p->get<std::string>();
            }
            const nlohmann::json& config = e.at("best").at("config");
            where += " best.config";
            entry.fields = fields_from_json(entry.family, config);
            if (entry.family == Family::cholesky) entry.config = config_from_ints(entry.fields.v);
            t.entries.push_back(std::move(entry));
        }
    } catch (const nlohmann::json::exception& x) {
        throw Error("tuning table " + origin + ": " + where + ": " + x.what());
    } catch (const InvalidArgument& x) {  // a configuration field: named, now with the file and entry
        throw Error("tuning table " + origin + ": " + where + ": " + x.what());
    }
    return t;
}

}  // namespace batchsolve::tuning
