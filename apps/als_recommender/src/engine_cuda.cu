// The CUDA engine: the Gram matrix (split tiles, or cuBLAS SSYRK), each row's own entries gathered and
// accumulated by a kernel straight into the solver's layout (FP32 thread tiles, or tensor cores in three
// TF32 products), then one batched FP32 posv (or potrf + two TRSMs, vbatched) per slice of rows.
#include <cublas_v2.h>
#include "batchsolve_io/shared_library.hpp"
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <iomanip>
#include <sstream>

#include "batchsolve/batchsolve.hpp"
#include "engine.hpp"
#include "memory_plan.hpp"

namespace als {

namespace {

// Entries of one row accumulated by one thread block (kSegmentEntries, memory_plan.hpp): longer rows
// (popular items) are cut into segments of that many entries whose blocks add into the same system
// with atomics, so that one item with a million users does not keep a single block busy for the
// whole half-iteration.
// Rows of the other side staged in shared memory per step of the accumulation.
constexpr int kStagedRows = 32;
// Each thread owns a kTile x kTile block of the lower triangle of the system.
constexpr int kTile = 4;
// One thread per tile in a block of at most 1024 threads: 44 * 45 / 2 = 990 tiles, i.e. width 176.
constexpr int kMaxWidth = 176;
// The tensor-core build: 16 warps of at most 9 of the 16 x 16 tiles, 136 tiles, i.e. width 256.
constexpr int kMaxTensorWidth = 256;

void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw Error(std::string("CUDA: ") + call + ": " + cudaGetErrorString(status));
}
void check(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS) throw Error(std::string("cuBLAS: ") + call + " failed with status " + std::to_string(int(status)));
}

#define ALS_STR2(x) #x
#define ALS_STR(x) ALS_STR2(x)
// The four cuBLAS functions of the engine, from the library loaded on first use (the set-up thread,
// beside the read): linked, cuBLAS and cuBLASLt were mapped before main of every als process
// (--backend cpu too), about 50 ms of each start.
struct CublasApi {
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasDestroy_v2) destroy = nullptr;
    decltype(&cublasSetStream_v2) set_stream = nullptr;
    decltype(&cublasSsyrk_v2) ssyrk = nullptr;
};
const CublasApi& cublas_api() {
    static const CublasApi api = [] {
        const batchsolve::io::SharedLibrary<Error> library("cuBLAS", "libcublas.so." ALS_STR(CUBLAS_VER_MAJOR));
        CublasApi a;
        library.get(a.create, "cublasCreate_v2"), library.get(a.destroy, "cublasDestroy_v2");
        library.get(a.set_stream, "cublasSetStream_v2"), library.get(a.ssyrk, "cublasSsyrk_v2");
        return a;
    }();
    return api;
}

struct Segment {
    std::int64_t begin, end;  // entries [begin, end) of the CSR
    std::int32_t row;
};
static_assert(sizeof(Segment) == kSegmentBytes, "memory_plan.hpp counts segments of kSegmentBytes");

// The batched solver's index formula (batchsolve/batch.hpp) for packed column-major (chunk = 0) and
// chunked interleaved storage (plain interleaved: chunk = count).
struct Layout {
    std::int64_t count;
    std::int64_t chunk;  // 0: packed column-major
    __host__ __device__ std::int64_t offset(std::int64_t k, int i, int j, int rows, int cols) const {
        if (chunk == 0) return k * rows * cols + std::int64_t(j) * rows + i;
        const std::int64_t c = k / chunk, q = k % chunk;
        const std::int64_t width = (c + 1) * chunk <= count ? chunk : count - c * chunk;
        return c * chunk * rows * cols + (std::int64_t(j) * rows + i) * width + q;
    }
    // offset(k, i, j, rows, cols) == base + (j * rows + i) * stride: the divisions once per system.
    struct Entries {
        std::int64_t base, stride;
    };
    __host__ __device__ Entries entries(std::int64_t k, int rows, int cols) const {
        if (chunk == 0) return {k * rows * cols, 1};
        const std::int64_t c = k / chunk, q = k % chunk;
        const std::int64_t width = (c + 1) * chunk <= count ? chunk : count - c * chunk;
        return {c * chunk * rows * cols + q, width};
    }
};

struct BuildArgs {
    const Segment* segments;
    const std::int64_t* indptr;
    const std::int32_t* indices;
    const float* values;
    const float* other;   // other side's factors, rows x s
    const float* gram;    // s x s column-major lower (implicit), else nullptr
    float* a;             // systems of the slice
    float* b;             // right-hand sides of the slice
    Layout layout;
    std::int64_t first_row;
    int s, tiles_per_side;
    float lambda;
    bool implicit, biases;
    // SolveKernel::fused: each row's solution (the slice's factor rows) and info; the system is never stored.
    float* solution = nullptr;
    int* info = nullptr;
};

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

