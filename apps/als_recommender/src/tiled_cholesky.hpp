// The tiled solve of one SPD system per thread block (SolveKernel::tiled, tiled_prefetch): the lower
// triangle of the s x s system held in registers as 8 x 8 tiles, one tile per thread (width 256:
// 528 tiles, 17 warps of 120 registers = the whole register file of an SM), factored right-looking by
// tile columns and solved against its right-hand side without the factor ever leaving the registers.
//
// Why this shape: at width 256 the factorisation is 2.8 M multiply-adds per system and its operand
// traffic is what bounds a shared-memory Cholesky (two shared loads and a store per multiply-add in a
// column step, barriers between steps: the fused kernels of engine_cuda_build.cu). Here a thread's
// 8 x 8 tile is updated by a tile column's rank-8 product from a panel in shared memory: 16 shared
// loads (4 LDS.128) per 64 multiply-adds, and one barrier pair per tile column (32 at width 256, not
// 256). The right-hand side rides along as the forward solve of each tile column (b_I -= L_Ip y_p by
// the panel's own threads), the backward solve is a tile row per step; the system is read once from
// global memory and only x is written.
//
// Tiles are numbered by tile column from the last (column nt-1 first), down each column from the
// diagonal: at step p the threads that still update (tile columns > p) are a prefix of the block, so
// finished warps sit at the barrier and take no issue slots.
//
// Every phase is written as a per-thread function over the thread's tile and the block's shared
// arrays, so that tiled_solve_emulated below runs the same code on the CPU (threads in turn between the
// barriers) for the tests.
#pragma once

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <vector>

#if defined(__CUDACC__)
#define ALS_TILED_HD __host__ __device__ __forceinline__
#define ALS_TILED_UNROLL _Pragma("unroll")
#else
#define ALS_TILED_HD inline
#define ALS_TILED_UNROLL
#endif

