#!/usr/bin/env bash
# Small column-major potrf at n = 24..128: the 2-D cyclic register designs of
# experiments/small-cyclic-prototype (cyclic-P4/P8/P16: one column per barrier; pairs-P*: two columns
# per barrier; copy-P*: their loads and stores alone) beside the shipped tables and cuSolverDx, in one
# device call of at most TOPIC_BUDGET_S (150) s, most important first:
#   proto        the prototype, s and d, batch 16384, n = 24..128 (CSV; errors against the host, info,
#                upper triangle untouched, an indefinite matrix)
#   committed    the tester on the shipped tables, potrf and posv s d, the same n, batch 16384, --ref cusolverdx
#                (the peer as its child process, same timing scope: inputs restored, L2 flushed, median)
#   shape-sq8, shape-sq16, shape-sq4   the library's square-grid potrf and posv kernels (column_major.cpp,
#                kSquareGridKernel: the prototype's cyclic-P<P> design behind the generator) at 8 x 8
#                (n = 48..128), 16 x 16 (15 x 15 at n = 100) and 4 x 4 (n = 24..48) threads per matrix:
#                candidate tables chained from validation/cusolverdx/fused_table.py --design shape
#   check-sq     those tables on the GPU against LAPACK (--check --ref lapack): potrf, posv (2 rhs) s d, both
#                triangles, strided and pointer arrays (c and z: the emulation test; the committed
#                tables hold no column-major c/z entries for the chain to replace)
#   proto-100k   the prototype at batch 100000, n = 48, 64, 80 (s d)
#   ncu-s64, ncu-s128   Nsight Compute of cyclic-P8 at s n = 64 and cyclic-P16 at s n = 128
# The prototype comes from .carry/small-lean/cyclic_prototype (nvcc -O3 -arch=sm_90 here, no GPU
# needed), else it is compiled on the device machine if nvcc is there. SC_STEPS names a subset.
# Writes $OUT/small-cyclic/.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=small-cyclic
source scripts/gpu/lib/prelude.sh  # gpu_prelude, find_cusolverdx
gpu_prelude "$name" 150
pre=/tmp/small-lean-prebuilt; mkdir -p "$pre"
[[ -f $carry/prebuilt.tar.xz ]] && tar -xJf "$carry/prebuilt.tar.xz" -C "$pre" && export BATCHSOLVE_PREBUILT_DIR=$pre/kernels
source scripts/gpu/small-lib.sh  # tester_step
find_cusolverdx
steps=" ${SC_STEPS:-proto committed shape-sq8 shape-sq16 check-sq check-sq16 shape-sq4 proto-100k ncu-s64 ncu-s128} "
want() { [[ $steps == *" $1 "* ]]; }
proto_bin=$PWD/$carry/cyclic_prototype
src=experiments/small-cyclic-prototype/cyclic_prototype.cu
if [[ ! -x $proto_bin ]] || [[ $src -nt $proto_bin && $(cat "$carry/cyclic_prototype.src.sha256" 2>/dev/null) != $(sha256sum "$src" | cut -c1-64) ]]; then
  proto_bin=/tmp/cyclic_prototype
  t0=$SECONDS
  ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc -O3 -std=c++17 -arch=sm_90 -o "$proto_bin" "$src" > "$out/nvcc.log" 2>&1
  echo "prototype compiled here: rc $? in $((SECONDS - t0)) s"
