// The CUDA backend of the variable-size BLAS-3 routines: the per-problem argument check (one kernel
// that fills info and reduces the maxima of the valid problems) and the launcher of the one generated
// GEMM kernel (src/codegen/blas3/gemm.*), compiled by NVRTC on first use and cached per device.
// Size-binned dispatch: when the caller gives no configuration and the batch's largest problem is
// above the smallest bin, the problems are binned on the device by max(m_i, n_i) (one pass, atomics
// into one list per bin, no host round trip) and each bin runs the tuning table's tile for its size
// on its own list; the bins' lists live in the context's scratch, which nothing else holds while a
// GEMM runs. Region split: a bin above the first whose table has an edge entry (gemm_vbatched_edge,
// a smaller tile dividing the bin's) runs its tile on the whole tiles of its problems only and the
// edge tile on the ragged rest, two kernels on the same list. Tile list (config.tile_list): one kernel
// scans the tile counts of the problems of every such kernel of the call (a CUB block scan per kernel,
// one launch), and the kernel runs a persistent grid (the blocks the GPU holds at once) over the
// (problem, tile) pairs. The GEMM path never uses ctx.workspace() (TRSM keeps its inverted blocks there while it
// calls the GEMM).
#include <algorithm>
#include <complex>
#include <cstdio>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <cub/block/block_scan.cuh>

#include "../../core/blas3_check.hpp"
#include "../jit/jit.hpp"
#include "../jit/kernel_cache.hpp"
#include "../resources.hpp"
#include "batchsolve/tuning.hpp"
#include "codegen/blas3/gemm.hpp"
#include "gemm_manifest.hpp"

namespace batchsolve::cuda_backend {

using blas3_detail::GemmExtras;
using blas3_detail::Operand;
using blas3_detail::ProblemChecks;
using blas3_detail::VSize;
using detail::CudaResources;
using detail::DeviceGuard;

namespace {

// The grid's z extent (CUDA's limit); larger batches loop inside the kernels.
constexpr int kMaxGridZ = 65535;
constexpr int kCheckThreads = 256;

constexpr int kFirstBinSize = kGemmFirstBinSize;  // gemm_manifest.hpp
constexpr int kMaxBins = 24;  // 128 * 2^23 > INT_MAX
constexpr int kBinThreads = 256;

// The upper bounds of the bins of one call: bin b holds the problems with hi[b-1] < max(m, n) <= hi[b].
struct BinBounds {
    int count = 0;
    int hi[kMaxBins] = {};
};

__device__ int effective_size(const int* v, int subtract, int limit, int i) {
    long long x = v ? (long long)v[i] - subtract : limit;
    x = x > limit ? limit : x;
    return x < 0 ? 0 : int(x);
}

// One pass over the batch: each problem that writes something (not skipped, m and n not zero) goes
// to the list of its bin, lists[b * batch + slot]; counts[b] (zeroed before) ends as the bin's size.
__global__ void bin_problems_kernel(int batch, const int* m_v, int m_sub, int m_lim, const int* n_v, int n_sub, int n_lim,
                                    const int* skip, BinBounds bounds, int* counts, int* lists) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < batch; i += gridDim.x * blockDim.x) {
        if (skip && skip[i]) continue;
        const int m = effective_size(m_v, m_sub, m_lim, i), n = effective_size(n_v, n_sub, n_lim, i);
        if (m == 0 || n == 0) continue;
        const int size = m > n ? m : n;
        int b = 0;
        while (b + 1 < bounds.count && size > bounds.hi[b]) ++b;
        lists[(long long)b * batch + atomicAdd(&counts[b], 1)] = i;
    }
}

// The tile counts of one tile-list kernel's problems (its bin's list, or the whole batch) summed: entry z
// of tile_end the tiles of problems 0 .. z, a skipped or empty problem none (codegen/blas3/gemm.hpp).
struct TileScan {
    const int* list = nullptr;        // null: the batch
    const int* list_count = nullptr;  // null: batch
    int blk_m = 0, blk_n = 0;
    int* tile_end = nullptr;
};
constexpr int kMaxTileScans = 2 * kMaxBins;  // a split bin runs two kernels
struct TileScans {
    int count = 0;
    TileScan scan[kMaxTileScans];
};
constexpr int kTileScanThreads = 256;
constexpr int kTileScanItems = 8;  // consecutive problems per thread and chunk

