// _families: the entry points of the routine families that are still moving (one large matrix,
// cholesky_large.hpp; variable-size batches, vbatched_blas.hpp and vbatched_triangular.hpp), in a module
// of their own so that a libbatchsolve without one of them leaves the core module importable (the
// Python layer then reports these routines as unavailable, with the import error).
#include "module_common.hpp"

#include "batchsolve/cholesky_large.hpp"
#include "batchsolve/vbatched_blas.hpp"
#include "batchsolve/vbatched_triangular.hpp"

NB_MODULE(_families, m) {
    m.doc() = "Raw entry points of batchsolve's large-matrix and variable-size routines; use the batchsolve package.";
    // The exception classes are the core module's, so that both raise the same batchsolve.Error family.
    nb::module_ core = nb::module_::import_("batchsolve._batchsolve");
    error_type = core.attr("Error").ptr();
    argument_error_type = core.attr("ArgumentError").ptr();
    not_compiled_type = core.attr("NotCompiledError").ptr();
    cuda_error_type = core.attr("CudaError").ptr();
    nb::register_exception_translator(translate_exception);

    // ---- one large matrix (cholesky_large.hpp) ------------------------------------------------------
    m.def(
        "large",
        [](std::string routine, std::string precision, int device, std::int64_t stream, bool lower, std::int64_t n,
           std::int64_t nrhs, std::uintptr_t a, std::int64_t lda, std::uintptr_t b, std::int64_t ldb, std::uintptr_t info) {
            const int N = to_int(routine.c_str(), "n", n), R = to_int(routine.c_str(), "nrhs", nrhs);
            const int LDA = to_int(routine.c_str(), "lda", lda), LDB = to_int(routine.c_str(), "ldb", ldb);
            run_on(device, stream, [&](bs::Context& ctx) {
                auto call = [&](auto* typed) {
                    using T = std::remove_pointer_t<decltype(typed)>;
                    if (routine == "potrf") {
                        bs::potrf<T>(uplo_of(lower), N, reinterpret_cast<T*>(a), LDA, reinterpret_cast<int*>(info), ctx);
                    } else if (routine == "potrs") {
                        bs::potrs<T>(uplo_of(lower), N, R, reinterpret_cast<const T*>(a), LDA, reinterpret_cast<T*>(b), LDB, ctx);
                    } else {
                        throw bs::InvalidArgument("batchsolve", "routine", "potrf or potrs (got '" + routine + "')");
                    }
                };
                if (precision == "s") return call(static_cast<float*>(nullptr));
                if (precision == "d") return call(static_cast<double*>(nullptr));
                throw bs::InvalidArgument(routine, "dtype", "float32 or float64 (one large matrix: cholesky_large.hpp)");
            });
        },
        nb::arg("routine"), nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("lower"), nb::arg("n"),
        nb::arg("nrhs"), nb::arg("a"), nb::arg("lda"), nb::arg("b"), nb::arg("ldb"), nb::arg("info"),
        "batchsolve::potrf / potrs of cholesky_large.hpp on one column-major matrix at a raw address.");

    m.def(
        "posv_mixed",
        [](std::string precision, int device, std::int64_t stream, bool lower, std::int64_t n, std::int64_t nrhs,
           std::uintptr_t a, std::int64_t lda, std::uintptr_t b, std::int64_t ldb, std::uintptr_t x, std::int64_t ldx,
           int max_iterations, bool tensor_core_updates, bool allow_fallback) {
            bs::PosvMixedOptions options;
            options.max_iterations = max_iterations, options.tensor_core_updates = tensor_core_updates;
            options.allow_fallback = allow_fallback;
            const int N = to_int("posv_mixed", "n", n), R = to_int("posv_mixed", "nrhs", nrhs);
            const int LDA = to_int("posv_mixed", "lda", lda), LDB = to_int("posv_mixed", "ldb", ldb), LDX = to_int("posv_mixed", "ldx", ldx);
            if (precision != "d") throw bs::InvalidArgument("posv_mixed", "dtype", "float64 (it factors in float32)");
            const bs::PosvMixedResult r = run_on(device, stream, [&](bs::Context& ctx) {
                bs::PosvMixedResult result = bs::posv_mixed<double>(uplo_of(lower), N, R, reinterpret_cast<const double*>(a), LDA,
                                                                    reinterpret_cast<const double*>(b), LDB,
                                                                    reinterpret_cast<double*>(x), LDX, options, ctx);
                ctx.synchronize();
                return result;
            });
            nb::dict d;
            d["path"] = std::string(bs::to_string(r.path));
            d["iterations"] = r.iterations;
            d["backward_error"] = r.backward_error;
            d["normwise_residual"] = r.normwise_residual;
            d["description"] = r.describe();
            nb::list steps;
            for (const auto& s : r.steps) {
                nb::dict step;
                step["path"] = std::string(bs::to_string(s.path)), step["outcome"] = std::string(bs::to_string(s.outcome));
                step["column"] = s.column, step["iterations"] = s.iterations, step["residual"] = s.residual;
                step["tensor_cores"] = s.tensor_cores;
                steps.append(step);
            }
            d["steps"] = steps;
            return d;
        },
        nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("lower"), nb::arg("n"), nb::arg("nrhs"),
        nb::arg("a"), nb::arg("lda"), nb::arg("b"), nb::arg("ldb"), nb::arg("x"), nb::arg("ldx"), nb::arg("max_iterations"),
        nb::arg("tensor_core_updates"), nb::arg("allow_fallback"),
        "batchsolve::posv_mixed (cholesky_large.hpp) on column-major operands at raw addresses.");

    // ---- variable-size batches (vbatched_triangular.hpp) ----------------------------------------------
    m.def(
        "potrf_vbatched",
        [](std::string precision, int device, std::int64_t stream, bool lower, std::uintptr_t n, std::uintptr_t a,
           std::uintptr_t lda, std::int64_t batch, std::int64_t max_n, std::uintptr_t info) {
            const int count = to_int("potrf_vbatched", "batch", batch), N = to_int("potrf_vbatched", "max_n", max_n);
            run_on(device, stream, [&](bs::Context& ctx) {
                dispatch(precision, [&](auto tag) {
                    using T = typename decltype(tag)::type;
                    bs::potrf_vbatched_max<T>(uplo_of(lower), reinterpret_cast<const int*>(n), reinterpret_cast<T* const*>(a),
                                              reinterpret_cast<const int*>(lda), N, count, reinterpret_cast<int*>(info), ctx);
                });
            });
        },
        nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("lower"), nb::arg("n"), nb::arg("a"),
        nb::arg("lda"), nb::arg("batch"), nb::arg("max_n"), nb::arg("info"),
        "batchsolve::potrf_vbatched_max: arrays of orders, pointers and leading dimensions at raw addresses "
        "(in the backend's memory), the largest order known.");

    m.def(
        "gemm_vbatched",
        [](std::string precision, int device, std::int64_t stream, std::string trans_a, std::string trans_b, std::uintptr_t m,
           std::uintptr_t n, std::uintptr_t k, std::complex<double> alpha, std::uintptr_t a, std::uintptr_t lda,
           std::uintptr_t b, std::uintptr_t ldb, std::complex<double> beta, std::uintptr_t c, std::uintptr_t ldc,
           std::int64_t max_m, std::int64_t max_n, std::int64_t max_k, std::int64_t batch, std::uintptr_t info) {
            const int count = to_int("gemm_vbatched", "batch", batch);
            const int M = to_int("gemm_vbatched", "max_m", max_m), N = to_int("gemm_vbatched", "max_n", max_n);
            const int K = to_int("gemm_vbatched", "max_k", max_k);
            const bs::Op op_a = bs::parse_op(trans_a), op_b = bs::parse_op(trans_b);
            run_on(device, stream, [&](bs::Context& ctx) {
                dispatch(precision, [&](auto tag) {
                    using T = typename decltype(tag)::type;
                    auto ints = [](std::uintptr_t p) { return reinterpret_cast<const int*>(p); };
                    bs::gemm_vbatched_max<T>(op_a, op_b, ints(m), ints(n), ints(k), scalar_as<T>(alpha),
                                             reinterpret_cast<const T* const*>(a), ints(lda), reinterpret_cast<const T* const*>(b),
                                             ints(ldb), scalar_as<T>(beta), reinterpret_cast<T* const*>(c), ints(ldc), M, N, K,
                                             count, reinterpret_cast<int*>(info), ctx);
                });
            });
        },
        nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("m"),
        nb::arg("n"), nb::arg("k"), nb::arg("alpha"), nb::arg("a"), nb::arg("lda"), nb::arg("b"), nb::arg("ldb"),
        nb::arg("beta"), nb::arg("c"), nb::arg("ldc"), nb::arg("max_m"), nb::arg("max_n"), nb::arg("max_k"), nb::arg("batch"),
        nb::arg("info"), "batchsolve::gemm_vbatched_max (vbatched_blas.hpp): arrays at raw addresses, maxima known.");

    m.def(
        "trsm_vbatched",
        [](std::string precision, int device, std::int64_t stream, bool left, bool lower, std::string trans, bool unit,
           std::uintptr_t m, std::uintptr_t n, std::complex<double> alpha, std::uintptr_t a, std::uintptr_t lda,
           std::uintptr_t b, std::uintptr_t ldb, std::int64_t max_m, std::int64_t max_n, std::int64_t batch, std::uintptr_t info) {
            const int count = to_int("trsm_vbatched", "batch", batch);
            const int M = to_int("trsm_vbatched", "max_m", max_m), N = to_int("trsm_vbatched", "max_n", max_n);
            const bs::Op op = bs::parse_op(trans);
            run_on(device, stream, [&](bs::Context& ctx) {
                dispatch(precision, [&](auto tag) {
                    using T = typename decltype(tag)::type;
                    auto ints = [](std::uintptr_t p) { return reinterpret_cast<const int*>(p); };
                    bs::trsm_vbatched_max<T>(left ? bs::Side::left : bs::Side::right, uplo_of(lower), op,
                                             unit ? bs::Diag::unit : bs::Diag::non_unit, ints(m), ints(n), scalar_as<T>(alpha),
                                             reinterpret_cast<const T* const*>(a), ints(lda), reinterpret_cast<T* const*>(b),
                                             ints(ldb), M, N, count, reinterpret_cast<int*>(info), ctx);
                });
            });
        },
        nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("left"), nb::arg("lower"), nb::arg("trans"),
        nb::arg("unit"), nb::arg("m"), nb::arg("n"), nb::arg("alpha"), nb::arg("a"), nb::arg("lda"), nb::arg("b"),
        nb::arg("ldb"), nb::arg("max_m"), nb::arg("max_n"), nb::arg("batch"), nb::arg("info"),
        "batchsolve::trsm_vbatched_max (vbatched_triangular.hpp): arrays at raw addresses, maxima known.");

}
