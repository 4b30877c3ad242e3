// The primitives of the mixed-precision refinement (core/refinement.hpp) that each backend
// implements once for every solver that uses it: precision conversions of vectors, the corrections,
// the working-precision residual b - A x and |A||x| of a symmetric (or complex symmetric, or
// Hermitian) A stored in one triangle, and the norms of the stopping test and the backward error.
// src/reference/refinement.cpp implements them on the CPU, src/cuda/refinement.cu on the GPU,
// src/stub/refinement_stub.cpp throws NotCompiled in a CPU-only build. Pointers are in the backend's
// memory; every routine runs on the context's stream. GMRES-based refinement adds a product with A,
// a dense GEMV and y = alpha x + beta y.
#pragma once

#include "batchsolve/context.hpp"
#include "batchsolve/ldlt.hpp"  // Symmetry
#include "batchsolve/types.hpp"
#include "declare.hpp"

// dst (rows_padded x cols) = src rounded to Lo, rows beyond `rows` zero; *overflow set to 1 (never
// cleared) when an entry is not finite in Lo.
#define BATCHSOLVE_REFINEMENT_CONVERT_DOWN(Hi, Lo)                                                                 \
    void convert_down(int rows, int rows_padded, int cols, const Hi* src, int lds, Lo* dst, int ldd, int* overflow, \
                      Context& ctx)
// x += d.
#define BATCHSOLVE_REFINEMENT_ADD_CORRECTION(Hi, Lo) \
    void add_correction(int rows, int cols, const Lo* d, int ldd, Hi* x, int ldx, Context& ctx)
// res = b - A x, A from its uplo triangle: symmetric (A^T = A) or, complex Hermitian (A^H = A, the
// imaginary parts of the diagonal read as zero). For real data the two are the same.
#define BATCHSOLVE_REFINEMENT_RESIDUAL(T)                                                                          \
    void residual(Uplo uplo, Symmetry s, int n, int nrhs, const T* a, int lda, const T* x, int ldx, const T* b, \
                  int ldb, T* res, int ldr, Context& ctx)
// sums[i] = sum_k |a_ik| |x_k| for the full matrix from its uplo triangle (x == nullptr: all ones,
// the row sums, whose maximum is ||A||_inf).
#define BATCHSOLVE_REFINEMENT_ABS_TIMES(T) \
    void abs_times(Uplo uplo, int n, const T* a, int lda, const T* x, real_t<T>* sums, Context& ctx)
// out[j] = max_i |x_ij| (out: cols reals; NaN when a column holds one).
#define BATCHSOLVE_REFINEMENT_COLUMN_MAX_ABS(T) \
    void column_max_abs(int rows, int cols, const T* x, int ldx, real_t<T>* out, Context& ctx)
// out = max_i |res_i| / (s_i + |b_i|) for one right-hand side (0/0 counts as 0).
#define BATCHSOLVE_REFINEMENT_COMPONENTWISE_RATIO(T) \
    void componentwise_ratio(int n, const T* res, const real_t<T>* s, const T* b, real_t<T>* out, Context& ctx)
// out = max_i v_i (real types; NaN when one is).
#define BATCHSOLVE_REFINEMENT_MAX_OF(T) void max_of(int n, const T* v, T* out, Context& ctx)
#define BATCHSOLVE_REFINEMENT_COPY_MATRIX(T) \
    void copy_matrix(int rows, int cols, const T* src, int lds, T* dst, int ldd, Context& ctx)
#define BATCHSOLVE_REFINEMENT_FILL_NAN(T) void fill_nan(int rows, int cols, T* x, int ldx, Context& ctx)
// dst = src widened to Hi (rows x cols).
#define BATCHSOLVE_REFINEMENT_CONVERT_UP(Hi, Lo) \
    void convert_up(int rows, int cols, const Lo* src, int lds, Hi* dst, int ldd, Context& ctx)
// y = A x for one vector, A from its uplo triangle as in residual.
#define BATCHSOLVE_REFINEMENT_PRODUCT(T)                                                                    \
    void symmetric_product(Uplo uplo, Symmetry s, int n, const T* a, int lda, const T* x, T* y, Context& ctx)