// One block per scan, chunks of kTileScanThreads * kTileScanItems problems, the running total carried.
__global__ void __launch_bounds__(kTileScanThreads) scan_tiles_kernel(int batch, const int* m_v, int m_sub, int m_lim,
                                                                     const int* n_v, int n_sub, int n_lim,
                                                                     const int* skip, TileScans scans) {
    using Scan = cub::BlockScan<int, kTileScanThreads>;
    __shared__ typename Scan::TempStorage temp;
    __shared__ int carry;
    const TileScan& job = scans.scan[blockIdx.x];
    const int listed = job.list_count ? *job.list_count : batch;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (int base = 0; base < listed; base += kTileScanThreads * kTileScanItems) {
        int run[kTileScanItems], sum = 0;
        for (int i = 0; i < kTileScanItems; ++i) {
            const int z = base + threadIdx.x * kTileScanItems + i;
            int tiles = 0;
            if (z < listed) {
                const int p = job.list ? job.list[z] : z;
                if (!(skip && skip[p])) {
                    const int m = effective_size(m_v, m_sub, m_lim, p), n = effective_size(n_v, n_sub, n_lim, p);
                    tiles = ((m + job.blk_m - 1) / job.blk_m) * ((n + job.blk_n - 1) / job.blk_n);
                }
            }
            run[i] = sum += tiles;
        }
        int before = 0, total = 0;
        Scan(temp).ExclusiveSum(sum, before, total);
        const int c = carry;
        for (int i = 0; i < kTileScanItems; ++i) {
            const int z = base + threadIdx.x * kTileScanItems + i;
            if (z < listed) job.tile_end[z] = c + before + run[i];
        }
        __syncthreads();  // every thread has read carry and the scan's storage
        if (threadIdx.x == 0) carry = c + total;
        __syncthreads();
    }
}

// summary (device, optional): max[3], min[3], invalid, as blas3_detail::SizeSummary.
__global__ void check_problems_kernel(ProblemChecks checks, int batch, int* info, int* summary) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < batch; i += gridDim.x * blockDim.x) {
        int sizes[3];
        const int code = blas3_detail::check_problem(checks, i, sizes);
        info[i] = code;
        if (summary == nullptr) continue;
        if (code != 0) {
            atomicAdd(&summary[6], 1);
            continue;
        }
        for (int s = 0; s < 3; ++s) {
            atomicMax(&summary[s], sizes[s]);
            atomicMin(&summary[3 + s], sizes[s]);
        }
    }
}

codegen::blas3::GemmOperand gemm_operand(Operand op) { return static_cast<codegen::blas3::GemmOperand>(static_cast<int>(op)); }
codegen::blas3::GemmPart gemm_part(blas3_detail::Part part) { return static_cast<codegen::blas3::GemmPart>(static_cast<int>(part)); }

// One size bin of a call: the problems with max(m_i, n_i) <= hi (above the previous bin's hi) and the
// tuning table's configuration for that size; split: its whole tiles by `config`, the ragged edges by
// `edge` (the region split).
struct GemmBin {
    int hi = 0;
    GemmConfig config;
    bool split = false;
    GemmConfig edge;
};

// The tuning table's edge tile for a bin of size `hi` whose tile is `tile`, when it divides it and differs.
bool edge_config(Precision p, int hi, const GemmConfig& tile, int arch, GemmConfig& edge) {
    const TunedEntry e = tuned_config("gemm_vbatched_edge", p, LayoutKind::column_major, hi, arch);
    if (!e.found) return false;
    edge = parse_gemm_config(e.config);
    return edge != tile && edge.blk_m <= tile.blk_m && edge.blk_n <= tile.blk_n && tile.blk_m % edge.blk_m == 0 &&
           tile.blk_n % edge.blk_n == 0;
}

// The bins of a call whose largest problem is max_mn: kFirstBinSize, then doubling up to max_mn, each
// with default_gemm_config at its upper bound; neighbours with the same configuration merged.
std::vector<GemmBin> gemm_bins(Precision p, int max_mn, int max_k, bool triangle, int arch) {
    std::vector<GemmBin> bins;
    for (long long size = kFirstBinSize;; size *= 2) {
        const int hi = size >= max_mn ? max_mn : int(size);
        const GemmConfig c = default_gemm_config(p, hi, hi, max_k, triangle, arch);
        if (!bins.empty() && bins.back().config == c) bins.back().hi = hi;
        else bins.push_back({hi, c, false, GemmConfig{}});
        if (hi == max_mn) break;
    }
    for (std::size_t b = 1; b < bins.size(); ++b) bins[b].split = edge_config(p, bins[b].hi, bins[b].config, arch, bins[b].edge);
    return bins;
}

}  // namespace

