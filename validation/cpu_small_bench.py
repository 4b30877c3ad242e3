#!/usr/bin/env python3
"""The CPU small-n Cholesky benchmark, in one run: the tester on the CPU backend (the batchsolve CPU
backend against LAPACKE loops on all cores and on one thread and against its own LAPACKE path, the
backend with BATCHSOLVE_CPU_SIMD=off: `--ref lapack,lapack1,cpu-lapacke --cpu-peak`, every C++ column in
one tester run), then numpy's batched routines on the same cases, in this process (numpy is a Python
library: the tester, a C++ program, cannot call it, so its column is added here); writes a results folder with the merged JSON (the schema of the earlier
cpu_small_bench results: one row per case, a time per method), a Markdown table (ratios and the targets),
a PNG (GFLOP/s against n) and a manifest.json.

    validation/cpu_small_bench.py --tester build/validation/tester [--out results]
                                  [--n 4,8,...] [--batch 16384] [--rounds 5] [--numpy-rounds 3]
                                  [--precision d,s] [--routine potrf,posv]

numpy's rows: potrf is numpy.linalg.cholesky on a (batch, n, n) array; numpy has no batched Cholesky
solve, so posv's numpy row is numpy.linalg.solve (LU with pivoting, twice the factorisation's flops),
the batched dense solver a numpy user would call; GFLOP/s are counted with the Cholesky flops for every
method, so they compare times. Targets (issue 29): batchsolve >= 2x the all-cores LAPACKE loop at n <= 32
and >= 1x at every n <= 128, potrf and posv.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

# numpy loops over a batch one matrix at a time; OpenBLAS threads inside each factorisation of n <= 128
# only add synchronisation (on a loaded 2-core machine a round at n = 128 took minutes), so numpy runs
# with its BLAS on one thread, its best setting for this work (set before numpy loads OpenBLAS).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
METHODS = ("batchsolve", "batchsolve_off", "lapacke_omp", "lapacke_1thread", "numpy")
LABELS = {
    "batchsolve": "batchsolve CPU backend (vector path)",
    "batchsolve_off": "batchsolve, BATCHSOLVE_CPU_SIMD=off (the backend's LAPACKE loop)",
    "lapacke_omp": "LAPACKE per matrix, OpenMP on all cores",
    "lapacke_1thread": "LAPACKE per matrix, one thread",
    "numpy": "numpy (cholesky; posv: linalg.solve)",
}


def spd_batch(n, batch, distinct, dtype, seed):
    """`distinct` random SPD matrices of condition ~100 repeated over the batch (as the tester run: condition 100)."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((distinct, n, n)))
    d = np.logspace(0, -2, n)
    a = (q * d[None, None, :]) @ np.swapaxes(q, 1, 2)
    a = 0.5 * (a + np.swapaxes(a, 1, 2))
    reps = -(-batch // distinct)
    return np.ascontiguousarray(np.tile(a, (reps, 1, 1))[:batch].astype(dtype))


def time_numpy(routine, n, batch, precision, rounds, distinct):
    dtype = np.float64 if precision == "d" else np.float32
    a = spd_batch(n, batch, min(distinct, batch), dtype, 20261127 + n)
    b = np.ones((batch, n, 1), dtype=dtype)
    call = (lambda: np.linalg.cholesky(a)) if routine == "potrf" else (lambda: np.linalg.solve(a, b))
    call()  # warm-up
    seconds = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = call()
        seconds.append(time.perf_counter() - t0)
    ok = bool(np.isfinite(out).all())
    return seconds, ok


def git_commit():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def from_tester(main):
    """The tester run as one document in the schema of the earlier results: header (CPU, threads,
    peak, load) and per case the methods' median seconds, GFLOP/s (Cholesky flops: the tester's counts)
    and the tester's scaled error of our rows."""
    h = main["header"]
    cpu = h["cpu"]
    doc = {"header": {"program": "validation/tester (cpu_small_bench.py)", "date": h["date"], "cpu": cpu_model(),
                      "threads": cpu["threads"], "BATCHSOLVE_CPU_SIMD": os.environ.get("BATCHSOLVE_CPU_SIMD", "(unset: auto)"),
                      "cpu_path": cpu["backend_path"], "simd_isa": cpu["backend_simd_isa"],
                      "openblas": cpu["lapack_library"], "load_average_before": open("/proc/loadavg").read().split()[:3],
                      "load_average_after": open("/proc/loadavg").read().split()[:3],
                      "peak_gflops": cpu["gemm_peak_gflops"], "peak_method": cpu["gemm_peak_method"],
                      "tester_command_lines": [main["header"]["command_line"]]},
           "rows": []}
    for r in main["rows"]:
        flops = r["flops"]
        def method(seconds, error=None):
            return {"seconds": seconds, "gflops": flops / seconds * 1e-9 if seconds else 0, "backward_error": error}
        m = {"batchsolve": method(r["time_ms"] * 1e-3, r.get("error"))}
        for name, ref in (("batchsolve_off", "cpu-lapacke"), ("lapacke_omp", "lapack"), ("lapacke_1thread", "lapack1")):
            q = r["refs"].get(ref, {})
            if q.get("ran"):
                m[name] = method(q["time_ms"] * 1e-3)
        t = {k: v["seconds"] for k, v in m.items()}
        doc["rows"].append({"routine": r["routine"], "precision": r["precision"], "n": r["n"], "batch": r["batch"],
                            "nrhs": r["nrhs"], "flops": flops, "status": r["status"], "methods": m,
                            # the reference: the faster LAPACKE set-up of the case (docs/benchmarking.md)
                            "speedup": {"over_lapacke_best": min(t.get("lapacke_omp", 0), t.get("lapacke_1thread", 0))
                                        / t["batchsolve"],
                                        "over_lapacke_omp": t.get("lapacke_omp", 0) / t["batchsolve"],
                                        "over_lapacke_1thread": t.get("lapacke_1thread", 0) / t["batchsolve"],
                                        "over_batchsolve_off": t.get("batchsolve_off", 0) / t["batchsolve"]},
                            "fraction_of_peak": r.get("roofline")})
    return doc


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def table(doc):
    peak = doc["header"]["peak_gflops"]
    lines = ["| routine | prec | n | batchsolve | BATCHSOLVE_CPU_SIMD=off | LAPACKE all cores | LAPACKE 1 thread | numpy | "
             "× LAPACKE all cores | × LAPACKE 1 thread | × numpy | × before | % of GEMM peak | target |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in doc["rows"]:
        m = r["methods"]
        t = {k: m[k]["seconds"] for k in METHODS if k in m}
        need = 2.0 if r["n"] <= 32 else 1.0
        ratio = t["lapacke_omp"] / t["batchsolve"]
        # The target is judged against the faster LAPACKE set-up (one thread wins below n = 16:
        # OpenBLAS's per-call buffer lock serialises the threads, docs/benchmarking.md).
        best = min(t["lapacke_omp"], t["lapacke_1thread"]) / t["batchsolve"]
        verdict = ("met" if best >= need else "**missed**") + f" (≥ {need:g}× the faster LAPACKE: {best:.2f}×)"
        cells = [f"{m[k]['gflops']:.2f}" if k in m else "—" for k in METHODS]
        numpy_ratio = f"{t['numpy'] / t['batchsolve']:.2f}" if "numpy" in t else "—"
        lines.append(f"| {r['routine']} | {r['precision']} | {r['n']} | " + " | ".join(cells) +
                     f" | {ratio:.2f} | {t['lapacke_1thread'] / t['batchsolve']:.2f} | {numpy_ratio} | "
                     f"{t['batchsolve_off'] / t['batchsolve']:.2f} | "
                     f"{100 * m['batchsolve']['gflops'] / peak[r['precision']]:.1f} | {verdict} |")
    return "\n".join(lines) + "\n"


def plot(doc, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("cpu_small_bench.py: matplotlib not installed; no PNG", file=sys.stderr)
        return False
    keys = sorted({(r["routine"], r["precision"]) for r in doc["rows"]}, key=lambda k: (k[0] != "potrf", k[1] != "d"))
    cols = min(2, len(keys))
    rows_of_plots = -(-len(keys) // cols)
    fig, axes = plt.subplots(rows_of_plots, cols, figsize=(6.0 * cols, 4.4 * rows_of_plots), squeeze=False)
    flat = [ax for row in axes for ax in row]
    styles = {"batchsolve": ("C0", "o-"), "batchsolve_off": ("C7", "x:"), "lapacke_omp": ("C1", "s--"),
              "lapacke_1thread": ("C2", "^--"), "numpy": ("C3", "d-.")}
    for ax, (routine, prec) in zip(flat, keys):
        rows = sorted((r for r in doc["rows"] if r["routine"] == routine and r["precision"] == prec), key=lambda r: r["n"])
        ns = [r["n"] for r in rows]
        for m in METHODS:
            if all(m in r["methods"] for r in rows):
                color, style = styles[m]
                ax.plot(ns, [r["methods"][m]["gflops"] for r in rows], style, color=color, label=LABELS[m], ms=4)
        ax.axhline(doc["header"]["peak_gflops"][prec], color="k", lw=0.8, ls="--")
        ax.text(ns[0], doc["header"]["peak_gflops"][prec] * 0.8, "GEMM peak (measured)", fontsize=7)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(ns)
        ax.set_xticklabels([str(n) for n in ns], fontsize=7)
        ax.set_xlabel("n")
        ax.set_title(f"{routine} ({prec}), batch {rows[0]['batch']}", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    for ax in flat[len(keys):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel("GFLOP/s (Cholesky flop count)")
    flat[0].legend(fontsize=7, loc="lower right")
    h = doc["header"]
    fig.suptitle(f"CPU small-n Cholesky: {h['cpu']}, {h['threads']} threads, commit {h['commit']}, {h['date'][:10]} "
                 f"(load before {h['load_average_before']})", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tester", required=True, help="the tester executable (validation/tester)")
    ap.add_argument("--out", default=os.path.join(REPO, "results"), help="where the run folder goes (default results/)")
    ap.add_argument("--n", default="4,8,12,16,24,32,48,64,100,128")
    ap.add_argument("--batch", type=int, default=16384)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--distinct", type=int, default=512)
    ap.add_argument("--numpy-rounds", type=int, default=3,
                    help="timed rounds of numpy (default 3: one round at n = 128 takes seconds)")
    ap.add_argument("--precision", default="d,s")
    ap.add_argument("--routine", default="potrf,posv")
    args = ap.parse_args()

    commit = git_commit()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    folder = os.path.join(args.out, f"{date}-cpu-{commit}-small-cholesky")
    os.makedirs(folder, exist_ok=True)
    raw = os.path.join(folder, "cpu_small_bench.json")
    common = ["--routine", args.routine, "--backend", "cpu", "--n", args.n, "--batch", str(args.batch),
              "--repeat", str(args.rounds), "--warmup", "1", "--distinct", str(args.distinct),
              "--precision", args.precision, "--check", "--cond", "100"]
    path = os.path.join(folder, "tester.json")
    command = [args.tester] + common + ["--ref", "lapack,lapack1,cpu-lapacke", "--cpu-peak", "--json", path]
    print("cpu_small_bench.py:", " ".join(command), flush=True)
    done = subprocess.run(command, capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    console = done.stdout + done.stderr
    if done.returncode == 255 or not os.path.exists(path):
        sys.exit(f"cpu_small_bench.py: the tester failed (exit status {done.returncode})")
    worst = done.returncode
    with open(path) as f:
        doc = from_tester(json.load(f))
    doc["header"]["commit"] = commit
    doc["header"]["numpy"] = np.__version__
    doc["header"]["python"] = platform.python_version()
    numpy_ok = True
    for r in doc["rows"]:
        seconds, ok = time_numpy(r["routine"], r["n"], r["batch"], r["precision"], args.numpy_rounds, args.distinct)
        numpy_ok &= ok
        t = statistics.median(seconds)
        r["methods"]["numpy"] = {"seconds": t, "seconds_all": seconds, "gflops": r["flops"] / t * 1e-9,
                                 "call": "numpy.linalg.cholesky" if r["routine"] == "potrf" else "numpy.linalg.solve"}
        r["speedup"]["over_numpy"] = t / r["methods"]["batchsolve"]["seconds"]
        print(f"numpy {r['routine']} {r['precision']} n={r['n']}: {r['methods']['numpy']['gflops']:.2f} GFLOP/s "
              f"(batchsolve {r['speedup']['over_numpy']:.2f}x)", flush=True)
    doc["header"]["load_average_after_numpy"] = open("/proc/loadavg").read().split()[:3]
    with open(raw, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with open(os.path.join(folder, "table.md"), "w") as f:
        h = doc["header"]
        f.write(f"# CPU small-n batched Cholesky: batchsolve vs LAPACKE loops and numpy\n\n"
                f"{h['cpu']}, {h['threads']} OpenMP threads, commit {commit}, {h['date']}; GFLOP/s of the median of "
                f"{args.rounds} rounds ({args.numpy_rounds} for numpy; Cholesky flop counts; posv with one right-hand side), ratios of times "
                f"(> 1: batchsolve faster). Measured GEMM peak: d {h['peak_gflops']['d']:.1f}, "
                f"s {h['peak_gflops']['s']:.1f} GFLOP/s. Load average before {h['load_average_before']}, after "
                f"{h['load_average_after']} (a shared machine). numpy {np.__version__} "
                f"(OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}); its posv row is numpy.linalg.solve (LU).\n\n")
        f.write(table(doc))
    png = plot(doc, os.path.join(folder, "gflops.png"))
    with open(os.path.join(folder, "console.txt"), "w") as f:
        f.write(console)
    manifest = {
        "date": date,
        "gpu": f"none: CPU run ({doc['header']['cpu']}, {doc['header']['threads']} threads)",
        "commit": commit,
        "cuda": "none",
        "topic": "the CPU backend's vectorised small-n potrf/posv (s, d, batch "
                 f"{args.batch}, n {args.n}) against LAPACKE loops on all cores and one thread, numpy and the "
                 "backend's LAPACKE path, with the measured GEMM peak",
        "command": ["validation/cpu_small_bench.py " + " ".join(sys.argv[1:])],
        "files": {
            "cpu_small_bench.json": "the tester run in the earlier schema (header: CPU, threads, peak, load; one row "
                                    "per case, every method's times) with numpy's times added",
            "tester.json": "the tester on the CPU backend with the LAPACKE peers, its own LAPACKE path "
                           "(cpu-lapacke) and the GEMM peak",
            "table.md": "the side-by-side table with ratios and the issue's targets",
            "console.txt": "the tester run's console output",
        },
        "formerly": "",
        "note": "CPU only (no GPU involved). The machine is shared by several engineers: see the load averages "
                "in the JSON header.",
    }
    if png:
        manifest["files"]["gflops.png"] = "GFLOP/s against n per routine and precision, every method, the GEMM peak"
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(table(doc))
    print(f"cpu_small_bench.py: wrote {folder}")
    return 0 if worst == 0 and numpy_ok else 1


if __name__ == "__main__":
    sys.exit(main())
