// CPU integer shift search (FFTW) and the pyramid driver shared by both engines.
#include "initial_guess.hpp"

#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "batchsolve_io/progress.hpp"
#include "volume_math.hpp"

namespace dvc {

std::vector<std::int32_t> fft_shift_search(const Volume& ref, const Volume& def, const ShiftSearch& search, bool progress) {
    const int s = search.subset, radius = search.radius;
    if (radius < 0) throw Error("--search-radius: must not be negative");
    const std::size_t count = search.points();
    const int w = s + 2 * radius;
    const std::int64_t real_size = std::int64_t(w) * w * w;
    const std::int64_t complex_size = std::int64_t(w) * w * (w / 2 + 1);
    std::vector<std::int32_t> shifts(search.predicted);
    if (count == 0) return shifts;
    // Plans are made once (FFTW's planner is not thread-safe) and executed on per-thread arrays.
    float* plan_in = fftwf_alloc_real(real_size);
    fftwf_complex* plan_out = fftwf_alloc_complex(complex_size);
    fftwf_plan forward = fftwf_plan_dft_r2c_3d(w, w, w, plan_in, plan_out, FFTW_ESTIMATE);
    fftwf_plan backward = fftwf_plan_dft_c2r_3d(w, w, w, plan_out, plan_in, FFTW_ESTIMATE);
    const std::int64_t n = std::int64_t(s) * s * s;
    const std::int64_t dims[3] = {def.nz(), def.ny(), def.nx()};
    batchsolve::io::Progress bar("fft guess", count,
                                 progress ? batchsolve::io::Progress::Show::if_terminal : batchsolve::io::Progress::Show::never);
    std::mutex bar_mutex;
    std::int64_t done = 0;
#pragma omp parallel
    {
        float* f = fftwf_alloc_real(real_size);
        float* g = fftwf_alloc_real(real_size);
        fftwf_complex* F = fftwf_alloc_complex(complex_size);
        fftwf_complex* G = fftwf_alloc_complex(complex_size);
        const int p = w + 1;
        std::vector<double> s1(std::size_t(p) * p * p), s2(std::size_t(p) * p * p);
#pragma omp for schedule(dynamic, 4)
        for (std::int64_t k = 0; k < std::int64_t(count); ++k) {
            const std::int64_t* start = &search.starts[3 * k];
            const std::int32_t* centre_shift = &search.predicted[3 * k];
            double mean = 0;
            for (int a = 0; a < s; ++a)
                for (int b = 0; b < s; ++b)
                    for (int c = 0; c < s; ++c) mean += ref.at(start[0] + a, start[1] + b, start[2] + c);
            mean /= double(n);
            std::fill(f, f + real_size, 0.0f);
            for (int a = 0; a < s; ++a)
                for (int b = 0; b < s; ++b)
                    for (int c = 0; c < s; ++c)
                        f[(std::int64_t(a) * w + b) * w + c] = float(ref.at(start[0] + a, start[1] + b, start[2] + c) - mean);
            // The deformed window (zero outside the volume; shifts that reach there are skipped).
            const std::int64_t origin[3] = {start[0] + centre_shift[0] - radius, start[1] + centre_shift[1] - radius,
                                            start[2] + centre_shift[2] - radius};
            for (int a = 0; a < w; ++a)
                for (int b = 0; b < w; ++b)
                    for (int c = 0; c < w; ++c) {
                        const std::int64_t z = origin[0] + a, y = origin[1] + b, x = origin[2] + c;
                        const bool in = z >= 0 && y >= 0 && x >= 0 && z < def.nz() && y < def.ny() && x < def.nx();
                        g[(std::int64_t(a) * w + b) * w + c] = in ? def.at(z, y, x) : 0.0f;
                    }
            fftwf_execute_dft_r2c(forward, f, F);
            fftwf_execute_dft_r2c(forward, g, G);
            for (std::int64_t i = 0; i < complex_size; ++i) {
                const float re = F[i][0] * G[i][0] + F[i][1] * G[i][1];
                const float im = F[i][0] * G[i][1] - F[i][1] * G[i][0];
                F[i][0] = re, F[i][1] = im;
            }
            fftwf_execute_dft_c2r(backward, F, f);  // f now holds w^3 * sum_x f~(x) g(x + offset)
            // Window sums of g and g^2 for the zero-normalised score.
            auto at = [p](std::vector<double>& v, int a, int b, int c) -> double& { return v[(std::size_t(a) * p + b) * p + c]; };
            for (int a = 0; a <= w; ++a)
                for (int b = 0; b <= w; ++b)
                    for (int c = 0; c <= w; ++c) {
                        if (a == 0 || b == 0 || c == 0) { at(s1, a, b, c) = at(s2, a, b, c) = 0; continue; }
                        const double v = g[(std::int64_t(a - 1) * w + (b - 1)) * w + (c - 1)];
                        at(s1, a, b, c) = v + at(s1, a - 1, b, c) + at(s1, a, b - 1, c) + at(s1, a, b, c - 1) - at(s1, a - 1, b - 1, c) -
                                          at(s1, a - 1, b, c - 1) - at(s1, a, b - 1, c - 1) + at(s1, a - 1, b - 1, c - 1);
                        at(s2, a, b, c) = v * v + at(s2, a - 1, b, c) + at(s2, a, b - 1, c) + at(s2, a, b, c - 1) - at(s2, a - 1, b - 1, c) -
                                          at(s2, a - 1, b, c - 1) - at(s2, a, b - 1, c - 1) + at(s2, a - 1, b - 1, c - 1);
                    }
            auto box = [&](std::vector<double>& v, int a, int b, int c) {
                return at(v, a + s, b + s, c + s) - at(v, a, b + s, c + s) - at(v, a + s, b, c + s) - at(v, a + s, b + s, c) +
                       at(v, a, b, c + s) + at(v, a, b + s, c) + at(v, a + s, b, c) - at(v, a, b, c);
            };
            double best = -std::numeric_limits<double>::infinity();
            for (int a = 0; a <= 2 * radius; ++a)
                for (int b = 0; b <= 2 * radius; ++b)
                    for (int c = 0; c <= 2 * radius; ++c) {
                        const int shift[3] = {centre_shift[0] + a - radius, centre_shift[1] + b - radius, centre_shift[2] + c - radius};
                        bool inside = true;
                        for (int i = 0; i < 3; ++i) inside = inside && shift_admissible(start[i], shift[i], s, dims[i]);
                        if (!inside) continue;
                        const double sum = box(s1, a, b, c), energy = box(s2, a, b, c) - sum * sum / double(n);
                        if (!(energy > 0)) continue;
                        const double score = f[(std::int64_t(a) * w + b) * w + c] / std::sqrt(energy);
                        // Prefer the first (most negative) offset on ties (a flat correlation peak).
                        if (score > best) {
                            best = score;
                            for (int i = 0; i < 3; ++i) shifts[3 * k + i] = shift[i];
                        }
                    }
            if (progress) {
                std::lock_guard<std::mutex> lock(bar_mutex);
                bar.set(std::uint64_t(++done));
            }
        }
        fftwf_free(f), fftwf_free(g), fftwf_free(F), fftwf_free(G);
    }
    fftwf_destroy_plan(forward), fftwf_destroy_plan(backward);
    fftwf_free(plan_in), fftwf_free(plan_out);
    return shifts;
}

std::vector<std::int32_t> fft_integer_shifts(const Volume& ref, const Volume& def, const std::vector<Point3>& centres, int s,
                                             int radius, bool progress) {
    ShiftSearch search;
    search.subset = s, search.radius = radius;
    search.predicted.assign(3 * centres.size(), 0);
    const double half = subset_half(s);
    for (const auto& c : centres)
        for (int i = 0; i < 3; ++i) search.starts.push_back(std::llround(c[i] - half));
    return fft_shift_search(ref, def, search, progress);
}

int pyramid_subset(int subset, int level) {
    const int scaled = (subset + (1 << level) - 1) >> level;
    return std::min(subset, std::max(kMinPyramidSubset, scaled));
}

Dims pyramid_dims(const Dims& dims, int level) { return {dims[0] >> level, dims[1] >> level, dims[2] >> level}; }

int pyramid_levels(const Dims& dims, int subset, int radius, int requested) {
    auto fits = [&](int level) {
        const Dims d = pyramid_dims(dims, level);
        const int window = pyramid_subset(subset, level) + 2 * radius + 4;
        return d[0] >= window && d[1] >= window && d[2] >= window;
    };
    if (requested < 0) {
        int levels = 0;
        while (levels < kMaxPyramidLevels && fits(levels + 1)) ++levels;
        return levels;
    }
    if (requested > 0 && !fits(requested)) {
        const Dims d = pyramid_dims(dims, requested);
        throw Error("--pyramid-levels: at level " + std::to_string(requested) + " the volume is " + dims_text(d) + " voxels, less than its subset (" +
                    std::to_string(pyramid_subset(subset, requested)) + ") plus the search box (2 x " + std::to_string(radius) +
                    ") plus 4 voxels of margin");
    }
    return requested;
}

std::vector<LevelShape> pyramid_searches(int subset, int radius, int levels) {
    std::vector<LevelShape> shapes;
    for (int level = levels; level >= 0; --level)
        shapes.push_back({level, level == 0 ? subset : pyramid_subset(subset, level), level == levels ? radius : kRefineRadius});
    return shapes;
}

std::vector<std::int32_t> pyramid_shifts(const std::vector<Point3>& centres, const Dims& dims, int subset, int radius, int levels,
                                         const LevelSearch& search_at) {
    std::vector<std::int32_t> shifts(3 * centres.size(), 0);
    for (const LevelShape& shape : pyramid_searches(subset, radius, levels)) {
        const int level = shape.level;
        ShiftSearch search;
        search.subset = shape.subset;
        search.radius = shape.radius;
        const Dims d = pyramid_dims(dims, level);
        const double scale = double(1 << level), half = subset_half(search.subset);
        search.starts.resize(3 * centres.size());
        search.predicted.resize(3 * centres.size());
        for (std::size_t k = 0; k < centres.size(); ++k)
            for (int i = 0; i < 3; ++i) {
                // The fine voxel x lies at (x - 0.5 (2^l - 1)) / 2^l on level l; near the border the
                // coarse subset is pushed inside (its shift still describes the neighbourhood).
                std::int64_t start = std::llround((centres[k][i] - 0.5 * (scale - 1)) / scale - half);
                if (level > 0) start = std::clamp<std::int64_t>(start, 1, std::max<std::int64_t>(1, d[i] - search.subset - 2));
                search.starts[3 * k + i] = start;
                search.predicted[3 * k + i] = level == levels ? 0 : 2 * shifts[3 * k + i];
            }
        shifts = search_at(level, search);
    }
    return shifts;
}

Volume downsample2(const Volume& v) {
    Volume out;
    out.dims = pyramid_dims(v.dims, 1);
    out.voxel_size = 2 * v.voxel_size;
    out.data.resize(out.voxels());
    const std::int64_t nz = out.nz(), ny = out.ny(), nx = out.nx();
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t z = 0; z < nz; ++z)
        for (std::int64_t y = 0; y < ny; ++y)
            for (std::int64_t x = 0; x < nx; ++x) out.at(z, y, x) = downsample_at(v.data.data(), v.ny(), v.nx(), z, y, x);
    return out;
}

}  // namespace dvc