// The system built in shared memory (the lower triangle packed by columns: column j's entries i >= j
// consecutive from packed_column(j, s), so that a width of 256 fits beside nothing else) and its
// right-hand side after it, solved in place by the block: right-looking Cholesky one column at a time
// (the trailing update a column per warp), then both triangular solves by warp 0. Returns 0, or j + 1
// when the pivot of column j is not positive (as LAPACK's info); the solution is left in b.
__device__ __forceinline__ int packed_column(int j, int s) { return j * s - j * (j - 1) / 2 - j; }  // + i: entry (i, j)
__device__ int solve_in_shared(float* a, float* b, int s) {
    const int t = threadIdx.x, warp = t / 32, lane = t % 32, warps = blockDim.x / 32;
    __syncthreads();
    for (int j = 0; j < s; ++j) {
        float* col = a + packed_column(j, s);
        const float pivot = col[j];
        if (!(pivot > 0.f)) return j + 1;  // every thread read the same value after the barrier
        const float d = sqrtf(pivot), inv = 1.f / d;
        for (int i = j + 1 + t; i < s; i += blockDim.x) col[i] *= inv;
        __syncthreads();
        if (t == 0) col[j] = d;
        for (int k = j + 1 + warp; k < s; k += warps) {
            const float lkj = col[k];
            float* target = a + packed_column(k, s);
            for (int i = k + lane; i < s; i += 32) target[i] -= col[i] * lkj;
        }
        __syncthreads();
    }
    if (warp == 0) {
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
    const int t = threadIdx.x, warp = t / 32, lane = t % 32, warps = blockDim.x / 32;
    __syncthreads();
    for (int j0 = 0; j0 < s; j0 += kFusedPanel) {
        const int j1 = min(s, j0 + kFusedPanel);
        for (int j = j0; j < j1; ++j) {
            float* col = a + packed_column(j, s);
            const float pivot = col[j];
            if (!(pivot > 0.f)) return j + 1;  // every thread read the same value after the barrier
            const float d = sqrtf(pivot), inv = 1.f / d;
            for (int i = j + 1 + t; i < s; i += blockDim.x) col[i] *= inv;
            __syncthreads();
            if (t == 0) col[j] = d;
            for (int k = j + 1 + warp; k < j1; k += warps) {
                const float lkj = col[k];
                float* target = a + packed_column(k, s);
                for (int i = k + lane; i < s; i += 32) target[i] -= col[i] * lkj;
            }
            __syncthreads();
        }
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
    if (warp == 0) {
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
    __syncthreads();
    return 0;
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
    if constexpr (kFused) {
        __syncthreads();  // every warp's products are done: the staging area holds the system now
        float* a = blocked_shared;
        float* b = a + s * (s + 1) / 2;
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
                        if (i >= s || j > i) continue;
                        a[packed_column(j, s) + i] = acc[x][m][n][e] + (p.gram ? p.gram[std::int64_t(j) * s + i] : 0.f) + (i == j ? ridge : 0.f);
                    }
        }
        if (t < s) b[t] = rhs;
        const int failed = kBlockedCholesky ? solve_in_shared_blocked(a, b, s) : solve_in_shared(a, b, s);
        if (t < s) p.solution[local * s + t] = failed == 0 ? b[t] : 0.f;
        if (t == 0) p.info[local] = failed;
    } else {
        // Accumulator e of part (m, n): row g + 8 (e / 2), column 2 q + e % 2 of the 16 x 8 product. The Gram
        // matrix's entries are read first, all of them, so that their loads are in flight together.
        const Layout::Entries system = p.layout.entries(local, s, s);
#pragma unroll
        for (int x = 0; x < kBlocksPerWarp; ++x) {
            if (x >= my_blocks) continue;
            if (kFirst && p.gram) {
#pragma unroll
                for (int m = 0; m < 2; ++m)
#pragma unroll
                    for (int n = 0; n < 4; ++n)
#pragma unroll
                        for (int e = 0; e < 4; ++e) {
                            const int i = block_i[x] * kBlockedSide + 16 * m + g + 8 * (e / 2), j = block_j[x] * kBlockedSide + 8 * n + 2 * q + e % 2;
                            if (i < s && j <= i) acc[x][m][n][e] += p.gram[std::int64_t(j) * s + i];
                        }
            }
#pragma unroll
            for (int m = 0; m < 2; ++m)
#pragma unroll
                for (int n = 0; n < 4; ++n)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int i = block_i[x] * kBlockedSide + 16 * m + g + 8 * (e / 2), j = block_j[x] * kBlockedSide + 8 * n + 2 * q + e % 2;
                        if (i >= s || j > i) continue;
                        float* dst = p.a + system.base + (std::int64_t(j) * s + i) * system.stride;
                        if (kFirst) *dst = acc[x][m][n][e] + (i == j ? ridge : 0.f);
                        else atomicAdd(dst, acc[x][m][n][e]);
                    }
        }
        if (t < s) store_rhs_entry<kFirst>(p, local, t, s, rhs);
    }
}

// The fused build and solve (SolveKernel::fused): every width of the blocked build (the packed system
// and its right-hand side fit the staging area), on sides whose longest row has at most this many
// entries (the block takes its whole row, and the rows are launched longest first: the ML-20M shape's
// most popular item, 125,838 entries, is ~3,900 stages of 32, about 12 ms of one block at k = 256 by
// the mma rate, within the ~15 ms the side's other blocks take around it).
constexpr std::int64_t kFusedLongestRow = 131072;

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

