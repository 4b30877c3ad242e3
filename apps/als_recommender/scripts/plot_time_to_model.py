#!/usr/bin/env python3
"""Where the time of `als train` goes, per case of scripts/gpu/als.sh (summary.csv and each case's log):
phases.png, one horizontal bar per case split into before main (exec and the libraries' loading), the
child probe of the input, the read and checks, factors and values, the engine's set-up, the
iterations, finishing and writing the model, and the exit (the rest of the wall time); iteration.png,
one bar per case of the mean iteration (2..N) split into the Gram matrices, the rest of the builds and
the two solves, beside the per-iteration targets.

    plot_time_to_model.py RESULTS_DIR       (reads RESULTS_DIR/summary.csv and RESULTS_DIR/<case>.log, writes phases.png, iteration.png)
"""
import csv
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = ["#999999", "#e6ab02", "#66a61e", "#a6761d", "#d95f02", "#1b9e77", "#7570b3", "#e7298a"]
LABELS = ["before main", "child probe", "read + checks", "factors, values", "engine set-up",
          "iterations", "finishing + writing the model", "exit (rest of the wall time)"]


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def main():
    folder = sys.argv[1]
    rows = [r for r in csv.DictReader(open(f"{folder}/summary.csv")) if r["rc"] == "0" and r["wall_s"]]
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(rows) + 2.4))
    for y, r in enumerate(rows):
        try:
            log = open(f"{folder}/{r['case']}.log", errors="replace").read()
        except OSError:
            log = ""
        m = re.search(r"the process had run ([\d.]+) s before reading began", log)
        before = float(m.group(1)) if m else 0.0
        total, wall = num(r["total_s"]), num(r["wall_s"])
        to_first = num(r["time_to_first_s"])
        iters = re.findall(r"iter \d+\s+build ([\d.]+) s\s+solve ([\d.]+) s", log)
        after_first = sum(float(a) + float(b) for a, b in iters[1:])
        parts = [before, num(r["probe_s"]), num(r["read_s"]), num(r["init_s"]) + num(r["values_s"]), num(r["engine_s"]),
                 num(r["first_iteration_s"]) + after_first]
        parts.append(max(0.0, total - to_first - after_first))  # finishing and writing
        parts.append(max(0.0, wall - before - total))
        left = 0.0
        for p, c in zip(parts, COLOURS):
            ax.barh(y, p, left=left, color=c)
            left += p
    ax.set_yticks(range(len(rows)), [f"{r['case']} (k={r['k']})" for r in rows])
    ax.invert_yaxis()
    ax.axvline(1.5, color="k", lw=0.8, ls="--")
    ax.set_xlabel("seconds since the process started (wall time, measured from outside)")
    ax.legend([plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS], LABELS, loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(rows) < 3 else -0.12),
              ncol=4, fontsize=7)
    ax.set_title("als train --backend cuda, ML-20M shape, 5 (k=64) or 3 iterations: phases (dashed: the 1.5 s target)", fontsize=9)
    fig.tight_layout()
    fig.savefig(f"{folder}/phases.png", dpi=110)
    print(f"{folder}/phases.png")
    plot_iteration(folder, rows)


def plot_iteration(folder, rows):
    rows = [r for r in rows if num(r.get("iter_s"))]
    if not rows:
        return
    colours = ["#e7298a", "#1b9e77", "#7570b3", "#d95f02"]
    labels = ["Gram matrices (both halves)", "rest of the builds (gather + accumulate)", "users' solve", "items' solve"]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 2.2))
    for y, r in enumerate(rows):
        gram = num(r.get("iter_gram_s"))
        parts = [gram, num(r["iter_build_s"]) - gram, num(r.get("users_solve_s")), num(r.get("items_solve_s"))]
        if not parts[2] and not parts[3]:
            parts[2] = num(r["iter_solve_s"])  # a log without the per-half figures
        left = 0.0
        for p, c in zip(parts, colours):
            ax.barh(y, p, left=left, color=c)
            left += p
        ax.text(left, y, f" {num(r['iter_s']):.4f} s", va="center", fontsize=7)
    ax.set_yticks(range(len(rows)), [f"{r['case']} (k={r['k']}, {r['build_kernel']}, Gram {r.get('gram_kernel', 'syrk')}, "
                                     f"solve {r.get('solve_kernel') or 'posv'})" for r in rows])
    ax.invert_yaxis()
    for x, style in ((0.03, "--"), (0.06, ":"), (0.2, "-.")):
        ax.axvline(x, color="k", lw=0.8, ls=style)
    ax.set_xlabel("seconds per iteration, mean of iterations 2..N (targets: k=64 0.03 dashed, k=128 0.06 dotted, k=256 0.2 dash-dot)")
    ax.legend([plt.Rectangle((0, 0), 1, 1, color=c) for c in colours], labels, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4, fontsize=7)
    ax.set_title("als train --backend cuda, ML-20M shape: where an iteration goes", fontsize=9)
    fig.tight_layout()
    fig.savefig(f"{folder}/iteration.png", dpi=110)
    print(f"{folder}/iteration.png")


if __name__ == "__main__":
    main()
