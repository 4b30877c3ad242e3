#!/usr/bin/env python3
"""gemm-adopted-vs-before.png: cuBLAS grouped time / ours per x, s and d, both levels, this folder's final.json
(the table adopted at 3fc7d11) beside ../2026-12-04-h200-07b8848-gemm-rows/final.json (the table before it)."""
import json, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
runs = [("3fc7d11 (adopted)", os.path.join(here, "final.json"), "-"),
        ("07b8848 (before)", os.path.join(here, "..", "2026-12-04-h200-07b8848-gemm-rows", "final.json"), "--")]
fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
for ax, p in zip(axes, ("d", "s")):
    for label, path, ls in runs:
        rows = [r for r in json.load(open(path))["rows"] if r["precision"] == p and r["routine"] == "gemm_vbatched"]
        rows.sort(key=lambda r: r["n"])
        xs = [r["n"] for r in rows]
        g = [r["detail"]["seconds"]["cublas_grouped"] for r in rows]
        ax.plot(xs, [a / r["detail"]["seconds"]["ours"] for a, r in zip(g, rows)], ls, marker="o", label=f"{label} _max")
        ax.plot(xs, [a / r["detail"]["seconds"]["ours_checked"] for a, r in zip(g, rows)], ls, marker="s", label=f"{label} checked")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xscale("log", base=2); ax.set_xticks([32, 64, 128, 256, 512]); ax.set_xticklabels(["32", "64", "128", "256", "512"])
    ax.set_title(f"{p}: cuBLAS grouped time / ours"); ax.set_xlabel("x (m = n = k uniform in [1, x], 2000 problems)")
    ax.grid(alpha=0.3)
axes[0].legend(fontsize=7)
fig.tight_layout()
fig.savefig(os.path.join(here, "gemm-adopted-vs-before.png"), dpi=90)
