// The device-resident pipeline's logic (pipeline.hpp) and its host device.
#include "pipeline.hpp"

#include "output.hpp"  // ResourceError: exit 4 of the command line

#include <batchsolve/batchsolve.hpp>
#include <lapacke.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace bem {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string gib(std::uint64_t bytes) {
    char buf[32];
    if (bytes < (1ull << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1ull << 20));
    else std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1ull << 30));
    return buf;
}

// Columns copied out per block by --write-matrix: 256 columns of a 65,000-row matrix are 0.27 GB, a
// small staging buffer next to the host matrix the writer needs anyway.
constexpr std::size_t write_block_columns = 256;

}  // namespace

std::string MemoryPlan::describe() const {
    return "A " + gib(matrix) + " + solver " + gib(solver) + " + residual " + gib(residual) + " + geometry " + gib(geometry) + " + margin " +
           gib(margin) + " = " + gib(total());
}

bool resident_lower_only(SolveMethod m) { return m == SolveMethod::gpu_ldlt || m == SolveMethod::cpu_ldlt; }

bool resident_supports(SolveMethod m, bool gpu_device) {
    if (gpu_device) return m == SolveMethod::gpu_lu || m == SolveMethod::gpu_irs_c || m == SolveMethod::gpu_irs_y || m == SolveMethod::gpu_ldlt;
    return m == SolveMethod::cpu_lu || m == SolveMethod::cpu_ldlt;
}

MemoryPlan plan_resident_memory(ResidentDevice& device, SolveMethod m, std::size_t order, const Geometry& g) {
    MemoryPlan p;
    p.order = order;
    p.matrix = std::uint64_t(order) * order * sizeof(cd);
    p.solver = device.solver_workspace_bytes(m, order);
    p.residual = std::uint64_t(order) * (2 * sizeof(cd) + sizeof(double));
    // Per triangle: vertex indices, panel corners, normal, centroid, jacobian, diameter, the regular
    // and near points and weights (assembly_cuda.cu uploads these); singular pairs 2 ints each; b, x.
    p.geometry = std::uint64_t(g.n) * (3 * 4 + 9 * 8 + 8 * 8 + 4 * 8 * std::uint64_t(g.regular_count + g.near_count)) +
                 std::uint64_t(g.singular_i.size()) * 8 + std::uint64_t(order) * 2 * sizeof(cd) + (1u << 20);
    p.margin = device.is_gpu() ? (256ull << 20) : 0;
    return p;
}

void check_plan_fits(const MemoryPlan& plan, std::uint64_t free_bytes, const std::string& device_name) {
    if (plan.total() <= free_bytes) return;
    throw ResourceError("device-resident solve of order " + std::to_string(plan.order) + ": needs " + plan.describe() + " on " + device_name +
                             ", which has " + gib(free_bytes) +
                             " free; spread the matrix over several GPUs with --devices 0,1,... (tiles of --tile columns, LU), or use a "
                             "coarser mesh");
}

double scaled_residual_from_parts(const std::vector<cd>& b, const std::vector<cd>& x, const std::vector<cd>& ax, const std::vector<double>& row_abs) {
    double rn = 0, xn = 0, an = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        rn = std::max(rn, std::abs(b[i] - ax[i]));
        xn = std::max(xn, std::abs(x[i]));
        an = std::max(an, row_abs[i]);
        if (!std::isfinite(std::abs(ax[i])) || !std::isfinite(row_abs[i])) return INFINITY;
    }
    if (xn == 0 || an == 0) return rn == 0 ? 0 : INFINITY;
    return rn / (double(b.size()) * an * xn);
}

std::uint64_t peak_host_bytes() {
    struct rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return std::uint64_t(u.ru_maxrss) * 1024;  // Linux: kilobytes
}

void lower_symmetric_matvec(std::size_t n, const cd* a, const cd* x, cd* ax, double* row_abs) {
    std::fill(ax, ax + n, cd(0, 0));
    std::fill(row_abs, row_abs + n, 0.0);
    // Column j of the lower triangle: row j gets sum_{i>j} a_ij x_i (the mirrored entries), rows i
    // get a_ij x_j. Serial over columns: the tests' orders are small.
    for (std::size_t j = 0; j < n; ++j) {
        const cd* col = a + j * n;
        cd acc = col[j] * x[j];
        double s = std::abs(col[j]);
        for (std::size_t i = j + 1; i < n; ++i) {
            acc += col[i] * x[i];
            s += std::abs(col[i]);
            ax[i] += col[i] * x[j];
            row_abs[i] += std::abs(col[i]);
        }
        ax[j] += acc;
        row_abs[j] += s;
    }
}

