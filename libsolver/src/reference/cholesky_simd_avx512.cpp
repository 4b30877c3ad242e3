// The AVX-512 instance of the vector Cholesky kernels (cholesky_simd_kernels.hpp): 8 doubles or 16
// floats per register, compiled for AVX-512 by target pragma (the rest of the library stays x86-64).
#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "access.hpp"
#include "cholesky_simd.hpp"

// Every function defined until the pop below is compiled for AVX-512; the standard and library headers
// above are not (their inline functions must stay callable on any x86-64).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx2,fma")
#endif

namespace batchsolve::reference::simd::avx512 {

template <class T>
struct Register;
template <>
struct Register<double> {
    using type = __m512d;
};
template <>
struct Register<float> {
    using type = __m512;
};
template <class T>
using Vec = typename Register<T>::type;
template <class T>
constexpr int kLanes = int(sizeof(Vec<T>) / sizeof(T));

inline __m512d load(const double* p) { return _mm512_loadu_pd(p); }
inline __m512 load(const float* p) { return _mm512_loadu_ps(p); }
inline void store(double* p, __m512d x) { _mm512_storeu_pd(p, x); }
inline void store(float* p, __m512 x) { _mm512_storeu_ps(p, x); }
inline __m512d load_first(const double* p, int count) {
    return count == 8 ? _mm512_loadu_pd(p) : _mm512_maskz_loadu_pd(__mmask8((1u << count) - 1), p);
}
inline __m512 load_first(const float* p, int count) {
    return count == 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(__mmask16((1u << count) - 1), p);
}
inline void store_first(double* p, int count, __m512d x) { _mm512_mask_storeu_pd(p, __mmask8((1u << count) - 1), x); }
inline void store_first(float* p, int count, __m512 x) { _mm512_mask_storeu_ps(p, __mmask16((1u << count) - 1), x); }
inline __m512d fnmadd(__m512d a, __m512d b, __m512d c) { return _mm512_fnmadd_pd(a, b, c); }
inline __m512 fnmadd(__m512 a, __m512 b, __m512 c) { return _mm512_fnmadd_ps(a, b, c); }
// The zero-masked forms: GCC 12 warns that the plain ones' _mm512_undefined_*() source is uninitialised.
inline __m512d vsqrt(__m512d x) { return _mm512_maskz_sqrt_pd(__mmask8(0xFF), x); }
inline __m512 vsqrt(__m512 x) { return _mm512_maskz_sqrt_ps(__mmask16(0xFFFF), x); }

namespace {  // internal linkage: no PLT calls, free inlining
#include "cholesky_simd_kernels.hpp"
}  // namespace

}  // namespace batchsolve::reference::simd::avx512

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace batchsolve::reference::simd {

template <class T>
SimdKernels<T> avx512_kernels() {
    return {avx512::kLanes<T>, &avx512::potrf_groups<T>, &avx512::potrs_groups<T>, &avx512::posv_groups<T>};
}
template SimdKernels<float> avx512_kernels<float>();
template SimdKernels<double> avx512_kernels<double>();

}  // namespace batchsolve::reference::simd
