// Source of the shared-memory column-major Cholesky family (see shared_memory.hpp for the algorithm),
// its checks, shape and default configuration.
#include "codegen/cholesky/shared_memory.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "codegen/common.hpp"
#include "codegen/source_writer.hpp"

namespace batchsolve::codegen::cholesky {

namespace {

using codegen::element_bytes;

// The kernel, written once for every precision and both triangles with the prelude's T, R and bs_*
// helpers. N, NB, TPM, G and RT are literals, so the loops over a thread's tile and a panel's
// columns unroll (their arrays stay in registers); the loops over panels, columns and tiles do not.
constexpr const char* kHead = R"(
#ifndef BS_HOST_EMULATION
// Asynchronous global -> shared copies (cp.async: no register round trip, every copy of a thread in
// flight at once): one element, and 16 bytes (the flat copy of contiguous matrices); the wait.
BS_DEVICE void bs_copy_async(T* dst, const T* src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], @ESIZE@;" ::"r"(d), "l"(src) : "memory");
}
BS_DEVICE void bs_copy_async16(T* dst, const T* src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}
BS_DEVICE void bs_copy_wait() { asm volatile("cp.async.wait_all;" ::: "memory"); }
#else
inline void bs_copy_async(T* dst, const T* src) { *dst = *src; }
inline void bs_copy_async16(T* dst, const T* src) { BS_VEC_AT(src); *(bs_vec*)dst = *(const bs_vec*)src; }
inline void bs_copy_wait() {}
#endif
// Element (i, j), i >= j, of L (or of the matrix being factored) in a slot: the slot holds the lower
// triangle column-major (leading dimension N) in both cases. The upper triangle (A = U^H U, U = L^H)
// is transposed (and conjugated) on the way in and out, so the O(n^3) part reads columns, without
// the bank conflicts of rows of a square whose side is a multiple of 32.
BS_DEVICE T bs_get(const T* s, int i, int j) { return s[j * @N@ + i]; }
BS_DEVICE void bs_put(T* s, int i, int j, T v) { s[j * @N@ + i] = v; }
// Element (i, j) of A is in its referenced triangle; its place in the slot (upper: (j, i) of L).
BS_DEVICE bool bs_in_triangle(int i, int j) { return @UPPER@ ? i <= j : i >= j; }
BS_DEVICE int bs_slot_index(int i, int j) { return @UPPER@ ? i * @N@ + j : j * @N@ + i; }

BS_KERNEL_HEAD(@THREADS@, @MIN_BLOCKS@) @NAME@(@PARAMS@) {
  const int N = @N@, TPM = @TPM@, G = @G@, NN = @N@ * @N@, VEC = (int)(sizeof(bs_vec) / sizeof(T));
  BS_DECLARE_SMEM(bs_smem);
  T* const slots = (T*)bs_smem;
  const int tid = (int)threadIdx.x;
  const int g = tid / TPM, t = tid - g * TPM;
  const long long first = (long long)blockIdx.x * G;
  const int live = (long long)count - first < (long long)G ? (int)((long long)count - first) : G;  // matrices of this block
  const bool live_group = g < live;
  T* const s = slots + g * NN;

  // ---- copy in: contiguous aligned matrices as one flat run of 16-byte copies, else the triangle ----
  if (!@UPPER@ && a_ptrs == 0 && lda == N && a_stride == (long long)NN && NN % VEC == 0 &&
      ((unsigned long long)(const void*)a & 15ull) == 0) {
    const T* const src = a + first * NN;
    for (int q = tid; q < live * (NN / VEC); q += G * TPM) bs_copy_async16(slots + q * VEC, src + (long long)q * VEC);
  } else {
    for (int q = tid; q < live * NN; q += G * TPM) {
      const int gg = q / NN, e = q - gg * NN, j = e / N, i = e - j * N;
      if (bs_in_triangle(i, j)) {
        const long long mm = first + gg;
        const T* const am = a_ptrs ? a_ptrs[mm] : a + mm * a_stride;
        bs_copy_async(slots + gg * NN + bs_slot_index(i, j), am + (long long)j * lda + i);
      }
    }
  }
  bs_copy_wait();
  __syncthreads();
@CONJ_IN@)";

// Complex upper triangle: the copied elements are U's, conj of L's (real types need nothing).
constexpr const char* kConjugateIn = R"(  for (int q = tid; q < live * NN; q += G * TPM) {
    const int e = q % NN, j = e / N, i = e - j * N;
    if (i >= j) slots[q] = bs_conj(slots[q]);
  }
  __syncthreads();
)";

