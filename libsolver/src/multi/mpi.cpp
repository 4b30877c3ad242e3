// batchsolve::mpi (batchsolve_mpi.hpp): collectives with deadlines, agreement on failures, info gathering.
#include "batchsolve_mpi.hpp"

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

namespace batchsolve::mpi {

namespace {

std::string rank_text(int rank) { return "rank " + std::to_string(rank); }

void check(int status, const char* call) {
    if (status == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw Error(std::string(call) + ": " + std::string(text, std::size_t(length)));
}

int as_count(std::size_t n, const char* what) {
    if (n > std::size_t(INT_MAX))
        throw Error(std::string(what) + ": " + std::to_string(n) + " elements exceed one MPI message (2^31 - 1)");
    return int(n);
}

}  // namespace

RankFailure::RankFailure(int rank, const std::string& step, const std::string& message)
    : Error(rank_text(rank) + " failed in " + step + ": " + message), rank_(rank) {}

bool launched_by_mpirun() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
        if (std::getenv(name) != nullptr) return true;
    return false;
}

double default_timeout() {
    if (const char* t = std::getenv("BATCHSOLVE_MPI_TIMEOUT")) {
        char* end = nullptr;
        const double v = std::strtod(t, &end);
        if (end != t && *end == '\0' && v > 0) return v;
        std::cerr << "batchsolve: BATCHSOLVE_MPI_TIMEOUT='" << t << "' is not a number of seconds > 0; using 300\n";
    }
    return 300;
}

Environment::Environment(int* argc, char*** argv) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (initialised) return;
    int provided = 0;
    check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    // Errors come back as codes (and become exceptions here) instead of aborting inside MPI.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

Environment::~Environment() {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (!finalised) MPI_Finalize();
}

void abort_job(int exit_code) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // MPI_Abort does not return; this only satisfies [[noreturn]]
}

Communicator::Communicator(MPI_Comm comm, double timeout_seconds) : comm_(comm), timeout_(timeout_seconds) {
    if (!(timeout_seconds > 0)) throw InvalidArgument("mpi::Communicator", "timeout_seconds", "> 0");
    check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
}

void Communicator::wait(MPI_Request& request, const char* what) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_);
    auto pause = std::chrono::microseconds(20);
    for (;;) {
        int done = 0;
        check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
        if (done) return;
        if (Clock::now() > deadline) {
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%g", timeout_);
            // The request cannot be cancelled (collectives are not cancellable): the caller ends the job.
            throw Timeout(rank_text(rank_) + " of " + std::to_string(size_) + ": " + what + " did not complete within " + seconds +
                          " s (BATCHSOLVE_MPI_TIMEOUT): another rank failed, hangs or died");
        }
        std::this_thread::sleep_for(pause);
        if (pause < std::chrono::milliseconds(2)) pause *= 2;  // fast collectives stay fast, long waits stay cheap
    }
}

void Communicator::allreduce_sum(float* data, std::size_t n, const char* what) {
    MPI_Request r;
    check(MPI_Iallreduce(MPI_IN_PLACE, data, as_count(n, what), MPI_FLOAT, MPI_SUM, comm_, &r), what);
    wait(r, what);
}
void Communicator::allreduce_sum(double* data, std::size_t n, const char* what) {
    MPI_Request r;
    check(MPI_Iallreduce(MPI_IN_PLACE, data, as_count(n, what), MPI_DOUBLE, MPI_SUM, comm_, &r), what);
    wait(r, what);
}
void Communicator::allreduce_sum(std::int64_t* data, std::size_t n, const char* what) {
    MPI_Request r;
    check(MPI_Iallreduce(MPI_IN_PLACE, data, as_count(n, what), MPI_INT64_T, MPI_SUM, comm_, &r), what);
    wait(r, what);
}

void Communicator::allgatherv(float* data, const std::vector<std::int64_t>& first, const std::vector<std::int64_t>& count,
                              const char* what) {
    if (first.size() != std::size_t(size_) || count.size() != std::size_t(size_))
        throw InvalidArgument("mpi::Communicator::allgatherv", "first", "one entry per rank");
    std::vector<int> displs(static_cast<std::size_t>(size_)), counts(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
        displs[std::size_t(r)] = as_count(std::size_t(first[std::size_t(r)]), what);
        counts[std::size_t(r)] = as_count(std::size_t(count[std::size_t(r)]), what);
    }
    MPI_Request req;
    check(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts.data(), displs.data(), MPI_FLOAT, comm_, &req), what);
    wait(req, what);
}

