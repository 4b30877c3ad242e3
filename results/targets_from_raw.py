#!/usr/bin/env python3
"""Writes a run folder's targets.json (target, measured, met) from the raw files a GPU script
brought back, so that no figure of it is typed by hand.

    results/targets_from_raw.py bem|dvc|als|tester-fold RAW_DIR results/FOLDER

RAW_DIR: the folder the script wrote ($OUT/<topic>/...): bem: bem/summary.csv (scripts/gpu/bem-scale.sh);
dvc: runs.json and summary-<size>-<run>.json (scripts/gpu/dvc.sh); als: summary.csv (scripts/gpu/als.sh);
tester-fold: fold.md (scripts/gpu/tester-fold.sh). The targets are the issues' (apps' READMEs).
"""
import csv
import json
import os
import statistics
import sys

GIB_TO_GB = 1024 ** 3 / 1e9


def row(target, measured, met, basis):
    return {"target": target, "measured": measured, "met": bool(met), "basis": basis}


def bem(raw):
    rows = {r["case"]: r for r in csv.DictReader(open(os.path.join(raw, "bem", "summary.csv")))}
    out = []
    for case, r in rows.items():
        wall = float(r["wall_s"])
        limit = 5.0 if r["formulation"].endswith("p1") else 20.0
        out.append(row(f"{case} (n = {r['n']}) wall <= {limit:g} s", wall, wall <= limit and r["rc"] == "0", "process wall, summary.csv wall_s"))
    host = max(float(r["peak_host_gib"]) for r in rows.values()) * GIB_TO_GB
    out.append(row("peak host memory <= 4 GB", round(host, 3), host <= 4.0, "largest maxrss of the runs, GB"))
    for case, r in rows.items():
        if r["formulation"].endswith("p1"):
            rate = float(r["element_pairs_per_s"])
            out.append(row(f"{case} P1 assembly >= 1.5e9 element pairs/s", rate, rate >= 1.5e9, "assembly kernels"))
    return out


def dvc(raw):
    runs = json.load(open(os.path.join(raw, "runs.json")))["runs"]
    out = []
    for size, limit in ((192, 0.4), (512, 1.5)):
        warm = [r for r in runs if r["size"] == size and r["rc"] == 0 and r["run"] > 1]
        if not warm:
            continue
        wall = statistics.median(r["wall_s"] for r in warm)
        out.append(row(f"{size}^3 process wall <= {limit} s (warm)", wall, wall <= limit, f"median of {len(warm)} warm run(s)"))
        summ = [json.load(open(os.path.join(raw, f"summary-{size}-{r['run']}.json"))) for r in warm]
        if size == 512:
            e2e = statistics.median(s["end_to_end_s"]["total"] for s in summ)
            out.append(row("512^3 dvc total (end_to_end_s.total) <= 1.0 s (warm)", e2e, e2e <= 1.0, "dvc --summary-json: read + correlate + strain + write + backend start"))
            cor = statistics.median(s["end_to_end_s"]["correlate"] for s in summ)
            out.append(row("512^3 dvc correlation (end_to_end_s.correlate) <= 1.0 s (warm)", cor, cor <= 1.0, "the same target read as the correlation alone"))
        rmse = max(s["rmse"] for s in summ)
        out.append(row(f"{size}^3 RMSE <= 1.5e-4 voxels", rmse, rmse <= 1.5e-4, "largest of the warm runs"))
    return out


def als(raw):
    rows = {r["case"]: r for r in csv.DictReader(open(os.path.join(raw, "summary.csv")))}
    out = []
    for case, limit in (("k64-warm", 1.5), ("k64-cold", 3.0)):
        w = float(rows[case]["wall_s"])
        out.append(row(f"{case} time to model (process wall) <= {limit} s", w, w <= limit and rows[case]["rc"] == "0", "wall_s: the process, date to date"))
    for case, limit in (("k64-warm", 0.03), ("k128", 0.06)):
        it = round(float(rows[case]["iter_build_s"]) + float(rows[case]["iter_solve_s"]), 4)
        out.append(row(f"{case} per iteration <= {limit} s", it, it <= limit, "build + solve, mean of iterations 2-5"))
    return out


def tester_fold(raw):
    lines = [l for l in open(os.path.join(raw, "fold.md")) if l.startswith("| ") and not l.startswith("| bench")]
    within = sum(1 for l in lines if l.rstrip().rstrip("|").strip().endswith("yes"))
    return [row("every folded figure within 5% of the old bench", f"{within} of {len(lines)}", within == len(lines), "fold.md")]


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("bem", "dvc", "als", "tester-fold"):
        sys.exit(__doc__)
    topic, raw, dst = sys.argv[1:]
    out = {"bem": bem, "dvc": dvc, "als": als, "tester-fold": tester_fold}[topic](raw)
    json.dump(out, open(os.path.join(dst, "targets.json"), "w"), indent=1)
    for r in out:
        print(f"{r['target']}: {r['measured']} ({'met' if r['met'] else 'MISSED'})")


if __name__ == "__main__":
    main()
