// The byte-identical guard of the generator families other than the small Cholesky (whose guard is
// emit_all.cpp): the variable-size GEMM, the triangular kernels, the large Cholesky's fused POTF2 and
// the LDL^T factorisation's fixed kernels. For a fixed, representative set of specs of each family
// (explicit configurations, not the tuning tables' picks, so that a retuned table does not move the
// guard) it writes one line per kernel:
//
//   <family> <kernel name>  t=<threads per block> s=<dynamic shared bytes>  <sha256 of text + NVRTC options>
//
// and `refused <family> <spec>: <reason>` for a spec the family cannot implement (the refusals are
// part of what a move must keep). A fixed (precompiled) kernel has no text: its line carries the
// digest of its description (name and resources) instead.
//
//   batchsolve_emit_families --output FILE
//
// ctest codegen.family_digests regenerates the file and compares it with the committed
// libsolver/tests/codegen/family_digests.txt. After a deliberate change of generated text, run
//   build/libsolver/tests/codegen/batchsolve_emit_families --output libsolver/tests/codegen/family_digests.txt
// and say in the commit which kernels changed and why (and which emulation or NVRTC test covers them).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/blas3/gemm.hpp"
#include "codegen/large/potf2.hpp"
#include "codegen/ldlt/ldlt_family.hpp"
#include "codegen/triangular/triangular.hpp"
#include "sha256.hpp"

namespace {

using namespace batchsolve;
using codegen::KernelResources;
using codegen::KernelSource;

constexpr Precision kPrecisions[] = {Precision::s, Precision::d, Precision::c, Precision::z};

struct Output {
    std::map<std::string, std::string> lines;  // "<family> <name>" -> the rest of its line
    std::set<std::string> refusals;

