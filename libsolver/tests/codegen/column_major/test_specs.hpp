// The kernel variants the column-major tests exercise: a sample of n, thread shapes, precisions,
// triangles and routines for the NVRTC compile test and for the host emulation test (whose kernels
// are generated at build time by column_major_emit from emulation_specs()).
#pragma once

#include <string>
#include <vector>

#include "cuda/tuned/column_major_cholesky.hpp"
#include "codegen/cholesky/column_major.hpp"
#include "codegen/cholesky/fused.hpp"
#include "codegen/cholesky/shared_memory.hpp"

namespace batchsolve::test::column_major {

using cuda_backend::tuned::ColumnMajorRoutine;
using cuda_backend::tuned::ColumnMajorSpec;

// The sizes the issue names, plus odd ones next to them.
inline std::vector<int> sampled_sizes() { return {1, 2, 5, 8, 13, 16, 31, 32, 33, 64, 100, 128}; }

// Thread shapes: the default, and variations of every shape parameter (blocked loops, several
// rows per thread, a row split over 2 or 3 threads, several matrices per block, small chunks).
struct Shape {
    const char* label;
    int rows_per_thread, threads_per_row, matrices_per_block, nb;
    bool full_unroll;
};
inline std::vector<Shape> factor_shapes() {
    return {
        {"default", 0, 0, 0, 0, true},
        {"blocked_r2_m3", 2, 1, 3, 4, false},
        {"blocked_t3_m2", 1, 3, 2, 2, false},
        {"unrolled_r3_t2", 3, 2, 0, 4, true},
    };
}

inline ColumnMajorSpec make_spec(ColumnMajorRoutine routine, Precision p, Uplo uplo, int n, int nrhs, const Shape& s,
                                 int nrhs_block = 1, int threads_per_block = 128) {
    CholeskyConfig c = cuda_backend::tuned::default_column_major_config(routine, p, n, nrhs);
    if (std::string(s.label) != "default") {
        c.rows_per_thread = s.rows_per_thread;
        c.threads_per_row = s.threads_per_row;
        c.matrices_per_block = s.matrices_per_block;
        c.nb = s.nb;
        c.full_unroll = s.full_unroll;
    }
    c.nrhs_block = nrhs_block;
    c.threads_per_block = threads_per_block;
    return cuda_backend::tuned::column_major_spec(routine, p, uplo, n, nrhs, c);
}

// A shape is skipped where it cannot run n (too many registers, rows_per_thread > n, ...).
inline bool usable(const ColumnMajorSpec& s) { return cuda_backend::tuned::column_major_spec_problem(s).empty(); }

// The staged potrf, posv and potrs (codegen/cholesky/staged.hpp): panel widths that divide n and that do
// not, one and several warps and matrices per block (a block with padding slots at the batch's end),
// a panel wider than n, every precision and both triangles; the solves with fewer, as many and more
// right-hand sides than warps.
inline ColumnMajorSpec staged_spec(Precision p, Uplo uplo, int n, int nb, int warps, int matrices,
                                   ColumnMajorRoutine routine = ColumnMajorRoutine::potrf, int nrhs = 0) {
    CholeskyConfig c;
    c.staged = true;
    c.nb = nb;
    c.warps_per_matrix = warps;
    c.matrices_per_block = matrices;
    return cuda_backend::tuned::column_major_spec(routine, p, uplo, n, nrhs, c);
}
inline ColumnMajorSpec staged_posv_spec(Precision p, Uplo uplo, int n, int nb, int warps, int matrices, int nrhs) {
    return staged_spec(p, uplo, n, nb, warps, matrices, ColumnMajorRoutine::posv, nrhs);
}
inline ColumnMajorSpec staged_potrs_spec(Precision p, Uplo uplo, int n, int warps, int matrices, int nrhs) {
    return staged_spec(p, uplo, n, 0, warps, matrices, ColumnMajorRoutine::potrs, nrhs);
}
inline std::vector<ColumnMajorSpec> staged_specs() {
    return {
        staged_spec(Precision::d, Uplo::lower, 1, 16, 1, 3),   staged_spec(Precision::s, Uplo::upper, 5, 16, 1, 2),
        staged_spec(Precision::d, Uplo::upper, 13, 4, 2, 1),   staged_spec(Precision::s, Uplo::lower, 32, 32, 1, 4),
        staged_spec(Precision::d, Uplo::lower, 33, 8, 2, 2),   staged_spec(Precision::s, Uplo::upper, 64, 16, 2, 2),
        staged_spec(Precision::d, Uplo::lower, 100, 16, 4, 1), staged_spec(Precision::s, Uplo::lower, 128, 8, 4, 1),
        staged_spec(Precision::d, Uplo::upper, 128, 16, 4, 1), staged_spec(Precision::z, Uplo::upper, 20, 8, 1, 2),
        staged_spec(Precision::c, Uplo::lower, 37, 16, 2, 1),  staged_spec(Precision::z, Uplo::lower, 9, 3, 1, 3),
        staged_spec(Precision::c, Uplo::upper, 11, 4, 1, 3),  // conjugated in: slots are not contiguous
        staged_posv_spec(Precision::d, Uplo::lower, 1, 16, 1, 3, 2),
        staged_posv_spec(Precision::s, Uplo::upper, 13, 4, 2, 2, 3),
        staged_posv_spec(Precision::d, Uplo::lower, 33, 8, 2, 2, 1),
        staged_posv_spec(Precision::s, Uplo::lower, 64, 16, 2, 1, 2),
        staged_posv_spec(Precision::d, Uplo::upper, 100, 16, 4, 1, 5),
        staged_posv_spec(Precision::s, Uplo::lower, 128, 8, 4, 1, 3),
        staged_posv_spec(Precision::z, Uplo::upper, 20, 8, 1, 2, 2),
        staged_posv_spec(Precision::c, Uplo::lower, 37, 16, 2, 1, 3),
        staged_posv_spec(Precision::c, Uplo::upper, 11, 4, 1, 3, 2),
        staged_potrs_spec(Precision::d, Uplo::lower, 1, 1, 3, 2),
        staged_potrs_spec(Precision::s, Uplo::upper, 13, 2, 2, 3),
        staged_potrs_spec(Precision::d, Uplo::upper, 64, 2, 1, 1),
        staged_potrs_spec(Precision::d, Uplo::lower, 100, 4, 1, 5),
        staged_potrs_spec(Precision::s, Uplo::lower, 128, 1, 2, 3),
        staged_potrs_spec(Precision::z, Uplo::upper, 20, 1, 2, 2),
        staged_potrs_spec(Precision::c, Uplo::lower, 37, 2, 1, 3),
    };
}
// The staged factorisation with its trailing update on the FP64 tensor cores (config.tensor_cores,
// double precision): no trailing matrix (n = 1), panels of 4, 8, 16 and of 6 and 12 (the last mma of
// a panel half empty), trailing sizes that are and are not multiples of the 8 x 8 tiles, 1 to 4 warps,
// several matrices per block, both triangles, potrf and posv.
inline ColumnMajorSpec with_tensor_cores(ColumnMajorSpec s) {
    s.config.tensor_cores = true;
    return s;
}
inline std::vector<ColumnMajorSpec> staged_tensor_core_specs() {
    return {
        with_tensor_cores(staged_spec(Precision::d, Uplo::lower, 1, 16, 1, 3)),
        with_tensor_cores(staged_spec(Precision::d, Uplo::upper, 13, 4, 2, 1)),
        with_tensor_cores(staged_spec(Precision::d, Uplo::lower, 33, 8, 2, 2)),
        with_tensor_cores(staged_spec(Precision::d, Uplo::lower, 37, 6, 1, 2)),
        with_tensor_cores(staged_spec(Precision::d, Uplo::upper, 70, 12, 3, 1)),
        with_tensor_cores(staged_spec(Precision::d, Uplo::lower, 128, 16, 4, 1)),
        with_tensor_cores(staged_posv_spec(Precision::d, Uplo::lower, 33, 8, 2, 2, 2)),
        with_tensor_cores(staged_posv_spec(Precision::d, Uplo::upper, 100, 16, 4, 1, 3)),
        with_tensor_cores(staged_posv_spec(Precision::d, Uplo::lower, 45, 6, 2, 1, 1)),
    };
}

// The shared-memory family (codegen/cholesky/shared_memory.hpp; staged with looking = left): panels
// that divide n and that do not, a panel wider than n, tiles of 1 to 8 (odd ones too), one and several
// warps and matrices per block (a partial block at the batch's end), every precision and both
// triangles, and n beyond 128 up to the largest that fits (s 241, d 170, z 120).
inline ColumnMajorSpec shared_memory_spec(Precision p, Uplo uplo, int n, int nb, int warps, int matrices, int tile,
                                          ColumnMajorRoutine routine = ColumnMajorRoutine::potrf, int nrhs = 0) {
    CholeskyConfig c;
    c.staged = true;
    c.looking = Looking::left;
    c.nb = routine == ColumnMajorRoutine::potrs ? 0 : nb;
    c.warps_per_matrix = warps;
    c.matrices_per_block = matrices;
    c.rows_per_thread = routine == ColumnMajorRoutine::potrs ? 0 : tile;
    return cuda_backend::tuned::column_major_spec(routine, p, uplo, n, nrhs, c);
}
inline std::vector<ColumnMajorSpec> shared_memory_specs() {
    using R = ColumnMajorRoutine;
    const Precision s = Precision::s, d = Precision::d, c = Precision::c, z = Precision::z;
    const Uplo lo = Uplo::lower, up = Uplo::upper;
    return {
        shared_memory_spec(s, lo, 1, 8, 1, 3, 4),     shared_memory_spec(d, up, 5, 2, 1, 2, 2),
        shared_memory_spec(s, lo, 13, 4, 1, 4, 3),    shared_memory_spec(d, lo, 33, 8, 2, 2, 4),
        shared_memory_spec(s, up, 64, 8, 2, 1, 4),    shared_memory_spec(d, lo, 100, 4, 4, 1, 4),
        shared_memory_spec(s, lo, 128, 8, 4, 1, 1),   shared_memory_spec(d, up, 128, 16, 4, 1, 8),
        shared_memory_spec(c, up, 11, 3, 1, 3, 2),    shared_memory_spec(z, lo, 9, 4, 1, 2, 4),
        shared_memory_spec(s, lo, 200, 8, 8, 1, 5),   shared_memory_spec(d, up, 170, 4, 8, 1, 4),
        shared_memory_spec(s, up, 241, 32, 8, 1, 6),  shared_memory_spec(z, up, 120, 8, 4, 1, 4),
        shared_memory_spec(d, lo, 1, 4, 1, 3, 4, R::posv, 2),
        shared_memory_spec(s, up, 13, 4, 2, 2, 4, R::posv, 3),
        shared_memory_spec(d, up, 33, 8, 2, 2, 3, R::posv, 1),
        shared_memory_spec(s, lo, 100, 8, 4, 1, 4, R::posv, 3),
        shared_memory_spec(z, up, 20, 8, 1, 2, 2, R::posv, 2),
        shared_memory_spec(c, lo, 37, 16, 2, 1, 4, R::posv, 3),
        shared_memory_spec(d, lo, 170, 4, 8, 1, 4, R::posv, 2),
        shared_memory_spec(d, lo, 1, 0, 1, 3, 0, R::potrs, 2),
        shared_memory_spec(s, up, 13, 0, 2, 2, 0, R::potrs, 3),
        shared_memory_spec(d, up, 100, 0, 4, 1, 0, R::potrs, 2),
        shared_memory_spec(s, lo, 200, 0, 2, 1, 0, R::potrs, 3),
        shared_memory_spec(z, up, 20, 0, 1, 2, 0, R::potrs, 2),
        shared_memory_spec(c, lo, 37, 0, 2, 1, 0, R::potrs, 3),
    };
}

// The fused family (codegen/cholesky/fused.hpp; staged with warps_per_matrix = 0): the interleaved
// kernels' tile sizes that divide n and that do not, the three looking orders, unrolled and tile
// loops, blocks of 1 to 64 matrices (odd counts and counts that are not multiples of 32, so the
// batch's last block is partial), every precision and both triangles; posv with nrhs_block 1 to 3.
inline ColumnMajorSpec fused_spec(Precision p, Uplo uplo, int n, int nb, Looking looking, bool full_unroll,
                                  int matrices, ColumnMajorRoutine routine = ColumnMajorRoutine::potrf,
                                  int nrhs = 0, int nrhs_block = 1) {
    CholeskyConfig c;
    c.staged = true;
    c.warps_per_matrix = 0;
    c.nb = nb;
    c.looking = looking;
    c.full_unroll = full_unroll;
    c.threads_per_block = matrices;
    c.nrhs_block = nrhs_block;
    return cuda_backend::tuned::column_major_spec(routine, p, uplo, n, nrhs, c);
}
inline std::vector<ColumnMajorSpec> fused_specs() {
    using R = ColumnMajorRoutine;
    const Precision s = Precision::s, d = Precision::d, c = Precision::c, z = Precision::z;
    const Uplo lo = Uplo::lower, up = Uplo::upper;
    const Looking top = Looking::top, left = Looking::left, right = Looking::right;
    return {
        fused_spec(s, lo, 1, 1, top, true, 8),          fused_spec(d, up, 5, 2, left, false, 16),
        fused_spec(s, lo, 8, 8, top, true, 64),         fused_spec(s, up, 13, 4, right, false, 32),
        fused_spec(d, lo, 16, 8, left, false, 24),      fused_spec(s, lo, 31, 8, top, false, 7),
        fused_spec(d, up, 24, 6, right, true, 12),      fused_spec(c, up, 7, 7, top, true, 8),
        fused_spec(z, lo, 6, 4, left, false, 5),
        fused_spec(d, lo, 8, 4, top, true, 32, R::posv, 3, 2),
        fused_spec(s, up, 13, 6, left, false, 16, R::posv, 3, 3),
        fused_spec(c, lo, 5, 5, top, true, 8, R::posv, 2, 1),
        fused_spec(d, up, 24, 6, top, false, 9, R::posv, 2, 1),
        fused_spec(z, up, 3, 2, right, false, 4, R::posv, 2, 2),
    };
}

// The register kernels with their steps synchronised per warp (config.looking = left,
// warp_synchronous_steps): 4 to 32 threads per matrix, several matrices per warp and per block, both
// triangles, unrolled and blocked steps, potrf and posv.
inline ColumnMajorSpec warp_steps(ColumnMajorSpec s) {
    s.config.looking = Looking::left;
    return cuda_backend::tuned::column_major_spec(s.routine, s.precision, s.uplo, s.n, s.nrhs, s.config);
}
inline ColumnMajorSpec lean(ColumnMajorSpec s) {
    s.config.lean_addressing = true;
    return s;
}
inline ColumnMajorSpec compile_time_ld(ColumnMajorSpec s) {
    s.config.compile_time_ld = true;
    return s;
}
inline std::vector<ColumnMajorSpec> warp_step_specs() {
    using R = ColumnMajorRoutine;
    return {
        warp_steps(make_spec(R::potrf, Precision::s, Uplo::lower, 32, 0, {"r4", 4, 1, 0, 8, true})),
        warp_steps(make_spec(R::potrf, Precision::d, Uplo::upper, 16, 0, {"r2_t2", 2, 2, 0, 4, false})),
        warp_steps(make_spec(R::potrf, Precision::s, Uplo::upper, 7, 0, {"r2_m3", 2, 1, 3, 4, true})),
        warp_steps(make_spec(R::potrf, Precision::c, Uplo::lower, 13, 0, {"r4_t2", 4, 2, 0, 2, false})),
        warp_steps(make_spec(R::posv, Precision::s, Uplo::lower, 8, 3, {"r1", 1, 1, 0, 4, true}, 2)),
        warp_steps(make_spec(R::posv, Precision::d, Uplo::upper, 24, 2, {"r3", 3, 1, 0, 4, false}, 1)),
        // one row per lane (potrf at n = 4, 8, 16, 32: the rows kernel), both triangles, real and complex
        warp_steps(make_spec(R::potrf, Precision::s, Uplo::lower, 32, 0, {"r1", 1, 1, 0, 8, true})),
        warp_steps(make_spec(R::potrf, Precision::d, Uplo::upper, 16, 0, {"r1", 1, 1, 0, 4, true})),
        warp_steps(make_spec(R::potrf, Precision::s, Uplo::upper, 8, 0, {"r1", 1, 1, 0, 8, true})),
        warp_steps(make_spec(R::potrf, Precision::d, Uplo::lower, 4, 0, {"r1", 1, 1, 0, 4, true})),
        warp_steps(make_spec(R::potrf, Precision::z, Uplo::lower, 8, 0, {"r1", 1, 1, 0, 4, true})),
        warp_steps(make_spec(R::potrf, Precision::c, Uplo::upper, 32, 0, {"r1", 1, 1, 0, 4, true})),
        // the rows kernel with config.lean_addressing (one pointer per lane stepped by lda)
        lean(warp_steps(make_spec(R::potrf, Precision::s, Uplo::lower, 32, 0, {"r1", 1, 1, 0, 8, true}))),
        lean(warp_steps(make_spec(R::potrf, Precision::d, Uplo::upper, 16, 0, {"r1", 1, 1, 0, 4, true}))),
        lean(warp_steps(make_spec(R::potrf, Precision::s, Uplo::upper, 8, 0, {"r1", 1, 1, 0, 8, true}))),
        lean(warp_steps(make_spec(R::potrf, Precision::d, Uplo::lower, 4, 0, {"r1", 1, 1, 0, 4, true}))),
        lean(warp_steps(make_spec(R::potrf, Precision::z, Uplo::lower, 8, 0, {"r1", 1, 1, 0, 4, true}))),
        lean(warp_steps(make_spec(R::potrf, Precision::c, Uplo::upper, 32, 0, {"r1", 1, 1, 0, 4, true}))),
        lean(warp_steps(make_spec(R::potrf, Precision::d, Uplo::lower, 32, 0, {"r1", 1, 1, 0, 4, true}))),
    };
}

// The packed rows kernel (one row per lane, whole matrices per warp; config.lean_addressing, looking =
// left): potrf where n does not divide 32 (idle lanes at each warp's end: n = 12, 20, 24, 28), posv at
// n = 4..32 (the factor, the forward pass within the elimination, the backward pass from the rows of L
// in shared memory), every precision, both triangles, one to eight warps per block.
inline ColumnMajorSpec rows_packed_spec(ColumnMajorRoutine r, Precision p, Uplo u, int n, int threads_per_block) {
    return lean(warp_steps(make_spec(r, p, u, n, r == ColumnMajorRoutine::posv ? 3 : 0,
                                     {"r1", 1, 1, 0, p == Precision::s ? 8 : 4, true}, 1, threads_per_block)));
}
inline std::vector<ColumnMajorSpec> rows_packed_specs() {
    using R = ColumnMajorRoutine;
    const Precision s = Precision::s, d = Precision::d, c = Precision::c, z = Precision::z;
    const Uplo lo = Uplo::lower, up = Uplo::upper;
    return {
        rows_packed_spec(R::potrf, s, lo, 12, 128), rows_packed_spec(R::potrf, d, up, 24, 64),
        rows_packed_spec(R::potrf, c, up, 12, 128), rows_packed_spec(R::potrf, z, lo, 20, 32),
        rows_packed_spec(R::potrf, s, up, 28, 32),  rows_packed_spec(R::potrf, d, lo, 12, 256),
        rows_packed_spec(R::posv, s, lo, 4, 128),   rows_packed_spec(R::posv, d, up, 8, 64),
        rows_packed_spec(R::posv, s, up, 12, 128),  rows_packed_spec(R::posv, d, lo, 16, 128),
        rows_packed_spec(R::posv, s, lo, 24, 96),   rows_packed_spec(R::posv, d, up, 32, 128),
        rows_packed_spec(R::posv, s, lo, 32, 64),   rows_packed_spec(R::posv, c, up, 12, 64),
        rows_packed_spec(R::posv, z, lo, 7, 32),    rows_packed_spec(R::posv, d, lo, 12, 128),
        rows_packed_spec(R::posv, d, up, 24, 128),  rows_packed_spec(R::posv, z, up, 16, 64),
    };
}

// potrf on square thread grids (ceil(n / rows_per_thread) == threads_per_row >= 4: the square-grid
// kernel): sides 4, 8, 16, rows that fill the last block and rows that do not (n = 13, 20, 33, 100),
// every precision, both triangles, unrolled and blocked steps, several matrices per block, block and
// warp barriers (looking = left, 16 threads per matrix); posv at sides 8 and 16 (rows of the last block
// missing at n = 30, 45, 100; more right-hand sides than the matrix has warps at n = 45); the same with
// lda = n compiled in (config.compile_time_ld; emulated on batches stored with ld = n).
inline std::vector<ColumnMajorSpec> square_grid_specs() {
    using R = ColumnMajorRoutine;
    return {
        make_spec(R::potrf, Precision::s, Uplo::lower, 64, 0, {"sq8", 8, 8, 0, 8, false}),
        make_spec(R::potrf, Precision::d, Uplo::upper, 33, 0, {"sq4", 9, 4, 0, 4, true}),
        make_spec(R::potrf, Precision::c, Uplo::lower, 13, 0, {"sq4", 4, 4, 3, 4, false}),
        make_spec(R::potrf, Precision::z, Uplo::upper, 20, 0, {"sq4", 5, 4, 0, 4, true}),
        make_spec(R::potrf, Precision::s, Uplo::upper, 100, 0, {"sq8", 13, 8, 0, 8, false}),
        make_spec(R::potrf, Precision::d, Uplo::lower, 128, 0, {"sq16", 8, 16, 0, 4, false}, 1, 256),
        make_spec(R::potrf, Precision::s, Uplo::lower, 48, 0, {"sq8", 6, 8, 0, 8, true}),
        warp_steps(make_spec(R::potrf, Precision::s, Uplo::lower, 24, 0, {"sq4", 6, 4, 0, 8, true})),
        warp_steps(make_spec(R::potrf, Precision::d, Uplo::upper, 15, 0, {"sq4", 4, 4, 0, 4, false})),
        // posv (sides 8 and 16): the factor packed in shared memory, a warp per right-hand side
        make_spec(R::posv, Precision::s, Uplo::lower, 64, 3, {"sq8", 8, 8, 0, 8, false}),
        make_spec(R::posv, Precision::d, Uplo::upper, 45, 2, {"sq8", 6, 8, 0, 4, true}),
        make_spec(R::posv, Precision::z, Uplo::lower, 30, 2, {"sq8", 4, 8, 0, 4, true}),
        make_spec(R::posv, Precision::c, Uplo::upper, 100, 2, {"sq8", 13, 8, 0, 4, false}),
        make_spec(R::posv, Precision::s, Uplo::upper, 128, 1, {"sq16", 8, 16, 0, 8, false}, 1, 256),
        // config.compile_time_ld (lda = n in the text): one matrix per 64-thread block (the prototype's m1
        // form), rows of the last block missing (n = 45, 100), both triangles, real and complex, posv
        compile_time_ld(make_spec(R::potrf, Precision::s, Uplo::lower, 64, 0, {"sq8", 8, 8, 0, 8, false}, 1, 64)),
        compile_time_ld(make_spec(R::potrf, Precision::d, Uplo::upper, 100, 0, {"sq8", 13, 8, 0, 4, false}, 1, 64)),
        compile_time_ld(warp_steps(make_spec(R::potrf, Precision::c, Uplo::lower, 13, 0, {"sq4", 4, 4, 0, 4, true}, 1, 64))),
        compile_time_ld(make_spec(R::posv, Precision::d, Uplo::lower, 45, 2, {"sq8", 6, 8, 0, 4, true}, 1, 64)),
        compile_time_ld(make_spec(R::posv, Precision::s, Uplo::upper, 64, 3, {"sq8", 8, 8, 0, 8, false}, 1, 64)),
    };
}

// The square-grid kernel's lean step loop (config.lean_addressing): sides dividing n (no row guards) and
// not (n = 13, 45, 100), every precision, both triangles, unrolled and blocked steps, one matrix per
// 64-thread block and several per block, warp barriers (looking = left), posv, with lda = n compiled in.
inline std::vector<ColumnMajorSpec> lean_square_grid_specs() {
    using R = ColumnMajorRoutine;
    return {
        lean(make_spec(R::potrf, Precision::s, Uplo::lower, 64, 0, {"sq8", 8, 8, 0, 8, false}, 1, 64)),
        lean(make_spec(R::potrf, Precision::d, Uplo::upper, 100, 0, {"sq8", 13, 8, 0, 4, false}, 1, 64)),
        lean(make_spec(R::potrf, Precision::s, Uplo::upper, 48, 0, {"sq8", 6, 8, 0, 8, true})),
        lean(make_spec(R::potrf, Precision::z, Uplo::lower, 20, 0, {"sq4", 5, 4, 0, 4, true})),
        lean(warp_steps(make_spec(R::potrf, Precision::c, Uplo::upper, 13, 0, {"sq4", 4, 4, 0, 4, false}))),
        lean(make_spec(R::potrf, Precision::d, Uplo::lower, 128, 0, {"sq16", 8, 16, 0, 4, false}, 1, 256)),
        lean(make_spec(R::posv, Precision::s, Uplo::lower, 64, 3, {"sq8", 8, 8, 0, 8, false}, 1, 64)),
        lean(make_spec(R::posv, Precision::d, Uplo::upper, 45, 2, {"sq8", 6, 8, 0, 4, true})),
        lean(make_spec(R::posv, Precision::c, Uplo::lower, 48, 2, {"sq8", 6, 8, 0, 4, false}, 1, 64)),
        lean(compile_time_ld(make_spec(R::potrf, Precision::d, Uplo::lower, 48, 0, {"sq8", 6, 8, 0, 4, true}, 1, 64))),
        lean(compile_time_ld(make_spec(R::posv, Precision::s, Uplo::upper, 64, 3, {"sq8", 8, 8, 0, 8, false}, 1, 64))),
    };
}

// Host-emulated variants: every sampled n with several shapes for potrf and posv (s and d, both
// triangles), potrs with several nrhs_block and steps loaded ahead, and a complex sample. Fully unrolled kernels only up to
// n = 64 (host compile time); larger n run the blocked loops.
inline std::vector<ColumnMajorSpec> emulation_specs() {
    std::vector<ColumnMajorSpec> out;
    auto add = [&](const ColumnMajorSpec& s) {
        if (usable(s)) out.push_back(s);
    };
    const std::vector<Shape> shapes = factor_shapes();
    const Shape blocked_default{"blocked_default", 0, 0, 0, 4, false};
    for (int n : sampled_sizes()) {
        const bool small = n <= 64;
        const Shape& first = small ? shapes[0] : blocked_default;
        add(make_spec(ColumnMajorRoutine::potrf, Precision::d, Uplo::lower, n, 0, first));
        add(make_spec(ColumnMajorRoutine::potrf, Precision::s, Uplo::upper, n, 0, shapes[1]));
        add(make_spec(ColumnMajorRoutine::potrf, Precision::d, Uplo::upper, n, 0, shapes[2]));
        if (small) add(make_spec(ColumnMajorRoutine::potrf, Precision::s, Uplo::lower, n, 0, shapes[3]));
        add(make_spec(ColumnMajorRoutine::posv, Precision::d, Uplo::upper, n, 3, first, 2));
        add(make_spec(ColumnMajorRoutine::posv, Precision::s, Uplo::lower, n, 3, shapes[2], 3));
        if (small) add(make_spec(ColumnMajorRoutine::posv, Precision::d, Uplo::lower, n, 3, shapes[3], 1));
        add(make_spec(ColumnMajorRoutine::potrs, Precision::d, Uplo::lower, n, 3, shapes[0], 2, 64));
        add(make_spec(ColumnMajorRoutine::potrs, Precision::s, Uplo::upper, n, 3, shapes[0], 1, 96));
        // explicit steps loaded ahead (config.nb; shape 1 has nb 4, shape 2 nb 2), the other triangles
        add(make_spec(ColumnMajorRoutine::potrs, Precision::d, Uplo::upper, n, 3, shapes[1], 2, 64));
        add(make_spec(ColumnMajorRoutine::potrs, Precision::s, Uplo::lower, n, 2, shapes[2], 1, 32));
    }
    // corners of the shape space: 4 x 4 threads per row tile, one-column chunks, the fused
    // right-hand sides split over threads of a row with several rows per thread (blocked loops)
    add(make_spec(ColumnMajorRoutine::potrf, Precision::s, Uplo::upper, 33, 0, {"r4_t4", 4, 4, 0, 4, true}));
    add(make_spec(ColumnMajorRoutine::potrf, Precision::z, Uplo::lower, 13, 0, {"r2_t2_c1", 2, 2, 3, 1, false}));
    add(make_spec(ColumnMajorRoutine::posv, Precision::d, Uplo::upper, 31, 5, {"r2_t2", 2, 2, 2, 2, false}, 3));
    add(make_spec(ColumnMajorRoutine::posv, Precision::c, Uplo::lower, 20, 4, {"r3_t3", 3, 3, 0, 1, true}, 4));
    for (const ColumnMajorSpec& s : staged_specs()) add(s);
    for (const ColumnMajorSpec& s : staged_tensor_core_specs()) add(s);
    for (const ColumnMajorSpec& s : shared_memory_specs()) add(s);
    for (const ColumnMajorSpec& s : fused_specs()) out.push_back(s);  // every one must be usable
    for (const ColumnMajorSpec& s : warp_step_specs()) out.push_back(s);
    for (const ColumnMajorSpec& s : square_grid_specs()) out.push_back(s);
    for (int n : {1, 5, 16, 33}) {
        add(make_spec(ColumnMajorRoutine::potrf, Precision::z, Uplo::lower, n, 0, shapes[1]));
        add(make_spec(ColumnMajorRoutine::potrf, Precision::c, Uplo::upper, n, 0, shapes[0]));
        add(make_spec(ColumnMajorRoutine::posv, Precision::z, Uplo::upper, n, 2, shapes[2], 2));
        add(make_spec(ColumnMajorRoutine::posv, Precision::c, Uplo::lower, n, 2, shapes[0], 1));
        add(make_spec(ColumnMajorRoutine::potrs, Precision::z, Uplo::upper, n, 2, shapes[0], 2, 32));
        add(make_spec(ColumnMajorRoutine::potrs, Precision::c, Uplo::lower, n, 2, shapes[0], 1, 128));
    }
    for (const ColumnMajorSpec& s : lean_square_grid_specs()) out.push_back(s);
    for (const ColumnMajorSpec& s : rows_packed_specs()) out.push_back(s);
    return out;
}

}  // namespace batchsolve::test::column_major