// Solutions back into the factor rows; a system that failed (info != 0) gives a zero row.
__global__ void scatter_solutions_kernel(const float* b, const int* info, Layout layout, int s, std::int64_t count,
                                         float* out) {
    const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= count * s) return;
    const std::int64_t k = e / s;
    const int i = int(e % s);
    out[e] = info[k] == 0 ? b[layout.offset(k, i, 0, s, 1)] : 0.f;
}

__global__ void count_failed_kernel(const int* info, std::int64_t count, unsigned long long* failed) {
    const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < count && info[k] != 0) atomicAdd(failed, 1ull);
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


// The solver's views of `count` systems and right-hand sides of width s in the engine's layout.
std::pair<batchsolve::BatchView<float>, batchsolve::BatchView<float>> system_views(const EngineSettings& es, float* a, float* b,
                                                                                     std::int64_t count) {
    const int s = es.width, n = int(count);
    using V = batchsolve::BatchView<float>;
    switch (es.layout) {
        case SystemLayout::interleaved: return {V::interleaved(a, s, s, n), V::interleaved(b, s, 1, n)};
        case SystemLayout::chunked: return {V::chunked(a, s, s, n, es.chunk_size), V::chunked(b, s, 1, n, es.chunk_size)};
        default: return {V::column_major(a, s, s, n), V::column_major(b, s, 1, n)};
    }
}

// The slices' batch sizes of a side of `rows` rows: the full slice and the remainder (0: none).
std::pair<std::int64_t, std::int64_t> slice_counts(std::int64_t rows, const EngineSettings& es) {
    const std::int64_t per = rows_per_slice(rows, es.width, es.slice_bytes);
    return {std::min(per, rows), rows > per ? rows % per : 0};
}

struct CublasHandle {
    cublasHandle_t handle = nullptr;
    CublasHandle() = default;
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    CublasHandle(CublasHandle&& o) noexcept : handle(o.handle) { o.handle = nullptr; }
    CublasHandle& operator=(CublasHandle&& o) noexcept {
        std::swap(handle, o.handle);
        return *this;
    }
    ~CublasHandle() {
        if (handle) cublas_api().destroy(handle);
    }
};

}  // namespace

// What start_cuda_warmup's thread leaves for the engine.
class CudaWarmup {
public:
    struct Result {
        std::unique_ptr<batchsolve::Context> ctx;
        CublasHandle cublas;
        std::string error;  // set when the set-up failed: the engine that takes it throws this
        double seconds = 0;
        std::string summary;
    };
    std::future<Result> pending;
    int device = 0;
    double seconds = 0;
    std::string summary;
    // Waits for the thread; the result once (nullopt-like empty ctx afterwards).
    Result take() {
        if (!pending.valid()) return {};
        Result r = pending.get();
        seconds = r.seconds, summary = r.summary;
        return r;
    }
};

