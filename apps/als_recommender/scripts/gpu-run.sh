#!/usr/bin/env bash
# The ALS recommender on the GPU machine (run from the repository root, bundle at /tmp/bundle, results
# under $OUT/als/): the GPU tests, then `als bench` on the ML-20M shape (k = 64, 128: ours on the GPU
# in three system layouts and on the CPU, `implicit` on GPU and CPU) and on the Netflix shape (k = 100:
# ours and `implicit` on the GPU), then a PNG and a summary.
#   usage: apps/als_recommender/scripts/gpu-run.sh [full|quick]   full: at most 8 min (steps time-limited), quick: at most 3.5 min
# implicit's GPU path needs the wheels in .whl-als/ (implicit, rmm-cu13, librmm-cu13, rapids-logger,
# cuda-python, cuda-bindings, cuda-pathfinder, tqdm, threadpoolctl); without them it is left out.
set -uo pipefail
mode=${1:-full}
out=${OUT:?OUT must name the output folder}/als
mkdir -p "$out"
R=${ALS_RUN:-/tmp/bundle/run}  # ALS_RUN: another runner, to try the script off the GPU machine
script_dir=apps/als_recommender/scripts
log=$out/log.txt
: > "$log"
say() { echo "$@" | tee -a "$log"; }
start=$(date +%s)

if compgen -G ".whl-als/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-als .whl-als/*.whl 2>&1 | tail -2
    export PYTHONPATH=/tmp/site-als${PYTHONPATH:+:$PYTHONPATH}
fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
python3 -c "import implicit, implicit.gpu; print('implicit', implicit.__version__, 'GPU extension:', implicit.gpu.HAS_CUDA)" 2>&1 | tee -a "$log"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee -a "$log"

say "== GPU tests (CPU/GPU agreement, systems in every layout, planted recovery)"
test_limit=90
timeout $test_limit $R test_als --gtest_filter='Gpu.*:Systems.*' --gtest_brief=1 2>&1 | tail -20 | tee -a "$log"

common=(--implicit-script "$script_dir/bench_implicit.py" --implicit-timeout 100 --eval-users 20000 --lambda 0.01 --alpha 1 --seed 20)
if [[ $mode == quick ]]; then
    say "== bench ML-20M shape, k = 64 (GPU only)"
    timeout 120 $R als bench --shape ml20m --factors-list 64 --iterations 4 --backends cuda \
        --layouts column_major,interleaved,chunked --cpu-max-interactions 0 --work-dir /tmp/als-ml20m \
        --json "$out/bench_ml20m.json" --markdown "$out/bench_ml20m.md" "${common[@]}" 2>&1 | grep -v Warning | tee -a "$log" | tail -30
else
    say "== bench ML-20M shape, k = 64 and 128"
    timeout 230 $R als bench --shape ml20m --factors-list 64,128 --iterations 4 --backends cuda,cpu \
        --layouts column_major,interleaved,chunked --work-dir /tmp/als-ml20m \
        --json "$out/bench_ml20m.json" --markdown "$out/bench_ml20m.md" "${common[@]}" 2>&1 | grep -v Warning | tee -a "$log" | tail -30
    say "== bench Netflix shape, k = 100 (GPU: ours and implicit)"
    timeout 140 $R als bench --shape netflix --factors-list 100 --iterations 3 --backends cuda --layouts column_major \
        --cpu-max-interactions 0 --work-dir /tmp/als-netflix \
        --json "$out/bench_netflix.json" --markdown "$out/bench_netflix.md" "${common[@]}" 2>&1 | grep -v Warning | tee -a "$log" | tail -20
fi
python3 "$script_dir/plot_bench.py" "$out"/bench_*.json --output "$out/bench.png" 2>&1 | tail -3

say "== summary ($(( $(date +%s) - start )) s)"
python3 - "$out" <<'PY' | tee -a "$log"
import glob, json, sys
for path in sorted(glob.glob(sys.argv[1] + "/bench_*.json")):
    doc = json.load(open(path))
    print(f"{doc['data']} ({doc['interactions']:,} interactions):")
    for r in doc["results"]:
        name = f"{r['tool']} {r['backend']}" + (f" {r['layout']}" if r["tool"] == "ours" and r["backend"] == "cuda" else "")
        s = r.get("seconds_per_iteration")
        extra = ""
        if r["tool"] == "ours":
            extra = f" build {r['build_seconds']:.4f} solve {r['solve_seconds']:.4f}"
            if r.get("peak_gpu_bytes"):
                extra += f" peak {r['peak_gpu_bytes'] / 2**30:.2f} GiB"
            g = r.get("speedup_vs_implicit_gpu")
            if isinstance(g, (int, float)) and g == g:
                extra += f" {g:.2f}x implicit GPU"
        p = r.get("p_at_10")
        print(f"  k {r['factors']:>3} {name:28s} {s:.4f} s/iter P@10 {p if p is None else round(p, 4)}{extra}")
PY
