// The register-tiled Cholesky of one diagonal block (CholeskyDiagonal::leaf), written once as the
// steps of its 256 threads so that the CUDA kernel (cholesky_large.cu) and the CPU emulation of the
// tests (tests/large/algorithm_emulation_test.cpp, every thread run in turn between the barriers) share
// it. Thread t owns the TS x TS tile (t / 16, t % 16) of the block padded to 16 TS with the identity, in
// registers for the whole factorisation; tiles above the diagonal idle. Column j: its owners publish it
// unscaled with its pivot v and v's reciprocals (1/v, sqrt(v), 1/sqrt(v)) to shared memory (one
// barrier, double-buffered), then every thread checks v, the owners scale the column by v^-1/2 and
// every tile of the trailing matrix subtracts a_ij a_kj / v from registers. The reciprocals are
// computed ahead: during column j's update the owner of the next pivot updates that entry first and
// starts its square root and reciprocals, whose latency the rest of its update hides, so no division
// or square root sits between a barrier and the next column's update. One barrier per column and no
// global memory between the load and the store. No CUDA header here.
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

// Column j's raw values and pivot in buffer j % 2: the writes of column j + 1 never meet the reads
// of column j, so one barrier per column suffices.
template <class T>
struct Shared {
    T column[2][kMaxOrder];
    T pivot[2];    // the diagonal entry before its square root
    T inverse[2];  // 1 / pivot
    T root[2];     // sqrt(pivot): the factor's diagonal entry
    T scale[2];    // 1 / sqrt(pivot)
};

template <class T, int TS>
struct Tile {
    T v[TS][TS];
    // The reciprocals of the pivot of column ahead_for, computed by its owner a step early.
    T ahead_inverse, ahead_root, ahead_scale;
    int ahead_for;
};

// 1/v, sqrt(v) and 1/sqrt(v), correctly rounded (the same values as T(1) / v, std::sqrt and
// T(1) / root), into the tile's ahead slots for column j.
template <class T, int TS>
BATCHSOLVE_LEAF_FN void leaf_reciprocals(Tile<T, TS>& t, T v, int j) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(T) == 8) {
        t.ahead_inverse = __drcp_rn(v), t.ahead_root = __dsqrt_rn(v), t.ahead_scale = __drcp_rn(t.ahead_root);
    } else {
        t.ahead_inverse = __frcp_rn(v), t.ahead_root = __fsqrt_rn(v), t.ahead_scale = __frcp_rn(t.ahead_root);
    }
#else
    t.ahead_inverse = T(1) / v, t.ahead_root = std::sqrt(v), t.ahead_scale = T(1) / t.ahead_root;
#endif
    t.ahead_for = j;
}

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
    t.ahead_inverse = t.ahead_root = t.ahead_scale = T(0);
    t.ahead_for = -1;
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

// Before the barrier of column j = jb TS + jj: its owners write it as it stands (rows below the
// diagonal; rows jb TS .. j: 0) and the diagonal's owner its pivot and the pivot's reciprocals
// (computed ahead in column j - 1's step; here only for column 0), into buffer j % 2.
template <class T, int TS>
BATCHSOLVE_LEAF_FN void leaf_publish(Tile<T, TS>& t, int tid, int jb, int jj, Shared<T>& s) {
    const int ty = tid / kGrid, tx = tid % kGrid;
    if (tx != jb || ty < jb) return;
    const int j = jb * TS + jj, p = j & 1;
    for (int a_ = 0; a_ < TS; ++a_) {
        const int i = ty * TS + a_;
        s.column[p][i] = i > j ? t.v[a_][jj] : T(0);
    }
    if (ty == jb) {
        if (t.ahead_for != j) leaf_reciprocals<T, TS>(t, t.v[jj][jj], j);
        s.pivot[p] = t.v[jj][jj];
        s.inverse[p] = t.ahead_inverse, s.root[p] = t.ahead_root, s.scale[p] = t.ahead_scale;
    }
}

// The pivot of column j as every thread reads it after the barrier; false: not a finite positive
// number (the factorisation stops at column j).
template <class T>
BATCHSOLVE_LEAF_FN bool leaf_pivot_ok(const Shared<T>& s, int j, T& v) {
    v = s.pivot[j & 1];
    return v > T(0) && std::isfinite(v);
}

// After the barrier: the owners of column j scale it in place (L_ij = a_ij / sqrt(v)), and every tile of
// the trailing matrix (tile column >= jb, on or below the diagonal) subtracts a_ij a_kj / v (the zeros
// of the published column keep the factored columns unchanged). The owner of column j + 1's pivot
// updates that entry first and computes its reciprocals before the rest.
template <class T, int TS>
BATCHSOLVE_LEAF_FN void leaf_step(Tile<T, TS>& t, int tid, int jb, int jj, T /*v*/, const Shared<T>& s) {
    const int ty = tid / kGrid, tx = tid % kGrid;
    if (tx < jb || ty < tx) return;
    const int j = jb * TS + jj, p = j & 1;
    const T inv = s.inverse[p];
    if (tx == jb) {
        const T root = s.root[p], scale = s.scale[p];
        for (int a_ = 0; a_ < TS; ++a_) {
            const int i = ty * TS + a_;
            if (i > j) t.v[a_][jj] *= scale;
            else if (i == j) t.v[a_][jj] = root;
        }
    }
    T r[TS], c[TS];
    for (int a_ = 0; a_ < TS; ++a_) r[a_] = s.column[p][ty * TS + a_] * inv;
    for (int b = 0; b < TS; ++b) c[b] = s.column[p][tx * TS + b];
    const int next = j + 1, q = next % TS;
    const bool ahead = ty == next / TS && tx == next / TS;  // this tile holds the next pivot
    if (ahead) {
        t.v[q][q] -= r[q] * c[q];
        leaf_reciprocals<T, TS>(t, t.v[q][q], next);
    }
    for (int a_ = 0; a_ < TS; ++a_)
        for (int b = 0; b < TS; ++b)
            if (!(ahead && a_ == q && b == q)) t.v[a_][b] -= r[a_] * c[b];
}

}  // namespace batchsolve::cuda_backend::large::leaf
