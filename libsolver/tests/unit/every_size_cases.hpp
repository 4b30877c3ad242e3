// The cases of the typed suites' EverySizeEveryLayout tests (potrf, potrs, posv).
//
// On the CPU backend: every size of size_spread() x every A layout x every B layout it may take x
// both triangles x every nrhs, as listed. On CUDA the cases of a size need a generated kernel per
// layout kind, triangle and nrhs (NVRTC, 0.04-35 s each for sm_90; the full product is 700-2,200
// kernels per routine over the four precisions, more than a GPU call holds), so the CUDA instances
// run a sample drawn with the test's seed:
//   * every size in each of the two kernel families (column-major: packed, padded and pointer-array
//     A; interleaved: interleaved and chunked with C = 32 and 7), and
//   * every (A layout, B layout, triangle, nrhs) combination of each family at least once,
// combinations and sizes paired at random (a seeded shuffle of each list, the shorter one cycled).
// What the sample leaves out is the same kernels at the other (layout, triangle, nrhs) of a size: the
// generated kernels' arithmetic at every n is checked on the CPU by the emulation suites
// (tests/codegen, CI), and each kernel family's launch at the boundary sizes by tests/gpu.
// The sample is printed ("[ sample   ] ..." with the seed); BATCHSOLVE_TEST_SEED replays it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "test_support.hpp"

namespace batchsolve::test {

struct EverySizeCase {
    int n = 0;
    LayoutSpec a_layout, b_layout;  // b_layout: unused by potrf
    Uplo uplo = Uplo::lower;
    int nrhs = 0;
};

// `nrhs_list` {0} for potrf (no B: b_layout is a_layout). Ordered by n (the tests build the
// matrices of one n once).
inline std::vector<EverySizeCase> every_size_cases(Backend backend, const std::vector<int>& nrhs_list, bool with_rhs,
                                                   std::uint64_t seed) {
    // the (A, B, uplo, nrhs) combinations of each family
    std::vector<EverySizeCase> families[2];
    for (const LayoutSpec& a : all_layouts()) {
        const std::vector<LayoutSpec> bs = with_rhs ? rhs_layouts_for(a) : std::vector<LayoutSpec>{a};
        for (const LayoutSpec& b : bs)
            for (Uplo uplo : {Uplo::lower, Uplo::upper})
                for (int nrhs : nrhs_list) families[a.column_major_family() ? 0 : 1].push_back({0, a, b, uplo, nrhs});
    }
    const std::vector<int> sizes = size_spread();
    std::vector<EverySizeCase> out;
    if (backend != Backend::cuda) {
        for (int n : sizes)
            for (const auto& family : families)
                for (EverySizeCase c : family) {
                    c.n = n;
                    out.push_back(c);
                }
    } else {
        std::mt19937_64 rng(seed);
        for (auto& family : families) {
            std::vector<int> shuffled = sizes;
            std::shuffle(shuffled.begin(), shuffled.end(), rng);
            std::shuffle(family.begin(), family.end(), rng);
            const std::size_t cases = std::max(shuffled.size(), family.size());
            for (std::size_t i = 0; i < cases; ++i) {
                EverySizeCase c = family[i % family.size()];
                c.n = shuffled[i % shuffled.size()];
                out.push_back(c);
            }
        }
        std::stable_sort(out.begin(), out.end(), [](const EverySizeCase& x, const EverySizeCase& y) { return x.n < y.n; });
        std::size_t full = 0;
        for (const auto& family : families) full += family.size() * sizes.size();
        std::printf("[ sample   ] %zu of the %zu (size, A layout, B layout, triangle, nrhs) cases on CUDA, seed %llu "
                    "(BATCHSOLVE_TEST_SEED=%llu replays them)\n",
                    out.size(), full, static_cast<unsigned long long>(seed),
                    static_cast<unsigned long long>(base_seed()));
        std::fflush(stdout);
    }
    return out;
}

// The kernels of `cases` (the tuning table's, as the plain calls run them) compiled ahead on several
// threads; nothing on the CPU backend. A chunked layout runs one kernel whatever its chunk, and a
// strided one whatever its ld and stride: one job per kernel, not two compiling it at once.
template <class T>
void compile_cases_ahead(Backend backend, const std::string& routine, const std::vector<EverySizeCase>& cases) {
    if (backend != Backend::cuda) return;
    std::set<std::tuple<int, int, int, int>> seen;  // n, uplo, nrhs, layout kind
    std::vector<CompileJob> jobs;
    for (const EverySizeCase& c : cases) {
        if (!seen.insert({c.n, int(c.uplo), c.nrhs, int(c.a_layout.kind)}).second) continue;
        jobs.push_back(kernel_of<T>(routine, c.uplo, c.a_layout, c.n, batch_count_for(c.n), c.nrhs));
    }
    compile_ahead(jobs);  // a kernel that fails here fails the test's own call too
}

}  // namespace batchsolve::test
