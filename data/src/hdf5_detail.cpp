// The HDF5 plumbing of hdf5_detail.hpp, shared by the batch files and the typed layer h5::File.
#include "hdf5_detail.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <optional>

#include "batchsolve/checked_size.hpp"
#include "batchsolve_io/output.hpp"

namespace batchsolve::io {

FileError::FileError(std::string file, std::string dataset, std::string reason)
    : Error(detail::one_line(file + ": " + (dataset.empty() ? std::string() : dataset + ": ") + reason)),
      file_(std::move(file)), dataset_(std::move(dataset)), reason_(detail::one_line(std::move(reason))) {}

namespace detail {

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

namespace {
herr_t keep_innermost(unsigned, const H5E_error2_t* err, void* out) {
    if (err->desc != nullptr && err->desc[0] != '\0') *static_cast<std::string*>(out) = err->desc;
    return 0;
}

[[noreturn]] void fail(const std::string& path, const std::string& object, const std::string& reason) {
    H5Eclear2(H5E_DEFAULT);
    throw FileError(path, object, reason);
}
}  // namespace

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

Handle complex_type(hid_t scalar, std::size_t part_size) {
    Handle t(H5Tcreate(H5T_COMPOUND, 2 * part_size), H5Tclose);
    H5Tinsert(t.get(), "r", 0, scalar);
    H5Tinsert(t.get(), "i", part_size, scalar);
    return t;
}

Handle open_for_reading(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) fail(path, "/", "cannot access: " + ec.message());
    if (!fs::exists(st)) fail(path, "/", "no such file");
    if (fs::is_directory(st)) fail(path, "/", "is a directory");
    if (!fs::is_regular_file(st)) fail(path, "/", "not a regular file (a device, FIFO or socket): refused");
    {
        std::ifstream probe(path, std::ios::binary);
        if (!probe) fail(path, "/", std::string("cannot open for reading: ") + std::strerror(errno));
    }
    const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
    if (is_hdf5 == 0) fail(path, "/", "not an HDF5 file (no HDF5 signature: another format, empty or truncated)");
    if (is_hdf5 < 0) fail(path, "/", "cannot read as HDF5 (truncated or corrupt file?): " + hdf5_message());
    Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
    // We only read, and never alongside a single-writer process: no lock, so that files on read-only
    // mounts and file systems without flock() open too.
    H5Pset_file_locking(fapl.get(), false, true);
#endif
    Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
    if (!file.valid()) fail(path, "/", "cannot open as HDF5 (truncated or corrupt file): " + hdf5_message());
    return file;
}

std::uint64_t file_bytes_on_disk(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) return 0;
    return std::uint64_t(st.st_size);
}

std::vector<std::string> path_prefixes(const std::string& object) {
    std::vector<std::string> out;
    std::string current;
    std::size_t start = 0;
    while (start <= object.size()) {
        std::size_t end = object.find('/', start);
        if (end == std::string::npos) end = object.size();
        if (end > start) {
            current += "/" + object.substr(start, end - start);
            out.push_back(current);
        }
        start = end + 1;
    }
    return out;
}

bool object_exists(hid_t file, const std::string& path, const std::string& object) {
    for (const std::string& prefix : path_prefixes(object)) {
        const htri_t e = H5Lexists(file, prefix.c_str(), H5P_DEFAULT);
        if (e <= 0) {
            H5Eclear2(H5E_DEFAULT);
            return false;
        }
        H5L_info_t link{};
        if (H5Lget_info(file, prefix.c_str(), &link, H5P_DEFAULT) < 0) {
            H5Eclear2(H5E_DEFAULT);
            return false;
        }
        if (link.type != H5L_TYPE_HARD && link.type != H5L_TYPE_SOFT)
            fail(path, object, "'" + prefix + "' is an external link: refused (objects must be stored in the file itself)");
    }
    return true;
}

