// The GPU engine's volume stages; see device_stages.hpp. Bandwidth: each pass of the smoothing,
// prefilter or gradient reads and writes a volume once (0.5 GB each way at 512^3), a fraction of a
// millisecond at the H200's ~4 TB/s; the shift search is a few batched 3-D FFTs per chunk.
#include "device_stages.hpp"

#include <cufft.h>
#include "batchsolve_io/shared_library.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "volume_math.hpp"

namespace dvc::device {
namespace {

#define DVC_STAGE_CHECK(call)                                                                               \
    do {                                                                                                    \
        const cudaError_t err_ = (call);                                                                    \
        if (err_ != cudaSuccess) throw Error(std::string("CUDA: ") + #call + ": " + cudaGetErrorString(err_)); \
    } while (0)
#define DVC_CUFFT_CHECK(call)                                                                               \
    do {                                                                                                    \
        const cufftResult r_ = (call);                                                                      \
        if (r_ != CUFFT_SUCCESS) throw Error(std::string("cuFFT: ") + #call + " failed (cufftResult " + std::to_string(int(r_)) + ")"); \
    } while (0)

constexpr int kThreads = 256;
// Staging buffers of the upload: large enough that a DMA's set-up time is negligible, small enough
// that the first chunk starts moving at once and that pinning them stays short (two 32 MiB buffers
// took 21 ms on the H200 host, on the critical path of a 192^3 run: the engine waits for them).
// Smaller volumes get smaller buffers (an eighth of a volume, at least kUploadChunkMinBytes): at
// 192^3 (28 MiB) two 4 MiB buffers instead of two 16 MiB ones.
constexpr std::size_t kUploadChunkBytes = std::size_t(16) << 20;
constexpr std::size_t kUploadChunkMinBytes = std::size_t(2) << 20;
// Threads that fill a staging buffer.
constexpr std::size_t kCopyThreads = 8;
// Device memory the shift search may hold for one chunk of windows.
constexpr std::size_t kShiftSearchBudget = std::size_t(1) << 30;

unsigned blocks_for(std::int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }

#define DVC_STR2(x) #x
#define DVC_STR(x) DVC_STR2(x)
// The seven cuFFT functions of the shift search, from the library loaded on first use (or by
// preload_libraries() while the GPU context starts): linked, libcufft was mapped before main of
// every dvc process, --backend cpu and --help included.
struct CufftApi {
    decltype(&cufftCreate) create = nullptr;
    decltype(&cufftSetAutoAllocation) set_auto_allocation = nullptr;
    decltype(&cufftMakePlanMany) make_plan_many = nullptr;
    decltype(&cufftSetStream) set_stream = nullptr;
    decltype(&cufftSetWorkArea) set_work_area = nullptr;
    decltype(&cufftExecR2C) exec_r2c = nullptr;
    decltype(&cufftExecC2R) exec_c2r = nullptr;
};
const CufftApi& cufft() {
    static const CufftApi api = [] {
        const batchsolve::io::SharedLibrary<Error> library("cuFFT", "libcufft.so." DVC_STR(CUFFT_VER_MAJOR));
        CufftApi a;
        library.get(a.create, "cufftCreate"), library.get(a.set_auto_allocation, "cufftSetAutoAllocation");
        library.get(a.make_plan_many, "cufftMakePlanMany"), library.get(a.set_stream, "cufftSetStream");
        library.get(a.set_work_area, "cufftSetWorkArea");
        library.get(a.exec_r2c, "cufftExecR2C"), library.get(a.exec_c2r, "cufftExecC2R");
        return a;
    }();
    return api;
}

// ---- Gaussian ----------------------------------------------------------------------------------

struct GaussianTaps {
    double w[2 * 30 + 1];  // sigma <= 10 voxels: radius <= 30 (correlate refuses larger)
    int radius;
};

__global__ void gaussian_axis_kernel(const float* in, float* out, long long nz, long long ny, long long nx, int axis, GaussianTaps taps) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= nz * ny * nx) return;
    const long long x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
    const long long n = axis == 0 ? nz : axis == 1 ? ny : nx;
    const long long stride = axis == 0 ? ny * nx : axis == 1 ? nx : 1;
    const long long k = axis == 0 ? z : axis == 1 ? y : x;
    const float* line = in + (i - k * stride);
    out[i] = float(gaussian_at(line, n, stride, k, taps.w, taps.radius));
}

// ---- prefilter ---------------------------------------------------------------------------------

// Line l of `lines`: base offset l_outer * outer_stride + l_inner, elements at `stride`.
__global__ void prefilter_lines_kernel(float* v, long long lines, long long inner, long long outer_stride, long long n,
                                       long long stride, SplinePoles poles) {
    const long long l = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (l >= lines) return;
    float* line = v + (l / inner) * outer_stride + (l % inner);
    prefilter_line_strided(line, n, stride, poles);
}

constexpr int kTile = 32;
// out[z][x][y] = in[z][y][x] per slice (dims nz, ny, nx of `in`), 32x32 tiles through shared memory.
__global__ void transpose_slices_kernel(const float* in, float* out, long long ny, long long nx) {
    __shared__ float tile[kTile][kTile + 1];
    const long long z = blockIdx.z;
    const long long x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile;
    const float* src = in + z * ny * nx;
    float* dst = out + z * ny * nx;
    for (int r = threadIdx.y; r < kTile; r += blockDim.y) {
        const long long y = y0 + r, x = x0 + threadIdx.x;
        if (y < ny && x < nx) tile[r][threadIdx.x] = src[y * nx + x];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < kTile; r += blockDim.y) {
        const long long x = x0 + r, y = y0 + threadIdx.x;
        if (y < ny && x < nx) dst[x * ny + y] = tile[threadIdx.x][r];
    }
}

void transpose_slices(const float* in, float* out, const Dims& d, cudaStream_t stream) {
    const dim3 grid(unsigned((d[2] + kTile - 1) / kTile), unsigned((d[1] + kTile - 1) / kTile), unsigned(d[0]));
    if (d[0] > 65535) throw Error("GPU prefilter: " + std::to_string(d[0]) + " slices exceed the 65535 of one launch");
    transpose_slices_kernel<<<grid, dim3(kTile, 8), 0, stream>>>(in, out, d[1], d[2]);
}

// ---- gradients, downsampling -------------------------------------------------------------------

__global__ void gradients_kernel(const float* src, long long nz, long long ny, long long nx, bool cubic, float* gz, float* gy, float* gx) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= nz * ny * nx) return;
    const long long x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
    float g[3];
    gradient_at(src, nz, ny, nx, z, y, x, cubic, g);
    gz[i] = g[0], gy[i] = g[1], gx[i] = g[2];
}

