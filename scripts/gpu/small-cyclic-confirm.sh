#!/usr/bin/env bash
# The shipped small column-major Cholesky tables (with the square-grid potrf entries adopted from
# scripts/gpu/small-cyclic.sh's call) confirmed in one device call of at most TOPIC_BUDGET_S (80) s,
# most important first (carried: .carry/small-lean/confirm-prebuilt.tar.xz from
# scripts/gpu/small-cyclic-confirm-prebuild.sh, the steps' kernels for sm_90; stale or absent: NVRTC here):
#   committed-wide    the tester, shipped tables, potrf and posv, s and d, batch 16384, n = 4..128, with
#                     cuSolverDx as its child process and the tester's targets (targets.json)
#   check-committed   the shipped tables on the GPU against LAPACK: potrf and posv, s d, n = 4..128,
#                     both triangles, strided and pointer arrays, 2 right-hand sides
#   sq-100k, committed-100k   the square-grid entries (SCC_SHAPES, chained onto sm90-batch100000.json
#                     by fused_table.py) beside the shipped batch-100000 table, potrf s d, batch 100000,
#                     n = 48..128 (no peer: cuSolverDx needs more than the call has at this batch)
#   variants          SCC_VARIANTS: further candidate tables at batch 16384, potrf and posv
#                     (NAME=N:SHAPE[/TPB[/LOOKING[/NB]]],... NAME=...; default SCC_DEFAULT_VARIANTS)
#   previous          the table before the square-grid adoption (.carry/small-lean/previous-sm90.json, else git
#                     show SCC_PREVIOUS:libsolver/tuning/sm90.json, default 8936072), potrf and posv, s d,
#                     n = 24..128, batch 16384: the old kernels side by side
# SCC_STEPS names a subset. Writes $OUT/small-cyclic-confirm/.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=small-cyclic-confirm
source scripts/gpu/lib/prelude.sh  # gpu_prelude, find_cusolverdx
gpu_prelude "$name" 80
source scripts/gpu/small-lib.sh  # tester_step
find_cusolverdx
pre=/tmp/small-cyclic-confirm-prebuilt; mkdir -p "$pre"
fresh="none carried"
if [[ -f $carry/confirm-prebuilt.tar.xz ]] && tar -xJf "$carry/confirm-prebuilt.tar.xz" -C "$pre"; then
  export BATCHSOLVE_PREBUILT_DIR=$pre/kernels  # keyed by the generator version: a stale one is not used
  version=$(grep -o '"[0-9a-f]*"' "$pre/generator_version.hpp" | tr -d '"')
  lib=$(dirname "$run")/lib
  grep -aqs "$version" "$lib"/libbatchsolve.so* && fresh="current ($version)" || fresh="stale ($version): NVRTC compiles here"
fi
echo "prebuilt kernels: $(ls "$pre/kernels" 2>/dev/null | wc -l), $fresh; peer ${BATCHSOLVE_CUSOLVERDX:-none}" | tee "$out/prebuilt.txt"
# m1: 8 x 8 threads, one matrix per block, steps not unrolled; ws4: 4 x 4 threads with warp-synchronous steps
SCC_DEFAULT_VARIANTS="m1=48:6x8/64/right/8,64:8x8/64/right/8,80:10x8/64/right/8,100:13x8/64/right/8,128:16x8/64/right/8 ws4=12:3x4/128/left/8,16:4x4/128/left/8,24:6x4/128/left/8,32:8x4/128/left/8"
steps=" ${SCC_STEPS:-committed-wide check-committed previous variants sq-100k committed-100k} "
want() { [[ $steps == *" $1 "* ]]; }
common=(--layout column_major --uplo lower --nrhs 1 --distinct 512 --repeat 7 --warmup 1 --jobs 16 --timing restore-each)
peer=()  # without the peer binary the tester refuses --ref cusolverdx: time ours alone then
if [[ -n ${BATCHSOLVE_CUSOLVERDX:-} || -x $(dirname "$run")/bin/bench_cusolverdx ]]; then
  peer=(--ref cusolverdx --cusolverdx-seconds 18 --targets validation/cusolverdx/targets-column-major.json
        --targets-out "$out/targets.json")
