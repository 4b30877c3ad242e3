// The CUDA engine's driver: the Gram matrix (split tiles, or cuBLAS SSYRK), the build kernels of
// engine_cuda_build.cu per slice of rows, then one batched FP32 posv (or potrf + two TRSMs, vbatched;
// engine_cuda_solve.cu), and the set-up thread that prepares all of them beside the read.
#include <cublas_v2.h>
#include "batchsolve_io/shared_library.hpp"
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <iomanip>
#include <sstream>

#include "batchsolve/batchsolve.hpp"
#include "engine.hpp"
#include "engine_cuda_kernels.hpp"
#include "tiled_cholesky.hpp"
#include "memory_plan.hpp"

namespace als {

using namespace cuda_engine;

namespace {

#define ALS_STR2(x) #x
#define ALS_STR(x) ALS_STR2(x)
// The four cuBLAS functions of the engine, from the library loaded on first use (the set-up thread,
// beside the read): linked, cuBLAS and cuBLASLt were mapped before main of every als process
// (--backend cpu too), about 50 ms of each start.
struct CublasApi {
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasDestroy_v2) destroy = nullptr;
    decltype(&cublasSetStream_v2) set_stream = nullptr;
    decltype(&cublasSsyrk_v2) ssyrk = nullptr;
};
const CublasApi& cublas_api() {
    static const CublasApi api = [] {
        const batchsolve::io::SharedLibrary<Error> library("cuBLAS", "libcublas.so." ALS_STR(CUBLAS_VER_MAJOR));
        CublasApi a;
        library.get(a.create, "cublasCreate_v2"), library.get(a.destroy, "cublasDestroy_v2");
        library.get(a.set_stream, "cublasSetStream_v2"), library.get(a.ssyrk, "cublasSsyrk_v2");
        return a;
    }();
    return api;
}


struct CublasHandle {
    cublasHandle_t handle = nullptr;
    CublasHandle() = default;
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    CublasHandle(CublasHandle&& o) noexcept : handle(o.handle) { o.handle = nullptr; }
    CublasHandle& operator=(CublasHandle&& o) noexcept {
        std::swap(handle, o.handle);
        return *this;
    }
    ~CublasHandle() {
        if (handle) cublas_api().destroy(handle);
    }
};

}  // namespace

// What start_cuda_warmup's thread leaves for the engine.
class CudaWarmup {
public:
    struct Result {
        std::unique_ptr<batchsolve::Context> ctx;
        CublasHandle cublas;
        std::string error;  // set when the set-up failed: the engine that takes it throws this
        double seconds = 0;
        std::string summary;
        SolverKernels kernels;  // started for the slices of every side, some ready
        bool stand_in = false;  // a kernel may stand in for one still compiling (als train: quick exit)
    };
    std::future<Result> pending;
    int device = 0;
    double seconds = 0;
    std::string summary;
    // Waits for the thread; the result once (nullopt-like empty ctx afterwards).
    Result take() {
        if (!pending.valid()) return {};
        Result r = pending.get();
        seconds = r.seconds, summary = r.summary;
        return r;
    }
};

