// ALS training loop, loss, metrics and baselines, recommendations and the model file.
#include "model.hpp"
#include "memory_plan.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "batchsolve_io/hdf5.hpp"

namespace als {

namespace h5 = batchsolve::io::h5;

Weighting parse_weighting(const std::string& text) {
    if (text == "none") return Weighting::none;
    if (text == "log") return Weighting::log;
    if (text == "bm25") return Weighting::bm25;
    throw Error("--weighting must be none, log or bm25 (got '" + text + "')");
}
const char* to_string(Weighting w) { return w == Weighting::none ? "none" : w == Weighting::log ? "log" : "bm25"; }

float Model::score(std::int64_t user, std::int64_t item) const {
    const int k = hyper.factors, w = width();
    const float* x = &user_factors[std::size_t(user * w)];
    const float* y = &item_factors[std::size_t(item * w)];
    float dot = 0;
    for (int j = 0; j < k; ++j) dot += x[j] * y[j];
    return dot;
}

float Model::predict(std::int64_t user, std::int64_t item) const {
    float p = global_mean + score(user, item);
    if (hyper.biases) {
        const int w = width();
        p += user_factors[std::size_t(user * w + w - 1)] + item_factors[std::size_t(item * w + w - 1)];
    }
    return std::clamp(p, rating_min, rating_max);
}

namespace {

// The values the engines consume: confidence c = 1 + alpha f(r) (implicit) or r - global mean (explicit),
// in place.
void prepare_values_in_place(Csr& m, const Hyper& h, float global_mean) {
    float* v = m.values.data();
    const std::int64_t n = std::int64_t(m.values.size());
    const float alpha = float(h.alpha), eps = float(h.log_epsilon);
    if (h.feedback == Feedback::explicit_ratings) {
#pragma omp parallel for schedule(static)
        for (std::int64_t e = 0; e < n; ++e) v[e] -= global_mean;
        return;
    }
    if (h.weighting == Weighting::none) {
#pragma omp parallel for schedule(static)
        for (std::int64_t e = 0; e < n; ++e) v[e] = 1 + alpha * v[e];
    } else if (h.weighting == Weighting::log) {
#pragma omp parallel for schedule(static)
        for (std::int64_t e = 0; e < n; ++e) v[e] = 1 + alpha * std::log1p(v[e] / eps);
    } else {
        // BM25 with items as terms and users as documents, as implicit.nearest_neighbours.bm25_weight
        // applied to the item x user matrix: idf per user, length normalisation per item.
        std::vector<double> item_sum(static_cast<std::size_t>(m.cols), 0);
        for (std::int64_t e = 0; e < m.nnz(); ++e) item_sum[std::size_t(m.indices[e])] += m.values[e];
        const double average = std::accumulate(item_sum.begin(), item_sum.end(), 0.0) / double(std::max<std::int64_t>(m.cols, 1));
        for (std::int64_t u = 0; u < m.rows; ++u) {
            const double idf = std::log(double(m.cols)) - std::log1p(double(m.row_length(u)));
            for (std::int64_t e = m.indptr[u]; e < m.indptr[u + 1]; ++e) {
                const double len = (1 - h.bm25_b) + h.bm25_b * item_sum[std::size_t(m.indices[e])] / average;
                const double v = m.values[e];
                m.values[e] = float(1 + h.alpha * std::max(0.0, v * (h.bm25_k1 + 1) / (h.bm25_k1 * len + v) * idf));
            }
        }
    }
}

Csr prepare_values(const Csr& side, const Hyper& h, float global_mean) {
    Csr m = side;
    prepare_values_in_place(m, h, global_mean);
    return m;
}

// Initial factors uniform in [0, scale): a counter-based hash of (seed, side, index), the same values
// for any thread count, filled by all threads (a serial generator took 0.2 s for 10^7 values).
std::uint64_t mix64(std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
void fill_uniform(std::vector<float>& v, std::uint64_t seed, std::uint64_t side, float scale) {
    const std::uint64_t key = mix64(mix64(seed) ^ side);
    const std::int64_t n = std::int64_t(v.size());
    float* p = v.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t e = 0; e < n; ++e) p[e] = float(mix64(key + std::uint64_t(e)) >> 40) * 0x1p-24f * scale;
}

void check_hyper(const Hyper& h) {
    if (h.factors < 1 || h.factors > 1024) throw Error("--factors must be in [1, 1024]");
    if (h.iterations < 0) throw Error("--iterations must be >= 0");
    if (!(h.lambda >= 0) || !std::isfinite(h.lambda)) throw Error("--lambda must be a finite number >= 0");
    if (!(h.alpha >= 0) || !std::isfinite(h.alpha)) throw Error("--alpha must be a finite number >= 0");
    if (!(h.log_epsilon > 0)) throw Error("--log-epsilon must be > 0");
    if (h.biases && h.feedback == Feedback::implicit_counts) throw Error("--biases is for explicit feedback only");
}

using Clock = std::chrono::steady_clock;

}  // namespace

double training_loss(const Model& model, const Ratings& train) {
    const Hyper& h = model.hyper;
    const int k = h.factors, w = model.width();
    const Csr prepared = prepare_values(train.by_user, h, model.global_mean);
    double reg = 0, data = 0;
    if (h.feedback == Feedback::implicit_counts) {
        // sum over all pairs of (x.y)^2 = trace((X^T X)(Y^T Y)), then the observed entries corrected.
        std::vector<double> xx(static_cast<std::size_t>(k * k), 0), yy(std::size_t(k * k), 0);
        for (std::int64_t u = 0; u < model.users(); ++u)
            for (int a = 0; a < k; ++a)
                for (int b = 0; b < k; ++b)
                    xx[std::size_t(a * k + b)] += double(model.user_factors[std::size_t(u * w + a)]) * model.user_factors[std::size_t(u * w + b)];
        for (std::int64_t i = 0; i < model.items(); ++i)
            for (int a = 0; a < k; ++a)
                for (int b = 0; b < k; ++b)
                    yy[std::size_t(a * k + b)] += double(model.item_factors[std::size_t(i * w + a)]) * model.item_factors[std::size_t(i * w + b)];
        for (int a = 0; a < k * k; ++a) data += xx[std::size_t(a)] * yy[std::size_t(a)];
#pragma omp parallel for reduction(+ : data) schedule(dynamic, 64)
        for (std::int64_t u = 0; u < prepared.rows; ++u)
            for (std::int64_t e = prepared.indptr[u]; e < prepared.indptr[u + 1]; ++e) {
                const double xy = model.score(u, prepared.indices[e]), c = prepared.values[e];
                data += c * (1 - xy) * (1 - xy) - xy * xy;
            }
        for (float v : model.user_factors) reg += double(v) * v;
        for (float v : model.item_factors) reg += double(v) * v;
        return (data + h.lambda * reg) / (double(model.users()) * double(model.items()));
    }
#pragma omp parallel for reduction(+ : data) schedule(dynamic, 64)
    for (std::int64_t u = 0; u < train.by_user.rows; ++u)
        for (std::int64_t e = train.by_user.indptr[u]; e < train.by_user.indptr[u + 1]; ++e) {
            const int i = train.by_user.indices[e];
            float p = model.global_mean + model.score(u, i);
            if (h.biases) p += model.user_factors[std::size_t(u * w + w - 1)] + model.item_factors[std::size_t(i * w + w - 1)];
            const double d = double(train.by_user.values[e]) - p;
            data += d * d;
        }
    for (std::int64_t u = 0; u < model.users(); ++u) {
        double n2 = 0;
        for (int j = 0; j < w; ++j) n2 += double(model.user_factors[std::size_t(u * w + j)]) * model.user_factors[std::size_t(u * w + j)];
        reg += double(train.by_user.row_length(u)) * n2;
    }
    for (std::int64_t i = 0; i < model.items(); ++i) {
        double n2 = 0;
        for (int j = 0; j < w; ++j) n2 += double(model.item_factors[std::size_t(i * w + j)]) * model.item_factors[std::size_t(i * w + j)];
        reg += double(train.by_item.row_length(i)) * n2;
    }
    return (data + h.lambda * reg) / double(std::max<std::int64_t>(train.nnz(), 1));
}

namespace {

// `consume`: the same object as `train`, whose arrays the training may transform in place and take
// (the values become the engines' prepared values, the pattern the model's seen items); nullptr:
// `train` is left as it was and copied where needed. The training loss needs the raw values: with
// it, nothing is consumed.
Model train_impl(const Ratings& train, Ratings* consume, const Hyper& hyper, const TrainOptions& options, const Ratings* test,
                 const Model* resume) {
    check_hyper(hyper);
    if (options.compute_loss) consume = nullptr;
    using clock = std::chrono::steady_clock;
    auto stage_start = clock::now();
    auto stage = [&](const char* name) {
        const auto now = clock::now();
        if (options.on_stage) options.on_stage(name, std::chrono::duration<double>(now - stage_start).count());
        stage_start = now;
    };
    if (hyper.feedback != train.feedback)
        throw Error(std::string("the ratings file holds ") + to_string(train.feedback) + " feedback, but --feedback is " +
                    to_string(hyper.feedback));
    if (train.nnz() == 0) throw Error("the training set holds no ratings");
    if (test && (test->user_ids.size() != train.user_ids.size() || test->item_ids.size() != train.item_ids.size()))
        throw Error("the test set's users/items differ from the training set's (make both with 'als split')");
    Model m;
    m.hyper = hyper;
    m.seen.rows = train.by_user.rows, m.seen.cols = train.by_user.cols;  // the pattern only: no copy of the values
    if (consume) {
        m.user_ids = std::move(consume->user_ids), m.item_ids = std::move(consume->item_ids);
        // m.seen takes the pattern once the engine is done with it (below).
    } else {
        m.user_ids = train.user_ids, m.item_ids = train.item_ids;
        m.seen.indptr = train.by_user.indptr, m.seen.indices = train.by_user.indices;
    }
    m.train_provenance = train.provenance;
    if (hyper.feedback == Feedback::explicit_ratings) {
        const auto& v = train.by_user.values;
        m.rating_min = *std::min_element(v.begin(), v.end());
        m.rating_max = *std::max_element(v.begin(), v.end());
        if (hyper.biases) m.global_mean = float(std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()));
    }
    const int w = m.width();
    if (resume) {
        if (resume->hyper.factors != hyper.factors || resume->hyper.biases != hyper.biases ||
            resume->hyper.feedback != hyper.feedback)
            throw Error("--resume: the model's factors/biases/feedback differ from this run's options");
        if (resume->user_ids != m.user_ids || resume->item_ids != m.item_ids)
            throw Error("--resume: the model's user or item ids differ from the training file's");
        m.user_factors = resume->user_factors, m.item_factors = resume->item_factors;
        m.global_mean = resume->global_mean;
        m.iterations_done = resume->iterations_done;
        m.history = resume->history;
    } else {
        const float scale = hyper.feedback == Feedback::implicit_counts ? hyper.init_scale : 10 * hyper.init_scale;
        m.user_factors.resize(std::size_t(m.users() * w));
        m.item_factors.resize(std::size_t(m.items() * w));
        fill_uniform(m.user_factors, hyper.seed, 1, scale);
        fill_uniform(m.item_factors, hyper.seed, 2, scale);
        if (hyper.biases) {
            for (std::int64_t u = 0; u < m.users(); ++u) m.user_factors[std::size_t(u * w + w - 1)] = 0;
            for (std::int64_t i = 0; i < m.items(); ++i) m.item_factors[std::size_t(i * w + w - 1)] = 0;
        }
    }
    stage("factors initialised");
    // The item side: the file's by_item (read_ratings, split and generate hold both sides) with its
    // values mapped one by one, where the weighting is per entry; BM25 depends on the row's and the
    // column's totals, so its values come from the prepared user side by a transpose.
    const bool have_item_side = train.by_item.rows == train.by_user.cols && train.by_item.nnz() == train.by_user.nnz();
    const bool item_by_transpose = !have_item_side || (hyper.feedback == Feedback::implicit_counts && hyper.weighting == Weighting::bm25);
    Csr user_copy, item_copy;
    if (consume) {
        prepare_values_in_place(consume->by_user, hyper, m.global_mean);
        if (item_by_transpose) consume->by_item = transpose(consume->by_user);
        else prepare_values_in_place(consume->by_item, hyper, m.global_mean);
    } else {
        user_copy = prepare_values(train.by_user, hyper, m.global_mean);
        item_copy = item_by_transpose ? transpose(user_copy) : prepare_values(train.by_item, hyper, m.global_mean);
    }
    const Csr& by_user = consume ? consume->by_user : user_copy;
    const Csr& by_item = consume ? consume->by_item : item_copy;
    stage("values of both sides");
    EngineSettings es;
    es.width = w, es.implicit = hyper.feedback == Feedback::implicit_counts, es.biases = hyper.biases;
    es.lambda = hyper.lambda, es.layout = options.layout, es.chunk_size = options.chunk_size, es.build = options.build;
    es.gram = options.gram, es.solve_kernel = resolve_solve_kernel(options.solve_kernel, w, options.layout), es.overlap = options.overlap;
    es.builds_first = options.builds_first;
    es.solver = options.solver, es.cg_steps = options.cg_steps;
    std::unique_ptr<Engine> engine;
    const bool want_cuda = options.backend == "cuda" || (options.backend == "auto" && cuda_engine_available());
    if (options.backend != "auto" && options.backend != "cpu" && options.backend != "cuda")
        throw Error("--backend must be auto, cpu or cuda (got '" + options.backend + "')");
    es.slice_bytes = options.slice_bytes ? options.slice_bytes : want_cuda ? EngineSettings::kDefaultGpuSliceBytes : EngineSettings::kDefaultCpuSliceBytes;
    m.backend = want_cuda ? "cuda" : "cpu";
    RankGroup* ranks = options.ranks && options.ranks->size() > 1 ? options.ranks : nullptr;
    std::vector<int> devices = options.devices;
    if (!ranks && (options.device_memory_bytes > 0 || options.fit_partitions || (want_cuda && devices.size() > 1))) {
        // Every partition's bytes against the memory of a device, before any engine allocates.
        std::uint64_t per_device = options.device_memory_bytes;
        if (per_device == 0 && want_cuda) {
            per_device = ~std::uint64_t(0);
            for (int d : devices.empty() ? std::vector<int>{0} : devices) per_device = std::min(per_device, cuda_free_bytes(d));
        }
        if (per_device > 0) {
            const PartitionPlan plan = plan_partitions(by_user, by_item, es, std::max<int>(1, int(devices.size())), per_device,
                                                       options.fit_partitions);
            if (!devices.empty()) devices.resize(std::size_t(plan.partitions));
            m.partition_plan = plan.describe();
        }
    }
    if (ranks) {
        // One partition per rank; an error while setting up (memory, device) on one rank is every rank's.
        const int local = ranks->local_rank();
        if (want_cuda) {
            const int visible = cuda_device_count();
            es.device = !options.devices.empty() ? options.devices[std::size_t(local) % options.devices.size()]
                                                 : (visible > 0 ? local % visible : 0);
        }
        std::string why;
        try {
            engine = make_rank_engine(by_user, by_item, es, want_cuda, *ranks);
        } catch (const std::exception& e) {
            why = e.what();
        }
        ranks->agree(engine != nullptr, why, "setting up the engine");
    } else if (devices.size() > 1) {
        engine = make_multi_device_engine(by_user, by_item, es, want_cuda, devices);
    } else {
        if (!devices.empty()) es.device = devices.front();
        if (want_cuda) es.warmup = options.cuda_warmup;
        engine = want_cuda ? make_cuda_engine(by_user, by_item, es) : make_cpu_engine(by_user, by_item, es);
    }
    m.device = engine->device();
    engine->set_factors(m.user_factors, m.item_factors);
    stage("engine set up (upload, solver kernels)");
    const int first = m.iterations_done;
    for (int it = 0; it < hyper.iterations; ++it) {
        IterationLog log;
        log.iteration = first + it + 1;
        const HalfTiming a = engine->solve_users();
        const HalfTiming b = engine->solve_items();
        log.build_s = a.build_s + b.build_s, log.solve_s = a.solve_s + b.solve_s, log.exchange_s = a.exchange_s + b.exchange_s;
        log.gram_s = a.gram_s + b.gram_s, log.users_build_s = a.build_s, log.users_solve_s = a.solve_s;
        log.overlap_s = a.overlap_s + b.overlap_s;
        log.failed = a.failed + b.failed;
        if (it == 0) stage("first iteration");
        log.loss = log.test_metric = std::numeric_limits<double>::quiet_NaN();
        const bool eval = test && options.eval_every > 0 && ((it + 1) % options.eval_every == 0 || it + 1 == hyper.iterations);
        if (options.compute_loss || eval) engine->get_factors(m.user_factors, m.item_factors);
        m.iterations_done = log.iteration;
        if (options.compute_loss) log.loss = training_loss(m, train);
        if (eval)
            log.test_metric = hyper.feedback == Feedback::explicit_ratings ? evaluate_explicit(m, *test).rmse
                                                                           : evaluate_ranking(m, *test, 10).precision;
        m.history.push_back(log);
        if (options.on_iteration) options.on_iteration(log);
    }
    stage_start = clock::now();
    engine->get_factors(m.user_factors, m.item_factors);
    m.peak_device_bytes = engine->peak_device_bytes();
    m.engine_notes = engine->notes();
    stage("factors back on the host");
    // A single CUDA engine's device memory (gigabytes of systems) is released on a thread of its own
    // while the caller checks and writes the model; the engine reads nothing of by_user/by_item then.
    const bool single_cuda = want_cuda && !ranks && devices.size() <= 1;
    if (options.engine_release && single_cuda)
        *options.engine_release = std::async(std::launch::async, [e = std::move(engine), device = es.device, reset = options.release_device]() mutable {
            e.reset();
            if (reset) cuda_release_device(device);
        });
    else
        engine.reset();
    if (consume) {
        m.seen.indptr = std::move(consume->by_user.indptr), m.seen.indices = std::move(consume->by_user.indices);
        consume->by_user = Csr{}, consume->by_item = Csr{};  // what is left of `train` is an empty set
    }
    if (!all_finite(m.user_factors)) throw Error("training produced a non-finite user factor (a bug: please report it)");
    if (!all_finite(m.item_factors)) throw Error("training produced a non-finite item factor (a bug: please report it)");
    return m;
}

}  // namespace

