// Source generator of the cooperative interleaved potrs kernel (see interleaved_coop_codegen.hpp).
//
// Algorithm: the n rows of each system are cut into T = ceil(n / nb) tile rows (the last one
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
#include "interleaved_coop_codegen.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

namespace batchsolve::cuda_backend::tuned {

namespace {

constexpr int coop_max_n = 256;  // as the one-thread kernels: beyond it another algorithm is better

int ceil_div(int a, int b) { return (a + b - 1) / b; }
bool is_complex(Precision p) { return p == Precision::c || p == Precision::z; }
bool is_single(Precision p) { return p == Precision::s || p == Precision::c; }
int words_of(Precision p) { return (is_complex(p) ? 2 : 1) * (is_single(p) ? 1 : 2); }
std::size_t bytes_of(Precision p) { return 4 * static_cast<std::size_t>(words_of(p)); }
bool valid_warp_count(int w) {
    return std::find(std::begin(coop_warp_counts), std::end(coop_warp_counts), w) != std::end(coop_warp_counts);
}
std::string S(long long v) { return std::to_string(v); }

// Columns of an update tile loaded before their FMAs (see coop_prefetch_registers).
int prefetch_columns(int rows, int nb, Precision p) {
    return std::clamp(coop_prefetch_registers / (rows * words_of(p)), 1, nb);
}

// "k * w" written the short way, for literal element offsets.
std::string scaled(long long k, const std::string& w) {
    if (k == 0) return "0";
    if (k == 1) return w;
    return S(k) + " * " + w;
}

class CoopGenerator {
public:
    explicit CoopGenerator(const InterleavedKernelSpec& spec)
        : s_(spec), n_(spec.n), nb_(spec.config.nb), w_(spec.config.warps_per_matrix), nrb_(spec.config.nrhs_block),
          tiles_(ceil_div(spec.n, spec.config.nb)), last_(spec.n - (ceil_div(spec.n, spec.config.nb) - 1) * spec.config.nb),
          slots_(ceil_div(ceil_div(spec.n, spec.config.nb), spec.config.warps_per_matrix)),
          complex_(is_complex(spec.precision)), upper_(spec.uplo == Uplo::upper) {
        one_ = is_single(spec.precision) ? "1.0f" : "1.0";
    }

    jit::KernelSource generate() {
        jit::KernelSource k;
        k.kernel_name = interleaved_coop_kernel_name(s_);
        std::ostringstream src;
        src << header_comment() << interleaved_prelude(s_.precision, s_.wide_index, n_) << cuda_prelude();
        src << kernel(k.kernel_name) << host_entry(k.kernel_name);
        k.source = src.str();
        if (s_.config.fast_math) k.options.push_back("--use_fast_math");
        if (s_.config.max_registers > 0) k.options.push_back("--maxrregcount=" + S(s_.config.max_registers));
        return k;
    }

private:
    // ---- text output -----------------------------------------------------------------------------
    void line(const std::string& text) { body_ << std::string(2 * indent_, ' ') << text << '\n'; }
    void open(const std::string& head) { line(head.empty() ? "{" : head + " {"); ++indent_; }
    void close() { --indent_; line("}"); }
    std::string fresh() { return S(counter_++); }

    // Slot t's value of row i, right-hand side c.
    static std::string y(int t, int i, int c) { return "y" + S(t) + "_" + S(i) + "_" + S(c); }
    static std::string row_of(int t) { return "tr" + S(t); }  // the tile row slot t holds
    // y_I / x_I of the current step in shared memory: [buffer][row][rhs][system], 32 consecutive
    // systems in consecutive words, so a warp's access is conflict-free.
    std::string shared_at(int i, int c) const { return "yb[" + S((i * nrb_ + c) * coop_systems_per_block) + " + sys]"; }

    // ---- factor access (lower coordinates; upper reads U(j, i) conjugated) -------------------------
    struct Tile {
        std::string ptr, stride;
    };
    // Pointer to the tile of L at tile row `ti`, tile column `tj` (expressions), with its own copy of
    // the chunk width hidden from the optimiser (as in interleaved_codegen.cpp): the element offsets
    // k * w are then recomputed per load instead of being kept live across the kernel.
    Tile tile(const std::string& ti, const std::string& tj) {
        const std::string id = fresh();
        const std::string row = upper_ ? tj : ti, col = upper_ ? ti : tj;  // storage coordinates
        line("const T* p" + id + " = a + (" + col + " * " + S(nb_ * n_) + " + " + row + " * " + S(nb_) + ") * w;");
        line("idx_t w" + id + " = w;");
        line("BS_OPAQUE(w" + id + ");");
        return Tile{"p" + id, "w" + id};
    }
    // L(r, c) of the tile (conj_lower: conj(L(r, c))).
    std::string load(const Tile& t, int r, int c, bool conj_lower = false) const {
        const int off = upper_ ? r * n_ + c : c * n_ + r;
        const std::string e = t.ptr + "[" + scaled(off, t.stride) + "]";
        return complex_ && (upper_ != conj_lower) ? "bs_conj(" + e + ")" : e;
    }
    std::string load_real(const Tile& t, int r) const {
        const std::string e = t.ptr + "[" + scaled(r * n_ + r, t.stride) + "]";
        return complex_ ? e + ".re" : e;
    }

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
                open("if (active" + rel + ")");
                body(t, nb_);
                close();
                continue;
            }
            if (last_ == nb_) {  // the last tile row is a full one: one copy, guarded against missing rows
                if (!last_possible && !may_hold_full) continue;
                open("if (active && " + row + " < " + S(last_possible ? tiles_ : tiles_ - 1) + rel + ")");
                body(t, nb_);
                close();
                continue;
            }
            std::string head = "if";
            if (last_possible) {
                open("if (active && " + row + " == " + S(tiles_ - 1) + rel + ")");
                body(t, last_);
                close();
                head = "else if";
            }
            if (may_hold_full) {
                open(head + " (active && " + row + " < " + S(tiles_ - 1) + rel + ")");
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
        open("if (active && " + row_of(slots_ - 1) + " == " + last + ")");
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
            open("if (active && " + row_of(0) + " == 0)");
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
        indent_ = 1;
        line("BS_DECLARE_SMEM(bs_smem);");
        line("T* const ys = reinterpret_cast<T*>(bs_smem);  // [2][" + S(nb_) + "][" + S(nrb_) + "][" +
             S(coop_systems_per_block) + "]: y or x of the tile row just solved");
        line("const int sys = threadIdx.x % " + S(coop_systems_per_block) + ";  // this lane's system in the block");
        line("const int warp = threadIdx.x / " + S(coop_systems_per_block) + ";");
        line("const int first = blockIdx.x * " + S(coop_systems_per_block) + ";");
        line("const bool active = first + sys < count;  // idle lanes of the last block: barriers only, no memory access");
        line("const int mat = active ? first + sys : count - 1;  // keeps the address arithmetic in range");
        body_ << interleaved_locate_code(true, true, std::string(2 * indent_, ' '));
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
        open("for (int g = blockIdx.y; g < groups; g += gridDim.y)");
        solve_group();
        close();
        const std::string params = "(const T* __restrict__ a_batch, T* __restrict__ b_batch, int nrhs, int count, int chunk)";
        std::string text = "BS_KERNEL_HEAD(" + S(32 * w_) + ", " + S(coop_min_blocks(s_)) + ") " + name + params +
                           " {\n" + body_.str() + "}\n\n";
        body_.str("");
        return text;
    }

    std::string host_entry(const std::string& name) const {
        return "#ifdef BS_HOST_EMULATION\ninline void bs_host_entry(void** args) {\n  " + name +
               "(*static_cast<const T**>(args[0]), *static_cast<T**>(args[1]), *static_cast<int*>(args[2]),\n"
               "    *static_cast<int*>(args[3]), *static_cast<int*>(args[4]));\n}\n#endif\n";
    }

