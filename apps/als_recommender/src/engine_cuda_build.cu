// The CUDA engine's build kernels: each row's system sum_j w_j d_j d_j^T (+ Gram matrix, ridge) and its
// right-hand side gathered and accumulated into the solver's layout (FP32 thread tiles, or tensor cores
// in three TF32 products), the fused build + solve, and the split Gram matrix.
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>

#include "engine_cuda_kernels.hpp"
#include "engine_cuda_shared_solve.cuh"

namespace als::cuda_engine {

// One block per segment. kFirst: the segment that starts its row writes the whole system (Gram
// matrix or zero, ridge, its sum) with plain stores; later segments add theirs with atomics (they run
// in a second launch, after every first segment).
// Row `local`'s entry (i, j), i >= j, of its system: the first slice of a row writes it (Gram
// matrix and ridge added), later slices add theirs atomically. The two build kernels end in this.
template <bool kFirst>
__device__ __forceinline__ void store_system_entry(const BuildArgs& p, std::int64_t local, int i, int j, int s, float v, float ridge) {
    float* dst = p.a + p.layout.offset(local, i, j, s, s);
    if (kFirst) {
        if (p.gram) v += p.gram[std::int64_t(j) * s + i];
        if (i == j) v += ridge;
        *dst = v;
    } else {
        atomicAdd(dst, v);
    }
}

template <bool kFirst>
__device__ __forceinline__ void store_rhs_entry(const BuildArgs& p, std::int64_t local, int t, int s, float rhs) {
    float* dst = p.b + p.layout.offset(local, t, 0, s, 1);
    if (kFirst) *dst = rhs;
    else atomicAdd(dst, rhs);
}

template <bool kFirst>
__global__ void build_systems_kernel(BuildArgs p) {
    extern __shared__ float4 shared_storage[];  // float4: the tiles are read as aligned float4
    float* shared = reinterpret_cast<float*>(shared_storage);
    const int s = p.s, padded = p.tiles_per_side * kTile;
    float* rows = shared;                              // kStagedRows x padded
    float* weight = rows + kStagedRows * padded;       // kStagedRows
    float* target = weight + kStagedRows;              // kStagedRows
    const Segment seg = p.segments[blockIdx.x];
    const std::int64_t local = seg.row - p.first_row;

    // This thread's tile (ti, tj), ti >= tj, of the lower triangle, by its linear index.
    const int t = threadIdx.x;
    const int n_tiles = p.tiles_per_side * (p.tiles_per_side + 1) / 2;
    int ti = 0, tj = 0;
    const bool has_tile = t < n_tiles;
    if (has_tile) {
        ti = int((sqrtf(8.f * t + 1.f) - 1.f) * 0.5f);
        while ((ti + 1) * (ti + 2) / 2 <= t) ++ti;
        while (ti * (ti + 1) / 2 > t) --ti;
        tj = t - ti * (ti + 1) / 2;
    }
    float acc[kTile][kTile] = {};
    float rhs = 0.f;

    for (std::int64_t start = seg.begin; start < seg.end; start += kStagedRows) {
        const int n = int(min(std::int64_t(kStagedRows), seg.end - start));
        for (int e = t; e < kStagedRows * padded; e += blockDim.x) {
            const int r = e / padded, c = e % padded;
            float v = 0.f;
            if (r < n && c < s) {
                const std::int64_t j = p.indices[start + r];
                v = (p.biases && c == s - 1) ? 1.f : p.other[j * s + c];
            }
            rows[e] = v;
        }
        if (t < kStagedRows) {
            float w = 0.f, g = 0.f;
            if (t < n) {
                const float value = p.values[start + t];
                if (p.implicit) {
                    w = value - 1.f, g = value;
                } else {
                    w = 1.f, g = p.biases ? value - p.other[std::int64_t(p.indices[start + t]) * s + s - 1] : value;
                }
            }
            weight[t] = w, target[t] = g;
        }
        __syncthreads();
        if (has_tile)
            for (int r = 0; r < n; ++r) {
                const float4 x = *reinterpret_cast<const float4*>(&rows[r * padded + ti * kTile]);
                const float4 y = *reinterpret_cast<const float4*>(&rows[r * padded + tj * kTile]);
                const float w = weight[r];
                const float xs[kTile] = {w * x.x, w * x.y, w * x.z, w * x.w};
                const float ys[kTile] = {y.x, y.y, y.z, y.w};
#pragma unroll
                for (int a = 0; a < kTile; ++a)
#pragma unroll
                    for (int c = 0; c < kTile; ++c) acc[a][c] += xs[a] * ys[c];
            }
        if (t < s)
            for (int r = 0; r < n; ++r) rhs += target[r] * rows[r * padded + t];
        __syncthreads();
    }

    const std::int64_t row_length = p.indptr[seg.row + 1] - p.indptr[seg.row];
    const float ridge = p.implicit ? p.lambda : p.lambda * float(max(row_length, std::int64_t(1)));
    if (has_tile)
#pragma unroll
        for (int a = 0; a < kTile; ++a)
#pragma unroll
            for (int c = 0; c < kTile; ++c) {
                const int i = ti * kTile + a, j = tj * kTile + c;
                if (i >= s || j >= s || i < j) continue;
                store_system_entry<kFirst>(p, local, i, j, s, acc[a][c], ridge);
            }
    if (t < s) store_rhs_entry<kFirst>(p, local, t, s, rhs);
}

// ---- the tensor-core build (BuildKernel::tf32x3) ----------------------------------------------------
//
// Row r's system is (Xw)^T X over its staged entries, X the gathered rows d_j and Xw the same rows
// times w_j: a product of a k x E and an E x k matrix per step of E staged entries. Each warp owns a
// few 16 x 16 tiles of the lower triangle and accumulates them with 16 x 16 x 8 TF32 products; each
// operand fragment is split into hi = tf32(x) and lo = tf32(x - hi), and hi*hi + hi*lo + lo*hi is
// added (the lo*lo term is below FP32 rounding), so the sums keep FP32-level error.
namespace wmma = nvcuda::wmma;
constexpr int kMmaTile = 16, kMmaDepth = 8;
// Entries staged per step (a multiple of kMmaDepth); rows of the staging area are padded by 4
// floats so that the column-major loads of the weighted rows spread over the banks.
constexpr int kTensorStagedRows = 32;
constexpr int kTensorRowPad = 4;
constexpr int kTensorMaxWarps = 16;

// The launch of the tensor build for width s: tiles per side, tiles per warp (one of the kernel's
// instantiations: 2, 3 or 5), warps, dynamic shared memory.
struct TensorShape {
    int tiles = 0, lower = 0, tiles_per_warp = 0, warps = 0;
    std::size_t shared_bytes = 0;
};
TensorShape tensor_shape(int s) {
    TensorShape t;
    t.tiles = (s + kMmaTile - 1) / kMmaTile;
    t.lower = t.tiles * (t.tiles + 1) / 2;
    const int warps = std::min(kTensorMaxWarps, (t.lower + 1) / 2);
    const int per_warp = (t.lower + warps - 1) / warps;
    t.tiles_per_warp = per_warp <= 2 ? 2 : per_warp <= 3 ? 3 : per_warp <= 5 ? 5 : 9;
    t.warps = (t.lower + t.tiles_per_warp - 1) / t.tiles_per_warp;
    const int ld = t.tiles * kMmaTile + kTensorRowPad;
    t.shared_bytes = (std::size_t(2) * kTensorStagedRows * ld + kTensorStagedRows) * sizeof(float);
    return t;
}

template <class Fragment>
__device__ void split_tf32(Fragment& hi, Fragment& lo) {
#pragma unroll
    for (int e = 0; e < hi.num_elements; ++e) {
        const float x = hi.x[e];
        const float h = wmma::__float_to_tf32(x);
        hi.x[e] = h;
        lo.x[e] = wmma::__float_to_tf32(x - h);
    }
}

template <class Fragment>
__device__ void round_tf32(Fragment& f) {
#pragma unroll
    for (int e = 0; e < f.num_elements; ++e) f.x[e] = wmma::__float_to_tf32(f.x[e]);
}

// One block per segment, kTilesPerWarp lower tiles per warp (tiles in row-major order of the lower
// triangle, warp w from tile w * kTilesPerWarp). kFirst as in build_systems_kernel.
// kSplit: the three products of the split operands (tf32x3), else one product of the TF32-rounded
// operands (tf32).
template <bool kFirst, int kTilesPerWarp, bool kSplit>
__global__ void __launch_bounds__(kTensorMaxWarps * 32) build_systems_tf32x3_kernel(BuildArgs p) {
    extern __shared__ __align__(128) float tensor_shared[];
    const int s = p.s, tiles = p.tiles_per_side, padded = tiles * kMmaTile, ld = padded + kTensorRowPad;
    float* rows = tensor_shared;                         // kTensorStagedRows x ld: d_j
    float* weighted = rows + kTensorStagedRows * ld;     // kTensorStagedRows x ld: w_j d_j
    float* target = weighted + kTensorStagedRows * ld;   // kTensorStagedRows
    const Segment seg = p.segments[blockIdx.x];
    const std::int64_t local = seg.row - p.first_row;
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int lower = tiles * (tiles + 1) / 2;
    const int first_tile = warp * kTilesPerWarp;
    const int my_tiles = max(0, min(kTilesPerWarp, lower - first_tile));
    int tile_i[kTilesPerWarp], tile_j[kTilesPerWarp];
    {
        int i = 0, q = first_tile;
        while (q > i) q -= i + 1, ++i;  // row i of the lower triangle holds tiles (i, 0..i)
#pragma unroll
        for (int x = 0; x < kTilesPerWarp; ++x) {
            tile_i[x] = i, tile_j[x] = q;
            if (++q > i) q = 0, ++i;
        }
    }
    wmma::fragment<wmma::accumulator, kMmaTile, kMmaTile, kMmaDepth, float> acc[kTilesPerWarp];
#pragma unroll
    for (int x = 0; x < kTilesPerWarp; ++x) wmma::fill_fragment(acc[x], 0.f);
    float rhs = 0.f;
    const bool vector_gather = s % 4 == 0 && !p.biases;

    for (std::int64_t start = seg.begin; start < seg.end; start += kTensorStagedRows) {
        const int n = int(min(std::int64_t(kTensorStagedRows), seg.end - start));
        if (vector_gather) {
            const int quads = padded / 4;
            for (int e = t; e < kTensorStagedRows * quads; e += blockDim.x) {
                const int r = e / quads, c = (e - r * quads) * 4;
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                float w = 0.f;
                if (r < n && c < s) {
                    const std::int64_t j = p.indices[start + r];
                    v = *reinterpret_cast<const float4*>(p.other + j * s + c);
                    w = p.implicit ? p.values[start + r] - 1.f : 1.f;
                }
                *reinterpret_cast<float4*>(rows + r * ld + c) = v;
                *reinterpret_cast<float4*>(weighted + r * ld + c) = make_float4(w * v.x, w * v.y, w * v.z, w * v.w);
            }
        } else {
            for (int e = t; e < kTensorStagedRows * padded; e += blockDim.x) {
                const int r = e / padded, c = e - r * padded;
                float v = 0.f, w = 0.f;
                if (r < n && c < s) {
                    const std::int64_t j = p.indices[start + r];
                    v = (p.biases && c == s - 1) ? 1.f : p.other[j * s + c];
                    w = p.implicit ? p.values[start + r] - 1.f : 1.f;
                }
                rows[r * ld + c] = v;
                weighted[r * ld + c] = w * v;
            }
        }
        if (t < kTensorStagedRows) {
            float g = 0.f;
            if (t < n) {
                const float value = p.values[start + t];
                g = p.implicit || !p.biases ? value : value - p.other[std::int64_t(p.indices[start + t]) * s + s - 1];
            }
            target[t] = g;
        }
        __syncthreads();
        const int steps = (n + kMmaDepth - 1) / kMmaDepth;  // staged rows past n are zero
        for (int d = 0; d < steps; ++d) {
            const float* a_base = weighted + d * kMmaDepth * ld;
            const float* b_base = rows + d * kMmaDepth * ld;
#pragma unroll
            for (int x = 0; x < kTilesPerWarp; ++x) {
                if (x < my_tiles) {
                    wmma::fragment<wmma::matrix_a, kMmaTile, kMmaTile, kMmaDepth, wmma::precision::tf32, wmma::col_major> a_hi, a_lo;
                    wmma::fragment<wmma::matrix_b, kMmaTile, kMmaTile, kMmaDepth, wmma::precision::tf32, wmma::row_major> b_hi, b_lo;
                    wmma::load_matrix_sync(a_hi, a_base + tile_i[x] * kMmaTile, ld);
                    wmma::load_matrix_sync(b_hi, b_base + tile_j[x] * kMmaTile, ld);
                    if (kSplit) {
                        split_tf32(a_hi, a_lo);
                        split_tf32(b_hi, b_lo);
                        wmma::mma_sync(acc[x], a_lo, b_hi, acc[x]);
                        wmma::mma_sync(acc[x], a_hi, b_lo, acc[x]);
                    } else {
                        round_tf32(a_hi);
                        round_tf32(b_hi);
                    }
                    wmma::mma_sync(acc[x], a_hi, b_hi, acc[x]);
                }
            }
        }
        if (t < s)
            for (int r = 0; r < n; ++r) rhs += target[r] * rows[r * ld + t];
        __syncthreads();
    }

    // The staging area is free (the loop ended on a barrier, or never ran): each warp stores its
    // tiles there one at a time, column-major, and writes the lower part out.
    float* scratch = tensor_shared + warp * kMmaTile * kMmaTile;
    const std::int64_t row_length = p.indptr[seg.row + 1] - p.indptr[seg.row];
    const float ridge = p.implicit ? p.lambda : p.lambda * float(max(row_length, std::int64_t(1)));
#pragma unroll
    for (int x = 0; x < kTilesPerWarp; ++x) {
        if (x < my_tiles) {
            wmma::store_matrix_sync(scratch, acc[x], kMmaTile, wmma::mem_col_major);
            __syncwarp();
            for (int e = lane; e < kMmaTile * kMmaTile; e += 32) {
                const int i = tile_i[x] * kMmaTile + e % kMmaTile, j = tile_j[x] * kMmaTile + e / kMmaTile;
                if (i >= s || j >= s || i < j) continue;
                store_system_entry<kFirst>(p, local, i, j, s, scratch[e], ridge);
            }
            __syncwarp();
        }
    }
    if (t < s) store_rhs_entry<kFirst>(p, local, t, s, rhs);
}

// ---- the blocked tensor-core build (BuildKernel::tf32x3_blocked) -------------------------------------
//
// Row r's system is sum_j w_j d_j d_j^T = Y^T S Y with y_j = sqrt|w_j| d_j and S = diag(sign w_j): each
// staged entry is scaled and split into hi = tf32(y), lo = tf32(y - hi) once, in shared memory (the
// tf32x3 kernel splits every fragment again for every tile that loads it). Warp w owns 32 x 32 blocks
// (I, J), I >= J, of the lower triangle and, per 8 entries, loads 2 A fragments (16 x 8, rows of Y^T
// times S) and 4 B fragments (8 x 8) of each part and runs 2 x 4 m16n8k8 products of hi*hi + hi*lo +
// lo*hi: each fragment feeds 4 or 2 products. The rows of the next staged entries are gathered by
// cp.async into the other half of a double buffer while these are multiplied, and the entries after
// those (index, weight, target) are read meanwhile, so that no stage waits on a dependent load.
constexpr int kBlockedSide = 32;        // a warp's block of the triangle
constexpr int kBlockedStagedRows = 32;  // entries per stage (a multiple of 8)
// Rows of the split operands are padded to ld = padded + 8 floats: a fragment's 32 loads (rows t and
// t + 4 of the 8 entries, 8 consecutive columns g) then fall on 32 distinct banks.
constexpr int kBlockedRowPad = 8;
// Blocks per warp: one up to 16 blocks of the triangle (width 160), two up to 36 (width 256). The
// launch bounds follow: up to 10 warps (width 128) two thread blocks per SM (<= 96 registers a
// thread beside 32 accumulators: ptxas needs 111 without the bound, i.e. one block of 10 warps per
// SM), up to 16 warps one (128 registers), 18 warps of two blocks one (96: 64 accumulators).
constexpr int kBlockedTwoPerSmWarps = 10, kBlockedOneBlockWarps = 16, kBlockedTwoBlockWarps = 18;
constexpr int blocked_max_threads(int blocks_per_warp, int blocks_per_sm) {
    return 32 * (blocks_per_warp == 2 ? kBlockedTwoBlockWarps : blocks_per_sm == 2 ? kBlockedTwoPerSmWarps : kBlockedOneBlockWarps);
}

struct BlockedShape {
    int side_blocks = 0, lower = 0, blocks_per_warp = 0, warps = 0, padded = 0, ld = 0;
    std::size_t shared_bytes = 0;
};
BlockedShape blocked_shape(int s) {
    BlockedShape b;
    b.side_blocks = (s + kBlockedSide - 1) / kBlockedSide;
    b.lower = b.side_blocks * (b.side_blocks + 1) / 2;
    b.blocks_per_warp = b.lower <= kBlockedOneBlockWarps ? 1 : 2;
    b.warps = (b.lower + b.blocks_per_warp - 1) / b.blocks_per_warp;
    b.padded = b.side_blocks * kBlockedSide;
    b.ld = b.padded + kBlockedRowPad;
    // raw rows (two stages) + hi + lo, then three stages of entries: index, sqrt|w|, sign, target.
    b.shared_bytes = (std::size_t(2) * kBlockedStagedRows * b.padded + std::size_t(2) * kBlockedStagedRows * b.ld) * sizeof(float) +
                     std::size_t(3) * kBlockedStagedRows * (sizeof(std::int32_t) + 3 * sizeof(float));
    return b;
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src) {
    const unsigned dst = unsigned(__cvta_generic_to_shared(shared_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global_src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// The products of `steps` groups of 8 staged entries into the warp's blocks. kSigned: some weight of
// this stage is negative (the A fragments take the entries' signs).
template <bool kSigned, int kBlocksPerWarp>
__device__ __forceinline__ void blocked_products(float (&acc)[kBlocksPerWarp][2][4][4], const float* hi, const float* lo,
                                                 const float* sign, int ld, int steps, int my_blocks, const int (&block_i)[kBlocksPerWarp],
                                                 const int (&block_j)[kBlocksPerWarp], int g, int q) {
    for (int d = 0; d < steps; ++d) {
        const int r0 = d * 8 + q;  // this lane's entries r0 and r0 + 4 of the group
        const float* h0 = hi + r0 * ld;
        const float* h1 = h0 + 4 * ld;
        const float* l0 = lo + r0 * ld;
        const float* l1 = l0 + 4 * ld;
        const float s0 = kSigned ? sign[r0] : 1.f, s1 = kSigned ? sign[r0 + 4] : 1.f;
#pragma unroll
        for (int x = 0; x < kBlocksPerWarp; ++x) {
            if (x >= my_blocks) continue;
            const int i0 = block_i[x] * kBlockedSide + g, j0 = block_j[x] * kBlockedSide + g;
            const bool diagonal = block_i[x] == block_j[x];
            std::uint32_t ah[2][4], al[2][4];
#pragma unroll
            for (int m = 0; m < 2; ++m) {
                const int i = i0 + 16 * m;
                ah[m][0] = __float_as_uint(s0 * h0[i]), ah[m][1] = __float_as_uint(s0 * h0[i + 8]);
                ah[m][2] = __float_as_uint(s1 * h1[i]), ah[m][3] = __float_as_uint(s1 * h1[i + 8]);
                al[m][0] = __float_as_uint(s0 * l0[i]), al[m][1] = __float_as_uint(s0 * l0[i + 8]);
                al[m][2] = __float_as_uint(s1 * l1[i]), al[m][3] = __float_as_uint(s1 * l1[i + 8]);
            }
#pragma unroll
            for (int n = 0; n < 4; ++n) {
                const int j = j0 + 8 * n;
                const std::uint32_t bh0 = __float_as_uint(h0[j]), bh1 = __float_as_uint(h1[j]);
                const std::uint32_t bl0 = __float_as_uint(l0[j]), bl1 = __float_as_uint(l1[j]);
#pragma unroll
                for (int m = 0; m < 2; ++m) {
                    if (diagonal && m == 0 && n >= 2) continue;  // rows 0..15 x columns 16..31 of a diagonal block: upper
                    mma_tf32(acc[x][m][n], al[m], bh0, bh1);
                    mma_tf32(acc[x][m][n], ah[m], bl0, bl1);
                    mma_tf32(acc[x][m][n], ah[m], bh0, bh1);
                }
            }
        }
    }
}


// One block per segment, kFirst as in build_systems_kernel. kFused (kFirst, one block per row: the
// block takes every entry of its row): the system is assembled in the staging area and solved there
// (solve_in_shared), the solution written to the row's factors.
template <bool kFirst, int kBlocksPerWarp, int kBlocksPerSm, bool kFused = false, bool kBlockedCholesky = false>
__global__ void __launch_bounds__(blocked_max_threads(kBlocksPerWarp, kBlocksPerSm), kBlocksPerSm)
    build_systems_tf32x3_blocked_kernel(BuildArgs p, int padded, int ld) {
    extern __shared__ __align__(128) float blocked_shared[];
    constexpr int R = kBlockedStagedRows;
    const int s = p.s;
    float* raw = blocked_shared;                  // 2 x R x padded: gathered rows d_j (two stages)
    float* hi = raw + 2 * R * padded;             // R x ld: tf32(y_j)
    float* lo = hi + R * ld;                      // R x ld: tf32(y_j - hi)
    std::int32_t* slot_index = reinterpret_cast<std::int32_t*>(lo + R * ld);  // 3 x R per stage: entries' columns
    float* slot_root = reinterpret_cast<float*>(slot_index + 3 * R);          // sqrt|w_j| (0 past the segment)
    float* slot_sign = slot_root + 3 * R;                                     // sign of w_j
    float* slot_target = slot_sign + 3 * R;                                   // the right-hand side's weight
    Segment seg = p.segments[blockIdx.x];
    if (kFused) seg.end = p.indptr[seg.row + 1];
    const std::int64_t local = seg.row - p.first_row;
    const int t = threadIdx.x, warp = t / 32, lane = t % 32, warps = blockDim.x / 32;
    const int g = lane / 4, q = lane % 4;  // the mma fragments' row group and thread-in-group
    const int lower = (padded / kBlockedSide) * (padded / kBlockedSide + 1) / 2;
    const int first_block = warp * kBlocksPerWarp;
    const int my_blocks = max(0, min(kBlocksPerWarp, lower - first_block));
    int block_i[kBlocksPerWarp], block_j[kBlocksPerWarp];
    {
        int i = 0, r = first_block;
        while (r > i) r -= i + 1, ++i;
#pragma unroll
        for (int x = 0; x < kBlocksPerWarp; ++x) {
            block_i[x] = i, block_j[x] = r;
            if (++r > i) r = 0, ++i;
        }
    }
    float acc[kBlocksPerWarp][2][4][4];
#pragma unroll
    for (int x = 0; x < kBlocksPerWarp; ++x)
#pragma unroll
        for (int m = 0; m < 2; ++m)
#pragma unroll
            for (int n = 0; n < 4; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[x][m][n][e] = 0.f;
    float rhs = 0.f;
    const bool vector_gather = s % 4 == 0 && !p.biases;
    const std::int64_t entries = seg.end - seg.begin;
    const int stages = int((entries + R - 1) / R);

    // Entry `t` of stage c: what the slots hold for it (defaults past the segment: no contribution).
    struct Entry {
        std::int32_t index = 0;
        float root = 0.f, sign = 1.f, target = 0.f;
    };
    auto read_entry = [&](int c) {
        Entry e;
        const std::int64_t at = seg.begin + std::int64_t(c) * R + t;
        if (t < R && c < stages && at < seg.end) {
            e.index = p.indices[at];
            const float value = p.values[at];
            const float w = p.implicit ? value - 1.f : 1.f;
            e.root = sqrtf(fabsf(w)), e.sign = w < 0.f ? -1.f : 1.f;
            e.target = p.implicit || !p.biases ? value : value - p.other[std::int64_t(e.index) * s + s - 1];
        }
        return e;
    };
    auto write_entry = [&](int c, const Entry& e) {
        if (t < R) {
            const int o = (c % 3) * R + t;
            slot_index[o] = e.index, slot_root[o] = e.root, slot_sign[o] = e.sign, slot_target[o] = e.target;
        }
    };
    auto stage_count = [&](int c) { return int(min(std::int64_t(R), entries - std::int64_t(c) * R)); };
    // The rows of stage c into raw half c % 2 (cp.async when the rows are float4-aligned).
    auto gather = [&](int c) {
        float* dst = raw + (c % 2) * R * padded;
        const std::int32_t* index = slot_index + (c % 3) * R;
        const int n = stage_count(c);
        if (vector_gather) {
            const int quads = s / 4;
            for (int r = warp; r < n; r += warps)
                for (int c4 = lane; c4 < quads; c4 += 32) cp_async_16(dst + r * padded + 4 * c4, p.other + std::int64_t(index[r]) * s + 4 * c4);
            cp_async_commit();
        } else {
            for (int r = warp; r < n; r += warps)
                for (int col = lane; col < s; col += 32)
                    dst[r * padded + col] = (p.biases && col == s - 1) ? 1.f : p.other[std::int64_t(index[r]) * s + col];
        }
    };

    if (stages > 0) {
        write_entry(0, read_entry(0));
        write_entry(1, read_entry(1));
        __syncthreads();
        gather(0);
    }
    for (int c = 0; c < stages; ++c) {
        cp_async_wait_all();
        __syncthreads();
        if (c + 1 < stages) gather(c + 1);
        const Entry ahead = read_entry(c + 2);  // loads in flight over this stage's work
        const int n = stage_count(c), sl = (c % 3) * R;
        const float* x = raw + (c % 2) * R * padded;
        for (int r = warp; r < R; r += warps) {
            const float root = slot_root[sl + r];
            for (int col = lane; col < padded; col += 32) {
                const float y = (r < n && col < s) ? root * x[r * padded + col] : 0.f;
                const float h = wmma::__float_to_tf32(y);
                hi[r * ld + col] = h;
                lo[r * ld + col] = wmma::__float_to_tf32(y - h);
            }
        }
        if (t < s)
            for (int r = 0; r < n; ++r) rhs += slot_target[sl + r] * x[r * padded + t];
        const bool negative = __syncthreads_or(t < n && slot_sign[sl + t] < 0.f);
        const int steps = (n + 7) / 8;
        if (negative) blocked_products<true>(acc, hi, lo, slot_sign + sl, ld, steps, my_blocks, block_i, block_j, g, q);
        else blocked_products<false>(acc, hi, lo, slot_sign + sl, ld, steps, my_blocks, block_i, block_j, g, q);
        if (c + 2 < stages) write_entry(c + 2, ahead);
    }

    const std::int64_t row_length = p.indptr[seg.row + 1] - p.indptr[seg.row];
    const float ridge = p.implicit ? p.lambda : p.lambda * float(max(row_length, std::int64_t(1)));
    // f(i, j, sum) for each of the warp's accumulators in the lower triangle: accumulator e of part
    // (m, n) of block x is row g + 8 (e / 2), column 2 q + e % 2 of its 16 x 8 product.
    auto for_each_lower_entry = [&](auto&& f) {
#pragma unroll
        for (int x = 0; x < kBlocksPerWarp; ++x) {
            if (x >= my_blocks) continue;
#pragma unroll
            for (int m = 0; m < 2; ++m)
#pragma unroll
                for (int n = 0; n < 4; ++n)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int i = block_i[x] * kBlockedSide + 16 * m + g + 8 * (e / 2), j = block_j[x] * kBlockedSide + 8 * n + 2 * q + e % 2;
                        if (i < s && j <= i) f(i, j, acc[x][m][n][e]);
                    }
        }
    };
    if constexpr (kFused) {
        __syncthreads();  // every warp's products are done: the staging area holds the system now
        float* a = blocked_shared;
        float* b = a + s * (s + 1) / 2;
        for_each_lower_entry([&](int i, int j, float& sum) {
            a[packed_column(j, s) + i] = sum + (p.gram ? p.gram[std::int64_t(j) * s + i] : 0.f) + (i == j ? ridge : 0.f);
        });
        if (t < s) b[t] = rhs;
        const int failed = kBlockedCholesky ? solve_in_shared_blocked(a, b, s) : solve_in_shared(a, b, s);
        if (t < s) p.solution[local * s + t] = failed == 0 ? b[t] : 0.f;
        if (t == 0) p.info[local] = failed;
    } else {
        // The Gram matrix's entries are read first, all of them, so that their loads are in flight together.
        const Layout::Entries system = p.layout.entries(local, s, s);
        if (kFirst && p.gram) for_each_lower_entry([&](int i, int j, float& sum) { sum += p.gram[std::int64_t(j) * s + i]; });
        for_each_lower_entry([&](int i, int j, float& sum) {
            float* dst = p.a + system.base + (std::int64_t(j) * s + i) * system.stride;
            if (kFirst) *dst = sum + (i == j ? ridge : 0.f);
            else atomicAdd(dst, sum);
        });
        if (t < s) store_rhs_entry<kFirst>(p, local, t, s, rhs);
    }
}


// Launches the fused build + solve of `blocks` rows (their first segments; args.solution, args.info set).
// blocked_cholesky: solve_in_shared_blocked, else solve_in_shared.
void launch_fused(unsigned blocks, BuildArgs args, bool blocked_cholesky, cudaStream_t stream) {
    const int s = args.s;
    const BlockedShape shape = blocked_shape(s);
    const std::size_t bytes = std::max(shape.shared_bytes, (std::size_t(s) * (s + 1) / 2 + s) * sizeof(float));
    void (*kernel)(BuildArgs, int, int) = nullptr;
#define ALS_FUSED_KERNEL(W, B)                                                                                             \
    kernel = blocked_cholesky ? build_systems_tf32x3_blocked_kernel<true, W, B, true, true> : build_systems_tf32x3_blocked_kernel<true, W, B, true, false>
    if (shape.blocks_per_warp == 2) ALS_FUSED_KERNEL(2, 1);
    else if (shape.warps <= kBlockedTwoPerSmWarps) ALS_FUSED_KERNEL(1, 2);
    else ALS_FUSED_KERNEL(1, 1);
#undef ALS_FUSED_KERNEL
    if (bytes > (std::size_t(48) << 10))
        check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)), "cudaFuncSetAttribute(fused build)");
    kernel<<<blocks, unsigned(shape.warps * 32), bytes, stream>>>(args, shape.padded, shape.ld);
    check(cudaGetLastError(), "build_systems_tf32x3_blocked_kernel<fused>");
}

// Launches the build of `blocks` segments (first segments of their rows, or later ones) with the
// chosen kernel; sets args.tiles_per_side for it.
void launch_build(BuildKernel kind, bool first, unsigned blocks, BuildArgs args, cudaStream_t stream) {
    const int s = args.s;
    if (kind == BuildKernel::fp32) {
        const int tiles = (s + kTile - 1) / kTile;
        const int threads = std::min(1024, std::max((tiles * (tiles + 1) / 2 + 31) / 32 * 32, (s + 31) / 32 * 32));
        const std::size_t shared = (std::size_t(kStagedRows) * tiles * kTile + 2 * kStagedRows) * sizeof(float);
        args.tiles_per_side = tiles;
        if (first) build_systems_kernel<true><<<blocks, threads, shared, stream>>>(args);
        else build_systems_kernel<false><<<blocks, threads, shared, stream>>>(args);
        check(cudaGetLastError(), first ? "build_systems_kernel<first>" : "build_systems_kernel<later>");
        return;
    }
    if (kind == BuildKernel::tf32x3_blocked) {
        const BlockedShape shape = blocked_shape(s);
        if (shape.warps * 32 < s) throw Error("tf32x3-blocked build: " + std::to_string(shape.warps * 32) + " threads for width " + std::to_string(s) + " (a bug)");
        void (*kernel)(BuildArgs, int, int) = nullptr;
        if (shape.blocks_per_warp == 2) kernel = first ? build_systems_tf32x3_blocked_kernel<true, 2, 1> : build_systems_tf32x3_blocked_kernel<false, 2, 1>;
        else if (shape.warps <= kBlockedTwoPerSmWarps) kernel = first ? build_systems_tf32x3_blocked_kernel<true, 1, 2> : build_systems_tf32x3_blocked_kernel<false, 1, 2>;
        else kernel = first ? build_systems_tf32x3_blocked_kernel<true, 1, 1> : build_systems_tf32x3_blocked_kernel<false, 1, 1>;
        if (shape.shared_bytes > (std::size_t(48) << 10))
            check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shape.shared_bytes)),
                  "cudaFuncSetAttribute(build_systems_tf32x3_blocked_kernel)");
        kernel<<<blocks, unsigned(shape.warps * 32), shape.shared_bytes, stream>>>(args, shape.padded, shape.ld);
        check(cudaGetLastError(), first ? "build_systems_tf32x3_blocked_kernel<first>" : "build_systems_tf32x3_blocked_kernel<later>");
        return;
    }
    const TensorShape shape = tensor_shape(s);
    if (shape.warps * 32 < s) throw Error("tf32x3 build: " + std::to_string(shape.warps * 32) + " threads for width " + std::to_string(s) + " (a bug)");
    args.tiles_per_side = shape.tiles;
    const unsigned threads = unsigned(shape.warps * 32);
    void (*kernel)(BuildArgs) = nullptr;
    const bool split = kind == BuildKernel::tf32x3;