Handle open_dataset_checked(hid_t file, const std::string& path, const std::string& name) {
    if (!object_exists(file, path, name)) fail(path, name, "missing dataset");
    H5O_info_t object{};
    if (H5Oget_info_by_name(file, name.c_str(), &object, H5P_DEFAULT) < 0)
        fail(path, name, "cannot query: " + hdf5_message());
    if (object.type != H5O_TYPE_DATASET) fail(path, name, "exists but is not a dataset (a group?)");
    Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.valid()) fail(path, name, "cannot open: " + hdf5_message());
    Handle dcpl(H5Dget_create_plist(d.get()), H5Pclose);
    if (!dcpl.valid()) fail(path, name, "cannot read the storage properties: " + hdf5_message());
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    if (layout == H5D_VIRTUAL) fail(path, name, "is a virtual dataset (data in other files): refused");
    if (layout != H5D_COMPACT && layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED)
        fail(path, name, "has an unknown storage layout: " + hdf5_message());
    const int external = H5Pget_external_count(dcpl.get());
    if (external != 0) fail(path, name, "stores its data in external files: refused");
    return d;
}

std::vector<hsize_t> dataset_dims(hid_t dataset, const std::string& path, const std::string& name) {
    Handle space(H5Dget_space(dataset), H5Sclose);
    if (!space.valid()) fail(path, name, "cannot read the shape: " + hdf5_message());
    const H5S_class_t cls = H5Sget_simple_extent_type(space.get());
    if (cls == H5S_NULL) fail(path, name, "has a null dataspace (no shape, no data)");
    if (cls == H5S_SCALAR) return {};
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (cls != H5S_SIMPLE || rank < 0) fail(path, name, "cannot read the shape: " + hdf5_message());
    std::vector<hsize_t> dims(std::size_t(rank), 0);
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
        fail(path, name, "cannot read the shape: " + hdf5_message());
    return dims;
}

namespace {
// A chunked dataset stores only the chunks that were written: a crafted or unwritten one declares
// gigabytes and stores nothing (reading it allocates all of it, then returns fill values). Every
// chunk must be stored, and the stored bytes must be within what the dataset's filters can achieve:
// none (stored == declared), or only deflate, shuffle and fletcher32 (deflate's best ratio is 1032:1;
// we allow 1100:1). Other filters (szip, scale-offset, plugins) have no such bound and are not judged.
void check_chunks_stored(hid_t dataset, hid_t dcpl, const std::string& path, const std::string& name,
                         const std::vector<hsize_t>& dims, const std::optional<std::uint64_t>& declared, std::uint64_t stored) {
    const int rank = int(dims.size());
    std::vector<hsize_t> chunk(dims.size(), 0);
    if (H5Pget_chunk(dcpl, rank, chunk.data()) != rank) fail(path, name, "cannot read the chunk shape: " + hdf5_message());
    std::optional<std::uint64_t> expected = std::uint64_t(1);
    for (int i = 0; i < rank; ++i) {
        if (chunk[std::size_t(i)] == 0) fail(path, name, "has a chunk extent of 0 (crafted file)");
        const std::uint64_t per_axis = (dims[std::size_t(i)] + chunk[std::size_t(i)] - 1) / chunk[std::size_t(i)];
        expected = expected ? checked_mul(*expected, per_axis) : expected;
    }
#if H5_VERSION_GE(1, 10, 5)
    Handle space(H5Dget_space(dataset), H5Sclose);
    hsize_t written = 0;
    if (space.valid() && H5Dget_num_chunks(dataset, space.get(), &written) >= 0 && expected && written < *expected)
        fail(path, name, "shape " + shape_text(dims) + " is stored in chunks of " + shape_text(chunk) + ", but only " +
                             std::to_string(written) + " of its " + std::to_string(*expected) +
                             " chunks are in the file (unwritten, truncated or crafted dataset)");
    H5Eclear2(H5E_DEFAULT);
#endif
    const int filters = H5Pget_nfilters(dcpl);
    bool bounded = filters >= 0;
    for (int f = 0; f < filters && bounded; ++f) {
        unsigned flags = 0;
        std::size_t nvalues = 0;
        const H5Z_filter_t id = H5Pget_filter2(dcpl, unsigned(f), &flags, &nvalues, nullptr, 0, nullptr, nullptr);
        bounded = id == H5Z_FILTER_DEFLATE || id == H5Z_FILTER_SHUFFLE || id == H5Z_FILTER_FLETCHER32;
    }
    if (!bounded || !declared) return;
    constexpr std::uint64_t kMaxDeflateRatio = 1100;
    const bool compressed = filters > 0;
    if ((!compressed && stored < *declared) || (compressed && stored < *declared / kMaxDeflateRatio))
        fail(path, name, "shape " + shape_text(dims) + " declares " + bytes_text(*declared) + " but the file stores " +
                             bytes_text(stored) + (compressed ? " (beyond what its compression can reach: truncated or crafted dataset)"
                                                              : " (truncated, unwritten or crafted dataset)"));
}
}  // namespace

