// Source generators of the cooperative interleaved potrs, potrf and fused posv kernels (see
// codegen/cholesky/cooperative.hpp).
//
// potrs. The n rows of each system are cut into T = ceil(n / nb) tile rows (the last one
// narrower when nb does not divide n); warp w of the block keeps tile rows w, w + W, w + 2W, ...
// ("slots" 0, 1, 2, ...) of nrhs_block right-hand sides in registers, one system per lane. Forward
// substitution, step I: the warp holding tile row I solves L_II y_I = b_I and writes y_I to shared
// memory (buffer I % 2); after one __syncthreads every warp subtracts L_JI y_I from each tile row
// J > I it holds (L_JI read from global memory, y_I from shared memory). Backward substitution runs
// the same steps from I = T - 1 down with L_II^H and y_J -= L_IJ^H x_I for J < I. The last tile row's
// forward and backward solves are one step (same warp, nothing in between), and step 0 of the
// backward pass publishes nothing, so a group of right-hand sides costs 2T - 2 barriers. Publication
// k writes buffer k % 2 and is read only between barriers k and k + 1, so buffer k % 2 is free again
// after barrier k + 1 -- one barrier per step suffices (the publication count per group, 2T - 2, is
// even, so the parity also runs on across groups). Forward step I and backward step I both use
// buffer I % 2. The upper case (A = U^H U) is the lower algorithm with L(i, j) = conj(U(j, i)).
//
// The tile a slot holds is known only at run time (it depends on the warp), so each slot's code is
// guarded by warp-uniform conditions on its tile row; the ragged last tile row can only sit in the
// last slot, which gets a second copy of its code for that size. Idle lanes (systems past count)
// skip every guarded block but run the same loops, so they reach every barrier.
//
// potrf. Left-looking over T = ceil(n / nb) tile columns; warp w owns tile rows I = w (mod W) and
// computes every tile of L in them. Step K: (1) the owner of row K forms D = A_KK - sum_{J<K} L_KJ
// L_KJ^H (its own row's tiles, streamed from global memory), factors D in registers, stores L_KK and
// publishes it in shared buffer K % 2 (with 1 / L(j, j) on the diagonal, so the solves multiply) and
// the lane's failure flag in flag buffer K % 2; (2) __syncthreads; (3) every warp, for each owned row
// I > K: X = A_IK - sum_{J<K} L_IJ L_KJ^H (L_IJ its own, L_KJ written by the owner of row K before an
// earlier barrier), X := X L_KK^{-H}, store. Each tile of L is written once and the trailing matrix is
// never rewritten, so the global traffic is the reads of the left-looking updates (L_KJ is the same
// for every warp of the block and mostly hits L1). Step K's publication (buffers K % 2) is read in
// step K, and its buffers were last read in step K - 2 or (the flags, by the owner of K - 1) before
// barrier K - 1, so one barrier per step suffices: T - 1 barriers in all (the last diagonal tile has
// nothing below it). Why not right-looking: the trailing update would rewrite every remaining tile at
// every step (n^3/3 element writes instead of n^2/2), and the rows of a warp are too many to keep in
// registers; top-looking would serialise the rows, since row I needs all rows above it.
//
// Failure (a pivot not in (0, Inf), or NaN): the owner of the diagonal sets info to the 1-based column, leaves
// tile column K unwritten and flags the lane; every warp skips a flagged lane from then on. A failed
// matrix thus keeps L in the tile columns before K and A elsewhere -- exactly what the one-thread
// left-looking kernel leaves -- and never affects its neighbours (the lanes are independent).
//
// posv. One kernel, per group of 32 systems: the potrf steps above (the same writer's text) with the
// forward substitution of the first group of nrhs_block right-hand sides folded in, one
// __syncthreads, the backward substitution of that group, then the potrs solve above (the same
// writer's text) for the other groups in turn (grid.y is 1: the factorisation must run once per
// group of systems). Folded forward substitution: the first group's rows of B lie in shared memory
// (bsh, [n][nrhs_block][32]); warp w loads the rows of the tile rows it owns, and only the owner of a
// row ever writes it. In step K the owner of row K, once L_KK is in its registers, solves y_K :=
// L_KK^{-1} b_K in place (b_K has had every update of the steps before K, all made by this warp);
// after step K's barrier every warp, right after computing a tile L_IK of its rows, subtracts L_IK y_K
// from b_I with that tile still in registers. The forward pass thus reads no L from global memory and
// adds no barrier. The owner of the last diagonal tile solves its backward step too. After the
// barrier between the phases, step I = T - 1 .. 1 of the backward pass: the owner of row I solves
// x_I := L_II^{-H} y_I (L_II from global memory; I = T - 1 is done), a barrier publishes x_I, and every
// warp subtracts L_IJ^H x_I from its rows J < I. Row 0's diagonal closes it, and each warp writes
// its rows of X back to B. So the first group costs T - 2 barriers beyond the factorisation's (the
// unfolded solve: 2T - 2) and one read of L (unfolded: two). The fold needs n x nrhs_block x 32
// elements of shared memory beside the factorisation's buffers; where they do not fit
// (coop_posv_folds_forward), every group runs the potrs solve.
// The solve reads the L this block has just written: visible to every warp after the barrier, and a_batch is
// not __restrict__, so those loads never take the non-coherent read-only path. The owner of the last
// diagonal tile also publishes the lane's final state in flag buffer (T - 1) % 2 (last read, as flag
// buffer T - 3, before barrier T - 2); every warp reads it after the barrier between the phases and
// solves only for the lanes that did not fail, so a failed matrix keeps A as potrf leaves it and B
// bit for bit (its shared rows are never written back). The potrs solve's y / x buffers reuse the
// L_KK buffers' memory (all of their reads precede that barrier); the flags lie after both, so the
// solve's publications never overwrite them. The barrier that closes each group of 32 systems keeps
// the next group's first publications (L_KK, the flags, the rows of B) behind the last reads of this
// group's solve.
#include "codegen/cholesky/cooperative.hpp"

#include "codegen/common.hpp"
#include "codegen/source_writer.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

namespace batchsolve::codegen::cholesky {

namespace {

constexpr int coop_max_n = codegen::max_interleaved_generator_n;  // as the one-thread kernels

using codegen::ceil_div;
using codegen::is_complex;
using codegen::is_single;
int words_of(Precision p) { return codegen::words_per_element(p); }
std::size_t bytes_of(Precision p) { return static_cast<std::size_t>(codegen::element_bytes(p)); }
bool valid_warp_count(int w) {
    return std::find(std::begin(coop_warp_counts), std::end(coop_warp_counts), w) != std::end(coop_warp_counts);
}
std::string S(long long v) { return std::to_string(v); }

// Columns of an update tile loaded before their FMAs (see coop_prefetch_registers).
int prefetch_columns(int rows, int nb, Precision p) {
    return std::clamp(coop_prefetch_registers / (rows * words_of(p)), 1, nb);
}

// potrf: the nb x nb tile being solved plus the prefetched columns of its two operands (nb rows each);
// the diagonal step's triangle and single operand need less.
int potrf_live_registers(Precision p, int nb) {
    return words_of(p) * (nb * nb + prefetch_columns(2 * nb, nb, p) * 2 * nb);
}

// "k * w" written the short way, for literal element offsets.
std::string scaled(long long k, const std::string& w) {
    if (k == 0) return "0";
    if (k == 1) return w;
    return S(k) + " * " + w;
}

// The text of one kernel being written: shared by the writers of the fused posv kernel's two phases,
// so that their lines, indentation and fresh names continue one another.
using CoopText = codegen::SourceWriter;

// Text output, tile addressing and the kernel frame shared by the potrs, potrf and posv generators.
class CoopWriter {
protected:
    CoopWriter(const InterleavedKernelSpec& spec, CoopText& text)
        : text_(text), s_(spec), n_(spec.n), nb_(spec.config.nb), w_(spec.config.warps_per_matrix),
          tiles_(ceil_div(spec.n, spec.config.nb)), last_(spec.n - (ceil_div(spec.n, spec.config.nb) - 1) * spec.config.nb),
          complex_(is_complex(spec.precision)), upper_(spec.uplo == Uplo::upper) {
        one_ = is_single(spec.precision) ? "1.0f" : "1.0";
    }

