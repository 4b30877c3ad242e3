// Source generator of the column-major batched Cholesky kernels (see codegen/cholesky/column_major.hpp for the
// algorithms); also the defaults, the validity checks and the shared-memory plan of each shape.
#include "codegen/cholesky/column_major.hpp"

#include "codegen/cholesky/fused.hpp"
#include "codegen/cholesky/shared_memory.hpp"
#include "codegen/cholesky/square_grid.hpp"
#include "codegen/cholesky/staged.hpp"

#include "codegen/common.hpp"
#include "codegen/prelude.hpp"
#include "codegen/source_writer.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

namespace batchsolve::codegen::cholesky {

namespace {

using codegen::align16;
using codegen::ceil_div;
using codegen::element_bytes;
using codegen::is_complex;
using codegen::is_single;
using codegen::pow2_ceil;
using codegen::real_bytes;
using codegen::round_up;
char letter(Precision p) { return precision_letter(p); }
bool factors(ColumnMajorRoutine r) { return r != ColumnMajorRoutine::potrs; }
bool solves(ColumnMajorRoutine r) { return r != ColumnMajorRoutine::potrf; }

// Default threads per row: the smallest power of two that keeps one row's share of a thread within
// 128 registers (float n = 128: 1; double n = 128: 2; complex double n = 128: 4).
int default_threads_per_row(Precision p, int n) {
    const int words = element_bytes(p) / 4;
    int tc = 1;
    while (tc < 8 && ceil_div(n, tc) * words > 128) tc *= 2;
    return tc;
}

// The packed rows kernel (kRowsPackedKernel): one row per lane with config.lean_addressing and looking =
// left, for posv at every such n and for potrf where n does not divide 32 (the plain rows kernel takes
// the powers of two): floor(32 / n) matrices to a warp, none across a warp, n a multiple of the 16-byte
// vector (the column buffer's broadcasts stay aligned at every matrix's first lane).
bool rows_packed(const ColumnMajorSpec& spec, int vec) {
    const CholeskyConfig& c = spec.config;
    const int n = spec.n;
    return !c.staged && spec.routine != ColumnMajorRoutine::potrs && c.looking == Looking::left && c.lean_addressing &&
           c.rows_per_thread == 1 && c.threads_per_row == 1 && c.matrices_per_block == 0 && c.warps_per_matrix == 0 &&
           n >= 2 && n <= 32 && n % vec == 0 && (spec.routine == ColumnMajorRoutine::posv || 32 % n != 0);
}
// Its shared memory, in elements: per warp two column buffers of rows_packed_half() each; posv then a
// region of rows_packed_region() per matrix holding its rows of L (pitch rows_packed_pitch()).
int rows_packed_half(int n, int vec) {
    const int used = (32 / n) * n;  // lanes of whole matrices; the rest of the warp idles in one more slot
    return used == 32 ? 32 : round_up(used + n, vec);  // the idle slot's broadcasts stay inside its buffer
}
// Row pitch: 16-byte stores of 8 consecutive lanes' rows on distinct bank quads (pitch in words = 4 mod 8).
int rows_packed_pitch(int n, int vec, int words) {
    int p = n;
    while (p % vec != 0 || (p * words) % 8 != 4) ++p;
    return p;
}
// Region per matrix: the matrices of a warp read their row k at offsets that differ by n elements mod the
// 32 banks, as if their lanes were consecutive (the backward pass's loads conflict-free).
int rows_packed_region(int n, int vec, int words) {
    int r = n * rows_packed_pitch(n, vec, words);
    while (r % vec != 0 || ((r - n) * words) % 32 != 0) ++r;
    return r;
}

// Fields after resolution, or a problem text.
struct Resolved {
    std::string problem;
    ColumnMajorShape shape;
};

Resolved resolve_shape(const ColumnMajorSpec& spec) {
    Resolved out;
    ColumnMajorShape& s = out.shape;
    const CholeskyConfig& c = spec.config;
    const int n = spec.n;
    auto fail = [&](const std::string& text) {
        out.problem = text;
        return out;
    };
    if (is_fused_config(c)) {  // fused.hpp: its own checks and shape
        out.problem = fused_resolve(spec, s);
        return out;
    }
    if (is_shared_memory_config(c)) {  // shared_memory.hpp: its own checks and shape
        out.problem = shared_memory_resolve(spec, s);
        return out;
    }
    if (n < 1 || n > column_major_max_n)
        return fail("n: 1 <= n <= " + std::to_string(column_major_max_n) + " for the column-major kernels (got " +
                    std::to_string(n) + ")");
    if (c.max_registers != 0 && (c.max_registers < 16 || c.max_registers > 255))
        return fail("config.max_registers: 0 or 16..255 (got " + std::to_string(c.max_registers) + ")");
    if (c.tensor_cores && !c.staged)
        return fail("config.tensor_cores: only with config.staged (the staged kernels' trailing update)");
    if (c.solve_warps_per_matrix != 0 || c.solve_nb != 0)
        return fail("config.solve_warps_per_matrix: 0 for the column-major kernels (posv's two-kernel form is "
                    "interleaved only; with config.through_interleaved it runs there)");
    s.words = element_bytes(spec.precision) / 4;
    s.vec = 16 / element_bytes(spec.precision);
    const int esize = element_bytes(spec.precision);

    // ---- solve segments ----
    if (solves(spec.routine)) {
        if (c.nrhs_block > column_major_max_nrhs_block)
            return fail("config.nrhs_block: at most " + std::to_string(column_major_max_nrhs_block) + " (got " +
                        std::to_string(c.nrhs_block) + ")");
        s.seg_lanes = std::min(32, pow2_ceil(n));
        s.seg_rows = ceil_div(n, s.seg_lanes);
        s.nrhs_block = std::max(1, std::min(c.nrhs_block > 0 ? c.nrhs_block : 1, std::max(spec.nrhs, 1)));
        if (s.seg_rows * s.nrhs_block * s.words > 128)
            return fail("config.nrhs_block: " + std::to_string(s.seg_rows) + " rows per lane x " +
                        std::to_string(s.nrhs_block) + " right-hand sides x " + std::to_string(s.words) +
                        " words exceed 128 registers; use a smaller nrhs_block");
    }

    if (spec.routine == ColumnMajorRoutine::potrs && !c.staged) {
        if (c.nb < 0 || c.nb > column_major_solve_prefetch)
            return fail("config.nb: 0 (default) or the steps of a substitution loaded ahead, 1.." +
                        std::to_string(column_major_solve_prefetch) + " (got " + std::to_string(c.nb) + ")");
        const int bt = c.threads_per_block;
        if (bt < 32 || bt > codegen::max_threads_per_block || bt % 32 != 0)
            return fail("config.threads_per_block: a multiple of 32 in [32, " + std::to_string(codegen::max_threads_per_block) +
                        "] (got " + std::to_string(bt) + ")");
        s.block_threads = bt;
        s.segments_per_block = bt / s.seg_lanes;
        s.solve_prefetch = c.nb > 0 ? c.nb : column_major_potrs_default_prefetch(spec.precision, s.seg_rows);
        s.shared_bytes = 0;
        return out;
    }

    // ---- factorisation shape ----
    if (c.staged) {  // staged.hpp: a group of warps per matrix, the matrix in shared memory
        if (c.through_interleaved) return fail("config.through_interleaved: false with config.staged");
        if (c.rows_per_thread != 0 || c.threads_per_row != 0)
            return fail("config.rows_per_thread: 0 with config.staged (as is threads_per_row)");
        if (c.grid_blocks_per_sm != 0)
            return fail("config.grid_blocks_per_sm: 0 for the column-major kernels (got " +
                        std::to_string(c.grid_blocks_per_sm) + ")");
        if (spec.routine != ColumnMajorRoutine::potrs && (c.nb < 1 || c.nb > column_major_staged_max_nb))  // potrs: no panels
            return fail("config.nb: the staged kernel's panel width, 1.." + std::to_string(column_major_staged_max_nb) +
                        " (got " + std::to_string(c.nb) + ")");
        if (c.tensor_cores && spec.precision != Precision::d)
            return fail("config.tensor_cores: double precision only (the FP64 tensor cores; got " +
                        std::string(1, letter(spec.precision)) + ")");
        if (c.tensor_cores && spec.routine == ColumnMajorRoutine::potrs)
            return fail("config.tensor_cores: potrf and posv only (potrs has no trailing update)");
        if (c.warps_per_matrix < 1 || c.warps_per_matrix > 32)
            return fail("config.warps_per_matrix: 1..32 warps per matrix with config.staged (got " +
                        std::to_string(c.warps_per_matrix) + ")");
        s.threads_per_matrix = 32 * c.warps_per_matrix;
        const int mpb = c.matrices_per_block > 0 ? c.matrices_per_block : 1;
        if (mpb * s.threads_per_matrix > codegen::max_threads_per_block)
            return fail("config.matrices_per_block: " + std::to_string(mpb) + " matrices x " +
                        std::to_string(s.threads_per_matrix) + " threads exceed " +
                        std::to_string(codegen::max_threads_per_block) + " threads per block");
        s.matrices_per_block = s.slots = mpb;
        s.block_threads = mpb * s.threads_per_matrix;
        // the triangles (slot pitch column_major_staged_pitch), a panel's 1/l_kk per slot, a failure
        // flag per slot
        s.off_packed = 0;
        s.off_diag = align16(std::size_t(mpb) * column_major_staged_pitch(n) * esize);
        s.off_flags = s.off_diag + align16(std::size_t(mpb) * c.nb * real_bytes(spec.precision));
        s.shared_bytes = s.off_flags + align16(std::size_t(mpb) * sizeof(int));
        if (s.shared_bytes > column_major_max_shared_bytes)
            return fail("config.matrices_per_block: " + std::to_string(mpb) + " staged matrices of n = " +
                        std::to_string(n) + " need " + std::to_string(s.shared_bytes) +
                        " bytes of shared memory per block (> " + std::to_string(column_major_max_shared_bytes) + ")");
        return out;
    }
    if (c.threads_per_row < 0 || c.threads_per_row > 16)
        return fail("config.threads_per_row: 0 (default) or 1..16 (got " + std::to_string(c.threads_per_row) + ")");
    if (c.rows_per_thread < 0 || c.rows_per_thread > n)
        return fail("config.rows_per_thread: 0 (default) or 1..n = " + std::to_string(n) + " (got " +
                    std::to_string(c.rows_per_thread) + ")");
    if (c.warps_per_matrix < 0)
        return fail("config.warps_per_matrix: >= 0 (got " + std::to_string(c.warps_per_matrix) + ")");
    if (c.matrices_per_block < 0)
        return fail("config.matrices_per_block: >= 0 (got " + std::to_string(c.matrices_per_block) + ")");
    if (c.grid_blocks_per_sm != 0)
        return fail("config.grid_blocks_per_sm: 0 for the column-major kernels (got " +
                    std::to_string(c.grid_blocks_per_sm) + ")");
    if (c.nb < 0 || c.nb > column_major_max_n)
        return fail("config.nb: 0 (default) or the update chunk 1.." + std::to_string(column_major_max_n) +
                    " (got " + std::to_string(c.nb) + ")");
    s.threads_per_row = c.threads_per_row > 0 ? c.threads_per_row : default_threads_per_row(spec.precision, n);
    if (c.rows_per_thread > 0) {
        s.rows_per_thread = c.rows_per_thread;
    } else if (c.warps_per_matrix > 0) {  // at most that many warps per matrix
        s.rows_per_thread = std::max(1, ceil_div(n * s.threads_per_row, 32 * c.warps_per_matrix));
    } else {
        s.rows_per_thread = 1;
    }
    s.row_threads = ceil_div(n, s.rows_per_thread);
    s.cols_per_thread = ceil_div(n, s.threads_per_row);
    s.threads_per_matrix = s.row_threads * s.threads_per_row;
    if (rows_packed(spec, s.vec)) {  // kRowsPackedKernel: whole matrices per warp, idle lanes at its end
        s.update_chunk = round_up(c.nb > 0 ? c.nb : (spec.precision == Precision::s ? 8 : 4), s.vec);
        s.col_pitch = round_up(n, s.vec);
        s.block_threads = round_up(std::max(32, std::min(c.threads_per_block > 0 ? c.threads_per_block : 128, 1024)), 32);
        s.matrices_per_block = s.slots = (s.block_threads / 32) * (32 / n);
        s.nrhs_block = solves(spec.routine) ? 1 : s.nrhs_block;  // one right-hand side at a time: nrhs_block unread
        std::size_t elements = std::size_t(s.block_threads / 32) * 2 * rows_packed_half(n, s.vec);
        s.off_packed = align16(elements * esize);
        if (spec.routine == ColumnMajorRoutine::posv)
            elements = s.off_packed / esize + std::size_t(s.matrices_per_block) * rows_packed_region(n, s.vec, s.words);
        s.shared_bytes = align16(elements * esize);
        if (solves(spec.routine)) s.segments_per_block = s.block_threads / s.seg_lanes;
        return out;
    }
    if (s.threads_per_matrix > codegen::max_threads_per_block)
        return fail("config.rows_per_thread: one matrix would need " + std::to_string(s.threads_per_matrix) +
                    " threads (> " + std::to_string(codegen::max_threads_per_block) +
                    "); raise rows_per_thread or lower threads_per_row");
    const bool square = square_grid_potrf(spec, s.row_threads, s.threads_per_row);
    // a square grid's thread holds only its share of the triangle: L (L + 1) / 2 of its L x L elements
    const int side = ceil_div(n, s.threads_per_row);
    const int tile_elements = square ? side * (side + 1) / 2 : s.rows_per_thread * s.cols_per_thread;
    if (tile_elements * s.words > column_major_max_tile_words)
        return fail("config.threads_per_row: a thread's tile of " + std::to_string(s.rows_per_thread) + " x " +
                    std::to_string(s.cols_per_thread) + (square ? " (its triangle: " + std::to_string(tile_elements) + ")" : "") +
                    " elements needs " + std::to_string(tile_elements * s.words) + " registers (> " +
                    std::to_string(column_major_max_tile_words) + "); raise threads_per_row or lower rows_per_thread");
    if (warp_synchronous_steps(spec) && 32 % s.threads_per_matrix != 0)
        return fail("config.looking: left (the steps synchronised per warp) needs a matrix's threads to divide a warp (" +
                    std::to_string(s.threads_per_matrix) + " threads per matrix); use right");
    if (c.warps_per_matrix > 0 && ceil_div(s.threads_per_matrix, 32) > c.warps_per_matrix)
        return fail("config.warps_per_matrix: the shape needs " + std::to_string(ceil_div(s.threads_per_matrix, 32)) +
                    " warps per matrix (> " + std::to_string(c.warps_per_matrix) + ")");
    // default chunk: 8 floats or 4 of the wider types (fewer column values in flight per thread)
    s.update_chunk = round_up(c.nb > 0 ? c.nb : (spec.precision == Precision::s ? 8 : 4), s.vec);
    s.col_pitch = round_up(ceil_div(std::max(n, s.row_threads * s.rows_per_thread), s.threads_per_row), s.vec);
    s.packed = !square && (spec.uplo == Uplo::upper || spec.routine == ColumnMajorRoutine::posv);
    if (spec.routine == ColumnMajorRoutine::posv && !square) {
        s.rhs_per_thread = ceil_div(s.nrhs_block, s.threads_per_row);
        if (s.rows_per_thread * (s.cols_per_thread + s.rhs_per_thread) * s.words > column_major_max_tile_words)
            return fail("config.nrhs_block: the fused right-hand sides push a thread's tile past " +
                        std::to_string(column_major_max_tile_words) + " registers; use a smaller nrhs_block");
    }

    auto plan = [&](int mpb) {
        s.matrices_per_block = mpb;
        s.block_threads = round_up(mpb * s.threads_per_matrix, 32);
        s.slots = ceil_div(s.block_threads, s.threads_per_matrix);
        if (square) {  // kSquareGridKernel: two column buffers of side * P elements per slot; posv: a packed factor
            s.off_col = s.off_diag = s.off_flags = s.off_rows = s.off_y = 0;
            s.off_packed = align16(std::size_t(2) * s.slots *
                                   std::size_t(square_grid_buffer_elements(spec, side, s.threads_per_row, s.vec)) * esize);
            s.shared_bytes = s.off_packed;
            if (spec.routine == ColumnMajorRoutine::posv)
                s.shared_bytes += align16(std::size_t(s.slots) * (std::size_t(n) * (n + 1) / 2) * esize);
            return;
        }
        std::size_t off = 0;
        s.off_col = off;
        off += align16(std::size_t(2) * s.slots * s.threads_per_row * s.col_pitch * esize);
        s.off_diag = off;
        off += align16(std::size_t(3) * s.slots * n * real_bytes(spec.precision));
        s.off_flags = off;
        if (spec.routine == ColumnMajorRoutine::posv) off += align16(std::size_t(s.slots) * sizeof(int));
        s.off_packed = off;
        if (s.packed) off += align16(std::size_t(mpb) * (std::size_t(n) * (n + 1) / 2) * esize);
        s.off_rows = s.off_y = off;
        if (spec.routine == ColumnMajorRoutine::posv) {
            s.off_rows = off;
            off += align16(std::size_t(2) * s.slots * s.threads_per_row * s.rhs_per_thread * esize);
            s.off_y = off;
            off += align16(std::size_t(mpb) * n * s.nrhs_block * esize);
        }
        s.shared_bytes = off;
    };
    if (c.matrices_per_block > 0) {
        if (c.matrices_per_block * s.threads_per_matrix > 1024)
            return fail("config.matrices_per_block: " + std::to_string(c.matrices_per_block) + " matrices x " +
                        std::to_string(s.threads_per_matrix) + " threads exceed 1024 threads per block");
        plan(c.matrices_per_block);
    } else {
        const int target = c.threads_per_block > 0 ? std::min(c.threads_per_block, 1024) : 128;
        int mpb = std::max(1, std::min(target, 1024) / s.threads_per_matrix);
        plan(mpb);
        while (mpb > 1 && s.shared_bytes > column_major_max_shared_bytes) plan(--mpb);
    }
    if (s.shared_bytes > column_major_max_shared_bytes)
        return fail("config.matrices_per_block: " + std::to_string(s.shared_bytes) +
                    " bytes of shared memory per block (> " + std::to_string(column_major_max_shared_bytes) + ")");
    if (solves(spec.routine)) s.segments_per_block = s.block_threads / s.seg_lanes;
    return out;
}

// potrf with one row per lane (rows_per_thread = threads_per_row = 1, looking = left, n a power of two
// >= 4 dividing 32): lane i of a matrix's n lanes holds row i of the lower triangle (of L^H's rows for
// upper) in registers; right-looking with the columns scaled as they go: the pivot comes by a shuffle,
// the step's column through a per-warp double buffer read back as 16-byte broadcasts, one __syncwarp
// per step and no block barrier. Addressing (A_BASE, LOAD_LOOP, STORE_LOOP): 64-bit offsets per element
// from the matrix's base, or with config.lean_addressing one pointer per lane (lower: stepped by lda
// behind BS_OPAQUE_I64, so that no column's address is computed ahead and held; upper: the lane's
// column of U, compile-time offsets).
constexpr const char* kRowsKernel = R"(
BS_KERNEL_HEAD(@BT@, @MIN_BLOCKS@) @NAME@(T* a, T* const* a_ptrs, long long a_stride, int lda, int* info, int count, int zero) {
  BS_DECLARE_SMEM(bs_smem);
  const int t = (int)threadIdx.x, lane = t & 31;
  const int ml = t / @N@, i = t - ml * @N@;  // matrix slot, this lane's row
  const long long m = (long long)blockIdx.x * @MPB@ + ml;
  const bool act = m < (long long)count;
  @A_BASE@
  T* const cb0 = (T*)bs_smem + (t >> 5) * 64 + (lane - i);  // this matrix's part of its warp's two buffers
  T r[@N@];
@LOAD_LOOP@
  int fcol = 0;  // 1-based column of the first bad pivot: columns < it hold L, the rest the Schur complement
#pragma unroll
  for (int k = 0; k < @N@; ++k) {
    const R d = bs_real(bs_shfl(r[k], k, @N@));
    if (fcol == 0 && !bs_pivot_ok(d)) fcol = k + 1;
    const bool live = fcol == 0;
    const R s = @SQRT@(d);
    const T lik = i == k ? bs_from_real(s) : bs_scale(r[k], (R)1 / s);
    if (live) r[k] = lik;
    T* const cb = cb0 + (k & 1) * 32;
    cb[i] = lik;
    __syncwarp();
#pragma unroll
    for (int jb = (k + 1) / @VEC@ * @VEC@; jb < @N@; jb += @VEC@) {
      const bs_vec u = BS_VEC_AT(cb + jb);
#pragma unroll
      for (int e = 0; e < @VEC@; ++e)
        if (jb + e > k && live) r[jb + e] = bs_sub_mul_conj(r[jb + e], lik, u.v[e]);
    }
  }
@STORE_LOOP@
  if (act && i == 0) info[m] = fcol;
  (void)zero;
}
)";

// potrf and posv with one row per lane, matrices packed whole into warps (rows_packed; lean addressing
// only): as kRowsKernel, but lane l of warp w holds row i = l mod n of matrix l / n of the warp, so
// orders that do not divide 32 leave only the warp's last 32 mod n lanes idle (n = 12: two matrices
// in 24 lanes, n = 24: one) instead of spreading a matrix over two warps and block barriers; shuffles
// name absolute lanes (the matrix's first lane mb + k). posv (@POSV_*@) rides its first right-hand side
// along the elimination (row k of it by a second shuffle from the pivot's lane, y_k = b_k / l_kk, the
// rows below updated with l_ik y_k), stages each lane's row of L in shared memory once (16-byte stores,
// pitch on distinct bank quads) and substitutes backward with l_ki read from row k there while x_k
// comes by a shuffle; further right-hand sides repeat the forward pass from the rows still in
// registers. A and B are each read once and written once; a failed matrix leaves B as it was.
constexpr const char* kRowsPackedKernel = R"(
BS_KERNEL_HEAD(@BT@, @MIN_BLOCKS@) @NAME@(@PARAMS@) {
  BS_DECLARE_SMEM(bs_smem);
  const int t = (int)threadIdx.x, lane = t & 31, w = t >> 5;
  const int mw = lane / @N@, i = lane - mw * @N@;  // matrix of the warp (@MPW@: the idle lanes), this lane's row
  const int mb = lane - i;  // the matrix's first lane
  const long long m = (long long)blockIdx.x * @MPB@ + w * @MPW@ + mw;
  const bool act = mw < @MPW@ && m < (long long)count;
  @A_BASE@
  T* const cb0 = (T*)bs_smem + w * @WBUF@ + mb;  // this matrix's part of its warp's two column buffers
  T r[@N@];
@LOAD_LOOP@
@POSV_LOAD@
  int fcol = 0;  // 1-based column of the first bad pivot: columns < it hold L, the rest the Schur complement
#pragma unroll
  for (int k = 0; k < @N@; ++k) {
    const R d = bs_real(bs_shfl(r[k], mb + k));
@POSV_ROW@
    if (fcol == 0 && !bs_pivot_ok(d)) fcol = k + 1;
    const bool live = fcol == 0;
    const R s = @SQRT@(d);
    const R rs = (R)1 / s;
    const T lik = i == k ? bs_from_real(s) : bs_scale(r[k], rs);
    if (live) r[k] = lik;
@POSV_STEP@
    T* const cb = cb0 + (k & 1) * @HALF@;
    cb[i] = lik;
    __syncwarp();
#pragma unroll
    for (int jb = (k + 1) / @VEC@ * @VEC@; jb < @N@; jb += @VEC@) {
      const bs_vec u = BS_VEC_AT(cb + jb);
#pragma unroll
      for (int e = 0; e < @VEC@; ++e)
        if (jb + e > k && live) r[jb + e] = bs_sub_mul_conj(r[jb + e], lik, u.v[e]);
    }
  }
@STORE_LOOP@
  if (act && i == 0) info[m] = fcol;
@POSV_SOLVE@
  (void)zero;
}
)";

