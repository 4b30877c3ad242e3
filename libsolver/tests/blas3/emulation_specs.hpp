// The GEMM kernels the host-emulation test runs (emit_gemm_kernels writes their text at build time,
// gemm_emulation_test runs them): every precision, operand form, part and both forms (SIMT, DMMA),
// staged through registers or through the cp.async ring, over the whole batch or a list of problems.
#pragma once

#include <vector>

#include "codegen/blas3/gemm.hpp"

namespace batchsolve::test::blas3 {

inline std::vector<codegen::blas3::GemmSpec> emulation_specs() {
    using codegen::blas3::GemmOperand;
    using codegen::blas3::GemmPart;
    using codegen::blas3::GemmSpec;
    auto spec = [](Precision p, GemmOperand a, GemmOperand b, GemmPart part, bool real_diagonal, GemmConfig c) {
        GemmSpec s;
        s.precision = p, s.op_a = a, s.op_b = b, s.part = part, s.real_diagonal = real_diagonal, s.config = c;
        return s;
    };
    const GemmConfig small{32, 32, 8, 16, 16, false}, wide{64, 64, 8, 16, 16, false}, odd{16, 16, 8, 8, 8, false};
    const GemmConfig tc{32, 32, 8, 2, 2, true}, tc_big{64, 64, 8, 2, 2, true};
    auto ring = [](GemmConfig c, int stages) {
        c.stages = stages;
        return c;
    };
    auto offsets = [](GemmConfig c, int form) {
        c.copy_offsets = form;
        return c;
    };
    auto tiles = [](GemmConfig c) {
        c.tile_list = 1;
        return c;
    };
    auto listed = [](GemmSpec s) {
        s.problem_list = true;
        return s;
    };
    auto interior = [](GemmSpec s) {
        s.region = codegen::blas3::GemmRegion::interior;
        return s;
    };
    auto fused = [](GemmSpec s, std::vector<GemmConfig> paths) {
        s.fused = std::move(paths);
        return s;
    };
    auto edge = [](GemmSpec s, int edge_m, int edge_n) {
        s.region = codegen::blas3::GemmRegion::edge, s.edge_m = edge_m, s.edge_n = edge_n;
        return s;
    };
    return {
        spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, small),
        spec(Precision::z, GemmOperand::conj_trans, GemmOperand::trans, GemmPart::full, false, small),
        spec(Precision::s, GemmOperand::trans, GemmOperand::no_trans, GemmPart::lower, false, wide),
        spec(Precision::c, GemmOperand::no_trans, GemmOperand::conj_trans, GemmPart::upper, true, small),
        spec(Precision::c, GemmOperand::hermitian_lower, GemmOperand::no_trans, GemmPart::full, false, odd),
        spec(Precision::d, GemmOperand::no_trans, GemmOperand::symmetric_upper, GemmPart::full, false, odd),
        spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, tc),
        spec(Precision::d, GemmOperand::trans, GemmOperand::no_trans, GemmPart::lower, false, tc_big),
        spec(Precision::z, GemmOperand::conj_trans, GemmOperand::no_trans, GemmPart::upper, true, tc),
        spec(Precision::s, GemmOperand::no_trans, GemmOperand::trans, GemmPart::full, false, GemmConfig{32, 32, 8, 1, 1, true}),
        spec(Precision::c, GemmOperand::conj_trans, GemmOperand::no_trans, GemmPart::lower, true, GemmConfig{32, 16, 16, 2, 1, true}),
        [&] {  // the uniform-size path (sizes multiples of the tile; the test gives it such a batch)
            GemmSpec s = spec(Precision::z, GemmOperand::no_trans, GemmOperand::conj_trans, GemmPart::full, false, odd);
            s.full_tiles = true;
            return s;
        }(),
        // the cp.async ring (stages >= 2): SIMT with vector reads (d, s, c) and without (z), a symmetric
        // operand through its address map, a Hermitian one (the register path whatever stages says),
        // DMMA and TF32, each operand form once
        spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, ring(wide, 3)),
        spec(Precision::s, GemmOperand::trans, GemmOperand::no_trans, GemmPart::lower, false, ring({64, 64, 8, 8, 8, false}, 4)),
        spec(Precision::z, GemmOperand::conj_trans, GemmOperand::trans, GemmPart::full, false, ring({32, 32, 8, 8, 8, false}, 2)),
        spec(Precision::c, GemmOperand::no_trans, GemmOperand::conj_trans, GemmPart::upper, true, ring({32, 32, 8, 8, 8, false}, 3)),
        spec(Precision::d, GemmOperand::symmetric_lower, GemmOperand::no_trans, GemmPart::full, false, ring({16, 16, 8, 4, 4, false}, 3)),
        spec(Precision::c, GemmOperand::no_trans, GemmOperand::hermitian_upper, GemmPart::full, false, ring(odd, 3)),
        spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, ring({64, 64, 16, 2, 2, true}, 3)),
        spec(Precision::d, GemmOperand::trans, GemmOperand::trans, GemmPart::lower, false, ring(tc, 4)),
        spec(Precision::z, GemmOperand::conj_trans, GemmOperand::no_trans, GemmPart::upper, true, ring(tc, 3)),
        spec(Precision::s, GemmOperand::no_trans, GemmOperand::trans, GemmPart::full, false, ring({32, 32, 8, 1, 1, true}, 3)),
        [&] {  // the ring on the uniform-size path
            GemmSpec s = spec(Precision::s, GemmOperand::trans, GemmOperand::trans, GemmPart::full, false, ring(odd, 2));
            s.full_tiles = true;
            return s;
        }(),
        // one bin's kernel of the size-binned dispatch: only the listed problems, in the list's order
        listed(spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, ring({64, 64, 16, 2, 2, true}, 3))),
        listed(spec(Precision::s, GemmOperand::no_trans, GemmOperand::trans, GemmPart::full, false, ring(wide, 3))),
        listed(spec(Precision::z, GemmOperand::trans, GemmOperand::no_trans, GemmPart::lower, false, small)),
        // the region split of a bin: the whole tiles by one kernel, the ragged edges by another (ring and
        // registers, SIMT and DMMA, a triangle, transposed operands)
        interior(listed(spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, ring(odd, 3)))),
        edge(listed(spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false,
                         ring({8, 8, 8, 4, 4, false}, 3))), 16, 16),
        interior(spec(Precision::d, GemmOperand::trans, GemmOperand::no_trans, GemmPart::lower, false, ring({16, 16, 8, 2, 2, true}, 3))),
        edge(spec(Precision::z, GemmOperand::no_trans, GemmOperand::conj_trans, GemmPart::full, false, GemmConfig{8, 8, 8, 1, 1, true}), 16, 32),
        interior(listed(spec(Precision::s, GemmOperand::trans, GemmOperand::trans, GemmPart::upper, false, GemmConfig{16, 32, 8, 8, 8, false}))),
        edge(spec(Precision::c, GemmOperand::conj_trans, GemmOperand::no_trans, GemmPart::full, false, ring({8, 16, 8, 4, 4, false}, 2)), 16, 32),
        // 32-bit offsets from the slice corners (copy_offsets 1: registers and the rolled ring copy; 2: the
        // ring copy unrolled): SIMT and DMMA, every stored operand form, a symmetric operand (64-bit
        // addresses for it, 32-bit for the other), listed problems
        spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, offsets(small, 1)),
        spec(Precision::z, GemmOperand::conj_trans, GemmOperand::trans, GemmPart::lower, true, offsets(tc, 1)),
        spec(Precision::s, GemmOperand::trans, GemmOperand::no_trans, GemmPart::full, false, offsets(ring({64, 64, 8, 8, 8, false}, 4), 1)),
        listed(spec(Precision::s, GemmOperand::no_trans, GemmOperand::trans, GemmPart::upper, false, offsets(ring(wide, 3), 2))),
        spec(Precision::d, GemmOperand::trans, GemmOperand::no_trans, GemmPart::full, false, offsets(ring({64, 64, 16, 2, 2, true}, 3), 2)),
        listed(spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, offsets(ring(tc_big, 3), 1))),
        spec(Precision::c, GemmOperand::no_trans, GemmOperand::conj_trans, GemmPart::full, false, offsets(ring({32, 32, 8, 8, 8, false}, 2), 2)),
        spec(Precision::d, GemmOperand::symmetric_lower, GemmOperand::no_trans, GemmPart::full, false, offsets(ring({16, 16, 8, 4, 4, false}, 3), 2)),
        spec(Precision::z, GemmOperand::no_trans, GemmOperand::trans, GemmPart::full, false, offsets(odd, 1)),
        // element pointers advanced per slice (copy_offsets 3, the register path): SIMT and DMMA, every
        // stored operand form, a symmetric operand (its element function) beside one advanced, the
        // uniform-size path, listed problems, an interior kernel
        spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, offsets(tc, 3)),
        spec(Precision::z, GemmOperand::conj_trans, GemmOperand::trans, GemmPart::lower, true, offsets(small, 3)),
        spec(Precision::s, GemmOperand::trans, GemmOperand::no_trans, GemmPart::full, false, offsets(GemmConfig{64, 32, 8, 8, 8, false}, 3)),
        spec(Precision::d, GemmOperand::trans, GemmOperand::trans, GemmPart::upper, false, offsets(tc_big, 3)),
        spec(Precision::c, GemmOperand::no_trans, GemmOperand::conj_trans, GemmPart::full, false, offsets(odd, 3)),
        spec(Precision::d, GemmOperand::symmetric_upper, GemmOperand::no_trans, GemmPart::full, false, offsets(odd, 3)),
        [&] {
            GemmSpec s = spec(Precision::d, GemmOperand::no_trans, GemmOperand::trans, GemmPart::full, false, offsets(odd, 3));
            s.full_tiles = true;
            return s;
        }(),
        listed(spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, offsets(GemmConfig{64, 32, 8, 2, 2, true}, 3))),
        interior(listed(spec(Precision::s, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, offsets(wide, 3)))),
        // the 16x8x8 DMMA form asked for by the configuration (dmma16), with and without copy_offsets 3
        spec(Precision::d, GemmOperand::no_trans, GemmOperand::trans, GemmPart::full, false, GemmConfig{32, 32, 8, 2, 2, true, 0, 0, 3, 0, 1}),
        listed(spec(Precision::d, GemmOperand::trans, GemmOperand::no_trans, GemmPart::lower, false, GemmConfig{64, 32, 16, 2, 2, true, 0, 0, 0, 0, 1})),
        // the tile list (tile_list 1: a persistent grid over the scanned (problem, tile) pairs): listed and
        // whole-batch, ring and registers, SIMT and DMMA, a triangle, a region split's pair
        listed(spec(Precision::s, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, tiles(offsets(ring(odd, 3), 2)))),
        listed(spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, tiles(ring({16, 16, 8, 2, 2, true}, 3)))),
        spec(Precision::d, GemmOperand::trans, GemmOperand::no_trans, GemmPart::lower, false, tiles(small)),
        spec(Precision::z, GemmOperand::conj_trans, GemmOperand::no_trans, GemmPart::upper, true, tiles(tc)),
        interior(listed(spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, tiles(ring(odd, 3))))),
        edge(listed(spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false,
                         tiles(ring({8, 8, 8, 4, 4, false}, 3)))), 16, 16),
        // the ring's copies from pointers advanced per slice (copy_offsets 3 with stages >= 2): DMMA on both
        // fragment forms, SIMT with vector reads (s) and without (z), every stored operand form, a symmetric
        // operand (its address map) beside one advanced, the uniform-size path, listed problems, shares
        // with a tail and per-element pointers (c 48x16x8 over 24 threads: B 128 elements a slice, 6 a thread)
        listed(spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false,
                    GemmConfig{64, 64, 8, 2, 2, true, 4, 3, 3, 0, 1})),
        spec(Precision::d, GemmOperand::trans, GemmOperand::trans, GemmPart::lower, false, offsets(ring(tc, 4), 3)),
        spec(Precision::s, GemmOperand::trans, GemmOperand::no_trans, GemmPart::full, false, GemmConfig{64, 64, 16, 16, 8, false, 4, 3, 3}),
        spec(Precision::z, GemmOperand::conj_trans, GemmOperand::trans, GemmPart::upper, true, offsets(ring({32, 32, 8, 8, 8, false}, 2), 3)),
        spec(Precision::d, GemmOperand::symmetric_lower, GemmOperand::no_trans, GemmPart::full, false, offsets(ring({16, 16, 8, 4, 4, false}, 3), 3)),
        spec(Precision::c, GemmOperand::no_trans, GemmOperand::conj_trans, GemmPart::full, false, offsets(ring({48, 16, 8, 6, 4, false}, 3), 3)),
        [&] {
            GemmSpec s = spec(Precision::s, GemmOperand::no_trans, GemmOperand::trans, GemmPart::full, false, offsets(ring(odd, 2), 3));
            s.full_tiles = true;
            return s;
        }(),
        // d's slice rows 8 apart (tc_row 8, kernels _r8) on both DMMA forms, registers and the ring
        spec(Precision::d, GemmOperand::no_trans, GemmOperand::trans, GemmPart::full, false, GemmConfig{32, 32, 8, 2, 2, true, 6, 0, 3, 0, 1, 8}),
        listed(spec(Precision::d, GemmOperand::trans, GemmOperand::no_trans, GemmPart::full, false, GemmConfig{64, 32, 8, 2, 2, true, 6, 3, 3, 0, 0, 8})),
        // fused kernels (every size bin in one launch, bin_launch 2; GemmEmulation.FusedBins runs them, the
        // largest bin's path first): every precision; DMMA on both fragment forms beside SIMT over one block
        // size, the ring beside registers, advanced pointers, a triangle, transposed operands, tc_row 8
        fused(spec(Precision::d, GemmOperand::no_trans, GemmOperand::no_trans, GemmPart::full, false, small),
              {GemmConfig{64, 64, 8, 2, 2, true, 4, 0, 3, 0, 1}, GemmConfig{64, 32, 8, 2, 2, true, 6, 0, 3},
               GemmConfig{32, 32, 8, 16, 8, false, 6, 0, 0, 0, 0}}),
        fused(spec(Precision::s, GemmOperand::trans, GemmOperand::no_trans, GemmPart::full, false, small),
              {GemmConfig{64, 64, 16, 16, 8, false, 4, 0, 3}, GemmConfig{128, 32, 16, 16, 8, false, 4, 0, 3}}),
        fused(spec(Precision::z, GemmOperand::conj_trans, GemmOperand::trans, GemmPart::lower, false, small),
              {ring(GemmConfig{64, 32, 8, 2, 2, true, 4}, 3), GemmConfig{32, 32, 8, 2, 2, true}}),
        fused(spec(Precision::c, GemmOperand::no_trans, GemmOperand::conj_trans, GemmPart::upper, true, small),
              {ring(GemmConfig{32, 32, 8, 8, 8, false}, 3), GemmConfig{16, 16, 8, 8, 8, false}, GemmConfig{8, 8, 8, 8, 8, false}}),
        fused(spec(Precision::d, GemmOperand::trans, GemmOperand::trans, GemmPart::full, false, small),
              {GemmConfig{64, 32, 8, 2, 2, true, 6, 3, 3, 0, 0, 8}, GemmConfig{32, 32, 8, 2, 2, true, 6, 0, 3, 0, 1, 8}}),
    };
}

}  // namespace batchsolve::test::blas3
