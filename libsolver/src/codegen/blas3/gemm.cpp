// The variable-size GEMM generator (gemm.hpp): CUDA source for one GemmSpec, in a SIMT form (each
// thread a strided sub-tile of C in registers, A and B slices staged in shared memory with the next
// slice prefetched into registers) and, for double precision, an FP64 tensor-core form (each warp a
// sub-tile of 8 x 8 DMMA fragments), plus the GemmConfig helpers of vbatched_blas.hpp. Either form
// stages its k-slices through registers (stages 0) or through a ring of shared slices filled by
// asynchronous copies (stages >= 2, cp.async), and either runs every problem of the batch or only
// those of a list (the size-binned dispatch of the launcher: one list per bin, built on the device).
#include "codegen/blas3/gemm.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <vector>

#include "codegen/common.hpp"
#include "codegen/prelude.hpp"
#include "codegen/source_writer.hpp"

namespace batchsolve {

std::string to_string(const GemmConfig& c) {
    nlohmann::ordered_json j;
#define BATCHSOLVE_GEMM_FIELD_TO_JSON(field) j[#field] = c.field;
    BATCHSOLVE_GEMM_CONFIG_FIELDS(BATCHSOLVE_GEMM_FIELD_TO_JSON)
#undef BATCHSOLVE_GEMM_FIELD_TO_JSON
    // the default address form left out: the tables, manifests and kernel keys written before the
    // field existed read the same
    if (c.copy_offsets == 0) j.erase("copy_offsets");
    if (c.tile_list == 0) j.erase("tile_list");
    if (c.dmma16 == 0) j.erase("dmma16");
    if (c.tc_row == 0) j.erase("tc_row");
    if (c.bin_launch == 0) j.erase("bin_launch");
    if (c.bin_order == 0) j.erase("bin_order");
    return j.dump();
}

GemmConfig parse_gemm_config(const std::string& json_object) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(json_object);
    } catch (const std::exception& e) {
        throw InvalidArgument("parse_gemm_config", "json_object", std::string("valid JSON (") + e.what() + ")");
    }
    if (!j.is_object()) throw InvalidArgument("parse_gemm_config", "json_object", "a JSON object");
    GemmConfig c;
    for (auto it = j.begin(); it != j.end(); ++it) {
        bool known = false;
#define BATCHSOLVE_GEMM_FIELD_FROM_JSON(field)                                                               \
    if (it.key() == #field) {                                                                                \
        known = true;                                                                                        \
        try {                                                                                                \
            c.field = it.value().get<decltype(c.field)>();                                                   \
        } catch (const std::exception&) {                                                                    \
            throw InvalidArgument("parse_gemm_config", "config." #field, "a value of the field's type");      \
        }                                                                                                    \
    }
        BATCHSOLVE_GEMM_CONFIG_FIELDS(BATCHSOLVE_GEMM_FIELD_FROM_JSON)
#undef BATCHSOLVE_GEMM_FIELD_FROM_JSON
        if (!known) throw InvalidArgument("parse_gemm_config", "config." + it.key(), "a GemmConfig field");
    }
    return c;
}

std::string gemm_config_problem(Precision p, const GemmConfig& c) {
    codegen::blas3::GemmSpec spec;
    spec.precision = p;
    spec.config = c;
    return codegen::blas3::gemm_family().can_implement(spec);
}

}  // namespace batchsolve

namespace batchsolve::codegen::blas3 {

namespace {

std::string I(long long v) { return std::to_string(v); }

// copy_offsets 1, 2: the largest leading dimension whose slice offsets fit 31 bits (a slice is at most
// 256 x 256 elements: rr + cc ld < 256 + 255 ld)
constexpr long long kMaxLd32 = (2147483647LL - 256) / 256;

// d's tensor-core slices' rows (config.tc_row): 4 elements apart mod 16 keeps the fragment reads (4 k-rows
// x 8 adjacent elements per warp) conflict-free and spreads the stores of a k-fastest slice (op(B) = B,
// op(A) = A^T: a warp's 32 threads hold 8 k-rows x 4 columns at blk_k 8) over all 16 eight-byte bank pairs,
// where rows 8 apart hit 8 of them (4-way conflicts). Measured on the H200: every d tile of x >= 128 faster,
// the x = 512 class's 64x64 16x8x8 tile 24.9 against 21.3 TFLOP/s (results/2026-12-03-h200-6296ebe-gemm-ktiles);
// at x = 32 the two layouts were within the run-to-run spread, either way, so the table chooses per class.
// BATCHSOLVE_GEMM_TC_ROW=4 or 8 in the environment, a measurement switch, overrides every d tensor-core
// kernel's choice (the kernels are named by the layout they get).
int tc_row_override() {
    static const int row = [] {
        const char* v = std::getenv("BATCHSOLVE_GEMM_TC_ROW");
        const std::string s = v ? v : "";
        return s == "4" ? 4 : s == "8" ? 8 : 0;
    }();
    return row;
}
// (d only: complex single's TF32 slices, also 8-byte elements, keep rows 8 apart until measured.)
bool tc_row_applies(const GemmSpec& s) { return s.config.tensor_cores && s.precision == Precision::d; }
// The rows' spacing a d tensor-core kernel gets (4 or 8); 0 where the field does not apply.
int tc_row(const GemmSpec& s) {
    if (!tc_row_applies(s)) return 0;
    if (const int forced = tc_row_override()) return forced;
    return s.config.tc_row == 8 ? 8 : 4;
}

// Row length (elements) of a shared slice of `width` elements. SIMT: one element of padding, so that
// the transposed stores of op(X) = X^T do not fall into one bank. Tensor cores: a lane reads row
// k4 + q (q = lane % 4) of the slice, so the four rows should start 8 words (single) or 16 banks
// (double, complex single) apart: the warp's read then takes the fewest wavefronts its bytes need.
bool is_symmetric(GemmOperand op) { return op >= GemmOperand::symmetric_lower; }
bool is_transposed(GemmOperand op) { return op == GemmOperand::trans || op == GemmOperand::conj_trans; }
bool is_hermitian(GemmOperand op) { return op == GemmOperand::hermitian_lower || op == GemmOperand::hermitian_upper; }

// The cp.async ring applies: stages >= 2 and no Hermitian operand (whose diagonal and conjugated
// triangle are values, not addresses: those take the register path whatever stages says).
bool pipelined(const GemmSpec& s) { return s.config.stages >= 2 && !is_hermitian(s.op_a) && !is_hermitian(s.op_b); }
int buffers(const GemmSpec& s) { return pipelined(s) ? s.config.stages : 2; }
// SIMT slices whose rows are 16-byte aligned (read as vectors): the ring's and, with copy_offsets 3, the
// register path's (the register path's transposed stores then meet some bank conflicts; its reads,
// many more per slice, take a quarter of the instructions).
bool vector_rows(const GemmSpec& s) { return !s.config.tensor_cores && (pipelined(s) || s.config.copy_offsets == 3); }

// Row length (elements) of a shared slice of `width` elements. SIMT: one element of padding, so that
// the transposed stores of op(X) = X^T do not fall into one bank; with the cp.async ring, 16 bytes of
// padding instead, which keeps every row 16-byte aligned for the vector reads of the SIMT product
// and still spreads a k-fastest copy (consecutive threads, consecutive rows of one column) over the
// banks. Tensor cores: a lane reads row
// k4 + q (q = lane % 4) of the slice, so the four rows should start 8 words apart (single) or, for
// d, 4 elements apart mod 16 (above), else 16 banks: the warp's read then takes the fewest wavefronts its
// bytes need.
int slice_row(const GemmSpec& s, int width) {
    if (!s.config.tensor_cores) return vector_rows(s) ? width + std::max(1, 16 / element_bytes(s.precision)) : width + 1;
    const int words = element_bytes(s.precision) / 4;
    if (words >= 4) return width;  // a complex double row of 8 lanes already fills all 32 banks
    const int period = 32 / words, want = tc_row(s) == 4 ? 4 : 8;
    int row = width;
    while (row % period != want) ++row;
    return row;
}

// Bytes of the A slices at the start of the dynamic shared memory (the B slices follow; 16-byte
// aligned with the ring, whose B rows are read as vectors).
long long a_slices_bytes(const GemmSpec& s) {
    const long long bytes = (long long)buffers(s) * s.config.blk_k * slice_row(s, s.config.blk_m) * element_bytes(s.precision);
    return pipelined(s) || vector_rows(s) ? (bytes + 15) / 16 * 16 : bytes;
}

// Device function returning element (r, c) of op(X) from the stored X (column-major, ld), for
// 0 <= r, c within op(X)'s bounds.
std::string element_function(const std::string& name, GemmOperand op) {
    std::ostringstream o;
    o << "BS_DEVICE T " << name << "(const T* x, long long ld, int r, int c) {\n";
    switch (op) {
        case GemmOperand::no_trans: o << "  return x[r + c * ld];\n"; break;
        case GemmOperand::trans: o << "  return x[c + r * ld];\n"; break;
        case GemmOperand::conj_trans: o << "  return bs_conj(x[c + r * ld]);\n"; break;
        case GemmOperand::symmetric_lower: o << "  return r >= c ? x[r + c * ld] : x[c + r * ld];\n"; break;
        case GemmOperand::symmetric_upper: o << "  return r <= c ? x[r + c * ld] : x[c + r * ld];\n"; break;
        case GemmOperand::hermitian_lower:
            o << "  return r > c ? x[r + c * ld] : r < c ? bs_conj(x[c + r * ld]) : bs_real_only(x[r + r * ld]);\n";
            break;
        case GemmOperand::hermitian_upper:
            o << "  return r < c ? x[r + c * ld] : r > c ? bs_conj(x[c + r * ld]) : bs_real_only(x[r + r * ld]);\n";
            break;
    }
    o << "}\n";
    return o.str();
}

// Device function returning the address of element (r, c) of op(X) in the stored X (the ring copies
// addresses; a conjugate transpose is conjugated when the slice is read).
std::string address_function(const std::string& name, GemmOperand op) {
    std::ostringstream o;
    o << "BS_DEVICE const T* " << name << "(const T* x, long long ld, int r, int c) {\n";
    switch (op) {
        case GemmOperand::no_trans: o << "  return x + (r + c * ld);\n"; break;
        case GemmOperand::trans:
        case GemmOperand::conj_trans: o << "  return x + (c + r * ld);\n"; break;
        case GemmOperand::symmetric_lower: o << "  return r >= c ? x + (r + c * ld) : x + (c + r * ld);\n"; break;
        case GemmOperand::symmetric_upper: o << "  return r <= c ? x + (r + c * ld) : x + (c + r * ld);\n"; break;
        default: o << "  return nullptr;  // not reached: Hermitian operands take the register path\n"; break;
    }
    o << "}\n";
    return o.str();
}

// FP64 tensor cores (d) on 16x8x8 fragments where the warp tile and the k-slice hold whole ones (else, or
// with BATCHSOLVE_GEMM_DMMA=8x8x4 in the environment, a measurement switch, the 8x8x4 form).
// Off by default: on the H200 (results/2026-12-02-h200-4df29b6-gemm-vbatched-final) 16x8x8 was faster
// only with the 64x64 tile at x = 512 (0.88x vs 0.87x cuBLAS) and slower with the 64x32 tile the
// other bins run (x = 256: 0.86x vs 0.93x), so BATCHSOLVE_GEMM_DMMA=16x8x8 turns it on for measuring.
bool dmma_8x8x4_forced() {
    static const bool forced = [] {
        const char* v = std::getenv("BATCHSOLVE_GEMM_DMMA");
        return !(v && std::string(v) == "16x8x8");
    }();
    return forced;
}
bool dmma16_fits(const GemmSpec& s) {
    const GemmConfig& c = s.config;
    // real d only: z's four real products per fragment on 16x8x8 need twice the registers (its 64x32
    // tile with 4 blocks per SM spilled 176 bytes, against 80 on 8x8x4)
    return c.tensor_cores && s.precision == Precision::d && (c.blk_m / c.dim_x) % 16 == 0 && (c.blk_n / c.dim_y) % 8 == 0 &&
           c.blk_k % 8 == 0;
}
// config.dmma16 asks for the 16x8x8 form (the tuning table's choice); the environment switch turns it on
// for every kernel that fits (a measurement aid)
bool dmma16(const GemmSpec& s) { return dmma16_fits(s) && (s.config.dmma16 == 1 || !dmma_8x8x4_forced()); }

// The tile's part of a kernel name (name_of), also one path's of a fused kernel.
std::string tile_tag(const GemmSpec& s) {
    const GemmConfig& c = s.config;
    std::ostringstream o;
    o << c.blk_m << "x" << c.blk_n << "x" << c.blk_k << "_" << c.dim_x << "x" << c.dim_y
      << (c.min_blocks_per_sm > 1 ? "_min" + std::to_string(c.min_blocks_per_sm) : "")
      << (c.tensor_cores ? (is_single(s.precision) ? "_tf32" : "_dmma") : "")
      << (c.stages >= 2 ? "_st" + std::to_string(c.stages) : "")
      << (dmma16(s) ? "_m16" : "")  // the 16x8x8 form, asked for
      << (c.copy_offsets == 1 ? "_o32" : c.copy_offsets == 2 ? "_o32u" : c.copy_offsets == 3 ? "_inc" : "")
      << (c.tile_list ? "_tiles" : "")
      << (tc_row(s) == 8 ? "_r8" : "");  // d's slice rows 8 apart (config.tc_row or the switch)
    return o.str();
}

// One path of a fused kernel: the listed kernel of its tile, as the launcher would run it alone.
GemmSpec fused_path(const GemmSpec& s, std::size_t i) {
    GemmSpec p = s;
    p.fused.clear();
    p.config = s.fused[i];
    p.problem_list = true;
    return p;
}

std::string name_of(const GemmSpec& s) {
    std::ostringstream o;
    o << "bs_" << precision_letter(s.precision) << "gemm_vbatched_" << to_string(s.op_a) << "_" << to_string(s.op_b);
    if (s.part != GemmPart::full) o << "_" << to_string(s.part);
    if (s.real_diagonal) o << "_realdiag";
    if (s.full_tiles) o << "_fulltiles";
    if (!s.fused.empty()) {  // every path's tile, in the order of the block ranges
        o << "_fused";
        for (std::size_t i = 0; i < s.fused.size(); ++i) o << (i ? "_then_" : "_") << tile_tag(fused_path(s, i));
        return o.str();
    }
    if (s.problem_list) o << "_listed";
    if (s.region == GemmRegion::interior) o << "_interior";
    if (s.region == GemmRegion::edge) o << "_edge" << s.edge_m << "x" << s.edge_n;
    o << "_" << tile_tag(s);
    return o.str();
}

// Emits the parts both forms share: the signature, the loop over problems, the sizes and pointers of
// one problem, the subgrid truncation, the staging of one k-slice. `compute` and `epilogue` emit the
// form's own code.
class Generator {
public:
    explicit Generator(const GemmSpec& spec) : s_(spec), c_(spec.config) {
        threads_ = c_.tensor_cores ? 32 * c_.dim_x * c_.dim_y : c_.dim_x * c_.dim_y;
        // Stored slices: op(A) tile blk_m x blk_k as sA[kk][r], op(B) tile blk_k x blk_n as sB[kk][c];
        // rows padded against bank conflicts of the transposed stores.
        lda_s_ = slice_row(s_, c_.blk_m);
        ldb_s_ = slice_row(s_, c_.blk_n);
        a_per_thread_ = ceil_div(c_.blk_m * c_.blk_k, threads_);
        b_per_thread_ = ceil_div(c_.blk_k * c_.blk_n, threads_);
        pipelined_ = pipelined(spec);
        // The SIMT product reads its rows and columns of the slices as 16-byte vectors where the ring's
        // aligned rows allow it (each thread then owns runs of `vec_` adjacent rows and columns).
        const int eb = element_bytes(s_.precision), v = 16 / eb;
        const int tm = c_.blk_m / c_.dim_x, tn = c_.blk_n / c_.dim_y;
        vec_ = vector_rows(s_) && v > 1 && tm % v == 0 && tn % v == 0 ? v : 1;
        // 32-bit offsets from the slice base: the operands whose element (r, c) lies at a fixed stored
        // offset from the slice's corner (not a symmetric or Hermitian operand, whose triangle depends on r, c)
        o32_a_ = (c_.copy_offsets == 1 || c_.copy_offsets == 2) && !is_symmetric(s_.op_a);
        o32_b_ = (c_.copy_offsets == 1 || c_.copy_offsets == 2) && !is_symmetric(s_.op_b);
        // copy_offsets 3: each thread's element pointers formed once per problem and advanced by one slice
        // per step, the row (column) bound folded into the element's k limit; the operands read through
        // their stored layout (not symmetric or Hermitian ones). The register path loads through them, the
        // ring takes its copies' sources from them (inc_copy).
        auto incremental = [&](GemmOperand op) { return c_.copy_offsets == 3 && !is_symmetric(op); };
        inc_a_ = incremental(s_.op_a);
        inc_b_ = incremental(s_.op_b);
    }

    KernelSource generate() {
        KernelSource k;
        k.kernel_name = name_of(s_);
        w_.raw("// " + k.kernel_name + ": generated by libsolver/src/codegen/blas3/gemm.cpp\n");
        w_.raw(kernel_prelude(s_.precision));  // the one prelude (codegen/prelude.hpp)
        helpers();
        kernel(k.kernel_name);
        host_entry(k.kernel_name);
        k.source = w_.str();
        k.options = {"--std=c++17"};
        return k;
    }

    // One path of a fused kernel (a listed spec): its helpers and its body as a device function `name`
    // of the kernel's arguments, the list of its bin and the block's coordinates in the path's own grid
    // (bs_bx, bs_by, bs_bz of bs_gz), which stand for blockIdx and gridDim.z of a kernel of its own.
    std::string path_function(const std::string& name) {
        device_function_ = true;
        helpers();
        kernel(name);
        return w_.str();
    }

private:
    void helpers() {
        w_.raw(element_function("bs_op_a", s_.op_a));
        w_.raw(element_function("bs_op_b", s_.op_b));
        w_.raw("BS_DEVICE int bs_size(const int* v, int subtract, int limit, int i) {\n"
               "  long long x = v ? (long long)v[i] - subtract : limit;\n"
               "  x = x > limit ? limit : x;\n"
               "  return x < 0 ? 0 : (int)x;\n"
               "}\n");
        if (c_.tensor_cores) w_.raw(is_single(s_.precision) ? tf32_function() : dmma_function());
        if (dmma16()) w_.raw(dmma16_function());
        if (pipelined_) {
            w_.raw(address_function("bs_addr_a", s_.op_a));
            w_.raw(address_function("bs_addr_b", s_.op_b));
            w_.raw(copy_functions());
            if (inc_a_ || inc_b_) w_.raw(shared_address_functions());
        }
    }

    // One element global -> shared without a register (cp.async; src-size 0 writes zeros), the group
    // commit and the wait; under the host emulator a plain copy, complete at once.
    std::string copy_functions() const {
        const std::string eb = I(element_bytes(s_.precision));
        return "#ifndef BS_HOST_EMULATION\n"
               "BS_DEVICE void bs_copy_async(T* dst, const T* src, bool valid) {\n"
               "  unsigned d;\n"
               "  asm volatile(\"{ .reg .u64 s; cvta.to.shared.u64 s, %1; cvt.u32.u64 %0, s; }\" : \"=r\"(d) : \"l\"(dst));\n"
               "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], " + eb + ", %2;\\n\" :: \"r\"(d), \"l\"(src), \"r\"(valid ? " + eb +
               " : 0) : \"memory\");\n"
               "}\n"
               "BS_DEVICE void bs_copy_commit() { asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\"); }\n"
               "template <int N> BS_DEVICE void bs_copy_wait() { asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(N) : \"memory\"); }\n"
               "#else\n"
               "BS_DEVICE void bs_copy_async(T* dst, const T* src, bool valid) { *dst = valid ? *src : bs_zero(); }\n"
               "BS_DEVICE void bs_copy_commit() {}\n"
               "template <int N> BS_DEVICE void bs_copy_wait() {}\n"
               "#endif\n";
    }

    // The ring's copies from advanced pointers (inc_copy) name their destinations by 32-bit shared
    // addresses, a thread's first per slice and the rest a constant number of bytes after it: the
    // generic 64-bit destination of bs_copy_async, converted inside its asm, kept 8 such pointers live
    // per operand (ptxas for sm_90: 112 bytes of spills on d's 64x64x8 2x2 tile with 4 blocks per SM).
    // Under the host emulator a pointer and an element count.
    std::string shared_address_functions() const {
        const std::string eb = I(element_bytes(s_.precision));
        return "#ifndef BS_HOST_EMULATION\n"
               "typedef unsigned bs_saddr;\n"
               "BS_DEVICE bs_saddr bs_saddr_of(T* p) {\n"
               "  unsigned d;\n"
               "  asm(\"{ .reg .u64 s; cvta.to.shared.u64 s, %1; cvt.u32.u64 %0, s; }\" : \"=r\"(d) : \"l\"(p));\n"
               "  return d;\n"
               "}\n"
               "BS_DEVICE bs_saddr bs_saddr_add(bs_saddr a, int elements) { return a + unsigned(elements) * " + eb + "u; }\n"
               "BS_DEVICE void bs_copy_async_at(bs_saddr d, const T* src, bool valid) {\n"
               "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], " + eb + ", %2;\\n\" :: \"r\"(d), \"l\"(src), \"r\"(valid ? " + eb +
               " : 0) : \"memory\");\n"
               "}\n"
               "#else\n"
               "typedef T* bs_saddr;\n"
               "BS_DEVICE bs_saddr bs_saddr_of(T* p) { return p; }\n"
               "BS_DEVICE bs_saddr bs_saddr_add(bs_saddr a, int elements) { return a + elements; }\n"
               "BS_DEVICE void bs_copy_async_at(bs_saddr d, const T* src, bool valid) { *d = valid ? *src : bs_zero(); }\n"
               "#endif\n";
    }

    // With the ring, or the SIMT vector reads of copy_offsets 3: the reads of one k-step are not hoisted
    // above the previous step's (the unrolled slice would otherwise hold every step's operands in
    // registers at once). The DMMA register path keeps its reads free to move, as with copy_offsets 0.
    void fence_step() {
        if (pipelined_ || (c_.copy_offsets == 3 && !c_.tensor_cores)) w_.line("BS_FENCE();");
    }

    // A value read from the A (B) slices: the ring stores a conjugate transpose as it is stored.
    std::string rd_a(const std::string& e) const { return pipelined_ && s_.op_a == GemmOperand::conj_trans ? "bs_conj(" + e + ")" : e; }
    std::string rd_b(const std::string& e) const { return pipelined_ && s_.op_b == GemmOperand::conj_trans ? "bs_conj(" + e + ")" : e; }

