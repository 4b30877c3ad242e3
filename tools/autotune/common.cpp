// The autotuner's small helpers: layout families, sizes, the short text of a configuration.
#include "common.hpp"

namespace batchsolve::autotune {

const char* to_string(Family f) {
    switch (f) {
        case Family::interleaved: return "interleaved";
        case Family::chunked: return "chunked";
        case Family::column_major: return "column_major";
    }
    return "?";
}
Family parse_family(const std::string& t) {
    if (t == "interleaved") return Family::interleaved;
    if (t == "chunked") return Family::chunked;
    if (t == "column_major") return Family::column_major;
    throw InvalidArgument("autotune", "layout", "'" + t + "' is not one of interleaved, chunked, column_major");
}
LayoutKind layout_of(Family f) {
    switch (f) {
        case Family::interleaved: return LayoutKind::interleaved;
        case Family::chunked: return LayoutKind::chunked_interleaved;
        case Family::column_major: return LayoutKind::column_major;
    }
    return LayoutKind::column_major;
}


double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::size_t align_up(std::size_t bytes) { return (bytes + kRegionAlign - 1) / kRegionAlign * kRegionAlign; }

int words_per_element(Precision p) { return p == Precision::s ? 1 : p == Precision::z ? 4 : 2; }
std::size_t element_bytes(Precision p) { return std::size_t(4) * words_per_element(p); }

std::string joined(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
    return out;
}

std::string short_text(const CholeskyConfig& c, Family f, Routine r) {
    if (c.through_interleaved) {
        CholeskyConfig k = c;
        k.through_interleaved = false;
        return "through interleaved: " + short_text(k, Family::interleaved, r);
    }
    std::string t;
    if (f == Family::column_major && c.staged) {
        t = "staged, panel " + std::to_string(c.nb) + ", " + std::to_string(c.warps_per_matrix) + " warps x " +
            std::to_string(c.matrices_per_block) + " matrices per block" + (c.tensor_cores ? ", tensor cores" : "");
        return t;
    }
    if (f == Family::column_major) {
        if (r != Routine::potrs)
            t = "rows " + std::to_string(c.rows_per_thread) + " x threads " + std::to_string(c.threads_per_row) +
                ", chunk " + std::to_string(c.nb) + (c.full_unroll ? ", unrolled" : ", blocked") + ", ";
    } else {
        t = "nb " + std::to_string(c.nb) + (r == Routine::potrs ? "" : std::string(", ") + to_string(c.looking)) +
            (c.full_unroll ? ", unrolled" : ", partial") + ", ";
        if (f == Family::chunked) t += "chunk " + std::to_string(c.chunk_size) + ", ";
        if (c.warps_per_matrix > 0) t += "cooperative, " + std::to_string(c.warps_per_matrix) + " warps per 32 systems, ";
        if (c.grid_blocks_per_sm > 0) t += "grid " + std::to_string(c.grid_blocks_per_sm) + " blocks/SM, ";
    }
    t += std::to_string(c.threads_per_block) + " threads/block";
    if (r != Routine::potrf && c.nrhs_block > 1) t += ", nrhs_block " + std::to_string(c.nrhs_block);
    if (c.solve_warps_per_matrix > 0)
        t += "; then potrs: " + (c.solve_nb > 0 ? "nb " + std::to_string(c.solve_nb) : std::string("default nb")) +
             ", cooperative, " + std::to_string(c.solve_warps_per_matrix) + " warps";
    return t;
}

}  // namespace batchsolve::autotune
