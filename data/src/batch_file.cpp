// HDF5 implementation of the batch and solution files of batch_file.hpp (schema: data/README.md).
#include "batchsolve_io/batch_file.hpp"

#include <fcntl.h>
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

namespace batchsolve::io {

namespace {

// Messages must stay on one line whatever HDF5 or the OS put into them.
std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

}  // namespace

FileError::FileError(std::string file, std::string dataset, std::string reason)
    : Error(one_line(file + ": " + dataset + ": " + reason)),
      file_(std::move(file)), dataset_(std::move(dataset)), reason_(one_line(std::move(reason))) {}

namespace {

// ---- HDF5 plumbing ---------------------------------------------------------------------------------

// Owns one hid_t and closes it with the matching H5?close, so that every exit path releases it.
class Handle {
public:
    Handle() = default;
    Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
    ~Handle() { reset(); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, -1)), close_(o.close_) {}
    Handle& operator=(Handle&& o) noexcept {
        if (this != &o) reset(), id_ = std::exchange(o.id_, -1), close_ = o.close_;
        return *this;
    }
    hid_t get() const { return id_; }
    bool valid() const { return id_ >= 0; }
    void reset() {
        if (id_ >= 0 && close_ != nullptr) close_(id_);
        id_ = -1;
    }
    hid_t release() { return std::exchange(id_, -1); }

private:
    hid_t id_ = -1;
    herr_t (*close_)(hid_t) = nullptr;
};

// HDF5 prints its whole error stack to stderr by default; we turn its failures into one-line
// FileErrors instead, and give the caller's own setting back afterwards.
class QuietHdf5 {
public:
    QuietHdf5() {
        H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    }
    ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
    QuietHdf5(const QuietHdf5&) = delete;
    QuietHdf5& operator=(const QuietHdf5&) = delete;

private:
    H5E_auto2_t func_ = nullptr;
    void* data_ = nullptr;
};

herr_t keep_innermost(unsigned, const H5E_error2_t* err, void* out) {
    if (err->desc != nullptr && err->desc[0] != '\0') *static_cast<std::string*>(out) = err->desc;
    return 0;
}

// The innermost (most specific) description on HDF5's error stack, which is then cleared.
std::string hdf5_message() {
    std::string msg;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &msg);
    H5Eclear2(H5E_DEFAULT);
    return msg.empty() ? "HDF5 gave no reason" : one_line(msg);
}

std::string shape_text(const std::vector<hsize_t>& dims) {
    std::string s = "(";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + (dims.size() == 1 ? ",)" : ")");
}

const char* dtype_name(Precision p) {
    switch (p) {
        case Precision::s: return "float32";
        case Precision::d: return "float64";
        case Precision::c: return "complex64";
        case Precision::z: return "complex128";
    }
    return "?";
}

// A compound of two floats named r and i of equal size: h5py's (and our) complex number.
bool is_complex_compound(hid_t type, std::size_t* part_size) {
    if (H5Tget_class(type) != H5T_COMPOUND || H5Tget_nmembers(type) != 2) return false;
    const int ir = H5Tget_member_index(type, "r"), ii = H5Tget_member_index(type, "i");
    if (ir < 0 || ii < 0) {
        H5Eclear2(H5E_DEFAULT);
        return false;
    }
    Handle tr(H5Tget_member_type(type, unsigned(ir)), H5Tclose), ti(H5Tget_member_type(type, unsigned(ii)), H5Tclose);
    if (!tr.valid() || !ti.valid() || H5Tget_class(tr.get()) != H5T_FLOAT || H5Tget_class(ti.get()) != H5T_FLOAT)
        return false;
    const std::size_t sr = H5Tget_size(tr.get()), si = H5Tget_size(ti.get());
    if (sr != si) return false;
    if (part_size != nullptr) *part_size = sr;
    return true;
}

