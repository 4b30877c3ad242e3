// Conversion of a batch between layouts (column-major strided or pointer array <-> interleaved <->
// chunked interleaved), on the context's backend. Any batch size; the narrower last chunk is handled.
#pragma once

#include <type_traits>

#include "batchsolve/batch.hpp"
#include "batchsolve/context.hpp"

namespace batchsolve {

// Copies every element of every matrix of `src` into `dst`. Both views must have the same rows,
// cols and count, and must not overlap. The whole matrix is copied (both triangles).
template <class T>
void convert_layout(const BatchView<const T>& src, const BatchView<T>& dst, Context& ctx);

// The same with a non-const source view (T deduced from both, no convert_layout<T> needed).
template <class T, class = std::enable_if_t<!std::is_const_v<T>>>
void convert_layout(const BatchView<T>& src, const BatchView<T>& dst, Context& ctx) {
    convert_layout<T>(BatchView<const T>(src), dst, ctx);
}

}  // namespace batchsolve
