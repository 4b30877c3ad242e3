// CUDA backend end-to-end checks through the public API (cuSOLVER path, batchsolve::vendor, layout
// conversion, bit-exact untouched triangles, huge split batches), each compared with the CPU backend.
#include <batchsolve/batchsolve.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace batchsolve;

static int failures = 0;
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            ++failures;                                                      \
            std::printf("FAILED %s:%d: ", __func__, __LINE__);               \
            std::printf(__VA_ARGS__);                                        \
            std::printf("\n");                                               \
        }                                                                    \
    } while (0)

template <class T> bool same_bits(const T& x, const T& y) { return std::memcmp(&x, &y, sizeof(T)) == 0; }

// A batch in one layout, in host memory (cpu) and device memory (gpu), with the same storage bits.
template <class T>
struct Twin {
    LayoutKind kind;
    int rows, cols, count, ld, chunk;
    std::int64_t stride;
    std::vector<T> host;                 // storage (or, for pointer_array, count * ld * cols, matrix k at k * ld * cols)
    Buffer<T> dev;
    Buffer<T*> dev_ptrs;
    std::vector<T*> host_ptrs;
    BatchView<T> hv, dv;
};

template <class T>
Twin<T> make_twin(Context& gpu, LayoutKind kind, int rows, int cols, int count, int chunk, unsigned char poison) {
    Twin<T> t{kind, rows, cols, count, kind == LayoutKind::column_major || kind == LayoutKind::pointer_array ? rows + 2 : rows,
              chunk, 0, {}, {}, {}, {}, {}, {}};
    t.stride = kind == LayoutKind::column_major ? std::int64_t(t.ld) * cols + 3 : std::int64_t(t.ld) * cols;
    const std::size_t elements = std::size_t(t.stride) * count;
    t.host.resize(elements);
    std::memset(static_cast<void*>(t.host.data()), poison, elements * sizeof(T));
    t.dev = Buffer<T>(gpu, elements);
    t.dev.upload(t.host);
    if (kind == LayoutKind::pointer_array) {
        std::vector<T*> dptrs(count);
        for (int k = 0; k < count; ++k) {
            t.host_ptrs.push_back(t.host.data() + std::size_t(k) * t.stride);
            dptrs[k] = t.dev.data() + std::size_t(k) * t.stride;
        }
        t.dev_ptrs = Buffer<T*>(gpu, dptrs);
    }
    auto view = [&](T* data, T* const* ptrs) {
        switch (kind) {
            case LayoutKind::column_major: return BatchView<T>::column_major(data, rows, cols, t.ld, t.stride, count);
            case LayoutKind::pointer_array: return BatchView<T>::pointer_array(ptrs, rows, cols, t.ld, count);
            case LayoutKind::interleaved: return BatchView<T>::interleaved(data, rows, cols, count);
            default: return BatchView<T>::chunked(data, rows, cols, count, chunk);
        }
    };
    t.hv = view(t.host.data(), t.host_ptrs.data());
    t.dv = view(t.dev.data(), t.dev_ptrs.data());
    return t;
}

// Fills both twins from a packed column-major host batch, through convert_layout on each backend.
template <class T>
void load(Context& cpu, Context& gpu, Twin<T>& t, const std::vector<T>& packed) {
    convert_layout<T>(BatchView<const T>(BatchView<T>::column_major(const_cast<T*>(packed.data()), t.rows, t.cols, t.count)), t.hv, cpu);
    Buffer<T> staged(gpu, packed);
    convert_layout<T>(BatchView<const T>(BatchView<T>::column_major(staged.data(), t.rows, t.cols, t.count)), t.dv, gpu);
    gpu.synchronize();
}

template <class T>
std::vector<T> device_storage(Twin<T>& t) { return t.dev.to_host(); }

const LayoutKind kKinds[] = {LayoutKind::column_major, LayoutKind::pointer_array, LayoutKind::interleaved,
                             LayoutKind::chunked_interleaved};

