// The typed HDF5 layer of hdf5.hpp: h5::File for reading, and for writing through detail::OutputFile
// (checked target, temporary renamed over it on commit); lossless type conversions only.
#include "batchsolve_io/hdf5.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

#include "batchsolve/checked_size.hpp"
#include "hdf5_detail.hpp"

namespace batchsolve::io::h5 {

using detail::Handle;
using detail::hdf5_message;
using detail::QuietHdf5;

std::uint64_t available_host_bytes() { return batchsolve::available_host_bytes(); }

std::string shape_text(const Shape& shape) {
    return detail::shape_text(std::vector<hsize_t>(shape.begin(), shape.end()));
}

namespace {

// Writes all of `text` to fd (the child's report to its parent); errors are ignored: the parent
// then sees a failure without a message.
void write_all(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        done += std::size_t(w);
    }
}

// "SIGSEGV", or "signal 11" where the C library has no name for it.
std::string signal_name(int signal) {
    const char* abbrev = sigabbrev_np(signal);
    return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

[[noreturn]] void run_probe_child(int report_fd, const std::string& path, const std::function<void()>& read) {
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // a crash here is the expected outcome of a bad file
    int status = 0;
    std::string report;
    try {
        read();
    } catch (const FileError& e) {
        status = 3, report = e.file() + '\0' + e.dataset() + '\0' + e.reason();
    } catch (const std::exception& e) {
        // A reader's own error usually names the file already ("<path>: <dataset>: <reason>"): kept as
        // it is, not prefixed a second time.
        const std::string what = detail::one_line(e.what()), prefix = path + ": ";
        status = 4;
        if (what.compare(0, prefix.size(), prefix) == 0) report = path + '\0' + '\0' + what.substr(prefix.size());
        else report = path + '\0' + "/" + '\0' + what;
    } catch (...) {
        status = 4, report = path + '\0' + "/" + '\0' + "reading it threw an unknown exception";
    }
    write_all(report_fd, report);
    ::_exit(status);
}

}  // namespace

void probe_in_child(const std::string& path, const std::function<void()>& read, double timeout_s) {
    if (timeout_s <= 0) timeout_s = 60 + double(detail::file_bytes_on_disk(path)) / 50e6;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        throw FileError(path, "/", std::string("cannot create a pipe to check the file: ") + std::strerror(errno));
    std::fflush(nullptr);  // nothing buffered is written twice
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int err = errno;
        ::close(fds[0]), ::close(fds[1]);
        throw FileError(path, "/", std::string("cannot start a process to check the file: ") + std::strerror(err));
    }
    if (pid == 0) {
        ::close(fds[0]);
        run_probe_child(fds[1], path, read);
    }
    ::close(fds[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    std::string report;
    bool timed_out = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int ready = ::poll(&p, 1, int(std::min<long long>(left.count(), 1000)));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        char buffer[4096];
        const ssize_t got = ::read(fds[0], buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;  // the child closed its end: it has finished
        report.append(buffer, std::size_t(got));
    }
    ::close(fds[0]);
    if (timed_out) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.0f", timeout_s);
    if (timed_out)
        throw FileError(path, "/", std::string("reading it did not finish in ") + seconds +
                                       " s: the HDF5 library is stuck on a corrupt or crafted file (or the file is "
                                       "unusually slow to read)");
    if (WIFSIGNALED(status))
        throw FileError(path, "/", "the HDF5 library crashed (" + signal_name(WTERMSIG(status)) +
                                       ") reading it: a corrupt or crafted file");
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 0) return;
    const std::size_t first = report.find('\0'), second = first == std::string::npos ? first : report.find('\0', first + 1);
    if ((code == 3 || code == 4) && second != std::string::npos)
        throw FileError(report.substr(0, first), report.substr(first + 1, second - first - 1), report.substr(second + 1));
    throw FileError(path, "/", "the HDF5 library failed reading it (the checking process ended with status " +
                                   std::to_string(code) + "): a corrupt or crafted file");
}

namespace {

// What an element type of the API is, for the conversion rules and messages.
enum class Kind { integer, floating, complex };
struct ElementInfo {
    Kind kind;
    bool is_signed;
    std::size_t size;  // bytes of one value (of one part for complex)
    const char* name;  // numpy's name
    hid_t native;      // memory type of one value (of one part for complex)
    hid_t little;      // the file type we write (of one part for complex)
};

template <class T>
ElementInfo element_info() {
    if constexpr (std::is_same_v<T, std::uint8_t>) return {Kind::integer, false, 1, "uint8", H5T_NATIVE_UINT8, H5T_STD_U8LE};
    else if constexpr (std::is_same_v<T, std::uint16_t>)
        return {Kind::integer, false, 2, "uint16", H5T_NATIVE_UINT16, H5T_STD_U16LE};
    else if constexpr (std::is_same_v<T, std::int32_t>)
        return {Kind::integer, true, 4, "int32", H5T_NATIVE_INT32, H5T_STD_I32LE};
    else if constexpr (std::is_same_v<T, std::int64_t>)
        return {Kind::integer, true, 8, "int64", H5T_NATIVE_INT64, H5T_STD_I64LE};
    else if constexpr (std::is_same_v<T, std::uint64_t>)
        return {Kind::integer, false, 8, "uint64", H5T_NATIVE_UINT64, H5T_STD_U64LE};
    else if constexpr (std::is_same_v<T, float>) return {Kind::floating, true, 4, "float32", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE};
    else if constexpr (std::is_same_v<T, double>)
        return {Kind::floating, true, 8, "float64", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE};
    else if constexpr (std::is_same_v<T, std::complex<float>>)
        return {Kind::complex, true, 4, "complex64", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE};
    else if constexpr (std::is_same_v<T, std::complex<double>>)
        return {Kind::complex, true, 8, "complex128", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE};
    else static_assert(sizeof(T) == 0, "h5::File: unsupported element type");
}

template <class T>
Handle memory_type() {
    const ElementInfo e = element_info<T>();
    if (e.kind == Kind::complex) return detail::complex_type(e.native, e.size);
    return Handle(H5Tcopy(e.native), H5Tclose);
}

template <class T>
Handle file_type() {
    const ElementInfo e = element_info<T>();
    if (e.kind == Kind::complex) return detail::complex_type(e.little, e.size);
    return Handle(H5Tcopy(e.little), H5Tclose);
}

// Significand bits of a float type that holds every integer of that many bits exactly.
std::size_t exact_integer_bits(std::size_t float_size) { return float_size == 4 ? 24 : float_size == 8 ? 53 : 11; }

// Empty when every value of file type `type` converts to `want` without loss, else why not.
std::string lossy_conversion(hid_t type, const ElementInfo& want) {
    const std::string from = detail::describe_type(type);
    const std::string refused = "dtype " + from + " cannot be read as " + want.name + " without loss: refused";
    const std::size_t size = H5Tget_size(type);
    std::size_t part = 0;
    switch (H5Tget_class(type)) {
        case H5T_INTEGER: {
            const bool is_signed = H5Tget_sign(type) != H5T_SGN_NONE;
            const std::size_t value_bits = 8 * size - (is_signed ? 1 : 0);
            if (want.kind == Kind::integer) {
                if (is_signed && !want.is_signed) return refused;  // negative values
                const std::size_t want_bits = 8 * want.size - (want.is_signed ? 1 : 0);
                return value_bits <= want_bits ? "" : refused;
            }
            if (want.kind == Kind::floating) return value_bits <= exact_integer_bits(want.size) ? "" : refused;
            return refused;  // real -> complex
        }
        case H5T_FLOAT:
            if (want.kind == Kind::floating && size <= want.size) return "";
            return refused;
        case H5T_COMPOUND:
            if (detail::is_complex_compound(type, &part) && want.kind == Kind::complex && part <= want.size) return "";
            return refused;
        default:
            return "dtype " + from + " is not a number, cannot be read as " + want.name;
    }
}

// Chunks of at most about 1 MiB: the leading extents are halved until a chunk fits.
std::vector<hsize_t> chunk_dims(const std::vector<hsize_t>& dims, std::size_t element_size) {
    std::vector<hsize_t> chunk = dims;
    constexpr std::uint64_t target_bytes = std::uint64_t(1) << 20;
    for (std::size_t axis = 0; axis < chunk.size(); ++axis) {
        while (chunk[axis] > 1 && checked_product(chunk).value_or(UINT64_MAX) > target_bytes / element_size)
            chunk[axis] = (chunk[axis] + 1) / 2;
    }
    return chunk;
}

}  // namespace

struct File::State {
    std::string path;
    Handle file;                                  // reading
    std::unique_ptr<detail::OutputFile> output;   // writing
    bool committed = false;

