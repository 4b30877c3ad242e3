#!/usr/bin/env bash
# dvc on the GPU machine (run by the lead from the repository root, bundle at /tmp/bundle):
#   1. the GPU tests (GPU engine against the CPU engine, known fields),
#   2. dvc bench: 512^3 synthetic pair, spacing 8, subsets 16, 32, 48 on the GPU (every point) and
#      the CPU (an evenly spread subset of points), time split, GPU memory, error against the truth,
#   3. spam beside it when it imports there (its wheels are too large to carry: see README).
# Results under $OUT/dvc/: bench.json, bench.md, tests.txt. About 4-6 minutes on an H100.
set -uo pipefail
out=${OUT:?OUT must name the results folder}/dvc
mkdir -p "$out"
R=${DVC_BUNDLE_RUN:-/tmp/bundle/run}
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
date_utc=$(date -u +"%Y-%m-%d %H:%M UTC")

echo "== dvc GPU tests"
timeout 240 "$R" test_dic_volume --gtest_brief=1 2>&1 | tee "$out/tests.txt" | tail -15
tests_rc=${PIPESTATUS[0]}

echo "== dvc bench 512^3 (GPU: all points; CPU: ${DVC_CPU_POINTS:-2000} spread points)"
timeout 420 "$R" dvc bench --size 512 --subsets 16,32,48 --spacing 8 --cpu-points "${DVC_CPU_POINTS:-2000}" \
    --json "$out/bench.json" -q 2>&1 | tee "$out/bench.txt" | tail -12
bench_rc=${PIPESTATUS[0]}

python3 - "$out" "$gpu" "$commit" "$date_utc" <<'PY'
import json, sys
out, gpu, commit, date = sys.argv[1:5]
try:
    b = json.load(open(f"{out}/bench.json"))
except Exception as e:
    print(f"dvc summary: no bench.json ({e})"); sys.exit(0)
rows = ["| subset | backend | device | points | IC-GN points/s | FFT guess s | Hessian s | factor s | interpolation s | solve s | update s | converged | RMSE (voxel) | GPU MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for r in b["runs"]:
    t = r["timings_s"]
    rows.append(f"| {r['subset']} | {r['backend']} | {r['device']} | {r['points']} | {r['icgn_points_per_s']:.0f} | {t['fft_guess']:.3f} | "
                f"{t['hessian']:.3f} | {t['factor']:.3f} | {t['interpolation']:.3f} | {t['solve']:.3f} | {t['update']:.3f} | "
                f"{r['status']['converged'] / max(r['points'], 1):.4f} | {r.get('rmse', float('nan')):.2e} | {r['device_bytes'] / 2**20:.0f} |")
text = (f"# dvc bench: {b['volume']} pair ({b['field']}), spacing {b['spacing']}, {b['interpolation']}, guess {b['guess']}\n\n"
        f"GPU {gpu}, commit {commit}, {date}. IC-GN points/s = points / (Hessian + factor + interpolation + solve + update).\n\n"
        + "\n".join(rows) + "\n")
open(f"{out}/bench.md", "w").write(text)
print(text)
gpu32 = [r for r in b["runs"] if r["backend"] == "cuda" and r["subset"] == 32]
cpu32 = [r for r in b["runs"] if r["backend"] == "cpu" and r["subset"] == 32]
if gpu32:
    g = gpu32[0]["icgn_points_per_s"]
    ratio = f", {g / cpu32[0]['icgn_points_per_s']:.0f}x the CPU" if cpu32 else ""
    print(f"dvc summary: subset 32 IC-GN {g:.0f} points/s on the GPU (target 150000: {'met' if g >= 150000 else 'MISSED'}){ratio}")
PY
echo "dvc summary: tests rc=$tests_rc bench rc=$bench_rc; files in $out"
