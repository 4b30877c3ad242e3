#!/usr/bin/env python3
"""Files a run of scripts/gpu/dvc.sh as a results folder: copies its files and writes README.md (the
targets as dvc.sh's targets.json has them, the designs side by side (designs.md), design A beside
each other design phase by phase, the per-run table) and manifest.json.

    apps/dic_volume/scripts/make_e2e_results.py GPU_OUT_DIR results/YYYY-MM-DD-h200-COMMIT-dvc-end-to-end [--note TEXT]
GPU_OUT_DIR holds what scripts/gpu/dvc.sh wrote as $OUT/dvc (runs.json, timeline-*.json, targets.json, ...).
"""
import argparse
import json
import os
import shutil
import statistics

# Phases of a run from its timeline events (seconds since the process started): name, from, to.
PHASES = [
    ("before main (loading the libraries)", None, "main_entered"),
    ("options and output checks", "main_entered", "outputs_checked"),
    ("reading (A: opening) the volumes", "outputs_checked", "volumes_read"),
    ("truth file, checks", "volumes_read", "truth_and_checks_done"),
    ("waiting for the GPU context", "truth_and_checks_done", "gpu_context_waited"),
    ("backend context", "gpu_context_waited", "backend_context_created"),
    ("engine: allocation", "backend_context_created", "engine_allocated"),
    ("engine: upload (A: file to GPU)", "engine_allocated", "engine_uploaded"),
    ("engine: smoothing, prefilters, gradients", "engine_uploaded", "engine_prepared"),
    ("FFT guess and IC-GN", "engine_prepared", "correlation_done"),
    ("field strain", "correlation_done", "strain_done"),
    ("HDF5 results: built", "strain_done", "results_file_built"),
    ("HDF5 results: written and synced", "results_file_built", "results_written"),
    ("summary and timeline files", "results_written", "other_outputs_written"),
    ("freeing (B)", "other_outputs_written", "main_returned"),
]

DESCRIPTIONS = [
    ("runs.csv", "every run as it ended (size, run, design, wall, exit code)"),
    ("runs.json", "every run, one row each, with its timeline"),
    ("table.md", "per-run table (Markdown)"),
    ("phases.md", "per-run timeline events (Markdown)"),
    ("targets.json", "target, measured, met: written by scripts/gpu/dvc.sh from the runs"),
    ("summary-*.json", "dvc correlate --summary-json of one run (size, run number)"),
    ("timeline-*.json", "dvc correlate --timeline of one run (size, run number)"),
    ("correlate-*.txt", "dvc correlate console of one run"),
    ("generate-*.txt", "dvc generate console of one pair"),
    ("tests.txt", "GPU tests (test_dic_volume Gpu.*)"),
    ("designs.md", "medians of the warm runs of each (size, design): wall, dvc total, IC-GN, write, RMSE"),
    ("floor.csv", "the bare CUDA process (cuda_start_floor): variant, repetition, wall, its phases"),
    ("start.txt", "dvc --help: wall of 3 runs, then the dynamic loader's statistics (LD_DEBUG=statistics)"),
    ("skipped.txt", "steps the budget left out"),
    ("commit.txt", "the commit dvc.sh saw"),
    ("gpu.txt", "nvidia-smi's name of the GPU"),
    ("console.log", "the script's console"),
    ("README.md", "what was measured, the targets, the designs side by side"),
    ("manifest.json", "this manifest"),
]


