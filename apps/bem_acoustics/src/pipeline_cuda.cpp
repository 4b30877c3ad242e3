// The CUDA ResidentDevice of pipeline.hpp: the matrix in device memory, assembled by
// assembly_cuda.cu's kernels, solved by sysv_mixed (pipeline.cpp) or cuSOLVER in place
// (solver_cuda.cu), multiplied there for the residual check.
#include "pipeline.hpp"

#include <batchsolve/batchsolve.hpp>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace bem {
namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("device-resident solve: ") + what + ": " + cudaGetErrorString(e));
}

class CudaResidentDevice final : public ResidentDevice {
public:
    explicit CudaResidentDevice(int device) : device_(device), ctx_(batchsolve::Backend::cuda, device) {
        check(cudaSetDevice(device_), "cudaSetDevice");
        cudaDeviceProp prop{};
        check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
        name_ = std::string(prop.name) + " (device " + std::to_string(device_) + ")";
    }
    ~CudaResidentDevice() override {
        if (a_) cudaFree(a_);
    }
    std::string name() const override { return name_; }
    bool is_gpu() const override { return true; }
    batchsolve::Context& context() override { return ctx_; }
    std::uint64_t free_bytes() override {
        std::size_t free_b = 0, total_b = 0;
        check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        return free_b;
    }
    std::uint64_t used_bytes() override {
        std::size_t free_b = 0, total_b = 0;
        check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        return total_b - free_b;
    }
    std::uint64_t held_bytes() override { return std::uint64_t(order_) * order_ * sizeof(cd) + ctx_.workspace_size(); }
    std::uint64_t solver_workspace_bytes(SolveMethod m, std::size_t n) override {
        const std::uint64_t vectors = std::uint64_t(n) * (2 * sizeof(cd) + sizeof(int));  // b, x, pivots
        if (m == SolveMethod::gpu_ldlt)
            return vectors + batchsolve::sysv_mixed_workspace_size<cd>(batchsolve::Symmetry::symmetric, int(n), 1, batchsolve::SysvOptions{}, ctx_);
        // cuSOLVER's buffers (solver.cpp's gpu_solve_bytes without the matrix it counts there):
        // getrf's panels, or the IRS solvers' low-precision copy of A.
        return gpu_solve_bytes(m, n) - std::uint64_t(n) * n * sizeof(cd);
    }
    cd* matrix(std::size_t n) override {
        if (n != order_) {
            if (a_) cudaFree(a_);
            a_ = nullptr;
            order_ = 0;
            check(cudaMalloc(&a_, n * n * sizeof(cd)), "cudaMalloc (the matrix)");
            order_ = n;
        }
        return a_;
    }
    double assemble(Formulation f, bool burton_miller, const Mesh& mesh, const Geometry& g, double k, bool lower_only, cd* a,
                    GpuAssemblyTiming* timing) override {
        check(cudaSetDevice(device_), "cudaSetDevice");
        if (burton_miller) {
            if (f == Formulation::soft_p0) return assemble_p0_burton_miller_soft_device(g, k, {}, a, timing);
            if (f == Formulation::hard_p1) return assemble_p1_burton_miller_hard_device(g, mesh.vertex_count(), k, {}, a, timing);
            throw std::invalid_argument(std::string("--formulation: no Burton-Miller operator for ") + to_string(f));
        }
        if (f == Formulation::soft_p0) return assemble_p0_single_layer_device(g, k, {}, lower_only, a, timing);
        return assemble_p1_device(g, mesh.vertex_count(), k, f == Formulation::hard_p1 ? P1Operator::hypersingular : P1Operator::single_layer, {},
                                  lower_only, a, timing);
    }
    void copy_columns(const cd* a, std::size_t n, std::size_t j0, std::size_t count, cd* host) override {
        check(cudaMemcpy(host, a + j0 * n, n * count * sizeof(cd), cudaMemcpyDeviceToHost), "copy columns to the host");
    }
    SolveResult solve_lu_in_place(SolveMethod m, std::size_t n, cd* a, const std::vector<cd>& b) override {
        return solve_gpu_in_place(m, n, a, b);
    }
    void residual_parts(std::size_t n, const cd* a, bool lower_symmetric, const std::vector<cd>& x, std::vector<cd>& ax,
                        std::vector<double>& row_abs) override {
        ctx_.synchronize();
        check(cudaDeviceSynchronize(), "before the residual");
        matvec_device(n, a, lower_symmetric, x.data(), ax.data(), row_abs.data());
    }

private:
    int device_;
    batchsolve::Context ctx_;
    std::string name_;
    cd* a_ = nullptr;
    std::size_t order_ = 0;
};

}  // namespace

std::unique_ptr<ResidentDevice> make_cuda_resident_device(int device) {
    if (!gpu_available()) throw std::runtime_error("device-resident solve: no CUDA device");
    return std::make_unique<CudaResidentDevice>(device);
}

}  // namespace bem
