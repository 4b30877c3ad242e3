// Measures what a program pays the first time it calls a routine: Context creation, the first call
// (kernel generation, NVRTC or the disk cache, module load, launch) and the second call, each timed
// to completion in this fresh process; --vendor times cuSOLVER's batched call instead. One JSON line
// on stdout. libsolver/scripts/first-call.sh runs it with an empty and a populated kernel cache.
//   batchsolve_first_call --routine potrf|potrs|posv --precision s|d --layout column_major|interleaved
//                         --n N --batch COUNT [--vendor]
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"

namespace {

using namespace batchsolve;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Options {
    Routine routine = Routine::potrf;
    Precision precision = Precision::s;
    LayoutKind layout = LayoutKind::column_major;
    int n = 32, batch = 16384;
    bool vendor = false;
};

int usage(std::ostream& out, int code) {
    out << "usage: batchsolve_first_call --routine potrf|potrs|posv --precision s|d\n"
           "                             --layout column_major|interleaved --n N --batch COUNT [--vendor]\n"
           "  Times Context creation, the first and the second call of the routine in this process (each\n"
           "  synchronised); --vendor: cuSOLVER's batched potrf/potrs (column_major only). One JSON line.\n";
    return code;
}

template <class T>
int run(const Options& o) {
    const int n = o.n, nrhs = 1, count = o.batch;
    const auto context_start = Clock::now();
    Context ctx(Backend::cuda);
    ctx.synchronize();
    const double context_s = seconds_since(context_start);

    // Inputs (not timed): the SPD matrix n I + ones (eigenvalues n and 2n) in every slot, built
    // directly: the SPD generator's cost at n = 128, 16384 matrices would dwarf what is measured.
    std::vector<T> host_a(std::size_t(n) * n * count);
    for (std::size_t k = 0; k < std::size_t(count); ++k)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) host_a[(k * n + j) * n + i] = T(i == j ? n + 1 : 1);
    std::vector<T> host_b(std::size_t(n) * nrhs * count, T(1));
    Buffer<T> a(ctx, host_a), b(ctx, host_b), a_copy(ctx, host_a.size()), b_copy(ctx, host_b.size());
    Buffer<int> info(ctx, count);
    const auto A_cm = BatchView<T>::column_major(a.data(), n, n, count);
    const auto B_cm = BatchView<T>::column_major(b.data(), n, nrhs, count);
    const bool interleaved = o.layout == LayoutKind::interleaved;
    const auto A = interleaved ? BatchView<T>::interleaved(a_copy.data(), n, n, count) : A_cm;
    const auto B = interleaved ? BatchView<T>::interleaved(b_copy.data(), n, nrhs, count) : B_cm;
    if (interleaved) {
        convert_layout(A_cm, A, ctx);
        convert_layout(B_cm, B, ctx);
    }
    ctx.synchronize();

    auto call = [&] {
        const auto start = Clock::now();
        if (o.vendor) {
            if (o.routine == Routine::potrs) vendor::potrs_batched(Uplo::lower, A, B, ctx);
            else vendor::potrf_batched(Uplo::lower, A, info.data(), ctx);  // posv: its factorisation only
        } else if (o.routine == Routine::potrf) {
            potrf_batched(Uplo::lower, A, info.data(), ctx);
        } else if (o.routine == Routine::potrs) {
            potrs_batched(Uplo::lower, A, B, ctx);
        } else {
            posv_batched(Uplo::lower, A, B, info.data(), ctx);
        }
        ctx.synchronize();
        return seconds_since(start);
    };
    const double first_s = call();
    const double second_s = call();
    std::printf("{\"routine\":\"%s\",\"precision\":\"%c\",\"layout\":\"%s\",\"n\":%d,\"batch\":%d,\"impl\":\"%s\","
                "\"context_s\":%.4f,\"first_call_s\":%.4f,\"second_call_s\":%.5f,\"device\":\"%s\"}\n",
                to_string(o.routine), precision_letter(o.precision), to_string(o.layout), n, count,
                o.vendor ? "cusolver" : "batchsolve", context_s, first_s, second_s, ctx.device_name().c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw InvalidArgument("batchsolve_first_call", arg, "a value");
                return argv[++i];
            };
            if (arg == "--help" || arg == "-h") return usage(std::cout, 0);
            else if (arg == "--routine") o.routine = parse_routine(value());
            else if (arg == "--precision") o.precision = parse_precision(value());
            else if (arg == "--layout") {
                const std::string l = value();
                if (l != "column_major" && l != "interleaved")
                    throw InvalidArgument("batchsolve_first_call", "--layout", "column_major or interleaved");
                o.layout = l == "interleaved" ? LayoutKind::interleaved : LayoutKind::column_major;
            } else if (arg == "--n") o.n = std::stoi(value());
            else if (arg == "--batch") o.batch = std::stoi(value());
            else if (arg == "--vendor") o.vendor = true;
            else throw InvalidArgument("batchsolve_first_call", arg, "a known option (--help)");
        }
        if (o.n < 1 || o.batch < 1) throw InvalidArgument("batchsolve_first_call", "--n/--batch", ">= 1");
        if (o.vendor && o.layout != LayoutKind::column_major)
            throw InvalidArgument("batchsolve_first_call", "--vendor", "with --layout column_major");
        if (!Context::cuda_available()) {
            std::cout << "skipped: no GPU\n";
            return 0;
        }
        switch (o.precision) {
            case Precision::s: return run<float>(o);
            case Precision::d: return run<double>(o);
            case Precision::c: return run<std::complex<float>>(o);
            case Precision::z: return run<std::complex<double>>(o);
        }
    } catch (const std::exception& e) {
        std::cerr << "batchsolve_first_call: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
