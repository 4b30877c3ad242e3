// Source generator of the interleaved-layout Cholesky kernels (see codegen/cholesky/interleaved.hpp).
//
// Algorithm (Dongarra et al., Proc. IEEE 2018, §V and §IX, re-derived here): one thread owns one
// matrix. The lower triangle is cut into nb x nb tiles (a narrower last tile when nb does not divide
// n); each step loads a tile into scalar registers, applies the four tile operations as straight-line
// code (potrf of a diagonal tile, trsm, syrk, gemm), and stores it back. Operands of syrk/gemm are
// streamed one column at a time, so the live registers are the tile being computed (x, nb^2), the
// diagonal tile (d, nb(nb+1)/2, plus nb reciprocals) and 2 nb operand values. The upper case is the
// lower algorithm on the conjugate transpose: element (i, j) of "L" is read from (j, i) of U, conjugated.
// Register tiles are scalar variables named by their position (x_3_1), so no local memory is used.
#include "codegen/cholesky/interleaved.hpp"
#include "codegen/cholesky/cooperative.hpp"

#include "codegen/common.hpp"
#include "codegen/prelude.hpp"
#include "codegen/source_writer.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace batchsolve::codegen::cholesky {

std::string interleaved_prelude(Precision precision, bool wide_index, int n) {
    std::ostringstream p;
    p << codegen::kernel_prelude(precision);
    p << "typedef " << (wide_index ? "long long" : "int") << " idx_t;  // element offsets within one chunk\n";
    p << "constexpr int N = " << n << ";  // matrix order\n\n";
    return p.str();
}

std::string interleaved_opaque(bool wide_index) { return wide_index ? "BS_OPAQUE_I64" : "BS_OPAQUE_I32"; }

std::string interleaved_locate_code(bool const_a, bool with_b, const std::string& indent) {
    std::ostringstream l;
    l << indent << "const int chunk_index = mat / chunk;\n";
    l << indent << "const int lane = mat - chunk_index * chunk;\n";
    l << indent << "const int rest = count - chunk_index * chunk;\n";
    l << indent << "const idx_t w = rest < chunk ? rest : chunk;  // elements between (i, j) and (i + 1, j)\n";
    l << indent << (const_a ? "const T* a" : "T* a") << " = a_batch + (long long)chunk_index * chunk * (N * N) + lane;\n";
    if (with_b) l << indent << "T* b = b_batch + (long long)chunk_index * chunk * N * nrhs + lane;\n";
    return l.str();
}

namespace {

constexpr int max_n = codegen::max_interleaved_generator_n;
using codegen::is_complex;
using codegen::words_per_element;

// An index that is a compile-time literal (full unrolling, the ragged tile) or a loop variable.
struct Ix {
    bool literal = true;
    int value = 0;
    std::string name;
};
Ix lit(int v) { return Ix{true, v, ""}; }
Ix var(const std::string& name) { return Ix{false, 0, name}; }

// A linear expression sum(coef * variable) + constant, printed without noise ("tk * 8 + 3").
struct Lin {
    int constant = 0;
    std::vector<std::pair<std::string, int>> terms;
    bool literal() const { return terms.empty(); }
    std::string str() const {
        std::string s;
        for (const auto& [name, coef] : terms) {
            if (!s.empty()) s += " + ";
            s += coef == 1 ? name : name + " * " + std::to_string(coef);
        }
        if (constant != 0 || s.empty()) {
            if (!s.empty()) s += constant < 0 ? " - " + std::to_string(-constant) : " + " + std::to_string(constant);
            else s = std::to_string(constant);
        }
        return s;
    }
};
Lin lin(int c) { Lin l; l.constant = c; return l; }
Lin operator+(Lin l, int c) { l.constant += c; return l; }
Lin operator+(Lin a, const Lin& b) {
    a.constant += b.constant;
    for (const auto& t : b.terms) {
        auto same = std::find_if(a.terms.begin(), a.terms.end(), [&](const auto& u) { return u.first == t.first; });
        if (same == a.terms.end()) a.terms.push_back(t);
        else if ((same->second += t.second) == 0) a.terms.erase(same);
    }
    return a;
}
Lin times(const Ix& i, int coef) {
    Lin l;
    if (coef == 0) return l;
    if (i.literal) l.constant = i.value * coef;
    else l.terms.push_back({i.name, coef});
    return l;
}

// "k * w" written the short way.
std::string scaled(long long k, const std::string& w) {
    if (k == 0) return "0";
    if (k == 1) return w;
    return std::to_string(k) + " * " + w;
}
std::string scaled_w(long long k) { return scaled(k, "w"); }

// Where a tile's elements are: a literal element offset from a named pointer, or a pointer
// variable computed once per tile operation when the tile's position is a loop variable.
struct TileRef {
    std::string ptr;
    std::string stride;  // this tile's copy of w
};

class Generator {
public:
    explicit Generator(const InterleavedKernelSpec& spec)
        : s_(spec), n_(spec.n), nb_(spec.config.nb), tf_(spec.n / spec.config.nb), r_(spec.n % spec.config.nb),
          complex_(is_complex(spec.precision)), upper_(spec.uplo == Uplo::upper), full_(spec.config.full_unroll) {
        const bool single = spec.precision == Precision::s || spec.precision == Precision::c;
        real_ = single ? "float" : "double";
        scalar_ = complex_ ? "bs_complex" : real_;
        one_ = single ? "1.0f" : "1.0";
        sqrt_ = single ? "sqrtf" : "sqrt";
        rsqrt_ = single ? "rsqrtf" : "rsqrt";
    }

