// The CUDA backend's context functions: devices, the stream, library handles, scratch, and the
// memory primitives behind batchsolve::Buffer.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/backends.hpp"
#include "resources.hpp"

namespace batchsolve {
namespace detail {

namespace {
const char* cusolver_status_name(cusolverStatus_t s) {
    switch (s) {
        case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
        case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
        case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
        case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
        case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
        case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
        case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
        case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
        case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
        case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
        case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
        case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
        case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
        default: return "cuSOLVER status (see cusolver_common.h)";
    }
}
// "12.4" from the runtime's and driver's 12040.
std::string cuda_version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// Why there is no device to use, in words. The runtime says "CUDA driver version is insufficient"
// both when the driver is too old and when there is no driver at all (cudaDriverGetVersion then
// gives 0), which sent users looking for a driver update on machines without a GPU.
[[noreturn]] void throw_no_usable_device(cudaError_t status) {
    cudaGetLastError();
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    std::string why;
    if (status == cudaErrorInsufficientDriver && driver == 0) {
        why = "no CUDA device/driver found: the NVIDIA driver (libcuda.so.1) is not installed or cannot be loaded, "
              "so there is no GPU for the cuda backend (use --backend cpu or auto)";
    } else if (status == cudaErrorInsufficientDriver) {
        why = "the NVIDIA driver is too old: it supports CUDA up to " + cuda_version_text(driver) +
              ", this build of batchsolve needs CUDA " + cuda_version_text(CUDART_VERSION) + " (update the driver)";
    } else if (status == cudaErrorNoDevice || status == cudaSuccess) {
        const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
        why = "no CUDA device found: the driver (CUDA " + cuda_version_text(driver) + ") sees no GPU" +
              (visible != nullptr ? std::string(" (CUDA_VISIBLE_DEVICES='") + visible + "')" : std::string());
    } else if (status == cudaErrorSystemDriverMismatch) {
        why = "the NVIDIA kernel module and the user-space driver (libcuda) have different versions: reload "
              "the module or reboot";
    } else {
        why = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    }
    throw CudaError("cudaGetDeviceCount", int(status), why);
}
}  // namespace

void throw_cuda_error(const char* call, cudaError_t status) {
    cudaGetLastError();  // a non-sticky error must not be blamed on the next launch as well
    throw CudaError(call, int(status), std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status));
}

void throw_cublas_error(const char* call, cublasStatus_t status) {
    throw CudaError(call, int(status), std::string(cublasGetStatusName(status)) + ": " + cublasGetStatusString(status));
}

void throw_cusolver_error(const char* call, cusolverStatus_t status) {
    throw CudaError(call, int(status), cusolver_status_name(status));
}

void* device_allocate(std::size_t bytes, const char* what) {
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status != cudaSuccess) {
        cudaGetLastError();
        throw CudaError(std::string("cudaMalloc (") + what + ", " + std::to_string(bytes) + " bytes)", int(status),
                        std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status));
    }
    return p;
}

// ---- DeviceGuard ----------------------------------------------------------------------------------

DeviceGuard::DeviceGuard(int device) {
    int current = -1;
    BATCHSOLVE_CUDA_CHECK(cudaGetDevice(&current));
    if (current != device) {
        BATCHSOLVE_CUDA_CHECK(cudaSetDevice(device));
        previous_ = current;
    }
}

DeviceGuard::~DeviceGuard() {
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

namespace {

// ---- the vendor libraries' first use, off the caller's path -----------------------------------------------
//
// The process's first cuBLAS GEMM-family call costs 0.05 s (d) / 0.1 s (s) and its first TRSM 0.05 s
// more (cuBLAS loading its kernels; results/2026-12-03-h200-15e50aa-first-call), which the large
// routines (potrf_large, posv_mixed, sysv_mixed, their solves) paid inside their first call; cuSOLVER's
// Xpotrf and cuSOLVER's own start another 0.015 s. A warm-up thread per device and precision makes
// those calls once, on handles and a stream of its own (the operations the large routines issue, on
// problems of two orders), then marks itself done and exits. The large Cholesky starts the one it
// needs at its first call (and runs cuSOLVER's whole-matrix factor until it is done:
// cuda/large/cholesky_large.cu); with BATCHSOLVE_LIBRARY_WARMUP=on a context's creation starts both
// (before the CUDA context exists: the libraries open while it is created), with =off none starts
// and the large Cholesky takes its blocking from the first call. Nobody waits for them but a
// context's release (so that a program may reset the device after it); a call that needs a kernel
// they are still loading loads it itself. Not at every context's creation by default: a program that
// never calls the large routines would load both libraries' kernels and run their operations for
// nothing (only the handles are made there: below).
// By default a context's creation makes its cuSOLVER and cuBLAS handles on a thread of its own
// (prefetch_handles below: no kernel is loaded, no operation runs), and sysv_mixed's first call starts
// the warm-up of its factor's precision at its entry (start_library_warm_up_for_solver).
// BATCHSOLVE_LIBRARY_WARMUP: "off" (or 0): no warm-up, no detour and no handles made ahead, every call
// loads what it needs itself; "lazy": handles made at their first use and the warm-up started by the
// large Cholesky's detour only (the behaviour before the two above); "on" (or 1): the default, and the
// warm-up threads start at a context's creation too; anything else: the default.
enum class WarmUpMode { off, lazy, at_first_call, at_context_creation };
WarmUpMode warm_up_mode() {
    static const WarmUpMode mode = [] {
        const char* v = std::getenv("BATCHSOLVE_LIBRARY_WARMUP");
        if (v != nullptr && (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0)) return WarmUpMode::off;
        if (v != nullptr && std::strcmp(v, "lazy") == 0) return WarmUpMode::lazy;
        if (v != nullptr && (std::strcmp(v, "on") == 0 || std::strcmp(v, "1") == 0)) return WarmUpMode::at_context_creation;
        return WarmUpMode::at_first_call;
    }();
    return mode;
}
bool handles_made_ahead() {
    return warm_up_mode() == WarmUpMode::at_first_call || warm_up_mode() == WarmUpMode::at_context_creation;
}

// The operations of the large routines (cuda/large/cholesky_large.cu, cuda/ldlt/ldlt.cu) in precision T
// on zero-filled operands of order `order` (what is computed is discarded; every status is ignored).
template <class T>
void warm_up_operations(cublasHandle_t h, cusolverDnHandle_t solver, cusolverDnParams_t params, cudaStream_t s, int order) {
    constexpr bool single = std::is_same_v<T, float>;
    const cudaDataType type = single ? CUDA_R_32F : CUDA_R_64F;
    const std::size_t square = std::size_t(order) * order;
    void* memory = nullptr;
    if (cudaMallocAsync(&memory, 3 * square * sizeof(T) + sizeof(int), s) != cudaSuccess) return;
    T* a = static_cast<T*>(memory);
    T* b = a + square;
    T* c = b + square;
    int* info = reinterpret_cast<int*>(c + square);
    cudaMemsetAsync(memory, 0, 3 * square * sizeof(T) + sizeof(int), s);
    const T one(1), minus_one(-1), zero(0);
    const cublasComputeType_t compute = single ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, order, order, order, &minus_one, a, type, order, b, type, order, &one, c, type,
                 order, compute, CUBLAS_GEMM_DEFAULT);
    cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, order, order, order, &one, a, type, order, b, type, order, &zero, c, type, order,
                 compute, CUBLAS_GEMM_DEFAULT);
    if constexpr (single) {
        cublasStrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, order, order, &one, a, order, c,
                    order);
        cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, order, order, &one, a, order, c,
                    order);
        cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, order, order, &minus_one, a, order, &one, c, order);
        cublasSsyrkx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, order, order, &minus_one, a, order, b, order, &one, c, order);
        cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, order, a, order, c, 1);
        cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, order, a, order, c, 1);
        cublasSsymv(h, CUBLAS_FILL_MODE_LOWER, order, &minus_one, a, order, b, 1, &one, c, 1);  // refinement residuals
        cublasSgemv(h, CUBLAS_OP_N, order, order, &one, a, order, b, 1, &zero, c, 1);
    } else {
        cublasDtrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, order, order, &one, a, order, c,
                    order);
        cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, order, order, &one, a, order, c,
                    order);
        cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, order, order, &minus_one, a, order, &one, c, order);
        cublasDsyrkx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, order, order, &minus_one, a, order, b, order, &one, c, order);
        cublasDtrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, order, a, order, c, 1);
        cublasDtrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, order, a, order, c, 1);
        cublasDsymv(h, CUBLAS_FILL_MODE_LOWER, order, &minus_one, a, order, b, 1, &one, c, 1);
        cublasDgemv(h, CUBLAS_OP_N, order, order, &one, a, order, b, 1, &zero, c, 1);
    }
    if (solver != nullptr) {  // the diagonal blocks' Xpotrf (CholeskyDiagonal::vendor): A := I first
        std::vector<T> diagonal(order, T(1));
        cudaMemcpy2DAsync(a, (order + 1) * sizeof(T), diagonal.data(), sizeof(T), sizeof(T), order, cudaMemcpyHostToDevice, s);
        std::size_t device_bytes = 0, host_bytes = 0;
        if (cusolverDnXpotrf_bufferSize(solver, params, CUBLAS_FILL_MODE_LOWER, order, type, a, order, type, &device_bytes,
                                        &host_bytes) == CUSOLVER_STATUS_SUCCESS &&
            device_bytes <= 2 * square * sizeof(T)) {
            std::vector<char> host(std::max<std::size_t>(host_bytes, 1));
            cusolverDnXpotrf(solver, params, CUBLAS_FILL_MODE_LOWER, order, type, a, order, type, b, device_bytes, host.data(),
                             host_bytes, info);
        }
        cudaStreamSynchronize(s);  // the host copies' source lives on this frame
    }
    cudaFreeAsync(memory, s);
}

template <class T>
void warm_up_libraries_on(int device) {
    if (cudaSetDevice(device) != cudaSuccess) return;
    // Not prohibited by another thread's global-mode stream capture (its capture stays intact).
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return;
    cublasHandle_t h = nullptr;
    cusolverDnHandle_t solver = nullptr;
    cusolverDnParams_t params = nullptr;
    if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
        cublasSetStream(h, s);
        cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
        if (cusolverDnCreate(&solver) == CUSOLVER_STATUS_SUCCESS) {
            cusolverDnSetStream(solver, s);
            if (cusolverDnCreateParams(&params) != CUSOLVER_STATUS_SUCCESS) params = nullptr;
        }
        // cuBLAS picks its kernels by shape: a large order for the updates' kernels, a small one for the
        // panels' and the solves'.
        for (const int order : {1024, 256}) warm_up_operations<T>(h, params ? solver : nullptr, params, s, order);
        cudaStreamSynchronize(s);
    }
    if (params) cusolverDnDestroyParams(params);
    if (solver) cusolverDnDestroy(solver);
    if (h) cublasDestroy(h);
    cudaStreamDestroy(s);
}

template <class T>
void warm_up_libraries(int device) noexcept {
    try {
        warm_up_libraries_on<T>(device);
    } catch (...) {  // (std::bad_alloc of a host vector) nothing warmed is nothing lost
    }
    cudaGetLastError();  // this thread's last error only
}

// The warm-up threads, joined when a context of their device is released (a program may reset the
// device after it) and at exit (before the runtime's own teardown, registered earlier).
struct LibraryWarmUps {
    struct Entry {
        int device = 0;
        bool single = false;
        std::atomic<bool> done{false};
        std::thread thread;
    };
    std::mutex mutex;
    std::vector<std::unique_ptr<Entry>> entries;  // one per (device, precision) ever started
    ~LibraryWarmUps() {
        for (auto& e : entries)
            if (e->thread.joinable()) e->thread.join();
    }
};
LibraryWarmUps& library_warm_ups() {
    static LibraryWarmUps warm_ups;
    return warm_ups;
}

template <class T>
void warm_up_thread(int device, std::atomic<bool>* done) noexcept {
    warm_up_libraries<T>(device);
    done->store(true, std::memory_order_release);
}

// The entry of (device, single); unless it exists, started when `start`, else nullptr.
LibraryWarmUps::Entry* warm_up_entry(int device, bool single, bool start = true) {
    LibraryWarmUps& w = library_warm_ups();
    std::lock_guard<std::mutex> lock(w.mutex);
    for (auto& e : w.entries)
        if (e->device == device && e->single == single) return e.get();
    if (!start) return nullptr;
    auto e = std::make_unique<LibraryWarmUps::Entry>();
    e->device = device, e->single = single;
    try {
        e->thread = single ? std::thread(warm_up_thread<float>, device, &e->done) : std::thread(warm_up_thread<double>, device, &e->done);
    } catch (const std::system_error&) {  // no thread: the calls load what they need themselves
        e->done = true;
    }
    w.entries.push_back(std::move(e));
    return w.entries.back().get();
}

void wait_for_library_warm_up(int device) noexcept {
    LibraryWarmUps& w = library_warm_ups();
    std::lock_guard<std::mutex> lock(w.mutex);
    for (auto& e : w.entries)
        if (e->device == device && e->thread.joinable()) e->thread.join();
}

// ---- a context's library handles, made off the caller's path ---------------------------------------------
//
// A process's first cuSOLVER handle costs 0.003-0.004 s (cuBLAS's and cuSOLVER's initialisation; the
// second handle 0.0003-0.001 s: results/2026-12-03-h200-8936072-first-call, "handles"), which
// potrf_large's first call paid inside it while cuSOLVER's own first call is measured with its handle
// made beforehand. A context's creation therefore starts a thread that makes its two handles (before
// the CUDA context exists: the libraries' loading overlaps its creation); the first cublas() or
// cusolver() takes both, waiting for the thread if it is still at work. Only the handles: no kernel
// is loaded and nothing runs on the device, so a context that never calls the libraries pays one
// thread's CPU time, the libraries' loading (mapped and relocated, tens of ms of CPU) and the handles'
// memory (freed with the context).
struct HandlePrefetch {
    const CudaResources* owner = nullptr;
    std::thread thread;
    cublasHandle_t cublas = nullptr;
    cusolverDnHandle_t cusolver = nullptr;
};
struct HandlePrefetches {
    std::mutex mutex;
    std::vector<std::unique_ptr<HandlePrefetch>> entries;  // those not yet taken by their context
    ~HandlePrefetches() {  // at exit, a context never released: its thread joined, its handles left to the process's end
        for (auto& e : entries)
            if (e->thread.joinable()) e->thread.join();
    }
};
HandlePrefetches& handle_prefetches() {
    static HandlePrefetches prefetches;
    return prefetches;
}

void prefetch_handles(int device, HandlePrefetch* p) noexcept {
    if (cudaSetDevice(device) == cudaSuccess) {
        // Not prohibited by another thread's global-mode stream capture (its capture stays intact).
        cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
        cudaThreadExchangeStreamCaptureMode(&mode);
        // cuSOLVER first: its handle initialises cuBLAS too, and potrf_large's first call needs only it.
        if (cusolverDnCreate(&p->cusolver) != CUSOLVER_STATUS_SUCCESS) p->cusolver = nullptr;
        if (cublasCreate(&p->cublas) != CUBLAS_STATUS_SUCCESS) p->cublas = nullptr;
    }
    cudaGetLastError();  // this thread's last error only
}

void start_handle_prefetch(const CudaResources* owner, int device) {
    HandlePrefetches& all = handle_prefetches();
    std::lock_guard<std::mutex> lock(all.mutex);
    all.entries.push_back(std::make_unique<HandlePrefetch>());  // listed before its thread exists: never a running thread unowned
    HandlePrefetch* p = all.entries.back().get();
    p->owner = owner;
    try {
        p->thread = std::thread(prefetch_handles, device, p);
    } catch (const std::system_error&) {  // no thread: the handles are made at their first use
        all.entries.pop_back();
    }
}

// The prefetch of `owner`, removed from the list and its thread joined; nullptr when none was started
// or it was taken before.
std::unique_ptr<HandlePrefetch> take_handle_prefetch(const CudaResources* owner) {
    std::unique_ptr<HandlePrefetch> p;
    {
        HandlePrefetches& all = handle_prefetches();
        std::lock_guard<std::mutex> lock(all.mutex);
        for (auto it = all.entries.begin(); it != all.entries.end(); ++it)
            if ((*it)->owner == owner) {
                p = std::move(*it);
                all.entries.erase(it);
                break;
            }
    }
    if (p && p->thread.joinable()) p->thread.join();
    return p;
}

// The prefetched handles become the context's (on its current stream); one it already has, or one
// that cannot take the stream, is destroyed. The caller has made the context's device current.
void adopt_prefetched_handles(CudaResources& r) noexcept {
    const std::unique_ptr<HandlePrefetch> p = take_handle_prefetch(&r);
    if (!p) return;
    if (p->cublas != nullptr) {
        if (r.cublas_ == nullptr && cublasSetStream(p->cublas, r.stream_) == CUBLAS_STATUS_SUCCESS) r.cublas_ = p->cublas;
        else cublasDestroy(p->cublas);
    }
    if (p->cusolver != nullptr) {
        if (r.cusolver_ == nullptr && cusolverDnSetStream(p->cusolver, r.stream_) == CUSOLVER_STATUS_SUCCESS) r.cusolver_ = p->cusolver;
        else cusolverDnDestroy(p->cusolver);
    }
}

}  // namespace

void start_library_warm_up(int device, bool single) {
    if (warm_up_mode() != WarmUpMode::off) warm_up_entry(device, single);
}

// sysv_mixed's first call (cuda/ldlt/ldlt.cu, at its entry): its factor's cuBLAS operations (TRSM,
// SYRKX, GEMM, TRSV, SYMV) load their kernels at their first use in the process, 0.1-0.15 s of a first
// call that issues them one after another; the warm-up thread of the factor's precision, started
// here, loads them beside the call, so that the loads of different operations overlap. Not with
// "lazy" (nor "off").
void start_library_warm_up_for_solver(int device, bool single) {
    if (warm_up_mode() == WarmUpMode::at_first_call || warm_up_mode() == WarmUpMode::at_context_creation) warm_up_entry(device, single);
}

bool library_warm_up_done(int device, bool single) {
    if (warm_up_mode() == WarmUpMode::off) return true;  // nothing to wait for: the calls load it themselves
    const LibraryWarmUps::Entry* e = warm_up_entry(device, single, false);
    return e != nullptr && e->done.load(std::memory_order_acquire);
}

// ---- CudaResources --------------------------------------------------------------------------------

CudaResources::CudaResources(int device) : device_(device) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) throw_no_usable_device(status);
    if (device >= count)
        throw InvalidArgument("Context", "device",
                              "device < " + std::to_string(count) + " (the number of visible CUDA devices; got " +
                                  std::to_string(device) + ")");
    if (warm_up_mode() == WarmUpMode::at_context_creation) {  // before the CUDA context exists: the libraries open meanwhile
        warm_up_entry(device, true);
        warm_up_entry(device, false);
    }
    if (handles_made_ahead()) start_handle_prefetch(this, device);
    try {
        DeviceGuard guard(device);
        // The few properties the routines need, one attribute each: cudaGetDeviceProperties fills
        // the whole structure (some of it slow to query) and was part of Context creation's cost. The
        // name is asked for when wanted (device_name).
        auto attribute = [device](cudaDeviceAttr what, const char* call) {
            int value = 0;
            detail::check_cuda(cudaDeviceGetAttribute(&value, what, device), call);
            return value;
        };
        sm_count_ = attribute(cudaDevAttrMultiProcessorCount, "cudaDeviceGetAttribute(MultiProcessorCount)");
        cc_major_ = attribute(cudaDevAttrComputeCapabilityMajor, "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
        cc_minor_ = attribute(cudaDevAttrComputeCapabilityMinor, "cudaDeviceGetAttribute(ComputeCapabilityMinor)");
        l2_bytes_ = std::size_t(attribute(cudaDevAttrL2CacheSize, "cudaDeviceGetAttribute(L2CacheSize)"));
        shared_per_block_optin_ = std::size_t(
            attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)"));
        pageable_access_ = attribute(cudaDevAttrPageableMemoryAccess, "cudaDeviceGetAttribute(PageableMemoryAccess)") != 0;
        BATCHSOLVE_CUDA_CHECK(cudaStreamCreateWithFlags(&owned_stream_, cudaStreamNonBlocking));
        stream_ = owned_stream_;
    } catch (...) {
        release();
        throw;
    }
}

CudaResources::~CudaResources() { release(); }

void CudaResources::release() noexcept {
    wait_for_library_warm_up(device_);
    int current = -1;
    const bool switched = cudaGetDevice(&current) == cudaSuccess && current != device_ &&
                          cudaSetDevice(device_) == cudaSuccess;
    // Errors are ignored on purpose: this runs from destructors, possibly at process exit when the
    // runtime is already shutting down.
    adopt_prefetched_handles(*this);  // its thread joined; handles never used are destroyed below
    if (cusolver_ != nullptr) cusolverDnDestroy(cusolver_);
    if (cublas_ != nullptr) cublasDestroy(cublas_);
    if (scratch_ != nullptr) cudaFree(scratch_);
    if (owned_stream_ != nullptr) cudaStreamDestroy(owned_stream_);
    cusolver_ = nullptr, cublas_ = nullptr, scratch_ = nullptr, owned_stream_ = nullptr, stream_ = nullptr;
    scratch_bytes_ = 0;
    if (switched) cudaSetDevice(current);
    cudaGetLastError();
}

void CudaResources::set_stream(cudaStream_t stream) {
    const cudaStream_t next = stream != nullptr ? stream : owned_stream_;
    if (next == stream_) return;
    DeviceGuard guard(device_);
    if (stream != nullptr) {
        // A stream of another device would fail at the first launch with an unhelpful error. Handles
        // the query does not know (special streams) are let through.
        int stream_device = -1;
        if (cudaStreamGetDevice(stream, &stream_device) != cudaSuccess) {
            cudaGetLastError();
            stream_device = device_;
        }
        if (stream_device != device_)
            throw InvalidArgument("Context::set_stream", "cuda_stream",
                                  "a stream of the context's device " + std::to_string(device_) + " (got one of device " +
                                      std::to_string(stream_device) + ")");
    }
    BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    stream_ = next;
    if (cublas_ != nullptr) BATCHSOLVE_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    if (cusolver_ != nullptr) BATCHSOLVE_CUSOLVER_CHECK(cusolverDnSetStream(cusolver_, stream_));
}

cublasHandle_t CudaResources::cublas() {
    if (cublas_ == nullptr) {
        DeviceGuard guard(device_);
        adopt_prefetched_handles(*this);
        if (cublas_ != nullptr) return cublas_;
        BATCHSOLVE_CUBLAS_CHECK(cublasCreate(&cublas_));
        BATCHSOLVE_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    }
    return cublas_;
}

cusolverDnHandle_t CudaResources::cusolver() {
    if (cusolver_ == nullptr) {
        DeviceGuard guard(device_);
        adopt_prefetched_handles(*this);
        if (cusolver_ != nullptr) return cusolver_;
        BATCHSOLVE_CUSOLVER_CHECK(cusolverDnCreate(&cusolver_));
        BATCHSOLVE_CUSOLVER_CHECK(cusolverDnSetStream(cusolver_, stream_));
    }
    return cusolver_;
}

void* CudaResources::scratch(std::size_t bytes) {
    if (bytes <= scratch_bytes_) return scratch_;
    DeviceGuard guard(device_);
    BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(stream_));  // issued work may still use the old block
    if (scratch_ != nullptr) cudaFree(scratch_);
    scratch_ = nullptr, scratch_bytes_ = 0;
    scratch_ = device_allocate(bytes, "batchsolve scratch");
    scratch_bytes_ = bytes;
    return scratch_;
}

void CudaResources::require_device_memory(const void* p, const char* routine, const std::string& argument) const {
    if (p == nullptr || pageable_access_) return;
    {
        std::lock_guard<std::mutex> lock(verified_mutex_);
        if (std::find(verified_.begin(), verified_.end(), p) != verified_.end()) return;
    }
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
        cudaGetLastError();  // cannot tell: let the call go ahead
        return;
    }
    if (attributes.type == cudaMemoryTypeUnregistered)
        throw InvalidArgument(routine, argument,
                              "memory the GPU can access (got an ordinary host pointer; allocate it with "
                              "batchsolve::Buffer on a CUDA context, or cudaMalloc)");
    std::lock_guard<std::mutex> lock(verified_mutex_);
    verified_[verified_next_] = p;
    verified_next_ = (verified_next_ + 1) % kVerifiedAddresses;
}

CudaResources& resources_of(Context& ctx, const char* routine) {
    if (ctx.backend() != Backend::cuda || ctx.cuda() == nullptr) throw InvalidArgument(routine, "ctx", "a CUDA context");
    return *ctx.cuda();
}

}  // namespace detail

// ---- the backend interface (src/core/backends.hpp) ------------------------------------------------

namespace cuda_backend {

using detail::CudaResources;
using detail::DeviceGuard;

bool compiled() { return true; }

int device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

int compute_capability(Context& ctx) { return ctx.cuda()->cc_major_ * 10 + ctx.cuda()->cc_minor_; }

CudaResources* create_resources(int device) { return new CudaResources(device); }

void destroy_resources(CudaResources* r) noexcept { delete r; }

std::string device_name(CudaResources* r) {
    std::lock_guard<std::mutex> lock(r->name_mutex_);
    if (r->name_.empty()) {
        DeviceGuard guard(r->device_);
        cudaDeviceProp prop{};
        BATCHSOLVE_CUDA_CHECK(cudaGetDeviceProperties(&prop, r->device_));
        r->name_ = prop.name;
    }
    return r->name_;
}

void* stream(CudaResources* r) { return static_cast<void*>(r->stream()); }

void set_stream(CudaResources* r, void* stream) { r->set_stream(static_cast<cudaStream_t>(stream)); }

void synchronize(CudaResources* r) {
    DeviceGuard guard(r->device_);
    BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r->stream()));
}

void* allocate(CudaResources* r, std::size_t bytes) {
    if (bytes == 0) return nullptr;
    DeviceGuard guard(r->device_);
    return detail::device_allocate(bytes, "batchsolve::Buffer or Context::workspace");
}

void free(void* p) noexcept {
    // cudaFree waits for the device, so memory still used by queued kernels is not pulled from under them.
    if (p != nullptr && cudaFree(p) != cudaSuccess) cudaGetLastError();
}

void copy_to_device(CudaResources* r, void* dst, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    DeviceGuard guard(r->device_);
    // On the context's stream, so the copy is ordered after the work already issued; then waited for,
    // because the caller's host buffer may be reused as soon as this returns.
    BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, r->stream()));
    BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r->stream()));
}

void copy_to_host(CudaResources* r, void* dst, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    DeviceGuard guard(r->device_);
    BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, r->stream()));
    BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r->stream()));
}

void fill_bytes(CudaResources* r, void* dst, unsigned char value, std::size_t bytes) {
    if (bytes == 0) return;
    DeviceGuard guard(r->device_);
    BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(dst, int(value), bytes, r->stream()));
}

}  // namespace cuda_backend
}  // namespace batchsolve
