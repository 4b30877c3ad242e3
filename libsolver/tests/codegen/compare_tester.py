#!/usr/bin/env python3
"""Compares two tester runs (JSON of validation/tester --json) row by row: the library's time and its
speed-up over cuSOLVER measured side by side in the same run. The speed-up is the figure to judge a
change of generated kernels by (cuSOLVER is the yardstick in both runs, so a different GPU or clock
moves both sides); 'ratio' is new speed-up / reference speed-up (1.00: unchanged; run-to-run noise of
these rows was a few percent at batch 16384).

  compare_tester.py NEW.json REFERENCE.json [--markdown OUT.md]
"""
import argparse
import json
import math
import sys


def key(row):
    return (row["routine"], row["precision"], row["layout"], row["uplo"], row["n"], row["batch"], row["nrhs"])


def speedup(row):
    ref = row.get("refs", {}).get("cusolver", {})
    return ref.get("speedup") if ref.get("ran") else None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("new")
    parser.add_argument("reference")
    parser.add_argument("--markdown", help="also write the table here")
    args = parser.parse_args()
    new, ref = json.load(open(args.new)), json.load(open(args.reference))
    ref_rows = {key(r): r for r in ref["rows"]}
    head = (f"new: {new['header'].get('gpu', {}).get('name')} {new['header'].get('git_commit')}; "
            f"reference: {ref['header'].get('gpu', {}).get('name')} {ref['header'].get('git_commit')}")
    gpus = (new["header"].get("gpu", {}).get("name"), ref["header"].get("gpu", {}).get("name"))
    caveat = ("" if gpus[0] == gpus[1] else
              f"different GPUs ({gpus[0]} / {gpus[1]}): cuSOLVER and the library scale differently between "
              "them, so the ratio is not a regression measure; compare runs on the same GPU")
    lines = [head] + ([caveat] if caveat else []) + ["",
             "| routine | prec | layout | n | new ms | ref ms | new x cuSOLVER | ref x cuSOLVER | ratio | status |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    ratios = []
    failed = 0
    for row in new["rows"]:
        r = ref_rows.get(key(row))
        s_new = speedup(row)
        s_ref = speedup(r) if r else None
        ratio = s_new / s_ref if s_new and s_ref else None
        if ratio:
            ratios.append(ratio)
        failed += row["status"] != "ok"
        lines.append(f"| {row['routine']} | {row['precision']} | {row['layout']} | {row['n']} | {row['time_ms']:.4f} | "
                     f"{r['time_ms'] if r else float('nan'):.4f} | {s_new or float('nan'):.2f} | "
                     f"{s_ref or float('nan'):.2f} | {ratio or float('nan'):.3f} | {row['status']} |")
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    summary = (f"{len(new['rows'])} rows, {failed} not ok; speed-up over cuSOLVER new / reference: geometric mean "
               f"{geo:.3f}, min {min(ratios, default=float('nan')):.3f}, max {max(ratios, default=float('nan')):.3f} "
               f"({len(ratios)} rows compared)")
    if caveat:
        summary += " [" + caveat.split(":")[0] + "]"
    lines += ["", summary]
    text = "\n".join(lines) + "\n"
    if args.markdown:
        open(args.markdown, "w").write(text)
    print(text, end="")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
