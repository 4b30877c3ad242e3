// The half-iteration of ALS behind one interface, with a CPU engine (OpenMP + BLAS + the reference
// posv) and a CUDA engine (cuBLAS Gram matrix, a gather kernel, the batched posv), so that the
// training loop never knows which one runs.
//
// One half-iteration solves, for every row r of `rows` (a user, or an item), the s x s system
//   implicit:  (G + sum_j (c_rj - 1) d_j d_j^T + lambda I) x_r = sum_j c_rj d_j,     G = D^T D
//   explicit:  (sum_j d_j d_j^T + lambda max(n_r, 1) I) x_r = sum_j (v_rj - o_j) d_j  (ALS-WR)
// where j runs over the row's entries, d_j is row j of the other side's factors D, c_rj (implicit)
// or v_rj (explicit) the prepared value of the entry. With biases (explicit only) the factors carry
// their bias in the last of the s columns: d_j is the other side's row with that column replaced by
// 1 and o_j is the bias it held, so x_r's last entry is this side's bias. A system that is not
// positive definite (lambda = 0 on an empty row) yields x_r = 0 and is counted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ratings.hpp"

namespace als {

// How the systems are stored for the batched solver (the GPU engine measures both).
enum class SystemLayout { column_major, interleaved, chunked };
SystemLayout parse_layout(const std::string& text);
const char* to_string(SystemLayout l);

struct EngineSettings {
    int width = 64;             // s: factors per row, including the bias column when biases is on
    bool implicit = true;
    bool biases = false;        // explicit only
    float lambda = 0.01f;
    SystemLayout layout = SystemLayout::column_major;
    int chunk_size = 32;        // chunked layout only
    // Systems built and solved at once are limited to this many bytes of matrices (GPU: bounds its
    // memory on very large batches; 0: everything at once).
    std::uint64_t slice_bytes = 0;
};

struct HalfTiming {
    double build_s = 0, solve_s = 0;
    std::int64_t failed = 0;  // systems that were not positive definite (their rows set to 0)
};

class Engine {
public:
    virtual ~Engine() = default;
    // Factors of both sides, row-major (rows x width), in and out of the engine's memory.
    virtual void set_factors(const std::vector<float>& users, const std::vector<float>& items) = 0;
    virtual void get_factors(std::vector<float>& users, std::vector<float>& items) = 0;
    virtual HalfTiming solve_users() = 0;  // against the item factors
    virtual HalfTiming solve_items() = 0;  // against the user factors
    virtual std::string device() const = 0;
    // Peak bytes of device memory the engine held (0 for the CPU engine).
    virtual std::uint64_t peak_device_bytes() const { return 0; }
};

// by_user and by_item hold the prepared values (confidence c for implicit, rating minus the global
// mean for explicit) and must stay alive as long as the engine.
std::unique_ptr<Engine> make_cpu_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings);
// Throws Error "built without CUDA" in a CPU-only build, and, before any work, when the data and
// workspace would not fit in the GPU's memory (naming the bytes needed and available).
std::unique_ptr<Engine> make_cuda_engine(const Csr& by_user, const Csr& by_item, const EngineSettings& settings);
bool cuda_engine_available();  // compiled in and a device present

// Bytes the CUDA engine needs for this problem (CSR on both sides, factors, one slice of systems,
// right-hand sides, info), for the up-front check and --help text.
std::uint64_t cuda_engine_bytes(const Csr& by_user, const Csr& by_item, const EngineSettings& settings);

}  // namespace als
