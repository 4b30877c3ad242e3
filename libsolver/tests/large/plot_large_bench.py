#!/usr/bin/env python3
"""Plots a large_bench JSON file: TFLOP/s against n of our potrf, cuSOLVER's Xpotrf and the GEMM rate
measured in the same run (one panel per precision, log2 n), and the time split panel / TRSM / update
of our factorisation as stacked fractions; GPU, commit and date in the title.

usage: plot_large_bench.py large_bench.json [-o large_bench.png]

Reads the tester's JSON (--routine potrf_large) and the earlier large_bench files alike.
"""
import argparse
import json
import sys


def from_tester(doc):
    """The tester's potrf_large rows (default configuration) in the earlier large_bench schema."""
    h = doc["header"]
    rows = []
    for r in doc["rows"]:
        if r.get("routine") != "potrf_large" or r.get("variant") or r.get("status") == "skipped":
            continue
        d = r.get("detail", {})
        cpu = r.get("refs", {}).get("lapack", {})
        rows.append({"routine": "potrf", "precision": r["precision"], "n": r["n"],
                     "ours_tflops": d.get("ours_tflops"), "cusolver_tflops": d.get("cusolver_tflops", float("nan")),
                     "gemm_tflops": d.get("gemm_tflops"), "split_seconds": d.get("split_seconds")} | (
                         {"cpu_seconds": cpu["time_ms"] * 1e-3, "cpu_threads": h.get("cpu", {}).get("threads", 0)}
                         if cpu.get("ran") else {}))
        if "split_seconds" not in d:
            del rows[-1]["split_seconds"]
    return {"gpu": h.get("gpu", {}).get("name", "?"), "commit": h.get("git_commit", "?"), "date": h.get("date", "?"),
            "rows": rows}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json_file")
    parser.add_argument("-o", "--output", default="large_bench.png")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_large_bench: matplotlib not available, no plot", file=sys.stderr)
        return 0
    with open(args.json_file) as f:
        data = json.load(f)
    if "header" in data:
        data = from_tester(data)
    rows = [r for r in data.get("rows", []) if r.get("routine") == "potrf"]
    precisions = [p for p in ("d", "s") if any(r["precision"] == p for r in rows)]
    if not precisions:
        print("plot_large_bench: no potrf rows", file=sys.stderr)
        return 1
    fig, axes = plt.subplots(2, len(precisions), figsize=(6.5 * len(precisions), 8.5), squeeze=False)
    for col, p in enumerate(precisions):
        mine = sorted((r for r in rows if r["precision"] == p), key=lambda r: r["n"])
        n = [r["n"] for r in mine]
        ax = axes[0][col]
        ax.plot(n, [r["ours_tflops"] for r in mine], "o-", label="batchsolve potrf")
        ax.plot(n, [r["cusolver_tflops"] for r in mine], "s--", label="cusolverDnXpotrf")
        ax.plot(n, [r["gemm_tflops"] for r in mine], ":", color="gray", label="%sGEMM (same run)" % p.upper())
        cpu = [(r["n"], r["n"] ** 3 / 3 / r["cpu_seconds"] * 1e-12) for r in mine if r.get("cpu_seconds")]
        if cpu:
            ax.plot([c[0] for c in cpu], [c[1] for c in cpu], "^-", label="LAPACK, %d CPU threads" % mine[0].get("cpu_threads", 0))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n")
        ax.set_ylabel("TFLOP/s (n^3/3 flops)")
        ax.set_title("%sPOTRF (lower)" % p.upper())
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        split = [r for r in mine if "split_seconds" in r]
        ax = axes[1][col]
        if split:
            labels = [str(r["n"]) for r in split]
            bottom = [0.0] * len(split)
            for key, name in (("panel", "panel POTF2"), ("trsm", "TRSM"), ("update", "SYRK/GEMM")):
                parts = []
                for r in split:
                    s = r["split_seconds"]
                    total = s["panel"] + s["trsm"] + s["update"]
                    parts.append(s[key] / total if total > 0 else 0)
                ax.bar(labels, parts, bottom=bottom, label=name)
                bottom = [b + v for b, v in zip(bottom, parts)]
            ax.set_ylabel("fraction of the factorisation (phases serialised)")
            ax.set_xlabel("n")
            ax.legend(fontsize=8)
        ax.set_title("%sPOTRF time split" % p.upper())
    fig.suptitle("large_bench on %s, commit %s, %s" % (data.get("gpu", "?"), data.get("commit", "?"), data.get("date", "?")))
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print("plot_large_bench: wrote", args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
