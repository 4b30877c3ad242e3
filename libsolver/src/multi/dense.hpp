// The backends of gesv over a DeviceGroup (multi_device.hpp): cuSOLVERMg for CUDA groups
// (dense_cusolvermg.cpp), NotCompiled in a build without CUDA (dense_none.cpp).
#pragma once

#include "batchsolve/multi_device.hpp"

namespace batchsolve::multi {

template <class T>
DenseSolveReport gesv_cusolvermg(int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb, DeviceGroup& group, int tile);

// The same on a matrix already dealt to the devices (TiledMatrix): factored in place.
template <class T>
DenseSolveReport gesv_cusolvermg_tiled(TiledMatrix<T>& a, int* ipiv, int nrhs, T* b, int ldb, DeviceGroup& group);

// Free and total memory of CUDA device `device` (cudaMemGetInfo); NotCompiled without CUDA.
void cuda_memory(int device, std::size_t& free_bytes, std::size_t& total_bytes);

}  // namespace batchsolve::multi
