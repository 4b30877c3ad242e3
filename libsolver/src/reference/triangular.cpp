// The CPU reference backend of the variable-size triangular routines: one problem per OpenMP
// thread, each a single-threaded CBLAS ?trmm/?trsm or LAPACK ?potrf call (the fair CPU baseline of
// the benchmarks, and what the CUDA backend is tested against).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>

#include "../core/triangular_backend.hpp"
#include "../host/lapack.hpp"

namespace batchsolve::reference {

namespace {

using triangular_detail::CheckSpec;
using triangular_detail::Maxima;

CBLAS_SIDE cblas_side(Side s) { return s == Side::left ? CblasLeft : CblasRight; }
CBLAS_UPLO cblas_uplo(Uplo u) { return u == Uplo::lower ? CblasLower : CblasUpper; }
CBLAS_DIAG cblas_diag(Diag d) { return d == Diag::unit ? CblasUnit : CblasNonUnit; }
template <class T>
CBLAS_TRANSPOSE cblas_op(Op op) {
    if (op == Op::no_trans) return CblasNoTrans;
    // conj_trans on real data is trans (BLAS accepts both; stated once here).
    return (op == Op::conj_trans && is_complex_v<T>) ? CblasConjTrans : CblasTrans;
}

// One CBLAS call per precision.
struct Args {
    CBLAS_SIDE side;
    CBLAS_UPLO uplo;
    CBLAS_TRANSPOSE op;
    CBLAS_DIAG diag;
    int m, n, lda, ldb;
};
void trmm(const Args& g, float alpha, const float* a, float* b) {
    cblas_strmm(CblasColMajor, g.side, g.uplo, g.op, g.diag, g.m, g.n, alpha, a, g.lda, b, g.ldb);
}
void trmm(const Args& g, double alpha, const double* a, double* b) {
    cblas_dtrmm(CblasColMajor, g.side, g.uplo, g.op, g.diag, g.m, g.n, alpha, a, g.lda, b, g.ldb);
}
void trmm(const Args& g, std::complex<float> alpha, const std::complex<float>* a, std::complex<float>* b) {
    cblas_ctrmm(CblasColMajor, g.side, g.uplo, g.op, g.diag, g.m, g.n, &alpha, a, g.lda, b, g.ldb);
}
void trmm(const Args& g, std::complex<double> alpha, const std::complex<double>* a, std::complex<double>* b) {
    cblas_ztrmm(CblasColMajor, g.side, g.uplo, g.op, g.diag, g.m, g.n, &alpha, a, g.lda, b, g.ldb);
}
void trsm(const Args& g, float alpha, const float* a, float* b) {
    cblas_strsm(CblasColMajor, g.side, g.uplo, g.op, g.diag, g.m, g.n, alpha, a, g.lda, b, g.ldb);
}
void trsm(const Args& g, double alpha, const double* a, double* b) {
    cblas_dtrsm(CblasColMajor, g.side, g.uplo, g.op, g.diag, g.m, g.n, alpha, a, g.lda, b, g.ldb);
}
void trsm(const Args& g, std::complex<float> alpha, const std::complex<float>* a, std::complex<float>* b) {
    cblas_ctrsm(CblasColMajor, g.side, g.uplo, g.op, g.diag, g.m, g.n, &alpha, a, g.lda, b, g.ldb);
}
void trsm(const Args& g, std::complex<double> alpha, const std::complex<double>* a, std::complex<double>* b) {
    cblas_ztrsm(CblasColMajor, g.side, g.uplo, g.op, g.diag, g.m, g.n, &alpha, a, g.lda, b, g.ldb);
}

// The _work variants: LAPACKE's plain ones scan A for NaN first and answer -4, where LAPACK's own
// answer (and ours) is the column whose pivot is NaN.
lapack_int potrf(Uplo u, int n, float* a, int lda) {
    return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, u == Uplo::lower ? 'L' : 'U', n, a, lda);
}
lapack_int potrf(Uplo u, int n, double* a, int lda) {
    return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, u == Uplo::lower ? 'L' : 'U', n, a, lda);
}
lapack_int potrf(Uplo u, int n, std::complex<float>* a, int lda) {
    return LAPACKE_cpotrf_work(LAPACK_COL_MAJOR, u == Uplo::lower ? 'L' : 'U', n, a, lda);
}
lapack_int potrf(Uplo u, int n, std::complex<double>* a, int lda) {
    return LAPACKE_zpotrf_work(LAPACK_COL_MAJOR, u == Uplo::lower ? 'L' : 'U', n, a, lda);
}

