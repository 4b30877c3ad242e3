// Layout conversion on the GPU: one tiled kernel moves any batch layout into any other, through a
// shared-memory tile of (matrices x elements) so that both sides are read and written coalesced.
#include <algorithm>
#include <cstdint>

#include "../core/backends.hpp"
#include "layout_convert.hpp"

namespace batchsolve::cuda_backend {

namespace {

// A tile covers kTile matrices x kTile consecutive elements (column-major element order) of them.
// kTile = 32 makes one warp span one tile row; kTileRows warps walk the tile. Not tuned yet.
constexpr int kTile = 32;
constexpr int kTileRows = 8;
constexpr int kMaxGridY = 65535;  // CUDA's limit on gridDim.y

template <class T>
struct ConvertArgs {
    DeviceBatch<T> src, dst;
    std::int64_t elements = 0;  // rows * cols
    int batch = 0;              // matrices to convert
    int rows = 0;
    Part part = Part::all;
    bool zero_rest = false;
    // Which tile index the 32 lanes of a warp run along on each side: the matrix index for the
    // interleaved layouts (consecutive matrices are adjacent there), the element index for column-major.
    bool src_batch_fast = false, dst_batch_fast = false;
};

BATCHSOLVE_HD bool in_part(Part part, int i, int j) {
    return part == Part::all || (part == Part::lower ? i >= j : i <= j);
}

// One thread's share of a tile (tile rows are matrices, tile columns elements): the lane index `tx`
// runs along the fast axis of the side being accessed, `ty` over the other axis in steps of kTileRows.
// On a batch-fast (interleaved) side a thread keeps one matrix and walks its elements; on an
// element-fast (column-major) side it keeps one element (i, j) and walks the matrices. Either way
// the element's (i, j) is found by one division per thread, not one per element: the divisions,
// not the memory traffic, bounded the first version of this kernel (a triangle of n = 128 moved at
// about a quarter of the copy bandwidth). Load and store are split (a barrier between them).
template <class T>
BATCHSOLVE_HD void load_tile(const ConvertArgs<T>& a, std::int64_t k0, std::int64_t e0, int tx, int ty,
                             T (*tile)[kTile + 1]) {
    if (a.src_batch_fast) {
        const std::int64_t k = k0 + tx;
        std::int64_t e = e0 + ty;
        if (k >= a.batch || e >= a.elements) return;
        int j = int(e / a.rows), i = int(e - std::int64_t(j) * a.rows);
        for (int r = ty; r < kTile && e < a.elements; r += kTileRows) {
            if (in_part(a.part, i, j)) tile[tx][r] = a.src.at(int(k), i, j);
            e += kTileRows, i += kTileRows;
            while (i >= a.rows) i -= a.rows, ++j;
        }
    } else {
        const std::int64_t e = e0 + tx;
        if (e >= a.elements) return;
        const int j = int(e / a.rows), i = int(e - std::int64_t(j) * a.rows);
        if (!in_part(a.part, i, j)) return;
        for (int r = ty; r < kTile && k0 + r < a.batch; r += kTileRows) tile[r][tx] = a.src.at(int(k0 + r), i, j);
    }
}

template <class T>
BATCHSOLVE_HD void store_tile(const ConvertArgs<T>& a, std::int64_t k0, std::int64_t e0, int tx, int ty,
                              const T (*tile)[kTile + 1]) {
    if (a.dst_batch_fast) {
        const std::int64_t k = k0 + tx;
        std::int64_t e = e0 + ty;
        if (k >= a.batch || e >= a.elements) return;
        int j = int(e / a.rows), i = int(e - std::int64_t(j) * a.rows);
        for (int r = ty; r < kTile && e < a.elements; r += kTileRows) {
            if (in_part(a.part, i, j)) a.dst.at(int(k), i, j) = tile[tx][r];
            else if (a.zero_rest) a.dst.at(int(k), i, j) = T{};
            e += kTileRows, i += kTileRows;
            while (i >= a.rows) i -= a.rows, ++j;
        }
    } else {
        const std::int64_t e = e0 + tx;
        if (e >= a.elements) return;
        const int j = int(e / a.rows), i = int(e - std::int64_t(j) * a.rows);
        const bool inside = in_part(a.part, i, j);
        if (!inside && !a.zero_rest) return;
        for (int r = ty; r < kTile && k0 + r < a.batch; r += kTileRows)
            a.dst.at(int(k0 + r), i, j) = inside ? tile[r][tx] : T{};
    }
}

// blockIdx.x: a tile of matrices; blockIdx.y strides over the element tiles (gridDim.y is capped at
// 65535, large B blocks need several passes).
template <class T>
__global__ void __launch_bounds__(kTile * kTileRows) convert_layout_tiled(const ConvertArgs<T> a) {
    __shared__ T tile[kTile][kTile + 1];  // +1: column walks hit distinct banks
    const std::int64_t k0 = std::int64_t(blockIdx.x) * kTile;
    const std::int64_t element_tiles = (a.elements + kTile - 1) / kTile;
    for (std::int64_t et = blockIdx.y; et < element_tiles; et += gridDim.y) {
        load_tile(a, k0, et * kTile, int(threadIdx.x), int(threadIdx.y), tile);
        __syncthreads();
        store_tile(a, k0, et * kTile, int(threadIdx.x), int(threadIdx.y), tile);
        __syncthreads();  // the next pass overwrites the tile
    }
}

// The kernel's arguments and grid for a conversion (separate from the launch so that tests can step
// through the same tiles on the host).
template <class T>
ConvertArgs<T> convert_args(const DeviceBatch<T>& src, const DeviceBatch<T>& dst, int batch, Part part,
                            bool zero_rest) {
    ConvertArgs<T> a;
    a.src = src, a.dst = dst;
    a.elements = std::int64_t(src.rows) * src.cols;
    a.batch = batch, a.rows = src.rows;
    a.part = part, a.zero_rest = zero_rest;
    a.src_batch_fast = src.interleaved(), a.dst_batch_fast = dst.interleaved();
    return a;
}

template <class T>
dim3 convert_grid(const ConvertArgs<T>& a) {
    const std::int64_t batch_tiles = (std::int64_t(a.batch) + kTile - 1) / kTile;  // <= 2^26: fits gridDim.x
    const std::int64_t element_tiles = (a.elements + kTile - 1) / kTile;
    return dim3(unsigned(batch_tiles), unsigned(std::min<std::int64_t>(element_tiles, kMaxGridY)));
}

}  // namespace

template <class T>
void launch_convert(const DeviceBatch<T>& src, const DeviceBatch<T>& dst, int batch, Part part, bool zero_rest,
                    cudaStream_t stream) {
    if (batch <= 0 || src.rows == 0 || src.cols == 0) return;
    const ConvertArgs<T> a = convert_args(src, dst, batch, part, zero_rest);
    convert_layout_tiled<T><<<convert_grid(a), dim3(kTile, kTileRows), 0, stream>>>(a);
    BATCHSOLVE_LAUNCH_CHECK("convert_layout_tiled");
}

template <class T>
BATCHSOLVE_LAYOUT_CONVERT(T) {
    constexpr const char* routine = "convert_layout";
    detail::CudaResources& r = detail::resources_of(ctx, routine);
    detail::DeviceGuard guard(r.device_);
    const auto s = checked_device_batch(r, src, routine, "src");
    const auto d = checked_device_batch(r, dst, routine, "dst");
    launch_convert(s, d, src.count, Part::all, false, r.stream());
}

#define INSTANTIATE_LAUNCH(D)                                                                                    \
    template void launch_convert<D>(const DeviceBatch<D>&, const DeviceBatch<D>&, int, Part, bool, cudaStream_t);
INSTANTIATE_LAUNCH(float)
INSTANTIATE_LAUNCH(double)
INSTANTIATE_LAUNCH(cuComplex)
INSTANTIATE_LAUNCH(cuDoubleComplex)
#undef INSTANTIATE_LAUNCH

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_LAYOUT_ROUTINES)

}  // namespace batchsolve::cuda_backend
