// gesv over CUDA groups in a build without CUDA (dense.hpp): NotCompiled with the routine's name.
#include <complex>

#include "dense.hpp"

namespace batchsolve::multi {

template <class T>
DenseSolveReport gesv_cusolvermg(int, int, T*, int, int*, T*, int, DeviceGroup&, int) {
    throw NotCompiled("gesv (cuSOLVERMg)", "cuda");
}
template DenseSolveReport gesv_cusolvermg<float>(int, int, float*, int, int*, float*, int, DeviceGroup&, int);
template DenseSolveReport gesv_cusolvermg<double>(int, int, double*, int, int*, double*, int, DeviceGroup&, int);
template DenseSolveReport gesv_cusolvermg<std::complex<float>>(int, int, std::complex<float>*, int, int*, std::complex<float>*, int,
                                                               DeviceGroup&, int);
template DenseSolveReport gesv_cusolvermg<std::complex<double>>(int, int, std::complex<double>*, int, int*, std::complex<double>*,
                                                                int, DeviceGroup&, int);

template <class T>
DenseSolveReport gesv_cusolvermg_tiled(TiledMatrix<T>&, int*, int, T*, int, DeviceGroup&) {
    throw NotCompiled("gesv (cuSOLVERMg)", "cuda");
}
template DenseSolveReport gesv_cusolvermg_tiled<float>(TiledMatrix<float>&, int*, int, float*, int, DeviceGroup&);
template DenseSolveReport gesv_cusolvermg_tiled<double>(TiledMatrix<double>&, int*, int, double*, int, DeviceGroup&);
template DenseSolveReport gesv_cusolvermg_tiled<std::complex<float>>(TiledMatrix<std::complex<float>>&, int*, int, std::complex<float>*, int,
                                                                     DeviceGroup&);
template DenseSolveReport gesv_cusolvermg_tiled<std::complex<double>>(TiledMatrix<std::complex<double>>&, int*, int, std::complex<double>*,
                                                                      int, DeviceGroup&);

void cuda_memory(int, std::size_t&, std::size_t&) { throw NotCompiled("device memory query", "cuda"); }

}  // namespace batchsolve::multi