else
  echo "committed-wide: no cuSolverDx binary here: timed without the peer" | tee -a "$out/skipped.txt"
fi
tester_step committed-wide 45 - --routine potrf,posv --precision s,d --n 4,8,12,16,24,32,48,64,80,100,128 --batch 16384 \
  "${common[@]}" "${peer[@]}"
tester_step check-committed 20 - --routine potrf,posv --precision s,d --n 4,8,12,16,24,32,48,64,80,100,128 \
  --layout column_major,pointer_array --uplo lower,upper --nrhs 2 --batch 300 --distinct 300 --repeat 1 --warmup 0 \
  --check --ref lapack --jobs 16
tables=/tmp/small-cyclic-confirm-tables; mkdir -p "$tables"
if want previous; then  # carried (.carry/small-lean/previous-sm90.json), else from git where the tree has it
  { cp "$carry/previous-sm90.json" "$tables/previous.json" 2> /dev/null ||
    git show "${SCC_PREVIOUS:-8936072}:libsolver/tuning/sm90.json" > "$tables/previous.json"; } 2>> "$out/tables.log" &&
    tester_step previous 12 "$tables/previous.json" --routine potrf,posv --precision s,d --n 24,32,48,64,80,100,128 \
      --batch 16384 "${common[@]}" || echo "previous: no previous table" | tee -a "$out/skipped.txt"
fi
chain() {  # chain OUT BASE_TABLE N:SHAPE[/TPB[/LOOKING[/NB]]] ... (TPB 128, LOOKING right, NB the committed one)
  local dest=$1 prev=$2 i=0 spec shape tpb look nb; shift 2
  for spec in "$@"; do
    IFS=/ read -r shape tpb look nb <<< "${spec#*:}"
    python3 validation/cusolverdx/fused_table.py --committed "$prev" --design shape --shape "$shape" --n "${spec%%:*}" \
      --routine potrf,posv --precision s,d --threads-per-block "${tpb:-128}" --looking "${look:-right}" --nb "${nb:--1}" \
      --output "$tables/$dest.$i.json" 2>> "$out/tables.log"
    prev=$tables/$dest.$i.json; i=$((i + 1))
  done
  cp "$prev" "$tables/$dest.json"
}
if want variants; then
  for v in ${SCC_VARIANTS:-$SCC_DEFAULT_VARIANTS}; do  # NAME=N:SHAPE/TPB,N:SHAPE/TPB
    vname=${v%%=*}; IFS=, read -r -a vs <<< "${v#*=}"
    chain "$vname" libsolver/tuning/sm90.json "${vs[@]}"
    ns=$(printf '%s\n' "${vs[@]}" | cut -d: -f1 | paste -sd,)
    tester_step "variant-$vname" 12 "$tables/$vname.json" --routine potrf,posv --precision s,d --n "$ns" --batch 16384 "${common[@]}"
  done
fi
read -r -a shapes <<< "${SCC_SHAPES:-48:6x8 64:8x8 80:5x16/256 100:7x15/256 128:8x16/256}"
chain sq100k libsolver/tuning/sm90-batch100000.json "${shapes[@]}"
h=(--routine potrf --precision s,d --n 48,64,80,100,128 --batch 100000 "${common[@]}")
tester_step sq-100k 12 "$tables/sq100k.json" "${h[@]}"
tester_step committed-100k 12 - "${h[@]}"
echo "=== $name: $((SECONDS - start)) s of $budget, $(cat "$out/gpu.txt")"
grep -h -E '^(GPU|cuSolverDx peer|targets:|tester:)' "$out"/committed-wide.log "$out"/check-committed.log 2>/dev/null
for f in committed-wide previous variant-m1 variant-ws4 sq-100k committed-100k; do
  grep -E "^(potrf|posv) +[sd] " "$out/$f.log" 2>/dev/null | awk -v f=$f '{print f, $0}' | cut -c1-200
done
