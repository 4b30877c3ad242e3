// A downstream program of the installed batchsolve package: solves small batches on the CPU backend
// and checks the answers; exit status 0 only when every check passes.
#include <batchsolve/batchsolve.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace bs = batchsolve;

int main() {
    bs::Context ctx(bs::Backend::cpu);
    std::printf("batchsolve consumer on %s\n", ctx.device_name().c_str());
    int failures = 0;

    // Two 2 x 2 systems with known answers: [[4,2],[2,3]] x = [2,1] -> x = [0.5, 0];
    // [[9,3],[3,5]] x = [6,-2] -> x = [1, -1].
    std::vector<double> a = {4, 2, 2, 3, 9, 3, 3, 5};
    std::vector<double> b = {2, 1, 6, -2};
    const std::vector<double> expected = {0.5, 0, 1, -1};
    std::vector<int> info(2, -1);
    bs::posv_batched(bs::Uplo::lower, bs::BatchView<double>::column_major(a.data(), 2, 2, 2),
                     bs::BatchView<double>::column_major(b.data(), 2, 1, 2), info.data(), ctx);
    const double tolerance = 8 * bs::unit_roundoff<double>() * 4;  // n u ||A^-1|| ||b||, with room
    for (int k = 0; k < 2; ++k) {
        if (info[k] != 0) std::printf("FAILED: 2x2 system %d: info %d\n", k, info[k]), ++failures;
        for (int i = 0; i < 2; ++i)
            if (!(std::abs(b[2 * k + i] - expected[2 * k + i]) <= tolerance))
                std::printf("FAILED: 2x2 system %d: x[%d] = %.17g, expected %.17g\n", k, i, b[2 * k + i],
                            expected[2 * k + i]),
                    ++failures;
    }

    // A generated batch: 100 Hermitian positive definite 16 x 16 systems, condition number 1e4.
    const int n = 16, count = 100, nrhs = 2;
    const std::vector<std::complex<double>> spd = bs::generate_spd_batch<std::complex<double>>(n, count, 1e4, 2024);
    const bs::RhsWithSolution<std::complex<double>> rhs = bs::generate_rhs_batch(spd, n, count, nrhs, 2025);
    std::vector<std::complex<double>> factor = spd, x = rhs.b;
    std::vector<int> infos(count, -1);
    bs::posv_batched(bs::Uplo::upper, bs::BatchView<std::complex<double>>::column_major(factor.data(), n, n, count),
                     bs::BatchView<std::complex<double>>::column_major(x.data(), n, nrhs, count), infos.data(), ctx);
    int failed = 0;
    for (int i : infos) failed += i != 0;
    const double error = bs::max_or_nan(bs::solve_backward_error(bs::Uplo::upper, spd, x, rhs.b, n, nrhs, count));
    std::printf("zposv, %d systems of order %d: %d failed, backward error %.3g (threshold 30)\n", count, n, failed, error);
    if (failed != 0 || !(error < 30)) ++failures;

    // The natural calls with non-const views (T deduced from them): potrf, then potrs with the same
    // view of the factor, a layout conversion, and prepare_kernel from the umbrella header. They
    // must compile without writing potrs_batched<double>; the answers are checked as above.
    {
        std::vector<double> a2 = {4, 2, 2, 3, 9, 3, 3, 5}, b2 = {2, 1, 6, -2}, interleaved(8, -1.0);
        std::vector<int> info2(2, -1);
        auto A = bs::BatchView<double>::column_major(a2.data(), 2, 2, 2);
        auto B = bs::BatchView<double>::column_major(b2.data(), 2, 1, 2);
        auto I = bs::BatchView<double>::interleaved(interleaved.data(), 2, 2, 2);
        bs::convert_layout(A, I, ctx);
        if (interleaved[0] != 4 || interleaved[1] != 9 || interleaved[6] != 3 || interleaved[7] != 5)
            std::printf("FAILED: convert_layout(A, I, ctx) to interleaved\n"), ++failures;
        bs::potrf_batched(bs::Uplo::lower, A, info2.data(), ctx);
        bs::potrs_batched(bs::Uplo::lower, A, B, ctx);
        for (int k = 0; k < 2; ++k)
            for (int i = 0; i < 2; ++i)
                if (info2[k] != 0 || !(std::abs(b2[2 * k + i] - expected[2 * k + i]) <= tolerance))
                    std::printf("FAILED: potrf + potrs(uplo, A, B, ctx) system %d: info %d, x[%d] = %.17g\n", k,
                                info2[k], i, b2[2 * k + i]),
                        ++failures;
        const bs::KernelReport report = bs::prepare_kernel("potrf", bs::Uplo::lower, A, 0, ctx);
        if (report.supported) std::printf("FAILED: prepare_kernel on the CPU backend reports a kernel\n"), ++failures;
    }

    std::printf("%s\n", failures == 0 ? "consumer: ok" : "consumer: FAILED");
    return failures == 0 ? 0 : 1;
}