#define ALS_TENSOR_KERNEL(T)                                                                                   \
    kernel = split ? (first ? build_systems_tf32x3_kernel<true, T, true> : build_systems_tf32x3_kernel<false, T, true>) \
                   : (first ? build_systems_tf32x3_kernel<true, T, false> : build_systems_tf32x3_kernel<false, T, false>)
    switch (shape.tiles_per_warp) {
        case 2: ALS_TENSOR_KERNEL(2); break;
        case 3: ALS_TENSOR_KERNEL(3); break;
        case 5: ALS_TENSOR_KERNEL(5); break;
        default: ALS_TENSOR_KERNEL(9); break;
    }
#undef ALS_TENSOR_KERNEL
    // Widths beyond ~180 stage more than the default 48 KiB of shared memory per block.
    if (shape.shared_bytes > (std::size_t(48) << 10))
        check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shape.shared_bytes)),
              "cudaFuncSetAttribute(build_systems_tf32x3_kernel)");
    kernel<<<blocks, threads, shape.shared_bytes, stream>>>(args);
    check(cudaGetLastError(), first ? "build_systems_tf32x3_kernel<first>" : "build_systems_tf32x3_kernel<later>");
}

// ---- the split Gram matrix (GramKernel::split) -------------------------------------------------------
//
// G = D^T D for D = `rows` x s row-major: cuBLAS SSYRK spreads only the s x s output over the GPU, so a
// tall D (138,493 x 64) keeps a few blocks busy. Here block (p, q) sums tile pair q (64 x 64 tiles
// (ti, tj), ti >= tj, of the lower triangle) over part p of the rows in FP32 into its own partial; a
// second kernel adds the partials of each entry in part order (deterministic, no atomics).
// The tile and the rows staged per step (16 x 16 threads, 4 x 4 entries each); kGramMinPartRows and
// kGramMostBlocks (about 8 blocks per SM of a 132-SM H200) set how finely the rows are cut.
constexpr int kGramTile = 64, kGramDepth = 32, kGramThreads = 256;
constexpr std::int64_t kGramMinPartRows = 256;
constexpr int kGramMostBlocks = 1024;

