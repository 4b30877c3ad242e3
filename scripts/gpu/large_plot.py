#!/usr/bin/env python3
"""Plots of a large-family results folder: potrf_large's cuSOLVER/ours ratio per n (one line per
design, s and d) and posv_mixed's time per condition number (one line per design, Xpotrf + Xpotrs and
the fastest cuSOLVER IRS beside them). Reads the tester JSON files in the folder; writes ratio.png /
posv_mixed.png there.   scripts/gpu/large_plot.py results/FOLDER"""
import glob, json, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

folder = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(folder, "*.json"))):
    if os.path.basename(f).startswith(("targets", "manifest")):
        continue
    try:
        rows += json.load(open(f))["rows"]
    except Exception:
        pass

potrf = [r for r in rows if r["routine"] == "potrf_large" and r.get("status") == "ok"]
if potrf:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, p in zip(axes, "ds"):
        lines = {}
        for r in potrf:
            if r["precision"] != p or "cusolver" not in r.get("refs", {}):
                continue
            lines.setdefault(r.get("variant") or "table", {})[r["n"]] = r["refs"]["cusolver"]["speedup"]
        for name, pts in sorted(lines.items()):
            ns = sorted(pts)
            ax.plot(ns, [pts[n] for n in ns], marker="o", label=name)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_title(f"potrf_large {p}: cuSOLVER Xpotrf time / ours")
        ax.set_xlabel("n")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("ratio (> 1: ours faster)")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "ratio.png"), dpi=110)

mixed = [r for r in rows if r["routine"] == "posv_mixed" and r.get("time_ms")]
if mixed:
    ns = sorted({r["n"] for r in mixed})
    fig, axes = plt.subplots(1, len(ns), figsize=(6 * len(ns), 4.5))
    axes = axes if len(ns) > 1 else [axes]
    conds = ["cond1e2", "cond1e4", "cond1e6", "cond1e8"]
    for ax, n in zip(axes, ns):
        lines, peers = {}, {}
        for r in mixed:
            if r["n"] != n:
                continue
            c, _, design = r["variant"].partition("/")
            lines.setdefault(design or "automatic chain", {})[c] = r["time_ms"]
            for k in ("cusolver", "cusolver-irs-best"):
                if k in r.get("refs", {}) and r["refs"][k].get("time_ms"):
                    peers.setdefault(k, {})[c] = r["refs"][k]["time_ms"]
        x = range(len(conds))
        for name, pts in sorted(lines.items()):
            ax.plot([i for i, c in enumerate(conds) if c in pts], [pts[c] for c in conds if c in pts], marker="o",
                    lw=2.5 if name == "automatic chain" else 1, label=name)
        for k, pts in peers.items():
            ax.plot([i for i, c in enumerate(conds) if c in pts], [pts[c] for c in conds if c in pts], "k--" if k == "cusolver" else "k:",
                    label={"cusolver": "Xpotrf + Xpotrs (FP64)", "cusolver-irs-best": "fastest cuSOLVER IRS"}[k])
        ax.set_xticks(list(x), conds)
        ax.set_yscale("log")
        ax.set_ylabel("ms (median)")
        ax.set_title(f"posv_mixed d, n = {n} (every row at double accuracy)")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "posv_mixed.png"), dpi=110)
