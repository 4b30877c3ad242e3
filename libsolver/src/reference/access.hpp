// Uniform access to matrix k of a batch in any layout: element (i, j) lies at
// ptr[i * row_step + j * col_step], which covers column-major (row_step 1, col_step ld) and the
// interleaved layouts (row_step = width of the matrix's chunk) alike.
#pragma once

#include <cstdint>

#include "batchsolve/batch.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::reference {

template <class T>
struct MatrixAccess {
    T* ptr;
    std::int64_t row_step;
    std::int64_t col_step;

    // LAPACK can work on it in place, with ld = col_step.
    bool is_column_major() const { return row_step == 1; }
    T& operator()(int i, int j) const { return ptr[i * row_step + j * col_step]; }
};

template <class T>
MatrixAccess<T> matrix_access(const BatchView<T>& v, int k) {
    switch (v.layout) {
        case LayoutKind::column_major: return {v.data + std::int64_t(k) * v.stride, 1, v.ld};
        case LayoutKind::pointer_array: return {v.pointers[k], 1, v.ld};
        case LayoutKind::interleaved:
        case LayoutKind::chunked_interleaved: break;
    }
    const std::int64_t C = v.chunk(), c = k / C;
    const std::int64_t width = (c + 1) * C <= v.count ? C : v.count - c * C;
    return {v.data + v.offset(k, 0, 0), width, width * v.rows};
}

// Packed column-major storage (ld = rows), e.g. a scratch copy.
template <class T>
MatrixAccess<T> packed_access(T* p, int rows) {
    return {p, 1, rows};
}

// Copies the `uplo` triangle of an n x n matrix; the other triangle of dst is left as it is.
template <class U, class T>
void copy_triangle(Uplo uplo, int n, const MatrixAccess<U>& src, const MatrixAccess<T>& dst) {
    for (int j = 0; j < n; ++j) {
        const int first = uplo == Uplo::lower ? j : 0, end = uplo == Uplo::lower ? n : j + 1;
        for (int i = first; i < end; ++i) dst(i, j) = src(i, j);
    }
}

// Copies a whole rows x cols matrix.
template <class U, class T>
void copy_full(int rows, int cols, const MatrixAccess<U>& src, const MatrixAccess<T>& dst) {
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i) dst(i, j) = src(i, j);
}

}  // namespace batchsolve::reference
