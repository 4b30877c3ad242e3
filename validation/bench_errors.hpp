// Error handling shared by the standalone benches (sysv_bench, large_bench, vbatched_triangular_bench):
// a failed CUDA, cuBLAS or cuSOLVER call or a bad option ends the program with one line naming the
// program and the call, exit status 2.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <errno.h>  // program_invocation_short_name (glibc)

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace bench_errors {

[[noreturn]] inline void fail(const std::string& what) {
    std::cerr << program_invocation_short_name << ": " << what << "\n";
    std::exit(2);
}
inline void check(cudaError_t s, const char* call) {
    if (s != cudaSuccess) fail(std::string(call) + ": " + cudaGetErrorString(s));
}
inline void check(cublasStatus_t s, const char* call) {
    if (s != CUBLAS_STATUS_SUCCESS) fail(std::string(call) + ": cuBLAS status " + std::to_string(int(s)));
}
inline void check(cusolverStatus_t s, const char* call) {
    if (s != CUSOLVER_STATUS_SUCCESS) fail(std::string(call) + ": cuSOLVER status " + std::to_string(int(s)));
}

// A comma-separated list of integers in [1, 100000] (orders, repeat counts), or fail naming the option.
inline std::vector<int> parse_ints(const std::string& text, const char* option) {
    std::vector<int> values;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        char* end = nullptr;
        const long v = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 1 || v > 100000) fail(std::string("invalid ") + option + " '" + text + "'");
        values.push_back(int(v));
    }
    if (values.empty()) fail(std::string("empty ") + option);
    return values;
}

}  // namespace bench_errors

#define CHECK(call) check((call), #call)
