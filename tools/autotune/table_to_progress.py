#!/usr/bin/env python3
"""Writes a tuning table's entries as an autotuner resume file (autotune --resume), one line per case.

    python3 tools/autotune/table_to_progress.py TABLE.json [--routine potrf,posv] [--precision d]
        [--layout column_major] [--n 24:128] [--device "NVIDIA H100 80GB HBM3"] --output progress.jsonl

`autotune --revisit --revisit-stages STAGE --resume progress.jsonl` then times each selected case's
committed winner against STAGE's candidates, side by side, without a full re-sweep. The resume files
the sweeps left behind no longer match the committed tables (tables were rebuilt from candidate
logs and re-tuned in parts, libsolver/tuning/README.md), so a revisit started from them would time
stale winners; a resume file made from the table itself cannot. Merge the run's candidate log back
with tools/autotune/rebuild_table.py TABLE.json LOG.jsonl --output TABLE.json.
"""
import argparse
import json
import sys


def parse_sizes(text):
    """'24:128' (inclusive), '8:128:8', '100' and comma lists of those, as autotune --n takes them."""
    sizes = set()
    for part in text.split(","):
        fields = [int(f) for f in part.split(":")]  # ValueError names a field that is not a number
        if len(fields) == 1:
            sizes.add(fields[0])
        elif len(fields) in (2, 3):
            step = fields[2] if len(fields) == 3 else 1
            sizes.update(range(fields[0], fields[1] + 1, step))
        else:
            raise ValueError(f"--n: bad range '{part}'")
    return sizes


def refuse_compact(table, path, tool):
    """A shipped table keeps only what the library reads; its evidence (times, runners-up) is in results/."""
    if table.get("entries") and "ms" not in table["entries"][0].get("best", {}):
        sys.exit(f"{tool}: {path} is a compact table (no times): expand it with its evidence first, "
                 f"tools/autotune/shelve_table.py expand {path} --output FULL.json")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table")
    ap.add_argument("--routine", help="comma list (default: every routine)")
    ap.add_argument("--precision", help="comma list of s, d, c, z (default: every precision)")
    ap.add_argument("--layout", help="comma list of interleaved, chunked, column_major (default: every layout)")
    ap.add_argument("--n", help="sizes, e.g. 24:128 or 8:128:8,100 (default: every size)")
    ap.add_argument("--device", help="GPU name the revisit runs on (default: the table's; autotune ignores resume "
                    "lines of another GPU, and the revisit re-times the recorded winner there anyway)")
    ap.add_argument("--output", required=True)
    args = ap.parse_args()

    try:
        with open(args.table) as f:
            table = json.load(f)
        entries = table["entries"]
        refuse_compact(table, args.table, "table_to_progress")
        batch, device = table["batch"], table["device"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"table_to_progress: {args.table}: not a tuning table ({e})")
    wanted = {
        "routine": set(args.routine.split(",")) if args.routine else None,
        "precision": set(args.precision.split(",")) if args.precision else None,
        "layout": set(args.layout.split(",")) if args.layout else None,
        "n": None,
    }
    if args.n:
        try:
            wanted["n"] = parse_sizes(args.n)
        except ValueError as e:
            sys.exit(f"table_to_progress: invalid --n '{args.n}' ({e})")
    lines = []
    for e in entries:
        if any(values is not None and e[field] not in values for field, values in wanted.items()):
            continue
        line = {k: e[k] for k in ("routine", "precision", "layout", "n", "best")}
        line["runner_up"] = e.get("runner_up")
        line["candidates"] = e.get("candidates", 0)
        line["batch"] = batch
        line["device"] = args.device or device
        lines.append(json.dumps(line))
    if not lines:
        sys.exit(f"table_to_progress: no entry of {args.table} matches the selection")
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"table_to_progress: {len(lines)} cases of {args.table} (batch {batch}, {device}) -> {args.output}")


if __name__ == "__main__":
    main()
