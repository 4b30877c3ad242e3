#!/usr/bin/env bash
# The one mixed-precision refinement driver on one GPU (about 100 s): posv_mixed's and sysv_mixed's
# CUDA instances, whose residual / |A||x| / norm / update kernels are now cuda/refinement.cu
# (batchsolve_large_test PosvMixed.*, batchsolve_ldlt_test SysvMixed.*, CUDA instances only), and
# batchsolve-warmup --kernels replaying a manifest on the device through warm_up_manifest. Each
# step's output goes to $OUT/refinement/<step>.txt; the table (step, rc, passed, failed, skipped,
# seconds) is printed last.
# Run from the repository root with the bundle unpacked at /tmp/bundle.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/refinement; mkdir -p "$out"
run=/tmp/bundle/run
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1
git rev-parse --short HEAD > "$out/commit.txt" 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}" > "$out/commit.txt"
export OMP_WAIT_POLICY=passive
table="step,rc,passed,failed,skipped,seconds"
step() {  # step NAME LIMIT PROGRAM ARGS...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout -k 5 "$limit" "$run" "$@" > "$out/$name.txt" 2>&1
  local rc=$?
  local passed failed skipped
  passed=$(grep -c '^\[       OK \]' "$out/$name.txt")
  failed=$(grep -c '^\[  FAILED  \].*(' "$out/$name.txt")
  skipped=$(grep -c '^\[  SKIPPED \]' "$out/$name.txt")
  table+=$'\n'"$name,$rc,$passed,$failed,$skipped,$((SECONDS - t0))"
}
step posv_mixed_cuda 40 batchsolve_large_test --gtest_filter='PosvMixed/1.*'
step sysv_mixed_cuda 50 batchsolve_ldlt_test --gtest_filter='SysvMixed/2.*:SysvMixed/3.*'
step driver_cpu 15 batchsolve_refinement_test
# A manifest recorded by one warm-up and replayed on the device into a fresh cache.
cache=$(mktemp -d /tmp/refinement-cache.XXXXXX)
BATCHSOLVE_KERNEL_MANIFEST="$cache/manifest.txt" BATCHSOLVE_CACHE_DIR="$cache/run" \
  timeout -k 5 30 "$run" batchsolve-warmup --precisions s --n 4 --routines potrf --layouts interleaved --threads 4 \
  > "$out/warmup_record.txt" 2>&1
t0=$SECONDS
BATCHSOLVE_CACHE_DIR="$cache/replay" timeout -k 5 30 "$run" batchsolve-warmup --kernels "$cache/manifest.txt" --threads 4 \
  > "$out/warmup_replay.txt" 2>&1
rc=$?
ok=$(grep -c ' 0 lines refused' "$out/warmup_replay.txt")
table+=$'\n'"warmup_manifest_replay,$rc,$ok,$((1 - ok)),0,$((SECONDS - t0))"
rm -rf "$cache"
echo "$table" > "$out/summary.csv"
grep -h '^\[  FAILED  \].*(' "$out"/*.txt | head -20
tail -1 "$out/warmup_replay.txt"
column -s, -t < "$out/summary.csv"
