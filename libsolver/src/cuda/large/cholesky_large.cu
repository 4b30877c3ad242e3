// The CUDA backend of the large-matrix Cholesky solvers, entirely on the GPU: blocked right-looking
// (with the next panel updated and factored on a second stream while the rest of the trailing matrix
// is updated), left-looking and recursive factorisations (algorithm.hpp); diagonal blocks by the
// generated fused POTF2 kernel (codegen/large/potf2.*, compiled by the NVRTC JIT), recursively split
// for wide panels, or by cusolverDnXpotrf; the rows below them by cuBLAS TRSM or by the block's
// inverse and GEMMs; updates by cuBLAS SYRK/GEMM (FP64 tensor cores for double, optionally TF32 for
// float). info is written on the device (the POTF2 kernels, or a small kernel after each cuSOLVER
// block): nothing returns to the host inside a factorisation. Plus posv_mixed's conversion of A to
// float, both triangles written (its residuals and norms: cuda/refinement.cu).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../../codegen/common.hpp"
#include "../../codegen/large/potf2.hpp"
#include "../../core/cholesky_large_backend.hpp"
#include "../../core/tuning_table.hpp"
#include "../jit/call_cache.hpp"
#include "../jit/jit.hpp"
#include "../jit/kernel_cache.hpp"
#include "../resources.hpp"
#include "algorithm.hpp"
#include "leaf_cholesky.hpp"
#include "potf2_manifest.hpp"

namespace batchsolve::cuda_backend {

using detail::CudaResources;
using detail::DeviceGuard;

namespace {

// The element-wise kernels' threads per block come from the configuration (the table's
// elementwise_threads).
unsigned blocks_for(long long count, int threads) { return unsigned((count + threads - 1) / threads); }

// ---- element-wise kernels -------------------------------------------------------------------------------

// The tile of posv_mixed's conversion (convert_symmetric): 32 x 32 entries through shared memory, so
// that the stored triangle is read and both triangles are written along columns (coalesced).
constexpr int kConvertTile = 32;
constexpr int kConvertRows = 8;  // threadIdx.y: each thread moves kConvertTile / kConvertRows entries

// dst (n x n, ldd) = A's uplo triangle rounded to Lo and mirrored into the other triangle: every entry
// of the square is written, so a consumer that reads a diagonal block's whole square (cuSOLVER's
// Xpotrf does) reads written, symmetric data. One block per stored tile (tile row >= tile column for
// lower, <= for upper; tile columns from first_tile_column); the entries of A outside its triangle are
// never read. *overflow = 1 when a stored entry is not finite in Lo.
template <class Hi, class Lo>
__global__ void convert_symmetric_kernel(bool lower, int n, int first_tile_column, const Hi* a, int lda, Lo* dst, int ldd,
                                         int* overflow) {
    const int tr = blockIdx.x, tc = first_tile_column + blockIdx.y;
    if (lower ? tr < tc : tr > tc) return;
    __shared__ Lo tile[kConvertTile][kConvertTile + 1];
    const int r0 = tr * kConvertTile, c0 = tc * kConvertTile;
    const int x = threadIdx.x;
    bool bad = false;
    // tile[c][x] = A(r0 + x, c0 + c) where that entry is stored.
    for (int c = threadIdx.y; c < kConvertTile; c += kConvertRows) {
        const int i = r0 + x, j = c0 + c;
        if (i < n && j < n && (lower ? i >= j : i <= j)) {
            const Lo v = Lo(a[std::size_t(j) * lda + i]);
            tile[c][x] = v;
            bad |= !isfinite(v);
        }
    }
    if (bad) *overflow = 1;
    __syncthreads();
    for (int c = threadIdx.y; c < kConvertTile; c += kConvertRows) {
        const int i = r0 + x, j = c0 + c;
        if (i < n && j < n) {
            // On a diagonal tile the entries outside the triangle take their mirror, A(j, i) = tile[x][c].
            const bool stored = lower ? i >= j : i <= j;
            dst[std::size_t(j) * ldd + i] = stored ? tile[c][x] : tile[x][c];
        }
        // Off the diagonal the mirrored tile: dst(c0 + x, r0 + c) = A(r0 + c, c0 + x) = tile[x][c] (its
        // own bounds: a last tile row cut by n still mirrors into full columns).
        if (tr != tc && c0 + x < n && r0 + c < n) dst[std::size_t(r0 + c) * ldd + c0 + x] = tile[x][c];
    }
}

// W := I (m x m, leading dimension ldw): one grid row per column.
template <class T>
__global__ void identity_kernel(int m, T* w, int ldw) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (i < m) w[std::size_t(j) * ldw + i] = i == j ? T(1) : T(0);
}

// After cusolverDnXpotrf on a diagonal block of order m: its first bad column, the smaller of
// cuSOLVER's info and the first diagonal entry that is not a finite positive number (a NaN pivot need
// not stop cuSOLVER), goes to info as column_offset + column unless info is already set.
template <class T>
__global__ void vendor_block_info_kernel(const int* block_info, const T* block, int lda, int m, int* info, int column_offset) {
    __shared__ int first;
    if (threadIdx.x == 0) first = m;
    __syncthreads();
    for (int j = threadIdx.x; j < m; j += blockDim.x) {
        const T d = block[std::size_t(j) * lda + j];
        if (!(isfinite(d) && d > T(0))) atomicMin(&first, j);
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    int column = first + 1;  // 1-based; m + 1: none
    const int reported = *block_info;
    if (reported > 0 && reported < column) column = reported;
    if (column <= m) atomicCAS(info, 0, column_offset + column);
}

// CholeskyDiagonal::leaf: one block of leaf::kThreads factors a diagonal block of order m <= 16 TS in
// registers (leaf_cholesky.hpp), one barrier per column; the first bad column goes to info as column_offset + column unless info
// is already set, and the factorisation of the block stops there.
template <class T, int TS>
__global__ void __launch_bounds__(large::leaf::kThreads, 1)
    leaf_cholesky_kernel(int m, T* block, int lda, bool lower, int* info, int column_offset) {
    namespace lf = large::leaf;
    __shared__ lf::Shared<T> s;
    const int tid = threadIdx.x;
    lf::Tile<T, TS> t;
    lf::leaf_load<T, TS>(t, tid, m, block, lda, lower);
    const int blocks = (m + TS - 1) / TS;
    int failed = 0;
    for (int jb = 0; jb < blocks && !failed; ++jb) {
#pragma unroll
        for (int jj = 0; jj < TS; ++jj) {
            lf::leaf_publish<T, TS>(t, tid, jb, jj, s);
            __syncthreads();
            T v;
            if (!lf::leaf_pivot_ok<T>(s, jb * TS + jj, v)) {
                failed = jb * TS + jj + 1;
                break;
            }
            lf::leaf_step<T, TS>(t, tid, jb, jj, v, s);
        }
    }
    lf::leaf_store<T, TS>(t, tid, m, block, lda, lower);
    if (tid == 0 && failed) atomicCAS(info, 0, column_offset + failed);
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
// It also holds the buffers of both lanes (the inverse of a diagonal block, the rows it is applied to,
// the vendor's workspace and the info of its block), grown on demand and never shrunk, so that a
// call after the first of its size allocates nothing.
struct Lane {
    int device = -1;
    bool busy = false;
    cudaStream_t stream = nullptr;
    cublasHandle_t cublas = nullptr;
    cusolverDnHandle_t cusolver = nullptr;
    cusolverDnParams_t params = nullptr;
    cudaEvent_t panel_ready = nullptr, update_done = nullptr;
    void* buffer[2] = {nullptr, nullptr};  // [0] the main lane's, [1] the side lane's
    std::size_t buffer_bytes[2] = {0, 0};
    std::vector<char> host_workspace;      // the vendor's host workspace (none for Xpotrf so far)

    void* grow(int slot, std::size_t bytes) {
        if (bytes > buffer_bytes[slot]) {
            if (buffer[slot]) BATCHSOLVE_CUDA_CHECK(cudaFree(buffer[slot]));  // synchronises: earlier work is done with it
            buffer[slot] = nullptr, buffer_bytes[slot] = 0;
            buffer[slot] = detail::device_allocate(bytes, "the large Cholesky's inverse and vendor buffers");
            buffer_bytes[slot] = bytes;
        }
        return buffer[slot];
    }
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
            BATCHSOLVE_CUSOLVER_CHECK(cusolverDnCreate(&lane->cusolver));
            BATCHSOLVE_CUSOLVER_CHECK(cusolverDnSetStream(lane->cusolver, lane->stream));
            BATCHSOLVE_CUSOLVER_CHECK(cusolverDnCreateParams(&lane->params));
            BATCHSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(&lane->panel_ready, cudaEventDisableTiming));
            BATCHSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(&lane->update_done, cudaEventDisableTiming));
            lane_ = lane.get();
            lanes().push_back(std::move(lane));
        }
        lane_->busy = true;
    }
    ~LaneLease() {
        if (kept_) return;
        std::lock_guard<std::mutex> lock(mutex());
        lane_->busy = false;
    }
    LaneLease(const LaneLease&) = delete;
    LaneLease& operator=(const LaneLease&) = delete;
    Lane* operator->() const { return lane_; }
    Lane& operator*() const { return *lane_; }
    // The lane stays busy for the life of the process: a captured graph uses its buffers and its
    // cuBLAS handle's workspace on every replay, which no other call may then share.
    void keep() { kept_ = true; }

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
    bool kept_ = false;
};

// ---- phase timing (optional) ------------------------------------------------------------------------------

using large::Phase;

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

// The loaded POTF2 kernel of a spec on the current device, through the one kernel cache (compiled or
// read from the disk cache once per process); above 48 KB of shared memory the kernel opts in when
// it is first loaded.
jit::LoadedKernel load_potf2(const codegen::large::Potf2Spec& spec) {
    int device = 0;
    BATCHSOLVE_CUDA_CHECK(cudaGetDevice(&device));
    const auto& family = codegen::large::potf2_family();
    if (const jit::LoadedKernel* k = jit::find_kernel(codegen::cache_family(family), family.kernel_name(spec), device)) return *k;
    const std::string problem = family.can_implement(spec);
    if (!problem.empty()) {
        const std::size_t colon = problem.find(':');
        throw InvalidArgument("potrf", "config." + problem.substr(0, colon), problem.substr(colon + 2));
    }
    const jit::KernelRequest request = potf2_request(spec, device);
    return jit::cached_kernel(request.key, device, request.generate, request.on_load);
}

// ---- the CUDA executor of the blocked factorisation (algorithm.hpp) ------------------------------------------

cublasOperation_t op_of(large::Trans t) { return t == large::Trans::yes ? CUBLAS_OP_T : CUBLAS_OP_N; }

cudaDataType data_type_of(float) { return CUDA_R_32F; }
cudaDataType data_type_of(double) { return CUDA_R_64F; }

// C := op_a(A) op_b(B) (beta 0), never TF32: the inverse's product is part of the panel, not an update.
template <class T>
void gemm_assign(cublasHandle_t h, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const T* a, int lda,
                 const T* b, int ldb, T* c, int ldc) {
    constexpr bool single = std::is_same_v<T, float>;
    const T one(1), zero(0);
    BATCHSOLVE_CUBLAS_CHECK(cublasGemmEx(h, op_a, op_b, m, n, k, &one, a, data_type_of(T{}), lda, b, data_type_of(T{}), ldb, &zero, c,
                                         data_type_of(T{}), ldc, single ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F,
                                         CUBLAS_GEMM_DEFAULT));
}

// cuBLAS/cuSOLVER on the context's stream (main) or the lookahead lane's (side), the generated POTF2
// kernel, the lane's two events and buffers, optional phase timing. The lane is leased when the
// executor is made (before any capture), so that its buffers are allocated outside a graph.
template <class T>
class CudaExecutor {
public:
    CudaExecutor(CudaResources& r, Uplo uplo, int n, T* a, int lda, int* info, const LargeCholeskyConfig& config,
                 CholeskyPhaseTimes* times)
        : r_(r), uplo_(uplo), lda_(lda), info_(info), tf32_(config.tf32_updates && std::is_same_v<T, float>),
          threads_elementwise_(config.elementwise_threads), clock_(times), lane_(r.device_) {
        // The whole-matrix vendor variant makes one Xpotrf of order n and nothing else.
        const bool whole = config.variant == CholeskyVariant::vendor;
        if (!whole && config.diagonal == CholeskyDiagonal::fused) load_fused(config);  // the vendor's blocks never call it
        // Buffer layout per lane: inverse (nb x nb) | slice (slice rows x nb) | vendor workspace | block info.
        const std::size_t nb = std::size_t(config.nb);
        std::size_t bytes = 0;
        if (!whole && config.panel_solve == PanelSolve::inverse) {
            inverse_at_ = bytes;
            bytes += cholesky_large_detail::align_up(nb * nb * sizeof(T));
            slice_at_ = bytes;
            bytes += cholesky_large_detail::align_up(
                std::size_t(large::inverse_slice_rows(config.nb, cholesky_large_detail::kInverseSlicePanels)) * nb * sizeof(T));
        }
        if (whole || config.diagonal == CholeskyDiagonal::vendor) {
            std::size_t device_bytes = 0, host_bytes = 0;
            BATCHSOLVE_CUSOLVER_CHECK(cusolverDnXpotrf_bufferSize(r_.cusolver(), lane_->params, fill_of(uplo), whole ? n : config.nb,
                                                                  data_type_of(T{}), a, lda, data_type_of(T{}), &device_bytes,
                                                                  &host_bytes));
            vendor_at_ = bytes;
            vendor_bytes_ = std::max<std::size_t>(device_bytes, 1);
            bytes += cholesky_large_detail::align_up(vendor_bytes_);
            block_info_at_ = bytes;
            bytes += cholesky_large_detail::align_up(sizeof(int));
            if (lane_->host_workspace.size() < host_bytes) lane_->host_workspace.resize(host_bytes);
            host_bytes_ = host_bytes;
        }
        if (bytes > 0)
            for (int slot = 0; slot < 2; ++slot) base_[slot] = static_cast<char*>(lane_->grow(slot, bytes));
    }
    bool timing() const { return clock_.on(); }
    void collect(int panels) { clock_.collect(panels); }
    void keep_lane() { lane_.keep(); }

    void potf2(large::Lane lane, T* block, int m, int column_offset) {
        void* args[] = {&m, &block, &lda_, &info_, &column_offset};
        jit::launch(kernel_, 1, 1, threads_, 1, shared_bytes_, stream(lane), args);
    }
    void potrf_vendor(large::Lane lane, T* block, int m, int column_offset) {
        const int slot = lane == large::Lane::side;
        int* block_info = reinterpret_cast<int*>(base_[slot] + block_info_at_);
        BATCHSOLVE_CUSOLVER_CHECK(cusolverDnXpotrf(solver(lane), lane_->params, fill_of(uplo_), m, data_type_of(T{}), block, lda_,
                                                   data_type_of(T{}), base_[slot] + vendor_at_, vendor_bytes_,
                                                   host_bytes_ ? lane_->host_workspace.data() : nullptr, host_bytes_, block_info));
        vendor_block_info_kernel<T><<<1, threads_elementwise_, 0, stream(lane)>>>(block_info, block, lda_, m, info_, column_offset);
        BATCHSOLVE_LAUNCH_CHECK("vendor_block_info_kernel");
    }
    void potrf_leaf(large::Lane lane, T* block, int m, int column_offset) {
        const bool lower = uplo_ == Uplo::lower;
        if (m <= large::leaf::kGrid * 4)
            leaf_cholesky_kernel<T, 4><<<1, large::leaf::kThreads, 0, stream(lane)>>>(m, block, lda_, lower, info_, column_offset);
        else
            leaf_cholesky_kernel<T, 8><<<1, large::leaf::kThreads, 0, stream(lane)>>>(m, block, lda_, lower, info_, column_offset);
        BATCHSOLVE_LAUNCH_CHECK("leaf_cholesky_kernel");
    }
    T* inverse_buffer(large::Lane lane) { return reinterpret_cast<T*>(base_[lane == large::Lane::side] + inverse_at_); }
    T* slice_buffer(large::Lane lane) { return reinterpret_cast<T*>(base_[lane == large::Lane::side] + slice_at_); }
    void identity(large::Lane lane, int m, T* w, int ldw) {
        identity_kernel<T><<<dim3(blocks_for(m, threads_elementwise_), unsigned(m)), threads_elementwise_, 0, stream(lane)>>>(m, w, ldw);
        BATCHSOLVE_LAUNCH_CHECK("identity_kernel");
    }
    void copy(large::Lane lane, int rows, int cols, const T* src, int lds, T* dst, int ldd) {
        BATCHSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(dst, std::size_t(ldd) * sizeof(T), src, std::size_t(lds) * sizeof(T),
                                                std::size_t(rows) * sizeof(T), std::size_t(cols), cudaMemcpyDeviceToDevice,
                                                stream(lane)));
    }
    void trsm(large::Lane lane, large::Side side, Uplo fill, large::Trans t, int m, int n, const T* a, int lda, T* b, int ldb) {
        BATCHSOLVE_CUBLAS_CHECK(cuda_backend::trsm(handle(lane), side == large::Side::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                                                   fill_of(fill), op_of(t), m, n, a, lda, b, ldb));
    }
    // C (its fill triangle) -= op(A) op(A)^T (the algorithm splits the large ones into GEMMs); TF32:
    // with the handle in TF32 math mode.
    void syrk(large::Lane lane, Uplo fill, large::Trans t, int n, int k, const T* a, int lda, T* c, int ldc) {
        cublasHandle_t h = handle(lane);
        if (tf32_) BATCHSOLVE_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
        const cublasStatus_t status = syrk_minus(h, fill_of(fill), op_of(t), n, k, a, lda, c, ldc);
        if (tf32_) BATCHSOLVE_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        BATCHSOLVE_CUBLAS_CHECK(status);
    }
    void gemm(large::Lane lane, large::Trans ta, large::Trans tb, int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c,
              int ldc) {
        gemm_minus<T>(handle(lane), op_of(ta), op_of(tb), m, n, k, a, lda, b, ldb, c, ldc, tf32_);
    }
    void gemm_assign(large::Lane lane, large::Trans ta, large::Trans tb, int m, int n, int k, const T* a, int lda, const T* b, int ldb,
                     T* c, int ldc) {
        cuda_backend::gemm_assign<T>(handle(lane), op_of(ta), op_of(tb), m, n, k, a, lda, b, ldb, c, ldc);
    }

    void fork() {
        // The side lane starts after whatever the caller queued on the context's stream.
        BATCHSOLVE_CUDA_CHECK(cudaEventRecord(lane_->update_done, r_.stream()));
        BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(lane_->stream, lane_->update_done, 0));
    }
    void join() {  // the caller's stream sees the finished factor (and info) when it continues
        BATCHSOLVE_CUDA_CHECK(cudaEventRecord(lane_->panel_ready, lane_->stream));
        BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(r_.stream(), lane_->panel_ready, 0));
    }
    void panel_ready_signal() { BATCHSOLVE_CUDA_CHECK(cudaEventRecord(lane_->panel_ready, lane_->stream)); }
    void panel_ready_wait() { BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(r_.stream(), lane_->panel_ready, 0)); }
    void update_done_signal() { BATCHSOLVE_CUDA_CHECK(cudaEventRecord(lane_->update_done, r_.stream())); }
    void update_done_wait() { BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(lane_->stream, lane_->update_done, 0)); }
    void begin(large::Lane lane) { clock_.begin(stream(lane)); }
    void end(large::Lane lane, large::Phase p) { clock_.end(stream(lane), p); }

private:
    void load_fused(const LargeCholeskyConfig& config) {
        const codegen::large::Potf2Spec spec = potf2_spec(std::is_same_v<T, float> ? Precision::s : Precision::d, uplo_, config);
        kernel_ = load_potf2(spec);
        shared_bytes_ = unsigned(codegen::large::potf2_family().resources(spec).shared_bytes);
        threads_ = unsigned(spec.config.threads);
    }
    cudaStream_t stream(large::Lane lane) const { return lane == large::Lane::side ? lane_->stream : r_.stream(); }
    cublasHandle_t handle(large::Lane lane) const { return lane == large::Lane::side ? lane_->cublas : r_.cublas(); }
    cusolverDnHandle_t solver(large::Lane lane) const { return lane == large::Lane::side ? lane_->cusolver : r_.cusolver(); }

    CudaResources& r_;
    Uplo uplo_;
    int lda_;
    int* info_;
    bool tf32_;
    int threads_elementwise_;
    PhaseClock clock_;
    jit::LoadedKernel kernel_;
    unsigned shared_bytes_ = 0, threads_ = 0;
    LaneLease lane_;
    char* base_[2] = {nullptr, nullptr};
    std::size_t inverse_at_ = 0, slice_at_ = 0, vendor_at_ = 0, vendor_bytes_ = 0, block_info_at_ = 0, host_bytes_ = 0;
};

// The factorisation of one call: the executor (kernel loaded and buffers allocated first, so that a
// graph capture records launches only) and the algorithm.
template <class T>
class Factorisation {
public:
    Factorisation(CudaResources& r, Uplo uplo, int n, T* a, int lda, int* info, const LargeCholeskyConfig& config,
                  CholeskyPhaseTimes* times)
        : exec_(r, uplo, n, a, lda, info, config, times),
          algorithm_(exec_, uplo, n, a, lda, config, cholesky_large_detail::kMinLeaf, cholesky_large_detail::kInverseSlicePanels) {}
    void run() { exec_.collect(algorithm_.run(exec_.timing())); }
    void keep_lane() { exec_.keep_lane(); }

private:
    CudaExecutor<T> exec_;
    large::BlockedCholesky<T, CudaExecutor<T>> algorithm_;
};

// Executable graphs of captured factorisations (a fast path of jit/call_cache.hpp), keyed by everything
// the capture depends on. Never destroyed (a replay may still be in flight when another call would
// evict it); bounded. Each keeps the lane it was captured with (LaneLease::keep).
constexpr std::size_t kGraphCacheCapacity = 64;
using GraphKey = jit::IntegerKey<19>;
jit::CallCache<GraphKey, cudaGraphExec_t>& graph_cache() {
    static jit::CallCache<GraphKey, cudaGraphExec_t> cache(kGraphCacheCapacity);
    return cache;
}

template <class T>
GraphKey graph_key(const CudaResources& r, Uplo uplo, int n, const T* a, int lda, const int* info, const LargeCholeskyConfig& c) {
    using jit::key_field;
    return GraphKey{{r.device_, key_field(r.stream()), static_cast<long long>(sizeof(T)), int(uplo), n, key_field(a), lda,
                     key_field(info), c.nb, c.ib, c.recursion_depth, int(c.variant), int(c.strip), c.lookahead, c.tf32_updates,
                     int(c.diagonal), int(c.panel_solve), c.syrk_leaf, c.elementwise_threads}};
}

// The first calls' factor (below): the whole matrix by one cusolverDnXpotrf on the context's cuSOLVER
// handle, its workspace and the block's info in the context's scratch, info as for a vendor-factored
// diagonal block. Nothing else is made on the way (no lane, no cuBLAS handle): a process's first call
// pays what cuSOLVER's own first call pays and the handle. false (nothing queued) when Xpotrf asks for
// host workspace: the caller then runs the vendor variant through the executor.
cusolverDnParams_t first_call_params() {
    static std::mutex mutex;
    static cusolverDnParams_t params = nullptr;  // host-side settings, none per device; kept for the process
    std::lock_guard<std::mutex> lock(mutex);
    if (params == nullptr) BATCHSOLVE_CUSOLVER_CHECK(cusolverDnCreateParams(&params));
    return params;
}

template <class T>
bool factor_whole_by_vendor(CudaResources& r, Uplo uplo, int n, T* a, int lda, int* info, int threads) {
    cusolverDnHandle_t h = r.cusolver();
    cusolverDnParams_t params = first_call_params();
    std::size_t device_bytes = 0, host_bytes = 0;
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnXpotrf_bufferSize(h, params, fill_of(uplo), n, data_type_of(T{}), a, lda, data_type_of(T{}),
                                                          &device_bytes, &host_bytes));
    if (host_bytes > 0) return false;
    const std::size_t work_bytes = cholesky_large_detail::align_up(std::max<std::size_t>(device_bytes, 1));
    char* base = static_cast<char*>(r.scratch(work_bytes + sizeof(int)));
    int* block_info = reinterpret_cast<int*>(base + work_bytes);
    BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), r.stream()));
    BATCHSOLVE_CUSOLVER_CHECK(cusolverDnXpotrf(h, params, fill_of(uplo), n, data_type_of(T{}), a, lda, data_type_of(T{}), base,
                                               device_bytes, nullptr, 0, block_info));
    vendor_block_info_kernel<T><<<1, threads, 0, r.stream()>>>(block_info, a, lda, n, info, 0);
    BATCHSOLVE_LAUNCH_CHECK("vendor_block_info_kernel");
    return true;
}

CudaResources& prepare(Context& ctx, const char* routine) {
    CudaResources& r = detail::resources_of(ctx, routine);
    BATCHSOLVE_CUBLAS_CHECK(cublasSetPointerMode(r.cublas(), CUBLAS_POINTER_MODE_HOST));
    return r;
}

// Whether a call of this graph key has not been seen before (it is then recorded): its first call
// runs uncaptured, the next one captures (a shape called once pays no capture). Once the record is
// full, every new shape counts as seen: it captures from its first call, as before.
bool first_sight(const GraphKey& key) {
    static jit::CallCache<GraphKey, char> seen(kGraphCacheCapacity);
    if (graph_cache().find(key) != nullptr || seen.find(key) != nullptr) return false;
    return seen.insert(key, std::make_unique<char>(0)) != nullptr;
}

}  // namespace

template <class T>
BATCHSOLVE_LARGE_FACTOR(T) {
    CudaResources& r = detail::resources_of(ctx, "potrf");  // its cuBLAS handle below, after the first calls' branch
    DeviceGuard guard(r.device_);
    r.require_device_memory(info, "potrf", "info");
    if (n > 0) r.require_device_memory(a, "potrf", "a");
    // The table's blocking runs on cuBLAS, whose first GEMM/TRSM of a process loads their kernels
    // (0.05-0.15 s); cuSOLVER's whole-matrix factor (the vendor variant, uncaptured) does not use them.
    // So until a background thread has made those cuBLAS calls once (context.cu; started at the
    // process's first such call, once this call's own kernels are loaded and its work queued, so that
    // the two do not load modules at the same time), a call with the table's blocking runs the vendor
    // variant. Phase timing asks for the blocking.
    constexpr bool single = std::is_same_v<T, float>;
    if (n > 0 && table_blocking && config.variant != CholeskyVariant::vendor && times == nullptr &&
        !detail::library_warm_up_done(r.device_, single)) {
        if (!factor_whole_by_vendor<T>(r, uplo, n, a, lda, info, config.elementwise_threads)) {
            LargeCholeskyConfig whole = config;
            whole.variant = CholeskyVariant::vendor, whole.graph = false;
            BATCHSOLVE_CUBLAS_CHECK(cublasSetPointerMode(r.cublas(), CUBLAS_POINTER_MODE_HOST));
            BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), r.stream()));
            Factorisation<T> f(r, uplo, n, a, lda, info, whole, nullptr);
            f.run();
        }
        detail::start_library_warm_up(r.device_, single);
        return;
    }
    // The whole-matrix vendor variant (the table's for s at every n and for d up to 16384) is one Xpotrf.
    // Uncaptured, or at the first call of a shape that a later call captures, it runs on the context's
    // cuSOLVER handle (factor_whole_by_vendor): no lane (a stream, a cuBLAS and a cuSOLVER handle of
    // its own), no cuBLAS handle and no graph's capture and instantiation, which took a fresh process's
    // first call 0.004-0.008 s past cuSOLVER's own (results/2026-12-03-h200-e28e399-first-call).
    if (n > 0 && config.variant == CholeskyVariant::vendor && times == nullptr &&
        (!config.graph || first_sight(graph_key(r, uplo, n, a, lda, info, config))) &&
        factor_whole_by_vendor<T>(r, uplo, n, a, lda, info, config.elementwise_threads))
        return;
    BATCHSOLVE_CUBLAS_CHECK(cublasSetPointerMode(r.cublas(), CUBLAS_POINTER_MODE_HOST));
    if (n > 0 && config.graph && times == nullptr) {
        auto& cache = graph_cache();
        const GraphKey key = graph_key(r, uplo, n, a, lda, info, config);
        const cudaGraphExec_t* cached = cache.find(key);
        if (cached && *cached) {
            BATCHSOLVE_CUDA_CHECK(cudaGraphLaunch(*cached, r.stream()));
            return;
        }
        // A null entry: this call could not be captured before (a library call that refuses stream
        // capture), so it runs uncaptured below.
        if (!cached && !cache.full()) {
            Factorisation<T> f(r, uplo, n, a, lda, info, config, nullptr);  // compiles/loads the kernel, allocates first
            BATCHSOLVE_CUDA_CHECK(cudaStreamBeginCapture(r.stream(), cudaStreamCaptureModeRelaxed));
            cudaGraph_t graph = nullptr;
            cudaGraphExec_t exec = nullptr;
            bool captured = false;
            try {
                BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), r.stream()));
                f.run();
                BATCHSOLVE_CUDA_CHECK(cudaStreamEndCapture(r.stream(), &graph));
                BATCHSOLVE_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
                captured = true;
            } catch (const CudaError&) {
                cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
                if (cudaStreamIsCapturing(r.stream(), &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
                    cudaGraph_t partial = nullptr;
                    cudaStreamEndCapture(r.stream(), &partial);  // leave the stream usable
                    if (partial) cudaGraphDestroy(partial);
                }
                cudaGetLastError();  // capture errors are not sticky: clear the last one
            }
            if (graph) cudaGraphDestroy(graph);
            if (captured) {
                f.keep_lane();
                cache.insert(key, std::make_unique<cudaGraphExec_t>(exec));
                BATCHSOLVE_CUDA_CHECK(cudaGraphLaunch(exec, r.stream()));
                return;
            }
            cache.insert(key, std::make_unique<cudaGraphExec_t>(nullptr));
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
BATCHSOLVE_LARGE_CONVERT_SYMMETRIC(T) {
    CudaResources& r = prepare(ctx, "posv_mixed");
    DeviceGuard guard(r.device_);
    if (n == 0) return;
    const int tiles = (n + kConvertTile - 1) / kConvertTile;
    // One grid column per tile column, in slices of at most 65535 (the limit of grid.y).
    for (int t0 = 0; t0 < tiles; t0 += 65535) {
        const int cols = std::min(65535, tiles - t0);
        convert_symmetric_kernel<<<dim3(unsigned(tiles), unsigned(cols)), dim3(kConvertTile, kConvertRows), 0, r.stream()>>>(
            uplo == Uplo::lower, n, t0, a, lda, dst, ldd, overflow);
        BATCHSOLVE_LAUNCH_CHECK("convert_symmetric_kernel");
    }
}

codegen::large::Potf2Spec potf2_spec(Precision precision, Uplo uplo, const LargeCholeskyConfig& config) {
    codegen::large::Potf2Spec spec;
    spec.precision = precision;
    spec.uplo = uplo;
    spec.capacity = large::leaf_capacity(config.nb, config.recursion_depth, cholesky_large_detail::kMinLeaf);
    spec.config.ib = config.ib;
    spec.config.strip = config.strip == Potf2Strip::warp ? codegen::large::StripFactor::warp : codegen::large::StripFactor::columns;
    spec.config = codegen::large::potf2_family().default_config(spec);
    return spec;
}

std::string potf2_manifest_line(const codegen::large::Potf2Spec& s) {
    return std::string("potf2 ") + precision_letter(s.precision) + " " + batchsolve::to_string(s.uplo) + " " +
           std::to_string(s.capacity) + " " + std::to_string(s.config.ib) + " " + std::to_string(s.config.threads) + " " +
           (s.config.strip == codegen::large::StripFactor::warp ? "warp " : "columns ") + (s.config.resident ? "1" : "0");
}

jit::KernelRequest potf2_request(const codegen::large::Potf2Spec& spec, int device) {
    const auto& family = codegen::large::potf2_family();
    jit::record_in_manifest(potf2_manifest_line(spec));  // $BATCHSOLVE_KERNEL_MANIFEST
    jit::KernelRequest request;
    request.key = jit::KernelKey{codegen::cache_family(family), family.kernel_name(spec), {}};
    request.generate = [spec, &family] { return family.generate(spec); };
    const std::size_t shared = family.resources(spec).shared_bytes;
    request.on_load = [spec, shared, device](jit::LoadedKernel& k) {
        if (k.max_threads < spec.config.threads)
            throw InvalidArgument("potrf", "config.nb",
                                  "kernel " + k.name + " allows " + std::to_string(k.max_threads) + " threads per block, not " +
                                      std::to_string(spec.config.threads));
        if (shared > 48 * 1024) {
            const cudaError_t e = cudaKernelSetAttributeForDevice(static_cast<cudaKernel_t>(k.function),
                                                                  cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared), device);
            if (e != cudaSuccess)
                throw InvalidArgument("potrf", "config.ib",
                                      std::to_string(shared) + " bytes of shared memory for " + k.name + ": " + cudaGetErrorString(e));
        }
    };
    return request;
}

jit::KernelRequest potf2_manifest_request(const std::string& line) {
    auto bad = [&](const std::string& field, const std::string& why) {
        throw InvalidArgument("kernel manifest", field, why + " (line: " + line.substr(0, 120) + ")");
    };
    std::istringstream in(line);
    std::string kind, precision, uplo, strip, rest;
    int capacity = 0, ib = 0, threads = 0, resident = 0;
    if (!(in >> kind >> precision >> uplo >> capacity >> ib >> threads >> strip >> resident) || kind != "potf2" || (in >> rest))
        bad("line", "potf2 <precision> <uplo> <capacity> <ib> <threads> <strip> <resident>");
    codegen::large::Potf2Spec spec;
    if (precision != "s" && precision != "d") bad("precision", "s or d");
    spec.precision = precision == "s" ? Precision::s : Precision::d;
    if (uplo != "lower" && uplo != "upper") bad("uplo", "lower or upper");
    spec.uplo = uplo == "lower" ? Uplo::lower : Uplo::upper;
    if (strip != "columns" && strip != "warp") bad("strip", "columns or warp");
    if (resident != 0 && resident != 1) bad("resident", "0 or 1");
    spec.capacity = capacity;
    spec.config.ib = ib, spec.config.threads = threads, spec.config.resident = resident == 1;
    spec.config.strip = strip == "warp" ? codegen::large::StripFactor::warp : codegen::large::StripFactor::columns;
    if (const std::string problem = codegen::large::potf2_family().can_implement(spec); !problem.empty()) bad("config", problem);
    int device = 0;
    cudaGetDevice(&device);  // the opt-in names a device; a replay for an architecture loads nothing
    cudaGetLastError();
    return potf2_request(spec, device);
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_LARGE_ROUTINES)

}  // namespace batchsolve::cuda_backend
