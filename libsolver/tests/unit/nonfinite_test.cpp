// Non-finite input on every backend and precision (issue 22): a matrix with +Inf on its diagonal or
// a NaN or Inf below it gets LAPACK's nonzero info (nonfinite_cases.hpp says which), never info 0
// with a NaN factor; its neighbours are factored and solved as if it were not there, and posv leaves
// its B untouched. The orders reach every generated kernel family through the tuning tables on the
// GPU (one thread per matrix and cooperative warps for the interleaved layouts, register and staged
// kernels, with and without tensor cores, for the column-major ones) and cuSOLVER beyond n = 128.
#include <sstream>

#include "nonfinite_cases.hpp"
#include "test_support.hpp"

namespace batchsolve::test {
namespace {

// n = 8: small kernels; 33: a ragged last tile; 64: d's staged tensor-core kernel; 128: the staged
// kernels of s (issue 22's sizes); 140: beyond the generated kernels, cuSOLVER and the pivot scan
// after it (src/cuda/cholesky_cusolver.cu, checked_info).
const int kOrders[] = {1, 8, 33, 64, 128, 140};
constexpr int kCount = 13;  // room for the six non-finite members between good ones

template <class C>
class NonFinite : public BackendTest<C> {
protected:
    using T = typename C::value_type;

    void potrf_case(Uplo uplo, const LayoutSpec& layout, int n, std::uint64_t seed) {
        const std::vector<NonFiniteMember> members = nonfinite_members(n, kCount);
        std::ostringstream what;
        for (const NonFiniteMember& m : members) what << m.describe() << "; ";
        SCOPED_TRACE(::testing::Message() << "potrf " << to_string(uplo) << " n=" << n << " " << layout.name() << ": "
                                          << what.str());
        const std::vector<T> good = test_matrices<T>(n, kCount, seed);
        std::vector<T> a = good;
        const std::vector<int> expected = spoil_nonfinite(a, n, kCount, members);
        const std::vector<T> input = with_other_triangle_poisoned(a, uplo, n, kCount);
        BackendBatch<T> batch(this->ctx(), layout, n, n, kCount);
        batch.upload(input);
        BackendInfo info(this->ctx(), kCount);
        potrf_batched(uplo, batch.view(), info.data(), this->ctx());
        const std::vector<int> got = info.download();
        EXPECT_EQ(got, expected) << "info per matrix (0: factored; k: the pivot of column k failed)";
        EXPECT_EQ(batch.padding_changes(), 0) << "memory outside the matrices was written";
        const std::vector<T> factor = batch.download();
        const std::vector<double> errors = factorization_error(uplo, good, factor, n, kCount);
        for (int k = 0; k < kCount; ++k)
            if (expected[k] == 0) {
                EXPECT_LT(errors[k], kAcceptance) << "good matrix " << k << " beside the non-finite ones";
            }
        if (this->is_cuda) {
            const FactorResult<T> ref = reference_potrf(this->reference(), uplo, input, n, kCount);
            EXPECT_EQ(got, ref.info) << "CUDA and reference backends disagree on info";
        }
    }

    void posv_case(Uplo uplo, const LayoutSpec& layout, int n, std::uint64_t seed) {
        const int nrhs = 2;
        const std::vector<NonFiniteMember> members = nonfinite_members(n, kCount);
        SCOPED_TRACE(::testing::Message() << "posv " << to_string(uplo) << " n=" << n << " " << layout.name());
        const std::vector<T> good = test_matrices<T>(n, kCount, seed);
        const std::vector<T> b = generate_rhs_batch(good, n, kCount, nrhs, seed + 1).b;
        std::vector<T> a = good;
        const std::vector<int> expected = spoil_nonfinite(a, n, kCount, members);
        BackendBatch<T> ba(this->ctx(), layout, n, n, kCount);
        BackendBatch<T> bb(this->ctx(), rhs_layouts_for(layout).front(), n, nrhs, kCount);
        ba.upload(with_other_triangle_poisoned(a, uplo, n, kCount));
        bb.upload(b);
        BackendInfo info(this->ctx(), kCount);
        posv_batched(uplo, ba.view(), bb.view(), info.data(), this->ctx());
        EXPECT_EQ(info.download(), expected) << "info per matrix";
        const std::vector<T> x = bb.download();
        const std::vector<double> errors = solve_backward_error(uplo, good, x, b, n, nrhs, kCount);
        const std::size_t nr = std::size_t(n) * nrhs;
        for (int k = 0; k < kCount; ++k) {
            if (expected[k] == 0) {
                EXPECT_LT(errors[k], kAcceptance) << "solution of good matrix " << k;
            } else {
                EXPECT_EQ(bitwise_differences(x, b, nr * k, nr * (k + 1)), 0) << "B of failed matrix " << k << " was written";
            }
        }
    }
};
TYPED_TEST_SUITE(NonFinite, AllConfigs);

TYPED_TEST(NonFinite, PotrfReportsTheColumnOfTheFirstNonFinitePivot) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (int n : kOrders)
        for (const LayoutSpec& layout : all_layouts())
            for (Uplo uplo : {Uplo::lower, Uplo::upper}) this->potrf_case(uplo, layout, n, seed + n);
}

TYPED_TEST(NonFinite, PosvReportsItAndKeepsTheRhsOfFailedMatrices) {
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (int n : kOrders)
        for (const LayoutSpec& layout : all_layouts())
            for (Uplo uplo : {Uplo::lower, Uplo::upper}) this->posv_case(uplo, layout, n, seed + n);
}

}  // namespace
}  // namespace batchsolve::test