__global__ void downsample_kernel(const float* fine, long long fny, long long fnx, float* coarse, long long nz, long long ny, long long nx) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= nz * ny * nx) return;
    const long long x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
    coarse[i] = downsample_at(fine, fny, fnx, z, y, x);
}

// ---- shift search ------------------------------------------------------------------------------

struct SearchGeometry {
    long long dims[3];
    int s, r, w, R;          // subset, radius, window w = s + 2 r, box edge R = 2 r + 1
    long long begin, count;  // the chunk's first point and the number of points in all
};

// One block per window: the reference subset minus its mean, zero-padded to w^3, and the deformed
// window (zero outside the volume) around start + predicted.
__global__ void gather_kernel(const float* ref, const float* def, SearchGeometry g, const long long* starts, const int* predicted,
                              float* f, float* gw) {
    const long long k = g.begin + blockIdx.x;
    const long long w3 = (long long)g.w * g.w * g.w;
    float* fk = f + blockIdx.x * w3;
    float* gk = gw + blockIdx.x * w3;
    if (k >= g.count) {
        for (long long i = threadIdx.x; i < w3; i += blockDim.x) fk[i] = 0.0f, gk[i] = 0.0f;
        return;
    }
    const long long* st = starts + 3 * k;
    const int* pr = predicted + 3 * k;
    const long long ny = g.dims[1], nx = g.dims[2];
    const int s = g.s, w = g.w;
    __shared__ double partial[kThreads];
    double sum = 0;
    for (long long i = threadIdx.x; i < (long long)s * s * s; i += blockDim.x) {
        const long long a = i / (s * s), b = (i / s) % s, c = i % s;
        sum += ref[((st[0] + a) * ny + (st[1] + b)) * nx + (st[2] + c)];
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) partial[threadIdx.x] += partial[threadIdx.x + h];
        __syncthreads();
    }
    const double mean = partial[0] / double((long long)s * s * s);
    const long long o[3] = {st[0] + pr[0] - g.r, st[1] + pr[1] - g.r, st[2] + pr[2] - g.r};
    for (long long i = threadIdx.x; i < w3; i += blockDim.x) {
        const long long a = i / (w * w), b = (i / w) % w, c = i % w;
        fk[i] = (a < s && b < s && c < s) ? float(ref[((st[0] + a) * ny + (st[1] + b)) * nx + (st[2] + c)] - mean) : 0.0f;
        const long long z = o[0] + a, y = o[1] + b, x = o[2] + c;
        const bool in = z >= 0 && y >= 0 && x >= 0 && z < g.dims[0] && y < ny && x < nx;
        gk[i] = in ? def[(z * ny + y) * nx + x] : 0.0f;
    }
}

