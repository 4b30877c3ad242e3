// Seeds of the randomised tests: one mechanism for the library's, data/'s and the applications'
// GoogleTest suites (test_support.hpp, data/tests/test_support.hpp and the apps' tests include it).
//
//   base_seed()   the current test's seed: BATCHSOLVE_TEST_SEED when set (decimal or 0x...), else
//                 drawn from std::random_device once per test
//   fresh_seed()  base_seed() + k for the test's k-th call (k = 0, 1, ...), so that a test drawing
//                 several seeds gets distinct ones and the same sequence again under replay
//
// A failing test that drew a seed prints, after gtest's own failure lines,
//   [ seed     ] Suite.Name: replay with BATCHSOLVE_TEST_SEED=<base> --gtest_filter=Suite.Name
// (a listener appended to gtest's at static initialisation; it needs no change to any main()), and
// the seed is recorded as the test's "seed" property in gtest's XML/JSON reports. ctest runs each
// discovered test in a process of its own, so one replay line reproduces exactly that test.
// A malformed BATCHSOLVE_TEST_SEED stops the test binary with a message naming the variable (a
// typo must not silently become a fresh seed).
#pragma once

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>

namespace batchsolve::test {
namespace seed_detail {

struct State {
    std::mutex m;
    bool drawn = false;   // base is valid for the current test
    std::uint64_t base = 0;
    std::uint64_t calls = 0;
};
inline State& state() {
    static State s;
    return s;
}

inline std::uint64_t draw_base() {
    if (const char* text = std::getenv("BATCHSOLVE_TEST_SEED"); text && *text) {
        char* end = nullptr;
        errno = 0;
        const unsigned long long value = std::strtoull(text, &end, 0);
        if (errno != 0 || *end != '\0' || text[0] == '-') {
            std::fprintf(stderr, "BATCHSOLVE_TEST_SEED='%s' is not an unsigned 64-bit integer\n", text);
            std::exit(2);
        }
        return value;
    }
    std::random_device device;
    return (std::uint64_t(device()) << 32) ^ device();
}

// Caller holds s.m.
inline void ensure_drawn(State& s) {
    if (s.drawn) return;
    s.base = draw_base();
    s.calls = 0;
    s.drawn = true;
    if (::testing::UnitTest::GetInstance()->current_test_info() != nullptr)
        ::testing::Test::RecordProperty("seed", std::to_string(s.base));
}

class Listener : public ::testing::EmptyTestEventListener {
    void OnTestStart(const ::testing::TestInfo&) override {
        std::lock_guard<std::mutex> lock(state().m);
        state().drawn = false;  // a new test draws its own seed
    }
    void OnTestEnd(const ::testing::TestInfo& info) override {
        std::lock_guard<std::mutex> lock(state().m);
        if (!state().drawn || info.result() == nullptr || !info.result()->Failed()) return;
        const std::string name = std::string(info.test_suite_name()) + "." + info.name();
        std::printf("[ seed     ] %s: replay with BATCHSOLVE_TEST_SEED=%llu --gtest_filter=%s\n", name.c_str(),
                    static_cast<unsigned long long>(state().base), name.c_str());
        std::fflush(stdout);
    }
};

inline bool append_listener() {
    ::testing::UnitTest::GetInstance()->listeners().Append(new Listener);  // gtest owns it
    return true;
}
inline const bool listener_appended = append_listener();

}  // namespace seed_detail

inline std::uint64_t base_seed() {
    auto& s = seed_detail::state();
    std::lock_guard<std::mutex> lock(s.m);
    seed_detail::ensure_drawn(s);
    return s.base;
}

inline std::uint64_t fresh_seed() {
    auto& s = seed_detail::state();
    std::lock_guard<std::mutex> lock(s.m);
    seed_detail::ensure_drawn(s);
    return s.base + s.calls++;
}

}  // namespace batchsolve::test

// Names the seed in every failure message of the enclosing scope (the replay line follows the failure).
#define BATCHSOLVE_TRACE_SEED(seed)                                                                  \
    SCOPED_TRACE(::testing::Message() << "seed " << (seed) << " (replay: BATCHSOLVE_TEST_SEED="       \
                                      << ::batchsolve::test::base_seed() << ")")