    std::string tf32_function() const {
        return "// D = A B + C on one 16x8x8 TF32 fragment, FP32 accumulation (lane l, g = l/4, q = l%4: a = A(g, q),\n"
               "// A(g+8, q), A(g, q+4), A(g+8, q+4); b = B(q, g), B(q+4, g); c = C(g, 2q), C(g, 2q+1), C(g+8, 2q), C(g+8, 2q+1))\n"
               "#ifndef BS_HOST_EMULATION\n"
               "BS_DEVICE unsigned bs_to_tf32(float x) { unsigned r; asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x)); return r; }\n"
               "BS_DEVICE void bs_tf32_mma(float (&c)[4], const float (&a)[4], const float (&b)[2]) {\n"
               "  asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, \"\n"
               "               \"{%0, %1, %2, %3};\\n\"\n"
               "               : \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), \"+f\"(c[3])\n"
               "               : \"r\"(bs_to_tf32(a[0])), \"r\"(bs_to_tf32(a[1])), \"r\"(bs_to_tf32(a[2])), \"r\"(bs_to_tf32(a[3])),\n"
               "                 \"r\"(bs_to_tf32(b[0])), \"r\"(bs_to_tf32(b[1])));\n"
               "}\n"
               "#else\n"
               "// the same product from the fragment layout, through shuffles, inputs rounded to TF32 (10-bit mantissa)\n"
               "inline float bs_round_tf32(float x) {\n"
               "  unsigned u; std::memcpy(&u, &x, 4); u = (u + 0x1000u) & 0xffffe000u; std::memcpy(&x, &u, 4); return x;\n"
               "}\n"
               "BS_DEVICE void bs_tf32_mma(float (&c)[4], const float (&a)[4], const float (&b)[2]) {\n"
               "  const int lane = ::bs_emu::lane_id() % 32, g = lane / 4, q = lane % 4;\n"
               "  for (int kk = 0; kk < 8; ++kk) {\n"
               "    const int h = kk / 4;\n"
               "    const float top = bs_round_tf32(__shfl_sync(0xffffffffu, a[2 * h], g * 4 + kk % 4, 32));\n"
               "    const float bottom = bs_round_tf32(__shfl_sync(0xffffffffu, a[2 * h + 1], g * 4 + kk % 4, 32));\n"
               "    const float b0 = bs_round_tf32(__shfl_sync(0xffffffffu, b[h], (2 * q) * 4 + kk % 4, 32));\n"
               "    const float b1 = bs_round_tf32(__shfl_sync(0xffffffffu, b[h], (2 * q + 1) * 4 + kk % 4, 32));\n"
               "    c[0] = fmaf(top, b0, c[0]); c[1] = fmaf(top, b1, c[1]);\n"
               "    c[2] = fmaf(bottom, b0, c[2]); c[3] = fmaf(bottom, b1, c[3]);\n"
               "  }\n"
               "}\n"
               "#endif\n";
    }

    // TF32 tensor cores (s and c, an explicit option) and, with the same fragment layout, the FP64
    // m16n8k8 tensor-core product (d and z, dmma16()): warp (wx, wy) owns a (wm/16) x (wn/8) grid of
    // 16x8 fragments; complex as four real products (re += ar br - ai bi, im += ar bi + ai br).
    void tf32_body() {
        const int wm = c_.blk_m / c_.dim_x, wn = c_.blk_n / c_.dim_y, fm = wm / 16, fn = wn / 8;
        const bool cplx = is_complex(s_.precision), single = is_single(s_.precision);
        const std::string R = single ? "float" : "double", mma = single ? "bs_tf32_mma" : "bs_dmma16";
        const std::string dims = "[" + I(fm) + "][" + I(fn) + "][4]";
        w_.line("const int warp = tid / 32, lane = tid % 32;");
        w_.line("const int wr = (warp % " + I(c_.dim_x) + ") * " + I(wm) + ", wc = (warp / " + I(c_.dim_x) + ") * " + I(wn) + ";");
        w_.line("const int g = lane / 4, q = lane % 4;");
        const std::string zero = single ? "0.0f" : "0.0";
        w_.line(R + " acc" + dims + (cplx ? ", acc_im" + dims : "") + ";");
        w_.line("#pragma unroll");
        w_.line("for (int i = 0; i < " + I(fm) + "; ++i)");
        w_.line("  #pragma unroll");
        w_.line("  for (int j = 0; j < " + I(fn) + "; ++j)");
        w_.line("    #pragma unroll");
        w_.line("    for (int e = 0; e < 4; ++e) acc[i][j][e] = " + zero + (cplx ? ", acc_im[i][j][e] = " + zero + ";" : ";"));
        k_loop([&] {
            w_.line("#pragma unroll");
            w_.open("for (int k8 = 0; k8 < " + I(c_.blk_k) + "; k8 += 8)");
            fence_step();
            w_.line("T xa[" + I(fm) + "][4], xb[" + I(fn) + "][2];");
            w_.line("#pragma unroll");
            w_.open("for (int i = 0; i < " + I(fm) + "; ++i)");
            w_.line("const int r = wr + i * 16 + g;");
            w_.line("xa[i][0] = " + rd_a("sA[k8 + q][r]") + ", xa[i][1] = " + rd_a("sA[k8 + q][r + 8]") + ", xa[i][2] = " +
                    rd_a("sA[k8 + q + 4][r]") + ", xa[i][3] = " + rd_a("sA[k8 + q + 4][r + 8]") + ";");
            w_.close();
            w_.line("#pragma unroll");
            w_.line("for (int j = 0; j < " + I(fn) + "; ++j) xb[j][0] = " + rd_b("sB[k8 + q][wc + j * 8 + g]") + ", xb[j][1] = " +
                    rd_b("sB[k8 + q + 4][wc + j * 8 + g]") + ";");
            if (cplx) {
                w_.line(R + " ar[" + I(fm) + "][4], ai[" + I(fm) + "][4], an[" + I(fm) + "][4], br[" + I(fn) + "][2], bi[" + I(fn) + "][2];");
                w_.line("#pragma unroll");
                w_.line("for (int i = 0; i < " + I(fm) + "; ++i)");
                w_.line("  for (int e = 0; e < 4; ++e) ar[i][e] = xa[i][e].re, ai[i][e] = xa[i][e].im, an[i][e] = -xa[i][e].im;");
                w_.line("#pragma unroll");
                w_.line("for (int j = 0; j < " + I(fn) + "; ++j)");
                w_.line("  for (int e = 0; e < 2; ++e) br[j][e] = xb[j][e].re, bi[j][e] = xb[j][e].im;");
            }
            w_.line("#pragma unroll");
            w_.open("for (int i = 0; i < " + I(fm) + "; ++i)");
            w_.line("#pragma unroll");
            w_.open("for (int j = 0; j < " + I(fn) + "; ++j)");
            if (cplx) {
                w_.line(mma + "(acc[i][j], ar[i], br[j]);");
                w_.line(mma + "(acc[i][j], an[i], bi[j]);");
                w_.line(mma + "(acc_im[i][j], ar[i], bi[j]);");
                w_.line(mma + "(acc_im[i][j], ai[i], br[j]);");
            } else {
                w_.line(mma + "(acc[i][j], xa[i], xb[j]);");
            }
            w_.close();
            w_.close();
            w_.close();
        });
        w_.line("const bool beta_zero = bs_is_zero(beta);");
        w_.line("#pragma unroll");
        w_.open("for (int i = 0; i < " + I(fm) + "; ++i)");
        w_.line("#pragma unroll");
        w_.open("for (int j = 0; j < " + I(fn) + "; ++j)");
        w_.line("#pragma unroll");
        w_.open("for (int e = 0; e < 4; ++e)");
        w_.line("const int gi = row0 + wr + i * 16 + g + (e / 2) * 8, gj = col0 + wc + j * 8 + 2 * q + e % 2;");
        store_element("gi", "gj", cplx ? "bs_make(acc[i][j][e], acc_im[i][j][e])" : "acc[i][j][e]");
        w_.close();
        w_.close();
        w_.close();
    }

    std::string dmma_function() const {
        return "// D = A B + C on one 8x8x4 FP64 fragment (a, b: this lane's element; c: its two of the 8x8)\n"
               "#ifndef BS_HOST_EMULATION\n"
               "BS_DEVICE void bs_dmma(double& c0, double& c1, double a, double b) {\n"
               "  asm volatile(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\\n\"\n"
               "               : \"+d\"(c0), \"+d\"(c1) : \"d\"(a), \"d\"(b));\n"
               "}\n"
               "#else\n"
               "// the same product from the fragment layout, through shuffles (lane l: A(l/4, l%4), B(l%4, l/4))\n"
               "BS_DEVICE void bs_dmma(double& c0, double& c1, double a, double b) {\n"
               "  const int lane = ::bs_emu::lane_id() % 32, g = lane / 4, q = lane % 4;\n"
               "  for (int kk = 0; kk < 4; ++kk) {\n"
               "    const double av = __shfl_sync(0xffffffffu, a, g * 4 + kk, 32);\n"
               "    const double b0 = __shfl_sync(0xffffffffu, b, (2 * q) * 4 + kk, 32);\n"
               "    const double b1 = __shfl_sync(0xffffffffu, b, (2 * q + 1) * 4 + kk, 32);\n"
               "    c0 = fma(av, b0, c0);\n"
               "    c1 = fma(av, b1, c1);\n"
               "  }\n"
               "}\n"
               "#endif\n";
    }

    // FP64 tensor cores on 16x8x8 fragments (four times an 8x8x4 product per instruction; PTX has the
    // shape from sm_90) where the warp tile and the k-slice hold whole ones; else the 8x8x4 form.
    bool dmma16() const { return blas3::dmma16(s_); }
    std::string dmma16_function() const {
        return "// D = A B + C on one 16x8x8 FP64 fragment (lane l, g = l/4, q = l%4: a = A(g, q), A(g+8, q), A(g, q+4),\n"
               "// A(g+8, q+4); b = B(q, g), B(q+4, g); c = C(g, 2q), C(g, 2q+1), C(g+8, 2q), C(g+8, 2q+1)): one instruction\n"
               "// from sm_90, else (and under the host emulator) the four 8x8x4 products it holds\n"
               "BS_DEVICE void bs_dmma16(double (&c)[4], const double (&a)[4], const double (&b)[2]) {\n"
               "#if !defined(BS_HOST_EMULATION) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
               "  asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, \"\n"
               "               \"{%0, %1, %2, %3};\\n\"\n"
               "               : \"+d\"(c[0]), \"+d\"(c[1]), \"+d\"(c[2]), \"+d\"(c[3])\n"
               "               : \"d\"(a[0]), \"d\"(a[1]), \"d\"(a[2]), \"d\"(a[3]), \"d\"(b[0]), \"d\"(b[1]));\n"
               "#else\n"
               "  bs_dmma(c[0], c[1], a[0], b[0]);\n"
               "  bs_dmma(c[0], c[1], a[2], b[1]);\n"
               "  bs_dmma(c[2], c[3], a[1], b[0]);\n"
               "  bs_dmma(c[2], c[3], a[3], b[1]);\n"
               "#endif\n"
               "}\n";
    }

