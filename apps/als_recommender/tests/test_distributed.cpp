// Tests of distributed ALS (issue 30): the row partition, training over 1, 2 and 3 partitions of one
// process equal to one engine (CPU here and in CI; GPUs where present, two partitions on one GPU
// included), uneven partitions, partitions whose users have no ratings, failed systems counted the
// same, and a partition that fails reported instead of hanging. The MPI path: test_mpi.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "memory_plan.hpp"
#include "model.hpp"
#include "ratings.hpp"
#include "../../../libsolver/tests/test_seed.hpp"

using namespace als;

namespace {

constexpr double float_eps = std::numeric_limits<float>::epsilon();

using batchsolve::test::fresh_seed;  // libsolver/tests/test_seed.hpp: printed on failure, BATCHSOLVE_TEST_SEED replays

// ||x - y|| / ||y|| over both factor matrices.
double relative_difference(const Model& x, const Model& y) {
    double d = 0, n = 0;
    for (auto side : {&Model::user_factors, &Model::item_factors}) {
        const auto& a = x.*side;
        const auto& b = y.*side;
        EXPECT_EQ(a.size(), b.size());
        for (std::size_t e = 0; e < std::min(a.size(), b.size()); ++e)
            d += std::pow(double(a[e]) - b[e], 2), n += std::pow(double(b[e]), 2);
    }
    return n > 0 ? std::sqrt(d / n) : std::sqrt(d);
}

// Ratings whose last `empty_users` users have no ratings at all (they then fill whole partitions).
Ratings with_empty_users(const Ratings& r, std::int64_t empty_users, Feedback feedback) {
    std::vector<std::int32_t> us, is;
    std::vector<float> vs;
    for (std::int64_t u = 0; u < r.users(); ++u)
        for (std::int64_t e = r.by_user.indptr[u]; e < r.by_user.indptr[u + 1]; ++e)
            us.push_back(std::int32_t(u)), is.push_back(r.by_user.indices[e]), vs.push_back(r.by_user.values[e]);
    std::vector<std::string> users = r.user_ids;
    for (std::int64_t k = 0; k < empty_users; ++k) users.push_back("empty" + std::to_string(k));
    return from_triplets(feedback, users, r.item_ids, us, is, vs, "test set with empty users");
}

// ---- partition_rows ----------------------------------------------------------------------------

TEST(Partition, RangesCoverTheRowsInOrderWithBalancedWork) {
    GenerateOptions g;
    g.users = 2001, g.items = 700, g.interactions = 40000, g.seed = fresh_seed();
    const Ratings r = generate(g);
    for (int parts : {1, 2, 3, 7}) {
        const auto ranges = partition_rows(r.by_user, parts, 32);
        ASSERT_EQ(ranges.size(), std::size_t(parts));
        std::int64_t next = 0;
        double worst = 0;
        const double per_row = 32.0 / 3.0, total = double(r.nnz()) + per_row * double(r.users());
        for (const RowRange& x : ranges) {
            EXPECT_EQ(x.first, next);
            next += x.count;
            const double work = double(r.by_user.indptr[x.first + x.count] - r.by_user.indptr[x.first]) + per_row * double(x.count);
            worst = std::max(worst, work / (total / parts));
        }
        EXPECT_EQ(next, r.users());
        EXPECT_LT(worst, 1.05) << parts << " parts: the heaviest part does more than 5% over its share";
    }
    // More parts than rows: the extra parts are empty, nothing is lost.
    Csr tiny;
    tiny.rows = 2, tiny.cols = 3, tiny.indptr = {0, 1, 3}, tiny.indices = {0, 1, 2}, tiny.values = {1, 1, 1};
    const auto ranges = partition_rows(tiny, 5, 4);
    std::int64_t covered = 0;
    for (const RowRange& x : ranges) covered += x.count;
    EXPECT_EQ(covered, 2);
}

// ---- training over partitions of one process ------------------------------------------------------

Model train_on(const Ratings& r, const Hyper& h, const std::string& backend, std::vector<int> devices) {
    TrainOptions o;
    o.backend = backend, o.devices = std::move(devices);
    return train(r, h, o);
}

TEST(MultiDevice, CpuPartitionsEqualOneEngineImplicitAndExplicit) {
    const auto seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " (BATCHSOLVE_TEST_SEED)");
    GenerateOptions g;
    g.users = 1500, g.items = 800, g.interactions = 30000, g.seed = seed;
    for (Feedback f : {Feedback::implicit_counts, Feedback::explicit_ratings}) {
        g.feedback = f;
        const Ratings r = generate(g);
        Hyper h;
        h.feedback = f, h.factors = 12, h.iterations = 4, h.lambda = f == Feedback::implicit_counts ? 0.1f : 0.05f;
        h.biases = f == Feedback::explicit_ratings, h.seed = seed;
        const Model one = train_on(r, h, "cpu", {});
        for (std::vector<int> devices : {std::vector<int>{0}, {0, 1}, {0, 1, 2}}) {
            const Model many = train_on(r, h, "cpu", devices);
            // Only the Gram matrix's summation order differs: rounding, amplified by the systems'
            // condition number over the iterations (measured: about 1e-6).
            EXPECT_LT(relative_difference(many, one), 1e3 * float_eps) << devices.size() << " partitions, " << to_string(f);
            EXPECT_NEAR(many.history.back().loss, one.history.back().loss, 1e-4 * std::abs(one.history.back().loss));
            if (devices.size() > 1) {
                EXPECT_NE(many.device.find("exchange host memory"), std::string::npos) << many.device;
            }
        }
    }
}

