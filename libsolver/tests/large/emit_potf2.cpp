// Writes the fused POTF2 kernels the emulation test runs (both strip factorisations, ib 8/16/32, s
// and d, lower and upper, block resident in shared memory or not) as one C++ include: each kernel's text in a namespace of its own, and a
// table from kernel name to its host entry.
#include <iostream>
#include <set>
#include <string>

#include "codegen/large/potf2.hpp"

using namespace batchsolve;
using namespace batchsolve::codegen::large;

int main() {
    std::set<std::string> names;
    std::string table;
    int id = 0;
    for (Precision p : {Precision::s, Precision::d})
        for (Uplo u : {Uplo::lower, Uplo::upper})
            for (StripFactor strip : {StripFactor::columns, StripFactor::warp})
                for (auto [capacity, ib] : {std::pair{32, 8}, std::pair{64, 16}, std::pair{96, 32}}) {
                    Potf2Spec spec;
                    spec.precision = p, spec.uplo = u, spec.capacity = capacity;
                    spec.config.ib = ib, spec.config.strip = strip;
                    spec.config = potf2_family().default_config(spec);
                    for (bool resident : {false, true}) {  // the default is resident at these capacities
                        spec.config.resident = resident;
                        const codegen::KernelSource k = potf2_family().generate(spec);
                        if (!names.insert(k.kernel_name).second) continue;
                        std::cout << "namespace bs_kernel_" << id << " {\n" << k.source << "}  // namespace bs_kernel_" << id << "\n\n";
                        table += "    {\"" + k.kernel_name + "\", &bs_kernel_" + std::to_string(id) + "::bs_host_entry},\n";
                        ++id;
                    }
                }
    std::cout << "struct EmulatedKernel { const char* name; void (*entry)(void**); };\n"
              << "const EmulatedKernel kEmulatedKernels[] = {\n" << table << "};\n";
    return 0;
}
