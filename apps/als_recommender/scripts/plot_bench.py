#!/usr/bin/env python3
"""Bar chart of `als bench` results: seconds per iteration of every fit (ours per backend and layout,
implicit CPU/GPU), one panel per data set, grouped by k, log scale, P@10 written on each bar.

usage: plot_bench.py BENCH.json [BENCH2.json ...] --output bench.png"""
import argparse
import json

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def label(r):
    if r["tool"] == "ours":
        return f"ours {r['backend']}" + (f" {r['layout']}" if r["backend"] == "cuda" else "")
    return f"implicit {r['backend']}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+")
    p.add_argument("--output", required=True)
    a = p.parse_args()
    docs = [json.load(open(f)) for f in a.inputs]
    fig, axes = plt.subplots(1, len(docs), figsize=(7 * len(docs), 4.8), squeeze=False)
    for ax, doc in zip(axes[0], docs):
        rows = [r for r in doc["results"] if r.get("seconds_per_iteration") is not None]
        ks = sorted({r["factors"] for r in rows})
        names = sorted({label(r) for r in rows}, key=lambda n: (not n.startswith("ours"), n))
        width = 0.8 / max(len(names), 1)
        for j, name in enumerate(names):
            for i, k in enumerate(ks):
                match = [r for r in rows if r["factors"] == k and label(r) == name]
                if not match:
                    continue
                r = match[0]
                x = i + (j - (len(names) - 1) / 2) * width
                ax.bar(x, r["seconds_per_iteration"], width, color=f"C{j}", label=name if i == 0 or name not in
                       [h.get_label() for h in ax.patches] else None)
                if r.get("p_at_10") is not None:
                    ax.text(x, r["seconds_per_iteration"] * 1.08, f"{r['p_at_10']:.3f}", ha="center", fontsize=7, rotation=90)
        ax.set_xticks(range(len(ks)))
        ax.set_xticklabels([f"k = {k}" for k in ks])
        ax.set_yscale("log")
        ax.set_ylabel("seconds per iteration (median, log scale)")
        ax.set_title(f"{doc['data']}: {doc['users']:,} x {doc['items']:,}, {doc['interactions']:,} interactions\n"
                     f"(P@10 on each bar; lambda {doc['lambda']}, alpha {doc['alpha']})", fontsize=9)
        handles, labels = ax.get_legend_handles_labels()
        seen = {}
        for h, l in zip(handles, labels):
            seen.setdefault(l, h)
        ax.legend(seen.values(), seen.keys(), fontsize=7)
    fig.tight_layout()
    fig.savefig(a.output, dpi=120)


if __name__ == "__main__":
    main()
