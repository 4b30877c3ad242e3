#!/usr/bin/env python3
"""Where the wall time of `dvc correlate` goes: one horizontal bar per run of scripts/gpu/dvc.sh
(runs.json, from each run's --timeline), split into before main (exec and the libraries' loading),
the GPU context and staging, reading/upload/correlation, strain and the results file, and the exit
(wall time after the last event); beside them the bare CUDA process of floor.csv (context only), so
the fixed part of every run is visible.

    plot_e2e_phases.py RESULTS_DIR            (reads RESULTS_DIR/runs.json [+ floor.csv], writes phases.png)
"""
import csv
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PHASES = [  # (label, end event, colour); each phase runs from the previous phase's end
    ("before main", "main_entered", "#999999"),
    ("GPU context + staging", "gpu_context_waited", "#d95f02"),
    ("engine: upload, prepare, FFT guess, IC-GN", "correlation_done", "#1b9e77"),
    ("strain + results file", "other_outputs_written", "#7570b3"),
]


def main():
    folder = sys.argv[1]
    runs = json.load(open(f"{folder}/runs.json"))["runs"]
    rows = []
    for r in runs:
        if r["rc"] != 0 or not r.get("timeline") or r["run"] == 1:
            continue
        rows.append((f"{r['size']}^3 {r['design']} #{r['run']}", r))
    floor = None
    try:
        walls = {}
        for f in csv.DictReader(open(f"{folder}/floor.csv")):
            walls.setdefault(f["variant"], []).append((float(f["wall_s"]), json.loads(f["json"]) if f["json"].startswith("{") else {}))
        if "context" in walls:
            w = walls["context"]
            floor = (statistics.median(x for x, _ in w), statistics.median(j.get("at_main_s", 0) for _, j in w),
                     statistics.median(j.get("context_s", 0) for _, j in w))
    except (OSError, ValueError, KeyError):
        pass
    fig, ax = plt.subplots(figsize=(10, 0.45 * (len(rows) + 2) + 2.0))
    y = 0
    labels = []
    if floor:
        wall, at_main, context = floor
        ax.barh(y, at_main, color=PHASES[0][2])
        ax.barh(y, context, left=at_main, color=PHASES[1][2])
        ax.barh(y, wall - at_main - context, left=at_main + context, color="#e7298a")
        labels.append("bare CUDA process")
        y += 1
    for label, r in rows:
        ev = r["timeline"]
        start = 0.0
        for _, end, colour in PHASES:
            t = ev.get(end)
            if t is None:
                continue
            ax.barh(y, t - start, left=start, color=colour)
            start = t
        ax.barh(y, r["wall_s"] - start, left=start, color="#e7298a")
        labels.append(label)
        y += 1
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("seconds since the process started (wall time, measured from outside)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for _, _, c in PHASES] + [plt.Rectangle((0, 0), 1, 1, color="#e7298a")]
    ax.legend(handles, [p[0] for p in PHASES] + ["exit (after the last event)"], loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=5, fontsize=7)
    ax.axvline(0.4, color="k", lw=0.8, ls="--")
    ax.axvline(1.5, color="k", lw=0.8, ls=":")
    ax.set_title("dvc correlate --backend cuda: phases of each warm run (dashed: 192^3 target 0.4 s, dotted: 512^3 target 1.5 s)", fontsize=9)
    fig.tight_layout()
    fig.savefig(f"{folder}/phases.png", dpi=110)
    print(f"{folder}/phases.png")


if __name__ == "__main__":
    main()
