// libFuzzer target: the HDF5 ratings-file reader on arbitrary bytes; it must read a valid file or
// throw als::Error (file, dataset, reason), never crash.
#include <unistd.h>

#include <cstdint>
#include <string>

#include "ratings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    char path[] = "/tmp/fuzz_als_ratings_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return 0;
    if (write(fd, data, size) != ssize_t(size)) {
        close(fd), unlink(path);
        return 0;
    }
    close(fd);
    try {
        als::read_ratings(path);
    } catch (const als::Error&) {
    }
    unlink(path);
    return 0;
}
