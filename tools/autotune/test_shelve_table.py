#!/usr/bin/env python3
"""Tests of shelve_table.py on the committed tables (expanded first when they are compact): compact then
expand gives back the full table byte for byte; the compact table holds exactly what the library
reads (the provenance and each entry's key and best configuration) with the same configurations;
an evidence file of another table, or one whose best configuration differs, is refused."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
TOOL = os.path.join(HERE, "shelve_table.py")
TABLES = [os.path.join(REPO, "libsolver", "tuning", t) for t in ("sm90.json", "sm90-batch100000.json")]
LIBRARY_ENTRY = {"routine", "precision", "layout", "n", "best"}


def run(*args):
    p = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    failures = []

    def expect(name, cond, detail=""):
        print(("ok: " if cond else "FAILED: ") + name)
        if not cond:
            failures.append(name)
            print(detail)

    with tempfile.TemporaryDirectory() as tmp:
        for table in TABLES:
            name = os.path.basename(table)
            shipped = json.load(open(table))
            full = os.path.join(tmp, "full-" + name)
            if "evidence" in shipped:  # the committed table is compact: its evidence gives the full one
                rc, out = run("expand", table, "--output", full)
                expect(f"{name}: the committed table expands with its evidence", rc == 0, out)
            else:
                full = table
            original = open(full, encoding="utf-8").read()
            compact, evidence, again = (os.path.join(tmp, x + name) for x in ("compact-", "evidence-", "again-"))
            evidence += ".jsonl.xz"
            rc, out = run("compact", full, "--output", compact, "--evidence", evidence)
            expect(f"{name}: compact", rc == 0, out)
            c = json.load(open(compact))
            f = json.load(open(full))
            expect(f"{name}: the compact entries hold only the library's fields",
                   all(set(e) == LIBRARY_ENTRY and set(e["best"]) == {"config"} for e in c["entries"]))
            expect(f"{name}: the same cases and best configurations",
                   [(e["routine"], e["precision"], e["layout"], e["n"], e["best"]["config"]) for e in c["entries"]] ==
                   [(e["routine"], e["precision"], e["layout"], e["n"], e["best"]["config"]) for e in f["entries"]])
            expect(f"{name}: the provenance is kept",
                   all(c[k] == f[k] for k in ("arch", "arch_number", "device", "cuda_version", "date", "commit", "batch")))
            expect(f"{name}: the compact table is under half the size",
                   os.path.getsize(compact) < 0.5 * len(original.encode()), f"{os.path.getsize(compact)} bytes")
            rc, out = run("expand", compact, "--evidence", evidence, "--output", again)
            expect(f"{name}: expand gives back the full table byte for byte",
                   rc == 0 and open(again, encoding="utf-8").read() == original, out)
            # a compact table whose best configuration changed no longer matches its evidence
            c["entries"][0]["best"]["config"]["nb"] = c["entries"][0]["best"]["config"].get("nb", 0) + 1
            changed = os.path.join(tmp, "changed-" + name)
            json.dump(c, open(changed, "w"))
            rc, out = run("expand", changed, "--evidence", evidence, "--output", again)
            expect(f"{name}: an evidence file with another best configuration is refused",
                   rc != 0 and "not the table's" in out, out)
            c["entries"].pop()
            json.dump(c, open(changed, "w"))
            rc, out = run("expand", changed, "--evidence", evidence, "--output", again)
            expect(f"{name}: an evidence file of other cases is refused", rc != 0 and "not this table's evidence" in out, out)
    print(f"test_shelve_table: {'all checks passed' if not failures else f'{len(failures)} failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