// potrf with one row per lane (kRowsKernel): the warp-synchronous register shape of one row per thread
// (rows_per_thread = threads_per_row = 1) at n = 4, 8, 16, 32 (a matrix's lanes a power-of-two part of
// a warp whose buffer part holds whole 16-byte vectors).
bool one_row_per_lane(const ColumnMajorSpec& spec, const ColumnMajorShape& s) {
    if (rows_packed(spec, s.vec)) return true;
    return spec.routine == ColumnMajorRoutine::potrf && !spec.config.staged && warp_synchronous_steps(spec) &&
           s.rows_per_thread == 1 && s.threads_per_row == 1 && (spec.n == 4 || spec.n == 8 || spec.n == 16 || spec.n == 32) &&
           s.block_threads == s.matrices_per_block * spec.n;
}

// The shape, and config.lean_addressing refused where neither the rows kernel nor the square-grid
// kernel runs (no other kernel reads it, and a field that changes nothing would give one text two
// configurations).
Resolved resolve(const ColumnMajorSpec& spec) {
    Resolved out = resolve_shape(spec);
    if (out.problem.empty() && spec.config.lean_addressing && !one_row_per_lane(spec, out.shape) &&
        !square_grid_potrf(spec, out.shape))
        out.problem = "config.lean_addressing: only for the rows kernel (potrf, rows_per_thread = threads_per_row = 1, "
                      "looking = left, n = 4, 8, 16 or 32, n threads per matrix), the packed rows kernel (potrf or posv, "
                      "the same shape, n <= 32 a multiple of the 16-byte vector, matrices_per_block 0) and the "
                      "square-grid kernel (ceil(n / "
                      "rows_per_thread) == threads_per_row >= " + std::to_string(column_major_square_grid_min_side) +
                      "; posv on sides that are multiples of " + std::to_string(column_major_square_grid_posv_side) + ")";
    if (out.problem.empty() && spec.config.compile_time_ld && !square_grid_potrf(spec, out.shape))
        out.problem = "config.compile_time_ld: only for the square-grid kernel (potrf or posv, ceil(n / rows_per_thread) "
                      "== threads_per_row >= " + std::to_string(column_major_square_grid_min_side) +
                      "; posv on sides that are multiples of " + std::to_string(column_major_square_grid_posv_side) + ")";
    return out;
}