    // ---- text output -----------------------------------------------------------------------------
    void line(const std::string& text) { text_.line(text); }
    void open(const std::string& head) { text_.open(head); }
    void close() { text_.close(); }
    std::string fresh() { return S(text_.next_id()); }

    // ---- factor access (lower coordinates; upper reads U(j, i) conjugated) -------------------------
    struct Tile {
        std::string ptr, stride;
    };
    // Pointer to the tile of L at tile row `ti`, tile column `tj` (expressions), with its own copy of
    // the chunk width hidden from the optimiser (as in codegen/cholesky/interleaved.cpp): the element offsets
    // k * w are then recomputed per load instead of being kept live across the kernel.
    Tile tile(const std::string& ti, const std::string& tj, bool writable = false) {
        const std::string id = fresh();
        const std::string row = upper_ ? tj : ti, col = upper_ ? ti : tj;  // storage coordinates
        line(std::string(writable ? "T* p" : "const T* p") + id + " = a + (" + col + " * " + S(nb_ * n_) + " + " + row +
             " * " + S(nb_) + ") * w;");
        line("idx_t w" + id + " = w;");
        line(interleaved_opaque(s_.wide_index) + "(w" + id + ");");
        return Tile{"p" + id, "w" + id};
    }
    std::string element(const Tile& t, int r, int c) const {
        const int off = upper_ ? r * n_ + c : c * n_ + r;
        return t.ptr + "[" + scaled(off, t.stride) + "]";
    }
    // L(r, c) of the tile (conj_lower: conj(L(r, c))).
    std::string load(const Tile& t, int r, int c, bool conj_lower = false) const {
        const std::string e = element(t, r, c);
        return complex_ && (upper_ != conj_lower) ? "bs_conj(" + e + ")" : e;
    }
    std::string load_real(const Tile& t, int r) const {
        const std::string e = element(t, r, r);
        return complex_ ? "bs_real(" + e + ")" : e;
    }
    // L(r, c) of a writable tile := value (upper: U(c, r) := conj(value)).
    void store(const Tile& t, int r, int c, const std::string& value) {
        line(element(t, r, c) + " = " + (complex_ && upper_ ? "bs_conj(" + value + ")" : value) + ";");
    }
    std::string conj(const std::string& v) const { return complex_ ? "bs_conj(" + v + ")" : v; }

    // ---- the fused posv kernel's first group of right-hand sides in shared memory ------------------
    // bsh holds [n][nrb][32] elements (row, right-hand side, system): the first row of tile row `tile`,
    // and element (i, c) of the tile whose first row is `rows`.
    std::string shared_rows_of_b(const std::string& tile, int nrb) const {
        return "bsh + (" + tile + ") * " + S(nb_ * nrb * coop_systems_per_block);
    }
    static std::string shared_b_at(const std::string& rows, int i, int c, int nrb) {
        return rows + "[" + S((i * nrb + c) * coop_systems_per_block) + " + sys]";
    }

    // ---- the kernel frame --------------------------------------------------------------------------
    // The loop over the groups of 32 systems this block serves (blockIdx.x, + gridDim.x, ...: one
    // group unless config.grid_blocks_per_sm caps the grid), then, inside it, this lane's matrix, the
    // idle-lane guard and (through interleaved_locate_code) a, w and b. finish_kernel closes the loop.
    void frame(bool const_a, bool with_b) {
        line("const int sys = threadIdx.x % " + S(coop_systems_per_block) + ";  // this lane's system in the block");
        line("const int warp = threadIdx.x / " + S(coop_systems_per_block) + ";");
        line("const int group_count = (count + " + S(coop_systems_per_block - 1) + ") / " + S(coop_systems_per_block) + ";");
        open("for (int group = blockIdx.x; group < group_count; group += gridDim.x)");
        line("const int first = group * " + S(coop_systems_per_block) + ";");
        line("const bool active = first + sys < count;  // idle lanes of the last block: barriers only, no memory access");
        line("const int mat = active ? first + sys : count - 1;  // keeps the address arithmetic in range");
        text_.raw(interleaved_locate_code(const_a, with_b, text_.indentation()));
    }
    // "BS_KERNEL_HEAD(...) name(params) { body }" with the body collected so far (then cleared), after
    // closing frame's loop over groups.
    std::string finish_kernel(const std::string& name, const std::string& params) {
        // The next group's first publication must not overwrite a shared buffer that a slower warp is
        // still reading for this group (potrf: its last step reads the buffer of step T - 2).
        line("__syncthreads();");
        close();
        std::string text = "BS_KERNEL_HEAD(" + S(32 * w_) + ", " + S(coop_min_blocks(s_)) + ") " + name + params + " {\n" +
                           text_.take() + "}\n\n";
        return text;
    }
    codegen::KernelSource source(const std::string& header, const std::string& kernel_text, const std::string& entry) const {
        codegen::KernelSource k;
        k.kernel_name = interleaved_coop_kernel_name(s_);
        k.source = header + interleaved_prelude(s_.precision, s_.wide_index, n_) + kernel_text + entry;
        if (s_.config.fast_math) k.options.push_back("--use_fast_math");
        if (s_.config.max_registers > 0) k.options.push_back("--maxrregcount=" + S(s_.config.max_registers));
        return k;
    }


    CoopText& text_;
    const InterleavedKernelSpec& s_;
    const int n_, nb_, w_, tiles_, last_;
    const bool complex_, upper_;
    std::string one_;
};

class CoopPotrsGenerator : CoopWriter {
public:
    CoopPotrsGenerator(const InterleavedKernelSpec& spec, CoopText& text)
        : CoopWriter(spec, text), nrb_(spec.config.nrhs_block),
          slots_(ceil_div(ceil_div(spec.n, spec.config.nb), spec.config.warps_per_matrix)) {}

    codegen::KernelSource generate() {
        const std::string name = interleaved_coop_kernel_name(s_);
        return source(header_comment(), kernel(name), host_entry(name));
    }

    // The y / x buffers at the start of the dynamic shared memory (bs_smem declared before).
    void declare_shared() {
        line("T* const ys = reinterpret_cast<T*>(bs_smem);  // [2][" + S(nb_) + "][" + S(nrb_) + "][" +
             S(coop_systems_per_block) + "]: y or x of the tile row just solved");
    }

    // The solve, inside frame's loop over groups of systems: the tile rows of the slots, their
    // registers and the loop over groups of nrhs_block right-hand sides (strided by grid.y, or all of
    // them in turn when `every_group`: the fused posv kernel runs with grid.y = 1). Only lanes where
    // `guard` (a bool in scope) holds touch memory; every lane reaches every barrier.
    void solve_phase(const std::string& guard, bool every_group, int first_group = 0) {
        guard_ = guard;
        for (int t = 0; t < slots_; ++t)
            line("const int " + row_of(t) + " = warp + " + S(t * w_) + ";  // tile row of slot " + S(t));
        // registers of the slots
        std::string decl;
        for (int t = 0; t < slots_; ++t)
            for (int i = 0; i < nb_; ++i)
                for (int c = 0; c < nrb_; ++c) {
                    if (decl.size() > 90) {
                        line("T " + decl + ";");
                        decl.clear();
                    }
                    decl += (decl.empty() ? "" : ", ") + y(t, i, c);
                }
        if (!decl.empty()) line("T " + decl + ";");
        line("const int groups = (nrhs + " + S(nrb_ - 1) + ") / " + S(nrb_) + ";");
        open(every_group ? "for (int g = " + S(first_group) + "; g < groups; ++g)" : "for (int g = blockIdx.y; g < groups; g += gridDim.y)");
        solve_group();
        close();
    }

private:
    // Slot t's value of row i, right-hand side c.
    static std::string y(int t, int i, int c) { return "y" + S(t) + "_" + S(i) + "_" + S(c); }
    static std::string row_of(int t) { return "tr" + S(t); }  // the tile row slot t holds
    // y_I / x_I of the current step in shared memory: [buffer][row][rhs][system], 32 consecutive
    // systems in consecutive words, so a warp's access is conflict-free.
    std::string shared_at(int i, int c) const { return "yb[" + S((i * nrb_ + c) * coop_systems_per_block) + " + sys]"; }

