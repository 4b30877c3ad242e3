// posv_batched on every backend and precision: factor and solution accuracy over sizes, triangles,
// layouts and nrhs; per-matrix info with B of failed matrices untouched; empty cases; argument errors.
#include <map>

#include "every_size_cases.hpp"
#include "test_support.hpp"

namespace batchsolve::test {
namespace {

template <class C>
class Posv : public BackendTest<C> {
protected:
    using T = typename C::value_type;

    struct Result {
        std::vector<T> factor, x;
        std::vector<int> info;
    };

    // Runs posv on `a` (packed, both triangles) with right-hand sides `b` and checks: info as
    // expected; for info-0 matrices a backward-stable factor and solution; for the others B exactly
    // as it was; the other triangle and padding untouched; on CUDA agreement with the reference.
    Result run_and_check(Uplo uplo, const LayoutSpec& a_layout, const LayoutSpec& b_layout, const std::vector<T>& a,
                         const std::vector<T>& b, int n, int nrhs, int count, const std::vector<int>& expected_info) {
        SCOPED_TRACE(::testing::Message() << "posv " << to_string(uplo) << " n=" << n << " nrhs=" << nrhs
                                          << " count=" << count << " A: " << a_layout.name()
                                          << ", B: " << b_layout.name());
        const std::vector<T> input = with_other_triangle_poisoned(a, uplo, n, count);
        BackendBatch<T> ba(this->ctx(), a_layout, n, n, count);
        BackendBatch<T> bb(this->ctx(), b_layout, n, nrhs, count);
        ba.upload(input);
        bb.upload(b);
        BackendInfo info(this->ctx(), count);
        posv_batched(uplo, ba.view(), bb.view(), info.data(), this->ctx());

        Result out{ba.download(), bb.download(), info.download()};
        EXPECT_EQ(out.info, expected_info);
        EXPECT_EQ(other_triangle_changes(input, out.factor, uplo, n, count), 0) << "the other triangle was written";
        EXPECT_EQ(ba.padding_changes(), 0) << "memory outside A's matrices was written";
        EXPECT_EQ(bb.padding_changes(), 0) << "memory outside B's matrices was written";
        const std::vector<double> factor_errors = factorization_error(uplo, a, out.factor, n, count);
        const std::vector<double> solve_errors = solve_backward_error(uplo, a, out.x, b, n, nrhs, count);
        const std::size_t nr = std::size_t(n) * nrhs;
        for (int k = 0; k < count; ++k) {
            if (expected_info[k] == 0) {
                EXPECT_LT(factor_errors[k], kAcceptance) << "factor of matrix " << k;
                EXPECT_LT(solve_errors[k], kAcceptance) << "solution of matrix " << k;
            } else {
                EXPECT_EQ(bitwise_differences(out.x, b, nr * k, nr * (k + 1)), 0) << "B of failed matrix " << k << " was written";
            }
        }

        if (this->is_cuda) {
            std::vector<T> a_ref = input, x_ref = b;
            std::vector<int> ref_info(count, -1);
            posv_batched(uplo, BatchView<T>::column_major(a_ref.data(), n, n, count),
                         BatchView<T>::column_major(x_ref.data(), n, nrhs, count), ref_info.data(), this->reference());
            EXPECT_EQ(out.info, ref_info) << "CUDA and reference backends disagree on info";
            for (int k = 0; k < count; ++k) {
                if (ref_info[k] != 0) continue;
                EXPECT_LE(relative_difference(out.x, x_ref, n, nrhs, k, Part::whole), cross_backend_tolerance<T>(n))
                    << "matrix " << k << " differs from the reference backend's solution";
            }
        }
        return out;
    }

};
TYPED_TEST_SUITE(Posv, AllConfigs);

TYPED_TEST(Posv, EverySizeEveryLayout) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    // every case on the CPU, a sample of them on CUDA (every_size_cases.hpp)
    const std::vector<EverySizeCase> cases = every_size_cases(TypeParam::backend, {0, 1, 3}, true, seed);
    compile_cases_ahead<T>(TypeParam::backend, "posv", cases);
    std::vector<T> a;
    std::map<int, std::vector<T>> rhs;  // B of a, by nrhs
    int matrices_of = -1;
    for (const EverySizeCase& c : cases) {
        const int n = c.n, count = batch_count_for(n), nrhs = c.nrhs;
        if (matrices_of != n) a = test_matrices<T>(n, count, seed + n), rhs.clear(), matrices_of = n;
        auto b_of = rhs.find(nrhs);
        if (b_of == rhs.end()) b_of = rhs.emplace(nrhs, generate_rhs_batch(a, n, count, nrhs, seed + 1000 * nrhs + n).b).first;
        const std::vector<T>& b = b_of->second;
        this->run_and_check(c.uplo, c.a_layout, c.b_layout, a, b, n, nrhs, count, std::vector<int>(count, 0));
    }
}

TYPED_TEST(Posv, BadMatricesReportTheirColumnAndKeepTheirRhs) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int count = 9, nrhs = 2;
    for (int n : {12, 40}) {
        struct Bad { int k, col; BadMatrix kind; };
        const Bad bad[] = {{0, n - 1, BadMatrix::nan}, {2, 0, BadMatrix::indefinite}, {3, n / 2, BadMatrix::nan},
                           {6, n - 1, BadMatrix::indefinite}, {8, 1, BadMatrix::nan}};
        const std::vector<T> good = test_matrices<T>(n, count, seed + n);
        const std::vector<T> b = generate_rhs_batch(good, n, count, nrhs, seed + n + 1).b;
        std::vector<T> spoiled = good;
        std::vector<int> expected(count, 0);
        for (const Bad& x : bad) {
            spoil_matrix(spoiled, n, x.k, x.col, x.kind);
            expected[x.k] = x.col + 1;
        }
        for (const LayoutSpec& layout : {padded_column_major(), pointer_array_layout(), interleaved_layout(), chunked_layout(7)})
            for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
                const auto clean = this->run_and_check(uplo, layout, layout, good, b, n, nrhs, count, std::vector<int>(count, 0));
                const auto mixed = this->run_and_check(uplo, layout, layout, spoiled, b, n, nrhs, count, expected);
                for (int k = 0; k < count; ++k) {
                    if (expected[k] != 0) continue;
                    EXPECT_LE(relative_difference(mixed.x, clean.x, n, nrhs, k, Part::whole), same_run_tolerance<T>(n))
                        << "good matrix " << k << " solved differently beside bad ones (" << layout.name() << ", "
                        << to_string(uplo) << ", n=" << n << ")";
                }
            }
    }
}

TYPED_TEST(Posv, EmptyBatches) {
    using T = typename TypeParam::value_type;
    for (const LayoutSpec& layout : all_layouts()) {
        SCOPED_TRACE(layout.name());
        BackendBatch<T> a0(this->ctx(), layout, 0, 0, 5), b0(this->ctx(), layout, 0, 2, 5);
        BackendInfo info(this->ctx(), 5);
        posv_batched(Uplo::lower, a0.view(), b0.view(), info.data(), this->ctx());
        EXPECT_EQ(info.download(), std::vector<int>(5, 0)) << "n = 0: every info is set to 0";
        BackendBatch<T> a_none(this->ctx(), layout, 4, 4, 0), b_none(this->ctx(), layout, 4, 2, 0);
        EXPECT_NO_THROW(posv_batched(Uplo::upper, a_none.view(), b_none.view(), static_cast<int*>(nullptr), this->ctx()));
    }
}

TYPED_TEST(Posv, ArgumentErrorsNameTheArgument) {
    using T = typename TypeParam::value_type;
    const int n = 4, nrhs = 2, count = 3;
    Context& ctx = this->ctx();
    BackendBatch<T> ba(ctx, packed_column_major(), n, n, count), bb(ctx, packed_column_major(), n, nrhs, count);
    BackendBatch<T> ia(ctx, chunked_layout(2), n, n, count), ib(ctx, chunked_layout(2), n, nrhs, count);
    const std::vector<T> a = test_matrices<T>(n, count, fresh_seed());
    ba.upload(a);
    BackendInfo info(ctx, count);
    auto posv_with = [&ctx](BatchView<T> x, BatchView<T> y, int* i) { return [=, &ctx] { posv_batched(Uplo::upper, x, y, i, ctx); }; };

    expect_invalid_argument(posv_with(ba.view(), bb.view(), nullptr), "info");
    BatchView<T> v = ba.view();
    v.ld = n - 1;
    expect_invalid_argument(posv_with(v, bb.view(), info.data()), "a.ld");
    v = ba.view();
    v.rows = n + 1, v.ld = n + 1, v.stride = std::int64_t(n + 1) * n;
    expect_invalid_argument(posv_with(v, bb.view(), info.data()), "a");
    v = bb.view();
    v.count = count + 1;
    expect_invalid_argument(posv_with(ba.view(), v, info.data()), "b.count");
    v = bb.view();
    v.data = nullptr;
    expect_invalid_argument(posv_with(ba.view(), v, info.data()), "b.data");
    expect_invalid_argument(posv_with(ia.view(), bb.view(), info.data()), "b.layout");
    v = ia.view();
    v.chunk_size = 0;
    expect_invalid_argument(posv_with(v, ib.view(), info.data()), "a.chunk_size");
    // Checked before any work: A and info as they were.
    EXPECT_EQ(ba.download(), a);
    EXPECT_EQ(info.download(), std::vector<int>(count, -1));
}

}  // namespace
}  // namespace batchsolve::test