    hid_t id() const { return output ? output->file() : file.get(); }
    [[noreturn]] void fail(const std::string& object, const std::string& reason) const {
        H5Eclear2(H5E_DEFAULT);
        throw FileError(path, object, reason);
    }
    void require_open(const std::string& object) const {
        if (committed) fail(object, "the file was already committed (closed)");
        if (id() < 0) fail(object, "the file is not open (moved from, or a failed commit)");
    }
    void require_writable(const std::string& object) const {
        require_open(object);
        if (!output) fail(object, "the file was opened for reading: cannot write");
    }
    bool exists(const std::string& object) const { return detail::object_exists(id(), path, object); }
    void require_object(const std::string& object) const {
        if (!exists(object)) fail(object, "no such group or dataset");
    }
    // A link-creation property list that creates missing intermediate groups.
    Handle intermediate_groups() const {
        Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
        if (!lcpl.valid() || H5Pset_create_intermediate_group(lcpl.get(), 1) < 0)
            fail("/", "cannot set up group creation: " + hdf5_message());
        return lcpl;
    }

    // An attribute of `object`, opened with its type and element count; missing ones are named.
    Handle open_attribute(const std::string& object, const std::string& name, Handle* type, hsize_t* count) const {
        require_open(object);
        require_object(object);
        const htri_t e = H5Aexists_by_name(id(), object.c_str(), name.c_str(), H5P_DEFAULT);
        if (e < 0) fail(object, "cannot query attribute '" + name + "': " + hdf5_message());
        if (e == 0) fail(object, "missing attribute '" + name + "'");
        Handle attr(H5Aopen_by_name(id(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
        if (!attr.valid()) fail(object, "cannot open attribute '" + name + "': " + hdf5_message());
        *type = Handle(H5Aget_type(attr.get()), H5Tclose);
        Handle space(H5Aget_space(attr.get()), H5Sclose);
        if (!type->valid() || !space.valid()) fail(object, "cannot read attribute '" + name + "': " + hdf5_message());
        const hssize_t n = H5Sget_simple_extent_npoints(space.get());
        if (n < 0) fail(object, "cannot read attribute '" + name + "': " + hdf5_message());
        *count = hsize_t(n);
        return attr;
    }
    Handle open_number_attribute(const std::string& object, const std::string& name, bool integer_only,
                                 hsize_t* count) const {
        Handle type;
        Handle attr = open_attribute(object, name, &type, count);
        const H5T_class_t cls = H5Tget_class(type.get());
        if (cls != H5T_INTEGER && (integer_only || cls != H5T_FLOAT))
            fail(object, "attribute '" + name + "' has type " + detail::describe_type(type.get()) + ", expected " +
                             (integer_only ? "an integer" : "a number"));
        return attr;
    }

    void write_attribute(const std::string& object, const std::string& name, hid_t file_t, hid_t mem_t,
                         const void* value, hsize_t count, bool scalar) {
        require_writable(object);
        require_object(object);
        const htri_t e = H5Aexists_by_name(id(), object.c_str(), name.c_str(), H5P_DEFAULT);
        if (e > 0 && H5Adelete_by_name(id(), object.c_str(), name.c_str(), H5P_DEFAULT) < 0)
            fail(object, "cannot replace attribute '" + name + "': " + hdf5_message());
        Handle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr), H5Sclose);
        Handle attr(H5Acreate_by_name(id(), object.c_str(), name.c_str(), file_t, space.get(), H5P_DEFAULT,
                                      H5P_DEFAULT, H5P_DEFAULT),
                    H5Aclose);
        if (!attr.valid() || (count > 0 && H5Awrite(attr.get(), mem_t, value) < 0))
            fail(object, "cannot write attribute '" + name + "': " + hdf5_message());
    }
};

File::File(std::unique_ptr<State> state) : state_(std::move(state)) {}
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;  // an uncommitted OutputFile removes its temporary (if any) itself

File File::open(const std::string& path) {
    QuietHdf5 quiet;
    auto state = std::make_unique<State>();
    state->path = path;
    state->file = detail::open_for_reading(path);
    return File(std::move(state));
}

File File::create(const std::string& path, Existing existing, const std::vector<std::string>& inputs, WriteMode mode) {
    QuietHdf5 quiet;
    auto state = std::make_unique<State>();
    state->path = path;
    if (mode == WriteMode::direct)
        state->output = std::make_unique<detail::OutputFile>(path, OutputOptions{existing, inputs}, detail::OutputFile::Direct{});
    else
        state->output = std::make_unique<detail::OutputFile>(path, 0, OutputOptions{existing, inputs});
    return File(std::move(state));
}

File::State& File::state() const {
    if (!state_) throw Error("h5::File: used after it was moved from");
    return *state_;
}

const std::string& File::path() const { return state().path; }

void File::commit() {
    QuietHdf5 quiet;
    state().require_writable("/");
    state().output->commit();
    state().committed = true;
}

bool File::exists(const std::string& object) const {
    QuietHdf5 quiet;
    state().require_open(object);
    return state().exists(object);
}

void File::create_group(const std::string& group) {
    QuietHdf5 quiet;
    state().require_writable(group);
    if (state().exists(group)) {
        H5O_info_t info{};
        if (H5Oget_info_by_name(state().id(), group.c_str(), &info, H5P_DEFAULT) < 0 || info.type != H5O_TYPE_GROUP)
            state().fail(group, "exists and is not a group");
        return;
    }
    Handle lcpl = state().intermediate_groups();
    Handle g(H5Gcreate2(state().id(), group.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!g.valid()) state().fail(group, "cannot create the group: " + hdf5_message());
}

Shape File::shape(const std::string& dataset) const {
    QuietHdf5 quiet;
    state().require_open(dataset);
    Handle d = detail::open_dataset_checked(state().id(), state().path, dataset);
    const auto dims = detail::dataset_dims(d.get(), state().path, dataset);
    return Shape(dims.begin(), dims.end());
}

bool File::stored_plainly(const std::string& dataset) const {
    QuietHdf5 quiet;
    state().require_open(dataset);
    Handle d = detail::open_dataset_checked(state().id(), state().path, dataset);  // refuses virtual and external storage
    Handle type(H5Dget_type(d.get()), H5Tclose);
    Handle dcpl(H5Dget_create_plist(d.get()), H5Pclose);
    if (!type.valid() || !dcpl.valid()) state().fail(dataset, "cannot read the dtype: " + hdf5_message());
    const H5T_class_t cls = H5Tget_class(type.get());
    if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || H5Tget_size(type.get()) > 8) return false;
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    if ((layout != H5D_CONTIGUOUS && layout != H5D_COMPACT) || H5Pget_nfilters(dcpl.get()) != 0) return false;
    const auto dims = detail::dataset_dims(d.get(), state().path, dataset);
    // Every declared byte stored (and no more than the file holds); no memory limit here: no allocation.
    detail::check_dataset_size(d.get(), state().path, dataset, dims, H5Tget_size(type.get()), ~std::uint64_t(0));
    return true;
}

template <class T>
std::vector<T> File::read(const std::string& dataset, Shape* shape, std::uint64_t max_bytes) const {
    QuietHdf5 quiet;
    state().require_open(dataset);
    Handle d = detail::open_dataset_checked(state().id(), state().path, dataset);
    Handle type(H5Dget_type(d.get()), H5Tclose);
    if (!type.valid()) state().fail(dataset, "cannot read the dtype: " + hdf5_message());
    const std::string lossy = lossy_conversion(type.get(), element_info<T>());
    if (!lossy.empty()) state().fail(dataset, lossy);
    const auto dims = detail::dataset_dims(d.get(), state().path, dataset);
    const std::size_t bytes = detail::check_dataset_size(d.get(), state().path, dataset, dims, sizeof(T), max_bytes);
    std::vector<T> values;
    try {
        values.resize(bytes / sizeof(T));
    } catch (const std::bad_alloc&) {
        state().fail(dataset, "out of memory loading it (needs " + bytes_text(bytes) + ")");
    }
    Handle mem = memory_type<T>();
    if (!values.empty() && H5Dread(d.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
        state().fail(dataset, "read failed (corrupt or truncated data?): " + hdf5_message());
    if (shape != nullptr) shape->assign(dims.begin(), dims.end());
    return values;
}

template <class T>
std::vector<T> File::read_exact(const std::string& dataset, const Shape& expected) const {
    const Shape got = this->shape(dataset);
    if (got != expected)
        state().fail(dataset, "shape " + shape_text(got) + ", expected " + shape_text(expected));
    return read<T>(dataset);
}

template <class T>
void File::write(const std::string& dataset, const T* data, const Shape& shape, bool compress) {
    QuietHdf5 quiet;
    state().require_writable(dataset);
    if (shape.size() > H5S_MAX_RANK)
        state().fail(dataset, "rank " + std::to_string(shape.size()) + " is above HDF5's limit of " +
                                  std::to_string(H5S_MAX_RANK));
    const auto elements = checked_product(shape);
    if (!elements || !checked_bytes(*elements, sizeof(T)))
        state().fail(dataset, "shape " + shape_text(shape) + " is too large to address: refused");
    if (*elements > 0 && data == nullptr) state().fail(dataset, "no data (null pointer) for shape " + shape_text(shape));
    if (state().exists(dataset)) state().fail(dataset, "already exists");

    const std::vector<hsize_t> dims(shape.begin(), shape.end());
    Handle space(dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr),
                 H5Sclose);
    if (!space.valid()) state().fail(dataset, "cannot create the dataspace " + shape_text(shape) + ": " + hdf5_message());
    Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    constexpr std::uint64_t compress_above_bytes = 64 << 10;  // smaller datasets are not worth a chunk index
    if (compress && !dims.empty() && *elements > 0 && *elements * sizeof(T) > compress_above_bytes &&
        H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
        const auto chunk = chunk_dims(dims, sizeof(T));
        if (H5Pset_chunk(dcpl.get(), int(chunk.size()), chunk.data()) < 0 || H5Pset_deflate(dcpl.get(), 4) < 0)
            state().fail(dataset, "cannot set up compression: " + hdf5_message());
    }
    Handle lcpl = state().intermediate_groups();
    Handle ft = file_type<T>(), mt = memory_type<T>();
    // Direct mode: a contiguous dataset whose stored bytes are the array's own (the file type equals
    // the memory type) gets its space now, is never filled, and the array goes straight to its place.
    const bool straight = state().output->direct() && *elements > 0 && H5Pget_layout(dcpl.get()) == H5D_CONTIGUOUS && H5Tequal(ft.get(), mt.get()) > 0;
    if (straight && (H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY) < 0 || H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) < 0))
        state().fail(dataset, "cannot set up the dataset's storage: " + hdf5_message());
    Handle d(H5Dcreate2(state().id(), dataset.c_str(), ft.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
             H5Dclose);
    if (!d.valid()) state().fail(dataset, "cannot create the dataset: " + hdf5_message());
    if (straight) {
        const haddr_t offset = H5Dget_offset(d.get());
        if (offset == HADDR_UNDEF) state().fail(dataset, "no storage was allocated for it: " + hdf5_message());
        state().output->write_direct(data, *elements * sizeof(T), offset, dataset);
        return;
    }
    if (*elements > 0 && H5Dwrite(d.get(), mt.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        state().fail(dataset, "write failed: " + hdf5_message());
}

void File::write_strings(const std::string& dataset, const std::vector<std::string>& values) {
    QuietHdf5 quiet;
    state().require_writable(dataset);
    if (state().exists(dataset)) state().fail(dataset, "already exists");
    std::vector<const char*> pointers;
    pointers.reserve(values.size());
    for (const std::string& v : values) pointers.push_back(v.c_str());
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), H5T_VARIABLE);
    H5Tset_cset(type.get(), H5T_CSET_UTF8);
    const hsize_t count = values.size();
    Handle space(H5Screate_simple(1, &count, nullptr), H5Sclose);
    Handle lcpl = state().intermediate_groups();
    Handle d(H5Dcreate2(state().id(), dataset.c_str(), type.get(), space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
             H5Dclose);
    if (!d.valid()) state().fail(dataset, "cannot create the dataset: " + hdf5_message());
    if (count > 0 && H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()) < 0)
        state().fail(dataset, "write failed: " + hdf5_message());
}

std::vector<std::string> File::read_strings(const std::string& dataset) const {
    QuietHdf5 quiet;
    state().require_open(dataset);
    Handle d = detail::open_dataset_checked(state().id(), state().path, dataset);
    Handle type(H5Dget_type(d.get()), H5Tclose);
    if (!type.valid()) state().fail(dataset, "cannot read the dtype: " + hdf5_message());
    if (H5Tget_class(type.get()) != H5T_STRING)
        state().fail(dataset, "dtype " + detail::describe_type(type.get()) + ", expected strings");
    const auto dims = detail::dataset_dims(d.get(), state().path, dataset);
    if (dims.size() > 1) state().fail(dataset, "shape " + detail::shape_text(dims) + ", expected one dimension");
    const std::size_t count = dims.empty() ? 1 : std::size_t(dims[0]);
    std::vector<std::string> out;
    if (count == 0) return out;
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    if (H5Tis_variable_str(type.get()) > 0) {
        // The pointers first (checked), then each string as HDF5 hands it over.
        detail::check_dataset_size(d.get(), state().path, dataset, dims, sizeof(char*), 0);
        H5Tset_size(mem.get(), H5T_VARIABLE);
        std::vector<char*> pointers(count, nullptr);
        Handle space(H5Dget_space(d.get()), H5Sclose);
        if (H5Dread(d.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()) < 0)
            state().fail(dataset, "read failed (corrupt or truncated data?): " + hdf5_message());
        try {
            out.reserve(count);
            for (char* p : pointers) out.emplace_back(p != nullptr ? p : "");
        } catch (...) {
            H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, pointers.data());
            throw;
        }
        H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, pointers.data());
        return out;
    }
    const std::size_t width = H5Tget_size(type.get());
    H5Tset_size(mem.get(), width);
    H5Tset_strpad(mem.get(), H5Tget_strpad(type.get()));  // the bytes as stored; padding removed below
    const std::size_t bytes = detail::check_dataset_size(d.get(), state().path, dataset, dims, width, 0);
    std::vector<char> text(bytes);
    if (H5Dread(d.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()) < 0)
        state().fail(dataset, "read failed (corrupt or truncated data?): " + hdf5_message());
    const bool space_padded = H5Tget_strpad(type.get()) == H5T_STR_SPACEPAD;
    out.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        const char* s = text.data() + i * width;
        std::string value(s, strnlen(s, width));
        if (space_padded)
            while (!value.empty() && value.back() == ' ') value.pop_back();
        out.push_back(std::move(value));
    }
    return out;
}

