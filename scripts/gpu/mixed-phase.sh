#!/usr/bin/env bash
# Where posv_mixed's time goes and two factor designs side by side, on one H200 in TOPIC_BUDGET_S
# seconds (150 by default). Every step is its own tester process (--ref cusolver: FP64 Xpotrf + Xpotrs
# on the same matrix and stream), A = Q diag(lambda) Q^T, seed 36, median of 3 after a warm-up; most
# important first, each cut to the time left:
#   check-inverse  the inverse table (below) at n = 1500 and 5000 (uneven leaves), cond 1e2 and 1e6:
#                  the new leaves' backward error (the error column, units of u max(sqrt n, 4));
#                  check-fused the same for the fused table
#   trsm-16384     the shipped table (panel_solve trsm, leaf 512): MIXED_PHASE_DESIGNS, cond 1e2..1e8,
#                  with scripts/gpu/mixed-targets.json (targets-trsm-16384.json, by the tester)
#   inverse-16384  the same designs with the table's posv_mixed entries set to panel_solve inverse
#                  ($OUT/mixed-phase/tables/inverse.json through BATCHSOLVE_TUNING_FILE: every other
#                  entry as shipped), targets-inverse-16384.json
#   fused-16384    four designs with the fused table (inverse, and M^-1 for one right-hand side in one
#                  launch per triangle: fused_solve), targets-fused-16384.json
#   nsys-trsm, nsys-inverse  nsys profile of one warm-up and one timed posv_mixed at n = 16384, cond
#                  1e2, split FP16 classical, each table: the kernel summary and trace as CSV, so the
#                  factor's leaves (SPOTRF), solve leaves (TRSM / GEMM by the inverse), tensor-core
#                  GEMMs, conversions and each pass's SYMV / TRSV / GEMV are timed apart (no nsys: ncu's
#                  gpu__time_duration per kernel at n = 4096, the generator's QR kernels left out, at most
#                  MIXED_PHASE_NCU_LAUNCHES launches)
#   trsm-8192, inverse-8192  both tables at n = 8192
#   gtest-inverse, gtest-trsm  the large suite's CUDA posv_mixed tests under each table
#   nsys-gmres-inverse  nsys of the inverse table's split FP16 with GMRES at cond 1e6 (n = 16384)
#   nsys-potrf     nsys of potrf_large d at n = 2048 and 4096 with cuSOLVER beside (kernel sum against
#                  wall: launch latency or GEMM rate)
# Order: check-inverse, check-fused, trsm-16384, nsys-trsm, inverse-16384, fused-16384, nsys-inverse,
# trsm-8192, inverse-8192, gtest-fused, gtest-inverse, nsys-fused, check-inverse-1e6,
# nsys-gmres-inverse, gtest-trsm, nsys-potrf.
# MIXED_PHASE_DESIGNS default: auto, fp16_split/classical, fp16_split/classical/leaf128, .../leaf256,
# fp16_split/classical/leaf1024, fp16/classical, fp16_split/gmres. Writes $OUT/mixed-phase/ (gpu.txt,
# commit.txt, date.txt, <step>.json/.log, targets-*.json, targets.json: every step's targets of its n
# with the step, nsys/, summary.md). Run from the repository root with the bundle unpacked at /tmp/bundle
# (BUILD_DIR=build: the build tree's tester, a dry run here).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/mixed-phase; mkdir -p "$out/tables" "$out/nsys"
tester=(/tmp/bundle/run tester); [[ -n ${BUILD_DIR:-} ]] && tester=("$BUILD_DIR/validation/tester")
budget=${TOPIC_BUDGET_S:-150}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/mixed-phase-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
designs=${MIXED_PHASE_DESIGNS:-auto,fp16_split/classical,fp16_split/classical/leaf128,fp16_split/classical/leaf256,fp16_split/classical/leaf1024,fp16/classical,fp16_split/gmres}
common=(--routine posv_mixed --precision d --repeat 3 --warmup 1 --seed 36 --ref cusolver)

