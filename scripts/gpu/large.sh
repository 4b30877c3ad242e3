#!/usr/bin/env bash
# The large dense Cholesky (potrf_large, s and d) on one H200 in TOPIC_BUDGET_S seconds (60 by
# default): the tester's potrf_large against cusolverDnXpotrf (same matrix, events on one stream,
# median of 5 after a warm-up, the vendor's timed region only its call), the table's configuration
# (libsolver/tuning/sm90-large.json) and, with LARGE_VARIANTS=1, each design of
# validation/suite_large.cpp's kFactorDesigns, every row with info, backward error and its phase split
# (--split). Most important first, each step cut to the time left, every row written to its JSON as it
# is measured:
#   d.json       d at n = 16384, 8192, 4096, 2048, 1024, 512 (1024 and 512: cuSOLVER's time for one
#                diagonal block of the nb 1024 / 512 designs, no target)
#   s.json       s at the same orders
#   d32768.json  d at n = 32768, median of 3 (when >= 8 s are left)
#   s32768.json  s at n = 32768, median of 3 (when >= 9 s are left)
#   leaf-d.json, leaf-s.json  the register-tiled leaf kernel's designs (LEAF_DESIGNS) beside the table at
#                n = 8192, 4096, 2048, each precision its own tester process (a design run last);
#                LARGE_LEAF_ONLY=1: these two steps alone
# Each step's targets (scripts/gpu/large-targets.json: >= 1.0x at 4096-32768, >= 0.8x at 2048; one
# entry per row, design rows included) go to targets-<step>.json, written by the tester.
# Run from the repository root with the bundle unpacked at /tmp/bundle (BUILD_DIR=build: the build
# tree's tester instead, a dry run here); writes $OUT/large/.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/large; mkdir -p "$out"
tester=(/tmp/bundle/run tester); [[ -n ${BUILD_DIR:-} ]] && tester=("$BUILD_DIR/validation/tester")
budget=${TOPIC_BUDGET_S:-60}
leaf=${LEAF_DESIGNS:-right+lookahead/nb64/leaf/trsm,right+lookahead/nb128/leaf/trsm,recursive/nb128/leaf/trsm,left/nb128/leaf/trsm}
variants=(); [[ ${LARGE_VARIANTS:-0} == 1 ]] && variants=(--all-variants)
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=/tmp/large-kernel-cache
mkdir -p "$BATCHSOLVE_CACHE_DIR"

# step NAME LIMIT MIN ARGS...: the tester with ARGS for at most LIMIT s (or what is left, 1 s kept for
# the summary); skipped when fewer than MIN s are left.
step() {
  local name=$1 limit=$2 min=$3; shift 3
  local l=$(( $(left) - 1 ))
  (( l < min )) && { echo "$name: skipped ($l s left)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  timeout -k 1 "$limit" "${tester[@]}" --routine potrf_large --ref cusolver --warmup 1 \
    --targets scripts/gpu/large-targets.json --targets-out "$out/targets-$name.json" --json "$out/$name.json" "$@" \
    > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
}
if [[ ${LARGE_LEAF_ONLY:-0} != 1 ]]; then  # LARGE_LEAF_ONLY=1: the leaf steps alone (TOPIC_BUDGET_S >= 20)
step d 10 4 --precision d --n 16384,8192,4096,2048,1024,512 --repeat 5 --split "${variants[@]}"
step s 10 4 --precision s --n 16384,8192,4096,2048,1024,512 --repeat 5 --split "${variants[@]}"
step d32768 12 8 --precision d --n 32768 --repeat 3 --split
step s32768 12 9 --precision s --n 32768 --repeat 3 --split
fi
step leaf-d 8 4 --precision d --n 8192,4096,2048 --repeat 5 --split --designs "$leaf"
step leaf-s 8 4 --precision s --n 8192,4096,2048 --repeat 5 --split --designs "$leaf"

python3 - "$out" <<'PY' | tee "$out/table.md"
import json, os, sys
out = sys.argv[1]
print("| prec | n | design | ours ms | cuSOLVER ms | cuSOLVER / ours | TFLOP/s | berr (n u) | panel / trsm / update ms | status |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name in ("d", "s", "d32768", "s32768", "leaf-d", "leaf-s"):
    try:
        rows = json.load(open(os.path.join(out, name + ".json")))["rows"]
    except Exception:
        continue
    for r in rows:
        ref = r.get("refs", {}).get("cusolver", {})
        sp = r.get("detail", {}).get("split_seconds", {})
        f = lambda v, p=3: "-" if v is None else f"{v:.{p}f}"
        split = "/".join(f(sp.get(k, 0) * 1e3, 2) for k in ("panel", "trsm", "update")) if sp else "-"
        tf = r["flops"] / (r["time_ms"] * 1e-3) * 1e-12 if r.get("time_ms") else None
        print(f"| {r['precision']} | {r['n']} | {r['variant'] or 'table'} | {f(r.get('time_ms'))} | {f(ref.get('time_ms'))} | "
              f"{f(ref.get('speedup'), 2)} | {f(tf, 1)} | {f(r.get('error'), 2)} | {split} | {r['status']} {r.get('note', '')[:60]} |")
PY
exit 0