// potrf, posv: the blocked right-looking factorisation of each slot by its group. `failed` is the
// same in every thread of a group (all read the same pivots), so a failed group skips its work
// while the block keeps meeting at the same barriers.
constexpr const char* kFactor = R"(
  const int NB = @NB@, RT = @RT@;
  int failed = 0;  // this matrix's info
#pragma unroll 1
  for (int k0 = 0; k0 < N; k0 += NB) {
    const int kb = N - k0 < NB ? N - k0 : NB;
    // ---- 1a. the diagonal block by warp 0 of the group: lane i holds row k0 + i in registers, the
    //      columns reach the other lanes by shuffles (no block barrier per column) ----
    if (live_group && failed == 0 && t < 32) {
      const int lane = t;
      T r[NB];
#pragma unroll
      for (int c = 0; c < NB; ++c) r[c] = (lane < kb && c <= lane) ? bs_get(s, k0 + lane, k0 + c) : bs_zero();
      bool stop = false;  // the same in every lane
#pragma unroll
      for (int c = 0; c < NB; ++c) {
        if (c < kb && !stop) {
          const R piv = bs_real(bs_shfl(r[c], c, 32));
          if (!bs_pivot_ok(piv)) {
            stop = true;  // (k0 + c, k0 + c) keeps the bad pivot: the group's threads find it there
          } else {
            const R d = @SQRT@(piv), rd = (R)1 / d;
            r[c] = lane == c ? bs_from_real(d) : bs_scale(r[c], rd);
#pragma unroll
            for (int c2 = c + 1; c2 < NB; ++c2) {
              const T l = bs_shfl(r[c], c2, 32);  // L(k0 + c2, k0 + c)
              if (lane >= c2) r[c2] = bs_sub_mul_conj(r[c2], r[c], l);
            }
          }
        }
      }
      // back to the slot: L, or after a bad pivot the block as it stands (the bad pivot raw)
      if (lane < kb) {
#pragma unroll
        for (int c = 0; c < NB; ++c)
          if (c <= lane) bs_put(s, k0 + lane, k0 + c, r[c]);
      }
    }
    __syncthreads();
    // ---- 1b. the group reads the block's diagonal: the first entry that is not a usable l_cc is the
    //      failed pivot (a factored column holds sqrt(pivot) > 0, the failed one its raw pivot) ----
    R rinv[NB];
    int solved = 0;  // columns of this panel that hold L
    if (live_group && failed == 0) {
      solved = kb;
#pragma unroll
      for (int c = 0; c < NB; ++c) {
        const R d = c < kb ? bs_real(bs_get(s, k0 + c, k0 + c)) : (R)1;
        if (c < solved && !bs_pivot_ok(d)) solved = c;
        rinv[c] = (R)1 / d;
      }
      // ---- 2. the panel below: L21 = A21 L11^-H, one row per thread (a failed panel: its good columns) ----
      for (int i = k0 + kb + t; i < N; i += TPM) {
        T x[NB];
#pragma unroll
        for (int c = 0; c < NB; ++c) x[c] = c < solved ? bs_get(s, i, k0 + c) : bs_zero();
#pragma unroll
        for (int c = 0; c < NB; ++c) {
          if (c < solved) {
            x[c] = bs_scale(x[c], rinv[c]);
#pragma unroll
            for (int c2 = c + 1; c2 < NB; ++c2)
              if (c2 < solved) x[c2] = bs_sub_mul_conj(x[c2], x[c], bs_get(s, k0 + c2, k0 + c));
          }
        }
#pragma unroll
        for (int c = 0; c < NB; ++c)
          if (c < solved) bs_put(s, i, k0 + c, x[c]);
      }
      if (solved < kb) failed = k0 + solved + 1;
    }
    __syncthreads();
    // ---- 3. the trailing triangle: A22 -= L21 L21^H in strided register tiles ----
    const int r0 = k0 + kb, M = N - r0;
    if (M > 0) {
      if (live_group && failed == 0) {
        const int TS = (M + RT - 1) / RT;  // tiles per side; tile (bi, bj) has rows r0 + bi + TS x, columns r0 + bj + TS y
        for (int q = t; q < TS * TS; q += TPM) {
          const int bj = q / TS, bi = q - bj * TS;
          // entry (x, y) is below the diagonal when x > y, or x == y and bi >= bj (never when x < y)
          const bool diag = bi >= bj;
          T acc[RT][RT];
#pragma unroll
          for (int x = 0; x < RT; ++x)
#pragma unroll
            for (int y = 0; y < RT; ++y) acc[x][y] = bs_zero();
#pragma unroll
          for (int p = 0; p < NB; ++p) {
            if (p < kb) {
              T li[RT], lj[RT];
#pragma unroll
              for (int x = 0; x < RT; ++x) {
                const int i = r0 + bi + TS * x;
                li[x] = i < N ? bs_get(s, i, k0 + p) : bs_zero();
              }
#pragma unroll
              for (int y = 0; y < RT; ++y) {
                const int j = r0 + bj + TS * y;
                lj[y] = j < N ? bs_get(s, j, k0 + p) : bs_zero();
              }
#pragma unroll
              for (int x = 0; x < RT; ++x)
#pragma unroll
                for (int y = 0; y <= x; ++y)
                  if (x > y || diag) acc[x][y] = bs_add_conj_mul(acc[x][y], lj[y], li[x]);
            }
          }
#pragma unroll
          for (int x = 0; x < RT; ++x) {
            const int i = r0 + bi + TS * x;
            if (i < N) {
#pragma unroll
              for (int y = 0; y <= x; ++y) {
                const int j = r0 + bj + TS * y;
                if (x > y || diag) bs_put(s, i, j, bs_sub(bs_get(s, i, j), acc[x][y]));
              }
            }
          }
        }
      }
      __syncthreads();
    }
  }

  // ---- copy out: the referenced triangle only ----
  for (int q = tid; q < live * NN; q += G * TPM) {
    const int gg = q / NN, e = q - gg * NN, j = e / N, i = e - j * N;
    if (bs_in_triangle(i, j)) {
      const long long mm = first + gg;
      T* const am = a_ptrs ? a_ptrs[mm] : a + mm * a_stride;
      am[(long long)j * lda + i] = @CONJ_OUT@(slots[gg * NN + bs_slot_index(i, j)]);
    }
  }
  if (t == 0 && live_group) info[first + g] = failed;
  (void)zero;
)";