// numpy-style name of a file type, for messages.
std::string describe_type(hid_t type) {
    const std::size_t bits = 8 * H5Tget_size(type);
    std::size_t part = 0;
    switch (H5Tget_class(type)) {
        case H5T_INTEGER: return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(bits);
        case H5T_FLOAT: return "float" + std::to_string(bits);
        case H5T_STRING: return "string";
        case H5T_COMPOUND:
            if (is_complex_compound(type, &part)) return "complex" + std::to_string(16 * part);
            return "compound (not {r, i} of floats)";
        case H5T_ENUM: return "enum";
        case H5T_ARRAY: return "array";
        case H5T_VLEN: return "variable-length";
        case H5T_OPAQUE: return "opaque";
        case H5T_BITFIELD: return "bitfield";
        case H5T_REFERENCE: return "reference";
        default: return "unknown type";
    }
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
        Handle t(H5Tcreate(H5T_COMPOUND, sizeof(T)), H5Tclose);
        H5Tinsert(t.get(), "r", 0, scalar);
        H5Tinsert(t.get(), "i", sizeof(R), scalar);
        return t;
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
        Handle t(H5Tcreate(H5T_COMPOUND, 2 * sizeof(R)), H5Tclose);
        H5Tinsert(t.get(), "r", 0, scalar);
        H5Tinsert(t.get(), "i", sizeof(R), scalar);
        return t;
    }
}

// ---- reading ---------------------------------------------------------------------------------------

