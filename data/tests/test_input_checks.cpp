// Regression tests of issue 22's input checks in the library that bsolve and the applications rely
// on: overflow-checked sizes (checked_size.hpp), Buffer's byte count and copies, the host-memory
// estimate under ulimit -v, a non-finite entry of A giving a nonzero info on the CPU backend, and a
// malformed tuning table (BATCHSOLVE_TUNING_FILE) named with its file and entry.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/checked_size.hpp"
#include "batchsolve/tuning_file.hpp"

#include "test_support.hpp"

using namespace batchsolve;

namespace {

using data_tests::fresh_seed;

// ---- checked sizes ------------------------------------------------------------------------------------

TEST(CheckedSize, ProductsAreExactOrRefused) {
    EXPECT_EQ(checked_mul(1ull << 32, 1ull << 31), 1ull << 63);
    EXPECT_FALSE(checked_mul(1ull << 32, 1ull << 32));
    EXPECT_FALSE(checked_add(UINT64_MAX, 1));
    EXPECT_EQ(checked_add(UINT64_MAX - 1, 1), UINT64_MAX);
    // Issue 22's crafted shape: each extent fits an int, the product does not fit 64 bits.
    EXPECT_FALSE(checked_product({313248009, 999942535, 999942535}));
    EXPECT_FALSE(checked_product({1ull << 30, 1ull << 30, 1ull << 30}));  // wraps to exactly 0 unchecked
    EXPECT_EQ(checked_product({}), 1u);
    EXPECT_EQ(checked_product({0, 1ull << 40, 1ull << 40}), 0u);  // empty: no elements, no overflow
    EXPECT_EQ(checked_product({3, 5, 7}), 105u);
    EXPECT_EQ(checked_bytes(1ull << 59, 8), std::size_t(1) << 62);
    EXPECT_FALSE(checked_bytes((1ull << 61) + 1, 8));  // 2^64 + 8 wraps to 8
    EXPECT_FALSE(checked_bytes(1ull << 60, 8));        // 2^63 does not fit a ptrdiff_t
}

TEST(CheckedSize, BytesAreWrittenForPeople) {
    EXPECT_EQ(bytes_text(512), "512 bytes");
    EXPECT_EQ(bytes_text(1536), "1.5 KiB");
    EXPECT_EQ(bytes_text(3ull << 30), "3.0 GiB");
    EXPECT_EQ(bytes_text(8ull << 50), "8.0 PiB");
}

TEST(CheckedSize, RequireHostMemorySaysHowMuch) {
    try {
        require_host_memory(UINT64_MAX, "a test allocation");
        ADD_FAILURE() << "2^64 bytes accepted";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("a test allocation needs 16.0 EiB, ", 0), 0u) << what;
        EXPECT_NE(what.find(" available"), std::string::npos) << what;
    }
    EXPECT_NO_THROW(require_host_memory(1 << 20, "one MiB"));
}

// Defect 5: under ulimit -v the estimate is what the limit leaves, so a request beyond it is refused
// at once (OpenBLAS would otherwise retry its own allocations for minutes). In a child process, so
// that the limit does not stay with the test runner.
TEST(CheckedSize, AddressSpaceLimitIsCounted) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const std::uint64_t before = available_host_bytes();
        rlimit now{};
        ::getrlimit(RLIMIT_AS, &now);
        // Room for what the process maps already plus 256 MiB.
        std::uint64_t mapped = 0;
        {
            FILE* f = std::fopen("/proc/self/status", "r");
            char line[256];
            while (f != nullptr && std::fgets(line, sizeof line, f) != nullptr)
                if (std::sscanf(line, "VmSize: %lu kB", &mapped) == 1) break;
            if (f != nullptr) std::fclose(f);
        }
        const rlimit limit{(mapped << 10) + (256u << 20), now.rlim_max};
        if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(3);
        const std::uint64_t after = available_host_bytes();
        bool refused = false;
        try {
            require_host_memory(1ull << 30, "1 GiB");
        } catch (const Error&) {
            refused = true;
        }
        ::_exit(after <= (256u << 20) + (16u << 20) && after < before && refused ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "available_host_bytes() ignored RLIMIT_AS (3: setrlimit failed)";
}

// ---- Buffer -------------------------------------------------------------------------------------------

