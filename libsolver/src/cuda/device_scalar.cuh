// The device-side scalar vocabulary of the CUDA backend's hand-written kernels (symmetric indefinite
// solvers, the refinement's primitives): std::complex on the host is cuda::std::complex in a kernel
// (the same layout) and cuComplex / cuDoubleComplex for cuBLAS and cuSOLVER; modulus, conjugation,
// finiteness, down-conversion and a NaN-keeping max for real and complex alike.
#pragma once

#include <cuda/std/complex>

#include <complex>
#include <type_traits>

#include <cuComplex.h>

namespace batchsolve::cuda_backend {

template <class T> struct device_type { using type = T; };
template <class R> struct device_type<std::complex<R>> { using type = cuda::std::complex<R>; };
template <class T> using dev_t = typename device_type<T>::type;

template <class T> dev_t<T>* dev(T* p) { return reinterpret_cast<dev_t<T>*>(p); }
template <class T> const dev_t<T>* dev(const T* p) { return reinterpret_cast<const dev_t<T>*>(p); }

template <class D> struct real_of { using type = D; };
template <class R> struct real_of<cuda::std::complex<R>> { using type = R; };
template <class D> using real_of_t = typename real_of<D>::type;
template <class D> inline constexpr bool is_complex_dev = !std::is_same_v<real_of_t<D>, D>;

template <class D> __device__ __forceinline__ real_of_t<D> abs_of(D v) {
    if constexpr (is_complex_dev<D>) return hypot(v.real(), v.imag());
    else return fabs(v);
}
template <class D> __device__ __forceinline__ D conj_if(D v, bool conjugate) {
    if constexpr (is_complex_dev<D>) return conjugate ? cuda::std::conj(v) : v;
    else return v;
}
template <class D> __device__ __forceinline__ D real_part_only(D v) {
    if constexpr (is_complex_dev<D>) return D(v.real(), 0);
    else return v;
}
template <class D> __device__ __forceinline__ bool finite_value(D v) {
    if constexpr (is_complex_dev<D>) return isfinite(v.real()) && isfinite(v.imag());
    else return isfinite(v);
}
// A converted value from a higher precision (complex<double> -> complex<float> as well).
template <class L, class H> __device__ __forceinline__ L convert_to(H v) {
    if constexpr (is_complex_dev<H>) return L(real_of_t<L>(v.real()), real_of_t<L>(v.imag()));
    else return L(v);
}
template <class D> __device__ __forceinline__ D nan_of() {
    const real_of_t<D> q = nan("");
    if constexpr (is_complex_dev<D>) return D(q, q);
    else return q;
}
// Max that keeps NaN (any NaN makes the result NaN).
template <class R> __device__ __forceinline__ R max_nan(R a, R b) { return (isnan(a) || isnan(b)) ? R(nan("")) : (a > b ? a : b); }

// cuBLAS / cuSOLVER's complex types.
template <class T> struct cuda_scalar { using type = T; };
template <> struct cuda_scalar<std::complex<float>> { using type = cuComplex; };
template <> struct cuda_scalar<std::complex<double>> { using type = cuDoubleComplex; };
template <class T> using cu_t = typename cuda_scalar<T>::type;
template <class T> cu_t<T>* cu(T* p) { return reinterpret_cast<cu_t<T>*>(p); }
template <class T> const cu_t<T>* cu(const T* p) { return reinterpret_cast<const cu_t<T>*>(p); }

}  // namespace batchsolve::cuda_backend
