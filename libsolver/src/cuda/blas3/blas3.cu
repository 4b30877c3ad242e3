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
// (problem, tile) pairs. How the bins run is the largest bin's entry's (GemmConfig::bin_launch,
// bin_order): one after another on the context's stream, or each on a stream of its own joined on the
// context's stream (side streams per thread and device, created on first use), or every bin in one
// launch of a fused kernel (codegen/blas3/gemm.hpp, GemmSpec::fused); a bin's problems as
// binned, or sorted by m * n * k, the largest first (a CUB segmented radix sort, one segment per bin).
// The GEMM path never uses ctx.workspace() (TRSM keeps its inverted blocks there while it
// calls the GEMM).
#include <algorithm>
#include <complex>
#include <cstdio>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

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
// keys (optional): beside each listed problem its m * n * k, saturated at 2^32 - 1 (the sort's key).
__global__ void bin_problems_kernel(int batch, const int* m_v, int m_sub, int m_lim, const int* n_v, int n_sub, int n_lim,
                                    const int* k_v, int k_sub, int k_lim, const int* skip, BinBounds bounds,
                                    int* counts, int* lists, unsigned* keys) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < batch; i += gridDim.x * blockDim.x) {
        if (skip && skip[i]) continue;
        const int m = effective_size(m_v, m_sub, m_lim, i), n = effective_size(n_v, n_sub, n_lim, i);
        if (m == 0 || n == 0) continue;
        const int size = m > n ? m : n;
        int b = 0;
        while (b + 1 < bounds.count && size > bounds.hi[b]) ++b;
        const long long slot = (long long)b * batch + atomicAdd(&counts[b], 1);
        lists[slot] = i;
        if (keys) {
            const unsigned long long work = (unsigned long long)m * n * effective_size(k_v, k_sub, k_lim, i);
            keys[slot] = work > 0xffffffffull ? 0xffffffffu : unsigned(work);
        }
    }
}

// The segments of the per-bin sort: bin b's list starts at b * batch and holds counts[b] problems.
__global__ void bin_segments_kernel(int bins, int batch, const int* counts, int* begin, int* end) {
    for (int b = threadIdx.x; b < bins; b += blockDim.x) {
        begin[b] = b * batch;
        end[b] = b * batch + counts[b];
    }
}

// The bits of the sort's keys: enough for m * n * k of the call's largest problem (fewer radix passes).
int key_bits(int max_m, int max_n, int max_k) {
    const unsigned long long most = (unsigned long long)max_m * max_n * std::max(max_k, 1);
    int bits = 1;
    while (bits < 32 && (most >> bits) != 0) ++bits;
    return bits;
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

// A configuration as its kernel sees it: the dispatch's fields (how the bins run) change no kernel.
GemmConfig kernel_config(GemmConfig c) {
    c.bin_launch = 0, c.bin_order = 0;
    return c;
}

// The tuning table's edge tile for a bin of size `hi` whose tile is `tile`, when it divides it and differs.
bool edge_config(Precision p, int hi, const GemmConfig& tile, int arch, GemmConfig& edge) {
    const TunedEntry e = tuned_config("gemm_vbatched_edge", p, LayoutKind::column_major, hi, arch);
    if (!e.found) return false;
    edge = kernel_config(parse_gemm_config(e.config));
    return edge != tile && edge.blk_m <= tile.blk_m && edge.blk_n <= tile.blk_n && tile.blk_m % edge.blk_m == 0 &&
           tile.blk_n % edge.blk_n == 0;
}

// The bins of a call whose largest problem is max_mn: kFirstBinSize, then doubling up to max_mn, each
// with default_gemm_config at its upper bound; neighbours with the same kernel configuration merged.
// dispatch: the largest bin's entry (its bin_launch and bin_order decide how the bins run).
std::vector<GemmBin> gemm_bins(Precision p, int max_mn, int max_k, bool triangle, int arch, GemmConfig& dispatch) {
    std::vector<GemmBin> bins;
    for (long long size = kFirstBinSize;; size *= 2) {
        const int hi = size >= max_mn ? max_mn : int(size);
        const GemmConfig entry = default_gemm_config(p, hi, hi, max_k, triangle, arch);
        const GemmConfig c = kernel_config(entry);
        if (!bins.empty() && bins.back().config == c) bins.back().hi = hi;
        else bins.push_back({hi, c, false, GemmConfig{}});
        if (hi == max_mn) {
            dispatch = entry;
            break;
        }
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
    GemmConfig dispatch;
    if (config) bins.push_back({max_mn, kernel_config(*config), false, GemmConfig{}});
    else if (constant_sizes || max_mn <= kFirstBinSize)
        bins.push_back({max_mn, kernel_config(family.default_config({spec.precision, max_m, max_n, max_k, triangle, arch})), false, GemmConfig{}});
    else bins = gemm_bins(spec.precision, max_mn, max_k, triangle, arch, dispatch);
    const bool binned = bins.size() > 1;
    GemmPlan plan;
    if (binned) plan.bin_launch = dispatch.bin_launch, plan.bin_order = dispatch.bin_order;
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
    if (plan.bin_launch == 2) {  // the bins' kernels as the paths of one, where they can be
        codegen::blas3::GemmSpec fused = spec;
        for (const codegen::blas3::GemmSpec& s : plan.specs) fused.fused.push_back(s.config);
        const bool whole = std::all_of(plan.specs.begin(), plan.specs.end(),
                                       [](const codegen::blas3::GemmSpec& s) { return s.region == codegen::blas3::GemmRegion::all; });
        if (whole && family.can_implement(fused).empty()) {
            plan.path_bin = plan.bin_of;
            plan.specs = {fused};
            plan.bin_of = {plan.path_bin.front()};
        } else {
            plan.bin_launch = 0;
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

// The side streams of bin_launch 1 on this thread and device: stream i at the device's greatest
// priority plus i (clamped to its least), so that the block scheduler dispatches a larger bin's
// blocks first and a smaller bin's fill the SMs its last wave leaves idle; a fork event recorded on
// the context's stream that every side stream waits for, and one join event per side stream that the
// context's stream waits for (capturable: a graph gets the fork and the join as edges). Per thread,
// because an event recorded by one call and waited for by another thread's would join the wrong work;
// created on first use and kept for the thread's life (a handful of handles).
struct BinStreams {
    std::vector<cudaStream_t> streams;
    std::vector<cudaEvent_t> joins;
    cudaEvent_t fork = nullptr;
};
BinStreams& bin_streams(int device, std::size_t count) {
    thread_local std::vector<BinStreams> per_device;
    if (per_device.size() <= std::size_t(device)) per_device.resize(std::size_t(device) + 1);
    BinStreams& s = per_device[std::size_t(device)];
    if (!s.fork) BATCHSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming));
    int least = 0, greatest = 0;
    if (s.streams.size() < count) BATCHSOLVE_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    while (s.streams.size() < count) {
        // greatest is the numerically smallest priority; each later stream one step toward least
        const int priority = std::min(least, greatest + int(s.streams.size()));
        cudaStream_t stream = nullptr;
        cudaEvent_t join = nullptr;
        BATCHSOLVE_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, priority));
        BATCHSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
        s.streams.push_back(stream), s.joins.push_back(join);
    }
    return s;
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
    std::string config = to_string(s.config);
    if (!s.fused.empty()) {
        config = "[";
        for (std::size_t i = 0; i < s.fused.size(); ++i) config += (i ? "," : "") + to_string(s.fused[i]);
        config += "]";
    }
    std::string part = codegen::blas3::to_string(s.part);
    if (s.region == codegen::blas3::GemmRegion::interior) part += "/interior";
    if (s.region == codegen::blas3::GemmRegion::edge) part += "/edge" + std::to_string(s.edge_m) + "x" + std::to_string(s.edge_n);
    return std::string("gemm ") + precision_letter(s.precision) + " " + codegen::blas3::to_string(s.op_a) + " " +
           codegen::blas3::to_string(s.op_b) + " " + part + " " + (s.real_diagonal ? "1 " : "0 ") +
           (s.full_tiles ? "1 " : "0 ") + (s.problem_list || !s.fused.empty() ? "1 " : "0 ") + config;
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
    if (!config_text.empty() && config_text[0] == '[') {  // a fused kernel: its paths' flat JSON objects
        std::size_t open = std::string::npos;
        for (std::size_t i = 1; i < config_text.size(); ++i) {
            if (config_text[i] == '{') open = i;
            if (config_text[i] == '}' && open != std::string::npos)
                spec.fused.push_back(parse_gemm_config(config_text.substr(open, i + 1 - open))), open = std::string::npos;
        }
        if (spec.fused.empty()) bad("config", "a JSON array of configurations");
        spec.problem_list = false;
    } else {
        spec.config = parse_gemm_config(config_text);
    }
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
        if (!specs[i].fused.empty()) continue;  // one-dimensional grid: its bound is checked at the launch
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
    // bin_order 1: the lists sorted per bin by their keys (CUB's offsets are int: every bin's list slots
    // within 2^31 - 1, else the lists stay as binned)
    const std::size_t bins = plan.bin_hi.size();
    const bool sorted = binned && plan.bin_order == 1 && (long long)bins * batch <= 2147483647LL;
    const int bits = key_bits(max_m, max_n, max_k);
    std::size_t sort_bytes = 0;
    if (sorted)
        BATCHSOLVE_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(
            nullptr, sort_bytes, static_cast<const unsigned*>(nullptr), static_cast<unsigned*>(nullptr),
            static_cast<const int*>(nullptr), static_cast<int*>(nullptr), int(bins * batch), int(bins),
            static_cast<const int*>(nullptr), static_cast<const int*>(nullptr), 0, bits, r.stream()));
    unsigned* keys = nullptr;
    unsigned* keys_sorted = nullptr;
    int* lists_sorted = nullptr;
    int* segment_begin = nullptr;
    int* segment_end = nullptr;
    void* sort_temp = nullptr;
    if (binned || tile_lists > 0) {
        detail::Carve carve;
        const std::size_t counts_at = carve.reserve<int>(binned ? bins : 0);
        const std::size_t lists_at = carve.reserve<int>(binned ? bins * std::size_t(batch) : 0);
        const std::size_t tiles_at = carve.reserve<int>(tile_lists * std::size_t(batch));
        const std::size_t sorted_at = carve.reserve<int>(sorted ? bins * std::size_t(batch) : 0);
        const std::size_t keys_at = carve.reserve<unsigned>(sorted ? bins * std::size_t(batch) : 0);
        const std::size_t keys_sorted_at = carve.reserve<unsigned>(sorted ? bins * std::size_t(batch) : 0);
        const std::size_t begin_at = carve.reserve<int>(sorted ? bins : 0);
        const std::size_t end_at = carve.reserve<int>(sorted ? bins : 0);
        const std::size_t temp_at = carve.reserve<unsigned char>(sorted ? sort_bytes : 0);
        void* base = r.scratch(carve.size());
        counts = binned ? detail::Carve::at<int>(base, counts_at) : nullptr;
        lists = binned ? detail::Carve::at<int>(base, lists_at) : nullptr;
        for (std::size_t i = 0, j = 0; i < specs.size(); ++i)
            if (specs[i].config.tile_list) tile_end[i] = detail::Carve::at<int>(base, tiles_at) + j++ * std::size_t(batch);
        if (sorted) {
            lists_sorted = detail::Carve::at<int>(base, sorted_at);
            keys = detail::Carve::at<unsigned>(base, keys_at);
            keys_sorted = detail::Carve::at<unsigned>(base, keys_sorted_at);
            segment_begin = detail::Carve::at<int>(base, begin_at);
            segment_end = detail::Carve::at<int>(base, end_at);
            sort_temp = detail::Carve::at<unsigned char>(base, temp_at);
        }
    }
    if (binned) {
        BinBounds bounds;
        bounds.count = int(bins);
        for (std::size_t b = 0; b < bins; ++b) bounds.hi[b] = plan.bin_hi[b];
        BATCHSOLVE_CUDA_CHECK(cudaMemsetAsync(counts, 0, bins * sizeof(int), r.stream()));
        const int blocks = std::min((batch + kBinThreads - 1) / kBinThreads, 4 * std::max(r.sm_count_, 1));
        bin_problems_kernel<<<blocks, kBinThreads, 0, r.stream()>>>(batch, m.values, m.subtract, m.limit, n.values,
                                                                   n.subtract, n.limit, k.values, k.subtract, k.limit,
                                                                   extras.skip, bounds, counts, lists, keys);
        BATCHSOLVE_LAUNCH_CHECK("bin_problems_kernel");
    }
    if (sorted) {
        bin_segments_kernel<<<1, 32, 0, r.stream()>>>(int(bins), batch, counts, segment_begin, segment_end);
        BATCHSOLVE_LAUNCH_CHECK("bin_segments_kernel");
        // slots past a bin's count are outside every segment: neither read nor written
        BATCHSOLVE_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(
            sort_temp, sort_bytes, keys, keys_sorted, lists, lists_sorted, int(bins * batch), int(bins), segment_begin,
            segment_end, 0, bits, r.stream()));
        lists = lists_sorted;
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
    if (plan.bin_launch == 2) {
        // the fused kernel: path i (bin path_bin[i], the largest first) on the blocks [end[i-1], end[i]),
        // its grid as the bin's own kernel would have (ceil(max / blk) x ceil(max / blk) x z), every z
        // extent one value so that the whole grid stays within 2^31 - 1 blocks
        const codegen::blas3::GemmSpec& s = specs.front();
        const std::size_t paths = s.fused.size();
        std::vector<int> table(codegen::blas3::kFusedTableFields * paths);
        long long per_z = 0;
        for (std::size_t i = 0; i < paths; ++i) {
            const int hi = plan.bin_hi[plan.path_bin[i]];
            const long long gx = (std::min(max_m, hi) + s.fused[i].blk_m - 1) / s.fused[i].blk_m;
            const long long gy = (std::min(max_n, hi) + s.fused[i].blk_n - 1) / s.fused[i].blk_n;
            table[paths + i] = int(gx), table[2 * paths + i] = int(gy), table[4 * paths + i] = int(plan.path_bin[i]);
            per_z += gx * gy;
        }
        if (per_z > 2147483647LL)
            throw InvalidArgument("gemm_vbatched", "config.bin_launch", "at most 2^31 - 1 blocks per problem in one launch (else 0 or 1)");
        const int gz = int(std::min<long long>({(long long)grid_z, 2147483647LL / per_z}));
        long long end = 0;
        for (std::size_t i = 0; i < paths; ++i) {
            table[3 * paths + i] = gz;
            end += (long long)table[paths + i] * table[2 * paths + i] * gz;
            table[i] = int(end);
        }
        const codegen::KernelResources resources = family.resources(s);
        void* args[] = {&batch_, &m_v, &m_sub, &m_lim, &n_v, &n_sub, &n_lim, &k_v, &k_sub, &k_lim,
                        &alpha, &a, &lda, &a_row, &a_col, &b, &ldb, &b_row, &b_col,
                        &beta, &c, &ldc, &c_row, &c_col, &skip, &lists, &counts, table.data()};
        BATCHSOLVE_CUDA_CHECK(cudaLaunchKernel(static_cast<const void*>(kernels.front()->function), dim3(unsigned(end)),
                                               dim3(unsigned(resources.threads_per_block)), args, resources.shared_bytes,
                                               r.stream()));
        BATCHSOLVE_LAUNCH_CHECK("gemm_vbatched (generated, fused)");
        return;
    }
    // bin_launch 1: kernel i on side stream i, after the fork (everything above) and joined after
    const bool streamed = binned && plan.bin_launch == 1;
    BinStreams* side = streamed ? &bin_streams(r.device_, specs.size()) : nullptr;
    if (streamed) BATCHSOLVE_CUDA_CHECK(cudaEventRecord(side->fork, r.stream()));
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const cudaStream_t stream = streamed ? side->streams[i] : r.stream();
        if (streamed) BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(stream, side->fork, 0));
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
                                               binned ? listed_args : whole_args, resources.shared_bytes, stream));
        BATCHSOLVE_LAUNCH_CHECK("gemm_vbatched (generated)");
        if (streamed) BATCHSOLVE_CUDA_CHECK(cudaEventRecord(side->joins[i], stream));
    }
    if (streamed)
        for (std::size_t i = 0; i < specs.size(); ++i) BATCHSOLVE_CUDA_CHECK(cudaStreamWaitEvent(r.stream(), side->joins[i], 0));
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
