// One case of the tester: SPD inputs generated in parallel on the host, input sets in the memory of
// the backend that runs (restored from a pristine copy outside the timed region), timed runs of the
// library and of the references, and the checks on the host against the original matrices.
#include "bench.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>

#include "batchsolve/batchsolve.hpp"
#include "gpu.hpp"
#include "cusolverdx_peer.hpp"
#include "peers.hpp"

namespace batchsolve::validation {

namespace {

// Regions inside an input set start at multiples of this (cudaMalloc's own alignment), so every
// view the library sees is as aligned as a fresh allocation.
constexpr std::size_t kRegionAlign = 256;
// Matrices per task of the host-side layout conversions.
constexpr int kHostChunk = 256;
// Device memory the sets may take, as a fraction of what is free (the rest: library workspace,
// allocator slack).
constexpr double kDeviceMemoryShare = 0.8;

// Thrown when a case does not fit in device memory: the row is skipped, not failed.
struct Skip : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {  // splitmix64 of a combination: independent seeds
    std::uint64_t z = a + 0x9e3779b97f4a7c15ull * (b + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Calls fn(chunk_index, first, size) for consecutive chunks of [0, count) on all host threads; the
// first exception is re-thrown on the calling thread.
template <class F>
void parallel_chunks(int count, int chunk, F&& fn) {
    const int chunks = (count + chunk - 1) / chunk;
    std::exception_ptr error;
#pragma omp parallel for schedule(dynamic)
    for (int c = 0; c < chunks; ++c) {
        try {
            fn(c, c * chunk, std::min(chunk, count - c * chunk));
        } catch (...) {
#pragma omp critical(batchsolve_tester_error)
            if (!error) error = std::current_exception();
        }
    }
    if (error) std::rethrow_exception(error);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size();
    return m == 0 ? 0 : m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

template <class T>
T nan_value() {
    const real_t<T> q = std::numeric_limits<real_t<T>>::quiet_NaN();
    if constexpr (is_complex_v<T>) return T(q, q);
    else return q;
}

template <class T>
bool is_nan(const T& v) {
    if constexpr (is_complex_v<T>) return std::isnan(v.real()) || std::isnan(v.imag());
    else return std::isnan(v);
}

bool in_other_triangle(Uplo uplo, int i, int j) { return uplo == Uplo::lower ? i < j : i > j; }

std::string with_count(int k, const char* what) { return std::to_string(k) + " " + what; }

// ---- inputs ---------------------------------------------------------------------------------------

template <class T>
struct Inputs {
    std::vector<T> a;       // the matrices, packed; the triangle opposite to uplo is NaN
    std::vector<T> factor;  // potrs: the CPU reference's factor of `a` (its input A)
    std::vector<T> x, b;    // potrs, posv: the known solution and B = A X
    const std::vector<T>& routine_a(Routine r) const { return r == Routine::potrs ? factor : a; }
};

template <class T>
Inputs<T> make_inputs(const CaseSpec& c, const Settings& s, Context& cpu) {
    Inputs<T> in;
    const int n = c.n, count = c.batch, nrhs = c.nrhs;
    const std::size_t nn = std::size_t(n) * n;
    const bool with_rhs = c.routine != Routine::potrf;
    const int distinct = std::min(count, s.distinct);
    // matrix k of `batch` (count matrices of nn elements) := matrix k % distinct
    const auto repeat_distinct = [&](std::vector<T>& batch) {
#pragma omp parallel for
        for (int k = distinct; k < count; ++k)
            std::copy_n(batch.begin() + nn * (k % distinct), nn, batch.begin() + nn * k);
    };
    if (n > 0) {  // the generators run on all host threads themselves
        in.a = generate_spd_batch<T>(n, distinct, s.cond, mix(c.seed, 0));
        in.a.resize(nn * count);
        repeat_distinct(in.a);
        if (with_rhs) {
            RhsWithSolution<T> rhs = generate_rhs_batch<T>(in.a, n, count, nrhs, mix(c.seed, 1));
            in.x = std::move(rhs.x), in.b = std::move(rhs.b);
        }
    }
    // Poisoned: a routine that reads the other triangle spreads NaN into its result, one that
    // writes it is caught by other_triangle_written.
#pragma omp parallel for
    for (int k = 0; k < count; ++k)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                if (in_other_triangle(c.uplo, i, j)) in.a[nn * k + std::size_t(j) * n + i] = nan_value<T>();
    if (c.routine == Routine::potrs) {
        // The distinct matrices are factored once and their factors repeated as the matrices are (at
        // batch 16384 and --distinct 1024 this is 16 times less CPU work per potrs row).
        in.factor = in.a;
        std::vector<int> info(distinct, -1);
        if (distinct > 0)
            potrf_batched<T>(c.uplo, BatchView<T>::column_major(in.factor.data(), n, n, std::max(1, n), nn, distinct),
                             info.data(), cpu);
        const auto bad = std::count_if(info.begin(), info.end(), [](int v) { return v != 0; });
        if (bad > 0)
            throw Error("the CPU reference could not factor " + std::to_string(bad) + " of the " +
                        std::to_string(distinct) + " distinct generated matrices for potrs (lower --cond)");
        repeat_distinct(in.factor);
    }
    return in;
}

// ---- layouts on the host --------------------------------------------------------------------------

template <class T>
BatchView<T> make_view(LayoutKind layout, T* data, T* const* pointers, int rows, int cols, int count, int chunk) {
    const int ld = std::max(1, rows);
    switch (layout) {
        case LayoutKind::column_major: return BatchView<T>::column_major(data, rows, cols, ld, std::int64_t(ld) * cols, count);
        case LayoutKind::pointer_array: return BatchView<T>::pointer_array(pointers, rows, cols, ld, count);
        case LayoutKind::interleaved: return BatchView<T>::interleaved(data, rows, cols, count);
        case LayoutKind::chunked_interleaved: return BatchView<T>::chunked(data, rows, cols, count, chunk);
    }
    throw Error("unknown layout");
}

// Moves matrices between packed column-major and the storage order of an interleaved layout, with
// the index formula of batch.hpp (independent of the library's own conversion routines). Column-major
// and pointer-array sets store packed matrices, so they need no conversion.
template <class T>
void interleave(const T* packed, T* image, LayoutKind layout, int rows, int cols, int count, int chunk) {
    const BatchView<T> v = make_view<T>(layout, image, nullptr, rows, cols, count, chunk);
    const std::size_t mn = std::size_t(rows) * cols;
    parallel_chunks(count, kHostChunk, [&](int, int k0, int m) {
        for (int k = k0; k < k0 + m; ++k)
            for (int j = 0; j < cols; ++j)
                for (int i = 0; i < rows; ++i) image[v.offset(k, i, j)] = packed[mn * k + std::size_t(j) * rows + i];
    });
}

template <class T>
void deinterleave(const T* image, T* packed, LayoutKind layout, int rows, int cols, int count, int chunk) {
    const BatchView<const T> v = make_view<const T>(layout, image, nullptr, rows, cols, count, chunk);
    const std::size_t mn = std::size_t(rows) * cols;
    parallel_chunks(count, kHostChunk, [&](int, int k0, int m) {
        for (int k = k0; k < k0 + m; ++k)
            for (int j = 0; j < cols; ++j)
                for (int i = 0; i < rows; ++i) packed[mn * k + std::size_t(j) * rows + i] = image[v.offset(k, i, j)];
    });
}

// ---- memory of the backend that runs --------------------------------------------------------------

// Raw operations in a context's memory: host memory (memcpy) for cpu, device memory ordered on the
// context's stream for cuda.
class Memory {
public:
    explicit Memory(Context& ctx) : ctx_(ctx), device_(ctx.backend() == Backend::cuda) {}
    bool device() const { return device_; }
    Context& context() const { return ctx_; }
    void copy(void* dst, const void* src, std::size_t bytes) const {
        if (device_) device_copy_async(dst, src, bytes, ctx_.stream());
        else if (bytes > 0) std::memcpy(dst, src, bytes);
    }
    void fill(void* dst, unsigned char value, std::size_t bytes) const {
        if (device_) device_fill_async(dst, value, bytes, ctx_.stream());
        else if (bytes > 0) std::memset(dst, value, bytes);
    }
    void put(void* dst, const void* host, std::size_t bytes) const {
        if (device_) upload(dst, host, bytes, ctx_.stream());
        else if (bytes > 0) std::memcpy(dst, host, bytes);
    }
    void get(void* host, const void* src, std::size_t bytes) const {
        if (device_) download(host, src, bytes, ctx_.stream());
        else if (bytes > 0) std::memcpy(host, src, bytes);
    }

private:
    Context& ctx_;
    bool device_;
};

std::size_t align_up(std::size_t bytes) { return (bytes + kRegionAlign - 1) / kRegionAlign * kRegionAlign; }

// Where the regions of one input set lie: [A | B | info], each aligned.
struct SetShape {
    std::size_t a_bytes = 0, b_bytes = 0, info_bytes = 0;
    std::size_t a_offset = 0, b_offset = 0, info_offset = 0, pitch = 0;
    std::size_t pointer_bytes = 0;  // pointer arrays of one set (pointer_array layout), stored apart

    template <class T>
    static SetShape of(Routine r, LayoutKind layout, int n, int nrhs, int count) {
        SetShape s;
        s.a_bytes = std::size_t(count) * n * n * sizeof(T);
        if (r != Routine::potrf) s.b_bytes = std::size_t(count) * n * nrhs * sizeof(T);
        if (r != Routine::potrs) s.info_bytes = std::size_t(count) * sizeof(int);
        s.b_offset = align_up(s.a_bytes);
        s.info_offset = s.b_offset + align_up(s.b_bytes);
        s.pitch = std::max(kRegionAlign, s.info_offset + align_up(s.info_bytes));
        if (layout == LayoutKind::pointer_array)
            s.pointer_bytes = std::size_t(count) * sizeof(T*) * (r == Routine::potrf ? 1 : 2);
        return s;
    }
};

// How many sets to rotate: on a GPU, enough that together they exceed twice the L2 cache (at least
// two), capped by free device memory; on the CPU one (restored by memcpy before each run).
int choose_set_count(const SetShape& shape, const Settings& s, const Memory& mem) {
    if (!mem.device()) return 1;
    const double per_set = double(shape.pitch + shape.pointer_bytes);
    // Restored before every call (cuSolverDx's method): one set is enough.
    const double wanted = s.restore_each_call ? 1.0 : std::max(2.0, std::floor(2.0 * double(s.l2_bytes) / per_set) + 1);
    // Besides the sets: the pristine copy, the cache-flush buffer, and room for the library's
    // workspace (an internal layout conversion may need a copy of the batch).
    const double budget = kDeviceMemoryShare * double(gpu_free_bytes()) - 2.0 * double(shape.pitch) -
                          2.0 * double(s.l2_bytes);
    const double fits = std::floor(budget / per_set);
    if (fits < 1)
        throw Skip("not enough device memory (" + std::to_string(shape.pitch >> 20) + " MiB per input set, " +
                   std::to_string(gpu_free_bytes() >> 20) + " MiB free)");
    return int(std::min(wanted, fits));
}

// S copies ("sets") of a case's inputs in one allocation, restored together from a pristine copy.
// Pointer arrays (pointer_array layout) live apart and are never overwritten.
template <class T>
class InputSets {
public:
    InputSets(const Memory& mem, const SetShape& shape, int sets, LayoutKind layout, int chunk, int n, int nrhs,
              int count, const std::vector<T>& a, const std::vector<T>* b, std::size_t flush_bytes)
        : mem_(mem), shape_(shape), sets_(sets), layout_(layout), chunk_(chunk), n_(n), nrhs_(nrhs), count_(count),
          pristine_(mem.context(), shape.pitch), work_(mem.context(), shape.pitch * std::size_t(sets)) {
        // restore_all copies whole pitches, the alignment padding after A, B and info included:
        // zeroed once here, so that no copy reads bytes nobody wrote (compute-sanitizer initcheck
        // reported each restore's copy of the padding after info, issue 22).
        mem_.fill(pristine_.data(), 0, shape.pitch);
        put_image(a, n, pristine_.data() + shape.a_offset);
        if (b != nullptr) put_image(*b, nrhs, pristine_.data() + shape.b_offset);
        mem_.fill(pristine_.data() + shape.info_offset, 0xFF, shape.info_bytes);  // info poisoned to -1
        if (layout == LayoutKind::pointer_array) {
            a_pointers_ = make_pointers(shape.a_offset, std::size_t(n) * n);
            if (b != nullptr) b_pointers_ = make_pointers(shape.b_offset, std::size_t(n) * nrhs);
        }
        if (mem_.device() && flush_bytes > 0) {
            flush_ = Buffer<std::byte>(mem.context(), flush_bytes);
            mem_.fill(flush_.data(), 0, flush_bytes);  // flush_cache_by_reading reads zeros
        }
    }

    int count() const { return sets_; }

    // Every set gets the pristine inputs again: one copy into set 0, then doubling copies (set 0..k-1
    // into k..2k-1), so restoring thousands of small sets costs a handful of calls.
    void restore_all() {
        std::byte* base = work_.data();
        if (!mem_.device()) {
            restore_on_host_threads(base);
            return;
        }
        mem_.copy(base, pristine_.data(), shape_.pitch);
        for (std::size_t done = 1; done < std::size_t(sets_);) {
            const std::size_t k = std::min(done, std::size_t(sets_) - done);
            mem_.copy(base + done * shape_.pitch, base, k * shape_.pitch);
            done += k;
        }
    }
    // The CPU backend's set (always one, see choose_set_count): A and B copied matrix by matrix in a
    // static OpenMP loop, the split of the library's and LAPACKE's own loops over the matrices, so
    // that each thread's matrices lie in the cache of the core that will work on them, as after a
    // parallel producer. One memcpy on one thread would leave the whole batch in that core's cache
    // (and, past a few MB, glibc's memcpy streams it past the caches): every timed call would begin
    // with transfers a caller's code does not cause (1.6x the time at d n = 8 on the build host).
    // info is written by the calling thread, as a caller's `std::vector<int> info(count)` is.
    // cpu_small_bench, whose figures the tester reproduces, restored exactly so.
    void restore_on_host_threads(std::byte* base) {
        std::memcpy(base + shape_.info_offset, pristine_.data() + shape_.info_offset, shape_.pitch - shape_.info_offset);
        const std::size_t a_each = shape_.a_bytes / std::size_t(count_), b_each = shape_.b_bytes / std::size_t(count_);
        const std::byte* from = pristine_.data();
#pragma omp parallel for schedule(static)
        for (int k = 0; k < count_; ++k) {
            std::memcpy(base + a_each * k, from + a_each * k, a_each);
            if (b_each > 0) std::memcpy(base + shape_.b_offset + b_each * k, from + shape_.b_offset + b_each * k, b_each);
        }
        // bytes a per-matrix split leaves over (none for the dense layouts) and the padding after A, B
        const std::size_t a_done = a_each * count_, b_done = b_each * count_;
        std::memcpy(base + a_done, from + a_done, shape_.b_offset - a_done);
        std::memcpy(base + shape_.b_offset + b_done, from + shape_.b_offset + b_done, shape_.info_offset - shape_.b_offset - b_done);
    }
    // Evicts the sets from the GPU's L2 by writing a buffer twice its size.
    void flush_cache() {
        if (flush_.size() > 0) mem_.fill(flush_.data(), 0, flush_.size());
    }
    // Evicts them by reading it (zeros, written once): the L2 then holds clean lines only, as after
    // cuSolverDx's benchmark's flush.
    void flush_cache_by_reading() {
        if (flush_.size() == 0) return;
        device_read_async(flush_.data(), flush_.size() / 16 * 16, mem_.context().stream());
    }

    BatchView<T> a(int s) const {
        return make_view<T>(layout_, region<T>(s, shape_.a_offset), pointers(a_pointers_, s), n_, n_, count_, chunk_);
    }
    BatchView<T> b(int s) const {
        return make_view<T>(layout_, region<T>(s, shape_.b_offset), pointers(b_pointers_, s), n_, nrhs_, count_, chunk_);
    }
    int* info(int s) const { return region<int>(s, shape_.info_offset); }
    // Pointers to column j of every B of every set (set s's at [s * count, (s + 1) * count)), for
    // cuSOLVER's potrsBatched, which takes one column per call: built once, outside any timed region.
    Buffer<T*> column_pointers(int j) const {
        std::vector<T*> host(std::size_t(sets_) * count_);
        for (int s = 0; s < sets_; ++s)
            for (int k = 0; k < count_; ++k)
                host[std::size_t(s) * count_ + k] = region<T>(s, shape_.b_offset) + std::size_t(n_) * nrhs_ * k +
                                                    std::size_t(n_) * j;
        return Buffer<T*>(mem_.context(), host);
    }

    // The outputs of set s, on the host: A or B as packed column-major, info.
    std::vector<T> get_a(int s) const { return get_image(s, shape_.a_offset, n_); }
    std::vector<T> get_b(int s) const { return get_image(s, shape_.b_offset, nrhs_); }
    std::vector<int> get_info(int s) const {
        std::vector<int> host(shape_.info_bytes / sizeof(int));
        mem_.get(host.data(), info(s), shape_.info_bytes);
        return host;
    }

private:
    template <class U>
    U* region(int s, std::size_t offset) const {
        return reinterpret_cast<U*>(work_.data() + std::size_t(s) * shape_.pitch + offset);
    }
    T* const* pointers(const Buffer<T*>& array, int s) const {
        return layout_ == LayoutKind::pointer_array ? array.data() + std::size_t(s) * count_ : nullptr;
    }
    bool interleaved() const {
        return layout_ == LayoutKind::interleaved || layout_ == LayoutKind::chunked_interleaved;
    }
    void put_image(const std::vector<T>& packed, int cols, std::byte* dst) {
        if (!interleaved()) return mem_.put(dst, packed.data(), packed.size() * sizeof(T));
        std::vector<T> image(packed.size());
        interleave(packed.data(), image.data(), layout_, n_, cols, count_, chunk_);
        mem_.put(dst, image.data(), image.size() * sizeof(T));
    }
    std::vector<T> get_image(int s, std::size_t offset, int cols) const {
        std::vector<T> packed(std::size_t(count_) * n_ * cols);
        if (!interleaved()) {
            mem_.get(packed.data(), region<T>(s, offset), packed.size() * sizeof(T));
            return packed;
        }
        std::vector<T> image(packed.size());
        mem_.get(image.data(), region<T>(s, offset), image.size() * sizeof(T));
        deinterleave(image.data(), packed.data(), layout_, n_, cols, count_, chunk_);
        return packed;
    }
    Buffer<T*> make_pointers(std::size_t offset, std::size_t matrix_elements) {
        std::vector<T*> host(std::size_t(sets_) * count_);
        for (int s = 0; s < sets_; ++s)
            for (int k = 0; k < count_; ++k) host[std::size_t(s) * count_ + k] = region<T>(s, offset) + matrix_elements * k;
        return Buffer<T*>(mem_.context(), host);
    }

    Memory mem_;
    SetShape shape_;
    int sets_;
    LayoutKind layout_;
    int chunk_, n_, nrhs_, count_;
    Buffer<std::byte> pristine_, work_, flush_;
    Buffer<T*> a_pointers_, b_pointers_;
};

// Times single calls: CUDA events on the context's stream on a GPU, steady_clock on the CPU.
class CallTimer {
public:
    explicit CallTimer(Context& ctx) : ctx_(ctx) {
        if (ctx.backend() == Backend::cuda) events_ = std::make_unique<EventTimer>(ctx.stream());
    }
    void start() {
        if (events_) events_->start();
        else t0_ = std::chrono::steady_clock::now();
    }
    double stop_ms() {
        if (events_) {
            events_->stop();
            return events_->elapsed_ms();
        }
        ctx_.synchronize();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    }

private:
    Context& ctx_;
    std::unique_ptr<EventTimer> events_;
    std::chrono::steady_clock::time_point t0_;
};

// Warm-up, then `repeat` timed calls. Each round restores every set from the pristine copy and
// flushes the L2, all outside the timed region and finished before the first call, then times one
// call per set in turn, so every timed call works on fresh (unfactored) data that no earlier call
// left in the cache. Returns the timing and the set of the last timed call, whose outputs are then
// checked.
template <class T>
std::pair<Timing, int> time_calls(InputSets<T>& sets, const Settings& s, Context& ctx,
                                  const std::function<void(int)>& call) {
    if (s.restore_each_call && ctx.backend() == Backend::cuda) {
        // cuSolverDx's benchmark's sequence, step for step: warm-ups on restored inputs; then per timed
        // call restore, flush by reading, start event, call, stop event, wait; all on one stream.
        sets.flush_cache_by_reading();  // the zeros the constructor wrote leave the L2 clean
        for (int w = 0; w < s.warmup; ++w) {
            sets.restore_all();
            call(0);
        }
        ctx.synchronize();
        Timing t;
        t.sets = sets.count();
        CallTimer timer(ctx);
        for (int r = 0; r < s.repeat; ++r) {
            sets.restore_all();
            sets.flush_cache_by_reading();
            timer.start();
            call(0);
            t.samples_ms.push_back(timer.stop_ms());
        }
        ctx.synchronize();
        t.median_ms = median(t.samples_ms);
        return {t, 0};
    }
    sets.restore_all();
    for (int w = 0; w < s.warmup; ++w) {
        if (w > 0 && w % sets.count() == 0) sets.restore_all();
        call(w % sets.count());
    }
    ctx.synchronize();
    Timing t;
    t.sets = sets.count();
    CallTimer timer(ctx);
    int last = 0;
    while (int(t.samples_ms.size()) < s.repeat) {
        sets.restore_all();
        sets.flush_cache();
        ctx.synchronize();  // every timed call starts on an idle GPU (queued work would hide its launch latency)
        for (int k = 0; k < sets.count() && int(t.samples_ms.size()) < s.repeat; ++k) {
            timer.start();
            call(k);
            t.samples_ms.push_back(timer.stop_ms());
            last = k;
        }
    }
    ctx.synchronize();
    t.median_ms = median(t.samples_ms);
    return {t, last};
}

// ---- one implementation on one backend -----------------------------------------------------------

// library: batchsolve on the context's backend; vendor: cuSOLVER's batched calls directly (pointer
// arrays); lapacke / lapacke1: LAPACKE per matrix on all host threads / on one.
enum class Impl { library, vendor, lapacke, lapacke1 };

template <class T>
struct RunOutput {
    Timing timing;
    std::vector<int> info;
    std::vector<T> a, x;  // packed outputs (factor, solution), when asked for
};

template <class T>
RunOutput<T> run_impl(Impl impl, const CaseSpec& c, const Settings& s, Context& ctx, LayoutKind layout,
                      const Inputs<T>& in, bool want_outputs) {
    const Memory mem(ctx);
    const int nrhs = c.routine == Routine::potrf ? 0 : c.nrhs;
    const SetShape shape = SetShape::of<T>(c.routine, layout, c.n, nrhs, c.batch);
    const int set_count = choose_set_count(shape, s, mem);
    InputSets<T> sets(mem, shape, set_count, layout, c.chunk, c.n, nrhs, c.batch, in.routine_a(c.routine),
                      c.routine == Routine::potrf ? nullptr : &in.b, 2 * s.l2_bytes);
    const Uplo uplo = c.uplo;
    std::function<void(int)> call;
    std::vector<Buffer<T*>> columns;  // vendor: pointers to column j of every B
    Buffer<int> status;               // vendor: potrsBatched's argument-check status
    if (impl == Impl::library && s.fast_math && ctx.backend() == Backend::cuda) {
        // The configuration the plain call would run, with approximate square roots and divisions.
        const KernelReport k = kernel_report(c, ctx);
        if (!k.supported) throw Skip("--fast-math: " + k.note);
        CholeskyConfig config = parse_config(k.config);
        config.fast_math = true;
        switch (c.routine) {
            case Routine::potrf: call = [&, config](int k) { potrf_batched<T>(uplo, sets.a(k), sets.info(k), config, ctx); }; break;
            case Routine::potrs: call = [&, config](int k) { potrs_batched<T>(uplo, sets.a(k), sets.b(k), config, ctx); }; break;
            case Routine::posv:
                call = [&, config](int k) { posv_batched<T>(uplo, sets.a(k), sets.b(k), sets.info(k), config, ctx); };
                break;
        }
    } else if (impl == Impl::library) {
        switch (c.routine) {
            case Routine::potrf: call = [&](int k) { potrf_batched<T>(uplo, sets.a(k), sets.info(k), ctx); }; break;
            case Routine::potrs: call = [&](int k) { potrs_batched<T>(uplo, sets.a(k), sets.b(k), ctx); }; break;
            case Routine::posv: call = [&](int k) { posv_batched<T>(uplo, sets.a(k), sets.b(k), sets.info(k), ctx); }; break;
        }
    } else if (impl == Impl::vendor) {
        // cuSOLVER alone in the timed region: the pointer arrays (one per column of B, since
        // potrsBatched solves one column per call) are built here, and the info it reports is what
        // is counted (the library's vendor path adds a NaN-pivot scan after potrfBatched: our kernel,
        // not cuSOLVER's work, so it stays out of the vendor's time).
        const int n = c.n, count = c.batch;
        for (int j = 0; j < nrhs; ++j) columns.push_back(sets.column_pointers(j));
        status = Buffer<int>(ctx, 1);
        const auto factor = [&, n, count](int k) {
            peer::cusolver_potrf_batched<T>(uplo, n, sets.a(k).pointers, std::max(1, n), sets.info(k), count, ctx.stream());
        };
        const auto solve = [&, n, count](int k) {
            for (int j = 0; j < nrhs; ++j)
                peer::cusolver_potrs_batched<T>(uplo, n, sets.a(k).pointers, std::max(1, n),
                                                columns[j].data() + std::size_t(k) * count, std::max(1, n),
                                                status.data(), count, ctx.stream());
        };
        if (c.routine == Routine::potrf) call = factor;
        else if (c.routine == Routine::potrs) call = solve;
        else call = [factor, solve](int k) { factor(k), solve(k); };
    } else {
        const int threads = impl == Impl::lapacke1 ? 1 : omp_get_max_threads();
        switch (c.routine) {
            case Routine::potrf: call = [&, threads](int k) { peer::lapacke_potrf<T>(uplo, sets.a(k), sets.info(k), threads); }; break;
            case Routine::potrs:
                call = [&, threads](int k) { peer::lapacke_potrs<T>(uplo, BatchView<const T>(sets.a(k)), sets.b(k), threads); };
                break;
            case Routine::posv:
                call = [&, threads](int k) { peer::lapacke_posv<T>(uplo, sets.a(k), sets.b(k), sets.info(k), threads); };
                break;
        }
    }
    auto [timing, last] = time_calls(sets, s, ctx, call);
    RunOutput<T> out;
    out.timing = std::move(timing);
    out.info = sets.get_info(last);
    if (want_outputs) {
        if (c.routine != Routine::potrs) out.a = sets.get_a(last);
        if (c.routine != Routine::potrf) out.x = sets.get_b(last);
    }
    return out;
}

// ---- checks ---------------------------------------------------------------------------------------

// Largest per-matrix error over the batch (the accuracy routines run on all host threads).
template <class T>
double batch_error(const CaseSpec& c, const Inputs<T>& in, const RunOutput<T>& out) {
    const std::vector<double> e =
        c.routine == Routine::potrf ? factorization_error<T>(c.uplo, in.a, out.a, c.n, c.batch)
                                    : solve_backward_error<T>(c.uplo, in.a, out.x, in.b, c.n, c.nrhs, c.batch);
    return max_or_nan(e);
}

// Matrices whose triangle opposite to uplo (NaN on input) was written.
template <class T>
int other_triangle_written(const CaseSpec& c, const std::vector<T>& factor) {
    const int n = c.n;
    const std::size_t nn = std::size_t(n) * n;
    int bad = 0;
#pragma omp parallel for reduction(+ : bad)
    for (int k = 0; k < c.batch; ++k) {
        bool written = false;
        for (int j = 0; j < n && !written; ++j)
            for (int i = 0; i < n; ++i)
                if (in_other_triangle(c.uplo, i, j) && !is_nan(factor[nn * k + std::size_t(j) * n + i])) {
                    written = true;
                    break;
                }
        bad += written;
    }
    return bad;
}

// Largest per-matrix ||Y - Y_ref||_F / (||Y_ref||_F n u cond) between the library's and the lapack
// reference's result (the factor's uplo triangle for potrf, X otherwise). Both are backward stable,
// so the difference is bounded by the condition number times the backward errors: O(1) when right.
template <class T>
double difference_from_reference(const CaseSpec& c, const Settings& s, const std::vector<T>& y,
                                 const std::vector<T>& ref) {
    const int n = c.n;
    if (n == 0) return 0;
    const bool factor = c.routine == Routine::potrf;
    const int cols = factor ? n : c.nrhs;
    const std::size_t per = std::size_t(n) * cols;
    const double scale = double(n) * double(unit_roundoff<T>()) * s.cond;
    double worst = 0;
#pragma omp parallel for reduction(max : worst)
    for (int k = 0; k < c.batch; ++k) {
        long double diff = 0, norm = 0;
        for (int j = 0; j < cols; ++j)
            for (int i = 0; i < n; ++i) {
                if (factor && in_other_triangle(c.uplo, i, j)) continue;
                const std::size_t e = per * k + std::size_t(j) * n + i;
                diff += std::norm(std::complex<long double>(y[e]) - std::complex<long double>(ref[e]));
                norm += std::norm(std::complex<long double>(ref[e]));
            }
        double d = norm > 0 ? double(std::sqrt(diff / norm)) / scale : double(std::sqrt(diff)) / scale;
        if (std::isnan(d)) d = std::numeric_limits<double>::infinity();  // a NaN must not pass
        worst = std::max(worst, d);
    }
    return worst;
}

int count_info_failures(const std::vector<int>& info) {
    return int(std::count_if(info.begin(), info.end(), [](int v) { return v != 0; }));
}

std::string describe_info(const std::vector<int>& info) {
    const int bad = count_info_failures(info);
    const auto first = std::find_if(info.begin(), info.end(), [](int v) { return v != 0; });
    std::string text = "info != 0 in " + with_count(bad, "matrices");
    if (first != info.end())
        text += " (first: matrix " + std::to_string(first - info.begin()) + ", info " + std::to_string(*first) +
                (*first == -1 ? ", never written" : "") + ")";
    return text;
}

void add_note(std::string& notes, const std::string& note) { notes += (notes.empty() ? "" : "; ") + note; }

// The same inputs: everything that make_inputs depends on is equal.
bool same_inputs(const CaseSpec& a, const CaseSpec& b) {
    return a.routine == b.routine && a.precision == b.precision && a.uplo == b.uplo && a.n == b.n &&
           a.batch == b.batch && a.nrhs == b.nrhs && a.seed == b.seed;
}

// An environment variable set for a scope, the previous value (or its absence) restored after it. The
// library reads BATCHSOLVE_CPU_SIMD at every call.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        const char* old = std::getenv(name);
        had_ = old != nullptr;
        if (had_) old_ = old;
        ::setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (had_) ::setenv(name_, old_.c_str(), 1);
        else ::unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    bool had_ = false;
    std::string old_;
};

// cuSolverDx's figure of this case from bench_cusolverdx (run once for the whole sweep: by the tester at
// start, before its own GPU work, or here when a caller did not). It has real s and d, lower, column-major (ld = n), potrf and posv with one
// right-hand side, and the orders its configurations were generated for; the rest say why not. Its
// matrices are its own random SPD ones: without pivoting a Cholesky's work does not depend on the values.
void cusolverdx_figure(const CaseSpec& c, const Settings& s, RefResult& ref) {
    ref.layout = "column_major";
    const char p = precision_letter(c.precision);
    if (p != 's' && p != 'd') return void(ref.note = "real s and d only");
    if (c.routine == Routine::potrs) return void(ref.note = "potrf and posv only");
    if (c.routine == Routine::posv && c.nrhs != 1) return void(ref.note = "posv with one right-hand side only");
    if (c.uplo != Uplo::lower) return void(ref.note = "lower only");
    if (s.cusolverdx == nullptr) return void(ref.note = "bench_cusolverdx not found");
    peer::CusolverDx& dx = *s.cusolverdx;
    dx.run();
    std::string note;
    const peer::DxFigure* f = dx.find(p, c.n, c.batch, to_string(c.routine), note);
    if (f == nullptr) return void(ref.note = note);
    ref.config = f->config;
    ref.self_error = f->error;
    ref.figures = {{"suggested_ms", f->suggested_ms}, {"cusolver_ms", f->cusolver_ms},
                   {"configurations_rejected", double(f->rejected)}};
    // A configuration whose result fails the check gives no figure (bench_cusolverdx falls back to one
    // when none passed): held to the tester's tolerance in its own units of n u.
    if (!(f->error < s.tolerance)) {
        char text[160];
        std::snprintf(text, sizeof text, "its best configuration %s failed its own check (error %.3g n u, limit %g)",
                      f->config.c_str(), f->error, s.tolerance);
        return void(ref.note = text);
    }
    ref.timing.median_ms = f->ms;
    ref.ran = true;
}

template <class T>
std::shared_ptr<const Inputs<T>> cached_inputs(const CaseSpec& c, const Settings& s, Context& cpu, InputCache& cache) {
    if (cache.inputs && same_inputs(cache.key, c)) return std::static_pointer_cast<const Inputs<T>>(cache.inputs);
    cache.inputs.reset();  // before generating: never two batches in memory
    auto in = std::make_shared<const Inputs<T>>(make_inputs<T>(c, s, cpu));
    cache.key = c, cache.inputs = in;
    return in;
}

template <class T>
CaseResult run_case_t(const CaseSpec& c, const Settings& s, Context& cpu, Context* gpu, InputCache& cache) {
    CaseResult r;
    const double batch_flops = flops_per_matrix(c.routine, c.precision, c.n, c.nrhs) * c.batch;
    const auto gflops = [&](double ms) { return ms > 0 ? batch_flops / (ms * 1e-3) / 1e9 : 0.0; };
    r.bytes = roofline_bytes_per_matrix(c.routine, c.precision, c.n, c.nrhs) * c.batch;
    for (const std::string& name : s.refs) {
        r.refs.emplace_back();
        r.refs.back().name = name;
    }

    const bool lib_on_gpu = c.backend == Backend::cuda;
    if (lib_on_gpu && gpu == nullptr) r.status = Status::skipped, r.note = "no GPU";
    // The host references run even when the library's row is skipped (no GPU): their rows still say
    // something.
    const bool wants_host = std::any_of(s.refs.begin(), s.refs.end(), [](const std::string& name) {
        return name == "lapack" || name == "lapack1" || name == "cpu" || name == "cpu-lapacke";
    });
    if (r.status == Status::skipped && !wants_host) {
        for (RefResult& ref : r.refs) ref.note = "not run";
        return r;
    }

    std::shared_ptr<const Inputs<T>> inputs;
    try {
        inputs = cached_inputs<T>(c, s, cpu, cache);
    } catch (const std::exception& e) {
        r.status = Status::failed, r.note = std::string("input generation: ") + e.what();
        return r;
    }
    const Inputs<T>& in = *inputs;

    RunOutput<T> lib;
    if (r.status != Status::skipped) {
        try {
            lib = run_impl<T>(Impl::library, c, s, lib_on_gpu ? *gpu : cpu, c.layout, in, s.check);
            r.ran = true;
            if (lib_on_gpu) r.kernel = kernel_report(c, *gpu);  // compiled by the call above: a cache hit
            r.timing = lib.timing;
            r.gflops = gflops(r.timing.median_ms);
            if (lib_on_gpu && s.bandwidth > 0 && r.timing.median_ms > 0)
                r.roofline = r.bytes / (r.timing.median_ms * 1e-3) / s.bandwidth;
            const double peak = c.precision == Precision::s || c.precision == Precision::c ? s.cpu_peak_s : s.cpu_peak_d;
            if (!lib_on_gpu && peak > 0) r.roofline = r.gflops / peak;
        } catch (const Skip& e) {
            r.status = Status::skipped, r.note = e.what();
        } catch (const std::exception& e) {
            r.status = Status::failed, r.note = e.what();
        }
    }

    // The results are compared with LAPACK's (lapack, else lapack1): never with our own CPU backend.
    RunOutput<T> lapack;
    bool lapack_ok = false;
    for (RefResult& ref : r.refs) {
        try {
            RunOutput<T> out;
            const bool is_lapack = ref.name == "lapack" || ref.name == "lapack1";
            if (is_lapack) {
                const bool keep = s.check && r.ran && !lapack_ok;
                out = run_impl<T>(ref.name == "lapack" ? Impl::lapacke : Impl::lapacke1, c, s, cpu,
                                  LayoutKind::column_major, in, keep);
            } else if (ref.name == "cpu") {  // our CPU backend as a contestant
                out = run_impl<T>(Impl::library, c, s, cpu, LayoutKind::column_major, in, false);
            } else if (ref.name == "cpu-lapacke") {  // the same with its vector path off: its LAPACKE loop
                const ScopedEnv off("BATCHSOLVE_CPU_SIMD", "off");
                out = run_impl<T>(Impl::library, c, s, cpu, LayoutKind::column_major, in, false);
            } else if (ref.name == "cusolverdx") {
                if (gpu == nullptr) {
                    ref.note = "no GPU";
                    continue;
                }
                cusolverdx_figure(c, s, ref);
                if (ref.ran) ref.gflops = gflops(ref.timing.median_ms);
                continue;
            } else {  // cusolver: column-major copies behind pointer arrays, as potrfBatched takes them
                if (gpu == nullptr) {
                    ref.note = "no GPU";
                    continue;
                }
                if (c.n == 0) {  // nothing for cuSOLVER to do, and its info for n = 0 is not documented
                    ref.note = "n = 0: not timed";
                    continue;
                }
                out = run_impl<T>(Impl::vendor, c, s, *gpu, LayoutKind::pointer_array, in, false);
            }
            ref.timing = out.timing;
            ref.info_failures = count_info_failures(out.info);
            if (ref.info_failures > 0) ref.note = describe_info(out.info);
            ref.ran = true;
            ref.gflops = gflops(ref.timing.median_ms);
            if (is_lapack && !lapack_ok && ref.info_failures == 0 && (!out.a.empty() || !out.x.empty())) {
                lapack = std::move(out);
                lapack_ok = true;
            }
        } catch (const std::exception& e) {
            ref.note = e.what();
        }
    }
    if (!r.ran) return r;

    r.info_failures = count_info_failures(lib.info);
    if (r.info_failures > 0) add_note(r.note, describe_info(lib.info));
    if (s.check) {
        r.checked = true;
        r.error = batch_error<T>(c, in, lib);
        if (!(r.error < s.tolerance)) add_note(r.note, "error above tolerance");
        if (c.routine != Routine::potrs) {
            const int written = other_triangle_written<T>(c, lib.a);
            if (written > 0) add_note(r.note, "wrote the other triangle of " + with_count(written, "matrices"));
        }
        if (lapack_ok) {  // lapack ran after the library and kept its outputs
            r.compared = true;
            r.vs_lapack = c.routine == Routine::potrf ? difference_from_reference<T>(c, s, lib.a, lapack.a)
                                                      : difference_from_reference<T>(c, s, lib.x, lapack.x);
            if (!(r.vs_lapack < s.tolerance)) add_note(r.note, "differs from lapack");
        }
    }
    if (!r.note.empty()) r.status = Status::failed;
    return r;
}

}  // namespace

double flops_per_matrix(Routine r, Precision p, int n, int nrhs) {
    const double nd = n, factor = nd * nd * nd / 3, solve = 2 * nd * nd * nrhs;
    const double real = r == Routine::potrf ? factor : r == Routine::potrs ? solve : factor + solve;
    return (p == Precision::c || p == Precision::z ? 4 : 1) * real;
}

double roofline_bytes_per_matrix(Routine r, Precision p, int n, int nrhs) {
    const double size = p == Precision::s ? 4 : p == Precision::d || p == Precision::c ? 8 : 16;
    const double triangle = 0.5 * n * (n + 1.0), rhs = 2.0 * n * nrhs;
    const double elements = r == Routine::potrf ? 2 * triangle : r == Routine::potrs ? triangle + rhs : 2 * triangle + rhs;
    return elements * size;
}

std::uint64_t case_seed(std::uint64_t run_seed, Precision p, int n, int batch) {
    return mix(mix(mix(run_seed, std::uint64_t(p)), std::uint64_t(n)), std::uint64_t(batch));
}

template <class T>
KernelReport kernel_report_t(const CaseSpec& c, Context& gpu) {
    // Only the shape is read: no data, and ld = n for pointer arrays as the input sets use.
    const BatchView<const T> shape = make_view<const T>(c.layout, nullptr, nullptr, c.n, c.n, c.batch, c.chunk);
    return prepare_kernel<T>(to_string(c.routine), c.uplo, shape, c.nrhs, gpu);
}

KernelReport kernel_report(const CaseSpec& spec, Context& gpu) {
    switch (spec.precision) {
        case Precision::s: return kernel_report_t<float>(spec, gpu);
        case Precision::d: return kernel_report_t<double>(spec, gpu);
        case Precision::c: return kernel_report_t<std::complex<float>>(spec, gpu);
        case Precision::z: return kernel_report_t<std::complex<double>>(spec, gpu);
    }
    throw Error("unknown precision");
}

CaseResult run_case(const CaseSpec& spec, const Settings& settings, Context& cpu, Context* gpu, InputCache& cache) {
    switch (spec.precision) {
        case Precision::s: return run_case_t<float>(spec, settings, cpu, gpu, cache);
        case Precision::d: return run_case_t<double>(spec, settings, cpu, gpu, cache);
        case Precision::c: return run_case_t<std::complex<float>>(spec, settings, cpu, gpu, cache);
        case Precision::z: return run_case_t<std::complex<double>>(spec, settings, cpu, gpu, cache);
    }
    throw Error("unknown precision");
}

}  // namespace batchsolve::validation