void Communicator::barrier(const char* what) {
    MPI_Request r;
    check(MPI_Ibarrier(comm_, &r), what);
    wait(r, what);
}

void Communicator::agree(bool ok, const std::string& message, const char* step) {
    // The lowest failing rank (size_ when none failed), then its message from it to everyone.
    int failing = ok ? size_ : rank_;
    MPI_Request r;
    check(MPI_Iallreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MIN, comm_, &r), step);
    wait(r, step);
    if (failing == size_) return;
    std::string text = failing == rank_ ? message : std::string();
    int length = int(std::min<std::size_t>(text.size(), 4096));
    check(MPI_Ibcast(&length, 1, MPI_INT, failing, comm_, &r), step);
    wait(r, step);
    text.resize(std::size_t(length));
    check(MPI_Ibcast(text.data(), length, MPI_CHAR, failing, comm_, &r), step);
    wait(r, step);
    throw RankFailure(failing, step, text);
}

void Communicator::fault_point(const char* where) const {
    const char* fault = std::getenv("BATCHSOLVE_MPI_FAULT");
    if (fault == nullptr) return;
    const std::string f(fault);
    const auto colon = f.find(':');
    if (colon == std::string::npos || std::atoi(f.substr(0, colon).c_str()) != rank_) return;
    const std::string kind = f.substr(colon + 1);
    if (kind == "fail") throw Error(std::string("injected failure at ") + where + " (BATCHSOLVE_MPI_FAULT=" + f + ")");
    if (kind == "hang") {
        std::cerr << rank_text(rank_) << ": hanging at " << where << " (BATCHSOLVE_MPI_FAULT=" << f << ")" << std::endl;
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
}

std::vector<int> Communicator::gather_info(const int* local, BatchShare share, int total, const char* what) {
    std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
    int mine[2] = {share.first, share.count};
    std::vector<int> all(static_cast<std::size_t>(2 * size_));
    MPI_Request r;
    check(MPI_Iallgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm_, &r), what);
    wait(r, what);
    for (int k = 0; k < size_; ++k) displs[std::size_t(k)] = all[std::size_t(2 * k)], counts[std::size_t(k)] = all[std::size_t(2 * k + 1)];
    std::vector<int> out(rank_ == 0 ? std::size_t(total) : 0);
    if (rank_ == 0)
        for (int k = 0; k < size_; ++k)
            if (displs[std::size_t(k)] < 0 || counts[std::size_t(k)] < 0 || std::int64_t(displs[std::size_t(k)]) + counts[std::size_t(k)] > total)
                throw Error(std::string(what) + ": rank " + std::to_string(k) + "'s share [" + std::to_string(displs[std::size_t(k)]) + ", +" +
                            std::to_string(counts[std::size_t(k)]) + ") lies outside the batch of " + std::to_string(total));
    check(MPI_Igatherv(local, share.count, MPI_INT, out.data(), counts.data(), displs.data(), MPI_INT, 0, comm_, &r), what);
    wait(r, what);
    return out;
}

BatchShare rank_share(int total, int rank, int size, int align) {
    if (size < 1 || rank < 0 || rank >= size) throw InvalidArgument("mpi::rank_share", "rank", "0 <= rank < size");
    return split_batch(total, std::vector<double>(std::size_t(size), 1.0), align)[std::size_t(rank)];
}

int local_rank(const Communicator& comm) {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
        if (const char* value = std::getenv(name)) {
            char* end = nullptr;
            const long r = std::strtol(value, &end, 10);
            if (end != value && *end == '\0' && r >= 0 && r < INT_MAX) return int(r);
        }
    // No launcher variable: the ranks that share this node's memory, in rank order.
    MPI_Comm node = MPI_COMM_NULL;
    check(MPI_Comm_split_type(comm.comm(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node), "MPI_Comm_split_type");
    int r = 0;
    MPI_Comm_rank(node, &r);
    MPI_Comm_free(&node);
    return r;
}

int rank_device(const Communicator& comm, const std::vector<int>& devices) {
    const int local = local_rank(comm);
    if (!devices.empty()) return devices[std::size_t(local) % devices.size()];
    const int visible = Context::cuda_available() ? int(DeviceGroup::parse_devices("all", Backend::cuda).size()) : 0;
    return visible > 0 ? local % visible : -1;
}

}  // namespace batchsolve::mpi
