// Shared test utilities: the (backend, precision) configurations every routine's suite is typed
// over, batches in any layout in a backend's memory (via batchsolve::Buffer), seeds, poisoning and
// comparisons.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/tuning.hpp"
#include "test_seed.hpp"

namespace batchsolve::test {

// Customary acceptance threshold of the scaled error measures (accuracy.hpp).
constexpr double kAcceptance = 30;
// 2-norm condition number of the random test matrices: mild, so that forward errors (needed to
// compare two backends' outputs) stay within kAcceptance * n * u * kCond.
constexpr double kCond = 100;

// Sizes covered by the "every n" tests: all of 1..16, then around powers of two and beyond.
inline std::vector<int> size_spread() {
    std::vector<int> sizes;
    for (int n = 1; n <= 16; ++n) sizes.push_back(n);
    for (int n : {17, 31, 32, 33, 64, 100, 128}) sizes.push_back(n);
    return sizes;
}

// Random HPD test matrices (packed, both triangles) of condition number kCond, scaled so that no
// factor equals its input (a routine that wrote nothing, even at n = 1, fails).
template <class T>
std::vector<T> test_matrices(int n, int count, std::uint64_t seed) {
    std::vector<T> a = generate_spd_batch<T>(n, count, kCond, seed);
    for (T& x : a) x *= real_t<T>(2.25);
    return a;
}

// Batch size of the "every size, every layout" tests: odd, so that chunked layouts end with a
// narrow chunk (37: 5 wide for C = 32, 2 wide for C = 7); smaller above n = 33 to bound the run
// time (9: one narrow chunk for C = 32, the last 2 wide for C = 7).
inline int batch_count_for(int n) { return n <= 33 ? 37 : 9; }

// ---- seeds: fresh_seed(), base_seed(), BATCHSOLVE_TRACE_SEED (test_seed.hpp) -------------------------

// ---- configurations: backend x precision (the named ones, cpu_s ... cuda_z, end this file) ---------

template <Backend B, class T>
struct Config {
    static constexpr Backend backend = B;
    using value_type = T;
};

// Fixture of a backend-typed suite: the context under test and, for the CUDA instance, a CPU
// reference context to compare against. CUDA instances without a usable GPU are skipped visibly.
template <class C>
class BackendTest : public ::testing::Test {
protected:
    using T = typename C::value_type;
    static constexpr bool is_cuda = C::backend == Backend::cuda;

    void SetUp() override {
        if (is_cuda && !Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
        ctx_ = std::make_unique<Context>(C::backend);
        reference_ = std::make_unique<Context>(Backend::cpu);
    }
    Context& ctx() { return *ctx_; }
    Context& reference() { return *reference_; }

private:
    std::unique_ptr<Context> ctx_, reference_;
};

// ---- layouts -------------------------------------------------------------------------------------

struct LayoutSpec {
    LayoutKind kind = LayoutKind::column_major;
    int ld_extra = 0;      // column_major, pointer_array: ld = rows + ld_extra
    int gap = 0;           // column_major: stride = ld * cols + gap; pointer_array: gap between matrices
    int chunk_size = 0;    // chunked_interleaved

