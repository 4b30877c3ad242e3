// potrs_batched on every backend and precision: backward error over sizes, triangles, layouts
// (A and B mixed within the column-major family) and nrhs, empty cases and argument errors.
#include <map>

#include "every_size_cases.hpp"
#include "test_support.hpp"

namespace batchsolve::test {
namespace {

template <class C>
class Potrs : public BackendTest<C> {
protected:
    using T = typename C::value_type;

    // Solves A X = B (B of `rhs`) with `factor` (the reference factor of `a`, other triangle NaN) in
    // the given layouts and checks: backward error, the factor neither read outside its triangle nor
    // written, padding untouched, and on CUDA agreement with the reference backend.
    void run_and_check(Uplo uplo, const LayoutSpec& a_layout, const LayoutSpec& b_layout, const std::vector<T>& a,
                       const std::vector<T>& factor, const std::vector<T>& b, int n, int nrhs, int count) {
        SCOPED_TRACE(::testing::Message() << "potrs " << to_string(uplo) << " n=" << n << " nrhs=" << nrhs
                                          << " count=" << count << " A: " << a_layout.name()
                                          << ", B: " << b_layout.name());
        BackendBatch<T> fa(this->ctx(), a_layout, n, n, count);
        BackendBatch<T> fb(this->ctx(), b_layout, n, nrhs, count);
        fa.upload(factor);
        fb.upload(b);
        potrs_batched<T>(uplo, fa.view(), fb.view(), this->ctx());

        const std::vector<T> x = fb.download();
        EXPECT_EQ(bitwise_differences(factor, fa.download()), 0) << "the factor was written";
        EXPECT_EQ(fa.padding_changes(), 0) << "memory outside A's matrices was written";
        EXPECT_EQ(fb.padding_changes(), 0) << "memory outside B's matrices was written";
        const std::vector<double> errors = solve_backward_error(uplo, a, x, b, n, nrhs, count);
        for (int k = 0; k < count; ++k) EXPECT_LT(errors[k], kAcceptance) << "matrix " << k;

        if (this->is_cuda) {
            const std::vector<T> x_ref = reference_potrs(this->reference(), uplo, factor, b, n, nrhs, count);
            for (int k = 0; k < count; ++k)
                EXPECT_LE(relative_difference(x, x_ref, n, nrhs, k, Part::whole), cross_backend_tolerance<T>(n))
                    << "matrix " << k << " differs from the reference backend's solution";
        }
    }

    // The reference factor of `a`, its other triangle NaN (a solve that reads it fails).
    std::vector<T> factor_of(Uplo uplo, const std::vector<T>& a, int n, int count) {
        const FactorResult<T> ref = reference_potrf(this->reference(), uplo, a, n, count);
        EXPECT_EQ(ref.info, std::vector<int>(count, 0)) << "test matrices must be positive definite";
        return with_other_triangle_poisoned(ref.factor, uplo, n, count);
    }
};
TYPED_TEST_SUITE(Potrs, AllConfigs);

TYPED_TEST(Potrs, EverySizeEveryLayout) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    // every case on the CPU, a sample of them on CUDA (every_size_cases.hpp)
    const std::vector<EverySizeCase> cases = every_size_cases(TypeParam::backend, {1, 3}, true, seed);
    compile_cases_ahead<T>(TypeParam::backend, "potrs", cases);
    std::vector<T> a, factors[2];  // the reference factors of a, by triangle
    std::map<int, std::vector<T>> rhs;  // B of a, by nrhs
    int matrices_of = -1;
    for (const EverySizeCase& c : cases) {
        const int n = c.n, count = batch_count_for(n), nrhs = c.nrhs;
        if (matrices_of != n) {
            a = test_matrices<T>(n, count, seed + n), matrices_of = n;
            factors[0].clear(), factors[1].clear(), rhs.clear();
        }
        std::vector<T>& factor = factors[c.uplo == Uplo::lower ? 0 : 1];
        if (factor.empty()) factor = this->factor_of(c.uplo, a, n, count);
        auto b_of = rhs.find(nrhs);
        if (b_of == rhs.end()) b_of = rhs.emplace(nrhs, generate_rhs_batch(a, n, count, nrhs, seed + 1000 * nrhs + n).b).first;
        const std::vector<T>& b = b_of->second;
        this->run_and_check(c.uplo, c.a_layout, c.b_layout, a, factor, b, n, nrhs, count);
    }
}

TYPED_TEST(Potrs, NoRightHandSidesIsANoOp) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int n = 5, count = 9;
    for (const LayoutSpec& layout : all_layouts()) {
        SCOPED_TRACE(layout.name());
        const std::vector<T> factor = this->factor_of(Uplo::lower, test_matrices<T>(n, count, seed), n, count);
        BackendBatch<T> fa(this->ctx(), layout, n, n, count);
        BackendBatch<T> fb(this->ctx(), layout, n, 0, count);
        fa.upload(factor);
        EXPECT_NO_THROW(potrs_batched<T>(Uplo::lower, fa.view(), fb.view(), this->ctx()));
        EXPECT_EQ(bitwise_differences(factor, fa.download()), 0);
        EXPECT_EQ(fb.padding_changes(), 0);
    }
}

