#!/usr/bin/env python3
"""dvc's IC-GN beside spam's local DIC (spam.DIC.ldic) on the same synthetic pair and the same points:
points per second and displacement error, for each dvc backend asked for.

    apps/dic_volume/scripts/bench_spam.py --dvc build/apps/dic_volume/dvc --out DIR [--pair pair.h5] [--backends cpu,cuda]
Writes DIR/bench_spam.{json,md}. Without --pair it generates one (--size, translation 0.4,-0.3,0.2 + 1 % strain).
The subset is odd (spam's windows are 2 hws + 1 voxels); a few hundred points: enough for the rate and the error.
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
    ap.add_argument("--pair", help="an existing pair from dvc generate")
    ap.add_argument("--backends", default="cpu", help="dvc backends, comma-separated (cpu, cuda)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="dvc_bench_spam_")
    pair, res, summ = (os.path.join(work, n) for n in ("pair.h5", "res.h5", "summary.json"))
    if args.pair:
        pair = args.pair
    else:
        subprocess.run([args.dvc, "generate", "-o", pair, "--size", str(args.size), "--translation", "0.4,-0.3,0.2", "--strain", "0.01"],
                       check=True, capture_output=True)
    with h5py.File(pair) as f:
        size = int(f["/reference"].shape[0])
    rows = []
    for order, interp in ((3, "cubic"), (1, "trilinear")):
        row = {"interpolation": interp, "spam_order": order}
        for backend in args.backends.split(","):
            t0 = time.time()
            subprocess.run([args.dvc, "correlate", "--pair", pair, "-o", res, "--force", "-q", "--subset", str(args.subset), "--spacing", "8",
                            "--interpolation", interp, "--backend", backend, "--max-points", str(args.points), "--summary-json", summ], check=True)
            wall = time.time() - t0
            s = json.load(open(summ))
            with h5py.File(res) as f:
                centres, disp, truth, status = (f[k][:] for k in ("/points/centre", "/points/displacement", "/truth/displacement", "/points/status"))
            ours = errors(disp, truth, status == 0)
            n = len(status)
            ours.update({"points": n, "icgn_points_per_s": n / s["timings_s"]["icgn"], "end_to_end_points_per_s": n / wall,
                         "converged_fraction": float((status == 0).mean())})
            row["ours_" + backend] = ours
            print(f"{interp} {backend}: ours {ours['icgn_points_per_s']:.1f} pts/s (IC-GN), {ours['end_to_end_points_per_s']:.1f} end to end, "
                  f"RMSE {ours.get('rmse', float('nan')):.2e}", flush=True)
        sp = spam_run(pair, centres, args.subset, order, args.processes)
        spam = errors(sp["disp"], truth, sp["converged"])
        spam.update({"points": n, "points_per_s": n / sp["wall_s"], "converged_fraction": float(sp["converged"].mean())})
        row["spam"] = spam
        rows.append(row)
        print(f"spam order {order}: {spam['points_per_s']:.2f} pts/s on {args.processes} processes, RMSE {spam.get('rmse', float('nan')):.2e}", flush=True)
    commit = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    prov = {"machine": f"{platform.node()} ({os.cpu_count()} cores)", "commit": commit,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    out = {"volume": size, "subset": args.subset, "points": args.points, "processes": args.processes, "rows": rows, "provenance": prov}
    os.makedirs(args.out, exist_ok=True)
    json.dump(out, open(os.path.join(args.out, "bench_spam.json"), "w"), indent=1)
    backends = args.backends.split(",")
    L = [f"# dvc beside spam: {size}³ pair (translation 0.4,-0.3,0.2 + 1 % strain), subset {args.subset}³, {args.points} spread points", "",
         f"Machine {prov['machine']}, commit {prov['commit']}, {prov['date']}. spam: `spam.DIC.ldic` on {args.processes} processes",
         "(no start guess needed: the motion is sub-voxel near the centre), deltaPhiMin 1e-4. dvc: IC-GN stage (Hessians, factorisation,",
         "iterations; a few hundred points do not fill a GPU) and end to end (read, prefilter, FFT guesses, IC-GN, write) of one",
         "`dvc correlate --max-points` process.", "",
         "| interpolation | " + " | ".join(f"dvc {b} IC-GN pts/s | dvc {b} end-to-end pts/s | dvc {b} RMSE" for b in backends)
         + " | spam pts/s | spam RMSE | spam converged |",
         "|---|" + "---|---|---|" * len(backends) + "---|---|---|"]
    for r in rows:
        cells = []
        for b in backends:
            o = r["ours_" + b]
            cells.append(f"{o['icgn_points_per_s']:.1f} | {o['end_to_end_points_per_s']:.1f} | {o.get('rmse', float('nan')):.2e}")
        s_ = r["spam"]
        L.append(f"| {r['interpolation']} (spam order {r['spam_order']}) | " + " | ".join(cells)
                 + f" | {s_['points_per_s']:.2f} | {s_.get('rmse', float('nan')):.2e} | {s_['converged_fraction']:.3f} |")
    open(os.path.join(args.out, "bench_spam.md"), "w").write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()
