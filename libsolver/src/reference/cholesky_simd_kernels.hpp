// The vector kernels of cholesky_simd.hpp, written once for every instruction set.
//
// Each cholesky_simd_<isa>.cpp includes this file inside `namespace batchsolve::reference::simd::<isa>`
// under its `#pragma GCC target`, after defining, for T in {float, double}: Vec<T> (a GCC vector of
// kLanes<T> elements of T), load/store (unaligned), load_first/store_first(p, count) (the first count
// elements, the rest of the vector zero; nothing beyond them touched), fnmadd(a, b, c) = c - a b (fused
// where the set has FMA), vsqrt, pivot_and_inverse(d, pivot, inverse) (sqrt(d) and its inverse, each
// lane from its own d only); and <utility> included. It includes nothing itself: a standard header
// first included here would compile its inline functions for the target, and the linker could keep
// that copy for callers on any CPU.
//
// Scratch of a group (W = kLanes<T> matrices, element q of every vector is matrix q of the group):
//   [factor: n (n + 1) / 2 vectors, lower triangle by rows, (i, k) at row_start(i) + k]
//   [inverse diagonal: n vectors] [right-hand sides: kRhsBlock columns of n vectors]
// An upper triangle is stored transposed into the same place (U(k, i) = L(i, k) for real T), so one
// kernel serves both triangles.

inline int row_start(int i) { return i * (i + 1) / 2; }

template <class T>
Vec<T> broadcast(T x) {
    return Vec<T>{} + x;
}

// The W matrices of one group: per-lane access, `active` lanes hold matrices (a group at the end of the
// batch may be narrower: its other lanes factor the identity and are never written back). `adjacent`:
// every lane q is the element after lane q - 1 in memory for every (i, j), as in an interleaved layout
// whose chunk holds the whole group: one vector load or store per element.
template <class U, int W>
struct LaneGroup {
    int active = 0;
    bool adjacent = false;
    bool same_steps = false;  // all lanes share row_step and col_step (column-major: one offset per element)
    // A full group of column-major matrices with one ld: W x W tiles are transposed in registers.
    bool columns = false;
    MatrixAccess<U> m[W];
};

template <class U, int W>
LaneGroup<U, W> lane_group(const BatchView<U>& v, int first) {
    LaneGroup<U, W> g;
    g.active = v.count - first < W ? v.count - first : W;
    for (int q = 0; q < g.active; ++q) g.m[q] = matrix_access(v, first + q);
    g.same_steps = true;
    g.adjacent = g.active == W;
    for (int q = 1; q < g.active; ++q) {
        const bool steps = g.m[q].row_step == g.m[0].row_step && g.m[q].col_step == g.m[0].col_step;
        g.same_steps = g.same_steps && steps;
        g.adjacent = g.adjacent && steps && g.m[q].ptr == g.m[0].ptr + q;
    }
    g.columns = g.active == W && g.same_steps && g.m[0].row_step == 1 && !g.adjacent;
    return g;
}

// Element (r, c) of every lane of g into the W lanes at `slot` (identity entries in the idle lanes).
template <class T, class U, int W>
inline void gather_element(const LaneGroup<U, W>& g, int r, int c, T* slot) {
    if (g.adjacent) {
        store(slot, load(&g.m[0](r, c)));
        return;
    }
    if (g.same_steps) {
        const std::int64_t offset = r * g.m[0].row_step + c * g.m[0].col_step;
        for (int q = 0; q < g.active; ++q) slot[q] = g.m[q].ptr[offset];
    } else {
        for (int q = 0; q < g.active; ++q) slot[q] = g.m[q](r, c);
    }
    for (int q = g.active; q < W; ++q) slot[q] = T(r == c ? 1 : 0);
}

// The W lanes at `slot` into element (r, c) of the lanes of g whose bit is set in `write_lanes`.
template <class T, int W>
inline void scatter_element(const LaneGroup<T, W>& g, int r, int c, const T* slot, unsigned write_lanes) {
    const unsigned all = W == 32 ? ~0u : (1u << W) - 1;
    if (g.adjacent && write_lanes == all) {
        store(&g.m[0](r, c), load(slot));
        return;
    }
    if (g.same_steps) {
        const std::int64_t offset = r * g.m[0].row_step + c * g.m[0].col_step;
        for (int q = 0; q < g.active; ++q)
            if (write_lanes >> q & 1u) g.m[q].ptr[offset] = slot[q];
    } else {
        for (int q = 0; q < g.active; ++q)
            if (write_lanes >> q & 1u) g.m[q](r, c) = slot[q];
    }
}

