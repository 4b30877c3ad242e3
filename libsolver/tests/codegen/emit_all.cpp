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
// A call is resolved into kernels by the library's own tuned::plan_kernels (src/cuda/tuned/
// kernel_plan.hpp), which follows the launchers; a call the library would refuse is listed as
// `refused <case>: <reason>`.
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
#include "cuda/tuned/kernel_plan.hpp"
#include "codegen/cholesky/column_major.hpp"
#include "codegen/cholesky/families.hpp"
#include "codegen/cholesky/interleaved.hpp"
#include "sha256.hpp"

namespace {

using namespace batchsolve;
namespace tuned = cuda_backend::tuned;      // plan_kernels
namespace cholesky = codegen::cholesky;  // the generators
using codegen::KernelSource;

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

// As cuda_backend::potrf_batched & co.: the configuration from the table nearest to the batch size,
// else the default; then the kernels the layout's launcher runs (tuned::plan_kernels, which the
// library's config_problem and workspace_bytes answer from too).
tuned::KernelPlan plan_call(const Case& c) {
    const CholeskyConfig config =
        tuning::lookup(c.routine, c.precision, c.layout, c.n, kArch, c.count).value_or(CholeskyConfig{});
    const int chunk = c.layout == LayoutKind::chunked_interleaved ? std::min(kChunk, c.count) : c.count;
    return tuned::plan_kernels(parse_routine(c.routine), c.precision, c.uplo, c.layout, c.n, c.nrhs, c.count, chunk,
                               config);
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
                                tuned::KernelPlan plan;
                                try {
                                    plan = plan_call(c);
                                } catch (const std::exception& e) {
                                    plan.problem = e.what();
                                }
                                if (!plan.problem.empty()) {
                                    refusals.insert("refused " + describe(c) + ": " + plan.problem);
                                    continue;
                                }
                                std::vector<KernelSource> kernels;
                                for (const auto& spec : plan.interleaved)
                                    if (check_names || !digests.count(cholesky::interleaved_kernel_name(spec)))
                                        kernels.push_back(cholesky::family_of(spec).generate(spec));
                                for (const auto& spec : plan.column_major)
                                    if (check_names || !digests.count(cholesky::column_major_kernel_name(spec)))
                                        kernels.push_back(cholesky::family_of(spec).generate(spec));
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
