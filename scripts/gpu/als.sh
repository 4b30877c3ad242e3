#!/usr/bin/env bash
# als on one H200 (about 120 s): seconds to a trained model on the ML-20M shape (138,493 users x
# 26,744 items, 20 M implicit counts from `als generate --shape ml20m`). `als train` for 5 iterations
# at k = 64 on an empty kernel cache (cold), again on the cache the first run filled (warm), then
# k = 128 (warm for the build, cold for its posv kernels). Each run's console (start-up stages, time
# to first iteration, per-iteration build/solve, total) is $OUT/als/<case>.log; the wall of each run
# (date before and after) and the parsed numbers go to $OUT/als/summary.csv, the table last.
# Run from the repository root with the bundle unpacked at /tmp/bundle.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/als; mkdir -p "$out"
run=/tmp/bundle/run
budget=${ALS_BUDGET_S:-118}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv | tee "$out/gpu.txt"
git rev-parse --short HEAD > "$out/commit.txt" 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}" > "$out/commit.txt"
nproc > "$out/cores.txt"
export BATCHSOLVE_CACHE_DIR=/tmp/als-kernel-cache
rm -rf "$BATCHSOLVE_CACHE_DIR"; mkdir -p "$BATCHSOLVE_CACHE_DIR"
data=/tmp/als-ml20m.h5
t0=$EPOCHREALTIME
timeout -k 5 75 "$run" als generate --shape ml20m --seed 1 -o "$data" --force > "$out/generate.log" 2>&1
echo "generate: rc $? in $(python3 -c "print(f'{$EPOCHREALTIME - $t0:.1f}')") s" | tee -a "$out/generate.log"

echo "case,k,rc,wall_s,probe_s,read_s,init_s,values_s,engine_s,first_iteration_s,time_to_first_s,total_s,iter_build_s,iter_solve_s" > "$out/summary.csv"
train_case() {
  local name=$1 k=$2
  local l; l=$(left)
  (( l < 8 )) && { echo "$name,$k,skipped,,,,,,,,,,," >> "$out/summary.csv"; return; }
  (( l > 40 )) && l=40
  local t0=$EPOCHREALTIME
  timeout -k 5 "$l" "$run" als train --train "$data" -o "/tmp/als-model-$name.h5" --force --factors "$k" --lambda 0.01 \
    --alpha 1 --backend cuda --no-loss --eval-every 0 --iterations 5 --seed 1 > "$out/$name.log" 2>&1
  local rc=$? t1=$EPOCHREALTIME
  python3 - "$out/$name.log" "$name" "$k" "$rc" "$t0" "$t1" >> "$out/summary.csv" <<'PY'
import re, sys
log, name, k, rc, t0, t1 = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), float(sys.argv[6])
text = open(log, errors="replace").read()
def num(pattern):
    m = re.search(pattern, text)
    return m.group(1) if m else ""
iters = re.findall(r"iter \d+\s+build ([\d.]+) s\s+solve ([\d.]+) s", text)
later = iters[1:] or iters  # the first iteration is in the start-up figures
b = f"{sum(float(x) for x, _ in later) / len(later):.4f}" if later else ""
s = f"{sum(float(y) for _, y in later) / len(later):.4f}" if later else ""
print(",".join([name, k, rc, f"{t1 - t0:.2f}", num(r"child ([\d.]+) s"), num(r"read \+ checks ([\d.]+) s"),
                num(r"factors initialised ([\d.]+) s"), num(r"values of both sides ([\d.]+) s"),
                num(r"engine set up \(upload, solver kernels\) ([\d.]+) s"), num(r", first iteration ([\d.]+) s"),
                num(r"time to first iteration ([\d.]+) s"), num(r"total ([\d.]+) s"), b, s]))
PY
  tail -n 12 "$out/$name.log"
}
train_case k64-cold 64
train_case k64-warm 64
train_case k128 128
ls -la "$BATCHSOLVE_CACHE_DIR" | tail -n +2 | wc -l > "$out/cache-files.txt"
echo
echo "als train, ML-20M shape, 5 iterations (wall: the process, date to date; iter_*: mean of iterations 2-5)"
column -s, -t < "$out/summary.csv" 2>/dev/null || cat "$out/summary.csv"