    // The body function alone (interleaved_body_function), with `locate` in place of the chunk arithmetic.
    std::string body(const std::function<std::string(const std::string&)>& locate) {
        locate_override_ = locate;
        switch (s_.routine) {
            case Routine::potrf: return potrf_function();
            case Routine::potrs: return potrs_function();
            case Routine::posv: return posv_function();
        }
        return "";
    }

    codegen::KernelSource generate() {
        codegen::KernelSource k;
        k.kernel_name = interleaved_kernel_name(s_);
        std::ostringstream src;
        src << header_comment() << prelude();
        switch (s_.routine) {
            case Routine::potrf: src << potrf_function(); break;
            case Routine::potrs: src << potrs_function(); break;
            case Routine::posv: src << posv_function(); break;
        }
        src << kernel_wrapper(k.kernel_name);
        k.source = src.str();
        if (s_.config.fast_math) k.options.push_back("--use_fast_math");
        if (s_.config.max_registers > 0) k.options.push_back("--maxrregcount=" + std::to_string(s_.config.max_registers));
        return k;
    }

private:
    // ---- text output -----------------------------------------------------------------------------
    void line(const std::string& text) { out_.line(text); }
    void open(const std::string& head) { out_.open(head); }
    void close() { out_.close(); }

    std::string reg(char tile, int r, int c) {
        std::string name = std::string(1, tile) + "_" + std::to_string(r) + "_" + std::to_string(c);
        scalars_.insert(name);
        return name;
    }
    std::string recip(int j) {
        std::string name = "dr_" + std::to_string(j);
        reals_.insert(name);
        return name;
    }
    std::string fresh(const char* stem) { return stem + std::to_string(out_.next_id()); }

    // ---- element access ----------------------------------------------------------------------------
    // Offset (in elements of one matrix, before scaling by the chunk width w) of the tile whose
    // "lower" coordinates are tile row ti, tile column tj; the upper case stores L(i, j) at (j, i).
    Lin a_tile_offset(const Ix& ti, const Ix& tj) const {
        return upper_ ? times(ti, nb_ * n_) + times(tj, nb_) : times(tj, nb_ * n_) + times(ti, nb_);
    }
    int a_elem_offset(int r, int c) const { return upper_ ? r * n_ + c : c * n_ + r; }

    // Tile reference on `base` (a pointer variable) at `offset` elements (times w).
    //
    // Every tile gets its own copy of the stride w, passed through BS_OPAQUE_I32/I64 (an empty asm)
    // before the tile's loads and again before its stores: the compiler then cannot share the element
    // offsets k * w between the loads and the stores of a tile (or between tiles) and keep them live
    // across a whole tile operation, which made whole-matrix kernels spill; an offset costs one
    // multiply-add to recompute.
    TileRef tile(const std::string& base, const Lin& offset, bool writable) {
        const std::string id = std::to_string(out_.next_id());
        const std::string p = "p" + id, w = "w" + id;
        const std::string off = offset.literal() ? scaled_w(offset.constant) : "(" + offset.str() + ") * w";
        line(std::string(writable ? "" : "const ") + "T* " + p + " = " + base + (off == "0" ? "" : " + " + off) + ";");
        line("idx_t " + w + " = w;");
        line(interleaved_opaque(s_.wide_index) + "(" + w + ");");
        return TileRef{p, w};
    }
    void fence_address(const TileRef& t) { line(interleaved_opaque(s_.wide_index) + "(" + t.stride + ");"); }
    std::string at(const TileRef& t, int off) const { return t.ptr + "[" + scaled(off, t.stride) + "]"; }

    // Load expression of L(r, c) of an A tile (lower coordinates); conj_lower asks for conj(L(r, c)).
    std::string load_a(const TileRef& t, int r, int c, bool conj_lower = false) const {
        const std::string e = at(t, a_elem_offset(r, c));
        return complex_ && (upper_ != conj_lower) ? "bs_conj(" + e + ")" : e;
    }
    std::string load_a_real(const TileRef& t, int r) const {  // real part of a diagonal entry
        const std::string e = at(t, a_elem_offset(r, r));
        return complex_ ? "bs_real(" + e + ")" : e;
    }
    void store_a(const TileRef& t, int r, int c, const std::string& value) {
        line(at(t, a_elem_offset(r, c)) + " = " + (complex_ && upper_ ? "bs_conj(" + value + ")" : value) + ";");
    }
    std::string conj(const std::string& v) const { return complex_ ? "bs_conj(" + v + ")" : v; }

    // ---- loops over tiles: C loops (partial unrolling) or expanded (full unrolling) --------------
    void loop(const std::string& name, const Lin& lo, const Lin& hi, bool down, const std::function<void(const Ix&)>& f) {
        if (lo.literal() && hi.literal()) {
            if (lo.constant >= hi.constant) return;
            if (full_) {
                for (int i = 0; i < hi.constant - lo.constant; ++i) f(lit(down ? hi.constant - 1 - i : lo.constant + i));
                return;
            }
        }
        if (down) open("for (int " + name + " = " + (hi + -1).str() + "; " + name + " >= " + lo.str() + "; --" + name + ")");
        else open("for (int " + name + " = " + lo.str() + "; " + name + " < " + hi.str() + "; ++" + name + ")");
        f(var(name));
        close();
    }

