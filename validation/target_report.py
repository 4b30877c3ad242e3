#!/usr/bin/env python3
"""Checks a tester run (tester --json FILE) against the performance targets of issue 3 and plots it.

    python3 validation/target_report.py tester.json [more.json ...] --output DIR

(a case in a later file replaces the same case of an earlier one: re-runs after a table update)
writes DIR/targets.md (every target: met or missed, by how much, with the compiler's resource use
of the kernel behind each miss) and DIR/<routine>_<prec>_batch<B>.png (GFLOP/s against n for each
layout, cuSOLVER, the CPU reference and the memory roofline at the copy bandwidth of the run).

Targets (issue 3; roofline = the bytes a perfect implementation moves at the measured copy bandwidth):
  potrf, interleaved and chunked: roofline fraction >= 0.70 (n <= 16), 0.50 (17..64), 0.35 (65..128)
  potrf, column-major:            >= 8x cuSOLVER for n <= 32, >= 3x for 33..128
  potrs, nrhs 1:                  roofline fraction >= 0.50 and >= 10x cuSOLVER
  posv:                           time <= 1.15x potrf's (same precision, layout, n, batch; potrf of the
                                  same run where that run timed it, so both ran with the same code and
                                  conditions, else the latest potrf row)
  all:                            scaled backward error below the tester's tolerance (30)

Runs that measured the launch floor (header gpu.launch_floor_us, rows' roofline_ceiling) add it to the
header, a "ceiling" column to the two roofline-fraction and the two x-cuSOLVER targets and, in the
summary, how many missed rows are unattainable under single-call timing (ceiling < wanted). No call
timed alone can take less than t_best = max(roofline time, launch floor), so a roofline target's
ceiling is the largest fraction such a call can reach (roofline time / t_best, the row's
roofline_ceiling), and a speed-up target's ceiling is the speed-up over cuSOLVER a call running at the
roofline, and no faster than the launch floor, would show (cuSOLVER time / t_best = speedup *
roofline_ceiling / roofline). The speed-up ceiling would need only the roofline, but it is given only
for rows with a roofline_ceiling, so a run without those fields gives the report as before.
"""

import argparse
import json
import os
import sys
from collections import defaultdict

INTERLEAVED = ("interleaved", "chunked")  # the tester's names of the layouts
COLUMN_MAJOR = ("column_major", "pointer_array")
ROOFLINE_TARGETS = ("potrf interleaved: roofline fraction", "potrs nrhs 1: roofline fraction")
CUSOLVER_TARGETS = ("potrf column-major: x cuSOLVER", "potrs nrhs 1: x cuSOLVER")
UNATTAINABLE = "unattainable under single-call timing"


def roofline_target(n):
    return 0.70 if n <= 16 else 0.50 if n <= 64 else 0.35


def cusolver_target(n):
    return 8.0 if n <= 32 else 3.0


def layout_name(row):
    return "chunked:%d" % row["chunk"] if row["layout"] == "chunked" else row["layout"]


def kernel_text(row):
    k = row.get("kernel")
    if not k:
        return "-"
    return "%d regs, %d B spill, occ %.0f%%" % (k["registers"], k["local_bytes"], 100 * k.get("occupancy", 0))


def speedup(row):
    ref = row.get("refs", {}).get("cusolver", {})
    return ref.get("speedup") if ref.get("ran") else None


def ceiling(row):
    """The row's roofline_ceiling (None in runs before the launch floor was measured, and off the GPU)."""
    return row.get("roofline_ceiling")


def speedup_ceiling(row):
    """The largest speed-up over cuSOLVER a call timed alone could show: cuSOLVER time / t_best with
    t_best = max(roofline time, launch floor) = roofline time / roofline_ceiling, where roofline time
    = roofline * time_ms and cuSOLVER time = speedup * time_ms. None without a roofline_ceiling (so a
    run before the launch floor was measured keeps its report), a positive roofline or a speed-up."""
    sp, roof, ceil = speedup(row), row.get("roofline"), ceiling(row)
    if sp is None or roof is None or roof <= 0 or ceil is None:
        return None
    return sp * ceil / roof


def target_ceiling(name, row):
    """The row's ceiling for the target: a roofline fraction or a speed-up; None for other targets."""
    if name in ROOFLINE_TARGETS:
        return ceiling(row)
    if name in CUSOLVER_TARGETS:
        return speedup_ceiling(row)
    return None


def ceiling_text(name, row):
    value = target_ceiling(name, row)
    if value is None:
        return ""
    return ("%.3f" if name in ROOFLINE_TARGETS else "%.2f") % value


def unattainable(name, item):
    """A missed target that no call timed alone could meet: its ceiling is below the target."""
    r, _, want, met = item
    value = target_ceiling(name, r)
    return not met and value is not None and value < want


