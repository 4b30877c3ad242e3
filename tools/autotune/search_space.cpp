// The autotuner's candidate lists (search_space.hpp): which configurations each stage may time.
#include "search_space.hpp"

#include <functional>
#include <iterator>
#include <set>

namespace batchsolve::autotune {

bool coop_pruned(Routine r, int n, int warps, int nb) {
    for (const CoopPruned& p : kCoopPruned)
        if (p.routine == r && p.min_n <= n && n <= p.max_n && (p.warps == kAnyCoop || p.warps == warps) &&
            (p.nb == kAnyCoop || p.nb == nb))
            return true;
    return false;
}

std::vector<int> tile_sizes(int n) {
    std::set<int, std::greater<int>> s;
    for (int k = 1; k <= n; ++k) s.insert(ceil_div(n, k));
    return {s.begin(), s.end()};
}

// As the library estimates them (interleaved_codegen.hpp, estimated_tile_registers; TODO in
// search_space.hpp): potrf nb < n: nb(nb+1)/2 + nb + nb^2 + 2 nb elements, nb = n: n(n+1)/2 + n;
// potrs nb * nrhs_block + nb + nrhs_block; posv the larger.
int estimated_registers(Routine r, Precision p, int n, int nb, int nrhs_block) {
    int factor = nb * (nb + 1) / 2 + nb;
    if (nb < n) factor += nb * nb + 2 * nb;
    const int solve = nb * nrhs_block + nb + nrhs_block;
    const int live = r == Routine::potrf ? factor : r == Routine::potrs ? solve : std::max(factor, solve);
    return live * words_per_element(p);
}

std::vector<CholeskyConfig> interleaved_shapes(Routine r, Precision p, int n, bool exhaustive) {
    std::vector<int> tiles;  // largest first
    for (int nb : tile_sizes(n)) {
        if (r == Routine::potrs && nb > kMaxSolveTile) continue;
        if (estimated_registers(r, p, n, nb, 1) > kMaxRegistersPerThread) continue;
        if (!exhaustive && r == Routine::potrs && n > kSolvePrunedAboveN && nb < kSolvePrunedMinTile) continue;
        if (!exhaustive && r != Routine::potrs && n > kInterleavedPrunedAboveN &&
            int(tiles.size()) == kInterleavedLargestTiles)
            continue;
        tiles.push_back(nb);
    }
    std::vector<CholeskyConfig> out;
    for (int nb : tiles) {
        // One tile (nb = n) has no tile loops: every looking order and unrolling give the same code.
        std::vector<Looking> lookings = {Looking::top};
        if (r != Routine::potrs && nb < n) lookings = {Looking::top, Looking::left, Looking::right};
        if (!exhaustive && r != Routine::potrs && n > kInterleavedPrunedAboveN && nb != tiles.front())
            lookings.pop_back();  // right-looking
        std::vector<bool> unrolls = {false};
        if (nb < n && n <= kInterleavedMaxFullUnrollN && ceil_div(n, nb) <= kInterleavedMaxFullUnrollTiles)
            unrolls.push_back(true);
        for (Looking l : lookings)
            for (bool u : unrolls) {
                CholeskyConfig c;
                c.nb = nb, c.looking = l, c.full_unroll = u;
                c.threads_per_block = kStage1ThreadsPerBlock;
                c.nrhs_block = 1;
                out.push_back(c);
            }
    }
    return out;
}

int column_major_default_chunk(Precision p) { return p == Precision::s ? kColumnMajorChunkSingle : kColumnMajorChunkWide; }

std::vector<CholeskyConfig> column_major_shapes(Precision p, int n, bool exhaustive) {
    std::vector<CholeskyConfig> out;
    const int words = words_per_element(p);
    for (int tc : kColumnMajorThreadsPerRow) {
        if (tc > 1 && tc > n) continue;
        if (!exhaustive && tc > kColumnMajorPrunedMaxThreadsPerRow) continue;
        for (int ra : kColumnMajorRowsPerThread) {
            if (ra > 1 && ra > n) continue;
            if (!exhaustive && ra > kColumnMajorPrunedMaxRowsPerThread) continue;
            if (ceil_div(n, ra) * tc > kColumnMajorMaxThreadsPerMatrix) continue;
            if (ra * ceil_div(n, tc) * words > kColumnMajorMaxTileWords) continue;
            CholeskyConfig c;
            c.nb = column_major_default_chunk(p);
            c.looking = Looking::right;  // the only order these kernels have
            c.full_unroll = false;
            c.threads_per_block = kColumnMajorStage1ThreadsPerBlock;
            c.rows_per_thread = ra, c.threads_per_row = tc;
            c.nrhs_block = 1;
            out.push_back(c);
        }
    }
    return out;
}

std::vector<CholeskyConfig> column_major_solve_shapes() {
    std::vector<CholeskyConfig> out;
    for (int t : kColumnMajorSolveThreadsPerBlock) {
        CholeskyConfig c;
        c.looking = Looking::right;
        c.threads_per_block = t;
        c.nrhs_block = 1;
        out.push_back(c);
    }
    return out;
}

std::vector<CholeskyConfig> coop_candidates(Routine routine, int n, const CholeskyConfig& best, bool exhaustive) {
    std::vector<CholeskyConfig> out;
    for (int cap : kCoopPosvRegisterCaps) {
        if (cap != 0 && routine != Routine::posv) continue;
        if (cap == 0 && routine == Routine::posv && !exhaustive && n > kCoopPosvUncappedMaxN) continue;
        for (int w : kCoopWarps)
            for (int nb : kCoopTileSizes) {
                if (!exhaustive && coop_pruned(routine, n, w, nb)) continue;
                CholeskyConfig c;
                c.warps_per_matrix = w, c.nb = nb;
                c.threads_per_block = 32 * w;
                c.chunk_size = best.chunk_size;
                c.nrhs_block = 1;
                c.max_registers = cap;
                out.push_back(c);
            }
    }
    return out;
}

std::vector<CholeskyConfig> grid_candidates(const CholeskyConfig& best, int batch, int sm_count) {
    std::vector<CholeskyConfig> out;
    if (best.warps_per_matrix == 0) return out;  // one thread per system: one block per 32 systems
    const long long groups = ceil_div(batch, 32);
    for (int g : kGridBlocksPerSm) {
        if (static_cast<long long>(g) * sm_count >= groups) continue;
        CholeskyConfig c = best;
        c.grid_blocks_per_sm = g;
        out.push_back(c);
    }
    return out;
}

std::vector<CholeskyConfig> staged_candidates(const CaseKey& k, bool exhaustive) {
    std::vector<CholeskyConfig> out;
    if (k.family != Family::column_major) return out;
    const double element = double(element_bytes(k.precision));
    // potrs has no panels (nb is not read): one pass with nb = 0
    const std::vector<int> panels = k.routine == Routine::potrs
                                        ? std::vector<int>{0}
                                        : std::vector<int>(std::begin(kStagedPanels), std::end(kStagedPanels));
    for (int nb : panels) {
        if (nb > 16 && k.n > (exhaustive ? kStagedWideMaxN : kStagedWidePrunedMaxN)) continue;
        if (nb > k.n && nb != kStagedPanels[0]) continue;  // a panel wider than n: the same kernel as nb = n
        for (int w : kStagedWarps) {
            if (w > 1 && 32 * (w - 1) >= k.n) continue;  // warps with no row of the panel to solve
            for (int m : kStagedMatrices) {
                if (w * m > (exhaustive ? kStagedMaxWarps : kStagedPrunedMaxWarps)) continue;
                if (m * (k.n * (k.n + 1) / 2.0 + 1) * element > kStagedMaxSharedBytes) continue;
                CholeskyConfig c;
                c.staged = true, c.nb = nb, c.warps_per_matrix = w, c.matrices_per_block = m;
                out.push_back(c);
            }
        }
    }
    return out;
}

std::vector<CholeskyConfig> tensor_core_candidates(const CaseKey& k, bool exhaustive) {
    std::vector<CholeskyConfig> out;
    if (k.routine == Routine::potrs || k.precision != Precision::d) return out;
    for (CholeskyConfig c : staged_candidates(k, exhaustive)) {
        c.tensor_cores = true;
        out.push_back(c);
    }
    return out;
}

std::vector<CholeskyConfig> shared_memory_candidates(const CaseKey& k, bool exhaustive) {
    std::vector<CholeskyConfig> out;
    if (k.family != Family::column_major || k.n > limits::shared_memory_largest_n(k.precision)) return out;
    const bool factors = k.routine != Routine::potrs;
    const bool single = k.precision == Precision::s || k.precision == Precision::c;
    std::vector<int> panels{0}, tiles{0};
    if (factors && exhaustive) {
        panels.assign(std::begin(kSharedMemoryPanelsExhaustive), std::end(kSharedMemoryPanelsExhaustive));
        tiles.assign(std::begin(kSharedMemoryTilesExhaustive), std::end(kSharedMemoryTilesExhaustive));
    } else if (factors) {
        if (single) panels.assign(std::begin(kSharedMemoryPanelsSingle), std::end(kSharedMemoryPanelsSingle));
        else panels.assign(std::begin(kSharedMemoryPanelsWide), std::end(kSharedMemoryPanelsWide));
        tiles = {k.n <= 16 ? 2 : kSharedMemoryDefaultTile};
    }
    std::vector<int> seen_panels;
    for (int nb : panels) {
        const int panel = std::min(nb, k.n);  // a panel wider than n: the same kernel as nb = n
        if (std::find(seen_panels.begin(), seen_panels.end(), panel) != seen_panels.end()) continue;
        seen_panels.push_back(panel);
        for (int w : kSharedMemoryWarps) {
            if (w > 1 && kSharedMemoryRowsPerWarp * (w - 1) >= k.n) continue;  // warps with too few rows
            for (int m : kSharedMemoryMatrices) {
                if (w * m > kSharedMemoryMaxWarps) continue;
                if (limits::shared_memory_bytes(k.precision, k.n, m) > limits::max_shared_bytes_per_block)
                    continue;
                for (int tile : tiles) {
                    CholeskyConfig c;
                    c.staged = true, c.looking = Looking::left, c.threads_per_block = 0;
                    c.nb = panel, c.warps_per_matrix = w, c.matrices_per_block = m, c.rows_per_thread = tile;
                    out.push_back(c);
                }
            }
        }
    }
    return out;
}

std::vector<CholeskyConfig> fused_candidates(const CaseKey& k, bool exhaustive) {
    std::vector<CholeskyConfig> out;
    if (k.family != Family::column_major || k.routine == Routine::potrs || k.n > kFusedMaxN) return out;
    std::vector<CholeskyConfig> tiles;
    CholeskyConfig library_default;  // nb = 0: the interleaved kernel's default tile, order and unrolling
    tiles.push_back(library_default);
    for (const CholeskyConfig& c : interleaved_shapes(k.routine, k.precision, k.n, exhaustive)) {
        if (!exhaustive && int(tiles.size()) > kFusedTiles) break;
        tiles.push_back(c);
    }
    const double element = double(element_bytes(k.precision));
    for (const CholeskyConfig& t : tiles)
        for (int m : kFusedMatrices) {
            const double pitch = double(m | 1);  // fused_pitch
            const double bytes = pitch * k.n * k.n * element + (k.routine == Routine::posv ? pitch * k.n * element : 0) + 4.0 * m + 48;
            if (bytes > double(limits::max_shared_bytes_per_block)) continue;
            CholeskyConfig c;
            c.staged = true, c.warps_per_matrix = 0;
            c.nb = t.nb, c.looking = t.looking, c.full_unroll = t.full_unroll;
            c.threads_per_block = m;
            c.nrhs_block = 1;
            out.push_back(c);
        }
    return out;
}

std::vector<CholeskyConfig> warp_step_candidates(const CaseKey& k, const std::vector<CholeskyConfig>& ranked) {
    std::vector<CholeskyConfig> out;
    if (k.family != Family::column_major || k.routine == Routine::potrs || k.n > kFusedMaxN) return out;
    for (const CholeskyConfig& r : ranked) {
        if (int(out.size()) == kTopForNextStage) break;
        if (r.staged || r.through_interleaved || r.looking == Looking::left) continue;
        const int ra = std::max(r.rows_per_thread, 1), tc = std::max(r.threads_per_row, 1);
        if (32 % (ceil_div(k.n, ra) * tc) != 0) continue;  // a matrix's threads must divide a warp
        CholeskyConfig c = r;
        c.looking = Looking::left;
        out.push_back(c);
    }
    return out;
}

std::vector<int> fill_anchors(int n, bool exhaustive) {
    if (exhaustive || n <= kFillAboveN || n % kFillStep == 0) return {};
    const int below = n - n % kFillStep;
    return {below, below + kFillStep};
}

}  // namespace batchsolve::autotune
