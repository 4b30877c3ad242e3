// Tests of the typed HDF5 layer (batchsolve_io/hdf5.hpp): exact round trips of every element type and
// rank, strings, attributes, lossless conversions accepted and lossy ones refused, sizes checked
// before allocation, and the output rules (no replacement without Existing::replace, never over an
// input, a device or a read-only file, permissions kept, no temporary left behind).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <random>

#include "batchsolve/checked_size.hpp"
#include "batchsolve_io/hdf5.hpp"

#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace batchsolve;
namespace h5 = batchsolve::io::h5;
using io::FileError;

namespace {

using data_tests::fresh_seed;
using data_tests::ScratchDir;

// Random values over the type's whole range (integers), or in [-1e6, 1e6] with some specials (floats).
template <class T>
std::vector<T> random_values(std::size_t count, std::mt19937_64& gen) {
    std::vector<T> v(count);
    if constexpr (std::is_integral_v<T>) {
        std::uniform_int_distribution<T> u(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
        for (T& x : v) x = u(gen);
    } else {
        using R = real_t<T>;
        std::uniform_real_distribution<double> u(-1e6, 1e6);
        for (T& x : v) {
            if constexpr (is_complex_v<T>) x = T(R(u(gen)), R(u(gen)));
            else x = T(u(gen));
        }
        if (count > 2) {
            v[0] = T(std::numeric_limits<R>::infinity());
            v[1] = T(-R(0));
        }
    }
    return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Runs f, which must throw FileError naming `file` and `object` with a reason containing each of `parts`.
void expect_file_error(const std::function<void()>& f, const std::string& file, const std::string& object,
                       const std::vector<std::string>& parts) {
    try {
        f();
        ADD_FAILURE() << "no FileError (expected one about " << object << ")";
    } catch (const FileError& e) {
        EXPECT_EQ(e.file(), file) << e.what();
        EXPECT_EQ(e.dataset(), object) << e.what();
        for (const auto& part : parts) EXPECT_NE(e.reason().find(part), std::string::npos) << "'" << part << "' not in: " << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
}

// A file made with the C API directly (the layer's own writer would refuse what these tests need).
class RawFile {
public:
    explicit RawFile(const std::string& path) : id_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {}
    ~RawFile() { H5Fclose(id_); }
    hid_t id() const { return id_; }
    // A dataset of file type `type` and shape `dims`, written from `data` (in memory type `mem`) when given.
    void dataset(const char* name, hid_t type, std::vector<hsize_t> dims, hid_t mem = -1, const void* data = nullptr,
                 hid_t dcpl = H5P_DEFAULT) const {
        const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
        const hid_t d = H5Dcreate2(id_, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        EXPECT_GE(d, 0) << name;
        if (data != nullptr) {
            EXPECT_GE(H5Dwrite(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
        }
        H5Dclose(d);
        H5Sclose(space);
    }

private:
    hid_t id_;
};

// ---- round trips --------------------------------------------------------------------------------------

template <class T>
class RoundTrip : public ::testing::Test {};
using ElementTypes = ::testing::Types<std::uint8_t, std::uint16_t, std::int32_t, std::int64_t, std::uint64_t, float,
                                      double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(RoundTrip, ElementTypes);

template <class T>
void every_rank_bit_exact(h5::WriteMode mode) {
    ScratchDir dir;
    std::mt19937_64 gen(fresh_seed());
    const std::vector<h5::Shape> shapes = {{}, {0}, {7}, {3, 5}, {2, 0, 4}, {2, 3, 4}, {2, 1, 3, 2}, {40000}, {3, 200, 97}};
    std::vector<std::vector<T>> written;
    const std::string path = dir.path("types.h5");
    {
        auto f = h5::File::create(path, h5::Existing::refuse, {}, mode);
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            written.push_back(random_values<T>(*checked_product(shapes[i]), gen));
            // Odd datasets uncompressed, so that both storage layouts are read back.
            f.write("/group/d" + std::to_string(i), written.back().data(), shapes[i], i % 2 == 0);
        }
        f.commit();
    }
    auto f = h5::File::open(path);
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        const std::string name = "/group/d" + std::to_string(i);
        h5::Shape shape{99};
        EXPECT_TRUE(same_bits(f.read<T>(name, &shape), written[i])) << name;
        EXPECT_EQ(shape, shapes[i]) << name;
        EXPECT_EQ(f.shape(name), shapes[i]);
        EXPECT_TRUE(same_bits(f.read_exact<T>(name, shapes[i]), written[i]));
    }
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"types.h5"});  // no temporary left
}

TYPED_TEST(RoundTrip, EveryRankBitExact) { every_rank_bit_exact<TypeParam>(h5::WriteMode::image); }
// Built in the temporary on disk, the uncompressed arrays written straight to their reserved space.
TYPED_TEST(RoundTrip, EveryRankBitExactWrittenDirect) { every_rank_bit_exact<TypeParam>(h5::WriteMode::direct); }

TEST(Hdf5, VectorWriteIsOneDimensional) {
    ScratchDir dir;
    const std::string path = dir.path("v.h5");
    auto f = h5::File::create(path);
    f.write("/v", std::vector<double>{1, 2, 3});
    f.commit();
    EXPECT_EQ(h5::File::open(path).shape("/v"), (h5::Shape{3}));
}

TEST(Hdf5, StringsRoundTrip) {
    ScratchDir dir;
    const std::string path = dir.path("s.h5");
    const std::vector<std::string> values = {"alpha", "", "Größe ∑", std::string(1000, 'x'), "tab\there"};
    {
        auto f = h5::File::create(path);
        f.write_strings("/ids/names", values);
        f.write_strings("/none", {});
        f.commit();
    }
    auto f = h5::File::open(path);
    EXPECT_EQ(f.read_strings("/ids/names"), values);
    EXPECT_TRUE(f.read_strings("/none").empty());
}

TEST(Hdf5, FixedLengthStringsAsH5pyAndMatlabWriteThem) {
    ScratchDir dir;
    const std::string path = dir.path("fixed.h5");
    {
        RawFile raw(path);
        const hid_t type = H5Tcopy(H5T_C_S1);
        H5Tset_size(type, 6);
        H5Tset_strpad(type, H5T_STR_NULLPAD);
        const char data[] = "ab\0\0\0\0cdefgh";
        raw.dataset("/fixed", type, {2}, type, data);
        H5Tset_strpad(type, H5T_STR_SPACEPAD);
        const char padded[] = "x     yz    ";
        raw.dataset("/spaced", type, {2}, type, padded);
        H5Tclose(type);
    }
    auto f = h5::File::open(path);
    EXPECT_EQ(f.read_strings("/fixed"), (std::vector<std::string>{"ab", "cdefgh"}));
    EXPECT_EQ(f.read_strings("/spaced"), (std::vector<std::string>{"x", "yz"}));
    expect_file_error([&] { f.read<double>("/fixed"); }, path, "/fixed", {"string", "not a number"});
}

TEST(Hdf5, AttributesOnRootGroupsAndDatasets) {
    ScratchDir dir;
    const std::string path = dir.path("attrs.h5");
    {
        auto f = h5::File::create(path);
        f.create_group("/a/b/c");
        f.write("/a/data", std::vector<float>{1, 2});
        f.set_attribute("/", "title", "batch of tests");
        f.set_attribute("/", "count", 7);
        f.set_attribute("/", "big", std::int64_t(1) << 40);
        f.set_attribute("/", "negative", std::int64_t(-5));
        f.set_attribute("/a/b", "tolerance", 1e-12);
        f.set_attribute("/a/data", "axes", std::vector<double>{0.5, -2, 1e300});
        f.set_attribute("/a/data", "empty", std::vector<double>{});
        f.set_attribute("/", "count", 8);  // replaces
        f.commit();
    }
    auto f = h5::File::open(path);
    EXPECT_TRUE(f.exists("/"));
    EXPECT_TRUE(f.exists("/a/b/c"));
    EXPECT_TRUE(f.exists("a/data"));
    EXPECT_FALSE(f.exists("/a/x"));
    EXPECT_FALSE(f.exists("/a/data/deeper"));
    EXPECT_EQ(f.string_attribute("/", "title"), "batch of tests");
    EXPECT_EQ(f.int_attribute("/", "count"), 8);
    EXPECT_EQ(f.int_attribute("/", "big"), std::int64_t(1) << 40);
    EXPECT_EQ(f.int_attribute("/", "negative"), -5);
    EXPECT_EQ(f.double_attribute("/a/b", "tolerance"), 1e-12);
    EXPECT_EQ(f.double_attribute("/", "count"), 8.0);  // an integer reads as a number
    EXPECT_EQ(f.doubles_attribute("/a/data", "axes"), (std::vector<double>{0.5, -2, 1e300}));
    EXPECT_TRUE(f.doubles_attribute("/a/data", "empty").empty());
    EXPECT_TRUE(f.has_attribute("/a/data", "axes"));
    EXPECT_FALSE(f.has_attribute("/a/data", "nope"));
    expect_file_error([&] { f.string_attribute("/a/b", "nope"); }, path, "/a/b", {"missing attribute 'nope'"});
    expect_file_error([&] { f.int_attribute("/a/b", "tolerance"); }, path, "/a/b", {"float64", "an integer"});
    expect_file_error([&] { f.string_attribute("/", "count"); }, path, "/", {"int32", "a string"});
    expect_file_error([&] { f.double_attribute("/a/data", "axes"); }, path, "/a/data", {"single value", "3"});
    expect_file_error([&] { f.has_attribute("/missing", "x"); }, path, "/missing", {"no such group or dataset"});
}

// ---- conversions ----------------------------------------------------------------------------------------

TEST(Hdf5, LosslessConversionsAreMade) {
    ScratchDir dir;
    const std::string path = dir.path("conv.h5");
    const std::vector<std::uint8_t> bytes = {0, 1, 255};
    const std::vector<float> floats = {1.5f, -2.25f, 3e38f};
    const std::vector<std::int32_t> ints = {std::numeric_limits<std::int32_t>::min(), 0, 7};
    const std::vector<std::uint16_t> shorts = {0, 65535, 3};
    const std::vector<std::complex<float>> complexes = {{1.5f, -2}, {0, 3e38f}};
    {
        auto f = h5::File::create(path);
        f.write("/u8", bytes);
        f.write("/f32", floats);
        f.write("/i32", ints);
        f.write("/u16", shorts);
        f.write("/c64", complexes);
        f.commit();
    }
    auto f = h5::File::open(path);
    EXPECT_EQ(f.read<float>("/u8"), (std::vector<float>{0, 1, 255}));
    EXPECT_EQ(f.read<std::uint16_t>("/u8"), (std::vector<std::uint16_t>{0, 1, 255}));
    EXPECT_EQ(f.read<double>("/f32"), (std::vector<double>{1.5, -2.25, double(3e38f)}));
    EXPECT_EQ(f.read<std::int64_t>("/i32"), (std::vector<std::int64_t>{std::numeric_limits<std::int32_t>::min(), 0, 7}));
    EXPECT_EQ(f.read<double>("/i32"), (std::vector<double>{double(std::numeric_limits<std::int32_t>::min()), 0, 7}));
    EXPECT_EQ(f.read<std::int32_t>("/u16"), (std::vector<std::int32_t>{0, 65535, 3}));
    EXPECT_EQ(f.read<std::uint64_t>("/u16"), (std::vector<std::uint64_t>{0, 65535, 3}));
    EXPECT_EQ(f.read<std::complex<double>>("/c64"),
              (std::vector<std::complex<double>>{{1.5, -2}, {0, double(3e38f)}}));
}

TEST(Hdf5, LossyConversionsAreRefusedWithBothTypes) {
    ScratchDir dir;
    const std::string path = dir.path("lossy.h5");
    {
        auto f = h5::File::create(path);
        f.write("/f64", std::vector<double>{1e300});
        f.write("/i64", std::vector<std::int64_t>{std::int64_t(1) << 40});
        f.write("/i32", std::vector<std::int32_t>{-1});
        f.write("/u64", std::vector<std::uint64_t>{1});
        f.write("/c128", std::vector<std::complex<double>>{{1, 2}});
        f.commit();
    }
    auto f = h5::File::open(path);
    const std::vector<std::pair<std::string, std::function<void()>>> cases = {
        {"float64 float32", [&] { f.read<float>("/f64"); }},
        {"int64 int32", [&] { f.read<std::int32_t>("/i64"); }},
        {"int64 float64", [&] { f.read<double>("/i64"); }},      // 63 bits do not fit a 53-bit significand
        {"int32 uint64", [&] { f.read<std::uint64_t>("/i32"); }}, // negative values
        {"int32 float32", [&] { f.read<float>("/i32"); }},
        {"uint64 int64", [&] { f.read<std::int64_t>("/u64"); }},
        {"float64 int64", [&] { f.read<std::int64_t>("/f64"); }},
        {"complex128 complex64", [&] { f.read<std::complex<float>>("/c128"); }},
        {"complex128 float64", [&] { f.read<double>("/c128"); }},
        {"float64 complex128", [&] { f.read<std::complex<double>>("/f64"); }},
    };
    for (const auto& [names, read] : cases) {
        const std::string from = names.substr(0, names.find(' ')), to = names.substr(names.find(' ') + 1);
        const std::string dataset = from == "float64" ? "/f64" : from == "int64" ? "/i64" : from == "int32" ? "/i32"
                                    : from == "uint64" ? "/u64" : "/c128";
        expect_file_error(read, path, dataset, {"dtype " + from, to, "refused"});
    }
}

// ---- errors naming what is wrong ---------------------------------------------------------------------

TEST(Hdf5, MissingDatasetIsNamed) {
    ScratchDir dir;
    const std::string path = dir.path("m.h5");
    {
        auto f = h5::File::create(path);
        f.write("/present", std::vector<double>{1});
        f.commit();
    }
    auto f = h5::File::open(path);
    expect_file_error([&] { f.read<double>("/absent"); }, path, "/absent", {"missing dataset"});
    expect_file_error([&] { f.read<double>("/deep/absent"); }, path, "/deep/absent", {"missing dataset"});
    expect_file_error([&] { f.read_exact<double>("/present", {2}); }, path, "/present", {"shape (1,)", "expected (2,)"});
    expect_file_error([&] { f.write("/x", std::vector<double>{1}); }, path, "/x", {"opened for reading"});
    expect_file_error([&] { f.commit(); }, path, "/", {"opened for reading"});
    expect_file_error([] { h5::File::open("/nonexistent/dir/file.h5"); }, "/nonexistent/dir/file.h5", "/", {"no such file"});
    const std::string text = dir.path("text.h5");
    std::ofstream(text) << "not hdf5";
    expect_file_error([&] { h5::File::open(text); }, text, "/", {"not an HDF5 file"});
}

TEST(Hdf5, WritesRefuseBadArguments) {
    ScratchDir dir;
    const std::string path = dir.path("w.h5");
    auto f = h5::File::create(path);
    f.write("/x", std::vector<double>{1});
    expect_file_error([&] { f.write("/x", std::vector<double>{2}); }, path, "/x", {"already exists"});
    expect_file_error([&] { f.write<double>("/null", nullptr, {3}); }, path, "/null", {"null pointer"});
    const double one = 1;
    expect_file_error([&] { f.write("/huge", &one, {std::uint64_t(1) << 40, std::uint64_t(1) << 40}); }, path, "/huge",
                      {"too large"});
    f.commit();
    expect_file_error([&] { f.write("/late", std::vector<double>{1}); }, path, "/late", {"committed"});
    h5::File moved = std::move(f);
    EXPECT_THROW(f.exists("/x"), Error);  // NOLINT(bugprone-use-after-move): the point of the test
}

TEST(Hdf5, ExternalLinksAndExternalStorageAreRefused) {
    ScratchDir dir;
    const std::string other = dir.path("other.h5"), path = dir.path("links.h5");
    {
        auto f = h5::File::create(other);
        f.write("/secret", std::vector<double>{42});
        f.commit();
    }
    {
        RawFile raw(path);
        EXPECT_GE(H5Lcreate_external(other.c_str(), "/secret", raw.id(), "/linked", H5P_DEFAULT, H5P_DEFAULT), 0);
        EXPECT_GE(H5Lcreate_external(other.c_str(), "/", raw.id(), "/group", H5P_DEFAULT, H5P_DEFAULT), 0);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_external(dcpl, other.c_str(), 0, 8);
        raw.dataset("/outside", H5T_IEEE_F64LE, {1}, -1, nullptr, dcpl);
        H5Pclose(dcpl);
    }
    auto f = h5::File::open(path);
    expect_file_error([&] { f.read<double>("/linked"); }, path, "/linked", {"external link"});
    expect_file_error([&] { f.read<double>("/group/secret"); }, path, "/group/secret", {"external link"});
    expect_file_error([&] { f.read<double>("/outside"); }, path, "/outside", {"external files"});
}

// ---- sizes ----------------------------------------------------------------------------------------------

// The hostile-input probe's file: 6 KB declaring a chunked (12000, 128, 128) float64 dataset of which no
// chunk was written. Before, only contiguous data was compared with the shape: bsolve allocated 1.5 GB
// per dataset and wrote NaN results. Refused now before allocating, with the chunk counts.
TEST(Hdf5, UnwrittenChunkedDatasetIsRefusedBeforeAllocation) {
    ScratchDir dir;
    const std::string path = dir.path("chunked.h5");
    {
        RawFile raw(path);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        const hsize_t chunk[3] = {1, 128, 128};
        H5Pset_chunk(dcpl, 3, chunk);
        raw.dataset("/unwritten", H5T_IEEE_F64LE, {12000, 128, 128}, -1, nullptr, dcpl);
        H5Pset_deflate(dcpl, 4);
        // Written and compressed far below its size (all zeros): accepted, deflate's bound is not reached.
        const std::vector<double> zeros(4 * 128 * 128, 0.0);
        raw.dataset("/zeros", H5T_IEEE_F64LE, {4, 128, 128}, H5T_NATIVE_DOUBLE, zeros.data(), dcpl);
        H5Pclose(dcpl);
    }
    auto f = h5::File::open(path);
    expect_file_error([&] { f.read<double>("/unwritten", nullptr, std::uint64_t(1) << 40); }, path, "/unwritten",
                      {"(12000, 128, 128)", "chunks of (1, 128, 128)", "only 0 of its 12000 chunks"});
    EXPECT_EQ(f.read<double>("/zeros").size(), 4u * 128 * 128);
}

TEST(Hdf5, DeclaredSizesAreCheckedBeforeAllocation) {
    ScratchDir dir;
    const std::string path = dir.path("sizes.h5");
    {
        RawFile raw(path);
        // The crafted file of issue 22: a shape whose element count wraps 64 bits, no data stored.
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        const hsize_t chunk[3] = {1, 1, 1};
        H5Pset_chunk(dcpl, 3, chunk);
        raw.dataset("/wraps", H5T_IEEE_F64LE, {313248009, 999942535, 999942535}, -1, nullptr, dcpl);
        // No wrap, but far beyond any machine's memory.
        raw.dataset("/huge", H5T_IEEE_F64LE, {std::uint64_t(1) << 20, std::uint64_t(1) << 20, 1024}, -1, nullptr, dcpl);
        H5Pclose(dcpl);
        // Contiguous, 8 MB declared, never written: nothing stored.
        raw.dataset("/unwritten", H5T_IEEE_F64LE, {1 << 20});
        const std::vector<double> small(1000, 1.0);
        raw.dataset("/small", H5T_IEEE_F64LE, {1000}, H5T_NATIVE_DOUBLE, small.data());
    }
    auto f = h5::File::open(path);
    expect_file_error([&] { f.read<double>("/wraps"); }, path, "/wraps", {"(313248009, 999942535, 999942535)", "2^64"});
    expect_file_error([&] { f.read<double>("/huge"); }, path, "/huge", {"needs 8.0 PiB", "available"});
    expect_file_error([&] { f.read<double>("/unwritten"); }, path, "/unwritten", {"declares 8.0 MiB", "stores 0 bytes"});
    expect_file_error([&] { f.read<double>("/small", nullptr, 7999); }, path, "/small",
                      {"needs 7.8 KiB", "7.8 KiB available"});
    EXPECT_EQ(f.read<double>("/small", nullptr, 8000).size(), 1000u);
    EXPECT_GT(h5::available_host_bytes(), 0u);
}

// ---- output safety --------------------------------------------------------------------------------------

std::vector<double> values_of(const std::string& path) { return h5::File::open(path).read<double>("/v"); }

void write_values(const std::string& path, std::vector<double> v, h5::Existing existing = h5::Existing::refuse,
                  const std::vector<std::string>& inputs = {}) {
    auto f = h5::File::create(path, existing, inputs);
    f.write("/v", v);
    f.commit();
}

TEST(Hdf5Output, ExistingTargetNeedsReplace) {
    ScratchDir dir;
    const std::string path = dir.path("out.h5");
    write_values(path, {1});
    expect_file_error([&] { write_values(path, {2}); }, path, "/", {"exists; pass --force to replace it"});
    EXPECT_EQ(values_of(path), std::vector<double>{1});
    write_values(path, {3}, h5::Existing::replace);
    EXPECT_EQ(values_of(path), std::vector<double>{3});
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.h5"});
}

TEST(Hdf5Output, TargetAppearingBeforeCommitIsNotReplaced) {
    ScratchDir dir;
    const std::string path = dir.path("late.h5");
    auto f = h5::File::create(path);
    f.write("/v", std::vector<double>{1});
    std::ofstream(path) << "someone else's file";
    expect_file_error([&] { f.commit(); }, path, "/", {"exists"});
    std::ifstream in(path);
    std::string text;
    std::getline(in, text);
    EXPECT_EQ(text, "someone else's file");
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"late.h5"});
}

TEST(Hdf5Output, InputIsNeverTheOutput) {
    ScratchDir dir;
    const std::string input = dir.path("in.h5"), link = dir.path("hard-link.h5"), symlink = dir.path("sym.h5");
    write_values(input, {1});
    fs::create_hard_link(input, link);
    fs::create_symlink(input, symlink);
    for (const std::string& target : {input, link, symlink}) {
        try {
            write_values(target, {2}, h5::Existing::replace, {input});
            ADD_FAILURE() << target << " replaced the input";
        } catch (const FileError& e) {
            EXPECT_NE(e.reason().find("is the input file"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(values_of(input), std::vector<double>{1});
    EXPECT_TRUE(fs::is_symlink(symlink));
}

TEST(Hdf5Output, SymbolicLinkTargetIsWrittenThroughAndKept) {
    ScratchDir dir;
    const std::string real = dir.path("real.h5"), link = dir.path("link.h5");
    write_values(real, {1});
    fs::create_symlink(real, link);
    write_values(link, {5}, h5::Existing::replace);
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(values_of(real), std::vector<double>{5});
    fs::remove(real);
    expect_file_error([&] { write_values(link, {6}, h5::Existing::replace); }, link, "/", {"symbolic link to a missing"});
}

TEST(Hdf5Output, NonRegularTargetsAreRefused) {
    ScratchDir dir;
    for (const std::string device : {"/dev/null", "/dev/full", "/dev/zero"}) {
        struct stat before {};
        if (::stat(device.c_str(), &before) != 0) continue;
        expect_file_error([&] { write_values(device, {1}, h5::Existing::replace); }, device, "/",
                          {"character device", "not a regular file"});
        struct stat after {};
        ASSERT_EQ(::stat(device.c_str(), &after), 0);
        EXPECT_TRUE(S_ISCHR(after.st_mode)) << device << " is no longer a device";
        EXPECT_EQ(after.st_ino, before.st_ino);
    }
    const std::string fifo = dir.path("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    expect_file_error([&] { write_values(fifo, {1}, h5::Existing::replace); }, fifo, "/", {"a FIFO"});
    const std::string sub = dir.path("sub");
    fs::create_directory(sub);
    expect_file_error([&] { write_values(sub, {1}, h5::Existing::replace); }, sub, "/", {"is a directory"});
    expect_file_error([&] { write_values(dir.path("no/such/dir/x.h5"), {1}); }, dir.path("no/such/dir/x.h5"), "/",
                      {"does not exist"});
    EXPECT_EQ(dir.entries(), (std::vector<std::string>{"fifo", "sub"}));
}

TEST(Hdf5Output, ReplacedFileKeepsItsPermissions) {
    ScratchDir dir;
    const std::string path = dir.path("perm.h5");
    write_values(path, {1});
    ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
    write_values(path, {2}, h5::Existing::replace);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    EXPECT_EQ(values_of(path), std::vector<double>{2});
}

TEST(Hdf5Output, ReadOnlyTargetIsRefused) {
    ScratchDir dir;
    const std::string path = dir.path("ro.h5");
    write_values(path, {1});
    ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
    expect_file_error([&] { write_values(path, {2}, h5::Existing::replace); }, path, "/", {"read-only", "0444"});
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0444u);
    EXPECT_EQ(values_of(path), std::vector<double>{1});
}

TEST(Hdf5Output, NoTemporaryIsLeftBehind) {
    ScratchDir dir;
    const std::string path = dir.path("t.h5");
    write_values(path, {1});
    // An exception between create and commit: the target is untouched, nothing else exists.
    EXPECT_THROW(
        {
            auto f = h5::File::create(path, h5::Existing::replace);
            f.write("/v", std::vector<double>{2});
            throw std::runtime_error("the caller failed half-way");
        },
        std::runtime_error);
    EXPECT_EQ(values_of(path), std::vector<double>{1});
    // A failure inside commit: the target became a directory meanwhile.
    const std::string other = dir.path("u.h5");
    {
        auto f = h5::File::create(other);
        f.write("/v", std::vector<double>{2});
        fs::create_directory(other);
        expect_file_error([&] { f.commit(); }, other, "/", {"is a directory"});
    }
    EXPECT_EQ(dir.entries(), (std::vector<std::string>{"t.h5", "u.h5"}));
    EXPECT_TRUE(fs::is_empty(other));
}

// Direct mode keeps the output rules: refusal before anything is written, the replaced file's
// permissions, the target untouched and no temporary left when the caller fails half-way.
TEST(Hdf5Output, DirectModeKeepsTheRules) {
    ScratchDir dir;
    const std::string path = dir.path("d.h5");
    write_values(path, {1});
    expect_file_error([&] { h5::File::create(path, h5::Existing::refuse, {}, h5::WriteMode::direct); }, path, "/", {"exists"});
    ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
    EXPECT_THROW(
        {
            auto f = h5::File::create(path, h5::Existing::replace, {}, h5::WriteMode::direct);
            f.write("/v", std::vector<double>{2});
            throw std::runtime_error("the caller failed half-way");
        },
        std::runtime_error);
    EXPECT_EQ(values_of(path), std::vector<double>{1});
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"d.h5"});
    {
        auto f = h5::File::create(path, h5::Existing::replace, {}, h5::WriteMode::direct);
        f.write("/v", std::vector<double>{2, 3});
        f.set_attribute("/v", "note", "after the data");
        f.commit();
    }
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    EXPECT_EQ(values_of(path), (std::vector<double>{2, 3}));
    EXPECT_EQ(h5::File::open(path).string_attribute("/v", "note"), "after the data");
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"d.h5"});
}

}  // namespace

