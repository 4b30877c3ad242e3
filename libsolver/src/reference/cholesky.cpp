// CPU reference backend of potrf/potrs/posv: LAPACKE per matrix, one matrix per OpenMP thread.
//
// Real matrices up to a few dozen rows take the vector path first (cholesky_simd.hpp: several matrices
// per SIMD register); the rest, and everything with BATCHSOLVE_CPU_SIMD=off, run as follows.
// Column-major matrices (strided or pointer array) go to LAPACK in place with their ld; interleaved
// ones are gathered into a thread-local packed scratch, solved there and scattered back, touching
// only the referenced triangle of A.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/backends.hpp"
#include "access.hpp"
#include "cholesky_simd.hpp"
#include "../host/lapack.hpp"

namespace batchsolve::reference {

namespace {

// ---- LAPACKE, column-major, no NaN pre-check (the _work variants; NaN input is ours to report) ----
char uplo_char(Uplo uplo) { return uplo == Uplo::lower ? 'L' : 'U'; }

lapack_int potrf(Uplo u, int n, float* a, int lda) { return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo_char(u), n, a, lda); }
lapack_int potrf(Uplo u, int n, double* a, int lda) { return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo_char(u), n, a, lda); }
lapack_int potrf(Uplo u, int n, std::complex<float>* a, int lda) {
    return LAPACKE_cpotrf_work(LAPACK_COL_MAJOR, uplo_char(u), n, a, lda);
}
lapack_int potrf(Uplo u, int n, std::complex<double>* a, int lda) {
    return LAPACKE_zpotrf_work(LAPACK_COL_MAJOR, uplo_char(u), n, a, lda);
}

lapack_int potrs(Uplo u, int n, int nrhs, const float* a, int lda, float* b, int ldb) {
    return LAPACKE_spotrs_work(LAPACK_COL_MAJOR, uplo_char(u), n, nrhs, a, lda, b, ldb);
}
lapack_int potrs(Uplo u, int n, int nrhs, const double* a, int lda, double* b, int ldb) {
    return LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, uplo_char(u), n, nrhs, a, lda, b, ldb);
}
lapack_int potrs(Uplo u, int n, int nrhs, const std::complex<float>* a, int lda, std::complex<float>* b, int ldb) {
    return LAPACKE_cpotrs_work(LAPACK_COL_MAJOR, uplo_char(u), n, nrhs, a, lda, b, ldb);
}
lapack_int potrs(Uplo u, int n, int nrhs, const std::complex<double>* a, int lda, std::complex<double>* b, int ldb) {
    return LAPACKE_zpotrs_work(LAPACK_COL_MAJOR, uplo_char(u), n, nrhs, a, lda, b, ldb);
}

// A LAPACK routine returned a negative info: an argument we passed was wrong, i.e. a bug here.
// Recorded inside the parallel loop (exceptions must not leave an OpenMP region) and thrown after.
class InternalError {
public:
    void record(lapack_int code) {
        int expected = 0;
        code_.compare_exchange_strong(expected, int(code));
    }
    void throw_if_any(const char* routine, const char* lapack_call) const {
        const int code = code_.load();
        if (code != 0)
            throw Error(std::string(routine) + ": internal error: " + lapack_call + " returned info = " +
                        std::to_string(code) + " (an invalid argument was passed to LAPACK)");
    }

private:
    std::atomic<int> code_{0};
};

// OpenBLAS 0.3.21's xPOTRF tests only `ajj <= 0`, so a NaN pivot goes unreported (newer LAPACK also
// tests isnan), and an Inf on the diagonal passes as a pivot of Inf (sqrt(Inf) = Inf; the column below
// becomes 0): info 0 and an Inf in the factor. A non-finite entry of the referenced triangle always
// leaves a non-finite or non-positive pivot at its column or later (an Inf below the diagonal drives
// the later pivot to -Inf or NaN), so the first non-finite diagonal entry of the factor among the
// columns LAPACK completed is the 1-based column to report (docs/input-checks.md, info > 0).
template <class T>
int first_nonfinite_pivot(const T* a, int lda, int n, int lapack_info) {
    const int done = lapack_info > 0 ? lapack_info - 1 : n;
    for (int j = 0; j < done; ++j)
        if (!std::isfinite(std::real(a[std::int64_t(j) * lda + j]))) return j + 1;
    return lapack_info;
}

// Factors one matrix held column-major at `a` with leading dimension lda; returns its info.
template <class T>
int factor_one(Uplo uplo, int n, T* a, int lda, InternalError& internal) {
    const lapack_int code = potrf(uplo, n, a, lda);
    if (code < 0) {
        internal.record(code);
        return 0;
    }
    return first_nonfinite_pivot(a, lda, n, int(code));
}

template <class T>
void solve_one(Uplo uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb, InternalError& internal) {
    const lapack_int code = potrs(uplo, n, nrhs, a, lda, b, ldb);
    if (code < 0) internal.record(code);
}