// ---- text output ---------------------------------------------------------------------------------

using Writer = codegen::SourceWriter;

std::string I(long long v) { return std::to_string(v); }

class Generator {
public:
    Generator(const ColumnMajorSpec& spec, const ColumnMajorShape& shape)
        : sp_(spec), s_(shape), n_(spec.n), upper_(spec.uplo == Uplo::upper) {
        sqrt_ = is_single(spec.precision) ? "sqrtf" : "sqrt";
    }

    codegen::KernelSource generate() {
        codegen::KernelSource k;
        k.kernel_name = column_major_kernel_name(sp_);
        w_.line("// " + k.kernel_name + ": generated by batchsolve (column_major_codegen.cpp); do not edit.");
        if (is_fused_config(sp_.config)) {  // the interleaved bodies' prelude (idx_t, N) before their text
            w_.raw(interleaved_prelude(sp_.precision, false, n_));
            w_.raw(fused_kernel(sp_, s_, k.kernel_name, min_blocks()));
            host_entry(k.kernel_name);
            k.source = w_.str();
            if (sp_.config.fast_math) k.options.push_back("--use_fast_math");
            return k;
        }
        w_.raw(codegen::kernel_prelude(sp_.precision));
        if (is_shared_memory_config(sp_.config)) w_.raw(shared_memory_kernel(sp_, s_, k.kernel_name, min_blocks()));
        else if (sp_.config.staged) w_.raw(column_major_staged_kernel(sp_, s_, k.kernel_name, min_blocks()));
        else if (sp_.routine == ColumnMajorRoutine::potrs) potrs_kernel(k.kernel_name);
        else if (one_row_per_lane(sp_, s_)) rows_kernel(k.kernel_name);
        else if (square_grid_potrf(sp_, s_))
            w_.raw(square_grid_kernel(sp_, s_, k.kernel_name, sp_.config.max_registers > 0 ? min_blocks() : 0));
        else factor_kernel(k.kernel_name);
        host_entry(k.kernel_name);
        k.source = w_.str();
        if (sp_.config.fast_math) k.options.push_back("--use_fast_math");
        // max_registers becomes the minimum-blocks argument of __launch_bounds__ (nvcc ignores
        // --maxrregcount for kernels that declare launch bounds)
        return k;
    }

private:
    // Blocks per SM that __launch_bounds__ asks for: enough to cap registers at max_registers.
    int min_blocks() const {
        if (sp_.config.max_registers <= 0) return 1;
        return std::max(1, 65536 / (s_.block_threads * sp_.config.max_registers));
    }
    void line(const std::string& t) { w_.line(t); }
    void open(const std::string& t, const std::string& comment = "") { w_.open(t, comment); }
    void close(const std::string& t = "") { w_.close(t); }
    // A fully unrolled loop over `var` in [lo, hi) (a literal trip count; nvcc unrolls it completely,
    // so register arrays indexed by `var` stay in registers).
    void for_open(const std::string& var, long long lo, long long hi, long long step = 1) {
        line("#pragma unroll");
        open("for (int " + var + " = " + I(lo) + "; " + var + " < " + I(hi) + "; " + var + " += " + I(step) + ")");
    }

