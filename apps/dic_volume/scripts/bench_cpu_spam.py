#!/usr/bin/env python3
"""CPU speed of dvc's IC-GN beside spam's local DIC on the same synthetic pair and the same points
(this machine; the GPU machine cannot carry spam): points per second and displacement error.

    apps/dic_volume/scripts/bench_cpu_spam.py --dvc build/apps/dic_volume/dvc --out apps/dic_volume/results
Writes DIR/bench_cpu_spam.{json,md}.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import tempfile
import time

import h5py
import numpy as np

from accuracy import spam_run, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dvc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--subset", type=int, default=33, help="odd: spam's windows are 2 hws + 1")
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--processes", type=int, default=2)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="dvc_bench_spam_")
    pair, res, summ = (os.path.join(work, n) for n in ("pair.h5", "res.h5", "summary.json"))
    subprocess.run([args.dvc, "generate", "-o", pair, "--size", str(args.size), "--translation", "0.4,-0.3,0.2", "--strain", "0.01"],
                   check=True, capture_output=True)
    rows = []
    for order, interp in ((3, "cubic"), (1, "trilinear")):
        t0 = time.time()
        subprocess.run([args.dvc, "correlate", "--pair", pair, "-o", res, "--force", "-q", "--subset", str(args.subset), "--spacing", "8",
                        "--interpolation", interp, "--backend", "cpu", "--max-points", str(args.points), "--summary-json", summ], check=True)
        wall = time.time() - t0
        s = json.load(open(summ))
        with h5py.File(res) as f:
            centres, disp, truth, status = (f[k][:] for k in ("/points/centre", "/points/displacement", "/truth/displacement", "/points/status"))
        ours = errors(disp, truth, status == 0)
        n = len(status)
        ours.update({"points": n, "icgn_points_per_s": n / s["timings_s"]["icgn"], "end_to_end_points_per_s": n / wall,
                     "converged_fraction": float((status == 0).mean())})
        sp = spam_run(pair, centres, args.subset, order, args.processes)
        spam = errors(sp["disp"], truth, sp["converged"])
        spam.update({"points": n, "points_per_s": n / sp["wall_s"], "converged_fraction": float(sp["converged"].mean())})
        rows.append({"interpolation": interp, "spam_order": order, "ours": ours, "spam": spam})
        print(f"{interp}: ours {ours['icgn_points_per_s']:.1f} pts/s (IC-GN), {ours['end_to_end_points_per_s']:.1f} end to end, RMSE {ours['rmse']:.2e}; "
              f"spam order {order}: {spam['points_per_s']:.2f} pts/s, RMSE {spam.get('rmse', float('nan')):.2e}", flush=True)
    commit = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    prov = {"machine": f"{platform.node()} ({os.cpu_count()} cores, shared)", "commit": commit,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    out = {"volume": args.size, "subset": args.subset, "points": args.points, "processes": args.processes, "rows": rows, "provenance": prov}
    os.makedirs(args.out, exist_ok=True)
    json.dump(out, open(os.path.join(args.out, "bench_cpu_spam.json"), "w"), indent=1)
    L = [f"# dvc vs spam on the CPU: {args.size}³ pair (translation 0.4,-0.3,0.2 + 1 % strain), subset {args.subset}³, {args.points} points", "",
         f"Machine {prov['machine']}, commit {prov['commit']}, {prov['date']}. Both on 2 processes/threads of a machine shared with other jobs:",
         "the ratio matters, not the absolute rates. ours: IC-GN stage (Hessians, factorisation, iterations) and end to end (read, prefilter,",
         "FFT guesses, IC-GN, write); spam: `spam.DIC.ldic` (no start guess needed: the shift is sub-voxel), deltaPhiMin 1e-4.", "",
         "| interpolation | ours IC-GN pts/s | ours end-to-end pts/s | ours RMSE | spam pts/s | spam RMSE | ours IC-GN / spam |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        o, s = r["ours"], r["spam"]
        L.append(f"| {r['interpolation']} (spam order {r['spam_order']}) | {o['icgn_points_per_s']:.1f} | {o['end_to_end_points_per_s']:.1f} | "
                 f"{o['rmse']:.2e} | {s['points_per_s']:.2f} | {s.get('rmse', float('nan')):.2e} | {o['icgn_points_per_s'] / s['points_per_s']:.0f}× |")
    open(os.path.join(args.out, "bench_cpu_spam.md"), "w").write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()