bool File::has_attribute(const std::string& object, const std::string& name) const {
    QuietHdf5 quiet;
    state().require_open(object);
    state().require_object(object);
    const htri_t e = H5Aexists_by_name(state().id(), object.c_str(), name.c_str(), H5P_DEFAULT);
    if (e < 0) state().fail(object, "cannot query attribute '" + name + "': " + hdf5_message());
    return e > 0;
}

void File::set_attribute(const std::string& object, const std::string& name, const std::string& value) {
    QuietHdf5 quiet;
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), H5T_VARIABLE);
    H5Tset_cset(type.get(), H5T_CSET_UTF8);
    const char* text = value.c_str();
    state().write_attribute(object, name, type.get(), type.get(), &text, 1, true);
}

void File::set_attribute(const std::string& object, const std::string& name, double value) {
    QuietHdf5 quiet;
    state().write_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, 1, true);
}

void File::set_attribute(const std::string& object, const std::string& name, std::int64_t value) {
    QuietHdf5 quiet;
    // int32 in the file where the value fits, as numpy users expect for small counters.
    if (value >= std::numeric_limits<std::int32_t>::min() && value <= std::numeric_limits<std::int32_t>::max()) {
        const std::int32_t v = std::int32_t(value);
        state().write_attribute(object, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &v, 1, true);
    } else {
        state().write_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, 1, true);
    }
}