// Box sums of g and g^2 over s consecutive voxels, one axis at a time (sliding sums in double):
// along x: X[a][b][c] (w, w, R); along y: Y[a][b][c] (w, R, R); along z: S[a][b][c] (R, R, R).
__global__ void box_x_kernel(const float* gw, SearchGeometry g, double* X1, double* X2) {
    const long long w3 = (long long)g.w * g.w * g.w;
    const float* gk = gw + blockIdx.x * w3;
    const long long rows = (long long)g.w * g.w, out = rows * g.R;
    for (long long row = threadIdx.x; row < rows; row += blockDim.x) {
        const float* line = gk + row * g.w;
        double s1 = 0, s2 = 0;
        for (int x = 0; x < g.s; ++x) s1 += line[x], s2 += double(line[x]) * line[x];
        double* o1 = X1 + blockIdx.x * out + row * g.R;
        double* o2 = X2 + blockIdx.x * out + row * g.R;
        for (int c = 0; c < g.R; ++c) {
            o1[c] = s1, o2[c] = s2;
            if (c + 1 < g.R) {
                const double add = line[c + g.s], sub = line[c];
                s1 += add - sub, s2 += add * add - sub * sub;
            }
        }
    }
}

__global__ void box_y_kernel(const double* X1, const double* X2, SearchGeometry g, double* Y1, double* Y2) {
    const int w = g.w, R = g.R;
    const long long in_size = (long long)w * w * R, out_size = (long long)w * R * R;
    for (long long col = threadIdx.x; col < (long long)w * R; col += blockDim.x) {
        const long long a = col / R, c = col % R;
        const double* i1 = X1 + blockIdx.x * in_size + a * w * R + c;
        const double* i2 = X2 + blockIdx.x * in_size + a * w * R + c;
        double s1 = 0, s2 = 0;
        for (int y = 0; y < g.s; ++y) s1 += i1[y * R], s2 += i2[y * R];
        for (int b = 0; b < R; ++b) {
            Y1[blockIdx.x * out_size + (a * R + b) * R + c] = s1;
            Y2[blockIdx.x * out_size + (a * R + b) * R + c] = s2;
            if (b + 1 < R) s1 += i1[(b + g.s) * R] - i1[b * R], s2 += i2[(b + g.s) * R] - i2[b * R];
        }
    }
}

__global__ void box_z_kernel(const double* Y1, const double* Y2, SearchGeometry g, double* S1, double* S2) {
    const int R = g.R;
    const long long in_size = (long long)g.w * R * R, out_size = (long long)R * R * R;
    for (long long col = threadIdx.x; col < (long long)R * R; col += blockDim.x) {
        const double* i1 = Y1 + blockIdx.x * in_size + col;
        const double* i2 = Y2 + blockIdx.x * in_size + col;
        double s1 = 0, s2 = 0;
        for (int z = 0; z < g.s; ++z) s1 += i1[(long long)z * R * R], s2 += i2[(long long)z * R * R];
        for (int a = 0; a < R; ++a) {
            S1[blockIdx.x * out_size + a * R * R + col] = s1;
            S2[blockIdx.x * out_size + a * R * R + col] = s2;
            if (a + 1 < R) {
                s1 += i1[(long long)(a + g.s) * R * R] - i1[(long long)a * R * R];
                s2 += i2[(long long)(a + g.s) * R * R] - i2[(long long)a * R * R];
            }
        }
    }
}

// F <- conj(F) G (the spectrum of the cross-correlation sum_x f(x) g(x + offset)).
__global__ void conj_multiply_kernel(cufftComplex* F, const cufftComplex* G, long long count) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= count) return;
    const cufftComplex a = F[i], b = G[i];
    F[i] = make_cuFloatComplex(a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x);
}