std::size_t check_dataset_size(hid_t dataset, const std::string& path, const std::string& name,
                               const std::vector<hsize_t>& dims, std::size_t memory_element,
                               std::uint64_t max_bytes) {
    const auto elements = checked_product(dims);
    if (!elements) fail(path, name, "shape " + shape_text(dims) + " has more elements than 2^64: refused");
    const auto bytes = checked_bytes(*elements, memory_element);
    if (!bytes)
        fail(path, name, "shape " + shape_text(dims) + " of " + std::to_string(memory_element) +
                             "-byte elements is more than this machine can address: refused");
    const std::uint64_t limit = max_bytes != 0 ? max_bytes : available_host_bytes();
    if (*bytes > limit)
        fail(path, name, "shape " + shape_text(dims) + " needs " + bytes_text(*bytes) + ", " + bytes_text(limit) +
                             " available");
    if (*elements == 0) return 0;

    // What the file really holds for this dataset, against what the shape declares.
    Handle type(H5Dget_type(dataset), H5Tclose);
    Handle dcpl(H5Dget_create_plist(dataset), H5Pclose);
    if (!type.valid() || !dcpl.valid()) fail(path, name, "cannot read the dtype: " + hdf5_message());
    const auto declared = checked_mul(*elements, H5Tget_size(type.get()));
    const std::uint64_t stored = H5Dget_storage_size(dataset);
    const std::uint64_t on_disk = file_bytes_on_disk(path);
    if (on_disk != 0 && stored > on_disk)
        fail(path, name, "claims " + bytes_text(stored) + " of storage in a file of " + bytes_text(on_disk) +
                             " (truncated or crafted file)");
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    if (layout == H5D_CHUNKED && !dims.empty()) check_chunks_stored(dataset, dcpl.get(), path, name, dims, declared, stored);
    if ((layout == H5D_CONTIGUOUS || layout == H5D_COMPACT) && (!declared || stored < *declared))
        fail(path, name, "shape " + shape_text(dims) + " declares " +
                             (declared ? bytes_text(*declared) : std::string("more than 2^64 bytes")) +
                             " but the file stores " + bytes_text(stored) + " (truncated, unwritten or crafted dataset)");
    return *bytes;
}

// ---- the safe output file ---------------------------------------------------------------------------

