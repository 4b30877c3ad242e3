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

    def test_control_rows_correct_the_drift(self):
        # potrf (unchanged entries) ran 10% faster in the second run: posv's 0.9 is no change, its 0.8 is
        def both(potrf_ms, posv8, posv16):
            return run([row(8, potrf_ms), row(16, potrf_ms), row(8, posv8, routine="posv"), row(16, posv16, routine="posv")])
        p = self.tool(both(1.0, 1.0, 1.0), both(0.9, 0.9, 0.8), "--control", "potrf")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("d interleaved 0.900", p.stdout)
        corrected = p.stdout.split("divided by the drift")[1]
        # geometric mean of 1.0 and 0.8 / 0.9
        self.assertIn("| posv | interleaved | 2 | 0.943 | 0.889 | 1.000 | 0 | 1 |", corrected)
        self.assertNotIn("| potrf |", corrected)
        p = self.tool(both(1.0, 1.0, 1.0), both(0.9, 0.9, 0.8), "--control", "potrs")
        self.assertNotEqual(p.returncode, 0, "no potrs rows: the drift is not measured")
        self.assertIn("nothing measures the drift", p.stdout + p.stderr)

    def test_other_gpu_is_refused(self):
        p = self.tool(run([row(8, 1.0)]), run([row(8, 1.0)], gpu="GPU B"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("different GPUs", p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
