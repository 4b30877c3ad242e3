// The per-problem argument check of the variable-size BLAS-3 routines, written once for the CPU loop
// (src/reference/blas3.cpp) and the CUDA check kernel (src/cuda/blas3/blas3.cu).
#pragma once

#include "blas3_internal.hpp"

#ifdef __CUDACC__
#define BATCHSOLVE_BLAS3_HOST_DEVICE __host__ __device__
#else
#define BATCHSOLVE_BLAS3_HOST_DEVICE
#endif

namespace batchsolve::blas3_detail {

// 0 when problem i's arguments are valid, else -p for the first invalid argument in BLAS order
// (sizes, then each matrix's pointer and ld, lowest position first as xerbla reports). `sizes`
// receives the problem's sizes (for the maxima).
BATCHSOLVE_BLAS3_HOST_DEVICE inline int check_problem(const ProblemChecks& checks, int i, int sizes[3]) {
    int code = 0;
    auto report = [&code](int position) {
        if (code == 0 || position < -code) code = -position;
    };
    for (int s = 0; s < 3; ++s) {
        const ProblemChecks::Size& size = checks.sizes[s];
        sizes[s] = 0;
        if (size.values == nullptr) continue;
        const int value = size.values[i];
        sizes[s] = value;
        if (value < 0 || (size.max >= 0 && value > size.max)) report(size.position);
    }
    if (code != 0) return code;  // the matrices' conditions depend on valid sizes
    for (int x = 0; x < 3; ++x) {
        const ProblemChecks::Matrix& matrix = checks.matrices[x];
        if (matrix.pointers == nullptr) continue;
        const int rows = sizes[matrix.rows_size], cols = sizes[matrix.cols_size];
        if (matrix.ld[i] < (rows > 1 ? rows : 1)) report(matrix.ld_position);
        if (rows > 0 && cols > 0 && matrix.pointers[i] == nullptr) report(matrix.pointer_position);
    }
    return code;
}

}  // namespace batchsolve::blas3_detail

namespace batchsolve::blas3_detail {

// Problem i's size along a VSize dimension: clamp(values[i] - subtract, 0, limit), or `limit` for a
// uniform dimension (values == nullptr).
BATCHSOLVE_BLAS3_HOST_DEVICE inline int effective_size(const VSize& size, int i) {
    long long v = size.values != nullptr ? (long long)size.values[i] - size.subtract : size.limit;
    if (v > size.limit) v = size.limit;
    return v < 0 ? 0 : int(v);
}

}  // namespace batchsolve::blas3_detail
