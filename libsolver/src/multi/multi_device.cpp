// DeviceGroup and the multi-device potrf/potrs/posv (multi_device.hpp): the split, one host thread per
// member, in-place shares for CPU members and pinned staging for CUDA members of host-resident batches.
#include "batchsolve/multi_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>

#include <chrono>

#include <omp.h>
#include <unistd.h>

#include "../core/backends.hpp"
#include "../host/lapack.hpp"  // LAPACKE with std::complex, OpenBLAS's thread control
#include "dense.hpp"
#include "batchsolve/buffer.hpp"
#include "batchsolve/cholesky.hpp"
#include "pinned.hpp"

namespace batchsolve {

namespace detail {
// Pinned host memory and device memory a member stages host-resident pieces through.
struct MemberStaging {
    multi::PinnedBlock host;
    std::size_t host_bytes = 0;
    Buffer<unsigned char> device;

    void* host_block(std::size_t bytes) {
        if (bytes > host_bytes) {
            host.reset();
            host.reset(multi::pinned_allocate(bytes));
            host_bytes = bytes;
        }
        return host.get();
    }
    void* device_block(Context& ctx, std::size_t bytes) {
        if (bytes > device.size()) {
            device = Buffer<unsigned char>();
            device = Buffer<unsigned char>(ctx, bytes);
        }
        return device.data();
    }
};
}  // namespace detail

// ---- split ---------------------------------------------------------------------------------------

std::vector<BatchShare> split_batch(int count, const std::vector<double>& weights, int align) {
    constexpr const char* routine = "split_batch";
    if (count < 0) throw InvalidArgument(routine, "count", "count >= 0 (got " + std::to_string(count) + ")");
    if (weights.empty()) throw InvalidArgument(routine, "weights", "at least one member");
    if (align < 1) throw InvalidArgument(routine, "align", "align >= 1 (got " + std::to_string(align) + ")");
    double total = 0;
    for (double w : weights) {
        if (!(w >= 0) || !std::isfinite(w)) throw InvalidArgument(routine, "weights", "finite and >= 0");
        total += w;
    }
    if (!(total > 0)) throw InvalidArgument(routine, "weights", "not all zero");
    // Shares in units of `align` matrices (the last unit may be short), by largest remainder.
    const std::int64_t units = (std::int64_t(count) + align - 1) / align;
    const std::size_t m = weights.size();
    std::vector<std::int64_t> take(m);
    std::vector<std::pair<double, std::size_t>> remainder(m);
    std::int64_t given = 0;
    for (std::size_t p = 0; p < m; ++p) {
        const double exact = double(units) * weights[p] / total;
        take[p] = std::int64_t(std::floor(exact));
        given += take[p];
        remainder[p] = {exact - double(take[p]), p};
    }
    // Ties go to the lower member, so equal weights give the first members the extra units.
    std::stable_sort(remainder.begin(), remainder.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t r = 0; given < units; ++r, ++given) take[remainder[r % m].second] += 1;
    std::vector<BatchShare> shares(m);
    std::int64_t first = 0;
    for (std::size_t p = 0; p < m; ++p) {
        const std::int64_t begin = std::min<std::int64_t>(first * align, count);
        const std::int64_t end = std::min<std::int64_t>((first + take[p]) * align, count);
        shares[p] = {int(begin), int(end - begin)};
        first += take[p];
    }
    return shares;
}

// ---- DeviceGroup ---------------------------------------------------------------------------------

DeviceGroup::DeviceGroup(Backend backend, const std::vector<int>& devices) : devices_(devices) {
    if (devices.empty()) throw InvalidArgument("DeviceGroup", "devices", "at least one device");
    if (backend == Backend::automatic) backend = Context::cuda_available() ? Backend::cuda : Backend::cpu;
    backend_ = backend;
    if (backend_ == Backend::cuda) {
        std::set<int> seen;
        for (int d : devices) {
            if (!seen.insert(d).second)
                throw InvalidArgument("DeviceGroup", "devices", "each CUDA device at most once (device " + std::to_string(d) + " repeats)");
            const int n = cuda_backend::device_count();
            if (d < 0 || d >= n)
                throw InvalidArgument("DeviceGroup", "devices",
                                      "CUDA device ordinals in [0, " + std::to_string(n) + ") (got " + std::to_string(d) + ")");
        }
    }
    for (int d : devices) contexts_.push_back(std::make_unique<Context>(backend_, backend_ == Backend::cuda ? d : 0));
    for (std::size_t i = 0; i < devices.size(); ++i) staging_.push_back(std::make_unique<detail::MemberStaging>());
    weights_.assign(devices.size(), 1.0);
}

detail::MemberStaging& DeviceGroup::staging(int member) { return *staging_.at(std::size_t(member)); }

DeviceGroup::~DeviceGroup() = default;

std::vector<int> DeviceGroup::parse_devices(const std::string& list, Backend backend) {
    if (list == "all") {
        const bool cuda = backend == Backend::cuda || (backend == Backend::automatic && Context::cuda_available());
        std::vector<int> all;
        const int n = cuda ? cuda_backend::device_count() : 1;
        for (int d = 0; d < n; ++d) all.push_back(d);
        if (all.empty()) throw InvalidArgument("DeviceGroup", "devices", "'all' found no CUDA device");
        return all;
    }
    std::vector<int> out;
    if (!list.empty() && list.back() == ',')  // getline would drop the empty last item silently
        throw InvalidArgument("DeviceGroup", "devices", "a comma-separated list of device numbers >= 0 or 'all' (got '" + list + "')");
    std::stringstream in(list);
    std::string item;
    while (std::getline(in, item, ',')) {
        std::size_t used = 0;
        int d = -1;
        try {
            d = std::stoi(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || d < 0)
            throw InvalidArgument("DeviceGroup", "devices",
                                  "a comma-separated list of device numbers >= 0 or 'all' (got '" + list + "')");
        out.push_back(d);
    }
    if (out.empty()) throw InvalidArgument("DeviceGroup", "devices", "at least one device (got '" + list + "')");
    return out;
}

std::string DeviceGroup::describe() const {
    std::ostringstream s;
    s << contexts_.size() << " x " << contexts_.front()->device_name() << " (" << (backend_ == Backend::cuda ? "devices " : "members ");
    for (std::size_t i = 0; i < devices_.size(); ++i) s << (i ? "," : "") << devices_[i];
    s << ")";
    return s.str();
}

void DeviceGroup::set_weights(std::vector<double> weights) {
    if (weights.size() != contexts_.size())
        throw InvalidArgument("DeviceGroup::set_weights", "weights",
                              "one weight per member (" + std::to_string(contexts_.size()) + ", got " + std::to_string(weights.size()) + ")");
    split_batch(1, weights);  // the same checks as a split
    weights_ = std::move(weights);
}

void DeviceGroup::set_staging_bytes(std::size_t bytes) {
    if (bytes < (std::size_t(1) << 20))
        throw InvalidArgument("DeviceGroup::set_staging_bytes", "bytes", "at least 1 MiB (got " + std::to_string(bytes) + ")");
    staging_bytes_ = bytes;
}

std::size_t DeviceGroup::available_bytes(int member) {
    std::size_t available = 0;
    if (backend_ == Backend::cuda) {
        std::size_t total = 0;
        multi::cuda_memory(context(member).device(), available, total);
    } else {
        // The host's available memory (CPU members share it).
        const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        available = pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : std::size_t(-1);
    }
    return memory_limit_ ? std::min(available, memory_limit_) : available;
}

void DeviceGroup::run(const std::function<void(int member)>& work) {
    const int n = size();
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
    auto one = [&](int member) {
        try {
            work(member);
            contexts_[std::size_t(member)]->synchronize();
        } catch (...) {
            errors[std::size_t(member)] = std::current_exception();
        }
    };
    if (n == 1) {
        one(0);
    } else {
        std::vector<std::thread> threads;
        threads.reserve(std::size_t(n));
        for (int member = 0; member < n; ++member) threads.emplace_back(one, member);
        for (auto& t : threads) t.join();
    }
    for (int member = 0; member < n; ++member)
        if (errors[std::size_t(member)]) throw_member_error(member, errors[std::size_t(member)]);
}

void DeviceGroup::enqueue(const std::function<void(int member)>& work) {
    const int n = size();
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
    for (int member = 0; member < n; ++member) {
        try {
            work(member);
        } catch (...) {
            errors[std::size_t(member)] = std::current_exception();
        }
    }
    for (int member = 0; member < n; ++member) {
        try {
            contexts_[std::size_t(member)]->synchronize();
        } catch (...) {
            if (!errors[std::size_t(member)]) errors[std::size_t(member)] = std::current_exception();
        }
    }
    for (int member = 0; member < n; ++member)
        if (errors[std::size_t(member)]) throw_member_error(member, errors[std::size_t(member)]);
}

void DeviceGroup::throw_member_error(int member, const std::exception_ptr& error) {
    std::string what;
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
        what = "an unknown exception";
    }
    std::string device;
    try {
        device = contexts_[std::size_t(member)]->device_name();
    } catch (...) {
        device = "?";
    }
    throw Error("member " + std::to_string(member) + " (" + (backend_ == Backend::cuda ? "device " : "cpu member ") +
                std::to_string(devices_[std::size_t(member)]) + ", " + device + "): " + what);
}

// ---- host-resident batches -----------------------------------------------------------------------

namespace {

enum class Op { potrf, potrs, posv };
const char* op_name(Op op) { return op == Op::potrf ? "potrf_batched" : op == Op::potrs ? "potrs_batched" : "posv_batched"; }

// A view of matrices [first, first + count) of `v` over the same memory, when the layout allows it
// (every layout but a plain interleaved batch, and chunked ones only from a chunk boundary).
template <class T>
bool subview(const BatchView<T>& v, int first, int count, BatchView<T>& out) {
    out = v;
    out.count = count;
    switch (v.layout) {
        case LayoutKind::column_major:
            if (count > 0) out.data = v.data + std::int64_t(first) * v.stride;
            return true;
        case LayoutKind::pointer_array:
            if (count > 0) out.pointers = v.pointers + first;
            return true;
        case LayoutKind::chunked_interleaved:
            if (first % v.chunk_size != 0) return false;
            if (count > 0) out.data = v.data + std::int64_t(first) * v.rows * v.cols;
            return true;
        case LayoutKind::interleaved:
            return first == 0 && count == v.count;
    }
    return false;
}

// Piece storage: column-major families go packed (ld = rows); interleaved families keep their chunk
// width (a plain interleaved piece is an interleaved batch of the piece's count).
template <class T>
BatchView<T> piece_view(const BatchView<T>& whole, T* storage, int count) {
    if (whole.layout == LayoutKind::chunked_interleaved) return BatchView<T>::chunked(storage, whole.rows, whole.cols, count, whole.chunk_size);
    if (whole.layout == LayoutKind::interleaved) return BatchView<T>::interleaved(storage, whole.rows, whole.cols, count);
    return BatchView<T>::column_major(storage, whole.rows, whole.cols, count);
}

// Copies matrices [first, first + count) of `whole` into packed piece storage (to_piece) or back.
template <class T, class U>
void copy_piece(const BatchView<U>& whole, int first, int count, T* piece, bool to_piece) {
    const int rows = whole.rows, cols = whole.cols;
    const std::size_t column_bytes = std::size_t(rows) * sizeof(T);
    if (whole.layout == LayoutKind::column_major || whole.layout == LayoutKind::pointer_array) {
        for (int k = 0; k < count; ++k)
            for (int j = 0; j < cols; ++j) {
                T* p = piece + (std::int64_t(k) * cols + j) * rows;
                U* w = &whole.at(first + k, 0, j);
                if (to_piece) std::memcpy(p, w, column_bytes);
                else std::memcpy(const_cast<std::remove_const_t<U>*>(w), p, column_bytes);
            }
    } else if (whole.layout == LayoutKind::chunked_interleaved) {
        // Pieces start on chunk boundaries: the piece is one contiguous run of the batch's storage.
        U* w = whole.data + std::int64_t(first) * rows * cols;
        const std::size_t bytes = std::size_t(count) * rows * cols * sizeof(T);
        if (to_piece) std::memcpy(piece, w, bytes);
        else std::memcpy(const_cast<std::remove_const_t<U>*>(w), piece, bytes);
    } else {
        // Plain interleaved: element (i, j) of consecutive matrices is one contiguous run.
        for (std::int64_t e = 0; e < std::int64_t(rows) * cols; ++e) {
            T* p = piece + e * count;
            U* w = whole.data + e * whole.count + first;
            if (to_piece) std::memcpy(p, w, std::size_t(count) * sizeof(T));
            else std::memcpy(const_cast<std::remove_const_t<U>*>(w), p, std::size_t(count) * sizeof(T));
        }
    }
}

template <class T>
void run_single(Op op, Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, Context& ctx) {
    if (op == Op::potrf) potrf_batched(uplo, a, info, ctx);
    else if (op == Op::potrs) potrs_batched(uplo, BatchView<const T>(a), b, ctx);
    else posv_batched(uplo, a, b, info, ctx);
}

// One member's share of a host-resident batch, in pieces through staging memory (CUDA members, and
// CPU members of a plain interleaved batch).
constexpr std::size_t kCarveAlignment = 256;
std::size_t aligned(std::size_t bytes) { return (bytes + kCarveAlignment - 1) / kCarveAlignment * kCarveAlignment; }

template <class T>
void run_staged(Op op, Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, BatchShare share,
                Context& ctx, std::size_t staging_bytes, detail::MemberStaging& staging) {
    const bool has_b = op != Op::potrf;
    const std::size_t a_elems = std::size_t(a.rows) * a.cols, b_elems = has_b ? std::size_t(b.rows) * b.cols : 0;
    const std::size_t per_matrix = (a_elems + b_elems) * sizeof(T) + sizeof(int);
    const int align = a.layout == LayoutKind::chunked_interleaved ? a.chunk_size : 1;
    std::int64_t per_piece = std::int64_t(staging_bytes / per_matrix) / align * align;
    if (per_piece < align) per_piece = align;  // one chunk at least, even above the staging size
    per_piece = std::min<std::int64_t>(per_piece, share.count);
    const bool device = ctx.backend() == Backend::cuda;
    // One block each side, carved into A, B (and info on the device).
    const std::size_t a_bytes = aligned(std::size_t(per_piece) * a_elems * sizeof(T));
    const std::size_t b_bytes = aligned(std::size_t(per_piece) * std::max<std::size_t>(b_elems, 1) * sizeof(T));
    const std::size_t info_bytes = aligned(std::size_t(per_piece) * sizeof(int));
    auto* host = static_cast<unsigned char*>(staging.host_block(a_bytes + b_bytes));
    T* ha = reinterpret_cast<T*>(host);
    T* hb = reinterpret_cast<T*>(host + a_bytes);
    T* da = nullptr;
    T* db = nullptr;
    int* dinfo = nullptr;
    if (device) {
        auto* dev = static_cast<unsigned char*>(staging.device_block(ctx, a_bytes + b_bytes + info_bytes));
        da = reinterpret_cast<T*>(dev), db = reinterpret_cast<T*>(dev + a_bytes), dinfo = reinterpret_cast<int*>(dev + a_bytes + b_bytes);
    }
    for (std::int64_t done = 0; done < share.count; done += per_piece) {
        const int first = share.first + int(done), count = int(std::min<std::int64_t>(per_piece, share.count - done));
        copy_piece(a, first, count, ha, true);
        if (has_b) copy_piece(b, first, count, hb, true);
        T* wa = ha;
        T* wb = hb;
        int* winfo = info ? info + first : nullptr;
        if (device) {
            detail::backend_copy_to_backend(ctx, da, ha, std::size_t(count) * a_elems * sizeof(T));
            if (has_b) detail::backend_copy_to_backend(ctx, db, hb, std::size_t(count) * b_elems * sizeof(T));
            wa = da, wb = db, winfo = dinfo;
        }
        run_single(op, uplo, piece_view(a, wa, count), has_b ? piece_view(b, wb, count) : BatchView<T>{}, winfo, ctx);
        if (device) {
            if (op != Op::potrs) {
                detail::backend_copy_to_host(ctx, ha, da, std::size_t(count) * a_elems * sizeof(T));
                detail::backend_copy_to_host(ctx, info + first, dinfo, std::size_t(count) * sizeof(int));
            }
            if (has_b) detail::backend_copy_to_host(ctx, hb, db, std::size_t(count) * b_elems * sizeof(T));
        }
        if (op != Op::potrs) copy_piece(a, first, count, ha, false);
        if (has_b) copy_piece(b, first, count, hb, false);
    }
}

template <class T>
void check_host_batch(Op op, const BatchView<T>& a, const BatchView<T>& b, const int* info) {
    const char* routine = op_name(op);
    if (a.count < 0) throw InvalidArgument(routine, "a.count", "count >= 0");
    if (op != Op::potrs && a.count > 0 && info == nullptr) throw InvalidArgument(routine, "info", "non-null");
    if (op == Op::potrf) return;
    if (b.count != a.count) throw InvalidArgument(routine, "b.count", "b.count == a.count");
    // Column-major and pointer arrays mix freely; interleaved layouts only with their own kind and chunk.
    const bool same = a.is_interleaved() ? (a.layout == b.layout && (a.layout == LayoutKind::interleaved || a.chunk_size == b.chunk_size))
                                         : !b.is_interleaved();
    if (!same) throw InvalidArgument(routine, "b.layout", "the same family of layouts as a (and the same chunk size)");
}

template <class T>
void host_resident(Op op, Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, DeviceGroup& group) {
    check_host_batch(op, a, b, info);
    if (a.count == 0) return;
    const int align = a.layout == LayoutKind::chunked_interleaved ? a.chunk_size : 1;
    const auto shares = group.split(a.count, align);
    const std::size_t staging = group.staging_bytes();
    group.run([&](int member) {
        const BatchShare share = shares[std::size_t(member)];
        if (share.count == 0) return;
        Context& ctx = group.context(member);
        BatchView<T> sa, sb;
        const bool in_place = ctx.backend() == Backend::cpu && subview(a, share.first, share.count, sa) &&
                              (op == Op::potrf || subview(b, share.first, share.count, sb));
        if (in_place) run_single(op, uplo, sa, sb, info ? info + share.first : nullptr, ctx);
        else run_staged(op, uplo, a, b, info, share, ctx, staging, group.staging(member));
    });
}

// Device-resident work: CUDA routines only enqueue, so one thread issues every member's (enqueue);
// CPU members compute while they are called, so each gets a thread (run).
void on_members(DeviceGroup& group, const std::function<void(int)>& work) {
    if (group.backend() == Backend::cuda) group.enqueue(work);
    else group.run(work);
}

template <class T>
void check_parts(const char* routine, std::size_t parts, const DeviceGroup& group, const char* name) {
    if (parts != std::size_t(group.size()))
        throw InvalidArgument(routine, name, "one part per member (" + std::to_string(group.size()) + ", got " + std::to_string(parts) + ")");
}

}  // namespace

template <class T>
void potrf_batched(Uplo uplo, const BatchView<T>& a, int* info, DeviceGroup& group) {
    host_resident(Op::potrf, uplo, a, BatchView<T>{}, info, group);
}
template <class T>
void potrs_batched(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, DeviceGroup& group) {
    // The factor is only read; the staging code copies it in and never back (Op::potrs).
    BatchView<T> writable_shape;
    writable_shape.data = const_cast<T*>(a.data), writable_shape.pointers = const_cast<T* const*>(a.pointers);
    writable_shape.rows = a.rows, writable_shape.cols = a.cols, writable_shape.ld = a.ld, writable_shape.stride = a.stride;
    writable_shape.count = a.count, writable_shape.layout = a.layout, writable_shape.chunk_size = a.chunk_size;
    host_resident(Op::potrs, uplo, writable_shape, b, nullptr, group);
}
template <class T>
void posv_batched(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, DeviceGroup& group) {
    host_resident(Op::posv, uplo, a, b, info, group);
}

// ---- device-resident batches ---------------------------------------------------------------------

template <class T>
void potrf_batched(Uplo uplo, const std::vector<BatchView<T>>& a, const std::vector<int*>& info, DeviceGroup& group) {
    check_parts<T>("potrf_batched", a.size(), group, "a");
    check_parts<T>("potrf_batched", info.size(), group, "info");
    on_members(group, [&](int p) { potrf_batched(uplo, a[std::size_t(p)], info[std::size_t(p)], group.context(p)); });
}
template <class T>
void potrs_batched(Uplo uplo, const std::vector<BatchView<const T>>& a, const std::vector<BatchView<T>>& b,
                   DeviceGroup& group) {
    check_parts<T>("potrs_batched", a.size(), group, "a");
    check_parts<T>("potrs_batched", b.size(), group, "b");
    on_members(group, [&](int p) { potrs_batched(uplo, a[std::size_t(p)], b[std::size_t(p)], group.context(p)); });
}
template <class T>
void posv_batched(Uplo uplo, const std::vector<BatchView<T>>& a, const std::vector<BatchView<T>>& b,
                  const std::vector<int*>& info, DeviceGroup& group) {
    check_parts<T>("posv_batched", a.size(), group, "a");
    check_parts<T>("posv_batched", b.size(), group, "b");
    check_parts<T>("posv_batched", info.size(), group, "info");
    on_members(group, [&](int p) { posv_batched(uplo, a[std::size_t(p)], b[std::size_t(p)], info[std::size_t(p)], group.context(p)); });
}

std::vector<int> gather_info(DeviceGroup& group, const std::vector<int*>& info, const std::vector<int>& counts) {
    check_parts<int>("gather_info", info.size(), group, "info");
    check_parts<int>("gather_info", counts.size(), group, "counts");
    std::vector<std::int64_t> first(counts.size() + 1, 0);
    for (std::size_t p = 0; p < counts.size(); ++p) {
        if (counts[p] < 0) throw InvalidArgument("gather_info", "counts", "counts >= 0");
        if (counts[p] > 0 && info[p] == nullptr) throw InvalidArgument("gather_info", "info", "non-null where counts > 0");
        first[p + 1] = first[p] + counts[p];
    }
    std::vector<int> all(static_cast<std::size_t>(first.back()));
    for (int p = 0; p < group.size(); ++p)
        detail::backend_copy_to_host(group.context(p), all.data() + first[std::size_t(p)], info[std::size_t(p)],
                                     std::size_t(counts[std::size_t(p)]) * sizeof(int));
    return all;
}

// ---- one large dense system ---------------------------------------------------------------------

namespace {
// LAPACK's gesv per precision, with every OpenBLAS thread for the call (the CPU backend keeps
// OpenBLAS on one thread for its per-matrix work; one large matrix wants them all).
lapack_int lapack_gesv(int n, int nrhs, float* a, int lda, int* ipiv, float* b, int ldb) {
    return LAPACKE_sgesv(LAPACK_COL_MAJOR, n, nrhs, a, lda, ipiv, b, ldb);
}
lapack_int lapack_gesv(int n, int nrhs, double* a, int lda, int* ipiv, double* b, int ldb) {
    return LAPACKE_dgesv(LAPACK_COL_MAJOR, n, nrhs, a, lda, ipiv, b, ldb);
}
lapack_int lapack_gesv(int n, int nrhs, std::complex<float>* a, int lda, int* ipiv, std::complex<float>* b, int ldb) {
    return LAPACKE_cgesv(LAPACK_COL_MAJOR, n, nrhs, a, lda, ipiv, b, ldb);
}
lapack_int lapack_gesv(int n, int nrhs, std::complex<double>* a, int lda, int* ipiv, std::complex<double>* b, int ldb) {
    return LAPACKE_zgesv(LAPACK_COL_MAJOR, n, nrhs, a, lda, ipiv, b, ldb);
}
}  // namespace

template <class T>
DenseSolveReport gesv(int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb, DeviceGroup& group, int tile) {
    constexpr const char* routine = "gesv";
    if (n < 0) throw InvalidArgument(routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    if (nrhs < 0) throw InvalidArgument(routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    if (lda < std::max(1, n)) throw InvalidArgument(routine, "lda", "lda >= max(1, n) (got " + std::to_string(lda) + ")");
    if (ldb < std::max(1, n)) throw InvalidArgument(routine, "ldb", "ldb >= max(1, n) (got " + std::to_string(ldb) + ")");
    if (tile < 1) throw InvalidArgument(routine, "tile", "tile >= 1 (got " + std::to_string(tile) + ")");
    if (n > 0 && (a == nullptr || ipiv == nullptr)) throw InvalidArgument(routine, a == nullptr ? "a" : "ipiv", "non-null");
    if (n > 0 && nrhs > 0 && b == nullptr) throw InvalidArgument(routine, "b", "non-null");
    if (group.backend() == Backend::cuda && tile > cusolvermg_max_tile)
        throw InvalidArgument(routine, "tile", "tile <= " + std::to_string(cusolvermg_max_tile) + " on GPUs (cuSOLVERMg's getrf rejects wider tiles; got " +
                                                   std::to_string(tile) + ")");
    if (n == 0) return {};
    if (group.backend() == Backend::cuda) return multi::gesv_cusolvermg(n, nrhs, a, lda, ipiv, b, ldb, group, tile);
    DenseSolveReport report;
    report.engine = "LAPACK getrf/getrs on the host";
    const int before = openblas_get_num_threads();
    openblas_set_num_threads(omp_get_max_threads());
    const auto t0 = std::chrono::steady_clock::now();
    const lapack_int info = lapack_gesv(n, nrhs, a, lda, ipiv, b, ldb);
    report.factor_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    openblas_set_num_threads(before);
    if (info < 0) throw Error("gesv: LAPACK rejected argument " + std::to_string(-info) + " (a bug: please report it)");
    report.info = int(info);
    return report;
}

// ---- TiledMatrix and gesv on it ------------------------------------------------------------------

namespace {
std::string gib_text(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(1ull << 30));
    return text;
}
}  // namespace

template <class T>
std::size_t TiledMatrix<T>::bytes_per_member(int rows, int cols, int tile, int members) {
    const std::int64_t tiles = (std::int64_t(cols) + tile - 1) / tile;
    const std::int64_t per_member = (tiles + members - 1) / members;
    return std::size_t(per_member) * std::size_t(tile) * std::size_t(rows) * sizeof(T);
}

template <class T>
TiledMatrix<T>::TiledMatrix(DeviceGroup& group, int rows, int cols, int tile, std::size_t reserve_bytes)
    : rows_(rows), cols_(cols), tile_(tile) {
    constexpr const char* routine = "TiledMatrix";
    if (rows < 0) throw InvalidArgument(routine, "rows", "rows >= 0 (got " + std::to_string(rows) + ")");
    if (cols < 0) throw InvalidArgument(routine, "cols", "cols >= 0 (got " + std::to_string(cols) + ")");
    if (tile < 1) throw InvalidArgument(routine, "tile", "tile >= 1 (got " + std::to_string(tile) + ")");
    const int m = group.size();
    // Local columns per member: whole tiles, the last one possibly short.
    local_columns_.assign(std::size_t(m), 0);
    const std::int64_t tiles = (std::int64_t(cols) + tile - 1) / tile;
    for (std::int64_t t = 0; t < tiles; ++t) local_columns_[std::size_t(t % m)] += std::min<std::int64_t>(tile, cols - t * tile);
    // Whole tiles are allocated (the last, short tile padded): cuSOLVERMg addresses a member's tiles
    // at multiples of tile x rows.
    auto allocated_columns = [&](int p) { return (local_columns_[std::size_t(p)] + tile - 1) / tile * tile; };
    // Every member checked before any allocates: a matrix that does not fit the group fails at once.
    for (int p = 0; p < m; ++p) {
        const std::size_t need = std::size_t(allocated_columns(p)) * std::size_t(rows) * sizeof(T) + reserve_bytes;
        const std::size_t available = group.available_bytes(p);
        if (need > available)
            throw Error("TiledMatrix: a " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix in tiles of " + std::to_string(tile) +
                        " columns over " + std::to_string(m) + " member(s) needs " + gib_text(double(need)) + " on member " + std::to_string(p) +
                        " (" + group.context(p).device_name() + ", " + gib_text(double(reserve_bytes)) + " of it for what follows), which has " +
                        gib_text(double(available)) + " available: the system does not fit this group (add devices or reduce the size)");
    }
    // At least one element: a member without columns still hands cuSOLVERMg a valid pointer.
    for (int p = 0; p < m; ++p) parts_.emplace_back(group.context(p), std::max<std::size_t>(1, std::size_t(allocated_columns(p)) * std::size_t(rows)));
}

template <class T>
std::vector<T> TiledMatrix<T>::gather() const {
    std::vector<T> full(std::size_t(rows_) * std::size_t(cols_));
    for (int p = 0; p < members(); ++p) {
        std::vector<T> part = parts_[std::size_t(p)].to_host();
        for (std::int64_t c = 0; c < local_columns_[std::size_t(p)]; ++c)
            std::copy_n(part.data() + c * rows_, rows_, full.data() + std::int64_t(global_column(p, c)) * rows_);
    }
    return full;
}

template <class T>
DenseSolveReport gesv(TiledMatrix<T>& a, int* ipiv, int nrhs, T* b, int ldb, DeviceGroup& group) {
    constexpr const char* routine = "gesv";
    const int n = a.rows();
    if (a.cols() != n) throw InvalidArgument(routine, "a", "a square matrix (got " + std::to_string(n) + " x " + std::to_string(a.cols()) + ")");
    if (a.members() != group.size())
        throw InvalidArgument(routine, "a", "tiles over this group's " + std::to_string(group.size()) + " members (got " +
                                                std::to_string(a.members()) + ")");
    if (nrhs < 0) throw InvalidArgument(routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
    if (ldb < std::max(1, n)) throw InvalidArgument(routine, "ldb", "ldb >= max(1, n) (got " + std::to_string(ldb) + ")");
    if (n > 0 && ipiv == nullptr) throw InvalidArgument(routine, "ipiv", "non-null");
    if (n > 0 && nrhs > 0 && b == nullptr) throw InvalidArgument(routine, "b", "non-null");
    if (group.backend() == Backend::cuda && a.tile() > cusolvermg_max_tile)
        throw InvalidArgument(routine, "a", "tiles of at most " + std::to_string(cusolvermg_max_tile) +
                                                " columns on GPUs (cuSOLVERMg's getrf rejects wider tiles; got " + std::to_string(a.tile()) + ")");
    if (n == 0) return {};
    if (group.backend() == Backend::cuda) return multi::gesv_cusolvermg_tiled(a, ipiv, nrhs, b, ldb, group);
    // CPU members: their memory is the host's, so LAPACK runs on the gathered matrix; L and U go back
    // into the tiles as cuSOLVERMg would leave them.
    auto t0 = std::chrono::steady_clock::now();
    std::vector<T> full = a.gather();
    DenseSolveReport report = gesv(n, nrhs, full.data(), n, ipiv, b, ldb, group, a.tile());
    report.upload_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - report.factor_s;
    for (int p = 0; p < a.members(); ++p)
        for (std::int64_t c = 0; c < a.local_columns(p); ++c)
            std::copy_n(full.data() + std::int64_t(a.global_column(p, c)) * n, n, a.data(p) + c * n);
    report.engine = "LAPACK getrf/getrs on the host (the CPU members' tiles gathered)";
    return report;
}

#define BATCHSOLVE_MULTI_INSTANTIATE(T)                                                                            \
    template void potrf_batched<T>(Uplo, const BatchView<T>&, int*, DeviceGroup&);                                \
    template void potrs_batched<T>(Uplo, const BatchView<const T>&, const BatchView<T>&, DeviceGroup&);           \
    template void posv_batched<T>(Uplo, const BatchView<T>&, const BatchView<T>&, int*, DeviceGroup&);            \
    template void potrf_batched<T>(Uplo, const std::vector<BatchView<T>>&, const std::vector<int*>&, DeviceGroup&); \
    template void potrs_batched<T>(Uplo, const std::vector<BatchView<const T>>&, const std::vector<BatchView<T>>&, \
                                   DeviceGroup&);                                                                \
    template void posv_batched<T>(Uplo, const std::vector<BatchView<T>>&, const std::vector<BatchView<T>>&,       \
                                  const std::vector<int*>&, DeviceGroup&);                                       \
    template DenseSolveReport gesv<T>(int, int, T*, int, int*, T*, int, DeviceGroup&, int); \
    template class TiledMatrix<T>;                                                                                \
    template DenseSolveReport gesv<T>(TiledMatrix<T>&, int*, int, T*, int, DeviceGroup&);
BATCHSOLVE_FOR_EACH_PRECISION(BATCHSOLVE_MULTI_INSTANTIATE)
#undef BATCHSOLVE_MULTI_INSTANTIATE

}  // namespace batchsolve
