// Resolution of a call into its generated kernels (see kernel_plan.hpp); the launchers
// (interleaved_cholesky.cpp, column_major_cholesky.cpp, ../through_interleaved.cu) resolve the same
// way, and tests/codegen's digest of every table case would change if they parted.
#include "kernel_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "codegen/cholesky/families.hpp"
#include "codegen/cholesky/shared_memory.hpp"
#include "column_major_cholesky.hpp"
#include "../through_interleaved.hpp"
#include "../blas3/gemm_manifest.hpp"
#include "../large/potf2_manifest.hpp"
#include "../triangular/triangular_manifest.hpp"

namespace batchsolve::cuda_backend::tuned {

namespace {

using codegen::cholesky::ColumnMajorRoutine;
using codegen::cholesky::InterleavedKernelSpec;
using codegen::cholesky::Routine;

std::size_t element_bytes_of(Precision p) { return static_cast<std::size_t>(codegen::element_bytes(p)); }

// "config.<field>: <reason>" for the generators' "<field>: <reason>"; "n: ..." and already
// prefixed texts as they are.
std::string config_problem_text(const std::string& problem) {
    if (problem.empty() || problem.rfind("config.", 0) == 0 || problem.rfind("n:", 0) == 0) return problem;
    return "config." + problem;
}

// As resolved_spec of interleaved_cholesky.cpp: defaults filled in, chunk_size (a run-time
// argument) cleared, 64-bit offsets where a chunk needs them.
InterleavedKernelSpec interleaved_spec(Routine routine, Precision precision, Uplo uplo, int n, int nrhs, int count,
                                       int chunk, const CholeskyConfig& config) {
    InterleavedKernelSpec spec;
    spec.routine = routine;
    spec.precision = precision;
    spec.uplo = uplo;
    spec.n = n;
    spec.config = codegen::cholesky::resolve_interleaved_config(routine, precision, n, config);
    spec.config.chunk_size = 0;
    spec.wide_index = codegen::cholesky::interleaved_needs_wide_index(n, routine == Routine::potrf ? 0 : nrhs, count, chunk);
    return spec;
}

// As potrf/potrs/posv_interleaved: the kernel, or posv's two kernels (potrf's, then the
// cooperative potrs of solve_nb / solve_warps_per_matrix).
void plan_interleaved(Routine routine, Precision precision, Uplo uplo, int n, int nrhs, int count, int chunk,
                      const CholeskyConfig& config, KernelPlan& plan) {
    std::vector<InterleavedKernelSpec> specs;
    if (routine == Routine::posv && codegen::cholesky::is_two_kernel_posv(config)) {
        if (config.solve_warps_per_matrix <= 0) {
            plan.problem = "config.solve_warps_per_matrix: 2, 4 or 8 when config.solve_nb is set";
            return;
        }
        const auto two = codegen::cholesky::split_two_kernel_posv(config);
        specs.push_back(interleaved_spec(Routine::potrf, precision, uplo, n, nrhs, count, chunk, two.factor));
        specs.push_back(interleaved_spec(Routine::potrs, precision, uplo, n, nrhs, count, chunk, two.solve));
    } else {
        specs.push_back(interleaved_spec(routine, precision, uplo, n, nrhs, count, chunk, config));
    }
    for (const auto& spec : specs)
        if (std::string problem = codegen::cholesky::interleaved_spec_problem(spec); !problem.empty()) {
            plan.problem = config_problem_text(problem);
            return;
        }
    plan.interleaved = specs;
}

[[noreturn]] void bad_line(const char* field, const std::string& why, const std::string& line) {
    throw InvalidArgument("kernel manifest", field, why + " (line: " + line.substr(0, 120) + ")");
}

}  // namespace

std::string manifest_line(const InterleavedKernelSpec& spec) {
    return std::string("interleaved ") + to_string(spec.routine) + " " + precision_letter(spec.precision) + " " +
           batchsolve::to_string(spec.uplo) + " " + std::to_string(spec.n) + " " + (spec.wide_index ? "1 " : "0 ") +
           to_string(spec.config);
}

std::string manifest_line(const codegen::cholesky::ColumnMajorSpec& spec) {
    return std::string("column_major ") + to_string(spec.routine) + " " + precision_letter(spec.precision) + " " +
           batchsolve::to_string(spec.uplo) + " " + std::to_string(spec.n) + " " + std::to_string(spec.nrhs) + " " +
           to_string(spec.config);
}

jit::KernelRequest manifest_request(const std::string& line) {
    if (line.rfind("gemm ", 0) == 0) return gemm_manifest_request(line);  // the GEMM family's lines
    if (line.rfind("potf2 ", 0) == 0) return potf2_manifest_request(line);  // the large Cholesky's POTF2
    if (line.rfind("triangular ", 0) == 0) return triangular_manifest_request(line);  // TRSM/TRMM/potrf_vbatched leaves
    std::istringstream in(line);
    std::string kind, routine, precision, uplo;
    int n = 0, extra = 0;
    if (!(in >> kind >> routine >> precision >> uplo >> n >> extra)) bad_line("line", "7 fields", line);
    std::string config_text;
    std::getline(in >> std::ws, config_text);
    if (config_text.empty()) bad_line("config", "a configuration JSON object", line);
    if (uplo != "lower" && uplo != "upper") bad_line("uplo", "lower or upper", line);
    // the limit plan_kernels applies: column-major specs reach the shared-memory kernels' orders
    const int max_n = kind == "column_major" ? codegen::cholesky::shared_memory_max_n : codegen::max_dispatched_n;
    if (n < 1 || n > max_n) bad_line("n", "1 <= n <= " + std::to_string(max_n), line);
    const Routine r = parse_routine(routine);
    const Precision p = parse_precision(precision);
    const Uplo u = uplo == "lower" ? Uplo::lower : Uplo::upper;
    const CholeskyConfig config = parse_config(config_text);
    if (kind == "interleaved") {
        if (extra != 0 && extra != 1) bad_line("wide_index", "0 or 1", line);
        InterleavedKernelSpec spec;
        spec.routine = r, spec.precision = p, spec.uplo = u, spec.n = n, spec.wide_index = extra == 1, spec.config = config;
        if (const std::string problem = codegen::cholesky::interleaved_spec_problem(spec); !problem.empty())
            bad_line("config", problem, line);
        return cache_request(spec);
    }
    if (kind == "column_major") {
        if (extra < 0) bad_line("nrhs", ">= 0", line);
        codegen::cholesky::ColumnMajorSpec spec;
        spec.routine = r, spec.precision = p, spec.uplo = u, spec.n = n, spec.nrhs = extra, spec.config = config;
        if (const std::string problem = codegen::cholesky::column_major_spec_problem(spec); !problem.empty())
            bad_line("config", problem, line);
        return cache_request(spec);
    }
    bad_line("kind", "interleaved, column_major, gemm, potf2 or triangular", line);
}

jit::KernelKey cache_key(const InterleavedKernelSpec& spec) {
    jit::KernelKey key;
    key.family = codegen::cache_family(codegen::cholesky::family_of(spec));
    key.kernel_name = codegen::cholesky::interleaved_kernel_name(spec);
    key.spec_text = [config = spec.config] { return to_string(config); };
    return key;
}

jit::KernelKey cache_key(const codegen::cholesky::ColumnMajorSpec& spec) {
    jit::KernelKey key;
    key.family = codegen::cache_family(codegen::cholesky::family_of(spec));
    key.kernel_name = codegen::cholesky::column_major_kernel_name(spec);
    key.spec_text = [config = spec.config, nrhs = spec.nrhs] { return to_string(config) + " nrhs " + std::to_string(nrhs); };
    return key;
}

jit::KernelRequest cache_request(const InterleavedKernelSpec& spec) {
    jit::record_in_manifest(manifest_line(spec));
    return {cache_key(spec), [spec] { return codegen::cholesky::family_of(spec).generate(spec); }, {}};
}

jit::KernelRequest cache_request(const codegen::cholesky::ColumnMajorSpec& spec) {
    jit::record_in_manifest(manifest_line(spec));
    return {cache_key(spec), [spec] { return codegen::cholesky::family_of(spec).generate(spec); }, {}};
}

std::vector<codegen::KernelSource> KernelPlan::sources() const {
    std::vector<codegen::KernelSource> out;
    for (const auto& spec : interleaved) out.push_back(codegen::cholesky::family_of(spec).generate(spec));
    for (const auto& spec : column_major) out.push_back(codegen::cholesky::family_of(spec).generate(spec));
    return out;
}

KernelPlan plan_kernels(Routine routine, Precision precision, Uplo uplo, LayoutKind layout, int n, int nrhs, int count,
                        int chunk, const CholeskyConfig& config) {
    KernelPlan plan;
    // column-major n = 129..256: cuSOLVER, or the shared-memory kernels where the configuration selects them (column_major_cholesky.hpp)
    const bool column_major = layout == LayoutKind::column_major || layout == LayoutKind::pointer_array;
    if (column_major && column_major_plan_cusolver(precision, n, routine == Routine::potrf ? 0 : nrhs, count, config,
                                                   plan.workspace_bytes))
        return plan;
    const int max_n = column_major ? codegen::cholesky::shared_memory_max_n : codegen::max_dispatched_n;
    if (n < 1 || n > max_n) {
        plan.problem = "n: 1 <= n <= " + std::to_string(max_n) + " for the generated kernels (got " + std::to_string(n) + ")";
        return plan;
    }
    const int rhs = routine == Routine::potrf ? 0 : nrhs;
    if (layout == LayoutKind::interleaved || layout == LayoutKind::chunked_interleaved) {
        if (config.through_interleaved) {
            plan.problem = "config.through_interleaved: false for interleaved layouts (the batch is interleaved already)";
            return plan;
        }
        plan_interleaved(routine, precision, uplo, n, nrhs, count, chunk, config, plan);
        return plan;
    }
    if (config.through_interleaved) {  // as through_interleaved.cu: slices of the batch in a workspace
        plan.through_interleaved = true;
        plan.slice = through_interleaved_slice(n, rhs, element_bytes_of(precision), count);
        plan.workspace_bytes = through_interleaved_workspace_bytes_of(n, rhs, element_bytes_of(precision), plan.slice);
        CholeskyConfig kernel = config;
        kernel.through_interleaved = false;
        kernel.chunk_size = 0;
        plan_interleaved(routine, precision, uplo, n, nrhs, plan.slice, plan.slice, kernel, plan);
        return plan;
    }
    const ColumnMajorRoutine r = routine;  // the same enumeration
    const auto spec = column_major_spec(r, precision, uplo, n, rhs, config);
    if (std::string problem = codegen::cholesky::column_major_spec_problem(spec); !problem.empty())
        plan.problem = config_problem_text(problem);
    else
        plan.column_major.push_back(spec);
    return plan;
}

}  // namespace batchsolve::cuda_backend::tuned
