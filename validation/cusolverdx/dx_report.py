#!/usr/bin/env python3
"""One device call's small column-major Cholesky figures side by side: tester JSON files (each a
series: the committed tables, a candidate table; their rows' cuSolverDx and cuSOLVER figures where the
tester ran those peers) and prototype CSV files (experiments/small-rows-prototype, small-cyclic-prototype), into a
markdown table (time per series, cuSolverDx's best configuration, the ratio cuSolverDx / series (> 1:
ours faster; the issue's column-major target 1.2), the copy-roofline fraction) and a plot of the ratio
against n per routine and precision.

  dx_report.py --tester committed=dx.json --tester rows=rows.json --proto proto.csv \\
      --markdown table.md --png ratio.png [--batch 16384] [--title TEXT] [--best best.json]

--best writes, per "routine precision n batch", the fastest correct tester series and its time
(adopt_best.py's input; the series label names the candidate table, LABEL.json).
"""
import argparse
import csv
import json
import sys
from collections import defaultdict


def read_tester(path):
    rows = json.load(open(path)).get("rows", [])
    return [r for r in rows if r.get("layout") == "column_major" and r.get("uplo", "lower") == "lower"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tester", action="append", default=[], help="LABEL=tester.json (a series)")
    ap.add_argument("--proto", action="append", default=[], help="rows_prototype CSV (its designs are series)")
    ap.add_argument("--batch", type=int, default=16384)
    ap.add_argument("--markdown", required=True)
    ap.add_argument("--png")
    ap.add_argument("--title", default="")
    ap.add_argument("--best", help="JSON of the fastest correct tester series per case (adopt_best.py's input)")
    a = ap.parse_args()

    times = defaultdict(dict)  # (routine, prec, n) -> series -> (ms, roofline, status)
    dx, cus = {}, {}
    series = []
    for spec in a.tester:
        label, path = spec.split("=", 1)
        series.append(label)
        for r in read_tester(path):
            if r["batch"] != a.batch:
                continue
            key = (r["routine"], r["precision"], r["n"])
            times[key][label] = (r.get("time_ms"), r.get("roofline"), r.get("status"))
            refs = r.get("refs", {})
            if refs.get("cusolverdx", {}).get("ran"):
                dx[key] = refs["cusolverdx"]["time_ms"]
            if refs.get("cusolver", {}).get("ran"):
                cus[key] = refs["cusolver"]["time_ms"]
    for path in a.proto:
        for r in csv.DictReader(line for line in open(path) if not line.startswith("#")):
            if int(r["batch"]) != a.batch:
                continue
            label = "proto " + r["design"]
            if label not in series:
                series.append(label)
            key = ("potrf", r["prec"], int(r["n"]))
            # rows_prototype writes roofline; cyclic_prototype roofline_tri (the same n(n+1) elements) and roofline_sq
            times[key][label] = (float(r["ms"]), float(r.get("roofline") or r["roofline_tri"]), r["status"])

    keys = sorted(times, key=lambda k: (k[0] != "potrf", k[1], k[2]))
    out = ["| routine | prec | n | " + " | ".join(series) + " | cuSolverDx | cuSOLVER | best ours | dx / best | roofline of best |",
           "|" + "---|" * (len(series) + 8)]
    best_of = {}
    for k in keys:
        cells, best = [], None
        for s in series:
            v = times[k].get(s)
            if v is None or v[0] is None:
                cells.append("-")
                continue
            ok = v[2] in ("ok", "copy-only")
            cells.append(("%.4f" % v[0]) + ("" if ok else " (%s)" % v[2]))
            if v[2] == "ok" and (best is None or v[0] < best[1]):
                best = (s, v[0], v[1])
        best_of[k] = best
        d = dx.get(k)
        ratio = d / best[1] if d and best else None
        out.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
            k[0], k[1], k[2], " | ".join(cells), "%.4f" % d if d else "-", "%.4f" % cus[k] if k in cus else "-",
            best[0] if best else "-", ("**%.2f**" if ratio < 1.2 else "%.2f") % ratio if ratio else "-",
            "%.2f" % best[2] if best and best[2] is not None else "-"))
    out.append("")
    out.append("Times in ms (median), batch %d; cuSolverDx: its best configuration, run by the tester as a child process "
               "in the same timing scope (restored inputs, L2 flushed by a read before each call). `dx / best`: "
               "cuSolverDx's time over the fastest correct series (bold: below the 1.2 target)." % a.batch)
    open(a.markdown, "w").write("\n".join(out) + "\n")
    if a.best:
        testers = {spec.split("=", 1)[0] for spec in a.tester}
        best = {}
        for k in keys:
            ok = [(v[0], s) for s, v in times[k].items() if s in testers and v[0] and v[2] == "ok"]
            if ok:
                t, s = min(ok)
                best["%s %s %d %d" % (k[0], k[1], k[2], a.batch)] = {"series": s, "time_ms": t}
        json.dump(best, open(a.best, "w"), indent=1)
    print("\n".join(out))

    if a.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        groups = sorted({(k[0], k[1]) for k in keys}, key=lambda g: (g[0] != "potrf", g[1]))
        fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.6), squeeze=False)
        for ax, (routine, prec) in zip(axes[0], groups):
            for s in series:
                pts = [(k[2], dx[k] / times[k][s][0]) for k in keys if k[:2] == (routine, prec) and k in dx
                       and s in times[k] and times[k][s][0] and times[k][s][2] == "ok"]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=s)
            ax.axhline(1.2, color="k", ls="--", lw=0.8)
            ax.axhline(1.0, color="gray", ls=":", lw=0.8)
            ax.set_title("%s %s column-major" % (routine, prec))
            ax.set_xlabel("n")
            ax.set_ylabel("cuSolverDx time / ours")
            ax.legend(fontsize=7)
        if a.title:
            fig.suptitle(a.title, fontsize=9)
        fig.tight_layout()
        fig.savefig(a.png, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
