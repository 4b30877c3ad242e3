// Subcommands of `dvc`: generate (a speckle pair with its truth), correlate (a pair to HDF5, VTK
// and PNG) and bench (IC-GN speed on the GPU and CPU backends side by side).
#include "commands.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <optional>
#include <sstream>
#include <filesystem>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <thread>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <batchsolve/context.hpp>
#include <batchsolve/types.hpp>

#include "batchsolve_io/hdf5.hpp"
#include "batchsolve_io/output.hpp"
#include "correlate.hpp"
#include "generate.hpp"
#include "output.hpp"
#include "strain.hpp"
#include "timeline.hpp"

namespace po = boost::program_options;
namespace h5 = batchsolve::io::h5;

namespace dvc {
namespace {

constexpr int exit_ok = 0, exit_check = 1, exit_usage = 2, exit_file = 3, exit_backend = 4;

// True when the command runs as its own process (run_process, from main): a finished correlate
// may then end the process at once instead of freeing what the OS frees anyway.
bool owns_process = false;

// The quick exit ends the process without waiting for the driver's teardown of the GPU context (about
// 0.1 s after any CUDA process on the H200 host; results/2026-12-03-h200-8936072-dvc-startup: 192^3
// wall 0.31 s against 0.39 s when the run starts on an idle GPU). A child made with clone(CLONE_VM |
// CLONE_FILES) shares the address space and the descriptor table, so this process's exit releases
// neither (the driver tears down when the last user of both goes); the child waits, in raw system
// calls only (it runs on a static stack in the shared memory), until its parent is gone, then exits
// and the teardown runs there. Standard input, output and error point to /dev/null first, so that a
// reader of this process's output sees its end now. Every output is written, synced and closed
// before this is called. A CUDA process started right after waits for that teardown in its own
// context creation. DVC_EXIT_TEARDOWN=wait keeps the teardown in the process (the exit before).
// False when no child could be made (the caller then exits as before).
alignas(64) char teardown_stack[64 * 1024];
int teardown_child(void* parent) {
    const long ppid = reinterpret_cast<long>(parent);
    const struct timespec pause = {0, 1000000};
    while (syscall(SYS_getppid) == ppid) syscall(SYS_nanosleep, &pause, nullptr);
    syscall(SYS_exit, 0);
    return 0;
}
bool teardown_detached_requested() {
    const char* mode = std::getenv("DVC_EXIT_TEARDOWN");
    return mode == nullptr || std::string(mode) != "wait";
}
bool detach_teardown() {
    if (!teardown_detached_requested()) return false;
    std::fflush(nullptr);
    const int null = ::open("/dev/null", O_RDWR);
    if (null < 0) return false;
    for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);
    ::close(null);
    void* parent = reinterpret_cast<void*>(long(::getpid()));
    return ::clone(teardown_child, teardown_stack + sizeof teardown_stack, CLONE_VM | CLONE_FILES | SIGCHLD, parent) > 0;
}

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

const char* const main_help =
    "dvc: digital volume correlation (local IC-GN, 12-parameter warp, ZNSSD) on batched 12x12 solves\n"
    "\n"
    "usage: dvc <command> [options]     (dvc <command> --help for its options)\n"
    "\n"
    "commands:\n"
    "  generate   a synthetic speckle pair deformed by a known field, the field stored beside it\n"
    "  correlate  displacement, strain, ZNCC and a status per grid point of a volume pair\n"
    "  bench      end-to-end and IC-GN points per second on a synthetic pair, GPU and CPU side by side\n"
    "\n"
    "exit codes: 0 ok, 1 finished but failed its check, 2 usage error, 3 file or input error,\n"
    "            4 backend error. Errors are one line: 'dvc: error: <file>: <reason>'.\n";

po::variables_map parse(const std::vector<std::string>& args, const po::options_description& desc) {
    po::variables_map vm;
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(desc).style(style).run(), vm);
    po::notify(vm);
    return vm;
}

std::array<double, 3> parse_triple(const std::string& text, const std::string& what) {
    std::array<double, 3> v{0, 0, 0};
    std::stringstream ss(text);
    std::string part;
    int i = 0;
    while (std::getline(ss, part, ',')) {
        if (i == 3) throw UsageError(what + ": '" + text + "' has more than three values (z,y,x)");
        try {
            std::size_t used = 0;
            v[i] = std::stod(part, &used);
            if (used != part.size()) throw std::invalid_argument(part);
        } catch (const std::exception&) {
            throw UsageError(what + ": '" + part + "' is not a number");
        }
        if (!std::isfinite(v[i])) throw UsageError(what + ": '" + part + "' is not a finite number");
        ++i;
    }
    if (i == 1) v[1] = v[2] = v[0];
    else if (i != 3) throw UsageError(what + ": '" + text + "' needs one value or three (z,y,x)");
    return v;
}

// A floating-point option that must be finite and within [lo, hi] (a usage error, exit 2, otherwise).
double checked_double(const po::variables_map& vm, const char* name, double lo, double hi) {
    const double v = vm[name].as<double>();
    if (!std::isfinite(v) || v < lo || v > hi) {
        std::ostringstream m;
        m << "--" << name << ": " << v << " is not a finite number within [" << lo << ", " << hi << "]";
        throw UsageError(m.str());
    }
    return v;
}

// A parser of an option's text that throws Error (volume.hpp, generate.hpp): its failure is a usage
// error (exit 2), as every bad option value.
template <class F>
auto option_value(F&& parse) -> decltype(parse()) {
    try {
        return parse();
    } catch (const UsageError&) {
        throw;
    } catch (const Error& e) {
        throw UsageError(e.what());
    }
}

std::string join_args(const std::vector<std::string>& args) {
    std::string s = "dvc";
    for (auto& a : args) s += " " + a;
    return s;
}

// ---- generate -------------------------------------------------------------------------------------

