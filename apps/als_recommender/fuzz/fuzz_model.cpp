// libFuzzer target: the ALS model-file reader (als::read_model: `als recommend`, `evaluate` and
// `train --resume` read models other runs or other people wrote) on arbitrary bytes; it must return a
// model or throw als::Error (file, dataset, reason), never crash, hang or trip a sanitizer.
#include <unistd.h>

#include <cstdint>
#include <string>

#include "model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    char path[] = "/tmp/fuzz_als_model_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return 0;
    if (write(fd, data, size) != ssize_t(size)) {
        close(fd), unlink(path);
        return 0;
    }
    close(fd);
    try {
        als::read_model(path);
    } catch (const als::Error&) {
    }
    unlink(path);
    return 0;
}