void File::set_attribute(const std::string& object, const std::string& name, const std::vector<double>& values) {
    QuietHdf5 quiet;
    state().write_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data(), values.size(), false);
}

std::string File::string_attribute(const std::string& object, const std::string& name) const {
    QuietHdf5 quiet;
    Handle type;
    hsize_t count = 0;
    Handle attr = state().open_attribute(object, name, &type, &count);
    if (H5Tget_class(type.get()) != H5T_STRING)
        state().fail(object, "attribute '" + name + "' has type " + detail::describe_type(type.get()) +
                                 ", expected a string");
    if (count != 1)
        state().fail(object, "attribute '" + name + "' must hold a single string (has " + std::to_string(count) + ")");
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    if (H5Tis_variable_str(type.get()) > 0) {
        H5Tset_size(mem.get(), H5T_VARIABLE);
        char* text = nullptr;
        if (H5Aread(attr.get(), mem.get(), &text) < 0)
            state().fail(object, "cannot read attribute '" + name + "': " + hdf5_message());
        std::string value = text != nullptr ? text : "";
        H5free_memory(text);
        return value;
    }
    const std::size_t size = H5Tget_size(type.get());
    H5Tset_size(mem.get(), size);
    H5Tset_strpad(mem.get(), H5Tget_strpad(type.get()));
    std::vector<char> text(size + 1, '\0');
    if (H5Aread(attr.get(), mem.get(), text.data()) < 0)
        state().fail(object, "cannot read attribute '" + name + "': " + hdf5_message());
    std::string value(text.data(), strnlen(text.data(), size));
    if (H5Tget_strpad(type.get()) == H5T_STR_SPACEPAD)
        while (!value.empty() && value.back() == ' ') value.pop_back();
    return value;
}

