// Argument checks shared by every routine: run before any work, throw InvalidArgument naming the
// argument and the condition that failed (BLAS++'s blas_error_if habit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "batchsolve/batch.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::checks {

inline void require(bool ok, const char* routine, const char* argument, const std::string& condition) {
    if (!ok) throw InvalidArgument(routine, argument, condition);
}

// As require, for the checks every call runs: the argument's name (`name` + `field`) and the
// condition's text (`condition()`) are built only when the check fails, so a call with good
// arguments formats no string and allocates nothing here.
template <class Text>
void require_that(bool ok, const char* routine, const char* name, const char* field, Text&& condition) {
    if (!ok) throw InvalidArgument(routine, std::string(name) + field, condition());
}

// A view that a routine may read or write: sizes non-negative, ld >= rows, storage present when
// there is anything to store, a valid chunk size.
template <class T>
void check_view(const BatchView<T>& v, const char* routine, const char* name) {
    using std::to_string;
    require_that(v.count >= 0, routine, name, ".count", [&] { return "count >= 0 (got " + to_string(v.count) + ")"; });
    require_that(v.rows >= 0, routine, name, ".rows", [&] { return "rows >= 0 (got " + to_string(v.rows) + ")"; });
    require_that(v.cols >= 0, routine, name, ".cols", [&] { return "cols >= 0 (got " + to_string(v.cols) + ")"; });
    const bool empty = v.count == 0 || v.rows == 0 || v.cols == 0;
    auto non_null = [] { return std::string("non-null"); };
    auto ld_text = [&] {
        return "ld >= max(1, rows) (got ld = " + to_string(v.ld) + ", rows = " + to_string(v.rows) + ")";
    };
    switch (v.layout) {
        case LayoutKind::column_major:
            require_that(v.ld >= (v.rows > 1 ? v.rows : 1), routine, name, ".ld", ld_text);
            require_that(v.count <= 1 || v.stride >= std::int64_t(v.ld) * v.cols, routine, name, ".stride",
                         [&] { return "stride >= ld * cols (got " + to_string(v.stride) + ")"; });
            require_that(empty || v.data != nullptr, routine, name, ".data", non_null);
            break;
        case LayoutKind::pointer_array:
            require_that(v.ld >= (v.rows > 1 ? v.rows : 1), routine, name, ".ld", ld_text);
            require_that(v.count == 0 || v.pointers != nullptr, routine, name, ".pointers", non_null);
            break;
        case LayoutKind::chunked_interleaved:
            require_that(v.chunk_size >= 1, routine, name, ".chunk_size",
                         [&] { return "chunk_size >= 1 (got " + to_string(v.chunk_size) + ")"; });
            [[fallthrough]];
        case LayoutKind::interleaved:
            require_that(v.ld == v.rows, routine, name, ".ld",
                         [] { return std::string("ld == rows for interleaved layouts"); });
            require_that(empty || v.data != nullptr, routine, name, ".data", non_null);
            break;
    }
}

template <class T>
void check_square(const BatchView<T>& a, const char* routine, const char* name) {
    require_that(a.rows == a.cols, routine, name, "", [&] {
        return "square matrices (got " + std::to_string(a.rows) + " x " + std::to_string(a.cols) + ")";
    });
}

// B goes with A: same count, rows == n, compatible layout family.
template <class TA, class TB>
void check_rhs(const BatchView<TA>& a, const BatchView<TB>& b, const char* routine) {
    require_that(b.count == a.count, routine, "b", ".count", [&] {
        return "b.count == a.count (got " + std::to_string(b.count) + " vs " + std::to_string(a.count) + ")";
    });
    require_that(b.rows == a.rows, routine, "b", ".rows", [&] {
        return "b.rows == n (got " + std::to_string(b.rows) + " vs " + std::to_string(a.rows) + ")";
    });
    require_that(a.is_interleaved() == b.is_interleaved(), routine, "b", ".layout", [] {
        return std::string("A and B both column-major (strided or pointer array) or both interleaved");
    });
    require_that(!a.is_interleaved() || (a.layout == b.layout && a.chunk() == b.chunk()), routine, "b", ".layout",
                 [] { return std::string("the same interleaved layout and chunk size as A"); });
}

// ---- one dense matrix per call (cholesky_large.hpp, ldlt.hpp) ----------------------------------------

// Bytes from the first to one past the last element of a rows x cols matrix (ld): the checks of
// size overflow and of overlap both use it.
template <class T>
std::size_t dense_bytes(int rows, int cols, int ld) {
    if (rows == 0 || cols == 0) return 0;
    return (std::size_t(cols - 1) * std::size_t(ld) + std::size_t(rows)) * sizeof(T);
}

// [p, p + p_bytes) and [q, q + q_bytes) share a byte.
inline bool overlaps(const void* p, std::size_t p_bytes, const void* q, std::size_t q_bytes) {
    const auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(q);
    return a < b + q_bytes && b < a + p_bytes;
}

// An n x nrhs block of right-hand sides or solutions named `name`, leading dimension `ld_name`.
inline void check_dense_rhs(const char* routine, const char* name, const char* ld_name, int n, int nrhs, const void* b,
                            int ldb) {
    require(ldb >= (n > 1 ? n : 1), routine, ld_name,
            std::string(ld_name) + " >= max(1, n) (got " + std::to_string(ldb) + ", n = " + std::to_string(n) + ")");
    require(n == 0 || nrhs == 0 || b != nullptr, routine, name, "non-null");
}

}  // namespace batchsolve::checks
