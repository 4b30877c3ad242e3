// The per-call fast paths in front of the one kernel cache (kernel_cache.hpp), keyed one way.
//
// A launcher that resolves the same call again and again (the interleaved Cholesky's spec choice,
// the large Cholesky's captured graph) keeps what it resolved in a CallCache instead of asking the
// kernel cache each time. Its key is a plain struct of the call's integers (device, routine,
// precision, sizes, configuration fields, pointers where a captured graph depends on them) with an
// operator== and a hash() that mixes every field through KeyHasher; its value holds kernels that
// came from the kernel cache (never a private copy of a loaded kernel), so the kernel cache's key
// (device, family, kernel name) stays the one place a kernel is found.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace batchsolve::cuda_backend::jit {

// FNV-1a over a key's fields as integers: the one hash of every fast-path key.
class KeyHasher {
public:
    void mix(long long v) { h_ = (h_ ^ static_cast<std::uint64_t>(v)) * 1099511628211ull; }
    void mix(const void* p) { mix(static_cast<long long>(reinterpret_cast<std::uintptr_t>(p))); }
    std::size_t value() const { return static_cast<std::size_t>(h_); }

private:
    std::uint64_t h_ = 1469598103934665603ull;
};

// A key that is only a list of integers (pointers as their addresses), for fast paths whose key has
// no struct of its own.
template <std::size_t N>
struct IntegerKey {
    std::array<long long, N> fields{};
    bool operator==(const IntegerKey& o) const { return fields == o.fields; }
    std::size_t hash() const noexcept {
        KeyHasher h;
        for (long long f : fields) h.mix(f);
        return h.value();
    }
};
inline long long key_field(const void* p) { return static_cast<long long>(reinterpret_cast<std::uintptr_t>(p)); }

// Values by Key (which has operator== and std::size_t hash() const), node-based so that a reference
// handed out stays valid while other calls are added, at most `capacity` of them (a full cache
// stores nothing more: its callers take their slow path). Thread-safe; nothing is ever evicted (a
// replay of a cached graph may still be in flight).
template <class Key, class Value>
class CallCache {
public:
    explicit CallCache(std::size_t capacity = std::numeric_limits<std::size_t>::max()) : capacity_(capacity) {}

    const Value* find(const Key& key) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = values_.find(key);
        return it == values_.end() ? nullptr : it->second.get();
    }
    bool full() {
        std::lock_guard<std::mutex> lock(mutex_);
        return values_.size() >= capacity_;
    }
    // Stores `value` under `key` unless a racing thread stored one first (that one stays) and
    // returns the stored one; nullptr when the cache is full.
    const Value* insert(const Key& key, std::unique_ptr<Value> value) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = values_.find(key);
        if (it != values_.end()) return it->second.get();
        if (values_.size() >= capacity_) return nullptr;
        return values_.emplace(key, std::move(value)).first->second.get();
    }

private:
    struct Hash {
        std::size_t operator()(const Key& k) const noexcept { return k.hash(); }
    };
    const std::size_t capacity_;
    std::mutex mutex_;
    std::unordered_map<Key, std::unique_ptr<Value>, Hash> values_;
};

}  // namespace batchsolve::cuda_backend::jit
