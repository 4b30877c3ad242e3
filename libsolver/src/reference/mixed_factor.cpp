// The CPU reference backend of posv_mixed's low-precision Cholesky (core/mixed_factor_backend.hpp): the
// same scaling (S A S + shift I, unit diagonal, lower storage) and solve (S L^-T L^-1 S) as the GPU's,
// factored by LAPACK's SPOTRF with every OpenBLAS thread. The CPU has no FP16/BF16/TF32 arithmetic,
// so every precision factors in FP32 here: the driver's logic (GMRES, shifts, the chain) is the same,
// only the factor is more accurate than the GPU's.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "../core/mixed_factor_backend.hpp"
#include "../host/lapack.hpp"

namespace batchsolve::reference {

namespace {

std::size_t align(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// [L: n x n floats][S: n floats], as on the GPU (whose further pieces the CPU does not need).
float* factor_of(void* scratch) { return static_cast<float*>(scratch); }
float* scale_of(void* scratch, int n) {
    return reinterpret_cast<float*>(static_cast<char*>(scratch) + align(std::size_t(n) * n * sizeof(float)));
}

}  // namespace

template <class T>
BATCHSOLVE_MIXED_FACTOR_BYTES(T) {
    return align(std::size_t(n) * n * sizeof(float)) + align(std::size_t(n) * sizeof(float));
}

template <class T>
BATCHSOLVE_MIXED_FACTOR(T) {
    *info = 0;
    if (n == 0) return;
    float* l = factor_of(scratch);
    float* s = scale_of(scratch, n);
    for (int i = 0; i < n; ++i) {
        const double d = double(a[std::size_t(i) * lda + i]);
        if (!(d > 0) || !std::isfinite(d)) {
            if (*info == 0) *info = i + 1;
            s[i] = 0;
        } else {
            s[i] = float(1.0 / std::sqrt(d));
        }
    }
#pragma omp parallel for schedule(dynamic, 16)
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            const double v = uplo == Uplo::lower ? double(a[std::size_t(j) * lda + i]) : double(a[std::size_t(i) * lda + j]);
            l[std::size_t(j) * n + i] = i == j ? float(1.0 + shift) : float(v) * s[i] * s[j];
        }
    if (*info != 0) return;
    host::ScopedAllThreadsBlas threads;
    const lapack_int result = LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'L', n, l, n);
    if (result < 0) throw Error("posv_mixed: LAPACK rejected argument " + std::to_string(-result));
    *info = int(result);
    // A NaN pivot passes OpenBLAS's "<= 0" test: the first non-finite diagonal entry is the info.
    const int checked = *info == 0 ? n : *info - 1;
    for (int j = 0; j < checked; ++j)
        if (!std::isfinite(l[std::size_t(j) * n + j])) {
            *info = j + 1;
            break;
        }
}

template <class T>
BATCHSOLVE_MIXED_SOLVE(T) {
    if (n == 0 || nrhs == 0) return;
    void* base = const_cast<void*>(scratch);
    const float* l = factor_of(base);
    const float* s = scale_of(base, n);
    for (int j = 0; j < nrhs; ++j)
        for (int i = 0; i < n; ++i) d[std::size_t(j) * ldd + i] *= s[i];
    host::ScopedAllThreadsBlas threads;
    const lapack_int result = LAPACKE_spotrs_work(LAPACK_COL_MAJOR, 'L', n, nrhs, l, n, d, ldd);
    if (result < 0) throw Error("posv_mixed: LAPACK rejected argument " + std::to_string(-result));
    for (int j = 0; j < nrhs; ++j)
        for (int i = 0; i < n; ++i) d[std::size_t(j) * ldd + i] *= s[i];
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_MIXED_FACTOR_ROUTINES)

}  // namespace batchsolve::reference