bool all_finite(const std::vector<float>& v) {
    const std::int64_t n = std::int64_t(v.size());
    const float* p = v.data();
    bool ok = true;
#pragma omp parallel for schedule(static) reduction(&& : ok)
    for (std::int64_t e = 0; e < n; ++e) ok = ok && std::isfinite(p[e]);
    return ok;
}

Model train(const Ratings& train, const Hyper& hyper, const TrainOptions& options, const Ratings* test, const Model* resume) {
    return train_impl(train, nullptr, hyper, options, test, resume);
}

Model train(Ratings&& train, const Hyper& hyper, const TrainOptions& options, const Ratings* test, const Model* resume) {
    return train_impl(train, &train, hyper, options, test, resume);
}

// ---- evaluation ----------------------------------------------------------------------------------

ExplicitMetrics evaluate_explicit(const Model& model, const Ratings& test) {
    if (test.users() != model.users() || test.items() != model.items())
        throw Error("the test set's users/items differ from the model's");
    ExplicitMetrics r;
    double se = 0, ae = 0;
    for (std::int64_t u = 0; u < test.by_user.rows; ++u)
        for (std::int64_t e = test.by_user.indptr[u]; e < test.by_user.indptr[u + 1]; ++e) {
            const double d = double(test.by_user.values[e]) - model.predict(u, test.by_user.indices[e]);
            se += d * d, ae += std::fabs(d), ++r.count;
        }
    if (r.count) r.rmse = std::sqrt(se / double(r.count)), r.mae = ae / double(r.count);
    return r;
}