// potrs: no factorisation; the factor is the slot as copied in.
constexpr const char* kNoFactor = R"(
  const int failed = 0;
  (void)ngroups;
)";

// posv, potrs: L L^H X = B from the factor in shared memory, one right-hand side per warp at a time;
// lane l holds rows l + 32 a. The loops over a lane's rows unroll (its rows stay in registers); the
// steps within a block of 32 rows do not (a whole substitution's shared loads would be hoisted into
// registers). A failed matrix leaves its B untouched.
constexpr const char* kSolve = R"(
  if (live_group && failed == 0) {
    const int lane = t & 31, warp = t >> 5, RA = (N + 31) / 32;
    const long long mm = first + g;
    T* const bm = b_ptrs ? b_ptrs[mm] : b + mm * b_stride;
    R rinv[RA];  // 1 / l_rr of the rows this lane holds
#pragma unroll
    for (int q = 0; q < RA; ++q) {
      const int r = lane + 32 * q;
      rinv[q] = r < N ? (R)1 / bs_real(bs_get(s, r, r)) : (R)0;
    }
    for (int col = warp; col < nrhs; col += TPM / 32) {
      T* const x = bm + (long long)col * ldb;
      T v[RA];
#pragma unroll
      for (int q = 0; q < RA; ++q) v[q] = lane + 32 * q < N ? x[lane + 32 * q] : bs_zero();
#pragma unroll
      for (int kb = 0; kb < RA; ++kb) {  // forward, L y = b: y_k, then b_i -= l_ik y_k below it
#pragma unroll 1
        for (int k = 32 * kb; k < 32 * kb + 32 && k < N; ++k) {
          const T yk = bs_shfl(bs_scale(v[kb], rinv[kb]), k - 32 * kb, 32);
          if (lane == k - 32 * kb) v[kb] = yk;
#pragma unroll
          for (int q = kb; q < RA; ++q) {
            const int r = lane + 32 * q;
            if (r > k && r < N) v[q] = bs_sub_mul(v[q], bs_get(s, r, k), yk);
          }
        }
      }
#pragma unroll
      for (int kb = RA - 1; kb >= 0; --kb) {  // backward, L^H x = y: x_k, then y_i -= conj(l_ki) x_k above it
#pragma unroll 1
        for (int k = (32 * kb + 31 < N - 1 ? 32 * kb + 31 : N - 1); k >= 32 * kb; --k) {
          const T xk = bs_shfl(bs_scale(v[kb], rinv[kb]), k - 32 * kb, 32);
          if (lane == k - 32 * kb) v[kb] = xk;
#pragma unroll
          for (int q = 0; q <= kb; ++q) {
            const int r = lane + 32 * q;
            if (r < k) v[q] = bs_sub_mul_conj(v[q], xk, bs_get(s, k, r));
          }
        }
      }
#pragma unroll
      for (int q = 0; q < RA; ++q)
        if (lane + 32 * q < N) x[lane + 32 * q] = v[q];
    }
  }
)";

