#!/usr/bin/env python3
"""Tables and a plot of a scripts/gpu/gemm-offsets.sh run (the folder it wrote: sweep-*.json,
final-committed.json, final-swept.json, targets*.json).

    gemm_offsets_report.py RUN_DIR     writes RUN_DIR/table.md and RUN_DIR/gemm-offsets-vs-cublas-grouped.png
"""
import glob
import json
import os
import sys

FORMS = {0: "64-bit", 1: "32-bit", 2: "32-bit unrolled"}


def rows(path):
    try:
        return json.load(open(path)).get("rows", [])
    except (OSError, ValueError):
        return []


def name(p, c):
    return (f"{c['blk_m']}x{c['blk_n']}x{c['blk_k']} {c['dim_x']}x{c['dim_y']}"
            f"{' DMMA' if c.get('tensor_cores') and p in 'dz' else ''}"
            f"{' stages ' + str(c['stages']) if c.get('stages') else ' registers'}"
            f"{' min ' + str(c['min_blocks_per_sm']) if c.get('min_blocks_per_sm', 0) > 1 else ''}"
            f", {FORMS.get(c.get('copy_offsets', 0), '?')}")


def ratio(r):
    return r.get("refs", {}).get("cublas-grouped", {}).get("speedup")


def main(run):
    out = []
    sweep = [r for f in sorted(glob.glob(os.path.join(run, "sweep-*.json"))) for r in rows(f)]
    peak = next((r["gflops"] / r["roofline"] for r in sweep if r.get("roofline") and r.get("gflops")), None)
    out.append("## Tiles and address forms side by side (tester --sweep: one configuration for the whole batch, "
               "GFLOP/s; x = 256, 512: set-up gemm_bin, sizes in [x/2 + 1, x]; x = 128: sizes in [1, 128])\n")
    if peak:
        out.append(f"cuBLAS DGEMM 8192^3 in the same run: {peak:.0f} GFLOP/s (the roofline column of the JSON).\n")
    for p in "sd":
        pr = [r for r in sweep if r["precision"] == p and r.get("variant") and r.get("gflops")]
        if not pr:
            continue
        xs = sorted({r["n"] for r in pr}, reverse=True)
        configs = []
        for r in pr:
            if r["variant"] not in configs:
                configs.append(r["variant"])
        out.append(f"\n### {p}\n")
        out.append("| configuration, addresses | " + " | ".join(f"x = {x}" for x in xs) + " |")
        out.append("|---|" + "---|" * len(xs))
        best = {x: max(r["gflops"] for r in pr if r["n"] == x) for x in xs}
        for c in configs:
            cells = []
            for x in xs:
                g = [r["gflops"] for r in pr if r["n"] == x and r["variant"] == c]
                cells.append(("**%.0f**" if g and g[0] == best[x] else "%.0f") % g[0] if g else "-")
            out.append(f"| {name(p, json.loads(c))} | " + " | ".join(cells) + " |")
    committed = rows(os.path.join(run, "final-committed.json"))
    swept = rows(os.path.join(run, "final-swept.json"))
    out.append("\n## Final rows: cuBLAS grouped time / ours, the committed table and the sweep's table (size-binned dispatch)\n")
    out.append("| precision | level | x | committed: ours ms | cuBLAS ms | ratio | sweep's table: ours ms | cuBLAS ms | ratio | "
               "GFLOP/s (sweep's table) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    key = lambda r: (r["precision"], r.get("variant") or "", r["n"])
    by = {key(r): r for r in swept}
    for r in committed:
        s = by.get(key(r), {})
        cell = lambda q, f: f"{q[f]:.4f}" if q.get(f) is not None else "-"
        peer = lambda q: q.get("refs", {}).get("cublas-grouped", {})
        rt = lambda q: f"{ratio(q):.2f}" if q and ratio(q) else "-"
        out.append(f"| {r['precision']} | {r.get('variant') or '_max'} | {r['n']} | {cell(r, 'time_ms')} | "
                   f"{cell(peer(r), 'time_ms')} | {rt(r)} | {cell(s, 'time_ms')} | {cell(peer(s), 'time_ms')} | {rt(s)} | "
                   f"{(s.get('gflops') or 0):.0f} |")
    for fname in ("targets-committed.json", "targets.json"):
        try:
            t = json.load(open(os.path.join(run, fname)))["targets"]
        except (OSError, ValueError, KeyError):
            continue
        met = sum(1 for e in t if e["met"])
        out.append(f"\n{fname}: {met} of {len(t)} targets met. Missed: " +
                   ", ".join(f"{e.get('precision')} x={e.get('n')} {e.get('variant') or '_max'} "
                             f"{e['measured'] if e['measured'] is None else round(e['measured'], 2)} < {e['target']['value']}"
                             for e in t if not e["met"]))
    open(os.path.join(run, "table.md"), "w").write("\n".join(out) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return 0
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for p, color in (("s", "tab:blue"), ("d", "tab:red")):
        for rs, style, label in ((committed, "--x", "committed table"), (swept, "-o", "sweep's table")):
            pts = sorted((r["n"], ratio(r)) for r in rs if r["precision"] == p and not r.get("variant") and ratio(r))
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], style, color=color, label=f"{p} _max, {label}")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.axhline(1.1, color="gray", lw=0.6, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("x (m, n, k uniform in [1, x]; 2000 problems)")
    ax.set_ylabel("cuBLAS grouped GEMM time / ours")
    ax.set_title("gemm_vbatched vs cublas<t>gemmGroupedBatched, one H200")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(run, "gemm-offsets-vs-cublas-grouped.png"), dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
