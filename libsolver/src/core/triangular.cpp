// The variable-size triangular routines of vbatched_triangular.hpp: whole-call argument checks, the
// three entry levels (checked, _max, _max_nocheck) written once over the backends' primitives, and the
// enumerations' names.
#include "batchsolve/vbatched_triangular.hpp"

#include <string>

#include "batchsolve/buffer.hpp"
#include "batchsolve/limits.hpp"
#include "checks.hpp"
#include "triangular_backend.hpp"
#include "tuning_table.hpp"

namespace batchsolve {

const char* to_string(Diag d) { return d == Diag::unit ? "unit" : "non_unit"; }

Diag parse_diag(const std::string& text) {
    if (text == "non_unit" || text == "N" || text == "n") return Diag::non_unit;
    if (text == "unit" || text == "U" || text == "u") return Diag::unit;
    throw InvalidArgument("parse_diag", "text", "'non_unit' (N) or 'unit' (U) (got '" + text + "')");
}

const char* to_string(TrsmAlgorithm a) {
    switch (a) {
        case TrsmAlgorithm::automatic: return "automatic";
        case TrsmAlgorithm::inversion: return "inversion";
        case TrsmAlgorithm::recursive: return "recursive";
    }
    return "?";
}

TrsmAlgorithm parse_trsm_algorithm(const std::string& text) {
    if (text == "automatic") return TrsmAlgorithm::automatic;
    if (text == "inversion") return TrsmAlgorithm::inversion;
    if (text == "recursive") return TrsmAlgorithm::recursive;
    throw InvalidArgument("parse_trsm_algorithm", "text",
                          "one of automatic, inversion, recursive (got '" + text + "')");
}

std::string triangular_config_problem(const TriangularConfig& c) {
    auto within = [](int v, int lo, int hi) { return v >= lo && v <= hi; };
    if (c.trsm_algorithm != TrsmAlgorithm::automatic && c.trsm_algorithm != TrsmAlgorithm::inversion &&
        c.trsm_algorithm != TrsmAlgorithm::recursive)
        return "trsm_algorithm: not one of automatic, inversion, recursive";
    if (c.inversion_from_order < -1) return "inversion_from_order: -1 (the tuning table's crossover) or >= 0";
    // One warp holds a leaf triangle's rows, one lane each.
    constexpr int warp_rows = limits::triangular_max_leaf;
    if (!within(c.leaf_order, 1, warp_rows)) return "leaf_order: must be 1..32 (one warp's rows)";
    if (!within(c.inversion_block, 1, warp_rows)) return "inversion_block: must be 1..32 (one warp's rows)";
    if (!within(c.columns_per_thread, 1, 4)) return "columns_per_thread: must be 1..4 (more spills registers)";
    if (!within(c.warps_per_block, 1, 32)) return "warps_per_block: must be 1..32 (1024 threads)";
    if (!within(c.potrf_panel, 1, warp_rows)) return "potrf_panel: must be 1..32 (one warp's rows)";
    if (!within(c.column_blocks, 0, 65535)) return "column_blocks: must be 0..65535 (the grid's y limit)";
    return "";
}

namespace {

using checks::require;
using triangular_detail::CheckSpec;
using triangular_detail::Maxima;

void check_config(const TriangularConfig& config, const char* routine) {
    const std::string problem = triangular_config_problem(config);
    if (problem.empty()) return;
    const std::string field = "config." + problem.substr(0, problem.find(':'));
    throw InvalidArgument(routine, field, problem.substr(problem.find(':') + 2));
}

// The whole-call arguments of TRMM/TRSM: enumerators, batch, non-null arrays, maxima (when given).
void check_call(const char* routine, Side side, Uplo uplo, Op op, Diag diag, const void* m, const void* n,
                const void* a, const void* lda, const void* b, const void* ldb, int batch, const int* max_m,
                const int* max_n, const int* info, bool info_needed, const TriangularConfig& config) {
    require(side == Side::left || side == Side::right, routine, "side", "Side::left or Side::right");
    require(uplo == Uplo::lower || uplo == Uplo::upper, routine, "uplo", "Uplo::lower or Uplo::upper");
    require(op == Op::no_trans || op == Op::trans || op == Op::conj_trans, routine, "op",
            "Op::no_trans, Op::trans or Op::conj_trans");
    require(diag == Diag::non_unit || diag == Diag::unit, routine, "diag", "Diag::non_unit or Diag::unit");
    require(batch >= 0, routine, "batch", "batch >= 0 (got " + std::to_string(batch) + ")");
    if (max_m) require(*max_m >= 0, routine, "max_m", "max_m >= 0 (got " + std::to_string(*max_m) + ")");
    if (max_n) require(*max_n >= 0, routine, "max_n", "max_n >= 0 (got " + std::to_string(*max_n) + ")");
    check_config(config, routine);
    if (batch == 0) return;
    require(m != nullptr, routine, "m", "non-null while batch > 0");
    require(n != nullptr, routine, "n", "non-null while batch > 0");
    require(a != nullptr, routine, "a", "non-null while batch > 0");
    require(lda != nullptr, routine, "lda", "non-null while batch > 0");
    require(b != nullptr, routine, "b", "non-null while batch > 0");
    require(ldb != nullptr, routine, "ldb", "non-null while batch > 0");
    if (info_needed) require(info != nullptr, routine, "info", "non-null while batch > 0");
}

void check_potrf_call(const char* routine, Uplo uplo, const void* n, const void* a, const void* lda, int batch,
                      const int* max_n, const int* info, const TriangularConfig& config) {
    require(uplo == Uplo::lower || uplo == Uplo::upper, routine, "uplo", "Uplo::lower or Uplo::upper");
    require(batch >= 0, routine, "batch", "batch >= 0 (got " + std::to_string(batch) + ")");
    if (max_n) require(*max_n >= 0, routine, "max_n", "max_n >= 0 (got " + std::to_string(*max_n) + ")");
    check_config(config, routine);
    if (batch == 0) return;
    require(n != nullptr, routine, "n", "non-null while batch > 0");
    require(a != nullptr, routine, "a", "non-null while batch > 0");
    require(lda != nullptr, routine, "lda", "non-null while batch > 0");
    require(info != nullptr, routine, "info", "non-null while batch > 0");
}

enum class Kind { trmm, trsm };

// The configuration with TRSM's crossover taken from the tuning table where it is -1 (for the largest
// triangle's order on the context's device): the backends see a resolved configuration only.
template <class T>
TriangularConfig with_crossover(const TriangularConfig& config, int order, Context& ctx) {
    TriangularConfig c = config;
    if (c.inversion_from_order < 0)
        c.inversion_from_order = tuned_trsm_crossover(precision_v<T>, order, tuning::context_arch(ctx)).inversion_from_order;
    return c;
}

template <class T>
void run_nocheck(Kind kind, Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,
                 const T* const* a, const int* lda, T* const* b, const int* ldb, int max_m, int max_n, int batch,
                 const TriangularConfig& config, Context& ctx) {
    if (batch == 0 || max_m == 0 || max_n == 0) return;
    if (kind == Kind::trmm)
        BATCHSOLVE_ON_BACKEND(ctx, trmm_vbatched(side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, max_m, max_n, batch,
                                               config, ctx));
    else
        BATCHSOLVE_ON_BACKEND(ctx, trsm_vbatched(side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, max_m, max_n, batch,
                                               with_crossover<T>(config, side == Side::left ? max_m : max_n, ctx), ctx));
}

// Checked and _max levels: the per-problem check writes info and the sizes to run (0 for an invalid
// problem), then the _max_nocheck primitive runs on those sizes.
template <class T>
void run_checked(Kind kind, const char* routine, Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n,
                 T alpha, const T* const* a, const int* lda, T* const* b, const int* ldb, const int* max_m,
                 const int* max_n, int batch, int* info, const TriangularConfig& config, Context& ctx) {
    check_call(routine, side, uplo, op, diag, m, n, a, lda, b, ldb, batch, max_m, max_n, info, true, config);
    if (batch == 0) return;
    Buffer<int> m_run(ctx, std::size_t(batch)), n_run(ctx, std::size_t(batch));
    CheckSpec spec;
    spec.side = side;
    spec.given_max_m = max_m ? *max_m : -1;
    spec.given_max_n = max_n ? *max_n : -1;
    const Maxima found =
        BATCHSOLVE_ON_BACKEND(ctx, check_vbatched<T>(spec, m, n, a, lda, b, ldb, batch, info, m_run.data(), n_run.data(), ctx));
    run_nocheck(kind, side, uplo, op, diag, m_run.data(), n_run.data(), alpha, a, lda, b, ldb, found.m, found.n, batch,
                config, ctx);
    // The run arrays are freed on return: wait until the backend's kernels have read them.
    if (ctx.backend() == Backend::cuda) ctx.synchronize();
}

}  // namespace

template <class T>
void trmm_vbatched(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha, const T* const* a,
                   const int* lda, T* const* b, const int* ldb, int batch, int* info, Context& ctx,
                   const TriangularConfig& config) {
    run_checked(Kind::trmm, "trmm_vbatched", side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, nullptr, nullptr,
                batch, info, config, ctx);
}

template <class T>
void trmm_vbatched_max(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha, const T* const* a,
                       const int* lda, T* const* b, const int* ldb, int max_m, int max_n, int batch, int* info,
                       Context& ctx, const TriangularConfig& config) {
    run_checked(Kind::trmm, "trmm_vbatched_max", side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, &max_m, &max_n,
                batch, info, config, ctx);
}

template <class T>
void trmm_vbatched_max_nocheck(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,
                               const T* const* a, const int* lda, T* const* b, const int* ldb, int max_m, int max_n,
                               int batch, Context& ctx, const TriangularConfig& config) {
    check_call("trmm_vbatched_max_nocheck", side, uplo, op, diag, m, n, a, lda, b, ldb, batch, &max_m, &max_n, nullptr,
               false, config);
    run_nocheck(Kind::trmm, side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, max_m, max_n, batch, config, ctx);
}

template <class T>
void trsm_vbatched(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha, const T* const* a,
                   const int* lda, T* const* b, const int* ldb, int batch, int* info, Context& ctx,
                   const TriangularConfig& config) {
    run_checked(Kind::trsm, "trsm_vbatched", side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, nullptr, nullptr,
                batch, info, config, ctx);
}

template <class T>
void trsm_vbatched_max(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha, const T* const* a,
                       const int* lda, T* const* b, const int* ldb, int max_m, int max_n, int batch, int* info,
                       Context& ctx, const TriangularConfig& config) {
    run_checked(Kind::trsm, "trsm_vbatched_max", side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, &max_m, &max_n,
                batch, info, config, ctx);
}

template <class T>
void trsm_vbatched_max_nocheck(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,
                               const T* const* a, const int* lda, T* const* b, const int* ldb, int max_m, int max_n,
                               int batch, Context& ctx, const TriangularConfig& config) {
    check_call("trsm_vbatched_max_nocheck", side, uplo, op, diag, m, n, a, lda, b, ldb, batch, &max_m, &max_n, nullptr,
               false, config);
    run_nocheck(Kind::trsm, side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, max_m, max_n, batch, config, ctx);
}

template <class T>
std::size_t trsm_vbatched_workspace_size(Side side, int max_m, int max_n, int batch, Context& ctx,
                                         const TriangularConfig& config) {
    const char* routine = "trsm_vbatched_workspace_size";
    require(side == Side::left || side == Side::right, routine, "side", "Side::left or Side::right");
    require(max_m >= 0, routine, "max_m", "max_m >= 0 (got " + std::to_string(max_m) + ")");
    require(max_n >= 0, routine, "max_n", "max_n >= 0 (got " + std::to_string(max_n) + ")");
    require(batch >= 0, routine, "batch", "batch >= 0 (got " + std::to_string(batch) + ")");
    check_config(config, routine);
    const int order = side == Side::left ? max_m : max_n;
    if (ctx.backend() != Backend::cuda) return 0;
    const TriangularConfig resolved = with_crossover<T>(config, order, ctx);
    if (!triangular_detail::inversion_chosen(order, resolved)) return 0;
    return triangular_detail::inversion_workspace_elements(order, batch, resolved) * sizeof(T);
}

namespace {
template <class T>
void potrf_checked(const char* routine, Uplo uplo, const int* n, T* const* a, const int* lda, const int* max_n,
                   int batch, int* info, Context& ctx, const TriangularConfig& config) {
    check_potrf_call(routine, uplo, n, a, lda, batch, max_n, info, config);
    if (batch == 0) return;
    Buffer<int> n_run(ctx, std::size_t(batch));
    CheckSpec spec;
    spec.potrf = true;
    spec.given_max_m = max_n ? *max_n : -1;
    const Maxima found = BATCHSOLVE_ON_BACKEND(
        ctx, check_vbatched<T>(spec, n, nullptr, a, lda, nullptr, nullptr, batch, info, n_run.data(), nullptr, ctx));
    if (found.m > 0)
        BATCHSOLVE_ON_BACKEND(ctx, potrf_vbatched(uplo, n_run.data(), a, lda, found.m, batch, info, false,
                                                  with_crossover<T>(config, found.m, ctx), ctx));
    if (ctx.backend() == Backend::cuda) ctx.synchronize();
}
}  // namespace

template <class T>
void potrf_vbatched(Uplo uplo, const int* n, T* const* a, const int* lda, int batch, int* info, Context& ctx,
                    const TriangularConfig& config) {
    potrf_checked("potrf_vbatched", uplo, n, a, lda, nullptr, batch, info, ctx, config);
}

template <class T>
void potrf_vbatched_max(Uplo uplo, const int* n, T* const* a, const int* lda, int max_n, int batch, int* info,
                        Context& ctx, const TriangularConfig& config) {
    potrf_checked("potrf_vbatched_max", uplo, n, a, lda, &max_n, batch, info, ctx, config);
}

template <class T>
void potrf_vbatched_max_nocheck(Uplo uplo, const int* n, T* const* a, const int* lda, int max_n, int batch, int* info,
                                Context& ctx, const TriangularConfig& config) {
    check_potrf_call("potrf_vbatched_max_nocheck", uplo, n, a, lda, batch, &max_n, info, config);
    if (batch == 0) return;
    BATCHSOLVE_ON_BACKEND(ctx, potrf_vbatched(uplo, n, a, lda, max_n, batch, info, true, config, ctx));
}

#define INSTANTIATE(T)                                                                                              \
    template void trmm_vbatched<T>(Side, Uplo, Op, Diag, const int*, const int*, T, const T* const*, const int*,    \
                                   T* const*, const int*, int, int*, Context&, const TriangularConfig&);            \
    template void trmm_vbatched_max<T>(Side, Uplo, Op, Diag, const int*, const int*, T, const T* const*, const int*,\
                                       T* const*, const int*, int, int, int, int*, Context&,                        \
                                       const TriangularConfig&);                                                    \
    template void trmm_vbatched_max_nocheck<T>(Side, Uplo, Op, Diag, const int*, const int*, T, const T* const*,    \
                                               const int*, T* const*, const int*, int, int, int, Context&,          \
                                               const TriangularConfig&);                                            \
    template void trsm_vbatched<T>(Side, Uplo, Op, Diag, const int*, const int*, T, const T* const*, const int*,    \
                                   T* const*, const int*, int, int*, Context&, const TriangularConfig&);            \
    template void trsm_vbatched_max<T>(Side, Uplo, Op, Diag, const int*, const int*, T, const T* const*, const int*,\
                                       T* const*, const int*, int, int, int, int*, Context&,                        \
                                       const TriangularConfig&);                                                    \
    template void trsm_vbatched_max_nocheck<T>(Side, Uplo, Op, Diag, const int*, const int*, T, const T* const*,    \
                                               const int*, T* const*, const int*, int, int, int, Context&,          \
                                               const TriangularConfig&);                                            \
    template std::size_t trsm_vbatched_workspace_size<T>(Side, int, int, int, Context&, const TriangularConfig&);    \
    template void potrf_vbatched<T>(Uplo, const int*, T* const*, const int*, int, int*, Context&,                   \
                                    const TriangularConfig&);                                                       \
    template void potrf_vbatched_max<T>(Uplo, const int*, T* const*, const int*, int, int, int*, Context&,          \
                                        const TriangularConfig&);                                                   \
    template void potrf_vbatched_max_nocheck<T>(Uplo, const int*, T* const*, const int*, int, int, int*, Context&,  \
                                                const TriangularConfig&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve
