#!/usr/bin/env python3
"""Files a run of scripts/gpu/dvc.sh as a results folder: copies its JSON/CSV/text files and writes
README.md (the table, the targets against the warm runs) and manifest.json.

    apps/dic_volume/scripts/make_e2e_results.py GPU_OUT_DIR results/2026-12-02-h200-COMMIT-dvc-end-to-end
GPU_OUT_DIR holds runs.json (the folder scripts/gpu/dvc.sh wrote as $OUT/dvc).
"""
import json
import os
import shutil
import statistics
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    runs = json.load(open(os.path.join(src, "runs.json")))
    os.makedirs(dst, exist_ok=True)
    files = {}
    for name in sorted(os.listdir(src)):
        if name.endswith((".json", ".csv", ".md", ".txt", ".log")):
            shutil.copy(os.path.join(src, name), os.path.join(dst, name))
            files[name] = ("per-run table (Markdown)" if name == "table.md" else "every run, one row each" if name.startswith("runs.") else
                           "dvc correlate --summary-json of one run (size, run number)" if name.startswith("summary-") else
                           "dvc correlate console of one run" if name.startswith("correlate-") else
                           "GPU tests (test_dvc_stages, test_dic_volume Gpu.*)" if name == "tests.txt" else "console")
    rows = runs["runs"]
    # Warm runs: every run after the first of a size (the first fills the kernel cache).
    lines = []
    targets = {192: 0.4, 512: 1.5}
    for size in sorted({r["size"] for r in rows}):
        of = [r for r in rows if r["size"] == size and r["rc"] == 0]
        warm = [r for r in of if r["run"] > 1] or of
        if not warm:
            lines.append(f"- {size}³: no successful run")
            continue
        wall = statistics.median(r["wall_s"] for r in warm)
        own = statistics.median(r["correlate_s"] for r in warm if r["correlate_s"] is not None)
        e2e = statistics.median(r["end_to_end_s"] for r in warm if r["end_to_end_s"] is not None)
        rmse = [r["rmse"] for r in warm if r["rmse"] is not None]
        t = targets.get(size)
        verdict = "" if t is None else f" (target ≤ {t} s: {'met' if wall <= t else 'MISSED'})"
        own_verdict = " (target ≤ 1.0 s: " + ("met" if own <= 1.0 else "MISSED") + ")" if size == 512 else ""
        lines.append(f"- {size}³, {warm[0]['points']} points, median of {len(warm)} warm run(s): process wall {wall:.3f} s{verdict}, "
                     f"dvc end to end {e2e:.3f} s, dvc's correlation {own:.3f} s{own_verdict}, "
                     f"{warm[0]['points'] / wall:,.0f} points/s by the wall, RMSE {max(rmse):.2e} voxels" if rmse else
                     f"- {size}³, {warm[0]['points']} points: process wall {wall:.3f} s{verdict}, dvc end to end {e2e:.3f} s")
    table = open(os.path.join(src, "table.md")).read()
    readme = (f"# dvc end to end on one GPU ({runs['gpu']}, commit {runs['commit']})\n\n"
              "`scripts/gpu/dvc.sh`: float32 raw pairs written by `dvc generate --raw` (translation 0.37, −0.21, 0.55 voxels, strain "
              "0.002, −0.001, 0.003, degree-5 resampling), `dvc correlate --backend cuda` with default settings (subset 32, spacing 8, "
              "pre-smoothing 1.5, cubic, seeded pyramid FFT start), each three times; run 1 fills the kernel cache. Process wall time by "
              "the script; dvc's split from its `--summary-json` (read, correlate, strain, write; the remainder of its end-to-end total is "
              "the backend's start); GPU memory: dvc's own allocations and nvidia-smi's peak in use (sampled every 50 ms).\n\n"
              + "\n".join(lines) + "\n\n" + table.split("\n", 2)[2] + "\n")
    open(os.path.join(dst, "README.md"), "w").write(readme)
    manifest = {"date": "2026-12-02", "gpu": runs["gpu"], "commit": runs["commit"], "topic": "dvc end to end on the GPU (every stage on the device)",
                "command": ["bash scripts/gpu/dvc.sh"], "files": files, "figures": ["runs.json"],
                "note": "One team device call; raw files from the page cache (written just before by dvc generate)."}
    json.dump(manifest, open(os.path.join(dst, "manifest.json"), "w"), indent=1)
    print(readme)


if __name__ == "__main__":
    main()