// Defect 6: Buffer<double>(ctx, 2^61 + 1) allocated 8 bytes (2^64 + 8 wrapped) and reported size 2^61 + 1.
TEST(BufferSize, WrappingByteCountIsRefused) {
    Context ctx(Backend::cpu);
    try {
        Buffer<double> b(ctx, (std::size_t(1) << 61) + 1);
        ADD_FAILURE() << "allocated, size() = " << b.size();
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.argument(), "count") << e.what();
        EXPECT_NE(std::string(e.what()).find("2305843009213693953"), std::string::npos) << e.what();
    }
}

TEST(BufferSize, BeyondMemoryIsRefusedInWords) {
    Context ctx(Backend::cpu);
    try {
        Buffer<double> b(ctx, std::size_t(1) << 50);  // 8 PiB: no overflow, no machine
        ADD_FAILURE() << "allocated 8 PiB";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("needs 8.0 PiB, "), std::string::npos) << e.what();
    }
}

TEST(BufferSize, CopiesBeyondTheBufferAreRefused) {
    Context ctx(Backend::cpu);
    Buffer<float> b(ctx, 4);
    std::vector<float> host(8, 1.0f);
    EXPECT_THROW(b.upload(host.data(), 8), InvalidArgument);
    EXPECT_THROW(b.download(host.data(), 5), InvalidArgument);
    EXPECT_NO_THROW(b.upload(host.data(), 4));
}

// ---- non-finite input, CPU backend ---------------------------------------------------------------------

template <class T>
class NonFiniteInput : public ::testing::Test {};
using Precisions = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(NonFiniteInput, Precisions);

// Matrix k of each case gets one non-finite entry in the referenced triangle; the expected info is
// the column of the first non-finite or non-positive pivot (docs/input-checks.md). Every layout the
// CPU backend has (column-major in place, interleaved through its scratch).
TYPED_TEST(NonFiniteInput, GivesNonzeroInfoNeverSilentNaN) {
    using T = TypeParam;
    using R = real_t<T>;
    const R inf = std::numeric_limits<R>::infinity(), nan = std::numeric_limits<R>::quiet_NaN();
    const int n = 7, nrhs = 2;
    struct Case {
        int row, col;
        R value;
        int info;  // expected
    };
    // (row, col) in lower-triangle terms; the upper case uses the transposed position.
    const std::vector<Case> cases = {
        {0, 0, inf, 1}, {3, 3, inf, 4}, {6, 6, inf, 7}, {2, 2, nan, 3}, {5, 2, inf, 6},
        {6, 0, -inf, 7}, {4, 1, nan, 5}, {6, 5, nan, 7}, {1, 1, -inf, 2},
    };
    const int count = int(cases.size()) + 1;  // the last matrix stays clean: info 0
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        for (bool interleaved : {false, true}) {
            std::vector<T> a = generate_spd_batch<T>(n, count, 100.0, fresh_seed());
            for (std::size_t k = 0; k < cases.size(); ++k) {
                const Case& c = cases[k];
                const int i = uplo == Uplo::lower ? c.row : c.col, j = uplo == Uplo::lower ? c.col : c.row;
                a[k * n * n + std::size_t(j) * n + i] = T(c.value);
            }
            std::vector<T> b(std::size_t(count) * n * nrhs, T(1));
            Context ctx(Backend::cpu);
            Buffer<T> da(ctx, a), db(ctx, b), ia(ctx, a.size()), ib(ctx, b.size());
            Buffer<int> info(ctx, std::size_t(count));
            info.fill_bytes(0x7F);  // poisoned: every entry must be written
            auto A = BatchView<T>::column_major(da.data(), n, n, count);
            auto B = BatchView<T>::column_major(db.data(), n, nrhs, count);
            if (interleaved) {
                auto IA = BatchView<T>::interleaved(ia.data(), n, n, count);
                auto IB = BatchView<T>::interleaved(ib.data(), n, nrhs, count);
                convert_layout<T>(A, IA, ctx);
                convert_layout<T>(B, IB, ctx);
                posv_batched<T>(uplo, IA, IB, info.data(), ctx);
                convert_layout<T>(IB, B, ctx);
            } else {
                posv_batched<T>(uplo, A, B, info.data(), ctx);
            }
            const std::vector<int> got = info.to_host();
            const std::vector<T> x = db.to_host();
            for (std::size_t k = 0; k < cases.size(); ++k)
                EXPECT_EQ(got[k], cases[k].info) << "case " << k << " (" << cases[k].row << ", " << cases[k].col
                                                 << ") = " << cases[k].value << ", uplo " << to_string(uplo)
                                                 << (interleaved ? ", interleaved" : ", column-major");
            EXPECT_EQ(got.back(), 0);
            for (int e = 0; e < n * nrhs; ++e)
                ASSERT_TRUE(std::isfinite(std::abs(x[cases.size() * n * nrhs + std::size_t(e)])))
                    << "the clean matrix's solution is not finite";
        }
    }
}

