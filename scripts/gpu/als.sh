#!/usr/bin/env bash
# als on one H200 in TOPIC_BUDGET_S seconds (12 by default): seconds to a trained model on the ML-20M
# shape (138,493 users x 26,744 items, 20 M implicit counts from `als generate --shape ml20m`), most
# important first, each case cut to the time left:
#   k64-cold-fp32    als train, 5 iterations, k = 64, empty kernel cache, the FP32 build kernel
#   k64-warm-tf32x3  the same on the filled cache with the tensor-core build (the default)
#   k128-tf32x3      k = 128, 3 iterations (its posv kernels compiled in this run, beside the read),
#                    while compare_models checks the two k = 64 models against each other on the host
#                    (same seed and data, the two build kernels; CPU only, so the GPU-timed
#                    per-iteration figures of this case do not feel it)
#   k128-fp32        k = 128, 3 iterations, the FP32 build (side by side with the line above)
#   k256-tf32x3      k = 256, 3 iterations (its kernels compiled in this run)
#   k64-tf32, k128-tf32  the one-product TF32 build (--build-kernel tf32) beside the cases above, and
#                    its k = 64 model against the FP32 one (agreement-tf32.log)
#   k64-warm2-tf32x3 the k64-warm case again (the spread of the headline)
#   (then)           ncu of the build kernels at k = 64 and 128, one iteration each, when time is left
# Each run's console is $OUT/als/<case>.log; the wall of each run (date before and after) and the
# numbers parsed from its log go to summary.csv, rewritten after every case with targets.json
# (target, measured, met) and table.md, so a run cut short keeps what it measured.
# Run from the repository root with the bundle unpacked at /tmp/bundle.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/als; mkdir -p "$out"
run=/tmp/bundle/run
budget=${TOPIC_BUDGET_S:-${ALS_BUDGET_S:-12}}
# Time in microseconds from bash alone (a python3 start costs ~40 ms of a 12 s budget).
now_us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }
t_start=$(now_us)
# Seconds left (one decimal), 0.4 s kept for the last report; `left_tenths` for comparisons.
left_tenths() { local l=$(( (budget * 1000000 - 400000 - ($(now_us) - t_start)) / 100000 )); (( l < 0 )) && l=0; echo $l; }
tenths() { echo "$(( $1 / 10 )).$(( $1 % 10 ))"; }
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
nproc > "$out/cores.txt"
export BATCHSOLVE_CACHE_DIR=/tmp/als-kernel-cache
rm -rf "$BATCHSOLVE_CACHE_DIR"; mkdir -p "$BATCHSOLVE_CACHE_DIR"
data=/tmp/als-ml20m.h5
t0=$(now_us)
timeout -k 1 "$(tenths "$(left_tenths)")" "$run" als generate --shape ml20m --seed 1 -o "$data" --force > "$out/generate.log" 2>&1
echo "generate: rc $? in $(tenths $(( ($(now_us) - t0) / 100000 ))) s" | tee -a "$out/generate.log"

