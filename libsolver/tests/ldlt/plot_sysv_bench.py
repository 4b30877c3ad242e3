#!/usr/bin/env python3
"""Plots a sysv_bench JSON file: time against n per routine (left: complex z, right: real d), log-log,
with the GPU, commit and date in the title; the backward errors are in the JSON and markdown beside it.

usage: plot_sysv_bench.py sysv_bench.json [-o sysv_bench.png]
(the tester's JSON of sytrf_nopiv / sysv_mixed, or an earlier sysv_bench file)
"""
import argparse
import json
import sys


def from_tester(doc):
    """The tester's sytrf_nopiv / sysv_mixed rows and their cuSOLVER peers in the earlier sysv_bench schema
    (one row per routine and n: precision, routine, n, ms)."""
    h = doc["header"]
    rows = []
    for r in doc["rows"]:
        if r.get("routine") not in ("sytrf_nopiv", "sysv_mixed") or "time_ms" not in r:
            continue
        name = r["routine"] + ("_" + r["variant"] if r.get("variant") else "")
        rows.append({"precision": r["precision"], "routine": name, "n": r["n"], "ms": r["time_ms"]})
        if r.get("variant"):
            continue
        for peer, q in r.get("refs", {}).items():
            if q.get("ran") and peer.startswith("cusolver:"):
                rows.append({"precision": r["precision"], "routine": peer.split(":", 1)[1], "n": r["n"], "ms": q["time_ms"]})
    return {"gpu": h.get("gpu", {}).get("name", "?"), "commit": h.get("git_commit", "?"), "date": h.get("date", "?"),
            "rows": rows}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json_file")
    parser.add_argument("-o", "--output", default="sysv_bench.png")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_sysv_bench: matplotlib not available, no plot", file=sys.stderr)
        return 0
    with open(args.json_file) as f:
        data = json.load(f)
    if "header" in data:  # the tester's JSON
        data = from_tester(data)
    rows = data.get("rows", [])
    precisions = [p for p in ("z", "d") if any(r["precision"] == p for r in rows)]
    if not precisions:
        print("plot_sysv_bench: no rows", file=sys.stderr)
        return 1
    fig, axes = plt.subplots(1, len(precisions), figsize=(6.5 * len(precisions), 5), squeeze=False)
    for ax, p in zip(axes[0], precisions):
        routines = sorted({r["routine"] for r in rows if r["precision"] == p},
                          key=lambda name: (not name.startswith(("sytrf_nopiv", "sysv_mixed")), name))
        for name in routines:
            points = sorted((r["n"], r["ms"]) for r in rows if r["precision"] == p and r["routine"] == name)
            ours = name.startswith(("sytrf_nopiv", "sysv_mixed"))
            ax.plot([n for n, _ in points], [ms for _, ms in points], marker="o" if ours else ".",
                    linewidth=2.2 if ours else 1.0, linestyle="-" if ours else "--", label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel("time (ms, median)")
        ax.set_title("complex symmetric (z)" if p == "z" else "real symmetric (d)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"sysv_bench on {data.get('gpu', '?')}, commit {data.get('commit', '?')}, {data.get('date', '?')}")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"plot_sysv_bench: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
