#!/usr/bin/env bash
# Small column-major potrf, n = 4..32: the designs of experiments/small-rows-prototype beside the
# committed kernels and cuSolverDx, all in cuSolverDx's timing scope (A restored and the L2 flushed
# by a read before every timed call), in one device call of at most TOPIC_BUDGET_S (120) s:
#   P  rows_prototype (rows-shfl, rows-smem, rows-copy, thread), s and d, batch 16384
#   C  the tester, committed tables, potrf and posv, s and d, batch 16384, --ref cusolverdx (the peer
#      as its child process: the ratios like for like), targets-column-major.json judged by the tester
#   R  the tester with the candidate table "rows" (validation/cusolverdx/fused_table.py --design rows:
#      the library's register kernels with one row per thread, the prototype's shape), same cases
#   K  accuracy of the "rows" table on the GPU: potrf s d c z, n = 4, 8, 16, 32, lower and upper, strided
#      and pointer arrays, --check against LAPACK
#   H  batch 100000, n = 8, 16, 32: P's designs, the committed tables and "rows" (potrf)
#   N  Nsight Compute on s n = 32 (the committed kernel, "rows", the prototype's rows-smem)
# SP_STEPS (a list of the step names below) runs only those. Most important first; each step bounded by what is left of the budget, its own CSV/JSON. Carried in
# .carry/small-proto/ (scripts/gpu/small-proto-prebuild.sh): rows_prototype, prebuilt.tar (the
# candidate table and every kernel of C, R, H for sm_90, so the call spends no time in NVRTC);
# bench_cusolverdx from .carry/tester-dx/. Writes $OUT/small-proto/.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/small-proto; mkdir -p "$out"
budget=${TOPIC_BUDGET_S:-120}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
run=${BUNDLE_RUN:-/tmp/bundle/run}
carry=.carry/small-proto
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%FT%TZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
pre=/tmp/small-proto-prebuilt; mkdir -p "$pre"
if [[ -f $carry/prebuilt.tar ]]; then
  tar -xf "$carry/prebuilt.tar" -C "$pre" && export BATCHSOLVE_PREBUILT_DIR=$pre/kernels
fi
tables=$pre/tables
if [[ ! -f $tables/rows.json ]]; then
  mkdir -p "$tables" && python3 validation/cusolverdx/fused_table.py --design rows --n 4:32 --output "$tables/rows.json"
fi
for p in "${BATCHSOLVE_CUSOLVERDX:-}" "$PWD/$carry/bench_cusolverdx" "$PWD/.carry/tester-dx/bench_cusolverdx"; do
  [[ -n $p && -x $p ]] && { export BATCHSOLVE_CUSOLVERDX=$p; break; }
done
version=$(grep -o '"[0-9a-f]*"' "$pre/generator_version.hpp" 2>/dev/null | tr -d '"')
lib=$(dirname "$run")/lib
fresh="not checked"; ls "$lib"/libbatchsolve.so* > /dev/null 2>&1 && { grep -aqs "${version:-none}" "$lib"/libbatchsolve.so* && fresh=current || fresh="stale: NVRTC compiles here"; }
echo "prebuilt kernels: $(ls "$pre/kernels" 2>/dev/null | wc -l), generator version ${version:-none} ($fresh); peer ${BATCHSOLVE_CUSOLVERDX:-none}" | tee "$out/prebuilt.txt"

steps=" ${SP_STEPS:-proto committed rows check proto-100k committed-100k rows-100k ncu-committed ncu-rows ncu-proto} "
want() { [[ $steps == *" $1 "* ]]; }
proto() {  # proto NAME LIMIT ARGS...
  local name=$1 limit=$2; shift 2
  want "$name" || return 0
  local l; l=$(left); (( l < 3 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  [[ -x $carry/rows_prototype ]] || { echo "$name: no $carry/rows_prototype"; return; }
  local t0=$SECONDS
  timeout -k 2 "$limit" stdbuf -oL "$carry/rows_prototype" "$@" > "$out/$name.csv" 2> "$out/$name.log"
  echo "$name: rc $? in $((SECONDS - t0)) s ($(grep -c ',ok$' "$out/$name.csv") ok, $(grep -c 'FAILED' "$out/$name.csv") failed)"
}
source scripts/gpu/small-lib.sh  # tester_step
step() { tester_step "$@"; }
ns=4,8,12,16,24,32
common=(--layout column_major --uplo lower --nrhs 1 --distinct 512 --repeat 7 --warmup 1 --jobs 16 --timing restore-each)
proto proto 25 --batch 16384 --n $ns --prec s,d --reps 10
step committed 30 - --routine potrf,posv --precision s,d --n $ns --batch 16384 "${common[@]}" --ref cusolverdx \
  --cusolverdx-seconds 15 --targets validation/cusolverdx/targets-column-major.json --targets-out "$out/targets.json"
step rows 12 "$tables/rows.json" --routine potrf,posv --precision s,d --n $ns --batch 16384 "${common[@]}"
step check 20 "$tables/rows.json" --routine potrf --precision s,d,c,z --n 4,8,16,32 --layout column_major,pointer_array \
  --uplo lower,upper --batch 300 --distinct 300 --repeat 1 --warmup 0 --check --ref lapack --jobs 16
proto proto-100k 10 --batch 100000 --n 8,16,32 --prec s,d --reps 7 --designs rows-shfl,rows-smem,thread
step committed-100k 10 - --routine potrf --precision s,d --n 8,16,32 --batch 100000 "${common[@]}"
step rows-100k 10 "$tables/rows.json" --routine potrf --precision s,d --n 8,16,32 --batch 100000 "${common[@]}"
# N  Nsight Compute (if the image has it; clocks left alone) on s n = 32: the committed kernel, the
#    library's rows shape and the prototype's rows-smem (speed of light, occupancy, warp stalls)
prof() {  # prof NAME LIMIT KERNEL-REGEX COMMAND...
  local name=$1 limit=$2 regex=$3; shift 3
  want "$name" || return 0
  local l; l=$(left); (( l < 4 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  command -v ncu > /dev/null || { echo "$name: no ncu"; return; }
  local t0=$SECONDS
  timeout -k 2 "$limit" ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section LaunchStats --section MemoryWorkloadAnalysis -k "regex:$regex" --launch-skip 1 --launch-count 1 "$@" \
    > "$out/$name.txt" 2>&1
  echo "$name: rc $? in $((SECONDS - t0)) s"
}
one=(--routine potrf --precision s --n 32 --batch 16384 --layout column_major --distinct 64 --repeat 1 --warmup 1 --jobs 1 --timing restore-each)
prof ncu-committed 12 'potrf_cm_s_lower_n32' "$run" tester "${one[@]}"
prof ncu-rows 12 'potrf_cm_s_lower_n32' env BATCHSOLVE_TUNING_FILE=$tables/rows.json "$run" tester "${one[@]}"
prof ncu-proto 12 'potrf_rows' "$carry/rows_prototype" --n 32 --prec s --designs rows-smem --reps 1

echo "=== small-proto: $((SECONDS - start)) s of $budget, $(cat "$out/gpu.txt")"
grep -h -E '^(GPU|cuSolverDx peer|targets:)' "$out/committed.log" 2>/dev/null
grep -h '^design\|^rows-smem,s\|^rows-shfl,s\|^thread,s\|^rows-copy,s' "$out/proto.csv" 2>/dev/null
for f in committed rows; do
  grep -E "^potrf +s " "$out/$f.log" 2>/dev/null | awk -v f=$f '{print f, $0}' | cut -c1-200
done