// One block per window: the best admissible offset by score corr / sqrt(energy); ties go to the
// smaller linear offset index, as on the CPU (which keeps the first strictly better one).
__global__ void score_kernel(const float* corr, const double* S1, const double* S2, SearchGeometry g, const long long* starts,
                             const int* predicted, int* shifts) {
    const long long k = g.begin + blockIdx.x;
    if (k >= g.count) return;
    const int R = g.R, s = g.s, w = g.w;
    const long long boxes = (long long)R * R * R;
    const float* ck = corr + blockIdx.x * (long long)w * w * w;
    const double* s1 = S1 + blockIdx.x * boxes;
    const double* s2 = S2 + blockIdx.x * boxes;
    const long long* st = starts + 3 * k;
    const int* pr = predicted + 3 * k;
    const double n = double((long long)s * s * s);
    double best = -INFINITY;
    long long best_index = boxes;
    for (long long q = threadIdx.x; q < boxes; q += blockDim.x) {
        const int a = int(q / (R * R)), b = int((q / R) % R), c = int(q % R);
        const int off[3] = {a, b, c};
        bool inside = true;
        for (int i = 0; i < 3; ++i) inside = inside && shift_admissible(st[i], pr[i] + off[i] - g.r, s, g.dims[i]);
        if (!inside) continue;
        const double energy = s2[q] - s1[q] * s1[q] / n;
        if (!(energy > 0)) continue;
        const double score = double(ck[((long long)a * w + b) * w + c]) / sqrt(energy);
        if (score > best) best = score, best_index = q;
    }
    __shared__ double best_score[kThreads];
    __shared__ long long best_at[kThreads];
    best_score[threadIdx.x] = best, best_at[threadIdx.x] = best_index;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) {
            const double o = best_score[threadIdx.x + h];
            const long long oi = best_at[threadIdx.x + h];
            if (o > best_score[threadIdx.x] || (o == best_score[threadIdx.x] && oi < best_at[threadIdx.x]))
                best_score[threadIdx.x] = o, best_at[threadIdx.x] = oi;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const long long q = best_at[0];
        const bool found = q < boxes;
        const int off[3] = {int(q / (R * R)), int((q / R) % R), int(q % R)};
        for (int i = 0; i < 3; ++i) shifts[3 * k + i] = found ? pr[i] + off[i] - g.r : pr[i];
    }
}

// Device buffers freed on scope exit (the stages' temporaries).
class Buffers {
public:
    ~Buffers() {
        for (void* p : blocks_) cudaFree(p);
    }
    template <class T>
    T* allocate(std::size_t count) {
        void* p = nullptr;
        DVC_STAGE_CHECK(cudaMalloc(&p, std::max<std::size_t>(count, 1) * sizeof(T)));
        blocks_.push_back(p);
        bytes_ += count * sizeof(T);
        return static_cast<T*>(p);
    }
    std::size_t bytes() const { return bytes_; }

private:
    std::vector<void*> blocks_;
    std::size_t bytes_ = 0;
};

// cuFFT plans of the shift search, kept for the process: a plan's creation (and its work area)
// costs milliseconds, and a correlation runs the search on every pyramid level, for the seeds and
// again for the points no seed reached, with the same few window sizes.
cufftHandle cached_plan(int w, std::size_t chunk, cufftType type, std::size_t* work_bytes) {
    struct Entry {
        int w;
        std::size_t chunk;
        cufftType type;
        cufftHandle handle;
        std::size_t work;
    };
    // Made ahead on another thread too (make_shift_search_plans): the lock is held while a plan is
    // made, so a search that needs it meanwhile waits for it instead of making a second one.
    static std::mutex mutex;
    static std::vector<Entry> plans;
    std::lock_guard<std::mutex> lock(mutex);
    for (const Entry& e : plans)
        if (e.w == w && e.chunk == chunk && e.type == type) {
            *work_bytes = e.work;
            return e.handle;
        }
    const int w3 = w * w * w, wc = w * w * (w / 2 + 1);
    int n[3] = {w, w, w};
    // The work area is the caller's (cufftSetWorkArea), so a kept plan holds no device memory.
    cufftHandle h = 0;
    DVC_CUFFT_CHECK(cufft().create(&h));
    DVC_CUFFT_CHECK(cufft().set_auto_allocation(h, 0));
    std::size_t work = 0;
    if (type == CUFFT_R2C) DVC_CUFFT_CHECK(cufft().make_plan_many(h, 3, n, nullptr, 1, w3, nullptr, 1, wc, CUFFT_R2C, int(chunk), &work));
    else DVC_CUFFT_CHECK(cufft().make_plan_many(h, 3, n, nullptr, 1, wc, nullptr, 1, w3, CUFFT_C2R, int(chunk), &work));
    plans.push_back({w, chunk, type, h, work});
    *work_bytes = work;
    return h;
}

std::size_t window_bytes(int s, int r) {
    const std::size_t w = std::size_t(s) + 2 * r, R = 2 * std::size_t(r) + 1;
    return 2 * w * w * w * sizeof(float) + 2 * w * w * (w / 2 + 1) * sizeof(cufftComplex) + 2 * w * w * R * sizeof(double) +
           2 * w * R * R * sizeof(double) + 2 * R * R * R * sizeof(double);
}

}  // namespace

