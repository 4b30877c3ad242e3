// The variable-size TRMM/TRSM/POTRF algorithms of the CUDA backend, written once against an executor
// that launches the generated kernels and the variable-size GEMM: the CUDA backend's (triangular.cpp:
// NVRTC kernels, blas3_detail::gemm_vbatched on the device) and the tests' (tests/triangular: the same
// kernel text run by the host emulator, the CPU GEMM). An executor provides
//   void kernel(const TriangularKernelSpec&, const KernelArguments&, unsigned grid_x, unsigned grid_y);
//   void gemm(Operand, Operand, VSize m, VSize n, VSize k, T alpha, const T* const* a, const int* lda,
//             const T* const* b, const int* ldb, T beta, T* const* c, const int* ldc, int max_m, int max_n,
//             int max_k, int batch, const GemmExtras&);
//   void* workspace(std::size_t bytes);   void zero_info(int* info, int batch);
// The host loops depend only on the maxima: each problem's share of a step is a window of its own sizes
// (VSize), so no size or pointer array is rebuilt and nothing returns to the host.
#pragma once

#include <algorithm>
#include <climits>
#include <complex>
#include <cstddef>

#include "../../core/blas3_internal.hpp"
#include "../../core/triangular_backend.hpp"
#include "batchsolve/vbatched_triangular.hpp"
#include "codegen/common.hpp"
#include "codegen/triangular/triangular.hpp"

