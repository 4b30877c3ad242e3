#!/usr/bin/env python3
"""Tables and a plot of a scripts/gpu/gemm.sh run (the folder it wrote: sweep-*.json, final.json,
complex.json, targets*.json).

    gemm_report.py RUN_DIR          writes RUN_DIR/table.md and RUN_DIR/gemm-vs-cublas-grouped.png
"""
import glob
import json
import os
import sys


def rows(path):
    try:
        return json.load(open(path)).get("rows", [])
    except (OSError, ValueError):
        return []


def main(run):
    out = []
    sweep = [r for f in sorted(glob.glob(os.path.join(run, "sweep-*.json"))) for r in rows(f)]
    final = rows(os.path.join(run, "final.json")) + rows(os.path.join(run, "complex.json"))
    peak = None
    for r in sweep + final:
        if r.get("roofline") and r.get("gflops"):
            peak = r["gflops"] / r["roofline"]
            break
    out.append("## Tiles side by side (tester --sweep: one configuration for the whole batch, GFLOP/s; x = 256, 512: "
               "set-up gemm_bin, sizes in [x/2 + 1, x], the problems of one size bin; x <= 128: sizes in [1, x])\n")
    if peak:
        out.append(f"cuBLAS DGEMM 8192^3 in the same run: {peak:.0f} GFLOP/s (the roofline column of the JSON).\n")
    for p in "dszc":
        pr = [r for r in sweep if r["precision"] == p and r.get("variant") and r.get("gflops")]
        if not pr:
            continue
        xs = sorted({r["n"] for r in pr})
        configs = []
        for r in pr:
            if r["variant"] not in configs:
                configs.append(r["variant"])
        out.append(f"\n### {p}\n")
        out.append("| configuration | " + " | ".join(f"x = {x}" for x in xs) + " |")
        out.append("|---|" + "---|" * len(xs))
        best = {x: max(r["gflops"] for r in pr if r["n"] == x) for x in xs}
        for c in configs:
            cj = json.loads(c)
            name = (f"{cj['blk_m']}x{cj['blk_n']}x{cj['blk_k']} {cj['dim_x']}x{cj['dim_y']}"
                    f"{' DMMA' if cj.get('tensor_cores') and p in 'dz' else ''}"
                    f"{' stages ' + str(cj['stages']) if cj.get('stages') else ' registers'}"
                    f"{' min ' + str(cj['min_blocks_per_sm']) if cj.get('min_blocks_per_sm', 0) > 1 else ''}")
            cells = []
            for x in xs:
                g = [r["gflops"] for r in pr if r["n"] == x and r["variant"] == c]
                cells.append(("**%.0f**" if g and g[0] == best[x] else "%.0f") % g[0] if g else "-")
            out.append(f"| {name} | " + " | ".join(cells) + " |")
    out.append("\n## Final rows (the table of the sweep's winners, size-binned dispatch; ratio = cuBLAS grouped time / ours)\n")
    out.append("| precision | level | x | ours ms | ours GFLOP/s | cuBLAS grouped ms | ratio | error | status |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for r in final:
        peer = r.get("refs", {}).get("cublas-grouped", {})
        ratio = peer.get("speedup")
        out.append(f"| {r['precision']} | {r.get('variant') or '_max'} | {r['n']} | {r.get('time_ms', float('nan')):.4f} | "
                   f"{(r.get('gflops') or 0):.0f} | {peer.get('time_ms', float('nan')):.4f} | "
                   f"{ratio if ratio is None else f'{ratio:.2f}'} | {r.get('error')} | {r['status']} |")
    for name, title in (("final-m8.json", "d with the 8x8x4 DMMA form forced (BATCHSOLVE_GEMM_DMMA=8x8x4), the same table"),
                        ("rank-k.json", "SYRK and SYR2K (k = 32, lower; no grouped peer)"),
                        ("split.json", "Region split (gemm_table.py --split: interior tiles where they fill, edge tiles on the rest)"),
                        ("skewed.json", "Skewed batch (90 % of the sizes in [1, 32], 10 % in [3x/4, x])")):
        extra = rows(os.path.join(run, name))
        if not extra:
            continue
        out.append(f"\n## {title}\n")
        out.append("| precision | level | x | ours ms | ours GFLOP/s | cuBLAS grouped ms | ratio | error | status |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for r in extra:
            peer = r.get("refs", {}).get("cublas-grouped", {})
            ratio = peer.get("speedup")
            out.append(f"| {r['precision']} | {r.get('variant') or '_max'} | {r['n']} | {r.get('time_ms', float('nan')):.4f} | "
                       f"{(r.get('gflops') or 0):.0f} | {peer.get('time_ms', float('nan')):.4f} | "
                       f"{ratio if ratio is None else f'{ratio:.2f}'} | {r.get('error')} | {r['status']} |")
    for name in ("targets.json", "targets-complex.json"):
        try:
            t = json.load(open(os.path.join(run, name)))["targets"]
        except (OSError, ValueError, KeyError):
            continue
        met = sum(1 for e in t if e["met"])
        out.append(f"\n{name}: {met} of {len(t)} targets met. Missed: " +
                   ", ".join(f"{e.get('precision')} x={e.get('n')} {e.get('variant') or '_max'} {e['measured'] if e['measured'] is None else round(e['measured'], 2)} < {e['target']['value']}"
                             for e in t if not e["met"]))
    open(os.path.join(run, "table.md"), "w").write("\n".join(out) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return 0
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for p, color in zip("sdcz", ("tab:blue", "tab:red", "tab:green", "tab:purple")):
        for level, style in (("", "-o"), ("checked", "--x")):
            pts = sorted((r["n"], r["refs"]["cublas-grouped"]["speedup"]) for r in final
                         if r["precision"] == p and (r.get("variant") or "") == level
                         and r.get("refs", {}).get("cublas-grouped", {}).get("speedup"))
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], style, color=color,
                        label=f"{p} {'_max' if not level else 'checked'}")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("x (m, n, k uniform in [1, x]; 2000 problems)")
    ax.set_ylabel("cuBLAS grouped GEMM time / ours")
    ax.set_title("gemm_vbatched vs cublas<t>gemmGroupedBatched, one H200")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(run, "gemm-vs-cublas-grouped.png"), dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
