// NVRTC compilation to CUBIN, the on-disk module cache, and loading/launching through the CUDA runtime
// library API (cudaLibraryLoadData), so that the library never links the driver API and loads on
// machines without a GPU driver.
#include "jit.hpp"

#include <cuda_runtime.h>
#include <nvrtc.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include "batchsolve/types.hpp"
#include "kernel_cache.hpp"

namespace batchsolve::cuda_backend::jit {

namespace {

void check_nvrtc(nvrtcResult r, const std::string& call) {
    if (r != NVRTC_SUCCESS) throw CudaError(call, static_cast<int>(r), nvrtcGetErrorString(r));
}
void check_cuda(cudaError_t e, const std::string& call) {
    if (e != cudaSuccess) throw CudaError(call, static_cast<int>(e), cudaGetErrorString(e));
}

// Destroys the NVRTC program on every path out of compile_to_cubin.
struct ProgramGuard {
    nvrtcProgram p = nullptr;
    ~ProgramGuard() {
        if (p) nvrtcDestroyProgram(&p);
    }
};

std::string first_lines(const std::string& text, int count) {
    std::string out;
    std::istringstream in(text);
    std::string l;
    for (int i = 1; i <= count && std::getline(in, l); ++i) out += std::to_string(i) + ": " + l + "\n";
    return out;
}

// A second, independent 64-bit hash of the key stored inside each cache file, so that a collision of
// the file-name hash cannot hand back another kernel's CUBIN.
std::uint64_t second_hash(const std::string& bytes) {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (unsigned char c : bytes) h = (h ^ c) * 0xff51afd7ed558ccdULL, h ^= h >> 29;
    return h;
}

constexpr char cache_magic[8] = {'B', 'S', 'J', 'I', 'T', 'C', '0', '1'};

void put_u64(std::string& s, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint64_t get_u64(const char* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

}  // namespace

std::uint64_t hash_bytes(const std::string& bytes) {
    std::uint64_t h = 14695981039346656037ULL;
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ULL;
    return h;
}

std::string compile_to_cubin(const KernelSource& kernel, int arch, std::string* log) {
    ProgramGuard prog;
    const std::string program = kernel.program_name.empty() ? kernel.kernel_name + ".cu" : kernel.program_name;
    check_nvrtc(nvrtcCreateProgram(&prog.p, kernel.source.c_str(), program.c_str(), 0, nullptr, nullptr),
                "nvrtcCreateProgram(" + kernel.kernel_name + ")");
    std::vector<std::string> options = {"--gpu-architecture=sm_" + std::to_string(arch), "--std=c++17"};
    options.insert(options.end(), kernel.options.begin(), kernel.options.end());
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    const nvrtcResult compiled = nvrtcCompileProgram(prog.p, static_cast<int>(argv.size()), argv.data());
    std::size_t log_size = 0;
    std::string text;
    if (nvrtcGetProgramLogSize(prog.p, &log_size) == NVRTC_SUCCESS && log_size > 1) {
        text.resize(log_size);
        nvrtcGetProgramLog(prog.p, text.data());
        text.resize(log_size - 1);  // drop the terminating NUL
    }
    if (log) *log = text;
    if (compiled != NVRTC_SUCCESS) {
        std::string options_text;
        for (const auto& o : options) options_text += " " + o;
        throw Error("NVRTC could not compile kernel " + kernel.kernel_name + " for sm_" + std::to_string(arch) + " (" +
                    nvrtcGetErrorString(compiled) + "; options:" + options_text + "):\n" + text +
                    "\nfirst lines of the source:\n" + first_lines(kernel.source, 40));
    }
    std::size_t size = 0;
    check_nvrtc(nvrtcGetCUBINSize(prog.p, &size), "nvrtcGetCUBINSize(" + kernel.kernel_name + ")");
    std::string cubin(size, '\0');
    check_nvrtc(nvrtcGetCUBIN(prog.p, cubin.data()), "nvrtcGetCUBIN(" + kernel.kernel_name + ")");
    if (size == 0) throw Error("NVRTC returned an empty CUBIN for kernel " + kernel.kernel_name);
    return cubin;
}

std::string cache_directory() {
    if (const char* d = std::getenv("BATCHSOLVE_CACHE_DIR")) return d;  // set but empty: cache disabled
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/batchsolve";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/batchsolve";
    return "";
}

std::string cache_file_name(const std::string& key_text) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash_bytes(key_text)));
    return std::string("kernel-") + hex + ".cubin";
}

// Layout: magic (8) | second hash of the key (8) | payload size (8) | FNV-1a of the payload (8) | payload.
bool read_cache_file(const std::string& path, const std::string& key_text, std::string& cubin) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.size() < 32 || std::memcmp(data.data(), cache_magic, 8) != 0) return false;
    if (get_u64(data.data() + 8) != second_hash(key_text)) return false;
    const std::uint64_t size = get_u64(data.data() + 16);
    if (size == 0 || size != data.size() - 32) return false;
    std::string payload = data.substr(32);
    if (get_u64(data.data() + 24) != hash_bytes(payload)) return false;
    cubin = std::move(payload);
    return true;
}

bool write_cache_file(const std::string& path, const std::string& key_text, const std::string& cubin) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    std::string data(cache_magic, 8);
    put_u64(data, second_hash(key_text));
    put_u64(data, cubin.size());
    put_u64(data, hash_bytes(cubin));
    data += cubin;
    // Write to a private temporary name, then rename: readers see the old file or the whole new one.
    std::random_device rd;
    const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return false;
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        out.close();
        if (!out) {
            fs::remove(tmp, ec);
            return false;
        }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return false;
    }
    return true;
}

PtxasStats parse_ptxas_log(const std::string& log, const std::string& kernel_name) {
    // ptxas -v prints, per entry point: "Compiling entry function 'NAME' for 'sm_90'", then
    // "Function properties for NAME" / "N bytes stack frame, N bytes spill stores, N bytes spill loads"
    // and "Used N registers, ...".
    PtxasStats s;
    std::size_t from = log.find("entry function '" + kernel_name + "'");
    if (from == std::string::npos) from = 0;
    auto number_before = [&](const std::string& what, std::size_t start) -> int {
        const std::size_t at = log.find(what, start);
        if (at == std::string::npos) return -1;
        std::size_t b = at;
        while (b > 0 && log[b - 1] == ' ') --b;
        std::size_t e = b;
        while (b > 0 && std::isdigit(static_cast<unsigned char>(log[b - 1]))) --b;
        return b == e ? -1 : std::atoi(log.substr(b, e - b).c_str());
    };
    s.stack_bytes = number_before("bytes stack frame", from);
    s.spill_store_bytes = number_before("bytes spill stores", from);
    s.spill_load_bytes = number_before("bytes spill loads", from);
    const std::size_t used = log.find("Used ", from);
    if (used != std::string::npos) s.registers = std::atoi(log.c_str() + used + 5);
    return s;
}

ScopedDevice::ScopedDevice(int device) {
    if (const cudaError_t e = cudaGetDevice(&previous_); e != cudaSuccess) check_cuda(e, "cudaGetDevice");
    if (previous_ != device) check_cuda(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
}
ScopedDevice::~ScopedDevice() {
    int now = -1;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_ && previous_ >= 0) cudaSetDevice(previous_);
}

KernelSource profiled(const KernelSource& kernel, const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string path = fs::absolute(fs::path(dir) / (kernel.kernel_name + ".cu"), ec).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << kernel.source;
    out.close();
    if (!out) throw Error("BATCHSOLVE_JIT_SOURCE_DIR: cannot write the source of kernel " + kernel.kernel_name + " to " + path);
    KernelSource k = kernel;
    k.options.push_back("-lineinfo");
    k.program_name = path;
    return k;
}

const std::string& profiling_source_directory() {
    static const std::string dir = [] {
        const char* d = std::getenv("BATCHSOLVE_JIT_SOURCE_DIR");
        return std::string(d ? d : "");
    }();
    return dir;
}

LoadedKernel load_cubin(const std::string& cubin, const std::string& kernel_name) {
    cudaLibrary_t library = nullptr;
    check_cuda(cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
               "cudaLibraryLoadData(" + kernel_name + ")");
    // The library stays loaded for the life of the process (the cache hands out its kernels).
    cudaKernel_t handle = nullptr;
    check_cuda(cudaLibraryGetKernel(&handle, library, kernel_name.c_str()), "cudaLibraryGetKernel(" + kernel_name + ")");
    cudaFuncAttributes attr{};
    check_cuda(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(handle)),
               "cudaFuncGetAttributes(" + kernel_name + ")");
    LoadedKernel k;
    k.name = kernel_name;
    k.function = reinterpret_cast<void*>(handle);
    k.registers = attr.numRegs;
    k.local_bytes = static_cast<int>(attr.localSizeBytes);
    k.max_threads = attr.maxThreadsPerBlock;
    return k;
}

LoadedKernel get_kernel(const KernelSource& kernel, int device) {
    // The text is the key: its hash names the kernel in memory, and the whole text (with the NVRTC
    // options) is the spec part of the disk key.
    KernelKey key;
    key.family = "source";
    key.kernel_name = kernel.kernel_name + "#" + std::to_string(hash_bytes(kernel.source));
    std::string options;
    for (const auto& o : kernel.options) options += " " + o;
    key.spec_text = [&] { return "options" + options + "\n" + kernel.source; };
    LoadedKernel k = cached_kernel(key, device, [&] { return kernel; });
    return k;
}

void launch(const LoadedKernel& k, unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,
            unsigned shared_bytes, void* stream, void** args) {
    if (k.function == nullptr) throw Error("jit::launch: kernel " + k.name + " is not loaded");
    // The error texts are built only on failure: this is every launch's path (no allocation).
    const cudaError_t e = cudaLaunchKernel(static_cast<const void*>(k.function), dim3(grid_x, grid_y),
                                           dim3(block_x, block_y), args, shared_bytes, static_cast<cudaStream_t>(stream));
    if (e != cudaSuccess) check_cuda(e, "cudaLaunchKernel(" + k.name + ")");
    if (const cudaError_t last = cudaGetLastError(); last != cudaSuccess) check_cuda(last, "launch of " + k.name);
}

}  // namespace batchsolve::cuda_backend::jit
