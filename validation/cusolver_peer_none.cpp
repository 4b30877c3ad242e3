// Without the CUDA backend there is no cuSOLVER peer (peers.hpp); the tester never calls these then
// (every GPU row is skipped first), but a call says why rather than doing nothing.
#include <complex>
#include <stdexcept>

#include "peers.hpp"

namespace batchsolve::validation::peer {

template <class T>
void cusolver_potrf_batched(Uplo, int, T* const*, int, int*, int, void*) {
    throw std::runtime_error("cuSOLVER peer: this build has no CUDA backend");
}
template <class T>
void cusolver_potrs_batched(Uplo, int, T* const*, int, T* const*, int, int*, int, void*) {
    throw std::runtime_error("cuSOLVER peer: this build has no CUDA backend");
}

#define INSTANTIATE(T)                                                                               \
    template void cusolver_potrf_batched<T>(Uplo, int, T* const*, int, int*, int, void*);            \
    template void cusolver_potrs_batched<T>(Uplo, int, T* const*, int, T* const*, int, int*, int, void*);
INSTANTIATE(float)
INSTANTIATE(double)
INSTANTIATE(std::complex<float>)
INSTANTIATE(std::complex<double>)
#undef INSTANTIATE

}  // namespace batchsolve::validation::peer
