// Source of the fused-transposition column-major kernels (see fused.hpp for the algorithm).
#include "codegen/cholesky/fused.hpp"

#include <algorithm>
#include <string>

#include "codegen/common.hpp"
#include "codegen/source_writer.hpp"

namespace batchsolve::codegen::cholesky {

namespace {

using codegen::align16;
using codegen::element_bytes;

// Shared memory a default configuration may take per block: leaves room for two blocks per SM.
constexpr std::size_t default_block_shared_bytes = 96 * 1024;
constexpr int default_matrices_per_block = 64;
// Loads a thread of the copies has in flight before it stores (16-byte vectors in the flat copy,
// elements otherwise): 8 keep a block's copy at a few round trips to memory for every C of this
// family, in 32 registers (s) to 64 (d, c) for the vectors.
constexpr int fused_copy_loads = 8;

// The kernel after the bodies. The copies walk x = m * NN + (j * N + i) (matrix m of the block,
// row i fastest): consecutive threads on consecutive rows of one column.
constexpr const char* kKernel = R"(
BS_KERNEL_HEAD(@C@, @MIN_BLOCKS@) @NAME@(@PARAMS@) {
  const int NN = N * N, C = @C@, W = @W@, K = @K@;
  BS_DECLARE_SMEM(bs_smem);
  T* const As = (T*)(bs_smem + @OFF_A@);
  int* const flags = (int*)(bs_smem + @OFF_FLAGS@);
  const int t = (int)threadIdx.x;
  const long long first = (long long)blockIdx.x * C;
  const int live = (long long)count - first < (long long)C ? (int)((long long)count - first) : C;
  // ---- copy in: whole squares as one flat run of 16-byte loads, else the referenced triangle. A
  // thread issues K loads before it stores any (a store waits for its load: one round trip to memory
  // per K loads, not per load) ----
  const bool flat = a_ptrs == 0 && lda == N && a_stride == (long long)NN &&
                    ((unsigned long long)(a + first * NN) & 15ull) == 0;
  if (flat) {
    const T* const src = a + first * NN;
    const int total = live * NN, nvec = total / @VEC@;
    for (int v0 = t; v0 < nvec; v0 += K * C) {
      bs_vec u[K];
#pragma unroll
      for (int k = 0; k < K; ++k)
        if (v0 + k * C < nvec) u[k] = BS_VEC_AT(src + (long long)(v0 + k * C) * @VEC@);
#pragma unroll
      for (int k = 0; k < K; ++k)
        if (v0 + k * C < nvec) {
#pragma unroll
          for (int e = 0; e < @VEC@; ++e) {
            const int x = (v0 + k * C) * @VEC@ + e, m = x / NN;
            As[(x - m * NN) * W + m] = u[k].v[e];
          }
        }
    }
    for (int x = nvec * @VEC@ + t; x < total; x += C) {
      const int m = x / NN;
      As[(x - m * NN) * W + m] = src[x];
    }
  } else {
    for (int x0 = t; x0 < live * NN; x0 += K * C) {
      T u[K];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const int x = x0 + k * C, m = x / NN, r = x - m * NN, j = r / N, i = r - j * N;
        if (x < live * NN && (@UPPER@ ? i <= j : i >= j)) {
          const T* const am = a_ptrs ? a_ptrs[first + m] : a + (first + m) * a_stride;
          u[k] = am[(long long)j * lda + i];
        }
      }
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const int x = x0 + k * C, m = x / NN, r = x - m * NN, j = r / N, i = r - j * N;
        if (x < live * NN && (@UPPER@ ? i <= j : i >= j)) As[r * W + m] = u[k];
      }
    }
  }
  __syncthreads();
  // ---- factor: the interleaved body, one thread per matrix, stride W ----
  if (t < live) bs_potrf_body(As, flags, live, C, t);
  __syncthreads();
  // ---- copy out: the referenced triangle ----
  for (int x = t; x < live * NN; x += C) {
    const int m = x / NN, r = x - m * NN, j = r / N, i = r - j * N;
    if (@UPPER@ ? i <= j : i >= j) {
      T* const am = a_ptrs ? a_ptrs[first + m] : a + (first + m) * a_stride;
      am[(long long)j * lda + i] = As[r * W + m];
    }
  }
  if (t < live) info[first + t] = flags[t];
@SOLVE@  (void)zero;
}
)";

