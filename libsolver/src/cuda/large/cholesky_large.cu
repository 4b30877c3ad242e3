// The CUDA backend of the large-matrix Cholesky solvers, entirely on the GPU: blocked right-looking
// (with the next panel updated and factored on a second stream while the rest of the trailing matrix
// is updated) and left-looking factorisations; diagonal blocks by the generated fused POTF2 kernel
// (codegen/large/potf2.*, compiled by the NVRTC JIT), recursively split for wide panels; panels by
// cuBLAS TRSM and updates by cuBLAS SYRK/GEMM (FP64 tensor cores for double, optionally TF32 for
// float). info is written by the POTF2 kernels on the device: nothing returns to the host inside a
// factorisation. Plus posv_mixed's conversions, residuals and |A||x| products.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "../../codegen/common.hpp"
#include "../../codegen/large/potf2.hpp"
#include "../../core/cholesky_large_backend.hpp"
#include "../jit/jit.hpp"
#include "../resources.hpp"

namespace batchsolve::cuda_backend {

using detail::CudaResources;
using detail::DeviceGuard;

namespace {

// Threads of the element-wise kernels; tile of the |A||x| kernel (32 x 32 entries, 32 x 8 threads).
constexpr int kThreads = 256;
constexpr int kTile = 32;
constexpr int kTileRows = 8;
// Order at or below which a TF32 update of a triangle is one SYRK (math mode TF32); above it, halves
// recursively with the square block below them as one TF32 GEMM (ldlt.cu measured the same split).
constexpr int kTf32SyrkLeaf = 512;

unsigned blocks_for(long long count, int threads = kThreads) { return unsigned((count + threads - 1) / threads); }

// ---- element-wise kernels -------------------------------------------------------------------------------

template <class Hi, class Lo>
__global__ void convert_triangle_kernel(bool lower, int n, int first_column, const Hi* a, int lda, Lo* dst, int ldd,
                                        int* overflow) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = first_column + blockIdx.y;
    if (i >= n || (lower ? i < j : i > j)) return;
    const Lo v = Lo(a[std::size_t(j) * lda + i]);
    dst[std::size_t(j) * ldd + i] = v;
    if (!isfinite(v)) *overflow = 1;
}

// sums += |A| |x| (x == nullptr: ones) from the stored triangle: a 32 x 32 tile of the triangle adds
// its row sums (a_ij |x_j| into row i) and, off the diagonal, its mirrored column sums (a_ij |x_i|
// into row j); a warp reads 32 consecutive rows of one column.
template <class T>
__global__ void abs_symmetric_times_kernel(bool lower, int n, const T* a, int lda, const T* x, T* sums) {
    if (lower ? blockIdx.x < blockIdx.y : blockIdx.x > blockIdx.y) return;  // tiles of the other triangle
    __shared__ T row_part[kTileRows][kTile];
    const int i = blockIdx.x * kTile + threadIdx.x;
    const T xi = (x == nullptr || i >= n) ? T(1) : fabs(x[i]);
    T row_sum = 0;
    for (int c = threadIdx.y; c < kTile; c += kTileRows) {
        const int j = blockIdx.y * kTile + c;
        T column_value = 0;
        if (i < n && j < n && (lower ? i >= j : i <= j)) {
            const T v = fabs(a[std::size_t(j) * lda + i]);
            row_sum += v * (x == nullptr ? T(1) : fabs(x[j]));
            if (i != j) column_value = v * xi;
        }
        for (int offset = 16; offset > 0; offset /= 2) column_value += __shfl_down_sync(0xffffffffu, column_value, offset);
        if (threadIdx.x == 0 && j < n && column_value != T(0)) atomicAdd(sums + j, column_value);
    }
    row_part[threadIdx.y][threadIdx.x] = row_sum;
    __syncthreads();
    if (threadIdx.y == 0 && i < n) {
        T total = 0;
        for (int k = 0; k < kTileRows; ++k) total += row_part[k][threadIdx.x];
        if (total != T(0)) atomicAdd(sums + i, total);
    }
}

// ---- cuBLAS by type ---------------------------------------------------------------------------------

cublasFillMode_t fill_of(Uplo u) { return u == Uplo::lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }

cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t fill, cublasOperation_t op, int m, int n,
                    const float* a, int lda, float* b, int ldb) {
    const float one = 1;
    return cublasStrsm(h, side, fill, op, CUBLAS_DIAG_NON_UNIT, m, n, &one, a, lda, b, ldb);
}
cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t fill, cublasOperation_t op, int m, int n,
                    const double* a, int lda, double* b, int ldb) {
    const double one = 1;
    return cublasDtrsm(h, side, fill, op, CUBLAS_DIAG_NON_UNIT, m, n, &one, a, lda, b, ldb);
}
cublasStatus_t trsv(cublasHandle_t h, cublasFillMode_t fill, cublasOperation_t op, int n, const float* a, int lda, float* x) {
    return cublasStrsv(h, fill, op, CUBLAS_DIAG_NON_UNIT, n, a, lda, x, 1);
}
cublasStatus_t trsv(cublasHandle_t h, cublasFillMode_t fill, cublasOperation_t op, int n, const double* a, int lda, double* x) {
    return cublasDtrsv(h, fill, op, CUBLAS_DIAG_NON_UNIT, n, a, lda, x, 1);
}
cublasStatus_t syrk_minus(cublasHandle_t h, cublasFillMode_t fill, cublasOperation_t op, int n, int k, const float* a, int lda,
                          float* c, int ldc) {
    const float minus_one = -1, one = 1;
    return cublasSsyrk(h, fill, op, n, k, &minus_one, a, lda, &one, c, ldc);
}
cublasStatus_t syrk_minus(cublasHandle_t h, cublasFillMode_t fill, cublasOperation_t op, int n, int k, const double* a, int lda,
                          double* c, int ldc) {
    const double minus_one = -1, one = 1;
    return cublasDsyrk(h, fill, op, n, k, &minus_one, a, lda, &one, c, ldc);
}
cublasStatus_t symm_minus(cublasHandle_t h, cublasFillMode_t fill, int n, int nrhs, const double* a, int lda, const double* x,
                          int ldx, double* r, int ldr) {
    const double minus_one = -1, one = 1;
    if (nrhs == 1) return cublasDsymv(h, fill, n, &minus_one, a, lda, x, 1, &one, r, 1);
    return cublasDsymm(h, CUBLAS_SIDE_LEFT, fill, n, nrhs, &minus_one, a, lda, x, ldx, &one, r, ldr);
}
cublasStatus_t symm_minus(cublasHandle_t h, cublasFillMode_t fill, int n, int nrhs, const float* a, int lda, const float* x,
                          int ldx, float* r, int ldr) {
    const float minus_one = -1, one = 1;
    if (nrhs == 1) return cublasSsymv(h, fill, n, &minus_one, a, lda, x, 1, &one, r, 1);
    return cublasSsymm(h, CUBLAS_SIDE_LEFT, fill, n, nrhs, &minus_one, a, lda, x, ldx, &one, r, ldr);
}

// C -= op_a(A) op_b(B), through cublasGemmEx so that a single-precision product may run on TF32.
template <class T>
void gemm_minus(cublasHandle_t h, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const T* a, int lda,
                const T* b, int ldb, T* c, int ldc, bool tf32) {
    constexpr bool single = std::is_same_v<T, float>;
    const cudaDataType type = single ? CUDA_R_32F : CUDA_R_64F;
    const cublasComputeType_t compute =
        single ? (tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F) : CUBLAS_COMPUTE_64F;
    const T minus_one(-1), one(1);
    BATCHSOLVE_CUBLAS_CHECK(cublasGemmEx(h, op_a, op_b, m, n, k, &minus_one, a, type, lda, b, type, ldb, &one, c, type, ldc,
                                         compute, CUBLAS_GEMM_DEFAULT));
}

// ---- the second stream of the lookahead -------------------------------------------------------------------

// A stream with its own cuBLAS handle (a handle's workspace must not be shared by kernels running
// at the same time on two streams), and the two events the right-looking loop hands back and forth.
// Lanes are pooled per device and never freed: a context borrows one for the length of a call.
struct Lane {
    int device = -1;
    bool busy = false;
    cudaStream_t stream = nullptr;
    cublasHandle_t cublas = nullptr;
    cudaEvent_t panel_ready = nullptr, update_done = nullptr;
};

class LaneLease {
public:
    explicit LaneLease(int device) {
        std::lock_guard<std::mutex> lock(mutex());
        for (auto& lane : lanes())
            if (lane->device == device && !lane->busy) {
                lane_ = lane.get();
                break;
            }
        if (lane_ == nullptr) {
            auto lane = std::make_unique<Lane>();
            lane->device = device;
            BATCHSOLVE_CUDA_CHECK(cudaStreamCreateWithFlags(&lane->stream, cudaStreamNonBlocking));
            BATCHSOLVE_CUBLAS_CHECK(cublasCreate(&lane->cublas));
            BATCHSOLVE_CUBLAS_CHECK(cublasSetStream(lane->cublas, lane->stream));
            BATCHSOLVE_CUBLAS_CHECK(cublasSetPointerMode(lane->cublas, CUBLAS_POINTER_MODE_HOST));
            BATCHSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(&lane->panel_ready, cudaEventDisableTiming));
            BATCHSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(&lane->update_done, cudaEventDisableTiming));
            lane_ = lane.get();
            lanes().push_back(std::move(lane));
        }
        lane_->busy = true;
    }
    ~LaneLease() {
        std::lock_guard<std::mutex> lock(mutex());
        lane_->busy = false;
    }
    LaneLease(const LaneLease&) = delete;
    LaneLease& operator=(const LaneLease&) = delete;
    Lane& operator*() const { return *lane_; }
    Lane* operator->() const { return lane_; }

private:
    static std::mutex& mutex() {
        static std::mutex m;
        return m;
    }
    static std::vector<std::unique_ptr<Lane>>& lanes() {
        static std::vector<std::unique_ptr<Lane>> all;
        return all;
    }
    Lane* lane_ = nullptr;
};

// ---- phase timing (optional) ------------------------------------------------------------------------------

enum class Phase { panel, trsm, update };

// CUDA event pairs around each phase when the caller asked for the split; nothing otherwise.
class PhaseClock {
public:
    explicit PhaseClock(CholeskyPhaseTimes* times) : times_(times) {}
    ~PhaseClock() {
        for (auto& m : marks_) {
            cudaEventDestroy(m.start);
            cudaEventDestroy(m.stop);
        }
    }
    PhaseClock(const PhaseClock&) = delete;
    PhaseClock& operator=(const PhaseClock&) = delete;

    bool on() const { return times_ != nullptr; }
    void begin(cudaStream_t s) {
        if (!on()) return;
        Mark m;
        BATCHSOLVE_CUDA_CHECK(cudaEventCreate(&m.start));
        BATCHSOLVE_CUDA_CHECK(cudaEventCreate(&m.stop));
        BATCHSOLVE_CUDA_CHECK(cudaEventRecord(m.start, s));
        marks_.push_back(m);
    }
    void end(cudaStream_t s, Phase p) {
        if (!on()) return;
        marks_.back().phase = p;
        BATCHSOLVE_CUDA_CHECK(cudaEventRecord(marks_.back().stop, s));
    }
    // Waits for the recorded work (the caller asked for times: one host synchronisation at the end).
    void collect(int panels) {
        if (!on()) return;
        for (auto& m : marks_) {
            BATCHSOLVE_CUDA_CHECK(cudaEventSynchronize(m.stop));
            float ms = 0;
            BATCHSOLVE_CUDA_CHECK(cudaEventElapsedTime(&ms, m.start, m.stop));
            double& slot = m.phase == Phase::panel ? times_->panel_seconds
                           : m.phase == Phase::trsm ? times_->trsm_seconds
                                                    : times_->update_seconds;
            slot += ms * 1e-3;
        }
        times_->panels = panels;
    }

private:
    struct Mark {
        cudaEvent_t start = nullptr, stop = nullptr;
        Phase phase = Phase::panel;
    };
    CholeskyPhaseTimes* times_;
    std::vector<Mark> marks_;
};

// ---- the blocked factorisation ----------------------------------------------------------------------------

// Where a call's work goes: a cuBLAS handle bound to a stream.
struct Exec {
    cublasHandle_t cublas;
    cudaStream_t stream;
};

// Order of the leaves of the recursive POTF2: a block of order m splits into ceil(m/2) rounded up
// to a multiple of 32 and the rest.
int split_first(int m) { return std::min(m, codegen::round_up((m + 1) / 2, 32)); }
int leaf_capacity(int nb, int depth) {
    int m = nb;
    for (int d = 0; d < depth && m > cholesky_large_detail::kMinLeaf; ++d) m = split_first(m);
    return codegen::round_up(m, 32);
}

template <class T>
class Factorisation {
public:
    Factorisation(CudaResources& r, Uplo uplo, int n, T* a, int lda, int* info, const LargeCholeskyConfig& config,
                  CholeskyPhaseTimes* times)
        : r_(r), uplo_(uplo), n_(n), a_(a), lda_(lda), info_(info), config_(config),
          tf32_(config.tf32_updates && std::is_same_v<T, float>), clock_(times) {
        codegen::large::Potf2Spec spec;
        spec.precision = std::is_same_v<T, float> ? Precision::s : Precision::d;
        spec.uplo = uplo;
        spec.capacity = leaf_capacity(config.nb, config.recursion_depth);
        spec.config.ib = config.ib;
        spec.config.strip = config.strip == Potf2Strip::warp ? codegen::large::StripFactor::warp
                                                              : codegen::large::StripFactor::columns;
        spec.config = codegen::large::potf2_family().default_config(spec);
        kernel_ = load(spec);
        shared_bytes_ = unsigned(codegen::large::potf2_family().resources(spec).shared_bytes);
        threads_ = unsigned(spec.config.threads);
    }

    void run() {
        const Exec main{r_.cublas(), r_.stream()};
        int panels = 0;
        if (config_.variant == CholeskyVariant::left_looking) {
            for (int j = 0; j < n_; j += config_.nb, ++panels) {
                const int jb = std::min(config_.nb, n_ - j);
                update(main, j, jb, 0, j);  // every panel to the left at once
                panel(main, j, jb);
            }
        } else if (!config_.lookahead || n_ <= config_.nb || clock_.on()) {
            // One stream (also when timing phases: a timed phase must not overlap another).
            for (int k = 0; k < n_; k += config_.nb, ++panels) {
                const int kb = std::min(config_.nb, n_ - k);
                panel(main, k, kb);
                if (k + kb < n_) trailing(main, k + kb, n_ - k - kb, k, kb);
            }
        } else {
            panels = lookahead(main);
        }
        clock_.collect(panels);
    }

private:
    // L(i, j) of the matrix as the lower factor sees it (upper storage holds U = L^T).
    T* at(int i, int j) const {
        return uplo_ == Uplo::lower ? a_ + std::size_t(j) * lda_ + i : a_ + std::size_t(i) * lda_ + j;
    }

    static jit::LoadedKernel load(const codegen::large::Potf2Spec& spec);

    // The diagonal block (k, k) of order kb, then the rows below it.
    void panel(const Exec& e, int k, int kb) {
        clock_.begin(e.stream);
        potf2(e, k, kb, config_.recursion_depth);
        clock_.end(e.stream, Phase::panel);
        if (k + kb < n_) {
            clock_.begin(e.stream);
            solve_below(e, k, kb, k + kb, n_ - k - kb);
            clock_.end(e.stream, Phase::trsm);
        }
    }

    void potf2(const Exec& e, int k, int m, int depth) {
        const int m1 = split_first(m);
        if (depth == 0 || m <= cholesky_large_detail::kMinLeaf || m1 >= m) {
            int order = m;
            T* block = at(k, k);
            int column_offset = k;
            void* args[] = {&order, &block, const_cast<int*>(&lda_), &info_, &column_offset};
            jit::launch(kernel_, 1, 1, threads_, 1, shared_bytes_, e.stream, args);
            return;
        }
        potf2(e, k, m1, depth - 1);
        solve_below(e, k, m1, k + m1, m - m1);
        syrk(e, k + m1, m - m1, k, m1);
        potf2(e, k + m1, m - m1, depth - 1);
    }

    // L(r0:r0+m, c:c+kb) := L(r0:r0+m, c:c+kb) L(c:c+kb, c:c+kb)^-T.
    void solve_below(const Exec& e, int c, int kb, int r0, int m) {
        if (uplo_ == Uplo::lower)
            BATCHSOLVE_CUBLAS_CHECK(trsm(e.cublas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, m, kb, at(c, c),
                                         lda_, at(r0, c), lda_));
        else
            BATCHSOLVE_CUBLAS_CHECK(trsm(e.cublas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, kb, m, at(c, c),
                                         lda_, at(r0, c), lda_));
    }

    // L(r:r+m, r:r+m) (its triangle) -= L(r:r+m, c:c+k) L(r:r+m, c:c+k)^T.
    void syrk(const Exec& e, int r, int m, int c, int k) {
        if (m <= 0 || k <= 0) return;
        if (tf32_ && m > kTf32SyrkLeaf) {
            const int m1 = m / 2;
            syrk(e, r, m1, c, k);
            gemm(e, r + m1, m - m1, r, m1, c, k);
            syrk(e, r + m1, m - m1, c, k);
            return;
        }
        if (tf32_) BATCHSOLVE_CUBLAS_CHECK(cublasSetMathMode(e.cublas, CUBLAS_TF32_TENSOR_OP_MATH));
        const cublasStatus_t status =
            uplo_ == Uplo::lower ? syrk_minus(e.cublas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, m, k, at(r, c), lda_, at(r, r), lda_)
                                 : syrk_minus(e.cublas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, m, k, at(r, c), lda_, at(r, r), lda_);
        if (tf32_) BATCHSOLVE_CUBLAS_CHECK(cublasSetMathMode(e.cublas, CUBLAS_DEFAULT_MATH));
        BATCHSOLVE_CUBLAS_CHECK(status);
    }

    // L(r:r+m, s:s+w) -= L(r:r+m, c:c+k) L(s:s+w, c:c+k)^T (a block below the diagonal).
    void gemm(const Exec& e, int r, int m, int s, int w, int c, int k) {
        if (m <= 0 || w <= 0 || k <= 0) return;
        if (uplo_ == Uplo::lower)
            gemm_minus<T>(e.cublas, CUBLAS_OP_N, CUBLAS_OP_T, m, w, k, at(r, c), lda_, at(s, c), lda_, at(r, s), lda_, tf32_);
        else  // the block is stored transposed: L(r.., s..)^T -= L(s.., c..) L(r.., c..)^T, both stored as U
            gemm_minus<T>(e.cublas, CUBLAS_OP_T, CUBLAS_OP_N, w, m, k, at(s, c), lda_, at(r, c), lda_, at(r, s), lda_, tf32_);
    }

    // Columns s:s+w of the trailing matrix (diagonal block and everything below it) receive the
    // update of columns c:c+k.
    void update(const Exec& e, int s, int w, int c, int k) {
        if (k <= 0) return;
        clock_.begin(e.stream);
        syrk(e, s, w, c, k);
        gemm(e, s + w, n_ - s - w, s, w, c, k);
        clock_.end(e.stream, Phase::update);
    }

    // The whole trailing matrix from r on with columns c:c+k (one SYRK of order n - r).
    void trailing(const Exec& e, int r, int m, int c, int k) {
        clock_.begin(e.stream);
        syrk(e, r, m, c, k);
        clock_.end(e.stream, Phase::update);
    }

    // Right-looking with lookahead: the side lane updates and factors panel k+1 while the main
    // stream updates the rest of the trailing matrix with panel k. Two events carry the order:
    // panel_ready (panel k+1 factored, side -> main) and update_done (the trailing update of panel
    // k has reached the next panel's columns, main -> side).
    int lookahead(const Exec& main) {
        LaneLease lane(r_.device_);
        const Exec side{lane->cublas, lane->stream};
        // The side lane starts after whatever the caller queued on the context's stream.
        BATCHSOLVE_CUDA_CHECK(cudaEventRecord(lane->update_done, main.stream));
        BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(side.stream, lane->update_done, 0));
        const int nb = config_.nb;
        int panels = 1;
        panel(side, 0, std::min(nb, n_));
        BATCHSOLVE_CUDA_CHECK(cudaEventRecord(lane->panel_ready, side.stream));
        for (int k = 0; k < n_; k += nb) {
            const int kb = std::min(nb, n_ - k), next = k + kb;
            if (next >= n_) break;
            const int next_kb = std::min(nb, n_ - next), rest = n_ - next - next_kb;
            BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(main.stream, lane->panel_ready, 0));   // panel k is factored
            BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(side.stream, lane->update_done, 0));   // panel k-1's update is in
            update(side, next, next_kb, k, kb);
            panel(side, next, next_kb);
            ++panels;
            BATCHSOLVE_CUDA_CHECK(cudaEventRecord(lane->panel_ready, side.stream));
            if (rest > 0) trailing(main, next + next_kb, rest, k, kb);
            BATCHSOLVE_CUDA_CHECK(cudaEventRecord(lane->update_done, main.stream));
        }
        // The caller's stream sees the finished factor (and info) when it continues.
        BATCHSOLVE_CUDA_CHECK(cudaEventRecord(lane->panel_ready, side.stream));
        BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(main.stream, lane->panel_ready, 0));
        return panels;
    }

    CudaResources& r_;
    Uplo uplo_;
    int n_;
    T* a_;
    int lda_;
    int* info_;
    LargeCholeskyConfig config_;
    bool tf32_;
    PhaseClock clock_;
    jit::LoadedKernel kernel_;
    unsigned shared_bytes_ = 0, threads_ = 0;
};

// The loaded POTF2 kernel of a spec on the current device, compiled (or read from the disk cache)
// once per process; above 48 KB of shared memory the kernel opts in.
template <class T>
jit::LoadedKernel Factorisation<T>::load(const codegen::large::Potf2Spec& spec) {
    static std::mutex m;
    static std::map<std::string, jit::LoadedKernel> known;
    int device = 0;
    BATCHSOLVE_CUDA_CHECK(cudaGetDevice(&device));
    const std::string name = codegen::large::potf2_kernel_name(spec);
    const std::string key = std::to_string(device) + ":" + name;
    {
        std::lock_guard<std::mutex> lock(m);
        if (auto it = known.find(key); it != known.end()) return it->second;
    }
    const auto& family = codegen::large::potf2_family();
    const std::string problem = family.problem(spec);
    if (!problem.empty()) {
        const std::size_t colon = problem.find(':');
        throw InvalidArgument("potrf", "config." + problem.substr(0, colon), problem.substr(colon + 2));
    }
    const std::size_t shared = family.resources(spec).shared_bytes;
    jit::LoadedKernel k = jit::get_kernel(family.generate(spec), device);
    if (k.max_threads < spec.config.threads)
        throw InvalidArgument("potrf", "config.nb",
                              "kernel " + name + " allows " + std::to_string(k.max_threads) + " threads per block, not " +
                                  std::to_string(spec.config.threads));
    if (shared > 48 * 1024) {
        const cudaError_t e = cudaKernelSetAttributeForDevice(static_cast<cudaKernel_t>(k.function),
                                                              cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared), device);
        if (e != cudaSuccess)
            throw InvalidArgument("potrf", "config.ib",
                                  std::to_string(shared) + " bytes of shared memory for " + name + ": " + cudaGetErrorString(e));
    }
    std::lock_guard<std::mutex> lock(m);
    known.emplace(key, k);
    return k;
}

// Executable graphs of captured factorisations, by the text of everything the capture depends on.
// Never destroyed (a replay may still be in flight when another call would evict it); bounded.
class GraphCache {
public:
    static constexpr std::size_t kCapacity = 64;
    static GraphCache& instance() {
        static GraphCache cache;
        return cache;
    }
    cudaGraphExec_t find(const std::string& key) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = graphs_.find(key);
        return it == graphs_.end() ? nullptr : it->second;
    }
    bool full() {
        std::lock_guard<std::mutex> lock(mutex_);
        return graphs_.size() >= kCapacity;
    }
    void insert(const std::string& key, cudaGraphExec_t exec) {
        std::lock_guard<std::mutex> lock(mutex_);
        graphs_.emplace(key, exec);
    }

private:
    std::mutex mutex_;
    std::map<std::string, cudaGraphExec_t> graphs_;
};

template <class T>
std::string graph_key(const CudaResources& r, Uplo uplo, int n, const T* a, int lda, const int* info, const LargeCholeskyConfig& c) {
    std::ostringstream key;
    key << r.device_ << ':' << static_cast<const void*>(r.stream()) << ':' << sizeof(T) << ':' << int(uplo) << ':' << n << ':'
        << static_cast<const void*>(a) << ':' << lda << ':' << static_cast<const void*>(info) << ':' << c.nb << ':' << c.ib << ':'
        << c.recursion_depth << ':' << int(c.variant) << ':' << int(c.strip) << ':' << c.lookahead << ':' << c.tf32_updates;
    return key.str();
}

CudaResources& prepare(Context& ctx, const char* routine) {
    CudaResources& r = detail::resources_of(ctx, routine);
    BATCHSOLVE_CUBLAS_CHECK(cublasSetPointerMode(r.cublas(), CUBLAS_POINTER_MODE_HOST));
    return r;
}

}  // namespace

template <class T>
BATCHSOLVE_LARGE_FACTOR(T) {
    CudaResources& r = prepare(ctx, "potrf");
    DeviceGuard guard(r.device_);
    r.require_device_memory(info, "potrf", "info");
    if (n > 0) r.require_device_memory(a, "potrf", "a");
    if (n > 0 && config.graph && times == nullptr) {
        GraphCache& cache = GraphCache::instance();
        const std::string key = graph_key(r, uplo, n, a, lda, info, config);
        if (cudaGraphExec_t exec = cache.find(key)) {
            BATCHSOLVE_CUDA_CHECK(cudaGraphLaunch(exec, r.stream()));
            return;
        }
        if (!cache.full()) {
            Factorisation<T> f(r, uplo, n, a, lda, info, config, nullptr);  // compiles/loads the kernel first
            // Relaxed: a first call may create the lookahead lane (stream, cuBLAS handle) while capturing.
            BATCHSOLVE_CUDA_CHECK(cudaStreamBeginCapture(r.stream(), cudaStreamCaptureModeRelaxed));
            cudaGraph_t graph = nullptr;
            try {
                BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), r.stream()));
                f.run();
            } catch (...) {
                cudaStreamEndCapture(r.stream(), &graph);  // leave the stream usable
                if (graph) cudaGraphDestroy(graph);
                throw;
            }
            BATCHSOLVE_CUDA_CHECK(cudaStreamEndCapture(r.stream(), &graph));
            cudaGraphExec_t exec = nullptr;
            const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
            cudaGraphDestroy(graph);
            BATCHSOLVE_CUDA_CHECK(instantiated);
            cache.insert(key, exec);
            BATCHSOLVE_CUDA_CHECK(cudaGraphLaunch(exec, r.stream()));
            return;
        }
    }
    BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), r.stream()));
    if (n == 0) return;
    Factorisation<T> f(r, uplo, n, a, lda, info, config, times);
    f.run();
}

template <class T>
BATCHSOLVE_LARGE_SOLVE(T) {
    CudaResources& r = prepare(ctx, "potrs");
    DeviceGuard guard(r.device_);
    r.require_device_memory(a, "potrs", "a");
    r.require_device_memory(b, "potrs", "b");
    const cublasFillMode_t fill = fill_of(uplo);
    // lower: L y = b, L^T x = y; upper: U^T y = b, U x = y.
    const cublasOperation_t first = uplo == Uplo::lower ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t second = uplo == Uplo::lower ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (nrhs == 1) {
        BATCHSOLVE_CUBLAS_CHECK(trsv(r.cublas(), fill, first, n, a, lda, b));
        BATCHSOLVE_CUBLAS_CHECK(trsv(r.cublas(), fill, second, n, a, lda, b));
    } else {
        BATCHSOLVE_CUBLAS_CHECK(trsm(r.cublas(), CUBLAS_SIDE_LEFT, fill, first, n, nrhs, a, lda, b, ldb));
        BATCHSOLVE_CUBLAS_CHECK(trsm(r.cublas(), CUBLAS_SIDE_LEFT, fill, second, n, nrhs, a, lda, b, ldb));
    }
}

template <class T>
BATCHSOLVE_LARGE_CONVERT_TRIANGLE(T) {
    CudaResources& r = prepare(ctx, "posv_mixed");
    DeviceGuard guard(r.device_);
    if (n == 0) return;
    // One grid row per column, in slices of at most 65535 columns (the limit of grid.y).
    for (int j0 = 0; j0 < n; j0 += 65535) {
        const int cols = std::min(65535, n - j0);
        convert_triangle_kernel<<<dim3(blocks_for(n), cols), kThreads, 0, r.stream()>>>(uplo == Uplo::lower, n, j0, a, lda,
                                                                                         dst, ldd, overflow);
        BATCHSOLVE_LAUNCH_CHECK("convert_triangle_kernel");
    }
}

template <class T>
BATCHSOLVE_LARGE_SYMMETRIC_RESIDUAL(T) {
    CudaResources& r = prepare(ctx, "posv_mixed");
    DeviceGuard guard(r.device_);
    BATCHSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(res, std::size_t(ldr) * sizeof(T), b, std::size_t(ldb) * sizeof(T),
                                            std::size_t(n) * sizeof(T), nrhs, cudaMemcpyDeviceToDevice, r.stream()));
    BATCHSOLVE_CUBLAS_CHECK(symm_minus(r.cublas(), fill_of(uplo), n, nrhs, a, lda, x, ldx, res, ldr));
}

template <class T>
BATCHSOLVE_LARGE_ABS_SYMMETRIC_TIMES(T) {
    CudaResources& r = prepare(ctx, "posv_mixed");
    DeviceGuard guard(r.device_);
    BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(sums, 0, std::size_t(n) * sizeof(T), r.stream()));
    const unsigned tiles = unsigned((n + kTile - 1) / kTile);
    abs_symmetric_times_kernel<<<dim3(tiles, tiles), dim3(kTile, kTileRows), 0, r.stream()>>>(uplo == Uplo::lower, n, a, lda, x,
                                                                                              sums);
    BATCHSOLVE_LAUNCH_CHECK("abs_symmetric_times_kernel");
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_LARGE_ROUTINES)

}  // namespace batchsolve::cuda_backend
