// Tests of the HDF5 batch and solution files: exact round trips in all four precisions, atomic
// writes, and a one-line FileError naming file, dataset and reason for every kind of malformed file.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/resource.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <unistd.h>

#include "batchsolve_io/batch_file.hpp"

#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace batchsolve;

namespace {

using data_tests::fresh_seed;
using data_tests::ScratchDir;

template <class T>
std::vector<T> random_values(std::size_t count, std::mt19937_64& gen) {
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<T> v(count);
    for (T& x : v) {
        if constexpr (is_complex_v<T>) x = T(real_t<T>(u(gen)), real_t<T>(u(gen)));
        else x = T(u(gen));
    }
    return v;
}

// Bitwise equality, so that NaN payloads and signed zeros count too.
template <class T>
::testing::AssertionResult same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size())
        return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return ::testing::AssertionFailure() << "element " << i << " differs";
    return ::testing::AssertionSuccess();
}

template <class T>
io::BatchProblem<T> random_problem(int n, int count, int nrhs, std::mt19937_64& gen) {
    io::BatchProblem<T> p;
    p.uplo = Uplo::upper, p.n = n, p.count = count, p.nrhs = nrhs;
    p.a = random_values<T>(std::size_t(count) * n * n, gen);
    p.b = random_values<T>(std::size_t(count) * n * nrhs, gen);
    p.x_true = random_values<T>(std::size_t(count) * n * nrhs, gen);
    if (!p.a.empty()) {
        // Non-finite values are legitimate content (deliberately bad matrices) and must survive.
        p.a[0] = std::numeric_limits<real_t<T>>::quiet_NaN();
        p.a.back() = -std::numeric_limits<real_t<T>>::infinity();
    }
    p.expected_info.resize(std::size_t(count));
    for (int k = 0; k < count; ++k) p.expected_info[std::size_t(k)] = int(gen() % std::uint64_t(n + 1));
    p.generator.name = "test_batch_file";
    p.generator.cond = 1e4;
    p.generator.seed = std::numeric_limits<std::uint64_t>::max();  // no truncation through int64
    return p;
}

// The other precision of the same kind, for "wrong precision" reads.
template <class T> struct other_precision;
template <> struct other_precision<float> { using type = double; };
template <> struct other_precision<double> { using type = float; };
template <> struct other_precision<std::complex<float>> { using type = std::complex<double>; };
template <> struct other_precision<std::complex<double>> { using type = std::complex<float>; };

// Runs f, which must throw a FileError for `file` and `dataset` whose reason contains `reason_part`,
// with a one-line message, and without HDF5 printing anything to stderr.
void expect_file_error(const std::function<void()>& f, const std::string& file, const std::string& dataset,
                       const std::string& reason_part) {
    ::testing::internal::CaptureStderr();
    std::string message;
    bool thrown = false;
    try {
        f();
    } catch (const io::FileError& e) {
        thrown = true;
        message = e.what();
        std::cout << "[ message  ] " << message << std::endl;
        EXPECT_EQ(e.file(), file);
        EXPECT_EQ(e.dataset(), dataset) << message;
        EXPECT_NE(e.reason().find(reason_part), std::string::npos) << "reason lacks '" << reason_part << "': " << message;
        EXPECT_EQ(message, file + ": " + dataset + ": " + e.reason());
    } catch (const std::exception& e) {
        thrown = true;
        ADD_FAILURE() << "expected io::FileError, got another exception: " << e.what();
    }
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0) << "HDF5 handles left open after the error";
    EXPECT_TRUE(thrown) << "no exception for " << file << " (" << dataset << ", " << reason_part << ")";
    EXPECT_EQ(message.find('\n'), std::string::npos) << "message spans lines: " << message;
    EXPECT_EQ(err, "") << "something was printed to stderr";
}

}  // namespace

// ---- round trips -----------------------------------------------------------------------------------

template <class T>
class BatchRoundTrip : public ::testing::Test {};
using Precisions = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(BatchRoundTrip, Precisions);

