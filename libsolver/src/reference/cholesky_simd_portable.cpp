// The portable instance of the vector Cholesky kernels (cholesky_simd_kernels.hpp): GCC generic vectors
// of 32 bytes (4 doubles or 8 floats), which the compiler maps onto whatever the baseline target has
// (two SSE2 registers on x86-64). The fallback for CPUs without AVX2; no fused multiply-add.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "access.hpp"
#include "cholesky_simd.hpp"

// Generic vectors wider than the baseline's registers change the calling convention of functions that
// pass them by value; these are all internal to this file, so GCC's ABI note does not apply (it is
// issued at the end of the file, hence no pop).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace batchsolve::reference::simd::portable {

constexpr int kVectorBytes = 32;
typedef double Doubles __attribute__((vector_size(kVectorBytes)));
typedef float Floats __attribute__((vector_size(kVectorBytes)));
template <class T>
struct Register;
template <>
struct Register<double> {
    using type = Doubles;
};
template <>
struct Register<float> {
    using type = Floats;
};
template <class T>
using Vec = typename Register<T>::type;
template <class T>
constexpr int kLanes = int(sizeof(Vec<T>) / sizeof(T));

template <class V, class T>
inline V load_as(const T* p) {
    V x;
    std::memcpy(&x, p, sizeof x);
    return x;
}
inline Doubles load(const double* p) { return load_as<Doubles>(p); }
inline Floats load(const float* p) { return load_as<Floats>(p); }
inline void store(double* p, Doubles x) { std::memcpy(p, &x, sizeof x); }
inline void store(float* p, Floats x) { std::memcpy(p, &x, sizeof x); }
template <class V, class T>
inline V load_first_as(const T* p, int count) {
    V x = {};
    std::memcpy(&x, p, sizeof(T) * count);
    return x;
}
inline Doubles load_first(const double* p, int count) { return load_first_as<Doubles>(p, count); }
inline Floats load_first(const float* p, int count) { return load_first_as<Floats>(p, count); }
inline void store_first(double* p, int count, Doubles x) { std::memcpy(p, &x, sizeof(double) * count); }
inline void store_first(float* p, int count, Floats x) { std::memcpy(p, &x, sizeof(float) * count); }
inline Doubles fnmadd(Doubles a, Doubles b, Doubles c) { return c - a * b; }
inline Floats fnmadd(Floats a, Floats b, Floats c) { return c - a * b; }
template <class V>
inline V lanewise_sqrt(V x) {
    for (std::size_t q = 0; q < sizeof(V) / sizeof(x[0]); ++q) x[q] = std::sqrt(x[q]);
    return x;
}
inline Doubles vsqrt(Doubles x) { return lanewise_sqrt(x); }
inline Floats vsqrt(Floats x) { return lanewise_sqrt(x); }

template <class V>
inline void pivot_and_inverse(V d, V& pivot, V& inverse) {
    pivot = vsqrt(d);
    inverse = V{} + 1 / pivot;
}

namespace {  // internal linkage: no PLT calls, free inlining
#include "cholesky_simd_kernels.hpp"
}  // namespace

}  // namespace batchsolve::reference::simd::portable

namespace batchsolve::reference::simd {

template <class T>
SimdKernels<T> portable_kernels() {
    return {portable::kLanes<T>, &portable::potrf_groups<T>, &portable::potrs_groups<T>, &portable::posv_groups<T>};
}
template SimdKernels<float> portable_kernels<float>();
template SimdKernels<double> portable_kernels<double>();

}  // namespace batchsolve::reference::simd

