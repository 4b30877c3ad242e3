#!/usr/bin/env python3
"""Tests of target_report.py (run by CTest): the launch floor and the ceiling columns of a run that
measured them (testdata/target_report_fixture.json), the speed-up ceiling of the x-cuSOLVER targets,
the unchanged report of a run without them, and a re-run's merge with an earlier run."""

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
        # x cuSOLVER: speed-up ceiling = speedup * roofline_ceiling / roofline. Column-major potrf s n = 8:
        # 4 * 0.166366 / 0.05 = 13.31 >= 8, missed but attainable; potrs s n = 8: 12 * 0.120153 / 0.0546
        # = 26.41, met.
        self.assertTrue(self.summary_row(md, "potrf column-major: x cuSOLVER").startswith(
            "| potrf column-major: x cuSOLVER | 1 | 0 | 1 | 0 |"), md)
        self.assertTrue(self.summary_row(md, "potrs nrhs 1: x cuSOLVER").startswith(
            "| potrs nrhs 1: x cuSOLVER | 1 | 1 | 0 | 0 |"), md)
        # Other targets have no ceiling count.
        self.assertTrue(self.summary_row(md, "backward error (scaled, < tolerance)").startswith(
            "| backward error (scaled, < tolerance) | 6 | 6 | 0 | - |"), md)
        self.assertIn("for a speed-up over cuSOLVER it is the speed-up a call running at the roofline", md)
        potrf = self.section(md, "potrf interleaved: roofline fraction")
        self.assertIn("| roofline | ceiling | x cuSOLVER |", potrf)
        self.assertIn("| 0.099 | 0.166 | - |", potrf)
        self.assertIn("| 0.194 |  | - |", potrf, "a row without a ceiling has a blank cell")
        self.assertIn("| 0.055 | 0.120 | 12.00 |", self.section(md, "potrs nrhs 1: roofline fraction"))
        column_major = self.section(md, "potrf column-major: x cuSOLVER")
        self.assertIn("| roofline | ceiling | x cuSOLVER |", column_major)
        self.assertIn("| 0.050 | 13.31 | 4.00 |", column_major)
        self.assertIn("| 0.055 | 26.41 | 12.00 |", self.section(md, "potrs nrhs 1: x cuSOLVER"))
        self.assertIn(OLD_TABLE_HEADER, self.section(md, "backward error (scaled, < tolerance)"),
                      "targets other than roofline fractions and speed-ups have no ceiling column")

    def test_speedup_ceiling(self):
        # Column-major potrf rows (want 8 for n <= 32) missed with a speed-up ceiling below and above 8,
        # built so that the launch floor (6.8 us) and the roofline time each decide one of them.
        base = next(r for r in self.doc["rows"] if r["layout"] == "column_major")

        def variant(n, time_ms, roofline, roofline_ceiling, cusolver_ms):
            r = copy.deepcopy(base)
            r.update(n=n, time_ms=time_ms, roofline=roofline, roofline_ceiling=roofline_ceiling)
            r["refs"]["cusolver"].update(time_ms=cusolver_ms, speedup=cusolver_ms / time_ms)
            return r
        doc = copy.deepcopy(self.doc)
        doc["rows"] = [
            # roofline time 1.36 us < floor: t_best 6.8 us, ceiling 34 / 6.8 = 5 < 8: unattainable.
            variant(16, 0.02, 0.068, 0.2, 0.034),
            # roofline time 10 us > floor: t_best 10 us, ceiling 200 / 10 = 20 >= 8: attainable.
            variant(32, 0.04, 0.25, 1.0, 0.2),
            # no roofline_ceiling (the launch floor not measured for it): no ceiling, not counted.
            variant(24, 0.02, 0.068, None, 0.034),
        ]
        md = self.report(doc)
        self.assertTrue(self.summary_row(md, "potrf column-major: x cuSOLVER").startswith(
            "| potrf column-major: x cuSOLVER | 3 | 0 | 3 | 1 |"), md)
        section = self.section(md, "potrf column-major: x cuSOLVER")
        self.assertIn("| 16 | 16384 | 1.7 | 8 | **no** | 0.0200 | 100 | 0.068 | 5.00 | 1.70 |", section)
        self.assertIn("| 32 | 16384 | 5 | 8 | **no** | 0.0400 | 100 | 0.250 | 20.00 | 5.00 |", section)
        self.assertIn("| 24 | 16384 | 1.7 | 8 | **no** | 0.0200 | 100 | 0.068 |  | 1.70 |", section)
        # Only speed-up rows: the ceiling column still appears, the roofline targets have no rows.
        self.assertIn("| of which unattainable under single-call timing |", md)
        self.assertNotIn("roofline fraction |", md)

        # A slower cuSOLVER for the unattainable row (ceiling 5 -> 10): now attainable.
        doc["rows"][0]["refs"]["cusolver"].update(time_ms=0.068, speedup=3.4)
        md = self.report(doc)
        self.assertTrue(self.summary_row(md, "potrf column-major: x cuSOLVER").startswith(
            "| potrf column-major: x cuSOLVER | 3 | 0 | 3 | 0 |"), md)
        self.assertIn("| 0.068 | 10.00 | 3.40 |", md)

        # A row with no usable roofline has no ceiling.
        doc["rows"][1]["roofline"] = 0.0
        md = self.report(doc)
        self.assertIn("| 32 | 16384 | 5 | 8 | **no** | 0.0400 | 100 | 0.000 |  | 5.00 |", md)

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

    def test_posv_against_potrf_of_its_own_run(self):
        # posv is compared with the potrf row of its own run; a later run that re-times only potrf
        # (faster) does not change the ratio. Without a potrf row of its own, the latest one counts.
        potrf = copy.deepcopy(next(r for r in self.doc["rows"] if r["routine"] == "potrf"
                                   and r["layout"] == "column_major"))
        posv = dict(copy.deepcopy(potrf), routine="posv", nrhs=1, time_ms=potrf["time_ms"] * 1.10)
        first = copy.deepcopy(self.doc)
        first["rows"] = [potrf, posv]
        faster = copy.deepcopy(first)
        faster["rows"] = [dict(copy.deepcopy(potrf), time_ms=potrf["time_ms"] / 2)]
        ratio_row = lambda md: self.summary_row(md, "posv: time / potrf time")
        self.assertTrue(ratio_row(self.report(first, faster)).startswith("| posv: time / potrf time | 1 | 1 | 0 |"))
        alone = copy.deepcopy(first)
        alone["rows"] = [posv]
        self.assertTrue(ratio_row(self.report(faster, alone)).startswith("| posv: time / potrf time | 1 | 0 | 1 |"))


if __name__ == "__main__":
    unittest.main()
