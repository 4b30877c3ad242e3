#!/usr/bin/env python3
"""Column-major small Cholesky designs beside cuSolverDx, from one device call's files
(scripts/gpu/small.sh): the table, the plot of the ratio against n, the targets and the best design.

  small_report.py RAW_DIR OUT_DIR [--title TEXT]

RAW_DIR holds the tester JSON files of the call (one per design: fused-a, fused-b, ws, committed,
interleaved, ...; file name = series name; *-100k files are the same series at batch 100000) and
bench_cusolverdx's CSV files (cusolverdx*.csv: `cusolverdx` rows = its best configuration). Writes
  OUT_DIR/table.md      per routine, precision and batch: n, each series' time, its ratio
                        (cuSolverDx time / ours, > 1: ours faster) and fraction of the copy roofline,
                        and the best column-major design per case with its ratio to the committed kernels
  OUT_DIR/ratio.png     the ratio against n per routine and precision (batch 16384), every series,
                        the 1.0 and 1.2 lines
  OUT_DIR/targets.json  issue targets, each {target, measured, met, basis}: best column-major design
                        >= 1.2x cuSolverDx's best at the measured n, >= 1.0x, interleaved >= 1.3x, s potrf
                        column-major >= 0.35 of the copy roofline at n <= 32, best design not slower than the
                        committed kernels (within 3%, the run-to-run noise of the medians)
  OUT_DIR/best.json     per (routine, precision, n, batch) the fastest column-major series and its time
A row whose status is not ok never wins and never meets a target.
"""
import argparse
import csv
import glob
import json
import math
import os
import sys

PREC = {"float": "s", "double": "d"}
COLUMN_MAJOR_SERIES_ORDER = ["committed", "fused-a", "fused-b", "ws"]
NOISE = 0.97


def read_tester(path):
    rows = {}
    header = json.load(open(path)).get("header", {})
    for r in json.load(open(path)).get("rows", []):
        if r.get("routine") not in ("potrf", "posv"):
            continue
        key = (r["routine"], r["precision"], r["n"], r["batch"], r["layout"], r.get("uplo", "lower"))
        rows[key] = r
    return rows, header


