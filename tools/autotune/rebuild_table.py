#!/usr/bin/env python3
"""Rebuilds tuning-table entries from the autotuner's candidate log (autotune --log FILE) or its
progress file (autotune --resume FILE).

    python3 tools/autotune/rebuild_table.py BASE.json LOG.jsonl[.xz] [more logs] --output TABLE.json
    python3 tools/autotune/rebuild_table.py BASE.json PROGRESS.jsonl [LOG.jsonl.xz ...] --output TABLE.json

The GPU machine returns at most 8 files per call; when the table a run wrote is among those left
behind, its candidate log still holds every timing. For each case (routine, precision, layout, n)
that appears in a log, this applies the tuner's own ranking (tools/autotune/stages.cpp, `ranking`):
the timed candidates, fully timed before pruned ones, fastest median first; the first is the entry's
best, the second its runner-up. That case's entry in BASE is replaced (or added); every other entry
of BASE is kept. A later log replaces the cases of an earlier one. The tuner also re-runs the winner
once and drops it if any info != 0 (its sanity check): check the run's console log for "failed the
sanity check" before trusting a rebuilt entry (this tool cannot repeat that check).

A progress file holds one line per finished case with the tuner's own entry (its winner after the
sanity check, runner-up, candidates, device): those lines become the entries as they are. Use it
when a run's table was left behind but its progress file came back (a sweep split over several calls
resumes from one). When the new entries replace every entry of BASE, the table's device becomes the
progress file's and BASE's "retuned" list (the history of its entries) is dropped; otherwise record
the partial re-tuning in "retuned" yourself (libsolver/tuning/README.md).

The table's commit and date become those of the last log's start event.
"""

import argparse
import json
import lzma
import sys


def read_log(path):
    """(start event or None, {case: [candidate records]}, {case: progress entry})."""
    opener = lzma.open if path.endswith(".xz") else open
    start, cases, finished = None, {}, {}
    with opener(path, "rt") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                j = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit("%s line %d: not JSON (%s)" % (path, number, e))
            if j.get("event") == "start":
                start = j
                continue
            if "routine" not in j:
                continue
            key = (j["routine"], j["precision"], j["layout"], j["n"])
            if "best" in j:  # a progress line: the finished case's entry
                finished[key] = j
            elif "config" in j:
                cases.setdefault(key, []).append(j)
    return start, cases, finished


def rank(candidates):
    timed = [c for c in candidates if c.get("ms") is not None and c.get("supported", True) and c["ms"] > 0]
    return sorted(timed, key=lambda c: (bool(c.get("pruned")), c["ms"]))


def refuse_compact(table, path, tool):
    """A shipped table keeps only what the library reads; its evidence (times, runners-up) is in results/."""
    if table.get("entries") and "ms" not in table["entries"][0].get("best", {}):
        sys.exit(f"{tool}: {path} is a compact table (no times): expand it with its evidence first, "
                 f"tools/autotune/shelve_table.py expand {path} --output FULL.json")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base")
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--output", required=True)
    args = ap.parse_args()
    table = json.load(open(args.base))
    refuse_compact(table, args.base, "rebuild_table")
    entries = {(e["routine"], e["precision"], e["layout"], e["n"]): e for e in table["entries"]}
    replaced = set()
    progress_device = None
    for path in args.logs:
        start, cases, finished = read_log(path)
        for key, p in finished.items():
            entries[key] = {"routine": key[0], "precision": key[1], "layout": key[2], "n": key[3],
                            "best": p["best"], "runner_up": p.get("runner_up"), "candidates": p.get("candidates")}
            if p.get("batch") is not None and p["batch"] != table.get("batch"):
                sys.exit("%s: batch %s for %s, but %s is a table of batch %s" %
                         (path, p["batch"], " ".join(map(str, key)), args.base, table.get("batch")))
            if p.get("device"):
                progress_device = p["device"]
            replaced.add(key)
        if start is not None and start.get("batch") != table.get("batch"):
            sys.exit("%s: batch %s, but %s is a table of batch %s" % (path, start.get("batch"), args.base, table.get("batch")))
        for key, candidates in cases.items():
            r = rank(candidates)
            if not r:
                print("%s: no timed candidate for %s; entry kept" % (path, " ".join(map(str, key))))
                continue
            winner = lambda c: {"config": c["config"], "gflops": c["gflops"], "ms": c["ms"]}
            entries[key] = {"routine": key[0], "precision": key[1], "layout": key[2], "n": key[3],
                            "best": winner(r[0]), "runner_up": winner(r[1]) if len(r) > 1 else None,
                            "candidates": len(r)}
            replaced.add(key)
        if start is not None:
            table["commit"], table["date"] = start.get("commit", table.get("commit")), start.get("date", table.get("date"))
    # BASE's order, new cases at the end
    base_keys = [(e["routine"], e["precision"], e["layout"], e["n"]) for e in table["entries"]]
    if set(base_keys) <= replaced:  # a new table: its device is the progress file's, no history
        table.pop("retuned", None)
        if progress_device:
            table["device"] = progress_device
    table["entries"] = [entries[k] for k in base_keys] + [entries[k] for k in entries if k not in set(base_keys)]
    with open(args.output, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    print("%s: %d entries, %d rebuilt from %s" % (args.output, len(entries), len(replaced), ", ".join(args.logs)))


if __name__ == "__main__":
    main()
