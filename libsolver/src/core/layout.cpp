// convert_layout: argument checks, then dispatch to the backend of the context.
#include "batchsolve/layout.hpp"

#include "backends.hpp"
#include "checks.hpp"

namespace batchsolve {

template <class T>
void convert_layout(const BatchView<const T>& src, const BatchView<T>& dst, Context& ctx) {
    constexpr const char* routine = "convert_layout";
    checks::check_view(src, routine, "src");
    checks::check_view(dst, routine, "dst");
    checks::require(src.rows == dst.rows && src.cols == dst.cols, routine, "dst",
                    "the same matrix shape as src (" + std::to_string(src.rows) + " x " +
                        std::to_string(src.cols) + ")");
    checks::require(src.count == dst.count, routine, "dst.count",
                    "dst.count == src.count (" + std::to_string(src.count) + ")");
    if (src.count == 0 || src.rows == 0 || src.cols == 0) return;
    BATCHSOLVE_ON_BACKEND(ctx, convert_layout(src, dst, ctx));
}

#define INSTANTIATE(T) template void convert_layout<T>(const BatchView<const T>&, const BatchView<T>&, Context&);
BATCHSOLVE_FOR_EACH_PRECISION(INSTANTIATE)
#undef INSTANTIATE

}  // namespace batchsolve