    // ---- tile transfers ---------------------------------------------------------------------------
    void load_lower(char d, const TileRef& t, int s) {
        for (int c = 0; c < s; ++c)
            for (int r = c; r < s; ++r) line(reg(d, r, c) + " = " + load_a(t, r, c) + ";");
    }
    void store_lower(char d, const TileRef& t, int s) {
        fence_address(t);
        for (int c = 0; c < s; ++c)
            for (int r = c; r < s; ++r) store_a(t, r, c, reg(d, r, c));
    }
    void load_full(char x, const TileRef& t, int sr, int sc) {
        for (int c = 0; c < sc; ++c)
            for (int r = 0; r < sr; ++r) line(reg(x, r, c) + " = " + load_a(t, r, c) + ";");
    }
    void store_full(char x, const TileRef& t, int sr, int sc) {
        fence_address(t);
        for (int c = 0; c < sc; ++c)
            for (int r = 0; r < sr; ++r) store_a(t, r, c, reg(x, r, c));
    }

    // ---- tile operations ----------------------------------------------------------------------------
    // d := chol(d) in place (s x s, lower); with keep_reciprocals, 1 / d(j, j) stays in dr_j for a
    // following trsm. A pivot not in (0, Inf) (or NaN) records its 1-based global column and ends this
    // matrix (the thread returns; tiles already stored keep their partial results, as in LAPACK).
    void potrf_tile(char d, int s, const Lin& col0, bool keep_reciprocals) {
        for (int j = 0; j < s; ++j) {
            const std::string djj = reg(d, j, j);
            const std::string piv = complex_ ? "bs_real(" + djj + ")" : djj;
            line("if (!bs_pivot_ok(" + piv + ")) { info[mat] = " + (col0 + (j + 1)).str() + "; return; }");
            open("");
            if (s_.config.fast_math) {
                line("const R rj = " + rsqrt_ + "(" + piv + ");");
                line(djj + " = " + real_value(piv + " * rj") + ";");
            } else {
                line("const R sj = " + sqrt_ + "(" + piv + ");");
                line("const R rj = " + one_ + " / sj;");
                line(djj + " = " + real_value("sj") + ";");
            }
            if (keep_reciprocals) line(recip(j) + " = rj;");
            for (int i = j + 1; i < s; ++i) line(reg(d, i, j) + " *= rj;");
            close();
            for (int c = j + 1; c < s; ++c)
                for (int r = c; r < s; ++r)
                    line(reg(d, r, c) + " -= " + reg(d, r, j) + " * " + conj(reg(d, c, j)) + ";");
        }
    }
    std::string real_value(const std::string& v) const { return complex_ ? "bs_from_real(" + v + ")" : v; }

    // x := x * inv(L)^H with L = the factored diagonal tile d (sc x sc) still in registers.
    void trsm_tile_registers(char x, int sr, int sc, char d) {
        for (int c = 0; c < sc; ++c) {
            for (int p = 0; p < c; ++p)
                for (int r = 0; r < sr; ++r)
                    line(reg(x, r, c) + " -= " + reg(x, r, p) + " * " + conj(reg(d, c, p)) + ";");
            for (int r = 0; r < sr; ++r) line(reg(x, r, c) + " *= " + recip(c) + ";");
        }
    }

    // x := x * inv(L)^H with L = the (finished) diagonal tile (tj, tj) read from memory, one row at a time.
    void trsm_tile_memory(char x, int sr, int sc, const Ix& tj) {
        open("");
        const TileRef t = tile("a", a_tile_offset(tj, tj), false);
        for (int c = 0; c < sc; ++c) {
            open("");
            for (int p = 0; p < c; ++p) line("const T l" + std::to_string(p) + " = " + load_a(t, c, p) + ";");
            line("const R rc = " + one_ + " / " + load_a_real(t, c) + ";");
            for (int p = 0; p < c; ++p)
                for (int r = 0; r < sr; ++r)
                    line(reg(x, r, c) + " -= " + reg(x, r, p) + " * " + conj("l" + std::to_string(p)) + ";");
            for (int r = 0; r < sr; ++r) line(reg(x, r, c) + " *= rc;");
            close();
        }
        close();
    }

    // d -= x * x^H (d: s x s lower, x: s x sc, both in registers).
    void syrk_tile_registers(char d, int s, char x, int sc) {
        for (int c = 0; c < s; ++c)
            for (int r = c; r < s; ++r)
                for (int p = 0; p < sc; ++p)
                    line(reg(d, r, c) + " -= " + reg(x, r, p) + " * " + conj(reg(x, c, p)) + ";");
    }

    // d -= A(ti, tm) * A(ti, tm)^H, the operand (s x sp) streamed from memory column by column.
    void syrk_tile_memory(char d, int s, const Ix& ti, const Ix& tm, int sp) {
        open("");
        const TileRef t = tile("a", a_tile_offset(ti, tm), false);
        for (int p = 0; p < sp; ++p) {
            open("");
            for (int r = 0; r < s; ++r) line("const T u" + std::to_string(r) + " = " + load_a(t, r, p) + ";");
            for (int c = 0; c < s; ++c)
                for (int r = c; r < s; ++r)
                    line(reg(d, r, c) + " -= u" + std::to_string(r) + " * " + conj("u" + std::to_string(c)) + ";");
            close();
        }
        close();
    }

