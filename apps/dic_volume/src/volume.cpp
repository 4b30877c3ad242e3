// Volume readers (HDF5, raw, TIFF stacks) and the TIFF writer; every error names the file.
#include "volume.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <unistd.h>

#include <cmath>

#include <algorithm>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <thread>

#include "batchsolve_io/hdf5.hpp"

namespace dvc {

VoxelType parse_voxel_type(const std::string& text) {
    if (text == "uint8" || text == "u8") return VoxelType::uint8;
    if (text == "uint16" || text == "u16") return VoxelType::uint16;
    if (text == "float32" || text == "f32" || text == "float") return VoxelType::float32;
    throw Error("--dtype: '" + text + "' is not one of uint8, uint16, float32");
}

const char* to_string(VoxelType t) {
    switch (t) {
    case VoxelType::uint8: return "uint8";
    case VoxelType::uint16: return "uint16";
    case VoxelType::float32: return "float32";
    }
    return "?";
}

std::size_t bytes_of(VoxelType t) { return t == VoxelType::uint8 ? 1 : t == VoxelType::uint16 ? 2 : 4; }

std::uint64_t checked_volume_bytes(const Dims& d, std::uint64_t element_bytes, const std::string& what) {
    std::uint64_t total = element_bytes;
    for (auto n : d) {
        if (n < 1) throw Error(what + ": dimensions " + dims_text(d) + " must all be at least 1");
        if (total > std::numeric_limits<std::uint64_t>::max() / std::uint64_t(n))
            throw Error(what + ": dimensions " + dims_text(d) + " overflow a 64-bit size");
        total *= std::uint64_t(n);
    }
    // Voxel indices are computed in std::int64_t and the data lives in one std::vector<float>.
    if (total / element_bytes > std::uint64_t(1) << 40)
        throw Error(what + ": dimensions " + dims_text(d) + " exceed 2^40 voxels");
    return total;
}

Dims parse_dims(const std::string& text, const std::string& what) {
    std::string t = text;
    std::replace(t.begin(), t.end(), ',', 'x');
    Dims d{0, 0, 0};
    std::size_t start = 0;
    for (int i = 0; i < 3; ++i) {
        const std::size_t end = t.find('x', start);
        if ((i < 2) != (end != std::string::npos))
            throw Error(what + ": '" + text + "' is not three dimensions z x y x x (e.g. 192x192x192)");
        const std::string part = t.substr(start, end == std::string::npos ? std::string::npos : end - start);
        try {
            std::size_t used = 0;
            d[i] = std::stoll(part, &used);
            if (used != part.size()) throw std::invalid_argument(part);
        } catch (const std::exception&) {
            throw Error(what + ": '" + part + "' in '" + text + "' is not an integer");
        }
        start = end + 1;
    }
    checked_volume_bytes(d, 1, what);
    return d;
}

std::string dims_text(const Dims& d) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

VolumeSource parse_volume_source(const std::string& text) {
    VolumeSource s;
    const auto colon = text.find(":/");
    if (colon != std::string::npos) {
        s.path = text.substr(0, colon);
        s.dataset = text.substr(colon + 1);
    } else {
        s.path = text;
    }
    return s;
}

namespace {

std::string lower_extension(const std::string& path) {
    const auto dot = path.rfind('.');
    const auto slash = path.rfind('/');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string ext = path.substr(dot + 1);
    for (auto& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
    return ext;
}

template <class T>
void convert_to_float(const unsigned char* bytes, std::size_t count, float* out) {
    for (std::size_t i = 0; i < count; ++i) {
        T v;
        std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));
        out[i] = float(v);
    }
}

void require_finite(const Volume& v, const std::string& path) {
    for (std::size_t i = 0; i < v.data.size(); ++i)
        if (!std::isfinite(v.data[i])) {
            const std::size_t x = i % v.nx(), y = (i / v.nx()) % v.ny(), z = i / (v.nx() * v.ny());
            throw Error(path + ": voxel (z, y, x) = (" + std::to_string(z) + ", " + std::to_string(y) + ", " +
                        std::to_string(x) + ") is not a finite number");
        }
}

}  // namespace

