#!/usr/bin/env bash
# The square-grid column-major Cholesky kernels' lean step loop (config.lean_addressing on the square
# grids: no branch around a step, no row guards where the side divides n, the step's column read as
# 16-byte vectors, one scaling per product) in three block shapes, beside the shipped tables and
# cuSolverDx, in one device call of at most TOPIC_BUDGET_S (150) s, most important first. Carried:
# .carry/small-m2/m2-prebuilt.tar.xz from scripts/gpu/small-m2-prebuild.sh (the candidate tables of
# small-m2-tables.sh and the steps' sm_90 kernels; stale kernels: NVRTC here, tables still used), and
# .carry/small-lean/bench_cusolverdx. Batch 16384, lower, ld = n, the tester's timing scope:
#   committed   the shipped tables, potrf and posv, s d, n = 4..128, cuSolverDx as the tester's child
#               process and the tester's targets (targets.json)
#   lean        one matrix per 64-thread block (8 x 8 threads at n = 48..128, 4 x 4 warp-synchronous at
#               potrf n = 12..32), posv s d n = 48, 64 on 8 x 8
#   lean128     8 x 8 threads, two matrices per 128-thread block, n = 48..128
#   lean16      16 x 16 threads, one matrix per 256-thread block, n = 64, 80, 128
#   lean-u      lean's 8 x 8 entries at n = 48, 64 with the steps fully unrolled
#   check-T     table T on the GPU against LAPACK: its orders, potrf and posv, s d, both triangles,
#               strided and pointer arrays, 2 right-hand sides, batch 300
# M2_STEPS names a subset. Writes $OUT/small-m2/.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/gpu/lib/prelude.sh  # gpu_prelude, find_cusolverdx
gpu_prelude small-m2 150
source scripts/gpu/small-lib.sh  # tester_step
source scripts/gpu/small-m2-orders.sh  # M2_ALL, M2_ORDERS
find_cusolverdx
pre=/tmp/small-m2-prebuilt; mkdir -p "$pre"
fresh="none carried"
if [[ -f .carry/small-m2/m2-prebuilt.tar.xz ]] && tar -xJf .carry/small-m2/m2-prebuilt.tar.xz -C "$pre"; then
  export BATCHSOLVE_PREBUILT_DIR=$pre/kernels  # keyed by the generator version: a stale one is not used
  version=$(grep -o '"[0-9a-f]*"' "$pre/generator_version.hpp" | tr -d '"')
  lib=$(dirname "$run")/lib
  grep -aqs "$version" "$lib"/libbatchsolve.so* && fresh="current ($version)" || fresh="stale ($version): NVRTC compiles here"
fi
tables=$pre/tables
if [[ ! -f $tables/lean.json ]]; then  # no carried tables: the same ones from this tree
  tables=/tmp/small-m2-tables
  source scripts/gpu/small-m2-tables.sh
  m2_tables "$tables" >> "$out/tables.log" 2>&1
fi
cp "$tables"/*.json "$out/" 2> /dev/null  # the candidate tables beside their results
for t in lean lean-u lean16 lean128; do [[ -f $out/$t.json ]] && mv "$out/$t.json" "$out/table-$t.json"; done
xz -f "$out"/table-*.json 2> /dev/null
echo "prebuilt kernels: $(ls "$pre/kernels" 2>/dev/null | wc -l), $fresh; tables $tables; peer ${BATCHSOLVE_CUSOLVERDX:-none}" | tee "$out/prebuilt.txt"
steps=" ${M2_STEPS:-committed lean check-lean lean128 lean16 lean-u check-lean128 check-lean16 check-lean-u} "
want() { [[ $steps == *" $1 "* ]]; }
common=(--layout column_major --uplo lower --nrhs 1 --distinct 512 --repeat 7 --warmup 1 --jobs 16 --timing restore-each)
peer=()  # without the peer binary the tester refuses --ref cusolverdx: time ours alone then
if [[ -n ${BATCHSOLVE_CUSOLVERDX:-} ]]; then
  peer=(--ref cusolverdx --cusolverdx-seconds 18 --targets validation/cusolverdx/targets-column-major.json
        --targets-out "$out/targets.json")
else
  echo "committed: no cuSolverDx binary here: timed without the peer" | tee -a "$out/skipped.txt"
fi
check=(--layout column_major,pointer_array --uplo lower,upper --nrhs 2 --batch 300 --distinct 300 --repeat 1 --warmup 0
       --check --ref lapack --jobs 16)
tester_step committed 38 - --routine potrf,posv --precision s,d --n "$M2_ALL" --batch 16384 "${common[@]}" "${peer[@]}"
tester_step lean 14 "$tables/lean.json" --routine potrf,posv --precision s,d --n "${M2_ORDERS[lean]}" --batch 16384 "${common[@]}"
tester_step check-lean 14 "$tables/lean.json" --routine potrf,posv --precision s,d --n "${M2_ORDERS[lean]}" "${check[@]}"
tester_step lean128 10 "$tables/lean128.json" --routine potrf,posv --precision s,d --n "${M2_ORDERS[lean128]}" --batch 16384 "${common[@]}"
tester_step lean16 9 "$tables/lean16.json" --routine potrf,posv --precision s,d --n "${M2_ORDERS[lean16]}" --batch 16384 "${common[@]}"
tester_step lean-u 7 "$tables/lean-u.json" --routine potrf,posv --precision s,d --n "${M2_ORDERS[lean-u]}" --batch 16384 "${common[@]}"
tester_step check-lean128 10 "$tables/lean128.json" --routine potrf,posv --precision s,d --n "${M2_ORDERS[lean128]}" "${check[@]}"
tester_step check-lean16 8 "$tables/lean16.json" --routine potrf,posv --precision s,d --n "${M2_ORDERS[lean16]}" "${check[@]}"
tester_step check-lean-u 7 "$tables/lean-u.json" --routine potrf,posv --precision s,d --n "${M2_ORDERS[lean-u]}" "${check[@]}"
for f in check-lean check-lean128 check-lean16 check-lean-u; do [[ -f $out/$f.json ]] && xz -f "$out/$f.json"; done
echo "=== small-m2: $((SECONDS - start)) s of $budget, $(cat "$out/gpu.txt")"
grep -h -E '^(GPU|cuSolverDx peer|targets:|tester:)' "$out"/committed.log "$out"/check-*.log 2>/dev/null
for f in committed lean lean128 lean16 lean-u; do
  grep -E "^(potrf|posv) +[sd] " "$out/$f.log" 2>/dev/null | awk -v f=$f '{print f, $0}' | cut -c1-200
done
