// CPU-only builds: the GPU entry points of assembly.hpp and solver.hpp say that CUDA is missing.
#include <stdexcept>

#include "assembly.hpp"
#include "pipeline.hpp"
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

double assemble_p0_single_layer_device(const Geometry&, double, const QuadratureOptions&, bool, cd*, GpuAssemblyTiming*) {
    throw std::runtime_error("GPU assembly: bem_acoustics was built without CUDA");
}

double assemble_p1_device(const Geometry&, std::size_t, double, P1Operator, const QuadratureOptions&, bool, cd*, GpuAssemblyTiming*) {
    throw std::runtime_error("GPU assembly: bem_acoustics was built without CUDA");
}

double assemble_p0_burton_miller_soft_device(const Geometry&, double, const QuadratureOptions&, cd*, GpuAssemblyTiming*) {
    throw std::runtime_error("GPU assembly: bem_acoustics was built without CUDA");
}

double assemble_p1_burton_miller_hard_device(const Geometry&, std::size_t, double, const QuadratureOptions&, cd*, GpuAssemblyTiming*) {
    throw std::runtime_error("GPU assembly: bem_acoustics was built without CUDA");
}

void matvec_device(std::size_t, const cd*, bool, const cd*, cd*, double*) {
    throw std::runtime_error("GPU residual: bem_acoustics was built without CUDA");
}

std::unique_ptr<ResidentDevice> make_cuda_resident_device(int) {
    throw std::runtime_error("device-resident solve: bem_acoustics was built without CUDA");
}

SolveResult solve_gpu_in_place(SolveMethod method, std::size_t, cd*, const std::vector<cd>&) {
    throw std::runtime_error(std::string("solver ") + to_string(method) + ": bem_acoustics was built without CUDA");
}

SolveResult solve_gpu(SolveMethod method, const Matrix&, const std::vector<cd>&) {
    throw std::runtime_error(std::string("solver ") + to_string(method) + ": bem_acoustics was built without CUDA");
}

}  // namespace bem
