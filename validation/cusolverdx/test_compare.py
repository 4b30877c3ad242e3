#!/usr/bin/env python3
"""Tests of compare.py (ctest cusolverdx.compare): the ratio cuSolverDx time / batchsolve time, the
merging of tester JSON files and the summary, on synthetic files (always), and on the committed
2026-11-26 H100 run, whose ratios issue 29 quotes (skipped with a message where ../shared is absent)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(HERE, "compare.py")
PEERS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "tools", "peers", "cusolverdx"))


def run(*args):
    out = subprocess.run([sys.executable, COMPARE, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"compare.py {' '.join(args)}: rc {out.returncode}\n{out.stdout}\n{out.stderr}")
    return out.stdout


def write_json(path, data):
    with open(path, "w") as f:
        json.dump(data, f)


def tester_row(routine, prec, n, ms, kernel, cusolver_ms=None):
    row = {"layout": "column_major", "status": "ok", "routine": routine, "precision": prec, "n": n, "batch": 16384,
           "time_ms": ms, "gflops": 1.0 / ms, "roofline": 0.1, "kernel": {"name": kernel}}
    if cusolver_ms:
        row["refs"] = {"cusolver": {"ran": True, "time_ms": cusolver_ms, "gflops": 0.5}}
    return row


class Synthetic(unittest.TestCase):
    def test_ratios_merging_and_summary(self):
        with tempfile.TemporaryDirectory() as d:
            dx = os.path.join(d, "dx.csv")
            with open(dx, "w") as f:
                f.write("# device: Test GPU, sm_90\nimpl,precision,n,batch,routine,ms,GFLOP/s,roofline_fraction,err\n"
                        "cusolverdx,float,32,16384,potrf,0.060,100,0.5,0.1\n"
                        "cusolver,float,32,16384,potrf,0.300,20,0.1,0.1\n"
                        "cusolverdx,float,128,16384,potrf,1.000,100,0.25,0.1\n")
            header = {"gpu": {"name": "Test GPU"}, "git_commit": "abc1234", "date": "2026-11-27T05:00:00Z"}
            new1, new2, old = (os.path.join(d, f) for f in ("new1.json", "new2.json", "old.json"))
            write_json(new1, {"header": header, "rows": [tester_row("potrf", "s", 32, 0.040, "smem", 0.31)]})
            write_json(new2, {"header": header, "rows": [tester_row("potrf", "s", 128, 2.000, "smem")]})
            write_json(old, {"header": header, "rows": [tester_row("potrf", "s", 32, 0.120, "reg"),
                                                        tester_row("potrf", "s", 128, 0.800, "staged")]})
            md = os.path.join(d, "out.md")
            out = run("--cusolverdx", dx, "--new", new1, new2, os.path.join(d, "missing.json"), "--old", old,
                      "--markdown", md)
            self.assertIn("Test GPU, batchsolve abc1234, 2026-11-27T05:00:00Z", out)
            # 0.060 / 0.040 = 1.50 and 0.060 / 0.120 = 0.50; 1.0 / 2.0 = 0.50 and 1.0 / 0.8 = 1.25
            self.assertIn("- potrf s 16384 (shared_memory/committed): 32: 1.50/0.50, 128: 0.50/1.25", out)
            self.assertIn("- shared_memory: 1/2 cases >= 1.2x cuSolverDx, 1/2 >= 1.0x", out)
            self.assertIn("- committed: 1/2 cases >= 1.2x cuSolverDx, 1/2 >= 1.0x", out)
            self.assertIn("**0.50**", out)  # below the target: bold
            with open(md) as f:
                self.assertEqual(f.read().strip(), out.strip())


    def test_failed_rows_are_refused(self):
        # A failed tester row (here twice as fast as cuSolverDx) must enter no ratio and no summary,
        # be listed with its note, and make compare.py exit 1; the ok row's ratio stays.
        with tempfile.TemporaryDirectory() as d:
            dx = os.path.join(d, "dx.csv")
            with open(dx, "w") as f:
                f.write("impl,precision,n,batch,routine,ms,GFLOP/s,roofline_fraction,err\n"
                        "cusolverdx,float,32,16384,potrf,0.060,100,0.5,0.1\n"
                        "cusolverdx,float,64,16384,potrf,0.100,100,0.5,0.1\n"
                        "cusolverdx,float,128,16384,potrf,nan,100,0.5,0.1\n")
            bad = tester_row("potrf", "s", 64, 0.050, "smem")
            bad["status"], bad["note"] = "failed", "3 matrices: backward error 2.1e+03 n eps"
            new = os.path.join(d, "new.json")
            write_json(new, {"header": {}, "rows": [tester_row("potrf", "s", 32, 0.040, "smem"), bad,
                                                    tester_row("potrf", "s", 128, 1.0, "smem")]})
            out = subprocess.run([sys.executable, COMPARE, "--cusolverdx", dx, "--new", new], capture_output=True, text=True)
            self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
            self.assertIn("- potrf s 16384 (shared_memory): 32: 1.50", out.stdout)
            self.assertNotIn("64: ", out.stdout.split("## Summary")[1].split("## Refused")[0])
            self.assertIn("- shared_memory: 1/1 cases >= 1.2x cuSolverDx", out.stdout)
            self.assertIn("shared_memory potrf s n = 64 batch 16384: 3 matrices: backward error", out.stdout)
            self.assertIn("cusolverdx potrf s n = 128 batch 16384: time nan", out.stdout)
            self.assertIn("2 rows refused: failed checks or no valid time", out.stderr)


class CommittedH100(unittest.TestCase):
    def test_reproduces_the_issue_table(self):
        folder = os.path.join(PEERS, "h100-2026-11-26")
        if not os.path.isdir(folder):
            self.skipTest(f"{folder} absent")
        out = run("--cusolverdx", os.path.join(folder, "cusolverdx.csv"),
                  "--batchsolve-csv", os.path.join(folder, "batchsolve-0bce3cd-same-call.csv"))
        # issue 29's table: potrf s batch 16384, column-major 0.92 0.83 0.59 0.46 0.83 0.52 and
        # interleaved 1.14 1.22 1.26 0.83 1.04 0.61; posv d column-major 0.94 0.83 0.90 2.24 3.34 3.85
        self.assertIn("- potrf s 16384 (column_major/interleaved): 8: 0.92/1.14, 16: 0.83/1.22, 32: 0.59/1.26, "
                      "64: 0.46/0.83, 100: 0.83/1.04, 128: 0.52/0.61", out)
        self.assertIn("- posv d 16384 (column_major/interleaved): 8: 0.94/1.24, 16: 0.83/1.74, 32: 0.90/1.33, "
                      "64: 2.24/2.26, 100: 3.34/2.79, 128: 3.85/3.19", out)
        self.assertIn("NVIDIA H100 80GB HBM3, batchsolve 0bce3cd, 2026-11-26", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
