#!/usr/bin/env python3
"""Adopts the measured winners of one device call (small_report.py's best.json) into the committed
small-Cholesky tuning tables: for each (routine, precision, n, batch) whose fastest column-major series
is a candidate table (not `committed`) and beat the committed kernels by at least --margin in the same
call, the candidate table's entry replaces the committed one in sm90.json (batch 16384) or
sm90-batch100000.json (batch 100000), and the table's `retuned` list gets one record naming the call.

  adopt_best.py BEST.json TABLES_DIR --device NAME --date DATE --commit SHA --evidence results/FOLDER
                --committed-times A.json,B.json [--script scripts/gpu/X.sh --designs TEXT]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TUNING = os.path.join(HERE, "..", "..", "libsolver", "tuning")
FILES = {16384: "sm90.json", 100000: "sm90-batch100000.json"}


def load(path):
    table = json.load(open(path))
    key = next(k for k, v in table.items() if isinstance(v, list) and v and isinstance(v[0], dict) and "routine" in v[0])
    return table, key


def write(path, table, key):
    """One entry per line, as the autotuner writes the tables."""
    with open(path, "w") as f:
        f.write("{\n")
        for k, v in table.items():
            if k == key:
                continue
            if k == "retuned":
                f.write(' "retuned": [\n' + ",\n".join("  " + json.dumps(r) for r in v) + "\n ],\n")
            else:
                f.write(" %s: %s,\n" % (json.dumps(k), json.dumps(v)))
        f.write(" %s: [\n" % json.dumps(key))
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in table[key]))
        f.write("\n ]\n}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("best")
    ap.add_argument("tables", help="the folder of the call's candidate tables (fused-a.json, ...)")
    ap.add_argument("--committed", help="best.json's `committed` times come from this series", default="committed")
    ap.add_argument("--margin", type=float, default=1.03, help="committed time / winner's time at least this")
    ap.add_argument("--device", required=True)
    ap.add_argument("--date", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--evidence", required=True)
    ap.add_argument("--committed-times", required=True, help="the call's committed-tables tester JSON files, comma-separated")
    ap.add_argument("--script", default="scripts/gpu/small.sh", help="the device call's script (named in the record)")
    ap.add_argument("--designs", default="fused family, register kernels with warp-synchronous steps",
                    help="what the candidate tables held (named in the record)")
    a = ap.parse_args()
    best = json.load(open(a.best))
    committed = {}
    for p in a.committed_times.split(","):
        for r in json.load(open(p)).get("rows", []):
            if r.get("layout") == "column_major" and r.get("status") == "ok" and r.get("uplo", "lower") == "lower":
                committed[(r["routine"], r["precision"], r["n"], r["batch"])] = r["time_ms"]
    adopted = {}
    for case, b in sorted(best.items()):
        routine, prec, n, batch = case.split()
        n, batch = int(n), int(batch)
        c = committed.get((routine, prec, n, batch))
        if b["series"] == a.committed or c is None or c / b["time_ms"] < a.margin or batch not in FILES:
            continue
        cand, ckey = load(os.path.join(a.tables, b["series"] + ".json"))
        entry = next(e for e in cand[ckey] if (e["routine"], e["precision"], e["layout"], e["n"]) == (routine, prec, "column_major", n))
        adopted.setdefault(batch, []).append((routine, prec, n, b["series"], c, b["time_ms"], entry))
    for batch, rows in adopted.items():
        path = os.path.join(TUNING, FILES[batch])
        table, key = load(path)
        index = {(e["routine"], e["precision"], e["layout"], e["n"]): i for i, e in enumerate(table[key])}
        for routine, prec, n, series, c, t, entry in rows:
            i = index.get((routine, prec, "column_major", n))
            if i is None:
                table[key].append(entry)
            else:
                table[key][i] = entry
            print(f"{FILES[batch]}: {routine} {prec} n = {n}: {series} {t} ms (committed {c} ms, {c / t:.2f}x)")
        cases = "; ".join(f"{r} {p} column_major n = {n} ({s}, {c / t:.2f}x)" for r, p, n, s, c, t, _ in rows)
        table.setdefault("retuned", []).append({
            "runs": "small call", "device": a.device, "date": a.date, "commit": a.commit, "cases": cases,
            "how": "the fastest of the committed kernels and the candidate tables of validation/cusolverdx/fused_table.py "
                   f"({a.designs}) measured by the tester in one call "
                   f"({a.script}), taken where it beat the committed kernel by >= {a.margin:g}x; evidence "
                   + a.evidence})
        write(path, table, key)
    if not adopted:
        print("adopt_best: no case beat the committed kernels by the margin", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