// ---- reading in a child process first ----------------------------------------------------------------------

namespace {

TEST(ProbeInChild, SuccessReturnsAndErrorsComeBackAsTheyWere) {
    ScratchDir dir;
    const std::string path = dir.path("p.h5");
    write_values(path, {1, 2});
    EXPECT_NO_THROW(h5::probe_in_child(path, [&] { h5::File::open(path).read<double>("/v"); }));
    expect_file_error([&] { h5::probe_in_child(path, [&] { h5::File::open(path).read<float>("/nope"); }); }, path,
                      "/nope", {"missing dataset"});
    expect_file_error([&] { h5::probe_in_child(path, [] { throw std::runtime_error("odd\nfailure"); }); }, path, "/",
                      {"odd failure"});
}

TEST(ProbeInChild, CrashAndHangBecomeFileErrors) {
    ScratchDir dir;
    const std::string path = dir.path("c.h5");
    write_values(path, {1});
    // What HDF5 1.10 does on some crafted files (docs/input-checks.md): the caller survives both.
    // (SIGSEGV in an ordinary build; an AddressSanitizer build reports it and aborts: SIGABRT.)
    expect_file_error([&] { h5::probe_in_child(path, [] { std::raise(SIGSEGV); }); }, path, "/",
                      {"the HDF5 library crashed (SIG", "corrupt or crafted"});
    const auto t0 = std::chrono::steady_clock::now();
    expect_file_error([&] { h5::probe_in_child(path, [] { for (;;) ::pause(); }, 1.0); }, path, "/",
                      {"did not finish in 1 s"});
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
    expect_file_error([&] { h5::probe_in_child(path, [] { std::_Exit(7); }); }, path, "/", {"status 7"});
}

}  // namespace
