// The register-tiled Cholesky of one diagonal block (CholeskyDiagonal::leaf), written once as the
// steps of its 256 threads so that the CUDA kernel (cholesky_large.cu) and the CPU emulation of the
// tests (tests/large/algorithm_emulation_test.cpp, every thread run in turn between the barriers) share
// it. Thread t owns the TS x TS tile (t / 16, t % 16) of the block padded to 16 TS with the identity, in
// registers for the whole factorisation; tiles above the diagonal idle. Column j: the owner of the
// diagonal takes the pivot's square root (barrier), the owners of column j scale it into shared memory
// (barrier), every tile of the trailing matrix subtracts its rank-1 product from registers. Two barriers
// per column and no global memory between the load and the store. No CUDA header here.
#pragma once

#include <cmath>

#include "batchsolve/limits.hpp"
#include "batchsolve/types.hpp"

#if defined(__CUDACC__)
#define BATCHSOLVE_LEAF_FN __host__ __device__ __forceinline__
#else
#define BATCHSOLVE_LEAF_FN inline
#endif

namespace batchsolve::cuda_backend::large::leaf {

inline constexpr int kThreads = 256;
inline constexpr int kGrid = 16;  // tiles per side
// The tile side for a block of order m (the largest block: 16 x 8 = 128).
inline constexpr int kMaxOrder = kGrid * 8;
inline constexpr int tile_for(int m) { return m <= kGrid * 4 ? 4 : 8; }
static_assert(kMaxOrder == limits::large_leaf_max_order, "the public limit is this kernel's largest block");

template <class T>
struct Shared {
    T column[kMaxOrder];
    T pivot;
    int failed;  // 0, or the first bad column (1-based)
};

template <class T, int TS>
struct Tile {
    T v[TS][TS];
};

// Element (i, k) of L as the storage holds it (upper storage keeps U = L^T).
BATCHSOLVE_LEAF_FN long long leaf_offset(bool lower, int i, int k, int lda) {
    return lower ? (long long)k * lda + i : (long long)i * lda + k;
}

template <class T, int TS>
BATCHSOLVE_LEAF_FN void leaf_load(Tile<T, TS>& t, int tid, int m, const T* a, int lda, bool lower) {
    const int r0 = tid / kGrid * TS, c0 = tid % kGrid * TS;
    for (int a_ = 0; a_ < TS; ++a_)
        for (int b = 0; b < TS; ++b) {
            const int i = r0 + a_, k = c0 + b;
            t.v[a_][b] = (i < m && k < m && i >= k) ? a[leaf_offset(lower, i, k, lda)] : (i == k ? T(1) : T(0));
        }
}

template <class T, int TS>
BATCHSOLVE_LEAF_FN void leaf_store(const Tile<T, TS>& t, int tid, int m, T* a, int lda, bool lower) {
    const int r0 = tid / kGrid * TS, c0 = tid % kGrid * TS;
    for (int a_ = 0; a_ < TS; ++a_)
        for (int b = 0; b < TS; ++b) {
            const int i = r0 + a_, k = c0 + b;
            if (i < m && k < m && i >= k) a[leaf_offset(lower, i, k, lda)] = t.v[a_][b];
        }
}

// Column j = jb TS + jj: the diagonal's owner writes the pivot's square root (or the failure).
template <class T, int TS>
BATCHSOLVE_LEAF_FN void leaf_pivot(const Tile<T, TS>& t, int tid, int jb, int jj, Shared<T>& s) {
    if (tid / kGrid != jb || tid % kGrid != jb) return;
    const T v = t.v[jj][jj];
    if (!(v > T(0)) || !std::isfinite(v)) {
        if (s.failed == 0) s.failed = jb * TS + jj + 1;
        return;
    }
    s.pivot = std::sqrt(v);
}

// The owners of column j scale its rows below the diagonal into s.column (rows jb TS .. j: 0).
template <class T, int TS>
BATCHSOLVE_LEAF_FN void leaf_column(Tile<T, TS>& t, int tid, int jb, int jj, Shared<T>& s) {
    const int ty = tid / kGrid, tx = tid % kGrid;
    if (tx != jb || ty < jb) return;
    const T d = s.pivot, inv = T(1) / d;
    const int j = jb * TS + jj;
    for (int a_ = 0; a_ < TS; ++a_) {
        const int i = ty * TS + a_;
        if (i > j) {
            t.v[a_][jj] *= inv;
            s.column[i] = t.v[a_][jj];
        } else {
            if (i == j) t.v[a_][jj] = d;
            s.column[i] = T(0);
        }
    }
}

// Every tile of the trailing matrix (tile column >= jb, on or below the diagonal): minus the rank-1
// product of column j (its zeros keep the factored columns unchanged).
template <class T, int TS>
BATCHSOLVE_LEAF_FN void leaf_update(Tile<T, TS>& t, int tid, int jb, const Shared<T>& s) {
    const int ty = tid / kGrid, tx = tid % kGrid;
    if (tx < jb || ty < tx) return;
    T r[TS], c[TS];
    for (int a_ = 0; a_ < TS; ++a_) r[a_] = s.column[ty * TS + a_];
    for (int b = 0; b < TS; ++b) c[b] = s.column[tx * TS + b];
    for (int a_ = 0; a_ < TS; ++a_)
        for (int b = 0; b < TS; ++b) t.v[a_][b] -= r[a_] * c[b];
}

}  // namespace batchsolve::cuda_backend::large::leaf
