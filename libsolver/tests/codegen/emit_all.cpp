// The byte-identical guard of the code generators: writes one `<kernel name>  <sha256>` line for
// every distinct kernel the library would generate for the cases of its committed tuning tables
// (libsolver/tuning/sm90*.json: each routine, precision, layout family and n, at each table's batch
// size) and, where a table has no entry (c and z, or a missing case), for the default configuration
// the library would pick. The digest covers the text and the NVRTC options, so a refactoring of a
// generator that changes what NVRTC compiles changes the file.
//
//   batchsolve_emit_all --output FILE [--sources DIR] [--check-names]
//
// ctest codegen.kernel_digests regenerates the file and compares it with the committed
// libsolver/tests/codegen/kernel_digests.txt. After a deliberate change of generated text, run
//   build/libsolver/tests/codegen/batchsolve_emit_all --output libsolver/tests/codegen/kernel_digests.txt
// and say in the commit which kernels changed and why (and which GPU check covers them).
//
// The resolution of a call into kernels below mirrors the CUDA backend's launchers
// (src/cuda/cholesky.cu, tuned/interleaved_cholesky.cpp, tuned/column_major_cholesky.cpp,
// through_interleaved.cu); a call the library would refuse is listed as `refused <case>: <reason>`.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "batchsolve/tuning.hpp"
#include "core/tuning_table.hpp"
#include "cuda/through_interleaved.hpp"
#include "cuda/tuned/column_major_cholesky.hpp"  // column_major_spec: a call's spec, as the launcher resolves it
#include "codegen/cholesky/column_major.hpp"
#include "codegen/cholesky/families.hpp"
#include "codegen/cholesky/interleaved.hpp"
#include "sha256.hpp"