    // ---- slots -------------------------------------------------------------------------------------
    // Emits body(size) under "active && <row> <relation>" for every slot: full tiles, and in the last
    // slot also the narrower last tile row when there is one (relation "" = any valid tile row).
    // `last_possible`: whether the relation can hold for the last tile row at all.
    template <class Body>
    void for_slots(const std::string& relation, bool last_possible, const Body& body) {
        for (int t = 0; t < slots_; ++t) {
            const std::string row = row_of(t);
            const std::string rel = relation.empty() ? "" : " && " + row + " " + relation;
            // slot t holds tile rows t W .. t W + W - 1 (one per warp): which of them exist / are the last?
            const bool may_hold_last = (t + 1) * w_ >= tiles_;
            const bool may_hold_full = t * w_ < tiles_ - 1 || (t * w_ == tiles_ - 1 && last_ == nb_);
            if (!may_hold_last) {
                open("if (" + guard_ + rel + ")");
                body(t, nb_);
                close();
                continue;
            }
            if (last_ == nb_) {  // the last tile row is a full one: one copy, guarded against missing rows
                if (!last_possible && !may_hold_full) continue;
                open("if (" + guard_ + " && " + row + " < " + S(last_possible ? tiles_ : tiles_ - 1) + rel + ")");
                body(t, nb_);
                close();
                continue;
            }
            std::string head = "if";
            if (last_possible) {
                open("if (" + guard_ + " && " + row + " == " + S(tiles_ - 1) + rel + ")");
                body(t, last_);
                close();
                head = "else if";
            }
            if (may_hold_full) {
                open(head + " (" + guard_ + " && " + row + " < " + S(tiles_ - 1) + rel + ")");
                body(t, nb_);
                close();
            }
        }
    }

    // ---- tile operations -------------------------------------------------------------------------
    // L_II y = b in place (slot t, s rows), L_II read from global memory row by row.
    void forward_diagonal(int t, int s, const std::string& ti) {
        open("");
        const Tile d = tile(ti, ti);
        for (int i = 0; i < s; ++i) {
            open("");
            for (int p = 0; p < i; ++p) {
                line("const T l" + S(p) + " = " + load(d, i, p) + ";");
                for (int c = 0; c < nrb_; ++c) line(y(t, i, c) + " -= l" + S(p) + " * " + y(t, p, c) + ";");
            }
            line("const R rc = " + one_ + " / " + load_real(d, i) + ";");
            for (int c = 0; c < nrb_; ++c) line(y(t, i, c) + " *= rc;");
            close();
        }
        close();
    }
    // L_II^H x = y in place.
    void backward_diagonal(int t, int s, const std::string& ti) {
        open("");
        const Tile d = tile(ti, ti);
        for (int i = s - 1; i >= 0; --i) {
            open("");
            for (int p = i + 1; p < s; ++p) {
                line("const T l" + S(p) + " = " + load(d, p, i, true) + ";");
                for (int c = 0; c < nrb_; ++c) line(y(t, i, c) + " -= l" + S(p) + " * " + y(t, p, c) + ";");
            }
            line("const R rc = " + one_ + " / " + load_real(d, i) + ";");
            for (int c = 0; c < nrb_; ++c) line(y(t, i, c) + " *= rc;");
            close();
        }
        close();
    }
    void publish(int t, int s) {
        for (int i = 0; i < s; ++i)
            for (int c = 0; c < nrb_; ++c) line(shared_at(i, c) + " = " + y(t, i, c) + ";");
    }

    // Slot t (rows rows) -= op(factor tile) * (the published sp rows): forward, the tile is L(tr_t, I)
    // and element (i, p) is L(i, p); backward, it is L(I, tr_t) and element (i, p) is conj(L(p, i)).
    // The factor values of a batch of columns p are all loaded before the FMAs that use them.
    void update(int t, int rows, const std::string& source, int sp, bool backward) {
        open("");
        const Tile f = backward ? tile(source, row_of(t)) : tile(row_of(t), source);
        const int batch = prefetch_columns(rows, nb_, s_.precision);
        for (int p0 = 0; p0 < sp; p0 += batch) {
            const int p1 = std::min(sp, p0 + batch);
            open("");
            for (int p = p0; p < p1; ++p)
                for (int i = 0; i < rows; ++i)
                    line("const T l" + S(i) + "_" + S(p) + " = " + (backward ? load(f, p, i, true) : load(f, i, p)) + ";");
            for (int p = p0; p < p1; ++p)
                for (int c = 0; c < nrb_; ++c) line("const T z" + S(p) + "_" + S(c) + " = " + shared_at(p, c) + ";");
            for (int p = p0; p < p1; ++p)
                for (int i = 0; i < rows; ++i)
                    for (int c = 0; c < nrb_; ++c)
                        line(y(t, i, c) + " -= l" + S(i) + "_" + S(p) + " * z" + S(p) + "_" + S(c) + ";");
            close();
            if (p1 < sp) line("BS_FENCE();  // the next batch's loads stay behind these FMAs");
        }
        close();
    }

    void select_buffer(const std::string& step) {
        line("T* const yb = ys + (" + step + " % 2) * " + S(nb_ * nrb_ * coop_systems_per_block) + ";");
    }

    // ---- the kernel --------------------------------------------------------------------------------
    void solve_group() {
        // right-hand sides r0 .. r0 + NRB - 1; columns past nrhs are computed on a copy of column r0, never stored
        line("const int r0 = g * " + S(nrb_) + ";");
        line("T* bc0 = b + (idx_t)r0 * (N * w);");
        for (int c = 1; c < nrb_; ++c) {
            line("const bool v" + S(c) + " = r0 + " + S(c) + " < nrhs;");
            line("T* bc" + S(c) + " = b + (idx_t)(v" + S(c) + " ? r0 + " + S(c) + " : r0) * (N * w);");
        }
        line("// this warp's tile rows of B");
        for_slots("", true, [&](int t, int s) {
            for (int c = 0; c < nrb_; ++c) {
                const std::string id = fresh();
                line("const T* q" + id + " = bc" + S(c) + " + (" + row_of(t) + " * " + S(nb_) + ") * w;");
                for (int i = 0; i < s; ++i) line(y(t, i, c) + " = q" + id + "[" + scaled(i, "w") + "];");
            }
        });

        if (tiles_ > 1) {
            line("// forward substitution L Y = B, tile rows 0 .. T - 2");
            open("for (int I = 0; I < " + S(tiles_ - 1) + "; ++I)");
            select_buffer("I");
            for_slots("== I", false, [&](int t, int s) {
                forward_diagonal(t, s, "I");
                publish(t, s);
            });
            line("__syncthreads();");
            for_slots("> I", true, [&](int t, int s) { update(t, s, "I", nb_, false); });
            close();
        }

        line("// last tile row (always in the last slot): forward and backward solve of its diagonal tile");
        open("");
        const std::string last = S(tiles_ - 1);
        if (tiles_ > 1) select_buffer(last);
        open("if (" + guard_ + " && " + row_of(slots_ - 1) + " == " + last + ")");
        forward_diagonal(slots_ - 1, last_, last);
        backward_diagonal(slots_ - 1, last_, last);
        if (tiles_ > 1) publish(slots_ - 1, last_);
        close();
        if (tiles_ > 1) {
            line("__syncthreads();");
            for_slots("< " + last, false, [&](int t, int s) { update(t, s, last, last_, true); });
        }
        close();

        if (tiles_ > 1) {
            line("// backward substitution L^H X = Y, tile rows T - 2 .. 1, then row 0 (nothing left to update)");
            open("for (int I = " + S(tiles_ - 2) + "; I >= 1; --I)");
            select_buffer("I");
            for_slots("== I", false, [&](int t, int s) {
                backward_diagonal(t, s, "I");
                publish(t, s);
            });
            line("__syncthreads();");
            for_slots("< I", false, [&](int t, int s) { update(t, s, "I", nb_, true); });
            close();
            open("if (" + guard_ + " && " + row_of(0) + " == 0)");
            backward_diagonal(0, nb_, "0");
            close();
        }

        line("// X back to B");
        for_slots("", true, [&](int t, int s) {
            for (int c = 0; c < nrb_; ++c) {
                const std::string id = fresh();
                line("T* q" + id + " = bc" + S(c) + " + (" + row_of(t) + " * " + S(nb_) + ") * w;");
                const std::string guard = c == 0 ? "" : "if (v" + S(c) + ") ";
                for (int i = 0; i < s; ++i) line(guard + "q" + id + "[" + scaled(i, "w") + "] = " + y(t, i, c) + ";");
            }
        });
    }

