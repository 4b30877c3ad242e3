#!/usr/bin/env python3
"""A tuning table as the library reads it, and its evidence kept with the results.

The tuner writes a full table: per case the best configuration with its time, the runner-up, the
number of candidates. The library reads only the provenance (arch, device, CUDA version, date,
commit, batch) and each entry's key and best configuration (libsolver/src/core/tuning_table.cpp);
it embeds the table in the shared library. So the shipped table is compact and the rest is evidence:

    shelve_table.py compact FULL.json --output libsolver/tuning/sm90.json \\
        --evidence results/<run folder>/sm90.evidence.jsonl.xz
        the library's fields only (same schema, one entry per line, the header's provenance and
        "retuned" history kept, "evidence" naming the evidence file); the evidence file holds one
        JSON line per entry: its key, the best (with ms and gflops), the runner-up and candidates.

    shelve_table.py expand COMPACT.json [--evidence FILE] --output FULL.json
        the full table again (byte for byte what `compact` was given, when it was written by the
        tuner or by this script), e.g. for table_to_progress.py, adopt_table.py or
        `autotune --candidates-from` (which then gets the runners-up too); FILE defaults to the
        table's "evidence", relative to the repository root.

`compact` refuses a table whose evidence it cannot write, and `expand` an evidence file that does
not hold exactly the table's cases with the same best configurations.
"""
import argparse
import json
import re
import lzma
import os
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
KEY = ("routine", "precision", "layout", "n")


def key_of(e):
    return tuple(e[k] for k in KEY)


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read()


def compact_text(header, entries):
    """One entry per line; the header's fields as the tuner orders them, each on its own line."""
    lines = ["{"]
    for k, v in header.items():
        if k == "retuned":
            lines.append(' "retuned": [')
            lines += ["  " + json.dumps(r, ensure_ascii=False) + ("," if i + 1 < len(v) else "") for i, r in enumerate(v)]
            lines.append(" ],")
        else:
            lines.append(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},")
    lines.append(' "entries": [')
    lines += [json.dumps(e, ensure_ascii=False, separators=(",", ":")) + ("," if i + 1 < len(entries) else "")
              for i, e in enumerate(entries)]
    lines += [" ]", "}"]
    return "\n".join(lines) + "\n"


def compact(args):
    full = json.loads(load(args.table))
    if "entries" not in full:
        sys.exit(f"shelve_table: {args.table}: not a tuning table (no \"entries\")")
    header = {k: v for k, v in full.items() if k != "entries"}
    header["evidence"] = os.path.relpath(os.path.abspath(args.evidence), REPO)
    library, evidence = [], []
    for i, e in enumerate(full["entries"]):
        try:
            library.append({**{k: e[k] for k in KEY}, "best": {"config": e["best"]["config"]}})
        except (KeyError, TypeError) as x:
            sys.exit(f"shelve_table: {args.table}: entry {i}: no {x}")
        evidence.append(e)
    # The evidence keeps each entry whole (key, best with its time, runner-up, candidates) and the
    # header as the tuner wrote it, so that `expand` gives back the table it was given.
    os.makedirs(os.path.dirname(os.path.abspath(args.evidence)), exist_ok=True)
    with lzma.open(args.evidence, "wt", encoding="utf-8", preset=9 | lzma.PRESET_EXTREME) as f:
        f.write(json.dumps({"header": {k: v for k, v in full.items() if k != "entries"},
                            "indent": args.indent}, ensure_ascii=False) + "\n")
        for e in evidence:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(compact_text(header, library))
    print(f"shelve_table: {len(library)} entries -> {args.output} ({os.path.getsize(args.output)} bytes), "
          f"evidence -> {args.evidence} ({os.path.getsize(args.evidence)} bytes)")


def expand(args):
    table = json.loads(load(args.table))
    path = args.evidence or table.get("evidence")
    if not path:
        sys.exit(f"shelve_table: {args.table} names no evidence file (--evidence)")
    if not os.path.isabs(path) and not os.path.exists(path):
        path = os.path.join(REPO, path)
    lines = load(path).splitlines()
    first = json.loads(lines[0])
    evidence = [json.loads(line) for line in lines[1:] if line.strip()]
    by_key = {key_of(e): e for e in evidence}
    mine = {key_of(e): e for e in table["entries"]}
    if set(by_key) != set(mine):
        sys.exit(f"shelve_table: {path} holds {len(set(by_key) - set(mine))} cases the table lacks and lacks "
                 f"{len(set(mine) - set(by_key))} of its cases: not this table's evidence")
    # Cases a later run re-tuned (named in the table's "retuned" records after the evidence was shelved)
    # take their best configuration from the table: their evidence is that record's results folder.
    retuned = set()
    for record in table.get("retuned", []):
        for m in re.finditer(r"(\w+) ([sdcz]) (\w+) n = (\d+)", str(record.get("cases", ""))):
            retuned.add((m.group(1), m.group(2), m.group(3), int(m.group(4))))
    for k, e in mine.items():
        if by_key[k]["best"]["config"] != e["best"]["config"] and tuple(k[:4]) in retuned:
            by_key[k] = dict(by_key[k], best=dict(by_key[k]["best"], config=e["best"]["config"]))
        if by_key[k]["best"]["config"] != e["best"]["config"]:
            sys.exit(f"shelve_table: {path}: {' '.join(map(str, k))}: the evidence's best configuration is not "
                     "the table's (the table changed since; re-tune or re-shelve)")
    full = dict(first["header"])
    if "retuned" in table:
        full["retuned"] = table["retuned"]
    full["entries"] = [by_key[key_of(e)] for e in table["entries"]]
    text = json.dumps(full, indent=first.get("indent", 1), ensure_ascii=False) + "\n"
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"shelve_table: {len(full['entries'])} entries with their evidence -> {args.output}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compact", help="the library's table and the evidence file")
    c.add_argument("table")
    c.add_argument("--output", required=True)
    c.add_argument("--evidence", required=True, help="the evidence file to write (.jsonl.xz, under results/)")
    c.add_argument("--indent", type=int, default=1, help="the full table's indentation, for expand (the tuner's: 1)")
    e = sub.add_parser("expand", help="the full table from a compact one and its evidence")
    e.add_argument("table")
    e.add_argument("--evidence")
    e.add_argument("--output", required=True)
    args = ap.parse_args()
    (compact if args.command == "compact" else expand)(args)


if __name__ == "__main__":
    main()
