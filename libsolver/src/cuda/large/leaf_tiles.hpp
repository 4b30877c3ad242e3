// The task plan of the tiled leaf (MixedFactorConfig::tiled_leaf): the Cholesky factor of one diagonal
// leaf of order m (FP32, lower, ld n) and the inverse of that factor, in one launch of p^2 blocks, p =
// ceil(m / 32), each block one task on 32 x 32 tiles, the tasks in the order of an atomic ticket:
//   factor tasks, by tile column j, then tile row i = j .. p - 1 (p (p + 1) / 2 of them):
//     S = A(i, j) - sum_{k < j} L(i, k) L(j, k)^T, each term as soon as tiles (i, k) and (j, k) are
//     published; i == j: L(j, j) = chol(S) and X(j, j) = L(j, j)^-1 by one warp in shared memory;
//     i > j: L(i, j) = S X(j, j)^T once (j, j) is published;
//   inverse tasks, by distance d = i - j = 1 .. p - 1, then column j (p (p - 1) / 2 of them):
//     X(i, j) = -X(i, i) sum_{k = j}^{i - 1} L(i, k) X(k, j).
// A task waits only on tasks with earlier tickets (factor tiles of earlier columns or of its own
// column's diagonal; inverse tiles of smaller distance), so every wait ends whatever the residency.
// The chain from one tile column to the next is one 32 x 32 Cholesky, its inverse, one product and two
// flags; cuSOLVER's SPOTRF of a 512 leaf and the STRSM of its inverse are each several launches that
// run one after the other. Written once for the kernel (mixed_factor.cu) and the CPU emulation of the
// plan (tests/large/leaf_tiles_test.cpp). No CUDA header here.
#pragma once

#if defined(__CUDACC__)
#define BATCHSOLVE_TILES_FN __host__ __device__ __forceinline__
#else
#define BATCHSOLVE_TILES_FN inline
#endif

namespace batchsolve::cuda_backend::leaf_tiles {

inline constexpr int kTile = 32;

BATCHSOLVE_TILES_FN int tiles_of(int m) { return (m + kTile - 1) / kTile; }
BATCHSOLVE_TILES_FN int task_count(int p) { return p * p; }

// The flags of one launch: [0] the ticket, [1] finished blocks, [2] the first failing column of the
// leaf (1-based, 0: none), then a published flag per factor tile (i * p + j) and per inverse tile.
// Zero before the first launch; the last block to finish merges [2] into info and zeroes them all.
BATCHSOLVE_TILES_FN int flag_count(int p) { return 3 + 2 * p * p; }
BATCHSOLVE_TILES_FN int factor_flag(int p, int i, int j) { return 3 + i * p + j; }
BATCHSOLVE_TILES_FN int inverse_flag(int p, int i, int j) { return 3 + p * p + i * p + j; }

struct Task {
    bool inverse;  // false: a factor tile (i >= j); true: an inverse tile (i > j)
    int i, j;
};

// The task of ticket t < task_count(p).
BATCHSOLVE_TILES_FN Task task_of(int t, int p) {
    const int factor_tasks = p * (p + 1) / 2;
    if (t < factor_tasks) {
        int j = 0;
        while (t >= p - j) t -= p - j, ++j;
        return Task{false, j + t, j};
    }
    t -= factor_tasks;
    int d = 1;
    while (t >= p - d) t -= p - d, ++d;
    return Task{true, t + d, t};
}

// Rows of tile row i of a leaf of order m (the last one cut).
BATCHSOLVE_TILES_FN int rows_of(int i, int m) { return m - i * kTile < kTile ? m - i * kTile : kTile; }

}  // namespace batchsolve::cuda_backend::leaf_tiles