    void kernel(const std::string& family, const KernelSource& k, const KernelResources& r) {
        std::string bytes = k.source;
        for (const auto& option : k.options) bytes += "\n// nvrtc option: " + option;
        const std::string line = "t=" + std::to_string(r.threads_per_block) + " s=" + std::to_string(r.shared_bytes) + "  " +
                                 batchsolve::test::codegen::sha256_hex(bytes);
        const std::string key = family + " " + k.kernel_name;
        if (const auto known = lines.find(key); known != lines.end() && known->second != line) {
            // A launcher keys its kernels by name: two texts under one name would run the wrong one.
            std::cerr << "batchsolve_emit_families: two different kernels are named " << key << "\n";
            std::exit(1);
        }
        lines[key] = line;
    }
    void refused(const std::string& family, const std::string& spec, const std::string& reason) {
        refusals.insert("refused " + family + " " + spec + ": " + reason);
    }
};

// One spec through a family's interface (codegen/family.hpp): its kernel, or its refusal.
template <class Family>
void emit(Output& out, const std::string& tag, const Family& family, const typename Family::spec_type& spec,
          const std::string& refused_as = "") {
    if (const std::string problem = family.can_implement(spec); !problem.empty()) {
        out.refused(tag, refused_as.empty() ? family.kernel_name(spec) : refused_as, problem);
        return;
    }
    out.kernel(tag, family.generate(spec), family.resources(spec));
}

// ---- GEMM: every operand form and part, at tile shapes of the SIMT and both tensor-core forms ----
void gemm(Output& out) {
    namespace b = codegen::blas3;
    using Op = b::GemmOperand;
    // (op_a, op_b, part): GEMM's transposes, SYMM/HEMM on either side, the triangles of SYRK/HERK/SYR2K
    struct Form {
        Op a, b;
        b::GemmPart part;
        bool real_diagonal;
    };
    std::vector<Form> forms;
    for (Op a : {Op::no_trans, Op::trans, Op::conj_trans})
        for (Op bb : {Op::no_trans, Op::trans, Op::conj_trans}) forms.push_back({a, bb, b::GemmPart::full, false});
    for (Op s : {Op::symmetric_lower, Op::symmetric_upper, Op::hermitian_lower, Op::hermitian_upper}) {
        forms.push_back({s, Op::no_trans, b::GemmPart::full, false});
        forms.push_back({Op::no_trans, s, b::GemmPart::full, false});
    }
    for (b::GemmPart part : {b::GemmPart::lower, b::GemmPart::upper}) {
        forms.push_back({Op::no_trans, Op::trans, part, false});
        forms.push_back({Op::no_trans, Op::conj_trans, part, true});
        forms.push_back({Op::conj_trans, Op::no_trans, part, true});
    }
    forms.push_back({Op::symmetric_lower, Op::symmetric_upper, b::GemmPart::full, false});  // refused: two symmetric
    // blk_m, blk_n, blk_k, dim_x, dim_y, tensor_cores, min_blocks_per_sm[, stages, copy_offsets, tile_list, dmma16, tc_row]
    const GemmConfig configs[] = {
        {32, 32, 8, 16, 16, false, 0}, {64, 64, 8, 16, 16, false, 0}, {32, 32, 8, 8, 8, false, 0},
        {64, 32, 16, 16, 8, false, 2}, {32, 32, 8, 2, 2, true, 0},    {64, 64, 8, 2, 4, true, 0},
        {64, 64, 16, 2, 2, true, 1},   {16, 16, 4, 4, 4, false, 0},   {256, 256, 64, 16, 16, false, 0},  // refused
        // the ring copying from pointers advanced per slice (stages 3, copy_offsets 3) on 16x8x8 DMMA (d;
        // refused elsewhere), and d's slice rows 8 apart (tc_row 8; refused for the other precisions)
        {64, 64, 8, 2, 2, true, 4, 3, 3, 0, 1},  {32, 32, 8, 2, 2, true, 6, 0, 3, 0, 0, 8},
    };
    for (Precision p : kPrecisions)
        for (const Form& f : forms)
            for (const GemmConfig& c : configs)
                for (bool full_tiles : {false, true}) {
                    b::GemmSpec spec;
                    spec.precision = p, spec.op_a = f.a, spec.op_b = f.b, spec.part = f.part;
                    spec.real_diagonal = f.real_diagonal, spec.full_tiles = full_tiles, spec.config = c;
                    emit(out, "gemm", b::gemm_family(), spec);
                }
    // fused kernels (every size bin in one launch, bin_launch 2): the shipped d bins at x = 512 (DMMA on
    // both fragment forms, advanced pointers), the s bins (SIMT), and paths of two block sizes (refused)
    const std::vector<GemmConfig> fused_sets[] = {
        {{64, 64, 8, 2, 2, true, 4, 0, 3, 0, 1}, {64, 32, 8, 2, 2, true, 6, 0, 3}, {64, 32, 8, 2, 2, true, 6}},
        {{64, 64, 16, 16, 8, false, 4, 0, 3}, {128, 32, 16, 16, 8, false, 4, 0, 3}},
        {{64, 64, 8, 16, 16, false, 0}, {64, 32, 8, 16, 8, false, 4, 3}},
    };
    for (Precision p : kPrecisions)
        for (const Form& f : forms)
            for (const std::vector<GemmConfig>& paths : fused_sets) {
                b::GemmSpec spec;
                spec.precision = p, spec.op_a = f.a, spec.op_b = f.b, spec.part = f.part;
                spec.real_diagonal = f.real_diagonal, spec.fused = paths;
                emit(out, "gemm", b::gemm_family(), spec);
            }
}

// ---- triangular: every kind, precision and orientation over the blockings the launchers take ----
void triangular(Output& out) {
    namespace t = codegen::triangular;
    for (Precision p : kPrecisions) {
        for (t::KernelKind kind : {t::KernelKind::solve, t::KernelKind::multiply, t::KernelKind::invert})
            for (bool lower : {true, false})
                for (int columns : {1, 2, 3, 4, 5})
                    for (int warps : {1, 2, 4, 8, 33}) {
                        if (kind == t::KernelKind::invert && columns != 4) continue;  // not in its text
                        t::TriangularKernelSpec spec;
                        spec.kind = kind, spec.precision = p, spec.lower = lower;
                        spec.config.columns_per_thread = columns, spec.config.warps_per_block = warps;
                        emit(out, "triangular", t::triangular_family(), spec);
                    }
        for (int matrices : {1, 2}) {
            t::TriangularKernelSpec panel;
            panel.kind = t::KernelKind::potrf_panel, panel.precision = p, panel.config.warps_per_block = matrices;
            emit(out, "triangular", t::triangular_family(), panel,
                 t::triangular_family().kernel_name(panel) + "_m" + std::to_string(matrices));
        }
    }
}

// ---- fused POTF2: precisions, triangles, capacities, strip widths and forms, resident or not ----
void potf2(Output& out) {
    namespace l = codegen::large;
    const auto& family = l::potf2_family();
    // The refusals: a complex precision, a strip width, a capacity and a block size it does not take.
    const l::Potf2Spec refused[] = {{Precision::z, Uplo::lower, 64, {}}, {Precision::d, Uplo::lower, 64, {12, 256}},
                                    {Precision::d, Uplo::lower, 48, {}}, {Precision::s, Uplo::upper, 64, {16, 1000}}};
    for (const l::Potf2Spec& spec : refused)
        if (const std::string problem = family.can_implement(spec); !problem.empty())
            out.refused("potf2", family.kernel_name(spec) + "_" + precision_letter(spec.precision), problem);
    for (Precision p : {Precision::s, Precision::d})
        for (Uplo u : {Uplo::lower, Uplo::upper})
            for (int capacity : {32, 64, 96, 128, 256, 512, 1024})
                for (int ib : {8, 16, 32})
                    for (l::StripFactor strip : {l::StripFactor::columns, l::StripFactor::warp})
                        for (int threads : {0, 128})  // 0: the family's default
                            for (int resident : {-1, 0, 1}) {  // -1: the family's default
                                l::Potf2Spec spec;
                                spec.precision = p, spec.uplo = u, spec.capacity = capacity;
                                spec.config.ib = ib, spec.config.strip = strip;
                                spec.config = family.default_config(spec);
                                if (threads != 0) spec.config.threads = threads;
                                if (resident >= 0) spec.config.resident = resident == 1;
                                emit(out, "potf2", family, spec, family.kernel_name(spec) + "_" + precision_letter(p));
                            }
}

// ---- LDL^T: the fixed kernels' descriptions (no text: the digest is of the name, the resources and
// the compiled blocking), every kernel, precision and symmetry, and a blocking they were not built for ----
void ldlt(Output& out) {
    namespace d = codegen::ldlt;
    const auto& family = d::ldlt_family();
    for (Precision p : kPrecisions)
        for (d::LdltKernel kernel : {d::LdltKernel::max_abs_lower, d::LdltKernel::diagonal_leaf, d::LdltKernel::keep_and_scale,
                                     d::LdltKernel::scale_rows})
            for (bool hermitian : {false, true})
                for (int variant : {0, 1}) {
                    d::LdltKernelSpec spec;
                    spec.kernel = kernel, spec.precision = p, spec.hermitian = hermitian;
                    spec.config = family.default_config(spec);
                    if (variant == 1) spec.config.leaf_order *= 2;  // not what the kernels were compiled for
                    if (const std::string problem = family.can_implement(spec); !problem.empty()) {
                        out.refused("ldlt", family.kernel_name(spec) + (variant ? "_other_blocking" : ""), problem);
                        continue;
                    }
                    KernelSource k = family.generate(spec);
                    k.source = "fixed kernel " + k.kernel_name + " leaf_order " + std::to_string(spec.config.leaf_order) +
                               " threads " + std::to_string(spec.config.threads);
                    out.kernel("ldlt", k, family.resources(spec));
                }
}

int usage(std::ostream& out, int code) {
    out << "usage: batchsolve_emit_families --output FILE\n"
           "  Writes '<family> <kernel name>  t=<threads> s=<shared bytes>  <sha256>' for a fixed set of specs of\n"
           "  the GEMM, triangular, fused POTF2 and LDL^T families (and the specs each refuses), sorted.\n";
    return code;
}

}  // namespace

