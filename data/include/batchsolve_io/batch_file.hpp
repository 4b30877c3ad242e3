// Reading and writing batchsolve batch files (HDF5): a batch of Hermitian positive definite systems
// A_k X_k = B_k, and the solution files that `bsolve solve` writes. The schema is data/README.md.
//
// All matrices are held in memory exactly as the library wants them on the host: packed column-major
// (ld = n, stride = n * n for A; ld = n, stride = n * nrhs for B and X), so a loaded batch goes to a
// batchsolve::Buffer without reshuffling. Malformed files raise FileError with a one-line message
// "<file>: <dataset>: <reason>"; HDF5's own error printing is silenced during every call.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "batchsolve/types.hpp"

namespace batchsolve::io {

inline constexpr const char* batch_format = "batchsolve-batch";
inline constexpr const char* solution_format = "batchsolve-solution";
inline constexpr int format_version = 1;  // the version this code writes and the newest it reads

// A file that cannot be read or written as asked. what() is one line: "<file>: <dataset>: <reason>";
// dataset is "/" for the file itself and its root attributes.
class FileError : public Error {
public:
    FileError(std::string file, std::string dataset, std::string reason);
    const std::string& file() const { return file_; }
    const std::string& dataset() const { return dataset_; }
    const std::string& reason() const { return reason_; }

private:
    std::string file_, dataset_, reason_;
};

// What to do when an output file already exists.
enum class Existing { refuse, replace };

// The rules an output file is written by. Always: the target must be a regular file (a device, a
// directory or a FIFO is refused, never replaced), not read-only (no write permission bit) and none of
// `inputs` (the same file by device and inode, whatever the path); an existing target is replaced
// only with Existing::replace, keeping its permissions. The write is atomic (temporary + rename).
struct OutputOptions {
    Existing existing = Existing::replace;
    std::vector<std::string> inputs;  // the files the same run reads
};

// Applies the rules of `options` to `path` without writing anything: a program calls it before
// lengthy work so that a refused output is reported at once (write_batch checks again).
void check_output(const std::string& path, const OutputOptions& options);

// Where a generated batch came from (root attributes generator, generator_cond, generator_seed);
// every field is optional in the file.
struct GeneratorInfo {
    std::string name;               // e.g. "bsolve generate 0.1.0"; empty when absent
    std::optional<double> cond;     // requested 2-norm condition number of each matrix
    std::optional<std::uint64_t> seed;
};

// One batch of systems. Sizes: a has count*n*n, b has count*n*nrhs, x_true is empty or like b,
// expected_info is empty or has count entries.
template <class T>
struct BatchProblem {
    Uplo uplo = Uplo::lower;  // the triangle of A a solver reads (the file may hold both)
    int n = 0;
    int count = 0;
    int nrhs = 0;
    std::vector<T> a;              // a[k*n*n + j*n + i] = A_k(i, j)
    std::vector<T> b;              // b[k*n*nrhs + r*n + i] = B_k(i, r)
    std::vector<T> x_true;         // a known solution, when the file has /X_true
    std::vector<int> expected_info;  // the info a correct solver returns, when the file has /expected_info
    GeneratorInfo generator;
};

using AnyBatchProblem = std::variant<BatchProblem<float>, BatchProblem<double>, BatchProblem<std::complex<float>>,
                                     BatchProblem<std::complex<double>>>;

// What a batch file holds, from its attributes and dataset shapes, all checked; no data read.
struct BatchFileInfo {
    Precision precision = Precision::d;
    Uplo uplo = Uplo::lower;
    int n = 0;
    int count = 0;
    int nrhs = 0;
    bool has_x_true = false;
    bool has_expected_info = false;
    GeneratorInfo generator;
};

BatchFileInfo inspect_batch(const std::string& path);

// Reads a batch; the file's precision must be that of T (FileError otherwise).
template <class T>
BatchProblem<T> read_batch(const std::string& path);
// Reads a batch in whatever precision the file holds.
AnyBatchProblem read_any_batch(const std::string& path);

// Writes atomically: into "<path>.tmp-<pid>-<k>" beside the target, renamed over `path` on success
// and removed on any failure, so no half-written file is ever left; the target is checked by
// `options` (OutputOptions) before anything is written. Sizes that disagree with n, count and nrhs
// throw InvalidArgument before anything is created.
template <class T>
void write_batch(const std::string& path, const BatchProblem<T>& problem, const OutputOptions& options = {});

// How a solution was obtained (root attributes of a solution file).
struct SolveRecord {
    std::string source;          // the batch file that was solved
    std::string backend;         // "cpu" | "cuda"
    std::string device;          // Context::device_name()
    std::string solve_layout;    // layout the solver ran on: column_major | pointer_array | interleaved | chunked
    int chunk_size = 0;          // chunked only
    double time_s = 0;           // seconds in posv_batched, synchronised, excluding transfers and conversions
    double max_backward_error = 0;             // over matrices with info == 0 (NaN when there are none)
    std::optional<double> max_forward_error;   // ||X - X_true||_F / ||X_true||_F, when X_true was known
};

// The solution of a batch. x is like BatchProblem::b (NaN for matrices with info != 0); info has
// count entries; factor is empty or count*n*n (the Cholesky factor in the uplo triangle).
template <class T>
struct BatchSolution {
    Uplo uplo = Uplo::lower;
    int n = 0;
    int count = 0;
    int nrhs = 0;
    std::vector<T> x;
    std::vector<int> info;
    std::vector<T> factor;
    SolveRecord record;
};

template <class T>
void write_solution(const std::string& path, const BatchSolution<T>& solution,
                    const OutputOptions& options = {});  // atomic and checked, as write_batch
template <class T>
BatchSolution<T> read_solution(const std::string& path);

// The precision attribute of a batch or solution file.
Precision file_precision(const std::string& path);
// The format attribute of a batch or solution file: batch_format or solution_format (FileError for
// anything else).
std::string file_format(const std::string& path);

}  // namespace batchsolve::io
