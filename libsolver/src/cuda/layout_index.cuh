// Device-side descriptors and index helpers of the four batch layouts, matching BatchView::offset
// and BatchView::at of batch.hpp exactly (those are host-only); every CUDA kernel reuses these.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

#include <cuComplex.h>

#include "batchsolve/batch.hpp"
#include "batchsolve/types.hpp"

#if defined(__CUDACC__)
#define BATCHSOLVE_HD __host__ __device__ __forceinline__
#else
#define BATCHSOLVE_HD inline
#endif

namespace batchsolve::cuda_backend {

// The element type kernels and cuSOLVER see for a public scalar type: the same size and bits, with
// CUDA's complex types in place of std::complex (not usable in device code). The CUDA complex types
// are aligned to their size, so device data must be too (cudaMalloc's memory always is).
template <class T> struct device_scalar;
template <> struct device_scalar<float> { using type = float; };
template <> struct device_scalar<double> { using type = double; };
template <> struct device_scalar<std::complex<float>> { using type = cuComplex; };
template <> struct device_scalar<std::complex<double>> { using type = cuDoubleComplex; };
template <class T> using device_scalar_t = typename device_scalar<std::remove_const_t<T>>::type;

static_assert(sizeof(cuComplex) == sizeof(std::complex<float>), "complex<float> and cuComplex differ in size");
static_assert(sizeof(cuDoubleComplex) == sizeof(std::complex<double>), "complex<double> and cuDoubleComplex differ");

// Real part, for pivot checks (the diagonal of a Hermitian factor is real).
BATCHSOLVE_HD float real_part(float x) { return x; }
BATCHSOLVE_HD double real_part(double x) { return x; }
BATCHSOLVE_HD float real_part(cuComplex x) { return x.x; }
BATCHSOLVE_HD double real_part(cuDoubleComplex x) { return x.x; }

// Offset of element (i, j) of matrix k of a rows x cols interleaved batch of `count` matrices stored
// in chunks of `chunk` matrices (chunk = count: plain interleaved); the last chunk is narrower.
BATCHSOLVE_HD std::int64_t interleaved_offset(int k, int i, int j, int rows, int cols, int count, int chunk) {
    const int c = k / chunk, q = k - c * chunk;
    const std::int64_t chunk_start = std::int64_t(c) * chunk;
    const std::int64_t width = chunk_start + chunk <= count ? chunk : count - chunk_start;
    return chunk_start * rows * cols + (std::int64_t(j) * rows + i) * width + q;
}

// Offset of element (i, j) of matrix k of a column-major strided batch.
BATCHSOLVE_HD std::int64_t column_major_offset(int k, int i, int j, int ld, std::int64_t stride) {
    return std::int64_t(k) * stride + std::int64_t(j) * ld + i;
}

// A batch as a kernel sees it: the fields of BatchView plus `first`, the view's matrix that this
// descriptor calls matrix 0 (slices of a batch keep the chunk geometry of the whole view, which
// depends on the view's count). Passed to kernels by value.
template <class T>
struct DeviceBatch {
    T* data = nullptr;             // all layouts but pointer_array
    T* const* pointers = nullptr;  // pointer_array
    std::int64_t stride = 0;       // column_major
    int rows = 0, cols = 0;
    int ld = 0;                    // column_major, pointer_array (rows for interleaved layouts)
    int count = 0;                 // matrices in the whole view
    int chunk = 0;                 // effective chunk width C: count for interleaved, 0 for column-major
    int first = 0;
    LayoutKind layout = LayoutKind::column_major;

    BATCHSOLVE_HD bool interleaved() const {
        return layout == LayoutKind::interleaved || layout == LayoutKind::chunked_interleaved;
    }
    // Address of element (0, 0) of matrix k (column_major and pointer_array only).
    BATCHSOLVE_HD T* matrix(int k) const {
        const int kk = first + k;
        return layout == LayoutKind::pointer_array ? pointers[kk] : data + std::int64_t(kk) * stride;
    }
    BATCHSOLVE_HD T& at(int k, int i, int j) const {
        const int kk = first + k;
        switch (layout) {
            case LayoutKind::column_major: return data[column_major_offset(kk, i, j, ld, stride)];
            case LayoutKind::pointer_array: return pointers[kk][std::int64_t(j) * ld + i];
            default: return data[interleaved_offset(kk, i, j, rows, cols, count, chunk)];
        }
    }
    // The same batch, starting at its matrix `begin`.
    BATCHSOLVE_HD DeviceBatch slice(int begin) const {
        DeviceBatch s = *this;
        s.first += begin;
        return s;
    }
};

// The descriptor of a public view (no checks; see checked_device_batch in layout_convert.hpp).
template <class T>
DeviceBatch<device_scalar_t<T>> device_batch(const BatchView<T>& v) {
    using D = device_scalar_t<T>;
    using U = std::remove_const_t<T>;
    DeviceBatch<D> d;
    // Const views (inputs) become mutable descriptors: kernels never write through an input.
    d.data = reinterpret_cast<D*>(const_cast<U*>(v.data));
    d.pointers = reinterpret_cast<D* const*>(const_cast<U* const*>(v.pointers));
    d.stride = v.stride;
    d.rows = v.rows, d.cols = v.cols, d.ld = v.ld, d.count = v.count;
    d.chunk = v.is_interleaved() ? v.chunk() : 0;
    d.first = 0;
    d.layout = v.layout;
    return d;
}

// A packed column-major batch (ld = rows, stride = rows * cols), e.g. a workspace.
template <class T>
DeviceBatch<T> packed_column_major(T* data, int rows, int cols, int count) {
    DeviceBatch<T> d;
    d.data = data;
    d.stride = std::int64_t(rows) * cols;
    d.rows = rows, d.cols = cols, d.ld = rows, d.count = count;
    d.layout = LayoutKind::column_major;
    return d;
}

}  // namespace batchsolve::cuda_backend