def phase_times(ev, wall):
    out = {}
    for name, a, b in PHASES:
        if b in ev and (a is None or a in ev):
            out[name] = ev[b] - (ev[a] if a else 0.0)
    if ev:
        out["after the last event (exit)"] = wall - max(ev.values())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--note", default="")
    ap.add_argument("--commit", help="the bundle's commit (default: runs.json's)")
    a = ap.parse_args()
    runs = json.load(open(os.path.join(a.src, "runs.json")))
    commit = a.commit or runs["commit"]
    os.makedirs(a.dst, exist_ok=True)
    for name in sorted(os.listdir(a.src)):
        if name.endswith((".json", ".csv", ".md", ".txt", ".log")) and name != "README.md":
            shutil.copy(os.path.join(a.src, name), os.path.join(a.dst, name))
    rows = runs["runs"]
    targets = json.load(open(os.path.join(a.src, "targets.json")))
    lines = [f"# dvc end to end on one GPU ({runs['gpu']}, commit {commit})", "",
             "`scripts/gpu/dvc.sh` within its budget: a 192³ float32 raw pair (`dvc generate --raw-only`: translation 0.37, −0.21, "
             "0.55 voxels, strain 0.002, −0.001, 0.003, degree-5 resampling) and a 512³ pair related by a whole-voxel translation "
             "(3, −2, 1; an exact shift, so that it could be made within the budget: its RMSE is not the sub-voxel target's), "
             "`dvc correlate --backend cuda` with default settings (subset 32, spacing 8, pre-smoothing 1, the O-MOMS interpolant, seeded pyramid FFT start, "
             "the HDF5 result written directly, the launcher starting the GPU context before it loads the program). "
             "Process wall time by the script; dvc's split from `--summary-json`; each phase from `--timeline` (seconds since the process "
             "started, /proc/self/stat, 10 ms resolution). Run 1 of 192³ fills the kernel cache.", "",
             "Designs, alternated in the same call (scripts/gpu/dvc.sh's header names them): **A** is the default; "
             "L `dvc_linked` (the same program as one executable: every library loaded before main, the context started after them), "
             "W `--results-writer image` (the HDF5 result built in memory, copied out and written at the end: the writer before), "
             "N `DVC_PLAN_AHEAD=0` (the FFT guess makes its cuFFT plans when it needs them, not beside the upload), "
             "C the results file on tmpfs, I<x> `--interpolation x`, P<s> `--presmooth s`. The targets use A only.", "", "## Targets", "",
             "| target | measured | met | basis |", "|---|---|---|---|"]
    for t in targets:
        m = t["measured"]
        lines.append(f"| {t['target']} | {'-' if m is None else format(m, '.4g')} | "
                     f"{'-' if t['met'] is None else ('met' if t['met'] else '**missed**')} | {t['basis']} |")
    designs_md = os.path.join(a.src, "designs.md")
    if os.path.exists(designs_md):
        lines += ["", "## Designs side by side", "", open(designs_md).read().split("\n", 2)[2]]
    lines += ["", "## A beside each other design, phase by phase (medians of the warm runs, seconds)", ""]
    sizes = sorted({r["size"] for r in rows})
    for n in sizes:
        groups = {}
        for d in ["A"] + sorted({r["design"] for r in rows if r["size"] == n} - {"A"}):
            g = [r for r in rows if r["size"] == n and r["design"] == d and r["rc"] == 0 and not (n == min(sizes) and r["run"] == 1)]
            if g:
                groups[d] = g
        if not groups:
            continue
        names = [p[0] for p in PHASES] + ["after the last event (exit)"]
        lines += [f"### {n}³ ({', '.join(f'{d}: {len(g)} run(s)' for d, g in groups.items())})", "",
                  "| phase | " + " | ".join(groups) + " |", "|---|" + "---|" * len(groups)]
        med = {}
        for d, g in groups.items():
            per = [phase_times(r["timeline"], r["wall_s"]) for r in g]
            med[d] = {k: statistics.median([p[k] for p in per if k in p]) for k in names if any(k in p for p in per)}
            med[d]["process wall"] = statistics.median(r["wall_s"] for r in g)
            e2e = [r["end_to_end_s"] for r in g if r["end_to_end_s"] is not None]
            if e2e:
                med[d]["dvc end to end (its own total)"] = statistics.median(e2e)
        for k in names + ["dvc end to end (its own total)", "process wall"]:
            vals = [med[d].get(k) for d in groups]
            if all(v is None for v in vals):
                continue
            cells = " | ".join("-" if v is None else f"{v:.3f}" for v in vals)
            diff = ""
            bold = "**" if k == "process wall" else ""
            lines.append(f"| {bold}{k}{bold} | {cells}{diff} |")
        lines.append("")
    tests = os.path.join(a.src, "tests.txt")
    if os.path.exists(tests):
        summary = [l.strip() for l in open(tests) if l.startswith(("[  PASSED", "[  FAILED", "[  SKIPPED", "test_dic_volume"))]
        lines += ["## GPU tests", "", "`tests.txt`: " + "; ".join(summary), ""]
    skipped = os.path.join(a.src, "skipped.txt")
    if os.path.exists(skipped):
        lines += ["## Left out by the budget", ""] + [f"- {l.strip()}" for l in open(skipped) if l.strip()] + [""]
    lines += ["## Every run", "", open(os.path.join(a.src, "table.md")).read().split("\n", 4)[4]]
    if a.note:
        lines += ["", a.note]
    open(os.path.join(a.dst, "README.md"), "w").write("\n".join(lines) + "\n")
    present = set(os.listdir(a.dst)) | {"README.md", "manifest.json"}
    import fnmatch
    files = {p: d for p, d in DESCRIPTIONS if any(fnmatch.fnmatch(f, p) for f in present)}
    manifest = {"date": runs.get("date", "2026-12-02"), "gpu": runs["gpu"], "commit": commit, "cuda": "13.0",
                "topic": "dvc correlate end to end on one H200 (scripts/gpu/dvc.sh): 192^3 sub-voxel pair and 512^3 whole-voxel pair, "
                         "the default (A) beside the other designs of the run, with process timelines",
                "command": ["bash scripts/gpu/dvc.sh"], "files": files, "figures": [], "formerly": ""}
    if a.note:
        manifest["note"] = a.note
    json.dump(manifest, open(os.path.join(a.dst, "manifest.json"), "w"), indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
