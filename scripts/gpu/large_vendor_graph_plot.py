#!/usr/bin/env python3
"""The plot of a large-vendor-graph.sh folder: potrf_large's cuSOLVER Xpotrf / ours per n (one line per
step and design, d and s) and posv_mixed's Xpotrf + Xpotrs / ours per condition number (one line per
step and design, n = 8192 and 16384). Reads the folder's tester JSON files (plain or .xz); writes
large-vendor-graph.png there.   scripts/gpu/large_vendor_graph_plot.py results/FOLDER"""
import glob, json, lzma, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

folder = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(folder, "*.json")) + glob.glob(os.path.join(folder, "*.json.xz"))):
    base = os.path.basename(f)
    if base.startswith(("targets", "manifest")):
        continue
    step = base.split(".json")[0]
    try:
        data = json.load(lzma.open(f) if f.endswith(".xz") else open(f))
    except Exception:
        continue
    for r in data.get("rows", []):
        r["step"] = step
        rows.append(r)


def ratio(r):
    cu = r.get("refs", {}).get("cusolver", {}).get("time_ms")
    return cu / r["time_ms"] if cu and r.get("time_ms") and r.get("status") == "ok" else None


fig, axes = plt.subplots(1, 4, figsize=(18, 4.2))
for ax, p in zip(axes[:2], "ds"):
    lines = {}
    for r in rows:
        if r["routine"] == "potrf_large" and r["precision"] == p and ratio(r):
            lines.setdefault("%s %s" % (r["step"], r.get("variant") or "table"), {})[r["n"]] = ratio(r)
    for name, pts in sorted(lines.items()):
        ns = sorted(pts)
        ax.plot(ns, [pts[n] for n in ns], marker="o", label=name)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_title("potrf_large %s: cuSOLVER Xpotrf / ours" % p)
    ax.set_xlabel("n")
    ax.legend(fontsize=7)
conds = ["cond1e2", "cond1e4", "cond1e6", "cond1e8"]
for ax, n in zip(axes[2:], (8192, 16384)):
    lines = {}
    for r in rows:
        if r["routine"] == "posv_mixed" and r["n"] == n and ratio(r):
            cond, _, design = (r.get("variant") or "").partition("/")
            if cond in conds:
                lines.setdefault("%s %s" % (r["step"], design or "auto"), {})[conds.index(cond)] = ratio(r)
    for name, pts in sorted(lines.items()):
        xs = sorted(pts)
        ax.plot(xs, [pts[x] for x in xs], marker="o", label=name)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xticks(range(4), conds)
    ax.set_title("posv_mixed d n = %d: Xpotrf+Xpotrs / ours" % n)
    ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(os.path.join(folder, "large-vendor-graph.png"), dpi=110)
print("wrote", os.path.join(folder, "large-vendor-graph.png"))
