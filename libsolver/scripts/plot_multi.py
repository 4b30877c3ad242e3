#!/usr/bin/env python3
"""Scaling over several devices in one picture: speed-up over one device of batched posv (multi_bench, device-
and host-resident), of one dense system (gesv) and of ALS (als bench --device-sets), from their JSON.

usage: plot_multi.py [--multi-bench multi_posv.json,multi_gesv.json] [--als als_ml20m.json ...] --output scaling.png
"""
import argparse
import json
import os
import sys


def rows_of(path):
    """The rows of a tester JSON file (multi_posv, multi_gesv) or of an earlier multi_bench file, in
    multi_bench's schema: precision, n, mode (device, host, dense), devices, seconds, gflops,
    speedup_vs_one, backward_error, failed."""
    doc = json.load(open(path))
    if "header" not in doc:
        return doc["rows"]
    rows = []
    for r in doc["rows"]:
        d = r.get("detail", {})
        if r.get("routine") not in ("multi_posv", "multi_gesv") or "time_ms" not in r:
            continue
        devices = d.get("devices") or int(r["case"].rsplit("devices=", 1)[-1])
        rows.append({"precision": r["precision"], "n": r["n"], "devices": devices,
                     "mode": "dense" if r["routine"] == "multi_gesv" else r["variant"],
                     "seconds": r["time_ms"] * 1e-3, "gflops": r["gflops"],
                     "speedup_vs_one": d.get("speedup_vs_one", float("nan")),
                     "backward_error": r["error"], "failed": d.get("failed", 0 if r["status"] == "ok" else 1)})
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--multi-bench", help="the tester's JSON of multi_posv / multi_gesv (comma-separated files), "
                   "or an earlier multi_bench file")
    p.add_argument("--als", nargs="*", default=[], help="als bench --json outputs (with --device-sets)")
    p.add_argument("--output", required=True, help="PNG to write")
    p.add_argument("--title", default="", help="title suffix (GPU, commit, date)")
    a = p.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = []  # (label, devices, speed-up)
    for path in (a.multi_bench or "").split(","):
        if not path or not os.path.exists(path):
            continue
        for r in rows_of(path):
            if r["devices"] > 1 and r.get("speedup_vs_one") == r.get("speedup_vs_one"):  # not NaN
                label = (f"gesv {r['precision']} n={r['n']}" if r["mode"] == "dense"
                         else f"posv {r['precision']} n={r['n']} {r['mode']}")
                bars.append((label, r["devices"], r["speedup_vs_one"]))
    for path in a.als:
        if not os.path.exists(path):
            continue
        doc = json.load(open(path))
        name = os.path.splitext(os.path.basename(path))[0].replace("als_", "ALS ")
        for r in doc["results"]:
            s = r.get("speedup_vs_first_device_set")
            if r.get("tool") == "ours" and s and r.get("device_count", 1) > 1:
                bars.append((f"{name} k={r['factors']}", r["device_count"], s))
    if not bars:
        print("plot_multi: nothing to plot (no rows with more than one device)", file=sys.stderr)
        return 1
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(bars) + 1.5))
    labels = [f"{b[0]} ({b[1]} devices)" for b in bars]
    ax.barh(range(len(bars)), [b[2] for b in bars], color=["tab:blue" if "posv" in l else "tab:green" if "gesv" in l else "tab:orange" for l in labels])
    for n in sorted({b[1] for b in bars}):
        ax.axvline(n, color="grey", linestyle=":", linewidth=1)
    ax.set_yticks(range(len(bars)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("speed-up over one device (same run); dotted: the device count")
    ax.set_title("batchsolve on several devices" + (f" — {a.title}" if a.title else ""))
    for i, b in enumerate(bars):
        ax.text(b[2], i, f" {b[2]:.2f}x", va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(a.output, dpi=120)
    print(f"plot_multi: wrote {a.output} ({len(bars)} bars)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