namespace {

// Ranking metrics for a scorer that fills scores[b * items + i] for a block of users.
template <class Scorer>
RankingMetrics rank_with(const Csr& seen, const Ratings& test, int k, Scorer&& scorer) {
    if (k < 1) throw Error("--k must be >= 1");
    const std::int64_t items = test.items();
    constexpr std::int64_t block = 256;  // users scored per BLAS call: bounds the score buffer
    double relevant = 0, precision_div = 0, map = 0, ndcg = 0, auc = 0;
    std::int64_t users = 0;
    std::vector<float> scores;
    std::vector<std::int64_t> active;
    for (std::int64_t u0 = 0; u0 < test.users(); u0 += block) {
        const std::int64_t nb = std::min(block, test.users() - u0);
        active.clear();
        for (std::int64_t b = 0; b < nb; ++b)
            if (test.by_user.row_length(u0 + b) > 0) active.push_back(u0 + b);
        if (active.empty()) continue;
        scores.resize(std::size_t(active.size()) * std::size_t(items));
        scorer(active, scores.data());
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : relevant, precision_div, map, ndcg, auc, users)
        for (std::int64_t a = 0; a < std::int64_t(active.size()); ++a) {
            const std::int64_t u = active[std::size_t(a)];
            float* s = &scores[std::size_t(a) * std::size_t(items)];
            constexpr float excluded = -std::numeric_limits<float>::infinity();
            if (u < seen.rows)
                for (std::int64_t e = seen.indptr[u]; e < seen.indptr[u + 1]; ++e) s[seen.indices[e]] = excluded;
            const std::int32_t* t_begin = &test.by_user.indices[std::size_t(test.by_user.indptr[u])];
            const std::int64_t n_test = test.by_user.row_length(u);
            // Top k by score, ties broken by item index (stable, as an argsort would be).
            std::vector<std::int32_t> order(static_cast<std::size_t>(items));
            std::iota(order.begin(), order.end(), 0);
            const std::int64_t top = std::min<std::int64_t>(k, items);
            auto better = [&](std::int32_t x, std::int32_t y) { return s[x] != s[y] ? s[x] > s[y] : x < y; };
            std::partial_sort(order.begin(), order.begin() + top, order.end(), better);
            auto in_test = [&](std::int32_t i) { return std::binary_search(t_begin, t_begin + n_test, i); };
            double hits = 0, ap = 0, dcg = 0, idcg = 0;
            for (std::int64_t r = 0; r < top; ++r) {
                if (s[order[std::size_t(r)]] == excluded) break;
                if (in_test(order[std::size_t(r)])) {
                    hits += 1;
                    ap += hits / double(r + 1);
                    dcg += 1 / std::log2(double(r) + 2);
                }
            }
            const std::int64_t denom = std::min<std::int64_t>(k, n_test);
            for (std::int64_t r = 0; r < denom; ++r) idcg += 1 / std::log2(double(r) + 2);
            relevant += hits, precision_div += double(denom);
            map += ap / double(denom), ndcg += dcg / idcg;
            // AUC over (test item, negative item) pairs, negatives = neither seen nor in the test set.
            std::vector<float> test_scores(static_cast<std::size_t>(n_test));
            for (std::int64_t j = 0; j < n_test; ++j) test_scores[std::size_t(j)] = s[t_begin[j]];
            std::sort(test_scores.begin(), test_scores.end());
            double wins = 0, negatives = 0;
            for (std::int64_t i = 0; i < items; ++i) {
                if (s[i] == excluded || in_test(std::int32_t(i))) continue;
                negatives += 1;
                const auto lo = std::lower_bound(test_scores.begin(), test_scores.end(), s[i]);
                const auto hi = std::upper_bound(lo, test_scores.end(), s[i]);
                wins += double(test_scores.end() - hi) + 0.5 * double(hi - lo);
            }
            auc += negatives > 0 ? wins / (negatives * double(n_test)) : 0.5;
            users += 1;
        }
    }
    RankingMetrics m;
    m.users = users;
    if (users) {
        m.precision = relevant / precision_div, m.map = map / double(users);
        m.ndcg = ndcg / double(users), m.auc = auc / double(users);
    }
    return m;
}

}  // namespace

