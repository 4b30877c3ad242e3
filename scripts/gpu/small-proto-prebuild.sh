#!/usr/bin/env bash
# Stages here (no GPU) what scripts/gpu/small-proto.sh carries, in .carry/small-proto/: rows_prototype
# (experiments/small-rows-prototype, nvcc -O3 -arch=sm_90) and prebuilt.tar: the candidate table
# tables/rows.json (validation/cusolverdx/fused_table.py --design rows) and every kernel its tester
# steps run (committed tables and rows.json, batch 16384 and 100000), compiled for sm_90 by
# batchsolve-warmup --arch 90, with the generator version they are keyed by (build the bundle from
# the same libsolver/src/codegen).
#   scripts/gpu/small-proto-prebuild.sh [BUILD_DIR] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
threads=${2:-1}
dest=$root/.carry/small-proto
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$dest" "$stage/kernels" "$stage/tables"
${CUDA_HOME:-/usr/local/cuda}/bin/nvcc -O3 -std=c++17 -arch=sm_90 -o "$dest/rows_prototype" \
  "$root/experiments/small-rows-prototype/rows_prototype.cu"
python3 "$root/validation/cusolverdx/fused_table.py" --design rows --n 4:32 --output "$stage/tables/rows.json"
# the version the built library keys its kernels by (the bundle's, if it is packed from this build)
cp "$build/libsolver/generated/batchsolve_generator_version.hpp" "$stage/generator_version.hpp" 2>/dev/null ||
  cmake -DOUTPUT="$stage/generator_version.hpp" -DSOURCE_DIR="$root/libsolver/src/codegen" \
    -P "$root/libsolver/src/cuda/jit/generator_version.cmake"
warm() {  # warm TABLE(or -) ARGS...
  local table=$1; shift
  if [[ $table == - ]]; then
    env -u BATCHSOLVE_TUNING_FILE "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  else
    BATCHSOLVE_TUNING_FILE=$table "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  fi
}
cm=(--precisions s,d --layouts column_major)
warm - --routines potrf,posv "${cm[@]}" --n 4,8,12,16,24,32
warm "$stage/tables/rows.json" --routines potrf,posv "${cm[@]}" --n 4,8,12,16,24,32
for u in lower upper; do
  warm "$stage/tables/rows.json" --routines potrf --precisions s,d,c,z --layouts column_major --n 4,8,16,32 --uplo $u --batch 300
done
warm - --routines potrf "${cm[@]}" --n 8,16,32 --batch 100000
warm "$stage/tables/rows.json" --routines potrf "${cm[@]}" --n 8,16,32 --batch 100000
tar -C "$stage" -cf "$dest/prebuilt.tar" tables kernels generator_version.hpp
echo "small-proto-prebuild: $(ls "$stage/kernels" | wc -l) kernels, version $(grep -o '"[0-9a-f]*"' "$stage/generator_version.hpp") -> $dest"
