#!/usr/bin/env bash
# dvc on the GPU machine (run by the lead from the repository root, bundle at /tmp/bundle, $OUT set):
#   1. the dvc tests (GPU engine against the CPU engine on known fields; the CPU tests too),
#   2. dvc bench on a 512^3 synthetic pair (translation 0.4,-0.3,0.2 + 1 % strain), spacing 8,
#      subsets 16, 32, 48: the GPU on every grid point, the CPU on 2000 spread points; time split,
#      GPU memory, error against the truth,
#   3. spam's local DIC beside dvc on 512 points of the same pair (subset 33; spam's wheels from
#      .whl-dvc/, SimpleITK and gmsh replaced by the stand-ins of scripts/spam_stubs/).
# Results under $OUT/dvc/: bench.{json,md,txt}, bench_spam.{json,md}, tests.txt. About 5-7 minutes.
# Knobs for shorter runs: DVC_TEST_FILTER (gtest filter), DVC_SUBSETS (16,32,48), DVC_CPU_POINTS (2000),
# DVC_BENCH_SIZE (512), DVC_SPAM (1; 0 skips spam), DVC_SPAM_BACKENDS (cuda,cpu); DVC_BUNDLE_RUN replaces /tmp/bundle/run (tests of the script).
set -uo pipefail
out=${OUT:?OUT must name the results folder}/dvc
mkdir -p "$out"
R=${DVC_BUNDLE_RUN:-/tmp/bundle/run}
here=$(cd "$(dirname "$0")" && pwd)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
date_utc=$(date -u +"%Y-%m-%d %H:%M UTC")
work=$(mktemp -d /tmp/dvc_gpu_XXXXXX)
dvc_exe=$work/dvc
# bench_spam.py calls dvc as one program: a two-line wrapper around the bundle's runner.
printf '#!/usr/bin/env bash\nexec %q dvc "$@"\n' "$R" > "$dvc_exe" && chmod +x "$dvc_exe"

echo "== dvc tests"
timeout 200 "$R" test_dic_volume --gtest_brief=1 --gtest_filter="${DVC_TEST_FILTER:-*}" > "$out/tests.txt" 2>&1
tests_rc=$?
tail -6 "$out/tests.txt"

echo "== dvc generate 512^3"
t0=$(date +%s)
timeout 120 "$R" dvc generate -o "$work/pair512.h5" --size "${DVC_BENCH_SIZE:-512}" --translation 0.4,-0.3,0.2 --strain 0.01 --seed 5 2>&1 | tail -2
echo "generated in $(( $(date +%s) - t0 )) s"

echo "== dvc bench 512^3 (GPU: all points; CPU: ${DVC_CPU_POINTS:-2000} spread points)"
timeout 330 "$R" dvc bench --pair "$work/pair512.h5" --subsets "${DVC_SUBSETS:-16,32,48}" --spacing 8 --cpu-points "${DVC_CPU_POINTS:-2000}" \
    --json "$out/bench.json" -q > "$out/bench.txt" 2>&1
bench_rc=$?
tail -8 "$out/bench.txt"

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
for s in (16, 32, 48):
    g = [r for r in b["runs"] if r["backend"] == "cuda" and r["subset"] == s]
    c = [r for r in b["runs"] if r["backend"] == "cpu" and r["subset"] == s]
    if g:
        ratio = f", {g[0]['icgn_points_per_s'] / c[0]['icgn_points_per_s']:.0f}x the CPU" if c else ""
        target = f" (target 150000: {'met' if g[0]['icgn_points_per_s'] >= 150000 else 'MISSED'})" if s == 32 else ""
        print(f"dvc summary: subset {s} IC-GN {g[0]['icgn_points_per_s']:.0f} points/s on the GPU{target}{ratio}, RMSE {g[0].get('rmse', float('nan')):.1e}")
PY

echo "== spam beside dvc (512 points, subset 33)"
spam_rc=skipped
if [[ ${DVC_SPAM:-1} == 1 ]] && ls .whl-dvc/*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-dvc .whl-dvc/*.whl > "$work/pip.txt" 2>&1
  export PYTHONPATH=/tmp/site-dvc:$here/spam_stubs${PYTHONPATH:+:$PYTHONPATH}
  timeout 150 python3 "$here/bench_spam.py" --dvc "$dvc_exe" --pair "$work/pair512.h5" --backends "${DVC_SPAM_BACKENDS:-cuda,cpu}" --points 512 \
      --processes "$(nproc)" --out "$out" > "$work/spam.txt" 2>&1
  spam_rc=$?
  tail -6 "$work/spam.txt"
  [[ -f $out/bench_spam.md ]] && grep -E '^\| (cubic|trilinear)' "$out/bench_spam.md" | sed 's/^/dvc summary: spam beside: /'
else
  echo "spam not run (DVC_SPAM=0, or no .whl-dvc/ carried)"
fi

echo "dvc summary: tests rc=$tests_rc bench rc=$bench_rc spam rc=$spam_rc; files in $out"
rm -rf "$work"
