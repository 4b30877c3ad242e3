#!/usr/bin/env bash
# Two designs for the large Cholesky family on one H200 in TOPIC_BUDGET_S seconds (120 by default):
# potrf_large's whole-matrix vendor variant (variant "vendor": one cusolverDnXpotrf through our entry
# point, chosen by the tuning table) beside the shipped blocked configuration and cuSOLVER's own
# Xpotrf, and posv_mixed's tensor-core factor captured as one CUDA graph (posv_mixed's table field
# graph) together with the vendor potrf (posv_mixed's FP32 factor and FP64 fallback are potrf's table).
# The candidate table tables/candidate.json (every potrf_large entry variant vendor, every posv_mixed
# entry graph true) goes in through BATCHSOLVE_TUNING_FILE. Each step its own tester process, most
# important first, each cut to the time left:
#   potrf-d, potrf-s   the shipped table's row and the design "vendor" at n = 16384, 8192, 4096, 2048
#                      (median of 5 after a warm-up; scripts/gpu/large-targets.json per row)
#   posv-cand-16384    posv_mixed d (automatic chain, cond 1e2..1e8, seed 36, median of 3; split FP16
#                      classical with leaves of 256 and 1024 beside) with the candidate table beside
#                      Xpotrf + Xpotrs and cuSOLVER's LU-based IRS
#   posv-shipped-16384 the same with the shipped table (the before; Xpotrf + Xpotrs beside)
#   posv-cand-8192, posv-shipped-8192  the same at n = 8192, the split-FP16 leaf-1024 chain beside
#   gtest              the large suite's CUDA LargeCholesky and PosvMixed tests with the candidate table
#   potrf-d32768       d at n = 32768, table and vendor, median of 3 (when the time is left)
# LVG_CONFIRM=1 (TOPIC_BUDGET_S 70): the shipped table alone, once the candidates are adopted:
#   potrf-d, potrf-s   the table's row beside the vendor design and the blocked right+lookahead nb 1024
#   posv-16384         the automatic chain beside split FP16 classical with M^-1 in blocks of 2048 and
#                      4096 rows (STRSV on each diagonal block, SGEMV below it), Xpotrf + Xpotrs and IRS
#   posv-8192          the automatic chain, Xpotrf + Xpotrs and IRS
#   gtest              as above, with the shipped table
# Writes $OUT/large-vendor-graph/ (gpu.txt, commit.txt, date.txt, tables/, <step>.json/.log,
# targets-<step>.json by the tester, targets.json merged, summary.md). Run from the repository root
# with the bundle at /tmp/bundle (BUILD_DIR=build: the build tree's executables, a dry run here).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/large-vendor-graph; mkdir -p "$out/tables"
bin() { if [[ -n ${BUILD_DIR:-} ]]; then echo "$BUILD_DIR/$2"; else echo "/tmp/bundle/run $1"; fi; }
read -r -a tester <<< "$(bin tester validation/tester)"
read -r -a gtest <<< "$(bin batchsolve_large_test libsolver/tests/large/batchsolve_large_test)"
budget=${TOPIC_BUDGET_S:-120}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/large-vendor-graph-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"

python3 - libsolver/tuning/sm90-large.json "$out/tables/candidate.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for e in t["entries"]:
    if e["routine"] == "potrf_large":
        e["best"]["config"]["variant"] = "vendor"
        e["provenance"] = "candidate: the whole matrix by one cusolverDnXpotrf (variant vendor); before: " + e["provenance"]
    elif e["routine"] == "posv_mixed":
        e["best"]["config"]["graph"] = True
        e["provenance"] = "candidate: the tensor-core factor captured as a CUDA graph; before: " + e["provenance"]
