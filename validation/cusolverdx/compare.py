#!/usr/bin/env python3
"""batchsolve beside cuSolverDx (issue 29): the side-by-side table and the plot.

Reads the cuSolverDx benchmark's CSV (../shared/tools/peers/cusolverdx: rows impl, precision, n, batch,
routine, ms, GFLOP/s, roofline_fraction, err; `cusolverdx` = its best configuration, `cusolver` =
cuSOLVER in the same run) and batchsolve's times from either
  --new / --old   tester JSON files (validation/tester --json; column-major rows; --new: the
                  shared-memory kernels, --old: the committed tables' kernels), or
  --batchsolve-csv  the same-call CSV of the 2026-11-26 runs (precision, n, batch, layout, routine,
                  batchsolve_ms, cusolver_ms, ..., gflops, roofline; one row per layout).
Writes a markdown table per (routine, precision, batch): n, batchsolve's time(s), cuSolverDx's best,
cuSOLVER, the ratio cuSolverDx time / batchsolve time (> 1: batchsolve faster; the issue's target
is >= 1.2 for column-major), GFLOP/s and the fraction of the copy roofline; a summary of the target;
and a PNG (GFLOP/s vs n per routine and precision: batchsolve's kernels, cuSolverDx, cuSOLVER and the
copy roofline), titled with the GPU, commit and date.
Tester rows whose check failed (status "failed") and cuSolverDx rows without a positive finite time
are refused: they enter no ratio, are listed under "Refused rows", and compare.py exits 1 (the table
is still written, so that the failure can be read).

  compare.py --cusolverdx cusolverdx.csv (--new new.json [more.json ...] [--old old.json] | --batchsolve-csv same-call.csv)
             [--markdown OUT.md] [--png OUT.png] [--title TEXT]
"""
import argparse
import csv
import json
import math
import os
import sys

PREC = {"float": "s", "double": "d", "s": "s", "d": "d"}
TARGET = 1.2
REFUSED = []  # failed rows met on reading (named in the output; compare.py then exits 1)


def read_dx(path):
    """{(routine, prec, n, batch): {impl: row}} and the device line."""
    data, device = {}, ""
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        if line.startswith("# device:"):
            device = line[len("# device:"):].split(",")[0].strip()
    rows = csv.reader(l for l in lines if l and not l.startswith("#"))
    header = None
    for r in rows:
        if header is None:
            header = r
            continue
        row = dict(zip(header, r))
        if row.get("impl") not in ("cusolverdx", "cusolver", "cusolverdx_suggested"):
            continue
        try:
            key = (row["routine"], PREC[row["precision"]], int(row["n"]), int(row["batch"]))
            ms = float(row["ms"])
            if not math.isfinite(ms) or ms <= 0:
                REFUSED.append(f"{row['impl']} {key[0]} {key[1]} n = {key[2]} batch {key[3]}: time {row['ms']} ({path})")
                continue
            data.setdefault(key, {})[row["impl"]] = {"ms": ms, "gflops": float(row["GFLOP/s"]),
                                                      "roofline": float(row["roofline_fraction"])}
        except (KeyError, ValueError):
            continue
    return data, device


def read_tester(path, label):
    """{(routine, prec, n, batch): {label: row, 'cusolver': row}} and the header."""
    with open(path) as f:
        t = json.load(f)
    data = {}
    for r in t.get("rows", []):
        if r.get("layout") != "column_major":
            continue
        key = (r["routine"], r["precision"], int(r["n"]), int(r["batch"]))
        if r.get("status") == "failed":
            # A row whose check failed (wrong info, backward error, other triangle touched) is no
            # measurement of a working solver: refused, named in the output, never in a ratio.
            REFUSED.append(f"{label} {key[0]} {key[1]} n = {key[2]} batch {key[3]}: {r.get('note') or 'failed'} ({path})")
            continue
        if r.get("status") != "ok" or not r.get("time_ms"):
            continue
        entry = data.setdefault(key, {})
        entry[label] = {"ms": r["time_ms"], "gflops": r["gflops"], "roofline": r.get("roofline"),
                        "kernel": (r.get("kernel") or {}).get("name", ""), "status": r.get("status")}
        cs = (r.get("refs") or {}).get("cusolver")
        if cs and cs.get("ran") and cs.get("time_ms"):
            entry["cusolver_tester"] = {"ms": cs["time_ms"], "gflops": cs.get("gflops")}
    return data, t.get("header", {})


