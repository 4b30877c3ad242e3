// Names, parsers and error classes of the public enumerations.
#include "batchsolve/types.hpp"

#include <algorithm>
#include <cctype>

namespace batchsolve {

namespace {
std::string lower_case(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}
}  // namespace

InvalidArgument::InvalidArgument(std::string routine, std::string argument, std::string condition)
    : Error(routine + ": invalid argument '" + argument + "': " + condition),
      routine_(std::move(routine)), argument_(std::move(argument)), condition_(std::move(condition)) {}

NotCompiled::NotCompiled(std::string routine, std::string backend)
    : Error(routine + ": the " + backend + " backend is not compiled into this build of batchsolve") {}

CudaError::CudaError(std::string call, int code, std::string detail)
    : Error(call + " failed with code " + std::to_string(code) + (detail.empty() ? "" : ": " + detail)),
      call_(std::move(call)), code_(code) {}

char precision_letter(Precision p) {
    switch (p) {
        case Precision::s: return 's';
        case Precision::d: return 'd';
        case Precision::c: return 'c';
        case Precision::z: return 'z';
    }
    return '?';
}

Precision parse_precision(const std::string& text) {
    const std::string t = lower_case(text);
    if (t == "s" || t == "float32" || t == "single") return Precision::s;
    if (t == "d" || t == "float64" || t == "double") return Precision::d;
    if (t == "c" || t == "complex64") return Precision::c;
    if (t == "z" || t == "complex128") return Precision::z;
    throw InvalidArgument("parse_precision", "precision", "'" + text + "' is not one of s, d, c, z");
}

const char* to_string(Uplo u) { return u == Uplo::lower ? "lower" : "upper"; }

Uplo parse_uplo(const std::string& text) {
    const std::string t = lower_case(text);
    if (t == "lower" || t == "l") return Uplo::lower;
    if (t == "upper" || t == "u") return Uplo::upper;
    throw InvalidArgument("parse_uplo", "uplo", "'" + text + "' is not one of lower, upper");
}

const char* to_string(Backend b) {
    switch (b) {
        case Backend::cpu: return "cpu";
        case Backend::cuda: return "cuda";
        case Backend::automatic: return "auto";
    }
    return "?";
}

Backend parse_backend(const std::string& text) {
    const std::string t = lower_case(text);
    if (t == "cpu") return Backend::cpu;
    if (t == "cuda" || t == "gpu") return Backend::cuda;
    if (t == "auto" || t == "automatic") return Backend::automatic;
    throw InvalidArgument("parse_backend", "backend", "'" + text + "' is not one of cpu, cuda, auto");
}

const char* to_string(LayoutKind k) {
    switch (k) {
        case LayoutKind::column_major: return "column_major";
        case LayoutKind::pointer_array: return "pointer_array";
        case LayoutKind::interleaved: return "interleaved";
        case LayoutKind::chunked_interleaved: return "chunked";
    }
    return "?";
}

LayoutKind parse_layout(const std::string& text) {
    const std::string t = lower_case(text);
    if (t == "column_major" || t == "colmajor" || t == "strided") return LayoutKind::column_major;
    if (t == "pointer_array" || t == "array") return LayoutKind::pointer_array;
    if (t == "interleaved") return LayoutKind::interleaved;
    if (t == "chunked" || t == "chunked_interleaved") return LayoutKind::chunked_interleaved;
    throw InvalidArgument("parse_layout", "layout",
                          "'" + text + "' is not one of column_major, pointer_array, interleaved, chunked");
}

}  // namespace batchsolve
