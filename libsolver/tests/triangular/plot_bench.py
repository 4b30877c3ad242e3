#!/usr/bin/env python3
"""GFLOP/s against x for each routine of the tester's trsm/trmm/potrf_vbatched JSON (or an earlier
vbatched_triangular_bench file): one panel per routine and precision, one line per method (ours per
variant, cuBLAS batched per size or in 16 streams, cuSOLVER per size, the CPU backend)."""
import argparse
import json
import sys


def from_tester(doc):
    """The tester's rows in the earlier schema: one row per (routine, x, method)."""
    h = doc["header"]
    rows = []
    for r in doc["rows"]:
        if "time_ms" not in r or not r.get("detail"):
            continue
        routine = r["detail"]["setup"]
        rows.append({"routine": routine, "precision": r["precision"], "x": r["n"],
                     "method": "ours " + (r["variant"] or "default"), "gflops": r["gflops"]})
        if r.get("variant"):
            continue
        for peer, q in r.get("refs", {}).items():
            if q.get("ran"):
                rows.append({"routine": routine, "precision": r["precision"], "x": r["n"], "method": peer,
                             "gflops": q["gflops"]})
    batch = doc["rows"][0]["batch"] if doc["rows"] else "?"
    return {"gpu": h.get("gpu", {}).get("name", "?"), "commit": h.get("git_commit", "?"), "date": h.get("date", ""),
            "batch": batch, "rows": rows}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("bench_json", help="the tester's --json output (or vbatched_triangular_bench's)")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_bench.py: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
        return 1
    with open(args.bench_json) as f:
        data = json.load(f)
    if "header" in data:
        data = from_tester(data)
    rows = [r for r in data["rows"] if not r["method"].startswith("uniform")]
    panels = sorted({(r["routine"], r["precision"]) for r in rows})
    if not panels:
        print("plot_bench.py: no rows", file=sys.stderr)
        return 1
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
    for ax, (routine, precision) in zip(axes[0], panels):
        mine = [r for r in rows if r["routine"] == routine and r["precision"] == precision]
        for method in sorted({r["method"] for r in mine}):
            points = sorted((r["x"], r["gflops"]) for r in mine if r["method"] == method)
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=method)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("x (sizes uniform in [1, x])")
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"{precision}{routine}, batch {data.get('batch', '?')}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"vbatched triangular: {data.get('gpu', '?')}, commit {data.get('commit', '?')}, {data.get('date', '')}")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
