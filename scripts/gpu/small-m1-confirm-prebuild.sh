#!/usr/bin/env bash
# Stages here (no GPU) the sm_90 kernels of scripts/gpu/small-m1-confirm.sh's tester steps, in
# .carry/small-lean/m1-confirm-prebuilt.tar.xz (with the generator version they are keyed by: build the
# bundle from the same libsolver/src/codegen), and the table before the adoption in
# .carry/small-lean/m1-previous-sm90.json (git show M1C_PREVIOUS:libsolver/tuning/sm90.json): the
# shipped tables, potrf and posv, s d, n = 4..128, batch 16384, the LAPACK check's (both triangles, 2
# right-hand sides, batch 300), the previous table's and the batch 100000 step's.
#   scripts/gpu/small-m1-confirm-prebuild.sh [BUILD_DIR] [THREADS]
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
warm - --routines potrf,posv "${cm[@]}" --n 4,8,12,16,24,32,48,64,80,100,128
for u in lower upper; do warm - --routines potrf,posv "${cm[@]}" --n "${M1C_CHECK_N:-24,32,48,64,80,100,128}" --nrhs 2 --uplo $u --batch 300; done
git -C "$root" show "${M1C_PREVIOUS:-9ebb97e}:libsolver/tuning/sm90.json" > "$dest/m1-previous-sm90.json"
warm "$dest/m1-previous-sm90.json" --routines "${M1C_PREVIOUS_ROUTINES:-potrf}" "${cm[@]}" --n "${M1C_PREVIOUS_N:-24,48,64,80,100}"
warm - --routines potrf "${cm[@]}" --n 48,64,80,100,128 --batch 100000
tar -C "$stage" -cJf "$dest/m1-confirm-prebuilt.tar.xz" kernels generator_version.hpp
echo "small-m1-confirm-prebuild: $(ls "$stage/kernels" | wc -l) kernels ($(du -h "$dest/m1-confirm-prebuilt.tar.xz" | cut -f1)), version $(grep -o '"[0-9a-f]*"' "$stage/generator_version.hpp") -> $dest"
