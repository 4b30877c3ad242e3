// Source of the staged column-major factorisation (see staged.hpp for the algorithm).
#include "codegen/cholesky/staged.hpp"

#include "codegen/common.hpp"
#include "codegen/source_writer.hpp"

#include <string>
#include <utility>
#include <vector>

namespace batchsolve::codegen::cholesky {

namespace {

using codegen::is_complex;

// The kernel, written once for every precision with the prelude's T, R and bs_* helpers. Loops with
// literal bounds over register arrays are unrolled (the arrays stay in registers); the panel loop
// and the loops over rows and tiles are not.
constexpr const char* kHead = R"(
#ifndef BS_HOST_EMULATION
// Asynchronous global -> shared copy of one element (cp.async; no register round trip, so a thread
// has all its copies in flight at once), and the wait for all of a thread's copies.
BS_DEVICE void bs_copy_async(T* dst, const T* src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], @ESIZE@;" ::"r"(d), "l"(src) : "memory");
}
BS_DEVICE void bs_copy_wait() { asm volatile("cp.async.wait_all;" ::: "memory"); }
#else
inline void bs_copy_async(T* dst, const T* src) { *dst = *src; }
inline void bs_copy_wait() {}
#endif
// Start of column j in the packed triangle (rows j..N-1 of column j are consecutive).
BS_DEVICE int bs_colstart(int j) { return j * (2 * @N@ + 1 - j) / 2; }
// Row and column of packed index e.
BS_DEVICE void bs_unpack(int e, int& i, int& j) {
  const float m = (float)(2 * @N@ + 1);
  int c = (int)((m - sqrtf(m * m - 8.0f * (float)e)) * 0.5f);
  c = c < 0 ? 0 : (c > @N@ - 1 ? @N@ - 1 : c);
  while (c + 1 < @N@ && bs_colstart(c + 1) <= e) ++c;
  while (bs_colstart(c) > e) --c;
  j = c;
  i = e - bs_colstart(c) + c;
}
// Where element (i, j), i >= j, of the lower-triangle view of a matrix lives in the matrix A (lda):
// the upper triangle stores L^H, so (i, j) is read from (j, i) there (conjugated by the caller).
BS_DEVICE long long bs_offset(int i, int j, int lda) {
  return @UPPER@ ? (long long)i * lda + j : (long long)j * lda + i;
}
// Tile (bi, bj), bj <= bi, of triangular index q (row by row).
BS_DEVICE void bs_unpack_tile(int q, int& bi, int& bj) {
  int b = (int)((sqrtf(8.0f * (float)q + 1.0f) - 1.0f) * 0.5f);
  while ((b + 1) * (b + 2) / 2 <= q) ++b;
  while (b * (b + 1) / 2 > q) --b;
  bi = b;
  bj = q - b * (b + 1) / 2;
}
@DIAGONAL_BLOCK@
BS_KERNEL_HEAD(@THREADS@, @MIN_BLOCKS@) @NAME@(@PARAMS@) {
  const int N = @N@, NB = @NB@, TPM = @TPM@, G = @G@, NP = @N@ * (@N@ + 1) / 2, SP = @PITCH@;
  BS_DECLARE_SMEM(bs_smem);
  T* const slots = (T*)(bs_smem + @OFF_SLOTS@);
  R* const inv_all = (R*)(bs_smem + @OFF_INV@);
  int* const failed_all = (int*)(bs_smem + @OFF_FLAGS@);
  const int tid = (int)threadIdx.x;
  const int g = tid / TPM, t = tid - g * TPM;
  const long long first = (long long)blockIdx.x * G;
  const bool live_group = first + g < (long long)count;
  T* const s = slots + g * SP;
  R* const inv = inv_all + g * NB;
  if (t == 0) failed_all[g] = 0;

@COPY_IN@  bs_copy_wait();
  __syncthreads();
@CONJ_IN@
)";
// The diagonal block of the panel at k0 (kb columns), factored by warp 0 of a group: lane i holds
// row k0 + i in registers. Column c reaches the other lanes by shuffles or, for wide panels, through
// shared memory (column_major_staged_shared_diagonal_min_nb): the pivot and L(c2, c) = A(c2, c) / l_cc.
// Stores 1/l_cc of each column in inv; a pivot not in (0, Inf) (or NaN) sets the group's failure flag to
// its column (counted from 1) and leaves the later columns alone.
constexpr const char* kDiagonalBlock = R"(
BS_DEVICE void bs_diagonal_block(T* const s, R* const inv, int* const failed, const int k0, const int kb,
                                 const int lane) {
  const int NB = @NB@;
  T r[NB];
#pragma unroll
  for (int c = 0; c < NB; ++c) r[c] = (lane < kb && c <= lane) ? s[bs_colstart(k0 + c) + lane - c] : bs_zero();
  int fail = -1;
#pragma unroll
  for (int c = 0; c < NB; ++c) {
    if (c < kb && fail < 0) {
@SHARE_COLUMN@      const R piv = @PIVOT@;
      if (!bs_pivot_ok(piv)) {
        fail = c;  // the same in every lane
      } else {
        const R d = @SQRT@(piv);
        const R rd = (R)1 / d;
        r[c] = lane == c ? bs_from_real(d) : bs_scale(r[c], rd);
        if (lane == 0) inv[c] = rd;
#pragma unroll
        for (int c2 = c + 1; c2 < NB; ++c2) {
          const T l = @L_C2@;  // L(c2, c)
          if (lane >= c2) r[c2] = bs_sub_mul_conj(r[c2], r[c], l);
        }
      }
    }
  }
@LAST_READS_FENCE@  if (lane < kb) {
#pragma unroll
    for (int c = 0; c < NB; ++c)
      if (c <= lane) s[bs_colstart(k0 + c) + lane - c] = r[c];
  }
  if (fail >= 0 && lane == 0) *failed = k0 + fail + 1;
}
)";
// The diagonal block's column exchange through shared memory (panels of at least
// column_major_staged_shared_diagonal_min_nb): lane i writes A(k0 + i, k0 + c) where it lives, and
// after the __syncwarp every lane reads the pivot and the column as broadcasts.
constexpr const char* kShareColumnThroughShared = R"(      T* const colc = s + bs_colstart(k0 + c) - k0 - c;  // colc[k0 + i] = A(k0 + i, k0 + c)
      if (lane >= c && lane < kb) colc[k0 + lane] = r[c];
      __syncwarp();
)";
// ... and the last step's reads of A come before the stores of L over it.
constexpr const char* kLastReadsFence = "  __syncwarp();  // the last step's reads of A come before the stores of L over it\n";

