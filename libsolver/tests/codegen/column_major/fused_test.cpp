// The fused column-major family (codegen/cholesky/fused.hpp) and the register kernels' warp-
// synchronous steps (warp_synchronous_steps) without a GPU: how a configuration reaches them
// (families, column_major_spec, the tuning form), their checks naming the field, the shape and
// shared-memory plan, and their names. Their arithmetic is checked by the emulation test
// (fused_specs() and warp_step_specs() in test_specs.hpp).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "codegen/cholesky/families.hpp"
#include "codegen/cholesky/fused.hpp"
#include "cuda/tuned/column_major_cholesky.hpp"
#include "test_specs.hpp"

namespace batchsolve::test::column_major {
namespace {

using cuda_backend::tuned::column_major_kernel_name;
using cuda_backend::tuned::column_major_shape;
using cuda_backend::tuned::column_major_spec;
using cuda_backend::tuned::column_major_spec_problem;

bool starts(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

CholeskyConfig fused_config(int nb, Looking looking, bool unroll, int matrices) {
    CholeskyConfig c;
    c.staged = true, c.warps_per_matrix = 0;
    c.nb = nb, c.looking = looking, c.full_unroll = unroll, c.threads_per_block = matrices;
    return c;
}

TEST(ColumnMajorFused, ReachedThroughStagedWithoutWarps) {
    for (Looking l : {Looking::top, Looking::left, Looking::right}) {
        const auto spec = column_major_spec(Routine::potrf, Precision::s, Uplo::lower, 16, 0, fused_config(8, l, false, 64));
        EXPECT_EQ(spec.config.looking, l);  // the interleaved body's order, kept
        EXPECT_EQ(std::string(codegen::cholesky::family_of(spec).name()), "fused");
        EXPECT_EQ(codegen::cholesky::fused_family().can_implement(spec), "");
        EXPECT_NE(codegen::cholesky::staged_family().can_implement(spec), "");
        EXPECT_NE(codegen::cholesky::shared_memory_family().can_implement(spec), "");
    }
    const auto spec =
        column_major_spec(Routine::posv, Precision::d, Uplo::upper, 12, 3, fused_config(6, Looking::left, true, 32));
    EXPECT_EQ(column_major_kernel_name(spec), "posv_cmfused_d_upper_n12_nb6_left_unrolled_m32_r1");
}

TEST(ColumnMajorFused, DefaultsRunAndFitTheirBudget) {
    for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z})
        for (int n : {1, 2, 7, 8, 16, 24, 32, 48, 64})
            for (Routine r : {Routine::potrf, Routine::posv}) {
                const CholeskyConfig c = codegen::cholesky::fused_default_config(r, p, n);
                const auto spec = column_major_spec(r, p, Uplo::lower, n, 1, c);
                ASSERT_EQ(column_major_spec_problem(spec), "") << precision_letter(p) << " n " << n;
                const auto shape = column_major_shape(spec);
                EXPECT_EQ(shape.block_threads, c.threads_per_block);
                EXPECT_EQ(shape.matrices_per_block, c.threads_per_block);
                EXPECT_GE(shape.matrices_per_block, 1);
                EXPECT_LE(shape.shared_bytes, std::size_t(codegen::cholesky::column_major_max_shared_bytes));
            }
}

TEST(ColumnMajorFused, PlanOfSharedMemory) {
    // s n = 16, 64 matrices: the squares with an odd pitch of 65, then the flags
    const auto spec =
        column_major_spec(Routine::potrf, Precision::s, Uplo::lower, 16, 0, fused_config(8, Looking::top, true, 64));
    const auto shape = column_major_shape(spec);
    EXPECT_EQ(shape.col_pitch, 65);
    EXPECT_EQ(shape.off_packed, 0u);
    EXPECT_EQ(shape.off_flags, std::size_t(16 * 16 * 65 * 4));
    EXPECT_EQ(shape.shared_bytes, std::size_t(16 * 16 * 65 * 4 + 256));
    // posv adds nrhs_block columns of B per matrix
    CholeskyConfig c = fused_config(4, Looking::top, true, 32);
    c.nrhs_block = 2;
    const auto posv = column_major_shape(column_major_spec(Routine::posv, Precision::d, Uplo::lower, 8, 2, c));
    EXPECT_EQ(posv.col_pitch, 33);
    EXPECT_EQ(posv.off_rows, std::size_t(8 * 8 * 33 * 8));
    EXPECT_EQ(posv.off_flags, posv.off_rows + ((8 * 2 * 33 * 8 + 15) / 16) * 16);
}

TEST(ColumnMajorFused, RejectsBadConfigsNamingTheField) {
    auto problem = [](int n, auto edit, Routine r = Routine::potrf, Precision p = Precision::s) {
        CholeskyConfig c = fused_config(4, Looking::top, false, 32);
        edit(c);
        return column_major_spec_problem(column_major_spec(r, p, Uplo::lower, n, 1, c));
    };
    EXPECT_EQ(problem(16, [](CholeskyConfig&) {}), "");
    EXPECT_TRUE(starts(problem(0, [](CholeskyConfig&) {}), "n:"));
    EXPECT_TRUE(starts(problem(129, [](CholeskyConfig&) {}), "n:"));
    EXPECT_TRUE(starts(problem(16, [](CholeskyConfig&) {}, Routine::potrs), "config.staged:"));
    EXPECT_TRUE(starts(problem(16, [](CholeskyConfig& c) { c.threads_per_block = 0; }), "config.threads_per_block:"));
    EXPECT_TRUE(starts(problem(16, [](CholeskyConfig& c) { c.threads_per_block = 1025; }), "config.threads_per_block:"));
    EXPECT_TRUE(starts(problem(64, [](CholeskyConfig& c) { c.threads_per_block = 64; }), "config.threads_per_block:"))
        << "64 squares of s n = 64 are 1 MiB of shared memory";
    EXPECT_TRUE(starts(problem(16, [](CholeskyConfig& c) { c.nb = 17; }), "config.nb:"));
    EXPECT_TRUE(starts(problem(32, [](CholeskyConfig& c) { c.nb = 32; }), "config.nb:"));  // registers
    EXPECT_TRUE(starts(problem(16, [](CholeskyConfig& c) { c.matrices_per_block = 2; }), "config.matrices_per_block:"));
    EXPECT_TRUE(starts(problem(16, [](CholeskyConfig& c) { c.rows_per_thread = 2; }), "config.rows_per_thread:"));
    EXPECT_TRUE(starts(problem(16, [](CholeskyConfig& c) { c.tensor_cores = true; }, Routine::potrf, Precision::d),
                       "config.tensor_cores:"));
    EXPECT_TRUE(starts(problem(16, [](CholeskyConfig& c) { c.nrhs_block = 9; }, Routine::posv), "config.nrhs_block:"));
    EXPECT_TRUE(starts(problem(16, [](CholeskyConfig& c) { c.solve_warps_per_matrix = 4; }, Routine::posv),
                       "config.solve_warps_per_matrix:"));
}

TEST(ColumnMajorWarpSteps, OnlyWhereAWarpHoldsWholeMatrices) {
    auto spec = [](int n, int rows_per_thread, int threads_per_row, Looking l, Routine r = Routine::potrf) {
        CholeskyConfig c = cuda_backend::tuned::default_column_major_config(r, Precision::s, n, 1);
        c.rows_per_thread = rows_per_thread, c.threads_per_row = threads_per_row, c.looking = l;
        return column_major_spec(r, Precision::s, Uplo::lower, n, 1, c);
    };
    const auto ws = spec(32, 4, 1, Looking::left);  // 8 threads per matrix
    EXPECT_TRUE(cuda_backend::tuned::warp_synchronous_steps(ws));
    EXPECT_EQ(column_major_spec_problem(ws), "");
    EXPECT_EQ(column_major_kernel_name(ws).substr(column_major_kernel_name(ws).size() - 3), "_ws");
    // other orders are the one-barrier-per-block-step kernels, written as right (their names unchanged)
    const auto plain = spec(32, 4, 1, Looking::top);
    EXPECT_EQ(plain.config.looking, Looking::right);
    EXPECT_FALSE(cuda_backend::tuned::warp_synchronous_steps(plain));
    EXPECT_EQ(column_major_kernel_name(plain) + "_ws", column_major_kernel_name(ws));
    // 33 rows of one thread each: a matrix spans two warps
    EXPECT_TRUE(starts(column_major_spec_problem(spec(33, 1, 1, Looking::left)), "config.looking:"));
    // 5 threads per matrix do not divide a warp
    EXPECT_TRUE(starts(column_major_spec_problem(spec(10, 2, 1, Looking::left)), "config.looking:"));
    // potrs has no elimination: left is dropped
    EXPECT_FALSE(cuda_backend::tuned::warp_synchronous_steps(spec(32, 4, 1, Looking::left, Routine::potrs)));
}

TEST(ColumnMajorWarpSteps, OneRowPerLaneRunsTheRowsKernel) {
    auto spec = [](int n, int rows_per_thread, Routine r = Routine::potrf, Looking l = Looking::left) {
        CholeskyConfig c = cuda_backend::tuned::default_column_major_config(r, Precision::d, n, 1);
        c.rows_per_thread = rows_per_thread, c.threads_per_row = 1, c.looking = l, c.full_unroll = true;
        return column_major_spec(r, Precision::d, Uplo::lower, n, 1, c);
    };
    auto ends = [](const std::string& text, const std::string& tail) {
        return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
    };
    for (int n : {4, 8, 16, 32}) {
        const auto s = spec(n, 1);
        ASSERT_EQ(column_major_spec_problem(s), "") << n;
        EXPECT_TRUE(ends(column_major_kernel_name(s), "_rows")) << column_major_kernel_name(s);
        EXPECT_EQ(column_major_shape(s).block_threads, 128);
        EXPECT_NE(cuda_backend::tuned::generate_column_major_kernel(s).source.find("bs_shfl(r[k], k, " + std::to_string(n) + ")"),
                  std::string::npos);
    }
    // other shapes, orders, sizes and routines keep the register kernel's own steps
    EXPECT_TRUE(ends(column_major_kernel_name(spec(32, 2)), "_ws"));
    EXPECT_TRUE(ends(column_major_kernel_name(spec(2, 1)), "_ws"));
    EXPECT_FALSE(ends(column_major_kernel_name(spec(32, 1, Routine::potrf, Looking::right)), "_rows"));
    EXPECT_EQ(column_major_kernel_name(spec(8, 1, Routine::posv)).find("_rows"), std::string::npos);
}

// config.lean_addressing: the rows kernel's own text (named _rows_lean, one pointer per lane stepped by
// lda, no minimum of blocks in the launch bounds unless max_registers asks); every other kernel refuses it.
TEST(ColumnMajorWarpSteps, LeanAddressingIsTheRowsKernelsOnly) {
    auto spec = [](int n, int rows_per_thread, Routine r = Routine::potrf, Uplo u = Uplo::lower) {
        CholeskyConfig c = cuda_backend::tuned::default_column_major_config(r, Precision::s, n, 1);
        c.rows_per_thread = rows_per_thread, c.threads_per_row = 1, c.looking = Looking::left, c.full_unroll = true;
        c.threads_per_block = 128, c.lean_addressing = true;
        return column_major_spec(r, Precision::s, u, n, 1, c);
    };
    for (Uplo u : {Uplo::lower, Uplo::upper})
        for (int n : {4, 8, 16, 32}) {
            const auto s = spec(n, 1, Routine::potrf, u);
            ASSERT_EQ(column_major_spec_problem(s), "") << n;
            const std::string name = column_major_kernel_name(s), text = cuda_backend::tuned::generate_column_major_kernel(s).source;
            EXPECT_NE(name.find("_rows_lean"), std::string::npos) << name;
            EXPECT_NE(text.find("BS_KERNEL_HEAD(128, 0)"), std::string::npos) << name;
            EXPECT_EQ(text.find("(long long)j * lda"), std::string::npos) << name;  // no per-element 64-bit offset
            auto plain = s;
            plain.config.lean_addressing = false;
            EXPECT_NE(column_major_kernel_name(plain), name);
            EXPECT_NE(cuda_backend::tuned::generate_column_major_kernel(plain).source.find("BS_KERNEL_HEAD(128, 1)"), std::string::npos);
        }
    auto capped = spec(32, 1);
    capped.config.max_registers = 56;  // then the cap's minimum of blocks, as in every other kernel
    EXPECT_NE(cuda_backend::tuned::generate_column_major_kernel(capped).source.find("BS_KERNEL_HEAD(128, 9)"), std::string::npos);
    for (const auto& s : {spec(32, 2), spec(2, 1)})
        EXPECT_EQ(column_major_spec_problem(s).rfind("config.lean_addressing:", 0), 0u) << s.n << ": " << column_major_spec_problem(s);
    // n not a multiple of the vector: not the packed rows kernel either (and a matrix's lanes do not divide 32)
    for (const auto& s : {spec(6, 1, Routine::posv), spec(13, 1)}) EXPECT_NE(column_major_spec_problem(s), "") << s.n;
}

// The packed rows kernel (posv at n <= 32, potrf where n does not divide 32; n a multiple of the vector):
// floor(32 / n) whole matrices per warp, every warp of the block, shared memory for the column buffers
// and (posv) the rows of L; one right-hand side at a time (nrhs_block unread, so not in the name).
TEST(ColumnMajorWarpSteps, PackedRowsKernelShapes) {
    auto spec = [](Precision p, int n, Routine r, int threads_per_block, int nrhs_block = 1) {
        CholeskyConfig c = cuda_backend::tuned::default_column_major_config(r, p, n, 1);
        c.rows_per_thread = 1, c.threads_per_row = 1, c.looking = Looking::left, c.full_unroll = true;
        c.threads_per_block = threads_per_block, c.lean_addressing = true, c.nrhs_block = nrhs_block;
        return column_major_spec(r, p, Uplo::lower, n, 3, c);
    };
    struct Case { Precision p; int n; Routine r; int tpb, mpb; };
    for (const Case& k : {Case{Precision::s, 12, Routine::potrf, 128, 8}, Case{Precision::d, 24, Routine::potrf, 64, 2},
                          Case{Precision::s, 12, Routine::posv, 128, 8}, Case{Precision::d, 32, Routine::posv, 128, 4},
                          Case{Precision::s, 4, Routine::posv, 256, 64}, Case{Precision::z, 7, Routine::posv, 32, 4},
                          Case{Precision::c, 30, Routine::potrf, 96, 3}}) {
        const auto s = spec(k.p, k.n, k.r, k.tpb);
        ASSERT_EQ(column_major_spec_problem(s), "") << k.n;
        const auto shape = column_major_shape(s);
        EXPECT_EQ(shape.block_threads, k.tpb) << k.n;
        EXPECT_EQ(shape.matrices_per_block, k.mpb) << k.n;
        const std::string name = column_major_kernel_name(s), text = cuda_backend::tuned::generate_column_major_kernel(s).source;
        EXPECT_NE(name.find("_rows_lean"), std::string::npos) << name;
        EXPECT_EQ(text.find("__syncthreads"), std::string::npos) << name;  // warp-synchronous
        if (k.r == Routine::posv) {
            EXPECT_EQ(column_major_kernel_name(spec(k.p, k.n, k.r, k.tpb, 4)), name);  // nrhs_block unread
            EXPECT_GT(shape.shared_bytes, std::size_t(k.tpb / 32) * 64 * (shape.words * 4)) << name;  // + the rows of L
        }
    }
}

// potrf on a square thread grid (ceil(n / rows_per_thread) == threads_per_row >= 4) and posv on one of
// side 8 or 16: the square-grid kernel (_sq<P>, only the triangle's share in registers, shared memory
// two column buffers per slot, posv also the packed factor); smaller or non-square grids and staged
// configurations keep their own kernels; the tile limit counts the triangle's share.
TEST(ColumnMajorSquareGrid, OnlyOnSquareGridsOfTheirSides) {
    auto spec = [](Precision p, int n, int ra, int tc, Routine r = Routine::potrf, Uplo u = Uplo::lower) {
        CholeskyConfig c = cuda_backend::tuned::default_column_major_config(r, p, n, 1);
        c.rows_per_thread = ra, c.threads_per_row = tc, c.threads_per_block = 128, c.nb = 8, c.full_unroll = false;
        return column_major_spec(r, p, u, n, 1, c);
    };
    auto is_square = [](const ColumnMajorSpec& s) { return column_major_kernel_name(s).find("_sq") != std::string::npos; };
    const auto s64 = spec(Precision::s, 64, 8, 8);
    ASSERT_EQ(column_major_spec_problem(s64), "");
    EXPECT_EQ(column_major_kernel_name(s64), "potrf_cm_s_lower_n64_sq8_m2");
    EXPECT_EQ(column_major_shape(s64).block_threads, 128);
    EXPECT_EQ(column_major_shape(s64).shared_bytes, 2u * 2 * 8 * 8 * sizeof(float));  // 2 slots x 2 buffers x n
    const std::string text = cuda_backend::tuned::generate_column_major_kernel(s64).source;
    EXPECT_NE(text.find("T r[36];"), std::string::npos);  // 8 x 9 / 2 elements of the triangle
    EXPECT_NE(text.find("BS_KERNEL_HEAD(128, 0)"), std::string::npos);
    EXPECT_TRUE(is_square(spec(Precision::d, 100, 13, 8, Routine::potrf, Uplo::upper)));
    EXPECT_TRUE(is_square(spec(Precision::z, 20, 5, 4)));
    // the same grid from another rows_per_thread (ceil(33 / 9) = ceil(33 / 10) = 4): one kernel
    EXPECT_EQ(column_major_kernel_name(spec(Precision::d, 33, 9, 4)), column_major_kernel_name(spec(Precision::d, 33, 10, 4)));
    EXPECT_FALSE(is_square(spec(Precision::d, 3, 2, 2)));    // side 2: the shipped 2 x 2 kernel stays
    EXPECT_FALSE(is_square(spec(Precision::s, 64, 8, 4)));   // 8 x 4: not square
    // posv: sides that are multiples of 8 (whole warps per matrix solve from the packed factor)
    EXPECT_TRUE(is_square(spec(Precision::s, 64, 8, 8, Routine::posv)));
    EXPECT_EQ(column_major_kernel_name(spec(Precision::s, 64, 8, 8, Routine::posv)), "posv_cm_s_lower_n64_sq8_m2");
    EXPECT_EQ(column_major_shape(spec(Precision::s, 64, 8, 8, Routine::posv)).shared_bytes,
              2u * 2 * 8 * 8 * sizeof(float) + 2u * 64 * 65 / 2 * sizeof(float));  // + 2 packed factors
    EXPECT_FALSE(is_square(spec(Precision::s, 24, 6, 4, Routine::posv)));  // side 4: 16 threads, half a warp
    // s n = 128 on 8 x 8 threads: a 16 x 16 tile (256 words) is over the limit, its triangle (136) is not
    EXPECT_EQ(column_major_spec_problem(spec(Precision::s, 128, 16, 8)), "");
    EXPECT_EQ(column_major_spec_problem(spec(Precision::d, 128, 16, 8)).rfind("config.threads_per_row:", 0), 0u);
}

// config.compile_time_ld: the square-grid kernel with lda = n in its text (named _ldn, elements at literal
// offsets from one pointer, the lda argument unread); every other kernel refuses it; potrs drops it.
TEST(ColumnMajorSquareGrid, CompileTimeLdIsTheSquareGridsOnly) {
    auto spec = [](Precision p, int n, int ra, int tc, Routine r = Routine::potrf, Uplo u = Uplo::lower) {
        CholeskyConfig c = cuda_backend::tuned::default_column_major_config(r, p, n, 1);
        c.rows_per_thread = ra, c.threads_per_row = tc, c.threads_per_block = 64, c.nb = 8, c.full_unroll = false;
        c.compile_time_ld = true;
        return column_major_spec(r, p, u, n, 1, c);
    };
    for (Uplo u : {Uplo::lower, Uplo::upper})
        for (Routine r : {Routine::potrf, Routine::posv}) {
            const auto s = spec(Precision::s, 64, 8, 8, r, u);
            ASSERT_EQ(column_major_spec_problem(s), "");
            const std::string name = column_major_kernel_name(s), text = cuda_backend::tuned::generate_column_major_kernel(s).source;
            EXPECT_EQ(name, std::string(r == Routine::potrf ? "potrf" : "posv") + "_cm_s_" +
                                (u == Uplo::lower ? "lower" : "upper") + "_n64_sq8_m1_ldn");
            EXPECT_EQ(text.find("* lda"), std::string::npos) << name;  // no run-time stride walk
            EXPECT_NE(text.find(u == Uplo::lower ? "p[512 * y + 8 * x]" : "p[512 * x + 8 * y]"), std::string::npos) << name;
            auto plain = s;
            plain.config.compile_time_ld = false;
            const std::string plain_text = cuda_backend::tuned::generate_column_major_kernel(plain).source;
            EXPECT_NE(plain_text.find("* lda"), std::string::npos);
            EXPECT_EQ(column_major_kernel_name(plain) + "_ldn", name);
        }
    for (const auto& s : {spec(Precision::s, 64, 8, 4), spec(Precision::d, 3, 2, 2), spec(Precision::s, 24, 6, 4, Routine::posv)})
        EXPECT_EQ(column_major_spec_problem(s).rfind("config.compile_time_ld:", 0), 0u) << s.n << ": " << column_major_spec_problem(s);
    EXPECT_FALSE(spec(Precision::s, 64, 8, 8, Routine::potrs).config.compile_time_ld);
}

// config.lean_addressing on a square grid: the lean step loop (named _lean; no branch around a step, no
// row guards where the side divides n, the column buffer in rows of whole 16-byte vectors, an odd number
// of them); the plain text otherwise; potrs drops the field.
TEST(ColumnMajorSquareGrid, LeanStepLoopOnSquareGrids) {
    auto spec = [](Precision p, int n, int ra, int tc, Routine r = Routine::potrf, Uplo u = Uplo::lower) {
        CholeskyConfig c = cuda_backend::tuned::default_column_major_config(r, p, n, 1);
        c.rows_per_thread = ra, c.threads_per_row = tc, c.threads_per_block = 64, c.nb = 8, c.full_unroll = false;
        c.lean_addressing = true;
        return column_major_spec(r, p, u, n, 1, c);
    };
    for (Uplo u : {Uplo::lower, Uplo::upper})
        for (Routine r : {Routine::potrf, Routine::posv}) {
            const auto s = spec(Precision::s, 64, 8, 8, r, u);
            ASSERT_EQ(column_major_spec_problem(s), "");
            const std::string name = column_major_kernel_name(s), text = cuda_backend::tuned::generate_column_major_kernel(s).source;
            EXPECT_EQ(name, std::string(r == Routine::potrf ? "potrf" : "posv") + "_cm_s_" +
                                (u == Uplo::lower ? "lower" : "upper") + "_n64_sq8_m1_lean");
            EXPECT_NE(text.find("const bool last_ok = true;"), std::string::npos) << name;  // 8 divides 64
            EXPECT_EQ(text.find("break;"), std::string::npos) << name;
            EXPECT_EQ(text.find("if (fcol == 0) {"), std::string::npos) << name;  // no branch around a step
            EXPECT_NE(text.find("BS_VEC_AT(cr + 4 * v)"), std::string::npos) << name;
            auto plain = s;
            plain.config.lean_addressing = false;
            EXPECT_EQ(column_major_kernel_name(plain) + "_lean", name);
            EXPECT_NE(cuda_backend::tuned::generate_column_major_kernel(plain).source.find("if (fcol == 0) {"), std::string::npos);
            // rows of 8 floats padded to 12 (3 vectors): 2 buffers of 8 rows (posv: and a vector for b_k)
            EXPECT_EQ(column_major_shape(s).off_packed, 2u * (12 * 8 + (r == Routine::posv ? 4 : 0)) * sizeof(float)) << name;
            EXPECT_EQ(text.find("if (col == 0) {  // y from the elimination") != std::string::npos, r == Routine::posv) << name;
            EXPECT_EQ(column_major_shape(plain).off_packed, 2u * 8 * 8 * sizeof(float)) << name;
        }
    const auto ragged = spec(Precision::d, 100, 13, 8);  // 8 does not divide 100: the guards stay
    ASSERT_EQ(column_major_spec_problem(ragged), "");
    const std::string ragged_text = cuda_backend::tuned::generate_column_major_kernel(ragged).source;
    EXPECT_NE(ragged_text.find("const bool last_ok = 8 * 12 + tr < 100;"), std::string::npos);
    EXPECT_NE(ragged_text.find("if (k >= 100) break;"), std::string::npos);
    EXPECT_EQ(column_major_shape(ragged).off_packed, 2u * 14 * 8 * sizeof(double));  // 13 -> 7 vectors of 2
    for (const auto& s : {spec(Precision::s, 64, 8, 4), spec(Precision::d, 3, 2, 2), spec(Precision::s, 24, 6, 4, Routine::posv)})
        EXPECT_EQ(column_major_spec_problem(s).rfind("config.lean_addressing:", 0), 0u) << s.n << ": " << column_major_spec_problem(s);
    EXPECT_FALSE(spec(Precision::s, 64, 8, 8, Routine::potrs).config.lean_addressing);
}

TEST(ColumnMajorFused, NamesAreUniqueAndTextDeterministic) {
    std::set<std::string> names;
    std::vector<ColumnMajorSpec> specs = fused_specs();
    for (const auto& s : warp_step_specs()) specs.push_back(s);
    for (const auto& s : square_grid_specs()) specs.push_back(s);
    for (const auto& s : lean_square_grid_specs()) specs.push_back(s);
    for (const auto& s : rows_packed_specs()) specs.push_back(s);
    for (const auto& s : specs) {
        ASSERT_EQ(column_major_spec_problem(s), "");
        const auto a = cuda_backend::tuned::generate_column_major_kernel(s);
        const auto b = cuda_backend::tuned::generate_column_major_kernel(s);
        EXPECT_EQ(a.source, b.source);
        EXPECT_EQ(a.kernel_name, column_major_kernel_name(s));
        EXPECT_TRUE(names.insert(a.kernel_name).second) << a.kernel_name;
    }
}

}  // namespace
}  // namespace batchsolve::test::column_major
