// CUDA helpers of the GPU-only families (suite_large.cpp, suite_ldlt.cpp, suite_vbatched.cpp,
// suite_triangular.cpp): checked calls that throw naming the call, a device array, and the event timing
// every family uses (warm-up runs, then the median of timed runs, inputs restored untimed before each).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "suite.hpp"

namespace batchsolve::validation::suite {

inline void check(cudaError_t s, const char* call) {
    if (s != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(s));
}
inline void check(cublasStatus_t s, const char* call) {
    if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(call) + ": cuBLAS status " + std::to_string(int(s)));
}
inline void check(cusolverStatus_t s, const char* call) {
    if (s != CUSOLVER_STATUS_SUCCESS)
        throw std::runtime_error(std::string(call) + ": cuSOLVER status " + std::to_string(int(s)));
}
#define SUITE_CHECK(call) ::batchsolve::validation::suite::check((call), #call)

template <class T>
class DeviceArray {
public:
    explicit DeviceArray(std::size_t count) {
        if (count) SUITE_CHECK(cudaMalloc(&p_, count * sizeof(T)));
    }
    ~DeviceArray() { cudaFree(p_); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    T* get() const { return p_; }

private:
    T* p_ = nullptr;
};

// `warmup` untimed runs, then `repeat` runs timed with CUDA events on `stream`, `prepare` (untimed)
// before each; milliseconds, median. The samples go to *samples when given.
inline double time_ms(cudaStream_t stream, int warmup, int repeat, const std::function<void()>& prepare,
                      const std::function<void()>& call, std::vector<double>* samples = nullptr) {
    cudaEvent_t start, stop;
    SUITE_CHECK(cudaEventCreate(&start));
    SUITE_CHECK(cudaEventCreate(&stop));
    std::vector<double> ms;
    for (int k = 0; k < warmup + repeat; ++k) {
        prepare();
        SUITE_CHECK(cudaEventRecord(start, stream));
        call();
        SUITE_CHECK(cudaEventRecord(stop, stream));
        SUITE_CHECK(cudaEventSynchronize(stop));
        float t = 0;
        SUITE_CHECK(cudaEventElapsedTime(&t, start, stop));
        if (k >= warmup) ms.push_back(t);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (samples) *samples = ms;
    return median(ms);
}

}  // namespace batchsolve::validation::suite
