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
// The pivot sqrt(d) and its inverse from the reciprocal square root estimate (14 bits) refined by
// Newton steps (two in d, one in s: each doubles the bits), instead of a square root and then a
// division: the two are one dependent chain per column, the latency that bounds small n. Within one or
// two ulps of sqrt(d) and 1 / sqrt(d), which a backward error bound of 30 n u never sees. Lanes whose d
// is below 2^-960 (d) / 2^-100 (s), where y * y in the refinement would overflow (and negative d),
// take the square root and division instead, lane by lane: a lane's result never depends on another's.
// (The zero-masked estimate: GCC 12 warns about the plain one's undefined source, as for vsqrt.)
inline void pivot_and_inverse(__m512d d, __m512d& pivot, __m512d& inverse) {
    const __mmask8 refined = _mm512_cmp_pd_mask(d, _mm512_set1_pd(0x1p-960), _CMP_NLT_UQ);
    __m512d y = _mm512_maskz_rsqrt14_pd(__mmask8(0xFF), d);
    const __m512d half_d = d * 0.5;
    for (int step = 0; step < 2; ++step) y = y * _mm512_fnmadd_pd(half_d, y * y, _mm512_set1_pd(1.5));
    inverse = y;
    pivot = d * y;
    if (refined != __mmask8(0xFF)) {
        const __m512d exact = vsqrt(d);
        pivot = _mm512_mask_blend_pd(refined, exact, pivot);
        inverse = _mm512_mask_blend_pd(refined, _mm512_set1_pd(1.0) / exact, inverse);
    }
}
inline void pivot_and_inverse(__m512 d, __m512& pivot, __m512& inverse) {
    const __mmask16 refined = _mm512_cmp_ps_mask(d, _mm512_set1_ps(0x1p-100f), _CMP_NLT_UQ);
    __m512 y = _mm512_maskz_rsqrt14_ps(__mmask16(0xFFFF), d);
    const __m512 half_d = d * 0.5f;
    y = y * _mm512_fnmadd_ps(half_d, y * y, _mm512_set1_ps(1.5f));
    inverse = y;
    pivot = d * y;
    if (refined != __mmask16(0xFFFF)) {
        const __m512 exact = vsqrt(d);
        pivot = _mm512_mask_blend_ps(refined, exact, pivot);
        inverse = _mm512_mask_blend_ps(refined, _mm512_set1_ps(1.0f) / exact, inverse);
    }
}

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