TYPED_TEST(BatchRoundTrip, WriteThenReadIsExact) {
    using T = TypeParam;
    ScratchDir dir;
    std::mt19937_64 gen(fresh_seed());
    const io::BatchProblem<T> p = random_problem<T>(5, 7, 3, gen);
    const std::string path = dir.path("batch.h5");
    io::write_batch(path, p);
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"batch.h5"}) << "a temporary file was left behind";

    const io::BatchProblem<T> q = io::read_batch<T>(path);
    EXPECT_EQ(q.uplo, p.uplo);
    EXPECT_EQ(q.n, p.n);
    EXPECT_EQ(q.count, p.count);
    EXPECT_EQ(q.nrhs, p.nrhs);
    EXPECT_TRUE(same_bits(q.a, p.a));
    EXPECT_TRUE(same_bits(q.b, p.b));
    EXPECT_TRUE(same_bits(q.x_true, p.x_true));
    EXPECT_EQ(q.expected_info, p.expected_info);
    EXPECT_EQ(q.generator.name, p.generator.name);
    EXPECT_EQ(q.generator.cond, p.generator.cond);
    EXPECT_EQ(q.generator.seed, p.generator.seed);

    const io::BatchFileInfo info = io::inspect_batch(path);
    EXPECT_EQ(info.precision, precision_v<T>);
    EXPECT_EQ(info.uplo, Uplo::upper);
    EXPECT_EQ(info.n, 5);
    EXPECT_EQ(info.count, 7);
    EXPECT_EQ(info.nrhs, 3);
    EXPECT_TRUE(info.has_x_true);
    EXPECT_TRUE(info.has_expected_info);
    EXPECT_EQ(io::file_precision(path), precision_v<T>);

    const io::AnyBatchProblem any = io::read_any_batch(path);
    ASSERT_TRUE(std::holds_alternative<io::BatchProblem<T>>(any));
    EXPECT_TRUE(same_bits(std::get<io::BatchProblem<T>>(any).a, p.a));
    EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0) << "HDF5 handles left open";
}

TYPED_TEST(BatchRoundTrip, OptionalPartsStayAbsent) {
    using T = TypeParam;
    ScratchDir dir;
    std::mt19937_64 gen(fresh_seed());
    io::BatchProblem<T> p = random_problem<T>(4, 3, 1, gen);
    p.uplo = Uplo::lower;
    p.x_true.clear(), p.expected_info.clear(), p.generator = {};
    const std::string path = dir.path("plain.h5");
    io::write_batch(path, p);
    const io::BatchProblem<T> q = io::read_batch<T>(path);
    EXPECT_EQ(q.uplo, Uplo::lower);
    EXPECT_TRUE(q.x_true.empty());
    EXPECT_TRUE(q.expected_info.empty());
    EXPECT_TRUE(q.generator.name.empty());
    EXPECT_FALSE(q.generator.cond.has_value());
    EXPECT_FALSE(q.generator.seed.has_value());
    EXPECT_TRUE(same_bits(q.a, p.a));
}

TYPED_TEST(BatchRoundTrip, EmptyExtentsRoundTrip) {
    using T = TypeParam;
    ScratchDir dir;
    std::mt19937_64 gen(fresh_seed());
    for (auto [n, count, nrhs] : {std::array<int, 3>{0, 3, 1}, {4, 0, 2}, {3, 2, 0}}) {
        io::BatchProblem<T> p = random_problem<T>(n, count, nrhs, gen);
        if (p.b.empty()) p.x_true.clear();
        const std::string path = dir.path("empty.h5");
        io::write_batch(path, p);
        const io::BatchProblem<T> q = io::read_batch<T>(path);
        EXPECT_EQ(q.n, n);
        EXPECT_EQ(q.count, count);
        EXPECT_EQ(q.nrhs, nrhs);
        EXPECT_TRUE(same_bits(q.a, p.a));
        EXPECT_TRUE(same_bits(q.b, p.b));
        EXPECT_EQ(q.expected_info, p.expected_info);
    }
}

