#!/usr/bin/env bash
# Builds small-prebuilt.tar for scripts/gpu/small.sh on the CPU machine (no GPU): the candidate tuning
# tables (validation/cusolverdx/fused_table.py) and every kernel small.sh's steps run, compiled for
# sm_90 by batchsolve-warmup --arch 90 into a flat folder that small.sh hands the library as
# BATCHSOLVE_PREBUILT_DIR, so the device call spends no time in NVRTC. The kernels are keyed by the
# generator version (a digest of libsolver/src/codegen): build the bundle from the same sources.
#   scripts/gpu/small-prebuild.sh BUILD_DIR OUTPUT.tar [THREADS]
set -euo pipefail
build=${1:?usage: small-prebuild.sh BUILD_DIR OUTPUT.tar [THREADS]}
tarball=${2:?usage: small-prebuild.sh BUILD_DIR OUTPUT.tar [THREADS]}
threads=${3:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
warmup=$build/tools/warmup/batchsolve-warmup
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/tables" "$stage/kernels"
py=$root/validation/cusolverdx/fused_table.py
python3 "$py" --design fused --n 1:32 --output "$stage/tables/fused-a.json"
python3 "$py" --design fused --n 1:32 --halve --output "$stage/tables/fused-b.json"
python3 "$py" --design warp_steps --n 4,8,12,16,24,32,48,64 --output "$stage/tables/ws.json"
cmake -DOUTPUT="$stage/generator_version.hpp" -DSOURCE_DIR="$root/libsolver/src/codegen" \
  -P "$root/libsolver/src/cuda/jit/generator_version.cmake"
# warm TABLE(or -) ARGS...: the kernels of those cases into the folder
warm() {
  local table=$1; shift
  if [[ $table == - ]]; then
    env -u BATCHSOLVE_TUNING_FILE "$warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  else
    BATCHSOLVE_TUNING_FILE=$stage/tables/$table "$warmup" --arch 90 --cache-dir "$stage/kernels" --threads "$threads" "$@"
  fi
}
cm=(--routines potrf,posv --precisions s,d --layouts column_major)
warm fused-a.json "${cm[@]}" --n 4,8,12,16,24,32                                 # A, H
warm - "${cm[@]}" --n 4,8,12,16,24,32,48,64                                       # B
warm ws.json "${cm[@]}" --n 4,8,16,32,64                                          # D
warm fused-b.json "${cm[@]}" --n 8,16,24,32                                       # E
warm - --routines potrf,posv --precisions s,d --layouts interleaved --n 8,16,32   # F
warm fused-a.json "${cm[@]}" --n 1,5,13,16,24,31 --nrhs 2 --uplo lower           # G
warm fused-a.json "${cm[@]}" --n 1,5,13,16,24,31 --nrhs 2 --uplo upper
warm - "${cm[@]}" --n 8,16,32 --batch 100000                                      # H
tar -C "$stage" -cf "$tarball" tables kernels generator_version.hpp
echo "small-prebuild: $(ls "$stage/kernels" | wc -l) kernels, $(grep -o '"[0-9a-f]*"' "$stage/generator_version.hpp") -> $tarball"
