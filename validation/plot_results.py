#!/usr/bin/env python3
"""Turns a tester JSON file (tester --json FILE) into a PNG of GFLOP/s against n and a Markdown table.

    python3 validation/plot_results.py results.json [--output PREFIX]

writes PREFIX.png and PREFIX.md (PREFIX defaults to the JSON file's path without .json). One panel
per series (routine, precision, layout, uplo, nrhs, batch, backend): the library, each reference
the tester ran (cusolver, lapack) and the memory roofline at the measured copy bandwidth.
"""

import argparse
import json
import math
import os
import sys
from collections import OrderedDict


def series_key(row):
    layout = row["layout"] + (":%d" % row["chunk"] if "chunk" in row else "")
    return (row["routine"], row["precision"], layout, row["uplo"], row["nrhs"], row["batch"], row["backend"])


def series_title(key):
    routine, prec, layout, uplo, nrhs, batch, backend = key
    rhs = "" if routine == "potrf" else ", nrhs %d" % nrhs
    return "%s%s %s %s, batch %d%s (%s)" % (prec, routine, layout, uplo, batch, rhs, backend)


def number(value, fmt):
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else fmt % value


def rate(value):
    if value is None:
        return "-"
    return "%.0f" % value if value >= 1000 else "%.1f" % value if value >= 10 else "%.3f" % value


def describe_header(header):
    gpu = header.get("gpu", {})
    if gpu.get("present"):
        text = "%s, CUDA runtime %s" % (gpu.get("name", "?"), gpu.get("cuda_runtime_version", "?"))
        if "copy_bandwidth_GBps" in gpu:
            text += ", device copy bandwidth %.0f GB/s" % gpu["copy_bandwidth_GBps"]
    else:
        text = "no GPU"
    return text


def group_rows(rows):
    groups = OrderedDict()
    for row in rows:
        groups.setdefault(series_key(row), []).append(row)
    for key in groups:
        groups[key].sort(key=lambda r: r["n"])
    return groups


def ref_names(rows):
    names = []
    for row in rows:
        for name in row.get("refs", {}):
            if name not in names:
                names.append(name)
    return names


def write_markdown(doc, path):
    header, rows = doc["header"], doc["rows"]
    refs = ref_names(rows)
    lines = ["# batchsolve tester results", "",
             "- machine: %s; CPU reference: %s" % (describe_header(header), header.get("cpu_reference", "?")),
             "- commit %s, %s" % (header.get("git_commit", "?"), header.get("date", "?")),
             "- command: `%s`" % header.get("command_line", "?"),
             "- median of %s timed runs, tolerance %s, cond %s, seed %s" % (
                 header.get("repeat"), header.get("tolerance"), header.get("cond"), header.get("seed")),
             ""]
    columns = ["routine", "prec", "layout", "uplo", "n", "batch", "nrhs", "dev", "time ms", "GFLOP/s", "roofline"]
    for name in refs:
        columns += ["%s ms" % name, "%s GFLOP/s" % name, "x %s" % name]
    columns += ["error", "status"]
    lines.append("| " + " | ".join(columns) + " |")
    text_columns = {"routine", "prec", "layout", "uplo", "dev", "status"}
    lines.append("|" + "|".join("---" if c in text_columns else "---:" for c in columns) + "|")
    for row in rows:
        layout = row["layout"] + (":%d" % row["chunk"] if "chunk" in row else "")
        cells = [row["routine"], row["precision"], layout, row["uplo"], str(row["n"]), str(row["batch"]),
                 "-" if row["routine"] == "potrf" else str(row["nrhs"]), row["backend"],
                 number(row.get("time_ms"), "%.4f"), rate(row.get("gflops")),
                 number(row.get("roofline"), "%.3f")]
        for name in refs:
            ref = row.get("refs", {}).get(name, {})
            ran = ref.get("ran", False)
            cells += [number(ref.get("time_ms") if ran else None, "%.4f"), rate(ref.get("gflops") if ran else None),
                      number(ref.get("speedup") if ran else None, "%.2f")]
        status = row["status"] + (" (%s)" % row["note"] if row.get("note") else "")
        cells += [number(row.get("error"), "%.2e"), status.replace("|", "/")]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "time: median in milliseconds; roofline: fraction of the memory roofline at the measured "
              "device copy bandwidth; x REF: REF's time / the library's time (> 1: the library is faster); "
              "error: scaled error (factorization error for potrf, backward error for potrs/posv), "
              "ok below the tolerance.", ""]
    with open(path, "w") as out:
        out.write("\n".join(lines))


def write_plot(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    header, groups = doc["header"], group_rows(doc["rows"])
    refs = ref_names(doc["rows"])
    panels = len(groups)
    if panels == 0:
        raise SystemExit("plot_results: no rows in the JSON file")
    cols = min(3, panels)
    nrows = (panels + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6.0 * cols, 4.2 * nrows), squeeze=False)
    styles = {"cusolver": dict(color="tab:green", marker="s"), "lapack": dict(color="tab:gray", marker="^")}
    for ax, (key, rows) in zip(axes.flat, groups.items()):
        def plot(values, label, **style):
            points = [(r["n"], v) for r, v in zip(rows, values) if v is not None and v > 0]
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], label=label, **style)
        plot([r.get("gflops") for r in rows], "batchsolve (%s)" % key[6], color="tab:blue", marker="o")
        for name in refs:
            plot([r.get("refs", {}).get(name, {}).get("gflops") if r.get("refs", {}).get(name, {}).get("ran")
                  else None for r in rows], name, **styles.get(name, dict(marker="x")))
        plot([r.get("roofline_gflops") for r in rows], "memory roofline", color="tab:red", linestyle="--")
        failed = [r for r in rows if r["status"] == "FAILED" and r.get("gflops")]
        if failed:
            ax.plot([r["n"] for r in failed], [r["gflops"] for r in failed], "rx", markersize=10, label="FAILED")
        ax.set_title(series_title(key), fontsize=9)
        ax.set_xlabel("n")
        ax.set_ylabel("GFLOP/s")
        if any(line.get_ydata().size for line in ax.get_lines()):
            ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[panels:]:
        ax.set_visible(False)
    fig.suptitle("batchsolve tester: %s; commit %s, %s" % (
        describe_header(header), header.get("git_commit", "?"), header.get("date", "?")), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json_file", help="output of tester --json")
    parser.add_argument("--output", help="prefix of the .png and .md files (default: the JSON path without .json)")
    parser.add_argument("--no-plot", action="store_true", help="write the Markdown table only (no matplotlib)")
    args = parser.parse_args(argv)
    try:
        with open(args.json_file) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit("plot_results: cannot read %s: %s" % (args.json_file, e))
    if "header" not in doc or "rows" not in doc:
        raise SystemExit("plot_results: %s is not a tester JSON file (no 'header' or 'rows')" % args.json_file)
    prefix = args.output or (args.json_file[:-5] if args.json_file.endswith(".json") else args.json_file)
    write_markdown(doc, prefix + ".md")
    print("plot_results: wrote %s.md (%d rows)" % (prefix, len(doc["rows"])))
    if not args.no_plot:
        write_plot(doc, prefix + ".png")
        print("plot_results: wrote %s.png" % prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
