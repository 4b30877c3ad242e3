// Batched Cholesky on the CUDA backend: picks the implementation for a call.
//
//   interleaved / chunked, n <= 128  -> run-time generated one-thread-per-matrix kernels (tuned/interleaved_*)
//   column-major / pointer array, n <= 128 -> run-time generated shared-memory kernels (tuned/column_major_*)
//   anything else                    -> cuSOLVER potrfBatched/potrsBatched behind LAPACK semantics
//
// The kernel configuration is the caller's (expert entry points of tuning.hpp), else the tuning
// table's entry for this GPU, routine, precision, layout family and n, else the kernels' own default.
#include "../core/backends.hpp"
#include "../core/tuning_table.hpp"
#include "cholesky_cusolver.hpp"
#include "resources.hpp"
#include "tuned/column_major_cholesky.hpp"
#include "tuned/interleaved_cholesky.hpp"

namespace batchsolve::cuda_backend {

namespace {

// Largest order the generated interleaved kernels take: one thread holds its tiles in registers,
// and beyond this the tiles no longer fit (the cuSOLVER path takes over).
constexpr int interleaved_max_n = 128;

template <class T>
CholeskyConfig resolve_config(const char* routine, const BatchView<T>& a, const CholeskyConfig* config, Context& ctx) {
    if (config != nullptr) return *config;
    const detail::CudaResources& r = detail::resources_of(ctx, routine);
    const int arch = r.cc_major_ * 10 + r.cc_minor_;
    if (auto tuned = tuning::lookup(routine, precision_v<T>, a.layout, a.rows, arch)) {
        CholeskyConfig c = *tuned;
        // A chunked entry was tuned for the chunk size it names; the user's view decides the layout.
        if (a.layout == LayoutKind::chunked_interleaved) c.chunk_size = a.chunk_size;
        else c.chunk_size = 0;
        return c;
    }
    return CholeskyConfig{};  // nb == 0: the kernels' default for n
}

template <class T>
bool use_interleaved_kernels(const BatchView<T>& a) {
    return a.is_interleaved() && a.rows <= interleaved_max_n;
}

}  // namespace

template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig* config, Context& ctx) {
    if (use_interleaved_kernels(a))
        return tuned::potrf_interleaved(uplo, a, info, resolve_config("potrf", a, config, ctx), ctx);
    if (tuned::column_major_supports(a.layout, a.rows))
        return tuned::potrf_column_major(uplo, a, info, resolve_config("potrf", a, config, ctx), ctx);
    cusolver_potrf_batched(uplo, a, info, ctx);
}

template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, const CholeskyConfig* config,
                   Context& ctx) {
    if (use_interleaved_kernels(a))
        return tuned::potrs_interleaved(uplo, a, b, resolve_config("potrs", a, config, ctx), ctx);
    if (tuned::column_major_supports(a.layout, a.rows) && !b.is_interleaved())
        return tuned::potrs_column_major(uplo, a, b, resolve_config("potrs", a, config, ctx), ctx);
    cusolver_potrs_batched(uplo, a, b, ctx);
}

template <class T>
void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, const CholeskyConfig* config,
                  Context& ctx) {
    if (use_interleaved_kernels(a))
        return tuned::posv_interleaved(uplo, a, b, info, resolve_config("posv", a, config, ctx), ctx);
    if (tuned::column_major_supports(a.layout, a.rows) && !b.is_interleaved())
        return tuned::posv_column_major(uplo, a, b, info, resolve_config("posv", a, config, ctx), ctx);
    cusolver_posv_batched(uplo, a, b, info, ctx);
}

template <class T>
KernelReport prepare_kernel(const std::string& routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                            const CholeskyConfig& config, Context& ctx) {
    KernelReport report;
    const int n = shape.rows;
    try {
        if (use_interleaved_kernels(shape)) {
            const tuned::Routine r = routine == "potrf" ? tuned::Routine::potrf
                                     : routine == "potrs" ? tuned::Routine::potrs
                                                          : tuned::Routine::posv;
            const auto k = tuned::prepare_interleaved<T>(r, uplo, n, nrhs, shape.count, shape.chunk(), config, ctx);
            report.name = k.name, report.config = to_string(k.config);
            report.registers = k.registers, report.local_bytes = k.local_bytes;
            report.from_disk_cache = k.from_disk_cache, report.compile_seconds = k.compile_seconds;
        } else if (tuned::column_major_supports(shape.layout, n)) {
            const tuned::ColumnMajorRoutine r = routine == "potrf" ? tuned::ColumnMajorRoutine::potrf
                                                : routine == "potrs" ? tuned::ColumnMajorRoutine::potrs
                                                                     : tuned::ColumnMajorRoutine::posv;
            const auto p = tuned::prepare_column_major(r, precision_v<T>, uplo, n, nrhs, config, ctx);
            report.name = p.kernel.name, report.config = to_string(p.spec.config);
            report.registers = p.kernel.registers, report.local_bytes = p.kernel.local_bytes;
            report.from_disk_cache = p.kernel.from_disk_cache, report.compile_seconds = p.kernel.compile_seconds;
        } else {
            report.note = "n = " + std::to_string(n) + " in this layout runs cuSOLVER, not a generated kernel";
            return report;
        }
        report.supported = true;
    } catch (const InvalidArgument& e) {
        report.supported = false;
        report.note = e.what();
    }
    return report;
}

#define INSTANTIATE(T)                                                                                        \
    template void potrf_batched<T>(Uplo, const BatchView<T>&, int*, const CholeskyConfig*, Context&);         \
    template void potrs_batched<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, const CholeskyConfig*, \
                                   Context&);                                                                 \
    template void posv_batched<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, const CholeskyConfig*, \
                                  Context&);                                                                  \
    template KernelReport prepare_kernel<T>(const std::string&, Uplo, const BatchView<const T>&, int,        \
                                            const CholeskyConfig&, Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve::cuda_backend