    void kernel(const std::string& name) {
        if (device_function_) w_.line("BS_DEVICE void " + name + "(");
        else w_.line("BS_KERNEL_HEAD(" + I(threads_) + ", " + I(std::max(c_.min_blocks_per_sm, 1)) + ") " + name + "(");
        w_.line("    int batch, const int* m_v, int m_sub, int m_lim, const int* n_v, int n_sub, int n_lim,");
        w_.line("    const int* k_v, int k_sub, int k_lim,");
        w_.line("    T alpha, const T* const* A, const int* lda_v, int a_row, int a_col,");
        w_.line("    const T* const* B, const int* ldb_v, int b_row, int b_col,");
        const std::string tail = c_.tile_list ? ", const int* tile_end)"
                                 : device_function_ ? ",\n    unsigned bs_bx, unsigned bs_by, unsigned bs_bz, unsigned bs_gz)" : ")";
        if (s_.problem_list) {
            w_.line("    T beta, T* const* C, const int* ldc_v, int c_row, int c_col, const int* skip,");
            w_.line("    const int* list, const int* list_count" + tail);
        } else {
            w_.line("    T beta, T* const* C, const int* ldc_v, int c_row, int c_col, const int* skip" + tail);
        }
        w_.open("");
        if (pipelined_)
            w_.line("// " + I(buffers(s_)) + " A slices [blk_k][blk_m + pad], then " + I(buffers(s_)) +
                    " B slices [blk_k][blk_n + pad] (the ring of asynchronous copies)");
        else
            w_.line("// two A slices [blk_k][blk_m + pad], then two B slices [blk_k][blk_n + pad] (double buffering)");
        w_.line("BS_DECLARE_SMEM(bs_smem);");
        w_.line("T (*const sA0)[" + I(lda_s_) + "] = reinterpret_cast<T (*)[" + I(lda_s_) + "]>(bs_smem);");
        w_.line("T (*const sB0)[" + I(ldb_s_) + "] = reinterpret_cast<T (*)[" + I(ldb_s_) + "]>(bs_smem + " +
                I(a_slices_bytes(s_)) + ");");
        w_.line("const int tid = threadIdx.x;");
        if (c_.tile_list) {
            // tile_end[z]: the tiles of problems 0 .. z of the list (or batch), an inclusive scan the
            // launcher computed; tile t belongs to the first z with tile_end[z] > t, its tiles column-major
            w_.line("const int listed = " + std::string(s_.problem_list ? "*list_count" : "batch") + ";");
            w_.open("for (int t = blockIdx.x, tiles = listed > 0 ? tile_end[listed - 1] : 0; t < tiles; t += gridDim.x)",
                    "the tiles of every problem, one per step");
            w_.line("int lo = 0, hi = listed - 1;");
            w_.open("while (lo < hi)");
            w_.line("const int mid = (lo + hi) >> 1;");
            w_.line("if (tile_end[mid] > t) hi = mid; else lo = mid + 1;");
            w_.close();
            w_.line("const int p = " + std::string(s_.problem_list ? "list[lo]" : "lo") + ";");
            w_.line("const int tile = t - (lo > 0 ? tile_end[lo - 1] : 0);");
            w_.line("const int tiles_m = (bs_size(m_v, m_sub, m_lim, p) + " + I(c_.blk_m - 1) + ") / " + I(c_.blk_m) + ";");
            w_.line("const int row0 = tile % tiles_m * " + I(c_.blk_m) + ", col0 = tile / tiles_m * " + I(c_.blk_n) + ";");
        } else {
            const std::string bx = device_function_ ? "bs_bx" : "blockIdx.x", by = device_function_ ? "bs_by" : "blockIdx.y";
            const std::string bz = device_function_ ? "bs_bz" : "blockIdx.z", gz = device_function_ ? "bs_gz" : "gridDim.z";
            w_.line("const int row0 = " + bx + " * " + I(c_.blk_m) + ", col0 = " + by + " * " + I(c_.blk_n) + ";");
            if (s_.problem_list) {
                w_.open("for (int z = " + bz + ", listed = *list_count; z < listed; z += " + gz + ")",
                        "the listed problems (a size bin), one per step");
                w_.line("const int p = list[z];");
            } else {
                w_.open("for (int p = blockIdx.z; p < batch; p += gridDim.z)", "one problem per step; batch may exceed the grid");
            }
        }
        w_.line("if (skip && skip[p]) continue;");
        w_.line("const int m = bs_size(m_v, m_sub, m_lim, p), n = bs_size(n_v, n_sub, n_lim, p);");
        if (!c_.tile_list) {  // a tile of the list lies inside its problem
            w_.line("// subgrid truncation: this block lies beyond the problem's own grid");
            w_.line("if (row0 >= m || col0 >= n) continue;");
        }
        if (s_.region == GemmRegion::interior)
            w_.line("if (row0 + " + I(c_.blk_m) + " > m || col0 + " + I(c_.blk_n) + " > n) continue;  // a ragged tile: the edge kernel's");
        if (s_.region == GemmRegion::edge)
            w_.line("if (row0 < m / " + I(s_.edge_m) + " * " + I(s_.edge_m) + " && col0 < n / " + I(s_.edge_n) + " * " +
                    I(s_.edge_n) + ") continue;  // inside the interior: the interior kernel's");
        if (s_.part == GemmPart::lower)
            w_.line("if (row0 + " + I(c_.blk_m - 1) + " < col0) continue;  // entirely above the diagonal: not referenced");
        if (s_.part == GemmPart::upper)
            w_.line("if (row0 > col0 + " + I(c_.blk_n - 1) + ") continue;  // entirely below the diagonal: not referenced");
        w_.line("int k = bs_size(k_v, k_sub, k_lim, p);");
        w_.line("if (bs_is_zero(alpha)) k = 0;  // A and B are not read (BLAS)");
        w_.line("const long long ldc = ldc_v[p];");
        w_.line("T* c = C[p] + c_row + c_col * ldc;");
        w_.line("const long long lda = k > 0 ? lda_v[p] : 0, ldb = k > 0 ? ldb_v[p] : 0;");
        w_.line("const T* a = k > 0 ? A[p] + a_row + a_col * lda : nullptr;");
        w_.line("const T* b = k > 0 ? B[p] + b_row + b_col * ldb : nullptr;");
        auto body = [&] {
            if (c_.tensor_cores && is_single(s_.precision)) tf32_body();
            else if (dmma16()) tf32_body();  // the same 16x8x8 fragments, in FP64
            else if (c_.tensor_cores) dmma_body();
            else simt_body();
        };
        if ((o32_a_ || o32_b_) && !pipelined_) {
            // the register path: the branch per slice (the whole body twice measured 152-344 bytes of
            // spills with ptxas for sm_90 on the d 64x32 and 64x64 tiles, the branch per slice 0-20)
            w_.line("// 32-bit element offsets within a slice (copy_offsets): every offset below 2^31 when the leading");
            w_.line("// dimensions are at most " + I(kMaxLd32) + "; larger ones take the 64-bit addresses");
            w_.line("const bool narrow = lda <= " + I(kMaxLd32) + " && ldb <= " + I(kMaxLd32) + ";");
            w_.line("const unsigned lda32 = unsigned(lda), ldb32 = unsigned(ldb);");
            body();
        } else if (o32_a_ || o32_b_) {
            // the ring: the body twice, the branch uniform per problem and outside the k loop, so that each
            // copy of the k loop holds only its own addressing state (a branch per slice: 96 bytes of spills
            // on s 128x128 with 2 blocks per SM, this form none)
            w_.line("// 32-bit element offsets within a slice (copy_offsets): every offset below 2^31 when the leading");
            w_.line("// dimensions are at most " + I(kMaxLd32) + "; larger ones take the 64-bit addresses");
            w_.open("if (lda <= " + I(kMaxLd32) + " && ldb <= " + I(kMaxLd32) + ")");
            w_.line("const unsigned lda32 = unsigned(lda), ldb32 = unsigned(ldb);");
            narrow_ = true;
            body();
            narrow_ = false;
            w_.close();
            w_.open("else");
            body();
            w_.close();
        } else {
            body();
        }
        w_.close(c_.tile_list ? "  // tiles" : "  // problems");
        w_.close();
    }

    // Under the host emulator of the tests: the kernel called from cudaLaunchKernel-style arguments.
    void host_entry(const std::string& name) {
        const char* types[] = {"int", "const int*", "int", "int", "const int*", "int", "int", "const int*", "int", "int",
                               "T", "const T* const*", "const int*", "int", "int", "const T* const*", "const int*",
                               "int", "int", "T", "T* const*", "const int*", "int", "int", "const int*",
                               "const int*", "const int*", "const int*"};
        std::string call = name + "(";
        const int count = (s_.problem_list ? 27 : 25) + (c_.tile_list ? 1 : 0);
        for (int i = 0; i < count; ++i)
            call += std::string(i ? ", " : "") + "*static_cast<" + types[i] + "*>(args[" + I(i) + "])";
        w_.raw("#ifdef BS_HOST_EMULATION\ninline void bs_host_entry(void** args) { " + call + "); }\n#endif\n");
    }

    // The bounds check of element (r, c) of an operand's slice: none on the uniform-size path; rows and
    // columns of C (bounds m, n) never in an interior kernel, whose tiles are whole; k always else.
    std::string bounds(const std::string& r, const std::string& r_bound, const std::string& c, const std::string& c_bound) const {
        if (s_.full_tiles) return "";
        auto checked = [&](const std::string& bound) { return bound == "k" || s_.region != GemmRegion::interior; };
        std::string out;
        if (checked(r_bound)) out = r + " < " + r_bound;
        if (checked(c_bound)) out += (out.empty() ? "" : " && ") + c + " < " + c_bound;
        return out;
    }

    // The stored offset of element (rr, cc) of op(X)'s slice from the slice's corner (32-bit, unsigned:
    // the tail elements of a thread's share may compute one past the slice, never read).
    static std::string local_offset(GemmOperand op, const std::string& ld32) {
        return op == GemmOperand::no_trans ? "rr + unsigned(cc) * " + ld32 : "cc + unsigned(rr) * " + ld32;
    }
    // The slice's corner (r_base, c_base) of op(X) in the stored X (64-bit, once per slice).
    static std::string slice_base(GemmOperand op, const std::string& ptr, const std::string& ld, const std::string& r_base,
                                  const std::string& c_base) {
        return op == GemmOperand::no_trans ? ptr + " + ((" + r_base + ") + (long long)(" + c_base + ") * " + ld + ")"
                                           : ptr + " + ((" + c_base + ") + (long long)(" + r_base + ") * " + ld + ")";
    }

