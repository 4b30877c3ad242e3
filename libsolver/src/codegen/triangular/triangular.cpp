// Generator of the variable-size triangular kernels (see triangular.hpp): leaf solve and multiply,
// diagonal-block inversion, and the potrf panel, each as one CUDA kernel whose text depends on the
// precision, L's orientation and the register/warp blocking only; sizes, offsets and the transpose,
// conjugate and unit-diagonal flags are run-time arguments, so a handful of kernels serve every call.
#include "codegen/triangular/triangular.hpp"

#include <sstream>

#include "batchsolve/vbatched_triangular.hpp"

#include "codegen/common.hpp"
#include "codegen/prelude.hpp"
#include "codegen/source_writer.hpp"

namespace batchsolve::codegen::triangular {

const char* to_string(KernelKind k) {
    switch (k) {
        case KernelKind::solve: return "solve";
        case KernelKind::multiply: return "multiply";
        case KernelKind::invert: return "invert";
        case KernelKind::potrf_panel: return "potrf_panel";
    }
    return "?";
}

std::string kernel_arguments_source() {
    // Field for field the host's KernelArguments (pointers 8 bytes, ints 4, doubles 8: same layout).
    return R"(struct bs_tri_args {
  const void* const* a; const int* lda; void* const* b; const int* ldb;
  const int* tri_sizes; const int* rhs_sizes; const int* skip; void* work; long long work_stride;
  int tri_sub, tri_lim, rhs_sub, rhs_lim, a_row0, a_col0, b_row0, b_col0;
  int transposed, conjugate, unit, right, from_work, block_order, batch, upper_storage, zero_only;
  double alpha_re, alpha_im;
};
)";
}

std::string TriangularFamily::kernel_name(const TriangularKernelSpec& s) const {
    std::ostringstream o;
    o << "bs_tri_" << to_string(s.kind) << "_" << precision_letter(s.precision);
    if (s.kind != KernelKind::potrf_panel) o << (s.lower ? "_lower" : "_upper") << "_w" << s.config.warps_per_block;
    if (s.kind == KernelKind::solve || s.kind == KernelKind::multiply) o << "_c" << s.config.columns_per_thread;
    return o.str();
}

namespace {

int threads_of(const TriangularKernelSpec& s) {
    return s.kind == KernelKind::potrf_panel ? 32 : 32 * s.config.warps_per_block;
}

// Row pitch of the shared triangle tile: one more than a warp, so that the lanes of a column access
// (lane p reads L(p, k)) fall into different banks.
constexpr int kPitch = max_leaf_order + 1;

// ---- the fixed text of the kernels (source_writer.hpp: raw strings, holes @KEY@) -------------------

// What only these kernels add to the one prelude: alpha from the arguments' two doubles (@ALPHA@), the
// arguments' struct (@ARGUMENTS@) and the window of a problem's sizes (VSize of blas3_internal.hpp).
constexpr const char* kPreludeTail = R"(BS_DEVICE T bs_alpha(double re, double im) { return @ALPHA@; }
@ARGUMENTS@BS_DEVICE int bs_window(int v, int sub, int lim) { v -= sub; return v < 0 ? 0 : (v > lim ? lim : v); }
)";

// The dynamic shared memory: the triangle's tile (max_leaf_order rows of kPitch elements) and, where
// the kernel substitutes, the reciprocals of L's diagonal behind it (@RDIAG@: kRdiag or nothing).
constexpr const char* kSharedTile = R"(  BS_DECLARE_SMEM(bs_smem);
  T* tile = reinterpret_cast<T*>(bs_smem);
@RDIAG@)";
constexpr const char* kRdiag = "  T* rdiag = tile + @TILE@;\n";

