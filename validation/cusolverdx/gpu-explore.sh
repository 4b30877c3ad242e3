#!/usr/bin/env bash
# Issue 29, second (optional) device call, about 70 s at most: does ANY configuration of the
# shared-memory family beat the staged kernel at n = 100 and 128, or cuSOLVER at n = 160 / 200?
# (The first call, 0437 at b024f08, timed only the reasoned defaults.)
#   1. the autotuner, potrf s and d, column-major, n = 100 and 128: the staged stage (10-12 shapes)
#      then the shared_memory stage (15-24 shapes), tensor cores left out; every candidate's time in
#      autotune.jsonl                                                         (limit AUTOTUNE_S, 40 s)
#   2. the tester, potrf s n = 200 and d n = 160, batch 16384: the family with twice the default warps
#      (shared_memory_table.py --variant wide) beside cuSOLVER                (limit WIDE_S, 15 s)
#   3. the tester, potrf s and d n = 32, 64: the defaults capped at 64 registers   (limit REGS_S, 10 s)
# Files under $OUT/dx-gpu/: autotune.jsonl, autotune.json, wide.json, explore.txt, explore-logs.tar.gz.
set -uo pipefail
out=${OUT:-/tmp/out}/dx-gpu
mkdir -p "$out"
bundle=${BATCHSOLVE_BUNDLE_DIR:-/tmp/bundle}
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
timeout -k 5 "${AUTOTUNE_S:-40}" "$bundle/run" autotune --routine potrf --precision s,d --n 100,128 \
  --layout column_major --skip-stages tensor_cores --repeat 5 --jobs 16 --budget-s 30 \
  --output "$out/autotune.json" --log "$out/autotune.jsonl" > "$out/autotune.log" 2>&1
echo "1 autotune: rc $?"
# 3 (run second: shorter). the default at s and d n = 32 and 64 with at most 64 registers per thread
python3 "$here/shared_memory_table.py" --variant regs64 --routine potrf --precision s,d --n 32,64 \
  --output "$out/regs64-table.json" > /dev/null
BATCHSOLVE_TUNING_FILE="$out/regs64-table.json" timeout -k 5 "${REGS_S:-10}" "$bundle/run" tester --routine potrf \
  --precision s,d --n 32,64 --layout column_major --batch 16384 --distinct 256 --repeat 5 --warmup 1 --jobs 16 \
  --json "$out/regs64.json" > "$out/regs64.log" 2>&1
echo "3 max_registers 64: rc $? ($(tail -n 1 "$out/regs64.log"))"
python3 "$here/shared_memory_table.py" --variant wide --routine potrf --precision s,d --n 160,200 \
  --output "$out/wide-table.json" > /dev/null
BATCHSOLVE_TUNING_FILE="$out/wide-table.json" timeout -k 5 "${WIDE_S:-15}" "$bundle/run" tester --routine potrf \
  --precision s,d --n 160,200 --layout column_major --batch 16384 --distinct 256 --repeat 5 --warmup 1 --jobs 16 \
  --ref cusolver --json "$out/wide.json" > "$out/wide.log" 2>&1
echo "2 wide variant: rc $? ($(tail -n 1 "$out/wide.log"))"
python3 - "$out" <<'PY' | tee "$out/explore.txt"
import json, os, sys
out = sys.argv[1]
best = {}
try:
    for line in open(os.path.join(out, "autotune.jsonl")):
        j = json.loads(line)
        if j.get("ms") is None or "routine" not in j:
            continue
        fam = "shared_memory" if j["config"].get("staged") and j["config"].get("looking") == "left" else "staged"
        key = (j["precision"], j["n"], fam)
        if key not in best or j["ms"] < best[key][0]:
            best[key] = (j["ms"], j["kernel"])
except FileNotFoundError:
    print("no autotune.jsonl")
for p in "sd":
    for n in (100, 128):
        s, m = best.get((p, n, "staged")), best.get((p, n, "shared_memory"))
        if s and m:
            print(f"potrf {p} n={n}: best staged {s[0]:.4f} ms ({s[1]}), best shared_memory {m[0]:.4f} ms ({m[1]}): "
                  f"staged/shared_memory {s[0] / m[0]:.2f}")
try:
    for r in json.load(open(os.path.join(out, "wide.json")))["rows"]:
        cs = (r.get("refs") or {}).get("cusolver", {}).get("time_ms")
        print(f"potrf {r['precision']} n={r['n']} wide: {r['time_ms']:.3f} ms, cuSOLVER {cs:.3f} ms, "
              f"{(r.get('kernel') or {}).get('name', '')}, status {r['status']}")
except Exception as e:
    print(f"wide.json: {e}")
# the first call's defaults (0437, H200): potrf s 32 0.1393, s 64 0.5130, d 32 0.1906, d 64 0.8681 ms
first = {("s", 32): 0.1393, ("s", 64): 0.5130, ("d", 32): 0.1906, ("d", 64): 0.8681}
try:
    for r in json.load(open(os.path.join(out, "regs64.json")))["rows"]:
        k = r.get("kernel") or {}
        was = first.get((r["precision"], r["n"]))
        print(f"potrf {r['precision']} n={r['n']} max_registers 64: {r['time_ms']:.4f} ms (defaults at 0437: {was} ms), "
              f"{k.get('registers')} registers, {k.get('local_bytes')} local bytes, occupancy {k.get('occupancy')}")
except Exception as e:
    print(f"regs64.json: {e}")
PY
rm -f "$out/wide-table.json" "$out/regs64-table.json"
( cd "$out" && tar -czf explore-logs.tar.gz autotune.log wide.log regs64.log regs64.json 2>/dev/null && rm -f autotune.log wide.log regs64.log regs64.json )
echo "=== dx-gpu explore ($(( $(date +%s) - start )) s)"
