// The tester's peers that are not batchsolve: LAPACKE called per matrix (lapack_peer.cpp) and cuSOLVER's
// batched Cholesky called directly (cusolver_peer.cpp; cusolver_peer_none.cpp without the CUDA backend).
// No CUDA or LAPACK header leaks from here.
#pragma once

#include <string>

#include "batchsolve/batch.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::validation::peer {

// LAPACKE_?potrf/?potrs/?posv_work per matrix of a column-major batch, one matrix per OpenMP thread
// (`threads` of them, static schedule), BLAS held on one thread: the way a CPU user batches LAPACK,
// and the reference of MAGMA's testers. info per matrix as LAPACK returns it.
template <class T>
void lapacke_potrf(Uplo uplo, const BatchView<T>& a, int* info, int threads);
template <class T>
void lapacke_potrs(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, int threads);
template <class T>
void lapacke_posv(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, int threads);
// One large matrix: LAPACKE_?potrf_work / ?potrs_work with BLAS on `blas_threads` threads (LAPACK's
// own parallelism for one matrix is its BLAS). Returns info.
template <class T>
int lapacke_potrf_one(Uplo uplo, int n, T* a, int lda, int blas_threads);
template <class T>
void lapacke_potrs_one(Uplo uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb, int blas_threads);
// The host's GEMM rate in GFLOP/s: the median of 5 OpenBLAS ?GEMM calls (s or d; m = n = k = 2048) on
// `threads` BLAS threads after a warm-up: the bound of the CPU rows' roofline column.
double cpu_gemm_peak_gflops(bool single, int threads);
// The LAPACK/BLAS library behind LAPACKE (OpenBLAS's configuration string).
std::string lapack_library();

// cusolverDn<t>potrfBatched / potrsBatched on device pointer arrays, on `stream` (a cudaStream_t),
// nothing else: no pointer building, no info post-check, so a timed region around them holds only
// the vendor's work. potrsBatched takes one right-hand side per call: `b` points at one column of
// each matrix. Batches above cuSOLVER's grid limit are split into pieces of at most kMaxPiece.
constexpr int kMaxPiece = 65535 * 4;
template <class T>
void cusolver_potrf_batched(Uplo uplo, int n, T* const* a, int lda, int* info, int count, void* stream);
template <class T>
void cusolver_potrs_batched(Uplo uplo, int n, T* const* a, int lda, T* const* b, int ldb, int* status, int count,
                            void* stream);

}  // namespace batchsolve::validation::peer
