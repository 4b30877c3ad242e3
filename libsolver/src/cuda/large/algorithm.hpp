// The blocked Cholesky of the large-matrix solvers, written once against an executor: right-looking
// with or without lookahead, left-looking, recursive (top-down halving), the recursive POTF2 of the
// diagonal blocks or the vendor's factor of them, the rows below a diagonal block by TRSM or by its
// inverse and GEMMs, SYRK updates split into GEMMs above syrk_leaf, and the translation of "the lower
// factor L" into BLAS calls for lower (L) and upper (U = L^T) storage. The CUDA backend's executor
// (cholesky_large.cu) runs it with cuBLAS, cuSOLVER, the generated POTF2 kernel and two streams; the
// tests' executor (tests/large/algorithm_emulation_test.cpp) with CBLAS, LAPACK and the kernel
// emulator on one thread. No CUDA header here.
#pragma once

#include <algorithm>
#include <cstddef>

#include "batchsolve/cholesky_large.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::cuda_backend::large {

// Where a call runs: the context's stream or the lookahead's second stream.
enum class Lane { main, side };
// What a call is, for the optional phase timing.
enum class Phase { panel, trsm, update };
enum class Side { left, right };
enum class Trans { no, yes };

// Order of the leaves of the recursive POTF2: a block of order m splits into ceil(m/2) rounded up to
// a multiple of 32 and the rest; below kMinLeaf (or depth 0) the fused kernel takes the block.
inline int split_first(int m) { return std::min(m, ((m + 1) / 2 + 31) / 32 * 32); }
inline int leaf_capacity(int nb, int depth, int min_leaf) {
    int m = nb;
    for (int d = 0; d < depth && m > min_leaf; ++d) m = split_first(m);
    return (m + 31) / 32 * 32;
}
// The recursive variant's split of an order m > nb: half of it rounded up to a multiple of nb, so that
// its diagonal leaves are the blocked variants' panels (every one of order nb but the last).
inline int split_panels(int m, int nb) { return std::min(m - 1, ((m + 1) / 2 + nb - 1) / nb * nb); }
// The buffers the executor provides per lane (PanelSolve::inverse): the inverse of a diagonal block
// (nb x nb, leading dimension nb) and the slice of rows it is applied to (rows x nb elements).
inline int inverse_slice_rows(int nb, int slice_panels) { return slice_panels * nb; }

// The executor's interface (a template parameter, no virtual calls):
//   void potf2(Lane, T* block, int m, int column_offset)       the fused kernel on one diagonal block
//   void potrf_vendor(Lane, T* block, int m, int column_offset)
//                                                              the vendor's factor of one diagonal block;
//                                                              info = column_offset + its first bad column
//                                                              unless info is already set
//   void potrf_leaf(Lane, T* block, int m, int column_offset)  one register-tiled kernel on a diagonal
//                                                              block of order m <= leaf::kMaxOrder
//                                                              (leaf_cholesky.hpp), the same info rule
//   T* inverse_buffer(Lane) / T* slice_buffer(Lane)            PanelSolve::inverse's buffers (above)
//   void identity(Lane, int m, T* w, int ldw)                  W := I (m x m)
//   void copy(Lane, int rows, int cols, const T* src, int lds, T* dst, int ldd)
//   void trsm(Lane, Side, Uplo fill, Trans, int m, int n, const T* a, int lda, T* b, int ldb)
//                                                              B := op(A)^-1 B or B op(A)^-1, non-unit
//   void syrk(Lane, Uplo fill, Trans, int n, int k, const T* a, int lda, T* c, int ldc)
//                                                              C := C - op(A) op(A)^T (fill triangle)
//   void gemm(Lane, Trans, Trans, int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc)
//                                                              C := C - op(A) op(B)
//   void gemm_assign(the same arguments)                       C := op(A) op(B)
//   void panel_ready_signal() / panel_ready_wait()             side -> main: the next panel is factored
//   void update_done_signal() / update_done_wait()             main -> side: the trailing update is in
//   void fork() / join()                                       the side lane starts after / main waits for it
//   void begin(Lane) / end(Lane, Phase)                        phase timing (may do nothing)
template <class T, class Exec>
class BlockedCholesky {
public:
    // slice_panels: PanelSolve::inverse's slice (inverse_slice_rows).
    BlockedCholesky(Exec& x, Uplo uplo, int n, T* a, int lda, const LargeCholeskyConfig& config, int min_leaf,
                    int slice_panels)
        : x_(x), uplo_(uplo), n_(n), a_(a), lda_(lda), c_(config), min_leaf_(min_leaf),
          slice_rows_(inverse_slice_rows(config.nb, slice_panels)) {}