    // x -= A(ti, tm) * A(tj, tm)^H (x: sr x sc; operands sr x sp and sc x sp streamed from memory).
    void gemm_tile_memory(char x, int sr, int sc, const Ix& ti, const Ix& tj, const Ix& tm, int sp) {
        open("");
        const TileRef tu = tile("a", a_tile_offset(ti, tm), false);
        const TileRef tv = tile("a", a_tile_offset(tj, tm), false);
        for (int p = 0; p < sp; ++p) {
            open("");
            for (int r = 0; r < sr; ++r) line("const T u" + std::to_string(r) + " = " + load_a(tu, r, p) + ";");
            for (int c = 0; c < sc; ++c) line("const T v" + std::to_string(c) + " = " + load_a(tv, c, p) + ";");
            for (int c = 0; c < sc; ++c)
                for (int r = 0; r < sr; ++r)
                    line(reg(x, r, c) + " -= u" + std::to_string(r) + " * " + conj("v" + std::to_string(c)) + ";");
            close();
        }
        close();
    }

    // ---- the three looking orders (lower coordinates; full tiles 0..tf-1, ragged tile tf of size r) --
    Lin tile_col(const Ix& t) const { return times(t, nb_); }
    Lin plus1(const Ix& t) const { return times(t, 1) + 1; }
    // Whether a trsm follows the factorisation of diagonal tile tk (of size sk).
    bool has_tiles_below(const Ix& tk, int sk) const {
        if (sk != nb_) return false;
        return !tk.literal || tk.value + 1 < tf_ || r_ > 0;
    }

    void potrf_right_looking() {
        auto step = [&](const Ix& tk, int sk) {
            line("// step " + (tk.literal ? std::to_string(tk.value) : tk.name) + ": factor diagonal tile, solve its column, update the trailing matrix");
            open("");
            const TileRef td = tile("a", a_tile_offset(tk, tk), true);
            load_lower('d', td, sk);
            potrf_tile('d', sk, tile_col(tk), has_tiles_below(tk, sk));
            store_lower('d', td, sk);
            close();
            if (sk != nb_) return;  // the ragged last tile has nothing below or to the right
            auto solve = [&](const Ix& ti, int si) {
                open("");
                const TileRef tx = tile("a", a_tile_offset(ti, tk), true);
                load_full('x', tx, si, nb_);
                trsm_tile_registers('x', si, nb_, 'd');
                store_full('x', tx, si, nb_);
                close();
            };
            loop("ti", plus1(tk), lin(tf_), false, [&](const Ix& ti) { solve(ti, nb_); });
            if (r_ > 0) solve(lit(tf_), r_);
            auto update_diag = [&](const Ix& tj, int sj) {
                open("");
                const TileRef te = tile("a", a_tile_offset(tj, tj), true);
                load_lower('e', te, sj);
                syrk_tile_memory('e', sj, tj, tk, nb_);
                store_lower('e', te, sj);
                close();
            };
            auto update_off = [&](const Ix& ti, int si, const Ix& tj) {
                open("");
                const TileRef tx = tile("a", a_tile_offset(ti, tj), true);
                load_full('x', tx, si, nb_);
                gemm_tile_memory('x', si, nb_, ti, tj, tk, nb_);
                store_full('x', tx, si, nb_);
                close();
            };
            loop("tj", plus1(tk), lin(tf_), false, [&](const Ix& tj) {
                update_diag(tj, nb_);
                loop("ti", plus1(tj), lin(tf_), false, [&](const Ix& ti) { update_off(ti, nb_, tj); });
                if (r_ > 0) update_off(lit(tf_), r_, tj);
            });
            if (r_ > 0) update_diag(lit(tf_), r_);
        };
        loop("tk", lin(0), lin(tf_), false, [&](const Ix& tk) { step(tk, nb_); });
        if (r_ > 0) step(lit(tf_), r_);
    }

    void potrf_left_looking() {
        auto step = [&](const Ix& tk, int sk) {
            line("// step " + (tk.literal ? std::to_string(tk.value) : tk.name) + ": update tile column from the left, factor it");
            open("");
            const TileRef td = tile("a", a_tile_offset(tk, tk), true);
            load_lower('d', td, sk);
            loop("tm", lin(0), times(tk, 1), false, [&](const Ix& tm) { syrk_tile_memory('d', sk, tk, tm, nb_); });
            potrf_tile('d', sk, tile_col(tk), has_tiles_below(tk, sk));
            store_lower('d', td, sk);
            close();
            if (sk != nb_) return;
            auto panel_tile = [&](const Ix& ti, int si) {
                open("");
                const TileRef tx = tile("a", a_tile_offset(ti, tk), true);
                load_full('x', tx, si, nb_);
                loop("tm", lin(0), times(tk, 1), false,
                     [&](const Ix& tm) { gemm_tile_memory('x', si, nb_, ti, tk, tm, nb_); });
                trsm_tile_registers('x', si, nb_, 'd');
                store_full('x', tx, si, nb_);
                close();
            };
            loop("ti", plus1(tk), lin(tf_), false, [&](const Ix& ti) { panel_tile(ti, nb_); });
            if (r_ > 0) panel_tile(lit(tf_), r_);
        };
        loop("tk", lin(0), lin(tf_), false, [&](const Ix& tk) { step(tk, nb_); });
        if (r_ > 0) step(lit(tf_), r_);
    }

