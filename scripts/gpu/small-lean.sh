#!/usr/bin/env bash
# Small column-major potrf/posv: the shipped tables (the rows kernel adopted at the cases call 2 of
# 2026-12-02 measured faster) beside the rows kernel with config.lean_addressing and cuSolverDx, all in
# cuSolverDx's timing scope (one input set restored and the L2 flushed by a read before every timed
# call; median of 7), in one device call of at most TOPIC_BUDGET_S (90) s:
#   C  committed: the tester, shipped tables, potrf and posv, s and d, batch 16384, n = 4..64, with
#      --ref cusolverdx (the peer as its child process: ratios like for like) and the tester's targets
#   R  rows: candidate table `fused_table.py --design rows` (one row per thread; the plain rows kernel
#      at potrf n = 4, 8, 16, 32), n = 4..32
#   L  lean: the same with --lean (the rows kernel with lean_addressing), potrf n = 4, 8, 16, 32
#   M  lean-cap: lean plus max_registers (SL_CAPS: s8=32,s16=48,s32=56,d16=72: the register counts
#      ptxas reaches without spills there, so more blocks per SM)
#   K  check / check-cap: lean and lean-cap on the GPU against LAPACK (--check --ref lapack): potrf
#      s d c z (cap: s d), n = 4, 8, 16, 32, lower and upper, strided and pointer arrays
#   H  batch 100000: committed, lean, lean-cap, potrf s d n = 8, 16, 32
#   N  Nsight Compute of the lean kernels at s n = 32 (with and without the cap) and d n = 32
# SL_MODE=proto (scripts/gpu/small-proto-quick.sh; default budget 120 s) runs instead the designs of
# experiments/small-rows-prototype beside the committed kernels and the rows table, n = 4..32:
#   P  proto / proto-100k: rows_prototype (rows-shfl, rows-smem, rows-copy, thread), s and d, batch
#      16384 / 100000 (n = 8, 16, 32), CSV; then committed, rows, check-rows (the rows table against
#      LAPACK, as K), committed-100k, rows-100k, and Nsight Compute of s n = 32: ncu-committed,
#      ncu-rows, ncu-proto (the prototype's rows-smem)
# Not in the default list (scripts/gpu/small-confirm.sh runs them): committed-wide (C over SL_NS_WIDE,
# n = 4..128), committed-100k-posv (H's committed step with posv), committed-100k-wide (C at batch
# 100000 over SL_NS_WIDE), check-committed (the shipped tables against LAPACK: potrf and posv s d c z,
# n = 4..32, both triangles, strided and pointer arrays), shape-RAxTC (potrf and posv s d at n = 24,
# 32, 48, 64 with the register tile RAxTC, small_tables in small-lib.sh), cap-d32-80 and cap-d32-64
# (the lean rows kernel at d n = 32 capped at 80 / 64 registers).
# SL_STEPS (names below) runs only those; SL_NAME names the output folder (small-lean, small-proto). Most important first; each step bounded by what is left of
# the budget, each its own JSON/log. Carried in .carry/small-lean/ (scripts/gpu/small-lean-prebuild.sh):
# prebuilt.tar.xz (the candidate tables and every kernel of the tester steps, sm_90, with the generator
# version they are keyed by), bench_cusolverdx and (SL_MODE=proto prebuild) rows_prototype. Without current prebuilt kernels the kernels
# compile here (NVRTC, --jobs 16): C then runs n <= 32 only. Writes $OUT/$SL_NAME/.
set -uo pipefail
cd "$(dirname "$0")/../.."
mode=${SL_MODE:-lean}
[[ $mode == lean || $mode == proto ]] || { echo "small-lean.sh: SL_MODE is lean or proto (got $mode)" >&2; exit 2; }
name=${SL_NAME:-small-$mode}
source scripts/gpu/lib/prelude.sh  # gpu_prelude, find_cusolverdx
gpu_prelude "$name" "$([[ $mode == proto ]] && echo 120 || echo 90)"
pre=/tmp/small-lean-prebuilt; mkdir -p "$pre"
[[ -f $carry/prebuilt.tar.xz ]] && tar -xJf "$carry/prebuilt.tar.xz" -C "$pre" && export BATCHSOLVE_PREBUILT_DIR=$pre/kernels
source scripts/gpu/small-lib.sh  # tester_step, small_tables
tables=$pre/tables
[[ -f $tables/shape-2x2.json ]] || small_tables "$tables"  # no prebuilt folder: the same tables, the kernels compiled here
find_cusolverdx
version=$(grep -o '"[0-9a-f]*"' "$pre/generator_version.hpp" 2>/dev/null | tr -d '"')
lib=$(dirname "$run")/lib stale=1
fresh="not checked"
if ls "$lib"/libbatchsolve.so* > /dev/null 2>&1; then
  grep -aqs "${version:-none}" "$lib"/libbatchsolve.so* && fresh=current stale=0 || fresh="stale: NVRTC compiles here"
