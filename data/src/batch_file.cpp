// HDF5 implementation of the batch and solution files of batch_file.hpp (schema: data/README.md).
#include "batchsolve_io/batch_file.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <utility>

#include "batchsolve/checked_size.hpp"
#include "hdf5_detail.hpp"

namespace batchsolve::io {

namespace {

using detail::describe_type;
using detail::Handle;
using detail::hdf5_message;
using detail::is_complex_compound;
using detail::QuietHdf5;
using detail::shape_text;

const char* dtype_name(Precision p) {
    switch (p) {
        case Precision::s: return "float32";
        case Precision::d: return "float64";
        case Precision::c: return "complex64";
        case Precision::z: return "complex128";
    }
    return "?";
}

bool type_matches(hid_t type, Precision p) {
    const bool want_complex = p == Precision::c || p == Precision::z;
    const std::size_t want_size = (p == Precision::s || p == Precision::c) ? 4 : 8;
    if (!want_complex) return H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) == want_size;
    std::size_t part = 0;
    return is_complex_compound(type, &part) && part == want_size;
}

// Memory type of T: native float/double, or the {r, i} compound laid out like std::complex.
template <class T>
Handle memory_type() {
    using R = real_t<T>;
    const hid_t scalar = std::is_same_v<R, float> ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    if constexpr (!is_complex_v<T>) {
        return Handle(H5Tcopy(scalar), H5Tclose);
    } else {
        return detail::complex_type(scalar, sizeof(R));
    }
}

// File type of T: little-endian IEEE, as h5py writes on every common machine.
template <class T>
Handle file_type() {
    using R = real_t<T>;
    const hid_t scalar = std::is_same_v<R, float> ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    if constexpr (!is_complex_v<T>) {
        return Handle(H5Tcopy(scalar), H5Tclose);
    } else {
        return detail::complex_type(scalar, sizeof(R));
    }
}

// ---- reading ---------------------------------------------------------------------------------------

// An open file plus its path, so that every check can name both in its error.
class Reader {
public:
    explicit Reader(std::string path) : path_(std::move(path)), file_(detail::open_for_reading(path_)) {}

    [[noreturn]] void fail(const std::string& dataset, const std::string& reason) const {
        H5Eclear2(H5E_DEFAULT);
        throw FileError(path_, dataset, reason);
    }

    const std::string& path() const { return path_; }
    hid_t file() const { return file_.get(); }

    bool has_attribute(const char* name) const {
        const htri_t e = H5Aexists(file(), name);
        if (e < 0) fail("/", std::string("cannot query attribute '") + name + "': " + hdf5_message());
        return e > 0;
    }

    // A scalar (or one-element) root attribute, opened with its file type checked against `cls`.
    Handle open_attribute(const char* name, H5T_class_t cls, const char* expected, Handle* type_out) const {
        if (!has_attribute(name)) fail("/", std::string("missing attribute '") + name + "'");
        Handle attr(H5Aopen(file(), name, H5P_DEFAULT), H5Aclose);
        if (!attr.valid()) fail("/", std::string("cannot open attribute '") + name + "': " + hdf5_message());
        Handle type(H5Aget_type(attr.get()), H5Tclose);
        Handle space(H5Aget_space(attr.get()), H5Sclose);
        if (!type.valid() || !space.valid())
            fail("/", std::string("cannot read attribute '") + name + "': " + hdf5_message());
        const H5T_class_t got = H5Tget_class(type.get());
        const bool ok = got == cls || (cls == H5T_FLOAT && got == H5T_INTEGER);
        if (!ok)
            fail("/", std::string("attribute '") + name + "' has type " + describe_type(type.get()) + ", expected " +
                          expected);
        if (H5Sget_simple_extent_npoints(space.get()) != 1)
            fail("/", std::string("attribute '") + name + "' must hold a single value (has " +
                          std::to_string(H5Sget_simple_extent_npoints(space.get())) + ")");
        *type_out = std::move(type);
        return attr;
    }