TYPED_TEST(BatchRoundTrip, SolutionWriteThenReadIsExact) {
    using T = TypeParam;
    ScratchDir dir;
    std::mt19937_64 gen(fresh_seed());
    io::BatchSolution<T> s;
    s.uplo = Uplo::upper, s.n = 6, s.count = 5, s.nrhs = 2;
    s.x = random_values<T>(std::size_t(s.count) * s.n * s.nrhs, gen);
    s.factor = random_values<T>(std::size_t(s.count) * s.n * s.n, gen);
    s.info = {0, 3, 0, 0, 6};
    s.record.source = "input.h5";
    s.record.backend = "cpu";
    s.record.device = "CPU (2 threads)";
    s.record.solve_layout = "chunked";
    s.record.chunk_size = 4;
    s.record.time_s = 1.25e-3;
    s.record.max_backward_error = 0.5;
    s.record.max_forward_error = 2e-12;
    const std::string path = dir.path("x.h5");
    io::write_solution(path, s);
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"x.h5"});

    const io::BatchSolution<T> r = io::read_solution<T>(path);
    EXPECT_EQ(r.uplo, s.uplo);
    EXPECT_EQ(r.n, s.n);
    EXPECT_EQ(r.count, s.count);
    EXPECT_EQ(r.nrhs, s.nrhs);
    EXPECT_TRUE(same_bits(r.x, s.x));
    EXPECT_TRUE(same_bits(r.factor, s.factor));
    EXPECT_EQ(r.info, s.info);
    EXPECT_EQ(r.record.source, s.record.source);
    EXPECT_EQ(r.record.backend, s.record.backend);
    EXPECT_EQ(r.record.device, s.record.device);
    EXPECT_EQ(r.record.solve_layout, s.record.solve_layout);
    EXPECT_EQ(r.record.chunk_size, s.record.chunk_size);
    EXPECT_EQ(r.record.time_s, s.record.time_s);
    EXPECT_EQ(r.record.max_backward_error, s.record.max_backward_error);
    EXPECT_EQ(r.record.max_forward_error, s.record.max_forward_error);
    EXPECT_EQ(io::file_precision(path), precision_v<T>);
    // A solution file is not a batch file.
    expect_file_error([&] { io::read_batch<T>(path); }, path, "/", "attribute 'format' is 'batchsolve-solution'");
}

TYPED_TEST(BatchRoundTrip, WrongPrecisionIsRefused) {
    using T = TypeParam;
    using U = typename other_precision<T>::type;
    ScratchDir dir;
    std::mt19937_64 gen(fresh_seed());
    const std::string path = dir.path("batch.h5");
    io::write_batch(path, random_problem<T>(3, 2, 1, gen));
    expect_file_error([&] { io::read_batch<U>(path); }, path, "/",
                      std::string("the file holds precision '") + precision_letter(precision_v<T>) + "'");
}

// ---- atomic writing --------------------------------------------------------------------------------

TEST(BatchWrite, ReplacesAnExistingFile) {
    ScratchDir dir;
    std::mt19937_64 gen(fresh_seed());
    const std::string path = dir.path("batch.h5");
    io::write_batch(path, random_problem<double>(3, 4, 1, gen));
    const io::BatchProblem<float> second = random_problem<float>(2, 5, 2, gen);
    io::write_batch(path, second);
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"batch.h5"});
    const io::BatchProblem<float> q = io::read_batch<float>(path);
    EXPECT_EQ(q.count, 5);
    EXPECT_TRUE(same_bits(q.a, second.a));
}

TEST(BatchWrite, MissingDirectoryIsAFileError) {
    ScratchDir dir;
    std::mt19937_64 gen(fresh_seed());
    const std::string path = dir.path("no/such/dir/batch.h5");
    expect_file_error([&] { io::write_batch(path, random_problem<double>(2, 2, 1, gen)); }, path, "/",
                      "the directory");
    EXPECT_TRUE(dir.entries().empty());
}

TEST(BatchWrite, InconsistentSizesThrowBeforeCreatingAnything) {
    ScratchDir dir;
    std::mt19937_64 gen(fresh_seed());
    io::BatchProblem<double> p = random_problem<double>(3, 4, 2, gen);
    p.b.pop_back();
    EXPECT_THROW(io::write_batch(dir.path("bad.h5"), p), InvalidArgument);
    p = random_problem<double>(3, 4, 2, gen);
    p.n = -1;
    EXPECT_THROW(io::write_batch(dir.path("bad.h5"), p), InvalidArgument);
    io::BatchSolution<double> s;
    s.n = 2, s.count = 3, s.nrhs = 1;
    s.x.resize(6);
    s.info.resize(2);  // should be 3
    EXPECT_THROW(io::write_solution(dir.path("bad.h5"), s), InvalidArgument);
    EXPECT_TRUE(dir.entries().empty());
}

