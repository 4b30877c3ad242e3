// GPU half of solver.hpp: cuSOLVER Zgetrf + Zgetrs and the iterative-refinement solvers ZCgesv
// (complex single factorisation) and ZYgesv (TF32 tensor cores), double-precision refinement.
#include "solver.hpp"

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <stdexcept>
#include <string>

namespace bem {
namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("GPU solve: ") + what + ": " + cudaGetErrorString(e));
}
void check(cusolverStatus_t s, const char* what) {
    if (s != CUSOLVER_STATUS_SUCCESS) throw std::runtime_error(std::string("GPU solve: ") + what + ": cuSOLVER status " + std::to_string(int(s)));
}

struct Device {
    void* p = nullptr;
    explicit Device(std::size_t bytes) { check(cudaMalloc(&p, bytes + 16), "cudaMalloc"); }
    ~Device() { cudaFree(p); }
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;
    template <class T> T* as() const { return static_cast<T*>(p); }
};

std::string irs_path(const char* name, int iter) {
    if (iter >= 0) return std::string(name) + ": refinement converged in " + std::to_string(iter) + " iterations";
    // cuSOLVER's negative iteration codes: the solver fell back to a double-precision LU.
    return std::string(name) + ": fell back to double LU (iter code " + std::to_string(iter) + ")";
}

}  // namespace

SolveResult solve_gpu(SolveMethod method, const Matrix& a, const std::vector<cd>& b) {
    const std::size_t n = a.n;
    if (n == 0) throw std::invalid_argument("GPU solve: empty system");
    if (n > 46340) throw std::invalid_argument("GPU solve: order " + std::to_string(n) + " exceeds cuSOLVER's 32-bit index range");
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) throw std::runtime_error("GPU solve: no CUDA device");
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const std::uint64_t needed = gpu_solve_bytes(method, n);
    if (needed > free_bytes)
        throw std::runtime_error("GPU solve: " + std::string(to_string(method)) + " of order " + std::to_string(n) + " needs " +
                                 std::to_string(double(needed) / double(1 << 30)) + " GiB of GPU memory, " +
                                 std::to_string(double(free_bytes) / double(1 << 30)) + " GiB free");
    cusolverDnHandle_t handle;
    check(cusolverDnCreate(&handle), "cusolverDnCreate");
    const int ni = int(n);
    Device da(n * n * sizeof(cuDoubleComplex)), db(n * sizeof(cuDoubleComplex)), dx(n * sizeof(cuDoubleComplex));
    Device dipiv(n * sizeof(int)), dinfo(sizeof(int));
    check(cudaMemcpy(da.p, a.a.data(), n * n * sizeof(cuDoubleComplex), cudaMemcpyHostToDevice), "upload A");
    check(cudaMemcpy(db.p, b.data(), n * sizeof(cuDoubleComplex), cudaMemcpyHostToDevice), "upload b");
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    SolveResult out;
    out.method = method;
    int info = 0;
    if (method == SolveMethod::gpu_lu) {
        int lwork = 0;
        check(cusolverDnZgetrf_bufferSize(handle, ni, ni, da.as<cuDoubleComplex>(), ni, &lwork), "Zgetrf_bufferSize");
        Device work(std::size_t(lwork) * sizeof(cuDoubleComplex));
        cudaEventRecord(start);
        check(cusolverDnZgetrf(handle, ni, ni, da.as<cuDoubleComplex>(), ni, work.as<cuDoubleComplex>(), dipiv.as<int>(), dinfo.as<int>()), "Zgetrf");
        check(cusolverDnZgetrs(handle, CUBLAS_OP_N, ni, 1, da.as<cuDoubleComplex>(), ni, dipiv.as<int>(), db.as<cuDoubleComplex>(), ni,
                               dinfo.as<int>()), "Zgetrs");
        cudaEventRecord(stop);
        check(cudaEventSynchronize(stop), "Zgetrf/Zgetrs");
        check(cudaMemcpy(&info, dinfo.p, sizeof(int), cudaMemcpyDeviceToHost), "info");
        out.path = "cuSOLVER Zgetrf + Zgetrs (LU, partial pivoting)";
        out.x.resize(n);
        check(cudaMemcpy(out.x.data(), db.p, n * sizeof(cuDoubleComplex), cudaMemcpyDeviceToHost), "download x");
    } else {
        const bool tf32 = method == SolveMethod::gpu_irs_y;
        std::size_t lwork = 0;
        auto* A = da.as<cuDoubleComplex>();
        auto* B = db.as<cuDoubleComplex>();
        auto* X = dx.as<cuDoubleComplex>();
        if (tf32) check(cusolverDnZYgesv_bufferSize(handle, ni, 1, A, ni, dipiv.as<int>(), B, ni, X, ni, nullptr, &lwork), "ZYgesv_bufferSize");
        else check(cusolverDnZCgesv_bufferSize(handle, ni, 1, A, ni, dipiv.as<int>(), B, ni, X, ni, nullptr, &lwork), "ZCgesv_bufferSize");
        Device work(lwork);
        int iter = 0;
        cudaEventRecord(start);
        if (tf32) check(cusolverDnZYgesv(handle, ni, 1, A, ni, dipiv.as<int>(), B, ni, X, ni, work.p, lwork, &iter, dinfo.as<int>()), "ZYgesv");
        else check(cusolverDnZCgesv(handle, ni, 1, A, ni, dipiv.as<int>(), B, ni, X, ni, work.p, lwork, &iter, dinfo.as<int>()), "ZCgesv");
        cudaEventRecord(stop);
        check(cudaEventSynchronize(stop), tf32 ? "ZYgesv" : "ZCgesv");
        check(cudaMemcpy(&info, dinfo.p, sizeof(int), cudaMemcpyDeviceToHost), "info");
        out.iterations = iter;
        out.path = irs_path(tf32 ? "cuSOLVER ZYgesv (TF32 factorisation)" : "cuSOLVER ZCgesv (complex single factorisation)", iter);
        out.x.resize(n);
        check(cudaMemcpy(out.x.data(), X, n * sizeof(cuDoubleComplex), cudaMemcpyDeviceToHost), "download x");
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    out.seconds = ms / 1e3;
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cusolverDnDestroy(handle);
    if (info > 0) throw std::runtime_error(out.path + ": exactly singular matrix (zero pivot at " + std::to_string(info) + ")");
    if (info < 0) throw std::runtime_error(out.path + ": argument " + std::to_string(-info) + " invalid");
    out.scaled_residual = scaled_residual(a, out.x, b);
    return out;
}

SolveResult solve_gpu_in_place(SolveMethod method, std::size_t n, cd* device_a, const std::vector<cd>& b) {
    if (!is_gpu(method)) throw std::invalid_argument(std::string("GPU solve in place: ") + to_string(method) + " is not a cuSOLVER method");
    if (n == 0) throw std::invalid_argument("GPU solve: empty system");
    if (n > 46340) throw std::invalid_argument("GPU solve: order " + std::to_string(n) + " exceeds cuSOLVER's 32-bit index range (use --solver gpu-ldlt)");
    cusolverDnHandle_t handle;
    check(cusolverDnCreate(&handle), "cusolverDnCreate");
    const int ni = int(n);
    auto* A = reinterpret_cast<cuDoubleComplex*>(device_a);
    Device db(n * sizeof(cuDoubleComplex)), dx(n * sizeof(cuDoubleComplex)), dipiv(n * sizeof(int)), dinfo(sizeof(int));
    check(cudaMemcpy(db.p, b.data(), n * sizeof(cuDoubleComplex), cudaMemcpyHostToDevice), "upload b");
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    SolveResult out;
    out.method = method;
    out.x.resize(n);
    int info = 0;
    if (method == SolveMethod::gpu_lu) {
        int lwork = 0;
        check(cusolverDnZgetrf_bufferSize(handle, ni, ni, A, ni, &lwork), "Zgetrf_bufferSize");
        Device work(std::size_t(lwork) * sizeof(cuDoubleComplex));
        cudaEventRecord(start);
        check(cusolverDnZgetrf(handle, ni, ni, A, ni, work.as<cuDoubleComplex>(), dipiv.as<int>(), dinfo.as<int>()), "Zgetrf");
        check(cusolverDnZgetrs(handle, CUBLAS_OP_N, ni, 1, A, ni, dipiv.as<int>(), db.as<cuDoubleComplex>(), ni, dinfo.as<int>()), "Zgetrs");
        cudaEventRecord(stop);
        check(cudaEventSynchronize(stop), "Zgetrf/Zgetrs");
        check(cudaMemcpy(&info, dinfo.p, sizeof(int), cudaMemcpyDeviceToHost), "info");
        out.path = "cuSOLVER Zgetrf + Zgetrs (LU, partial pivoting, A resident)";
        check(cudaMemcpy(out.x.data(), db.p, n * sizeof(cuDoubleComplex), cudaMemcpyDeviceToHost), "download x");
    } else {
        const bool tf32 = method == SolveMethod::gpu_irs_y;
        std::size_t lwork = 0;
        auto* B = db.as<cuDoubleComplex>();
        auto* X = dx.as<cuDoubleComplex>();
        if (tf32) check(cusolverDnZYgesv_bufferSize(handle, ni, 1, A, ni, dipiv.as<int>(), B, ni, X, ni, nullptr, &lwork), "ZYgesv_bufferSize");
        else check(cusolverDnZCgesv_bufferSize(handle, ni, 1, A, ni, dipiv.as<int>(), B, ni, X, ni, nullptr, &lwork), "ZCgesv_bufferSize");
        Device work(lwork);
        int iter = 0;
        cudaEventRecord(start);
        if (tf32) check(cusolverDnZYgesv(handle, ni, 1, A, ni, dipiv.as<int>(), B, ni, X, ni, work.p, lwork, &iter, dinfo.as<int>()), "ZYgesv");
        else check(cusolverDnZCgesv(handle, ni, 1, A, ni, dipiv.as<int>(), B, ni, X, ni, work.p, lwork, &iter, dinfo.as<int>()), "ZCgesv");
        cudaEventRecord(stop);
        check(cudaEventSynchronize(stop), tf32 ? "ZYgesv" : "ZCgesv");
        check(cudaMemcpy(&info, dinfo.p, sizeof(int), cudaMemcpyDeviceToHost), "info");
        out.iterations = iter;
        out.path = irs_path(tf32 ? "cuSOLVER ZYgesv (TF32 factorisation, A resident)" : "cuSOLVER ZCgesv (complex single factorisation, A resident)", iter);
        check(cudaMemcpy(out.x.data(), X, n * sizeof(cuDoubleComplex), cudaMemcpyDeviceToHost), "download x");
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    out.seconds = ms / 1e3;
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cusolverDnDestroy(handle);
    if (info > 0) throw std::runtime_error(out.path + ": exactly singular matrix (zero pivot at " + std::to_string(info) + ")");
    if (info < 0) throw std::runtime_error(out.path + ": argument " + std::to_string(-info) + " invalid");
    return out;
}

}  // namespace bem
