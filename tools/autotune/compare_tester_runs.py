#!/usr/bin/env python3
"""Compares two tester runs of the same cases, row by row: the way to judge a new tuning table
against the committed one (the same tester binary and seed, once with the tables compiled in and
once with BATCHSOLVE_TUNING_FILE=new.json; libsolver/tuning/README.md).

    python3 tools/autotune/compare_tester_runs.py BEFORE.json AFTER.json [--output DIR] [--threshold 0.05]

Reads the tester's --json files (a run cut short still has the rows it finished), pairs the rows
with status ok by (routine, precision, layout, uplo, n, batch, nrhs) and prints, per routine and
layout, the geometric mean and range of time(AFTER) / time(BEFORE), then every row where either is
more than --threshold slower than the other. Both runs must come from the same GPU. With --output,
writes compare.md (the same as a table) and compare.png (the ratios against n).

Separate tester processes on one GPU differ by about 5% overall (round 11,
results/2026-11-26-h200-2f7dcc4-posv-fold-run45/), as much as the usual threshold. With --control ROUTINE,
the rows of a routine whose entries the new table leaves alone measure that drift per precision and
layout, and the other routines' ratios are also reported divided by it.
"""

import argparse
import collections
import json
import math
import os
import sys


def load(path):
    with open(path) as f:
        j = json.load(f)
    rows = {}
    for r in j.get("rows", []):
        if r.get("status") != "ok" or not r.get("time_ms"):
            continue
        key = (r["routine"], r["precision"], r["layout"], r.get("uplo", "lower"), r["n"], r["batch"], r.get("nrhs", 0))
        rows[key] = r["time_ms"]
    return j.get("header", {}), rows


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def summary_lines(ratio, threshold):
    """Per routine and layout: rows, geometric mean, range, and rows beyond the threshold either way."""
    lines = ["| routine | layout | rows | geometric mean | min | max | slower > {0:.0%} | faster > {0:.0%} |".format(threshold),
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    groups = collections.defaultdict(list)
    for k, r in ratio.items():
        groups[(k[0], k[2])].append(r)
    for (routine, layout), v in sorted(groups.items()) + [(("all", ""), list(ratio.values()))]:
        lines.append(f"| {routine} | {layout} | {len(v)} | {geomean(v):.3f} | {min(v):.3f} | {max(v):.3f} | "
                     f"{sum(x > 1 + threshold for x in v)} | {sum(x < 1 / (1 + threshold) for x in v)} |")
    return lines


def drift_corrected(ratio, control):
    """(the other routines' ratios divided by the drift, the drift by (precision, layout)): the drift
    is the geometric mean ratio of the `control` routine's rows of that precision and layout."""
    groups = collections.defaultdict(list)
    for k, r in ratio.items():
        if k[0] == control:
            groups[(k[1], k[2])].append(r)
    if not groups:
        raise SystemExit(f"--control {control}: no {control} rows in both runs, so nothing measures the drift")
    drift = {g: geomean(v) for g, v in groups.items()}
    corrected = {}
    for k, r in ratio.items():
        if k[0] == control:
            continue
        if (k[1], k[2]) not in drift:
            raise SystemExit(f"--control {control}: no {control} rows of {k[1]} {k[2]}, so its drift is not measured")
        corrected[k] = r / drift[(k[1], k[2])]
    return corrected, drift


def compare(before, after, threshold):
    """(ratios by key, lines of the report)."""
    (hb, rb), (ha, ra) = before, after
    gb, ga = hb.get("gpu", {}).get("name"), ha.get("gpu", {}).get("name")
    if gb != ga:
        raise SystemExit(f"the runs come from different GPUs ({gb} and {ga}): their times do not compare")
    keys = sorted(set(rb) & set(ra))
    if not keys:
        raise SystemExit("no row with status ok in both runs")
    ratio = {k: ra[k] / rb[k] for k in keys}
    lines = [f"GPU: {ga}; {len(keys)} rows in both runs ({len(rb)} and {len(ra)} in each); "
             f"time(after) / time(before):", ""] + summary_lines(ratio, threshold)
    lines += ["", f"Rows more than {threshold:.0%} apart (ms):", "",
              "| routine | precision | layout | n | batch | before | after | ratio |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for k in keys:
        if ratio[k] > 1 + threshold or ratio[k] < 1 / (1 + threshold):
            lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[4]} | {k[5]} | {rb[k]:.4f} | {ra[k]:.4f} | {ratio[k]:.3f} |")
    return ratio, lines


def plot(ratio, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    routines = sorted({k[0] for k in ratio})
    fig, axes = plt.subplots(1, len(routines), figsize=(5 * len(routines), 4), squeeze=False, sharey=True)
    for ax, routine in zip(axes[0], routines):
        for layout, marker in (("interleaved", "o"), ("chunked", "s"), ("column_major", "^")):
            for precision, color in (("s", "tab:blue"), ("d", "tab:red")):
                pts = sorted((k[4], v) for k, v in ratio.items()
                             if k[0] == routine and k[1] == precision and k[2].split(":")[0] == layout)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color, linestyle="none",
                            alpha=0.7, label=f"{precision} {layout}")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_title(routine)
        ax.set_xlabel("n")
        ax.set_yscale("log")
    axes[0][0].set_ylabel("time after / time before (< 1: faster)")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--output", help="directory for compare.md and compare.png")
    ap.add_argument("--threshold", type=float, default=0.05, help="relative difference listed row by row")
    ap.add_argument("--control", help="a routine whose entries did not change: its rows measure the drift")
    args = ap.parse_args()
    if not args.threshold > 0:
        sys.exit("--threshold must be > 0")
    ratio, lines = compare(load(args.before), load(args.after), args.threshold)
    if args.control:
        corrected, drift = drift_corrected(ratio, args.control)
        lines += ["", f"Drift between the runs ({args.control} rows, whose entries did not change): " +
                  ", ".join(f"{p} {l} {d:.3f}" for (p, l), d in sorted(drift.items())), "",
                  "The other routines' ratios divided by the drift of their precision and layout:", ""]
        lines += summary_lines(corrected, args.threshold)
    print("\n".join(lines))
    if args.output:
        os.makedirs(args.output, exist_ok=True)
        with open(os.path.join(args.output, "compare.md"), "w") as f:
            f.write(f"before: {args.before}\nafter: {args.after}\n\n" + "\n".join(lines) + "\n")
        plot(ratio, os.path.join(args.output, "compare.png"))


if __name__ == "__main__":
    main()
