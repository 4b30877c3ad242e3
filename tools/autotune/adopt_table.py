#!/usr/bin/env python3
"""Merges a re-tuned table into the committed one where a tester comparison says it is faster: the
last step of a re-tuning (libsolver/tuning/README.md, "Re-tuning").

    python3 tools/autotune/adopt_table.py BASE.json NEW.json BEFORE.json AFTER.json --output TABLE.json \\
        --run 44 --device "NVIDIA H200" --commit abc1234 --how "the full s and d sweep ..." [--threshold 0.05]

BEFORE.json and AFTER.json are the tester's --json runs of `scripts/on-gpu.sh compare` (the same
binary and seed, with BASE compiled in and with NEW; compare_tester_runs.py pairs their rows). The
rule, per (routine, precision, layout):
  - when the geometric mean of time(NEW) / time(BASE) over the group's compared rows is below 1, the
    group takes NEW's entries, except at the n where BASE measured more than `threshold` faster;
  - otherwise the group keeps BASE's entries (NEW was not faster where it was measured, so its
    untested sizes are not taken on trust either).
Entries NEW lacks are kept. The header's `retuned` list gets a record of the run with the cases taken
and kept. Prints one line per group.

--control ROUTINE: that routine's entries are the same in both tables, and its rows measure the
drift between the two tester processes (compare_tester_runs.py); the other groups are judged on
their ratios divided by it, and the control routine's entries are kept.
"""

import argparse
import collections
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_tester_runs import compare, drift_corrected, geomean, load  # noqa: E402


def case_key(entry):
    return (entry["routine"], entry["precision"], entry["layout"], entry["n"])


def adopt(base, new, ratio, threshold):
    """(merged entries, report lines, summary of the cases taken)."""
    by_group = collections.defaultdict(dict)  # (routine, precision, layout) -> {n: ratio}
    for k, r in ratio.items():
        if k[3] == "lower":  # the tables are tuned on the lower case
            by_group[(k[0], k[1], k[2])][k[4]] = r
    new_entries = {case_key(e): e for e in new["entries"]}
    merged, lines, taken = [], [], collections.Counter()
    decided = {}
    for group, rows in sorted(by_group.items()):
        g = geomean(list(rows.values()))
        kept = sorted(n for n, r in rows.items() if r > 1 + threshold)
        decided[group] = (g < 1, set(kept))
        verdict = "taken" if g < 1 else "kept (not faster)"
        lines.append(f"{' '.join(group)}: {len(rows)} rows, geometric mean {g:.3f}: {verdict}"
                     + (f"; base kept at n = {', '.join(map(str, kept))}" if g < 1 and kept else ""))
    for e in base["entries"]:
        k = case_key(e)
        take, kept = decided.get(k[:3], (False, set()))
        if take and k[3] not in kept and k in new_entries:
            merged.append(new_entries[k])
            taken[k[:3]] += 1
        else:
            merged.append(e)
    return merged, lines, taken


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("base")
    p.add_argument("new")
    p.add_argument("before", help="tester --json with BASE")
    p.add_argument("after", help="tester --json with NEW")
    p.add_argument("--output", required=True)
    p.add_argument("--threshold", type=float, default=0.05)
    p.add_argument("--run", required=True, help="the autotune run's number, for the retuned record")
    p.add_argument("--device", required=True)
    p.add_argument("--commit", required=True)
    p.add_argument("--how", required=True, help="what was run and how it was judged")
    p.add_argument("--control", help="a routine whose entries did not change: its rows measure the drift")
    a = p.parse_args()
    with open(a.base) as f:
        base = json.load(f)
    with open(a.new) as f:
        new = json.load(f)
    ratio, _ = compare(load(a.before), load(a.after), a.threshold)
    if a.control:
        ratio, drift = drift_corrected(ratio, a.control)
        print(f"drift ({a.control} rows): " + ", ".join(f"{p} {l} {d:.3f}" for (p, l), d in sorted(drift.items())))
    merged, lines, taken = adopt(base, new, ratio, a.threshold)
    print("\n".join(lines))
    out = dict(base)
    out["entries"] = merged
    cases = "; ".join(f"{' '.join(g)}: {c}" for g, c in sorted(taken.items())) or "none"
    out["retuned"] = list(base.get("retuned", [])) + [{
        "runs": a.run, "device": a.device, "date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": a.commit,
        "cases": "entries taken per routine, precision, layout: " + cases, "how": a.how}]
    with open(a.output, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"{a.output}: {sum(taken.values())} of {len(merged)} entries taken from {a.new}")


if __name__ == "__main__":
    main()
