// Routine families declared once: the macros that turn one signature per routine into the backends'
// declarations, their definitions' heads, the CPU-only build's stand-ins and the explicit
// instantiations over precisions (in the spirit of Ginkgo's GKO_DECLARE_* kernels).
//
// A family header (core/backends.hpp for Cholesky and layouts, core/ldlt_backend.hpp, ...) writes
//
//   // one signature per routine, a function-like macro of its template parameters:
//   #define BATCHSOLVE_LDLT_FACTOR(T) void ldlt_factor(Symmetry s, int n, T* a, ..., Context& ctx)
//   // the family: (type set, signature, routine name for errors), one line per routine:
//   #define BATCHSOLVE_LDLT_ROUTINES(ROUTINE)
//       ROUTINE(PRECISIONS, BATCHSOLVE_LDLT_FACTOR, "sytrf_nopiv")
//       ROUTINE(MIXED_PAIRS, BATCHSOLVE_LDLT_EXPAND_LOWER, "sysv_mixed")   (lines joined by backslashes)
//   BATCHSOLVE_DECLARE_FAMILY(BATCHSOLVE_LDLT_ROUTINES)     // in reference:: and cuda_backend::
//
// and every backend then defines each routine through its signature and instantiates the family once:
//
//   template <class T>
//   BATCHSOLVE_LDLT_FACTOR(T) { ... }                       // parameter names as in the signature
//   ...
//   BATCHSOLVE_INSTANTIATE_FAMILY(BATCHSOLVE_LDLT_ROUTINES)  // every routine x its type set
//
// while the CPU-only build's stand-in is BATCHSOLVE_STUB_FAMILY(BATCHSOLVE_LDLT_ROUTINES) (each routine
// throws NotCompiled with its name) and core calls the context's backend with BATCHSOLVE_ON_BACKEND.
// A mismatch between a definition and its family (a changed parameter) fails to compile, since the
// definitions are expanded from the same macro. The backends ignore parameters they do not need
// (the CPU has no kernel configurations, most CPU routines no use for the context), so libsolver
// builds without -Wunused-parameter.
#pragma once

#include <complex>

#include "batchsolve/types.hpp"

namespace batchsolve {
// First parameter of a routine whose other parameters do not name every template parameter (a
// workspace-size query): an explicit instantiation deduces the template arguments from the parameter
// types, so the type has to appear there. Called as routine(TypeTag<T>{}, ...).
template <class... Types>
struct TypeTag {};
}  // namespace batchsolve

// ---- type sets: the template head, its arguments and the instantiations of each --------------------
// PRECISIONS: s, d, c, z.   REAL_PRECISIONS: s, d.   MIXED_PAIRS: (Hi, Lo) = (d, s), (z, c).
// A new set is three macros below (HEAD, ARGS, INSTANTIATE) with its name as the suffix.

#define BATCHSOLVE_TEMPLATE_HEAD_PRECISIONS template <class T>
#define BATCHSOLVE_TEMPLATE_ARGS_PRECISIONS (T)
#define BATCHSOLVE_INSTANTIATE_PRECISIONS(SIGNATURE) \
    template SIGNATURE(float);                        \
    template SIGNATURE(double);                       \
    template SIGNATURE(std::complex<float>);          \
    template SIGNATURE(std::complex<double>);

#define BATCHSOLVE_TEMPLATE_HEAD_REAL_PRECISIONS template <class T>
#define BATCHSOLVE_TEMPLATE_ARGS_REAL_PRECISIONS (T)
#define BATCHSOLVE_INSTANTIATE_REAL_PRECISIONS(SIGNATURE) \
    template SIGNATURE(float);                             \
    template SIGNATURE(double);

#define BATCHSOLVE_TEMPLATE_HEAD_MIXED_PAIRS template <class Hi, class Lo>
#define BATCHSOLVE_TEMPLATE_ARGS_MIXED_PAIRS (Hi, Lo)
#define BATCHSOLVE_INSTANTIATE_MIXED_PAIRS(SIGNATURE) \
    template SIGNATURE(double, float);                 \
    template SIGNATURE(std::complex<double>, std::complex<float>);

// Calls MACRO(T) for s, d, c, z (for explicit instantiations of helpers outside the families).
#define BATCHSOLVE_FOR_EACH_PRECISION(MACRO) \
    MACRO(float)                            \
    MACRO(double)                           \
    MACRO(std::complex<float>)              \
    MACRO(std::complex<double>)

// ---- expansions of one routine (ROUTINE arguments of a family list) --------------------------------

// SIGNATURE applied to a parenthesised argument list (the indirection lets (Hi, Lo) become two).
#define BATCHSOLVE_APPLY_SIGNATURE(SIGNATURE, ARGS) SIGNATURE ARGS

#define BATCHSOLVE_DECLARE_ROUTINE(TYPES, SIGNATURE, NAME) \
    BATCHSOLVE_TEMPLATE_HEAD_##TYPES BATCHSOLVE_APPLY_SIGNATURE(SIGNATURE, BATCHSOLVE_TEMPLATE_ARGS_##TYPES);

#define BATCHSOLVE_INSTANTIATE_ROUTINE(TYPES, SIGNATURE, NAME) BATCHSOLVE_INSTANTIATE_##TYPES(SIGNATURE)

#define BATCHSOLVE_STUB_ROUTINE(TYPES, SIGNATURE, NAME)                                   \
    BATCHSOLVE_TEMPLATE_HEAD_##TYPES BATCHSOLVE_APPLY_SIGNATURE(SIGNATURE, BATCHSOLVE_TEMPLATE_ARGS_##TYPES) { \
        throw ::batchsolve::NotCompiled(NAME, "cuda");                                    \
    }

// ---- expansions of a whole family ------------------------------------------------------------------

// At namespace scope outside batchsolve: the family's declarations in both backends' namespaces.
#define BATCHSOLVE_DECLARE_FAMILY(FAMILY)                             \
    namespace batchsolve::reference {                                 \
    FAMILY(BATCHSOLVE_DECLARE_ROUTINE)                                \
    }                                                                 \
    namespace batchsolve::cuda_backend {                              \
    FAMILY(BATCHSOLVE_DECLARE_ROUTINE)                                \
    }

// Routines only the CUDA backend has (its stand-in throws): declared in cuda_backend only.
#define BATCHSOLVE_DECLARE_CUDA_FAMILY(FAMILY) \
    namespace batchsolve::cuda_backend {       \
    FAMILY(BATCHSOLVE_DECLARE_ROUTINE)         \
    }

// Inside the backend's namespace, after the definitions: every routine over its type set.
#define BATCHSOLVE_INSTANTIATE_FAMILY(FAMILY) FAMILY(BATCHSOLVE_INSTANTIATE_ROUTINE)

// Inside namespace batchsolve::cuda_backend of a CPU-only build: definitions that throw NotCompiled
// naming the routine, and their instantiations.
#define BATCHSOLVE_STUB_FAMILY(FAMILY)   \
    FAMILY(BATCHSOLVE_STUB_ROUTINE)      \
    FAMILY(BATCHSOLVE_INSTANTIATE_ROUTINE)

// core's dispatch: the same call on the context's backend, e.g.
//   BATCHSOLVE_ON_BACKEND(ctx, potrf_batched(uplo, a, info, config, ctx));
#define BATCHSOLVE_ON_BACKEND(ctx, ...) \
    ((ctx).backend() == ::batchsolve::Backend::cuda ? ::batchsolve::cuda_backend::__VA_ARGS__ : ::batchsolve::reference::__VA_ARGS__)
