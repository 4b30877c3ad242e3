#!/usr/bin/env bash
# Stages here (no GPU) the sm_90 kernels of scripts/gpu/small-m1.sh's tester steps, in
# .carry/small-lean/m1-prebuilt.tar.xz (with the generator version they are keyed by: build the bundle
# from the same libsolver/src/codegen): the shipped tables and the candidate tables of
# small-m1-tables.sh, potrf and posv, s and d, n = 24..128, batch 16384 (timed), the LAPACK check's
# (m1ld, both triangles, 2 right-hand sides, batch 300) and the batch 100000 steps' (potrf n = 48..128).
#   scripts/gpu/small-m1-prebuild.sh [BUILD_DIR] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
threads=${2:-2}
dest=$root/.carry/small-lean
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$dest" "$stage/kernels"
cp "$build/libsolver/generated/batchsolve_generator_version.hpp" "$stage/generator_version.hpp"
warm() {  # warm TABLE(or -) ARGS...
  local table=$1; shift
  if [[ $table == - ]]; then
    env -u BATCHSOLVE_TUNING_FILE "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  else
    BATCHSOLVE_TUNING_FILE=$table "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  fi
}
cm=(--precisions s,d --layouts column_major)
ns=24,32,48,64,80,100,128
tables=$stage/tables
cd "$root"
source scripts/gpu/small-m1-tables.sh
m1_tables "$tables" 2> /dev/null
warm - --routines potrf,posv "${cm[@]}" --n $ns
for t in m1ld m1; do warm "$tables/$t.json" --routines potrf,posv "${cm[@]}" --n $ns; done
for u in lower upper; do warm "$tables/m1ld.json" --routines potrf,posv "${cm[@]}" --n $ns --nrhs 2 --uplo $u --batch 300; done
warm "$tables/p4ld.json" --routines potrf "${cm[@]}" --n 48
warm "$tables/m1ld-100k.json" --routines potrf "${cm[@]}" --n 48,64,80,100,128 --batch 100000
warm - --routines potrf "${cm[@]}" --n 48,64,80,100,128 --batch 100000
tar -C "$stage" -cJf "$dest/m1-prebuilt.tar.xz" kernels generator_version.hpp
echo "small-m1-prebuild: $(ls "$stage/kernels" | wc -l) kernels ($(du -h "$dest/m1-prebuilt.tar.xz" | cut -f1)), version $(grep -o '"[0-9a-f]*"' "$stage/generator_version.hpp") -> $dest"