struct GramPlan {
    int tiles = 0, pairs = 0, parts = 0;
    std::int64_t part_rows = 0;
};
GramPlan gram_plan(int s, std::int64_t rows) {
    GramPlan g;
    g.tiles = (s + kGramTile - 1) / kGramTile;
    g.pairs = g.tiles * (g.tiles + 1) / 2;
    const std::int64_t most_parts = std::max(1, kGramMostBlocks / g.pairs);
    const std::int64_t parts = std::clamp<std::int64_t>((rows + kGramMinPartRows - 1) / kGramMinPartRows, 1, most_parts);
    g.part_rows = (std::max<std::int64_t>(rows, 1) + parts - 1) / parts;
    g.parts = int((std::max<std::int64_t>(rows, 1) + g.part_rows - 1) / g.part_rows);
    return g;
}
// Floats of the partials of the largest plan for width s (any row count).
std::size_t gram_partials_floats(int s) {
    const int tiles = (s + kGramTile - 1) / kGramTile, pairs = tiles * (tiles + 1) / 2;
    return std::size_t(std::max(1, kGramMostBlocks / pairs)) * std::size_t(pairs) * kGramTile * kGramTile;
}

__device__ __forceinline__ void gram_pair_tiles(int pair, int& ti, int& tj) {
    ti = 0, tj = pair;
    while (tj > ti) tj -= ti + 1, ++ti;
}