namespace {

// Launches each kernel the engine will run once on one empty segment and runs cuBLAS's SSYRK at the
// engine's sizes on scratch memory, so that lazy module loading and cuBLAS's first-call set-up happen
// here and not in the first iteration.
void touch_engine_kernels(const EngineSettings& es, std::int64_t users, std::int64_t items, batchsolve::Context& ctx,
                          cublasHandle_t cublas) {
    const int s = es.width;
    const auto stream = static_cast<cudaStream_t>(ctx.stream());
    batchsolve::Buffer<Segment> segment(ctx, std::vector<Segment>{{0, 0, 0}});
    batchsolve::Buffer<std::int64_t> indptr(ctx, std::vector<std::int64_t>{0, 0});
    batchsolve::Buffer<std::int32_t> indices(ctx, std::vector<std::int32_t>{0});
    batchsolve::Buffer<float> values(ctx, std::vector<float>{1.f});
    batchsolve::Buffer<float> a(ctx, std::size_t(s) * s), b(ctx, std::size_t(s));
    batchsolve::Buffer<int> info(ctx, 1);
    batchsolve::Buffer<unsigned long long> failed(ctx, 1);
    const std::int64_t most = std::max<std::int64_t>(1, std::max(users, items));
    batchsolve::Buffer<float> other(ctx, std::size_t(most) * s), gram(ctx, std::size_t(s) * s);
    other.fill_bytes(0), gram.fill_bytes(0);
    if (es.implicit && es.gram == GramKernel::syrk) {
        const float one = 1.f, zero = 0.f;
        for (std::int64_t rows : {items, users})
            if (rows > 0)
                check(cublas_api().ssyrk(cublas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, s, int(rows), &one, other.data(), s, &zero, gram.data(), s),
                      "cublasSsyrk");
    } else if (es.implicit) {
        batchsolve::Buffer<float> partials(ctx, gram_partials_floats(s));
        launch_split_gram(other.data(), s, 1, partials.data(), gram.data(), stream);
    }
    BuildArgs args{segment.data(), indptr.data(), indices.data(), values.data(), other.data(), es.implicit ? gram.data() : nullptr,
                   a.data(), b.data(), Layout{1, 0}, 0, s, 0, es.lambda, es.implicit, es.biases};
    for (bool first : {true, false}) launch_build(es.build, first, 1, args, stream);
    info.fill_bytes(0);
    scatter_solutions_kernel<<<1, 256, 0, stream>>>(b.data(), info.data(), Layout{1, 0}, s, 1, a.data());
    count_failed_kernel<<<1, 256, 0, stream>>>(info.data(), 1, failed.data());
    check(cudaGetLastError(), "scatter_solutions_kernel");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

// The solver's kernels for the slices of both sides; returns how many, and how many came from the
// disk cache, into `summary`.
void prepare_solver_kernels(const EngineSettings& es, std::int64_t users, std::int64_t items, batchsolve::Context& ctx,
                            std::string* summary) {
    int kernels = 0, cached = 0;
    double compile_s = 0;
    std::vector<std::int64_t> done;
    for (std::int64_t rows : {users, items}) {
        if (es.solve_kernel == SolveKernel::vbatched) break;  // no generated posv kernels to prepare
        const auto [full, rest] = slice_counts(rows, es);
        for (std::int64_t count : {full, rest}) {
            if (count <= 0 || std::find(done.begin(), done.end(), count) != done.end()) continue;
            done.push_back(count);
            const auto views = system_views(es, nullptr, nullptr, count);
            const batchsolve::KernelReport r = batchsolve::prepare_kernel<float>("posv", batchsolve::Uplo::lower, views.first, 1, ctx);
            // The workspace the call takes (layout conversions), reserved now rather than in the first iteration.
            ctx.workspace(batchsolve::workspace_bytes<float>(batchsolve::Routine::posv, batchsolve::Uplo::lower,
                                                             batchsolve::BatchView<const float>(views.first), 1, ctx));
            if (!r.supported) continue;
            ++kernels, cached += r.from_disk_cache, compile_s += r.compile_seconds;
        }
    }
    if (summary) {
        std::ostringstream o;
        o << kernels << " solver kernel" << (kernels == 1 ? "" : "s") << " (" << cached << " from the disk cache";
        if (kernels > cached) o << ", " << kernels - cached << " compiled in " << std::fixed << std::setprecision(2) << compile_s << " s";
        o << ")";
        *summary = o.str();
    }
}

CudaWarmup::Result run_warmup(EngineSettings es, std::int64_t users, std::int64_t items) {
    CudaWarmup::Result r;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        check(cudaSetDevice(es.device), "cudaSetDevice");
        r.ctx = std::make_unique<batchsolve::Context>(batchsolve::Backend::cuda, es.device);
        check(cublas_api().create(&r.cublas.handle), "cublasCreate");
        check(cublas_api().set_stream(r.cublas.handle, static_cast<cudaStream_t>(r.ctx->stream())), "cublasSetStream");
        touch_engine_kernels(es, users, items, *r.ctx, r.cublas.handle);
        std::string kernels;
        // The fused solves need no posv kernels (a side whose rows are too long for them prepares its
        // own when the engine is made).
        const bool fused = es.solve_kernel == SolveKernel::fused || es.solve_kernel == SolveKernel::fused_blocked;
        prepare_solver_kernels(es, fused ? 0 : users, fused ? 0 : items, *r.ctx, &kernels);
        r.summary = "context, cuBLAS, " + std::string(to_string(es.build)) + " build kernels, " + kernels;
    } catch (const std::exception& e) {
        r.error = std::string("CUDA set-up: ") + e.what();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

// One side of the problem as this engine holds it: the CSR of its own rows [first, first + rows)
// (all rows when alone; indices still name the other side's global rows) and the factors of every row.
struct Side {
    std::int64_t rows = 0;   // own rows
    std::int64_t first = 0;  // global index of the first own row
    std::int64_t total = 0;  // rows of the side (factor rows)
    batchsolve::Buffer<std::int64_t> indptr;
    batchsolve::Buffer<std::int32_t> indices;
    batchsolve::Buffer<float> values;
    batchsolve::Buffer<Segment> first_segments, extra_segments;
    batchsolve::Buffer<Segment> longest_first;  // SolveKernel::fused: every row once, the longest first
    std::vector<std::int64_t> extra_start;  // host: extra segments of rows [0, r) precede index extra_start[r]
    std::int64_t longest = 0;               // entries of the longest own row
    batchsolve::Buffer<float> factors;
};

class CudaEngine final : public Engine {
public:
    // `warm`: what start_cuda_warmup prepared (its context and cuBLAS handle are taken over), or empty.
    CudaEngine(const Csr& by_user, const Csr& by_item, const EngineSettings& s, const Partition* partition, CudaWarmup::Result warm)
        : s_(s),
          owned_ctx_(warm.ctx ? std::move(warm.ctx) : std::make_unique<batchsolve::Context>(batchsolve::Backend::cuda, s.device)),
          ctx_(*owned_ctx_) {
        check(cudaSetDevice(s.device), "cudaSetDevice");
        if (partition) {
            partition_ = *partition;
        } else {
            partition_.users = {{0, by_user.rows}};
            partition_.items = {{0, by_item.rows}};
        }
        const std::uint64_t needed = cuda_engine_bytes(by_user, by_item, s, partition);
        std::size_t free_bytes = 0, total_bytes = 0;
        check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
        if (needed > free_bytes)
            throw Error("the data needs " + gib(needed) + " of GPU memory, " + gib(free_bytes) + " of " + gib(total_bytes) +
                        " is free on " + ctx_.device_name() + " (lower --slice-mb or use --backend cpu)");
        stream_ = static_cast<cudaStream_t>(ctx_.stream());
        if (warm.cublas.handle) std::swap(cublas_, warm.cublas.handle);
        else check(cublas_api().create(&cublas_), "cublasCreate");
        check(cublas_api().set_stream(cublas_, stream_), "cublasSetStream");
        check(cudaEventCreate(&e0_), "cudaEventCreate");
        check(cudaEventCreate(&e1_), "cudaEventCreate");
        check(cudaEventCreate(&e2_), "cudaEventCreate");
        upload(users_, by_user, partition_.users[std::size_t(partition_.index)]);
        upload(items_, by_item, partition_.items[std::size_t(partition_.index)]);
        // A slice of own rows at most (cuda_engine_bytes counts the same).
        // (Sides that run fused store no systems: none when both do.)
        const std::int64_t slice = std::max(fused(users_) ? 0 : rows_per_slice(users_.rows, s.width, s.slice_bytes),
                                            fused(items_) ? 0 : rows_per_slice(items_.rows, s.width, s.slice_bytes));
        const std::int64_t ss = std::int64_t(s.width) * s.width;
        systems_ = batchsolve::Buffer<float>(ctx_, std::size_t(std::max<std::int64_t>(slice, 1) * ss));
        rhs_ = batchsolve::Buffer<float>(ctx_, std::size_t(std::max<std::int64_t>(slice, 1) * s.width));
        // The fused solve takes a whole side at once (nothing stored): its info needs every row.
        const std::int64_t info_rows = s.solve_kernel == SolveKernel::fused || s.solve_kernel == SolveKernel::fused_blocked ? std::max({slice, users_.rows, items_.rows}) : slice;
        info_ = batchsolve::Buffer<int>(ctx_, std::size_t(info_rows));
        gram_ = batchsolve::Buffer<float>(ctx_, std::size_t(ss));
        gram_.fill_bytes(0);  // the upper triangle is never written; an all-reduce sums it too
        if (s.implicit && s.gram == GramKernel::split) gram_partials_ = batchsolve::Buffer<float>(ctx_, gram_partials_floats(s.width));
        failed_ = batchsolve::Buffer<unsigned long long>(ctx_, 1);
        if (s.solve_kernel == SolveKernel::vbatched) prepare_vbatched(slice);
        sample_memory();
        // Compile (or load from the disk cache) the solver's kernels now, not in the first timed iteration
        // (after a warm-up of the same sizes: found in this process's cache).
        prepare_solver_kernels(s, fused(users_) ? 0 : users_.rows, fused(items_) ? 0 : items_.rows, ctx_, nullptr);
    }
    ~CudaEngine() override {
        if (cublas_) cublas_api().destroy(cublas_);
        for (cudaEvent_t e : {e0_, e1_, e2_})
            if (e) cudaEventDestroy(e);
    }

    void set_factors(const std::vector<float>& users, const std::vector<float>& items) override {
        check(cudaSetDevice(s_.device), "cudaSetDevice");
        users_.factors = batchsolve::Buffer<float>(ctx_, users);
        items_.factors = batchsolve::Buffer<float>(ctx_, items);
        sample_memory();
    }
    void get_factors(std::vector<float>& users, std::vector<float>& items) override {
        check(cudaSetDevice(s_.device), "cudaSetDevice");
        users = users_.factors.to_host();
        items = items_.factors.to_host();
    }
    HalfTiming solve_users() override { return solve_side(users_, items_, partition_.users); }
    HalfTiming solve_items() override { return solve_side(items_, users_, partition_.items); }
    std::string device() const override { return ctx_.device_name(); }
    std::uint64_t peak_device_bytes() const override { return peak_bytes_; }

private:
    static std::string gib(std::uint64_t bytes) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1ull << 30));
        return buf;
    }
    void sample_memory() {
        std::size_t free_bytes = 0, total_bytes = 0;
        if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
            peak_bytes_ = std::max<std::uint64_t>(peak_bytes_, total_bytes - free_bytes);
    }

