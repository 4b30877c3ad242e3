#!/usr/bin/env bash
# Stages here (no GPU) what scripts/gpu/small-rows.sh needs, in .carry/small-rows/rows-prebuilt.tar.xz: the
# candidate tables of small-rows-tables.sh (tables/*.json, from this tree's libsolver/tuning/sm90.json) and
# the sm_90 kernels of its tester steps, keyed by the generator version (build the bundle from the same
# libsolver/src/codegen, else the GPU compiles them with NVRTC): the shipped tables and each candidate,
# potrf and posv, s d, n = 4..32, batch 16384 (lower, 1 right-hand side) and the LAPACK checks' (both
# triangles, 2 right-hand sides, batch 300). Also copies cuSolverDx's benchmark into .carry/small-lean/
# (scripts/gpu/lib/prelude.sh looks there).
#   scripts/gpu/small-rows-prebuild.sh [BUILD_DIR] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
threads=${2:-2}
dest=$root/.carry/small-rows
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$dest" "$stage/kernels" "$root/.carry/small-lean"
cp "$build/libsolver/generated/batchsolve_generator_version.hpp" "$stage/generator_version.hpp"
peer=$root/../shared/tools/peers/cusolverdx/bench_cusolverdx
[[ -x $peer && ! -x $root/.carry/small-lean/bench_cusolverdx ]] && cp "$peer" "$root/.carry/small-lean/bench_cusolverdx"
warm() {  # warm TABLE(or -) ARGS...
  local table=$1; shift
  if [[ $table == - ]]; then
    env -u BATCHSOLVE_TUNING_FILE "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  else
    BATCHSOLVE_TUNING_FILE=$table "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  fi
}
cd "$root"
source scripts/gpu/small-rows-tables.sh  # SR_ORDERS, SR_TABLES, sr_tables
sr_tables "$stage/tables"
cm=(--routines potrf,posv --precisions s,d --layouts column_major --n "$SR_ORDERS")
warm - "${cm[@]}"
for t in $SR_TABLES; do
  warm "$stage/tables/$t.json" "${cm[@]}"
  for u in lower upper; do
    warm "$stage/tables/$t.json" "${cm[@]}" --nrhs 2 --uplo $u --batch 300
  done
done
tar -C "$stage" -cJf "$dest/rows-prebuilt.tar.xz" kernels tables generator_version.hpp
echo "small-rows-prebuild: $(ls "$stage/kernels" | wc -l) kernels ($(du -h "$dest/rows-prebuilt.tar.xz" | cut -f1)), version $(grep -o '"[0-9a-f]*"' "$stage/generator_version.hpp") -> $dest"
