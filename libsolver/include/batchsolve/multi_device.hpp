// Batched Cholesky over several devices: a DeviceGroup of Contexts (GPUs, or CPU members that stand in
// for them in tests), the batch split by matrix count over the members, one host thread per member,
// and one info per matrix at its global index, as if one device had run the whole batch.
//
// Two ways to hand a batch in:
//  * host-resident: A, B and info in host memory, one view of the whole batch. Each member takes a
//    contiguous share; CPU members work on their share in place, CUDA members stage it through pinned
//    host memory and device buffers in pieces (DeviceGroup::staging_bytes), so a batch larger than
//    any one device's memory runs. The factor and the solution land where LAPACK would put them.
//  * device-resident: the batch already split, part p in member p's memory (a view and an info array
//    per member, in that member's memory). Nothing is copied; part p's matrix k is the global matrix
//    (sum of the counts of parts 0..p-1) + k. gather_info() collects the parts' info into one array.
//
// Failures: one bad matrix is an info entry, as on one device. An error of a member (a CUDA error, an
// argument error) stops only that member's thread; the call waits for the others and throws
// batchsolve::Error naming the member, its device and the first error.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "batchsolve/batch.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/types.hpp"

namespace batchsolve {

namespace detail {
struct MemberStaging;  // a member's pinned host and device staging blocks (src/multi), reused across calls
}

// Matrices [first, first + count) of a batch.
struct BatchShare {
    int first = 0;
    int count = 0;
};

// Splits `count` matrices into weights.size() contiguous shares in proportion to the weights
// (largest remainder, so the shares sum to count exactly); every share but the last starts and ends
// on a multiple of `align` (chunked layouts split between chunks). Zero weights get empty shares.
// InvalidArgument naming `weights` or `align` for an empty list, a negative or non-finite weight, an
// all-zero list, or align < 1.
std::vector<BatchShare> split_batch(int count, const std::vector<double>& weights, int align = 1);

class DeviceGroup {
public:
    // One Context per entry of `devices`: CUDA device ordinals for Backend::cuda (each at most once),
    // labels of CPU members for Backend::cpu (any values: 0,1,2 gives three members sharing the host's
    // cores). Backend::automatic resolves as Context does. InvalidArgument names `devices`.
    DeviceGroup(Backend backend, const std::vector<int>& devices);
    ~DeviceGroup();
    DeviceGroup(const DeviceGroup&) = delete;
    DeviceGroup& operator=(const DeviceGroup&) = delete;

    // "0,1,3" -> {0, 1, 3}; "all" -> every visible CUDA device (Backend::cuda) or {0} (cpu).
    // InvalidArgument("DeviceGroup", "devices", ...) on anything else.
    static std::vector<int> parse_devices(const std::string& list, Backend backend);

    int size() const { return int(contexts_.size()); }
    Backend backend() const { return backend_; }
    Context& context(int member) { return *contexts_.at(std::size_t(member)); }
    std::string describe() const;  // "2 x NVIDIA H100 80GB HBM3 (devices 0,1)"

    // Relative speed of each member, used to split batches (default: all equal).
    void set_weights(std::vector<double> weights);
    const std::vector<double>& weights() const { return weights_; }
    std::vector<BatchShare> split(int count, int align = 1) const { return split_batch(count, weights_, align); }

    // Bytes of device memory (A, B and info of one piece) a CUDA member stages a host-resident share
    // through, and as much pinned host memory (default 256 MiB each).
    void set_staging_bytes(std::size_t bytes);
    std::size_t staging_bytes() const { return staging_bytes_; }

    // Runs work(member) on one host thread per member (a single member runs on the caller's thread),
    // waits for every thread, then throws Error("member 1 (device 1, NVIDIA ...): <what>") for the
    // first member that threw. Each member's context is synchronised before its thread ends.
    void run(const std::function<void(int member)>& work);

    // Issues work(member) for every member from the calling thread, one after another, then waits for
    // every member's stream; errors as run(). For work that only enqueues on the member's stream (CUDA
    // routines on device memory): the devices run concurrently without a thread each, which saves the
    // threads' start-up on short calls. The device-resident overloads below use it for CUDA groups.
    void enqueue(const std::function<void(int member)>& work);

    // Internal: the staging blocks of a member, grown on demand and kept for the next call (pinned
    // allocations cost milliseconds). Freed with the group.
    detail::MemberStaging& staging(int member);

private:
    [[noreturn]] void throw_member_error(int member, const std::exception_ptr& error);
    Backend backend_;
    std::vector<std::unique_ptr<Context>> contexts_;
    std::vector<int> devices_;
    std::vector<double> weights_;
    std::size_t staging_bytes_ = std::size_t(256) << 20;
    std::vector<std::unique_ptr<detail::MemberStaging>> staging_;
};

// ---- host-resident batches: one view of the whole batch in host memory ---------------------------
// Same semantics as cholesky.hpp per matrix (info at the global index k of the view). Layouts: all
// four; an interleaved (single-chunk) batch is gathered into per-member pieces, the others are split
// in place (chunked ones on chunk boundaries).

template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, DeviceGroup& group);
template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, DeviceGroup& group);
template <class T>
void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, DeviceGroup& group);

// ---- device-resident batches: part p in member p's memory ----------------------------------------
// a.size() (and b.size(), info.size()) must equal group.size(); an empty part (count 0) is allowed.

template <class T>
void potrf_batched(Uplo uplo, const std::vector<BatchView<T>>& a, const std::vector<int*>& info, DeviceGroup& group);
template <class T>
void potrs_batched(Uplo uplo, const std::vector<BatchView<const T>>& a, const std::vector<BatchView<T>>& b,
                   DeviceGroup& group);
template <class T>
void posv_batched(Uplo uplo, const std::vector<BatchView<T>>& a, const std::vector<BatchView<T>>& b,
                  const std::vector<int*>& info, DeviceGroup& group);

// The parts' info (part p: counts[p] entries in member p's memory) as one host array in global order.
std::vector<int> gather_info(DeviceGroup& group, const std::vector<int*>& info, const std::vector<int>& counts);

// ---- one large dense system over the group's devices ------------------------------------------------

struct DenseSolveReport {
    int info = 0;                  // LAPACK's: 0, or i > 0 when U(i, i) is exactly zero (A singular)
    double upload_s = 0, factor_s = 0, solve_s = 0, download_s = 0;  // wall clock, each phase
    std::size_t device_bytes = 0;  // device memory per device (matrix, right-hand sides, pivots, workspace)
    std::string engine;            // e.g. "cuSOLVERMg, 2 devices, tiles of 1024 columns" or "LAPACK getrf/getrs"
};

// Solves A X = B for one n x n matrix by LU with partial pivoting (getrf then getrs), A (lda >= n)
// and B (n x nrhs, ldb >= n) column-major in host memory. CUDA groups: cuSOLVERMg (loaded at run time)
// over every member, A and B spread in tiles of `tile` columns dealt round robin, so a matrix larger
// than one device fits when it fits the group; before any allocation an Error names the bytes needed
// and free per device when it does not. CPU groups: LAPACK on the host, every thread. A is overwritten
// by L and U, ipiv (n entries, 1-based as LAPACK's) by the pivots, B by X. Arguments are checked first
// (InvalidArgument naming n, nrhs, lda, ldb, tile or a null pointer); a singular U is report.info > 0.
template <class T>
DenseSolveReport gesv(int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb, DeviceGroup& group, int tile = 1024);

}  // namespace batchsolve
