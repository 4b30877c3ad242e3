// The autotuner's measurements: the inputs of a (precision, n) group on the host and the device, and
// the timing of one case's candidates (Bench: input sets restored and the L2 flushed outside the
// timed region, as the tester does).
#pragma once

#include <cmath>
#include <future>

#include "compile_pool.hpp"
#include "stages.hpp"

namespace batchsolve::autotune {

// One (precision, n): the distinct matrices A, their factors L and right-hand sides B on the host
// (packed column-major bytes), then the whole batch of each on the device.
struct HostInputs {
    std::vector<std::byte> a, l, b;
    int distinct = 0;
};

HostInputs make_host_inputs(Precision p, int n, int nrhs, int distinct, double cond, std::uint64_t seed);
std::uint64_t mix(std::uint64_t a, std::uint64_t b);  // splitmix64 of a combination: independent seeds
// Fills `total` bytes at `base` by repeating its first `unit` bytes (doubling device copies).
void replicate(std::byte* base, std::size_t unit, std::size_t total, void* stream);

struct Group {
    Precision precision = Precision::s;
    int n = 0;
    std::uint64_t seed = 0;
    std::future<HostInputs> host;
    bool generating = false, resident = false, failed = false;
    // Which device copies the group's cases read: potrf and posv factor A, potrs solves with L. Each
    // is a whole batch (d n = 128 at batch 100000: 13.1 GB), so only those needed are made.
    bool needs_a = false, needs_l = false;
    int open_cases = 0;  // neither done nor skipped; the device copies are freed at 0
    std::string error;
    Buffer<std::byte> a, l, b;  // device, packed column-major, the whole batch
};

// The group's batches on the device, from its host inputs.
void make_resident(Group& g, const HostInputs& h, int batch, int nrhs, Context& ctx);

// ---- timing -----------------------------------------------------------------------------------------

// Device memory the timing reuses: [pristine | set 0 | set 1 | ...] and the cache-flush buffer.
class Workspace {
public:
    std::byte* get(Context& ctx, std::size_t bytes) {
        if (buffer_.size() < bytes) {
            buffer_ = Buffer<std::byte>();  // free first: both may not fit
            buffer_ = Buffer<std::byte>(ctx, bytes);
        }
        return buffer_.data();
    }
    std::size_t size() const { return buffer_.size(); }
    void release() { buffer_ = Buffer<std::byte>(); }  // the next get() allocates again

private:
    Buffer<std::byte> buffer_;
};

// Times the candidates of one case: input sets in the case's layout, restored from a pristine copy
// and the L2 flushed outside the timed region, as the tester does.
template <class T>
class Bench {
public:
    Bench(const CaseKey& key, const Options& opt, Group& group, Workspace& ws, Buffer<std::byte>& flush, Context& ctx)
        : key_(key), opt_(opt), group_(group), ctx_(ctx), flush_(flush) {
        const std::size_t es = sizeof(T), n = std::size_t(key.n), count = std::size_t(opt.batch);
        nrhs_ = key.routine == Routine::potrf ? 0 : opt.nrhs;
        a_bytes_ = count * n * n * es;
        b_bytes_ = count * n * std::size_t(nrhs_) * es;
        info_bytes_ = key.routine == Routine::potrs ? 0 : count * sizeof(int);
        b_off_ = align_up(a_bytes_);
        info_off_ = b_off_ + align_up(b_bytes_);
        pitch_ = std::max(kRegionAlign, info_off_ + align_up(info_bytes_));
        // Enough sets that together they exceed the L2 twice (at least 2), at most --repeat, and what
        // fits in free memory next to the pristine copy.
        const std::size_t l2 = flush.size() / 2;
        std::size_t sets = std::max<std::size_t>(2, 2 * l2 / pitch_ + 1);
        sets = std::min<std::size_t>(sets, std::max(2, opt.repeat));
        const std::size_t have = ws.size();
        const double free_bytes = kDeviceMemoryShare * double(validation::gpu_free_bytes()) + double(have);
        while (sets > 1 && double(pitch_ * (sets + 1)) > free_bytes) --sets;
        if (double(pitch_ * (sets + 1)) > free_bytes)
            throw Error("not enough device memory for " + key.text() + " (" + std::to_string(pitch_ >> 20) +
                        " MiB per input set)");
        sets_ = int(sets);
        base_ = ws.get(ctx, pitch_ * (sets + 1));
    }

    int sets() const { return sets_; }

    // Builds the pristine image for `chunk` (chunked layout; ignored otherwise) and the sets.
    void prepare(int chunk) {
        if (prepared_ && (key_.family != Family::chunked || chunk == chunk_)) return;
        chunk_ = chunk;
        const LayoutKind layout = layout_of(key_.family);
        const Buffer<std::byte>& a_src = key_.routine == Routine::potrs ? group_.l : group_.a;
        auto put = [&](const Buffer<std::byte>& src, std::size_t off, std::size_t bytes, int cols) {
            if (bytes == 0) return;
            if (layout == LayoutKind::column_major) {
                validation::device_copy_async(base_ + off, src.data(), bytes, ctx_.stream());
                return;
            }
            const BatchView<const T> from = BatchView<const T>::column_major(reinterpret_cast<const T*>(src.data()),
                                                                             key_.n, cols, opt_.batch);
            convert_layout<T>(from, make_view<T>(layout, reinterpret_cast<T*>(base_ + off), key_.n, cols, opt_.batch, chunk),
                              ctx_);
        };
        put(a_src, 0, a_bytes_, key_.n);
        put(group_.b, b_off_, b_bytes_, nrhs_);
        if (info_bytes_ > 0) validation::device_fill_async(base_ + info_off_, 0xFF, info_bytes_, ctx_.stream());
        // The factor of potrs is never written: copied into every set once.
        if (key_.routine == Routine::potrs)
            for (int s = 0; s < sets_; ++s) validation::device_copy_async(set(s), base_, a_bytes_, ctx_.stream());
        ctx_.synchronize();
        prepared_ = true;
    }