// partials[(p * pairs + q) * 64 * 64 + row * 64 + col]: part p's sum of D[r, ti*64 + row] D[r, tj*64 + col].
__global__ void __launch_bounds__(kGramThreads) gram_partials_kernel(const float* d, int s, std::int64_t rows, std::int64_t part_rows,
                                                                     float* partials) {
    __shared__ __align__(16) float xa[kGramDepth][kGramTile];
    __shared__ __align__(16) float xb[kGramDepth][kGramTile];
    const int pair = blockIdx.y;
    int ti, tj;
    gram_pair_tiles(pair, ti, tj);
    const int ca = ti * kGramTile, cb = tj * kGramTile;
    const std::int64_t begin = std::int64_t(blockIdx.x) * part_rows, end = min(rows, begin + part_rows);
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    float acc[4][4] = {};
    for (std::int64_t r0 = begin; r0 < end; r0 += kGramDepth) {
        for (int e = threadIdx.x; e < kGramDepth * kGramTile; e += kGramThreads) {
            const int r = e / kGramTile, c = e % kGramTile;
            const std::int64_t row = r0 + r;
            float va = 0.f, vb = 0.f;
            if (row < end) {
                if (ca + c < s) va = d[row * s + ca + c];
                if (cb + c < s) vb = d[row * s + cb + c];
            }
            xa[r][c] = va, xb[r][c] = vb;
        }
        __syncthreads();
#pragma unroll 8
        for (int r = 0; r < kGramDepth; ++r) {
            const float4 a = *reinterpret_cast<const float4*>(&xa[r][ty * 4]);
            const float4 b = *reinterpret_cast<const float4*>(&xb[r][tx * 4]);
            const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
        }
        __syncthreads();
    }
    float* out = partials + (std::int64_t(blockIdx.x) * gridDim.y + pair) * (kGramTile * kGramTile);
#pragma unroll
    for (int i = 0; i < 4; ++i)
        *reinterpret_cast<float4*>(out + (ty * 4 + i) * kGramTile + tx * 4) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}

