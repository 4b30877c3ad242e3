// mpi_posv: a batch of SPD systems split over MPI ranks (each rank its share), the info gathered to
// rank 0 at global indices and the solutions compared on rank 0 with one process solving the whole
// batch. Run by mpi_test.sh under mpirun -np 1, 2, 3; prints "mpi_posv: ok ..." on success.
//   mpi_posv SEED [COUNT] [N] [cpu|cuda]
// cuda: one rank per GPU (rank r on GPU local_rank % GPUs, batchsolve::mpi::rank_device), each rank
// uploads its share and solves it there; every rank prints its local rank and device.
// Exit codes: 0 ok, 1 a wrong result, 2 an error (a failing rank is reported by every rank).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "batchsolve/batchsolve.hpp"
#include "batchsolve/multi_device.hpp"
#include "batchsolve_mpi.hpp"

using namespace batchsolve;

// Every rank shares one stderr: a message written in pieces (one `<<` at a time) interleaves with the
// other ranks' pieces, so each line goes out in a single unbuffered write.
static void report_line(std::string line) {
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
}

int main(int argc, char** argv) {
    mpi::Environment env(&argc, &argv);
    mpi::Communicator comm;
    try {
        if (argc < 2) throw InvalidArgument("mpi_posv", "SEED", "usage: mpi_posv SEED [COUNT] [N]");
        const std::uint64_t seed = std::strtoull(argv[1], nullptr, 0);
        const int count = argc > 2 ? std::atoi(argv[2]) : 1001, n = argc > 3 ? std::atoi(argv[3]) : 12;
        const bool cuda = argc > 4 && std::strcmp(argv[4], "cuda") == 0;
        if (argc > 4 && !cuda && std::strcmp(argv[4], "cpu") != 0) throw InvalidArgument("mpi_posv", "backend", "cpu or cuda");
        const int device = cuda ? mpi::rank_device(comm) : 0;
        if (cuda && device < 0) throw Error("mpi_posv cuda: no GPU visible to rank " + std::to_string(comm.rank()));
        std::printf("mpi_posv: rank %d of %d, local rank %d, %s\n", comm.rank(), comm.size(), mpi::local_rank(comm),
                    cuda ? ("GPU " + std::to_string(device)).c_str() : "CPU");
        std::fflush(stdout);
        // Every rank generates the same batch (deterministic in the seed) and keeps only its share, as
        // ranks on different nodes would read theirs from a file.
        std::vector<double> all_a = generate_spd_batch<double>(n, count, 1e3, seed);
        const int bad = count - 1 - count / 7;  // a failed matrix late in the batch (the last rank's share at -np 2, 3)
        spoil_matrix(all_a, n, bad, n / 2, BadMatrix::indefinite);
        const auto rhs = generate_rhs_batch(all_a, n, count, 1, seed + 1);
        const BatchShare share = mpi::rank_share(count, comm.rank(), comm.size());
        std::vector<double> a(all_a.begin() + std::ptrdiff_t(share.first) * n * n,
                              all_a.begin() + std::ptrdiff_t(share.first + share.count) * n * n);
        std::vector<double> b(rhs.b.begin() + std::ptrdiff_t(share.first) * n, rhs.b.begin() + std::ptrdiff_t(share.first + share.count) * n);
        std::vector<int> info(std::size_t(share.count) + 1, -7);
        comm.run_agreed("the share's solve", [&] {
            comm.fault_point("the share's solve");
            if (cuda) {
                Context ctx(Backend::cuda, device);
                Buffer<double> da(ctx, a), db(ctx, b);
                Buffer<int> dinfo(ctx, std::size_t(share.count) + 1);
                posv_batched(Uplo::lower, BatchView<double>::column_major(da.data(), n, n, share.count),
                             BatchView<double>::column_major(db.data(), n, 1, share.count), dinfo.data(), ctx);
                ctx.synchronize();
                db.download(b.data(), b.size());
                dinfo.download(info.data(), std::size_t(share.count));
            } else {
                Context ctx(Backend::cpu);
                posv_batched(Uplo::lower, BatchView<double>::column_major(a.data(), n, n, share.count),
                             BatchView<double>::column_major(b.data(), n, 1, share.count), info.data(), ctx);
            }
        });
        const std::vector<int> global_info = comm.gather_info(info.data(), share, count, "gathering info");
        // The solutions to rank 0 as well (plain MPI: this is the test's own check, not the library's).
        std::vector<int> counts(static_cast<std::size_t>(comm.size())), displs(static_cast<std::size_t>(comm.size()));
        for (int r = 0; r < comm.size(); ++r) {
            const auto s = mpi::rank_share(count, r, comm.size());
            counts[std::size_t(r)] = s.count * n, displs[std::size_t(r)] = s.first * n;
        }
        std::vector<double> x(comm.rank() == 0 ? std::size_t(count) * n : 0);
        MPI_Gatherv(b.data(), share.count * n, MPI_DOUBLE, x.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, comm.comm());
        if (comm.rank() != 0) return 0;

        std::vector<double> one_a = all_a, one_b = rhs.b;
        std::vector<int> one_info(static_cast<std::size_t>(count));
        Context ctx(Backend::cpu);
        posv_batched(Uplo::lower, BatchView<double>::column_major(one_a.data(), n, n, count),
                     BatchView<double>::column_major(one_b.data(), n, 1, count), one_info.data(), ctx);
        int wrong = 0;
        for (int k = 0; k < count; ++k) wrong += global_info[std::size_t(k)] != one_info[std::size_t(k)];
        if (global_info[std::size_t(bad)] != n / 2 + 1) {
            std::cerr << "mpi_posv: info[" << bad << "] = " << global_info[std::size_t(bad)] << ", expected " << n / 2 + 1 << "\n";
            ++wrong;
        }
        // Each matrix is solved by LAPACK on its own, so the split cannot change a bit. On GPUs (compared
        // with the CPU): both backward stable, so |x - x_cpu| / |x| <= 2 cond n eps with cond <= 1e3
        // (generate_spd_batch); 1e-9 is ten times 2 x 1e3 x 128 x 2.2e-16 for n up to 128.
        int differ = 0;
        double worst = 0;
        if (!cuda) differ = std::memcmp(x.data(), one_b.data(), x.size() * sizeof(double)) != 0;
        else
            for (int k = 0; k < count; ++k) {
                if (one_info[std::size_t(k)] != 0) continue;
                double d = 0, s = 0;
                for (int i = 0; i < n; ++i) {
                    d = std::max(d, std::abs(x[std::size_t(k) * n + i] - one_b[std::size_t(k) * n + i]));
                    s = std::max(s, std::abs(one_b[std::size_t(k) * n + i]));
                }
                worst = std::max(worst, s > 0 ? d / s : d);
                differ |= !(worst <= 1e-9);
            }
        std::printf("mpi_posv: %s: %d ranks, %d matrices of order %d, failed matrix reported at global index %d (info %d), "
                    "%d info mismatches, solutions %s one process's\n",
                    wrong || differ ? "FAILED" : "ok", comm.size(), count, n, bad, global_info[std::size_t(bad)], wrong,
                    differ ? "differ from" : cuda ? "agree (GPU vs CPU, within 1e-9) with" : "equal bit for bit to");
        if (cuda) std::printf("mpi_posv: largest relative difference from the CPU %.2e\n", worst);
        return wrong || differ ? 1 : 0;
    } catch (const mpi::Timeout& e) {
        report_line("mpi_posv: error: " + std::string(e.what()));
        mpi::abort_job(2);
    } catch (const std::exception& e) {
        report_line("mpi_posv: rank " + std::to_string(comm.rank()) + ": error: " + e.what());
        return 2;
    }
}