fi
echo "prototype $proto_bin ($(sha256sum "$src" | cut -c1-16)); peer ${BATCHSOLVE_CUSOLVERDX:-none}" | tee "$out/prebuilt.txt"
proto() {  # proto NAME LIMIT ARGS...: CSV to $out/NAME.csv
  local name=$1 limit=$2; shift 2
  want "$name" || return 0
  local l; l=$(left); (( l < 3 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  [[ -x $proto_bin ]] || { echo "$name: no prototype binary"; return; }
  local t0=$SECONDS
  timeout -k 2 "$limit" stdbuf -oL "$proto_bin" "$@" > "$out/$name.csv" 2> "$out/$name.log"
  echo "$name: rc $? in $((SECONDS - t0)) s ($(grep -c ',ok$' "$out/$name.csv") ok, $(grep -c 'FAILED' "$out/$name.csv") failed)"
}
proto proto 30 --batch 16384 --n 24,32,48,64,80,100,128 --prec s,d --reps 7 --seed 20261203
common=(--layout column_major --uplo lower --nrhs 1 --distinct 512 --repeat 7 --warmup 1 --jobs 16 --timing restore-each)
tester_step committed 45 - --routine potrf,posv --precision s,d --n 24,32,48,64,80,100,128 --batch 16384 "${common[@]}" \
  --ref cusolverdx --cusolverdx-seconds 15 --targets validation/cusolverdx/targets-column-major.json --targets-out "$out/targets.json"
# square-grid shape tables: RA = ceil(n / P) rows per thread, TC = P threads per row, per n
tables=/tmp/small-cyclic-tables; mkdir -p "$tables"
chain() {  # chain OUT THREADS_PER_BLOCK N:SHAPE...
  local dest=$1 tpb=$2 prev=libsolver/tuning/sm90.json i=0 spec; shift 2
  for spec in "$@"; do
    python3 validation/cusolverdx/fused_table.py --committed "$prev" --design shape --shape "${spec#*:}" --n "${spec%%:*}" \
      --routine potrf,posv --precision s,d --threads-per-block "$tpb" --output "$tables/$dest.$i.json" 2>> "$out/tables.log"
    prev=$tables/$dest.$i.json; i=$((i + 1))
  done
  cp "$prev" "$tables/$dest.json"
}
chain sq8 128 48:6x8 64:8x8 80:10x8 100:13x8 128:16x8
chain sq16 256 64:4x16 80:5x16 100:7x15 128:8x16
chain sq4 128 24:6x4 32:8x4 48:12x4
tester_step shape-sq8 20 "$tables/sq8.json" --routine potrf,posv --precision s,d --n 48,64,80,100,128 --batch 16384 "${common[@]}"
tester_step shape-sq16 20 "$tables/sq16.json" --routine potrf,posv --precision s,d --n 64,80,100,128 --batch 16384 "${common[@]}"
chk=(--routine potrf,posv --nrhs 2 --layout column_major,pointer_array --uplo lower,upper --batch 300 --distinct 300
     --repeat 1 --warmup 0 --check --ref lapack --jobs 16)
tester_step check-sq 20 "$tables/sq8.json" --precision s,d --n 48,64,80,100,128 "${chk[@]}"
tester_step check-sq16 15 "$tables/sq16.json" --precision s,d --n 64,80,100,128 "${chk[@]}"
tester_step shape-sq4 10 "$tables/sq4.json" --routine potrf --precision s,d --n 24,32,48 --batch 16384 "${common[@]}"
proto proto-100k 25 --batch 100000 --n 48,64,80 --prec s,d --reps 5 --seed 20261203 \
  --designs cyclic-P8,cyclic-P16,pairs-P8,pairs-P16
prof() {  # prof NAME LIMIT KERNEL-REGEX ARGS...
  local name=$1 limit=$2 regex=$3; shift 3
  want "$name" || return 0
  local l; l=$(left); (( l < 4 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  command -v ncu > /dev/null || { echo "$name: no ncu"; return; }
  local t0=$SECONDS
  timeout -k 2 "$limit" ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section LaunchStats --section MemoryWorkloadAnalysis -k "regex:$regex" --launch-skip 2 --launch-count 1 \
    "$proto_bin" "$@" > "$out/$name.txt" 2>&1
  echo "$name: rc $? in $((SECONDS - t0)) s"
}
prof ncu-s64 12 'potrf_cyclic' --batch 16384 --n 64 --prec s --reps 1 --designs cyclic-P8
prof ncu-s128 12 'potrf_cyclic' --batch 16384 --n 128 --prec s --reps 1 --designs cyclic-P16

echo "=== $name: $((SECONDS - start)) s of $budget, $(cat "$out/gpu.txt")"
grep -h -E '^(GPU|cuSolverDx peer|targets:)' "$out"/committed.log 2>/dev/null
grep -h '^#\|^design' "$out/proto.csv" 2>/dev/null
grep -v '^#\|^design' "$out/proto.csv" 2>/dev/null | sort -t, -k2,2 -k3,3n -k6,6g | cut -c1-120
grep -h '^tester:' "$out"/check-sq*.log 2>/dev/null
for f in committed shape-sq8 shape-sq16 shape-sq4; do
  grep -E "^(potrf|posv) +[sd] " "$out/$f.log" 2>/dev/null | awk -v f=$f '{print f, $0}' | cut -c1-200
done
