// The MPI ranks of a distributed training, as train() and main() see them: one partition per rank,
// every rank reading the same ratings file and holding on its device only its own rows' ratings.
// ranks_mpi.cpp implements it with batchsolve::mpi (deadlines on every collective); ranks_none.cpp
// stands in for a build without MPI.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "engine.hpp"

namespace als {

class RankGroup {
public:
    virtual ~RankGroup() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual int local_rank() const = 0;  // rank among the ranks of this node (the GPU to take)
    // The exchange of this rank's partition; device_memory: the CUDA engine's memory, staged through the host.
    virtual std::unique_ptr<Exchange> make_exchange(bool device_memory) = 0;
    virtual std::int64_t sum(std::int64_t value, const char* what) = 0;
    // Every rank says whether its step succeeded; if any failed, every rank throws an error naming it.
    virtual void agree(bool ok, const std::string& message, const char* step) = 0;
    // Test hook (BATCHSOLVE_MPI_FAULT="<rank>:fail|hang"), see batchsolve_mpi.hpp.
    virtual void fault_point(const char* where) = 0;
    // True for errors every rank raised together (agree()): each can exit normally. Any other error
    // on one rank must end the job (abort_job), or the other ranks would wait for it.
    virtual bool is_agreed_failure(const std::exception& e) const = 0;
    [[noreturn]] virtual void abort_job(int exit_code) = 0;
};

// This rank's engine (CPU, or CUDA on settings.device) for its partition of users and items, with an
// MPI exchange; the failed-system counts it reports are summed over the ranks.
std::unique_ptr<Engine> make_rank_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings, bool cuda,
                                         RankGroup& ranks);

// Starts MPI when an MPI launcher started this process (mpirun -np N als ...) and returns the group;
// nullptr otherwise (one process, no MPI). A build without MPI started by mpirun with N > 1 throws
// Error instead of training N times side by side.
std::unique_ptr<RankGroup> start_ranks(int* argc, char*** argv);

}  // namespace als
