// Argument checks shared by every routine: run before any work, throw InvalidArgument naming the
// argument and the condition that failed (BLAS++'s blas_error_if habit).
#pragma once

#include <string>

#include "batchsolve/batch.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::checks {

inline void require(bool ok, const char* routine, const char* argument, const std::string& condition) {
    if (!ok) throw InvalidArgument(routine, argument, condition);
}

// A view that a routine may read or write: sizes non-negative, ld >= rows, storage present when
// there is anything to store, a valid chunk size.
template <class T>
void check_view(const BatchView<T>& v, const char* routine, const char* name) {
    const std::string n(name);
    require(v.count >= 0, routine, (n + ".count").c_str(), "count >= 0 (got " + std::to_string(v.count) + ")");
    require(v.rows >= 0, routine, (n + ".rows").c_str(), "rows >= 0 (got " + std::to_string(v.rows) + ")");
    require(v.cols >= 0, routine, (n + ".cols").c_str(), "cols >= 0 (got " + std::to_string(v.cols) + ")");
    const bool empty = v.count == 0 || v.rows == 0 || v.cols == 0;
    switch (v.layout) {
        case LayoutKind::column_major:
            require(v.ld >= (v.rows > 1 ? v.rows : 1), routine, (n + ".ld").c_str(),
                    "ld >= max(1, rows) (got ld = " + std::to_string(v.ld) + ", rows = " + std::to_string(v.rows) + ")");
            require(v.count <= 1 || v.stride >= std::int64_t(v.ld) * v.cols, routine, (n + ".stride").c_str(),
                    "stride >= ld * cols (got " + std::to_string(v.stride) + ")");
            require(empty || v.data != nullptr, routine, (n + ".data").c_str(), "non-null");
            break;
        case LayoutKind::pointer_array:
            require(v.ld >= (v.rows > 1 ? v.rows : 1), routine, (n + ".ld").c_str(),
                    "ld >= max(1, rows) (got ld = " + std::to_string(v.ld) + ", rows = " + std::to_string(v.rows) + ")");
            require(v.count == 0 || v.pointers != nullptr, routine, (n + ".pointers").c_str(), "non-null");
            break;
        case LayoutKind::chunked_interleaved:
            require(v.chunk_size >= 1, routine, (n + ".chunk_size").c_str(),
                    "chunk_size >= 1 (got " + std::to_string(v.chunk_size) + ")");
            [[fallthrough]];
        case LayoutKind::interleaved:
            require(v.ld == v.rows, routine, (n + ".ld").c_str(), "ld == rows for interleaved layouts");
            require(empty || v.data != nullptr, routine, (n + ".data").c_str(), "non-null");
            break;
    }
}

template <class T>
void check_square(const BatchView<T>& a, const char* routine, const char* name) {
    require(a.rows == a.cols, routine, name,
            "square matrices (got " + std::to_string(a.rows) + " x " + std::to_string(a.cols) + ")");
}

// B goes with A: same count, rows == n, compatible layout family.
template <class TA, class TB>
void check_rhs(const BatchView<TA>& a, const BatchView<TB>& b, const char* routine) {
    require(b.count == a.count, routine, "b.count",
            "b.count == a.count (got " + std::to_string(b.count) + " vs " + std::to_string(a.count) + ")");
    require(b.rows == a.rows, routine, "b.rows",
            "b.rows == n (got " + std::to_string(b.rows) + " vs " + std::to_string(a.rows) + ")");
    require(a.is_interleaved() == b.is_interleaved(), routine, "b.layout",
            "A and B both column-major (strided or pointer array) or both interleaved");
    require(!a.is_interleaved() || (a.layout == b.layout && a.chunk() == b.chunk()), routine, "b.layout",
            "the same interleaved layout and chunk size as A");
}

}  // namespace batchsolve::checks
