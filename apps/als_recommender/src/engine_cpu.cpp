// The CPU engine: each system built by one OpenMP thread (BLAS ssyrk on the gathered rows), then the
// slice solved by the reference backend's posv_batched (LAPACK per matrix under OpenMP).
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "batchsolve/batchsolve.hpp"
#include "engine.hpp"

namespace als {

SystemLayout parse_layout(const std::string& text) {
    if (text == "column_major") return SystemLayout::column_major;
    if (text == "interleaved") return SystemLayout::interleaved;
    if (text == "chunked") return SystemLayout::chunked;
    throw Error("--layout must be column_major, interleaved or chunked (got '" + text + "')");
}
const char* to_string(SystemLayout l) {
    return l == SystemLayout::column_major ? "column_major" : l == SystemLayout::interleaved ? "interleaved" : "chunked";
}

BuildKernel parse_build_kernel(const std::string& text) {
    if (text == "fp32") return BuildKernel::fp32;
    if (text == "tf32x3") return BuildKernel::tf32x3;
    if (text == "tf32") return BuildKernel::tf32;
    if (text == "tf32x3-blocked") return BuildKernel::tf32x3_blocked;
    throw Error("--build-kernel must be fp32, tf32x3, tf32 or tf32x3-blocked (got '" + text + "')");
}
const char* to_string(BuildKernel b) {
    switch (b) {
        case BuildKernel::fp32: return "fp32";
        case BuildKernel::tf32: return "tf32";
        case BuildKernel::tf32x3_blocked: return "tf32x3-blocked";
        default: return "tf32x3";
    }
}

SolveKernel parse_solve_kernel(const std::string& text) {
    if (text == "posv") return SolveKernel::posv;
    if (text == "vbatched") return SolveKernel::vbatched;
    if (text == "fused") return SolveKernel::fused;
    if (text == "fused-blocked") return SolveKernel::fused_blocked;
    if (text == "two-level") return SolveKernel::two_level;
    if (text == "tiled") return SolveKernel::tiled;
    if (text == "tiled-prefetch") return SolveKernel::tiled_prefetch;
    if (text == "auto") return SolveKernel::automatic;
    throw Error("--solve-kernel must be auto, posv, vbatched, fused, fused-blocked, two-level, tiled or tiled-prefetch (got '" + text + "')");
}
SolveKernel resolve_solve_kernel(SolveKernel kernel, int width, SystemLayout layout) {
    if (kernel != SolveKernel::automatic) return kernel;
    if (layout != SystemLayout::column_major) return SolveKernel::posv;
    for (int w : kTiledWidths)
        if (w == width) return SolveKernel::tiled;
    return SolveKernel::posv;
}
const char* to_string(SolveKernel s) {
    switch (s) {
        case SolveKernel::vbatched: return "vbatched";
        case SolveKernel::fused: return "fused";
        case SolveKernel::fused_blocked: return "fused-blocked";
        case SolveKernel::two_level: return "two-level";
        case SolveKernel::tiled: return "tiled";
        case SolveKernel::tiled_prefetch: return "tiled-prefetch";
        case SolveKernel::automatic: return "auto";
        default: return "posv";
    }
}

GramKernel parse_gram_kernel(const std::string& text) {
    if (text == "syrk") return GramKernel::syrk;
    if (text == "split") return GramKernel::split;
    throw Error("--gram-kernel must be syrk or split (got '" + text + "')");
}
const char* to_string(GramKernel g) { return g == GramKernel::split ? "split" : "syrk"; }

Solver parse_solver(const std::string& text) {
    if (text == "exact") return Solver::exact;
    if (text == "cg") return Solver::cg;
    throw Error("--solver must be exact or cg (got '" + text + "')");
}
const char* to_string(Solver s) { return s == Solver::exact ? "exact" : "cg"; }

namespace {

// Rows with at least this many entries accumulate their systems with one BLAS ssyrk call; shorter
// rows by a plain loop (measured on Last.fm, k = 64: most rows hold a handful of entries).
constexpr std::int64_t kSyrkMinEntries = 32;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One row's conjugate-gradient state (per OpenMP thread, reused across rows).
struct CgRow {
    std::vector<float> d;              // the row's n gathered d_j, row-major n x s
    std::vector<float> weight, target;  // w_j and the right-hand side's weight of each
    std::vector<float> x, r, p, ap;
};

// result = ridge v + G v + sum_j w_j (d_j . v) d_j (G: full s x s column-major, or nullptr). The
// reductions are SIMD (OpenMP simd: reassociated sums, rounding-level differences from a serial sum).
// Inlined into each of cg_row's clones, so that its loops are compiled for the clone's instruction set.
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline void cg_apply(const CgRow& row, const float* gram, int s, std::int64_t n, float ridge, const float* v, float* result) {
#pragma omp simd
    for (int i = 0; i < s; ++i) result[i] = ridge * v[i];
    if (gram)
        for (int j = 0; j < s; ++j) {
            const float* column = gram + std::size_t(j) * std::size_t(s);
            const float vj = v[j];
#pragma omp simd
            for (int i = 0; i < s; ++i) result[i] += column[i] * vj;
        }
    for (std::int64_t e = 0; e < n; ++e) {
        const float* d = row.d.data() + std::size_t(e) * std::size_t(s);
        float dv = 0.f;
#pragma omp simd reduction(+ : dv)
        for (int i = 0; i < s; ++i) dv += d[i] * v[i];
        const float scaled = row.weight[std::size_t(e)] * dv;
#pragma omp simd
        for (int i = 0; i < s; ++i) result[i] += scaled * d[i];
    }
}

#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline float cg_dot(const float* u, const float* v, int s) {
    float sum = 0.f;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < s; ++i) sum += u[i] * v[i];
    return sum;
}