// ---- W x W transposes in registers (column-major groups) -------------------------------------------

typedef long long DoubleShuffleIndex __attribute__((vector_size(sizeof(Vec<double>))));
typedef int FloatShuffleIndex __attribute__((vector_size(sizeof(Vec<float>))));
template <class T>
struct ShuffleIndex {
    using type = FloatShuffleIndex;
    using element = int;
};
template <>
struct ShuffleIndex<double> {
    using type = DoubleShuffleIndex;
    using element = long long;
};

// The two-input shuffles of one transpose stage: vectors a and a + D (a without bit D) exchange their
// off-diagonal D x D blocks. Lane index j < W takes element j of the first input, W + j of the second.
template <class T, int D, bool Second, std::size_t... J>
inline typename ShuffleIndex<T>::type stage_index(std::index_sequence<J...>) {
    using E = typename ShuffleIndex<T>::element;
    constexpr std::size_t W = kLanes<T>;
    return typename ShuffleIndex<T>::type{
        static_cast<E>(Second ? ((J & D) ? W + J : J + D) : ((J & D) ? W + J - D : J))...};
}

#if defined(__clang__)
// clang has no __builtin_shuffle with a mask vector; __builtin_shufflevector takes the same lane
// indices as constants (the `fuzz` preset and scripts/sanitize-*.sh build the library with clang).
template <class T, int D, bool Second, std::size_t... J>
inline Vec<T> shuffle_stage(const Vec<T>& x, const Vec<T>& y, std::index_sequence<J...>) {
    constexpr std::size_t W = kLanes<T>;
    return __builtin_shufflevector(x, y, int(Second ? ((J & D) ? W + J : J + D) : ((J & D) ? W + J - D : J))...);
}
#endif

// v[r][q] <- v[q][r]: log2(W) stages of W shuffles (each swaps one bit of the row and column indices).
template <class T, int D = 1>
inline void transpose(Vec<T>* v) {
    constexpr int W = kLanes<T>;
    if constexpr (D < W) {
#if defined(__clang__)
#pragma GCC unroll 16
        for (int a = 0; a < W; ++a)
            if (!(a & D)) {
                const Vec<T> x = v[a], y = v[a + D];
                v[a] = shuffle_stage<T, D, false>(x, y, std::make_index_sequence<W>{});
                v[a + D] = shuffle_stage<T, D, true>(x, y, std::make_index_sequence<W>{});
            }
#else
        const auto first = stage_index<T, D, false>(std::make_index_sequence<W>{});
        const auto second = stage_index<T, D, true>(std::make_index_sequence<W>{});
#pragma GCC unroll 16
        for (int a = 0; a < W; ++a)
            if (!(a & D)) {
                const Vec<T> x = v[a], y = v[a + D];
                v[a] = __builtin_shuffle(x, y, first);
                v[a + D] = __builtin_shuffle(x, y, second);
            }
#endif
        transpose<T, 2 * D>(v);
    }
}

// Elements [offset, offset + count) of every lane's matrix (count <= W) -> the vectors of the run.
template <class T, class U, int W, bool Growing>
inline void gather_run(const LaneGroup<U, W>& g, std::int64_t offset, int count, T* slot, int step) {
    Vec<T> v[W];
#pragma GCC unroll 16
    for (int q = 0; q < W; ++q) v[q] = load_first(g.m[q].ptr + offset, count);
    transpose<T>(v);
    for (int r = 0; r < count; ++r) {
        store(slot, v[r]);
        slot += step * W;
        if (Growing) ++step;
    }
}

template <class T, int W, bool Growing>
inline void scatter_run(const LaneGroup<T, W>& g, std::int64_t offset, int count, const T* slot, int step) {
    Vec<T> v[W];
    for (int r = 0; r < W; ++r) {
        v[r] = r < count ? load(slot) : broadcast<T>(0);
        slot += step * W;
        if (Growing) ++step;
    }
    transpose<T>(v);
#pragma GCC unroll 16
    for (int q = 0; q < W; ++q) store_first(g.m[q].ptr + offset, count, v[q]);
}