TEST(MultiDevice, PartitionsOfUsersWithoutRatingsAndFailedSystemsCountedTheSame) {
    const auto seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " (BATCHSOLVE_TEST_SEED)");
    GenerateOptions g;
    g.users = 300, g.items = 200, g.interactions = 6000, g.feedback = Feedback::explicit_ratings, g.seed = seed;
    // 300 users with ratings, then 3000 without: of 4 partitions of equal work the last holds only
    // users without ratings (a rank with nothing to learn from), the third a few rated and many empty.
    const Ratings r = with_empty_users(generate(g), 3000, Feedback::explicit_ratings);
    const auto parts = partition_rows(r.by_user, 4, 6);
    ASSERT_GE(parts[3].first, 300) << "test bug: the last partition holds rated users";
    Hyper h;
    h.feedback = Feedback::explicit_ratings, h.factors = 6, h.iterations = 3, h.lambda = 0.05f, h.seed = seed;
    const Model one = train_on(r, h, "cpu", {});
    const Model four = train_on(r, h, "cpu", {0, 1, 2, 3});
    EXPECT_LT(relative_difference(four, one), 1e3 * float_eps);
    for (std::int64_t u = 300; u < r.users(); ++u)
        for (int j = 0; j < four.width(); ++j) ASSERT_EQ(four.user_factors[std::size_t(u * four.width() + j)], 0.f);
    // lambda = 0: every empty user's system is zero, not positive definite: counted, row set to 0.
    h.lambda = 0;
    const Model one0 = train_on(r, h, "cpu", {});
    const Model four0 = train_on(r, h, "cpu", {0, 1, 2, 3});
    ASSERT_EQ(one0.history.size(), four0.history.size());
    for (std::size_t i = 0; i < one0.history.size(); ++i) {
        EXPECT_GE(one0.history[i].failed, 3000);
        EXPECT_EQ(four0.history[i].failed, one0.history[i].failed) << "iteration " << i + 1;
    }
}

TEST(MultiDevice, APartitionThatFailsStopsTheOthersWithItsMessage) {
    GenerateOptions g;
    g.users = 400, g.items = 300, g.interactions = 6000, g.seed = fresh_seed();
    const Ratings r = generate(g);
    Hyper h;
    h.factors = 8, h.iterations = 2, h.seed = 3;
    for (const char* faulty : {"0", "2"}) {
        setenv("ALS_FAULT_PARTITION", faulty, 1);
        try {
            train_on(r, h, "cpu", {0, 1, 2});
            ADD_FAILURE() << "no error with partition " << faulty << " failing";
        } catch (const std::exception& e) {
            // The cause, not "another device failed": the others were released from the exchange.
            EXPECT_NE(std::string(e.what()).find("device " + std::string(faulty) + ": injected failure"), std::string::npos) << e.what();
        }
        unsetenv("ALS_FAULT_PARTITION");
    }
}

TEST(MultiDevice, BadDeviceListsAreClearErrors) {
    GenerateOptions g;
    g.users = 50, g.items = 40, g.interactions = 500;
    const Ratings r = generate(g);
    Hyper h;
    h.factors = 4, h.iterations = 1;
    if (!cuda_engine_available()) {
        try {
            train_on(r, h, "cuda", {0, 1});
            ADD_FAILURE() << "no error";
        } catch (const std::exception& e) {
            EXPECT_FALSE(std::string(e.what()).empty());
        }
    } else {
        try {
            train_on(r, h, "cuda", {0, 99});
            ADD_FAILURE() << "no error";
        } catch (const std::exception& e) {
            EXPECT_NE(std::string(e.what()).find("device 99 does not exist"), std::string::npos) << e.what();
        }
    }
}

// ---- GPUs ----------------------------------------------------------------------------------------

// ---- device memory: partitions chosen from a per-device cap (memory_plan.hpp) ----------------------

// The engine settings train() uses on the CPU backend (1 GiB slices) for an implicit model of k factors.
EngineSettings cpu_settings(int factors) {
    EngineSettings es;
    es.width = factors, es.implicit = true, es.slice_bytes = std::uint64_t(1) << 30;
    return es;
}

std::uint64_t fullest(const PartitionPlan& p) { return *std::max_element(p.bytes.begin(), p.bytes.end()); }

TEST(MemoryPlan, ACapBetweenOneAndTwoPartitionsForcesTwoAndResultsEqualOnePartition) {
    const auto seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " (BATCHSOLVE_TEST_SEED)");
    GenerateOptions g;
    g.users = 1500, g.items = 800, g.interactions = 30000, g.seed = seed;
    const Ratings r = generate(g);
    Hyper h;
    h.factors = 12, h.iterations = 4, h.lambda = 0.1f, h.seed = seed;
    const EngineSettings es = cpu_settings(h.factors);
    const std::uint64_t unlimited = ~std::uint64_t(0);
    const std::uint64_t one = fullest(plan_partitions(r.by_user, r.by_item, es, 1, unlimited, false));
    const std::uint64_t two = fullest(plan_partitions(r.by_user, r.by_item, es, 2, unlimited, false));
    ASSERT_LT(two, one);  // half the ratings each; the factors of every row and the allowance are on both
    // A device between the two: one partition does not fit it, two do.
    TrainOptions o;
    o.backend = "cpu", o.devices = {0, 1, 2, 3}, o.fit_partitions = true, o.device_memory_bytes = (one + two) / 2;
    const Model capped = train(r, h, o);
    EXPECT_EQ(capped.partition_plan.rfind("2 partitions: ", 0), 0u) << capped.partition_plan;
    EXPECT_NE(capped.device.find("exchange host memory"), std::string::npos) << capped.device;
    const Model single = train_on(r, h, "cpu", {});
    // The bound of CpuPartitionsEqualOneEngineImplicitAndExplicit (only the Gram matrix's summation
    // order differs).
    EXPECT_LT(relative_difference(capped, single), 1e3 * float_eps);
    // Enough memory: one partition, whatever the device list.
    o.device_memory_bytes = one;
    EXPECT_EQ(train(r, h, o).partition_plan.rfind("1 partition: ", 0), 0u);
}