// Matrix k of a batch as LAPACK wants it: in place when column-major, else a packed copy in a
// per-thread scratch (only the `uplo` triangle for A) that put_back_*() returns to the batch.
// U is const for an operand that is only read (the factor in potrs).
template <class U>
class LapackOperand {
public:
    // Loads the `uplo` triangle of A (the other half must be neither read nor written).
    void load_triangle(const MatrixAccess<U>& m, Uplo uplo, int n) {
        if (bind(m, n, n)) copy_triangle(uplo, n, m, packed_access(scratch_.data(), n));
    }
    void load_full(const MatrixAccess<U>& m, int rows, int cols) {
        if (bind(m, rows, cols)) copy_full(rows, cols, m, packed_access(scratch_.data(), rows));
    }
    void put_back_triangle(const MatrixAccess<U>& m, Uplo uplo, int n) const {
        if (copied_) copy_triangle(uplo, n, packed_access(scratch_.data(), n), m);
    }
    void put_back_full(const MatrixAccess<U>& m, int rows, int cols) const {
        if (copied_) copy_full(rows, cols, packed_access(scratch_.data(), rows), m);
    }
    U* data() const { return ptr_; }
    int ld() const { return ld_; }

private:
    // Points at m in place, or at the (resized) scratch; true when a copy is needed.
    bool bind(const MatrixAccess<U>& m, int rows, int cols) {
        copied_ = !m.is_column_major();
        if (copied_) {
            scratch_.resize(std::size_t(rows) * cols);
            ptr_ = scratch_.data(), ld_ = rows;
        } else {
            ptr_ = m.ptr, ld_ = int(m.col_step);
        }
        return copied_;
    }
    std::vector<std::remove_const_t<U>> scratch_;
    U* ptr_ = nullptr;
    int ld_ = 0;
    bool copied_ = false;
};

}  // namespace

// The loops below give each thread one contiguous range of matrices (schedule(static)): the
// matrices of a batch cost the same, and with one matrix at a time (schedule(dynamic)) the threads
// wrote neighbouring info entries and matrices and took turns at the shared counter: 16 threads of
// the GPU host factored 16384 matrices of n = 8 (s) in 19 ms, slower than 2 threads of a CI machine
// (3.6 ms; 2.8 ms with the static schedule).
template <class T>
BATCHSOLVE_CHOLESKY_POTRF(T) {
    host::single_threaded_blas();
    const int n = a.rows;
    if (n == 0) {
        std::fill(info, info + a.count, 0);
        return;
    }
    if (simd::potrf(uplo, a, info)) return;
    InternalError internal;
#pragma omp parallel
    {
        LapackOperand<T> fa;
#pragma omp for schedule(static)
        for (int k = 0; k < a.count; ++k) {
            const MatrixAccess<T> ma = matrix_access(a, k);
            fa.load_triangle(ma, uplo, n);
            info[k] = factor_one(uplo, n, fa.data(), fa.ld(), internal);
            fa.put_back_triangle(ma, uplo, n);
        }
    }
    internal.throw_if_any("potrf_batched", "LAPACKE_?potrf_work");
}

template <class T>
BATCHSOLVE_CHOLESKY_POTRS(T) {
    host::single_threaded_blas();
    const int n = a.rows, nrhs = b.cols;
    if (n == 0 || nrhs == 0) return;
    if (simd::potrs(uplo, a, b)) return;
    InternalError internal;
#pragma omp parallel
    {
        LapackOperand<const T> fa;  // the factor is only read: never put back
        LapackOperand<T> fb;
#pragma omp for schedule(static)
        for (int k = 0; k < a.count; ++k) {
            fa.load_triangle(matrix_access(a, k), uplo, n);
            const MatrixAccess<T> mb = matrix_access(b, k);
            fb.load_full(mb, n, nrhs);
            solve_one<T>(uplo, n, nrhs, fa.data(), fa.ld(), fb.data(), fb.ld(), internal);
            fb.put_back_full(mb, n, nrhs);
        }
    }
    internal.throw_if_any("potrs_batched", "LAPACKE_?potrs_work");
}

template <class T>
BATCHSOLVE_CHOLESKY_POSV(T) {
    host::single_threaded_blas();
    const int n = a.rows, nrhs = b.cols;
    if (n == 0) {
        std::fill(info, info + a.count, 0);
        return;
    }
    if (simd::posv(uplo, a, b, info)) return;
    InternalError internal;
#pragma omp parallel
    {
        LapackOperand<T> fa, fb;
#pragma omp for schedule(static)
        for (int k = 0; k < a.count; ++k) {
            const MatrixAccess<T> ma = matrix_access(a, k);
            fa.load_triangle(ma, uplo, n);
            info[k] = factor_one(uplo, n, fa.data(), fa.ld(), internal);
            fa.put_back_triangle(ma, uplo, n);
            // B of a matrix that failed to factor is left as it was, like LAPACK's xPOSV.
            if (info[k] != 0 || nrhs == 0) continue;
            const MatrixAccess<T> mb = matrix_access(b, k);
            fb.load_full(mb, n, nrhs);
            solve_one<T>(uplo, n, nrhs, fa.data(), fa.ld(), fb.data(), fb.ld(), internal);
            fb.put_back_full(mb, n, nrhs);
        }
    }
    internal.throw_if_any("posv_batched", "LAPACKE_?potrf_work / ?potrs_work");
}

int thread_count() { return omp_get_max_threads(); }

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_CHOLESKY_ROUTINES)

}  // namespace batchsolve::reference