    // Every set gets what the routine overwrites back from the pristine copy; then the L2 is flushed.
    void restore() {
        if (key_.routine == Routine::potrs) {
            for (int s = 0; s < sets_; ++s)
                validation::device_copy_async(set(s) + b_off_, base_ + b_off_, b_bytes_, ctx_.stream());
        } else {
            validation::device_copy_async(set(0), base_, pitch_, ctx_.stream());
            replicate(set(0), pitch_, pitch_ * sets_, ctx_.stream());
        }
        validation::device_fill_async(flush_.data(), 0, flush_.size(), ctx_.stream());
    }

    void call(const CholeskyConfig& config, int s) {
        const LayoutKind layout = layout_of(key_.family);
        const int chunk = key_.family == Family::chunked ? chunk_ : 0;
        const BatchView<T> a = make_view<T>(layout, reinterpret_cast<T*>(set(s)), key_.n, key_.n, opt_.batch, chunk);
        const BatchView<T> b = make_view<T>(layout, reinterpret_cast<T*>(set(s) + b_off_), key_.n, nrhs_, opt_.batch, chunk);
        int* info = reinterpret_cast<int*>(set(s) + info_off_);
        switch (key_.routine) {
            case Routine::potrf: potrf_batched<T>(Uplo::lower, a, info, config, ctx_); break;
            case Routine::potrs: potrs_batched<T>(Uplo::lower, BatchView<const T>(a), b, config, ctx_); break;
            case Routine::posv: posv_batched<T>(Uplo::lower, a, b, info, config, ctx_); break;
        }
    }

    // Warm-up, then --repeat timed calls (each on a fresh set), unless the first is already more than
    // kPruneFactor times `best_ms` behind.
    void time(Measured& m, double best_ms) {
        prepare(m.config.chunk_size);
        restore();
        call(m.config, 0);
        ctx_.synchronize();
        validation::EventTimer timer(ctx_.stream());
        while (int(m.samples_ms.size()) < opt_.repeat) {
            restore();
            for (int s = 0; s < sets_ && int(m.samples_ms.size()) < opt_.repeat; ++s) {
                timer.start();
                call(m.config, s);
                timer.stop();
                m.samples_ms.push_back(timer.elapsed_ms());
                if (m.samples_ms.size() == 1 && best_ms > 0 && m.samples_ms[0] > kPruneFactor * best_ms) {
                    m.pruned = true;
                    break;
                }
            }
            if (m.pruned) break;
        }
        std::vector<double> v = m.samples_ms;
        std::sort(v.begin(), v.end());
        const std::size_t k = v.size();
        m.ms = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
        m.timed = true;
    }

    // One more call on fresh inputs: every info 0 (potrf, posv), every solution entry finite (potrs,
    // posv). "" when it passes, else what failed.
    std::string sanity(const CholeskyConfig& config) {
        prepare(config.chunk_size);
        restore();
        call(config, 0);
        ctx_.synchronize();
        if (info_bytes_ > 0) {
            std::vector<int> info(std::size_t(opt_.batch));
            validation::download(info.data(), set(0) + info_off_, info_bytes_, ctx_.stream());
            const auto bad = std::count_if(info.begin(), info.end(), [](int v) { return v != 0; });
            if (bad > 0) return "info != 0 for " + std::to_string(bad) + " matrices";
        }
        if (b_bytes_ > 0) {
            std::vector<T> x(b_bytes_ / sizeof(T));
            validation::download(x.data(), set(0) + b_off_, b_bytes_, ctx_.stream());
            const auto bad = std::count_if(x.begin(), x.end(), [](const T& v) {
                if constexpr (is_complex_v<T>) return !std::isfinite(v.real()) || !std::isfinite(v.imag());
                else return !std::isfinite(v);
            });
            if (bad > 0) return std::to_string(bad) + " solution entries are not finite";
        }
        return "";
    }

private:
    std::byte* set(int s) const { return base_ + pitch_ * std::size_t(s + 1); }

    const CaseKey key_;
    const Options& opt_;
    Group& group_;
    Context& ctx_;
    Buffer<std::byte>& flush_;
    int nrhs_ = 0;
    std::size_t a_bytes_ = 0, b_bytes_ = 0, info_bytes_ = 0, b_off_ = 0, info_off_ = 0, pitch_ = 0;
    int sets_ = 1;
    std::byte* base_ = nullptr;
    int chunk_ = 0;
    bool prepared_ = false;
};

}  // namespace batchsolve::autotune