    // The CSR of the own rows `own` of `whole` (every row alone: uploaded as it is).
    void upload(Side& side, const Csr& whole, RowRange own) {
        side.total = whole.rows, side.first = own.first;
        Csr block;
        const bool all = own.first == 0 && own.count == whole.rows;
        if (!all) {
            block.rows = own.count, block.cols = whole.cols;
            const std::int64_t b = whole.indptr[own.first], e = whole.indptr[own.first + own.count];
            block.indptr.assign(whole.indptr.begin() + own.first, whole.indptr.begin() + own.first + own.count + 1);
            for (auto& x : block.indptr) x -= b;
            block.indices.assign(whole.indices.begin() + b, whole.indices.begin() + e);
            block.values.assign(whole.values.begin() + b, whole.values.begin() + e);
        }
        const Csr& m = all ? whole : block;
        side.rows = m.rows;
        side.indptr = batchsolve::Buffer<std::int64_t>(ctx_, m.indptr);
        side.indices = batchsolve::Buffer<std::int32_t>(ctx_, m.indices.empty() ? std::vector<std::int32_t>{0} : m.indices);
        side.values = batchsolve::Buffer<float>(ctx_, m.values.empty() ? std::vector<float>{0.f} : m.values);
        std::vector<Segment> first(static_cast<std::size_t>(m.rows)), extra;
        side.extra_start.assign(std::size_t(m.rows + 1), 0);
        side.longest = 0;
        for (std::int64_t r = 0; r < m.rows; ++r) {
            const std::int64_t b = m.indptr[r], e = m.indptr[r + 1];
            side.longest = std::max(side.longest, e - b);
            first[std::size_t(r)] = {b, std::min(e, b + kSegmentEntries), std::int32_t(r)};
            for (std::int64_t x = b + kSegmentEntries; x < e; x += kSegmentEntries)
                extra.push_back({x, std::min(e, x + kSegmentEntries), std::int32_t(r)});
            side.extra_start[std::size_t(r + 1)] = std::int64_t(extra.size());
        }
        if (first.empty()) first.push_back({0, 0, 0});
        if (extra.empty()) extra.push_back({0, 0, 0});
        side.first_segments = batchsolve::Buffer<Segment>(ctx_, first);
        if (s_.solve_kernel == SolveKernel::fused || s_.solve_kernel == SolveKernel::fused_blocked) {
            // One block per row, launched longest first: the few rows of 10^5 entries start at once and
            // the short ones fill the GPU around them (the kernel reads each row's end from indptr).
            std::vector<Segment> order = first;
            std::stable_sort(order.begin(), order.end(), [&](const Segment& a, const Segment& b) {
                return m.row_length(a.row) > m.row_length(b.row);
            });
            side.longest_first = batchsolve::Buffer<Segment>(ctx_, order);
        }
        side.extra_segments = batchsolve::Buffer<Segment>(ctx_, extra);
    }

