// The generator of the one variable-size GEMM kernel that every vbatched BLAS-3 routine runs on:
// C_i = alpha op(A_i) op(B_i) + beta C_i over a batch of problems of different sizes, the grid sized by
// the largest problem and the thread blocks beyond a problem's own subgrid exiting at once (adaptive
// subgrid truncation, Abdelfattah et al., ICS'17), optionally only one triangle of C (SYRK/SYR2K) and
// with a symmetric/Hermitian operand (SYMM/HEMM). Answers the four questions of codegen/family.hpp
// (problem, resources, default_config, generate) for a GemmSpec; its configuration type is the
// public GemmConfig (vbatched_blas.hpp), so default_config returns that instead of a CholeskyConfig.
#pragma once

#include <string>

#include "batchsolve/vbatched_blas.hpp"
#include "codegen/family.hpp"
#include "codegen/kernel_source.hpp"

namespace batchsolve::codegen::blas3 {

// How the kernel reads an operand (mirrors blas3_detail::Operand; codegen knows no core header).
enum class GemmOperand { no_trans, trans, conj_trans, symmetric_lower, symmetric_upper, hermitian_lower, hermitian_upper };
const char* to_string(GemmOperand op);
// Which part of C is computed and written.
enum class GemmPart { full, lower, upper };
const char* to_string(GemmPart part);

// Everything that changes the kernel's text.
struct GemmSpec {
    Precision precision = Precision::d;
    GemmOperand op_a = GemmOperand::no_trans;
    GemmOperand op_b = GemmOperand::no_trans;
    GemmPart part = GemmPart::full;
    bool real_diagonal = false;  // zero the imaginary part of C's diagonal (HERK/HER2K)
    // The uniform-size path: every problem's m, n, k are multiples of blk_m, blk_n, blk_k (the launcher
    // knows when the sizes are constants of the call), so loads and stores need no bounds checks.
    bool full_tiles = false;
    GemmConfig config{};
};

// The kernel's arguments, in this order (what the launcher passes; `T` the element type, complex as
// two reals; sizes per problem are clamp(values[i] - subtract, 0, limit), values == nullptr: limit):
//   int batch,
//   const int* m, int m_subtract, int m_limit,  (same for n, then k)
//   T alpha, const T* const* A, const int* lda, int a_row, int a_col,
//   const T* const* B, const int* ldb, int b_row, int b_col,
//   T beta, T* const* C, const int* ldc, int c_row, int c_col,
//   const int* skip                             (problems with skip[i] != 0 are left alone; may be null)
// Grid: x = ceil(max_m / blk_m), y = ceil(max_n / blk_n), z = min(batch, 65535) (the kernel loops over
// problems with stride gridDim.z).

// "" when the spec can be generated, else "config.<field>: <reason>" (or "precision: ...").
std::string gemm_problem(const GemmSpec& spec);
KernelResources gemm_resources(const GemmSpec& spec);
KernelSource gemm_generate(const GemmSpec& spec);
// The generated kernel's name: it spells out every field of the spec (a cache key without generating).
std::string gemm_kernel_name(const GemmSpec& spec);

// The four questions behind one object, as the other families answer them.
class GemmFamily {
public:
    const char* name() const { return "vbatched_gemm"; }
    std::string problem(const GemmSpec& spec) const { return gemm_problem(spec); }
    KernelResources resources(const GemmSpec& spec) const { return gemm_resources(spec); }
    GemmConfig default_config(const GemmSpec& spec, int max_m, int max_n, int max_k) const {
        // The tuning table's entry (libsolver/tuning/sm<arch>-gemm.json) for the shipped architecture;
        // the dispatch asks for the device's own.
        return batchsolve::default_gemm_config(spec.precision, max_m, max_n, max_k, spec.part != GemmPart::full);
    }
    KernelSource generate(const GemmSpec& spec) const { return gemm_generate(spec); }
};

}  // namespace batchsolve::codegen::blas3