    std::string string_attribute(const char* name) const {
        Handle type;
        Handle attr = open_attribute(name, H5T_STRING, "a string", &type);
        Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
        if (H5Tis_variable_str(type.get()) > 0) {
            H5Tset_size(mem.get(), H5T_VARIABLE);
            char* text = nullptr;
            if (H5Aread(attr.get(), mem.get(), &text) < 0)
                fail("/", std::string("cannot read attribute '") + name + "': " + hdf5_message());
            std::string value = text != nullptr ? text : "";
            H5free_memory(text);
            return value;
        }
        const std::size_t size = H5Tget_size(type.get());
        H5Tset_size(mem.get(), size);
        std::vector<char> text(size + 1, '\0');
        if (H5Aread(attr.get(), mem.get(), text.data()) < 0)
            fail("/", std::string("cannot read attribute '") + name + "': " + hdf5_message());
        std::string value(text.data(), strnlen(text.data(), size));
        while (!value.empty() && value.back() == ' ') value.pop_back();  // space-padded strings
        return value;
    }

    std::int64_t int_attribute(const char* name) const {
        Handle type;
        Handle attr = open_attribute(name, H5T_INTEGER, "an integer", &type);
        std::int64_t value = 0;
        if (H5Aread(attr.get(), H5T_NATIVE_INT64, &value) < 0)
            fail("/", std::string("cannot read attribute '") + name + "' as a 64-bit integer: " + hdf5_message());
        return value;
    }

    std::uint64_t uint_attribute(const char* name) const {
        Handle type;
        Handle attr = open_attribute(name, H5T_INTEGER, "an unsigned integer", &type);
        if (H5Tget_sign(type.get()) != H5T_SGN_NONE) {
            std::int64_t v = 0;
            if (H5Aread(attr.get(), H5T_NATIVE_INT64, &v) < 0 || v < 0)
                fail("/", std::string("attribute '") + name + "' must be a non-negative integer");
            return std::uint64_t(v);
        }
        std::uint64_t value = 0;
        if (H5Aread(attr.get(), H5T_NATIVE_UINT64, &value) < 0)
            fail("/", std::string("cannot read attribute '") + name + "': " + hdf5_message());
        return value;
    }

