// The generated kernels a call runs, resolved from its configuration as the launchers resolve them,
// without compiling or launching anything: what check_config answers, what the workspace query
// sizes, what the byte-identical guard (tests/codegen/emit_all) digests and what a warm-up compiles.
// Pure C++ (no CUDA header).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "batchsolve/tuning.hpp"
#include "batchsolve/types.hpp"
#include "codegen/cholesky/column_major.hpp"
#include "codegen/cholesky/interleaved.hpp"
#include "codegen/kernel_source.hpp"
#include "../jit/kernel_cache.hpp"

namespace batchsolve::cuda_backend::tuned {

struct KernelPlan {
    // "" when the configuration runs this call; else "config.<field>: <reason>" or "n: <reason>".
    std::string problem;
    // Interleaved layouts (and through_interleaved): one kernel, or posv's factor and solve kernels.
    std::vector<codegen::cholesky::InterleavedKernelSpec> interleaved;
    // Column-major layouts: the register or staged kernel.
    std::vector<codegen::cholesky::ColumnMajorSpec> column_major;
    // Column-major views run through the interleaved kernels on slices of `slice` matrices converted
    // into Context::workspace (workspace_bytes of them).
    bool through_interleaved = false;
    int slice = 0;
    std::size_t workspace_bytes = 0;

    // The text of every kernel of the plan (problem must be "").
    std::vector<codegen::KernelSource> sources() const;
};

// The kernel cache's key of a planned kernel (jit/kernel_cache.hpp), the one the launchers use:
// family "cholesky.<generator family>", the kernel's name (it encodes the spec), the configuration's
// text (and nrhs for the column-major kernels) in the disk key. With the generator call, a request.
jit::KernelKey cache_key(const codegen::cholesky::InterleavedKernelSpec& spec);
jit::KernelKey cache_key(const codegen::cholesky::ColumnMajorSpec& spec);
jit::KernelRequest cache_request(const codegen::cholesky::InterleavedKernelSpec& spec);
jit::KernelRequest cache_request(const codegen::cholesky::ColumnMajorSpec& spec);

// ---- kernel manifests: the exact kernels a run needed, replayable by batchsolve-warmup --kernels ----
// (the GEMM family and the large Cholesky's POTF2 have lines of their own, "gemm ..." and "potf2 ...":
// blas3/gemm_manifest.hpp, large/potf2_manifest.hpp; manifest_request reads all four kinds)
//
// With $BATCHSOLVE_KERNEL_MANIFEST=FILE set, every generated kernel of these families a process asks
// the cache for (cache_request: the launchers' misses, prepare_kernel, warm_up) is appended to FILE
// once, one line per kernel spec (jit::record_in_manifest):
//   interleaved <routine> <precision> <uplo> <n> <wide_index 0|1> <configuration JSON>
//   column_major <routine> <precision> <uplo> <n> <nrhs> <configuration JSON>
// tests/gpu/run-all.sh records what the GPU suites compile and warms the next run's disk cache with
// exactly those kernels.
std::string manifest_line(const codegen::cholesky::InterleavedKernelSpec& spec);
std::string manifest_line(const codegen::cholesky::ColumnMajorSpec& spec);
// The cache request of a manifest line (the generator call included); throws InvalidArgument naming
// the field of a malformed line.
jit::KernelRequest manifest_request(const std::string& line);

// The plan of `routine` on matrices of order n (1..codegen::max_dispatched_n) in `layout`, nrhs
// right-hand sides (ignored by potrf), `count` matrices in chunks of `chunk` (interleaved: count;
// column-major: ignored) of `element_bytes` bytes, with `config` as the call would see it (the
// caller's, or the tuning table's entry, or CholeskyConfig{} for the defaults).
KernelPlan plan_kernels(codegen::cholesky::Routine routine, Precision precision, Uplo uplo, LayoutKind layout, int n,
                        int nrhs, int count, int chunk, const CholeskyConfig& config);

}  // namespace batchsolve::cuda_backend::tuned
