// CTest tester.cusolverdx_peer: the tester's reading of bench_cusolverdx (cusolverdx_peer.hpp), no GPU
// needed. A stand-in program answers --list with four configurations and a run with lines in the
// benchmark's format (those of float n = 8 from its 2026-11-26 H200 output, a configuration that failed
// its check, one whose every configuration failed, a case skipped for memory), then exits 3: the figures
// it printed are kept, the cases it did not reach say why, and a wrong program is refused by name.
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "cusolverdx_peer.hpp"

using batchsolve::validation::peer::CusolverDx;
using batchsolve::validation::peer::DxFigure;

namespace {

int failures = 0;

void expect(bool condition, const std::string& what) {
    if (!condition) {
        std::cerr << "FAILED: " << what << "\n";
        ++failures;
    }
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::fabs(b); }

const char* kStandIn = R"(#!/bin/sh
if [ "$1" = "--list" ]; then
  echo "# cuSolverDx 0.5.0 (MathDx 26.06.1), 4 configurations"
  echo "precision,n,routine,bpb,block_x,block_y,block_z,suggested,smem_bytes,symbol"
  echo "float,8,potrf,4,32,1,1,1,1024,cusolverdx_execute_a"
  echo "float,8,potrf,8,32,1,1,0,2048,cusolverdx_execute_b"
  echo "double,16,posv,2,32,1,1,1,4352,cusolverdx_execute_c"
  echo "double,128,potrf,1,128,1,1,1,131072,cusolverdx_execute_d"
  exit 0
fi
echo "$@" > "$(dirname "$0")/args.txt"
cat <<'CSV'
# device: NVIDIA H200, sm_90, 132 SMs, L2 61440 KiB, smem/block opt-in 232448 B, 139.8 GiB
# timing: median of 7 runs after 2 warm-up; A/B restored before each run; L2 flushed (cold) before each timed run
impl,precision,n,batch,routine,ms,GFLOP/s,roofline_fraction,err
# d2d copy: 1073741824 bytes, median 0.5040 ms, 4260.9 GB/s (read + written)
memcpy_d2d,byte,0,1073741824,copy,0.50400,4260.9,1.0000,0
# cfg cusolverdx_bpb4_t32 float n=8 potrf bpb=4 block=(32,1,1) suggested=1 smem=1024 regs=64
# WARNING cusolverdx_bpb16_t32 float n=8 batch=16384 potrf: err 312, excluded from best
# best cusolverdx float n=8 batch=16384 potrf: cusolverdx_bpb8_t32
cusolverdx,float,8,16384,potrf,0.00762,367.15,0.1454,0.385
cusolverdx_suggested,float,8,16384,potrf,0.00837,334.15,0.1323,0.385
cusolver,float,8,16384,potrf,0.06310,44.31,0.0175,0.241
# cusolverdx_bpb2_t32 double n=16 posv: 16384 matrices with info != 0
# best cusolverdx double n=16 batch=16384 posv: cusolverdx_bpb2_t32
cusolverdx,double,16,16384,posv,0.03100,900.00,0.2000,nan
# skip double n=128 batch=16384: needs 4.3 GB, 1.0 GB free
CSV
echo "bench_cusolverdx.cu:600: cudaMalloc -> out of memory" >&2
exit 3
)";

}  // namespace

int main() {
    char folder_template[] = "/tmp/tester-cusolverdx-XXXXXX";
    const char* folder_c = ::mkdtemp(folder_template);
    if (folder_c == nullptr) {
        std::perror("mkdtemp");
        return 1;
    }
    const std::string folder = folder_c;
    const std::string program = folder + "/bench_cusolverdx";
    {
        std::ofstream out(program);
        out << kStandIn;
    }
    ::chmod(program.c_str(), 0755);

    // Found beside the tester; an explicit path wins.
    ::unsetenv("BATCHSOLVE_CUSOLVERDX");
    expect(CusolverDx::locate("", folder) == program, "locate beside the tester");
    expect(CusolverDx::locate("/elsewhere/x", folder) == "/elsewhere/x", "locate: the option wins");
    expect(CusolverDx::locate("", "/nonexistent").empty(), "locate: nothing found");

    CusolverDx dx(program);
    expect(dx.configurations() == 4, "4 configurations listed");
    expect(dx.version() == "cuSolverDx 0.5.0 (MathDx 26.06.1), 4 configurations", "version line: " + dx.version());
    expect(dx.orders() == "8,16,128", "orders: " + dx.orders());
    expect(dx.has('s', 8, "potrf") && !dx.has('s', 8, "posv") && dx.has('d', 16, "posv"), "has()");

    // n = 12 has no configuration: left out of the command.
    dx.plan({'s', 'd'}, {8, 12, 16, 128}, {16384}, {"potrf", "posv"}, 7, 2, 60);
    expect(dx.run() && dx.ran(), "rows printed before exit status 3 are kept");
    expect(dx.exit_code() == 3, "exit status 3 recorded");
    expect(dx.why().find("exit status 3") != std::string::npos && dx.why().find("out of memory") != std::string::npos,
           "why names the status and the last line: " + dx.why());
    std::ifstream args_in(folder + "/args.txt");
    std::string args((std::istreambuf_iterator<char>(args_in)), std::istreambuf_iterator<char>());
    expect(args.find("--n 8,16,128 --prec float,double --batch 16384 --routine potrf,posv --reps 7 --warmup 2 --only-best") !=
               std::string::npos,
           "the command passes the plan: " + args);

    std::string note;
    const DxFigure* f = dx.find('s', 8, 16384, "potrf", note);
    expect(f != nullptr, "float n = 8 potrf found");
    if (f != nullptr) {
        expect(near(f->ms, 0.00762) && near(f->suggested_ms, 0.00837) && near(f->cusolver_ms, 0.06310), "its times");
        expect(near(f->error, 0.385), "its error");
        expect(f->config == "cusolverdx_bpb8_t32", "its configuration: " + f->config);
        expect(f->rejected == 1, "one configuration excluded from the best");
    }
    f = dx.find('d', 16, 16384, "posv", note);
    expect(f != nullptr && std::isnan(f->error), "every configuration failed: the error is NaN (the tester refuses it)");
    f = dx.find('d', 128, 16384, "potrf", note);
    expect(f == nullptr && note.find("skipped by bench_cusolverdx: double n=128") != std::string::npos,
           "a case skipped for memory says so: " + note);
    f = dx.find('s', 12, 16384, "potrf", note);
    expect(f == nullptr && note == "no configuration for n = 12 (built for n = 8,16,128)", "no configuration: " + note);
    f = dx.find('s', 8, 100000, "potrf", note);
    expect(f == nullptr && note.find("exit status 3") != std::string::npos, "a case after the failure: " + note);
    expect(dx.header_lines().size() == 3, "device, timing and copy lines kept for the JSON");

    // Not a program, or a program that is not the benchmark: refused, naming it.
    bool refused = false;
    try {
        CusolverDx wrong("/bin/true");
    } catch (const std::exception& e) {
        refused = std::string(e.what()).find("/bin/true") != std::string::npos;
    }
    expect(refused, "a program without configurations is refused by name");

    std::remove((folder + "/args.txt").c_str());
    std::remove(program.c_str());
    ::rmdir(folder.c_str());
    if (failures == 0) std::cout << "tester.cusolverdx_peer: all checks passed\n";
    return failures == 0 ? 0 : 1;
}