namespace {

bool tiled_solve(const EngineSettings& es) { return es.solve_kernel == SolveKernel::tiled || es.solve_kernel == SolveKernel::tiled_prefetch; }

// Launches each kernel the engine will run once on one empty segment and runs cuBLAS's SSYRK at the
// engine's sizes on scratch memory, so that lazy module loading and cuBLAS's first-call set-up happen
// here and not in the first iteration.
void touch_engine_kernels(const EngineSettings& es, std::int64_t users, std::int64_t items, batchsolve::Context& ctx,
                          cublasHandle_t cublas) {
    const int s = es.width;
    const auto stream = static_cast<cudaStream_t>(ctx.stream());
    batchsolve::Buffer<Segment> segment(ctx, std::vector<Segment>{{0, 0, 0}});
    batchsolve::Buffer<std::int64_t> indptr(ctx, std::vector<std::int64_t>{0, 0});
    batchsolve::Buffer<std::int32_t> indices(ctx, std::vector<std::int32_t>{0});
    batchsolve::Buffer<float> values(ctx, std::vector<float>{1.f});
    batchsolve::Buffer<float> a(ctx, std::size_t(s) * s), b(ctx, std::size_t(s));
    batchsolve::Buffer<int> info(ctx, 1);
    batchsolve::Buffer<unsigned long long> failed(ctx, 1);
    const std::int64_t most = std::max<std::int64_t>(1, std::max(users, items));
    batchsolve::Buffer<float> other(ctx, std::size_t(most) * s), gram(ctx, std::size_t(s) * s);
    other.fill_bytes(0), gram.fill_bytes(0);
    if (es.implicit && es.gram == GramKernel::syrk) {
        const float one = 1.f, zero = 0.f;
        for (std::int64_t rows : {items, users})
            if (rows > 0)
                check(cublas_api().ssyrk(cublas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, s, int(rows), &one, other.data(), s, &zero, gram.data(), s),
                      "cublasSsyrk");
    } else if (es.implicit) {
        batchsolve::Buffer<float> partials(ctx, gram_partials_floats(s));
        launch_split_gram(other.data(), s, 1, partials.data(), gram.data(), stream);
    }
    BuildArgs args{segment.data(), indptr.data(), indices.data(), values.data(), other.data(), es.implicit ? gram.data() : nullptr,
                   a.data(), b.data(), Layout{1, 0}, 0, s, 0, es.lambda, es.implicit, es.biases};
    for (bool first : {true, false}) launch_build(es.build, first, 1, args, stream);
    info.fill_bytes(0);
    if (tiled_solve(es) && s <= tiled::kMaxWidth) {  // its first launch (module load, shared-memory attribute) here
        // The built system: lambda (or its ridge) on the diagonal, positive definite unless lambda is 0.
        launch_tiled_solve(a.data(), b.data(), info.data(), Layout{1, 0}, s, 1, es.solve_kernel == SolveKernel::tiled_prefetch, stream);
        info.fill_bytes(0);
    }
    launch_scatter_solutions(b.data(), info.data(), Layout{1, 0}, s, 1, a.data(), stream);
    launch_count_failed(info.data(), 1, failed.data(), stream);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}


CudaWarmup::Result run_warmup(EngineSettings es, std::int64_t users, std::int64_t items) {
    CudaWarmup::Result r;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        check(cudaSetDevice(es.device), "cudaSetDevice");
        r.ctx = std::make_unique<batchsolve::Context>(batchsolve::Backend::cuda, es.device);
        check(cublas_api().create(&r.cublas.handle), "cublasCreate");
        check(cublas_api().set_stream(r.cublas.handle, static_cast<cudaStream_t>(r.ctx->stream())), "cublasSetStream");
        touch_engine_kernels(es, users, items, *r.ctx, r.cublas.handle);
        std::string kernels;
        // The fused solves need no posv kernels (a side whose rows are too long for them prepares its
        // own when the engine is made).
        const bool fused = es.solve_kernel == SolveKernel::fused || es.solve_kernel == SolveKernel::fused_blocked;
        if (!fused) r.kernels.start(es, {users, items}, *r.ctx);
        r.stand_in = true;  // start_cuda_warmup's process is als train's, which ends by a quick exit
        kernels = r.kernels.wait_until_runnable(*r.ctx, r.stand_in);
        r.summary = "context, cuBLAS, " + std::string(to_string(es.build)) + " build kernels, " + kernels;
    } catch (const std::exception& e) {
        r.error = std::string("CUDA set-up: ") + e.what();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

// One side of the problem as this engine holds it: the CSR of its own rows [first, first + rows)
// (all rows when alone; indices still name the other side's global rows) and the factors of every row.
struct Side {
    std::int64_t rows = 0;   // own rows
    std::int64_t first = 0;  // global index of the first own row
    std::int64_t total = 0;  // rows of the side (factor rows)
    batchsolve::Buffer<std::int64_t> indptr;
    batchsolve::Buffer<std::int32_t> indices;
    batchsolve::Buffer<float> values;
    batchsolve::Buffer<Segment> first_segments, extra_segments;
    batchsolve::Buffer<Segment> longest_first;  // SolveKernel::fused: every row once, the longest first
    std::vector<std::int64_t> extra_start;  // host: extra segments of rows [0, r) precede index extra_start[r]
    std::int64_t longest = 0;               // entries of the longest own row
    batchsolve::Buffer<float> factors;
};

class CudaEngine final : public Engine {
    // One slice of systems, right-hand sides and info, with the vbatched and two-level solves' pointer
    // arrays into it; --overlap: two (one built while the other is solved).
    struct SliceStore {
        batchsolve::Buffer<float> systems, rhs;
        batchsolve::Buffer<int> info;
        batchsolve::Buffer<float*> vb_a, vb_b;                // SolveKernel::vbatched only
        batchsolve::Buffer<float*> l11, a21, a22, b1, b2;     // SolveKernel::two_level only
        batchsolve::Buffer<int> info2;                        // SolveKernel::two_level only
    };

public:
    // `warm`: what start_cuda_warmup prepared (its context and cuBLAS handle are taken over), or empty.
    CudaEngine(const Csr& by_user, const Csr& by_item, const EngineSettings& s, const Partition* partition, CudaWarmup::Result warm)
        : s_(s),
          owned_ctx_(warm.ctx ? std::move(warm.ctx) : std::make_unique<batchsolve::Context>(batchsolve::Backend::cuda, s.device)),
          ctx_(*owned_ctx_) {
        check(cudaSetDevice(s.device), "cudaSetDevice");
        if (partition) {
            partition_ = *partition;
        } else {
            partition_.users = {{0, by_user.rows}};
            partition_.items = {{0, by_item.rows}};
        }
        const std::uint64_t needed = cuda_engine_bytes(by_user, by_item, s, partition);
        std::size_t free_bytes = 0, total_bytes = 0;
        check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
        if (needed > free_bytes)
            throw Error("the data needs " + gib(needed) + " of GPU memory, " + gib(free_bytes) + " of " + gib(total_bytes) +
                        " is free on " + ctx_.device_name() + " (lower --slice-mb or use --backend cpu)");
        stream_ = static_cast<cudaStream_t>(ctx_.stream());
        if (warm.cublas.handle) std::swap(cublas_, warm.cublas.handle);
        else check(cublas_api().create(&cublas_), "cublasCreate");
        check(cublas_api().set_stream(cublas_, stream_), "cublasSetStream");
        check(cudaEventCreate(&e0_), "cudaEventCreate");
        check(cudaEventCreate(&e1_), "cudaEventCreate");
        check(cudaEventCreate(&e2_), "cudaEventCreate");
        upload(users_, by_user, partition_.users[std::size_t(partition_.index)]);
        upload(items_, by_item, partition_.items[std::size_t(partition_.index)]);
        // A slice of own rows at most (cuda_engine_bytes counts the same).
        // (Sides that run fused store no systems: none when both do.)
        const std::int64_t slice = std::max(fused(users_) ? 0 : rows_per_slice(users_.rows, s.width, s.slice_bytes),
                                            fused(items_) ? 0 : rows_per_slice(items_.rows, s.width, s.slice_bytes));
        const std::int64_t ss = std::int64_t(s.width) * s.width;
        // --overlap: a second slice of memory, where some side that is not fused has more than one slice.
        for (const Side* side : {&users_, &items_})
            if (s.overlap && !fused(*side) && side->rows > rows_per_slice(side->rows, s.width, s.slice_bytes)) stores_ = 2;
        // The fused solve takes a whole side at once (nothing stored): its info needs every row.
        const std::int64_t info_rows = s.solve_kernel == SolveKernel::fused || s.solve_kernel == SolveKernel::fused_blocked ? std::max({slice, users_.rows, items_.rows}) : slice;
        for (int i = 0; i < stores_; ++i) {
            SliceStore& st = store_[i];
            st.systems = batchsolve::Buffer<float>(ctx_, std::size_t(std::max<std::int64_t>(slice, 1) * ss));
            st.rhs = batchsolve::Buffer<float>(ctx_, std::size_t(std::max<std::int64_t>(slice, 1) * s.width));
            st.info = batchsolve::Buffer<int>(ctx_, std::size_t(info_rows));
        }
        if (stores_ == 2) {
            int least = 0, greatest = 0;
            check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
            check(cudaStreamCreateWithPriority(&build_stream_, cudaStreamNonBlocking, s.builds_first ? greatest : least),
                  "cudaStreamCreateWithPriority");
        }
        gram_ = batchsolve::Buffer<float>(ctx_, std::size_t(ss));
        gram_.fill_bytes(0);  // the upper triangle is never written; an all-reduce sums it too
        if (s.implicit && s.gram == GramKernel::split) gram_partials_ = batchsolve::Buffer<float>(ctx_, gram_partials_floats(s.width));
        failed_ = batchsolve::Buffer<unsigned long long>(ctx_, 1);
        if (s.solve_kernel == SolveKernel::vbatched) prepare_vbatched(slice);
        if (s.solve_kernel == SolveKernel::two_level) prepare_two_level(slice);
        if (tiled_solve(s) && s.width > tiled::kMaxWidth)
            throw Error("--solve-kernel " + std::string(to_string(s.solve_kernel)) + " takes widths up to " + std::to_string(tiled::kMaxWidth) +
                        " (got " + std::to_string(s.width) + ")");
        sample_memory();
        // The solver's kernels for this engine's own slices (those of the warm-up kept), before the
        // first timed iteration: the first ready one stands in for those still compiling.
        kernels_ = std::move(warm.kernels);
        std::vector<std::int64_t> own_rows;
        for (const Side* side : {&users_, &items_})
            if (!fused(*side)) own_rows.push_back(side->rows);
        kernels_.start(s, own_rows, ctx_);
        kernels_.wait_until_runnable(ctx_, warm.stand_in);
    }
    ~CudaEngine() override {
        if (cublas_) cublas_api().destroy(cublas_);
        for (cudaEvent_t e : {e0_, e1_, e2_})
            if (e) cudaEventDestroy(e);
        for (cudaEvent_t e : events_) cudaEventDestroy(e);
        if (build_stream_) cudaStreamDestroy(build_stream_);
    }

    void set_factors(const std::vector<float>& users, const std::vector<float>& items) override {
        check(cudaSetDevice(s_.device), "cudaSetDevice");
        users_.factors = batchsolve::Buffer<float>(ctx_, users);
        items_.factors = batchsolve::Buffer<float>(ctx_, items);
        sample_memory();
    }
    void get_factors(std::vector<float>& users, std::vector<float>& items) override {
        check(cudaSetDevice(s_.device), "cudaSetDevice");
        users = users_.factors.to_host();
        items = items_.factors.to_host();
    }
    HalfTiming solve_users() override { return solve_side(users_, items_, partition_.users); }
    HalfTiming solve_items() override { return solve_side(items_, users_, partition_.items); }
    std::string device() const override { return ctx_.device_name(); }
    std::uint64_t peak_device_bytes() const override { return peak_bytes_; }
    std::string notes() const override { return kernels_.notes(); }

private:
    static std::string gib(std::uint64_t bytes) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1ull << 30));
        return buf;
    }
    void sample_memory() {
        std::size_t free_bytes = 0, total_bytes = 0;
        if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
            peak_bytes_ = std::max<std::uint64_t>(peak_bytes_, total_bytes - free_bytes);
    }

    // The CSR of the own rows `own` of `whole` (every row alone: uploaded as it is).
    void upload(Side& side, const Csr& whole, RowRange own) {
        side.total = whole.rows, side.first = own.first;
        Csr block;
        const bool all = own.first == 0 && own.count == whole.rows;
        if (!all) {
            block.rows = own.count, block.cols = whole.cols;
            const std::int64_t b = whole.indptr[own.first], e = whole.indptr[own.first + own.count];
            block.indptr.assign(whole.indptr.begin() + own.first, whole.indptr.begin() + own.first + own.count + 1);
            for (auto& x : block.indptr) x -= b;
            block.indices.assign(whole.indices.begin() + b, whole.indices.begin() + e);
            block.values.assign(whole.values.begin() + b, whole.values.begin() + e);
        }
        const Csr& m = all ? whole : block;
        side.rows = m.rows;
        side.indptr = batchsolve::Buffer<std::int64_t>(ctx_, m.indptr);
        side.indices = batchsolve::Buffer<std::int32_t>(ctx_, m.indices.empty() ? std::vector<std::int32_t>{0} : m.indices);
        side.values = batchsolve::Buffer<float>(ctx_, m.values.empty() ? std::vector<float>{0.f} : m.values);
        std::vector<Segment> first(static_cast<std::size_t>(m.rows)), extra;
        side.extra_start.assign(std::size_t(m.rows + 1), 0);
        side.longest = 0;
        for (std::int64_t r = 0; r < m.rows; ++r) {
            const std::int64_t b = m.indptr[r], e = m.indptr[r + 1];
            side.longest = std::max(side.longest, e - b);
            first[std::size_t(r)] = {b, std::min(e, b + kSegmentEntries), std::int32_t(r)};
            for (std::int64_t x = b + kSegmentEntries; x < e; x += kSegmentEntries)
                extra.push_back({x, std::min(e, x + kSegmentEntries), std::int32_t(r)});
            side.extra_start[std::size_t(r + 1)] = std::int64_t(extra.size());
        }
        if (first.empty()) first.push_back({0, 0, 0});
        if (extra.empty()) extra.push_back({0, 0, 0});
        side.first_segments = batchsolve::Buffer<Segment>(ctx_, first);
        if (s_.solve_kernel == SolveKernel::fused || s_.solve_kernel == SolveKernel::fused_blocked) {
            // One block per row, launched longest first: the few rows of 10^5 entries start at once and
            // the short ones fill the GPU around them (the kernel reads each row's end from indptr).
            std::vector<Segment> order = first;
            std::stable_sort(order.begin(), order.end(), [&](const Segment& a, const Segment& b) {
                return m.row_length(a.row) > m.row_length(b.row);
            });
            side.longest_first = batchsolve::Buffer<Segment>(ctx_, order);
        }
        side.extra_segments = batchsolve::Buffer<Segment>(ctx_, extra);
    }

    // The vbatched solve's arrays over the largest slice (a smaller slice takes their first entries):
    // every order and leading dimension s, one right-hand side each, the systems' and right-hand
    // sides' pointers; and the TRSM's workspace reserved now, not in the first iteration.
    void prepare_vbatched(std::int64_t slice) {
        if (s_.layout != SystemLayout::column_major) throw Error("--solve-kernel vbatched takes --layout column_major");
        const int s = s_.width;
        for (int i = 0; i < stores_; ++i) {
            SliceStore& st = store_[i];
            std::vector<float*> a(static_cast<std::size_t>(slice)), b(static_cast<std::size_t>(slice));
            for (std::int64_t k = 0; k < slice; ++k)
                a[std::size_t(k)] = st.systems.data() + k * s * s, b[std::size_t(k)] = st.rhs.data() + k * s;
            st.vb_a = batchsolve::Buffer<float*>(ctx_, a);
            st.vb_b = batchsolve::Buffer<float*>(ctx_, b);
        }
        vb_order_ = batchsolve::Buffer<int>(ctx_, std::vector<int>(static_cast<std::size_t>(slice), s));
        vb_one_ = batchsolve::Buffer<int>(ctx_, std::vector<int>(static_cast<std::size_t>(slice), 1));
        ctx_.workspace(batchsolve::trsm_vbatched_workspace_size<float>(batchsolve::Side::left, s, 1, int(slice), ctx_));
    }
    // L L^T = A (potrf_vbatched), then L y = b and L^T x = y (trsm_vbatched): `count` systems of the slice.
    void solve_vbatched(std::int64_t count, SliceStore& st) {
        namespace bs = batchsolve;
        const int s = s_.width, n = int(count);
        bs::potrf_vbatched_max_nocheck<float>(bs::Uplo::lower, vb_order_.data(), st.vb_a.data(), vb_order_.data(), s, n, st.info.data(), ctx_);
        const float* const* a = st.vb_a.data();
        for (bs::Op op : {bs::Op::no_trans, bs::Op::trans})
            bs::trsm_vbatched_max_nocheck<float>(bs::Side::left, bs::Uplo::lower, op, bs::Diag::non_unit, vb_order_.data(), vb_one_.data(),
                                                 1.f, a, vb_order_.data(), st.vb_b.data(), vb_order_.data(), s, 1, n, ctx_);
    }

    // SolveKernel::two_level: each system of width s as 2 x 2 blocks of orders h = s / 2 and s - h, the
    // diagonal blocks factored (and the second one solved) by the library's generated potrf/potrs
    // kernels (ld = s), the off-diagonal block by trsm_vbatched and the Schur complement by
    // syrk_vbatched: at s = 256 the generated kernels of order 128 instead of cuSOLVER's 256.
    void prepare_two_level(std::int64_t slice) {
        if (s_.layout != SystemLayout::column_major) throw Error("--solve-kernel two-level takes --layout column_major");
        if (s_.width < 2) throw Error("--solve-kernel two-level takes widths >= 2");
        const int s = s_.width, h = s / 2, h2 = s - h;
        const auto n = static_cast<std::size_t>(slice);
        for (int i = 0; i < stores_; ++i) {
            SliceStore& st = store_[i];
            std::vector<float*> l11(n), a21(n), a22(n), b1(n), b2(n);
            for (std::size_t k = 0; k < n; ++k) {
                float* a = st.systems.data() + std::int64_t(k) * s * s;
                l11[k] = a, a21[k] = a + h, a22[k] = a + std::int64_t(h) * s + h;
                b1[k] = st.rhs.data() + std::int64_t(k) * s, b2[k] = b1[k] + h;
            }
            st.l11 = batchsolve::Buffer<float*>(ctx_, l11), st.a21 = batchsolve::Buffer<float*>(ctx_, a21);
            st.a22 = batchsolve::Buffer<float*>(ctx_, a22), st.b1 = batchsolve::Buffer<float*>(ctx_, b1), st.b2 = batchsolve::Buffer<float*>(ctx_, b2);
            st.info2 = batchsolve::Buffer<int>(ctx_, n);
        }
        tl_h_ = batchsolve::Buffer<int>(ctx_, std::vector<int>(n, h));
        tl_h2_ = batchsolve::Buffer<int>(ctx_, std::vector<int>(n, h2));
        tl_ld_ = batchsolve::Buffer<int>(ctx_, std::vector<int>(n, s));
        vb_one_ = batchsolve::Buffer<int>(ctx_, std::vector<int>(n, 1));
        namespace bs = batchsolve;
        ctx_.workspace(std::max(bs::trsm_vbatched_workspace_size<float>(bs::Side::right, h2, h, int(slice), ctx_),
                                bs::trsm_vbatched_workspace_size<float>(bs::Side::left, h, 1, int(slice), ctx_)));
        // The generated kernels of both diagonal blocks, now rather than in the first iteration.
        for (const Side* side : {&users_, &items_}) {
            const auto [full, rest] = slice_counts(side->rows, s_);
            for (std::int64_t count : {full, rest}) {
                if (count <= 0) continue;
                for (int order : {h, h2}) {
                    const auto a = bs::BatchView<float>::column_major(store_[0].systems.data(), order, order, s, std::int64_t(s) * s, int(count));
                    bs::prepare_kernel<float>("potrf", bs::Uplo::lower, a, 1, ctx_);
                    bs::prepare_kernel<float>("potrs", bs::Uplo::lower, a, 1, ctx_);
                }
            }
        }
    }
    void solve_two_level(std::int64_t count, SliceStore& st) {
        namespace bs = batchsolve;
        const int s = s_.width, h = s / 2, h2 = s - h, n = int(count);
        const std::int64_t ss = std::int64_t(s) * s;
        using V = bs::BatchView<float>;
        float* a = st.systems.data();
        const int* ld = tl_ld_.data();
        // L11 L11^T = A11; L21 = A21 L11^-T; A22 - L21 L21^T = L22 L22^T.
        bs::potrf_batched<float>(bs::Uplo::lower, V::column_major(a, h, h, s, ss, n), st.info.data(), ctx_);
        bs::trsm_vbatched_max_nocheck<float>(bs::Side::right, bs::Uplo::lower, bs::Op::trans, bs::Diag::non_unit, tl_h2_.data(), tl_h_.data(), 1.f,
                                             st.l11.data(), ld, st.a21.data(), ld, h2, h, n, ctx_);
        bs::syrk_vbatched_max_nocheck<float>(bs::Uplo::lower, bs::Op::no_trans, tl_h2_.data(), tl_h_.data(), -1.f, st.a21.data(), ld, 1.f,
                                             st.a22.data(), ld, h2, h, n, ctx_);
        const V a22 = V::column_major(a + std::int64_t(h) * s + h, h2, h2, s, ss, n);
        bs::potrf_batched<float>(bs::Uplo::lower, a22, st.info2.data(), ctx_);
        // y1 = L11^-1 b1; b2 -= L21 y1; x2 = (L22 L22^T)^-1 b2; y1 -= L21^T x2; x1 = L11^-T y1.
        bs::trsm_vbatched_max_nocheck<float>(bs::Side::left, bs::Uplo::lower, bs::Op::no_trans, bs::Diag::non_unit, tl_h_.data(), vb_one_.data(), 1.f,
                                             st.l11.data(), ld, st.b1.data(), ld, h, 1, n, ctx_);
        bs::gemm_vbatched_max_nocheck<float>(bs::Op::no_trans, bs::Op::no_trans, tl_h2_.data(), vb_one_.data(), tl_h_.data(), -1.f, st.a21.data(), ld,
                                             st.b1.data(), ld, 1.f, st.b2.data(), ld, h2, 1, h, n, ctx_);
        bs::potrs_batched<float>(bs::Uplo::lower, a22, V::column_major(st.rhs.data() + h, h2, 1, s, s, n), ctx_);
        bs::gemm_vbatched_max_nocheck<float>(bs::Op::trans, bs::Op::no_trans, tl_h_.data(), vb_one_.data(), tl_h2_.data(), -1.f, st.a21.data(), ld,
                                             st.b2.data(), ld, 1.f, st.b1.data(), ld, h, 1, h2, n, ctx_);
        bs::trsm_vbatched_max_nocheck<float>(bs::Side::left, bs::Uplo::lower, bs::Op::trans, bs::Diag::non_unit, tl_h_.data(), vb_one_.data(), 1.f,
                                             st.l11.data(), ld, st.b1.data(), ld, h, 1, n, ctx_);
        launch_merge_info(st.info.data(), st.info2.data(), h, count, stream_);
    }

    // SolveKernel::fused runs on this side: rows up to kFusedLongestRow entries.
    bool fused(const Side& rows) const {
        return (s_.solve_kernel == SolveKernel::fused || s_.solve_kernel == SolveKernel::fused_blocked) && rows.longest <= kFusedLongestRow;
    }

    Layout layout_for(std::int64_t count) const {
        switch (s_.layout) {
            case SystemLayout::column_major: return {count, 0};
            case SystemLayout::interleaved: return {count, count};
            case SystemLayout::chunked: return {count, s_.chunk_size};
        }
        return {count, 0};
    }
    // The build of rows [first, first + count) of `rows` into st, on `stream`.
    void build_slice(Side& rows, const Side& other, std::int64_t first, std::int64_t count, SliceStore& st, cudaStream_t stream) {
        BuildArgs args{rows.first_segments.data() + first, rows.indptr.data(), rows.indices.data(), rows.values.data(),
                       other.factors.data(), s_.implicit ? gram_.data() : nullptr, st.systems.data(), st.rhs.data(), layout_for(count),
                       first, s_.width, 0, s_.lambda, s_.implicit, s_.biases};
        launch_build(s_.build, true, unsigned(count), args, stream);
        const std::int64_t extra_begin = rows.extra_start[std::size_t(first)], extra_end = rows.extra_start[std::size_t(first + count)];
        if (extra_end > extra_begin) {
            args.segments = rows.extra_segments.data() + extra_begin;
            launch_build(s_.build, false, unsigned(extra_end - extra_begin), args, stream);
        }
    }
    // The solve of the slice built into st and its solutions into the factor rows, on stream_ (the
    // context's, where the library's solver runs).
    void solve_slice(Side& rows, std::int64_t first, std::int64_t count, SliceStore& st) {
        const int s = s_.width;
        if (s_.solve_kernel == SolveKernel::vbatched) solve_vbatched(count, st);
        else if (s_.solve_kernel == SolveKernel::two_level) solve_two_level(count, st);
        else if (tiled_solve(s_))
            launch_tiled_solve(st.systems.data(), st.rhs.data(), st.info.data(), layout_for(count), s, count,
                               s_.solve_kernel == SolveKernel::tiled_prefetch, stream_);
        else {
            const auto views = system_views(s_, st.systems.data(), st.rhs.data(), count);
            kernels_.posv(views.first, views.second, st.info.data(), count, ctx_);
        }
        launch_scatter_solutions(st.rhs.data(), st.info.data(), layout_for(count), s, count, rows.factors.data() + (rows.first + first) * s, stream_);
        launch_count_failed(st.info.data(), count, failed_.data(), stream_);
    }
    cudaEvent_t pooled_event(std::size_t i) {
        while (events_.size() <= i) {
            cudaEvent_t e = nullptr;
            check(cudaEventCreate(&e), "cudaEventCreate");
            events_.push_back(e);
        }
        return events_[i];
    }
    // --overlap: slice i is built into store i % 2 on build_stream_ while slice i - 1 is solved on
    // stream_; a build waits for the solve two slices before it (the one that used its store), a solve
    // for its own build. Each build and solve is timed by events on its stream (time spent beside the
    // other is counted in both); returns the milliseconds of builds, of solves, and from the first
    // build's start to the last solve's end.
    std::array<float, 3> build_and_solve_overlapped(Side& rows, const Side& other, std::int64_t per) {
        const std::int64_t slices = (rows.rows + per - 1) / per;
        // Build stream after everything queued on stream_ (the Gram matrix, its all-reduce).
        check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
        check(cudaStreamWaitEvent(build_stream_, e0_, 0), "cudaStreamWaitEvent");
        for (std::int64_t i = 0; i < slices; ++i) {
            const std::int64_t first = i * per, count = std::min(per, rows.rows - first);
            SliceStore& st = store_[i % 2];
            const std::size_t e = std::size_t(4 * i);  // build start, build end, solve start, solve end
            if (i >= 2) check(cudaStreamWaitEvent(build_stream_, pooled_event(e - 8 + 3), 0), "cudaStreamWaitEvent");
            check(cudaEventRecord(pooled_event(e), build_stream_), "cudaEventRecord");
            build_slice(rows, other, first, count, st, build_stream_);
            check(cudaEventRecord(pooled_event(e + 1), build_stream_), "cudaEventRecord");
            check(cudaStreamWaitEvent(stream_, events_[e + 1], 0), "cudaStreamWaitEvent");
            check(cudaEventRecord(pooled_event(e + 2), stream_), "cudaEventRecord");
            solve_slice(rows, first, count, st);
            check(cudaEventRecord(pooled_event(e + 3), stream_), "cudaEventRecord");
        }
        const std::size_t last = std::size_t(4 * (slices - 1));
        check(cudaEventSynchronize(events_[last + 3]), "cudaEventSynchronize");
        std::array<float, 3> ms{0, 0, 0};
        float t = 0;
        for (std::size_t e = 0; e <= last; e += 4) {
            check(cudaEventElapsedTime(&t, events_[e], events_[e + 1]), "cudaEventElapsedTime");
            ms[0] += t;
            check(cudaEventElapsedTime(&t, events_[e + 2], events_[e + 3]), "cudaEventElapsedTime");
            ms[1] += t;
        }
        check(cudaEventElapsedTime(&ms[2], events_[0], events_[last + 3]), "cudaEventElapsedTime");
        return ms;
    }

    HalfTiming solve_side(Side& rows, Side& other, const std::vector<RowRange>& own) {
        const int s = s_.width;
        HalfTiming timing;
        float build_ms = 0, solve_ms = 0, ms = 0;
        check(cudaSetDevice(s_.device), "cudaSetDevice");
        check(cudaMemsetAsync(failed_.data(), 0, sizeof(unsigned long long), stream_), "cudaMemsetAsync");
        check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
        if (s_.implicit && other.rows > 0 && s_.gram == GramKernel::split) {
            launch_split_gram(other.factors.data() + other.first * s, s, other.rows, gram_partials_.data(), gram_.data(), stream_);
        } else if (s_.implicit && other.rows > 0) {
            const float one = 1.f, zero = 0.f;
            // Factors are row-major rows x s, i.e. column-major s x rows: G = F F^T in that view
            // (over this engine's own rows of the other side; the exchange sums the partitions').
            check(cublas_api().ssyrk(cublas_, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, s, int(other.rows), &one,
                              other.factors.data() + other.first * s, s, &zero, gram_.data(), s),
                  "cublasSsyrk");
        } else if (s_.implicit) {
            check(cudaMemsetAsync(gram_.data(), 0, sizeof(float) * std::size_t(s) * s, stream_), "cudaMemsetAsync");
        }
        check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
        check(cudaEventSynchronize(e1_), "cudaEventSynchronize");
        check(cudaEventElapsedTime(&ms, e0_, e1_), "cudaEventElapsedTime");
        build_ms += ms;
        if (s_.implicit) timing.gram_s = ms * 1e-3;
        using WallClock = std::chrono::steady_clock;
        if (s_.implicit && partition_.exchange) {
            const auto t0 = WallClock::now();
            partition_.exchange->allreduce_sum(gram_.data(), std::size_t(s) * s, stream_);
            timing.exchange_s += std::chrono::duration<double>(WallClock::now() - t0).count();
        }

        if (fused(rows) && rows.rows > 0) {
            // Built and solved in one kernel over the whole side (no slices: nothing is stored); its time
            // is the build's, the solve's is the failure count.
            BuildArgs args{rows.longest_first.data(), rows.indptr.data(), rows.indices.data(), rows.values.data(), other.factors.data(),
                           s_.implicit ? gram_.data() : nullptr, nullptr, nullptr, Layout{rows.rows, 0}, 0, s, 0, s_.lambda,
                           s_.implicit, s_.biases};
            args.solution = rows.factors.data() + rows.first * s, args.info = store_[0].info.data();
            check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
            launch_fused(unsigned(rows.rows), args, s_.solve_kernel == SolveKernel::fused_blocked, stream_);
            check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
            launch_count_failed(store_[0].info.data(), rows.rows, failed_.data(), stream_);
            check(cudaEventRecord(e2_, stream_), "cudaEventRecord");
            check(cudaEventSynchronize(e2_), "cudaEventSynchronize");
            check(cudaEventElapsedTime(&ms, e0_, e1_), "cudaEventElapsedTime");
            build_ms += ms;
            check(cudaEventElapsedTime(&ms, e1_, e2_), "cudaEventElapsedTime");
            solve_ms += ms;
        }
        const std::int64_t per = rows_per_slice(rows.rows, s, s_.slice_bytes);
        if (stores_ == 2 && !fused(rows) && rows.rows > per) {
            const auto ms3 = build_and_solve_overlapped(rows, other, per);
            build_ms += ms3[0], solve_ms += ms3[1];
            timing.overlap_s = std::max(0.f, ms3[0] + ms3[1] - ms3[2]) * 1e-3;
        }
        for (std::int64_t first = 0; !fused(rows) && !(stores_ == 2 && rows.rows > per) && first < rows.rows; first += per) {
            const std::int64_t count = std::min(per, rows.rows - first);
            check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
            build_slice(rows, other, first, count, store_[0], stream_);
            check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
            solve_slice(rows, first, count, store_[0]);
            check(cudaEventRecord(e2_, stream_), "cudaEventRecord");
            check(cudaEventSynchronize(e2_), "cudaEventSynchronize");
            check(cudaEventElapsedTime(&ms, e0_, e1_), "cudaEventElapsedTime");
            build_ms += ms;
            check(cudaEventElapsedTime(&ms, e1_, e2_), "cudaEventElapsedTime");
            solve_ms += ms;
        }
        if (partition_.exchange) {
            const auto t0 = WallClock::now();
            partition_.exchange->allgather_rows(rows.factors.data(), own, s, stream_);
            timing.exchange_s += std::chrono::duration<double>(WallClock::now() - t0).count();
        }
        sample_memory();
        unsigned long long failed = 0;
        check(cudaMemcpy(&failed, failed_.data(), sizeof failed, cudaMemcpyDeviceToHost), "cudaMemcpy");
        timing.build_s = build_ms * 1e-3, timing.solve_s = solve_ms * 1e-3, timing.failed = std::int64_t(failed);
        return timing;
    }

    EngineSettings s_;
    std::unique_ptr<batchsolve::Context> owned_ctx_;
    batchsolve::Context& ctx_;
    Partition partition_;
    cudaStream_t stream_ = nullptr;
    cublasHandle_t cublas_ = nullptr;
    cudaEvent_t e0_ = nullptr, e1_ = nullptr, e2_ = nullptr;
    Side users_, items_;
    SliceStore store_[2];
    int stores_ = 1;
    cudaStream_t build_stream_ = nullptr;  // --overlap: the builds' stream
    std::vector<cudaEvent_t> events_;      // --overlap: four per slice of the longest side
    batchsolve::Buffer<float> gram_;
    batchsolve::Buffer<float> gram_partials_;  // GramKernel::split only
    batchsolve::Buffer<unsigned long long> failed_;
    batchsolve::Buffer<int> vb_order_, vb_one_;   // SolveKernel::vbatched only
    batchsolve::Buffer<int> tl_h_, tl_h2_, tl_ld_;  // SolveKernel::two_level only (and vb_one_)
    SolverKernels kernels_;
    std::uint64_t peak_bytes_ = 0;
};

}  // namespace

