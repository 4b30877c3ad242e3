// A small typed HDF5 layer shared by bsolve and the applications: files opened for reading or
// created through a temporary that replaces the target only on commit(), n-dimensional datasets of
// numbers (C order, row-major shapes as h5py shows them), groups and attributes. Every failure is a
// FileError "<file>: <dataset or attribute>: <reason>"; HDF5's own error printing is silenced.
//
// Element types: std::uint8_t, std::uint16_t, std::int32_t, std::int64_t, std::uint64_t, float,
// double, std::complex<float>, std::complex<double> (the {r, i} compound h5py uses). Reading
// converts between numeric types where HDF5 converts without loss of range (uint8 -> float, float ->
// double, int32 -> int64, ...); a conversion that cannot hold every value (float64 -> float32,
// int64 -> int32, complex <-> real) is refused with the two type names.
//
// Sizes: a dataset's element count is checked for overflow against the shape before anything is
// allocated, and reading refuses more than `max_bytes` (default: the memory available, see
// available_host_bytes()) with "needs X GiB, Y available".
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "batchsolve_io/batch_file.hpp"  // FileError

namespace batchsolve::io::h5 {

using Shape = std::vector<std::uint64_t>;

// Bytes of host memory a reader may still allocate (MemAvailable, capped by RLIMIT_AS/RLIMIT_DATA).
std::uint64_t available_host_bytes();

// "(3, 4)" / "(5,)" as numpy prints shapes, for messages.
std::string shape_text(const Shape& shape);

// Runs `read` (which reads `path` with h5::File or the batch readers) in a child process first, so
// that a crash, an endless loop or a runaway allocation inside the HDF5 library on a corrupt or
// crafted file (HDF5 1.10 has such defects: see docs/input-checks.md) becomes a FileError
// "<path>: /: the HDF5 library crashed (SIGSEGV) reading it ..." instead of killing or hanging the
// caller. A FileError thrown by `read` in the child is rethrown as is; success returns, and the
// caller then reads the file itself. timeout_s = 0: 60 s plus 1 s per 50 MB of file.
void probe_in_child(const std::string& path, const std::function<void()>& read, double timeout_s = 0);

// What to do when the output file already exists (batchsolve::io::Existing, shared with write_batch).
using Existing = batchsolve::io::Existing;

// Where a created file is built. image: in memory (HDF5's core driver), copied out and written in
// one piece by commit(). direct: in the temporary on disk from create() on; each uncompressed
// dataset's space is reserved at its creation and its bytes are written there straight from the
// caller's array (no in-memory image and no copy of it; the writeback starts as each dataset is
// written), HDF5's metadata at commit(). Both sync the temporary before renaming it over the target.
enum class WriteMode { image, direct };

class File {
public:
    // Opens an existing file read-only.
    static File open(const std::string& path);
    // Starts a new file at `path`, written into a temporary beside it; commit() renames it over the
    // target (atomically, keeping the replaced file's permissions). Refused before anything is
    // written when: the target exists and `existing` is refuse ("exists; pass --force to replace
    // it"), the target is not a regular file (a device, a directory, a FIFO), or the target is one of
    // `inputs` (same device and inode: the output would destroy an input of the same run).
    // `mode`: where the file is built before the commit (WriteMode).
    static File create(const std::string& path, Existing existing = Existing::refuse,
                       const std::vector<std::string>& inputs = {}, WriteMode mode = WriteMode::image);

    File(File&&) noexcept;
    File& operator=(File&&) noexcept;
    ~File();  // an uncommitted created file's temporary is removed: the target is never half-written

    const std::string& path() const;
    void commit();  // created files only: flush, close and rename over the target

    bool exists(const std::string& object) const;  // "/a/b": a group or dataset
    void create_group(const std::string& group);   // intermediate groups are created too
    Shape shape(const std::string& dataset) const;

    template <class T>
    std::vector<T> read(const std::string& dataset, Shape* shape = nullptr,
                        std::uint64_t max_bytes = 0 /* 0: available_host_bytes() */) const;
    // True when the dataset's data is one plain extent of this file holding every declared byte
    // (contiguous or compact, no filters, no external files, an integer or float type): reading it
    // decodes no chunk index and runs no filter, only the bounded read and the numeric conversion
    // of read(). A child probe (probe_in_child) may then check its shape and leave the data to the
    // parent. A dataset whose storage contradicts its shape is an error, as in read().
    bool stored_plainly(const std::string& dataset) const;
    // Reads a dataset that must have exactly `expected` shape (a clear error otherwise).
    template <class T>
    std::vector<T> read_exact(const std::string& dataset, const Shape& expected) const;

    // Writes a new dataset (intermediate groups created); data holds product(shape) elements.
    // chunked + deflate (level 4) when compress is true and the dataset is larger than 64 KiB.
    template <class T>
    void write(const std::string& dataset, const T* data, const Shape& shape, bool compress = true);
    template <class T>
    void write(const std::string& dataset, const std::vector<T>& data) {
        write(dataset, data.data(), Shape{data.size()});
    }
    // A 1-D dataset of variable-length UTF-8 strings (id maps, names).
    void write_strings(const std::string& dataset, const std::vector<std::string>& values);
    std::vector<std::string> read_strings(const std::string& dataset) const;

    // Attributes of a group or dataset ("/" is the root group).
    bool has_attribute(const std::string& object, const std::string& name) const;
    void set_attribute(const std::string& object, const std::string& name, const std::string& value);
    void set_attribute(const std::string& object, const std::string& name, const char* value) {
        set_attribute(object, name, std::string(value));
    }
    void set_attribute(const std::string& object, const std::string& name, double value);
    void set_attribute(const std::string& object, const std::string& name, std::int64_t value);
    void set_attribute(const std::string& object, const std::string& name, int value) {
        set_attribute(object, name, std::int64_t(value));
    }
    void set_attribute(const std::string& object, const std::string& name, const std::vector<double>& values);
    std::string string_attribute(const std::string& object, const std::string& name) const;
    double double_attribute(const std::string& object, const std::string& name) const;
    std::int64_t int_attribute(const std::string& object, const std::string& name) const;
    std::vector<double> doubles_attribute(const std::string& object, const std::string& name) const;

private:
    struct State;
    explicit File(std::unique_ptr<State> state);
    State& state() const;  // throws batchsolve::Error on a moved-from File
    std::unique_ptr<State> state_;
};

}  // namespace batchsolve::io::h5