// The trailing update after panel k0 (A22 -= L21 L21^H, rows and columns from r0 = k0 + kb on) is
// split in two sets of square tiles of side TS, tile (bi, bj) covering rows r0 + TS bi and columns
// r0 + TS bj onwards (bj <= bi):
//   next:  bj < BJ1, the tile columns that hold the next panel (kb_next columns), by every thread;
//   rest:  bj >= BJ1, while warp 0 factors the next panel's diagonal block (it needs only the next
//          set), by the other warps of the group (by warp 0 too, after its block, in a group of one warp).
// (The tensor-core update; the scalar one takes every tile in step 2, kAllTiles.)
// Each loop below defines bi and bj for @TILE@, the tile's update. @WORKER@ and @WORKERS@ are the
// index and count of the workers that share a set (threads for the scalar update, warps for the
// tensor cores); the rest set's workers skip the first warp's.
//
// The next set, column by column (column bj has tiles - bj tiles): a walk of at most BJ1 steps.
constexpr const char* kNextPanelTiles = R"(    if (live_group && f == 0 && kb_next > 0) {
      const int tiles = (N - r0 + @TS@ - 1) / @TS@, BJ1 = (kb_next + @TS@ - 1) / @TS@;
      const int count = BJ1 * tiles - BJ1 * (BJ1 - 1) / 2;
