// Shared by the two extension modules (_batchsolve: the batched Cholesky family, layouts, tuning and
// sysv_mixed; _families: the routine families that are still moving, cholesky_large and vbatched, so
// that a library without one of them still imports the core): exception translation, one Context per
// device, operands at raw addresses. Everything here has internal linkage: each module has its own.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <complex>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "batchsolve/batchsolve.hpp"

namespace nb = nanobind;
namespace bs = batchsolve;

namespace {

// ---- exceptions ---------------------------------------------------------------------------------

PyObject* error_type = nullptr;           // batchsolve.Error(RuntimeError)
PyObject* argument_error_type = nullptr;  // batchsolve.ArgumentError(Error, ValueError)
PyObject* not_compiled_type = nullptr;    // batchsolve.NotCompiledError(Error, NotImplementedError)
PyObject* cuda_error_type = nullptr;      // batchsolve.CudaError(Error)

void raise_with_attributes(PyObject* type, const char* message, std::initializer_list<std::pair<const char*, std::string>> attributes) {
    PyObject* instance = PyObject_CallFunction(type, "s", message);
    if (instance == nullptr) return;  // the Python error of the failed call stands
    for (const auto& [name, value] : attributes) {
        PyObject* text = PyUnicode_FromString(value.c_str());
        if (text != nullptr) PyObject_SetAttrString(instance, name, text);
        Py_XDECREF(text);
    }
    PyErr_SetObject(type, instance);
    Py_DECREF(instance);
}

void translate_exception(const std::exception_ptr& p, void*) {
    try {
        std::rethrow_exception(p);
    } catch (const bs::InvalidArgument& e) {
        raise_with_attributes(argument_error_type, e.what(),
                              {{"routine", e.routine()}, {"argument", e.argument()}, {"condition", e.condition()}});
    } catch (const bs::NotCompiled& e) {
        PyErr_SetString(not_compiled_type, e.what());
    } catch (const bs::CudaError& e) {
        raise_with_attributes(cuda_error_type, e.what(), {{"call", e.call()}, {"code", std::to_string(e.code())}});
    } catch (const bs::Error& e) {
        PyErr_SetString(error_type, e.what());
    }
}

// ---- contexts -----------------------------------------------------------------------------------

// One Context per (device, stream), created on first use and never destroyed. A context stays on
// the stream it was made for: switching a context between the callers' streams would make it wait,
// at the next switch, on a stream the caller may have destroyed since (a CuPy stream is destroyed
// when it is collected; synchronising it then crashed the H100 runs of 01:40 and 02:20).
struct DeviceContext {
    std::unique_ptr<bs::Context> context;
    std::mutex mutex;
};

std::mutex contexts_mutex;
std::map<std::pair<int, std::uintptr_t>, std::unique_ptr<DeviceContext>>& contexts() {
    static auto* map = new std::map<std::pair<int, std::uintptr_t>, std::unique_ptr<DeviceContext>>();  // never destroyed
    return *map;
}

// The stream a call is ordered on. 0 is what PyTorch and CuPy report for the legacy default stream;
// the library's nullptr would mean its own stream instead, which is not ordered with the caller's work.
std::uintptr_t cuda_stream_of(std::int64_t stream) { return stream == 0 ? std::uintptr_t(1) /* cudaStreamLegacy */ : std::uintptr_t(stream); }

constexpr std::int64_t keep_stream = -1;  // calls that launch nothing: the legacy default stream's context

// The most recent context of each of the first devices, found without the map's lock (lookups happen
// with the GIL held, so Python threads do not race here).
constexpr int fast_devices = 16;
DeviceContext* recent_context[fast_devices + 1] = {};  // slot 0: the CPU (device -1)
std::uintptr_t recent_stream[fast_devices + 1] = {};

DeviceContext& context_for(int device, std::int64_t stream) {
    if (device < -1) throw bs::InvalidArgument("batchsolve", "device", "-1 (CPU) or a CUDA device index >= 0");
    const std::uintptr_t handle = device < 0 ? 0 : cuda_stream_of(stream == keep_stream ? 0 : stream);
    if (device < fast_devices && recent_context[device + 1] != nullptr && recent_stream[device + 1] == handle)
        return *recent_context[device + 1];
    std::lock_guard<std::mutex> lock(contexts_mutex);
    auto& slot = contexts()[{device, handle}];
    if (!slot) {
        auto entry = std::make_unique<DeviceContext>();
        entry->context = device < 0 ? std::make_unique<bs::Context>(bs::Backend::cpu)
                                    : std::make_unique<bs::Context>(bs::Backend::cuda, device);
        if (device >= 0) entry->context->set_stream(reinterpret_cast<void*>(handle));
        slot = std::move(entry);
    }
    if (device < fast_devices) recent_context[device + 1] = slot.get(), recent_stream[device + 1] = handle;
    return *slot;
}

// Runs f(ctx) on the context of the device and the caller's stream, without the GIL.
template <class F>
auto run_on(int device, std::int64_t stream, F&& f) {
    DeviceContext& entry = context_for(device, stream);
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(entry.mutex);
    return f(*entry.context);
}

// The same for calls that only launch work (CUDA potrf/potrs/posv): releasing and taking back the
// GIL costs more than the launch keeps it, so it is kept unless the CPU backend computes.
template <class F>
auto run_launch(int device, std::int64_t stream, F&& f) {
    if (device < 0) return run_on(device, stream, std::forward<F>(f));
    DeviceContext& entry = context_for(device, stream);
    std::lock_guard<std::mutex> lock(entry.mutex);
    return f(*entry.context);
}

// ---- operands -----------------------------------------------------------------------------------

// Layout codes shared with _arrays.py.
enum LayoutCode : int { column_major = 0, interleaved = 1, chunked = 2 };

// The library counts in int: a larger size is an argument error, not a wrapped value. `field` names
// a member of `operand` ("a" + ".ld"); the text is only built when the check fails.
int to_int(const char* routine, const char* operand, const char* field, std::int64_t value) {
    if (value < 0 || value > INT_MAX) {
        const std::string argument = std::string(operand) + field;
        throw bs::InvalidArgument(routine, argument, "0 <= " + argument + " <= 2^31 - 1 (got " + std::to_string(value) + ")");
    }
    return int(value);
}
int to_int(const char* routine, const char* argument, std::int64_t value) { return to_int(routine, argument, "", value); }

// One batch of rows x cols matrices: where it is and how it is laid out (strides in elements).
struct Operand {
    int layout = column_major;
    std::uintptr_t address = 0;
    std::int64_t ld = 0, stride = 0;
    int chunk = 0;
};

template <class T>
bs::BatchView<T> view_of(const char* routine, const char* name, const Operand& o, std::int64_t rows, std::int64_t cols,
                         std::int64_t count) {
    const int r = to_int(routine, name, ".rows", rows), c = to_int(routine, name, ".cols", cols);
    const int k = to_int(routine, "batch", count);
    T* data = reinterpret_cast<T*>(o.address);
    switch (o.layout) {
        case column_major: return bs::BatchView<T>::column_major(data, r, c, to_int(routine, name, ".ld", o.ld), o.stride, k);
        case interleaved: return bs::BatchView<T>::interleaved(data, r, c, k);
        case chunked: return bs::BatchView<T>::chunked(data, r, c, k, o.chunk);
    }
    throw bs::InvalidArgument(routine, std::string(name) + ".layout", "0 (column-major), 1 (interleaved) or 2 (chunked)");
}

// A Python scalar as the routine's T (the imaginary part dropped for real T: the Python layer checks it is 0).
template <class T>
T scalar_as(std::complex<double> v) {
    if constexpr (bs::is_complex_v<T>) return T(typename T::value_type(v.real()), typename T::value_type(v.imag()));
    else return T(v.real());
}

bs::Uplo uplo_of(bool lower) { return lower ? bs::Uplo::lower : bs::Uplo::upper; }

template <class T> struct Type { using type = T; };

// Calls f(Type<T>{}) for the precision letter.
template <class F>
auto dispatch(const std::string& precision, F&& f) {
    if (precision == "s") return f(Type<float>{});
    if (precision == "d") return f(Type<double>{});
    if (precision == "c") return f(Type<std::complex<float>>{});
    if (precision == "z") return f(Type<std::complex<double>>{});
    throw bs::InvalidArgument("batchsolve", "dtype", "float32, float64, complex64 or complex128 (precision s, d, c, z)");
}

}  // namespace