    void rows_kernel(const std::string& name) {
        if (rows_packed(sp_, s_.vec)) return rows_packed_kernel(name);
        const std::string N = I(n_);
        std::string base, load, store;
        if (!sp_.config.lean_addressing) {  // one 64-bit offset per element from the matrix's base
            const std::string lower_at = "A[(long long)j * lda + i]", upper_at = "A[(long long)i * lda + j]";
            base = "T* const A = act ? (a_ptrs ? a_ptrs[m] : a + m * a_stride) : (T*)0;";
            load = "#pragma unroll\n  for (int j = 0; j < " + N + "; ++j) r[j] = (act && i >= j) ? " +
                   (upper_ ? "bs_conj(" + upper_at + ")" : lower_at) + " : bs_zero();";
            store = "#pragma unroll\n  for (int j = 0; j < " + N + "; ++j)\n    if (act && i >= j) " +
                    (upper_ ? upper_at + " = bs_conj(r[j])" : lower_at + " = r[j]") + ";";
        } else if (!upper_) {  // lean, lower: the lane's row, one pointer stepped by lda over the columns
            base = "T* const A = (act ? (a_ptrs ? a_ptrs[m] : a + m * a_stride) : a) + i;  // this lane's row";
            const std::string walk = "  {  // one pointer stepped by lda, opaque so that no column's address is held\n"
                                     "    T* p = A;\n#pragma unroll\n    for (int j = 0; j < " + N + "; ++j) {\n      ";
            load = walk + "r[j] = (act && i >= j) ? *p : bs_zero();\n      p += lda;\n      BS_OPAQUE_I64(p);\n    }\n  }";
            store = walk + "if (act && i >= j) *p = r[j];\n      p += lda;\n      BS_OPAQUE_I64(p);\n    }\n  }";
        } else {  // lean, upper: the lane's row of U^H is column i of U, contiguous: compile-time offsets
            base = "T* const A = act ? (a_ptrs ? a_ptrs[m] : a + m * a_stride) + (long long)i * lda : a;  // column i of U";
            load = "#pragma unroll\n  for (int j = 0; j < " + N + "; ++j) r[j] = (act && i >= j) ? bs_conj(A[j]) : bs_zero();";
            store = "#pragma unroll\n  for (int j = 0; j < " + N + "; ++j)\n    if (act && i >= j) A[j] = bs_conj(r[j]);";
        }
        w_.raw(fill_placeholders(kRowsKernel, {{"NAME", name},
                                               {"BT", I(s_.block_threads)},
                                               {"MIN_BLOCKS", I(rows_min_blocks())},
                                               {"N", N},
                                               {"MPB", I(s_.matrices_per_block)},
                                               {"VEC", I(s_.vec)},
                                               {"SQRT", sqrt_},
                                               {"A_BASE", base},
                                               {"LOAD_LOOP", load},
                                               {"STORE_LOOP", store}}));
    }
    void rows_packed_kernel(const std::string& name) {
        const std::string N = I(n_);
        const bool posv = sp_.routine == ColumnMajorRoutine::posv;
        const int mpw = 32 / n_, half = rows_packed_half(n_, s_.vec);
        const int pitch = rows_packed_pitch(n_, s_.vec, s_.words), region = rows_packed_region(n_, s_.vec, s_.words);
        std::string params = "T* a, T* const* a_ptrs, long long a_stride, int lda, ";
        if (posv) params += "T* b, T* const* b_ptrs, long long b_stride, int ldb, int nrhs, int ngroups, ";
        params += "int* info, int count, int zero";
        std::string base, load, store;
        if (!upper_) {  // the lane's row, one pointer stepped by lda over the columns
            base = "T* const A = (act ? (a_ptrs ? a_ptrs[m] : a + m * a_stride) : a) + i;  // this lane's row";
            const std::string walk = "  {  // one pointer stepped by lda, opaque so that no column's address is held\n"
                                     "    T* p = A;\n#pragma unroll\n    for (int j = 0; j < " + N + "; ++j) {\n      ";
            load = walk + "r[j] = (act && i >= j) ? *p : bs_zero();\n      p += lda;\n      BS_OPAQUE_I64(p);\n    }\n  }";
            store = walk + "if (act && i >= j) *p = r[j];\n      p += lda;\n      BS_OPAQUE_I64(p);\n    }\n  }";
        } else {  // the lane's row of U^H is column i of U, contiguous: compile-time offsets
            base = "T* const A = act ? (a_ptrs ? a_ptrs[m] : a + m * a_stride) + (long long)i * lda : a;  // column i of U";
            load = "#pragma unroll\n  for (int j = 0; j < " + N + "; ++j) r[j] = (act && i >= j) ? bs_conj(A[j]) : bs_zero();";
            store = "#pragma unroll\n  for (int j = 0; j < " + N + "; ++j)\n    if (act && i >= j) A[j] = bs_conj(r[j]);";
        }
        std::string pload, prow, pstep, psolve;
        if (posv) {
            pload = "  T* const Bm = act && nrhs > 0 ? (b_ptrs ? b_ptrs[m] : b + m * b_stride) : (T*)0;\n"
                    "  T z = Bm ? Bm[i] : bs_zero();  // row i of the first right-hand side, forward-substituted below\n"
                    "  R dinv = (R)0;  // 1 / l_ii";
            prow = "    const T zk = bs_shfl(z, mb + k);  // b_k, final: every earlier step applied";
            pstep = "    {\n      const T yk = bs_scale(zk, rs);\n"
                    "      if (i == k) z = yk, dinv = rs;\n"
                    "      else if (i > k) z = bs_sub_mul(z, lik, yk);\n    }";
            // backward substitution of v (L^H x = y): x_k by a shuffle, l_ki from row k in shared memory
            auto backward = [&](const std::string& v, const std::string& ind, bool unroll) {
                return ind + (unroll ? "#pragma unroll\n" : "#pragma unroll 1\n") + ind + "for (int k = " + I(n_ - 1) + "; k >= 0; --k) {\n" +
                       (unroll ? ind + "  if ((k & " + I(column_major_rows_solve_ahead - 1) + ") == 0) BS_FENCE();  // at most " +
                                     I(column_major_rows_solve_ahead) + " rows of L loaded ahead\n"
                               : std::string()) +
                       ind + "  if (i == k) " + v + " = bs_scale(" + v + ", dinv);\n" + ind + "  const T xk = bs_shfl(" + v +
                       ", mb + k);\n" + ind + "  if (i < k) " + v + " = bs_sub_conj_mul(" + v + ", lt[k * " + I(pitch) +
                       " + i], xk);\n" + ind + "}\n";
            };
            std::ostringstream o;
            o << "  // the rows of L in shared memory (the idle lanes read the warp's first region and write none)\n"
              << "  T* const lt = (T*)(bs_smem + " << s_.off_packed << ") + (w * " << mpw << " + (mw < " << mpw
              << " ? mw : 0)) * " << region << ";\n"
              << "  if (nrhs > 0) {\n"
              << "    if (mw < " << mpw << ") {\n"
              << "#pragma unroll\n"
              << "      for (int jb = 0; jb < " << n_ << "; jb += " << s_.vec << ") {\n"
              << "        bs_vec v;\n"
              << "#pragma unroll\n"
              << "        for (int e = 0; e < " << s_.vec << "; ++e) v.v[e] = r[jb + e];\n"
              << "        *reinterpret_cast<bs_vec*>(lt + i * " << pitch << " + jb) = v;\n"
              << "      }\n"
              << "    }\n"
              << "    __syncwarp();\n"
              << backward("z", "    ", true)
              << "    if (act && fcol == 0) Bm[i] = z;\n"
              << "  }\n"
              << "  // further right-hand sides: forward with the lane's row of L read back from A (this lane's own\n"
              << "  // stores, so no barrier), backward as above; loops, not unrolled: unrolled, their addresses\n"
              << "  // were computed ahead and held, 22 registers more for the whole kernel at s n = 12\n"
              << "  for (int c = 1; c < nrhs; ++c) {\n"
              << "    T v = act ? Bm[(long long)c * ldb + i] : bs_zero();\n"
              << (upper_ ? "" : "    const T* p = A;\n")
              << "#pragma unroll 1\n"
              << "    for (int k = 0; k < " << n_ << "; ++k) {\n"
              << "      if (i == k) v = bs_scale(v, dinv);\n"
              << "      const T yk = bs_shfl(v, mb + k);\n"
              << (upper_ ? "      if (act && i > k) v = bs_sub_mul(v, bs_conj(A[k]), yk);\n"
                         : "      if (act && i > k) v = bs_sub_mul(v, *p, yk);\n      p += lda;\n")
              << "    }\n"
              << backward("v", "    ", false)
              << "    if (act && fcol == 0) Bm[(long long)c * ldb + i] = v;\n"
              << "  }\n"
              << "  (void)ngroups;";
            psolve = o.str();
        }
        w_.raw(fill_placeholders(kRowsPackedKernel, {{"NAME", name},
                                                     {"PARAMS", params},
                                                     {"BT", I(s_.block_threads)},
                                                     {"MIN_BLOCKS", I(rows_min_blocks())},
                                                     {"N", N},
                                                     {"MPW", I(mpw)},
                                                     {"MPB", I(s_.matrices_per_block)},
                                                     {"WBUF", I(2 * half)},
                                                     {"HALF", I(half)},
                                                     {"VEC", I(s_.vec)},
                                                     {"SQRT", sqrt_},
                                                     {"A_BASE", base},
                                                     {"LOAD_LOOP", load},
                                                     {"STORE_LOOP", store},
                                                     {"POSV_LOAD", pload},
                                                     {"POSV_ROW", prow},
                                                     {"POSV_STEP", pstep},
                                                     {"POSV_SOLVE", psolve}}));
    }
    // The rows kernel's minimum blocks: with lean_addressing and no max_registers, 0, which leaves the
    // register count to ptxas as a plain __launch_bounds__(threads) does (an explicit 1 made it
    // allocate 82 instead of 66 registers at s n = 32 with the plain addressing, CUDA 13.0)
    int rows_min_blocks() const { return sp_.config.lean_addressing && sp_.config.max_registers <= 0 ? 0 : min_blocks(); }

