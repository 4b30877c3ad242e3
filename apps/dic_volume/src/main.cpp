// dvc: digital volume correlation on batched 12x12 Cholesky solves (see apps/dic_volume/README.md).
#include "commands.hpp"

int main(int argc, char** argv) { return dvc::run_process(std::vector<std::string>(argv + 1, argv + argc)); }
