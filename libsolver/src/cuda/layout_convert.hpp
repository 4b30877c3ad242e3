// The layout-conversion launcher of layout.cu, for reuse by other CUDA code (the cuSOLVER glue moves
// interleaved batches through a column-major workspace with it), and the checks that turn a user
// view into a device descriptor.
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "layout_index.cuh"
#include "resources.hpp"

namespace batchsolve::cuda_backend {

// Which elements of each matrix a conversion touches.
enum class Part { all, lower, upper };
inline Part part_of(Uplo uplo) { return uplo == Uplo::lower ? Part::lower : Part::upper; }

// Copies the `part` elements of matrices 0..batch-1 of `src` into the same matrices of `dst`
// (matrix numbers through each descriptor's `first`). With `zero_rest`, the elements of dst outside
// `part` are set to zero, so that a library routine handed a full workspace never reads undefined
// data; without it they are left untouched. Only `part` of src is read. Asynchronous on `stream`.
// T: float, double, cuComplex, cuDoubleComplex.
template <class T>
void launch_convert(const DeviceBatch<T>& src, const DeviceBatch<T>& dst, int batch, Part part, bool zero_rest,
                    cudaStream_t stream);

// The descriptor of a user view, after the checks that need the device: the data (or pointer
// array) is memory the GPU can read, and aligned to the element size as the CUDA types require.
template <class T>
DeviceBatch<device_scalar_t<T>> checked_device_batch(detail::CudaResources& r, const BatchView<T>& v,
                                                     const char* routine, const char* name) {
    using D = device_scalar_t<T>;
    const std::string n(name);
    if (v.layout == LayoutKind::pointer_array) {
        if (v.count > 0 && reinterpret_cast<std::uintptr_t>(v.pointers) % alignof(void*) != 0)
            throw InvalidArgument(routine, n + ".pointers", "aligned to " + std::to_string(alignof(void*)) + " bytes");
        r.require_device_memory(v.pointers, routine, n + ".pointers");
    } else {
        if (reinterpret_cast<std::uintptr_t>(v.data) % alignof(D) != 0)
            throw InvalidArgument(routine, n + ".data",
                                  "aligned to " + std::to_string(alignof(D)) + " bytes (as cudaMalloc returns)");
        r.require_device_memory(v.data, routine, n + ".data");
    }
    return device_batch(v);
}

}  // namespace batchsolve::cuda_backend
