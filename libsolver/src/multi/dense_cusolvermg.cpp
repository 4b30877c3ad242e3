// gesv over a CUDA DeviceGroup with cuSOLVERMg (dense.hpp): A and B dealt to the devices in tiles of
// columns (1-D block cyclic, cuSOLVERMg's only distribution), getrf then getrs, results back to the
// host. libcusolverMg is loaded at run time, so libbatchsolve loads where it is absent.
#include <cuda_runtime.h>
// cuSOLVERMg is deprecated in CUDA 13 (no successor for several GPUs of one process yet); its
// declarations carry [[deprecated]], which would flood every build with warnings.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cusolverMg.h>
#include <dlfcn.h>

#include <chrono>
#include <complex>
#include <mutex>
#include <string>
#include <vector>

#include "dense.hpp"

namespace batchsolve::multi {

namespace {

// The cuSOLVERMg functions gesv calls (deprecated in CUDA 13 but shipped), resolved once.
struct MgApi {
    decltype(&cusolverMgCreate) create = nullptr;
    decltype(&cusolverMgDestroy) destroy = nullptr;
    decltype(&cusolverMgDeviceSelect) device_select = nullptr;
    decltype(&cusolverMgCreateDeviceGrid) create_grid = nullptr;
    decltype(&cusolverMgDestroyGrid) destroy_grid = nullptr;
    decltype(&cusolverMgCreateMatrixDesc) create_desc = nullptr;
    decltype(&cusolverMgDestroyMatrixDesc) destroy_desc = nullptr;
    decltype(&cusolverMgGetrf_bufferSize) getrf_buffer = nullptr;
    decltype(&cusolverMgGetrf) getrf = nullptr;
    decltype(&cusolverMgGetrs_bufferSize) getrs_buffer = nullptr;
    decltype(&cusolverMgGetrs) getrs = nullptr;
    std::string missing;
};

const MgApi& mg() {
    static MgApi api;
    static std::once_flag once;
    std::call_once(once, [] {
        void* lib = nullptr;
        for (const char* name : {"libcusolverMg.so.12", "libcusolverMg.so.13", "libcusolverMg.so"})
            if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
        if (lib == nullptr) {
            api.missing = std::string("libcusolverMg not found (") + dlerror() + ")";
            return;
        }
        auto get = [&](auto& fn, const char* symbol) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
            if (fn == nullptr && api.missing.empty()) api.missing = std::string("libcusolverMg lacks ") + symbol;
        };
        get(api.create, "cusolverMgCreate");
        get(api.destroy, "cusolverMgDestroy");
        get(api.device_select, "cusolverMgDeviceSelect");
        get(api.create_grid, "cusolverMgCreateDeviceGrid");
        get(api.destroy_grid, "cusolverMgDestroyGrid");
        get(api.create_desc, "cusolverMgCreateMatrixDesc");
        get(api.destroy_desc, "cusolverMgDestroyMatrixDesc");
        get(api.getrf_buffer, "cusolverMgGetrf_bufferSize");
        get(api.getrf, "cusolverMgGetrf");
        get(api.getrs_buffer, "cusolverMgGetrs_bufferSize");
        get(api.getrs, "cusolverMgGetrs");
    });
    return api;
}

void check(cusolverStatus_t status, const char* call) {
    if (status != CUSOLVER_STATUS_SUCCESS) throw CudaError(call, int(status), "cuSOLVERMg status " + std::to_string(int(status)));
}
void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) {
        cudaGetLastError();
        throw CudaError(call, int(status), std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status));
    }
}

template <class T> cudaDataType data_type();
template <> cudaDataType data_type<float>() { return CUDA_R_32F; }
template <> cudaDataType data_type<double>() { return CUDA_R_64F; }
template <> cudaDataType data_type<std::complex<float>>() { return CUDA_C_32F; }
template <> cudaDataType data_type<std::complex<double>>() { return CUDA_C_64F; }

std::string gib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(1ull << 30));
    return text;
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A matrix of `cols` columns dealt to the devices in tiles: tile j lives on device j % d at local
// tile j / d; each device holds its tiles side by side with leading dimension n.
struct Distributed {
    std::vector<void*> pointers;  // per device
    std::int64_t tiles_per_device = 0;
};

// Everything gesv allocates, released in any case (devices, descriptors, the handle).
struct MgResources {
    std::vector<int> devices;
    cusolverMgHandle_t handle = nullptr;
    cudaLibMgGrid_t grid = nullptr;
    cudaLibMgMatrixDesc_t desc_a = nullptr, desc_b = nullptr;
    std::vector<void*> allocations;  // (device, pointer) pairs flattened: device at 2i, pointer at 2i + 1
    std::vector<int> allocation_device;

    void* allocate(int device, std::size_t bytes, const char* what) {
        check(cudaSetDevice(device), "cudaSetDevice");
        void* p = nullptr;
        check(cudaMalloc(&p, bytes == 0 ? 1 : bytes), what);
        allocations.push_back(p), allocation_device.push_back(device);
        return p;
    }
    ~MgResources() {
        for (std::size_t i = 0; i < allocations.size(); ++i) {
            cudaSetDevice(allocation_device[i]);
            cudaFree(allocations[i]);
        }
        const MgApi& api = mg();
        if (desc_a) api.destroy_desc(desc_a);
        if (desc_b) api.destroy_desc(desc_b);
        if (grid) api.destroy_grid(grid);
        if (handle) api.destroy(handle);
    }
};

// Host columns [0, cols) of `host` (leading dimension ld) to or from the tiles of `m`.
template <class T>
void copy_tiles(const Distributed& m, int n, int cols, int tile, T* host, int ld, int devices, bool to_device) {
    const int tiles = (cols + tile - 1) / tile;
    for (int j = 0; j < tiles; ++j) {
        const int device_index = j % devices, local = j / devices;
        const int width = std::min(tile, cols - j * tile);
        T* dev = static_cast<T*>(m.pointers[std::size_t(device_index)]) + std::int64_t(local) * tile * n;
        T* h = host + std::int64_t(j) * tile * ld;
        if (to_device)
            check(cudaMemcpy2D(dev, std::size_t(n) * sizeof(T), h, std::size_t(ld) * sizeof(T), std::size_t(n) * sizeof(T), std::size_t(width),
                               cudaMemcpyHostToDevice),
                  "cudaMemcpy2D (to the devices)");
        else
            check(cudaMemcpy2D(h, std::size_t(ld) * sizeof(T), dev, std::size_t(n) * sizeof(T), std::size_t(n) * sizeof(T), std::size_t(width),
                               cudaMemcpyDeviceToHost),
                  "cudaMemcpy2D (from the devices)");
    }
}

// The devices of the group with peer access between every pair (cuSOLVERMg reads and writes the
// other devices' tiles directly), the handle, the grid and the descriptors of A (n x n) and B.
template <class T>
void mg_setup(MgResources& r, DeviceGroup& group, int n, int nrhs, int tile) {
    const MgApi& api = mg();
    if (!api.missing.empty()) throw Error("gesv over " + std::to_string(group.size()) + " GPUs needs cuSOLVERMg: " + api.missing);
    for (int p = 0; p < group.size(); ++p) r.devices.push_back(group.context(p).device());
    for (int i : r.devices)
        for (int j : r.devices) {
            if (i == j) continue;
            int can = 0;
            check(cudaDeviceCanAccessPeer(&can, i, j), "cudaDeviceCanAccessPeer");
            if (!can) continue;
            check(cudaSetDevice(i), "cudaSetDevice");
            const cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
            if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) check(e, "cudaDeviceEnablePeerAccess");
            cudaGetLastError();
        }
    const int d = int(r.devices.size());
    check(api.create(&r.handle), "cusolverMgCreate");
    check(api.device_select(r.handle, d, r.devices.data()), "cusolverMgDeviceSelect");
    check(api.create_grid(&r.grid, 1, d, r.devices.data(), CUDALIBMG_GRID_MAPPING_COL_MAJOR), "cusolverMgCreateDeviceGrid");
    check(api.create_desc(&r.desc_a, n, n, n, tile, data_type<T>(), r.grid), "cusolverMgCreateMatrixDesc (A)");
    check(api.create_desc(&r.desc_b, n, nrhs, n, tile, data_type<T>(), r.grid), "cusolverMgCreateMatrixDesc (B)");
}

// With A's tiles resident (A.pointers): B and the pivots (checked against the members' memory first),
// the workspace cuSOLVERMg asks for, B uploaded, getrf, getrs, X and the pivots downloaded. A stays
// on the devices (L and U).
template <class T>
void mg_factor_solve(MgResources& r, DeviceGroup& group, int n, int nrhs, int tile, Distributed& A, std::size_t a_bytes, int* ipiv, T* b,
                     int ldb, DenseSolveReport& report) {
    const MgApi& api = mg();
    const int d = int(r.devices.size());
    const std::int64_t a_tiles = (std::int64_t(n) + tile - 1) / tile, b_tiles = (std::int64_t(nrhs) + tile - 1) / tile;
    const std::int64_t a_per_device = (a_tiles + d - 1) / d, b_per_device = (b_tiles + d - 1) / d;
    const std::size_t b_bytes = std::size_t(std::max<std::int64_t>(b_per_device, 1)) * tile * std::size_t(n) * sizeof(T);
    const std::size_t ipiv_bytes = std::size_t(a_per_device) * tile * sizeof(int);
    for (int p = 0; p < d; ++p) {
        const std::size_t available = group.available_bytes(p);
        if (b_bytes + ipiv_bytes > available)
            throw Error("gesv: n = " + std::to_string(n) + " needs " + gib(double(b_bytes + ipiv_bytes)) +
                        " per device for the right-hand sides and pivots beside the matrix; device " + std::to_string(r.devices[std::size_t(p)]) +
                        " has " + gib(double(available)) + " available");
    }
    Distributed B;
    std::vector<int*> pivots;
    for (int p = 0; p < d; ++p) {
        B.pointers.push_back(r.allocate(r.devices[std::size_t(p)], b_bytes, "cudaMalloc (gesv: B's tiles)"));
        pivots.push_back(static_cast<int*>(r.allocate(r.devices[std::size_t(p)], ipiv_bytes, "cudaMalloc (gesv: pivots)")));
    }
    B.tiles_per_device = b_per_device;
    std::int64_t lwork_getrf = 0, lwork_getrs = 0;
    check(api.getrf_buffer(r.handle, n, n, A.pointers.data(), 1, 1, r.desc_a, pivots.data(), data_type<T>(), &lwork_getrf),
          "cusolverMgGetrf_bufferSize");
    check(api.getrs_buffer(r.handle, CUBLAS_OP_N, n, nrhs, A.pointers.data(), 1, 1, r.desc_a, pivots.data(), B.pointers.data(), 1, 1,
                           r.desc_b, data_type<T>(), &lwork_getrs),
          "cusolverMgGetrs_bufferSize");
    const std::int64_t lwork = std::max(lwork_getrf, lwork_getrs);  // elements of T per device
    std::vector<void*> work;
    for (int p = 0; p < d; ++p) {
        const std::size_t available = group.available_bytes(p);
        if (std::size_t(lwork) * sizeof(T) > available)
            throw Error("gesv: cuSOLVERMg's workspace needs " + gib(double(lwork) * sizeof(T)) + " per device, device " +
                        std::to_string(r.devices[std::size_t(p)]) + " has " + gib(double(available)) + " available after the matrix");
        work.push_back(r.allocate(r.devices[std::size_t(p)], std::size_t(lwork) * sizeof(T), "cudaMalloc (gesv: workspace)"));
    }
    report.device_bytes = a_bytes + b_bytes + ipiv_bytes + std::size_t(lwork) * sizeof(T);
    report.engine = "cuSOLVERMg, " + std::to_string(d) + " device(s), tiles of " + std::to_string(tile) + " columns";

    auto sync_all = [&] {
        for (int dev : r.devices) {
            check(cudaSetDevice(dev), "cudaSetDevice");
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        }
    };
    auto t0 = Clock::now();
    copy_tiles(B, n, nrhs, tile, b, ldb, d, true);
    sync_all();
    report.upload_s += since(t0);

    t0 = Clock::now();
    int info = 0;
    check(api.getrf(r.handle, n, n, A.pointers.data(), 1, 1, r.desc_a, pivots.data(), data_type<T>(), work.data(), lwork, &info),
          "cusolverMgGetrf");
    sync_all();
    report.factor_s = since(t0);
    report.info = info;
    if (info < 0) throw Error("cusolverMgGetrf: argument " + std::to_string(-info) + " rejected (a bug: please report it)");

    if (info == 0) {
        t0 = Clock::now();
        check(api.getrs(r.handle, CUBLAS_OP_N, n, nrhs, A.pointers.data(), 1, 1, r.desc_a, pivots.data(), B.pointers.data(), 1, 1,
                        r.desc_b, data_type<T>(), work.data(), lwork, &info),
              "cusolverMgGetrs");
        sync_all();
        report.solve_s = since(t0);
        if (info < 0) throw Error("cusolverMgGetrs: argument " + std::to_string(-info) + " rejected (a bug: please report it)");
    }

    t0 = Clock::now();
    if (report.info == 0) copy_tiles(B, n, nrhs, tile, b, ldb, d, false);
    // Pivots: tile j's entries on device j % d at local tile j / d, as the columns.
    for (std::int64_t j = 0; j < a_tiles; ++j) {
        const int width = int(std::min<std::int64_t>(tile, n - j * tile));
        check(cudaMemcpy(ipiv + j * tile, pivots[std::size_t(j % d)] + (j / d) * tile, std::size_t(width) * sizeof(int),
                         cudaMemcpyDeviceToHost),
              "cudaMemcpy (pivots)");
    }
    report.download_s += since(t0);
}

}  // namespace

template <class T>
DenseSolveReport gesv_cusolvermg(int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb, DeviceGroup& group, int tile) {
    DenseSolveReport report;
    MgResources r;
    mg_setup<T>(r, group, n, nrhs, tile);
    const int d = int(r.devices.size());
    const std::int64_t a_tiles = (std::int64_t(n) + tile - 1) / tile;
    const std::int64_t a_per_device = (a_tiles + d - 1) / d;
    const std::size_t a_bytes = std::size_t(a_per_device) * tile * std::size_t(n) * sizeof(T);
    const std::int64_t b_per_device = ((std::int64_t(nrhs) + tile - 1) / tile + d - 1) / d;
    const std::size_t rest_bytes = std::size_t(std::max<std::int64_t>(b_per_device, 1)) * tile * std::size_t(n) * sizeof(T) +  // B
                                   std::size_t(a_per_device) * tile * sizeof(int);                                               // pivots
    // A, B and the pivots checked against the members' memory before allocating.
    for (int p = 0; p < d; ++p) {
        const std::size_t available = group.available_bytes(p);
        if (a_bytes + rest_bytes > available)
            throw Error("gesv: n = " + std::to_string(n) + " needs " + gib(double(a_bytes + rest_bytes)) + " per device on " + std::to_string(d) +
                        " device(s) before workspace; device " + std::to_string(r.devices[std::size_t(p)]) + " has " +
                        gib(double(available)) + " available (add devices or reduce n)");
    }
    Distributed A;
    for (int p = 0; p < d; ++p) A.pointers.push_back(r.allocate(r.devices[std::size_t(p)], a_bytes, "cudaMalloc (gesv: A's tiles)"));
    A.tiles_per_device = a_per_device;
    auto t0 = Clock::now();
    copy_tiles(A, n, n, tile, a, lda, d, true);
    for (int dev : r.devices) {
        check(cudaSetDevice(dev), "cudaSetDevice");
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    report.upload_s = since(t0);
    mg_factor_solve(r, group, n, nrhs, tile, A, a_bytes, ipiv, b, ldb, report);
    t0 = Clock::now();
    copy_tiles(A, n, n, tile, a, lda, d, false);
    report.download_s += since(t0);
    return report;
}

template <class T>
DenseSolveReport gesv_cusolvermg_tiled(TiledMatrix<T>& a, int* ipiv, int nrhs, T* b, int ldb, DeviceGroup& group) {
    DenseSolveReport report;
    MgResources r;
    const int n = a.rows();
    mg_setup<T>(r, group, n, nrhs, a.tile());
    Distributed A;
    for (int p = 0; p < group.size(); ++p) A.pointers.push_back(a.data(p));
    A.tiles_per_device = (a.local_columns(0) + a.tile() - 1) / a.tile();
    mg_factor_solve(r, group, n, nrhs, a.tile(), A, TiledMatrix<T>::bytes_per_member(n, n, a.tile(), group.size()), ipiv, b, ldb, report);
    return report;
}

void cuda_memory(int device, std::size_t& free_bytes, std::size_t& total_bytes) {
    int current = 0;
    check(cudaGetDevice(&current), "cudaGetDevice");
    check(cudaSetDevice(device), "cudaSetDevice");
    const cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
    cudaSetDevice(current);
    check(e, "cudaMemGetInfo");
}

template DenseSolveReport gesv_cusolvermg<float>(int, int, float*, int, int*, float*, int, DeviceGroup&, int);
template DenseSolveReport gesv_cusolvermg<double>(int, int, double*, int, int*, double*, int, DeviceGroup&, int);
template DenseSolveReport gesv_cusolvermg<std::complex<float>>(int, int, std::complex<float>*, int, int*, std::complex<float>*, int,
                                                               DeviceGroup&, int);
template DenseSolveReport gesv_cusolvermg<std::complex<double>>(int, int, std::complex<double>*, int, int*, std::complex<double>*,
                                                                int, DeviceGroup&, int);
template DenseSolveReport gesv_cusolvermg_tiled<float>(TiledMatrix<float>&, int*, int, float*, int, DeviceGroup&);
template DenseSolveReport gesv_cusolvermg_tiled<double>(TiledMatrix<double>&, int*, int, double*, int, DeviceGroup&);
template DenseSolveReport gesv_cusolvermg_tiled<std::complex<float>>(TiledMatrix<std::complex<float>>&, int*, int, std::complex<float>*, int,
                                                                     DeviceGroup&);
template DenseSolveReport gesv_cusolvermg_tiled<std::complex<double>>(TiledMatrix<std::complex<double>>&, int*, int, std::complex<double>*,
                                                                      int, DeviceGroup&);

}  // namespace batchsolve::multi

#pragma GCC diagnostic pop