    bool column_major_family() const { return kind == LayoutKind::column_major || kind == LayoutKind::pointer_array; }
    std::string name() const {
        std::string s = to_string(kind);
        if (kind == LayoutKind::chunked_interleaved) s += " C=" + std::to_string(chunk_size);
        if (column_major_family() && (ld_extra || gap))
            s += " ld=rows+" + std::to_string(ld_extra) + " gap=" + std::to_string(gap);
        return s;
    }
};

inline LayoutSpec packed_column_major() { return {LayoutKind::column_major, 0, 0, 0}; }
inline LayoutSpec padded_column_major() { return {LayoutKind::column_major, 3, 5, 0}; }
inline LayoutSpec pointer_array_layout() { return {LayoutKind::pointer_array, 2, 3, 0}; }
inline LayoutSpec interleaved_layout() { return {LayoutKind::interleaved, 0, 0, 0}; }
inline LayoutSpec chunked_layout(int chunk) { return {LayoutKind::chunked_interleaved, 0, 0, chunk}; }

// Every layout the routines accept: strided column-major packed and with ld > n, stride > ld * n;
// pointer array (matrices stored in reverse order, with gaps); interleaved; chunked with C = 32 and 7.
inline std::vector<LayoutSpec> all_layouts() {
    return {packed_column_major(), padded_column_major(), pointer_array_layout(),
            interleaved_layout(), chunked_layout(32), chunked_layout(7)};
}

// Layouts B may take with A in `a`: the same for interleaved ones; either column-major kind otherwise.
inline std::vector<LayoutSpec> rhs_layouts_for(const LayoutSpec& a) {
    if (!a.column_major_family()) return {a};
    return {padded_column_major(), pointer_array_layout()};
}

// ---- poison --------------------------------------------------------------------------------------

// The bit pattern Buffer::fill_bytes(0xFF) leaves: a NaN for floating point, -1 for int.
template <class T>
T poison_value() {
    T value;
    std::memset(static_cast<void*>(&value), 0xFF, sizeof(T));
    return value;
}

template <class T>
bool is_poison(const T& value) {
    const T p = poison_value<T>();
    return std::memcmp(&value, &p, sizeof(T)) == 0;
}

template <class T>
bool bitwise_equal(const T& x, const T& y) {
    return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// Complex conjugate that stays real for real T (std::conj would return a complex).
template <class T>
T conj_of(const T& x) {
    if constexpr (is_complex_v<T>) return std::conj(x);
    else return x;
}

// Number of entries of [first, last) that differ bit for bit between x and y (sizes must match).
template <class T>
int bitwise_differences(const std::vector<T>& x, const std::vector<T>& y, std::size_t first = 0,
                        std::size_t last = std::size_t(-1)) {
    EXPECT_EQ(x.size(), y.size()) << "test bug: comparing vectors of different sizes";
    last = std::min({last, x.size(), y.size()});
    int differ = 0;
    for (std::size_t e = first; e < last; ++e) differ += !bitwise_equal(x[e], y[e]);
    return differ;
}

// Entries uniform in [-1, 1] (both parts for complex), for data-movement tests.
template <class T>
std::vector<T> random_values(std::size_t size, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<T> values(size);
    for (T& v : values) {
        const double re = uniform(engine);
        if constexpr (is_complex_v<T>) v = T(real_t<T>(re), real_t<T>(uniform(engine)));
        else v = T(re);
    }
    return values;
}

// ---- packed host batches (column-major, ld = rows, stride = rows * cols) ---------------------------

inline std::size_t packed_index(int rows, int cols, int k, int i, int j) {
    return (std::size_t(k) * cols + j) * rows + i;
}

inline bool in_triangle(Uplo uplo, int i, int j) { return uplo == Uplo::lower ? i >= j : i <= j; }

// The triangle a routine must not read, set to NaN: reading it would poison the result.
template <class T>
std::vector<T> with_other_triangle_poisoned(std::vector<T> a, Uplo uplo, int n, int count) {
    for (int k = 0; k < count; ++k)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                if (!in_triangle(uplo, i, j)) a[packed_index(n, n, k, i, j)] = poison_value<T>();
    return a;
}

// Count of entries outside the `uplo` triangle that differ bit for bit (must stay untouched).
template <class T>
int other_triangle_changes(const std::vector<T>& before, const std::vector<T>& after, Uplo uplo, int n, int count) {
    int changed = 0;
    for (int k = 0; k < count; ++k)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                const std::size_t e = packed_index(n, n, k, i, j);
                if (!in_triangle(uplo, i, j) && !bitwise_equal(before[e], after[e])) ++changed;
            }
    return changed;
}

// Matrix k of a packed batch, as a vector of its own.
template <class T>
std::vector<T> matrix_of(const std::vector<T>& batch, int rows, int cols, int k) {
    const auto first = batch.begin() + std::ptrdiff_t(rows) * cols * k;
    return std::vector<T>(first, first + std::ptrdiff_t(rows) * cols);
}

// ||x - y||_F / ||y||_F over matrix k (only the `uplo` triangle when square and triangular).
enum class Part { whole, lower, upper };
inline Part triangle_part(Uplo uplo) { return uplo == Uplo::lower ? Part::lower : Part::upper; }

template <class T>
double relative_difference(const std::vector<T>& x, const std::vector<T>& y, int rows, int cols, int k, Part part) {
    long double d2 = 0, y2 = 0;
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i) {
            if ((part == Part::lower && i < j) || (part == Part::upper && i > j)) continue;
            const std::size_t e = packed_index(rows, cols, k, i, j);
            d2 += std::norm(std::complex<long double>(std::real(x[e]) - std::real(y[e]), std::imag(x[e]) - std::imag(y[e])));
            y2 += std::norm(std::complex<long double>(std::real(y[e]), std::imag(y[e])));
        }
    if (d2 == 0) return 0;
    return double(std::sqrt(d2 / y2));
}

// ---- a batch in a backend's memory, in any layout --------------------------------------------------

// Owns the storage of `count` rows x cols matrices in the layout `spec`, in the memory of `ctx`'s
// backend; moves packed host batches in and out with the index formulas of batch.hpp (independently
// of convert_layout). Everything outside the matrices (padding, gaps) holds the poison pattern, and
// padding_changes() counts what no longer does.
template <class T>
class BackendBatch {
public:
    BackendBatch(Context& ctx, const LayoutSpec& spec, int rows, int cols, int count)
        : spec_(spec), rows_(rows), cols_(cols), count_(count) {
        const bool cm = spec.column_major_family();
        const int ld = cm ? std::max(1, rows + spec.ld_extra) : rows;
        const std::size_t block = cm ? std::size_t(ld) * cols + spec.gap : std::size_t(rows) * cols;
        host_.assign(block * count, poison_value<T>());
        storage_ = Buffer<T>(ctx, host_.size());
        switch (spec.kind) {
            case LayoutKind::column_major:
                host_view_ = BatchView<T>::column_major(host_.data(), rows, cols, ld, std::int64_t(block), count);
                view_ = BatchView<T>::column_major(storage_.data(), rows, cols, ld, std::int64_t(block), count);
                break;
            case LayoutKind::pointer_array: {
                // Reverse order, so that a routine ignoring the pointers cannot pass by accident.
                std::vector<T*> backend_pointers(count);
                host_pointers_.resize(count);
                for (int k = 0; k < count; ++k) {
                    const std::size_t at = block * (count - 1 - k);
                    host_pointers_[k] = host_.data() + at;
                    backend_pointers[k] = storage_.data() + at;  // device addresses on cuda
                }
                pointers_ = Buffer<T*>(ctx, backend_pointers);
                host_view_ = BatchView<T>::pointer_array(host_pointers_.data(), rows, cols, ld, count);
                view_ = BatchView<T>::pointer_array(pointers_.data(), rows, cols, ld, count);
                break;
            }
            case LayoutKind::interleaved:
                host_view_ = BatchView<T>::interleaved(host_.data(), rows, cols, count);
                view_ = BatchView<T>::interleaved(storage_.data(), rows, cols, count);
                break;
            case LayoutKind::chunked_interleaved:
                host_view_ = BatchView<T>::chunked(host_.data(), rows, cols, count, spec.chunk_size);
                view_ = BatchView<T>::chunked(storage_.data(), rows, cols, count, spec.chunk_size);
                break;
        }
        in_matrix_.assign(host_.size(), false);
        for (int k = 0; k < count; ++k)
            for (int j = 0; j < cols; ++j)
                for (int i = 0; i < rows; ++i) in_matrix_[&host_view_.at(k, i, j) - host_.data()] = true;
        storage_.fill_bytes(0xFF);
    }

