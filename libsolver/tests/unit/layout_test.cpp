// convert_layout on every backend and precision: exact round trips through every layout for odd
// batch sizes, every pair of layouts, empty batches and argument errors.
#include "test_support.hpp"

namespace batchsolve::test {
namespace {

template <class C>
class ConvertLayout : public BackendTest<C> {
protected:
    using T = typename C::value_type;

    // Converts `from` into a fresh, poisoned batch of layout `to` and checks that it holds exactly
    // `expected` (packed) and that nothing outside its matrices was written. On CUDA the raw storage
    // must also equal the reference backend's conversion bit for bit.
    std::unique_ptr<BackendBatch<T>> convert_and_check(BackendBatch<T>& from, const LayoutSpec& to, int rows, int cols,
                                                       int count, const std::vector<T>& expected) {
        SCOPED_TRACE(::testing::Message() << "convert " << from.spec().name() << " -> " << to.name() << ", " << rows
                                          << " x " << cols << ", count " << count);
        auto dst = std::make_unique<BackendBatch<T>>(this->ctx(), to, rows, cols, count);
        dst->poison();
        convert_layout<T>(from.view(), dst->view(), this->ctx());
        EXPECT_EQ(bitwise_differences(dst->download(), expected), 0) << "elements not copied exactly";
        EXPECT_EQ(dst->padding_changes(), 0) << "memory outside the matrices was written";
        if (this->is_cuda) {
            BackendBatch<T> ref_from(this->reference(), from.spec(), rows, cols, count);
            BackendBatch<T> ref_to(this->reference(), to, rows, cols, count);
            ref_from.upload(expected);
            convert_layout<T>(ref_from.view(), ref_to.view(), this->reference());
            EXPECT_EQ(bitwise_differences(dst->download_raw(), ref_to.download_raw()), 0)
                << "CUDA and reference conversions differ";
        }
        return dst;
    }
};
TYPED_TEST_SUITE(ConvertLayout, AllConfigs);

// column_major -> interleaved -> chunked (32, then 7) -> pointer_array -> column_major is exact.
TYPED_TEST(ConvertLayout, RoundTripIsExact) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    struct Shape { int rows, cols; };
    for (int count : {1, 31, 33, 1000})
        for (Shape s : {Shape{5, 5}, Shape{3, 7}, Shape{1, 1}}) {
            const std::vector<T> values = random_values<T>(std::size_t(s.rows) * s.cols * count, seed + count + s.cols);
            BackendBatch<T> start(this->ctx(), padded_column_major(), s.rows, s.cols, count);
            start.upload(values);
            auto interleaved = this->convert_and_check(start, interleaved_layout(), s.rows, s.cols, count, values);
            auto chunked32 = this->convert_and_check(*interleaved, chunked_layout(32), s.rows, s.cols, count, values);
            auto chunked7 = this->convert_and_check(*chunked32, chunked_layout(7), s.rows, s.cols, count, values);
            auto pointers = this->convert_and_check(*chunked7, pointer_array_layout(), s.rows, s.cols, count, values);
            auto back = this->convert_and_check(*pointers, padded_column_major(), s.rows, s.cols, count, values);
            EXPECT_EQ(bitwise_differences(back->download_raw(), start.download_raw()), 0)
                << "round trip not exact, padding included (count " << count << ")";
        }
}

TYPED_TEST(ConvertLayout, EveryPairOfLayouts) {
    using T = typename TypeParam::value_type;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const int rows = 4, cols = 3, count = 37;
    const std::vector<T> values = random_values<T>(std::size_t(rows) * cols * count, seed);
    for (const LayoutSpec& from : all_layouts()) {
        BackendBatch<T> src(this->ctx(), from, rows, cols, count);
        src.upload(values);
        const std::vector<T> src_raw = src.download_raw();
        for (const LayoutSpec& to : all_layouts()) this->convert_and_check(src, to, rows, cols, count, values);
        EXPECT_EQ(bitwise_differences(src.download_raw(), src_raw), 0) << "the source was written";
    }
}

TYPED_TEST(ConvertLayout, EmptyBatches) {
    using T = typename TypeParam::value_type;
    for (const LayoutSpec& layout : all_layouts()) {
        SCOPED_TRACE(layout.name());
        BackendBatch<T> a(this->ctx(), layout, 3, 3, 0), b(this->ctx(), interleaved_layout(), 3, 3, 0);
        EXPECT_NO_THROW(convert_layout<T>(a.view(), b.view(), this->ctx()));
        BackendBatch<T> c(this->ctx(), layout, 0, 3, 4), d(this->ctx(), chunked_layout(3), 0, 3, 4);
        EXPECT_NO_THROW(convert_layout<T>(c.view(), d.view(), this->ctx()));
        EXPECT_NO_THROW(convert_layout<T>(d.view(), c.view(), this->ctx()));
    }
}

TYPED_TEST(ConvertLayout, ArgumentErrorsNameTheArgument) {
    using T = typename TypeParam::value_type;
    const int rows = 3, cols = 2, count = 5;
    Context& ctx = this->ctx();
    BackendBatch<T> cm(ctx, padded_column_major(), rows, cols, count), il(ctx, interleaved_layout(), rows, cols, count);
    const std::vector<T> values = random_values<T>(std::size_t(rows) * cols * count, fresh_seed());
    il.upload(values);
    auto convert_with = [&ctx](BatchView<T> s, BatchView<T> d) { return [=, &ctx] { convert_layout<T>(s, d, ctx); }; };

    BatchView<T> v = cm.view();
    v.count = count - 1;
    expect_invalid_argument(convert_with(il.view(), v), "dst.count");
    v = cm.view();
    v.cols = cols + 1, v.stride = std::int64_t(v.ld) * v.cols;
    expect_invalid_argument(convert_with(il.view(), v), "dst");
    v = cm.view();
    v.ld = rows - 1;
    expect_invalid_argument(convert_with(il.view(), v), "dst.ld");
    v = cm.view();
    v.data = nullptr;
    expect_invalid_argument(convert_with(il.view(), v), "dst.data");
    expect_invalid_argument(convert_with(il.view(), BatchView<T>::pointer_array(nullptr, rows, cols, rows, count)),
                            "dst.pointers");
    v = il.view();
    v.layout = LayoutKind::chunked_interleaved, v.chunk_size = 0;
    expect_invalid_argument(convert_with(v, cm.view()), "src.chunk_size");
    v = il.view();
    v.ld = rows + 1;
    expect_invalid_argument(convert_with(v, cm.view()), "src.ld");
    // Checked before any work: the destination is still poisoned.
    EXPECT_EQ(cm.padding_changes(), 0);
    const std::vector<T> dst = cm.download();
    EXPECT_TRUE(std::all_of(dst.begin(), dst.end(), [](const T& x) { return is_poison(x); }));
}

}  // namespace
}  // namespace batchsolve::test
