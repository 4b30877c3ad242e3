#!/usr/bin/env bash
# Stages here (no GPU) the sm_90 kernels of scripts/gpu/small-cyclic-confirm.sh's tester steps, in
# .carry/small-lean/confirm-prebuilt.tar.xz (with the generator version they are keyed by: build the
# bundle from the same libsolver/src/codegen): the shipped tables, potrf and posv, s and d, n = 4..128,
# batch 16384 (timed) and 300 (the LAPACK check: both triangles, 2 right-hand sides), and the batch
# 100000 steps (SCC_SHAPES' candidate table and the shipped batch-100000 table, potrf n = 48..128), the
# previous table (also written to .carry/small-lean/previous-sm90.json) and the default variants.
#   scripts/gpu/small-cyclic-confirm-prebuild.sh [BUILD_DIR] [THREADS]
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
ns=4,8,12,16,24,32,48,64,80,100,128
warm - --routines potrf,posv "${cm[@]}" --n $ns
for u in lower upper; do warm - --routines potrf,posv "${cm[@]}" --n $ns --nrhs 2 --uplo $u --batch 300; done
tables=$stage/tables; mkdir -p "$tables"
chain() {  # chain OUT BASE_TABLE N:SHAPE[/TPB[/LOOKING[/NB]]] ...: as small-cyclic-confirm.sh's
  local dest=$1 prev=$2 i=0 spec shape tpb look nb; shift 2
  for spec in "$@"; do
    IFS=/ read -r shape tpb look nb <<< "${spec#*:}"
    python3 "$root/validation/cusolverdx/fused_table.py" --committed "$prev" --design shape --shape "$shape" --n "${spec%%:*}" \
      --routine potrf,posv --precision s,d --threads-per-block "${tpb:-128}" --looking "${look:-right}" --nb "${nb:--1}" \
      --output "$tables/$dest.$i.json" 2> /dev/null
    prev=$tables/$dest.$i.json; i=$((i + 1))
  done
  cp "$prev" "$tables/$dest.json"
}
# the previous table (carried too, for the side-by-side step) and the default variants
git -C "$root" show "${SCC_PREVIOUS:-8936072}:libsolver/tuning/sm90.json" > "$dest/previous-sm90.json"
warm "$dest/previous-sm90.json" --routines potrf,posv "${cm[@]}" --n 24,32,48,64,80,100,128
eval "$(grep '^SCC_DEFAULT_VARIANTS=' "$root/scripts/gpu/small-cyclic-confirm.sh")"
for v in ${SCC_VARIANTS:-$SCC_DEFAULT_VARIANTS}; do
  IFS=, read -r -a vs <<< "${v#*=}"
  chain "${v%%=*}" "$root/libsolver/tuning/sm90.json" "${vs[@]}"
  warm "$tables/${v%%=*}.json" --routines potrf,posv "${cm[@]}" --n "$(printf '%s\n' "${vs[@]}" | cut -d: -f1 | paste -sd,)"
done
read -r -a shapes <<< "${SCC_SHAPES:-48:6x8 64:8x8 80:5x16/256 100:7x15/256 128:8x16/256}"
chain sq100k "$root/libsolver/tuning/sm90-batch100000.json" "${shapes[@]}"
warm "$tables/sq100k.json" --routines potrf "${cm[@]}" --n 48,64,80,100,128 --batch 100000
warm - --routines potrf "${cm[@]}" --n 48,64,80,100,128 --batch 100000
tar -C "$stage" -cJf "$dest/confirm-prebuilt.tar.xz" kernels generator_version.hpp
echo "small-cyclic-confirm-prebuild: $(ls "$stage/kernels" | wc -l) kernels ($(du -h "$dest/confirm-prebuilt.tar.xz" | cut -f1)), version $(grep -o '"[0-9a-f]*"' "$stage/generator_version.hpp") -> $dest"