    // ---- potrf / posv --------------------------------------------------------------------------
    void factor_kernel(const std::string& name) {
        const bool posv = sp_.routine == ColumnMajorRoutine::posv;
        const int RA = s_.rows_per_thread, TC = s_.threads_per_row, TR = s_.row_threads, RB = s_.cols_per_thread;
        const int P = s_.threads_per_matrix, MPB = s_.matrices_per_block, pitch = s_.col_pitch;
        const long long NT = (long long)n_ * (n_ + 1) / 2;
        std::string params = "T* a, T* const* a_ptrs, long long a_stride, int lda, ";
        if (posv) params += "T* b, T* const* b_ptrs, long long b_stride, int ldb, int nrhs, int ngroups, ";
        params += "int* info, int count, int zero";
        line("BS_KERNEL_HEAD(" + I(s_.block_threads) + ", " + I(min_blocks()) + ") " + name + "(" + params + ")");
        open("");
        line("BS_DECLARE_SMEM(bs_smem);");
        line("const int t = (int)threadIdx.x;");
        line("const int ml = t / " + I(P) + ";  // matrix slot in the block (slots >= " + I(MPB) +
             " hold padding threads)");
        line("const int q = t - ml * " + I(P) + ";");
        line("const int tr = q % " + I(TR) + ";");
        line("const int tc = q / " + I(TR) + ";");
        line("const long long m = (long long)blockIdx.x * " + I(MPB) + " + ml;");
        line("const bool active = ml < " + I(MPB) + " && m < (long long)count;");
        line("const int nact = active ? " + I(n_) + " : 0;  // rows/columns this thread may touch in memory");
        line("T* const A = active ? (a_ptrs ? a_ptrs[m] : a + m * a_stride) : (T*)0;");
        line("T* const colA = (T*)(bs_smem + " + I(s_.off_col) + ") + ml * " + I(TC * pitch) + ";");
        line("T* const colB = colA + " + I((long long)s_.slots * TC * pitch) + ";");
        line("R* const dg = (R*)(bs_smem + " + I(s_.off_diag) + ") + ml * " + I(3 * n_) +
             ";  // raw pivots, then sqrt and 1/sqrt");
        if (s_.packed)
            line("T* const pk = (T*)(bs_smem + " + I(s_.off_packed) + ") + (ml < " + I(MPB) + " ? ml : 0) * " +
                 I(NT) + ";  // packed rows of L");
        if (posv) line("int* const flags = (int*)(bs_smem + " + I(s_.off_flags) + ");");
        line("const int cbase = tc * " + I(pitch) + ";");
        line("const int imax = tr + " + I(TR * (RA - 1)) + ";  // largest row of this thread");
        line("int ri[" + I(RA) + "], rpos[" + I(RA) + "];");
        for_open("aa", 0, RA);
        line("ri[aa] = tr + " + I(TR) + " * aa;");
        if (TC == 1) line("rpos[aa] = ri[aa];");
        else line("rpos[aa] = (ri[aa] % " + I(TC) + ") * " + I(pitch) + " + ri[aa] / " + I(TC) + ";");
        close();
        line("T x[" + I(RA) + "][" + I(RB) + "];");

        // ---- load ----
        if (!upper_) {
            line("// lower: lanes with consecutive tr read consecutive rows of one column (coalesced)");
            for_open("aa", 0, RA);
            for_open("bb", 0, RB);
            line("const int j = tc + " + I(TC) + " * bb;");
            line("x[aa][bb] = (ri[aa] < nact && j <= ri[aa]) ? A[(long long)j * lda + ri[aa]] : bs_zero();");
            close();
            close();
        } else {
            line("// upper: column c of A (rows 0..c) is row c of L^H; copy it coalesced into packed rows");
            open("if (active)");
            packed_walk_open("q", P);
            line("pk[e] = bs_conj(A[(long long)c * lda + r]);");
            packed_walk_close(P);
            close();
            line("__syncthreads();");
            for_open("aa", 0, RA);
            line("const int tri = ri[aa] * (ri[aa] + 1) / 2;");
            for_open("bb", 0, RB);
            line("const int j = tc + " + I(TC) + " * bb;");
            line("x[aa][bb] = (ri[aa] < nact && j <= ri[aa]) ? pk[tri + j] : bs_zero();");
            close();
            close();
        }

        if (posv) {
            const int NRB = s_.rhs_per_thread, NR = s_.nrhs_block;
            line("// the first " + I(NR) + " right-hand sides ride along: forward substitution fused into the elimination");
            line("const int nf = active ? (nrhs < " + I(NR) + " ? nrhs : " + I(NR) + ") : 0;");
            line("T* const Bf = nf > 0 ? (b_ptrs ? b_ptrs[m] : b + m * b_stride) : (T*)0;");
            line("T* const rowA = (T*)(bs_smem + " + I(s_.off_rows) + ") + ml * " + I(TC * NRB) + ";");
            line("T* const rowB = rowA + " + I((long long)s_.slots * TC * NRB) + ";");
            line("T bz[" + I(RA) + "][" + I(NRB) + "];");
            for_open("aa", 0, RA);
            for_open("c", 0, NRB);
            line("const int r = tc + " + I(TC) + " * c;");
            line("bz[aa][c] = (ri[aa] < nact && r < nf) ? Bf[(long long)r * ldb + ri[aa]] : bs_zero();");
            close();
            close();
        }

        // ---- elimination ----
        line("bool failed = false;");
        line("int fcol = 0;  // 1-based column of the first bad pivot");
        elimination();

        // ---- scaling: column j becomes L(:, j) ----
        line("__syncthreads();");
        open("for (int j = q; j < " + I(n_) + "; j += " + I(P) + ")");
        line("const R d = " + sqrt_ + "(dg[j]);");
        line("dg[" + I(n_) + " + j] = d;");
        line("dg[" + I(2 * n_) + " + j] = (R)1 / d;");
        close();
        line("__syncthreads();");
        line("const int jlim = failed ? fcol - 1 : " + I(n_) + ";  // a failed matrix keeps its raw columns >= jlim");
        line("R dii[" + I(RA) + "];  // sqrt of the pivot of each own row (used where the row meets its column)");
        for_open("aa", 0, RA);
        line("dii[aa] = dg[" + I(n_) + " + (ri[aa] < " + I(n_) + " ? ri[aa] : 0)];");
        close();
        if (s_.packed) {
            line("int tri[" + I(RA) + "];");
            for_open("aa", 0, RA);
            line("tri[aa] = ri[aa] * (ri[aa] + 1) / 2;");
            close();
        }
        if (!upper_) {
            // element offsets advanced column by column (and hidden from the optimiser) rather than
            // n addresses computed up front and held in registers
            line("long long so[" + I(RA) + "];");
            for_open("aa", 0, RA);
            line("so[aa] = (long long)tc * lda + ri[aa];");
            close();
            line("const long long sstep = (long long)" + I(TC) + " * lda;");
        }
        // scale and store chunk by chunk; each chunk's scale factors are loaded after the previous
        // chunk is done (address dependency through `zero`), so few are live at a time
        for (int b0 = 0; b0 < RB; b0 += s_.update_chunk) {
            const int b1 = std::min(RB, b0 + s_.update_chunk);
            const std::string dep = b0 == 0 ? "" : " + (bs_bits(x[" + I(RA - 1) + "][" + I(b0 - 1) + "]) & zero)";
            open("", "columns " + I(b0) + ".." + I(b1 - 1) + " of this thread");
            line("R f[" + I(b1 - b0) + "];");
            for_open("bb", b0, b1);
            line("const int j = tc + " + I(TC) + " * bb;");
            line("f[bb - " + I(b0) + "] = dg[" + I(2 * n_) + " + (j < " + I(n_) + " ? j : 0)" + dep + "];");
            close();
            for_open("bb", b0, b1);
            line("const int j = tc + " + I(TC) + " * bb;");
            for_open("aa", 0, RA);
            open("if (j < jlim)");
            line("x[aa][bb] = ri[aa] == j ? bs_from_real(dii[aa]) : bs_scale(x[aa][bb], f[bb - " + I(b0) + "]);");
            close();
            if (!upper_) {
                line("if (ri[aa] < nact && j <= ri[aa]) A[so[aa]] = x[aa][bb];");
                line("so[aa] += sstep;");
                line("BS_OPAQUE_I64(so[aa]);");
            }
            if (s_.packed)
                line("if (ml < " + I(MPB) + " && ri[aa] < " + I(n_) + " && j <= ri[aa]) pk[tri[aa] + j] = x[aa][bb];");
            close();
            close();
            close();
        }
        if (posv) {
            const int NRB = s_.rhs_per_thread, NR = s_.nrhs_block;
            line("// y = D^(-1/2) z: the forward solution of the fused right-hand sides, for the solve phase");
            line("T* const yb = (T*)(bs_smem + " + I(s_.off_y) + ") + (ml < " + I(MPB) + " ? ml : 0) * " + I(n_ * NR) + ";");
            for_open("aa", 0, RA);
            line("const R f = dg[" + I(2 * n_) + " + (ri[aa] < " + I(n_) + " ? ri[aa] : 0)];");
            for_open("c", 0, NRB);
            line("const int r = tc + " + I(TC) + " * c;");
            line("if (!failed && ml < " + I(MPB) + " && ri[aa] < " + I(n_) + " && r < " + I(NR) + ") yb[r * " + I(n_) +
                 " + ri[aa]] = bs_scale(bz[aa][c], f);");
            close();
            close();
        }
        if (s_.packed) {
            if (posv) line("if (q == 0 && ml < " + I(MPB) + ") flags[ml] = active ? fcol : -1;");
            line("__syncthreads();");
        }
        if (upper_) {
            open("if (active)");
            packed_walk_open("q", P);
            line("A[(long long)c * lda + r] = bs_conj(pk[e]);");
            packed_walk_close(P);
            close();
        }
        line("if (active && q == 0) info[m] = fcol;");

        if (posv) posv_solve();
        close();  // kernel
    }

    // Walk over the packed triangle (row c of L, column r <= c, index e = c (c + 1) / 2 + r) with
    // stride `step`, starting at `first`: consecutive e are consecutive r of one column of A^H.
    void packed_walk_open(const std::string& first, int step) {
        line("int c = 0, r = " + first + ";");
        line("while (r > c) { r -= c + 1; ++c; }");
        open("for (int e = " + first + "; e < " + I((long long)n_ * (n_ + 1) / 2) + "; e += " + I(step) + ")");
    }
    void packed_walk_close(int step) {
        line("r += " + I(step) + ";");
        line("while (r > c) { r -= c + 1; ++c; }");
        close();
    }

    struct Chunk {
        int lo = 0, hi = 0;   // columns-per-thread index range updated
        int vs = 0, ve = 0;   // vector-aligned range loaded
        std::string jmin;     // smallest column index of the chunk for this thread
        std::string guard_first;  // run-time condition for the first element ("" = none)
        bool guard_all = false;   // every element needs "column > k" (the block's own chunk)
    };
    // Loads a chunk's column values. `after` (optional) names a register the load must wait for:
    // its bits ANDed with the kernel argument `zero` (always 0) offset the address, a dependency the
    // assembler cannot see through, so it cannot hoist every chunk's loads to the top of the step
    // (which costs as many registers as the step has columns).
    void load_chunk(const Chunk& c, const std::string& cv, const std::string& after = "") {
        const int V = s_.vec;
        const std::string dep = after.empty() ? "" : " + (bs_bits(" + after + ") & zero)";
        for_open("v", 0, c.ve - c.vs, V);
        line("const bs_vec u = BS_VEC_AT(cb + cbase + " + I(c.vs) + " + v" + dep + ");");
        for_open("e", 0, V);
        line(cv + "[v + e] = u.v[e];");
        close();
        close();
    }

    // The elimination: fully unrolled (one straight-line step per column; config.full_unroll) or a
    // static sequence of column blocks (update_chunk columns per thread each) with a run-time loop
    // over the steps inside a block. The blocked form keeps the code (and compile time) about
    // update_chunk times smaller; its steps pick the published column with a short select chain
    // and guard the update of their own block element by element.
    void elimination() {
        const int TC = s_.threads_per_row, RB = s_.cols_per_thread, CH = s_.update_chunk;
        if (sp_.config.full_unroll) {
            for (int k = 0; k < n_; ++k) step(k, 0, 0);
            return;
        }
        for (int b0 = 0; b0 < RB; b0 += CH) {
            const int b1 = std::min(RB, b0 + CH);
            const int k0 = b0 * TC, k1 = std::min(n_, b1 * TC);
            if (k0 >= k1) break;
            open("for (int k = " + I(k0) + "; k < " + I(k1) + "; ++k)", "steps of column block " + I(b0 / CH));
            step(-1, b0, b1);
            close();
        }
    }

