// The square-grid column-major potrf/posv kernel (codegen/cholesky/square_grid.hpp): its text and the
// generator that fills it.
#include "codegen/cholesky/square_grid.hpp"

#include <stdexcept>

#include "codegen/common.hpp"
#include "codegen/source_writer.hpp"

namespace batchsolve::codegen::cholesky {

namespace {

using codegen::ceil_div;
using codegen::is_single;

std::string I(long long v) { return std::to_string(v); }

// potrf on a square thread grid (square_grid_potrf): P = threads_per_row = ceil(n / rows_per_thread)
// threads per side; thread (tr, tc) holds L(P x + tr, P y + tc) for x >= y (x = y: tr >= tc), the
// lower triangle of its L x L cyclic share (L = ceil(n / P)) and nothing of the other triangle, in
// r[x (x + 1) / 2 + y], so a thread keeps L (L + 1) / 2 elements where the general register kernel
// keeps its full RA x RB tile. Right-looking, one column per step: the P owners of column k publish it
// to a per-matrix double buffer (one barrier per step), every thread scales the entries of its rows and
// columns by 1 / sqrt(a_kk) as it reads them and updates its share. Lower: lanes run along tr, so a
// column's rows are consecutive addresses; upper (L = U^H): lanes run along tc (a row of U). Each
// thread addresses its elements from one pointer stepped by P * lda.
constexpr const char* kSquareGridKernel = R"(
BS_KERNEL_HEAD(@BT@, @MIN_BLOCKS@) @NAME@(@PARAMS@) {
  BS_DECLARE_SMEM(bs_smem);
  const int t = (int)threadIdx.x;
  const int ml = t / @G@;  // matrix slot in the block (slots >= @MPB@ hold padding threads)
  const int q = t - ml * @G@;
  @GRID@
  const long long m = (long long)blockIdx.x * @MPB@ + ml;
  const bool act = ml < @MPB@ && m < (long long)count;
  const bool last_ok = @P@ * (@L@ - 1) + tr < @N@;  // this thread's rows of the last block exist
  T* const cbuf = (T*)bs_smem + ml * @PAIR@;  // two buffers of one column each
  T* const A = act ? (a_ptrs ? a_ptrs[m] : a + m * a_stride) : a;
  T r[@TRI@];
  if (act) {
@LOAD@
  } else {
#pragma unroll
    for (int e = 0; e < @TRI@; ++e) r[e] = bs_zero();
  }
  int fcol = 0;  // 1-based column of the first bad pivot: columns < it hold L, the rest the Schur complement
#pragma unroll
  for (int kb = 0; kb < @L@; ++kb) {
@KK_PRAGMA@
    for (int kk = 0; kk < @P@; ++kk) {
      const int k = kb * @P@ + kk;
      if (k >= @N@) break;
      T* const cb = cbuf + (k & 1) * @LP@;
      // this thread's rows and columns of the step's column: literal offsets from two pointers (indexed
      // as cb[P x + tr], NVRTC computed an address per element: 8 x 8 s n = 64 191 vs 140 instructions a step)
      T* const cr = cb + tr;
      T* const cc = cb + tc;
      if (tc == kk) {
#pragma unroll
        for (int x = kb; x < @L@; ++x) cr[@P@ * x] = r[x * (x + 1) / 2 + kb];
      }
      @SYNC@;
      const R d = bs_real(cb[k]);
      if (fcol == 0 && !bs_pivot_ok(d)) fcol = k + 1;
      if (fcol == 0) {
        const R lkk = @SQRT@(d), rs = (R)1 / lkk;
        T ci[@L@], cj[@L@];
#pragma unroll
        for (int x = kb; x < @L@; ++x) ci[x] = bs_scale(cr[@P@ * x], rs);
#pragma unroll
        for (int y = kb; y < @L@; ++y) cj[y] = bs_scale(cc[@P@ * y], rs);
        if (tc == kk) {
#pragma unroll
          for (int x = kb; x < @L@; ++x) {
            const int i = @P@ * x + tr;
            if (i > k) r[x * (x + 1) / 2 + kb] = ci[x];
            else if (i == k) r[x * (x + 1) / 2 + kb] = bs_from_real(lkk);
          }
        }
#pragma unroll
        for (int y = kb; y < @L@; ++y)
#pragma unroll
          for (int x = y; x < @L@; ++x)
            if (y > kb || tc > kk) r[x * (x + 1) / 2 + y] = bs_sub_mul_conj(r[x * (x + 1) / 2 + y], ci[x], cj[y]);
      }
    }
  }
@SOLVE@  if (act) {
@STORE@
    if (q == 0) info[m] = fcol;
  }
  (void)zero;
}
)";

// The lean step loop (config.lean_addressing), otherwise kSquareGridKernel's grid, share and order.
// What it drops, each a cost every thread paid at every step (the shipped loop ran 1.07-1.5x slower
// than the standalone prototype without them, results/2026-12-03-h200-6296ebe-small-m1):
//  - the branch around a step: a failed pivot (or an earlier one, fcol != 0) makes the step's scale 0,
//    so the owners keep their column and every update subtracts ci * 0 = 0 (finite entries): the matrix
//    stays as the failing step found it, info the first bad column, as with the branch;
//  - the row guards where P divides n (LAST_OK literal true, no step past n);
//  - scalar reads of the step's column: row block t's entries at cb[t * LP + x], so a thread's rows and
//    columns are 16-byte vectors (LP a multiple of VEC; the vectors from the one holding x = kb on);
//  - one of the two scalings: L(i, k) L(j, k)^H = a_ik conj(a_jk / a_kk), so only the column side is
//    scaled (by 1 / a_kk), and the owners alone scale their column by 1 / l_kk to store it.
constexpr const char* kSquareGridLeanKernel = R"(
BS_KERNEL_HEAD(@BT@, @MIN_BLOCKS@) @NAME@(@PARAMS@) {
  BS_DECLARE_SMEM(bs_smem);
  const int t = (int)threadIdx.x;
  const int ml = t / @G@;  // matrix slot in the block (slots >= @MPB@ hold padding threads)
  const int q = t - ml * @G@;
  @GRID@
  const long long m = (long long)blockIdx.x * @MPB@ + ml;
  const bool act = ml < @MPB@ && m < (long long)count;
  const bool last_ok = @LAST_OK@;  // this thread's rows of the last block exist
  T* const cbuf = (T*)bs_smem + ml * @PAIR@;  // two buffers of one column each
  T* const A = act ? (a_ptrs ? a_ptrs[m] : a + m * a_stride) : a;
  T r[@TRI@];
  if (act) {
@LOAD@
  } else {
#pragma unroll
    for (int e = 0; e < @TRI@; ++e) r[e] = bs_zero();
  }
@RHS_LOAD@  int fcol = 0;  // 1-based column of the first bad pivot: columns < it hold L, the rest the Schur complement
#pragma unroll
  for (int kb = 0; kb < @L@; ++kb) {
@KK_PRAGMA@
    for (int kk = 0; kk < @P@; ++kk) {
      const int k = kb * @P@ + kk;
@BREAK@      T* const cb = cbuf + (k & 1) * @BUF@;
      T* const cr = cb + tr * @LP@;        // rows P x + tr of the step's column at cr[x]
      const T* const cc = cb + tc * @LP@;  // rows P y + tc
      if (tc == kk) {
#pragma unroll
        for (int x = kb; x < @L@; ++x) cr[x] = r[x * (x + 1) / 2 + kb];
      }
@RHS_PUBLISH@      @SYNC@;
      const R d = bs_real(cb[kk * @LP@ + kb]);
      const bool live = fcol == 0 && bs_pivot_ok(d);
      fcol = (fcol == 0 && !live) ? k + 1 : fcol;
      const R lkk = @SQRT@(d);
      const R rs = live ? (R)1 / lkk : (R)0;  // 0: a frozen matrix, nothing changes
      const R rd = rs * rs;
      T ci[@LP@], cj[@LP@];
#pragma unroll
      for (int v = kb / @VEC@; v < @LP@ / @VEC@; ++v) {
        const bs_vec u = BS_VEC_AT(cr + @VEC@ * v), w = BS_VEC_AT(cc + @VEC@ * v);
#pragma unroll
        for (int e = 0; e < @VEC@; ++e) {
          ci[@VEC@ * v + e] = u.v[e];
          cj[@VEC@ * v + e] = bs_scale(w.v[e], rd);
        }
      }
      if (tc == kk && live) {
#pragma unroll
        for (int x = kb; x < @L@; ++x) {
          const int i = @P@ * x + tr;
          if (i > k) r[x * (x + 1) / 2 + kb] = bs_scale(ci[x], rs);
          else if (i == k) r[x * (x + 1) / 2 + kb] = bs_from_real(lkk);
        }
      }
@RHS_UPDATE@#pragma unroll
      for (int y = kb; y < @L@; ++y)
#pragma unroll
        for (int x = y; x < @L@; ++x)
          if (y > kb || tc > kk) r[x * (x + 1) / 2 + y] = bs_sub_mul_conj(r[x * (x + 1) / 2 + y], ci[x], cj[y]);
    }
  }
@RHS_STORE@@SOLVE@  if (act) {
@STORE@
    if (q == 0) info[m] = fcol;
  }
  (void)zero;
}
)";

