// Volumes (3D scalar images in z, y, x order) and their readers and writers: HDF5 datasets, raw
// files with given dimensions and type, and TIFF stacks (one page per z slice).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace dvc {

// Every failure of the application that a user can cause (bad file, bad option, impossible size):
// the message names the file or option and the reason.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Dimensions in z, y, x order (z slowest, x fastest in memory).
using Dims = std::array<std::int64_t, 3>;

class RawFile;

// Runs part(0) .. part(parts - 1) in parallel and returns when all are done (a thread per part by
// default; the GPU upload passes its persistent workers).
using PartRunner = std::function<void(std::size_t parts, const std::function<void(std::size_t)>& part)>;

struct Volume {
    Dims dims{0, 0, 0};
    double voxel_size = 1.0;  // physical edge length of a voxel (any unit); 1 when unknown
    std::vector<float> data;  // dims[0] * dims[1] * dims[2] values, x fastest
    // Set (and `data` empty) when the samples are still in their raw file, opened and checked: the
    // GPU engine reads them from there straight into its pinned staging buffers (open_for_device).
    std::shared_ptr<const RawFile> unread;

    std::int64_t nz() const { return dims[0]; }
    std::int64_t ny() const { return dims[1]; }
    std::int64_t nx() const { return dims[2]; }
    std::size_t voxels() const { return std::size_t(dims[0]) * std::size_t(dims[1]) * std::size_t(dims[2]); }
    std::size_t index(std::int64_t z, std::int64_t y, std::int64_t x) const {
        return (std::size_t(z) * std::size_t(dims[1]) + std::size_t(y)) * std::size_t(dims[2]) + std::size_t(x);
    }
    float& at(std::int64_t z, std::int64_t y, std::int64_t x) { return data[index(z, y, x)]; }
    float at(std::int64_t z, std::int64_t y, std::int64_t x) const { return data[index(z, y, x)]; }
};

// Stored element types a reader accepts (converted to float on reading).
enum class VoxelType { uint8, uint16, float32 };
VoxelType parse_voxel_type(const std::string& text);  // "uint8" | "uint16" | "float32"
const char* to_string(VoxelType t);
std::size_t bytes_of(VoxelType t);

// "1x2x3" or "1,2,3" (z, y, x); every dimension >= 1, the product checked for overflow. `what`
// names the option in errors.
Dims parse_dims(const std::string& text, const std::string& what);
std::string dims_text(const Dims& d);  // "192x192x192"

// Product of the dimensions times `element_bytes`, refusing overflow and non-positive dimensions.
std::uint64_t checked_volume_bytes(const Dims& d, std::uint64_t element_bytes, const std::string& what);

// Where a volume comes from. The format follows the extension unless given: .h5/.hdf5 (dataset
// `dataset`, default "/volume"; "file.h5:/group/name" also names it), .tif/.tiff (a stack), anything
// else raw (dims and type required).
struct VolumeSource {
    std::string path;
    std::string dataset;           // HDF5 only; empty: "/volume"
    Dims raw_dims{0, 0, 0};        // raw only
    VoxelType raw_type = VoxelType::uint8;
    std::uint64_t raw_offset = 0;  // raw only: bytes to skip (a header)
};
// Splits "file.h5:/dataset" into path and dataset (a path without ':' keeps an empty dataset).
VolumeSource parse_volume_source(const std::string& text);

Volume read_volume(const VolumeSource& source);

// A raw volume file opened and checked against its dimensions and type (every error names the
// file), not yet read. read_raw reads one into host memory; the GPU engine streams one to the
// device chunk by chunk.
class RawFile {
public:
    RawFile(const std::string& path, const Dims& dims, VoxelType type, std::uint64_t offset);
    ~RawFile();
    RawFile(const RawFile&) = delete;
    RawFile& operator=(const RawFile&) = delete;
    const std::string& path() const { return path_; }
    const Dims& dims() const { return dims_; }
    std::size_t voxels() const { return std::size_t(dims_[0]) * std::size_t(dims_[1]) * std::size_t(dims_[2]); }
    // Voxels [first, first + count) as floats into `out`, on up to `threads` threads (pread(2) at each
    // part's offset, integer types converted while in cache), each checked finite: Error naming the
    // first voxel that is not, or the short read.
    void read(std::size_t first, std::size_t count, float* out, int threads) const;
    // The same with the parts run by `runner` (threads: the number of parts at most).
    void read(std::size_t first, std::size_t count, float* out, int threads, const PartRunner& runner) const;

private:
    void read_part(std::size_t first, std::size_t count, float* out) const;
    std::string path_;
    Dims dims_;
    VoxelType type_;
    std::uint64_t offset_;
    int fd_ = -1;
};

// The volume for the GPU engine: a raw source opened and checked but left unread (Volume::unread),
// any other source read as by read_volume.
Volume open_for_device(const VolumeSource& source);
Volume read_raw(const std::string& path, const Dims& dims, VoxelType type, std::uint64_t offset = 0);
Volume read_tiff_stack(const std::string& path);
Volume read_hdf5_volume(const std::string& path, const std::string& dataset);

// Writes `bytes` bytes as a raw file (a temporary renamed into place, so no partial file is left);
// an existing `path` is refused unless `replace`.
void write_raw_file(const std::string& path, const void* data, std::size_t bytes, bool replace);

// Writes a TIFF stack of float32 pages (tests and examples; readers accept uint8/uint16/float32).
void write_tiff_stack(const std::string& path, const Volume& v, VoxelType type);

}  // namespace dvc