// A write that fails half-way (here: the file size limit, as a full disk would) leaves neither the
// target nor the temporary file behind.
TEST(BatchWrite, FailureHalfWayLeavesNothing) {
    ScratchDir dir;
    std::mt19937_64 gen(fresh_seed());
    const io::BatchProblem<double> p = random_problem<double>(16, 200, 1, gen);  // ~400 KiB
    const std::string path = dir.path("big.h5");

    rlimit old{};
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG
    rlimit small = old;
    small.rlim_cur = 64 * 1024;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    bool threw = false;
    std::string message;
    try {
        io::write_batch(path, p);
    } catch (const io::FileError& e) {
        threw = true;
        message = e.what();
    }
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
    EXPECT_TRUE(threw) << "writing past the file size limit did not fail";
    EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0) << "HDF5 handles left open after the failure";
    EXPECT_EQ(message.find('\n'), std::string::npos);
    std::cout << "[ message  ] " << message << std::endl;
    EXPECT_EQ(message.rfind(path + ": /: writing", 0), 0u) << message;
    EXPECT_NE(message.find(std::strerror(EFBIG)), std::string::npos) << message;
    EXPECT_TRUE(dir.entries().empty()) << "left behind: " << (dir.entries().empty() ? "" : dir.entries()[0]);
}

// ---- malformed files -------------------------------------------------------------------------------

namespace {

// Small HDF5 C-API tools to spoil a valid file in one specific way.
class Hdf5Edit {
public:
    explicit Hdf5Edit(const std::string& path) : file_(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)) {
        EXPECT_GE(file_, 0) << "cannot open " << path;
    }
    ~Hdf5Edit() { H5Fclose(file_); }
    hid_t file() const { return file_; }
    Hdf5Edit(const Hdf5Edit&) = delete;
    Hdf5Edit& operator=(const Hdf5Edit&) = delete;

