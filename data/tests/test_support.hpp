// Helpers shared by data/'s test programs: a scratch directory per test and fresh, printed seeds.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "../../libsolver/tests/test_seed.hpp"

namespace data_tests {

// A scratch directory per test (under GoogleTest's temporary folder), removed afterwards.
class ScratchDir {
public:
    explicit ScratchDir(const std::string& prefix = "data_test") {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = std::string(info->test_suite_name()) + "." + info->name();
        for (char& c : name)
            if (c == '/') c = '_';
        dir_ = std::filesystem::path(::testing::TempDir()) / (prefix + "_" + std::to_string(::getpid()) + "_" + name);
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    ~ScratchDir() { std::filesystem::remove_all(dir_); }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    std::string path(const std::string& file) const { return (dir_ / file).string(); }
    // Every entry of the directory, so a test can see that no temporary file was left behind.
    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : std::filesystem::directory_iterator(dir_)) out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }

private:
    std::filesystem::path dir_;
};

// Fresh seeds (libsolver/tests/test_seed.hpp): printed on failure, BATCHSOLVE_TEST_SEED replays.
using batchsolve::test::fresh_seed;

}  // namespace data_tests
