// The CUDA backend of posv_mixed's low-precision Cholesky (core/mixed_factor_backend.hpp): A scaled to
// unit diagonal and rounded to FP32 in one pass, then a recursive Cholesky in which nearly every flop
// is a cublasGemmEx on tensor cores with FP32 accumulation:
//   chol(A) = chol(A11); A21 := A21 L11^-T (recursive: halves and one GEMM between them, cuBLAS
//   STRSM at the leaves); A22 -= A21 A21^T (recursive halves, one GEMM for the square between them);
//   chol(A22); diagonal leaves by cuSOLVER SPOTRF.
// The GEMMs' inputs are TF32 (FP32 storage, CUBLAS_COMPUTE_32F_FAST_TF32), FP16 or BF16 copies of the
// panels (converted once per panel), or the FP16 hi + lo split (three products, about FP32 accuracy).
// FP16 copies are of 2^12 times the panel: the scaled matrix's factor has |l_ij| <= 1, so the copy
// stays below 4,096 (FP16's largest finite value is 65,504) and its entries down to 2^-26 stay normal.
// With config.inverse each diagonal leaf's inverse is formed (STRSM on the identity) right after its
// SPOTRF, and an off-diagonal solve leaf is a copy of its rows and one GEMM with that inverse.
// With config.tiled_leaf a leaf's factor and inverse are one launch of 32 x 32 tile tasks instead
// (leaf_tiles.hpp): the leaves are the factor's latency chain (16 of them at n = 8192, each SPOTRF +
// identity + STRSM several launches one after the other), its GEMMs only a fraction of its time.
// The solve applies S, two triangular solves in FP32 (cuBLAS STRSV/STRSM on the whole factor, or
// blocked: STRSV on each diagonal block and SGEMV for the panel below it, or with config.fused_solve
// one launch per triangle through the leaves' inverses) and S again. (M^-1 leaf by leaf, TRMV with
// each inverse and SGEMV below it, took 5.6 ms a pass at n = 16384 against STRSV's 2.7 on an H200:
// results/2026-12-03-h200-8936072-mixed-phase.)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../../core/mixed_factor_backend.hpp"
#include "../jit/call_cache.hpp"
#include "../resources.hpp"
#include "leaf_tiles.hpp"

namespace batchsolve::cuda_backend {

using detail::CudaResources;
using detail::DeviceGuard;
using mixed_factor_detail::MixedFactorConfig;

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32;
// FP16 copies hold 2^12 x the panel (see the file comment); products of two are 2^24 too large.
constexpr float kHalfScale = 4096.0f;
// The lo part of the split holds 2^11 x (2^12 x panel - hi): the rounding error of hi, back in range.
constexpr float kLoScale = 2048.0f;
// Halves of a recursion are rounded up to a multiple of this (GEMM tiles; cuSOLVER leaves).
constexpr int kSplitGranule = 128;
// gridDim.y's limit.
constexpr int kMaxGridY = 65535;

unsigned blocks_for(long long count, int threads = kThreads) { return unsigned((count + threads - 1) / threads); }

int split_of(int m) { return std::min(m, ((m + 1) / 2 + kSplitGranule - 1) / kSplitGranule * kSplitGranule); }

// The diagonal leaves (offset, order) of the recursive factor of order m at off, in order.
void leaves_of(int off, int m, int leaf, std::vector<std::pair<int, int>>& out) {
    if (m <= 0) return;
    if (m <= leaf) {
        out.emplace_back(off, m);
        return;
    }
    const int m1 = split_of(m);
    leaves_of(off, m1, leaf, out);
    leaves_of(off + m1, m - m1, leaf, out);
}

int inverse_cols(int n, const MixedFactorConfig& c) { return c.inverse || c.tiled_leaf ? std::min(n, c.leaf) : 0; }
// The largest leaf's order with the tiled leaf (its flags), else 0.
int tiled_cols(int n, const MixedFactorConfig& c) { return c.tiled_leaf ? std::min(n, c.leaf) : 0; }
// The fused solve's plan follows the recursive factor's leaves: not with the lookahead's blocks.
bool fused_of(const MixedFactorConfig& c) { return c.inverse && c.fused_solve && !c.lookahead && c.solve_rows == 0; }
// Rows of the block-row solve's blocks (config.solve_rows), 0 without it.
int solve_rows_of(const MixedFactorConfig& c) { return c.solve_rows == 64 || c.solve_rows == 128 ? c.solve_rows : 0; }
// The lookahead's two panel copies (blocks k and k + 1 are alive together), each at most n x leaf.
std::size_t lookahead_entries(int n, const MixedFactorConfig& c) { return c.lookahead ? 2 * std::size_t(n) * std::min(n, c.leaf) : 0; }

// The fused solve's plan: the leaves and their row chunks of kChunkRows (the last one of a leaf
// shorter), as device ints [leaf offset | leaf order | leaf's chunk count | chunk's first row | chunk's
// rows | chunk's leaf]; leaves <= n, chunks <= leaves + n / kChunkRows.
constexpr int kChunkRows = 64;
struct SolvePlan {
    std::vector<int> ints;
    int leaves = 0, chunks = 0;
    SolvePlan(int n, int leaf) {
        std::vector<std::pair<int, int>> l;
        leaves_of(0, n, leaf, l);
        std::vector<int> off, len, count, row0, rows, owner;
        for (int b = 0; b < int(l.size()); ++b) {
            off.push_back(l[b].first), len.push_back(l[b].second);
            int c = 0;
            for (int r = 0; r < l[b].second; r += kChunkRows, ++c)
                row0.push_back(l[b].first + r), rows.push_back(std::min(kChunkRows, l[b].second - r)), owner.push_back(b);
            count.push_back(c);
        }
        leaves = int(l.size()), chunks = int(row0.size());
        for (const auto* v : {&off, &len, &count, &row0, &rows, &owner}) ints.insert(ints.end(), v->begin(), v->end());
    }
    static std::size_t max_ints(int n) { return 3 * std::size_t(n) + 3 * (2 * std::size_t(n) + 1); }
    static std::size_t max_counters(int n) { return 2 + 4 * std::size_t(n); }
};

// The scratch: [L: n x n floats, ld n][S: n floats][inverses of the diagonal leaves: n x leaf floats,
// ld n, leaf (off, m)'s at row off][copy of a solve leaf's rows: n x leaf floats][hi: panel halves]
// [lo: panel halves][cuSOLVER buffer][leaf info, bad column], each piece on detail::Carve's boundary;
// the inverses and the copy only with config.inverse; before hi, with config.solve_rows b, the
// block-row solve's inverses of the diagonal blocks (n x b floats, ld n), its x (n floats) and its
// flags (2 + 2 ceil(n / b) ints) (the solve finds L, S, the inverses and these without knowing the
// rest). With config.lookahead hi and lo hold at least the two panel copies. A panel copy never exceeds
// n^2 / 4 + 256 n entries (the top-level update's n/2 x n/2 panel; inside a TRSM both operands together
// stay below 3 n^2 / 16). Every offset but the total is independent of lwork.
struct Carve {
    float* l = nullptr;
    float* s = nullptr;
    float* inv = nullptr;
    float* rows = nullptr;
    float* dinv = nullptr;    // block-row solve: the diagonal blocks' inverses
    float* xsol = nullptr;    // block-row solve: x = L^-T y as the blocks publish it
    int* sflags = nullptr;    // block-row solve: two tickets, then a flag per block row and triangle
    int* plan = nullptr;      // fused solve: SolvePlan's ints
    int* counters = nullptr;  // fused solve: two tickets, then four counts per leaf
    float* y = nullptr;       // fused solve: L^-1 S d between the two triangles
    void* hi = nullptr;
    void* lo = nullptr;
    float* solver = nullptr;
    int* leaf_info = nullptr;
    int* bad = nullptr;
    int* leaf_flags = nullptr;  // the tiled leaf's (leaf_tiles::flag_count of the largest leaf)
    std::size_t panel_entries = 0, total = 0;
    int lwork = 0;