namespace {

// The threads that fill the staging buffers, started once per process (a chunk's fill used to
// start and join its own threads: 7 per chunk, 448 for two 512^3 volumes) and kept until it ends.
// run() hands part p to worker p - 1, does part 0 itself and returns when every part is done.
class FillWorkers {
public:
    explicit FillWorkers(std::size_t workers) {
        for (std::size_t w = 0; w < workers; ++w) threads_.emplace_back([this, w] { loop(w); });
    }
    std::size_t size() const { return threads_.size() + 1; }
    void run(std::size_t parts, const std::function<void(std::size_t)>& part) {
        if (parts > size()) throw Error("upload: " + std::to_string(parts) + " parts for " + std::to_string(size()) + " fill threads");
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = &part, parts_ = parts, finished_ = 0, error_ = nullptr;
            ++generation_;
        }
        start_.notify_all();
        std::exception_ptr mine;
        try {
            if (parts > 0) part(0);
        } catch (...) {
            mine = std::current_exception();
        }
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [&] { return finished_ == threads_.size(); });
        if (mine) std::rethrow_exception(mine);
        if (error_) std::rethrow_exception(error_);
    }

private:
    void loop(std::size_t w) {
        std::uint64_t seen = 0;
        for (;;) {
            std::unique_lock<std::mutex> lock(mutex_);
            start_.wait(lock, [&] { return generation_ != seen; });
            seen = generation_;
            const auto* job = job_;
            const std::size_t parts = parts_;
            lock.unlock();
            std::exception_ptr failed;
            if (w + 1 < parts) {
                try {
                    (*job)(w + 1);
                } catch (...) {
                    failed = std::current_exception();
                }
            }
            lock.lock();
            if (failed && !error_) error_ = failed;
            if (++finished_ == threads_.size()) done_.notify_one();
        }
    }
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable start_, done_;
    const std::function<void(std::size_t)>* job_ = nullptr;
    std::size_t parts_ = 0, finished_ = 0;
    std::uint64_t generation_ = 0;
    std::exception_ptr error_;
};

FillWorkers& fill_workers() {
    // Never destroyed: its threads wait until the process ends.
    static FillWorkers* workers = new FillWorkers(std::min<std::size_t>(kCopyThreads, std::max(1u, std::thread::hardware_concurrency())) - 1);
    return *workers;
}

}  // namespace

// Host copy into a staging buffer on several threads: one thread's memcpy (~5-10 GB/s) would be
// slower than the DMA that follows it.
static void parallel_copy(float* dst, const float* src, std::size_t count) {
    FillWorkers& workers = fill_workers();
    const std::size_t part = (count + workers.size() - 1) / workers.size();
    workers.run(workers.size(), [&](std::size_t t) {
        const std::size_t first = t * part;
        if (first < count) std::memcpy(dst + first, src + first, std::min(part, count - first) * sizeof(float));
    });
}

namespace {

// The two pinned staging buffers of the uploads and their events, made once per process (pinning
// 32 MiB takes milliseconds; the GPU warm-up makes them while the volumes are read) and kept until
// the process ends, when the driver releases them.
struct UploadStaging {
    std::mutex mutex;
    std::size_t chunk_bytes = 0;  // chosen by the first reservation
    float* buffer[2] = {nullptr, nullptr};
    cudaEvent_t done[2] = {nullptr, nullptr};
};

UploadStaging& upload_staging() {
    static UploadStaging* staging = new UploadStaging;  // never destroyed: outlives the CUDA runtime's exit
    return *staging;
}

// Allocates the staging buffers if they are not yet there; the caller holds the mutex.
void reserve_locked(UploadStaging& s, std::size_t volume_floats) {
    if (s.chunk_bytes == 0) s.chunk_bytes = upload_chunk_bytes(volume_floats);
    for (int b = 0; b < 2; ++b) {
        if (!s.buffer[b]) DVC_STAGE_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&s.buffer[b]), s.chunk_bytes, cudaHostAllocDefault));
        if (!s.done[b]) DVC_STAGE_CHECK(cudaEventCreateWithFlags(&s.done[b], cudaEventDisableTiming));
    }
}

}  // namespace

std::size_t upload_chunk_bytes(std::size_t volume_floats) {
    if (volume_floats == 0) return kUploadChunkBytes;
    const std::size_t eighth = (volume_floats * sizeof(float) / 8 + (std::size_t(1) << 20) - 1) & ~((std::size_t(1) << 20) - 1);
    return std::clamp(eighth, kUploadChunkMinBytes, kUploadChunkBytes);
}

void reserve_upload_staging(std::size_t volume_floats) {
    fill_workers();
    UploadStaging& s = upload_staging();
    std::lock_guard<std::mutex> lock(s.mutex);
    reserve_locked(s, volume_floats);
}