// An open file plus its path, so that every check can name both in its error.
class Reader {
public:
    explicit Reader(std::string path) : path_(std::move(path)) {
        namespace fs = std::filesystem;
        std::error_code ec;
        const fs::file_status st = fs::status(path_, ec);
        if (ec && ec != std::errc::no_such_file_or_directory) fail("/", "cannot access: " + ec.message());
        if (!fs::exists(st)) fail("/", "no such file");
        if (fs::is_directory(st)) fail("/", "is a directory");
        {
            std::ifstream probe(path_, std::ios::binary);
            if (!probe) fail("/", std::string("cannot open for reading: ") + std::strerror(errno));
        }
        const htri_t is_hdf5 = H5Fis_hdf5(path_.c_str());
        if (is_hdf5 == 0) fail("/", "not an HDF5 file (no HDF5 signature: another format, empty or truncated)");
        if (is_hdf5 < 0) fail("/", "cannot read as HDF5 (truncated or corrupt file?): " + hdf5_message());
        Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
        // We only read, and never alongside a single-writer process: no lock, so that files on
        // read-only mounts and file systems without flock() open too.
        H5Pset_file_locking(fapl.get(), false, true);
#endif
        file_ = Handle(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
        if (!file_.valid()) fail("/", "cannot open as HDF5 (truncated or corrupt file): " + hdf5_message());
    }

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
        if (!has_dataset(name)) fail(name, "missing dataset");
        Handle d(H5Dopen2(file(), name.c_str(), H5P_DEFAULT), H5Dclose);
        if (!d.valid()) fail(name, "exists but is not a dataset (a group or a broken link?)");
        Handle space(H5Dget_space(d.get()), H5Sclose);
        if (!space.valid()) fail(name, "cannot read the shape: " + hdf5_message());
        const int got = H5Sget_simple_extent_ndims(space.get());
        if (got < 0) fail(name, "cannot read the shape: " + hdf5_message());
        dims->assign(std::size_t(got), 0);
        if (got > 0) H5Sget_simple_extent_dims(space.get(), dims->data(), nullptr);
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

    template <class T>
    std::vector<T> read_all(hid_t dataset, const std::string& name, hid_t mem_type, std::size_t elements) const {
        std::vector<T> v;
        try {
            v.resize(elements);
        } catch (const std::bad_alloc&) {
            fail(name, "too large to load (" + std::to_string(elements * sizeof(T)) + " bytes)");
        } catch (const std::length_error&) {
            fail(name, "too large to load (" + std::to_string(elements) + " elements)");
        }
        if (elements > 0 && H5Dread(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
            fail(name, "read failed (corrupt or truncated data?): " + hdf5_message());
        return v;
    }

private:
    std::string path_;
    Handle file_;
};

std::size_t product(const std::vector<hsize_t>& dims) {
    std::size_t p = 1;
    for (hsize_t d : dims) p *= std::size_t(d);
    return p;
}

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

    Handle b = r.open_dataset("/B", 3, "(count, nrhs, n)", &db);
    r.check_dtype(b.get(), "/B", info.precision);
    if (db[0] != da[0])
        r.fail("/B", "shape " + shape_text(db) + ": count " + std::to_string(db[0]) + " does not match /A's count " +
                         std::to_string(da[0]));
    if (db[2] != da[1])
        r.fail("/B", "shape " + shape_text(db) + " is (count, nrhs, n) but n = " + std::to_string(db[2]) +
                         " does not match /A's n = " + std::to_string(da[1]));
    info.nrhs = int(db[1]);

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
    return r.read_all<T>(d.get(), name, mem.get(), product(dims));
}

std::vector<int> read_ints(const Reader& r, const std::string& name) {
    std::vector<hsize_t> dims;
    Handle d = r.open_dataset(name, 1, "", &dims);
    return r.read_all<int>(d.get(), name, H5T_NATIVE_INT, product(dims));
}

template <class T>
void require_precision(const Reader& r, Precision file_p) {
    if (file_p != precision_v<T>)
        r.fail("/", std::string("the file holds precision '") + precision_letter(file_p) + "' (" +
                        dtype_name(file_p) + ") but precision '" + precision_letter(precision_v<T>) + "' was asked for");
}

// ---- writing ---------------------------------------------------------------------------------------

// Builds the file in memory (HDF5's core driver, no backing store) and writes the finished image
// itself to "<target>.tmp-<pid>", renamed over the target by commit(). The temporary file is removed
// if anything fails. HDF5 never touches the disk: after a failed disk write (full disk, file size
// limit) HDF5 1.10 cannot close a file and crashes at exit, whereas our own write() fails cleanly.
// The price is the file image held in memory once more while it is being written.
class AtomicWriter {
public:
    AtomicWriter(std::string target, std::size_t expected_bytes)
        : target_(std::move(target)), temp_(target_ + ".tmp-" + std::to_string(::getpid())) {
        namespace fs = std::filesystem;
        if (fs::is_directory(target_)) fail("/", "is a directory");
        const fs::path dir = fs::path(target_).parent_path();
        if (!dir.empty() && !fs::is_directory(dir)) fail("/", "the directory '" + dir.string() + "' does not exist");
        Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
        // One allocation for the whole image: the data plus room for the metadata.
        const std::size_t increment = expected_bytes + (std::size_t(1) << 20);
        if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), increment, false) < 0)
            fail("/", "cannot set up HDF5's in-memory driver: " + hdf5_message());
        // SEMI close degree: closing fails while anything is still open instead of deferring the flush.
        H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_SEMI);
        file_ = Handle(H5Fcreate(temp_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
        if (!file_.valid()) fail("/", "cannot create the file in memory: " + hdf5_message());
    }
    ~AtomicWriter() {
        file_.reset();
        if (created_ && !committed_) ::unlink(temp_.c_str());
    }
    AtomicWriter(const AtomicWriter&) = delete;
    AtomicWriter& operator=(const AtomicWriter&) = delete;

    hid_t file() const { return file_.get(); }

    [[noreturn]] void fail(const std::string& dataset, const std::string& reason) const {
        H5Eclear2(H5E_DEFAULT);
        throw FileError(target_, dataset, reason);
    }

    void commit() {
        if (H5Fflush(file(), H5F_SCOPE_GLOBAL) < 0) fail("/", "cannot finish the file in memory: " + hdf5_message());
        const ssize_t size = H5Fget_file_image(file(), nullptr, 0);
        if (size < 0) fail("/", "cannot get the file image: " + hdf5_message());
        std::vector<char> image;
        try {
            image.resize(std::size_t(size));
        } catch (const std::bad_alloc&) {
            fail("/", "out of memory for the file image (" + std::to_string(size) + " bytes)");
        }
        if (H5Fget_file_image(file(), image.data(), image.size()) != size)
            fail("/", "cannot get the file image: " + hdf5_message());
        if (H5Fclose(file_.release()) < 0) fail("/", "cannot close the file in memory: " + hdf5_message());
        write_temporary(image);
        if (std::rename(temp_.c_str(), target_.c_str()) != 0)
            fail("/", "cannot rename '" + temp_ + "' to the target: " + std::strerror(errno));
        committed_ = true;
    }

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
    // Writes the image to the temporary file, synced to disk before the rename makes it visible.
    void write_temporary(const std::vector<char>& image) {
        const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) fail("/", "cannot create the temporary file '" + temp_ + "': " + std::strerror(errno));
        created_ = true;
        auto fail_closing = [&](const std::string& what) {
            const int err = errno;
            ::close(fd);
            fail("/", what + " '" + temp_ + "' failed: " + std::strerror(err));
        };
        std::size_t done = 0;
        while (done < image.size()) {
            const std::size_t chunk = std::min<std::size_t>(image.size() - done, std::size_t(1) << 30);
            const ssize_t w = ::write(fd, image.data() + done, chunk);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) fail_closing("writing");
            done += std::size_t(w);
        }
        if (::fsync(fd) != 0) fail_closing("syncing");
        if (::close(fd) != 0) fail("/", "closing '" + temp_ + "' failed: " + std::strerror(errno));
    }

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
        if (product(dims) > 0 && H5Dwrite(d.get(), mem_t, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
            fail(name, "write failed: " + hdf5_message());
    }

    std::string target_, temp_;
    Handle file_;
    bool created_ = false;
    bool committed_ = false;
};

