// The CPU reference backend of the variable-size BLAS-3 routines: OpenMP over the problems, one BLAS
// call per problem on one thread (MAGMA's testers' fair CPU baseline), the per-problem checks, and the
// internal GEMM entry's extended forms (symmetric operands, one triangle of C) as plain loops.
#include <omp.h>

#include <algorithm>
#include <complex>

#include "../core/blas3_check.hpp"
#include "../host/lapack.hpp"

namespace batchsolve::reference {

using blas3_detail::effective_size;
using blas3_detail::GemmExtras;
using blas3_detail::Operand;
using blas3_detail::Part;
using blas3_detail::VSize;

namespace {

CBLAS_TRANSPOSE cblas_op(Op op) {
    return op == Op::no_trans ? CblasNoTrans : op == Op::trans ? CblasTrans : CblasConjTrans;
}
CBLAS_UPLO cblas_uplo(Uplo u) { return u == Uplo::lower ? CblasLower : CblasUpper; }
CBLAS_SIDE cblas_side(Side s) { return s == Side::left ? CblasLeft : CblasRight; }

// ---- one BLAS call per precision ------------------------------------------------------------------

void gemm(Op ta, Op tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float beta,
          float* c, int ldc) {
    cblas_sgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm(Op ta, Op tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
          double beta, double* c, int ldc) {
    cblas_dgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm(Op ta, Op tb, int m, int n, int k, std::complex<float> alpha, const std::complex<float>* a, int lda,
          const std::complex<float>* b, int ldb, std::complex<float> beta, std::complex<float>* c, int ldc) {
    cblas_cgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
void gemm(Op ta, Op tb, int m, int n, int k, std::complex<double> alpha, const std::complex<double>* a, int lda,
          const std::complex<double>* b, int ldb, std::complex<double> beta, std::complex<double>* c, int ldc) {
    cblas_zgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

// SYRK (hermitian false) or HERK; real data has no HERK (it is SYRK).
void rank_k(bool, Uplo u, Op t, int n, int k, float alpha, const float* a, int lda, float beta, float* c, int ldc) {
    cblas_ssyrk(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, alpha, a, lda, beta, c, ldc);
}
void rank_k(bool, Uplo u, Op t, int n, int k, double alpha, const double* a, int lda, double beta, double* c, int ldc) {
    cblas_dsyrk(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, alpha, a, lda, beta, c, ldc);
}
void rank_k(bool herm, Uplo u, Op t, int n, int k, std::complex<float> alpha, const std::complex<float>* a, int lda,
            std::complex<float> beta, std::complex<float>* c, int ldc) {
    if (herm)
        cblas_cherk(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, alpha.real(), a, lda, beta.real(), c, ldc);
    else
        cblas_csyrk(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, &alpha, a, lda, &beta, c, ldc);
}
void rank_k(bool herm, Uplo u, Op t, int n, int k, std::complex<double> alpha, const std::complex<double>* a, int lda,
            std::complex<double> beta, std::complex<double>* c, int ldc) {
    if (herm)
        cblas_zherk(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, alpha.real(), a, lda, beta.real(), c, ldc);
    else
        cblas_zsyrk(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, &alpha, a, lda, &beta, c, ldc);
}

void rank_2k(bool, Uplo u, Op t, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float beta,
             float* c, int ldc) {
    cblas_ssyr2k(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void rank_2k(bool, Uplo u, Op t, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
             double beta, double* c, int ldc) {
    cblas_dsyr2k(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void rank_2k(bool herm, Uplo u, Op t, int n, int k, std::complex<float> alpha, const std::complex<float>* a, int lda,
             const std::complex<float>* b, int ldb, std::complex<float> beta, std::complex<float>* c, int ldc) {
    if (herm)
        cblas_cher2k(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, &alpha, a, lda, b, ldb, beta.real(), c, ldc);
    else
        cblas_csyr2k(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
void rank_2k(bool herm, Uplo u, Op t, int n, int k, std::complex<double> alpha, const std::complex<double>* a, int lda,
             const std::complex<double>* b, int ldb, std::complex<double> beta, std::complex<double>* c, int ldc) {
    if (herm)
        cblas_zher2k(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, &alpha, a, lda, b, ldb, beta.real(), c, ldc);
    else
        cblas_zsyr2k(CblasColMajor, cblas_uplo(u), cblas_op(t), n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

void symmetric_mm(bool, Side s, Uplo u, int m, int n, float alpha, const float* a, int lda, const float* b, int ldb,
                  float beta, float* c, int ldc) {
    cblas_ssymm(CblasColMajor, cblas_side(s), cblas_uplo(u), m, n, alpha, a, lda, b, ldb, beta, c, ldc);
}
void symmetric_mm(bool, Side s, Uplo u, int m, int n, double alpha, const double* a, int lda, const double* b, int ldb,
                  double beta, double* c, int ldc) {
    cblas_dsymm(CblasColMajor, cblas_side(s), cblas_uplo(u), m, n, alpha, a, lda, b, ldb, beta, c, ldc);
}
void symmetric_mm(bool herm, Side s, Uplo u, int m, int n, std::complex<float> alpha, const std::complex<float>* a,
                  int lda, const std::complex<float>* b, int ldb, std::complex<float> beta, std::complex<float>* c,
                  int ldc) {
    (herm ? cblas_chemm : cblas_csymm)(CblasColMajor, cblas_side(s), cblas_uplo(u), m, n, &alpha, a, lda, b, ldb,
                                       &beta, c, ldc);
}
void symmetric_mm(bool herm, Side s, Uplo u, int m, int n, std::complex<double> alpha, const std::complex<double>* a,
                  int lda, const std::complex<double>* b, int ldb, std::complex<double> beta, std::complex<double>* c,
                  int ldc) {
    (herm ? cblas_zhemm : cblas_zsymm)(CblasColMajor, cblas_side(s), cblas_uplo(u), m, n, &alpha, a, lda, b, ldb,
                                       &beta, c, ldc);
}

// ---- the extended GEMM forms, element by element ------------------------------------------------------

template <class T> T conj_of(T v) {
    if constexpr (is_complex_v<T>) return std::conj(v);
    else return v;
}
template <class T> T real_of(T v) {
    if constexpr (is_complex_v<T>) return T(v.real(), 0);
    else return v;
}

// Element (r, c) of the operand as the GEMM reads it (blas3_detail::Operand).
template <class T>
T operand_element(Operand op, const T* x, int ld, int r, int c) {
    auto at = [&](int i, int j) { return x[std::size_t(j) * ld + i]; };
    switch (op) {
        case Operand::no_trans: return at(r, c);
        case Operand::trans: return at(c, r);
        case Operand::conj_trans: return conj_of(at(c, r));
        case Operand::symmetric_lower: return r >= c ? at(r, c) : at(c, r);
        case Operand::symmetric_upper: return r <= c ? at(r, c) : at(c, r);
        case Operand::hermitian_lower: return r > c ? at(r, c) : r < c ? conj_of(at(c, r)) : real_of(at(r, r));
        case Operand::hermitian_upper: return r < c ? at(r, c) : r > c ? conj_of(at(c, r)) : real_of(at(r, r));
    }
    return T(0);
}

template <class T>
void gemm_by_elements(Operand op_a, Operand op_b, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb,
                      T beta, T* c, int ldc, Part part, bool real_diagonal) {
    for (int j = 0; j < n; ++j) {
        const int first = part == Part::lower ? std::min(j, m) : 0;
        const int last = part == Part::upper ? std::min(j + 1, m) : m;
        for (int i = first; i < last; ++i) {
            T sum(0);
            if (alpha != T(0))
                for (int p = 0; p < k; ++p) sum += operand_element(op_a, a, lda, i, p) * operand_element(op_b, b, ldb, p, j);
            T& cij = c[std::size_t(j) * ldc + i];
            cij = alpha * sum + (beta == T(0) ? T(0) : beta * cij);
            if (real_diagonal && i == j) cij = real_of(cij);
        }
    }
}

// BLAS's HERK/HER2K return early for beta = 1 when k = 0 or alpha = 0, leaving the imaginary parts of
// C's diagonal as they were; vbatched_blas.hpp promises them zero in every case (as the GPU does).
template <class T>
void zero_diagonal_imaginary(int n, T* c, int ldc) {
    if constexpr (is_complex_v<T>)
        for (int j = 0; j < n; ++j) c[std::size_t(j) * ldc + j].imag(0);
}

bool plain(Operand op) { return op == Operand::no_trans || op == Operand::trans || op == Operand::conj_trans; }
Op op_of(Operand op) { return op == Operand::no_trans ? Op::no_trans : op == Operand::trans ? Op::trans : Op::conj_trans; }

}  // namespace

void check_vbatched(const blas3_detail::ProblemChecks& checks, int batch, int* info, blas3_detail::SizeSummary* summary,
                    Context&) {
    blas3_detail::SizeSummary r;
    for (int i = 0; i < batch; ++i) {
        int sizes[3];
        info[i] = blas3_detail::check_problem(checks, i, sizes);
        if (info[i] != 0) {
            ++r.invalid;
            continue;
        }
        for (int s = 0; s < 3; ++s) r.max[s] = std::max(r.max[s], sizes[s]), r.min[s] = std::min(r.min[s], sizes[s]);
    }
    if (summary) *summary = r;
}

template <class T>
BATCHSOLVE_BLAS3_GEMM(T) {
    host::single_threaded_blas();
    const blas3_detail::Offsets& o = extras.offsets;
#pragma omp parallel for schedule(dynamic, 16)
    for (int i = 0; i < batch; ++i) {
        if (extras.skip != nullptr && extras.skip[i] != 0) continue;
        const int mi = effective_size(m, i), ni = effective_size(n, i);
        const int ki = alpha == T(0) ? 0 : effective_size(k, i);  // BLAS: alpha = 0 reads neither A nor B
        if (mi == 0 || ni == 0) continue;
        T* ci = c[i] + o.c_row + std::size_t(o.c_col) * ldc[i];
        const T* ai = ki > 0 ? a[i] + o.a_row + std::size_t(o.a_col) * lda[i] : nullptr;
        const T* bi = ki > 0 ? b[i] + o.b_row + std::size_t(o.b_col) * ldb[i] : nullptr;
        if (plain(op_a) && plain(op_b) && extras.part == Part::full && !extras.real_diagonal && ki > 0)
            gemm(op_of(op_a), op_of(op_b), mi, ni, ki, alpha, ai, lda[i], bi, ldb[i], beta, ci, ldc[i]);
        else
            gemm_by_elements(op_a, op_b, mi, ni, ki, alpha, ai, lda[i], bi, ldb[i], beta, ci, ldc[i], extras.part,
                             extras.real_diagonal);
    }
}

template <class T>
BATCHSOLVE_BLAS3_RANK_K(T) {
    host::single_threaded_blas();
#pragma omp parallel for schedule(dynamic, 16)
    for (int i = 0; i < batch; ++i) {
        if ((skip != nullptr && skip[i] != 0) || n[i] == 0) continue;
        if (b == nullptr)
            rank_k(hermitian, uplo, trans, n[i], k[i], alpha, a[i], lda[i], beta, c[i], ldc[i]);
        else
            rank_2k(hermitian, uplo, trans, n[i], k[i], alpha, a[i], lda[i], b[i], ldb[i], beta, c[i], ldc[i]);
        if (hermitian) zero_diagonal_imaginary(n[i], c[i], ldc[i]);
    }
}

template <class T>
BATCHSOLVE_BLAS3_SYMMETRIC_MM(T) {
    host::single_threaded_blas();
#pragma omp parallel for schedule(dynamic, 16)
    for (int i = 0; i < batch; ++i) {
        if ((skip != nullptr && skip[i] != 0) || m[i] == 0 || n[i] == 0) continue;
        symmetric_mm(hermitian, side, uplo, m[i], n[i], alpha, a[i], lda[i], b[i], ldb[i], beta, c[i], ldc[i]);
    }
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_BLAS3_ROUTINES)

}  // namespace batchsolve::reference