double File::double_attribute(const std::string& object, const std::string& name) const {
    QuietHdf5 quiet;
    hsize_t count = 0;
    Handle attr = state().open_number_attribute(object, name, false, &count);
    if (count != 1)
        state().fail(object, "attribute '" + name + "' must hold a single value (has " + std::to_string(count) + ")");
    double value = 0;
    if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value) < 0)
        state().fail(object, "cannot read attribute '" + name + "': " + hdf5_message());
    return value;
}

std::int64_t File::int_attribute(const std::string& object, const std::string& name) const {
    QuietHdf5 quiet;
    hsize_t count = 0;
    Handle attr = state().open_number_attribute(object, name, true, &count);
    if (count != 1)
        state().fail(object, "attribute '" + name + "' must hold a single value (has " + std::to_string(count) + ")");
    Handle type(H5Aget_type(attr.get()), H5Tclose);
    if (H5Tget_sign(type.get()) == H5T_SGN_NONE && H5Tget_size(type.get()) >= 8) {
        std::uint64_t value = 0;
        if (H5Aread(attr.get(), H5T_NATIVE_UINT64, &value) < 0)
            state().fail(object, "cannot read attribute '" + name + "': " + hdf5_message());
        if (value > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
            state().fail(object, "attribute '" + name + "' is " + std::to_string(value) + ", above int64's range");
        return std::int64_t(value);
    }
    std::int64_t value = 0;
    if (H5Aread(attr.get(), H5T_NATIVE_INT64, &value) < 0)
        state().fail(object, "cannot read attribute '" + name + "': " + hdf5_message());
    return value;
}

std::vector<double> File::doubles_attribute(const std::string& object, const std::string& name) const {
    QuietHdf5 quiet;
    hsize_t count = 0;
    Handle attr = state().open_number_attribute(object, name, false, &count);
    std::vector<double> values(count);  // an attribute lives in the object header: at most 64 KiB
    if (count > 0 && H5Aread(attr.get(), H5T_NATIVE_DOUBLE, values.data()) < 0)
        state().fail(object, "cannot read attribute '" + name + "': " + hdf5_message());
    return values;
}

#define BATCHSOLVE_H5_INSTANTIATE(T)                                                                     \
    template std::vector<T> File::read<T>(const std::string&, Shape*, std::uint64_t) const;              \
    template std::vector<T> File::read_exact<T>(const std::string&, const Shape&) const;                 \
    template void File::write<T>(const std::string&, const T*, const Shape&, bool);
BATCHSOLVE_H5_INSTANTIATE(std::uint8_t)
BATCHSOLVE_H5_INSTANTIATE(std::uint16_t)
BATCHSOLVE_H5_INSTANTIATE(std::int32_t)
BATCHSOLVE_H5_INSTANTIATE(std::int64_t)
BATCHSOLVE_H5_INSTANTIATE(std::uint64_t)
BATCHSOLVE_H5_INSTANTIATE(float)
BATCHSOLVE_H5_INSTANTIATE(double)
BATCHSOLVE_H5_INSTANTIATE(std::complex<float>)
BATCHSOLVE_H5_INSTANTIATE(std::complex<double>)
#undef BATCHSOLVE_H5_INSTANTIATE

}  // namespace batchsolve::io::h5
