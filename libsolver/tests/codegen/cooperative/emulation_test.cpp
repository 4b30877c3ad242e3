// Runs the generated cooperative potrs, potrf and posv kernels (compiled as host C++ at build time) in the
// host emulator of tests/codegen/emulator against LAPACKE (the CPU backend): random HPD batches of
// condition number kCond with the other triangle poisoned, counts that leave idle lanes, chunked
// layouts with a narrower last chunk and chunks that straddle blocks; potrs: factors from LAPACKE
// potrf, right-hand sides that leave a partial group, the group loop of a grid smaller than the
// groups; potrf: a not-SPD and a NaN matrix at random lanes (coop_potrf_check.hpp), info poisoned;
// posv: the same failures, their B bit for bit untouched, the sound lanes' X against LAPACKE potrf +
// potrs and bit for bit as in a run without the failures; potrf and posv: the Inf and NaN members of
// ../nonfinite_cases.hpp (issue 22).
// The emulator fails a run whose barriers are not reached by every thread or whose shared memory
// writes overrun.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "nonfinite_cases.hpp"
#include "test_support.hpp"
#include "coop_emulation.hpp"
#include "coop_potrf_check.hpp"
#include "coop_specs.hpp"

namespace batchsolve::test::coop {
namespace {

namespace tuned = codegen::cholesky;

// Elements after each batch's storage, poisoned: a write past the last system (an idle lane) lands here.
constexpr int guard_elements = 64;

struct Scenario {
    const char* label;
    LayoutKind layout;
    int chunk;    // chunked only
    int count;
    int nrhs;     // < 0: 2 * nrhs_block + 1 (a partial last group)
    int grid_y;   // 0: as the library launches; else this many (the kernel loops over the rest)
    // config.grid_blocks_per_sm on a one-SM device: 0, one block per group of 32 systems; else this
    // many blocks, each looping over several groups (and their shared buffers)
    int grid_blocks;
};

std::vector<Scenario> scenarios() {
    return {
        {"interleaved, 1 full block + 5 systems", LayoutKind::interleaved, 0, 37, 1, 0, 0},
        {"chunked C=7, narrow last chunk, nrhs 3", LayoutKind::chunked_interleaved, 7, 37, 3, 0, 0},
        {"chunked C=40 across blocks, partial group, grid.y 1", LayoutKind::chunked_interleaved, 40, 45, -1, 1, 0},
        {"interleaved, one system", LayoutKind::interleaved, 0, 1, 1, 0, 0},
        {"chunked C=40, 3 groups looped over by one block", LayoutKind::chunked_interleaved, 40, 70, 1, 0, 1},
        {"interleaved, 5 groups on 2 blocks", LayoutKind::interleaved, 0, 150, 2, 0, 2},
    };
}

// The launch shape of the scenario: the library's, on a device of one multiprocessor.
tuned::CoopLaunchShape launch_shape(InterleavedKernelSpec spec, const Scenario& sc, int nrhs) {
    spec.config.grid_blocks_per_sm = sc.grid_blocks;
    tuned::CoopLaunchShape shape = tuned::coop_launch_shape(spec, sc.count, nrhs, 1);
    const unsigned groups = static_cast<unsigned>((sc.count + tuned::coop_systems_per_block - 1) /
                                                  tuned::coop_systems_per_block);
    EXPECT_EQ(shape.grid_x, sc.grid_blocks > 0 ? std::min<unsigned>(groups, sc.grid_blocks) : groups);
    return shape;
}

template <class T>
BatchView<T> view_of(const Scenario& sc, T* data, int rows, int cols) {
    return sc.layout == LayoutKind::interleaved ? BatchView<T>::interleaved(data, rows, cols, sc.count)
                                                : BatchView<T>::chunked(data, rows, cols, sc.count, sc.chunk);
}

template <class T>
std::vector<T> to_layout(const std::vector<T>& packed, const BatchView<T>& layout) {
    std::vector<T> out(static_cast<std::size_t>(layout.storage_elements()) + guard_elements, poison_value<T>());
    BatchView<T> v = layout;
    v.data = out.data();
    for (int k = 0; k < v.count; ++k)
        for (int j = 0; j < v.cols; ++j)
            for (int i = 0; i < v.rows; ++i) v.at(k, i, j) = packed[packed_index(v.rows, v.cols, k, i, j)];
    return out;
}

template <class T>
std::vector<T> from_layout(std::vector<T>& storage, const BatchView<T>& layout) {
    BatchView<T> v = layout;
    v.data = storage.data();
    std::vector<T> packed(static_cast<std::size_t>(v.count) * v.rows * v.cols);
    for (int k = 0; k < v.count; ++k)
        for (int j = 0; j < v.cols; ++j)
            for (int i = 0; i < v.rows; ++i) packed[packed_index(v.rows, v.cols, k, i, j)] = v.at(k, i, j);
    return packed;
}

template <class T>
void run_scenario(const InterleavedKernelSpec& spec, const CoopEmulatedKernel& kernel, const Scenario& sc,
                  Context& cpu) {
    const int n = spec.n, count = sc.count;
    const int nrhs = sc.nrhs > 0 ? sc.nrhs : 2 * spec.config.nrhs_block + 1;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    SCOPED_TRACE(sc.label);

    const std::vector<T> a = test_matrices<T>(n, count, seed);
    const FactorResult<T> f = reference_potrf(cpu, spec.uplo, a, n, count);  // LAPACKE potrf
    for (int k = 0; k < count; ++k) ASSERT_EQ(f.info[k], 0) << "reference potrf failed on matrix " << k;
    const std::vector<T> factor = with_other_triangle_poisoned(f.factor, spec.uplo, n, count);
    const RhsWithSolution<T> rhs = generate_rhs_batch(a, n, count, nrhs, seed + 1);
    const std::vector<T> x_ref = reference_potrs(cpu, spec.uplo, factor, rhs.b, n, nrhs, count);  // LAPACKE potrs

    const BatchView<T> a_layout = view_of<T>(sc, nullptr, n, n), b_layout = view_of<T>(sc, nullptr, n, nrhs);
    std::vector<T> a_store = to_layout(factor, a_layout);
    std::vector<T> b_store = to_layout(rhs.b, b_layout);
    const std::vector<T> a_before = a_store, b_before = b_store;

    tuned::CoopLaunchShape shape = launch_shape(spec, sc, nrhs);
    if (sc.grid_y > 0) shape.grid_y = static_cast<unsigned>(sc.grid_y);
    const T* a_ptr = a_store.data();
    T* b_ptr = b_store.data();
    int nrhs_arg = nrhs, count_arg = count, chunk_arg = a_layout.chunk();
    const int* no_info = nullptr;
    void* args[] = {&a_ptr, &b_ptr, &nrhs_arg, &no_info, &count_arg, &chunk_arg};
    ASSERT_NO_THROW(bs_emu::launch(kernel.entry, {shape.grid_x, shape.grid_y, 1}, {shape.block_x, 1, 1},
                                   shape.shared_bytes, args));

    EXPECT_EQ(bitwise_differences(a_before, a_store), 0) << "the factor was written";
    const std::size_t b_end = static_cast<std::size_t>(b_layout.storage_elements());
    EXPECT_EQ(bitwise_differences(b_before, b_store, b_end), 0) << "written past the last system";
    const std::vector<T> x = from_layout(b_store, b_layout);
    int unchanged = 0;
    for (std::size_t e = 0; e < x.size(); ++e) unchanged += bitwise_equal(x[e], rhs.b[e]);
    EXPECT_LT(unchanged, static_cast<int>(x.size() / 4) + 1) << "most of B was left as it was";

    const double backward = max_or_nan(solve_backward_error(spec.uplo, a, x, rhs.b, n, nrhs, count));
    EXPECT_LT(backward, kAcceptance) << "scaled backward error ||B - A X|| / (n (||A|| ||X|| + ||B||) u)";
    const double tol = cross_backend_tolerance<T>(n);
    for (int k = 0; k < count; ++k) {
        const double d = relative_difference(x, x_ref, n, nrhs, k, Part::whole);
        if (!(d <= tol)) {
            ADD_FAILURE() << "system " << k << ": ||X - X_lapack|| / ||X_lapack|| = " << d << " > " << tol;
            break;
        }
    }

    // Again with the info of a failed potrf (posv in two kernels): the systems with info != 0 keep B
    // bit for bit, the others get bit for bit the X above (the lanes are independent).
    std::vector<int> info(static_cast<std::size_t>(count), 0);
    for (int k : {int(seed % unsigned(count)), int((seed / 7) % unsigned(count)), count - 1})
        info[std::size_t(k)] = 1 + k % n;
    std::vector<T> b_again = b_before;
    T* b_again_ptr = b_again.data();
    const int* info_ptr = info.data();
    void* args_info[] = {&a_ptr, &b_again_ptr, &nrhs_arg, &info_ptr, &count_arg, &chunk_arg};
    ASSERT_NO_THROW(bs_emu::launch(kernel.entry, {shape.grid_x, shape.grid_y, 1}, {shape.block_x, 1, 1},
                                   shape.shared_bytes, args_info));
    EXPECT_EQ(bitwise_differences(b_before, b_again, b_end), 0) << "written past the last system (with info)";
    const std::vector<T> x_again = from_layout(b_again, b_layout);
    for (int k = 0; k < count; ++k) {
        const std::vector<T>& expected = info[std::size_t(k)] != 0 ? rhs.b : x;
        int differ = 0;
        for (int j = 0; j < nrhs; ++j)
            for (int i = 0; i < n; ++i) {
                const std::size_t e = packed_index(n, nrhs, k, i, j);
                differ += !bitwise_equal(x_again[e], expected[e]);
            }
        EXPECT_EQ(differ, 0) << "system " << k << (info[std::size_t(k)] != 0 ? " (failed: B must stay as it was)"
                                                                          : " (sound: X as without info)");
    }
}

// Value info holds before a run: a kernel that leaves an info unwritten fails the comparison.
constexpr int info_poison = -77;

template <class T>
void run_potrf_scenario(const InterleavedKernelSpec& spec, const CoopEmulatedKernel& kernel, const Scenario& sc,
                        Context& cpu) {
    const int n = spec.n, count = sc.count;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    SCOPED_TRACE(sc.label);
    const PotrfInput<T> in = potrf_input<T>(spec.uplo, n, count, seed, count >= 2);

    const BatchView<T> a_layout = view_of<T>(sc, nullptr, n, n);
    std::vector<T> a_store = to_layout(in.a, a_layout);
    const std::vector<T> a_before = a_store;
    std::vector<int> info(static_cast<std::size_t>(count) + guard_elements, info_poison);

    const tuned::CoopLaunchShape shape = launch_shape(spec, sc, 0);
    ASSERT_EQ(shape.grid_y, 1u);
    T* a_ptr = a_store.data();
    int* info_ptr = info.data();
    int count_arg = count, chunk_arg = a_layout.chunk();
    void* args[] = {&a_ptr, &info_ptr, &count_arg, &chunk_arg};
    ASSERT_NO_THROW(bs_emu::launch(kernel.entry, {shape.grid_x, 1, 1}, {shape.block_x, 1, 1}, shape.shared_bytes, args));

    const std::size_t a_end = static_cast<std::size_t>(a_layout.storage_elements());
    EXPECT_EQ(bitwise_differences(a_before, a_store, a_end), 0) << "A written past the last matrix";
    for (std::size_t e = count; e < info.size(); ++e)
        if (info[e] != info_poison) {
            ADD_FAILURE() << "info written past the last matrix (entry " << e << ")";
            break;
        }
    info.resize(count);
    check_potrf_output(cpu, spec.uplo, n, count, spec.config.nb, in, from_layout(a_store, a_layout), info);
}

// What one emulated posv launch left, packed: A, B, info.
template <class T>
struct PosvRun {
    std::vector<T> a, b;
    std::vector<int> info;
};

// One posv launch on packed A and B in the scenario's layout (storage past the last system and info
// past count poisoned and checked to stay so).
template <class T>
PosvRun<T> emulate_posv(const InterleavedKernelSpec& spec, const CoopEmulatedKernel& kernel, const Scenario& sc,
                        const std::vector<T>& a, const std::vector<T>& b, int nrhs) {
    const int n = spec.n, count = sc.count;
    const BatchView<T> a_layout = view_of<T>(sc, nullptr, n, n), b_layout = view_of<T>(sc, nullptr, n, nrhs);
    std::vector<T> a_store = to_layout(a, a_layout), b_store = to_layout(b, b_layout);
    const std::vector<T> a_before = a_store, b_before = b_store;
    std::vector<int> info(static_cast<std::size_t>(count) + guard_elements, info_poison);
    const tuned::CoopLaunchShape shape = launch_shape(spec, sc, nrhs);
    EXPECT_EQ(shape.grid_y, 1u) << "posv factors once per group of systems: grid.y must be 1";
    T* a_ptr = a_store.data();
    T* b_ptr = b_store.data();
    int* info_ptr = info.data();
    int nrhs_arg = nrhs, count_arg = count, chunk_arg = a_layout.chunk();
    void* args[] = {&a_ptr, &b_ptr, &nrhs_arg, &info_ptr, &count_arg, &chunk_arg};
    EXPECT_NO_THROW(bs_emu::launch(kernel.entry, {shape.grid_x, 1, 1}, {shape.block_x, 1, 1}, shape.shared_bytes, args));
    EXPECT_EQ(bitwise_differences(a_before, a_store, static_cast<std::size_t>(a_layout.storage_elements())), 0)
        << "A written past the last matrix";
    EXPECT_EQ(bitwise_differences(b_before, b_store, static_cast<std::size_t>(b_layout.storage_elements())), 0)
        << "B written past the last system";
    for (std::size_t e = count; e < info.size(); ++e)
        if (info[e] != info_poison) {
            ADD_FAILURE() << "info written past the last matrix (entry " << e << ")";
            break;
        }
    info.resize(count);
    return {from_layout(a_store, a_layout), from_layout(b_store, b_layout), std::move(info)};
}

// posv: a not-SPD and a NaN matrix at random lanes (coop_potrf_check.hpp) among sound ones; the
// verdict of check_posv_output, and the sound lanes bit for bit as in a run without the failures.
template <class T>
void run_posv_scenario(const InterleavedKernelSpec& spec, const CoopEmulatedKernel& kernel, const Scenario& sc,
                       Context& cpu) {
    const int n = spec.n, count = sc.count;
    const int nrhs = sc.nrhs > 0 ? sc.nrhs : 2 * spec.config.nrhs_block + 1;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    SCOPED_TRACE(::testing::Message() << sc.label << ", nrhs " << nrhs);
    const bool failures = count >= 2;
    const PosvInput<T> in = posv_input<T>(spec.uplo, n, count, nrhs, seed, failures);
    const PosvRun<T> run = emulate_posv(spec, kernel, sc, in.a.a, in.b, nrhs);
    check_posv_output(cpu, spec.uplo, n, count, nrhs, spec.config.nb, in, run.a, run.info, run.b);
    if (!failures) return;
    const PosvRun<T> sound = emulate_posv(spec, kernel, sc, in.sound, in.b, nrhs);
    EXPECT_EQ(neighbour_differences(run.a, sound.a, n, n, count, in.a.not_spd, in.a.nan_lane), 0)
        << "the factors of sound matrices depend on their failed neighbours";
    EXPECT_EQ(neighbour_differences(run.b, sound.b, n, nrhs, count, in.a.not_spd, in.a.nan_lane), 0)
        << "the solutions of sound systems depend on their failed neighbours";
}

// Non-finite members (issue 22, ../nonfinite_cases.hpp: +Inf on the diagonal at the first, middle
// and last column, NaN and Inf below it) among good ones: info of the first bad pivot (as the CPU
// backend's), never 0; the good lanes factored and solved as usual; B of a failed posv untouched.
template <class T>
void run_nonfinite_scenario(const InterleavedKernelSpec& spec, const CoopEmulatedKernel& kernel, Context& cpu) {
    const int n = spec.n, count = 13, nrhs = spec.routine == Routine::posv ? 2 : 0;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    SCOPED_TRACE("non-finite members");
    const std::vector<T> good = test_matrices<T>(n, count, seed);
    std::vector<T> a = good;
    const std::vector<NonFiniteMember> members = nonfinite_members(n, count);
    const std::vector<int> expected = spoil_nonfinite(a, n, count, members);
    a = with_other_triangle_poisoned(a, spec.uplo, n, count);
    EXPECT_EQ(reference_potrf(cpu, spec.uplo, a, n, count).info, expected) << "the CPU backend disagrees";
    const Scenario sc{"interleaved, 13 systems", LayoutKind::interleaved, 0, count, nrhs, 0, 0};
    std::vector<T> factor;
    std::vector<int> info;
    if (spec.routine == Routine::posv) {
        const std::vector<T> b = generate_rhs_batch(good, n, count, nrhs, seed + 1).b;
        PosvRun<T> run = emulate_posv(spec, kernel, sc, a, b, nrhs);
        const std::vector<double> errors = solve_backward_error(spec.uplo, good, run.b, b, n, nrhs, count);
        const std::size_t nr = std::size_t(n) * nrhs;
        for (int k = 0; k < count; ++k) {
            if (expected[k] == 0) {
                EXPECT_LT(errors[k], kAcceptance) << "solution of good system " << k;
            } else {
                EXPECT_EQ(bitwise_differences(run.b, b, nr * k, nr * (k + 1)), 0) << "B of failed system " << k;
            }
        }
        factor = std::move(run.a), info = std::move(run.info);
    } else {
        const BatchView<T> a_layout = view_of<T>(sc, nullptr, n, n);
        std::vector<T> a_store = to_layout(a, a_layout);
        info.assign(count, info_poison);
        const tuned::CoopLaunchShape shape = launch_shape(spec, sc, 0);
        T* a_ptr = a_store.data();
        int* info_ptr = info.data();
        int count_arg = count, chunk_arg = a_layout.chunk();
        void* args[] = {&a_ptr, &info_ptr, &count_arg, &chunk_arg};
        ASSERT_NO_THROW(bs_emu::launch(kernel.entry, {shape.grid_x, 1, 1}, {shape.block_x, 1, 1}, shape.shared_bytes, args));
        factor = from_layout(a_store, a_layout);
    }
    for (const NonFiniteMember& m : members) EXPECT_EQ(info[m.k], m.expected_info()) << m.describe();
    EXPECT_EQ(info, expected);
    const std::vector<double> errors = factorization_error(spec.uplo, good, factor, n, count);
    for (int k = 0; k < count; ++k)
        if (expected[k] == 0) {
            EXPECT_LT(errors[k], kAcceptance) << "factor of good matrix " << k;
        }
}

// Calls f(T{}) with the element type T of precision p.
template <class F>
void with_element_type(Precision p, F&& f) {
    switch (p) {
        case Precision::s: f(float{}); break;
        case Precision::d: f(double{}); break;
        case Precision::c: f(std::complex<float>{}); break;
        case Precision::z: f(std::complex<double>{}); break;
    }
}

class CoopEmulated : public ::testing::TestWithParam<CoopEmulatedKernel> {};

TEST_P(CoopEmulated, MatchesLapacke) {
    const CoopEmulatedKernel& kernel = GetParam();
    const auto specs = emulation_specs();
    ASSERT_LT(kernel.spec_index, static_cast<int>(specs.size()));
    const InterleavedKernelSpec& spec = specs[kernel.spec_index];
    // the host-compiled text must be what the library generates today (else: rebuild)
    ASSERT_EQ(tuned::interleaved_kernel_name(spec), std::string(kernel.kernel_name));
    Context cpu(Backend::cpu);
    if (spec.routine != Routine::potrs)
        with_element_type(spec.precision, [&](auto element) {
            run_nonfinite_scenario<decltype(element)>(spec, kernel, cpu);
        });
    for (const Scenario& sc : scenarios())
        with_element_type(spec.precision, [&](auto element) {
            using T = decltype(element);
            switch (spec.routine) {
                case Routine::potrs: run_scenario<T>(spec, kernel, sc, cpu); break;
                case Routine::potrf: run_potrf_scenario<T>(spec, kernel, sc, cpu); break;
                case Routine::posv: run_posv_scenario<T>(spec, kernel, sc, cpu); break;
            }
        });
}

INSTANTIATE_TEST_SUITE_P(Coop, CoopEmulated, ::testing::ValuesIn(coop_emulated_kernels()),
                         [](const ::testing::TestParamInfo<CoopEmulatedKernel>& info) {
                             return std::string(info.param.kernel_name);
                         });

TEST(CoopEmulatedKernels, CoverEverySpec) {
    EXPECT_EQ(coop_emulated_kernels().size(), emulation_specs().size())
        << "the build-time kernel sources are stale: rebuild batchsolve_coop_emulation_test";
}

// The test can fail: a factor whose diagonal is doubled after the fact gives a wrong solution that
// the checks above must reject (guards against checks that pass whatever the kernel does).
TEST(CoopEmulatedKernels, DetectAWrongFactor) {
    const auto kernels = coop_emulated_kernels();
    const auto specs = emulation_specs();
    ASSERT_FALSE(kernels.empty());
    const CoopEmulatedKernel& kernel = kernels.front();
    const InterleavedKernelSpec& spec = specs[kernel.spec_index];
    ASSERT_EQ(spec.precision, Precision::d);
    Context cpu(Backend::cpu);
    const int n = spec.n, count = 33, nrhs = 1;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const std::vector<double> a = test_matrices<double>(n, count, seed);
    std::vector<double> factor = reference_potrf(cpu, spec.uplo, a, n, count).factor;
    for (int k = 0; k < count; ++k) factor[packed_index(n, n, k, n - 1, n - 1)] *= 2;
    const RhsWithSolution<double> rhs = generate_rhs_batch(a, n, count, nrhs, seed + 1);
    const auto a_layout = BatchView<double>::interleaved(nullptr, n, n, count);
    const auto b_layout = BatchView<double>::interleaved(nullptr, n, nrhs, count);
    std::vector<double> a_store = to_layout(factor, a_layout), b_store = to_layout(rhs.b, b_layout);
    const auto shape = tuned::coop_launch_shape(spec, count, nrhs, 1);
    const double* a_ptr = a_store.data();
    double* b_ptr = b_store.data();
    int nrhs_arg = nrhs, count_arg = count, chunk_arg = count;
    const int* no_info = nullptr;
    void* args[] = {&a_ptr, &b_ptr, &nrhs_arg, &no_info, &count_arg, &chunk_arg};
    bs_emu::launch(kernel.entry, {shape.grid_x, shape.grid_y, 1}, {shape.block_x, 1, 1}, shape.shared_bytes, args);
    const std::vector<double> x = from_layout(b_store, b_layout);
    EXPECT_GT(max_or_nan(solve_backward_error(spec.uplo, a, x, rhs.b, n, nrhs, count)), kAcceptance);
}

// The potrf checks can fail: a correct factor with one entry changed, a wrong info, a written other
// triangle and a failed matrix whose later columns were touched must each be reported.
TEST(CoopEmulatedKernels, PotrfChecksRejectWrongOutputs) {
    Context cpu(Backend::cpu);
    const int n = 13, count = 9, nb = 4;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
        const PotrfInput<double> in = potrf_input<double>(uplo, n, count, seed, true);
        const FactorResult<double> ref = reference_potrf(cpu, uplo, in.a, n, count);
        // what the kernel should leave: LAPACK's factor for good matrices; for failed ones, L in the
        // tile columns before the failure and A after it
        std::vector<double> good = ref.factor;
        for (int k : {in.not_spd, in.nan_lane}) {
            const int m = (ref.info[k] - 1) / nb * nb;
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) {
                    const std::size_t e = packed_index(n, n, k, i, j);
                    const bool later = (uplo == Uplo::lower ? j : i) >= m;
                    if (later || !in_triangle(uplo, i, j)) good[e] = in.a[e];
                    else if (k == in.not_spd) {
                        const auto l = leading_columns(in.a, uplo, n, k, m);
                        const int r = uplo == Uplo::lower ? i : j, c = uplo == Uplo::lower ? j : i;
                        good[e] = double(l[std::size_t(c) * n + r].real());
                    }
                }
        }
        for (int k = 0; k < count; ++k)
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i)
                    if (!in_triangle(uplo, i, j)) good[packed_index(n, n, k, i, j)] = in.a[packed_index(n, n, k, i, j)];
        check_potrf_output(cpu, uplo, n, count, nb, in, good, ref.info);  // must pass
        const int ok = (in.not_spd + 1) % count == in.nan_lane ? (in.not_spd + 2) % count : (in.not_spd + 1) % count;
        std::vector<double> bad = good;
        bad[packed_index(n, n, ok, n - 1, n - 1)] *= 1 + 1e-6;
        EXPECT_NONFATAL_FAILURE(check_potrf_output(cpu, uplo, n, count, nb, in, bad, ref.info), "matrix");
        std::vector<int> info = ref.info;
        info[ok] = 3;
        EXPECT_NONFATAL_FAILURE(check_potrf_output(cpu, uplo, n, count, nb, in, good, info), "info");
        bad = good;
        bad[uplo == Uplo::lower ? packed_index(n, n, ok, 0, n - 1) : packed_index(n, n, ok, n - 1, 0)] = 0;
        EXPECT_NONFATAL_FAILURE(check_potrf_output(cpu, uplo, n, count, nb, in, bad, ref.info), "other triangle");
        bad = good;
        bad[packed_index(n, n, in.not_spd, n - 1, n - 1)] = 1;
        EXPECT_NONFATAL_FAILURE(check_potrf_output(cpu, uplo, n, count, nb, in, bad, ref.info), "were written");
    }
}