namespace batchsolve::triangular_algorithm {

using blas3_detail::GemmExtras;
using blas3_detail::Operand;
using blas3_detail::VSize;
using codegen::triangular::KernelArguments;
using codegen::triangular::KernelKind;
using codegen::triangular::TriangularKernelSpec;

template <class T>
void set_alpha(KernelArguments& a, T alpha) {
    if constexpr (is_complex_v<T>) a.alpha_re = double(alpha.real()), a.alpha_im = double(alpha.imag());
    else a.alpha_re = double(alpha), a.alpha_im = 0;
}

// A TRMM/TRSM call as the canonical problem of the leaf kernels: L Y = alpha C or Y = alpha L C with
// L = op(A) (left) or op(A)^T (right, C = B^T), L's order `tri` and C's other dimension `rhs`.
template <class T>
struct Canonical {
    Side side;
    Op op;
    bool lower;
    int transposed, conjugate, unit;
    const int* tri;
    const int* rhs;
    int max_tri, max_rhs;
    const T* const* a;
    const int* lda;
    T* const* b;
    const int* ldb;
    int batch;
    const int* skip = nullptr;
};

template <class T>
Canonical<T> canonical(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, const T* const* a,
                       const int* lda, T* const* b, const int* ldb, int max_m, int max_n, int batch) {
    Canonical<T> c;
    if (!is_complex_v<T> && op == Op::conj_trans) op = Op::trans;
    c.side = side, c.op = op;
    const bool left = side == Side::left;
    // left: L = op(A); right: L = op(A)^T, i.e. A^T (no_trans), A (trans) or conj(A) (conj_trans)
    c.transposed = left ? op != Op::no_trans : op == Op::no_trans;
    c.conjugate = op == Op::conj_trans;
    c.unit = diag == Diag::unit;
    c.lower = (uplo == Uplo::lower) != bool(c.transposed);
    c.tri = left ? m : n, c.rhs = left ? n : m;
    c.max_tri = left ? max_m : max_n, c.max_rhs = left ? max_n : max_m;
    c.a = a, c.lda = lda, c.b = b, c.ldb = ldb, c.batch = batch;
    return c;
}

template <class T>
KernelArguments arguments(const Canonical<T>& c, int tri_sub, int tri_lim, T alpha) {
    KernelArguments k;
    k.a = reinterpret_cast<const void* const*>(c.a), k.lda = c.lda;
    k.b = reinterpret_cast<void* const*>(c.b), k.ldb = c.ldb;
    k.tri_sizes = c.tri, k.rhs_sizes = c.rhs, k.skip = c.skip;
    k.tri_sub = tri_sub, k.tri_lim = tri_lim, k.rhs_sub = 0, k.rhs_lim = INT_MAX;
    k.transposed = c.transposed, k.conjugate = c.conjugate, k.unit = c.unit, k.right = c.side == Side::right;
    k.batch = c.batch;
    set_alpha(k, alpha);
    return k;
}

inline int window_max(int max, int sub, int lim) { return std::max(0, std::min(lim, max - sub)); }

template <class T>
TriangularKernelSpec leaf_spec(KernelKind kind, bool lower, const TriangularConfig& config) {
    TriangularKernelSpec s;
    s.kind = kind, s.precision = precision_v<T>, s.lower = lower;
    s.config.columns_per_thread = config.columns_per_thread, s.config.warps_per_block = config.warps_per_block;
    return s;
}

// Thread blocks per problem along the right-hand sides: one per group of columns_per_thread x
// warps_per_block columns, or at most config.column_blocks (then each block loops over its share of
// the groups and loads the triangle once for all of them).
inline unsigned column_groups(int max_rhs, const TriangularConfig& config) {
    const int per_block = config.columns_per_thread * config.warps_per_block;
    const int groups = codegen::ceil_div(std::max(max_rhs, 1), per_block);
    return unsigned(config.column_blocks > 0 ? std::min(groups, config.column_blocks) : groups);
}

template <class T, class Exec>
void leaf(const Canonical<T>& c, KernelKind kind, int o, int lim, T alpha, const TriangularConfig& config,
          Exec& x) {
    x.kernel(leaf_spec<T>(kind, c.lower, config), arguments(c, o, lim, alpha), unsigned(c.batch),
             column_groups(c.max_rhs, config));
}

// C rows [row0, row0 + rows) <- alpha_g L(rows, cols) Y(cols) + beta_g C(rows), L's block at canonical
// (row0, col0) of `rows` x `cols` (windows of each problem's order), as one GEMM on the stored matrices.
template <class T, class Exec>
void update(const Canonical<T>& c, int row0, int rows, int col0, int cols, T alpha_g, T beta_g, Exec& x) {
    const int max_rows = window_max(c.max_tri, row0, rows), max_cols = window_max(c.max_tri, col0, cols);
    if (max_rows == 0 || c.max_rhs == 0) return;
    GemmExtras extras;
    extras.skip = c.skip;
    const VSize row_window(c.tri, row0, rows), col_window(c.tri, col0, cols), all_rhs(c.rhs);
    const T* const* b_in = reinterpret_cast<const T* const*>(c.b);
    if (c.side == Side::left) {
        // C = B rows row0.., A operand = op(A)'s block (row0, col0), B operand = Y = B rows col0..
        const Operand op_a = blas3_detail::operand_of(c.op);
        if (c.op == Op::no_trans) extras.offsets.a_row = row0, extras.offsets.a_col = col0;
        else extras.offsets.a_row = col0, extras.offsets.a_col = row0;
        extras.offsets.b_row = col0, extras.offsets.c_row = row0;
        x.gemm(op_a, Operand::no_trans, row_window, all_rhs, col_window, alpha_g, c.a, c.lda, b_in, c.ldb, beta_g, c.b,
               c.ldb, max_rows, c.max_rhs, max_cols, c.batch, extras);
    } else {
        // transposed: B cols row0.. <- beta B cols row0.. + alpha Y^T L^T, Y^T = B cols col0.., L^T's block
        // = op(A)'s block (col0, row0)
        const Operand op_b = blas3_detail::operand_of(c.op);
        if (c.op == Op::no_trans) extras.offsets.b_row = col0, extras.offsets.b_col = row0;
        else extras.offsets.b_row = row0, extras.offsets.b_col = col0;
        extras.offsets.a_col = col0, extras.offsets.c_col = row0;
        x.gemm(Operand::no_trans, op_b, all_rhs, row_window, col_window, alpha_g, b_in, c.ldb, c.a, c.lda, beta_g, c.b,
               c.ldb, c.max_rhs, max_rows, max_cols, c.batch, extras);
    }
}

// B <- 0 for every problem (alpha = 0: BLAS sets B without reading A): the leaf kernel's zero path
// over the whole triangle order.
template <class T, class Exec>
void zero_b(const Canonical<T>& c, const TriangularConfig& config, Exec& x) {
    KernelArguments k = arguments(c, 0, INT_MAX, T(0));
    k.zero_only = 1;
    x.kernel(leaf_spec<T>(KernelKind::multiply, c.lower, config), k, unsigned(c.batch),
             column_groups(c.max_rhs, config));
}

// Split of a triangle of largest order `max` (> leaf): a multiple of the leaf order near the middle,
// so that the leaves are full and the GEMM updates as square as the sizes allow.
inline int split_point(int max, int leaf_order) { return codegen::round_up(codegen::ceil_div(max, 2), leaf_order); }

template <class T, class Exec>
void trsm_recursive(const Canonical<T>& c, int o, int lim, T alpha, const TriangularConfig& config, Exec& x) {
    const int max = window_max(c.max_tri, o, lim);
    if (max == 0) return;
    if (max <= config.leaf_order) return leaf(c, KernelKind::solve, o, lim, alpha, config, x);
    const int s1 = split_point(max, config.leaf_order);
    if (c.lower) {
        trsm_recursive(c, o, s1, alpha, config, x);
        update(c, o + s1, lim - s1, o, s1, T(-1), alpha, x);
        trsm_recursive(c, o + s1, lim - s1, T(1), config, x);
    } else {
        // A problem whose part below the split is empty has its rows scaled by alpha in the update (k = 0).
        trsm_recursive(c, o + s1, lim - s1, alpha, config, x);
        update(c, o, s1, o + s1, lim - s1, T(-1), alpha, x);
        trsm_recursive(c, o, s1, T(1), config, x);
    }
}

template <class T, class Exec>
void trsm_inversion(const Canonical<T>& c, T alpha, const TriangularConfig& config, Exec& x) {
    const int nb = config.inversion_block;
    const int blocks = codegen::ceil_div(c.max_tri, nb);
    const std::size_t per_problem = std::size_t(blocks) * nb * nb;
    T* work = static_cast<T*>(
        x.workspace(triangular_detail::inversion_workspace_elements(c.max_tri, c.batch, config) * sizeof(T)));
    KernelArguments inv = arguments(c, 0, INT_MAX, T(1));
    inv.work = work, inv.work_stride = (long long)per_problem, inv.block_order = nb;
    TriangularKernelSpec spec = leaf_spec<T>(KernelKind::invert, c.lower, config);
    if (blocks > 65535) throw InvalidArgument("trsm_vbatched", "config.inversion_block", "more than 65,535 diagonal blocks");
    x.kernel(spec, inv, unsigned(c.batch), unsigned(blocks));

    const TriangularKernelSpec product = leaf_spec<T>(KernelKind::multiply, c.lower, config);
    for (int step = 0; step < blocks; ++step) {
        const int jb = c.lower ? step : blocks - 1 - step;
        const int o = jb * nb;
        const T scale = step == 0 ? alpha : T(1);  // the first step's update scales the rest by alpha
        KernelArguments k = arguments(c, o, nb, scale);
        k.from_work = 1, k.work = work, k.work_stride = (long long)per_problem, k.block_order = nb;
        x.kernel(product, k, unsigned(c.batch), column_groups(c.max_rhs, config));
        if (c.lower && o + nb < c.max_tri) update(c, o + nb, INT_MAX, o, nb, T(-1), scale, x);
        if (!c.lower && o > 0) update(c, 0, o, o, nb, T(-1), scale, x);
    }
}

template <class T, class Exec>
void trmm_recursive(const Canonical<T>& c, int o, int lim, T alpha, const TriangularConfig& config, Exec& x) {
    const int max = window_max(c.max_tri, o, lim);
    if (max == 0) return;
    if (max <= config.leaf_order) return leaf(c, KernelKind::multiply, o, lim, alpha, config, x);
    const int s1 = split_point(max, config.leaf_order);
    if (c.lower) {
        // rows below the split first: they read the rows above it before those change
        trmm_recursive(c, o + s1, lim - s1, alpha, config, x);
        update(c, o + s1, lim - s1, o, s1, alpha, T(1), x);
        trmm_recursive(c, o, s1, alpha, config, x);
    } else {
        trmm_recursive(c, o, s1, alpha, config, x);
        update(c, o, s1, o + s1, lim - s1, alpha, T(1), x);
        trmm_recursive(c, o + s1, lim - s1, alpha, config, x);
    }
}

template <class T>
bool is_zero(T v) { return v == T(0); }


// ---- the routines ------------------------------------------------------------------------------------

template <class T, class Exec>
void trmm(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha, const T* const* a,
          const int* lda, T* const* b, const int* ldb, int max_m, int max_n, int batch, const TriangularConfig& config,
          Exec& x) {
    const Canonical<T> c = canonical(side, uplo, op, diag, m, n, a, lda, b, ldb, max_m, max_n, batch);
    if (is_zero(alpha)) return zero_b(c, config, x);
    trmm_recursive(c, 0, INT_MAX, alpha, config, x);
}

template <class T, class Exec>
void trsm(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha, const T* const* a,
          const int* lda, T* const* b, const int* ldb, int max_m, int max_n, int batch, const TriangularConfig& config,
          Exec& x) {
    const Canonical<T> c = canonical(side, uplo, op, diag, m, n, a, lda, b, ldb, max_m, max_n, batch);
    if (is_zero(alpha)) return zero_b(c, config, x);
    if (triangular_detail::inversion_chosen(c.max_tri, config)) trsm_inversion(c, alpha, config, x);
    else trsm_recursive(c, 0, INT_MAX, alpha, config, x);
}

// Right-looking over panels of width config.potrf_panel: the panel kernel factors the diagonal block
// (info per matrix; a failed matrix is skipped from then on), the leaf TRSM the block below (lower:
// X L11^H = A21, right side) or right of it (upper: U11^H X = A12, left side), a GEMM on one triangle
// of the trailing matrix (A22 -= A21 A21^H or U12^H U12).
template <class T, class Exec>
void potrf(Uplo uplo, const int* n, T* const* a, const int* lda, int max_n, int batch, int* info, bool reset_info,
           const TriangularConfig& config, Exec& x) {
    if (reset_info) x.zero_info(info, batch);
    const int nb = config.potrf_panel;
    const bool lower = uplo == Uplo::lower;
    TriangularKernelSpec panel;
    panel.kind = KernelKind::potrf_panel, panel.precision = precision_v<T>;
    // In both cases the canonical triangle is lower: conj(L11) (right side), U11^H (left side).
    Canonical<T> solve = canonical<T>(lower ? Side::right : Side::left, uplo, Op::conj_trans, Diag::non_unit, n, n,
                                      reinterpret_cast<const T* const*>(a), lda, a, lda, max_n, max_n, batch);
    solve.skip = info;
    const T* const* a_in = reinterpret_cast<const T* const*>(a);
    for (int j = 0; j < max_n; j += nb) {
        KernelArguments k;
        k.a = reinterpret_cast<const void* const*>(a), k.lda = lda, k.tri_sizes = n, k.skip = info;
        k.tri_sub = j, k.tri_lim = nb, k.batch = batch, k.upper_storage = lower ? 0 : 1;
        x.kernel(panel, k, unsigned(batch), 1);
        if (j + nb >= max_n) break;
        // lower: C(p, q) = A(j + nb + q, j + p); upper: C(p, q) = A(j + p, j + nb + q)
        KernelArguments t = arguments(solve, j, nb, T(1));
        t.rhs_sub = j + nb;
        x.kernel(leaf_spec<T>(KernelKind::solve, solve.lower, config), t, unsigned(batch),
                 column_groups(max_n - j - nb, config));
        GemmExtras extras;
        extras.skip = info;
        extras.part = lower ? blas3_detail::Part::lower : blas3_detail::Part::upper;
        extras.real_diagonal = is_complex_v<T>;
        const VSize trailing(n, j + nb), panel_width(n, j, nb);
        const int max_trailing = max_n - j - nb, max_width = std::min(nb, max_n - j);
        if (lower) {
            extras.offsets = {j + nb, j, j + nb, j, j + nb, j + nb};
            x.gemm(Operand::no_trans, Operand::conj_trans, trailing, trailing, panel_width, T(-1), a_in, lda, a_in, lda,
                   T(1), a, lda, max_trailing, max_trailing, max_width, batch, extras);
        } else {
            extras.offsets = {j, j + nb, j, j + nb, j + nb, j + nb};
            x.gemm(Operand::conj_trans, Operand::no_trans, trailing, trailing, panel_width, T(-1), a_in, lda, a_in, lda,
                   T(1), a, lda, max_trailing, max_trailing, max_width, batch, extras);
        }
    }
}
}  // namespace batchsolve::triangular_algorithm