RankingMetrics evaluate_ranking(const Model& model, const Ratings& test, int k) {
    if (test.users() != model.users() || test.items() != model.items())
        throw Error("the test set's users/items differ from the model's");
    const int f = model.hyper.factors, w = model.width();
    const std::int64_t items = model.items();
    return rank_with(model.seen, test, k, [&](const std::vector<std::int64_t>& users, float* scores) {
        std::vector<float> x(users.size() * std::size_t(f));
        for (std::size_t a = 0; a < users.size(); ++a)
            std::copy_n(&model.user_factors[std::size_t(users[a] * w)], f, &x[a * std::size_t(f)]);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(users.size()), int(items), f, 1.f, x.data(), f,
                    model.item_factors.data(), w, 0.f, scores, int(items));
    });
}

RankingMetrics baseline_popularity(const Ratings& train, const Ratings& test, int k) {
    std::vector<float> popularity(static_cast<std::size_t>(train.items()));
    for (std::int64_t i = 0; i < train.items(); ++i) popularity[std::size_t(i)] = float(train.by_item.row_length(i));
    return rank_with(train.by_user, test, k, [&](const std::vector<std::int64_t>& users, float* scores) {
        for (std::size_t a = 0; a < users.size(); ++a) std::copy(popularity.begin(), popularity.end(), scores + a * popularity.size());
    });
}