// `steps` CG steps on the row's system from `factors` (its current solution, overwritten); 1 when the
// system is not positive definite along the first direction (the row set to 0), else 0. Compiled for
// AVX-512 and AVX2 beside the baseline, picked at load time (the build targets baseline x86-64).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static int cg_row(CgRow& row, const float* gram, int s, std::int64_t n, float ridge, int steps, float* factors) {
    const std::size_t width = static_cast<std::size_t>(s);
    row.x.assign(factors, factors + s), row.r.assign(width, 0.f), row.p.resize(width), row.ap.resize(width);
    float *x = row.x.data(), *r = row.r.data(), *p = row.p.data(), *ap = row.ap.data();
    cg_apply(row, gram, s, n, ridge, x, ap);
    for (std::int64_t e = 0; e < n; ++e) {
        const float* d = row.d.data() + std::size_t(e) * width;
        const float c = row.target[std::size_t(e)];
#pragma omp simd
        for (int i = 0; i < s; ++i) r[i] += c * d[i];
    }
    for (int i = 0; i < s; ++i) r[i] -= ap[i], p[i] = r[i];
    float rs = cg_dot(r, r, s);
    int failed = 0;
    for (int step = 0; step < steps && rs > 0; ++step) {
        cg_apply(row, gram, s, n, ridge, p, ap);
        const float curvature = cg_dot(p, ap, s);
        if (!(curvature > 0) || !std::isfinite(curvature)) {
            if (step == 0) std::fill(x, x + s, 0.f), failed = 1;
            break;
        }
        const float step_length = rs / curvature;
        for (int i = 0; i < s; ++i) x[i] += step_length * p[i], r[i] -= step_length * ap[i];
        const float next = cg_dot(r, r, s);
        for (int i = 0; i < s; ++i) p[i] = r[i] + (next / rs) * p[i];
        rs = next;
    }
    std::copy(x, x + s, factors);
    return failed;
}

class CpuEngine final : public Engine {
public:
    CpuEngine(const Csr& by_user, const Csr& by_item, const EngineSettings& s, const Partition* partition)
        : by_user_(by_user), by_item_(by_item), s_(s), ctx_(batchsolve::Backend::cpu) {
        if (partition) {
            partition_ = *partition;
        } else {  // alone: one partition that owns every row
            partition_.users = {{0, by_user.rows}};
            partition_.items = {{0, by_item.rows}};
        }
    }