// posv with the lean step loop: the first right-hand side is forward-substituted during the
// elimination, so its solve after the factorisation is the backward pass alone. The threads of column
// block 0 (tc = 0) hold its rows P x + tr; at step k the holder of b_k publishes it beside the column
// (slot LP * P of the buffer), and each of them takes y_k = b_k / l_kk and b_i -= l_ik y_k =
// a_ik (b_k / a_kk) for its rows below k: L products a step in one thread of P, instead of a warp's
// serial pass of n shuffles after it. y goes to the column buffer the last step did not use.
constexpr const char* kLeanRhsLoad = R"(  T bv[@L@];  // rows P x + tr of the first right-hand side (tc = 0), y once its step is past
  {
    const bool has = act && tc == 0 && nrhs > 0;
    T* const b0 = has ? (b_ptrs ? b_ptrs[m] : b + m * b_stride) : b;
#pragma unroll
    for (int x = 0; x < @L@; ++x) bv[x] = has && @P@ * x + tr < @N@ ? b0[@P@ * x + tr] : bs_zero();
  }
)";
constexpr const char* kLeanRhsPublish = R"(      if (tc == 0 && tr == kk) cb[@LP@ * @P@] = bv[kb];
)";
constexpr const char* kLeanRhsUpdate = R"(      if (tc == 0) {
        const T bk = cb[@LP@ * @P@];
        const T bd = bs_scale(bk, rd);
