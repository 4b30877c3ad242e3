#!/usr/bin/env bash
# Stages here (no GPU) what scripts/gpu/small-m2.sh needs, in .carry/small-m2/m2-prebuilt.tar.xz: the
# candidate tables of small-m2-tables.sh (tables/*.json, from this tree's libsolver/tuning/sm90.json) and
# the sm_90 kernels of its tester steps (with the generator version they are keyed by: build the bundle
# from the same libsolver/src/codegen) -- the shipped tables and each candidate, potrf and posv, s d,
# batch 16384 at the timed orders, and the LAPACK checks' (both triangles, 2 right-hand sides, batch 300).
# Also copies cuSolverDx's benchmark into .carry/small-lean/ (scripts/gpu/lib/prelude.sh looks there), unless
# the one there lists more orders (scripts/peers/cusolverdx-all-orders.sh).
#   scripts/gpu/small-m2-prebuild.sh [BUILD_DIR] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
threads=${2:-2}
dest=$root/.carry/small-m2
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$dest" "$stage/kernels" "$root/.carry/small-lean"
cp "$build/libsolver/generated/batchsolve_generator_version.hpp" "$stage/generator_version.hpp"
peer=$root/../shared/tools/peers/cusolverdx/bench_cusolverdx
# one there already that lists more orders (scripts/peers/cusolverdx-all-orders.sh's 11) stays
peer_orders() { { [[ -x $1 ]] && "$1" --list 2>/dev/null || true; } | awk -F, '/^(float|double),/ { print $2 }' | sort -u | wc -l; }
if [[ -x $peer ]] && (( $(peer_orders "$root/.carry/small-lean/bench_cusolverdx") <= $(peer_orders "$peer") )); then
  rm -f "$root/.carry/small-lean/bench_cusolverdx" && cp "$peer" "$root/.carry/small-lean/bench_cusolverdx"
fi
warm() {  # warm TABLE(or -) ARGS...
  local table=$1; shift
  if [[ $table == - ]]; then
    env -u BATCHSOLVE_TUNING_FILE "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  else
    BATCHSOLVE_TUNING_FILE=$table "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  fi
}
cd "$root"
source scripts/gpu/small-m2-tables.sh
m2_tables "$stage/tables" > /dev/null
cm=(--precisions s,d --layouts column_major)
source scripts/gpu/small-m2-orders.sh  # M2_ALL, M2_ORDERS[table]
warm - --routines potrf,posv "${cm[@]}" --n "$M2_ALL"
for t in lean lean-u lean16 lean128; do
  warm "$stage/tables/$t.json" --routines potrf,posv "${cm[@]}" --n "${M2_ORDERS[$t]}"
  for u in lower upper; do
    warm "$stage/tables/$t.json" --routines potrf,posv "${cm[@]}" --n "${M2_ORDERS[$t]}" --nrhs 2 --uplo $u --batch 300
  done
done
tar -C "$stage" -cJf "$dest/m2-prebuilt.tar.xz" kernels tables generator_version.hpp
echo "small-m2-prebuild: $(ls "$stage/kernels" | wc -l) kernels ($(du -h "$dest/m2-prebuilt.tar.xz" | cut -f1)), version $(grep -o '"[0-9a-f]*"' "$stage/generator_version.hpp") -> $dest"
