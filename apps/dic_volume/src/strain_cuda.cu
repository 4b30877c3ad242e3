// The field strain on the GPU (strain.hpp): one thread per point runs strain_math.hpp's fit over its
// neighbours. The grid's displacements go up (3 doubles per node), the 9 strain values per point
// come back; at 2 x 10^5 points that is ~20 MB of copies against ~10^9 flops, which take the host's
// cores tens of milliseconds and the GPU about one.
#include <cuda_runtime.h>
#include <math_constants.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "strain.hpp"
#include "strain_math.hpp"

namespace dvc {
namespace {

#define DVC_STRAIN_CHECK(call)                                                                              \
    do {                                                                                                    \
        const cudaError_t err_ = (call);                                                                    \
        if (err_ != cudaSuccess) throw Error(std::string("CUDA: ") + #call + ": " + cudaGetErrorString(err_)); \
    } while (0)

struct StrainArgs {
    const double* u;
    const char* ok;
    const std::int64_t* grid_index;
    const std::int8_t* status;
    std::int64_t count;
    std::int64_t shape[3];
    double spacing, sigma;
    int radius;
    double* strain;
    std::int32_t* valid;
};

__global__ void field_strain_kernel(StrainArgs a) {
    const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= a.count) return;
    double E[9];
    bool valid = false;
    if (a.status[k] == std::int8_t(PointStatus::converged)) {
        const std::int64_t g = a.grid_index[k];
        const std::int64_t c[3] = {g / (a.shape[1] * a.shape[2]), (g / a.shape[2]) % a.shape[1], g % a.shape[2]};
        valid = field_strain_at(a.u, a.ok, a.shape, c, a.spacing, a.sigma, a.radius, E);
    }
    for (int q = 0; q < 9; ++q) a.strain[9 * k + q] = valid ? E[q] : CUDART_NAN;
    a.valid[k] = valid ? 1 : 0;
}

// Device buffers freed on every path.
struct DeviceBlocks {
    std::vector<void*> blocks;
    ~DeviceBlocks() {
        for (void* p : blocks) cudaFree(p);
    }
    template <class T>
    T* allocate(std::size_t count) {
        void* p = nullptr;
        DVC_STRAIN_CHECK(cudaMalloc(&p, std::max<std::size_t>(count, 1) * sizeof(T)));
        blocks.push_back(p);
        return static_cast<T*>(p);
    }
};

}  // namespace

FieldStrain strain_from_field_cuda(const CorrelationResult& r, double sigma) {
    const std::int64_t count = std::int64_t(r.grid.centres.size());
    FieldStrain out;
    out.strain.assign(std::size_t(count) * 9, std::numeric_limits<double>::quiet_NaN());
    out.valid.assign(std::size_t(count), 0);
    if (count == 0) return out;
    const FieldGrid f = field_grid(r);
    DeviceBlocks d;
    StrainArgs a{};
    double* u = d.allocate<double>(f.u.size());
    char* ok = d.allocate<char>(f.ok.size());
    std::int64_t* grid_index = d.allocate<std::int64_t>(std::size_t(count));
    std::int8_t* status = d.allocate<std::int8_t>(std::size_t(count));
    a.strain = d.allocate<double>(std::size_t(count) * 9);
    a.valid = d.allocate<std::int32_t>(std::size_t(count));
    // The legacy default stream: the copies and the kernel are ordered, and the last copy waits.
    DVC_STRAIN_CHECK(cudaMemcpy(u, f.u.data(), f.u.size() * sizeof(double), cudaMemcpyHostToDevice));
    DVC_STRAIN_CHECK(cudaMemcpy(ok, f.ok.data(), f.ok.size(), cudaMemcpyHostToDevice));
    DVC_STRAIN_CHECK(cudaMemcpy(grid_index, r.grid.grid_index.data(), std::size_t(count) * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    DVC_STRAIN_CHECK(cudaMemcpy(status, r.status.data(), std::size_t(count), cudaMemcpyHostToDevice));
    a.u = u, a.ok = ok, a.grid_index = grid_index, a.status = status, a.count = count;
    for (int i = 0; i < 3; ++i) a.shape[i] = r.grid.grid_shape[i];
    a.spacing = r.grid.spacing, a.sigma = sigma, a.radius = field_strain_radius(sigma);
    constexpr int threads = 128;
    field_strain_kernel<<<unsigned((count + threads - 1) / threads), threads>>>(a);
    DVC_STRAIN_CHECK(cudaGetLastError());
    DVC_STRAIN_CHECK(cudaMemcpy(out.strain.data(), a.strain, out.strain.size() * sizeof(double), cudaMemcpyDeviceToHost));
    DVC_STRAIN_CHECK(cudaMemcpy(out.valid.data(), a.valid, out.valid.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
    return out;
}

}  // namespace dvc