json.dump(t, open(sys.argv[2], "w"), indent=1)
PY
cand=$out/tables/candidate.json; [[ $cand != /* ]] && cand=$PWD/$cand

# step NAME LIMIT MIN TABLE ARGS...: the tester for at most LIMIT s (3 s kept), TABLE - for the shipped.
step() {
  local name=$1 limit=$2 min=$3 table=$4; shift 4
  local l=$(( $(left) - 3 ))
  (( l < min )) && { echo "$name: skipped ($l s left)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  local env_table=(); [[ $table != - ]] && env_table=(env "BATCHSOLVE_TUNING_FILE=$table")
  timeout -k 2 "$limit" "${env_table[@]}" "${tester[@]}" --warmup 1 --json "$out/$name.json" \
    --targets-out "$out/targets-$name.json" "$@" > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
  tail -n 2 "$out/$name.log"
}
potrf=(--routine potrf_large --ref cusolver --designs vendor --targets scripts/gpu/large-targets.json)
posv=(--routine posv_mixed --precision d --repeat 3 --seed 36 --targets scripts/gpu/mixed-targets.json)
designs8192=auto,fp16_split/classical/leaf1024
designs16384=auto,fp16_split/classical/leaf256,fp16_split/classical/leaf1024  # graph: do smaller leaves pay now?

if [[ ${LVG_CONFIRM:-0} == 1 ]]; then
  potrf=(--routine potrf_large --ref cusolver --designs vendor,right+lookahead/nb1024/inverse --targets scripts/gpu/large-targets.json)
  step potrf-d 11 6 - "${potrf[@]}" --precision d --n 16384,8192,4096,2048 --repeat 5
  step potrf-s 11 6 - "${potrf[@]}" --precision s --n 16384,8192,4096,2048 --repeat 5
  step posv-16384 22 12 - "${posv[@]}" --n 16384 --ref cusolver,cusolver-irs \
    --designs auto,fp16_split/classical/blocked2048,fp16_split/classical/blocked4096
  step posv-8192 12 8 - "${posv[@]}" --n 8192 --designs auto --ref cusolver,cusolver-irs
  cand=-
else
step potrf-d 14 6 - "${potrf[@]}" --precision d --n 16384,8192,4096,2048 --repeat 5
step potrf-s 14 6 - "${potrf[@]}" --precision s --n 16384,8192,4096,2048 --repeat 5
step posv-cand-16384 28 12 "$cand" "${posv[@]}" --n 16384 --designs "$designs16384" --ref cusolver,cusolver-irs
step posv-shipped-16384 18 10 - "${posv[@]}" --n 16384 --designs "$designs16384" --ref cusolver
step posv-cand-8192 14 8 "$cand" "${posv[@]}" --n 8192 --designs "$designs8192" --ref cusolver,cusolver-irs
step posv-shipped-8192 10 6 - "${posv[@]}" --n 8192 --designs "$designs8192" --ref cusolver
fi
l=$(( $(left) - 3 ))
if (( l >= 6 )); then
  echo "== gtest ($(( l < 20 ? l : 20 )) s)"
  gtest_table=(); [[ $cand != - ]] && gtest_table=("BATCHSOLVE_TUNING_FILE=$cand")
  # confirm: the table's factors (vendor potrf, graph posv_mixed) without the blocked configurations'
  # NVRTC compiles that cut call 1's run
  gtest_filter='PosvMixed/1.*:LargeCholesky/2.*:LargeCholesky/3.*'
  [[ $cand == - ]] && gtest_filter='LargeCholesky/2.FactorBackwardErrorBothTriangles:LargeCholesky/3.FactorBackwardErrorBothTriangles:LargeCholesky/*.PotrsSolves:PosvMixed/1.*'
  timeout -k 2 $(( l < 20 ? l : 20 )) env "${gtest_table[@]}" "${gtest[@]}" \
    --gtest_filter="$gtest_filter" > "$out/gtest.log" 2>&1
  echo "   rc $?"; grep -E "PASSED|FAILED" "$out/gtest.log" | tail -3
fi
[[ ${LVG_CONFIRM:-0} == 1 ]] || step potrf-d32768 10 8 - "${potrf[@]}" --precision d --n 32768 --repeat 3

source scripts/gpu/lib/step-targets.sh
merge_step_targets "$out"
python3 - "$out" <<'PY' | tee "$out/summary.md"
import glob, json, os, sys
out = sys.argv[1]
print("| step | p | n | variant | ms | cusolver ms | cusolver / ours | error | status |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    name = os.path.basename(f)[:-5]
    if name.startswith("targets"):
        continue
    try:
        rows = json.load(open(f)).get("rows", [])
    except Exception as e:
        print("|", name, "| unreadable:", e, "|")
        continue
    for r in rows:
        cu = r.get("refs", {}).get("cusolver", {})
        ms, cu_ms = r.get("time_ms"), cu.get("time_ms")
        ratio = "%.3f" % (cu_ms / ms) if cu_ms and ms else "-"
        err = r.get("error")
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (name, r.get("precision"), r.get("n"), r.get("variant"),
              "%.3f" % ms if ms else "-", "%.3f" % cu_ms if cu_ms else "-", ratio,
              "%.3g" % err if isinstance(err, (int, float)) else err, r.get("status")))
PY
echo "large-vendor-graph: done after $((SECONDS - start)) s"
exit 0