    // The prefetch of one k-slice into registers: element e of the block's share of op(A)'s slice
    // (blk_m x blk_k, row index fastest unless op(A) is a transpose: then k fastest, which is the
    // stored matrix's column order, so that consecutive threads read consecutive addresses).
    void load_slice(const std::string& kb) {
        if (o32_a_ || o32_b_) {
            w_.open("if (narrow)", "32-bit offsets from the slices' corners");
            if (o32_a_) w_.line("const T* const xa_s = " + slice_base(s_.op_a, "a", "lda", "row0", kb) + ";");
            if (o32_b_) w_.line("const T* const xb_s = " + slice_base(s_.op_b, "b", "ldb", kb, "col0") + ";");
            load_slice_forms(kb, true);
            w_.close();
            w_.open("else");
            load_slice_forms(kb, false);
            w_.close();
            return;
        }
        load_slice_forms(kb, false);
    }
    void load_slice_forms(const std::string& kb, bool narrow) {
        o32_load_ = narrow && o32_a_ ? "xa_s" : "";
        o32_op_ = s_.op_a, o32_ld_ = "lda32";
        load_operand("ra", "bs_op_a", "a", "lda", c_.blk_m, c_.blk_k, a_per_thread_, is_transposed(s_.op_a),
                     "row0 + ", kb + " + ", "m", "k", /*rows_are_k=*/false);
        o32_load_ = narrow && o32_b_ ? "xb_s" : "";
        o32_op_ = s_.op_b, o32_ld_ = "ldb32";
        load_operand("rb", "bs_op_b", "b", "ldb", c_.blk_k, c_.blk_n, b_per_thread_, !is_transposed(s_.op_b), kb + " + ",
                     "col0 + ", "k", "n", true);
        o32_load_.clear();
    }
    // tile rows x cols of op(X) at (r_base + r, c_base + c); k_fastest: the index along k varies fastest
    // across threads. Into registers reg[0..per_thread).
    void load_operand(const std::string& reg, const std::string& fn, const std::string& ptr, const std::string& ld,
                      int rows, int cols, int per_thread, bool k_fastest, const std::string& r_base,
                      const std::string& c_base, const std::string& r_bound, const std::string& c_bound, bool rows_are_k) {
        if (reg == "ra" ? inc_a_ : inc_b_)
            return inc_load(reg, reg == "ra" ? "ia" : "ib", reg == "ra" ? s_.op_a : s_.op_b, rows, cols, per_thread, k_fastest,
                            rows_are_k, rows_are_k ? r_base : c_base, r_bound, c_bound);
        const int total = rows * cols;
        // fast index: rows when (rows are k) == k_fastest, else columns
        const bool rows_fast = rows_are_k == k_fastest;
        for (int q = 0; q < per_thread; ++q) {
            const std::string e = "(tid + " + I(q * threads_) + ")";
            std::string r, c;
            if (rows_fast) r = e + " % " + I(rows), c = e + " / " + I(rows);
            else c = e + " % " + I(cols), r = e + " / " + I(cols);
            const bool tail = (q + 1) * threads_ > total;
            std::ostringstream o;
            o << "{ const int rr = " << r << ", cc = " << c << "; "
              << "const int gr = " << r_base << "rr, gc = " << c_base << "cc; ";
            std::string cond = tail ? e + " < " + I(total) : "";
            const std::string in = bounds("gr", r_bound, "gc", c_bound);
            if (!in.empty()) cond += (cond.empty() ? "" : " && ") + in;
            std::string read = fn + "(" + ptr + ", " + ld + ", gr, gc)";
            if (!o32_load_.empty()) {
                read = o32_load_ + "[" + local_offset(o32_op_, o32_ld_) + "]";
                if (o32_op_ == GemmOperand::conj_trans) read = "bs_conj(" + read + ")";
            }
            if (cond.empty()) o << reg << "[" << q << "] = " << read << "; }";
            else o << reg << "[" << q << "] = (" << cond << ") ? " << read << " : bs_zero(); }";
            w_.line(o.str());
        }
    }
    // copy_offsets 3: each thread's elements of a k-slice (the element-to-thread map of load_operand) read
    // through pointers formed once per problem and advanced by `pre`_step per slice. Where the block's
    // thread count is a multiple of the slice's fast extent, the thread's elements share their fast index
    // and lie a fixed stored stride `pre`_qs apart along the slow one: one pointer `pre`_p, one fast index
    // `pre`_f and one slow index `pre`_s (the first element's) serve them all. Else each element q has its
    // pointer `pre`_p<q> and its k index `pre`_k<q>. A bound that does not vary with the slice is folded
    // into the k index (INT_MAX: never read), so that one comparison with k - kb bounds an element.
    bool inc_shared(int rows, int cols, bool rows_fast) const { return threads_ % (rows_fast ? rows : cols) == 0; }
    void inc_setup(const std::string& pre, GemmOperand op, const std::string& ptr, const std::string& ld, int rows, int cols,
                   int per_thread, bool k_fastest, const std::string& r_base, const std::string& c_base,
                   const std::string& r_bound, const std::string& c_bound, bool rows_are_k) {
        const int total = rows * cols;
        const bool rows_fast = rows_are_k == k_fastest;
        const bool stored_no_trans = op == GemmOperand::no_trans;
        // the stored stride of op(X)'s row index (1 as stored, ld transposed) and of its column index
        const std::string r_stride = stored_no_trans ? "1" : ld, c_stride = stored_no_trans ? ld : "1";
        const std::string k_stride = rows_are_k ? r_stride : c_stride;
        w_.line("const long long " + pre + "_step = " + (k_stride == "1" ? I(c_.blk_k) : I(c_.blk_k) + " * " + k_stride) + ";");
        const std::string in = bounds("gr", r_bound, "gc", c_bound);
        const std::string other = rows_are_k ? "gc < " + c_bound : "gr < " + r_bound;
        const bool other_checked = in.find(other) != std::string::npos;
        const std::string kidx = rows_are_k ? "rr" : "cc";
        const std::string addr = stored_no_trans ? "gr + (long long)gc * " + ld : "gc + (long long)gr * " + ld;
        if (inc_shared(rows, cols, rows_fast)) {
            const int fast = rows_fast ? rows : cols;
            const bool k_is_fast = rows_fast == rows_are_k;
            const std::string slow_stride = rows_fast ? c_stride : r_stride;
            w_.line("const long long " + pre + "_qs = " + (slow_stride == "1" ? I(threads_ / fast) : I(threads_ / fast) + " * " + slow_stride) + ";");
            const std::string r = rows_fast ? "tid % " + I(rows) : "tid / " + I(cols);
            const std::string c = rows_fast ? "tid / " + I(rows) : "tid % " + I(cols);
            w_.line("const T* " + pre + "_p; int " + pre + "_f, " + pre + "_s;");
            // k fast: f is the k index, s the other's global index (bounded per element); k slow: s is the
            // k index with the other's bound folded in, f unused
            const std::string nonk_global = rows_are_k ? "gc" : "gr";
            w_.line("{ const int rr = " + r + ", cc = " + c + "; const int gr = " + r_base + "rr, gc = " + c_base + "cc; " + pre +
                    "_p = " + ptr + " + (" + addr + "); " +
                    (k_is_fast ? pre + "_f = " + kidx + "; " + pre + "_s = " + nonk_global + "; }"
                               : pre + "_f = 0; " + pre + "_s = " + (other_checked ? "(" + other + ") ? " + kidx + " : 0x7fffffff" : kidx) + "; }"));
            w_.line("(void)" + pre + "_f;");
            return;
        }
        for (int q = 0; q < per_thread; ++q) {
            const std::string e = "(tid + " + I(q * threads_) + ")";
            std::string r, c;
            if (rows_fast) r = e + " % " + I(rows), c = e + " / " + I(rows);
            else c = e + " % " + I(cols), r = e + " / " + I(cols);
            const bool tail = (q + 1) * threads_ > total;
            std::string cond = tail ? e + " < " + I(total) : "";
            if (other_checked) cond += (cond.empty() ? "" : " && ") + other;
            w_.line("const T* " + pre + "_p" + I(q) + "; int " + pre + "_k" + I(q) + ";");
            w_.line("{ const int rr = " + r + ", cc = " + c + "; const int gr = " + r_base + "rr, gc = " + c_base + "cc; " + pre + "_p" +
                    I(q) + " = " + ptr + " + (" + addr + "); " + pre + "_k" + I(q) + " = " +
                    (cond.empty() ? kidx : "(" + cond + ") ? " + kidx + " : 0x7fffffff") + "; }");
        }
    }
    // copy_offsets 3: the k-slice at kb into registers through the pointers of inc_setup, which then
    // advance to the next slice. kb_plus: the slice's first k index followed by " + ".
    void inc_load(const std::string& reg, const std::string& pre, GemmOperand op, int rows, int cols, int per_thread,
                  bool k_fastest, bool rows_are_k, const std::string& kb_plus, const std::string& r_bound, const std::string& c_bound) {
        const int total = rows * cols;
        const bool rows_fast = rows_are_k == k_fastest;
        const std::string kb = kb_plus.substr(0, kb_plus.size() - 3);
        const std::string conj = op == GemmOperand::conj_trans ? "bs_conj" : "";
        const std::string in = bounds("gr", r_bound, "gc", c_bound);
        const std::string other_bound = rows_are_k ? c_bound : r_bound;
        const bool other_checked = in.find((rows_are_k ? "gc < " : "gr < ") + other_bound) != std::string::npos;
        w_.open("");
        w_.line("const int krem = k - (" + kb + ");");
        if (inc_shared(rows, cols, rows_fast)) {
            const int fast = rows_fast ? rows : cols, dq = threads_ / fast;
            const bool k_is_fast = rows_fast == rows_are_k;
            for (int q = 0; q < per_thread; ++q) {
                std::vector<std::string> conds;
                if ((q + 1) * threads_ > total) conds.push_back("tid < " + I(total - q * threads_));
                if (k_is_fast) {
                    if (!s_.full_tiles) conds.push_back(pre + "_f < krem");
                    if (other_checked) conds.push_back(pre + "_s" + (q ? " + " + I(q * dq) : "") + " < " + other_bound);
                } else if (!s_.full_tiles || other_checked) {
                    conds.push_back(pre + "_s < krem" + (q ? " - " + I(q * dq) : ""));
                }
                std::string cond;
                for (const auto& x : conds) cond += (cond.empty() ? "" : " && ") + x;
                const std::string read = conj + "(" + pre + "_p[" + (q ? I(q) + " * " + pre + "_qs" : "0") + "])";
                w_.line(reg + "[" + I(q) + "] = " + (cond.empty() ? read : "(" + cond + ") ? " + read + " : bs_zero()") + ";");
            }
            w_.line(pre + "_p += " + pre + "_step;");
            w_.close();
            return;
        }
        for (int q = 0; q < per_thread; ++q) {
            const std::string p = pre + "_p" + I(q), read = conj + "(*" + p + ")";
            const bool checked = !s_.full_tiles || other_checked || (q + 1) * threads_ > total;
            w_.line(reg + "[" + I(q) + "] = " + (checked ? "(" + pre + "_k" + I(q) + " < krem) ? " + read + " : bs_zero()" : read) +
                    "; " + p + " += " + pre + "_step;");
        }
        w_.close();
    }

    // copy_offsets 3 with the ring: the k-slice at kb copied (cp.async) into the bound slice `shared` from
    // the pointers of inc_setup, which then advance to the next slice; each element's destination is
    // store_operand's and its bound the same as inc_load's (a source out of bounds copies zeros). The
    // ring issues its slices in k order, once each, so one advance per copy keeps the pointers in step.
    void inc_copy(const std::string& shared, const std::string& pre, const std::string& base, int rows, int cols, int per_thread,
                  bool k_fastest, bool rows_are_k, const std::string& kb, const std::string& r_bound, const std::string& c_bound) {
        const int total = rows * cols;
        const bool rows_fast = rows_are_k == k_fastest;
        const std::string in = bounds("gr", r_bound, "gc", c_bound);
        const std::string other_bound = rows_are_k ? c_bound : r_bound;
        const bool other_checked = in.find((rows_are_k ? "gc < " : "gr < ") + other_bound) != std::string::npos;
        const int ld_s = shared == "sA" ? lda_s_ : ldb_s_;
        const bool shared_map = inc_shared(rows, cols, rows_fast);
        // element q's destination: its own shared address, or (one fast index per thread) the thread's
        // first plus q times the slow index's stride (dq slow steps; a step is a slice row when the slow
        // index is the k index)
        auto destination = [&](int q) {
            if (shared_map) {
                const int fast = rows_fast ? rows : cols, dq = threads_ / fast;
                const bool slow_is_k = rows_fast ? !rows_are_k : rows_are_k;
                return q ? "bs_saddr_add(" + pre + "_d, " + I(q * dq * (slow_is_k ? ld_s : 1)) + ")" : pre + "_d";
            }
            const std::string e = "(tid + " + I(q * threads_) + ")";
            std::string r, c;
            if (rows_fast) r = e + " % " + I(rows), c = e + " / " + I(rows);
            else c = e + " % " + I(cols), r = e + " / " + I(cols);
            return "bs_saddr_of(&" + shared + "[" + (rows_are_k ? r : c) + "][" + (rows_are_k ? c : r) + "])";
        };
        auto copy = [&](int q, const std::string& cond, const std::string& src) {
            // a thread's share past the slice's end (the tail) copies nothing
            const std::string tail = (q + 1) * threads_ > total ? "if (tid < " + I(total - q * threads_) + ") " : "";
            if (cond.empty()) w_.line(tail + "bs_copy_async_at(" + destination(q) + ", " + src + ", true);");
            else w_.line(tail + "{ const bool in = " + cond + "; bs_copy_async_at(" + destination(q) + ", in ? " + src + " : " + base + ", in); }");
        };
        w_.open("");
        w_.line("const int krem = k - (" + kb + ");");
        if (shared_map) {
            const int fast = rows_fast ? rows : cols, dq = threads_ / fast;
            const bool k_is_fast = rows_fast == rows_are_k;
            {
                const std::string r = rows_fast ? "tid % " + I(rows) : "tid / " + I(cols);
                const std::string c = rows_fast ? "tid / " + I(rows) : "tid % " + I(cols);
                w_.line("const bs_saddr " + pre + "_d = bs_saddr_of(&" + shared + "[" + (rows_are_k ? r : c) + "][" + (rows_are_k ? c : r) + "]);");
            }
            for (int q = 0; q < per_thread; ++q) {
                std::vector<std::string> conds;
                if (k_is_fast) {
                    if (!s_.full_tiles) conds.push_back(pre + "_f < krem");
                    if (other_checked) conds.push_back(pre + "_s" + (q ? " + " + I(q * dq) : "") + " < " + other_bound);
                } else if (!s_.full_tiles || other_checked) {
                    conds.push_back(pre + "_s < krem" + (q ? " - " + I(q * dq) : ""));
                }
                std::string cond;
                for (const auto& x : conds) cond += (cond.empty() ? "" : " && ") + x;
                copy(q, cond, pre + "_p" + (q ? " + " + I(q) + " * " + pre + "_qs" : ""));
            }
            w_.line(pre + "_p += " + pre + "_step;");
            w_.close();
            return;
        }
        for (int q = 0; q < per_thread; ++q) {
            const std::string p = pre + "_p" + I(q);
            const bool checked = !s_.full_tiles || other_checked || (q + 1) * threads_ > total;
            copy(q, checked ? pre + "_k" + I(q) + " < krem" : "", p);
            w_.line(p + " += " + pre + "_step;");
        }
        w_.close();
    }

