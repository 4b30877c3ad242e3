#!/usr/bin/env bash
# Stages here (no GPU) what scripts/gpu/tester-dx.sh carries to the device call, in .carry/tester-dx/:
# prebuilt.tar (the sm_90 kernels of its cases with the committed tables, compiled by
# batchsolve-warmup --arch 90, and the generator version they are keyed by: the bundle must be built
# from the same libsolver/src/codegen) and bench_cusolverdx (.gpu-bundle/cusolverdx/, built for
# n = 4..128 by validation/cusolverdx/build-peer.sh, else the prebuilt n = 8..128 one of
# ../shared/tools/peers/cusolverdx/). The request's `carry` file then names .carry/tester-dx.
#   scripts/gpu/tester-dx-prebuild.sh [BUILD_DIR] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
threads=${2:-1}
dest=$root/.carry/tester-dx
ns=${DX_NS:-4,8,12,16,24,32,48,64,80,100,128}
layouts=${DX_LAYOUTS:-column_major}
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$dest" "$stage/kernels"
# the version the built library keys its kernels by (the bundle's, if it is packed from this build)
cp "$build/libsolver/generated/batchsolve_generator_version.hpp" "$stage/generator_version.hpp" 2>/dev/null ||
  cmake -DOUTPUT="$stage/generator_version.hpp" -DSOURCE_DIR="$root/libsolver/src/codegen" \
    -P "$root/libsolver/src/cuda/jit/generator_version.cmake"
env -u BATCHSOLVE_TUNING_FILE "$build/tools/warmup/batchsolve-warmup" --arch 90 --cache-dir "$stage/kernels" \
  --threads "$threads" --routines potrf,posv --precisions s,d --layouts "$layouts" --n "$ns" --batch "${DX_BATCH:-16384}"
tar -C "$stage" -cf "$dest/prebuilt.tar" kernels generator_version.hpp
peer=$root/.gpu-bundle/cusolverdx/bench_cusolverdx
[[ -x $peer ]] || peer=$root/../shared/tools/peers/cusolverdx/bench_cusolverdx
cp "$peer" "$dest/bench_cusolverdx" && chmod +x "$dest/bench_cusolverdx"
echo "tester-dx-prebuild: $(ls "$stage/kernels" | wc -l) kernels, version $(grep -o '"[0-9a-f]*"' "$stage/generator_version.hpp"), peer $peer ($("$dest/bench_cusolverdx" --list | grep -c '^[fd]') configurations) -> $dest"