    void potrf_top_looking() {
        auto step = [&](const Ix& tk, int sk) {
            line("// step " + (tk.literal ? std::to_string(tk.value) : tk.name) + ": solve tile row from the rows above, then its diagonal tile");
            open("");
            const TileRef td = tile("a", a_tile_offset(tk, tk), true);
            load_lower('d', td, sk);
            loop("tj", lin(0), times(tk, 1), false, [&](const Ix& tj) {
                open("");
                const TileRef tx = tile("a", a_tile_offset(tk, tj), true);
                load_full('x', tx, sk, nb_);
                loop("tm", lin(0), times(tj, 1), false,
                     [&](const Ix& tm) { gemm_tile_memory('x', sk, nb_, tk, tj, tm, nb_); });
                trsm_tile_memory('x', sk, nb_, tj);
                store_full('x', tx, sk, nb_);
                syrk_tile_registers('d', sk, 'x', nb_);
                close();
            });
            potrf_tile('d', sk, tile_col(tk), false);
            store_lower('d', td, sk);
            close();
        };
        loop("tk", lin(0), lin(tf_), false, [&](const Ix& tk) { step(tk, nb_); });
        if (r_ > 0) step(lit(tf_), r_);
    }

    void potrf_code() {
        switch (s_.config.looking) {
            case Looking::right: potrf_right_looking(); break;
            case Looking::left: potrf_left_looking(); break;
            case Looking::top: potrf_top_looking(); break;
        }
    }

    // ---- triangular solves with the factor: L Y = B, then L^H X = Y, nrhs_block columns at a time --
    std::vector<TileRef> b_tiles(const Ix& ti) {
        std::vector<TileRef> q;
        for (int c = 0; c < nrb_; ++c) q.push_back(tile("bc" + std::to_string(c), times(ti, nb_), true));
        return q;
    }
    void load_y(const std::vector<TileRef>& q, int s) {
        for (int i = 0; i < s; ++i)
            for (int c = 0; c < nrb_; ++c) line(reg('y', i, c) + " = " + at(q[c], i) + ";");
    }
    void store_y(const std::vector<TileRef>& q, int s) {
        for (int c = 0; c < nrb_; ++c) {
            fence_address(q[c]);
            std::string guard = c == 0 ? "" : "if (v" + std::to_string(c) + ") ";
            for (int i = 0; i < s; ++i) line(guard + at(q[c], i) + " = " + reg('y', i, c) + ";");
        }
    }

    void forward_tile(const Ix& ti, int si) {
        line("// forward substitution, tile row " + (ti.literal ? std::to_string(ti.value) : ti.name));
        open("");
        const std::vector<TileRef> q = b_tiles(ti);
        load_y(q, si);
        loop("tm", lin(0), times(ti, 1), false, [&](const Ix& tm) {
            open("");
            const TileRef tl = tile("a", a_tile_offset(ti, tm), false);
            const std::vector<TileRef> qm = b_tiles(tm);
            for (int p = 0; p < nb_; ++p) {
                open("");
                for (int c = 0; c < nrb_; ++c) line("const T z" + std::to_string(c) + " = " + at(qm[c], p) + ";");
                for (int i = 0; i < si; ++i) {
                    line("const T l" + std::to_string(i) + " = " + load_a(tl, i, p) + ";");
                    for (int c = 0; c < nrb_; ++c)
                        line(reg('y', i, c) + " -= l" + std::to_string(i) + " * z" + std::to_string(c) + ";");
                }
                close();
            }
            close();
        });
        open("");
        const TileRef td = tile("a", a_tile_offset(ti, ti), false);
        for (int i = 0; i < si; ++i) {
            open("");
            for (int p = 0; p < i; ++p) {
                line("const T l" + std::to_string(p) + " = " + load_a(td, i, p) + ";");
                for (int c = 0; c < nrb_; ++c)
                    line(reg('y', i, c) + " -= l" + std::to_string(p) + " * " + reg('y', p, c) + ";");
            }
            line("const R rc = " + one_ + " / " + load_a_real(td, i) + ";");
            for (int c = 0; c < nrb_; ++c) line(reg('y', i, c) + " *= rc;");
            close();
        }
        close();
        store_y(q, si);
        close();
    }

    void backward_tile(const Ix& ti, int si) {
        line("// backward substitution, tile row " + (ti.literal ? std::to_string(ti.value) : ti.name));
        open("");
        const std::vector<TileRef> q = b_tiles(ti);
        load_y(q, si);
        auto below = [&](const Ix& tm, int sm) {
            open("");
            const TileRef tl = tile("a", a_tile_offset(tm, ti), false);
            const std::vector<TileRef> qm = b_tiles(tm);
            for (int p = 0; p < sm; ++p) {
                open("");
                for (int c = 0; c < nrb_; ++c) line("const T z" + std::to_string(c) + " = " + at(qm[c], p) + ";");
                for (int i = 0; i < si; ++i) {
                    line("const T l" + std::to_string(i) + " = " + load_a(tl, p, i, true) + ";");
                    for (int c = 0; c < nrb_; ++c)
                        line(reg('y', i, c) + " -= l" + std::to_string(i) + " * z" + std::to_string(c) + ";");
                }
                close();
            }
            close();
        };
        if (!(ti.literal && ti.value == tf_)) {
            loop("tm", plus1(ti), lin(tf_), false, [&](const Ix& tm) { below(tm, nb_); });
            if (r_ > 0) below(lit(tf_), r_);
        }
        open("");
        const TileRef td = tile("a", a_tile_offset(ti, ti), false);
        for (int i = si - 1; i >= 0; --i) {
            open("");
            for (int p = i + 1; p < si; ++p) {
                line("const T l" + std::to_string(p) + " = " + load_a(td, p, i, true) + ";");
                for (int c = 0; c < nrb_; ++c)
                    line(reg('y', i, c) + " -= l" + std::to_string(p) + " * " + reg('y', p, c) + ";");
            }
            line("const R rc = " + one_ + " / " + load_a_real(td, i) + ";");
            for (int c = 0; c < nrb_; ++c) line(reg('y', i, c) + " *= rc;");
            close();
        }
        close();
        store_y(q, si);
        close();
    }

