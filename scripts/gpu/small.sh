#!/usr/bin/env bash
# Small batched Cholesky in the column-major layout beside cuSolverDx, in one device call of at most
# TOPIC_BUDGET_S (28) s, from the repository root with the bundle unpacked at /tmp/bundle:
#   A  the tester on column-major potrf and posv (1 rhs), s and d, batch 16384, n = 4..32, with the fused
#      family (candidate table fused-a: validation/cusolverdx/fused_table.py, ~110 KiB per block)
#   B  the same cases and n = 48, 64 with the committed tables (today's kernels)
#   C  cuSolverDx's benchmark (best configuration of each case; its own restore-and-flush timing),
#      n = 4..64 (validation/cusolverdx/build-peer.sh's build: n = 4..128), s and d, potrf and posv
#   D  the register kernels with their steps synchronised per warp (table ws: looking = left)
#   G  accuracy of the fused kernels on the GPU: lower and upper, strided and pointer arrays, --check
#      against LAPACK, odd n
#   E  the fused family with half the matrices per block (table fused-b)
#   F  the committed interleaved kernels on the same cases (the arithmetic without the layout)
#   H  batch 100000: fused-a and the committed tables, n = 8, 16, 32; cuSolverDx at 100000
# Most important first; each step is bounded by what is left of the budget and writes its own JSON, so
# a cut run still returns the steps before. The candidate tables and their kernels, compiled for sm_90
# on the CPU machine (scripts/gpu/small-prebuild.sh: batchsolve-warmup --arch 90), come in
# scripts/gpu/small-prebuilt.tar (BATCHSOLVE_PREBUILT_DIR), bench_cusolverdx in /tmp/bundle/bin.
# Writes $OUT/small/: *.json, cusolverdx*.csv, logs.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/small; mkdir -p "$out"
budget=${TOPIC_BUDGET_S:-28}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
bundle=${BATCHSOLVE_BUNDLE_DIR:-/tmp/bundle}
run=$bundle/run
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%FT%TZ > "$out/date.txt"

pre=/tmp/small-prebuilt
mkdir -p "$pre"
stale=1  # the prebuilt kernels are keyed by the generator version: they serve only the library built with it
tarball=scripts/gpu/small-prebuilt.tar  # carried in the working tree (untracked; small-prebuild.sh writes it)
[[ -f $tarball ]] || tarball=$bundle/bin/small-prebuilt.tar
if [[ -f $tarball ]]; then
  tar -xf "$tarball" -C "$pre"
  export BATCHSOLVE_PREBUILT_DIR=$pre/kernels
  version=$(grep -o '"[0-9a-f]*"' "$pre/generator_version.hpp" | tr -d '"')
  if [[ -n $version ]] && grep -aqs "$version" "$bundle"/lib/libbatchsolve.so*; then stale=0; fi
fi
echo "prebuilt kernels: $(ls "$pre/kernels" 2>/dev/null | wc -l), generator version ${version:-none}, stale $stale" | tee "$out/prebuilt.txt"
# Without them every kernel compiles here (NVRTC, --jobs 16, ~5 s per kernel): only steps A-C, fewer n.
ns_fused=4,8,12,16,24,32 ns_old=4,8,12,16,24,32,48,64
(( stale )) && ns_fused=8,16,32 ns_old=8,16,32
tables=$pre/tables
if [[ ! -f $tables/fused-a.json ]]; then  # no prebuilt folder: the same tables, the kernels compiled here
  mkdir -p "$tables"
  python3 validation/cusolverdx/fused_table.py --design fused --n 1:32 --output "$tables/fused-a.json"
  python3 validation/cusolverdx/fused_table.py --design fused --n 1:32 --halve --output "$tables/fused-b.json"
  python3 validation/cusolverdx/fused_table.py --design warp_steps --n 4,8,12,16,24,32,48,64 --output "$tables/ws.json"
fi
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"

common=(--layout column_major --uplo lower --nrhs 1 --distinct 256 --repeat 5 --warmup 1 --jobs 16)
source scripts/gpu/small-lib.sh  # tester_step
step() { tester_step "$@"; }
dx() {  # dx NAME LIMIT ARGS...: bench_cusolverdx, line-buffered so a cut keeps its rows
  local name=$1 limit=$2; shift 2
  local l; l=$(left)
  (( l < 3 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  [[ -x $bundle/bin/bench_cusolverdx ]] || { echo "$name: no bench_cusolverdx in $bundle/bin"; return; }
  local t0=$SECONDS
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null |
    sed 's/^/# nvidia-smi: /' > "$out/$name.csv"
  timeout -k 2 "$limit" stdbuf -oL "$run" bench_cusolverdx "$@" >> "$out/$name.csv" 2> "$out/$name.log"
  echo "$name: rc $? in $((SECONDS - t0)) s ($(grep -c '^cusolverdx,' "$out/$name.csv") best rows)"
}

step fused-a $((6 + 6 * stale)) "$tables/fused-a.json" --routine potrf,posv --precision s,d --n $ns_fused --batch 16384 "${common[@]}"
step committed $((6 + 4 * stale)) - --routine potrf,posv --precision s,d --n $ns_old --batch 16384 "${common[@]}"
dx cusolverdx 8 --batch 16384 --n 4,8,12,16,24,32,48,64 --prec float,double --routine potrf,posv --reps 5 --warmup 1
(( stale )) && echo "steps D-H skipped: no prebuilt kernels for this library" | tee -a "$out/skipped.txt" && budget=0
step ws 4 "$tables/ws.json" --routine potrf,posv --precision s,d --n 4,8,16,32,64 --batch 16384 "${common[@]}"
step check 3 "$tables/fused-a.json" --routine potrf,posv --precision s,d --n 1,5,13,16,24,31 --layout column_major,pointer_array \
  --uplo lower,upper --nrhs 2 --batch 300 --distinct 300 --repeat 1 --warmup 0 --check --ref lapack --jobs 16
step fused-b 4 "$tables/fused-b.json" --routine potrf,posv --precision s,d --n 8,16,24,32 --batch 16384 "${common[@]}"
step interleaved 3 - --routine potrf,posv --precision s,d --n 8,16,32 --batch 16384 --layout interleaved --nrhs 1 \
  --distinct 256 --repeat 5 --warmup 1 --jobs 16
step fused-a-100k 3 "$tables/fused-a.json" --routine potrf,posv --precision s,d --n 8,16,32 --batch 100000 "${common[@]}"
step committed-100k 3 - --routine potrf,posv --precision s,d --n 8,16,32 --batch 100000 "${common[@]}"
dx cusolverdx-100k 4 --batch 100000 --n 8,16,32 --prec float,double --routine potrf,posv --reps 5 --warmup 1

echo "=== small: $((SECONDS - start)) s of $budget, $(head -2 "$out/gpu.txt" | tail -1)"
for f in "$out"/*.json; do
  python3 - "$f" <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
name = sys.argv[1].rsplit("/", 1)[-1][:-5]
for r in d.get("rows", []):
    if r.get("routine") == "potrf" and r.get("n") in (8, 16, 32) and r.get("precision") == "s":
        print("%-15s %s %s n=%-3d b=%-6d %9.4f ms roof %s %s" % (name, r["routine"], r["precision"], r["n"], r["batch"],
              r["time_ms"] or -1, r.get("roofline"), r["status"]))
PY
done
grep -h '^cusolverdx,float,\(8\|16\|32\),16384,potrf' "$out"/cusolverdx.csv 2>/dev/null | cut -d, -f1-6