    // Returns the number of panels (diagonal blocks). single_stream: no lookahead whatever the
    // configuration says (phase timing must not see two phases overlap).
    int run(bool single_stream) {
        int panels = 0;
        if (c_.variant == CholeskyVariant::vendor) {
            x_.begin(Lane::main);
            x_.potrf_vendor(Lane::main, a_, n_, 0);
            x_.end(Lane::main, Phase::panel);
            panels = 1;
        } else if (c_.variant == CholeskyVariant::recursive) {
            recursive(0, n_, panels);
        } else if (c_.variant == CholeskyVariant::left_looking) {
            for (int j = 0; j < n_; j += c_.nb, ++panels) {
                const int jb = std::min(c_.nb, n_ - j);
                update(Lane::main, j, jb, 0, j);  // every panel to the left at once
                panel(Lane::main, j, jb);
            }
        } else if (!c_.lookahead || n_ <= c_.nb || single_stream) {
            for (int k = 0; k < n_; k += c_.nb, ++panels) {
                const int kb = std::min(c_.nb, n_ - k);
                panel(Lane::main, k, kb);
                if (k + kb < n_) trailing(Lane::main, k + kb, n_ - k - kb, k, kb);
            }
        } else {
            panels = lookahead();
        }
        return panels;
    }

private:
    // L(i, j) as the lower factor sees it (upper storage holds U = L^T).
    T* at(int i, int j) const {
        return uplo_ == Uplo::lower ? a_ + std::size_t(j) * lda_ + i : a_ + std::size_t(i) * lda_ + j;
    }

    // The diagonal block (k, k) of order kb, then the rows below it.
    void panel(Lane lane, int k, int kb) {
        diagonal(lane, k, kb);
        if (k + kb < n_) {
            x_.begin(lane);
            solve_below(lane, k, kb, k + kb, n_ - k - kb);
            x_.end(lane, Phase::trsm);
        }
    }

    // The diagonal block (k, k) of order kb <= nb: the fused POTF2 (recursively split), the vendor's or the
// register-tiled leaf kernel.
    void diagonal(Lane lane, int k, int kb) {
        x_.begin(lane);
        if (c_.diagonal == CholeskyDiagonal::vendor) x_.potrf_vendor(lane, at(k, k), kb, k);
        else if (c_.diagonal == CholeskyDiagonal::leaf) x_.potrf_leaf(lane, at(k, k), kb, k);
        else potf2(lane, k, kb, c_.recursion_depth);
        x_.end(lane, Phase::panel);
    }

    // Top-down: the leading m1 columns of the block (k, k) of order m, the rows below them, the update
    // of the rest, the rest (all on the main lane: every step needs the one before).
    void recursive(int k, int m, int& panels) {
        if (m <= c_.nb) {
            diagonal(Lane::main, k, m);
            ++panels;
            return;
        }
        const int m1 = split_panels(m, c_.nb);
        recursive(k, m1, panels);
        x_.begin(Lane::main);
        solve_below_recursive(Lane::main, k, m1, k + m1, m - m1);
        x_.end(Lane::main, Phase::trsm);
        x_.begin(Lane::main);
        syrk(Lane::main, k + m1, m - m1, k, m1);
        x_.end(Lane::main, Phase::update);
        recursive(k + m1, m - m1, panels);
    }

    // solve_below for a factored block of order kb > nb: X [L11 0; L21 L22]^T = [B1 B2] is
    // X1 = B1 L11^-T, B2 -= X1 L21^T, X2 = B2 L22^-T; the halves split like recursive()'s, so its
    // leaves are diagonal blocks of order <= nb.
    void solve_below_recursive(Lane lane, int c, int kb, int r0, int m) {
        if (kb <= c_.nb) {
            solve_below(lane, c, kb, r0, m);
            return;
        }
        const int k1 = split_panels(kb, c_.nb);
        solve_below_recursive(lane, c, k1, r0, m);
        gemm(lane, r0, m, c + k1, kb - k1, c, k1);
        solve_below_recursive(lane, c + k1, kb - k1, r0, m);
    }

    void potf2(Lane lane, int k, int m, int depth) {
        const int m1 = split_first(m);
        if (depth == 0 || m <= min_leaf_ || m1 >= m) {
            x_.potf2(lane, at(k, k), m, k);
            return;
        }
        potf2(lane, k, m1, depth - 1);
        solve_below(lane, k, m1, k + m1, m - m1);
        syrk(lane, k + m1, m - m1, k, m1);
        potf2(lane, k + m1, m - m1, depth - 1);
    }

