#!/usr/bin/env bash
# Issue 29 on the GPU machine, in one call of at most about 88 s, from the repository root (the bundle of the
# gpu build unpacked at /tmp/bundle; cuSolverDx's benchmark copied to .gpu-requests/cusolverdx/):
#   1. the tester on column-major potrf and posv (1 rhs), s and d, batch 16384, n = 8..128 and 160,
#      200, with the shared-memory kernels (shared_memory_table.py's table via BATCHSOLVE_TUNING_FILE)
#      and cuSOLVER beside them (d n = 200 does not fit: cuSOLVER both)     -> new.json
#   2. the same cases with the committed tables (the register / staged kernels; n > 128 runs the
#      shared-memory default there too)                                      -> old.json
#   3. accuracy (--check: backward error < 30 n eps, info, other triangle untouched) of the new kernels,
#      lower and upper, potrf, potrs, posv, n = 1..241 incl. odd n           -> in logs.tar.gz
#   4. cuSolverDx's benchmark, batch 16384, every n, s and d, potrf and posv -> cusolverdx.csv
#   5. compare.py: the side-by-side table and the plot                      -> compare.md, compare.png
# Everything under $OUT/dx-gpu/ (6 files: new.json (both halves of step 1), old.json, cusolverdx.csv,
# compare.md, compare.png, logs.tar.gz). Time limits per step (seconds): TESTER_NEW_S, TESTER_OLD_S,
# TESTER_NEW_LARGE_S, CHECK_S, DX_S (12 + 18 + 14 + 12 + 28 s). The most important measurement (1) runs first.
set -uo pipefail
out=${OUT:-/tmp/out}/dx-gpu
mkdir -p "$out"
bundle=${BATCHSOLVE_BUNDLE_DIR:-/tmp/bundle}
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
tester() { "$bundle/run" tester "$@"; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "dx-gpu: $gpu; working tree at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

# NS_SMALL, NS_LARGE, OLD_NS, CHECK_NS, BATCH: smaller sets for a dry run of this script (here, on the CPU backend)
common=(--layout column_major --uplo lower --nrhs 1 --batch "${BATCH:-16384}" --distinct 512 --repeat 7 --warmup 1 --jobs 16)
python3 "$here/shared_memory_table.py" --variant default --routine potrf,posv,potrs --precision s,d,c,z \
  --output "$out/shared-memory-table.json" > /dev/null

# 1. the new kernels beside cuSOLVER, in two processes (the tester writes its JSON at the end: a
#    timeout loses one half, not both)
BATCHSOLVE_TUNING_FILE="$out/shared-memory-table.json" timeout -k 5 "${TESTER_NEW_S:-12}" \
  "$bundle/run" tester --routine potrf,posv --precision s,d --n "${NS_SMALL:-8,16,32,64}" "${common[@]}" --ref cusolver \
  --json "$out/new.json" > "$out/new.log" 2>&1
echo "1a new kernels, small n: rc $? ($(tail -n 1 "$out/new.log"))"
BATCHSOLVE_TUNING_FILE="$out/shared-memory-table.json" timeout -k 5 "${TESTER_NEW_LARGE_S:-18}" \
  "$bundle/run" tester --routine potrf,posv --precision s,d --n "${NS_LARGE:-100,128,160,200}" "${common[@]}" --ref cusolver \
  --json "$out/new-large.json" > "$out/new-large.log" 2>&1
echo "1b new kernels, large n: rc $? ($(tail -n 1 "$out/new-large.log"))"
# one file back instead of two (at most ~6 files return from the GPU machine)
python3 - "$out/new.json" "$out/new-large.json" <<'PY' && rm -f "$out/new-large.json"
import json, os, sys
parts = [json.load(open(p)) for p in sys.argv[1:] if os.path.exists(p)]
if parts:
    merged = parts[0]
    for p in parts[1:]:
        merged["rows"] += p["rows"]
        merged.setdefault("later_headers", []).append(p.get("header", {}))
    json.dump(merged, open(sys.argv[1], "w"), indent=1)
PY

# 2. the committed tables' kernels
timeout -k 5 "${TESTER_OLD_S:-14}" "$bundle/run" tester --routine potrf,posv --precision s,d \
  --n "${OLD_NS:-8,16,32,64,100,128}" "${common[@]}" --json "$out/old.json" > "$out/old.log" 2>&1
echo "2 committed tables: rc $? ($(tail -n 1 "$out/old.log"))"

# 3. accuracy and info of the new kernels (d n = 241 is beyond one block's shared memory: cuSOLVER)
BATCHSOLVE_TUNING_FILE="$out/shared-memory-table.json" timeout -k 5 "${CHECK_S:-12}" \
  "$bundle/run" tester --routine potrf,potrs,posv --precision s,d --uplo lower,upper --n "${CHECK_NS:-1,7,33,100,128,129,170,241}" \
  --layout column_major --nrhs 2 --batch 300 --distinct 300 --repeat 1 --warmup 0 --check --ref lapack --jobs 16 \
  --json "$out/check.json" > "$out/check.log" 2>&1
echo "3 accuracy: rc $? ($(tail -n 1 "$out/check.log"))"

# 4. cuSolverDx (its best of ~4 configurations per case, same restore-and-flush method)
dx=.gpu-requests/cusolverdx/run.sh
[[ -f $dx ]] || dx=.gpu-bundle/cusolverdx/run.sh
if [[ -f $dx ]]; then
  # line-buffered (stdbuf reaches the benchmark through the environment), so a timeout keeps the rows so far
  OUT="$out" timeout -k 5 "${DX_S:-28}" stdbuf -oL bash "$dx" --batch 16384 --reps 5 --warmup 1 > "$out/dx-summary.txt" 2>&1
  echo "4 cuSolverDx: rc $? ($(grep -c '^cusolverdx,' "$out/cusolverdx.csv" 2>/dev/null) rows)"
else
  echo "4 cuSolverDx: no run.sh in .gpu-requests/cusolverdx/ or .gpu-bundle/cusolverdx/"
fi

# 5. the side-by-side table and plot, from this run's cuSolverDx rows only. Without them there is no
#    comparison (a CSV of another day's run under this run's title would be a different measurement);
#    DX_CSV=path uses an earlier run's CSV on purpose, and the title then names that file and says so.
dxcsv="$out/cusolverdx.csv" title=()
status=0
if [[ -n ${DX_CSV:-} ]]; then
  dxcsv=$DX_CSV
  title=(--title "$gpu, batchsolve $(git rev-parse --short HEAD 2>/dev/null || echo unknown) of $(date -u +%F); cuSolverDx rows NOT of this run: $DX_CSV")
fi
if ! grep -q '^cusolverdx,' "$dxcsv" 2>/dev/null; then
  echo "5 compare.py: not run: no cuSolverDx rows in $dxcsv (step 4 failed; DX_CSV=path compares with an earlier run, labelled as such)"
  status=1
else
  python3 "$here/compare.py" --new "$out/new.json" --old "$out/old.json" --cusolverdx "$dxcsv" "${title[@]}" \
    --markdown "$out/compare.md" --png "$out/compare.png" > "$out/compare.log" 2>&1 ||
    { echo "5 compare.py failed (rc $?; refused rows are listed in compare.md): $(tail -n 3 "$out/compare.log")"; status=1; }
fi

( cd "$out" && tar -czf logs.tar.gz $(ls new.log new-large.log old.log check.log check.json compare.log dx-summary.txt cusolverdx.log \
    shared-memory-table.json 2>/dev/null) && rm -f new.log new-large.log old.log check.log check.json compare.log dx-summary.txt \
    cusolverdx.log shared-memory-table.json )
echo "=== dx-gpu summary ($(( $(date +%s) - start )) s, $gpu)"
sed -n '/^## Summary/,$p' "$out/compare.md" 2>/dev/null | head -n 30
exit $status