@SETUP@      for (int q = @WORKER@; q < count; q += @WORKERS@) {
        int bj = 0, bi = q;
        while (bi >= tiles - bj) bi -= tiles - bj++;
        bi += bj;
@TILE@      }
    }
)";
// The rest set, row by row over its triangle: unpacked once, then advanced by the stride (a row
// bi holds bi + 1 tiles), which spares a square root and its corrections per tile.
constexpr const char* kRestTiles = R"(    if (live_group && f == 0 && kb_next > 0 && @WORKER@ - @REST_SKIP@ >= 0) {
      const int tiles = (N - r0 + @TS@ - 1) / @TS@, BJ1 = (kb_next + @TS@ - 1) / @TS@;
      const int rest = tiles - BJ1, count = rest * (rest + 1) / 2, worker = @WORKER@ - @REST_SKIP@;
      const int workers = @WORKERS@ - @REST_SKIP@;
@SETUP@      int ri, rj;
      bs_unpack_tile(worker, ri, rj);
      for (int q = worker; q < count; q += workers) {
        const int bi = BJ1 + ri, bj = BJ1 + rj;
@TILE@        rj += workers;
        while (rj > ri) rj -= ++ri;
      }
    }
)";
// Every tile, row by row over the triangle, each unpacked from its index: the scalar update (see
// kFactor: it keeps the whole update before the next diagonal block).
constexpr const char* kAllTiles = R"(    if (live_group && f == 0 && kb_next > 0) {
      const int tiles = (N - r0 + @TS@ - 1) / @TS@;
@SETUP@      for (int q = @WORKER@; q < tiles * (tiles + 1) / 2; q += @WORKERS@) {
        int bi, bj;
        bs_unpack_tile(q, bi, bj);
@TILE@      }
    }
)";
// A tile of the scalar update: the thread's RT x RT entries (2 * RT shared loads feed RT^2
// multiply-adds per column of the panel).
constexpr const char* kScalarTile = R"(        const int i0 = r0 + bi * @RT@, j0 = r0 + bj * @RT@;
        T acc[@RT@][@RT@];
#pragma unroll
        for (int x = 0; x < @RT@; ++x)
#pragma unroll
          for (int y = 0; y < @RT@; ++y) acc[x][y] = bs_zero();
#pragma unroll
        for (int p = 0; p < NB; ++p) {
          if (p < kb) {
            const T* col = s + bs_colstart(k0 + p) - (k0 + p);  // col[i] = L(i, k0 + p)
            T li[@RT@], lj[@RT@];
#pragma unroll
            for (int x = 0; x < @RT@; ++x) li[x] = i0 + x < N ? col[i0 + x] : bs_zero();
#pragma unroll
            for (int y = 0; y < @RT@; ++y) lj[y] = j0 + y < N ? col[j0 + y] : bs_zero();
#pragma unroll
            for (int x = 0; x < @RT@; ++x)
#pragma unroll
              for (int y = 0; y < @RT@; ++y) acc[x][y] = bs_add_conj_mul(acc[x][y], lj[y], li[x]);
          }
        }
#pragma unroll
        for (int y = 0; y < @RT@; ++y) {
          const int j = j0 + y;
          if (j < N) {
            T* col = s + bs_colstart(j) - j;
#pragma unroll
            for (int x = 0; x < @RT@; ++x)
              if (i0 + x < N && i0 + x >= j) col[i0 + x] = bs_sub(col[i0 + x], acc[x][y]);
          }
        }
)";
// The FP64 tensor cores (config.tensor_cores, double precision): a warp takes an 8 x 8 tile, 4
// columns of the panel per mma. Lane (gi, tq) = (lane / 4, lane % 4) loads A's entry L(i0 + gi, kk)
// and B's L(j0 + gi, kk), kk = k0 + p + tq (the same pattern for both operands of L21 L21^H), and
// receives the sums for (i0 + gi, j0 + 2 tq + e). Out-of-range rows and columns of the panel load
// zeros rather than branching: mma.sync needs the whole warp. Every tile and loop bound is uniform
// over the warp (the group's failure flag too).
constexpr const char* kTensorCoreSetup = R"(      const int lane = t & 31, gi = lane >> 2, tq = lane & 3;
      int colbase[(NB + 3) / 4];  // colbase[pp] + i = the place of L(i, k0 + 4 pp + tq)
      bool in_panel[(NB + 3) / 4];
