// CPU-only builds: the GPU entry points of assembly.hpp and solver.hpp say that CUDA is missing.
#include <stdexcept>

#include "assembly.hpp"
#include "solver.hpp"

namespace bem {

bool gpu_available() { return false; }

Matrix assemble_p0_single_layer_gpu(const Geometry&, double, const QuadratureOptions&, GpuAssemblyTiming*) {
    throw std::runtime_error("GPU assembly: bem_acoustics was built without CUDA");
}

Matrix assemble_p1_gpu(const Mesh&, const Geometry&, double, P1Operator, const QuadratureOptions&, GpuAssemblyTiming*) {
    throw std::runtime_error("GPU assembly: bem_acoustics was built without CUDA");
}

std::vector<std::complex<float>> assemble_p0_lower_single_gpu(const Geometry&, double, const QuadratureOptions&, GpuAssemblyTiming*) {
    throw std::runtime_error("GPU assembly: bem_acoustics was built without CUDA");
}

double assemble_p0_columns_gpu(const Geometry&, double, const QuadratureOptions&, const ColumnBlock&, cd*) {
    throw std::runtime_error("GPU assembly: bem_acoustics was built without CUDA");
}

double assemble_p1_columns_gpu(const Geometry&, std::size_t, double, P1Operator, const QuadratureOptions&, const ColumnBlock&, cd*) {
    throw std::runtime_error("GPU assembly: bem_acoustics was built without CUDA");
}

void column_block_matvec_gpu(const ColumnBlock&, const cd*, const cd*, cd*, double*) {
    throw std::runtime_error("GPU residual: bem_acoustics was built without CUDA");
}

SolveResult solve_gpu(SolveMethod method, const Matrix&, const std::vector<cd>&) {
    throw std::runtime_error(std::string("solver ") + to_string(method) + ": bem_acoustics was built without CUDA");
}

}  // namespace bem