def read_same_call_csv(path):
    data, bw = {}, None
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        if line.startswith("# copy_bandwidth_GBps="):
            bw = float(line.split("=")[1])
    for row in csv.DictReader(l for l in lines if l and not l.startswith("#")):
        key = (row["routine"], PREC[row["precision"]], int(row["n"]), int(row["batch"]))
        data.setdefault(key, {})[row["layout"]] = {"ms": float(row["batchsolve_ms"]), "gflops": float(row["gflops"]),
                                                   "roofline": float(row["roofline"])}
        data[key]["cusolver_tester"] = {"ms": float(row["cusolver_ms"])}
    return data, bw


def fmt(x, digits=3):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cusolverdx", required=True)
    ap.add_argument("--new", nargs="+", default=[], help="tester JSON files of the shared-memory kernels")
    ap.add_argument("--old")
    ap.add_argument("--batchsolve-csv")
    ap.add_argument("--markdown")
    ap.add_argument("--png")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    if not a.new and not a.batchsolve_csv:
        ap.error("--new or --batchsolve-csv")

    dx, dx_device = read_dx(a.cusolverdx)
    ours, header, series = {}, {}, []
    for path in a.new:
        if not os.path.exists(path):
            print(f"compare.py: {path} missing (a timed-out tester?)", file=sys.stderr)
            continue
        d, h = read_tester(path, "shared_memory")
        header = header or h
        for k, v in d.items():
            ours.setdefault(k, {}).update(v)
        if "shared_memory" not in series:
            series.append("shared_memory")
    if a.old and os.path.exists(a.old):
        d, h = read_tester(a.old, "committed")
        header = header or h
        for k, v in d.items():
            ours.setdefault(k, {}).update({kk: vv for kk, vv in v.items() if kk != "cusolver_tester" or kk not in ours.get(k, {})})
        series.append("committed")
    if a.batchsolve_csv:
        d, _ = read_same_call_csv(a.batchsolve_csv)
        for k, v in d.items():
            ours.setdefault(k, {}).update(v)
        for layout in ("column_major", "interleaved"):
            if any(layout in v for v in d.values()):
                series.append(layout)
    if not ours:
        print("compare.py: no batchsolve rows (missing or empty input)", file=sys.stderr)
        return 1

    gpu = (header.get("gpu") or {}).get("name") or dx_device or "unknown GPU"
    commit = header.get("git_commit", "")
    date = header.get("date", "")
    if a.batchsolve_csv and not commit:  # .../<gpu>-<date>/batchsolve-<commit>-same-call.csv
        base = os.path.basename(a.batchsolve_csv).split("-")
        commit = base[1] if len(base) > 2 and base[0] == "batchsolve" else ""
        folder = os.path.basename(os.path.dirname(os.path.abspath(a.batchsolve_csv))).split("-", 1)
        date = folder[1] if len(folder) == 2 else ""
    title = a.title or f"{gpu}" + (f", batchsolve {commit}" if commit else "") + (f", {date}" if date else "")
    lines = [f"# batchsolve beside cuSolverDx: {title}", "",
             f"cuSolverDx rows: {a.cusolverdx} ({dx_device or 'device not named'}); ratio = cuSolverDx's best "
             f"configuration's time / batchsolve's time (> 1: batchsolve faster; the issue's target {TARGET} for "
             "column-major); roof = fraction of the copy roofline (bytes of the referenced triangle in and out, "
             "and B, at the measured device-to-device copy bandwidth).", ""]
    groups = sorted({(k[0], k[1], k[3]) for k in ours})
    summary, plot_data = [], {}
    for routine, prec, batch in groups:
        keys = sorted(k for k in ours if k[0] == routine and k[1] == prec and k[3] == batch)
        cols = " | ".join(f"{s} ms | ratio | GFLOP/s | roof" for s in series)
        lines += [f"## {routine}, {prec}, batch {batch}", "",
                  f"| n | {cols} | cuSolverDx ms | dx GFLOP/s | dx roof | cuSOLVER ms |",
                  "|---" * (5 + 4 * len(series)) + "|"]
        for k in keys:
            row = ours[k]
            d = dx.get(k, {})
            dx_ms = d.get("cusolverdx", {}).get("ms")
            cells = []
            for s in series:
                r = row.get(s)
                if not r:
                    cells += ["-"] * 4
                    continue
                ratio = dx_ms / r["ms"] if dx_ms and r["ms"] else None
                cells += [fmt(r["ms"], 4), f"**{ratio:.2f}**" if ratio is not None and ratio < TARGET else fmt(ratio),
                          fmt(r["gflops"], 4), fmt(r.get("roofline"))]
                if ratio is not None:
                    summary.append((s, routine, prec, batch, k[2], ratio))
                plot_data.setdefault((routine, prec, batch), {}).setdefault(s, []).append((k[2], r["gflops"]))
            cs = d.get("cusolver", {}).get("ms") or (row.get("cusolver_tester") or {}).get("ms")
            lines.append(f"| {k[2]} | " + " | ".join(cells) +
                         f" | {fmt(dx_ms, 4)} | {fmt(d.get('cusolverdx', {}).get('gflops'), 4)} | "
                         f"{fmt(d.get('cusolverdx', {}).get('roofline'))} | {fmt(cs, 4)} |")
            for impl, label in (("cusolverdx", "cuSolverDx"), ("cusolver", "cuSOLVER")):
                if impl in d:
                    plot_data.setdefault((routine, prec, batch), {}).setdefault(label, []).append((k[2], d[impl]["gflops"]))
                    if d[impl]["roofline"] > 0:
                        plot_data[(routine, prec, batch)].setdefault("copy roofline", []).append(
                            (k[2], d[impl]["gflops"] / d[impl]["roofline"]))
        lines.append("")
    lines += ["## Summary", ""]
    # per case, cuSolverDx time / batchsolve time for each series ("n ratio/ratio ...")
    for routine, prec, batch in groups:
        cells = []
        for n in sorted({x[4] for x in summary if x[1:4] == (routine, prec, batch)}):
            r = {x[0]: x[5] for x in summary if x[1:5] == (routine, prec, batch, n)}
            cells.append(f"{n}: " + "/".join(f"{r[s]:.2f}" if s in r else "-" for s in series))
        if cells:
            lines.append(f"- {routine} {prec} {batch} ({'/'.join(series)}): " + ", ".join(cells))
    for s in series:
        rs = [x for x in summary if x[0] == s]
        if not rs:
            lines.append(f"- {s}: no case with a cuSolverDx row")
            continue
        worst = min(rs, key=lambda x: x[5])
        met = sum(1 for x in rs if x[5] >= TARGET)
        ahead = sum(1 for x in rs if x[5] >= 1.0)
        geo = math.exp(sum(math.log(x[5]) for x in rs) / len(rs))
        lines.append(f"- {s}: {met}/{len(rs)} cases >= {TARGET}x cuSolverDx, {ahead}/{len(rs)} >= 1.0x; geometric mean "
                     f"{geo:.2f}x; worst {worst[5]:.2f}x ({worst[1]} {worst[2]} n = {worst[4]}, batch {worst[3]})")
    if REFUSED:
        lines += ["", f"## Refused rows ({len(REFUSED)}: failed checks or no valid time; in no ratio above)", ""]
        lines += [f"- {r}" for r in REFUSED]
    text = "\n".join(lines) + "\n"
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    print(text)

    if a.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        panels = sorted(plot_data)
        cols = min(2, len(panels))
        rows = (len(panels) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.2 * rows), squeeze=False)
        styles = {"shared_memory": ("C0", "o-"), "committed": ("C1", "s-"), "column_major": ("C1", "s-"),
                  "interleaved": ("C2", "^-"), "cuSolverDx": ("C3", "D-"), "cuSOLVER": ("C7", "v--"),
                  "copy roofline": ("k", ":")}
        for ax, key in zip(axes.flat, panels):
            for label, pts in sorted(plot_data[key].items(), key=lambda kv: list(styles).index(kv[0]) if kv[0] in styles else 99):
                pts = sorted(dict(pts).items())
                color, style = styles.get(label, ("C5", "x-"))
                name = {"shared_memory": "batchsolve column-major, shared-memory kernels",
                        "committed": "batchsolve column-major, committed tables",
                        "column_major": "batchsolve column-major", "interleaved": "batchsolve interleaved"}.get(label, label)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=name, markersize=4)
            ax.set_title(f"{key[0]} {key[1]}, batch {key[2]}")
            ax.set_xlabel("n")
            ax.set_ylabel("GFLOP/s")
            ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
        for ax in list(axes.flat)[len(panels):]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=7, loc="lower right")
        fig.suptitle(f"batched Cholesky, column-major: {title}", fontsize=10)
        fig.tight_layout()
        fig.savefig(a.png, dpi=110)
        print(f"compare.py: wrote {a.png}")
    if REFUSED:
        print(f"compare.py: {len(REFUSED)} rows refused: failed checks or no valid time (listed under 'Refused rows')", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