    // The vbatched solve's arrays over the largest slice (a smaller slice takes their first entries):
    // every order and leading dimension s, one right-hand side each, the systems' and right-hand
    // sides' pointers; and the TRSM's workspace reserved now, not in the first iteration.
    void prepare_vbatched(std::int64_t slice) {
        if (s_.layout != SystemLayout::column_major) throw Error("--solve-kernel vbatched takes --layout column_major");
        const int s = s_.width;
        std::vector<float*> a(static_cast<std::size_t>(slice)), b(static_cast<std::size_t>(slice));
        for (std::int64_t k = 0; k < slice; ++k)
            a[std::size_t(k)] = systems_.data() + k * s * s, b[std::size_t(k)] = rhs_.data() + k * s;
        vb_order_ = batchsolve::Buffer<int>(ctx_, std::vector<int>(static_cast<std::size_t>(slice), s));
        vb_one_ = batchsolve::Buffer<int>(ctx_, std::vector<int>(static_cast<std::size_t>(slice), 1));
        vb_a_ = batchsolve::Buffer<float*>(ctx_, a);
        vb_b_ = batchsolve::Buffer<float*>(ctx_, b);
        ctx_.workspace(batchsolve::trsm_vbatched_workspace_size<float>(batchsolve::Side::left, s, 1, int(slice), ctx_));
    }
    // L L^T = A (potrf_vbatched), then L y = b and L^T x = y (trsm_vbatched): `count` systems of the slice.
    void solve_vbatched(std::int64_t count) {
        namespace bs = batchsolve;
        const int s = s_.width, n = int(count);
        bs::potrf_vbatched_max_nocheck<float>(bs::Uplo::lower, vb_order_.data(), vb_a_.data(), vb_order_.data(), s, n, info_.data(), ctx_);
        const float* const* a = vb_a_.data();
        for (bs::Op op : {bs::Op::no_trans, bs::Op::trans})
            bs::trsm_vbatched_max_nocheck<float>(bs::Side::left, bs::Uplo::lower, op, bs::Diag::non_unit, vb_order_.data(), vb_one_.data(),
                                                 1.f, a, vb_order_.data(), vb_b_.data(), vb_order_.data(), s, 1, n, ctx_);
    }

    // SolveKernel::fused runs on this side: rows up to kFusedLongestRow entries.
    bool fused(const Side& rows) const {
        return (s_.solve_kernel == SolveKernel::fused || s_.solve_kernel == SolveKernel::fused_blocked) && rows.longest <= kFusedLongestRow;
    }

    Layout layout_for(std::int64_t count) const {
        switch (s_.layout) {
            case SystemLayout::column_major: return {count, 0};
            case SystemLayout::interleaved: return {count, count};
            case SystemLayout::chunked: return {count, s_.chunk_size};
        }
        return {count, 0};
    }
    std::pair<batchsolve::BatchView<float>, batchsolve::BatchView<float>> make_views(std::int64_t count) {
        return system_views(s_, systems_.data(), rhs_.data(), count);
    }