    void potrs_code() {
        nrb_ = s_.config.nrhs_block;
        open("for (int r0 = 0; r0 < nrhs; r0 += " + std::to_string(nrb_) + ")");
        line("T* bc0 = b + (idx_t)r0 * (N * w);");
        for (int c = 1; c < nrb_; ++c) {
            const std::string cs = std::to_string(c);
            line("const bool v" + cs + " = r0 + " + cs + " < nrhs;  // columns past nrhs are computed on a copy, never stored");
            line("T* bc" + cs + " = b + (idx_t)(v" + cs + " ? r0 + " + cs + " : r0) * (N * w);");
        }
        loop("ti", lin(0), lin(tf_), false, [&](const Ix& ti) { forward_tile(ti, nb_); });
        if (r_ > 0) forward_tile(lit(tf_), r_);
        if (r_ > 0) backward_tile(lit(tf_), r_);
        loop("ti", lin(0), lin(tf_), true, [&](const Ix& ti) { backward_tile(ti, nb_); });
        close();
    }

    // ---- whole functions -------------------------------------------------------------------------
    // Chunk arithmetic of batch.hpp (shared with the cooperative kernel): a, b, w for matrix `mat`.
    void locate(bool with_b) {
        if (locate_override_) out_.raw(locate_override_(out_.indentation()));
        else out_.raw(interleaved_locate_code(s_.routine == Routine::potrs, with_b, out_.indentation()));
    }

    std::string declarations() const {
        std::ostringstream d;
        auto list = [&](const std::string& type, const std::set<std::string>& names) {
            std::string cur;
            for (const auto& name : names) {
                if (cur.size() > 90) { d << "  " << type << " " << cur << ";\n"; cur.clear(); }
                cur += (cur.empty() ? "" : ", ") + name;
            }
            if (!cur.empty()) d << "  " << type << " " << cur << ";\n";
        };
        list("T", scalars_);
        list("R", reals_);
        return d.str();
    }

    std::string finish(const std::string& signature) {
        std::string code = signature + " {\n" + declarations() + out_.take() + "}\n\n";
        scalars_.clear(), reals_.clear();
        return code;
    }

    std::string potrf_function() {
        out_.set_indent(1);
        locate(false);
        potrf_code();
        line("info[mat] = 0;");
        return finish("BS_DEVICE void bs_potrf_body(T* __restrict__ a_batch, int* __restrict__ info, int count, int chunk, int mat)");
    }
    std::string potrs_function() {
        out_.set_indent(1);
        locate(true);
        potrs_code();
        return finish("BS_DEVICE void bs_potrs_body(const T* __restrict__ a_batch, T* __restrict__ b_batch, int nrhs, int count, int chunk, int mat)");
    }
    std::string posv_function() {
        out_.set_indent(1);
        locate(true);
        line("// factor; a failed matrix returns before B is touched");
        potrf_code();
        line("info[mat] = 0;");
        line("// solve with the factor just written");
        potrs_code();
        return finish("BS_DEVICE void bs_posv_body(T* __restrict__ a_batch, T* __restrict__ b_batch, int nrhs, int* __restrict__ info, int count, int chunk, int mat)");
    }

    std::string kernel_wrapper(const std::string& name) const {
        std::ostringstream k;
        const std::string tpb = std::to_string(s_.config.threads_per_block);
        k << "#ifndef BS_HOST_EMULATION\n";
        k << "extern \"C\" __global__ void __launch_bounds__(" << tpb << ") " << name;
        switch (s_.routine) {
            case Routine::potrf:
                k << "(T* a, int* info, int count, int chunk) {\n";
                k << "  const int mat = blockIdx.x * blockDim.x + threadIdx.x;\n";
                k << "  if (mat < count) bs_potrf_body(a, info, count, chunk, mat);\n";
                break;
            case Routine::potrs:
                k << "(const T* a, T* b, int nrhs, int count, int chunk) {\n";
                k << "  const int mat = blockIdx.x * blockDim.x + threadIdx.x;\n";
                k << "  if (mat < count) bs_potrs_body(a, b, nrhs, count, chunk, mat);\n";
                break;
            case Routine::posv:
                k << "(T* a, T* b, int nrhs, int* info, int count, int chunk) {\n";
                k << "  const int mat = blockIdx.x * blockDim.x + threadIdx.x;\n";
                k << "  if (mat < count) bs_posv_body(a, b, nrhs, info, count, chunk, mat);\n";
                break;
        }
        k << "}\n#endif\n";
        return k.str();
    }

