// autotune's command line. The autotuner times the kernel configurations of the batched Cholesky
// routines (tile size, looking order, unrolling, thread shape, block size, chunk size) on the GPU and
// writes the fastest one per routine, precision, layout family and n to a tuning table
// (libsolver/tuning/sm<arch>.json).
//
// How a full sweep fits a GPU budget of minutes (see libsolver/tuning/README.md):
//  * Candidates are compiled by NVRTC on --jobs host threads (batchsolve::prepare_kernel, each thread
//    with a Context of its own), in order of need and far ahead of the single timing thread, which
//    times whichever case has its kernels ready. Compilation is the bottleneck, so the search space
//    is pruned by hardware limits and by compile cost before anything is compiled.
//  * The search is staged (coordinate search): the kernel shape first, then block size, chunk size,
//    unrolling or (column-major potrs) the steps loaded ahead, around the best few. posv starts from
//    potrf's best shapes (its factorisation is potrf's code), the chunked layout from the plain
//    interleaved one's (the same kernels: the chunk size is a run-time argument).
//  * A candidate whose first timed run is far behind the best so far is not repeated.
//  * The matrices are generated once per (precision, n): kDistinctMatrices on the host, repeated on
//    the device to fill the batch, converted to each layout there.
//
// The files: search_space (limits, measured pruning, candidate lists), stages (plans, seeds, later
// stages), compile_pool and tuner (scheduling), measure (inputs, timing), table_io (tables, --resume,
// --candidates-from), dry_run, and this command line.
#include <boost/program_options.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <thread>

#include "families.hpp"
#include "options.hpp"
#include "tuner.hpp"

#ifndef BATCHSOLVE_TESTER_COMMIT
#define BATCHSOLVE_TESTER_COMMIT "unknown"
#endif

namespace po = boost::program_options;

