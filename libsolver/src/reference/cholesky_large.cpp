// The CPU reference backend of the large-matrix Cholesky solvers: LAPACK's ?potrf/?potrs with OpenBLAS
// on every thread (one matrix per call, unlike the batched routines, which keep OpenBLAS
// single-threaded per matrix), and the conversion of A to float in an OpenMP loop.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../core/cholesky_large_backend.hpp"
#include "../host/lapack.hpp"

namespace batchsolve::reference {

namespace {

char uplo_letter(Uplo u) { return u == Uplo::lower ? 'L' : 'U'; }

lapack_int lapack_potrf(Uplo u, int n, float* a, int lda) { return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo_letter(u), n, a, lda); }
lapack_int lapack_potrf(Uplo u, int n, double* a, int lda) { return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo_letter(u), n, a, lda); }
lapack_int lapack_potrs(Uplo u, int n, int nrhs, const float* a, int lda, float* b, int ldb) {
    return LAPACKE_spotrs_work(LAPACK_COL_MAJOR, uplo_letter(u), n, nrhs, a, lda, b, ldb);
}
lapack_int lapack_potrs(Uplo u, int n, int nrhs, const double* a, int lda, double* b, int ldb) {
    return LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, uplo_letter(u), n, nrhs, a, lda, b, ldb);
}

}  // namespace

template <class T>
BATCHSOLVE_LARGE_FACTOR(T) {
    *info = 0;
    if (n == 0) return;
    host::ScopedAllThreadsBlas threads;
    // LAPACK's info: 0, k > 0 for a non-positive pivot at column k; a NaN pivot fails its "> 0" test
    // as well, so a non-finite input ends at its column too.
    const lapack_int result = lapack_potrf(uplo, n, a, lda);
    if (result < 0) throw Error("potrf: LAPACK rejected argument " + std::to_string(-result));
    *info = int(result);
    // OpenBLAS's potrf tests a pivot with "<= 0", which a NaN passes: its factor then carries the NaN
    // to the diagonal at or after the NaN's column. The first non-finite diagonal entry is the info.
    const int checked = *info == 0 ? n : *info - 1;
    for (int j = 0; j < checked; ++j)
        if (!std::isfinite(a[std::size_t(j) * lda + j])) {
            *info = j + 1;
            break;
        }
}

template <class T>
BATCHSOLVE_LARGE_SOLVE(T) {
    host::ScopedAllThreadsBlas threads;
    const lapack_int result = lapack_potrs(uplo, n, nrhs, a, lda, b, ldb);
    if (result < 0) throw Error("potrs: LAPACK rejected argument " + std::to_string(-result));
}

template <class T>
BATCHSOLVE_LARGE_CONVERT_SYMMETRIC(T) {
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(| : bad)
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) {
            const bool stored = uplo == Uplo::lower ? i >= j : i <= j;
            const float v = float(stored ? a[std::size_t(j) * lda + i] : a[std::size_t(i) * lda + j]);
            if (stored) bad |= std::isfinite(v) ? 0 : 1;
            dst[std::size_t(j) * ldd + i] = v;
        }
    }
    if (bad) *overflow = 1;
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_LARGE_ROUTINES)

}  // namespace batchsolve::reference
