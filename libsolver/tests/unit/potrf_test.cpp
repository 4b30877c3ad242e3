// potrf_batched on every backend and precision: accuracy over sizes, triangles and layouts,
// per-matrix info for bad members, empty batches and argument errors.
#include <algorithm>
#include <set>
#include <string>

#include "every_size_cases.hpp"
#include "test_support.hpp"

namespace batchsolve::test {
namespace {

template <class C>
class Potrf : public BackendTest<C> {
protected:
    using T = typename C::value_type;

    // Factors `a` (packed, both triangles) in `layout` on the backend under test and checks what
    // potrf promises: info as expected, a backward-stable factor for each info-0 matrix, the other
    // triangle and all padding untouched; on CUDA, agreement with the reference backend.
    FactorResult<T> run_and_check(Uplo uplo, const LayoutSpec& layout, const std::vector<T>& a, int n, int count,
                                  const std::vector<int>& expected_info) {
        SCOPED_TRACE(::testing::Message() << "potrf " << to_string(uplo) << " n=" << n << " count=" << count << " "
                                          << layout.name());
        const std::vector<T> input = with_other_triangle_poisoned(a, uplo, n, count);
        BackendBatch<T> batch(this->ctx(), layout, n, n, count);
        batch.upload(input);
        BackendInfo info(this->ctx(), count);
        potrf_batched(uplo, batch.view(), info.data(), this->ctx());

        FactorResult<T> out{batch.download(), info.download()};
        EXPECT_EQ(out.info, expected_info);
        EXPECT_EQ(other_triangle_changes(input, out.factor, uplo, n, count), 0) << "the other triangle was written";
        EXPECT_EQ(batch.padding_changes(), 0) << "memory outside the matrices was written";
        const std::vector<double> errors = factorization_error(uplo, a, out.factor, n, count);
        for (int k = 0; k < count; ++k)
            if (expected_info[k] == 0) {
                EXPECT_LT(errors[k], kAcceptance) << "matrix " << k;
            }

        if (this->is_cuda) {
            const FactorResult<T> ref = reference_potrf(this->reference(), uplo, input, n, count);
            EXPECT_EQ(out.info, ref.info) << "CUDA and reference backends disagree on info";
            for (int k = 0; k < count; ++k) {
                if (ref.info[k] != 0) continue;
                EXPECT_LE(relative_difference(out.factor, ref.factor, n, n, k, triangle_part(uplo)),
                          cross_backend_tolerance<T>(n))
                    << "matrix " << k << " differs from the reference backend's factor";
            }
        }
        return out;
    }
};
TYPED_TEST_SUITE(Potrf, AllConfigs);

TYPED_TEST(Potrf, EverySizeEveryLayout) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    // every case on the CPU, a sample of them on CUDA (every_size_cases.hpp)
    const std::vector<EverySizeCase> cases = every_size_cases(TypeParam::backend, {0}, false, seed);
    compile_cases_ahead<T>(TypeParam::backend, "potrf", cases);
    std::vector<T> a;
    int matrices_of = -1;
    for (const EverySizeCase& c : cases) {
        const int n = c.n, count = batch_count_for(n);
        if (matrices_of != n) a = test_matrices<T>(n, count, seed + n), matrices_of = n;
        this->run_and_check(c.uplo, c.a_layout, a, n, count, std::vector<int>(count, 0));
    }
}

// The CUDA instances' sample of the every-size tests (every_size_cases.hpp), checked on any machine:
// every size in both kernel families, every (A layout, B layout, triangle, nrhs) combination, no
// case the CPU list lacks; the CPU list is the whole product. Seeds drawn as in the tests.
TEST(EverySizeCases, TheCudaSampleKeepsEverySizeAndEveryCombination) {
    struct Lists {
        std::vector<int> nrhs;
        bool with_rhs;
    };
    for (const Lists& lists : {Lists{{0}, false}, Lists{{1, 3}, true}, Lists{{0, 1, 3}, true}}) {
        const std::vector<EverySizeCase> all = every_size_cases(Backend::cpu, lists.nrhs, lists.with_rhs, 0);
        auto combination = [](const EverySizeCase& c) {
            return c.a_layout.name() + " | " + c.b_layout.name() + " | " + to_string(c.uplo) + " | " + std::to_string(c.nrhs);
        };
        std::set<std::string> combinations, cases_of_cpu;
        for (const EverySizeCase& c : all) {
            combinations.insert(combination(c));
            cases_of_cpu.insert(combination(c) + " | " + std::to_string(c.n));
        }
        EXPECT_EQ(all.size(), combinations.size() * size_spread().size()) << "the CPU list is the whole product";
        for (int draw = 0; draw < 20; ++draw) {
            const std::uint64_t seed = fresh_seed();
            SCOPED_TRACE(::testing::Message() << "seed " << seed << ", nrhs list of " << lists.nrhs.size());
            const std::vector<EverySizeCase> sample = every_size_cases(Backend::cuda, lists.nrhs, lists.with_rhs, seed);
            std::set<std::string> seen;
            std::set<int> sizes_of[2];
            for (const EverySizeCase& c : sample) {
                seen.insert(combination(c));
                sizes_of[c.a_layout.column_major_family() ? 0 : 1].insert(c.n);
                EXPECT_EQ(cases_of_cpu.count(combination(c) + " | " + std::to_string(c.n)), 1u) << combination(c);
            }
            EXPECT_EQ(seen, combinations) << "a combination is missing from the sample";
            for (const std::set<int>& sizes : sizes_of)
                EXPECT_EQ(sizes.size(), size_spread().size())
                    << "a size is missing from a kernel family";
            EXPECT_LT(sample.size(), all.size() / 4) << "the sample is not much smaller than the product";
            // ordered by n, and the same list again for the same seed
            EXPECT_TRUE(std::is_sorted(sample.begin(), sample.end(), [](const auto& x, const auto& y) { return x.n < y.n; }));
            const std::vector<EverySizeCase> again = every_size_cases(Backend::cuda, lists.nrhs, lists.with_rhs, seed);
            ASSERT_EQ(again.size(), sample.size());
            for (std::size_t i = 0; i < sample.size(); ++i)
                EXPECT_EQ(combination(again[i]) + std::to_string(again[i].n), combination(sample[i]) + std::to_string(sample[i].n));
        }
    }
}

TYPED_TEST(Potrf, BadMatricesReportTheirColumnAndSpareTheOthers) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int count = 9;
    // n = 40 takes LAPACK's blocked path as well as the unblocked one.
    for (int n : {12, 40}) {
        struct Bad { int k, col; BadMatrix kind; };
        const Bad bad[] = {{1, 0, BadMatrix::indefinite}, {3, n / 2 - 1, BadMatrix::nan},
                           {4, n - 1, BadMatrix::indefinite}, {5, n / 2, BadMatrix::indefinite},
                           {7, 0, BadMatrix::nan}, {8, n - 1, BadMatrix::nan}};
        const std::vector<T> good = test_matrices<T>(n, count, seed + n);
        std::vector<T> spoiled = good;
        std::vector<int> expected(count, 0);
        for (const Bad& b : bad) {
            spoil_matrix(spoiled, n, b.k, b.col, b.kind);
            expected[b.k] = b.col + 1;
        }
        for (const LayoutSpec& layout :
             {padded_column_major(), pointer_array_layout(), interleaved_layout(), chunked_layout(7)})
            for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
                const FactorResult<T> clean = this->run_and_check(uplo, layout, good, n, count, std::vector<int>(count, 0));
                const FactorResult<T> mixed = this->run_and_check(uplo, layout, spoiled, n, count, expected);
                for (int k = 0; k < count; ++k) {
                    if (expected[k] != 0) continue;
                    EXPECT_LE(relative_difference(mixed.factor, clean.factor, n, n, k, triangle_part(uplo)),
                              same_run_tolerance<T>(n))
                        << "good matrix " << k << " changed because of its bad neighbours (" << layout.name() << ", "
                        << to_string(uplo) << ", n=" << n << ")";
                }
            }
    }
}