    std::string kernel(const std::string& name) {
        text_.set_indent(1);
        line("BS_DECLARE_SMEM(bs_smem);");
        declare_shared();
        frame(true, true);
        // info (may be null): posv run as potrf then this kernel skips the systems whose factorisation
        // failed, so their B stays untouched as with the fused kernel.
        line("const bool solves = active && (info == nullptr || info[mat] == 0);");
        solve_phase("solves", false);
        return finish_kernel(name, "(const T* __restrict__ a_batch, T* __restrict__ b_batch, int nrhs, "
                                   "const int* __restrict__ info, int count, int chunk)");
    }

    std::string host_entry(const std::string& name) const {
        return "#ifdef BS_HOST_EMULATION\ninline void bs_host_entry(void** args) {\n  " + name +
               "(*static_cast<const T**>(args[0]), *static_cast<T**>(args[1]), *static_cast<int*>(args[2]),\n"
               "    *static_cast<const int**>(args[3]), *static_cast<int*>(args[4]), *static_cast<int*>(args[5]));\n}\n#endif\n";
    }

    std::string header_comment() const {
        std::ostringstream h;
        const CholeskyConfig& c = s_.config;
        h << "// batchsolve generated kernel: potrs, interleaved layout, cooperative, precision "
          << precision_letter(s_.precision) << ", " << batchsolve::to_string(s_.uplo) << ", n = " << n_ << ", nb = " << nb_
          << " (" << tiles_ << " tile rows, the last of " << last_ << "), " << w_ << " warps per block, "
          << nrb_ << " right-hand side(s) per pass" << (c.fast_math ? ", fast math" : "") << ".\n"
          << "// Lane l of every warp works on system blockIdx.x * 32 + l; warp w holds tile rows w, w + " << w_
          << ", ... of B\n// in registers; solved tile rows pass through shared memory, one __syncthreads per step.\n";
        return h.str();
    }

    const int nrb_, slots_;
    std::string guard_ = "active";  // the lanes that touch memory (see solve_phase)
};

// The cooperative potrf kernel (algorithm: see the top of this file). Names in the text: d_r_c the
// diagonal tile being factored, x_r_c the tile being solved, u / v prefetched operand columns, ls the
// shared L_KK buffers, fl the shared flags (1 = this lane's matrix has failed).
class CoopPotrfGenerator : CoopWriter {
public:
    // `publish_last`: the owner of the last diagonal tile also publishes the lane's state (flag buffer
    // (T - 1) % 2, final_flag), which the fused posv kernel's solve reads after a barrier.
    // `fold_nrb` > 0: the forward substitution of nrhs_block right-hand sides rides along (fused posv,
    // see the top of the file): their rows lie in shared memory at `bsh` (rows_of_b), the owner of
    // diagonal tile K solves y_K there once L_KK is in its registers, every warp subtracts L_IK y_K
    // from its rows I with the tile it has just computed, and the owner of the last diagonal tile
    // also solves that tile's backward step.
    CoopPotrfGenerator(const InterleavedKernelSpec& spec, CoopText& text, bool publish_last = false, int fold_nrb = 0)
        : CoopWriter(spec, text), tri_(spec.config.nb * (spec.config.nb + 1) / 2), publish_last_(publish_last),
          fold_nrb_(fold_nrb) {}

    codegen::KernelSource generate() {
        const std::string name = interleaved_coop_kernel_name(s_);
        return source(header_comment(), kernel(name), host_entry(name));
    }

    // The L_KK buffers at the start of the dynamic shared memory (bs_smem declared before), the flag
    // buffers `flag_offset` bytes into it (potrf: right after the L_KK buffers).
    void declare_shared(std::size_t flag_offset) {
        line("T* const ls = reinterpret_cast<T*>(bs_smem);  // [2][" + S(tri_) + "][" + S(coop_systems_per_block) +
             "]: L_KK of the step (lower, packed by columns; 1 / L(j, j) on the diagonal)");
        line("int* const fl = reinterpret_cast<int*>(bs_smem + " + S(static_cast<long long>(flag_offset)) + ");  // [2][" +
             S(coop_systems_per_block) + "]: 1 = the lane's matrix failed at or before the step");
    }

    // The factorisation, inside frame's loop over groups of systems: T - 1 barriers; a failed lane's
    // info is its 1-based column, a sound lane's 0 (written by the owner of the last diagonal tile).
    void factor_steps() {
        const int sys_n = coop_systems_per_block;
        // Full tile rows: 0 .. T - 2, and T - 1 when nb divides n.
        const int full_rows = last_ == nb_ ? tiles_ : tiles_ - 1;
        if (tiles_ > 1) {
            line("// tile columns 0 .. T - 2: factor the diagonal tile, publish it, solve the tiles below it");
            open("for (int K = 0; K < " + S(tiles_ - 1) + "; ++K)");
            open("if (warp == K % " + S(w_) + ")");
            diagonal("K", nb_, false);
            close();
            line("__syncthreads();");
            line("const bool go = active && " + flag_at("(K % 2)") + " == 0;");
            line("const T* const lk = ls + (K % 2) * " + S(tri_ * sys_n) + ";");
            line("// this warp's tile rows below K: the first is the smallest row > K congruent to warp");
            line("int I = warp;");
            line("if (I <= K) I += ((K - warp) / " + S(w_) + " + 1) * " + S(w_) + ";");
            open("for (; go && I < " + S(full_rows) + "; I += " + S(w_) + ")");
            panel_tile("I", nb_);
            close();
            if (last_ != nb_) {
                line("// the narrower last tile row");
                open("if (go && warp == " + S((tiles_ - 1) % w_) + ")");
                panel_tile(S(tiles_ - 1), last_);
                close();
            }
            close();
        }
        line("// the last diagonal tile; its owner also reports success");
        open("if (warp == " + S((tiles_ - 1) % w_) + ")");
        diagonal(S(tiles_ - 1), last_, true);
        close();
    }

    // The lane's state after the whole factorisation (1 = failed), valid after the barrier that follows
    // factor_steps when publish_last.
    std::string final_flag() const { return flag_at(S((tiles_ - 1) % 2)); }

    // Bytes of the two L_KK buffers.
    std::size_t factor_buffer_bytes() const {
        return 2 * static_cast<std::size_t>(tri_) * coop_systems_per_block * bytes_of(s_.precision);
    }

private:
    static std::string d(int r, int c) { return "d_" + S(r) + "_" + S(c); }
    static std::string x(int r, int c) { return "x_" + S(r) + "_" + S(c); }
    // Element (r, c), r >= c, of a shared L_KK buffer (`buffer` names its first element): the lower
    // triangle packed by columns, 32 consecutive matrices in consecutive words (conflict-free).
    std::string shared_at(const std::string& buffer, int r, int c) const {
        const int e = c * (2 * nb_ - c + 1) / 2 + (r - c);
        return buffer + "[" + S(e * coop_systems_per_block) + " + sys]";
    }
    std::string flag_at(const std::string& parity) const {
        return "fl[" + parity + " * " + S(coop_systems_per_block) + " + sys]";
    }
    std::string real_value(const std::string& v) const { return complex_ ? "bs_from_real(" + v + ")" : v; }