// y = alpha op(V) x + beta y, V rows x cols (ldv), op the identity or (adjoint) the conjugate
// transpose; beta == 0 overwrites y (NaN in y does not survive). GMRES's orthogonalisation.
#define BATCHSOLVE_REFINEMENT_GEMV(T)                                                                       \
    void dense_gemv(bool adjoint, int rows, int cols, T alpha, const T* v, int ldv, const T* x, T beta, T* y, \
                    Context& ctx)
// y = alpha x + beta y (n entries); x may be null when alpha == 0; beta == 0 overwrites y.
#define BATCHSOLVE_REFINEMENT_SCALE_ADD(T) void scale_add(int n, T alpha, const T* x, T beta, T* y, Context& ctx)
// A fused classical pass for one right-hand side (core/refinement.hpp), in two calls after M^-1:
// fused_product: acc += A (x + Hi(d)) from the uplo triangle as in residual (acc zero on entry), x
// itself not written; status[0..2] zeroed. `strip`: the CUDA kernel's tile rows of 32 per block.
#define BATCHSOLVE_REFINEMENT_FUSED_PRODUCT(Hi, Lo)                                                            \
    void fused_product(Uplo uplo, Symmetry s, int n, const Hi* a, int lda, const Hi* x, const Lo* d, Hi* acc, \
                       real_t<Hi>* status, int strip, Context& ctx)
// fused_finish: x += Hi(d) (the same sums fused_product formed), r = b - acc, acc = 0, d = r rounded to
// Lo; status[0] = max |r_i|, status[1] = max |x_i| (NaN when one is), status[2] = 1 when an entry of
// the new d is not finite in Lo (else left 0).
#define BATCHSOLVE_REFINEMENT_FUSED_FINISH(Hi, Lo)                                                              \
    void fused_finish(int n, const Hi* b, Hi* acc, Hi* x, Lo* d, Hi* r, real_t<Hi>* status, Context& ctx)

#define BATCHSOLVE_REFINEMENT_ROUTINES(ROUTINE)                                              \
    ROUTINE(MIXED_PAIRS, BATCHSOLVE_REFINEMENT_CONVERT_DOWN, "mixed-precision refinement")     \
    ROUTINE(MIXED_PAIRS, BATCHSOLVE_REFINEMENT_ADD_CORRECTION, "mixed-precision refinement")   \
    ROUTINE(PRECISIONS, BATCHSOLVE_REFINEMENT_RESIDUAL, "mixed-precision refinement")          \
    ROUTINE(PRECISIONS, BATCHSOLVE_REFINEMENT_ABS_TIMES, "mixed-precision refinement")         \
    ROUTINE(PRECISIONS, BATCHSOLVE_REFINEMENT_COLUMN_MAX_ABS, "mixed-precision refinement")    \
    ROUTINE(PRECISIONS, BATCHSOLVE_REFINEMENT_COMPONENTWISE_RATIO, "mixed-precision refinement") \
    ROUTINE(REAL_PRECISIONS, BATCHSOLVE_REFINEMENT_MAX_OF, "mixed-precision refinement")       \
    ROUTINE(PRECISIONS, BATCHSOLVE_REFINEMENT_COPY_MATRIX, "mixed-precision refinement")       \
    ROUTINE(PRECISIONS, BATCHSOLVE_REFINEMENT_FILL_NAN, "mixed-precision refinement")          \
    ROUTINE(MIXED_PAIRS, BATCHSOLVE_REFINEMENT_CONVERT_UP, "mixed-precision refinement")       \
    ROUTINE(PRECISIONS, BATCHSOLVE_REFINEMENT_PRODUCT, "mixed-precision refinement")           \
    ROUTINE(PRECISIONS, BATCHSOLVE_REFINEMENT_GEMV, "mixed-precision refinement")              \
    ROUTINE(PRECISIONS, BATCHSOLVE_REFINEMENT_SCALE_ADD, "mixed-precision refinement")         \
    ROUTINE(MIXED_PAIRS, BATCHSOLVE_REFINEMENT_FUSED_PRODUCT, "mixed-precision refinement")    \
    ROUTINE(MIXED_PAIRS, BATCHSOLVE_REFINEMENT_FUSED_FINISH, "mixed-precision refinement")
BATCHSOLVE_DECLARE_FAMILY(BATCHSOLVE_REFINEMENT_ROUTINES)