def read_dx(paths):
    out = {}
    for p in paths:
        with open(p) as f:
            lines = [l for l in f.read().splitlines() if l and not l.startswith("#")]
        for row in csv.DictReader(lines):
            if row.get("impl") != "cusolverdx":
                continue
            try:
                ms = float(row["ms"])
            except (TypeError, ValueError):
                continue
            if not (ms > 0 and math.isfinite(ms)):
                continue
            out[(row["routine"], PREC.get(row["precision"], row["precision"]), int(row["n"]), int(row["batch"]))] = ms
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("out")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    series = {}  # name -> {(routine, prec, n, batch, layout): row}
    headers = {}
    for path in sorted(glob.glob(os.path.join(a.raw, "*.json"))):
        name = os.path.basename(path)[:-5]
        if name in ("check", "targets", "best") or name.startswith("targets"):
            continue
        base = name[:-5] if name.endswith("-100k") else name
        rows, header = read_tester(path)
        headers[base] = header
        for (routine, prec, n, batch, layout, uplo), r in rows.items():
            if uplo != "lower":
                continue
            series.setdefault(base, {})[(routine, prec, n, batch, layout)] = r
    dx = read_dx(sorted(glob.glob(os.path.join(a.raw, "cusolverdx*.csv"))))
    cm_names = [s for s in COLUMN_MAJOR_SERIES_ORDER if s in series] + sorted(
        s for s in series if s not in COLUMN_MAJOR_SERIES_ORDER and s != "interleaved")

    def ok(r):
        return r is not None and r.get("status") == "ok" and (r.get("time_ms") or 0) > 0

    cases = sorted({(k[0], k[1], k[2], k[3]) for s in series.values() for k in s})
    best, targets, lines = {}, [], []
    if a.title:
        lines += [f"# {a.title}", ""]
    lines += ["Time of cuSolverDx's best configuration / ours (> 1: ours faster) and the fraction of the copy "
              "roofline (the tester's: bytes of the referenced triangle read and written, and B, at the measured "
              "device-to-device copy bandwidth). `-`: not measured in this call. Best: the fastest column-major "
              "design of the case, `vs committed` its speed-up over the committed tables' kernels.", ""]
    groups = sorted({(c[0], c[1], c[3]) for c in cases})
    for routine, prec, batch in groups:
        ns = sorted({c[2] for c in cases if (c[0], c[1], c[3]) == (routine, prec, batch)})
        names = cm_names + (["interleaved"] if "interleaved" in series else [])
        lines.append(f"## {routine} {prec} batch {batch}")
        lines.append("")
        lines.append("| n | cuSolverDx ms | " + " | ".join(f"{s} ms (ratio, roof)" for s in names) + " | best | ratio | vs committed |")
        lines.append("|---" * (5 + len(names)) + "|")
        for n in ns:
            d = dx.get((routine, prec, n, batch))
            cells = []
            for s in names:
                layout = "interleaved" if s == "interleaved" else "column_major"
                r = series.get(s, {}).get((routine, prec, n, batch, layout))
                if not ok(r):
                    cells.append("-" if r is None else f"{r.get('status')}")
                    continue
                ratio = f"{d / r['time_ms']:.2f}" if d else "-"
                roof = f"{r['roofline']:.2f}" if r.get("roofline") is not None else "-"
                cells.append(f"{r['time_ms']:.4f} ({ratio}, {roof})")
            cand = [(series[s][(routine, prec, n, batch, "column_major")]["time_ms"], s) for s in cm_names
                    if ok(series[s].get((routine, prec, n, batch, "column_major")))]
            b_cell = ratio_cell = vs_cell = "-"
            if cand:
                t, s = min(cand)
                r = series[s][(routine, prec, n, batch, "column_major")]
                best[f"{routine} {prec} {n} {batch}"] = {"series": s, "time_ms": t, "roofline": r.get("roofline"),
                                                         "kernels": r.get("kernels") or r.get("note", "")}
                b_cell = s
                if d:
                    ratio_cell = f"{d / t:.2f}"
                c = series.get("committed", {}).get((routine, prec, n, batch, "column_major"))
                if ok(c):
                    vs_cell = f"{c['time_ms'] / t:.2f}"
            lines.append(f"| {n} | {d if d else '-'} | " + " | ".join(cells) + f" | {b_cell} | {ratio_cell} | {vs_cell} |")
        lines.append("")

    # targets (the issue's), from the rows above
    def target(text, measured, met, basis):
        targets.append({"target": text, "measured": measured, "met": bool(met), "basis": basis})

    for key, b in sorted(best.items()):
        routine, prec, n, batch = key.split()
        n, batch = int(n), int(batch)
        d = dx.get((routine, prec, n, batch))
        if d:
            ratio = d / b["time_ms"]
            target(f"{routine} {prec} column-major n = {n} batch {batch}: >= 1.2x cuSolverDx's best", round(ratio, 4),
                   ratio >= 1.2, f"cuSolverDx {d} ms / {b['series']} {b['time_ms']} ms")
        c = series.get("committed", {}).get((routine, prec, n, batch, "column_major"))
        if ok(c):
            target(f"{routine} {prec} column-major n = {n} batch {batch}: not slower than the committed kernels",
                   round(c["time_ms"] / b["time_ms"], 4), c["time_ms"] / b["time_ms"] >= NOISE,
                   f"committed {c['time_ms']} ms / {b['series']} {b['time_ms']} ms (met within 3%)")
        if routine == "potrf" and prec == "s" and n <= 32 and b.get("roofline") is not None:
            target(f"potrf s column-major n = {n} batch {batch}: >= 0.35 of the copy roofline", b["roofline"],
                   b["roofline"] >= 0.35, f"{b['series']}: the tester's roofline fraction")
    for (routine, prec, n, batch, layout), r in sorted(series.get("interleaved", {}).items()):
        d = dx.get((routine, prec, n, batch))
        if d and ok(r):
            target(f"{routine} {prec} interleaved n = {n} batch {batch}: >= 1.3x cuSolverDx's best",
                   round(d / r["time_ms"], 4), d / r["time_ms"] >= 1.3, f"cuSolverDx {d} ms / interleaved {r['time_ms']} ms")
    met = sum(t["met"] for t in targets)
    lines.append(f"## Targets: {met} of {len(targets)} met")
    lines.append("")
    for t in targets:
        lines.append(f"- {'met' if t['met'] else '**missed**'}: {t['target']}: {t['measured']} ({t['basis']})")
    open(os.path.join(a.out, "table.md"), "w").write("\n".join(lines) + "\n")
    json.dump(targets, open(os.path.join(a.out, "targets.json"), "w"), indent=1)
    json.dump(best, open(os.path.join(a.out, "best.json"), "w"), indent=1, sort_keys=True)

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("small_report: no matplotlib, no plot", file=sys.stderr)
        return 0
    panels = sorted({(c[0], c[1]) for c in cases if c[3] == 16384})
    if not panels:
        return 0
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (routine, prec) in zip(axes[0], panels):
        for s in cm_names + (["interleaved"] if "interleaved" in series else []):
            layout = "interleaved" if s == "interleaved" else "column_major"
            pts = []
            for (r0, p0, n, batch, l0), r in sorted(series.get(s, {}).items(), key=lambda kv: kv[0][2]):
                d = dx.get((routine, prec, n, 16384))
                if (r0, p0, batch, l0) == (routine, prec, 16384, layout) and ok(r) and d:
                    pts.append((n, d / r["time_ms"]))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if s != "interleaved" else "x--", label=s, markersize=4)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.axhline(1.2, color="grey", lw=0.8, ls=":")
        ax.set_title(f"{routine} {prec}, batch 16384")
        ax.set_xlabel("n")
        ax.set_ylabel("cuSolverDx time / ours")
        ax.set_xscale("log", base=2)
        ax.legend(fontsize=7)
    if a.title:
        fig.suptitle(a.title, fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "ratio.png"), dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