    const BatchView<T>& view() const { return view_; }
    const LayoutSpec& spec() const { return spec_; }

    // Packed host batch -> this layout; everything else poisoned.
    void upload(const std::vector<T>& packed) {
        if (packed.size() != std::size_t(rows_) * cols_ * count_)
            throw std::logic_error("test bug: packed batch of " + std::to_string(packed.size()) + " elements for " +
                                   std::to_string(count_) + " matrices of " + std::to_string(rows_) + " x " +
                                   std::to_string(cols_));
        std::fill(host_.begin(), host_.end(), poison_value<T>());
        for (int k = 0; k < count_; ++k)
            for (int j = 0; j < cols_; ++j)
                for (int i = 0; i < rows_; ++i) host_view_.at(k, i, j) = packed[packed_index(rows_, cols_, k, i, j)];
        storage_.upload(host_);
    }
    // Every element (matrices and padding) set to the poison pattern, on the backend.
    void poison() { storage_.fill_bytes(0xFF); }

    // This layout -> packed host batch.
    std::vector<T> download() {
        fetch();
        std::vector<T> packed(std::size_t(rows_) * cols_ * count_);
        for (int k = 0; k < count_; ++k)
            for (int j = 0; j < cols_; ++j)
                for (int i = 0; i < rows_; ++i) packed[packed_index(rows_, cols_, k, i, j)] = host_view_.at(k, i, j);
        return packed;
    }
    // Raw storage as the backend holds it (for bit-exact comparisons of layouts).
    std::vector<T> download_raw() {
        fetch();
        return host_;
    }
    // Number of padding/gap elements that no longer hold the poison pattern.
    int padding_changes() {
        fetch();
        int changed = 0;
        for (std::size_t e = 0; e < host_.size(); ++e)
            if (!in_matrix_[e] && !is_poison(host_[e])) ++changed;
        return changed;
    }

private:
    void fetch() { storage_.download(host_.data(), host_.size()); }