namespace {
const char* file_kind(mode_t mode) {
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

std::string mode_text(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", unsigned(mode & 07777));
    return text;
}

std::atomic<unsigned> temporary_counter{0};
}  // namespace

OutputFile::OutputFile(std::string target, std::size_t expected_bytes, OutputOptions rules)
    : target_(std::move(target)), rules_(std::move(rules)) {
    check_target();
    Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    // One allocation for the whole image where the size is known: the data plus room for metadata.
    const std::size_t increment = std::min<std::size_t>(expected_bytes, std::size_t(1) << 30) + (std::size_t(1) << 20);
    if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), increment, false) < 0)
        fail("/", "cannot set up HDF5's in-memory driver: " + hdf5_message());
    // SEMI close degree: closing fails while anything is still open instead of deferring the flush.
    H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_SEMI);
    // The in-memory file's name only matters to HDF5; nothing is created under it.
    const std::string memory_name = target_ + ".in-memory-" + std::to_string(::getpid());
    file_ = Handle(H5Fcreate(memory_name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
    if (!file_.valid()) fail("/", "cannot create the file in memory: " + hdf5_message());
}

namespace {
// HDF5's file image callbacks for the direct mode's in-memory file: anonymous mappings that grow by
// mremap, with transparent huge pages asked for (HDF5 zero-fills every byte it grows the image by,
// the datasets' reserved space included: with 4 KiB pages that first touch was most of its cost).
// The current buffer and size are kept in the OutputFile's Image (udata; property list copies share it).
std::size_t mapping_bytes(std::size_t size) {
    const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
    return (size + page - 1) / page * page;
}
void* image_malloc(std::size_t size, H5FD_file_image_op_t, void* udata) {
    auto* image = static_cast<OutputFile::Image*>(udata);
    void* p = ::mmap(nullptr, mapping_bytes(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    ::madvise(p, mapping_bytes(size), MADV_HUGEPAGE);  // advice only: refused where THP is off
    image->buffer = p, image->size = size;
    return p;
}
void* image_memcpy(void* dest, const void* src, std::size_t size, H5FD_file_image_op_t, void*) { return std::memcpy(dest, src, size); }
void* image_realloc(void* ptr, std::size_t size, H5FD_file_image_op_t op, void* udata) {
    auto* image = static_cast<OutputFile::Image*>(udata);
    if (ptr == nullptr) return image_malloc(size, op, udata);
    if (ptr != image->buffer) return nullptr;
    void* p = ::mremap(ptr, mapping_bytes(image->size), mapping_bytes(size), MREMAP_MAYMOVE);
    if (p == MAP_FAILED) return nullptr;
    ::madvise(p, mapping_bytes(size), MADV_HUGEPAGE);
    image->buffer = p, image->size = size;
    return p;
}
herr_t image_free(void* ptr, H5FD_file_image_op_t, void* udata) {
    auto* image = static_cast<OutputFile::Image*>(udata);
    if (ptr == nullptr) return 0;
    if (ptr != image->buffer) return -1;
    ::munmap(ptr, mapping_bytes(image->size));
    image->buffer = nullptr, image->size = 0;
    return 0;
}
void* image_udata_copy(void* udata) { return udata; }
herr_t image_udata_free(void*) { return 0; }
}  // namespace

OutputFile::OutputFile(std::string target, OutputOptions rules, Direct)
    : target_(std::move(target)), rules_(std::move(rules)), image_(std::make_unique<Image>()) {
    check_target();
    direct_fd_ = create_temporary(target_, "/", &temp_);
    temp_slot_ = register_temporary(temp_);
    temp_created_ = true;
    if (target_exists_) {
        // As write_temporary: owner first (where allowed), then the mode, which chown may clear.
        if (::fchown(direct_fd_, target_stat_.st_uid, target_stat_.st_gid) != 0) errno = 0;
        if (::fchmod(direct_fd_, target_stat_.st_mode & 07777) != 0)
            fail("/", "setting the permissions of '" + temp_ + "' failed: " + std::strerror(errno));
    }
    Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5FD_file_image_callbacks_t callbacks{image_malloc, image_memcpy, image_realloc, image_free, image_udata_copy, image_udata_free, image_.get()};
    if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), std::size_t(1) << 20, false) < 0 || H5Pset_file_image_callbacks(fapl.get(), &callbacks) < 0)
        fail("/", "cannot set up HDF5's in-memory driver: " + hdf5_message());
    H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_SEMI);
    const std::string memory_name = target_ + ".in-memory-" + std::to_string(::getpid());
    file_ = Handle(H5Fcreate(memory_name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
    if (!file_.valid()) fail("/", "cannot create the file in memory: " + hdf5_message());
}

void OutputFile::write_direct(const void* data, std::uint64_t bytes, std::uint64_t offset, const std::string& object) {
    if (direct_fd_ < 0) fail(object, "not a file written directly");
    write_at(direct_fd_, data, bytes, offset, temp_, object);
    direct_ranges_.emplace_back(offset, bytes);
}

void OutputFile::check_only(const std::string& target, const OutputOptions& rules) {
    OutputFile probe(target, rules, NoFile{});
    probe.check_target();
}

OutputFile::~OutputFile() {
    file_.reset();
    if (direct_fd_ >= 0) ::close(direct_fd_);
    if (temp_created_ && !committed_) ::unlink(temp_.c_str());
    unregister_temporary(temp_slot_);
}

void OutputFile::fail(const std::string& object, const std::string& reason) const {
    detail::fail(target_, object, reason);
}

void write_at(int fd, const void* data, std::uint64_t bytes, std::uint64_t offset, const std::string& path,
              const std::string& object) {
    const char* p = static_cast<const char*>(data);
    for (std::uint64_t done = 0; done < bytes;) {
        const std::size_t piece = std::size_t(std::min<std::uint64_t>(bytes - done, std::uint64_t(1) << 30));
        const ssize_t w = ::pwrite(fd, p + done, piece, off_t(offset + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            detail::fail(path, object, std::string("write failed: ") + std::strerror(errno));
        }
        done += std::uint64_t(w);
    }
    // Where the file system has no writeback to start (tmpfs) this is refused or a no-op: either is fine.
    ::sync_file_range(fd, off_t(offset), off_t(bytes), SYNC_FILE_RANGE_WRITE);
}

void check_output_target(std::string& target, const OutputOptions& rules, const std::string& object, bool* exists,
                         struct stat* status) {
    struct stat st {};
    if (::lstat(target.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        // Write where the link points, so that the link itself stays.
        std::error_code ec;
        const auto resolved = std::filesystem::canonical(target, ec);
        if (ec) fail(target, object, "is a symbolic link to a missing file or directory: refused");
        target = resolved.string();
    }
    *exists = ::stat(target.c_str(), &st) == 0;
    if (!*exists) {
        if (errno != ENOENT) fail(target, object, std::string("cannot access: ") + std::strerror(errno));
        const std::filesystem::path dir = std::filesystem::path(target).parent_path();
        std::error_code ec;
        if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
            fail(target, object, "the directory '" + dir.string() + "' does not exist");
        if (target.empty() || target.back() == '/') fail(target, object, "names a directory, not a file");
        return;
    }
    *status = st;
    if (S_ISDIR(st.st_mode)) fail(target, object, "is a directory");
    if (!S_ISREG(st.st_mode))
        fail(target, object, std::string("is ") + file_kind(st.st_mode) + ", not a regular file: refused (it would be replaced)");
    for (const std::string& input : rules.inputs) {
        struct stat in {};
        if (::stat(input.c_str(), &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
            fail(target, object, "is the input file '" + input + "' of this run: refused (choose another output)");
    }
    if ((st.st_mode & 0222) == 0)
        fail(target, object, "is read-only (mode " + mode_text(st.st_mode) + "): refused (make it writable to replace it)");
    if (rules.existing == Existing::refuse) fail(target, object, "exists; pass --force to replace it");
}

void OutputFile::check_target() { check_output_target(target_, rules_, "/", &target_exists_, &target_stat_); }

int create_temporary(const std::string& target, const std::string& object, std::string* temp) {
    int fd = -1;
    for (int attempt = 0; fd < 0; ++attempt) {
        *temp = target + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(temporary_counter++);
        fd = ::open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // 0666 less the umask
        if (fd < 0 && (errno != EEXIST || attempt > 100))
            fail(target, object, "cannot create the temporary file '" + *temp + "': " + std::strerror(errno));
    }
    return fd;
}

void rename_over_target(const std::string& temp, const std::string& target, Existing existing, const std::string& object) {
    int renamed = 0;
    if (existing == Existing::refuse) {
        // No replacement even if the target appeared since the check.
        renamed = ::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE);
        if (renamed != 0 && (errno == EINVAL || errno == ENOSYS)) {  // file system without it
            renamed = ::link(temp.c_str(), target.c_str());
            if (renamed == 0) ::unlink(temp.c_str());
        }
        if (renamed != 0 && errno == EEXIST) fail(target, object, "exists; pass --force to replace it");
    } else {
        renamed = std::rename(temp.c_str(), target.c_str());
    }
    if (renamed != 0) fail(target, object, "cannot rename '" + temp + "' to the target: " + std::strerror(errno));
}

void OutputFile::commit() {
    if (committed_) fail("/", "already committed");
    if (direct_fd_ >= 0) {
        // The datasets' bytes are in the temporary already (their writeback started as they were
        // written); the rest of the image (superblock, object headers, heaps) goes around them.
        if (H5Fflush(file(), H5F_SCOPE_GLOBAL) < 0) fail("/", "cannot finish the file in memory: " + hdf5_message());
        const ssize_t size = H5Fget_file_image(file(), nullptr, 0);
        if (size < 0 || std::size_t(size) > image_->size) fail("/", "cannot get the file image: " + hdf5_message());
        std::sort(direct_ranges_.begin(), direct_ranges_.end());
        const char* image = static_cast<const char*>(image_->buffer);
        std::uint64_t at = 0;
        for (std::size_t k = 0; k <= direct_ranges_.size(); ++k) {
            const std::uint64_t end = k < direct_ranges_.size() ? direct_ranges_[k].first : std::uint64_t(size);
            if (end > at) write_at(direct_fd_, image + at, end - at, at, temp_, "/");
            if (k < direct_ranges_.size()) at = std::max(at, direct_ranges_[k].first + direct_ranges_[k].second);
        }
        if (::ftruncate(direct_fd_, off_t(size)) != 0) fail("/", "setting the size of '" + temp_ + "' failed: " + std::strerror(errno));
        if (H5Fclose(file_.release()) < 0) fail("/", "cannot close the file in memory: " + hdf5_message());
        check_target();
        const int fd = direct_fd_;
        direct_fd_ = -1;
        if (::fsync(fd) != 0) {
            const int err = errno;
            ::close(fd);
            fail("/", "syncing '" + temp_ + "' failed: " + std::strerror(err));
        }
        if (::close(fd) != 0) fail("/", "closing '" + temp_ + "' failed: " + std::strerror(errno));
        test_pause_before_rename();
        check_target();
        rename_over_target(temp_, target_, rules_.existing, "/");
        committed_ = true;
        unregister_temporary(temp_slot_);
        temp_slot_ = -1;
        return;
    }
    if (H5Fflush(file(), H5F_SCOPE_GLOBAL) < 0) fail("/", "cannot finish the file in memory: " + hdf5_message());
    const ssize_t size = H5Fget_file_image(file(), nullptr, 0);
    if (size < 0) fail("/", "cannot get the file image: " + hdf5_message());
    std::vector<char> image;
    try {
        image.resize(std::size_t(size));
    } catch (const std::bad_alloc&) {
        fail("/", "out of memory for the file image (needs " + bytes_text(std::uint64_t(size)) + ")");
    }
    if (H5Fget_file_image(file(), image.data(), image.size()) != size)
        fail("/", "cannot get the file image: " + hdf5_message());
    if (H5Fclose(file_.release()) < 0) fail("/", "cannot close the file in memory: " + hdf5_message());
    check_target();  // again: the target may have changed while the file was being built
    write_temporary(image);
    test_pause_before_rename();
    check_target();  // and once more: the pause above (tests) or a slow disk
    rename_over_target(temp_, target_, rules_.existing, "/");
    committed_ = true;
    unregister_temporary(temp_slot_);
    temp_slot_ = -1;
}

// Writes the image to a new temporary file beside the target (so that the rename stays on one file
// system), with the replaced file's permissions, synced before the rename makes it visible.
void OutputFile::write_temporary(const std::vector<char>& image) {
    const int fd = create_temporary(target_, "/", &temp_);
    temp_slot_ = register_temporary(temp_);
    temp_created_ = true;
    auto fail_closing = [&](const std::string& what) {
        const int err = errno;
        ::close(fd);
        fail("/", what + " '" + temp_ + "' failed: " + std::strerror(err));
    };
    if (target_exists_) {
        // Owner first (where allowed: as root, or the same owner), then the mode, which chown may clear.
        if (::fchown(fd, target_stat_.st_uid, target_stat_.st_gid) != 0) errno = 0;
        if (::fchmod(fd, target_stat_.st_mode & 07777) != 0) fail_closing("setting the permissions of");
    }
    std::size_t done = 0;
    while (done < image.size()) {
        const std::size_t chunk = std::min<std::size_t>(image.size() - done, std::size_t(1) << 30);
        const ssize_t w = ::write(fd, image.data() + done, chunk);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            fail_closing("writing");
        }
        done += std::size_t(w);
    }
    if (::fsync(fd) != 0) fail_closing("syncing");
    if (::close(fd) != 0) fail("/", "closing '" + temp_ + "' failed: " + std::strerror(errno));
}

}  // namespace detail

void check_output(const std::string& path, const OutputOptions& options) {
    detail::OutputFile::check_only(path, options);
}

}  // namespace batchsolve::io