    static std::string cuda_prelude() {
        return "#ifndef BS_HOST_EMULATION\n"
               "#define BS_DECLARE_SMEM(name) extern __shared__ __align__(16) unsigned char name[]\n"
               "#define BS_KERNEL_HEAD(threads, min_blocks) extern \"C\" __global__ void __launch_bounds__(threads, min_blocks)\n"
               "// compiler-only memory fence: bounds how far loads are hoisted (and so the registers they hold)\n"
               "#define BS_FENCE() asm volatile(\"\" ::: \"memory\")\n"
               "#endif\n\n";
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

    const InterleavedKernelSpec& s_;
    const int n_, nb_, w_, nrb_, tiles_, last_, slots_;
    const bool complex_, upper_;
    std::string one_;
    std::ostringstream body_;
    int indent_ = 1;
    int counter_ = 0;
};

}  // namespace

int default_coop_nb(int n, int warps) { return std::clamp(n / (2 * std::max(warps, 1)), 1, 8); }

int estimated_coop_registers(const InterleavedKernelSpec& spec) {
    const CholeskyConfig& c = spec.config;
    const int nb = std::clamp(c.nb, 1, std::max(spec.n, 1));
    const int w = std::max(c.warps_per_matrix, 1), nrb = std::max(c.nrhs_block, 1);
    const int slots = ceil_div(ceil_div(spec.n, nb), w);
    const int cols = prefetch_columns(nb, nb, spec.precision);
    return words_of(spec.precision) * (slots * nb * nrb + cols * nb + cols * nrb);
}

int coop_min_blocks(const InterleavedKernelSpec& spec) {
    if (spec.config.max_registers > 0) return 1;
    const int overhead = coop_register_overhead * words_of(spec.precision);
    const int cap = std::max(coop_register_cap, estimated_coop_registers(spec) + overhead);
    return std::max(1, coop_registers_per_sm / (cap * coop_systems_per_block * std::max(spec.config.warps_per_matrix, 1)));
}

std::size_t coop_shared_bytes(const InterleavedKernelSpec& spec) {
    return 2 * static_cast<std::size_t>(spec.config.nb) * spec.config.nrhs_block * coop_systems_per_block *
           bytes_of(spec.precision);
}

CoopLaunchShape coop_launch_shape(const InterleavedKernelSpec& spec, int count, int nrhs) {
    CoopLaunchShape s;
    s.grid_x = static_cast<unsigned>(ceil_div(count, coop_systems_per_block));
    s.grid_y = static_cast<unsigned>(std::min(ceil_div(nrhs, spec.config.nrhs_block), coop_max_grid_y));
    s.block_x = static_cast<unsigned>(coop_systems_per_block * spec.config.warps_per_matrix);
    s.shared_bytes = coop_shared_bytes(spec);
    return s;
}

std::string interleaved_coop_spec_problem(const InterleavedKernelSpec& spec) {
    const CholeskyConfig& c = spec.config;
    const int n = spec.n;
    if (spec.routine != Routine::potrs)
        return "warps_per_matrix: the cooperative interleaved kernel is potrs only (got " + std::string(to_string(spec.routine)) + ")";
    if (!valid_warp_count(c.warps_per_matrix))
        return "warps_per_matrix: 0 (one thread per system) or 2, 4, 8 for the cooperative potrs kernel (got " +
               S(c.warps_per_matrix) + ")";
    if (n < 1 || n > coop_max_n) return "n: 1 <= n <= " + S(coop_max_n) + " (got " + S(n) + ")";
    if (c.nb < 1 || c.nb > n) return "nb: 1 <= nb <= n = " + S(n) + " (got " + S(c.nb) + ")";
    if (c.threads_per_block != 32 * c.warps_per_matrix)
        return "threads_per_block: 32 * warps_per_matrix = " + S(32 * c.warps_per_matrix) + " for the cooperative kernel (got " +
               S(c.threads_per_block) + "; resolve_interleaved_config sets it)";
    if (c.full_unroll) return "full_unroll: not offered by the cooperative kernel (its step loops stay loops)";
    if (c.matrices_per_block != 0) return "matrices_per_block: 0 for the cooperative kernel (it serves 32 systems per block)";
    if (c.rows_per_thread != 0) return "rows_per_thread: 0 for the interleaved kernels";
    if (c.threads_per_row != 0) return "threads_per_row: 0 for the interleaved kernels";
    if (c.nrhs_block < 1 || c.nrhs_block > max_nrhs_block)
        return "nrhs_block: 1 <= nrhs_block <= " + S(max_nrhs_block) + " (got " + S(c.nrhs_block) + ")";
    if (c.max_registers != 0 && (c.max_registers < 24 || c.max_registers > 255))
        return "max_registers: 0 or 24..255 (got " + S(c.max_registers) + ")";
    if (c.chunk_size < 0) return "chunk_size: >= 0 (got " + S(c.chunk_size) + ")";
    if (coop_shared_bytes(spec) > coop_max_shared_bytes)
        return "nrhs_block: 2 * nb * nrhs_block * 32 elements of shared memory = " + S(coop_shared_bytes(spec)) +
               " bytes, more than " + S(coop_max_shared_bytes);
    const int regs = estimated_coop_registers(spec);
    if (regs > max_tile_registers)
        return "nb: each thread would keep ~" + S(regs) + " registers of right-hand sides and factor values (nb = " +
               S(c.nb) + ", nrhs_block = " + S(c.nrhs_block) + ", " + S(c.warps_per_matrix) + " warps), more than " +
               S(max_tile_registers);
    return "";
}

std::string interleaved_coop_kernel_name(const InterleavedKernelSpec& spec) {
    const CholeskyConfig& c = spec.config;
    std::string name = std::string("potrs_interleaved_coop_") + precision_letter(spec.precision) + "_" +
                       batchsolve::to_string(spec.uplo) + "_n" + S(spec.n) + "_nb" + S(c.nb) + "_w" +
                       S(c.warps_per_matrix) + "_r" + S(c.nrhs_block);
    if (c.fast_math) name += "_fast";
    if (c.max_registers > 0) name += "_reg" + S(c.max_registers);
    if (spec.wide_index) name += "_i64";
    return name;
}

jit::KernelSource generate_interleaved_coop_kernel(const InterleavedKernelSpec& spec) {
    const std::string problem = interleaved_coop_spec_problem(spec);
    if (!problem.empty()) {
        const auto colon = problem.find(':');
        const std::string field = problem.substr(0, colon);
        throw InvalidArgument("generate_interleaved_coop_kernel", field == "n" ? "a.rows" : "config." + field,
                              problem.substr(colon + 2));
    }
    return CoopGenerator(spec).generate();
}

}  // namespace batchsolve::cuda_backend::tuned
