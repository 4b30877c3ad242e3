// ALS models: hyperparameters, training (explicit ALS-WR and implicit Hu-Koren-Volinsky), the
// evaluation metrics with their baselines, recommendations, and the HDF5 model file.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "engine.hpp"
#include "ranks.hpp"
#include "ratings.hpp"

namespace als {

// Implicit confidence c = 1 + alpha * f(r): f(r) = r (none), log(1 + r / log_epsilon) (log), or the
// BM25 weight of the entry (bm25, items as terms and users as documents, as `implicit` does).
enum class Weighting { none, log, bm25 };
Weighting parse_weighting(const std::string& text);
const char* to_string(Weighting w);

struct Hyper {
    Feedback feedback = Feedback::implicit_counts;
    int factors = 64;
    int iterations = 15;
    float lambda = 0.01f;
    float alpha = 1.f;
    Weighting weighting = Weighting::none;
    float log_epsilon = 1.f;
    float bm25_k1 = 100.f, bm25_b = 0.8f;  // `implicit`'s bm25_weight defaults
    bool biases = false;                   // explicit only: user and item biases beside the global mean
    std::uint64_t seed = 1;
    float init_scale = 0.01f;              // initial factors uniform in [0, init_scale) (as `implicit`)
};

struct IterationLog {
    int iteration = 0;
    double build_s = 0, solve_s = 0;
    double loss = 0;         // NaN where not computed
    double test_metric = 0;  // RMSE (explicit) or P@10 (implicit) on the test set; NaN without one
    std::int64_t failed = 0; // systems that were not positive definite
    double exchange_s = 0;   // distributed: time in the Gram all-reduce and factor all-gather
    double gram_s = 0;       // of build_s: the Gram matrices of both halves (CUDA engine)
    double users_build_s = 0, users_solve_s = 0;  // the users' half of build_s and solve_s
    double overlap_s = 0;    // of build_s + solve_s, the time builds and solves ran at once (CUDA, overlap on)
};

struct Model {
    Hyper hyper;
    float global_mean = 0;  // explicit with biases: subtracted before fitting
    std::vector<std::string> user_ids, item_ids;
    std::vector<float> user_factors, item_factors;  // rows x width(), bias in the last column with biases
    Csr seen;                // training interactions by user (values unused): excluded from recommendations
    float rating_min = 0, rating_max = 0;  // explicit: predictions are clamped to the training range
    int iterations_done = 0;
    std::vector<IterationLog> history;
    std::string backend, device, command_line, train_provenance;
    std::uint64_t peak_device_bytes = 0;  // GPU memory in use at its peak during training (0 on the CPU)
    std::string engine_notes;  // Engine::notes() at the end of training (for the log; not stored)
    std::string partition_plan;           // when device memory was planned: PartitionPlan::describe()

