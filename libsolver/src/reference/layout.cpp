// CPU reference backend of convert_layout: every element of every matrix, between any two layouts.
#include "../core/backends.hpp"
#include "access.hpp"

namespace batchsolve::reference {

template <class T>
BATCHSOLVE_LAYOUT_CONVERT(T) {
    // Static schedule: each thread owns a contiguous range of matrices, so in an interleaved
    // destination neighbouring threads share cache lines only at the range ends.
#pragma omp parallel for schedule(static)
    for (int k = 0; k < src.count; ++k)
        copy_full(src.rows, src.cols, matrix_access(src, k), matrix_access(dst, k));
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_LAYOUT_ROUTINES)

}  // namespace batchsolve::reference