namespace {

// Moves `count` floats to dst through the two staging buffers: fill(first, n, buffer) puts elements
// first..first+n of the source into a buffer while the other one's DMA runs. Each buffer's previous
// DMA (an earlier upload's, on any stream) has finished before it is refilled: the events are
// recorded after every copy and waited for before the fill.
template <class Fill>
void staged_upload(float* dst, std::size_t count, cudaStream_t stream, const Fill& fill) {
    UploadStaging& s = upload_staging();
    std::lock_guard<std::mutex> lock(s.mutex);
    reserve_locked(s, count);
    const std::size_t chunk = s.chunk_bytes / sizeof(float);
    try {
        for (std::size_t first = 0, i = 0; first < count; first += chunk, ++i) {
            const int b = int(i % 2);
            const std::size_t n = std::min(chunk, count - first);
            DVC_STAGE_CHECK(cudaEventSynchronize(s.done[b]));
            fill(first, n, s.buffer[b]);
            DVC_STAGE_CHECK(cudaMemcpyAsync(dst + first, s.buffer[b], n * sizeof(float), cudaMemcpyHostToDevice, stream));
            DVC_STAGE_CHECK(cudaEventRecord(s.done[b], stream));
        }
        DVC_STAGE_CHECK(cudaStreamSynchronize(stream));
    } catch (...) {
        cudaStreamSynchronize(stream);
        throw;
    }
}

}  // namespace

void upload(float* dst, const float* host, std::size_t count, cudaStream_t stream) {
    staged_upload(dst, count, stream, [&](std::size_t first, std::size_t n, float* buffer) { parallel_copy(buffer, host + first, n); });
}

void upload_raw(float* dst, const RawFile& file, cudaStream_t stream) {
    FillWorkers& workers = fill_workers();
    const PartRunner runner = [&](std::size_t parts, const std::function<void(std::size_t)>& part) { workers.run(parts, part); };
    staged_upload(dst, file.voxels(), stream,
                  [&](std::size_t first, std::size_t n, float* buffer) { file.read(first, n, buffer, int(workers.size()), runner); });
}

void preload_libraries() {
    try {
        cufft();
    } catch (const Error&) {
        // The shift search reports it when it needs cuFFT.
    }
}

void gaussian_smooth(float* v, float* scratch, const Dims& d, double sigma, cudaStream_t stream) {
    if (!(sigma > 0)) return;
    GaussianTaps taps{};
    taps.radius = gaussian_radius(sigma);
    if (taps.radius > 30) throw Error("--presmooth: sigma " + std::to_string(sigma) + " beyond the GPU filter's 10 voxels");
    gaussian_taps(sigma, taps.w);
    const std::int64_t voxels = d[0] * d[1] * d[2];
    // Axes z, y, x as on the CPU: v -> scratch -> v -> scratch, then back into v.
    float* bufs[2] = {v, scratch};
    for (int axis = 0; axis < 3; ++axis)
        gaussian_axis_kernel<<<blocks_for(voxels), kThreads, 0, stream>>>(bufs[axis % 2], bufs[1 - axis % 2], d[0], d[1], d[2], axis, taps);
    DVC_STAGE_CHECK(cudaGetLastError());
    DVC_STAGE_CHECK(cudaMemcpyAsync(v, scratch, std::size_t(voxels) * sizeof(float), cudaMemcpyDeviceToDevice, stream));
}

void bspline_prefilter(float* v, float* scratch, const Dims& d, int degree, cudaStream_t stream) {
    if (degree != 3 && degree != 5 && degree != kOmomsPrefilter)
        throw Error("GPU prefilter: degree " + std::to_string(degree) + " (3, 5 or the O-MOMS code supported)");
    const SplinePoles poles = spline_poles(degree);
    const std::int64_t nz = d[0], ny = d[1], nx = d[2];
    // x: transpose each slice to (z, x, y), filter along the middle axis (lines (z, y), stride ny), back.
    transpose_slices(v, scratch, d, stream);
    prefilter_lines_kernel<<<blocks_for(nz * ny), kThreads, 0, stream>>>(scratch, nz * ny, ny, nx * ny, nx, ny, poles);
    transpose_slices(scratch, v, Dims{nz, nx, ny}, stream);
    // y: lines (z, x), stride nx; z: lines (y, x), stride ny nx. Neighbouring threads hold neighbouring x.
    prefilter_lines_kernel<<<blocks_for(nz * nx), kThreads, 0, stream>>>(v, nz * nx, nx, ny * nx, ny, nx, poles);
    prefilter_lines_kernel<<<blocks_for(ny * nx), kThreads, 0, stream>>>(v, ny * nx, ny * nx, 0, nz, ny * nx, poles);
    DVC_STAGE_CHECK(cudaGetLastError());
}

void gradients(const float* src, const Dims& d, bool cubic, float* gz, float* gy, float* gx, cudaStream_t stream) {
    gradients_kernel<<<blocks_for(d[0] * d[1] * d[2]), kThreads, 0, stream>>>(src, d[0], d[1], d[2], cubic, gz, gy, gx);
    DVC_STAGE_CHECK(cudaGetLastError());
}

