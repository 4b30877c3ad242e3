// _batchsolve: the raw entry points of the Python package (nanobind). Arrays arrive as addresses and
// element strides that batchsolve/_arrays.py read from NumPy, PyTorch, CuPy, DLPack or
// __cuda_array_interface__ objects, so no framework is linked here and nothing is copied.
//
// One Context per device (CPU: device -1), created on first use and kept; each call sets the
// caller's stream on it, releases the GIL and holds the context's mutex (a Context is not
// thread-safe). Library exceptions become the Python classes created below, with the library's message.
#include "module_common.hpp"

namespace {

// ---- the routines -------------------------------------------------------------------------------

// One call of a Cholesky routine on fixed operands: what potrf/potrs/posv and the timing loop share.
struct CholeskyCall {
    std::string routine;  // potrf | potrs | posv
    std::string precision;
    bool lower = true;
    std::int64_t n = 0, nrhs = 0, count = 0;
    Operand a, b;
    std::uintptr_t info = 0;
    std::string config;  // JSON of a CholeskyConfig; "" = the tuning table's choice

    // Runs it with every address shifted by the given byte offsets (the timing loop's input sets).
    void run(bs::Context& ctx, std::int64_t a_shift = 0, std::int64_t b_shift = 0, std::int64_t info_shift = 0) const {
        const char* name = routine.c_str();
        dispatch(precision, [&](auto tag) {
            using T = typename decltype(tag)::type;
            Operand as = a, bsh = b;
            as.address += a_shift, bsh.address += b_shift;
            int* info_ptr = reinterpret_cast<int*>(info + info_shift);
            auto A = view_of<T>(name, "a", as, n, n, count);
            const bool pinned = !config.empty();
            const bs::CholeskyConfig cfg = pinned ? bs::parse_config(config) : bs::CholeskyConfig{};
            if (routine == "potrf") {
                pinned ? bs::potrf_batched(uplo_of(lower), A, info_ptr, cfg, ctx) : bs::potrf_batched(uplo_of(lower), A, info_ptr, ctx);
                return;
            }
            auto B = view_of<T>(name, "b", bsh, n, nrhs, count);
            if (routine == "potrs") {
                pinned ? bs::potrs_batched(uplo_of(lower), A, B, cfg, ctx) : bs::potrs_batched(uplo_of(lower), A, B, ctx);
            } else if (routine == "posv") {
                pinned ? bs::posv_batched(uplo_of(lower), A, B, info_ptr, cfg, ctx)
                       : bs::posv_batched(uplo_of(lower), A, B, info_ptr, ctx);
            } else {
                throw bs::InvalidArgument("batchsolve", "routine", "potrf, potrs or posv (got '" + routine + "')");
            }
        });
    }
};

CholeskyCall make_call(std::string routine, std::string precision, bool lower, std::int64_t n, std::int64_t nrhs,
                       std::int64_t count, int layout, std::uintptr_t a, std::int64_t lda, std::int64_t stride_a,
                       std::uintptr_t b, std::int64_t ldb, std::int64_t stride_b, int chunk, std::uintptr_t info,
                       std::string config) {
    CholeskyCall call;
    call.routine = std::move(routine), call.precision = std::move(precision), call.lower = lower;
    call.n = n, call.nrhs = nrhs, call.count = count, call.info = info, call.config = std::move(config);
    call.a = Operand{layout, a, lda, stride_a, chunk};
    call.b = Operand{layout, b, ldb, stride_b, chunk};
    return call;
}

nb::dict kernel_report_dict(const bs::KernelReport& r) {
    nb::dict d;
    d["supported"] = r.supported, d["note"] = r.note, d["name"] = r.name, d["config"] = r.config;
    d["registers"] = r.registers, d["local_bytes"] = r.local_bytes, d["threads_per_block"] = r.threads_per_block;
    d["blocks_per_sm"] = r.blocks_per_sm, d["from_disk_cache"] = r.from_disk_cache, d["compile_seconds"] = r.compile_seconds;
    return d;
}

nb::dict sysv_result_dict(const bs::SysvResult& r) {
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
}

}  // namespace

