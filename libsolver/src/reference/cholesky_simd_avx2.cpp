// The AVX2 instance of the vector Cholesky kernels (cholesky_simd_kernels.hpp): 4 doubles or 8
// floats per register, compiled for AVX2 and FMA by target pragma (the rest of the library stays x86-64).
#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "access.hpp"
#include "cholesky_simd.hpp"

// Every function defined until the pop below is compiled for AVX2 and FMA; the standard and library headers
// above are not (their inline functions must stay callable on any x86-64).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

namespace batchsolve::reference::simd::avx2 {

template <class T>
struct Register;
template <>
struct Register<double> {
    using type = __m256d;
};
template <>
struct Register<float> {
    using type = __m256;
};
template <class T>
using Vec = typename Register<T>::type;
template <class T>
constexpr int kLanes = int(sizeof(Vec<T>) / sizeof(T));

inline __m256d load(const double* p) { return _mm256_loadu_pd(p); }
inline __m256 load(const float* p) { return _mm256_loadu_ps(p); }
inline void store(double* p, __m256d x) { _mm256_storeu_pd(p, x); }
inline void store(float* p, __m256 x) { _mm256_storeu_ps(p, x); }
// Masks of the first `count` lanes for maskload/maskstore (which touch no memory of the others).
inline __m256i first_lanes_64(int count) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(count), _mm256_setr_epi64x(0, 1, 2, 3));
}
inline __m256i first_lanes_32(int count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline __m256d load_first(const double* p, int count) {
    return count == 4 ? _mm256_loadu_pd(p) : _mm256_maskload_pd(p, first_lanes_64(count));
}
inline __m256 load_first(const float* p, int count) {
    return count == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, first_lanes_32(count));
}
inline void store_first(double* p, int count, __m256d x) { _mm256_maskstore_pd(p, first_lanes_64(count), x); }
inline void store_first(float* p, int count, __m256 x) { _mm256_maskstore_ps(p, first_lanes_32(count), x); }
inline __m256d fnmadd(__m256d a, __m256d b, __m256d c) { return _mm256_fnmadd_pd(a, b, c); }
inline __m256 fnmadd(__m256 a, __m256 b, __m256 c) { return _mm256_fnmadd_ps(a, b, c); }
inline __m256d vsqrt(__m256d x) { return _mm256_sqrt_pd(x); }
inline __m256 vsqrt(__m256 x) { return _mm256_sqrt_ps(x); }

template <class V>
inline void pivot_and_inverse(V d, V& pivot, V& inverse) {
    pivot = vsqrt(d);
    inverse = V{} + 1 / pivot;
}

namespace {  // internal linkage: no PLT calls, free inlining
#include "cholesky_simd_kernels.hpp"
}  // namespace

}  // namespace batchsolve::reference::simd::avx2

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace batchsolve::reference::simd {

template <class T>
SimdKernels<T> avx2_kernels() {
    return {avx2::kLanes<T>, &avx2::potrf_groups<T>, &avx2::potrs_groups<T>, &avx2::posv_groups<T>};
}
template SimdKernels<float> avx2_kernels<float>();
template SimdKernels<double> avx2_kernels<double>();

}  // namespace batchsolve::reference::simd