void require_size(std::size_t got, std::size_t want, const char* routine, const char* field, const char* formula) {
    if (got != want)
        throw InvalidArgument(routine, field, std::string("size ") + formula + " = " + std::to_string(want) +
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
void write_batch(const std::string& path, const BatchProblem<T>& p) {
    constexpr const char* routine = "write_batch";
    require_sizes_valid(p.n, p.count, p.nrhs, routine);
    const std::size_t n = std::size_t(p.n), count = std::size_t(p.count), nrhs = std::size_t(p.nrhs);
    require_size(p.a.size(), count * n * n, routine, "problem.a", "count * n * n");
    require_size(p.b.size(), count * n * nrhs, routine, "problem.b", "count * n * nrhs");
    if (!p.x_true.empty()) require_size(p.x_true.size(), count * n * nrhs, routine, "problem.x_true", "count * n * nrhs");
    if (!p.expected_info.empty()) require_size(p.expected_info.size(), count, routine, "problem.expected_info", "count");

    QuietHdf5 quiet;
    AtomicWriter w(path, (p.a.size() + p.b.size() + p.x_true.size()) * sizeof(T) + p.expected_info.size() * sizeof(int));
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
void write_solution(const std::string& path, const BatchSolution<T>& s) {
    constexpr const char* routine = "write_solution";
    require_sizes_valid(s.n, s.count, s.nrhs, routine);
    const std::size_t n = std::size_t(s.n), count = std::size_t(s.count), nrhs = std::size_t(s.nrhs);
    require_size(s.x.size(), count * n * nrhs, routine, "solution.x", "count * n * nrhs");
    require_size(s.info.size(), count, routine, "solution.info", "count");
    if (!s.factor.empty()) require_size(s.factor.size(), count * n * n, routine, "solution.factor", "count * n * n");

    std::int64_t failed = 0;
    for (int v : s.info) failed += v != 0;

    QuietHdf5 quiet;
    AtomicWriter w(path, (s.x.size() + s.factor.size()) * sizeof(T) + s.info.size() * sizeof(int));
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
    template void write_batch<T>(const std::string&, const BatchProblem<T>&);         \
    template void write_solution<T>(const std::string&, const BatchSolution<T>&);     \
    template BatchSolution<T> read_solution<T>(const std::string&);
BATCHSOLVE_IO_INSTANTIATE(float)
BATCHSOLVE_IO_INSTANTIATE(double)
BATCHSOLVE_IO_INSTANTIATE(std::complex<float>)
BATCHSOLVE_IO_INSTANTIATE(std::complex<double>)
#undef BATCHSOLVE_IO_INSTANTIATE

}  // namespace batchsolve::io
