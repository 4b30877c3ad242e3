// What the CUDA engine's three files share: the system layout, the build kernels' arguments and the
// launchers of the build (engine_cuda_build.cu) and solve (engine_cuda_solve.cu) kernels the driver
// (engine_cuda.cu) runs.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "engine.hpp"
#include "memory_plan.hpp"

namespace als::cuda_engine {
// Entries of one row accumulated by one thread block (kSegmentEntries, memory_plan.hpp): longer rows
// (popular items) are cut into segments of that many entries whose blocks add into the same system
// with atomics, so that one item with a million users does not keep a single block busy for the
// whole half-iteration.
// Rows of the other side staged in shared memory per step of the accumulation.
constexpr int kStagedRows = 32;
// Each thread owns a kTile x kTile block of the lower triangle of the system.
constexpr int kTile = 4;
// One thread per tile in a block of at most 1024 threads: 44 * 45 / 2 = 990 tiles, i.e. width 176.
constexpr int kMaxWidth = 176;
// The tensor-core build: 16 warps of at most 9 of the 16 x 16 tiles, 136 tiles, i.e. width 256.
constexpr int kMaxTensorWidth = 256;

inline void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw Error(std::string("CUDA: ") + call + ": " + cudaGetErrorString(status));
}
inline void check(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS) throw Error(std::string("cuBLAS: ") + call + " failed with status " + std::to_string(int(status)));
}

struct Segment {
    std::int64_t begin, end;  // entries [begin, end) of the CSR
    std::int32_t row;
};
static_assert(sizeof(Segment) == kSegmentBytes, "memory_plan.hpp counts segments of kSegmentBytes");

// The batched solver's index formula (batchsolve/batch.hpp) for packed column-major (chunk = 0) and
// chunked interleaved storage (plain interleaved: chunk = count).
struct Layout {
    std::int64_t count;
    std::int64_t chunk;  // 0: packed column-major
    __host__ __device__ std::int64_t offset(std::int64_t k, int i, int j, int rows, int cols) const {
        if (chunk == 0) return k * rows * cols + std::int64_t(j) * rows + i;
        const std::int64_t c = k / chunk, q = k % chunk;
        const std::int64_t width = (c + 1) * chunk <= count ? chunk : count - c * chunk;
        return c * chunk * rows * cols + (std::int64_t(j) * rows + i) * width + q;
    }
    // offset(k, i, j, rows, cols) == base + (j * rows + i) * stride: the divisions once per system.
    struct Entries {
        std::int64_t base, stride;
    };
    __host__ __device__ Entries entries(std::int64_t k, int rows, int cols) const {
        if (chunk == 0) return {k * rows * cols, 1};
        const std::int64_t c = k / chunk, q = k % chunk;
        const std::int64_t width = (c + 1) * chunk <= count ? chunk : count - c * chunk;
        return {c * chunk * rows * cols + q, width};
    }
};

struct BuildArgs {
    const Segment* segments;
    const std::int64_t* indptr;
    const std::int32_t* indices;
    const float* values;
    const float* other;   // other side's factors, rows x s
    const float* gram;    // s x s column-major lower (implicit), else nullptr
    float* a;             // systems of the slice
    float* b;             // right-hand sides of the slice
    Layout layout;
    std::int64_t first_row;
    int s, tiles_per_side;
    float lambda;
    bool implicit, biases;
    // SolveKernel::fused: each row's solution (the slice's factor rows) and info; the system is never stored.
    float* solution = nullptr;
    int* info = nullptr;
};

// The fused build and solve (SolveKernel::fused): every width of the blocked build (the packed system
// and its right-hand side fit the staging area), on sides whose longest row has at most this many
// entries (the block takes its whole row, and the rows are launched longest first: the ML-20M shape's
// most popular item, 125,838 entries, is ~3,900 stages of 32, about 12 ms of one block at k = 256 by
// the mma rate, within the ~15 ms the side's other blocks take around it).
constexpr std::int64_t kFusedLongestRow = 131072;