    // inverse_order: the leaf order with config.inverse, else 0 (inverse_cols); fused: fused_of(config).
    // solve_rows: solve_rows_of(config); lookahead: lookahead_entries(n, config).
    // tiled_order: the largest leaf's order with config.tiled_leaf, else 0 (tiled_cols).
    Carve(int n, int inverse_order, bool fused, int solve_rows, bool halves, bool split, std::size_t lookahead, int lwork_floats,
          void* base, int tiled_order = 0)
        : lwork(lwork_floats) {
        const std::size_t nn = std::size_t(n) * n;
        panel_entries = halves ? std::max(nn / 4 + std::size_t(256) * n, lookahead) : 0;
        const std::size_t solve_blocks = solve_rows > 0 ? std::size_t((n + solve_rows - 1) / solve_rows) : 0;
        detail::Carve c;
        const std::size_t l_at = c.reserve<float>(nn);
        const std::size_t s_at = c.reserve<float>(std::size_t(n));
        const std::size_t inv_at = c.reserve<float>(std::size_t(n) * inverse_order);
        const std::size_t rows_at = c.reserve<float>(std::size_t(n) * inverse_order);
        const std::size_t dinv_at = c.reserve<float>(std::size_t(n) * solve_rows);
        const std::size_t xsol_at = c.reserve<float>(solve_rows > 0 ? std::size_t(n) : 0);
        const std::size_t sflags_at = c.reserve<int>(solve_rows > 0 ? 2 + 2 * solve_blocks : 0);
        const std::size_t plan_at = c.reserve<int>(fused ? SolvePlan::max_ints(n) : 0);
        const std::size_t counters_at = c.reserve<int>(fused ? SolvePlan::max_counters(n) : 0);
        const std::size_t y_at = c.reserve<float>(fused ? std::size_t(n) : 0);
        const std::size_t tiles_at = c.reserve<int>(tiled_order > 0 ? std::size_t(leaf_tiles::flag_count(leaf_tiles::tiles_of(tiled_order))) : 0);
        const std::size_t hi_at = c.reserve<__half>(panel_entries);
        const std::size_t lo_at = c.reserve<__half>(split ? panel_entries : 0);
        const std::size_t solver_at = c.reserve<float>(std::size_t(std::max(lwork_floats, 1)));
        const std::size_t info_at = c.reserve<int>(2);
        total = c.size();
        if (base) {
            l = detail::Carve::at<float>(base, l_at);
            s = detail::Carve::at<float>(base, s_at);
            if (inverse_order > 0) {
                inv = detail::Carve::at<float>(base, inv_at);
                rows = detail::Carve::at<float>(base, rows_at);
            }
            if (solve_rows > 0) {
                dinv = detail::Carve::at<float>(base, dinv_at);
                xsol = detail::Carve::at<float>(base, xsol_at);
                sflags = detail::Carve::at<int>(base, sflags_at);
            }
            if (fused) {
                plan = detail::Carve::at<int>(base, plan_at);
                counters = detail::Carve::at<int>(base, counters_at);
                y = detail::Carve::at<float>(base, y_at);
            }
            if (tiled_order > 0) leaf_flags = detail::Carve::at<int>(base, tiles_at);
            hi = detail::Carve::at<char>(base, hi_at);
            lo = split ? detail::Carve::at<char>(base, lo_at) : nullptr;
            solver = detail::Carve::at<float>(base, solver_at);
            leaf_info = detail::Carve::at<int>(base, info_at);
            bad = leaf_info + 1;
        }
    }
};

bool uses_halves(LowPrecision p) { return p == LowPrecision::fp16 || p == LowPrecision::bf16 || p == LowPrecision::fp16_split; }

// ---- kernels ------------------------------------------------------------------------------------------

// s_i = a_ii^-1/2; the first column with a_ii <= 0 or not finite goes to *bad (preset to INT_MAX).
template <class T>
__global__ void diagonal_scale_kernel(int n, const T* a, int lda, float* s, int* bad) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double d = double(a[std::size_t(i) * lda + i]);
    if (!(d > 0) || !isfinite(d)) {
        atomicMin(bad, i + 1);
        s[i] = 0;
        return;
    }
    s[i] = float(1.0 / sqrt(d));
}

// L = S A S, both triangles (A read from its uplo triangle only, through 32 x 32 tiles, so that upper
// storage reads coalesced too), diagonal 1 + shift. One block per tile on or below the diagonal.
template <class T>
__global__ void scaled_copy_kernel(bool lower, int n, const T* a, int lda, const float* s, float shift, float* l) {
    if (blockIdx.x < blockIdx.y) return;  // tile row < tile column: above the diagonal
    __shared__ float tile[kTile][kTile + 1];
    const int i0 = blockIdx.x * kTile, j0 = blockIdx.y * kTile;
    // Lower: entry (i, j) is a[j * lda + i]. Upper: it is a[i * lda + j] (the transposed tile).
    for (int c = threadIdx.y; c < kTile; c += blockDim.y) {
        if (lower) {
            const int i = i0 + threadIdx.x, j = j0 + c;
            if (i < n && j < n) tile[c][threadIdx.x] = float(double(a[std::size_t(j) * lda + i]));
        } else {
            const int j = j0 + threadIdx.x, i = i0 + c;  // read along j (contiguous in upper storage)
            if (i < n && j < n) tile[threadIdx.x][c] = float(double(a[std::size_t(i) * lda + j]));
        }
    }
    __syncthreads();
    // Both triangles of L are written (the upper one mirrored): cuSOLVER's leaves and the diagonal
    // blocks' square updates read a block's whole square.
    for (int c = threadIdx.y; c < kTile; c += blockDim.y) {
        const int x = threadIdx.x, i = i0 + x, j = j0 + c;
        if (i < n && j < n) {
            const float t = i >= j ? tile[c][x] : tile[x][c];  // above the diagonal of a diagonal tile: the mirror
            l[std::size_t(j) * n + i] = i == j ? 1.0f + shift : t * s[i] * s[j];
        }
        // The mirrored tile above the diagonal, within its own bounds (a last tile row cut by n still
        // mirrors into full columns).
        if (blockIdx.x != blockIdx.y && j0 + x < n && i0 + c < n) l[std::size_t(i0 + c) * n + j0 + x] = tile[x][c] * s[i0 + c] * s[j0 + x];
    }
}

// hi = low(scale x) for an m x k block (ld of the source lds, of the copies m); split: lo =
// low((scale x - hi) 2^11).
template <class Low>
__device__ __forceinline__ Low to_low(float v);
template <> __device__ __forceinline__ __half to_low<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 to_low<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Rows by blockIdx.x, columns from blockIdx.y in strides of gridDim.y (no 64-bit division per entry).
template <class Low>
__global__ void to_low_kernel(int m, int k, const float* src, int lds, float scale, Low* hi, __half* lo) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    for (int j = blockIdx.y; j < k; j += gridDim.y) {
        const std::size_t idx = std::size_t(j) * m + i;
        const float v = src[std::size_t(j) * lds + i] * scale;
        const Low h = to_low<Low>(v);
        hi[idx] = h;
        if (lo) lo[idx] = __float2half_rn((v - float(h)) * kLoScale);
    }
}

// info = first failing column: the scaling's (bad) or a leaf's (leaf_info relative to `offset`).
__global__ void merge_leaf_info_kernel(int* info, const int* leaf_info, int offset) {
    if (*info == 0 && *leaf_info > 0) *info = offset + *leaf_info;
}
__global__ void bad_to_info_kernel(int* info, const int* bad) { *info = *bad == INT_MAX ? 0 : *bad; }
__global__ void preset_bad_kernel(int* bad) { *bad = INT_MAX; }

// W := I (m x m, ld ldw).
__global__ void identity_kernel(int m, float* w, int ldw) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
    if (i < m) w[std::size_t(j) * ldw + i] = i == j ? 1.0f : 0.0f;
}

__global__ void scale_rows_kernel(int n, const float* s, float* d, int ldd) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[std::size_t(blockIdx.y) * ldd + i] *= s[i];
}

// ---- the fused solve (config.fused_solve) ------------------------------------------------------------------
// One launch per triangle, one block of kFusedThreads per row chunk (SolvePlan), the chunks taken in
// the order of an atomic ticket: a block waits only on blocks that took earlier tickets, so every
// wait ends whatever the scheduling (a bounded spin all the same: past it the block goes on and the
// refinement sees a wrong correction, never a hang). Counts are published after a __threadfence of
// the data; data written by other blocks is read through L2 (__ldcg).
constexpr int kFusedThreads = 256;
constexpr int kFusedGroups = kFusedThreads / kChunkRows;  // column groups of the row-per-thread loops
constexpr long long kSpinLimit = 1LL << 24;

struct PlanView {
    const int *off, *len, *count, *row0, *rows, *owner;
    __device__ PlanView(const int* p, int leaves, int chunks)
        : off(p), len(p + leaves), count(p + 2 * leaves), row0(p + 3 * leaves), rows(p + 3 * leaves + chunks),
          owner(p + 3 * leaves + 2 * chunks) {}
};

// Thread 0 waits until *counter >= target; then the whole block may read what was published.
__device__ void wait_at_least(const int* counter, int target) {
    if (threadIdx.x == 0) {
        long long spins = 0;
        while (*reinterpret_cast<const volatile int*>(counter) < target && ++spins < kSpinLimit) __nanosleep(64);
        __threadfence();
    }
    __syncthreads();
}
__device__ void publish(int* counter) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(counter, 1);
}
__device__ int take_ticket(int* ticket) {
    __shared__ int t;
    if (threadIdx.x == 0) t = atomicAdd(ticket, 1);
    __syncthreads();
    return t;
}
// Sum of v over the kFusedGroups column groups of each row (thread = row + kChunkRows * group).
__device__ float sum_over_groups(float v) {
    __shared__ float part[kFusedGroups][kChunkRows];
    part[threadIdx.x / kChunkRows][threadIdx.x % kChunkRows] = v;
    __syncthreads();
    float total = 0;
    if (threadIdx.x < kChunkRows)
        for (int g = 0; g < kFusedGroups; ++g) total += part[g][threadIdx.x];
    __syncthreads();
    return total;  // valid in threads 0 .. kChunkRows - 1
}

