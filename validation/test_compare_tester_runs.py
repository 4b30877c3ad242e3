#!/usr/bin/env python3
"""Tests of compare_tester_runs.py (run by CTest): rows paired by case, only ok rows, the ratios and
the rows listed, and refusing runs of two different GPUs."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "compare_tester_runs.py")


def row(n, ms, routine="potrf", layout="interleaved", status="ok"):
    return {"routine": routine, "precision": "d", "layout": layout, "uplo": "lower", "n": n, "batch": 16384,
            "nrhs": 0, "time_ms": ms, "status": status}


def run(rows, gpu="GPU A"):
    return {"header": {"gpu": {"name": gpu}}, "rows": rows}


class CompareTesterRuns(unittest.TestCase):
    def tool(self, before, after, *extra):
        with tempfile.TemporaryDirectory() as d:
            paths = [os.path.join(d, "before.json"), os.path.join(d, "after.json")]
            for path, j in zip(paths, (before, after)):
                with open(path, "w") as f:
                    json.dump(j, f)
            return subprocess.run([sys.executable, TOOL, *paths, *extra], capture_output=True, text=True)

    def test_ratios_and_listed_rows(self):
        before = run([row(8, 1.0), row(16, 2.0), row(32, 4.0), row(64, 1.0, status="FAILED")])
        after = run([row(8, 1.2), row(16, 1.0), row(32, 4.1), row(64, 0.5), row(128, 1.0)])
        p = self.tool(before, after)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("3 rows in both runs", p.stdout, "n = 64 failed before, n = 128 ran only after")
        # geometric mean of 1.2, 0.5 and 1.025
        self.assertIn("| potrf | interleaved | 3 | 0.850 | 0.500 | 1.200 | 1 | 1 |", p.stdout)
        listed = [l for l in p.stdout.splitlines() if l.startswith("| potrf | d |")]
        self.assertEqual([l.split("|")[4].strip() for l in listed], ["8", "16"], "n = 32 is within 5%")

    def test_other_gpu_is_refused(self):
        p = self.tool(run([row(8, 1.0)]), run([row(8, 1.0)], gpu="GPU B"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("different GPUs", p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