# The candidate tables: the shipped sm90 table with, in every posv_mixed entry, panel_solve inverse
# (inverse.json), and that with fused_solve (fused.json).
python3 - libsolver/tuning/sm90-large.json "$out/tables" <<'PY'
import copy, json, os, sys
shipped = json.load(open(sys.argv[1]))
for name, patch in (("inverse", {"panel_solve": "inverse"}), ("fused", {"panel_solve": "inverse", "fused_solve": True})):
    t = copy.deepcopy(shipped)
    for e in t["entries"]:
        if e["routine"] == "posv_mixed":
            e["best"]["config"].update(patch)
            e["provenance"] = "candidate (%s), not measured: %s" % (json.dumps(patch), e["provenance"])
    json.dump(t, open(os.path.join(sys.argv[2], name + ".json"), "w"), indent=1)
PY
tables=$out/tables; [[ $out != /* ]] && tables=$PWD/$out/tables
inverse_table=$tables/inverse.json fused_table=$tables/fused.json

# step NAME LIMIT MIN TABLE ARGS...: the tester for at most LIMIT s (or what is left, 3 s kept for the
# summary) with TABLE (- for the shipped one); skipped when fewer than MIN s are left.
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

nsys_bin=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
echo "nsys: ${nsys_bin:-none}; ncu: ${ncu_bin:-none}" | tee "$out/nsys/tools.txt"
# profile NAME LIMIT MIN TABLE ARGS...: the tester (ARGS, no peers unless given) under nsys (or ncu).
profile() {
  local name=$1 limit=$2 min=$3 table=$4; shift 4
  local l=$(( $(left) - 3 ))
  (( l < min )) && { echo "$name: skipped ($l s left)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  local env_table=(); [[ $table != - ]] && env_table=(env "BATCHSOLVE_TUNING_FILE=$table")
  local run=("${tester[@]}")
  if [[ -n $nsys_bin ]]; then
    [[ $1 == --n-nsys ]] && set -- --n "$2" "${@:5}"
    timeout -k 2 "$limit" "${env_table[@]}" "$nsys_bin" profile --trace cuda --cuda-graph-trace node --sample none --cpuctxsw none \
      --force-overwrite true -o "$out/nsys/$name" "${run[@]}" "$@" > "$out/nsys/$name.log" 2>&1
    echo "   rc $? after $((SECONDS - start)) s"
    for report in cuda_gpu_kern_sum cuda_gpu_trace; do
      timeout -k 2 30 "$nsys_bin" stats --report "$report" --format csv --force-export true \
        --output "$out/nsys/$name" "$out/nsys/$name.nsys-rep" >> "$out/nsys/$name.log" 2>&1
    done
    # The report itself only when small enough to carry back.
    [[ -f $out/nsys/$name.nsys-rep ]] && (( $(stat -c %s "$out/nsys/$name.nsys-rep") > 12000000 )) && rm -f "$out/nsys/$name.nsys-rep"
    rm -f "$out/nsys/$name.sqlite"
  elif [[ -n $ncu_bin ]]; then
    # ncu replays each kernel: a smaller order, and the generator's QR kernels left out.
    [[ $1 == --n-nsys ]] && set -- --n "$4" "${@:5}"
    timeout -k 2 "$limit" "${env_table[@]}" "$ncu_bin" --metrics gpu__time_duration.sum --csv --print-units base \
      --kernel-name 'regex:^(?!.*(geqr|orgqr|larf|gemmSN|dgemm)).*' \
      --launch-count "${MIXED_PHASE_NCU_LAUNCHES:-3000}" "${run[@]}" "$@" > "$out/nsys/$name.ncu.csv" 2> "$out/nsys/$name.log"
    echo "   ncu rc $? after $((SECONDS - start)) s"
  else
    echo "   no nsys or ncu"
  fi
}

pargs=(--n-nsys 16384 --n-ncu 4096 --routine posv_mixed --precision d --cond 100 --repeat 1 --warmup 1 --seed 36 --designs fp16_split/classical)
gargs=(--n-nsys 16384 --n-ncu 4096 --routine posv_mixed --precision d --cond 1e6 --repeat 1 --warmup 1 --seed 36 --designs fp16_split/gmres)
# gtest NAME LIMIT TABLE: the large suite's CUDA posv_mixed tests (every tensor-core factor at leaves 128
# and 384, n = 1300) with TABLE (- shipped), into NAME.log.
gtest() {
  local name=$1 limit=$2 table=$3
  local l=$(( $(left) - 3 ))
  (( l < 6 )) && { echo "$name: skipped ($l s left)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  local env_table=(); [[ $table != - ]] && env_table=(env "BATCHSOLVE_TUNING_FILE=$table")
  local exe=(/tmp/bundle/run batchsolve_large_test)
  [[ -n ${BUILD_DIR:-} ]] && exe=("$BUILD_DIR/libsolver/tests/large/batchsolve_large_test")
  echo "== $name ($limit s)"
  timeout -k 2 "$limit" "${env_table[@]}" "${exe[@]}" --gtest_filter='PosvMixed/1.*' > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"; grep -E "PASSED|FAILED|SKIPPED" "$out/$name.log" | tail -4
}
# Most important first: the candidates' accuracy, the designs at n = 16384 and the shipped phase split,
# then n = 8192, the unit tests, the rest.
step check-inverse 14 6 "$inverse_table" --n 1500,5000 --cond 100 --designs auto,fp16_split/classical,fp16/gmres,tf32/classical
step check-fused 14 6 "$fused_table" --n 1500,5000 --cond 100 --designs auto,fp16_split/classical,fp16/gmres,tf32/classical
step trsm-16384 34 12 - --n 16384 --designs "$designs" $(targets trsm-16384)
profile nsys-trsm 20 10 - "${pargs[@]}" --json "$out/nsys/nsys-trsm.json"
step inverse-16384 34 12 "$inverse_table" --n 16384 --designs "$designs" $(targets inverse-16384)
step fused-16384 20 10 "$fused_table" --n 16384 --designs auto,fp16_split/classical,fp16_split/gmres,fp16/classical $(targets fused-16384)
profile nsys-inverse 20 10 "$inverse_table" "${pargs[@]}" --json "$out/nsys/nsys-inverse.json"
step trsm-8192 14 8 - --n 8192 --designs auto,fp16_split/classical,fp16_split/classical/leaf256,fp16/classical,fp32/auto $(targets trsm-8192)
step inverse-8192 14 8 "$inverse_table" --n 8192 --designs auto,fp16_split/classical,fp16_split/classical/leaf256,fp16/classical,fp32/auto $(targets inverse-8192)
gtest gtest-fused 20 "$fused_table"
gtest gtest-inverse 20 "$inverse_table"
profile nsys-fused 20 10 "$fused_table" "${pargs[@]}" --json "$out/nsys/nsys-fused.json"
step check-inverse-1e6 10 5 "$inverse_table" --n 1500 --cond 1e6 --designs fp16_split/gmres,fp16/gmres
profile nsys-gmres-inverse 20 10 "$inverse_table" "${gargs[@]}" --json "$out/nsys/nsys-gmres-inverse.json"
gtest gtest-trsm 20 -
profile nsys-potrf 15 8 - --n-nsys 2048,4096 --n-ncu 2048 --routine potrf_large --precision d --repeat 3 --warmup 1 --split --ref cusolver --json "$out/nsys/nsys-potrf.json"

# targets.json: every step's targets, each line with its step.
source scripts/gpu/lib/step-targets.sh
merge_step_targets "$out"
python3 scripts/gpu/mixed_phase_report.py "$out" | tee "$out/summary.md"
echo "mixed-phase: done after $((SECONDS - start)) s"
exit 0
