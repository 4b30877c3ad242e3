// The generator of the one variable-size GEMM kernel that every vbatched BLAS-3 routine runs on:
// C_i = alpha op(A_i) op(B_i) + beta C_i over a batch of problems of different sizes, the grid sized by
// the largest problem and the thread blocks beyond a problem's own subgrid exiting at once (adaptive
// subgrid truncation, Abdelfattah et al., ICS'17), optionally only one triangle of C (SYRK/SYR2K) and
// with a symmetric/Hermitian operand (SYMM/HEMM). A codegen/family.hpp family (gemm_family()) over a
// GemmSpec; its configuration type is the public GemmConfig (vbatched_blas.hpp), its default asked
// for by a GemmQuery (the call's precision, largest sizes, triangle or not, and architecture).
// FP64 tensor cores multiply 8x8x4 fragments, or 16x8x8 ones with config.dmma16 (mma m16n8k8, sm_90; d
// only, where the warp tile and k-slice hold whole ones; kernels named _m16); BATCHSOLVE_GEMM_DMMA=16x8x8
// in the environment turns the 16x8x8 form on wherever it fits (a measurement aid). d's tensor-core
// slices have their rows 4 or 8 elements apart mod 16 by config.tc_row (the tuning table's choice per
// size class; kernels with rows 8 named _r8); BATCHSOLVE_GEMM_TC_ROW=4 or 8 in the environment overrides
// every such kernel's choice (a measurement switch).
#pragma once

#include <string>
#include <vector>

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
// Which tiles of C the kernel computes (the region split of the launcher's size bins): every tile
// (all); only whole tiles (interior: a tile reaching past the problem's m or n exits at once, so rows
// and columns are never bounds-checked); only the tiles outside the interior of the larger tile
// edge_m x edge_n (edge: the corner floor(m / edge_m) edge_m x floor(n / edge_n) edge_n is the
// interior kernel's, the rest this kernel's; edge_m, edge_n multiples of blk_m, blk_n). A large tile
// then runs where it fills, a small one on the ragged edges it would pad.
enum class GemmRegion { all, interior, edge };
const char* to_string(GemmRegion region);

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
    // Only the problems of a list (one size bin of the launcher's binned dispatch): two arguments more,
    // `const int* list, const int* list_count`, after `skip`; grid z loops over list[0 .. *list_count).
    bool problem_list = false;
    GemmRegion region = GemmRegion::all;
    int edge_m = 0, edge_n = 0;  // region edge: the interior kernel's tile
    // A fused kernel (the binned dispatch in one launch, GemmConfig::bin_launch 2) when not empty: one
    // path per size bin, fused[i] the tile of path i (config and problem_list are then unused; region
    // all, no tile list). Path i runs as the listed kernel of its tile would on its bin's list, on the
    // blocks [end[i-1], end[i]) of a one-dimensional grid, its own gx x gy x gz grid over them, x fastest,
    // so that the block scheduler, which hands out blocks in index order, starts path 0 (the largest
    // tiles) first and fills its last wave with the next path's blocks. Arguments: those of the whole-batch
    // kernel (through `skip`), then `const int* lists, const int* counts` (bin b's list lists + b * batch,
    // its length counts[b]) and the path table by value, kFusedTableFields ints per path in five arrays:
    // end[paths], gx[paths], gy[paths], gz[paths], bin[paths]. Every path has the same threads per block;
    // the kernel's register bound is the smallest min_blocks_per_sm among them (the most registers any
    // path was tuned with), its dynamic shared memory the largest path's.
    std::vector<GemmConfig> fused;
};
inline constexpr int kFusedTableFields = 5;

// Dynamic shared memory a kernel with the cp.async ring may use (an SM 9.0 block's opt-in limit,
// 227 KB); the register path stays within the 48 KB a launch gets without opting in.
inline constexpr long long kMaxRingSharedBytes = 227 * 1024;

// The kernel's arguments, in this order (what the launcher passes; `T` the element type, complex as
// two reals; sizes per problem are clamp(values[i] - subtract, 0, limit), values == nullptr: limit):
//   int batch,
//   const int* m, int m_subtract, int m_limit,  (same for n, then k)
//   T alpha, const T* const* A, const int* lda, int a_row, int a_col,
//   const T* const* B, const int* ldb, int b_row, int b_col,
//   T beta, T* const* C, const int* ldc, int c_row, int c_col,
//   const int* skip                             (problems with skip[i] != 0 are left alone; may be null)
// Grid: x = ceil(max_m / blk_m), y = ceil(max_n / blk_n), z = min(batch, 65535) (the kernel loops over
// problems with stride gridDim.z). With config.tile_list one argument more, last, `const int* tile_end`
// (entry z: the tiles ceil(m/blk_m) ceil(n/blk_n) of problems 0 .. z of the list, or of the batch, summed;
// a skipped or empty problem has none), and a one-dimensional grid of any size whose blocks loop over the
// tiles with stride gridDim.x.

// What the default configuration is chosen by: the precision, the size class of max(max_m, max_n),
// whether one triangle of C is computed (SYRK/HERK/SYR2K/HER2K have rows of their own) and the GPU.
struct GemmQuery {
    Precision precision = Precision::d;
    int max_m = 0, max_n = 0, max_k = 0;
    bool triangle = false;
    int arch = 90;  // compute capability x 10 of the device the kernel runs on
};

class GemmFamily final : public GeneratorFamily<GemmSpec, GemmConfig, GemmQuery> {
public:
    const char* area() const override { return "blas3"; }
    const char* name() const override { return "gemm"; }
    // "" when the spec can be generated, else "config.<field>: <reason>" (or "precision: ...").
    std::string can_implement(const GemmSpec& spec) const override;
    KernelResources resources(const GemmSpec& spec) const override;
    // The configuration the library runs when the caller gives none: the tuning table's entry for the
    // query, else a safe default.
    GemmConfig default_config(const GemmQuery& query) const override;
    // Spells out every field of the spec.
    std::string kernel_name(const GemmSpec& spec) const override;
    KernelSource generate(const GemmSpec& spec) const override;
};

const GemmFamily& gemm_family();

}  // namespace batchsolve::codegen::blas3