// y = L^-1 d: chunk rows i of leaf c: s_i = d_i - sum over earlier leaves b of L(i, b) y_b (d := s),
// then y_i = sum_k inv_c(i, k) s_k. counters: [0] ticket, [2 + b] chunks of b with s, [2 + L + b] with y.
__global__ void fused_forward_kernel(int n, const float* l, const float* inv, float* d, float* y, const int* plan_ints,
                                     int leaves, int chunks, int* counters) {
    const PlanView plan(plan_ints, leaves, chunks);
    const int chunk = take_ticket(counters);
    if (chunk >= chunks) return;
    const int c = plan.owner[chunk], r = threadIdx.x % kChunkRows, g = threadIdx.x / kChunkRows;
    const int i = plan.row0[chunk] + r;
    const bool row = r < plan.rows[chunk];
    int* s_done = counters + 2;
    int* y_done = counters + 2 + leaves;
    float acc = 0;
    for (int b = 0; b < c; ++b) {
        wait_at_least(y_done + b, plan.count[b]);
        const int off = plan.off[b], len = plan.len[b];
        if (row) {
#pragma unroll 8
            for (int j = g; j < len; j += kFusedGroups) acc += l[std::size_t(off + j) * n + i] * __ldcg(y + off + j);
        }
    }
    acc = sum_over_groups(acc);
    if (threadIdx.x < kChunkRows && row) d[i] -= acc;
    publish(s_done + c);
    wait_at_least(s_done + c, plan.count[c]);
    const int off = plan.off[c], local = i - off;
    float v = 0;
    if (row) {
#pragma unroll 8
        for (int k = g; k <= local; k += kFusedGroups) v += inv[std::size_t(k) * n + i] * __ldcg(d + off + k);
    }
    v = sum_over_groups(v);
    if (threadIdx.x < kChunkRows && row) y[i] = v;
    publish(y_done + c);
}

// d = L^-T y: chunks from the last; chunk rows i of leaf c: s_i = y_i - sum over later leaves b of
// L(b, i)^T x_b (y := s), then x_i = sum_k inv_c(k, i) s_k into d. A warp per row at a time, its lanes
// along the column (contiguous). counters: [1] ticket, [2 + 2L + b] chunks of b with s, [2 + 3L + b] with x.
__global__ void fused_backward_kernel(int n, const float* l, const float* inv, float* d, float* y, const int* plan_ints,
                                      int leaves, int chunks, int* counters) {
    const PlanView plan(plan_ints, leaves, chunks);
    const int ticket = take_ticket(counters + 1);
    if (ticket >= chunks) return;
    const int chunk = chunks - 1 - ticket;
    const int c = plan.owner[chunk], row0 = plan.row0[chunk], rows = plan.rows[chunk];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = kFusedThreads / 32;
    constexpr int kRowsPerWarp = kChunkRows / (kFusedThreads / 32);
    int* s_done = counters + 2 + 2 * leaves;
    int* x_done = counters + 2 + 3 * leaves;
    float acc[kRowsPerWarp] = {};
    for (int b = leaves - 1; b > c; --b) {
        wait_at_least(x_done + b, plan.count[b]);
        const int off = plan.off[b], len = plan.len[b];
        for (int q = 0; q < kRowsPerWarp; ++q) {
            const int rr = warp + q * warps;
            if (rr >= rows) break;
            const float* column = l + std::size_t(row0 + rr) * n + off;
            float part = 0;
#pragma unroll 8
            for (int j = lane; j < len; j += 32) part += column[j] * __ldcg(d + off + j);
            acc[q] += part;
        }
    }
    for (int q = 0; q < kRowsPerWarp; ++q) {
        const int rr = warp + q * warps;
        float v = acc[q];
        for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0 && rr < rows) y[row0 + rr] -= v;
    }
    publish(s_done + c);
    wait_at_least(s_done + c, plan.count[c]);
    const int off = plan.off[c], len = plan.len[c];
    for (int q = 0; q < kRowsPerWarp; ++q) {
        const int rr = warp + q * warps;
        if (rr >= rows) break;
        const int local = row0 + rr - off;
        const float* column = inv + std::size_t(local) * n + off;  // inv_c(., local): rows off.., column local
        float v = 0;
#pragma unroll 8
        for (int k = local + lane; k < len; k += 32) v += column[k] * __ldcg(y + off + k);
        for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0) d[row0 + rr] = v;
    }
    publish(x_done + c);
}

// ---- M^-1 by block rows (config.solve_rows) ---------------------------------------------------------------
// One launch per triangle, one block of kRowThreads per block row of B rows, the block rows taken in
// the order of an atomic ticket (so a block waits only on blocks that started before it: every wait
// ends whatever the residency; bounded all the same, as the fused solve's). A block reads its row
// panel of L tile by tile (B x B, each thread Q = B / 32 rows 32 apart of T = B / 8 columns 8 apart:
// a warp reads Q coalesced 128-byte segments of a column, a thread has T Q loads in flight) and
// multiplies each by the solved block as soon as that is published, so the chain from one block row
// to the next is one tile's products, the inverse of the diagonal block (in registers since the
// start) and a flag; every byte of the triangle is read once. (A whole refinement pass with cuBLAS
// STRSV took 2.7 ms at n = 16384 on an H200, results/2026-12-03-h200-8936072-mixed-phase; reading
// the FP32 triangle twice is 1.07 GB, about 0.27 ms at 4 TB/s.)
constexpr int kRowThreads = 256;
constexpr int kRowWarps = kRowThreads / 32;

// Thread 0 waits until *flag != 0; then the whole block may read what its writer published.
__device__ void wait_flag(const int* flag) {
    if (threadIdx.x == 0) {
        long long spins = 0;
        while (*reinterpret_cast<const volatile int*>(flag) == 0 && ++spins < kSpinLimit) __nanosleep(32);
        __threadfence();
    }
    __syncthreads();
}
__device__ void raise_flag(int* flag) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(flag, 1);
}

// dinv(i0 + i, k) := (L's diagonal block of order B at (i0, i0))^-1 (i, k), lower, its upper part 0;
// ld n, columns 0 .. B - 1; a last block cut by n as if padded with the identity. One block of B
// threads per diagonal block; thread j forms column j by forward substitution in shared memory (the
// block's lower triangle row-major, the inverse beside it: 2 B^2 floats of dynamic shared memory).
template <int B>
__global__ void __launch_bounds__(B) block_inverse_kernel(int n, const float* l, float* dinv) {
    extern __shared__ float smem[];
    float* lt = smem;         // lt[i * B + k] = L(i0 + i, i0 + k), k <= i
    float* x = smem + B * B;  // x[i * B + j] = X(i, j)
    const int i0 = blockIdx.x * B, m = min(B, n - i0);
    for (int e = threadIdx.x; e < B * B; e += B) {
        const int i = e % B, k = e / B;  // L read down its columns (coalesced)
        lt[i * B + k] = (i < m && k < m) ? (k <= i ? l[std::size_t(i0 + k) * n + i0 + i] : 0.0f) : (i == k ? 1.0f : 0.0f);
        x[e] = 0;
    }
    __syncthreads();
    const int j = threadIdx.x;
    for (int i = j; i < B; ++i) {
        float v = i == j ? 1.0f : 0.0f;
        for (int k = j; k < i; ++k) v -= lt[i * B + k] * x[k * B + j];
        x[i * B + j] = v / lt[i * B + i];
    }
    __syncthreads();
    for (int e = threadIdx.x; e < B * B; e += B) {
        const int i = e % B, k = e / B;
        if (i < m) dinv[std::size_t(k) * n + i0 + i] = k < m ? x[i * B + k] : 0.0f;
    }
}

// d <- y = L^-1 S d: block row i sums L(i, j) y_j over j < i as each y_j is published, then
// y_i = Dinv_i (S_i d_i - that sum) into d. flags: [0] the ticket, [2 + i] y_i published.
template <int B>
__global__ void __launch_bounds__(kRowThreads) row_forward_kernel(int n, const float* l, const float* dinv, const float* s,
                                                                  float* d, int* flags) {
    constexpr int Q = B / 32, T = B / kRowWarps;
    __shared__ int ticket;
    __shared__ float part[kRowWarps][B];
    __shared__ float rhs[B];
    if (threadIdx.x == 0) ticket = atomicAdd(flags, 1);
    __syncthreads();
    const int blocks = (n + B - 1) / B, i = ticket;
    if (i >= blocks) return;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, i0 = i * B;
    int* done = flags + 2;
    float inv[T][Q];  // Dinv_i(lane + 32 q, warp + 8 t)
#pragma unroll
    for (int t = 0; t < T; ++t)
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int row = i0 + lane + 32 * q;
            inv[t][q] = row < n ? dinv[std::size_t(warp + kRowWarps * t) * n + row] : 0.0f;
        }
    float acc[Q] = {};
    for (int j = 0; j < i; ++j) {
        const int j0 = j * B;
        float v[T][Q];
#pragma unroll
        for (int t = 0; t < T; ++t)
#pragma unroll
            for (int q = 0; q < Q; ++q) {
                const int row = i0 + lane + 32 * q;
                v[t][q] = row < n ? l[std::size_t(j0 + warp + kRowWarps * t) * n + row] : 0.0f;
            }
        wait_flag(done + j);
#pragma unroll
        for (int t = 0; t < T; ++t) {
            const float y = __ldcg(d + j0 + warp + kRowWarps * t);
#pragma unroll
            for (int q = 0; q < Q; ++q) acc[q] = fmaf(v[t][q], y, acc[q]);
        }
    }
#pragma unroll
    for (int q = 0; q < Q; ++q) part[warp][lane + 32 * q] = acc[q];
    __syncthreads();
    if (threadIdx.x < B) {
        const int row = i0 + threadIdx.x;
        float total = 0;
        for (int w = 0; w < kRowWarps; ++w) total += part[w][threadIdx.x];
        rhs[threadIdx.x] = row < n ? s[row] * d[row] - total : 0.0f;
    }
    __syncthreads();
    float y[Q] = {};
#pragma unroll
    for (int t = 0; t < T; ++t) {
        const float r = rhs[warp + kRowWarps * t];
#pragma unroll
        for (int q = 0; q < Q; ++q) y[q] = fmaf(inv[t][q], r, y[q]);
    }
