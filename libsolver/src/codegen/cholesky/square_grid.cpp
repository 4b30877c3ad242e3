// The square-grid column-major potrf/posv kernel (codegen/cholesky/square_grid.hpp): its text and the
// generator that fills it.
#include "codegen/cholesky/square_grid.hpp"

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
    std::string params = "T* a, T* const* a_ptrs, long long a_stride, int lda, ";
    if (posv) params += "T* b, T* const* b_ptrs, long long b_stride, int ldb, int nrhs, int ngroups, ";
    params += "int* info, int count, int zero";
    const std::string solve =
        posv ? fill_placeholders(kSquareGridSolve, {{"OFF_PACKED", I((long long)shape.off_packed)},
                                                    {"NP", I((long long)n * (n + 1) / 2)},
                                                    {"L", I(L)},
                                                    {"P", SP},
                                                    {"N", I(n)},
                                                    {"G", I(shape.threads_per_matrix)},
                                                    {"IN", in}})
             : "";
    return fill_placeholders(kSquareGridKernel,
                             {{"NAME", name},
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
                              {"LP", I((long long)L * P)},
                              {"PAIR", I(2LL * L * P)},
                              {"TRI", tri},
                              {"KK_PRAGMA", spec.config.full_unroll ? "#pragma unroll" : "#pragma unroll 1"},
                              {"SYNC", warp_synchronous_steps(spec) ? "__syncwarp()" : "__syncthreads()"},
                              {"SQRT", is_single(spec.precision) ? "sqrtf" : "sqrt"},
                              {"LOAD", load},
                              {"STORE", store}});
}

}  // namespace batchsolve::codegen::cholesky