int main(int argc, char** argv) {
    using namespace batchsolve;
    using namespace batchsolve::autotune;
    po::options_description desc(
        "autotune: times the kernel configurations of batchsolve's batched Cholesky routines on the GPU and\n"
        "writes the fastest per routine, precision, layout family and n to a tuning table.\n"
        "Lists: comma-separated values or first:last[:step] ranges, e.g. --n 1:128.\n"
        "Options");
    std::string routines_text, precisions_text, n_text, layouts_text, revisit_text, skip_text;
    std::string family_text, gemm_sizes_text, large_n_text, ldlt_n_text, trsm_orders_text;
    Options opt;
    FamilyOptions fam;
    bool ldlt_probe_mode = false;
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    desc.add_options()
        ("help,h", "this help")
        ("routine", po::value(&routines_text)->default_value("potrf"), "potrf, posv, potrs (list)")
        ("precision", po::value(&precisions_text)->default_value("s,d"), "s, d, c, z (list)")
        ("n", po::value(&n_text)->default_value("1:128"), "matrix sizes (list, >= 1)")
        ("layout", po::value(&layouts_text)->default_value("interleaved,chunked,column_major"),
         "layout families: interleaved, chunked, column_major (list)")
        ("batch", po::value(&opt.batch)->default_value(16384), "matrices per batch (>= 1)")
        ("nrhs", po::value(&opt.nrhs)->default_value(1), "right-hand sides of potrs and posv (>= 1)")
        ("output", po::value(&opt.output), "the tuning table to write (e.g. libsolver/tuning/sm90.json)")
        ("log", po::value(&opt.log), "every candidate as a JSON line (appended to with --resume)")
        ("resume", po::value(&opt.resume), "finished cases, one JSON line each: read first and skipped, then appended to")
        ("jobs", po::value(&opt.jobs)->default_value(int(hw)), "host threads compiling candidates (NVRTC)")
        ("repeat", po::value(&opt.repeat)->default_value(5), "timed runs per candidate (median; >= 1)")
        ("budget-s", po::value(&opt.budget_s)->default_value(0), "start no case after this many seconds (0: no limit)")
        ("commit", po::value(&opt.commit), "commit recorded in the table (default: $BATCHSOLVE_COMMIT, else the build's)")
        ("device", po::value(&opt.device)->default_value(0), "CUDA device")
        ("seed", po::value(&opt.seed), "seed of the inputs (default: a fresh random one, printed)")
        ("cond", po::value(&opt.cond)->default_value(1e3), "2-norm condition number of the generated matrices")
        ("dry-run", po::bool_switch(&opt.dry_run), "list the candidates per case (no GPU needed) and stop")
        ("exhaustive", po::bool_switch(&opt.exhaustive),
         "search the whole space at every n: none of the measured pruning of the default search "
         "(libsolver/tuning/README.md, \"Measured pruning\": e.g. the largest 3 interleaved tiles above n = 12, "
         "column-major potrf/posv staged kernels only above n = 64 and none up to n = 32) and above n = 32 no "
         "sizes that only time the winners of the anchors (every 4th n) each side; e.g. for the report's figures "
         "or on another GPU")
        ("revisit", po::bool_switch(&opt.revisit),
         "cases already in --resume: time their winner against the stages added since (column-major: the "
         "interleaved winners through a converted workspace, then the staged kernel; interleaved and "
         "chunked potrf, potrs and posv: the cooperative kernel, then the grid cap of a cooperative winner) and "
         "keep the faster")
        ("revisit-stages", po::value(&revisit_text)->default_value("through,coop,grid,staged"),
         "the stages --revisit runs: through, coop, grid, staged (list)")
        ("skip-stages", po::value(&skip_text)->default_value(""),
         "stages left out of every case (list of unroll, chunk, prefetch, through, coop, grid, staged, "
         "nrhs_block); e.g. through with --candidates-from: the column-major cases then compile no "
         "interleaved kernels")
        ("candidates-from", po::value(&opt.candidates_from),
         "a tuning table: each case not in --resume times only that table's winners (best and runner-up) at its "
         "n and at the --neighbours nearest tuned sizes below and above (e.g. a table tuned at another --batch, or "
         "sizes the table lacks); a case with none of these gets the full search")
        ("neighbours", po::value(&opt.neighbours)->default_value(1),
         "with --candidates-from: tuned sizes each side of n whose winners are candidates too (>= 0)")
        ("family", po::value(&family_text)->default_value("cholesky"),
         "what to tune: cholesky (the small batched Cholesky search above), or a list of gemm, large, ldlt, trsm: "
         "the variable-size GEMM per precision and size class, large Cholesky's nb/ib/variant/depth/lookahead, "
         "LDL^T's panel order and TF32 update leaf, TRSM's inversion/recursive crossover; each writes "
         "OUTPUT/sm<arch>-<family>.json (--output is then a folder)")
        ("gemm-sizes", po::value(&gemm_sizes_text)->default_value("32,128,512"),
         "--family gemm: size classes x (problems uniform in [1, x]; the last class serves every larger size)")
        ("gemm-problems", po::value(&fam.gemm_problems)->default_value(2000), "--family gemm: problems per batch")
        ("large-n", po::value(&large_n_text)->default_value("2048,8192,16384"), "--family large: orders timed")
        ("ldlt-n", po::value(&ldlt_n_text)->default_value("2048,8192"), "--family ldlt: orders timed")
        ("trsm-orders", po::value(&trsm_orders_text)->default_value("16,32,64,128,256,512"),
         "--family trsm: triangle orders timed both ways")
        ("trsm-problems", po::value(&fam.trsm_problems)->default_value(2000), "--family trsm: problems per batch")
        ("family-max-candidates", po::value(&fam.max_candidates)->default_value(0),
         "--family: time at most this many candidates per case, the library's current choice first (0: all)")
        ("ldlt-probe", po::bool_switch(&ldlt_probe_mode),
         "internal (the ldlt stage's child process): time sytrf_nopiv at --n, --precision with the blocking "
         "of BATCHSOLVE_TUNING_FILE");
    try {
        po::variables_map vm;
        const po::positional_options_description no_positional;
        po::store(po::command_line_parser(argc, argv).options(desc).positional(no_positional).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << desc << "\nExit code: 0 when the run finished (cases left by --budget-s included), 1 on "
                                 "a run-time error, 2 when a winner failed its sanity check (info != 0 or a "
                                 "non-finite solution), 255 for bad options.\n";
            return 0;
        }
        opt.routines = parse_list<Routine>("routine", routines_text, parse_routine);
        opt.precisions = parse_list<Precision>("precision", precisions_text, parse_precision);
        opt.families = parse_list<Family>("layout", layouts_text, parse_family);
        opt.ns = parse_int_list("n", n_text, 1);
        fam.families = parse_list<std::string>("family", family_text, [](const std::string& t) {
            if (std::find(kFamilyNames.begin(), kFamilyNames.end(), t) == kFamilyNames.end())
                throw UsageError("family", t, "must be one of " + joined(kFamilyNames, ", "));
            return t;
        });
        if (fam.families.size() > 1 && std::find(fam.families.begin(), fam.families.end(), "cholesky") != fam.families.end())
            throw UsageError("family", family_text, "cholesky runs alone (its --output is a table, the others' a folder)");
        fam.gemm_sizes = parse_int_list("gemm-sizes", gemm_sizes_text, 1);
        fam.large_n = parse_int_list("large-n", large_n_text, 1);
        fam.ldlt_n = parse_int_list("ldlt-n", ldlt_n_text, 1);
        fam.trsm_orders = parse_int_list("trsm-orders", trsm_orders_text, 1);
        for (auto* list : {&fam.gemm_sizes, &fam.large_n, &fam.ldlt_n, &fam.trsm_orders}) std::sort(list->begin(), list->end());
        if (fam.gemm_problems < 1) throw UsageError("gemm-problems", std::to_string(fam.gemm_problems), "must be >= 1");
        if (fam.trsm_problems < 1) throw UsageError("trsm-problems", std::to_string(fam.trsm_problems), "must be >= 1");
        if (fam.max_candidates < 0)
            throw UsageError("family-max-candidates", std::to_string(fam.max_candidates), "must be >= 0");
        opt.revisit_stages = parse_list<std::string>("revisit-stages", revisit_text, [](const std::string& t) {
            if (std::find(kRevisitStages.begin(), kRevisitStages.end(), t) == kRevisitStages.end())
                throw UsageError("revisit-stages", t, "must be one of " + joined(kRevisitStages, ", "));
            return t;
        });
        if (!skip_text.empty())
            opt.skip_stages = parse_list<std::string>("skip-stages", skip_text, [](const std::string& t) {
                if (std::find(kSkippableStages.begin(), kSkippableStages.end(), t) == kSkippableStages.end())
                    throw UsageError("skip-stages", t, "must be one of " + joined(kSkippableStages, ", "));
                return t;
            });
        std::sort(opt.ns.begin(), opt.ns.end());  // small n first: their kernels compile fastest
        if (opt.batch < 1) throw UsageError("batch", std::to_string(opt.batch), "must be >= 1");
        if (opt.nrhs < 1) throw UsageError("nrhs", std::to_string(opt.nrhs), "must be >= 1");
        if (opt.repeat < 1) throw UsageError("repeat", std::to_string(opt.repeat), "must be >= 1");
        if (opt.jobs < 1) throw UsageError("jobs", std::to_string(opt.jobs), "must be >= 1");
        if (opt.neighbours < 0) throw UsageError("neighbours", std::to_string(opt.neighbours), "must be >= 0");
        if (opt.device < 0) throw UsageError("device", std::to_string(opt.device), "must be >= 0");
        if (!(opt.budget_s >= 0)) throw UsageError("budget-s", std::to_string(opt.budget_s), "must be >= 0");
        if (!(opt.cond >= 1) || !std::isfinite(opt.cond))
            throw UsageError("cond", std::to_string(opt.cond), "must be a finite number >= 1");
        if (!opt.dry_run && !ldlt_probe_mode && opt.output.empty())
            throw UsageError("output", "", "a tuning table file (--family other than cholesky: a folder) is required");
        if (!vm.count("seed")) opt.seed = (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
        if (!vm.count("commit")) {
            const char* env = std::getenv("BATCHSOLVE_COMMIT");
            opt.commit = env != nullptr && *env != '\0' ? env : BATCHSOLVE_TESTER_COMMIT;
        }
    } catch (const std::exception& e) {
        std::cerr << "autotune: " << e.what() << "\n(autotune --help lists the options)\n";
        return kUsageError;
    }

    const std::string command = quoted_command_line(argc, argv);
    try {
        const bool families = fam.families.front() != "cholesky";
        if (ldlt_probe_mode) return ldlt_probe(opt.precisions.front(), opt.ns.front(), opt.repeat);
        if (opt.dry_run) return families ? families_dry_run(opt, fam) : dry_run(opt);
        if (!Context::cuda_available()) {
            std::printf("autotune: skipped: no GPU (CUDA backend %s)\n",
                        Context::cuda_compiled() ? "compiled" : "not compiled");
            return 0;
        }
        const validation::GpuProperties gpu = validation::gpu_properties(opt.device);
        if (families)
            return tune_families(opt, fam, opt.output, gpu.cc_major * 10 + gpu.cc_minor, gpu.name,
                                 cuda_version_text(gpu.runtime_version));
        std::printf("batchsolve autotune, commit %s, %s\ncommand: %s\n", opt.commit.c_str(), utc_now().c_str(),
                    command.c_str());
        std::printf("GPU: %s (%d SMs, sm_%d%d, L2 %.1f MiB), CUDA runtime %s; %d compile threads; seed %llu, "
                    "batch %d, repeat %d\n",
                    gpu.name.c_str(), gpu.sm_count, gpu.cc_major, gpu.cc_minor, gpu.l2_bytes / 1048576.0,
                    cuda_version_text(gpu.runtime_version).c_str(), opt.jobs, static_cast<unsigned long long>(opt.seed),
                    opt.batch, opt.repeat);
        Tuner tuner(opt, gpu, command);
        return tuner.run();
    } catch (const std::exception& e) {
        std::cerr << "autotune: " << e.what() << "\n";
        return 1;
    }
}