    // Step k's diagonal tile (s x s, s = nb, or the last tile's size when `last`): D = A_kk - sum_{J<k}
    // L_kJ L_kJ^H, streamed from global memory; D := chol(D). A pivot not in (0, Inf) (or NaN) sets
    // info to its 1-based column and marks the lane failed: the tile is then neither stored nor
    // published (its remaining arithmetic only touches registers). Not `last`: L_KK goes to buffer
    // k % 2 with 1 / L(j, j) on its diagonal, and the lane's state to flag buffer k % 2. `last`: the
    // lanes still sound get info = 0.
    void diagonal(const std::string& k, int s, bool last) {
        // the lane's state after step k - 1 (flag buffer (k - 1) % 2; none before step 0)
        std::string before = "0";
        if (last && k != "0") before = flag_at(S(tiles_ % 2));
        if (!last) before = "(K == 0 ? 0 : " + flag_at("((K + 1) % 2)") + ")";
        open("");
        line("int bad = " + before + ";  // failed at an earlier step");
        if (!last) line("T* const lw = ls + (" + k + " % 2) * " + S(tri_ * coop_systems_per_block) + ";");
        open("if (active && !bad)");
        if (fold_nrb_ > 0) {
            std::string decl;
            for (int j = 0; j < s; ++j) decl += (j ? ", " : "") + rd(j);
            line("R " + decl + ";  // 1 / L(j, j), for the folded forward substitution");
        }
        {
            const Tile t = tile(k, k);
            for (int c = 0; c < s; ++c)
                for (int r = c; r < s; ++r) line("T " + d(r, c) + " = " + load(t, r, c) + ";");
        }
        if (k != "0") {
            open("for (int J = 0; J < " + k + "; ++J)");
            const Tile u = tile(k, "J");
            const int batch = prefetch_columns(s, nb_, s_.precision);
            for (int p0 = 0; p0 < nb_; p0 += batch) {
                const int p1 = std::min(nb_, p0 + batch);
                open("");
                for (int p = p0; p < p1; ++p)
                    for (int r = 0; r < s; ++r) line("const T u" + S(r) + "_" + S(p) + " = " + load(u, r, p) + ";");
                for (int p = p0; p < p1; ++p)
                    for (int c = 0; c < s; ++c)
                        for (int r = c; r < s; ++r)
                            line(d(r, c) + " -= u" + S(r) + "_" + S(p) + " * " + conj("u" + S(c) + "_" + S(p)) + ";");
                close();
                if (p1 < nb_) line("BS_FENCE();  // the next batch's loads stay behind these FMAs");
            }
            close();
        }
        const std::string col0 = k == "0" ? "" : k + " * " + S(nb_) + " + ";
        for (int j = 0; j < s; ++j) {
            const std::string piv = complex_ ? "bs_real(" + d(j, j) + ")" : d(j, j);
            line("if (!bs_pivot_ok(" + piv + ") && !bad) { info[mat] = " + col0 + S(j + 1) + "; bad = 1; }");
            open("");
            if (s_.config.fast_math) {
                line("const R rj = " + std::string(is_single(s_.precision) ? "rsqrtf" : "rsqrt") + "(" + piv + ");");
                line(d(j, j) + " = " + real_value(piv + " * rj") + ";");
            } else {
                line("const R sj = " + std::string(is_single(s_.precision) ? "sqrtf" : "sqrt") + "(" + piv + ");");
                line("const R rj = " + one_ + " / sj;");
                line(d(j, j) + " = " + real_value("sj") + ";");
            }
            if (!last) line(shared_at("lw", j, j) + " = " + real_value("rj") + ";  // the solves multiply by it");
            if (fold_nrb_ > 0) line(rd(j) + " = rj;");
            for (int i = j + 1; i < s; ++i) line(d(i, j) + " *= rj;");
            close();
            for (int c = j + 1; c < s; ++c)
                for (int r = c; r < s; ++r) line(d(r, c) + " -= " + d(r, j) + " * " + conj(d(c, j)) + ";");
        }
        open("if (!bad)");
        {
            const Tile t = tile(k, k, true);
            for (int c = 0; c < s; ++c)
                for (int r = c; r < s; ++r) store(t, r, c, d(r, c));
        }
        if (!last) {
            for (int c = 0; c < s; ++c)
                for (int r = c + 1; r < s; ++r) line(shared_at("lw", r, c) + " = " + d(r, c) + ";");
        } else {
            line("info[mat] = 0;");
        }
        if (fold_nrb_ > 0) fold_diagonal(k, s, last);
        close();
        close();
        if (!last || publish_last_) line(flag_at("(" + k + " % 2)") + " = bad;");
        close();
    }

    // Tile (I, K) of the panel (s x nb, I the run-time tile row `row`): X = A_IK - sum_{J<K} L_IJ L_KJ^H
    // (both operands streamed from global memory; L_KJ is read by every warp, so mostly from L1),
    // then X := X L_KK^{-H} with L_KK (and its reciprocal diagonal) from shared buffer K % 2.
    void panel_tile(const std::string& row, int s) {
        open("");
        {
            const Tile t = tile(row, "K");
            for (int c = 0; c < nb_; ++c)
                for (int r = 0; r < s; ++r) line("T " + x(r, c) + " = " + load(t, r, c) + ";");
        }
        open("for (int J = 0; J < K; ++J)");
        {
            const Tile u = tile(row, "J"), v = tile("K", "J");
            const int batch = prefetch_columns(s + nb_, nb_, s_.precision);
            for (int p0 = 0; p0 < nb_; p0 += batch) {
                const int p1 = std::min(nb_, p0 + batch);
                open("");
                for (int p = p0; p < p1; ++p) {
                    for (int r = 0; r < s; ++r) line("const T u" + S(r) + "_" + S(p) + " = " + load(u, r, p) + ";");
                    for (int c = 0; c < nb_; ++c) line("const T v" + S(c) + "_" + S(p) + " = " + load(v, c, p, true) + ";");
                }
                for (int p = p0; p < p1; ++p)
                    for (int c = 0; c < nb_; ++c)
                        for (int r = 0; r < s; ++r)
                            line(x(r, c) + " -= u" + S(r) + "_" + S(p) + " * v" + S(c) + "_" + S(p) + ";");
                close();
                if (p1 < nb_) line("BS_FENCE();  // the next batch's loads stay behind these FMAs");
            }
        }
        close();
        for (int c = 0; c < nb_; ++c) {
            open("");
            for (int p = 0; p < c; ++p) {
                line("const T l" + S(p) + " = " + conj(shared_at("lk", c, p)) + ";");
                for (int r = 0; r < s; ++r) line(x(r, c) + " -= " + x(r, p) + " * l" + S(p) + ";");
            }
            line("const R rc = " + (complex_ ? "bs_real(" + shared_at("lk", c, c) + ")" : shared_at("lk", c, c)) + ";");
            for (int r = 0; r < s; ++r) line(x(r, c) + " *= rc;");
            close();
        }
        {
            const Tile t = tile(row, "K", true);
            for (int c = 0; c < nb_; ++c)
                for (int r = 0; r < s; ++r) store(t, r, c, x(r, c));
        }
        if (fold_nrb_ > 0) fold_panel(row, s);
        close();
    }

    std::string kernel(const std::string& name) {
        text_.set_indent(1);
        line("BS_DECLARE_SMEM(bs_smem);");
        declare_shared(factor_buffer_bytes());
        frame(false, false);
        factor_steps();
        // a_batch without __restrict__: tiles written by one warp are read by the others after a barrier,
        // so their loads must never take the non-coherent read-only path
        return finish_kernel(name, "(T* a_batch, int* __restrict__ info, int count, int chunk)");
    }

    std::string host_entry(const std::string& name) const {
        return "#ifdef BS_HOST_EMULATION\ninline void bs_host_entry(void** args) {\n  " + name +
               "(*static_cast<T**>(args[0]), *static_cast<int**>(args[1]), *static_cast<int*>(args[2]),\n"
               "    *static_cast<int*>(args[3]));\n}\n#endif\n";
    }

    std::string header_comment() const {
        std::ostringstream h;
        h << "// batchsolve generated kernel: potrf, interleaved layout, cooperative, left-looking, precision "
          << precision_letter(s_.precision) << ", " << batchsolve::to_string(s_.uplo) << ", n = " << n_ << ", nb = " << nb_
          << " (" << tiles_ << " tile columns, the last of " << last_ << "), " << w_ << " warps per block"
          << (s_.config.fast_math ? ", fast math" : ", IEEE sqrt/division") << ".\n"
          << "// Lane l of every warp works on matrix blockIdx.x * 32 + l; warp w owns tile rows w, w + " << w_
          << ", ...; the owner of\n// row K factors diagonal tile K and publishes it through shared memory, one "
             "__syncthreads per tile column.\n";
        return h.str();
    }