    // Registers into the shared slices.
    void store_slice() {
        store_operand("ra", "sA", c_.blk_m, c_.blk_k, a_per_thread_, is_transposed(s_.op_a), false);
        store_operand("rb", "sB", c_.blk_k, c_.blk_n, b_per_thread_, !is_transposed(s_.op_b), true);
    }
    void store_operand(const std::string& reg, const std::string& shared, int rows, int cols, int per_thread,
                       bool k_fastest, bool rows_are_k) {
        const int total = rows * cols;
        const bool rows_fast = rows_are_k == k_fastest;
        for (int q = 0; q < per_thread; ++q) {
            const std::string e = "(tid + " + I(q * threads_) + ")";
            std::string r, c;
            if (rows_fast) r = e + " % " + I(rows), c = e + " / " + I(rows);
            else c = e + " % " + I(cols), r = e + " / " + I(cols);
            // shared layout [k][other]
            const std::string kk = rows_are_k ? r : c, other = rows_are_k ? c : r;
            const bool tail = (q + 1) * threads_ > total;
            w_.line(std::string(tail ? "if (" + e + " < " + I(total) + ") " : "") + shared + "[" + kk + "][" + other +
                    "] = " + reg + "[" + I(q) + "];");
        }
    }

    // sA, sB: the slices of buffer `which` (an expression), for the statements that follow in the block.
    void bind_slices(const std::string& which) {
        w_.line("T (*sA)[" + I(lda_s_) + "] = sA0 + (" + which + ") * " + I(c_.blk_k) + ";");
        w_.line("T (*sB)[" + I(ldb_s_) + "] = sB0 + (" + which + ") * " + I(c_.blk_k) + ";");
    }

    // The k loop, double-buffered: slice kb is used from one buffer while slice kb + blk_k, fetched into
    // registers one step earlier, is stored into the other and slice kb + 2 blk_k is fetched; one
    // barrier per step.
    void k_loop(const std::function<void()>& compute) {
        if (pipelined_) return ring_k_loop(compute);
        if (inc_a_)
            inc_setup("ia", s_.op_a, "a", "lda", c_.blk_m, c_.blk_k, a_per_thread_, is_transposed(s_.op_a), "row0 + ", "", "m", "k", false);
        if (inc_b_)
            inc_setup("ib", s_.op_b, "b", "ldb", c_.blk_k, c_.blk_n, b_per_thread_, !is_transposed(s_.op_b), "", "col0 + ", "k", "n", true);
        w_.line("T ra[" + I(a_per_thread_) + "], rb[" + I(b_per_thread_) + "];");
        w_.open("if (k > 0)");
        load_slice("0");
        w_.open("");
        bind_slices("0");
        store_slice();
        w_.close();
        w_.line("__syncthreads();");
        w_.open("if (" + I(c_.blk_k) + " < k)");
        w_.line("const int kn = " + I(c_.blk_k) + ";");
        load_slice("kn");
        w_.close();
        w_.close();
        w_.open("for (int kb = 0, buf = 0; kb < k; kb += " + I(c_.blk_k) + ", buf ^= 1)");
        w_.open("");
        bind_slices("buf");
        compute();
        w_.close();
        w_.open("if (kb + " + I(c_.blk_k) + " < k)", "the next slice into the other buffer, the one after into registers");
        bind_slices("buf ^ 1");
        store_slice();
        w_.open("if (kb + " + I(2 * c_.blk_k) + " < k)");
        w_.line("const int kn = kb + " + I(2 * c_.blk_k) + ";");
        load_slice("kn");
        w_.close();
        w_.close();
        w_.line("__syncthreads();");
        w_.close();
    }

    // The asynchronous copy of the k-slice at kb into the slices sA, sB bound before: the same
    // element-to-thread map as load_slice (consecutive threads, consecutive addresses), each element
    // one cp.async, zeros beyond the problem's bounds.
    void copy_slice(const std::string& kb) {
        if (narrow_) {  // 32-bit offsets from the slices' corners
            if (o32_a_) w_.line("const T* const xa_s = " + slice_base(s_.op_a, "a", "lda", "row0", kb) + ";");
            if (o32_b_) w_.line("const T* const xb_s = " + slice_base(s_.op_b, "b", "ldb", kb, "col0") + ";");
        }
        copy_slice_forms(kb, narrow_);
    }
    void copy_slice_forms(const std::string& kb, bool narrow) {
        // the leading dimensions hidden from the optimiser: each copy's offset is recomputed per slice
        // (a few integer multiply-adds) instead of all of them being held in registers across the loop
        if (!(narrow && o32_a_ && o32_b_) && !(inc_a_ && inc_b_)) {
            w_.line("long long lda_o = lda, ldb_o = ldb;");
            w_.line("BS_OPAQUE_I64(lda_o);");
            w_.line("BS_OPAQUE_I64(ldb_o);");
        }
        o32_load_ = narrow && o32_a_ ? "xa_s" : "";
        o32_op_ = s_.op_a, o32_ld_ = "lda32";
        if (inc_a_)
            inc_copy("sA", "ia", "a", c_.blk_m, c_.blk_k, a_per_thread_, is_transposed(s_.op_a), /*rows_are_k=*/false, kb, "m", "k");
        else
            copy_operand("sA", "bs_addr_a", "a", "lda_o", c_.blk_m, c_.blk_k, a_per_thread_, is_transposed(s_.op_a), "row0 + ",
                         kb + " + ", "m", "k", /*rows_are_k=*/false);
        o32_load_ = narrow && o32_b_ ? "xb_s" : "";
        o32_op_ = s_.op_b, o32_ld_ = "ldb32";
        if (inc_b_)
            inc_copy("sB", "ib", "b", c_.blk_k, c_.blk_n, b_per_thread_, !is_transposed(s_.op_b), true, kb, "k", "n");
        else
            copy_operand("sB", "bs_addr_b", "b", "ldb_o", c_.blk_k, c_.blk_n, b_per_thread_, !is_transposed(s_.op_b), kb + " + ",
                         "col0 + ", "k", "n", true);
        o32_load_.clear();
    }
    void copy_operand(const std::string& shared, const std::string& fn, const std::string& ptr, const std::string& ld,
                      int rows, int cols, int per_thread, bool k_fastest, const std::string& r_base,
                      const std::string& c_base, const std::string& r_bound, const std::string& c_bound, bool rows_are_k) {
        const int total = rows * cols;
        const bool rows_fast = rows_are_k == k_fastest;
        // A loop, not unrolled: unrolled, the compiler computes every copy's address ahead and holds them
        // all (over 100 registers for 16 copies a thread); rolled, each costs a few integer operations
        // in the issue slots the tensor cores or FMAs leave free. With 32-bit offsets (copy_offsets 2)
        // unrolled: one offset register per copy, computed once per problem.
        const bool unrolled = !o32_load_.empty() && c_.copy_offsets == 2;
        w_.line(unrolled ? "#pragma unroll" : "#pragma unroll 1");
        w_.open("for (int q = 0; q < " + I(per_thread) + "; ++q)");
        w_.line("const int e = tid + q * " + I(threads_) + ";");
        if (per_thread * threads_ > total) w_.line("if (e >= " + I(total) + ") break;");
        if (rows_fast) w_.line("const int rr = e % " + I(rows) + ", cc = e / " + I(rows) + ";");
        else w_.line("const int cc = e % " + I(cols) + ", rr = e / " + I(cols) + ";");
        w_.line("const int gr = " + r_base + "rr, gc = " + c_base + "cc;");
        const std::string kk = rows_are_k ? "rr" : "cc", other = rows_are_k ? "cc" : "rr";
        const std::string dst = "&" + shared + "[" + kk + "][" + other + "]";
        const std::string in = bounds("gr", r_bound, "gc", c_bound);
        const std::string src = o32_load_.empty() ? fn + "(" + ptr + ", " + ld + ", gr, gc)"
                                                  : o32_load_ + " + (" + local_offset(o32_op_, o32_ld_) + ")";
        if (in.empty()) {
            w_.line("bs_copy_async(" + dst + ", " + src + ", true);");
        } else {
            w_.line("const bool in = " + in + ";");
            w_.line("bs_copy_async(" + dst + ", in ? " + src + " : " + ptr + ", in);");
        }
        w_.close();
    }

    // The k loop over a ring of `stages` shared slices: slices 0 .. stages - 2 are in flight before the
    // first product; step `it` waits for slice it (the copies of every thread: wait, then barrier),
    // starts the copy of slice it + stages - 1 into the buffer step it - 1 read (free: every thread has
    // passed the barrier after that product) and multiplies slice it. One barrier per step; a commit
    // per step, empty or not, keeps the wait's group count right.
    void ring_k_loop(const std::function<void()>& compute) {
        const int st = buffers(s_);
        if (inc_a_)
            inc_setup("ia", s_.op_a, "a", "lda", c_.blk_m, c_.blk_k, a_per_thread_, is_transposed(s_.op_a), "row0 + ", "", "m", "k", false);
        if (inc_b_)
            inc_setup("ib", s_.op_b, "b", "ldb", c_.blk_k, c_.blk_n, b_per_thread_, !is_transposed(s_.op_b), "", "col0 + ", "k", "n", true);
        w_.line("const int k_slices = (k + " + I(c_.blk_k - 1) + ") / " + I(c_.blk_k) + ";");
        w_.line("#pragma unroll");
        w_.open("for (int s = 0; s < " + I(st - 1) + "; ++s)");
        w_.open("if (s < k_slices)");
        bind_slices("s");
        w_.line("const int kb = s * " + I(c_.blk_k) + ";");
        copy_slice("kb");
        w_.close();
        w_.line("bs_copy_commit();");
        w_.close();
        w_.open("for (int it = 0; it < k_slices; ++it)");
        w_.line("bs_copy_wait<" + I(st - 2) + ">();");
        w_.line("__syncthreads();");
        w_.open("if (it + " + I(st - 1) + " < k_slices)", "the slice stages - 1 ahead, into the buffer the last step read");
        bind_slices("(it + " + I(st - 1) + ") % " + I(st));
        w_.line("const int kb = (it + " + I(st - 1) + ") * " + I(c_.blk_k) + ";");
        copy_slice("kb");
        w_.close();
        w_.line("bs_copy_commit();");
        w_.open("");
        bind_slices("it % " + I(st));
        compute();
        w_.close();
        w_.close();
        w_.line("bs_copy_wait<0>();");
        w_.line("__syncthreads();  // every product done before the next problem refills the ring");
    }