echo "case,k,build_kernel,iterations,rc,wall_s,probe_s,read_s,init_s,values_s,engine_s,first_iteration_s,time_to_first_s,write_s,total_s,iter_build_s,iter_solve_s,iter_s" > "$out/summary.csv"
# report [LOG NAME K KERNEL ITERATIONS RC SECONDS]: appends the case's row parsed from its log (when
# given), then rewrites targets.json and table.md from summary.csv.
report() {
  python3 - "$out" "$@" <<'PY'
import csv, json, re, sys
out = sys.argv[1]
if len(sys.argv) > 2:
    log, name, k, kernel, iterations, rc, wall = sys.argv[2:9]
    try:
        text = open(log, errors="replace").read()
    except OSError:
        text = ""
    def num(pattern):
        m = re.search(pattern, text)
        return m.group(1) if m else ""
    iters = re.findall(r"iter \d+\s+build ([\d.]+) s\s+solve ([\d.]+) s", text)
    later = iters[1:] or iters  # the first iteration is in the start-up figures
    mean = lambda xs: sum(xs) / len(xs)
    b = f"{mean([float(x) for x, _ in later]):.4f}" if later else ""
    s = f"{mean([float(y) for _, y in later]):.4f}" if later else ""
    it = f"{mean([float(x) + float(y) for x, y in later]):.4f}" if later else ""
    with open(f"{out}/summary.csv", "a") as f:
        f.write(",".join([name, k, kernel, iterations, rc, wall, num(r"child ([\d.]+) s"), num(r"read \+ checks ([\d.]+) s"),
                          num(r"factors initialised ([\d.]+) s"), num(r"values of both sides ([\d.]+) s"),
                          num(r"engine set up \(upload, solver kernels\) ([\d.]+) s"), num(r", first iteration ([\d.]+) s"),
                          num(r"time to first iteration ([\d.]+) s"), num(r"writing the model: ([\d.]+) s"), num(r"total ([\d.]+) s"),
                          b, s, it]) + "\n")
rows = {r["case"]: r for r in csv.DictReader(open(f"{out}/summary.csv"))}
def val(case, key):
    r = rows.get(case)
    try:
        return float(r[key]) if r and r["rc"] == "0" else None
    except ValueError:
        return None
agreement = None
try:
    text = open(f"{out}/agreement.log").read()
    agreement = float(text.split("relative difference ")[1].split()[0])
except (OSError, IndexError, ValueError):
    pass
targets = [
    ("k64-warm time to model (process wall, 5 iterations) <= 1.5 s", val("k64-warm-tf32x3", "wall_s"), 1.5, "wall_s of k64-warm-tf32x3: the process, date to date"),
    ("k64-cold time to model (process wall, 5 iterations) <= 3.0 s", val("k64-cold-fp32", "wall_s"), 3.0, "wall_s of k64-cold-fp32 (the FP32 build: the slower kernel)"),
    ("k64 per iteration <= 0.03 s", val("k64-warm-tf32x3", "iter_s"), 0.03, "build + solve, mean of iterations 2..N, default build kernel"),
    ("k128 per iteration <= 0.06 s", val("k128-tf32x3", "iter_s"), 0.06, "build + solve, mean of iterations 2..N, default build kernel"),
    ("k256 per iteration <= 0.2 s", val("k256-tf32x3", "iter_s"), 0.2, "build + solve, mean of iterations 2..N, default build kernel"),
    ("tf32x3 and fp32 k64 models agree: relative difference < 1e-3", agreement, 1e-3, "compare_models, same seed and data"),
]
doc = [{"target": t, "measured": m, "met": (m is not None and m <= lim), "basis": b} for t, m, lim, b in targets]
json.dump(doc, open(f"{out}/targets.json", "w"), indent=1)
with open(f"{out}/table.md", "w") as f:
    keys = list(next(iter(rows.values())).keys()) if rows else []
    f.write("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys) + "\n")
    for r in rows.values():
        f.write("| " + " | ".join(r[k] for k in keys) + " |\n")
    f.write("\n| target | measured | met |\n|---|---|---|\n")
    for d in doc:
        f.write(f"| {d['target']} | {d['measured'] if d['measured'] is not None else 'not measured'} | {'met' if d['met'] else '**missed**'} |\n")
PY
}
train_case() {
  local name=$1 k=$2 kernel=$3 iterations=$4 limit=$5
  local l; l=$(left_tenths)
  if (( l < 15 )); then echo "$name,$k,$kernel,$iterations,skipped,,,,,,,,,,,,," >> "$out/summary.csv"; report; return; fi
  (( l > limit * 10 )) && l=$((limit * 10))
  local t0; t0=$(now_us)
  timeout -k 1 "$(tenths "$l")" "$run" als train --train "$data" -o "/tmp/als-model-$name.h5" --force --factors "$k" --lambda 0.01 \
    --alpha 1 --backend cuda --no-loss --eval-every 0 --iterations "$iterations" --seed 1 --build-kernel "$kernel" > "$out/$name.log" 2>&1
  local rc=$? t1; t1=$(now_us)
  local wall=$(( (t1 - t0) / 10000 ))
  report "$out/$name.log" "$name" "$k" "$kernel" "$iterations" "$rc" "$(( wall / 100 )).$(printf %02d $(( wall % 100 )))"
  tail -n 9 "$out/$name.log"
}
# The GPU tests of the engine first (systems against the stated ones, GPU against CPU): a few seconds.
if (( $(left_tenths) > 100 )); then
  timeout -k 1 20 "$run" test_als --gtest_brief=1 --gtest_filter='Gpu.*:Systems.Gpu*' > "$out/tests.txt" 2>&1
  echo "test_als Gpu.*:Systems.Gpu*: rc $?" | tee -a "$out/tests.txt"
fi
train_case k64-cold-fp32 64 fp32 5 8
train_case k64-warm-tf32x3 64 tf32x3 5 4
compare_pid=
if [[ -f /tmp/als-model-k64-cold-fp32.h5 && -f /tmp/als-model-k64-warm-tf32x3.h5 ]]; then
  timeout -k 1 "$(tenths "$(left_tenths)")" "$run" compare_models /tmp/als-model-k64-warm-tf32x3.h5 /tmp/als-model-k64-cold-fp32.h5 1e-3 \
    > "$out/agreement.log" 2>&1 &
  compare_pid=$!
fi
train_case k128-tf32x3 128 tf32x3 3 8
if [[ -n $compare_pid ]]; then
  wait "$compare_pid"; echo "agreement: rc $?: $(cat "$out/agreement.log")"
  report
fi
train_case k128-fp32 128 fp32 3 6
# k = 256 (its kernels compiled here); then the one-product TF32 build beside the two above (how much
# of the build the three products cost) with its k = 64 model against the FP32 one; then a second
# warm k = 64 run (the spread of the headline).
train_case k256-tf32x3 256 tf32x3 3 10
train_case k64-tf32 64 tf32 5 4
train_case k128-tf32 128 tf32 3 6
if [[ -f /tmp/als-model-k64-cold-fp32.h5 && -f /tmp/als-model-k64-tf32.h5 ]] && (( $(left_tenths) > 20 )); then
  timeout -k 1 "$(tenths "$(left_tenths)")" "$run" compare_models /tmp/als-model-k64-tf32.h5 /tmp/als-model-k64-cold-fp32.h5 1e-2 \
    > "$out/agreement-tf32.log" 2>&1
  echo "agreement tf32 vs fp32: rc $?: $(cat "$out/agreement-tf32.log")"
fi
train_case k64-warm2-tf32x3 64 tf32x3 5 4
ls "$BATCHSOLVE_CACHE_DIR" | wc -l > "$out/cache-files.txt"
# Profile of the build kernels (the bulk of an iteration) at k = 64 and 128, after every timed case:
# one iteration under ncu, the first launches of the iteration (the set-up's one-block launches of
# each kernel skipped), sections for where the time goes (throughput, occupancy, warp stalls, memory).
if command -v ncu > /dev/null; then
  for k in 64 128; do
    l=$(left_tenths); (( l < 150 )) && { echo "ncu k$k: skipped (time)"; continue; }
    (( l > 250 )) && l=250
    timeout -k 1 "$(tenths "$l")" ncu --clock-control none --target-processes all --kernel-name regex:build_systems \
      --launch-skip 2 --launch-count 2 --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats \
      "$run" als train --train "$data" -o "/tmp/als-model-ncu$k.h5" --force --factors "$k" --lambda 0.01 --alpha 1 \
      --backend cuda --no-loss --eval-every 0 --iterations 1 --seed 1 > "$out/ncu-k$k.txt" 2>&1
    echo "ncu k$k: rc $?" | tee -a "$out/ncu-k$k.txt"
  done
else
  echo "ncu: not on this machine" > "$out/ncu-k64.txt"
fi
echo
echo "als train, ML-20M shape (wall: the process, date to date; iter_*: mean of iterations 2..N)"
cat "$out/table.md"
