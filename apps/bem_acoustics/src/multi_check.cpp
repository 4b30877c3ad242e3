// bem_multi_check: the several-device BEM path (distributed.hpp) beside the one-GPU path on a refined
// icosphere, for GPU machines where the full bem (Gmsh, OpenCASCADE) is not installed. Per
// formulation: one GPU (GPU assembly, cuSOLVER LU) and a DeviceGroup (column tiles, cuSOLVERMg):
// assembly and solve times, scaled residuals, the far field's error against the Mie series, the
// difference of the two solutions; then a member cap below the matrix (the error it must give).
//   bem_multi_check [--mesh ico:5 | octa:L | geo:m] [-k 5] [--formulations soft-p0,hard-p1] [--devices all] [--tile 256]
//                   [--cap-gib 4] [--cpu]
// --cpu: the same on the CPU (CPU assembly and LAPACK; CPU members): a dry run where there is no GPU.
// Exit 0 when every residual is below 1e-10 and the solutions agree; 1 otherwise; 2 on usage errors.
#include <batchsolve/multi_device.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "distributed.hpp"
#include "physics.hpp"
#include "solver.hpp"

using namespace bem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The far field at `angles` directions in the xz-plane against the Mie series of the unit sphere.
double mie_error(Formulation f, const Mesh& mesh, const Geometry& g, const std::vector<cd>& x, double k, int angles) {
    std::vector<std::array<double, 3>> dirs;
    std::vector<cd> reference;
    for (int a = 0; a < angles; ++a) {
        const double theta = M_PI * a / (angles - 1);
        dirs.push_back({std::cos(theta), 0, std::sin(theta)});
        reference.push_back(mie_far_field(f == Formulation::hard_p1, k, 1.0, theta));
    }
    return relative_l2_error(far_field(f, mesh, g, x, k, dirs), reference);
}

}  // namespace