TYPED_TEST(Potrs, EmptyBatches) {
    using T = typename TypeParam::value_type;
    for (const LayoutSpec& layout : all_layouts()) {
        SCOPED_TRACE(layout.name());
        BackendBatch<T> a0(this->ctx(), layout, 0, 0, 5), b0(this->ctx(), layout, 0, 2, 5);
        EXPECT_NO_THROW(potrs_batched<T>(Uplo::lower, a0.view(), b0.view(), this->ctx()));
        BackendBatch<T> a_none(this->ctx(), layout, 4, 4, 0), b_none(this->ctx(), layout, 4, 2, 0);
        EXPECT_NO_THROW(potrs_batched<T>(Uplo::upper, a_none.view(), b_none.view(), this->ctx()));
    }
}

TYPED_TEST(Potrs, ArgumentErrorsNameTheArgument) {
    using T = typename TypeParam::value_type;
    const int n = 4, nrhs = 2, count = 3;
    Context& ctx = this->ctx();
    BackendBatch<T> fa(ctx, packed_column_major(), n, n, count), fb(ctx, packed_column_major(), n, nrhs, count);
    BackendBatch<T> ia(ctx, chunked_layout(2), n, n, count), ib(ctx, chunked_layout(2), n, nrhs, count);
    const std::vector<T> b = generate_rhs_batch(test_matrices<T>(n, count, fresh_seed()), n, count, nrhs, 1).b;
    fb.upload(b);
    auto potrs_with = [&ctx](BatchView<T> a, BatchView<T> x) { return [=, &ctx] { potrs_batched<T>(Uplo::lower, a, x, ctx); }; };

    BatchView<T> v = fa.view();
    v.ld = n - 1;
    expect_invalid_argument(potrs_with(v, fb.view()), "a.ld");
    v = fa.view();
    v.cols = n + 1, v.stride = std::int64_t(n) * (n + 1);
    expect_invalid_argument(potrs_with(v, fb.view()), "a");
    v = fb.view();
    v.ld = n - 1;
    expect_invalid_argument(potrs_with(fa.view(), v), "b.ld");
    v = fb.view();
    v.data = nullptr;
    expect_invalid_argument(potrs_with(fa.view(), v), "b.data");
    v = fb.view();
    v.count = count - 1;
    expect_invalid_argument(potrs_with(fa.view(), v), "b.count");
    v = fb.view();
    v.rows = n - 1;
    expect_invalid_argument(potrs_with(fa.view(), v), "b.rows");
    expect_invalid_argument(potrs_with(fa.view(), ib.view()), "b.layout");
    expect_invalid_argument(potrs_with(ia.view(), fb.view()), "b.layout");
    v = ib.view();
    v.chunk_size = 3;
    expect_invalid_argument(potrs_with(ia.view(), v), "b.layout");
    v = ib.view();
    v.chunk_size = 0;
    expect_invalid_argument(potrs_with(ia.view(), v), "b.chunk_size");
    // Checked before any work: B is as it was.
    EXPECT_EQ(fb.download(), b);
}

}  // namespace
}  // namespace batchsolve::test