#pragma unroll
    for (int q = 0; q < Q; ++q) part[warp][lane + 32 * q] = y[q];
    __syncthreads();
    if (threadIdx.x < B && i0 + int(threadIdx.x) < n) {
        float total = 0;
        for (int w = 0; w < kRowWarps; ++w) total += part[w][threadIdx.x];
        d[i0 + threadIdx.x] = total;
    }
    raise_flag(done + i);
}

// x = L^-T y (y in d), d <- S x: block row i from the last sums L(j, i)^T x_j over j > i as each x_j is
// published (in x), then x_i = Dinv_i^T (y_i - that sum). flags: [1] the ticket, [2 + blocks + i] x_i.
template <int B>
__global__ void __launch_bounds__(kRowThreads) row_backward_kernel(int n, const float* l, const float* dinv, const float* s,
                                                                   float* d, float* x, int* flags) {
    constexpr int Q = B / 32, T = B / kRowWarps;
    __shared__ int ticket;
    __shared__ float column[B];
    __shared__ float rhs[B];
    if (threadIdx.x == 0) ticket = atomicAdd(flags + 1, 1);
    __syncthreads();
    const int blocks = (n + B - 1) / B;
    if (ticket >= blocks) return;
    const int i = blocks - 1 - ticket;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, i0 = i * B;
    int* done = flags + 2 + blocks;
    float inv[T][Q];  // Dinv_i(lane + 32 q, warp + 8 t)
#pragma unroll
    for (int t = 0; t < T; ++t)
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int row = i0 + lane + 32 * q;
            inv[t][q] = row < n ? dinv[std::size_t(warp + kRowWarps * t) * n + row] : 0.0f;
        }
    float acc[T] = {};  // this lane's part of column warp + 8 t's sum
    for (int j = blocks - 1; j > i; --j) {
        const int j0 = j * B;
        float v[T][Q];  // L(j0 + lane + 32 q, i0 + warp + 8 t): block i < the last, so its columns are < n
#pragma unroll
        for (int t = 0; t < T; ++t)
#pragma unroll
            for (int q = 0; q < Q; ++q) {
                const int row = j0 + lane + 32 * q;
                v[t][q] = row < n ? l[std::size_t(i0 + warp + kRowWarps * t) * n + row] : 0.0f;
            }
        wait_flag(done + j);
        float xr[Q];
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int row = j0 + lane + 32 * q;
            xr[q] = row < n ? __ldcg(x + row) : 0.0f;
        }
#pragma unroll
        for (int t = 0; t < T; ++t)
#pragma unroll
            for (int q = 0; q < Q; ++q) acc[t] = fmaf(v[t][q], xr[q], acc[t]);
    }
#pragma unroll
    for (int t = 0; t < T; ++t) {
        float v = acc[t];
        for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0) column[warp + kRowWarps * t] = v;
    }
    __syncthreads();
    if (threadIdx.x < B) {
        const int row = i0 + threadIdx.x;
        rhs[threadIdx.x] = row < n ? d[row] - column[threadIdx.x] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int t = 0; t < T; ++t) {
        float v = 0;
#pragma unroll
        for (int q = 0; q < Q; ++q) v = fmaf(inv[t][q], rhs[lane + 32 * q], v);
        for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
        const int c = i0 + warp + kRowWarps * t;
        if (lane == 0 && c < n) {
            x[c] = v;
            d[c] = s[c] * v;
        }
    }
    raise_flag(done + i);
}

// ---- the tiled leaf (config.tiled_leaf; the plan in leaf_tiles.hpp) -----------------------------------------
// One block of kLeafThreads per task: thread (tx = lane, ty = warp) holds entries (tx, ty + 8 u) of its
// output tile in registers; operands pass through three padded 32 x 33 tiles of shared memory (rows
// of a tile read across a warp hit 32 banks, a column's entry is broadcast). Tiles written by other
// blocks of the launch are read through L2 (__ldcg) after their flag.
constexpr int kLeafThreads = 256;
constexpr int kLeafWarps = kLeafThreads / 32;
constexpr int kLeafPer = leaf_tiles::kTile / kLeafWarps;  // outputs per thread
using LeafTile = float[leaf_tiles::kTile][leaf_tiles::kTile + 1];

// s(r, c) = src(r, c) (column-major, ld) for r < rows, c < cols, else pad on the diagonal and 0 off it;
// transposed: s(c, r) = src(r, c).
__device__ void leaf_load(LeafTile& s, const float* src, std::size_t ld, int rows, int cols, float pad, bool transposed) {
    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
#pragma unroll
    for (int u = 0; u < kLeafPer; ++u) {
        const int c = ty + kLeafWarps * u;
        const float v = tx < rows && c < cols ? __ldcg(src + std::size_t(c) * ld + tx) : (tx == c ? pad : 0.0f);
        if (transposed) s[c][tx] = v;
        else s[tx][c] = v;
    }
}
// acc(tx, ty + 8 u) += sign sum_q a(tx, q) b(ty + 8 u, q): (A B^T) for the thread's outputs.
__device__ void leaf_product(float (&acc)[kLeafPer], const LeafTile& a, const LeafTile& b, float sign) {
    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
    float sum[kLeafPer] = {};
#pragma unroll 8
    for (int q = 0; q < leaf_tiles::kTile; ++q) {
        const float x = a[tx][q];
#pragma unroll
        for (int u = 0; u < kLeafPer; ++u) sum[u] = fmaf(x, b[ty + kLeafWarps * u][q], sum[u]);
    }
#pragma unroll
    for (int u = 0; u < kLeafPer; ++u) acc[u] = fmaf(sign, sum[u], acc[u]);
}
__device__ void leaf_spill(LeafTile& s, const float (&acc)[kLeafPer], bool transposed) {
    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
#pragma unroll
    for (int u = 0; u < kLeafPer; ++u) {
        const int c = ty + kLeafWarps * u;
        if (transposed) s[c][tx] = acc[u];
        else s[tx][c] = acc[u];
    }
}
// dst(r, c) = acc for r < rows, c < cols (lower_only: r >= c).
__device__ void leaf_store(float* dst, std::size_t ld, const float (&acc)[kLeafPer], int rows, int cols, bool lower_only) {
    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
#pragma unroll
    for (int u = 0; u < kLeafPer; ++u) {
        const int c = ty + kLeafWarps * u;
        if (tx < rows && c < cols && (!lower_only || tx >= c)) dst[std::size_t(c) * ld + tx] = acc[u];
    }
}
// *slot = min(*slot, v) where 0 means none yet.
__device__ void record_first(int* slot, int v) {
    int old = *reinterpret_cast<volatile int*>(slot);
    while (old == 0 || v < old) {
        const int seen = atomicCAS(slot, old, v);
        if (seen == old) break;
        old = seen;
    }
}