// As the launcher resolves a call (gemm_manifest.hpp): a caller's configuration, else one bin when
// the sizes are constants of the call or the largest problem fits the first bin, else the size bins.
GemmPlan plan_gemm(const codegen::blas3::GemmSpec& spec, int max_m, int max_n, int max_k, bool constant_sizes,
                   int m_limit, int n_limit, int k_limit, const GemmConfig* config, int arch) {
    const codegen::blas3::GemmFamily& family = codegen::blas3::gemm_family();
    const bool triangle = spec.part != codegen::blas3::GemmPart::full;
    const int max_mn = std::max(max_m, max_n);
    std::vector<GemmBin> bins;
    if (config) bins.push_back({max_mn, *config, false, GemmConfig{}});
    else if (constant_sizes || max_mn <= kFirstBinSize) bins.push_back({max_mn, family.default_config({spec.precision, max_m, max_n, max_k, triangle, arch}), false, GemmConfig{}});
    else bins = gemm_bins(spec.precision, max_mn, max_k, triangle, arch);
    const bool binned = bins.size() > 1;
    GemmPlan plan;
    for (const GemmBin& b : bins) plan.bin_hi.push_back(b.hi);
    // the kernels, largest bin first (its long tiles start while the GPU is empty); a split bin's
    // interior kernel before its edge kernel
    for (std::size_t step = 0; step < bins.size(); ++step) {
        const std::size_t b = bins.size() - 1 - step;
        codegen::blas3::GemmSpec s = spec;
        s.config = bins[b].config;
        s.problem_list = binned;
        // the uniform-size path: sizes that are constants of the call and fill whole tiles
        s.full_tiles = !binned && constant_sizes && m_limit % s.config.blk_m == 0 && n_limit % s.config.blk_n == 0 &&
                       k_limit % s.config.blk_k == 0;
        if (bins[b].split) {
            s.region = codegen::blas3::GemmRegion::interior;
            codegen::blas3::GemmSpec e = s;
            e.config = bins[b].edge;
            e.region = codegen::blas3::GemmRegion::edge;
            e.edge_m = s.config.blk_m, e.edge_n = s.config.blk_n;
            plan.specs.push_back(s), plan.bin_of.push_back(b);
            plan.specs.push_back(e), plan.bin_of.push_back(b);
        } else {
            plan.specs.push_back(s), plan.bin_of.push_back(b);
        }
    }
    return plan;
}

namespace {

// The kernel of `spec` from the one cache, opted in to its shared memory above 48 KB on first load.
jit::KernelRequest gemm_request(const codegen::blas3::GemmSpec& spec, int device) {
    const codegen::blas3::GemmFamily& family = codegen::blas3::gemm_family();
    const std::size_t shared = family.resources(spec).shared_bytes;
    jit::KernelRequest request;
    request.key = jit::KernelKey{codegen::cache_family(family), family.kernel_name(spec), {}};
    jit::record_in_manifest(gemm_manifest_line(spec));  // $BATCHSOLVE_KERNEL_MANIFEST
    request.generate = [spec, &family] { return family.generate(spec); };
    const int threads = family.resources(spec).threads_per_block;
    const bool tile_list = spec.config.tile_list != 0;
    request.on_load = [shared, device, threads, tile_list](jit::LoadedKernel& k) {
        // the persistent grid of a tile-list kernel: the blocks one SM holds at this launch shape
        auto occupancy = [&] {
            if (!tile_list) return;
            const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.blocks_per_sm, static_cast<const void*>(k.function),
                                                                                threads, shared);
            if (e != cudaSuccess || k.blocks_per_sm < 1)
                throw InvalidArgument("gemm_vbatched", "config.tile_list",
                                      "an occupancy for " + k.name + " (" + cudaGetErrorString(e) + ")");
        };
        if (shared <= 48 * 1024) return occupancy();
        const cudaError_t e = cudaKernelSetAttributeForDevice(static_cast<cudaKernel_t>(k.function),
                                                              cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared), device);
        if (e != cudaSuccess)
            throw InvalidArgument("gemm_vbatched", "config.stages",
                                  std::to_string(shared) + " bytes of shared memory for " + k.name + ": " + cudaGetErrorString(e));
        occupancy();
    };
    return request;
}