// 1. convert_layout: every pair, storage bits identical to the CPU backend's (padding included).
void test_convert(Context& cpu, Context& gpu) {
    const int rows = 5, cols = 3, count = 1001, chunk = 7;
    std::vector<double> packed(std::size_t(rows) * cols * count);
    for (std::size_t e = 0; e < packed.size(); ++e) packed[e] = double(e) + 0.5;
    for (LayoutKind from : kKinds)
        for (LayoutKind to : kKinds) {
            Twin<double> a = make_twin<double>(gpu, from, rows, cols, count, chunk, 0xA5);
            Twin<double> b = make_twin<double>(gpu, to, rows, cols, count, 3, 0x5A);
            load(cpu, gpu, a, packed);
            convert_layout<double>(BatchView<const double>(a.hv), b.hv, cpu);
            convert_layout<double>(BatchView<const double>(a.dv), b.dv, gpu);
            const std::vector<double> got = device_storage(b);
            std::size_t bad = 0;
            for (std::size_t e = 0; e < got.size(); ++e) bad += !same_bits(got[e], b.host[e]);
            CHECK(bad == 0, "%s -> %s: %zu storage elements differ from the CPU backend", to_string(from), to_string(to), bad);
        }
}

// 2. potrf info (NaN on and off the diagonal, NaN and a negative pivot in decoupled blocks) and the
//    other triangle left bit-for-bit untouched, every layout, both uplo, against the CPU backend.
void test_potrf_info(Context& cpu, Context& gpu) {
    const int n = 8, count = 70;
    std::vector<double> a = generate_spd_batch<double>(n, count, 100, 12345);
    auto at = [&](int k, int i, int j) -> double& { return a[std::size_t(k) * n * n + std::size_t(j) * n + i]; };
    auto both = [&](int k, int i, int j, double v) { at(k, i, j) = v, at(k, j, i) = v; };
    at(1, 3, 3) = NAN;                                         // expected 4
    both(2, 5, 0, NAN);                                        // expected 6
    at(3, 2, 2) = -1;                                          // expected 3
    for (int k : {4, 5})
        for (int j = 0; j < 4; ++j)
            for (int i = 4; i < n; ++i) both(k, i, j, 0);      // two decoupled blocks
    at(4, 5, 5) = NAN, at(4, 1, 1) = -1;                       // expected 2
    at(5, 1, 1) = NAN, at(5, 6, 6) = -1;                       // expected 2
    const int expected[] = {0, 4, 6, 3, 2, 2};
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
        for (LayoutKind kind : kKinds) {
            Twin<double> t = make_twin<double>(gpu, kind, n, n, count, 9, 0x77);
            load(cpu, gpu, t, a);
            // poison the other triangle on both sides with the same bits
            std::vector<double> dev = device_storage(t);
            double poison;
            std::memset(&poison, 0x3C, sizeof poison);
            for (int k = 0; k < count; ++k)
                for (int j = 0; j < n; ++j)
                    for (int i = 0; i < n; ++i)
                        if (uplo == Uplo::lower ? i < j : i > j) {
                            t.hv.at(k, i, j) = poison;
                            const std::ptrdiff_t off = &t.hv.at(k, i, j) - t.host.data();
                            dev[off] = poison;
                        }
            t.dev.upload(dev);
            Buffer<int> info(gpu, count);
            info.fill_bytes(0xFF);
            std::vector<int> cpu_info(count, -7);
            potrf_batched<double>(uplo, t.hv, cpu_info.data(), cpu);
            potrf_batched<double>(uplo, t.dv, info.data(), gpu);
            const std::vector<int> gpu_info = info.to_host();
            for (int k = 0; k < count; ++k) {
                const int want = k < 6 ? expected[k] : 0;
                CHECK(gpu_info[k] == want && cpu_info[k] == want, "%s %s matrix %d: info gpu %d cpu %d, expected %d",
                      to_string(uplo), to_string(kind), k, gpu_info[k], cpu_info[k], want);
            }
            dev = device_storage(t);
            int untouched_bad = 0;
            double worst = 0;
            for (int k = 0; k < count; ++k)
                for (int j = 0; j < n; ++j)
                    for (int i = 0; i < n; ++i) {
                        const std::ptrdiff_t off = &t.hv.at(k, i, j) - t.host.data();
                        if (uplo == Uplo::lower ? i < j : i > j) untouched_bad += !same_bits(dev[off], poison);
                        else if (k >= 6) worst = std::max(worst, std::abs(dev[off] - t.host[off]));
                    }
            CHECK(untouched_bad == 0, "%s %s: %d elements of the other triangle written", to_string(uplo), to_string(kind), untouched_bad);
            // factors of a cond-100 matrix with entries ~1 agree to a few hundred n*eps
            CHECK(worst <= 30 * n * 100 * unit_roundoff<double>(), "%s %s: factor differs from CPU by %g", to_string(uplo),
                  to_string(kind), worst);
        }
}

