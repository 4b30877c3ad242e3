// The variable-size BLAS-3 routines of vbatched_blas.hpp: arguments shared by the batch checked on the
// host (InvalidArgument), the per-problem check pass of the checked levels, and dispatch: the CPU runs
// each routine as its own BLAS call per problem, the GPU runs every routine on the one GEMM routine
// (SYRK/HERK as A op(A) on one triangle of C, SYR2K/HER2K as two of them, SYMM/HEMM with a symmetric
// operand).
#include <complex>
#include <string>

#include "batchsolve/vbatched_blas.hpp"
#include "blas3_internal.hpp"
#include "checks.hpp"

namespace batchsolve {

const char* to_string(Op op) {
    switch (op) {
        case Op::no_trans: return "no_trans";
        case Op::trans: return "trans";
        case Op::conj_trans: return "conj_trans";
    }
    return "?";
}

Op parse_op(const std::string& text) {
    if (text == "n" || text == "N" || text == "no_trans") return Op::no_trans;
    if (text == "t" || text == "T" || text == "trans") return Op::trans;
    if (text == "c" || text == "C" || text == "conj_trans") return Op::conj_trans;
    throw InvalidArgument("parse_op", "text", "'n', 't' or 'c' (got '" + text + "')");
}

const char* to_string(Side side) { return side == Side::left ? "left" : "right"; }

Side parse_side(const std::string& text) {
    if (text == "left" || text == "L" || text == "l") return Side::left;
    if (text == "right" || text == "R" || text == "r") return Side::right;
    throw InvalidArgument("parse_side", "text", "'left' or 'right' (got '" + text + "')");
}

// The dispatcher (blas3_detail::gemm_vbatched, the internal entry TRMM/TRSM call).
namespace blas3_detail {
template <class T>
void gemm_vbatched(Operand op_a, Operand op_b, VSize m, VSize n, VSize k, T alpha, const T* const* a, const int* lda,
                   const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int max_m, int max_n,
                   int max_k, int batch, Context& ctx, const GemmExtras& extras) {
    if (batch <= 0 || max_m <= 0 || max_n <= 0) return;
    BATCHSOLVE_ON_BACKEND(ctx, gemm_vbatched(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, max_m, max_n,
                                             max_k, batch, extras, ctx));
}
}  // namespace blas3_detail

namespace {

using blas3_detail::GemmExtras;
using blas3_detail::Operand;
using blas3_detail::ProblemChecks;

// Which of the three entry levels a call came through.
enum class Level { checked, max, nocheck };

std::string level_name(const char* base, Level level) {
    return std::string(base) + (level == Level::checked ? "" : level == Level::max ? "_max" : "_max_nocheck");
}

// The arguments every routine shares: batch, the per-problem arrays, info, the maxima.
struct Shared {
    std::string routine;
    Level level;
    int batch;
    void require(bool ok, const char* argument, const std::string& condition) const {
        checks::require(ok, routine.c_str(), argument, condition);
    }
    void array(const void* p, const char* argument) const {
        require(batch == 0 || p != nullptr, argument, "non-null when batch > 0");
    }
    void maximum(int value, const char* argument) const {
        if (level != Level::checked) require(value >= 0, argument, ">= 0 (got " + std::to_string(value) + ")");
    }
    void start(int* info) const {
        require(batch >= 0, "batch", ">= 0 (got " + std::to_string(batch) + ")");
        if (level != Level::nocheck) array(info, "info");
    }
};

// The per-problem pass of the checked levels: info filled, and at the checked level the maxima of the
// valid problems returned in max[] (the call's only synchronisation) and, when `uniform` is given,
// whether every problem is valid and of the same sizes. Returns the skip array.
const int* check_problems(ProblemChecks checks, const Shared& shared, int* info, int* max[3], Context& ctx,
                          bool* uniform = nullptr) {
    if (uniform) *uniform = false;
    if (shared.level == Level::nocheck) return nullptr;
    for (int s = 0; s < 3; ++s)
        if (checks.sizes[s].values != nullptr && shared.level == Level::max) checks.sizes[s].max = *max[s];
    blas3_detail::SizeSummary summary;
    blas3_detail::SizeSummary* reduce = shared.level == Level::checked ? &summary : nullptr;
    BATCHSOLVE_ON_BACKEND(ctx, check_vbatched(checks, shared.batch, info, reduce, ctx));
    if (reduce) {
        bool same = summary.invalid == 0;
        for (int s = 0; s < 3; ++s)
            if (checks.sizes[s].values != nullptr) {
                *max[s] = summary.max[s];
                same = same && summary.min[s] == summary.max[s];
            }
        if (uniform) *uniform = same;
    }
    return info;
}

ProblemChecks::Matrix matrix(const void* pointers, const int* ld, int pointer_position, int ld_position, int rows,
                             int cols) {
    ProblemChecks::Matrix x;
    x.pointers = static_cast<const void* const*>(pointers);
    x.ld = ld;
    x.pointer_position = pointer_position, x.ld_position = ld_position;
    x.rows_size = rows, x.cols_size = cols;
    return x;
}

// Ops each routine accepts (BLAS's): gemm any; syrk/syr2k n or t (real: c too, as t); herk/her2k n or c
// (real: t too).
Op normalised(Op op, bool complex) { return (!complex && op == Op::conj_trans) ? Op::trans : op; }

template <class T>
void gemm_impl(Level level, Op ta, Op tb, const int* m, const int* n, const int* k, T alpha, const T* const* a,
               const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int max_m,
               int max_n, int max_k, int batch, int* info, Context& ctx, const GemmConfig* config = nullptr) {
    namespace p = vbatched_arg;
    const Shared s{level_name("gemm_vbatched", level), level, batch};
    if (config != nullptr) {
        const std::string problem = gemm_config_problem(precision_v<T>, *config);
        if (!problem.empty()) {
            const std::size_t colon = problem.find(':');
            s.require(false, problem.substr(0, colon).c_str(), problem.substr(colon + 2));
        }
    }
    s.start(info);
    s.array(m, "m"), s.array(n, "n"), s.array(k, "k"), s.array(a, "a"), s.array(lda, "lda"), s.array(b, "b"),
        s.array(ldb, "ldb"), s.array(c, "c"), s.array(ldc, "ldc");
    s.maximum(max_m, "max_m"), s.maximum(max_n, "max_n"), s.maximum(max_k, "max_k");
    if (batch == 0) return;
    ta = normalised(ta, is_complex_v<T>), tb = normalised(tb, is_complex_v<T>);
    ProblemChecks pc;
    pc.sizes[0] = {m, p::gemm_m}, pc.sizes[1] = {n, p::gemm_n}, pc.sizes[2] = {k, p::gemm_k};
    pc.matrices[0] = matrix(a, lda, p::gemm_a, p::gemm_lda, ta == Op::no_trans ? 0 : 2, ta == Op::no_trans ? 2 : 0);
    pc.matrices[1] = matrix(b, ldb, p::gemm_b, p::gemm_ldb, tb == Op::no_trans ? 2 : 1, tb == Op::no_trans ? 1 : 2);
    pc.matrices[2] = matrix(c, ldc, p::gemm_c, p::gemm_ldc, 0, 1);
    int* max[3] = {&max_m, &max_n, &max_k};
    GemmExtras extras;
    extras.config = config;
    bool uniform = false;
    extras.skip = check_problems(pc, s, info, max, ctx, &uniform);
    if (uniform) {
        // every problem valid and of one size: the sizes are constants of the call (no per-problem size
        // loads, no blocks beyond a subgrid), and the kernel drops its bounds checks when the tiles fit
        extras.skip = nullptr;
        blas3_detail::gemm_vbatched(blas3_detail::operand_of(ta), blas3_detail::operand_of(tb),
                                    blas3_detail::VSize(nullptr, 0, max_m), blas3_detail::VSize(nullptr, 0, max_n),
                                    blas3_detail::VSize(nullptr, 0, max_k), alpha, a, lda, b, ldb, beta, c, ldc, max_m,
                                    max_n, max_k, batch, ctx, extras);
        return;
    }
    blas3_detail::gemm_vbatched(blas3_detail::operand_of(ta), blas3_detail::operand_of(tb), m, n, k, alpha, a, lda, b,
                                ldb, beta, c, ldc, max_m, max_n, max_k, batch, ctx, extras);
}

// SYRK/HERK (b == nullptr) and SYR2K/HER2K: C = alpha op(A) op(B)^T|H + alpha' op(B) op(A)^T|H + beta C.
template <class T>
void rank_k_impl(const char* base, bool two, bool hermitian, Level level, Uplo uplo, Op trans, const int* n, const int* k,
                 T alpha, const T* const* a, const int* lda, const T* const* b, const int* ldb, T beta, T* const* c,
                 const int* ldc, int max_n, int max_k, int batch, int* info, Context& ctx,
                 const GemmConfig* config = nullptr) {
    namespace p = vbatched_arg;
    const Shared s{level_name(base, level), level, batch};
    s.start(info);
    s.array(n, "n"), s.array(k, "k"), s.array(a, "a"), s.array(lda, "lda"), s.array(c, "c"), s.array(ldc, "ldc");
    if (two) s.array(b, "b"), s.array(ldb, "ldb");
    s.maximum(max_n, "max_n"), s.maximum(max_k, "max_k");
    constexpr bool complex = is_complex_v<T>;
    const bool herm = hermitian && complex;
    trans = normalised(trans, complex);
    if (complex)
        s.require(herm ? trans != Op::trans : trans != Op::conj_trans, "trans",
                  herm ? "no_trans or conj_trans for complex data" : "no_trans or trans for complex data");
    if (config != nullptr) {
        const std::string problem = gemm_config_problem(precision_v<T>, *config);
        if (!problem.empty()) {
            const std::size_t colon = problem.find(':');
            s.require(false, problem.substr(0, colon).c_str(), problem.substr(colon + 2));
        }
    }
    if (batch == 0) return;
    ProblemChecks pc;
    const int pos_a = two ? p::r2k_a : p::rk_a, pos_lda = two ? p::r2k_lda : p::rk_lda;
    const int pos_c = two ? p::r2k_c : p::rk_c, pos_ldc = two ? p::r2k_ldc : p::rk_ldc;
    pc.sizes[0] = {n, p::rk_n}, pc.sizes[1] = {k, p::rk_k};
    const int rows = trans == Op::no_trans ? 0 : 1, cols = 1 - rows;
    pc.matrices[0] = matrix(a, lda, pos_a, pos_lda, rows, cols);
    if (two) pc.matrices[1] = matrix(b, ldb, p::r2k_b, p::r2k_ldb, rows, cols);
    pc.matrices[2] = matrix(c, ldc, pos_c, pos_ldc, 0, 0);
    int unused = 0;
    int* max[3] = {&max_n, &max_k, &unused};
    const int* skip = check_problems(pc, s, info, max, ctx);
    if (max_n == 0) return;

    BATCHSOLVE_ON_BACKEND(ctx, rank_k_vbatched(herm, uplo, trans, n, k, alpha, a, lda, two ? b : nullptr,
                                               two ? ldb : nullptr, beta, c, ldc, max_n, max_k, batch, skip, config,
                                               ctx));
}

template <class T>
void symm_impl(const char* base, bool hermitian, Level level, Side side, Uplo uplo, const int* m, const int* n, T alpha,
               const T* const* a, const int* lda, const T* const* b, const int* ldb, T beta, T* const* c,
               const int* ldc, int max_m, int max_n, int batch, int* info, Context& ctx) {
    namespace p = vbatched_arg;
    const Shared s{level_name(base, level), level, batch};
    s.start(info);
    s.array(m, "m"), s.array(n, "n"), s.array(a, "a"), s.array(lda, "lda"), s.array(b, "b"), s.array(ldb, "ldb"),
        s.array(c, "c"), s.array(ldc, "ldc");
    s.maximum(max_m, "max_m"), s.maximum(max_n, "max_n");
    if (batch == 0) return;
    const bool herm = hermitian && is_complex_v<T>;
    ProblemChecks pc;
    pc.sizes[0] = {m, p::mm_m}, pc.sizes[1] = {n, p::mm_n};
    const int order = side == Side::left ? 0 : 1;
    pc.matrices[0] = matrix(a, lda, p::mm_a, p::mm_lda, order, order);
    pc.matrices[1] = matrix(b, ldb, p::mm_b, p::mm_ldb, 0, 1);
    pc.matrices[2] = matrix(c, ldc, p::mm_c, p::mm_ldc, 0, 1);
    int unused = 0;
    int* max[3] = {&max_m, &max_n, &unused};
    const int* skip = check_problems(pc, s, info, max, ctx);
    if (max_m == 0 || max_n == 0) return;

    BATCHSOLVE_ON_BACKEND(ctx, symmetric_mm_vbatched(herm, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc,
                                                     max_m, max_n, batch, skip, ctx));
}

}  // namespace

// ---- the public entry points --------------------------------------------------------------------------

template <class T>
void gemm_vbatched(Op ta, Op tb, const int* m, const int* n, const int* k, T alpha, const T* const* a, const int* lda,
                   const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int batch, int* info,
                   Context& ctx) {
    gemm_impl(Level::checked, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 0, 0, 0, batch, info, ctx);
}
template <class T>
void gemm_vbatched_max(Op ta, Op tb, const int* m, const int* n, const int* k, T alpha, const T* const* a,
                       const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc,
                       int max_m, int max_n, int max_k, int batch, int* info, Context& ctx) {
    gemm_impl(Level::max, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, max_m, max_n, max_k, batch, info, ctx);
}
template <class T>
void gemm_vbatched_max_nocheck(Op ta, Op tb, const int* m, const int* n, const int* k, T alpha, const T* const* a,
                               const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc,
                               int max_m, int max_n, int max_k, int batch, Context& ctx) {
    gemm_impl(Level::nocheck, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, max_m, max_n, max_k, batch,
              static_cast<int*>(nullptr), ctx);
}

template <class T>
void gemm_vbatched_max_nocheck(Op ta, Op tb, const int* m, const int* n, const int* k, T alpha, const T* const* a,
                               const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc,
                               int max_m, int max_n, int max_k, int batch, const GemmConfig& config, Context& ctx) {
    gemm_impl(Level::nocheck, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, max_m, max_n, max_k, batch,
              static_cast<int*>(nullptr), ctx, &config);
}

#define RANK_K_ENTRIES(name, two, herm, ScalarA, ScalarB)                                                                \
    template <class T>                                                                                               \
    void name##_vbatched(Uplo uplo, Op trans, const int* n, const int* k, ScalarA alpha, const T* const* a,          \
                         const int* lda, ScalarB beta, T* const* c, const int* ldc, int batch, int* info,             \
                         Context& ctx) {                                                                             \
        rank_k_impl<T>(#name "_vbatched", two, herm, Level::checked, uplo, trans, n, k, T(alpha), a, lda, nullptr,       \
                       nullptr, T(beta), c, ldc, 0, 0, batch, info, ctx);                                           \
    }                                                                                                                \
    template <class T>                                                                                               \
    void name##_vbatched_max(Uplo uplo, Op trans, const int* n, const int* k, ScalarA alpha, const T* const* a,      \
                             const int* lda, ScalarB beta, T* const* c, const int* ldc, int max_n, int max_k,         \
                             int batch, int* info, Context& ctx) {                                                   \
        rank_k_impl<T>(#name "_vbatched", two, herm, Level::max, uplo, trans, n, k, T(alpha), a, lda, nullptr, nullptr,  \
                       T(beta), c, ldc, max_n, max_k, batch, info, ctx);                                            \
    }                                                                                                                \
    template <class T>                                                                                               \
    void name##_vbatched_max_nocheck(Uplo uplo, Op trans, const int* n, const int* k, ScalarA alpha,                 \
                                     const T* const* a, const int* lda, ScalarB beta, T* const* c, const int* ldc,    \
                                     int max_n, int max_k, int batch, Context& ctx) {                                \
        rank_k_impl<T>(#name "_vbatched", two, herm, Level::nocheck, uplo, trans, n, k, T(alpha), a, lda, nullptr,       \
                       nullptr, T(beta), c, ldc, max_n, max_k, batch, nullptr, ctx);                                \
    }
