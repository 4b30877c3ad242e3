// Training over several devices of one process: the exchange through host memory (CPU members, or
// GPUs when NCCL is absent) and the engine that runs one partition per device, one host thread each.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include "engine.hpp"
#include "exchange_nccl.hpp"

namespace als {

namespace {

// What the partitions of one process share: a barrier that can be broken (a partition that failed
// breaks it, so the others throw instead of waiting) and one staging slot per partition.
class HostGroup {
public:
    explicit HostGroup(int parts) : parts_(parts), slots_(static_cast<std::size_t>(parts)) {}

    void barrier() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (broken_) throw Error("another device failed: " + why_);
        const long generation = generation_;
        if (++arrived_ == parts_) {
            arrived_ = 0, ++generation_;
            cv_.notify_all();
            return;
        }
        cv_.wait(lock, [&] { return generation_ != generation || broken_; });
        if (broken_ && generation_ == generation) throw Error("another device failed: " + why_);
    }
    void abort(const std::string& why) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!broken_) broken_ = true, why_ = why;
        cv_.notify_all();
    }
    std::vector<float>& slot(int p) { return slots_[std::size_t(p)]; }
    int parts() const { return parts_; }

private:
    int parts_;
    std::vector<std::vector<float>> slots_;
    std::mutex mutex_;
    std::condition_variable cv_;
    int arrived_ = 0;
    long generation_ = 0;
    bool broken_ = false;
    std::string why_;
};

// Sums and row exchanges through the host: each partition puts its part in its slot, waits for the
// others, and reads theirs. Sums add the slots in partition order, so every partition gets the same
// bits. Device memory (GPUs without NCCL) is staged through the host on the engine's stream.
class HostExchange final : public Exchange {
public:
    HostExchange(HostGroup& group, int index, bool device_memory) : group_(group), index_(index), device_(device_memory) {}

    void allreduce_sum(float* data, std::size_t n, void* stream) override {
        std::vector<float>& mine = group_.slot(index_);
        mine.resize(n);
        engine_copy_to_host(mine.data(), data, n * sizeof(float), device_, stream);
        group_.barrier();
        sum_.assign(n, 0.f);
        for (int p = 0; p < group_.parts(); ++p) {
            const std::vector<float>& part = group_.slot(p);
            for (std::size_t e = 0; e < n; ++e) sum_[e] += part[e];
        }
        group_.barrier();  // every partition has read every slot before any slot is reused
        engine_copy_from_host(data, sum_.data(), n * sizeof(float), device_, stream);
    }

    void allgather_rows(float* factors, const std::vector<RowRange>& ranges, int width, void* stream) override {
        const RowRange own = ranges[std::size_t(index_)];
        std::vector<float>& mine = group_.slot(index_);
        mine.resize(std::size_t(own.count) * std::size_t(width));
        engine_copy_to_host(mine.data(), factors + own.first * width, mine.size() * sizeof(float), device_, stream);
        group_.barrier();
        for (int p = 0; p < group_.parts(); ++p) {
            if (p == index_) continue;
            const RowRange r = ranges[std::size_t(p)];
            engine_copy_from_host(factors + r.first * width, group_.slot(p).data(),
                                  std::size_t(r.count) * std::size_t(width) * sizeof(float), device_, stream);
        }
        group_.barrier();
    }
    void abort(const std::string& why) override { group_.abort(why); }
    std::string name() const override { return device_ ? "host memory (NCCL not found)" : "host memory"; }

private:
    HostGroup& group_;
    int index_;
    bool device_;
    std::vector<float> sum_;
};

class MultiDeviceEngine final : public Engine {
public:
    MultiDeviceEngine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings, bool cuda,
                      const std::vector<int>& devices, bool nccl)
        : devices_(devices) {
        const int parts = int(devices.size());
        const auto users = partition_rows(by_user, parts, settings.width);
        const auto items = partition_rows(by_item, parts, settings.width);
        if (nccl) exchanges_ = make_nccl_exchanges(devices);
        if (exchanges_.empty()) {
            group_ = std::make_unique<HostGroup>(parts);
            for (int p = 0; p < parts; ++p) exchanges_.push_back(std::make_unique<HostExchange>(*group_, p, cuda));
        }
        partitions_.resize(std::size_t(parts));
        for (int p = 0; p < parts; ++p) {
            Partition& part = partitions_[std::size_t(p)];
            part.index = p, part.users = users, part.items = items, part.exchange = exchanges_[std::size_t(p)].get();
            EngineSettings s = settings;
            s.device = devices[std::size_t(p)];
            engines_.push_back(cuda ? make_cuda_engine(by_user, by_item, s, &part) : make_cpu_engine(by_user, by_item, s, &part));
        }
    }

    void set_factors(const std::vector<float>& users, const std::vector<float>& items) override {
        for (auto& e : engines_) e->set_factors(users, items);
    }
    // After an all-gather every partition holds every row: the first one's copy is the result.
    void get_factors(std::vector<float>& users, std::vector<float>& items) override { engines_.front()->get_factors(users, items); }
    HalfTiming solve_users() override { return on_every_device([](Engine& e) { return e.solve_users(); }); }
    HalfTiming solve_items() override { return on_every_device([](Engine& e) { return e.solve_items(); }); }
    std::string device() const override {
        std::string ids;
        for (std::size_t i = 0; i < devices_.size(); ++i) ids += (i ? "," : "") + std::to_string(devices_[i]);
        return std::to_string(devices_.size()) + " x " + engines_.front()->device() + " (devices " + ids + "; exchange " +
               exchanges_.front()->name() + ")";
    }
    std::uint64_t peak_device_bytes() const override {
        std::uint64_t peak = 0;
        for (const auto& e : engines_) peak = std::max(peak, e->peak_device_bytes());
        return peak;
    }

private:
    // One host thread per partition; times are the slowest partition's, failures the sum. A partition
    // that throws aborts the exchange, so that the others throw too instead of waiting for it.
    template <class F>
    HalfTiming on_every_device(F&& half) {
        const std::size_t n = engines_.size();
        std::vector<HalfTiming> timings(n);
        std::vector<std::exception_ptr> errors(n);
        std::vector<std::thread> threads;
        // Fault injection for the tests: ALS_FAULT_PARTITION=<p> makes partition p throw at the start
        // of every half-iteration (after the others may have started theirs).
        const char* fault = std::getenv("ALS_FAULT_PARTITION");
        const long faulty = fault ? std::strtol(fault, nullptr, 10) : -1;
        for (std::size_t p = 0; p < n; ++p)
            threads.emplace_back([&, p] {
                try {
                    if (long(p) == faulty) throw Error("injected failure (ALS_FAULT_PARTITION=" + std::string(fault) + ")");
                    timings[p] = half(*engines_[p]);
                } catch (const std::exception& e) {
                    errors[p] = std::current_exception();
                    for (auto& x : exchanges_) x->abort("device " + std::to_string(devices_[p]) + ": " + e.what());
                }
            });
        for (auto& t : threads) t.join();
        for (std::size_t p = 0; p < n; ++p)
            if (errors[p]) {
                try {
                    std::rethrow_exception(errors[p]);
                } catch (const std::exception& e) {
                    // The first failure is the cause; the others only report that a device failed.
                    if (std::string(e.what()).rfind("another device failed", 0) == 0) continue;
                    throw Error("device " + std::to_string(devices_[p]) + ": " + e.what());
                }
            }
        for (std::size_t p = 0; p < n; ++p)
            if (errors[p]) std::rethrow_exception(errors[p]);
        HalfTiming t;
        for (std::size_t p = 0; p < timings.size(); ++p) {
            const HalfTiming& x = timings[p];
            t.build_s = std::max(t.build_s, x.build_s), t.solve_s = std::max(t.solve_s, x.solve_s), t.gram_s = std::max(t.gram_s, x.gram_s);
            t.exchange_s = std::max(t.exchange_s, x.exchange_s), t.failed += x.failed;
            // The least any partition hid: the slowest partition's builds and solves are not credited more.
            t.overlap_s = p == 0 ? x.overlap_s : std::min(t.overlap_s, x.overlap_s);
        }
        return t;
    }

    std::vector<int> devices_;
    std::unique_ptr<HostGroup> group_;
    std::vector<std::unique_ptr<Exchange>> exchanges_;
    std::vector<Partition> partitions_;  // the engines keep copies; these are what they were given
    std::vector<std::unique_ptr<Engine>> engines_;
};

}  // namespace

