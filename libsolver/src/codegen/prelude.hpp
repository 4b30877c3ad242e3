// The one prelude of every generated kernel: the macros that stand between the kernel text and CUDA
// (or the host emulator of the tests), the element types R and T, and one set of element helpers
// with the same names in real and complex precision, so that a kernel body is written once.
#pragma once

#include <string>

#include "batchsolve/types.hpp"

namespace batchsolve::codegen {

// The text every generated kernel starts with (after its comment line), for precision p; a family
// adds what only it needs after it (e.g. the interleaved kernels' idx_t and N):
//
//   macros (CUDA's definitions; the host emulator, BS_HOST_EMULATION, supplies its own)
//     BS_DEVICE              the qualifier of every device function (__device__ __forceinline__)
//     BS_KERNEL_HEAD(t, b)   extern "C" __global__ void __launch_bounds__(t, b)
//     BS_DECLARE_SMEM(name)  the dynamic shared memory as 16-byte aligned bytes
//     BS_FENCE()             compiler-only memory fence (bounds how far loads are hoisted)
//     BS_OPAQUE_I32(i), BS_OPAQUE_I64(i)  hide an int / long long from the optimiser
//     BS_VEC_AT(p)           the 16-byte bs_vec at p (p 16-byte aligned; the emulator checks)
//   types
//     R  the real type (float, double); T  the element (R, or bs_complex {R re, im}, aligned to its
//        size as std::complex<R> data from cudaMalloc and cuComplex are)
//     bs_vec  16 bytes of elements (one vector load)
//   helpers (T unless said otherwise)
//     bs_make(re, im) (complex only), bs_real(T) -> R (the real part), bs_from_real(R), bs_zero(),
//     bs_conj, bs_scale(z, R), bs_add, bs_sub, bs_sub_mul(x, s, c) = x - s c,
//     bs_sub_mul_conj(x, s, c) = x - s conj(c), bs_sub_conj_mul(x, e, y) = x - conj(e) y,
//     bs_add_conj_mul(acc, l, v) = acc + conj(l) v, bs_mul(a, b), bs_fma(a, b, acc) = acc + a b and
//     bs_fms(a, b, acc) = acc - a b (fused), bs_div(a, b) (Smith's), bs_div_real(a, R),
//     bs_is_zero(z) -> bool, bs_real_only(z) (imaginary part dropped); in complex precision also the
//     operators z * z, z -= z, z *= R (the real ones are the language's);
//     bs_bits(T) -> int (the low word of the real part: a value that changes when the number does),
//     bs_shfl(v, src, width = 32), bs_shfl_xor(v, mask, width = 32) (full-warp shuffles),
//     bs_pivot_ok(R d) -> bool: d is a usable Cholesky pivot, 0 < d < Inf (false for NaN, so that a
//     NaN or Inf anywhere in the referenced triangle gives a nonzero info; see docs/input-checks.md).
std::string kernel_prelude(Precision p);

}  // namespace batchsolve::codegen