// Problems are cheap and uneven in size: small dynamic chunks balance the threads.
constexpr int kProblemsPerChunk = 8;

template <class T, class Call>
void for_each_problem(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, const int* lda,
                      const int* ldb, int batch, Call call) {
    host::single_threaded_blas();
#pragma omp parallel for schedule(dynamic, kProblemsPerChunk)
    for (int i = 0; i < batch; ++i) {
        if (m[i] <= 0 || n[i] <= 0) continue;
        const Args g{cblas_side(side), cblas_uplo(uplo), cblas_op<T>(op), cblas_diag(diag), m[i], n[i], lda[i], ldb[i]};
        call(i, g);
    }
}

}  // namespace

template <class T>
BATCHSOLVE_TRIANGULAR_CHECK(T) {
    Maxima found;
    for (int i = 0; i < batch; ++i) {
        int code = 0;
        if (spec.potrf) {
            const int order = m[i];
            namespace arg = vbatched_arg;
            if (order < 0 || (spec.given_max_m >= 0 && order > spec.given_max_m)) code = -arg::potrf_n;
            else if (order > 0 && a[i] == nullptr) code = -arg::potrf_a;
            else if (lda[i] < std::max(1, order)) code = -arg::potrf_lda;
            info[i] = code;
            m_run[i] = code == 0 ? order : 0;
            if (code == 0) found.m = std::max(found.m, order);
            continue;
        }
        namespace arg = vbatched_arg;
        const int rows = m[i], cols = n[i];
        const int order = spec.side == Side::left ? rows : cols;
        const bool work = rows > 0 && cols > 0;
        if (rows < 0 || (spec.given_max_m >= 0 && rows > spec.given_max_m)) code = -arg::tr_m;
        else if (cols < 0 || (spec.given_max_n >= 0 && cols > spec.given_max_n)) code = -arg::tr_n;
        else if (work && a[i] == nullptr) code = -arg::tr_a;
        else if (lda[i] < std::max(1, order)) code = -arg::tr_lda;
        else if (work && b[i] == nullptr) code = -arg::tr_b;
        else if (ldb[i] < std::max(1, rows)) code = -arg::tr_ldb;
        info[i] = code;
        m_run[i] = code == 0 ? rows : 0;
        n_run[i] = code == 0 ? cols : 0;
        if (code == 0) found.m = std::max(found.m, rows), found.n = std::max(found.n, cols);
    }
    if (spec.given_max_m >= 0) found.m = spec.given_max_m;
    if (spec.given_max_n >= 0) found.n = spec.given_max_n;
    return found;
}

template <class T>
BATCHSOLVE_TRIANGULAR_TRMM(T) {
    for_each_problem<T>(side, uplo, op, diag, m, n, lda, ldb, batch,
                        [&](int i, const Args& g) { trmm(g, alpha, a[i], b[i]); });
}

template <class T>
BATCHSOLVE_TRIANGULAR_TRSM(T) {
    for_each_problem<T>(side, uplo, op, diag, m, n, lda, ldb, batch,
                        [&](int i, const Args& g) { trsm(g, alpha, a[i], b[i]); });
}

template <class T>
BATCHSOLVE_TRIANGULAR_POTRF(T) {
    host::single_threaded_blas();
#pragma omp parallel for schedule(dynamic, kProblemsPerChunk)
    for (int i = 0; i < batch; ++i) {
        if (reset_info) info[i] = 0;
        if (n[i] <= 0) continue;
        const lapack_int result = potrf(uplo, n[i], a[i], lda[i]);
        if (result > 0) {
            info[i] = int(result);
            continue;
        }
        // OpenBLAS's potrf tests pivots with <= 0 only, so a NaN pivot runs through; it leaves NaN on
        // the factor's diagonal from that column on, which names the column LAPACK's own test would.
        for (int k = 0; k < n[i]; ++k)
            if (std::isnan(std::real(a[i][std::size_t(k) * lda[i] + k]))) {
                info[i] = k + 1;
                break;
            }
    }
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_TRIANGULAR_ROUTINES)

}  // namespace batchsolve::reference
