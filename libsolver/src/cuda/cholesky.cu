// Batched Cholesky on the CUDA backend: picks the implementation for a call.
//
//   interleaved / chunked, n <= 128  -> run-time generated one-thread-per-matrix kernels (tuned/interleaved_*)
//   column-major / pointer array, n <= 128 -> run-time generated shared-memory kernels (tuned/column_major_*),
//                                     or, where the configuration says so, the interleaved kernels
//                                     through a converted workspace (through_interleaved.hpp)
//   anything else                    -> cuSOLVER potrfBatched/potrsBatched behind LAPACK semantics
//
// The kernel configuration is the caller's (expert entry points of tuning.hpp), else the tuning
// table's entry for this GPU, routine, precision, layout family and n, else the kernels' own default.
#include <algorithm>
#include <chrono>
#include <complex>
#include <optional>
#include <vector>

#include "../core/backends.hpp"
#include "../core/tuning_table.hpp"
#include "codegen/common.hpp"
#include "cholesky_cusolver.hpp"
#include "jit/kernel_cache.hpp"
#include "resources.hpp"
#include "through_interleaved.hpp"
#include "tuned/column_major_cholesky.hpp"
#include "tuned/interleaved_cholesky.hpp"
#include "tuned/kernel_plan.hpp"

namespace batchsolve::cuda_backend {

namespace {

// Largest order sent to the generated interleaved kernels: one thread holds its tiles in registers,
// and beyond this the tiles no longer fit (the cuSOLVER path takes over).
constexpr int interleaved_max_n = codegen::max_dispatched_n;

// The configuration the plain routines run on a GPU of compute capability `arch` (e.g. 90).
template <class T>
CholeskyConfig resolve_config_for_arch(const char* routine, const BatchView<T>& a, int arch) {
    if (auto tuned = tuning::lookup(routine, precision_v<T>, a.layout, a.rows, arch, a.count)) {
        CholeskyConfig c = *tuned;
        // A chunked entry was tuned for the chunk size it names; the user's view decides the layout.
        if (a.layout == LayoutKind::chunked_interleaved) c.chunk_size = a.chunk_size;
        else c.chunk_size = 0;
        return c;
    }
    return CholeskyConfig{};  // nb == 0: the kernels' default for n
}

template <class T>
CholeskyConfig resolve_config(const char* routine, const BatchView<T>& a, const CholeskyConfig* config, Context& ctx) {
    if (config != nullptr) return *config;
    const detail::CudaResources& r = detail::resources_of(ctx, routine);
    return resolve_config_for_arch(routine, a, r.cc_major_ * 10 + r.cc_minor_);
}

template <class T>
bool use_interleaved_kernels(const BatchView<T>& a) {
    return a.is_interleaved() && a.rows <= interleaved_max_n;
}

// The interleaved kernels' configuration for an interleaved view: the routing flag of column-major
// views would be silently meaningless here, so it is refused.
CholeskyConfig interleaved_config(const char* routine, CholeskyConfig c) {
    if (c.through_interleaved)
        throw InvalidArgument(std::string(routine) + "_batched", "config.through_interleaved",
                              "false for interleaved layouts (the batch is interleaved already)");
    return c;
}

}  // namespace

template <class T>
BATCHSOLVE_CHOLESKY_POTRF(T) {
    if (use_interleaved_kernels(a))
        return tuned::potrf_interleaved(uplo, a, info, interleaved_config("potrf", resolve_config("potrf", a, config, ctx)),
                                        ctx);
    if (tuned::column_major_supports(a.layout, a.rows)) {
        const CholeskyConfig c = resolve_config("potrf", a, config, ctx);
        if (c.through_interleaved) return potrf_through_interleaved(uplo, a, info, c, ctx);
        return tuned::potrf_column_major(uplo, a, info, c, ctx);
    }
    cusolver_potrf_batched(uplo, a, info, ctx);
}

template <class T>
BATCHSOLVE_CHOLESKY_POTRS(T) {
    if (use_interleaved_kernels(a))
        return tuned::potrs_interleaved(uplo, a, b, interleaved_config("potrs", resolve_config("potrs", a, config, ctx)),
                                        ctx);
    if (tuned::column_major_supports(a.layout, a.rows) && !b.is_interleaved()) {
        const CholeskyConfig c = resolve_config("potrs", a, config, ctx);
        if (c.through_interleaved) return potrs_through_interleaved(uplo, a, b, c, ctx);
        return tuned::potrs_column_major(uplo, a, b, c, ctx);
    }
    cusolver_potrs_batched(uplo, a, b, ctx);
}

template <class T>
BATCHSOLVE_CHOLESKY_POSV(T) {
    if (use_interleaved_kernels(a))
        return tuned::posv_interleaved(uplo, a, b, info, interleaved_config("posv", resolve_config("posv", a, config, ctx)),
                                       ctx);
    if (tuned::column_major_supports(a.layout, a.rows) && !b.is_interleaved()) {
        const CholeskyConfig c = resolve_config("posv", a, config, ctx);
        if (c.through_interleaved) return posv_through_interleaved(uplo, a, b, info, c, ctx);
        return tuned::posv_column_major(uplo, a, b, info, c, ctx);
    }
    cusolver_posv_batched(uplo, a, b, info, ctx);
}

template <class T>
BATCHSOLVE_CHOLESKY_PREPARE_KERNEL(T) {
    KernelReport report;
    const int n = shape.rows;
    const Routine r = parse_routine(routine);
    auto from_interleaved = [&](const tuned::InterleavedKernelReport& k) {
        report.name = k.name, report.registers = k.registers, report.local_bytes = k.local_bytes;
        report.threads_per_block = k.config.threads_per_block, report.blocks_per_sm = k.blocks_per_sm;
        report.from_disk_cache = k.from_disk_cache, report.compile_seconds = k.compile_seconds;
    };
    try {
        if (use_interleaved_kernels(shape)) {
            const CholeskyConfig c = interleaved_config(routine.c_str(), resolve_config(routine.c_str(), shape, config, ctx));
            const auto k = tuned::prepare_interleaved<T>(r, uplo, n, nrhs, shape.count, shape.chunk(), c, ctx);
            from_interleaved(k);
            report.config = to_string(k.config);
        } else if (tuned::column_major_supports(shape.layout, n)) {
            const CholeskyConfig c = resolve_config(routine.c_str(), shape, config, ctx);
            if (c.through_interleaved) {
                const auto k = prepare_through_interleaved<T>(r, uplo, n, nrhs, shape.count, c, ctx);
                from_interleaved(k);
                CholeskyConfig resolved = k.config;
                resolved.through_interleaved = true;
                report.config = to_string(resolved);
            } else {
                const auto p = tuned::prepare_column_major(r, precision_v<T>, uplo, n, nrhs, c, ctx);
                report.name = p.kernel.name, report.config = to_string(p.spec.config);
                report.registers = p.kernel.registers, report.local_bytes = p.kernel.local_bytes;
                report.threads_per_block = p.block_threads, report.blocks_per_sm = p.blocks_per_sm;
                report.from_disk_cache = p.kernel.from_disk_cache, report.compile_seconds = p.kernel.compile_seconds;
            }
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

// The generated kernels of a call with `config`, as the routines above would run them (the
// routing of potrs/posv assumes B in A's family of layouts); nothing when cuSOLVER runs the call.
template <class T>
std::optional<tuned::KernelPlan> plan_of(Routine routine, Uplo uplo, const BatchView<const T>& shape, int nrhs,
                                         const CholeskyConfig& config) {
    const int n = shape.rows;
    if (n == 0 || shape.count == 0) return tuned::KernelPlan{};  // nothing to run
    if (!use_interleaved_kernels(shape) && !tuned::column_major_supports(shape.layout, n)) return std::nullopt;
    if (shape.is_interleaved() && config.chunk_size != 0 && config.chunk_size != shape.chunk()) {
        tuned::KernelPlan plan;
        plan.problem = "config.chunk_size: 0 or the view's chunk width " + std::to_string(shape.chunk());
        return plan;
    }
    return tuned::plan_kernels(routine, precision_v<T>, uplo, shape.layout, n, std::max(nrhs, 1), shape.count,
                               shape.is_interleaved() ? shape.chunk() : shape.count, config);
}

template <class T>
BATCHSOLVE_CHOLESKY_CONFIG_PROBLEM(T) {
    const auto plan = plan_of(routine, uplo, shape, nrhs, config);
    return plan ? plan->problem : std::string();  // cuSOLVER takes no configuration
}

template <class T>
BATCHSOLVE_CHOLESKY_WORKSPACE_BYTES(T) {
    const CholeskyConfig c = resolve_config(to_string(routine), shape, config, ctx);
    if (const auto plan = plan_of(routine, uplo, shape, nrhs, c)) {
        if (!plan->problem.empty())
            throw InvalidArgument("workspace_bytes", plan->problem.substr(0, plan->problem.find(':')),
                                  plan->problem.substr(plan->problem.find(':') + 2));
        return plan->workspace_bytes;
    }
    return cusolver_workspace_bytes(shape.rows, routine == Routine::potrf ? 0 : nrhs, shape.count, sizeof(T));
}

namespace {

// The kernels of one warm-up case, as the plain routines would resolve them (routing of potrs/posv as
// for B in A's family of layouts).
template <class T>
void plan_case(const KernelCase& c, int arch, std::vector<jit::KernelRequest>& requests,
               std::vector<std::string>& names, WarmUpReport& report) {
    BatchView<const T> shape;
    shape.layout = c.layout;
    shape.rows = shape.cols = c.n;
    shape.count = c.count;
    shape.chunk_size = c.layout == LayoutKind::chunked_interleaved ? c.chunk_size : 0;
    const CholeskyConfig config = resolve_config_for_arch(to_string(c.routine), shape, arch);
    const auto plan = plan_of(c.routine, c.uplo, shape, c.nrhs, config);
    if (!plan || (plan->interleaved.empty() && plan->column_major.empty() && plan->problem.empty())) {
        ++report.without_kernels;
        return;
    }
    if (!plan->problem.empty()) {
        report.problems.push_back(to_string(c) + ": " + plan->problem);
        return;
    }
    auto add = [&](jit::KernelRequest r) {
        const std::string id = r.key.family + ":" + r.key.kernel_name;
        if (std::find(names.begin(), names.end(), id) != names.end()) return;  // another case's kernel
        names.push_back(id);
        requests.push_back(std::move(r));
    };
    for (const auto& spec : plan->interleaved) add(tuned::cache_request(spec));
    for (const auto& spec : plan->column_major) add(tuned::cache_request(spec));
}

}  // namespace

namespace {

// warm_up for a device (its architecture) or for an architecture alone (device < 0).
WarmUpReport warm_up_cases(const std::vector<KernelCase>& cases, int arch, int device, int threads) {
    const auto start = std::chrono::steady_clock::now();
    WarmUpReport report;
    report.cases = static_cast<int>(cases.size());
    std::vector<jit::KernelRequest> requests;
    std::vector<std::string> names;
    for (const KernelCase& c : cases) {
        switch (c.precision) {
            case Precision::s: plan_case<float>(c, arch, requests, names, report); break;
            case Precision::d: plan_case<double>(c, arch, requests, names, report); break;
            case Precision::c: plan_case<std::complex<float>>(c, arch, requests, names, report); break;
            case Precision::z: plan_case<std::complex<double>>(c, arch, requests, names, report); break;
        }
    }
    report.kernels = static_cast<int>(requests.size());
    if (!requests.empty()) {
        const jit::DiskFill fill = device >= 0 ? jit::fill_disk_cache(requests, device, threads)
                                               : jit::fill_disk_cache_for_arch(requests, arch, threads);
        report.already_cached = fill.already_on_disk;
        report.compiled = fill.compiled;
    }
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace

WarmUpReport warm_up(const std::vector<KernelCase>& cases, int threads, Context& ctx) {
    detail::CudaResources& r = detail::resources_of(ctx, "warm_up");
    return warm_up_cases(cases, r.cc_major_ * 10 + r.cc_minor_, r.device_, threads);
}

WarmUpReport warm_up_for_arch(const std::vector<KernelCase>& cases, int arch, int threads) {
    return warm_up_cases(cases, arch, -1, threads);
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_CHOLESKY_ROUTINES)
BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_CHOLESKY_KERNEL_ROUTINES)

}  // namespace batchsolve::cuda_backend
