// libFuzzer target for the STL mesh reader: the bytes become a temporary .stl file; the reader
// must either succeed or throw MeshError, never crash.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "mesh.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    char name[] = "/tmp/fuzz_bem_XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) return 0;
    close(fd);
    const std::string path = std::string(name) + ".stl";
    {
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    }
    try {
        bem::Mesh mesh = bem::read_stl(path);
        bem::check_surface(mesh);
    } catch (const bem::MeshError&) {
    }
    std::remove(path.c_str());
    std::remove(name);
    return 0;
}
