// Extended-precision scalars for host-side reference arithmetic (generators, error measures):
// long double for real T, complex<long double> for complex T, with hand-written products (no C99
// Annex G recovery steps, so a NaN operand simply gives NaN, and no libcall per product).
#pragma once

#include <complex>
#include <type_traits>

#include "batchsolve/types.hpp"

namespace batchsolve::extended {

template <class T>
using Wide = std::conditional_t<is_complex_v<T>, std::complex<long double>, long double>;

template <class T>
Wide<T> widen(const T& x) {
    if constexpr (is_complex_v<T>) return {std::real(x), std::imag(x)};
    else return x;
}

template <class T>
T narrow(const Wide<T>& x) {
    using R = real_t<T>;
    if constexpr (is_complex_v<T>) return T(R(x.real()), R(x.imag()));
    else return T(x);
}

inline long double conj_of(long double x) { return x; }
inline std::complex<long double> conj_of(const std::complex<long double>& x) { return {x.real(), -x.imag()}; }

inline long double mul(long double x, long double y) { return x * y; }
inline std::complex<long double> mul(const std::complex<long double>& x, const std::complex<long double>& y) {
    return {x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real()};
}

inline long double abs2(long double x) { return x * x; }
inline long double abs2(const std::complex<long double>& x) { return x.real() * x.real() + x.imag() * x.imag(); }

}  // namespace batchsolve::extended
