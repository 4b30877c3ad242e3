// Batched Cholesky (potrf, potrs, fused posv) for the interleaved and chunked interleaved layouts with
// run-time generated kernels (codegen/cholesky/interleaved.hpp), one thread per matrix, compiled through jit;
// potrs and potrf with config.warps_per_matrix = W > 0 run the cooperative kernels instead (W warps
// per 32 matrices, codegen/cholesky/cooperative.hpp; threads_per_block is then 32 W whatever the config
// says, and potrf is left-looking). posv keeps refusing warps_per_matrix.
//
// Called by src/cuda/cholesky.cu once the arguments are checked (src/core) and the view is
// interleaved or chunked interleaved; `config` comes from the caller (expert API) or the tuning
// table, and nb == 0 means "the library default for n" (default_interleaved_config). The first call
// with a configuration generates and compiles its kernel (NVRTC, ~0.1-10 s, then cached on disk and
// in memory); later calls only launch. Work is ordered on ctx.stream() on device ctx.device(); the
// calls do not synchronise and need no workspace. Configuration problems throw InvalidArgument
// naming "config.<field>" before anything runs.
#pragma once

#include <string>

#include "batchsolve/batch.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/tuning.hpp"
#include "../jit/jit.hpp"
#include "codegen/cholesky/interleaved.hpp"

namespace batchsolve::cuda_backend::tuned {

// The Cholesky generators (codegen/cholesky/: specs, checks, defaults, text) by the names the
// launchers and their tests use.
using namespace codegen::cholesky;

// A: n x n per matrix (only the uplo triangle is read and written), info: count ints on the device.
template <class T>
void potrf_interleaved(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig& config, Context& ctx);

// A holds the factor from potrf; B (n x nrhs, same layout and chunk size) is overwritten with X.
template <class T>
void potrs_interleaved(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, const CholeskyConfig& config,
                       Context& ctx);

// Factor and solve in one kernel pass per matrix; a matrix with info != 0 leaves its B untouched.
template <class T>
void posv_interleaved(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, const CholeskyConfig& config,
                      Context& ctx);

// What a call with these arguments would launch: compiles (or loads from the disk cache) the kernel
// without running it, so that an autotuner's timed loop never includes NVRTC. nrhs is ignored for potrf.
struct InterleavedKernelReport {
    std::string name;
    CholeskyConfig config;      // resolved (nb etc. filled in)
    int registers = 0;          // per thread (cudaFuncGetAttributes)
    int local_bytes = 0;        // local memory per thread: > 0 means spills or a stack
    int max_threads = 0;        // per block
    int blocks_per_sm = 0;      // occupancy at config.threads_per_block (and the cooperative kernel's shared memory)
    bool from_disk_cache = false;
    double compile_seconds = 0;
};
template <class T>
InterleavedKernelReport prepare_interleaved(Routine routine, Uplo uplo, int n, int nrhs, int count, int chunk,
                                            const CholeskyConfig& config, Context& ctx);

// The launchers' resolution of a call (what potrf/potrs/posv_interleaved do before the launch): the
// kernel of `routine` with `nrhs` right-hand sides (0 for potrf) on `device`, resolved, checked and
// looked up in the kernel cache on the first call of each (device, routine, precision, uplo, n,
// configuration, 32/64-bit offsets) and found by an integer key afterwards (no string formatted, no
// allocation). A two-kernel posv returns its factor kernel in `spec`/`kernel` and its solve kernel
// in `solve_spec`/`solve_kernel`. Public for tests/gpu/launch_path_bench.cpp, which times it on the
// host; throws InvalidArgument (naming `routine_name`'s config field) as the launchers do.
struct ResolvedLaunch {
    const InterleavedKernelSpec* spec = nullptr;
    const jit::LoadedKernel* kernel = nullptr;
    const InterleavedKernelSpec* solve_spec = nullptr;
    const jit::LoadedKernel* solve_kernel = nullptr;
};
ResolvedLaunch resolve_interleaved_launch(Routine routine, Precision precision, Uplo uplo, int n, int nrhs, int count,
                                          int chunk, const CholeskyConfig& config, int device, const char* routine_name);

}  // namespace batchsolve::cuda_backend::tuned
