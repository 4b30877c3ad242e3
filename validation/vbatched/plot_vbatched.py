#!/usr/bin/env python3
"""GFLOP/s against the largest size x, one panel per set-up and precision, from the tester's JSON of the
*_vbatched routines (or earlier vbatched_bench files): ours, cuBLAS grouped GEMM, cuBLAS in 16 streams,
the CPU backend.

usage: plot_vbatched.py BENCH.json [MORE.json ...] -o OUT.png
"""
import argparse
import json
import math
import sys


def from_tester(doc):
    """The tester's *_vbatched rows (default configuration) in the earlier vbatched_bench schema."""
    h = doc["header"]
    rows = [{"routine": r["detail"]["setup"], "precision": r["precision"], "x": r["n"], "gflops": r["detail"]["gflops"]}
            for r in doc["rows"] if r.get("routine", "").endswith("_vbatched") and not r.get("variant")
            and "gflops" in r.get("detail", {})]
    batch = doc["rows"][0]["batch"] if doc["rows"] else "?"
    return {"device": h.get("gpu", {}).get("name", "?"), "batch": batch, "commit": h.get("git_commit", ""),
            "date": h.get("date", ""), "rows": rows}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+", help="the tester's (or vbatched_bench's) --json output(s)")
    parser.add_argument("-o", "--output", required=True, help="PNG to write")
    args = parser.parse_args()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, title = [], ""
    for path in args.json:
        with open(path) as f:
            doc = json.load(f)
        if "header" in doc:
            doc = from_tester(doc)
        rows += doc.get("rows", [])
        title = title or f"{doc.get('device', '?')}, batch {doc.get('batch', '?')}, {doc.get('commit', '')} {doc.get('date', '')}"
    if not rows:
        sys.exit("plot_vbatched: no rows")
    panels = sorted({(r["routine"], r["precision"]) for r in rows})
    cols = min(4, len(panels))
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.4 * nrows), squeeze=False)
    series = [("ours", "batchsolve (_max)", "-o"), ("cublas_grouped", "cuBLAS grouped", "-s"),
              ("cublas_streams", "cuBLAS 16 streams", "--^"), ("cpu", "CPU backend", ":x")]
    for ax, (routine, p) in zip(axes.flat, panels):
        sel = sorted((r for r in rows if r["routine"] == routine and r["precision"] == p), key=lambda r: r["x"])
        for key, label, style in series:
            pts = [(r["x"], r["gflops"].get(key, 0)) for r in sel if r["gflops"].get(key, 0) > 0]
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], style, label=label)
        ax.set_title(f"{p}{routine}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("x (sizes uniform in [1, x])")
        ax.set_ylabel("GFLOP/s")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"plot_vbatched: {args.output}")


if __name__ == "__main__":
    main()