std::uint64_t cuda_engine_bytes(const Csr& by_user, const Csr& by_item, const EngineSettings& s, const Partition* partition) {
    return engine_bytes(by_user, by_item, s, partition);  // memory_plan.cpp: the same count in every build
}

bool cuda_engine_available() { return batchsolve::Context::cuda_available(); }

std::shared_ptr<CudaWarmup> start_cuda_warmup(const EngineSettings& settings, std::int64_t users, std::int64_t items) {
    auto w = std::make_shared<CudaWarmup>();
    EngineSettings es = settings;
    es.warmup.reset();
    es.solve_kernel = resolve_solve_kernel(es.solve_kernel, es.width, es.layout);
    if (es.slice_bytes == 0) es.slice_bytes = std::uint64_t(4) << 30;  // train()'s default for the CUDA engine
    w->device = es.device;
    w->pending = std::async(std::launch::async, run_warmup, es, users, items);
    return w;
}
double cuda_warmup_seconds(const CudaWarmup& warmup) { return warmup.seconds; }
std::string cuda_warmup_summary(const CudaWarmup& warmup) { return warmup.summary; }

std::uint64_t cuda_free_bytes(int device) {
    int current = 0;
    check(cudaGetDevice(&current), "cudaGetDevice");
    check(cudaSetDevice(device), "cudaSetDevice");
    std::size_t free_bytes = 0, total_bytes = 0;
    const cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
    cudaSetDevice(current);
    check(e, "cudaMemGetInfo");
    return free_bytes;
}

