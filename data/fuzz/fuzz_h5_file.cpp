// libFuzzer target of the typed HDF5 layer (h5::File), the reader the applications build on: any
// bytes as a file must give values or a batchsolve::Error (FileError) on every read below, never a
// crash, a hang, a sanitizer report or another exception.
#include <unistd.h>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "batchsolve_io/hdf5.hpp"

namespace {

namespace h5 = batchsolve::io::h5;

const std::string& scratch_path() {
    static const std::string path = [] {
        const char* dir = std::getenv("TMPDIR");
        return std::string(dir != nullptr ? dir : "/tmp") + "/fuzz_h5_file_" + std::to_string(::getpid()) + ".h5";
    }();
    return path;
}

// Each read on its own: one refusal must not hide the next read's behaviour. A memory cap keeps the
// fuzzer's inputs from asking for gigabytes legitimately.
template <class F>
void attempt(F&& read) {
    try {
        read();
    } catch (const batchsolve::Error&) {
    }
}

constexpr std::uint64_t max_bytes = std::uint64_t(64) << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FILE* f = std::fopen(scratch_path().c_str(), "wb");
    if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) std::abort();
    try {
        const h5::File file = h5::File::open(scratch_path());
        for (const char* name : {"/A", "/B", "/data", "/group/values", "/names"}) {
            attempt([&] { file.read<double>(name, nullptr, max_bytes); });
            attempt([&] { file.read<std::complex<float>>(name, nullptr, max_bytes); });
            attempt([&] { file.read<std::int64_t>(name, nullptr, max_bytes); });
            attempt([&] { file.read<std::uint8_t>(name, nullptr, max_bytes); });
            attempt([&] { file.read_strings(name); });
            attempt([&] { file.shape(name); });
        }
        for (const char* object : {"/", "/data", "/group"}) {
            for (const char* attr : {"format", "precision", "title", "count", "scale", "axes"}) {
                attempt([&] { file.has_attribute(object, attr); });
                attempt([&] { file.string_attribute(object, attr); });
                attempt([&] { file.int_attribute(object, attr); });
                attempt([&] { file.double_attribute(object, attr); });
                attempt([&] { file.doubles_attribute(object, attr); });
            }
        }
    } catch (const batchsolve::Error&) {
        // the file did not open: refused with a message
    }
    return 0;
}