    // The right-hand sides' rows of tile row `tile` in shared memory (fold), as `name`.
    void rows_of_b(const std::string& name, const std::string& tile, bool writable = true) {
        line(std::string(writable ? "T* const " : "const T* const ") + name + " = " + shared_rows_of_b(tile, fold_nrb_) + ";");
    }
    std::string rhs_at(const std::string& name, int i, int c) const { return shared_b_at(name, i, c, fold_nrb_); }
    static std::string rd(int j) { return "rd_" + S(j); }

    // Fold, diagonal step k (s x s, L_KK in d_r_c, 1 / L(j, j) in rd_j): y_k := L_kk^{-1} b_k in
    // shared memory (its rows are this warp's, and final: the earlier steps' updates are in); the
    // last tile also x_k := L_kk^{-H} y_k (the backward pass starts above it).
    void fold_diagonal(const std::string& k, int s, bool last) {
        open("");
        rows_of_b("bk", k);
        for (int c = 0; c < fold_nrb_; ++c)
            for (int i = 0; i < s; ++i) line("T f" + S(i) + "_" + S(c) + " = " + rhs_at("bk", i, c) + ";");
        for (int i = 0; i < s; ++i)
            for (int c = 0; c < fold_nrb_; ++c) {
                const std::string f = "f" + S(i) + "_" + S(c);
                for (int p = 0; p < i; ++p) line(f + " -= " + d(i, p) + " * f" + S(p) + "_" + S(c) + ";");
                line(f + " *= " + rd(i) + ";");
            }
        if (last)
            for (int i = s - 1; i >= 0; --i)
                for (int c = 0; c < fold_nrb_; ++c) {
                    const std::string f = "f" + S(i) + "_" + S(c);
                    for (int p = i + 1; p < s; ++p) line(f + " -= " + conj(d(p, i)) + " * f" + S(p) + "_" + S(c) + ";");
                    line(f + " *= " + rd(i) + ";");
                }
        for (int c = 0; c < fold_nrb_; ++c)
            for (int i = 0; i < s; ++i) line(rhs_at("bk", i, c) + " = f" + S(i) + "_" + S(c) + ";");
        close();
    }

    // Fold, panel tile (row, K) just computed (s x nb in x_r_c): b_row -= L_row,K y_K, y_K published in
    // shared memory by the owner of row K before this step's barrier.
    void fold_panel(const std::string& row, int s) {
        open("");
        rows_of_b("bi", row);
        rows_of_b("bk", "K", false);
        for (int c = 0; c < fold_nrb_; ++c)
            for (int p = 0; p < nb_; ++p) line("const T z" + S(p) + "_" + S(c) + " = " + rhs_at("bk", p, c) + ";");
        for (int r = 0; r < s; ++r)
            for (int c = 0; c < fold_nrb_; ++c) {
                open("");
                line("T v = " + rhs_at("bi", r, c) + ";");
                for (int p = 0; p < nb_; ++p) line("v -= " + x(r, p) + " * z" + S(p) + "_" + S(c) + ";");
                line(rhs_at("bi", r, c) + " = v;");
                close();
            }
        close();
    }

    const int tri_;  // elements of a packed nb x nb lower triangle
    const bool publish_last_;
    const int fold_nrb_;  // right-hand sides solved along (fused posv), 0 = none
};

// The fused cooperative posv kernel (algorithm: see the top of this file). Both writers add to this
// kernel's text. Shared memory, in order: the L_KK buffers (the solve's y / x buffers reuse them: every
// read of L_KK precedes the barrier between the phases), then, when the forward substitution is folded,
// the rows of the first group of right-hand sides (bsh), then the flags (the lane's final state,
// published by the owner of the last diagonal tile, survives the solve's publications).
class CoopPosvGenerator : CoopWriter {
public:
    CoopPosvGenerator(const InterleavedKernelSpec& spec, CoopText& text)
        : CoopWriter(spec, text), fold_(coop_posv_folds_forward(spec)), nrb_(spec.config.nrhs_block),
          factor_(spec, text, true, fold_ ? spec.config.nrhs_block : 0), solve_(spec, text) {}

    codegen::KernelSource generate() {
        const std::string name = interleaved_coop_kernel_name(s_);
        return source(header_comment(), kernel(name), host_entry(name));
    }

private:
    std::string bsh_at(int i, int c) const { return shared_b_at("bj", i, c, nrb_); }
    std::string bsh_rows(const std::string& tile) const { return shared_rows_of_b(tile, nrb_); }
    // Column c of the first group of right-hand sides (columns past nrhs: a copy of column 0, never stored).
    void rhs_columns() {
        for (int c = 0; c < nrb_; ++c)
            line("T* const bc" + S(c) + " = b + (idx_t)(" + S(c) + " < nrhs ? " + S(c) + " : 0) * (N * w);");
    }
    // Every tile row this warp owns (J = warp, warp + W, ...: the rows of b it keeps in shared memory),
    // body(rows) for the full ones and, when nb does not divide n, for the narrower last one.
    template <class Body>
    void for_owned_rows(const Body& body) {
        const int full_rows = last_ == nb_ ? tiles_ : tiles_ - 1;
        open("for (int J = warp; J < " + S(full_rows) + "; J += " + S(w_) + ")");
        body(nb_);
        close();
        if (last_ != nb_) {
            open("if (warp == " + S((tiles_ - 1) % w_) + ")");
            line("const int J = " + S(tiles_ - 1) + ";");
            body(last_);
            close();
        }
    }

    // The first group's rows of B between global and shared memory, each warp the tile rows it owns:
    // `load`: B into bsh (the active lanes); else X back to B (the lanes solved; columns past nrhs,
    // copies of column 0, are never stored).
    void move_first_group(bool load) {
        open("");
        rhs_columns();
        open(std::string("if (") + (load ? "active" : "solving") + " && nrhs > 0)");
        for_owned_rows([&](int rows) {
            line(std::string(load ? "T* const" : "const T* const") + " bj = " + bsh_rows("J") + ";");
            for (int c = 0; c < nrb_; ++c) {
                line(std::string(load ? "const T* const q" : "T* const q") + S(c) + " = bc" + S(c) + " + (J * " + S(nb_) +
                     ") * w;");
                const std::string guard = load || c == 0 ? "" : "if (" + S(c) + " < nrhs) ";
                for (int i = 0; i < rows; ++i) {
                    const std::string global = "q" + S(c) + "[" + scaled(i, "w") + "]";
                    line(guard + (load ? bsh_at(i, c) + " = " + global : global + " = " + bsh_at(i, c)) + ";");
                }
            }
        });
        close();
        close();
    }

