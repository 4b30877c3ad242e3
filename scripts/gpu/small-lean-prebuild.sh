#!/usr/bin/env bash
# Stages here (no GPU) what scripts/gpu/small-lean.sh carries, in .carry/small-lean/: prebuilt.tar.xz
# (the candidate tables rows, rows-lean and rows-lean-cap of validation/cusolverdx/fused_table.py and
# every kernel the script's tester steps run, compiled for sm_90 by batchsolve-warmup --arch 90, with
# the generator version they are keyed by: build the bundle from the same libsolver/src/codegen) and
# bench_cusolverdx (.gpu-bundle/cusolverdx/ from validation/cusolverdx/build-peer.sh if there, else
# the prebuilt one of ../shared/tools/peers/cusolverdx/: n = 8, 16, 32, 64, 100, 128 only; one already
# in .carry/small-lean/ that lists more orders, from scripts/peers/cusolverdx-all-orders.sh, is kept).
# SL_CONFIRM=1 adds the kernels of the confirmation steps (small-confirm.sh): the shipped tables at
# n = 4..128 (batch 16384 and 100000), the GPU check's cases (s d c z, both triangles, 2 right-hand
# sides), the shape-RAxTC and cap-d32 candidate tables (small_tables in small-lib.sh).
# SL_MODE=proto adds what small-lean.sh's proto mode runs: rows_prototype (experiments/small-rows-prototype,
# nvcc -O3 -arch=sm_90) and the kernels of the rows table's GPU check and batch 100000 steps.
#   scripts/gpu/small-lean-prebuild.sh [BUILD_DIR] [THREADS]     (SL_CAPS as small-lean.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
threads=${2:-2}
dest=$root/.carry/small-lean
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$dest" "$stage/kernels" "$stage/tables"
source "$root/scripts/gpu/small-lib.sh"  # small_tables: the script's candidate tables
(cd "$root" && small_tables "$stage/tables")
cp "$build/libsolver/generated/batchsolve_generator_version.hpp" "$stage/generator_version.hpp" 2>/dev/null ||
  cmake -DOUTPUT="$stage/generator_version.hpp" -DSOURCE_DIR="$root/libsolver/src/codegen" \
    -P "$root/libsolver/src/cuda/jit/generator_version.cmake"
warm() {  # warm TABLE(or -) ARGS...
  local table=$1; shift
  if [[ $table == - ]]; then
    env -u BATCHSOLVE_TUNING_FILE "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  else
    BATCHSOLVE_TUNING_FILE=$stage/tables/$table "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  fi
}
cm=(--precisions s,d --layouts column_major)
warm rows-lean.json --routines potrf "${cm[@]}" --n 4,8,16,32
warm rows-lean-cap.json --routines potrf "${cm[@]}" --n 4,8,16,32
warm rows.json --routines potrf,posv "${cm[@]}" --n 4,8,12,16,24,32
warm - --routines potrf,posv "${cm[@]}" --n 4,8,12,16,24,32
for u in lower upper; do
  warm rows-lean.json --routines potrf --precisions s,d,c,z --layouts column_major --n 4,8,16,32 --uplo $u --batch 300
  warm rows-lean-cap.json --routines potrf "${cm[@]}" --n 4,8,16,32 --uplo $u --batch 300
done
warm - --routines potrf "${cm[@]}" --n 8,16,32 --batch 100000
warm - --routines potrf,posv "${cm[@]}" --n 48,64
if [[ ${SL_CONFIRM:-0} == 1 ]]; then
  warm - --routines potrf,posv "${cm[@]}" --n 80,100,128
  warm - --routines potrf,posv "${cm[@]}" --n 4,8,12,16,24,32,48,64,80,100,128 --batch 100000
  for sh in 1x1 1x2 1x4 2x2; do warm shape-$sh.json --routines potrf,posv "${cm[@]}" --n 24,32,48,64; done
  for c in 80 64; do warm cap-d32-$c.json --routines potrf --precisions d --layouts column_major --n 32; done
  warm rows-lean.json --routines potrf "${cm[@]}" --n 8,16,32 --batch 100000
  for u in lower upper; do
    warm - --routines potrf,posv --precisions s,d,c,z --layouts column_major --n 4,8,12,16,24,32 --nrhs 2 --uplo $u --batch 300
  done
fi
if [[ ${SL_MODE:-lean} == proto ]]; then
  ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc -O3 -std=c++17 -arch=sm_90 -o "$dest/rows_prototype" \
    "$root/experiments/small-rows-prototype/rows_prototype.cu"
  for u in lower upper; do
    warm rows.json --routines potrf --precisions s,d,c,z --layouts column_major --n 4,8,16,32 --uplo $u --batch 300
  done
  warm rows.json --routines potrf "${cm[@]}" --n 8,16,32 --batch 100000
fi
tar -C "$stage" -cJf "$dest/prebuilt.tar.xz" tables kernels generator_version.hpp
peer=$root/.gpu-bundle/cusolverdx/bench_cusolverdx
[[ -x $peer ]] || peer=$root/../shared/tools/peers/cusolverdx/bench_cusolverdx
# one there already that lists more orders (scripts/peers/cusolverdx-all-orders.sh's 11) stays
peer_orders() { { [[ -x $1 ]] && "$1" --list 2>/dev/null || true; } | awk -F, '/^(float|double),/ { print $2 }' | sort -u | wc -l; }
if (( $(peer_orders "$dest/bench_cusolverdx") > $(peer_orders "$peer") )); then peer=$dest/bench_cusolverdx
else rm -f "$dest/bench_cusolverdx" && cp "$peer" "$dest/bench_cusolverdx" && chmod +x "$dest/bench_cusolverdx"; fi
echo "small-lean-prebuild: $(ls "$stage/kernels" | wc -l) kernels ($(du -h "$dest/prebuilt.tar.xz" | cut -f1) packed), version $(grep -o '"[0-9a-f]*"' "$stage/generator_version.hpp"), peer $peer -> $dest"
