#!/usr/bin/env bash
# warmup.cache_roundtrip: batchsolve-warmup twice into a fresh disk cache. The first run must compile
# every kernel it lists and the second must find every one on disk (the cache key, made of family,
# kernel name, configuration and versions, is the same in a second process), with one file per kernel.
#   roundtrip.sh COMMAND...      (PATH/TO/batchsolve-warmup, or /tmp/bundle/run batchsolve-warmup)
set -euo pipefail
warmup=("$@")
dir=$(mktemp -d /tmp/warmup-roundtrip.XXXXXX)
trap 'rm -rf "$dir"' EXIT
args=(--routines potrf,posv --precisions s,d --layouts column_major,interleaved --n 8,33 --cache-dir "$dir" --threads 4)
first=$("${warmup[@]}" "${args[@]}")
echo "first:  $first"
case $first in skipped*) exit 0 ;; esac
second=$("${warmup[@]}" "${args[@]}")
echo "second: $second"
kernels=$(sed -n 's/.* \([0-9]*\) kernels (.*/\1/p' <<<"$first" | tail -1)
compiled1=$(sed -n 's/.*cached, \([0-9]*\) compiled).*/\1/p' <<<"$first" | tail -1)
cached2=$(sed -n 's/.*(\([0-9]*\) already cached.*/\1/p' <<<"$second" | tail -1)
compiled2=$(sed -n 's/.*cached, \([0-9]*\) compiled).*/\1/p' <<<"$second" | tail -1)
files=$(find "$dir" -name 'kernel-*.cubin' | wc -l)
[[ $kernels -gt 0 ]] || { echo "FAIL: no kernels listed"; exit 1; }
[[ $compiled1 -eq $kernels ]] || { echo "FAIL: a fresh cache compiled $compiled1 of $kernels"; exit 1; }
[[ $cached2 -eq $kernels && $compiled2 -eq 0 ]] || { echo "FAIL: second run found $cached2 of $kernels, compiled $compiled2"; exit 1; }
[[ $files -eq $kernels ]] || { echo "FAIL: $files cache files for $kernels kernels"; exit 1; }
echo "ok: $kernels kernels compiled once, all found by a second process"