namespace {

// Raw files are read in chunks by all threads at once (pread(2) at the chunk's offset straight into
// the volume for float32, into a per-thread buffer converted in place for the integer types): from
// the page cache this runs at memory-copy speed instead of one thread's, and the finite check and
// the conversion happen while the chunk is in cache.
constexpr std::size_t kRawChunkBytes = std::size_t(8) << 20;

}  // namespace

RawFile::RawFile(const std::string& path, const Dims& dims, VoxelType type, std::uint64_t offset)
    : path_(path), dims_(dims), type_(type), offset_(offset) {
    const std::uint64_t bytes = checked_volume_bytes(dims, bytes_of(type), path + ": --dims");
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(path + ": cannot open for reading (" + std::strerror(errno) + ")");
    try {
        struct stat st{};
        if (::fstat(fd_, &st) != 0) throw Error(path + ": cannot read its size (" + std::strerror(errno) + ")");
        if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
        const std::uint64_t size = std::uint64_t(st.st_size);
        if (size < offset || size - offset != bytes) {
            std::ostringstream m;
            m << path << ": a raw " << to_string(type) << " volume of " << dims_text(dims) << " needs " << bytes
              << " bytes after an offset of " << offset << ", the file has " << size
              << (size < offset + bytes ? " (truncated, or wrong dims/dtype)" : " (too long: wrong dims/dtype?)");
            throw Error(m.str());
        }
    } catch (...) {
        ::close(fd_);
        throw;
    }
    ::posix_fadvise(fd_, off_t(offset), off_t(bytes), POSIX_FADV_SEQUENTIAL);
}

RawFile::~RawFile() {
    if (fd_ >= 0) ::close(fd_);
}

void RawFile::read_part(std::size_t first, std::size_t count, float* out) const {
    const std::size_t element = bytes_of(type_);
    const std::size_t chunk_voxels = kRawChunkBytes / 4;
    // Integer types pass through a buffer of one chunk; float32 lands in place.
    std::vector<unsigned char> buffer(type_ == VoxelType::float32 ? 0 : std::min(count, chunk_voxels) * element);
    for (std::size_t at = 0; at < count; at += chunk_voxels) {
        const std::size_t n = std::min(chunk_voxels, count - at);
        unsigned char* target = type_ == VoxelType::float32 ? reinterpret_cast<unsigned char*>(out + at) : buffer.data();
        std::size_t done = 0;
        while (done < n * element) {
            const std::uint64_t where = offset_ + (first + at) * element + done;
            const ssize_t got = ::pread(fd_, target + done, n * element - done, off_t(where));
            if (got <= 0)
                throw Error(path_ + ": read failed after " + std::to_string(where - offset_) + " bytes" +
                            (got < 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string(" (the file shrank)")));
            done += std::size_t(got);
        }
        float* o = out + at;
        if (type_ == VoxelType::uint8) convert_to_float<std::uint8_t>(buffer.data(), n, o);
        else if (type_ == VoxelType::uint16) convert_to_float<std::uint16_t>(buffer.data(), n, o);
        else
            for (std::size_t i = 0; i < n; ++i)
                if (!std::isfinite(o[i])) {
                    const std::size_t v = first + at + i;
                    const std::size_t x = v % std::size_t(dims_[2]), y = (v / std::size_t(dims_[2])) % std::size_t(dims_[1]),
                                      z = v / (std::size_t(dims_[2]) * std::size_t(dims_[1]));
                    throw Error(path_ + ": voxel (z, y, x) = (" + std::to_string(z) + ", " + std::to_string(y) + ", " + std::to_string(x) +
                                ") is not a finite number");
                }
    }
}

void RawFile::read(std::size_t first, std::size_t count, float* out, int threads) const {
    read(first, count, out, threads, [](std::size_t parts, const std::function<void(std::size_t)>& part) {
        std::vector<std::thread> pool;
        for (std::size_t p = 1; p < parts; ++p) pool.emplace_back(part, p);
        part(0);
        for (auto& t : pool) t.join();
    });
}

