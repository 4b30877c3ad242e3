// libFuzzer target: the text importer on arbitrary bytes, in each named format; it must import or
// throw als::Error, never crash.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "ratings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    char path[] = "/tmp/fuzz_als_import_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return 0;
    if (write(fd, data, size) != ssize_t(size)) {
        close(fd), unlink(path);
        return 0;
    }
    close(fd);
    for (const char* format : {"movielens-csv", "movielens-dat", "lastfm", "tsv"}) {
        for (bool skip_bad : {false, true}) {
            try {
                als::import_text(path, als::named_format(format), skip_bad);
            } catch (const als::Error&) {
            }
        }
    }
    unlink(path);
    return 0;
}