// The kernels of `specs` (one per bin), the misses generated and compiled together on as many threads.
std::vector<const jit::LoadedKernel*> gemm_kernels(const std::vector<codegen::blas3::GemmSpec>& specs, int device) {
    const codegen::blas3::GemmFamily& family = codegen::blas3::gemm_family();
    const std::string family_key = codegen::cache_family(family);
    std::vector<const jit::LoadedKernel*> kernels(specs.size(), nullptr);
    bool all = true;
    for (std::size_t i = 0; i < specs.size(); ++i)
        all = (kernels[i] = jit::find_kernel(family_key, family.kernel_name(specs[i]), device)) != nullptr && all;
    if (all) return kernels;
    std::vector<jit::KernelRequest> requests;
    for (const codegen::blas3::GemmSpec& spec : specs) requests.push_back(gemm_request(spec, device));
    return jit::cached_kernels(requests, device, int(specs.size()));
}

std::string spec_problem_text(const codegen::blas3::GemmSpec& spec) { return codegen::blas3::gemm_family().can_implement(spec); }

void check_spec(const codegen::blas3::GemmSpec& spec) {
    const std::string problem = codegen::blas3::gemm_family().can_implement(spec);
    if (!problem.empty()) {
        const std::size_t colon = problem.find(':');
        throw InvalidArgument("gemm_vbatched", problem.substr(0, colon), problem.substr(colon + 2));
    }
}

}  // namespace

// The part field carries the region split's kernels as part/interior or part/edge<edge_m>x<edge_n>.
std::string gemm_manifest_line(const codegen::blas3::GemmSpec& s) {
    std::string part = codegen::blas3::to_string(s.part);
    if (s.region == codegen::blas3::GemmRegion::interior) part += "/interior";
    if (s.region == codegen::blas3::GemmRegion::edge) part += "/edge" + std::to_string(s.edge_m) + "x" + std::to_string(s.edge_n);
    return std::string("gemm ") + precision_letter(s.precision) + " " + codegen::blas3::to_string(s.op_a) + " " +
           codegen::blas3::to_string(s.op_b) + " " + part + " " + (s.real_diagonal ? "1 " : "0 ") +
           (s.full_tiles ? "1 " : "0 ") + (s.problem_list ? "1 " : "0 ") + to_string(s.config);
}

jit::KernelRequest gemm_manifest_request(const std::string& line) {
    auto bad = [&](const std::string& field, const std::string& why) -> void {
        throw InvalidArgument("kernel manifest", field, why + " (line: " + line.substr(0, 120) + ")");
    };
    std::istringstream in(line);
    std::string kind, precision, op_a, op_b, part;
    int real_diagonal = 0, full_tiles = 0, listed = 0;
    if (!(in >> kind >> precision >> op_a >> op_b >> part >> real_diagonal >> full_tiles >> listed) || kind != "gemm")
        bad("line", "gemm <precision> <op_a> <op_b> <part> <real_diagonal> <full_tiles> <problem_list> <configuration>");
    std::string config_text;
    std::getline(in >> std::ws, config_text);
    codegen::blas3::GemmSpec spec;
    if (precision.size() != 1 || std::string("sdcz").find(precision[0]) == std::string::npos) bad("precision", "s, d, c or z");
    spec.precision = precision[0] == 's' ? Precision::s : precision[0] == 'd' ? Precision::d : precision[0] == 'c' ? Precision::c : Precision::z;
    auto operand = [&](const std::string& text, const char* field) {
        for (int i = 0; i <= int(codegen::blas3::GemmOperand::hermitian_upper); ++i)
            if (text == codegen::blas3::to_string(codegen::blas3::GemmOperand(i))) return codegen::blas3::GemmOperand(i);
        bad(field, "n, t, c, syl, syu, hel or heu");
        return codegen::blas3::GemmOperand::no_trans;
    };
    spec.op_a = operand(op_a, "op_a");
    spec.op_b = operand(op_b, "op_b");
    if (const std::size_t slash = part.find('/'); slash != std::string::npos) {
        const std::string region = part.substr(slash + 1);
        part = part.substr(0, slash);
        int em = 0, en = 0;
        char x = 0, rest = 0;
        if (region == "interior") spec.region = codegen::blas3::GemmRegion::interior;
        else if (std::sscanf(region.c_str(), "edge%d%c%d%c", &em, &x, &en, &rest) == 3 && x == 'x')
            spec.region = codegen::blas3::GemmRegion::edge, spec.edge_m = em, spec.edge_n = en;
        else bad("part", "full, lower or upper, optionally /interior or /edge<m>x<n>");
    }
    if (part == "full") spec.part = codegen::blas3::GemmPart::full;
    else if (part == "lower") spec.part = codegen::blas3::GemmPart::lower;
    else if (part == "upper") spec.part = codegen::blas3::GemmPart::upper;
    else bad("part", "full, lower or upper");
    spec.real_diagonal = real_diagonal != 0, spec.full_tiles = full_tiles != 0, spec.problem_list = listed != 0;
    spec.config = parse_gemm_config(config_text);
    if (const std::string problem = spec_problem_text(spec); !problem.empty()) bad("config", problem);
    int device = 0;
    cudaGetDevice(&device);  // the opt-in names a device; a replay for an architecture loads nothing
    cudaGetLastError();
    return gemm_request(spec, device);
}

