// The samples of the interleaved kernels' search space that the tests generate: every routine,
// precision, uplo, looking order, unrolling mode and tile size class, on matrix orders chosen for
// their tile arithmetic (1, below/at/above a power of two, ragged last tiles). Shared by the NVRTC
// compile test and the emulator's source emitter, so both cover the same kinds of variants.
#pragma once

#include <algorithm>
#include <set>
#include <vector>

#include "codegen/cholesky/interleaved.hpp"

namespace batchsolve::jit_tests {

using codegen::cholesky::InterleavedKernelSpec;
using codegen::cholesky::Routine;

// Tile sizes worth testing for n: the paper's ladder n, ceil(n/2), ceil(n/3), ... down to 1, without
// the tiles the generator refuses (more registers than max_tile_registers) and those above max_nb,
// pruned to at most `keep` values spread over the ladder (always the two extremes).
inline std::vector<int> tile_sizes(int n, int keep, int max_nb) {
    std::set<int> ladder;
    for (int d = 1; d <= n; ++d) ladder.insert((n + d - 1) / d);
    std::vector<int> all;
    for (auto it = ladder.rbegin(); it != ladder.rend(); ++it) {  // descending: n, ceil(n/2), ..., 1
        CholeskyConfig c;
        c.nb = *it;
        if (*it <= max_nb && codegen::cholesky::estimated_tile_registers(Routine::potrf, Precision::d, n, c) <=
                                 codegen::cholesky::max_tile_registers)
            all.push_back(*it);
    }
    if (static_cast<int>(all.size()) <= keep) return all;
    std::vector<int> picked;
    for (int i = 0; i < keep; ++i) picked.push_back(all[(static_cast<long>(i) * (all.size() - 1)) / (keep - 1)]);
    picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
    return picked;
}

inline InterleavedKernelSpec make_spec(Routine r, Precision p, Uplo u, int n, int nb, Looking l, bool full, int nrb = 1) {
    InterleavedKernelSpec s;
    s.routine = r, s.precision = p, s.uplo = u, s.n = n;
    s.config.nb = nb, s.config.looking = l, s.config.full_unroll = full;
    s.config.threads_per_block = 128;
    s.config.nrhs_block = nrb;
    return s;
}

enum class Sample {
    nvrtc,      // the CI compile test: broad, bounded by NVRTC time (~3 minutes on 2 cores)
    emulator,   // the CI emulator test: small sources (host compile time), every structural case
    exhaustive  // development sweeps (hours of compile): every n 1..40 and more tile sizes
};

inline std::vector<InterleavedKernelSpec> sample_specs(Sample which) {
    std::vector<InterleavedKernelSpec> out;
    const Looking lookings[] = {Looking::left, Looking::right, Looking::top};
    const Precision complexes[] = {Precision::c, Precision::z};
    int k = 0;  // rotates the secondary choices (uplo, precision, unrolling) through the sample
    std::vector<int> ns;
    if (which == Sample::exhaustive) {
        for (int n = 1; n <= 40; ++n) ns.push_back(n);
        for (int n : {47, 48, 49, 63, 64, 65, 96, 100, 127, 128}) ns.push_back(n);
    } else if (which == Sample::nvrtc) {
        ns = {1, 2, 5, 8, 13, 16, 31, 32, 33, 64, 100, 128};
    } else {
        ns = {1, 2, 3, 5, 8, 13, 16, 17, 31, 32, 33, 64, 100, 128};
    }
    const int keep = which == Sample::exhaustive ? 8 : which == Sample::nvrtc ? 4 : 5;
    // Emulation compiles the text with the host compiler: keep tile code small there.
    const int max_nb = which == Sample::emulator ? 16 : 1000;
    const int max_full = which == Sample::emulator ? 17 : codegen::cholesky::max_full_unroll_n;
    for (int n : ns) {
        for (int nb : tile_sizes(n, keep, max_nb)) {
            for (Looking l : lookings) {
                ++k;
                const Uplo u = k % 2 ? Uplo::lower : Uplo::upper;
                // full unrolling of big tiles at n ~ 32 costs several seconds each: sample it
                const bool full_ok = n <= max_full && (n + nb - 1) / nb <= codegen::cholesky::max_full_unroll_tiles &&
                                     (n <= 16 || nb <= 8 || which == Sample::exhaustive);
                std::vector<bool> unrolls = {false};
                if (full_ok && (which == Sample::exhaustive || n <= 16 || k % 3 == 0)) unrolls.push_back(true);
                for (bool full : unrolls) {
                    const Precision real = (k + full) % 2 ? Precision::d : Precision::s;
                    out.push_back(make_spec(Routine::potrf, real, u, n, nb, l, full));
                    if (which == Sample::exhaustive) out.push_back(make_spec(Routine::potrf, real == Precision::d ? Precision::s : Precision::d, u == Uplo::lower ? Uplo::upper : Uplo::lower, n, nb, l, full));
                    // complex: a sample; fully unrolled only while small (n = 31 took a minute)
                    if (k % 7 == 0 && (!full || n <= 16))
                        out.push_back(make_spec(Routine::potrf, complexes[(k / 7) % 2], u, n, nb, l, full));
                }
            }
        }
    }
    // Solves: no looking order; nb, unrolling, nrhs_block and uplo matter.
    for (int n : ns) {
        for (int nb : tile_sizes(n, which == Sample::exhaustive ? 5 : 3, max_nb)) {
            ++k;
            const bool full = n <= max_full && k % 2 == 0 && (n <= 16 || nb <= 8) &&
                              (n + nb - 1) / nb <= codegen::cholesky::max_full_unroll_tiles;
            const Uplo u = k % 3 ? Uplo::lower : Uplo::upper;
            const int nrb = 1 + k % 3;
            const Precision p = k % 5 == 0 ? complexes[(k / 5) % 2] : (k % 2 ? Precision::d : Precision::s);
            out.push_back(make_spec(Routine::potrs, p, u, n, nb, Looking::top, full, nrb));
            const Looking l = lookings[k % 3];
            out.push_back(make_spec(Routine::posv, p == Precision::s ? Precision::d : p, u == Uplo::lower ? Uplo::upper : Uplo::lower,
                                    n, nb, l, full && n <= 16, nrb == 3 ? 1 : nrb + 1));
        }
    }
    // Options that change the text: fast math, a register cap, 64-bit offsets, other block sizes.
    {
        InterleavedKernelSpec s = make_spec(Routine::potrf, Precision::s, Uplo::lower, 20, 7, Looking::left, false);
        s.config.fast_math = true;
        out.push_back(s);
        s = make_spec(Routine::posv, Precision::d, Uplo::upper, 12, 12, Looking::top, true, 2);
        s.config.fast_math = true;
        out.push_back(s);
        s = make_spec(Routine::potrf, Precision::d, Uplo::lower, 40, 6, Looking::top, false);
        s.config.max_registers = 128;
        s.config.threads_per_block = 256;
        out.push_back(s);
        s = make_spec(Routine::potrf, Precision::z, Uplo::upper, 9, 4, Looking::right, false);
        s.wide_index = true;
        s.config.threads_per_block = 64;
        out.push_back(s);
        s = make_spec(Routine::potrs, Precision::s, Uplo::lower, 33, 8, Looking::top, false, 2);
        s.wide_index = true;
        out.push_back(s);
    }
    // Complex tiles need twice the registers of real ones: drop what the generator refuses.
    out.erase(std::remove_if(out.begin(), out.end(),
                             [](const InterleavedKernelSpec& s) {
                                 return !codegen::cholesky::interleaved_spec_problem(s).empty();
                             }),
              out.end());
    return out;
}

}  // namespace batchsolve::jit_tests