TYPED_TEST(Potrf, EmptyBatches) {
    using T = typename TypeParam::value_type;
    for (const LayoutSpec& layout : all_layouts()) {
        SCOPED_TRACE(layout.name());
        // n = 0: nothing to factor, but every info is set (to 0).
        BackendBatch<T> empty_matrices(this->ctx(), layout, 0, 0, 5);
        BackendInfo info(this->ctx(), 5);
        potrf_batched(Uplo::lower, empty_matrices.view(), info.data(), this->ctx());
        EXPECT_EQ(info.download(), std::vector<int>(5, 0));
        // count = 0: a no-op, even with no info array.
        BackendBatch<T> no_matrices(this->ctx(), layout, 4, 4, 0);
        EXPECT_NO_THROW(potrf_batched(Uplo::upper, no_matrices.view(), static_cast<int*>(nullptr), this->ctx()));
    }
}

TYPED_TEST(Potrf, ArgumentErrorsNameTheArgument) {
    using T = typename TypeParam::value_type;
    const int n = 4, count = 3;
    BackendBatch<T> batch(this->ctx(), packed_column_major(), n, n, count);
    batch.upload(test_matrices<T>(n, count, fresh_seed()));
    BackendInfo info(this->ctx(), count);
    Context& ctx = this->ctx();
    auto potrf_with = [&](BatchView<T> a, int* info_ptr) { return [=, &ctx] { potrf_batched(Uplo::lower, a, info_ptr, ctx); }; };

    BatchView<T> v = batch.view();
    v.ld = n - 1;
    expect_invalid_argument(potrf_with(v, info.data()), "a.ld");
    v = batch.view();
    v.data = nullptr;
    expect_invalid_argument(potrf_with(v, info.data()), "a.data");
    expect_invalid_argument(potrf_with(batch.view(), nullptr), "info");
    v = batch.view();
    v.cols = n - 1;
    expect_invalid_argument(potrf_with(v, info.data()), "a");
    v = batch.view();
    v.count = -1;
    expect_invalid_argument(potrf_with(v, info.data()), "a.count");
    v = batch.view();
    v.stride = std::int64_t(n) * n - 1;
    expect_invalid_argument(potrf_with(v, info.data()), "a.stride");
    expect_invalid_argument(potrf_with(BatchView<T>::chunked(batch.view().data, n, n, count, 0), info.data()),
                            "a.chunk_size");
    expect_invalid_argument(potrf_with(BatchView<T>::pointer_array(nullptr, n, n, n, count), info.data()),
                            "a.pointers");
    // Checked before any work: nothing was written.
    EXPECT_EQ(info.download(), std::vector<int>(count, -1));
}

}  // namespace
}  // namespace batchsolve::test
