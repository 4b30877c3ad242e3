// The CUDA backend of the variable-size triangular routines: the algorithms of algorithm.hpp with an
// executor that compiles the generated kernels through NVRTC (cached), launches them on the context's
// stream and runs the GEMM updates through blas3_detail::gemm_vbatched on the device.
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <set>
#include <sstream>

#include "../../core/triangular_backend.hpp"
#include "../jit/jit.hpp"
#include "../jit/kernel_cache.hpp"
#include "../resources.hpp"
#include "algorithm.hpp"
#include "triangular_manifest.hpp"

namespace batchsolve::cuda_backend {

namespace {

using codegen::triangular::KernelArguments;
using codegen::triangular::TriangularKernelSpec;
using detail::CudaResources;
using detail::DeviceGuard;

// The process's one kernel cache (jit/kernel_cache.hpp): a hash-map probe per launch, the text
// generated and compiled only on a miss of memory and disk. The name encodes the whole spec.
const jit::LoadedKernel& lookup(const TriangularKernelSpec& spec, int device) {
    const auto& family = codegen::triangular::triangular_family();
    if (const jit::LoadedKernel* k = jit::find_kernel(codegen::cache_family(family), family.kernel_name(spec), device)) return *k;
    jit::record_in_manifest(triangular_manifest_line(spec));  // $BATCHSOLVE_KERNEL_MANIFEST, on a miss of memory only
    return jit::family_kernel(family, spec, device);
}

template <class T>
class CudaExecutor {
public:
    CudaExecutor(Context& ctx, const char* routine) : ctx_(ctx), r_(detail::resources_of(ctx, routine)), guard_(r_.device_) {}

    void kernel(const TriangularKernelSpec& spec, KernelArguments args, unsigned grid_x, unsigned grid_y) {
        const jit::LoadedKernel& k = lookup(spec, r_.device_);
        void* params[] = {&args};
        const codegen::KernelResources res = codegen::triangular::triangular_family().resources(spec);
        // grid y beyond the limit: the kernels loop over their column groups with a stride of gridDim.y
        jit::launch(k, grid_x, std::max(1u, std::min(grid_y, 65535u)), unsigned(res.threads_per_block), 1,
                    unsigned(res.shared_bytes), r_.stream(), params);
    }
    void gemm(blas3_detail::Operand op_a, blas3_detail::Operand op_b, blas3_detail::VSize m, blas3_detail::VSize n,
              blas3_detail::VSize k, T alpha, const T* const* a, const int* lda, const T* const* b, const int* ldb, T beta,
              T* const* c, const int* ldc, int max_m, int max_n, int max_k, int batch,
              const blas3_detail::GemmExtras& extras) {
        blas3_detail::gemm_vbatched<T>(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, max_m, max_n, max_k,
                                       batch, ctx_, extras);
    }
    void* workspace(std::size_t bytes) { return ctx_.workspace(bytes); }
    void zero_info(int* info, int batch) {
        BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(info, 0, std::size_t(batch) * sizeof(int), r_.stream()));
    }

private:
    Context& ctx_;
    CudaResources& r_;
    DeviceGuard guard_;
};

}  // namespace

std::string triangular_manifest_line(const TriangularKernelSpec& spec) {
    return std::string("triangular ") + codegen::triangular::to_string(spec.kind) + " " + precision_letter(spec.precision) + " " +
           (spec.lower ? "lower " : "upper ") + std::to_string(spec.config.columns_per_thread) + " " +
           std::to_string(spec.config.warps_per_block);
}

jit::KernelRequest triangular_manifest_request(const std::string& line) {
    auto bad = [&](const std::string& field, const std::string& why) {
        throw InvalidArgument("kernel manifest", field, why + " (line: " + line.substr(0, 120) + ")");
    };
    std::istringstream in(line);
    std::string word, kind, precision, orientation, rest;
    TriangularKernelSpec spec;
    if (!(in >> word >> kind >> precision >> orientation >> spec.config.columns_per_thread >> spec.config.warps_per_block) ||
        word != "triangular" || (in >> rest))
        bad("line", "triangular <kind> <precision> <lower|upper> <columns_per_thread> <warps_per_block>");
    using codegen::triangular::KernelKind;
    bool known = false;
    for (KernelKind k : {KernelKind::solve, KernelKind::multiply, KernelKind::invert, KernelKind::potrf_panel})
        if (kind == codegen::triangular::to_string(k)) spec.kind = k, known = true;
    if (!known) bad("kind", "solve, multiply, invert or potrf_panel");
    if (precision.size() != 1 || std::string("sdcz").find(precision[0]) == std::string::npos) bad("precision", "s, d, c or z");
    spec.precision = parse_precision(precision);
    if (orientation != "lower" && orientation != "upper") bad("orientation", "lower or upper");
    spec.lower = orientation == "lower";
    const auto& family = codegen::triangular::triangular_family();
    if (const std::string problem = family.can_implement(spec); !problem.empty()) bad("config", problem);
    jit::KernelRequest request;
    request.key = jit::KernelKey{codegen::cache_family(family), family.kernel_name(spec), {}};
    request.generate = [spec, &family] { return family.generate(spec); };
    return request;
}

std::vector<std::string> triangular_table_lines(Precision precision) {
    using codegen::triangular::KernelKind;
    const TriangularConfig defaults;
    const auto& family = codegen::triangular::triangular_family();
    std::vector<std::string> lines;
    std::set<std::string> names;
    for (KernelKind kind : {KernelKind::solve, KernelKind::multiply, KernelKind::invert, KernelKind::potrf_panel})
        for (bool lower : {true, false}) {
            TriangularKernelSpec spec;
            spec.kind = kind, spec.precision = precision, spec.lower = lower;
            spec.config.columns_per_thread = defaults.columns_per_thread, spec.config.warps_per_block = defaults.warps_per_block;
            if (!family.can_implement(spec).empty()) continue;
            if (names.insert(family.kernel_name(spec)).second) lines.push_back(triangular_manifest_line(spec));
        }
    return lines;
}

template <class T>
BATCHSOLVE_TRIANGULAR_TRMM(T) {
    CudaExecutor<T> x(ctx, "trmm_vbatched");
    triangular_algorithm::trmm(side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, max_m, max_n, batch, config, x);
}

template <class T>
BATCHSOLVE_TRIANGULAR_TRSM(T) {
    CudaExecutor<T> x(ctx, "trsm_vbatched");
    triangular_algorithm::trsm(side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, max_m, max_n, batch, config, x);
}

template <class T>
BATCHSOLVE_TRIANGULAR_POTRF(T) {
    CudaExecutor<T> x(ctx, "potrf_vbatched");
    triangular_algorithm::potrf(uplo, n, a, lda, max_n, batch, info, reset_info, config, x);
}

// check_vbatched is check.cu's (nvcc compiles the kernel).
BATCHSOLVE_INSTANTIATE_ROUTINE(PRECISIONS, BATCHSOLVE_TRIANGULAR_TRMM, "trmm_vbatched")
BATCHSOLVE_INSTANTIATE_ROUTINE(PRECISIONS, BATCHSOLVE_TRIANGULAR_TRSM, "trsm_vbatched")
BATCHSOLVE_INSTANTIATE_ROUTINE(PRECISIONS, BATCHSOLVE_TRIANGULAR_POTRF, "potrf_vbatched")

}  // namespace batchsolve::cuda_backend