int main(int argc, char** argv) {
    int tile = 256;
    std::string mesh_spec = "ico:5", one_gpu = "auto";
    double k = 5, cap_gib = 0;
    std::string formulations = "soft-p0,hard-p1", devices = "all";
    bool cpu = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(arg + ": needs a value");
            return argv[++i];
        };
        try {
            if (arg == "--help" || arg == "-h") {
                std::printf("usage: bem_multi_check [--mesh ico:L|octa:L|geo:m] [-k 5] [--formulations soft-p0,hard-p1] [--devices all]\n"
                            "                       [--tile 256] [--one auto|yes|no] [--cap-gib G] [--cpu]\n"
                            "  --mesh: refined icosahedron/octahedron (20/8 x 4^L triangles) or geodesic sphere (20 m^2 triangles)\n"
                            "  --one: also the one-device path (auto: when the matrix fits one GPU); --cap-gib: a member cap to be refused\n"
                            "  --cpu: CPU assembly, LAPACK and CPU members (a dry run without a GPU)\n");
                return 0;
            } else if (arg == "--mesh") mesh_spec = value();
            else if (arg == "--one") one_gpu = value();
            else if (arg == "-k") k = std::stod(value());
            else if (arg == "--formulations") formulations = value();
            else if (arg == "--devices") devices = value();
            else if (arg == "--tile") tile = std::stoi(value());
            else if (arg == "--cap-gib") cap_gib = std::stod(value());
            else if (arg == "--cpu") cpu = true;
            else throw std::invalid_argument("unknown option " + arg);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "bem_multi_check: %s (--help)\n", e.what());
            return 2;
        }
    }
    int failures = 0;
    try {
        if (!cpu && !gpu_available()) throw std::runtime_error("needs a CUDA device (--cpu for a dry run on the CPU)");
        const batchsolve::Backend backend = cpu ? batchsolve::Backend::cpu : batchsolve::Backend::cuda;
        const auto colon = mesh_spec.find(':');
        const std::string kind = mesh_spec.substr(0, colon);
        const int size = colon == std::string::npos ? -1 : std::stoi(mesh_spec.substr(colon + 1));
        if (size < 0 || (kind != "ico" && kind != "octa" && kind != "geo"))
            throw std::invalid_argument("--mesh: expected ico:L, octa:L or geo:m (got '" + mesh_spec + "')");
        if (one_gpu != "auto" && one_gpu != "yes" && one_gpu != "no") throw std::invalid_argument("--one: auto, yes or no");
        Mesh mesh = kind == "geo" ? make_geodesic_sphere(size)
                                  : make_refined_sphere(size, 1.0, kind == "ico" ? SphereBase::icosahedron : SphereBase::octahedron);
        check_surface(mesh);
        const Geometry g = make_geometry(mesh);
        batchsolve::DeviceGroup group(backend, batchsolve::DeviceGroup::parse_devices(devices, backend));
        std::printf("bem_multi_check: %s (%zu triangles, %zu vertices), k = %g, group %s, tiles of %d columns\n", mesh.source.c_str(),
                    mesh.triangle_count(), mesh.vertex_count(), k, group.describe().c_str(), tile);
        std::stringstream list(formulations);
        std::string name;
        Incident inc;
        while (std::getline(list, name, ',')) {
            const Formulation f = parse_formulation(name);
            const std::vector<cd> b = right_hand_side(f, mesh, g, inc, k);
            const std::size_t n = f == Formulation::soft_p0 ? mesh.triangle_count() : mesh.vertex_count();
            // The one-device path when asked, or (auto) when its matrix, a copy and workspace fit one GPU
            // (gpu_solve_bytes) and the host: it is the reference the group's solution is compared with.
            bool with_one = one_gpu == "yes";
            if (one_gpu == "auto") with_one = cpu || gpu_solve_bytes(SolveMethod::gpu_lu, n) < batchsolve::DeviceGroup(backend, {0}).available_bytes(0);
            SolveResult one;
            double one_assembly = 0;
            if (with_one) {
                // One device: the path of bem solve --assembly gpu --solver gpu-lu (or CPU assembly and LAPACK).
                auto t0 = std::chrono::steady_clock::now();
                GpuAssemblyTiming timing;
                const Matrix a = cpu                           ? assemble(f, mesh, g, k)
                                 : f == Formulation::soft_p0 ? assemble_p0_single_layer_gpu(g, k, {}, &timing)
                                                             : assemble_p1_gpu(mesh, g, k,
                                                                               f == Formulation::hard_p1 ? P1Operator::hypersingular : P1Operator::single_layer,
                                                                               {}, &timing);
                one_assembly = seconds_since(t0);
                one = solve(cpu ? SolveMethod::cpu_lu : SolveMethod::gpu_lu, a, b, false);
                const double one_error = mie_error(f, mesh, g, one.x, k, 91);
                std::printf("%s n = %zu one %s: assembly %.3f s (device %.3f s), %s %.3f s, scaled residual %.2e, Mie error %.3e\n", name.c_str(),
                            a.n, cpu ? "CPU" : "GPU", one_assembly, timing.total_s, one.path.c_str(), one.seconds, one.scaled_residual, one_error);
                if (!(one.scaled_residual < 1e-10)) ++failures;
            } else {
                std::printf("%s n = %zu: not run on one device (%s; %.2f GiB in complex double)\n", name.c_str(), n,
                            one_gpu == "no" ? "--one no" : "it does not fit", double(n) * double(n) * 16 / double(1ull << 30));
            }
            std::fflush(stdout);
            // The group: column tiles, cuSOLVERMg, residual from the re-assembled columns.
            const DistributedResult d = solve_distributed(f, mesh, g, k, b, group, tile);
            const double d_error = mie_error(f, mesh, g, d.x, k, 91);
            double diff = 0, scale = 0;
            if (with_one)
                for (std::size_t i = 0; i < b.size(); ++i) diff = std::max(diff, std::abs(d.x[i] - one.x[i])), scale = std::max(scale, std::abs(one.x[i]));
            std::printf("%s n = %zu %s: assembly %.3f s, %s: factor %.3f s, solve %.3f s (upload of b %.3f s, download %.3f s), residual "
                        "(re-assembly %.3f s) %.3f s, scaled residual %.2e, Mie error %.3e, %.2f GiB of tiles per member",
                        name.c_str(), d.order, d.group.c_str(), d.assembly_s, d.engine.c_str(), d.factor_s, d.solve_s, d.upload_s, d.download_s,
                        d.residual_assembly_s, d.residual_s, d.scaled_residual, d_error, double(d.bytes_per_member) / double(1ull << 30));
            if (with_one) std::printf("; max |x - x_one| / max |x_one| = %.2e", diff / scale);
            std::printf("\n");
            if (with_one)
                std::printf("%s summary: n = %zu, one %s %.3f s (assembly + LU), group %.3f s (assembly + factor + solve), residuals %.1e / %.1e\n",
                            name.c_str(), n, cpu ? "CPU" : "GPU", one_assembly + one.seconds, d.assembly_s + d.factor_s + d.solve_s, one.scaled_residual,
                            d.scaled_residual);
            else
                std::printf("%s summary: n = %zu, group only %.3f s (assembly + factor + solve), residual %.1e\n", name.c_str(), n,
                            d.assembly_s + d.factor_s + d.solve_s, d.scaled_residual);
            std::fflush(stdout);
            // Partial-pivoting LU is backward stable (residuals ~1e-19 measured); the solutions agree to
            // far better than 1e-6 away from a resonance (cond ~ n).
            if (!(d.scaled_residual < 1e-10) || (with_one && !(diff / scale < 1e-6))) ++failures;
        }
        if (cap_gib > 0) {
            group.set_memory_limit(std::size_t(cap_gib * double(1ull << 30)));
            try {
                solve_distributed(Formulation::soft_p0, mesh, g, k, right_hand_side(Formulation::soft_p0, mesh, g, inc, k), group, tile);
                std::printf("cap %.2f GiB: NOT refused\n", cap_gib);
                ++failures;
            } catch (const std::exception& e) {
                std::printf("cap %.2f GiB per member: refused: %s\n", cap_gib, e.what());
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bem_multi_check: error: %s\n", e.what());
        return 1;
    }
    std::printf("bem_multi_check: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