// The leaf of order m at (off, off) of L (ld n): L := its Cholesky factor (lower triangle; the upper
// one untouched), inv (ld n, the leaf's rows off.., columns 0 .. m - 1) := the factor's inverse, its
// upper part 0. The first column whose pivot is not positive or not finite (cuSOLVER's info) is
// merged into *info (off + column, when *info is still 0) by the last block; flags: leaf_tiles'.
__global__ void __launch_bounds__(kLeafThreads) tiled_leaf_kernel(int n, float* l, int off, int m, float* inv, int* flags, int* info) {
    namespace lt = leaf_tiles;
    constexpr int T = lt::kTile;
    __shared__ LeafTile sa, sb, sc;
    __shared__ int ticket, last;
    if (threadIdx.x == 0) ticket = atomicAdd(flags, 1);
    __syncthreads();
    const int p = lt::tiles_of(m);
    const lt::Task task = lt::task_of(ticket, p);
    const int i = task.i, j = task.j, rows_i = lt::rows_of(i, m), rows_j = lt::rows_of(j, m);
    const int tx = threadIdx.x % 32;
    const std::size_t ld = std::size_t(n);
    float* const lleaf = l + std::size_t(off) * ld + off;  // the leaf's (0, 0)
    const auto ltile = [&](int a, int b) { return lleaf + std::size_t(b) * T * ld + std::size_t(a) * T; };
    const auto xtile = [&](int a, int b) { return inv + std::size_t(b) * T * ld + std::size_t(a) * T; };
    float acc[kLeafPer] = {};
    if (!task.inverse) {
        leaf_load(sa, ltile(i, j), ld, rows_i, rows_j, i == j ? 1.0f : 0.0f, false);  // a diagonal tile padded with I
        __syncthreads();
        const int tyu = threadIdx.x / 32;
#pragma unroll
        for (int u = 0; u < kLeafPer; ++u) acc[u] = sa[tx][tyu + kLeafWarps * u];
        __syncthreads();
        for (int k = 0; k < j; ++k) {  // S -= L(i, k) L(j, k)^T, column k's tiles full (k < j < p)
            wait_flag(flags + lt::factor_flag(p, i, k));
            if (i != j) wait_flag(flags + lt::factor_flag(p, j, k));
            leaf_load(sa, ltile(i, k), ld, rows_i, T, 0.0f, false);
            leaf_load(sb, ltile(j, k), ld, rows_j, T, 0.0f, false);
            __syncthreads();
            leaf_product(acc, sa, sb, -1.0f);
            __syncthreads();
        }
        if (i == j) {
            leaf_spill(sc, acc, false);  // padded rows and columns hold the identity's
            __syncthreads();
            if (threadIdx.x < 32) {  // one warp: chol(sc) in place (lower), then sb = its inverse
                const int lane = threadIdx.x;
                for (int k = 0; k < T; ++k) {
                    const float d = sc[k][k];
                    if (lane == 0 && k < rows_j && !(d > 0.0f && isfinite(d))) record_first(flags + 2, j * T + k + 1);
                    const float root = sqrtf(d);
                    __syncwarp();
                    if (lane > k) sc[lane][k] /= root;
                    if (lane == k) sc[k][k] = root;
                    __syncwarp();
                    if (lane > k) {
                        const float lck = sc[lane][k];
                        for (int r = lane; r < T; ++r) sc[r][lane] -= sc[r][k] * lck;
                    }
                    __syncwarp();
                }
                // Column `lane` of the inverse by forward substitution (entries above the diagonal 0).
                for (int r = 0; r < T; ++r) {
                    float v = r == lane ? 1.0f : 0.0f;
                    for (int q = 0; q < r; ++q) v -= sc[r][q] * sb[q][lane];
                    sb[r][lane] = r >= lane ? v / sc[r][r] : 0.0f;
                }
            }
            __syncthreads();
            const int ty = threadIdx.x / 32;
            float out[kLeafPer], xin[kLeafPer];
#pragma unroll
            for (int u = 0; u < kLeafPer; ++u) out[u] = sc[tx][ty + kLeafWarps * u], xin[u] = sb[tx][ty + kLeafWarps * u];
            leaf_store(ltile(j, j), ld, out, rows_j, rows_j, true);
            leaf_store(xtile(j, j), ld, xin, rows_j, rows_j, false);
            const float zero[kLeafPer] = {};
            for (int c = j + 1; c < p; ++c) leaf_store(xtile(j, c), ld, zero, rows_j, lt::rows_of(c, m), false);
        } else {  // L(i, j) = S X(j, j)^T
            wait_flag(flags + lt::factor_flag(p, j, j));
            leaf_spill(sa, acc, false);
            leaf_load(sb, xtile(j, j), ld, rows_j, rows_j, 0.0f, false);
            __syncthreads();
            float out[kLeafPer] = {};
            leaf_product(out, sa, sb, 1.0f);
            leaf_store(ltile(i, j), ld, out, rows_i, rows_j, false);
        }
        raise_flag(flags + lt::factor_flag(p, i, j));
    } else {  // X(i, j) = -X(i, i) sum_{k = j}^{i - 1} L(i, k) X(k, j), i > j: every tile k < i full
        for (int k = j; k < i; ++k) {
            wait_flag(flags + lt::factor_flag(p, i, k));
            wait_flag(flags + (k == j ? lt::factor_flag(p, j, j) : lt::inverse_flag(p, k, j)));
            leaf_load(sa, ltile(i, k), ld, rows_i, T, 0.0f, false);
            leaf_load(sb, xtile(k, j), ld, T, T, 0.0f, true);  // sb(c, q) = X(k, j)(q, c)
            __syncthreads();
            leaf_product(acc, sa, sb, 1.0f);
            __syncthreads();
        }
        wait_flag(flags + lt::factor_flag(p, i, i));
        leaf_load(sa, xtile(i, i), ld, rows_i, rows_i, 0.0f, false);
        leaf_spill(sb, acc, true);  // sb(c, q) = acc(q, c)
        __syncthreads();
        float out[kLeafPer] = {};
        leaf_product(out, sa, sb, -1.0f);
        leaf_store(xtile(i, j), ld, out, rows_i, T, false);
        raise_flag(flags + lt::inverse_flag(p, i, j));
    }
    // The last block: the leaf's info, then the flags back to zero for the next launch.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(flags + 1, 1) == lt::task_count(p) - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    if (threadIdx.x == 0) {
        const int bad = *reinterpret_cast<volatile int*>(flags + 2);
        if (bad != 0 && *info == 0) *info = off + bad;
    }
    __syncthreads();
    for (int f = threadIdx.x; f < lt::flag_count(p); f += kLeafThreads) flags[f] = 0;
}

// The tiled leaf on stream st: flags hold leaf_tiles::flag_count(tiles_of(m)) zeros on entry and on exit.
void tiled_leaf(cudaStream_t st, int n, float* l, int off, int m, float* inv, int* flags, int* info) {
    if (m <= 0) return;
    const int p = leaf_tiles::tiles_of(m);
    tiled_leaf_kernel<<<unsigned(leaf_tiles::task_count(p)), kLeafThreads, 0, st>>>(n, l, off, m, inv, flags, info);
    BATCHSOLVE_LAUNCH_CHECK("tiled_leaf_kernel");
}

// ---- the recursive factorisation ------------------------------------------------------------------------

// hi (and lo) := the low copies of the m x k FP32 block src (ld lds) on stream st, ld m (to_low_kernel).
void convert_low(cudaStream_t st, LowPrecision p, int m, int k, const float* src, int lds, void* hi, void* lo) {
    if (m <= 0 || k <= 0) return;
    const dim3 grid(blocks_for(m), unsigned(std::min(k, kMaxGridY)));
    if (p == LowPrecision::bf16)
        to_low_kernel<__nv_bfloat16><<<grid, kThreads, 0, st>>>(m, k, src, lds, 1.0f, static_cast<__nv_bfloat16*>(hi), nullptr);
    else
        to_low_kernel<__half><<<grid, kThreads, 0, st>>>(m, k, src, lds, kHalfScale, static_cast<__half*>(hi),
                                                         p == LowPrecision::fp16_split ? static_cast<__half*>(lo) : nullptr);
    BATCHSOLVE_LAUNCH_CHECK("to_low_kernel");
}

