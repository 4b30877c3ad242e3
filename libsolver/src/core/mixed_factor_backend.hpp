// The low-precision Cholesky factors of posv_mixed (core/posv_mixed.cpp) that each backend implements:
// A (working precision, its uplo triangle) scaled to unit diagonal, S A S with S = diag(a_ii)^-1/2,
// rounded to FP32 and stored as a lower triangle whatever uplo is, optionally shifted (+ shift I),
// then factored L L^T with its updates in the requested precision; and M^-1 d = S L^-T L^-1 S d.
// Every |entry| of the scaled matrix is at most 1 when A is positive definite, so every panel fits
// FP16 after one fixed power-of-two scale (no overflow, and its small entries stay normal).
// src/cuda/large/mixed_factor.cu implements it on the GPU (recursive: FP32 leaves by cuSOLVER, the
// off-diagonal solves and updates through cublasGemmEx on TF32/FP16/BF16 tensor cores with FP32
// accumulation); src/reference/mixed_factor.cpp on the CPU in FP32 for every precision (the CPU has no
// FP16 arithmetic to factor in); src/stub/mixed_factor_stub.cpp throws NotCompiled.
#pragma once

#include <cstddef>

#include "batchsolve/context.hpp"
#include "batchsolve/refinement.hpp"
#include "batchsolve/types.hpp"
#include "declare.hpp"

namespace batchsolve::mixed_factor_detail {

// How the GPU's recursive factor runs; the tuning table's posv_mixed row (resolved in core).
// The values come from the table (tuning_json.hpp's MixedTuning), overridden by the options.
struct MixedFactorConfig {
    int leaf = 512;          // order at or below which a diagonal block is one cuSOLVER SPOTRF
    int trsm_leaf = 512;     // columns at or below which an off-diagonal solve is one cuBLAS STRSM
    int solve_block = 0;     // M^-1: 0 cuBLAS STRSV/STRSM on the whole factor; b > 0 blocks of b rows
                             // (STRSV on the diagonal block, SGEMV for the panel below it)
    // Each diagonal leaf's inverse is formed after its SPOTRF (2 n x leaf floats more scratch): the
    // off-diagonal solve leaves become a copy and one GEMM with it (trsm_leaf is then leaf).
    bool inverse = false;
    // With inverse: each triangle of M^-1 for one right-hand side in one launch (row chunks of the
    // leaves in the order of an atomic ticket, each waiting on counters for the parts it needs).
    bool fused_solve = false;
    // CUDA: the factor (scaling, copy, the recursive chain) captured as a CUDA graph on the first call
    // with these arguments (a, lda, n, uplo, shift, scratch, info, stream, this configuration) and
    // replayed on later ones: the host then issues one launch instead of several hundred library
    // calls. Up to 64 graphs per process; a call that cannot be captured runs uncaptured.
    bool graph = false;
    // Right-looking in blocks of `leaf` with lookahead (the table's lookahead): block k's leaf, its
    // inverse (with inverse), its panel's solve and low-precision copy on a second stream, overlapped
    // with block k - 1's trailing update on the first (the next block column first, so that block
    // k + 1 can start, then the rest in pieces of update_width columns, a multiple of leaf; 0: one).
    bool lookahead = false;
    int update_width = 0;
    // M^-1 for one right-hand side: 64 or 128 rows per block row of one launch per triangle (the
    // inverses of the diagonal blocks of that order formed after the factor; S applied inside); 0
    // leaves it to solve_block / the fused solve / STRSV.
    int solve_rows = 0;
    // Each diagonal leaf factored and inverted by one launch of the ticketed 32 x 32 tile kernel
    // (src/cuda/large/leaf_tiles.hpp) instead of cuSOLVER SPOTRF + identity + STRSM; implies inverse.
    bool tiled_leaf = false;
};

// The unit roundoff of each low precision's products (the shift is a multiple of it).
inline double unit_roundoff(LowPrecision p) {
    switch (p) {
        case LowPrecision::fp16:
        case LowPrecision::tf32: return 0x1p-11;
        case LowPrecision::bf16: return 0x1p-8;
        default: return 0x1p-24;
    }
}

}  // namespace batchsolve::mixed_factor_detail

// Bytes of the factor's scratch for order n (the FP32 factor, S, the low-precision panel copies and
// the leaves' cuSOLVER buffer), beside nothing else.
#define BATCHSOLVE_MIXED_FACTOR_BYTES(T)                                                                    \
    std::size_t mixed_factor_bytes(TypeTag<T>, int n, LowPrecision precision,                               \
                                   const mixed_factor_detail::MixedFactorConfig& config, Context& ctx)
// The factor of S A S + shift I into `scratch` (mixed_factor_bytes); info (backend memory): 0, or the
// first column whose pivot was not positive (a non-positive a_jj is column j).
#define BATCHSOLVE_MIXED_FACTOR(T)                                                                          \
    void mixed_factor(Uplo uplo, int n, const T* a, int lda, double shift, LowPrecision precision,          \
                      const mixed_factor_detail::MixedFactorConfig& config, void* scratch, int* info, Context& ctx)
// d (n x nrhs, ldd) <- S L^-T L^-1 S d with the factor in `scratch`.
#define BATCHSOLVE_MIXED_SOLVE(T)                                                                           \
    void mixed_solve(TypeTag<T>, int n, int nrhs, const void* scratch, float* d, int ldd,                   \
                     const mixed_factor_detail::MixedFactorConfig& config, Context& ctx)

#define BATCHSOLVE_MIXED_FACTOR_ROUTINES(ROUTINE)                                \
    ROUTINE(REAL_PRECISIONS, BATCHSOLVE_MIXED_FACTOR_BYTES, "posv_mixed")        \
    ROUTINE(REAL_PRECISIONS, BATCHSOLVE_MIXED_FACTOR, "posv_mixed")              \
    ROUTINE(REAL_PRECISIONS, BATCHSOLVE_MIXED_SOLVE, "posv_mixed")

BATCHSOLVE_DECLARE_FAMILY(BATCHSOLVE_MIXED_FACTOR_ROUTINES)
