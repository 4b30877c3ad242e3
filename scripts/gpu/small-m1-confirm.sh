#!/usr/bin/env bash
# The shipped small column-major Cholesky tables after the m1 adoption (scripts/gpu/small-m1.sh's call)
# confirmed in one device call of at most TOPIC_BUDGET_S (70) s, most important first (carried:
# .carry/small-lean/m1-confirm-prebuilt.tar.xz from scripts/gpu/small-m1-confirm-prebuild.sh, the
# steps' sm_90 kernels; .carry/small-lean/m1-previous-sm90.json, the table before the adoption):
#   committed-wide  the tester, shipped tables, potrf and posv, s d, batch 16384, n = 4..128, cuSolverDx
#                   as its child process and the tester's targets (targets.json)
#   previous        the table before the adoption (carried, else git show M1C_PREVIOUS:libsolver/tuning/sm90.json),
#                   the adopted cases (M1C_PREVIOUS_N; routines M1C_PREVIOUS_ROUTINES, default potrf; at most
#                   M1C_PREVIOUS_S seconds, default 9), s d, batch 16384: old and new side by side
#   check-committed the shipped tables on the GPU against LAPACK: potrf and posv, s d, n = M1C_CHECK_N (24..128), both
#                   triangles, strided and pointer arrays, 2 right-hand sides
#   committed-100k  potrf s d n = 48..128 at batch 100000, shipped tables (no peer)
# M1C_STEPS names a subset. Writes $OUT/small-m1-confirm/.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=small-m1-confirm
out=${OUT:-/tmp/out}/$name; mkdir -p "$out"
budget=${TOPIC_BUDGET_S:-70}; start=$SECONDS
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
pre=/tmp/small-m1-confirm-prebuilt; mkdir -p "$pre"
fresh="none carried"
if [[ -f $carry/m1-confirm-prebuilt.tar.xz ]] && tar -xJf "$carry/m1-confirm-prebuilt.tar.xz" -C "$pre"; then
  export BATCHSOLVE_PREBUILT_DIR=$pre/kernels  # keyed by the generator version: a stale one is not used
  version=$(grep -o '"[0-9a-f]*"' "$pre/generator_version.hpp" | tr -d '"')
  lib=$(dirname "$run")/lib
  grep -aqs "$version" "$lib"/libbatchsolve.so* && fresh="current ($version)" || fresh="stale ($version): NVRTC compiles here"
fi
echo "prebuilt kernels: $(ls "$pre/kernels" 2>/dev/null | wc -l), $fresh; peer ${BATCHSOLVE_CUSOLVERDX:-none}" | tee "$out/prebuilt.txt"
steps=" ${M1C_STEPS:-committed-wide previous check-committed committed-100k} "
want() { [[ $steps == *" $1 "* ]]; }
common=(--layout column_major --uplo lower --nrhs 1 --distinct 512 --repeat 7 --warmup 1 --jobs 16 --timing restore-each)
peer=()  # without the peer binary the tester refuses --ref cusolverdx: time ours alone then
if [[ -n ${BATCHSOLVE_CUSOLVERDX:-} ]]; then
  peer=(--ref cusolverdx --cusolverdx-seconds 18 --targets validation/cusolverdx/targets-column-major.json
        --targets-out "$out/targets.json")
else
  echo "committed-wide: no cuSolverDx binary here: timed without the peer" | tee -a "$out/skipped.txt"
fi
tester_step committed-wide 38 - --routine potrf,posv --precision s,d --n 4,8,12,16,24,32,48,64,80,100,128 --batch 16384 \
  "${common[@]}" "${peer[@]}"
if want previous; then
  tables=/tmp/small-m1-confirm-tables; mkdir -p "$tables"
  { cp "$carry/m1-previous-sm90.json" "$tables/previous.json" 2> /dev/null ||
    git show "${M1C_PREVIOUS:-9ebb97e}:libsolver/tuning/sm90.json" > "$tables/previous.json"; } 2>> "$out/tables.log" &&
    tester_step previous "${M1C_PREVIOUS_S:-9}" "$tables/previous.json" --routine "${M1C_PREVIOUS_ROUTINES:-potrf}" --precision s,d --n "${M1C_PREVIOUS_N:-24,48,64,80,100}" \
      --batch 16384 "${common[@]}" || echo "previous: no previous table" | tee -a "$out/skipped.txt"
fi
tester_step check-committed 14 - --routine potrf,posv --precision s,d --n "${M1C_CHECK_N:-24,32,48,64,80,100,128}" \
  --layout column_major,pointer_array --uplo lower,upper --nrhs 2 --batch 300 --distinct 300 --repeat 1 --warmup 0 \
  --check --ref lapack --jobs 16
tester_step committed-100k 8 - --routine potrf --precision s,d --n 48,64,80,100,128 --batch 100000 "${common[@]}"
echo "=== $name: $((SECONDS - start)) s of $budget, $(cat "$out/gpu.txt")"
grep -h -E '^(GPU|cuSolverDx peer|targets:|tester:)' "$out"/committed-wide.log "$out"/check-committed.log 2>/dev/null
for f in committed-wide previous committed-100k; do
  grep -E "^(potrf|posv) +[sd] " "$out/$f.log" 2>/dev/null | awk -v f=$f '{print f, $0}' | cut -c1-200
done