    LayoutSpec spec_;
    int rows_, cols_, count_;
    std::vector<T> host_;
    std::vector<T*> host_pointers_;
    std::vector<bool> in_matrix_;
    Buffer<T> storage_;
    Buffer<T*> pointers_;
    BatchView<T> host_view_, view_;
};

// One info per matrix in the backend's memory, poisoned (-1) until a routine writes it.
class BackendInfo {
public:
    BackendInfo(Context& ctx, int count) : buffer_(ctx, std::size_t(count)) { poison(); }
    int* data() const { return buffer_.data(); }
    void poison() { buffer_.fill_bytes(0xFF); }
    std::vector<int> download() const { return buffer_.to_host(); }

private:
    Buffer<int> buffer_;
};

// ---- runs on the CPU reference backend, on packed host data ------------------------------------------

template <class T>
struct FactorResult {
    std::vector<T> factor;
    std::vector<int> info;
};

template <class T>
FactorResult<T> reference_potrf(Context& cpu, Uplo uplo, std::vector<T> a, int n, int count) {
    std::vector<int> info(count, -1);
    potrf_batched(uplo, BatchView<T>::column_major(a.data(), n, n, count), info.data(), cpu);
    return {std::move(a), std::move(info)};
}

template <class T>
std::vector<T> reference_potrs(Context& cpu, Uplo uplo, const std::vector<T>& factor, std::vector<T> b, int n,
                               int nrhs, int count) {
    potrs_batched(uplo, BatchView<const T>::column_major(factor.data(), n, n, count),
                  BatchView<T>::column_major(b.data(), n, nrhs, count), cpu);
    return b;
}

// ---- expectations ----------------------------------------------------------------------------------

// f() must throw InvalidArgument naming `argument`.
template <class F>
void expect_invalid_argument(F&& f, const std::string& argument) {
    try {
        f();
        ADD_FAILURE() << "no InvalidArgument thrown; expected one naming '" << argument << "'";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.argument(), argument) << e.what();
        EXPECT_NE(std::string(e.what()).find(argument), std::string::npos) << e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected InvalidArgument naming '" << argument << "', got: " << e.what();
    }
}

// ---- compiling ahead -------------------------------------------------------------------------------

// NVRTC compiles each generated kernel on its first use (0.1-10 s). A GPU test that meets a few
// hundred of them one after another spends minutes on one core (the every-size tests took longer
// than 150 s each that way on the H100 host, with the other tests compiling beside them), so such a
// test compiles them first with compile_ahead, on several host threads with a CUDA context each.
// Returns what the jobs threw: a test that expects some configurations to be refused ignores it
// (and meets the refusal itself), one that expects none reports it.
constexpr int kCompileAheadThreads = 8;  // per test process: the GPU tests run side by side
using CompileJob = std::function<void(Context&)>;