    std::string header_comment() const {
        std::ostringstream h;
        const CholeskyConfig& c = s_.config;
        h << "// batchsolve generated kernel: " << to_string(s_.routine) << ", interleaved layout, precision "
          << precision_letter(s_.precision) << ", " << batchsolve::to_string(s_.uplo) << ", n = " << n_ << ", nb = " << nb_
          << " (" << tf_ << (tf_ == 1 ? " full tile" : " full tiles") << (r_ ? " + one of " + std::to_string(r_) : std::string()) << ")";
        if (s_.routine != Routine::potrs) h << ", " << batchsolve::to_string(c.looking) << "-looking";
        h << ", " << (full_ ? "fully unrolled" : "tile loops kept");
        if (s_.routine != Routine::potrf) h << ", " << c.nrhs_block << " right-hand side(s) per pass";
        h << (c.fast_math ? ", fast math" : ", IEEE sqrt/division") << ".\n";
        h << "// One thread per matrix; element (i, j) of matrix k lives at chunk base + (j * n + i) * w + lane,\n"
             "// w the width of k's chunk, so a warp's accesses to one element are coalesced.\n";
        return h.str();
    }

    std::string prelude() const { return interleaved_prelude(s_.precision, s_.wide_index, n_); }

    const InterleavedKernelSpec& s_;
    const int n_, nb_, tf_, r_;
    const bool complex_, upper_, full_;
    std::string real_, scalar_, one_, sqrt_, rsqrt_;
    int nrb_ = 1;
    std::function<std::string(const std::string&)> locate_override_;  // body(): the caller's locate code
    codegen::SourceWriter out_{1};  // the body of the function being written
    std::set<std::string> scalars_, reals_;
};

}  // namespace

std::string interleaved_spec_problem(const InterleavedKernelSpec& spec) {
    const CholeskyConfig& c = spec.config;
    const int n = spec.n;
    // A kernel is one phase: posv_interleaved splits a two-kernel posv into its two specs first.
    if (c.solve_warps_per_matrix != 0 || c.solve_nb != 0)
        return "solve_warps_per_matrix: 0 here (with solve_nb: posv's two-kernel form, which runs two specs)";
    if (is_cooperative(spec)) return interleaved_coop_spec_problem(spec);
    if (n < 1 || n > max_n) return "n: 1 <= n <= " + std::to_string(max_n) + " (got " + std::to_string(n) + ")";
    if (c.nb < 1 || c.nb > n)
        return "nb: 1 <= nb <= n = " + std::to_string(n) + " (got " + std::to_string(c.nb) + ")";
    if (c.full_unroll && n > max_full_unroll_n)
        return "full_unroll: only for n <= " + std::to_string(max_full_unroll_n) + " (got n = " + std::to_string(n) + ")";
    if (c.full_unroll && (n + c.nb - 1) / c.nb > max_full_unroll_tiles)
        return "full_unroll: only for at most " + std::to_string(max_full_unroll_tiles) +
               " tiles per dimension (got ceil(n / nb) = " + std::to_string((n + c.nb - 1) / c.nb) + ")";
    if (c.threads_per_block < 32 || c.threads_per_block > 1024 || c.threads_per_block % 32 != 0)
        return "threads_per_block: a multiple of 32 in [32, 1024] (got " + std::to_string(c.threads_per_block) + ")";
    if (c.matrices_per_block != 0)
        return "matrices_per_block: 0 for the interleaved kernels (it is threads_per_block)";
    if (c.grid_blocks_per_sm != 0)
        return "grid_blocks_per_sm: 0 for the one-thread interleaved kernels (only the cooperative ones loop over "
               "groups)";
    if (c.rows_per_thread != 0) return "rows_per_thread: 0 for the interleaved kernels (one thread per matrix)";
    if (c.tensor_cores) return "tensor_cores: false for the interleaved kernels (a staged column-major option)";
    if (c.threads_per_row != 0) return "threads_per_row: 0 for the interleaved kernels (one thread per matrix)";
    if (spec.routine != Routine::potrf && (c.nrhs_block < 1 || c.nrhs_block > max_nrhs_block))
        return "nrhs_block: 1 <= nrhs_block <= " + std::to_string(max_nrhs_block) + " (got " +
               std::to_string(c.nrhs_block) + ")";
    if (c.max_registers != 0 && (c.max_registers < 24 || c.max_registers > 255))
        return "max_registers: 0 or 24..255 (got " + std::to_string(c.max_registers) + ")";
    if (c.chunk_size < 0) return "chunk_size: >= 0 (got " + std::to_string(c.chunk_size) + ")";
    const int regs = estimated_tile_registers(spec.routine, spec.precision, n, c);
    if (regs > max_tile_registers)
        return "nb: the tiles of nb = " + std::to_string(c.nb) + " need ~" + std::to_string(regs) +
               " registers per thread, more than " + std::to_string(max_tile_registers) + " (twice the register file)";
    return "";
}

void check_interleaved_spec(const InterleavedKernelSpec& spec, const char* routine) {
    const std::string problem = interleaved_spec_problem(spec);
    if (problem.empty()) return;
    const auto colon = problem.find(':');
    const std::string field = problem.substr(0, colon);
    const std::string why = problem.substr(colon + 2);
    throw InvalidArgument(routine, field == "n" ? "a.rows" : "config." + field, why);
}