// Loads L (r x r, canonical orientation) into tile[p * PITCH + q] from the arguments @ARGS@: zero
// outside the triangle (@IN_TRIANGLE@) and beyond r, a unit diagonal as 1; with reciprocals
// (@RECIPROCAL@), rdiag[p] = 1 / L(p, p) (1 beyond r), so that the substitutions multiply instead of
// dividing in their serial chain. Every thread of the block takes part.
constexpr const char* kLoadTriangle = R"(  {
    const T* ap = (const T*)@ARGS@.a[i];
    const long long lda = @ARGS@.lda[i];
    const T* wp = (const T*)@ARGS@.work + (long long)i * @ARGS@.work_stride +
                  (long long)(@ARGS@.block_order > 0 ? @ARGS@.tri_sub / @ARGS@.block_order : 0) * @ARGS@.block_order * @ARGS@.block_order;
    for (int e = threadIdx.x; e < @TILE_ELEMENTS@; e += blockDim.x) {
      const int p = e % @ORDER@, q = e / @ORDER@;
      T v = bs_zero();
      if (p < r && q < r && @IN_TRIANGLE@) {
        if (@ARGS@.from_work) v = wp[p + (long long)q * @ARGS@.block_order];
        else if (p == q && @ARGS@.unit) v = bs_from_real((R)1);
        else {
          const int row = @ARGS@.transposed ? q : p, col = @ARGS@.transposed ? p : q;
          v = ap[(long long)(@ARGS@.a_row0 + @ARGS@.tri_sub + row) + (long long)(@ARGS@.a_col0 + @ARGS@.tri_sub + col) * lda];
          if (@ARGS@.conjugate) v = bs_conj(v);
        }
      }
      tile[p * @PITCH@ + q] = v;
@RECIPROCAL@    }
  }
  __syncthreads();
)";
constexpr const char* kReciprocal = "      if (p == q) rdiag[p] = p < r ? bs_div(bs_from_real((R)1), v) : bs_from_real((R)1);\n";

// solve / multiply, up to the triangle's load: the problem of the block, its window, the addressing of
// C in B (down the columns or along the rows) and alpha = 0 (C = 0, A not read, as BLAS).
constexpr const char* kLeafEntry = R"(  const int i = blockIdx.x;
  if (i >= args.batch || (args.skip && args.skip[i] != 0)) return;
  // adaptive subgrid truncation: blocks beyond this problem's sizes leave at once
  const int r = bs_window(args.tri_sizes[i], args.tri_sub, args.tri_lim);
  const int nr = bs_window(args.rhs_sizes[i], args.rhs_sub, args.rhs_lim);
  const int per_block = @PER_BLOCK@;
  if (r == 0 || nr == 0 || (int)blockIdx.y * per_block >= nr) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T* bp = (T*)args.b[i];
  const long long ldb = args.ldb[i];
  // C(p, j): B(row0 + p, col0 + j) for the left side, B(row0 + j, col0 + p) for the right
  const long long step_p = args.right ? ldb : 1, step_j = args.right ? 1 : ldb;
  const long long origin = args.right
      ? (long long)(args.b_row0 + args.rhs_sub) + (long long)(args.b_col0 + args.tri_sub) * ldb
      : (long long)(args.b_row0 + args.tri_sub) + (long long)(args.b_col0 + args.rhs_sub) * ldb;
  const T alpha = bs_alpha(args.alpha_re, args.alpha_im);
  if (args.zero_only) {  // alpha = 0: C = 0, A never read (the block returns as a whole)
    for (int first = blockIdx.y * per_block + warp * @CPT@; first < nr; first += gridDim.y * per_block)
      for (int c = 0; c < @CPT@ && first + c < nr; ++c)
        for (int p = lane; p < r; p += 32) bp[origin + p * step_p + (first + c) * step_j] = bs_zero();
    return;
  }
)";

// Each warp's columns_per_thread right-hand sides in registers, lane p their row p (@SCALE@: alpha for
// the solve, which scales before substituting; 1 for the product, which scales its result).
constexpr const char* kLeafLoad = R"(  for (int first = blockIdx.y * per_block + warp * @CPT@; first < nr; first += gridDim.y * per_block) {
    T x[@CPT@];
#pragma unroll
    for (int c = 0; c < @CPT@; ++c) {
      const int j = first + c;
      x[c] = (lane < r && j < nr) ? bs_mul(@SCALE@, bp[origin + lane * step_p + j * step_j]) : bs_zero();
    }
)";

// Substitution: lane k finishes x_k, every other lane in the unsolved part subtracts L(p, k) x_k.
constexpr const char* kLeafSolve = R"(    @K_LOOP@ {
      const T rkk = rdiag[k];
      const T lpk = tile[lane * @PITCH@ + k];
#pragma unroll
      for (int c = 0; c < @CPT@; ++c) {
        const T xk = bs_mul(bs_shfl(x[c], k), rkk);  // x_k final: every lane scales lane k's value
        if (lane == k) x[c] = xk;
        else if (@UNSOLVED@) x[c] = bs_fms(lpk, xk, x[c]);
      }
    }
)";

// Product: lane p accumulates L(p, k) c_k over its row of the triangle.
constexpr const char* kLeafMultiply = R"(    T acc[@CPT@];
#pragma unroll
    for (int c = 0; c < @CPT@; ++c) acc[c] = bs_zero();
    for (int k = 0; k < r; ++k) {
      const T lpk = tile[lane * @PITCH@ + k];
#pragma unroll
      for (int c = 0; c < @CPT@; ++c) acc[c] = bs_fma(lpk, bs_shfl(x[c], k), acc[c]);
    }
#pragma unroll
    for (int c = 0; c < @CPT@; ++c) x[c] = bs_mul(alpha, acc[c]);
)";

constexpr const char* kLeafStore = R"(#pragma unroll
    for (int c = 0; c < @CPT@; ++c) {
      const int j = first + c;
      if (lane < r && j < nr) bp[origin + lane * step_p + j * step_j] = x[c];
    }
  }
}
)";

// invert: the diagonal block at block_first of the triangle (its origin shifted there), then warp w
// inverts columns w, w + warps, ... by substitution against unit vectors into the workspace.
constexpr const char* kInvertEntry = R"(  const int i = blockIdx.x;
  if (i >= args.batch || (args.skip && args.skip[i] != 0)) return;
  const int nb = args.block_order;
  const int whole = bs_window(args.tri_sizes[i], args.tri_sub, args.tri_lim);
  const int block_first = blockIdx.y * nb;
  const int r = bs_window(whole, block_first, nb);
  if (r == 0) return;
  // the diagonal block at block_first of the triangle: shift the triangle's origin there
  bs_tri_args local = args;
  local.tri_sub = args.tri_sub + block_first;
  local.from_work = 0;
)";

constexpr const char* kInvertColumns = R"(  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T* out = (T*)args.work + (long long)i * args.work_stride + (long long)blockIdx.y * nb * nb;
  for (int q = warp; q < nb; q += @WARPS@) {
    T y = bs_from_real(lane == q ? (R)1 : (R)0);
    @K_LOOP@ {
      const T yk = bs_mul(bs_shfl(y, k), rdiag[k]);
      if (lane == k) y = yk;
      else if (@UNSOLVED@) y = bs_fms(tile[lane * @PITCH@ + k], yk, y);
    }
    if (lane < nb) out[lane + (long long)q * nb] = y;
  }
}
)";

