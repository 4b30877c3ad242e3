// Staging memory in a build without CUDA (see pinned.hpp): ordinary host memory.
#include <cstdlib>
#include <string>

#include "batchsolve/types.hpp"
#include "pinned.hpp"

namespace batchsolve::multi {

void* pinned_allocate(std::size_t bytes) {
    void* p = std::malloc(bytes == 0 ? 1 : bytes);
    if (p == nullptr) throw Error("multi-device staging: cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    return p;
}
void pinned_free(void* p) noexcept { std::free(p); }

}  // namespace batchsolve::multi
