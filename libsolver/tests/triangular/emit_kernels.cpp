// Writes the generated triangular kernels that the emulation test runs (every kind, precision and
// orientation at the default blocking, and a second blocking in d) as one C++ include: each kernel's
// text in a namespace of its own, and a table from kernel name to its host entry.
#include <cstdio>
#include <iostream>
#include <set>
#include <string>

#include "codegen/triangular/triangular.hpp"

using namespace batchsolve;
using namespace batchsolve::codegen::triangular;

int main() {
    std::set<std::string> names;
    std::string table;
    int id = 0;
    auto emit = [&](const TriangularKernelSpec& spec) {
        const batchsolve::codegen::KernelSource k = triangular_family().generate(spec);
        if (!names.insert(k.kernel_name).second) return;
        std::cout << "namespace bs_kernel_" << id << " {\n" << k.source << "}  // namespace bs_kernel_" << id << "\n\n";
        table += "    {\"" + k.kernel_name + "\", &bs_kernel_" + std::to_string(id) + "::bs_host_entry},\n";
        ++id;
    };
    for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z}) {
        for (KernelKind kind : {KernelKind::solve, KernelKind::multiply, KernelKind::invert})
            for (bool lower : {true, false}) {
                TriangularKernelSpec spec;
                spec.kind = kind, spec.precision = p, spec.lower = lower;
                emit(spec);  // the default blocking (4 columns per lane, 4 warps)
                spec.config.columns_per_thread = 2;
                emit(spec);  // the emulation test's small configuration
                spec.config.columns_per_thread = 4;
                if (p == Precision::d) {
                    spec.config.columns_per_thread = 3, spec.config.warps_per_block = 2;
                    emit(spec);
                }
            }
        TriangularKernelSpec panel;
        panel.kind = KernelKind::potrf_panel, panel.precision = p;
        emit(panel);
    }
    std::cout << "struct EmulatedKernel { const char* name; void (*entry)(void**); };\n"
              << "const EmulatedKernel kEmulatedKernels[] = {\n" << table << "};\n";
    return 0;
}
