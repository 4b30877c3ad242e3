// The autotuner's inputs: generated on the host, replicated on the device (measure.hpp).
#include "measure.hpp"

#include <complex>
#include <cstring>
#include <random>

namespace batchsolve::autotune {

template <class T>
std::vector<std::byte> as_bytes(const std::vector<T>& v) {
    std::vector<std::byte> out(v.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

template <class T>
HostInputs make_host_inputs_typed(int n, int nrhs, int distinct, double cond, std::uint64_t seed) {
    HostInputs h;
    h.distinct = distinct;
    std::vector<T> a = generate_spd_batch<T>(n, distinct, cond, seed);
    std::vector<T> l = a;
    {
        Context cpu(Backend::cpu);
        std::vector<int> info(distinct, -1);
        potrf_batched<T>(Uplo::lower, BatchView<T>::column_major(l.data(), n, n, distinct), info.data(), cpu);
        const auto bad = std::count_if(info.begin(), info.end(), [](int v) { return v != 0; });
        if (bad > 0)
            throw Error("the CPU reference could not factor " + std::to_string(bad) + " generated matrices of n = " +
                        std::to_string(n) + " (lower --cond)");
    }
    std::vector<T> b(std::size_t(distinct) * n * std::max(nrhs, 0));
    std::mt19937_64 engine(seed ^ 0x5bd1e995ull);
    std::uniform_real_distribution<double> u(-1, 1);
    for (T& v : b) {
        if constexpr (is_complex_v<T>) {
            const double re = u(engine);
            v = T(real_t<T>(re), real_t<T>(u(engine)));
        } else {
            v = T(u(engine));
        }
    }
    h.a = as_bytes(a), h.l = as_bytes(l), h.b = as_bytes(b);
    return h;
}

HostInputs make_host_inputs(Precision p, int n, int nrhs, int distinct, double cond, std::uint64_t seed) {
    switch (p) {
        case Precision::s: return make_host_inputs_typed<float>(n, nrhs, distinct, cond, seed);
        case Precision::d: return make_host_inputs_typed<double>(n, nrhs, distinct, cond, seed);
        case Precision::c: return make_host_inputs_typed<std::complex<float>>(n, nrhs, distinct, cond, seed);
        case Precision::z: return make_host_inputs_typed<std::complex<double>>(n, nrhs, distinct, cond, seed);
    }
    throw Error("unknown precision");
}

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {  // splitmix64 of a combination: independent seeds
    std::uint64_t z = a + 0x9e3779b97f4a7c15ull * (b + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void replicate(std::byte* base, std::size_t unit, std::size_t total, void* stream) {
    for (std::size_t done = unit; done < total;) {
        const std::size_t k = std::min(done, total - done);
        validation::device_copy_async(base + done, base, k, stream);
        done += k;
    }
}

void make_resident(Group& g, const HostInputs& h, int batch, int nrhs, Context& ctx) {
    const std::size_t es = element_bytes(g.precision), n = std::size_t(g.n);
    auto put = [&](Buffer<std::byte>& dst, const std::vector<std::byte>& src, std::size_t per_matrix) {
        const std::size_t total = per_matrix * batch;
        dst = Buffer<std::byte>(ctx, std::max<std::size_t>(total, 1));
        const std::size_t unit = std::min(src.size(), total);
        if (unit == 0) return;
        validation::upload(dst.data(), src.data(), unit, ctx.stream());
        replicate(dst.data(), unit, total, ctx.stream());
    };
    if (g.needs_a) put(g.a, h.a, n * n * es);
    if (g.needs_l) put(g.l, h.l, n * n * es);
    put(g.b, h.b, n * std::size_t(nrhs) * es);
    ctx.synchronize();
    g.resident = true;
}

}  // namespace batchsolve::autotune
