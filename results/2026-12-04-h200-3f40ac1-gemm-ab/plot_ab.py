#!/usr/bin/env python3
"""gemm-ab.png: d gemm_vbatched _max time per process of the A/B/A/B/A (shipped-1, cand1, shipped-2, cand2,
shipped-3) at x = 512 and 256, uniform and skewed, from this folder's JSON."""
import json, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
order = ["shipped-1", "cand1", "shipped-2", "cand2", "shipped-3"]
cases = [("gemm", 512), ("gemm", 256), ("gemm_skewed", 512), ("gemm_skewed", 256)]
fig, axes = plt.subplots(1, 4, figsize=(12, 3.2))
for ax, (setup, x) in zip(axes, cases):
    ms = []
    for name in order:
        rows = json.load(open(os.path.join(here, name + ".json")))["rows"]
        r = next(r for r in rows if r["detail"]["setup"] == setup and r["n"] == x)
        ms.append(r["time_ms"])
    ax.bar(range(5), ms, color=["grey", "tab:blue", "grey", "tab:orange", "grey"])
    ax.set_xticks(range(5)); ax.set_xticklabels(order, rotation=30, fontsize=7)
    lo = min(ms); ax.set_ylim(lo * 0.9, max(ms) * 1.03)
    ax.set_title(f"d {setup} x = {x}: ms", fontsize=9)
fig.tight_layout()
fig.savefig(os.path.join(here, "gemm-ab.png"), dpi=90)
