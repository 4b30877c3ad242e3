#!/usr/bin/env python3
"""Tests of target_report.py (run by CTest): the launch floor and the ceiling column of a run that
measured them (testdata/target_report_fixture.json), the unchanged report of a run without them,
and a re-run's merge with an earlier run."""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "target_report.py")
FIXTURE = os.path.join(HERE, "testdata", "target_report_fixture.json")

OLD_SUMMARY_HEADER = "| target | rows | met | missed | worst (achieved vs wanted) |"
OLD_TABLE_HEADER = "| prec | layout | n | batch | achieved | wanted | met | time ms | GFLOP/s | roofline | x cuSOLVER | kernel |"


def without_launch_floor(doc):
    """The fixture as a run before the launch floor was measured wrote it."""
    doc = copy.deepcopy(doc)
    for key in [k for k in doc["header"]["gpu"] if k.startswith("launch_floor")]:
        del doc["header"]["gpu"][key]
    for row in doc["rows"]:
        del row["roofline_ceiling"]
    return doc


class TargetReport(unittest.TestCase):
    def report(self, *docs):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for k, doc in enumerate(docs):
                paths.append(os.path.join(d, "run%d.json" % k))
                with open(paths[-1], "w") as f:
                    json.dump(doc, f)
            out = os.path.join(d, "out")
            p = subprocess.run([sys.executable, TOOL, *paths, "--output", out], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(out, "targets.md")) as f:
                return f.read()

    @staticmethod
    def summary_row(md, target):
        return next(line for line in md.splitlines() if line.startswith("| %s |" % target))

    @staticmethod
    def section(md, target):
        return md.split("## " + target + "\n", 1)[1].split("\n## ", 1)[0]

    def setUp(self):
        with open(FIXTURE) as f:
            self.doc = json.load(f)

    def test_launch_floor_and_ceiling(self):
        md = self.report(self.doc)
        self.assertIn("- launch floor: 6.80 us (median event-timed single launch of an empty kernel", md)
        self.assertIn("| of which unattainable under single-call timing |", md)
        # potrf interleaved: n = 8 s missed with ceiling 0.166 < 0.7 (unattainable), n = 32 missed with
        # ceiling 1 (attainable), chunked n = 16 met, d n = 8 missed without a ceiling (not counted).
        self.assertTrue(self.summary_row(md, "potrf interleaved: roofline fraction").startswith(
            "| potrf interleaved: roofline fraction | 4 | 1 | 3 | 1 |"), md)
        self.assertTrue(self.summary_row(md, "potrs nrhs 1: roofline fraction").startswith(
            "| potrs nrhs 1: roofline fraction | 1 | 0 | 1 | 1 |"), md)
        # Other targets have no ceiling count.
        self.assertTrue(self.summary_row(md, "potrf column-major: x cuSOLVER").startswith(
            "| potrf column-major: x cuSOLVER | 1 | 0 | 1 | - |"), md)
        potrf = self.section(md, "potrf interleaved: roofline fraction")
        self.assertIn("| roofline | ceiling | x cuSOLVER |", potrf)
        self.assertIn("| 0.099 | 0.166 | - |", potrf)
        self.assertIn("| 0.194 |  | - |", potrf, "a row without a ceiling has a blank cell")
        self.assertIn("| 0.055 | 0.120 | 12.00 |", self.section(md, "potrs nrhs 1: roofline fraction"))
        self.assertIn(OLD_TABLE_HEADER, self.section(md, "potrf column-major: x cuSOLVER"),
                      "targets other than the roofline fractions have no ceiling column")

    def test_old_run_unchanged(self):
        md = self.report(without_launch_floor(self.doc))
        for text in ("launch floor", "ceiling", "unattainable"):
            self.assertNotIn(text, md)
        self.assertIn(OLD_SUMMARY_HEADER, md)
        self.assertTrue(self.summary_row(md, "potrf interleaved: roofline fraction").startswith(
            "| potrf interleaved: roofline fraction | 4 | 1 | 3 | s potrf"), md)
        self.assertIn(OLD_TABLE_HEADER, self.section(md, "potrf interleaved: roofline fraction"))

    def test_old_and_new_runs_merged(self):
        # A re-run with the launch floor replaces one case of an old run: only that row has a ceiling.
        old = without_launch_floor(self.doc)
        new = copy.deepcopy(self.doc)
        new["rows"] = [r for r in new["rows"] if r["layout"] == "interleaved" and r["n"] == 32]
        md = self.report(old, new)
        self.assertIn("- launch floor: 6.80 us", md)
        self.assertTrue(self.summary_row(md, "potrf interleaved: roofline fraction").startswith(
            "| potrf interleaved: roofline fraction | 4 | 1 | 3 | 0 |"), md)
        self.assertIn("| 0.425 | 1.000 | - |", md)
        self.assertIn("| 0.099 |  | - |", md)

    def test_error_kept_only_for_the_same_kernel(self):
        # A re-run without --check (error null) keeps the earlier row's backward error when it ran the
        # same kernel, and drops it when the table chose another kernel.
        old = copy.deepcopy(self.doc)
        old["rows"] = [r for r in old["rows"] if r["layout"] == "interleaved" and r["n"] == 32]
        old["rows"][0]["kernel"] = {"name": "potrf_interleaved_s_lower_n32_a", "registers": 96, "local_bytes": 0}
        old["rows"][0]["error"] = 0.25
        rerun = copy.deepcopy(old)
        rerun["rows"][0]["error"] = None
        rerun["rows"][0]["diff_lapack"] = None
        error_rows = lambda md: self.summary_row(md, "backward error (scaled, < tolerance)")
        self.assertTrue(error_rows(self.report(old, rerun)).startswith("| backward error (scaled, < tolerance) | 1 | 1 |"))
        rerun["rows"][0]["kernel"] = {"name": "potrf_interleaved_s_lower_n32_b", "registers": 96, "local_bytes": 0}
        self.assertNotIn("| backward error (scaled, < tolerance) |", self.report(old, rerun))


if __name__ == "__main__":
    unittest.main()