    HalfTiming solve_side(Side& rows, Side& other, const std::vector<RowRange>& own) {
        const int s = s_.width;
        HalfTiming timing;
        float build_ms = 0, solve_ms = 0, ms = 0;
        check(cudaSetDevice(s_.device), "cudaSetDevice");
        check(cudaMemsetAsync(failed_.data(), 0, sizeof(unsigned long long), stream_), "cudaMemsetAsync");
        check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
        if (s_.implicit && other.rows > 0 && s_.gram == GramKernel::split) {
            launch_split_gram(other.factors.data() + other.first * s, s, other.rows, gram_partials_.data(), gram_.data(), stream_);
        } else if (s_.implicit && other.rows > 0) {
            const float one = 1.f, zero = 0.f;
            // Factors are row-major rows x s, i.e. column-major s x rows: G = F F^T in that view
            // (over this engine's own rows of the other side; the exchange sums the partitions').
            check(cublas_api().ssyrk(cublas_, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, s, int(other.rows), &one,
                              other.factors.data() + other.first * s, s, &zero, gram_.data(), s),
                  "cublasSsyrk");
        } else if (s_.implicit) {
            check(cudaMemsetAsync(gram_.data(), 0, sizeof(float) * std::size_t(s) * s, stream_), "cudaMemsetAsync");
        }
        check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
        check(cudaEventSynchronize(e1_), "cudaEventSynchronize");
        check(cudaEventElapsedTime(&ms, e0_, e1_), "cudaEventElapsedTime");
        build_ms += ms;
        if (s_.implicit) timing.gram_s = ms * 1e-3;
        using WallClock = std::chrono::steady_clock;
        if (s_.implicit && partition_.exchange) {
            const auto t0 = WallClock::now();
            partition_.exchange->allreduce_sum(gram_.data(), std::size_t(s) * s, stream_);
            timing.exchange_s += std::chrono::duration<double>(WallClock::now() - t0).count();
        }

        if (fused(rows) && rows.rows > 0) {
            // Built and solved in one kernel over the whole side (no slices: nothing is stored); its time
            // is the build's, the solve's is the failure count.
            BuildArgs args{rows.longest_first.data(), rows.indptr.data(), rows.indices.data(), rows.values.data(), other.factors.data(),
                           s_.implicit ? gram_.data() : nullptr, nullptr, nullptr, Layout{rows.rows, 0}, 0, s, 0, s_.lambda,
                           s_.implicit, s_.biases};
            args.solution = rows.factors.data() + rows.first * s, args.info = info_.data();
            check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
            launch_fused(unsigned(rows.rows), args, s_.solve_kernel == SolveKernel::fused_blocked, stream_);
            check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
            count_failed_kernel<<<unsigned((rows.rows + 255) / 256), 256, 0, stream_>>>(info_.data(), rows.rows, failed_.data());
            check(cudaGetLastError(), "count_failed_kernel");
            check(cudaEventRecord(e2_, stream_), "cudaEventRecord");
            check(cudaEventSynchronize(e2_), "cudaEventSynchronize");
            check(cudaEventElapsedTime(&ms, e0_, e1_), "cudaEventElapsedTime");
            build_ms += ms;
            check(cudaEventElapsedTime(&ms, e1_, e2_), "cudaEventElapsedTime");
            solve_ms += ms;
        }
        const std::int64_t per = rows_per_slice(rows.rows, s, s_.slice_bytes);
        for (std::int64_t first = 0; !fused(rows) && first < rows.rows; first += per) {
            const std::int64_t count = std::min(per, rows.rows - first);
            const Layout layout = layout_for(count);
            BuildArgs args{rows.first_segments.data() + first, rows.indptr.data(), rows.indices.data(), rows.values.data(),
                           other.factors.data(), s_.implicit ? gram_.data() : nullptr, systems_.data(), rhs_.data(), layout,
                           first, s, 0, s_.lambda, s_.implicit, s_.biases};
            check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
            launch_build(s_.build, true, unsigned(count), args, stream_);
            const std::int64_t extra_begin = rows.extra_start[std::size_t(first)], extra_end = rows.extra_start[std::size_t(first + count)];
            if (extra_end > extra_begin) {
                args.segments = rows.extra_segments.data() + extra_begin;
                launch_build(s_.build, false, unsigned(extra_end - extra_begin), args, stream_);
            }
            check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
            auto views = make_views(count);
            if (s_.solve_kernel == SolveKernel::vbatched) solve_vbatched(count);
            else batchsolve::posv_batched(batchsolve::Uplo::lower, views.first, views.second, info_.data(), ctx_);
            const std::int64_t elements = count * s;
            scatter_solutions_kernel<<<unsigned((elements + 255) / 256), 256, 0, stream_>>>(
                rhs_.data(), info_.data(), layout, s, count, rows.factors.data() + (rows.first + first) * s);
            count_failed_kernel<<<unsigned((count + 255) / 256), 256, 0, stream_>>>(info_.data(), count, failed_.data());
            check(cudaGetLastError(), "scatter_solutions_kernel");
            check(cudaEventRecord(e2_, stream_), "cudaEventRecord");
            check(cudaEventSynchronize(e2_), "cudaEventSynchronize");
            check(cudaEventElapsedTime(&ms, e0_, e1_), "cudaEventElapsedTime");
            build_ms += ms;
            check(cudaEventElapsedTime(&ms, e1_, e2_), "cudaEventElapsedTime");
            solve_ms += ms;
        }
        if (partition_.exchange) {
            const auto t0 = WallClock::now();
            partition_.exchange->allgather_rows(rows.factors.data(), own, s, stream_);
            timing.exchange_s += std::chrono::duration<double>(WallClock::now() - t0).count();
        }
        sample_memory();
        unsigned long long failed = 0;
        check(cudaMemcpy(&failed, failed_.data(), sizeof failed, cudaMemcpyDeviceToHost), "cudaMemcpy");
        timing.build_s = build_ms * 1e-3, timing.solve_s = solve_ms * 1e-3, timing.failed = std::int64_t(failed);
        return timing;
    }

