// LAPACKE per matrix under OpenMP (peers.hpp): the tester's LAPACK reference.
#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <cblas.h>
#include <lapacke.h>

#include "peers.hpp"

namespace batchsolve::validation::peer {

namespace {

char uplo_char(Uplo u) { return u == Uplo::lower ? 'L' : 'U'; }

lapack_int potrf_one(char u, int n, float* a, int lda) { return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, u, n, a, lda); }
lapack_int potrf_one(char u, int n, double* a, int lda) { return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, u, n, a, lda); }
lapack_int potrf_one(char u, int n, std::complex<float>* a, int lda) {
    return LAPACKE_cpotrf_work(LAPACK_COL_MAJOR, u, n, a, lda);
}
lapack_int potrf_one(char u, int n, std::complex<double>* a, int lda) {
    return LAPACKE_zpotrf_work(LAPACK_COL_MAJOR, u, n, a, lda);
}
lapack_int potrs_one(char u, int n, int nrhs, const float* a, int lda, float* b, int ldb) {
    return LAPACKE_spotrs_work(LAPACK_COL_MAJOR, u, n, nrhs, a, lda, b, ldb);
}
lapack_int potrs_one(char u, int n, int nrhs, const double* a, int lda, double* b, int ldb) {
    return LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, u, n, nrhs, a, lda, b, ldb);
}
lapack_int potrs_one(char u, int n, int nrhs, const std::complex<float>* a, int lda, std::complex<float>* b, int ldb) {
    return LAPACKE_cpotrs_work(LAPACK_COL_MAJOR, u, n, nrhs, a, lda, b, ldb);
}
lapack_int potrs_one(char u, int n, int nrhs, const std::complex<double>* a, int lda, std::complex<double>* b,
                     int ldb) {
    return LAPACKE_zpotrs_work(LAPACK_COL_MAJOR, u, n, nrhs, a, lda, b, ldb);
}
lapack_int posv_one(char u, int n, int nrhs, float* a, int lda, float* b, int ldb) {
    return LAPACKE_sposv_work(LAPACK_COL_MAJOR, u, n, nrhs, a, lda, b, ldb);
}
lapack_int posv_one(char u, int n, int nrhs, double* a, int lda, double* b, int ldb) {
    return LAPACKE_dposv_work(LAPACK_COL_MAJOR, u, n, nrhs, a, lda, b, ldb);
}
lapack_int posv_one(char u, int n, int nrhs, std::complex<float>* a, int lda, std::complex<float>* b, int ldb) {
    return LAPACKE_cposv_work(LAPACK_COL_MAJOR, u, n, nrhs, a, lda, b, ldb);
}
lapack_int posv_one(char u, int n, int nrhs, std::complex<double>* a, int lda, std::complex<double>* b, int ldb) {
    return LAPACKE_zposv_work(LAPACK_COL_MAJOR, u, n, nrhs, a, lda, b, ldb);
}

// One matrix per thread: a multi-threaded BLAS underneath would oversubscribe the cores.
void one_blas_thread() { openblas_set_num_threads(1); }

}  // namespace

template <class T>
void lapacke_potrf(Uplo uplo, const BatchView<T>& a, int* info, int threads) {
    one_blas_thread();
    const char u = uplo_char(uplo);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int k = 0; k < a.count; ++k) info[k] = int(potrf_one(u, a.rows, a.data + a.stride * k, a.ld));
}

template <class T>
void lapacke_potrs(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, int threads) {
    one_blas_thread();
    const char u = uplo_char(uplo);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int k = 0; k < a.count; ++k)
        potrs_one(u, a.rows, b.cols, a.data + a.stride * k, a.ld, b.data + b.stride * k, b.ld);
}

template <class T>
void lapacke_posv(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, int threads) {
    one_blas_thread();
    const char u = uplo_char(uplo);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int k = 0; k < a.count; ++k)
        info[k] = int(posv_one(u, a.rows, b.cols, a.data + a.stride * k, a.ld, b.data + b.stride * k, b.ld));
}

template <class T>
int lapacke_potrf_one(Uplo uplo, int n, T* a, int lda, int blas_threads) {
    openblas_set_num_threads(blas_threads);
    const int info = int(potrf_one(uplo_char(uplo), n, a, lda));
    one_blas_thread();
    return info;
}

template <class T>
void lapacke_potrs_one(Uplo uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb, int blas_threads) {
    openblas_set_num_threads(blas_threads);
    potrs_one(uplo_char(uplo), n, nrhs, a, lda, b, ldb);
    one_blas_thread();
}

std::string lapack_library() { return openblas_get_config(); }

namespace {
template <class T>
double gemm_peak(int threads) {
    const int m = 2048;
    std::vector<T> a(std::size_t(m) * m), b(a.size()), c(a.size());
    for (std::size_t e = 0; e < a.size(); ++e) a[e] = T(double(e % 1013) / 1013 - 0.5), b[e] = T(double(e % 997) / 997 - 0.5);
    openblas_set_num_threads(threads);
    const auto call = [&] {
        if constexpr (std::is_same_v<T, float>)
            cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, a.data(), m, b.data(), m, 0.0f, c.data(), m);
        else
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, a.data(), m, b.data(), m, 0.0, c.data(), m);
    };
    call();  // warm-up (threads, pages)
    std::vector<double> seconds;
    for (int r = 0; r < 5; ++r) {
        const double t0 = omp_get_wtime();
        call();
        seconds.push_back(omp_get_wtime() - t0);
    }
    one_blas_thread();
    std::sort(seconds.begin(), seconds.end());
    return 2.0 * double(m) * m * m / seconds[2] * 1e-9;
}
}  // namespace

double cpu_gemm_peak_gflops(bool single, int threads) { return single ? gemm_peak<float>(threads) : gemm_peak<double>(threads); }

#define INSTANTIATE(T)                                                                      \
    template void lapacke_potrf<T>(Uplo, const BatchView<T>&, int*, int);                   \
    template void lapacke_potrs<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, int); \
    template void lapacke_posv<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, int);  \
    template int lapacke_potrf_one<T>(Uplo, int, T*, int, int);                              \
    template void lapacke_potrs_one<T>(Uplo, int, int, const T*, int, T*, int, int);
INSTANTIATE(float)
INSTANTIATE(double)
INSTANTIATE(std::complex<float>)
INSTANTIATE(std::complex<double>)
#undef INSTANTIATE

}  // namespace batchsolve::validation::peer