void check_vbatched(const ProblemChecks& checks, int batch, int* info, blas3_detail::SizeSummary* summary,
                    Context& ctx) {
    static_assert(sizeof(blas3_detail::SizeSummary) == 7 * sizeof(int), "SizeSummary is max[3], min[3], invalid");
    CudaResources& r = detail::resources_of(ctx, "vbatched BLAS-3 argument check");
    DeviceGuard guard(r.device_);
    r.require_device_memory(info, "vbatched BLAS-3 argument check", "info");
    int* device_summary = nullptr;
    if (summary != nullptr) {
        const blas3_detail::SizeSummary initial;
        device_summary = static_cast<int*>(r.scratch(sizeof initial));
        BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(device_summary, &initial, sizeof initial, cudaMemcpyHostToDevice, r.stream()));
    }
    if (batch > 0) {
        const int blocks = std::min((batch + kCheckThreads - 1) / kCheckThreads, 4 * std::max(r.sm_count_, 1) * 8);
        check_problems_kernel<<<blocks, kCheckThreads, 0, r.stream()>>>(checks, batch, info, device_summary);
        BATCHSOLVE_LAUNCH_CHECK("check_problems_kernel");
    }
    if (summary != nullptr) {
        BATCHSOLVE_CUDA_CHECK(cudaMemcpyAsync(summary, device_summary, sizeof *summary, cudaMemcpyDeviceToHost, r.stream()));
        BATCHSOLVE_CUDA_CHECK(cudaStreamSynchronize(r.stream()));
    }
}

template <class T>
BATCHSOLVE_BLAS3_GEMM(T) {
    if (batch <= 0 || max_m <= 0 || max_n <= 0) return;
    CudaResources& r = detail::resources_of(ctx, "gemm_vbatched");
    DeviceGuard guard(r.device_);
    const codegen::blas3::GemmFamily& family = codegen::blas3::gemm_family();
    codegen::blas3::GemmSpec spec;
    spec.precision = precision_v<T>;
    spec.op_a = gemm_operand(op_a);
    spec.op_b = gemm_operand(op_b);
    spec.part = gemm_part(extras.part);
    spec.real_diagonal = extras.real_diagonal && is_complex_v<T>;
    const bool constant_sizes = m.values == nullptr && n.values == nullptr && k.values == nullptr;
    const GemmPlan plan = plan_gemm(spec, max_m, max_n, max_k, constant_sizes, m.limit, n.limit, k.limit, extras.config,
                                    r.cc_major_ * 10 + r.cc_minor_);
    const std::vector<codegen::blas3::GemmSpec>& specs = plan.specs;
    const std::vector<std::size_t>& bin_of = plan.bin_of;
    const bool binned = plan.bin_hi.size() > 1;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        check_spec(specs[i]);
        const long long tiles_x = (std::min(max_m, plan.bin_hi[bin_of[i]]) + specs[i].config.blk_m - 1) / specs[i].config.blk_m;
        const long long tiles_y = (std::min(max_n, plan.bin_hi[bin_of[i]]) + specs[i].config.blk_n - 1) / specs[i].config.blk_n;
        if (specs[i].config.tile_list) {
            if (tiles_x * tiles_y * batch > 2147483647LL)
                throw InvalidArgument("gemm_vbatched", "config.tile_list", "at most 2^31 - 1 tiles in one call (else tile_list 0)");
        } else if (tiles_y > 65535) {
            throw InvalidArgument("gemm_vbatched", "max_n", "max_n / blk_n within the grid's y limit 65535");
        }
    }
    const int grid_z = std::min(batch, kMaxGridZ);
    // The one kernel cache (jit/kernel_cache.hpp): the name spells out every field of the spec, so the
    // text is generated once per process and a timed loop only looks the kernels up.
    const std::vector<const jit::LoadedKernel*> kernels = gemm_kernels(specs, r.device_);

    int* counts = nullptr;
    int* lists = nullptr;
    std::vector<int*> tile_end(specs.size(), nullptr);
    std::size_t tile_lists = 0;
    for (const codegen::blas3::GemmSpec& s : specs) tile_lists += s.config.tile_list ? 1 : 0;
    if (binned || tile_lists > 0) {
        detail::Carve carve;
        const std::size_t counts_at = carve.reserve<int>(binned ? plan.bin_hi.size() : 0);
        const std::size_t lists_at = carve.reserve<int>(binned ? plan.bin_hi.size() * std::size_t(batch) : 0);
        const std::size_t tiles_at = carve.reserve<int>(tile_lists * std::size_t(batch));
        void* base = r.scratch(carve.size());
        counts = binned ? detail::Carve::at<int>(base, counts_at) : nullptr;
        lists = binned ? detail::Carve::at<int>(base, lists_at) : nullptr;
        for (std::size_t i = 0, j = 0; i < specs.size(); ++i)
            if (specs[i].config.tile_list) tile_end[i] = detail::Carve::at<int>(base, tiles_at) + j++ * std::size_t(batch);
    }
    if (binned) {
        BinBounds bounds;
        bounds.count = int(plan.bin_hi.size());
        for (std::size_t b = 0; b < plan.bin_hi.size(); ++b) bounds.hi[b] = plan.bin_hi[b];
        BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(counts, 0, plan.bin_hi.size() * sizeof(int), r.stream()));
        const int blocks = std::min((batch + kBinThreads - 1) / kBinThreads, 4 * std::max(r.sm_count_, 1));
        bin_problems_kernel<<<blocks, kBinThreads, 0, r.stream()>>>(batch, m.values, m.subtract, m.limit, n.values,
                                                                   n.subtract, n.limit, extras.skip, bounds, counts, lists);
        BATCHSOLVE_LAUNCH_CHECK("bin_problems_kernel");
    }
    if (tile_lists > 0) {
        TileScans scans;
        for (std::size_t i = 0; i < specs.size(); ++i) {
            if (!specs[i].config.tile_list) continue;
            TileScan& t = scans.scan[scans.count++];
            t.list = binned ? lists + bin_of[i] * std::size_t(batch) : nullptr;
            t.list_count = binned ? counts + bin_of[i] : nullptr;
            t.blk_m = specs[i].config.blk_m, t.blk_n = specs[i].config.blk_n;
            t.tile_end = tile_end[i];
        }
        scan_tiles_kernel<<<scans.count, kTileScanThreads, 0, r.stream()>>>(batch, m.values, m.subtract, m.limit, n.values,
                                                                            n.subtract, n.limit, extras.skip, scans);
        BATCHSOLVE_LAUNCH_CHECK("scan_tiles_kernel");
    }

    const blas3_detail::Offsets& o = extras.offsets;
    int batch_ = batch;
    const int* m_v = m.values; int m_sub = m.subtract, m_lim = m.limit;
    const int* n_v = n.values; int n_sub = n.subtract, n_lim = n.limit;
    const int* k_v = k.values; int k_sub = k.subtract, k_lim = k.limit;
    int a_row = o.a_row, a_col = o.a_col, b_row = o.b_row, b_col = o.b_col, c_row = o.c_row, c_col = o.c_col;
    const int* skip = extras.skip;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const std::size_t bin = bin_of[i];
        const codegen::blas3::GemmSpec& s = specs[i];
        const codegen::KernelResources resources = family.resources(s);
        const long long grid_x = (std::min(max_m, plan.bin_hi[bin]) + s.config.blk_m - 1) / s.config.blk_m;
        const long long grid_y = (std::min(max_n, plan.bin_hi[bin]) + s.config.blk_n - 1) / s.config.blk_n;
        const int* list = binned ? lists + bin * std::size_t(batch) : nullptr;
        const int* list_count = binned ? counts + bin : nullptr;
        const int* tiles = tile_end[i];
        void* listed_args[] = {&batch_, &m_v, &m_sub, &m_lim, &n_v, &n_sub, &n_lim, &k_v, &k_sub, &k_lim,
                               &alpha, &a, &lda, &a_row, &a_col, &b, &ldb, &b_row, &b_col,
                               &beta, &c, &ldc, &c_row, &c_col, &skip, &list, &list_count, &tiles};
        void* whole_args[] = {&batch_, &m_v, &m_sub, &m_lim, &n_v, &n_sub, &n_lim, &k_v, &k_sub, &k_lim,
                              &alpha, &a, &lda, &a_row, &a_col, &b, &ldb, &b_row, &b_col,
                              &beta, &c, &ldc, &c_row, &c_col, &skip, &tiles};
        // every tile of every problem at most once: the persistent grid never exceeds the tiles there can be
        const long long tiles_at_most = grid_x * grid_y * batch;
        const dim3 grid = s.config.tile_list
                              ? dim3(unsigned(std::min<long long>(tiles_at_most, (long long)std::max(kernels[i]->blocks_per_sm, 1) * std::max(r.sm_count_, 1))))
                              : dim3(unsigned(grid_x), unsigned(grid_y), unsigned(grid_z));
        BATCHSOLVE_CUDA_CHECK(cudaLaunchKernel(static_cast<const void*>(kernels[i]->function), grid,
                                               dim3(unsigned(resources.threads_per_block)),
                                               binned ? listed_args : whole_args, resources.shared_bytes, r.stream()));
        BATCHSOLVE_LAUNCH_CHECK("gemm_vbatched (generated)");
    }
}

