// The compile step of one request (compile_pool.hpp).
#include "compile_pool.hpp"

#include <complex>

namespace batchsolve::autotune {

template <class T>
KernelReport prepare_typed(const CompileRequest& r, Context& ctx) {
    const BatchView<const T> shape = make_view<const T>(r.layout, nullptr, r.n, r.n, r.count, r.chunk);
    return prepare_kernel<T>(to_string(r.routine), Uplo::lower, shape, r.nrhs, r.config, ctx);
}

KernelReport prepare(const CompileRequest& r, Context& ctx) {
    switch (r.precision) {
        case Precision::s: return prepare_typed<float>(r, ctx);
        case Precision::d: return prepare_typed<double>(r, ctx);
        case Precision::c: return prepare_typed<std::complex<float>>(r, ctx);
        case Precision::z: return prepare_typed<std::complex<double>>(r, ctx);
    }
    throw Error("unknown precision");
}

}  // namespace batchsolve::autotune