void cuda_release_device(int device) {
    if (cudaSetDevice(device) != cudaSuccess || cudaDeviceReset() != cudaSuccess) cudaGetLastError();
}

int cuda_device_count() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

void engine_copy_to_host(void* host, const void* engine_memory, std::size_t bytes, bool device_memory, void* stream) {
    if (bytes == 0) return;
    if (!device_memory) {
        std::memcpy(host, engine_memory, bytes);
        return;
    }
    const auto st = static_cast<cudaStream_t>(stream);
    check(cudaMemcpyAsync(host, engine_memory, bytes, cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(st), "cudaStreamSynchronize");
}

void engine_copy_from_host(void* engine_memory, const void* host, std::size_t bytes, bool device_memory, void* stream) {
    if (bytes == 0) return;
    if (!device_memory) {
        std::memcpy(engine_memory, host, bytes);
        return;
    }
    const auto st = static_cast<cudaStream_t>(stream);
    check(cudaMemcpyAsync(engine_memory, host, bytes, cudaMemcpyHostToDevice, st), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(st), "cudaStreamSynchronize");
}

std::unique_ptr<Engine> make_cuda_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& given,
                                         const Partition* partition) {
    EngineSettings settings = given;
    settings.solve_kernel = resolve_solve_kernel(given.solve_kernel, given.width, given.layout);
    const int most = settings.build == BuildKernel::fp32 ? kMaxWidth : kMaxTensorWidth;
    if (settings.width < 1 || settings.width > most)
        throw Error("the CUDA engine takes at most " + std::to_string(most) + " factors per row with the " + to_string(settings.build) +
                    " build (got " + std::to_string(settings.width) + "; the tf32x3 and tf32 builds go to " + std::to_string(kMaxTensorWidth) +
                    "); --backend cpu goes to 1024");
    if (settings.solver != Solver::exact)
        throw Error("--solver cg: the CUDA engine solves each system exactly (posv); conjugate gradient runs on --backend cpu");
    if (settings.layout != SystemLayout::column_major && settings.width > 128)
        throw Error("--layout interleaved/chunked needs factors <= 128 (the tuned kernels' limit); use column_major");
    if (by_user.rows > INT32_MAX || by_item.rows > INT32_MAX) throw Error("more than 2^31 - 1 rows");
    try {
        if (partition) check_partition(by_user, by_item, *partition);
        CudaWarmup::Result warm;
        if (settings.warmup && settings.warmup->device == settings.device) {
            warm = settings.warmup->take();
            if (!warm.error.empty()) throw Error(warm.error);
        }
        return std::make_unique<CudaEngine>(by_user, by_item, settings, partition, std::move(warm));
    } catch (const batchsolve::Error& e) {
        throw Error(std::string("CUDA engine: ") + e.what());
    }
}

}  // namespace als