// Overflow-checked size arithmetic for every count of elements or bytes that comes from a caller or a
// file (readers, Buffer, generators), and the host memory a program may still allocate: a size is
// either exact or refused with a message, never wrapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

namespace batchsolve {

// a * b, or nullopt when it does not fit in 64 bits.
inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// a + b, or nullopt when it does not fit in 64 bits.
inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// The product of all factors (1 for none), or nullopt on overflow. A zero factor gives 0 even when
// the others would overflow together: an empty shape holds no elements.
template <class Range>
std::optional<std::uint64_t> checked_product(const Range& factors) {
    std::uint64_t r = 1;
    bool overflow = false;
    for (auto f : factors) {
        if (std::uint64_t(f) == 0) return std::uint64_t(0);
        if (!overflow) {
            const auto next = checked_mul(r, std::uint64_t(f));
            overflow = !next;
            if (next) r = *next;
        }
    }
    if (overflow) return std::nullopt;
    return r;
}
inline std::optional<std::uint64_t> checked_product(std::initializer_list<std::uint64_t> factors) {
    return checked_product<std::initializer_list<std::uint64_t>>(factors);
}

// count * element_size as a std::size_t that also fits a ptrdiff_t (what std::vector and pointer
// arithmetic can address), or nullopt.
inline std::optional<std::size_t> checked_bytes(std::uint64_t count, std::size_t element_size) {
    const auto bytes = checked_mul(count, element_size);
    if (!bytes || *bytes > std::uint64_t(std::numeric_limits<std::ptrdiff_t>::max())) return std::nullopt;
    return std::size_t(*bytes);
}

// Bytes of host memory this process may still allocate: MemAvailable (/proc/meminfo), capped by the
// cgroup's memory.max and by RLIMIT_AS / RLIMIT_DATA less what the process already maps. An estimate
// for refusing hopeless requests up front with a clear message, not a promise.
std::uint64_t available_host_bytes();

// "1.5 GiB", "12.0 MiB", "512 bytes": sizes in messages.
std::string bytes_text(std::uint64_t bytes);

// Throws batchsolve::Error "<what> needs X GiB, Y available" when `bytes` exceeds
// available_host_bytes(); `what` names the request ("Buffer of 2^40 doubles", "'/A'").
void require_host_memory(std::uint64_t bytes, const std::string& what);

}  // namespace batchsolve