// C (ldc) -= A B^T (m x n, inner k) on h's stream: from FP32 (a, b; TF32) or from the low copies
// (ah/al, bh/bl with their ld).
void low_gemm(cublasHandle_t h, LowPrecision p, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
              const void* ah, const void* al, int ldah, const void* bh, const void* bl, int ldbh, float* cmat, int ldc) {
    if (m <= 0 || n <= 0 || k <= 0) return;
    const float one = 1;
    if (!uses_halves(p)) {
        const float minus_one = -1;
        BATCHSOLVE_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &minus_one, a, CUDA_R_32F, lda, b, CUDA_R_32F,
                                             ldb, &one, cmat, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
        return;
    }
    const cudaDataType type = p == LowPrecision::bf16 ? CUDA_R_16BF : CUDA_R_16F;
    const float scale = p == LowPrecision::bf16 ? 1.0f : kHalfScale;
    const float alpha = -1.0f / (scale * scale);
    BATCHSOLVE_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, ah, type, ldah, bh, type, ldbh, &one, cmat,
                                         CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    if (p == LowPrecision::fp16_split) {
        const float cross = alpha / kLoScale;
        BATCHSOLVE_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &cross, ah, type, ldah, bl, type, ldbh, &one,
                                             cmat, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        BATCHSOLVE_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &cross, al, type, ldah, bh, type, ldbh, &one,
                                             cmat, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
}

class Recursive {
public:
    Recursive(CudaResources& r, int n, LowPrecision p, const MixedFactorConfig& c, const Carve& w, int* info)
        : r_(r), h_(r.cublas()), n_(n), p_(p), c_(c), w_(w), info_(info) {}

    void factor(int off, int m) {
        if (m <= c_.leaf && c_.tiled_leaf) {  // factor, inverse and info in one launch
            tiled_leaf(r_.stream(), n_, w_.l, off, m, w_.inv + off, w_.leaf_flags, info_);
            return;
        }
        if (m <= c_.leaf) {
            BATCHSOLVE_CUSOLVER_CHECK(cusolverDnSpotrf(r_.cusolver(), CUBLAS_FILL_MODE_LOWER, m, at(off, off), n_, w_.solver,
                                                       w_.lwork, w_.leaf_info));
            merge_leaf_info_kernel<<<1, 1, 0, r_.stream()>>>(info_, w_.leaf_info, off);
            BATCHSOLVE_LAUNCH_CHECK("merge_leaf_info_kernel");
            if (c_.inverse) invert_leaf(off, m);
            return;
        }
        const int m1 = split_of(m), m2 = m - m1;
        factor(off, m1);
        solve_panel(off + m1, m2, off, m1);
        update_triangle(off + m1, m2, off, m1);
        factor(off + m1, m2);
    }

private:
    float* at(int i, int j) const { return w_.l + std::size_t(j) * n_ + i; }

    // inv(off.., 0:m) := L(off:off+m, off:off+m)^-1 (lower; its upper part exactly 0), in FP32.
    void invert_leaf(int off, int m) {
        float* w = w_.inv + off;
        identity_kernel<<<dim3(blocks_for(m), unsigned(m)), kThreads, 0, r_.stream()>>>(m, w, n_);
        BATCHSOLVE_LAUNCH_CHECK("identity_kernel");
        const float one = 1;
        BATCHSOLVE_CUBLAS_CHECK(cublasStrsm(h_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, m, m,
                                            &one, at(off, off), n_, w, n_));
    }

    // L(r0:r0+m, c0:c0+k) := L(r0.., c0..) L(c0:c0+k, c0:c0+k)^-T.
    void solve_panel(int r0, int m, int c0, int k) {
        if (c_.inverse && k <= c_.leaf) {  // a diagonal leaf of the factor (the same splits): its inverse
            if (m <= 0) return;
            float* copy = w_.rows;
            BATCHSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(copy, std::size_t(m) * sizeof(float), at(r0, c0), std::size_t(n_) * sizeof(float),
                                                    std::size_t(m) * sizeof(float), k, cudaMemcpyDeviceToDevice, r_.stream()));
            const float one = 1, zero = 0;
            // TF32 where the factor's products are that precise anyway; the split keeps FP32.
            const cublasComputeType_t compute = p_ == LowPrecision::fp16_split ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
            BATCHSOLVE_CUBLAS_CHECK(cublasGemmEx(h_, CUBLAS_OP_N, CUBLAS_OP_T, m, k, k, &one, copy, CUDA_R_32F, m, w_.inv + c0,
                                                 CUDA_R_32F, n_, &zero, at(r0, c0), CUDA_R_32F, n_, compute, CUBLAS_GEMM_DEFAULT));
            return;
        }
        if (k <= c_.trsm_leaf) {
            const float one = 1;
            // The leaves in TF32 math where the factor's products are that precise anyway.
            if (p_ != LowPrecision::fp16_split) BATCHSOLVE_CUBLAS_CHECK(cublasSetMathMode(h_, CUBLAS_TF32_TENSOR_OP_MATH));
            const cublasStatus_t status = cublasStrsm(h_, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                                      CUBLAS_DIAG_NON_UNIT, m, k, &one, at(c0, c0), n_, at(r0, c0), n_);
            if (p_ != LowPrecision::fp16_split) BATCHSOLVE_CUBLAS_CHECK(cublasSetMathMode(h_, CUBLAS_DEFAULT_MATH));
            BATCHSOLVE_CUBLAS_CHECK(status);
            return;
        }
        const int k1 = split_of(k), k2 = k - k1;
        solve_panel(r0, m, c0, k1);
        // B2 -= X1 L21^T: X1 = L(r0.., c0..c0+k1) (m x k1), L21 = L(c0+k1.., c0..) (k2 x k1).
        product(m, k2, k1, at(r0, c0), at(c0 + k1, c0), at(r0, c0 + k1), nullptr, nullptr);
        solve_panel(r0, m, c0 + k1, k2);
    }

    // L(r:r+m, r:r+m) (lower) -= P P^T, P = L(r:r+m, c:c+k); the low copies of P made once.
    void update_triangle(int r, int m, int c, int k) {
        const void* ph = nullptr;
        const void* pl = nullptr;
        if (uses_halves(p_)) {
            convert(m, k, at(r, c), w_.hi, w_.lo);
            ph = w_.hi, pl = w_.lo;
        }
        triangle(r, m, c, k, 0, m, ph, pl);
    }

    // Rows [q, q+mm) of the triangle of order m at (r, r); ph / pl the copies of P (ld m).
    void triangle(int r, int m, int c, int k, int q, int mm, const void* ph, const void* pl) {
        if (mm <= c_.leaf) {  // the square diagonal block: its upper half is scratch of the factor's
            gemm(mm, mm, k, at(r + q, c), n_, at(r + q, c), n_, shifted(ph, q), shifted(pl, q), m, shifted(ph, q),
                 shifted(pl, q), m, at(r + q, r + q));
            return;
        }
        const int m1 = split_of(mm), m2 = mm - m1;
        triangle(r, m, c, k, q, m1, ph, pl);
        gemm(m2, m1, k, at(r + q + m1, c), n_, at(r + q, c), n_, shifted(ph, q + m1), shifted(pl, q + m1), m, shifted(ph, q),
             shifted(pl, q), m, at(r + q + m1, r + q));
        triangle(r, m, c, k, q + m1, m2, ph, pl);
    }

    const void* shifted(const void* p, int rows) const {
        return p ? static_cast<const char*>(p) + std::size_t(rows) * 2 : nullptr;  // halves: 2 bytes each
    }

    // C (m x n) -= A B^T for FP32 operands in L: the low copies first where the precision needs them
    // (A's copy at the start of hi/lo, B's after it).
    void product(int m, int n, int k, const float* a, const float* b, float* cmat, const void*, const void*) {
        if (!uses_halves(p_)) {
            gemm(m, n, k, a, n_, b, n_, nullptr, nullptr, 0, nullptr, nullptr, 0, cmat);
            return;
        }
        char* hi = static_cast<char*>(w_.hi);
        char* lo = static_cast<char*>(w_.lo);
        const std::size_t a_bytes = std::size_t(m) * k * 2;
        convert(m, k, a, hi, lo);
        convert(n, k, b, hi + a_bytes, lo ? lo + a_bytes : nullptr);
        gemm(m, n, k, a, n_, b, n_, hi, lo, m, hi + a_bytes, lo ? lo + a_bytes : nullptr, n, cmat);
    }

    void convert(int m, int k, const float* src, void* hi, void* lo) { convert_low(r_.stream(), p_, m, k, src, n_, hi, lo); }

    // C (ld n_) -= A B^T: from FP32 (a, b; TF32) or from the low copies (ah/al, bh/bl with their ld).
    void gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, const void* ah, const void* al, int ldah,
              const void* bh, const void* bl, int ldbh, float* cmat) {
        low_gemm(h_, p_, m, n, k, a, lda, b, ldb, ah, al, ldah, bh, bl, ldbh, cmat, n_);
    }

    CudaResources& r_;
    cublasHandle_t h_;
    int n_;
    LowPrecision p_;
    MixedFactorConfig c_;
    Carve w_;
    int* info_;
};

// The lookahead factor's second stream, with its own cuBLAS and cuSOLVER handles (a handle's workspace
// must not serve two streams at once) and the events between the streams. Leased per call; kept for
// the life of the process once a graph captured it (every replay runs on its stream and workspace).
struct SideLane {
    int device = -1;
    bool busy = false;
    cudaStream_t stream = nullptr;
    cublasHandle_t cublas = nullptr;
    cusolverDnHandle_t cusolver = nullptr;
    cudaEvent_t fork = nullptr, panel = nullptr, column = nullptr, join = nullptr;
};

class SideLease {
public:
    explicit SideLease(int device) {
        std::lock_guard<std::mutex> lock(mutex());
        for (auto& lane : lanes())
            if (lane->device == device && !lane->busy) {
                lane_ = lane.get();
                break;
            }
        if (lane_ == nullptr) {
            auto lane = std::make_unique<SideLane>();
            lane->device = device;
            // The chain at the highest priority: its small kernels take SMs as the trailing GEMM's
            // blocks retire instead of queueing behind all of them.
            int least = 0, greatest = 0;
            BATCHSOLVE_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
            BATCHSOLVE_CUDA_CHECK(cudaStreamCreateWithPriority(&lane->stream, cudaStreamNonBlocking, greatest));
            BATCHSOLVE_CUBLAS_CHECK(cublasCreate(&lane->cublas));
            BATCHSOLVE_CUBLAS_CHECK(cublasSetStream(lane->cublas, lane->stream));
            BATCHSOLVE_CUBLAS_CHECK(cublasSetPointerMode(lane->cublas, CUBLAS_POINTER_MODE_HOST));
            BATCHSOLVE_CUSOLVER_CHECK(cusolverDnCreate(&lane->cusolver));
            BATCHSOLVE_CUSOLVER_CHECK(cusolverDnSetStream(lane->cusolver, lane->stream));
            for (cudaEvent_t* e : {&lane->fork, &lane->panel, &lane->column, &lane->join})
                BATCHSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
            lane_ = lane.get();
            lanes().push_back(std::move(lane));
        }
        lane_->busy = true;
    }
    ~SideLease() {
        if (kept_) return;
        std::lock_guard<std::mutex> lock(mutex());
        lane_->busy = false;
    }
    SideLease(const SideLease&) = delete;
    SideLease& operator=(const SideLease&) = delete;
    SideLane& operator*() const { return *lane_; }
    void keep() { kept_ = true; }

private:
    static std::mutex& mutex() {
        static std::mutex m;
        return m;
    }
    static std::vector<std::unique_ptr<SideLane>>& lanes() {
        static std::vector<std::unique_ptr<SideLane>> all;
        return all;
    }
    SideLane* lane_ = nullptr;
    bool kept_ = false;
};

// Right-looking in blocks of nb = leaf columns with lookahead (config.lookahead). Block k's chain --
// its diagonal leaf (cuSOLVER SPOTRF), the leaf's inverse, the panel's solve and its low-precision
// copy -- runs on the side stream while the main stream runs block k - 1's trailing update: first the
// block column k + 1 (after which block k + 1's chain may start), then the rest of the trailing
// matrix in pieces of update_width columns (each piece rows c0.., columns c0 .. c0 + w: its square
// above the diagonal is updated too, with the mirrored values, and never read). The chain is latency,
// the update tensor-core GEMMs; the recursive factor runs them one after the other (at n = 16384 the
// one-product FP16 factor took 18.9 ms of which its products need about 4.3: the rest is the chain,
// results/2026-12-03-h200-8936072-mixed-phase). Overlapped, the GEMMs run back to back and the factor
// costs about the larger of the two, not their sum. The panel copies alternate between two buffers:
// block k + 1's is written while block k's is still read.
class Lookahead {
public:
    Lookahead(CudaResources& r, SideLane& side, int n, LowPrecision p, const MixedFactorConfig& c, const Carve& w, int* info)
        : r_(r), side_(side), n_(n), p_(p), c_(c), w_(w), info_(info) {}