// ---- engine_cuda_build.cu ----------------------------------------------------------------------------
// Launches the build of `blocks` segments (first segments of their rows, or later ones) with the
// chosen kernel.
void launch_build(BuildKernel kind, bool first, unsigned blocks, BuildArgs args, cudaStream_t stream);
// Launches the fused build + solve of `blocks` rows (their first segments; args.solution, args.info set).
// blocked_cholesky: the Cholesky blocked by panels, else one column at a time.
void launch_fused(unsigned blocks, BuildArgs args, bool blocked_cholesky, cudaStream_t stream);
// G = D^T D (lower, column-major) of D = `rows` x s row-major through the split partials.
void launch_split_gram(const float* d, int s, std::int64_t rows, float* partials, float* gram, cudaStream_t stream);
// Floats of the partials of the largest plan for width s (any row count).
std::size_t gram_partials_floats(int s);

// ---- engine_cuda_solve.cu ----------------------------------------------------------------------------
// Solutions back into the factor rows (`count` systems of width s); a system that failed (info != 0)
// gives a zero row.
void launch_scatter_solutions(const float* b, const int* info, Layout layout, int s, std::int64_t count, float* out, cudaStream_t stream);
// The two-level solve's info: where the first block factored (info 0), the second block's info
// shifted by the first block's order.
void launch_merge_info(int* info, const int* second, int first_order, std::int64_t count, cudaStream_t stream);
// The tiled solve (tiled_cholesky.hpp) of `count` systems of width s <= 256 in `layout`: the lower
// triangles of a read, the solutions over b, info as LAPACK's. prefetch: resident blocks that loop over
// the systems, each gathering its next system by cp.async while it solves the current one.
void launch_tiled_solve(const float* a, float* b, int* info, Layout layout, int s, std::int64_t count, bool prefetch, cudaStream_t stream);
// Its dynamic shared memory per block.
std::size_t tiled_shared_bytes(int s, bool prefetch);
// Adds the systems of `count` whose info is not 0 to *failed.
void launch_count_failed(const int* info, std::int64_t count, unsigned long long* failed, cudaStream_t stream);
// The solver's views of `count` systems and right-hand sides of width s in the engine's layout.
std::pair<batchsolve::BatchView<float>, batchsolve::BatchView<float>> system_views(const EngineSettings& es, float* a, float* b,
                                                                                     std::int64_t count);
// The slices' batch sizes of a side of `rows` rows: the full slice and the remainder (0: none).
std::pair<std::int64_t, std::int64_t> slice_counts(std::int64_t rows, const EngineSettings& es);
// The posv kernels of the slice counts of a run, prepared without holding up the first iteration: each
// count's kernel (the tuning table's for that batch) compiles into the disk cache on a thread of its
// own, and until it is ready its slices run the first kernel that is (any generated posv kernel of
// this width solves any count of the column-major layout; the results agree to rounding). On a warm
// disk cache every count runs its own kernel from the first iteration.
class SolverKernels {
public:
    SolverKernels();
    // Starts the kernels of the slices of sides of these many rows (counts already started are kept).
    void start(const EngineSettings& es, const std::vector<std::int64_t>& side_rows, batchsolve::Context& ctx);
    // Blocks until some kernel can run every slice (stand_in false, or layouts other than
    // column-major: until every count's own is ready), loads the ready ones into ctx; what each
    // count got, for the log. stand_in only where the process ends by a quick exit (std::_Exit):
    // a compile thread may still run when it ends.
    std::string wait_until_runnable(batchsolve::Context& ctx, bool stand_in);
    // posv_batched of `count` systems with the count's own kernel when ready, else the stand-in's.
    void posv(const batchsolve::BatchView<float>& a, const batchsolve::BatchView<float>& b, int* info, std::int64_t count,
              batchsolve::Context& ctx);
    // "" when every slice ran its own kernel; else how many did not, and what was still compiling.
    std::string notes() const;

private:
    enum class State { running, ready, none, failed };
    struct Job {
        std::int64_t count = 0;
        std::string table_config;  // JSON of the table's configuration for this count
        State state = State::running;
        std::string note;
        double seconds = 0;
        std::chrono::steady_clock::time_point started;
        bool loaded = false;  // engine thread only
    };
    struct Shared;
    bool load_if_ready(std::size_t index, batchsolve::Context& ctx);
    std::shared_ptr<Shared> shared_;
    EngineSettings es_;
    int arch_ = 0;
    int stand_in_ = -1;  // index of the job whose kernel stands in
    std::int64_t stand_in_calls_ = 0;
};

}  // namespace als::cuda_engine
