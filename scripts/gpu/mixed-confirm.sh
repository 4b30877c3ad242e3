#!/usr/bin/env bash
# posv_mixed's shipped table beside the table before it, on one H200 in TOPIC_BUDGET_S seconds (120 by
# default): the confirmation of what mixed-phase.sh measured. Each step its own tester process (A =
# Q diag(lambda) Q^T, seed 36, median of 3 after a warm-up, cond 1e2..1e8), most important first, each
# cut to the time left:
#   shipped-16384   the embedded table: CONFIRM_DESIGNS beside FP64 Xpotrf + Xpotrs and cuSOLVER's
#                   LU-based IRS, with scripts/gpu/mixed-targets.json (targets-shipped-16384.json)
#   previous-16384  the same designs and Xpotrf + Xpotrs with every posv_mixed entry patched back by
#                   CONFIRM_PREVIOUS (a JSON object merged into each entry's config; BATCHSOLVE_TUNING_FILE)
#   shipped-8192    the same at n = 8192 (previous-8192 too with CONFIRM_PREVIOUS_8192=1: the table's
#                   n <= 12288 class did not change)
#   gtest           the large suite's CUDA posv_mixed tests with the shipped table
#   nsys-shipped    nsys of one warm-up and one timed split-FP16 classical solve at n = 16384, cond 1e2
#                   (mixed_phase_report.py's phase split)
# Writes $OUT/mixed-confirm/ (gpu.txt, commit.txt, date.txt, <step>.json/.log, targets-*.json,
# targets.json, nsys/, summary.md). Run from the repository root with the bundle at /tmp/bundle
# (BUILD_DIR=build: the build tree's tester, a dry run here).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/mixed-confirm; mkdir -p "$out/tables" "$out/nsys"
tester=(/tmp/bundle/run tester); [[ -n ${BUILD_DIR:-} ]] && tester=("$BUILD_DIR/validation/tester")
budget=${TOPIC_BUDGET_S:-120}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/mixed-confirm-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
designs=${CONFIRM_DESIGNS:-auto,fp16_split/classical/leaf1024,fp16/classical,fp16_split/gmres}
previous_patch=${CONFIRM_PREVIOUS:-'{"panel_solve": "trsm"}'}
common=(--routine posv_mixed --precision d --repeat 3 --warmup 1 --seed 36)

python3 - libsolver/tuning/sm90-large.json "$out/tables/previous.json" "$previous_patch" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
patch = json.loads(sys.argv[3])
for e in t["entries"]:
    if e["routine"] == "posv_mixed":
        e["best"]["config"].update(patch)
        e["provenance"] = "the table before (patched back by %s): %s" % (json.dumps(patch), e["provenance"])
json.dump(t, open(sys.argv[2], "w"), indent=1)
PY
previous=$out/tables/previous.json; [[ $out != /* ]] && previous=$PWD/$previous

# step NAME LIMIT MIN TABLE ARGS...: the tester for at most LIMIT s (3 s kept), TABLE - for the shipped.
step() {
  local name=$1 limit=$2 min=$3 table=$4; shift 4
  local l=$(( $(left) - 3 ))
  (( l < min )) && { echo "$name: skipped ($l s left)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  local env_table=(); [[ $table != - ]] && env_table=(env "BATCHSOLVE_TUNING_FILE=$table")
  timeout -k 2 "$limit" "${env_table[@]}" "${tester[@]}" "${common[@]}" --json "$out/$name.json" "$@" > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
  tail -n 2 "$out/$name.log"
}
targets() { echo --targets scripts/gpu/mixed-targets.json --targets-out "$out/targets-$1.json"; }

step shipped-16384 40 15 - --n 16384 --designs "$designs" --ref cusolver,cusolver-irs $(targets shipped-16384)
step previous-16384 30 12 "$previous" --n 16384 --designs "$designs" --ref cusolver $(targets previous-16384)
step shipped-8192 20 8 - --n 8192 --designs "$designs,fp32/auto" --ref cusolver,cusolver-irs $(targets shipped-8192)
[[ ${CONFIRM_PREVIOUS_8192:-0} == 1 ]] && step previous-8192 14 8 "$previous" --n 8192 --designs "$designs,fp32/auto" --ref cusolver $(targets previous-8192)
l=$(( $(left) - 3 ))
if (( l >= 8 )); then
  exe=(/tmp/bundle/run batchsolve_large_test); [[ -n ${BUILD_DIR:-} ]] && exe=("$BUILD_DIR/libsolver/tests/large/batchsolve_large_test")
  echo "== gtest ($(( l < 25 ? l : 25 )) s)"
  timeout -k 2 $(( l < 25 ? l : 25 )) "${exe[@]}" --gtest_filter='PosvMixed/1.*' > "$out/gtest.log" 2>&1
  echo "   rc $?"; grep -E "PASSED|FAILED" "$out/gtest.log" | tail -3
fi
nsys_bin=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
l=$(( $(left) - 3 ))
if [[ -n $nsys_bin ]] && (( l >= 10 )); then
  echo "== nsys-shipped ($(( l < 20 ? l : 20 )) s)"
  timeout -k 2 $(( l < 20 ? l : 20 )) "$nsys_bin" profile --trace cuda --sample none --cpuctxsw none --force-overwrite true \
    -o "$out/nsys/nsys-shipped" "${tester[@]}" --routine posv_mixed --precision d --n 16384 --cond 100 --repeat 1 --warmup 1 \
    --seed 36 --designs fp16_split/classical --json "$out/nsys/nsys-shipped.json" > "$out/nsys/nsys-shipped.log" 2>&1
  for report in cuda_gpu_kern_sum cuda_gpu_trace; do
    timeout -k 2 30 "$nsys_bin" stats --report "$report" --format csv --force-export true --output "$out/nsys/nsys-shipped" \
      "$out/nsys/nsys-shipped.nsys-rep" >> "$out/nsys/nsys-shipped.log" 2>&1
  done
  rm -f "$out/nsys/nsys-shipped.nsys-rep" "$out/nsys/nsys-shipped.sqlite"
fi

source scripts/gpu/lib/step-targets.sh
merge_step_targets "$out"
python3 scripts/gpu/mixed_phase_report.py "$out" | tee "$out/summary.md"
echo "mixed-confirm: done after $((SECONDS - start)) s"
exit 0