// The posv checks can fail: a sound system's X changed, a failed system's B written, a failed
// matrix's later columns written and a wrong info must each be reported (on a real emulated posv run,
// which must pass first).
TEST(CoopEmulatedKernels, PosvChecksRejectWrongOutputs) {
    const auto kernels = coop_emulated_kernels();
    const auto specs = emulation_specs();
    const CoopEmulatedKernel* kernel = nullptr;
    for (const CoopEmulatedKernel& k : kernels)
        if (specs[k.spec_index].routine == Routine::posv && specs[k.spec_index].precision == Precision::d &&
            specs[k.spec_index].n >= 17) {
            kernel = &k;
            break;
        }
    ASSERT_NE(kernel, nullptr) << "no d posv kernel with n >= 17 in the sample";
    const InterleavedKernelSpec& spec = specs[kernel->spec_index];
    Context cpu(Backend::cpu);
    const Scenario sc{"interleaved, 40 systems", LayoutKind::interleaved, 0, 40, 2, 0, 0};
    const int n = spec.n, count = sc.count, nrhs = sc.nrhs;
    const std::uint64_t seed = fresh_seed();
    BATCHSOLVE_TRACE_SEED(seed);
    const PosvInput<double> in = posv_input<double>(spec.uplo, n, count, nrhs, seed, true);
    const PosvRun<double> run = emulate_posv(spec, *kernel, sc, in.a.a, in.b, nrhs);
    check_posv_output(cpu, spec.uplo, n, count, nrhs, spec.config.nb, in, run.a, run.info, run.b);  // must pass
    const int ok = (in.a.not_spd + 1) % count == in.a.nan_lane ? (in.a.not_spd + 2) % count : (in.a.not_spd + 1) % count;
    std::vector<double> x = run.b;
    x[packed_index(n, nrhs, ok, n - 1, nrhs - 1)] *= 1 + 1e-6;
    EXPECT_NONFATAL_FAILURE(check_posv_output(cpu, spec.uplo, n, count, nrhs, spec.config.nb, in, run.a, run.info, x),
                            "system");
    x = run.b;
    x[packed_index(n, nrhs, in.a.not_spd, 0, 0)] = 0.5;
    EXPECT_NONFATAL_FAILURE(check_posv_output(cpu, spec.uplo, n, count, nrhs, spec.config.nb, in, run.a, run.info, x),
                            "of its B were written");
    std::vector<double> a = run.a;
    a[packed_index(n, n, in.a.not_spd, n - 1, n - 1)] = 1;
    EXPECT_NONFATAL_FAILURE(check_posv_output(cpu, spec.uplo, n, count, nrhs, spec.config.nb, in, a, run.info, run.b),
                            "were written");
    std::vector<int> info = run.info;
    info[in.a.nan_lane] = 0;
    EXPECT_NONFATAL_FAILURE(check_posv_output(cpu, spec.uplo, n, count, nrhs, spec.config.nb, in, run.a, info, run.b),
                            "info");
    EXPECT_GT(neighbour_differences(run.b, x, n, nrhs, count, -1, -1), 0);
}

}  // namespace
}  // namespace batchsolve::test::coop
