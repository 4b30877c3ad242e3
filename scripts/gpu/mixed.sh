#!/usr/bin/env bash
# posv_mixed on one H200 in TOPIC_BUDGET_S seconds (60 by default): our mixed-precision SPD solver
# (the automatic chain, and each factor precision FP32 / TF32 / BF16 / FP16 / split FP16 with classical
# IR, GMRES-IR and the automatic escalation) beside cuSOLVER's FP64 Xpotrf + Xpotrs and its LU-based
# mixed-precision solvers (DSgesv, DHgesv, DBgesv, DXgesv, IRSXgesv with GMRES), on A = Q diag(lambda)
# Q^T of condition 1e2, 1e4, 1e6, 1e8 (Q from a Householder QR of a Gaussian matrix, seed 36).
# Steps, most important first, each its own tester process (a fault in a design never measured on a
# GPU then costs only the rest of its own step), each cut to the time left:
#   base-<n>  the automatic chain (the tuning table's) and MIXED_BASE_DESIGNS beside every peer, with
#             the targets of scripts/gpu/mixed-targets.json (targets-base-<n>.json, written by the tester)
#   tc-<n>    MIXED_TC_DESIGNS (default none; MIXED_TC_DESIGNS=all: every tensor-core design) beside
#             Xpotrf + Xpotrs only
# MIXED_NS (default 16384,8192) the orders; MIXED_REPEAT (3) the timed runs (median) after 1 warm-up.
# MIXED_LIMIT_LARGE_S (30) and MIXED_LIMIT_S (12): the seconds of a base step at n >= 16384 and below.
# Writes $OUT/mixed/ (gpu.txt, commit.txt, date.txt, <step>.json/.log, targets-*.json, summary.md);
# the summary table last. Run from the repository root with the bundle unpacked at /tmp/bundle
# (BUILD_DIR=build: the build tree's tester instead, a dry run here).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/mixed; mkdir -p "$out"
tester=(/tmp/bundle/run tester); [[ -n ${BUILD_DIR:-} ]] && tester=("$BUILD_DIR/validation/tester")
budget=${TOPIC_BUDGET_S:-60}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/mixed-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
IFS=, read -r -a ns <<< "${MIXED_NS:-16384,8192}"
common=(--routine posv_mixed --precision d --repeat "${MIXED_REPEAT:-3}" --warmup 1 --seed 36)
base_designs=${MIXED_BASE_DESIGNS:-auto,fp32/auto,fp16_split/classical,fp16_split/gmres}
tc_designs=${MIXED_TC_DESIGNS:-}
[[ $tc_designs == all ]] && tc_designs=tf32/classical,tf32/gmres,tf32/auto,bf16/classical,bf16/gmres,fp16/classical,fp16/gmres,fp16/auto,fp16/gmres/blocked512,fp16_split/classical,fp16_split/gmres

# step NAME LIMIT MIN ARGS...: the tester for at most LIMIT s (or what is left, 2 s kept for the
# summary); skipped when fewer than MIN s are left.
step() {
  local name=$1 limit=$2 min=$3; shift 3
  local l=$(( $(left) - 2 ))
  (( l < min )) && { echo "$name: skipped ($l s left)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  timeout -k 2 "$limit" "${tester[@]}" "${common[@]}" --json "$out/$name.json" "$@" > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
  tail -n 2 "$out/$name.log"
}
for n in "${ns[@]}"; do
  step "base-$n" $(( n >= 16384 ? ${MIXED_LIMIT_LARGE_S:-30} : ${MIXED_LIMIT_S:-12} )) 8 --n "$n" --designs "$base_designs" --ref cusolver,cusolver-irs \
    --targets scripts/gpu/mixed-targets.json --targets-out "$out/targets-base-$n.json"
done
for n in "${ns[@]}"; do
  [[ -z $tc_designs ]] && break
  step "tc-$n" $(( n >= 16384 ? 30 : 12 )) 8 --n "$n" --designs "$tc_designs" --ref cusolver
done

python3 - "$out" <<'PY' | tee "$out/summary.md"
import glob, json, os, sys
out = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    if os.path.basename(f).startswith("targets"):
        continue
    try:
        rows += json.load(open(f))["rows"]
    except Exception as e:
        print("unreadable", f, e)
print("| n | variant | ms | vs Xpotrf+Xpotrs | vs fastest IRS | error (units of u max(sqrt n,4)) | path | it | inner | status |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    refs = r.get("refs", {})
    sp = lambda k: ("%.2f" % refs[k]["speedup"]) if k in refs and refs[k].get("speedup") is not None else "-"
    d = r.get("detail", {})
    err = r.get("error"); err = "%.2f" % err if isinstance(err, (int, float)) else "-"
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s %s |" % (r["n"], r.get("variant", ""),
          "%.2f" % r["time_ms"] if r.get("time_ms") else "-", sp("cusolver"), sp("cusolver-irs-best"), err,
          d.get("path", "-"), d.get("iterations", "-"), d.get("inner_iterations", "-"), r["status"], r.get("note", "")[:70]))
peers = {}
for r in rows:
    for k, v in r.get("refs", {}).items():
        if v.get("ran"):
            peers.setdefault((r["n"], r.get("variant", "").split("/")[0], k), (v["time_ms"], v.get("error"), v.get("note", "")))
print()
print("| n | cond | peer | ms | error | note |")
print("|---|---|---|---|---|---|")
for (n, c, k), (ms, e, note) in sorted(peers.items()):
    print("| %s | %s | %s | %.2f | %s | %s |" % (n, c, k, ms, "%.2f" % e if isinstance(e, (int, float)) else "-", note))
PY
echo "mixed: done after $((SECONDS - start)) s"
exit 0