    int width() const { return hyper.factors + (hyper.biases ? 1 : 0); }
    std::int64_t users() const { return std::int64_t(user_ids.size()); }
    std::int64_t items() const { return std::int64_t(item_ids.size()); }
    float predict(std::int64_t user, std::int64_t item) const;  // explicit rating
    float score(std::int64_t user, std::int64_t item) const;    // x_u . y_i (ranking score)
};

// ---- training ------------------------------------------------------------------------------------

struct TrainOptions {
    std::string backend = "auto";  // auto | cpu | cuda
    SystemLayout layout = SystemLayout::column_major;
    int chunk_size = 32;
    std::uint64_t slice_bytes = 0;   // 0: the engine's default
    BuildKernel build = BuildKernel::tf32x3_blocked;  // the CUDA engine's accumulation of the systems
    GramKernel gram = GramKernel::split;      // the CUDA engine's implicit Gram matrix
    SolveKernel solve_kernel = SolveKernel::automatic;  // the CUDA engine's solver of the built systems (auto: by width)
    bool overlap = false;                     // the CUDA engine builds the next slice while one is solved
    bool builds_first = false;                // ... its builds' stream at the greatest priority
    Solver solver = Solver::exact;            // exact (posv) or cg (CPU engine)
    int cg_steps = 3;
    // The CUDA engine's set-up, started beside the reading of the ratings (start_cuda_warmup with this
    // width, layout and slice and the file's user and item counts); used by a single CUDA engine.
    std::shared_ptr<CudaWarmup> cuda_warmup;
    // When set, a single CUDA engine is released (its device memory freed) on a thread of its own once
    // the factors are back, and this future says when that is done: the caller writes the model
    // meanwhile and waits for it before it exits. Otherwise the engine is released before train returns.
    std::future<void>* engine_release = nullptr;
    // With engine_release: after the engine, the device's context is torn down too (cuda_release_device)
    // on that thread. Only for a process that uses the GPU no more and ends after writing the model.
    bool release_device = false;
    // Distributed training. devices: partitions of this process, one per device (CUDA device ids, or
    // CPU members with backend cpu); empty or one entry: one engine (on that device). ranks: MPI ranks,
    // one partition each (then devices picks this rank's GPU: devices[local rank % size], default the
    // local rank % visible GPUs). Results equal one engine's to rounding.
    std::vector<int> devices;
    RankGroup* ranks = nullptr;
    // Device memory, checked before any engine allocates: each partition's estimate
    // (memory_plan.hpp) against device_memory_bytes per device (0: the smallest free memory of the
    // devices for CUDA; no check for the CPU backend unless given). fit_partitions: train on the fewest
    // of `devices` whose partitions fit (one partition when it fits one device). A cap with the CPU
    // backend simulates devices of that size (how CI tests the partitioned path).
    std::uint64_t device_memory_bytes = 0;
    bool fit_partitions = false;
    bool compute_loss = true;
    int eval_every = 1;              // test metric every N iterations (0: never; needs a test set)
    // Called after each iteration (progress, printing); the log holds the iteration's numbers.
    std::function<void(const IterationLog&)> on_iteration;
    // Called once per start-up stage (name, wall seconds): the values prepared for both sides, the
    // engine set up (upload, kernels compiled or loaded), the first iteration; `als train` prints them.
    std::function<void(const char*, double)> on_stage;
};

// Trains `hyper.iterations` iterations on `train`, starting from `resume` when it is given (its
// factors, global mean, and iteration count; its ids must be those of `train`).
Model train(const Ratings& train, const Hyper& hyper, const TrainOptions& options, const Ratings* test = nullptr,
            const Model* resume = nullptr);
// The same on a set the caller hands over: its values are prepared in place and its arrays end in the
// model (no copies of 10^7-entry arrays); afterwards it holds no ratings. With options.compute_loss
// (the loss needs the raw values) it is read as the const form does.
Model train(Ratings&& train, const Hyper& hyper, const TrainOptions& options, const Ratings* test = nullptr,
            const Model* resume = nullptr);

// Every value finite (no NaN or Inf); all threads.
bool all_finite(const std::vector<float>& v);

// Objective of the current factors: implicit sum_all c (p - x.y)^2 + lambda (|X|^2 + |Y|^2), divided
// by users * items; explicit sum_obs (r - prediction)^2 + lambda sum (n_u |x_u|^2 + n_i |y_i|^2), divided
// by the number of ratings.
double training_loss(const Model& model, const Ratings& train);

// ---- evaluation ----------------------------------------------------------------------------------

struct ExplicitMetrics {
    double rmse = 0, mae = 0;
    std::int64_t count = 0;
};
struct RankingMetrics {
    double precision = 0, map = 0, ndcg = 0, auc = 0;
    std::int64_t users = 0;  // users with at least one test item
};

ExplicitMetrics evaluate_explicit(const Model& model, const Ratings& test);
// Top-k ranking metrics with the training items of each user excluded from the ranking, with the
// definitions of implicit.evaluation.ranking_metrics_at_k for precision, MAP and NDCG (denominators
// min(k, test items)); AUC is the full one: the chance that a test item outranks a random item that
// is neither seen nor in the test set.
RankingMetrics evaluate_ranking(const Model& model, const Ratings& test, int k);

// Baselines: the global mean and damped user + item biases (explicit); item popularity (implicit).
ExplicitMetrics baseline_global_mean(const Ratings& train, const Ratings& test);
ExplicitMetrics baseline_biases(const Ratings& train, const Ratings& test, double damping = 10);
RankingMetrics baseline_popularity(const Ratings& train, const Ratings& test, int k);

// ---- recommendations -----------------------------------------------------------------------------

struct Scored {
    std::int64_t index;
    float score;
};
// Top-n items for a user (index), seen items excluded, optionally only items with allowed[i] != 0.
std::vector<Scored> recommend(const Model& model, std::int64_t user, int n, const std::vector<char>* allowed = nullptr);
// The n items most similar to an item by the cosine of their factors (the item itself left out).
std::vector<Scored> similar_items(const Model& model, std::int64_t item, int n);
// Index of an original id, or an Error naming the id and the model file.
std::int64_t find_id(const std::vector<std::string>& ids, const std::string& id, const char* side, const std::string& where);

// ---- model file ----------------------------------------------------------------------------------

void write_model(const std::string& path, const Model& model, bool force, const std::vector<std::string>& inputs);
Model read_model(const std::string& path);

}  // namespace als
