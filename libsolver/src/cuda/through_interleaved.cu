// Column-major batches through the interleaved kernels (see through_interleaved.hpp): convert in,
// run the interleaved kernel, convert the written parts back, slice by slice of the workspace.
#include "through_interleaved.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>

#include "layout_convert.hpp"
#include "resources.hpp"

namespace batchsolve::cuda_backend {

namespace {

// The configuration the interleaved kernel runs: the caller's, without the routing flag and with the
// chunk size the workspace's plain interleaved layout implies.
CholeskyConfig kernel_config(const CholeskyConfig& config) {
    CholeskyConfig c = config;
    c.through_interleaved = false;
    c.chunk_size = 0;
    return c;
}

template <class T>
void require_column_major(const BatchView<T>& v, const char* routine, const char* name) {
    if (v.layout != LayoutKind::column_major && v.layout != LayoutKind::pointer_array)
        throw InvalidArgument(routine, std::string(name) + ".layout",
                              "column_major or pointer_array when config.through_interleaved is set");
}

// The workspace of one call, carved into A and B parts of `slice` matrices each.
template <class T>
struct Workspace {
    T* a = nullptr;
    T* b = nullptr;
    int slice = 0;
};

template <class T>
Workspace<T> workspace_for(Context& ctx, int n, int nrhs, int count) {
    Workspace<T> w;
    w.slice = through_interleaved_slice(n, nrhs, sizeof(T), count);
    detail::Carve carve;
    const std::size_t a_at = carve.reserve<T>(std::size_t(w.slice) * n * n);
    const std::size_t b_at = nrhs > 0 ? carve.reserve<T>(std::size_t(w.slice) * n * nrhs) : 0;
    // the size workspace_bytes reports (through_interleaved_workspace_bytes_of) is what is asked for
    if (carve.size() != through_interleaved_workspace_bytes_of(n, nrhs, sizeof(T), w.slice))
        throw Error("through_interleaved: workspace plan and query disagree");
    void* base = ctx.workspace(carve.size());
    w.a = detail::Carve::at<T>(base, a_at);
    w.b = nrhs > 0 ? detail::Carve::at<T>(base, b_at) : nullptr;
    return w;
}

// Calls f(first, size) for the slices of `count` matrices.
template <class F>
void for_each_slice(int count, int slice, F&& f) {
    for (std::int64_t first = 0; first < count; first += slice)
        f(int(first), int(std::min<std::int64_t>(slice, count - first)));
}

// The one mechanism of the three routines: per slice of the workspace, the uplo triangle of A (and
// all of B when there is one) converted in, `kernel(wa, wb, first)` on the interleaved copies, then
// A's triangle converted back when the routine writes it and B whenever there is one. A is T or
// const T; b == nullptr for potrf.
template <class T, class A, class Kernel>
void through_workspace(const char* routine, Uplo uplo, const BatchView<A>& a, const BatchView<T>* b,
                       bool a_written, Context& ctx, Kernel&& kernel) {
    require_column_major(a, routine, "a");
    if (b != nullptr) require_column_major(*b, routine, "b");
    const int n = a.rows, nrhs = b != nullptr ? b->cols : 0;
    detail::CudaResources& r = detail::resources_of(ctx, routine);
    detail::DeviceGuard guard(r.device_);
    const auto user_a = checked_device_batch(r, a, routine, "a");
    const auto user_b = b != nullptr ? checked_device_batch(r, *b, routine, "b") : decltype(user_a){};
    const Workspace<T> w = workspace_for<T>(ctx, n, nrhs, a.count);
    const Part part = part_of(uplo);
    for_each_slice(a.count, w.slice, [&](int first, int size) {
        const BatchView<T> wa = BatchView<T>::interleaved(w.a, n, n, size);
        const BatchView<T> wb = BatchView<T>::interleaved(w.b, n, nrhs, size);
        launch_convert(user_a.slice(first), device_batch(wa), size, part, /*zero_rest=*/false, r.stream());
        if (b != nullptr) launch_convert(user_b.slice(first), device_batch(wb), size, Part::all, false, r.stream());
        kernel(wa, wb, first);
        if (a_written) launch_convert(device_batch(wa), user_a.slice(first), size, part, false, r.stream());
        // The interleaved kernels leave B of a failed matrix untouched, so copying all of B back does too.
        if (b != nullptr) launch_convert(device_batch(wb), user_b.slice(first), size, Part::all, false, r.stream());
    });
}

}  // namespace

int through_interleaved_slice(int n, int nrhs, std::size_t element_bytes, int count) {
    const std::size_t per_matrix = std::max<std::size_t>(1, (std::size_t(n) * n + std::size_t(n) * nrhs) * element_bytes);
    const std::size_t fit = std::max<std::size_t>(1, through_interleaved_workspace_bytes / per_matrix);
    return int(std::min<std::size_t>(fit, std::size_t(std::max(count, 1))));
}

template <class T>
void potrf_through_interleaved(Uplo uplo, const BatchView<T>& a, int* info, const CholeskyConfig& config,
                               Context& ctx) {
    if (a.count == 0) return;
    const CholeskyConfig kc = kernel_config(config);
    through_workspace<T>("potrf_batched", uplo, a, nullptr, true, ctx, [&](const BatchView<T>& wa, const BatchView<T>&, int first) {
        tuned::potrf_interleaved(uplo, wa, info + first, kc, ctx);
    });
}

template <class T>
void potrs_through_interleaved(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b,
                               const CholeskyConfig& config, Context& ctx) {
    if (a.count == 0 || a.rows == 0 || b.cols == 0) return;
    const CholeskyConfig kc = kernel_config(config);
    through_workspace<T>("potrs_batched", uplo, a, &b, false, ctx, [&](const BatchView<T>& wa, const BatchView<T>& wb, int) {
        tuned::potrs_interleaved(uplo, BatchView<const T>(wa), wb, kc, ctx);
    });
}

template <class T>
void posv_through_interleaved(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info,
                              const CholeskyConfig& config, Context& ctx) {
    if (a.count == 0) return;
    if (a.rows == 0 || b.cols == 0)  // the factorisation alone: potrf's part of a two-kernel configuration
        return potrf_through_interleaved(uplo, a, info,
                                         tuned::is_two_kernel_posv(config) ? tuned::split_two_kernel_posv(config).factor : config,
                                         ctx);
    const CholeskyConfig kc = kernel_config(config);
    through_workspace<T>("posv_batched", uplo, a, &b, true, ctx, [&](const BatchView<T>& wa, const BatchView<T>& wb, int first) {
        tuned::posv_interleaved(uplo, wa, wb, info + first, kc, ctx);
    });
}

template <class T>
tuned::InterleavedKernelReport prepare_through_interleaved(tuned::Routine routine, Uplo uplo, int n, int nrhs,
                                                           int count, const CholeskyConfig& config, Context& ctx) {
    const int slice = through_interleaved_slice(n, routine == tuned::Routine::potrf ? 0 : nrhs, sizeof(T), count);
    return tuned::prepare_interleaved<T>(routine, uplo, n, nrhs, slice, slice, kernel_config(config), ctx);
}

#define INSTANTIATE(T)                                                                                          \
    template void potrf_through_interleaved<T>(Uplo, const BatchView<T>&, int*, const CholeskyConfig&, Context&); \
    template void potrs_through_interleaved<T>(Uplo, const BatchView<const T>&, const BatchView<T>&,            \
                                               const CholeskyConfig&, Context&);                                 \
    template void posv_through_interleaved<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*,             \
                                              const CholeskyConfig&, Context&);                                  \
    template tuned::InterleavedKernelReport prepare_through_interleaved<T>(tuned::Routine, Uplo, int, int, int, \
                                                                           const CholeskyConfig&, Context&);
INSTANTIATE(float)
INSTANTIATE(double)
INSTANTIATE(std::complex<float>)
INSTANTIATE(std::complex<double>)
#undef INSTANTIATE

}  // namespace batchsolve::cuda_backend