void downsample2(const float* fine, const Dims& fd, float* coarse, cudaStream_t stream) {
    const Dims c = pyramid_dims(fd, 1);
    downsample_kernel<<<blocks_for(c[0] * c[1] * c[2]), kThreads, 0, stream>>>(fine, fd[1], fd[2], coarse, c[0], c[1], c[2]);
    DVC_STAGE_CHECK(cudaGetLastError());
}

// Points whose windows one batch of FFTs holds (within kShiftSearchBudget).
static std::size_t search_chunk(int subset, int radius, std::size_t points) {
    return std::max<std::size_t>(1, std::min(points, kShiftSearchBudget / window_bytes(subset, radius)));
}

std::size_t shift_search_bytes(int subset, int radius, std::size_t points) {
    return search_chunk(subset, radius, points) * window_bytes(subset, radius) + points * (3 * sizeof(long long) + 6 * sizeof(int));
}

void make_shift_search_plans(int subset, int radius, std::size_t points) {
    if (points == 0) return;
    const int w = subset + 2 * radius;
    std::size_t work = 0;
    cached_plan(w, search_chunk(subset, radius, points), CUFFT_R2C, &work);
    cached_plan(w, search_chunk(subset, radius, points), CUFFT_C2R, &work);
}

std::vector<std::int32_t> fft_shift_search(const float* ref, const float* def, const Dims& dims, const ShiftSearch& search,
                                           cudaStream_t stream, std::size_t* peak_bytes, double* plan_s) {
    const std::size_t count = search.points();
    std::vector<std::int32_t> shifts(search.predicted);
    if (count == 0) return shifts;
    const int s = search.subset, r = search.radius, w = s + 2 * r, R = 2 * r + 1;
    const std::size_t chunk = search_chunk(s, r, count);
    const std::size_t w3 = std::size_t(w) * w * w, wc = std::size_t(w) * w * (w / 2 + 1);
    Buffers b;
    long long* d_starts = b.allocate<long long>(3 * count);
    int* d_predicted = b.allocate<int>(3 * count);
    int* d_shifts = b.allocate<int>(3 * count);
    float* f = b.allocate<float>(chunk * w3);
    float* g = b.allocate<float>(chunk * w3);
    cufftComplex* F = b.allocate<cufftComplex>(chunk * wc);
    cufftComplex* G = b.allocate<cufftComplex>(chunk * wc);
    double* X1 = b.allocate<double>(chunk * w * w * R);
    double* X2 = b.allocate<double>(chunk * w * w * R);
    double* Y1 = b.allocate<double>(chunk * w * R * R);
    double* Y2 = b.allocate<double>(chunk * w * R * R);
    double* S1 = b.allocate<double>(chunk * R * R * R);
    double* S2 = b.allocate<double>(chunk * R * R * R);
    static_assert(sizeof(long long) == sizeof(std::int64_t), "64-bit starts");
    DVC_STAGE_CHECK(cudaMemcpyAsync(d_starts, search.starts.data(), 3 * count * sizeof(long long), cudaMemcpyHostToDevice, stream));
    DVC_STAGE_CHECK(cudaMemcpyAsync(d_predicted, search.predicted.data(), 3 * count * sizeof(int), cudaMemcpyHostToDevice, stream));
    std::size_t work = 0, work_inverse = 0;
    const auto t_plan = std::chrono::steady_clock::now();
    const cufftHandle forward = cached_plan(w, chunk, CUFFT_R2C, &work);
    const cufftHandle inverse = cached_plan(w, chunk, CUFFT_C2R, &work_inverse);
    if (plan_s) *plan_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_plan).count();
    DVC_CUFFT_CHECK(cufft().set_stream(forward, stream));
    DVC_CUFFT_CHECK(cufft().set_stream(inverse, stream));
    void* work_area = b.allocate<unsigned char>(std::max(work, work_inverse));
    DVC_CUFFT_CHECK(cufft().set_work_area(forward, work_area));
    DVC_CUFFT_CHECK(cufft().set_work_area(inverse, work_area));
    if (peak_bytes) *peak_bytes = b.bytes();
    SearchGeometry geo{{dims[0], dims[1], dims[2]}, s, r, w, R, 0, (long long)count};
    for (std::size_t begin = 0; begin < count; begin += chunk) {
        geo.begin = (long long)begin;
        const unsigned blocks = unsigned(chunk);
        gather_kernel<<<blocks, kThreads, 0, stream>>>(ref, def, geo, d_starts, d_predicted, f, g);
        box_x_kernel<<<blocks, kThreads, 0, stream>>>(g, geo, X1, X2);
        box_y_kernel<<<blocks, kThreads, 0, stream>>>(X1, X2, geo, Y1, Y2);
        box_z_kernel<<<blocks, kThreads, 0, stream>>>(Y1, Y2, geo, S1, S2);
        DVC_STAGE_CHECK(cudaGetLastError());
        DVC_CUFFT_CHECK(cufft().exec_r2c(forward, f, F));
        DVC_CUFFT_CHECK(cufft().exec_r2c(forward, g, G));
        conj_multiply_kernel<<<blocks_for((long long)(chunk * wc)), kThreads, 0, stream>>>(F, G, (long long)(chunk * wc));
        DVC_CUFFT_CHECK(cufft().exec_c2r(inverse, F, f));
        score_kernel<<<blocks, kThreads, 0, stream>>>(f, S1, S2, geo, d_starts, d_predicted, d_shifts);
        DVC_STAGE_CHECK(cudaGetLastError());
    }
    DVC_STAGE_CHECK(cudaMemcpyAsync(shifts.data(), d_shifts, 3 * count * sizeof(int), cudaMemcpyDeviceToHost, stream));
    DVC_STAGE_CHECK(cudaStreamSynchronize(stream));
    return shifts;
}

}  // namespace dvc::device