    // C element (gi, gj) = alpha acc + beta C (beta = 0: C not read), within bounds and the part.
    void store_element(const std::string& gi, const std::string& gj, const std::string& acc) {
        std::string cond = s_.full_tiles || s_.region == GemmRegion::interior ? "true" : gi + " < m && " + gj + " < n";
        if (s_.part == GemmPart::lower) cond += " && " + gi + " >= " + gj;
        if (s_.part == GemmPart::upper) cond += " && " + gi + " <= " + gj;
        w_.open("if (" + cond + ")");
        w_.line("T& out = c[" + gi + " + " + gj + " * ldc];");
        w_.line("T v = bs_mul(alpha, " + acc + ");");
        w_.line("if (!beta_zero) v = bs_fma(beta, out, v);");
        if (s_.real_diagonal && is_complex(s_.precision)) w_.line("if (" + gi + " == " + gj + ") v = bs_real_only(v);");
        w_.line("out = v;");
        w_.close();
    }

    // Row (column) of the block tile that the SIMT thread's accumulator i (j) holds: strided by dim_x
    // (dim_y), or with vector reads runs of vec_ adjacent rows (columns), the runs dim_x (dim_y) apart.
    std::string simt_row(const std::string& i) const {
        if (vec_ == 1) return "tx + " + i + " * " + I(c_.dim_x);
        return "(" + i + " / " + I(vec_) + ") * " + I(c_.dim_x * vec_) + " + tx * " + I(vec_) + " + " + i + " % " + I(vec_);
    }
    std::string simt_col(const std::string& j) const {
        if (vec_ == 1) return "ty + " + j + " * " + I(c_.dim_y);
        return "(" + j + " / " + I(vec_) + ") * " + I(c_.dim_y * vec_) + " + ty * " + I(vec_) + " + " + j + " % " + I(vec_);
    }

    void simt_body() {
        const int tm = c_.blk_m / c_.dim_x, tn = c_.blk_n / c_.dim_y;
        w_.line("const int tx = tid % " + I(c_.dim_x) + ", ty = tid / " + I(c_.dim_x) + ";");
        w_.line("T acc[" + I(tm) + "][" + I(tn) + "];");
        w_.line("#pragma unroll");
        w_.line("for (int i = 0; i < " + I(tm) + "; ++i)");
        w_.line("  #pragma unroll");
        w_.line("  for (int j = 0; j < " + I(tn) + "; ++j) acc[i][j] = bs_zero();");
        k_loop([&] {
            w_.line("#pragma unroll");
            w_.open("for (int kk = 0; kk < " + I(c_.blk_k) + "; ++kk)");
            fence_step();
            w_.line("T xa[" + I(tm) + "], xb[" + I(tn) + "];");
            if (vec_ > 1) {
                const std::string v = I(vec_);
                w_.line("#pragma unroll");
                w_.open("for (int i = 0; i < " + I(tm) + "; i += " + v + ")");
                w_.line("const bs_vec x = BS_VEC_AT(&sA[kk][" + simt_row("i") + "]);");
                w_.line("#pragma unroll");
                w_.line("for (int e = 0; e < " + v + "; ++e) xa[i + e] = " + rd_a("x.v[e]") + ";");
                w_.close();
                w_.line("#pragma unroll");
                w_.open("for (int j = 0; j < " + I(tn) + "; j += " + v + ")");
                w_.line("const bs_vec x = BS_VEC_AT(&sB[kk][" + simt_col("j") + "]);");
                w_.line("#pragma unroll");
                w_.line("for (int e = 0; e < " + v + "; ++e) xb[j + e] = " + rd_b("x.v[e]") + ";");
                w_.close();
            } else {
                w_.line("#pragma unroll");
                w_.line("for (int i = 0; i < " + I(tm) + "; ++i) xa[i] = " + rd_a("sA[kk][tx + i * " + I(c_.dim_x) + "]") + ";");
                w_.line("#pragma unroll");
                w_.line("for (int j = 0; j < " + I(tn) + "; ++j) xb[j] = " + rd_b("sB[kk][ty + j * " + I(c_.dim_y) + "]") + ";");
            }
            w_.line("#pragma unroll");
            w_.line("for (int i = 0; i < " + I(tm) + "; ++i)");
            w_.line("  #pragma unroll");
            w_.line("  for (int j = 0; j < " + I(tn) + "; ++j) acc[i][j] = bs_fma(xa[i], xb[j], acc[i][j]);");
            w_.close();
        });
        w_.line("const bool beta_zero = bs_is_zero(beta);");
        w_.line("#pragma unroll");
        w_.open("for (int i = 0; i < " + I(tm) + "; ++i)");
        w_.line("#pragma unroll");
        w_.open("for (int j = 0; j < " + I(tn) + "; ++j)");
        w_.line("const int gi = row0 + " + simt_row("i") + ", gj = col0 + " + simt_col("j") + ";");
        store_element("gi", "gj", "acc[i][j]");
        w_.close();
        w_.close();
    }

    // FP64 tensor cores: warp (wx, wy) owns rows wx*wm.. and columns wy*wn.. of the block tile as
    // (wm/8) x (wn/8) fragments; lane l holds A(l/4, l%4), B(l%4, l/4) and C(l/4, 2(l%4) + {0, 1}).
    // FP64 tensor cores: warp (wx, wy) owns rows wx*wm.. and columns wy*wn.. of the block tile as
    // (wm/8) x (wn/8) fragments; lane l holds A(l/4, l%4), B(l%4, l/4) and C(l/4, 2(l%4) + {0, 1}).
    // Complex double: four real products per fragment (re += ar br - ai bi, im += ar bi + ai br).
    void dmma_body() {
        const int wm = c_.blk_m / c_.dim_x, wn = c_.blk_n / c_.dim_y, fm = wm / 8, fn = wn / 8;
        const bool cplx = is_complex(s_.precision);
        const std::string dims = "[" + I(fm) + "][" + I(fn) + "][2]";
        w_.line("const int warp = tid / 32, lane = tid % 32;");
        w_.line("const int wr = (warp % " + I(c_.dim_x) + ") * " + I(wm) + ", wc = (warp / " + I(c_.dim_x) + ") * " + I(wn) + ";");
        w_.line("const int g = lane / 4, q = lane % 4;");
        w_.line("double acc" + dims + (cplx ? ", acc_im" + dims : "") + ";");
        w_.line("#pragma unroll");
        w_.line("for (int i = 0; i < " + I(fm) + "; ++i)");
        w_.line("  #pragma unroll");
        w_.line(std::string("  for (int j = 0; j < ") + I(fn) + "; ++j) acc[i][j][0] = acc[i][j][1] = 0.0" +
                (cplx ? ", acc_im[i][j][0] = acc_im[i][j][1] = 0.0;" : ";"));
        k_loop([&] {
            w_.line("#pragma unroll");
            w_.open("for (int k4 = 0; k4 < " + I(c_.blk_k) + "; k4 += 4)");
            fence_step();
            w_.line("T xa[" + I(fm) + "], xb[" + I(fn) + "];");
            w_.line("#pragma unroll");
            w_.line("for (int i = 0; i < " + I(fm) + "; ++i) xa[i] = " + rd_a("sA[k4 + q][wr + i * 8 + g]") + ";");
            w_.line("#pragma unroll");
            w_.line("for (int j = 0; j < " + I(fn) + "; ++j) xb[j] = " + rd_b("sB[k4 + q][wc + j * 8 + g]") + ";");
            w_.line("#pragma unroll");
            w_.open("for (int i = 0; i < " + I(fm) + "; ++i)");
            w_.line("#pragma unroll");
            w_.open("for (int j = 0; j < " + I(fn) + "; ++j)");
            if (cplx) {
                w_.line("bs_dmma(acc[i][j][0], acc[i][j][1], xa[i].re, xb[j].re);");
                w_.line("bs_dmma(acc[i][j][0], acc[i][j][1], -xa[i].im, xb[j].im);");
                w_.line("bs_dmma(acc_im[i][j][0], acc_im[i][j][1], xa[i].re, xb[j].im);");
                w_.line("bs_dmma(acc_im[i][j][0], acc_im[i][j][1], xa[i].im, xb[j].re);");
            } else {
                w_.line("bs_dmma(acc[i][j][0], acc[i][j][1], xa[i], xb[j]);");
            }
            w_.close();
            w_.close();
            w_.close();
        });
        w_.line("const bool beta_zero = bs_is_zero(beta);");
        w_.line("#pragma unroll");
        w_.open("for (int i = 0; i < " + I(fm) + "; ++i)");
        w_.line("#pragma unroll");
        w_.open("for (int j = 0; j < " + I(fn) + "; ++j)");
        w_.line("#pragma unroll");
        w_.open("for (int h = 0; h < 2; ++h)");
        w_.line("const int gi = row0 + wr + i * 8 + g, gj = col0 + wc + j * 8 + 2 * q + h;");
        store_element("gi", "gj", cplx ? "bs_make(acc[i][j][h], acc_im[i][j][h])" : "acc[i][j][h]");
        w_.close();
        w_.close();
        w_.close();
    }

    const GemmSpec& s_;
    const GemmConfig& c_;
    int threads_ = 0, lda_s_ = 0, ldb_s_ = 0, a_per_thread_ = 0, b_per_thread_ = 0;
    bool pipelined_ = false;
    bool o32_a_ = false, o32_b_ = false;  // operand A (B) addressed by 32-bit offsets from its slice base
    bool inc_a_ = false, inc_b_ = false;  // operand A (B) read through pointers advanced per slice (copy_offsets 3)
    bool narrow_ = false;                 // emitting the body of the problems with narrow leading dimensions
    std::string o32_load_, o32_ld_;  // load_operand: the slice base read by 32-bit offsets ("": 64-bit)
    GemmOperand o32_op_ = GemmOperand::no_trans;
    int vec_ = 1;  // SIMT: elements per vector read of the slices (1: scalar reads)
    SourceWriter w_;
    bool device_function_ = false;  // path_function: the body as one path of a fused kernel
};

}  // namespace

const char* to_string(GemmOperand op) {
    switch (op) {
        case GemmOperand::no_trans: return "n";
        case GemmOperand::trans: return "t";
        case GemmOperand::conj_trans: return "c";
        case GemmOperand::symmetric_lower: return "syl";
        case GemmOperand::symmetric_upper: return "syu";
        case GemmOperand::hermitian_lower: return "hel";
        case GemmOperand::hermitian_upper: return "heu";
    }
    return "?";
}

const char* to_string(GemmPart part) { return part == GemmPart::full ? "full" : part == GemmPart::lower ? "lower" : "upper"; }
const char* to_string(GemmRegion region) {
    return region == GemmRegion::all ? "all" : region == GemmRegion::interior ? "interior" : "edge";
}

// The fused kernel: every path's helpers and body in a namespace of its own, then the kernel that finds
// its block's path in the table and calls it with the block's coordinates in the path's grid.
KernelSource generate_fused(const GemmSpec& s) {
    KernelSource k;
    k.kernel_name = name_of(s);
    const std::size_t paths = s.fused.size();
    const KernelResources first = gemm_family().resources(fused_path(s, 0));
    int min_blocks = 0;
    for (std::size_t i = 0; i < paths; ++i) {
        const int b = std::max(s.fused[i].min_blocks_per_sm, 1);
        min_blocks = i == 0 ? b : std::min(min_blocks, b);
    }
    std::ostringstream o;
    o << "// " << k.kernel_name << ": generated by libsolver/src/codegen/blas3/gemm.cpp (one launch, " << paths << " size bins)\n";
    o << kernel_prelude(s.precision);
    for (std::size_t i = 0; i < paths; ++i)
        o << "namespace bs_path" << i << " {\n" << Generator(fused_path(s, i)).path_function("bs_path") << "}  // namespace bs_path" << i << "\n";
    const std::string n = std::to_string(paths);
    o << "// path i: blocks [end[i-1], end[i]) of the grid, its own gx x gy x gz grid over them (x fastest), bin bin[i]'s list\n"
      << "struct bs_fused_paths { int end[" << n << "]; int gx[" << n << "]; int gy[" << n << "]; int gz[" << n << "]; int bin[" << n << "]; };\n"
      << "BS_KERNEL_HEAD(" << first.threads_per_block << ", " << min_blocks << ") " << k.kernel_name << "(\n"
      << "    int batch, const int* m_v, int m_sub, int m_lim, const int* n_v, int n_sub, int n_lim,\n"
      << "    const int* k_v, int k_sub, int k_lim,\n"
      << "    T alpha, const T* const* A, const int* lda_v, int a_row, int a_col,\n"
      << "    const T* const* B, const int* ldb_v, int b_row, int b_col,\n"
      << "    T beta, T* const* C, const int* ldc_v, int c_row, int c_col, const int* skip,\n"
      << "    const int* lists, const int* counts, bs_fused_paths paths)\n"
      << "{\n"
      << "  const unsigned bid = blockIdx.x;\n";
    // each path's arm reads its own table fields by constant index (a runtime index into the parameter
    // arrays makes the compiler copy them to local memory: 184-224 bytes of spills on d's paths)
    const std::string args = "batch, m_v, m_sub, m_lim, n_v, n_sub, n_lim, k_v, k_sub, k_lim, alpha, A, lda_v, a_row, a_col, "
                             "B, ldb_v, b_row, b_col, beta, C, ldc_v, c_row, c_col, skip, "
                             "lists + (long long)paths.bin[I] * batch, counts + paths.bin[I], "
                             "local % gx, local % gxy / gx, local / gxy, (unsigned)paths.gz[I]";
    for (std::size_t i = 0; i < paths; ++i) {
        const std::string I = std::to_string(i), before = i > 0 ? "(unsigned)paths.end[" + std::to_string(i - 1) + "]" : "0u";
        std::string call = args;
        for (std::size_t at; (at = call.find("[I]")) != std::string::npos;) call.replace(at, 3, "[" + I + "]");
        o << "  " << (i == 0 ? "" : "else ") << (i + 1 < paths ? "if (bid < (unsigned)paths.end[" + I + "]) " : "") << "{\n"
          << "    const unsigned local = bid - " << before << ", gx = (unsigned)paths.gx[" << I << "], gxy = gx * (unsigned)paths.gy["
          << I << "];\n"
          << "    bs_path" << I << "::bs_path(" << call << ");\n"
          << "  }\n";
    }
    o << "}\n";
    // under the host emulator of the tests: the kernel called from cudaLaunchKernel-style arguments
    const char* types[] = {"int", "const int*", "int", "int", "const int*", "int", "int", "const int*", "int", "int",
                           "T", "const T* const*", "const int*", "int", "int", "const T* const*", "const int*",
                           "int", "int", "T", "T* const*", "const int*", "int", "int", "const int*",
                           "const int*", "const int*", "bs_fused_paths"};
    o << "#ifdef BS_HOST_EMULATION\ninline void bs_host_entry(void** args) { " << k.kernel_name << "(";
    for (int i = 0; i < 28; ++i) o << (i ? ", " : "") << "*static_cast<" << types[i] << "*>(args[" << i << "])";
    o << "); }\n#endif\n";
    k.source = o.str();
    k.options = {"--std=c++17"};
    return k;
}

std::string GemmFamily::can_implement(const GemmSpec& s) const {
    if (!s.fused.empty()) {
        if (s.fused.size() < 2) return "config.bin_launch: a fused kernel runs two size bins or more";
        if (s.region != GemmRegion::all || s.full_tiles) return "config.bin_launch: a fused kernel runs whole bins (no region split, sizes of the bins)";
        int threads = 0;
        for (std::size_t i = 0; i < s.fused.size(); ++i) {
            const GemmSpec p = fused_path(s, i);
            if (const std::string problem = can_implement(p); !problem.empty()) return problem;
            if (p.config.tile_list) return "config.tile_list: a fused kernel's paths run the grid of their tiles (tile_list 0)";
            const int t = resources(p).threads_per_block;
            if (i > 0 && t != threads) return "config.bin_launch: a fused kernel's paths need the same threads per block";
            threads = t;
        }
        return "";
    }
    const GemmConfig& c = s.config;
    auto positive = [](int v) { return v >= 1; };
    if (!positive(c.blk_m) || c.blk_m > 256) return "config.blk_m: 1 <= blk_m <= 256";
    if (!positive(c.blk_n) || c.blk_n > 256) return "config.blk_n: 1 <= blk_n <= 256";
    if (!positive(c.blk_k) || c.blk_k > 64) return "config.blk_k: 1 <= blk_k <= 64";
    if (!positive(c.dim_x)) return "config.dim_x: >= 1";
    if (!positive(c.dim_y)) return "config.dim_y: >= 1";
    if (c.min_blocks_per_sm < 0 || c.min_blocks_per_sm > 32) return "config.min_blocks_per_sm: 0 <= min_blocks_per_sm <= 32";
    if (c.stages != 0 && (c.stages < 2 || c.stages > 6)) return "config.stages: 0 (through registers) or 2 to 6 (cp.async ring)";
    if (c.copy_offsets < 0 || c.copy_offsets > 3)
        return "config.copy_offsets: 0 (64-bit), 1 (32-bit from the slice base), 2 (1, unrolled; the ring) or 3 (pointers "
               "advanced per slice)";
    if (c.dmma16 < 0 || c.dmma16 > 1) return "config.dmma16: 0 (mma m8n8k4) or 1 (mma m16n8k8)";
    if (c.dmma16 == 1 && !dmma16_fits(s))
        return "config.dmma16: 1 needs d on tensor cores, blk_m / dim_x a multiple of 16, blk_n / dim_y of 8, blk_k of 8";
    if (c.tile_list < 0 || c.tile_list > 1) return "config.tile_list: 0 (a block per tile of the largest problem) or 1 (a persistent grid over the tiles)";
    if (c.copy_offsets == 2 && !pipelined(s)) return "config.copy_offsets: 2 needs the cp.async ring (stages >= 2, no Hermitian operand)";
    if (c.tc_row != 0 && c.tc_row != 4 && c.tc_row != 8) return "config.tc_row: 0 (the default), 4 or 8";
    if (c.tc_row != 0 && !tc_row_applies(s)) return "config.tc_row: 4 or 8 only for d on tensor cores (else 0)";
    if (c.bin_launch < 0 || c.bin_launch > 2)
        return "config.bin_launch: 0 (the bins one after another), 1 (a stream per bin) or 2 (every bin in one launch)";
    if (c.bin_order < 0 || c.bin_order > 1) return "config.bin_order: 0 (as binned) or 1 (largest m * n * k first)";
    if (c.blk_m % c.dim_x != 0) return "config.dim_x: must divide blk_m";
    if (c.blk_n % c.dim_y != 0) return "config.dim_y: must divide blk_n";
    const long long threads = (c.tensor_cores ? 32LL : 1LL) * c.dim_x * c.dim_y;
    if (threads > max_threads_per_block) return "config.dim_y: dim_x * dim_y threads (warps with tensor_cores) exceed 1024 threads";
    if (c.tensor_cores && is_single(s.precision)) {  // TF32 m16n8k8
        if ((c.blk_m / c.dim_x) % 16 != 0) return "config.blk_m: blk_m / dim_x must be a multiple of 16 (TF32 fragments)";
        if ((c.blk_n / c.dim_y) % 8 != 0) return "config.blk_n: blk_n / dim_y must be a multiple of 8 (TF32 fragments)";
        if (c.blk_k % 8 != 0) return "config.blk_k: a multiple of 8 (TF32 k-step)";
    } else if (c.tensor_cores) {
        if ((c.blk_m / c.dim_x) % 8 != 0) return "config.blk_m: blk_m / dim_x must be a multiple of 8 (DMMA fragments)";
        if ((c.blk_n / c.dim_y) % 8 != 0) return "config.blk_n: blk_n / dim_y must be a multiple of 8 (DMMA fragments)";
        if (c.blk_k % 4 != 0) return "config.blk_k: a multiple of 4 (DMMA k-step)";
    }
    // accumulators per thread (complex tensor-core forms keep real and imaginary parts as two real sets)
    const int per_thread = (c.blk_m / c.dim_x) * (c.blk_n / c.dim_y) / (c.tensor_cores ? 32 : 1);
    if (per_thread * words_per_element(s.precision) > 128)
        return "config.blk_m: more than 128 accumulator registers per thread";
    // The register path launches without the opt-in; the ring opts in to the most an SM 9.0 block may have.
    if (!pipelined(s) && resources(s).shared_bytes > 48 * 1024) return "config.blk_k: shared slices above 48 KB";
    if (pipelined(s) && resources(s).shared_bytes > kMaxRingSharedBytes)
        return "config.stages: shared slices above 227 KB (stages x blk_k x (blk_m + blk_n))";
    const bool herm = s.op_a == GemmOperand::hermitian_lower || s.op_a == GemmOperand::hermitian_upper ||
                      s.op_b == GemmOperand::hermitian_lower || s.op_b == GemmOperand::hermitian_upper;
    if ((herm || s.real_diagonal) && !is_complex(s.precision)) return "precision: Hermitian forms need complex data";
    if (is_symmetric(s.op_a) && is_symmetric(s.op_b)) return "op_b: one symmetric operand at most";
    if (s.region == GemmRegion::edge &&
        (s.edge_m < c.blk_m || s.edge_n < c.blk_n || s.edge_m % c.blk_m != 0 || s.edge_n % c.blk_n != 0))
        return "config.blk_m: the edge kernel's tile must divide the interior tile edge_m x edge_n";
    return "";
}

KernelResources GemmFamily::resources(const GemmSpec& s) const {
    if (!s.fused.empty()) {  // the paths' common block, the largest path's shared memory
        KernelResources r;
        for (std::size_t i = 0; i < s.fused.size(); ++i) {
            const KernelResources p = resources(fused_path(s, i));
            r.threads_per_block = p.threads_per_block;
            r.shared_bytes = std::max(r.shared_bytes, p.shared_bytes);
        }
        return r;
    }
    const GemmConfig& c = s.config;
    KernelResources r;
    r.threads_per_block = (c.tensor_cores ? 32 : 1) * c.dim_x * c.dim_y;
    // dynamic shared memory: two A and two B slices (double buffering) or the ring's `stages` of each
    r.shared_bytes = std::size_t(a_slices_bytes(s)) +
                     std::size_t(buffers(s)) * c.blk_k * slice_row(s, c.blk_n) * element_bytes(s.precision);
    return r;
}

GemmConfig GemmFamily::default_config(const GemmQuery& q) const {
    return batchsolve::default_gemm_config(q.precision, q.max_m, q.max_n, q.max_k, q.triangle, q.arch);
}

KernelSource GemmFamily::generate(const GemmSpec& spec) const {
    return spec.fused.empty() ? Generator(spec).generate() : generate_fused(spec);
}

std::string GemmFamily::kernel_name(const GemmSpec& spec) const { return name_of(spec); }

const GemmFamily& gemm_family() {
    static const GemmFamily family;
    return family;
}

}  // namespace batchsolve::codegen::blas3