#pragma unroll
      for (int pp = 0; pp < (NB + 3) / 4; ++pp) {
        const int kk = k0 + 4 * pp + tq;
        in_panel[pp] = 4 * pp + tq < kb;
        colbase[pp] = in_panel[pp] ? bs_colstart(kk) - kk : 0;
      }
)";
constexpr const char* kTensorCoreTile = R"(        const int i0 = r0 + 8 * bi, j0 = r0 + 8 * bj;
        const int ia = i0 + gi, jb = j0 + gi;  // the row of A's entry, the column of B's
        double sum0 = 0.0, sum1 = 0.0;
#pragma unroll
        for (int pp = 0; pp < (NB + 3) / 4; ++pp) {
          const double a_ik = in_panel[pp] && ia < N ? s[colbase[pp] + ia] : 0.0;
          const double b_jk = in_panel[pp] && jb < N ? s[colbase[pp] + jb] : 0.0;
          bs_mma_8x8x4(sum0, sum1, a_ik, b_jk);
        }
        const int i = i0 + gi, j = j0 + 2 * tq;
        if (i < N) {
          T* const row_in_col = s + bs_colstart(j) + i - j;  // (i, j); (i, j + 1) is N - j - 1 further
          if (j <= i) row_in_col[0] -= sum0;
          if (j + 1 <= i) row_in_col[N - j - 1] -= sum1;
        }
)";
// D = A B + D for one m8n8k4 tile in double precision (mma.sync; sm_80 and later): lane l holds
// A(l / 4, l % 4), B(l % 4, l / 4) and D(l / 4, 2 (l % 4) + e), e = 0, 1. The host emulation and
// older devices gather the same products from the lanes that hold them.
constexpr const char* kMma8x8x4 = R"(
#if !defined(BS_HOST_EMULATION) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
BS_DEVICE void bs_mma_8x8x4(double& d0, double& d1, double a, double b) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
      : "+d"(d0), "+d"(d1)
      : "d"(a), "d"(b));
}
#else
BS_DEVICE void bs_mma_8x8x4(double& d0, double& d1, double a, double b) {
  const int lane = (int)(threadIdx.x & 31), row = lane >> 2, col = 2 * (lane & 3);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const double a_rk = __shfl_sync(0xffffffffu, a, 4 * row + k, 32);
    const double b_k0 = __shfl_sync(0xffffffffu, b, 4 * col + k, 32);
    const double b_k1 = __shfl_sync(0xffffffffu, b, 4 * (col + 1) + k, 32);
    d0 = fma(a_rk, b_k0, d0);
    d1 = fma(a_rk, b_k1, d1);
  }
}
#endif
)";
// potrf, posv: the blocked factorisation in shared memory. With the tensor cores it runs one panel
// ahead: the next panel's diagonal block (warp 0) runs beside the rest of this panel's trailing
// update (the other warps). The scalar update does all its tiles in step 2 (no rest set):
// on the H100 the split made s potrf n = 100 and 128 11-15% slower (its update, four times the
// instructions of the mma one, lost a warp) and d with tensor cores 5-17% faster (n = 64-128).
constexpr const char* kFactor = R"(
  // ---- the first panel's diagonal block ----
  if (live_group && t < 32) bs_diagonal_block(s, inv, &failed_all[g], 0, N < NB ? N : NB, t);
  __syncthreads();
  for (int k0 = 0; k0 < N; k0 += NB) {
    const int kb = N - k0 < NB ? N - k0 : NB;
    const int r0 = k0 + kb, kb_next = N - r0 < NB ? N - r0 : NB;  // kb_next <= 0: the last panel
    // ---- 1. panel below: L21 = A21 L11^-H, one row per thread (a failed panel: its good columns) ----
    const int f = failed_all[g];
    const int solved = f == 0 ? kb : (f - 1 >= k0 ? f - 1 - k0 : 0);
    if (live_group && solved > 0) {
      for (int row = k0 + kb + t; row < N; row += TPM) {
        T x[NB];
#pragma unroll
        for (int c = 0; c < NB; ++c) x[c] = c < solved ? s[bs_colstart(k0 + c) + row - k0 - c] : bs_zero();
        // column by column (x_c final, then removed from the later ones): the later columns' updates
        // are independent, so the dependency chain is one step per column, not one per product
#pragma unroll
        for (int c = 0; c < NB; ++c) {
          if (c < solved) {
            x[c] = bs_scale(x[c], inv[c]);
#pragma unroll
            for (int c2 = c + 1; c2 < NB; ++c2)
              if (c2 < solved) x[c2] = bs_sub_mul_conj(x[c2], x[c], s[bs_colstart(k0 + c) + c2 - c]);
          }
        }
#pragma unroll
        for (int c = 0; c < NB; ++c)
          if (c < solved) s[bs_colstart(k0 + c) + row - k0 - c] = x[c];
      }
    }
    __syncthreads();
    // ---- 2. trailing update of the next panel's columns ----
@NEXT_TILES@    __syncthreads();
    // ---- 3. the next panel's diagonal block (warp 0) beside the rest of the update ----
    if (live_group && t < 32 && kb_next > 0 && failed_all[g] == 0)
      bs_diagonal_block(s, inv, &failed_all[g], r0, kb_next, t);
@REST_TILES@    __syncthreads();
  }

)";
// The copies between A and the slots: a walk over the triangle's elements (i, j) of every live slot
// with @STEP@ per element, where `am` is the matrix in A, `ao` the element's offset in it and `se`
// its place in the slot. By columns (n >= column_major_staged_copy_by_column_min_n): warp w takes
// columns w, w + W, ... of the block's slots, its lanes consecutive rows of a column (coalesced for
// lower storage; a column start is all the index arithmetic). By elements (smaller n, where a column
// leaves most lanes of a warp idle): consecutive threads take consecutive packed elements, each
// unpacked to its row and column.
constexpr const char* kWalkByColumns = R"(
  for (int q = tid >> 5; q < G * N; q += G * TPM / 32) {
    const int gg = q / N, j = q - gg * N;
    const long long mm = first + gg;
    if (mm < (long long)count) {
      auto* const am = a_ptrs ? a_ptrs[mm] : a + mm * a_stride;
      T* const col = slots + gg * SP + bs_colstart(j) - j;  // col[i] = element (i, j)
      for (int i = j + (tid & 31); i < N; i += 32) {
        T* const se = col + i;
        const long long ao = bs_offset(i, j, lda);
        @STEP@
      }
    }
  }
)";
constexpr const char* kWalkByElements = R"(
  for (int q = tid; q < G * NP; q += G * TPM) {
    const int gg = q / NP, e = q - gg * NP;
    const long long mm = first + gg;
    if (mm < (long long)count) {
      auto* const am = a_ptrs ? a_ptrs[mm] : a + mm * a_stride;
      int i, j;
      bs_unpack(e, i, j);
      T* const se = slots + gg * SP + e;
      const long long ao = bs_offset(i, j, lda);
      @STEP@
    }
  }
)";
// The steps: the copy in (asynchronous), and the factor back to A (potrf and posv; the triangle only,
// the other one is never touched).
constexpr const char* kCopyInStep = "bs_copy_async(se, am + ao);";
constexpr const char* kCopyOutStep = "am[ao] = @UPPER@ ? bs_conj(*se) : *se;";
// potrf, posv: the per-matrix info, and the end of the kernel.
constexpr const char* kInfoAndEnd = R"(
  if (t == 0 && live_group) info[first + g] = failed_all[g];
  (void)zero;
}
)";
// potrs: the end of the kernel.
constexpr const char* kEnd = R"(
}
)";

// posv: the solve after the copy-out, with the factor still in shared memory (so L is read from
// global memory once, for the factorisation); potrs: the same solve right after the copy-in (L read
// once, where the register kernels read it once per substitution). Warp w of a group takes
// right-hand sides w, w + W, ...; lane l holds rows l + 32 a of one column of B. Both substitutions are axpy steps: the new unknown
// is broadcast with a shuffle and every lane updates its rows, reading column k of L (forward,
// L y = b) or row k of L (backward, L^H x = y) from the packed triangle. The loops over a lane's
// rows are unrolled (its rows stay in registers); the steps within a block of 32 are not, which
// keeps the compiler from hoisting a whole substitution's shared loads into registers (fully
// unrolled, d n = 100 needed 255 registers and spilled; the factorisation alone needs 96).
// A failed matrix leaves its B untouched.
constexpr const char* kSolve = R"(
  if (live_group && failed_all[g] == 0) {
    const int lane = t & 31, warp = t >> 5, RA = (N + 31) / 32;
    const long long mm = first + g;
    T* const bm = b_ptrs ? b_ptrs[mm] : b + mm * b_stride;
    R rinv[RA];  // 1 / l_ii of the rows this lane holds
#pragma unroll
    for (int q = 0; q < RA; ++q) rinv[q] = lane + 32 * q < N ? (R)1 / bs_real(s[bs_colstart(lane + 32 * q)]) : (R)0;
    for (int col = warp; col < nrhs; col += TPM / 32) {
      T* const x = bm + (long long)col * ldb;
      T v[RA];
#pragma unroll
      for (int q = 0; q < RA; ++q) v[q] = lane + 32 * q < N ? x[lane + 32 * q] : bs_zero();
#pragma unroll
      for (int kb = 0; kb < RA; ++kb) {  // forward: y_k, then b_i -= l_ik y_k below it
#pragma unroll 1
        for (int k = 32 * kb; k < 32 * kb + 32 && k < N; ++k) {
          const T yk = bs_shfl(bs_scale(v[kb], rinv[kb]), k - 32 * kb, 32);
          if (lane == k - 32 * kb) v[kb] = yk;
          const T* colk = s + bs_colstart(k) - k;  // colk[i] = L(i, k)
#pragma unroll
          for (int q = kb; q < RA; ++q)
            if (lane + 32 * q > k && lane + 32 * q < N) v[q] = bs_sub_mul(v[q], colk[lane + 32 * q], yk);
        }
      }
#pragma unroll
      for (int kb = RA - 1; kb >= 0; --kb) {  // backward: x_k, then y_i -= conj(l_ki) x_k above it
#pragma unroll 1
        for (int k = (32 * kb + 31 < N - 1 ? 32 * kb + 31 : N - 1); k >= 32 * kb; --k) {
          const T xk = bs_shfl(bs_scale(v[kb], rinv[kb]), k - 32 * kb, 32);
          if (lane == k - 32 * kb) v[kb] = xk;
#pragma unroll
          for (int q = 0; q <= kb; ++q)
            if (lane + 32 * q < k) v[q] = bs_sub_mul_conj(v[q], xk, s[bs_colstart(lane + 32 * q) + k - lane - 32 * q]);
        }
      }
#pragma unroll
      for (int q = 0; q < RA; ++q)
        if (lane + 32 * q < N) x[lane + 32 * q] = v[q];
    }
  }
)";

}  // namespace