// Default warps per matrix: one per 32 rows of the matrix, and at least 8 warps per multiprocessor
// where the squares leave room for few blocks (d n = 128: one block of 128 KiB per SM, so 8 warps
// rather than 4, to hide the shared-memory latency of the panel steps); at most 16 (the trailing
// update of the first panels has (n / tile)^2 tiles: 900 at n = 128, enough for 512 threads).
int default_warps(Precision p, int n) {
    const int blocks_per_sm = std::max<int>(1, int(column_major_max_shared_bytes / shared_memory_bytes(p, n, 1)));
    const int for_rows = (n + 31) / 32, for_latency = (8 + blocks_per_sm - 1) / blocks_per_sm;
    return std::min(16, std::max(for_rows, for_latency));
}

}  // namespace

CholeskyConfig shared_memory_default_config(Routine routine, Precision precision, int n) {
    CholeskyConfig c;
    c.staged = true;
    c.looking = Looking::left;
    c.threads_per_block = 0;  // the block is warps x matrices
    c.warps_per_matrix = default_warps(precision, n);
    // Several matrices per block at small n, so that a block has 4 warps (at most 8 matrices) and
    // a barrier stalls one block of several rather than each matrix's own: the shared memory of
    // 8 matrices of n = 32 in d is 64 KiB, 3 blocks per SM.
    c.matrices_per_block = std::max(1, std::min(8, 4 / c.warps_per_matrix));
    while (c.matrices_per_block > 1 && shared_memory_bytes(precision, n, c.matrices_per_block) > 64 * 1024)
        --c.matrices_per_block;
    if (routine == Routine::potrs) return c;
    // Panels of 8 columns: a panel costs three block barriers and one warp's serial factorisation
    // of its diagonal block (nb steps of nb shuffles), so narrower panels pay more barriers and
    // wider ones leave the other warps waiting longer on warp 0 (not yet measured on a GPU).
    c.nb = std::min(n, 8);
    c.rows_per_thread = n <= 16 ? 2 : shared_memory_default_tile;
    return c;
}

std::string shared_memory_resolve(const ColumnMajorSpec& spec, ColumnMajorShape& s) {
    const CholeskyConfig& c = spec.config;
    const int n = spec.n;
    const bool factors = spec.routine != Routine::potrs;
    const int largest = shared_memory_largest_n(spec.precision);
    if (n < 1 || n > largest)
        return "n: 1 <= n <= " + std::to_string(largest) + " for the shared-memory kernels in " +
               std::string(1, precision_letter(spec.precision)) + " (one n x n matrix must fit " +
               std::to_string(column_major_max_shared_bytes) + " bytes of shared memory; got " + std::to_string(n) + ")";
    if (c.tensor_cores) return "config.tensor_cores: false for the shared-memory kernels";
    if (c.through_interleaved) return "config.through_interleaved: false with config.staged";
    if (c.threads_per_row != 0) return "config.threads_per_row: 0 for the shared-memory kernels";
    if (c.grid_blocks_per_sm != 0) return "config.grid_blocks_per_sm: 0 for the column-major kernels";
    if (c.solve_warps_per_matrix != 0 || c.solve_nb != 0)
        return "config.solve_warps_per_matrix: 0 for the column-major kernels";
    if (c.max_registers != 0 && (c.max_registers < 16 || c.max_registers > 255))
        return "config.max_registers: 0 or 16..255 (got " + std::to_string(c.max_registers) + ")";
    if (factors && (c.nb < 1 || c.nb > shared_memory_max_nb))
        return "config.nb: the shared-memory kernel's panel width, 1.." + std::to_string(shared_memory_max_nb) +
               " (got " + std::to_string(c.nb) + ")";
    if (!factors && c.nb != 0) return "config.nb: 0 for the shared-memory potrs (no panels)";
    if (c.rows_per_thread < 0 || c.rows_per_thread > shared_memory_max_tile || (!factors && c.rows_per_thread != 0))
        return "config.rows_per_thread: the side of the update's register tile, 0 (default " +
               std::to_string(shared_memory_default_tile) + ") or 1.." + std::to_string(shared_memory_max_tile) +
               " (potrs: 0; got " + std::to_string(c.rows_per_thread) + ")";
    if (c.warps_per_matrix < 1 || c.warps_per_matrix > 32)
        return "config.warps_per_matrix: 1..32 warps per matrix for the shared-memory kernels (got " +
               std::to_string(c.warps_per_matrix) + ")";
    const int mpb = c.matrices_per_block > 0 ? c.matrices_per_block : 1;
    s = ColumnMajorShape{};
    s.words = element_bytes(spec.precision) / 4;
    s.vec = 16 / element_bytes(spec.precision);
    s.threads_per_matrix = 32 * c.warps_per_matrix;
    if (mpb * s.threads_per_matrix > codegen::max_threads_per_block)
        return "config.matrices_per_block: " + std::to_string(mpb) + " matrices x " +
               std::to_string(s.threads_per_matrix) + " threads exceed " +
               std::to_string(codegen::max_threads_per_block) + " threads per block";
    s.matrices_per_block = s.slots = mpb;
    s.block_threads = mpb * s.threads_per_matrix;
    s.rows_per_thread = factors ? (c.rows_per_thread > 0 ? c.rows_per_thread : shared_memory_default_tile) : 0;
    s.nrhs_block = 1;  // one right-hand side per warp at a time
    s.off_packed = 0;
    s.shared_bytes = shared_memory_bytes(spec.precision, n, mpb);
    if (s.shared_bytes > column_major_max_shared_bytes)
        return "config.matrices_per_block: " + std::to_string(mpb) + " matrices of n = " + std::to_string(n) +
               " need " + std::to_string(s.shared_bytes) + " bytes of shared memory per block (> " +
               std::to_string(column_major_max_shared_bytes) + ")";
    return "";
}

