// Page-locked host memory for staging host-resident batches to CUDA members (pinned_cuda.cpp), or
// plain host memory in a build without CUDA (pinned_none.cpp): no #ifdef in the staging code.
#pragma once

#include <cstddef>
#include <memory>

namespace batchsolve::multi {

// Page-locked (portable: usable by every device's copies) when the CUDA backend is built and a driver
// is present, else ordinary host memory. Throws batchsolve::Error naming the bytes when it fails.
void* pinned_allocate(std::size_t bytes);
void pinned_free(void* p) noexcept;

struct PinnedDeleter {
    void operator()(void* p) const noexcept { pinned_free(p); }
};
using PinnedBlock = std::unique_ptr<void, PinnedDeleter>;

}  // namespace batchsolve::multi
