#!/usr/bin/env python3
"""Tables and a plot of a scripts/gpu/gemm.sh run (the folder it wrote), for the mode it ran in:

    gemm_report.py RUN_DIR [--mode tune|compare|confirm|designs]
        writes RUN_DIR/table.md and RUN_DIR/gemm-vs-cublas-grouped.png
  tune: sweep-*.json (tiles side by side), final.json and complex.json, the extra rows, targets*.json.
  compare: sweep-*.json with the address forms, final-committed.json beside final-swept.json.
  confirm: final.json (the committed table) beside final-tiles.json (its s and d entries on the tile list).
  designs: sweep-*.json (sizes uniform in [1, x] at every x) and square-bins.json side by side, final-committed.json
    beside final-swept.json, the extra rows.
  rows: sweep-rows.json, final.json (the shipped table) beside final-ring.json (the ring design), then d with rows 4
    and rows 8 in every class (final-rows4.json, final-rows8.json) and TRSM's algorithms (trsm-d.json, trsm-s.json).
Without --mode the files decide (square-bins.json or sweep-uniform.json: designs; final-committed.json: compare;
final-tiles.json: confirm; else tune).
"""
import argparse
import glob
import json
import os
import sys

FORMS = {0: "64-bit", 1: "32-bit", 2: "32-bit unrolled", 3: "advanced pointers"}


def rows(path):
    try:
        return json.load(open(path)).get("rows", [])
    except (OSError, ValueError):
        return []