    void set_factors(const std::vector<float>& users, const std::vector<float>& items) override {
        users_ = users, items_ = items;
    }
    void get_factors(std::vector<float>& users, std::vector<float>& items) override { users = users_, items = items_; }
    HalfTiming solve_users() override { return solve_side(by_user_, items_, users_, partition_.users, partition_.items); }
    HalfTiming solve_items() override { return solve_side(by_item_, users_, items_, partition_.items, partition_.users); }
    std::string device() const override { return "CPU (" + std::to_string(omp_get_max_threads()) + " threads)"; }

private:
    // Solves this partition's rows of `rows` against `other` (every row of the other side) into `out`;
    // `own` and `other_own` are every partition's ranges of the two sides.
    HalfTiming solve_side(const Csr& rows, const std::vector<float>& other, std::vector<float>& out,
                          const std::vector<RowRange>& own, const std::vector<RowRange>& other_own) {
        const int s = s_.width;
        const std::int64_t ss = std::int64_t(s) * s;
        const RowRange mine = own[std::size_t(partition_.index)], other_mine = other_own[std::size_t(partition_.index)];
        HalfTiming t;
        // Gram matrix of the other side (implicit only), lower triangle, one BLAS call over this
        // partition's rows of it, then summed over the partitions.
        std::vector<float> gram(static_cast<std::size_t>(ss), 0.f);
        auto t0 = Clock::now();
        if (s_.implicit && other_mine.count > 0)
            cblas_ssyrk(CblasColMajor, CblasLower, CblasNoTrans, s, int(other_mine.count), 1.f,
                        other.data() + other_mine.first * s, s, 0.f, gram.data(), s);
        t.build_s += seconds_since(t0);
        if (s_.implicit && partition_.exchange) {
            t0 = Clock::now();
            partition_.exchange->allreduce_sum(gram.data(), gram.size(), nullptr);
            t.exchange_s += seconds_since(t0);
        }
        if (s_.solver == Solver::cg) {
            t0 = Clock::now();
            t.failed += conjugate_gradient(rows, other, gram, mine, out);
            t.solve_s += seconds_since(t0);
        }
        const std::int64_t per_slice =
            s_.solver == Solver::cg ? 0 : s_.slice_bytes == 0 ? std::max<std::int64_t>(mine.count, 1)
                                : std::max<std::int64_t>(1, std::int64_t(s_.slice_bytes / (ss * sizeof(float))));
        std::vector<float> a, b;
        std::vector<int> info;
        const std::int64_t end = s_.solver == Solver::cg ? mine.first : mine.first + mine.count;
        for (std::int64_t first = mine.first; first < end; first += per_slice) {
            const std::int64_t count = std::min(per_slice, end - first);
            t0 = Clock::now();
            a.resize(std::size_t(count * ss));
            b.resize(std::size_t(count * s));
            build(rows, other, gram, first, count, a.data(), b.data());
            t.build_s += seconds_since(t0);
            t0 = Clock::now();
            info.assign(std::size_t(count), 0);
            auto A = batchsolve::BatchView<float>::column_major(a.data(), s, s, int(count));
            auto B = batchsolve::BatchView<float>::column_major(b.data(), s, 1, int(count));
            batchsolve::posv_batched(batchsolve::Uplo::lower, A, B, info.data(), ctx_);
            for (std::int64_t r = 0; r < count; ++r) {
                float* x = &out[std::size_t((first + r) * s)];
                if (info[std::size_t(r)] != 0) {
                    std::fill(x, x + s, 0.f);
                    ++t.failed;
                } else {
                    std::copy(&b[std::size_t(r * s)], &b[std::size_t(r * s)] + s, x);
                }
            }
            t.solve_s += seconds_since(t0);
        }
        if (partition_.exchange) {
            t0 = Clock::now();
            partition_.exchange->allgather_rows(out.data(), own, s, nullptr);
            t.exchange_s += seconds_since(t0);
        }
        return t;
    }