// Column c rows [first, end) of every lane, W rows at a time, to the vectors from `slot` on (row i + 1
// `step` vectors after row i; step + 1 after that when Growing).
template <class T, class U, int W, bool Growing>
inline void gather_column(const LaneGroup<U, W>& g, int c, int first, int end, T* slot, int step) {
    const std::int64_t ld = g.m[0].col_step;
    for (int i0 = first; i0 < end; i0 += W) {
        const int count = end - i0 < W ? end - i0 : W;
        gather_run<T, U, W, Growing>(g, c * ld + i0, count, slot, step);
        for (int r = 0; r < count; ++r) {
            slot += step * W;
            if (Growing) ++step;
        }
    }
}

template <class T, int W, bool Growing>
inline void scatter_column(const LaneGroup<T, W>& g, int c, int first, int end, const T* slot, int step) {
    const std::int64_t ld = g.m[0].col_step;
    for (int i0 = first; i0 < end; i0 += W) {
        const int count = end - i0 < W ? end - i0 : W;
        scatter_run<T, W, Growing>(g, c * ld + i0, count, slot, step);
        for (int r = 0; r < count; ++r) {
            slot += step * W;
            if (Growing) ++step;
        }
    }
}

// The `uplo` triangle of the group's matrices into the factor part of the scratch. For a lower
// triangle from column-major storage the loop runs down each column (the source's contiguous way).
template <class T, class U, int W>
void load_triangle(Uplo uplo, int n, const LaneGroup<U, W>& g, T* s) {
    if (g.columns) {  // lower: column k rows k..n-1 -> (i, k); upper: column i rows 0..i -> row i of the scratch
        for (int c = 0; c < n; ++c) {
            // (i, c) at row_start(i) + c: row i + 1 lies i + 1 vectors further
            if (uplo == Uplo::lower) gather_column<T, U, W, true>(g, c, c, n, s + (row_start(c) + c) * W, c + 1);
            else gather_column<T, U, W, false>(g, c, 0, c + 1, s + row_start(c) * W, 1);
        }
        return;
    }
    if (uplo == Uplo::lower) {
        for (int k = 0; k < n; ++k)
            for (int i = k; i < n; ++i) gather_element<T, U, W>(g, i, k, s + (row_start(i) + k) * W);
    } else {
        for (int i = 0; i < n; ++i)
            for (int k = 0; k <= i; ++k) gather_element<T, U, W>(g, k, i, s + (row_start(i) + k) * W);
    }
}

template <class T, int W>
void store_triangle(Uplo uplo, int n, const LaneGroup<T, W>& g, const T* s) {
    const unsigned all = W == 32 ? ~0u : (1u << W) - 1;
    if (g.columns) {
        for (int c = 0; c < n; ++c) {
            if (uplo == Uplo::lower) scatter_column<T, W, true>(g, c, c, n, s + (row_start(c) + c) * W, c + 1);
            else scatter_column<T, W, false>(g, c, 0, c + 1, s + row_start(c) * W, 1);
        }
        return;
    }
    if (uplo == Uplo::lower) {
        for (int k = 0; k < n; ++k)
            for (int i = k; i < n; ++i) scatter_element<T, W>(g, i, k, s + (row_start(i) + k) * W, all);
    } else {
        for (int i = 0; i < n; ++i)
            for (int k = 0; k <= i; ++k) scatter_element<T, W>(g, k, i, s + (row_start(i) + k) * W, all);
    }
}

// Columns [c0, c0 + cols) of the group's B into the right-hand-side part (column c at c n W).
template <class T, class U, int W>
void load_rhs(int n, int c0, int cols, const LaneGroup<U, W>& g, T* rhs) {
    if (g.columns) {
        for (int c = 0; c < cols; ++c)
            gather_column<T, U, W, false>(g, c0 + c, 0, n, rhs + c * n * W, 1);
        return;
    }
    for (int c = 0; c < cols; ++c)
        for (int i = 0; i < n; ++i) {
            T* slot = rhs + (c * n + i) * W;
            gather_element<T, U, W>(g, i, c0 + c, slot);
            for (int q = g.active; q < W; ++q) slot[q] = T(0);
        }
}

template <class T, int W>
void store_rhs(int n, int c0, int cols, const LaneGroup<T, W>& g, const T* rhs, unsigned write_lanes) {
    const unsigned all = W == 32 ? ~0u : (1u << W) - 1;
    if (g.columns && write_lanes == all) {
        for (int c = 0; c < cols; ++c)
            scatter_column<T, W, false>(g, c0 + c, 0, n, rhs + c * n * W, 1);
        return;
    }
    for (int c = 0; c < cols; ++c)
        for (int i = 0; i < n; ++i) scatter_element<T, W>(g, i, c0 + c, rhs + (c * n + i) * W, write_lanes);
}

