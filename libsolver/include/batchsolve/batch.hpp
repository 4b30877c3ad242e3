// Non-owning views of a batch of equally sized matrices in one of the four layouts.
//
// Memory belongs to the backend that runs the call: host memory for Backend::cpu, device memory for
// Backend::cuda (batchsolve::Buffer allocates the right kind). Index formulas, for matrix k, row i,
// column j of a rows x cols matrix:
//
//   column_major         data[k * stride + j * ld + i]
//   pointer_array        pointers[k][j * ld + i]
//   chunked_interleaved  chunk c = k / C, lane q = k % C, width w = min(C, count - c*C):
//                        data[c * C * rows * cols + (j * rows + i) * w + q]
//   interleaved          the chunked formula with C = count (one chunk):
//                        data[(j * rows + i) * count + k]
//
// The last chunk of a chunked batch is narrower when count is not a multiple of C, so the caller
// stores exactly count * rows * cols elements and never pads; kernels that want full chunks pad
// internally. Interleaved layouts store the whole matrix (ld = rows); only the triangle named by
// Uplo is referenced by Cholesky routines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "batchsolve/types.hpp"

namespace batchsolve {

template <class T>
struct BatchView {
    T* data = nullptr;             // all layouts but pointer_array
    T* const* pointers = nullptr;  // pointer_array only (the array itself lives with the data)
    int rows = 0;
    int cols = 0;
    int ld = 0;                    // column_major, pointer_array; equals rows for interleaved layouts
    std::int64_t stride = 0;       // column_major: elements between consecutive matrices
    int count = 0;                 // number of matrices
    LayoutKind layout = LayoutKind::column_major;
    int chunk_size = 0;            // chunked_interleaved only

    static BatchView column_major(T* data, int rows, int cols, int ld, std::int64_t stride, int count) {
        BatchView v;
        v.data = data, v.rows = rows, v.cols = cols, v.ld = ld, v.stride = stride, v.count = count;
        v.layout = LayoutKind::column_major;
        return v;
    }
    // Packed column-major: ld = rows, stride = rows * cols.
    static BatchView column_major(T* data, int rows, int cols, int count) {
        return column_major(data, rows, cols, rows, std::int64_t(rows) * cols, count);
    }
    static BatchView pointer_array(T* const* pointers, int rows, int cols, int ld, int count) {
        BatchView v;
        v.pointers = pointers, v.rows = rows, v.cols = cols, v.ld = ld, v.count = count;
        v.layout = LayoutKind::pointer_array;
        return v;
    }
    static BatchView interleaved(T* data, int rows, int cols, int count) {
        BatchView v;
        v.data = data, v.rows = rows, v.cols = cols, v.ld = rows, v.count = count;
        v.layout = LayoutKind::interleaved;
        return v;
    }
    static BatchView chunked(T* data, int rows, int cols, int count, int chunk_size) {
        BatchView v = interleaved(data, rows, cols, count);
        v.layout = LayoutKind::chunked_interleaved;
        v.chunk_size = chunk_size;
        return v;
    }

    // A view of the same memory with const elements (inputs such as the factor in potrs).
    template <class U = T, class = std::enable_if_t<!std::is_const_v<U>>>
    operator BatchView<const U>() const {
        BatchView<const U> v;
        v.data = data, v.pointers = reinterpret_cast<const U* const*>(pointers);
        v.rows = rows, v.cols = cols, v.ld = ld, v.stride = stride, v.count = count;
        v.layout = layout, v.chunk_size = chunk_size;
        return v;
    }

    bool is_interleaved() const {
        return layout == LayoutKind::interleaved || layout == LayoutKind::chunked_interleaved;
    }
    // Effective chunk width C of the interleaved formula (count for plain interleaved).
    int chunk() const { return layout == LayoutKind::chunked_interleaved ? chunk_size : count; }

    // Offset of element (i, j) of matrix k from `data` (not for pointer_array). Host and device.
    std::int64_t offset(int k, int i, int j) const {
        if (layout == LayoutKind::column_major) return std::int64_t(k) * stride + std::int64_t(j) * ld + i;
        const std::int64_t C = chunk(), c = k / C, q = k % C;
        const std::int64_t width = (c + 1) * C <= count ? C : count - c * C;
        return c * C * rows * cols + (std::int64_t(j) * rows + i) * width + q;
    }
    T& at(int k, int i, int j) const {
        if (layout == LayoutKind::pointer_array) return pointers[k][std::int64_t(j) * ld + i];
        return data[offset(k, i, j)];
    }

    // Elements a caller must provide behind `data` (0 for pointer_array).
    std::int64_t storage_elements() const {
        if (count == 0 || rows == 0 || cols == 0) return 0;
        if (layout == LayoutKind::pointer_array) return 0;
        if (layout == LayoutKind::column_major)
            return std::int64_t(count - 1) * stride + std::int64_t(cols - 1) * ld + rows;
        return std::int64_t(count) * rows * cols;
    }
};

}  // namespace batchsolve