inline std::vector<std::string> compile_ahead(const std::vector<CompileJob>& jobs) {
    std::mutex m;
    std::size_t next = 0;
    std::vector<std::string> errors;
    auto fail = [&](const std::string& what) {
        std::lock_guard<std::mutex> lock(m);
        errors.push_back(what);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < std::min<int>(kCompileAheadThreads, int(jobs.size())); ++t)
        threads.emplace_back([&] {
            try {
                Context ctx(Backend::cuda);
                for (;;) {
                    std::size_t i;
                    {
                        std::lock_guard<std::mutex> lock(m);
                        if (next == jobs.size()) return;
                        i = next++;
                    }
                    try {
                        jobs[i](ctx);
                    } catch (const std::exception& e) {
                        fail(e.what());
                    }
                }
            } catch (const std::exception& e) {  // no context: the test meets the kernels itself
                fail(std::string("compile_ahead: no CUDA context: ") + e.what());
            }
        });
    for (std::thread& t : threads) t.join();
    return errors;
}

// A job that compiles the kernel `routine` runs for A of order n in `layout`: the configuration the
// tuning table gives, or `config`.
template <class T>
CompileJob kernel_of(const std::string& routine, Uplo uplo, const LayoutSpec& layout, int n, int count, int nrhs,
                     const std::optional<CholeskyConfig>& config = std::nullopt) {
    return [=](Context& ctx) {
        BackendBatch<T> a(ctx, layout, n, n, count);  // a pointer array needs its pointers on the device
        const BatchView<const T> shape = a.view();
        if (config) prepare_kernel<T>(routine, uplo, shape, nrhs, *config, ctx);
        else prepare_kernel<T>(routine, uplo, shape, nrhs, ctx);
    };
}

// The tuning table's kernels of an every-size test (size_spread x all_layouts x both triangles x
// `nrhs_list`), compiled ahead; nothing on the CPU backend.
template <class T>
void compile_every_size_ahead(Backend backend, const std::string& routine, const std::vector<int>& nrhs_list) {
    if (backend != Backend::cuda) return;
    std::vector<CompileJob> jobs;
    for (int n : size_spread())
        for (int nrhs : nrhs_list)
            for (const LayoutSpec& layout : all_layouts()) {
                // chunked layouts of any chunk run one kernel (the chunk is a run-time argument): one
                // job, not two compiling it at once
                if (layout.kind == LayoutKind::chunked_interleaved && layout.chunk_size != 32) continue;
                for (Uplo uplo : {Uplo::lower, Uplo::upper})
                    jobs.push_back(kernel_of<T>(routine, uplo, layout, n, batch_count_for(n), nrhs));
            }
    compile_ahead(jobs);  // a kernel that fails here fails the test's own call too
}

// ---- tolerances ------------------------------------------------------------------------------------

// Largest relative difference of the good matrices' results that two backends may show: both are
// backward stable, so their outputs differ by a forward error of order n u cond.
template <class T>
double cross_backend_tolerance(int n) {
    return kAcceptance * std::max(n, 1) * double(unit_roundoff<T>()) * kCond;
}

// Two runs of one backend on one input must give the same matrix, up to a few roundings (a blocked
// or vectorised path may add in another order, never more).
template <class T>
double same_run_tolerance(int n) {
    return 4.0 * std::max(n, 1) * double(unit_roundoff<T>());
}

}  // namespace batchsolve::test

// The configurations every backend suite is typed over, named briefly and outside any namespace so
// that ctest's names read Potrf.EmptyBatches<cuda_s> (gtest_discover_tests appends the type's name;
// gtest itself numbers the instances: Potrf/4.EmptyBatches, TypeParam = cuda_s).
struct cpu_s : batchsolve::test::Config<batchsolve::Backend::cpu, float> {};
struct cpu_d : batchsolve::test::Config<batchsolve::Backend::cpu, double> {};
struct cpu_c : batchsolve::test::Config<batchsolve::Backend::cpu, std::complex<float>> {};
struct cpu_z : batchsolve::test::Config<batchsolve::Backend::cpu, std::complex<double>> {};
struct cuda_s : batchsolve::test::Config<batchsolve::Backend::cuda, float> {};
struct cuda_d : batchsolve::test::Config<batchsolve::Backend::cuda, double> {};
struct cuda_c : batchsolve::test::Config<batchsolve::Backend::cuda, std::complex<float>> {};
struct cuda_z : batchsolve::test::Config<batchsolve::Backend::cuda, std::complex<double>> {};

namespace batchsolve::test {
using AllConfigs = ::testing::Types<cpu_s, cpu_d, cpu_c, cpu_z, cuda_s, cuda_d, cuda_c, cuda_z>;
using AllPrecisions = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
}  // namespace batchsolve::test