TEST(MemoryPlan, EvenAllTheDevicesTooSmallIsAClearErrorBeforeTraining) {
    GenerateOptions g;
    g.users = 600, g.items = 300, g.interactions = 8000, g.seed = 11;
    const Ratings r = generate(g);
    Hyper h;
    h.factors = 8, h.iterations = 1, h.seed = 3;
    const std::uint64_t two = fullest(plan_partitions(r.by_user, r.by_item, cpu_settings(h.factors), 2, ~std::uint64_t(0), false));
    TrainOptions o;
    o.backend = "cpu", o.devices = {0, 1}, o.fit_partitions = true, o.device_memory_bytes = two - 1;
    try {
        train(r, h, o);
        ADD_FAILURE() << "trained with partitions larger than the devices";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("do not fit 2 device(s)"), std::string::npos) << what;
        EXPECT_NE(what.find("each device has"), std::string::npos) << what;
    }
}

TEST(MemoryPlan, GeneratorIsSizedFromTheMemory) {
    GenerateOptions g;
    g.users = 1000, g.items = 400, g.interactions = 20000;
    for (std::uint64_t target : {std::uint64_t(300) << 20, std::uint64_t(2) << 30}) {
        const GenerateOptions sized = scale_to_memory(g, 32, target);
        EXPECT_EQ(sized.items, g.items);
        // users and interactions scaled by the same factor (rounded down to integers)
        EXPECT_NEAR(double(sized.interactions) / double(sized.users), double(g.interactions) / double(g.users), 0.01 * g.interactions / g.users);
        EngineSettings es;
        es.width = 32, es.slice_bytes = std::uint64_t(4) << 30;
        const double bytes = double(engine_bytes_for_shape(sized.users, sized.items, sized.interactions, es));
        EXPECT_NEAR(bytes / double(target), 1.0, 1e-3);
    }
    EXPECT_THROW(scale_to_memory(g, 32, std::uint64_t(100) << 20), Error);  // below the fixed 256 MiB allowance
    // The estimate of a generated set is the shape's (interactions are close to the request, not exact).
    g.seed = 5;
    const Ratings r = generate(g);
    const EngineSettings es = cpu_settings(16);
    EXPECT_EQ(engine_bytes(r.by_user, r.by_item, es), engine_bytes_for_shape(r.users(), r.items(), r.nnz(), es));
}

TEST(MultiDeviceGpu, TwoPartitionsOnOneGpuEqualOneEngine) {
    if (!cuda_engine_available()) GTEST_SKIP() << "skipped: no GPU";
    const auto seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " (BATCHSOLVE_TEST_SEED)");
    GenerateOptions g;
    g.users = 4000, g.items = 2000, g.interactions = 80000, g.seed = seed;
    const Ratings r = generate(g);
    Hyper h;
    h.factors = 32, h.iterations = 3, h.lambda = 0.1f, h.seed = seed;
    const Model one = train_on(r, h, "cuda", {});
    const Model two = train_on(r, h, "cuda", {0, 0});  // the partitioned engine, exchanging through the host
    EXPECT_NE(two.device.find("exchange host memory"), std::string::npos) << two.device;
    EXPECT_LT(relative_difference(two, one), 1e4 * float_eps);  // the GPU test's bound for CPU vs GPU (test_als.cpp)
}

TEST(MultiDeviceGpu, EveryGpuEqualsOneGpu) {
    if (!cuda_engine_available()) GTEST_SKIP() << "skipped: no GPU";
    if (cuda_device_count() < 2) GTEST_SKIP() << "skipped: needs 2 GPUs (" << cuda_device_count() << " here)";
    const auto seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " (BATCHSOLVE_TEST_SEED)");
    GenerateOptions g;
    g.users = 20000, g.items = 5000, g.interactions = 400000, g.seed = seed;
    const Ratings r = generate(g);
    std::vector<int> all(static_cast<std::size_t>(cuda_device_count()));
    std::iota(all.begin(), all.end(), 0);
    for (Feedback f : {Feedback::implicit_counts}) {
        Hyper h;
        h.feedback = f, h.factors = 64, h.iterations = 3, h.lambda = 0.1f, h.seed = seed;
        const Model one = train_on(r, h, "cuda", {});
        const Model many = train_on(r, h, "cuda", all);
        std::cout << "[          ] " << many.device << ": relative difference to one GPU " << relative_difference(many, one) << "\n";
        EXPECT_LT(relative_difference(many, one), 1e4 * float_eps);
    }
}

}  // namespace