// posv: the right-hand sides, NRB columns at a time, through shared memory; a failed matrix's are
// neither solved nor written.
constexpr const char* kSolve = R"(  T* const Bs = (T*)(bs_smem + @OFF_B@);
  for (int r0 = 0; r0 < nrhs; r0 += @NRB@) {
    const int nr = nrhs - r0 < @NRB@ ? nrhs - r0 : @NRB@;
    __syncthreads();  // the factor's flags are visible; the previous group is written out
    for (int r = 0; r < nr; ++r)
      for (int x0 = t; x0 < live * N; x0 += K * C) {  // K loads in flight, as for A
        T u[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const int x = x0 + k * C, m = x / N, i = x - m * N;
          if (x < live * N) {
            const T* const bm = b_ptrs ? b_ptrs[first + m] : b + (first + m) * b_stride;
            u[k] = bm[(long long)(r0 + r) * ldb + i];
          }
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const int x = x0 + k * C, m = x / N, i = x - m * N;
          if (x < live * N) Bs[(r * N + i) * W + m] = u[k];
        }
      }
    __syncthreads();
    if (t < live && flags[t] == 0) bs_potrs_body(As, Bs, nr, live, C, t);
    __syncthreads();
    for (int r = 0; r < nr; ++r)
      for (int x = t; x < live * N; x += C) {
        const int m = x / N, i = x - m * N;
        if (flags[m] == 0) {
          T* const bm = b_ptrs ? b_ptrs[first + m] : b + (first + m) * b_stride;
          bm[(long long)(r0 + r) * ldb + i] = Bs[(r * N + i) * W + m];
        }
      }
  }
  (void)ngroups;
)";

}  // namespace

InterleavedKernelSpec fused_interleaved_spec(const ColumnMajorSpec& spec, Routine routine) {
    CholeskyConfig c = spec.config;
    c.staged = false;
    c.warps_per_matrix = 0;
    c.matrices_per_block = 0;
    c.rows_per_thread = 0, c.threads_per_row = 0;
    c.chunk_size = 0;
    c.grid_blocks_per_sm = 0;
    c.through_interleaved = false;
    c.solve_warps_per_matrix = 0, c.solve_nb = 0;
    c.threads_per_block = 32;  // the body does not read it; the block is C threads (fused_resolve)
    // both phases of posv take the factorisation's tile (as the interleaved posv kernel does)
    CholeskyConfig factor = resolve_interleaved_config(Routine::potrf, spec.precision, spec.n, c);
    if (routine == Routine::potrs) {
        factor.nrhs_block = std::max(1, spec.config.nrhs_block);
    } else {
        factor.nrhs_block = 1;
    }
    InterleavedKernelSpec out;
    out.routine = routine;
    out.precision = spec.precision;
    out.uplo = spec.uplo;
    out.n = spec.n;
    out.config = factor;
    out.wide_index = false;  // offsets within a block's shared memory
    return out;
}

std::string fused_resolve(const ColumnMajorSpec& spec, ColumnMajorShape& s) {
    const CholeskyConfig& c = spec.config;
    const int n = spec.n;
    if (spec.routine == Routine::potrs)
        return "config.staged: the fused kernels (staged, warps_per_matrix = 0) run potrf and posv; potrs takes "
               "staged with warps_per_matrix 1..32 or the register kernels";
    if (n < 1 || n > column_major_max_n)
        return "n: 1 <= n <= " + std::to_string(column_major_max_n) + " for the fused kernels (got " + std::to_string(n) + ")";
    if (c.tensor_cores) return "config.tensor_cores: false for the fused kernels (one thread per matrix)";
    if (c.through_interleaved) return "config.through_interleaved: false with config.staged";
    if (c.rows_per_thread != 0 || c.threads_per_row != 0)
        return "config.rows_per_thread: 0 for the fused kernels (one thread per matrix; as is threads_per_row)";
    if (c.matrices_per_block != 0)
        return "config.matrices_per_block: 0 for the fused kernels (threads_per_block is the matrices per block)";
    if (c.grid_blocks_per_sm != 0) return "config.grid_blocks_per_sm: 0 for the fused kernels";
    if (c.solve_warps_per_matrix != 0 || c.solve_nb != 0)
        return "config.solve_warps_per_matrix: 0 for the fused kernels (posv is one kernel)";
    if (c.threads_per_block < 1 || c.threads_per_block > codegen::max_threads_per_block)
        return "config.threads_per_block: the matrices (one thread each) per block, 1.." +
               std::to_string(codegen::max_threads_per_block) + " (got " + std::to_string(c.threads_per_block) + ")";
    if (spec.routine == Routine::posv && (c.nrhs_block < 1 || c.nrhs_block > max_nrhs_block))
        return "config.nrhs_block: 1.." + std::to_string(max_nrhs_block) + " (got " + std::to_string(c.nrhs_block) + ")";
    for (Routine phase : {Routine::potrf, Routine::potrs}) {
        if (phase == Routine::potrs && spec.routine != Routine::posv) continue;
        const std::string problem = interleaved_spec_problem(fused_interleaved_spec(spec, phase));
        if (!problem.empty()) return "config." + problem;
    }
    const int C = c.threads_per_block, W = fused_pitch(C);
    const int esize = element_bytes(spec.precision);
    s = ColumnMajorShape{};
    s.words = esize / 4;
    s.vec = 16 / esize;
    s.threads_per_matrix = 1;
    s.rows_per_thread = n, s.threads_per_row = 1, s.row_threads = 1, s.cols_per_thread = n;
    s.matrices_per_block = s.slots = s.block_threads = C;
    s.col_pitch = W;
    s.nrhs_block = spec.routine == Routine::posv ? std::max(1, c.nrhs_block) : 0;
    s.off_packed = 0;
    std::size_t off = align16(std::size_t(n) * n * W * esize);
    s.off_rows = off;
    if (spec.routine == Routine::posv) off += align16(std::size_t(n) * s.nrhs_block * W * esize);
    s.off_flags = off;
    off += align16(std::size_t(C) * sizeof(int));
    s.shared_bytes = off;
    if (s.shared_bytes > column_major_max_shared_bytes)
        return "config.threads_per_block: " + std::to_string(C) + " matrices of n = " + std::to_string(n) + " need " +
               std::to_string(s.shared_bytes) + " bytes of shared memory per block (> " +
               std::to_string(column_major_max_shared_bytes) + ")";
    return "";
}

