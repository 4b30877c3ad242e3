// A generated kernel as the generators hand it over: its complete CUDA C++ text, its name and the
// NVRTC options it needs. The CUDA backend compiles it (cuda/jit); tests compile it as host C++.
#pragma once

#include <string>
#include <vector>

namespace batchsolve::codegen {

// Complete CUDA C++ source (no #include of CUDA headers needed beyond what NVRTC provides; the
// kernel is `extern "C" __global__`, so its name is not mangled) and the kernel's name.
struct KernelSource {
    std::string source;
    std::string kernel_name;
    std::vector<std::string> options;  // extra NVRTC options, e.g. "--use_fast_math"
    // NVRTC's name of the source, recorded in line information; empty: kernel_name + ".cu"
    std::string program_name;
};

}  // namespace batchsolve::codegen