std::string interleaved_kernel_name(const InterleavedKernelSpec& spec) {
    const CholeskyConfig& c = spec.config;
    if (is_cooperative(spec)) return interleaved_coop_kernel_name(spec);
    std::string name = std::string(to_string(spec.routine)) + "_interleaved_" + precision_letter(spec.precision) + "_" +
                       batchsolve::to_string(spec.uplo) + "_n" + std::to_string(spec.n) + "_nb" + std::to_string(c.nb);
    if (spec.routine != Routine::potrs) name += std::string("_") + batchsolve::to_string(c.looking);
    name += c.full_unroll ? "_unrolled" : "_partial";
    if (spec.routine != Routine::potrf) name += "_r" + std::to_string(c.nrhs_block);
    name += "_t" + std::to_string(c.threads_per_block);
    if (c.fast_math) name += "_fast";
    if (c.max_registers > 0) name += "_reg" + std::to_string(c.max_registers);
    if (spec.wide_index) name += "_i64";
    return name;
}

codegen::KernelSource generate_interleaved_kernel(const InterleavedKernelSpec& spec) {
    if (is_cooperative(spec)) return generate_interleaved_coop_kernel(spec);
    check_interleaved_spec(spec, "generate_interleaved_kernel");
    return Generator(spec).generate();
}

std::string interleaved_body_function(const InterleavedKernelSpec& spec,
                                      const std::function<std::string(const std::string&)>& locate) {
    check_interleaved_spec(spec, "interleaved_body_function");
    return Generator(spec).body(locate);
}

bool interleaved_needs_wide_index(int n, int nrhs, int count, int chunk) {
    const long long width = std::min(chunk, count);
    const long long rows = n, cols = std::max(n, nrhs);
    return rows * cols * width + width >= (1LL << 31);
}

int estimated_tile_registers(Routine routine, Precision precision, int n, const CholeskyConfig& config) {
    const int nb = config.nb > 0 ? std::min(config.nb, n) : n;
    int factor = nb * (nb + 1) / 2 + nb;  // diagonal tile + reciprocals
    if (nb < n) factor += nb * nb + 2 * nb;  // the tile being computed + one column of each operand
    const int nrb = std::max(config.nrhs_block, 1);
    const int solve = nb * nrb + nb + nrb;  // solution tile + one column of L + one row of the solution
    int live = factor;
    if (routine == Routine::potrs) live = solve;
    if (routine == Routine::posv) live = std::max(factor, solve);
    return live * words_per_element(precision);
}

CholeskyConfig default_interleaved_config(Routine routine, Precision precision, int n) {
    CholeskyConfig c;
    c.looking = Looking::top;
    c.threads_per_block = n <= 32 ? 128 : 64;
    c.nrhs_block = 1;
    // potrf: the whole matrix in registers while its lower triangle fits comfortably (<= 200
    // registers: n <= 18 in s, n <= 12 in d), else the largest tile whose working set (d, x and two
    // streamed columns) stays under 170 registers (nb = 8 in s, 6 in d and c, 4 in z); no spills on
    // sm_90 with CUDA 13.0 for these (see the compile test's report).
    const int budget_whole = 200, budget_tiles = 170;
    CholeskyConfig whole = c;
    whole.nb = n;
    if (estimated_tile_registers(Routine::potrf, precision, n, whole) <= budget_whole) {
        c.nb = n;
    } else {
        c.nb = 1;
        for (int nb = 2; nb < n; ++nb) {
            CholeskyConfig t = c;
            t.nb = nb;
            if (estimated_tile_registers(Routine::potrf, precision, n, t) <= budget_tiles) c.nb = nb;
        }
    }
    c.full_unroll = n <= 16;
    if (routine == Routine::potrs) c.nb = std::min(n, 16);  // the solves keep one nb x nrhs_block tile
    return c;
}

TwoKernelPosvConfigs split_two_kernel_posv(const CholeskyConfig& posv) {
    TwoKernelPosvConfigs out;
    out.factor = posv;
    out.factor.solve_warps_per_matrix = 0, out.factor.solve_nb = 0;
    out.solve.nb = posv.solve_nb;
    out.solve.warps_per_matrix = posv.solve_warps_per_matrix;
    out.solve.nrhs_block = posv.nrhs_block;
    out.solve.fast_math = posv.fast_math;
    return out;
}

CholeskyConfig resolve_interleaved_config(Routine routine, Precision precision, int n, const CholeskyConfig& config) {
    const CholeskyConfig d = default_interleaved_config(routine, precision, std::max(n, 1));
    CholeskyConfig c = config;
    if (routine == Routine::potrs && c.warps_per_matrix > 0) {  // the cooperative kernel: block shape is W warps
        if (c.nb <= 0) c.nb = default_coop_nb(std::max(n, 1), c.warps_per_matrix);
        c.threads_per_block = 32 * c.warps_per_matrix;
        if (c.nrhs_block <= 0) c.nrhs_block = d.nrhs_block;
        return c;
    }
    if (routine != Routine::potrs && c.warps_per_matrix > 0) {  // cooperative potrf, posv: W warps, left-looking only
        if (c.nb <= 0) c.nb = default_coop_potrf_nb(precision, std::max(n, 1), c.warps_per_matrix), c.full_unroll = false;
        c.threads_per_block = 32 * c.warps_per_matrix;
        c.looking = Looking::left;
        if (c.nrhs_block <= 0) c.nrhs_block = d.nrhs_block;
        return c;
    }
    if (c.nb <= 0) c.nb = d.nb, c.looking = d.looking, c.full_unroll = d.full_unroll;
    if (c.threads_per_block <= 0) c.threads_per_block = d.threads_per_block;
    if (c.nrhs_block <= 0) c.nrhs_block = d.nrhs_block;
    return c;
}

}  // namespace batchsolve::codegen::cholesky