// ---- host entry points for the tests (device_checks.hpp) -------------------------------------------

#include "device_checks.hpp"

namespace dvc {
namespace {

// One volume on the device for the duration of a check.
struct DeviceVolume {
    float* p = nullptr;
    explicit DeviceVolume(std::size_t count) { DVC_STAGE_CHECK(cudaMalloc(&p, std::max<std::size_t>(count, 1) * sizeof(float))); }
    ~DeviceVolume() { cudaFree(p); }
    DeviceVolume(const DeviceVolume&) = delete;
    DeviceVolume& operator=(const DeviceVolume&) = delete;
};

Volume download(const float* d, const Dims& dims) {
    Volume v;
    v.dims = dims;
    v.data.resize(v.voxels());
    DVC_STAGE_CHECK(cudaMemcpy(v.data.data(), d, v.voxels() * sizeof(float), cudaMemcpyDeviceToHost));
    return v;
}

}  // namespace

bool gpu_stages_available() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

Volume gpu_stage_prefilter(const Volume& v, int degree) {
    DeviceVolume d(v.voxels()), scratch(v.voxels());
    device::upload(d.p, v.data.data(), v.voxels(), nullptr);
    device::bspline_prefilter(d.p, scratch.p, v.dims, degree, nullptr);
    DVC_STAGE_CHECK(cudaDeviceSynchronize());
    return download(d.p, v.dims);
}

Volume gpu_stage_smooth(const Volume& v, double sigma) {
    DeviceVolume d(v.voxels()), scratch(v.voxels());
    device::upload(d.p, v.data.data(), v.voxels(), nullptr);
    device::gaussian_smooth(d.p, scratch.p, v.dims, sigma, nullptr);
    DVC_STAGE_CHECK(cudaDeviceSynchronize());
    return download(d.p, v.dims);
}

std::array<Volume, 3> gpu_stage_gradients(const Volume& src, bool cubic) {
    DeviceVolume d(src.voxels()), gz(src.voxels()), gy(src.voxels()), gx(src.voxels());
    device::upload(d.p, src.data.data(), src.voxels(), nullptr);
    device::gradients(d.p, src.dims, cubic, gz.p, gy.p, gx.p, nullptr);
    DVC_STAGE_CHECK(cudaDeviceSynchronize());
    return {download(gz.p, src.dims), download(gy.p, src.dims), download(gx.p, src.dims)};
}

Volume gpu_stage_downsample(const Volume& v) {
    const Dims c = pyramid_dims(v.dims, 1);
    DeviceVolume d(v.voxels()), out(std::size_t(c[0]) * c[1] * c[2]);
    device::upload(d.p, v.data.data(), v.voxels(), nullptr);
    device::downsample2(d.p, v.dims, out.p, nullptr);
    DVC_STAGE_CHECK(cudaDeviceSynchronize());
    return download(out.p, c);
}

std::vector<std::int32_t> gpu_stage_shift_search(const Volume& reference, const Volume& deformed, const ShiftSearch& search) {
    DeviceVolume r(reference.voxels()), d(deformed.voxels());
    device::upload(r.p, reference.data.data(), reference.voxels(), nullptr);
    device::upload(d.p, deformed.data.data(), deformed.voxels(), nullptr);
    std::size_t peak = 0;
    return device::fft_shift_search(r.p, d.p, reference.dims, search, nullptr, &peak);
}

}  // namespace dvc
