// A shared library opened on first use and its functions looked up by name, for the applications'
// optional CUDA libraries (dvc's cuFFT, als's cuBLAS): linked, each was mapped and relocated before
// main of every process, --backend cpu and --help included. Errors are thrown as the caller's own
// exception type E (constructible from std::string), naming the library and what dlopen/dlsym said.
//
//   static const Api api = [] { SharedLibrary<Error> lib("cuFFT", "libcufft.so.12");
//                               Api a; lib.get(a.exec_r2c, "cufftExecR2C"); return a; }();
#pragma once

#include <dlfcn.h>

#include <string>

namespace batchsolve::io {

template <class E>
class SharedLibrary {
public:
    // Opens soname (RTLD_NOW | RTLD_LOCAL); `what` names it in errors ("cuFFT"). The handle is
    // never closed: the functions looked up stay valid for the life of the process.
    SharedLibrary(const char* what, const char* soname) : what_(what), soname_(soname) {
        handle_ = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
        if (handle_ == nullptr) {
            const char* why = dlerror();
            throw E(what_ + ": " + soname_ + " could not be loaded (" + (why ? why : "dlopen failed") + ")");
        }
    }
    // f = the function `name` of the library (F a function-pointer type).
    template <class F>
    void get(F& f, const char* name) const {
        f = reinterpret_cast<F>(dlsym(handle_, name));
        if (f == nullptr) throw E(what_ + ": " + soname_ + " has no " + name);
    }

private:
    std::string what_, soname_;
    void* handle_ = nullptr;
};

}  // namespace batchsolve::io
