// CPU reference backend of convert_layout: every element of every matrix, between any two layouts.
#include "../core/backends.hpp"
#include "access.hpp"

namespace batchsolve::reference {

template <class T>
void convert_layout(const BatchView<const T>& src, const BatchView<T>& dst, Context&) {
    // Static schedule: each thread owns a contiguous range of matrices, so in an interleaved
    // destination neighbouring threads share cache lines only at the range ends.
#pragma omp parallel for schedule(static)
    for (int k = 0; k < src.count; ++k)
        copy_full(src.rows, src.cols, matrix_access(src, k), matrix_access(dst, k));
}

#define INSTANTIATE(T) template void convert_layout<T>(const BatchView<const T>&, const BatchView<T>&, Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve::reference
