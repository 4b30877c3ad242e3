#!/usr/bin/env python3
"""gemm-binned.png: cuBLAS grouped time / ours (_max) at x = 512 and 256 for each bin dispatch design, uniform and skewed batches."""
import json, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
here = os.path.dirname(os.path.abspath(__file__))
def ratio(name, p, x):
    for r in json.load(open(os.path.join(here, name)))["rows"]:
        if r["precision"] == p and r["variant"] == "" and r["detail"]["x"] == x:
            return r["refs"]["cublas-grouped"]["time_ms"] / r["time_ms"]
    return None
uniform = ["shipped", "streams", "sorted", "both", "fused", "fused-sorted", "shipped-again"]
skewed = ["skewed-shipped", "skewed-fused", "skewed-both"]
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
for ax, p in zip(axes, "ds"):
    names = uniform + skewed
    for i, x in enumerate((512, 256)):
        ys = [ratio(n + ".json", p, x) for n in names]
        ax.bar([j + 0.4 * i for j in range(len(names))], ys, width=0.4, label=f"x = {x}")
    ax.set_xticks([j + 0.2 for j in range(len(names))]); ax.set_xticklabels(names, rotation=45, ha="right", fontsize=7)
    ax.axhline(1.0, color="grey", lw=0.6); ax.set_ylim(0.8, 1.6)
    ax.set_title(f"{p}: cuBLAS grouped / ours (_max)"); ax.legend(fontsize=7)
fig.tight_layout(); fig.savefig(os.path.join(here, "gemm-binned.png"), dpi=80)
