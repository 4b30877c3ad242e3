// RankGroup through batchsolve::mpi (ranks.hpp): host-staged exchanges with deadlines on every collective.
#include <cstdlib>
#include <vector>

#include "batchsolve_mpi.hpp"
#include "ranks.hpp"

namespace als {

namespace {

namespace bmpi = batchsolve::mpi;

// Gram matrix sums and row exchanges between ranks through host memory (CUDA engines stage their
// device memory on their stream; a CUDA-aware MPI is not assumed).
class MpiExchange final : public Exchange {
public:
    MpiExchange(bmpi::Communicator& comm, bool device_memory) : comm_(comm), device_(device_memory) {}
    void allreduce_sum(float* data, std::size_t n, void* stream) override {
        host_.resize(n);
        engine_copy_to_host(host_.data(), data, n * sizeof(float), device_, stream);
        comm_.allreduce_sum(host_.data(), n, "the Gram matrix all-reduce");
        engine_copy_from_host(data, host_.data(), n * sizeof(float), device_, stream);
    }
    void allgather_rows(float* factors, const std::vector<RowRange>& ranges, int width, void* stream) override {
        const RowRange own = ranges[std::size_t(comm_.rank())];
        const RowRange& last = ranges.back();
        host_.resize(std::size_t(last.first + last.count) * std::size_t(width));
        engine_copy_to_host(host_.data() + own.first * width, factors + own.first * width,
                            std::size_t(own.count) * std::size_t(width) * sizeof(float), device_, stream);
        std::vector<std::int64_t> first, count;
        for (const RowRange& r : ranges) first.push_back(r.first * width), count.push_back(r.count * width);
        comm_.allgatherv(host_.data(), first, count, "the factor all-gather");
        engine_copy_from_host(factors, host_.data(), host_.size() * sizeof(float), device_, stream);
    }
    std::string name() const override { return "MPI"; }

private:
    bmpi::Communicator& comm_;
    bool device_;
    std::vector<float> host_;
};

class MpiRankGroup final : public RankGroup {
public:
    MpiRankGroup(int* argc, char*** argv) : env_(argc, argv), comm_(), local_rank_(bmpi::local_rank(comm_)) {}
    int rank() const override { return comm_.rank(); }
    int size() const override { return comm_.size(); }
    int local_rank() const override { return local_rank_; }
    std::unique_ptr<Exchange> make_exchange(bool device_memory) override { return std::make_unique<MpiExchange>(comm_, device_memory); }
    std::int64_t sum(std::int64_t value, const char* what) override {
        comm_.allreduce_sum(&value, 1, what);
        return value;
    }
    void agree(bool ok, const std::string& message, const char* step) override { comm_.agree(ok, message, step); }
    void fault_point(const char* where) override { comm_.fault_point(where); }
    bool is_agreed_failure(const std::exception& e) const override { return dynamic_cast<const bmpi::RankFailure*>(&e) != nullptr; }
    void abort_job(int exit_code) override { bmpi::abort_job(exit_code); }

private:
    bmpi::Environment env_;
    bmpi::Communicator comm_;
    int local_rank_ = 0;
};

}  // namespace

std::unique_ptr<RankGroup> start_ranks(int* argc, char*** argv) {
    if (!bmpi::launched_by_mpirun()) return nullptr;
    return std::make_unique<MpiRankGroup>(argc, argv);
}

}  // namespace als
