// The generator family of the variable-size triangular kernels (vbatched_triangular.hpp): the leaf
// kernels that TRSM and TRMM recurse down to (a triangle of order <= 32 in shared memory, one warp's
// lanes holding its rows of the right-hand sides in registers, shuffles between them), the diagonal
// block inversion of the inversion-based TRSM, and potrf_vbatched's panel factorisation.
//
// Every kernel works on the canonical problem "L Y = alpha C" (solve) or "Y = alpha L C" (multiply):
// L an r x r triangle read from A with optional transpose/conjugate (run-time flags), C r x nr read
// from B either down its columns (Side::left) or along its rows (Side::right: X op(A) = B is
// op(A)^T X^T = B^T). Only L's orientation (lower or upper after the flags) changes the text.
#pragma once

#include <string>

#include "batchsolve/types.hpp"
#include "codegen/family.hpp"
#include "codegen/kernel_source.hpp"

namespace batchsolve::codegen::triangular {

// Largest triangle a generated kernel holds (one lane per row of a warp).
inline constexpr int max_leaf_order = 32;

enum class KernelKind {
    solve,         // substitution: Y = L^-1 (alpha C), in place in B
    multiply,      // product: Y = alpha L C, in place in B (L from A, or an inverted block from the workspace)
    invert,        // the nb x nb diagonal blocks of L inverted into the workspace (one block per thread block)
    potrf_panel    // the nb x nb diagonal block of A factored as L L^H (info per matrix)
};
const char* to_string(KernelKind k);

// The family's own configuration: the register and warp blocking a kernel is generated for (the
// public TriangularConfig's columns_per_thread and warps_per_block, which the launchers copy in).
struct TriangularKernelConfig {
    int columns_per_thread = 4;  // solve, multiply: right-hand sides per lane
    int warps_per_block = 4;     // solve, multiply, invert: warps per thread block
};

// Everything that changes a kernel's text. The potrf panel is one warp per matrix whatever `config`
// says: its text and name do not depend on it.
struct TriangularKernelSpec {
    KernelKind kind = KernelKind::solve;
    Precision precision = Precision::d;
    bool lower = true;  // L's orientation (solve, multiply, invert); potrf_panel: always lower internally
    TriangularKernelConfig config;
};

// The kernels' one argument (passed by value; the same struct is written into the generated source,
// field for field, by kernel_arguments_source()).
struct KernelArguments {
    const void* const* a = nullptr;  // A's pointer array
    const int* lda = nullptr;
    void* const* b = nullptr;        // B's pointer array (potrf_panel: unused)
    const int* ldb = nullptr;
    const int* tri_sizes = nullptr;  // L's order per problem before the window below
    const int* rhs_sizes = nullptr;  // C's other dimension per problem
    const int* skip = nullptr;       // problems with skip[i] != 0 are left alone (nullable); potrf_panel's info
    void* work = nullptr;            // inverted blocks: work + i * work_stride + block * nb * nb
    long long work_stride = 0;       // elements per problem
    int tri_sub = 0, tri_lim = 0;    // r_i = clamp(tri_sizes[i] - tri_sub, 0, tri_lim): L = rows/cols tri_sub.. of the triangle
    int rhs_sub = 0, rhs_lim = 0;    // nr_i = clamp(rhs_sizes[i] - rhs_sub, 0, rhs_lim)
    int a_row0 = 0, a_col0 = 0;      // stored A's origin of the triangle (L(0,0) at a_row0 + tri_sub, a_col0 + tri_sub)
    int b_row0 = 0, b_col0 = 0;      // stored B's origin
    int transposed = 0;              // L(p, q) = A(q, p) instead of A(p, q)
    int conjugate = 0;               // ... conjugated
    int unit = 0;                    // unit diagonal, not read
    int right = 0;                   // C(p, j) = B(j, p) (rows of B) instead of B(p, j)
    int from_work = 0;               // multiply: L is inverted block tri_sub / nb of the workspace
    int block_order = 0;             // invert / from_work: nb; potrf_panel: the panel width
    int batch = 0;
    int upper_storage = 0;           // potrf_panel: A's upper triangle holds U = L^H
    int zero_only = 0;               // solve, multiply: write C = 0 without reading A (alpha = 0, as BLAS)
    double alpha_re = 1, alpha_im = 0;
};

// The struct above as CUDA source (for the generated text).
std::string kernel_arguments_source();

// The codegen/family.hpp family of these kernels (triangular_family()).
class TriangularFamily final : public GeneratorFamily<TriangularKernelSpec, TriangularKernelConfig> {
public:
    const char* area() const override { return "triangular"; }
    const char* name() const override { return "leaf"; }
    // "" when the spec can be generated, else "<field>: <reason>".
    std::string can_implement(const TriangularKernelSpec& spec) const override;
    // Threads per block and dynamic shared memory (the triangle's tile, sized by max_leaf_order).
    KernelResources resources(const TriangularKernelSpec& spec) const override;
    // The public TriangularConfig's default blocking; the potrf panel: one matrix per block.
    TriangularKernelConfig default_config(const TriangularKernelSpec& spec) const override;
    std::string kernel_name(const TriangularKernelSpec& spec) const override;
    KernelSource generate(const TriangularKernelSpec& spec) const override;
};

const TriangularFamily& triangular_family();

}  // namespace batchsolve::codegen::triangular