RANK_K_ENTRIES(syrk, false, false, T, T)
RANK_K_ENTRIES(herk, false, true, real_t<T>, real_t<T>)
#undef RANK_K_ENTRIES

template <class T>
void syrk_vbatched_max_nocheck(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a,
                               const int* lda, T beta, T* const* c, const int* ldc, int max_n, int max_k, int batch,
                               const GemmConfig& config, Context& ctx) {
    rank_k_impl<T>("syrk_vbatched", false, false, Level::nocheck, uplo, trans, n, k, alpha, a, lda, nullptr, nullptr,
                   beta, c, ldc, max_n, max_k, batch, nullptr, ctx, &config);
}

#define RANK_2K_ENTRIES(name, two, herm, ScalarB)                                                                        \
    template <class T>                                                                                               \
    void name##_vbatched(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a,                \
                         const int* lda, const T* const* b, const int* ldb, ScalarB beta, T* const* c,               \
                         const int* ldc, int batch, int* info, Context& ctx) {                                       \
        rank_k_impl<T>(#name "_vbatched", two, herm, Level::checked, uplo, trans, n, k, alpha, a, lda, b, ldb, T(beta),  \
                       c, ldc, 0, 0, batch, info, ctx);                                                             \
    }                                                                                                                \
    template <class T>                                                                                               \
    void name##_vbatched_max(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a,            \
                             const int* lda, const T* const* b, const int* ldb, ScalarB beta, T* const* c,           \
                             const int* ldc, int max_n, int max_k, int batch, int* info, Context& ctx) {             \
        rank_k_impl<T>(#name "_vbatched", two, herm, Level::max, uplo, trans, n, k, alpha, a, lda, b, ldb, T(beta), c,   \
                       ldc, max_n, max_k, batch, info, ctx);                                                        \
    }                                                                                                                \
    template <class T>                                                                                               \
    void name##_vbatched_max_nocheck(Uplo uplo, Op trans, const int* n, const int* k, T alpha, const T* const* a,    \
                                     const int* lda, const T* const* b, const int* ldb, ScalarB beta, T* const* c,   \
                                     const int* ldc, int max_n, int max_k, int batch, Context& ctx) {                \
        rank_k_impl<T>(#name "_vbatched", two, herm, Level::nocheck, uplo, trans, n, k, alpha, a, lda, b, ldb, T(beta),  \
                       c, ldc, max_n, max_k, batch, nullptr, ctx);                                                  \
    }
