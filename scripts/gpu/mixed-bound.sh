#!/usr/bin/env bash
# posv_mixed's cost-bounded chain and the attribution of its initcheck reports, on one H200 in
# TOPIC_BUDGET_S seconds (130 by default). Steps, most important first, each cut to the time left:
#   mixed      mixed.sh at n = 16384 and 8192, cond 1e2..1e8: the table's automatic chain (cost-bounded:
#              next_step_cost_percent) beside the same chain unbounded (auto/unbounded: the previous
#              behaviour), the FP32 factor and split FP16 classical, Xpotrf + Xpotrs and cuSOLVER's IRS
#              (targets by the tester); into $OUT/mixed (mixed.sh's files)
#   initcheck  compute-sanitizer --tool initcheck over cusolver_potrf_alone (cuSOLVER's Spotrf and
#              Xpotrf in float alone on fully initialised inputs, n 128 and 512, workspace as allocated
#              and zeroed), then sanitize.sh's posv_mixed job (FP32/TF32 factors, n 128) for the same
#              kernel names; each log's reports split by launcher (sanitize_reports.py); into
#              $OUT/initcheck (logs, summary.tsv)
#   leaf       large.sh's leaf steps (d and s at 8192/4096/2048): the leaf kernel's designs beside the
#              table, cuSOLVER's own nb 128 blocks and Xpotrf; into $OUT/large
# Order: mixed, initcheck of cusolver_potrf_alone, leaf, then the posv_mixed initcheck job with the rest.
# Run from the repository root with the bundle unpacked at /tmp/bundle (BUILD_DIR=build: a dry run).
set -uo pipefail
cd "$(dirname "$0")/../.."
budget=${TOPIC_BUDGET_S:-130}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
out=${OUT:-/tmp/out}
mixed_s=$(( budget * 46 / 100 ))
OUT=$out TOPIC_BUDGET_S=$mixed_s MIXED_NS=16384,8192 MIXED_LIMIT_LARGE_S=$(( mixed_s * 64 / 100 )) MIXED_LIMIT_S=$(( mixed_s * 24 / 100 )) \
  MIXED_BASE_DESIGNS=auto,auto/unbounded,fp32/auto,fp16_split/classical bash scripts/gpu/mixed.sh
echo "mixed.sh: done after $((SECONDS - start)) s"

ic=$out/initcheck; mkdir -p "$ic"
run=(/tmp/bundle/run); [[ -n ${BUILD_DIR:-} ]] && run=(env)
alone=cusolver_potrf_alone; tester=tester
if [[ -n ${BUILD_DIR:-} ]]; then
  alone=$(find "$BUILD_DIR" -type f -name cusolver_potrf_alone -perm -u+x | head -1)
  tester=$BUILD_DIR/validation/tester
fi
sanitizer=${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
"$sanitizer" --version > "$ic/versions.txt" 2>&1 || echo "no compute-sanitizer ($sanitizer)" >> "$ic/versions.txt"
printf 'case\texit\tseconds\ttotal\tours\tlibrary\treported\n' > "$ic/summary.tsv"
# job NAME LIMIT PROGRAM ARGS...: the program under initcheck (or what is left, 3 s kept).
job() {
  local name=$1 limit=$2; shift 2
  local l=$(( $(left) - 3 ))
  (( l < 5 )) && { printf '%s\tskipped\t0\t\t\t\t%s s left\n' "$name" "$l" >> "$ic/summary.tsv"; return; }
  (( limit > l )) && limit=$l
  local t0=$SECONDS
  timeout -k 3 "$limit" "$sanitizer" --tool initcheck --print-limit 20 --error-exitcode 99 "${run[@]}" "$@" \
    > "$ic/$name.log" 2>&1
  local rc=$?
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" "$(python3 scripts/gpu/sanitize_reports.py "$ic/$name.log")" >> "$ic/summary.tsv"
  echo "initcheck $name: rc $rc after $((SECONDS - t0)) s"; grep -E "ERROR SUMMARY|FAILED|ok$" "$ic/$name.log" | tail -3
}
job alone-128 20 "$alone" --n 128
job alone-128-zeroed 20 "$alone" --n 128 --memset-workspace
job alone-512 20 "$alone" --n 512
job alone-512-zeroed 20 "$alone" --n 512 --memset-workspace

# The leaf diagonal kernel (reciprocals computed ahead) beside the table, cuSOLVER's nb 128 blocks
# and Xpotrf: large.sh's leaf steps into $OUT/large.
l=$(( $(left) - 2 ))
if (( l >= 12 )); then
  OUT=$out TOPIC_BUDGET_S=$l LARGE_LEAF_ONLY=1 \
    LEAF_DESIGNS=right+lookahead/nb64/leaf/trsm,right+lookahead/nb128/leaf/trsm,left/nb128/leaf/trsm,right+lookahead/nb128/trsm \
    bash scripts/gpu/large.sh
else
  echo "leaf: skipped ($l s left)"
fi
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/mixed-cache}
job posv-mixed-fp32 120 "$tester" --repeat 1 --warmup 0 --backend cuda --check --seed 43 --routine posv_mixed --precision d \
  --cond 100 --designs auto,fp32/classical,tf32/gmres --n 128 --batch 1 --cpu-max 1024
column -t -s $'\t' "$ic/summary.tsv"
# targets.json of the initcheck step (issue 43's: 0 errors per family), from summary.tsv
python3 - "$ic" <<'PY'
import csv, json, os, sys
ic = sys.argv[1]
out = []
for r in csv.DictReader(open(os.path.join(ic, "summary.tsv")), delimiter="\t"):
    ran = r["exit"] in ("0", "99")  # 99: the sanitizer reported; anything else: the program or run failed
    total = int(r["total"]) if ran and (r["total"] or "").isdigit() else None
    out.append({"case": r["case"], "target": "compute-sanitizer initcheck: 0 errors", "measured": total,
                "ours": r.get("ours"), "library": r.get("library"), "met": r["exit"] == "0" and total == 0,
                "basis": "initcheck log %s.log (exit %s)" % (r["case"], r["exit"])})
json.dump(out, open(os.path.join(ic, "targets.json"), "w"), indent=1)
PY
echo "mixed-bound: done after $((SECONDS - start)) s"
exit 0