int cmd_generate(const std::vector<std::string>& args) {
    po::options_description desc(
        "dvc generate: a speckle volume pair deformed by a known field, written as one HDF5 file\n"
        "(/reference, /deformed: z,y,x; /truth: the field's attributes; schema in README.md)\n\noptions");
    desc.add_options()
        ("help,h", "this help")
        ("output,o", po::value<std::string>(), "HDF5 file to write (required)")
        ("force", "replace the output if it exists")
        ("size", po::value<std::string>()->default_value("128x128x128"), "dimensions ZxYxX (or one number for a cube)")
        ("speckle", po::value<std::string>()->default_value("noise"), "noise (Gaussian-smoothed white noise) | blobs (random Gaussian blobs)")
        ("sigma", po::value<double>()->default_value(2.0), "speckle smoothing / blob radius, voxels")
        ("seed", po::value<std::uint64_t>()->default_value(1), "random seed of the speckle")
        ("translation", po::value<std::string>()->default_value("0"), "rigid translation z,y,x (voxels; one value: all three)")
        ("strain", po::value<std::string>()->default_value("0"), "uniform normal strain e_zz,e_yy,e_xx (one value: all three)")
        ("shear", po::value<double>()->default_value(0.0), "engineering shear gamma_yx added to the gradient (du_x/dy = gamma)")
        ("rotation", po::value<double>()->default_value(0.0), "rotation in degrees about the volume centre")
        ("rotation-axis", po::value<std::string>()->default_value("z"), "z | y | x")
        ("sinusoid", po::value<std::string>()->default_value("0,32"), "amplitude,wavelength of a sinusoidal field (voxels)")
        ("noise", po::value<double>()->default_value(0.0), "grey-level noise sigma added to both volumes")
        ("brightness", po::value<double>()->default_value(0.0), "deformed = contrast * f + brightness")
        ("contrast", po::value<double>()->default_value(1.0), "see --brightness")
        ("raw", po::value<std::string>(), "also write PREFIX_reference.raw and PREFIX_deformed.raw (z, y, x in --dtype, no header)")
        ("raw-only", "with --raw: the volumes go to the raw files only, the HDF5 file holds the truth alone")
        ("dtype", po::value<std::string>()->default_value("float32"), "stored type: float32 | uint16 | uint8 (rounded, clamped)");
    const auto vm = parse(args, desc);
    if (vm.count("help")) { std::cout << desc << "\n"; return exit_ok; }
    if (!vm.count("output")) throw UsageError("--output is required");
    SpeckleOptions so;
    std::string size = vm["size"].as<std::string>();
    if (size.find_first_of("x,") == std::string::npos) size = size + "x" + size + "x" + size;
    so.dims = option_value([&] { return parse_dims(size, "--size"); });
    so.kind = option_value([&] { return parse_speckle_kind(vm["speckle"].as<std::string>()); });
    so.sigma = checked_double(vm, "sigma", 0.1, 1000);
    so.seed = vm["seed"].as<std::uint64_t>();
    const VoxelType dtype = option_value([&] { return parse_voxel_type(vm["dtype"].as<std::string>()); });
    const std::array<double, 3> centre{0.5 * (so.dims[0] - 1), 0.5 * (so.dims[1] - 1), 0.5 * (so.dims[2] - 1)};
    DisplacementField field;
    const double degrees = checked_double(vm, "rotation", -360, 360);
    if (degrees != 0) {
        const std::string axis = vm["rotation-axis"].as<std::string>();
        if (axis.size() != 1) throw UsageError("--rotation-axis: '" + axis + "' is not one of z, y, x");
        field = option_value([&] { return rotation_field(degrees, axis[0], centre); });
    }
    field.centre = centre;
    field.translation = parse_triple(vm["translation"].as<std::string>(), "--translation");
    const auto strain = parse_triple(vm["strain"].as<std::string>(), "--strain");
    for (int i = 0; i < 3; ++i) field.gradient[4 * i] += strain[i];
    field.gradient[7] += checked_double(vm, "shear", -1, 1);
    const auto sinusoid = parse_triple(vm["sinusoid"].as<std::string>() + ",0", "--sinusoid");
    field.amplitude = sinusoid[0], field.wavelength = sinusoid[1];
    if (field.amplitude != 0 && !(field.wavelength > 0)) throw UsageError("--sinusoid: the wavelength must be positive");
    double gmax = 0;
    for (double g : field.gradient) gmax = std::max(gmax, std::fabs(g));
    if (gmax + std::fabs(field.amplitude) * 2 * M_PI / std::max(field.wavelength, 1e-9) >= 0.5)
        throw UsageError("the field's gradient reaches 0.5 or more: the inverse map is not a contraction");
    field.kind = degrees != 0 ? "rotation" : field.amplitude != 0 ? "sinusoidal" : (strain[0] || strain[1] || strain[2] || field.gradient[7]) ? "strain" : "translation";
    DeformOptions d;
    d.noise_sigma = checked_double(vm, "noise", 0, 1e6);
    d.brightness = checked_double(vm, "brightness", -1e6, 1e6);
    d.contrast = checked_double(vm, "contrast", -1e6, 1e6);
    d.noise_seed = so.seed + 7;
    const std::string out = vm["output"].as<std::string>();
    auto file = h5::File::create(out, vm.count("force") ? h5::Existing::replace : h5::Existing::refuse);
    Volume ref = make_speckle(so);
    Volume def = deform(ref, field, d);
    const h5::Shape shape{std::uint64_t(so.dims[0]), std::uint64_t(so.dims[1]), std::uint64_t(so.dims[2])};
    // --raw: the same volumes as headerless files (what a scanner writes), beside the HDF5 pair.
    const std::string raw_prefix = vm.count("raw") ? vm["raw"].as<std::string>() : std::string();
    const bool volumes_in_hdf5 = !vm.count("raw-only");
    if (!volumes_in_hdf5 && raw_prefix.empty()) throw UsageError("--raw-only needs --raw PREFIX");
    auto raw_copy = [&](const std::string& name, const void* data, std::size_t bytes) {
        if (raw_prefix.empty()) return;
        write_raw_file(raw_prefix + (name == "/reference" ? "_reference.raw" : "_deformed.raw"), data, bytes, vm.count("force") > 0);
    };
    for (int which = 0; which < 2; ++which) {
        const Volume& v = which == 0 ? ref : def;
        const std::string name = which == 0 ? "/reference" : "/deformed";
        auto store = [&](const auto* data) {
            if (volumes_in_hdf5) file.write(name, data, shape), file.set_attribute(name, "voxel_size", 1.0);
            raw_copy(name, data, v.voxels() * sizeof(*data));
        };
        if (dtype == VoxelType::float32) store(v.data.data());
        else if (dtype == VoxelType::uint8) {
            std::vector<std::uint8_t> q(v.voxels());
            for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::uint8_t(std::clamp(std::lround(v.data[i]), 0L, 255L));
            store(q.data());
        } else {
            std::vector<std::uint16_t> q(v.voxels());
            for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::uint16_t(std::clamp(std::lround(v.data[i] * 256.0), 0L, 65535L));
            store(q.data());
        }
    }
    write_field_attributes(file, "/truth", field);
    file.set_attribute("/truth", "noise_sigma", d.noise_sigma);
    file.set_attribute("/truth", "brightness", d.brightness);
    file.set_attribute("/truth", "contrast", d.contrast);
    file.set_attribute("/", "command", join_args(args));
    file.set_attribute("/", "speckle_sigma", so.sigma);
    file.set_attribute("/", "seed", std::int64_t(so.seed));
    file.commit();
    std::cout << "dvc generate: " << out << ": " << dims_text(so.dims) << " " << to_string(dtype) << " pair, field " << field.kind << "\n";
    return exit_ok;
}

// ---- correlate ------------------------------------------------------------------------------------