    // Solver::cg: s_.cg_steps conjugate-gradient steps for each of the rows `mine`, from the row's
    // current factors in `out`, with A v = ridge v + G v + sum_j w_j (d_j . v) d_j applied through the
    // row's entries (G: the Gram matrix, implicit only). A row whose system is not positive definite
    // along the first direction (lambda = 0 on an empty row) is set to 0 and counted, as the exact
    // solver does; the count is returned.
    std::int64_t conjugate_gradient(const Csr& rows, const std::vector<float>& other, const std::vector<float>& gram,
                                    RowRange mine, std::vector<float>& out) const {
        const int s = s_.width;
        const std::size_t width = static_cast<std::size_t>(s);
        // Both triangles of G, so that G v runs as column updates (no reduction in the inner loop).
        std::vector<float> full;
        if (s_.implicit) {
            full.assign(width * width, 0.f);
            for (int j = 0; j < s; ++j)
                for (int i = j; i < s; ++i) full[std::size_t(j) * width + i] = full[std::size_t(i) * width + j] = gram[std::size_t(j) * width + i];
        }
        std::int64_t failed = 0;
#pragma omp parallel reduction(+ : failed)
        {
            CgRow row_state;
#pragma omp for schedule(dynamic, 64)
            for (std::int64_t row = mine.first; row < mine.first + mine.count; ++row) {
                const std::int64_t begin = rows.indptr[row], n = rows.row_length(row);
                // The row's d_j gathered once (the biases column reads 1), read by every step.
                row_state.d.resize(std::size_t(n) * width), row_state.weight.resize(std::size_t(n)), row_state.target.resize(std::size_t(n));
                for (std::int64_t e = 0; e < n; ++e) {
                    const float* d = &other[std::size_t(rows.indices[begin + e]) * width];
                    float* dst = &row_state.d[std::size_t(e) * width];
                    std::copy(d, d + s, dst);
                    const float value = rows.values[begin + e];
                    if (s_.implicit) row_state.weight[std::size_t(e)] = value - 1.f, row_state.target[std::size_t(e)] = value;
                    else row_state.weight[std::size_t(e)] = 1.f, row_state.target[std::size_t(e)] = s_.biases ? value - d[s - 1] : value;
                    if (s_.biases) dst[s - 1] = 1.f;
                }
                const float ridge = s_.implicit ? s_.lambda : s_.lambda * float(std::max<std::int64_t>(n, 1));
                failed += cg_row(row_state, s_.implicit ? full.data() : nullptr, s, n, ridge, s_.cg_steps, &out[std::size_t(row) * width]);
            }
        }
        return failed;
    }

