// The large-matrix Cholesky solvers of cholesky_large.hpp: argument and configuration checks, the
// table of default configurations and dispatch to the context's backend (posv_mixed: posv_mixed.cpp).
#include "batchsolve/cholesky_large.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "batchsolve/buffer.hpp"
#include "batchsolve/checked_size.hpp"
#include "checks.hpp"
#include "cholesky_large_backend.hpp"
#include "refinement.hpp"
#include "tuning_json.hpp"
#include "tuning_table.hpp"

namespace batchsolve {

const char* to_string(CholeskyVariant v) {
    switch (v) {
        case CholeskyVariant::automatic: return "automatic";
        case CholeskyVariant::right_looking: return "right";
        case CholeskyVariant::left_looking: return "left";
        case CholeskyVariant::recursive: return "recursive";
        case CholeskyVariant::vendor: return "vendor";
    }
    return "?";
}

CholeskyVariant parse_cholesky_variant(const std::string& text) {
    if (text == "automatic") return CholeskyVariant::automatic;
    if (text == "right" || text == "right_looking") return CholeskyVariant::right_looking;
    if (text == "left" || text == "left_looking") return CholeskyVariant::left_looking;
    if (text == "recursive") return CholeskyVariant::recursive;
    if (text == "vendor") return CholeskyVariant::vendor;
    throw InvalidArgument("parse_cholesky_variant", "text",
                          "'automatic', 'right', 'left', 'recursive' or 'vendor' (got '" + text + "')");
}

const char* to_string(CholeskyDiagonal d) {
    switch (d) {
        case CholeskyDiagonal::automatic: return "automatic";
        case CholeskyDiagonal::fused: return "fused";
        case CholeskyDiagonal::vendor: return "vendor";
        case CholeskyDiagonal::leaf: return "leaf";
    }
    return "?";
}

CholeskyDiagonal parse_cholesky_diagonal(const std::string& text) {
    if (text == "automatic") return CholeskyDiagonal::automatic;
    if (text == "fused") return CholeskyDiagonal::fused;
    if (text == "vendor") return CholeskyDiagonal::vendor;
    if (text == "leaf") return CholeskyDiagonal::leaf;
    throw InvalidArgument("parse_cholesky_diagonal", "text", "'automatic', 'fused', 'vendor' or 'leaf' (got '" + text + "')");
}

const char* to_string(PanelSolve p) {
    switch (p) {
        case PanelSolve::automatic: return "automatic";
        case PanelSolve::trsm: return "trsm";
        case PanelSolve::inverse: return "inverse";
    }
    return "?";
}

PanelSolve parse_panel_solve(const std::string& text) {
    if (text == "automatic") return PanelSolve::automatic;
    if (text == "trsm") return PanelSolve::trsm;
    if (text == "inverse") return PanelSolve::inverse;
    throw InvalidArgument("parse_panel_solve", "text", "'automatic', 'trsm' or 'inverse' (got '" + text + "')");
}

const char* to_string(Potf2Strip s) {
    switch (s) {
        case Potf2Strip::automatic: return "automatic";
        case Potf2Strip::columns: return "columns";
        case Potf2Strip::warp: return "warp";
    }
    return "?";
}

// ---- configurations ------------------------------------------------------------------------------------

namespace cholesky_large_detail {

std::string config_problem(const LargeCholeskyConfig& c) {
    if (c.nb < kMinPanel || c.nb > kMaxPanel)
        return "nb: " + std::to_string(kMinPanel) + " <= nb <= " + std::to_string(kMaxPanel) + " (got " + std::to_string(c.nb) + ")";
    if (!valid_inner_blocking(c.ib)) return "ib: 8, 16 or 32 (got " + std::to_string(c.ib) + ")";
    if (c.nb % c.ib != 0) return "nb: a multiple of ib (got nb = " + std::to_string(c.nb) + ", ib = " + std::to_string(c.ib) + ")";
    if (c.recursion_depth < 0 || c.recursion_depth > kMaxRecursionDepth)
        return "recursion_depth: 0 <= recursion_depth <= " + std::to_string(kMaxRecursionDepth) + " (got " +
               std::to_string(c.recursion_depth) + ")";
    if (c.variant == CholeskyVariant::automatic) return "variant: resolved before the check";
    if (c.strip == Potf2Strip::automatic) return "strip: resolved before the check";
    if (c.diagonal == CholeskyDiagonal::automatic) return "diagonal: resolved before the check";
    if (c.diagonal == CholeskyDiagonal::leaf && c.nb > limits::large_leaf_max_order)
        return "nb: at most " + std::to_string(limits::large_leaf_max_order) + " with diagonal = leaf (got " + std::to_string(c.nb) + ")";
    if (c.panel_solve == PanelSolve::automatic) return "panel_solve: resolved before the check";
    if (c.syrk_leaf < kMinSyrkLeaf)
        return "syrk_leaf: syrk_leaf >= " + std::to_string(kMinSyrkLeaf) + " (got " + std::to_string(c.syrk_leaf) + ")";
    if (c.elementwise_threads < 32 || c.elementwise_threads > 1024 || c.elementwise_threads % 32 != 0)
        return "elementwise_threads: a multiple of 32 from 32 to 1024 (got " + std::to_string(c.elementwise_threads) + ")";
    return "";
}

// The automatic fields from the tuning table (libsolver/tuning/sm<arch>-large.json: per precision and
// size class of n), else its safe default (tuning_json.hpp's LargeTuning). The table's lookahead and
// graph apply where the caller left the whole blocking automatic (nb, ib, variant, depth, strip,
// diagonal and panel_solve): a caller who pins the blocking keeps its own.
bool table_blocking(const LargeCholeskyConfig& c) {
    return c.nb == 0 && c.ib == 0 && c.recursion_depth == -1 && c.variant == CholeskyVariant::automatic &&
           c.strip == Potf2Strip::automatic && c.diagonal == CholeskyDiagonal::automatic && c.panel_solve == PanelSolve::automatic;
}

template <class T>
LargeCholeskyConfig resolve(const LargeCholeskyConfig& config, int n, int arch) {
    const tuning::LargeTuning row = tuning::large_tuning(precision_v<T>, n, arch);
    LargeCholeskyConfig c = config;
    if (table_blocking(c)) {
        c.lookahead = row.lookahead;
        c.graph = c.graph || row.graph;
    }
    if (c.nb == 0) c.nb = row.nb;
    if (c.ib == 0) c.ib = row.ib;
    if (c.recursion_depth == -1) c.recursion_depth = row.recursion_depth;
    if (c.variant == CholeskyVariant::automatic) c.variant = row.variant;
    if (c.strip == Potf2Strip::automatic) c.strip = row.strip;
    if (c.diagonal == CholeskyDiagonal::automatic) c.diagonal = row.diagonal;
    if (c.panel_solve == PanelSolve::automatic) c.panel_solve = row.panel_solve;
    if (c.syrk_leaf == 0) c.syrk_leaf = row.syrk_leaf;
    if (c.elementwise_threads == 0) c.elementwise_threads = row.elementwise_threads;
    return c;
}

template LargeCholeskyConfig resolve<float>(const LargeCholeskyConfig&, int, int);
template LargeCholeskyConfig resolve<double>(const LargeCholeskyConfig&, int, int);

}  // namespace cholesky_large_detail

template <class T>
LargeCholeskyConfig cholesky_large_default_config(int n) {
    checks::require(n >= 0, "cholesky_large_default_config", "n", "n >= 0 (got " + std::to_string(n) + ")");
    return cholesky_large_detail::resolve<T>(LargeCholeskyConfig{}, n, kShippedTuningArch);
}

namespace {

void check_matrix_arguments(const char* routine, int n, const void* a, int lda) {
    checks::require(n >= 0, routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    checks::require(lda >= std::max(1, n), routine, "lda",
                    "lda >= max(1, n) (got lda = " + std::to_string(lda) + ", n = " + std::to_string(n) + ")");
    checks::require(n == 0 || a != nullptr, routine, "a", "non-null");
}

void check_uplo(const char* routine, Uplo uplo) {
    checks::require(uplo == Uplo::lower || uplo == Uplo::upper, routine, "uplo", "Uplo::lower or Uplo::upper");
}

}  // namespace

template <class T>
std::size_t potrf_workspace_size(int n, Context&) {
    checks::require(n >= 0, "potrf_workspace_size", "n", "n >= 0 (got " + std::to_string(n) + ")");
    // Both backends factor in place: panels, TRSM and updates all work on A itself, and the info of
    // the panels is written straight into the caller's info.
    return 0;
}

template <class T>
void potrf(Uplo uplo, int n, T* a, int lda, int* info, const LargeCholeskyConfig& config, Context& ctx,
           CholeskyPhaseTimes* times) {
    constexpr const char* routine = "potrf";
    check_uplo(routine, uplo);
    check_matrix_arguments(routine, n, a, lda);
    checks::require(info != nullptr, routine, "info", "non-null");
    const LargeCholeskyConfig resolved = cholesky_large_detail::resolve<T>(config, n, tuning::context_arch(ctx));
    const std::string problem = cholesky_large_detail::config_problem(resolved);
    if (!problem.empty()) {
        const std::size_t colon = problem.find(':');
        throw InvalidArgument(routine, "config." + problem.substr(0, colon), problem.substr(colon + 2));
    }
    if (times) *times = CholeskyPhaseTimes{};
    BATCHSOLVE_ON_BACKEND(ctx, large_factor<T>(uplo, n, a, lda, info, resolved, cholesky_large_detail::table_blocking(config), times, ctx));
}

template <class T>
void potrf(Uplo uplo, int n, T* a, int lda, int* info, Context& ctx) {
    potrf<T>(uplo, n, a, lda, info, LargeCholeskyConfig{}, ctx, nullptr);
}

template <class T>
void potrs(Uplo uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb, Context& ctx) {
    constexpr const char* routine = "potrs";
    check_uplo(routine, uplo);
    check_matrix_arguments(routine, n, a, lda);
    checks::require(nrhs >= 0, routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    checks::check_dense_rhs(routine, "b", "ldb", n, nrhs, b, ldb);
    if (n == 0 || nrhs == 0) return;
    checks::require(!checks::overlaps(b, checks::dense_bytes<T>(n, nrhs, ldb), a, checks::dense_bytes<T>(n, n, lda)),
                    routine, "b", "must not overlap a");
    BATCHSOLVE_ON_BACKEND(ctx, large_solve<T>(uplo, n, nrhs, a, lda, b, ldb, ctx));
}

#define INSTANTIATE(T)                                                                                            \
    template LargeCholeskyConfig cholesky_large_default_config<T>(int);                                          \
    template std::size_t potrf_workspace_size<T>(int, Context&);                                                 \
    template void potrf<T>(Uplo, int, T*, int, int*, Context&);                                                  \
    template void potrf<T>(Uplo, int, T*, int, int*, const LargeCholeskyConfig&, Context&, CholeskyPhaseTimes*); \
    template void potrs<T>(Uplo, int, int, const T*, int, T*, int, Context&);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

}  // namespace batchsolve
