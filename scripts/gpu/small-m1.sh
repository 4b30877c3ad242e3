#!/usr/bin/env bash
# The square-grid column-major Cholesky kernels in the prototype's "m1" form (one matrix per 64-thread
# block, steps not unrolled; with and without config.compile_time_ld, lda = n in the kernel text) beside
# the shipped tables and cuSolverDx, in one device call of at most TOPIC_BUDGET_S (130) s, most
# important first (carried: .carry/small-lean/m1-prebuilt.tar.xz from scripts/gpu/small-m1-prebuild.sh,
# the steps' sm_90 kernels; stale or absent: NVRTC here). Batch 16384 unless named, lower, ld = n:
#   committed   the tester, shipped tables, potrf and posv, s d, n = 24..128, cuSolverDx as its child
#               process and the tester's targets (targets.json)
#   m1ld        M1_SPECS with compile_time_ld (validation/cusolverdx/fused_table.py --compile-time-ld)
#   check-m1ld  that table on the GPU against LAPACK: potrf and posv, s d, n = 24..128, both triangles,
#               strided and pointer arrays, 2 right-hand sides
#   m1          M1_SPECS, lda at run time: what compile_time_ld alone changes
#   p4ld        potrf s d n = 48 on 4 x 4 threads (12 rows each), warp-synchronous, compile_time_ld
#   proto       experiments/small-cyclic-prototype (carried .carry/small-lean/cyclic_prototype) cyclic-P4/P8,
#               s d, n = 24..128: the standalone kernel the m1 form is taken from, same timing scope
#   m1ld-100k, committed-100k   potrf s d n = 48..128 at batch 100000: M1_SPECS (ld) chained onto
#               sm90-batch100000.json, and that table as shipped (no peer)
# M1_STEPS names a subset. Writes $OUT/small-m1/.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=small-m1
out=${OUT:-/tmp/out}/$name; mkdir -p "$out"
budget=${TOPIC_BUDGET_S:-130}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
run=${BUNDLE_RUN:-/tmp/bundle/run}
carry=.carry/small-lean
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%FT%TZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
source scripts/gpu/small-lib.sh  # tester_step
for p in "${BATCHSOLVE_CUSOLVERDX:-}" "$PWD/$carry/bench_cusolverdx" "$(dirname "$run")/bin/bench_cusolverdx" \
         "$PWD/../shared/tools/peers/cusolverdx/bench_cusolverdx"; do
  [[ -n $p && -x $p ]] && { export BATCHSOLVE_CUSOLVERDX=$p; break; }
done
pre=/tmp/small-m1-prebuilt; mkdir -p "$pre"
fresh="none carried"
if [[ -f $carry/m1-prebuilt.tar.xz ]] && tar -xJf "$carry/m1-prebuilt.tar.xz" -C "$pre"; then
  export BATCHSOLVE_PREBUILT_DIR=$pre/kernels  # keyed by the generator version: a stale one is not used
  version=$(grep -o '"[0-9a-f]*"' "$pre/generator_version.hpp" | tr -d '"')
  lib=$(dirname "$run")/lib
  grep -aqs "$version" "$lib"/libbatchsolve.so* && fresh="current ($version)" || fresh="stale ($version): NVRTC compiles here"
fi
echo "prebuilt kernels: $(ls "$pre/kernels" 2>/dev/null | wc -l), $fresh; peer ${BATCHSOLVE_CUSOLVERDX:-none}" | tee "$out/prebuilt.txt"
steps=" ${M1_STEPS:-committed m1ld check-m1ld m1 p4ld proto m1ld-100k committed-100k} "
want() { [[ $steps == *" $1 "* ]]; }
tables=/tmp/small-m1-tables
source scripts/gpu/small-m1-tables.sh  # m1_tables DIR: m1.json, m1ld.json, p4ld.json, m1ld-100k.json
m1_tables "$tables" 2>> "$out/tables.log"
ns=24,32,48,64,80,100,128
common=(--layout column_major --uplo lower --nrhs 1 --distinct 512 --repeat 7 --warmup 1 --jobs 16 --timing restore-each)
peer=()  # without the peer binary the tester refuses --ref cusolverdx: time ours alone then
if [[ -n ${BATCHSOLVE_CUSOLVERDX:-} ]]; then
  peer=(--ref cusolverdx --cusolverdx-seconds 14 --targets validation/cusolverdx/targets-column-major.json
        --targets-out "$out/targets.json")
else
  echo "committed: no cuSolverDx binary here: timed without the peer" | tee -a "$out/skipped.txt"
fi
tester_step committed 34 - --routine potrf,posv --precision s,d --n $ns --batch 16384 "${common[@]}" "${peer[@]}"
tester_step m1ld 16 "$tables/m1ld.json" --routine potrf,posv --precision s,d --n $ns --batch 16384 "${common[@]}"
tester_step check-m1ld 15 "$tables/m1ld.json" --routine potrf,posv --precision s,d --n $ns \
  --layout column_major,pointer_array --uplo lower,upper --nrhs 2 --batch 300 --distinct 300 --repeat 1 --warmup 0 \
  --check --ref lapack --jobs 16
tester_step m1 16 "$tables/m1.json" --routine potrf,posv --precision s,d --n $ns --batch 16384 "${common[@]}"
tester_step p4ld 6 "$tables/p4ld.json" --routine potrf --precision s,d --n 48 --batch 16384 "${common[@]}"
if want proto; then  # the prototype itself, same timing scope (carried binary, matching source only)
  proto_bin=$PWD/$carry/cyclic_prototype src=experiments/small-cyclic-prototype/cyclic_prototype.cu
  if [[ -x $proto_bin && $(cat "$carry/cyclic_prototype.src.sha256" 2>/dev/null) == $(sha256sum "$src" | cut -c1-64) ]]; then
    l=$(left); (( l > 9 )) && l=9
    if (( l >= 3 )); then
      t0=$SECONDS
      timeout -k 2 "$l" stdbuf -oL "$proto_bin" --batch 16384 --n 24,32,48,64,80,100,128 --prec s,d --reps 7 \
        --designs cyclic-P4,cyclic-P8 --seed 20261203 > "$out/proto.csv" 2> "$out/proto.log"
      echo "proto: rc $? in $((SECONDS - t0)) s ($(grep -c ',ok$' "$out/proto.csv") ok)"
    else echo "proto: skipped (budget)" | tee -a "$out/skipped.txt"; fi
  else echo "proto: no prototype binary matching its source" | tee -a "$out/skipped.txt"; fi
fi
h=(--routine potrf --precision s,d --n 48,64,80,100,128 --batch 100000 "${common[@]}")
tester_step m1ld-100k 12 "$tables/m1ld-100k.json" "${h[@]}"
tester_step committed-100k 12 - "${h[@]}"
echo "=== $name: $((SECONDS - start)) s of $budget, $(cat "$out/gpu.txt")"
grep -h -E '^(GPU|cuSolverDx peer|targets:|tester:)' "$out"/committed.log "$out"/check-m1ld.log 2>/dev/null
for f in committed m1ld m1 p4ld m1ld-100k committed-100k; do
  grep -E "^(potrf|posv) +[sd] " "$out/$f.log" 2>/dev/null | awk -v f=$f '{print f, $0}' | cut -c1-200
done