// ---- factorisation ---------------------------------------------------------------------------------

// Column j of the factor at rows i0 .. i0 + R - 1 (all > j): L(i, j) = (A(i, j) - L(i, 0:j) . L(j, 0:j))
// / L(j, j). R rows share each load of row j and give R independent FMA chains.
template <class T, int W, int R>
inline void factor_rows(T* s, int j, int i0, Vec<T> inverse_pivot) {
    Vec<T> acc[R];
    T* row[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        row[r] = s + row_start(i0 + r) * W;
        acc[r] = load(row[r] + j * W);
    }
    const T* row_j = s + row_start(j) * W;
    for (int k = 0; k < j; ++k) {
        const Vec<T> x = load(row_j + k * W);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[r] = fnmadd(load(row[r] + k * W), x, acc[r]);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) store(row[r] + j * W, acc[r] * inverse_pivot);
}

// Columns j and j + 1 at rows i0 .. i0 + R - 1 (all > j + 1) in one pass over k < j: each load of
// L(i, k) serves both columns (R + 2 loads for 2 R FMAs, against R + 1 for R one column at a time);
// then the k = j term of column j + 1, L(i, j) L(j + 1, j), once L(i, j) is known.
template <class T, int W, int R>
inline void factor_row_pairs(T* s, int j, int i0, Vec<T> inverse_pivot, Vec<T> next_inverse_pivot) {
    Vec<T> acc[R], next[R];
    T* row[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        row[r] = s + row_start(i0 + r) * W;
        acc[r] = load(row[r] + j * W);
        next[r] = load(row[r] + (j + 1) * W);
    }
    const T* row_j = s + row_start(j) * W;
    const T* row_j1 = s + row_start(j + 1) * W;
    for (int k = 0; k < j; ++k) {
        const Vec<T> x = load(row_j + k * W), y = load(row_j1 + k * W);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const Vec<T> l = load(row[r] + k * W);
            acc[r] = fnmadd(l, x, acc[r]);
            next[r] = fnmadd(l, y, next[r]);
        }
    }
    const Vec<T> l_j1_j = load(row_j1 + j * W);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        acc[r] = acc[r] * inverse_pivot;
        store(row[r] + j * W, acc[r]);
        store(row[r] + (j + 1) * W, fnmadd(acc[r], l_j1_j, next[r]) * next_inverse_pivot);
    }
}

// Rows of two columns per pass (factor_row_pairs): 8 rows where the set has 32 registers (AVX-512),
// else 4 (16 accumulators and their operands would not fit in 16).
template <class T>
constexpr int kPairRows = sizeof(Vec<T>) == 64 ? 8 : 4;

// Pivot j from row j of the factor (its entries left of the diagonal are final): d = A(j, j) - the
// squares of L(j, 0:j); records a failure in failed_column, stores L(j, j) and its inverse.
template <class T, int W>
inline Vec<T> pivot_column(T* s, int j, T* inverse_diagonal, Vec<T>& failed_column) {
    const Vec<T> zero = broadcast<T>(0), infinity = broadcast<T>(T(1) / T(0));
    T* row_j = s + row_start(j) * W;
    // Two partial sums: the diagonal's dot product is one chain otherwise.
    Vec<T> d0 = load(row_j + j * W), d1 = zero;
    int k = 0;
    for (; k + 1 < j; k += 2) {
        const Vec<T> x0 = load(row_j + k * W), x1 = load(row_j + (k + 1) * W);
        d0 = fnmadd(x0, x0, d0);
        d1 = fnmadd(x1, x1, d1);
    }
    if (k < j) {
        const Vec<T> x = load(row_j + k * W);
        d0 = fnmadd(x, x, d0);
    }
    const Vec<T> d = d0 + d1;
    // NaN fails both comparisons; +Inf fails the second (sqrt(Inf) would pass a plain d > 0).
    const auto good = (d > zero) & (d < infinity);
    failed_column = ((failed_column == zero) & ~good) ? broadcast<T>(T(j + 1)) : failed_column;
    Vec<T> pivot, inverse_pivot;
    pivot_and_inverse(d, pivot, inverse_pivot);
    store(row_j + j * W, pivot);
    store(inverse_diagonal + j * W, inverse_pivot);
    return inverse_pivot;
}