namespace {

using namespace batchsolve;
namespace tuned = cuda_backend::tuned;
using cuda_backend::jit::KernelSource;

constexpr int kArch = 90;                        // the architecture of the committed tables
constexpr int kTableBatches[] = {16384, 100000};  // the batch sizes they were tuned at (sm90.json, sm90-batch100000.json)
constexpr int kChunk = 32;                       // chunk width of the chunked cases (a run-time argument of the kernels)
constexpr int kMaxN = 128;                       // the largest n a generated kernel takes
// Right-hand sides of the potrs/posv cases: one (the common call) and the largest nrhs_block any
// family accepts, so that no tuned nrhs_block is capped by the call.
constexpr int kNrhsCases[] = {1, 16};

struct Case {
    const char* routine;
    Precision precision;
    Uplo uplo;
    LayoutKind layout;
    int n, nrhs, count;
};

std::string describe(const Case& c) {
    return std::string(c.routine) + " " + precision_letter(c.precision) + " " + (c.uplo == Uplo::lower ? "lower" : "upper") +
           " " + tuning::layout_family(c.layout) + " n=" + std::to_string(c.n) + " nrhs=" + std::to_string(c.nrhs) +
           " count=" + std::to_string(c.count);
}

std::size_t element_bytes(Precision p) {
    switch (p) {
        case Precision::s: return 4;
        case Precision::d: return 8;
        case Precision::c: return 8;
        case Precision::z: return 16;
    }
    return 0;
}

tuned::Routine interleaved_routine(const std::string& r) {
    return r == "potrf" ? tuned::Routine::potrf : r == "potrs" ? tuned::Routine::potrs : tuned::Routine::posv;
}
tuned::ColumnMajorRoutine column_major_routine(const std::string& r) {
    return r == "potrf" ? tuned::ColumnMajorRoutine::potrf
           : r == "potrs" ? tuned::ColumnMajorRoutine::potrs
                          : tuned::ColumnMajorRoutine::posv;
}

// The kernels of a call, or the reason the library refuses it.
struct Plan {
    std::vector<tuned::InterleavedKernelSpec> interleaved;
    std::vector<tuned::ColumnMajorSpec> column_major;
    std::string refused;
};

// As resolved_spec of interleaved_cholesky.cpp.
tuned::InterleavedKernelSpec interleaved_spec(tuned::Routine routine, const Case& c, int count, int chunk,
                                              const CholeskyConfig& config) {
    tuned::InterleavedKernelSpec spec;
    spec.routine = routine;
    spec.precision = c.precision;
    spec.uplo = c.uplo;
    spec.n = c.n;
    spec.config = tuned::resolve_interleaved_config(routine, c.precision, c.n, config);
    spec.config.chunk_size = 0;
    spec.wide_index =
        tuned::interleaved_needs_wide_index(c.n, routine == tuned::Routine::potrf ? 0 : c.nrhs, count, chunk);
    return spec;
}

// As potrf/potrs/posv_interleaved: the fused kernel, or posv's two kernels.
void plan_interleaved(const Case& c, int count, int chunk, const CholeskyConfig& config, Plan& plan) {
    const tuned::Routine routine = interleaved_routine(c.routine);
    std::vector<tuned::InterleavedKernelSpec> specs;
    if (routine == tuned::Routine::posv && tuned::is_two_kernel_posv(config)) {
        if (config.solve_warps_per_matrix <= 0) {
            plan.refused = "config.solve_warps_per_matrix: 2, 4 or 8 when config.solve_nb is set";
            return;
        }
        const tuned::TwoKernelPosvConfigs two = tuned::split_two_kernel_posv(config);
        specs.push_back(interleaved_spec(tuned::Routine::potrf, c, count, chunk, two.factor));
        specs.push_back(interleaved_spec(tuned::Routine::potrs, c, count, chunk, two.solve));
    } else {
        specs.push_back(interleaved_spec(routine, c, count, chunk, config));
    }
    for (const auto& spec : specs)
        if (const std::string problem = tuned::interleaved_spec_problem(spec); !problem.empty()) {
            plan.refused = problem;
            return;
        }
    plan.interleaved = specs;
}

// As cuda_backend::potrf_batched & co.: the configuration from the table nearest to the batch size,
// else the default; then the layout's kernels.
Plan plan_call(const Case& c) {
    Plan plan;
    CholeskyConfig config = tuning::lookup(c.routine, c.precision, c.layout, c.n, kArch, c.count).value_or(CholeskyConfig{});
    if (c.layout == LayoutKind::interleaved || c.layout == LayoutKind::chunked_interleaved) {
        if (config.through_interleaved) {
            plan.refused = "config.through_interleaved: false for interleaved layouts";
            return plan;
        }
        const int chunk = c.layout == LayoutKind::chunked_interleaved ? std::min(kChunk, c.count) : c.count;
        plan_interleaved(c, c.count, chunk, config, plan);
        return plan;
    }
    if (config.through_interleaved) {  // as through_interleaved.cu: the kernel runs on slices of a workspace
        const bool potrf = std::string(c.routine) == "potrf";
        const int slice = cuda_backend::through_interleaved_slice(c.n, potrf ? 0 : c.nrhs, element_bytes(c.precision), c.count);
        CholeskyConfig kernel = config;
        kernel.through_interleaved = false;
        kernel.chunk_size = 0;
        plan_interleaved(c, slice, slice, kernel, plan);
        return plan;
    }
    const tuned::ColumnMajorRoutine routine = column_major_routine(c.routine);
    const tuned::ColumnMajorSpec spec = tuned::column_major_spec(
        routine, c.precision, c.uplo, c.n, routine == tuned::ColumnMajorRoutine::potrf ? 0 : c.nrhs, config);
    if (const std::string problem = tuned::column_major_spec_problem(spec); !problem.empty()) plan.refused = problem;
    else plan.column_major.push_back(spec);
    return plan;
}

// What the digest covers: the text and every NVRTC option (a fast-math or register-cap option
// changes the binary as much as the text does).
std::string digest_of(const KernelSource& k) {
    std::string bytes = k.source;
    for (const auto& option : k.options) bytes += "\n// nvrtc option: " + option;
    return batchsolve::test::codegen::sha256_hex(bytes);
}

int usage(std::ostream& out, int code) {
    out << "usage: batchsolve_emit_all --output FILE [--sources DIR]\n"
           "  Writes '<kernel name>  <sha256>' for every distinct kernel generated for the cases of the\n"
           "  committed sm90 tuning tables (and the defaults where they have no entry), sorted by name.\n"
           "  --sources DIR  also writes each kernel's text to DIR/<kernel name>.cu (to diff two builds)\n"
           "  --check-names  generates every case's kernels, not each name once, and fails when one name\n"
           "                 stands for two texts (the launchers' kernel caches are keyed by name)\n";
    return code;
}

}  // namespace

