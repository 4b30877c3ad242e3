// libFuzzer target of the TIFF stack reader.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return dvc_fuzz::run(data, size, ".tif", [](const std::string& path) { dvc::read_tiff_stack(path); });
}