ExplicitMetrics baseline_global_mean(const Ratings& train, const Ratings& test) {
    const auto& v = train.by_user.values;
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / double(std::max<std::size_t>(v.size(), 1));
    ExplicitMetrics r;
    double se = 0, ae = 0;
    for (float t : test.by_user.values) se += (t - mean) * (t - mean), ae += std::fabs(t - mean), ++r.count;
    if (r.count) r.rmse = std::sqrt(se / double(r.count)), r.mae = ae / double(r.count);
    return r;
}

ExplicitMetrics baseline_biases(const Ratings& train, const Ratings& test, double damping) {
    const auto& m = train.by_user;
    const double mean = std::accumulate(m.values.begin(), m.values.end(), 0.0) / double(std::max<std::int64_t>(m.nnz(), 1));
    std::vector<double> item_bias(static_cast<std::size_t>(train.items()), 0), user_bias(std::size_t(train.users()), 0);
    // Damped means (Koren 2008): item deviations first, then user deviations from mean + item bias.
    for (std::int64_t i = 0; i < train.items(); ++i) {
        double sum = 0;
        for (std::int64_t e = train.by_item.indptr[i]; e < train.by_item.indptr[i + 1]; ++e) sum += train.by_item.values[e] - mean;
        item_bias[std::size_t(i)] = sum / (damping + double(train.by_item.row_length(i)));
    }
    for (std::int64_t u = 0; u < train.users(); ++u) {
        double sum = 0;
        for (std::int64_t e = m.indptr[u]; e < m.indptr[u + 1]; ++e) sum += m.values[e] - mean - item_bias[std::size_t(m.indices[e])];
        user_bias[std::size_t(u)] = sum / (damping + double(m.row_length(u)));
    }
    const float lo = *std::min_element(m.values.begin(), m.values.end()), hi = *std::max_element(m.values.begin(), m.values.end());
    ExplicitMetrics r;
    double se = 0, ae = 0;
    for (std::int64_t u = 0; u < test.users(); ++u)
        for (std::int64_t e = test.by_user.indptr[u]; e < test.by_user.indptr[u + 1]; ++e) {
            const double p = std::clamp(mean + user_bias[std::size_t(u)] + item_bias[std::size_t(test.by_user.indices[e])], double(lo), double(hi));
            const double d = test.by_user.values[e] - p;
            se += d * d, ae += std::fabs(d), ++r.count;
        }
    if (r.count) r.rmse = std::sqrt(se / double(r.count)), r.mae = ae / double(r.count);
    return r;
}