// gram[j * s + i] (i >= j, column-major lower) = the partials of its entry added in part order.
__global__ void gram_reduce_kernel(const float* partials, int s, int pairs, int parts, float* gram) {
    const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= std::int64_t(pairs) * kGramTile * kGramTile) return;
    const int pair = int(e / (kGramTile * kGramTile)), off = int(e % (kGramTile * kGramTile));
    int ti, tj;
    gram_pair_tiles(pair, ti, tj);
    const int i = ti * kGramTile + off / kGramTile, j = tj * kGramTile + off % kGramTile;
    if (i >= s || j >= s || i < j) return;
    float sum = 0.f;
    const std::int64_t stride = std::int64_t(pairs) * kGramTile * kGramTile;
    for (int p = 0; p < parts; ++p) sum += partials[p * stride + e];
    gram[std::int64_t(j) * s + i] = sum;
}

void launch_split_gram(const float* d, int s, std::int64_t rows, float* partials, float* gram, cudaStream_t stream) {
    const GramPlan g = gram_plan(s, rows);
    gram_partials_kernel<<<dim3(unsigned(g.parts), unsigned(g.pairs)), kGramThreads, 0, stream>>>(d, s, rows, g.part_rows, partials);
    check(cudaGetLastError(), "gram_partials_kernel");
    const std::int64_t entries = std::int64_t(g.pairs) * kGramTile * kGramTile;
    gram_reduce_kernel<<<unsigned((entries + 255) / 256), 256, 0, stream>>>(partials, s, g.pairs, g.parts, gram);
    check(cudaGetLastError(), "gram_reduce_kernel");
}

}  // namespace als::cuda_engine