def extra_tables(run, complex_rows=False):
    out = []
    extras = [("complex.json", "c and z beside one cuBLAS call per problem over 16 streams (peer column: that)")] if complex_rows else []
    for name, title in extras + [("final-m8.json", "d with the 8x8x4 DMMA form forced (BATCHSOLVE_GEMM_DMMA=8x8x4), the same table"),
                        ("final-swept-r4.json", "d with the tensor-core slices' rows 4 elements apart (BATCHSOLVE_GEMM_TC_ROW=4), the sweep's table"),
                        ("final-rows4.json", "d with the tensor-core slices' rows 4 elements apart in every class (tc_row 4)"),
                        ("final-rows8.json", "d with the tensor-core slices' rows 8 elements apart in every class (tc_row 8)"),
                        ("rank-k.json", "SYRK and SYR2K (k = 32, lower; no grouped peer)"),
                        ("split.json", "Region split (gemm_table.py --split: interior tiles where they fill, edge tiles on the rest)"),
                        ("skewed.json", "Skewed batch (90 % of the sizes in [1, 32], 10 % in [3x/4, x])")]:
        extra = rows(os.path.join(run, name))
        if not extra:
            continue
        out.append(f"\n## {title}\n")
        out.append("| precision | level | x | ours ms | ours GFLOP/s | cuBLAS grouped ms | ratio | error | status |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for r in extra:
            refs = r.get("refs", {})
            peer = refs.get("cublas-grouped") or refs.get("cublas") or {}
            ratio = peer.get("speedup")
            out.append(f"| {r['precision']} | {r.get('variant') or '_max'} | {r['n']} | {r.get('time_ms', float('nan')):.4f} | "
                       f"{(r.get('gflops') or 0):.0f} | {peer.get('time_ms', float('nan')):.4f} | "
                       f"{ratio if ratio is None else f'{ratio:.2f}'} | {r.get('error')} | {r['status']} |")
    return out


def config_name(p, c, forms=False):
    return (f"{c['blk_m']}x{c['blk_n']}x{c['blk_k']} {c['dim_x']}x{c['dim_y']}"
            f"{(' DMMA 16x8x8' if c.get('dmma16') else ' DMMA') if c.get('tensor_cores') and p in 'dz' else ''}"
            f"{' stages ' + str(c['stages']) if c.get('stages') else ' registers'}"
            f"{' min ' + str(c['min_blocks_per_sm']) if c.get('min_blocks_per_sm', 0) > 1 else ''}"
            f"{' tile list' if c.get('tile_list') else ''}"
            + (f", {FORMS.get(c.get('copy_offsets', 0), '?')}" if forms or c.get('copy_offsets') == 3 else ""))


def ratio(r):
    return r.get("refs", {}).get("cublas-grouped", {}).get("speedup")


def targets_lines(run, names):
    out = []
    for fname in names:
        try:
            t = json.load(open(os.path.join(run, fname)))["targets"]
        except (OSError, ValueError, KeyError):
            continue
        met = sum(1 for e in t if e["met"])
        out.append(f"\n{fname}: {met} of {len(t)} targets met. Missed: " +
                   ", ".join(f"{e.get('precision')} x={e.get('n')} {e.get('variant') or '_max'} "
                             f"{e['measured'] if e['measured'] is None else round(e['measured'], 2)} < {e['target']['value']}"
                             for e in t if not e["met"]))
    return out


def side_by_side(run, first, second, labels, targets, title, plot):
    """Two final runs of one call (two tables) row by row, cuBLAS grouped time / ours for each."""
    out = []
    a, b = rows(os.path.join(run, first)), rows(os.path.join(run, second))
    peak = next((r["gflops"] / r["roofline"] for r in a + b if r.get("roofline") and r.get("gflops")), None)
    out.append(f"## {title}\n")
    if peak:
        out.append(f"cuBLAS DGEMM 8192^3 in the same run: {peak:.0f} GFLOP/s (the roofline column of the JSON).\n")
    out.append(f"| precision | level | x | {labels[0]}: ours ms | cuBLAS ms | ratio | {labels[1]}: ours ms | cuBLAS ms | ratio | "
               f"{labels[1]} / {labels[0]} speed | GFLOP/s ({labels[1]}) | fraction of roofline ({labels[1]}) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    key = lambda r: (r["precision"], r.get("variant") or "", r["n"])
    by = {key(r): r for r in b}
    cell = lambda q, f: f"{q[f]:.4f}" if q.get(f) is not None else "-"
    peer = lambda q: q.get("refs", {}).get("cublas-grouped", {})
    rt = lambda q: f"{ratio(q):.2f}" if q and ratio(q) else "-"
    for r in a:
        s = by.get(key(r), {})
        speed = f"{r['time_ms'] / s['time_ms']:.3f}" if r.get("time_ms") and s.get("time_ms") else "-"
        roof = f"{s['roofline']:.3f}" if s.get("roofline") is not None else "-"
        out.append(f"| {r['precision']} | {r.get('variant') or '_max'} | {r['n']} | {cell(r, 'time_ms')} | "
                   f"{cell(peer(r), 'time_ms')} | {rt(r)} | {cell(s, 'time_ms')} | {cell(peer(s), 'time_ms')} | {rt(s)} | "
                   f"{speed} | {(s.get('gflops') or 0):.0f} | {roof} |")
    out += targets_lines(run, targets)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return out
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for p, color in (("s", "tab:blue"), ("d", "tab:red")):
        for rs, style, label in ((a, "--x", labels[0]), (b, "-o", labels[1])):
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
    fig.savefig(os.path.join(run, plot), dpi=110)
    return out


SWEEP_TITLE = ("## Tiles side by side (tester --sweep: one configuration for the whole batch, GFLOP/s; x = 256, 512: "
               "set-up gemm_bin, sizes in [x/2 + 1, x]; x = 128: sizes in [1, 128])\n")


def sweep_tables(run, forms, pattern="sweep-*.json", title=SWEEP_TITLE, exclude=("sweep-r4.json",)):
    out = []
    sweep = [r for f in sorted(glob.glob(os.path.join(run, pattern))) if os.path.basename(f) not in exclude for r in rows(f)]
    if not sweep:
        return out
    out.append(title)
    for p in "dszc":
        pr = [r for r in sweep if r["precision"] == p and r.get("variant") and r.get("gflops")]
        if not pr:
            continue
        xs = sorted({r["n"] for r in pr}, reverse=True)
        configs = []
        for r in pr:
            if r["variant"] not in configs:
                configs.append(r["variant"])
        out.append(f"\n### {p}\n")
        out.append("| configuration | " + " | ".join(f"x = {x}" for x in xs) + " |")
        out.append("|---|" + "---|" * len(xs))
        best = {x: max(r["gflops"] for r in pr if r["n"] == x) for x in xs}
        for c in configs:
            cells = []
            for x in xs:
                g = [r["gflops"] for r in pr if r["n"] == x and r["variant"] == c]
                cells.append(("**%.0f**" if g and g[0] == best[x] else "%.0f") % g[0] if g else "-")
            out.append(f"| {config_name(p, json.loads(c), forms)} | " + " | ".join(cells) + " |")
    return out + [""]


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--mode", choices=("tune", "compare", "confirm", "designs", "rows"))
    a = ap.parse_args(argv)
    run = a.run
    has = lambda f: os.path.exists(os.path.join(run, f))
    mode = a.mode or ("rows" if has("final-ring.json") else "designs" if has("square-bins.json") or has("sweep-uniform.json") else
                      "compare" if has("final-committed.json") else "confirm" if has("final-tiles.json") else "tune")
    if mode == "designs":
        out = sweep_tables(run, forms=True, title="## Tiles side by side (tester --sweep: one configuration for the whole "
                           "batch, GFLOP/s; sizes uniform in [1, x], seed 11; the table's winners)\n")
        out += sweep_tables(run, forms=True, pattern="sweep-r4.json", exclude=(),
                            title="## d with the tensor-core slices' rows 4 elements apart (BATCHSOLVE_GEMM_TC_ROW=4, kernels _r4), "
                            "the same tiles and batch (GFLOP/s)\n")
        out += sweep_tables(run, forms=True, pattern="square-bins.json",
                            title="## The same tiles on square size bins (m = n = k uniform in [x/2 + 1, x], seed 7, GFLOP/s)\n")
        out += side_by_side(run, "final-committed.json", "final-swept.json", ("committed", "sweep's table"),
                            ("targets-committed.json", "targets.json"),
                            "Final rows: cuBLAS grouped time / ours, the committed table and the sweep's (size-binned dispatch)",
                            "gemm-vs-cublas-grouped.png")
        out += extra_tables(run, complex_rows=True)
        open(os.path.join(run, "table.md"), "w").write("\n".join(out) + "\n")
        return 0
    if mode == "rows":
        out = sweep_tables(run, forms=True, pattern="sweep-rows.json", exclude=(),
                           title="## Tiles side by side (tester --sweep: one configuration for the whole batch, GFLOP/s; "
                           "sizes uniform in [1, x], seed 11; rows 4 / 8 and the ring with advanced pointers)\n")
        out += side_by_side(run, "final.json", "final-ring.json", ("shipped", "ring design"),
                            ("targets.json", "targets-ring.json"),
                            "Final rows: cuBLAS grouped time / ours, the shipped table (per-class rows) and the ring design "
                            "for the classes 256 and above", "gemm-vs-cublas-grouped.png")
        out += extra_tables(run)
        trsm = rows(os.path.join(run, "trsm-d.json")) + rows(os.path.join(run, "trsm-s.json"))
        if trsm:
            out.append("\n## trsm_vbatched: the default, recursive and inversion algorithms beside cublas<t>trsmBatched per size\n")
            out.append("| precision | set-up | x | variant | ours ms | cuBLAS ms | ratio | error | status |")
            out.append("|---|---|---|---|---|---|---|---|---|")
            for r in trsm:
                peer = r.get("refs", {}).get("cublas") or {}
                sp = peer.get("speedup")
                out.append(f"| {r['precision']} | {r.get('detail', {}).get('setup', '')} | {r['n']} | {r.get('variant') or 'default'} | "
                           f"{r.get('time_ms', float('nan')):.4f} | {peer.get('time_ms', float('nan')):.4f} | "
                           f"{sp if sp is None else f'{sp:.2f}'} | {r.get('error')} | {r['status']} |")
        open(os.path.join(run, "table.md"), "w").write("\n".join(out) + "\n")
        return 0
    if mode == "compare":
        out = sweep_tables(run, forms=True)
        out += side_by_side(run, "final-committed.json", "final-swept.json", ("committed", "sweep's table"),
                            ("targets-committed.json", "targets.json"),
                            "Final rows: cuBLAS grouped time / ours, the committed table and the sweep's (size-binned dispatch)",
                            "gemm-vs-cublas-grouped.png")
        open(os.path.join(run, "table.md"), "w").write("\n".join(out) + "\n")
        return 0
    if mode == "confirm":
        out = side_by_side(run, "final.json", "final-tiles.json", ("committed", "tile list"),
                           ("targets.json", "targets-tiles.json"),
                           "Final rows: cuBLAS grouped time / ours, the committed table and the same table with tile_list 1 (s, d)",
                           "gemm-vs-cublas-grouped.png")
        out += extra_tables(run, complex_rows=True)
        open(os.path.join(run, "table.md"), "w").write("\n".join(out) + "\n")
        return 0
    final = rows(os.path.join(run, "final.json")) + rows(os.path.join(run, "complex.json"))
    out = sweep_tables(run, forms=False)
    peak = next((r["gflops"] / r["roofline"] for r in final if r.get("roofline") and r.get("gflops")), None)
    if peak:
        out.append(f"cuBLAS DGEMM 8192^3 in the same run: {peak:.0f} GFLOP/s (the roofline column of the JSON).\n")
    out.append("\n## Final rows (the table of the sweep's winners, size-binned dispatch; ratio = cuBLAS grouped time / ours)\n")
    out.append("| precision | level | x | ours ms | ours GFLOP/s | cuBLAS grouped ms | ratio | error | status |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for r in final:
        peer = r.get("refs", {}).get("cublas-grouped", {})
        ratio = peer.get("speedup")
        out.append(f"| {r['precision']} | {r.get('variant') or '_max'} | {r['n']} | {r.get('time_ms', float('nan')):.4f} | "
                   f"{(r.get('gflops') or 0):.0f} | {peer.get('time_ms', float('nan')):.4f} | "
                   f"{ratio if ratio is None else f'{ratio:.2f}'} | {r.get('error')} | {r['status']} |")
    out += extra_tables(run)
    out += targets_lines(run, ("targets.json", "targets-complex.json"))
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
    sys.exit(main(sys.argv[1:]))