fi
echo "prebuilt kernels: $(ls "$pre/kernels" 2>/dev/null | wc -l), generator version ${version:-none} ($fresh); peer ${BATCHSOLVE_CUSOLVERDX:-none}" | tee "$out/prebuilt.txt"

default_steps="committed rows lean lean-cap check check-cap committed-100k lean-100k lean-cap-100k ncu-lean ncu-lean-cap ncu-lean-d32"
[[ $mode == proto ]] && default_steps="proto committed rows check-rows proto-100k committed-100k rows-100k ncu-committed ncu-rows ncu-proto"
steps=" ${SL_STEPS:-$default_steps} "
want() { [[ $steps == *" $1 "* ]]; }
proto() {  # proto NAME LIMIT ARGS...: experiments/small-rows-prototype's program, CSV to $out/NAME.csv
  local name=$1 limit=$2; shift 2
  want "$name" || return 0
  local l; l=$(left); (( l < 3 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  [[ -x $carry/rows_prototype ]] || { echo "$name: no $carry/rows_prototype (SL_MODE=proto prebuild)"; return; }
  local t0=$SECONDS
  timeout -k 2 "$limit" stdbuf -oL "$carry/rows_prototype" "$@" > "$out/$name.csv" 2> "$out/$name.log"
  echo "$name: rc $? in $((SECONDS - t0)) s ($(grep -c ',ok$' "$out/$name.csv") ok, $(grep -c 'FAILED' "$out/$name.csv") failed)"
}
proto proto 25 --batch 16384 --n 4,8,12,16,24,32 --prec s,d --reps 10
ns_all=4,8,12,16,24,32,48,64
(( stale )) || [[ $mode == proto ]] && ns_all=4,8,12,16,24,32
common=(--layout column_major --uplo lower --nrhs 1 --distinct 512 --repeat 7 --warmup 1 --jobs 16 --timing restore-each)
tester_step committed $((25 + 20 * stale)) - --routine potrf,posv --precision s,d --n $ns_all --batch 16384 "${common[@]}" \
  --ref cusolverdx --cusolverdx-seconds 12 --targets validation/cusolverdx/targets-column-major.json --targets-out "$out/targets.json"
ns_wide=${SL_NS_WIDE:-4,8,12,16,24,32,48,64,80,100,128}
(( stale )) && ns_wide=4,8,12,16,24,32
tester_step committed-wide $((40 + 20 * stale)) - --routine potrf,posv --precision s,d --n $ns_wide --batch 16384 "${common[@]}" \
  --ref cusolverdx --cusolverdx-seconds 15 --targets validation/cusolverdx/targets-column-major.json --targets-out "$out/targets.json"
tester_step rows 10 "$tables/rows.json" --routine potrf,posv --precision s,d --n 4,8,12,16,24,32 --batch 16384 "${common[@]}"
tester_step lean 8 "$tables/rows-lean.json" --routine potrf --precision s,d --n 4,8,16,32 --batch 16384 "${common[@]}"
tester_step lean-cap 8 "$tables/rows-lean-cap.json" --routine potrf --precision s,d --n 4,8,16,32 --batch 16384 "${common[@]}"
for sh in 1x1 1x2 1x4 2x2; do
  tester_step shape-$sh $((10 + 20 * stale)) "$tables/shape-$sh.json" --routine potrf,posv --precision s,d --n 24,32,48,64 --batch 16384 "${common[@]}"
done
for c in 80 64; do
  tester_step cap-d32-$c $((5 + 10 * stale)) "$tables/cap-d32-$c.json" --routine potrf --precision d --n 32 --batch 16384 "${common[@]}"
done
chk=(--routine potrf --n 4,8,16,32 --layout column_major,pointer_array --uplo lower,upper --batch 300 --distinct 300
     --repeat 1 --warmup 0 --check --ref lapack --jobs 16)
tester_step check 15 "$tables/rows-lean.json" --precision s,d,c,z "${chk[@]}"
tester_step check-rows 20 "$tables/rows.json" --precision s,d,c,z "${chk[@]}"
tester_step check-cap 10 "$tables/rows-lean-cap.json" --precision s,d "${chk[@]}"
h=(--routine potrf --precision s,d --n 8,16,32 --batch 100000 "${common[@]}")
proto proto-100k 10 --batch 100000 --n 8,16,32 --prec s,d --reps 7 --designs rows-shfl,rows-smem,thread
tester_step committed-100k 8 - "${h[@]}"
tester_step committed-100k-posv 10 - --routine potrf,posv --precision s,d --n 4,8,16,32 --batch 100000 "${common[@]}"
tester_step committed-100k-wide $((40 + 20 * stale)) - --routine potrf,posv --precision s,d --n $ns_wide --batch 100000 "${common[@]}" \
  --ref cusolverdx --cusolverdx-seconds 20 --targets validation/cusolverdx/targets-column-major.json --targets-out "$out/targets-100k.json"
tester_step check-committed 20 - --routine potrf,posv --precision s,d,c,z --n 4,8,12,16,24,32 --layout column_major,pointer_array \
  --uplo lower,upper --nrhs 2 --batch 300 --distinct 300 --repeat 1 --warmup 0 --check --ref lapack --jobs 16
tester_step rows-100k 10 "$tables/rows.json" "${h[@]}"
tester_step lean-100k 8 "$tables/rows-lean.json" "${h[@]}"
tester_step lean-cap-100k 8 "$tables/rows-lean-cap.json" "${h[@]}"
# N  Nsight Compute (if the image has it; clocks left alone): speed of light, occupancy, warp stalls
prof() {  # prof NAME LIMIT KERNEL-REGEX TABLE(or -) PRECISION [COMMAND...: instead of the tester at n = 32]
  local name=$1 limit=$2 regex=$3 table=$4 prec=$5; shift 5
  want "$name" || return 0
  local l; l=$(left); (( l < 4 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  command -v ncu > /dev/null || { echo "$name: no ncu"; return; }
  local cmd=("$@")
  (( ${#cmd[@]} )) || cmd=("$run" tester --routine potrf --precision "$prec" --n 32 --batch 16384 --layout column_major
                           --distinct 64 --repeat 1 --warmup 1 --jobs 1 --timing restore-each)
  [[ $table == - ]] && table=
  local t0=$SECONDS
  BATCHSOLVE_TUNING_FILE=$table timeout -k 2 "$limit" ncu --clock-control none --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis -k "regex:$regex" --launch-skip 1 \
    --launch-count 1 "${cmd[@]}" > "$out/$name.txt" 2>&1
  echo "$name: rc $? in $((SECONDS - t0)) s"
}
prof ncu-lean 12 'potrf_cm_s_lower_n32.*_rows_lean$' "$tables/rows-lean.json" s
prof ncu-lean-cap 12 'potrf_cm_s_lower_n32.*_rows_lean_rr56' "$tables/rows-lean-cap.json" s
prof ncu-lean-d32 12 'potrf_cm_d_lower_n32.*_rows_lean' "$tables/rows-lean.json" d
prof ncu-committed 12 'potrf_cm_s_lower_n32' - s
prof ncu-rows 12 'potrf_cm_s_lower_n32' "$tables/rows.json" s
prof ncu-proto 12 'potrf_rows' - s "$carry/rows_prototype" --n 32 --prec s --designs rows-smem --reps 1

echo "=== $name: $((SECONDS - start)) s of $budget, $(cat "$out/gpu.txt")"
grep -h -E '^(GPU|cuSolverDx peer|targets:)' "$out"/committed*.log 2>/dev/null
grep -h '^design\|^rows-smem,s\|^rows-shfl,s\|^thread,s\|^rows-copy,s' "$out/proto.csv" 2>/dev/null
for f in committed committed-wide rows lean lean-cap; do
  grep -E "^potrf +[sd] " "$out/$f.log" 2>/dev/null | awk -v f=$f '{print f, $0}' | cut -c1-200
done
