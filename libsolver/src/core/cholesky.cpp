// potrf/potrs/posv, plain and with an explicit kernel configuration (tuning.hpp): argument checks,
// then dispatch to the backend of the context. The CPU backend has no kernel configurations.
#include "batchsolve/cholesky.hpp"

#include "batchsolve/tuning.hpp"
#include "backends.hpp"
#include "checks.hpp"

namespace batchsolve {

namespace {

template <class T>
void potrf_dispatch(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig* config, Context& ctx) {
    constexpr const char* routine = "potrf_batched";
    checks::check_view(a, routine, "a");
    checks::check_square(a, routine, "a");
    checks::require(a.count == 0 || info != nullptr, routine, "info", "non-null");
    if (a.count == 0) return;
    BATCHSOLVE_ON_BACKEND(ctx, potrf_batched(uplo, a, info, config, ctx));
}

template <class T>
void potrs_dispatch(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, const CholeskyConfig* config,
                    Context& ctx) {
    constexpr const char* routine = "potrs_batched";
    checks::check_view(a, routine, "a");
    checks::check_square(a, routine, "a");
    checks::check_view(b, routine, "b");
    checks::check_rhs(a, b, routine);
    if (a.count == 0 || a.rows == 0 || b.cols == 0) return;
    BATCHSOLVE_ON_BACKEND(ctx, potrs_batched(uplo, a, b, config, ctx));
}

template <class T>
void posv_dispatch(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, const CholeskyConfig* config,
                   Context& ctx) {
    constexpr const char* routine = "posv_batched";
    checks::check_view(a, routine, "a");
    checks::check_square(a, routine, "a");
    checks::check_view(b, routine, "b");
    checks::check_rhs(a, b, routine);
    checks::require(a.count == 0 || info != nullptr, routine, "info", "non-null");
    if (a.count == 0) return;
    BATCHSOLVE_ON_BACKEND(ctx, posv_batched(uplo, a, b, info, config, ctx));
}

}  // namespace

template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, Context& ctx) {
    potrf_dispatch(uplo, a, info, nullptr, ctx);
}
template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig& config, Context& ctx) {
    potrf_dispatch(uplo, a, info, &config, ctx);
}

template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, Context& ctx) {
    potrs_dispatch(uplo, a, b, nullptr, ctx);
}
template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, const CholeskyConfig& config,
                   Context& ctx) {
    potrs_dispatch(uplo, a, b, &config, ctx);
}

template <class T>
void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, Context& ctx) {
    posv_dispatch(uplo, a, b, info, nullptr, ctx);
}
template <class T>
void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, const CholeskyConfig& config,
                  Context& ctx) {
    posv_dispatch(uplo, a, b, info, &config, ctx);
}

namespace {

// Both prepare_kernel overloads: config == nullptr means the plain routines' choice.
template <class T>
KernelReport checked_prepare_kernel(const std::string& routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                                    const CholeskyConfig* config, Context& ctx) {
    constexpr const char* name = "prepare_kernel";
    checks::require(routine == "potrf" || routine == "potrs" || routine == "posv", name, "routine",
                    "one of potrf, potrs, posv (got '" + routine + "')");
    checks::require(shape.rows == shape.cols, name, "shape", "square matrices");
    checks::require(shape.rows >= 0 && shape.count >= 0 && nrhs >= 0, name, "shape", "non-negative sizes");
    if (ctx.backend() != Backend::cuda) {
        KernelReport report;
        report.note = "the CPU backend runs LAPACK, no generated kernels";
        return report;
    }
    return cuda_backend::prepare_kernel(routine, uplo, shape, nrhs, config, ctx);
}

}  // namespace

template <class T>
KernelReport prepare_kernel(const std::string& routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                            const CholeskyConfig& config, Context& ctx) {
    return checked_prepare_kernel(routine, uplo, shape, nrhs, &config, ctx);
}

template <class T>
KernelReport prepare_kernel(const std::string& routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                            Context& ctx) {
    return checked_prepare_kernel(routine, uplo, shape, nrhs, nullptr, ctx);
}

template <class T>
KernelReport prepare_kernel(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                            const CholeskyConfig& config, Context& ctx) {
    return checked_prepare_kernel(to_string(routine), uplo, shape, nrhs, &config, ctx);
}

template <class T>
KernelReport prepare_kernel(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs, Context& ctx) {
    return checked_prepare_kernel(to_string(routine), uplo, shape, nrhs, nullptr, ctx);
}

namespace {

// The sizes of a call's shape (as prepare_kernel: its pointers are not read).
template <class T>
void check_shape(const char* name, const BatchView<const T>& shape, int nrhs) {
    checks::require(shape.rows == shape.cols, name, "shape", "square matrices");
    checks::require(shape.rows >= 0 && shape.count >= 0, name, "shape", "non-negative sizes");
    checks::require(shape.layout != LayoutKind::chunked_interleaved || shape.chunk_size >= 1, name, "shape.chunk_size",
                    ">= 1 for the chunked layout");
    checks::require(nrhs >= 0, name, "nrhs", ">= 0");
}

}  // namespace

