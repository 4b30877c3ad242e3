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
    return "struct bs_tri_args {\n"
           "  const void* const* a; const int* lda; void* const* b; const int* ldb;\n"
           "  const int* tri_sizes; const int* rhs_sizes; const int* skip; void* work; long long work_stride;\n"
           "  int tri_sub, tri_lim, rhs_sub, rhs_lim, a_row0, a_col0, b_row0, b_col0;\n"
           "  int transposed, conjugate, unit, right, from_work, block_order, batch, upper_storage, zero_only;\n"
           "  double alpha_re, alpha_im;\n"
           "};\n";
}

std::string TriangularFamily::kernel_name(const TriangularKernelSpec& s) const {
    std::ostringstream o;
    o << "bs_tri_" << to_string(s.kind) << "_" << precision_letter(s.precision);
    if (s.kind != KernelKind::potrf_panel) o << (s.lower ? "_lower" : "_upper") << "_w" << s.warps_per_block;
    if (s.kind == KernelKind::solve || s.kind == KernelKind::multiply) o << "_c" << s.columns_per_thread;
    return o.str();
}

namespace {

int threads_of(const TriangularKernelSpec& s) {
    return s.kind == KernelKind::potrf_panel ? 32 : 32 * s.warps_per_block;
}

// Row pitch of the shared triangle tile: one more than a warp, so that the lanes of a column access
// (lane p reads L(p, k)) fall into different banks.
constexpr int kPitch = max_leaf_order + 1;

// The one prelude (codegen/prelude.hpp) and what only these kernels add: alpha from the arguments'
// two doubles, the arguments' struct and the window of a problem's sizes.
std::string prelude(Precision p) {
    std::ostringstream o;
    o << kernel_prelude(p);
    if (is_complex(p)) o << "BS_DEVICE T bs_alpha(double re, double im) { return bs_make((R)re, (R)im); }\n";
    else o << "BS_DEVICE T bs_alpha(double re, double im) { return (R)re; }\n";
    o << kernel_arguments_source();
    // Sizes of a problem after the window of the arguments (VSize of blas3_internal.hpp).
    o << "BS_DEVICE int bs_window(int v, int sub, int lim) { v -= sub; return v < 0 ? 0 : (v > lim ? lim : v); }\n";
    return o.str();
}

// Loads L (r x r, canonical orientation) into tile[p * PITCH + q]; zero outside the triangle and
// beyond r, a unit diagonal as 1; with reciprocals, rdiag[p] = 1 / L(p, p) (1 beyond r), so that the
// substitutions multiply instead of dividing in their serial chain. Every thread of the block takes part.
std::string load_triangle(bool lower, bool reciprocals, const std::string& arguments = "args") {
    std::ostringstream o;
    o << "  {\n"
         "    const T* ap = (const T*)args.a[i];\n"
         "    const long long lda = args.lda[i];\n"
         "    const T* wp = (const T*)args.work + (long long)i * args.work_stride +\n"
         "                  (long long)(args.block_order > 0 ? args.tri_sub / args.block_order : 0) * args.block_order * args.block_order;\n"
         "    for (int e = threadIdx.x; e < " << max_leaf_order * max_leaf_order << "; e += blockDim.x) {\n"
         "      const int p = e % " << max_leaf_order << ", q = e / " << max_leaf_order << ";\n"
         "      T v = bs_zero();\n"
         "      if (p < r && q < r && " << (lower ? "p >= q" : "p <= q") << ") {\n"
         "        if (args.from_work) v = wp[p + (long long)q * args.block_order];\n"
         "        else if (p == q && args.unit) v = bs_from_real((R)1);\n"
         "        else {\n"
         "          const int row = args.transposed ? q : p, col = args.transposed ? p : q;\n"
         "          v = ap[(long long)(args.a_row0 + args.tri_sub + row) + (long long)(args.a_col0 + args.tri_sub + col) * lda];\n"
         "          if (args.conjugate) v = bs_conj(v);\n"
         "        }\n"
         "      }\n"
         "      tile[p * " << kPitch << " + q] = v;\n";
    if (reciprocals) o << "      if (p == q) rdiag[p] = p < r ? bs_div(bs_from_real((R)1), v) : bs_from_real((R)1);\n";
    o << "    }\n"
         "  }\n"
         "  __syncthreads();\n";
    std::string text = o.str();
    for (std::size_t at = text.find("args."); at != std::string::npos; at = text.find("args.", at + arguments.size()))
        text.replace(at, 4, arguments);
    return text;
}

// The dynamic shared memory: the triangle's tile (max_leaf_order rows of kPitch elements) and, where
// the kernel substitutes, the reciprocals of L's diagonal behind it.
std::string shared_tile(bool reciprocals) {
    std::string text = "  BS_DECLARE_SMEM(bs_smem);\n"
                       "  T* tile = reinterpret_cast<T*>(bs_smem);\n";
    if (reciprocals) text += "  T* rdiag = tile + " + std::to_string(max_leaf_order * kPitch) + ";\n";
    return text;
}

// solve / multiply: one thread block per (problem, group of right-hand sides); each warp takes
// columns_per_thread right-hand sides, lane p their row p.
void leaf_kernel(SourceWriter& w, const TriangularKernelSpec& s, const std::string& name) {
    const int cpt = s.columns_per_thread, warps = s.warps_per_block;
    const bool solve = s.kind == KernelKind::solve;
    w.line("BS_KERNEL_HEAD(" + std::to_string(threads_of(s)) + ", 1) " + name + "(const bs_tri_args args) {");
    w.raw(shared_tile(solve) +
          "  const int i = blockIdx.x;\n"
          "  if (i >= args.batch || (args.skip && args.skip[i] != 0)) return;\n"
          "  // adaptive subgrid truncation: blocks beyond this problem's sizes leave at once\n"
          "  const int r = bs_window(args.tri_sizes[i], args.tri_sub, args.tri_lim);\n"
          "  const int nr = bs_window(args.rhs_sizes[i], args.rhs_sub, args.rhs_lim);\n"
          "  const int per_block = " + std::to_string(warps * cpt) + ";\n"
          "  if (r == 0 || nr == 0 || (int)blockIdx.y * per_block >= nr) return;\n");
    w.raw("  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
          "  T* bp = (T*)args.b[i];\n"
          "  const long long ldb = args.ldb[i];\n"
          "  // C(p, j): B(row0 + p, col0 + j) for the left side, B(row0 + j, col0 + p) for the right\n"
          "  const long long step_p = args.right ? ldb : 1, step_j = args.right ? 1 : ldb;\n"
          "  const long long origin = args.right\n"
          "      ? (long long)(args.b_row0 + args.rhs_sub) + (long long)(args.b_col0 + args.tri_sub) * ldb\n"
          "      : (long long)(args.b_row0 + args.tri_sub) + (long long)(args.b_col0 + args.rhs_sub) * ldb;\n"
          "  const T alpha = bs_alpha(args.alpha_re, args.alpha_im);\n"
          "  if (args.zero_only) {  // alpha = 0: C = 0, A never read (the block returns as a whole)\n"
          "    for (int first = blockIdx.y * per_block + warp * " + std::to_string(cpt) + "; first < nr; first += gridDim.y * per_block)\n"
          "      for (int c = 0; c < " + std::to_string(cpt) + " && first + c < nr; ++c)\n"
          "        for (int p = lane; p < r; p += 32) bp[origin + p * step_p + (first + c) * step_j] = bs_zero();\n"
          "    return;\n"
          "  }\n");
    w.raw(load_triangle(s.lower, solve));
    w.raw("  for (int first = blockIdx.y * per_block + warp * " + std::to_string(cpt) +
          "; first < nr; first += gridDim.y * per_block) {\n");
    w.raw("    T x[" + std::to_string(cpt) + "];\n"
          "#pragma unroll\n"
          "    for (int c = 0; c < " + std::to_string(cpt) + "; ++c) {\n"
          "      const int j = first + c;\n"
          "      x[c] = (lane < r && j < nr) ? bs_mul(" + std::string(solve ? "alpha, " : "bs_from_real((R)1), ") +
          "bp[origin + lane * step_p + j * step_j]) : bs_zero();\n"
          "    }\n");
    const std::string k_loop = s.lower ? "for (int k = 0; k < r; ++k)" : "for (int k = r - 1; k >= 0; --k)";
    if (solve) {
        // Substitution: lane k finishes x_k, every other lane in the unsolved part subtracts L(p, k) x_k.
        w.raw("    " + k_loop + " {\n"
              "      const T rkk = rdiag[k];\n"
              "      const T lpk = tile[lane * " + std::to_string(kPitch) + " + k];\n"
              "#pragma unroll\n"
              "      for (int c = 0; c < " + std::to_string(cpt) + "; ++c) {\n"
              "        const T xk = bs_mul(bs_shfl(x[c], k), rkk);  // x_k final: every lane scales lane k's value\n"
              "        if (lane == k) x[c] = xk;\n"
              "        else if (" + std::string(s.lower ? "lane > k" : "lane < k") + ") x[c] = bs_fms(lpk, xk, x[c]);\n"
              "      }\n"
              "    }\n");
    } else {
        // Product: lane p accumulates L(p, k) c_k over its row of the triangle.
        w.raw("    T acc[" + std::to_string(cpt) + "];\n"
              "#pragma unroll\n"
              "    for (int c = 0; c < " + std::to_string(cpt) + "; ++c) acc[c] = bs_zero();\n"
              "    for (int k = 0; k < r; ++k) {\n"
              "      const T lpk = tile[lane * " + std::to_string(kPitch) + " + k];\n"
              "#pragma unroll\n"
              "      for (int c = 0; c < " + std::to_string(cpt) + "; ++c) acc[c] = bs_fma(lpk, bs_shfl(x[c], k), acc[c]);\n"
              "    }\n"
              "#pragma unroll\n"
              "    for (int c = 0; c < " + std::to_string(cpt) + "; ++c) x[c] = bs_mul(alpha, acc[c]);\n");
    }
    w.raw("#pragma unroll\n"
          "    for (int c = 0; c < " + std::to_string(cpt) + "; ++c) {\n"
          "      const int j = first + c;\n"
          "      if (lane < r && j < nr) bp[origin + lane * step_p + j * step_j] = x[c];\n"
          "    }\n"
          "  }\n"
          "}\n");
}

// invert: thread block (problem, diagonal block); warp w inverts columns w, w + warps, ... of the
// block by substitution against unit vectors and writes them to the workspace (identity-padded).
void invert_kernel(SourceWriter& w, const TriangularKernelSpec& s, const std::string& name) {
    w.line("BS_KERNEL_HEAD(" + std::to_string(threads_of(s)) + ", 1) " + name + "(const bs_tri_args args) {");
    w.raw(shared_tile(true) +
          "  const int i = blockIdx.x;\n"
          "  if (i >= args.batch || (args.skip && args.skip[i] != 0)) return;\n"
          "  const int nb = args.block_order;\n"
          "  const int whole = bs_window(args.tri_sizes[i], args.tri_sub, args.tri_lim);\n"
          "  const int block_first = blockIdx.y * nb;\n"
          "  const int r = bs_window(whole, block_first, nb);\n"
          "  if (r == 0) return;\n"
          "  // the diagonal block at block_first of the triangle: shift the triangle's origin there\n"
          "  bs_tri_args local = args;\n"
          "  local.tri_sub = args.tri_sub + block_first;\n"
          "  local.from_work = 0;\n");
    w.raw(load_triangle(s.lower, true, "local"));
    w.raw("  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
          "  T* out = (T*)args.work + (long long)i * args.work_stride + (long long)blockIdx.y * nb * nb;\n"
          "  for (int q = warp; q < nb; q += " + std::to_string(s.warps_per_block) + ") {\n"
          "    T y = bs_from_real(lane == q ? (R)1 : (R)0);\n");
    const std::string k_loop = s.lower ? "for (int k = 0; k < r; ++k)" : "for (int k = r - 1; k >= 0; --k)";
    w.raw("    " + k_loop + " {\n"
          "      const T yk = bs_mul(bs_shfl(y, k), rdiag[k]);\n"
          "      if (lane == k) y = yk;\n"
          "      else if (" + std::string(s.lower ? "lane > k" : "lane < k") + ") y = bs_fms(tile[lane * " +
          std::to_string(kPitch) + " + k], yk, y);\n"
          "    }\n"
          "    if (lane < nb) out[lane + (long long)q * nb] = y;\n"
          "  }\n"
          "}\n");
}

// potrf_panel: one warp per matrix factors the block of order r = window(n_i, tri_sub, tri_lim) at
// (tri_sub, tri_sub) in shared memory, right-looking, lane p owning row p; info[i] = tri_sub + k at a
// pivot k that is not positive (or NaN). The info array arrives as args.skip.
void potrf_panel_kernel(SourceWriter& w, const TriangularKernelSpec& s, const std::string& name) {
    const std::string P = std::to_string(kPitch);
    w.line("BS_KERNEL_HEAD(32, 1) " + name + "(const bs_tri_args args) {");
    w.raw(shared_tile(false) +
          "  const int i = blockIdx.x;\n"
          "  if (i >= args.batch || args.skip[i] != 0) return;\n"
          "  const int r = bs_window(args.tri_sizes[i], args.tri_sub, args.tri_lim);\n"
          "  if (r == 0) return;\n"
          "  const int lane = threadIdx.x;\n"
          "  T* ap = (T*)args.a[i];\n"
          "  const long long lda = args.lda[i];\n"
          "  const int j = args.tri_sub;\n"
          "  // L(p, q) = A(j + p, j + q), or conj(A(j + q, j + p)) when the upper triangle holds U = L^H\n"
          "  for (int q = 0; q < r; ++q) {\n"
          "    if (lane < r && lane >= q) {\n"
          "      T v = args.upper_storage ? bs_conj(ap[(long long)(j + q) + (long long)(j + lane) * lda])\n"
          "                               : ap[(long long)(j + lane) + (long long)(j + q) * lda];\n"
          "      tile[lane * " + P + " + q] = v;\n"
          "    }\n"
          "  }\n"
          "  __syncwarp();\n"
          "  int failed = 0;\n"
          "  for (int k = 0; k < r; ++k) {\n"
          "    const R d = bs_real(tile[k * " + std::to_string(kPitch + 1) + "]);\n"
          "    if (!(d > (R)0)) { failed = k + 1; break; }  // the same value in every lane: a uniform exit\n"
          "    const R lkk = sqrt(d);\n"
          "    __syncwarp();\n"
          "    if (lane == k) tile[k * " + std::to_string(kPitch + 1) + "] = bs_from_real(lkk);\n"
          "    if (lane > k && lane < r) tile[lane * " + P + " + k] = bs_div_real(tile[lane * " + P + " + k], lkk);\n"
          "    __syncwarp();\n"
          "    if (lane > k && lane < r) {\n"
          "      const T lpk = tile[lane * " + P + " + k];\n"
          "      for (int c = k + 1; c <= lane; ++c)\n"
          "        tile[lane * " + P + " + c] = bs_fms(lpk, bs_conj(tile[c * " + P + " + k]), tile[lane * " + P + " + c]);\n"
          "    }\n"
          "    __syncwarp();\n"
          "  }\n"
          "  __syncwarp();\n"
          "  for (int q = 0; q < r; ++q) {\n"
          "    if (lane < r && lane >= q) {\n"
          "      const T v = tile[lane * " + P + " + q];\n"
          "      if (args.upper_storage) ap[(long long)(j + q) + (long long)(j + lane) * lda] = bs_conj(v);\n"
          "      else ap[(long long)(j + lane) + (long long)(j + q) * lda] = v;\n"
          "    }\n"
          "  }\n"
          "  if (failed && lane == 0) ((int*)args.skip)[i] = j + failed;\n"
          "}\n");
    (void)s;
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
    if (s.columns_per_thread < 1 || s.columns_per_thread > 4) return "columns_per_thread: must be 1..4";
    if (s.warps_per_block < 1 || s.warps_per_block > max_threads_per_block / 32) return "warps_per_block: must be 1..32";
    return "";
}

KernelSource TriangularFamily::generate(const TriangularKernelSpec& s) const {
    KernelSource k;
    k.kernel_name = kernel_name(s);
    SourceWriter w;
    w.line("// " + k.kernel_name + ": generated by batchsolve (codegen/triangular); do not edit.");
    w.raw(prelude(s.precision));
    switch (s.kind) {
        case KernelKind::solve:
        case KernelKind::multiply: leaf_kernel(w, s, k.kernel_name); break;
        case KernelKind::invert: invert_kernel(w, s, k.kernel_name); break;
        case KernelKind::potrf_panel: potrf_panel_kernel(w, s, k.kernel_name); break;
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