void add_correlation_options(po::options_description& desc) {
    desc.add_options()
        ("subset", po::value<int>()->default_value(32), "subset edge, voxels")
        ("spacing", po::value<int>()->default_value(8), "grid spacing, voxels")
        ("interpolation", po::value<std::string>()->default_value("omoms"), "omoms (cubic O-MOMS, prefiltered: the B-spline's cost, less bias) | cubic (B-spline, prefiltered) | quintic (B-spline, 3.4x the reads) | trilinear")
        ("final-interpolation", po::value<std::string>()->default_value("none"), "none | quintic | cubic | omoms: converged points iterate on with this interpolant (at most --max-iterations more)")
        ("max-iterations", po::value<int>()->default_value(50), "IC-GN iterations per point at most")
        ("tolerance", po::value<double>()->default_value(1e-4, "1e-4"), "convergence: ||dp|| (translation and half-subset-weighted gradient), voxels")
        ("guess", po::value<std::string>()->default_value("seeded"), "seeded (FFT at seed points, neighbours from them) | fft (at every point) | none")
        ("search-radius", po::value<int>()->default_value(8), "FFT search: integer shifts up to this many voxels per axis")
        ("seed-stride", po::value<int>()->default_value(3), "seeded: every n-th grid point per axis is a seed")
        ("retries", po::value<int>()->default_value(2), "neighbour-seeded retries of points that failed")
        ("min-zncc", po::value<double>()->default_value(0.9), "converged points below this ZNCC get status low_correlation (5)")
        ("pyramid-levels", po::value<int>()->default_value(-1), "coarser levels (2x each) of the FFT guess: -1 as many as fit (up to 3), 0 none")
        ("presmooth", po::value<double>()->default_value(kDefaultPresmooth, "1"), "Gaussian pre-smoothing sigma of both volumes, voxels (damps the sub-voxel bias; 0: none)")
        ("backend", po::value<std::string>()->default_value("auto"), "auto | cpu | cuda");
}

CorrelationOptions correlation_options(const po::variables_map& vm) try {
    CorrelationOptions o;
    o.icgn.subset = vm["subset"].as<int>();
    o.spacing = vm["spacing"].as<int>();
    o.icgn.interpolation = parse_interpolation(vm["interpolation"].as<std::string>());
    o.icgn.max_iterations = vm["max-iterations"].as<int>();
    if (const std::string final = vm["final-interpolation"].as<std::string>(); final != "none") {
        o.icgn.final_phase = true;
        try {
            o.icgn.final_interpolation = parse_interpolation(final);
        } catch (const Error&) {
            throw UsageError("--final-interpolation: '" + final + "' is not one of none, quintic, cubic, omoms");
        }
        if (!is_spline(o.icgn.final_interpolation)) throw UsageError("--final-interpolation: '" + final + "' is not one of none, quintic, cubic, omoms");
    }
    o.icgn.tolerance = vm["tolerance"].as<double>();
    o.guess = parse_guess_mode(vm["guess"].as<std::string>());
    o.search_radius = vm["search-radius"].as<int>();
    o.seed_stride = vm["seed-stride"].as<int>();
    o.retry_passes = vm["retries"].as<int>();
    o.min_zncc = vm["min-zncc"].as<double>();
    o.presmooth_sigma = vm["presmooth"].as<double>();
    o.pyramid_levels = vm["pyramid-levels"].as<int>();
    if (o.pyramid_levels < -1 || o.pyramid_levels > kMaxPyramidLevels)
        throw UsageError("--pyramid-levels: must lie in -1.." + std::to_string(kMaxPyramidLevels));
    if (!(o.min_zncc >= -1 && o.min_zncc <= 1)) throw UsageError("--min-zncc: must lie in [-1, 1]");
    if (!(o.presmooth_sigma >= 0 && o.presmooth_sigma <= 10)) throw UsageError("--presmooth: must lie in [0, 10] voxels");
    if (!(o.icgn.tolerance > 0) || !std::isfinite(o.icgn.tolerance)) throw UsageError("--tolerance: must be a finite number > 0");
    if (o.icgn.max_iterations < 1) throw UsageError("--max-iterations: must be at least 1");
    if (o.spacing < 1) throw UsageError("--spacing: must be at least 1 voxel");
    if (o.icgn.subset < 1) throw UsageError("--subset: must be at least 1 voxel");
    if (o.search_radius < 0) throw UsageError("--search-radius: must not be negative");
    if (o.seed_stride < 1) throw UsageError("--seed-stride: must be at least 1");
    if (o.retry_passes < 0) throw UsageError("--retries: must not be negative");
    return o;
} catch (const Error& e) {
    throw UsageError(e.what());  // a bad option value (--interpolation, --guess) is a usage error
}

struct Summary {
    std::int64_t points = 0, counts[kPointStatusCount] = {};
    double zncc_median = 0;
    bool truth = false;
    double rmse[3] = {0, 0, 0}, rmse_total = 0, bias[3] = {0, 0, 0}, max_error = 0;
    std::int64_t truth_points = 0;
};

// Errors over converged points whose subset lies `interior` voxels inside the volume.
Summary summarise(const CorrelationResult& r, const TruthComparison* truth) {
    Summary s;
    s.points = std::int64_t(r.status.size());
    std::vector<float> z;
    for (std::size_t k = 0; k < r.status.size(); ++k) {
        ++s.counts[r.status[k]];
        if (r.status[k] == 0) z.push_back(r.zncc[k]);
    }
    if (!z.empty()) {
        std::nth_element(z.begin(), z.begin() + z.size() / 2, z.end());
        s.zncc_median = z[z.size() / 2];
    }
    if (truth && truth->present) {
        s.truth = true;
        double sq[3] = {0, 0, 0};
        for (std::size_t k = 0; k < r.status.size(); ++k) {
            if (r.status[k] != 0) continue;
            ++s.truth_points;
            for (int i = 0; i < 3; ++i) {
                const double e = truth->error[3 * k + i];
                sq[i] += e * e, s.bias[i] += e;
                s.max_error = std::max(s.max_error, std::fabs(e));
            }
        }
        if (s.truth_points)
            for (int i = 0; i < 3; ++i) {
                s.rmse[i] = std::sqrt(sq[i] / s.truth_points), s.bias[i] /= s.truth_points;
                s.rmse_total += sq[i] / s.truth_points;
            }
        s.rmse_total = std::sqrt(s.rmse_total);
    }
    return s;
}

nlohmann::json summary_json(const Summary& s, const CorrelationResult& r) {
    nlohmann::json j;
    j["points"] = s.points;
    for (int i = 0; i < kPointStatusCount; ++i) j["status"][to_string(PointStatus(i))] = s.counts[i];
    j["zncc_median_converged"] = s.zncc_median;
    j["backend"] = r.backend;
    j["timings_s"] = {{"fft_guess", r.guess.fft_s},          {"fft_plan", r.icgn.fft_plan_s},          {"prepare", r.icgn.prepare_s},  {"upload", r.icgn.upload_s},
                      {"hessian", r.icgn.hessian_s},
                      {"factor", r.icgn.factor_s},           {"interpolation", r.icgn.interpolation_s},
                      {"solve", r.icgn.solve_s},             {"update", r.icgn.update_s},    {"icgn", r.icgn.icgn_s()},
                      {"total", r.total_s}};
    j["fft_points"] = r.guess.fft_points;
    j["point_iterations"] = r.icgn.point_iterations;
    j["device_bytes"] = r.icgn.device_bytes;
    if (r.end_to_end.total_s > 0)
        j["end_to_end_s"] = {{"read", r.end_to_end.read_s}, {"correlate", r.total_s}, {"strain", r.end_to_end.strain_s},
                             {"write", r.end_to_end.write_s}, {"total", r.end_to_end.total_s}};
    if (s.truth) {
        j["truth_points"] = s.truth_points;
        j["rmse_zyx"] = {s.rmse[0], s.rmse[1], s.rmse[2]};
        j["rmse"] = s.rmse_total;
        j["bias_zyx"] = {s.bias[0], s.bias[1], s.bias[2]};
        j["max_abs_error"] = s.max_error;
    }
    return j;
}

