// The one prelude of the generated kernels (see prelude.hpp for what it defines).
#include "codegen/prelude.hpp"

#include <sstream>

#include "codegen/common.hpp"

namespace batchsolve::codegen {

namespace {

// CUDA's side of the macros; the host emulator of the tests defines the same names for the CPU.
constexpr const char* kCudaMacros =
    "#ifndef BS_HOST_EMULATION\n"
    "#define BS_DEVICE __device__ __forceinline__\n"
    "#define BS_KERNEL_HEAD(threads, min_blocks) extern \"C\" __global__ void __launch_bounds__(threads, min_blocks)\n"
    "#define BS_DECLARE_SMEM(name) extern __shared__ __align__(16) unsigned char name[]\n"
    "// compiler-only memory fence: bounds how far loads are hoisted (and so the registers they hold)\n"
    "#define BS_FENCE() asm volatile(\"\" ::: \"memory\")\n"
    "// hide a value from the optimiser, so that addresses are advanced step by step instead of being\n"
    "// computed up front and held in registers\n"
    "#define BS_OPAQUE_I32(i) asm volatile(\"\" : \"+r\"(i))\n"
    "#define BS_OPAQUE_I64(i) asm volatile(\"\" : \"+l\"(i))\n"
    "// the 16-byte vector at p (p must be 16-byte aligned)\n"
    "#define BS_VEC_AT(p) (*reinterpret_cast<const bs_vec*>(p))\n"
    "#endif\n";

// Complex elements as two reals; the helpers spell out the products (no CUDA complex header).
constexpr const char* kComplexHelpers =
    "typedef bs_complex T;\n"
    "BS_DEVICE T bs_make(R re, R im) { T z; z.re = re; z.im = im; return z; }\n"
    "BS_DEVICE R bs_real(T z) { return z.re; }\n"
    "BS_DEVICE T bs_from_real(R r) { return bs_make(r, (R)0); }\n"
    "BS_DEVICE T bs_zero() { return bs_make((R)0, (R)0); }\n"
    "BS_DEVICE T bs_conj(T z) { return bs_make(z.re, -z.im); }\n"
    "BS_DEVICE T bs_scale(T z, R s) { return bs_make(z.re * s, z.im * s); }\n"
    "BS_DEVICE T bs_add(T a, T b) { return bs_make(a.re + b.re, a.im + b.im); }\n"
    "BS_DEVICE T bs_sub(T a, T b) { return bs_make(a.re - b.re, a.im - b.im); }\n"
    "BS_DEVICE T operator*(T x, T y) { return bs_make(x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re); }\n"
    "BS_DEVICE T& operator-=(T& x, T y) { x.re -= y.re; x.im -= y.im; return x; }\n"
    "BS_DEVICE T& operator*=(T& x, R s) { x.re *= s; x.im *= s; return x; }\n"
    "BS_DEVICE bool bs_is_zero(T z) { return z.re == (R)0 && z.im == (R)0; }\n"
    "BS_DEVICE T bs_real_only(T z) { return bs_make(z.re, (R)0); }\n"
    "BS_DEVICE T bs_mul(T a, T b) { return bs_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }\n"
    "// acc + a * b, acc - a * b (each part two fused multiply-adds)\n"
    "BS_DEVICE T bs_fma(T a, T b, T acc) {\n"
    "  return bs_make(fma(a.re, b.re, fma(-a.im, b.im, acc.re)), fma(a.re, b.im, fma(a.im, b.re, acc.im)));\n"
    "}\n"
    "BS_DEVICE T bs_fms(T a, T b, T acc) {\n"
    "  return bs_make(fma(-a.re, b.re, fma(a.im, b.im, acc.re)), fma(-a.re, b.im, fma(-a.im, b.re, acc.im)));\n"
    "}\n"
    "// a / b by Smith's scaling (|b|^2 is never formed, so a large b does not overflow)\n"
    "BS_DEVICE T bs_div(T a, T b) {\n"
    "  if (fabs(b.re) >= fabs(b.im)) {\n"
    "    const R q = b.im / b.re, d = b.re + b.im * q;\n"
    "    return bs_make((a.re + a.im * q) / d, (a.im - a.re * q) / d);\n"
    "  }\n"
    "  const R q = b.re / b.im, d = b.im + b.re * q;\n"
    "  return bs_make((a.re * q + a.im) / d, (a.im * q - a.re) / d);\n"
    "}\n"
    "BS_DEVICE T bs_div_real(T a, R d) { return bs_make(a.re / d, a.im / d); }\n"
    "// x - s * c\n"
    "BS_DEVICE T bs_sub_mul(T x, T s, T c) {\n"
    "  return bs_make(x.re - (s.re * c.re - s.im * c.im), x.im - (s.re * c.im + s.im * c.re));\n"
    "}\n"
    "// x - s * conj(c)\n"
    "BS_DEVICE T bs_sub_mul_conj(T x, T s, T c) {\n"
    "  return bs_make(x.re - (s.re * c.re + s.im * c.im), x.im - (s.im * c.re - s.re * c.im));\n"
    "}\n"
    "// x - conj(e) * y\n"
    "BS_DEVICE T bs_sub_conj_mul(T x, T e, T y) {\n"
    "  return bs_make(x.re - (e.re * y.re + e.im * y.im), x.im - (e.re * y.im - e.im * y.re));\n"
    "}\n"
    "// acc + conj(l) * v\n"
    "BS_DEVICE T bs_add_conj_mul(T acc, T l, T v) {\n"
    "  return bs_make(acc.re + (l.re * v.re + l.im * v.im), acc.im + (l.re * v.im - l.im * v.re));\n"
    "}\n"
    "BS_DEVICE T bs_shfl(T v, int src, int width = 32) {\n"
    "  return bs_make(__shfl_sync(0xffffffffu, v.re, src, width), __shfl_sync(0xffffffffu, v.im, src, width));\n"
    "}\n"
    "BS_DEVICE T bs_shfl_xor(T v, int mask, int width = 32) {\n"
    "  return bs_make(__shfl_xor_sync(0xffffffffu, v.re, mask, width), __shfl_xor_sync(0xffffffffu, v.im, mask, width));\n"
    "}\n";

// The same names for real elements.
constexpr const char* kRealHelpers =
    "typedef R T;\n"
    "BS_DEVICE R bs_real(T z) { return z; }\n"
    "BS_DEVICE T bs_from_real(R r) { return r; }\n"
    "BS_DEVICE T bs_zero() { return (R)0; }\n"
    "BS_DEVICE T bs_conj(T z) { return z; }\n"
    "BS_DEVICE T bs_scale(T z, R s) { return z * s; }\n"
    "BS_DEVICE T bs_add(T a, T b) { return a + b; }\n"
    "BS_DEVICE T bs_sub(T a, T b) { return a - b; }\n"
    "BS_DEVICE bool bs_is_zero(T z) { return z == (R)0; }\n"
    "BS_DEVICE T bs_real_only(T z) { return z; }\n"
    "BS_DEVICE T bs_mul(T a, T b) { return a * b; }\n"
    "BS_DEVICE T bs_fma(T a, T b, T acc) { return fma(a, b, acc); }\n"
    "BS_DEVICE T bs_fms(T a, T b, T acc) { return fma(-a, b, acc); }\n"
    "BS_DEVICE T bs_div(T a, T b) { return a / b; }\n"
    "BS_DEVICE T bs_div_real(T a, R d) { return a / d; }\n"
    "BS_DEVICE T bs_sub_mul(T x, T s, T c) { return x - s * c; }\n"
    "BS_DEVICE T bs_sub_mul_conj(T x, T s, T c) { return x - s * c; }\n"
    "BS_DEVICE T bs_sub_conj_mul(T x, T e, T y) { return x - e * y; }\n"
    "BS_DEVICE T bs_add_conj_mul(T acc, T l, T v) { return acc + l * v; }\n"
    "BS_DEVICE T bs_shfl(T v, int src, int width = 32) { return __shfl_sync(0xffffffffu, v, src, width); }\n"
    "BS_DEVICE T bs_shfl_xor(T v, int mask, int width = 32) { return __shfl_xor_sync(0xffffffffu, v, mask, width); }\n";

}  // namespace

std::string kernel_prelude(Precision p) {
    const bool single = is_single(p);
    std::ostringstream o;
    o << kCudaMacros;
    o << "typedef " << (single ? "float" : "double") << " R;\n";
    if (is_complex(p)) {
        o << "struct alignas(" << element_bytes(p) << ") bs_complex { R re, im; };  // std::complex<R>'s layout\n"
          << kComplexHelpers;
    } else {
        o << kRealHelpers;
    }
    o << "BS_DEVICE int bs_bits(T z) { return "
      << (single ? "__float_as_int(bs_real(z))" : "__double2loint(bs_real(z))") << "; }\n";
    // The largest finite R: a pivot above it is +Inf (NaN fails both comparisons).
    o << "BS_DEVICE bool bs_pivot_ok(R d) { return d > (R)0 && d <= "
      << (single ? "3.40282347e+38f" : "1.7976931348623157e+308") << "; }\n";
    o << "struct alignas(16) bs_vec { T v[" << 16 / element_bytes(p) << "]; };  // one 16-byte load\n";
    return o.str();
}

}  // namespace batchsolve::codegen
