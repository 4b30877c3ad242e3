#!/usr/bin/env python3
"""iteration.png of an als-k128.sh / als-k256.sh folder: each case's mean iteration (2..N) from summary.csv
as build alone, build and solve at once (--overlap), solve alone (the three sum to iter_s), beside the
per-iteration targets (0.06 s at k = 128, 0.2 s at k = 256).   plot_iteration.py FOLDER"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

folder = sys.argv[1]
rows = [r for r in csv.DictReader(open(f"{folder}/summary.csv")) if r["rc"] == "0" and r["iter_s"]]
fig, axes = plt.subplots(1, 2, figsize=(12, 0.42 * len(rows) + 2.4), gridspec_kw={"width_ratios": [1, 1]})
for ax, k, target in zip(axes, ("128", "256"), (0.06, 0.2)):
    sel = [r for r in rows if r["k"] == k]
    for y, r in enumerate(sel):
        b, s, o = float(r["iter_build_s"]), float(r["iter_solve_s"]), float(r["iter_overlap_s"])
        parts = [(b - o, "#66a61e", "build alone"), (o, "#e6ab02", "build and solve at once"), (s - o, "#7570b3", "solve alone")]
        left = 0.0
        for w, c, lab in parts:
            ax.barh(y, w, left=left, color=c, label=lab if y == 0 else None)
            left += w
        ax.text(left, y, f" {float(r['iter_s']):.4f}", va="center", fontsize=8)
    ax.axvline(target, color="k", ls="--", lw=1, label=f"target {target} s")
    ax.set_yticks(range(len(sel)), [r["case"] for r in sel], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds per iteration (mean of iterations 2..N)")
    ax.set_title(f"k = {k}")
    ax.set_xlim(0, max([float(r["iter_s"]) for r in sel] + [target]) * 1.22)
axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.09), ncol=4)
fig.suptitle(f"als train, ML-20M shape, one H200: {folder.rstrip('/').split('/')[-1]}", fontsize=9)
fig.tight_layout()
fig.savefig(f"{folder}/iteration.png", dpi=90)
