// HDF5 plumbing shared by batch_file.cpp and hdf5.cpp (internal to batchsolve_io): owned handles,
// silenced error printing, one-line error text, the {r, i} complex compound, type names for
// messages, opening a file for reading with clear errors, and the safe output file (checks on the
// target, an in-memory image, a temporary beside the target renamed over it on commit).
#pragma once

#include <hdf5.h>
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <utility>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "batchsolve_io/batch_file.hpp"

namespace batchsolve::io::detail {

// Messages stay on one line whatever HDF5 or the OS put into them.
std::string one_line(std::string s);

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

// The innermost (most specific) description on HDF5's error stack, which is then cleared.
std::string hdf5_message();

// "(3, 4)", "(5,)", "()" as numpy prints shapes.
std::string shape_text(const std::vector<hsize_t>& dims);

// A compound of two floats named r and i of equal size: h5py's (and our) complex number.
bool is_complex_compound(hid_t type, std::size_t* part_size);

// numpy-style name of an HDF5 type ("float32", "uint8", "complex128", "string"), for messages.
std::string describe_type(hid_t type);

// The {r, i} compound of two `scalar` floats of `part_size` bytes each: the memory type of
// std::complex<float/double>, or the file type with H5T_IEEE_F32LE / F64LE.
Handle complex_type(hid_t scalar, std::size_t part_size);

// Opens `path` read-only after checking that it exists, is not a directory, is readable and is HDF5;
// every failure a FileError "<path>: /: <reason>". No file lock (read-only mounts, no flock()).
Handle open_for_reading(const std::string& path);

// Size of the file on disk in bytes (0 when unknown): a bound on what a dataset can really store.
std::uint64_t file_bytes_on_disk(const std::string& path);

// "/a/b/c" -> "/a", "/a/b", "/a/b/c".
std::vector<std::string> path_prefixes(const std::string& object);

// Whether every component of `object` exists ("/" always does); an external link on the way is
// refused (FileError(path, object, ...)) rather than followed into another file.
bool object_exists(hid_t file, const std::string& path, const std::string& object);

// Opens dataset `name` of `file`, refusing what could make a crafted file read elsewhere or forever:
// external links, data in external files, virtual datasets. Errors are FileError(path, name, ...).
Handle open_dataset_checked(hid_t file, const std::string& path, const std::string& name);

// The dataset's extents ({} for a scalar); a null dataspace is refused.
std::vector<hsize_t> dataset_dims(hid_t dataset, const std::string& path, const std::string& name);

// Checks, before anything is allocated, that a dataset's `elements` fit in memory as `memory_element`
// bytes each (no overflow; at most max_bytes, 0 meaning available_host_bytes(): "needs X GiB, Y
// available") and that the file really stores what the shape declares: a contiguous dataset shorter
// than its shape, or any dataset larger than the file on disk, is a truncated or crafted file.
// Returns the bytes to allocate.
std::size_t check_dataset_size(hid_t dataset, const std::string& path, const std::string& name,
                               const std::vector<hsize_t>& dims, std::size_t memory_element,
                               std::uint64_t max_bytes);

// A new HDF5 file built in memory (the core driver, no backing store) and written by commit() into a
// temporary beside the target, then renamed over it. The target is checked when the object is made
// (refusing non-regular files, read-only files, inputs of the run and, by the rules, existing files)
// and again at commit; a replaced file keeps its permissions (and owner, where allowed). The
// temporary exists only inside commit() and is removed on any failure. HDF5 never writes to disk
// itself: after a failed disk write (full disk, file size limit) HDF5 1.10 cannot close a file and
// crashes at exit, whereas our own write() fails cleanly. The price is the file image held in memory
// once more while it is written.
// Writes `bytes` of `data` at `offset` of the open file `fd` (EINTR and short writes continued) and
// starts their writeback (the commit's fsync then waits for less); FileError naming path and object.
void write_at(int fd, const void* data, std::uint64_t bytes, std::uint64_t offset, const std::string& path,
              const std::string& object);

class OutputFile {
public:
    OutputFile(std::string target, std::size_t expected_bytes, OutputOptions rules);
    // h5::WriteMode::direct: HDF5 keeps the file in memory as in the default mode (so that closing it
    // never writes to the disk, also after a failed write), but the datasets' bytes go straight to
    // the temporary, created now, at the places HDF5 reserved for them (write_direct); commit()
    // writes the rest of the in-memory image (the metadata) around them.
    struct Direct {};
    OutputFile(std::string target, OutputOptions rules, Direct);
    // The direct mode's in-memory image: HDF5's buffer, allocated through file image callbacks so
    // that commit() writes from it without a copy.
    struct Image {
        void* buffer = nullptr;
        std::size_t size = 0;
    };
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    hid_t file() const { return file_.get(); }
    const std::string& target() const { return target_; }
    bool direct() const { return direct_fd_ >= 0; }
    // Direct mode: `bytes` of `data` to the temporary at `offset` (a dataset's reserved space).
    void write_direct(const void* data, std::uint64_t bytes, std::uint64_t offset, const std::string& object);
    bool committed() const { return committed_; }

    [[noreturn]] void fail(const std::string& object, const std::string& reason) const;
    void commit();

    // The checks of the constructor alone, without creating anything (io::check_output).
    static void check_only(const std::string& target, const OutputOptions& rules);

private:
    struct NoFile {};
    OutputFile(std::string target, OutputOptions rules, NoFile) : target_(std::move(target)), rules_(std::move(rules)) {}
    // Refuses the target by the rules; fills target_exists_ (and its status) when it exists.
    void check_target();
    void write_temporary(const std::vector<char>& image);

    std::string target_;  // where the file goes (a symbolic link is followed: the link stays)
    std::string temp_;
    OutputOptions rules_;
    bool target_exists_ = false;
    struct stat target_stat_ {};
    Handle file_;
    bool temp_created_ = false;
    int temp_slot_ = -1;  // in the cleanup registry (output.hpp) while the temporary exists
    bool committed_ = false;
    int direct_fd_ = -1;
    // Direct mode: HDF5's in-memory image (Image, below) and the byte ranges already in the temporary.
    std::unique_ptr<Image> image_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> direct_ranges_;  // offset, bytes
};

// The target rules of OutputOptions (shared by OutputFile and the text/binary OutputStream):
// FileError(target, object, reason) when refused. A symbolic link is replaced by what it points to;
// *exists and *status say whether (and as what) the target exists.
void check_output_target(std::string& target, const OutputOptions& rules, const std::string& object, bool* exists,
                         struct stat* status);
// A new temporary "<target>.tmp-<pid>-<k>" (O_EXCL), its descriptor; FileError when it cannot be made.
int create_temporary(const std::string& target, const std::string& object, std::string* temp);
// Renames temp over target; with Existing::refuse never replaces a file that appeared meanwhile.
void rename_over_target(const std::string& temp, const std::string& target, Existing existing, const std::string& object);

}  // namespace batchsolve::io::detail