// A non-finite value in the triangle the solver does not reference changes nothing.
TYPED_TEST(NonFiniteInput, UnreferencedTriangleIsIgnored) {
    using T = TypeParam;
    using R = real_t<T>;
    const int n = 5;
    std::vector<T> a = generate_spd_batch<T>(n, 1, 10.0, fresh_seed());
    a[std::size_t(3) * n + 1] = T(std::numeric_limits<R>::infinity());  // (1, 3): upper triangle
    Context ctx(Backend::cpu);
    Buffer<T> da(ctx, a);
    Buffer<int> info(ctx, 1);
    info.fill_bytes(0x7F);
    potrf_batched<T>(Uplo::lower, BatchView<T>::column_major(da.data(), n, n, 1), info.data(), ctx);
    EXPECT_EQ(info.to_host()[0], 0);
}

// ---- tuning tables (BATCHSOLVE_TUNING_FILE) --------------------------------------------------------

// A malformed table is an Error naming the file, the entry and what is wrong: the JSON library's own
// exception escaped without the file's name (fuzz_tuning_json, 682db9c), and an n beyond int wrapped.
TEST(TuningFile, MalformedTablesNameFileEntryAndField) {
    const std::string entry = R"({"routine":"potrf","precision":"d","layout":"column_major","n":8,"best":{"config":{}}})";
    auto message = [](const std::string& text) {
        try {
            parse_tuning_file(text, "t.json");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    auto expect_has = [](const std::string& m, std::initializer_list<const char*> parts) {
        for (const char* p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' missing in: " << m;
    };
    EXPECT_EQ(parse_tuning_file(R"({"batch":16384,"entries":[)" + entry + "," + entry + "]}", "t.json").entries.size(), 2u);
    expect_has(message(R"({"entries":[)" + entry + R"(,{"precision":"d"}]})"), {"t.json", "entry 1", "routine"});
    expect_has(message(R"({"entries":[{"routine":"potrf","precision":"d","layout":"column_major","n":1099511627776,"best":{"config":{}}}]})"),
               {"t.json", "entry 0", "'n'"});
    expect_has(message(R"({"entries":[{"routine":7}]})"), {"t.json", "entry 0"});
    expect_has(message(R"({"device":5,"entries":[]})"), {"t.json", "header"});
    expect_has(message(R"({"batch":"16384"})"), {"t.json", "'batch'"});
    expect_has(message(R"({"entries":{"a":1}})"), {"t.json", "'entries' is not an array"});
    expect_has(message("[1, 2]"), {"t.json", "not a JSON object"});
    // every family's entries in the one form: a bad field names the entry's routine and the field
    auto one = [](const std::string& routine, const std::string& config) {
        return R"({"arch_number":90,"entries":[{"routine":")" + routine +
               R"(","precision":"d","layout":"column_major","n":64,"best":{"config":)" + config + "}}]}";
    };
    const TuningFileContents gemm = parse_tuning_file(one("gemm_vbatched", R"({"blk_m":16,"tensor_cores":true})"), "t.json");
    ASSERT_EQ(gemm.entries.size(), 1u);
    EXPECT_EQ(gemm.entries[0].family, "gemm");
    EXPECT_NE(gemm.entries[0].config.find(R"("blk_m":16)"), std::string::npos) << gemm.entries[0].config;
    expect_has(message(one("gemm_vbatched", R"({"blk_m":"16"})")), {"t.json", "entry 0", "gemm_vbatched", "'blk_m'"});
    expect_has(message(one("potrf_large", R"({"variant":"upward"})")), {"t.json", "entry 0", "potrf_large", "'variant'"});
    expect_has(message(one("sytrf_nopiv", R"({"panel":512})")), {"t.json", "entry 0", "sytrf_nopiv", "'panel'"});
    expect_has(message(one("trsm_vbatched", R"({"inversion_from_order":[1]})")), {"t.json", "entry 0", "'inversion_from_order'"});
    expect_has(message(one("cpu_vector_path", R"({"simd_max_order":1e3})")), {"t.json", "entry 0", "'simd_max_order'"});
    expect_has(message(one("getrf", "{}")), {"t.json", "entry 0", "'routine'"});
}

}  // namespace