    void remove(const char* name) {
        if (H5Lexists(file_, name, H5P_DEFAULT) > 0) {
            EXPECT_GE(H5Ldelete(file_, name, H5P_DEFAULT), 0);
        }
    }
    // Replaces `name` by a dataset of the given file type and shape (contents left to the fill value).
    void dataset(const char* name, hid_t type, std::vector<hsize_t> dims) {
        remove(name);
        const hid_t space = dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr);
        const hid_t d = H5Dcreate2(file_, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        EXPECT_GE(d, 0);
        H5Dclose(d);
        H5Sclose(space);
    }
    // Like dataset(), chunked (1, 1, ...) so that any shape can be declared without storage behind it.
    void chunked_dataset(const char* name, hid_t type, std::vector<hsize_t> dims) {
        remove(name);
        const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        const std::vector<hsize_t> chunk(dims.size(), 1);
        H5Pset_chunk(dcpl, int(chunk.size()), chunk.data());
        const hid_t d = H5Dcreate2(file_, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        EXPECT_GE(d, 0);
        H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(space);
    }
    void group(const char* name) {
        remove(name);
        const hid_t g = H5Gcreate2(file_, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        EXPECT_GE(g, 0);
        H5Gclose(g);
    }
    void remove_attribute(const char* name) {
        if (H5Aexists(file_, name) > 0) {
            EXPECT_GE(H5Adelete(file_, name), 0);
        }
    }
    void string_attribute(const char* name, const std::string& value) {
        remove_attribute(name);
        const hid_t type = H5Tcopy(H5T_C_S1);
        H5Tset_size(type, value.size() + 1);  // fixed-length, as many non-h5py writers do
        write_attribute(name, type, value.c_str());
        H5Tclose(type);
    }
    void int_attribute(const char* name, int value) {
        remove_attribute(name);
        write_attribute(name, H5T_NATIVE_INT, &value);
    }

private:
    void write_attribute(const char* name, hid_t type, const void* value) {
        const hid_t space = H5Screate(H5S_SCALAR);
        const hid_t a = H5Acreate2(file_, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
        EXPECT_GE(a, 0);
        EXPECT_GE(H5Awrite(a, type, value), 0);
        H5Aclose(a);
        H5Sclose(space);
    }
    hid_t file_;
};

// A valid double batch: count 4, n 3, nrhs 2, with X_true; every malformed case starts from it.
class MalformedFile : public ::testing::Test {
protected:
    void SetUp() override {
        std::mt19937_64 gen(fresh_seed());
        good_ = dir_.path("good.h5");
        bad_ = dir_.path("bad.h5");
        io::write_batch(good_, random_problem<double>(3, 4, 2, gen));
        fs::copy_file(good_, bad_);
    }
    // The spoiled file must be refused by both the full reader and inspect_batch.
    void expect_refused(const std::string& dataset, const std::string& reason_part) {
        expect_file_error([&] { io::read_batch<double>(bad_); }, bad_, dataset, reason_part);
        expect_file_error([&] { io::inspect_batch(bad_); }, bad_, dataset, reason_part);
        expect_file_error([&] { io::read_any_batch(bad_); }, bad_, dataset, reason_part);
    }
    ScratchDir dir_;
    std::string good_, bad_;
};

}  // namespace

TEST_F(MalformedFile, GoodFileIsAccepted) { EXPECT_NO_THROW(io::read_batch<double>(bad_)); }

TEST_F(MalformedFile, MissingPath) {
    const std::string missing = dir_.path("does_not_exist.h5");
    expect_file_error([&] { io::read_batch<double>(missing); }, missing, "/", "no such file");
}

TEST_F(MalformedFile, Directory) {
    const std::string d = dir_.path("");
    expect_file_error([&] { io::inspect_batch(d); }, d, "/", "is a directory");
}

TEST_F(MalformedFile, TextFile) {
    std::ofstream(bad_, std::ios::trunc) << "count,n\n4,3\n";
    expect_refused("/", "not an HDF5 file");
}

TEST_F(MalformedFile, EmptyFile) {
    std::ofstream(bad_, std::ios::trunc).close();
    expect_refused("/", "not an HDF5 file");
}

TEST_F(MalformedFile, TruncatedFile) {
    const auto size = fs::file_size(good_);
    fs::resize_file(bad_, size / 2);
    expect_refused("/", "truncated");
}

TEST_F(MalformedFile, TruncatedInsideTheSuperblock) {
    fs::resize_file(bad_, 40);
    expect_refused("/", "truncated");
}

TEST_F(MalformedFile, HdfFileOfAnotherKind) {
    const hid_t f = H5Fcreate(bad_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    H5Fclose(f);
    expect_refused("/", "missing attribute 'format'");
}

TEST_F(MalformedFile, WrongFormatAttribute) {
    Hdf5Edit(bad_).string_attribute("format", "something-else");
    expect_refused("/", "attribute 'format' is 'something-else'");
}

TEST_F(MalformedFile, NewerFormatVersion) {
    Hdf5Edit(bad_).int_attribute("format_version", 2);
    expect_refused("/", "attribute 'format_version' is 2");
}

TEST_F(MalformedFile, BadPrecisionAttribute) {
    Hdf5Edit(bad_).string_attribute("precision", "q");
    expect_refused("/", "attribute 'precision' is 'q'");
}

TEST_F(MalformedFile, PrecisionAttributeOfWrongType) {
    Hdf5Edit(bad_).int_attribute("precision", 8);
    expect_refused("/", "attribute 'precision' has type int32, expected a string");
}

TEST_F(MalformedFile, MissingUplo) {
    Hdf5Edit(bad_).remove_attribute("uplo");
    expect_refused("/", "missing attribute 'uplo'");
}

TEST_F(MalformedFile, BadUplo) {
    Hdf5Edit(bad_).string_attribute("uplo", "sideways");
    expect_refused("/", "attribute 'uplo' is 'sideways'");
}

TEST_F(MalformedFile, BadLayout) {
    Hdf5Edit(bad_).string_attribute("layout", "interleaved");
    expect_refused("/", "attribute 'layout' is 'interleaved'");
}

TEST_F(MalformedFile, MissingA) {
    Hdf5Edit(bad_).remove("/A");
    expect_refused("/A", "missing dataset");
}

TEST_F(MalformedFile, MissingB) {
    Hdf5Edit(bad_).remove("/B");
    expect_refused("/B", "missing dataset");
}

TEST_F(MalformedFile, AIsAGroup) {
    Hdf5Edit(bad_).group("/A");
    expect_refused("/A", "not a dataset");
}

TEST_F(MalformedFile, IntegerA) {
    Hdf5Edit(bad_).dataset("/A", H5T_STD_I32LE, {4, 3, 3});
    expect_refused("/A", "dtype int32 does not match the file's precision 'd' (expected float64)");
}

TEST_F(MalformedFile, StringA) {
    const hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 8);
    Hdf5Edit(bad_).dataset("/A", str, {4, 3, 3});
    H5Tclose(str);
    expect_refused("/A", "dtype string does not match");
}

TEST_F(MalformedFile, PrecisionMismatchBetweenAttributeAndDtype) {
    Hdf5Edit(bad_).dataset("/A", H5T_IEEE_F32LE, {4, 3, 3});
    expect_refused("/A", "dtype float32 does not match the file's precision 'd' (expected float64)");
}

TEST_F(MalformedFile, ComplexDtypeUnderRealPrecision) {
    const hid_t c = H5Tcreate(H5T_COMPOUND, 16);
    H5Tinsert(c, "r", 0, H5T_IEEE_F64LE);
    H5Tinsert(c, "i", 8, H5T_IEEE_F64LE);
    Hdf5Edit(bad_).dataset("/B", c, {4, 2, 3});
    H5Tclose(c);
    expect_refused("/B", "dtype complex128 does not match the file's precision 'd'");
}

TEST_F(MalformedFile, CompoundThatIsNotComplex) {
    {
        Hdf5Edit edit(bad_);
        edit.string_attribute("precision", "z");
        const hid_t c = H5Tcreate(H5T_COMPOUND, 16);
        H5Tinsert(c, "re", 0, H5T_IEEE_F64LE);
        H5Tinsert(c, "im", 8, H5T_IEEE_F64LE);
        edit.dataset("/A", c, {4, 3, 3});
        H5Tclose(c);
    }
    expect_file_error([&] { io::inspect_batch(bad_); }, bad_, "/A", "dtype compound (not {r, i} of floats)");
}

TEST_F(MalformedFile, WrongRankOfA) {
    Hdf5Edit(bad_).dataset("/A", H5T_IEEE_F64LE, {4, 9});
    expect_refused("/A", "rank 2 (shape (4, 9)), expected rank 3 (count, n, n)");
}

TEST_F(MalformedFile, ScalarA) {
    Hdf5Edit(bad_).dataset("/A", H5T_IEEE_F64LE, {});
    expect_refused("/A", "rank 0");
}

TEST_F(MalformedFile, NonSquareA) {
    Hdf5Edit(bad_).dataset("/A", H5T_IEEE_F64LE, {4, 3, 5});
    expect_refused("/A", "non-square matrices: shape (4, 3, 5)");
}

TEST_F(MalformedFile, WrongRankOfB) {
    Hdf5Edit(bad_).dataset("/B", H5T_IEEE_F64LE, {4, 6});
    expect_refused("/B", "rank 2");
}

TEST_F(MalformedFile, CountOfBDoesNotMatchA) {
    Hdf5Edit(bad_).dataset("/B", H5T_IEEE_F64LE, {5, 2, 3});
    expect_refused("/B", "count 5 does not match /A's count 4");
}

TEST_F(MalformedFile, OrderOfBDoesNotMatchA) {
    Hdf5Edit(bad_).dataset("/B", H5T_IEEE_F64LE, {4, 2, 4});
    expect_refused("/B", "n = 4 does not match /A's n = 3");
}

TEST_F(MalformedFile, XTrueShapeDoesNotMatchB) {
    Hdf5Edit(bad_).dataset("/X_true", H5T_IEEE_F64LE, {4, 1, 3});
    expect_refused("/X_true", "shape (4, 1, 3) does not match /B's shape (4, 2, 3)");
}

TEST_F(MalformedFile, ExpectedInfoOfWrongType) {
    Hdf5Edit(bad_).dataset("/expected_info", H5T_IEEE_F64LE, {4});
    expect_refused("/expected_info", "dtype float64, expected an integer type");
}

TEST_F(MalformedFile, ExpectedInfoOfWrongLength) {
    Hdf5Edit(bad_).dataset("/expected_info", H5T_STD_I32LE, {3});
    expect_refused("/expected_info", "does not match /A's count 4");
}

// ---- issue 22: sizes checked, never wrapped ------------------------------------------------------------

// Defect 1: a 6 KB file declaring (313248009, 999942535, 999942535) loaded 48 MB and posv read past it.
TEST_F(MalformedFile, ShapeWhoseElementCountWrapsIsRefused) {
    {
        Hdf5Edit edit(bad_);
        edit.chunked_dataset("/A", H5T_IEEE_F64LE, {313248009, 999942535, 999942535});
        edit.chunked_dataset("/B", H5T_IEEE_F64LE, {313248009, 2, 999942535});
        edit.remove("/X_true");
        edit.remove("/expected_info");
    }
    expect_refused("/A", "(313248009, 999942535, 999942535) has more elements than 2^64");
}

// ... and when the count wrapped to exactly 0 the message was "'a.data': non-null".
TEST_F(MalformedFile, ShapeWhoseElementCountWrapsToZeroIsRefused) {
    {
        Hdf5Edit edit(bad_);
        edit.chunked_dataset("/A", H5T_IEEE_F64LE, {1u << 30, 1u << 30, 1u << 30});
        edit.chunked_dataset("/B", H5T_IEEE_F64LE, {1u << 30, 2, 1u << 30});
        edit.remove("/X_true");
        edit.remove("/expected_info");
    }
    expect_refused("/A", "more elements than 2^64");
}

// A shape that fits 64 bits but not this machine: refused before allocating, in words.
TEST_F(MalformedFile, ShapeBeyondMemoryIsRefusedBeforeAllocating) {
    {
        Hdf5Edit edit(bad_);
        edit.chunked_dataset("/A", H5T_IEEE_F64LE, {1u << 20, 4096, 4096});
        edit.chunked_dataset("/B", H5T_IEEE_F64LE, {1u << 20, 2, 4096});
        edit.remove("/X_true");
        edit.remove("/expected_info");
    }
    EXPECT_NO_THROW(io::inspect_batch(bad_));  // shapes only: nothing to allocate
    expect_file_error([&] { io::read_batch<double>(bad_); }, bad_, "/A", "needs 128.0 TiB, ");
}

// A contiguous dataset the file does not store (declared, never written): refused, not read as zeros.
TEST_F(MalformedFile, DeclaredButUnstoredDataIsRefused) {
    Hdf5Edit(bad_).dataset("/A", H5T_IEEE_F64LE, {4, 3, 3});
    expect_file_error([&] { io::read_batch<double>(bad_); }, bad_, "/A", "stores 0 bytes");
}

// The hostile-input probe's batch: a chunked /A of shape (12000, 128, 128) and /B with no chunk
// written (a 6 KB file). Before, only contiguous data was compared with its shape: bsolve spent
// 3.4 GB and 14 s and wrote NaN. Refused before allocating, naming the chunks that are missing.
TEST_F(MalformedFile, UnwrittenChunkedDataIsRefused) {
    {
        Hdf5Edit edit(bad_);
        // 1200 rather than 12000 matrices: 157 MB declared, within any test machine's memory, so that
        // the refusal is the chunk check's and not the memory check's.
        edit.chunked_dataset("/A", H5T_IEEE_F64LE, {1200, 128, 128});
        edit.chunked_dataset("/B", H5T_IEEE_F64LE, {1200, 2, 128});
        edit.remove("/X_true");
        edit.remove("/expected_info");
    }
    expect_file_error([&] { io::read_batch<double>(bad_); }, bad_, "/A", "chunks are in the file");
}

// Data kept in another file is not followed.
TEST_F(MalformedFile, ExternalLinkIsRefused) {
    {
        Hdf5Edit edit(bad_);
        edit.remove("/A");
        ASSERT_GE(H5Lcreate_external(good_.c_str(), "/A", edit.file(), "/A", H5P_DEFAULT, H5P_DEFAULT), 0);
    }
    expect_refused("/A", "external link");
}