template <class T>
std::string config_problem(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                           const CholeskyConfig& config) {
    check_shape("config_problem", shape, nrhs);
    return cuda_backend::config_problem(routine, uplo, shape, nrhs, config);
}

template <class T>
void check_config(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs, const CholeskyConfig& config) {
    const std::string problem = config_problem(routine, uplo, shape, nrhs, config);
    if (problem.empty()) return;
    const std::size_t colon = problem.find(':');
    const std::string field = problem.substr(0, colon);
    throw InvalidArgument("check_config", field == "n" ? "shape.rows" : field,
                          colon == std::string::npos ? problem : problem.substr(colon + 2));
}

template <class T>
std::size_t workspace_bytes(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs, Context& ctx) {
    check_shape("workspace_bytes", shape, nrhs);
    if (ctx.backend() != Backend::cuda) return 0;  // the CPU backend works in place
    return cuda_backend::workspace_bytes(routine, uplo, shape, nrhs, nullptr, ctx);
}

template <class T>
std::size_t workspace_bytes(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                            const CholeskyConfig& config, Context& ctx) {
    check_shape("workspace_bytes", shape, nrhs);
    if (ctx.backend() != Backend::cuda) return 0;
    return cuda_backend::workspace_bytes(routine, uplo, shape, nrhs, &config, ctx);
}

std::string to_string(const KernelCase& c) {
    return std::string(to_string(c.routine)) + " " + precision_letter(c.precision) + " " + to_string(c.layout) + " " +
           to_string(c.uplo) + " n=" + std::to_string(c.n) + " nrhs=" + std::to_string(c.nrhs) +
           " count=" + std::to_string(c.count) +
           (c.layout == LayoutKind::chunked_interleaved ? " chunk=" + std::to_string(c.chunk_size) : std::string());
}

namespace {
void check_warm_up_cases(const char* name, const std::vector<KernelCase>& cases, int threads) {
    checks::require(threads >= 1, name, "threads", ">= 1");
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const KernelCase& c = cases[i];
        const std::string which = "cases[" + std::to_string(i) + "]";
        checks::require(c.n >= 0 && c.nrhs >= 0 && c.count >= 1, name, which.c_str(), "n >= 0, nrhs >= 0, count >= 1");
        checks::require(c.layout != LayoutKind::chunked_interleaved || c.chunk_size >= 1, name,
                        (which + ".chunk_size").c_str(), ">= 1 for the chunked layout");
    }
}
}  // namespace

WarmUpReport warm_up(const std::vector<KernelCase>& cases, int threads, Context& ctx) {
    check_warm_up_cases("warm_up", cases, threads);
    if (ctx.backend() != Backend::cuda) {
        WarmUpReport report;
        report.cases = static_cast<int>(cases.size());
        report.without_kernels = report.cases;  // the CPU backend runs LAPACK
        return report;
    }
    return cuda_backend::warm_up(cases, threads, ctx);
}

WarmUpReport warm_up_for_arch(const std::vector<KernelCase>& cases, int arch, int threads) {
    check_warm_up_cases("warm_up_for_arch", cases, threads);
    checks::require(arch >= 10, "warm_up_for_arch", "arch", "a compute capability such as 90 (got " + std::to_string(arch) + ")");
    return cuda_backend::warm_up_for_arch(cases, arch, threads);
}

#define INSTANTIATE(T)                                                                                        \
    template KernelReport prepare_kernel<T>(Routine, Uplo, const BatchView<const T>&, int, const CholeskyConfig&, \
                                            Context&);                                                        \
    template KernelReport prepare_kernel<T>(Routine, Uplo, const BatchView<const T>&, int, Context&);         \
    template std::string config_problem<T>(Routine, Uplo, const BatchView<const T>&, int, const CholeskyConfig&); \
    template void check_config<T>(Routine, Uplo, const BatchView<const T>&, int, const CholeskyConfig&);      \
    template std::size_t workspace_bytes<T>(Routine, Uplo, const BatchView<const T>&, int, Context&);         \
    template std::size_t workspace_bytes<T>(Routine, Uplo, const BatchView<const T>&, int, const CholeskyConfig&, \
                                            Context&);                                                        \
    template void potrf_batched<T>(Uplo, const BatchView<T>&, int*, Context&);                                \
    template void potrf_batched<T>(Uplo, const BatchView<T>&, int*, const CholeskyConfig&, Context&);         \
    template void potrs_batched<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, Context&);          \
    template void potrs_batched<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, const CholeskyConfig&, \
                                   Context&);                                                                 \
    template void posv_batched<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, Context&);           \
    template void posv_batched<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, const CholeskyConfig&, \
                                  Context&);                                                                  \
    template KernelReport prepare_kernel<T>(const std::string&, Uplo, const BatchView<const T>&, int,        \
                                            const CholeskyConfig&, Context&);                                \
    template KernelReport prepare_kernel<T>(const std::string&, Uplo, const BatchView<const T>&, int, Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve
