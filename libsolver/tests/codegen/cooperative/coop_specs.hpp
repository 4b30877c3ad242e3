// The cooperative potrs, potrf and posv variants the tests exercise: a sample over n, warps per block, tile
// size, precision, triangle and (potrs) right-hand sides per pass, for the NVRTC compile test and the
// host emulation test (whose kernels coop_emit writes at build time from emulation_specs()).
#pragma once

#include <algorithm>
#include <vector>

#include "codegen/cholesky/interleaved.hpp"
#include "codegen/cholesky/cooperative.hpp"

namespace batchsolve::test::coop {

using codegen::cholesky::InterleavedKernelSpec;
using codegen::cholesky::Routine;

// The sizes the issue names.
inline std::vector<int> sampled_sizes() { return {1, 5, 17, 32, 33, 64, 100, 128}; }

// A cooperative spec of `routine`, resolved as the library resolves it (nb 0: the cooperative default
// for n and W; potrf and posv: potrf's, posv uses it for both phases; potrf ignores nrhs_block).
inline InterleavedKernelSpec make_coop_spec(Routine routine, Precision p, Uplo uplo, int n, int nb, int warps,
                                            int nrhs_block, bool wide_index, bool fast_math) {
    CholeskyConfig c;
    c.warps_per_matrix = warps;
    c.nb = nb;
    c.nrhs_block = nrhs_block;
    c.fast_math = fast_math;
    InterleavedKernelSpec s;
    s.routine = routine;
    s.precision = p;
    s.uplo = uplo;
    s.n = n;
    s.config = codegen::cholesky::resolve_interleaved_config(routine, p, n, c);
    s.wide_index = wide_index;
    return s;
}

inline InterleavedKernelSpec make_spec(Precision p, Uplo uplo, int n, int nb, int warps, int nrhs_block,
                                       bool wide_index = false) {
    return make_coop_spec(Routine::potrs, p, uplo, n, nb, warps, nrhs_block, wide_index, false);
}

inline InterleavedKernelSpec make_potrf_spec(Precision p, Uplo uplo, int n, int nb, int warps, bool wide_index = false,
                                             bool fast_math = false) {
    return make_coop_spec(Routine::potrf, p, uplo, n, nb, warps, 1, wide_index, fast_math);
}

inline InterleavedKernelSpec make_posv_spec(Precision p, Uplo uplo, int n, int nb, int warps, int nrhs_block,
                                            bool wide_index = false, bool fast_math = false) {
    return make_coop_spec(Routine::posv, p, uplo, n, nb, warps, nrhs_block, wide_index, fast_math);
}

inline bool usable(const InterleavedKernelSpec& s) { return codegen::cholesky::interleaved_spec_problem(s).empty(); }

// Every sampled n in s and d, both triangles, W = 2, 4, 8 in turn, the default nb and a small or odd
// one (n % nb != 0 where n allows), nrhs_block 1 and 2 or 3; complex c and z on a smaller sample.
// Tile sizes stay at 8 or below for n = 128 (nb = 16 compiles 4-9 s, see the report) so that the
// NVRTC test keeps to about a minute on 2 cores.
inline std::vector<InterleavedKernelSpec> sample_specs() {
    std::vector<InterleavedKernelSpec> out;
    auto add = [&](const InterleavedKernelSpec& s) {
        if (usable(s)) out.push_back(s);
    };
    const int warps[] = {2, 4, 8};
    int turn = 0;
    for (int n : sampled_sizes()) {
        const int w1 = warps[turn % 3], w2 = warps[(turn + 1) % 3], w3 = warps[(turn + 2) % 3];
        ++turn;
        const int odd_nb = n >= 5 ? std::min(n - 1, n >= 64 ? 6 : 3) : n;  // leaves a narrower last tile
        add(make_spec(Precision::d, Uplo::lower, n, 0, w1, 1));
        add(make_spec(Precision::s, Uplo::upper, n, odd_nb, w2, 2));
        add(make_spec(Precision::d, Uplo::upper, n, odd_nb, w3, 3));
        add(make_spec(Precision::s, Uplo::lower, n, 0, w3, 1));
    }
    for (int n : {5, 17, 33, 100}) {
        add(make_spec(Precision::c, Uplo::lower, n, 0, 4, 1));
        add(make_spec(Precision::z, Uplo::upper, n, n >= 5 ? 3 : 1, 2, 2));
        add(make_spec(Precision::c, Uplo::upper, n, 4 < n ? 4 : n, 8, 2));
        add(make_spec(Precision::z, Uplo::lower, n, 0, 8, 1));
    }
    // 64-bit element offsets (the text differs in idx_t and BS_OPAQUE's constraint)
    add(make_spec(Precision::d, Uplo::lower, 33, 4, 4, 2, true));
    add(make_spec(Precision::z, Uplo::upper, 17, 5, 2, 1, true));

    // potrf: every sampled n in d (default nb) and s (a tile that leaves a narrower last one), both
    // triangles, W = 2, 4, 8 in turn; c and z on a smaller sample; 64-bit offsets; fast math. Each
    // compiles in 0.1-0.8 s (sm_90), so the sample adds about 5 s on 2 cores.
    turn = 0;
    for (int n : sampled_sizes()) {
        const int w1 = warps[turn % 3], w2 = warps[(turn + 1) % 3];
        ++turn;
        const int odd_nb = n >= 5 ? std::min(n - 1, n >= 64 ? 6 : 4) : n;
        add(make_potrf_spec(Precision::d, turn % 2 ? Uplo::lower : Uplo::upper, n, 0, w1));
        add(make_potrf_spec(Precision::s, turn % 2 ? Uplo::upper : Uplo::lower, n, odd_nb, w2));
    }
    add(make_potrf_spec(Precision::c, Uplo::lower, 17, 0, 4));
    add(make_potrf_spec(Precision::z, Uplo::upper, 33, 3, 2));
    add(make_potrf_spec(Precision::c, Uplo::upper, 64, 4, 8));
    add(make_potrf_spec(Precision::z, Uplo::lower, 100, 0, 4));
    add(make_potrf_spec(Precision::d, Uplo::lower, 33, 4, 4, true));
    add(make_potrf_spec(Precision::s, Uplo::upper, 48, 0, 4, false, true));

    // posv (factor, barrier, solve): every sampled n in d (default nb, one right-hand side per pass)
    // and s (a tile that leaves a narrower last one, 2 per pass), both triangles, W = 2, 4, 8 in turn;
    // c and z on a smaller sample; 64-bit offsets; fast math.
    turn = 0;
    for (int n : sampled_sizes()) {
        const int w1 = warps[(turn + 2) % 3], w2 = warps[turn % 3];
        ++turn;
        const int odd_nb = n >= 5 ? std::min(n - 1, n >= 64 ? 6 : 4) : n;
        add(make_posv_spec(Precision::d, turn % 2 ? Uplo::upper : Uplo::lower, n, 0, w1, 1));
        add(make_posv_spec(Precision::s, turn % 2 ? Uplo::lower : Uplo::upper, n, odd_nb, w2, 2));
    }
    add(make_posv_spec(Precision::c, Uplo::upper, 17, 0, 4, 1));
    add(make_posv_spec(Precision::z, Uplo::lower, 33, 3, 2, 2));
    add(make_posv_spec(Precision::c, Uplo::lower, 64, 4, 8, 3));
    add(make_posv_spec(Precision::z, Uplo::upper, 100, 0, 4, 1));
    add(make_posv_spec(Precision::d, Uplo::upper, 33, 4, 4, 2, true));
    add(make_posv_spec(Precision::s, Uplo::lower, 48, 0, 8, 1, false, true));
    return out;
}

// The host emulation test runs the whole compile sample.
inline std::vector<InterleavedKernelSpec> emulation_specs() { return sample_specs(); }

}  // namespace batchsolve::test::coop