// 3. posv with failed members (B bit-for-bit untouched there), nrhs = 3, mixed layouts, complex.
template <class T>
void test_posv(Context& cpu, Context& gpu) {
    const int n = 16, nrhs = 3, count = 300;
    std::vector<T> a = generate_spd_batch<T>(n, count, 100, 777);
    spoil_matrix(a, n, 10, 4, BadMatrix::nan);
    spoil_matrix(a, n, 20, 0, BadMatrix::indefinite);
    spoil_matrix(a, n, 299, 15, BadMatrix::indefinite);
    const RhsWithSolution<T> rhs = generate_rhs_batch(a, n, count, nrhs, 778);
    const std::pair<LayoutKind, LayoutKind> pairs[] = {
        {LayoutKind::column_major, LayoutKind::column_major}, {LayoutKind::pointer_array, LayoutKind::column_major},
        {LayoutKind::column_major, LayoutKind::pointer_array}, {LayoutKind::interleaved, LayoutKind::interleaved},
        {LayoutKind::chunked_interleaved, LayoutKind::chunked_interleaved}};
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
        for (auto [ka, kb] : pairs) {
            Twin<T> ta = make_twin<T>(gpu, ka, n, n, count, 32, 0x11);
            Twin<T> tb = make_twin<T>(gpu, kb, n, nrhs, count, 32, 0x22);
            load(cpu, gpu, ta, a);
            load(cpu, gpu, tb, rhs.b);
            const std::vector<T> b_before = device_storage(tb);
            Buffer<int> info(gpu, count);
            info.fill_bytes(0xFF);
            std::vector<int> cpu_info(count, -7);
            posv_batched<T>(uplo, ta.hv, tb.hv, cpu_info.data(), cpu);
            posv_batched<T>(uplo, ta.dv, tb.dv, info.data(), gpu);
            const std::vector<int> gpu_info = info.to_host();
            const std::vector<T> b_after = device_storage(tb);
            double worst = 0;
            for (int k = 0; k < count; ++k) {
                CHECK(gpu_info[k] == cpu_info[k], "%s %s/%s matrix %d: info gpu %d cpu %d", to_string(uplo), to_string(ka),
                      to_string(kb), k, gpu_info[k], cpu_info[k]);
                for (int j = 0; j < nrhs; ++j)
                    for (int i = 0; i < n; ++i) {
                        const std::ptrdiff_t off = &tb.hv.at(k, i, j) - tb.host.data();
                        if (cpu_info[k] != 0) CHECK(same_bits(b_after[off], b_before[off]), "B of failed matrix %d written", k);
                        else worst = std::max(worst, double(std::abs(b_after[off] - tb.host[off])));
                    }
            }
            CHECK(worst <= 30 * n * 100 * unit_roundoff<T>() * 10, "%s %s/%s: solution differs from CPU by %g", to_string(uplo),
                  to_string(ka), to_string(kb), worst);
        }
}

