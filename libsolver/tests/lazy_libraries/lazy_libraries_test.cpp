// libbatchsolve maps cuBLAS and cuSOLVER on their first use, not at load time (src/cuda/lazy_libraries.cpp).
#include <gtest/gtest.h>

#include <cublas_api.h>
#include <cusolver_common.h>

#include <fstream>
#include <string>

#include "batchsolve/batchsolve.hpp"

namespace batchsolve::detail {
bool lazy_cuda_library_loaded(int which);
int cublas_major_version_through_trampoline();
int cusolver_major_version_through_trampoline();
const char* cublas_status_name_through_trampoline(int status);
}  // namespace batchsolve::detail

namespace {
// Whether a file whose name contains `name` is mapped into this process.
bool mapped(const std::string& name) {
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);)
        if (line.find(name) != std::string::npos) return true;
    return false;
}
}  // namespace

TEST(LazyCudaLibraries, NeitherIsMappedBeforeTheFirstCall) {
    batchsolve::Context cpu(batchsolve::Backend::cpu);  // using the library on the CPU loads nothing either
    EXPECT_FALSE(mapped("libcublas.so")) << "libbatchsolve (or this test) links cuBLAS directly";
    EXPECT_FALSE(mapped("libcublasLt.so"));
    EXPECT_FALSE(mapped("libcusolver.so"));
    EXPECT_FALSE(batchsolve::detail::lazy_cuda_library_loaded(0));
    EXPECT_FALSE(batchsolve::detail::lazy_cuda_library_loaded(1));
}

TEST(LazyCudaLibraries, TheFirstCallLoadsCublasAndReturnsItsAnswer) {
    EXPECT_EQ(batchsolve::detail::cublas_major_version_through_trampoline(), CUBLAS_VER_MAJOR);
    EXPECT_TRUE(batchsolve::detail::lazy_cuda_library_loaded(0));
    EXPECT_TRUE(mapped("libcublas.so"));
    EXPECT_FALSE(batchsolve::detail::lazy_cuda_library_loaded(1));  // cuSOLVER still waits for its first call
    // A second call goes straight to the library (the slot holds the function now).
    EXPECT_EQ(batchsolve::detail::cublas_major_version_through_trampoline(), CUBLAS_VER_MAJOR);
}

TEST(LazyCudaLibraries, CusolverLoadsOnItsOwnFirstCall) {
    EXPECT_FALSE(batchsolve::detail::lazy_cuda_library_loaded(1));
    EXPECT_EQ(batchsolve::detail::cusolver_major_version_through_trampoline(), CUSOLVER_VER_MAJOR);
    EXPECT_TRUE(batchsolve::detail::lazy_cuda_library_loaded(1));
    EXPECT_TRUE(mapped("libcusolver.so"));
    // The argument reaches the library: each status has its own name.
    EXPECT_STREQ(batchsolve::detail::cublas_status_name_through_trampoline(3), "CUBLAS_STATUS_ALLOC_FAILED");
    EXPECT_STREQ(batchsolve::detail::cublas_status_name_through_trampoline(0), "CUBLAS_STATUS_SUCCESS");
}