    // Backward substitution L^H X = Y of the first group, in shared memory: tile row T - 1 was solved
    // by its owner in the factorisation; step I (T - 1 .. 1): the owner of row I solves its diagonal
    // tile (I < T - 1), one barrier publishes x_I, then every warp subtracts L_IJ^H x_I from its rows
    // J < I. Row 0's diagonal closes it. A row of b is only ever written by its owner.
    void shared_backward() {
        if (tiles_ == 1) return;
        open("for (int I = " + S(tiles_ - 1) + "; I >= 1; --I)");
        line("// x of the last tile row was published by the barrier between the phases");
        open("if (I < " + S(tiles_ - 1) + ")");
        open("if (solving && warp == I % " + S(w_) + ")");
        backward_diagonal("I");
        close();
        line("__syncthreads();  // x_I visible to every warp");
        close();
        open("for (int J = warp; solving && J < I; J += " + S(w_) + ")");
        if (last_ != nb_) {
            open("if (I == " + S(tiles_ - 1) + ")");
            backward_update(last_);
            close();
            open("else");
            backward_update(nb_);
            close();
        } else {
            backward_update(nb_);
        }
        close();
        close();
        open("if (solving && warp == 0)");
        backward_diagonal("0");
        close();
    }
    // x_I := L_II^{-H} y_I (a full tile; L_II from global memory).
    void backward_diagonal(const std::string& ti) {
        line("T* const bj = " + bsh_rows(ti) + ";");
        const Tile dg = tile(ti, ti);
        for (int i = nb_ - 1; i >= 0; --i) {
            open("");
            line("const R rc = " + one_ + " / " + load_real(dg, i) + ";");
            for (int p = i + 1; p < nb_; ++p) line("const T l" + S(p) + " = " + load(dg, p, i, true) + ";");
            for (int c = 0; c < nrb_; ++c) {
                open("");
                line("T v = " + bsh_at(i, c) + ";");
                for (int p = i + 1; p < nb_; ++p) line("v -= l" + S(p) + " * " + bsh_at(p, c) + ";");
                line("v *= rc;");
                line(bsh_at(i, c) + " = v;");
                close();
            }
            close();
        }
    }
    // Rows of tile J -= L_IJ^H x_I (x_I: `rows` rows at tile row I), the factor values of a batch of
    // columns loaded before their FMAs (as the potrs update).
    void backward_update(int rows) {
        line("T* const bj = " + bsh_rows("J") + ";");
        line("const T* const bi = " + bsh_rows("I") + ";");
        for (int i = 0; i < nb_; ++i)
            for (int c = 0; c < nrb_; ++c) line("T a" + S(i) + "_" + S(c) + " = " + bsh_at(i, c) + ";");
        const Tile f = tile("I", "J");
        const int batch = prefetch_columns(nb_, nb_, s_.precision);
        for (int p0 = 0; p0 < rows; p0 += batch) {
            const int p1 = std::min(rows, p0 + batch);
            open("");
            for (int p = p0; p < p1; ++p)
                for (int i = 0; i < nb_; ++i) line("const T l" + S(i) + "_" + S(p) + " = " + load(f, p, i, true) + ";");
            for (int p = p0; p < p1; ++p)
                for (int c = 0; c < nrb_; ++c)
                    line("const T z" + S(p) + "_" + S(c) + " = " + shared_b_at("bi", p, c, nrb_) + ";");
            for (int p = p0; p < p1; ++p)
                for (int i = 0; i < nb_; ++i)
                    for (int c = 0; c < nrb_; ++c)
                        line("a" + S(i) + "_" + S(c) + " -= l" + S(i) + "_" + S(p) + " * z" + S(p) + "_" + S(c) + ";");
            close();
            if (p1 < rows) line("BS_FENCE();  // the next batch's loads stay behind these FMAs");
        }
        for (int i = 0; i < nb_; ++i)
            for (int c = 0; c < nrb_; ++c) line(bsh_at(i, c) + " = a" + S(i) + "_" + S(c) + ";");
    }

    std::string kernel(const std::string& name) {
        text_.set_indent(1);
        line("BS_DECLARE_SMEM(bs_smem);");
        factor_.declare_shared(coop_shared_bytes(s_) - 2 * coop_systems_per_block * sizeof(int));
        solve_.declare_shared();
        if (fold_)
            line("T* const bsh = reinterpret_cast<T*>(bs_smem + " + S(static_cast<long long>(coop_posv_rhs_offset(s_))) +
                 ");  // [" + S(n_) + "][" + S(nrb_) + "][" + S(coop_systems_per_block) +
                 "]: the first group of right-hand sides, B then Y then X");
        frame(false, true);
        if (fold_) {
            line("// the first group of right-hand sides into shared memory: each warp the rows of the tile rows it owns");
            move_first_group(true);
            line("// (1) A = L L^H, the cooperative potrf steps, with the forward substitution L Y = B of that group");
        } else {
            line("// (1) A = L L^H, the cooperative potrf steps");
        }
        factor_.factor_steps();
        line("__syncthreads();  // L and the lanes' final flags visible to every warp");
        line("// (2) the solve with that L, for the lanes whose factorisation succeeded (a failed lane's B is never touched)");
        open("");
        line("const bool solving = active && " + factor_.final_flag() + " == 0;");
        if (fold_) {
            line("// the first group: backward substitution in shared memory, then X back to B");
            shared_backward();
            move_first_group(false);
            line("// the other groups (nrhs > " + S(nrb_) + "): the potrs solve, L read from global memory");
        }
        solve_.solve_phase("solving", true, fold_ ? 1 : 0);
        close();
        // a_batch without __restrict__: the solve reads tiles of L that other warps wrote (after a barrier)
        return finish_kernel(name, "(T* a_batch, T* __restrict__ b_batch, int nrhs, int* __restrict__ info, int count, int chunk)");
    }

    std::string host_entry(const std::string& name) const {
        return "#ifdef BS_HOST_EMULATION\ninline void bs_host_entry(void** args) {\n  " + name +
               "(*static_cast<T**>(args[0]), *static_cast<T**>(args[1]), *static_cast<int*>(args[2]),\n"
               "    *static_cast<int**>(args[3]), *static_cast<int*>(args[4]), *static_cast<int*>(args[5]));\n}\n#endif\n";
    }

    std::string header_comment() const {
        std::ostringstream h;
        h << "// batchsolve generated kernel: posv (potrf then potrs, fused), interleaved layout, cooperative, precision "
          << precision_letter(s_.precision) << ", " << batchsolve::to_string(s_.uplo) << ", n = " << n_ << ", nb = " << nb_
          << " (" << tiles_ << " tiles, the last of " << last_ << "), " << w_ << " warps per block, "
          << s_.config.nrhs_block << " right-hand side(s) per pass"
          << (s_.config.fast_math ? ", fast math" : ", IEEE sqrt/division") << ".\n"
          << "// Lane l of every warp works on system blockIdx.x * 32 + l; the block factors its 32 matrices "
             "left-looking,\n// then solves with the factor it wrote, for the matrices that did not fail.\n";
        return h.str();
    }