void print_summary(const Summary& s, const CorrelationResult& r) {
    std::printf("points %lld:", (long long)s.points);
    for (int i = 0; i < kPointStatusCount - 1; ++i) std::printf(" %s %lld", to_string(PointStatus(i)), (long long)s.counts[i]);
    std::printf("\nmedian ZNCC (converged) %.4f; backend %s\n", s.zncc_median, r.backend.c_str());
    std::printf("time: FFT guess %.3f s (%lld points), prepare %.3f s (upload %.3f), IC-GN %.3f s (Hessian %.3f, factor %.3f, interpolation %.3f, solve %.3f, update %.3f), total %.3f s\n",
                r.guess.fft_s, (long long)r.guess.fft_points, r.icgn.prepare_s, r.icgn.upload_s, r.icgn.icgn_s(), r.icgn.hessian_s, r.icgn.factor_s,
                r.icgn.interpolation_s, r.icgn.solve_s, r.icgn.update_s, r.total_s);
    if (s.truth && s.truth_points == 0)
        std::printf("error against the truth: no point converged, nothing to compare\n");
    else if (s.truth)
        std::printf("error against the truth (%lld converged points): RMSE %.3e voxel (z %.3e, y %.3e, x %.3e), bias z %.2e y %.2e x %.2e, max |e| %.3e\n",
                    (long long)s.truth_points, s.rmse_total, s.rmse[0], s.rmse[1], s.rmse[2], s.bias[0], s.bias[1], s.bias[2], s.max_error);
}

VolumeSource volume_source(const std::string& text, const po::variables_map& vm) {
    VolumeSource s = parse_volume_source(text);
    if (vm.count("dims")) s.raw_dims = option_value([&] { return parse_dims(vm["dims"].as<std::string>(), "--dims"); });
    s.raw_type = option_value([&] { return parse_voxel_type(vm["dtype"].as<std::string>()); });
    const std::int64_t offset = vm["offset"].as<std::int64_t>();
    if (offset < 0) throw UsageError("--offset: " + std::to_string(offset) + " is negative (header bytes to skip)");
    s.raw_offset = std::uint64_t(offset);
    return s;
}

