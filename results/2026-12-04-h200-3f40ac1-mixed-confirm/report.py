#!/usr/bin/env python3
"""tables.md and posv_mixed.png of a mixed-confirm2.sh folder from its step JSON: per cond the previous and
adopted tables' ms (two rounds each), the speed-up, FP64 Xpotrf+Xpotrs and its ratio, the phases (factor,
refinement, passes) and the DGEMM roofline fraction; then adopted-fused.   report.py FOLDER"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

folder = sys.argv[1].rstrip("/")
steps = ("previous-1", "adopted-1", "previous-2", "adopted-2")
rows = {s: {r["variant"]: r for r in json.load(open(f"{folder}/{s}.json"))["rows"]} for s in steps}
conds = list(rows["adopted-1"])


def ms(s, c):
    return rows[s][c]["time_ms"]


def mean(table, c):
    return (ms(f"{table}-1", c) + ms(f"{table}-2", c)) / 2


def ref(s, c):
    return rows[s][c]["refs"]["cusolver"]["time_ms"]


def phases(r):
    st = r["detail"]["steps"]
    refined = [x for x in st if x["refine_ms"] > 0]  # a pass: iterations + 1 (the first residual), as mixed-lookahead's report.py
    return (sum(x["factor_ms"] for x in st), sum(x["refine_ms"] for x in st), sum(x["iterations"] + 1 for x in refined))


out = ["# posv_mixed d, n = 16384, design auto (ms, median of 5; report.py)", "",
       "| cond | previous (1, 2) | adopted (1, 2) | previous / adopted (means) | Xpotrf+Xpotrs ms (4 steps) "
       "| Xpotrf+Xpotrs / previous | Xpotrf+Xpotrs / adopted | adopted error |", "|---|---|---|---|---|---|---|---|"]
for c in conds:
    refs = [ref(s, c) for s in steps]
    rp = (ref("previous-1", c) + ref("previous-2", c)) / 2
    ra = (ref("adopted-1", c) + ref("adopted-2", c)) / 2
    err = max(rows["adopted-1"][c]["error"], rows["adopted-2"][c]["error"])
    out.append(f"| {c} | {ms('previous-1', c):.2f}, {ms('previous-2', c):.2f} | {ms('adopted-1', c):.2f}, "
               f"{ms('adopted-2', c):.2f} | {mean('previous', c) / mean('adopted', c):.3f} | "
               f"{min(refs):.2f}-{max(refs):.2f} | {rp / mean('previous', c):.2f} | {ra / mean('adopted', c):.2f} | {err:.3g} |")
out += ["", "Phases (first round; factor ms incl. any FP64 fallback / refinement ms / passes (iterations + 1 of "
        "the refined steps) / ms a pass) and DGEMM roofline fraction:", "",
        "| cond | previous | adopted | roofline previous / adopted |", "|---|---|---|---|"]
for c in conds:
    cells = []
    for s in ("previous-1", "adopted-1"):
        f, r, p = phases(rows[s][c])
        cells.append(f"{f:.1f} / {r:.1f} / {p} / {r / p:.2f}" if p else f"{f:.1f} / {r:.1f} / {p}")
    out.append(f"| {c} | {cells[0]} | {cells[1]} | {rows['previous-1'][c]['roofline']:.3f} / "
               f"{rows['adopted-1'][c]['roofline']:.3f} |")
fused = {r["variant"]: r for r in json.load(open(f"{folder}/adopted-fused.json"))["rows"]}
out += ["", "adopted-fused (the adopted table, auto/fused0 = as shipped, auto/fused8 = the fused classical pass):", "",
        "| cond | fused0 ms | fused8 ms | fused0 / fused8 | fused8 error |", "|---|---|---|---|---|"]
for c in conds:
    a, b = fused[f"{c}/auto/fused0"], fused[f"{c}/auto/fused8"]
    out.append(f"| {c} | {a['time_ms']:.2f} | {b['time_ms']:.2f} | {a['time_ms'] / b['time_ms']:.3f} | {b['error']:.3g} |")
open(f"{folder}/tables.md", "w").write("\n".join(out) + "\n")

fig, ax = plt.subplots(figsize=(8, 4))
w = 0.2
for i, (s, col) in enumerate(zip(steps, ("#bbbbbb", "#1b9e77", "#888888", "#0d6e50"))):
    xs = [j + (i - 1.5) * w for j in range(len(conds))]
    ys = [ms(s, c) for c in conds]
    ax.bar(xs, ys, w, color=col, label=s)
for j, c in enumerate(conds):
    r = sum(ref(s, c) for s in steps) / 4
    ax.plot([j - 2 * w, j + 2 * w], [r, r], "k--", lw=1, label="FP64 Xpotrf+Xpotrs" if j == 0 else None)
    ax.text(j, max([ms(s, c) for s in steps] + [r]) + 1.5, f"{mean('previous', c) / mean('adopted', c):.3f}x", ha="center", fontsize=8)
ax.set_xticks(range(len(conds)), conds)
ax.set_ylabel("ms (median of 5)")
ax.set_title(f"posv_mixed d, n = 16384, design auto: previous vs adopted table (one H200)\n{folder.split('/')[-1]}", fontsize=9)
ax.legend(fontsize=7, loc="upper left")
fig.tight_layout()
fig.savefig(f"{folder}/posv_mixed.png", dpi=90)
