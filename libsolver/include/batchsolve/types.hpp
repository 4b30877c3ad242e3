// Scalar precisions, enumerations and the error classes of the public API.
#pragma once

#include <complex>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace batchsolve {

// LAPACK's four precisions. Complex data is std::complex<float|double>, which is layout-compatible
// with cuComplex / cuDoubleComplex on the device.
enum class Precision { s, d, c, z };

template <class T> struct precision_of;
template <> struct precision_of<float> { static constexpr Precision value = Precision::s; };
template <> struct precision_of<double> { static constexpr Precision value = Precision::d; };
template <> struct precision_of<std::complex<float>> { static constexpr Precision value = Precision::c; };
template <> struct precision_of<std::complex<double>> { static constexpr Precision value = Precision::z; };
template <class T> inline constexpr Precision precision_v = precision_of<std::remove_const_t<T>>::value;

template <class T> struct real_type { using type = T; };
template <class R> struct real_type<std::complex<R>> { using type = R; };
template <class T> using real_t = typename real_type<std::remove_const_t<T>>::type;

template <class T> inline constexpr bool is_complex_v = !std::is_same_v<real_t<T>, std::remove_const_t<T>>;

// Unit roundoff of the precision (LAPACK's dlamch('E')): 2^-24 in single, 2^-53 in double.
template <class T> constexpr real_t<T> unit_roundoff() { return std::numeric_limits<real_t<T>>::epsilon() / 2; }

char precision_letter(Precision p);                // 's', 'd', 'c', 'z'
Precision parse_precision(const std::string& text); // "s" | "d" | "c" | "z" (InvalidArgument otherwise)

enum class Uplo { lower, upper };
const char* to_string(Uplo u);
Uplo parse_uplo(const std::string& text);           // "lower"/"L" | "upper"/"U"

// Which implementation runs a call: the CPU reference (LAPACKE + OpenMP) or the CUDA backend.
// `automatic` picks CUDA when it was compiled in and a device is present, else the CPU.
enum class Backend { cpu, cuda, automatic };
const char* to_string(Backend b);
Backend parse_backend(const std::string& text);     // "cpu" | "cuda" | "auto"

// How the matrices of a batch are stored; see batch.hpp for the index formulas.
enum class LayoutKind {
    column_major,        // one base pointer, matrices `stride` elements apart, each column-major with ld
    pointer_array,       // an array of pointers, one column-major matrix each
    interleaved,         // element (i,j) of consecutive matrices adjacent
    chunked_interleaved  // chunks of `chunk_size` matrices, each chunk interleaved
};
const char* to_string(LayoutKind k);
LayoutKind parse_layout(const std::string& text);   // "column_major" | "pointer_array" | "interleaved" | "chunked"

// ---- errors ---------------------------------------------------------------------------------------

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A bad argument, detected before any work: names the routine, the argument and the failed condition.
class InvalidArgument : public Error {
public:
    InvalidArgument(std::string routine, std::string argument, std::string condition);
    const std::string& routine() const { return routine_; }
    const std::string& argument() const { return argument_; }
    const std::string& condition() const { return condition_; }

private:
    std::string routine_, argument_, condition_;
};

// An entry point of a backend that this build does not contain (e.g. CUDA in a CPU-only build).
class NotCompiled : public Error {
public:
    NotCompiled(std::string routine, std::string backend);
};

// A CUDA runtime/driver/library call failed: names the call and its status code.
class CudaError : public Error {
public:
    CudaError(std::string call, int code, std::string detail);
    const std::string& call() const { return call_; }
    int code() const { return code_; }

private:
    std::string call_;
    int code_;
};

}  // namespace batchsolve