RANK_2K_ENTRIES(syr2k, true, false, T)
RANK_2K_ENTRIES(her2k, true, true, real_t<T>)
#undef RANK_2K_ENTRIES

#define MM_ENTRIES(name, herm)                                                                                       \
    template <class T>                                                                                               \
    void name##_vbatched(Side side, Uplo uplo, const int* m, const int* n, T alpha, const T* const* a,               \
                         const int* lda, const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc,     \
                         int batch, int* info, Context& ctx) {                                                       \
        symm_impl<T>(#name "_vbatched", herm, Level::checked, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc, \
                     0, 0, batch, info, ctx);                                                                        \
    }                                                                                                                \
    template <class T>                                                                                               \
    void name##_vbatched_max(Side side, Uplo uplo, const int* m, const int* n, T alpha, const T* const* a,           \
                             const int* lda, const T* const* b, const int* ldb, T beta, T* const* c,                 \
                             const int* ldc, int max_m, int max_n, int batch, int* info, Context& ctx) {             \
        symm_impl<T>(#name "_vbatched", herm, Level::max, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc,     \
                     max_m, max_n, batch, info, ctx);                                                                \
    }                                                                                                                \
    template <class T>                                                                                               \
    void name##_vbatched_max_nocheck(Side side, Uplo uplo, const int* m, const int* n, T alpha, const T* const* a,   \
                                     const int* lda, const T* const* b, const int* ldb, T beta, T* const* c,         \
                                     const int* ldc, int max_m, int max_n, int batch, Context& ctx) {                \
        symm_impl<T>(#name "_vbatched", herm, Level::nocheck, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc, \
                     max_m, max_n, batch, nullptr, ctx);                                                             \
    }
