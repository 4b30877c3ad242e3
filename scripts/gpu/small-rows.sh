#!/usr/bin/env bash
# Small column-major Cholesky at n = 4..32 (batch 16384, lower, ld = n, the tester's timing scope): the
# shipped tables and cuSolverDx beside one row per lane with lean addressing and warp-synchronous steps
# in three block sizes, in one device call of at most TOPIC_BUDGET_S (100) s, most important first.
# Carried: .carry/small-rows/rows-prebuilt.tar.xz from scripts/gpu/small-rows-prebuild.sh (the candidate
# tables of small-rows-tables.sh and the steps' sm_90 kernels; stale kernels: NVRTC here, tables still
# used) and .carry/small-lean/bench_cusolverdx. Steps:
#   committed   the shipped tables, potrf and posv, s d, n = 4..32, cuSolverDx as the tester's child
#               process and the tester's targets (targets.json)
#   rows128     fused_table.py --design rows_packed, 128 threads per block: posv at every order in one
#               kernel (factor, forward substitution within the elimination, backward from the rows of L
#               staged in shared memory; A and B read and written once), potrf n = 12, 24 with
#               floor(32 / n) whole matrices per warp (the packed rows kernel), potrf n = 4, 8, 16, 32 the
#               lean rows kernel
#   rows64      the same in 64-thread blocks
#   rows256     the same in 256-thread blocks
#   check-T     table T on the GPU against LAPACK: potrf and posv, s d, n = 4..32, both triangles, strided
#               and pointer arrays, 2 right-hand sides, batch 300
# SR_STEPS names a subset. Writes $OUT/small-rows/.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/gpu/lib/prelude.sh  # gpu_prelude, find_cusolverdx
gpu_prelude small-rows 100
source scripts/gpu/small-lib.sh  # tester_step
source scripts/gpu/small-rows-tables.sh  # SR_ORDERS, SR_TABLES, sr_tables
find_cusolverdx
pre=/tmp/small-rows-prebuilt; mkdir -p "$pre"
fresh="none carried"
if [[ -f .carry/small-rows/rows-prebuilt.tar.xz ]] && tar -xJf .carry/small-rows/rows-prebuilt.tar.xz -C "$pre"; then
  export BATCHSOLVE_PREBUILT_DIR=$pre/kernels  # keyed by the generator version: a stale one is not used
  version=$(grep -o '"[0-9a-f]*"' "$pre/generator_version.hpp" | tr -d '"')
  lib=$(dirname "$run")/lib
  grep -aqs "$version" "$lib"/libbatchsolve.so* && fresh="current ($version)" || fresh="stale ($version): NVRTC compiles here"
fi
tables=$pre/tables
if [[ ! -f $tables/rows128.json ]]; then  # no carried tables: the same ones from this tree
  tables=/tmp/small-rows-tables
  sr_tables "$tables" >> "$out/tables.log" 2>&1
fi
for t in $SR_TABLES; do cp "$tables/$t.json" "$out/table-$t.json" 2> /dev/null; done
xz -f "$out"/table-*.json 2> /dev/null
echo "prebuilt kernels: $(ls "$pre/kernels" 2>/dev/null | wc -l), $fresh; tables $tables; peer ${BATCHSOLVE_CUSOLVERDX:-none}" | tee "$out/prebuilt.txt"
steps=" ${SR_STEPS:-committed rows128 check-rows128 rows64 rows256 check-rows64 check-rows256} "
want() { [[ $steps == *" $1 "* ]]; }
common=(--layout column_major --uplo lower --nrhs 1 --distinct 512 --repeat 7 --warmup 1 --jobs 16 --timing restore-each)
peer=()  # without the peer binary the tester refuses --ref cusolverdx: time ours alone then
if [[ -n ${BATCHSOLVE_CUSOLVERDX:-} ]]; then
  peer=(--ref cusolverdx --cusolverdx-seconds 14 --targets validation/cusolverdx/targets-column-major.json
        --targets-out "$out/targets.json")
else
  echo "committed: no cuSolverDx binary here: timed without the peer" | tee -a "$out/skipped.txt"
fi
check=(--layout column_major,pointer_array --uplo lower,upper --nrhs 2 --batch 300 --distinct 300 --repeat 1 --warmup 0
       --check --ref lapack --jobs 16)
tester_step committed 30 - --routine potrf,posv --precision s,d --n "$SR_ORDERS" --batch 16384 "${common[@]}" "${peer[@]}"
tester_step rows128 10 "$tables/rows128.json" --routine potrf,posv --precision s,d --n "$SR_ORDERS" --batch 16384 "${common[@]}"
tester_step check-rows128 10 "$tables/rows128.json" --routine potrf,posv --precision s,d --n "$SR_ORDERS" "${check[@]}"
tester_step rows64 9 "$tables/rows64.json" --routine potrf,posv --precision s,d --n "$SR_ORDERS" --batch 16384 "${common[@]}"
tester_step rows256 9 "$tables/rows256.json" --routine potrf,posv --precision s,d --n "$SR_ORDERS" --batch 16384 "${common[@]}"
tester_step check-rows64 8 "$tables/rows64.json" --routine potrf,posv --precision s,d --n "$SR_ORDERS" "${check[@]}"
tester_step check-rows256 8 "$tables/rows256.json" --routine potrf,posv --precision s,d --n "$SR_ORDERS" "${check[@]}"
for f in check-rows128 check-rows64 check-rows256; do [[ -f $out/$f.json ]] && xz -f "$out/$f.json"; done
echo "=== small-rows: $((SECONDS - start)) s of $budget, $(cat "$out/gpu.txt")"
grep -h -E '^(GPU|cuSolverDx peer|targets:|tester:)' "$out"/committed.log "$out"/check-*.log 2>/dev/null
for f in committed rows128 rows64 rows256; do
  grep -E "^(potrf|posv) +[sd] " "$out/$f.log" 2>/dev/null | awk -v f=$f '{print f, $0}' | cut -c1-200
done
