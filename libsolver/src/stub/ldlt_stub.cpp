// Stands in for the CUDA backend of the symmetric indefinite solvers in a CPU-only build: every
// primitive throws NotCompiled naming the routine.
#include "../core/ldlt_backend.hpp"

namespace batchsolve::cuda_backend {

namespace {
[[noreturn]] void not_compiled(const char* routine) { throw NotCompiled(routine, "cuda"); }
}  // namespace

template <class T> void ldlt_factor(Symmetry, int, T*, int, int*, void*, bool, Context&) { not_compiled("sytrf_nopiv"); }
template <class T> void ldlt_solve(Symmetry, int, int, const T*, int, T*, int, Context&) { not_compiled("sytrs_nopiv"); }
template <class Hi, class Lo> void expand_lower(Symmetry, int, const Hi*, int, int, Lo*, int, double, int*, Context&) { not_compiled("sysv_mixed"); }
template <class T> void rbt_matrix(int, int, const real_t<T>*, T*, int, Context&) { not_compiled("sysv_mixed"); }
template <class T> void rbt_vectors(bool, int, int, int, const real_t<T>*, T*, int, Context&) { not_compiled("sysv_mixed"); }
template <class Hi, class Lo> void convert_down(int, int, int, const Hi*, int, Lo*, int, int*, Context&) { not_compiled("sysv_mixed"); }
template <class Hi, class Lo> void add_correction(int, int, const Lo*, int, Hi*, int, Context&) { not_compiled("sysv_mixed"); }
template <class T> void residual(Symmetry, int, int, const T*, int, const T*, int, const T*, int, T*, int, Context&) { not_compiled("sysv_mixed"); }
template <class T> void column_max_abs(int, int, const T*, int, real_t<T>*, Context&) { not_compiled("sysv_mixed"); }
template <class T> void abs_matrix_times(int, const T*, int, const T*, real_t<T>*, Context&) { not_compiled("sysv_mixed"); }
template <class T> void componentwise_ratio(int, const T*, const real_t<T>*, const T*, real_t<T>*, Context&) { not_compiled("sysv_mixed"); }
template <class T> void max_of(int, const T*, T*, Context&) { not_compiled("sysv_mixed"); }
template <class T> void copy_matrix(int, int, const T*, int, T*, int, Context&) { not_compiled("sysv_mixed"); }
template <class T> void fill_nan(int, int, T*, int, Context&) { not_compiled("sysv_mixed"); }
template <class T> std::size_t pivoted_workspace_bytes(Symmetry, int, int, Context&) { not_compiled("sysv_mixed_workspace_size"); }
template <class T> SolvePath pivoted_solve(Symmetry, int, int, const T*, int, T*, int, void*, int*, Context&) { not_compiled("sysv_mixed"); }

#define INSTANTIATE(T)                                                                                       \
    template void ldlt_factor<T>(Symmetry, int, T*, int, int*, void*, bool, Context&);                             \
    template void ldlt_solve<T>(Symmetry, int, int, const T*, int, T*, int, Context&);                       \
    template void rbt_matrix<T>(int, int, const real_t<T>*, T*, int, Context&);                              \
    template void rbt_vectors<T>(bool, int, int, int, const real_t<T>*, T*, int, Context&);                  \
    template void residual<T>(Symmetry, int, int, const T*, int, const T*, int, const T*, int, T*, int, Context&); \
    template void column_max_abs<T>(int, int, const T*, int, real_t<T>*, Context&);                          \
    template void abs_matrix_times<T>(int, const T*, int, const T*, real_t<T>*, Context&);                   \
    template void componentwise_ratio<T>(int, const T*, const real_t<T>*, const T*, real_t<T>*, Context&);   \
    template void copy_matrix<T>(int, int, const T*, int, T*, int, Context&);                                \
    template void fill_nan<T>(int, int, T*, int, Context&);                                                  \
    template std::size_t pivoted_workspace_bytes<T>(Symmetry, int, int, Context&);                           \
    template SolvePath pivoted_solve<T>(Symmetry, int, int, const T*, int, T*, int, void*, int*, Context&);
BATCHSOLVE_LDLT_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

template void max_of<float>(int, const float*, float*, Context&);
template void max_of<double>(int, const double*, double*, Context&);

#define INSTANTIATE_PAIR(Hi, Lo)                                                                          \
    template void expand_lower<Hi, Lo>(Symmetry, int, const Hi*, int, int, Lo*, int, double, int*, Context&);     \
    template void convert_down<Hi, Lo>(int, int, int, const Hi*, int, Lo*, int, int*, Context&);          \
    template void add_correction<Hi, Lo>(int, int, const Lo*, int, Hi*, int, Context&);
INSTANTIATE_PAIR(double, float)
INSTANTIATE_PAIR(std::complex<double>, std::complex<float>)
#undef INSTANTIATE_PAIR

}  // namespace batchsolve::cuda_backend