def launch_floor_text(headers):
    floors = sorted(h["gpu"]["launch_floor_us"] for h in headers
                    if h.get("gpu", {}).get("launch_floor_us") is not None)
    if not floors:
        return None
    value = "%.2f us" % floors[0] if floors[0] == floors[-1] else "%.2f-%.2f us (over the runs)" % (floors[0], floors[-1])
    return ("- launch floor: %s (median event-timed single launch of an empty kernel, one block per SM); "
            "a row's ceiling = roofline time / max(roofline time, launch floor) for a roofline fraction, "
            "cuSOLVER time / max(roofline time, launch floor) for a speed-up" % value)


def row_key(r):
    return (r["routine"], r["precision"], layout_name(r), r["uplo"], r["n"], r["batch"], r["nrhs"])


def load(paths):
    """GPU rows of all files; a row of a later file replaces the same case of an earlier one (a re-run).
    A reference the re-run did not time (e.g. LAPACK, left out to save time) is kept from the earlier
    row: it does not depend on the library's kernels. So are the backward error and the difference
    from LAPACK of a re-run without --check, but only when it ran the same kernel (same name: the same
    generated code, so the same arithmetic); another kernel's error is not carried over."""
    by_key, headers = {}, []
    for p in paths:
        with open(p) as f:
            doc = json.load(f)
        headers.append(doc["header"])
        # posv's potrf baseline from its own run (a later run may re-time potrf only)
        own_potrf = {(r["precision"], layout_name(r), r["n"], r["batch"]): r["time_ms"] for r in doc["rows"]
                     if r["routine"] == "potrf" and r.get("time_ms") is not None and r["backend"] == "cuda"}
        for r in doc["rows"]:
            if r["routine"] == "posv":
                r = dict(r, _potrf_same_run_ms=own_potrf.get((r["precision"], layout_name(r), r["n"], r["batch"])))
            if r.get("time_ms") is not None and r["backend"] == "cuda":
                earlier = by_key.get(row_key(r))
                if earlier is not None:
                    refs = dict(earlier.get("refs") or {})
                    refs.update({k: v for k, v in (r.get("refs") or {}).items() if v and v.get("ran", True)})
                    r = dict(r, refs=refs)
                    same_kernel = (earlier.get("kernel") or {}).get("name") == (r.get("kernel") or {}).get("name")
                    if same_kernel and r.get("error") is None and earlier.get("error") is not None:
                        r = dict(r, error=earlier["error"], diff_lapack=earlier.get("diff_lapack"))
                by_key[row_key(r)] = r
    return headers, list(by_key.values())


def check(rows):
    """Returns {target name: [(row, achieved, wanted, met)]}."""
    out = defaultdict(list)
    potrf_time = {}
    for r in rows:
        if r["routine"] == "potrf":
            potrf_time[(r["precision"], layout_name(r), r["n"], r["batch"])] = r["time_ms"]
    for r in rows:
        n, routine, layout = r["n"], r["routine"], r["layout"]
        if routine == "potrf" and layout in INTERLEAVED and r.get("roofline") is not None:
            want = roofline_target(n)
            out["potrf interleaved: roofline fraction"].append((r, r["roofline"], want, r["roofline"] >= want))
        if routine == "potrf" and layout in COLUMN_MAJOR and speedup(r) is not None:
            want = cusolver_target(n)
            out["potrf column-major: x cuSOLVER"].append((r, speedup(r), want, speedup(r) >= want))
        if routine == "potrs" and r["nrhs"] == 1:
            if r.get("roofline") is not None:
                out["potrs nrhs 1: roofline fraction"].append((r, r["roofline"], 0.5, r["roofline"] >= 0.5))
            if speedup(r) is not None:
                out["potrs nrhs 1: x cuSOLVER"].append((r, speedup(r), 10.0, speedup(r) >= 10.0))
        if routine == "posv":
            base = r.get("_potrf_same_run_ms") or potrf_time.get((r["precision"], layout_name(r), n, r["batch"]))
            if base:
                ratio = r["time_ms"] / base
                out["posv: time / potrf time"].append((r, ratio, 1.15, ratio <= 1.15))
        if r.get("error") is not None:
            out["backward error (scaled, < tolerance)"].append((r, r["error"], 30.0, r["status"] == "ok"))
    return out