void RawFile::read(std::size_t first, std::size_t count, float* out, int threads, const PartRunner& runner) const {
    if (first > voxels() || count > voxels() - first) throw Error(path_ + ": a read beyond the volume's voxels");
    const std::size_t parts = std::size_t(std::max(1, std::min<int>(threads, int((count + 65535) / 65536))));
    if (parts == 1) return read_part(first, count, out);
    // Parts in voxel order; the error of the lowest part that failed is the one reported (the
    // first non-finite voxel, as one thread would find it).
    const std::size_t per = (count + parts - 1) / parts;
    std::vector<std::string> errors(parts);
    const std::function<void(std::size_t)> work = [&](std::size_t p) {
        const std::size_t a = p * per, n = a < count ? std::min(per, count - a) : 0;
        try {
            if (n) read_part(first + a, n, out + a);
        } catch (const Error& e) {
            errors[p] = e.what();
        }
    };
    runner(parts, work);
    for (const auto& e : errors)
        if (!e.empty()) throw Error(e);
}

Volume read_raw(const std::string& path, const Dims& dims, VoxelType type, std::uint64_t offset) {
    const RawFile file(path, dims, type, offset);
    const std::uint64_t bytes = std::uint64_t(file.voxels()) * bytes_of(type);
    if (bytes > batchsolve::io::h5::available_host_bytes() / 2)
        throw Error(path + ": " + std::to_string(bytes) + " bytes do not fit in the available memory");
    Volume v;
    v.dims = dims;
    v.data.resize(v.voxels());
    // All threads at once, a chunk each (from the page cache this runs at memory-copy speed
    // instead of one thread's); the lowest failing chunk's error is reported.
    const std::size_t chunk_voxels = kRawChunkBytes / 4;
    const std::int64_t chunks = std::int64_t((v.voxels() + chunk_voxels - 1) / chunk_voxels);
    std::int64_t failed_chunk = chunks;
    std::string failure;
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const std::size_t first = std::size_t(c) * chunk_voxels, count = std::min(chunk_voxels, v.voxels() - first);
        try {
            file.read(first, count, v.data.data() + first, 1);
        } catch (const Error& e) {
#pragma omp critical(dvc_raw_failure)
            if (c < failed_chunk) failed_chunk = c, failure = e.what();
        }
    }
    if (failed_chunk < chunks) throw Error(failure);
    return v;
}

Volume open_for_device(const VolumeSource& s) {
    const std::string ext = lower_extension(s.path);
    if (ext == "h5" || ext == "hdf5" || ext == "hdf" || ext == "tif" || ext == "tiff" || s.raw_dims[0] == 0) return read_volume(s);
    Volume v;
    v.dims = s.raw_dims;
    v.unread = std::make_shared<const RawFile>(s.path, s.raw_dims, s.raw_type, s.raw_offset);
    return v;
}

void write_raw_file(const std::string& path, const void* data, std::size_t bytes, bool replace) {
    if (!replace && std::filesystem::exists(path)) throw Error(path + ": exists (--force replaces it)");
    const std::string temporary = path + ".partial";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) throw Error(temporary + ": cannot create (" + std::strerror(errno) + ")");
        out.write(static_cast<const char*>(data), std::streamsize(bytes));
        out.close();
        if (!out) {
            std::filesystem::remove(temporary);
            throw Error(path + ": write failed");
        }
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::filesystem::remove(temporary);
        throw Error(path + ": cannot rename the written file into place (" + ec.message() + ")");
    }
}

namespace {
struct TiffCloser {
    void operator()(TIFF* t) const { TIFFClose(t); }
};
// libtiff prints warnings and errors to stderr by default; we report our own messages instead.
void quiet_tiff_handler(const char*, const char*, va_list) {}
}  // namespace

