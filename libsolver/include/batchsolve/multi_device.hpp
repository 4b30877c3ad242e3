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
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "batchsolve/batch.hpp"
#include "batchsolve/buffer.hpp"
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

    // A cap on the memory each member is taken to have (bytes; 0: none, the default). Checks before
    // allocating (TiledMatrix, gesv) use min(cap, free memory): a CPU group with a cap stands in for
    // GPUs of that size in tests, and a GPU group can be held below its memory.
    void set_memory_limit(std::size_t bytes) { memory_limit_ = bytes; }
    std::size_t memory_limit() const { return memory_limit_; }
    // Bytes member `member` can still allocate: the device's free memory (CUDA), the host's available
    // memory (CPU), at most memory_limit().
    std::size_t available_bytes(int member);

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
    std::size_t memory_limit_ = 0;
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
    std::string engine;            // e.g. "cuSOLVERMg, 2 devices, tiles of 256 columns" or "LAPACK getrf/getrs"
};

// Solves A X = B for one n x n matrix by LU with partial pivoting (getrf then getrs), A (lda >= n)
// and B (n x nrhs, ldb >= n) column-major in host memory. CUDA groups: cuSOLVERMg (loaded at run time)
// over every member, A and B spread in tiles of `tile` columns dealt round robin, so a matrix larger
// than one device fits when it fits the group; before any allocation an Error names the bytes needed
// and free per device when it does not. CPU groups: LAPACK on the host, every thread. A is overwritten
// by L and U, ipiv (n entries, 1-based as LAPACK's) by the pivots, B by X. Arguments are checked first
// (InvalidArgument naming n, nrhs, lda, ldb, tile or a null pointer); a singular U is report.info > 0.
template <class T>
DenseSolveReport gesv(int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb, DeviceGroup& group, int tile = 256);

// The widest tile cuSOLVERMg's getrf takes: it returns CUSOLVER_STATUS_INVALID_VALUE for tiles of 1024
// columns (measured on an H200, CUDA 13; tiles of 96, 128 and 256 run, 256 is NVIDIA's samples' size).
// gesv on a CUDA group refuses wider tiles (InvalidArgument naming `tile`) before any allocation.
constexpr int cusolvermg_max_tile = 256;

// ---- a dense matrix that lives spread over the group ----------------------------------------------

// A rows x cols column-major matrix dealt to the members in tiles of `tile` columns round robin (tile t
// on member t % size, cuSOLVERMg's 1-D block-cyclic layout): member p holds its tiles side by side in
// its own memory (device memory for CUDA members, host memory for CPU members), leading dimension
// rows. Applications fill it where it lies (each member its own columns), so a matrix larger than
// any one device, or than the host, never sits in one place. Before allocating, every member's share
// is checked against DeviceGroup::available_bytes(member) plus `reserve_bytes` (what the member
// still needs afterwards, e.g. a solver's workspace); Error names the bytes per member, the member's
// free memory and the group size when it does not fit.
template <class T>
class TiledMatrix {
public:
    TiledMatrix(DeviceGroup& group, int rows, int cols, int tile, std::size_t reserve_bytes = 0);
    int rows() const { return rows_; }
    int cols() const { return cols_; }
    int tile() const { return tile_; }
    int members() const { return int(parts_.size()); }
    int owner(int column) const { return (column / tile_) % members(); }
    // Column `column`'s index among its owner's local columns.
    std::int64_t local_column(int column) const {
        return std::int64_t(column / tile_ / members()) * tile_ + column % tile_;
    }
    // The global column of member p's local column c (inverse of local_column).
    int global_column(int member, std::int64_t c) const {
        return int(((c / tile_) * members() + member) * tile_ + c % tile_);
    }
    std::int64_t local_columns(int member) const { return local_columns_.at(std::size_t(member)); }
    T* data(int member) const { return parts_.at(std::size_t(member)).data(); }  // member's memory
    std::int64_t ld() const { return rows_; }
    // Bytes one member holds at most: ceil(tiles / members) tiles of rows x tile.
    static std::size_t bytes_per_member(int rows, int cols, int tile, int members);
    // Host copy of the whole matrix (tests and small systems only: it gathers everything).
    std::vector<T> gather() const;

private:
    int rows_, cols_, tile_;
    std::vector<std::int64_t> local_columns_;
    std::vector<Buffer<T>> parts_;
};

// Solves A X = B by LU with partial pivoting where A lies (a square TiledMatrix): CUDA groups run
// cuSOLVERMg on the tiles in place (B, n x nrhs host-resident, is uploaded in the same layout and
// X downloaded into it; A is overwritten by L and U on the devices); CPU groups gather A to the host
// for LAPACK (the CPU backend's stand-in: host memory is the members' memory) and write L and U back
// into the tiles. ipiv: n host entries, 1-based. Errors and report as the host-resident gesv above.
template <class T>
DenseSolveReport gesv(TiledMatrix<T>& a, int* ipiv, int nrhs, T* b, int ldb, DeviceGroup& group);

}  // namespace batchsolve
