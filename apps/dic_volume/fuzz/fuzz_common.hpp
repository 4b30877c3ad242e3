// Shared by the dvc reader fuzzers: the input bytes go to a temporary file that the reader opens.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "volume.hpp"

namespace dvc_fuzz {

inline std::string write_temporary(const std::uint8_t* data, std::size_t size, const char* suffix) {
    std::string path = std::string("/tmp/dvc_fuzz_XXXXXX") + suffix;
    const int fd = mkstemps(path.data(), int(std::string(suffix).size()));
    if (fd < 0) std::abort();
    for (std::size_t done = 0; done < size;) {
        const ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) std::abort();
        done += std::size_t(n);
    }
    close(fd);
    return path;
}

// Runs `read` on the bytes; the reader must succeed or throw dvc::Error (or the HDF5 layer's
// FileError, a std::runtime_error); anything else (a crash, another exception) is a finding.
template <class Read>
int run(const std::uint8_t* data, std::size_t size, const char* suffix, Read read) {
    const std::string path = write_temporary(data, size, suffix);
    try {
        read(path);
    } catch (const std::runtime_error&) {
    }
    std::remove(path.c_str());
    return 0;
}

}  // namespace dvc_fuzz