    void factor() {
        const int nb = std::max(1, std::min(c_.leaf, n_));
        const int width = c_.update_width > 0 ? (c_.update_width + nb - 1) / nb * nb : n_;
        cudaStream_t main = r_.stream(), side = side_.stream;
        BATCHSOLVE_CUDA_CHECK(cudaEventRecord(side_.fork, main));
        BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(side, side_.fork, 0));
        for (int k = 0, o = 0; o < n_; ++k, o += nb) {
            const int wk = std::min(nb, n_ - o), r0 = o + wk, m = n_ - r0;
            if (k > 0) BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(side, side_.column, 0));
            leaf(o, wk);
            if (m <= 0) break;
            panel(r0, m, o, wk);
            void* hi = buffer(w_.hi, k);
            void* lo = w_.lo ? buffer(w_.lo, k) : nullptr;
            if (uses_halves(p_)) convert_low(side, p_, m, wk, at(r0, o), n_, hi, lo);
            BATCHSOLVE_CUDA_CHECK(cudaEventRecord(side_.panel, side));
            BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(main, side_.panel, 0));
            const int next = std::min(nb, m);
            update(o, wk, r0, m, hi, lo, r0, next);
            BATCHSOLVE_CUDA_CHECK(cudaEventRecord(side_.column, main));
            for (int c0 = r0 + next; c0 < n_; c0 += width) update(o, wk, r0, m, hi, lo, c0, std::min(width, n_ - c0));
        }
        BATCHSOLVE_CUDA_CHECK(cudaEventRecord(side_.join, side));
        BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(main, side_.join, 0));
    }

private:
    float* at(int i, int j) const { return w_.l + std::size_t(j) * n_ + i; }
    // Block k's panel copy: the two buffers alternate (each n x leaf halves).
    void* buffer(void* base, int k) const {
        return static_cast<char*>(base) + std::size_t(k % 2) * std::size_t(n_) * std::min(n_, c_.leaf) * 2;
    }

    // Side stream: L(o.., o..) (order wk) := chol, its info merged, its inverse (config.inverse).
    void leaf(int o, int wk) {
        cudaStream_t side = side_.stream;
        if (c_.tiled_leaf) {  // factor, inverse and info in one launch
            tiled_leaf(side, n_, w_.l, o, wk, w_.inv + o, w_.leaf_flags, info_);
            return;
        }
        BATCHSOLVE_CUSOLVER_CHECK(
            cusolverDnSpotrf(side_.cusolver, CUBLAS_FILL_MODE_LOWER, wk, at(o, o), n_, w_.solver, w_.lwork, w_.leaf_info));
        merge_leaf_info_kernel<<<1, 1, 0, side>>>(info_, w_.leaf_info, o);
        BATCHSOLVE_LAUNCH_CHECK("merge_leaf_info_kernel");
        if (!c_.inverse) return;
        float* inv = w_.inv + o;
        identity_kernel<<<dim3(blocks_for(wk), unsigned(wk)), kThreads, 0, side>>>(wk, inv, n_);
        BATCHSOLVE_LAUNCH_CHECK("identity_kernel");
        const float one = 1;
        BATCHSOLVE_CUBLAS_CHECK(cublasStrsm(side_.cublas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                                            wk, wk, &one, at(o, o), n_, inv, n_));
    }

    // Side stream: L(r0:n, o:o+wk) := L(r0.., o..) L(o.., o..)^-T, by the leaf's inverse or STRSM (as
    // the recursive factor's solve leaves).
    void panel(int r0, int m, int o, int wk) {
        const float one = 1, zero = 0;
        if (c_.inverse) {
            float* copy = w_.rows;
            BATCHSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(copy, std::size_t(m) * sizeof(float), at(r0, o), std::size_t(n_) * sizeof(float),
                                                    std::size_t(m) * sizeof(float), wk, cudaMemcpyDeviceToDevice, side_.stream));
            const cublasComputeType_t compute = p_ == LowPrecision::fp16_split ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
            BATCHSOLVE_CUBLAS_CHECK(cublasGemmEx(side_.cublas, CUBLAS_OP_N, CUBLAS_OP_T, m, wk, wk, &one, copy, CUDA_R_32F, m,
                                                 w_.inv + o, CUDA_R_32F, n_, &zero, at(r0, o), CUDA_R_32F, n_, compute,
                                                 CUBLAS_GEMM_DEFAULT));
            return;
        }
        if (p_ != LowPrecision::fp16_split) BATCHSOLVE_CUBLAS_CHECK(cublasSetMathMode(side_.cublas, CUBLAS_TF32_TENSOR_OP_MATH));
        const cublasStatus_t status = cublasStrsm(side_.cublas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                                  CUBLAS_DIAG_NON_UNIT, m, wk, &one, at(o, o), n_, at(r0, o), n_);
        if (p_ != LowPrecision::fp16_split) BATCHSOLVE_CUBLAS_CHECK(cublasSetMathMode(side_.cublas, CUBLAS_DEFAULT_MATH));
        BATCHSOLVE_CUBLAS_CHECK(status);
    }

    // Main stream: L(c0:n, c0:c0+cw) -= P(c0.., :) P(c0..c0+cw, :)^T, P = block (o, wk)'s panel (rows
    // r0 .. n: in L, or its low copies hi / lo with ld m).
    void update(int o, int wk, int r0, int m, const void* hi, const void* lo, int c0, int cw) {
        const std::size_t skip = std::size_t(c0 - r0) * 2;  // halves
        const void* ah = uses_halves(p_) ? static_cast<const char*>(hi) + skip : nullptr;
        const void* al = lo ? static_cast<const char*>(lo) + skip : nullptr;
        low_gemm(r_.cublas(), p_, n_ - c0, cw, wk, at(c0, o), n_, at(c0, o), n_, ah, al, m, ah, al, m, at(c0, c0), n_);
    }

    CudaResources& r_;
    SideLane& side_;
    int n_;
    LowPrecision p_;
    MixedFactorConfig c_;
    Carve w_;
    int* info_;
};

// cuSOLVER's SPOTRF buffer (floats) for the leaves of order min(n, leaf). The size query reads no data
// but may refuse a null matrix: without one yet (the bytes query) the context's scratch stands in, as
// for LDL^T's queries; the factor asks again with the factor's own address and ld n (leaf_lwork_at)
// and refuses an answer larger than the scratch was carved for.
int leaf_lwork(CudaResources& r, int n, int leaf) {
    if (n == 0) return 0;
    const int m = std::min(n, leaf);
    float* stand_in = static_cast<float*>(r.scratch(256));
    int lwork = 0;
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnSpotrf_bufferSize(r.cusolver(), CUBLAS_FILL_MODE_LOWER, m, stand_in, n, &lwork));
    return lwork;
}
int leaf_lwork_at(CudaResources& r, int n, int leaf, float* l) {
    int lwork = 0;
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnSpotrf_bufferSize(r.cusolver(), CUBLAS_FILL_MODE_LOWER, std::min(n, leaf), l, n, &lwork));
    return lwork;
}

// Executable graphs of captured factors (config.graph), keyed by everything the capture depends on.
// Never destroyed (a replay may still be in flight when another call would evict it); bounded.
constexpr std::size_t kGraphCacheCapacity = 64;
using GraphKey = jit::IntegerKey<19>;
jit::CallCache<GraphKey, cudaGraphExec_t>& graph_cache() {
    static jit::CallCache<GraphKey, cudaGraphExec_t> cache(kGraphCacheCapacity);
    return cache;
}

// Runs record() (work on r's stream only) captured as a graph on the first call with `key` and
// replays it on later ones; where capture fails (a library call that refuses it) the call runs
// uncaptured and so do later ones with the same key.
template <class Record>
void run_captured(CudaResources& r, const GraphKey& key, Record record) {
    auto& cache = graph_cache();
    const cudaGraphExec_t* cached = cache.find(key);
    if (cached && *cached) {
        BATCHSOLVE_CUDA_CHECK(cudaGraphLaunch(*cached, r.stream()));
        return;
    }
    if (cached || cache.full()) {
        record();
        return;
    }
    BATCHSOLVE_CUDA_CHECK(cudaStreamBeginCapture(r.stream(), cudaStreamCaptureModeRelaxed));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool captured = false;
    try {
        record();
        BATCHSOLVE_CUDA_CHECK(cudaStreamEndCapture(r.stream(), &graph));
        // Node priorities kept: the lookahead's chain was captured from its high-priority stream.
        BATCHSOLVE_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagUseNodePriority));
        captured = true;
    } catch (const CudaError&) {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(r.stream(), &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
            cudaGraph_t partial = nullptr;
            cudaStreamEndCapture(r.stream(), &partial);  // leave the stream usable
            if (partial) cudaGraphDestroy(partial);
        }
        cudaGetLastError();  // capture errors are not sticky: clear the last one
    }
    if (graph) cudaGraphDestroy(graph);
    if (captured) {
        cache.insert(key, std::make_unique<cudaGraphExec_t>(exec));
        BATCHSOLVE_CUDA_CHECK(cudaGraphLaunch(exec, r.stream()));
        return;
    }
    cache.insert(key, std::make_unique<cudaGraphExec_t>(nullptr));
    record();
}

long long shift_bits(double shift) {
    long long bits = 0;
    std::memcpy(&bits, &shift, sizeof bits);
    return bits;
}

CudaResources& prepare(Context& ctx) {
    CudaResources& r = detail::resources_of(ctx, "posv_mixed");
    BATCHSOLVE_CUBLAS_CHECK(cublasSetPointerMode(r.cublas(), CUBLAS_POINTER_MODE_HOST));
    return r;
}

}  // namespace

template <class T>
BATCHSOLVE_MIXED_FACTOR_BYTES(T) {
    CudaResources& r = prepare(ctx);
    DeviceGuard guard(r.device_);
    return Carve(n, inverse_cols(n, config), fused_of(config), solve_rows_of(config), uses_halves(precision),
                 precision == LowPrecision::fp16_split, lookahead_entries(n, config), leaf_lwork(r, n, config.leaf), nullptr,
                 tiled_cols(n, config))
        .total;
}