// Left-looking (Crout) Cholesky of the group's lower factor in place, two columns at a time. Returns,
// per lane, the 1-based column of the first pivot that is not positive and finite (0 when none), as T
// (exact up to 2^24); writes 1 / L(j, j) to inverse_diagonal. A failed lane goes on computing (NaN):
// lanes never interact.
template <class T, int W>
Vec<T> factor_group(int n, T* s, T* inverse_diagonal) {
    constexpr int P = kPairRows<T>;
    Vec<T> failed_column = broadcast<T>(0);
    int j = 0;
    for (; j + 1 < n; j += 2) {
        const Vec<T> inverse_pivot = pivot_column<T, W>(s, j, inverse_diagonal, failed_column);
        factor_rows<T, W, 1>(s, j, j + 1, inverse_pivot);  // L(j + 1, j): row j + 1 is then final up to j
        const Vec<T> next_inverse_pivot = pivot_column<T, W>(s, j + 1, inverse_diagonal, failed_column);
        int i = j + 2;
        for (; i + P <= n; i += P) factor_row_pairs<T, W, P>(s, j, i, inverse_pivot, next_inverse_pivot);
        if (P > 4 && i + 4 <= n) factor_row_pairs<T, W, 4>(s, j, i, inverse_pivot, next_inverse_pivot), i += 4;
        if (i + 2 <= n) factor_row_pairs<T, W, 2>(s, j, i, inverse_pivot, next_inverse_pivot), i += 2;
        if (i < n) factor_row_pairs<T, W, 1>(s, j, i, inverse_pivot, next_inverse_pivot);
    }
    if (j < n) pivot_column<T, W>(s, j, inverse_diagonal, failed_column);  // the last column of an odd n
    return failed_column;
}

template <class T, int W>
void invert_diagonal(int n, const T* s, T* inverse_diagonal) {
    const Vec<T> one = broadcast<T>(1);
    for (int i = 0; i < n; ++i) store(inverse_diagonal + i * W, one / load(s + (row_start(i) + i) * W));
}

// ---- substitution: L y = b, then L^T x = y, in place on one right-hand side of n vectors ------------

// Rows i0 .. i0 + R - 1 of L y = b: the part from the solved rows k < i0 with R chains, then the
// small triangle of the block in order.
template <class T, int W, int R>
inline void forward_rows(const T* s, const T* inverse_diagonal, int i0, T* b) {
    Vec<T> acc[R];
    const T* row[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        row[r] = s + row_start(i0 + r) * W;
        acc[r] = load(b + (i0 + r) * W);
    }
    for (int k = 0; k < i0; ++k) {
        const Vec<T> y = load(b + k * W);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) acc[r] = fnmadd(load(row[r] + k * W), y, acc[r]);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
        for (int p = 0; p < r; ++p) acc[r] = fnmadd(load(row[r] + (i0 + p) * W), acc[p], acc[r]);
        acc[r] = acc[r] * load(inverse_diagonal + (i0 + r) * W);
        store(b + (i0 + r) * W, acc[r]);
    }
}

// Rows i1, i1 - 1, ..., i1 - R + 1 of L^T x = y: x_i = (y_i - sum_{k > i} L(k, i) x_k) / L(i, i),
// the part from the solved rows k > i1 with R chains, then the block's triangle from the bottom up.
template <class T, int W, int R>
inline void backward_rows(int n, const T* s, const T* inverse_diagonal, int i1, T* b) {
    Vec<T> acc[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = load(b + (i1 - r) * W);
    for (int k = i1 + 1; k < n; ++k) {
        const Vec<T> x = load(b + k * W);
        const T* row_k = s + row_start(k) * W;
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) acc[r] = fnmadd(load(row_k + (i1 - r) * W), x, acc[r]);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        const int i = i1 - r;
#pragma GCC unroll 4
        for (int p = 0; p < r; ++p) acc[r] = fnmadd(load(s + (row_start(i1 - p) + i) * W), acc[p], acc[r]);
        acc[r] = acc[r] * load(inverse_diagonal + i * W);
        store(b + i * W, acc[r]);
    }
}

template <class T, int W>
void solve_group(int n, const T* s, const T* inverse_diagonal, T* b) {
    int i = 0;
    for (; i + 4 <= n; i += 4) forward_rows<T, W, 4>(s, inverse_diagonal, i, b);
    for (; i < n; ++i) forward_rows<T, W, 1>(s, inverse_diagonal, i, b);
    i = n - 1;
    for (; i - 3 >= 0; i -= 4) backward_rows<T, W, 4>(n, s, inverse_diagonal, i, b);
    for (; i >= 0; --i) backward_rows<T, W, 1>(n, s, inverse_diagonal, i, b);
}

