// The primitives of the variable-size triangular routines (vbatched_triangular.hpp) that each backend
// implements: the per-problem argument check with the maxima, and TRMM, TRSM and POTRF at the
// _max_nocheck level. src/core/triangular.cpp checks whole-call arguments and builds the three entry
// levels on top of them; src/reference/triangular.cpp implements them on the CPU, src/cuda/triangular/
// on the GPU, and src/stub/triangular_stub.cpp throws NotCompiled in a CPU-only build. Every pointer is
// in the backend's memory.
#pragma once

#include <complex>
#include <cstddef>

#include "batchsolve/context.hpp"
#include "batchsolve/types.hpp"
#include "batchsolve/vbatched_triangular.hpp"
#include "declare.hpp"

namespace batchsolve::triangular_detail {

// What one call of the per-problem check reads: the routine's shape (TRMM/TRSM: side, m, n, A, lda,
// B, ldb; POTRF: n, A, lda) and the maxima a _max caller gave (-1: find them instead).
struct CheckSpec {
    bool potrf = false;
    Side side = Side::left;
    int given_max_m = -1;  // TRMM/TRSM m, POTRF n
    int given_max_n = -1;  // TRMM/TRSM n
};

// The TRSM size rule: the inversion-based algorithm for triangles of order >= inversion_from_order
// (automatic), or the one the configuration names.
inline bool inversion_chosen(int order, const TriangularConfig& config) {
    switch (config.trsm_algorithm) {
        case TrsmAlgorithm::inversion: return true;
        case TrsmAlgorithm::recursive: return false;
        case TrsmAlgorithm::automatic: break;
    }
    return order >= config.inversion_from_order;
}

// Elements of the inversion-based TRSM's workspace: every problem's diagonal blocks of the largest
// triangle, nb x nb each.
inline std::size_t inversion_workspace_elements(int order, int batch, const TriangularConfig& config) {
    const std::size_t nb = std::size_t(config.inversion_block);
    const std::size_t blocks = (std::size_t(order) + nb - 1) / nb;
    return blocks * nb * nb * std::size_t(batch);
}

// Largest valid sizes the check found (or the given ones).
struct Maxima {
    int m = 0;
    int n = 0;
};

}  // namespace batchsolve::triangular_detail

// One signature per routine (src/core/declare.hpp expands them into both backends' declarations,
// the CPU-only stand-ins and the instantiations over s, d, c, z).

// Per problem: info[i] = 0 or -p (vbatched_arg), m_run/n_run = the sizes to run (0 for an invalid
// problem, so that the _max_nocheck primitives skip it). POTRF uses m, a, lda only (b, ldb, n, n_run
// may be null). Returns the maxima over valid problems (spec.given_* when >= 0: then a size above it is
// invalid). The CUDA backend waits for the maxima only when it has to find them.
#define BATCHSOLVE_TRIANGULAR_CHECK(T)                                                                     \
    ::batchsolve::triangular_detail::Maxima check_vbatched(                                                \
        const ::batchsolve::triangular_detail::CheckSpec& spec, const int* m, const int* n, const T* const* a, \
        const int* lda, T* const* b, const int* ldb, int batch, int* info, int* m_run, int* n_run, Context& ctx)
#define BATCHSOLVE_TRIANGULAR_TRMM(T)                                                                      \
    void trmm_vbatched(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,         \
                       const T* const* a, const int* lda, T* const* b, const int* ldb, int max_m, int max_n, \
                       int batch, const TriangularConfig& config, Context& ctx)
#define BATCHSOLVE_TRIANGULAR_TRSM(T)                                                                      \
    void trsm_vbatched(Side side, Uplo uplo, Op op, Diag diag, const int* m, const int* n, T alpha,         \
                       const T* const* a, const int* lda, T* const* b, const int* ldb, int max_m, int max_n, \
                       int batch, const TriangularConfig& config, Context& ctx)
// reset_info: write 0 to every info first (nocheck level); else info holds the check's verdicts and
// only a failure k > 0 is written (problems with info != 0 have n = 0 and are skipped anyway).
#define BATCHSOLVE_TRIANGULAR_POTRF(T)                                                                     \
    void potrf_vbatched(Uplo uplo, const int* n, T* const* a, const int* lda, int max_n, int batch, int* info, \
                        bool reset_info, const TriangularConfig& config, Context& ctx)

#define BATCHSOLVE_TRIANGULAR_ROUTINES(ROUTINE)                                  \
    ROUTINE(PRECISIONS, BATCHSOLVE_TRIANGULAR_CHECK, "trmm/trsm/potrf_vbatched") \
    ROUTINE(PRECISIONS, BATCHSOLVE_TRIANGULAR_TRMM, "trmm_vbatched")             \
    ROUTINE(PRECISIONS, BATCHSOLVE_TRIANGULAR_TRSM, "trsm_vbatched")             \
    ROUTINE(PRECISIONS, BATCHSOLVE_TRIANGULAR_POTRF, "potrf_vbatched")

BATCHSOLVE_DECLARE_FAMILY(BATCHSOLVE_TRIANGULAR_ROUTINES)
