// Host-side reference arithmetic for generators and error measures: the extended-precision scalar
// of each T (long double, or complex<long double>), and plain complex products for any real type
// (no C99 Annex G recovery steps: a NaN operand simply gives NaN, no libcall per product, and the
// loops vectorise).
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

template <class R, class = std::enable_if_t<std::is_floating_point_v<R>>>
R conj_of(R x) {
    return x;
}
template <class R>
std::complex<R> conj_of(const std::complex<R>& x) {
    return {x.real(), -x.imag()};
}

template <class R, class = std::enable_if_t<std::is_floating_point_v<R>>>
R mul(R x, R y) {
    return x * y;
}
template <class R>
std::complex<R> mul(const std::complex<R>& x, const std::complex<R>& y) {
    return {x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real()};
}

template <class R, class = std::enable_if_t<std::is_floating_point_v<R>>>
R abs2(R x) {
    return x * x;
}
template <class R>
R abs2(const std::complex<R>& x) {
    return x.real() * x.real() + x.imag() * x.imag();
}

}  // namespace batchsolve::extended