std::string column_major_staged_kernel(const ColumnMajorSpec& spec, const ColumnMajorShape& shape,
                                       const std::string& name, int min_blocks) {
    const int n = spec.n, nb = spec.config.nb, g = shape.matrices_per_block;
    const Precision p = spec.precision;
    const bool upper = spec.uplo == Uplo::upper;
    // The upper triangle holds L^H: conjugate on the way in (real types: nothing to do).
    const std::string conj_in =
        upper && is_complex(p) ? "  for (int q = tid; q < G * NP; q += G * TPM) {  // slot q / NP, element q % NP\n"
                                 "    T* const x = slots + (q / NP) * SP + q % NP;\n"
                                 "    *x = bs_conj(*x);\n"
                                 "  }\n"
                                 "  __syncthreads();\n"
                               : "";
    // potrf factors; posv factors, copies the factor out and solves; potrs only solves (the factor is
    // staged like potrf's input and never written back).
    const ColumnMajorRoutine r = spec.routine;
    const char* params =
        r == ColumnMajorRoutine::potrf ? "T* a, T* const* a_ptrs, long long a_stride, int lda, int* info, int count, int zero"
        : r == ColumnMajorRoutine::posv
            ? "T* a, T* const* a_ptrs, long long a_stride, int lda, T* b, T* const* b_ptrs, long long b_stride, "
              "int ldb, int nrhs, int ngroups, int* info, int count, int zero"
            : "const T* a, const T* const* a_ptrs, long long a_stride, int lda, T* b, T* const* b_ptrs, "
              "long long b_stride, int ldb, int nrhs, int ngroups, int count";
    const char* walk = n >= column_major_staged_copy_by_column_min_n ? kWalkByColumns : kWalkByElements;
    const bool shared_diagonal = nb >= column_major_staged_shared_diagonal_min_nb;
    const bool tensor_cores = spec.config.tensor_cores;  // column_major_spec_problem: d, potrf or posv
    std::string text = std::string(tensor_cores ? kMma8x8x4 : "") +
                       fill_placeholders(kHead, {{"DIAGONAL_BLOCK", r != ColumnMajorRoutine::potrs ? kDiagonalBlock : ""}});
    if (r != ColumnMajorRoutine::potrs) {
        // The two tile sets of the trailing update, by threads (scalar tiles) or by warps (tensor
        // cores); in a group of more than one warp, warp 0 leaves the rest set to the others.
        const bool one_warp = shape.threads_per_matrix <= 32;
        std::string next_tiles, rest_tiles;
        if (tensor_cores) {
            const std::vector<std::pair<std::string, std::string>> update = {
                {"SETUP", kTensorCoreSetup}, {"TILE", kTensorCoreTile},    {"TS", "8"},
                {"WORKER", "(t >> 5)"},      {"WORKERS", "(TPM / 32)"}, {"REST_SKIP", one_warp ? "0" : "1"}};
            next_tiles = fill_placeholders(kNextPanelTiles, update);
            rest_tiles = fill_placeholders(kRestTiles, update);
        } else {
            next_tiles = fill_placeholders(kAllTiles, {{"SETUP", ""}, {"TILE", kScalarTile}, {"TS", "@RT@"}, {"WORKER", "t"},
                                          {"WORKERS", "TPM"}});
        }
        text += fill_placeholders(kFactor, {{"NEXT_TILES", next_tiles}, {"REST_TILES", rest_tiles}}) + "  // ---- copy out ----" +
                fill_placeholders(walk, {{"STEP", kCopyOutStep}});
    }
    if (r != ColumnMajorRoutine::potrf) text += std::string(kSolve) + "  (void)ngroups;  // one right-hand side per warp at a time\n";
    text += r == ColumnMajorRoutine::potrs ? kEnd : kInfoAndEnd;
    // before the placeholders the copies contain
    text = fill_placeholders(text, {{"COPY_IN", "  // ---- copy in ----" + fill_placeholders(walk, {{"STEP", kCopyInStep}})}});
    return fill_placeholders(text, {{"NAME", name},
                       {"PARAMS", params},
                       {"THREADS", std::to_string(shape.block_threads)},
                       {"MIN_BLOCKS", std::to_string(min_blocks)},
                       {"N", std::to_string(n)},
                       {"NB", std::to_string(nb)},
                       {"TPM", std::to_string(shape.threads_per_matrix)},
                       {"G", std::to_string(g)},
                       {"PITCH", std::to_string(column_major_staged_pitch(n))},
                       {"OFF_SLOTS", std::to_string(shape.off_packed)},
                       {"OFF_INV", std::to_string(shape.off_diag)},
                       {"OFF_FLAGS", std::to_string(shape.off_flags)},
                       {"RT", std::to_string(column_major_staged_tile)},
                       {"ESIZE", std::to_string(4 * shape.words)},
                       {"UPPER", upper ? "true" : "false"},
                       {"SQRT", p == Precision::s || p == Precision::c ? "sqrtf" : "sqrt"},
                       {"CONJ_IN", conj_in},
                       {"SHARE_COLUMN", shared_diagonal ? kShareColumnThroughShared : ""},
                       {"PIVOT", shared_diagonal ? "bs_real(colc[k0 + c])" : "bs_real(bs_shfl(r[c], c, 32))"},
                       {"L_C2", shared_diagonal ? "c2 < kb ? bs_scale(colc[k0 + c2], rd) : bs_zero()"
                                                : "bs_shfl(r[c], c2, 32)"},
                       {"LAST_READS_FENCE", shared_diagonal ? kLastReadsFence : ""}});
}

}  // namespace batchsolve::codegen::cholesky