void full_matvec(std::size_t n, const cd* a, const cd* x, cd* ax, double* row_abs) {
    const std::int64_t nn = std::int64_t(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < nn; ++i) {
        cd acc = 0;
        double s = 0;
        for (std::size_t j = 0; j < n; ++j) {
            const cd v = a[std::size_t(i) + j * n];
            acc += v * x[j];
            s += std::abs(v);
        }
        ax[std::size_t(i)] = acc;
        row_abs[std::size_t(i)] = s;
    }
}

ResidentRun run_resident(ResidentDevice& device, Formulation f, bool burton_miller, SolveMethod m, const Mesh& mesh, const Geometry& g, double k,
                         const std::vector<cd>& b, const std::function<void(const Matrix&)>& write_matrix) {
    namespace bs = batchsolve;
    if (!resident_supports(m, device.is_gpu()))
        throw std::invalid_argument(std::string("--solver ") + to_string(m) + ": not a solver of the device-resident pipeline on " + device.name());
    const bool lower_only = resident_lower_only(m);
    if (lower_only && burton_miller)
        throw std::invalid_argument(std::string("--solver ") + to_string(m) +
                                    ": the LDL^T reads the lower triangle of a complex-symmetric matrix, and the Burton-Miller operator is "
                                    "not symmetric; use an LU solver (gpu-lu, cpu-lu)");
    const std::size_t n = b.size();
    ResidentRun run;
    run.plan = plan_resident_memory(device, m, n, g);
    check_plan_fits(run.plan, device.free_bytes() + device.held_bytes(), device.name());
    auto sample = [&] { run.peak_device_bytes = std::max(run.peak_device_bytes, device.used_bytes()); };

    cd* a = device.matrix(n);
    sample();
    auto t0 = std::chrono::steady_clock::now();
    GpuAssemblyTiming timing;
    run.assembly_device_s = device.assemble(f, burton_miller, mesh, g, k, lower_only, a, &timing);
    run.assembly_s = seconds_since(t0);
    sample();

    if (write_matrix) {
        t0 = std::chrono::steady_clock::now();
        Matrix host = host_matrix(n);
        for (std::size_t j0 = 0; j0 < n; j0 += write_block_columns)
            device.copy_columns(a, n, j0, std::min(write_block_columns, n - j0), host.a.data() + j0 * n);
        if (lower_only)  // the upper triangle was never written: mirror the lower one
            for (std::size_t j = 0; j < n; ++j)
                for (std::size_t i = j + 1; i < n; ++i) host.a[j + i * n] = host.a[i + j * n];
        write_matrix(host);
        run.write_matrix_s = seconds_since(t0);
    }

    t0 = std::chrono::steady_clock::now();
    SolveResult r;
    r.method = m;
    if (lower_only) {
        bs::Context& ctx = device.context();
        const bs::SysvOptions options;
        const std::size_t workspace = bs::sysv_mixed_workspace_size<cd>(bs::Symmetry::symmetric, int(n), 1, options, ctx);
        bs::Buffer<cd> db(ctx, b), dx(ctx, n);
        ctx.workspace(workspace);
        sample();
        ctx.synchronize();
        const auto s0 = std::chrono::steady_clock::now();
        const bs::SysvResult sr = bs::sysv_mixed<cd>(bs::Symmetry::symmetric, bs::Uplo::lower, int(n), 1, a, int(n), db.data(), int(n), dx.data(),
                                                     int(n), options, ctx);
        ctx.synchronize();
        r.seconds = seconds_since(s0);
        r.x = dx.to_host();
        r.iterations = sr.iterations;
        r.path = std::string("batchsolve sysv_mixed (") + (device.is_gpu() ? "CUDA" : "CPU") + ", A resident): " + sr.describe();
        if (sr.path == bs::SolvePath::none) throw std::runtime_error(r.path + ": no step of the fallback chain solved the system");
    } else {
        r = device.solve_lu_in_place(m, n, a, b);
    }
    sample();
    run.solve_s = seconds_since(t0);

    // The residual check in double from the device matrix: the LDL^T left A as it was; the LU family
    // overwrote it, so it is assembled again into the same memory first.
    t0 = std::chrono::steady_clock::now();
    if (!lower_only) {
        const auto a0 = std::chrono::steady_clock::now();
        device.assemble(f, burton_miller, mesh, g, k, false, a, nullptr);
        run.residual_reassembly_s = seconds_since(a0);
    }
    std::vector<cd> ax(n);
    std::vector<double> row_abs(n);
    device.residual_parts(n, a, lower_only, r.x, ax, row_abs);
    r.scaled_residual = scaled_residual_from_parts(b, r.x, ax, row_abs);
    run.residual_s = seconds_since(t0);
    sample();
    run.solve = std::move(r);
    return run;
}

// ---- the host device ---------------------------------------------------------------------------------

