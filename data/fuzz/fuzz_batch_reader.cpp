// libFuzzer target of the HDF5 batch reader (read_any_batch): any bytes as a batch file must give a
// batch or a batchsolve::Error, never a crash, a hang, a sanitizer report or another exception; a
// batch that loads is solved on the CPU backend, so that sizes the reader accepted but did not
// allocate (issue 22's wrapped shape) are caught where the solver reads them.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve_io/batch_file.hpp"

namespace {

// Solving is capped so that a large but valid batch does not slow the fuzzer down.
constexpr std::size_t max_solved_elements = std::size_t(1) << 16;

// One scratch file per process: HDF5 reads from a path.
const std::string& scratch_path() {
    static const std::string path = [] {
        const char* dir = std::getenv("TMPDIR");
        std::string p = std::string(dir != nullptr ? dir : "/tmp") + "/fuzz_batch_reader_" + std::to_string(::getpid()) + ".h5";
        return p;
    }();
    return path;
}

bool write_scratch(const std::uint8_t* data, std::size_t size) {
    FILE* f = std::fopen(scratch_path().c_str(), "wb");
    if (f == nullptr) return false;
    const bool ok = std::fwrite(data, 1, size, f) == size;
    return std::fclose(f) == 0 && ok;
}

template <class T>
void solve(batchsolve::io::BatchProblem<T>& p) {
    using namespace batchsolve;
    if (p.a.size() + p.b.size() > max_solved_elements) return;
    Context ctx(Backend::cpu);
    std::vector<int> info(std::size_t(p.count), -1);
    auto A = BatchView<T>::column_major(p.a.data(), p.n, p.n, p.count);
    auto B = BatchView<T>::column_major(p.b.data(), p.n, p.nrhs, p.count);
    posv_batched<T>(p.uplo, A, B, info.data(), ctx);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (!write_scratch(data, size)) std::abort();
    try {
        auto problem = batchsolve::io::read_any_batch(scratch_path());
        std::visit([](auto& p) { solve(p); }, problem);
    } catch (const batchsolve::Error&) {
        // A clear refusal (FileError, InvalidArgument) is the expected outcome for most inputs.
    }
    return 0;
}
