// libFuzzer target of the raw volume reader: the first four bytes choose the dimensions (1..16
// each) and the element type, the rest is the file.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 4) return 0;
    const dvc::Dims dims{1 + data[0] % 16, 1 + data[1] % 16, 1 + data[2] % 16};
    const dvc::VoxelType type = data[3] % 3 == 0 ? dvc::VoxelType::uint8 : data[3] % 3 == 1 ? dvc::VoxelType::uint16 : dvc::VoxelType::float32;
    return dvc_fuzz::run(data + 4, size - 4, ".raw", [&](const std::string& path) { dvc::read_raw(path, dims, type); });
}