// ---- recommendations -----------------------------------------------------------------------------

namespace {
std::vector<Scored> top_n(std::vector<Scored> all, int n) {
    const std::size_t top = std::min<std::size_t>(std::size_t(std::max(n, 0)), all.size());
    std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(top), all.end(), [](const Scored& a, const Scored& b) {
        return a.score != b.score ? a.score > b.score : a.index < b.index;
    });
    all.resize(top);
    return all;
}
}  // namespace

std::vector<Scored> recommend(const Model& model, std::int64_t user, int n, const std::vector<char>* allowed) {
    if (user < 0 || user >= model.users()) throw Error("recommend: user index out of range");
    std::vector<char> seen(static_cast<std::size_t>(model.items()), 0);
    for (std::int64_t e = model.seen.indptr[user]; e < model.seen.indptr[user + 1]; ++e) seen[std::size_t(model.seen.indices[e])] = 1;
    std::vector<Scored> all;
    for (std::int64_t i = 0; i < model.items(); ++i) {
        if (seen[std::size_t(i)] || (allowed && !(*allowed)[std::size_t(i)])) continue;
        all.push_back({i, model.score(user, i)});
    }
    return top_n(std::move(all), n);
}

std::vector<Scored> similar_items(const Model& model, std::int64_t item, int n) {
    if (item < 0 || item >= model.items()) throw Error("similar: item index out of range");
    const int f = model.hyper.factors, w = model.width();
    auto norm = [&](std::int64_t i) {
        double s = 0;
        for (int j = 0; j < f; ++j) s += double(model.item_factors[std::size_t(i * w + j)]) * model.item_factors[std::size_t(i * w + j)];
        return std::sqrt(s);
    };
    const double self = norm(item);
    std::vector<Scored> all;
    for (std::int64_t i = 0; i < model.items(); ++i) {
        if (i == item) continue;
        double dot = 0;
        for (int j = 0; j < f; ++j) dot += double(model.item_factors[std::size_t(i * w + j)]) * model.item_factors[std::size_t(item * w + j)];
        const double d = self * norm(i);
        all.push_back({i, float(d > 0 ? dot / d : 0)});
    }
    return top_n(std::move(all), n);
}