template <class T>
BATCHSOLVE_MIXED_FACTOR(T) {
    CudaResources& r = prepare(ctx);
    DeviceGuard guard(r.device_);
    r.require_device_memory(info, "posv_mixed", "info");
    BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), r.stream()));
    if (n == 0) return;
    r.require_device_memory(a, "posv_mixed", "a");
    const bool halves = uses_halves(precision), split = precision == LowPrecision::fp16_split;
    const int carved = leaf_lwork(r, n, config.leaf);
    Carve w(n, inverse_cols(n, config), fused_of(config), solve_rows_of(config), halves, split, lookahead_entries(n, config), carved,
            scratch, tiled_cols(n, config));
    const int needed = leaf_lwork_at(r, n, config.leaf, w.l);
    if (needed > carved)
        throw CudaError("cusolverDnSpotrf_bufferSize", int(CUSOLVER_STATUS_INTERNAL_ERROR),
                        "posv_mixed: the leaves need " + std::to_string(needed) + " floats of cuSOLVER buffer, the workspace query gave " +
                            std::to_string(carved));
    // The lookahead's second stream and handles, leased before any capture (creating them is no
    // stream work to record).
    std::unique_ptr<SideLease> side;
    if (config.lookahead) side = std::make_unique<SideLease>(r.device_);
    const auto record = [&] {
        preset_bad_kernel<<<1, 1, 0, r.stream()>>>(w.bad);
        // The tiled leaf's flags start at zero (each launch leaves them so).
        if (w.leaf_flags)
            BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(
                w.leaf_flags, 0, std::size_t(leaf_tiles::flag_count(leaf_tiles::tiles_of(tiled_cols(n, config)))) * sizeof(int),
                r.stream()));
        diagonal_scale_kernel<<<blocks_for(n), kThreads, 0, r.stream()>>>(n, a, lda, w.s, w.bad);
        BATCHSOLVE_LAUNCH_CHECK("diagonal_scale_kernel");
        const unsigned tiles = unsigned((n + kTile - 1) / kTile);
        scaled_copy_kernel<<<dim3(tiles, tiles), dim3(kTile, 8), 0, r.stream()>>>(uplo == Uplo::lower, n, a, lda, w.s,
                                                                                  float(shift), w.l);
        BATCHSOLVE_LAUNCH_CHECK("scaled_copy_kernel");
        bad_to_info_kernel<<<1, 1, 0, r.stream()>>>(info, w.bad);
        BATCHSOLVE_LAUNCH_CHECK("bad_to_info_kernel");
        if (side) {
            cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
            BATCHSOLVE_CUDA_CHECK(cudaStreamIsCapturing(r.stream(), &capturing));
            if (capturing != cudaStreamCaptureStatusNone) side->keep();  // the graph runs on its stream and handles
            Lookahead(r, **side, n, precision, config, w, info).factor();
        } else {
            Recursive(r, n, precision, config, w, info).factor(0, n);
        }
        // The block-row solve's inverses of the diagonal blocks, from the finished factor.
        if (w.dinv) {
            const int b = solve_rows_of(config);
            const unsigned blocks = unsigned((n + b - 1) / b);
            const std::size_t bytes = 2 * std::size_t(b) * b * sizeof(float);
            if (b == 128)
                block_inverse_kernel<128><<<blocks, 128, bytes, r.stream()>>>(n, w.l, w.dinv);
            else
                block_inverse_kernel<64><<<blocks, 64, bytes, r.stream()>>>(n, w.l, w.dinv);
            BATCHSOLVE_LAUNCH_CHECK("block_inverse_kernel");
        }
    };
    // 2 x 128^2 floats of shared memory are past the default 48 KB (set before any capture).
    if (solve_rows_of(config) == 128)
        BATCHSOLVE_CUDA_CHECK(cudaFuncSetAttribute(block_inverse_kernel<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   int(2 * 128 * 128 * sizeof(float))));
    if (config.graph) {
        using jit::key_field;
        const GraphKey key{{r.device_, key_field(r.stream()), n, int(precision), int(uplo), key_field(a), lda, key_field(scratch),
                            key_field(info), shift_bits(shift), config.leaf, config.trsm_leaf, config.inverse, config.fused_solve,
                            carved, config.lookahead, config.update_width, config.solve_rows, config.tiled_leaf}};
        run_captured(r, key, record);
    } else {
        record();
    }
    if (w.plan) {  // the fused solve's plan (pageable source: staged before the call returns)
        const SolvePlan plan(n, config.leaf);
        BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(w.plan, plan.ints.data(), plan.ints.size() * sizeof(int), cudaMemcpyHostToDevice,
                                              r.stream()));
    }
}

template <class T>
BATCHSOLVE_MIXED_SOLVE(T) {
    CudaResources& r = prepare(ctx);
    DeviceGuard guard(r.device_);
    if (n == 0 || nrhs == 0) return;
    // Only L, S, the inverses and the fused solve's pieces are used: the others need no sizes here.
    const Carve w(n, inverse_cols(n, config), fused_of(config), solve_rows_of(config), false, false, 0, 0, const_cast<void*>(scratch));
    cublasHandle_t h = r.cublas();
    if (nrhs == 1 && w.dinv) {  // S inside the two launches
        const int b = solve_rows_of(config), blocks = (n + b - 1) / b;
        BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(w.sflags, 0, (2 + 2 * std::size_t(blocks)) * sizeof(int), r.stream()));
        if (b == 128) {
            row_forward_kernel<128><<<blocks, kRowThreads, 0, r.stream()>>>(n, w.l, w.dinv, w.s, d, w.sflags);
            BATCHSOLVE_LAUNCH_CHECK("row_forward_kernel");
            row_backward_kernel<128><<<blocks, kRowThreads, 0, r.stream()>>>(n, w.l, w.dinv, w.s, d, w.xsol, w.sflags);
        } else {
            row_forward_kernel<64><<<blocks, kRowThreads, 0, r.stream()>>>(n, w.l, w.dinv, w.s, d, w.sflags);
            BATCHSOLVE_LAUNCH_CHECK("row_forward_kernel");
            row_backward_kernel<64><<<blocks, kRowThreads, 0, r.stream()>>>(n, w.l, w.dinv, w.s, d, w.xsol, w.sflags);
        }
        BATCHSOLVE_LAUNCH_CHECK("row_backward_kernel");
        return;
    }
    scale_rows_kernel<<<dim3(blocks_for(n), nrhs), kThreads, 0, r.stream()>>>(n, w.s, d, ldd);
    BATCHSOLVE_LAUNCH_CHECK("scale_rows_kernel");
    const int b = config.solve_block;
    if (nrhs == 1 && w.plan) {
        const SolvePlan plan(n, config.leaf);  // its ints are on the device since the factor
        BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(w.counters, 0, (2 + 4 * std::size_t(plan.leaves)) * sizeof(int), r.stream()));
        fused_forward_kernel<<<plan.chunks, kFusedThreads, 0, r.stream()>>>(n, w.l, w.inv, d, w.y, w.plan, plan.leaves,
                                                                            plan.chunks, w.counters);
        BATCHSOLVE_LAUNCH_CHECK("fused_forward_kernel");
        fused_backward_kernel<<<plan.chunks, kFusedThreads, 0, r.stream()>>>(n, w.l, w.inv, d, w.y, w.plan, plan.leaves,
                                                                             plan.chunks, w.counters);
        BATCHSOLVE_LAUNCH_CHECK("fused_backward_kernel");
    } else if (nrhs == 1 && b > 0 && b < n) {
        const float one = 1, minus_one = -1;
        for (int k = 0; k < n; k += b) {  // L y = d
            const int kb = std::min(b, n - k), rest = n - k - kb;
            BATCHSOLVE_CUBLAS_CHECK(cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, kb,
                                                w.l + std::size_t(k) * n + k, n, d + k, 1));
            if (rest > 0)
                BATCHSOLVE_CUBLAS_CHECK(cublasSgemv(h, CUBLAS_OP_N, rest, kb, &minus_one, w.l + std::size_t(k) * n + k + kb, n,
                                                    d + k, 1, &one, d + k + kb, 1));
        }
        for (int k = (n - 1) / b * b; k >= 0; k -= b) {  // L^T x = y
            const int kb = std::min(b, n - k), rest = n - k - kb;
            if (rest > 0)
                BATCHSOLVE_CUBLAS_CHECK(cublasSgemv(h, CUBLAS_OP_T, rest, kb, &minus_one, w.l + std::size_t(k) * n + k + kb, n,
                                                    d + k + kb, 1, &one, d + k, 1));
            BATCHSOLVE_CUBLAS_CHECK(cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, kb,
                                                w.l + std::size_t(k) * n + k, n, d + k, 1));
        }
    } else if (nrhs == 1) {
        BATCHSOLVE_CUBLAS_CHECK(cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, w.l, n, d, 1));
        BATCHSOLVE_CUBLAS_CHECK(cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, n, w.l, n, d, 1));
    } else {
        const float one = 1;
        BATCHSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n,
                                            nrhs, &one, w.l, n, d, ldd));
        BATCHSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, n,
                                            nrhs, &one, w.l, n, d, ldd));
    }
    scale_rows_kernel<<<dim3(blocks_for(n), nrhs), kThreads, 0, r.stream()>>>(n, w.s, d, ldd);
    BATCHSOLVE_LAUNCH_CHECK("scale_rows_kernel");
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_MIXED_FACTOR_ROUTINES)

}  // namespace batchsolve::cuda_backend