int cmd_correlate(const std::vector<std::string>& args) {
    po::options_description desc(
        "dvc correlate: displacement, strain, ZNCC and a status per grid point between two volumes\n"
        "Inputs: HDF5 (file.h5 or file.h5:/dataset), TIFF stacks (.tif/.tiff), raw (--dims, --dtype)\n\noptions");
    desc.add_options()
        ("help,h", "this help")
        ("pair", po::value<std::string>(), "an HDF5 pair from dvc generate (/reference, /deformed, /truth)")
        ("truth", po::value<std::string>(), "a dvc generate pair whose /truth the results are compared with (for --reference/--deformed inputs)")
        ("reference", po::value<std::string>(), "reference volume (instead of --pair)")
        ("deformed", po::value<std::string>(), "deformed volume (instead of --pair)")
        ("dims", po::value<std::string>(), "raw inputs: ZxYxX")
        ("dtype", po::value<std::string>()->default_value("uint8"), "raw inputs: uint8 | uint16 | float32")
        ("offset", po::value<std::int64_t>()->default_value(0), "raw inputs: header bytes to skip")
        ("mask", po::value<std::string>(), "volume (same dims): points whose centre voxel is 0 are left out")
        ("region", po::value<std::string>(), "z0:z1,y0:y1,x0:x1 voxel box the subsets stay in")
        ("output,o", po::value<std::string>(), "HDF5 results (required; schema in README.md)")
        ("force", "replace existing outputs")
        ("vti", po::value<std::string>(), "VTK image data of the grid (ParaView)")
        ("vtu", po::value<std::string>(), "VTK unstructured points")
        ("png", po::value<std::string>(), "PNG: a z slice of a displacement component beside ZNCC")
        ("png-component", po::value<std::string>()->default_value("magnitude"), "z | y | x | magnitude")
        ("png-slice", po::value<std::int64_t>()->default_value(-1), "grid z index (-1: the middle)")
        ("png-scale", po::value<int>()->default_value(8), "pixels per grid point")
        ("strain-sigma", po::value<double>()->default_value(1.0), "Gaussian smoothing of the field before differentiating, grid spacings")
        ("summary-json", po::value<std::string>(), "write the summary (counts, errors, timings) as JSON")
        ("timeline", po::value<std::string>(), "write the process's phases as JSON: seconds since the process started of each event "
                                               "(libraries loaded, GPU context, reading, stages, outputs, freeing)")
        ("read-to-host", "--backend cuda with raw inputs: read them into host memory first and upload from there (by default they go "
                         "from the file to the GPU through the pinned staging buffers)")
        ("free-at-exit", "free the volumes, device memory and GPU context before the process ends (by default a finished "
                         "correlate ends the process right after its outputs are written and leaves that to the OS)")
        ("results-writer", po::value<std::string>()->default_value("direct"),
         "how the HDF5 result is written: direct (built in its temporary file, each array written straight from memory) "
         "or image (built in memory, copied out and written at the end)")
        ("max-points", po::value<std::int64_t>()->default_value(0), "keep an evenly spread subset of this many grid points (0: all)")
        ("quiet,q", "no progress bars");
    add_correlation_options(desc);
    const auto vm = parse(args, desc);
    if (vm.count("help")) { std::cout << desc << "\n"; return exit_ok; }
    timeline::mark("options_parsed");
    // The GPU's context starts now, while the options and outputs are checked and the volumes read
    // (not for --backend cpu); a usage error below waits for it on the way out.
    std::optional<GpuWarmUp> gpu_warm_up;
    if (vm["backend"].as<std::string>() != "cpu") {
        std::size_t volume_floats = 0;  // known here for raw inputs (--dims); a bad value is reported below
        try {
            if (vm.count("dims")) {
                const Dims d = parse_dims(vm["dims"].as<std::string>(), "--dims");
                volume_floats = std::size_t(d[0] * d[1] * d[2]);
            }
        } catch (const std::exception&) {
        }
        gpu_warm_up.emplace(volume_floats);
    }
    if (!vm.count("output")) throw UsageError("--output is required");
    if (vm.count("pair") == (vm.count("reference") || vm.count("deformed")))
        throw UsageError("give either --pair or both --reference and --deformed");
    if (!vm.count("pair") && !(vm.count("reference") && vm.count("deformed")))
        throw UsageError("--reference and --deformed go together");
    CorrelationOptions o = correlation_options(vm);
    o.progress = !vm.count("quiet");
    o.max_points = vm["max-points"].as<std::int64_t>();
    if (o.max_points < 0) throw UsageError("--max-points: must not be negative");
    if (vm.count("region")) {
        const std::string t = vm["region"].as<std::string>();
        long long v[6];
        if (std::sscanf(t.c_str(), "%lld:%lld,%lld:%lld,%lld:%lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
            throw UsageError("--region: '" + t + "' is not z0:z1,y0:y1,x0:x1");
        for (int i = 0; i < 3; ++i) {
            if (v[2 * i] < 0 || v[2 * i + 1] <= v[2 * i]) throw UsageError("--region: each range needs 0 <= lo < hi");
            o.region_lo[i] = v[2 * i], o.region_hi[i] = v[2 * i + 1];
        }
    }
    const std::string out = vm["output"].as<std::string>();
    const bool force = vm.count("force") > 0;
    std::string ref_name, def_name;
    VolumeSource rs, ds;
    if (vm.count("pair")) {
        ref_name = vm["pair"].as<std::string>() + ":/reference";
        def_name = vm["pair"].as<std::string>() + ":/deformed";
    } else {
        ref_name = vm["reference"].as<std::string>(), def_name = vm["deformed"].as<std::string>();
    }
    rs = volume_source(ref_name, vm), ds = volume_source(def_name, vm);
    std::vector<std::string> inputs{rs.path, ds.path};
    std::optional<VolumeSource> mask_source;
    if (vm.count("mask")) mask_source = volume_source(vm["mask"].as<std::string>(), vm), inputs.push_back(mask_source->path);
    // Every option value and every output is checked before any work: a refusal leaves nothing behind
    // and a long run never ends in one (the writers check their targets again when they commit).
    const std::int64_t png_slice = vm["png-slice"].as<std::int64_t>();
    const int png_scale = vm["png-scale"].as<int>();
    if (png_slice < -1) throw UsageError("--png-slice: " + std::to_string(png_slice) + " is not a grid z index (or -1: the middle)");
    if (png_scale < 1 || png_scale > 64) throw UsageError("--png-scale: " + std::to_string(png_scale) + " is not within 1..64 pixels per grid point");
    const double strain_sigma = checked_double(vm, "strain-sigma", 0.1, 100);
    const std::string writer = vm["results-writer"].as<std::string>();
    if (writer != "direct" && writer != "image") throw UsageError("--results-writer: '" + writer + "' is not one of direct, image");
    const auto write_mode = writer == "image" ? h5::WriteMode::image : h5::WriteMode::direct;
    const batchsolve::io::OutputOptions rules{force ? batchsolve::io::Existing::replace : batchsolve::io::Existing::refuse, inputs};
    {
        std::vector<batchsolve::io::OutputTarget> targets{{"--output", out}};
        for (const char* key : {"vti", "vtu", "png", "summary-json", "timeline"})
            if (vm.count(key)) targets.push_back({std::string("--") + key, vm[key].as<std::string>()});
        batchsolve::io::check_outputs(targets, rules);
    }
    if (vm.count("timeline")) {
        const std::string path = vm["timeline"].as<std::string>();
        timeline::request([path, rules](const std::string& json) { batchsolve::io::write_text_file(path, json, rules); });
    }
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    timeline::mark("outputs_checked");
    const auto t_read = Clock::now();
    // On the GPU, raw inputs are only opened and checked here: the engine reads them straight into
    // its pinned staging buffers (no host copy of the volumes). Otherwise the two volumes are read at
    // the same time: each reader's allocation (the first touch of fresh memory, one thread) overlaps
    // the other's reading.
    const std::string backend_name = vm["backend"].as<std::string>();
    const bool on_gpu = backend_name == "cuda" || (backend_name == "auto" && batchsolve::Context::cuda_available());
    auto load = [&](const VolumeSource& source) { return on_gpu && !vm.count("read-to-host") ? open_for_device(source) : read_volume(source); };
    auto def_future = std::async(std::launch::async, [&] { return load(ds); });
    Volume ref_read;
    try {
        ref_read = load(rs);
    } catch (...) {
        def_future.wait();
        throw;
    }
    const Volume ref = std::move(ref_read);
    const Volume def = def_future.get();
    const double read_s = since(t_read);
    timeline::mark("volumes_read");
    Volume mask;
    if (mask_source) {
        mask = read_volume(*mask_source);
        o.mask = &mask;
    }
    // The region is a box of voxels of these volumes: a range beyond them is an error, not clamped.
    if (vm.count("region"))
        for (int i = 0; i < 3; ++i)
            if (o.region_hi[i] > ref.dims[i])
                throw UsageError("--region: the " + std::string(1, "zyx"[i]) + " range " + std::to_string(o.region_lo[i]) + ":" +
                                 std::to_string(o.region_hi[i]) + " reaches beyond the volume's " + std::to_string(ref.dims[i]) + " voxels");
    // The FFT guess searches shifts up to --search-radius: one larger than the volume cannot keep a
    // subset inside it, and each thread's FFT windows ((subset + 2 radius + 4)^3: two real inputs and
    // their two half spectra, about 16 bytes per voxel of the window) must fit the memory.
    if (o.guess != GuessMode::none) {
        const std::int64_t longest = std::max({ref.dims[0], ref.dims[1], ref.dims[2]});
        if (o.search_radius >= longest)
            throw UsageError("--search-radius: " + std::to_string(o.search_radius) + " voxels is not smaller than the volume (" +
                             dims_text(ref.dims) + "): no shift that large keeps a subset inside it");
        const double window = double(o.icgn.subset) + 2.0 * o.search_radius + 4;
        const double threads = std::max(1u, std::thread::hardware_concurrency());
        const double need = 16.0 * window * window * window * threads;
        const double available = double(h5::available_host_bytes());
        if (need > available) {
            char m[256];
            std::snprintf(m, sizeof m, "--search-radius: %d needs FFT windows of %.0f^3 voxels, %.1f GiB for %.0f threads, %.1f GiB available",
                          o.search_radius, window, need / double(1ull << 30), threads, available / double(1ull << 30));
            throw UsageError(m);
        }
    }
    if (vm.count("png") && png_slice >= 0) {
        const PointGrid grid = make_point_grid(ref.dims, o);
        if (png_slice >= grid.grid_shape[0])
            throw UsageError("--png-slice: " + std::to_string(png_slice) + " is beyond the grid's " + std::to_string(grid.grid_shape[0]) +
                             " z slices (0.." + std::to_string(grid.grid_shape[0] - 1) + ")");
    }
    TruthComparison truth;
    DisplacementField field;
    bool have_truth = false;
    if (vm.count("pair")) {
        auto f = h5::File::open(vm["pair"].as<std::string>());
        if (f.exists("/truth")) field = read_field_attributes(f, "/truth"), have_truth = true;
    }
    if (vm.count("truth")) {
        const std::string path = vm["truth"].as<std::string>();
        auto f = h5::File::open(path);
        if (!f.exists("/truth")) throw Error(path + ": no /truth group (not a pair written by dvc generate)");
        field = read_field_attributes(f, "/truth"), have_truth = true;
    }
    const int component = [&] {
        const std::string c = vm["png-component"].as<std::string>();
        if (c == "z") return 0;
        if (c == "y") return 1;
        if (c == "x") return 2;
        if (c == "magnitude") return 3;
        throw UsageError("--png-component: '" + c + "' is not one of z, y, x, magnitude");
    }();
    timeline::mark("truth_and_checks_done");
    if (gpu_warm_up) gpu_warm_up->wait();
    timeline::mark("gpu_context_waited");
    std::optional<batchsolve::Context> ctx_holder;
    ctx_holder.emplace(batchsolve::parse_backend(vm["backend"].as<std::string>()));
    batchsolve::Context& ctx = *ctx_holder;
    timeline::mark("backend_context_created");
    CorrelationResult r = correlate(ref, def, o, ctx);
    timeline::mark("correlation_done");
    r.end_to_end.read_s = read_s;
    auto t_stage = Clock::now();
    const FieldStrain fs = strain_from_field(r, strain_sigma);
    if (have_truth) truth = compare_with_truth(r, field);
    RunDescription run{ref_name, def_name, o, join_args(args)};
    r.end_to_end.strain_s = since(t_stage);
    timeline::mark("strain_done");
    // Nothing uses the GPU from here on: on the quick exit its context is torn down beside the writing.
    GpuRelease gpu_release;
    const bool quick_exit = owns_process && !vm.count("free-at-exit");
    // (only when the exit waits for the teardown: an exit also waits for a thread still inside the driver)
    if (quick_exit && r.backend == "cuda" && !teardown_detached_requested()) gpu_release.start();
    t_stage = Clock::now();
    write_results_h5(out, force, inputs, r, fs, truth, run, write_mode);
    r.end_to_end.write_s = since(t_stage);
    r.end_to_end.total_s = since(t_read);
    timeline::mark("results_written");
    if (vm.count("vti")) write_vti(vm["vti"].as<std::string>(), r, fs, rules);
    if (vm.count("vtu")) write_vtu(vm["vtu"].as<std::string>(), r, fs, rules);
    const Summary s = summarise(r, &truth);
    print_summary(s, r);
    std::printf("end to end: read %.3f s, correlate %.3f s, strain %.3f s, write %.3f s, total %.3f s (%.0f points/s)\n", r.end_to_end.read_s,
                r.total_s, r.end_to_end.strain_s, r.end_to_end.write_s, r.end_to_end.total_s, double(s.points) / r.end_to_end.total_s);
    if (vm.count("png")) {
        const auto range = write_slice_png(vm["png"].as<std::string>(), r, component, png_slice, png_scale, rules);
        std::printf("png: grid slice z=%lld, left: displacement %s from %.4g (dark) to %.4g (bright) voxels, right: ZNCC %.2f..%.2f, grey: not converged\n",
                    (long long)range.slice, vm["png-component"].as<std::string>().c_str(), range.lo, range.hi, range.zncc_lo, range.zncc_hi);
    }
    if (vm.count("summary-json")) batchsolve::io::write_text_file(vm["summary-json"].as<std::string>(), summary_json(s, r).dump(2) + "\n", rules);
    timeline::mark("other_outputs_written");
    if (quick_exit) {
        // Every output is committed: the process ends here. Freeing the volumes and host memory
        // first would only repeat what the OS does at exit; the GPU context is being torn down
        // beside the writing (GpuRelease), and what is left of it the driver finishes.
        timeline::mark("ending_without_freeing");
        timeline::write_if_requested();
        std::fflush(nullptr);
        detach_teardown();
        std::_Exit(exit_ok);
    }
    // Freed in turn, so that the timeline shows each part's cost.
    ctx_holder.reset();
    timeline::mark("backend_context_freed");
    r = CorrelationResult{};
    mask = Volume{};
    timeline::mark("results_freed");
    if (!owns_process) timeline::write_if_requested();  // in-process callers (tests) have no main to write it
    return exit_ok;
}

// ---- bench ----------------------------------------------------------------------------------------

// One `dvc correlate` of the bench as a user runs it: raw float32 files in, the HDF5 result out,
// its console output discarded; the seconds of the whole call (its own backend context included)
// beside dvc's stage times from --summary-json.
nlohmann::json end_to_end_run(const std::vector<std::string>& correlate_args, const std::string& summary_path) {
    std::fflush(stdout);
    const int saved = ::dup(1);
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (saved >= 0 && devnull >= 0) ::dup2(devnull, 1);
    const auto t0 = std::chrono::steady_clock::now();
    int rc = exit_backend;
    std::string failure;
    try {
        rc = cmd_correlate(correlate_args);
    } catch (const std::exception& e) {
        failure = e.what();
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fflush(stdout);
    if (saved >= 0) ::dup2(saved, 1), ::close(saved);
    if (devnull >= 0) ::close(devnull);
    if (!failure.empty() || rc != exit_ok) throw Error("bench: the end-to-end dvc correlate failed" + (failure.empty() ? std::string() : ": " + failure));
    std::ifstream in(summary_path);
    nlohmann::json j = nlohmann::json::parse(in);
    j["call_s"] = wall;
    return j;
}

int cmd_bench(const std::vector<std::string>& args) {
    po::options_description desc(
        "dvc bench: speed on a synthetic speckle pair (sub-voxel translation + 1% strain), the GPU\n"
        "and CPU backends side by side. Headline: end to end, dvc correlate from raw float32 files to\n"
        "the HDF5 result (seconds and points/s, with its read/correlate/strain/write split); beside it\n"
        "the in-memory run's IC-GN points per second (Hessians, factorisation, iterations), its time\n"
        "split and the error against the truth\n\noptions");
    desc.add_options()
        ("help,h", "this help")
        ("pair", po::value<std::string>(), "an HDF5 pair from dvc generate (default: generated in memory)")
        ("size", po::value<int>()->default_value(512), "edge of the generated cube, voxels")
        ("subsets", po::value<std::string>()->default_value("16,32,48"), "subset edges to time")
        ("backends", po::value<std::string>()->default_value("auto"), "comma list of cuda, cpu (auto: cuda when available, and cpu)")
        ("cpu-points", po::value<std::int64_t>()->default_value(2000), "the CPU backend correlates an evenly spread subset of this many points (0: all)")
        ("gpu-points", po::value<std::int64_t>()->default_value(0), "the same for the GPU backend (0: all)")
        ("end-to-end", po::value<int>()->default_value(1), "1: each run also as dvc correlate from raw files to the HDF5 result (the headline); 0: in memory only")
        ("work", po::value<std::string>(), "folder for the end-to-end runs' files (default: a fresh one under the temporary folder, removed after)")
        ("json", po::value<std::string>(), "write the results as JSON")
        ("spam", po::value<std::string>(), "also time spam beside dvc, whole call against whole call on the same points: the command "
                                           "that runs apps/dic_volume/scripts/spam_correlate.py (e.g. 'python3 .../spam_correlate.py')")
        ("spam-points", po::value<std::int64_t>()->default_value(200), "points of the spam comparison (evenly spread; dvc runs the same)")
        ("spam-processes", po::value<int>()->default_value(0), "spam's processes (0: one per hardware thread)")
        ("force", "replace the JSON file if it exists")
        ("quiet,q", "no progress bars");
    add_correlation_options(desc);
    const auto vm = parse(args, desc);
    if (vm.count("help")) { std::cout << desc << "\n"; return exit_ok; }
    CorrelationOptions base = correlation_options(vm);
    batchsolve::io::OutputOptions json_rules{vm.count("force") ? batchsolve::io::Existing::replace : batchsolve::io::Existing::refuse, {}};
    if (vm.count("pair")) json_rules.inputs.push_back(vm["pair"].as<std::string>());
    if (vm.count("json")) batchsolve::io::check_outputs({{"--json", vm["json"].as<std::string>()}}, json_rules);
    base.progress = !vm.count("quiet");
    Volume ref, def;
    DisplacementField field;
    const auto t_gen = std::chrono::steady_clock::now();
    if (vm.count("pair")) {
        ref = read_hdf5_volume(vm["pair"].as<std::string>(), "/reference");
        def = read_hdf5_volume(vm["pair"].as<std::string>(), "/deformed");
        auto f = h5::File::open(vm["pair"].as<std::string>());
        field = read_field_attributes(f, "/truth");
    } else {
        const int n = vm["size"].as<int>();
        if (n < 24) throw UsageError("--size: at least 24 voxels");
        SpeckleOptions so;
        so.dims = {n, n, n};
        ref = make_speckle(so);
        field.kind = "translation+strain";
        field.centre = {0.5 * (n - 1), 0.5 * (n - 1), 0.5 * (n - 1)};
        field.translation = {0.4, -0.3, 0.2};
        field.gradient = {0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01};
        def = deform(ref, field, DeformOptions{});
    }
    const double generate_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_gen).count();
    // End to end: the pair as raw float32 files and its truth as a small HDF5 file, in `work`.
    const bool end_to_end = vm["end-to-end"].as<int>() != 0;
    std::string work;
    bool remove_work = false;
    if (end_to_end) {
        if (vm.count("work")) work = vm["work"].as<std::string>();
        else {
            std::string pattern = (std::filesystem::temp_directory_path() / "dvc_bench_XXXXXX").string();
            if (!::mkdtemp(pattern.data())) throw Error(pattern + ": cannot create the bench's folder");
            work = pattern, remove_work = true;
        }
        std::filesystem::create_directories(work);
        write_raw_file(work + "/reference.raw", ref.data.data(), ref.voxels() * sizeof(float), true);
        write_raw_file(work + "/deformed.raw", def.data.data(), def.voxels() * sizeof(float), true);
        auto t = h5::File::create(work + "/truth.h5", h5::Existing::replace);
        write_field_attributes(t, "/truth", field);
        t.commit();
    }
    struct WorkRemover {
        std::string path;
        ~WorkRemover() {
            std::error_code ec;
            if (!path.empty()) std::filesystem::remove_all(path, ec);
        }
    } remover{remove_work ? work : std::string()};
    // The correlation options of this call, passed on to each end-to-end dvc correlate.
    std::vector<std::string> passed;
    for (const char* name : {"spacing", "interpolation", "max-iterations", "tolerance", "guess", "search-radius", "seed-stride", "retries",
                             "min-zncc", "pyramid-levels", "presmooth"}) {
        const boost::any& v = vm[name].value();
        std::string text;
        if (const int* i = boost::any_cast<int>(&v)) text = std::to_string(*i);
        else if (const double* d = boost::any_cast<double>(&v)) {
            std::ostringstream o;
            o.precision(17);
            o << *d;
            text = o.str();
        } else if (const std::string* t = boost::any_cast<std::string>(&v)) text = *t;
        else throw Error(std::string("bench: option --") + name + " has an unexpected type");
        passed.insert(passed.end(), {std::string("--") + name, text});
    }
    std::vector<batchsolve::Backend> backends;
    {
        std::stringstream ss(vm["backends"].as<std::string>());
        std::string b;
        while (std::getline(ss, b, ',')) {
            if (b == "auto") {
                if (batchsolve::Context::cuda_available()) backends.push_back(batchsolve::Backend::cuda);
                backends.push_back(batchsolve::Backend::cpu);
            } else backends.push_back(batchsolve::parse_backend(b));
        }
    }
    std::vector<int> subsets;
    {
        std::stringstream ss(vm["subsets"].as<std::string>());
        std::string b;
        while (std::getline(ss, b, ',')) subsets.push_back(std::stoi(b));
    }
    nlohmann::json j;
    j["volume"] = dims_text(ref.dims);
    j["field"] = field.kind;
    j["generate_s"] = generate_s;
    j["spacing"] = base.spacing;
    j["interpolation"] = to_string(base.icgn.interpolation);
    j["guess"] = to_string(base.guess);
    std::printf("dvc bench: %s pair (%s), spacing %d, %s interpolation, guess %s\n", dims_text(ref.dims).c_str(), field.kind.c_str(),
                base.spacing, to_string(base.icgn.interpolation), to_string(base.guess));
    std::printf("%-6s %-7s %-8s %9s %9s %11s %7s %8s %7s %7s %12s %9s %9s %9s %9s %9s %9s %9s %10s %9s\n", "subset", "backend", "device", "points",
                "e2e s", "e2e pts/s", "read s", "correl s", "strain", "write s", "IC-GN pts/s",
                "guess s", "hess s", "factor s", "interp s", "solve s", "update s", "conv %", "RMSE vox", "GPU MiB");
    for (int s : subsets) {
        for (auto b : backends) {
            batchsolve::Context ctx(b);
            CorrelationOptions o = base;
            o.icgn.subset = s;
            o.max_points = b == batchsolve::Backend::cpu ? vm["cpu-points"].as<std::int64_t>() : vm["gpu-points"].as<std::int64_t>();
            nlohmann::json e2e;
            if (end_to_end) {
                std::vector<std::string> cargs{"correlate", "--reference", work + "/reference.raw", "--deformed", work + "/deformed.raw",
                                               "--dims", dims_text(ref.dims), "--dtype", "float32", "--backend",
                                               b == batchsolve::Backend::cuda ? "cuda" : "cpu", "--subset", std::to_string(s),
                                               "--max-points", std::to_string(o.max_points), "-o", work + "/result.h5", "--force", "-q",
                                               "--truth", work + "/truth.h5", "--summary-json", work + "/summary.json"};
                cargs.insert(cargs.end(), passed.begin(), passed.end());
                e2e = end_to_end_run(cargs, work + "/summary.json");
            }
            const CorrelationResult r = correlate(ref, def, o, ctx);
            const TruthComparison truth = compare_with_truth(r, field);
            const Summary sm = summarise(r, &truth);
            const double pps = double(r.status.size()) / std::max(r.icgn.icgn_s(), 1e-12);
            const double conv = 100.0 * double(sm.counts[0]) / double(std::max<std::int64_t>(sm.points, 1));
            const double e2e_s = end_to_end ? e2e["call_s"].get<double>() : 0.0;
            auto e2e_stage = [&](const char* key) { return end_to_end ? e2e["end_to_end_s"][key].get<double>() : 0.0; };
            std::printf("%-6d %-7s %-8.8s %9lld %9.3f %11.0f %7.3f %8.3f %7.3f %7.3f %12.0f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.2f %10.3e %9.0f\n", s,
                        r.backend.c_str(), ctx.device_name().c_str(), (long long)sm.points, e2e_s, end_to_end ? double(sm.points) / e2e_s : 0.0,
                        e2e_stage("read"), e2e_stage("correlate"), e2e_stage("strain"), e2e_stage("write"), pps, r.guess.fft_s, r.icgn.hessian_s, r.icgn.factor_s,
                        r.icgn.interpolation_s, r.icgn.solve_s, r.icgn.update_s, conv, sm.rmse_total, r.icgn.device_bytes / 1048576.0);
            auto row = summary_json(sm, r);
            row["subset"] = s;
            row["device"] = ctx.device_name();
            row["icgn_points_per_s"] = pps;
            if (end_to_end) {
                row["end_to_end"] = e2e;  // dvc correlate's own summary of the same run from files
                row["end_to_end_s"] = e2e_s;
                row["end_to_end_points_per_s"] = double(sm.points) / e2e_s;
            }
            j["runs"].push_back(row);
        }
    }
    if (vm.count("spam")) {
        if (!end_to_end) throw UsageError("--spam compares whole calls: it needs --end-to-end 1");
        const std::int64_t spam_points = vm["spam-points"].as<std::int64_t>();
        if (spam_points < 1) throw UsageError("--spam-points: at least 1");
        const int processes = vm["spam-processes"].as<int>() > 0 ? vm["spam-processes"].as<int>() : int(std::max(1u, std::thread::hardware_concurrency()));
        std::printf("beside spam, whole call against whole call on the same %lld points (files in, results out):\n", (long long)spam_points);
        for (int s : subsets) {
            // dvc's whole call on the points spam gets: its result file names them.
            const std::string points_file = work + "/same_points.h5";
            for (auto b : backends) {
                std::vector<std::string> cargs{"correlate", "--reference", work + "/reference.raw", "--deformed", work + "/deformed.raw",
                                               "--dims", dims_text(ref.dims), "--dtype", "float32", "--backend",
                                               b == batchsolve::Backend::cuda ? "cuda" : "cpu", "--subset", std::to_string(s),
                                               "--max-points", std::to_string(spam_points), "-o", points_file, "--force", "-q",
                                               "--truth", work + "/truth.h5", "--summary-json", work + "/summary.json"};
                cargs.insert(cargs.end(), passed.begin(), passed.end());
                const nlohmann::json e2e = end_to_end_run(cargs, work + "/summary.json");
                const double rmse = e2e.contains("rmse") ? e2e["rmse"].get<double>() : std::nan("");
                std::printf("  subset %d: dvc %s: %.3f s for %lld points (%.1f points/s), RMSE %.3e\n", s, b == batchsolve::Backend::cuda ? "cuda" : "cpu",
                            e2e["call_s"].get<double>(), e2e["points"].get<long long>(), e2e["points"].get<double>() / e2e["call_s"].get<double>(), rmse);
                nlohmann::json row{{"subset", s}, {"backend", b == batchsolve::Backend::cuda ? "cuda" : "cpu"}, {"call_s", e2e["call_s"]},
                                   {"points", e2e["points"]}, {"rmse", rmse}, {"converged", e2e["status"]["converged"]}};
                j["beside_spam"]["dvc"].push_back(row);
            }
            const std::string spam_json = work + "/spam.json", spam_log = work + "/spam.log";
            const std::string command = vm["spam"].as<std::string>() + " --reference " + work + "/reference.raw --deformed " + work +
                                        "/deformed.raw --dims " + dims_text(ref.dims) + " --dtype float32 --points-from " + points_file +
                                        " --subset " + std::to_string(s) + " --order " + (base.icgn.interpolation == Interpolation::trilinear ? "1" : "3") +
                                        " --processes " + std::to_string(processes) + " --out " + spam_json + " > " + spam_log + " 2>&1";
            std::fflush(stdout);
            const auto t0 = std::chrono::steady_clock::now();
            const int rc = std::system(command.c_str());
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (rc != 0) {
                std::ifstream log(spam_log);
                std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
                if (text.size() > 600) text = "..." + text.substr(text.size() - 600);
                throw Error("bench: the spam call failed (exit status " + std::to_string(rc) + "): " + text);
            }
            std::ifstream in(spam_json);
            const nlohmann::json sp = nlohmann::json::parse(in);
            const auto& nodes = sp["nodes"];
            const auto& disp = sp["displacement"];
            const auto& conv = sp["converged"];
            double sq = 0;
            std::int64_t converged = 0;
            for (std::size_t k = 0; k < nodes.size(); ++k) {
                if (conv[k].get<int>() != 1) continue;
                const Point3 X{nodes[k][0].get<double>(), nodes[k][1].get<double>(), nodes[k][2].get<double>()};
                const Point3 u = field.displacement(X);
                for (int i = 0; i < 3; ++i) sq += (disp[k][i].get<double>() - u[i]) * (disp[k][i].get<double>() - u[i]);
                ++converged;
            }
            const double rmse = converged ? std::sqrt(sq / double(converged)) : std::nan("");
            std::printf("  subset %d: spam %s (%d processes, order %d, window %d): %.3f s for %zu points (%.1f points/s; ldic itself %.3f s), "
                        "%lld converged, RMSE %.3e\n", s, sp["spam"].get<std::string>().c_str(), processes, sp["order"].get<int>(),
                        sp["window"].get<int>(), wall, nodes.size(), double(nodes.size()) / wall, sp["ldic_s"].get<double>(), (long long)converged, rmse);
            j["beside_spam"]["spam"].push_back({{"subset", s}, {"version", sp["spam"]}, {"processes", processes}, {"order", sp["order"]},
                                               {"window", sp["window"]}, {"call_s", wall}, {"ldic_s", sp["ldic_s"]}, {"read_s", sp["read_s"]},
                                               {"points", nodes.size()}, {"converged", converged}, {"rmse", rmse}});
        }
    }
    if (vm.count("json")) batchsolve::io::write_text_file(vm["json"].as<std::string>(), j.dump(2) + "\n", json_rules);
    return exit_ok;
}

}  // namespace

int run_process(const std::vector<std::string>& args) {
    timeline::mark("main_entered");
    owns_process = !args.empty() && args[0] == "correlate";
    const int rc = run_cli(args);
    timeline::mark("main_returned");
    timeline::write_if_requested();
    return rc;
}

int run_cli(const std::vector<std::string>& args) {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << main_help;
        return args.empty() ? exit_usage : exit_ok;
    }
    const std::string command = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    try {
        if (command == "generate") return cmd_generate(rest);
        if (command == "correlate") return cmd_correlate(rest);
        if (command == "bench") return cmd_bench(rest);
        throw UsageError("unknown command '" + command + "' (generate, correlate, bench)");
    } catch (const UsageError& e) {
        std::cerr << "dvc: error: " << e.what() << "\n";
        return exit_usage;
    } catch (const po::error& e) {
        std::cerr << "dvc: error: " << e.what() << "\n";
        return exit_usage;
    } catch (const batchsolve::InvalidArgument& e) {
        std::cerr << "dvc: error: " << e.what() << "\n";
        return exit_usage;
    } catch (const batchsolve::NotCompiled& e) {
        std::cerr << "dvc: error: " << e.what() << "\n";
        return exit_backend;
    } catch (const Error& e) {
        std::cerr << "dvc: error: " << e.what() << "\n";
        return exit_file;
    } catch (const batchsolve::io::FileError& e) {
        std::cerr << "dvc: error: " << e.what() << "\n";
        return exit_file;
    } catch (const batchsolve::Error& e) {
        std::cerr << "dvc: error: " << e.what() << "\n";
        return exit_backend;
    } catch (const std::bad_alloc&) {
        std::cerr << "dvc: error: out of memory\n";
        return exit_backend;
    }
}

}  // namespace dvc
