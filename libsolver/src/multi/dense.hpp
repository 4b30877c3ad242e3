// The backends of gesv over a DeviceGroup (multi_device.hpp): cuSOLVERMg for CUDA groups
// (dense_cusolvermg.cpp), NotCompiled in a build without CUDA (dense_none.cpp).
#pragma once

#include "batchsolve/multi_device.hpp"

namespace batchsolve::multi {

template <class T>
DenseSolveReport gesv_cusolvermg(int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb, DeviceGroup& group, int tile);

}  // namespace batchsolve::multi
