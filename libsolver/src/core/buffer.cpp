// Memory of a context's kind: malloc on the CPU backend, cudaMalloc on the CUDA backend; and the
// host-memory estimate of checked_size.hpp that refuses hopeless allocations before they are tried.
#include "batchsolve/buffer.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "backends.hpp"
#include "batchsolve/checked_size.hpp"

namespace batchsolve {

namespace {

// The value of "<key>: <number> kB" in a /proc file, in bytes; nullopt when absent.
std::optional<std::uint64_t> proc_kib_field(const char* file, const std::string& key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.compare(0, key.size(), key) != 0 || line.size() <= key.size() || line[key.size()] != ':') continue;
        std::istringstream fields(line.substr(key.size() + 1));
        std::uint64_t kib = 0;
        if (fields >> kib) return checked_mul(kib, 1024).value_or(UINT64_MAX);
    }
    return std::nullopt;
}

// A cgroup v2 file holding one number or "max"; nullopt when absent or "max".
std::optional<std::uint64_t> cgroup_number(const char* file) {
    std::ifstream in(file);
    std::string text;
    if (!(in >> text) || text == "max") return std::nullopt;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (end == text.c_str() || *end != '\0') return std::nullopt;
    return std::uint64_t(v);
}

// What a resource limit leaves once `used` bytes are taken; nullopt when unlimited.
std::optional<std::uint64_t> rlimit_left(int resource, std::optional<std::uint64_t> used) {
    rlimit lim{};
    if (getrlimit(resource, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return std::nullopt;
    const std::uint64_t limit = lim.rlim_cur, taken = used.value_or(0);
    return limit > taken ? limit - taken : 0;
}

}  // namespace

std::uint64_t available_host_bytes() {
    std::uint64_t available = UINT64_MAX;
    if (auto mem = proc_kib_field("/proc/meminfo", "MemAvailable")) {
        available = *mem;
    } else {
        const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0) available = checked_mul(std::uint64_t(pages), std::uint64_t(page)).value_or(UINT64_MAX);
    }
    // A container's memory limit (cgroup v2) is reached long before the machine's memory runs out.
    if (auto max = cgroup_number("/sys/fs/cgroup/memory.max")) {
        const std::uint64_t used = cgroup_number("/sys/fs/cgroup/memory.current").value_or(0);
        available = std::min(available, *max > used ? *max - used : 0);
    }
    // ulimit -v: beyond it every allocation fails (and OpenBLAS retries its own for minutes).
    if (auto left = rlimit_left(RLIMIT_AS, proc_kib_field("/proc/self/status", "VmSize")))
        available = std::min(available, *left);
    if (auto left = rlimit_left(RLIMIT_DATA, proc_kib_field("/proc/self/status", "VmData")))
        available = std::min(available, *left);
    return available;
}

std::string bytes_text(std::uint64_t bytes) {
    static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return std::to_string(bytes) + " bytes";
    double value = double(bytes) / 1024;
    int unit = 0;
    while (value >= 1024 && unit < 5) value /= 1024, ++unit;
    char text[32];
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
    return text;
}

void require_host_memory(std::uint64_t bytes, const std::string& what) {
    const std::uint64_t available = available_host_bytes();
    if (bytes > available)
        throw Error(what + " needs " + bytes_text(bytes) + ", " + bytes_text(available) + " available");
}

}  // namespace batchsolve

namespace batchsolve::detail {

std::size_t buffer_bytes(std::size_t count, std::size_t element_size) {
    const auto bytes = checked_bytes(count, element_size);
    if (!bytes)
        throw InvalidArgument("Buffer", "count",
                              "count * " + std::to_string(element_size) + " bytes within 2^63 (got count " +
                                  std::to_string(count) + ")");
    return *bytes;
}

void require_within(const char* routine, std::size_t count, std::size_t size) {
    if (count > size)
        throw InvalidArgument(routine, "count",
                              "count <= the buffer's size " + std::to_string(size) + " (got " + std::to_string(count) + ")");
}

void* backend_allocate(Context& ctx, std::size_t bytes) {
    if (bytes == 0) return nullptr;
    if (ctx.backend() == Backend::cuda) return cuda_backend::allocate(ctx.cuda(), bytes);
    // Refused in words before malloc: under ulimit -v a failed allocation here would leave OpenBLAS
    // no address space for its own buffers later (it retries for minutes instead of failing).
    require_host_memory(bytes, "Buffer: " + bytes_text(bytes) + " of host memory");
    void* p = std::malloc(bytes);
    if (p == nullptr) throw Error("Buffer: out of host memory allocating " + bytes_text(bytes));
    return p;
}

void backend_free(Backend backend, void* p) noexcept {
    if (p == nullptr) return;
    if (backend == Backend::cuda) cuda_backend::free(p);
    else std::free(p);
}

void backend_copy_to_backend(Context& ctx, void* dst, const void* host_src, std::size_t bytes) {
    if (bytes == 0) return;
    if (ctx.backend() == Backend::cuda) cuda_backend::copy_to_device(ctx.cuda(), dst, host_src, bytes);
    else std::memcpy(dst, host_src, bytes);
}

void backend_copy_to_host(Context& ctx, void* host_dst, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    if (ctx.backend() == Backend::cuda) cuda_backend::copy_to_host(ctx.cuda(), host_dst, src, bytes);
    else std::memcpy(host_dst, src, bytes);
}

void backend_fill_bytes(Context& ctx, void* dst, unsigned char value, std::size_t bytes) {
    if (bytes == 0) return;
    if (ctx.backend() == Backend::cuda) cuda_backend::fill_bytes(ctx.cuda(), dst, value, bytes);
    else std::memset(dst, value, bytes);
}

}  // namespace batchsolve::detail
