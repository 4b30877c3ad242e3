#!/usr/bin/env python3
"""gemm-rows-designs.png: cuBLAS grouped time / ours (_max) per x for the shipped table and each design of this folder."""
import json, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
here = os.path.dirname(os.path.abspath(__file__))
def ratios(name, p):
    out = {}
    for r in json.load(open(os.path.join(here, name)))["rows"]:
        if r["precision"] == p and r["variant"] == "":
            out[r["detail"]["x"]] = r["refs"]["cublas-grouped"]["time_ms"] / r["time_ms"]
    return [out[x] for x in sorted(out)], sorted(out)
fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
for ax, p in zip(axes, "ds"):
    for name, label, style in (("final.json", "shipped (per-class rows)", "k-o"), ("final-rows4.json", "rows 4 every class", "C0-s"),
                               ("final-rows8.json", "rows 8 every class", "C1-^"), ("final-ring.json", "ring, classes >= 256", "C2-D")):
        y, x = ratios(name, p)
        if y:
            ax.plot(x, y, style, label=label, ms=4)
    ax.axhline(1.1, color="grey", lw=0.6, ls=":"); ax.axhline(1.0, color="grey", lw=0.6)
    ax.set_xscale("log", base=2); ax.set_xlabel("x (m, n, k uniform in [1, x]; 2000 problems)")
    ax.set_title(f"{p}: cuBLAS grouped / ours (_max)"); ax.legend(fontsize=7)
fig.tight_layout(); fig.savefig(os.path.join(here, "gemm-rows-designs.png"), dpi=80)
