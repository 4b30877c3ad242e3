// cuSOLVER's batched Cholesky called directly (peers.hpp): the tester's cuSOLVER peer. One handle per
// host thread, moved to the caller's stream on each call (a host-side setting).
#include <cuComplex.h>
#include <cusolverDn.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "peers.hpp"

namespace batchsolve::validation::peer {

namespace {

void check(cusolverStatus_t s, const char* call) {
    if (s != CUSOLVER_STATUS_SUCCESS) throw std::runtime_error(std::string(call) + ": cuSOLVER status " + std::to_string(int(s)));
}

cusolverDnHandle_t handle_on(void* stream) {
    thread_local struct Holder {
        cusolverDnHandle_t h = nullptr;
        ~Holder() {
            if (h) cusolverDnDestroy(h);
        }
    } holder;
    if (!holder.h) check(cusolverDnCreate(&holder.h), "cusolverDnCreate");
    check(cusolverDnSetStream(holder.h, static_cast<cudaStream_t>(stream)), "cusolverDnSetStream");
    return holder.h;
}

cublasFillMode_t fill(Uplo u) { return u == Uplo::lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }

cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t u, int n, float** a, int lda, int* info, int count) {
    return cusolverDnSpotrfBatched(h, u, n, a, lda, info, count);
}
cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t u, int n, double** a, int lda, int* info, int count) {
    return cusolverDnDpotrfBatched(h, u, n, a, lda, info, count);
}
cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t u, int n, std::complex<float>** a, int lda, int* info,
                       int count) {
    return cusolverDnCpotrfBatched(h, u, n, reinterpret_cast<cuComplex**>(a), lda, info, count);
}
cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t u, int n, std::complex<double>** a, int lda, int* info,
                       int count) {
    return cusolverDnZpotrfBatched(h, u, n, reinterpret_cast<cuDoubleComplex**>(a), lda, info, count);
}
cusolverStatus_t potrs(cusolverDnHandle_t h, cublasFillMode_t u, int n, float** a, int lda, float** b, int ldb,
                       int* status, int count) {
    return cusolverDnSpotrsBatched(h, u, n, 1, a, lda, b, ldb, status, count);
}
cusolverStatus_t potrs(cusolverDnHandle_t h, cublasFillMode_t u, int n, double** a, int lda, double** b, int ldb,
                       int* status, int count) {
    return cusolverDnDpotrsBatched(h, u, n, 1, a, lda, b, ldb, status, count);
}
cusolverStatus_t potrs(cusolverDnHandle_t h, cublasFillMode_t u, int n, std::complex<float>** a, int lda,
                       std::complex<float>** b, int ldb, int* status, int count) {
    return cusolverDnCpotrsBatched(h, u, n, 1, reinterpret_cast<cuComplex**>(a), lda,
                                   reinterpret_cast<cuComplex**>(b), ldb, status, count);
}
cusolverStatus_t potrs(cusolverDnHandle_t h, cublasFillMode_t u, int n, std::complex<double>** a, int lda,
                       std::complex<double>** b, int ldb, int* status, int count) {
    return cusolverDnZpotrsBatched(h, u, n, 1, reinterpret_cast<cuDoubleComplex**>(a), lda,
                                   reinterpret_cast<cuDoubleComplex**>(b), ldb, status, count);
}

}  // namespace

template <class T>
void cusolver_potrf_batched(Uplo uplo, int n, T* const* a, int lda, int* info, int count, void* stream) {
    const cusolverDnHandle_t h = handle_on(stream);
    for (int first = 0; first < count; first += kMaxPiece)
        check(potrf(h, fill(uplo), n, const_cast<T**>(a) + first, lda, info + first, std::min(kMaxPiece, count - first)),
              "cusolverDn<t>potrfBatched");
}

template <class T>
void cusolver_potrs_batched(Uplo uplo, int n, T* const* a, int lda, T* const* b, int ldb, int* status, int count,
                            void* stream) {
    const cusolverDnHandle_t h = handle_on(stream);
    for (int first = 0; first < count; first += kMaxPiece)
        check(potrs(h, fill(uplo), n, const_cast<T**>(a) + first, lda, const_cast<T**>(b) + first, ldb, status,
                    std::min(kMaxPiece, count - first)),
              "cusolverDn<t>potrsBatched");
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