MM_ENTRIES(symm, false)
MM_ENTRIES(hemm, true)
#undef MM_ENTRIES

#define INSTANTIATE(T)                                                                                               \
    template void blas3_detail::gemm_vbatched<T>(Operand, Operand, blas3_detail::VSize, blas3_detail::VSize,         \
                                                 blas3_detail::VSize, T, const T* const*, const int*, const T* const*,  \
                                                 const int*, T, T* const*, const int*, int, int, int, int, Context&,   \
                                                 const GemmExtras&);                                                 \
    template void gemm_vbatched<T>(Op, Op, const int*, const int*, const int*, T, const T* const*, const int*,       \
                                   const T* const*, const int*, T, T* const*, const int*, int, int*, Context&);       \
    template void gemm_vbatched_max<T>(Op, Op, const int*, const int*, const int*, T, const T* const*, const int*,   \
                                       const T* const*, const int*, T, T* const*, const int*, int, int, int, int,    \
                                       int*, Context&);                                                              \
    template void gemm_vbatched_max_nocheck<T>(Op, Op, const int*, const int*, const int*, T, const T* const*,       \
                                               const int*, const T* const*, const int*, T, T* const*, const int*,    \
                                               int, int, int, int, Context&);                                        \
    template void gemm_vbatched_max_nocheck<T>(Op, Op, const int*, const int*, const int*, T, const T* const*,       \
                                               const int*, const T* const*, const int*, T, T* const*, const int*,    \
                                               int, int, int, int, const GemmConfig&, Context&);                     \
    template void syrk_vbatched_max_nocheck<T>(Uplo, Op, const int*, const int*, T, const T* const*, const int*, T,  \
                                               T* const*, const int*, int, int, int, const GemmConfig&, Context&);   \
    template void syrk_vbatched<T>(Uplo, Op, const int*, const int*, T, const T* const*, const int*, T, T* const*,   \
                                   const int*, int, int*, Context&);                                                 \
    template void syrk_vbatched_max<T>(Uplo, Op, const int*, const int*, T, const T* const*, const int*, T,          \
                                       T* const*, const int*, int, int, int, int*, Context&);                        \
    template void syrk_vbatched_max_nocheck<T>(Uplo, Op, const int*, const int*, T, const T* const*, const int*, T,  \
                                               T* const*, const int*, int, int, int, Context&);                      \
    template void herk_vbatched<T>(Uplo, Op, const int*, const int*, real_t<T>, const T* const*, const int*,         \
                                   real_t<T>, T* const*, const int*, int, int*, Context&);                           \
    template void herk_vbatched_max<T>(Uplo, Op, const int*, const int*, real_t<T>, const T* const*, const int*,     \
                                       real_t<T>, T* const*, const int*, int, int, int, int*, Context&);             \
    template void herk_vbatched_max_nocheck<T>(Uplo, Op, const int*, const int*, real_t<T>, const T* const*,         \
                                               const int*, real_t<T>, T* const*, const int*, int, int, int,          \
                                               Context&);                                                            \
    template void syr2k_vbatched<T>(Uplo, Op, const int*, const int*, T, const T* const*, const int*,                \
                                    const T* const*, const int*, T, T* const*, const int*, int, int*, Context&);     \
    template void syr2k_vbatched_max<T>(Uplo, Op, const int*, const int*, T, const T* const*, const int*,            \
                                        const T* const*, const int*, T, T* const*, const int*, int, int, int, int*,  \
                                        Context&);                                                                   \
    template void syr2k_vbatched_max_nocheck<T>(Uplo, Op, const int*, const int*, T, const T* const*, const int*,    \
                                                const T* const*, const int*, T, T* const*, const int*, int, int, int, \
                                                Context&);                                                           \
    template void her2k_vbatched<T>(Uplo, Op, const int*, const int*, T, const T* const*, const int*,                \
                                    const T* const*, const int*, real_t<T>, T* const*, const int*, int, int*,        \
                                    Context&);                                                                       \
    template void her2k_vbatched_max<T>(Uplo, Op, const int*, const int*, T, const T* const*, const int*,            \
                                        const T* const*, const int*, real_t<T>, T* const*, const int*, int, int,     \
                                        int, int*, Context&);                                                        \
    template void her2k_vbatched_max_nocheck<T>(Uplo, Op, const int*, const int*, T, const T* const*, const int*,    \
                                                const T* const*, const int*, real_t<T>, T* const*, const int*, int,  \
                                                int, int, Context&);                                                 \
    template void symm_vbatched<T>(Side, Uplo, const int*, const int*, T, const T* const*, const int*,               \
                                   const T* const*, const int*, T, T* const*, const int*, int, int*, Context&);      \
    template void symm_vbatched_max<T>(Side, Uplo, const int*, const int*, T, const T* const*, const int*,           \
                                       const T* const*, const int*, T, T* const*, const int*, int, int, int, int*,   \
                                       Context&);                                                                    \
    template void symm_vbatched_max_nocheck<T>(Side, Uplo, const int*, const int*, T, const T* const*, const int*,   \
                                               const T* const*, const int*, T, T* const*, const int*, int, int, int,  \
                                               Context&);                                                            \
    template void hemm_vbatched<T>(Side, Uplo, const int*, const int*, T, const T* const*, const int*,               \
                                   const T* const*, const int*, T, T* const*, const int*, int, int*, Context&);      \
    template void hemm_vbatched_max<T>(Side, Uplo, const int*, const int*, T, const T* const*, const int*,           \
                                       const T* const*, const int*, T, T* const*, const int*, int, int, int, int*,   \
                                       Context&);                                                                    \
    template void hemm_vbatched_max_nocheck<T>(Side, Uplo, const int*, const int*, T, const T* const*, const int*,   \
                                               const T* const*, const int*, T, T* const*, const int*, int, int, int,  \
                                               Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve
