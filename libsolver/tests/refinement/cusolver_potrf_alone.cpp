// cuSOLVER's single-precision Cholesky alone, the way posv_mixed's low factors call it (the FP32
// factor's diagonal blocks through cusolverDnXpotrf, the tensor-core factors' leaves through
// cusolverDnSpotrf; lower, lda = n), on a fully initialised SPD matrix, with no other library code:
// run under `compute-sanitizer --tool initcheck` it says whether cuSOLVER's kernels read memory
// nobody wrote when its caller initialised everything it owns. Every input byte is written from the
// host (matrix, info); --memset-workspace also zeroes the device workspace cuSOLVER asks for (its
// contents are not the caller's to define, so a report that disappears with it is a read of
// cuSOLVER's own scratch). Exit 0 when both factorisations succeed and L L^T matches A to a few
// float roundings, 1 otherwise, 2 on a usage error.
//   cusolver_potrf_alone [--n N] [--memset-workspace] [--routine spotrf|xpotrf|both]
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

#define CHECK(call)                                                                                     \
    do {                                                                                                \
        const int status_ = int(call);                                                                  \
        if (status_ != 0) {                                                                             \
            std::fprintf(stderr, "cusolver_potrf_alone: %s failed with status %d\n", #call, status_);   \
            std::exit(1);                                                                               \
        }                                                                                               \
    } while (0)

// A = G G^T / n + I (float, both triangles written), G uniform in [-1, 1] from a fixed LCG.
std::vector<float> spd_matrix(int n) {
    std::vector<double> g(std::size_t(n) * n);
    unsigned long long state = 36;
    for (double& v : g) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        v = double(state >> 11) / double(1ULL << 53) * 2 - 1;
    }
    std::vector<float> a(std::size_t(n) * n);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double s = i == j ? 1.0 : 0.0;
            for (int k = 0; k < n; ++k) s += g[std::size_t(k) * n + i] * g[std::size_t(k) * n + j] / n;
            a[std::size_t(j) * n + i] = float(s);
        }
    return a;
}

// max |A - L L^T| / max |A| over the lower triangle.
double factor_error(const std::vector<float>& a, const std::vector<float>& l, int n) {
    double worst = 0, size = 0;
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            double s = 0;
            for (int k = 0; k <= j; ++k) s += double(l[std::size_t(k) * n + i]) * l[std::size_t(k) * n + j];
            worst = std::max(worst, std::abs(s - a[std::size_t(j) * n + i]));
            size = std::max(size, double(std::abs(a[std::size_t(j) * n + i])));
        }
    return worst / size;
}

bool run(const std::string& routine, int n, bool memset_workspace) {
    const std::vector<float> a = spd_matrix(n);
    cusolverDnHandle_t handle;
    CHECK(cusolverDnCreate(&handle));
    float* d_a = nullptr;
    int* d_info = nullptr;
    CHECK(cudaMalloc(&d_a, a.size() * sizeof(float)));
    CHECK(cudaMalloc(&d_info, sizeof(int)));
    CHECK(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    const int zero = 0;
    CHECK(cudaMemcpy(d_info, &zero, sizeof(int), cudaMemcpyHostToDevice));
    void* work = nullptr;
    std::size_t work_bytes = 0;
    std::vector<char> host_work;
    cusolverDnParams_t params = nullptr;
    if (routine == "spotrf") {
        int lwork = 0;
        CHECK(cusolverDnSpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, d_a, n, &lwork));
        work_bytes = std::size_t(std::max(lwork, 1)) * sizeof(float);
    } else {
        CHECK(cusolverDnCreateParams(&params));
        std::size_t host_bytes = 0;
        CHECK(cusolverDnXpotrf_bufferSize(handle, params, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_32F, d_a, n, CUDA_R_32F,
                                          &work_bytes, &host_bytes));
        work_bytes = std::max<std::size_t>(work_bytes, 1);
        host_work.assign(std::max<std::size_t>(host_bytes, 1), 0);
    }
    CHECK(cudaMalloc(&work, work_bytes));
    if (memset_workspace) CHECK(cudaMemset(work, 0, work_bytes));
    CHECK(cudaDeviceSynchronize());
    if (routine == "spotrf")
        CHECK(cusolverDnSpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, d_a, n, static_cast<float*>(work),
                               int(work_bytes / sizeof(float)), d_info));
    else
        CHECK(cusolverDnXpotrf(handle, params, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_32F, d_a, n, CUDA_R_32F, work, work_bytes,
                               host_work.data(), host_work.size(), d_info));
    CHECK(cudaDeviceSynchronize());
    std::vector<float> l(a.size());
    int info = -1;
    CHECK(cudaMemcpy(l.data(), d_a, l.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&info, d_info, sizeof(int), cudaMemcpyDeviceToHost));
    const double error = factor_error(a, l, n);
    // A Cholesky factor's backward error is within ~n u |L||L^T|; |L||L^T| <= n max|A| here.
    const double bound = 4.0 * n * std::numeric_limits<float>::epsilon();
    const bool ok = info == 0 && error <= bound;
    std::printf("%s n=%d workspace %zu bytes%s: info %d, max|A - L L^T|/max|A| = %.2e (bound %.2e) %s\n", routine.c_str(), n,
                work_bytes, memset_workspace ? " (zeroed)" : " (as allocated)", info, error, bound, ok ? "ok" : "FAILED");
    cudaFree(work);
    cudaFree(d_info);
    cudaFree(d_a);
    if (params) cusolverDnDestroyParams(params);
    cusolverDnDestroy(handle);
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    int n = 128;
    bool memset_workspace = false;
    std::string routine = "both";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--n" && i + 1 < argc) n = std::atoi(argv[++i]);
        else if (arg == "--memset-workspace") memset_workspace = true;
        else if (arg == "--routine" && i + 1 < argc) routine = argv[++i];
        else {
            std::fprintf(stderr, "usage: cusolver_potrf_alone [--n N] [--memset-workspace] [--routine spotrf|xpotrf|both]\n");
            return 2;
        }
    }
    if (n < 1 || n > 8192 || (routine != "spotrf" && routine != "xpotrf" && routine != "both")) {
        std::fprintf(stderr, "cusolver_potrf_alone: --n 1..8192 and --routine spotrf, xpotrf or both\n");
        return 2;
    }
    bool ok = true;
    if (routine != "xpotrf") ok = run("spotrf", n, memset_workspace) && ok;
    if (routine != "spotrf") ok = run("xpotrf", n, memset_workspace) && ok;
    return ok ? 0 : 1;
}