    EngineSettings s_;
    std::unique_ptr<batchsolve::Context> owned_ctx_;
    batchsolve::Context& ctx_;
    Partition partition_;
    cudaStream_t stream_ = nullptr;
    cublasHandle_t cublas_ = nullptr;
    cudaEvent_t e0_ = nullptr, e1_ = nullptr, e2_ = nullptr;
    Side users_, items_;
    batchsolve::Buffer<float> systems_, rhs_, gram_;
    batchsolve::Buffer<float> gram_partials_;  // GramKernel::split only
    batchsolve::Buffer<int> info_;
    batchsolve::Buffer<unsigned long long> failed_;
    batchsolve::Buffer<int> vb_order_, vb_one_;   // SolveKernel::vbatched only
    batchsolve::Buffer<float*> vb_a_, vb_b_;
    std::uint64_t peak_bytes_ = 0;
};

}  // namespace

std::uint64_t cuda_engine_bytes(const Csr& by_user, const Csr& by_item, const EngineSettings& s, const Partition* partition) {
    return engine_bytes(by_user, by_item, s, partition);  // memory_plan.cpp: the same count in every build
}

bool cuda_engine_available() { return batchsolve::Context::cuda_available(); }

std::shared_ptr<CudaWarmup> start_cuda_warmup(const EngineSettings& settings, std::int64_t users, std::int64_t items) {
    auto w = std::make_shared<CudaWarmup>();
    EngineSettings es = settings;
    es.warmup.reset();
    if (es.slice_bytes == 0) es.slice_bytes = std::uint64_t(4) << 30;  // train()'s default for the CUDA engine
    w->device = es.device;
    w->pending = std::async(std::launch::async, run_warmup, es, users, items);
    return w;
}
double cuda_warmup_seconds(const CudaWarmup& warmup) { return warmup.seconds; }
std::string cuda_warmup_summary(const CudaWarmup& warmup) { return warmup.summary; }

std::uint64_t cuda_free_bytes(int device) {
    int current = 0;
    check(cudaGetDevice(&current), "cudaGetDevice");
    check(cudaSetDevice(device), "cudaSetDevice");
    std::size_t free_bytes = 0, total_bytes = 0;
    const cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
    cudaSetDevice(current);
    check(e, "cudaMemGetInfo");
    return free_bytes;
}

void cuda_release_device(int device) {
    if (cudaSetDevice(device) != cudaSuccess || cudaDeviceReset() != cudaSuccess) cudaGetLastError();
}

int cuda_device_count() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

void engine_copy_to_host(void* host, const void* engine_memory, std::size_t bytes, bool device_memory, void* stream) {
    if (bytes == 0) return;
    if (!device_memory) {
        std::memcpy(host, engine_memory, bytes);
        return;
    }
    const auto st = static_cast<cudaStream_t>(stream);
    check(cudaMemcpyAsync(host, engine_memory, bytes, cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(st), "cudaStreamSynchronize");
}

void engine_copy_from_host(void* engine_memory, const void* host, std::size_t bytes, bool device_memory, void* stream) {
    if (bytes == 0) return;
    if (!device_memory) {
        std::memcpy(engine_memory, host, bytes);
        return;
    }
    const auto st = static_cast<cudaStream_t>(stream);
    check(cudaMemcpyAsync(engine_memory, host, bytes, cudaMemcpyHostToDevice, st), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(st), "cudaStreamSynchronize");
}

std::unique_ptr<Engine> make_cuda_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings,
                                         const Partition* partition) {
    const int most = settings.build == BuildKernel::fp32 ? kMaxWidth : kMaxTensorWidth;
    if (settings.width < 1 || settings.width > most)
        throw Error("the CUDA engine takes at most " + std::to_string(most) + " factors per row with the " + to_string(settings.build) +
                    " build (got " + std::to_string(settings.width) + "; the tf32x3 and tf32 builds go to " + std::to_string(kMaxTensorWidth) +
                    "); --backend cpu goes to 1024");
    if (settings.solver != Solver::exact)
        throw Error("--solver cg: the CUDA engine solves each system exactly (posv); conjugate gradient runs on --backend cpu");
    if (settings.layout != SystemLayout::column_major && settings.width > 128)
        throw Error("--layout interleaved/chunked needs factors <= 128 (the tuned kernels' limit); use column_major");
    if (by_user.rows > INT32_MAX || by_item.rows > INT32_MAX) throw Error("more than 2^31 - 1 rows");
    try {
        if (partition) check_partition(by_user, by_item, *partition);
        CudaWarmup::Result warm;
        if (settings.warmup && settings.warmup->device == settings.device) {
            warm = settings.warmup->take();
            if (!warm.error.empty()) throw Error(warm.error);
        }
        return std::make_unique<CudaEngine>(by_user, by_item, settings, partition, std::move(warm));
    } catch (const batchsolve::Error& e) {
        throw Error(std::string("CUDA engine: ") + e.what());
    }
}

}  // namespace als