namespace {

class HostResidentDevice final : public ResidentDevice {
public:
    explicit HostResidentDevice(std::uint64_t cap) : cap_(cap), ctx_(batchsolve::Backend::cpu) {}
    std::string name() const override { return "the host (standing in for a device)"; }
    bool is_gpu() const override { return false; }
    batchsolve::Context& context() override { return ctx_; }
    std::uint64_t free_bytes() override {
        const std::uint64_t cap = cap_ ? cap_ : std::numeric_limits<std::uint64_t>::max() / 2;
        return cap > used_bytes() ? cap - used_bytes() : 0;
    }
    std::uint64_t used_bytes() override { return storage_.size() * sizeof(cd) + ctx_.workspace_size(); }
    std::uint64_t held_bytes() override { return used_bytes(); }
    std::uint64_t solver_workspace_bytes(SolveMethod m, std::size_t n) override {
        if (m == SolveMethod::cpu_ldlt)
            return batchsolve::sysv_mixed_workspace_size<cd>(batchsolve::Symmetry::symmetric, int(n), 1, batchsolve::SysvOptions{}, ctx_);
        return std::uint64_t(n) * sizeof(lapack_int);
    }
    cd* matrix(std::size_t n) override {
        if (storage_.size() != n * n) storage_.assign(n * n, cd(0, 0));
        return storage_.data();
    }
    double assemble(Formulation f, bool burton_miller, const Mesh& mesh, const Geometry& g, double k, bool lower_only, cd* a,
                    GpuAssemblyTiming*) override {
        const auto t0 = std::chrono::steady_clock::now();
        const std::size_t n = f == Formulation::soft_p0 ? g.n : mesh.vertex_count();
        if (burton_miller) {
            if (f == Formulation::soft_p0) assemble_p0_burton_miller_soft_into(g, k, {}, a);
            else assemble_p1_burton_miller_hard_into(g, n, k, {}, a);
        } else {
            // The whole matrix as one column block of one member: the several-device code, which
            // assembles into caller memory.
            ColumnBlock all;
            all.tile = int(n);
            all.local_columns = std::int64_t(n);
            all.order = std::int64_t(n);
            if (f == Formulation::soft_p0) assemble_p0_columns(g, k, {}, all, a);
            else assemble_p1_columns(g, n, k, f == Formulation::hard_p1 ? P1Operator::hypersingular : P1Operator::single_layer, {}, all, a);
        }
        // A device assembling the lower triangle only leaves the upper one unwritten: poisoned here,
        // so that a solve or a residual that read it would show it.
        if (lower_only)
            for (std::size_t j = 1; j < n; ++j)
                for (std::size_t i = 0; i < j; ++i) a[i + j * n] = cd(std::nan(""), std::nan(""));
        return seconds_since(t0);
    }
    void copy_columns(const cd* a, std::size_t n, std::size_t j0, std::size_t count, cd* host) override {
        std::copy(a + j0 * n, a + (j0 + count) * n, host);
    }
    SolveResult solve_lu_in_place(SolveMethod m, std::size_t n, cd* a, const std::vector<cd>& b) override {
        if (m != SolveMethod::cpu_lu) throw std::invalid_argument(std::string("host device: no in-place solve for ") + to_string(m));
        SolveResult out;
        out.method = m;
        out.x = b;
        std::vector<lapack_int> ipiv(std::max<std::size_t>(n, 1));
        const auto t0 = std::chrono::steady_clock::now();
        const lapack_int info = LAPACKE_zgesv(LAPACK_COL_MAJOR, lapack_int(n), 1, reinterpret_cast<lapack_complex_double*>(a), lapack_int(n),
                                              ipiv.data(), reinterpret_cast<lapack_complex_double*>(out.x.data()), lapack_int(n));
        out.seconds = seconds_since(t0);
        out.path = "LAPACK zgesv (LU, partial pivoting, A resident)";
        if (info != 0) throw std::runtime_error(out.path + ": info " + std::to_string(info));
        return out;
    }
    void residual_parts(std::size_t n, const cd* a, bool lower_symmetric, const std::vector<cd>& x, std::vector<cd>& ax,
                        std::vector<double>& row_abs) override {
        if (lower_symmetric) lower_symmetric_matvec(n, a, x.data(), ax.data(), row_abs.data());
        else full_matvec(n, a, x.data(), ax.data(), row_abs.data());
    }

private:
    std::uint64_t cap_;
    batchsolve::Context ctx_;
    std::vector<cd> storage_;  // the "device" matrix: deliberately not a host_matrix()
};

}  // namespace

std::unique_ptr<ResidentDevice> make_host_resident_device(std::uint64_t memory_cap_bytes) {
    return std::make_unique<HostResidentDevice>(memory_cap_bytes);
}

}  // namespace bem