    // One right-looking step: k >= 0 a literal step; k < 0 the run-time step `k` of the block of
    // per-thread columns [b0, b1).
    void step(int k, int b0, int b1) {
        const int RA = s_.rows_per_thread, TC = s_.threads_per_row, RB = s_.cols_per_thread;
        const int pitch = s_.col_pitch, CH = s_.update_chunk, V = s_.vec;
        const bool lit = k >= 0;
        const std::string K = lit ? I(k) : "k";
        if (lit) open("", "step " + I(k));
        line(std::string("T* const cb = ") + (lit ? (k % 2 == 0 ? "colA" : "colB") : "(k & 1) ? colB : colA") + ";");
        // publish column k (raw); rows < k write stale values nobody reads
        if (TC > 1) open("if (tc == " + (lit ? I(k % TC) : "k % " + I(TC)) + ")");
        if (lit) {
            for_open("aa", 0, RA);
            line("cb[rpos[aa]] = x[aa][" + I(k / TC) + "];");
            close();
        } else {
            line("const int bl = k / " + I(TC) + " - " + I(b0) + ";  // the published column in this block");
            for_open("aa", 0, RA);
            line("T pv = x[aa][" + I(b0) + "];");
            for (int e = 1; b0 + e < b1; ++e) line("pv = bl == " + I(e) + " ? x[aa][" + I(b0 + e) + "] : pv;");
            line("cb[rpos[aa]] = pv;");
            close();
        }
        if (TC > 1) close();
        const bool posv = sp_.routine == ColumnMajorRoutine::posv;
        const int NRB = s_.rhs_per_thread;
        if (posv) {  // row k of the fused right-hand sides (final: every earlier step is applied)
            line(std::string("T* const rb = ") + (lit ? (k % 2 == 0 ? "rowA" : "rowB") : "(k & 1) ? rowB : rowA") + ";");
            open("if (tr == " + (lit ? I(k % s_.row_threads) : "k % " + I(s_.row_threads)) + ")");
            for_open("c", 0, NRB);
            if (lit) {
                line("rb[tc + " + I(TC) + " * c] = bz[" + I(k / s_.row_threads) + "][c];");
            } else {
                line("T pb = bz[0][c];");
                for (int a = 1; a < RA; ++a) line("pb = k / " + I(s_.row_threads) + " == " + I(a) + " ? bz[" + I(a) + "][c] : pb;");
                line("rb[tc + " + I(TC) + " * c] = pb;");
            }
            close();
            close();
        }
        // each matrix's threads in one warp (warp_synchronous_steps): the exchange is the warp's alone
        line(warp_synchronous_steps(sp_) ? "__syncwarp();" : "__syncthreads();");
        line("const R akk = bs_real(cb[" + (lit ? I((k % TC) * pitch + k / TC) : "(k % " + I(TC) + ") * " + I(pitch) + " + k / " + I(TC)) + "]);");
        line("if (q == 0) dg[" + K + "] = akk;");
        open("if (!failed)");
        open("if (!bs_pivot_ok(akk))");
        line("failed = true;");
        line("fcol = " + K + " + 1;");
        close();
        open("else");
        line("const R rk = (R)1 / akk;");
        line("T s[" + I(RA) + "];");
        for_open("aa", 0, RA);
        line("s[aa] = bs_scale(cb[rpos[aa]], rk);");
        close();
        if (posv) {  // z_i -= (a_ik / a_kk) z_k for the rows below k
            line("T rbv[" + I(NRB) + "];");
            for_open("c", 0, NRB);
            line("rbv[c] = rb[tc + " + I(TC) + " * c];");
            close();
            for_open("aa", 0, RA);
            open("if (ri[aa] > " + K + ")");
            for_open("c", 0, NRB);
            line("bz[aa][c] = bs_sub_mul(bz[aa][c], s[aa], rbv[c]);");
            close();
            close();
            close();
        }
        std::vector<Chunk> chunks;
        if (lit) {
            const int bk = k / TC;
            const int bfirst = TC == 1 ? k + 1 : bk;
            for (int cs = bfirst / CH * CH; cs < RB; cs += CH) {
                Chunk c;
                c.lo = std::max(cs, bfirst), c.hi = std::min(cs + CH, RB);
                if (c.lo >= c.hi) continue;
                // column tc + TC*bk is right of k only for tc > k % TC
                c.guard_first = TC > 1 && c.lo == bk ? "tc > " + I(k % TC) : "";
                chunks.push_back(c);
            }
        } else {
            Chunk own;  // the block's own columns: right of k element by element
            own.lo = b0, own.hi = b1, own.guard_all = true;
            chunks.push_back(own);
            for (int cs = b1; cs < RB; cs += CH) {
                Chunk c;
                c.lo = cs, c.hi = std::min(cs + CH, RB);
                chunks.push_back(c);
            }
        }
        for (Chunk& c : chunks) {
            c.vs = c.lo / V * V, c.ve = round_up(c.hi, V);
            c.jmin = TC == 1 ? I(c.lo) : "tc + " + I(TC * c.lo);
        }
        // Software pipeline over the chunks: the next chunk's column values are loaded before this
        // chunk's update, and a fence stops the compiler front end from hoisting all of them.
        // A chunk's guard implies the previous one's (jmin grows), hence the nesting.
        for (std::size_t ci = 0; ci < chunks.size(); ++ci)
            line("T cv" + I(ci) + "[" + I(chunks[ci].ve - chunks[ci].vs) + "];");
        for (std::size_t ci = 0; ci < chunks.size(); ++ci) {
            const Chunk& c = chunks[ci];
            open("if (" + c.jmin + " <= imax)", "columns " + I(c.lo) + ".." + I(c.hi - 1) + " of this thread");
            if (ci == 0) load_chunk(c, "cv0");
            if (ci + 1 < chunks.size()) {
                open("if (" + chunks[ci + 1].jmin + " <= imax)");
                // chunk ci+1 is loaded once chunk ci-1 is done, so it overlaps the update of chunk ci
                load_chunk(chunks[ci + 1], "cv" + I(ci + 1),
                           ci == 0 ? "" : "x[" + I(RA - 1) + "][" + I(chunks[ci - 1].hi - 1) + "]");
                close();
            }
            line("BS_FENCE();");
            const std::string cv = "cv" + I(ci);
            if (c.guard_all) {
                // The block's own columns left of k must stay as they are: their column values are
                // zeroed (x - s * 0 is x), which keeps the update free of per-element branches (a
                // per-element guard makes the compiler split the step loop and costs registers).
                for_open("bb", c.lo, c.hi);
                line("if (!(tc + " + I(TC) + " * bb > k)) " + cv + "[bb - " + I(c.vs) + "] = bs_zero();");
                close();
            }
            const std::string upd = "x[aa][bb] = bs_sub_mul_conj(x[aa][bb], s[aa], " + cv + "[bb - " + I(c.vs) + "]);";
            for_open("aa", 0, RA);
            if (RA > 1) open("if (" + c.jmin + " <= ri[aa])");
            int start = c.lo;
            if (!c.guard_first.empty()) {
                line("if (" + c.guard_first + ") x[aa][" + I(c.lo) + "] = bs_sub_mul_conj(x[aa][" + I(c.lo) +
                     "], s[aa], " + cv + "[" + I(c.lo - c.vs) + "]);");
                start = c.lo + 1;
            }
            if (start < c.hi) {
                for_open("bb", start, c.hi);
                line(upd);
                close();
            }
            if (RA > 1) close();
            close();
        }
        for (std::size_t ci = 0; ci < chunks.size(); ++ci) close();
        close();  // else
        close();  // !failed
        if (lit) close();  // step
    }

    // Second phase of posv: solve with the packed factor of the block's matrices in shared memory.
    // Group 0 of the right-hand sides was forward-substituted during the elimination and only needs
    // the backward pass; further groups (nrhs > nrhs_block) run both. Each loop has the same trip
    // count for every lane, so shuffles always see full warps.
    void posv_solve() {
        const int L = s_.seg_lanes, NR = s_.nrhs_block, NSEG = s_.segments_per_block, MPB = s_.matrices_per_block;
        const long long NT = (long long)n_ * (n_ + 1) / 2;
        line("// ---- solve: one segment of " + I(L) + " lanes per (matrix, group of " + I(NR) +
             " right-hand sides) ----");
        open("");
        line("const int seg = t / " + I(L) + ";");
        line("const int l = t - seg * " + I(L) + ";");
        for (int phase = 0; phase < 2; ++phase) {
            const bool fused = phase == 0;
            line(fused ? "// group 0: backward substitution of the fused right-hand sides"
                       : "// groups 1.. (nrhs > nrhs_block): forward and backward substitution");
            line(std::string("const long long tasks") + I(phase) + " = " +
                 (fused ? "ngroups > 0 ? " + I(MPB) + " : 0;" : "ngroups > 1 ? (long long)" + I(MPB) + " * (ngroups - 1) : 0;"));
            open("for (long long task = seg; task < tasks" + I(phase) + " + " + I(NSEG) + " - 1 - (tasks" + I(phase) +
                 " + " + I(NSEG) + " - 1) % " + I(NSEG) + "; task += " + I(NSEG) + ")");
            line("const bool in_range = task < tasks" + I(phase) + ";");
            if (fused) {
                line("const int tm = in_range ? (int)task : 0;");
                line("const int g = 0;");
            } else {
                line("const int tm = in_range ? (int)(task / (ngroups - 1)) : 0;");
                line("const int g = in_range ? 1 + (int)(task % (ngroups - 1)) : 0;");
            }
            line("const long long mm = (long long)blockIdx.x * " + I(MPB) + " + tm;");
            line("const bool valid = in_range && mm < (long long)count && flags[tm] == 0;");
            line("const int nv = valid ? " + I(n_) + " : 0;");
            line("const int r0 = g * " + I(NR) + ";");
            line("const int ncols = valid ? (nrhs - r0 < " + I(NR) + " ? nrhs - r0 : " + I(NR) + ") : 0;");
            line("T* const Bm = valid ? (b_ptrs ? b_ptrs[mm] : b + mm * b_stride) : (T*)0;");
            line("const T* const Lp = (const T*)(bs_smem + " + I(s_.off_packed) + ") + tm * " + I(NT) + ";");
            line("const R* const ivp = (const R*)(bs_smem + " + I(s_.off_diag) + ") + tm * " + I(3 * n_) + " + " +
                 I(2 * n_) + ";");
            if (fused) line("const T* const yb = (const T*)(bs_smem + " + I(s_.off_y) + ") + tm * " + I(n_ * NR) + ";");
            solve_body("Bm", fused ? SolveMode::posv_fused : SolveMode::posv_rest);
            close();
        }
        close();
    }