// 4. A million matrices (vendor calls split into pieces, workspace slices), and the vendor entry points.
void test_large(Context& cpu, Context& gpu) {
    const int n = 4, count = 1000000;
    const std::vector<double> a = generate_spd_batch<double>(n, count, 10, 4242);
    const RhsWithSolution<double> rhs = generate_rhs_batch(a, n, count, 1, 4243);
    for (LayoutKind kind : {LayoutKind::column_major, LayoutKind::interleaved}) {
        Twin<double> ta = make_twin<double>(gpu, kind, n, n, count, 32, 0);
        Twin<double> tb = make_twin<double>(gpu, kind, n, 1, count, 32, 0);
        load(cpu, gpu, ta, a);
        load(cpu, gpu, tb, rhs.b);
        Buffer<int> info(gpu, count);
        info.fill_bytes(0xFF);
        std::vector<int> cpu_info(count);
        posv_batched<double>(Uplo::lower, ta.hv, tb.hv, cpu_info.data(), cpu);
        posv_batched<double>(Uplo::lower, ta.dv, tb.dv, info.data(), gpu);
        const std::vector<int> gpu_info = info.to_host();
        const std::vector<double> x = device_storage(tb);
        int bad_info = 0;
        double worst = 0;
        for (int k = 0; k < count; ++k) bad_info += gpu_info[k] != 0;
        for (std::size_t e = 0; e < x.size(); ++e) worst = std::max(worst, std::abs(x[e] - tb.host[e]));
        CHECK(bad_info == 0, "%s: %d nonzero infos", to_string(kind), bad_info);
        CHECK(worst <= 30 * n * 10 * unit_roundoff<double>() * 10, "%s: solution differs from CPU by %g", to_string(kind), worst);
    }
    // vendor:: directly, strided A, pointer-array B with nrhs = 2
    const int m = 300000;
    Twin<double> ta = make_twin<double>(gpu, LayoutKind::column_major, n, n, m, 1, 0);
    Twin<double> tb = make_twin<double>(gpu, LayoutKind::pointer_array, n, 2, m, 1, 0);
    std::vector<double> a2(a.begin(), a.begin() + std::size_t(m) * n * n);
    const RhsWithSolution<double> rhs2 = generate_rhs_batch(a2, n, m, 2, 99);
    load(cpu, gpu, ta, a2);
    load(cpu, gpu, tb, rhs2.b);
    Buffer<int> info(gpu, m);
    vendor::potrf_batched<double>(Uplo::upper, ta.dv, info.data(), gpu);
    vendor::potrs_batched<double>(Uplo::upper, ta.dv, tb.dv, gpu);
    std::vector<int> cpu_info(m);
    potrf_batched<double>(Uplo::upper, ta.hv, cpu_info.data(), cpu);
    potrs_batched<double>(Uplo::upper, ta.hv, tb.hv, cpu);
    const std::vector<double> x = device_storage(tb);
    double worst = 0;
    for (std::size_t e = 0; e < x.size(); ++e) worst = std::max(worst, std::abs(x[e] - tb.host[e]));
    CHECK(worst <= 30 * n * 10 * unit_roundoff<double>() * 10, "vendor strided/pointer-array nrhs=2: differs by %g", worst);
}

// 5. Argument errors that need the device, and a user stream.
void test_misc(Context& gpu) {
    // A = 4 I: an ordinary host info pointer is either refused naming info (a GPU that cannot read
    // pageable memory) or, where the GPU can (HMM/ATS: the check is skipped), the call must work
    // and write info = 0 there. Anything else (no error and no info written, another error) fails.
    std::vector<double> four_identity(16, 0.0);
    for (int i = 0; i < 4; ++i) four_identity[i * 5] = 4.0;
    Buffer<double> a(gpu, four_identity);
    int host_info[1] = {-7};
    bool threw = false;
    std::string other_error;
    try {
        potrf_batched<double>(Uplo::lower, BatchView<double>::column_major(a.data(), 4, 4, 1), host_info, gpu);
        gpu.synchronize();
    } catch (const InvalidArgument& e) {
        threw = true;
        CHECK(std::string(e.what()).find("info") != std::string::npos, "host info refused without naming info: %s", e.what());
    } catch (const std::exception& e) {
        other_error = e.what();
    }
    CHECK(other_error.empty(), "host info pointer: neither refused nor run: %s", other_error.c_str());
    if (!threw && other_error.empty()) {
        std::printf("note: a host info pointer was accepted (the GPU reads pageable memory here)\n");
        CHECK(host_info[0] == 0, "host info pointer accepted but info = %d (expected 0 for A = 4 I)", host_info[0]);
    }
    void* before = gpu.stream();
    gpu.set_stream(nullptr);
    CHECK(gpu.stream() == before, "set_stream(nullptr) changed the stream");
}

TEST(CudaBackendSmoke, AgreesWithCpuReference) {
    if (!Context::cuda_available()) GTEST_SKIP() << "skipped: no GPU";
    Context cpu(Backend::cpu), gpu(Backend::cuda);
    std::printf("device: %s\n", gpu.device_name().c_str());
    failures = 0;
    test_convert(cpu, gpu);
    test_potrf_info(cpu, gpu);
    test_posv<double>(cpu, gpu);
    test_posv<std::complex<float>>(cpu, gpu);
    test_large(cpu, gpu);
    test_misc(gpu);
    EXPECT_EQ(failures, 0) << "failed checks are listed above";
}
