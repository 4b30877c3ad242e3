// libFuzzer target of the HDF5 volume reader (dataset /volume).
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return dvc_fuzz::run(data, size, ".h5", [](const std::string& path) { dvc::read_hdf5_volume(path, "/volume"); });
}