Volume read_tiff_stack(const std::string& path) {
    TIFFSetErrorHandler(quiet_tiff_handler);
    TIFFSetWarningHandler(quiet_tiff_handler);
    std::unique_ptr<TIFF, TiffCloser> tif(TIFFOpen(path.c_str(), "r"));
    if (!tif) throw Error(path + ": not a readable TIFF file");
    // Count and check every page first, so that a bad page fails before any allocation.
    std::uint32_t width = 0, height = 0;
    std::uint16_t bits = 0, format = SAMPLEFORMAT_UINT, samples = 1;
    std::int64_t pages = 0;
    do {
        std::uint32_t w = 0, h = 0;
        std::uint16_t b = 0, f = SAMPLEFORMAT_UINT, s = 1;
        if (!TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &h))
            throw Error(path + ": page " + std::to_string(pages) + ": no image width/length");
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_BITSPERSAMPLE, &b);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLEFORMAT, &f);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLESPERPIXEL, &s);
        if (s != 1) throw Error(path + ": page " + std::to_string(pages) + ": " + std::to_string(s) + " samples per pixel (a grey-level stack needs 1)");
        const bool ok = (f == SAMPLEFORMAT_UINT && (b == 8 || b == 16)) || (f == SAMPLEFORMAT_IEEEFP && b == 32);
        if (!ok) throw Error(path + ": page " + std::to_string(pages) + ": " + std::to_string(b) + "-bit samples of format " + std::to_string(f) + " (uint8, uint16 or float32 expected)");
        if (pages == 0) width = w, height = h, bits = b, format = f, samples = s;
        else if (w != width || h != height || b != bits || f != format)
            throw Error(path + ": page " + std::to_string(pages) + " is " + std::to_string(h) + "x" + std::to_string(w) + " with " + std::to_string(b) + "-bit samples, page 0 is " + std::to_string(height) + "x" + std::to_string(width) + " with " + std::to_string(bits));
        ++pages;
        // TIFFReadDirectory fails alike at the end and on a directory cut off by truncation: only
        // the last directory (next offset 0) may end the stack.
        if (TIFFLastDirectory(tif.get())) break;
        if (!TIFFReadDirectory(tif.get()))
            throw Error(path + ": page " + std::to_string(pages) + " cannot be read (truncated or corrupt file)");
    } while (true);
    (void)samples;
    Volume v;
    v.dims = {pages, std::int64_t(height), std::int64_t(width)};
    const std::uint64_t bytes = checked_volume_bytes(v.dims, sizeof(float), path);
    if (bytes > batchsolve::io::h5::available_host_bytes() / 2)
        throw Error(path + ": " + std::to_string(bytes) + " bytes do not fit in the available memory");
    // A crafted header can declare gigabytes of samples in a file of a few bytes (found by the fuzzer):
    // no real stack compresses beyond kMaxTiffCompression to 1, so a larger claim is refused before
    // the allocation. Pages are addressed by a 16-bit directory index.
    constexpr std::uint64_t kMaxTiffCompression = 1024;
    const std::uint64_t sample_bytes = std::uint64_t(pages) * height * width * (bits / 8);
    const std::uint64_t file_bytes = std::filesystem::file_size(path);
    if (sample_bytes / kMaxTiffCompression > file_bytes)
        throw Error(path + ": the pages declare " + std::to_string(sample_bytes) + " bytes of samples in a file of " +
                    std::to_string(file_bytes) + " bytes (truncated or corrupt)");
    if (pages > 65535) throw Error(path + ": " + std::to_string(pages) + " pages (at most 65535 are read)");
    v.data.resize(v.voxels());
    const std::size_t bps = bits / 8;
    std::vector<unsigned char> line(std::max<tmsize_t>(TIFFScanlineSize(tif.get()), tmsize_t(width * bps)));
    for (std::int64_t z = 0; z < pages; ++z) {
        if (!TIFFSetDirectory(tif.get(), std::uint16_t(z))) throw Error(path + ": page " + std::to_string(z) + " cannot be read");
        for (std::uint32_t y = 0; y < height; ++y) {
            if (TIFFReadScanline(tif.get(), line.data(), y) < 0)
                throw Error(path + ": page " + std::to_string(z) + ", row " + std::to_string(y) + ": truncated or corrupt");
            float* out = &v.data[v.index(z, y, 0)];
            if (bits == 8) convert_to_float<std::uint8_t>(line.data(), width, out);
            else if (bits == 16) convert_to_float<std::uint16_t>(line.data(), width, out);
            else convert_to_float<float>(line.data(), width, out);
        }
    }
    if (format == SAMPLEFORMAT_IEEEFP) require_finite(v, path);
    return v;
}

