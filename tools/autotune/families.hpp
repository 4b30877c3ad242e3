// The autotuner's stages for the families beside small Cholesky (--family): the variable-size GEMM per
// precision and size class, large Cholesky (nb, ib, variant, recursion depth, lookahead), LDL^T's
// blocking (panel order, TF32 update leaf) and TRSM's algorithm crossover. Each writes its table in the
// one tuning form (libsolver/tuning/README.md): DIR/sm<arch>-<family>.json, read back with the
// library's reader before it is reported written.
#pragma once

#include <string>
#include <vector>

#include "batchsolve/tuning.hpp"
#include "batchsolve/vbatched_blas.hpp"
#include "batchsolve/cholesky_large.hpp"
#include "options.hpp"

namespace batchsolve::autotune {

inline const std::vector<std::string> kFamilyNames = {"cholesky", "gemm", "large", "ldlt", "trsm"};

struct FamilyOptions {
    std::vector<std::string> families;            // --family (cholesky: the small-Cholesky search of the tuner)
    std::vector<int> gemm_sizes = {32, 128, 512};  // --gemm-sizes: the size classes (problems uniform in [1, x])
    int gemm_problems = 2000;                      // --gemm-problems: problems per GEMM batch
    std::vector<int> large_n = {2048, 8192, 16384};  // --large-n: the orders timed (each the upper end of a class)
    std::vector<int> ldlt_n = {2048, 8192};          // --ldlt-n
    std::vector<int> trsm_orders = {16, 32, 64, 128, 256, 512};  // --trsm-orders
    int trsm_problems = 2000;                      // --trsm-problems
    int max_candidates = 0;                        // --family-max-candidates: at most this many per case (0: all)
};

// The candidates of each family's case, the library's current choice first (so that a cut list still
// holds it). All are configurations the library accepts (its own checks, no GPU needed).
std::vector<GemmConfig> gemm_candidates(Precision p, bool exhaustive);
std::vector<LargeCholeskyConfig> large_candidates(int n);
std::vector<LdltBlocking> ldlt_candidates(int n);

// --family without a GPU (--dry-run): the candidates per case.
int families_dry_run(const Options& opt, const FamilyOptions& f);
// On the GPU: every case of the families asked for, timed; the tables written under `out_dir`.
int tune_families(const Options& opt, const FamilyOptions& f, const std::string& out_dir, int arch,
                  const std::string& device, const std::string& cuda_version);
// The child process of the LDL^T stage: BATCHSOLVE_TUNING_FILE holds one candidate; prints "ms <median>".
int ldlt_probe(Precision p, int n, int repeat);

}  // namespace batchsolve::autotune