#pragma unroll
        for (int x = kb; x < @L@; ++x) {
          const int i = @P@ * x + tr;
          if (i > k) bv[x] = bs_sub_mul(bv[x], ci[x], bd);
          else if (i == k) bv[x] = bs_scale(bk, rs);
        }
      }
)";
constexpr const char* kLeanRhsStore = R"(  if (act && tc == 0) {
    T* const yb = cbuf + (@N@ & 1) * @BUF@;  // free: the last step used the other buffer
#pragma unroll
    for (int x = 0; x < @L@; ++x)
      if (@P@ * x + tr < @N@) yb[@P@ * x + tr] = bv[x];
  }
)";

// posv on a square grid: after the factorisation every thread writes its share of L into a packed
// triangle in shared memory (column j from j (2n + 1 - j) / 2); then warp w of the matrix's G / 32
// warps takes right-hand sides w, w + G / 32, ... (lane l holds rows l + 32 a of one column of B) and
// solves L y = b and L^H x = y by axpy steps, the new unknown broadcast by a shuffle (the staged
// kernels' solve, codegen/cholesky/staged.cpp). A failed matrix leaves its B untouched.
constexpr const char* kSquareGridSolve = R"(  {
    T* const s = (T*)(bs_smem + @OFF_PACKED@) + ml * @NP@;
    if (act && fcol == 0) {
#pragma unroll
      for (int x = 0; x < @L@; ++x)
#pragma unroll
        for (int y = 0; y <= x; ++y) {
          const int i = @P@ * x + tr, j = @P@ * y + tc;
          if (@IN@) s[j * (2 * @N@ + 1 - j) / 2 + i - j] = r[x * (x + 1) / 2 + y];
        }
    }
    __syncthreads();
    if (act && fcol == 0) {
      const int lane = q & 31, warp = q >> 5;
      constexpr int RA = (@N@ + 31) / 32, W = @G@ / 32;
      T* const bm = b_ptrs ? b_ptrs[m] : b + m * b_stride;
      R rinv[RA];  // 1 / l_ii of the rows this lane holds
#pragma unroll
      for (int u = 0; u < RA; ++u) {
        const int i = lane + 32 * u;
        rinv[u] = i < @N@ ? (R)1 / bs_real(s[i * (2 * @N@ + 1 - i) / 2]) : (R)0;
      }
      for (int col = warp; col < nrhs; col += W) {
        T* const xb = bm + (long long)col * ldb;
        T v[RA];
#pragma unroll
        for (int u = 0; u < RA; ++u) v[u] = lane + 32 * u < @N@ ? xb[lane + 32 * u] : bs_zero();
#pragma unroll
        for (int kb = 0; kb < RA; ++kb) {  // forward: y_k, then b_i -= l_ik y_k below it
#pragma unroll 1
          for (int k = 32 * kb; k < 32 * kb + 32 && k < @N@; ++k) {
            const T yk = bs_shfl(bs_scale(v[kb], rinv[kb]), k - 32 * kb, 32);
            if (lane == k - 32 * kb) v[kb] = yk;
            const T* colk = s + k * (2 * @N@ + 1 - k) / 2 - k;  // colk[i] = L(i, k)
#pragma unroll
            for (int u = kb; u < RA; ++u)
              if (lane + 32 * u > k && lane + 32 * u < @N@) v[u] = bs_sub_mul(v[u], colk[lane + 32 * u], yk);
          }
        }
#pragma unroll
        for (int kb = RA - 1; kb >= 0; --kb) {  // backward: x_k, then y_i -= conj(l_ki) x_k above it
#pragma unroll 1
          for (int k = (32 * kb + 31 < @N@ - 1 ? 32 * kb + 31 : @N@ - 1); k >= 32 * kb; --k) {
            const T xk = bs_shfl(bs_scale(v[kb], rinv[kb]), k - 32 * kb, 32);
            if (lane == k - 32 * kb) v[kb] = xk;
#pragma unroll
            for (int u = 0; u <= kb; ++u) {
              const int i = lane + 32 * u;
              if (i < k) v[u] = bs_sub_mul_conj(v[u], xk, s[i * (2 * @N@ + 1 - i) / 2 + k - i]);
            }
          }
        }
#pragma unroll
        for (int u = 0; u < RA; ++u)
          if (lane + 32 * u < @N@) xb[lane + 32 * u] = v[u];
      }
    }
    (void)ngroups;
  }
)";

}  // namespace

// The register shape on a square thread grid (kSquareGridKernel): potrf at a side >= 
// column_major_square_grid_min_side; posv at a side that is a multiple of 8 (a matrix's threads whole
// warps, which solve from the factor) with block barriers. Decided from the configuration alone, so
// that resolve_shape can size the thread's share and the shared memory by it.
int square_grid_column_pitch(const ColumnMajorSpec& spec, int side, int vec) {
    if (!spec.config.lean_addressing) return side;
    const int vectors = ceil_div(side, vec);
    return (vectors % 2 == 0 ? vectors + 1 : vectors) * vec;
}

long long square_grid_buffer_elements(const ColumnMajorSpec& spec, int side, int threads_per_row, int vec) {
    const long long column = (long long)square_grid_column_pitch(spec, side, vec) * threads_per_row;
    // lean posv: one more vector, its first element the step's row of the right-hand side
    return spec.config.lean_addressing && spec.routine == ColumnMajorRoutine::posv ? column + vec : column;
}

bool square_grid_potrf(const ColumnMajorSpec& spec, int row_threads, int threads_per_row) {
    if (spec.config.staged || spec.config.through_interleaved || row_threads != threads_per_row) return false;
    if (spec.routine == ColumnMajorRoutine::posv)
        return threads_per_row % column_major_square_grid_posv_side == 0 && !warp_synchronous_steps(spec);
    return spec.routine == ColumnMajorRoutine::potrf && threads_per_row >= column_major_square_grid_min_side;
}