namespace als::tiled {

// Structural, not a tuning: a thread holds an 8 x 8 tile (64 registers). At width 256 the 496 tiles
// right of tile column 0 take 16 warps, which ptxas then allows 128 registers a thread (an SM's four
// schedulers hold 16 K registers each: 17 warps would cap it at 96 and spill); 4 x 4 tiles would need
// 2,080 threads, 16 x 16 256 registers. Tile column 0 is never updated (only factored, in the
// prologue): its tiles pass through the registers of threads 0..nt-1 before they load their own and
// stay in shared memory as panel 0 (and diag 0) for the backward solve.
constexpr int kTile = 8;
constexpr int kMaxWidth = 256;
constexpr int kMaxThreads = 512;

ALS_TILED_HD int tiles_for(int s) { return (s + kTile - 1) / kTile; }
// Tiles held in registers: the lower triangle's right of tile column 0.
ALS_TILED_HD int register_tiles(int nt) { return nt * (nt - 1) / 2; }
inline int threads_for(int s) {
    const int nt = tiles_for(s);
    return (std::max(nt, register_tiles(nt)) + 31) / 32 * 32;
}

// Thread t's tile (I, J), I >= J >= 1; false past the last one.
ALS_TILED_HD bool tile_of(int t, int nt, int& I, int& J) {
    if (t >= register_tiles(nt)) return false;
    int m = 0;  // tile column nt-1-m holds m+1 tiles; the columns before it m(m+1)/2
    while ((m + 1) * (m + 2) / 2 <= t) ++m;
    J = nt - 1 - m;
    I = J + (t - m * (m + 1) / 2);
    return true;
}

// The block's shared arrays (floats), laid out by shared_floats / shared_parts:
//   panel, panel0  8 x nt x 8 each: a factored tile column (p >= 1; tile column 0 kept to the end),
//                  column k of tile I as two float4 at [k * 8 nt + h * 4 nt + 4 I], h = 0, 1 (rows
//                  4h..4h+3): a quarter warp of consecutive I reads 8 consecutive float4 (no conflicts)
//   diag, diag0    64 + 8 each: L_pp (row-major 8 x 8, lower) and 1 / L_pp(k, k)
//   b              8 nt: the right-hand side, then y = L^-1 b, then x
//   flag           1: the first failed column + 1 (int), 0 while every pivot was positive
struct Shared {
    float *panel, *panel0, *diag, *diag0, *b;
    int* flag;
};
ALS_TILED_HD int shared_floats(int nt) { return 128 * nt + 144 + 8 * nt + 1; }
ALS_TILED_HD Shared shared_parts(float* base, int nt) {
    Shared sh;
    sh.panel = base;
    sh.panel0 = base + 64 * nt;
    sh.diag = sh.panel0 + 64 * nt;
    sh.diag0 = sh.diag + 72;
    sh.b = sh.diag0 + 72;
    sh.flag = reinterpret_cast<int*>(sh.b + 8 * nt);
    return sh;
}

ALS_TILED_HD float reciprocal_root(float d) {
#if defined(__CUDA_ARCH__)
    return rsqrtf(d);  // 2 ulp: a relative perturbation of the column's scale, within FP32's backward error
#else
    return 1.f / std::sqrt(d);
#endif
}

// Entry (i, j) of the system of width s through get(i, j) (called for i >= j, both < s only); the
// tile outside the system is the identity's (b's entries there 0), so that padded columns keep pivot 1
// and the first s entries of x are the system's solution. The upper part of a diagonal tile is 0 (never read).
template <class Get>
ALS_TILED_HD void load_tile(float (&a)[kTile][kTile], int I, int J, int s, Get&& get) {
ALS_TILED_UNROLL
    for (int c = 0; c < kTile; ++c)
ALS_TILED_UNROLL
        for (int r = 0; r < kTile; ++r) {
            const int i = I * kTile + r, j = J * kTile + c;
            a[r][c] = (i < s && j < s) ? (i >= j ? get(i, j) : 0.f) : (i == j ? 1.f : 0.f);
        }
}

// Phase A, thread (p, p) (p = 0: thread 0 in the prologue): its tile's Cholesky factor in place,
// y_p = L_pp^-1 b_p into b, L_pp and its reciprocal diagonal into diag. Returns 0, or the failed column
// within the tile + 1 (a pivot that is not positive, NaN included); the tile is then left part-factored.
ALS_TILED_HD int factor_diagonal(float (&a)[kTile][kTile], int p, float* diag, float* bv) {
    float inv[kTile];
ALS_TILED_UNROLL
    for (int c = 0; c < kTile; ++c) {
        const float d = a[c][c];
        if (!(d > 0.f)) return c + 1;
        inv[c] = reciprocal_root(d);
        a[c][c] = d * inv[c];
ALS_TILED_UNROLL
        for (int r = c + 1; r < kTile; ++r) a[r][c] *= inv[c];
ALS_TILED_UNROLL
        for (int c2 = c + 1; c2 < kTile; ++c2)
ALS_TILED_UNROLL
            for (int r = c2; r < kTile; ++r) a[r][c2] -= a[r][c] * a[c2][c];
    }
    float y[kTile];
ALS_TILED_UNROLL
    for (int r = 0; r < kTile; ++r) y[r] = bv[p * kTile + r];
ALS_TILED_UNROLL
    for (int c = 0; c < kTile; ++c) {
        y[c] *= inv[c];
ALS_TILED_UNROLL
        for (int r = c + 1; r < kTile; ++r) y[r] -= a[r][c] * y[c];
    }
ALS_TILED_UNROLL
    for (int r = 0; r < kTile; ++r) {
        bv[p * kTile + r] = y[r];
        diag[64 + r] = inv[r];
ALS_TILED_UNROLL
        for (int c = 0; c <= r; ++c) diag[r * kTile + c] = a[r][c];
    }
    return 0;
}

// Phase B, thread (I, p), I > p (p = 0: thread I in the prologue): L_Ip = A_Ip L_pp^-T in place, into
// the panel, and b_I -= L_Ip y_p.
ALS_TILED_HD void factor_panel_tile(float (&a)[kTile][kTile], int I, int p, int nt, float* panel, const float* diag, float* bv) {
    const float* L = diag;
ALS_TILED_UNROLL
    for (int k = 0; k < kTile; ++k) {
        const float inv = L[64 + k];
ALS_TILED_UNROLL
        for (int r = 0; r < kTile; ++r) a[r][k] *= inv;
ALS_TILED_UNROLL
        for (int k2 = k + 1; k2 < kTile; ++k2) {
            const float l = L[k2 * kTile + k];
ALS_TILED_UNROLL
            for (int r = 0; r < kTile; ++r) a[r][k2] -= a[r][k] * l;
        }
    }
ALS_TILED_UNROLL
    for (int k = 0; k < kTile; ++k)
ALS_TILED_UNROLL
        for (int h = 0; h < 2; ++h) {
            float* dst = panel + k * 8 * nt + h * 4 * nt + 4 * I;
ALS_TILED_UNROLL
            for (int e = 0; e < 4; ++e) dst[e] = a[4 * h + e][k];
        }
    const float* y = bv + p * kTile;
ALS_TILED_UNROLL
    for (int r = 0; r < kTile; ++r) {
        float sum = 0.f;
ALS_TILED_UNROLL
        for (int k = 0; k < kTile; ++k) sum += a[r][k] * y[k];
        bv[I * kTile + r] -= sum;
    }
}

// Column k of panel tile I (rows 0..7) into x.
ALS_TILED_HD void panel_column(const float* panel, int nt, int I, int k, float (&x)[kTile]) {
#if defined(__CUDA_ARCH__)
    const float4 lo = *reinterpret_cast<const float4*>(panel + k * 8 * nt + 4 * I);
    const float4 hi = *reinterpret_cast<const float4*>(panel + k * 8 * nt + 4 * nt + 4 * I);
    x[0] = lo.x, x[1] = lo.y, x[2] = lo.z, x[3] = lo.w, x[4] = hi.x, x[5] = hi.y, x[6] = hi.z, x[7] = hi.w;
#else
ALS_TILED_UNROLL
    for (int h = 0; h < 2; ++h)
        for (int e = 0; e < 4; ++e) x[4 * h + e] = panel[k * 8 * nt + h * 4 * nt + 4 * I + e];
#endif
}

// Phase C, thread (I, J), I >= J > p: A_IJ -= L_Ip L_Jp^T from panel p (a diagonal tile's upper part
// is updated too and never read).
ALS_TILED_HD void update_tile(float (&a)[kTile][kTile], int I, int J, int nt, const float* panel) {
ALS_TILED_UNROLL
    for (int k = 0; k < kTile; ++k) {
        float x[kTile], y[kTile];
        panel_column(panel, nt, I, k, x);
        panel_column(panel, nt, J, k, y);
ALS_TILED_UNROLL
        for (int r = 0; r < kTile; ++r)
ALS_TILED_UNROLL
            for (int c = 0; c < kTile; ++c) a[r][c] -= x[r] * y[c];
    }
}

// Phase D, thread (p, p), p >= 1: x_p = L_pp^-T y_p in b (y_p already less the rows below it); p = 0
// from diag0 (backward_diagonal0, thread 0).
ALS_TILED_HD void backward_diagonal(const float (&a)[kTile][kTile], int p, float* bv) {
    float x[kTile];
ALS_TILED_UNROLL
    for (int r = 0; r < kTile; ++r) x[r] = bv[p * kTile + r];
ALS_TILED_UNROLL
    for (int c = kTile - 1; c >= 0; --c) {
        x[c] /= a[c][c];
ALS_TILED_UNROLL
        for (int r = 0; r < c; ++r) x[r] -= a[c][r] * x[c];
    }
ALS_TILED_UNROLL
    for (int r = 0; r < kTile; ++r) bv[p * kTile + r] = x[r];
}
ALS_TILED_HD void backward_diagonal0(const float* diag0, float* bv) {
    float x[kTile];
ALS_TILED_UNROLL
    for (int r = 0; r < kTile; ++r) x[r] = bv[r];
ALS_TILED_UNROLL
    for (int c = kTile - 1; c >= 0; --c) {
        x[c] *= diag0[64 + c];
ALS_TILED_UNROLL
        for (int r = 0; r < c; ++r) x[r] -= diag0[c * kTile + r] * x[c];
    }
ALS_TILED_UNROLL
    for (int r = 0; r < kTile; ++r) bv[r] = x[r];
}

// Phase E, thread (p, J), 1 <= J < p: y_J -= L_pJ^T x_p (the only writer of y_J in this step); J = 0
// from panel 0 (backward_tile0, by thread (p, p) after its phase D).
ALS_TILED_HD void backward_tile(const float (&a)[kTile][kTile], int p, int J, float* bv) {
    const float* x = bv + p * kTile;
ALS_TILED_UNROLL
    for (int c = 0; c < kTile; ++c) {
        float sum = 0.f;
ALS_TILED_UNROLL
        for (int r = 0; r < kTile; ++r) sum += a[r][c] * x[r];
        bv[J * kTile + c] -= sum;
    }
}
ALS_TILED_HD void backward_tile0(const float* panel0, int nt, int p, float* bv) {
    const float* x = bv + p * kTile;
ALS_TILED_UNROLL
    for (int c = 0; c < kTile; ++c) {
        float l[kTile];
        panel_column(panel0, nt, p, c, l);
        float sum = 0.f;
ALS_TILED_UNROLL
        for (int r = 0; r < kTile; ++r) sum += l[r] * x[r];
        bv[c] -= sum;
    }
}

// Entry (i, j) of a column-major matrix, for load_tile.
struct ColumnMajorEntry {
    const float* a;
    int lda;
    ALS_TILED_HD float operator()(int i, int j) const { return a[std::size_t(j) * std::size_t(lda) + std::size_t(i)]; }
};

// The solve of one system on the CPU with the kernel's phases, threads in turn between barriers: the
// tests' check of the algorithm and its indexing (the kernel adds only the loads and the barriers).
// a: s x s column-major (only i >= j read), b: s entries, becomes x. Returns info (0, or the first
// column whose pivot was not positive, + 1).
inline int tiled_solve_emulated(const float* a_in, int lda, float* b_io, int s) {
    const int nt = tiles_for(s), threads = threads_for(s);
    std::vector<float> storage(std::size_t(shared_floats(nt)), 0.f);
    const Shared sh = shared_parts(storage.data(), nt);
    struct Thread {
        bool has = false;
        int I = 0, J = 0;
        float a[kTile][kTile];
    };
    const ColumnMajorEntry get{a_in, lda};
    std::vector<Thread> th(static_cast<std::size_t>(threads));
    // Prologue: thread t < nt takes tile (t, 0) and b_t; thread 0 factors (0, 0); the others their panel tile.
    for (int t = 0; t < nt; ++t) {
        load_tile(th[std::size_t(t)].a, t, 0, s, get);
        for (int r = 0; r < kTile; ++r) sh.b[t * kTile + r] = t * kTile + r < s ? b_io[t * kTile + r] : 0.f;
    }
    *sh.flag = factor_diagonal(th[0].a, 0, sh.diag0, sh.b);
    if (*sh.flag == 0)
        for (int t = 1; t < nt; ++t) factor_panel_tile(th[std::size_t(t)].a, t, 0, nt, sh.panel0, sh.diag0, sh.b);
    for (int t = 0; t < threads; ++t) {
        Thread& x = th[std::size_t(t)];
        x.has = tile_of(t, nt, x.I, x.J);
        if (x.has) load_tile(x.a, x.I, x.J, s, get);
    }
    for (int p = 0; p + 1 < nt && *sh.flag == 0; ++p) {
        if (p > 0)
            for (Thread& x : th)
                if (x.has && x.J == p && x.I > p) factor_panel_tile(x.a, x.I, p, nt, sh.panel, sh.diag, sh.b);
        for (Thread& x : th) {
            if (x.has && x.J > p) update_tile(x.a, x.I, x.J, nt, p == 0 ? sh.panel0 : sh.panel);
            if (x.has && x.I == p + 1 && x.J == p + 1)
                if (const int f = factor_diagonal(x.a, p + 1, sh.diag, sh.b)) *sh.flag = (p + 1) * kTile + f;
        }
    }
    if (*sh.flag != 0) return *sh.flag;
    for (int p = nt - 1; p >= 1; --p) {
        for (Thread& x : th)
            if (x.has && x.I == p && x.J == p) backward_diagonal(x.a, p, sh.b), backward_tile0(sh.panel0, nt, p, sh.b);
        for (Thread& x : th)
            if (x.has && x.I == p && x.J < p) backward_tile(x.a, p, x.J, sh.b);
    }
    backward_diagonal0(sh.diag0, sh.b);
    for (int i = 0; i < s; ++i) b_io[i] = sh.b[i];
    return 0;
}

}  // namespace als::tiled