std::string fused_kernel_name(const ColumnMajorSpec& spec, const ColumnMajorShape& shape) {
    const CholeskyConfig f = fused_interleaved_spec(spec, Routine::potrf).config;
    std::string name = std::string(to_string(spec.routine)) + "_cmfused_" + precision_letter(spec.precision) + "_" +
                       batchsolve::to_string(spec.uplo) + "_n" + std::to_string(spec.n) + "_nb" + std::to_string(f.nb) +
                       "_" + batchsolve::to_string(f.looking) + (f.full_unroll ? "_unrolled" : "_partial") + "_m" +
                       std::to_string(shape.matrices_per_block);
    if (spec.routine == Routine::posv) name += "_r" + std::to_string(shape.nrhs_block);
    if (f.fast_math) name += "_fast";
    if (f.max_registers > 0) name += "_reg" + std::to_string(f.max_registers);
    return name;
}

std::string fused_kernel(const ColumnMajorSpec& spec, const ColumnMajorShape& shape, const std::string& name,
                         int min_blocks) {
    const bool posv = spec.routine == Routine::posv;
    const int W = shape.col_pitch;
    std::string text;
    text += interleaved_body_function(fused_interleaved_spec(spec, Routine::potrf), [W](const std::string& in) {
        return in + "T* a = a_batch + mat;  // this thread's matrix in shared memory\n" + in + "idx_t w = " +
               std::to_string(W) + ";  // the distance between its elements (i, j) and (i + 1, j)\n" + in +
               "(void)count, (void)chunk;\n";
    });
    if (posv)
        text += interleaved_body_function(fused_interleaved_spec(spec, Routine::potrs), [W](const std::string& in) {
            return in + "const T* a = a_batch + mat;\n" + in + "T* b = b_batch + mat;\n" + in + "idx_t w = " +
                   std::to_string(W) + ";\n" + in + "(void)count, (void)chunk;\n";
        });
    const char* params =
        posv ? "T* a, T* const* a_ptrs, long long a_stride, int lda, T* b, T* const* b_ptrs, long long b_stride, "
               "int ldb, int nrhs, int ngroups, int* info, int count, int zero"
             : "T* a, T* const* a_ptrs, long long a_stride, int lda, int* info, int count, int zero";
    const std::string solve =
        posv ? fill_placeholders(kSolve, {{"OFF_B", std::to_string(shape.off_rows)}, {"NRB", std::to_string(shape.nrhs_block)}})
             : "";
    text += fill_placeholders(kKernel, {{"SOLVE", solve}});
    return fill_placeholders(text, {{"NAME", name},
                                    {"PARAMS", params},
                                    {"C", std::to_string(shape.matrices_per_block)},
                                    {"W", std::to_string(W)},
                                    {"MIN_BLOCKS", std::to_string(min_blocks)},
                                    {"OFF_A", std::to_string(shape.off_packed)},
                                    {"OFF_FLAGS", std::to_string(shape.off_flags)},
                                    {"VEC", std::to_string(shape.vec)},
                                    {"K", std::to_string(fused_copy_loads)},
                                    {"UPPER", spec.uplo == Uplo::upper ? "true" : "false"}});
}

CholeskyConfig fused_default_config(Routine routine, Precision precision, int n) {
    CholeskyConfig c = default_interleaved_config(routine == Routine::posv ? Routine::posv : Routine::potrf, precision,
                                                  std::max(1, n));
    c.staged = true;
    c.warps_per_matrix = 0;
    const std::size_t per_matrix = std::size_t(n) * n * element_bytes(precision);
    int C = default_matrices_per_block;
    while (C > 1 && std::size_t(fused_pitch(C)) * per_matrix > default_block_shared_bytes) C /= 2;
    c.threads_per_block = C;
    return c;
}

}  // namespace batchsolve::codegen::cholesky