// ---- the group loops each instruction set exports --------------------------------------------------

// The scratch pointer aligned to the vector size (scratch_elements leaves room for it).
template <class T>
T* aligned_scratch(T* scratch) {
    const std::uintptr_t p = reinterpret_cast<std::uintptr_t>(scratch), a = sizeof(Vec<T>);
    return reinterpret_cast<T*>((p + a - 1) / a * a);
}

template <class T>
void potrf_groups(Uplo uplo, const BatchView<T>& a, int* info, int first_group, int end_group, T* scratch) {
    constexpr int W = kLanes<T>;
    const int n = a.rows;
    T* s = aligned_scratch(scratch);
    T* inverse_diagonal = s + row_start(n) * W;
    for (int group = first_group; group < end_group; ++group) {
        const LaneGroup<T, W> g = lane_group<T, W>(a, group * W);
        load_triangle<T, T, W>(uplo, n, g, s);
        const Vec<T> failed_column = factor_group<T, W>(n, s, inverse_diagonal);
        store_triangle<T, W>(uplo, n, g, s);
        for (int q = 0; q < g.active; ++q) info[group * W + q] = int(failed_column[q]);
    }
}

template <class T>
void potrs_groups(Uplo uplo, const BatchView<const T>& a, const BatchView<T>& b, int first_group, int end_group,
                  T* scratch) {
    constexpr int W = kLanes<T>;
    const int n = a.rows, nrhs = b.cols;
    const unsigned all = W == 32 ? ~0u : (1u << W) - 1;
    T* s = aligned_scratch(scratch);
    T* inverse_diagonal = s + row_start(n) * W;
    T* rhs = inverse_diagonal + n * W;
    for (int group = first_group; group < end_group; ++group) {
        const LaneGroup<const T, W> ga = lane_group<const T, W>(a, group * W);
        const LaneGroup<T, W> gb = lane_group<T, W>(b, group * W);
        load_triangle<T, const T, W>(uplo, n, ga, s);
        invert_diagonal<T, W>(n, s, inverse_diagonal);
        for (int c0 = 0; c0 < nrhs; c0 += kRhsBlock) {
            const int cols = nrhs - c0 < kRhsBlock ? nrhs - c0 : kRhsBlock;
            load_rhs<T, T, W>(n, c0, cols, gb, rhs);
            for (int c = 0; c < cols; ++c) solve_group<T, W>(n, s, inverse_diagonal, rhs + c * n * W);
            store_rhs<T, W>(n, c0, cols, gb, rhs, all);
        }
    }
}

template <class T>
void posv_groups(Uplo uplo, const BatchView<T>& a, const BatchView<T>& b, int* info, int first_group, int end_group,
                 T* scratch) {
    constexpr int W = kLanes<T>;
    const int n = a.rows, nrhs = b.cols;
    T* s = aligned_scratch(scratch);
    T* inverse_diagonal = s + row_start(n) * W;
    T* rhs = inverse_diagonal + n * W;
    for (int group = first_group; group < end_group; ++group) {
        const LaneGroup<T, W> ga = lane_group<T, W>(a, group * W);
        load_triangle<T, T, W>(uplo, n, ga, s);
        const Vec<T> failed_column = factor_group<T, W>(n, s, inverse_diagonal);
        store_triangle<T, W>(uplo, n, ga, s);
        unsigned good_lanes = 0;
        for (int q = 0; q < ga.active; ++q) {
            info[group * W + q] = int(failed_column[q]);
            if (failed_column[q] == T(0)) good_lanes |= 1u << q;
        }
        if (good_lanes == 0 || nrhs == 0) continue;  // B of a failed matrix stays as it was
        const LaneGroup<T, W> gb = lane_group<T, W>(b, group * W);
        for (int c0 = 0; c0 < nrhs; c0 += kRhsBlock) {
            const int cols = nrhs - c0 < kRhsBlock ? nrhs - c0 : kRhsBlock;
            load_rhs<T, T, W>(n, c0, cols, gb, rhs);
            for (int c = 0; c < cols; ++c) solve_group<T, W>(n, s, inverse_diagonal, rhs + c * n * W);
            store_rhs<T, W>(n, c0, cols, gb, rhs, good_lanes);
        }
    }
}