    // Systems of rows [first, first + count) into a (packed column-major, lower triangle) and b.
    void build(const Csr& rows, const std::vector<float>& other, const std::vector<float>& gram, std::int64_t first,
               std::int64_t count, float* a, float* b) const {
        const int s = s_.width;
        const std::int64_t ss = std::int64_t(s) * s;
        // One BLAS thread per OpenMP thread: OpenBLAS's own threads would oversubscribe the cores.
        const int blas_threads = openblas_get_num_threads();
        openblas_set_num_threads(1);
#pragma omp parallel
        {
            std::vector<float> gathered;  // the row's d_j scaled by sqrt(weight), column-major s x n
#pragma omp for schedule(dynamic, 64)
            for (std::int64_t r = 0; r < count; ++r) {
                const std::int64_t row = first + r, begin = rows.indptr[row], n = rows.row_length(row);
                float* A = a + r * ss;
                float* x = b + r * s;
                std::fill(x, x + s, 0.f);
                if (s_.implicit) std::copy(gram.begin(), gram.end(), A);
                else std::fill(A, A + ss, 0.f);
                gathered.resize(std::size_t(n * s));
                for (std::int64_t e = 0; e < n; ++e) {
                    const float* d = &other[std::size_t(rows.indices[begin + e]) * std::size_t(s)];
                    float* g = &gathered[std::size_t(e * s)];
                    const float value = rows.values[begin + e];
                    float weight, target;
                    if (s_.implicit) {
                        weight = value - 1.f, target = value;  // value = confidence c = 1 + alpha * f(r)
                    } else {
                        weight = 1.f, target = s_.biases ? value - d[s - 1] : value;
                    }
                    const float root = std::sqrt(std::max(weight, 0.f));
                    for (int i = 0; i < s; ++i) {
                        const float di = (s_.biases && i == s - 1) ? 1.f : d[i];
                        g[i] = root * di;
                        x[i] += target * di;
                    }
                }
                if (n >= kSyrkMinEntries) {
                    cblas_ssyrk(CblasColMajor, CblasLower, CblasNoTrans, s, int(n), 1.f, gathered.data(), s, 1.f, A, s);
                } else {
                    // Short rows: rank-1 updates of the lower triangle by hand (BLAS's per-call
                    // overhead dominates below kSyrkMinEntries entries).
                    for (std::int64_t e = 0; e < n; ++e) {
                        const float* g = &gathered[std::size_t(e * s)];
                        for (int j = 0; j < s; ++j) {
                            const float gj = g[j];
                            float* column = A + std::int64_t(j) * s;
                            for (int i = j; i < s; ++i) column[i] += g[i] * gj;
                        }
                    }
                }
                const float ridge = s_.implicit ? s_.lambda : s_.lambda * float(std::max<std::int64_t>(n, 1));
                for (int i = 0; i < s; ++i) A[std::int64_t(i) * s + i] += ridge;
            }
        }
        openblas_set_num_threads(blas_threads);
    }

    const Csr& by_user_;
    const Csr& by_item_;
    EngineSettings s_;
    batchsolve::Context ctx_;
    Partition partition_;
    std::vector<float> users_, items_;
};

}  // namespace

void check_partition(const Csr& by_user, const Csr& by_item, const Partition& p) {
    auto covers = [](const std::vector<RowRange>& ranges, std::int64_t rows) {
        std::int64_t next = 0;
        for (const RowRange& r : ranges) {
            if (r.first != next || r.count < 0) return false;
            next += r.count;
        }
        return next == rows;
    };
    if (p.users.size() != p.items.size() || p.index < 0 || std::size_t(p.index) >= p.users.size() ||
        !covers(p.users, by_user.rows) || !covers(p.items, by_item.rows))
        throw Error("a partition's ranges must cover every user and item in order (a bug: please report it)");
    if (p.users.size() > 1 && p.exchange == nullptr) throw Error("a partition of several parts needs an exchange (a bug)");
}

std::vector<RowRange> partition_rows(const Csr& m, int parts, int width) {
    if (parts < 1) throw Error("partition_rows: parts must be >= 1");
    const double per_row = double(width) / 3.0;
    const double total = double(m.nnz()) + per_row * double(m.rows);
    std::vector<RowRange> out(static_cast<std::size_t>(parts));
    std::int64_t row = 0;
    for (int p = 0; p < parts; ++p) {
        // The part ends where the running cost first reaches (p + 1) / parts of the total.
        const double target = total * double(p + 1) / double(parts);
        const std::int64_t first = row;
        if (p == parts - 1) {
            row = m.rows;
        } else {
            while (row < m.rows && double(m.indptr[row + 1]) + per_row * double(row + 1) <= target) ++row;
        }
        out[std::size_t(p)] = {first, row - first};
    }
    return out;
}

std::unique_ptr<Engine> make_cpu_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings,
                                        const Partition* partition) {
    if (settings.width < 1) throw Error("factors must be >= 1");
    if (std::int64_t(by_user.rows) > INT32_MAX || by_item.rows > INT32_MAX) throw Error("more than 2^31 - 1 rows");
    if (partition) check_partition(by_user, by_item, *partition);
    return std::make_unique<CpuEngine>(by_user, by_item, settings, partition);
}

}  // namespace als