std::int64_t find_id(const std::vector<std::string>& ids, const std::string& id, const char* side, const std::string& where) {
    const auto it = std::find(ids.begin(), ids.end(), id);
    if (it == ids.end()) throw Error(std::string(side) + " '" + id + "' is not in " + where);
    return std::int64_t(it - ids.begin());
}

// ---- model file ----------------------------------------------------------------------------------

namespace {
constexpr const char* model_format_tag = "als-model";
constexpr std::int64_t model_format_version = 1;

// Splits rows x width into factors (rows x k) and the bias column.
void write_side(h5::File& f, const std::string& side, const std::vector<float>& v, std::int64_t rows, int k, bool biases) {
    if (!biases) {  // the rows are the factors: written as they are, without a copy
        f.write("/" + side + "/factors", v.data(), h5::Shape{std::uint64_t(rows), std::uint64_t(k)}, false);
        return;
    }
    const int w = k + 1;
    std::vector<float> factors(static_cast<std::size_t>(rows * k)), bias;
    for (std::int64_t r = 0; r < rows; ++r) std::copy_n(&v[std::size_t(r * w)], k, &factors[std::size_t(r * k)]);
    // Uncompressed, as the ratings files: deflate of 20 M seen entries and the factors cost seconds of
    // every `als train` (level 4, one core) and saves little on float factors and sorted indices.
    f.write("/" + side + "/factors", factors.data(), h5::Shape{std::uint64_t(rows), std::uint64_t(k)}, false);
    for (std::int64_t r = 0; r < rows; ++r) bias.push_back(v[std::size_t(r * w + k)]);
    f.write("/" + side + "/bias", bias);
}
std::vector<float> read_side(const h5::File& f, const std::string& side, std::int64_t rows, int k, bool biases) {
    const int w = k + (biases ? 1 : 0);
    const auto factors = f.read_exact<float>("/" + side + "/factors", h5::Shape{std::uint64_t(rows), std::uint64_t(k)});
    std::vector<float> bias;
    if (biases) bias = f.read_exact<float>("/" + side + "/bias", h5::Shape{std::uint64_t(rows)});
    std::vector<float> v(static_cast<std::size_t>(rows * w));
    for (std::int64_t r = 0; r < rows; ++r) {
        std::copy_n(&factors[std::size_t(r * k)], k, &v[std::size_t(r * w)]);
        if (biases) v[std::size_t(r * w + k)] = bias[std::size_t(r)];
    }
    for (float x : v)
        if (!std::isfinite(x)) throw Error(f.path() + ": /" + side + "/factors: holds a non-finite value");
    return v;
}
}  // namespace

void write_model(const std::string& path, const Model& m, bool force, const std::vector<std::string>& inputs) {
    h5::File f = h5::File::create(path, force ? h5::Existing::replace : h5::Existing::refuse, inputs);
    const Hyper& h = m.hyper;
    f.set_attribute("/", "format", model_format_tag);
    f.set_attribute("/", "version", model_format_version);
    f.set_attribute("/", "feedback", to_string(h.feedback));
    f.set_attribute("/", "factors", std::int64_t(h.factors));
    f.set_attribute("/", "iterations", std::int64_t(m.iterations_done));
    f.set_attribute("/", "lambda", double(h.lambda));
    f.set_attribute("/", "alpha", double(h.alpha));
    f.set_attribute("/", "weighting", to_string(h.weighting));
    f.set_attribute("/", "log_epsilon", double(h.log_epsilon));
    f.set_attribute("/", "bm25_k1", double(h.bm25_k1));
    f.set_attribute("/", "bm25_b", double(h.bm25_b));
    f.set_attribute("/", "biases", std::int64_t(h.biases));
    f.set_attribute("/", "seed", std::to_string(h.seed));
    f.set_attribute("/", "global_mean", double(m.global_mean));
    f.set_attribute("/", "rating_min", double(m.rating_min));
    f.set_attribute("/", "rating_max", double(m.rating_max));
    f.set_attribute("/", "backend", m.backend);
    f.set_attribute("/", "device", m.device);
    f.set_attribute("/", "command", m.command_line);
    f.set_attribute("/", "train_provenance", m.train_provenance);
    f.write_strings("/users/ids", m.user_ids);
    f.write_strings("/items/ids", m.item_ids);
    write_side(f, "users", m.user_factors, m.users(), h.factors, h.biases);
    write_side(f, "items", m.item_factors, m.items(), h.factors, h.biases);
    f.write("/seen/indptr", m.seen.indptr.data(), h5::Shape{m.seen.indptr.size()}, false);
    f.write("/seen/indices", m.seen.indices.data(), h5::Shape{m.seen.indices.size()}, false);
    std::vector<double> iteration, build, solve, loss, metric;
    for (const auto& l : m.history) {
        iteration.push_back(l.iteration), build.push_back(l.build_s), solve.push_back(l.solve_s);
        loss.push_back(l.loss), metric.push_back(l.test_metric);
    }
    f.write("/history/iteration", iteration);
    f.write("/history/build_seconds", build);
    f.write("/history/solve_seconds", solve);
    f.write("/history/loss", loss);
    f.write("/history/test_metric", metric);
    f.commit();
}

