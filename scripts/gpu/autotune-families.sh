#!/usr/bin/env bash
# The autotuner's family stages on one H200 (about 200 s): a reduced sweep of each (GEMM: s, d, c, z at
# size classes 32 and 128, 6 candidates each; large Cholesky: s and d at n = 2048, 6 candidates; LDL^T:
# d at n = 2048, 3 blockings, each in a process of its own; TRSM: d and z, inversion against recursion
# at orders 16, 64, 256) that proves each stage runs on the GPU and writes a table the library reads.
# Tables: $OUT/autotune-families/sm<arch>-<family>.json (read back by autotune with the library's
# reader, and here with json); each stage's console is $OUT/autotune-families/<family>.log; the
# summary table (family, precision, n, winner, ms) comes last. Run from the repository root with the
# bundle unpacked at /tmp/bundle.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/autotune-families; mkdir -p "$out"
run=/tmp/bundle/run
budget=${FAMILIES_BUDGET_S:-220}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt"
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "$commit" > "$out/commit.txt"
export BATCHSOLVE_CACHE_DIR=  # no disk cache: nothing to archive, every kernel compiled here

# family, seconds allowed, then autotune's arguments.
stage() {
  local family=$1 limit=$2; shift 2
  local l; l=$(left)
  (( l < 15 )) && { echo "$family: skipped (budget)" | tee "$out/$family.log"; return; }
  (( limit > l )) && limit=$l
  timeout -k 5 "$limit" "$run" autotune --family "$family" --output "$out" --commit "$commit" --repeat 3 \
    --seed 42 "$@" > "$out/$family.log" 2>&1
  echo "$family: rc $? ($((SECONDS - start)) s so far)"
}
stage gemm 80 --precision s,d,c,z --gemm-sizes 32,128 --gemm-problems 2000 --family-max-candidates 6
stage large 50 --precision s,d --large-n 2048 --family-max-candidates 6
stage ldlt 40 --precision d --ldlt-n 2048 --family-max-candidates 3
stage trsm 40 --precision d,z --trsm-orders 16,64,256 --trsm-problems 500

python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "sm*-*.json"))):
    t = json.load(open(path))
    for e in t["entries"]:
        rows.append((os.path.basename(path), e["routine"], e["precision"], e["n"], json.dumps(e["best"]["config"], separators=(",", ":")),
                     e["best"].get("ms", ""), e.get("candidates", "")))
print("\n| table | routine | p | n | winner | ms | candidates |\n|---|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %s | %s | %s | `%s` | %s | %s |" % r)
for family in ("gemm", "large", "ldlt", "trsm"):
    print(f"{family}: {'table written' if glob.glob(os.path.join(out, f'sm*-{family}.json')) else 'NO TABLE'}")
PY
