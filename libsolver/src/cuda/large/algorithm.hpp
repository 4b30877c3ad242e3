// The blocked Cholesky of the large-matrix solvers, written once against an executor: right-looking
// with or without lookahead, left-looking, the recursive POTF2 of the diagonal blocks, and the
// translation of "the lower factor L" into BLAS calls for lower (L) and upper (U = L^T) storage. The
// CUDA backend's executor (cholesky_large.cu) runs it with cuBLAS, the generated POTF2 kernel and two
// streams; the tests' executor (tests/large/algorithm_emulation_test.cpp) with CBLAS and the kernel
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

// The executor's interface (a template parameter, no virtual calls):
//   void potf2(Lane, T* block, int m, int column_offset)       the fused kernel on one diagonal block
//   void trsm(Lane, Side, Uplo fill, Trans, int m, int n, const T* a, int lda, T* b, int ldb)
//                                                              B := op(A)^-1 B or B op(A)^-1, non-unit
//   void syrk(Lane, Uplo fill, Trans, int n, int k, const T* a, int lda, T* c, int ldc)
//                                                              C := C - op(A) op(A)^T (fill triangle)
//   void gemm(Lane, Trans, Trans, int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc)
//                                                              C := C - op(A) op(B)
//   void panel_ready_signal() / panel_ready_wait()             side -> main: the next panel is factored
//   void update_done_signal() / update_done_wait()             main -> side: the trailing update is in
//   void fork() / join()                                       the side lane starts after / main waits for it
//   void begin(Lane) / end(Lane, Phase)                        phase timing (may do nothing)
template <class T, class Exec>
class BlockedCholesky {
public:
    BlockedCholesky(Exec& x, Uplo uplo, int n, T* a, int lda, const LargeCholeskyConfig& config, int min_leaf)
        : x_(x), uplo_(uplo), n_(n), a_(a), lda_(lda), c_(config), min_leaf_(min_leaf) {}

    // Returns the number of panels. single_stream: no lookahead whatever the configuration says
    // (phase timing must not see two phases overlap).
    int run(bool single_stream) {
        int panels = 0;
        if (c_.variant == CholeskyVariant::left_looking) {
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
        x_.begin(lane);
        potf2(lane, k, kb, c_.recursion_depth);
        x_.end(lane, Phase::panel);
        if (k + kb < n_) {
            x_.begin(lane);
            solve_below(lane, k, kb, k + kb, n_ - k - kb);
            x_.end(lane, Phase::trsm);
        }
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
    void solve_below(Lane lane, int c, int kb, int r0, int m) {
        if (uplo_ == Uplo::lower) x_.trsm(lane, Side::right, Uplo::lower, Trans::yes, m, kb, at(c, c), lda_, at(r0, c), lda_);
        else x_.trsm(lane, Side::left, Uplo::upper, Trans::yes, kb, m, at(c, c), lda_, at(r0, c), lda_);
    }

    // L(r:r+m, r:r+m) (its triangle) -= L(r:r+m, c:c+k) L(r:r+m, c:c+k)^T.
    void syrk(Lane lane, int r, int m, int c, int k) {
        if (m <= 0 || k <= 0) return;
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
};

}  // namespace batchsolve::cuda_backend::large