void write_tiff_stack(const std::string& path, const Volume& v, VoxelType type) {
    std::unique_ptr<TIFF, TiffCloser> tif(TIFFOpen(path.c_str(), "w"));
    if (!tif) throw Error(path + ": cannot create the TIFF file");
    const std::size_t bps = bytes_of(type);
    std::vector<unsigned char> line(std::size_t(v.nx()) * bps);
    for (std::int64_t z = 0; z < v.nz(); ++z) {
        TIFFSetField(tif.get(), TIFFTAG_IMAGEWIDTH, std::uint32_t(v.nx()));
        TIFFSetField(tif.get(), TIFFTAG_IMAGELENGTH, std::uint32_t(v.ny()));
        TIFFSetField(tif.get(), TIFFTAG_BITSPERSAMPLE, std::uint16_t(bps * 8));
        TIFFSetField(tif.get(), TIFFTAG_SAMPLESPERPIXEL, std::uint16_t(1));
        TIFFSetField(tif.get(), TIFFTAG_SAMPLEFORMAT, type == VoxelType::float32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT);
        TIFFSetField(tif.get(), TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
        TIFFSetField(tif.get(), TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        TIFFSetField(tif.get(), TIFFTAG_ROWSPERSTRIP, std::uint32_t(v.ny()));
        for (std::int64_t y = 0; y < v.ny(); ++y) {
            for (std::int64_t x = 0; x < v.nx(); ++x) {
                const float f = v.at(z, y, x);
                if (type == VoxelType::uint8) line[x] = std::uint8_t(std::clamp(std::lround(f), 0L, 255L));
                else if (type == VoxelType::uint16) {
                    const std::uint16_t u = std::uint16_t(std::clamp(std::lround(f), 0L, 65535L));
                    std::memcpy(&line[2 * x], &u, 2);
                } else std::memcpy(&line[4 * x], &f, 4);
            }
            if (TIFFWriteScanline(tif.get(), line.data(), std::uint32_t(y), 0) < 0)
                throw Error(path + ": writing page " + std::to_string(z) + " failed");
        }
        TIFFWriteDirectory(tif.get());
    }
}

Volume read_hdf5_volume(const std::string& path, const std::string& dataset_name) {
    const std::string dataset = dataset_name.empty() ? "/volume" : dataset_name;
    auto file = batchsolve::io::h5::File::open(path);
    if (!file.exists(dataset)) throw Error(path + ": " + dataset + ": no such dataset");
    const auto shape = file.shape(dataset);
    if (shape.size() != 3)
        throw Error(path + ": " + dataset + ": shape " + batchsolve::io::h5::shape_text(shape) + " is not three-dimensional (z, y, x)");
    Volume v;
    for (int i = 0; i < 3; ++i) {
        if (shape[i] > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
            throw Error(path + ": " + dataset + ": dimension too large");
        v.dims[i] = std::int64_t(shape[i]);
    }
    checked_volume_bytes(v.dims, sizeof(float), path + ": " + dataset);
    v.data = file.read_exact<float>(dataset, shape);
    if (file.has_attribute(dataset, "voxel_size")) {
        v.voxel_size = file.double_attribute(dataset, "voxel_size");
        if (!(v.voxel_size > 0) || !std::isfinite(v.voxel_size))
            throw Error(path + ": " + dataset + ": attribute voxel_size must be a positive number");
    }
    require_finite(v, path + ": " + dataset);
    return v;
}

Volume read_volume(const VolumeSource& s) {
    const std::string ext = lower_extension(s.path);
    if (ext == "h5" || ext == "hdf5" || ext == "hdf") return read_hdf5_volume(s.path, s.dataset);
    if (ext == "tif" || ext == "tiff") return read_tiff_stack(s.path);
    if (s.raw_dims[0] == 0)
        throw Error(s.path + ": a raw volume needs its dimensions (--dims ZxYxX) and type (--dtype)");
    return read_raw(s.path, s.raw_dims, s.raw_type, s.raw_offset);
}

}  // namespace dvc
