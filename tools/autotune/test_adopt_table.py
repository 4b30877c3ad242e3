#!/usr/bin/env python3
"""Tests of adopt_table.py (run by CTest): a group faster on average takes the new entries except
where the base measured more than the threshold faster; a group not faster keeps the base, its
unmeasured sizes included; entries the new table lacks are kept; the run is recorded."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "adopt_table.py")


def entry(routine, layout, n, tag):
    return {"routine": routine, "precision": "d", "layout": layout, "n": n, "best": {"tag": tag}}


def row(routine, layout, n, ms):
    return {"routine": routine, "precision": "d", "layout": layout, "uplo": "lower", "n": n, "batch": 16384,
            "nrhs": 0, "time_ms": ms, "status": "ok"}


def tester(rows):
    return {"header": {"gpu": {"name": "GPU A"}}, "rows": rows}


def adopt(base, new, before, after, *extra):
    """Runs the tool on these tables and tester rows: (the finished process, the merged table)."""
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for name, j in (("base", base), ("new", new), ("before", tester(before)), ("after", tester(after))):
            paths.append(os.path.join(d, name + ".json"))
            with open(paths[-1], "w") as f:
                json.dump(j, f)
        out = os.path.join(d, "out.json")
        p = subprocess.run([sys.executable, TOOL, *paths, "--output", out, "--run", "44", "--device", "GPU A",
                            "--commit", "abc", "--how", "test", *extra], capture_output=True, text=True)
        if p.returncode != 0:
            return p, None
        with open(out) as f:
            return p, json.load(f)


class AdoptTable(unittest.TestCase):
    def test_rule(self):
        cases = [("potrf", "interleaved", n) for n in (8, 12, 16, 24, 32)] + [("potrs", "chunked", n) for n in (8, 12, 16)]
        base = {"device": "GPU A", "retuned": [{"runs": "1"}], "entries": [entry(*c, "base") for c in cases]}
        new = {"entries": [entry(*c, "new") for c in cases if c != ("potrf", "interleaved", 32)]}
        # potrf: 8 and 16 measured faster, 24 measured slower by 10% (kept), 12 not measured (taken)
        before = [row("potrf", "interleaved", 8, 1.0), row("potrf", "interleaved", 16, 1.0),
                  row("potrf", "interleaved", 24, 1.0), row("potrs", "chunked", 8, 1.0), row("potrs", "chunked", 16, 1.0)]
        after = [row("potrf", "interleaved", 8, 0.8), row("potrf", "interleaved", 16, 0.9),
                 row("potrf", "interleaved", 24, 1.1), row("potrs", "chunked", 8, 0.97), row("potrs", "chunked", 16, 1.04)]
        p, merged = adopt(base, new, before, after)
        self.assertEqual(p.returncode, 0, p.stderr)
        tags = {(e["routine"], e["n"]): e["best"]["tag"] for e in merged["entries"]}
        self.assertEqual(tags[("potrf", 8)], "new")
        self.assertEqual(tags[("potrf", 12)], "new", "an unmeasured size of a faster group is taken")
        self.assertEqual(tags[("potrf", 16)], "new")
        self.assertEqual(tags[("potrf", 24)], "base", "measured 10% slower")
        self.assertEqual(tags[("potrf", 32)], "base", "absent from the new table")
        # potrs: geometric mean of 0.97 and 1.04 is above 1: the whole group keeps the base
        for n in (8, 12, 16):
            self.assertEqual(tags[("potrs", n)], "base")
        self.assertEqual(len(merged["entries"]), len(cases))
        self.assertEqual([r["runs"] for r in merged["retuned"]], ["1", "44"])
        self.assertTrue(merged["retuned"][1]["cases"].endswith("potrf d interleaved: 3"))
        self.assertIn("kept (not faster)", p.stdout)

    def test_control_rows(self):
        # posv measured 5% faster, but potrf (the same entries) 10% faster too: posv is slower, kept
        cases = [("potrf", "interleaved", 8), ("posv", "interleaved", 8)]
        base = {"entries": [entry(*c, "base") for c in cases]}
        new = {"entries": [entry(*c, "new") for c in cases]}
        before = [row("potrf", "interleaved", 8, 1.0), row("posv", "interleaved", 8, 1.0)]
        after = [row("potrf", "interleaved", 8, 0.9), row("posv", "interleaved", 8, 0.95)]
        for control, posv_tag in ((None, "new"), ("potrf", "base")):
            p, merged = adopt(base, new, before, after, *(["--control", control] if control else []))
            self.assertEqual(p.returncode, 0, p.stderr)
            tags = {e["routine"]: e["best"]["tag"] for e in merged["entries"]}
            self.assertEqual(tags["posv"], posv_tag, f"control {control}")
            self.assertEqual(tags["potrf"], "new" if control is None else "base", f"control {control}")


if __name__ == "__main__":
    unittest.main()