int main(int argc, char** argv) {
    std::string output;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") return usage(std::cout, 0);
        if (arg == "--output" && i + 1 < argc) {
            output = argv[++i];
            continue;
        }
        std::cerr << "batchsolve_emit_families: unknown or incomplete argument '" << arg << "'\n";
        return usage(std::cerr, 2);
    }
    if (output.empty()) return usage(std::cerr, 2);

    Output out;
    gemm(out);
    triangular(out);
    potf2(out);
    ldlt(out);

    std::ofstream file(output);
    file << "# Kernels of the GEMM, triangular, fused POTF2 and LDL^T families (batchsolve_emit_families): " << out.lines.size()
         << " kernels, " << out.refusals.size() << " refusals.\n"
         << "# '<family> <kernel name>  t=<threads> s=<shared bytes>  <sha256 of text + NVRTC options>', sorted.\n";
    for (const auto& [key, rest] : out.lines) file << key << "  " << rest << "\n";
    for (const auto& r : out.refusals) file << r << "\n";
    if (!file) {
        std::cerr << "batchsolve_emit_families: cannot write " << output << "\n";
        return 1;
    }
    std::cout << "batchsolve_emit_families: " << out.lines.size() << " kernels, " << out.refusals.size() << " refusals -> "
              << output << "\n";
    return 0;
}