// The most iterations a model file may say it has done (far beyond any real run).
constexpr std::int64_t kMaxIterationsDone = 1 << 30;

Model read_model(const std::string& path) {
    try {
        h5::File f = h5::File::open(path);
        if (!f.has_attribute("/", "format") || f.string_attribute("/", "format") != model_format_tag)
            throw Error(path + ": /: not an ALS model file (attribute format != '" + std::string(model_format_tag) + "')");
        if (f.int_attribute("/", "version") != model_format_version)
            throw Error(path + ": /: model format version " + std::to_string(f.int_attribute("/", "version")) + " is not supported");
        Model m;
        Hyper& h = m.hyper;
        h.feedback = parse_feedback(f.string_attribute("/", "feedback"));
        const std::int64_t k = f.int_attribute("/", "factors");
        if (k < 1 || k > 1024) throw Error(path + ": /: factors = " + std::to_string(k) + " outside [1, 1024]");
        h.factors = int(k);
        // Bounded so that a resumed run's iteration numbers (iterations_done + k) cannot overflow int.
        const std::int64_t done = f.int_attribute("/", "iterations");
        if (done < 0 || done > kMaxIterationsDone)
            throw Error(path + ": /: iterations = " + std::to_string(done) + " outside [0, " + std::to_string(kMaxIterationsDone) + "]");
        m.iterations_done = int(done);
        h.iterations = m.iterations_done;
        h.lambda = float(f.double_attribute("/", "lambda"));
        h.alpha = float(f.double_attribute("/", "alpha"));
        h.weighting = parse_weighting(f.string_attribute("/", "weighting"));
        h.log_epsilon = float(f.double_attribute("/", "log_epsilon"));
        h.bm25_k1 = float(f.double_attribute("/", "bm25_k1"));
        h.bm25_b = float(f.double_attribute("/", "bm25_b"));
        h.biases = f.int_attribute("/", "biases") != 0;
        m.global_mean = float(f.double_attribute("/", "global_mean"));
        m.rating_min = float(f.double_attribute("/", "rating_min"));
        m.rating_max = float(f.double_attribute("/", "rating_max"));
        m.backend = f.string_attribute("/", "backend");
        m.device = f.string_attribute("/", "device");
        m.command_line = f.string_attribute("/", "command");
        m.train_provenance = f.string_attribute("/", "train_provenance");
        m.user_ids = f.read_strings("/users/ids");
        m.item_ids = f.read_strings("/items/ids");
        if (m.user_ids.size() > std::size_t(INT32_MAX) || m.item_ids.size() > std::size_t(INT32_MAX))
            throw Error(path + ": /users/ids: more than 2^31 - 1 ids");
        m.user_factors = read_side(f, "users", m.users(), h.factors, h.biases);
        m.item_factors = read_side(f, "items", m.items(), h.factors, h.biases);
        Csr& s = m.seen;
        s.rows = m.users(), s.cols = m.items();
        s.indptr = f.read_exact<std::int64_t>("/seen/indptr", h5::Shape{std::uint64_t(m.users() + 1)});
        s.indices = f.read<std::int32_t>("/seen/indices");
        if (s.indptr[0] != 0 || s.indptr.back() != s.nnz()) throw Error(path + ": /seen/indptr: does not span /seen/indices");
        // All of indptr before any row is walked: with indptr[0] = 0 and the last entry = nnz, a middle
        // entry above nnz (a later one then going back down) would walk past the end of /seen/indices.
        for (std::int64_t u = 0; u < s.rows; ++u)
            if (s.indptr[u + 1] < s.indptr[u]) throw Error(path + ": /seen/indptr: decreases at row " + std::to_string(u));
        for (std::int64_t u = 0; u < s.rows; ++u) {
            for (std::int64_t e = s.indptr[u]; e < s.indptr[u + 1]; ++e)
                if (s.indices[e] < 0 || s.indices[e] >= s.cols) throw Error(path + ": /seen/indices: entry " + std::to_string(e) + " out of range");
        }
        if (f.exists("/history/iteration")) {
            const auto it = f.read<double>("/history/iteration"), b = f.read<double>("/history/build_seconds"),
                       so = f.read<double>("/history/solve_seconds"), lo = f.read<double>("/history/loss"),
                       me = f.read<double>("/history/test_metric");
            if (b.size() != it.size() || so.size() != it.size() || lo.size() != it.size() || me.size() != it.size())
                throw Error(path + ": /history: datasets of different lengths");
            for (std::size_t j = 0; j < it.size(); ++j) {
                // int() of a value outside int's range is undefined (UBSan under fuzz_als_model, a crafted 1e300).
                if (!(it[j] >= 0 && it[j] <= double(kMaxIterationsDone)))
                    throw Error(path + ": /history/iteration: entry " + std::to_string(j) + " is not an iteration number");
                m.history.push_back({int(it[j]), b[j], so[j], lo[j], me[j], 0});
            }
        }
        return m;
    } catch (const batchsolve::io::FileError& e) {
        throw Error(e.what());
    }
}

}  // namespace als