std::unique_ptr<Engine> make_multi_device_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings,
                                                 bool cuda, const std::vector<int>& devices) {
    if (devices.empty()) throw Error("--devices: at least one device");
    // A GPU named twice runs two partitions (NCCL wants distinct devices: they exchange through the
    // host then), which tests the partitioned path on a machine with one GPU.
    bool repeats = false;
    if (cuda) {
        const int n = cuda_device_count();
        for (std::size_t i = 0; i < devices.size(); ++i) {
            if (devices[i] < 0 || devices[i] >= n)
                throw Error("--devices: device " + std::to_string(devices[i]) + " does not exist (" + std::to_string(n) + " CUDA devices)");
            for (std::size_t j = 0; j < i; ++j) repeats = repeats || devices[j] == devices[i];
        }
    }
    // ALS_EXCHANGE=host keeps NCCL out (diagnosis, or a machine whose NCCL misbehaves).
    const char* exchange = std::getenv("ALS_EXCHANGE");
    const bool host_only = exchange != nullptr && std::string(exchange) == "host";
    return std::make_unique<MultiDeviceEngine>(by_user, by_item, settings, cuda, devices, cuda && !repeats && !host_only);
}

}  // namespace als

// ---- MPI ranks -----------------------------------------------------------------------------------

#include "ranks.hpp"

namespace als {

namespace {

// This rank's engine plus what every rank must agree on: the failed systems of all partitions, and
// the fault-injection point of the tests at the start of each half-iteration.
class RankEngine final : public Engine {
public:
    RankEngine(std::unique_ptr<Exchange> exchange, std::unique_ptr<Engine> local, RankGroup& ranks)
        : exchange_(std::move(exchange)), local_(std::move(local)), ranks_(ranks) {}
    void set_factors(const std::vector<float>& users, const std::vector<float>& items) override { local_->set_factors(users, items); }
    void get_factors(std::vector<float>& users, std::vector<float>& items) override { local_->get_factors(users, items); }
    HalfTiming solve_users() override { return summed(local_solve(true)); }
    HalfTiming solve_items() override { return summed(local_solve(false)); }
    std::string device() const override {
        return local_->device() + " on each of " + std::to_string(ranks_.size()) + " MPI ranks (exchange " + exchange_->name() + ")";
    }
    std::uint64_t peak_device_bytes() const override { return local_->peak_device_bytes(); }

private:
    HalfTiming local_solve(bool users) {
        ranks_.fault_point(users ? "the users' half-iteration" : "the items' half-iteration");
        return users ? local_->solve_users() : local_->solve_items();
    }
    HalfTiming summed(HalfTiming t) {
        t.failed = ranks_.sum(t.failed, "the failed-system count");
        return t;
    }
    std::unique_ptr<Exchange> exchange_;  // before local_: the engine refers to it until it is gone
    std::unique_ptr<Engine> local_;
    RankGroup& ranks_;
};

}  // namespace

std::unique_ptr<Engine> make_rank_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings, bool cuda,
                                         RankGroup& ranks) {
    Partition part;
    part.index = ranks.rank();
    part.users = partition_rows(by_user, ranks.size(), settings.width);
    part.items = partition_rows(by_item, ranks.size(), settings.width);
    auto exchange = ranks.make_exchange(cuda);
    part.exchange = exchange.get();
    auto local = cuda ? make_cuda_engine(by_user, by_item, settings, &part) : make_cpu_engine(by_user, by_item, settings, &part);
    return std::make_unique<RankEngine>(std::move(exchange), std::move(local), ranks);
}

}  // namespace als
