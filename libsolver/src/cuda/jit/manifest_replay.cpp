// The CUDA backend of warm_up_manifest (core/manifest_backend.hpp): manifest lines through the
// planner's reader (tuned/kernel_plan.hpp) into the one kernel cache's disk fill (jit/kernel_cache.hpp),
// and the manifest lines of the tuning tables' GEMM and POTF2 kernels (table_kernel_lines), resolved
// by the launchers' own planners (blas3/gemm_manifest.hpp, large/potf2_manifest.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <set>

#include "../../core/cholesky_large_backend.hpp"
#include "../../core/manifest_backend.hpp"
#include "../blas3/gemm_manifest.hpp"
#include "../large/potf2_manifest.hpp"
#include "../triangular/triangular_manifest.hpp"
#include "../tuned/kernel_plan.hpp"
#include "batchsolve/tuning.hpp"
#include "kernel_cache.hpp"

namespace batchsolve::cuda_backend {

namespace {

using codegen::blas3::GemmOperand;
using codegen::blas3::GemmPart;

// The upper ends of the size classes of a table family for `precision` (ascending; the open class,
// INT_MAX, left out), walking tuned_config from n = 1; empty where no table answers.
std::vector<int> finite_class_bounds(const std::string& routine, Precision precision, int arch) {
    std::vector<int> out;
    for (long long n = 1; n < INT_MAX;) {
        const TunedEntry e = tuned_config(routine, precision, LayoutKind::column_major, int(n), arch);
        if (!e.found || e.n < n || e.n == INT_MAX) break;
        out.push_back(e.n);
        n = static_cast<long long>(e.n) + 1;
    }
    return out;
}

// One operand form of the GEMM kernels: what gemm/syrk/herk/syr2k/her2k/symm/hemm_vbatched pass the
// launcher (blas3.cu; a real precision's conj_trans is its trans, core/blas3.cpp).
struct GemmForm {
    GemmOperand a, b;
    GemmPart part;
    bool real_diagonal;
};

std::vector<GemmForm> gemm_forms(bool complex) {
    std::vector<GemmForm> forms;
    std::vector<GemmOperand> ops = {GemmOperand::no_trans, GemmOperand::trans};
    if (complex) ops.push_back(GemmOperand::conj_trans);
    for (GemmOperand a : ops)
        for (GemmOperand b : ops) forms.push_back({a, b, GemmPart::full, false});  // gemm_vbatched
    for (GemmPart part : {GemmPart::lower, GemmPart::upper}) {
        forms.push_back({GemmOperand::no_trans, GemmOperand::trans, part, false});  // syrk/syr2k, trans = n
        forms.push_back({GemmOperand::trans, GemmOperand::no_trans, part, false});  // trans = t
        if (complex) {  // herk/her2k
            forms.push_back({GemmOperand::no_trans, GemmOperand::conj_trans, part, true});
            forms.push_back({GemmOperand::conj_trans, GemmOperand::no_trans, part, true});
        }
    }
    std::vector<GemmOperand> full = {GemmOperand::symmetric_lower, GemmOperand::symmetric_upper};
    if (complex) full.push_back(GemmOperand::hermitian_lower), full.push_back(GemmOperand::hermitian_upper);
    for (GemmOperand s : full) {  // symm/hemm, side left and right
        forms.push_back({s, GemmOperand::no_trans, GemmPart::full, false});
        forms.push_back({GemmOperand::no_trans, s, GemmPart::full, false});
    }
    return forms;
}

// Every kernel the GEMM launcher runs with the tables' configurations for `precision`: each operand
// form, at every size class's upper end x (and the first bin's, twice it, twice the largest finite
// class's end): a uniform batch of x (whole tiles), of x - 1 (ragged tiles) and a variable-size batch
// of largest problem x (the size bins above the first).
std::vector<std::string> gemm_lines(Precision precision, int arch) {
    std::set<int> sizes = {kGemmFirstBinSize, 2 * kGemmFirstBinSize};
    for (const char* routine : {"gemm_vbatched", "gemm_vbatched_triangle"})
        for (int b : finite_class_bounds(routine, precision, arch)) sizes.insert(b);
    sizes.insert(2 * *sizes.rbegin());  // the open class
    std::vector<std::string> lines;
    std::set<std::string> seen;
    const bool complex = precision == Precision::c || precision == Precision::z;
    for (const GemmForm& f : gemm_forms(complex)) {
        codegen::blas3::GemmSpec spec;
        spec.precision = precision, spec.op_a = f.a, spec.op_b = f.b, spec.part = f.part, spec.real_diagonal = f.real_diagonal;
        for (int x : sizes)
            for (int call = 0; call < 3; ++call) {
                const int size = call == 1 ? x - 1 : x;
                if (size < 1) continue;
                const GemmPlan plan = plan_gemm(spec, size, size, size, call < 2, size, size, size, nullptr, arch);
                for (const auto& s : plan.specs)
                    if (std::string line = gemm_manifest_line(s); seen.insert(line).second) lines.push_back(std::move(line));
            }
    }
    return lines;
}

// The POTF2 kernel of each large-Cholesky table row's blocking with fused diagonal blocks (what a
// caller who asks for diagonal = fused and leaves the rest automatic runs; the shipped rows themselves
// may factor their diagonal blocks with cuSOLVER), both triangles; the safe default's where no table
// answers.
std::vector<std::string> potf2_lines(Precision precision, int arch) {
    if (precision != Precision::s && precision != Precision::d) return {};
    std::vector<int> bounds = finite_class_bounds("potrf_large", precision, arch);
    bounds.push_back(INT_MAX);  // the open class (or the safe default)
    std::vector<std::string> lines;
    std::set<std::string> seen;
    for (int n : bounds) {
        LargeCholeskyConfig asked;
        asked.diagonal = CholeskyDiagonal::fused;
        const LargeCholeskyConfig c = precision == Precision::s ? cholesky_large_detail::resolve<float>(asked, n, arch)
                                                                : cholesky_large_detail::resolve<double>(asked, n, arch);
        for (Uplo uplo : {Uplo::lower, Uplo::upper})
            if (std::string line = potf2_manifest_line(potf2_spec(precision, uplo, c)); seen.insert(line).second)
                lines.push_back(std::move(line));
    }
    return lines;
}

}  // namespace

std::string manifest_line_problem(const std::string& line) {
    try {
        (void)tuned::manifest_request(line);
        return "";
    } catch (const std::exception& e) {
        return e.what();
    }
}

ManifestFill fill_from_manifest(const std::vector<std::string>& lines, int device, int arch, int threads) {
    std::vector<jit::KernelRequest> requests;
    requests.reserve(lines.size());
    for (const std::string& line : lines) requests.push_back(tuned::manifest_request(line));
    const jit::DiskFill fill =
        arch > 0 ? jit::fill_disk_cache_for_arch(requests, arch, threads) : jit::fill_disk_cache(requests, device, threads);
    return ManifestFill{fill.already_on_disk, fill.compiled};
}

std::vector<std::string> table_manifest_lines(const std::string& family, Precision precision, int arch, int device) {
    if (family != "gemm" && family != "potf2" && family != "triangular")
        throw InvalidArgument("table_kernel_lines", "family", "gemm, potf2 or triangular (got '" + family + "')");
    if (family == "triangular") return triangular_table_lines(precision);  // no architecture in its specs
    if (arch == 0) {
        int major = 0, minor = 0;
        cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
        if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
        if (e != cudaSuccess)
            throw CudaError("cudaDeviceGetAttribute(compute capability, device " + std::to_string(device) + ")", int(e),
                            cudaGetErrorString(e));
        arch = major * 10 + minor;
    }
    if (family == "gemm") return gemm_lines(precision, arch);
    return potf2_lines(precision, arch);
}

}  // namespace batchsolve::cuda_backend