    // ---- potrs ----------------------------------------------------------------------------------
    void potrs_kernel(const std::string& name) {
        const int L = s_.seg_lanes, NSEG = s_.segments_per_block;
        line("BS_KERNEL_HEAD(" + I(s_.block_threads) + ", " + I(min_blocks()) + ") " + name +
             "(const T* a, const T* const* a_ptrs, long long a_stride, int lda, T* b, T* const* b_ptrs, "
             "long long b_stride, int ldb, int nrhs, int ngroups, int count)");
        open("");
        line("const int t = (int)threadIdx.x;");
        line("const int seg = t / " + I(L) + ";");
        line("const int l = t - seg * " + I(L) + ";");
        line("const long long task = ((long long)blockIdx.y * gridDim.x + blockIdx.x) * " + I(NSEG) + " + seg;");
        line("const long long tasks = (long long)count * ngroups;");
        line("const bool valid = task < tasks;");
        line("const long long mm = valid ? task / ngroups : 0;");
        line("const int g = valid ? (int)(task % ngroups) : 0;");
        line("const int nv = valid ? " + I(n_) + " : 0;");
        line("const int r0 = g * " + I(s_.nrhs_block) + ";");
        line("const int ncols = valid ? (nrhs - r0 < " + I(s_.nrhs_block) + " ? nrhs - r0 : " + I(s_.nrhs_block) +
             ") : 0;");
        line("const T* const Am = valid ? (a_ptrs ? a_ptrs[mm] : a + mm * a_stride) : (const T*)0;");
        line("T* const Bm = valid ? (b_ptrs ? b_ptrs[mm] : b + mm * b_stride) : (T*)0;");
        solve_body("Bm", SolveMode::potrs);
        close();
    }

    enum class SolveMode {
        potrs,       // factor in global memory (stored triangle of uplo), B in global memory
        posv_fused,  // packed lower factor in shared memory, y (forward done) in shared memory
        posv_rest    // packed lower factor in shared memory, B in global memory
    };

    // Loads the right-hand sides, runs the passes, stores X. Needs l, nv, ncols, r0 and Am/lda
    // (potrs) or Lp/ivp (posv; yb for the fused group).
    void solve_body(const std::string& B, SolveMode mode) {
        const int L = s_.seg_lanes, RS = s_.seg_rows, NR = s_.nrhs_block;
        const bool global_factor = mode == SolveMode::potrs;
        line("int ri[" + I(RS) + "];");
        for_open("a_", 0, RS);
        line("ri[a_] = l + " + I(L) + " * a_;");
        close();
        if (global_factor) {
            line("R rinv[" + I(RS) + "];  // 1 / diagonal of the rows this lane owns");
            for_open("a_", 0, RS);
            line("rinv[a_] = ri[a_] < nv ? (R)1 / bs_real(Am[(long long)ri[a_] * lda + ri[a_]]) : (R)0;");
            close();
        } else {
            line("int tri[" + I(RS) + "];");
            for_open("a_", 0, RS);
            line("tri[a_] = ri[a_] * (ri[a_] + 1) / 2;");
            close();
        }
        line("T v[" + I(RS) + "][" + I(NR) + "];");
        for_open("a_", 0, RS);
        for_open("r_", 0, NR);
        if (mode == SolveMode::posv_fused)
            line("v[a_][r_] = (ri[a_] < nv && r_ < ncols) ? yb[r_ * " + I(n_) + " + ri[a_]] : bs_zero();");
        else
            line("v[a_][r_] = (ri[a_] < nv && r_ < ncols) ? " + B + "[(long long)(r0 + r_) * ldb + ri[a_]] : bs_zero();");
        close();
        close();

        if (global_factor) {
            // column k of the stored triangle, row ri[a]
            auto elem = [&](int a, const std::string& k) { return "Am[(long long)" + k + " * lda + ri[" + I(a) + "]]"; };
            auto rinv = [&](int ak, const std::string&) { return "rinv[" + I(ak) + "]"; };
            // potrs is bound by memory and latency is hidden by many warps: plain steps, few registers
            if (!upper_) {
                pass("f", /*axpy=*/true, /*ascending=*/true, /*below=*/true, false, elem, rinv);    // L y = b
                pass("b", /*axpy=*/false, /*ascending=*/false, /*below=*/true, false, elem, rinv);  // L^H x = y
            } else {
                pass("f", /*axpy=*/false, /*ascending=*/true, /*below=*/false, false, elem, rinv);  // U^H y = b
                pass("b", /*axpy=*/true, /*ascending=*/false, /*below=*/false, false, elem, rinv);  // U x = y
            }
        } else {
            // packed rows of L in shared memory: column k at tri(i) + k, row k at tri(k) + j; both
            // passes are axpy steps (one shuffle per column, no reductions)
            // forward: L(row, k) at tri(row) + k; backward: conj(L(k, row)) at tri(k) + row
            auto column = [&](int a, const std::string& row, const std::string& k) {
                if (a >= 0) return "Lp[tri[" + I(a) + "] + " + k + "]";
                return "Lp[(" + row + ") * (" + row + " + 1) / 2 + " + k + "]";
            };
            auto row_of_k = [&](int, const std::string& row, const std::string& k) {
                return "Lp[(" + k + ") * (" + k + " + 1) / 2 + (" + row + ")]";
            };
            auto rinv = [&](const std::string& k) { return "ivp[" + k + "]"; };
            if (mode == SolveMode::posv_rest) axpy_blocked(/*ascending=*/true, false, column, rinv);  // L y = b
            axpy_blocked(/*ascending=*/false, true, row_of_k, rinv);                                 // L^H x = y
        }

        for_open("a_", 0, RS);
        for_open("r_", 0, NR);
        line("if (ri[a_] < nv && r_ < ncols) " + B + "[(long long)(r0 + r_) * ldb + ri[a_]] = v[a_][r_];");
        close();
        close();
    }

    // One substitution pass over the stored columns k (ascending or descending). The rows that column
    // k touches lie below (lower storage) or above (upper storage) the diagonal. The pass is a static
    // sequence of blocks of L columns (the owner row of column k is in register row k / L of lane
    // k % L) with a run-time loop inside each block: small code, and registers stay few. The loop
    // takes the shape's solve_prefetch steps per trip and loads their columns first: the loads do not
    // depend on the unknowns, so a lane has that many columns in flight instead of waiting for global
    // memory at every step (the steps themselves stay in order).
    template <class Elem, class Rinv>
    void pass(const std::string& tag, bool axpy, bool ascending, bool below, bool conj_elem, const Elem& elem,
              const Rinv& rinv) {
        const int L = s_.seg_lanes, RS = s_.seg_rows, NR = s_.nrhs_block;
        line(std::string("// ") + (axpy ? "axpy" : "dot") + " pass, " + (ascending ? "ascending" : "descending"));
        for (int bi = 0; bi < RS; ++bi) {
            const int ak = ascending ? bi : RS - 1 - bi;
            const int width = std::min(L, n_ - ak * L);  // columns in this block
            const int D = std::min(s_.solve_prefetch, width);
            const int a0 = below ? ak : 0, a1 = below ? RS - 1 : ak;
            const std::string base = "s" + tag + I(ak);  // the trip's first column within the block
            if (ascending) open("for (int " + base + " = 0; " + base + " < " + I(width) + "; " + base + " += " + I(D) + ")");
            else open("for (int " + base + " = " + I(width - 1) + "; " + base + " >= 0; " + base + " -= " + I(D) + ")");
            auto src = [&](int d) { return "(" + base + (ascending ? " + " : " - ") + I(d) + ")"; };
            auto kk = [&](int d) { return "k" + tag + I(ak) + "_" + I(d); };
            auto ev = [&](int d, int a) { return "e" + I(d) + "_" + I(a); };
            auto pred = [&](int a, int d) {
                std::string p = "ri[" + I(a) + "] < nv";
                if (a == ak) p += below ? " && ri[" + I(a) + "] > " + kk(d) : " && ri[" + I(a) + "] < " + kk(d);
                return p;
            };
            for (int d = 0; d < D; ++d) {
                const std::string in_block = ascending ? src(d) + " < " + I(width) : src(d) + " >= 0";
                line("const bool in" + I(d) + " = " + (d == 0 ? std::string("true") : in_block) + ";");
                line("const int " + kk(d) + " = " + I(ak * L) + " + " + src(d) + ";");
                for (int a = a0; a <= a1; ++a)
                    line("const T " + ev(d, a) + " = in" + I(d) + " && " + pred(a, d) + " ? " + elem(a, kk(d)) +
                         " : bs_zero();");
            }
            for (int d = 0; d < D; ++d) {
                open("if (in" + I(d) + ")", "step " + src(d));
                if (axpy) {
                    line("T y[" + I(NR) + "];");
                    for_open("r_", 0, NR);
                    line("y[r_] = bs_shfl(bs_scale(v[" + I(ak) + "][r_], " + rinv(ak, kk(d)) + "), " + src(d) + ", " +
                         I(L) + ");");
                    line("if (l == " + src(d) + ") v[" + I(ak) + "][r_] = y[r_];");
                    close();
                    for (int a = a0; a <= a1; ++a) {
                        open("if (" + pred(a, d) + ")");
                        for_open("r_", 0, NR);
                        line("v[" + I(a) + "][r_] = " + (conj_elem ? "bs_sub_conj_mul" : "bs_sub_mul") + "(v[" + I(a) +
                             "][r_], " + ev(d, a) + ", y[r_]);");
                        close();
                        close();
                    }
                } else {
                    line("T acc[" + I(NR) + "];");
                    for_open("r_", 0, NR);
                    line("acc[r_] = bs_zero();");
                    close();
                    for (int a = a0; a <= a1; ++a) {
                        open("if (" + pred(a, d) + ")");  // rows on this side may hold inf/NaN of other unknowns
                        for_open("r_", 0, NR);
                        line("acc[r_] = bs_add_conj_mul(acc[r_], " + ev(d, a) + ", v[" + I(a) + "][r_]);");
                        close();
                        close();
                    }
                    for (int off = L / 2; off >= 1; off /= 2) {
                        for_open("r_", 0, NR);
                        line("acc[r_] = bs_add(acc[r_], bs_shfl_xor(acc[r_], " + I(off) + ", " + I(L) + "));");
                        close();
                    }
                    open("if (l == " + src(d) + ")");
                    for_open("r_", 0, NR);
                    line("v[" + I(ak) + "][r_] = bs_scale(bs_sub(v[" + I(ak) + "][r_], acc[r_]), " + rinv(ak, kk(d)) +
                         ");");
                    close();
                    close();
                }
                close();
            }
            close();
        }
    }

    // An axpy pass (ascending with the rows below, or descending with the rows above) in blocks of
    // m = solve_block() consecutive steps: the m values of a block are gathered with m independent
    // shuffles, every lane solves the small m x m triangle redundantly (its entries are the same
    // for all lanes: broadcast loads), the owner lanes keep their unknowns, and the rows beyond the
    // block take the m updates at once. The dependency chain per block is one shuffle plus m short
    // FMA steps instead of m shuffles. E(a, row, k) is the element that multiplies unknown k in the
    // update of `row` (a >= 0: row is lane row ri[a]); conj_elem applies conj to it; rinv(k) is
    // 1/diag(k) as an expression. Used by posv, whose solve phase runs on a few warps only, so its
    // latency counts.
    template <class Elem, class Rinv>
    void axpy_blocked(bool ascending, bool conj_elem, const Elem& E, const Rinv& rinv_expr) {
        const int L = s_.seg_lanes, RS = s_.seg_rows, NR = s_.nrhs_block, m = solve_block();
        const bool below = ascending;
        const std::string sub = conj_elem ? "bs_sub_conj_mul" : "bs_sub_mul";
        line(std::string("// axpy pass, ") + (ascending ? "ascending" : "descending") + ", blocks of " + I(m) +
             " steps");
        for (int bi = 0; bi < RS; ++bi) {
            const int ak = ascending ? bi : RS - 1 - bi;
            const int width = std::min(L, n_ - ak * L);
            const int nb = (width + m - 1) / m;
            if (ascending) open("for (int hb = 0; hb < " + I(nb) + "; ++hb)");
            else open("for (int hb = " + I(nb - 1) + "; hb >= 0; --hb)");
            line("const int kb = " + I(ak * L) + " + hb * " + I(m) + ";  // lowest column of the block");
            // processing order t = 0..m-1 visits column p(t)
            auto p = [&](int t) { return "kb + " + I(ascending ? t : m - 1 - t); };
            auto lane = [&](int t) { return "hb * " + I(m) + " + " + I(ascending ? t : m - 1 - t); };
            line("T yg[" + I(m) + "][" + I(NR) + "];");
            line("R rg[" + I(m) + "];");
            for (int t = 0; t < m; ++t) {
                for_open("r_", 0, NR);
                line("yg[" + I(t) + "][r_] = bs_shfl(v[" + I(ak) + "][r_], " + lane(t) + ", " + I(L) + ");");
                close();
                line("rg[" + I(t) + "] = " + p(t) + " < " + I(n_) + " ? " + rinv_expr(p(t)) + " : (R)0;");
            }
            // the small triangle, redundantly in every lane
            for (int t = 0; t < m; ++t) {
                for_open("r_", 0, NR);
                line("yg[" + I(t) + "][r_] = bs_scale(yg[" + I(t) + "][r_], rg[" + I(t) + "]);  // unknown p(" + I(t) + ")");
                close();
                for (int u = t + 1; u < m; ++u) {
                    // both columns must exist (the last block of a pass may be partial)
                    open("if (" + p(ascending ? u : t) + " < " + I(n_) + ")");
                    line("const T e = " + E(-1, p(u), p(t)) + ";");
                    for_open("r_", 0, NR);
                    line("yg[" + I(u) + "][r_] = " + sub + "(yg[" + I(u) + "][r_], e, yg[" + I(t) + "][r_]);");
                    close();
                    close();
                }
            }
            line("const int mine = l - hb * " + I(m) + ";  // this lane's place in the block, if any");
            for (int t = 0; t < m; ++t) {
                for_open("r_", 0, NR);
                line("if (mine == " + I(ascending ? t : m - 1 - t) + ") v[" + I(ak) + "][r_] = yg[" + I(t) + "][r_];");
                close();
            }
            // rows beyond the block
            const int a0 = below ? ak : 0, a1 = below ? RS - 1 : ak;
            for (int a = a0; a <= a1; ++a) {
                std::string pred = "ri[" + I(a) + "] < nv";
                if (a == ak) pred += below ? " && ri[" + I(a) + "] >= kb + " + I(m) : " && ri[" + I(a) + "] < kb";
                open("if (" + pred + ")");
                for (int t = 0; t < m; ++t) {
                    open("if (" + p(t) + " < " + I(n_) + ")");
                    line("const T e = " + E(a, "ri[" + I(a) + "]", p(t)) + ";");
                    for_open("r_", 0, NR);
                    line("v[" + I(a) + "][r_] = " + sub + "(v[" + I(a) + "][r_], e, yg[" + I(t) + "][r_]);");
                    close();
                    close();
                }
                close();
            }
            close();
        }
    }
    // Steps per block of the blocked axpy passes: at most column_major_solve_block and the segment
    // width, and a power of two whose gathered unknowns (m * nrhs_block elements) fit 32 registers.
    int solve_block() const {
        int m = std::min(column_major_solve_block, s_.seg_lanes);
        while (m > 1 && m * s_.nrhs_block * s_.words > 32) m /= 2;
        return m;
    }

    // Host emulation: unpack cudaLaunchKernel-style arguments and call the kernel.
    void host_entry(const std::string& name) {
        line("#ifdef BS_HOST_EMULATION");
        std::vector<std::string> types;
        switch (sp_.routine) {
            case ColumnMajorRoutine::potrf:
                types = {"T*", "T* const*", "long long", "int", "int*", "int", "int"};
                break;
            case ColumnMajorRoutine::posv:
                types = {"T*", "T* const*", "long long", "int", "T*", "T* const*", "long long", "int", "int", "int",
                         "int*", "int", "int"};
                break;
            case ColumnMajorRoutine::potrs:
                types = {"const T*", "const T* const*", "long long", "int", "T*", "T* const*", "long long", "int",
                         "int", "int", "int"};
                break;
        }
        std::string call = name + "(";
        for (std::size_t i = 0; i < types.size(); ++i) {
            if (i) call += ", ";
            call += "*static_cast<" + types[i] + "*>(args[" + I(i) + "])";
        }
        line("inline void bs_host_entry(void** args) { " + call + "); }");
        line("#endif");
    }

    const ColumnMajorSpec& sp_;
    const ColumnMajorShape& s_;
    const int n_;
    const bool upper_;
    std::string sqrt_;
    Writer w_;
};

}  // namespace

CholeskyConfig default_column_major_config(ColumnMajorRoutine routine, Precision precision, int n, int nrhs) {
    CholeskyConfig c;
    c.nb = 0;
    c.threads_per_block = 128;
    c.nrhs_block = std::max(1, std::min(nrhs, 4));
    if (routine == ColumnMajorRoutine::potrs) return c;
    const int nn = std::max(1, std::min(n, column_major_max_n));
    c.rows_per_thread = 1;
    c.threads_per_row = default_threads_per_row(precision, nn);
    c.matrices_per_block = 0;  // as many as fit threads_per_block (and shared memory)
    // Full unrolling needs fewer registers than the blocked loops, but NVRTC takes 10-60 s per kernel
    // at n = 100-128 (2 s blocked), paid on a process's first call when the disk cache is cold. Until
    // the autotuner's table says otherwise, unroll only where compiling stays cheap.
    c.full_unroll = nn <= default_full_unroll_max_n;
    return c;
}

std::string column_major_spec_problem(const ColumnMajorSpec& spec) { return resolve(spec).problem; }

ColumnMajorShape column_major_shape(const ColumnMajorSpec& spec, const char* routine) {
    Resolved r = resolve(spec);
    if (!r.problem.empty()) {
        const std::size_t colon = r.problem.find(':');
        throw InvalidArgument(routine, r.problem.substr(0, colon),
                              colon == std::string::npos ? r.problem : r.problem.substr(colon + 2));
    }
    return r.shape;
}

std::string column_major_kernel_name(const ColumnMajorSpec& spec) {
    const ColumnMajorShape s = column_major_shape(spec);
    if (is_fused_config(spec.config)) return fused_kernel_name(spec, s);
    if (is_shared_memory_config(spec.config)) {
        std::string name = shared_memory_kernel_name(spec, s);
        if (spec.config.fast_math) name += "_fm";
        if (spec.config.max_registers > 0) name += "_rr" + I(spec.config.max_registers);
        return name;
    }
    std::string name = std::string(to_string(spec.routine)) + "_cm_" + letter(spec.precision) + "_" +
                       (spec.uplo == Uplo::lower ? "lower" : "upper") + "_n" + I(spec.n);
    if (spec.config.staged)
        name += "_staged" + (spec.routine == ColumnMajorRoutine::potrs ? "" : "_nb" + I(spec.config.nb)) + "_w" +
                I(spec.config.warps_per_matrix) + "_m" + I(s.matrices_per_block) + (spec.config.tensor_cores ? "_tc" : "");
    else if (square_grid_potrf(spec, s))
        name += "_sq" + I(s.threads_per_row) + "_m" + I(s.matrices_per_block) + (spec.config.full_unroll ? "_u" : "") +
                (warp_synchronous_steps(spec) ? "_ws" : "") + (spec.config.compile_time_ld ? "_ldn" : "") +
                (spec.config.lean_addressing ? "_lean" : "");
    else if (factors(spec.routine))
        name += "_r" + I(s.rows_per_thread) + "x" + I(s.threads_per_row) + "_m" + I(s.matrices_per_block) + "_c" +
                I(s.update_chunk) + (spec.config.full_unroll ? "_u" : "") + (one_row_per_lane(spec, s) ? (spec.config.lean_addressing ? "_rows_lean" : "_rows") : warp_synchronous_steps(spec) ? "_ws" : "");
    if (solves(spec.routine) && !spec.config.staged && !square_grid_potrf(spec, s))  // the square solve: a warp per rhs
        name += "_l" + I(s.seg_lanes) + "_nr" + I(s.nrhs_block);
    if (spec.routine == ColumnMajorRoutine::potrs && !spec.config.staged)
        name += "_p" + I(s.solve_prefetch) + "_t" + I(s.block_threads);
    if (spec.config.fast_math) name += "_fm";
    if (spec.config.max_registers > 0) name += "_rr" + I(spec.config.max_registers);
    return name;
}

codegen::KernelSource generate_column_major_kernel(const ColumnMajorSpec& spec) {
    const ColumnMajorShape shape = column_major_shape(spec, "generate_column_major_kernel");
    return Generator(spec, shape).generate();
}

}  // namespace batchsolve::codegen::cholesky
