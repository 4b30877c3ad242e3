#!/usr/bin/env python3
"""Tests of rebuild_table.py (run by CTest): the tuner's ranking (fully timed before pruned, then by
median), the entries it keeps, progress files taken as they are, and refusing a log or progress file
of another batch size."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "rebuild_table.py")


def config(nb):
    return {"nb": nb, "looking": "top"}


def entry(n, nb, ms):
    return {"routine": "potrf", "precision": "d", "layout": "interleaved", "n": n,
            "best": {"config": config(nb), "gflops": 1.0, "ms": ms}, "runner_up": None, "candidates": 1}


def candidate(n, nb, ms, pruned=False, supported=True):
    c = {"routine": "potrf", "precision": "d", "layout": "interleaved", "n": n, "config": config(nb),
         "stage": "shape", "supported": supported, "pruned": pruned}
    if supported:
        c.update(ms=ms, gflops=100.0 / ms)
    return c


class RebuildTable(unittest.TestCase):
    def run_tool(self, base, log_lines):
        with tempfile.TemporaryDirectory() as d:
            base_path, log_path, out_path = (os.path.join(d, f) for f in ("base.json", "log.jsonl", "out.json"))
            with open(base_path, "w") as f:
                json.dump(base, f)
            with open(log_path, "w") as f:
                f.write("\n".join(json.dumps(x) for x in log_lines) + "\n")
            p = subprocess.run([sys.executable, TOOL, base_path, log_path, "--output", out_path],
                               capture_output=True, text=True)
            out = json.load(open(out_path)) if p.returncode == 0 else None
            return p, out

    def test_ranking_and_kept_entries(self):
        base = {"batch": 16384, "commit": "old", "date": "then", "entries": [entry(4, 2, 0.5), entry(5, 1, 0.9)]}
        start = {"event": "start", "batch": 16384, "commit": "new", "date": "now"}
        log = [start,
               candidate(5, 1, 0.30, pruned=True),   # fastest first sample, but pruned: ranks after timed ones
               candidate(5, 2, 0.50),
               candidate(5, 3, 0.40),
               candidate(5, 4, 0.0, supported=False)]
        p, out = self.run_tool(base, log)
        self.assertEqual(p.returncode, 0, p.stderr)
        by_n = {e["n"]: e for e in out["entries"]}
        self.assertEqual(by_n[4]["best"]["config"]["nb"], 2, "a case not in the log is kept")
        self.assertEqual(by_n[5]["best"]["config"]["nb"], 3)
        self.assertEqual(by_n[5]["runner_up"]["config"]["nb"], 2)
        self.assertEqual(by_n[5]["candidates"], 3)
        self.assertEqual((out["commit"], out["date"]), ("new", "now"))

    def test_other_batch_is_refused(self):
        base = {"batch": 16384, "entries": [entry(4, 2, 0.5)]}
        p, _ = self.run_tool(base, [{"event": "start", "batch": 100000}, candidate(4, 1, 0.2)])
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("batch 100000", p.stdout + p.stderr)

    def progress_line(self, n, nb, device="GPU B", batch=16384):
        e = entry(n, nb, 0.25)
        e.update(runner_up={"config": config(nb + 1), "gflops": 0.9, "ms": 0.3}, candidates=7, batch=batch,
                 device=device, seconds=1.0)
        return e

    def test_progress_entries_replace_as_they_are(self):
        base = {"batch": 16384, "device": "GPU A", "retuned": [{"runs": "1"}],
                "entries": [entry(4, 2, 0.5), entry(5, 1, 0.9)]}
        # the ranking of a log's candidates is not applied to a progress line (its winner is the tuner's)
        p, out = self.run_tool(base, [self.progress_line(5, 3), candidate(6, 1, 0.1)])
        self.assertEqual(p.returncode, 0, p.stderr)
        by_n = {e["n"]: e for e in out["entries"]}
        self.assertEqual(by_n[5]["best"]["config"]["nb"], 3)
        self.assertEqual(by_n[5]["runner_up"]["config"]["nb"], 4)
        self.assertEqual(by_n[5]["candidates"], 7)
        self.assertEqual(by_n[4]["best"]["config"]["nb"], 2, "a case not in the file is kept")
        self.assertEqual(by_n[6]["best"]["config"]["nb"], 1, "a log line next to progress lines still counts")
        self.assertEqual(out["device"], "GPU A", "entries of BASE were kept: its device stays")
        self.assertIn("retuned", out, "entries of BASE were kept: its history stays")

    def test_progress_replacing_every_entry_drops_the_history(self):
        base = {"batch": 16384, "device": "GPU A", "retuned": [{"runs": "1"}], "entries": [entry(4, 2, 0.5)]}
        p, out = self.run_tool(base, [self.progress_line(4, 1)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("retuned", out)
        self.assertEqual(out["device"], "GPU B")

    def test_progress_of_other_batch_is_refused(self):
        base = {"batch": 16384, "entries": [entry(4, 2, 0.5)]}
        p, _ = self.run_tool(base, [self.progress_line(4, 1, batch=100000)])
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("batch 100000", p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