int main(int argc, char** argv) {
    std::string output, sources;
    bool check_names = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") return usage(std::cout, 0);
        if (arg == "--check-names") {
            check_names = true;
            continue;
        }
        if ((arg == "--output" || arg == "--sources") && i + 1 < argc) {
            (arg == "--output" ? output : sources) = argv[++i];
            continue;
        }
        std::cerr << "batchsolve_emit_all: unknown or incomplete argument '" << arg << "'\n";
        return usage(std::cerr, 2);
    }
    if (output.empty()) return usage(std::cerr, 2);

    std::map<std::string, std::string> digests;  // kernel name -> digest
    std::set<std::string> refusals;
    long long cases = 0;
    for (const int count : kTableBatches)
        for (const char* routine : {"potrf", "potrs", "posv"})
            for (const Precision precision : {Precision::s, Precision::d, Precision::c, Precision::z})
                for (const Uplo uplo : {Uplo::lower, Uplo::upper})
                    for (const LayoutKind layout :
                         {LayoutKind::interleaved, LayoutKind::chunked_interleaved, LayoutKind::column_major})
                        for (int n = 1; n <= kMaxN; ++n)
                            for (const int nrhs : kNrhsCases) {
                                if (std::string(routine) == "potrf" && nrhs != kNrhsCases[0]) continue;
                                const Case c{routine, precision, uplo, layout, n, nrhs, count};
                                ++cases;
                                Plan plan;
                                try {
                                    plan = plan_call(c);
                                } catch (const std::exception& e) {
                                    plan.refused = e.what();
                                }
                                if (!plan.refused.empty()) {
                                    refusals.insert("refused " + describe(c) + ": " + plan.refused);
                                    continue;
                                }
                                std::vector<KernelSource> kernels;
                                for (const auto& spec : plan.interleaved)
                                    if (check_names || !digests.count(tuned::interleaved_kernel_name(spec)))
                                        kernels.push_back(tuned::family_of(spec).generate(spec));
                                for (const auto& spec : plan.column_major)
                                    if (check_names || !digests.count(tuned::column_major_kernel_name(spec)))
                                        kernels.push_back(tuned::family_of(spec).generate(spec));
                                for (const auto& k : kernels) {
                                    const std::string digest = digest_of(k);
                                    if (const auto known = digests.find(k.kernel_name);
                                        known != digests.end() && known->second != digest) {
                                        // The launchers cache kernels by name: two texts under one name
                                        // would make a call run another configuration's kernel.
                                        std::cerr << "batchsolve_emit_all: two different texts are named "
                                                  << k.kernel_name << " (second at " << describe(c) << ")\n";
                                        return 1;
                                    }
                                    digests[k.kernel_name] = digest;
                                    if (!sources.empty()) {
                                        std::ofstream s(sources + "/" + k.kernel_name + ".cu");
                                        s << k.source;
                                        for (const auto& option : k.options) s << "// nvrtc option: " << option << "\n";
                                        if (!s) {
                                            std::cerr << "batchsolve_emit_all: cannot write " << sources << "/"
                                                      << k.kernel_name << ".cu\n";
                                            return 1;
                                        }
                                    }
                                }
                            }

    std::ofstream out(output);
    out << "# Generated kernels of the sm90 tuning tables' cases and the defaults (batchsolve_emit_all):\n"
        << "# " << digests.size() << " distinct kernels from " << cases << " cases, " << refusals.size()
        << " cases refused. '<kernel name>  <sha256 of text + NVRTC options>', sorted by name.\n";
    for (const auto& [name, digest] : digests) out << name << "  " << digest << "\n";
    for (const auto& r : refusals) out << r << "\n";
    if (!out) {
        std::cerr << "batchsolve_emit_all: cannot write " << output << "\n";
        return 1;
    }
    std::cout << "batchsolve_emit_all: " << digests.size() << " kernels from " << cases << " cases ("
              << refusals.size() << " refused) -> " << output << "\n";
    return 0;
}