std::string square_grid_kernel(const ColumnMajorSpec& spec, const ColumnMajorShape& shape, const std::string& name,
                               int min_blocks) {
    const int n = spec.n;
    const bool upper = spec.uplo == Uplo::upper;
    const int P = shape.threads_per_row, L = ceil_div(n, P);
    const std::string SP = I(P), tri = I((long long)L * (L + 1) / 2);
    // the pointer stepped plainly: behind BS_OPAQUE_I64 NVRTC kept more 64-bit temporaries (s n = 64 on
    // 8 x 8: 95 registers instead of 79)
    const std::string step = "p += step;";
    // in(x, y): element (P x + tr, P y + tc) lies in the triangle and in the matrix
    const std::string in = "(x > y || tr >= tc) && (x < " + I(L - 1) + " || last_ok)";
    std::string grid, load, store;
    if (spec.config.compile_time_ld) {  // lda = n: element (i, j) at i + n j, every offset a literal after unrolling
        const std::string PN = I((long long)P * n);
        grid = upper ? "const int tc = q % " + SP + ", tr = q / " + SP + ";" : "const int tr = q % " + SP + ", tc = q / " + SP + ";";
        const std::string walk = std::string(upper ? "    T* const p = A + tr * " + I(n) + " + tc;  // U(tc, tr): column tr of U\n"
                                                   : "    T* const p = A + tc * " + I(n) + " + tr;  // column tc, row tr\n") +
                                 "#pragma unroll\n    for (int x = 0; x < " + I(L) + "; ++x) {\n"
                                 "#pragma unroll\n      for (int y = 0; y <= x; ++y)\n        ";
        const std::string at = upper ? "p[" + PN + " * x + " + SP + " * y]" : "p[" + PN + " * y + " + SP + " * x]";
        load = walk + "r[x * (x + 1) / 2 + y] = (" + in + ") ? " + (upper ? "bs_conj(" + at + ")" : at) + " : bs_zero();\n    }";
        store = walk + "if (" + in + ") " + at + " = " + (upper ? "bs_conj(r[x * (x + 1) / 2 + y])" : "r[x * (x + 1) / 2 + y]") +
                ";\n    }";
    } else if (!upper) {  // lanes along tr: a warp reads P consecutive rows of a column per element
        grid = "const int tr = q % " + SP + ", tc = q / " + SP + ";";
        const std::string walk = "    const long long step = (long long)" + SP + " * lda;  // P columns\n"
                                 "    T* p = A + (long long)tc * lda + tr;  // column tc, row tr\n"
                                 "#pragma unroll\n    for (int y = 0; y < " + I(L) + "; ++y) {\n"
                                 "#pragma unroll\n      for (int x = y; x < " + I(L) + "; ++x)\n        ";
        load = walk + "r[x * (x + 1) / 2 + y] = (" + in + ") ? p[" + SP + " * x] : bs_zero();\n      " + step + "\n    }";
        store = walk + "if (" + in + ") p[" + SP + " * x] = r[x * (x + 1) / 2 + y];\n      " + step + "\n    }";
    } else {  // L(i, j) = conj(U(j, i)); lanes along tc: a warp reads P consecutive entries of a column of U
        grid = "const int tc = q % " + SP + ", tr = q / " + SP + ";";
        const std::string walk = "    const long long step = (long long)" + SP + " * lda;  // P columns\n"
                                 "    T* p = A + (long long)tr * lda + tc;  // U(tc, tr): column tr of U\n"
                                 "#pragma unroll\n    for (int x = 0; x < " + I(L) + "; ++x) {\n"
                                 "#pragma unroll\n      for (int y = 0; y <= x; ++y)\n        ";
        load = walk + "r[x * (x + 1) / 2 + y] = (" + in + ") ? bs_conj(p[" + SP + " * y]) : bs_zero();\n      " + step + "\n    }";
        store = walk + "if (" + in + ") p[" + SP + " * y] = bs_conj(r[x * (x + 1) / 2 + y]);\n      " + step + "\n    }";
    }
    const bool posv = spec.routine == ColumnMajorRoutine::posv;
    const bool lean = spec.config.lean_addressing;
    const int LP = square_grid_column_pitch(spec, L, shape.vec);
    const long long buf = square_grid_buffer_elements(spec, L, P, shape.vec);
    std::string params = "T* a, T* const* a_ptrs, long long a_stride, int lda, ";
    if (posv) params += "T* b, T* const* b_ptrs, long long b_stride, int ldb, int nrhs, int ngroups, ";
    params += "int* info, int count, int zero";
    std::string solve_text = kSquareGridSolve;
    if (posv && lean) {  // the first right-hand side comes forward-substituted (kLeanRhsLoad...): backward only
        const std::string load = "#pragma unroll\n        for (int u = 0; u < RA; ++u) v[u] = lane + 32 * u < @N@ ? xb[lane + 32 * u] : bs_zero();\n";
        const std::string backward = "#pragma unroll\n        for (int kb = RA - 1; kb >= 0; --kb) {  // backward";
        const std::size_t at_load = solve_text.find(load), at_backward = solve_text.find(backward);
        if (at_load == std::string::npos || at_backward == std::string::npos)
            throw std::logic_error("square_grid_kernel: the solve text changed; update its lean form");
        solve_text.insert(at_backward, "        }\n");
        solve_text.insert(at_load,
                          "        if (col == 0) {  // y from the elimination\n"
                          "          const T* const yb = cbuf + (@N@ & 1) * @BUF@;\n"
                          "#pragma unroll\n"
                          "          for (int u = 0; u < RA; ++u) v[u] = lane + 32 * u < @N@ ? yb[lane + 32 * u] : bs_zero();\n"
                          "        } else {\n");
    }
    const std::string solve =
        posv ? fill_placeholders(solve_text, {{"OFF_PACKED", I((long long)shape.off_packed)},
                                              {"BUF", I(buf)},
                                                    {"NP", I((long long)n * (n + 1) / 2)},
                                                    {"L", I(L)},
                                                    {"P", SP},
                                                    {"N", I(n)},
                                                    {"G", I(shape.threads_per_matrix)},
                                                    {"IN", in}})
             : "";
    const auto rhs = [&](const char* text) {
        return posv && lean ? fill_placeholders(text, {{"L", I(L)}, {"P", SP}, {"N", I(n)}, {"LP", I(LP)}, {"BUF", I(buf)}})
                            : std::string();
    };
    return fill_placeholders(lean ? kSquareGridLeanKernel : kSquareGridKernel,
                             {{"NAME", name},
                              {"RHS_LOAD", rhs(kLeanRhsLoad)},
                              {"RHS_PUBLISH", rhs(kLeanRhsPublish)},
                              {"RHS_UPDATE", rhs(kLeanRhsUpdate)},
                              {"RHS_STORE", rhs(kLeanRhsStore)},
                              {"LAST_OK", n % P == 0 ? "true" : I(P) + " * " + I(L - 1) + " + tr < " + I(n)},
                              {"BREAK", n % P == 0 ? "" : "      if (k >= " + I(n) + ") break;\n"},
                              {"BUF", I(buf)},
                              {"VEC", I(shape.vec)},
                              {"PARAMS", params},
                              {"SOLVE", solve},
                              {"BT", I(shape.block_threads)},
                              {"MIN_BLOCKS", I(min_blocks)},
                              {"G", I(shape.threads_per_matrix)},
                              {"MPB", I(shape.matrices_per_block)},
                              {"GRID", grid},
                              {"P", SP},
                              {"L", I(L)},
                              {"N", I(n)},
                              {"LP", lean ? I(LP) : I((long long)L * P)},
                              {"PAIR", I(2LL * buf)},
                              {"TRI", tri},
                              {"KK_PRAGMA", spec.config.full_unroll ? "#pragma unroll" : "#pragma unroll 1"},
                              {"SYNC", warp_synchronous_steps(spec) ? "__syncwarp()" : "__syncthreads()"},
                              {"SQRT", is_single(spec.precision) ? "sqrtf" : "sqrt"},
                              {"LOAD", load},
                              {"STORE", store}});
}

}  // namespace batchsolve::codegen::cholesky