def markdown(headers, results):
    h = headers[0]
    gpu = h["gpu"]
    lines = ["# Small-Cholesky speed targets", "",
             "- GPU: %s, CUDA runtime %s, copy bandwidth %.0f GB/s" % (
                 gpu.get("name", "?"), gpu.get("cuda_runtime_version", "?"), gpu.get("copy_bandwidth_GBps", 0)),
             "- commits: %s; dates: %s" % (", ".join(sorted({x["git_commit"] for x in headers})),
                                          ", ".join(sorted({x["date"] for x in headers}))),
             "- commands:"]
    lines += ["  - `%s`" % x["command_line"] for x in headers]
    floor = launch_floor_text(headers)
    if floor:
        lines.insert(3, floor)
    # The ceiling columns only when some row has a ceiling: an old run's report stays as it was.
    with_ceiling = {name for name in ROOFLINE_TARGETS + CUSOLVER_TARGETS
                    if any(target_ceiling(name, i[0]) is not None for i in results.get(name, []))}
    if with_ceiling:
        lines += ["", "| target | rows | met | missed | of which %s | worst (achieved vs wanted) |" % UNATTAINABLE,
                  "|---|---:|---:|---:|---:|---|"]
    else:
        lines += ["", "| target | rows | met | missed | worst (achieved vs wanted) |", "|---|---:|---:|---:|---|"]
    for name, items in results.items():
        missed = [i for i in items if not i[3]]
        lower_is_better = name.startswith("posv") or name.startswith("backward")
        worst = (max if lower_is_better else min)(items, key=lambda i: i[1]) if items else None
        worst_text = "-" if worst is None else "%s %s %s n=%d batch %d: %.3g vs %.3g" % (
            worst[0]["precision"], worst[0]["routine"], layout_name(worst[0]), worst[0]["n"], worst[0]["batch"],
            worst[1], worst[2])
        counts = (name, len(items), len(items) - len(missed), len(missed))
        if not with_ceiling:
            lines.append("| %s | %d | %d | %d | %s |" % (counts + (worst_text,)))
        else:
            cannot = "%d" % sum(unattainable(name, i) for i in items) if name in with_ceiling else "-"
            lines.append("| %s | %d | %d | %d | %s | %s |" % (counts + (cannot, worst_text)))
    if with_ceiling:
        lines += ["", "A missed row is %s when its ceiling is below the target. For a roofline "
                  "fraction the ceiling is the largest fraction a call whose event-timed duration is at least "
                  "the launch floor can reach; for a speed-up over cuSOLVER it is the speed-up a call running "
                  "at the roofline, and no faster than the launch floor, would show (cuSOLVER time / "
                  "max(roofline time, launch floor))." % UNATTAINABLE]
    for name, items in results.items():
        extra = name in with_ceiling
        lines += ["", "## " + name, "",
                  "| prec | layout | n | batch | achieved | wanted | met | time ms | GFLOP/s | roofline | "
                  + ("ceiling | " if extra else "") + "x cuSOLVER | kernel |",
                  "|---|---|---:|---:|---:|---:|---|---:|---:|---:|" + ("---:|" if extra else "") + "---:|---|"]
        for r, got, want, met in sorted(items, key=lambda i: (i[0]["precision"], layout_name(i[0]), i[0]["batch"], i[0]["n"])):
            sp = speedup(r)
            cells = [r["precision"], layout_name(r), "%d" % r["n"], "%d" % r["batch"], "%.3g" % got, "%.3g" % want,
                     "yes" if met else "**no**", "%.4f" % r["time_ms"], "%.0f" % r["gflops"],
                     "%.3f" % r["roofline"] if r.get("roofline") is not None else "-"]
            if extra:
                cells.append(ceiling_text(name, r))
            cells += ["%.2f" % sp if sp is not None else "-", kernel_text(r)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plots(rows, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("target_report: matplotlib missing, no plots", file=sys.stderr)
        return []
    groups = defaultdict(list)
    for r in rows:
        groups[(r["routine"], r["precision"], r["batch"])].append(r)
    written = []
    for (routine, prec, batch), rs in sorted(groups.items()):
        fig, ax = plt.subplots(figsize=(8, 5))
        by_layout = defaultdict(list)
        for r in rs:
            by_layout[layout_name(r)].append(r)
        for layout, lr in sorted(by_layout.items()):
            lr.sort(key=lambda r: r["n"])
            ax.plot([r["n"] for r in lr], [r["gflops"] for r in lr], marker="o", label="batchsolve " + layout)
        any_layout = sorted(by_layout.values(), key=len)[-1]
        for ref, style in (("cusolver", "s--"), ("lapack", "^:")):
            pts = sorted((r["n"], r["refs"][ref]["gflops"]) for r in any_layout
                         if r.get("refs", {}).get(ref, {}).get("ran"))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                        label=("cuSOLVER (column-major)" if ref == "cusolver" else "CPU reference (LAPACK)"))
        roof = sorted((r["n"], r["roofline_gflops"]) for r in any_layout if r.get("roofline_gflops"))
        if roof:
            ax.plot([p[0] for p in roof], [p[1] for p in roof], "k-", linewidth=0.8, label="memory roofline")
        ax.set_xlabel("n")
        ax.set_ylabel("GFLOP/s")
        ax.set_yscale("log")
        ax.set_title("%s%s, batch %d" % (prec, routine, batch))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        path = os.path.join(outdir, "%s_%s_batch%d.png" % (routine, prec, batch))
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("--output", required=True)
    a = ap.parse_args()
    headers, rows = load(a.json)
    if not rows:
        sys.exit("target_report: no GPU rows with timings in " + ", ".join(a.json))
    os.makedirs(a.output, exist_ok=True)
    results = check(rows)
    with open(os.path.join(a.output, "targets.md"), "w") as f:
        f.write(markdown(headers, results))
    for p in plots(rows, a.output):
        print("wrote", p)
    print("wrote", os.path.join(a.output, "targets.md"))


if __name__ == "__main__":
    main()
