#!/usr/bin/env bash
# warmup.cache_roundtrip: batchsolve-warmup twice into a fresh disk cache. The first run must compile
# every kernel it lists and the second must find every one on disk (the cache key, made of family,
# kernel name, configuration and versions, is the same in a second process), with one file per kernel.
# With ARCH set (e.g. 90) it runs without a GPU (warm_up_for_arch, one small kernel), and a third run
# with a fresh cache and BATCHSOLVE_PREBUILT_DIR pointing at the first one must find it there too.
#   [ARCH=90] roundtrip.sh COMMAND...      (PATH/TO/batchsolve-warmup, or /tmp/bundle/run batchsolve-warmup)
set -euo pipefail
warmup=("$@")
dir=$(mktemp -d /tmp/warmup-roundtrip.XXXXXX)
trap 'rm -rf "$dir"' EXIT
if [[ -n ${ARCH:-} ]]; then
  args=(--arch "$ARCH" --routines potrf --precisions s --layouts interleaved --n 4 --cache-dir "$dir/cache" --threads 2)
else
  args=(--routines potrf,posv --precisions s,d --layouts column_major,interleaved --n 8,33 --cache-dir "$dir/cache" --threads 4)
fi
first=$("${warmup[@]}" "${args[@]}")
echo "first:  $first"
case $first in skipped*) exit 0 ;; esac
second=$("${warmup[@]}" "${args[@]}")
echo "second: $second"
kernels=$(sed -n 's/.* \([0-9]*\) kernels (.*/\1/p' <<<"$first" | tail -1)
compiled1=$(sed -n 's/.*cached, \([0-9]*\) compiled).*/\1/p' <<<"$first" | tail -1)
cached2=$(sed -n 's/.*(\([0-9]*\) already cached.*/\1/p' <<<"$second" | tail -1)
compiled2=$(sed -n 's/.*cached, \([0-9]*\) compiled).*/\1/p' <<<"$second" | tail -1)
files=$(find "$dir/cache" -name 'kernel-*.cubin' | wc -l)
[[ $kernels -gt 0 ]] || { echo "FAIL: no kernels listed"; exit 1; }
[[ $compiled1 -eq $kernels ]] || { echo "FAIL: a fresh cache compiled $compiled1 of $kernels"; exit 1; }
[[ $cached2 -eq $kernels && $compiled2 -eq 0 ]] || { echo "FAIL: second run found $cached2 of $kernels, compiled $compiled2"; exit 1; }
[[ $files -eq $kernels ]] || { echo "FAIL: $files cache files for $kernels kernels"; exit 1; }
if [[ -n ${ARCH:-} ]]; then  # the first cache as a prebuilt folder for a process with an empty cache of its own
  fresh=()
  for a in "${args[@]}"; do [[ $a == "$dir/cache" ]] && a=$dir/fresh; fresh+=("$a"); done
  third=$(BATCHSOLVE_PREBUILT_DIR="$dir/cache" "${warmup[@]}" "${fresh[@]}")
  echo "third (prebuilt): $third"
  cached3=$(sed -n 's/.*(\([0-9]*\) already cached.*/\1/p' <<<"$third" | tail -1)
  [[ $cached3 -eq $kernels ]] || { echo "FAIL: a fresh cache with the prebuilt folder found $cached3 of $kernels"; exit 1; }
fi
echo "ok: $kernels kernels compiled once, all found by a second process"
