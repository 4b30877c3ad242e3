// The Cholesky solve of one system packed in a thread block's shared memory (the fused build + solve of
// engine_cuda_build.cu): unblocked, or blocked by panels, then both triangular solves.
#pragma once

namespace als::cuda_engine {

// Entry (i, j), i >= j, of the lower triangle packed by columns is a[packed_column(j, s) + i].
__device__ __forceinline__ int packed_column(int j, int s) { return j * s - j * (j - 1) / 2 - j; }  // + i: entry (i, j)

// Column j of the packed system factored by the block (scaled by its pivot's root) and subtracted from
// columns j + 1 .. k_end - 1 (a column per warp): the step both factorisations below share. Returns 0,
// or j + 1 when the pivot is not positive (every thread read the same value after the last barrier).
__device__ __forceinline__ int factor_column_in_shared(float* a, int s, int j, int k_end) {
    const int t = threadIdx.x, warp = t / 32, lane = t % 32, warps = blockDim.x / 32;
    float* col = a + packed_column(j, s);
    const float pivot = col[j];
    if (!(pivot > 0.f)) return j + 1;
    const float d = sqrtf(pivot), inv = 1.f / d;
    for (int i = j + 1 + t; i < s; i += blockDim.x) col[i] *= inv;
    __syncthreads();
    if (t == 0) col[j] = d;
    for (int k = j + 1 + warp; k < k_end; k += warps) {
        const float lkj = col[k];
        float* target = a + packed_column(k, s);
        for (int i = k + lane; i < s; i += 32) target[i] -= col[i] * lkj;
    }
    __syncthreads();
    return 0;
}

// L y = b, then L^T x = y, by one warp on the factored packed system; x is left in b.
__device__ __forceinline__ void solve_triangles_in_shared(const float* a, float* b, int s, int lane) {
    for (int j = 0; j < s; ++j) {  // L y = b
        const float* col = a + packed_column(j, s);
        const float yj = b[j] / col[j];
        __syncwarp();
        for (int i = j + 1 + lane; i < s; i += 32) b[i] -= col[i] * yj;
        if (lane == 0) b[j] = yj;
        __syncwarp();
    }
    for (int j = s - 1; j >= 0; --j) {  // L^T x = y
        const float* col = a + packed_column(j, s);
        float part = 0.f;
        for (int i = j + 1 + lane; i < s; i += 32) part += col[i] * b[i];
#pragma unroll
        for (int o = 16; o > 0; o /= 2) part += __shfl_xor_sync(0xffffffffu, part, o);
        const float xj = (b[j] - part) / col[j];
        __syncwarp();
        if (lane == 0) b[j] = xj;
        __syncwarp();
    }
}

// The system built in shared memory (the lower triangle packed by columns: column j's entries i >= j
// consecutive from packed_column(j, s), so that a width of 256 fits beside nothing else) and its
// right-hand side after it, solved in place by the block: right-looking Cholesky one column at a time
// (the trailing update a column per warp), then both triangular solves by warp 0. Returns 0, or j + 1
// when the pivot of column j is not positive (as LAPACK's info); the solution is left in b.
__device__ int solve_in_shared(float* a, float* b, int s) {
    __syncthreads();
    for (int j = 0; j < s; ++j)
        if (const int failed = factor_column_in_shared(a, s, j, s)) return failed;
    if (threadIdx.x < 32) solve_triangles_in_shared(a, b, s, int(threadIdx.x));
    __syncthreads();
    return 0;
}

// Columns of a panel of solve_in_shared_blocked: the panel's own columns are factored one at a time
// (three shared-memory accesses per multiply-add), the trailing matrix updated once per panel from
// 4 x 4 register tiles (two per multiply-add); 16 balances the two parts at widths 128-256.
constexpr int kFusedPanel = 16;

// solve_in_shared with the factorisation blocked by panels of kFusedPanel columns: per panel, its
// columns right-looking within the panel, then the trailing matrix minus the panel's rank-kFusedPanel
// product, each thread a 4 x 4 tile of the trailing lower triangle at a time. Same result contract.
__device__ int solve_in_shared_blocked(float* a, float* b, int s) {
    const int t = threadIdx.x;
    __syncthreads();
    for (int j0 = 0; j0 < s; j0 += kFusedPanel) {
        const int j1 = min(s, j0 + kFusedPanel);
        for (int j = j0; j < j1; ++j)
            if (const int failed = factor_column_in_shared(a, s, j, j1)) return failed;
        // Trailing matrix rows and columns [j1, s): tiles (ti, tj), ti >= tj, of 4 x 4 entries.
        const int m = s - j1, tiles = (m + 3) / 4, pairs = tiles * (tiles + 1) / 2;
        for (int pair = t; pair < pairs; pair += blockDim.x) {
            int ti = int((sqrtf(8.f * pair + 1.f) - 1.f) * 0.5f);
            while ((ti + 1) * (ti + 2) / 2 <= pair) ++ti;
            while (ti * (ti + 1) / 2 > pair) --ti;
            const int tj = pair - ti * (ti + 1) / 2;
            const int i0 = j1 + 4 * ti, k0 = j1 + 4 * tj;
            float acc[4][4] = {};
            for (int j = j0; j < j1; ++j) {
                const float* col = a + packed_column(j, s);
                float x[4], y[4];
#pragma unroll
                for (int r = 0; r < 4; ++r) x[r] = i0 + r < s ? col[i0 + r] : 0.f, y[r] = k0 + r < s ? col[k0 + r] : 0.f;
#pragma unroll
                for (int r = 0; r < 4; ++r)
#pragma unroll
                    for (int c = 0; c < 4; ++c) acc[r][c] += x[r] * y[c];
            }
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int k = k0 + c;
                if (k >= s) continue;
                float* target = a + packed_column(k, s);
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    const int i = i0 + r;
                    if (i < s && i >= k) target[i] -= acc[r][c];
                }
            }
        }
        __syncthreads();
    }
    if (t < 32) solve_triangles_in_shared(a, b, s, t);
    __syncthreads();
    return 0;
}

}  // namespace als::cuda_engine
