// dvc: digital volume correlation on batched 12x12 Cholesky solves (see apps/dic_volume/README.md).
// The program's entry, in libdvc_app.so: the dvc executable (launcher.cpp) loads it after starting
// the GPU context.
#include "commands.hpp"

extern "C" __attribute__((visibility("default"))) int dvc_main(int argc, char** argv) {
    return dvc::run_process(std::vector<std::string>(argv + 1, argv + argc));
}