// potrf_panel: one warp per matrix factors the block of order r = window(n_i, tri_sub, tri_lim) at
// (tri_sub, tri_sub) in shared memory, right-looking, lane p owning row p; info[i] = tri_sub + k at a
// pivot k that is not positive (or NaN). The info array arrives as args.skip.
constexpr const char* kPotrfPanel = R"(  const int i = blockIdx.x;
  if (i >= args.batch || args.skip[i] != 0) return;
  const int r = bs_window(args.tri_sizes[i], args.tri_sub, args.tri_lim);
  if (r == 0) return;
  const int lane = threadIdx.x;
  T* ap = (T*)args.a[i];
  const long long lda = args.lda[i];
  const int j = args.tri_sub;
  // L(p, q) = A(j + p, j + q), or conj(A(j + q, j + p)) when the upper triangle holds U = L^H
  for (int q = 0; q < r; ++q) {
    if (lane < r && lane >= q) {
      T v = args.upper_storage ? bs_conj(ap[(long long)(j + q) + (long long)(j + lane) * lda])
                               : ap[(long long)(j + lane) + (long long)(j + q) * lda];
      tile[lane * @PITCH@ + q] = v;
    }
  }
  __syncwarp();
  int failed = 0;
  for (int k = 0; k < r; ++k) {
    const R d = bs_real(tile[k * @DIAGONAL_STEP@]);
    if (!(d > (R)0)) { failed = k + 1; break; }  // the same value in every lane: a uniform exit
    const R lkk = sqrt(d);
    __syncwarp();
    if (lane == k) tile[k * @DIAGONAL_STEP@] = bs_from_real(lkk);
    if (lane > k && lane < r) tile[lane * @PITCH@ + k] = bs_div_real(tile[lane * @PITCH@ + k], lkk);
    __syncwarp();
    if (lane > k && lane < r) {
      const T lpk = tile[lane * @PITCH@ + k];
      for (int c = k + 1; c <= lane; ++c)
        tile[lane * @PITCH@ + c] = bs_fms(lpk, bs_conj(tile[c * @PITCH@ + k]), tile[lane * @PITCH@ + c]);
    }
    __syncwarp();
  }
  __syncwarp();
  for (int q = 0; q < r; ++q) {
    if (lane < r && lane >= q) {
      const T v = tile[lane * @PITCH@ + q];
      if (args.upper_storage) ap[(long long)(j + q) + (long long)(j + lane) * lda] = bs_conj(v);
      else ap[(long long)(j + lane) + (long long)(j + q) * lda] = v;
    }
  }
  if (failed && lane == 0) ((int*)args.skip)[i] = j + failed;
}
)";

// ---- the kernels, written through the one SourceWriter --------------------------------------------

std::string text(int v) { return std::to_string(v); }

// The loop over k of a substitution: forward for a lower triangle, backward for an upper one, and the
// lanes still unsolved at step k.
std::string k_loop(bool lower) { return lower ? "for (int k = 0; k < r; ++k)" : "for (int k = r - 1; k >= 0; --k)"; }
std::string unsolved(bool lower) { return lower ? "lane > k" : "lane < k"; }

void shared_tile(SourceWriter& w, bool reciprocals) {
    w.raw(fill_placeholders(kSharedTile, {{"RDIAG", reciprocals ? fill_placeholders(kRdiag, {{"TILE", text(max_leaf_order * kPitch)}}) : ""}}));
}

void load_triangle(SourceWriter& w, bool lower, bool reciprocals, const std::string& arguments) {
    w.raw(fill_placeholders(kLoadTriangle, {{"ARGS", arguments},
                                            {"TILE_ELEMENTS", text(max_leaf_order * max_leaf_order)},
                                            {"ORDER", text(max_leaf_order)},
                                            {"IN_TRIANGLE", lower ? "p >= q" : "p <= q"},
                                            {"PITCH", text(kPitch)},
                                            {"RECIPROCAL", reciprocals ? kReciprocal : ""}}));
}

// solve / multiply: one thread block per (problem, group of right-hand sides); each warp takes
// columns_per_thread right-hand sides, lane p their row p.
void leaf_kernel(SourceWriter& w, const TriangularKernelSpec& s, const std::string& name) {
    const std::string cpt = text(s.config.columns_per_thread);
    const bool solve = s.kind == KernelKind::solve;
    w.line("BS_KERNEL_HEAD(" + text(threads_of(s)) + ", 1) " + name + "(const bs_tri_args args) {");
    shared_tile(w, solve);
    w.raw(fill_placeholders(kLeafEntry, {{"PER_BLOCK", text(s.config.warps_per_block * s.config.columns_per_thread)},
                                         {"CPT", cpt}}));
    load_triangle(w, s.lower, solve, "args");
    w.raw(fill_placeholders(kLeafLoad, {{"CPT", cpt}, {"SCALE", solve ? "alpha" : "bs_from_real((R)1)"}}));
    if (solve)
        w.raw(fill_placeholders(kLeafSolve, {{"K_LOOP", k_loop(s.lower)}, {"PITCH", text(kPitch)}, {"CPT", cpt},
                                             {"UNSOLVED", unsolved(s.lower)}}));
    else
        w.raw(fill_placeholders(kLeafMultiply, {{"CPT", cpt}, {"PITCH", text(kPitch)}}));
    w.raw(fill_placeholders(kLeafStore, {{"CPT", cpt}}));
}

