#!/usr/bin/env python3
"""Tests of table_to_progress.py (run by CTest): the selection by routine, layout and size, the fields
autotune --resume reads (Tuner::load_resume: batch and device from the table's header, best and
runner-up with config, ms and gflops), and the errors for a file that is not a table or a selection
that matches nothing."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "table_to_progress.py")


def entry(routine, layout, n, nb, ms, runner_up=True):
    def winner(nb_, ms_):
        return {"config": {"nb": nb_, "staged": True}, "gflops": 1.0 / ms_, "ms": ms_}
    return {"routine": routine, "precision": "d", "layout": layout, "n": n, "best": winner(nb, ms),
            "runner_up": winner(nb * 2, ms * 1.5) if runner_up else None, "candidates": 7}


TABLE = {"device": "NVIDIA H200", "batch": 16384, "commit": "abc", "entries": [
    entry("potrf", "column_major", 24, 8, 0.1),
    entry("potrf", "column_major", 110, 8, 1.5, runner_up=False),
    entry("posv", "column_major", 128, 16, 2.0),
    entry("potrf", "interleaved", 110, 4, 0.9),
    entry("potrs", "column_major", 110, 1, 0.3),
]}


class TableToProgress(unittest.TestCase):
    def run_tool(self, table, *args):
        with tempfile.TemporaryDirectory() as d:
            table_path, out_path = os.path.join(d, "t.json"), os.path.join(d, "p.jsonl")
            with open(table_path, "w") as f:
                f.write(table if isinstance(table, str) else json.dumps(table))
            p = subprocess.run([sys.executable, TOOL, table_path, *args, "--output", out_path],
                               capture_output=True, text=True)
            lines = None
            if p.returncode == 0:
                with open(out_path) as f:
                    lines = [json.loads(x) for x in f if x.strip()]
            return p, lines

    def test_compact_table_refused(self):
        # a shipped table keeps only the best configurations (shelve_table.py): no times to resume from
        compact = dict(TABLE, entries=[{k: v for k, v in e.items() if k not in ("runner_up", "candidates")}
                                       for e in TABLE["entries"]])
        for e in compact["entries"]:
            e["best"] = {"config": e["best"]["config"]}
        p, _ = self.run_tool(compact)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("compact table", p.stderr)
        self.assertIn("shelve_table.py expand", p.stderr)

    def test_selection_and_fields(self):
        p, lines = self.run_tool(TABLE, "--routine", "potrf,posv", "--layout", "column_major", "--n", "100:128")
        self.assertEqual(p.returncode, 0, p.stderr)
        got = sorted((x["routine"], x["n"]) for x in lines)
        self.assertEqual(got, [("posv", 128), ("potrf", 110)])
        for x in lines:
            self.assertEqual(x["batch"], 16384)
            self.assertEqual(x["device"], "NVIDIA H200")
            self.assertEqual(x["candidates"], 7)
            src = next(e for e in TABLE["entries"]
                       if (e["routine"], e["layout"], e["n"]) == (x["routine"], x["layout"], x["n"]))
            self.assertEqual(x["best"], src["best"], "the committed winner, config and time unchanged")
            self.assertEqual(x["runner_up"], src["runner_up"])
        potrf = next(x for x in lines if x["routine"] == "potrf")
        self.assertIsNone(potrf["runner_up"], "a missing runner-up stays null, as autotune writes it")

    def test_size_forms(self):
        p, lines = self.run_tool(TABLE, "--n", "24,110:110")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(lines), 4)  # every routine and layout at n = 24 and 110
        p, lines = self.run_tool(TABLE, "--n", "24:128:104")  # 24 and 128
        self.assertEqual(sorted(x["n"] for x in lines), [24, 128])

    def test_device_override(self):
        p, lines = self.run_tool(TABLE, "--n", "24", "--device", "NVIDIA H100 80GB HBM3")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual({x["device"] for x in lines}, {"NVIDIA H100 80GB HBM3"})

    def test_no_match_is_an_error(self):
        p, _ = self.run_tool(TABLE, "--precision", "s")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("no entry", p.stderr)

    def test_not_a_table(self):
        p, _ = self.run_tool('{"entries": []}')
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("not a tuning table", p.stderr)
        p, _ = self.run_tool("not json")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("not a tuning table", p.stderr)

    def test_bad_range(self):
        for bad in ("1:2:3:4", "x"):
            p, _ = self.run_tool(TABLE, "--n", bad)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("invalid --n", p.stderr)


if __name__ == "__main__":
    unittest.main()
