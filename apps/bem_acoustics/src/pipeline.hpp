// The device-resident pipeline of `bem solve --assembly gpu` with a GPU solver: the matrix is
// assembled into device memory, solved there, and the residual check is computed there; only the
// right-hand side goes up and x, A x and the row sums of |A| (n entries each) come back, so host
// memory stays O(n). --write-matrix is the one thing that copies the matrix out (in column blocks).
//
// Storage per solver (n the order):
//  * gpu-ldlt (sysv_mixed): reads only the lower triangle and never writes A, so the assembly writes
//    the lower triangle only (no mirror pass) and the residual is computed afterwards from the same A
//    by a symmetric lower-triangle product: no second copy of A, no second assembly.
//  * gpu-lu, gpu-irs-c, gpu-irs-y (cuSOLVER): need the full matrix and overwrite it with the factor
//    (ZCgesv/ZYgesv when they fall back), so after the solve A is assembled again into the same memory
//    (no second copy: one more assembly, ~10x cheaper than the LU at these sizes) and multiplied.
// Memory is planned before anything is allocated (plan_resident_memory) and a system that does not
// fit is refused naming the sizes and the device's free memory (several GPUs: --devices).
//
// The pipeline logic (run_resident) is backend-neutral: a ResidentDevice does the device work. The
// CUDA one is pipeline_cuda.cu; the host one (host memory standing in for the device, cpu-lu and
// cpu-ldlt) runs the same logic in CPU-only tests.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "physics.hpp"
#include "solver.hpp"

namespace batchsolve {
class Context;
}

namespace bem {

// What one system needs on the device, in bytes.
struct MemoryPlan {
    std::size_t order = 0;
    std::uint64_t matrix = 0;     // A: n x n complex double (lower triangle used or all of it)
    std::uint64_t solver = 0;     // the solver's workspace (sysv_mixed: its single-precision copy and pivoted fallback; cuSOLVER: getrf/IRS buffers, pivots)
    std::uint64_t residual = 0;   // the residual check's vectors (x, A x, row sums); A itself is reused
    std::uint64_t geometry = 0;   // mesh geometry, quadrature points, singular pair lists, vectors b and x
    std::uint64_t margin = 0;     // allowance for library handles and allocation granularity
    std::uint64_t total() const { return matrix + solver + residual + geometry + margin; }
    std::string describe() const;  // "A 12.3 GiB + solver 6.1 GiB + residual 0.0 GiB + geometry 0.1 GiB + margin 0.3 GiB = 18.8 GiB"
};

// Whether the solver reads only the lower triangle of a complex-symmetric A and leaves A intact.
bool resident_lower_only(SolveMethod m);
// The methods the pipeline runs: cuSOLVER's and the library's on the GPU; cpu-lu and cpu-ldlt on
// the host device (tests).
bool resident_supports(SolveMethod m, bool gpu_device);

class ResidentDevice {
public:
    virtual ~ResidentDevice() = default;
    virtual std::string name() const = 0;
    virtual bool is_gpu() const = 0;
    virtual batchsolve::Context& context() = 0;
    virtual std::uint64_t free_bytes() = 0;  // available now for this run
    virtual std::uint64_t used_bytes() = 0;  // in use now (CUDA: total - free, everything on the device)
    virtual std::uint64_t held_bytes() = 0;  // what this object holds already (the matrix, the solver workspace): counted in a plan again
    // The solver's workspace bytes for order n (queried from the libraries where they can say).
    virtual std::uint64_t solver_workspace_bytes(SolveMethod m, std::size_t n) = 0;
    // The device matrix of order n (allocated on first use, kept for the next frequency).
    virtual cd* matrix(std::size_t n) = 0;
    // Assembles the formulation's operator (Burton–Miller when asked) into a (order n, lda n):
    // lower_only writes entries i >= j only. Returns the device seconds of the assembly.
    virtual double assemble(Formulation f, bool burton_miller, const Mesh& mesh, const Geometry& g, double k, bool lower_only, cd* a,
                            GpuAssemblyTiming* timing) = 0;
    // Columns j0 .. j0 + count - 1 of a into host memory (n x count, column-major).
    virtual void copy_columns(const cd* a, std::size_t n, std::size_t j0, std::size_t count, cd* host) = 0;
    // LU-family solve of A x = b in place (A is overwritten); x, path, iterations, seconds filled.
    virtual SolveResult solve_lu_in_place(SolveMethod m, std::size_t n, cd* a, const std::vector<cd>& b) = 0;
    // ax = A x and row_abs[i] = sum_j |a_ij| from the device matrix: the lower triangle of a
    // symmetric A (lower_symmetric) or all of it. x, ax, row_abs are host vectors of n entries.
    virtual void residual_parts(std::size_t n, const cd* a, bool lower_symmetric, const std::vector<cd>& x, std::vector<cd>& ax,
                                std::vector<double>& row_abs) = 0;
};

// The CUDA device (pipeline_cuda.cu; throws without CUDA or a device) and the host device.
std::unique_ptr<ResidentDevice> make_cuda_resident_device(int device = 0);
// memory_cap_bytes: what the host device pretends to have free (0: no cap).
std::unique_ptr<ResidentDevice> make_host_resident_device(std::uint64_t memory_cap_bytes = 0);

MemoryPlan plan_resident_memory(ResidentDevice& device, SolveMethod m, std::size_t order, const Geometry& g);
// Throws ResourceError (output.hpp; exit 4 of the command line) naming every size, the free memory
// and the several-device path when the plan does not fit.
void check_plan_fits(const MemoryPlan& plan, std::uint64_t free_bytes, const std::string& device_name);

struct ResidentRun {
    SolveResult solve;             // x, path, iterations, scaled residual (from the device matrix)
    MemoryPlan plan;
    double assembly_s = 0;         // wall seconds of the assembly (incl. upload of the geometry)
    double assembly_device_s = 0;  // device seconds of its kernels
    double solve_s = 0;            // wall seconds of the solve (incl. upload of b, download of x)
    double residual_s = 0;         // wall seconds of the residual check (incl. reassembly)
    double residual_reassembly_s = 0;  // the part of residual_s spent assembling A again (LU family)
    double write_matrix_s = 0;
    std::uint64_t peak_device_bytes = 0;  // largest used_bytes() seen at the stage boundaries
};

// One frequency through the device: plan, assemble, [--write-matrix], solve, residual. write_matrix
// (may be empty) receives the whole matrix in host memory, copied out in blocks of columns: the only
// n x n host buffer of the pipeline.
ResidentRun run_resident(ResidentDevice& device, Formulation f, bool burton_miller, SolveMethod m, const Mesh& mesh, const Geometry& g, double k,
                         const std::vector<cd>& b, const std::function<void(const Matrix&)>& write_matrix);

// ||b - Ax||_inf / (n ||A||_inf ||x||_inf) from the parts a device returns.
double scaled_residual_from_parts(const std::vector<cd>& b, const std::vector<cd>& x, const std::vector<cd>& ax, const std::vector<double>& row_abs);

// Peak resident set size of this process so far (getrusage), bytes.
std::uint64_t peak_host_bytes();

// The CPU versions of the device residual kernels (tests, the host device).
void lower_symmetric_matvec(std::size_t n, const cd* a, const cd* x, cd* ax, double* row_abs);
void full_matvec(std::size_t n, const cd* a, const cd* x, cd* ax, double* row_abs);

}  // namespace bem