// invert: thread block (problem, diagonal block); the block's columns inverted into the workspace
// (identity-padded).
void invert_kernel(SourceWriter& w, const TriangularKernelSpec& s, const std::string& name) {
    w.line("BS_KERNEL_HEAD(" + text(threads_of(s)) + ", 1) " + name + "(const bs_tri_args args) {");
    shared_tile(w, true);
    w.raw(kInvertEntry);
    load_triangle(w, s.lower, true, "local");
    w.raw(fill_placeholders(kInvertColumns, {{"WARPS", text(s.config.warps_per_block)}, {"K_LOOP", k_loop(s.lower)},
                                             {"UNSOLVED", unsolved(s.lower)}, {"PITCH", text(kPitch)}}));
}

void potrf_panel_kernel(SourceWriter& w, const std::string& name) {
    w.line("BS_KERNEL_HEAD(32, 1) " + name + "(const bs_tri_args args) {");
    shared_tile(w, false);
    w.raw(fill_placeholders(kPotrfPanel, {{"PITCH", text(kPitch)}, {"DIAGONAL_STEP", text(kPitch + 1)}}));
}

}  // namespace

KernelResources TriangularFamily::resources(const TriangularKernelSpec& s) const {
    KernelResources r;
    r.threads_per_block = threads_of(s);
    // the triangle's tile, max_leaf_order x (max_leaf_order + 1) elements, and the diagonal's
    // reciprocals (z: 17 KB, under the 48 KB that need no opt-in)
    r.shared_bytes = std::size_t(max_leaf_order) * (kPitch + 1) * element_bytes(s.precision);  // + rdiag
    return r;
}

std::string TriangularFamily::can_implement(const TriangularKernelSpec& s) const {
    if (s.config.columns_per_thread < 1 || s.config.columns_per_thread > 4) return "columns_per_thread: must be 1..4";
    if (s.config.warps_per_block < 1 || s.config.warps_per_block > max_threads_per_block / 32)
        return "warps_per_block: must be 1..32";
    return "";
}

KernelSource TriangularFamily::generate(const TriangularKernelSpec& s) const {
    KernelSource k;
    k.kernel_name = kernel_name(s);
    SourceWriter w;
    w.line("// " + k.kernel_name + ": generated by batchsolve (codegen/triangular); do not edit.");
    w.raw(kernel_prelude(s.precision));
    w.raw(fill_placeholders(kPreludeTail, {{"ALPHA", is_complex(s.precision) ? "bs_make((R)re, (R)im)" : "(R)re"},
                                           {"ARGUMENTS", kernel_arguments_source()}}));
    switch (s.kind) {
        case KernelKind::solve:
        case KernelKind::multiply: leaf_kernel(w, s, k.kernel_name); break;
        case KernelKind::invert: invert_kernel(w, s, k.kernel_name); break;
        case KernelKind::potrf_panel: potrf_panel_kernel(w, k.kernel_name); break;
    }
    w.line("#ifdef BS_HOST_EMULATION");
    w.line("void bs_host_entry(void** a) { " + k.kernel_name + "(*static_cast<const bs_tri_args*>(a[0])); }");
    w.line("#endif");
    k.source = w.str();
    return k;
}

TriangularKernelConfig TriangularFamily::default_config(const TriangularKernelSpec& s) const {
    const TriangularConfig defaults;
    TriangularKernelConfig c;
    c.columns_per_thread = defaults.columns_per_thread;
    c.warps_per_block = s.kind == KernelKind::potrf_panel ? 1 : defaults.warps_per_block;
    return c;
}

const TriangularFamily& triangular_family() {
    static const TriangularFamily family;
    return family;
}

}  // namespace batchsolve::codegen::triangular