    double double_attribute(const char* name) const {
        Handle type;
        Handle attr = open_attribute(name, H5T_FLOAT, "a number", &type);
        double value = 0;
        if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value) < 0)
            fail("/", std::string("cannot read attribute '") + name + "': " + hdf5_message());
        return value;
    }

    // The identity attributes every file of ours carries; returns the precision.
    Precision check_identity(const char* format) const {
        const std::string got = string_attribute("format");
        if (got != format)
            fail("/", "attribute 'format' is '" + got + "', expected '" + format + "'");
        const std::int64_t version = int_attribute("format_version");
        if (version > format_version)
            fail("/", "attribute 'format_version' is " + std::to_string(version) + ", newer than this reader's " +
                          std::to_string(format_version));
        if (version < 1) fail("/", "attribute 'format_version' is " + std::to_string(version) + ", expected >= 1");
        const std::string layout = string_attribute("layout");
        if (layout != "column_major")
            fail("/", "attribute 'layout' is '" + layout + "', expected 'column_major' (files always store packed "
                      "column-major matrices)");
        return precision_attribute();
    }

    Precision precision_attribute() const {
        const std::string p = string_attribute("precision");
        if (p == "s") return Precision::s;
        if (p == "d") return Precision::d;
        if (p == "c") return Precision::c;
        if (p == "z") return Precision::z;
        fail("/", "attribute 'precision' is '" + p + "', expected one of s, d, c, z");
    }

    Uplo uplo_attribute() const {
        const std::string u = string_attribute("uplo");
        if (u == "lower") return Uplo::lower;
        if (u == "upper") return Uplo::upper;
        fail("/", "attribute 'uplo' is '" + u + "', expected 'lower' or 'upper'");
    }

    bool has_dataset(const std::string& name) const {
        const htri_t e = H5Lexists(file(), name.c_str(), H5P_DEFAULT);
        if (e < 0) fail(name, "cannot query: " + hdf5_message());
        return e > 0;
    }

    // A dataset with its shape checked for rank; its dims are returned.
    Handle open_dataset(const std::string& name, int rank, const char* shape_doc, std::vector<hsize_t>* dims) const {
        Handle d = detail::open_dataset_checked(file(), path_, name);
        *dims = detail::dataset_dims(d.get(), path_, name);
        const int got = int(dims->size());
        if (got < 0) fail(name, "cannot read the shape: " + hdf5_message());
        if (got != rank)
            fail(name, "rank " + std::to_string(got) + " (shape " + shape_text(*dims) + "), expected rank " +
                           std::to_string(rank) + " " + shape_doc);
        for (hsize_t extent : *dims)
            if (extent > hsize_t(std::numeric_limits<int>::max()))
                fail(name, "shape " + shape_text(*dims) + " has an extent above " +
                               std::to_string(std::numeric_limits<int>::max()) + ", the library's limit");
        return d;
    }

    // Checks that a dataset's element type is that of the file's precision.
    void check_dtype(hid_t dataset, const std::string& name, Precision p) const {
        Handle type(H5Dget_type(dataset), H5Tclose);
        if (!type.valid()) fail(name, "cannot read the dtype: " + hdf5_message());
        if (!type_matches(type.get(), p))
            fail(name, "dtype " + describe_type(type.get()) + " does not match the file's precision '" +
                           std::string(1, precision_letter(p)) + "' (expected " + dtype_name(p) + ")");
    }

    void check_integer_dtype(hid_t dataset, const std::string& name) const {
        Handle type(H5Dget_type(dataset), H5Tclose);
        if (!type.valid()) fail(name, "cannot read the dtype: " + hdf5_message());
        if (H5Tget_class(type.get()) != H5T_INTEGER)
            fail(name, "dtype " + describe_type(type.get()) + ", expected an integer type (int32)");
    }

    // Reads a whole dataset after checking its size against memory and against what the file stores.
    template <class T>
    std::vector<T> read_all(hid_t dataset, const std::string& name, hid_t mem_type,
                            const std::vector<hsize_t>& dims) const {
        const std::size_t bytes = detail::check_dataset_size(dataset, path_, name, dims, sizeof(T), 0);
        std::vector<T> v;
        try {
            v.resize(bytes / sizeof(T));
        } catch (const std::bad_alloc&) {
            fail(name, "out of memory loading it (needs " + bytes_text(bytes) + ")");
        }
        if (!v.empty() && H5Dread(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
            fail(name, "read failed (corrupt or truncated data?): " + hdf5_message());
        return v;
    }

private:
    std::string path_;
    Handle file_;
};

// Checks a batch file completely except for the values, and returns what it holds.
BatchFileInfo check_batch(const Reader& r) {
    BatchFileInfo info;
    info.precision = r.check_identity(batch_format);
    info.uplo = r.uplo_attribute();
    if (r.has_attribute("generator")) info.generator.name = r.string_attribute("generator");
    if (r.has_attribute("generator_cond")) info.generator.cond = r.double_attribute("generator_cond");
    if (r.has_attribute("generator_seed")) info.generator.seed = r.uint_attribute("generator_seed");

    std::vector<hsize_t> da, db;
    Handle a = r.open_dataset("/A", 3, "(count, n, n)", &da);
    r.check_dtype(a.get(), "/A", info.precision);
    if (da[1] != da[2])
        r.fail("/A", "non-square matrices: shape " + shape_text(da) + " is (count, n, m) with n != m");
    info.count = int(da[0]);
    info.n = int(da[1]);
    // Each extent fits an int, their product need not fit 64 bits: refused here, before any reader
    // sizes a buffer by it.
    if (!checked_product(da))
        r.fail("/A", "shape " + shape_text(da) + " has more elements than 2^64: refused");

    Handle b = r.open_dataset("/B", 3, "(count, nrhs, n)", &db);
    r.check_dtype(b.get(), "/B", info.precision);
    if (db[0] != da[0])
        r.fail("/B", "shape " + shape_text(db) + ": count " + std::to_string(db[0]) + " does not match /A's count " +
                         std::to_string(da[0]));
    if (db[2] != da[1])
        r.fail("/B", "shape " + shape_text(db) + " is (count, nrhs, n) but n = " + std::to_string(db[2]) +
                         " does not match /A's n = " + std::to_string(da[1]));
    info.nrhs = int(db[1]);
    if (!checked_product(db))
        r.fail("/B", "shape " + shape_text(db) + " has more elements than 2^64: refused");

    info.has_x_true = r.has_dataset("/X_true");
    if (info.has_x_true) {
        std::vector<hsize_t> dx;
        Handle x = r.open_dataset("/X_true", 3, "(count, nrhs, n)", &dx);
        r.check_dtype(x.get(), "/X_true", info.precision);
        if (dx != db) r.fail("/X_true", "shape " + shape_text(dx) + " does not match /B's shape " + shape_text(db));
    }
    info.has_expected_info = r.has_dataset("/expected_info");
    if (info.has_expected_info) {
        std::vector<hsize_t> de;
        Handle e = r.open_dataset("/expected_info", 1, "(count,)", &de);
        r.check_integer_dtype(e.get(), "/expected_info");
        if (de[0] != da[0])
            r.fail("/expected_info", "shape " + shape_text(de) + " does not match /A's count " + std::to_string(da[0]));
    }
    return info;
}

template <class T>
std::vector<T> read_values(const Reader& r, const std::string& name) {
    std::vector<hsize_t> dims;
    Handle d = r.open_dataset(name, 3, "", &dims);
    Handle mem = memory_type<T>();
    return r.read_all<T>(d.get(), name, mem.get(), dims);
}

std::vector<int> read_ints(const Reader& r, const std::string& name) {
    std::vector<hsize_t> dims;
    Handle d = r.open_dataset(name, 1, "", &dims);
    return r.read_all<int>(d.get(), name, H5T_NATIVE_INT, dims);
}

template <class T>
void require_precision(const Reader& r, Precision file_p) {
    if (file_p != precision_v<T>)
        r.fail("/", std::string("the file holds precision '") + precision_letter(file_p) + "' (" +
                        dtype_name(file_p) + ") but precision '" + precision_letter(precision_v<T>) + "' was asked for");
}

// ---- writing ---------------------------------------------------------------------------------------

// A batch or solution file under construction: detail::OutputFile (checked target, in-memory image,
// temporary renamed over the target by commit(), removed on any failure) plus typed writers.
class AtomicWriter {
public:
    AtomicWriter(std::string target, std::size_t expected_bytes, const OutputOptions& options)
        : out_(std::move(target), expected_bytes, options) {}

    hid_t file() const { return out_.file(); }
    [[noreturn]] void fail(const std::string& dataset, const std::string& reason) const { out_.fail(dataset, reason); }
    void commit() { out_.commit(); }

    void string_attribute(const char* name, const std::string& value) const {
        Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_size(type.get(), H5T_VARIABLE);
        H5Tset_cset(type.get(), H5T_CSET_UTF8);
        const char* text = value.c_str();
        write_attribute(name, type.get(), type.get(), &text);
    }
    void int_attribute(const char* name, std::int64_t value) const {
        // int32 in the file where the value fits, as numpy users expect for small counters.
        if (value >= std::numeric_limits<std::int32_t>::min() && value <= std::numeric_limits<std::int32_t>::max()) {
            const std::int32_t v = std::int32_t(value);
            write_attribute(name, H5T_STD_I32LE, H5T_NATIVE_INT32, &v);
        } else {
            write_attribute(name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
        }
    }
    void uint_attribute(const char* name, std::uint64_t value) const {
        write_attribute(name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
    }
    void double_attribute(const char* name, double value) const {
        write_attribute(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
    }

    template <class T>
    void dataset(const std::string& name, const std::vector<hsize_t>& dims, const std::vector<T>& values) const {
        if constexpr (std::is_same_v<T, int>) {
            write_dataset(name, dims, H5T_STD_I32LE, H5T_NATIVE_INT, values.data());
        } else {
            Handle ft = file_type<T>(), mt = memory_type<T>();
            write_dataset(name, dims, ft.get(), mt.get(), values.data());
        }
    }

private:
    void write_attribute(const char* name, hid_t file_t, hid_t mem_t, const void* value) const {
        Handle space(H5Screate(H5S_SCALAR), H5Sclose);
        Handle attr(H5Acreate2(file(), name, file_t, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
        if (!attr.valid() || H5Awrite(attr.get(), mem_t, value) < 0)
            fail("/", std::string("cannot write attribute '") + name + "': " + hdf5_message());
    }

    void write_dataset(const std::string& name, const std::vector<hsize_t>& dims, hid_t file_t, hid_t mem_t,
                       const void* values) const {
        Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
        if (!space.valid()) fail(name, "cannot create the dataspace " + shape_text(dims) + ": " + hdf5_message());
        Handle d(H5Dcreate2(file(), name.c_str(), file_t, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose);
        if (!d.valid()) fail(name, "cannot create the dataset: " + hdf5_message());
        if (checked_product(dims).value_or(1) > 0 && H5Dwrite(d.get(), mem_t, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
            fail(name, "write failed: " + hdf5_message());
    }

    detail::OutputFile out_;
};

// `want` is nullopt when the product overflowed: no vector can be that large.
void require_size(std::size_t got, std::optional<std::uint64_t> want, const char* routine, const char* field,
                  const char* formula) {
    if (!want)
        throw InvalidArgument(routine, field, std::string("size ") + formula + " overflows 64 bits (got " +
                                                  std::to_string(got) + ")");
    if (got != *want)
        throw InvalidArgument(routine, field, std::string("size ") + formula + " = " + std::to_string(*want) +
                                                  " (got " + std::to_string(got) + ")");
}

void require_sizes_valid(int n, int count, int nrhs, const char* routine) {
    if (n < 0) throw InvalidArgument(routine, "n", "n >= 0 (got " + std::to_string(n) + ")");
    if (count < 0) throw InvalidArgument(routine, "count", "count >= 0 (got " + std::to_string(count) + ")");
    if (nrhs < 0) throw InvalidArgument(routine, "nrhs", "nrhs >= 0 (got " + std::to_string(nrhs) + ")");
}

void write_common_identity(const AtomicWriter& w, const char* format, Precision p, Uplo uplo) {
    w.string_attribute("format", format);
    w.int_attribute("format_version", format_version);
    w.string_attribute("precision", std::string(1, precision_letter(p)));
    w.string_attribute("uplo", to_string(uplo));
    w.string_attribute("layout", "column_major");
#ifdef BATCHSOLVE_IO_VERSION
    w.string_attribute("batchsolve_version", BATCHSOLVE_IO_VERSION);
#endif
}

}  // namespace

// ---- public entry points -------------------------------------------------------------------------------

BatchFileInfo inspect_batch(const std::string& path) {
    QuietHdf5 quiet;
    Reader r(path);
    return check_batch(r);
}

namespace {
std::string known_format(const Reader& r) {
    const std::string format = r.string_attribute("format");
    if (format != batch_format && format != solution_format)
        r.fail("/", "attribute 'format' is '" + format + "', expected '" + batch_format + "' or '" +
                        solution_format + "'");
    return format;
}
}  // namespace

Precision file_precision(const std::string& path) {
    QuietHdf5 quiet;
    Reader r(path);
    return r.check_identity(known_format(r).c_str());
}

std::string file_format(const std::string& path) {
    QuietHdf5 quiet;
    Reader r(path);
    return known_format(r);
}

template <class T>
BatchProblem<T> read_batch(const std::string& path) {
    QuietHdf5 quiet;
    Reader r(path);
    const BatchFileInfo info = check_batch(r);
    require_precision<T>(r, info.precision);
    BatchProblem<T> p;
    p.uplo = info.uplo, p.n = info.n, p.count = info.count, p.nrhs = info.nrhs;
    p.generator = info.generator;
    p.a = read_values<T>(r, "/A");
    p.b = read_values<T>(r, "/B");
    if (info.has_x_true) p.x_true = read_values<T>(r, "/X_true");
    if (info.has_expected_info) p.expected_info = read_ints(r, "/expected_info");
    return p;
}

AnyBatchProblem read_any_batch(const std::string& path) {
    switch (inspect_batch(path).precision) {
        case Precision::s: return read_batch<float>(path);
        case Precision::d: return read_batch<double>(path);
        case Precision::c: return read_batch<std::complex<float>>(path);
        case Precision::z: return read_batch<std::complex<double>>(path);
    }
    throw Error("read_any_batch: unreachable precision");
}

template <class T>
void write_batch(const std::string& path, const BatchProblem<T>& p, const OutputOptions& options) {
    constexpr const char* routine = "write_batch";
    require_sizes_valid(p.n, p.count, p.nrhs, routine);
    const std::size_t n = std::size_t(p.n), count = std::size_t(p.count), nrhs = std::size_t(p.nrhs);
    require_size(p.a.size(), checked_product({count, n, n}), routine, "problem.a", "count * n * n");
    require_size(p.b.size(), checked_product({count, n, nrhs}), routine, "problem.b", "count * n * nrhs");
    if (!p.x_true.empty()) require_size(p.x_true.size(), checked_product({count, n, nrhs}), routine, "problem.x_true", "count * n * nrhs");
    if (!p.expected_info.empty()) require_size(p.expected_info.size(), std::uint64_t(count), routine, "problem.expected_info", "count");

    QuietHdf5 quiet;
    AtomicWriter w(path, (p.a.size() + p.b.size() + p.x_true.size()) * sizeof(T) + p.expected_info.size() * sizeof(int),
                   options);
    write_common_identity(w, batch_format, precision_v<T>, p.uplo);
    if (!p.generator.name.empty()) w.string_attribute("generator", p.generator.name);
    if (p.generator.cond) w.double_attribute("generator_cond", *p.generator.cond);
    if (p.generator.seed) w.uint_attribute("generator_seed", *p.generator.seed);
    w.dataset("/A", {count, n, n}, p.a);
    w.dataset("/B", {count, nrhs, n}, p.b);
    // An empty x_true means "unknown"; for a batch with no right-hand-side entries at all it is simply
    // not written (there is nothing to know).
    if (!p.x_true.empty()) w.dataset("/X_true", {count, nrhs, n}, p.x_true);
    if (!p.expected_info.empty()) w.dataset("/expected_info", {count}, p.expected_info);
    w.commit();
}

template <class T>
void write_solution(const std::string& path, const BatchSolution<T>& s, const OutputOptions& options) {
    constexpr const char* routine = "write_solution";
    require_sizes_valid(s.n, s.count, s.nrhs, routine);
    const std::size_t n = std::size_t(s.n), count = std::size_t(s.count), nrhs = std::size_t(s.nrhs);
    require_size(s.x.size(), checked_product({count, n, nrhs}), routine, "solution.x", "count * n * nrhs");
    require_size(s.info.size(), std::uint64_t(count), routine, "solution.info", "count");
    if (!s.factor.empty()) require_size(s.factor.size(), checked_product({count, n, n}), routine, "solution.factor", "count * n * n");

    std::int64_t failed = 0;
    for (int v : s.info) failed += v != 0;

    QuietHdf5 quiet;
    AtomicWriter w(path, (s.x.size() + s.factor.size()) * sizeof(T) + s.info.size() * sizeof(int), options);
    write_common_identity(w, solution_format, precision_v<T>, s.uplo);
    const SolveRecord& rec = s.record;
    w.string_attribute("source", rec.source);
    w.string_attribute("backend", rec.backend);
    w.string_attribute("device", rec.device);
    w.string_attribute("solve_layout", rec.solve_layout);
    if (rec.solve_layout == "chunked") w.int_attribute("chunk_size", rec.chunk_size);
    w.double_attribute("time_s", rec.time_s);
    w.double_attribute("max_backward_error", rec.max_backward_error);
    if (rec.max_forward_error) w.double_attribute("max_forward_error", *rec.max_forward_error);
    w.int_attribute("failed_count", failed);
    w.dataset("/X", {count, nrhs, n}, s.x);
    w.dataset("/info", {count}, s.info);
    if (!s.factor.empty()) w.dataset("/factor", {count, n, n}, s.factor);
    w.commit();
}

template <class T>
BatchSolution<T> read_solution(const std::string& path) {
    QuietHdf5 quiet;
    Reader r(path);
    const Precision p = r.check_identity(solution_format);
    BatchSolution<T> s;
    s.uplo = r.uplo_attribute();

    std::vector<hsize_t> dx, di;
    Handle x = r.open_dataset("/X", 3, "(count, nrhs, n)", &dx);
    r.check_dtype(x.get(), "/X", p);
    require_precision<T>(r, p);
    s.count = int(dx[0]), s.nrhs = int(dx[1]), s.n = int(dx[2]);
    Handle info = r.open_dataset("/info", 1, "(count,)", &di);
    r.check_integer_dtype(info.get(), "/info");
    if (di[0] != dx[0])
        r.fail("/info", "shape " + shape_text(di) + " does not match /X's count " + std::to_string(dx[0]));
    const bool has_factor = r.has_dataset("/factor");
    if (has_factor) {
        std::vector<hsize_t> df;
        Handle f = r.open_dataset("/factor", 3, "(count, n, n)", &df);
        r.check_dtype(f.get(), "/factor", p);
        if (df != std::vector<hsize_t>{dx[0], dx[2], dx[2]})
            r.fail("/factor", "shape " + shape_text(df) + ", expected (count, n, n) = " +
                                  shape_text({dx[0], dx[2], dx[2]}));
    }

    SolveRecord& rec = s.record;
    rec.source = r.string_attribute("source");
    rec.backend = r.string_attribute("backend");
    rec.device = r.string_attribute("device");
    rec.solve_layout = r.string_attribute("solve_layout");
    if (r.has_attribute("chunk_size")) rec.chunk_size = int(r.int_attribute("chunk_size"));
    rec.time_s = r.double_attribute("time_s");
    rec.max_backward_error = r.double_attribute("max_backward_error");
    if (r.has_attribute("max_forward_error")) rec.max_forward_error = r.double_attribute("max_forward_error");

    s.x = read_values<T>(r, "/X");
    s.info = read_ints(r, "/info");
    if (has_factor) s.factor = read_values<T>(r, "/factor");
    return s;
}

#define BATCHSOLVE_IO_INSTANTIATE(T)                                                   \
    template BatchProblem<T> read_batch<T>(const std::string&);                       \
    template void write_batch<T>(const std::string&, const BatchProblem<T>&, const OutputOptions&);     \
    template void write_solution<T>(const std::string&, const BatchSolution<T>&, const OutputOptions&); \
    template BatchSolution<T> read_solution<T>(const std::string&);
BATCHSOLVE_IO_INSTANTIATE(float)
BATCHSOLVE_IO_INSTANTIATE(double)
BATCHSOLVE_IO_INSTANTIATE(std::complex<float>)
BATCHSOLVE_IO_INSTANTIATE(std::complex<double>)
#undef BATCHSOLVE_IO_INSTANTIATE

}  // namespace batchsolve::io