NB_MODULE(_batchsolve, m) {
    m.doc() = "Raw entry points of batchsolve (addresses and strides); use the batchsolve package instead.";

    error_type = PyErr_NewExceptionWithDoc("batchsolve.Error", "An error reported by the batchsolve library.",
                                           PyExc_RuntimeError, nullptr);
    if (error_type == nullptr) throw nb::python_error();
    nb::object argument_bases = nb::make_tuple(nb::handle(error_type), nb::handle(PyExc_ValueError));
    argument_error_type = PyErr_NewExceptionWithDoc(
        "batchsolve.ArgumentError", "A bad argument, found before any work: .routine, .argument and .condition name it.",
        argument_bases.ptr(), nullptr);
    nb::object not_compiled_bases = nb::make_tuple(nb::handle(error_type), nb::handle(PyExc_NotImplementedError));
    not_compiled_type = PyErr_NewExceptionWithDoc("batchsolve.NotCompiledError",
                                                  "The entry point is not part of this build (e.g. CUDA in a CPU-only build).",
                                                  not_compiled_bases.ptr(), nullptr);
    cuda_error_type = PyErr_NewExceptionWithDoc("batchsolve.CudaError",
                                                "A CUDA runtime, driver or library call failed: .call and .code name it.",
                                                error_type, nullptr);
    if (!error_type || !argument_error_type || !not_compiled_type || !cuda_error_type) throw nb::python_error();
    m.attr("Error") = nb::handle(error_type);
    m.attr("ArgumentError") = nb::handle(argument_error_type);
    m.attr("NotCompiledError") = nb::handle(not_compiled_type);
    m.attr("CudaError") = nb::handle(cuda_error_type);
    nb::register_exception_translator(translate_exception);

    m.def("cuda_compiled", &bs::Context::cuda_compiled, "True when the library was built with its CUDA backend.");
    m.def("cuda_available", &bs::Context::cuda_available, "True when the CUDA backend is built and a device is usable.");
    m.def("device_name", [](int device) { return context_for(device, keep_stream).context->device_name(); }, nb::arg("device"),
          "The name of device `device` (-1: the CPU backend, with its thread count).");

    m.def(
        "cholesky",
        [](std::string routine, std::string precision, int device, std::int64_t stream, bool lower, std::int64_t n,
           std::int64_t nrhs, std::int64_t count, int layout, std::uintptr_t a, std::int64_t lda, std::int64_t stride_a,
           std::uintptr_t b, std::int64_t ldb, std::int64_t stride_b, int chunk, std::uintptr_t info, std::string config) {
            const CholeskyCall call = make_call(std::move(routine), std::move(precision), lower, n, nrhs, count, layout, a, lda,
                                                stride_a, b, ldb, stride_b, chunk, info, std::move(config));
            run_on(device, stream, [&](bs::Context& ctx) { call.run(ctx); });
        },
        nb::arg("routine"), nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("lower"), nb::arg("n"),
        nb::arg("nrhs"), nb::arg("count"), nb::arg("layout"), nb::arg("a"), nb::arg("lda"), nb::arg("stride_a"), nb::arg("b"),
        nb::arg("ldb"), nb::arg("stride_b"), nb::arg("chunk"), nb::arg("info"), nb::arg("config"),
        "potrf_batched / potrs_batched / posv_batched on column-major (ld, stride in elements) or interleaved operands "
        "at raw addresses, on device `device` (-1: CPU) and CUDA stream `stream` (0: the legacy default stream).");

    // The hot path of potrf/potrs/posv (no configuration, no strings): routine 0 potrf, 1 potrs, 2 posv;
    // precision 0..3 = s, d, c, z.
    m.def(
        "cholesky_fast",
        [](int routine, int precision, int device, std::int64_t stream, bool lower, std::int64_t n, std::int64_t nrhs,
           std::int64_t count, int layout, std::uintptr_t a, std::int64_t lda, std::int64_t stride_a, std::uintptr_t b,
           std::int64_t ldb, std::int64_t stride_b, int chunk, std::uintptr_t info) {
            static const char* const routines[] = {"potrf", "potrs", "posv"};
            static const char* const precisions[] = {"s", "d", "c", "z"};
            if (routine < 0 || routine > 2) throw bs::InvalidArgument("batchsolve", "routine", "0 (potrf), 1 (potrs) or 2 (posv)");
            if (precision < 0 || precision > 3) throw bs::InvalidArgument("batchsolve", "precision", "0..3 (s, d, c, z)");
            const CholeskyCall call = make_call(routines[routine], precisions[precision], lower, n, nrhs, count, layout, a, lda,
                                                stride_a, b, ldb, stride_b, chunk, info, std::string());
            run_launch(device, stream, [&](bs::Context& ctx) { call.run(ctx); });
        },
        nb::arg("routine"), nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("lower"), nb::arg("n"),
        nb::arg("nrhs"), nb::arg("count"), nb::arg("layout"), nb::arg("a"), nb::arg("lda"), nb::arg("stride_a"), nb::arg("b"),
        nb::arg("ldb"), nb::arg("stride_b"), nb::arg("chunk"), nb::arg("info"),
        "cholesky() without a configuration, routine and precision as small integers: the hot path.");

    m.def(
        "time_cholesky",
        [](std::string routine, std::string precision, int device, std::int64_t stream, bool lower, std::int64_t n,
           std::int64_t nrhs, std::int64_t count, int layout, std::uintptr_t a, std::int64_t lda, std::int64_t stride_a,
           std::uintptr_t b, std::int64_t ldb, std::int64_t stride_b, int chunk, std::uintptr_t info, std::string config,
           int sets, std::int64_t a_pitch, std::int64_t b_pitch, std::int64_t info_pitch) {
            if (sets < 1) throw bs::InvalidArgument("time_cholesky", "sets", "sets >= 1");
            const CholeskyCall call = make_call(std::move(routine), std::move(precision), lower, n, nrhs, count, layout, a, lda,
                                                stride_a, b, ldb, stride_b, chunk, info, std::move(config));
            return run_on(device, stream, [&](bs::Context& ctx) {
                ctx.synchronize();  // the caller's restore of the sets is on this stream
                using clock = std::chrono::steady_clock;
                const auto start = clock::now();
                for (int s = 0; s < sets; ++s) call.run(ctx, s * a_pitch, s * b_pitch, s * info_pitch);
                const auto issued = clock::now();
                ctx.synchronize();
                const auto done = clock::now();
                return std::make_pair(std::chrono::duration<double>(done - start).count(),
                                      std::chrono::duration<double>(issued - start).count());
            });
        },
        nb::arg("routine"), nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("lower"), nb::arg("n"),
        nb::arg("nrhs"), nb::arg("count"), nb::arg("layout"), nb::arg("a"), nb::arg("lda"), nb::arg("stride_a"), nb::arg("b"),
        nb::arg("ldb"), nb::arg("stride_b"), nb::arg("chunk"), nb::arg("info"), nb::arg("config"), nb::arg("sets"),
        nb::arg("a_pitch"), nb::arg("b_pitch"), nb::arg("info_pitch"),
        "The C++ call's time: `sets` calls back to back from C++ (set s at the addresses plus s times each pitch, in "
        "bytes), between two synchronisations of the stream; returns (seconds until all finished, seconds until the "
        "last call returned to the host).");

    m.def(
        "convert_layout",
        [](std::string precision, int device, std::int64_t stream, std::int64_t rows, std::int64_t cols, std::int64_t count,
           int src_layout, std::uintptr_t src, std::int64_t src_ld, std::int64_t src_stride, int src_chunk, int dst_layout,
           std::uintptr_t dst, std::int64_t dst_ld, std::int64_t dst_stride, int dst_chunk) {
            run_on(device, stream, [&](bs::Context& ctx) {
                dispatch(precision, [&](auto tag) {
            using T = typename decltype(tag)::type;
                    auto S = view_of<T>("convert_layout", "src", Operand{src_layout, src, src_ld, src_stride, src_chunk}, rows, cols, count);
                    auto D = view_of<T>("convert_layout", "dst", Operand{dst_layout, dst, dst_ld, dst_stride, dst_chunk}, rows, cols, count);
                    bs::convert_layout(S, D, ctx);
                });
            });
        },
        nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("rows"), nb::arg("cols"), nb::arg("count"),
        nb::arg("src_layout"), nb::arg("src"), nb::arg("src_ld"), nb::arg("src_stride"), nb::arg("src_chunk"),
        nb::arg("dst_layout"), nb::arg("dst"), nb::arg("dst_ld"), nb::arg("dst_stride"), nb::arg("dst_chunk"),
        "batchsolve::convert_layout between two batches at raw addresses.");

    m.def(
        "prepare_kernel",
        [](std::string routine, std::string precision, int device, bool lower, std::int64_t n, std::int64_t nrhs,
           std::int64_t count, int layout, int chunk, std::string config) {
            const bs::KernelReport report = run_on(device, keep_stream, [&](bs::Context& ctx) {
                return dispatch(precision, [&](auto tag) {
            using T = typename decltype(tag)::type;
                    // The shape only: prepare_kernel reads no element, so a non-null dummy address will do.
                    const Operand shape{layout, std::uintptr_t(64), n, n * n, chunk};
                    bs::BatchView<const T> view = view_of<T>("prepare_kernel", "a", shape, n, n, count);
                    const bs::KernelReport report =
                        config.empty() ? bs::prepare_kernel<T>(routine, uplo_of(lower), view, int(nrhs), ctx)
                                       : bs::prepare_kernel<T>(routine, uplo_of(lower), view, int(nrhs), bs::parse_config(config), ctx);
                    return report;
                });
            });
            return kernel_report_dict(report);
        },
        nb::arg("routine"), nb::arg("precision"), nb::arg("device"), nb::arg("lower"), nb::arg("n"), nb::arg("nrhs"),
        nb::arg("count"), nb::arg("layout"), nb::arg("chunk"), nb::arg("config"),
        "Compiles (or loads from the disk cache) the kernel a call of this shape would run, without running it.");

    m.def(
        "reserve_workspace",
        [](int device, std::uint64_t bytes, std::int64_t stream) { run_on(device, stream, [&](bs::Context& ctx) { ctx.workspace(bytes); }); },
        nb::arg("device"), nb::arg("bytes"), nb::arg("stream"),
        "Grows the workspace of the context of (device, stream) to `bytes` now, outside a timed loop.");
    m.def(
        "workspace_bytes",
        [](std::string routine, std::string precision, int device, bool lower, std::int64_t n, std::int64_t nrhs,
           std::int64_t count, int layout, int chunk, std::string config) {
            return run_on(device, keep_stream, [&](bs::Context& ctx) {
                return dispatch(precision, [&](auto tag) {
            using T = typename decltype(tag)::type;
                    const Operand shape{layout, std::uintptr_t(64), n, n * n, chunk};
                    bs::BatchView<const T> view = view_of<T>("workspace_bytes", "a", shape, n, n, count);
                    const bs::Routine r = bs::parse_routine(routine);
                    return config.empty() ? bs::workspace_bytes<T>(r, uplo_of(lower), view, int(nrhs), ctx)
                                          : bs::workspace_bytes<T>(r, uplo_of(lower), view, int(nrhs), bs::parse_config(config), ctx);
                });
            });
        },
        nb::arg("routine"), nb::arg("precision"), nb::arg("device"), nb::arg("lower"), nb::arg("n"), nb::arg("nrhs"),
        nb::arg("count"), nb::arg("layout"), nb::arg("chunk"), nb::arg("config"),
        "Bytes of workspace a call of this shape takes (see batchsolve::workspace_bytes).");
    m.def("canonical_config", [](std::string json) { return bs::to_string(bs::parse_config(json)); }, nb::arg("json"),
          "A CholeskyConfig JSON object with every field, as the library reads it (ArgumentError names a bad field).");

    m.def(
        "sysv_mixed",
        [](std::string precision, int device, std::int64_t stream, bool hermitian, bool lower, std::int64_t n, std::int64_t nrhs,
           std::uintptr_t a, std::int64_t lda, std::uintptr_t b, std::int64_t ldb, std::uintptr_t x, std::int64_t ldx,
           bool allow_rbt, bool allow_pivoted, bool start_with_rbt, int max_iterations, bool tensor_core_updates) {
            bs::SysvOptions options;
            options.allow_rbt = allow_rbt, options.allow_pivoted = allow_pivoted, options.start_with_rbt = start_with_rbt;
            options.max_iterations = max_iterations, options.tensor_core_updates = tensor_core_updates;
            const bs::Symmetry symmetry = hermitian ? bs::Symmetry::hermitian : bs::Symmetry::symmetric;
            const int N = to_int("sysv_mixed", "n", n), R = to_int("sysv_mixed", "nrhs", nrhs);
            const int LDA = to_int("sysv_mixed", "lda", lda), LDB = to_int("sysv_mixed", "ldb", ldb), LDX = to_int("sysv_mixed", "ldx", ldx);
            const bs::SysvResult result = run_on(device, stream, [&](bs::Context& ctx) {
                auto solve = [&](auto* typed) {
                    using T = std::remove_pointer_t<decltype(typed)>;
                    bs::SysvResult r = bs::sysv_mixed<T>(symmetry, uplo_of(lower), N, R, reinterpret_cast<const T*>(a), LDA,
                                                         reinterpret_cast<const T*>(b), LDB, reinterpret_cast<T*>(x), LDX, options, ctx);
                    ctx.synchronize();
                    return r;
                };
                if (precision == "d") return solve(static_cast<double*>(nullptr));
                if (precision == "z") return solve(static_cast<std::complex<double>*>(nullptr));
                throw bs::InvalidArgument("sysv_mixed", "dtype", "float64 or complex128 (it factors in the single precision below)");
            });
            return sysv_result_dict(result);
        },
        nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("hermitian"), nb::arg("lower"), nb::arg("n"),
        nb::arg("nrhs"), nb::arg("a"), nb::arg("lda"), nb::arg("b"), nb::arg("ldb"), nb::arg("x"), nb::arg("ldx"),
        nb::arg("allow_rbt"), nb::arg("allow_pivoted"), nb::arg("start_with_rbt"), nb::arg("max_iterations"),
        nb::arg("tensor_core_updates"), "batchsolve::sysv_mixed on column-major operands at raw addresses.");

    m.def(
        "synchronize", [](int device, std::int64_t stream) { run_on(device, stream, [&](bs::Context& ctx) { ctx.synchronize(); }); },
        nb::arg("device"), nb::arg("stream"), "Waits for the work issued on `stream` of the device (0: the legacy default stream).");
}