    // L(r0:r0+m, c:c+kb) := L(r0:r0+m, c:c+kb) L(c:c+kb, c:c+kb)^-T; in upper storage the same block
    // is U(c:c+kb, r0:r0+m) := U(c:c+kb, c:c+kb)^-T U(c:c+kb, r0:r0+m).
    // PanelSolve::inverse: W = L(c:c+kb, c:c+kb)^-1 (lower; the upper storage's U^-1 = L^-T, upper),
    // then for each slice of the rows, S = the slice, L(slice, c:c+kb) := S W^T (upper storage:
    // U(c:c+kb, slice) := W^T S).
    void solve_below(Lane lane, int c, int kb, int r0, int m) {
        if (m <= 0) return;
        if (c_.panel_solve == PanelSolve::inverse) {
            T* w = x_.inverse_buffer(lane);
            T* s = x_.slice_buffer(lane);
            const int ldw = c_.nb;
            x_.identity(lane, kb, w, ldw);
            x_.trsm(lane, Side::left, uplo_, Trans::no, kb, kb, at(c, c), lda_, w, ldw);
            for (int s0 = 0; s0 < m; s0 += slice_rows_) {
                const int ms = std::min(slice_rows_, m - s0);
                if (uplo_ == Uplo::lower) {
                    x_.copy(lane, ms, kb, at(r0 + s0, c), lda_, s, slice_rows_);
                    x_.gemm_assign(lane, Trans::no, Trans::yes, ms, kb, kb, s, slice_rows_, w, ldw, at(r0 + s0, c), lda_);
                } else {
                    x_.copy(lane, kb, ms, at(r0 + s0, c), lda_, s, ldw);
                    x_.gemm_assign(lane, Trans::yes, Trans::no, kb, ms, kb, w, ldw, s, ldw, at(r0 + s0, c), lda_);
                }
            }
            return;
        }
        if (uplo_ == Uplo::lower) x_.trsm(lane, Side::right, Uplo::lower, Trans::yes, m, kb, at(c, c), lda_, at(r0, c), lda_);
        else x_.trsm(lane, Side::left, Uplo::upper, Trans::yes, kb, m, at(c, c), lda_, at(r0, c), lda_);
    }

    // L(r:r+m, r:r+m) (its triangle) -= L(r:r+m, c:c+k) L(r:r+m, c:c+k)^T; above syrk_leaf two half
    // triangles and the block between them as one GEMM (cuBLAS SYRK runs well below its GEMM).
    void syrk(Lane lane, int r, int m, int c, int k) {
        if (m <= 0 || k <= 0) return;
        if (m > c_.syrk_leaf) {
            const int m1 = split_first(m);
            syrk(lane, r, m1, c, k);
            gemm(lane, r + m1, m - m1, r, m1, c, k);
            syrk(lane, r + m1, m - m1, c, k);
            return;
        }
        if (uplo_ == Uplo::lower) x_.syrk(lane, Uplo::lower, Trans::no, m, k, at(r, c), lda_, at(r, r), lda_);
        else x_.syrk(lane, Uplo::upper, Trans::yes, m, k, at(r, c), lda_, at(r, r), lda_);
    }

    // L(r:r+m, s:s+w) -= L(r:r+m, c:c+k) L(s:s+w, c:c+k)^T (a block below the diagonal); in upper
    // storage the block is stored transposed: L(r.., s..)^T -= L(s.., c..) L(r.., c..)^T, both as U.
    void gemm(Lane lane, int r, int m, int s, int w, int c, int k) {
        if (m <= 0 || w <= 0 || k <= 0) return;
        if (uplo_ == Uplo::lower) x_.gemm(lane, Trans::no, Trans::yes, m, w, k, at(r, c), lda_, at(s, c), lda_, at(r, s), lda_);
        else x_.gemm(lane, Trans::yes, Trans::no, w, m, k, at(s, c), lda_, at(r, c), lda_, at(r, s), lda_);
    }

    // Columns s:s+w of the trailing matrix (diagonal block and everything below it) receive the
    // update of columns c:c+k.
    void update(Lane lane, int s, int w, int c, int k) {
        if (k <= 0) return;
        x_.begin(lane);
        syrk(lane, s, w, c, k);
        gemm(lane, s + w, n_ - s - w, s, w, c, k);
        x_.end(lane, Phase::update);
    }

    // The whole trailing matrix from r on with columns c:c+k (one SYRK of order m).
    void trailing(Lane lane, int r, int m, int c, int k) {
        x_.begin(lane);
        syrk(lane, r, m, c, k);
        x_.end(lane, Phase::update);
    }

    // Right-looking with lookahead: the side lane updates and factors panel k+1 while the main lane
    // updates the rest of the trailing matrix with panel k. panel_ready: panel k+1 factored (side ->
    // main); update_done: the trailing update of panel k-1 has reached panel k+1's columns (main ->
    // side). An event's wait refers to its latest signal, so every wait below sees the signal of the
    // iteration before.
    int lookahead() {
        const int nb = c_.nb;
        x_.fork();
        int panels = 1;
        panel(Lane::side, 0, std::min(nb, n_));
        x_.panel_ready_signal();
        for (int k = 0; k < n_; k += nb) {
            const int kb = std::min(nb, n_ - k), next = k + kb;
            if (next >= n_) break;
            const int next_kb = std::min(nb, n_ - next), rest = n_ - next - next_kb;
            x_.panel_ready_wait();   // main: panel k is factored
            x_.update_done_wait();   // side: panel k-1's update is in
            update(Lane::side, next, next_kb, k, kb);
            panel(Lane::side, next, next_kb);
            ++panels;
            x_.panel_ready_signal();
            if (rest > 0) trailing(Lane::main, next + next_kb, rest, k, kb);
            x_.update_done_signal();
        }
        x_.join();
        return panels;
    }

    Exec& x_;
    Uplo uplo_;
    int n_;
    T* a_;
    int lda_;
    LargeCholeskyConfig c_;
    int min_leaf_;
    int slice_rows_;
};

}  // namespace batchsolve::cuda_backend::large