// SYRK/HERK: C's triangle = alpha op(A) op(A)^T|H + beta C through the GEMM, the thread blocks of the
// other triangle exiting at once; SYR2K/HER2K: the same twice, the second adding alpha' op(B) op(A)^T|H.
template <class T>
BATCHSOLVE_BLAS3_RANK_K(T) {
    const bool herm = hermitian && is_complex_v<T>;
    const Operand left = trans == Op::no_trans ? Operand::no_trans : herm ? Operand::conj_trans : Operand::trans;
    const Operand right = trans == Op::no_trans ? (herm ? Operand::conj_trans : Operand::trans) : Operand::no_trans;
    GemmExtras extras;
    extras.part = uplo == Uplo::lower ? blas3_detail::Part::lower : blas3_detail::Part::upper;
    extras.real_diagonal = herm;
    extras.skip = skip;
    extras.config = config;
    const bool two = b != nullptr;
    gemm_vbatched<T>(left, right, n, n, k, alpha, a, lda, two ? b : a, two ? ldb : lda, beta, c, ldc, max_n, max_n,
                     max_k, batch, extras, ctx);
    if (two) {
        T alpha2 = alpha;
        if constexpr (is_complex_v<T>)
            if (herm) alpha2 = std::conj(alpha);
        gemm_vbatched<T>(left, right, n, n, k, alpha2, b, ldb, a, lda, T(1), c, ldc, max_n, max_n, max_k, batch,
                         extras, ctx);
    }
}

// SYMM/HEMM: the GEMM with the symmetric (Hermitian) operand read from its stored triangle.
template <class T>
BATCHSOLVE_BLAS3_SYMMETRIC_MM(T) {
    const bool herm = hermitian && is_complex_v<T>;
    const Operand full = herm ? (uplo == Uplo::lower ? Operand::hermitian_lower : Operand::hermitian_upper)
                              : (uplo == Uplo::lower ? Operand::symmetric_lower : Operand::symmetric_upper);
    GemmExtras extras;
    extras.skip = skip;
    if (side == Side::left)
        gemm_vbatched<T>(full, Operand::no_trans, m, n, m, alpha, a, lda, b, ldb, beta, c, ldc, max_m, max_n, max_m,
                         batch, extras, ctx);
    else
        gemm_vbatched<T>(Operand::no_trans, full, m, n, n, alpha, b, ldb, a, lda, beta, c, ldc, max_m, max_n, max_n,
                         batch, extras, ctx);
}

BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_BLAS3_ROUTINES)

}  // namespace batchsolve::cuda_backend