    const bool fold_;  // coop_posv_folds_forward
    const int nrb_;
    CoopPotrfGenerator factor_;
    CoopPotrsGenerator solve_;
};

}  // namespace

namespace {

// The two phases' shares of a spec (posv has both; potrf only the first, potrs only the second).
int factor_registers(const InterleavedKernelSpec& spec) {
    return potrf_live_registers(spec.precision, std::clamp(spec.config.nb, 1, std::max(spec.n, 1)));
}
int solve_registers(const InterleavedKernelSpec& spec) {
    const CholeskyConfig& c = spec.config;
    const int nb = std::clamp(c.nb, 1, std::max(spec.n, 1));
    const int w = std::max(c.warps_per_matrix, 1), nrb = std::max(c.nrhs_block, 1);
    const int slots = ceil_div(ceil_div(spec.n, nb), w);
    const int cols = prefetch_columns(nb, nb, spec.precision);
    return words_of(spec.precision) * (slots * nb * nrb + cols * nb + cols * nrb);
}
std::size_t factor_buffer_bytes(const InterleavedKernelSpec& spec) {  // the two L_KK buffers
    const std::size_t tri = static_cast<std::size_t>(spec.config.nb) * (spec.config.nb + 1) / 2;
    return 2 * tri * coop_systems_per_block * bytes_of(spec.precision);
}
std::size_t solve_buffer_bytes(const InterleavedKernelSpec& spec) {  // the two y / x buffers
    return 2 * static_cast<std::size_t>(spec.config.nb) * spec.config.nrhs_block * coop_systems_per_block *
           bytes_of(spec.precision);
}
constexpr std::size_t flag_buffer_bytes = 2 * coop_systems_per_block * sizeof(int);
// posv: the rows of the first group of right-hand sides, when the forward substitution is folded.
std::size_t folded_rhs_bytes(const InterleavedKernelSpec& spec) {
    return static_cast<std::size_t>(spec.n) * spec.config.nrhs_block * coop_systems_per_block * bytes_of(spec.precision);
}
// posv: the larger of the two phases' element buffers (a barrier separates the phases, so they share).
std::size_t posv_phase_bytes(const InterleavedKernelSpec& spec) {
    return std::max(factor_buffer_bytes(spec), solve_buffer_bytes(spec));
}

}  // namespace

bool coop_posv_folds_forward(const InterleavedKernelSpec& spec) {
    return spec.routine == Routine::posv &&
           posv_phase_bytes(spec) + folded_rhs_bytes(spec) + flag_buffer_bytes <= coop_max_shared_bytes;
}

std::size_t coop_posv_rhs_offset(const InterleavedKernelSpec& spec) { return posv_phase_bytes(spec); }

bool is_cooperative(const InterleavedKernelSpec& spec) {
    return spec.config.warps_per_matrix != 0;  // every routine has a cooperative kernel
}

int default_coop_nb(int n, int warps) { return std::clamp(n / (2 * std::max(warps, 1)), 1, 8); }

int default_coop_potrf_nb(Precision precision, int n, int warps) {
    const int top = std::min(coop_potrf_max_default_nb, std::max(n, 1));
    const int want = std::clamp(n / (2 * std::max(warps, 1)), std::min(coop_potrf_min_default_nb, top), top);
    for (int nb = want; nb > 1; --nb)
        if (potrf_live_registers(precision, nb) + coop_potrf_register_overhead <= coop_register_cap)
            return nb;
    return 1;
}

int estimated_coop_registers(const InterleavedKernelSpec& spec) {
    switch (spec.routine) {
        case Routine::potrf: return factor_registers(spec);
        case Routine::potrs: return solve_registers(spec);
        case Routine::posv: return std::max(factor_registers(spec), solve_registers(spec));
    }
    return 0;
}

int coop_min_blocks(const InterleavedKernelSpec& spec) {
    if (spec.config.max_registers > 0) return 1;
    // the phases run one after the other: the cap must hold the larger of their needs
    int need = 0;
    if (spec.routine != Routine::potrs) need = std::max(need, factor_registers(spec) + coop_potrf_register_overhead);
    if (spec.routine != Routine::potrf)
        need = std::max(need, solve_registers(spec) + coop_register_overhead * words_of(spec.precision));
    const int cap = std::max(coop_register_cap, need);
    return std::max(1, coop_registers_per_sm / (cap * coop_systems_per_block * std::max(spec.config.warps_per_matrix, 1)));
}

std::size_t coop_shared_bytes(const InterleavedKernelSpec& spec) {
    switch (spec.routine) {
        case Routine::potrf: return factor_buffer_bytes(spec) + flag_buffer_bytes;
        case Routine::potrs: return solve_buffer_bytes(spec);
        case Routine::posv:
            return posv_phase_bytes(spec) + (coop_posv_folds_forward(spec) ? folded_rhs_bytes(spec) : 0) + flag_buffer_bytes;
    }
    return 0;
}

CoopLaunchShape coop_launch_shape(const InterleavedKernelSpec& spec, int count, int nrhs, int multiprocessors) {
    CoopLaunchShape s;
    const int groups = ceil_div(count, coop_systems_per_block);
    const long long cap = static_cast<long long>(spec.config.grid_blocks_per_sm) * std::max(multiprocessors, 1);
    s.grid_x = static_cast<unsigned>(spec.config.grid_blocks_per_sm > 0 ? std::min<long long>(groups, cap) : groups);
    s.grid_y = spec.routine != Routine::potrs  // potrf: no right-hand sides; posv: one factorisation per group
                   ? 1u
                   : static_cast<unsigned>(std::min(ceil_div(nrhs, spec.config.nrhs_block), coop_max_grid_y));
    s.block_x = static_cast<unsigned>(coop_systems_per_block * spec.config.warps_per_matrix);
    s.shared_bytes = coop_shared_bytes(spec);
    return s;
}

std::string interleaved_coop_spec_problem(const InterleavedKernelSpec& spec) {
    const CholeskyConfig& c = spec.config;
    const int n = spec.n;
    const bool factors = spec.routine != Routine::potrs;  // potrf, posv
    const bool solves = spec.routine != Routine::potrf;   // potrs, posv
    const std::string kernel = "the cooperative " + std::string(to_string(spec.routine)) + " kernel";
    if (!valid_warp_count(c.warps_per_matrix))
        return "warps_per_matrix: 0 (one thread per matrix) or 2, 4, 8 for " + kernel + " (got " + S(c.warps_per_matrix) +
               ")";
    if (n < 1 || n > coop_max_n) return "n: 1 <= n <= " + S(coop_max_n) + " (got " + S(n) + ")";
    if (c.nb < 1 || c.nb > n) return "nb: 1 <= nb <= n = " + S(n) + " (got " + S(c.nb) + ")";
    if (c.threads_per_block != 32 * c.warps_per_matrix)
        return "threads_per_block: 32 * warps_per_matrix = " + S(32 * c.warps_per_matrix) + " for the cooperative kernel (got " +
               S(c.threads_per_block) + "; resolve_interleaved_config sets it)";
    if (factors && c.looking != Looking::left)
        return "looking: left for " + kernel + " (got " + batchsolve::to_string(c.looking) +
               "; resolve_interleaved_config sets it)";
    if (c.full_unroll) return "full_unroll: not offered by the cooperative kernel (its step loops stay loops)";
    if (c.matrices_per_block != 0) return "matrices_per_block: 0 for the cooperative kernel (it serves 32 systems per block)";
    if (c.grid_blocks_per_sm < 0 || c.grid_blocks_per_sm > coop_max_grid_blocks_per_sm)
        return "grid_blocks_per_sm: 0 (one block per 32 systems) or 1.." + S(coop_max_grid_blocks_per_sm) + " (got " +
               S(c.grid_blocks_per_sm) + ")";
    if (c.rows_per_thread != 0) return "rows_per_thread: 0 for the interleaved kernels";
    if (c.threads_per_row != 0) return "threads_per_row: 0 for the interleaved kernels";
    if (solves && (c.nrhs_block < 1 || c.nrhs_block > max_nrhs_block))
        return "nrhs_block: 1 <= nrhs_block <= " + S(max_nrhs_block) + " (got " + S(c.nrhs_block) + ")";
    if (c.max_registers != 0 && (c.max_registers < 24 || c.max_registers > 255))
        return "max_registers: 0 or 24..255 (got " + S(c.max_registers) + ")";
    if (c.chunk_size < 0) return "chunk_size: >= 0 (got " + S(c.chunk_size) + ")";
    if (coop_shared_bytes(spec) > coop_max_shared_bytes) {
        // blame the phase whose buffers are the larger (posv shares them between the phases)
        if (factors && (!solves || factor_buffer_bytes(spec) >= solve_buffer_bytes(spec)))
            return "nb: two nb(nb+1)/2 x 32-element buffers of shared memory = " + S(coop_shared_bytes(spec)) +
                   " bytes, more than " + S(coop_max_shared_bytes);
        return "nrhs_block: 2 * nb * nrhs_block * 32 elements of shared memory = " + S(coop_shared_bytes(spec)) +
               " bytes, more than " + S(coop_max_shared_bytes);
    }
    if (factors && factor_registers(spec) > max_tile_registers)
        return "nb: each thread would keep ~" + S(factor_registers(spec)) + " registers of tile and operand values (nb = " +
               S(c.nb) + "), more than " + S(max_tile_registers);
    if (solves && solve_registers(spec) > max_tile_registers)
        return "nb: each thread would keep ~" + S(solve_registers(spec)) +
               " registers of right-hand sides and factor values (nb = " + S(c.nb) + ", nrhs_block = " +
               S(c.nrhs_block) + ", " + S(c.warps_per_matrix) + " warps), more than " + S(max_tile_registers);
    return "";
}

std::string interleaved_coop_kernel_name(const InterleavedKernelSpec& spec) {
    const CholeskyConfig& c = spec.config;
    std::string name = std::string(to_string(spec.routine)) + "_interleaved_coop_" + precision_letter(spec.precision) +
                       "_" + batchsolve::to_string(spec.uplo) + "_n" + S(spec.n) + "_nb" + S(c.nb) + "_w" +
                       S(c.warps_per_matrix);
    if (spec.routine != Routine::potrf) name += "_r" + S(c.nrhs_block);
    if (c.fast_math) name += "_fast";
    if (c.max_registers > 0) name += "_reg" + S(c.max_registers);
    if (spec.wide_index) name += "_i64";
    return name;
}

codegen::KernelSource generate_interleaved_coop_kernel(const InterleavedKernelSpec& spec) {
    const std::string problem = interleaved_coop_spec_problem(spec);
    if (!problem.empty()) {
        const auto colon = problem.find(':');
        const std::string field = problem.substr(0, colon);
        throw InvalidArgument("generate_interleaved_coop_kernel", field == "n" ? "a.rows" : "config." + field,
                              problem.substr(colon + 2));
    }
    CoopText text(1);
    switch (spec.routine) {
        case Routine::potrf: return CoopPotrfGenerator(spec, text).generate();
        case Routine::potrs: return CoopPotrsGenerator(spec, text).generate();
        case Routine::posv: return CoopPosvGenerator(spec, text).generate();
    }
    return {};
}

}  // namespace batchsolve::codegen::cholesky
