// batchsolve::mpi: what a batched solve or an application needs of MPI ranks, with deadlines on every
// collective so that a rank that failed or hangs becomes a clear error instead of a hang.
//
// Built as the static library batchsolve_mpi (target batchsolve::mpi) only when CMake finds MPI
// (BATCHSOLVE_MPI=AUTO|ON|OFF). Collectives are the non-blocking MPI ones, polled until done or until
// the communicator's timeout (BATCHSOLVE_MPI_TIMEOUT seconds, default 300): then Timeout names the
// operation, the rank and the seconds, and the caller should end the job with abort_job() (a rank
// stuck in a collective cannot be freed any other way). agree() is the clean path for failures that a
// rank detects itself: every rank learns which rank failed and why, and all of them can exit normally.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "batchsolve/multi_device.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve::mpi {

// A rank reported a failure through agree(): names the lowest failing rank and its message.
class RankFailure : public Error {
public:
    RankFailure(int rank, const std::string& step, const std::string& message);
    int failed_rank() const { return rank_; }

private:
    int rank_;
};

// A collective did not complete within the timeout: another rank failed, hangs, or died.
class Timeout : public Error {
public:
    using Error::Error;
};

// True when this process was started by an MPI launcher (mpirun/mpiexec of OpenMPI, MPICH or a PMIx
// launcher such as srun): the programs initialise MPI only then, so they run without MPI otherwise.
bool launched_by_mpirun();

// Seconds a collective may take: $BATCHSOLVE_MPI_TIMEOUT when set (> 0), else 300.
double default_timeout();

// MPI_Init_thread (MPI_THREAD_FUNNELED: only the main thread calls MPI) unless MPI is initialised
// already, and MPI_Finalize at the end of the scope.
class Environment {
public:
    Environment(int* argc, char*** argv);
    ~Environment();
    Environment(const Environment&) = delete;
    Environment& operator=(const Environment&) = delete;
};

// Ends every rank of the job (MPI_Abort on MPI_COMM_WORLD) after this rank's message is out.
[[noreturn]] void abort_job(int exit_code);

class Communicator {
public:
    explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD, double timeout_seconds = default_timeout());

    int rank() const { return rank_; }
    int size() const { return size_; }
    double timeout() const { return timeout_; }
    MPI_Comm comm() const { return comm_; }

    // In-place sums over the ranks (every rank gets the total). `what` names the step in errors.
    void allreduce_sum(float* data, std::size_t n, const char* what);
    void allreduce_sum(double* data, std::size_t n, const char* what);
    void allreduce_sum(std::int64_t* data, std::size_t n, const char* what);
    // In place: rank r's elements [first[r], first[r] + count[r]) of `data` go to every rank.
    void allgatherv(float* data, const std::vector<std::int64_t>& first, const std::vector<std::int64_t>& count,
                    const char* what);
    void barrier(const char* what);

    // Every rank says whether its step succeeded. When one or more failed, every rank throws
    // RankFailure naming the lowest failing rank and its message; else it returns on every rank.
    void agree(bool ok, const std::string& message, const char* step);

    // Runs `work` on this rank and agrees on its outcome: an exception on one rank becomes RankFailure
    // on every rank (the failing rank's message included), instead of the others waiting for it.
    template <class F>
    void run_agreed(const char* step, F&& work) {
        std::string message;
        bool ok = true;
        try {
            work();
        } catch (const std::exception& e) {
            ok = false, message = e.what();
        }
        agree(ok, message, step);
    }

    // Fault injection for tests: with BATCHSOLVE_MPI_FAULT="<rank>:fail" the named rank throws Error
    // here; with "<rank>:hang" it sleeps for ever (the other ranks then time out in their next
    // collective). Other ranks, and runs without the variable, return at once.
    void fault_point(const char* where) const;

    // Per-matrix info of every rank's share (this rank: `share` of a batch of `total`, `local` holding
    // share.count entries in host memory) in global order on rank 0; other ranks get an empty vector.
    std::vector<int> gather_info(const int* local, BatchShare share, int total, const char* what);

private:
    void wait(MPI_Request& request, const char* what);
    MPI_Comm comm_;
    int rank_ = 0, size_ = 1;
    double timeout_;
};

// Rank r's share of `total` matrices split as evenly as possible over `size` ranks (split_batch).
BatchShare rank_share(int total, int rank, int size, int align = 1);

// This rank's index among the ranks of its node: OMPI_COMM_WORLD_LOCAL_RANK (OpenMPI),
// MPI_LOCALRANKID (MPICH), SLURM_LOCALID (srun), else the rank in MPI_Comm_split_type(SHARED).
int local_rank(const Communicator& comm);

// One rank per GPU: the CUDA device this rank should use, devices[local_rank % devices.size()]
// (devices: the ordinals to use; empty: every visible GPU, 0..count-1). -1 when no GPU is visible.
// mpirun -np N on a node of N GPUs gives rank r GPU r; more ranks than GPUs share them round robin.
int rank_device(const Communicator& comm, const std::vector<int>& devices = {});

}  // namespace batchsolve::mpi