std::string shared_memory_kernel_name(const ColumnMajorSpec& spec, const ColumnMajorShape& shape) {
    std::string name = std::string(to_string(spec.routine)) + "_cm_" + precision_letter(spec.precision) + "_" +
                       (spec.uplo == Uplo::lower ? "lower" : "upper") + "_n" + std::to_string(spec.n) + "_smem";
    if (spec.routine != Routine::potrs) name += "_nb" + std::to_string(spec.config.nb);
    name += "_w" + std::to_string(spec.config.warps_per_matrix) + "_m" + std::to_string(shape.matrices_per_block);
    if (spec.routine != Routine::potrs) name += "_t" + std::to_string(shape.rows_per_thread);
    return name;
}

std::string shared_memory_kernel(const ColumnMajorSpec& spec, const ColumnMajorShape& shape, const std::string& name,
                                 int min_blocks) {
    const Routine r = spec.routine;
    const char* params =
        r == Routine::potrf ? "T* a, T* const* a_ptrs, long long a_stride, int lda, int* info, int count, int zero"
        : r == Routine::posv
            ? "T* a, T* const* a_ptrs, long long a_stride, int lda, T* b, T* const* b_ptrs, long long b_stride, "
              "int ldb, int nrhs, int ngroups, int* info, int count, int zero"
            : "const T* a, const T* const* a_ptrs, long long a_stride, int lda, T* b, T* const* b_ptrs, "
              "long long b_stride, int ldb, int nrhs, int ngroups, int count";
    std::string text = kHead;
    text += r == Routine::potrs ? kNoFactor : kFactor;
    if (r == Routine::posv) text += "  (void)ngroups;  // one right-hand side per warp at a time\n";
    if (r != Routine::potrf) text += kSolve;
    text += "}\n";
    const bool single = is_single(spec.precision);
    const bool conj = spec.uplo == Uplo::upper && codegen::is_complex(spec.precision);  // U = L^H
    return fill_placeholders(text, {{"NAME", name},
                       {"PARAMS", params},
                       {"THREADS", std::to_string(shape.block_threads)},
                       {"MIN_BLOCKS", std::to_string(min_blocks)},
                       {"N", std::to_string(spec.n)},
                       {"NB", std::to_string(spec.config.nb)},
                       {"TPM", std::to_string(shape.threads_per_matrix)},
                       {"G", std::to_string(shape.matrices_per_block)},
                       {"RT", std::to_string(shape.rows_per_thread)},
                       {"ESIZE", std::to_string(4 * shape.words)},
                       {"UPPER", spec.uplo == Uplo::upper ? "true" : "false"},
                       {"CONJ_IN", conj ? kConjugateIn : ""},
                       {"CONJ_OUT", conj ? "bs_conj" : ""},
                       {"SQRT", single ? "sqrtf" : "sqrt"}});
}

}  // namespace batchsolve::codegen::cholesky
